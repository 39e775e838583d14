"""word2vec text and binary files: reading and writing vectors by key.

The word2vec formats of Mikolov et al.'s ``word2vec.c`` (also written and read by gensim and fastText):

- text: a header line ``"<count> <dimensions>"``, then one line per key, ``key v1 v2 ... vd``, values separated by
  one space (trailing spaces are ignored when reading). Values are written as the shortest decimal string that
  reads back as the same float32 (numpy's ``str(np.float32(x))``, e.g. ``0.418``, ``-1e-05``): lossless, and
  byte-identical to what gensim 4 writes for the same vectors.
- binary: the same header line, then per key ``key`` + one space + ``d`` little-endian float32 values (4 bytes
  each) + ``"\\n"``. ``word2vec.c`` writes the newline, gensim does not; both are read.

Keys are UTF-8 in both formats. Keys must be non-empty and contain no whitespace (a space or newline would
split the record); saving such a key raises :class:`~tokembed.errors.TokembedError`.
"""

from __future__ import annotations

import io
import mmap
import os
from pathlib import Path
from typing import Sequence

import numpy as np

from .errors import ArtifactError, TokembedError
from .io import atomic_path

__all__ = ["write_word2vec", "read_word2vec", "read_word2vec_header", "header_then_vector", "NO_HEADER_HINT",
           "HAS_HEADER_HINT"]

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
            out[i] = np.frombuffer(mm, dtype=_LE_F32, count=dim, offset=end + 1)
            pos = end + 1 + step
    return keys, out
