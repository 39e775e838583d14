"""Numba kernels of the BPE tokenizer's encoder: the word cache and the expansion of cached results.

Two entry points, ``@njit(cache=True, nogil=True)`` (``encode_batch`` may run them in threads; ``dedup_words``
through a thin Python wrapper that passes ``symbols`` read-only, so that one signature serves every caller), NumPy
arrays and scalars in and out; the merges themselves are applied by ``tokembed.plugins._subword.apply_merges`` to the distinct
pieces only. The caller (``model.py``) validates; these kernels assume valid input. The tests compare them with
plain Python.

- :func:`dedup_words` gives each piece of a text the index of the first equal piece (the per-call word cache) and
  packs the distinct pieces as CSR;
- :func:`expand_words` gives every piece the tokens of its distinct piece, with their spans moved to the piece.
"""

from __future__ import annotations

import numpy as np
from numba import njit


def dedup_words(symbols, spans, unique, word_of, packed, packed_offsets):
    """Find the distinct words and pack them.

    Word ``i`` is ``symbols[spans[i, 0]:spans[i, 1]]`` (non-empty). With ``unique`` true, equal words share one
    index (an open-addressing hash table over the symbol sequences, compared exactly, grown as distinct words
    come, so it stays as small as their number); otherwise every word is its own.

    Parameters
    ----------
    symbols : ndarray of int32, shape (n,)
        Code points (>= 0).
    spans : ndarray of int64, shape (k, 2)
        Word spans into ``symbols``.
    unique : bool
        Merge equal words (False: every word is distinct, used with BPE-dropout).
    word_of : ndarray of int64, shape (k,)
        Receives the distinct-word index of each word.
    packed : ndarray of int32, shape (>= total length of the words,)
        Receives the distinct words, concatenated.
    packed_offsets : ndarray of int64, shape (k + 1,)
        Receives their CSR offsets.

    Returns
    -------
    int
        The number of distinct words ``u``; ``packed_offsets[:u + 1]`` is filled.
    """
    # The encoder's code points are read-only for non-ASCII text (np.frombuffer) and writeable for ASCII text
    # (astype); a read-only view of either (no copy) keeps the kernel at one compiled signature.
    if symbols.flags.writeable:
        symbols = symbols.view()
        symbols.flags.writeable = False
    return _dedup_words(symbols, spans, bool(unique), word_of, packed, packed_offsets)


@njit(cache=True, nogil=True)
def _dedup_words(symbols, spans, unique, word_of, packed, packed_offsets):
    """:func:`dedup_words`, with ``symbols`` read-only."""
    k = spans.shape[0]
    cap = 1024
    slots = np.empty(cap, np.int64)
    for j in range(cap):  # a loop, not np.full: np.full's implementation alone took 0.1 s to compile
        slots[j] = -1
    hashes = np.empty(k if unique else 1, np.uint64)
    nu = 0
    top = 0
    packed_offsets[0] = 0
    for i in range(k):
        s = spans[i, 0]
        e = spans[i, 1]
        if unique:
            h = np.uint64(0xCBF29CE484222325)
            for j in range(s, e):
                h = (h ^ np.uint64(symbols[j])) * np.uint64(0x100000001B3)
            h ^= h >> np.uint64(31)
            h *= np.uint64(0x9E3779B97F4A7C15)
            mask = np.uint64(cap - 1)
            slot = (h >> np.uint64(24)) & mask
            found = -1
            while True:
                u = slots[slot]
                if u < 0:
                    break
                if hashes[u] == h:
                    fs = packed_offsets[u]  # compare with the packed copy: small, so it stays in cache
                    if packed_offsets[u + 1] - fs == e - s:
                        same = True
                        for j in range(e - s):
                            if packed[fs + j] != symbols[s + j]:
                                same = False
                                break
                        if same:
                            found = u
                            break
                slot = (slot + np.uint64(1)) & mask
            if found >= 0:
                word_of[i] = found
                continue
            slots[slot] = nu
            hashes[nu] = h
            if 2 * (nu + 1) > cap:  # keep the load at most 1/2: double and re-insert
                cap *= 2
                mask = np.uint64(cap - 1)
                slots = np.empty(cap, np.int64)
                for v in range(cap):
                    slots[v] = -1
                for v in range(nu + 1):
                    slot = (hashes[v] >> np.uint64(24)) & mask
                    while slots[slot] >= 0:
                        slot = (slot + np.uint64(1)) & mask
                    slots[slot] = v
        word_of[i] = nu
        for j in range(s, e):
            packed[top] = symbols[j]
            top += 1
        nu += 1
        packed_offsets[nu] = top
    return nu


@njit(cache=True, nogil=True)
def expand_words(word_of, word_start, u_off, enc_ids, enc_offsets, enc_first, enc_last, pos_map, out_ids,
                 out_offsets):
    """Give each word the tokens of its distinct word, with spans moved to the word.

    Parameters
    ----------
    word_of : ndarray of int64, shape (k,)
        Distinct-word index of each word (from :func:`dedup_words`).
    word_start : ndarray of int64, shape (k,)
        Position of each word in the text.
    u_off : ndarray of int64, shape (u + 1,)
        CSR offsets of the distinct words' characters (``packed_offsets`` of :func:`dedup_words`).
    enc_ids, enc_offsets, enc_first, enc_last : ndarrays
        The merges applied to the distinct words (``_subword`` encoder output): ids int32 (m,), CSR offsets int64
        (u + 1,), and the first and last symbol (int64 (m,)) each token covers.
    pos_map : ndarray of int64, shape (n_symbols,) or (0,)
        Character index (in the packed distinct words) of each symbol, when symbols are bytes; empty when symbols
        are the characters themselves.
    out_ids : ndarray of int32, shape (n_out,)
        Receives the ids (``n_out`` = sum over words of their distinct word's token count).
    out_offsets : ndarray of int64, shape (n_out, 2)
        Receives each token's span: from the character of its first symbol to the end of the character of its
        last symbol (so byte-level tokens from one character all carry that character's span).
    """
    mapped = pos_map.shape[0] > 0
    t = 0
    for i in range(word_of.shape[0]):
        u = word_of[i]
        shift = word_start[i] - u_off[u]
        for j in range(enc_offsets[u], enc_offsets[u + 1]):
            a = enc_first[j]
            b = enc_last[j]
            if mapped:
                a = pos_map[a]
                b = pos_map[b]
            out_ids[t] = enc_ids[j]
            out_offsets[t, 0] = shift + a
            out_offsets[t, 1] = shift + b + 1
            t += 1
