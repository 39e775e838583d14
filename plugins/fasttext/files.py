"""Facebook fastText's binary model format (``.bin``): read and write, with errors that say what is wrong and where.

Layout (little-endian; what ``FastText::saveModel`` writes, versions 11 and 12, unsupervised models)::

    int32 magic = 793712314 (bytes BA 16 4F 2F)      int32 version (12; 11 is read too)
    Args:  int32 dim, ws, epoch, minCount, neg, wordNgrams, loss (1 hs, 2 ns, 3 softmax, 4 ova),
           model (1 cbow, 2 sg, 3 supervised), bucket, minn, maxn, lrUpdateRate;  float64 t
    Dictionary:  int32 size, nwords, nlabels;  int64 ntokens, pruneidx_size (-1: not pruned)
           size entries: the word's bytes, a 0 byte, int64 count, int8 type (0 word, 1 label)
           pruneidx_size pairs of int32 (pruned models only)
    bool quant_input (0);  input matrix: int64 rows (= nwords + bucket), int64 cols (= dim), rows * cols float32
    bool qout (0);         output matrix: int64 rows, int64 cols, rows * cols float32

Input row ``i < nwords`` is word ``i``'s own vector, row ``nwords + h`` the n-gram bucket ``h``. Files written
before the magic number existed (2016-2017, e.g. gensim's test file ``lee_fasttext.bin``), supervised or quantized
(``.ftz``) models are refused with a message naming the reason; nothing guesses at another layout.

Reference: ``src/fasttext.cc``, ``src/args.cc``, ``src/dictionary.cc`` and ``src/densematrix.cc`` of
https://github.com/facebookresearch/fastText (the format has no other specification).
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tokembed.errors import ArtifactError, TokembedError
from tokembed.io import atomic_path

__all__ = ["FacebookModel", "MAGIC", "VERSION", "read_facebook_bin", "write_facebook_bin", "load_facebook_vectors"]

#: ``FASTTEXT_FILEFORMAT_MAGIC_INT32``.
MAGIC = 793712314
#: The version this module writes (fastText 0.9's ``FASTTEXT_VERSION``).
VERSION = 12
#: Versions read.
READ_VERSIONS = (11, 12)
ARG_NAMES = ("dim", "ws", "epoch", "min_count", "neg", "word_ngrams", "loss", "model", "bucket", "minn", "maxn",
             "lr_update_rate")
LOSSES = {1: "hs", 2: "ns", 3: "softmax", 4: "ova"}
MODELS = {1: "cbow", 2: "sg", 3: "supervised"}
_ARGS = struct.Struct("<12id")
_DICT_HEAD = struct.Struct("<3iqq")
_ENTRY_TAIL = struct.Struct("<qb")
_MATRIX_HEAD = struct.Struct("<qq")
_F32 = np.dtype("<f4")


@dataclass
class FacebookModel:
    """The contents of a fastText ``.bin`` file.

    Attributes
    ----------
    args : dict
        The 12 int arguments by name (:data:`ARG_NAMES`: ``dim``, ``ws``, ``epoch``, ``min_count``, ``neg``,
        ``word_ngrams``, ``loss``, ``model``, ``bucket``, ``minn``, ``maxn``, ``lr_update_rate``) and ``t``
        (float, the subsampling threshold).
    words : list of str
        The vocabulary, in file order (fastText's: count-descending).
    counts : ndarray of int64, shape (nwords,)
    n_tokens : int
        Tokens read when the dictionary was built (``ntokens``).
    input_matrix : ndarray of float32, shape (nwords + bucket, dim)
    output_matrix : ndarray of float32, shape (n_out, dim)
    version : int
        The file's version (11 or 12); files are always written as 12.
    """

    args: dict
    words: list
    counts: np.ndarray
    n_tokens: int
    input_matrix: np.ndarray
    output_matrix: np.ndarray
    version: int = VERSION
    path: str | None = field(default=None, compare=False)


class _Reader:
    def __init__(self, fh, path: Path, size: int):
        self.fh, self.path, self.size = fh, path, size

    def pos(self) -> int:
        return self.fh.tell()

    def read(self, n: int, what: str) -> bytes:
        at = self.pos()
        data = self.fh.read(n)
        if len(data) < n:
            raise ArtifactError(f"{self.path}: truncated file: {what} needs {n:,} bytes at byte {at:,}, but the file "
                                f"ends at byte {self.size:,}")
        return data


def read_facebook_bin(path: str | os.PathLike) -> FacebookModel:
    """Read a fastText ``.bin`` model (unsupervised, versions 11 and 12).

    Raises
    ------
    ArtifactError
        The file is missing or unreadable; its first 4 bytes are not the magic number 793712314 (the message says
        when it looks like the pre-2017 layout, which has no magic); another version; a supervised model (labels);
        a quantized or pruned model; a matrix whose shape disagrees with the header; a truncated file or bytes
        left after the output matrix. Each message names the file and the byte offset.
    """
    p = Path(path)
    try:
        fh = open(p, "rb")
    except FileNotFoundError:
        raise ArtifactError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise ArtifactError(f"{p}: is a folder, expected a fastText .bin file") from None
    except OSError as exc:
        raise ArtifactError(f"{p}: cannot read: {exc.strerror or exc}") from None
    with fh:
        size = os.fstat(fh.fileno()).st_size
        r = _Reader(fh, p, size)
        if size == 0:
            raise ArtifactError(f"{p}: the file is empty (a fastText .bin file starts with the magic number "
                                f"{MAGIC})")
        magic, version = struct.unpack("<ii", r.read(8, "the magic number and version"))
        if magic != MAGIC:
            hint = ""
            if 0 < magic <= 100_000 and 0 < version <= 1000:
                hint = (f"; it looks like the layout of fastText before 2017, which has no magic number (it starts "
                        f"with dim={magic}, ws={version}): load it with that fastText version and save it again")
            raise ArtifactError(f"{p}: not a fastText .bin model: bytes 0-3 hold {magic} (hex "
                                f"{struct.pack('<i', magic).hex(' ').upper()}), expected the magic number {MAGIC} "
                                f"(BA 16 4F 2F){hint}")
        if version not in READ_VERSIONS:
            raise ArtifactError(f"{p}: fastText .bin version {version} at byte 4; this reader knows versions "
                                f"{' and '.join(map(str, READ_VERSIONS))}")
        values = _ARGS.unpack(r.read(_ARGS.size, "the model arguments"))
        args = dict(zip(ARG_NAMES, values[:12]))
        args["t"] = float(values[12])
        if args["model"] == 3:
            raise ArtifactError(f"{p}: a supervised (text classification) fastText model (model=3 at byte 36); "
                                "only word-vector models (cbow, skipgram) are read")
        if args["model"] not in MODELS or args["loss"] not in LOSSES:
            raise ArtifactError(f"{p}: unknown model {args['model']} or loss {args['loss']} in the arguments at "
                                "bytes 32-39")
        if args["dim"] < 1 or args["bucket"] < 0:
            raise ArtifactError(f"{p}: dim={args['dim']}, bucket={args['bucket']} in the arguments: not a model")
        at = r.pos()
        n_size, nwords, nlabels, ntokens, prune = _DICT_HEAD.unpack(r.read(_DICT_HEAD.size, "the dictionary header"))
        if nlabels > 0:
            raise ArtifactError(f"{p}: the dictionary (byte {at:,}) holds {nlabels:,} labels: a supervised model; only "
                                "word-vector models are read")
        if n_size != nwords or nwords < 0:
            raise ArtifactError(f"{p}: dictionary at byte {at:,}: size {n_size} and nwords {nwords} disagree")
        if prune >= 0:
            raise ArtifactError(f"{p}: a pruned (quantized) model (pruneidx_size={prune} at byte {at + 20:,}); only "
                                "full models are read")
        words, counts = _read_words(r, nwords)
        at = r.pos()
        if r.read(1, "the quant_input flag") != b"\x00":
            raise ArtifactError(f"{p}: a quantized model (.ftz; quant_input set at byte {at:,}); only full models are "
                                "read")
        input_matrix = _read_matrix(r, "input matrix", nwords + args["bucket"], args["dim"])
        at = r.pos()
        if r.read(1, "the qout flag") != b"\x00":
            raise ArtifactError(f"{p}: a quantized output matrix (qout set at byte {at:,}); only full models are read")
        output_matrix = _read_matrix(r, "output matrix", None, args["dim"])
        left = size - r.pos()
        if left:
            raise ArtifactError(f"{p}: {left:,} bytes after the output matrix (which ends at byte {r.pos():,}); not a "
                                "fastText .bin file of a known version")
    return FacebookModel(args, words, counts, int(ntokens), input_matrix, output_matrix, version, str(p))


def _read_words(r: _Reader, n: int) -> tuple[list[str], np.ndarray]:
    # the whole dictionary is small next to the matrices: read the bytes after the header in blocks
    words: list[str] = []
    counts = np.empty(n, np.int64)
    buf = b""
    base = r.pos()  # file offset of buf[0]
    i = 0
    pos = 0
    while i < n:
        end = buf.find(b"\x00", pos)
        if end < 0 or end + 1 + _ENTRY_TAIL.size > len(buf):
            more = r.fh.read(1 << 20)
            if not more:
                raise ArtifactError(f"{r.path}: truncated file: the dictionary announces {n:,} words but the file ends "
                                    f"inside word {i + 1} (byte {base + pos:,})")
            buf = buf[pos:] + more
            base += pos
            pos = 0
            continue
        raw = buf[pos:end]
        try:
            word = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ArtifactError(f"{r.path}: word {i + 1} (byte {base + pos:,}) is not valid UTF-8 (byte {exc.start} of "
                                f"{raw[:40]!r})") from None
        count, kind = _ENTRY_TAIL.unpack_from(buf, end + 1)
        if kind != 0:
            raise ArtifactError(f"{r.path}: entry {i + 1} (byte {base + pos:,}) is a label, not a word: a supervised "
                                "model; only word-vector models are read")
        words.append(word)
        counts[i] = count
        pos = end + 1 + _ENTRY_TAIL.size
        i += 1
    r.fh.seek(base + pos)  # give back what was read ahead
    return words, counts


def _read_matrix(r: _Reader, what: str, rows: int | None, cols: int) -> np.ndarray:
    at = r.pos()
    m, n = _MATRIX_HEAD.unpack(r.read(_MATRIX_HEAD.size, f"the {what} shape"))
    if (rows is not None and m != rows) or n != cols or m < 0:
        expected = f"({rows:,}, {cols})" if rows is not None else f"(rows, {cols})"
        raise ArtifactError(f"{r.path}: the {what} at byte {at:,} has shape ({m:,}, {n}), expected {expected} "
                            "(nwords + bucket rows of dim values)")
    count = m * n
    need = count * 4
    if r.size - r.pos() < need:
        raise ArtifactError(f"{r.path}: truncated file: the {what} needs {need:,} bytes from byte {r.pos():,}, but "
                            f"the file ends at byte {r.size:,}")
    data = np.fromfile(r.fh, dtype=_F32, count=count)
    return data.astype(np.float32, copy=False).reshape(m, n)


def write_facebook_bin(path: str | os.PathLike, model: FacebookModel) -> Path:
    """Write ``model`` as a fastText ``.bin`` file (version 12), atomically; returns the path.

    Raises
    ------
    TokembedError
        A word holds a NUL character (the format ends words with a 0 byte), or the matrices' shapes disagree with
        ``args`` and the vocabulary.
    """
    a = model.args
    nwords = len(model.words)
    if model.input_matrix.shape != (nwords + a["bucket"], a["dim"]):
        raise TokembedError(f"input matrix of shape {model.input_matrix.shape}; a fastText file needs "
                            f"({nwords + a['bucket']}, {a['dim']}) (nwords + bucket, dim)")
    if model.output_matrix.ndim != 2 or model.output_matrix.shape[1] != a["dim"]:
        raise TokembedError(f"output matrix of shape {model.output_matrix.shape}; expected (n, {a['dim']})")
    parts = [struct.pack("<ii", MAGIC, VERSION), _ARGS.pack(*(int(a[k]) for k in ARG_NAMES), float(a["t"])),
             _DICT_HEAD.pack(nwords, nwords, 0, int(model.n_tokens), -1)]
    for word, count in zip(model.words, model.counts.tolist()):
        raw = word.encode("utf-8", "surrogatepass")
        if b"\x00" in raw:
            raise TokembedError(f"the word {word!r} holds a NUL character, which a fastText .bin file cannot store")
        parts.append(raw + b"\x00" + _ENTRY_TAIL.pack(int(count), 0))
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(b"".join(parts))
            for matrix in (model.input_matrix, model.output_matrix):
                fh.write(b"\x00")  # quant_input, then qout
                fh.write(_MATRIX_HEAD.pack(*matrix.shape))
                _write_rows(fh, matrix)
            fh.flush()
            os.fsync(fh.fileno())
    return Path(path)


def _write_rows(fh, matrix: np.ndarray, block: int = 65536) -> None:
    for lo in range(0, matrix.shape[0], block):
        fh.write(np.ascontiguousarray(matrix[lo:lo + block], dtype=_F32).tobytes())


def load_facebook_vectors(path: str | os.PathLike):
    """The word vectors of a fastText ``.bin`` model: a :class:`~tokembed.plugins.fasttext.FastTextKeyedVectors`
    whose unseen words get vectors from their n-grams (gensim's ``load_facebook_vectors``).

    Raises
    ------
    ArtifactError
        As :func:`read_facebook_bin`.
    """
    from . import _kernels as K
    from .keyedvectors import FastTextKeyedVectors
    from .training import subword_rows

    m = read_facebook_bin(path)
    a = m.args
    row_offsets, rows = subword_rows(m.words, a["minn"], a["maxn"], a["bucket"])
    vectors = K.compose_vectors(m.input_matrix, row_offsets, rows)
    try:
        kv = FastTextKeyedVectors.from_fasttext(m.words, vectors, m.input_matrix[len(m.words):], minn=a["minn"],
                                                maxn=a["maxn"], copy=False)
    except TokembedError as exc:
        raise ArtifactError(f"{path}: {exc}") from None
    kv.source = str(path)
    return kv
