"""Numba kernels of truncated SVD: the sparse-times-dense product, on every core.

scipy.sparse multiplies a CSR matrix by a dense block on one thread; here each output row is one CSR row times the
block, rows shared out over Numba's threads. A row's result is summed in storage order whatever the number of
threads, so the product is the same bit for bit on any machine with the same arithmetic.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(cache=True, parallel=True)
def csr_times_dense(indptr, indices, data, dense, out):
    """``out = A @ dense`` for the CSR matrix ``A``.

    Parameters
    ----------
    indptr : ndarray of int64, shape (n_rows + 1,)
    indices : ndarray of int64, shape (nnz,)
    data : ndarray of float64, shape (nnz,)
    dense : ndarray of float64, shape (n_cols, width), C order
    out : ndarray of float64, shape (n_rows, width), C order
        Overwritten.
    """
    n_rows = indptr.shape[0] - 1
    width = dense.shape[1]
    for i in prange(n_rows):
        row = out[i]
        for c in range(width):
            row[c] = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            a = data[p]
            src = dense[indices[p]]
            for c in range(width):
                row[c] += a * src[c]
