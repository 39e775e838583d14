"""Plain-Python references of the tfidf kernels, written for reading, not speed."""

from __future__ import annotations

from collections import Counter


def ngrams(docs: list[list[int]], min_n: int, max_n: int) -> list[list[tuple[int, ...]]]:
    """Every document's n-grams as tuples of ids, by n then by position."""
    return [[tuple(doc[i:i + n]) for n in range(min_n, max_n + 1) for i in range(len(doc) - n + 1)] for doc in docs]


def count_rows(rows: list[list[int]]) -> tuple[list[int], list[int], list[int]]:
    """CSR (indptr, indices, data) of the per-row counts of the non-negative values, indices sorted."""
    indptr, indices, data = [0], [], []
    for row in rows:
        counts = Counter(c for c in row if c >= 0)
        for c in sorted(counts):
            indices.append(c)
            data.append(counts[c])
        indptr.append(len(indices))
    return indptr, indices, data


def normalize_rows(rows: list[list[float]], l1: bool) -> list[list[float]]:
    """Each row divided by its l1 or l2 norm; a zero row unchanged."""
    out = []
    for row in rows:
        norm = sum(abs(v) for v in row) if l1 else sum(v * v for v in row) ** 0.5
        out.append([v / norm for v in row] if norm else list(row))
    return out
