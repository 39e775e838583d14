"""Plain-Python references for the WordPiece plugin: slow, short, and written to be obviously correct.

- :func:`basic_pieces` -- BERT's normalizer and pre-tokenizer, character by character, with offsets;
- :func:`wordpiece` -- greedy longest-match-first over one piece (google-research/bert ``WordpieceTokenizer``);
- :func:`encode` -- both together;
- :func:`train` -- WordPiece training by likelihood (or frequency), recomputing every count at every step with
  exact fractions.

Definitions follow google-research/bert ``tokenization.py`` with Hugging Face ``BertNormalizer``'s clean rule
(drop NUL, U+FFFD and categories Cc, Cf, Co, Cs other than tab/newline/return; whitespace becomes a space) and
order (clean, strip accents, lowercase).
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from fractions import Fraction

#: Unicode PropList White_Space.
WHITE_SPACE = set(map(chr, [*range(0x09, 0x0E), 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029,
                            0x202F, 0x205F, 0x3000]))
CJK = [(0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
       (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F)]


def is_punct(c: str) -> bool:
    cp = ord(c)
    return 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126 or \
        unicodedata.category(c).startswith("P")


def is_cjk(c: str) -> bool:
    return any(lo <= ord(c) <= hi for lo, hi in CJK)


def normalize_chars(text: str, lowercase=True, strip_accents=None, clean_text=True) -> list[tuple[str, int]]:
    """The normalized characters of ``text``, each with the index of the original character it came from."""
    chars = list(zip(text, range(len(text))))
    if clean_text:
        out = []
        for c, i in chars:
            if c in "\t\n\r":
                out.append((" ", i))
            elif c in "\x00\ufffd" or unicodedata.category(c) in ("Cc", "Cf", "Co", "Cs"):
                continue
            else:
                out.append((" " if c in WHITE_SPACE else c, i))
        chars = out
    strip = lowercase if strip_accents is None else strip_accents
    if strip:
        chars = [(d, i) for c, i in chars for d in unicodedata.normalize("NFD", c)
                 if unicodedata.category(d) != "Mn"]
    if lowercase:
        chars = [(d, i) for c, i in chars for d in c.lower()]
    return chars


def basic_pieces(text: str, lowercase=True, strip_accents=None, clean_text=True, handle_chinese_chars=True
                 ) -> list[tuple[str, list[int]]]:
    """Pieces of ``text``: ``(piece, sources)`` where ``sources[k]`` is the original index of character ``k``."""
    pieces: list[tuple[str, list[int]]] = []
    word: list[tuple[str, int]] = []

    def flush():
        if word:
            pieces.append(("".join(c for c, _ in word), [i for _, i in word]))
            word.clear()

    for c, i in normalize_chars(text, lowercase, strip_accents, clean_text):
        if c in WHITE_SPACE:
            flush()
        elif is_punct(c) or (handle_chinese_chars and is_cjk(c)):
            flush()
            pieces.append((c, [i]))
        else:
            word.append((c, i))
    flush()
    return pieces


def wordpiece(piece: str, vocab: set[str], prefix="##", unk="[UNK]", max_chars=100
              ) -> list[tuple[str, int, int]] | None:
    """Greedy longest-match-first: ``[(token, start, end), ...]`` in piece characters; None when there is no
    segmentation (the caller substitutes ``unk``) or the piece is longer than ``max_chars``."""
    if len(piece) > max_chars:
        return None
    out = []
    start = 0
    while start < len(piece):
        end = len(piece)
        found = None
        while start < end:
            sub = piece[start:end] if start == 0 else prefix + piece[start:end]
            if sub in vocab:
                found = sub
                break
            end -= 1
        if found is None:
            return None
        out.append((found, start, end))
        start = end
    return out


def encode(text: str, vocab: list[str], specials=(), prefix="##", unk="[UNK]", max_chars=100, **norm
           ) -> list[tuple[int, int, int]]:
    """``[(id, start, end), ...]`` of ``text``: offsets are original indices (first source to last source + 1)."""
    ids = {t: i for i, t in enumerate(vocab)}
    matchable = {t for t in vocab if t not in specials}
    out = []
    for piece, src in basic_pieces(text, **norm):
        tokens = wordpiece(piece, matchable, prefix, unk, max_chars)
        if tokens is None:
            out.append((ids[unk], src[0], src[-1] + 1))
        else:
            out.extend((ids[t], src[s], src[e - 1] + 1) for t, s, e in tokens)
    return out


def train(docs, vocab_size: int, specials: list[str], prefix="##", scoring="likelihood", min_frequency=0,
          **norm) -> tuple[list[str], list[tuple[str, str]]]:
    """WordPiece training from scratch, every count recomputed at every step.

    Base symbols: specials, initial characters sorted, ``prefix`` + characters seen after the first position
    sorted; merge ``k`` gets the next id. Each step merges the pair with the highest ``Fraction(count(ab),
    count(a) * count(b))`` (likelihood) or ``count(ab)`` (frequency), then the higher count, then the smaller
    ``(left id, right id)``; pairs below ``max(min_frequency, 1)`` are never merged. Returns the vocabulary
    (strings, first spelling kept) and the merges as ``(left string, right string)``.
    """
    words = Counter(p for d in docs for p, _ in basic_pieces(d, **norm))
    initial = sorted({w[0] for w in words} | {c for w in words for c in w[1:]})
    cont = sorted({c for w in words for c in w[1:]})
    names = list(specials) + initial + [prefix + c for c in cont]
    conts = [False] * (len(specials) + len(initial)) + [True] * len(cont)
    bodies = [""] * len(specials) + initial + cont
    idx = {n: i for i, n in enumerate(names)}
    segs = {w: [idx[w[0]]] + [idx[prefix + c] for c in w[1:]] for w in words}
    vocab = list(dict.fromkeys(names))
    merges = []
    threshold = max(min_frequency, 1)
    while len(vocab) < vocab_size:
        pairs: Counter = Counter()
        symbols: Counter = Counter()
        for w, n in words.items():
            for s in segs[w]:
                symbols[s] += n
            for a, b in zip(segs[w], segs[w][1:]):
                pairs[a, b] += n
        best = None
        for (a, b), c in pairs.items():
            if c < threshold:
                continue
            score = Fraction(c, symbols[a] * symbols[b]) if scoring == "likelihood" else c
            key = (score, c, -a, -b)
            if best is None or key > best[0]:
                best = (key, a, b)
        if best is None:
            break
        _, a, b = best
        new = len(names)
        bodies.append(bodies[a] + bodies[b])
        conts.append(conts[a])
        names.append((prefix if conts[a] else "") + bodies[a] + bodies[b])
        merges.append((names[a], names[b]))
        if names[new] not in vocab:
            vocab.append(names[new])
        for w in segs:
            seg, out, i = segs[w], [], 0
            while i < len(seg):
                if i + 1 < len(seg) and seg[i] == a and seg[i + 1] == b:
                    out.append(new)
                    i += 2
                else:
                    out.append(seg[i])
                    i += 1
            segs[w] = out
    return vocab, merges
