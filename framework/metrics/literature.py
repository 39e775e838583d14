"""Built-in metrics from the tokenizer-evaluation literature: the Gini coefficient of the cost across the languages of
a parallel set, the single-token retention rate (STRR), and morphological boundary precision, recall and F1 against
a gold segmentation. Registered with the other built-ins (:data:`tokembed.metrics.builtin.BUILTIN_METRICS`);
``docs/metrics.md`` gives each definition with its source.

A metric that reads a file takes it as its argument, named in a recipe's or a call's metric list as
``name:PATH`` (:meth:`tokembed.metrics.Metric.configure`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..errors import TokembedError
from .base import Metric, ParallelMetric, PassStats, check_parallel
from .base import ratio as _ratio

__all__ = ["PremiumGini", "Strr", "BoundaryPrecision", "BoundaryRecall", "BoundaryF1", "gini", "read_word_list",
           "read_segmentation", "boundary_counts"]


# ---------------------------------------------------------------------------------------------------------------
# Gini over the languages of a parallel set
# ---------------------------------------------------------------------------------------------------------------
def gini(values: np.ndarray) -> float | None:
    """Gini coefficient of non-negative values: ``sum_i sum_j |x_i - x_j| / (2 n^2 mean(x))``, 0 when all are
    equal, ``(n - 1) / n`` when one holds everything. None for no value or a zero sum.

    Parameters
    ----------
    values : array of float, shape (n,)
    """
    x = np.sort(np.asarray(values, np.float64))
    n = x.size
    if n == 0 or x.sum() <= 0:
        return None
    # sum_i sum_j |x_i - x_j| = 2 sum_i (2i - n + 1) x_(i) over the sorted values (i from 0)
    diff_sum = 2.0 * float(np.dot(2 * np.arange(n) - n + 1, x))
    return diff_sum / (2.0 * n * n * float(x.mean()))


class PremiumGini(ParallelMetric):
    name = "premium_gini"
    label = "Gini"
    unit = "coefficient in [0, 1)"
    definition = ("Gini coefficient, across the languages of the parallel set, of the tokens each language needs "
                  "for the whole set (the same content in every language): 0 when every language costs the same. "
                  "The same value in every language's row. Equal to the Gini of the premium as a ratio of totals, "
                  "whatever the reference (the coefficient does not change when every value is divided by one).")
    source = ("Gini coefficient of tokenization cost across languages, as reported by TokEval-style fairness "
              "evaluations; the cost is the token count of Petrov et al. 2023 (NeurIPS), not tokens per byte")
    higher_is_better = False
    compression = True
    display = ".3f"

    def __init__(self, tokenizer: Any):
        super().__init__(tokenizer)
        self.tokens = 0
        self.chapters = 0

    def update_chunk(self, chunk: Any) -> None:
        self.tokens += int(chunk.ids.size)
        self.chapters += chunk.n_docs

    def merge(self, other: "PremiumGini") -> "PremiumGini":
        out = self.copy()
        out.tokens, out.chapters = self.tokens + other.tokens, self.chapters + other.chapters
        return out

    @classmethod
    def combine(cls, runs: dict[str, ParallelMetric], reference: str) -> dict[str, float | None]:
        check_parallel({lang: run.chapters for lang, run in runs.items()}, reference, cls.name)
        value = gini(np.array([run.tokens for run in runs.values()], np.float64))
        return dict.fromkeys(runs, value)


# ---------------------------------------------------------------------------------------------------------------
# files: a word list, a gold segmentation
# ---------------------------------------------------------------------------------------------------------------
def _lines(path: str | Path, what: str) -> list[tuple[int, str]]:
    p = Path(path)
    if not p.is_file():
        raise TokembedError(f"{what} {str(p)!r} is not a file")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise TokembedError(f"{what} {str(p)!r} is not UTF-8: {exc}") from None
    return [(i, line.rstrip("\r")) for i, line in enumerate(text.split("\n"), 1) if line.strip()]


def read_word_list(path: str | Path) -> list[str]:
    """The words of a word list: one per non-blank line, the first tab-separated column (so a gold segmentation
    file is also a word list), surrounding whitespace removed.

    Raises
    ------
    TokembedError
        If the file is missing, not UTF-8, or holds no word.
    """
    words = [line.split("\t", 1)[0].strip() for _, line in _lines(path, "word list")]
    words = [w for w in words if w]
    if not words:
        raise TokembedError(f"word list {str(path)!r} holds no word")
    return words


def read_segmentation(path: str | Path) -> tuple[list[str], list[list[str]]]:
    """A gold segmentation file: one ``word<TAB>morph morph ...`` per non-blank line, the morphs (separated by
    spaces) spelling the word when joined.

    Returns
    -------
    words : list of str
    morphs : list of list of str

    Raises
    ------
    TokembedError
        Naming the file and line: no tab, no morph, or morphs that do not spell the word.
    """
    words, morphs = [], []
    for i, line in _lines(path, "gold segmentation"):
        word, tab, rest = line.partition("\t")
        word, parts = word.strip(), rest.split()
        if not tab or not word or not parts:
            raise TokembedError(f"gold segmentation {str(path)!r}, line {i}: expected 'word<TAB>morph morph ...', "
                                f"got {line!r}")
        if "".join(parts) != word:
            raise TokembedError(f"gold segmentation {str(path)!r}, line {i}: the morphs {' '.join(parts)!r} do not "
                                f"spell the word {word!r}")
        words.append(word)
        morphs.append(parts)
    if not words:
        raise TokembedError(f"gold segmentation {str(path)!r} holds no word")
    return words, morphs


def _encode_words(tokenizer: Any, words: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Token counts (int64 (n,)) and token spans (int64 (n_tokens, 2)) of each word encoded alone."""
    from .chunk import encode_for_measuring

    _, lengths, spans = encode_for_measuring(tokenizer, words)
    return lengths, spans


