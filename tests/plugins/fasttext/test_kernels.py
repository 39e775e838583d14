"""The Numba kernels against the plain-Python references of ``naive.py``, on tiny inputs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokembed.plugins.fasttext import _kernels_corpus as CK
from tokembed.plugins.fasttext import _kernels as K
from tokembed.plugins.fasttext import training as T

import _fasttext_naive as naive

FULL = 1 << 32


def test_dot_is_the_documented_fixed_order_sum_bit_for_bit():
    rng = np.random.default_rng(0)
    for d in (1, 7, 8, 9, 16, 100, 101, 300):
        a = rng.standard_normal(d).astype(np.float32)
        b = rng.standard_normal(d).astype(np.float32)
        got = K.dot(a, b)
        assert got == naive.dot8(a, b), d
        assert got == pytest.approx(float(a.astype(np.float64) @ b.astype(np.float64)), rel=1e-5, abs=1e-5)


def test_splitmix64_matches_the_reference():
    state = np.array([12345], np.uint64)
    ref = naive.SplitMix64(12345)
    assert [int(K.splitmix64(state)) for _ in range(5)] == [ref.next() for _ in range(5)]
    # the published first output for seed 0 (Vigna's splitmix64.c)
    assert int(K.splitmix64(np.array([0], np.uint64))) == 0xE220A8397B1DCDAF


def test_sigmoid_table_is_fasttexts():
    table = K.sigmoid_table()
    assert table.shape == (513,) and table.dtype == np.float32
    assert table[0] == np.float32(1 / (1 + np.exp(8.0)))
    assert table[256] == np.float32(0.5)
    assert table[512] == np.float32(1 / (1 + np.exp(-8.0)))


@settings(deadline=None, max_examples=40)
@given(st.lists(st.integers(0, 1000), min_size=1, max_size=30).filter(lambda w: sum(w) > 0))
def test_alias_table_gives_exactly_the_law(weights):
    w = np.array(weights, np.float64)
    thr, alias = K.alias_table(w)
    V = len(w)
    # probability of i = sum over cells c of P(cell c) * (own share if c == i, alias share if alias[c] == i)
    prob = np.zeros(V)
    for c in range(V):
        own = min(int(thr[c]), FULL) / FULL
        prob[c] += own / V
        prob[alias[c]] += (1 - own) / V
    np.testing.assert_allclose(prob, w / w.sum(), atol=V * 2.0**-31)


@settings(deadline=None, max_examples=40)
@given(st.lists(st.integers(1, 50), min_size=1, max_size=25))
def test_huffman_paths_match_fasttexts_tree(counts):
    counts = sorted(counts, reverse=True)
    offsets, points, codes = K.huffman_paths(np.array(counts, np.int64))
    ref = naive.huffman(counts)
    for i, (p, c) in enumerate(ref):
        assert points[offsets[i]:offsets[i + 1]].tolist() == p
        assert codes[offsets[i]:offsets[i + 1]].tolist() == c
    if len(counts) > 1:  # a Huffman code: prefix-free, Kraft sum 1
        assert sum(2.0 ** -(offsets[i + 1] - offsets[i]) for i in range(len(counts))) == pytest.approx(1.0)


def test_remap_range_drops_unmapped_tokens_and_cuts_pieces():
    ids = np.array([0, 3, 1, 3, 2, 3, 0, 0, 0], np.int32)
    offsets = np.array([0, 2, 2, 9], np.int64)
    # document 0 keeps [1, 2]; document 1 is empty; document 2 keeps [2, 0, 2, 1, 1, 1], cut at 4 tokens
    out, pieces = CK.remap_range(ids, offsets, 0, 9, 0, np.array([1, -1, 0, 2], np.int32), 4)
    assert out.tolist() == [1, 2, 2, 0, 2, 1, 1, 1] and pieces.tolist() == [0, 2, 6, 8]
    # from the second piece of document 2 (input position 7), as a chunk that starts there reads it
    out, pieces = CK.remap_range(ids, offsets, 7, 9, 2, np.array([1, -1, 0, 2], np.int32), 4)
    assert out.tolist() == [1, 1] and pieces.tolist() == [0, 2]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 9), max_size=12), st.data(), st.integers(1, 4), st.integers(1, 9),
       st.integers(1, 15), st.sampled_from([np.int32, np.uint16, np.uint32]))
def test_planned_chunks_are_the_cut_corpus_grouped_as_a_whole_corpus_copy_would_be(lengths, data, max_piece,
                                                                                    chunk_tokens, read_tokens,
                                                                                    dtype):
    from types import SimpleNamespace

    n_vocab = 5
    offsets = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    ids = np.array(data.draw(st.lists(st.integers(0, n_vocab - 1), min_size=int(offsets[-1]),
                                      max_size=int(offsets[-1]))), dtype)
    token_map = np.array(data.draw(st.lists(st.integers(-1, 3), min_size=n_vocab, max_size=n_vocab)), np.int32)
    corpus = T.plan_corpus(SimpleNamespace(ids=ids, offsets=offsets), token_map, chunk_tokens, max_piece, read_tokens)
    expected = naive.chunk_pieces(naive.cut_corpus(ids, offsets, token_map, max_piece), chunk_tokens)
    got = []
    for c in range(corpus.n_chunks):
        out, pieces = corpus.chunk(c)
        got.append([out[a:b].tolist() for a, b in zip(pieces[:-1], pieces[1:])])
    assert got == expected
    flat = [p for chunk in expected for p in chunk]
    assert (corpus.n_tokens, corpus.n_pieces, corpus.longest) == \
        (sum(map(len, flat)), len(flat), max(map(len, flat), default=0))


def test_compose_vectors_is_the_mean_of_the_rows():
    syn0 = np.arange(12, dtype=np.float32).reshape(6, 2)
    row_offsets = np.array([0, 1, 4], np.int64)
    rows = np.array([0, 1, 3, 3], np.int32)
    out = K.compose_vectors(syn0, row_offsets, rows)
    third = np.float32(1 / 3)  # summed in float32, then multiplied by float32(1 / n), as fastText's Vector::mul
    np.testing.assert_array_equal(out, np.array([[0, 1], [14 * third, 17 * third]], np.float32))


# -- the SGD loop ------------------------------------------------------------------------------------------------
def _tables(rows_list, counts, sample, hs, concentrate=None):
    V = len(rows_list)
    row_offsets = np.zeros(V + 1, np.int64)
    np.cumsum([len(r) for r in rows_list], out=row_offsets[1:])
    rows = np.array([x for r in rows_list for x in r], np.int32)
    counts = np.array(counts, np.int64)
    weights = counts.astype(np.float64) ** 0.75
    if concentrate is not None:  # every negative draw gives this word
        weights = np.zeros(V)
        weights[concentrate] = 1.0
    alias_thr, alias_idx = K.alias_table(weights)
    if hs:
        hs_offsets, hs_points, hs_codes = K.huffman_paths(counts)
    else:
        hs_offsets, hs_points, hs_codes = np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.uint8)
    return T.Tables(row_offsets, rows, T.keep_thresholds(counts, sample), alias_thr, alias_idx, hs_offsets,
                    hs_points, hs_codes, K.sigmoid_table())


def _run_both(docs, rows_list, counts, *, sg, hs, negative=3, window=2, shrink=True, sample=0.0, dim=9, n_rows=None,
              seed=7, words_before=0, concentrate=None):
    tables = _tables(rows_list, counts, sample, hs, concentrate)
    ids = np.array([w for d in docs for w in d], np.int32)
    offsets = np.zeros(len(docs) + 1, np.int64)
    np.cumsum([len(d) for d in docs], out=offsets[1:])
    V = len(rows_list)
    n_rows = n_rows or V
    rng = np.random.default_rng(3)
    syn0 = ((rng.random((n_rows, dim)) - 0.5) / dim).astype(np.float32)
    syn1 = ((rng.random((V, dim)) - 0.5) / dim).astype(np.float32)
    a0, a1, b0, b1 = syn0.copy(), syn1.copy(), syn0.copy(), syn1.copy()
    total = 10 * int(offsets[-1])
    got = K.train_chunk(ids, offsets, 0, len(docs), a0, a1, tables.row_offsets, tables.rows, tables.keep_thr,
                        tables.alias_thr, tables.alias_idx, tables.hs_offsets, tables.hs_points, tables.hs_codes,
                        tables.sigmoid, sg, negative, hs, window, shrink, 0.05, 0.001, np.int64(words_before),
                        np.int64(total), np.uint64(seed))
    paths = naive.huffman(list(counts)) if hs else None
    want = naive.train_chunk(ids, offsets, 0, len(docs), b0, b1, rows_list, tables.keep_thr, tables.alias_thr,
                             tables.alias_idx, paths, tables.sigmoid, sg, negative, hs, window, shrink, 0.05, 0.001,
                             words_before, total, seed)
    return got, want, (a0, a1), (b0, b1), syn0, syn1


@pytest.mark.parametrize("sg", [True, False], ids=["skipgram", "cbow"])
@pytest.mark.parametrize("hs", [False, True], ids=["negative", "hs"])
@pytest.mark.parametrize("subwords", [False, True], ids=["words", "ngrams"])
def test_train_chunk_matches_the_reference_bit_for_bit(sg, hs, subwords):
    V = 5
    if subwords:  # each word has its own row and some shared "n-gram" rows, one of them twice
        rows_list = [[0, 5, 6], [1, 6, 7, 7], [2], [3, 8, 5], [4, 9]]
        n_rows = 10
    else:
        rows_list = [[i] for i in range(V)]
        n_rows = V
    docs = [[0, 1, 2, 0, 3, 0, 1], [4, 2], [], [1, 1, 0, 3, 2, 4, 0, 0]]
    counts = [7, 4, 3, 2, 2]
    got, want, (a0, a1), (b0, b1), syn0, syn1 = _run_both(docs, rows_list, counts, sg=sg, hs=hs, sample=0.2,
                                                         n_rows=n_rows, words_before=5)
    assert tuple(got) == want
    np.testing.assert_array_equal(a0, b0)
    np.testing.assert_array_equal(a1, b1)
    assert not np.array_equal(a0, syn0) and not np.array_equal(a1, syn1)  # it did train


def test_subsampling_and_windows_follow_the_seed():
    docs = [[0, 1, 2, 3, 4] * 4]
    rows = [[i] for i in range(5)]
    one = _run_both(docs, rows, [20, 1, 1, 1, 1], sg=True, hs=False, sample=0.05, seed=1)
    two = _run_both(docs, rows, [20, 1, 1, 1, 1], sg=True, hs=False, sample=0.05, seed=2)
    assert tuple(one[0]) == one[1] and tuple(two[0]) == two[1]
    assert one[0][1] < 20  # word 0 is frequent enough to be subsampled
    assert not np.array_equal(one[2][0], two[2][0])


def test_one_skipgram_negative_sampling_step_by_hand():
    """Document [0, 1], window 1, no subsampling, every negative draw is word 2, two negatives.

    Centre 0 predicts 1: h = v0; g+ = lr (1 - s(h.u1)); grad = g+ u1; u1 += g+ h; then twice for the negative 2:
    g- = -lr s(h.u2); grad += g- u2; u2 += g- h; finally v0 += grad. Then centre 1 predicts 0 the same way.
    s is fastText's table sigmoid; lr = alpha at the start of the document (nothing read before).
    """
    table = K.sigmoid_table()

    def s(x):
        return naive.sigmoid_lookup(np.float32(x), table)

    got, want, (v, u), _, v_start, u_start = _run_both([[0, 1]], [[0], [1], [2]], [2, 1, 1], sg=True, hs=False,
                                                       negative=2, window=1, shrink=False, dim=8, concentrate=2)
    lr = 0.05
    v_ref = v_start.astype(np.float64)
    u_ref = u_start.astype(np.float64)
    for centre, target in ((0, 1), (1, 0)):
        h = v_ref[centre].copy()
        grad = np.zeros(8)
        g = lr * (1 - s(h @ u_ref[target]))
        grad += g * u_ref[target]
        u_ref[target] += g * h
        for _ in range(2):
            g = -lr * s(h @ u_ref[2])
            grad += g * u_ref[2]
            u_ref[2] += g * h
        v_ref[centre] += grad
    assert got == (2, 2)
    np.testing.assert_allclose(v, v_ref, atol=1e-7)
    np.testing.assert_allclose(u, u_ref, atol=1e-7)
    assert not np.allclose(v, v_start)


def test_a_negative_draw_equal_to_the_target_is_skipped():
    # all negative mass on word 1, which is also the target of centre 0: only the positive step happens there
    got, _, (v, u), _, v0, u0 = _run_both([[0, 1]], [[0], [1]], [1, 1], sg=True, hs=False, negative=5, window=1,
                                          shrink=False, concentrate=1)
    # centre 1 predicts 0 and draws 1 five times as negatives (1 != 0): u1 moves; centre 0 only pushes u1 up once
    assert got == (2, 2)
    assert not np.allclose(u[1], u0[1]) and not np.allclose(u[0], u0[0])


def test_learning_rate_decays_linearly_to_min_alpha():
    # a word alone in its document trains nothing; two documents of one pair read at different progress points:
    # the update of the second is smaller by the ratio of the learning rates (tiny vectors: sigmoid ~ 1/2 both times)
    rows = [[0], [1]]
    early = _run_both([[0, 1]], rows, [1, 1], sg=True, hs=True, window=1, shrink=False, words_before=0)
    late = _run_both([[0, 1]], rows, [1, 1], sg=True, hs=True, window=1, shrink=False, words_before=10)
    d_early = np.abs(early[2][1] - early[5]).sum()
    d_late = np.abs(late[2][1] - late[5]).sum()
    lr_early, lr_late = 0.05, max(0.001, 0.05 - (0.05 - 0.001) * 10 / 20)
    assert d_late / d_early == pytest.approx(lr_late / lr_early, rel=0.05)
