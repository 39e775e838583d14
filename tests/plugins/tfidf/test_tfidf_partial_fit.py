"""partial_fit over chunks equals one fit: vocabulary_, idf_ and the matrix (hypothesis over documents, chunkings
and filters)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pytest

from tokembed.errors import EmptyVocabularyError, ParameterError, TokembedError
from tokembed.plugins.tfidf.onehot import OneHotVectorizer
from tokembed.plugins.tfidf.vectorizer import BagOfWords, TfidfVectorizer
from tokembed.sequences import TokenSequences
from tokembed.testing import sample_corpus

words = st.sampled_from(["a", "b", "c", "d", "e", "ab", "the", "x_y", "!", "Ünï"])
documents = st.lists(st.lists(words, max_size=10).map(" ".join), min_size=1, max_size=12)
filters = st.fixed_dictionaries({
    "min_df": st.one_of(st.integers(1, 3), st.sampled_from([0.0, 0.1, 0.5])),
    "max_df": st.one_of(st.integers(2, 6), st.sampled_from([0.5, 0.9, 1.0])),
    "max_features": st.one_of(st.none(), st.integers(1, 6)),
    "ngram_range": st.sampled_from([(1, 1), (1, 2), (2, 3)]),
    "sublinear_tf": st.booleans(),
    "smooth_idf": st.booleans(),
})


def outcome(make, steps):
    vec = make()
    try:
        for step in steps:
            step(vec)
    except TokembedError as exc:
        return ("error", type(exc).__name__, str(exc))
    return vec


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=documents, cuts=st.lists(st.integers(0, 12), max_size=4), params=filters)
def test_partial_fit_over_chunks_equals_one_fit(docs, cuts, params):
    bounds = sorted({0, len(docs), *[c for c in cuts if c <= len(docs)]})
    chunks = [docs[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    whole = outcome(lambda: TfidfVectorizer(**params), [lambda v: v.fit(docs)])
    # partial_fit defers a selection problem (a later chunk may resolve it) to the use of the vectorizer
    parts = outcome(lambda: TfidfVectorizer(**params),
                    [lambda v, c=c: v.partial_fit(c) for c in chunks] + [lambda v: v.transform(docs[:1])])
    if isinstance(whole, tuple):
        assert parts == whole
        return
    assert not isinstance(parts, tuple), parts
    assert parts.vocabulary_ == whole.vocabulary_ and parts.n_docs_ == whole.n_docs_ == len(docs)
    assert np.array_equal(parts.idf_, whole.idf_)
    assert abs(parts.transform(docs) - whole.transform(docs)).max() == 0


def test_partial_fit_on_token_sequence_chunks_of_the_book():
    docs = sample_corpus(100_000)
    seqs = TokenSequences.from_tokens([d.lower().split() for d in docs])
    for cls, params in ((TfidfVectorizer, {"min_df": 2, "ngram_range": (1, 2)}), (BagOfWords, {"max_df": 0.3}),
                        (OneHotVectorizer, {"max_features": 500})):
        whole = cls(**params).fit(seqs)
        parts = cls(**params)
        for chunk in seqs.chunks(37):
            parts.partial_fit(chunk)
        assert parts.vocabulary_ == whole.vocabulary_
        assert abs(parts.transform(seqs) - whole.transform(seqs)).max() == 0


def test_a_selection_problem_of_early_chunks_is_deferred_and_resolved():
    vec = BagOfWords(min_df=2, max_df=5).partial_fit(["a b"])
    assert not vec.is_fitted()
    with pytest.raises(EmptyVocabularyError, match="min_df=2"):
        vec.transform(["a"])
    vec.partial_fit(["a c"])
    assert vec.vocabulary_ == {"a": 0}
    # with one document seen, max_df=1.0 is 1 document, below min_df=2: deferred as well
    vec = BagOfWords(min_df=2).partial_fit(["a"])
    with pytest.raises(ParameterError, match="min_df=2 .* is above max_df=1.0"):
        vec.get_feature_names_out()


def test_fit_starts_afresh_after_partial_fit():
    vec = BagOfWords().partial_fit(["a b"]).partial_fit(["c"])
    assert list(vec.vocabulary_) == ["a", "b", "c"]
    vec.fit(["d"])
    assert list(vec.vocabulary_) == ["d"] and vec.n_docs_ == 1
    vec.partial_fit(["a"])
    assert list(vec.vocabulary_) == ["a", "d"] and vec.n_docs_ == 2
