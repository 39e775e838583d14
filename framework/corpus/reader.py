"""The :class:`Corpus`: a re-iterable stream of documents read from files, and opening a recipe's corpus spec."""

from __future__ import annotations

import codecs
import gzip
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Literal, Sequence

from ..errors import CorpusError, CorpusReadError
from .files import (
    _BOM_LEN,
    _check_start,
    _content_size,
    _decode_error,
    _open_binary,
    _sniff,
    builtin_path,
    expand_paths,
)
from .formats import ERROR_MODES, FORMATS, UNITS, implied_format
from .partitions import Partition, _blank_line_start, _LineFrom, _line_start, _Range



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
        ``strict``: undecodable bytes raise :class:`CorpusError` with the file, line and byte offset; ``replace``:
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
        from ..datasets import dataset_path

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
            If the file cannot be read, naming it, the line of the file (counted from the partition's first byte
            past the first 4 GiB) and, for undecodable bytes, the byte offset.
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
        bytes named by their line and their offset in the file."""
        start = fh.start if isinstance(fh, _Range) else 0
        offset = start
        lineno = 0
        for raw in fh:
            lineno += 1
            if start:
                lineno = _LineFrom(lineno, start, str(path))
            elif lineno == 1:
                raw = _check_start(path, raw)
                offset = _BOM_LEN if raw is not None and getattr(raw, "_bom", False) else 0
                raw = bytes(raw)
            if b"\x00" in raw:
                raise _nul_error(path, offset + raw.index(b"\x00"), lineno)
            try:
                line = raw.decode("utf-8", self.errors)
            except UnicodeDecodeError as exc:
                raise _decode_error(path, offset + exc.start, exc, lineno) from None
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
            if b"\x00" in chunk:
                nul = chunk.index(b"\x00")
                raise _nul_error(path, offset + nul, _lines_in(parts) + chunk.count(b"\n", 0, nul) + 1)
            try:
                parts.append(decoder.decode(chunk, final=not chunk))
            except UnicodeDecodeError as exc:
                # the decoder may hold back up to 3 bytes of an unfinished sequence from the previous chunk
                # (never a newline: they start a multi-byte sequence)
                pending = len(exc.object) - len(chunk)
                line = _lines_in(parts) + exc.object.count(b"\n", 0, exc.start) + 1
                raise _decode_error(path, offset - pending + exc.start, exc, line) from None
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
        if "\\u" not in line:  # only a \uXXXX escape can make a lone surrogate: skip the check for most records
            return value
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:  # a lone surrogate written as a JSON escape ("\ud83d"): not text
            if self.errors != "replace":
                code = ord(value[exc.start])
                raise CorpusError(f"{path}:{lineno}: field {self.field!r} holds a lone surrogate (U+{code:04X} at "
                                  f"character {exc.start}), which is not text; fix the file, or set errors: replace "
                                  "(--errors replace for tokembed encode) to read it as U+FFFD") from None
            value = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in value)
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


def _lines_in(parts: list[str]) -> int:
    """Newlines in the text decoded so far: the line of a bad byte is counted only when there is one."""
    return sum(p.count("\n") for p in parts)


def _nul_error(path: Path, offset: int, lineno: int | None) -> CorpusError:
    """A NUL byte inside a corpus: valid UTF-8, so no decoder stops it, but never text (the start of a file is
    sniffed for binary content before reading; this catches a NUL further in)."""
    where = f"{path}:{lineno}" if lineno is not None else str(path)
    return CorpusError(f"{where}: holds a NUL byte at byte offset {offset}; a text corpus never holds NUL (a binary "
                       "file, or text joined with one): remove it first, e.g. `tr -d '\\000' < IN > OUT`")


def spread(total: int, n: int) -> list[int]:
    """``n`` indexes spread evenly over ``range(total)``: ``i * total // n`` for ``i < n`` (all of them when
    ``total <= n``). Increasing and distinct; the first is 0."""
    if total <= n:
        return list(range(total))
    return [i * total // n for i in range(n)]


def read_documents(paths: str | os.PathLike | Sequence[str | os.PathLike], *, format: str | None = None,
                   field: str | None = None, unit: Literal["line", "paragraph", "file"] = "line",
                   errors: Literal["strict", "replace"] = "strict", name: str | None = None) -> Corpus:
    """The documents of corpus files, read as a recipe's ``corpus: {path: ...}`` reads them: the one public reader
    of a corpus path, used by ``tokembed encode``, recipes (through :func:`open_corpus`) and the API
    (``tok.fit(read_documents(path))``), so that the same files and options give the same documents everywhere.

    Documents that are empty or only whitespace are skipped (with ``unit="line"``: blank and whitespace-only lines
    are not documents); the rule is stated in ``docs/recipes.md`` (section "Documents").

    Parameters
    ----------
    paths : path or sequence of paths
        Files, folders (every file below, sorted) or globs, relative to the current directory; ``.gz`` read
        decompressed. Expanded in the order given.
    format : {"text", "jsonl"}, optional
        Default: implied by the first path's suffix (:func:`~tokembed.corpus.formats.implied_format`), as in a
        recipe.
    field, unit, errors
        As :class:`Corpus`.
    name : str, optional
        A label for messages and reports; default the paths as given.

    Returns
    -------
    Corpus
        Re-iterable and streamed: nothing is read until it is iterated.

    Raises
    ------
    CorpusError
        A path that names no file, an unknown format, unit or error mode, or ``jsonl`` without ``field``.
    """
    given = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    if not given:
        raise CorpusError("read_documents: give at least one path")
    files = [f for p in given for f in expand_paths(p)]
    fmt = format if format is not None else implied_format(os.fspath(given[0]))
    name = name if name is not None else ", ".join(os.fspath(p) for p in given)
    return Corpus(tuple(files), format=fmt, field=field, unit=unit, errors=errors, name=name)


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

    if spec.source == "encoded":  # token ids, not text: TokenSequences.open(spec.encoded) reads them
        raise CorpusError(f"{spec.value}: an encoded folder holds token ids, not text to read as documents")
    kwargs: dict[str, Any] = {"format": spec.format, "errors": spec.errors, "unit": spec.unit}
    if spec.field is not None:
        kwargs["field"] = spec.field
    if spec.source == "builtin":
        corpus = Corpus.builtin(spec.value, **kwargs)
    elif spec.source == "dataset" and not spec.paths:
        corpus = Corpus.dataset(spec.value, **kwargs)
    else:  # the files the recipe check expanded, read by the one reader of a corpus path
        corpus = read_documents(spec.paths, name=spec.value, **kwargs)
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
