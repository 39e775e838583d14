"""Numba kernels of the SentencePiece models: Viterbi, the lattice, sampling and n-best (unigram), and BPE.

Each works on normalized UTF-8 bytes (see :mod:`tokembed.plugins.unigram._kernels`) and the double array of the
pieces (value = piece id). These are helpers compiled into the entry kernels of ``_kernels_encode.py``; the two
that Python calls directly (:func:`sample_path`, :func:`nbest`) are cached.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._kernels import (_HAS_LEAF_BIT, _VALUE_MASK, KIND_NORMAL, KIND_UNUSED, KIND_USER_DEFINED,
                       _label, _offset, char_len, exact_match, longest_prefix)

# ----------------------------------------------------------------------------------------------------------------
# unigram: best segmentation


@njit(nogil=True)
def viterbi(text, start, end, units, scores, kinds, unk_id, unk_score, best_score, best_start, best_id,
            out_ids, out_starts):
    """Best segmentation of ``text[start:end]`` (normalized UTF-8) under the unigram model, SentencePiece's
    ``EncodeOptimized`` step for step (float32 sums, the same tie rule and score reset).

    ``units`` is the double array of the pieces (value = id), ``scores`` float32 per id, ``kinds`` per id. A
    position that no one-character piece covers gets an unknown node (one character, ``unk_score``). Ties: a later
    candidate replaces the best one only with a strictly greater score; candidates come by increasing start, then
    increasing length. User-defined pieces score ``0.1 * (bytes - 1)``.

    ``best_*`` are scratch arrays of at least ``end - start + 1`` entries. Writes the ids and the start of each
    token (relative to ``start``) into ``out_ids`` / ``out_starts`` (at least ``end - start`` long), in order.

    Returns the number of tokens.
    """
    size = end - start
    if size <= 0:
        return 0
    for i in range(size + 1):
        best_score[i] = np.float32(0.0)
        best_start[i] = -1
        best_id[i] = -1
    reset = np.float32(100000.0)
    max_frontier = 0
    s = 0
    while s < size:
        till_here = best_score[s]
        if till_here < -reset or till_here > reset:
            offset = till_here
            for i in range(s, max_frontier + 1):
                if i == s or best_start[i] != -1:
                    best_score[i] = best_score[i] - offset
            till_here = np.float32(0.0)
        mblen = min(char_len(text[start + s]), size - s)
        has_single = False
        if units.shape[0]:
            pos = np.int64(_offset(np.int64(units[0])))
            for i in range(start + s, end):
                c = np.int64(text[i])
                pos ^= c
                if pos >= units.shape[0]:
                    break
                unit = np.int64(units[pos])
                if _label(unit) != c:
                    break
                pos ^= _offset(unit)
                if unit & _HAS_LEAF_BIT:
                    pid = np.int64(units[pos]) & _VALUE_MASK
                    if pid >= scores.shape[0]:
                        continue
                    kind = kinds[pid]
                    if kind == KIND_UNUSED:
                        continue
                    key_pos = i + 1 - start
                    if key_pos > max_frontier:
                        max_frontier = key_pos
                    length = key_pos - s
                    if kind == KIND_USER_DEFINED:
                        score = np.float32(0.1 * (length - 1))
                    else:
                        score = scores[pid]
                    cand = np.float32(score + till_here)
                    if best_start[key_pos] == -1 or cand > best_score[key_pos]:
                        best_score[key_pos] = cand
                        best_start[key_pos] = s
                        best_id[key_pos] = pid
                    if length == mblen:
                        has_single = True
        if not has_single:
            if s + mblen > max_frontier:
                max_frontier = s + mblen
            cand = np.float32(unk_score + till_here)
            if best_start[s + mblen] == -1 or cand > best_score[s + mblen]:
                best_score[s + mblen] = cand
                best_start[s + mblen] = s
                best_id[s + mblen] = unk_id
        s += mblen
    # backtrack
    n = 0
    e = size
    while e > 0:
        out_ids[n] = best_id[e]
        out_starts[n] = best_start[e]
        n += 1
        e = best_start[e]
    for i in range(n // 2):
        a = out_ids[i]
        out_ids[i] = out_ids[n - 1 - i]
        out_ids[n - 1 - i] = a
        b = out_starts[i]
        out_starts[i] = out_starts[n - 1 - i]
        out_starts[n - 1 - i] = b
    return n


@njit(nogil=True)
def lattice(text, start, end, units, scores, kinds, unk_id, unk_score, node_start, node_end, node_id,
            node_score):
    """The nodes of the lattice of ``text[start:end]``: every piece occurrence, SentencePiece's ``PopulateNodes``
    (a one-character unknown node where no one-character piece starts). Positions are byte offsets relative to
    ``start``; nodes come by increasing start, then increasing length.

    Returns the number of nodes, or -1 when the node arrays are too short.
    """
    size = end - start
    n = 0
    cap = node_start.shape[0]
    s = 0
    while s < size:
        mblen = min(char_len(text[start + s]), size - s)
        has_single = False
        if units.shape[0]:
            pos = np.int64(_offset(np.int64(units[0])))
            for i in range(start + s, end):
                c = np.int64(text[i])
                pos ^= c
                if pos >= units.shape[0]:
                    break
                unit = np.int64(units[pos])
                if _label(unit) != c:
                    break
                pos ^= _offset(unit)
                if unit & _HAS_LEAF_BIT:
                    pid = np.int64(units[pos]) & _VALUE_MASK
                    if pid >= scores.shape[0] or kinds[pid] == KIND_UNUSED:
                        continue
                    # only whole characters: the piece must end before a character start
                    e = i + 1
                    if e < end and (text[e] & 0xC0) == 0x80:
                        continue
                    if n >= cap:
                        return -1
                    length = e - start - s
                    node_start[n] = s
                    node_end[n] = e - start
                    node_id[n] = pid
                    node_score[n] = np.float32(0.1 * (length - 1)) if kinds[pid] == KIND_USER_DEFINED \
                        else scores[pid]
                    n += 1
                    if length == mblen:
                        has_single = True
        if not has_single:
            if n >= cap:
                return -1
            node_start[n] = s
            node_end[n] = s + mblen
            node_id[n] = unk_id
            node_score[n] = unk_score
            n += 1
        s += mblen
    return n


@njit(nogil=True, inline="always")
def _logaddexp(a, b):
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    if a > b:
        return a + np.log1p(np.exp(b - a))
    return b + np.log1p(np.exp(a - b))


@njit(nogil=True)
def forward(size, n, node_start, node_end, node_score, inv_theta, alpha):
    """Forward pass over a lattice of ``n`` nodes (sorted by start): ``alpha[k]`` is the log of the summed
    probability of the paths from the text start that end with node ``k`` (scores times ``inv_theta``), float64.

    Returns the log partition function (paths over the whole text), -inf when there is none.
    """
    ends_at = np.full(size + 1, -np.inf)
    ends_at[0] = 0.0
    for k in range(n):
        a = ends_at[node_start[k]]
        alpha[k] = a + inv_theta * node_score[k] if a != -np.inf else -np.inf
        ends_at[node_end[k]] = _logaddexp(ends_at[node_end[k]], alpha[k])
    return ends_at[size]


@njit(cache=True, nogil=True)
def sample_path(size, n, node_start, node_end, node_score, inv_theta, seed, out_nodes):
    """Draw one segmentation from the lattice with probability proportional to ``exp(inv_theta * score)``
    (forward filtering, backward sampling: Kudo 2018, section 2.2). ``seed`` (uint64) drives a splitmix64 stream.

    Writes the chosen node indices into ``out_nodes`` in text order; returns their number.
    """
    alpha = np.empty(n, np.float64)
    forward(size, n, node_start, node_end, node_score, inv_theta, alpha)
    # nodes ending at each position (CSR)
    counts = np.zeros(size + 2, np.int64)
    for k in range(n):
        counts[node_end[k] + 1] += 1
    for i in range(size + 1):
        counts[i + 1] += counts[i]
    by_end = np.empty(n, np.int64)
    fill = counts.copy()
    for k in range(n):
        by_end[fill[node_end[k]]] = k
        fill[node_end[k]] += 1
    state = np.uint64(seed)
    m = 0
    pos = size
    while pos > 0:
        lo, hi = counts[pos], counts[pos + 1]
        total = -np.inf
        for j in range(lo, hi):
            total = _logaddexp(total, alpha[by_end[j]])
        state += np.uint64(0x9E3779B97F4A7C15)
        z = state
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
        u = (z >> np.uint64(11)) * (1.0 / 9007199254740992.0)
        acc = 0.0
        chosen = by_end[hi - 1]
        for j in range(lo, hi):
            k = by_end[j]
            if alpha[k] == -np.inf:
                continue
            acc += np.exp(alpha[k] - total)
            if u < acc:
                chosen = k
                break
        out_nodes[m] = chosen
        m += 1
        pos = node_start[chosen]
    for i in range(m // 2):
        a = out_nodes[i]
        out_nodes[i] = out_nodes[m - 1 - i]
        out_nodes[m - 1 - i] = a
    return m


@njit(cache=True, nogil=True)
def nbest(size, n, node_start, node_end, node_score, k_best, out_nodes, out_offsets, out_scores):
    """The ``k_best`` best segmentations of a lattice (k-best Viterbi: each position keeps its ``k_best`` best
    partial paths), best first; among equal scores the path found first is kept first.

    Writes the node indices of path ``r`` into ``out_nodes[out_offsets[r]:out_offsets[r + 1]]`` and its score
    (float64 sum of node scores) into ``out_scores[r]``. Returns the number of paths.
    """
    K = k_best
    sc = np.full((size + 1, K), -np.inf)
    back_node = np.full((size + 1, K), -1, np.int64)
    back_rank = np.full((size + 1, K), -1, np.int64)
    cnt = np.zeros(size + 1, np.int64)
    sc[0, 0] = 0.0
    cnt[0] = 1
    for k in range(n):
        s, e = node_start[k], node_end[k]
        for r in range(cnt[s]):
            cand = sc[s, r] + node_score[k]
            # insert into the sorted list at e (strictly greater goes first)
            c = cnt[e]
            if c == K and cand <= sc[e, K - 1]:
                break
            j = c if c < K else K - 1
            while j > 0 and sc[e, j - 1] < cand:
                if j < K:
                    sc[e, j] = sc[e, j - 1]
                    back_node[e, j] = back_node[e, j - 1]
                    back_rank[e, j] = back_rank[e, j - 1]
                j -= 1
            sc[e, j] = cand
            back_node[e, j] = k
            back_rank[e, j] = r
            if c < K:
                cnt[e] = c + 1
    m = 0
    total = 0
    out_offsets[0] = 0
    for r in range(cnt[size]):
        pos, rank, length = size, r, 0
        while pos > 0:
            node = back_node[pos, rank]
            out_nodes[total + length] = node
            length += 1
            rank = back_rank[pos, rank]
            pos = node_start[node]
        for i in range(length // 2):
            a = out_nodes[total + i]
            out_nodes[total + i] = out_nodes[total + length - 1 - i]
            out_nodes[total + length - 1 - i] = a
        total += length
        out_scores[m] = sc[size, r]
        m += 1
        out_offsets[m] = total
    return m


# ----------------------------------------------------------------------------------------------------------------
# BPE (SentencePiece's model_type BPE): merge the adjacent pair whose joined piece scores highest


@njit(nogil=True, inline="always")
def _score_key(score):
    """An int64 that orders float32 scores as SentencePiece's ``SymbolPairComparator`` does (-0.0 below +0.0)."""
    bits = np.int64(np.float32(score).view(np.int32))
    if bits >= 0:
        return bits
    return -1 - (bits & 0x7FFFFFFF)


