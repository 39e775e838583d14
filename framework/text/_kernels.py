"""Numba kernels of the fast pre-tokenizer: a scanner over UTF-8 bytes driven by a code point class table.

Two entry points share one scanner, :func:`_next_piece`, compiled once by Numba and inlined into both by LLVM
(``forceinline=True``; Numba's ``inline='always'`` typed and lowered it again in each, which cost 0.7 s of
compile time for no speed):

- :func:`scan_spans` emits the code-point spans of the pieces of one text (``PreTokenizer.spans``);
- :func:`count_pieces` counts the pieces of many documents in a hand-written open-addressing hash table
  (piece bytes -> count), optionally recording the word id of every piece (a corpus as ids per document); the
  same kernel merges tables (``MODE_WHOLE``: every document is one piece, weighted);
- :func:`scan_docs` emits the code-point spans of the pieces of many documents, optionally with the value each
  piece has in such a table, unchanged (a fixed vocabulary: the ids of a word-level tokenizer).

Input is the UTF-8 encoding of Python strings with ``surrogatepass`` (lone surrogates are 3-byte sequences), so
it is always well formed and every document boundary falls between characters; the decoder does not validate.

Scanning rules (``table`` maps a code point to a class; it is built in :mod:`tokembed.text.fast`):

``MODE_RUNS``
    A piece is a maximal run of characters of one non-zero class; class 0 separates and is in no piece; a
    character of class ``isolate`` is a piece alone. This is ``whitespace_split``, ``word_punct`` and ``bert``.
``MODE_GPT2``
    The leftmost-first matches of GPT-2's pattern
    ``'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+`` with classes
    ``GPT2_SPACE`` (``\\s``), ``GPT2_LETTER``, ``GPT2_NUMBER`` and ``GPT2_OTHER``. The matches tile the text: a
    contraction; else one optional U+0020 and a run of one class; else a whitespace run, less its last
    character when that run has two or more characters and is followed by a non-space (the lookahead).
``MODE_WHOLE``
    Every non-empty document is one piece.
``MODE_LONG_RUNS``
    The pieces of ``MODE_RUNS`` of at least two code points; shorter runs are dropped. This is ``sklearn``
    (scikit-learn's ``\\b\\w\\w+\\b``).

No function here allocates or re-assigns an array: when an output is full the kernel saves where it stopped in
``state`` and returns :data:`NEED_ROOM`; the caller grows the arrays and calls again, and the scan resumes at the
start of the piece that did not fit (scanning from a piece start gives the same pieces).
"""

from __future__ import annotations

import numpy as np
from numba import njit

MODE_RUNS = 0
MODE_GPT2 = 1
MODE_WHOLE = 2
MODE_LONG_RUNS = 3

GPT2_SPACE = 0
GPT2_LETTER = 1
GPT2_NUMBER = 2
GPT2_OTHER = 3

DONE = 0
NEED_ROOM = 1

# count_pieces state: words stored, pool bytes used, document and byte position to resume at, rebuild-slots flag,
# piece ids recorded
S_WORDS = 0
S_POOL = 1
S_DOC = 2
S_POS = 3
S_REHASH = 4
S_OUT = 5
COUNT_STATE_SIZE = 6

# scan_spans state: byte position and code point index to resume at, spans written
P_POS = 0
P_CP = 1
P_OUT = 2
SPANS_STATE_SIZE = 3

_FNV_OFFSET = -3750763034362895579  # 14695981039346656037 as a signed 64-bit integer
_FNV_PRIME = 1099511628211
_MIX = -7046029254386353131  # 0x9E3779B97F4A7C15 (golden ratio), signed


@njit(no_cpython_wrapper=True, no_cfunc_wrapper=True)  # called from kernels only: no Python entry point
def _decode(buf, i):
    """Code point starting at byte ``i`` of well-formed UTF-8, and its length in bytes."""
    b0 = np.int64(buf[i])
    if b0 < 0x80:
        return b0, 1
    if b0 < 0xE0:
        return ((b0 & 0x1F) << 6) | (np.int64(buf[i + 1]) & 0x3F), 2
    if b0 < 0xF0:
        return ((b0 & 0x0F) << 12) | ((np.int64(buf[i + 1]) & 0x3F) << 6) | (np.int64(buf[i + 2]) & 0x3F), 3
    return (
        ((b0 & 0x07) << 18)
        | ((np.int64(buf[i + 1]) & 0x3F) << 12)
        | ((np.int64(buf[i + 2]) & 0x3F) << 6)
        | (np.int64(buf[i + 3]) & 0x3F)
    ), 4


