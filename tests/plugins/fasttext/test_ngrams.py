"""Character n-grams and fastText's hash: known values, gensim's ``ft_hash_bytes`` parity, the zero-vector cases."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import _fasttext_naive as naive
from tokembed.plugins.fasttext import FastTextEmbedder, ft_hash, ngram_hashes
from tokembed.plugins.fasttext.keyedvectors import FastTextKeyedVectors, ngrams
from tokembed.plugins.fasttext.training import subword_rows

WORDS = ["ab", "whale", "naïve", "café", "Ærøskøbing", "東京都", "中文", "😀", "🇫🇷flag", "q", "x y", "</s>", "é"]


def test_known_hash_values():
    assert ft_hash("<ab>".encode()) == 674621742
    assert naive.fnv1a_plain("<ab>".encode()) == 674621742  # ASCII: the sign extension changes nothing
    assert "é".encode() == b"\xc3\xa9"
    assert ft_hash("é".encode()) == 1023043777  # each byte >= 0x80 sign-extended, as fastText
    assert naive.fnv1a_plain("é".encode()) == 513665217  # the textbook FNV-1a: not fastText's


def test_hash_is_gensims_ft_hash_bytes():
    fasttext_inner = pytest.importorskip("gensim.models.fasttext_inner")
    for word in WORDS + ["<" + w + ">" for w in WORDS]:
        data = word.encode("utf-8")
        assert ft_hash(data) == fasttext_inner.ft_hash_bytes(data) == naive.fnv1a_fasttext(data), word


@settings(deadline=None, max_examples=200)
@given(st.text(min_size=1, max_size=12).filter(lambda s: s != "</s>" and not any(0xD800 <= ord(c) < 0xE000 for c in s)))
def test_ngram_hashes_match_gensim_and_the_reference(word):
    fasttext = pytest.importorskip("gensim.models.fasttext")
    assert ngram_hashes(word, 3, 6, 2_000_000) == fasttext.ft_ngram_hashes(word, 3, 6, 2_000_000)
    assert ngrams(word, 2, 4) == [g.encode() for g in naive.char_ngrams(word, 2, 4)]


@settings(deadline=None, max_examples=60)
@given(st.lists(st.text(min_size=1, max_size=10), min_size=1, max_size=8, unique=True),
       st.integers(0, 4), st.integers(0, 7), st.integers(1, 50))
def test_kernel_rows_match_the_reference(words, minn, maxn, bucket):
    words = [w for w in words if not any(0xD800 <= ord(c) < 0xE000 for c in w)] or ["a"]
    row_offsets, rows = subword_rows(words, minn, maxn, bucket)
    want = naive.word_rows(words, minn, maxn, bucket)
    assert [rows[row_offsets[i]:row_offsets[i + 1]].tolist() for i in range(len(words))] == want


def test_known_ngrams():
    assert [g.decode() for g in ngrams("ab", 3, 6)] == ["<ab", "<ab>", "ab>"]
    assert [g.decode() for g in ngrams("q", 3, 6)] == ["<q>"]
    assert [g.decode() for g in ngrams("q", 1, 6)] == ["<q", "<q>", "q", "q>"]  # "<" and ">" alone never
    assert [g.decode() for g in ngrams("東京", 3, 3)] == ["<東京", "東京>"]  # code points, not bytes
    assert ngrams("</s>", 3, 6) == []  # fastText's end-of-sentence word has none


def _kv(minn, maxn, bucket=50, d=4):
    rng = np.random.default_rng(0)
    return FastTextKeyedVectors.from_fasttext(["whale"], rng.random((1, d), dtype=np.float32),
                                              rng.random((bucket, d), dtype=np.float32) + 1, minn=minn, maxn=maxn)


def test_words_without_an_ngram_in_range_get_the_zero_vector():
    kv = _kv(5, 5)
    for word in ("q", "ab"):  # "<q>" has 3 and "<ab>" 4 code points: no 5-gram
        assert kv.ngram_rows(word) == []
        np.testing.assert_array_equal(kv[word], np.zeros(4, np.float32))
        assert kv.similarity(word, "whale") == 0.0
    assert len(kv.ngram_rows("abc")) == 1  # "<abc>"


def test_a_one_character_word_with_minn_3_is_the_row_of_its_one_ngram():
    kv = _kv(3, 6)
    rows = kv.ngram_rows("q")
    assert rows == [ft_hash(b"<q>") % 50]
    np.testing.assert_array_equal(kv["q"], kv.vectors_ngrams[rows[0]])


def test_oov_vector_is_the_mean_of_its_ngram_rows():
    kv = _kv(3, 6)
    rows = kv.ngram_rows("whales")
    assert len(rows) == len(naive.char_ngrams("whales", 3, 6)) == 6 + 5 + 4 + 3  # "<whales>": 8 code points
    np.testing.assert_allclose(kv["whales"], kv.vectors_ngrams[rows].astype(np.float64).mean(axis=0), rtol=1e-6)
    assert "whales" not in kv and kv.has_index_for("whale")


def test_fitted_model_oov_and_zero_vectors():
    docs = [["the", "whale", "and", "the", "sea"]] * 20
    e = FastTextEmbedder(vector_size=8, min_count=1, minn=5, maxn=5, bucket=100, epochs=1, workers=1,
                         show_progress=False).fit(docs)
    np.testing.assert_array_equal(e.wv_["q"], np.zeros(8, np.float32))
    np.testing.assert_array_equal(e.wv_["ab"], np.zeros(8, np.float32))
    # in the vocabulary, "sea" has one 5-gram, "<sea>": its vector is the mean of its own row and that row
    assert e.wv_.index_to_key == ["the", "and", "sea", "whale"]  # count-descending, ties by key
    row = ft_hash(b"<sea>") % 100
    want = (e.input_matrix_[2] + e.input_matrix_[4 + row]) * np.float32(0.5)
    np.testing.assert_array_equal(e.wv_["sea"], want)