@njit(nogil=True, inline="always")
def _before(ka, la, kb, lb):
    """True when pair a is merged before pair b: higher score key, then the smaller left index."""
    return ka > kb or (ka == kb and la < lb)


@njit(nogil=True)
def _heap_push(hk, hl, hr, hs, n, key, left, right, size):
    i = n
    hk[i], hl[i], hr[i], hs[i] = key, left, right, size
    while i > 0:
        p = (i - 1) >> 1
        if _before(hk[i], hl[i], hk[p], hl[p]):
            hk[i], hk[p] = hk[p], hk[i]
            hl[i], hl[p] = hl[p], hl[i]
            hr[i], hr[p] = hr[p], hr[i]
            hs[i], hs[p] = hs[p], hs[i]
            i = p
        else:
            break
    return n + 1


@njit(nogil=True)
def _heap_pop(hk, hl, hr, hs, n):
    n -= 1
    hk[0], hl[0], hr[0], hs[0] = hk[n], hl[n], hr[n], hs[n]
    i = 0
    while True:
        a = 2 * i + 1
        if a >= n:
            break
        b = a + 1
        c = a
        if b < n and _before(hk[b], hl[b], hk[a], hl[a]):
            c = b
        if _before(hk[c], hl[c], hk[i], hl[i]):
            hk[i], hk[c] = hk[c], hk[i]
            hl[i], hl[c] = hl[c], hl[i]
            hr[i], hr[c] = hr[c], hr[i]
            hs[i], hs[c] = hs[c], hs[i]
            i = c
        else:
            break
    return n


