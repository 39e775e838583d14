"""Corpus files: bundled texts, paths and globs, whole-file reading, and the checks of a file's first bytes
(BOM, UTF-16, binary) that validate runs before any work."""

from __future__ import annotations

import codecs
import glob as _glob
import gzip
import os
from importlib import resources
from pathlib import Path

from ..errors import CorpusError
from ..io import RUN_MARKER


#: Bundled texts: name -> (file inside the package, one-line description).
BUILTIN_TEXTS: dict[str, tuple[str, str]] = {
    "moby-dick": ("samples/moby-dick.txt.gz", "Herman Melville, Moby-Dick (1851), 1.2 MB, public domain"),
}


def builtin_names() -> list[str]:
    """Names accepted by ``corpus: {builtin: NAME}``."""
    return sorted(BUILTIN_TEXTS)


def builtin_path(name: str) -> Path:
    """Path of a bundled text inside the installed package.

    Raises
    ------
    CorpusError
        If ``name`` is not a bundled text.
    """
    if name not in BUILTIN_TEXTS:
        raise CorpusError(f"unknown builtin text {name!r}; available: {', '.join(builtin_names())}")
    ref = resources.files("tokembed") / BUILTIN_TEXTS[name][0]
    return Path(str(ref))


def _open_binary(path: Path):
    if path.suffix == ".gz":
        return gzip.open(path, "rb")
    return open(path, "rb")


def expand_paths(pattern: str | os.PathLike, base: Path | None = None) -> list[Path]:
    """Files named by a path, a folder (every regular file below it, sorted, hidden ones skipped) or a glob.

    Relative paths are resolved against ``base`` (the recipe's folder) when given.

    Raises
    ------
    CorpusError
        If nothing matches.
    """
    raw = os.fspath(pattern)
    p = Path(raw).expanduser()
    if base is not None and not p.is_absolute():
        p = base / p
    if any(ch in raw for ch in "*?["):
        files = sorted(Path(m) for m in _glob.glob(str(p), recursive=True) if Path(m).is_file())
        if not files:
            raise CorpusError(f"{raw}: no file matches this pattern")
        return files
    if p.is_dir():
        run_folders = {m.parent for m in p.rglob(RUN_MARKER)}  # output of tokembed runs, never corpus text
        files = sorted(
            f for f in p.rglob("*")
            if f.is_file() and not any(part.startswith(".") for part in f.relative_to(p).parts)
            and not any(parent in run_folders for parent in f.parents)
        )
        if not files:
            raise CorpusError(f"{raw}: the folder holds no file")
        return files
    if p.is_file():
        return [p]
    if p.exists():
        raise CorpusError(f"{raw}: not a regular file or folder (a device, pipe or socket); give a text file")
    raise CorpusError(f"{raw}: no such file or folder" + (f" (looked in {p})" if str(p) != raw else ""))


def _decode_error(path: Path, offset: int, exc: UnicodeDecodeError, lineno: object = None) -> CorpusError:
    """Undecodable bytes, named by the file, the line (1-based, when known) and the byte offset in the file."""
    bad = exc.object[exc.start:exc.end] if isinstance(exc.object, (bytes, bytearray)) else b""
    where = f"{path}:{lineno}" if lineno is not None else str(path)
    return CorpusError(
        f"{where}: invalid UTF-8 at byte offset {offset} ({bad!r}: {exc.reason}); "
        "fix the file, or read it with `errors: replace` in the corpus spec (`--errors replace` for tokembed "
        "encode)"
    )


def read_text(path: str | os.PathLike, errors: str = "strict") -> str:
    """Read a whole UTF-8 (optionally gzip-compressed) file; undecodable bytes raise CorpusError with the line and offset."""
    p = Path(path)
    try:
        with _open_binary(p) as fh:
            data = fh.read()
    except FileNotFoundError:
        raise CorpusError(f"{p}: no such file") from None
    except (OSError, EOFError) as exc:
        raise CorpusError(f"{p}: cannot read: {exc}") from None
    try:
        return data.decode("utf-8", errors)
    except UnicodeDecodeError as exc:
        raise _decode_error(p, exc.start, exc, data.count(b"\n", 0, exc.start) + 1) from None


