"""The contract suite (tokembed.testing): run over every registered component, and shown to catch broken ones.

The first test is the point of the module: every installed component, third-party ones included, passes every
check. The rest proves each check can fail: a component that breaks one rule fails that check with a message
naming the rule, while a correct toy vectorizer and embedder (none is built in yet) pass the whole suite.
"""

from __future__ import annotations

import json
import random
from collections import Counter

import numpy as np
import pytest
import scipy.sparse

import tokembed
from tokembed import Embedder, Vectorizer
from tokembed.errors import TokembedError
from tokembed.plugins.char.tokenizer import CharTokenizer
from tokembed.keyedvectors import KeyedVectors
from tokembed.sequences import as_token_sequences
from tokembed.testing import (
    check_allowed_special,
    check_component,
    check_deterministic,
    check_fit_returns_self,
    check_get_params_rebuilds,
    check_init_stores_params,
    check_load_rejects_broken,
    check_name_and_kind,
    check_not_fitted,
    check_save_load_roundtrip,
    check_tokenizer_encoding,
    check_tokenizer_streams_corpus,
    check_tokenizer_vocab,
    check_vectorizer_output,
    component_id,
    contract_fit_data,
    contract_inputs,
    contract_params,
    iter_checks,
    parametrize_with_checks,
    registered_components,
    sample_corpus,
    sample_texts,
)


# -- every registered component ---------------------------------------------------------------------------------
@parametrize_with_checks(registered_components())
def test_registered_component_meets_the_contract(component, check):
    check(component)


def test_registered_components_cover_builtins_and_the_example_plugin():
    ids = [component_id(c) for c in registered_components()]
    assert "tokenizer:char" in ids
    assert "tokenizer:reverse" in ids, "pip install -e examples/tokembed-reverse (the Makefile's test target does)"
    assert registered_components("tokenizer") == [c for c in registered_components() if c.kind == "tokenizer"]
    assert ids == sorted(ids, key=lambda i: (["tokenizer", "vectorizer", "embedder"].index(i.split(":")[0]), i))


def test_registered_components_takes_a_registry():
    reg = tokembed.build_registry(blocked=["char"])
    assert CharTokenizer not in registered_components(registry=reg)


def test_parametrize_with_checks_ids():
    mark = parametrize_with_checks([CharTokenizer])
    assert mark.args[0] == ("component", "check")
    ids = [p.id for p in mark.args[1]]
    assert ids[0] == "tokenizer:char-check_name_and_kind"
    assert "tokenizer:char-check_allowed_special" in ids
    assert len(ids) == len(list(iter_checks(CharTokenizer))) == 16


def test_checks_per_kind():
    common = 11  # check_partial_counts included: it passes by itself for a component without partial counts
    assert len(list(iter_checks(CountToy))) == common + 3  # output, then TokenSequences in memory and mapped
    assert len(list(iter_checks(RandomVectorsToy))) == common + 2  # wv_ from TokenSequences, then mapped
    assert check_vectorizer_output in iter_checks(CountToy)
    assert check_allowed_special not in iter_checks(CountToy)


# -- the data the suite feeds -----------------------------------------------------------------------------------
def test_sample_corpus_is_the_start_of_moby_dick():
    docs = sample_corpus()
    assert docs[0] == "CHAPTER 1. Loomings."
    assert docs[1].startswith("Call me Ishmael. Some years ago—never mind how long precisely—having\n")
    assert len(docs) == 28
    assert sum(len(d) for d in docs) <= 20_000
    assert all(d.strip() and "\n\n" not in d for d in docs)
    assert sample_corpus(2_000)[0] == docs[0] and len(sample_corpus(2_000)) < len(docs)
    docs.append("mutating the returned list does not touch the cache")
    assert len(sample_corpus()) == 28


def test_sample_texts_hold_the_edge_cases():
    texts = sample_texts()
    assert texts[:3] == sample_corpus()[:3]
    edges = ["", " ", "  leading and trailing  ", "tabs\tand\nnewlines\r\n\n", "日本語のテキスト", "a" * 300]
    for edge in edges:
        assert edge in texts
    assert any("<unk>" in t for t in texts)


