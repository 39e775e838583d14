"""tokembed.similarity: cosine over sparse and dense rows, all-zero rows at cosine 0 and named in a warning."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from tokembed.errors import TokembedError
from tokembed.similarity import ZeroRowWarning, cosine_similarity, nearest_rows, zero_rows

X = np.array([[3.0, 4.0, 0.0],
              [0.0, 0.0, 0.0],   # all zero
              [6.0, 8.0, 0.0],   # row 0 doubled: cosine 1
              [0.0, 0.0, 2.0],   # orthogonal to row 0: cosine 0
              [-3.0, -4.0, 0.0]])  # opposite: cosine -1


def test_cosine_by_hand_dense_and_sparse_agree():
    with pytest.warns(ZeroRowWarning, match=r"1 of 5 rows are all zero \(rows 1\)"):
        dense = cosine_similarity(X, [0, 1])
    with pytest.warns(ZeroRowWarning):
        sparse = cosine_similarity(sp.csr_matrix(X), [0, 1])
    # row 0 = (3, 4, 0), |row 0| = 5: with itself 1, with row 2 (6, 8, 0) 50 / (5 * 10) = 1, with row 3 0, with
    # row 4 -25 / 25 = -1; the zero row 1 has cosine 0 with every row, itself included
    assert dense.tolist() == [[1.0, 0.0, 1.0, 0.0, -1.0], [0.0] * 5]
    assert np.array_equal(dense, sparse) and dense.dtype == np.float64


def test_parity_with_scikit_learn_on_random_rows():
    sklearn = pytest.importorskip("sklearn.metrics.pairwise")
    rng = np.random.default_rng(0)
    dense = rng.normal(size=(40, 30)) * (rng.random((40, 30)) < 0.3)
    dense[7] = 0  # one all-zero row: scikit-learn gives it 0 too
    M = sp.csr_matrix(dense)
    assert zero_rows(M).tolist() == [7]
    with pytest.warns(ZeroRowWarning, match=r"1 of 40 rows are all zero \(rows 7\)"):
        ours = cosine_similarity(M)
    assert np.allclose(ours, sklearn.cosine_similarity(M), atol=1e-12)
    D = rng.normal(size=(20, 5)).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no zero row: no warning
        assert np.allclose(cosine_similarity(D, [3]), sklearn.cosine_similarity(D[3:4], D), atol=1e-6)


def test_nearest_rows_excludes_the_query_and_breaks_ties_by_index():
    with pytest.warns(ZeroRowWarning):
        near = nearest_rows(X, 0, k=3)
    # cosines from row 0: row 2 1.0; rows 1 and 3 0.0 (tie: lower index first); row 4 -1.0
    assert near == [(2, 1.0), (1, 0.0), (3, 0.0)]
    with pytest.warns(ZeroRowWarning):
        assert nearest_rows(X, 1, k=2) == [(0, 0.0), (2, 0.0)]  # a zero query: every cosine 0


def test_zero_rows_and_bad_input():
    assert zero_rows(X).tolist() == [1] and zero_rows(sp.csr_matrix(X)).tolist() == [1]
    with pytest.raises(TokembedError, match=r"row 5 is outside the matrix's 5 rows \(0 to 4\)"):
        cosine_similarity(X, [5])
    with pytest.raises(TokembedError, match="expected a 2-d matrix"):
        cosine_similarity(np.ones(3))
    many = np.zeros((12, 2))
    with pytest.warns(ZeroRowWarning, match=r"12 of 12 rows are all zero \(rows 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, \.\.\.\)"):
        cosine_similarity(many, [0])
