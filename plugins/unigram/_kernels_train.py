"""Numba kernels of Unigram training (Kudo 2018; SentencePiece's ``unigram_model_trainer.cc``), over word counts.

Words are code-point arrays (CSR: ``cps``, ``offsets``) with counts; pieces live in a hash table of code-point
strings (:func:`build_piece_table`), so a lattice is built by looking up every substring of at most
``max_len`` characters. All sums are float64; the kernels run on a range of words, so that Python can run several
ranges on threads and add their results in a fixed order (the result does not depend on the number of threads).
"""

from __future__ import annotations

import numpy as np
from numba import njit

_EMPTY = -1
_H_MULT = np.uint64(0x100000001B3)
_H_INIT = np.uint64(0xCBF29CE484222325)


@njit(nogil=True, inline="always")
def _hstep(h, cp):
    return (h ^ np.uint64(cp + 1)) * _H_MULT


@njit(nogil=True, inline="always")
def _same(cps, a, b, length):
    for k in range(length):
        if cps[a + k] != cps[b + k]:
            return False
    return True


# ----------------------------------------------------------------------------------------------------------------
# seed pieces: frequent substrings


@njit(cache=True, nogil=True)
def count_substrings(cps, offsets, counts, final, script, digit, max_len, split_digits, unk_cp, space_cp):
    """Occurrences of every valid substring of 2 to ``max_len`` characters of the words, with right-maximality.

    A substring is valid as SentencePiece's ``IsValidSentencePiece`` says (``script`` holds each position's script
    id after SentencePiece's merges: Hiragana, Katakana and U+30FC count as Han, -1 means Inherited, -2 "any";
    ``digit`` marks decimal digits): no ``unk_cp``, ``space_cp`` only first, one script, a digit only alone when
    ``split_digits``. Validity only gets lost by extending a substring, so each start is extended until invalid.

    SentencePiece takes its seeds from the nodes of a suffix array of the text: substrings that are followed by at
    least two different bytes. The same is found here: the first UTF-8 byte of the following character of each
    occurrence (at a word end: 0xE2, the first byte of the next word's ``▁``, or 0 for a word marked ``final``, which
    ended its document) is kept while it is the same.

    Returns
    -------
    (first, length, count, branching) : arrays
        Per distinct substring: position in ``cps`` of one occurrence, its length in characters, its weighted
        occurrence count (int64), and whether it is right-branching.
    """
    cap = 1 << 16
    mask = cap - 1
    slots = np.full(cap, _EMPTY, np.int64)
    s_hash = np.empty(cap // 2, np.uint64)
    s_first = np.empty(cap // 2, np.int64)
    s_len = np.empty(cap // 2, np.int64)
    s_count = np.empty(cap // 2, np.int64)
    s_follow = np.empty(cap // 2, np.int64)
    n = 0
    n_words = counts.shape[0]
    for w in range(n_words):
        a, b = offsets[w], offsets[w + 1]
        c = counts[w]
        for i in range(a, b):
            h = _H_INIT
            prev = -2
            for j in range(i, min(b, i + max_len)):
                cp = cps[j]
                if cp == unk_cp:
                    break
                if cp == space_cp:
                    if j > i:
                        break
                else:
                    s = script[j]
                    if s == -1:
                        s = prev
                    if split_digits and digit[j] and j > i:
                        break
                    if split_digits and j > i and digit[i]:
                        break
                    if s != -2 and prev != -2 and s != prev:
                        break
                    prev = s
                h = _hstep(h, cp)
                length = j - i + 1
                if length < 2:
                    continue
                if j + 1 < b:
                    nxt = cps[j + 1]
                    follow = nxt if nxt < 0x80 else (0xC0 | (nxt >> 6) if nxt < 0x800 else (
                        0xE0 | (nxt >> 12) if nxt < 0x10000 else 0xF0 | (nxt >> 18)))
                else:
                    follow = 0 if final[w] else 0xE2
                # look up / insert
                slot = np.int64(h & np.uint64(mask))
                while True:
                    k = slots[slot]
                    if k == _EMPTY:
                        if n >= s_hash.shape[0]:
                            # grow: double the entries and the slot table, then rehash
                            size = 2 * s_hash.shape[0]
                            s_hash = _grow_u64(s_hash, size)
                            s_first = _grow_i64(s_first, size)
                            s_len = _grow_i64(s_len, size)
                            s_count = _grow_i64(s_count, size)
                            s_follow = _grow_i64(s_follow, size)
                            cap = 2 * size
                            mask = cap - 1
                            slots = np.full(cap, _EMPTY, np.int64)
                            for e in range(n):
                                t = np.int64(s_hash[e] & np.uint64(mask))
                                while slots[t] != _EMPTY:
                                    t = (t + 1) & mask
                                slots[t] = e
                            slot = np.int64(h & np.uint64(mask))
                            continue
                        slots[slot] = n
                        s_hash[n] = h
                        s_first[n] = i
                        s_len[n] = length
                        s_count[n] = c
                        s_follow[n] = follow
                        n += 1
                        break
                    if s_hash[k] == h and s_len[k] == length and _same(cps, s_first[k], i, length):
                        s_count[k] += c
                        if s_follow[k] != follow:
                            s_follow[k] = -1
                        break
                    slot = (slot + 1) & mask
    return s_first[:n].copy(), s_len[:n].copy(), s_count[:n].copy(), s_follow[:n] == -1


@njit(nogil=True)
def _grow_u64(a, size):
    out = np.empty(size, np.uint64)
    out[: a.shape[0]] = a
    return out


@njit(nogil=True)
def _grow_i64(a, size):
    out = np.empty(size, np.int64)
    out[: a.shape[0]] = a
    return out


# ----------------------------------------------------------------------------------------------------------------
# the piece table


@njit(cache=True, nogil=True)
def build_piece_table(pcps, poffsets):
    """Open-addressing hash table of the pieces ``pcps[poffsets[p]:poffsets[p + 1]]`` (code points).

    Returns ``slots`` (int64, a power of two long, -1 empty, else a piece id), the hash of each piece.
    """
    n = poffsets.shape[0] - 1
    cap = 16
    while cap < 4 * n:
        cap *= 2
    mask = cap - 1
    slots = np.full(cap, _EMPTY, np.int64)
    hashes = np.empty(n, np.uint64)
    for p in range(n):
        h = _H_INIT
        for k in range(poffsets[p], poffsets[p + 1]):
            h = _hstep(h, pcps[k])
        hashes[p] = h
        t = np.int64(h & np.uint64(mask))
        while slots[t] != _EMPTY:
            t = (t + 1) & mask
        slots[t] = p
    return slots, hashes


@njit(nogil=True, inline="always")
def _find(slots, hashes, pcps, poffsets, h, cps, start, length):
    mask = slots.shape[0] - 1
    t = np.int64(h & np.uint64(mask))
    while True:
        p = slots[t]
        if p == _EMPTY:
            return -1
        if hashes[p] == h and poffsets[p + 1] - poffsets[p] == length:
            ok = True
            base = poffsets[p]
            for k in range(length):
                if pcps[base + k] != cps[start + k]:
                    ok = False
                    break
            if ok:
                return p
        t = (t + 1) & mask


@njit(nogil=True)
def _word_lattice(cps, a, b, slots, hashes, pcps, poffsets, logp, max_len, unk_score, exclude, n_start, n_end,
                  n_id, n_score):
    """Nodes of the lattice of ``cps[a:b]``, by start then length (positions relative to ``a``); a position
    without a one-character piece gets an unknown node (id -1). ``exclude`` (a piece id or -1) is left out when
    it spans the whole word. Returns the node count."""
    m = 0
    size = b - a
    for i in range(size):
        h = _H_INIT
        single = False
        for j in range(i, min(size, i + max_len)):
            h = _hstep(h, cps[a + j])
            p = _find(slots, hashes, pcps, poffsets, h, cps, a + i, j - i + 1)
            if p < 0:
                continue
            if p == exclude and i == 0 and j == size - 1:
                continue
            n_start[m] = i
            n_end[m] = j + 1
            n_id[m] = p
            n_score[m] = logp[p]
            m += 1
            if j == i:
                single = True
        if not single:
            n_start[m] = i
            n_end[m] = i + 1
            n_id[m] = -1
            n_score[m] = unk_score
            m += 1
    return m


@njit(nogil=True, inline="always")
def _lae(a, b):
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    if a > b:
        return a + np.log1p(np.exp(b - a))
    return b + np.log1p(np.exp(a - b))


@njit(cache=True, nogil=True)
def e_step(cps, offsets, counts, lo, hi, slots, hashes, pcps, poffsets, logp, max_len, unk_score, expected):
    """Expected piece counts of words ``lo..hi-1`` (forward-backward over each word's lattice, weighted by the
    word count), added to ``expected`` (float64, per piece).

    Returns ``(sum of count * log Z, number of Viterbi tokens times counts)``.
    """
    longest = 1
    for w in range(lo, hi):
        longest = max(longest, offsets[w + 1] - offsets[w])
    cap = longest * max_len + longest + 1
    n_start = np.empty(cap, np.int64)
    n_end = np.empty(cap, np.int64)
    n_id = np.empty(cap, np.int64)
    n_score = np.empty(cap, np.float64)
    alpha = np.empty(cap, np.float64)
    beta = np.empty(cap, np.float64)
    fwd = np.empty(longest + 1, np.float64)
    bwd = np.empty(longest + 1, np.float64)
    best = np.empty(longest + 1, np.float64)
    best_node = np.empty(longest + 1, np.int64)
    obj = 0.0
    ntok = 0
    for w in range(lo, hi):
        a, b = offsets[w], offsets[w + 1]
        size = b - a
        m = _word_lattice(cps, a, b, slots, hashes, pcps, poffsets, logp, max_len, unk_score, -1, n_start, n_end,
                          n_id, n_score)
        for i in range(size + 1):
            fwd[i] = -np.inf
            bwd[i] = -np.inf
            best[i] = -np.inf
            best_node[i] = -1
        fwd[0] = 0.0
        bwd[size] = 0.0
        best[0] = 0.0
        for k in range(m):
            alpha[k] = fwd[n_start[k]] + n_score[k]
            fwd[n_end[k]] = _lae(fwd[n_end[k]], alpha[k])
            cand = best[n_start[k]] + n_score[k]
            if best_node[n_end[k]] == -1 or cand > best[n_end[k]]:
                best[n_end[k]] = cand
                best_node[n_end[k]] = k
        for k in range(m - 1, -1, -1):
            beta[k] = bwd[n_end[k]] + n_score[k]
            bwd[n_start[k]] = _lae(bwd[n_start[k]], beta[k])
        z = fwd[size]
        c = counts[w]
        obj += c * z
        for k in range(m):
            if n_id[k] >= 0:
                # P(node) = exp(fwd[start] + score + bwd[end] - Z)
                expected[n_id[k]] += c * np.exp(fwd[n_start[k]] + n_score[k] + bwd[n_end[k]] - z)
        e = size
        t = 0
        while e > 0:
            t += 1
            e = n_start[best_node[e]]
        ntok += t * c
    return obj, ntok


@njit(cache=True, nogil=True)
def viterbi_counts(cps, offsets, counts, lo, hi, slots, hashes, pcps, poffsets, logp, max_len, unk_score, freq):
    """Adds to ``freq`` (float64, per piece) how often each piece is in the best segmentation of words
    ``lo..hi-1`` (times their counts). Ties keep the earlier node (by start, then length), as SentencePiece's
    ``Viterbi``. Returns the number of tokens (times counts)."""
    longest = 1
    for w in range(lo, hi):
        longest = max(longest, offsets[w + 1] - offsets[w])
    cap = longest * max_len + longest + 1
    n_start = np.empty(cap, np.int64)
    n_end = np.empty(cap, np.int64)
    n_id = np.empty(cap, np.int64)
    n_score = np.empty(cap, np.float64)
    best = np.empty(longest + 1, np.float64)
    best_node = np.empty(longest + 1, np.int64)
    ntok = 0
    for w in range(lo, hi):
        a, b = offsets[w], offsets[w + 1]
        size = b - a
        m = _word_lattice(cps, a, b, slots, hashes, pcps, poffsets, logp, max_len, unk_score, -1, n_start, n_end,
                          n_id, n_score)
        for i in range(size + 1):
            best[i] = -np.inf
            best_node[i] = -1
        best[0] = 0.0
        for k in range(m):
            cand = best[n_start[k]] + n_score[k]
            if best_node[n_end[k]] == -1 or cand > best[n_end[k]]:
                best[n_end[k]] = cand
                best_node[n_end[k]] = k
        e = size
        while e > 0:
            k = best_node[e]
            if n_id[k] >= 0:
                freq[n_id[k]] += counts[w]
            ntok += counts[w]
            e = n_start[k]
    return ntok


@njit(cache=True, nogil=True)
def piece_alternatives(slots, hashes, pcps, poffsets, logp, max_len, unk_score, alt_ids, alt_offsets, own_best,
                       alt_score):
    """For each piece: whether its own string's best segmentation is the piece itself, and the best segmentation
    without it (SentencePiece's 2-best in ``PruneSentencePieces``; its alternative in
    ``PruneUnreachableSentencePieces``).

    Writes, per piece ``p``: ``own_best[p]`` (1 when the piece alone is the best path, 0 when a path of two or
    more pieces scores higher, -1 when there is no other path), the alternative's piece ids into
    ``alt_ids[alt_offsets[p]:alt_offsets[p + 1]]`` (an unknown node as -1) and its score into ``alt_score[p]``
    (-inf when there is none). ``alt_ids`` must hold ``len(pcps)`` entries.
    """
    n = poffsets.shape[0] - 1
    longest = 1
    for p in range(n):
        longest = max(longest, poffsets[p + 1] - poffsets[p])
    cap = longest * max_len + longest + 1
    n_start = np.empty(cap, np.int64)
    n_end = np.empty(cap, np.int64)
    n_id = np.empty(cap, np.int64)
    n_score = np.empty(cap, np.float64)
    best = np.empty(longest + 1, np.float64)
    best_node = np.empty(longest + 1, np.int64)
    out = 0
    alt_offsets[0] = 0
    for p in range(n):
        a, b = poffsets[p], poffsets[p + 1]
        size = b - a
        m = _word_lattice(pcps, a, b, slots, hashes, pcps, poffsets, logp, max_len, unk_score, p, n_start, n_end,
                          n_id, n_score)
        for i in range(size + 1):
            best[i] = -np.inf
            best_node[i] = -1
        best[0] = 0.0
        for k in range(m):
            cand = best[n_start[k]] + n_score[k]
            if best_node[n_end[k]] == -1 or cand > best[n_end[k]]:
                best[n_end[k]] = cand
                best_node[n_end[k]] = k
        if size == 1:  # a single character has no other segmentation (an unknown node is no alternative)
            own_best[p] = -1
            alt_score[p] = -np.inf
            alt_offsets[p + 1] = out
            continue
        # the path without the whole-word node of p (which _word_lattice left out)
        start = out
        e = size
        while e > 0:
            k = best_node[e]
            alt_ids[out] = n_id[k]
            out += 1
            e = n_start[k]
        for i in range((out - start) // 2):
            t = alt_ids[start + i]
            alt_ids[start + i] = alt_ids[out - 1 - i]
            alt_ids[out - 1 - i] = t
        alt_score[p] = best[size]
        alt_offsets[p + 1] = out
        own_best[p] = 0 if best[size] > logp[p] else 1
    return out