@njit(nogil=True, inline="always")
def _pair_key(text, start, a0, a1, b1, units, scores, kinds, unk_id):
    """Score key of the piece ``text[start + a0:start + b1]`` if it may be merged, else a sentinel."""
    pid = exact_match(units, text, start + a0, start + b1)
    if pid < 0 or pid == unk_id or pid >= kinds.shape[0]:
        return np.int64(-(1 << 62))
    k = kinds[pid]
    if k != KIND_NORMAL and k != KIND_USER_DEFINED and k != KIND_UNUSED:
        return np.int64(-(1 << 62))
    return _score_key(scores[pid])


@njit(nogil=True)
def bpe(text, start, end, units, scores, kinds, unk_id, user, dropout, seed, sym_start, sym_end, prev, nxt,
        frozen, out_ids, out_starts, out_ends):
    """SentencePiece's BPE ``SampleEncode`` of ``text[start:end]`` (normalized UTF-8): characters (user-defined
    symbols whole and frozen) merged pair by pair, the pair whose joined piece has the highest score first
    (SentencePiece's comparator: -0.0 below +0.0), the leftmost among equal scores; each merge is skipped with
    probability ``dropout`` (BPE-dropout, a splitmix64 stream from ``seed``). A piece of kind UNUSED is split back
    into the two parts it was merged from; a final symbol without an id is ``unk_id``.

    ``sym_*``, ``prev``, ``nxt``, ``frozen`` are scratch arrays of at least ``end - start`` entries; writes ids and
    byte spans (relative to ``start``) of the tokens. Returns the number of tokens.
    """
    size = end - start
    if size <= 0:
        return 0
    m = 0
    p = 0
    while p < size:
        length, _ = longest_prefix(user, text, start + p, end) if user.shape[0] else (0, -1)
        frozen[m] = length > 0
        if length == 0:
            length = min(char_len(text[start + p]), size - p)
        sym_start[m] = p
        sym_end[m] = p + length
        prev[m] = m - 1
        nxt[m] = m + 1
        m += 1
        p += length
    nxt[m - 1] = -1
    cap = 2 * m + 4
    hk = np.empty(cap, np.int64)
    hl = np.empty(cap, np.int64)
    hr = np.empty(cap, np.int64)
    hs = np.empty(cap, np.int64)
    nh = 0
    none = np.int64(-(1 << 62))
    for i in range(m - 1):
        if frozen[i] or frozen[i + 1]:
            continue
        key = _pair_key(text, start, sym_start[i], sym_end[i], sym_end[i + 1], units, scores, kinds, unk_id)
        if key != none:
            nh = _heap_push(hk, hl, hr, hs, nh, key, i, i + 1, sym_end[i + 1] - sym_start[i])
    state = np.uint64(seed)
    while nh > 0:
        left, right, want = hl[0], hr[0], hs[0]
        nh = _heap_pop(hk, hl, hr, hs, nh)
        if sym_end[left] <= sym_start[left] or sym_end[right] <= sym_start[right] \
                or (sym_end[left] - sym_start[left]) + (sym_end[right] - sym_start[right]) != want:
            continue
        if dropout > 0.0:
            state += np.uint64(0x9E3779B97F4A7C15)
            z = state
            z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            z = z ^ (z >> np.uint64(31))
            if (z >> np.uint64(11)) * (1.0 / 9007199254740992.0) < dropout:
                continue
        sym_end[left] = sym_end[right]
        nxt[left] = nxt[right]
        if nxt[right] >= 0:
            prev[nxt[right]] = left
        sym_end[right] = sym_start[right]  # empty: no longer a symbol
        if nh + 2 > cap:
            cap *= 2
            hk2 = np.empty(cap, np.int64)
            hl2 = np.empty(cap, np.int64)
            hr2 = np.empty(cap, np.int64)
            hs2 = np.empty(cap, np.int64)
            hk2[:nh], hl2[:nh], hr2[:nh], hs2[:nh] = hk[:nh], hl[:nh], hr[:nh], hs[:nh]
            hk, hl, hr, hs = hk2, hl2, hr2, hs2
        a = prev[left]
        if a >= 0 and not frozen[a] and not frozen[left]:
            key = _pair_key(text, start, sym_start[a], sym_end[a], sym_end[left], units, scores, kinds, unk_id)
            if key != none:
                nh = _heap_push(hk, hl, hr, hs, nh, key, a, left, sym_end[left] - sym_start[a])
        b = nxt[left]
        if b >= 0 and not frozen[b] and not frozen[left]:
            key = _pair_key(text, start, sym_start[left], sym_end[left], sym_end[b], units, scores, kinds, unk_id)
            if key != none:
                nh = _heap_push(hk, hl, hr, hs, nh, key, left, b, sym_end[b] - sym_start[left])
    n = 0
    i = 0
    while i >= 0:
        n = _resegment(text, start, sym_start[i], sym_end[i], units, kinds, unk_id, out_ids, out_starts,
                       out_ends, n, 0)
        i = nxt[i]
    return n


