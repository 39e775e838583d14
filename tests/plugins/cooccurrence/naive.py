"""Slow, obviously correct references for the co-occurrence kernels (plain Python, exact fractions).

``glove_vocab`` is the rule of GloVe's ``vocab_count`` (count, drop below ``min_count``, sort by count descending
then by the word, keep ``max_vocab``); ``glove_cooccur`` is the loop of GloVe's ``cooccur``: per line, a history of
the in-vocabulary words only (out-of-vocabulary words are skipped before windowing), each new word paired with the
up to ``window`` words before it with weight 1/distance (or 1), the record (left, right) and, when symmetric, the
record (right, left) as well. Sums are kept as ``Fraction`` so that the reference is exact; the kernel's float64
value must equal ``float(fraction)`` (one correct rounding).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from fractions import Fraction

import numpy as np


def glove_vocab(docs, min_count=1, max_vocab=None, drop=()):
    counts = Counter(t for doc in docs for t in doc if t not in drop)
    words = sorted((w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w))
    if max_vocab is not None:
        words = words[:max_vocab]
    return words, [counts[w] for w in words]


def glove_cooccur(docs, vocab, window, symmetric=True, harmonic=True):
    """{(row, col): Fraction} over ``vocab``'s rows."""
    index = {w: i for i, w in enumerate(vocab)}
    X: dict[tuple[int, int], Fraction] = defaultdict(Fraction)
    for doc in docs:
        history: list[int] = []
        for tok in doc:
            if tok not in index:
                continue
            w2 = index[tok]
            j = len(history)
            for k in range(j - 1, max(j - window, 0) - 1, -1):
                w1 = history[k]
                weight = Fraction(1, j - k) if harmonic else Fraction(1)
                X[(w1, w2)] += weight
                if symmetric:
                    X[(w2, w1)] += weight
            history.append(w2)
    return dict(X)


def to_dense(X, n, dtype=np.float64):
    out = np.zeros((n, n), dtype=np.float64)
    for (i, j), v in X.items():
        out[i, j] = float(v)
    return out.astype(dtype)


def ppmi_dense(M, shift=1.0, cds=0.75):
    """Shifted PPMI with context-distribution smoothing on a dense float64 matrix (Levy et al. 2015), NumPy."""
    M = np.asarray(M, dtype=np.float64)
    p_w = M.sum(axis=1)
    ctx = M.sum(axis=0) ** cds
    out = np.zeros_like(M)
    nz = M > 0
    i, j = np.nonzero(nz)
    out[i, j] = np.log(M[i, j] * ctx.sum() / (p_w[i] * ctx[j])) - np.log(shift)
    return np.maximum(out, 0.0)
