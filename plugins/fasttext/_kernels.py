"""Numba kernels of the fastText / word2vec trainer: character n-gram rows, sampling tables and the SGD loop.

All are module-level ``@njit(cache=True, nogil=True)`` functions taking NumPy arrays and scalars (docs/architecture.md,
"Kernels"). The caller (``training.py``) validates and prepares the arrays; the kernels assume valid input. Each is
checked against a plain-Python reference in ``tests/plugins/fasttext``.

- :func:`ngram_rows`: for every vocabulary word, the rows of the input matrix that make its vector (the word's own
  row, then one row per character n-gram of ``"<" + word + ">"``, hashed as Facebook's fastText does);
- :func:`alias_table`: Walker's alias table, to draw negative samples in O(1) from the smoothed unigram law;
- :func:`huffman_paths`: the binary Huffman tree of hierarchical softmax, built as Facebook's fastText does;
- :func:`train_chunk`: one pass of skip-gram or CBOW (negative sampling or hierarchical softmax) over a range of
  documents, updating the shared matrices in place without locks (Hogwild; Recht et al. 2011).

Random numbers come from SplitMix64 (Steele, Lea & Flood 2014) seeded by the caller, so a chunk draws the same
numbers whichever thread runs it. The kernels that read the corpus itself (count, plan, remap) are in
``_kernels_corpus.py``.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

#: FNV-1a 32-bit offset basis and prime (Fowler, Noll & Vo), as in fastText's ``Dictionary::hash``.
FNV_OFFSET = 2166136261
FNV_PRIME = 16777619
#: The sigmoid table of fastText's ``Loss``: 512 steps over [-8, 8] (513 entries).
SIGMOID_TABLE_SIZE = 512
MAX_SIGMOID = 8

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S32 = np.uint64(32)
_LOW32 = np.uint64(0xFFFFFFFF)


def sigmoid_table() -> np.ndarray:
    """``sigmoid(x)`` at ``x = 16 i / 512 - 8`` for ``i = 0 .. 512``, float32 (fastText's ``t_sigmoid_``)."""
    x = np.arange(SIGMOID_TABLE_SIZE + 1, dtype=np.float64) * (2 * MAX_SIGMOID) / SIGMOID_TABLE_SIZE - MAX_SIGMOID
    return (1.0 / (1.0 + np.exp(-x))).astype(np.float32)


# -- random numbers ------------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def splitmix64(state):
    """The next 64-bit output of SplitMix64; ``state`` (uint64 array of shape (1,)) is advanced in place."""
    z = state[0] + _GOLDEN
    state[0] = z
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit(cache=True, nogil=True)
def _below(r, n):
    """An integer in ``[0, n)`` from the high 32 bits of ``r`` (multiply-shift; ``n < 2**32``)."""
    return np.int64(((r >> _S32) * np.uint64(n)) >> _S32)


# -- character n-grams ---------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def _word_ngrams(data, lo, hi, minn, maxn, bucket, base, out, k):
    """Append to ``out[k:]`` the rows ``base + hash % bucket`` of the n-grams of ``"<" + data[lo:hi] + ">"``.

    Positions ``lo - 1`` and ``hi`` stand for ``"<"`` and ``">"``. N-grams are taken in fastText's order (by start
    code point, then by length ``minn .. maxn`` in code points), the one-character n-grams ``"<"`` and ``">"``
    excepted. The hash is FNV-1a over the UTF-8 bytes, each byte sign-extended to 32 bits before the XOR (what
    fastText's ``uint32_t(int8_t(c))`` does). Returns the new ``k``; with ``out`` of length 0 only counts.
    """
    end = hi + 1  # one past ">"
    for i in range(lo - 1, end):
        if i >= lo and i < hi and (data[i] & 0xC0) == 0x80:
            continue  # a UTF-8 continuation byte does not start a character
        h = np.int64(FNV_OFFSET)
        j = i
        n = 0
        while j < end and n < maxn:
            # append one character: its lead byte and its continuation bytes
            while True:
                if j == lo - 1:
                    b = 60  # "<"
                elif j == hi:
                    b = 62  # ">"
                else:
                    b = np.int64(data[j])
                if b >= 128:
                    b = b | 0xFFFFFF00  # sign extension of the byte to 32 bits
                h = ((h ^ b) * FNV_PRIME) & 0xFFFFFFFF
                j += 1
                if not (j >= lo and j < hi and (data[j] & 0xC0) == 0x80):
                    break
            n += 1
            if n >= minn and not (n == 1 and (i == lo - 1 or j == end)):
                if out.shape[0] > 0:
                    out[k] = base + h % bucket
                k += 1
    return k


@njit(cache=True, nogil=True)
def ngram_rows(data, offsets, minn, maxn, bucket, skip):
    """The input-matrix rows of every word: its own row, then its character n-gram rows (fastText's layout).

    Parameters
    ----------
    data : ndarray of uint8, shape (n_bytes,)
        The UTF-8 bytes of the ``V`` words, concatenated.
    offsets : ndarray of int64, shape (V + 1,)
        Word ``i`` is ``data[offsets[i]:offsets[i + 1]]``.
    minn, maxn : int
        N-gram lengths in code points; no n-gram when ``maxn < max(minn, 1)``.
    bucket : int
        Rows of the n-gram part of the matrix (>= 1 when n-grams are taken).
    skip : int
        A word index that gets no n-grams (fastText's end-of-sentence word ``"</s>"``), or -1.

    Returns
    -------
    row_offsets : ndarray of int64, shape (V + 1,)
    rows : ndarray of int32, shape (row_offsets[V],)
        Word ``i``'s rows are ``rows[row_offsets[i]:row_offsets[i + 1]]``: ``i`` first, then ``V + hash % bucket``
        for each n-gram (repeats kept: a row that two n-grams share counts twice in the mean, as in fastText).
    """
    V = offsets.shape[0] - 1
    use = maxn >= 1 and maxn >= minn and bucket >= 1
    row_offsets = np.zeros(V + 1, np.int64)
    empty = np.zeros(0, np.int32)
    for i in range(V):
        k = 1
        if use and i != skip:
            k = _word_ngrams(data, offsets[i], offsets[i + 1], minn, maxn, bucket, V, empty, 1)
        row_offsets[i + 1] = row_offsets[i] + k
    rows = np.empty(row_offsets[V], np.int32)
    for i in range(V):
        p = row_offsets[i]
        rows[p] = i
        if use and i != skip:
            _word_ngrams(data, offsets[i], offsets[i + 1], minn, maxn, bucket, V, rows[p:], 1)
    return row_offsets, rows


# -- sampling tables -----------------------------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def alias_table(weights):
    """Walker's alias table for drawing ``i`` with probability ``weights[i] / weights.sum()`` (Vose's method).

    Parameters
    ----------
    weights : ndarray of float64, shape (V,)
        Non-negative, with a positive sum.

    Returns
    -------
    threshold : ndarray of uint64, shape (V,)
        ``round(p_i * 2**32)`` of each cell's own share.
    alias : ndarray of int32, shape (V,)
        The other index of each cell.

    A draw takes a 64-bit random ``r``: cell ``i = ((r >> 32) * V) >> 32``, then ``i`` if ``r & 0xFFFFFFFF <
    threshold[i]``, else ``alias[i]``. Exact to 2**-32 per cell.
    """
    V = weights.shape[0]
    total = 0.0
    for i in range(V):
        total += weights[i]
    scaled = np.empty(V, np.float64)
    for i in range(V):
        scaled[i] = weights[i] * V / total
    small = np.empty(V, np.int64)
    large = np.empty(V, np.int64)
    ns = 0
    nl = 0
    for i in range(V):
        if scaled[i] < 1.0:
            small[ns] = i
            ns += 1
        else:
            large[nl] = i
            nl += 1
    threshold = np.empty(V, np.uint64)
    alias = np.empty(V, np.int32)
    while ns > 0 and nl > 0:
        ns -= 1
        s = small[ns]
        nl -= 1
        g = large[nl]
        threshold[s] = np.uint64(np.round(scaled[s] * 4294967296.0))
        alias[s] = g
        scaled[g] = (scaled[g] + scaled[s]) - 1.0
        if scaled[g] < 1.0:
            small[ns] = g
            ns += 1
        else:
            large[nl] = g
            nl += 1
    for k in range(nl):
        threshold[large[k]] = np.uint64(4294967296)
        alias[large[k]] = large[k]
    for k in range(ns):  # rounding leftovers: their share is 1
        threshold[small[k]] = np.uint64(4294967296)
        alias[small[k]] = small[k]
    return threshold, alias


@njit(cache=True, nogil=True)
def huffman_paths(counts):
    """The Huffman tree of hierarchical softmax, built as fastText's ``HierarchicalSoftmaxLoss::buildTree``.

    Parameters
    ----------
    counts : ndarray of int64, shape (V,)
        Word counts in non-increasing order (the vocabulary's order).

    Returns
    -------
    offsets : ndarray of int64, shape (V + 1,)
    points : ndarray of int32
        The inner nodes (``0 .. V - 2``: rows of the output matrix) on the way from word ``i``'s leaf to the root
        are ``points[offsets[i]:offsets[i + 1]]``, leaf side first.
    codes : ndarray of uint8
        The branch taken at each of those nodes (1: the second child), the label of its logistic regression.
    """
    V = counts.shape[0]
    n = max(2 * V - 1, 1)
    parent = np.full(n, -1, np.int64)
    binary = np.zeros(n, np.uint8)
    count = np.full(n, np.int64(10) ** 15, np.int64)
    for i in range(V):
        count[i] = counts[i]
    leaf = V - 1
    node = V
    for i in range(V, 2 * V - 1):
        mini0 = 0
        mini1 = 0
        for j in range(2):
            if leaf >= 0 and count[leaf] < count[node]:
                m = leaf
                leaf -= 1
            else:
                m = node
                node += 1
            if j == 0:
                mini0 = m
            else:
                mini1 = m
        count[i] = count[mini0] + count[mini1]
        parent[mini0] = i
        parent[mini1] = i
        binary[mini1] = 1
    offsets = np.zeros(V + 1, np.int64)
    for i in range(V):
        depth = 0
        j = i
        while parent[j] != -1:
            depth += 1
            j = parent[j]
        offsets[i + 1] = offsets[i] + depth
    points = np.empty(offsets[V], np.int32)
    codes = np.empty(offsets[V], np.uint8)
    for i in range(V):
        k = offsets[i]
        j = i
        while parent[j] != -1:
            points[k] = parent[j] - V
            codes[k] = binary[j]
            k += 1
            j = parent[j]
    return offsets, points, codes


# -- the SGD loop --------------------------------------------------------------------------------------------------
@intrinsic
def _dot(typingctx, a, b, d):
    """``a . b`` over the first ``d`` float32 values of two C-contiguous 1-D arrays, in a fixed order.

    Eight partial sums, lane ``j`` taking the products ``a[k] * b[k]`` with ``k % 8 == j`` (``k < d - d % 8``) in
    increasing ``k``; then ``((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))``; then the remaining products one
    by one. Written as 8-wide vector IR, because Numba leaves LLVM's SLP vectorizer off and a plain loop would be a
    chain of scalar additions; no fast-math flag is set, so every operation is IEEE float32 in exactly this order
    (the tests reproduce it bit for bit in plain Python).
    """
    for arr in (a, b):
        if not (isinstance(arr, types.Array) and arr.ndim == 1 and arr.layout == "C" and arr.dtype == types.float32):
            return None  # only contiguous float32 vectors (rows of C-ordered matrices)
    sig = types.float32(a, b, d)

    def codegen(context, builder, signature, args):
        arr_a = context.make_array(signature.args[0])(context, builder, args[0])
        arr_b = context.make_array(signature.args[1])(context, builder, args[1])
        n = args[2]
        i64 = ir.IntType(64)
        v8 = ir.VectorType(ir.FloatType(), 8)
        acc = cgutils.alloca_once_value(builder, ir.Constant(v8, [0.0] * 8))
        blocks = builder.udiv(n, ir.Constant(i64, 8))
        with cgutils.for_range(builder, blocks) as loop:
            off = builder.mul(loop.index, ir.Constant(i64, 8))
            va = builder.load(builder.bitcast(builder.gep(arr_a.data, [off]), v8.as_pointer()), align=4)
            vb = builder.load(builder.bitcast(builder.gep(arr_b.data, [off]), v8.as_pointer()), align=4)
            builder.store(builder.fadd(builder.load(acc), builder.fmul(va, vb)), acc)
        v = builder.load(acc)
        lane = [builder.extract_element(v, ir.Constant(ir.IntType(32), j)) for j in range(8)]
        total = builder.fadd(builder.fadd(builder.fadd(lane[0], lane[1]), builder.fadd(lane[2], lane[3])),
                             builder.fadd(builder.fadd(lane[4], lane[5]), builder.fadd(lane[6], lane[7])))
        out = cgutils.alloca_once_value(builder, total)
        start = builder.mul(blocks, ir.Constant(i64, 8))
        with cgutils.for_range(builder, builder.sub(n, start)) as loop:
            k = builder.add(start, loop.index)
            x = builder.load(builder.gep(arr_a.data, [k]))
            y = builder.load(builder.gep(arr_b.data, [k]))
            builder.store(builder.fadd(builder.load(out), builder.fmul(x, y)), out)
        return builder.load(out)

    return sig, codegen


@njit(cache=True, nogil=True)
def dot(a, b):
    """:func:`_dot` over the whole of two float32 1-D arrays of equal length (for tests and callers outside)."""
    return _dot(a, b, a.shape[0])


@njit(cache=True, nogil=True)
def _logistic(hidden, out, label, lr, grad, table, d):
    """One binary logistic regression step (fastText's ``BinaryLogisticLoss::binaryLogistic``).

    ``score = sigmoid(hidden . out)`` (table lookup, 0 below -8 and 1 above 8); ``g = lr * (label - score)``;
    ``grad += g * out`` (with ``out`` before this step), then ``out += g * hidden``.
    """
    f = _dot(hidden, out, d)
    if f < -MAX_SIGMOID:
        score = np.float32(0.0)
    elif f > MAX_SIGMOID:
        score = np.float32(1.0)
    else:
        score = table[np.int64((f + MAX_SIGMOID) * (SIGMOID_TABLE_SIZE / MAX_SIGMOID / 2))]
    g = np.float32(lr * (label - score))
    for k in range(d):
        o = out[k]
        grad[k] += g * o
        out[k] = o + g * hidden[k]


@njit(cache=True, nogil=True)
def _predict(hidden, target, grad, syn1, negative, hs, alias_thr, alias_idx, hs_offsets, hs_points, hs_codes,
             table, lr, state, d):
    """The output side for one (input, target) example: negative sampling or hierarchical softmax."""
    if hs:
        for p in range(hs_offsets[target], hs_offsets[target + 1]):
            _logistic(hidden, syn1[hs_points[p]], np.float32(hs_codes[p]), lr, grad, table, d)
        return
    _logistic(hidden, syn1[target], np.float32(1.0), lr, grad, table, d)
    V = alias_idx.shape[0]
    for _ in range(negative):
        r = splitmix64(state)
        t = _below(r, V)
        if (r & _LOW32) >= alias_thr[t]:
            t = alias_idx[t]
        if t == target:
            continue  # as gensim: a draw of the target itself is skipped, not redrawn
        _logistic(hidden, syn1[t], np.float32(0.0), lr, grad, table, d)


@njit(cache=True, nogil=True)
def train_chunk(ids, doc_offsets, doc_lo, doc_hi, syn0, syn1, row_offsets, rows, keep_thr, alias_thr, alias_idx,
                hs_offsets, hs_points, hs_codes, table, sg, negative, hs, window, shrink_windows, alpha, min_alpha,
                words_before, total_words, seed):
    """Train on documents ``doc_lo .. doc_hi - 1`` once (skip-gram or CBOW), updating ``syn0`` and ``syn1`` in place.

    For each document: every token ``w`` is kept with probability ``keep_thr[w] / 2**32`` (frequent-word
    subsampling; dropped tokens leave the document, so windows span over them, as in gensim and fastText); then
    for each kept position an effective window ``b`` is drawn uniformly in ``1 .. window`` (``window`` itself when
    ``shrink_windows`` is false) and the ``2 b`` neighbours within the document are its context.

    The vector of a word is the mean of its rows ``rows[row_offsets[w]:row_offsets[w + 1]]`` of ``syn0`` (its own
    row and its n-gram rows). Skip-gram: ``hidden`` = the centre word's vector, predicting each context word in
    turn; the output rows are updated after each prediction, and the summed input gradient of the window is added
    to every row of the centre word once, after its last context word. CBOW: ``hidden`` = the mean of the rows of
    all context words together, predicting the centre word; the gradient is added to each of those rows. The
    gradient is not divided by the number of rows (fastText and gensim do the same).

    Learning rate: ``max(min_alpha, alpha - (alpha - min_alpha) * done / total_words)``, where ``done`` counts the
    tokens read before the document (``words_before`` plus those of this call), subsampled ones included.

    Parameters
    ----------
    ids : int32 (n_tokens,)
        Vocabulary indices of the corpus (out-of-vocabulary tokens already removed).
    doc_offsets : int64 (n_docs + 1,)
    syn0 : float32 (n_rows, d), C order
        Input matrix: ``V`` word rows then the n-gram rows.
    syn1 : float32 (V, d), C order
        Output matrix: one row per word (negative sampling) or per inner tree node (hierarchical softmax).
    row_offsets : int64 (V + 1,); rows : int32
        The rows of each word (see :func:`ngram_rows`).
    keep_thr : uint64 (V,)
        Subsampling thresholds (``2**32`` keeps always).
    alias_thr : uint64 (V,); alias_idx : int32 (V,)
        The negative-sampling law (see :func:`alias_table`).
    hs_offsets : int64 (V + 1,); hs_points : int32; hs_codes : uint8
        The Huffman paths (see :func:`huffman_paths`); empty arrays when ``hs`` is false.
    table : float32 (513,)
        :func:`sigmoid_table`.
    sg, hs, shrink_windows : bool
    negative, window : int
    alpha, min_alpha : float
    words_before, total_words : int
        Tokens read before this call (all threads) and ``epochs * n_tokens``.
    seed : uint64
        Seed of this call's random numbers.

    Returns
    -------
    (n_read, n_trained) : tuple of int
        Tokens read and tokens kept by subsampling.
    """
    d = syn0.shape[1]
    state = np.empty(1, np.uint64)
    state[0] = seed
    longest = 0
    for doc in range(doc_lo, doc_hi):
        longest = max(longest, doc_offsets[doc + 1] - doc_offsets[doc])
    buf = np.empty(longest, np.int32)
    hidden = np.empty(d, np.float32)
    grad = np.empty(d, np.float32)
    n_read = 0
    n_trained = 0
    always = np.uint64(4294967296)
    for doc in range(doc_lo, doc_hi):
        s = doc_offsets[doc]
        e = doc_offsets[doc + 1]
        n = 0
        for t in range(s, e):
            w = ids[t]
            thr = keep_thr[w]
            if thr >= always or (splitmix64(state) >> _S32) < thr:
                buf[n] = w
                n += 1
        progress = (words_before + n_read) / total_words
        lr = max(min_alpha, alpha - (alpha - min_alpha) * progress)
        n_read += e - s
        n_trained += n
        for pos in range(n):
            b = window
            if shrink_windows:
                b = 1 + _below(splitmix64(state), window)
            lo = max(0, pos - b)
            hi = min(n, pos + b + 1)
            if sg:
                c = buf[pos]
                r0 = row_offsets[c]
                r1 = row_offsets[c + 1]
                for k in range(d):
                    hidden[k] = np.float32(0.0)
                    grad[k] = np.float32(0.0)
                for r in range(r0, r1):
                    row = syn0[rows[r]]
                    for k in range(d):
                        hidden[k] += row[k]
                inv = np.float32(1.0 / (r1 - r0))
                for k in range(d):
                    hidden[k] *= inv
                for ctx in range(lo, hi):
                    if ctx != pos:
                        _predict(hidden, buf[ctx], grad, syn1, negative, hs, alias_thr, alias_idx, hs_offsets,
                                 hs_points, hs_codes, table, lr, state, d)
                for r in range(r0, r1):
                    row = syn0[rows[r]]
                    for k in range(d):
                        row[k] += grad[k]
            else:
                count = 0
                for k in range(d):
                    hidden[k] = np.float32(0.0)
                    grad[k] = np.float32(0.0)
                for ctx in range(lo, hi):
                    if ctx != pos:
                        c = buf[ctx]
                        for r in range(row_offsets[c], row_offsets[c + 1]):
                            row = syn0[rows[r]]
                            for k in range(d):
                                hidden[k] += row[k]
                        count += row_offsets[c + 1] - row_offsets[c]
                if count == 0:
                    continue
                inv = np.float32(1.0 / count)
                for k in range(d):
                    hidden[k] *= inv
                _predict(hidden, buf[pos], grad, syn1, negative, hs, alias_thr, alias_idx, hs_offsets, hs_points,
                         hs_codes, table, lr, state, d)
                for ctx in range(lo, hi):
                    if ctx != pos:
                        c = buf[ctx]
                        for r in range(row_offsets[c], row_offsets[c + 1]):
                            row = syn0[rows[r]]
                            for k in range(d):
                                row[k] += grad[k]
    return n_read, n_trained


@njit(cache=True, nogil=True)
def compose_vectors(syn0, row_offsets, rows):
    """The vector of every word: the mean of its rows of ``syn0`` (fastText's ``getWordVector``).

    The rows are summed in order in float32, then multiplied by ``float32(1 / n_rows)``, as fastText's ``Vector``
    does. Returns float32 (V, d).
    """
    V = row_offsets.shape[0] - 1
    d = syn0.shape[1]
    out = np.zeros((V, d), np.float32)
    for i in range(V):
        acc = out[i]
        r0 = row_offsets[i]
        r1 = row_offsets[i + 1]
        for r in range(r0, r1):
            row = syn0[rows[r]]
            for k in range(d):
                acc[k] += row[k]
        if r1 > r0:
            inv = np.float32(1.0 / (r1 - r0))
            for k in range(d):
                acc[k] *= inv
    return out
