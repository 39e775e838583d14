"""Merge application by rank (and BPE-dropout): the Numba kernel against the plain-Python references."""

from __future__ import annotations


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokembed.plugins import _subword as sw
from tokembed.plugins._subword import reference as ref

from _subword_data import char_corpus, moby_text


def encode(words, merges, **kw):
    """Kernel output as a list of (ids, spans) per word, spans relative to the word like the references'."""
    symbols, offsets = ref.to_csr(words)
    left, right, new = zip(*merges) if merges else ((), (), ())
    table = sw.build_merge_table(np.array(left, np.int64), np.array(right, np.int64), np.array(new, np.int64))
    enc = sw.apply_merges(symbols, offsets, table, **kw)
    assert enc.ids.dtype == np.int32 and enc.offsets.dtype == np.int64
    assert enc.first.dtype == np.int64 and enc.last.dtype == np.int64
    out = []
    for w in range(len(words)):
        a, b = enc.offsets[w], enc.offsets[w + 1]
        start = offsets[w]
        spans = list(zip((enc.first[a:b] - start).tolist(), (enc.last[a:b] - start).tolist()))
        out.append((enc.ids[a:b].tolist(), spans))
    return out


@st.composite
def learned_like_merges(draw):
    """Merges as training makes them: merge k joins ids that exist before it and creates the fresh id n_base + k."""
    n_base = draw(st.integers(1, 4))
    merges = []
    for k in range(draw(st.integers(0, 12))):
        n_ids = n_base + k
        pair = (draw(st.integers(0, n_ids - 1)), draw(st.integers(0, n_ids - 1)))
        if pair not in {(a, b) for a, b, _ in merges}:
            merges.append((*pair, n_ids))
        else:
            merges.append((n_ids + 100, n_ids + 100, n_ids))  # a merge that never applies keeps ids fresh
    words = draw(st.lists(st.lists(st.integers(0, n_base - 1), max_size=20), max_size=8))
    return words, merges


@settings(max_examples=300, deadline=None)
@given(learned_like_merges())
def test_equals_references_on_learned_like_merges(case):
    words, merges = case
    got = encode(words, merges)
    assert got == [ref.encode_by_rank(w, merges) for w in words]
    assert got == [ref.encode_sequential(w, merges) for w in words]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5), st.integers(0, 7)), max_size=12),
       st.lists(st.lists(st.integers(0, 5), max_size=16), max_size=6))
def test_equals_rank_reference_on_arbitrary_tables(merges, words):
    # repeated pairs (the first rank wins), new ids that are old ids, merges that re-enable earlier ranks
    assert encode(words, merges) == [ref.encode_by_rank(w, merges) for w in words]


def test_hand_case_lowest_rank_then_leftmost():
    # a=0 b=1 c=2; merges: rank 0 (b,c)->3, rank 1 (a,b)->4, rank 2 (a,a)->5.
    # "a b c": (b,c) has the lower rank although (a,b) is to its left -> "a bc".
    # "a a a": rank 2 at positions 0 and 1; the leftmost goes first -> "aa a".
    merges = [(1, 2, 3), (0, 1, 4), (0, 0, 5)]
    assert encode([[0, 1, 2], [0, 0, 0]], merges) == [
        ([0, 3], [(0, 0), (1, 2)]),
        ([5, 0], [(0, 1), (2, 2)]),
    ]


def test_empty_words_and_unknown_ids():
    merges = [(0, 1, 9)]
    assert encode([[], [7, 0, 1, 7], []], merges) == [([], []), ([7, 9, 7], [(0, 0), (1, 2), (3, 3)]), ([], [])]
    assert encode([], merges) == []


def test_long_runs_of_one_symbol():
    for n, first_merges in ((120_000, 8), (1_000_000, None)):
        symbols = np.zeros(n, np.int32)
        offsets = np.array([0, n], np.int64)
        m = sw.learn_bpe_merges(symbols, offsets, np.array([1], np.int64), 1, 100)
        merges = list(zip(m.left.tolist(), m.right.tolist(), (1 + np.arange(m.left.size)).tolist()))
        if first_merges:
            # a partial merge list leaves many tokens: compare with Sennrich's merge-by-merge rewrite
            merges = merges[:first_merges]
            got = encode([[0] * n], merges)
            assert got == [ref.encode_sequential([0] * n, merges)]
        else:
            # the merges learned from the word turn it into one token
            got = encode([[0] * n], merges)
            assert got == [([m.left.size], [(0, n - 1)])]


