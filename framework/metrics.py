"""Tokenizer metrics.

Each metric is computed over a sequence of documents (lines). Definitions (units in brackets):

- ``vocab_size`` [entries]: ``tokenizer.get_vocab_size()``, special tokens included.
- ``documents`` [documents] and ``characters`` [code points]: what was encoded.
- ``tokens`` [tokens]: total number of tokens produced (no special tokens added by a post-processor).
- ``chars_per_token`` [code points / token]: ``characters / tokens``; higher means stronger compression.
- ``fertility`` [tokens / word]: ``tokens / words`` where words are the whitespace-separated words of the text
  (Rust et al. 2021, "How good is your tokenizer?"). Not defined (None) when the text has no word.
- ``unk_rate`` [share of tokens]: tokens equal to the unknown token / ``tokens``.
- ``round_trip`` [share of documents]: documents with ``decode(encode(doc).ids) == doc`` exactly.
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

__all__ = ["tokenizer_metrics"]


def tokenizer_metrics(tokenizer, docs: Iterable[str]) -> dict[str, Any]:
    """Encode every document once and return the metrics described in the module docstring.

    Parameters
    ----------
    tokenizer : tokembed.Tokenizer
        A fitted tokenizer.
    docs : iterable of str
        The documents (for example the lines of a corpus).

    Returns
    -------
    dict
        ``vocab_size``, ``documents``, ``characters``, ``words``, ``tokens``, ``chars_per_token``, ``fertility``,
        ``unk_rate``, ``round_trip`` (floats rounded to 6 decimals, so the file is stable across platforms).
    """
    unk_token = getattr(tokenizer, "unk_token", None)
    unk_id = tokenizer.token_to_id(unk_token) if unk_token is not None else None
    n_docs = n_chars = n_words = n_tokens = n_unk = n_exact = 0
    for doc in docs:
        enc = tokenizer.encode(doc)
        n_docs += 1
        n_chars += len(doc)
        n_words += len(doc.split())
        n_tokens += len(enc)
        if unk_id is not None:
            n_unk += int(np.count_nonzero(enc.ids == unk_id))
        if tokenizer.decode(enc.ids) == doc:
            n_exact += 1

    def ratio(a: int, b: int) -> float | None:
        return round(a / b, 6) if b else None

    return {
        "vocab_size": tokenizer.get_vocab_size(),
        "documents": n_docs,
        "characters": n_chars,
        "words": n_words,
        "tokens": n_tokens,
        "chars_per_token": ratio(n_chars, n_tokens),
        "fertility": ratio(n_tokens, n_words),
        "unk_rate": ratio(n_unk, n_tokens) if unk_id is not None else 0.0,
        "round_trip": ratio(n_exact, n_docs),
    }