# ---------------------------------------------------------------------------------------------------------------
# STRR
# ---------------------------------------------------------------------------------------------------------------
class Strr(Metric):
    name = "strr"
    label = "STRR"
    unit = "share of words"
    definition = ("Single-token retention rate: share of whitespace-separated words of the corpus (occurrences) that "
                  "exactly one token overlaps, i.e. kept whole in one token; n/a under the same rule as fertility. "
                  "Named strr:WORDS with a word list (one word a line, first tab-separated column): the share of the "
                  "listed words that encode, each alone and without a leading space, into exactly one token (the "
                  "same value on every corpus).")
    source = ("Nayeem et al. 2025, 'Beyond Fertility: Analyzing STRR as a Metric for Multilingual Tokenization "
              "Evaluation'")
    higher_is_better = True
    compression = True
    display = ".1%"
    argument = "a word list file (one word a line)"

    @classmethod
    def check_argument(cls, value: str) -> None:
        read_word_list(value)

    def __init__(self, tokenizer: Any):
        super().__init__(tokenizer)
        self.words = 0
        self.single = 0

    def prepare_chunk(self, chunk: Any) -> None:
        if self.given is None:
            chunk.tokens_per_word()

    def update_chunk(self, chunk: Any) -> None:
        if self.given is not None:
            return
        tpw = chunk.tokens_per_word()
        self.words += int(tpw.size)
        self.single += int(np.count_nonzero(tpw == 1))

    def result(self, stats: PassStats) -> float | None:
        if self.given is not None:
            lengths, _ = _encode_words(self.tokenizer, read_word_list(self.given))
            return float(np.count_nonzero(lengths == 1)) / lengths.size
        return _ratio(self.single, self.words) if stats.has_words else None

    def merge(self, other: "Strr") -> "Strr":
        out = self.copy()
        out.words, out.single = self.words + other.words, self.single + other.single
        return out


# ---------------------------------------------------------------------------------------------------------------
# morphological boundaries
# ---------------------------------------------------------------------------------------------------------------
def boundary_counts(tokenizer: Any, words: list[str], morphs: list[list[str]]) -> tuple[int, int, int]:
    """``(true positives, predicted, gold)`` boundaries over a gold segmentation, micro-summed over words.

    A boundary is a position ``0 < b < len(word)`` (code points) between two morphs (gold) or at which a token of
    the word encoded alone starts (predicted; tokens sharing a start count once, so the byte pieces of one
    character make no boundary inside it).
    """
    n = len(words)
    wlen = np.fromiter(map(len, words), np.int64, n)
    stride = int(wlen.max()) + 1
    gold_pos = np.fromiter((b for ms in morphs for b in np.cumsum([len(m) for m in ms[:-1]], dtype=np.int64)),
                           np.int64)
    gold_doc = np.repeat(np.arange(n, dtype=np.int64), [len(ms) - 1 for ms in morphs])
    gold = np.unique(gold_doc * stride + gold_pos)
    lengths, spans = _encode_words(tokenizer, words)
    doc = np.repeat(np.arange(n, dtype=np.int64), lengths)
    start = spans[:, 0]
    keep = (start > 0) & (start < wlen[doc])
    pred = np.unique(doc[keep] * stride + start[keep])
    return int(np.intersect1d(gold, pred, assume_unique=True).size), int(pred.size), int(gold.size)


class _Boundaries(Metric):
    unit = "ratio in [0, 1]"
    source = ("morpheme boundary precision / recall / F1 as in Creutz and Lagus (Morfessor) evaluations and "
              "Hofmann et al. 2021; the gold file format word<TAB>morph morph ...")
    higher_is_better = True
    display = ".3f"
    argument = "a gold segmentation file (word<TAB>morph morph ... per line)"
    argument_required = True

    @classmethod
    def check_argument(cls, value: str) -> None:
        read_segmentation(value)

    def counts(self) -> tuple[int, int, int]:
        if self.given is None:
            raise TokembedError(f"metric {self.name!r} needs a gold segmentation: name it as "
                                f"{self.name}:PATH (one 'word<TAB>morph morph ...' per line)")
        return boundary_counts(self.tokenizer, *read_segmentation(self.given))

    def extras(self) -> dict[str, Any]:
        tp, pred, gold = self.counts()
        return {"true_positives": tp, "predicted": pred, "gold": gold}


class BoundaryPrecision(_Boundaries):
    name = "boundary_precision"
    label = "morph P"
    definition = ("Share of the token boundaries inside the words of a gold segmentation (each word encoded alone) "
                  "that are morph boundaries, micro-averaged over the words. Named boundary_precision:GOLD.")

    def result(self, stats: PassStats) -> float | None:
        tp, pred, _ = self.counts()
        return _ratio(tp, pred)


class BoundaryRecall(_Boundaries):
    name = "boundary_recall"
    label = "morph R"
    definition = ("Share of the morph boundaries of a gold segmentation that are token boundaries (each word "
                  "encoded alone), micro-averaged over the words. Named boundary_recall:GOLD.")

    def result(self, stats: PassStats) -> float | None:
        tp, _, gold = self.counts()
        return _ratio(tp, gold)


class BoundaryF1(_Boundaries):
    name = "boundary_f1"
    label = "morph F1"
    definition = ("Harmonic mean of boundary_precision and boundary_recall: 2 TP / (predicted + gold boundaries). "
                  "Named boundary_f1:GOLD.")

    def result(self, stats: PassStats) -> float | None:
        tp, pred, gold = self.counts()
        return _ratio(2 * tp, pred + gold)
