"""Slow, obviously correct references for the unigram kernels (plain Python over strings)."""

from __future__ import annotations

import math


def all_segmentations(text: str, scores: dict[str, float], max_len: int = 16):
    """Every segmentation of ``text`` into pieces of ``scores``, with its score (sum of piece scores)."""
    if not text:
        yield [], 0.0
        return
    for n in range(1, min(len(text), max_len) + 1):
        head = text[:n]
        if head in scores:
            for rest, s in all_segmentations(text[n:], scores, max_len):
                yield [head] + rest, scores[head] + s


def best_segmentation(text: str, scores: dict[str, float]) -> list[str]:
    """The best segmentation by dynamic programming over characters; ties keep the earlier start of the last
    piece (SentencePiece's rule: a candidate replaces the best one only when strictly better, candidates by
    increasing start)."""
    best = [(-math.inf, -1)] * (len(text) + 1)
    best[0] = (0.0, -1)
    for s in range(len(text)):
        if best[s][1] == -1 and s:
            continue
        for e in range(s + 1, len(text) + 1):
            piece = text[s:e]
            if piece in scores:
                cand = best[s][0] + scores[piece]
                if best[e][1] == -1 and e != 0 and best[e][0] == -math.inf or cand > best[e][0]:
                    best[e] = (cand, s)
    out, e = [], len(text)
    while e > 0:
        s = best[e][1]
        out.append(text[s:e])
        e = s
    return out[::-1]


def log_partition(text: str, scores: dict[str, float]) -> float:
    return math.log(sum(math.exp(s) for _, s in all_segmentations(text, scores)))
