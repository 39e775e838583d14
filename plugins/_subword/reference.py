"""Plain-Python references for the subword kernels: slow, short, and written to be obviously correct.

The tests compare the Numba kernels of ``_kernels.py`` with these functions merge for merge and token for token.
Words are lists of int ids; merges are ``(left, right)`` pairs whose merge ``k`` creates id ``n_base + k``.

Pair counts are window counts: a word of count c adds c to pair (x, y) for each adjacent (x, y) in its current
segmentation, overlapping windows included, exactly as Hugging Face ``BpeTrainer`` and Sennrich's ``learn_bpe.py``
count; a merge rewrites a word left to right without overlap.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from fractions import Fraction

import numpy as np

__all__ = ["to_csr", "merge_word", "learn_merges", "encode_by_rank", "encode_sequential"]


def to_csr(words):
    """Pack a list of id lists as ``(symbols int32 (n,), offsets int64 (n_words + 1,))``."""
    offsets = np.zeros(len(words) + 1, np.int64)
    offsets[1:] = np.cumsum([len(w) for w in words])
    symbols = np.array([s for w in words for s in w], np.int32)
    return symbols, offsets


def merge_word(word, pair, new_id):
    """Replace each occurrence of ``pair`` in ``word``, scanning left to right without overlap."""
    a, b = pair
    out = []
    i = 0
    while i < len(word):
        if i + 1 < len(word) and word[i] == a and word[i + 1] == b:
            out.append(new_id)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return out


def learn_merges(words, counts, n_base, max_merges, min_frequency=1, token_len=None, max_token_length=0,
                 scoring="frequency"):
    """Learn merges greedily; returns ``(left, right, pair_count)`` lists and the final segmentation.

    ``scoring="frequency"`` (BPE): the pair with the highest count wins. ``scoring="likelihood"`` (WordPiece): the
    pair with the highest ``count(ab) / (count(a) * count(b))`` wins (exact fractions), then the higher count.
    Remaining ties go to the smallest (left, right). A pair is eligible when its count is >= max(min_frequency, 1)
    and, if ``max_token_length`` > 0, its parts total at most ``max_token_length`` characters (``token_len`` gives
    the length of each base id, default 1).

    Counts are kept per word: when a word changes, its old windows are subtracted and its new ones added.
    """
    words = [list(w) for w in words]
    length = list(token_len) if token_len is not None else [1] * n_base
    threshold = max(min_frequency, 1)
    pair_count = Counter()
    symbol_count = Counter()
    words_with = defaultdict(set)  # pair -> words that may contain it

    def add(w, sign):
        c = counts[w] * sign
        word = words[w]
        for x in word:
            symbol_count[x] += c
        for p in zip(word, word[1:]):
            pair_count[p] += c
            if sign > 0:
                words_with[p].add(w)

    for w in range(len(words)):
        add(w, +1)

    left, right, counts_out = [], [], []
    for k in range(max_merges):
        best, best_key = None, None
        for p, c in pair_count.items():
            if c < threshold or (max_token_length > 0 and length[p[0]] + length[p[1]] > max_token_length):
                continue
            if scoring == "frequency":
                key = (c, -p[0], -p[1])
            else:
                key = (Fraction(c, symbol_count[p[0]] * symbol_count[p[1]]), c, -p[0], -p[1])
            if best_key is None or key > best_key:
                best, best_key = p, key
        if best is None:
            break
        new_id = n_base + k
        length.append(length[best[0]] + length[best[1]])
        left.append(best[0])
        right.append(best[1])
        counts_out.append(pair_count[best])
        for w in sorted(words_with.pop(best)):
            merged = merge_word(words[w], best, new_id)
            if merged != words[w]:
                add(w, -1)
                words[w] = merged
                add(w, +1)
        for p in [p for p, c in pair_count.items() if c == 0]:
            del pair_count[p]
    return (left, right, counts_out), words


def encode_by_rank(word, merges):
    """Encode one word with ``merges`` = list of ``(left, right, new_id)``, rank = list index.

    Repeatedly merge the adjacent pair of lowest rank, the leftmost among equal ranks (a repeated pair keeps its
    first rank). Returns ``(ids, spans)``: spans are ``(first, last)`` input indices covered by each id. O(n**2).
    """
    rank = {}
    for k, (a, b, n) in enumerate(merges):
        rank.setdefault((a, b), (k, n))
    ids = list(word)
    spans = [(i, i) for i in range(len(word))]
    while True:
        best = None
        for i in range(len(ids) - 1):
            r = rank.get((ids[i], ids[i + 1]))
            if r is not None and (best is None or r[0] < best[0]):
                best = (r[0], i, r[1])
        if best is None:
            return ids, spans
        _, i, n = best
        ids[i:i + 2] = [n]
        spans[i:i + 2] = [(spans[i][0], spans[i + 1][1])]


def encode_sequential(word, merges):
    """Encode one word by applying each merge in order to the whole word (Sennrich et al.'s ``apply_bpe``).

    Equals :func:`encode_by_rank` when every merge's new id is fresh and used only by later merges (as in learned
    merges). O(n * n_merges). Returns ``(ids, spans)`` like :func:`encode_by_rank`.
    """
    ids = list(word)
    spans = [(i, i) for i in range(len(word))]
    seen = set()
    for a, b, n in merges:
        if (a, b) in seen:
            continue
        seen.add((a, b))
        out_ids, out_spans = [], []
        i = 0
        while i < len(ids):
            if i + 1 < len(ids) and ids[i] == a and ids[i + 1] == b:
                out_ids.append(n)
                out_spans.append((spans[i][0], spans[i + 1][1]))
                i += 2
            else:
                out_ids.append(ids[i])
                out_spans.append(spans[i])
                i += 1
        ids, spans = out_ids, out_spans
    return ids, spans
