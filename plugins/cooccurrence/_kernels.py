"""Numba kernels of the co-occurrence counter: NumPy arrays and scalars in and out
(docs/architecture.md, "Kernels").

Entry points, ``@njit(cache=True, nogil=True)`` (the counter runs them in threads, one token range each):

- :func:`count_block`: the window loop over one token range; frequent pairs go to a dense block, the others are
  written to a buffer as packed int64 keys ``((a * n_rows + b) << code_bits) | code``;
- :func:`sort_reduce`: sort such a buffer (LSD radix sort) and sum equal pairs into a sorted run;
- :func:`merge_runs`: merge two sorted runs, summing equal keys;
- :func:`dense_to_run`: the non-zero cells of the dense block as a sorted run;
- :func:`runs_to_csr`: a run over the stored half -> the CSR arrays of the full matrix (mirrored when symmetric).

Every sum is of int64 integers (weights scaled so that ``scale / d`` is an integer: see ``counting.py``), so the
result does not depend on the order in which pairs are added: not on the chunks, the threads or the blocks.
"""

from __future__ import annotations

import numpy as np
from numba import njit

@njit(cache=True, nogil=True)
def count_block(ids, offsets, row_of_id, start, stop, window, symmetric, code_bits, weights, n_rows, n_dense, dense,
                buf):
    """Add every pair whose right-hand token lies in ``ids[start:stop]``; return how many keys went to ``buf``.

    A pair is (left, right) with ``left`` one of the ``window`` kept tokens before ``right`` in the same document
    (tokens whose row is -1 are skipped before windowing, as GloVe's ``cooccur`` skips out-of-vocabulary words), at
    distance ``d`` in 1..window counted over kept tokens. Its stored cell is ``(a, b) = (left, right)``, or
    ``(min, max)`` of the two rows when ``symmetric`` (the stored half; the caller mirrors it).

    Parameters
    ----------
    ids : int32 (n_tokens,)            token ids of all documents, one after the other
    offsets : int64 (n_docs + 1,)      document i is ids[offsets[i]:offsets[i + 1]]
    row_of_id : int32 (vocab_size,)    row of each id, or -1 for a dropped id
    start, stop : int                  the token range (may cut a document: the left context before ``start`` is
                                       read from the document, so adjacent ranges count every pair exactly once)
    window : int >= 1
    symmetric : bool
    code_bits : int                    bits of the distance code ``d - 1`` in the key (0 when uniform: one code)
    weights : int64 (>= 1,)            scaled weight of distance code ``d - 1`` (of code 0 when uniform)
    n_rows : int                       number of kept rows
    n_dense : int                      rows ``< n_dense`` on both sides are added into ``dense``
    dense : int64 (n_dense * n_dense,) row-major dense block (modified in place)
    buf : int64 (>= (stop - start) * window,)  receives the keys of the other pairs (unsorted)
    """
    hist = np.empty(max(window, 1), np.int64)
    doc = np.searchsorted(offsets, start, side="right") - 1
    doc_start = offsets[doc]
    doc_end = offsets[doc + 1]
    # the kept tokens of this document just before `start` become the initial left context
    m = 0
    p = start - 1
    while p >= doc_start and m < window:
        r = row_of_id[ids[p]]
        if r >= 0:
            m += 1
            hist[(window - m) % window] = r  # the m-th kept token back sits at index j - m with j = window
        p -= 1
    # j counts kept tokens of the document; with j = window the ring slots (window - m) .. window - 1 are filled
    j = window if m > 0 else 0
    filled = m
    n = 0
    for t in range(start, stop):
        while t >= doc_end:
            doc += 1
            doc_end = offsets[doc + 1]
            j = 0
            filled = 0
        r = np.int64(row_of_id[ids[t]])
        if r < 0:
            continue
        kmax = filled if filled < window else window
        for k in range(1, kmax + 1):
            c = hist[(j - k) % window]
            code = k - 1 if code_bits > 0 else 0
            if symmetric and c > r:
                a = r
                b = c
            else:
                a = c
                b = r
            if a < n_dense and b < n_dense:
                dense[a * n_dense + b] += weights[code]
            else:
                buf[n] = ((a * n_rows + b) << code_bits) | code
                n += 1
        hist[j % window] = r
        j += 1
        filled += 1
    return n