def test_default_fit_data_and_inputs_per_kind():
    assert contract_fit_data(CharTokenizer) == sample_corpus()
    assert contract_inputs(CharTokenizer) == sample_texts()
    words = contract_fit_data(CountToy)
    assert words[1][:4] == ["Call", "me", "Ishmael.", "Some"]
    assert contract_inputs(CountToy) == words
    assert contract_inputs(CountToy, [["a"]]) == [["a"]]
    assert contract_inputs(RandomVectorsToy) == ["the", "sea", "and"]
    assert contract_inputs(NoInputsEmbedderToy) is None
    assert contract_params(CharTokenizer) == {}


# -- correct toys of the kinds nothing built in covers yet ------------------------------------------------------
class CountToy(Vectorizer):
    """Token counts per document over a sorted vocabulary; sparse output. Reads ``TokenSequences`` (a recipe's
    input) and token lists alike, through ``as_token_sequences``."""

    name = "count-toy"

    def __init__(self, min_count=1):
        self.min_count = min_count

    def fit(self, X, y=None):
        X = as_token_sequences(X).to_tokens()
        counts = Counter(t for doc in X for t in doc)
        keys = sorted(t for t, n in counts.items() if n >= self.min_count)
        self.vocabulary_ = {t: i for i, t in enumerate(keys)}
        return self

    def transform(self, X):
        self._check_is_fitted()
        X = as_token_sequences(X).to_tokens()
        out = np.zeros((len(X), len(self.vocabulary_)))
        for r, doc in enumerate(X):
            for t in doc:
                if t in self.vocabulary_:
                    out[r, self.vocabulary_[t]] += 1
        return scipy.sparse.csr_matrix(out)

    def get_feature_names_out(self):
        self._check_is_fitted()
        return np.array(sorted(self.vocabulary_, key=self.vocabulary_.get), dtype=object)

    def _get_state(self):
        return {"vocabulary": sorted(self.vocabulary_, key=self.vocabulary_.get)}

    def _set_state(self, state):
        self.vocabulary_ = {t: i for i, t in enumerate(state["vocabulary"])}


class RandomVectorsToy(Embedder):
    """A seeded random float32 vector per word, as ``wv_`` (KeyedVectors by token string); ``embed(words)`` ->
    (n, vector_size)."""

    name = "random-toy"

    def __init__(self, vector_size=4, seed=0):
        self.vector_size = vector_size
        self.seed = seed

    def _rng(self):
        return np.random.default_rng(self.seed)

    def fit(self, X, y=None):
        self.index_to_key_ = sorted({t for doc in as_token_sequences(X).to_tokens() for t in doc})
        self.vectors_ = self._rng().standard_normal((len(self.index_to_key_), self.vector_size)).astype(np.float32)
        self.wv_ = KeyedVectors.from_arrays(self.index_to_key_, self.vectors_)
        return self

    def embed(self, words):
        self._check_is_fitted()
        index = {k: i for i, k in enumerate(self.index_to_key_)}
        return self.vectors_[[index[w] for w in words]]

    @classmethod
    def _contract_inputs(cls):
        return ["the", "sea", "and"]

    def _get_state(self):
        return {"keys": self.index_to_key_, "vectors": self.vectors_.tolist()}

    def _set_state(self, state):
        self.index_to_key_ = list(state["keys"])
        self.vectors_ = np.asarray(state["vectors"], dtype=np.float32)
        self.wv_ = KeyedVectors.from_arrays(self.index_to_key_, self.vectors_)


class NoInputsEmbedderToy(RandomVectorsToy):
    name = "no-inputs-toy"
    _contract_inputs = None


@pytest.mark.parametrize("cls", [CharTokenizer, CountToy, RandomVectorsToy, NoInputsEmbedderToy], ids=component_id)
def test_correct_components_pass(cls):
    check_component(cls)


# -- hooks ----------------------------------------------------------------------------------------------------------
class NeedsParamToy(RandomVectorsToy):
    name = "needs-param-toy"

    def __init__(self, vector_size, seed=0):  # no default: the suite must be told a value
        self.vector_size = vector_size
        self.seed = seed


class NeedsParamWithHookToy(NeedsParamToy):
    name = "needs-param-hook-toy"

    @classmethod
    def _contract_params(cls):
        return {"vector_size": 3}


