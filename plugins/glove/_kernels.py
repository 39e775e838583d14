"""Numba kernels of GloVe training: weighting, parameter initialisation, the per-epoch record order, AdaGrad updates.

Entry points, all ``@njit(cache=True, nogil=True)`` (the trainer runs :func:`train_span` on several threads at once,
lock-free, as the reference's pthreads do), NumPy arrays and scalars in and out:

- :func:`pack_records`: the co-occurrence entries as one array of 16-byte records (word row, context row,
  ln X, f(X)), so that fetching a record is one cache line;
- :func:`init_params`: the uniform initialisation of the parameters from a seed (our own generator, not NumPy's or
  Numba's global state, so the draw is the same in every process);
- :func:`train_span`: AdaGrad updates over one thread's share of an epoch's shuffled order;
- :func:`total_cost`: the cost J of the current parameters over all records (for tests and diagnostics).

Layout of the parameters (the reference's ``W`` array split in four, in float32): ``W`` and ``C`` have shape
(V, stride); row ``i`` of ``W`` holds word ``i``'s vector ``w_i`` in columns ``0 .. dim - 1`` and its bias ``b_i`` in
column ``dim``; row ``j`` of ``C`` holds context ``j``'s ``w~_j`` and ``b~_j`` the same way. ``GW`` and ``GC`` hold
their AdaGrad accumulators. Columns past ``dim`` (padding of each row to a multiple of 16 floats, so that every
row starts on a 64-byte cache line) are never read. Four separate arrays, so that LLVM can prove the rows an update
writes do not overlap and vectorise the update loop.

The record order of an epoch is a pseudo-random permutation of ``0 .. n_records - 1`` computed on the fly: a
four-round Feistel network on the smallest power of two >= n_records, keyed by the epoch's key, with cycle walking
to stay inside the range (Black and Rogaway, "Ciphers with arbitrary finite domains", CT-RSA 2002). No permutation
array is stored: an epoch's order costs a few integer operations per record and nothing in memory, and each thread
gathers its records in small blocks (``_BLOCK`` records) before updating, so the random reads overlap.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

#: The packed co-occurrence record: word row, context row, ln X_ij and the weight f(X_ij).
RECORD = np.dtype([("row", np.int32), ("col", np.int32), ("logx", np.float32), ("weight", np.float32)])

#: Records gathered per block by :func:`train_span` (their random reads then overlap in the memory system).
_BLOCK = 256

#: How many records ahead :func:`train_span` asks for the parameter rows it will update.
_AHEAD = 4


#: Lanes of the dot product (:func:`_row_dot`): component ``k`` is added into lane ``k mod LANES``.
LANES = 16


@intrinsic
def _sqrt32(typingctx, x):
    """IEEE square root of a float32 as LLVM's ``llvm.sqrt.f32`` intrinsic (correctly rounded, as ``sqrtf``).

    ``np.sqrt`` calls the C library's ``sqrtf``, which may set ``errno`` and so keeps LLVM from vectorising the
    update loop; the intrinsic gives the same values and lets it.
    """
    sig = types.float32(types.float32)

    def codegen(context, builder, signature, args):
        fn = builder.module.declare_intrinsic("llvm.sqrt", [ir.FloatType()])
        return builder.call(fn, args)

    return sig, codegen


def _row_pointer(context, builder, aryty, ary, row):
    """``i8*`` to the first byte of row ``row`` of a 2-D array."""
    arr = context.make_array(aryty)(context, builder, ary)
    stride = builder.extract_value(arr.strides, 0)
    base = builder.bitcast(arr.data, ir.IntType(8).as_pointer())
    return builder.gep(base, [builder.mul(row, stride)])


@intrinsic
def _row_dot(typingctx, A, i, B, j, n):
    """``sum(A[i, k] * B[j, k] for k < n)`` for 2-D float32 arrays with contiguous rows, in float32, vectorised
    without reassociating: products are added into LANES accumulator lanes (component ``k`` into lane
    ``k mod LANES``, in increasing ``k``), then the lanes are summed by halving (lane ``l`` plus lane
    ``l + LANES / 2``, and again, down to one). The order is fixed, so the result is the same on every call.
    Plain NumPy gives the same value with ``lanes = (a * b).reshape(-1, 16).sum(0)`` (zero-padded) and that
    halving."""
    sig = types.float32(A, types.intp, B, types.intp, types.intp)

    def codegen(context, builder, signature, args):
        a, ia, b, jb, nn = args
        f32 = ir.FloatType()
        vec = ir.VectorType(f32, LANES)
        pa = builder.bitcast(_row_pointer(context, builder, signature.args[0], a, ia), f32.as_pointer())
        pb = builder.bitcast(_row_pointer(context, builder, signature.args[2], b, jb), f32.as_pointer())
        acc = cgutils.alloca_once_value(builder, ir.Constant(vec, [0.0] * LANES))
        nblocks = builder.udiv(nn, ir.Constant(nn.type, LANES))
        with cgutils.for_range(builder, nblocks) as loop:
            off = builder.mul(loop.index, ir.Constant(nn.type, LANES))
            va = builder.load(builder.bitcast(builder.gep(pa, [off]), vec.as_pointer()), align=4)
            vb = builder.load(builder.bitcast(builder.gep(pb, [off]), vec.as_pointer()), align=4)
            builder.store(builder.fadd(builder.load(acc), builder.fmul(va, vb)), acc)
        done = builder.mul(nblocks, ir.Constant(nn.type, LANES))
        with cgutils.for_range(builder, builder.sub(nn, done)) as loop:
            k = builder.add(done, loop.index)
            x = builder.fmul(builder.load(builder.gep(pa, [k])), builder.load(builder.gep(pb, [k])))
            v = builder.load(acc)
            lane = builder.trunc(loop.index, ir.IntType(32))
            builder.store(builder.insert_element(v, builder.fadd(builder.extract_element(v, lane), x), lane), acc)
        v = builder.load(acc)
        width = LANES
        while width > 1:
            half = width // 2
            i32v = ir.VectorType(ir.IntType(32), half)
            lo = builder.shuffle_vector(v, v, ir.Constant(i32v, list(range(half))))
            hi = builder.shuffle_vector(v, v, ir.Constant(i32v, list(range(half, width))))
            v = builder.fadd(lo, hi)
            width = half
        return builder.extract_element(v, ir.Constant(ir.IntType(32), 0))

    return sig, codegen


@intrinsic
def _prefetch_row(typingctx, A, i, nbytes):
    """Ask the CPU to fetch the first ``nbytes`` of row ``i`` of a 2-D array into cache, for writing
    (``llvm.prefetch``: a hint, with no effect on any value)."""
    sig = types.void(A, types.intp, types.intp)

    def codegen(context, builder, signature, args):
        a, ia, nb = args
        p = _row_pointer(context, builder, signature.args[0], a, ia)
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                                            "llvm.prefetch.p0")
        lines = builder.udiv(builder.add(nb, ir.Constant(nb.type, 63)), ir.Constant(nb.type, 64))
        with cgutils.for_range(builder, lines) as loop:
            q = builder.gep(p, [builder.mul(loop.index, ir.Constant(nb.type, 64))])
            builder.call(fn, [q, ir.Constant(i32, 1), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True, nogil=True, error_model="numpy")
def _mix64(z: np.uint64) -> np.uint64:
    """splitmix64's finaliser (Steele, Lea and Flood 2014): a bijective 64-bit mixing function."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True, nogil=True, error_model="numpy")
