"""Slow, plain-Python references for the fastText kernels (``tokembed.plugins.fasttext._kernels``).

Written from fastText's and gensim's descriptions, one statement per step and no NumPy vector operations on the
training path, so that a reader can follow them; the tests compare the Numba kernels with them on tiny inputs.
"""

from __future__ import annotations

import math

import numpy as np

MASK64 = (1 << 64) - 1
MASK32 = (1 << 32) - 1


def fnv1a_fasttext(data: bytes) -> int:
    """32-bit FNV-1a where each byte is first converted to a signed char and sign-extended (fastText)."""
    h = 2166136261
    for b in data:
        signed = b - 256 if b >= 128 else b  # int8_t(c)
        h ^= signed & MASK32  # uint32_t(int8_t(c))
        h = (h * 16777619) & MASK32
    return h


def fnv1a_plain(data: bytes) -> int:
    """Textbook 32-bit FNV-1a (no sign extension): what a naive port computes."""
    h = 2166136261
    for b in data:
        h = ((h ^ b) * 16777619) & MASK32
    return h


def char_ngrams(word: str, minn: int, maxn: int) -> list[str]:
    """N-grams of ``<word>`` counted in code points, fastText's order (start, then length), without "<" and ">"."""
    if word == "</s>":
        return []
    w = "<" + word + ">"
    out = []
    for i in range(len(w)):
        for n in range(1, maxn + 1):
            if i + n > len(w):
                break
            if n < minn:
                continue
            if n == 1 and (i == 0 or i == len(w) - 1):
                continue
            out.append(w[i:i + n])
    return out


def word_rows(words: list[str], minn: int, maxn: int, bucket: int) -> list[list[int]]:
    """Each word's input rows: its index, then ``V + hash % bucket`` per n-gram."""
    V = len(words)
    out = []
    for i, w in enumerate(words):
        rows = [i]
        if maxn >= 1 and bucket >= 1:
            rows += [V + fnv1a_fasttext(g.encode("utf-8")) % bucket for g in char_ngrams(w, minn, maxn)]
        out.append(rows)
    return out


class SplitMix64:
    """Steele, Lea & Flood (2014)."""

    def __init__(self, seed: int):
        self.state = seed & MASK64

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)


def below(r: int, n: int) -> int:
    return ((r >> 32) * n) >> 32


def huffman(counts: list[int]) -> list[tuple[list[int], list[int]]]:
    """fastText's buildTree: (points, codes) per word, leaf side first; counts in non-increasing order."""
    V = len(counts)
    n = 2 * V - 1
    parent = [-1] * n
    binary = [0] * n
    count = [10**15] * n
    count[:V] = counts
    leaf, node = V - 1, V
    for i in range(V, 2 * V - 1):
        mini = []
        for _ in range(2):
            if leaf >= 0 and count[leaf] < count[node]:
                mini.append(leaf)
                leaf -= 1
            else:
                mini.append(node)
                node += 1
        count[i] = count[mini[0]] + count[mini[1]]
        parent[mini[0]] = parent[mini[1]] = i
        binary[mini[1]] = 1
    out = []
    for i in range(V):
        points, codes = [], []
        j = i
        while parent[j] != -1:
            points.append(parent[j] - V)
            codes.append(binary[j])
            j = parent[j]
        out.append((points, codes))
    return out


def dot8(a: np.ndarray, b: np.ndarray) -> np.float32:
    """Eight float32 partial sums (lane k % 8), combined ((0+1)+(2+3))+((4+5)+(6+7)), then the tail one by one."""
    d = len(a)
    s = [np.float32(0.0)] * 8
    n8 = d - d % 8
    for k in range(n8):
        s[k % 8] = np.float32(s[k % 8] + np.float32(a[k] * b[k]))
    total = np.float32(np.float32(np.float32(s[0] + s[1]) + np.float32(s[2] + s[3]))
                       + np.float32(np.float32(s[4] + s[5]) + np.float32(s[6] + s[7])))
    for k in range(n8, d):
        total = np.float32(total + np.float32(a[k] * b[k]))
    return total


def sigmoid_lookup(f: np.float32, table: np.ndarray) -> np.float32:
    if f < -8:
        return np.float32(0.0)
    if f > 8:
        return np.float32(1.0)
    return table[int((float(f) + 8) * 32.0)]


def logistic(hidden, out, label, lr, grad, table):
    """fastText's binaryLogistic: grad += g * out (old out), out += g * hidden; g = lr * (label - sigmoid)."""
    score = sigmoid_lookup(dot8(hidden, out), table)
    g = np.float32(lr * float(np.float32(np.float32(label) - score)))
    for k in range(len(out)):
        o = out[k]
        grad[k] = np.float32(grad[k] + np.float32(g * o))
        out[k] = np.float32(o + np.float32(g * hidden[k]))