@njit(inline="always")
def _runs_piece(buf, i, ci, end, isolate, table):
    """Next run piece at or after byte ``i`` (code point ``ci``): ``(start, end, cp_start, cp_end)``, start -1 if
    none before ``end``."""
    c = 0
    n = 1
    while i < end:
        b = buf[i]
        if b < 0x80:
            c = table[b]
            n = 1
        else:
            cp, n = _decode(buf, i)
            c = table[cp]
        if c != 0:
            break
        i += n
        ci += 1
    if i >= end:
        return -1, i, ci, ci
    s = i
    cs = ci
    i += n
    ci += 1
    if c != isolate:
        while i < end:
            b = buf[i]
            if b < 0x80:
                if table[b] != c:
                    break
                i += 1
            else:
                cp, n = _decode(buf, i)
                if table[cp] != c:
                    break
                i += n
            ci += 1
    return s, i, cs, ci


@njit(inline="always")
def _gpt2_piece(buf, i, ci, end, table):
    """GPT-2 piece starting at byte ``i`` < ``end`` (code point ``ci``): ``(start, end, cp_start, cp_end)``."""
    cp, n = _decode(buf, i)
    if cp == 39 and i + 1 < end:  # contractions 's 't 'm 'd 're 've 'll
        b1 = buf[i + 1]
        if b1 == 115 or b1 == 116 or b1 == 109 or b1 == 100:
            return i, i + 2, ci, ci + 2
        if i + 2 < end:
            b2 = buf[i + 2]
            if (b2 == 101 and (b1 == 114 or b1 == 118)) or (b1 == 108 and b2 == 108):
                return i, i + 3, ci, ci + 3
    s = i
    cs = ci
    c = table[cp]
    if cp == 32 and i + 1 < end:  # " ?" before a letter, number or other run
        cp1, n1 = _decode(buf, i + 1)
        c1 = table[cp1]
        if c1 != GPT2_SPACE:
            i += 1
            ci += 1
            n = n1
            c = c1
    if c != GPT2_SPACE:
        i += n
        ci += 1
        while i < end:
            b = buf[i]
            if b < 0x80:
                if table[b] != c:
                    break
                i += 1
            else:
                cp, n = _decode(buf, i)
                if table[cp] != c:
                    break
                i += n
            ci += 1
        return s, i, cs, ci
    last = i  # start of the last whitespace character of the run
    lastc = ci
    i += n
    ci += 1
    while i < end:
        cp, n = _decode(buf, i)
        if table[cp] != GPT2_SPACE:
            break
        last = i
        lastc = ci
        i += n
        ci += 1
    if i >= end or last == s:  # \s+ at the end of the text, or a single character before a non-space
        return s, i, cs, ci
    return s, last, cs, lastc  # \s+(?!\S): the run less its last character


