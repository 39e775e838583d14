"""The tfidf kernels against the plain-Python references of _tfidf_naive.py."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tokembed.plugins.tfidf import _kernels

import _tfidf_naive as naive

docs_of_ids = st.lists(st.lists(st.integers(0, 6), max_size=12), max_size=8)


def pack(docs: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    ids = np.array([i for d in docs for i in d], dtype=np.int32)
    offsets = np.cumsum([0] + [len(d) for d in docs]).astype(np.int64)
    return ids, offsets


@settings(max_examples=200, deadline=None)
@given(docs=docs_of_ids, min_n=st.integers(1, 3), extra=st.integers(0, 2))
def test_ngram_features_intern_every_ngram_once(docs, min_n, extra):
    max_n = min_n + extra
    ids, offsets = pack(docs)
    terms, term_offsets, key_tokens, key_offsets = _kernels.ngram_features(ids, offsets, min_n, max_n)
    keys = [tuple(key_tokens[a:b].tolist()) for a, b in zip(key_offsets[:-1], key_offsets[1:])]
    assert len(set(keys)) == len(keys)  # each key stored once
    expected = naive.ngrams(docs, min_n, max_n)
    got = [[keys[t] for t in terms[a:b]] for a, b in zip(term_offsets[:-1], term_offsets[1:])]
    assert got == expected
    first_seen = list(dict.fromkeys(g for doc in expected for g in doc))
    assert keys == first_seen  # keys numbered in order of first occurrence


@settings(max_examples=100, deadline=None)
@given(docs=docs_of_ids, cut=st.integers(0, 8), min_n=st.integers(1, 2), extra=st.integers(0, 2))
def test_a_table_carried_across_parts_numbers_as_one_pass(docs, cut, min_n, extra):
    # the parts of a mapped corpus: documents [0, cut) then the rest, the table of the first part carried over
    max_n = min_n + extra
    whole, whole_offsets, key_tokens, key_offsets = _kernels.ngram_features(*pack(docs), min_n, max_n)
    table = _kernels.new_ngram_table(max_n)
    parts = []
    for part in (docs[:cut], docs[cut:]):
        terms, term_offsets, *table = _kernels.intern_ngrams(*pack(part), min_n, max_n, *table)
        parts.append(terms)
    kt, ko, n_keys, used = table[0], table[1], table[4], table[5]
    assert np.array_equal(np.concatenate(parts), whole) and n_keys == key_offsets.shape[0] - 1
    assert np.array_equal(ko[: n_keys + 1], key_offsets) and np.array_equal(kt[:used], key_tokens)


def test_a_carried_table_grows_in_a_later_part():
    # 600 + 599 keys in part 1 (within the first 1,024), 1,400 + 1,399 more in part 2 (the table doubles twice)
    first, second = [list(range(600))], [list(range(600, 2000))]
    table = _kernels.new_ngram_table(2)
    _, _, *table = _kernels.intern_ngrams(*pack(first), 1, 2, *table)
    terms, _, *table = _kernels.intern_ngrams(*pack(second), 1, 2, *table)
    assert table[4] == 1199 + 2799 and terms.tolist() == list(range(1199, 1199 + 2799))
    assert table[0][table[1][1199]:table[1][1200]].tolist() == [600]  # key 1199 is the unigram 600


def test_ngram_table_grows_past_its_first_capacity():
    docs = [list(range(3000))]
    ids, offsets = pack(docs)
    terms, _, key_tokens, key_offsets = _kernels.ngram_features(ids, offsets, 1, 2)
    assert key_offsets.shape[0] - 1 == 3000 + 2999 and terms.tolist() == list(range(5999))


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(st.lists(st.integers(-1, 9), max_size=15), max_size=8))
def test_count_rows_equals_counters(rows):
    cols, offsets = pack([[max(c, 0) for c in r] for r in rows])
    cols = np.array([c for r in rows for c in r], dtype=np.int32)
    indptr, indices, data = _kernels.count_rows(cols, offsets, 10)
    want = naive.count_rows(rows)
    assert (indptr.tolist(), indices.tolist(), data.tolist()) == want
    assert indptr.dtype == np.int64 and indices.dtype == np.int32 and data.dtype == np.int64
    assert np.array_equal(cols, np.array([c for r in rows for c in r], dtype=np.int32))  # input untouched


def test_count_rows_is_not_quadratic_on_one_long_repeated_row():
    cols = np.zeros(1_000_000, dtype=np.int32)
    indptr, indices, data = _kernels.count_rows(cols, np.array([0, cols.size], dtype=np.int64), 1)
    assert indices.tolist() == [0] and data.tolist() == [1_000_000]


@settings(max_examples=100, deadline=None)
@given(rows=st.lists(st.lists(st.floats(0, 100), max_size=6), max_size=6), l1=st.booleans())
def test_normalize_rows_equals_the_reference(rows, l1):
    data = np.array([v for r in rows for v in r], dtype=np.float64)
    indptr = np.cumsum([0] + [len(r) for r in rows]).astype(np.int64)
    _kernels.normalize_rows(indptr, data, l1)
    want = [v for r in naive.normalize_rows(rows, l1) for v in r]
    np.testing.assert_allclose(data, want, rtol=1e-12, atol=0)
    assert np.isfinite(data).all()
