"""The linear algebra of truncated SVD: the matrix as an operator, the randomized range finder, the sign rule."""

from __future__ import annotations

from typing import Any

import numpy as np

from tokembed.errors import TokembedError


class Operator:
    """A matrix ``A`` (m, n) for the products ``A @ B`` and ``A^T @ B`` with a dense block ``B``.

    A sparse ``A`` is held as CSR arrays of ``A`` and of ``A^T`` (int64 indices, float64 data), multiplied by the
    parallel kernel :func:`~tokembed.plugins.svd._kernels.csr_times_dense`; a dense one is a float64 ndarray
    multiplied by BLAS.
    """

    def __init__(self, matrix: Any, sparse: bool):
        self.sparse = sparse
        self.shape = matrix.shape
        if sparse:
            csr = matrix.tocsr()
            csc = matrix.tocsc()
            self._a = (csr.indptr.astype(np.int64), csr.indices.astype(np.int64), csr.data)
            self._at = (csc.indptr.astype(np.int64), csc.indices.astype(np.int64), csc.data)
            self._csr = csr
        else:
            self._dense = matrix

    @classmethod
    def of(cls, name: str, X: Any, what: str) -> "Operator":
        """``X`` as an operator.

        Raises
        ------
        TokembedError
            If ``X`` is not a 2-D numeric matrix with a row and a column, or holds NaN or infinity.
        """
        import scipy.sparse as sp

        if sp.issparse(X):
            if X.ndim != 2 or X.dtype.kind not in "biuf":
                raise TokembedError(f"{name}: {what} needs a 2-D numeric matrix, got a {X.dtype} sparse matrix")
            matrix = sp.csr_matrix(X, dtype=np.float64)
            matrix.sum_duplicates()
            values = matrix.data
            sparse = True
        else:
            if not hasattr(X, "shape") or isinstance(X, (str, bytes)):
                raise TokembedError(f"{name}: {what} needs a matrix (the output of a vectorizer such as tfidf, bow "
                                    f"or cooccurrence), got {type(X).__name__}")
            arr = np.asarray(X)
            if arr.ndim != 2 or arr.dtype.kind not in "biuf":
                raise TokembedError(f"{name}: {what} needs a 2-D numeric matrix, got shape {arr.shape} of {arr.dtype}")
            matrix = np.ascontiguousarray(arr, dtype=np.float64)
            values = matrix
            sparse = False
        if matrix.shape[0] == 0 or matrix.shape[1] == 0:
            raise TokembedError(f"{name}: {what} got an empty {matrix.shape[0]} x {matrix.shape[1]} matrix")
        if not np.isfinite(values).all():
            raise TokembedError(f"{name}: {what} got a matrix holding NaN or infinity")
        return cls(matrix, sparse)

    def matmul(self, block: np.ndarray) -> np.ndarray:
        """``A @ block`` for a float64 block of shape (n, w); (m, w) float64."""
        return self._product(self._a, block) if self.sparse else self._dense @ block

    def rmatmul(self, block: np.ndarray) -> np.ndarray:
        """``A^T @ block`` for a float64 block of shape (m, w); (n, w) float64."""
        return self._product(self._at, block) if self.sparse else self._dense.T @ block

    @staticmethod
    def _product(arrays: tuple[np.ndarray, np.ndarray, np.ndarray], block: np.ndarray) -> np.ndarray:
        from . import _kernels

        indptr, indices, data = arrays
        block = np.ascontiguousarray(block, dtype=np.float64)
        out = np.empty((indptr.shape[0] - 1, block.shape[1]), dtype=np.float64)
        _kernels.csr_times_dense(indptr, indices, data, block, out)
        return out

    def transposed(self) -> "Operator":
        """``A^T`` as an operator (sharing the arrays)."""
        t = Operator.__new__(Operator)
        t.sparse = self.sparse
        t.shape = (self.shape[1], self.shape[0])
        if self.sparse:
            t._a, t._at, t._csr = self._at, self._a, None
        else:
            t._dense = self._dense.T
        return t

    def linear_operator(self) -> Any:
        """A ``scipy.sparse.linalg.LinearOperator`` doing the same products (for ARPACK)."""
        from scipy.sparse.linalg import LinearOperator

        def mv(v: np.ndarray) -> np.ndarray:
            return self.matmul(np.asarray(v, dtype=np.float64).reshape(-1, 1)).reshape(-1)

        def rmv(v: np.ndarray) -> np.ndarray:
            return self.rmatmul(np.asarray(v, dtype=np.float64).reshape(-1, 1)).reshape(-1)

        def mm(b: np.ndarray) -> np.ndarray:
            return self.matmul(np.asarray(b, dtype=np.float64))

        def rmm(b: np.ndarray) -> np.ndarray:
            return self.rmatmul(np.asarray(b, dtype=np.float64))

        return LinearOperator(self.shape, matvec=mv, rmatvec=rmv, matmat=mm, rmatmat=rmm, dtype=np.float64)

    def toarray(self) -> np.ndarray:
        return self._csr.toarray() if self.sparse else self._dense

    def total_variance(self) -> float:
        """Sum over the columns of their variance (``ddof=0``), computed in two passes for accuracy."""
        m = self.shape[0]
        if not self.sparse:
            return float(self._dense.var(axis=0).sum())
        csr = self._csr
        n = self.shape[1]
        mean = np.bincount(csr.indices, weights=csr.data, minlength=n) / m
        diff = csr.data - mean[csr.indices]
        nnz = np.bincount(csr.indices, minlength=n)
        return float((np.bincount(csr.indices, weights=diff * diff, minlength=n) + (m - nnz) * mean * mean).sum()
                     / m)