@njit(forceinline=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _next_piece(buf, i, ci, end, mode, isolate, table):
    """Next piece at or after byte ``i`` (code point ``ci``): ``(start, end, cp_start, cp_end)``, start -1 if none.
    Every caller passes the same argument types (int64 scalars, a read-only ``buf``), so it compiles once."""
    if mode == MODE_GPT2:
        if i >= end:
            return -1, i, ci, ci
        return _gpt2_piece(buf, i, ci, end, table)
    if mode == MODE_RUNS or mode == MODE_LONG_RUNS:
        while True:  # one call site, so _runs_piece is inlined once
            s, e, cs, ce = _runs_piece(buf, i, ci, end, isolate, table)
            if s < 0 or mode == MODE_RUNS or ce - cs >= 2:
                return s, e, cs, ce
            i = e
            ci = ce
    if i >= end:
        return -1, i, ci, ci
    return i, end, ci, ci  # MODE_WHOLE (code point offsets unused)


@njit(cache=True, nogil=True)
def scan_spans(buf, mode, isolate, table, out, state):
    """Code-point spans of the pieces of one text.

    Parameters
    ----------
    buf : ndarray of uint8, shape (n_bytes,)
        The text in UTF-8 (``surrogatepass``).
    mode : int
        ``MODE_RUNS``, ``MODE_LONG_RUNS`` or ``MODE_GPT2``.
    isolate : int
        ``MODE_RUNS`` and ``MODE_LONG_RUNS`` only: the class whose characters are pieces alone, or -1.
    table : ndarray of uint8, shape (0x110000,)
        Class of every code point.
    out : ndarray of int64, shape (cap, 2)
        Receives ``[start, end)`` code-point spans.
    state : ndarray of int64, shape (SPANS_STATE_SIZE,)
        ``P_POS``, ``P_CP``: where to resume (0, 0 at first); ``P_OUT``: spans written so far. Updated.

    Returns
    -------
    int
        ``DONE``, or ``NEED_ROOM`` when ``out`` is full (grow it, keep its rows, call again).
    """
    i = state[P_POS]
    ci = state[P_CP]
    k = state[P_OUT]
    end = buf.shape[0]
    cap = out.shape[0]
    while i < end:
        s, e, cs, ce = _next_piece(buf, i, ci, end, mode, isolate, table)
        if s < 0:
            break
        if k == cap:
            state[P_POS] = s
            state[P_CP] = cs
            state[P_OUT] = k
            return NEED_ROOM
        out[k, 0] = cs
        out[k, 1] = ce
        k += 1
        i = e
        ci = ce
    state[P_POS] = end
    state[P_OUT] = k
    return DONE


@njit(inline="always")
def _hash_bytes(buf, s, e):
    """64-bit hash of ``buf[s:e]``: FNV-1a over the bytes, then a multiplicative mix (the hash of every table)."""
    h = _FNV_OFFSET
    for p in range(s, e):
        h = (h ^ np.int64(buf[p])) * _FNV_PRIME
    h = (h ^ (h >> 32)) * _MIX
    h ^= h >> 29
    return h


@njit(inline="always")
def _probe(buf, s, e, h, pool, wend, whash, slots, mask):
    """Look ``buf[s:e]`` (hash ``h``) up in a table: ``(word id, slot)``, or ``(-1, the empty slot it would take)``.
    A probe compares the stored hash, then the length, then the bytes."""
    length = e - s
    j = h & mask
    while True:
        k = slots[j]
        if k < 0:
            return -1, j
        if whash[k] == h and wend[k + 1] - wend[k] == length:
            q = wend[k]
            same = True
            for p in range(length):
                if pool[q + p] != buf[s + p]:
                    same = False
                    break
            if same:
                return k, j
        j = (j + 1) & mask


@njit(inline="always")
def _pause(state, n_words, used, d, s, n_out):
    """Save where :func:`count_pieces` stopped (to resume at the piece starting at byte ``s`` of document ``d``)."""
    state[S_WORDS] = n_words
    state[S_POOL] = used
    state[S_DOC] = d
    state[S_POS] = s
    state[S_OUT] = n_out
    return NEED_ROOM


@njit(cache=True, nogil=True)
def count_pieces(buf, bounds, weights, mode, isolate, table, pool, wend, whash, wcount, slots, state, piece_ids,
                 doc_ends):
    """Add the pieces of documents to an open-addressing hash table of counts (piece bytes -> count), and
    optionally record the word id of every piece.

    Words are numbered in order of first insertion; word ``k`` is ``pool[wend[k]:wend[k + 1]]``. A probe compares
    the stored 64-bit hash (FNV-1a over the bytes, then a multiplicative mix) and then the bytes exactly.

    Parameters
    ----------
    buf : ndarray of uint8, shape (n_bytes,)
        UTF-8 of the documents.
    bounds : ndarray of int64, shape (n_docs + 1,)
        Document ``d`` is ``buf[bounds[d]:bounds[d + 1]]``; no piece crosses a document boundary.
    weights : ndarray of int64, shape (n_docs,) or (0,)
        Count added per piece of document ``d``; empty means 1.
    mode, isolate, table
        As in :func:`scan_spans`; ``MODE_WHOLE`` makes every non-empty document one piece (used to merge tables).
    pool : ndarray of uint8, shape (pool_cap,)
        Bytes of the stored words, concatenated.
    wend : ndarray of int64, shape (word_cap + 1,)
        Word boundaries in ``pool``; ``wend[0]`` must be 0.
    whash, wcount : ndarray of int64, shape (word_cap,)
        Hash and count of each word.
    slots : ndarray of int64, shape (2**b,)
        Word id per slot, -1 for empty; at most half full.
    state : ndarray of int64, shape (COUNT_STATE_SIZE,)
        ``S_WORDS`` words stored, ``S_POOL`` pool bytes used, ``S_DOC``/``S_POS`` where to resume (0, 0 at
        first), ``S_REHASH`` non-zero to rebuild ``slots`` from ``whash`` first (after ``slots`` was replaced),
        ``S_OUT`` piece ids recorded so far (0 at first).
    piece_ids : ndarray of int32, shape (ids_cap,) or (0,)
        Receives the word id of every piece, in order; empty means "do not record".
    doc_ends : ndarray of int64, shape (n_docs,) or (0,)
        When recording: ``doc_ends[d]`` receives the number of pieces recorded up to the end of document ``d``.

    Returns
    -------
    int
        ``DONE``, or ``NEED_ROOM`` when a new word does not fit (grow ``pool``, the word arrays or ``slots``,
        keep their contents, set ``S_REHASH`` if ``slots`` changed, call again) or ``piece_ids`` is full (grow it,
        keep its contents, call again).
    """
    n_words = state[S_WORDS]
    used = state[S_POOL]
    n_slots = slots.shape[0]
    mask = n_slots - 1
    if state[S_REHASH] != 0:
        for j in range(n_slots):
            slots[j] = -1
        for k in range(n_words):
            j = whash[k] & mask
            while slots[j] >= 0:
                j = (j + 1) & mask
            slots[j] = k
        state[S_REHASH] = 0
    max_words = min(whash.shape[0], n_slots // 2)
    pool_cap = pool.shape[0]
    n_docs = bounds.shape[0] - 1
    weighted = weights.shape[0] > 0
    record = piece_ids.shape[0] > 0
    ids_cap = piece_ids.shape[0]
    n_out = state[S_OUT]
    d = state[S_DOC]
    i = state[S_POS]
    while d < n_docs:
        end = bounds[d + 1]
        if i < bounds[d]:
            i = bounds[d]
        w = weights[d] if weighted else 1
        while i < end:
            s, e, _, _ = _next_piece(buf, i, np.int64(0), end, mode, isolate, table)
            if s < 0:
                break
            if record and n_out >= ids_cap:
                return _pause(state, n_words, used, d, s, n_out)
            h = _hash_bytes(buf, s, e)
            k, j = _probe(buf, s, e, h, pool, wend, whash, slots, mask)
            if k >= 0:
                wcount[k] += w
            else:
                length = e - s
                if n_words >= max_words or used + length > pool_cap:
                    return _pause(state, n_words, used, d, s, n_out)
                for p in range(length):
                    pool[used + p] = buf[s + p]
                used += length
                wend[n_words + 1] = used
                whash[n_words] = h
                wcount[n_words] = w
                slots[j] = n_words
                k = n_words
                n_words += 1
            if record:
                piece_ids[n_out] = k
                n_out += 1
            i = e
        if record:
            doc_ends[d] = n_out
        d += 1
    state[S_WORDS] = n_words
    state[S_POOL] = used
    state[S_DOC] = n_docs
    state[S_POS] = 0
    state[S_OUT] = n_out
    return DONE


@njit(cache=True, nogil=True)
def scan_docs(buf, bounds, mode, isolate, table, pool, wend, whash, slots, values, default, out_ids, out_spans,
              doc_ends):
    """The pieces of many documents: code-point spans, and optionally the value of each piece in a table.

    Parameters
    ----------
    buf : ndarray of uint8, shape (n_bytes,)
        UTF-8 of the documents, one after the other.
    bounds : ndarray of int64, shape (n_docs + 1,)
        Document ``d`` is ``buf[bounds[d]:bounds[d + 1]]``; ``bounds[0] == 0`` and the documents are contiguous, so
        code points are counted from the start of ``buf``.
    mode, isolate, table
        As in :func:`scan_spans`; ``MODE_WHOLE`` makes every non-empty document one piece.
    pool, wend, whash, slots
        A table of :func:`count_pieces` (read only), or empty arrays when ``values`` is empty.
    values : ndarray of int32, shape (n_words,) or (0,)
        The value of each word of the table; empty means "no lookup" (``out_ids`` is then not written).
    default : int
        The value of a piece that is not in the table.
    out_ids : ndarray of int32, shape (cap,)
        Receives the value of each piece (when looking up).
    out_spans : ndarray of int64, shape (cap, 2)
        Receives the ``[start, end)`` code-point span of each piece, counted from the start of ``buf``. ``cap`` must
        be at least the number of code points of ``buf`` (every piece holds one or more).
    doc_ends : ndarray of int64, shape (n_docs,)
        Receives the number of pieces up to the end of each document.

    Returns
    -------
    int
        The number of pieces.
    """
    n_docs = bounds.shape[0] - 1
    lookup = values.shape[0] > 0
    mask = slots.shape[0] - 1
    k = 0
    ci = np.int64(0)
    for d in range(n_docs):
        i = bounds[d]
        end = bounds[d + 1]
        while i < end:
            if mode == MODE_WHOLE:  # the document is the piece: count its code points
                s, e, cs = i, end, ci
                for p in range(i, end):
                    if (buf[p] & 0xC0) != 0x80:
                        ci += 1
                ce = ci
            else:
                s, e, cs, ce = _next_piece(buf, i, ci, end, mode, isolate, table)
                ci = ce  # past the separators too when no piece is left
                if s < 0:
                    break
            if lookup:
                w, _ = _probe(buf, s, e, _hash_bytes(buf, s, e), pool, wend, whash, slots, mask)
                out_ids[k] = values[w] if w >= 0 else default
            out_spans[k, 0] = cs
            out_spans[k, 1] = ce
            k += 1
            i = e
        doc_ends[d] = k
    return k
