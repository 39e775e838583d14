"""Numba kernels of the measuring pass: the per-document counts and word spans of one chunk, from one class per
code point (built in :mod:`tokembed.metrics.chunk`).

A code point's class is a small bit set (:data:`WIDTH_MASK`, :data:`SPACE`, :data:`LETTER`, :data:`UNSPACED`):
bits 0-1 its UTF-8 width minus one (lone surrogates: 3 bytes, as with ``surrogatepass``), then whether
``str.isspace`` holds for it, whether it is a letter (``regex``'s ``\\p{L}``), and whether it is a letter of one of
:data:`tokembed.metrics.UNSPACED_SCRIPTS`. The kernels release the GIL (``nogil=True``): chunks are measured on
threads.
"""

from __future__ import annotations

import numpy as np
from numba import njit

WIDTH_MASK = 3
SPACE = 4
LETTER = 8
UNSPACED = 16


@njit(cache=True, nogil=True)
def chunk_counts(classes, char_indptr, out_counts, word_starts, word_ends, word_indptr):
    """Per-document counts and whitespace-word spans of a chunk of documents.

    Parameters
    ----------
    classes : uint8 array, shape (n_chars,)
        The class bits of every code point of the chunk's documents, concatenated.
    char_indptr : int64 array, shape (n_docs + 1,)
        Document ``d`` is ``classes[char_indptr[d]:char_indptr[d + 1]]``.
    out_counts : int64 array, shape (n_docs, 4), written
        Per document: UTF-8 bytes, whitespace words, letters, unspaced letters.
    word_starts, word_ends : int64 arrays, shape (>= n_words,), written
        Each word's ``[start, end)`` in code points of its own document (a word: a maximal run of non-space code
        points, as ``str.split()`` and ``re.finditer(r"\\S+")`` find them). ``(n_chars + 1) // 2`` entries always
        suffice.
    word_indptr : int64 array, shape (n_docs + 1,), written
        Document ``d``'s words are ``word_starts[word_indptr[d]:word_indptr[d + 1]]``.
    """
    n_docs = char_indptr.shape[0] - 1
    w = 0
    word_indptr[0] = 0
    for d in range(n_docs):
        lo = char_indptr[d]
        hi = char_indptr[d + 1]
        nbytes = 0
        letters = 0
        unspaced = 0
        words = 0
        inword = False
        for i in range(lo, hi):
            c = classes[i]
            nbytes += (c & WIDTH_MASK) + 1
            if c & LETTER:
                letters += 1
            if c & UNSPACED:
                unspaced += 1
            if c & SPACE:
                if inword:
                    word_ends[w] = i - lo
                    w += 1
                    inword = False
            elif not inword:
                word_starts[w] = i - lo
                inword = True
                words += 1
        if inword:
            word_ends[w] = hi - lo
            w += 1
        out_counts[d, 0] = nbytes
        out_counts[d, 1] = words
        out_counts[d, 2] = letters
        out_counts[d, 3] = unspaced
        word_indptr[d + 1] = w


@njit(cache=True, nogil=True)
def tokens_per_word(word_spans, word_indptr, spans, token_indptr, out):
    """Number of tokens whose span overlaps each word, document by document.

    Token ``t`` counts for word ``w`` of the same document when ``t.start < w.end`` and ``t.end > w.start`` (an
    empty span overlaps nothing).

    Parameters
    ----------
    word_spans : int64 array, shape (n_words, 2)
        Sorted, non-overlapping ``[start, end)`` word spans, in code points of their document.
    word_indptr, token_indptr : int64 arrays, shape (n_docs + 1,)
        The words and the tokens of each document.
    spans : int64 array, shape (n_tokens, 2)
        The tokens' ``[start, end)`` in code points of their document.
    out : int64 array, shape (n_words,), written (every entry)

    One pass over words and tokens when the tokens' starts do not decrease (what every tokenizer gives): the
    first word ending after a token starts is found by walking on from the previous token's; a token starting
    before the previous one walks again from the document's first word.
    """
    n_docs = word_indptr.shape[0] - 1
    for w in range(out.shape[0]):
        out[w] = 0
    for d in range(n_docs):
        w0 = word_indptr[d]
        w1 = word_indptr[d + 1]
        if w0 == w1:
            continue
        a = w0
        prev = -1
        for t in range(token_indptr[d], token_indptr[d + 1]):
            ts = spans[t, 0]
            te = spans[t, 1]
            if te <= ts:
                continue
            if ts < prev:
                a = w0
            prev = ts
            while a < w1 and word_spans[a, 1] <= ts:  # first word ending after the token starts
                a += 1
            k = a
            while k < w1 and word_spans[k, 0] < te:  # every word starting before the token ends
                out[k] += 1
                k += 1


@njit(cache=True, nogil=True)
def count_equal(ids, value):
    """Number of entries of ``ids`` equal to ``value``."""
    n = 0
    for i in range(ids.shape[0]):
        if ids[i] == value:
            n += 1
    return n


@njit(cache=True, nogil=True)
def id_range(ids):
    """``(min, max)`` of ``ids`` (int32, non-empty)."""
    lo = ids[0]
    hi = ids[0]
    for i in range(1, ids.shape[0]):
        v = ids[i]
        if v < lo:
            lo = v
        elif v > hi:
            hi = v
    return lo, hi


@njit(cache=True, nogil=True)
def add_counts(ids, counts):
    """``counts[i] += 1`` for every id ``i`` of ``ids`` (each in ``[0, counts.size)``, checked by the caller with
    :func:`id_range`): ``np.add.at`` without the int64 copy and the temporary of ``np.bincount``."""
    for i in range(ids.shape[0]):
        counts[ids[i]] += 1


@njit(cache=True, nogil=True)
def table_sum(table, ids):
    """``(sum of table[i], entries with table[i] < 0)`` over the ids ``i`` of ``ids`` (each in
    ``[0, table.size)``): the partial tokens of a chunk, and how many of its ids are not classified yet."""
    total = 0
    missing = 0
    for i in range(ids.shape[0]):
        v = table[ids[i]]
        if v < 0:
            missing += 1
        else:
            total += v
    return total, missing


@njit(cache=True, nogil=True)
def unclassified_ids(table, ids, seen, out):
    """The distinct ids ``i`` of ``ids`` with ``table[i] < 0``, in order of first occurrence, written to ``out``;
    returns how many. ``seen`` (bool, shape (table.size,), all False) is scratch; ``out`` has room for
    ``min(ids.size, table.size)`` ids."""
    n = 0
    for k in range(ids.shape[0]):
        i = ids[k]
        if table[i] < 0 and not seen[i]:
            seen[i] = True
            out[n] = i
            n += 1
    return n
