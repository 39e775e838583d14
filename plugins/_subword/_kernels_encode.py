"""Numba kernel applying learned merges to words by rank, with optional BPE-dropout.

Entry point :func:`encode_words`, ``@njit(cache=True, nogil=True)`` (callers may encode batches in threads); the
merge table comes from ``_kernels.fill_pair_table``. ``_rank_of`` and ``_hpush``, called from four places each,
are ``forceinline=True``: compiled once by Numba, inlined by LLVM (``inline='always'`` re-typed them at each
site). Numba's cache does not notice edits to helpers imported from another file: after changing
``_kernels._slot``, ``_lookup`` or ``_shift_for``, delete this folder's ``__pycache__``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._kernels import _FIB, _lookup, _shift_for


@njit(inline="always")
def _next_uniform(state):
    """splitmix64 step (Steele, Lea & Flood 2014): returns (new state, uniform float64 in [0, 1))."""
    state = state + _FIB
    z = state
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return state, float(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(forceinline=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _hpush(heap, hn, v):
    heap[hn] = v
    i = hn
    while i > 0:
        p = (i - 1) >> 1
        if heap[p] <= heap[i]:
            break
        t = heap[p]
        heap[p] = heap[i]
        heap[i] = t
        i = p
    return hn + 1


@njit(inline="always")
def _hpop(heap, hn):
    v = heap[0]
    hn -= 1
    heap[0] = heap[hn]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= hn:
            break
        if c + 1 < hn and heap[c + 1] < heap[c]:
            c += 1
        if heap[i] <= heap[c]:
            break
        t = heap[c]
        heap[c] = heap[i]
        heap[i] = t
        i = c
    return v, hn


@njit(forceinline=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _rank_of(x, y, ht_key, ht_val, shift):
    return _lookup(ht_key, ht_val, (np.int64(x) << 32) | np.int64(y), shift)


@njit(cache=True, nogil=True)
def encode_words(symbols, offsets, ht_key, ht_val, new_ids, dropout, seed, out_ids, out_first, out_last,
                 out_offsets):
    """Apply merges to each word by rank: repeatedly merge the adjacent pair of lowest rank, leftmost first.

    This is the rule of tiktoken and Hugging Face ``BPE``; for learned merges it equals applying them one after
    the other in training order. Per word, a min-heap of ``rank << 32 | position`` over a linked list of symbol positions,
    so a word of n symbols costs O(n log n).

    BPE-dropout (Provilkov et al. 2020) when ``dropout`` > 0: each valid candidate merge popped from the heap is
    skipped with probability ``dropout`` and set aside; the set-aside candidates return to the heap after the next
    merge, and the word is done when the heap is empty. The random stream of word ``w`` is splitmix64 seeded with
    ``seed`` and ``w``, so a call is deterministic for a given ``seed`` and batch.

    Parameters
    ----------
    symbols : ndarray of int32, shape (n_symbols,)
        Input ids (>= 0), words packed as CSR.
    offsets : ndarray of int64, shape (n_words + 1,)
        Word ``w`` is ``symbols[offsets[w]:offsets[w + 1]]``.
    ht_key, ht_val : ndarray of int64 / int32, shape (2**b,)
        Table ``left << 32 | right -> rank`` from :func:`fill_pair_table` (the lowest rank of a repeated pair).
    new_ids : ndarray of int32, shape (n_merges,)
        Id created by the merge of each rank.
    dropout : float
        Probability in [0, 1) of skipping a candidate merge.
    seed : int
        Seed of the dropout random stream (unused when ``dropout`` is 0).
    out_ids : ndarray of int32, shape (n_symbols,)
        Receives the output ids, packed per word.
    out_first, out_last : ndarray of int64, shape (n_symbols,)
        Receive, for each output id, the index in ``symbols`` of the first and of the last input symbol it covers.
    out_offsets : ndarray of int64, shape (n_words + 1,)
        Receives the output CSR offsets.

    Returns
    -------
    int
        Number of output ids.
    """
    n_words = offsets.shape[0] - 1
    shift = _shift_for(ht_key.shape[0])
    max_len = 0
    for w in range(n_words):
        max_len = max(max_len, offsets[w + 1] - offsets[w])
    sym = np.empty(max_len, np.int64)
    nxt = np.empty(max_len, np.int64)
    prv = np.empty(max_len, np.int64)
    heap = np.empty(3 * max_len + 1, np.int64)
    skipped = np.empty(3 * max_len + 1, np.int64)
    lo32 = np.int64(0xFFFFFFFF)
    seed64 = np.uint64(seed)
    n_out = 0
    out_offsets[0] = 0
    for w in range(n_words):
        s = offsets[w]
        length = offsets[w + 1] - s
        if length == 0:
            out_offsets[w + 1] = n_out
            continue
        for t in range(length):
            sym[t] = symbols[s + t]
            nxt[t] = t + 1
            prv[t] = t - 1
        nxt[length - 1] = -1
        hn = np.int64(0)  # not the literal 0: _hpush would compile a second signature for it
        for t in range(length - 1):
            rank = _rank_of(sym[t], sym[t + 1], ht_key, ht_val, shift)
            if rank >= 0:
                hn = _hpush(heap, hn, (rank << 32) | t)
        state = seed64 ^ (np.uint64(w) * np.uint64(0xD1B54A32D192ED03))
        n_skip = 0
        while hn > 0:
            e, hn = _hpop(heap, hn)
            rank = e >> 32
            t = e & lo32
            if sym[t] < 0:
                continue
            u = nxt[t]
            if u < 0 or _rank_of(sym[t], sym[u], ht_key, ht_val, shift) != rank:
                continue
            if dropout > 0.0:
                state, x = _next_uniform(state)
                if x < dropout:
                    skipped[n_skip] = e
                    n_skip += 1
                    continue
            for z in range(n_skip):
                hn = _hpush(heap, hn, skipped[z])
            n_skip = 0
            sym[t] = new_ids[rank]
            sym[u] = -1
            v = nxt[u]
            nxt[t] = v
            if v >= 0:
                prv[v] = t
                r2 = _rank_of(sym[t], sym[v], ht_key, ht_val, shift)
                if r2 >= 0:
                    hn = _hpush(heap, hn, (r2 << 32) | t)
            p = prv[t]
            if p >= 0:
                r2 = _rank_of(sym[p], sym[t], ht_key, ht_val, shift)
                if r2 >= 0:
                    hn = _hpush(heap, hn, (r2 << 32) | p)
        t = 0
        while t >= 0:
            v = nxt[t]
            out_ids[n_out] = sym[t]
            out_first[n_out] = s + t
            out_last[n_out] = s + (v if v >= 0 else length) - 1
            n_out += 1
            t = v
        out_offsets[w + 1] = n_out
    return n_out
