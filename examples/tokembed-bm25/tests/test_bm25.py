"""Tests of the example vectorizer plugin: tokembed's contract suite, then BM25's values by hand."""

from __future__ import annotations

import importlib.metadata as metadata
import math

import numpy as np
import pytest

import tokembed
from tokembed import CorpusError, TokembedError
from tokembed.errors import ParameterError
from tokembed.sequences import TokenSequences
from tokembed.testing import check_component, parametrize_with_checks
from tokembed_bm25.vectorizer import BM25Vectorizer


def test_contract():
    check_component(BM25Vectorizer)


@parametrize_with_checks([BM25Vectorizer])
def test_each_contract_check(component, check):
    check(component)


def test_entry_point_and_registry():
    eps = [ep for ep in metadata.distribution("tokembed-bm25").entry_points if ep.group == "tokembed"]
    assert [(ep.name, ep.value) for ep in eps] == [("bm25", "tokembed_bm25")]
    info = tokembed.build_registry().info("vectorizer", "bm25")
    assert info.cls is BM25Vectorizer and info.plugin.distribution == "tokembed-bm25"


DOCS = [["a", "b", "a"], ["b", "c"]]


def test_weights_by_hand():
    # N = 2, avgdl = 2.5; df: a 1, b 2, c 1. idf(a) = idf(c) = ln(1 + 1.5/1.5) = ln 2, idf(b) = ln(1 + 0.5/2.5) = ln 1.2.
    # Document 0 (|d| = 3): 1 - 0.75 + 0.75 * 3/2.5 = 1.15; a: ln 2 * 2 * 2.2 / (2 + 1.2 * 1.15),
    # b: ln 1.2 * 2.2 / (1 + 1.38). Document 1 (|d| = 2): 0.25 + 0.6 = 0.85; b: ln 1.2 * 2.2 / (1 + 1.02), c likewise
    # with ln 2.
    vec = BM25Vectorizer().fit(DOCS)
    assert vec.get_feature_names_out().tolist() == ["a", "b", "c"]
    want = [[math.log(2) * 4.4 / 3.38, math.log(1.2) * 2.2 / 2.38, 0.0],
            [0.0, math.log(1.2) * 2.2 / 2.02, math.log(2) * 2.2 / 2.02]]
    np.testing.assert_allclose(vec.transform(DOCS).toarray(), want, rtol=1e-12)


def test_token_sequences_name_features_by_token_and_skip_special_ids():
    # ids 0..3 name "<unk>", "c", "b", "a": the features are the strings, whatever the ids; <unk> is special
    seqs = TokenSequences([3, 2, 3, 0, 2, 1], [0, 4, 6], ["<unk>", "c", "b", "a"], special_ids=[0])
    vec = BM25Vectorizer().fit(seqs)
    assert vec.get_feature_names_out().tolist() == ["a", "b", "c"]
    np.testing.assert_allclose(vec.transform(seqs).toarray(), BM25Vectorizer().fit(DOCS).transform(DOCS).toarray())


def test_b_zero_ignores_length_and_k1_zero_counts_once():
    vec = BM25Vectorizer(k1=0.0, b=0.0).fit(DOCS)
    np.testing.assert_allclose(vec.transform([["a", "a", "a", "x"]]).toarray(), [[math.log(2), 0, 0]])


@pytest.mark.parametrize(("params", "problem"), [
    ({"k1": -1.0}, "bm25: k1 must be a number >= 0, got -1.0"),
    ({"b": 2}, "bm25: b must be a number in [0, 1], got 2"),
])
def test_bad_params(params, problem):
    with pytest.raises(ParameterError, match=problem.replace("[", r"\[")):
        BM25Vectorizer(**params).fit(DOCS)


def test_every_bad_parameter_is_reported():
    errors = BM25Vectorizer.parameter_errors({"k1": "high", "b": -0.5})
    assert [e.param for e in errors] == ["k1", "b"]


def test_bad_input():
    with pytest.raises(CorpusError, match="no term"):
        BM25Vectorizer().fit([[], []])
    with pytest.raises(TokembedError, match="is a str"):
        BM25Vectorizer().fit(["raw text, not tokens"])
