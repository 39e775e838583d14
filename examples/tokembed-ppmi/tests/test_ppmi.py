"""Tests of the example embedder plugin: tokembed's contract suite, then PPMI by hand and the vectors' geometry."""

from __future__ import annotations

import importlib.metadata as metadata
import math

import numpy as np
import pytest

import tokembed
from tokembed import CorpusError
from tokembed.errors import ParameterError
from tokembed.keyedvectors import KeyedVectors
from tokembed.sequences import TokenSequences
from tokembed.testing import check_component, parametrize_with_checks
from tokembed_ppmi.embedder import PPMIEmbedder, cooccurrences, ppmi


def test_contract():
    check_component(PPMIEmbedder)


@parametrize_with_checks([PPMIEmbedder])
def test_each_contract_check(component, check):
    check(component)


def test_entry_point_and_registry():
    eps = [ep for ep in metadata.distribution("tokembed-ppmi").entry_points if ep.group == "tokembed"]
    assert [(ep.name, ep.value) for ep in eps] == [("ppmi", "tokembed_ppmi")]
    info = tokembed.build_registry().info("embedder", "ppmi")
    assert info.cls is PPMIEmbedder and info.plugin.distribution == "tokembed-ppmi"


def test_cooccurrences_stay_inside_documents_and_windows():
    # "a b c" and "c a": window 1 pairs a-b, b-c (document 0) and c-a (document 1); not b-c across documents
    seqs = TokenSequences.from_tokens([["a", "b", "c"], ["c", "a"]])
    rows = np.arange(3)
    assert cooccurrences(seqs, rows, 3, 1).tolist() == [[0, 1, 1], [1, 0, 1], [1, 1, 0]]
    # window 2 adds a-c of document 0
    assert cooccurrences(seqs, rows, 3, 2).tolist() == [[0, 1, 2], [1, 0, 1], [2, 1, 0]]
    # a token that is no word (-1) keeps its place: with b dropped, a and c are 2 apart in document 0
    assert cooccurrences(seqs, np.array([0, -1, 1]), 2, 1).tolist() == [[0, 1], [1, 0]]


def test_ppmi_by_hand():
    # counts [[0, 2], [2, 1]]: total 5, P(w) = P(c) = (2/5, 3/5) without smoothing (cds = 1).
    # PMI(0, 1) = log((2/5) / (2/5 * 3/5)) = log(5/3); PMI(1, 1) = log((1/5) / (9/25)) = log(5/9) < 0 -> 0.
    got = ppmi(np.array([[0.0, 2.0], [2.0, 1.0]]), cds=1.0)
    np.testing.assert_allclose(got, [[0, math.log(5 / 3)], [math.log(5 / 3), 0]], rtol=1e-12)
    # cds = 0.5: P(c) proportional to (2, 3) ** 0.5; PMI(0, 1) = log((2/5) / (2/5 * sqrt(3) / (sqrt(2) + sqrt(3))))
    smoothed = ppmi(np.array([[0.0, 2.0], [2.0, 1.0]]), cds=0.5)
    assert smoothed[0, 1] == pytest.approx(math.log((math.sqrt(2) + math.sqrt(3)) / math.sqrt(3)), rel=1e-12)


def test_words_in_the_same_contexts_get_the_same_vector():
    # "a" and "b" both sit between "x" and "y": equal PPMI rows, so equal vectors (cosine 1)
    docs = [["x", "a", "y"], ["x", "b", "y"], ["y", "x"]]
    emb = PPMIEmbedder(vector_size=2, window=1, min_count=1).fit(docs)
    assert isinstance(emb.wv_, KeyedVectors)
    assert emb.wv_.index_to_key == ["x", "y", "a", "b"]  # most frequent first, ties by the string
    assert emb.wv_.vectors.shape == (4, 2) and emb.wv_.vectors.dtype == np.float32
    assert emb.wv_.similarity("a", "b") == pytest.approx(1.0, abs=1e-6)


def test_special_ids_are_no_words():
    seqs = TokenSequences([1, 2, 0, 1, 2, 1, 2], [0, 3, 7], ["<unk>", "p", "q"], special_ids=[0])
    emb = PPMIEmbedder(vector_size=1, min_count=1).fit(seqs)
    assert sorted(emb.wv_.index_to_key) == ["p", "q"]


def test_errors():
    with pytest.raises(CorpusError, match="2 words occur at least min_count=1 times, fewer than vector_size=3"):
        PPMIEmbedder(vector_size=3, min_count=1).fit([["a", "b", "a"]])
    with pytest.raises(ParameterError) as err:
        PPMIEmbedder(window=0, cds=0.0).fit([["a"]])
    assert [e.param for e in err.value.errors] == ["window", "cds"]  # every problem, not the first
