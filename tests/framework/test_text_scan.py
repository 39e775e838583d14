"""Tests of tokembed.text.scan: the pieces of many texts in one Numba scan, and their lookup in a fixed vocabulary.

Oracles: the reference path text by text (``PreTokenizer.spans`` and :func:`tokembed.text.split_text_arrays`, which
maps spans back through the normalizer), and a Python dict for the lookup.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokembed.text import build_normalizer, build_pre_tokenizer, split_text_arrays
from tokembed.text import fast
from tokembed.text.scan import PieceVocabulary, batch_spans, scans

from test_text_fast import SCANNED, any_text

pytestmark = pytest.mark.skipif(not fast.is_enabled(), reason="numba is not importable or TOKEMBED_PURE_PYTHON=1")

docs_strategy = st.lists(st.one_of(any_text, st.text(alphabet=st.sampled_from("ab '!\n\u0130\ufb01"), max_size=40)),
                         max_size=6)
NORMALIZERS = [None, "lowercase", ["nfkc", "lowercase"], ["bert_clean", "nfd", "strip_accents", "lowercase"]]


def reference_batch_spans(pre, texts):
    """The reference spans of each text, shifted by the code points of the texts before it."""
    parts, counts, base = [], [], 0
    for text in texts:
        spans = pre._spans(text)
        parts.append(spans + base)
        counts.append(len(spans))
        base += len(text)
    return (np.concatenate(parts) if parts else np.zeros((0, 2), np.int64)), counts


@pytest.mark.parametrize("name", [*SCANNED, "identity"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=docs_strategy)
def test_batch_spans_equal_the_reference_text_by_text(name, texts):
    pre = build_pre_tokenizer(name)
    spans, counts = batch_spans(pre, texts)
    want, want_counts = reference_batch_spans(pre, texts)
    assert spans.dtype == np.int64 and counts.dtype == np.int64
    assert spans.tolist() == want.reshape(-1, 2).tolist() and counts.tolist() == want_counts


def test_batch_spans_hand_case():
    # "ab c" + "" + " d!" is "ab c d!": word_punct pieces ab (0, 2), c (3, 4); none; d (5, 6), ! (6, 7)
    spans, counts = batch_spans(build_pre_tokenizer("word_punct"), ["ab c", "", " d!"])
    assert spans.tolist() == [[0, 2], [3, 4], [5, 6], [6, 7]] and counts.tolist() == [2, 0, 2]


def vocabulary(words):
    return PieceVocabulary(words, np.arange(10, 10 + len(words)), -1)


def reference_encode(texts, words, pre, norm):
    ids = {w: 10 + i for i, w in enumerate(words)}
    out, counts, spans = [], [], []
    for text in texts:
        pieces, offsets = split_text_arrays(text, norm, pre)
        out += [ids.get(p, -1) for p in pieces]
        counts.append(len(pieces))
        spans += offsets.tolist()
    return out, counts, spans


@pytest.mark.parametrize("name", [*SCANNED, "identity"])
@pytest.mark.parametrize("normalizer", NORMALIZERS, ids=str)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=docs_strategy, known=docs_strategy)
def test_lookup_equals_a_dict_over_split_text(name, normalizer, texts, known):
    pre, norm = build_pre_tokenizer(name), build_normalizer(normalizer)
    # a vocabulary of some of the pieces: those of the texts in `known` (normalized the same way)
    words = list(dict.fromkeys(p for t in known + texts[:1] for p in split_text_arrays(t, norm, pre)[0]))
    ids, counts, spans = vocabulary(words).encode(texts, pre, norm)
    want_ids, want_counts, want_spans = reference_encode(texts, words, pre, norm)
    assert ids.dtype == np.int32 and counts.dtype == np.int64 and spans.dtype == np.int64
    assert ids.tolist() == want_ids and counts.tolist() == want_counts and spans.tolist() == want_spans
    again = vocabulary(words).encode(texts, pre, norm, spans=False)
    assert again[2] is None and again[0].tolist() == want_ids and again[1].tolist() == want_counts


def test_lookup_hand_case_with_a_normalizer_that_changes_lengths():
    # lowercase turns "İ" (1 code point) into "i̇" (2): the piece "i̇x" of the normalized text is the original (3, 5)
    words = ["ab", "i\u0307x"]
    ids, counts, spans = vocabulary(words).encode(["ab c", "ab \u0130x"], build_pre_tokenizer("whitespace_split"),
                                                  build_normalizer("lowercase"))
    assert ids.tolist() == [10, -1, 10, 11] and counts.tolist() == [2, 2]
    assert spans.tolist() == [[0, 2], [3, 4], [0, 2], [3, 5]]


def test_vocabulary_edge_cases():
    pre, norm = build_pre_tokenizer("whitespace_split"), build_normalizer(None)
    # an empty word is never a piece; the others keep their ids
    ids, _, _ = PieceVocabulary(["", "a", "b"], [7, 8, 9], 0).encode(["b a c"], pre, norm)
    assert ids.tolist() == [9, 8, 0]
    # no word at all: every piece gets the default
    ids, _, _ = PieceVocabulary([], [], 5).encode(["x y"], pre, norm)
    assert ids.tolist() == [5, 5]
    # more words than the table's first size (1,024): it grows
    words = [f"w{i}" for i in range(5000)]
    ids, _, _ = PieceVocabulary(words, np.arange(5000), -1).encode(["w4999 w0 w5000 w1234"], pre, norm)
    assert ids.tolist() == [4999, 0, -1, 1234]
    ids, counts, spans = PieceVocabulary(words, np.arange(5000), -1).encode([], pre, norm)
    assert ids.shape == (0,) and counts.shape == (0,) and spans.shape == (0, 2)


def test_what_the_scanner_does_not_know_says_none(monkeypatch):
    custom = build_pre_tokenizer({"type": "regex", "pattern": r"\w+"})
    assert not scans(custom) and batch_spans(custom, ["a b"]) is None
    assert PieceVocabulary(["a"], [1], 0).encode(["a b"], custom, build_normalizer(None)) is None
    word_punct = build_pre_tokenizer("word_punct")
    assert scans(word_punct)
    monkeypatch.setenv("TOKEMBED_PURE_PYTHON", "1")
    assert not scans(word_punct) and batch_spans(word_punct, ["a b"]) is None


def test_scans_does_not_load_numba():
    code = ("import sys; from tokembed.text import build_pre_tokenizer; from tokembed.text.scan import scans; "
            "print(scans(build_pre_tokenizer('gpt2')), 'numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "False"]
