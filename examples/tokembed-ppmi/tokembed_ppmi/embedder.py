"""The ``ppmi`` embedder: word vectors from a positive-PMI word-context matrix reduced by a truncated SVD.

Source: O. Levy, Y. Goldberg and I. Dagan, "Improving Distributional Similarity with Lessons Learned from Word
Embeddings", TACL 3, 2015: PPMI with context-distribution smoothing (``cds``, section 3.2) and the SVD vectors
``U_d * S_d ** eig`` (eigenvalue weighting, section 3.3).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from tokembed import CorpusError, Embedder
from tokembed.keyedvectors import KeyedVectors
from tokembed.params import Interval
from tokembed.sequences import TokenSequences, as_token_sequences

__all__ = ["PPMIEmbedder", "cooccurrences", "ppmi"]


def cooccurrences(seqs: TokenSequences, rows: np.ndarray, n_words: int, window: int) -> np.ndarray:
    """Symmetric window co-occurrence counts, float64 (n_words, n_words): ``C[w, c]`` counts the times ``c`` is at
    most ``window`` tokens from ``w`` in one document. ``rows[id]`` is the word row of a token id, or -1 for a token
    that is not a word (rare or special: it still takes its place in the window)."""
    counts = np.zeros((n_words, n_words))
    words = rows[seqs.ids] if seqs.n_tokens else np.zeros(0, np.int64)
    doc = np.repeat(np.arange(len(seqs)), seqs.lengths())
    for d in range(1, window + 1):
        left, right = words[:-d], words[d:]
        keep = (doc[:-d] == doc[d:]) & (left >= 0) & (right >= 0)
        np.add.at(counts, (left[keep], right[keep]), 1.0)
        np.add.at(counts, (right[keep], left[keep]), 1.0)
    return counts


def ppmi(counts: np.ndarray, cds: float = 0.75) -> np.ndarray:
    """``max(0, log(P(w, c) / (P(w) * P_cds(c))))`` of a co-occurrence matrix, with ``P_cds(c)`` proportional to
    ``count(c) ** cds``; 0 where the pair never occurs. float64, the shape of ``counts``."""
    total = counts.sum()
    if total == 0:
        return np.zeros_like(counts)
    p_w = counts.sum(axis=1) / total
    ctx = counts.sum(axis=0) ** cds
    p_c = ctx / ctx.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        pmi = np.log((counts / total) / np.outer(p_w, p_c))
    return np.where(counts > 0, np.maximum(pmi, 0.0), 0.0)


class PPMIEmbedder(Embedder):
    """Word vectors: rows of ``U_d * S_d ** eig`` of the PPMI matrix of window co-occurrences (``d`` =
    ``vector_size``), for the words of at least ``min_count`` occurrences, most frequent first.

    ``X`` is a tokenizer's :class:`~tokembed.sequences.TokenSequences` (what a recipe passes) or token lists. The
    words are token strings; special tokens (``X.special_ids``) are never words. The SVD is dense: meant for
    vocabularies of a few thousand words. Each singular vector's sign is fixed (its largest entry positive), so
    fits are identical run to run.

    Parameters
    ----------
    vector_size : int >= 1, default 50
    window : int >= 1, default 2
        Tokens on each side that count as context.
    min_count : int >= 1, default 2
    cds : float in (0, 1], default 0.75
        Context-distribution smoothing exponent (1: none).
    eig : float in [0, 1], default 0.5
        Eigenvalue weighting exponent (0: ``U_d`` alone).

    Attributes
    ----------
    wv_ : tokembed.keyedvectors.KeyedVectors
        The word vectors, keyed by token string (float32, (n_words, vector_size)); ``evaluate:``, ``nearest:`` and
        the grid of a recipe read it.
    """

    name: ClassVar[str] = "ppmi"
    param_constraints: ClassVar[dict[str, Any]] = {
        "vector_size": Interval(int, 1, None),
        "window": Interval(int, 1, None),
        "min_count": Interval(int, 1, None),
        "cds": Interval(float, 0, 1, closed="right"),
        "eig": Interval(float, 0, 1),
    }

    def __init__(self, vector_size: int = 50, window: int = 2, min_count: int = 2, cds: float = 0.75,
                 eig: float = 0.5):
        self.vector_size = vector_size
        self.window = window
        self.min_count = min_count
        self.cds = cds
        self.eig = eig

    def fit(self, X: Any, y: Any = None) -> "PPMIEmbedder":
        """Count, weigh and reduce.

        Raises
        ------
        ParameterError
            If a parameter breaks its declaration.
        CorpusError
            If fewer words than ``vector_size`` reach ``min_count``.
        TokembedError
            If ``X`` is not token sequences.
        """
        self._validate_params()
        seqs = as_token_sequences(X, self.name)
        counts = seqs.counts()
        counts[list(seqs.special_ids)] = 0
        by_word: dict[str, int] = {}
        for i in np.flatnonzero(counts).tolist():  # two ids with one string are one word
            by_word[seqs.vocab[i]] = by_word.get(seqs.vocab[i], 0) + int(counts[i])
        words = sorted((w for w, n in by_word.items() if n >= self.min_count), key=lambda w: (-by_word[w], w))
        if len(words) < self.vector_size:
            raise CorpusError(f"{self.name}: {len(words)} words occur at least min_count={self.min_count} times, "
                              f"fewer than vector_size={self.vector_size}; lower one of them or give more text")
        index = {w: r for r, w in enumerate(words)}
        rows = np.array([-1 if i in seqs.special_ids else index.get(t, -1) for i, t in enumerate(seqs.vocab)])
        u, s, _ = np.linalg.svd(ppmi(cooccurrences(seqs, rows, len(words), self.window), self.cds))
        u = u[:, :self.vector_size]
        u *= np.where(u[np.abs(u).argmax(axis=0), np.arange(u.shape[1])] < 0, -1.0, 1.0)
        self._set_state({"words": words, "vectors": (u * s[:self.vector_size] ** self.eig).astype(np.float32)})
        return self

    @classmethod
    def _contract_params(cls) -> dict[str, Any]:
        """Small sizes for tokembed's contract suite: a few hundred words, 8 dimensions."""
        return {"vector_size": 8, "min_count": 3}

    def _get_state(self) -> dict[str, Any]:
        return {"words": list(self.wv_.index_to_key), "vectors": self.wv_.vectors}

    def _set_state(self, state: dict[str, Any]) -> None:
        self.wv_ = KeyedVectors.from_arrays(list(state["words"]), np.asarray(state["vectors"], dtype=np.float32))
