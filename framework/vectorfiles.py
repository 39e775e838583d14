"""Vector files: word2vec text and binary files, and tokembed's own ``.npz`` file of :class:`KeyedVectors`.

The word2vec formats of Mikolov et al.'s ``word2vec.c`` (also written and read by gensim and fastText):

- text: a header line ``"<count> <dimensions>"``, then one line per key, ``key v1 v2 ... vd``, values separated by
  one space (trailing spaces are ignored when reading). Values are written as the shortest decimal string that
  reads back as the same float32 (numpy's ``str(np.float32(x))``, e.g. ``0.418``, ``-1e-05``): lossless, and
  byte-identical to what gensim 4 writes for the same vectors.
- binary: the same header line, then per key ``key`` + one space + ``d`` little-endian float32 values (4 bytes
  each) + ``"\\n"``. ``word2vec.c`` writes the newline, gensim does not; both are read.

Keys are UTF-8 in both formats. Keys must be non-empty and contain no whitespace (a space or newline would
split the record); saving such a key raises :class:`~tokembed.errors.TokembedError`.

tokembed's own file (:func:`write_keyed_vectors`, ``KeyedVectors.save``) keeps every key as it is (spaces,
newlines, lone surrogates) and every value bit for bit: one deterministic ``.npz`` (no pickle) holding ``format``
(``"tokembed-keyedvectors"``), ``format_version`` (1), ``class`` (``"module:QualName"`` of the class saved),
``key_bytes`` (uint8: the keys' UTF-8, surrogates passed through, one after the other), ``key_offsets`` (int64, n + 1:
key ``i`` is ``key_bytes[key_offsets[i]:key_offsets[i + 1]]``), ``vectors`` (float32 (n, d)), and one
``extra_<name>`` array per array a subclass keeps besides (FastText's n-gram rows). A grid cell's
``<tokenizer>.<embedder>.vectors.npz`` (``keys``: str (n,), ``vectors``: float32 (n, d)) is read too
(:func:`read_vector_npz`).
"""

from __future__ import annotations

import io
import mmap
import os
from pathlib import Path
from typing import Any, NamedTuple, Sequence

import numpy as np

from .errors import ArtifactError, TokembedError
from .io import atomic_path, atomic_save_npz, read_npz

__all__ = ["write_word2vec", "read_word2vec", "read_word2vec_header", "header_then_vector", "NO_HEADER_HINT",
           "HAS_HEADER_HINT", "KV_FORMAT", "write_keyed_vectors", "read_vector_npz", "SavedVectors", "saved_class",
           "sniff_vector_file", "VECTOR_SOURCES"]

_LE_F32 = np.dtype("<f4")


def write_word2vec(path: str | os.PathLike, keys: Sequence[str], vectors: np.ndarray, binary: bool = False,
                   write_header: bool = True) -> Path:
    """Write ``vectors`` (float32 (n, d); row ``i`` is ``keys[i]``) in word2vec text or binary format, atomically;
    ``write_header=False`` leaves out the ``"<count> <dimensions>"`` line (GloVe's own text layout).

    Raises
    ------
    TokembedError
        A key is empty, contains whitespace or cannot be encoded as UTF-8 (nothing is written).
    """
    encoded = []
    for key in keys:
        if not key or any(c.isspace() for c in key):
            raise TokembedError(
                f"cannot save key {key!r} in word2vec format: keys must be non-empty and contain no whitespace"
            )
        try:
            encoded.append(key.encode("utf-8"))
        except UnicodeEncodeError:
            raise TokembedError(f"cannot save key {key!r}: it is not encodable as UTF-8") from None
    vecs = vectors
    dim = vecs.shape[1]
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            if write_header:
                fh.write(f"{len(vecs)} {dim}\n".encode("ascii"))
            for lo in range(0, len(vecs), 4096):
                block = vecs[lo:lo + 4096]
                if binary:
                    raw = block.astype(_LE_F32).tobytes()
                    step = 4 * dim
                    fh.write(b"".join(
                        encoded[lo + i] + b" " + raw[i * step:(i + 1) * step] + b"\n" for i in range(len(block))
                    ))
                else:
                    fh.write(b"".join(
                        encoded[lo + i] + b" " + " ".join(map(str, row)).encode("ascii") + b"\n"
                        for i, row in enumerate(block)
                    ))
            fh.flush()
            os.fsync(fh.fileno())
    return Path(path)


