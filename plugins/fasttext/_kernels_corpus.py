"""Numba kernels that read the fastText / word2vec training corpus where it lies (an int32 array in memory, or the
uint16 / uint32 memory map of a folder ``tokembed encode`` wrote), never copying it whole.

- :func:`plan_chunks`: one pass that plans the training chunks, slice by slice;
- :func:`remap_range`: one chunk rewritten as vocabulary indices cut into pieces, by the task that trains on it.

Module-level ``@njit(cache=True, nogil=True)`` functions on NumPy arrays (docs/architecture.md, "Kernels"); the
caller (``training.py``) validates the arrays. Checked against plain-Python references in
``tests/plugins/fasttext`` (``_fasttext_naive.cut_corpus`` and ``chunk_pieces``).
"""

from __future__ import annotations

import numpy as np
from numba import njit


# -- the corpus, chunk by chunk -------------------------------------------------------------------------------------
# The input ids are read where they are (an int32 array in memory, or the uint16/uint32 map of an encoded folder):
# a first pass plans the chunks, then each training task rewrites its own chunk as vocabulary indices. The corpus the
# trainer sees is the input with unmapped tokens removed, empty documents dropped, and each document cut into pieces
# of ``max_piece`` kept tokens (the last piece holds the rest); both kernels cut it with :func:`_starts_piece`.
@njit(cache=True, nogil=True)
def _starts_piece(doc, piece_doc, piece_len, max_piece):
    """Whether a kept token of document ``doc`` starts a new piece, the current piece being of document
    ``piece_doc`` with ``piece_len`` kept tokens (-1: no piece yet)."""
    return doc != piece_doc or piece_len == max_piece


@njit(cache=True, nogil=True)
def plan_chunks(ids, offsets, lo, hi, token_map, max_piece, chunk_tokens, state, starts, docs):
    """Plan the training chunks over input tokens ``lo .. hi - 1``, carrying ``state`` from the previous call.

    Chunk boundaries are those of cutting the pieces at the first piece that starts at or after each multiple of
    ``chunk_tokens`` kept tokens (what ``numpy.searchsorted(piece_offsets, targets, "left")`` gives over the whole
    cut corpus); each boundary is written as the input position of that piece's first kept token (``starts``) and
    its document (``docs``).

    Parameters
    ----------
    ids : int32, uint16 or uint32 (n_tokens,); offsets : int64 (n_docs + 1,)
        The input documents (read in place: a memory map stays one).
    lo, hi : int
        The input tokens of this call; calls cover ``0 .. n_tokens`` in order.
    token_map : int32 (vocab_size,)
        Input id -> vocabulary index, or -1 (removed).
    max_piece, chunk_tokens : int
    state : int64 (7,)
        ``[doc, piece_doc, piece_len, kept, next_target, n_pieces, longest]``; start with
        ``[0, -1, 0, 0, chunk_tokens, 0, 0]``.
    starts, docs : int64 (>= (hi - lo) // chunk_tokens + 2,)
        Receive the boundaries found in this call.

    Returns
    -------
    int
        Boundaries written.
    """
    doc = state[0]
    piece_doc = state[1]
    piece_len = state[2]
    kept = state[3]
    target = state[4]
    n_pieces = state[5]
    longest = state[6]
    k = 0
    for t in range(lo, hi):
        while offsets[doc + 1] <= t:
            doc += 1
        if token_map[ids[t]] < 0:
            continue
        if _starts_piece(doc, piece_doc, piece_len, max_piece):
            if kept >= target:
                starts[k] = t
                docs[k] = doc
                k += 1
                target = (kept // chunk_tokens + 1) * chunk_tokens
            piece_doc = doc
            piece_len = 0
            n_pieces += 1
        piece_len += 1
        kept += 1
        longest = max(longest, piece_len)
    state[0] = doc
    state[1] = piece_doc
    state[2] = piece_len
    state[3] = kept
    state[4] = target
    state[5] = n_pieces
    state[6] = longest
    return k


@njit(cache=True, nogil=True)
def remap_range(ids, offsets, lo, hi, doc, token_map, max_piece):
    """Input tokens ``lo .. hi - 1`` (``lo`` in document ``doc``) as vocabulary indices cut into pieces.

    ``lo`` is where a piece starts (a boundary of :func:`plan_chunks`, or 0), so the pieces are those of the whole
    cut corpus. Reads ``ids`` twice (count, then fill: :func:`_cut`) and allocates only the kept tokens.

    Returns
    -------
    out : int32 (n_kept,)
        Vocabulary indices of the kept tokens.
    pieces : int64 (n_pieces + 1,)
        Piece ``i`` is ``out[pieces[i]:pieces[i + 1]]``.
    """
    empty32 = np.zeros(0, np.int32)
    n_kept, n_pieces = _cut(ids, offsets, lo, hi, doc, token_map, max_piece, empty32, np.zeros(0, np.int64))
    out = np.empty(n_kept, np.int32)
    pieces = np.empty(n_pieces + 1, np.int64)
    if n_kept:
        _cut(ids, offsets, lo, hi, doc, token_map, max_piece, out, pieces)
    pieces[n_pieces] = n_kept
    return out, pieces


@njit(cache=True, nogil=True)
def _cut(ids, offsets, lo, hi, doc, token_map, max_piece, out, pieces):
    """Walk input tokens ``lo .. hi - 1`` (``lo`` in document ``doc``): write the kept tokens' vocabulary indices to
    ``out`` and where each piece starts to ``pieces``, unless ``out`` is empty (then only count). Returns
    ``(n_kept, n_pieces)``."""
    fill = out.shape[0] > 0
    n_kept = 0
    n_pieces = 0
    piece_doc = -1
    piece_len = 0
    for t in range(lo, hi):
        while offsets[doc + 1] <= t:
            doc += 1
        j = token_map[ids[t]]
        if j < 0:
            continue
        if _starts_piece(doc, piece_doc, piece_len, max_piece):
            if fill:
                pieces[n_pieces] = n_kept
            n_pieces += 1
            piece_doc = doc
            piece_len = 0
        if fill:
            out[n_kept] = j
        n_kept += 1
        piece_len += 1
    return n_kept, n_pieces
