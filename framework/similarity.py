"""Cosine similarity between rows of a matrix, sparse or dense: the nearest documents of a vectorizer's output.

The cosine of rows ``a`` and ``b`` is ``a . b / (|a| |b|)``, computed in float64. An all-zero row (a document none
of whose tokens is in the vocabulary, a TF-IDF row whose terms occur in every document) has no direction: its
cosine with every row, itself included, is 0 (scikit-learn's ``cosine_similarity`` gives the same 0, silently),
and a :class:`ZeroRowWarning` names those rows by index, so a user ranking documents learns why some of them have
no neighbour. Sparse rows (``scipy.sparse``) are multiplied sparse: nothing is densified but the
``(n_queries, n_rows)`` result.

>>> import numpy as np
>>> from tokembed.similarity import nearest_rows
>>> nearest_rows(np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 2.0]]), 0, k=2)
[(1, 0.7071067811865475), (2, 0.0)]
"""

from __future__ import annotations

import warnings
from typing import Any, Sequence

import numpy as np

from .errors import TokembedError

__all__ = ["cosine_similarity", "nearest_rows", "zero_rows", "ZeroRowWarning"]


class ZeroRowWarning(UserWarning):
    """Some rows are all zero: their cosine with every row is 0 (the message lists their indices)."""


def _as_rows(X: Any) -> Any:
    if hasattr(X, "tocsr"):
        return X.tocsr()
    arr = np.asarray(X)
    if arr.ndim != 2:
        raise TokembedError(f"cosine similarity: expected a 2-d matrix (rows x columns), got shape {arr.shape}")
    if arr.dtype.kind not in "fiub":
        raise TokembedError(f"cosine similarity: expected numbers, got {arr.dtype} values")
    return arr


def _norms(X: Any) -> np.ndarray:
    if hasattr(X, "multiply"):
        return np.sqrt(np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel())
    return np.linalg.norm(X.astype(np.float64, copy=False), axis=1)


def zero_rows(X: Any) -> np.ndarray:
    """The indices (int64, ascending) of the rows of ``X`` (sparse or dense, shape (n_rows, n_columns)) whose
    values are all zero."""
    return np.flatnonzero(_norms(_as_rows(X)) == 0).astype(np.int64)


def _warn_zero(zero: np.ndarray, n: int, stacklevel: int) -> None:
    if zero.size:
        shown = ", ".join(map(str, zero[:10].tolist())) + (", ..." if zero.size > 10 else "")
        warnings.warn(f"{zero.size:,} of {n:,} rows are all zero (rows {shown}): their cosine with every row is 0",
                      ZeroRowWarning, stacklevel=stacklevel + 1)


def cosine_similarity(X: Any, rows: Sequence[int] | np.ndarray | None = None) -> np.ndarray:
    """Cosine similarity of rows ``rows`` of ``X`` with every row of ``X``.

    Parameters
    ----------
    X : scipy.sparse matrix or array-like of shape (n_rows, n_columns)
        The rows (documents), any numeric dtype.
    rows : sequence of int, optional
        The query rows; default every row (then the result is ``n_rows x n_rows``: mind the memory).

    Returns
    -------
    ndarray of float64, shape (len(rows), n_rows)
        ``out[i, j]`` is the cosine of row ``rows[i]`` and row ``j``, in [-1, 1]; 0 where either row is all zero.

    Warns
    -----
    ZeroRowWarning
        When rows of ``X`` are all zero, naming them by index.

    Raises
    ------
    TokembedError
        If ``X`` is not a 2-d numeric matrix, or a query row is outside ``[0, n_rows)``.
    """
    return _cosine(X, rows, stacklevel=3)


def _cosine(X: Any, rows: Sequence[int] | np.ndarray | None, stacklevel: int) -> np.ndarray:
    X = _as_rows(X)
    n = X.shape[0]
    query = np.arange(n, dtype=np.int64) if rows is None else np.asarray(rows, dtype=np.int64).reshape(-1)
    bad = (query < 0) | (query >= n)
    if bad.any():
        raise TokembedError(f"cosine similarity: row {int(query[bad][0])} is outside the matrix's {n:,} rows "
                            f"(0 to {n - 1:,})")
    norms = _norms(X)
    zero = np.flatnonzero(norms == 0)
    _warn_zero(zero, n, stacklevel=stacklevel)
    if hasattr(X, "multiply"):
        dots = np.asarray((X[query] @ X.T).toarray(), dtype=np.float64)
    else:
        dense = X.astype(np.float64, copy=False)
        dots = dense[query] @ dense.T
    safe = np.where(norms == 0, 1.0, norms)
    sims = dots / safe[query][:, None] / safe[None, :]
    return np.clip(sims, -1.0, 1.0)  # rounding can leave |cos| a hair above 1


def nearest_rows(X: Any, query: int, k: int = 5) -> list[tuple[int, float]]:
    """The ``k`` rows of ``X`` most cosine-similar to row ``query``, the query itself excluded.

    Parameters
    ----------
    X : scipy.sparse matrix or array-like of shape (n_rows, n_columns)
    query : int
        The row to find neighbours of.
    k : int, default 5
        How many (fewer when ``X`` has fewer other rows).

    Returns
    -------
    list of (int, float)
        ``(row, cosine)``, cosine descending, ties by the lower row index. An all-zero query has cosine 0 with every
        row, so its neighbours are rows ``0, 1, ...`` with cosine 0.

    Warns, Raises
        As :func:`cosine_similarity`.
    """
    sims = _cosine(X, [query], stacklevel=3)[0]
    order = [int(i) for i in np.argsort(-sims, kind="stable") if i != query][:k]
    return [(i, float(sims[i])) for i in order]