def read_word2vec(path: Path, binary: bool = False, limit: int | None = None,
                  no_header: bool = False) -> tuple[list[str], np.ndarray]:
    """The keys and float32 (n, d) vectors of a word2vec text or binary file, in file order (repeats kept).

    Raises
    ------
    ArtifactError
        As :meth:`tokembed.keyedvectors.KeyedVectors.load_word2vec_format`, naming the file and line or offset.
    TokembedError
        ``no_header`` with ``binary``.
    """
    if binary and no_header:
        raise TokembedError("no_header applies to the text format only")
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        raise ArtifactError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ArtifactError(f"{path}: is a folder, expected a word2vec file") from None
    except OSError as exc:
        raise ArtifactError(f"{path}: cannot read: {exc.strerror or exc}") from None
    with fh:
        if no_header:
            count, dim = None, None
        else:
            count, dim = _read_header(fh, path, binary)
        if limit is not None and count is not None:
            count = min(count, limit)
        if binary:
            return _read_binary(fh, path, count, dim)
        return _read_text(fh, path, count, dim, limit)


def read_word2vec_header(path: str | os.PathLike) -> tuple[int, int] | None:
    """``(count, dimensions)`` from the first line of a word2vec file (text or binary), or None when the first line
    is not such a header (a GloVe ``.txt`` file, which starts with a vector).

    Reads one line at most (up to 64 KiB); what :meth:`KeyedVectors.load_word2vec_format` requires unless
    ``no_header=True``.

    Raises
    ------
    ArtifactError
        If the file cannot be opened.
    """
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            line = fh.readline(65536)
    except OSError as exc:
        raise ArtifactError(f"{p}: cannot read: {exc.strerror or exc}") from None
    return _parse_header(line)


def _parse_header(line: bytes) -> tuple[int, int] | None:
    """``(count, dimensions)`` of a header line ``b"<count> <dimensions>\\n"``, None if it is not one."""
    parts = line.split()
    try:
        count, dim = (int(parts[0]), int(parts[1])) if len(parts) == 2 else (-1, 0)
    except ValueError:
        return None
    return (count, dim) if count >= 0 and dim >= 1 else None


#: The hint of a text file's missing header; a recipe's ``evaluate.vectors`` says it in its own words instead
#: (:class:`tokembed.recipe.evaluate.VectorsSpec`), from the error's ``header`` and ``problem`` attributes.
NO_HEADER_HINT = " (a file without this line, like GloVe's .txt, reads with no_header=True)"
#: The hint of a text file read with ``no_header=True`` that has the header line; said again like NO_HEADER_HINT.
HAS_HEADER_HINT = " (line 1 is a word2vec header '<count> <dimensions>': read this file without no_header=True)"


def _header_error(problem: str, header: str) -> ArtifactError:
    """An ``ArtifactError`` about the header line, as data: ``problem`` (the message without the hint) and
    ``header`` (``"missing"``: read with ``no_header=True``, or ``"present"``: read without), its message
    ``problem`` plus the hint of :data:`NO_HEADER_HINT` / :data:`HAS_HEADER_HINT`."""
    err = ArtifactError(problem + (NO_HEADER_HINT if header == "missing" else HAS_HEADER_HINT))
    err.problem, err.header = problem, header
    return err


def header_then_vector(first: bytes, second: bytes) -> tuple[int, int] | None:
    """``(count, dimensions)`` when ``first`` is a word2vec header line and ``second`` a vector line that fits it
    (a key and ``dimensions`` values: ``dimensions + 1`` whitespace-separated fields), else None.

    How a text file read with ``no_header=True`` is recognised as having the header after all (used by the reader's
    error message and by the recipe check). A 1-dimensional header is not recognised: ``"7 1"`` is also the key
    ``7`` with the value 1 in GloVe's layout, and two lines cannot tell them apart.

    Parameters
    ----------
    first, second : bytes
        Lines 1 and 2 of the file, as read (a trailing newline is ignored).
    """
    found = _parse_header(first)
    if found is None or found[1] < 2:
        return None
    return found if len(second.split()) == found[1] + 1 else None


