"""The entry kernels of encoding: a batch of texts through the normalizer, the model and SentencePiece's output step.

:func:`encode_docs` does for each text what ``SentencePieceProcessor::Encode`` does: normalize (with the map back
to the original bytes), segment (unigram Viterbi or BPE merges), then build the output pieces: an unknown piece
becomes its UTF-8 bytes as ``<0xNN>`` pieces with byte fallback, and consecutive unknown pieces merge into one
otherwise. Offsets are converted to code-point spans of the original text. :func:`lattice_text` gives the lattice of
one normalized text for sampling and n-best.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._kernels import key_first_bytes, normalize
from ._kernels_segment import bpe, lattice, viterbi

# params (int64 array) layout
P_MODEL_TYPE = 0  # 0 unigram, 1 bpe
P_UNK_ID = 1
P_BYTE_FALLBACK = 2
P_ADD_DUMMY_PREFIX = 3
P_REMOVE_EXTRA_WHITESPACES = 4
P_ESCAPE_WHITESPACES = 5
P_TREAT_WHITESPACE_AS_SUFFIX = 6
P_SEED = 7
N_PARAMS = 8
# fparams (float64 array) layout
F_UNK_SCORE = 0  # a float32 value
F_DROPOUT = 1
N_FPARAMS = 2


@njit(nogil=True)
def _normalized(buf, a, b, charsmap, replacements, user, params, norm, norm_map, first_bytes):
    """Normalize ``buf[a:b]`` into ``norm`` (grown as needed); returns ``(n, norm, norm_map)``."""
    while True:
        n = normalize(buf, a, b, charsmap, replacements, user, params[P_ADD_DUMMY_PREFIX] != 0,
                      params[P_REMOVE_EXTRA_WHITESPACES] != 0, params[P_ESCAPE_WHITESPACES] != 0,
                      params[P_TREAT_WHITESPACE_AS_SUFFIX] != 0, norm, norm_map, first_bytes)
        if n >= 0:
            return n, norm, norm_map
        need = -1 - n
        norm = np.empty(max(need, 2 * norm.shape[0]), np.uint8)
        norm_map = np.empty(norm.shape[0] + 1, np.int64)


@njit(cache=True, nogil=True)
def encode_docs(buf, doc_offsets, first_doc, units, scores, kinds, byte_ids, charsmap, replacements, user, params,
                fparams, out_ids, out_offsets, tok_offsets):
    """Encode the texts ``buf[doc_offsets[d]:doc_offsets[d + 1]]`` (UTF-8) from ``first_doc`` on.

    Parameters
    ----------
    buf : uint8 array (read-only)
    doc_offsets : int64 array, shape (n_docs + 1,)
    first_doc : int
        Texts before it are already encoded; ``tok_offsets[first_doc]`` must be set.
    units : uint32 array
        Double array of the pieces (value = id): for unigram the normal, user-defined and unused pieces, for BPE
        every piece.
    scores : float32 array, shape (n_pieces,)
    kinds : int8 array, shape (n_pieces,)
        ``KIND_*`` of each piece.
    byte_ids : int64 array, shape (256,)
        Id of the ``<0xNN>`` piece of each byte (used with byte fallback).
    charsmap, replacements : uint32 / uint8 arrays
        The normalization rule (empty for identity).
    user : uint32 array
        Double array of the user-defined pieces (empty when there is none).
    params : int64 array, shape (N_PARAMS,)
    fparams : float64 array, shape (N_FPARAMS,)
    out_ids : int32 array; out_offsets : int64 array of shape (capacity, 2)
        Tokens: id and code-point span in its text.
    tok_offsets : int64 array, shape (n_docs + 1,)
        Text ``d``'s tokens are ``[tok_offsets[d], tok_offsets[d + 1])``.

    Returns
    -------
    int
        The first text not encoded because the outputs are full (``n_docs`` when all are done); call again with
        larger outputs from there.
    """
    n_docs = doc_offsets.shape[0] - 1
    cap = out_ids.shape[0]
    model_type = params[P_MODEL_TYPE]
    unk_id = params[P_UNK_ID]
    byte_fallback = params[P_BYTE_FALLBACK] != 0
    unk_score = np.float32(fparams[F_UNK_SCORE])
    dropout = fparams[F_DROPOUT]
    first_bytes = key_first_bytes(charsmap, user)
    longest = 0
    for d in range(first_doc, n_docs):
        longest = max(longest, doc_offsets[d + 1] - doc_offsets[d])
    norm = np.empty(3 * longest + 16, np.uint8)
    norm_map = np.empty(norm.shape[0] + 1, np.int64)
    cpos = np.empty(longest + 1, np.int64)
    for d in range(first_doc, n_docs):
        a, b = doc_offsets[d], doc_offsets[d + 1]
        n, norm, norm_map = _normalized(buf, a, b, charsmap, replacements, user, params, norm, norm_map,
                                        first_bytes)
        o = tok_offsets[d]
        if o + n > cap:
            return d
        count = 0
        for k in range(b - a):
            cpos[k] = count
            if (buf[a + k] & 0xC0) != 0x80:
                count += 1
        cpos[b - a] = count
        tids = np.empty(n + 1, np.int64)
        tstarts = np.empty(n + 1, np.int64)
        tends = np.empty(n + 1, np.int64)
        if n == 0:
            nt = 0
        elif model_type == 0:
            bscore = np.empty(n + 1, np.float32)
            bstart = np.empty(n + 1, np.int64)
            bid = np.empty(n + 1, np.int64)
            nt = viterbi(norm, 0, n, units, scores, kinds, unk_id, unk_score, bscore, bstart, bid, tids, tstarts)
            for t in range(nt - 1):
                tends[t] = tstarts[t + 1]
            if nt:
                tends[nt - 1] = n
        else:
            s1 = np.empty(n, np.int64)
            s2 = np.empty(n, np.int64)
            s3 = np.empty(n, np.int64)
            s4 = np.empty(n, np.int64)
            fr = np.empty(n, np.bool_)
            seed = np.uint64(params[P_SEED]) ^ (np.uint64(d) * np.uint64(0x9E3779B97F4A7C15))
            nt = bpe(norm, 0, n, units, scores, kinds, unk_id, user, dropout, seed, s1, s2, s3, s4, fr, tids,
                     tstarts, tends)
        prev_unk = False
        for t in range(nt):
            pid = tids[t]
            nb, ne = tstarts[t], tends[t]
            ob, oe = cpos[norm_map[nb]], cpos[norm_map[ne]]
            is_unk = pid == unk_id
            if is_unk and byte_fallback:
                for k in range(nb, ne):
                    out_ids[o] = byte_ids[norm[k]]
                    out_offsets[o, 0] = ob
                    out_offsets[o, 1] = oe
                    o += 1
            elif is_unk and prev_unk:
                out_offsets[o - 1, 1] = oe
            else:
                out_ids[o] = pid
                out_offsets[o, 0] = ob
                out_offsets[o, 1] = oe
                o += 1
            prev_unk = is_unk
        tok_offsets[d + 1] = o
    return n_docs


@njit(cache=True, nogil=True)
def normalize_text(buf, charsmap, replacements, user, params):
    """The normalized bytes of ``buf`` (one text) and the map of each byte (plus the end) to an original byte
    offset."""
    first_bytes = key_first_bytes(charsmap, user)
    norm = np.empty(3 * buf.shape[0] + 16, np.uint8)
    norm_map = np.empty(norm.shape[0] + 1, np.int64)
    n, norm, norm_map = _normalized(buf, 0, buf.shape[0], charsmap, replacements, user, params, norm, norm_map,
                                    first_bytes)
    return norm[:n].copy(), norm_map[: n + 1].copy()


@njit(cache=True, nogil=True)
def lattice_text(norm, units, scores, kinds, unk_id, unk_score):
    """The lattice of one normalized text: ``(starts, ends, ids, scores)`` of its nodes (byte offsets; float32
    scores), by increasing start then length."""
    n = norm.shape[0]
    cap = 8 * n + 16
    while True:
        st = np.empty(cap, np.int64)
        en = np.empty(cap, np.int64)
        ids = np.empty(cap, np.int64)
        sc = np.empty(cap, np.float32)
        m = lattice(norm, 0, n, units, scores, kinds, unk_id, np.float32(unk_score), st, en, ids, sc)
        if m >= 0:
            return st[:m].copy(), en[:m].copy(), ids[:m].copy(), sc[:m].copy()
        cap *= 4


@njit(cache=True, nogil=True)
def normalize_docs(buf, doc_offsets, charsmap, replacements, user, params):
    """The normalized bytes of every text ``buf[doc_offsets[d]:doc_offsets[d + 1]]``, concatenated, and their
    offsets (int64, shape (n_docs + 1,))."""
    n_docs = doc_offsets.shape[0] - 1
    first_bytes = key_first_bytes(charsmap, user)
    longest = 0
    for d in range(n_docs):
        longest = max(longest, doc_offsets[d + 1] - doc_offsets[d])
    norm = np.empty(3 * longest + 16, np.uint8)
    norm_map = np.empty(norm.shape[0] + 1, np.int64)
    out = np.empty(doc_offsets[n_docs] + 4 * n_docs + 16, np.uint8)
    out_offsets = np.zeros(n_docs + 1, np.int64)
    o = 0
    for d in range(n_docs):
        n, norm, norm_map = _normalized(buf, doc_offsets[d], doc_offsets[d + 1], charsmap, replacements, user,
                                        params, norm, norm_map, first_bytes)
        if o + n > out.shape[0]:
            grown = np.empty(2 * out.shape[0] + n, np.uint8)
            grown[:o] = out[:o]
            out = grown
        out[o:o + n] = norm[:n]
        o += n
        out_offsets[d + 1] = o
    return out[:o].copy(), out_offsets
