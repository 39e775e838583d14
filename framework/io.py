"""Atomic writing and checked reading of artifacts.

Every file tokembed writes goes to a temporary name in the destination folder and is renamed into place with
:func:`os.replace`, so a crash or a full disk never leaves a half-written file under the final name. Nothing is
pickled: artifacts are JSON, ``.npy``/``.npz`` (loaded with ``allow_pickle=False``) or plain text.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from .errors import ArtifactError, TokembedError

__all__ = [
    "atomic_path",
    "atomic_write_bytes",
    "atomic_write_text",
    "atomic_write_json",
    "atomic_save_npy",
    "atomic_save_npz",
    "save_matrix",
    "npz_bytes",
    "read_npz",
    "read_json",
    "dumps_json",
    "RUN_MARKER",
]

#: The file that marks a run folder written by ``tokembed run`` or ``tokembed compare``; it lists the entries the
#: run wrote. A run replaces only such a folder (or an empty one), and corpus folders skip the files under it.
RUN_MARKER = ".tokembed-run"


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success rename it to ``path``, on error remove it.

    The parent folder is created if missing. The rename is atomic on POSIX file systems.
    """
    final = Path(path)
    if final.is_dir():
        raise ArtifactError(f"{final}: is a folder; give a file name to write to")
    final.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{final.name}.", suffix=".tmp", dir=final.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        # mkstemp creates the file private (0600); give it the mode an ordinary open() would (0666 & ~umask)
        os.chmod(tmp_path, 0o666 & ~_umask())
        os.replace(tmp_path, final)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp_path.unlink()
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (fsync'd before the rename); return the final path."""
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    return Path(path)


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` as UTF-8 (no newline translation) to ``path`` atomically."""
    return atomic_write_bytes(path, text.encode("utf-8", "surrogatepass"))


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def dumps_json(obj: Any) -> str:
    """Serialize ``obj`` deterministically: insertion order, 1-space indent, UTF-8, final newline.

    NaN and infinity are refused (they are not JSON).
    """
    text = json.dumps(obj, ensure_ascii=False, indent=1, allow_nan=False, default=_json_default) + "\n"
    # a lone surrogate (a Python str may hold one) cannot be written as UTF-8: write it as its JSON escape, which
    # json.loads reads back to the same character, so the file stays valid UTF-8 JSON
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    raise TypeError(f"cannot write {type(obj).__name__} to JSON")


def atomic_write_json(path: str | os.PathLike, obj: Any) -> Path:
    """Write ``obj`` as JSON (see :func:`dumps_json`) to ``path`` atomically."""
    return atomic_write_text(path, dumps_json(obj))


def atomic_save_npy(path: str | os.PathLike, array: np.ndarray) -> Path:
    """Save one array in ``.npy`` format atomically (no pickled objects allowed)."""
    buf = io.BytesIO()
    np.save(buf, np.asarray(array), allow_pickle=False)
    return atomic_write_bytes(path, buf.getvalue())


def npz_bytes(arrays: dict[str, np.ndarray], compress: bool = False) -> bytes:
    """The ``.npz`` file holding ``arrays`` (in the given order), as bytes; deterministic.

    ``numpy.savez`` stamps each member with the current time, so two saves of the same arrays differ; here every
    member has the same fixed date (1980-01-01, the earliest a zip entry can hold), so equal arrays give equal
    bytes. ``np.load`` reads the result. ``compress`` deflates the members (zlib level 6; deterministic too).

    Raises
    ------
    ValueError
        If an array holds Python objects (they could only be stored pickled).
    """
    import zipfile

    buf = io.BytesIO()
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(buf, "w", compression=method, allowZip64=True) as zf:
        for key, value in arrays.items():
            arr = np.asarray(value)
            if arr.dtype.hasobject:
                raise ValueError(
                    f"array {key!r} holds Python objects (dtype {arr.dtype}), which cannot be saved without pickle"
                )
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = method
            info.external_attr = 0o644 << 16
            with zf.open(info, "w", force_zip64=True) as fh:
                np.lib.format.write_array(fh, np.ascontiguousarray(arr), allow_pickle=False)
    return buf.getvalue()


def atomic_save_npz(path: str | os.PathLike, compress: bool = True, **arrays: np.ndarray) -> Path:
    """Save named arrays in ``.npz`` format atomically and deterministically (see :func:`npz_bytes`): the same
    arrays always give the same bytes. Compressed by default.

    Raises
    ------
    ValueError
        If an array holds Python objects (``np.savez`` would pickle them).
    """
    return atomic_write_bytes(path, npz_bytes(arrays, compress=compress))


def save_matrix(stem: str | os.PathLike, matrix: Any) -> Path:
    """A vectorizer's output as ``STEM.npz`` (a sparse matrix, scipy's CSR layout: ``indices``, ``indptr``,
    ``format``, ``shape``, ``data``, which ``scipy.sparse.load_npz`` reads) or ``STEM.npy`` (a dense one), written
    atomically and deterministically; returns the path written.

    Raises
    ------
    TokembedError
        If the matrix holds NaN or infinity (nothing is written).
    """
    stem = Path(stem)
    if hasattr(matrix, "tocsr"):
        csr = matrix.tocsr()
        if csr.data.dtype.kind == "f" and not np.isfinite(csr.data).all():
            raise TokembedError(f"{stem.name}: the output matrix holds NaN or infinity; nothing was saved")
        return atomic_save_npz(stem.with_name(stem.name + ".npz"), indices=csr.indices, indptr=csr.indptr,
                               format=np.array(b"csr"), shape=np.array(csr.shape), data=csr.data)
    arr = np.asarray(matrix)
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise TokembedError(f"{stem.name}: the output matrix holds NaN or infinity; nothing was saved")
    return atomic_save_npy(stem.with_name(stem.name + ".npy"), arr)


def read_npz(path: "str | os.PathLike | io.BytesIO", *, what: str = "array file") -> dict[str, np.ndarray]:
    """Every array of an ``.npz`` file, read into memory without pickle.

    Raises
    ------
    ArtifactError
        If the file is missing, unreadable, not an ``.npz``, truncated, or holds pickled objects.
    """
    import zipfile

    p = path if isinstance(path, io.BytesIO) else Path(path)
    try:
        if isinstance(p, io.BytesIO):
            head = p.getvalue()[:6]
        else:
            with open(p, "rb") as fh:
                head = fh.read(6)
    except FileNotFoundError:
        raise ArtifactError(f"{p}: no such {what}") from None
    except IsADirectoryError:
        raise ArtifactError(f"{p}: is a folder, expected an .npz {what}") from None
    except OSError as exc:
        raise ArtifactError(f"{p}: cannot read the {what}: {exc.strerror or exc}") from None
    if not head.startswith(b"PK"):  # np.load would read a .npy as one array, and try anything else as a pickle
        found = "a single .npy array" if head == b"\x93NUMPY" else "empty" if not head else "not a zip archive"
        raise ArtifactError(f"{p}: not an .npz {what} ({found})")
    try:
        with np.load(p, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except FileNotFoundError:
        raise ArtifactError(f"{p}: no such {what}") from None
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise ArtifactError(f"{p}: not a readable .npz {what} ({exc}); the file may be truncated") from None


def read_json(path: str | os.PathLike, *, what: str = "artifact") -> Any:
    """Read a JSON file; a missing, unreadable or malformed file raises :class:`ArtifactError` naming it."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise ArtifactError(f"{p}: no such {what} file") from None
    except IsADirectoryError:
        raise ArtifactError(f"{p}: is a folder, expected {'an' if what[:1] in 'aeiou' else 'a'} {what} file") from None
    except OSError as exc:
        raise ArtifactError(f"{p}: cannot read {what}: {exc.strerror or exc}") from None
    try:
        return json.loads(raw.decode("utf-8", "surrogatepass"))
    except UnicodeDecodeError as exc:
        raise ArtifactError(f"{p}: not a UTF-8 JSON {what} (bad byte at offset {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ArtifactError(
            f"{p}:{exc.lineno}:{exc.colno}: not a valid JSON {what} ({exc.msg}); the file may be truncated"
        ) from None
