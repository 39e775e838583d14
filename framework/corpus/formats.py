"""The corpus formats (:data:`FORMATS`): how a file is read into documents, and the options each format reads."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as _dc_field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping



def _read_text(corpus: Any, path: Path, fh) -> Iterator[str]:
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


def _read_jsonl(corpus: Any, path: Path, fh) -> Iterator[str]:
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

    read: Callable[[Any, Path, Any], Iterator[str]]
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


def implied_format(path: str) -> str:
    """The format a path implies when none is given: the first of :data:`FORMATS` whose ``suffixes`` end it
    (``data.jsonl.gz`` -> ``jsonl``), else ``text``."""
    return next((name for name, f in FORMATS.items() if f.suffixes and str(path).lower().endswith(f.suffixes)),
                "text")


#: What one document of a text file is.
UNITS = ("line", "paragraph", "file")
#: How undecodable bytes are handled.
ERROR_MODES = ("strict", "replace")
