"""Corpus readers: text files, folders, globs, ``.gz``, JSONL fields, bundled samples and named datasets.

A :class:`Corpus` is a re-iterable stream of documents (``str``): one per line (``unit="line"``, the default for
text), one per file (``unit="file"``) or one per JSONL record (``format="jsonl"``, the string at ``field``). It
never holds the whole corpus in memory; each iteration reads the files again.

Errors are :class:`~tokembed.errors.CorpusError` naming the file and, for undecodable bytes, the byte offset.
"""

from __future__ import annotations

import codecs
import glob as _glob
import gzip
import json
import os
from dataclasses import dataclass
from dataclasses import field as _dc_field
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Iterator, Literal, Mapping, Sequence

from .errors import CorpusError, CorpusReadError, TokembedError
from .io import RUN_MARKER

__all__ = ["Corpus", "Partition", "ParallelSet", "Format", "FORMATS", "UNITS", "ERROR_MODES", "open_corpus",
           "open_parallel", "spread", "BUILTIN_TEXTS", "builtin_names", "builtin_path", "expand_paths", "read_text",
           "check_file_start", "SNIFF_BYTES"]

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


def _decode_error(path: Path, offset: int, exc: UnicodeDecodeError) -> CorpusError:
    bad = exc.object[exc.start:exc.end] if isinstance(exc.object, (bytes, bytearray)) else b""
    return CorpusError(
        f"{path}: invalid UTF-8 at byte offset {offset} ({bad!r}: {exc.reason}); "
        "fix the file, or read it with `errors: replace` in the corpus spec"
    )


def read_text(path: str | os.PathLike, errors: str = "strict") -> str:
    """Read a whole UTF-8 (optionally gzip-compressed) file; undecodable bytes raise CorpusError with the offset."""
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
        raise _decode_error(p, exc.start, exc) from None


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


