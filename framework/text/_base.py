"""Shared pieces of the text stages: the error class, spec parsing, code point arrays and lazy character tables.

Everything here is private to :mod:`tokembed.text`; the Numba scanner planned for ``text/_kernels.py`` is meant to
replace :meth:`CharTable.classes` plus :func:`class_runs` without changing the public stage API.
"""

from __future__ import annotations

import difflib
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from tokembed.errors import TokembedError

__all__ = ["TextStageError", "CharTable", "codepoints", "from_codepoints", "class_runs", "parse_spec"]

#: One past the largest Unicode code point: the size of a full lookup table.
N_CODEPOINTS = 0x110000
_UNKNOWN = 255


class TextStageError(TokembedError, ValueError):
    """A normalizer or pre-tokenizer spec is invalid: unknown name, wrong shape, or a bad parameter."""


def unknown_name_error(kind: str, name: object, available: Iterable[str]) -> TextStageError:
    """Build the error for an unknown stage name, with the closest match and every available name."""
    names = sorted(set(available))
    message = f"unknown {kind} {name!r}."
    close = difflib.get_close_matches(str(name), names, n=1) if isinstance(name, str) else []
    if close:
        message += f" Did you mean {close[0]!r}?"
    return TextStageError(f"{message} Available: {', '.join(names)}")


def parse_spec(kind: str, spec: object, available: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """Split a stage spec (a name, or a dict with ``type``) into ``(name, parameters)``.

    Raises
    ------
    TextStageError
        If the spec is neither a string nor a dict with a string ``type``, or if the name is unknown.
    """
    if isinstance(spec, str):
        name, params = spec, {}
    elif isinstance(spec, Mapping):
        params = dict(spec)
        name = params.pop("type", None)
        if not isinstance(name, str):
            raise TextStageError(f"a {kind} spec given as a mapping needs a string 'type' key, got {spec!r}")
    else:
        raise TextStageError(f"a {kind} spec must be a name or a mapping with 'type', got {spec!r}")
    if name not in available:
        raise unknown_name_error(kind, name, available)
    return name, params


def check_no_params(kind: str, name: str, params: Mapping[str, Any]) -> None:
    """Raise :class:`TextStageError` naming the parameters left over after a stage took its own."""
    if params:
        raise TextStageError(f"{kind} {name!r}: unknown parameter(s) {', '.join(sorted(map(repr, params)))}")


#: Unicode PropList.txt ``White_Space`` (unchanged since Unicode 6.3): Rust's ``char::is_whitespace`` and the
#: ``regex`` package's ``\s``. Python's ``str.isspace`` adds U+001C..U+001F.
WHITE_SPACE = frozenset(
    [chr(c) for c in (*range(0x09, 0x0E), 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B))]
    + [chr(c) for c in (0x2028, 0x2029, 0x202F, 0x205F, 0x3000)]
)


def codepoints(text: str) -> np.ndarray:
    """Return the code points of ``text`` as a uint32 array of shape (len(text),).

    Lone surrogates are kept as their code point values (UTF-32 with ``surrogatepass``).
    """
    if text.isascii():
        return np.frombuffer(text.encode("ascii"), dtype=np.uint8).astype(np.uint32)
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4").astype(np.uint32)


def from_codepoints(cps: np.ndarray) -> str:
    """Inverse of :func:`codepoints`: build a str from an integer array of code points."""
    return np.ascontiguousarray(cps, dtype="<u4").tobytes().decode("utf-32-le", "surrogatepass")


class CharTable:
    """A lookup table from code point to a small class number (0..254), filled lazily.

    ``classify(ch)`` is called once per distinct character ever seen (ASCII up front); the result is stored in a
    uint8 array of 0x110000 entries so that classifying a text is one NumPy gather.

    Parameters
    ----------
    classify : callable
        Maps a one-character string to an int in [0, 254]. Must be a pure function of the character.
    """

    __slots__ = ("_classify", "_table", "_lock")

    def __init__(self, classify: Callable[[str], int]):
        self._classify = classify
        self._table: np.ndarray | None = None
        self._lock = threading.Lock()

    def _fill(self, chars: Iterable[str]) -> np.ndarray:
        # Readers look entries up without the lock: an entry is either 255 (they come here) or its final class.
        with self._lock:
            table = self._table
            if table is None:
                table = np.full(N_CODEPOINTS, _UNKNOWN, dtype=np.uint8)
                for i in range(128):
                    table[i] = self._classify(chr(i))
                self._table = table
            for ch in chars:
                table[ord(ch)] = self._classify(ch)
            return table

    def classes(self, text: str) -> np.ndarray:
        """Return the class of every character of ``text``: uint8 array of shape (len(text),)."""
        table = self._table
        if table is None:
            table = self._fill(())
        if text.isascii():
            return table[np.frombuffer(text.encode("ascii"), dtype=np.uint8)]
        cps = codepoints(text)
        out = table[cps]
        unknown = out == _UNKNOWN  # a character not classified yet (no class is _UNKNOWN): far cheaper than set(text)
        if unknown.any():
            table = self._fill([chr(c) for c in np.unique(cps[unknown]).tolist()])
            out = table[cps]
        return out


def class_runs(classes: np.ndarray, isolate: int | None = None) -> np.ndarray:
    """Spans of the maximal runs of equal non-zero class; characters of class ``isolate`` are single pieces.

    Parameters
    ----------
    classes : ndarray of shape (n,), integer
        Class of each character; 0 means "separator, in no piece".
    isolate : int or None
        A class whose characters each form a piece of their own.

    Returns
    -------
    ndarray of shape (k, 2), int64
        ``[start, end)`` code-point spans, in order and non-overlapping.
    """
    n = classes.shape[0]
    if n == 0:
        return np.zeros((0, 2), dtype=np.int64)
    nonzero = classes != 0
    change = classes[1:] != classes[:-1]
    starts = nonzero.copy()
    starts[1:] &= change
    ends = nonzero.copy()
    ends[:-1] &= change
    if isolate is not None:
        single = classes == isolate
        starts |= single
        ends |= single
    out = np.empty((int(np.count_nonzero(starts)), 2), dtype=np.int64)
    out[:, 0] = np.flatnonzero(starts)
    out[:, 1] = np.flatnonzero(ends) + 1
    return out
