"""The GloVe kernels against hand-computed values and the plain-Python references of ``_glove_naive``."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import _glove_naive as naive
from tokembed.plugins.glove import _kernels as K
from tokembed.plugins.glove.training import epoch_key, make_records, order_bits, row_stride, train


def padded(a: np.ndarray, dim: int) -> np.ndarray:
    """(V, dim + 1) -> the kernels' (V, stride) layout."""
    out = np.zeros((a.shape[0], row_stride(dim)), np.float32)
    out[:, :dim + 1] = a
    return out


# -- the known values of the issue ------------------------------------------------------------------------------
def test_weighting_known_values():
    # (x / 100) ** 0.75: 0.01 ** 0.75 = 0.0316228, 0.5 ** 0.75 = 0.5946036; 1 at and above x_max
    f = K.weighting(np.array([1.0, 50.0, 100.0, 150.0]), 100.0, 0.75)
    assert f.dtype == np.float32
    np.testing.assert_allclose(f, [0.0316228, 0.5946036, 1.0, 1.0], rtol=0, atol=1e-7)
    assert K.weighting(np.array([3.0]), 10.0, 0.0)[0] == 1.0  # alpha = 0: every pair weighs 1


def _four_records():
    # X = 1, 50, 100, 150, each record on its own word and context rows (so no record changes another's rows)
    return make_records(np.arange(4), np.arange(4), np.array([1.0, 50.0, 100.0, 150.0]), 100.0, 0.75)


def test_cost_known_values_with_zero_parameters():
    # all parameters zero: diff = -ln X, J = sum f(X) (ln X)^2 / 2
    #   = (0.0316228 * 0 + 0.5946036 * 3.912023^2 + 1 * 4.605170^2 + 1 * 5.010635^2) / 2
    #   = (9.099729 + 21.207592 + 25.106466) / 2 = 27.7069131; per record 27.7069131 / 4 = 6.9267283
    records = _four_records()
    zero = np.zeros((4, 16), np.float32)
    assert K.total_cost(zero, zero, records, 4) == pytest.approx(27.7069131, abs=2e-6)
    # the epoch cost as the reference reports it: each term before its record's update, halved, over the records
    cost, stopped = K.train_span(zero.copy(), zero.copy(), np.ones_like(zero), np.ones_like(zero), records, 4,
                                 order_bits(4), 1, 0, 4, 0.05, 100.0)
    assert stopped == -1
    assert cost == pytest.approx(27.7069131, abs=2e-6)
    assert cost / 4 == pytest.approx(6.9267283, abs=1e-6)