def check_file_start(path: str | os.PathLike, errors: str = "strict") -> None:
    """Read the first :data:`SNIFF_BYTES` bytes of a corpus file (decompressed for ``.gz``) and raise what reading
    it would raise there: a UTF-16/32 byte-order mark, UTF-16 without one, NUL bytes (binary), and with
    ``errors="strict"`` invalid UTF-8 (naming the byte offset). ``tokembed validate`` calls it for every file.

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
            raise _decode_error(p, offset + exc.start, exc) from None


def _content_size(path: Path) -> int:
    size = path.stat().st_size
    if path.suffix != ".gz" or size < 18:  # a gzip member is at least 18 bytes (header and trailer)
        return size
    with open(path, "rb") as fh:
        fh.seek(-4, os.SEEK_END)
        return int.from_bytes(fh.read(4), "little")


def _read_text(corpus: "Corpus", path: Path, fh) -> Iterator[str]:
    """Text: one document per line, per paragraph (lines up to a blank line, joined by ``\\n``) or per file."""
    if corpus.unit == "file":
        yield corpus._decode_whole(path, fh)
        return
    if corpus.unit == "line":
        for _, line in corpus._lines(path, fh):
            yield line
        return
    paragraph: list[str] = []
    for _, line in corpus._lines(path, fh):
        if line.strip():
            paragraph.append(line)
        elif paragraph:
            yield "\n".join(paragraph)
            paragraph = []
    if paragraph:
        yield "\n".join(paragraph)


def _read_jsonl(corpus: "Corpus", path: Path, fh) -> Iterator[str]:
    """JSON Lines: one document per record, the string at ``field``; blank lines are skipped."""
    for lineno, line in corpus._lines(path, fh):
        if line.strip():
            yield corpus._field(path, lineno, line)


@dataclass(frozen=True)
class Format:
    """A corpus file format: how its files are read into documents, and what a recipe may set for it.

    Attributes
    ----------
    read : callable
        ``read(corpus, path, binary_file) -> iterator of str``: the documents of one file. Raise
        :class:`CorpusError` naming the file (and line or byte offset) for bad content.
    options : mapping of str to type
        The corpus options this format reads besides ``format``, ``errors`` and ``unit`` (``{"field": str}`` for
        JSONL); recipe checking derives the keys it accepts from them.
    required : mapping of str to str
        Options that must be given, each with what it is (for the message when it is missing).
    suffixes : tuple of str
        File-name endings that imply this format when a recipe's ``path:`` gives no ``format:``.
    units : bool
        Whether ``unit:`` (line, paragraph, file) applies; a format whose records are the documents says False.
    description : str
        One line for the docs and messages.
    lines : bool
        For a format without units: every record is one line, so a file may be cut into partitions after any
        newline (:meth:`Corpus.partitions`); False reads each file whole in one partition. (With units, the unit
        decides: lines and paragraphs are cut, ``unit: file`` is not.)
    """

    read: Callable[["Corpus", Path, Any], Iterator[str]]
    options: Mapping[str, Any] = _dc_field(default_factory=dict)
    required: Mapping[str, str] = _dc_field(default_factory=dict)
    suffixes: tuple[str, ...] = ()
    units: bool = True
    description: str = ""
    lines: bool = False


#: The corpus formats by name: adding a format is one entry here (its reader and options), a test and a line of
#: ``docs/recipes.md``; recipe checking and :class:`Corpus` read this table.
FORMATS: dict[str, Format] = {
    "text": Format(_read_text, description="UTF-8 text; documents are lines, paragraphs or files (unit:)"),
    "jsonl": Format(_read_jsonl, options={"field": str},
                    required={"field": "the key holding each record's text"},
                    suffixes=(".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz"), units=False, lines=True,
                    description="JSON Lines; each record's string at field: is a document"),
}
#: What one document of a text file is.
UNITS = ("line", "paragraph", "file")
#: How undecodable bytes are handled.
ERROR_MODES = ("strict", "replace")


@dataclass(frozen=True)
class Partition:
    """A part of a corpus described by position, so that whoever reads it opens the file itself.

    The partition owns the documents that start in the bytes ``[start, end)`` of ``path``: read from the first
    cut point at or after ``start`` up to the first cut point at or after ``end``, where a cut point is the start
    of a line (``unit: line``, JSONL), the start of a blank line (``unit: paragraph``), or only the start of the
    file (``unit: file``, ``.gz`` files: one partition per file). The partitions of a file, read in order, give
    exactly the documents of the whole file, whatever the byte ranges; a partition with no cut point inside its
    range is empty. Finding the cut points reads only bytes of the partition's own range and its last document.

    Attributes
    ----------
    index : int
        Position in the corpus's list of partitions (0-based).
    path : str
        The file.
    start, end : int
        Byte range of the file (of the compressed file for ``.gz``, always the whole file).
    nbytes : int
        Text bytes the range stands for, for progress and throughput (the uncompressed size for ``.gz``).
    """

    index: int
    path: str
    start: int
    end: int
    nbytes: int

    def describe(self) -> str:
        """``FILE, bytes START-END`` (``FILE`` alone for a file read whole)."""
        return f"{self.path}, bytes {self.start}-{self.end}"


class _LineFrom(int):
    """A line number counted from the start of a partition, not of the file: shown with the byte it counts from."""

    start: int = 0

    def __new__(cls, value: int, start: int) -> "_LineFrom":
        obj = super().__new__(cls, value)
        obj.start = start
        return obj

    def __str__(self) -> str:
        return f"{int(self)} (counted from byte {self.start})"

    __format__ = lambda self, spec: format(str(self), spec)  # noqa: E731


class _Range:
    """The bytes ``[start, end)`` of an open binary file, read by lines (``for raw in fh``) or ``read(n)``;
    ``start`` and ``end`` are line starts (or 0 and the file's end), so no line crosses them."""

    def __init__(self, fh: Any, start: int, end: int):
        self.fh, self.start, self.end, self.pos = fh, start, end, start
        fh.seek(start)

    def __iter__(self) -> Iterator[bytes]:
        while self.pos < self.end:
            raw = self.fh.readline()
            if not raw:
                return
            self.pos += len(raw)
            yield raw

    def read(self, n: int = -1) -> bytes:
        left = self.end - self.pos
        data = self.fh.read(left if n is None or n < 0 else min(n, left))
        self.pos += len(data)
        return data


_SCAN = 1 << 16


def _line_start(fh: Any, pos: int, limit: int) -> int:
    """The first line start at or after ``pos`` (a position just after ``b"\n"``, or 0), or ``limit`` if there is
    none before ``limit`` (reads at most ``limit - pos + 1`` bytes)."""
    if pos <= 0:
        return 0
    fh.seek(pos - 1)
    at = pos - 1
    while at < limit:
        chunk = fh.read(min(_SCAN, limit - at + 1))
        if not chunk:
            return limit
        found = chunk.find(b"\n")
        if found >= 0:
            return min(at + found + 1, limit)
        at += len(chunk)
    return limit


def _blank_line_start(fh: Any, pos: int, limit: int) -> int:
    """The start of the first blank line (only whitespace, as ``str.strip`` says) at or after ``pos``, or 0 for
    ``pos == 0``, or ``limit`` if there is none before ``limit``."""
    if pos <= 0:
        return 0
    at = _line_start(fh, pos, limit)
    fh.seek(at)
    while at < limit:
        raw = fh.readline(limit - at)
        if not raw:
            return limit
        blank = not raw.decode("utf-8", "replace").strip()
        if not raw.endswith(b"\n") and at + len(raw) >= limit:  # the line runs past limit: no other starts before
            if blank:  # only whitespace so far: read the rest of the line to know
                rest = fh.readline()
                blank = not (raw + rest).decode("utf-8", "replace").strip()
            return at if blank else limit
        if blank:
            return at
        at += len(raw)
    return limit


@dataclass(frozen=True)
class Corpus:
    """A re-iterable stream of documents read from files.

    Parameters
    ----------
    paths : sequence of Path
        The files, read in order (``.gz`` decompressed transparently).
    format : str
        A name of :data:`FORMATS`: ``"text"``, or ``"jsonl"`` (JSON Lines with the document at ``field``).
    field : str, optional
        The JSONL key holding the document's text (required for ``jsonl``).
    unit : {"line", "paragraph", "file"}
        For text: one document per line (the line ending removed), per paragraph (consecutive non-blank lines
        joined by ``"\\n"``; blank lines separate paragraphs) or per file.
    errors : {"strict", "replace"}
        ``strict``: undecodable bytes raise :class:`CorpusError` with the file and byte offset; ``replace``:
        they become U+FFFD.
    skip_empty : bool
        Skip documents that are empty or only whitespace.
    name : str
        A label for messages and reports.
    """

    paths: tuple[Path, ...]
    format: str = "text"
    field: str | None = None
    unit: Literal["line", "paragraph", "file"] = "line"
    errors: Literal["strict", "replace"] = "strict"
    skip_empty: bool = True
    name: str = ""

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise CorpusError(f"corpus format must be one of {', '.join(map(repr, FORMATS))}, got {self.format!r}")
        if self.format == "jsonl" and not self.field:
            raise CorpusError("a jsonl corpus needs `field:` (the key that holds each record's text)")
        if self.unit not in UNITS:
            raise CorpusError(f"corpus unit must be one of {', '.join(map(repr, UNITS))}, got {self.unit!r}")
        if self.errors not in ERROR_MODES:
            raise CorpusError(f"corpus errors must be one of {', '.join(map(repr, ERROR_MODES))}, got {self.errors!r}")
        paths = (self.paths,) if isinstance(self.paths, (str, os.PathLike)) else self.paths
        if not paths:
            raise CorpusError("a corpus needs at least one file")
        object.__setattr__(self, "paths", tuple(Path(p) for p in paths))

    # -- constructors -----------------------------------------------------------------------------------------
    @classmethod
    def from_path(cls, pattern: str | os.PathLike, base: Path | None = None, **kwargs) -> "Corpus":
        """A corpus over a file, a folder (every file below it, sorted) or a glob."""
        kwargs.setdefault("name", os.fspath(pattern))
        return cls(tuple(expand_paths(pattern, base)), **kwargs)

    @classmethod
    def builtin(cls, name: str, **kwargs) -> "Corpus":
        """A bundled text by name (see :func:`builtin_names`)."""
        kwargs.setdefault("name", name)
        return cls((builtin_path(name),), **kwargs)

    @classmethod
    def dataset(cls, name: str, **kwargs) -> "Corpus":
        """A named dataset built by ``tokembed data fetch NAME``.

        Raises
        ------
        DataError
            If the dataset is unknown or not fetched yet (the message gives the command to run).
        """
        from .datasets import dataset_path

        kwargs.setdefault("name", name)
        return cls.from_path(dataset_path(name), **kwargs)

    # -- reading ----------------------------------------------------------------------------------------------
    def __iter__(self) -> Iterator[str]:
        """The documents, read lazily. Raises :class:`~tokembed.errors.CorpusReadError` when a file cannot be read
        (naming the file, and the line or byte offset where it can) or the corpus holds no non-empty document."""
        try:
            yield from self._documents()
        except CorpusReadError:
            raise
        except CorpusError as exc:
            raise CorpusReadError(str(exc)) from None

    def _documents(self) -> Iterator[str]:
        count = 0
        for path in self.paths:
            for doc in self._iter_file(path):
                if self.skip_empty and not doc.strip():
                    continue
                count += 1
                yield doc
        if count == 0:
            raise CorpusError(f"corpus {self.name or self.paths[0]}: empty (no non-empty document in "
                              f"{len(self.paths)} file{'s' if len(self.paths) != 1 else ''})")

    def _iter_file(self, path: Path) -> Iterator[str]:
        try:
            fh = _open_binary(path)
        except FileNotFoundError:
            raise CorpusError(f"{path}: no such file") from None
        except OSError as exc:
            raise CorpusError(f"{path}: cannot open: {exc.strerror or exc}") from None
        with fh:
            try:
                _sniff(path, bytes(_check_start(path, fh.peek(4096)[:4096])))
                yield from FORMATS[self.format].read(self, path, fh)
            except (OSError, EOFError, gzip.BadGzipFile) as exc:
                raise CorpusError(f"{path}: cannot read (broken or truncated file?): {exc}") from None

    # -- partitions -------------------------------------------------------------------------------------------
    def _cut_rule(self) -> str | None:
        """Where the files may be cut into partitions: ``"line"``, ``"paragraph"``, or None (whole files)."""
        fmt = FORMATS[self.format]
        if not fmt.units:
            return "line" if fmt.lines else None
        return {"line": "line", "paragraph": "paragraph"}.get(self.unit)

    def partitions(self, target_bytes: int, min_partitions: int = 1) -> list[Partition]:
        """Cut the corpus into :class:`Partition` descriptions without reading it (only the files' sizes).

        Each file that may be cut (lines, paragraphs, JSONL; not ``unit: file`` nor ``.gz``) is split into
        ``ceil(size / target)`` equal byte ranges, where ``target`` is ``target_bytes``, lowered so that the
        corpus makes at least ``min_partitions`` partitions when its files allow; other files are one partition
        each. Partitions are in corpus order: reading them in order gives the documents of ``iter(corpus)``.

        Raises
        ------
        CorpusError
            If a file is missing, or ``target_bytes`` / ``min_partitions`` is not a positive int.
        """
        for name, value in (("target_bytes", target_bytes), ("min_partitions", min_partitions)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise CorpusError(f"partitions: {name} must be a positive int, got {value!r}")
        rule = self._cut_rule()
        sizes = []
        for path in self.paths:
            try:
                sizes.append(path.stat().st_size)
            except OSError as exc:
                raise CorpusError(f"{path}: cannot read: {exc.strerror or exc}") from None
        cuttable = [rule is not None and p.suffix != ".gz" for p in self.paths]
        total = sum(size for size, cut in zip(sizes, cuttable) if cut)
        whole = sum(1 for cut in cuttable if not cut)
        target = target_bytes
        wanted = min_partitions - whole
        if wanted > 0 and total > 0:
            target = max(1, min(target, -(-total // wanted)))
        out: list[Partition] = []
        for path, size, cut in zip(self.paths, sizes, cuttable):
            if not cut:
                out.append(Partition(len(out), str(path), 0, size, _content_size(path)))
                continue
            k = max(1, -(-size // target))
            bounds = [i * size // k for i in range(k + 1)]
            for a, b in zip(bounds[:-1], bounds[1:]):
                out.append(Partition(len(out), str(path), a, b, b - a))
        return out

    def read_partition(self, part: Partition) -> Iterator[str]:
        """The documents of one partition (see :class:`Partition`), read lazily; empty documents skipped as in
        iteration. A corpus's partitions read in order give the documents of ``iter(corpus)`` (no error is raised
        for an empty partition: an empty corpus is the caller's to report).

        Raises
        ------
        CorpusReadError
            If the file cannot be read, naming it and the byte offset (or the line, counted from the partition's
            first byte when the partition does not start the file).
        """
        try:
            for doc in self._read_range(Path(part.path), part.start, part.end):
                if self.skip_empty and not doc.strip():
                    continue
                yield doc
        except CorpusReadError:
            raise
        except CorpusError as exc:
            raise CorpusReadError(str(exc)) from None

    def _read_range(self, path: Path, start: int, end: int) -> Iterator[str]:
        rule = self._cut_rule()
        if rule is None or path.suffix == ".gz":
            yield from self._iter_file(path)
            return
        try:
            fh = open(path, "rb")
        except FileNotFoundError:
            raise CorpusError(f"{path}: no such file") from None
        except OSError as exc:
            raise CorpusError(f"{path}: cannot open: {exc.strerror or exc}") from None
        with fh:
            try:
                size = os.fstat(fh.fileno()).st_size
                end = min(end, size)
                cut = _line_start if rule == "line" else _blank_line_start
                first = cut(fh, start, end) if start > 0 else 0
                if first >= end and start > 0:
                    return
                last = cut(fh, end, size) if end < size else size
                yield from FORMATS[self.format].read(self, path, _Range(fh, first, last))
            except (OSError, EOFError) as exc:
                raise CorpusError(f"{path}: cannot read: {exc}") from None

    def _lines(self, path: Path, fh) -> Iterator[tuple[int, str]]:
        """``(line number, line)`` of a file (or of a partition's range of it), line endings removed; undecodable
        bytes named by their offset in the file."""
        start = fh.start if isinstance(fh, _Range) else 0
        offset = start
        lineno = 0
        for raw in fh:
            lineno += 1
            if start:
                lineno = _LineFrom(lineno, start)
            elif lineno == 1:
                raw = _check_start(path, raw)
                offset = _BOM_LEN if raw is not None and getattr(raw, "_bom", False) else 0
                raw = bytes(raw)
            try:
                line = raw.decode("utf-8", self.errors)
            except UnicodeDecodeError as exc:
                raise _decode_error(path, offset + exc.start, exc) from None
            offset += len(raw)
            if line.endswith("\n"):
                line = line[:-2] if line.endswith("\r\n") else line[:-1]
            yield lineno, line

    def _decode_whole(self, path: Path, fh) -> str:
        decoder = codecs.getincrementaldecoder("utf-8")(self.errors)
        parts = []
        offset = 0
        first = True
        while True:
            chunk = fh.read(1 << 20)
            if first:
                first = False
                checked = _check_start(path, chunk)
                if getattr(checked, "_bom", False):
                    offset = _BOM_LEN
                chunk = bytes(checked)
            try:
                parts.append(decoder.decode(chunk, final=not chunk))
            except UnicodeDecodeError as exc:
                # the decoder may hold back up to 3 bytes of an unfinished sequence from the previous chunk
                pending = len(exc.object) - len(chunk)
                raise _decode_error(path, offset - pending + exc.start, exc) from None
            offset += len(chunk)
            if not chunk:
                return "".join(parts)

    def _field(self, path: Path, lineno: int, line: str) -> str:
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CorpusError(f"{path}:{lineno}:{exc.colno}: not valid JSON ({exc.msg})") from None
        if not isinstance(record, dict):
            raise CorpusError(f"{path}:{lineno}: the record is a JSON {type(record).__name__}, not an object with a "
                              f"field {self.field!r}")
        if self.field not in record:
            raise CorpusError(f"{path}:{lineno}: record has no field {self.field!r}")
        value = record[self.field]
        if not isinstance(value, str):
            raise CorpusError(f"{path}:{lineno}: field {self.field!r} is {type(value).__name__}, not a string")
        return value

    def head(self, n: int) -> list[str]:
        """The first ``n`` documents (none when ``n <= 0``)."""
        out: list[str] = []
        if n <= 0:
            return out
        for doc in self:
            out.append(doc)
            if len(out) >= n:
                break
        return out

    def size_bytes(self) -> int:
        """Total size of the files' content in bytes, for throughput figures: the size on disk, and for ``.gz``
        the uncompressed size its gzip trailer records (RFC 1952 ISIZE: the last member's size modulo 2**32, exact
        for the usual single-member file under 4 GiB)."""
        return sum(_content_size(p) for p in self.paths)

    def describe(self) -> str:
        return f"{self.name or self.paths[0]} ({len(self.paths)} file{'s' if len(self.paths) != 1 else ''}, {self.format}, {self.unit})"


@dataclass(frozen=True)
class ParallelSet:
    """Aligned texts in several languages: ``texts[lang][i]`` is chapter ``i`` in language ``lang``.

    Parameters
    ----------
    texts : mapping of str to list of str
        Language -> chapters, all languages with the same number of chapters, in the same order.
    reference : str
        The language the premium divides by (it gets premium 1).
    name : str
        A label for reports.

    Raises
    ------
    TokembedError
        If the reference is missing, a language has no chapter, or the chapter counts differ.
    """

    texts: Mapping[str, Sequence[str]]
    reference: str
    name: str = "parallel"

    def __post_init__(self) -> None:
        texts = {str(k): list(v) for k, v in dict(self.texts).items()}
        object.__setattr__(self, "texts", texts)
        if self.reference not in texts:
            raise TokembedError(f"parallel set {self.name!r}: the reference language {self.reference!r} is not one of "
                                f"its languages ({', '.join(texts) or 'none'})")
        counts = {lang: len(chapters) for lang, chapters in texts.items()}
        if not counts[self.reference]:
            raise TokembedError(f"parallel set {self.name!r}: the reference {self.reference!r} has no chapter")
        wrong = {lang: n for lang, n in counts.items() if n != counts[self.reference]}
        if wrong:
            raise TokembedError(
                f"parallel set {self.name!r}: chapters must be aligned, but the reference {self.reference!r} has "
                f"{counts[self.reference]} and " + ", ".join(f"{lang!r} has {n}" for lang, n in wrong.items()))
        for lang, chapters in texts.items():
            for i, text in enumerate(chapters):
                if not isinstance(text, str):
                    raise TokembedError(f"parallel set {self.name!r}: chapter {i} of {lang!r} is "
                                        f"{type(text).__name__}, not str")

    @classmethod
    def coerce(cls, value: Any) -> "ParallelSet":
        """A :class:`ParallelSet` from itself or from ``{"reference": LANG, "texts": {LANG: [...], ...}}``."""
        if isinstance(value, cls):
            return value
        if isinstance(value, Mapping) and "reference" in value and "texts" in value:
            extra = set(value) - {"reference", "texts", "name"}
            if extra:
                raise TokembedError(f"parallel: unknown keys {sorted(extra)}; expected reference, texts, name")
            return cls(value["texts"], value["reference"], value.get("name", "parallel"))
        raise TokembedError('parallel must be a ParallelSet or {"reference": LANG, "texts": {LANG: [chapters]}}')


def spread(total: int, n: int) -> list[int]:
    """``n`` indexes spread evenly over ``range(total)``: ``i * total // n`` for ``i < n`` (all of them when
    ``total <= n``). Increasing and distinct; the first is 0."""
    if total <= n:
        return list(range(total))
    return [i * total // n for i in range(n)]


def open_corpus(spec: Any) -> Any:
    """The documents of a recipe's corpus spec (a :class:`tokembed.recipe.CorpusSpec`): a streamed :class:`Corpus`, or a
    list of the documents that ``max_lines`` (the first N) or ``sample_lines`` (N spread evenly, see :func:`spread`)
    select. The one place a recipe's corpus is opened (``tokembed run`` and ``tokembed compare`` both call it).

    Raises
    ------
    CorpusError, DataError
        If the files cannot be read, or the dataset is not fetched.
    """
    from itertools import islice

    kwargs: dict[str, Any] = {"format": spec.format, "errors": spec.errors, "unit": spec.unit}
    if spec.field is not None:
        kwargs["field"] = spec.field
    if spec.source == "builtin":
        corpus = Corpus.builtin(spec.value, **kwargs)
    elif spec.source == "dataset" and not spec.paths:
        corpus = Corpus.dataset(spec.value, **kwargs)
    else:
        corpus = Corpus(tuple(spec.paths), name=spec.value, **kwargs)
    if spec.max_lines is not None:
        return list(islice(corpus, spec.max_lines))
    if spec.sample_lines is not None:
        total = sum(1 for _ in corpus)
        wanted = spread(total, spec.sample_lines)
        out: list[str] = []
        for i, doc in enumerate(corpus):
            if i == wanted[len(out)]:
                out.append(doc)
                if len(out) == len(wanted):
                    break
        return out
    return corpus


def open_parallel(spec: Any) -> ParallelSet:
    """The chapters of a recipe's parallel-set spec (a :class:`tokembed.recipe.ParallelSpec`) as a
    :class:`ParallelSet`: each chapter file is one document.

    Raises
    ------
    CorpusError
        If a chapter cannot be read or decoded.
    """
    texts = {lang: [read_text(spec.root / lang / ch, spec.errors) for ch in spec.chapters] for lang in spec.languages}
    return ParallelSet(texts, spec.reference, spec.name)
