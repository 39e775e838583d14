"""The Unicode script of characters, as SentencePiece's trainer compares them (``IsValidSentencePiece``).

A piece may not mix scripts (``split_by_unicode_script``): Hiragana, Katakana and U+30FC (the prolonged sound
mark) count as Han, so Japanese words stay whole; an Inherited character (a combining mark) takes the script of the
character before it; Common characters (punctuation, digits) form a script of their own. The Script property comes
from the ``regex`` package (``\\p{Script=...}``), looked up only for the characters a corpus holds.
"""

from __future__ import annotations

import functools

import numpy as np
import regex

__all__ = ["script_ids", "INHERITED", "ANY"]

#: Script id of an Inherited character (resolved against the character before it).
INHERITED = -1
#: Script id that matches every script (digits with ``split_by_number=False``).
ANY = -2

# used when the regex package does not list its script names
_FALLBACK = ("Common", "Latin", "Greek", "Cyrillic", "Armenian", "Hebrew", "Arabic", "Syriac", "Thaana", "Devanagari",
             "Bengali", "Gurmukhi", "Gujarati", "Oriya", "Tamil", "Telugu", "Kannada", "Malayalam", "Sinhala", "Thai",
             "Lao", "Tibetan", "Myanmar", "Georgian", "Hangul", "Ethiopic", "Cherokee", "Khmer", "Mongolian", "Han",
             "Hiragana", "Katakana", "Bopomofo", "Yi", "Coptic", "Runic", "Ogham", "Braille")


@functools.lru_cache(maxsize=1)
def _script_names() -> tuple[str, ...]:
    try:  # the names regex knows (its property table), one per script
        from regex import _regex_core

        values = _regex_core.PROPERTIES["SCRIPT"][1]
        by_id: dict[int, str] = {}
        for name, value in values.items():
            if value and (value not in by_id or len(name) > len(by_id[value])):
                by_id[value] = name
        names = tuple(by_id[v] for v in sorted(by_id))
        if names:
            return names
    except (ImportError, AttributeError, KeyError, TypeError):
        pass
    return _FALLBACK


def script_ids(codepoints: np.ndarray, split_by_number: bool = True) -> np.ndarray:
    """Script id of each code point (int64 array of the same shape), with SentencePiece's merges applied.

    Ids are stable within one call only. Han, Hiragana, Katakana and U+30FC share one id; Inherited characters get
    :data:`INHERITED`; decimal digits get :data:`ANY` when ``split_by_number`` is False; characters of no script
    (Unknown) get the id of Unknown (a script of their own).
    """
    cps = np.asarray(codepoints, np.int64)
    uniq, inverse = np.unique(cps, return_inverse=True)
    chars = "".join(map(chr, uniq.tolist()))
    ids = np.zeros(uniq.size, np.int64)  # 0: Unknown
    names = _script_names()
    for k, name in enumerate(names, 1):
        upper = name.upper()
        if upper in ("UNKNOWN", "ZZZZ"):
            continue
        try:
            pattern = regex.compile(r"\p{Script=%s}" % name)
        except regex.error:
            continue
        for m in pattern.finditer(chars):
            if upper in ("INHERITED", "ZINH", "QAAI"):
                ids[m.start()] = INHERITED
            elif upper in ("HIRAGANA", "HIRA", "KATAKANA", "KANA", "HAN", "HANI"):
                ids[m.start()] = -3  # resolved below to one id
            else:
                ids[m.start()] = k
    han = len(names) + 1
    ids[ids == -3] = han
    ids[uniq == 0x30FC] = han
    if not split_by_number:
        digit = np.array([c.isdecimal() for c in chars], bool)
        ids[digit] = ANY
    return ids[inverse].reshape(cps.shape)
