"""Unicode normalization forms with alignments, and the character classes the stages share.

How the alignment is computed
-----------------------------
``unicodedata.normalize(form, text)`` is split into independent segments. A segment boundary is placed before a
character ``c`` when nothing on either side can interact under the form (UAX #15, "stable code points"):

* the first code point ``d0`` of the full decomposition of ``c`` (NFD for NFC/NFD, NFKD for NFKC/NFKD) has
  canonical combining class 0, so canonical reordering never moves anything across the boundary, and
* for the composing forms (NFC, NFKC), ``d0`` is not the second code point of any canonical pair (nor a Hangul
  medial vowel or final consonant), so it cannot compose with a starter before it; everything after ``d0`` is
  blocked from earlier starters by ``d0`` itself.

Under that rule ``normalize(A + B) == normalize(A) + normalize(B)`` for the segments, so every output character
of a segment is aligned to the segment's whole original span, and the concatenation equals the whole-string
normalization (property-tested). Only segments that contain an "unsafe" character or a character that changes
under the form are normalized one by one; the rest of the text is copied with the one-to-one alignment.
"""

from __future__ import annotations

import functools
import unicodedata

import numpy as np

from tokembed.text._base import CharTable
from tokembed.text.normalized import NormalizedText

__all__ = ["FORMS", "normalize_form", "backward_combiners"]

#: The four normalization forms.
FORMS = ("NFC", "NFD", "NFKC", "NFKD")
_DECOMPOSED = {"NFC": "NFD", "NFD": "NFD", "NFKC": "NFKD", "NFKD": "NFKD"}
_COMPOSES = {"NFC": True, "NFD": False, "NFKC": True, "NFKD": False}


@functools.cache
def backward_combiners() -> frozenset[str]:
    """Characters that can compose with a starter before them in NFC/NFKC.

    These are the second code points of every two-code-point canonical decomposition in ``unicodedata`` (the
    composition candidates; composition exclusions are included, which only makes segments longer), plus the
    Hangul medial vowels U+1161..U+1175 and final consonants U+11A8..U+11C2 that compose algorithmically. Computed
    once per process from the installed ``unicodedata`` (about 0.15 s), so it follows its Unicode version.
    """
    seconds = set()
    for cp, decomposition in enumerate(map(unicodedata.decomposition, map(chr, range(0x110000)))):
        if decomposition and decomposition[0] != "<":
            parts = decomposition.split()
            if len(parts) == 2:
                seconds.add(chr(int(parts[1], 16)))
    seconds.update(map(chr, range(0x1161, 0x1176)))
    seconds.update(map(chr, range(0x11A8, 0x11C3)))
    return frozenset(seconds)


def _unsafe_before(ch: str, form: str) -> bool:
    """True if a segment boundary may NOT be placed before ``ch`` under ``form``."""
    d0 = unicodedata.normalize(_DECOMPOSED[form], ch)[0]
    if unicodedata.combining(d0):
        return True
    return _COMPOSES[form] and d0 in backward_combiners()


_UNSAFE = 1  # a segment boundary may not be placed before this character
_CHANGES = 2  # the character alone changes under the form


def _flag_table(form: str) -> CharTable:
    def flags(ch: str) -> int:
        return (_UNSAFE if _unsafe_before(ch, form) else 0) | (
            _CHANGES if unicodedata.normalize(form, ch) != ch else 0
        )

    return CharTable(flags)


_FLAGS = {form: _flag_table(form) for form in FORMS}


def normalize_form(text: str, form: str) -> NormalizedText:
    """``unicodedata.normalize(form, text)`` with the alignment to ``text``.

    Parameters
    ----------
    text : str
        Any string, lone surrogates included (they are left unchanged, as ``unicodedata`` does).
    form : {"NFC", "NFD", "NFKC", "NFKD"}

    Returns
    -------
    NormalizedText
        ``normalized == unicodedata.normalize(form, text)``; see the module docstring for the alignment.
    """
    if text.isascii() or unicodedata.is_normalized(form, text):
        return NormalizedText.unchanged(text)
    flags = _FLAGS[form].classes(text)
    n = len(text)
    unsafe = (flags & _UNSAFE) != 0
    changes = (flags & _CHANGES) != 0
    is_start = ~unsafe
    is_start[0] = True
    starts = np.flatnonzero(is_start)
    ends = np.empty_like(starts)
    ends[:-1] = starts[1:]
    ends[-1] = n
    work = (ends - starts > 1) | changes[starts]
    seg_starts = starts[work]
    seg_ends = ends[work]

    parts = []
    out_lens = np.empty(seg_starts.shape[0], dtype=np.int64)
    prev = 0
    for k, (s, e) in enumerate(zip(seg_starts.tolist(), seg_ends.tolist())):
        out = unicodedata.normalize(form, text[s:e])
        parts.append(text[prev:s])
        parts.append(out)
        out_lens[k] = len(out)
        prev = e
    parts.append(text[prev:])
    normalized = "".join(parts)

    # Chunks alternate: one-to-one gap, normalized segment, gap, ..., gap (2k + 1 chunks).
    k = seg_starts.shape[0]
    chunk_start = np.empty(2 * k + 1, dtype=np.int64)
    chunk_end = np.empty(2 * k + 1, dtype=np.int64)
    chunk_len = np.empty(2 * k + 1, dtype=np.int64)
    chunk_start[0::2] = np.concatenate(([0], seg_ends))
    chunk_end[0::2] = np.concatenate((seg_starts, [n]))
    chunk_len[0::2] = chunk_end[0::2] - chunk_start[0::2]
    chunk_start[1::2] = seg_starts
    chunk_end[1::2] = seg_ends
    chunk_len[1::2] = out_lens
    one_to_one = np.zeros(2 * k + 1, dtype=bool)
    one_to_one[0::2] = True

    total = int(chunk_len.sum())
    chunk_out_start = np.cumsum(chunk_len) - chunk_len
    rep_start = np.repeat(chunk_start, chunk_len)
    rep_one = np.repeat(one_to_one, chunk_len)
    within = np.arange(total, dtype=np.int64) - np.repeat(chunk_out_start, chunk_len)
    alignments = np.empty((total, 2), dtype=np.int64)
    alignments[:, 0] = rep_start + within * rep_one
    alignments[:, 1] = np.where(rep_one, alignments[:, 0] + 1, np.repeat(chunk_end, chunk_len))
    return NormalizedText(text, normalized, alignments)
