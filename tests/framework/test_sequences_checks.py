"""The contract checks on what a recipe hands vectorizers and embedders (a tokenizer's TokenSequences), shown to
catch the mistakes a plugin written from whitespace-split strings makes: features named by ids, word vectors kept
somewhere else than ``wv_``, keyed by ids, or lost on load."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from tokembed import Embedder, Vectorizer
from tokembed.keyedvectors import KeyedVectors
from tokembed.sequences import TokenSequences, as_token_sequences
from tokembed.testing import check_component
from tokembed.testing.sequences_checks import (
    check_embedder_word_vectors,
    check_mapped_token_sequences,
    check_vectorizer_token_sequences,
    contract_sequences,
)


def test_contract_sequences_are_a_real_tokenizers_output():
    seqs = contract_sequences()
    assert isinstance(seqs, TokenSequences) and len(seqs) == 28
    # "CHAPTER 1. Loomings.": word_punct splits the periods off; "1" and "Loomings" occur once, so they are <unk>
    assert seqs.tokens(0) == ["CHAPTER", "<unk>", ".", "<unk>", "."]
    # min_frequency=2: the rare words are <unk>, which is a special id, and <pad> never occurs
    unk, pad = seqs.vocab.index("<unk>"), seqs.vocab.index("<pad>")
    assert {unk, pad} <= seqs.special_ids
    assert int(seqs.counts()[unk]) > 0 and int(seqs.counts()[pad]) == 0


# -- toys -------------------------------------------------------------------------------------------------------
class Counts(Vectorizer):
    """Counts per document, features sorted; reads TokenSequences through their token strings."""

    name = "counts-toy"

    def __init__(self, skip_special=False):
        self.skip_special = skip_special

    def _docs(self, X):
        seqs = as_token_sequences(X)
        drop = {seqs.vocab[i] for i in seqs.special_ids} if self.skip_special else set()
        return [[t for t in doc if t not in drop] for doc in seqs.to_tokens()]

    def fit(self, X, y=None):
        self.vocabulary_ = {t: i for i, t in enumerate(sorted({t for d in self._docs(X) for t in d}))}
        return self

    def transform(self, X):
        self._check_is_fitted()
        docs = self._docs(X)
        out = np.zeros((len(docs), len(self.vocabulary_)))
        for r, doc in enumerate(docs):
            for t, n in Counter(doc).items():
                if t in self.vocabulary_:
                    out[r, self.vocabulary_[t]] = n
        return out

    def get_feature_names_out(self):
        self._check_is_fitted()
        return np.array(sorted(self.vocabulary_, key=self.vocabulary_.get), dtype=object)

    def _get_state(self):
        return {"vocabulary": list(self.get_feature_names_out())}

    def _set_state(self, state):
        self.vocabulary_ = {t: i for i, t in enumerate(state["vocabulary"])}


class CountsOfIds(Counts):
    """The mistake of a BM25 written from the old guide: ``for doc in X`` over TokenSequences gives id arrays."""

    name = "ids-toy"

    def _docs(self, X):
        return [[str(t) for t in doc] for doc in X]


class Vectors(Embedder):
    """One vector per token: its count and its length, as ``wv_``."""

    name = "vectors-toy"

    def __init__(self, by_id=False):
        self.by_id = by_id

    def fit(self, X, y=None):
        seqs = as_token_sequences(X)
        counts = seqs.counts()
        ids = [i for i in range(len(seqs.vocab)) if counts[i]]
        keys = [str(i) if self.by_id else seqs.vocab[i] for i in ids]
        self._set_state({"keys": keys, "rows": [[float(counts[i]), float(len(seqs.vocab[i]))] for i in ids]})
        return self

    def _get_state(self):
        return {"keys": list(self.wv_.index_to_key), "rows": self.wv_.vectors.tolist()}

    def _set_state(self, state):
        self.wv_ = KeyedVectors.from_arrays(state["keys"], np.asarray(state["rows"], dtype=np.float32))


class VectorsElsewhere(Vectors):
    name = "elsewhere-toy"

    def _set_state(self, state):
        self.vectors_ = np.asarray(state["rows"], dtype=np.float32)
        self.keys_ = list(state["keys"])

    def _get_state(self):
        return {"keys": self.keys_, "rows": self.vectors_.tolist()}


class VectorsLostOnLoad(Vectors):
    name = "lost-toy"

    def _get_state(self):
        return {"keys": list(self.wv_.index_to_key)[:1], "rows": self.wv_.vectors[:1].tolist()}


class InfiniteVectors(Vectors):
    name = "inf-toy"

    def _set_state(self, state):
        super()._set_state(state)
        self.wv_.vectors = np.full_like(self.wv_.vectors, np.inf)


# -- the checks -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", [Counts, Vectors])
def test_correct_toys_pass_the_whole_suite(cls):
    check_component(cls)


def test_special_tokens_may_be_counted_or_left_out():
    check_vectorizer_token_sequences(Counts)  # <unk> is a feature, as in the token lists
    check_vectorizer_token_sequences(type("Skips", (Counts,), {"name": "skips", "__init__": _skip_init}))


def _skip_init(self, skip_special=True):
    self.skip_special = skip_special


def test_features_named_by_ids_fail():
    with pytest.raises(AssertionError, match=r"names features \['1', '10', .* not tokens of the vocabulary"):
        check_vectorizer_token_sequences(CountsOfIds)


class HashedCounts(Counts):
    """Features are hash buckets, not tokens (as a hashing vectorizer's): the same buckets from token lists and from
    TokenSequences, so the check passes; only ids written as strings mean the vocabulary was lost."""

    name = "hashed-toy"

    def _docs(self, X):
        return [[f"bucket{sum(map(ord, t)) % 7}" for t in doc] for doc in super()._docs(X)]


def test_features_named_otherwise_than_by_tokens_pass_when_both_inputs_agree():
    check_vectorizer_token_sequences(HashedCounts)  # a fresh user's hashing vectorizer failed here


class CountsOfOneLess(Counts):
    """Names right, values wrong: the last token of each document is lost when reading TokenSequences."""

    name = "one-less"

    def _docs(self, X):
        docs = super()._docs(X)
        return [d[:-1] for d in docs] if isinstance(X, TokenSequences) else docs


def test_values_that_differ_from_the_token_lists_fail():
    # document 0 is "CHAPTER <unk> . <unk> .": two periods, one once its last token is lost
    with pytest.raises(AssertionError, match="does not give what it gives on the same documents as token lists: "
                                             r"1\.0 against 2\.0 at row 0, feature '\.'"):
        check_vectorizer_token_sequences(CountsOfOneLess)


def test_rows_must_follow_output_rows():
    tokens = type("PerToken", (Counts,), {"name": "per-token", "output_rows": "tokens"})
    with pytest.raises(AssertionError, match=r"transform gave 28 rows; output_rows = 'tokens' promises \d+"):
        check_vectorizer_token_sequences(tokens)


def test_a_matrix_reader_is_not_fed_sequences():
    # input_kind "matrix": the check does not apply (it would fail: CountsOfIds is wrong on sequences)
    check_vectorizer_token_sequences(type("M", (CountsOfIds,), {"name": "m", "input_kind": "matrix"}))


@pytest.mark.parametrize(("cls", "message"), [
    (VectorsElsewhere, "wv_ is NoneType, expected a tokembed.KeyedVectors"),
    (type("ById", (Vectors,), {"name": "by-id", "__init__": lambda self, by_id=True: setattr(self, "by_id", by_id)}),
     "wv_ has keys .* that are not tokens of the sequences"),
    (VectorsLostOnLoad, "a saved and loaded copy does not have the same wv_"),
    (InfiniteVectors, "not finite"),
])
def test_word_vector_mistakes_fail(cls, message):
    with pytest.raises(AssertionError, match=message):
        check_embedder_word_vectors(cls)


def test_an_embedder_that_does_not_fit_on_tokens_is_skipped():
    check_embedder_word_vectors(type("NoTokens", (VectorsElsewhere,), {"name": "nt", "fits_on_tokens": False}))


class CountsOfRawIds(Counts):
    """The mistake of a fast path that takes a recipe's ids to be int32 in memory and reinterprets their buffer
    (``X.ids.view(np.int32)``, no copy): right for ``from_tokenizer``'s sequences, wrong for a mapped corpus's
    ``uint16`` ids."""

    name = "raw-ids-toy"

    def _docs(self, X):
        if not isinstance(X, TokenSequences):
            return super()._docs(X)
        ids = X.ids.view(np.int32)  # a uint16 buffer read as int32: pairs of ids fused, or a ValueError
        return [[X.vocab[i] for i in ids[a:b].tolist()] for a, b in zip(X.offsets[:-1], X.offsets[1:])]


def test_the_mapped_check_passes_a_component_that_reads_through_as_token_sequences():
    check_mapped_token_sequences(Counts)  # as_token_sequences reads the mapped ids into memory as int32
    check_mapped_token_sequences(Vectors)


def test_the_mapped_check_catches_ids_taken_to_be_int32_in_memory():
    with pytest.raises(AssertionError, match="memory-mapped TokenSequences"):
        check_mapped_token_sequences(CountsOfRawIds)