def _moby_merges(n_merges=2000):
    words, counts, chars = char_corpus(moby_text())
    symbols, offsets = ref.to_csr(words)
    m = sw.learn_bpe_merges(symbols, offsets, counts, len(chars), n_merges)
    table = sw.build_merge_table(m.left, m.right, len(chars) + np.arange(m.left.size))
    return words, symbols, offsets, table, m, chars


def test_dropout_zero_is_plain_and_seeds_are_deterministic():
    words, symbols, offsets, table, m, chars = _moby_merges()
    plain = sw.apply_merges(symbols, offsets, table)
    zero = sw.apply_merges(symbols, offsets, table, dropout=0.0, seed=123)
    for a, b in zip(plain, zero):
        np.testing.assert_array_equal(a, b)
    d1 = sw.apply_merges(symbols, offsets, table, dropout=0.3, seed=7)
    d2 = sw.apply_merges(symbols, offsets, table, dropout=0.3, seed=7)
    d3 = sw.apply_merges(symbols, offsets, table, dropout=0.3, seed=8)
    for a, b in zip(d1, d2):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(d1.ids, d3.ids)
    # skipping merges leaves more tokens overall (not in every word: a skipped merge can open another path)
    assert d1.ids.size > 1.1 * plain.ids.size


def test_dropout_output_is_a_valid_segmentation():
    words, symbols, offsets, table, m, chars = _moby_merges(500)
    n_base = len(chars)
    expansion = [[i] for i in range(n_base)]
    for a, b in zip(m.left.tolist(), m.right.tolist()):
        expansion.append(expansion[a] + expansion[b])
    for p in (0.1, 0.5, 0.9):
        enc = sw.apply_merges(symbols, offsets, table, dropout=p, seed=3)
        # every id spells exactly the input symbols it claims to cover, and the spans tile each word
        for i, f, l in zip(enc.ids.tolist(), enc.first.tolist(), enc.last.tolist()):
            assert expansion[i] == symbols[f:l + 1].tolist()
        assert enc.first[0] == 0 and enc.last[-1] == symbols.size - 1
        assert np.all(enc.first[1:] == enc.last[:-1] + 1)
        assert np.all(enc.first[enc.offsets[:-1][np.diff(enc.offsets) > 0]] == offsets[:-1][np.diff(offsets) > 0])


def test_matches_hugging_face_bpe_model_on_the_same_merges():
    # Hugging Face's BPE model, given our vocabulary and merges, splits every Moby Dick word as we do
    pytest.importorskip("tokenizers")
    from tokenizers import Tokenizer, models

    words, symbols, offsets, table, m, chars = _moby_merges(3000)
    strings = list(chars)
    merges = []
    for a, b in zip(m.left.tolist(), m.right.tolist()):
        merges.append((strings[a], strings[b]))
        strings.append(strings[a] + strings[b])
    assert len(set(strings)) == len(strings)
    vocab = {s: i for i, s in enumerate(strings)}
    hf = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    enc = sw.apply_merges(symbols, offsets, table)
    for w in range(len(words)):
        text = "".join(chars[c] for c in words[w])
        ours = enc.ids[enc.offsets[w]:enc.offsets[w + 1]].tolist()
        assert ours == [t.id for t in hf.model.tokenize(text)], text


def test_bad_arguments_raise():
    table = sw.build_merge_table([0], [1], [2])
    s, o = np.array([0, 1], np.int32), np.array([0, 2], np.int64)
    with pytest.raises(ValueError, match="dropout"):
        sw.apply_merges(s, o, table, dropout=1.0)
    with pytest.raises(ValueError, match="offsets"):
        sw.apply_merges(s, np.array([0, 3]), table)
    with pytest.raises(ValueError, match="equal length"):
        sw.build_merge_table([0, 1], [1], [2])
    with pytest.raises(ValueError, match="new_ids"):
        sw.build_merge_table([0], [1], [-2])
