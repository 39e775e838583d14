"""Numba kernels of the WordPiece tokenizer: BERT's normalization and split through a code point map, and BERT's
greedy longest-match-first WordPiece encoding (Devlin et al. 2019, google-research/bert ``tokenization.py``,
``WordpieceTokenizer.tokenize``; Hugging Face ``tokenizers`` ``models/wordpiece``).

Three entry points, ``@njit(cache=True, nogil=True)``, NumPy arrays and scalars in and out:

- :func:`pieces_text` -- the normalized pieces of a text, separated by single spaces (the word-count pass of
  training feeds this to :func:`tokembed.text.fast.count_words`);
- :func:`build_vocab_table` -- the hash table ``(kind, characters) -> token id`` the encoder looks words up in;
- :func:`encode_chunk` -- normalize, split and encode the texts of one chunk.

The wrappers (validation, allocation, growth) are in ``_encode.py`` and ``_charmap.py``; these kernels assume
valid input. The plain-Python reference they are tested against is in the tests (``wordpiece_reference.py``).

Character map (built lazily in ``_charmap.py`` from the framework's text stages)
    ``table`` int32, shape (0x110000,): what normalization makes of each input code point. A value ``v >= 0``
    means one output character ``v >> 2`` of class ``v & 3``; ``DROP`` means the character is removed (BERT's
    ``clean_text``, accents); ``UNKNOWN`` means not classified yet (the caller fills the map before a call);
    ``v <= EXP_BASE`` means several output characters ``exp_vals[exp_off[k]:exp_off[k + 1]]`` with
    ``k = EXP_BASE - v``, each coded as ``cp << 2 | class``. Classes: ``CLS_SPACE`` (separates words),
    ``CLS_ALONE`` (a piece by itself: punctuation, CJK ideograph), ``CLS_WORD``.

    Mapping character by character gives exactly the framework's normalizers (clean, NFD + drop Mn, lowercase
    are per character) except for canonical reordering inside NFD, which only changes the order of two adjacent
    characters that both have a non-zero combining class and are not Mn (e.g. U+1D16D then U+1D165); see
    ``docs/wordpiece.md``.

Vocabulary table
    Token ``t``'s body (its characters, the ``##`` prefix removed for a continuation token) is
    ``body_cps[body_off[t]:body_off[t + 1]]``; ``kinds[t]`` is 0 (word-initial), 1 (continuation) or -1 (never
    matched: special tokens, the empty token). Keys are a polynomial hash of the body mixed with the kind, in an
    open-addressing table (``hkeys`` uint64, ``hvals`` int32 with -1 for an empty slot, linear probing); a hit is
    verified character by character, so hash collisions cost time, never correctness.
"""

from __future__ import annotations

import numpy as np
from numba import njit

UNKNOWN = -1
DROP = -2
EXP_BASE = -16
CLS_SPACE = 1
CLS_ALONE = 2
CLS_WORD = 3

#: encode_chunk return codes (>= 0: number of tokens written)
NEED_ROOM = -1  # the output arrays are too small: grow them and call again (the chunk is redone from its start)
NO_UNK = -2  # a word has no segmentation and there is no unk token; err[0:2] is its span in cps

_SPACE_CP = 32
_P = np.uint64(0x100000001B3)  # multiplier of the polynomial hash (FNV prime)
_FIB = np.uint64(0x9E3779B97F4A7C15)
_KIND_MIX = np.uint64(0xC2B2AE3D27D4EB4F)


@njit(inline="always")
def _kind_key(h, kind):
    return h ^ (np.uint64(kind) * _KIND_MIX)


@njit(inline="always")
def _slot(key, shift):
    return np.int64((key * _FIB) >> np.uint64(shift))


@njit(cache=True, nogil=True)
def pieces_text(cps, table, exp_off, exp_vals, out):
    """Normalize ``cps`` and write its pieces to ``out``, each followed by one space (U+0020).

    Parameters
    ----------
    cps : ndarray of uint32, shape (n,)
        Code points of the text (documents joined by a space).
    table, exp_off, exp_vals : ndarray of int32
        The character map (module docstring); every code point of ``cps`` is known.
    out : ndarray of uint32, shape (m,)
        Output buffer.

    Returns
    -------
    int
        Code points written, or ``NEED_ROOM`` when ``out`` is too small (nothing usable was written).
    """
    pos = 0
    sep = True  # the last thing written is a separator (or nothing)
    cap = out.shape[0]
    for i in range(cps.shape[0]):
        v = np.int64(table[cps[i]])
        if v == DROP:
            continue
        if v >= 0:
            k0 = np.int64(-1)
            k1 = np.int64(-1)
        else:
            k = EXP_BASE - v
            k0 = np.int64(exp_off[k])
            k1 = np.int64(exp_off[k + 1])
        j = k0
        while True:
            if k0 >= 0:
                if j >= k1:
                    break
                v = np.int64(exp_vals[j])
                j += 1
            if pos + 3 > cap:
                return NEED_ROOM
            cls = v & 3
            if cls == CLS_WORD:
                out[pos] = v >> 2
                pos += 1
                sep = False
            elif cls == CLS_ALONE:
                if not sep:
                    out[pos] = _SPACE_CP
                    pos += 1
                out[pos] = v >> 2
                out[pos + 1] = _SPACE_CP
                pos += 2
                sep = True
            elif not sep:
                out[pos] = _SPACE_CP
                pos += 1
                sep = True
            if k0 < 0:
                break
    if not sep:
        if pos + 1 > cap:
            return NEED_ROOM
        out[pos] = _SPACE_CP
        pos += 1
    return pos