def test_one_adagrad_step_matches_numpy_reference():
    # a 3-word corpus: "a b c", window 2, harmonic: X[a,b] = X[b,c] = 1, X[a,c] = 1/2, mirrored
    rows = np.array([0, 0, 1, 1, 2, 2])
    cols = np.array([1, 2, 0, 2, 0, 1])
    vals = np.array([1.0, 0.5, 1.0, 1.0, 0.5, 1.0])
    records = make_records(rows, cols, vals, 10.0, 0.75)
    dim = 5
    W, C, GW, GC = K.init_params(3, dim, row_stride(dim), 42)
    # push the parameters away from the initial scale so that the step is not tiny, and give G some history
    rng = np.random.default_rng(0)
    W[:, :dim + 1] = rng.normal(0, 1, (3, dim + 1))
    C[:, :dim + 1] = rng.normal(0, 1, (3, dim + 1))
    GW[:, :dim + 1] = rng.uniform(1, 3, (3, dim + 1))
    GC[:, :dim + 1] = rng.uniform(1, 3, (3, dim + 1))
    ref = [a[:, :dim + 1].copy() for a in (W, C, GW, GC)]
    bits, key = order_bits(6), 12345
    first = naive.permuted_index(0, 6, bits, key)
    r = records[first]
    cost, stopped = K.train_span(W, C, GW, GC, records, dim, bits, key, 0, 1, 0.05, 1.0)  # clip 1: it bites
    assert stopped == -1
    # the reference, written out with NumPy on float32 (the formulas of src/glove.c)
    w, c, gw, gc = ref[0][r["row"]], ref[1][r["col"]], ref[2][r["row"]], ref[3][r["col"]]
    diff = np.float32(np.dot(w[:dim].astype(np.float64), c[:dim]) + w[dim] + c[dim] - r["logx"])
    fdiff = np.float32(r["weight"] * diff)
    u = np.clip(fdiff * c[:dim], -1, 1) * np.float32(0.05)
    v = np.clip(fdiff * w[:dim], -1, 1) * np.float32(0.05)
    new_w = np.append(w[:dim] - u / np.sqrt(gw[:dim]), w[dim] - fdiff / np.sqrt(gw[dim]))
    new_c = np.append(c[:dim] - v / np.sqrt(gc[:dim]), c[dim] - fdiff / np.sqrt(gc[dim]))
    new_gw = np.append(gw[:dim] + u * u, gw[dim] + fdiff * fdiff)
    new_gc = np.append(gc[:dim] + v * v, gc[dim] + fdiff * fdiff)
    np.testing.assert_allclose(W[r["row"], :dim + 1], new_w, rtol=0, atol=1e-6)
    np.testing.assert_allclose(C[r["col"], :dim + 1], new_c, rtol=0, atol=1e-6)
    np.testing.assert_allclose(GW[r["row"], :dim + 1], new_gw, rtol=0, atol=1e-6)
    np.testing.assert_allclose(GC[r["col"], :dim + 1], new_gc, rtol=0, atol=1e-6)
    assert cost == pytest.approx(0.5 * float(fdiff) * float(diff), rel=1e-6)
    # the other rows did not move
    others = [i for i in range(3) if i != r["row"]]
    np.testing.assert_array_equal(W[others, :dim + 1], ref[0][others])