_BOM = b"\xef\xbb\xbf"
_BOM_LEN = len(_BOM)


class _Stripped(bytes):
    """Bytes with the UTF-8 byte-order mark removed (``_bom`` says one was there)."""

    _bom = True


def _check_start(path: Path, raw: bytes) -> bytes:
    """Drop a UTF-8 byte-order mark at the start of a file; refuse UTF-16/32 files with a clear message."""
    if raw.startswith(_BOM):
        return _Stripped(raw[_BOM_LEN:])
    if raw[:4] in (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff") or raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise CorpusError(f"{path}: the file is UTF-16 or UTF-32 (it starts with a byte-order mark); tokembed reads "
                          "UTF-8: convert it first, e.g. `iconv -f UTF-16 -t UTF-8 IN > OUT`")
    return raw


#: Bytes of a file's start that :func:`check_file_start` (``tokembed validate``) and every read look at.
SNIFF_BYTES = 1 << 16


def _sniff(path: Path, head: bytes) -> None:
    """Refuse a file whose first bytes are UTF-16 without a byte-order mark (a NUL in every other byte, which
    decodes as "UTF-8" text full of NULs) or hold NUL bytes (a binary file): the NUL is valid UTF-8, so nothing
    else would stop it. Looks at the first 4,096 bytes."""
    head = head[:4096]
    nul = head.find(b"\x00")
    if nul < 0:
        return
    pairs = len(head) // 2
    if pairs >= 2:
        even, odd = head[0:2 * pairs:2], head[1:2 * pairs:2]
        for label, nuls, other in (("UTF-16LE", odd, even), ("UTF-16BE", even, odd)):
            if nuls.count(0) >= 0.6 * pairs and other.count(0) <= 0.1 * pairs:
                raise CorpusError(
                    f"{path}: the file looks like {label} without a byte-order mark (every other byte is NUL); "
                    f"tokembed reads UTF-8: convert it first, e.g. `iconv -f {label} -t UTF-8 IN > OUT`")
    raise CorpusError(f"{path}: holds a NUL byte at byte offset {nul}: a binary file, not UTF-8 text (a text "
                      "corpus never holds NUL)")


def check_file_start(path: str | os.PathLike, errors: str = "strict") -> bool:
    """Read the first :data:`SNIFF_BYTES` bytes of a corpus file (decompressed for ``.gz``) and raise what reading
    it would raise there: a UTF-16/32 byte-order mark, UTF-16 without one, NUL bytes (binary), and with
    ``errors="strict"`` invalid UTF-8 (naming the line and byte offset). ``tokembed validate`` calls it for every file.

    Returns True when the whole file was read and holds nothing but whitespace (no document), else False.

    Raises
    ------
    CorpusError
        For the first problem found, naming the file.
    """
    p = Path(path)
    try:
        with _open_binary(p) as fh:
            head = fh.read(SNIFF_BYTES)
    except FileNotFoundError:
        raise CorpusError(f"{p}: no such file") from None
    except (OSError, EOFError) as exc:
        raise CorpusError(f"{p}: cannot read (broken or truncated file?): {exc}") from None
    checked = _check_start(p, head)
    offset = _BOM_LEN if getattr(checked, "_bom", False) else 0
    _sniff(p, bytes(checked))
    if errors == "strict":
        try:  # final=False: a character cut at the end of the bytes read is not an error
            codecs.getincrementaldecoder("utf-8")("strict").decode(bytes(checked), final=False)
        except UnicodeDecodeError as exc:
            raise _decode_error(p, offset + exc.start, exc, bytes(checked).count(b"\n", 0, exc.start) + 1) from None
    return len(head) < SNIFF_BYTES and not bytes(checked).strip()


def _content_size(path: Path) -> int:
    size = path.stat().st_size
    if path.suffix != ".gz" or size < 18:  # a gzip member is at least 18 bytes (header and trailer)
        return size
    with open(path, "rb") as fh:
        fh.seek(-4, os.SEEK_END)
        return int.from_bytes(fh.read(4), "little")
