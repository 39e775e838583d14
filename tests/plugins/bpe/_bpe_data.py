"""Shared data for the BPE tests: the GPT-2 ranks fixture, tiktoken's encoder on it, texts, a reference trainer."""

from __future__ import annotations

import functools
import gzip
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
GPT2_RANKS = ROOT / "tests" / "fixtures" / "gpt2.tiktoken"
MOBY = ROOT / "framework" / "samples" / "moby-dick.txt.gz"

#: Text a tokenizer must handle: emoji with joiners and modifiers, CJK, combining marks, right-to-left scripts,
#: control characters, whitespace runs of every kind, digits in several scripts, rare planes.
UNICODE_TEXTS = [
    "👩‍👩‍👧‍👦 family, 👍🏽 thumbs, 🏳️‍🌈 flag, 1️⃣ keycap",
    "日本語のテキストと中文文本，한국어 텍스트。",
    "e\u0301 vs é, a\u0308\u0304, Z\u0351\u0315a\u0300l\u0362go",
    "العربية من اليمين إلى اليسار، עברית גם כן 123",
    "ctrl\x00\x01\x07\x1b[0m\x7f\x85 end",
    "  two  spaces\t\ttabs\n\nnewlines\r\n\u00a0nbsp\u2003em\u3000ideographic   ",
    "digits ١٢٣ ४५६ 789 ½ ²",
    "𝐀𝐁𝐂 mathematical, 𓀀 hieroglyph, \U0010fffd private",
    "it's they're we've I'm you'll he'd 'quoted' ''",
    "\ufeffBOM and zero\u200bwidth\u200djoiner",
    "",
    " ",
    "\n",
]


@functools.lru_cache(maxsize=None)
def moby_text() -> str:
    with gzip.open(MOBY, "rt", encoding="utf-8") as f:
        return f.read()


@functools.lru_cache(maxsize=None)
def gpt2_tokenizer():
    from tokembed.plugins.bpe.tokenizer import BPETokenizer

    return BPETokenizer.from_tiktoken(GPT2_RANKS)


def gpt2_variant(**params):
    """A tokenizer with the GPT-2 vocabulary and merges and other parameters (``dropout``, ``pad_token``, ...),
    without parsing the ranks file again."""
    from tokembed.plugins.bpe.tokenizer import BPETokenizer

    base = gpt2_tokenizer()
    tok = BPETokenizer(**{**base.get_params(), **params})
    return tok._set_model(base._model.vocab, base.merges_, base.special_tokens_, None)


@functools.lru_cache(maxsize=None)
def tiktoken_gpt2():
    """tiktoken's GPT-2 encoding on the ranks fixture, with tiktoken's own shipped pattern (the one its ``gpt2``
    constructor uses), so that our pre-tokenizer is checked against theirs and not against itself."""
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe
    from tiktoken_ext.openai_public import r50k_pat_str

    ranks = load_tiktoken_bpe(str(GPT2_RANKS))
    return tiktoken.Encoding("gpt2-fixture", pat_str=r50k_pat_str, mergeable_ranks=ranks,
                             special_tokens={"<|endoftext|>": 50256})


def reference_train(words: Counter, base: list[str], n_merges: int, min_frequency: int = 1,
                    prefix: str = "") -> tuple[list[tuple[str, str]], list[int]]:
    """A plain-Python BPE trainer with the issue's tie rule, over word counts.

    ``words`` maps a tuple of base-symbol strings to its count; ``base`` lists the base symbols in id order
    (specials first). A pair's count is the number of its adjacent occurrences over all words, overlapping ones
    included, times the word counts. Each step takes the highest count, then the smallest (left id, right id),
    gives the merge the next id, and rewrites each word containing the pair left to right without overlap (its
    pairs are subtracted before and added after). Returns the merges as string pairs and their counts.
    """
    ids = {s: i for i, s in enumerate(base)}
    names = list(base)
    segs = [[ids[s] for s in w] for w in words]
    wcount = list(words.values())
    pairs: Counter = Counter()
    where: dict[tuple[int, int], set[int]] = {}

    def account(k: int, sign: int) -> None:
        seg = segs[k]
        for p in zip(seg, seg[1:]):
            pairs[p] += sign * wcount[k]
            where.setdefault(p, set()).add(k)

    for k in range(len(segs)):
        account(k, +1)
    merges, counts = [], []
    for _ in range(n_merges):
        eligible = [(c, -x, -y) for (x, y), c in pairs.items() if c >= max(min_frequency, 1)]
        if not eligible:
            break
        c, nx, ny = max(eligible)
        x, y = -nx, -ny
        new = len(names)
        right = names[y][len(prefix):] if prefix and names[y].startswith(prefix) else names[y]
        names.append(names[x] + right)
        merges.append((names[x], names[y]))
        counts.append(c)
        for k in sorted(where.pop((x, y))):
            seg = segs[k]
            out, i = [], 0
            while i < len(seg):
                if i + 1 < len(seg) and seg[i] == x and seg[i + 1] == y:
                    out.append(new)
                    i += 2
                else:
                    out.append(seg[i])
                    i += 1
            if out != seg:
                account(k, -1)
                segs[k] = out
                account(k, +1)
        for p in [p for p, c in pairs.items() if c == 0]:
            del pairs[p]
    return merges, counts