# -- the pieces ---------------------------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3000), st.integers(0, 2**63 - 1))
def test_epoch_order_is_a_permutation_and_matches_the_reference(n, key):
    bits = order_bits(n)
    order = [K.permuted_index(p, n, bits, key) for p in range(n)]
    assert sorted(order) == list(range(n))
    sample = range(0, n, max(1, n // 50))
    assert [order[p] for p in sample] == [naive.permuted_index(p, n, bits, key) for p in sample]


def test_epoch_orders_differ_between_epochs_and_seeds():
    n = 1000
    bits = order_bits(n)
    orders = [[K.permuted_index(p, n, bits, epoch_key(seed, e)) for p in range(n)] for seed in (0, 1) for e in (0, 1)]
    assert len({tuple(o) for o in orders}) == 4
    # a shuffle, not a rotation: neighbours in the order are far apart in the input
    gaps = np.abs(np.diff(orders[0]))
    assert np.median(gaps) > n / 10


def test_init_params_match_reference_and_range():
    W, C, GW, GC = K.init_params(4, 7, row_stride(7), 3)
    w_ref, c_ref = naive.init_params(4, 7, 3)
    np.testing.assert_array_equal(W[:, :8], w_ref)
    np.testing.assert_array_equal(C[:, :8], c_ref)
    assert np.all(np.abs(W[:, :8]) <= 0.5 / 7) and np.all(W[:, 8:] == 0)
    assert np.all(GW == 1.0) and np.all(GC == 1.0)
    big, _, _, _ = K.init_params(500, 50, row_stride(50), 0)
    values = big[:, :51].ravel() * 50  # uniform on [-0.5, 0.5)
    assert abs(values.mean()) < 0.01 and abs(values.var() - 1 / 12) < 0.003
    assert not np.array_equal(big, K.init_params(500, 50, row_stride(50), 1)[0])


@pytest.mark.parametrize("n", [1, 5, 16, 17, 31, 100])
def test_row_dot_lanes(n):
    rng = np.random.default_rng(n)
    a = rng.normal(size=(3, 128)).astype(np.float32)
    b = rng.normal(size=(2, 128)).astype(np.float32)
    records = make_records(np.array([2]), np.array([1]), np.array([math.e]), 100.0, 0.0)  # ln X = 1, f = 1
    # diff = a[2] . b[1] + bias_a + bias_b - 1 with both biases zero: recover the dot product from the cost
    a[2, n] = 0.0
    b[1, n] = 0.0
    cost, _ = K.train_span(a.copy(), b.copy(), np.ones_like(a), np.ones_like(b), records, n, 2, 0, 0, 1, 0.05,
                           100.0)
    expected = naive.dot_lanes(a[2, :n], b[1, :n])
    assert cost == 0.5 * float(np.float32(expected + np.float32(0) + np.float32(0) - np.float32(1.0))) ** 2


def test_nonfinite_error_stops_the_span():
    records = make_records(np.array([0, 1]), np.array([0, 1]), np.array([2.0, 3.0]), 10.0, 0.75)
    W, C, GW, GC = K.init_params(2, 4, 16, 0)
    W[0, 0] = np.nan
    W[1, 0] = np.nan
    cost, stopped = K.train_span(W, C, GW, GC, records, 4, 2, 7, 0, 2, 0.05, 100.0)
    assert stopped == 0 and cost == 0.0


# -- whole training against the plain-Python loop -----------------------------------------------------------------
def test_training_matches_python_reference_on_a_tiny_matrix():
    rng = np.random.default_rng(5)
    V, dim = 6, 19  # 19: one full block of 16 lanes and a tail of 3
    dense = np.triu(rng.integers(0, 4, (V, V)) * rng.uniform(0.2, 30, (V, V)))
    dense = dense + dense.T
    rows, cols = np.nonzero(dense)
    vals = dense[rows, cols]
    records = make_records(rows, cols, vals, 10.0, 0.75)
    got = train(records, V, dim, epochs=4, learning_rate=0.05, clip=100.0, seed=9, workers=1)
    W, C, costs = naive.train(rows.tolist(), cols.tolist(), vals.tolist(), V, dim, epochs=4, x_max=10.0,
                              alpha=0.75, learning_rate=0.05, clip=100.0, seed=9, epoch_key=epoch_key)
    np.testing.assert_allclose(got.word, W[:, :dim], rtol=0, atol=1e-6)
    np.testing.assert_allclose(got.context, C[:, :dim], rtol=0, atol=1e-6)
    np.testing.assert_allclose(got.word_bias, W[:, dim], rtol=0, atol=1e-6)
    np.testing.assert_allclose(got.context_bias, C[:, dim], rtol=0, atol=1e-6)
    np.testing.assert_allclose(got.costs, costs, rtol=1e-6)
    assert costs[-1] < costs[0]  # it learns


def test_training_is_deterministic_and_threads_stay_close():
    rng = np.random.default_rng(1)
    V = 40
    dense = np.triu(rng.poisson(2.0, (V, V)) * rng.uniform(0.5, 5, (V, V)))
    dense = dense + dense.T
    rows, cols = np.nonzero(dense)
    records = make_records(rows, cols, dense[rows, cols], 10.0, 0.75)
    a = train(records, V, 10, epochs=5, learning_rate=0.05, clip=100.0, seed=3, workers=1)
    b = train(records, V, 10, epochs=5, learning_rate=0.05, clip=100.0, seed=3, workers=1)
    assert a.word.tobytes() == b.word.tobytes() and a.costs == b.costs
    c = train(records, V, 10, epochs=5, learning_rate=0.05, clip=100.0, seed=3, workers=3)
    assert np.isfinite(c.word).all() and c.costs[-1] < c.costs[0]
    assert c.costs[-1] == pytest.approx(a.costs[-1], rel=0.2)