@njit(cache=True, nogil=True)
def sort_reduce(buf, n, tmp, pair_bits, code_bits, weights):
    """Sort ``buf[:n]`` by pair and sum the weights of equal pairs: returns ``(keys, sums)``, int64, ``keys``
    (the pairs ``a * n_rows + b``) strictly increasing. ``buf`` and ``tmp`` (scratch, same size) are overwritten.

    LSD radix sort on the ``pair_bits`` bits above the ``code_bits`` of the distance code (the codes need no
    order: equal pairs only have to be adjacent), in passes of at most 12 bits, with every pass's histogram taken
    in one read; a pass whose digit is the same for all keys is skipped.
    """
    n_pass = (pair_bits + 11) // 12 if pair_bits > 0 else 0
    digit = (pair_bits + n_pass - 1) // n_pass if n_pass else 1
    n_buckets = 1 << digit
    mask = n_buckets - 1
    hist = np.zeros((max(n_pass, 1), n_buckets), np.int64)
    for i in range(n):
        v = buf[i] >> code_bits
        for p in range(n_pass):
            hist[p, (v >> (p * digit)) & mask] += 1
    src = buf
    dst = tmp
    for p in range(n_pass):
        single = False
        for b in range(n_buckets):
            if hist[p, b] == n:
                single = True
                break
        if single:
            continue
        total = 0
        for b in range(n_buckets):
            c = hist[p, b]
            hist[p, b] = total
            total += c
        shift = code_bits + p * digit
        for i in range(n):
            v = src[i]
            d = (v >> shift) & mask
            dst[hist[p, d]] = v
            hist[p, d] += 1
        src, dst = dst, src
    # reduce: equal pairs are adjacent
    n_unique = 0
    prev = -1
    for i in range(n):
        pair = src[i] >> code_bits
        if pair != prev:
            n_unique += 1
            prev = pair
    keys = np.empty(n_unique, np.int64)
    sums = np.zeros(n_unique, np.int64)
    code_mask = (1 << code_bits) - 1
    u = -1
    prev = -1
    for i in range(n):
        v = src[i]
        pair = v >> code_bits
        if pair != prev:
            u += 1
            keys[u] = pair
            prev = pair
        sums[u] += weights[v & code_mask]
    return keys, sums


@njit(cache=True, nogil=True)
def merge_runs(keys_a, sums_a, keys_b, sums_b):
    """Merge two runs (strictly increasing keys) into one, summing the values of keys both hold."""
    na = keys_a.shape[0]
    nb = keys_b.shape[0]
    keys = np.empty(na + nb, np.int64)
    sums = np.empty(na + nb, np.int64)
    i = 0
    j = 0
    n = 0
    while i < na and j < nb:
        ka = keys_a[i]
        kb = keys_b[j]
        if ka < kb:
            keys[n] = ka
            sums[n] = sums_a[i]
            i += 1
        elif kb < ka:
            keys[n] = kb
            sums[n] = sums_b[j]
            j += 1
        else:
            keys[n] = ka
            sums[n] = sums_a[i] + sums_b[j]
            i += 1
            j += 1
        n += 1
    while i < na:
        keys[n] = keys_a[i]
        sums[n] = sums_a[i]
        i += 1
        n += 1
    while j < nb:
        keys[n] = keys_b[j]
        sums[n] = sums_b[j]
        j += 1
        n += 1
    if n == na + nb:
        return keys, sums
    return keys[:n].copy(), sums[:n].copy()


@njit(cache=True, nogil=True)
def dense_to_run(dense, n_dense, n_rows):
    """The non-zero cells of the row-major (n_dense, n_dense) block as a run of keys ``a * n_rows + b``."""
    n = 0
    for i in range(n_dense * n_dense):
        if dense[i] != 0:
            n += 1
    keys = np.empty(n, np.int64)
    sums = np.empty(n, np.int64)
    n = 0
    for a in range(n_dense):
        base = a * n_dense
        for b in range(n_dense):
            v = dense[base + b]
            if v != 0:
                keys[n] = a * n_rows + b
                sums[n] = v
                n += 1
    return keys, sums


@njit(cache=True, nogil=True)
def runs_to_csr(keys, sums, n_rows, symmetric, scale, single):
    """The full matrix of a run as CSR arrays ``(indptr int64 (n_rows + 1,), indices int32 (nnz,), values64,
    values32)``, columns sorted in each row, each value ``sum / scale`` computed in float64: in ``values64``
    (float64 (nnz,)) when ``single`` is false, else rounded once more into ``values32`` (float32 (nnz,)); the other
    array is empty. When ``symmetric`` the run holds the upper half (a <= b): cell (a, b) with a < b is written at
    (a, b) and (b, a), a diagonal cell at (a, a) with twice its value (GloVe adds a pair of one word with itself
    once for each direction)."""
    nnz_half = keys.shape[0]
    counts = np.zeros(n_rows + 1, np.int64)
    for i in range(nnz_half):
        a = keys[i] // n_rows
        b = keys[i] - a * n_rows
        counts[a + 1] += 1
        if symmetric and a != b:
            counts[b + 1] += 1
    indptr = np.empty(n_rows + 1, np.int64)
    indptr[0] = 0
    for r in range(n_rows):
        indptr[r + 1] = indptr[r] + counts[r + 1]
    nnz = indptr[n_rows]
    indices = np.empty(nnz, np.int32)
    values64 = np.empty(0 if single else nnz, np.float64)
    values32 = np.empty(nnz if single else 0, np.float32)
    exact = scale == 1.0
    fill = indptr[:n_rows].copy()
    for part in range(2):
        # part 0 (symmetric only): the lower half, row b receiving (b, a) for a < b in increasing a, which is the
        # run's order; part 1: the stored half in row order, after the lower half of each row
        if part == 0 and not symmetric:
            continue
        for i in range(nnz_half):
            a = keys[i] // n_rows
            b = keys[i] - a * n_rows
            if part == 0:
                if a == b:
                    continue
                row = b
                col = a
                v = sums[i]
            else:
                row = a
                col = b
                v = 2 * sums[i] if (symmetric and a == b) else sums[i]
            p = fill[row]
            indices[p] = col
            x = np.float64(v) if exact else np.float64(v) / scale
            if single:
                values32[p] = np.float32(x)
            else:
                values64[p] = x
            fill[row] = p + 1
    return indptr, indices, values64, values32
