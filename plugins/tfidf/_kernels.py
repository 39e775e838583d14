"""Numba kernels of the term vectorizers: n-gram interning, per-document term counts, row normalisation.

Documents arrive CSR-packed (``ids`` int32, ``offsets`` int64: document ``d`` is ``ids[offsets[d]:offsets[d+1]]``).
Every kernel is deterministic: the parallel one gives each row to one thread, and a row's result does not depend on
the others, so the output is the same for any number of threads.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

_FNV_OFFSET = -3750763034362895579  # 14695981039346656037 as a signed 64-bit integer
_FNV_PRIME = 1099511628211
_MIX = -7046029254386353131  # 0x9E3779B97F4A7C15 (golden ratio), signed


def new_ngram_table(max_n):
    """An empty n-gram table for :func:`intern_ngrams`: ``(key_tokens, key_offsets, key_hash, slots, n_keys,
    used)``, sized for 1,024 keys of up to ``max_n`` tokens (it grows as needed)."""
    cap = 1024
    return (np.empty(cap * max_n, dtype=np.int32), np.zeros(cap + 1, dtype=np.int64), np.empty(cap, dtype=np.int64),
            np.full(2 * cap, -1, dtype=np.int64), 0, 0)


def ngram_features(ids, offsets, min_n, max_n):
    """Intern the token n-grams of every document, ``min_n <= n <= max_n``, in a fresh table: the ``features``
    and ``feature_offsets`` of :func:`intern_ngrams`, then the keys, ``key_tokens`` (int32, the token ids of every
    key, concatenated) and ``key_offsets`` (int64 (n_keys + 1,): key ``k`` is
    ``key_tokens[key_offsets[k]:key_offsets[k + 1]]``), trimmed to their length."""
    features, feature_offsets, key_tokens, key_offsets, _, _, n_keys, used = intern_ngrams(
        ids, offsets, min_n, max_n, *new_ngram_table(max_n))
    return features, feature_offsets, key_tokens[:used].copy(), key_offsets[: n_keys + 1].copy()


@njit(cache=True)
def intern_ngrams(ids, offsets, min_n, max_n, key_tokens, key_offsets, key_hash, slots, n_keys, used):
    """Intern the token n-grams of every document, ``min_n <= n <= max_n``, in an open-addressing hash table that
    a caller may carry from one part of a corpus to the next (a key keeps its number across the parts).

    Within a document the n-grams are listed by ``n`` first, then by position (scikit-learn's order; it does not
    change any count). New keys are numbered in order of first occurrence, after the ``n_keys`` the table holds.

    Parameters
    ----------
    ids : ndarray of int32, shape (n_tokens,)
    offsets : ndarray of int64, shape (n_docs + 1,)
    min_n, max_n : int
        ``1 <= min_n <= max_n``.
    key_tokens, key_offsets, key_hash, slots, n_keys, used
        The table (:func:`new_ngram_table`, or what an earlier call returned): the token ids of every key
        (int32, ``used`` filled), where key ``k`` starts in them (int64, ``n_keys + 1`` filled), each key's hash
        (int64), the open-addressing slots (int64, -1 when free; a power of two, at least twice ``n_keys``).

    Returns
    -------
    features : ndarray of int32, shape (n_ngrams,)
        The key of every n-gram occurrence, documents one after the other.
    feature_offsets : ndarray of int64, shape (n_docs + 1,)
        Document ``d``'s n-grams are ``features[feature_offsets[d]:feature_offsets[d + 1]]``.
    key_tokens, key_offsets, key_hash, slots, n_keys, used
        The table with the new keys (the arrays may be new, larger ones).
    """
    n_docs = offsets.shape[0] - 1
    feature_offsets = np.zeros(n_docs + 1, dtype=np.int64)
    total = 0
    for d in range(n_docs):
        length = offsets[d + 1] - offsets[d]
        for n in range(min_n, max_n + 1):
            if length >= n:
                total += length - n + 1
        feature_offsets[d + 1] = total
    features = np.empty(total, dtype=np.int32)
    cap = key_hash.shape[0]
    out = 0
    for d in range(n_docs):
        start = offsets[d]
        end = offsets[d + 1]
        for n in range(min_n, max_n + 1):
            for p in range(start, end - n + 1):
                h = _FNV_OFFSET
                for q in range(p, p + n):
                    h = (h ^ np.int64(ids[q])) * _FNV_PRIME
                h = (h ^ (h >> 32)) * _MIX
                h ^= h >> 29
                mask = slots.shape[0] - 1
                j = h & mask
                found = -1
                while slots[j] >= 0:
                    k = slots[j]
                    if key_hash[k] == h and key_offsets[k + 1] - key_offsets[k] == n:
                        same = True
                        base = key_offsets[k]
                        for q in range(n):
                            if key_tokens[base + q] != ids[p + q]:
                                same = False
                                break
                        if same:
                            found = k
                            break
                    j = (j + 1) & mask
                if found < 0:
                    if n_keys == cap:  # grow the key arrays and the slots, then find the free slot again
                        cap *= 2
                        grown_offsets = np.zeros(cap + 1, dtype=np.int64)
                        grown_offsets[: n_keys + 1] = key_offsets[: n_keys + 1]
                        key_offsets = grown_offsets
                        grown_hash = np.empty(cap, dtype=np.int64)
                        grown_hash[:n_keys] = key_hash[:n_keys]
                        key_hash = grown_hash
                        slots = np.full(2 * cap, -1, dtype=np.int64)
                        mask = slots.shape[0] - 1
                        for k in range(n_keys):
                            i = key_hash[k] & mask
                            while slots[i] >= 0:
                                i = (i + 1) & mask
                            slots[i] = k
                        j = h & mask
                        while slots[j] >= 0:
                            j = (j + 1) & mask
                    if used + n > key_tokens.shape[0]:
                        grown_tokens = np.empty(2 * key_tokens.shape[0] + n, dtype=np.int32)
                        grown_tokens[:used] = key_tokens[:used]
                        key_tokens = grown_tokens
                    for q in range(n):
                        key_tokens[used + q] = ids[p + q]
                    used += n
                    key_offsets[n_keys + 1] = used
                    key_hash[n_keys] = h
                    slots[j] = n_keys
                    found = n_keys
                    n_keys += 1
                features[out] = found
                out += 1
    return features, feature_offsets, key_tokens, key_offsets, key_hash, slots, n_keys, used


@njit(cache=True)
def count_rows(cols, offsets, n_cols):
    """Per-document term counts as CSR arrays with sorted column indices; negative columns are skipped.

    Two counting sorts, linear in the number of occurrences whatever the documents look like: the occurrences are
    bucketed by column (rows ascending within a column, as they are met), then the buckets are read column by
    column into each row's segment, so every row's columns come out sorted; repeats of one (row, column) are
    adjacent in a bucket and become one entry with their count.

    Parameters
    ----------
    cols : ndarray of int32, shape (n_occurrences,)
        The column of every term occurrence (-1: not a feature), documents one after the other.
    offsets : ndarray of int64, shape (n_docs + 1,)
    n_cols : int
        Every column is below ``n_cols``.

    Returns
    -------
    indptr : ndarray of int64, shape (n_docs + 1,)
    indices : ndarray of int32, shape (nnz,)
        Strictly increasing within each row.
    data : ndarray of int64, shape (nnz,)
        Occurrences of the column in the document (>= 1: no explicit zero).
    """
    n_docs = offsets.shape[0] - 1
    starts = np.zeros(n_cols + 1, dtype=np.int64)
    for i in range(cols.shape[0]):
        if cols[i] >= 0:
            starts[cols[i] + 1] += 1
    for c in range(n_cols):
        starts[c + 1] += starts[c]
    fill = starts[:n_cols].copy()
    rows = np.empty(starts[n_cols], dtype=np.int32)
    for d in range(n_docs):
        for i in range(offsets[d], offsets[d + 1]):
            c = cols[i]
            if c >= 0:
                rows[fill[c]] = d
                fill[c] += 1
    indptr = np.zeros(n_docs + 1, dtype=np.int64)
    for c in range(n_cols):
        for p in range(starts[c], starts[c + 1]):
            if p == starts[c] or rows[p] != rows[p - 1]:
                indptr[rows[p] + 1] += 1
    for d in range(n_docs):
        indptr[d + 1] += indptr[d]
    nnz = indptr[n_docs]
    indices = np.empty(nnz, dtype=np.int32)
    data = np.zeros(nnz, dtype=np.int64)
    at = indptr[:n_docs].copy()
    for c in range(n_cols):
        for p in range(starts[c], starts[c + 1]):
            r = rows[p]
            if p == starts[c] or r != rows[p - 1]:
                indices[at[r]] = c
                at[r] += 1
            data[at[r] - 1] += 1
    return indptr, indices, data


@njit(cache=True, parallel=True)
def normalize_rows(indptr, data, l1):
    """Divide every row of a CSR matrix by its l2 norm (``l1`` false) or l1 norm, in place; a zero row stays zero.

    The sum runs over the row in storage order, in float64, as scikit-learn's ``normalize`` does.

    Parameters
    ----------
    indptr : ndarray of int64, shape (n_rows + 1,)
    data : ndarray of float64, shape (nnz,)
    l1 : bool
    """
    n_rows = indptr.shape[0] - 1
    for r in prange(n_rows):
        total = 0.0
        for i in range(indptr[r], indptr[r + 1]):
            v = data[i]
            if l1:
                total += abs(v)
            else:
                total += v * v
        if total == 0.0:
            continue
        if not l1:
            total = np.sqrt(total)
        for i in range(indptr[r], indptr[r + 1]):
            data[i] /= total
