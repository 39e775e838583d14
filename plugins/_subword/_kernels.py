"""Numba kernels shared by the BPE and WordPiece tokenizers: merge learning and merge application.

Two entry points here, ``@njit(cache=True, nogil=True)``, NumPy arrays and scalars in and out (the third,
``encode_words``, is in ``_kernels_encode.py``):

- :func:`merge_run` learns merges (BPE frequency scoring, or WordPiece likelihood scoring), resumable in chunks;
- :func:`fill_pair_table` fills an open-addressing table ``(left, right) -> row`` (pair index and merge table).

Every other function is a helper compiled into its callers, built without a Python or C entry point
(``no_cpython_wrapper``, ``no_cfunc_wrapper``). Hot helpers with several call sites (``_before``, ``_put``,
``_unlink``) are ``forceinline=True``: Numba types and lowers them once and LLVM inlines the machine-level copy at
each call site. ``inline='always'`` would instead re-type and re-lower the body at every site, and the Numba front
end, not LLVM, is most of the compile time. ``_swap`` stays ``inline='always'``: as a forceinline function it made
WordPiece training 16% slower. The others are ordinary calls (inlining those multiplied compile time for no
measurable speed). Each helper is called with int64 scalars only (no int32 array values, no literal constants), so
it compiles once: a call with another argument type compiles another copy, which had doubled the compile time.
The public wrappers (validation, allocation, growth, chunking) are in ``__init__.py``; these kernels assume valid
input. Plain-Python references are in ``reference.py``.

Data layout of the merge learner (all rows of 2-D C-contiguous arrays, indexed by the ``P_*``/``R_*``/``I_*``/``H_*``
constants below):

- positions ``pos`` int32 (7, n_symbols): one column per input symbol of the packed corpus. ``SYM`` current id
  (-1 once merged away), ``NXT``/``PRV`` neighbours in the word (-1 at the ends), ``REC`` the pair record of the
  window that starts here (-1: none), ``LNX``/``LPV`` the doubly linked list of the positions of that pair (kept in
  position order, so overlapping occurrences are merged left to right), ``WORD`` the word index (its weight is
  ``counts[WORD]``).
- pair records ``r32`` int32 (6, cap) and ``r64`` int64 (2, cap): ``LEFT``, ``RIGHT``, ``HEAD``/``TAIL`` of the
  position list, ``LCH``/``RCH`` the next record with the same left / right symbol (WordPiece only); ``CNT`` the
  weighted number of windows, ``OCC`` the unweighted number. Records are appended, never moved or deleted, so a
  record index is stable across table growth.
- hash table ``ht_key`` int64 (2**b,) with ``left << 32 | right`` or -1 (empty), ``ht_val`` int32 record index;
  linear probing, Fibonacci hashing on the top ``b`` bits, load kept at most 1/2.
- per id ``i32`` int32 (3, n_ids): ``TLEN`` length in characters, ``LHD``/``RHD`` heads of the record chains;
  ``i64`` int64 (3, n_ids): ``SCNT`` weighted frequency of the symbol in the current segmentation (WordPiece),
  ``NL``/``NR`` chain lengths.
- max-heap ``h64`` int64 (5, hcap): ``CNT`` pair count, ``KEY`` pair key, ``REC`` record, ``CA``/``CB`` the two
  symbol counts (WordPiece), ``hsc`` float64 (hcap,) the score ``CNT / (CA * CB)`` (WordPiece). Entries are
  snapshots; an entry whose snapshot differs from the record's current values is stale and is re-pushed with the
  current values when it reaches the top (lazy invalidation). That suffices when scores only fall, as pair counts
  do after the merge that creates the pair. In WordPiece mode, merging (a, b) lowers count(a) and count(b) and so
  raises the score of every pair containing a or b: those are pushed again at once, found through the chains.
- state ``st`` int64 (8,): ``S_PHASE`` (0 counting windows, 1 building the heap, 2 merging), ``S_POS`` next position
  to count, ``S_K`` merges done, ``S_NREC`` records used, ``S_HN`` heap size, ``S_NEED_REC``/``S_NEED_HEAP`` the room
  asked for when the kernel returns :data:`STATUS_NEED_ROOM`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# Return codes of merge_run.
STATUS_DONE = 0  # no pair is eligible any more
STATUS_PAUSED = 1  # k_stop merges done: call again with a larger k_stop to go on
STATUS_NEED_ROOM = 2  # grow the arrays to st[S_NEED_REC] records and st[S_NEED_HEAP] heap entries, then call again

MODE_FREQUENCY = 0  # BPE: count(ab)
MODE_LIKELIHOOD = 1  # WordPiece: count(ab) / (count(a) * count(b))

P_SYM, P_NXT, P_PRV, P_LNX, P_LPV, P_REC, P_WORD = 0, 1, 2, 3, 4, 5, 6
N_P = 7
R_LEFT, R_RIGHT, R_HEAD, R_TAIL, R_LCH, R_RCH = 0, 1, 2, 3, 4, 5
N_R32 = 6
R_CNT, R_OCC = 0, 1
N_R64 = 2
I_TLEN, I_LHD, I_RHD = 0, 1, 2
I_SCNT, I_NL, I_NR = 0, 1, 2
N_I = 3
H_CNT, H_KEY, H_REC, H_CA, H_CB = 0, 1, 2, 3, 4
N_H = 5
S_PHASE, S_POS, S_K, S_NREC, S_HN, S_NEED_REC, S_NEED_HEAP = 0, 1, 2, 3, 4, 5, 6
N_S = 8

_FIB = np.uint64(0x9E3779B97F4A7C15)
_M32 = np.uint64(0xFFFFFFFF)
_U32 = np.uint64(32)
_REL = 1e-12  # float scores further apart than this relative gap are ordered without the exact test

# Helpers called only from other kernels: no Python or C entry point to build.
_HELPER = dict(no_cpython_wrapper=True, no_cfunc_wrapper=True)


# ----------------------------------------------------------------------------------------------------------------
# hash table


@njit(inline="always")
def _shift_for(cap):
    shift = 64
    c = 1
    while c < cap:
        c <<= 1
        shift -= 1
    return shift


@njit(inline="always")
def _slot(ht_key, key, shift):
    """Slot holding ``key``, or the empty slot where it would go."""
    mask = ht_key.shape[0] - 1
    h = np.int64((np.uint64(key) * _FIB) >> np.uint64(shift)) if shift < 64 else 0
    while True:
        k = ht_key[h]
        if k == key or k == -1:
            return h
        h = (h + 1) & mask


@njit(inline="always")
def _lookup(ht_key, ht_val, key, shift):
    """Value stored for ``key``, or -1."""
    h = _slot(ht_key, key, shift)
    if ht_key[h] == key:
        return np.int64(ht_val[h])
    return np.int64(-1)


@njit(cache=True, nogil=True)
def fill_pair_table(left, right, n, ht_key, ht_val):
    """Insert ``(left[r], right[r]) -> r`` for r in [0, n) into an empty table; the first row wins on duplicates.

    Parameters
    ----------
    left, right : ndarray of int32, shape (>= n,)
        Pair components, ids in [0, 2**31).
    n : int
        Number of rows to insert.
    ht_key : ndarray of int64, shape (2**b,)
        Filled with -1 by the caller; receives the keys ``left << 32 | right``. Its size must exceed ``n``.
    ht_val : ndarray of int32, shape (2**b,)
        Receives the row index of each key.
    """
    shift = _shift_for(ht_key.shape[0])
    for r in range(n):
        key = (np.int64(left[r]) << 32) | np.int64(right[r])
        h = _slot(ht_key, key, shift)
        if ht_key[h] != key:
            ht_key[h] = key
            ht_val[h] = r


# ----------------------------------------------------------------------------------------------------------------
# exact comparison of count / (ca * cb) ratios


@njit(inline="always")
def _mul64(a, b):
    """Full 128-bit product of two non-negative 64-bit integers, as (high, low) uint64."""
    a = np.uint64(a)
    b = np.uint64(b)
    a0 = a & _M32
    a1 = a >> _U32
    b0 = b & _M32
    b1 = b >> _U32
    p00 = a0 * b0
    p01 = a0 * b1
    p10 = a1 * b0
    p11 = a1 * b1
    mid = (p00 >> _U32) + (p01 & _M32) + (p10 & _M32)
    lo = (p00 & _M32) | (mid << _U32)
    hi = p11 + (p01 >> _U32) + (p10 >> _U32) + (mid >> _U32)
    return hi, lo


@njit(**_HELPER)
def _mul3(c, a, b):
    """Exact product c * a * b of three non-negative int64 values, as three uint64 limbs (high first)."""
    h, lo = _mul64(a, b)
    h0, l0 = _mul64(lo, c)
    h1, l1 = _mul64(h, c)
    w1 = h0 + l1
    carry = np.uint64(1) if w1 < h0 else np.uint64(0)
    return h1 + carry, w1, l0


@njit
def exact_ratio_cmp(c1, a1, b1, c2, a2, b2):
    """Compare c1 / (a1 * b1) with c2 / (a2 * b2) exactly: 1 if greater, -1 if smaller, 0 if equal.

    Cross-multiplies in 192-bit unsigned arithmetic (c1 * a2 * b2 against c2 * a1 * b1), so any counts in
    [0, 2**63) compare exactly. Used for near-ties of the float64 scores.
    """
    x2, x1, x0 = _mul3(c1, a2, b2)
    y2, y1, y0 = _mul3(c2, a1, b1)
    if x2 != y2:
        return 1 if x2 > y2 else -1
    if x1 != y1:
        return 1 if x1 > y1 else -1
    if x0 != y0:
        return 1 if x0 > y0 else -1
    return 0


# ----------------------------------------------------------------------------------------------------------------
# max-heap of pair snapshots


@njit(forceinline=True, **_HELPER)
def _before(h64, hsc, i, j, mode):
    """True if heap entry i is merged before entry j: higher score (likelihood mode), higher count, smaller key.

    Scores are ``CNT / (CA * CB)``: ordered by their float64 values (relative error < 1e-15) when these are
    further apart than ``_REL``, otherwise exactly by :func:`exact_ratio_cmp`.
    """
    if mode == MODE_LIKELIHOOD:
        si = hsc[i]
        sj = hsc[j]
        if si > sj * (1.0 + _REL):
            return True
        if sj > si * (1.0 + _REL):
            return False
        c = exact_ratio_cmp(h64[H_CNT, i], h64[H_CA, i], h64[H_CB, i], h64[H_CNT, j], h64[H_CA, j], h64[H_CB, j])
        if c != 0:
            return c > 0
    ci = h64[H_CNT, i]
    cj = h64[H_CNT, j]
    if ci != cj:
        return ci > cj
    return h64[H_KEY, i] < h64[H_KEY, j]


@njit(inline="always")
def _swap(h64, hsc, i, j, mode):
    nrow = N_H if mode == MODE_LIKELIHOOD else 3
    for row in range(nrow):
        t = h64[row, i]
        h64[row, i] = h64[row, j]
        h64[row, j] = t
    if mode == MODE_LIKELIHOOD:
        s = hsc[i]
        hsc[i] = hsc[j]
        hsc[j] = s


@njit(**_HELPER)
def _sift_up(h64, hsc, i, mode):
    while i > 0:
        p = (i - 1) >> 1
        if not _before(h64, hsc, i, p, mode):
            break
        _swap(h64, hsc, i, p, mode)
        i = p


@njit(**_HELPER)
def _sift_down(h64, hsc, i, n, mode):
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and _before(h64, hsc, c + 1, c, mode):
            c += 1
        if not _before(h64, hsc, c, i, mode):
            break
        _swap(h64, hsc, i, c, mode)
        i = c


@njit(forceinline=True, **_HELPER)
def _put(h64, hsc, hn, r, mode, r32, r64, i64):
    """Write a snapshot of record r at heap slot hn (no sifting)."""
    x = r32[R_LEFT, r]
    y = r32[R_RIGHT, r]
    c = r64[R_CNT, r]
    h64[H_CNT, hn] = c
    h64[H_KEY, hn] = (np.int64(x) << 32) | np.int64(y)
    h64[H_REC, hn] = r
    if mode == MODE_LIKELIHOOD:
        ca = i64[I_SCNT, x]
        cb = i64[I_SCNT, y]
        h64[H_CA, hn] = ca
        h64[H_CB, hn] = cb
        hsc[hn] = c / (float(ca) * float(cb))


@njit(**_HELPER)
def _push(h64, hsc, hn, r, mode, r32, r64, i64):
    _put(h64, hsc, hn, r, mode, r32, r64, i64)
    _sift_up(h64, hsc, hn, mode)
    return hn + 1


@njit(**_HELPER)
def _pop(h64, hsc, hn, mode):
    hn -= 1
    if hn > 0:
        _swap(h64, hsc, np.int64(0), hn, mode)
        _sift_down(h64, hsc, np.int64(0), hn, mode)
    return hn


@njit(**_HELPER)
def _rebuild_heap(h64, hsc, n_rec, thr, mode, r32, r64, i64):
    """Heap of the current snapshot of every record with count >= thr (Floyd's heapify); returns its size."""
    hn = np.int64(0)
    for r in range(n_rec):
        if r64[R_CNT, r] >= thr:
            _put(h64, hsc, hn, r, mode, r32, r64, i64)
            hn += 1
    for i in range(hn // 2 - 1, -1, -1):
        _sift_down(h64, hsc, i, hn, mode)
    return hn


# ----------------------------------------------------------------------------------------------------------------
# pair position lists


@njit(forceinline=True, **_HELPER)
def _unlink(i, w, pos, r32, r64):
    """Remove the window starting at position i (weight w) from its pair's list and count."""
    r = pos[P_REC, i]
    if r < 0:
        return
    p = pos[P_LPV, i]
    q = pos[P_LNX, i]
    if p >= 0:
        pos[P_LNX, p] = q
    else:
        r32[R_HEAD, r] = q
    if q >= 0:
        pos[P_LPV, q] = p
    else:
        r32[R_TAIL, r] = p
    r64[R_CNT, r] -= w
    r64[R_OCC, r] -= 1
    pos[P_REC, i] = -1


@njit(**_HELPER)
def _link(i, x, y, w, mode, max_len, pos, r32, r64, ht_key, ht_val, i32, i64, shift, n_rec):
    """Append position i, the start of window (x, y) of weight w, to the pair's list; creates the record if new.

    A window longer than ``max_len`` characters (when > 0) is not tracked. Returns the new number of records.
    """
    if max_len > 0 and i32[I_TLEN, x] + i32[I_TLEN, y] > max_len:
        pos[P_REC, i] = -1
        return n_rec
    key = (np.int64(x) << 32) | np.int64(y)
    h = _slot(ht_key, key, shift)
    if ht_key[h] == key:
        r = np.int64(ht_val[h])
    else:
        r = n_rec
        n_rec += 1
        ht_key[h] = key
        ht_val[h] = r
        r32[R_LEFT, r] = x
        r32[R_RIGHT, r] = y
        r32[R_HEAD, r] = -1
        r32[R_TAIL, r] = -1
        r64[R_CNT, r] = 0
        r64[R_OCC, r] = 0
        if mode == MODE_LIKELIHOOD:
            r32[R_LCH, r] = i32[I_LHD, x]
            i32[I_LHD, x] = r
            i64[I_NL, x] += 1
            r32[R_RCH, r] = i32[I_RHD, y]
            i32[I_RHD, y] = r
            i64[I_NR, y] += 1
    t = r32[R_TAIL, r]
    pos[P_LPV, i] = t
    pos[P_LNX, i] = -1
    if t >= 0:
        pos[P_LNX, t] = i
    else:
        r32[R_HEAD, r] = i
    r32[R_TAIL, r] = i
    r64[R_CNT, r] += w
    r64[R_OCC, r] += 1
    pos[P_REC, i] = r
    return n_rec


@njit(**_HELPER)
def _push_chain(x, hd_row, nxt_row, n_row, h64, hsc, hn, thr, mode, i32, r32, r64, i64):
    """Push a fresh snapshot of every eligible record in symbol x's chain; unlink the others for good.

    A record below ``thr`` stays below: the count of a pair only falls after the merge that created it.
    """
    prev = np.int64(-1)
    r = np.int64(i32[hd_row, x])
    while r >= 0:
        nxt = np.int64(r32[nxt_row, r])
        if r64[R_CNT, r] >= thr:
            hn = _push(h64, hsc, hn, r, mode, r32, r64, i64)
            prev = r
        else:
            if prev >= 0:
                r32[nxt_row, prev] = nxt
            else:
                i32[hd_row, x] = nxt
            i64[n_row, x] -= 1
        r = nxt
    return hn


# ----------------------------------------------------------------------------------------------------------------
# merge learning


@njit(cache=True, nogil=True)
def merge_run(mode, counts, n_base, thr, max_len, k_stop, pos, r32, r64, ht_key, ht_val, i32, i64, h64, hsc, st,
              out_left, out_right, out_cnt):
    """Learn merges until ``k_stop`` merges are done, no pair is eligible, or more room is needed.

    Sennrich et al. (2016) BPE when ``mode`` is :data:`MODE_FREQUENCY`: the pair with the highest count wins.
    WordPiece (Schuster & Nakajima 2012; Wu et al. 2016) when ``mode`` is :data:`MODE_LIKELIHOOD`: the pair with
    the highest ``count(ab) / (count(a) * count(b))`` wins, ties to the higher count. Remaining ties go to the
    smallest ``(left, right)``. A pair is eligible when its count is >= ``thr`` (>= 1) and, if ``max_len`` > 0,
    its two parts total at most ``max_len`` characters. Merge k creates id ``n_base + k``.

    Counts are of windows: a word of weight w adds w to pair (x, y) for every adjacent (x, y) in its current
    segmentation, overlapping windows included (``a a a`` counts 2 for (a, a)); a merge rewrites the
    occurrences left to right without overlap (``a a a`` -> ``aa a``). This is Hugging Face ``BpeTrainer``'s rule.

    Each merge visits only the positions of the merged pair (a linked list per pair), so its cost is
    proportional to its number of occurrences, whatever the length of the words; no pair is ever recounted.

    All arrays are described in the module docstring; they are updated in place and ``st`` records where to
    resume. Returns one of :data:`STATUS_DONE`, :data:`STATUS_PAUSED`, :data:`STATUS_NEED_ROOM`.
    """
    total = pos.shape[1]
    rec_cap = r32.shape[1]
    hcap = h64.shape[1]
    shift = _shift_for(ht_key.shape[0])
    n_rec = st[S_NREC]
    hn = st[S_HN]
    k = st[S_K]

    # phase 0: count the windows of the initial segmentation
    if st[S_PHASE] == 0:
        i = st[S_POS]
        while i < total:
            j = pos[P_NXT, i]
            if j >= 0:
                if n_rec + 1 > rec_cap:
                    st[S_POS] = i
                    st[S_NREC] = n_rec
                    st[S_NEED_REC] = n_rec + 1
                    st[S_NEED_HEAP] = 0
                    return STATUS_NEED_ROOM
                n_rec = _link(i, np.int64(pos[P_SYM, i]), np.int64(pos[P_SYM, j]), counts[pos[P_WORD, i]], mode,
                              max_len, pos, r32, r64, ht_key, ht_val, i32, i64, shift, n_rec)
            if mode == MODE_LIKELIHOOD:
                i64[I_SCNT, pos[P_SYM, i]] += counts[pos[P_WORD, i]]
            i += 1
        st[S_POS] = total
        st[S_NREC] = n_rec
        st[S_PHASE] = 1

    # phase 1: heap of every eligible pair
    if st[S_PHASE] == 1:
        if hcap < n_rec:
            st[S_NEED_REC] = 0
            st[S_NEED_HEAP] = n_rec
            return STATUS_NEED_ROOM
        hn = _rebuild_heap(h64, hsc, n_rec, thr, mode, r32, r64, i64)
        st[S_HN] = hn
        st[S_PHASE] = 2

    # phase 2: merges
    status = STATUS_PAUSED
    while k < k_stop:
        if mode == MODE_LIKELIHOOD and hn > 4 * n_rec + 4096:
            hn = _rebuild_heap(h64, hsc, n_rec, thr, mode, r32, r64, i64)
        # settle the top: drop or refresh stale snapshots
        r = -1
        while hn > 0:
            top = h64[H_REC, 0]
            cur = r64[R_CNT, top]
            stale = cur != h64[H_CNT, 0]
            if mode == MODE_LIKELIHOOD and not stale:
                stale = (i64[I_SCNT, r32[R_LEFT, top]] != h64[H_CA, 0]
                         or i64[I_SCNT, r32[R_RIGHT, top]] != h64[H_CB, 0])
            if not stale:
                r = top
                break
            hn = _pop(h64, hsc, hn, mode)
            if cur >= thr:
                hn = _push(h64, hsc, hn, top, mode, r32, r64, i64)
        if r < 0:
            status = STATUS_DONE
            break
        a = np.int64(r32[R_LEFT, r])
        b = np.int64(r32[R_RIGHT, r])
        # room: every new pair contains the new id, next to one of the n_base + k + 1 ids or at one occurrence
        new_rec = min(2 * r64[R_OCC, r], 2 * (n_base + k + 1))
        new_heap = new_rec
        if mode == MODE_LIKELIHOOD:
            new_heap = 2 * new_rec + i64[I_NL, a] + i64[I_NR, a] + i64[I_NL, b] + i64[I_NR, b]
        if n_rec + new_rec > rec_cap or hn + new_heap > hcap:
            st[S_NEED_REC] = n_rec + new_rec
            st[S_NEED_HEAP] = hn + new_heap
            status = STATUS_NEED_ROOM
            break
        hn = _pop(h64, hsc, hn, mode)
        out_left[k] = a
        out_right[k] = b
        out_cnt[k] = r64[R_CNT, r]
        n = n_base + k
        i32[I_TLEN, n] = min(i32[I_TLEN, a] + i32[I_TLEN, b], 1 << 30)  # only compared with max_len
        n_rec0 = n_rec
        tw = np.int64(0)
        while True:
            i = np.int64(r32[R_HEAD, r])
            if i < 0:
                break
            w = counts[pos[P_WORD, i]]
            _unlink(i, w, pos, r32, r64)
            j = np.int64(pos[P_NXT, i])
            p = np.int64(pos[P_PRV, i])
            q = np.int64(pos[P_NXT, j])
            if p >= 0:
                _unlink(p, w, pos, r32, r64)
            if q >= 0:
                _unlink(j, w, pos, r32, r64)
                pos[P_PRV, q] = i
            pos[P_SYM, i] = n
            pos[P_NXT, i] = q
            pos[P_SYM, j] = -1
            tw += w
            if p >= 0:
                n_rec = _link(p, np.int64(pos[P_SYM, p]), n, w, mode, max_len, pos, r32, r64, ht_key, ht_val, i32, i64,
                              shift, n_rec)
            if q >= 0:
                n_rec = _link(i, n, np.int64(pos[P_SYM, q]), w, mode, max_len, pos, r32, r64, ht_key, ht_val, i32, i64,
                              shift, n_rec)
        k += 1
        if mode == MODE_LIKELIHOOD:
            i64[I_SCNT, a] -= tw
            i64[I_SCNT, b] -= tw
            i64[I_SCNT, n] += tw
        # every pair created by this merge is new (it contains id n) and its count can only fall from now on
        for r2 in range(n_rec0, n_rec):
            if r64[R_CNT, r2] >= thr:
                hn = _push(h64, hsc, hn, r2, mode, r32, r64, i64)
        if mode == MODE_LIKELIHOOD:
            # count(a) and count(b) fell, so every pair containing a or b has a higher score: refresh them
            # (rows as int64 variables, not literals: one compiled specialisation of _push_chain)
            lhd, lch, nl = np.int64(I_LHD), np.int64(R_LCH), np.int64(I_NL)
            rhd, rch, nr = np.int64(I_RHD), np.int64(R_RCH), np.int64(I_NR)
            hn = _push_chain(a, lhd, lch, nl, h64, hsc, hn, thr, mode, i32, r32, r64, i64)
            hn = _push_chain(a, rhd, rch, nr, h64, hsc, hn, thr, mode, i32, r32, r64, i64)
            if b != a:
                hn = _push_chain(b, lhd, lch, nl, h64, hsc, hn, thr, mode, i32, r32, r64, i64)
                hn = _push_chain(b, rhd, rch, nr, h64, hsc, hn, thr, mode, i32, r32, r64, i64)
    st[S_K] = k
    st[S_NREC] = n_rec
    st[S_HN] = hn
    return status
