"""Tests of the example metric plugin: tokembed's metric contract, then values by hand."""

from __future__ import annotations

import importlib.metadata as metadata

import pytest

import tokembed
from tokembed.metrics import tokenizer_metrics
from tokembed.testing import check_metric, sample_corpus
from tokembed_toklen.metric import MeanTokenLength


@pytest.fixture(scope="module")
def word():
    return tokembed.build_registry(autoload=False).get("tokenizer", "word")().fit(sample_corpus(4_000))


def test_contract():
    check_metric(MeanTokenLength)


def test_entry_point_and_registry():
    eps = [ep for ep in metadata.distribution("tokembed-toklen").entry_points if ep.group == "tokembed"]
    assert [(ep.name, ep.value) for ep in eps] == [("toklen", "tokembed_toklen")]
    info = tokembed.build_registry().metric("mean_token_length")
    assert info.cls is MeanTokenLength and info.plugin.distribution == "tokembed-toklen"


def test_values_by_hand(word):
    # word_punct tokens: "Call" "me" "Ishmael" "." -> 4 + 2 + 7 + 1 = 14 characters over 4 tokens; the spaces are
    # covered by none. The second document adds "the" "sea": 14 + 6 = 20 over 6.
    assert tokenizer_metrics(word, ["Call me Ishmael."], metrics=[MeanTokenLength])["mean_token_length"] == 3.5
    got = tokenizer_metrics(word, ["Call me Ishmael.", "the  sea"], metrics=[MeanTokenLength])
    assert got["mean_token_length"] == pytest.approx(20 / 6)
    assert tokenizer_metrics(word, ["", "   "], metrics=[MeanTokenLength])["mean_token_length"] is None


def test_both_paths_add_the_same_spans(word):
    # the array path sees the spans of a whole chunk at once; here a stand-in chunk of the two documents above
    import types

    import numpy as np

    docs = ["Call me Ishmael.", "the  sea"]
    by_document = MeanTokenLength(word)
    for doc in docs:
        by_document.update(doc, word.encode(doc, add_special_tokens=False))
    spans = np.concatenate([word.encode(d, add_special_tokens=False).offsets for d in docs])
    by_chunk = MeanTokenLength(word)
    by_chunk.update_chunk(types.SimpleNamespace(spans=spans))
    assert by_chunk.covered == by_document.covered == 20
