"""Truncated SVD: the issue's cases, parity with scikit-learn's TruncatedSVD, the sign rule, LSA word vectors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from tokembed.errors import NotFittedError, ParameterError, TokembedError
from tokembed.keyedvectors import KeyedVectors
from tokembed.plugins.svd import _kernels
from tokembed.plugins.svd._linalg import flip_signs, qr
from tokembed.plugins.svd.vectorizer import TruncatedSVD
from tokembed.plugins.tfidf.vectorizer import TfidfVectorizer
from tokembed.plugins.word.tokenizer import WordTokenizer
from tokembed.sequences import TokenSequences
from tokembed.testing import sample_corpus

FRUIT = ["red apple", "green apple", "red grape"]


@pytest.fixture(scope="module")
def fruit():
    return TfidfVectorizer(smooth_idf=True, norm="l2").fit_transform(FRUIT)


@pytest.fixture(scope="module")
def book():
    """TF-IDF of 628 Moby Dick paragraphs (scikit-learn's tokens), about 628 x 8,900."""
    return TfidfVectorizer(pre_tokenizer="sklearn").fit_transform(sample_corpus(300_000))


# -- the cases ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("algorithm", ["randomized", "arpack"])
def test_fruit_singular_values_and_bounds(fruit, algorithm):
    assert fruit.shape == (3, 4)  # apple, grape, green, red
    svd = TruncatedSVD(n_components=2, algorithm=algorithm).fit(fruit)
    np.testing.assert_allclose(svd.singular_values_, [1.267023, 1.0], atol=1e-6)
    with pytest.warns(UserWarning, match="dense SVD"):
        full = TruncatedSVD(n_components=3, algorithm=algorithm).fit(fruit)
    assert full.algorithm_ == "dense"
    np.testing.assert_allclose(full.singular_values_, [1.267023, 1.0, 0.628213], atol=1e-6)
    rebuilt = full.inverse_transform(full.transform(fruit))
    assert np.linalg.norm(rebuilt - fruit.toarray()) < 1e-8
    for k in (4, 100):
        with pytest.raises(ParameterError, match=f"n_components={k} is above .* = 3") as info:
            TruncatedSVD(n_components=k, algorithm=algorithm).fit(fruit)
        assert isinstance(info.value, ValueError) and info.value.param == "n_components"


# -- parity with scikit-learn ---------------------------------------------------------------------------------------
def test_arpack_equals_scikit_learn(book):
    sk = pytest.importorskip("sklearn.decomposition")
    ref = sk.TruncatedSVD(n_components=20, algorithm="arpack", random_state=0).fit(book)
    ours = TruncatedSVD(n_components=20, algorithm="arpack", seed=0).fit(book)
    np.testing.assert_allclose(ours.singular_values_, ref.singular_values_, rtol=1e-6)
    np.testing.assert_allclose(ours.explained_variance_, ref.explained_variance_, rtol=1e-6)
    np.testing.assert_allclose(ours.explained_variance_ratio_, ref.explained_variance_ratio_, rtol=1e-6)
    # scikit-learn's sign rule is ours (largest |entry| of each component positive): equal, not just up to sign
    np.testing.assert_allclose(ours.components_, ref.components_, atol=1e-6)
    np.testing.assert_allclose(ours.transform(book[:40]), ref.transform(book[:40]), atol=1e-6)


@pytest.mark.parametrize("normalizer", ["auto", "QR", "LU", "none"])
def test_randomized_with_seven_iterations_is_close_to_scikit_learn(book, normalizer):
    sk = pytest.importorskip("sklearn.decomposition")
    ref = sk.TruncatedSVD(n_components=50, n_iter=7, random_state=0).fit(book)
    exact = sk.TruncatedSVD(n_components=50, algorithm="arpack", random_state=0).fit(book)
    ours = TruncatedSVD(n_components=50, n_iter=7, power_iteration_normalizer=normalizer, seed=0).fit(book)
    np.testing.assert_allclose(ours.singular_values_[:10], ref.singular_values_[:10], rtol=1e-4)
    np.testing.assert_allclose(ours.singular_values_[:10], exact.singular_values_[:10], rtol=1e-4)
    assert ours.explained_variance_ratio_.sum() == pytest.approx(ref.explained_variance_ratio_.sum(), rel=0.01)
    # the leading components agree with the exact ones up to our sign rule, i.e. equal
    np.testing.assert_allclose(ours.components_[:5], exact.components_[:5], atol=1e-3)


def test_same_matrix_same_signs_for_every_algorithm_and_seed(book):
    runs = [TruncatedSVD(n_components=8, algorithm="arpack", seed=s).fit(book) for s in (0, 1)]
    runs += [TruncatedSVD(n_components=8, n_iter=10, seed=s).fit(book) for s in (0, 3)]
    for run in runs[1:]:  # the same components (to the accuracy of each method), with the same signs
        cosines = np.sum(run.components_[:4] * runs[0].components_[:4], axis=1)
        assert (cosines > 0.999).all(), cosines
    for run in runs:
        comps = run.components_
        top = np.argmax(np.abs(comps), axis=1)
        assert (comps[np.arange(comps.shape[0]), top] > 0).all()


def test_sign_rule_breaks_near_ties_by_the_lowest_index():
    U = np.eye(2)
    Vt = np.array([[0.6, -0.6 * (1 + 1e-9), 0.1], [-0.5, 0.7, 0.1]])
    U2, Vt2 = flip_signs(U, Vt, 1e-6)
    # row 0: |-0.6000000006| is the largest, but 0.6 at index 0 is a near-tie and comes first: kept positive
    assert Vt2[0].tolist() == Vt[0].tolist() and U2[:, 0].tolist() == [1, 0]
    # without the tolerance the strict largest decides: row 0 flips
    assert flip_signs(U, Vt, 0.0)[1][0, 1] > 0
    assert Vt2[1, 1] > 0 and U2[:, 1].tolist() == [0, 1]


# -- word vectors, input forms, pipeline --------------------------------------------------------------------------
def test_word_vectors_from_a_keyed_matrix():
    rng = np.random.default_rng(1)
    counts = sp.random(30, 30, density=0.3, random_state=rng, format="csr")
    counts = counts + counts.T  # a symmetric "co-occurrence" matrix
    keys = [f"w{i}" for i in range(30)]
    svd = TruncatedSVD(n_components=5, algorithm="arpack").fit((counts, keys))
    kv = svd.word_vectors()
    assert isinstance(kv, KeyedVectors) and kv.index_to_key == keys and kv.vectors.shape == (30, 5)
    U = svd.left_singular_vectors_.astype(np.float64)
    np.testing.assert_allclose(kv.vectors, U * np.sqrt(svd.singular_values_), rtol=1e-5)
    # weight 1: U S, which is the projection of the rows X V for an exact SVD
    np.testing.assert_allclose(svd.word_vectors(weight=1).vectors, svd.transform(counts), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(svd.word_vectors(weight=0).vectors, U, rtol=1e-6)
    bare = TruncatedSVD(n_components=5).fit(counts)
    assert isinstance(bare.word_vectors(), np.ndarray) and bare.word_vectors().dtype == np.float32
    assert bare.word_vectors(keys=keys).index_to_key == keys
    with pytest.raises(ParameterError, match="weight"):
        bare.word_vectors(weight=-1)
    with pytest.raises(TokembedError, match="3 keys for 30 rows"):
        bare.word_vectors(keys=keys[:3])
    with pytest.raises(TokembedError, match="keys for a matrix of 30 rows"):
        TruncatedSVD(n_components=5).fit((counts, keys[:2]))


def test_tfidf_then_svd_as_a_recipe_pipeline_calls_them():
    docs = sample_corpus(100_000)
    tok = WordTokenizer(normalizer="lowercase").fit(docs)
    seqs = TokenSequences.from_tokenizer(tok, docs)
    X = TfidfVectorizer(sublinear_tf=True).fit(seqs).transform(seqs)
    svd = TruncatedSVD(n_components=10, seed=0)
    Y = svd.fit_transform(X)
    assert Y.shape == (len(docs), 10) and Y.dtype == np.float64
    np.testing.assert_allclose(svd.transform(X), Y, rtol=0, atol=0)
    assert list(svd.get_feature_names_out()) == [f"svd{i}" for i in range(10)]


def test_dense_and_integer_input_equal_sparse_float(book):
    sub = book[:100, :300]
    counts = (sub * 100).astype(np.int64)
    a = TruncatedSVD(n_components=5, seed=0).fit(counts)
    b = TruncatedSVD(n_components=5, seed=0).fit(counts.toarray())
    c = TruncatedSVD(n_components=5, seed=0).fit(counts.astype(np.float64))
    np.testing.assert_allclose(a.components_, b.components_, atol=1e-10)
    np.testing.assert_array_equal(a.components_, c.components_)


def test_wide_matrix_is_range_found_on_its_transpose(book):
    wide = book[:60]
    assert wide.shape[0] < wide.shape[1]
    ours = TruncatedSVD(n_components=10, n_iter=7).fit(wide)
    tall = TruncatedSVD(n_components=10, n_iter=7).fit(wide.T.tocsr())
    np.testing.assert_array_equal(ours.singular_values_, tall.singular_values_)  # the same computation
    # a flat spectrum: with a test block as wide as the 60 rows the range is all of it, and the values exact
    close = TruncatedSVD(n_components=10, n_iter=7, n_oversamples=50).fit(wide)
    s = np.linalg.svd(wide.toarray(), compute_uv=False)[:10]
    np.testing.assert_allclose(close.singular_values_, s, rtol=1e-9)


def test_thread_count_does_not_change_the_result(book):
    import numba

    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = TruncatedSVD(n_components=10).fit(book)
        numba.set_num_threads(before)
        many = TruncatedSVD(n_components=10).fit(book)
    finally:
        numba.set_num_threads(before)
    assert np.array_equal(one.components_, many.components_)


@pytest.mark.parametrize("bad, message", [
    ([["a", "b"]], "needs a matrix"),
    (sp.csr_matrix((0, 3)), "empty 0 x 3"),
    (np.array([[1.0, np.nan]]), "NaN"),
    (np.array(["a", "b"]), "2-D numeric"),
])
def test_input_problems(bad, message):
    with pytest.raises(TokembedError, match=message):
        TruncatedSVD(n_components=1).fit(bad)


def test_transform_checks_columns_and_fitting(fruit):
    with pytest.raises(NotFittedError):
        TruncatedSVD(n_components=1).transform(fruit)
    svd = TruncatedSVD(n_components=1).fit(fruit)
    with pytest.raises(TokembedError, match="5 columns; it was fitted on 4"):
        svd.transform(np.ones((2, 5)))


@pytest.mark.parametrize(("params", "param"), [
    ({"n_components": 0}, "n_components"), ({"algorithm": "lanczos"}, "algorithm"), ({"n_iter": -1}, "n_iter"),
    ({"power_iteration_normalizer": "qr"}, "power_iteration_normalizer"), ({"tol": -1.0}, "tol"),
    ({"n_oversamples": 1.5}, "n_oversamples"),
])
def test_parameter_problems(params, param):
    assert [p for p, _ in TruncatedSVD.check_params(params)] == [param]


def test_two_bad_values_are_both_reported(fruit):
    bad = {"algorithm": "lanczos", "tol": float("nan")}
    assert TruncatedSVD.check_params(bad) == [
        ("algorithm", "svd: algorithm must be one of 'randomized', 'arpack', got 'lanczos'"),
        ("tol", "svd: tol must be a number >= 0, got nan"),
    ]
    with pytest.raises(ParameterError) as info:  # fit: every problem in one error
        TruncatedSVD(n_components=1, **bad).fit(fruit)
    assert [e.param for e in info.value.errors] == ["algorithm", "tol"]


def test_word_vectors_weight_is_checked_by_its_declaration(fruit):
    svd = TruncatedSVD(n_components=1).fit(fruit)
    for weight in (-1, float("inf"), True):
        with pytest.raises(ParameterError) as info:
            svd.word_vectors(weight=weight)
        assert info.value.param == "weight" and str(info.value).startswith(
            f"svd: weight must be a number >= 0, got {weight!r}")


def test_clone_and_a_pipeline_after_tfidf(fruit):
    sklearn_base = pytest.importorskip("sklearn.base")
    from sklearn.pipeline import Pipeline

    svd = TruncatedSVD(n_components=2, algorithm="arpack", seed=3).fit(fruit)
    copy = sklearn_base.clone(svd)
    assert type(copy) is TruncatedSVD and not copy.is_fitted()
    assert copy.get_params() == {**TruncatedSVD().get_params(), "n_components": 2, "algorithm": "arpack", "seed": 3}
    # raw text -> tfidf -> svd in one Pipeline: the same rows as the two steps run by hand
    piped = Pipeline([("tfidf", TfidfVectorizer()), ("svd", copy)]).fit_transform(FRUIT)
    np.testing.assert_array_equal(piped, TruncatedSVD(n_components=2, algorithm="arpack", seed=3).fit_transform(fruit))
    # the Pipeline's feature names: tfidf's terms go in as input_features, the components come out
    pipe = Pipeline([("tfidf", TfidfVectorizer()), ("svd", TruncatedSVD(n_components=2, seed=3))]).fit(FRUIT)
    assert pipe.get_feature_names_out().tolist() == ["svd0", "svd1"]


# -- kernels and helpers ---------------------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(m=st.integers(1, 8), n=st.integers(1, 8), w=st.integers(1, 4), density=st.floats(0, 1), seed=st.integers(0, 99))
def test_csr_times_dense_equals_plain_loops(m, n, w, density, seed):
    rng = np.random.default_rng(seed)
    A = sp.random(m, n, density=density, random_state=rng, format="csr")
    B = rng.standard_normal((n, w))
    out = np.empty((m, w))
    _kernels.csr_times_dense(A.indptr.astype(np.int64), A.indices.astype(np.int64), A.data, B, out)
    expected = [[sum(A.data[p] * B[A.indices[p], c] for p in range(A.indptr[i], A.indptr[i + 1]))
                 for c in range(w)] for i in range(m)]
    np.testing.assert_allclose(out, np.array(expected).reshape(m, w), rtol=1e-12, atol=1e-12)


def test_cholesky_qr2_is_orthonormal_and_falls_back_when_ill_conditioned():
    rng = np.random.default_rng(0)
    Y = rng.standard_normal((500, 20))
    Q, R = qr(Y)
    np.testing.assert_allclose(Q.T @ Q, np.eye(20), atol=1e-12)
    np.testing.assert_allclose(Q @ R, Y, atol=1e-10)
    Y[:, 1] = Y[:, 0] * (1 + 1e-12)  # rank-deficient: Householder QR, still a valid factorisation
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Q, R = qr(Y)
    np.testing.assert_allclose(Q @ R, Y, atol=1e-10)
