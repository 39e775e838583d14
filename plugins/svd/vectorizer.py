"""Truncated SVD (``svd``): latent semantic analysis of a document-term or word-context matrix."""

from __future__ import annotations

import warnings
from typing import Any, ClassVar, Literal

import numpy as np

from tokembed.components import Vectorizer
from tokembed.errors import ParameterError, TokembedError
from tokembed.params import Interval, Options, raise_parameter_errors

from ._linalg import Operator, dense_svd, flip_signs, randomized_svd

__all__ = ["TruncatedSVD", "SIGN_TIE_RTOL"]

#: Entries whose magnitude is within this relative distance of a component's largest are near-ties for the sign
#: rule: the first of them (lowest feature index) is made positive.
SIGN_TIE_RTOL = 1e-6
#: The options of :meth:`TruncatedSVD.word_vectors`, declared as the parameters are.
_WORD_VECTORS_OPTIONS = {"weight": Interval(float, 0, None)}


class TruncatedSVD(Vectorizer):
    """Truncated singular value decomposition ``X ~ U S V^T`` of a matrix, keeping ``n_components`` factors.

    Applied to a TF-IDF (or count) document-term matrix this is latent semantic analysis (LSA, Deerwester et al.
    1990); applied to a word-context co-occurrence matrix, the rows of ``U S^w`` are LSA word vectors
    (:meth:`word_vectors`). As scikit-learn's ``TruncatedSVD``, the matrix is not centred, so sparse input stays
    sparse.

    Algorithms:

    - ``"randomized"``: Halko, Martinsson & Tropp (2011), algorithms 4.3/4.4: a Gaussian test matrix of
      ``n_components + n_oversamples`` columns (drawn from ``numpy.random.default_rng(seed)``), ``n_iter`` power
      iterations with ``power_iteration_normalizer`` between products, an orthonormal basis ``Q`` of the range,
      then the exact SVD of the small ``Q^T X``. When the matrix has fewer rows than columns it works on ``X^T``.
    - ``"arpack"``: ``scipy.sparse.linalg.svds`` (ARPACK's Lanczos on ``X^T X``), start vector from ``seed``,
      tolerance ``tol``; the products run through our kernel as a ``LinearOperator``.
    - ``n_components`` equal to ``min(n_samples, n_features)`` is computed by a dense ``numpy.linalg.svd`` with
      either algorithm (ARPACK cannot give that many; randomized would only approximate what the dense SVD gives
      exactly), with a ``UserWarning`` saying so; ``algorithm_`` records ``"dense"``.

    Sparse products (``X @ B`` and ``X^T @ B``) run on all of Numba's threads (``NUMBA_NUM_THREADS``); dense
    factorisations use the BLAS threads. Everything is computed in float64.

    Signs are deterministic: in each row of ``components_`` the entry of largest magnitude is positive (the same rule
    as scikit-learn's ``svd_flip(u_based_decision=False)``), the matching column of ``U`` flipped with it. Near-ties
    (magnitudes within a relative :data:`SIGN_TIE_RTOL` = 1e-6 of the largest) go to the lowest feature index, so
    a matrix gives the same signs for every algorithm and seed unless two entries of a component differ by less.

    Parameters
    ----------
    n_components : int, default 100
        Number of factors (the LSA convention; scikit-learn's default is 2); ``1 <= n_components <=
        min(n_samples, n_features)``.
    algorithm : {"randomized", "arpack"}, default "randomized"
    n_iter : int, default 5
        Power iterations (randomized only).
    n_oversamples : int, default 10
        Extra test vectors beyond ``n_components`` (randomized only).
    power_iteration_normalizer : {"auto", "QR", "LU", "none"}, default "auto"
        How the block is re-orthonormalised between products (randomized only): Householder QR, pivoted LU (``P L``,
        cheaper, not orthonormal) or nothing. ``"auto"`` is ``"none"`` for ``n_iter <= 2`` and otherwise a
        Cholesky QR (``Y R^-1`` with ``R^T R = Y^T Y``, BLAS-3 only, falling back to Householder QR if ``Y^T Y``
        is not numerically positive definite): the same subspace as QR or LU in fewer flops.
    tol : float, default 0.0
        ARPACK's tolerance (0: machine precision).
    seed : int, default 0
        Seeds the random test matrix (randomized) or ARPACK's start vector.

    Attributes
    ----------
    components_ : ndarray of float64, shape (n_components, n_features)
        ``V^T``: the right singular vectors, one per row.
    singular_values_ : ndarray of float64, shape (n_components,)
        In decreasing order.
    explained_variance_ : ndarray of float64, shape (n_components,)
        Variance (``ddof=0``) of each column of ``transform(X)``.
    explained_variance_ratio_ : ndarray of float64, shape (n_components,)
        ``explained_variance_`` over the total variance of the columns of ``X`` (0 for a matrix of constant
        columns).
    left_singular_vectors_ : ndarray of float32, shape (n_samples, n_components)
        ``U`` of the fitted matrix (kept for :meth:`word_vectors`).
    row_keys_ : list of str or None
        Row names of the fitted matrix when ``fit`` got a ``(matrix, keys)`` pair.
    algorithm_ : str
        What ran: ``"randomized"``, ``"arpack"`` or ``"dense"``.
    n_features_in_ : int

    Source: Halko, Martinsson & Tropp, Finding structure with randomness (SIAM Review 53, 2011); Deerwester et
    al., Indexing by latent semantic analysis (JASIS 41, 1990); scikit-learn ``TruncatedSVD`` (the attributes and
    the sign rule).
    """

    name: ClassVar[str] = "svd"
    input_kind: ClassVar[str] = "matrix"
    param_constraints: ClassVar[dict[str, Any]] = {
        "n_components": Interval(int, 1, None),  # and <= min(n_samples, n_features) of the fitted matrix (fit)
        "algorithm": Options("randomized", "arpack"),
        "n_iter": Interval(int, 0, None),
        "n_oversamples": Interval(int, 0, None),
        "power_iteration_normalizer": Options("auto", "QR", "LU", "none"),
        "tol": Interval(float, 0, None),
        "seed": Interval(int, 0, None),  # numpy.random.default_rng takes any int >= 0
    }

    def __init__(
        self,
        n_components: int = 100,
        algorithm: Literal["randomized", "arpack"] = "randomized",
        n_iter: int = 5,
        n_oversamples: int = 10,
        power_iteration_normalizer: Literal["auto", "QR", "LU", "none"] = "auto",
        tol: float = 0.0,
        seed: int = 0,
    ):
        self.n_components = n_components
        self.algorithm = algorithm
        self.n_iter = n_iter
        self.n_oversamples = n_oversamples
        self.power_iteration_normalizer = power_iteration_normalizer
        self.tol = tol
        self.seed = seed

    # -- input --------------------------------------------------------------------------------------------------
    def _matrix(self, X: Any, what: str) -> tuple[Operator, list[str] | None]:
        """``X`` (a matrix, or a ``(matrix, keys)`` pair) as an :class:`Operator`, and the keys."""
        keys = None
        if isinstance(X, tuple) and len(X) == 2 and not hasattr(X, "shape"):
            X, keys = X
            keys = list(keys)
            if not all(isinstance(k, str) for k in keys):
                raise TokembedError(f"{self.name}: the keys of a (matrix, keys) pair must be str")
        op = Operator.of(self.name, X, what)
        if keys is not None and len(keys) != op.shape[0]:
            raise TokembedError(f"{self.name}: {len(keys)} keys for a matrix of {op.shape[0]} rows")
        return op, keys

    # -- fitting ------------------------------------------------------------------------------------------------
    def fit(self, X: Any, y: Any = None) -> "TruncatedSVD":
        """Compute the truncated SVD of ``X``.

        Parameters
        ----------
        X : scipy.sparse matrix or ndarray of shape (n_samples, n_features), or a pair (matrix, keys)
            The matrix (the previous vectorizer's output: ``tfidf``, ``bow``, ``cooccurrence``); integer values are
            read as float64. ``keys`` (n_samples str, e.g. a co-occurrence matrix's ``get_feature_names_out()``)
            name the rows, for :meth:`word_vectors`.

        Returns
        -------
        self

        Raises
        ------
        ParameterError
            (a ``ValueError``) for an invalid parameter, or ``n_components`` above ``min(n_samples, n_features)``,
            naming the value and the bound.
        TokembedError
            If ``X`` is not a finite numeric 2-D matrix with at least one row and column.

        Warns
        -----
        UserWarning
            When ``n_components == min(n_samples, n_features)``: a dense SVD is used.
        """
        self._fit(X)
        return self

    def fit_transform(self, X: Any, y: Any = None) -> np.ndarray:
        """``fit(X).transform(X)`` (the projection ``X V``, as ``transform`` gives it later)."""
        op = self._fit(X)
        return self._project(op)

    def _fit(self, X: Any) -> Operator:
        self._validate_params()
        self._reset()
        op, keys = self._matrix(X, "fit")
        m, n = op.shape
        k = int(self.n_components)
        bound = min(m, n)
        if k > bound:
            raise ParameterError(self.name, "n_components", f"={k} is above its bound min(n_samples, n_features) = "
                                                            f"{bound} for this {m} x {n} matrix")
        rng = np.random.default_rng(int(self.seed))
        if k == bound:
            warnings.warn(f"{self.name}: n_components={k} equals min(n_samples, n_features) of this {m} x {n} "
                          f"matrix, which {self.algorithm} cannot give exactly; a dense SVD (numpy.linalg.svd) was "
                          "used", UserWarning, stacklevel=3)
            U, s, Vt = dense_svd(op, k)
            self.algorithm_ = "dense"
        elif self.algorithm == "arpack":
            U, s, Vt = self._arpack(op, k, rng)
            self.algorithm_ = "arpack"
        else:
            normalizer = self.power_iteration_normalizer
            if normalizer == "auto":
                normalizer = "none" if self.n_iter <= 2 else "cholesky"
            U, s, Vt = randomized_svd(op, k, int(self.n_oversamples), int(self.n_iter), normalizer, rng)
            self.algorithm_ = "randomized"
        U, Vt = flip_signs(U, Vt, SIGN_TIE_RTOL)
        self.components_ = np.ascontiguousarray(Vt)
        self.singular_values_ = np.ascontiguousarray(s)
        self.left_singular_vectors_ = np.ascontiguousarray(U, dtype=np.float32)
        self.row_keys_ = keys
        self.n_features_in_ = n
        projected = self._project(op)
        self.explained_variance_ = projected.var(axis=0)
        total = op.total_variance()
        self.explained_variance_ratio_ = (self.explained_variance_ / total if total > 0
                                          else np.zeros_like(self.explained_variance_))
        return op

    def _arpack(self, op: Operator, k: int, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
        from scipy.sparse.linalg import svds

        v0 = rng.uniform(-1.0, 1.0, size=min(op.shape))
        U, s, Vt = svds(op.linear_operator(), k=k, tol=float(self.tol), v0=v0, solver="arpack")
        order = np.argsort(-s, kind="stable")
        return U[:, order], s[order], Vt[order]

    # -- applying -----------------------------------------------------------------------------------------------
    def _project(self, op: Operator) -> np.ndarray:
        return op.matmul(np.ascontiguousarray(self.components_.T))

    def transform(self, X: Any) -> np.ndarray:
        """Project ``X`` onto the components: ``X @ components_.T``.

        Parameters
        ----------
        X : scipy.sparse matrix or ndarray of shape (n, n_features), or a (matrix, keys) pair

        Returns
        -------
        ndarray of float64, shape (n, n_components)

        Raises
        ------
        NotFittedError
            Before ``fit``.
        TokembedError
            If ``X`` is not a finite numeric matrix of ``n_features_in_`` columns.
        """
        self._check_is_fitted()
        op, _ = self._matrix(X, "transform")
        if op.shape[1] != self.n_features_in_:
            raise TokembedError(f"{self.name}: transform got a matrix of {op.shape[1]} columns; it was fitted on "
                                f"{self.n_features_in_}")
        return self._project(op)

    def inverse_transform(self, Y: Any) -> np.ndarray:
        """Back to the original space: ``Y @ components_``, ndarray of float64 of shape (n, n_features)."""
        self._check_is_fitted()
        return np.asarray(Y, dtype=np.float64) @ self.components_

    def word_vectors(self, weight: float = 0.5, keys: list[str] | None = None) -> Any:
        """LSA vectors of the fitted matrix's rows: ``U * S**weight``.

        ``weight=1`` gives ``U S`` (the projection of the rows), ``0`` the bare singular vectors, ``0.5`` the
        symmetric split that works best for word similarity (Levy, Goldberg & Dagan 2015, "eigenvalue weighting").

        Parameters
        ----------
        weight : float, default 0.5
            Exponent of the singular values, >= 0.
        keys : list of str, optional
            Names of the rows (one per row of the fitted matrix); default: the keys of the ``(matrix, keys)`` pair
            given to ``fit``.

        Returns
        -------
        KeyedVectors or ndarray of float32, shape (n_samples, n_components)
            A :class:`~tokembed.keyedvectors.KeyedVectors` keyed by the row names when they are known, else the
            array.

        Raises
        ------
        NotFittedError
            Before ``fit``.
        ParameterError
            If ``weight`` is negative or not finite.
        TokembedError
            If ``keys`` does not hold one distinct str per row.
        """
        self._check_is_fitted()
        raise_parameter_errors(self.name, _WORD_VECTORS_OPTIONS, {"weight": weight})
        vectors = (self.left_singular_vectors_.astype(np.float64) * self.singular_values_ ** float(weight))
        vectors = vectors.astype(np.float32)
        keys = self.row_keys_ if keys is None else list(keys)
        if keys is None:
            return vectors
        if len(keys) != vectors.shape[0]:
            raise TokembedError(f"{self.name}: {len(keys)} keys for {vectors.shape[0]} rows")
        from tokembed.keyedvectors import KeyedVectors

        return KeyedVectors.from_arrays(keys, vectors, copy=False)

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """``["svd0", "svd1", ...]``, an ndarray of str (dtype object) of shape (n_components,)."""
        self._check_is_fitted()
        return np.array([f"{self.name}{i}" for i in range(self.components_.shape[0])], dtype=object)

    # -- state --------------------------------------------------------------------------------------------------
    def _get_state(self) -> dict[str, Any]:
        return {
            "components": self.components_,
            "singular_values": self.singular_values_,
            "explained_variance": self.explained_variance_,
            "explained_variance_ratio": self.explained_variance_ratio_,
            "left_singular_vectors": self.left_singular_vectors_,
            "row_keys": self.row_keys_,
            "algorithm_used": self.algorithm_,
            "n_features_in": int(self.n_features_in_),
        }

    def _set_state(self, state: dict[str, Any]) -> None:
        comps = np.asarray(state["components"], dtype=np.float64)
        k = comps.shape[0]
        arrays = {key: np.asarray(state[key], dtype=np.float64)
                  for key in ("singular_values", "explained_variance", "explained_variance_ratio")}
        if comps.ndim != 2 or any(a.shape != (k,) for a in arrays.values()):
            raise ValueError("components and the per-component arrays disagree in shape")
        left = np.asarray(state["left_singular_vectors"], dtype=np.float32)
        keys = state["row_keys"]
        if left.ndim != 2 or left.shape[1] != k or (keys is not None and len(keys) != left.shape[0]):
            raise ValueError("left_singular_vectors / row_keys disagree with the components")
        self.components_ = comps
        self.singular_values_ = arrays["singular_values"]
        self.explained_variance_ = arrays["explained_variance"]
        self.explained_variance_ratio_ = arrays["explained_variance_ratio"]
        self.left_singular_vectors_ = left
        self.row_keys_ = None if keys is None else [str(x) for x in keys]
        self.algorithm_ = str(state["algorithm_used"])
        self.n_features_in_ = int(state["n_features_in"])

    # -- contract suite and warm-up -----------------------------------------------------------------------------
    @classmethod
    def _contract_params(cls) -> dict[str, Any]:
        return {"n_components": 3}

    @classmethod
    def _contract_fit_data(cls) -> Any:
        """Word counts of the sample paragraphs (28 x 60, CSR float64): a small document-term matrix."""
        import scipy.sparse as sp

        from tokembed.testing import sample_corpus

        docs = [p.lower().split() for p in sample_corpus()]
        words = sorted({w for d in docs for w in d})[:60]
        col = {w: i for i, w in enumerate(words)}
        rows, cols = zip(*[(r, col[w]) for r, d in enumerate(docs) for w in d if w in col])
        data = np.ones(len(rows))
        return sp.csr_matrix((data, (rows, cols)), shape=(len(docs), len(words)))

    @classmethod
    def warmup(cls) -> None:
        """Compile (or load from Numba's cache) the product kernel on tiny input."""
        from . import _kernels

        _kernels.csr_times_dense(np.array([0, 1], np.int64), np.array([0], np.int64), np.array([1.0]),
                                 np.ones((1, 2)), np.empty((1, 2)))
