"""Normalize, pre-tokenize, and map every piece back to the original text."""

from __future__ import annotations

from typing import Any

import numpy as np

from tokembed.text.normalizers import build_normalizer
from tokembed.text.pre_tokenizers import build_pre_tokenizer

__all__ = ["split_text", "split_text_arrays"]


def split_text_arrays(text: str, normalizer: Any = None, pre_tokenizer: Any = None) -> tuple[list[str], np.ndarray]:
    """Pieces of the normalized text and their spans in the ORIGINAL text, as an array.

    Parameters
    ----------
    text : str
        The original text.
    normalizer : Normalizer or spec, optional
        Anything :func:`build_normalizer` accepts; ``None`` leaves the text unchanged.
    pre_tokenizer : PreTokenizer or spec, optional
        Anything :func:`build_pre_tokenizer` accepts; ``None`` keeps the whole text as one piece.

    Returns
    -------
    pieces : list of str
        The pieces, taken from the normalized text.
    offsets : ndarray of shape (len(pieces), 2), int64
        ``[start, end)`` code-point spans in ``text``: the start of the first and the end of the last original
        character each piece came from. Offsets are non-decreasing; pieces cut from one original character that
        normalization expanded (``"⑴"`` -> ``"(1)"``) share that character's span, so offsets may then overlap.

    Raises
    ------
    TextStageError
        If a spec is invalid.
    TypeError
        If ``text`` is not a str.
    """
    norm = build_normalizer(normalizer)
    pre = build_pre_tokenizer(pre_tokenizer)
    normalized = norm.normalize(text)
    spans = pre.spans(normalized.normalized)
    source = normalized.normalized
    pieces = list(map(source.__getitem__, map(slice, spans[:, 0].tolist(), spans[:, 1].tolist())))
    return pieces, normalized.original_spans(spans)


def split_text(text: str, normalizer: Any = None, pre_tokenizer: Any = None) -> list[tuple[str, tuple[int, int]]]:
    """Normalize ``text``, pre-tokenize the normalized text, and map each piece's span back to ``text``.

    Same as :func:`split_text_arrays`, as ``[(piece, (start, end)), ...]``.

    Examples
    --------
    >>> split_text("Ｈｅｌｌｏ, ＷＯＲＬＤ!", ["nfkc", "lowercase"], "word_punct")
    [('hello', (0, 5)), (',', (5, 6)), ('world', (7, 12)), ('!', (12, 13))]
    """
    pieces, offsets = split_text_arrays(text, normalizer, pre_tokenizer)
    return list(zip(pieces, zip(offsets[:, 0].tolist(), offsets[:, 1].tolist())))