class MatrixInputToy(CountToy):
    """Fits on a dense matrix only (as truncated SVD would); provides its data through the hook."""

    name = "matrix-toy"
    input_kind = "matrix"

    def fit(self, X, y=None):
        if not isinstance(X, np.ndarray):
            raise TokembedError("matrix-toy: expects an ndarray")
        self.vocabulary_ = {f"col{j}": j for j in range(X.shape[1])}
        return self

    def transform(self, X):
        self._check_is_fitted()
        return np.asarray(X, dtype=np.float64) * 2.0

    @classmethod
    def _contract_fit_data(cls):
        return np.arange(12, dtype=np.float64).reshape(4, 3)


def test_required_parameter_without_the_hook_fails_with_advice():
    with pytest.raises(AssertionError, match=r"_contract_params\(\)"):
        check_fit_returns_self(NeedsParamToy)


def test_contract_params_hook_supplies_parameters():
    check_component(NeedsParamWithHookToy)
    assert contract_params(NeedsParamWithHookToy) == {"vector_size": 3}


def test_contract_fit_data_hook_supplies_data():
    check_component(MatrixInputToy)
    with pytest.raises(AssertionError, match="fit on the contract data raised TokembedError: matrix-toy: expects"):
        check_fit_returns_self(MatrixInputToy, fit_data=[["a"]])


def test_contract_params_hook_must_return_a_dict():
    class BadHook(CharTokenizer):
        @classmethod
        def _contract_params(cls):
            return [("vocab_size", 3)]

    with pytest.raises(AssertionError, match="_contract_params\\(\\) must return a dict"):
        check_fit_returns_self(BadHook)


def test_contract_params_hook_must_name_real_parameters():
    class Typo(CharTokenizer):
        @classmethod
        def _contract_params(cls):
            return {"vocab_sise": 30}

    with pytest.raises(AssertionError, match=r"_contract_params\(\) sets \['vocab_sise'\], which are not parameters"):
        check_fit_returns_self(Typo)


def test_fit_data_argument_overrides_and_generators_are_reusable():
    docs = (d for d in ["abc", "abd"])  # one-shot: the suite materialises it once and reuses the list
    check_component(CharTokenizer, fit_data=docs, inputs=["ab", "zz"])


# -- each check catches its broken component ------------------------------------------------------------------------
class BadName(CharTokenizer):
    name = "two words"


class NoKind(tokembed.Component):
    name = "nokind"


class CopiesParam(CharTokenizer):
    def __init__(self, vocab_size=None, min_frequency=1, unk_token="<unk>", pad_token="<pad>", special_tokens=(),
                 seed=0):
        super().__init__(vocab_size, min_frequency, unk_token, pad_token, list(special_tokens), seed)


class ValidatesInInit(CharTokenizer):
    def __init__(self, vocab_size=None, min_frequency=1, unk_token="<unk>", pad_token="<pad>", special_tokens=(),
                 seed=0):
        if not isinstance(min_frequency, int):
            raise TypeError("min_frequency must be an int")
        super().__init__(vocab_size, min_frequency, unk_token, pad_token, special_tokens, seed)


class ExtraAttribute(CharTokenizer):
    def __init__(self, vocab_size=None, min_frequency=1, unk_token="<unk>", pad_token="<pad>", special_tokens=(),
                 seed=0):
        super().__init__(vocab_size, min_frequency, unk_token, pad_token, special_tokens, seed)
        self.lowercase = False


class KwargsInit(CharTokenizer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)


class FitChangesParams(CharTokenizer):
    def fit(self, corpus, y=None):
        super().fit(corpus)
        self.vocab_size = len(self.vocab_)
        return self


class UncheckedVocab(CharTokenizer):
    def get_vocab(self):
        return dict(self.vocab_)  # AttributeError before fit instead of NotFittedError


class FitReturnsNone(CharTokenizer):
    def fit(self, corpus, y=None):
        super().fit(corpus)


class FitSetsNothing(CharTokenizer):
    def fit(self, corpus, y=None):
        super().fit(corpus)
        self._vocab, self._counts = self.__dict__.pop("vocab_"), self.__dict__.pop("char_counts_")
        self._specials_ = self.__dict__.pop("special_tokens_")
        return self

    def is_fitted(self):  # would be true through the attributes above otherwise
        return any(k.endswith("_") and not k.startswith("_") for k in vars(self))


