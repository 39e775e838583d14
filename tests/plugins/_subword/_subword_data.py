"""Test data for the subword kernels: word corpora built from the bundled Moby Dick."""

from __future__ import annotations

import collections
import functools
import gzip
import re
from pathlib import Path

import numpy as np

MOBY = Path(__file__).resolve().parents[3] / "framework" / "samples" / "moby-dick.txt.gz"
WORD_RE = re.compile(r"\w+|[^\w\s]+")  # Hugging Face's Whitespace pre-tokenizer


@functools.lru_cache(maxsize=None)
def moby_text() -> str:
    with gzip.open(MOBY, "rt", encoding="utf-8") as f:
        return f.read()


def char_corpus(text):
    """Unique words of ``text`` as lists of character ids numbered in code-point order.

    Returns ``(words, counts int64, base strings)``.
    """
    counter = collections.Counter(WORD_RE.findall(text))
    chars = sorted({ch for w in counter for ch in w})
    cid = {ch: i for i, ch in enumerate(chars)}
    words = [[cid[ch] for ch in w] for w in counter]
    return words, np.array(list(counter.values()), np.int64), chars