def _cholesky_qr(block: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """One Cholesky QR pass: ``R`` from ``R^T R = block^T block``, ``Q = block R^-1``; None when ``R`` is too
    ill-conditioned for the pass to be accurate (condition number above about 1e6)."""
    import scipy.linalg
    from scipy.linalg.blas import dsyrk

    # the upper triangle of block^T block by BLAS syrk on the Fortran view block^T (no copy); numpy's own
    # ``block.T @ block`` takes a path that was ten times slower here with OpenBLAS
    gram = dsyrk(1.0, np.ascontiguousarray(block).T, trans=0, lower=0)
    try:
        r = scipy.linalg.cholesky(gram, lower=False, check_finite=False)
    except np.linalg.LinAlgError:
        return None
    diag = np.abs(np.diag(r))
    if not diag.size or diag.min() <= 1e-6 * diag.max():
        return None
    inverse = scipy.linalg.solve_triangular(r, np.eye(r.shape[0]), lower=False, check_finite=False)
    return block @ inverse, r


def qr(block: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Thin QR of a tall block (m, w), m >= w: Cholesky QR twice ("CholeskyQR2", Fukaya et al. 2014; BLAS-3
    products only, orthonormal to working precision when the block is not ill-conditioned), else Householder QR
    (``numpy.linalg.qr``)."""
    first = _cholesky_qr(block)
    if first is not None:
        second = _cholesky_qr(first[0])
        if second is not None:
            return second[0], second[1] @ first[1]
    return np.linalg.qr(block)


def _orthonormalize(block: np.ndarray, how: str) -> np.ndarray:
    """A basis of the column space of ``block`` (m, w): Householder QR (``"QR"``), pivoted LU (``P L``, ``"LU"``),
    one Cholesky QR pass (``"cholesky"``, Householder QR when that is inaccurate), or ``block`` itself."""
    if how == "none":
        return block
    if how == "LU":
        import scipy.linalg

        return scipy.linalg.lu(block, permute_l=True, check_finite=False)[0]
    if how == "cholesky":
        once = _cholesky_qr(block)
        return np.linalg.qr(block)[0] if once is None else once[0]
    return np.linalg.qr(block)[0]


def randomized_svd(op: Operator, k: int, n_oversamples: int, n_iter: int, normalizer: str,
                   rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``k`` leading singular triplets of ``op`` by Halko, Martinsson & Tropp (2011), algorithms 4.3/4.4.

    ``normalizer`` ``"QR"``, ``"LU"`` or ``"none"`` treats both blocks of a power iteration (``A Z`` and ``A^T Y``)
    as scikit-learn does; ``"cholesky"`` orthonormalises only the block on the side of the smaller dimension (one
    Cholesky QR per iteration: the condition number grows by at most ``(s_1 / s_w)^2`` between two of them, and a
    pass that would be inaccurate falls back to Householder QR). The basis ``Q`` of the sampled range and the
    factorisation of ``Q^T A`` use CholeskyQR2 (:func:`qr`), then the SVD of a (w, w) triangle.

    Returns ``U`` (m, k), ``s`` (k,) decreasing, ``Vt`` (k, n), all float64 (signs not yet fixed).
    """
    m, n = op.shape
    if m < n:  # range-find with the smaller dimension as columns, then swap the factors back
        U, s, Vt = randomized_svd(op.transposed(), k, n_oversamples, n_iter, normalizer, rng)
        return Vt.T, s, U.T
    width = min(k + n_oversamples, n)
    block = op.matmul(rng.standard_normal((n, width)))  # Y = A Omega, (m, width)
    for _ in range(n_iter):
        if normalizer != "cholesky":
            block = _orthonormalize(block, normalizer)
        block = op.matmul(_orthonormalize(op.rmatmul(block), normalizer))
    q = qr(block)[0]  # (m, width): an orthonormal basis of the sampled range
    q_small, r_small = qr(op.rmatmul(q))  # (Q^T A)^T = Q_s R_s, (n, width) and (width, width)
    w, s, xt = np.linalg.svd(r_small)  # R_s = W S X^T, so Q^T A = X S (Q_s W)^T
    U = q @ xt.T[:, :k]
    Vt = (q_small @ w[:, :k]).T
    return U, s[:k], Vt


def dense_svd(op: Operator, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``k`` leading singular triplets from ``numpy.linalg.svd`` of the dense matrix."""
    U, s, Vt = np.linalg.svd(op.toarray(), full_matrices=False)
    return U[:, :k], s[:k], Vt[:k]


def flip_signs(U: np.ndarray, Vt: np.ndarray, rtol: float) -> tuple[np.ndarray, np.ndarray]:
    """Make the largest-magnitude entry of each row of ``Vt`` positive (the first of the near-ties within ``rtol``
    of it), flipping the matching column of ``U``."""
    U = np.array(U, dtype=np.float64, order="C")
    Vt = np.array(Vt, dtype=np.float64, order="C")
    if Vt.size == 0:
        return U, Vt
    mag = np.abs(Vt)
    top = mag.max(axis=1, keepdims=True)
    pick = np.argmax(mag >= top * (1.0 - rtol), axis=1)
    signs = np.sign(Vt[np.arange(Vt.shape[0]), pick])
    signs[signs == 0] = 1.0
    return U * signs, Vt * signs[:, None]