class LosesOrderOnSave(CharTokenizer):
    def _get_state(self):
        state = super()._get_state()
        order = sorted(range(len(state["chars"])), key=lambda i: state["chars"][i])
        return {**state, "chars": [state["chars"][i] for i in order],
                "char_counts": [state["char_counts"][i] for i in order]}


class SavesDifferentlyAfterLoad(CharTokenizer):
    def _set_state(self, state):
        super()._set_state(state)
        self.char_counts_ = {c: 0 for c in self.char_counts_}  # counts lost: outputs equal, artifact not


class LenientLoad(CharTokenizer):
    @classmethod
    def load(cls, path):
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)  # JSONDecodeError on a truncated file instead of ArtifactError
        return cls.from_dict(data, source=str(path))


class ShufflesTies(CharTokenizer):
    def fit(self, corpus, y=None):
        super().fit(corpus)
        specials, chars = self.special_tokens_, list(self.char_counts_)
        random.shuffle(chars)  # global RNG: ignores the seed
        self._set_vocab(specials, chars)
        return self


class AccumulatesAcrossFits(CharTokenizer):
    def fit(self, corpus, y=None):
        docs = list(corpus)
        self._seen = getattr(self, "_seen", []) + docs  # state left from the previous fit
        return super().fit(self._seen)


class BadOffsets(CharTokenizer):
    def _encode_text(self, text):
        enc = super()._encode_text(text)
        enc.offsets = enc.offsets + 1
        return enc


class PackedSpansOffByOne(CharTokenizer):
    def encode_ids(self, texts, *, spans=False):
        out = super().encode_ids(texts, spans=spans)
        return (out[0], out[1], out[2] + 1) if spans else out


class PackedIdsWithoutSpans(CharTokenizer):
    def encode_ids(self, texts):  # written before spans=... existed
        return super().encode_ids(texts)


class TokensDisagree(CharTokenizer):
    def _encode_text(self, text):
        enc = super()._encode_text(text)
        enc.tokens = [t.upper() for t in enc.tokens]
        return enc


class DecodeCrashes(CharTokenizer):
    def decode(self, ids, skip_special_tokens=False):
        return super().decode(list(ids)[:-1] + [10**9]) if len(ids) else ""


class BatchDecodeDropsTheLastCharacter(CharTokenizer):
    def decode_batch(self, ids_list, skip_special_tokens=False):
        return [text[:-1] for text in super().decode_batch(ids_list, skip_special_tokens)]


class AcceptsBytes(CharTokenizer):
    def encode(self, text, *, allowed_special=()):
        if isinstance(text, bytes):
            text = text.decode()
        return super().encode(text, allowed_special=allowed_special)


class HoleInVocab(CharTokenizer):
    def get_vocab(self):
        vocab = super().get_vocab()
        last = max(vocab, key=vocab.get)
        vocab[last] += 1
        return vocab


class SpecialsNotInVocab(CharTokenizer):
    def fit(self, corpus, y=None):
        super().fit(corpus)
        self.special_tokens_ = self.special_tokens_ + ["<mask>"]
        return self


class ListOnlyFit(CharTokenizer):
    def fit(self, corpus, y=None):
        if len(corpus) == 0:  # TypeError on a one-shot iterator
            raise TokembedError("empty")
        return super().fit(corpus)


class ReadsCorpusTwice(CharTokenizer):
    def fit(self, corpus, y=None):
        n_docs = sum(1 for _ in corpus)  # a first pass empties an iterator
        self.n_docs_ = n_docs
        return super().fit(corpus if isinstance(corpus, list) else ["x"])


class InjectsSpecials(CharTokenizer):
    def encode(self, text, *, allowed_special=()):
        return super().encode(text, allowed_special="all")  # typed "<pad>" becomes the control token


class IgnoresAllowedSpecial(CharTokenizer):
    def encode(self, text, *, allowed_special=()):
        return super().encode(text)


class TooFewFeatureNames(CountToy):
    def get_feature_names_out(self):
        return super().get_feature_names_out()[:-1]


class IntegerOutput(CountToy):
    def transform(self, X):
        return super().transform(X).astype(np.int64)


class RowPerToken(CountToy):
    def transform(self, X):
        return super().transform([[t] for doc in X for t in doc])


class UnseededEmbedder(RandomVectorsToy):
    def _rng(self):
        return np.random.default_rng()


