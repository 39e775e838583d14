"""Slow, plain-Python/NumPy references of the GloVe kernels (``tokembed.plugins.glove._kernels``), written from the
formulas of the paper and of the reference ``src/glove.c``, for the tests to compare the fast kernels against.

Nothing here imports the kernels: the permutation, the generator, the weighting and the AdaGrad update are
written again, readably, one record at a time.
"""

from __future__ import annotations

import math

import numpy as np

M64 = (1 << 64) - 1


def mix64(z: int) -> int:
    """splitmix64's finaliser on Python ints (mod 2 ** 64)."""
    z &= M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def uniform(seed: int, i: int) -> float:
    """Draw ``i`` of the counter-based stream ``seed``, in [0, 1)."""
    z = mix64((seed * 0x9E3779B97F4A7C15 + i * 0xD1B54A32D192ED03 + 1) & M64)
    return (z >> 11) / 2.0**53


def init_params(n_words: int, dim: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Word and context parameters, (V, dim + 1) float32 each (bias last): uniform in [-0.5, 0.5) / dim, drawn
    in the order word rows, then context rows, each row's dim + 1 values in column order."""
    values = np.array([[np.float32((uniform(seed, r * (dim + 1) + c) - 0.5) / dim) for c in range(dim + 1)]
                       for r in range(2 * n_words)], dtype=np.float32)
    return values[:n_words].copy(), values[n_words:].copy()


def feistel(x: int, bits: int, key: int) -> int:
    """Four alternating Feistel rounds on ``bits`` bits (low half ``bits // 2``), round keys from ``key``."""
    keys = [mix64(key * 4 + r + 1) for r in range(4)]
    a, b = bits - bits // 2, bits // 2  # a: the half that changes, b: the half that feeds the round function
    for r in range(4):
        left, right = x >> b, x & ((1 << b) - 1)
        left = (left ^ mix64(right ^ keys[r])) & ((1 << a) - 1)
        x = (right << a) | left
        a, b = b, a
    return x


def permuted_index(pos: int, n: int, bits: int, key: int) -> int:
    """Position ``pos`` of the epoch order: Feistel with cycle walking into [0, n)."""
    x = feistel(pos, bits, key)
    while x >= n:
        x = feistel(x, bits, key)
    return x


def weighting(x: float, x_max: float, alpha: float) -> float:
    """f(x) = (x / x_max) ** alpha below x_max, 1 from it up."""
    return 1.0 if x >= x_max else (x / x_max) ** alpha


def dot_lanes(a: np.ndarray, b: np.ndarray, lanes: int = 16) -> np.float32:
    """The kernels' float32 dot product: component k into lane k mod 16 (in order), then the lanes halved."""
    acc = [np.float32(0.0)] * lanes
    for k in range(a.size):
        acc[k % lanes] = np.float32(acc[k % lanes] + np.float32(a[k]) * np.float32(b[k]))
    while len(acc) > 1:
        half = len(acc) // 2
        acc = [np.float32(acc[l] + acc[l + half]) for l in range(half)]
    return acc[0]


def adagrad_step(W, C, GW, GC, i, j, logx, weight, learning_rate, clip) -> float:
    """One record's update, in place, on float32 arrays (V, dim + 1) with the bias last; returns the record's cost
    term 0.5 * f * diff ** 2 (float64), taken before the update."""
    dim = W.shape[1] - 1
    f32 = np.float32
    w, c, gw, gc = W[i], C[j], GW[i], GC[j]
    diff = f32(dot_lanes(w[:dim], c[:dim]) + w[dim] + c[dim] - f32(logx))
    fdiff = f32(f32(weight) * diff)
    eta, lim = f32(learning_rate), f32(clip)
    u = np.clip(fdiff * c[:dim], -lim, lim).astype(np.float32) * eta  # both from the parameters before the step
    v = np.clip(fdiff * w[:dim], -lim, lim).astype(np.float32) * eta
    w[:dim] = w[:dim] - u / np.sqrt(gw[:dim])
    c[:dim] = c[:dim] - v / np.sqrt(gc[:dim])
    gw[:dim] += u * u
    gc[:dim] += v * v
    w[dim] -= fdiff / np.sqrt(gw[dim])
    c[dim] -= fdiff / np.sqrt(gc[dim])
    gw[dim] += fdiff * fdiff
    gc[dim] += fdiff * fdiff
    return 0.5 * float(fdiff) * float(diff)


def train(rows, cols, values, n_words, dim, *, epochs, x_max, alpha, learning_rate, clip, seed, epoch_key):
    """The whole (single-thread) training: records in the order of each epoch's permutation, one AdaGrad step
    each. ``epoch_key(seed, epoch)`` gives the epoch's key (the function under test supplies it, the order itself
    is recomputed here). Returns (W, C, costs) with W and C (V, dim + 1) float32."""
    W, C = init_params(n_words, dim, seed)
    GW, GC = np.ones_like(W), np.ones_like(C)
    n = len(rows)
    bits = max(2, (n - 1).bit_length())
    logx = [np.float32(math.log(v)) for v in values]
    weight = [np.float32(weighting(v, x_max, alpha)) for v in values]
    costs = []
    for epoch in range(epochs):
        key = epoch_key(seed, epoch)
        total = 0.0
        for pos in range(n):
            r = permuted_index(pos, n, bits, key)
            total += adagrad_step(W, C, GW, GC, rows[r], cols[r], logx[r], weight[r], learning_rate, clip)
        costs.append(total / n)
    return W, C, costs