@njit(inline="always")
def _hash(cps, lo, hi):
    h = np.uint64(0)
    for i in range(lo, hi):
        h = h * _P + np.uint64(cps[i] + 1)
    return h


@njit(cache=True, nogil=True)
def build_vocab_table(body_cps, body_off, kinds, hkeys, hvals):
    """Insert every token with ``kinds[t] >= 0`` into the empty table ``hkeys``/``hvals`` (size a power of two,
    at least twice the number of tokens; ``hvals`` filled with -1). Returns the number of tokens inserted."""
    shift = 64
    c = 1
    while c < hkeys.shape[0]:
        c <<= 1
        shift -= 1
    mask = hkeys.shape[0] - 1
    n = 0
    for t in range(kinds.shape[0]):
        if kinds[t] < 0:
            continue
        key = _kind_key(_hash(body_cps, body_off[t], body_off[t + 1]), kinds[t])
        s = _slot(key, shift) if shift < 64 else 0
        while hvals[s] != -1:
            s = (s + 1) & mask
        hkeys[s] = key
        hvals[s] = t
        n += 1
    return n


@njit(inline="always")
def _find(hkeys, hvals, shift, key, body_cps, body_off, wbuf, s, e):
    """Token whose body is ``wbuf[s:e]`` with the kind mixed into ``key``, or -1."""
    mask = hkeys.shape[0] - 1
    slot = _slot(key, shift) if shift < 64 else 0
    while True:
        t = hvals[slot]
        if t == -1:
            return -1
        if hkeys[slot] == key:
            b0 = body_off[t]
            if body_off[t + 1] - b0 == e - s:
                same = True
                for q in range(e - s):
                    if body_cps[b0 + q] != wbuf[s + q]:
                        same = False
                        break
                if same:
                    return t
        slot = (slot + 1) & mask


@njit(inline="always")
def _flush(wbuf, wsrc, wlen, wstart, wend, hh, pw, hkeys, hvals, shift, body_cps, body_off, max_len, unk_id,
           max_chars, one_kind, out_ids, out_span, n_out, err):
    """Encode the word held in ``wbuf[:wlen]`` (sources ``wsrc``) greedily, longest match first; returns the new
    number of tokens written, ``NEED_ROOM`` or ``NO_UNK``. Inlined (an ordinary call with its 21 arguments made
    encoding 35% slower), so :func:`encode_chunk` calls it from one place only: each call site is a copy to compile."""
    cap = out_ids.shape[0]
    if wlen > max_chars:
        if unk_id < 0:
            err[0] = wstart
            err[1] = wend
            return NO_UNK
        if n_out + 1 > cap:
            return NEED_ROOM
        out_ids[n_out] = unk_id
        out_span[n_out, 0] = wstart
        out_span[n_out, 1] = wend
        return n_out + 1
    if n_out + wlen > cap:
        return NEED_ROOM
    hh[0] = 0
    for q in range(wlen):
        hh[q + 1] = hh[q] * _P + np.uint64(wbuf[q] + 1)
    start_out = n_out
    s = 0
    while s < wlen:
        kind = 0 if (s == 0 or one_kind) else 1
        e = min(wlen, s + max_len[kind])
        found = -1
        while e > s:
            h = hh[e] - hh[s] * pw[e - s]
            found = _find(hkeys, hvals, shift, _kind_key(h, kind), body_cps, body_off, wbuf, s, e)
            if found >= 0:
                break
            e -= 1
        if found < 0:  # no complete segmentation: the whole word is one unk token
            if unk_id < 0:
                err[0] = wstart
                err[1] = wend
                return NO_UNK
            out_ids[start_out] = unk_id
            out_span[start_out, 0] = wstart
            out_span[start_out, 1] = wend
            return start_out + 1
        out_ids[n_out] = found
        out_span[n_out, 0] = wsrc[s]
        out_span[n_out, 1] = wsrc[e - 1] + 1
        n_out += 1
        s = e
    return n_out