class EmbedderWithoutNotFitted(RandomVectorsToy):
    def embed(self, words):
        index = {k: i for i, k in enumerate(self.index_to_key_)}
        return self.vectors_[[index[w] for w in words]]


BROKEN = [
    (check_name_and_kind, BadName, "name is 'two words'"),
    (check_name_and_kind, NoKind, "kind is ''"),
    (check_init_stores_params, CopiesParam, "__init__ changes parameter 'special_tokens'"),
    (check_init_stores_params, ValidatesInInit, "must only store its arguments .* raised TypeError"),
    (check_init_stores_params, ExtraAttribute, "sets attributes that are not parameters: lowercase"),
    (check_init_stores_params, KwargsInit, r"must list its parameters explicitly, not \*kwargs"),
    (check_get_params_rebuilds, FitChangesParams, "fit changed the parameters"),
    (check_not_fitted, UncheckedVocab, r"get_vocab\(\) before fit raised AttributeError"),
    (check_not_fitted, EmbedderWithoutNotFitted, r"embed\(inputs\) before fit raised AttributeError"),
    (check_fit_returns_self, FitReturnsNone, "fit returned None, not self"),
    (check_fit_returns_self, FitSetsNothing, "no learned attribute"),
    (check_save_load_roundtrip, LosesOrderOnSave, "outputs differ after save/load: item 0"),
    (check_save_load_roundtrip, SavesDifferentlyAfterLoad, "different bytes"),
    (check_load_rejects_broken, LenientLoad, "truncated artifact raised JSONDecodeError"),
    (check_deterministic, ShufflesTies, "two fits with {'seed': 0} give different artifacts"),
    (check_deterministic, AccumulatesAcrossFits, "fitting the same instance a second time"),
    (check_deterministic, UnseededEmbedder, "two fits with {'seed': 0} give different artifacts"),
    (check_tokenizer_encoding, BadOffsets, "offsets must satisfy"),
    (check_tokenizer_encoding, TokensDisagree, r"!= id_to_token\(ids\)"),
    (check_tokenizer_encoding, PackedSpansOffByOne, r"encode_ids\(texts, spans=True\) gives other spans"),
    (check_tokenizer_encoding, PackedIdsWithoutSpans, r"encode_ids\(texts, spans=True\) raised TypeError"),
    (check_tokenizer_encoding, DecodeCrashes, "decode of .* raised TokembedError"),
    (check_tokenizer_encoding, AcceptsBytes, "did not raise TypeError"),
    (check_tokenizer_encoding, BatchDecodeDropsTheLastCharacter,
     r"decode_batch\(\.\.\., skip_special_tokens=False\)\[\d+\] differs from decode of sequence"),
    (check_tokenizer_vocab, HoleInVocab, "not exactly 0 .. get_vocab_size"),
    (check_tokenizer_vocab, SpecialsNotInVocab, "special_tokens_ must be a list of tokens of the vocabulary"),
    (check_tokenizer_streams_corpus, ListOnlyFit, r"fit\(iter\(corpus\)\) raised TypeError"),
    (check_tokenizer_streams_corpus, ReadsCorpusTwice, r"fit\(iter\(corpus\)\) learns something else"),
    (check_allowed_special, InjectsSpecials, "turned the typed text '<pad>' into the special token"),
    (check_allowed_special, IgnoresAllowedSpecial, r"allowed_special=\['<pad>'\]\) has no token '<pad>'"),
    (check_vectorizer_output, TooFewFeatureNames, r"get_feature_names_out\(\) has shape"),
    (check_vectorizer_output, IntegerOutput, "expected a float matrix"),
    (check_vectorizer_output, RowPerToken, "rows for 28 inputs"),
]


@pytest.mark.parametrize(("check", "cls", "message"), BROKEN,
                         ids=[f"{c.__name__}-{k.__name__}" for c, k, _ in BROKEN])
def test_check_catches_broken_component(check, cls, message):
    with pytest.raises(AssertionError, match=message):
        check(cls)


@pytest.mark.parametrize(("check", "cls", "message"), BROKEN,
                         ids=[f"{c.__name__}-{k.__name__}" for c, k, _ in BROKEN])
def test_check_component_reports_the_failing_check(check, cls, message):
    with pytest.raises(AssertionError) as err:
        check_component(cls)
    text = str(err.value)
    assert text.startswith(f"{cls.__qualname__} (")
    assert f"\n{check.__name__}: " in text