@njit(nogil=True)
def _resegment(text, start, a, b, units, kinds, unk_id, out_ids, out_starts, out_ends, n, depth):
    """Emit the piece ``text[start + a:start + b]``; an UNUSED piece is split where both parts are pieces (the
    longest left part first), again and again up to 100 levels, as SentencePiece undoes the merge that made it.
    Iterative (an explicit stack): Numba does not cache recursive functions reliably."""
    stack_a = np.empty(2 * 101 + 2, np.int64)
    stack_b = np.empty(2 * 101 + 2, np.int64)
    stack_d = np.empty(2 * 101 + 2, np.int64)
    top = 0
    stack_a[0], stack_b[0], stack_d[0] = a, b, depth
    top = 1
    while top > 0:
        top -= 1
        a, b, d = stack_a[top], stack_b[top], stack_d[top]
        pid = exact_match(units, text, start + a, start + b)
        if pid < 0 or pid == unk_id or pid >= kinds.shape[0]:
            pid = unk_id
        else:
            k = kinds[pid]
            if k != KIND_NORMAL and k != KIND_USER_DEFINED and k != KIND_UNUSED:
                pid = unk_id
            elif k == KIND_UNUSED and d < 100:
                split = -1
                for c in range(b - 1, a, -1):
                    if (text[start + c] & 0xC0) == 0x80:
                        continue
                    if exact_match(units, text, start + a, start + c) >= 0 and \
                            exact_match(units, text, start + c, start + b) >= 0:
                        split = c
                        break
                if split > 0:
                    # right part below the left part: the left one is emitted first
                    stack_a[top], stack_b[top], stack_d[top] = split, b, d + 1
                    top += 1
                    stack_a[top], stack_b[top], stack_d[top] = a, split, d + 1
                    top += 1
                    continue
                pid = unk_id
        out_ids[n] = pid
        out_starts[n] = a
        out_ends[n] = b
        n += 1
    return n
