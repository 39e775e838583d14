"""bow and tfidf against scikit-learn's CountVectorizer / TfidfVectorizer on the bundled Moby Dick sample.

Both sides get the same raw paragraphs; ours splits them with the ``sklearn`` pre-tokenizer (scikit-learn's default
``token_pattern``) after ``str.lower``, as scikit-learn does. Vocabulary must be identical and the matrices equal
within 1e-9 in float64.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tokembed.plugins.tfidf.vectorizer import BagOfWords, TfidfVectorizer
from tokembed.testing import sample_corpus

sklearn_text = pytest.importorskip("sklearn.feature_extraction.text")

# 628 paragraphs of Moby Dick, plus an empty document and one without a token of two characters
DOCS = sample_corpus(300_000) + ["", "! a ?"]

WEIGHTING = [dict(norm=n, sublinear_tf=s, smooth_idf=sm, binary=b)
             for n, s, sm, b in itertools.product(["l2", "l1", None], [False, True], [True, False], [False, True])]
FILTERS = [dict(min_df=lo, max_df=hi, ngram_range=ng)
           for lo, hi, ng in itertools.product([1, 2, 0.01], [1.0, 0.5, 40], [(1, 1), (1, 2), (1, 3), (2, 3)])]


def assert_same(ours, ref, ours_X, ref_X):
    assert list(ours.get_feature_names_out()) == list(ref.get_feature_names_out())
    assert ours.vocabulary_ == ref.vocabulary_
    assert ours_X.shape == ref_X.shape and ours_X.dtype == np.float64
    assert abs(ours_X - ref_X).max() <= 1e-9
    assert ours_X.has_sorted_indices and (ours_X.data != 0).all()


@pytest.mark.parametrize("params", WEIGHTING + FILTERS + [dict(WEIGHTING[5], **FILTERS[7])],
                         ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()))
def test_tfidf_equals_scikit_learn(params):
    ref = sklearn_text.TfidfVectorizer(**params)
    ref_X = ref.fit_transform(DOCS)
    ours = TfidfVectorizer(pre_tokenizer="sklearn", **params)
    ours_X = ours.fit_transform(DOCS)
    assert_same(ours, ref, ours_X, ref_X)
    np.testing.assert_allclose(ours.idf_, ref.idf_, rtol=0, atol=1e-12)
    assert abs(ours.transform(DOCS[:50]) - ref.transform(DOCS[:50])).max() <= 1e-9


@pytest.mark.parametrize("params", FILTERS[::3] + [dict(binary=True, ngram_range=(1, 2))],
                         ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()))
def test_counts_equal_scikit_learn(params):
    ref = sklearn_text.CountVectorizer(**params)
    ref_X = ref.fit_transform(DOCS)
    ours = BagOfWords(pre_tokenizer="sklearn", **params)
    ours_X = ours.fit_transform(DOCS)
    assert_same(ours, ref, ours_X, ref_X.astype(np.float64))
    assert (ours.transform(DOCS[:50]) != ref.transform(DOCS[:50])).nnz == 0


def untied_limits(ngram_range, binary=False):
    """max_features values where no two terms tie in corpus frequency at the cut (scikit-learn's unstable sort
    breaks such ties its own way, ours by name); with ``binary`` the frequency is the document frequency, as
    scikit-learn sets the counts to 1 before it ranks."""
    X = sklearn_text.CountVectorizer(ngram_range=ngram_range, binary=binary).fit_transform(DOCS)
    tf = np.sort(np.asarray(X.sum(axis=0)).ravel())[::-1]
    return [k for k in (10, 50, 100, 300, 1000, 3000) if k < tf.size and tf[k - 1] != tf[k]]


@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize("ngram_range", [(1, 1), (1, 2)])
def test_max_features_equals_scikit_learn_away_from_ties(ngram_range, binary):
    limits = untied_limits(ngram_range, binary)
    assert len(limits) >= 2
    for k in limits:
        params = dict(max_features=k, ngram_range=ngram_range, binary=binary)
        ref = sklearn_text.TfidfVectorizer(**params)
        ours = TfidfVectorizer(pre_tokenizer="sklearn", **params)
        assert_same(ours, ref, ours.fit_transform(DOCS), ref.fit_transform(DOCS))
        ref = sklearn_text.CountVectorizer(**params)
        ours = BagOfWords(pre_tokenizer="sklearn", **params)
        assert_same(ours, ref, ours.fit_transform(DOCS), ref.fit_transform(DOCS).astype(np.float64))


@pytest.mark.parametrize("cls", [BagOfWords, TfidfVectorizer])
def test_binary_max_features_ranks_by_document_frequency(cls):
    # a: 3 occurrences in 1 document, b: 3 in 3, c: 2 in 2, d: 2 in 2. By document frequency b (3) comes first,
    # then c and d (2 each; the tie goes to c by name); a (1) is last, although its count ties b's
    docs = [["a", "a", "a", "b"], ["b", "c"], ["c", "d"], ["b", "d"]]
    assert sorted(cls(binary=True, max_features=2).fit(docs).vocabulary_) == ["b", "c"]
    assert sorted(cls(max_features=2).fit(docs).vocabulary_) == ["a", "b"]  # by counts: a and b (3 each)
    ref = getattr(sklearn_text, cls.__name__.replace("BagOfWords", "CountVectorizer"))
    assert sorted(ref(analyzer=lambda d: d, binary=True, max_features=2).fit(docs).vocabulary_) == ["b", "c"]


def test_stop_words_and_fixed_vocabulary_equal_scikit_learn():
    stop = ["the", "of", "and", "a", "to", "in", "whale"]
    for params in (dict(stop_words=stop), dict(stop_words=stop, ngram_range=(1, 2)),
                   dict(vocabulary=["whale", "sea", "ahab", "zzz", "the"]), dict(lowercase=False)):
        ref = sklearn_text.TfidfVectorizer(**params)
        ours = TfidfVectorizer(pre_tokenizer="sklearn", **params)
        assert_same(ours, ref, ours.fit_transform(DOCS), ref.fit_transform(DOCS))


def test_float32_is_the_float64_result_rounded():
    ref = sklearn_text.TfidfVectorizer().fit_transform(DOCS)
    ours = TfidfVectorizer(pre_tokenizer="sklearn", dtype="float32").fit_transform(DOCS)
    assert ours.dtype == np.float32 and abs(ours.astype(np.float64) - ref).max() < 1e-6
