"""Byte-range partitions of corpus files, cut at line (or paragraph) starts, for counting on an engine."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator



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
        """``FILE, bytes START-END``, or ``FILE, read whole`` for a ``.gz`` file (its offsets in messages are of the
        decompressed text, not of this range)."""
        if self.path.endswith(".gz"):
            return f"{self.path}, read whole"
        return f"{self.path}, bytes {self.start}-{self.end}"


class _LineFrom(int):
    """A line number counted from the start of a partition: shown, in an error message, as the line of the file
    (the newlines before the partition counted then, once; only for an error), or, past
    :data:`COUNT_LINES_UP_TO` bytes, as the line of the partition with the byte it counts from."""

    start: int = 0
    path: str = ""

    def __new__(cls, value: int, start: int, path: str = "") -> "_LineFrom":
        obj = super().__new__(cls, value)
        obj.start, obj.path = start, str(path)
        return obj

    def __str__(self) -> str:
        before = _newlines_before(self.path, self.start) if self.path else None
        if before is None:
            return f"{int(self)} (counted from byte {self.start})"
        return str(before + int(self))

    __format__ = lambda self, spec: format(str(self), spec)  # noqa: E731


#: Bytes of a file read to turn a partition's line number into the file's (error messages only).
COUNT_LINES_UP_TO = 1 << 32


def _newlines_before(path: str, start: int) -> int | None:
    """Newlines in the first ``start`` bytes of ``path`` (None when it cannot be read, or ``start`` is too far)."""
    if start > COUNT_LINES_UP_TO:
        return None
    try:
        with open(path, "rb") as fh:
            n, left = 0, start
            while left > 0:
                block = fh.read(min(left, 1 << 22))
                if not block:
                    break
                n += block.count(b"\n")
                left -= len(block)
            return n
    except OSError:
        return None


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
        if not raw.endswith(b"\n") and at + len(raw) >= limit:  # the line runs past limit: no other starts before
            # read the rest of the line to know: the bytes before limit may end inside a character (a no-break
            # space, C2 A0, cut after C2 decodes as U+FFFD and would make a blank line look like text)
            rest = fh.readline()
            return at if not (raw + rest).decode("utf-8", "replace").strip() else limit
        blank = not raw.decode("utf-8", "replace").strip()
        if blank:
            return at
        at += len(raw)
    return limit
