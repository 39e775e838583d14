"""The code point map behind the WordPiece kernels: what BERT's normalizer and pre-tokenizer make of each character.

One :class:`CharMap` per combination of the four normalizer switches, shared by all tokenizers of a process
(:func:`char_map`). Each character is classified once, the first time it is seen, with the framework's own text
stages applied to that one character:

- normalization: ``tokembed.text`` normalizers ``bert_clean`` (``clean_text``), ``strip_accents`` and
  ``lowercase``, in Hugging Face ``BertNormalizer``'s order (clean, strip accents, lowercase);
- class of each output character: the ``bert`` pre-tokenizer's rule, Unicode ``White_Space`` separates,
  BERT's punctuation (``is_bert_punctuation``) and, with ``handle_chinese_chars``, CJK ideographs (``is_cjk``) are
  pieces by themselves, everything else belongs to a word.

The map is filled under a lock; kernels only read entries of characters already filled, so a map may serve
several threads.
"""

from __future__ import annotations

import sys
import threading

import numpy as np

from tokembed.text import build_normalizer
from tokembed.text import WHITE_SPACE
from tokembed.text.pre_tokenizers import is_bert_punctuation, is_cjk


__all__ = ["CharMap", "char_map"]

N_CODEPOINTS = 0x110000


class CharMap:
    """Lazily filled map from input code point to output characters with their classes (layout in ``_kernels``).

    Parameters
    ----------
    lowercase, strip_accents, clean_text, handle_chinese_chars : bool
        The normalizer switches (``strip_accents`` already resolved, never None).

    Attributes
    ----------
    table : ndarray of int32, shape (0x110000,)
    exp_off, exp_vals : ndarray of int32
        Expansions (characters that become several characters).
    max_exp : int
        Most output characters of one input character seen so far (at least 1).
    """

    def __init__(self, lowercase: bool, strip_accents: bool, clean_text: bool, handle_chinese_chars: bool):
        from . import _kernels as K  # imports numba: not at module level, so registering the plugin stays light

        stages = (["bert_clean"] if clean_text else []) + (["strip_accents"] if strip_accents else []) + (
            ["lowercase"] if lowercase else [])
        self._key = (bool(lowercase), bool(strip_accents), bool(clean_text), bool(handle_chinese_chars))
        self._normalizer = build_normalizer(stages)
        self._cjk = bool(handle_chinese_chars)
        self._lock = threading.Lock()
        self.table = np.full(N_CODEPOINTS, K.UNKNOWN, np.int32)
        self._exp_vals: list[int] = []
        self._exp_off: list[int] = [0]
        self.exp_off = np.zeros(1, np.int32)
        self.exp_vals = np.zeros(0, np.int32)
        self.max_exp = 1
        self._fill(np.arange(128, dtype=np.uint32))

    def _class(self, ch: str) -> int:
        from . import _kernels as K

        if ch in WHITE_SPACE:
            return K.CLS_SPACE
        if is_bert_punctuation(ch) or (self._cjk and is_cjk(ch)):
            return K.CLS_ALONE
        return K.CLS_WORD

    def _fill(self, cps: np.ndarray) -> None:
        from . import _kernels as K

        with self._lock:
            entries = []
            grew = False
            for cp in cps.tolist():
                if self.table[cp] != K.UNKNOWN:
                    continue
                out = self._normalizer.normalize_str(chr(cp))
                codes = [ord(c) << 2 | self._class(c) for c in out]
                if not codes:
                    value = K.DROP
                elif len(codes) == 1:
                    value = codes[0]
                else:
                    k = len(self._exp_off) - 1
                    self._exp_vals.extend(codes)
                    self._exp_off.append(len(self._exp_vals))
                    self.max_exp = max(self.max_exp, len(codes))
                    value = K.EXP_BASE - k
                    grew = True
                entries.append((cp, value))
            if grew:  # publish the expansions before the table entries that point to them
                self.exp_vals = np.array(self._exp_vals, np.int32)
                self.exp_off = np.array(self._exp_off, np.int32)
            for cp, value in entries:
                self.table[cp] = value

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """``(table, exp_off, exp_vals, max_exp)``, consistent with each other, for a kernel call."""
        with self._lock:
            return self.table, self.exp_off, self.exp_vals, self.max_exp

    def __reduce__(self) -> tuple:
        """Pickled as its switches: unpickling gives the receiving process's shared map (a tokenizer sent to a
        cluster worker), never a copy of the 5 MB table and its lock."""
        return (char_map, self._key)

    def prepare(self, text: str, cps: np.ndarray) -> None:
        """Make sure every code point of ``cps`` (the code points of ``text``) is in the map."""
        from . import _kernels as K

        if text.isascii():
            return
        unknown = cps[self.table[cps] == K.UNKNOWN]
        if unknown.size:
            self._fill(np.unique(unknown))


_MAPS: dict[tuple[bool, bool, bool, bool], CharMap] = {}
_MAPS_LOCK = threading.Lock()


def char_map(lowercase: bool, strip_accents: bool, clean_text: bool, handle_chinese_chars: bool) -> CharMap:
    """The shared :class:`CharMap` of these switches (built on first use: about 5 MB and a few milliseconds)."""
    key = (bool(lowercase), bool(strip_accents), bool(clean_text), bool(handle_chinese_chars))
    with _MAPS_LOCK:
        found = _MAPS.get(key)
        if found is None:
            found = _MAPS[key] = CharMap(*key)
        return found


_UTF32 = "utf-32-le" if sys.byteorder == "little" else "utf-32-be"


def codepoints(text: str) -> np.ndarray:
    """Code points of ``text`` as a read-only uint32 array in native byte order (lone surrogates kept)."""
    return np.frombuffer(text.encode(_UTF32, "surrogatepass"), dtype=np.uint32)