@njit(cache=True, nogil=True)
def encode_chunk(cps, bounds, table, exp_off, exp_vals, max_exp, hkeys, hvals, body_cps, body_off, max_len, unk_id,
                 max_chars, one_kind, out_ids, out_span, seg_count, err):
    """Normalize, split and WordPiece-encode the segments ``cps[bounds[b]:bounds[b + 1]]``.

    A word (a maximal run of ``CLS_WORD`` characters after normalization; removed characters do not end a word)
    and each ``CLS_ALONE`` character is encoded by greedy longest-match-first over the vocabulary: the longest
    word-initial token that is a prefix of the word, then repeatedly the longest continuation token that is a
    prefix of the rest. A word with no complete segmentation, or longer than ``max_chars`` characters, becomes
    one ``unk_id`` spanning the whole word.

    Parameters
    ----------
    cps : ndarray of uint32, shape (n,)
        Code points of the segments, concatenated.
    bounds : ndarray of int64, shape (n_segments + 1,)
        Segment boundaries in ``cps``; no word crosses a boundary.
    table, exp_off, exp_vals : ndarray of int32
        The character map; every code point of ``cps`` is known.
    max_exp : int
        Most characters one input character becomes (bounds the length of a word).
    hkeys, hvals, body_cps, body_off : ndarray
        The vocabulary table (module docstring).
    max_len : ndarray of int64, shape (2,)
        Longest body of a word-initial and of a continuation token, in code points.
    unk_id : int
        Id of the unk token, or -1 for none.
    max_chars : int
        Longest word encoded; longer words become ``unk_id`` (BERT's ``max_input_chars_per_word``).
    one_kind : bool
        True when the continuation prefix is empty: every token may start or continue a word.
    out_ids : ndarray of int32, shape (m,)
        Token ids written here.
    out_span : ndarray of int64, shape (m, 2)
        ``[start, end)`` of each token as indices into ``cps`` (the first and one past the last input character
        the token's characters came from).
    seg_count : ndarray of int64, shape (n_segments,)
        Number of tokens of each segment.
    err : ndarray of int64, shape (2,)
        Span of the offending word when ``NO_UNK`` is returned.

    Returns
    -------
    int
        Tokens written, or ``NEED_ROOM`` / ``NO_UNK``.
    """
    shift = 64
    c = 1
    while c < hkeys.shape[0]:
        c <<= 1
        shift -= 1
    n_cps = cps.shape[0]
    wcap = min(max_chars, max_exp * n_cps) + 1
    wbuf = np.empty(wcap, np.int64)
    wsrc = np.empty(wcap, np.int64)
    hh = np.empty(wcap + 1, np.uint64)
    top = max(max_len[0], max_len[1]) + 1
    pw = np.empty(top, np.uint64)
    pw[0] = 1
    for q in range(1, top):
        pw[q] = pw[q - 1] * _P
    n_out = 0
    for b in range(bounds.shape[0] - 1):
        seg_start = n_out
        seg_end = bounds[b + 1]
        wlen = 0
        wstart = 0
        wend = 0
        for i in range(bounds[b], seg_end + 1):
            if i < seg_end:
                v = np.int64(table[cps[i]])
                if v == DROP:
                    continue
            else:  # one past the segment: a space, which ends the last word
                v = np.int64(CLS_SPACE)
            if v >= 0:
                k0 = np.int64(-1)
                k1 = np.int64(-1)
            else:
                k = EXP_BASE - v
                k0 = np.int64(exp_off[k])
                k1 = np.int64(exp_off[k + 1])
            j = k0
            while True:
                if k0 >= 0:
                    if j >= k1:
                        break
                    v = np.int64(exp_vals[j])
                    j += 1
                cls = v & 3
                if cls == CLS_WORD:
                    if wlen < wcap:
                        wbuf[wlen] = v >> 2
                        wsrc[wlen] = i
                    if wlen == 0:
                        wstart = i
                    wend = i + 1
                    wlen += 1
                else:
                    # encode the word so far, then a CLS_ALONE character as a one-character word: one call site of
                    # the inlined _flush (each call site is another copy of it to compile)
                    rounds = 2 if cls == CLS_ALONE else 1
                    while rounds > 0:
                        rounds -= 1
                        if rounds == 0 and cls == CLS_ALONE:
                            wbuf[0] = v >> 2
                            wsrc[0] = i
                            wlen = 1
                            wstart = i
                            wend = i + 1
                        if wlen > 0:
                            n_out = _flush(wbuf, wsrc, wlen, wstart, wend, hh, pw, hkeys, hvals, shift, body_cps,
                                           body_off, max_len, unk_id, max_chars, one_kind, out_ids, out_span, n_out,
                                           err)
                            if n_out < 0:
                                return n_out
                            wlen = 0
                if k0 < 0:
                    break
        seg_count[b] = n_out - seg_start
    return n_out