def _uniform(seed: np.uint64, i: np.uint64) -> float:
    """The ``i``-th draw of stream ``seed``: a float64 uniform in [0, 1) with 53 random bits (counter-based)."""
    z = _mix64(seed * np.uint64(0x9E3779B97F4A7C15) + i * np.uint64(0xD1B54A32D192ED03) + np.uint64(1))
    return float(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True, nogil=True, error_model="numpy")
def init_params(n_words: int, dim: int, stride: int, seed: int
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Initial parameters and accumulators, as the reference: every value (vector components and biases, word and
    context) uniform in [-0.5, 0.5) / dim, every accumulator 1.0 (so the first step has the full learning rate).

    Parameters
    ----------
    n_words : int
        V, the vocabulary size (>= 1).
    dim : int
        Vector size (>= 1).
    stride : int
        Row length of the arrays (>= dim + 1).
    seed : int
        Seed (>= 0). Word ``i``'s value in column ``c`` (``c = dim``: the bias) is draw ``i * (dim + 1) + c`` of
        the counter-based stream ``seed``, context ``j``'s is draw ``(V + j) * (dim + 1) + c``, so the values do
        not depend on ``stride``.

    Returns
    -------
    W, C, GW, GC : ndarray of float32, shape (n_words, stride)
        Word and context parameters (vector, then bias in column ``dim``) and their accumulators. Padding columns
        are 0 in ``W`` and ``C`` and 1 in ``GW`` and ``GC``.
    """
    W = np.zeros((n_words, stride), dtype=np.float32)
    C = np.zeros((n_words, stride), dtype=np.float32)
    s = np.uint64(seed)
    scale = 1.0 / dim
    for r in range(2 * n_words):
        base = np.uint64(r) * np.uint64(dim + 1)
        for c in range(dim + 1):
            value = np.float32((_uniform(s, base + np.uint64(c)) - 0.5) * scale)
            if r < n_words:
                W[r, c] = value
            else:
                C[r - n_words, c] = value
    return W, C, np.ones((n_words, stride), dtype=np.float32), np.ones((n_words, stride), dtype=np.float32)


@njit(cache=True, nogil=True, error_model="numpy")
def weighting(x: np.ndarray, x_max: float, alpha: float) -> np.ndarray:
    """GloVe's weighting function f(x) = (x / x_max) ** alpha for x < x_max, 1 from x_max up.

    Parameters
    ----------
    x : ndarray of float (n,)
        Co-occurrence values (> 0).
    x_max, alpha : float
        The cut-off (> 0) and the exponent (>= 0).

    Returns
    -------
    ndarray of float32 (n,)
        Computed in float64, rounded once.
    """
    out = np.empty(x.size, dtype=np.float32)
    for k in range(x.size):
        v = float(x[k])
        out[k] = np.float32(1.0 if v >= x_max else (v / x_max) ** alpha)
    return out


@njit(cache=True, nogil=True, error_model="numpy")
def pack_records(rows: np.ndarray, cols: np.ndarray, values: np.ndarray, x_max: float, alpha: float,
                 out: np.ndarray) -> None:
    """Fill ``out`` (a :data:`RECORD` array of shape (n,)) from co-occurrence entries in COO form.

    Parameters
    ----------
    rows, cols : ndarray of int (n,)
        Word and context indices (rows of the parameter arrays).
    values : ndarray of float (n,)
        X_ij (> 0).
    x_max, alpha : float
        Weighting parameters, see :func:`weighting`.
    out : ndarray of RECORD (n,)
        Written in place: ``row = i``, ``col = j``, ``logx = ln X`` and ``weight = f(X)``, both computed in
        float64 and rounded to float32 once.
    """
    for k in range(rows.size):
        v = float(values[k])
        out[k].row = rows[k]
        out[k].col = cols[k]
        out[k].logx = np.float32(np.log(v))
        out[k].weight = np.float32(1.0 if v >= x_max else (v / x_max) ** alpha)


@njit(cache=True, nogil=True, error_model="numpy")
def _feistel(x: np.uint64, bits_lo: int, bits_hi: int, k0: np.uint64, k1: np.uint64, k2: np.uint64,
             k3: np.uint64) -> np.uint64:
    """Four alternating (unbalanced) Feistel rounds on a ``bits_lo + bits_hi``-bit value: a bijection of
    [0, 2 ** (bits_lo + bits_hi)) chosen by the four round keys."""
    a = bits_hi  # width of the half that is changed
    b = bits_lo  # width of the half that feeds the round function
    for r in range(4):
        key = k0 if r == 0 else (k1 if r == 1 else (k2 if r == 2 else k3))
        mask_a = (np.uint64(1) << np.uint64(a)) - np.uint64(1)
        mask_b = (np.uint64(1) << np.uint64(b)) - np.uint64(1)
        left = x >> np.uint64(b)
        right = x & mask_b
        left = (left ^ _mix64(right ^ key)) & mask_a
        x = (right << np.uint64(a)) | left
        a, b = b, a
    return x


@njit(cache=True, nogil=True, error_model="numpy")
def permuted_index(pos: int, n: int, bits: int, key: int) -> int:
    """Position ``pos`` of an epoch's order: a pseudo-random permutation of [0, n) (n >= 1) keyed by ``key``.

    ``bits`` is the smallest integer with ``2 ** bits >= n`` (at least 2); cycle walking repeats the Feistel
    permutation of [0, 2 ** bits) until the value falls below ``n`` (fewer than 2 steps on average), which
    restricts it to a permutation of [0, n).
    """
    lo = bits // 2
    hi = bits - lo
    k = np.uint64(key)
    k0 = _mix64(k * np.uint64(4) + np.uint64(1))
    k1 = _mix64(k * np.uint64(4) + np.uint64(2))
    k2 = _mix64(k * np.uint64(4) + np.uint64(3))
    k3 = _mix64(k * np.uint64(4) + np.uint64(4))
    x = np.uint64(pos)
    nn = np.uint64(n)
    x = _feistel(x, lo, hi, k0, k1, k2, k3)
    while x >= nn:
        x = _feistel(x, lo, hi, k0, k1, k2, k3)
    return int(x)


@njit(cache=True, nogil=True, error_model="numpy")
def train_span(W: np.ndarray, C: np.ndarray, GW: np.ndarray, GC: np.ndarray, records: np.ndarray, dim: int,
               bits: int, key: int, start: int, stop: int, learning_rate: float, clip: float) -> tuple[float, int]:
    """AdaGrad updates for positions ``start .. stop - 1`` of an epoch's order (one thread's share).

    For the record (i, j, ln X, f) at each position, with ``w = W[i]``, ``c = C[j]`` (vectors of ``dim`` values,
    biases in column ``dim``) and ``gw = GW[i]``, ``gc = GC[j]`` their accumulators::

        diff  = w . c + b_w + b_c - ln X
        fdiff = f * diff                       cost += 0.5 * fdiff * diff
        for k < dim:  u = clip(fdiff * c[k]) * learning_rate     v = clip(fdiff * w[k]) * learning_rate
                      w[k] -= u / sqrt(gw[k]);  gw[k] += u ** 2;  c[k] -= v / sqrt(gc[k]);  gc[k] += v ** 2
        b_w -= fdiff / sqrt(gw[dim]);  gw[dim] += fdiff ** 2;  b_c -= fdiff / sqrt(gc[dim]);  gc[dim] += fdiff ** 2

    where ``clip(g)`` limits g to [-clip, clip]. Both gradients of a record use the parameters as they were before
    the record. This is the reference's update (``src/glove.c`` of stanfordnlp/GloVe since it clips gradients;
    there the biases step without the learning rate and unclipped, and so do they here). The dot product is summed
    in 16 float32 lanes (:func:`_row_dot`); everything is float32 except the cost (float64), and the result is
    the same on every run of the same kernel. ``error_model="numpy"``: a division by zero (impossible here, every
    accumulator is >= 1) would give inf rather than raise, which lets LLVM vectorise the loop.

    Parameters
    ----------
    W, C : ndarray of float32, shape (V, stride)
        Word and context parameters (vector in columns ``0 .. dim - 1``, bias in column ``dim``), updated in place;
        other threads may update them at the same time (Hogwild: no locks, as the reference).
    GW, GC : ndarray of float32, shape (V, stride)
        Their AdaGrad accumulators, updated in place.
    records : ndarray of RECORD (n,)
        From :func:`pack_records`.
    dim : int
        Vector size.
    bits, key : int
        The epoch's order, see :func:`permuted_index`.
    start, stop : int
        The positions of the order this call visits.
    learning_rate, clip : float
        The AdaGrad step of the vector components and their gradient clipping bound.

    Returns
    -------
    cost : float
        Sum over the visited records of ``0.5 * fdiff * diff`` (float64), each taken before its record's update.
    stopped : int
        -1 when every record was visited; otherwise the position at which ``diff`` was not finite (NaN or inf):
        the call stops there, without updating from that record.
    """
    n = records.size
    eta = np.float32(learning_rate)
    lim = np.float32(clip)
    blk_row = np.empty(_BLOCK, dtype=np.int64)
    blk_col = np.empty(_BLOCK, dtype=np.int64)
    blk_logx = np.empty(_BLOCK, dtype=np.float32)
    blk_weight = np.empty(_BLOCK, dtype=np.float32)
    blk_index = np.empty(_BLOCK, dtype=np.int64)
    row_bytes = 4 * (dim + 1)
    cost = 0.0
    pos = start
    while pos < stop:
        m = min(_BLOCK, stop - pos)
        for t in range(m):
            blk_index[t] = permuted_index(pos + t, n, bits, key)
        for t in range(m):
            rec = records[blk_index[t]]
            blk_row[t] = rec.row
            blk_col[t] = rec.col
            blk_logx[t] = rec.logx
            blk_weight[t] = rec.weight
        for t in range(m):
            if t + _AHEAD < m:
                _prefetch_row(W, blk_row[t + _AHEAD], row_bytes)
                _prefetch_row(GW, blk_row[t + _AHEAD], row_bytes)
                _prefetch_row(C, blk_col[t + _AHEAD], row_bytes)
                _prefetch_row(GC, blk_col[t + _AHEAD], row_bytes)
            i = blk_row[t]
            j = blk_col[t]
            dot = _row_dot(W, i, C, j, dim)
            diff = dot + W[i, dim] + C[j, dim] - blk_logx[t]
            if not np.isfinite(diff):
                return cost, pos + t
            fdiff = blk_weight[t] * diff
            cost += 0.5 * float(fdiff) * float(diff)
            for k in range(dim):
                wk = W[i, k]
                ck = C[j, k]
                u = min(max(fdiff * ck, -lim), lim) * eta
                v = min(max(fdiff * wk, -lim), lim) * eta
                W[i, k] = wk - u / _sqrt32(GW[i, k])
                C[j, k] = ck - v / _sqrt32(GC[j, k])
                GW[i, k] += u * u
                GC[j, k] += v * v
            W[i, dim] -= fdiff / _sqrt32(GW[i, dim])
            C[j, dim] -= fdiff / _sqrt32(GC[j, dim])
            f2 = fdiff * fdiff
            GW[i, dim] += f2
            GC[j, dim] += f2
        pos += m
    return cost, -1


@njit(cache=True, nogil=True, error_model="numpy")
def total_cost(W: np.ndarray, C: np.ndarray, records: np.ndarray, dim: int) -> float:
    """J = sum over records of 0.5 * f(X) * (w_i . c_j + b_i + b~_j - ln X) ** 2 for the current parameters (no
    update), in float64. Arguments as in :func:`train_span`."""
    total = 0.0
    for r in range(records.size):
        rec = records[r]
        i = rec.row
        j = rec.col
        dot = 0.0
        for k in range(dim):
            dot += float(W[i, k]) * float(C[j, k])
        diff = dot + float(W[i, dim]) + float(C[j, dim]) - float(rec.logx)
        total += 0.5 * float(rec.weight) * diff * diff
    return total