def _read_header(fh: io.BufferedReader, path: Path, binary: bool) -> tuple[int, int]:
    line = fh.readline()
    if not line:
        raise ArtifactError(f"{path}: the file is empty (a word2vec file starts with the line "
                            "'<count> <dimensions>')")
    found = _parse_header(line)
    if found is None:
        shown = line[:60].decode("utf-8", "replace").rstrip("\n")
        problem = f"{path}:1: expected a header '<count> <dimensions>', got {shown!r}"
        raise ArtifactError(problem) if binary else _header_error(problem, "missing")
    return found


def _decode_key(raw: bytes, where: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ArtifactError(
            f"{where}: the key is not valid UTF-8 (byte {exc.start} of {bytes(raw[:40])!r})"
        ) from None


def _read_text(
    fh: io.BufferedReader, path: Path, count: int | None, dim: int | None, limit: int | None
) -> tuple[list[str], np.ndarray]:
    keys: list[str] = []
    rests: list[bytes] = []
    lineno = 1 if count is not None else 0
    want = count if count is not None else limit
    first = b""  # line 1 of a file read without header: a header after all when line 2 does not fit it
    # without a header and with limit=0, line 1 is still read for the dimensions (then dropped)
    while want is None or len(keys) < want or dim is None:
        line = fh.readline()
        if not line:
            if count is not None:
                raise ArtifactError(
                    f"{path}: the header announces {count:,} vectors but the file ends after {len(keys):,}; "
                    "the file may be truncated"
                )
            break
        lineno += 1
        if lineno == 1:
            first = line
        line = line.rstrip()
        if not line:
            raise ArtifactError(f"{path}:{lineno}: empty line where a vector was expected")
        key, sep, rest = line.partition(b" ")
        if dim is None:
            dim = rest.count(b" ") + 1 if rest else 0
            if dim < 1:
                raise ArtifactError(f"{path}:{lineno}: expected a key followed by numbers, got {line[:60]!r}")
        where = f"{path}:{lineno}"
        if not sep or rest.count(b" ") != dim - 1:
            found = len(rest.split()) if sep else 0
            problem = f"{where}: expected the key and {dim} values separated by single spaces, found {found} values"
            if not keys:
                raise ArtifactError(problem + " (if the file is binary, pass binary=True)")
            if count is None and lineno == 2 and header_then_vector(first, line):
                raise _header_error(problem, "present")
            raise ArtifactError(problem)
        keys.append(_decode_key(key, where))
        rests.append(rest)
    if want is not None and len(keys) > want:  # the line read for the dimensions only
        del keys[want:], rests[want:]
    if not keys:
        if dim is None:
            raise ArtifactError(f"{path}: the file is empty")
        return keys, np.zeros((0, dim), dtype=np.float32)
    try:
        flat = np.fromstring(b" ".join(rests), dtype=np.float32, sep=" ")
        if flat.size != len(keys) * dim:
            raise ValueError
    except ValueError:
        first = 2 if count is not None else 1
        for i, rest in enumerate(rests):
            try:
                row = np.fromstring(rest, dtype=np.float32, sep=" ")
                if row.size != dim:
                    raise ValueError
            except ValueError:
                raise ArtifactError(f"{path}:{first + i}: a value is not a number: {rest[:80]!r}") from None
        raise ArtifactError(f"{path}: the values could not be read as float32 numbers") from None
    return keys, flat.reshape(len(keys), dim)


#: The bytes of numbers written as text (``-0.125 3e-05``). A text file's values consist of these alone; a binary
#: record's practically never do (all four bytes of a float32 fall in this set for about 1 in 10 million values
#: drawn from a normal distribution, and a record has ``d`` of them).
_TEXT_NUMBER_BYTES = b"0123456789+-.eE \t\r\n"


def _read_binary(
    fh: io.BufferedReader, path: Path, count: int, dim: int
) -> tuple[list[str], np.ndarray]:
    keys: list[str] = []
    if count == 0:
        return keys, np.zeros((0, dim), dtype=np.float32)
    start = fh.tell()
    size = os.fstat(fh.fileno()).st_size
    step = 4 * dim
    if count * (step + 2) > size - start:  # each record holds at least a 1-byte key, a space and the values
        raise ArtifactError(
            f"{path}: the header announces {count:,} vectors of {dim} float32 values, more than the "
            f"{size - start:,} bytes that follow hold; the file may be truncated (or is not binary: pass "
            "binary=False for text)"
        )
    out = np.empty((count, dim), dtype=np.float32)
    with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        pos = start
        for i in range(count):
            while pos < size and mm[pos] == 0x0A:  # word2vec.c's newline after each vector
                pos += 1
            end = mm.find(b" ", pos)
            where = f"{path}: record {i + 1} (byte {pos})"
            if end < 0 or end + 1 + step > size:
                raise ArtifactError(
                    f"{path}: the header announces {count:,} vectors but the file ends inside record {i + 1}; "
                    "the file may be truncated (or is not binary: pass binary=False, or binary: false in a recipe, "
                    "for text)"
                )
            keys.append(_decode_key(mm[pos:end], where))
            if i == 0 and not mm[end + 1:end + 1 + step].strip(_TEXT_NUMBER_BYTES):
                raise ArtifactError(
                    f"{path}: the values of record 1 ({keys[0]!r}) are written as text, not float32: this is a word2vec "
                    "text file; pass binary=False (binary: false in a recipe)"
                )
            out[i] = np.frombuffer(mm, dtype=_LE_F32, count=dim, offset=end + 1)
            pos = end + 1 + step
    return keys, out


#: The vector sources of :func:`tokembed.keyedvectors.load_vectors`, in words (for messages).
VECTOR_SOURCES = ("a word2vec text file (or binary: .bin, binary=True), a KeyedVectors file (KeyedVectors.save), a "
                  "grid cell's .vectors.npz, a folder with vectors.npy and vocab.txt, or a dataset name")


def _head(p: Path, n: int = 4096) -> bytes:
    try:
        with open(p, "rb") as fh:
            return fh.read(n)
    except FileNotFoundError:
        raise ArtifactError(f"{p}: no such file") from None
    except OSError as exc:
        raise ArtifactError(f"{p}: cannot be read: {exc.strerror or exc}") from None


def sniff_vector_file(p: Path, binary: bool) -> str:
    """``"npz"`` for a zip archive (tokembed's own file or a grid cell's), else ``"word2vec"``, after refusing a
    file about to be read as word2vec text that is plainly something else (a saved tokembed component, binary data),
    with a message naming the formats expected instead of the file's bytes.

    Raises
    ------
    ArtifactError
        As said, or the file is missing or unreadable.
    """
    head = _head(p)
    if head.startswith(b"PK\x03\x04") and not binary:
        return "npz"
    if binary:
        return "word2vec"
    if head.lstrip().startswith(b"{") and b'"format": "tokembed"' in head:
        raise ArtifactError(f"{p}: a saved tokembed component, not a vector file: read it with tokembed.load(path) "
                            f"(an embedder's vectors are its wv_); load_vectors reads {VECTOR_SOURCES}")
    if b"\x00" in head:
        raise ArtifactError(f"{p}: binary data, not a word2vec text file; load_vectors reads {VECTOR_SOURCES}")
    return "word2vec"


def saved_class(class_path: str, base: type, path: Path) -> type:
    """The class ``"module:QualName"`` a vector file was saved from (imported), when it is a subclass of ``base``.

    Raises
    ------
    ArtifactError
        If it cannot be imported (the plugin that provides it is not installed), or is not a subclass of ``base``.
    """
    import importlib

    module, _, qualname = class_path.partition(":")
    try:
        found: Any = importlib.import_module(module)
        for part in qualname.split("."):
            found = getattr(found, part)
    except Exception as exc:  # noqa: BLE001 - whatever the import raises, the file cannot be read as saved
        raise ArtifactError(f"{path}: saved from {class_path}, which cannot be imported ({type(exc).__name__}: "
                            f"{exc}); install the plugin that provides it") from None
    if not (isinstance(found, type) and issubclass(found, base)):
        raise ArtifactError(f"{path}: saved from {class_path}, which is not a {base.__qualname__}")
    return found


# -- tokembed's own file --------------------------------------------------------------------------------------------
#: The ``format`` of a file written by :func:`write_keyed_vectors`.
KV_FORMAT = "tokembed-keyedvectors"
_KV_VERSION = 1


class SavedVectors(NamedTuple):
    """What :func:`read_vector_npz` read: ``class_path`` (``"module:QualName"``, or None for a grid cell's file),
    ``keys``, ``vectors`` (float32 (n, d)) and ``extra`` (name -> array, a subclass's own arrays)."""

    class_path: str | None
    keys: list[str]
    vectors: np.ndarray
    extra: dict[str, np.ndarray]


def write_keyed_vectors(path: str | os.PathLike, class_path: str, keys: Sequence[str], vectors: np.ndarray,
                        extra: dict[str, np.ndarray] | None = None) -> Path:
    """Write tokembed's own vector file (see the module notes) atomically; the same input gives the same bytes.

    Parameters
    ----------
    path : str or path
        The file (``.npz`` is not added).
    class_path : str
        ``"module:QualName"`` of the class that reads it back.
    keys : sequence of str
        ``n`` keys, any characters.
    vectors : ndarray of shape (n, d)
        Stored as float32.
    extra : dict of str to ndarray, optional
        More arrays, stored as ``extra_<name>`` (numbers only: no object arrays).
    """
    encoded = [k.encode("utf-8", "surrogatepass") for k in keys]
    offsets = np.zeros(len(encoded) + 1, np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    arrays = {"format": np.array(KV_FORMAT), "format_version": np.array(_KV_VERSION, np.int64),
              "class": np.array(class_path), "key_bytes": np.frombuffer(b"".join(encoded), np.uint8),
              "key_offsets": offsets, "vectors": np.ascontiguousarray(vectors, dtype=np.float32)}
    arrays.update({f"extra_{name}": np.asarray(arr) for name, arr in (extra or {}).items()})
    atomic_save_npz(path, **arrays)
    return Path(path)


def read_vector_npz(path: str | os.PathLike) -> SavedVectors:
    """Read tokembed's own vector file, or a grid cell's ``.vectors.npz`` (``keys`` and ``vectors``).

    Raises
    ------
    ArtifactError
        If the file is not an ``.npz`` (or truncated), is an ``.npz`` of something else (it names the arrays it
        found and the two layouts it expected), has another ``format_version``, or its arrays disagree in size.
    """
    p = Path(path)
    arrays = read_npz(p, what="vector file")
    def one(name: str, kind: str) -> Any:  # a 0-d or one-element array's value (npz_bytes stores them as (1,))
        arr = arrays.get(name)
        return arr.reshape(-1)[0].item() if arr is not None and arr.size == 1 and arr.dtype.kind in kind else None

    if one("format", "U") == KV_FORMAT:
        version = one("format_version", "iu")
        if version != _KV_VERSION:
            raise ArtifactError(f"{p}: KeyedVectors file format version {version!r}; this tokembed reads version "
                                f"{_KV_VERSION}")
        try:
            data, offsets = arrays["key_bytes"].tobytes(), arrays["key_offsets"]
            keys = [data[a:b].decode("utf-8", "surrogatepass") for a, b in zip(offsets[:-1], offsets[1:])]
            vectors, class_path = arrays["vectors"], one("class", "U")
        except (KeyError, UnicodeDecodeError, ValueError) as exc:
            raise ArtifactError(f"{p}: a broken KeyedVectors file ({type(exc).__name__}: {exc})") from None
        extra = {k[len("extra_"):]: v for k, v in arrays.items() if k.startswith("extra_")}
    elif {"keys", "vectors"} <= set(arrays) and arrays["keys"].dtype.kind == "U":
        keys, vectors, class_path, extra = arrays["keys"].tolist(), arrays["vectors"], None, {}
    else:
        raise ArtifactError(f"{p}: an .npz holding {', '.join(sorted(arrays)) or 'nothing'}, not vectors: expected "
                            f"a KeyedVectors file (KeyedVectors.save: format {KV_FORMAT!r}) or a grid cell's "
                            "vectors (keys and vectors)")
    if vectors.ndim != 2 or vectors.shape[0] != len(keys) or vectors.dtype != np.float32:
        raise ArtifactError(f"{p}: {len(keys):,} keys but vectors of shape {vectors.shape} and dtype {vectors.dtype} "
                            "(expected float32, one row per key)")
    return SavedVectors(class_path, keys, vectors, extra)
