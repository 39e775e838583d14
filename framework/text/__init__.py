"""Text stages shared by all tokenizers: normalizers and pre-tokenizers that keep offsets into the original text.

Stages follow Hugging Face ``tokenizers``' pipeline (normalizer -> pre-tokenizer -> model). Offsets are code-point
(Python ``str``) indices. Pure Python with ``unicodedata``, ``regex`` and NumPy; importing this package does not
import numba. The stage names, and how each stage treats odd input such as lone surrogates (never an error), are
listed in ``docs/text.md``. Invalid specs raise :class:`TextStageError`, a ``TokembedError`` and ``ValueError``.

>>> from tokembed.text import build_normalizer, build_pre_tokenizer, split_text
>>> build_normalizer(["nfd", "strip_accents", "lowercase"]).normalize_str("Crème Brûlée")
'creme brulee'
>>> build_pre_tokenizer("bert").pre_tokenize("Hi, you!")
[('Hi', (0, 2)), (',', (2, 3)), ('you', (4, 7)), ('!', (7, 8))]
"""

from __future__ import annotations

from tokembed.text._base import WHITE_SPACE, TextStageError, from_codepoints
from tokembed.text.normalized import NormalizedText, repair_surrogates
from tokembed.text.normalizers import NORMALIZER_SPEC, NORMALIZERS, Normalizer, build_normalizer
from tokembed.text.pre_tokenizers import PRE_TOKENIZER_SPEC, PRE_TOKENIZERS, PreTokenizer, build_pre_tokenizer
from tokembed.text.split import split_text, split_text_arrays

from tokembed.text import fast as _fast  # noqa: E402,F401 - registers the Numba scanner for long texts (no numba yet)

__all__ = [
    "NormalizedText",
    "Normalizer",
    "PreTokenizer",
    "NORMALIZERS",
    "PRE_TOKENIZERS",
    "NORMALIZER_SPEC",
    "PRE_TOKENIZER_SPEC",
    "TextStageError",
    "WHITE_SPACE",
    "build_normalizer",
    "build_pre_tokenizer",
    "from_codepoints",
    "repair_surrogates",
    "split_text",
    "split_text_arrays",
]