def train_chunk(ids, doc_offsets, doc_lo, doc_hi, syn0, syn1, rows, keep_thr, alias_thr, alias_idx, paths, table,
                sg, negative, hs, window, shrink_windows, alpha, min_alpha, words_before, total_words, seed):
    """The kernel's algorithm, step by step; ``rows[w]`` lists word w's rows, ``paths[w]`` its (points, codes)."""
    rng = SplitMix64(seed)
    d = syn0.shape[1]
    V = len(alias_idx)
    n_read = n_trained = 0

    def predict(hidden, target, grad, lr):
        if hs:
            points, codes = paths[target]
            for p, c in zip(points, codes):
                logistic(hidden, syn1[p], np.float32(c), lr, grad, table)
            return
        logistic(hidden, syn1[target], np.float32(1.0), lr, grad, table)
        for _ in range(negative):
            r = rng.next()
            t = below(r, V)
            if (r & MASK32) >= int(alias_thr[t]):
                t = int(alias_idx[t])
            if t == target:
                continue
            logistic(hidden, syn1[t], np.float32(0.0), lr, grad, table)

    for doc in range(doc_lo, doc_hi):
        kept = []
        for t in range(doc_offsets[doc], doc_offsets[doc + 1]):
            w = int(ids[t])
            thr = int(keep_thr[w])
            if thr >= 1 << 32 or (rng.next() >> 32) < thr:
                kept.append(w)
        progress = (words_before + n_read) / total_words
        lr = max(min_alpha, alpha - (alpha - min_alpha) * progress)
        n_read += doc_offsets[doc + 1] - doc_offsets[doc]
        n_trained += len(kept)
        n = len(kept)
        for pos in range(n):
            b = 1 + below(rng.next(), window) if shrink_windows else window
            context = [c for c in range(max(0, pos - b), min(n, pos + b + 1)) if c != pos]
            hidden = np.zeros(d, np.float32)
            grad = np.zeros(d, np.float32)
            if sg:
                mine = rows[kept[pos]]
                for r in mine:
                    for k in range(d):
                        hidden[k] = np.float32(hidden[k] + syn0[r, k])
                inv = np.float32(1.0 / len(mine))
                for k in range(d):
                    hidden[k] = np.float32(hidden[k] * inv)
                for c in context:
                    predict(hidden, kept[c], grad, lr)
                for r in mine:
                    for k in range(d):
                        syn0[r, k] = np.float32(syn0[r, k] + grad[k])
            else:
                used = [r for c in context for r in rows[kept[c]]]
                if not used:
                    continue
                for r in used:
                    for k in range(d):
                        hidden[k] = np.float32(hidden[k] + syn0[r, k])
                inv = np.float32(1.0 / len(used))
                for k in range(d):
                    hidden[k] = np.float32(hidden[k] * inv)
                predict(hidden, kept[pos], grad, lr)
                for r in used:
                    for k in range(d):
                        syn0[r, k] = np.float32(syn0[r, k] + grad[k])
    return n_read, n_trained


def keep_probability(count: int, total: int, sample: float) -> float:
    """word2vec.c / gensim: (sqrt(c / (s N)) + 1) * (s N) / c, capped at 1."""
    if sample <= 0:
        return 1.0
    t = sample * total
    return min(1.0, (math.sqrt(count / t) + 1) * t / count)


def cut_corpus(ids, offsets, token_map, max_piece: int) -> list[list[int]]:
    """The corpus the trainer sees: per document, the tokens that ``token_map`` keeps, as vocabulary indices; empty
    documents dropped; each document cut into pieces of ``max_piece`` tokens, the last piece holding the rest."""
    pieces = []
    for d in range(len(offsets) - 1):
        kept = [int(token_map[i]) for i in ids[offsets[d]:offsets[d + 1]] if token_map[i] >= 0]
        for s in range(0, len(kept), max_piece):
            pieces.append(kept[s:s + max_piece])
    return pieces


def chunk_pieces(pieces: list[list[int]], chunk_tokens: int) -> list[list[list[int]]]:
    """The pieces grouped into training chunks: for each multiple ``m`` of ``chunk_tokens`` below the total, a
    boundary before the first piece that starts at or after ``m`` tokens (or at the end)."""
    starts = []
    total = 0
    for p in pieces:
        starts.append(total)
        total += len(p)
    cuts = {0, len(pieces)}
    for m in range(chunk_tokens, total, chunk_tokens):
        cuts.add(next((i for i, s in enumerate(starts) if s >= m), len(pieces)))
    bounds = sorted(cuts)
    return [pieces[a:b] for a, b in zip(bounds, bounds[1:])]
