"""WordPiece (likelihood) merge learning: the Numba kernel against the plain-Python reference."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokembed.plugins import _subword as sw
from tokembed.plugins._subword import reference as ref

from _subword_data import char_corpus, moby_text


def learn(words, counts, n_base, max_merges, **kw):
    symbols, offsets = ref.to_csr(words)
    m = sw.learn_wordpiece_merges(symbols, offsets, np.asarray(counts, np.int64), n_base, max_merges, **kw)
    return list(zip(m.left.tolist(), m.right.tolist(), m.pair_count.tolist()))


def reference(words, counts, n_base, max_merges, **kw):
    (left, right, pair_count), _ = ref.learn_merges(words, list(counts), n_base, max_merges, scoring="likelihood",
                                                    **kw)
    return list(zip(left, right, pair_count))


def test_likelihood_not_frequency():
    # a=0 b=1 c=2 d=3 e=4; words ab x4, cd x1, ae x2.
    # symbol counts: a = 4 + 2 = 6, b = 4, c = 1, d = 1, e = 2.
    # scores: (a,b) 4 / (6 * 4) = 1/6; (c,d) 1 / (1 * 1) = 1; (a,e) 2 / (6 * 2) = 1/6.
    # 1) (c,d): the rarest pair, which BPE would merge last.
    # 2) (a,b) and (a,e) tie at 1/6: the higher count wins, (a,b) with 4.
    # 3) then a = 2 (only in "ae"): (a,e) 2 / (2 * 2) = 1/2.
    words, counts = [[0, 1], [2, 3], [0, 4]], [4, 1, 2]
    assert learn(words, counts, 5, 10) == [(2, 3, 1), (0, 1, 4), (0, 4, 2)]
    assert learn(words, counts, 5, 10) == reference(words, counts, 5, 10)
    bpe = sw.learn_bpe_merges(*ref.to_csr(words), np.array(counts), 5, 1)
    assert (bpe.left[0], bpe.right[0]) == (0, 1)  # frequency would take (a,b) first


def test_a_merge_raises_the_score_of_pairs_sharing_its_parts():
    # a=0 b=1 e=2 f=3 g=4; words ab x4, ae x1, a x3, e x1, fg x1, f x9.
    # counts: a = 4 + 1 + 3 = 8, b = 4, e = 1 + 1 = 2, f = 1 + 9 = 10, g = 1.
    # scores: (a,b) 4 / 32 = 1/8; (a,e) 1 / 16; (f,g) 1 / 10.
    # 1) (a,b). Now a = 8 - 4 = 4, so (a,e) rises to 1 / (4 * 2) = 1/8 > 1/10:
    # 2) (a,e) must come before 3) (f,g) -- which needs the queue to refresh pairs that contain a merged part.
    words = [[0, 1], [0, 2], [0], [2], [3, 4], [3]]
    counts = [4, 1, 3, 1, 1, 9]
    assert learn(words, counts, 5, 10) == [(0, 1, 4), (0, 2, 1), (3, 4, 1)]
    assert learn(words, counts, 5, 10) == reference(words, counts, 5, 10)


def test_min_frequency_skips_rare_pairs_but_goes_on():
    # ab x1 (score 1/(1*1) = 1) is below min_frequency 2; cd x2 (2/(2*2) = 1/2) is merged; training stops after.
    assert learn([[0, 1], [2, 3]], [1, 2], 4, 10, min_frequency=2) == [(2, 3, 2)]


corpora = st.integers(2, 4).flatmap(lambda n_base: st.tuples(
    st.just(n_base),
    st.lists(st.lists(st.integers(0, n_base - 1), max_size=10), min_size=1, max_size=12),
    st.randoms(use_true_random=False),
))


@settings(max_examples=200, deadline=None)
@given(corpora, st.integers(0, 2), st.sampled_from([0, 0, 3]))
def test_kernel_equals_reference_on_random_corpora(corpus, min_frequency, max_token_length):
    n_base, words, rnd = corpus
    counts = [rnd.randint(0, 4) for _ in words]
    kw = dict(min_frequency=min_frequency, max_token_length=max_token_length)
    assert learn(words, counts, n_base, 40, **kw) == reference(words, counts, n_base, 40, **kw)


def test_moby_dick_slice_equals_reference():
    words, counts, chars = char_corpus(moby_text()[:100_000])
    expected = reference(words, counts, len(chars), 250)
    assert len(expected) == 250
    assert learn(words, counts, len(chars), 250) == expected


def test_chunked_run_and_growth_equal_one_run(monkeypatch):
    words, counts, chars = char_corpus(moby_text()[:40_000])
    symbols, offsets = ref.to_csr(words)
    whole = sw.learn_wordpiece_merges(symbols, offsets, counts, len(chars), 600)
    monkeypatch.setattr(sw, "_INITIAL_RECORDS", 1)
    monkeypatch.setattr(sw, "_INITIAL_HEAP", 1)
    seen = []
    chunked = sw.learn_wordpiece_merges(symbols, offsets, counts, len(chars), 600, progress=seen.append,
                                        chunk_size=100)
    for a, b in zip(whole, chunked):
        np.testing.assert_array_equal(a, b)
    assert seen == [100, 200, 300, 400, 500, 600]


def _cmp(c1, a1, b1, c2, a2, b2):
    from tokembed.plugins._subword._kernels import exact_ratio_cmp

    return exact_ratio_cmp(c1, a1, b1, c2, a2, b2)


big = st.integers(1, 2**63 - 1)


@settings(max_examples=500, deadline=None)
@given(big, big, big, big, big, big)
def test_exact_ratio_comparison(c1, a1, b1, c2, a2, b2):
    x, y = Fraction(c1, a1 * b1), Fraction(c2, a2 * b2)
    assert _cmp(c1, a1, b1, c2, a2, b2) == (x > y) - (x < y)


@settings(max_examples=300, deadline=None)
@given(big, big, big, st.integers(1, 2**20), st.integers(1, 2**20))
def test_exact_ratio_comparison_of_equal_and_adjacent_ratios(c, a, b, u, v):
    # c/(a*b) == (c*u*v)/((a*u)*(b*v)) exactly; floats cannot tell these apart from a one-unit change
    c, a, b = c >> 41, a >> 22, b >> 22  # keep c*u*v and a*u, b*v below 2**63
    c, a, b = max(c, 1), max(a, 1), max(b, 1)
    assert _cmp(c, a, b, c * u * v, a * u, b * v) == 0
    assert _cmp(c * u * v + 1, a * u, b * v, c, a, b) == 1
    assert _cmp(c * u * v, a * u + 1, b * v, c, a, b) == -1


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="n_base"):
        sw.learn_wordpiece_merges(np.array([0, 3]), np.array([0, 2]), np.array([1]), 3, 5)
