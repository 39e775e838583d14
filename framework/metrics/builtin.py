"""The built-in tokenizer metrics: the core's own plugin for the hook ``tokembed_register_metrics``.

:func:`tokembed.registry.build_registry` registers this module before any entry point, under the distribution
``tokembed``, so the built-ins take the same path as a third party's metrics (and a third party's metric with one of
these names is a duplicate, reported as a :class:`~tokembed.errors.PluginError`). Each class states its definition,
unit and source in its attributes; ``docs/metrics.md`` lists them all with the arithmetic.
"""

from __future__ import annotations

import hashlib
import math
import operator
from typing import Any, Sequence

import numpy as np

from ..hookspecs import hookimpl
from ..errors import TokembedError
from .base import Metric, ParallelMetric, PassStats, check_parallel
from .base import ratio as _ratio
from .literature import BoundaryF1, BoundaryPrecision, BoundaryRecall, PremiumGini, Strr

__all__ = [
    "BUILTIN_METRICS",
    "RENYI_ALPHA",
    "SAMPLE_HEAD",
    "SAMPLE_EVERY",
    "determinism_sample",
    "within_budget",
    "SAMPLE_FLOOR_CHARS",
    "ids_digest_stream",
    "tokembed_register_metrics",
    "tokens_per_word",
    "is_partial_token",
    "renyi_efficiency",
    "VocabSize",
    "Tokens",
    "CharsPerToken",
    "BytesPerToken",
    "Fertility",
    "ContinuedWords",
    "UnkRate",
    "PartialCharRate",
    "RoundTrip",
    "VocabUtilization",
    "RenyiEfficiency",
    "PremiumMedian",
    "PremiumMean",
    "Throughput",
    "Deterministic",
    "decode_documents",
]

#: Order of the Renyi entropy in :class:`RenyiEfficiency` (Zouhar et al. 2023 found 2.5 to correlate best with BLEU).
RENYI_ALPHA = 2.5

#: The determinism check re-encodes the first SAMPLE_HEAD documents of a measured sequence and every
#: SAMPLE_EVERY-th after them (positions 0, 1, ..., 31, 64, 128, ...), within a budget of characters: a document
#: is taken when the sample's code points, it included, stay within SAMPLE_FLOOR_CHARS plus 1 / SAMPLE_EVERY of the
#: code points measured up to it (the sequence's first document is always taken). Long documents thus cost the
#: check no more than short ones: about 1/64 of the characters, twice (alone, then in a batch).
SAMPLE_HEAD = 32
SAMPLE_EVERY = 64
SAMPLE_FLOOR_CHARS = 65_536


# ---------------------------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------------------------


class _IdCounts:
    """Token counts per id, added chunk by chunk in one Numba pass (:func:`tokembed.metrics._kernels.add_counts`)."""

    def __init__(self, size: int):
        self.counts = np.zeros(max(int(size), 1), np.int64)

    def add(self, ids: np.ndarray) -> None:
        from ._kernels import add_counts, id_range

        if not ids.size:
            return
        ids = np.ascontiguousarray(ids, np.int32)
        lo, hi = id_range(ids)
        if lo < 0:
            raise TokembedError(f"the tokenizer produced a negative id ({int(lo)})")
        if hi >= self.counts.size:
            self.counts = np.concatenate([self.counts, np.zeros(int(hi) + 1 - self.counts.size, np.int64)])
        add_counts(ids, self.counts)

    def flush(self) -> np.ndarray:
        """The counts (int64, shape (>= vocabulary size,))."""
        return self.counts

    def merged(self, other: "_IdCounts") -> "_IdCounts":
        """New counts: both added (neither changed)."""
        a, b = self.counts, other.counts
        out = _IdCounts(1)
        out.counts = np.zeros(max(a.size, b.size), np.int64)
        out.counts[: a.size] += a
        out.counts[: b.size] += b
        return out


def _summed(metric: Any, other: Any, *names: str) -> Any:
    """A shallow copy of ``metric`` with the int attributes ``names`` summed with ``other``'s."""
    out = metric.copy()
    for name in names:
        setattr(out, name, getattr(metric, name) + getattr(other, name))
    return out


def _vocab_size(tokenizer: Any) -> int:
    return int(tokenizer.get_vocab_size())


# ---------------------------------------------------------------------------------------------------------------
# the built-in metrics
# ---------------------------------------------------------------------------------------------------------------
class VocabSize(Metric):
    name = "vocab_size"
    label = "vocab"
    unit = "entries"
    definition = "Entries in the fitted vocabulary, special tokens included (tokenizer.get_vocab_size())."
    source = "tokembed"
    display = ",d"

    def result(self, stats: PassStats) -> int:
        return _vocab_size(self.tokenizer)


class Tokens(Metric):
    name = "tokens"
    unit = "tokens"
    definition = "Tokens produced for the whole corpus, no special token added; fewer means stronger compression."
    source = "tokembed"
    higher_is_better = False
    compression = True
    display = ",d"

    def result(self, stats: PassStats) -> int:
        return stats.tokens


class CharsPerToken(Metric):
    name = "chars_per_token"
    label = "chars/tok"
    unit = "code points / token"
    definition = "Unicode code points of the corpus divided by its tokens; higher means stronger compression."
    source = "compression rate, as in Goldman et al. 2024, 'Unpacking Tokenization: Evaluating Text Compression and " \
             "its Correlation with Model Performance'"
    higher_is_better = True
    compression = True

    def result(self, stats: PassStats) -> float | None:
        return _ratio(stats.characters, stats.tokens)


class BytesPerToken(Metric):
    name = "bytes_per_token"
    label = "bytes/tok"
    unit = "UTF-8 bytes / token"
    definition = "UTF-8 bytes of the corpus divided by its tokens; comparable across scripts of different widths."
    source = "compression rate, as in Goldman et al. 2024 (bytes rather than characters)"
    higher_is_better = True
    compression = True

    def result(self, stats: PassStats) -> float | None:
        return _ratio(stats.bytes, stats.tokens)


class Fertility(Metric):
    name = "fertility"
    unit = "tokens / word"
    definition = ("Tokens divided by whitespace-separated words (str.split()). n/a when the corpus has no word or "
                  "when most of its letters are in scripts written without spaces (Chinese, Japanese, Thai, ...).")
    source = "Rust et al. 2021, 'How Good is Your Tokenizer? On the Monolingual Performance of Multilingual " \
             "Language Models' (ACL)"
    higher_is_better = False
    compression = True

    def result(self, stats: PassStats) -> float | None:
        return _ratio(stats.tokens, stats.words) if stats.has_words else None


class ContinuedWords(Metric):
    name = "continued_words"
    label = "cont. words"
    unit = "share of words"
    definition = ("Share of whitespace-separated words split into two or more tokens; a token belongs to every word "
                  "its character span overlaps. n/a under the same rule as fertility.")
    source = "Rust et al. 2021, 'proportion of continued words'"
    higher_is_better = False
    compression = True
    display = ".1%"

    def __init__(self, tokenizer: Any):
        super().__init__(tokenizer)
        self.words = 0
        self.continued = 0

    def prepare_chunk(self, chunk: Any) -> None:
        chunk.tokens_per_word()

    def update_chunk(self, chunk: Any) -> None:
        tpw = chunk.tokens_per_word()
        self.words += int(tpw.size)
        self.continued += int(np.count_nonzero(tpw >= 2))

    def result(self, stats: PassStats) -> float | None:
        return _ratio(self.continued, self.words) if stats.has_words else None

    def merge(self, other: "ContinuedWords") -> "ContinuedWords":
        return _summed(self, other, "words", "continued")


def tokens_per_word(word_spans: Sequence[tuple[int, int]], offsets: np.ndarray) -> np.ndarray:
    """Number of tokens overlapping each word.

    Parameters
    ----------
    word_spans : sequence of (start, end)
        Sorted, non-overlapping ``[start, end)`` spans of the words (code points).
    offsets : ndarray of int64, shape (n_tokens, 2)
        The tokens' ``[start, end)`` spans; empty spans overlap nothing.

    Returns
    -------
    ndarray of int64, shape (n_words,)
        Token ``t`` counts for word ``w`` when ``t.start < w.end`` and ``t.end > w.start``.
    """
    ws = np.fromiter((s for s, _ in word_spans), np.int64, len(word_spans))
    we = np.fromiter((e for _, e in word_spans), np.int64, len(word_spans))
    ts, te = offsets[:, 0], offsets[:, 1]
    first = np.searchsorted(we, ts, side="right")  # first word ending after the token starts
    last = np.searchsorted(ws, te, side="left") - 1  # last word starting before the token ends
    ok = (te > ts) & (first <= last)
    n = len(word_spans) + 1
    diff = np.bincount(first[ok], minlength=n) - np.bincount(last[ok] + 1, minlength=n)
    return np.cumsum(diff[:-1])


class UnkRate(Metric):
    name = "unk_rate"
    label = "unk"
    unit = "share of tokens"
    definition = ("Tokens equal to the tokenizer's unknown token (attribute unk_token) divided by all tokens; 0 for "
                  "a tokenizer without one (byte-level tokenizers never need it).")
    source = "tokembed (a common sanity measure; Rust et al. 2021 report UNK rates too)"
    higher_is_better = False
    display = ".2%"

    def result(self, stats: PassStats) -> float | None:
        return _ratio(stats.unknown, stats.tokens)  # the shared pass counts the unknown tokens of every run


def is_partial_token(tokenizer: Any, token_id: int) -> bool:
    """Whether a token's bytes are not valid UTF-8 on their own (a piece of a character).

    Uses ``tokenizer.token_bytes(id) -> bytes`` when the tokenizer has it (the hook a byte-level tokenizer should
    provide); otherwise decodes the token alone and looks for U+FFFD (the replacement character byte-level decoders
    emit for an incomplete sequence) that is not in the token's own string.
    """
    token_bytes = getattr(tokenizer, "token_bytes", None)
    if callable(token_bytes):
        try:
            bytes(token_bytes(token_id)).decode("utf-8")
        except UnicodeDecodeError:
            return True
        return False
    try:
        text = tokenizer.decode([token_id])
    except UnicodeDecodeError:
        return True
    return "\ufffd" in text and "\ufffd" not in (tokenizer.id_to_token(token_id) or "")


class PartialCharRate(Metric):
    name = "partial_char_rate"
    label = "partial"
    unit = "share of tokens"
    definition = ("Tokens whose bytes are not valid UTF-8 on their own (pieces of a character, as byte-level BPE "
                  "produces for rare characters) divided by all tokens.")
    source = "tokembed; the byte-fallback pieces described for GPT-2's byte-level BPE (Radford et al. 2019)"
    higher_is_better = False
    display = ".2%"

    def __init__(self, tokenizer: Any):
        super().__init__(tokenizer)
        self.table = np.full(max(_vocab_size(tokenizer), 1), -1, np.int8)  # -1 unknown, 0 whole, 1 partial
        self.partial = 0

    def update_chunk(self, chunk: Any) -> None:
        ids = chunk.ids
        if not ids.size:
            return
        from ._kernels import id_range, table_sum, unclassified_ids

        ids = np.ascontiguousarray(ids, np.int32)
        lo, hi = id_range(ids)
        if lo < 0:
            raise TokembedError(f"the tokenizer produced a negative id ({int(lo)})")
        top = int(hi) + 1
        if top > self.table.size:
            self.table = np.concatenate([self.table, np.full(top - self.table.size, -1, np.int8)])
        partial, missing = table_sum(self.table, ids)
        if missing:
            out = np.empty(min(ids.size, self.table.size), np.int32)
            n = unclassified_ids(self.table, ids, np.zeros(self.table.size, np.bool_), out)
            for i in out[:n].tolist():
                self.table[i] = is_partial_token(self.tokenizer, i)
            partial, _ = table_sum(self.table, ids)
        self.partial += int(partial)

    def result(self, stats: PassStats) -> float | None:
        return _ratio(self.partial, stats.tokens)

    def merge(self, other: "PartialCharRate") -> "PartialCharRate":
        out = _summed(self, other, "partial")
        n = max(self.table.size, other.table.size)  # the cache of token kinds: what either side has looked up
        table = np.full(n, -1, np.int8)
        table[: self.table.size] = self.table
        table[: other.table.size] = np.maximum(table[: other.table.size], other.table)
        out.table = table
        return out


class RoundTrip(Metric):
    name = "round_trip"
    label = "round trip"
    unit = "share of documents"
    definition = "Share of documents with decode(encode(doc).ids) == doc exactly (whitespace and case included)."
    source = "tokembed; the round-trip property tested by tiktoken and Hugging Face tokenizers"
    higher_is_better = True
    display = ".1%"

    def __init__(self, tokenizer: Any):
        super().__init__(tokenizer)
        self.exact = 0
        self.documents = 0

    def prepare_chunk(self, chunk: Any) -> None:
        chunk.cached("round_trip", lambda: self._exact(chunk))

    def _exact(self, chunk: Any) -> int:
        if not chunk.n_docs:
            return 0
        texts = decode_documents(self.tokenizer, chunk.ids, chunk.token_indptr)
        return sum(map(operator.eq, texts, chunk.docs))

    def update_chunk(self, chunk: Any) -> None:
        self.documents += chunk.n_docs
        self.exact += chunk.cached("round_trip", lambda: self._exact(chunk))

    def result(self, stats: PassStats) -> float | None:
        return _ratio(self.exact, self.documents)

    def merge(self, other: "RoundTrip") -> "RoundTrip":
        return _summed(self, other, "exact", "documents")


def decode_documents(tokenizer: Any, ids: np.ndarray, token_indptr: np.ndarray) -> list[str]:
    """``decode`` of each document's ids: ``tokenizer.decode_batch(list of id arrays)`` in one call when the
    tokenizer has it (the name and meaning of Hugging Face's and tiktoken's), else one ``decode`` per document."""
    parts = np.split(ids, token_indptr[1:-1]) if token_indptr.size > 1 else []
    batch = getattr(tokenizer, "decode_batch", None)
    if callable(batch):
        return list(batch(parts))
    return [tokenizer.decode(p) for p in parts]


class _IdCountingMetric(Metric):
    """A metric computed from how often each token id occurs (``self.counts``)."""

    def __init__(self, tokenizer: Any):
        super().__init__(tokenizer)
        self.counts = _IdCounts(_vocab_size(tokenizer))

    def update_chunk(self, chunk: Any) -> None:
        self.counts.add(chunk.ids)

    def merge(self, other: "_IdCountingMetric") -> "_IdCountingMetric":
        out = self.copy()
        out.counts = self.counts.merged(other.counts)
        return out


class VocabUtilization(_IdCountingMetric):
    name = "vocab_utilization"
    label = "vocab used"
    unit = "share of the vocabulary"
    definition = ("Distinct token ids that appear in the corpus divided by the vocabulary size (special tokens "
                  "included).")
    source = "tokembed; reported as 'vocabulary utilization' in multilingual tokenizer studies"
    higher_is_better = True
    display = ".1%"

    def result(self, stats: PassStats) -> float | None:
        return _ratio(int(np.count_nonzero(self.counts.flush())), _vocab_size(self.tokenizer))


def renyi_efficiency(counts: np.ndarray, vocab_size: int, alpha: float = RENYI_ALPHA) -> float | None:
    """Renyi efficiency of a unigram distribution of tokens.

    ``H_a(p) / log |V|`` with ``H_a(p) = log(sum_i p_i ** a) / (1 - a)``, ``p_i = counts_i / sum(counts)``, and
    ``|V|`` the vocabulary size (Zouhar et al. 2023, eq. for efficiency; the logarithm base cancels). For ``a = 1``
    it is the Shannon efficiency. None when there is no token or ``|V| < 2``.

    Parameters
    ----------
    counts : array of int, shape (n,)
        Occurrences of each token type (zeros are ignored).
    vocab_size : int
        ``|V|``. The reference implementation (tokenization-scorer) defaults to the number of types observed; the
        paper, and tokembed, use the vocabulary.
    alpha : float, default 2.5
    """
    counts = np.asarray(counts, dtype=np.float64)
    total = counts.sum()
    if total <= 0 or vocab_size < 2:
        return None
    p = counts[counts > 0] / total
    if alpha == 1:
        entropy = float(-(p * np.log(p)).sum())
    else:
        entropy = float(np.log((p ** alpha).sum()) / (1 - alpha))
    return entropy / math.log(vocab_size)


class RenyiEfficiency(_IdCountingMetric):
    name = "renyi_efficiency"
    label = "Rényi eff."
    unit = "ratio in [0, 1]"
    definition = ("Renyi entropy of order 2.5 of the token unigram distribution divided by log(vocabulary size): "
                  "penalises both very frequent and very rare tokens.")
    source = "Zouhar et al. 2023, 'Tokenization and the Noiseless Channel' (ACL); alpha = 2.5"
    higher_is_better = True
    display = ".4f"

    def result(self, stats: PassStats) -> float | None:
        return renyi_efficiency(self.counts.flush(), _vocab_size(self.tokenizer), RENYI_ALPHA)


class Throughput(Metric):
    name = "throughput"
    label = "MB/s"
    unit = "MB/s (10^6 UTF-8 bytes per second)"
    definition = ("UTF-8 megabytes of the corpus divided by the wall time spent encoding (encode_ids of chunks of "
                  "256 documents, summed over chunks: per thread); the metrics' own work is not timed.")
    source = "tokembed; tiktoken and Hugging Face tokenizers report encoding speed the same way"
    higher_is_better = True
    display = ".2f"
    timing = True

    def result(self, stats: PassStats) -> float | None:
        return stats.bytes / 1e6 / stats.seconds if stats.seconds > 0 and stats.bytes else None


def determinism_sample(start: int, n: int) -> np.ndarray:
    """Positions ``i`` in ``[0, n)`` of a chunk starting at document ``start`` that the determinism check
    re-encodes: document ``start + i`` is among the first :data:`SAMPLE_HEAD` or a multiple of
    :data:`SAMPLE_EVERY`. int64, shape (k,)."""
    g = np.arange(start, start + n, dtype=np.int64)
    return np.flatnonzero((g < SAMPLE_HEAD) | (g % SAMPLE_EVERY == 0))


def within_budget(candidates: np.ndarray, characters: np.ndarray, seen: int, sampled: int) -> tuple[list[int], int]:
    """The positions of ``candidates`` (from :func:`determinism_sample`) that the check takes, in order, and the
    sample's code points after them: position ``i`` is taken when ``sampled + characters[i]`` (the sample with it)
    is at most :data:`SAMPLE_FLOOR_CHARS` plus ``(seen + characters[:i + 1].sum()) // SAMPLE_EVERY``, or when
    nothing was sampled yet (the first document is always checked).

    Parameters
    ----------
    candidates : int64 array, shape (k,)
        Positions in the chunk, increasing.
    characters : int64 array, shape (n_docs,)
        Code points of each document of the chunk.
    seen, sampled : int
        Code points of the documents measured before the chunk, and of the sampled ones among them.
    """
    through = seen + np.cumsum(characters)
    picked = []
    for i in candidates.tolist():
        n = int(characters[i])
        if sampled == 0 or sampled + n <= SAMPLE_FLOOR_CHARS + int(through[i]) // SAMPLE_EVERY:
            picked.append(i)
            sampled += n
    return picked, sampled


def ids_digest_stream(ids: np.ndarray, token_indptr: np.ndarray) -> bytes:
    """The bytes hashed for a chunk: per document, its token count (int64, little endian) then its ids (int32,
    little endian), documents in order; so the digest does not depend on how the corpus was cut into chunks."""
    n = token_indptr.size - 1
    lengths = np.diff(token_indptr).astype("<i8")
    buf = np.empty(ids.size + 2 * n, "<i4")
    head = token_indptr[:-1] + 2 * np.arange(n, dtype=np.int64)
    words = lengths.view("<i4").reshape(n, 2)
    buf[head], buf[head + 1] = words[:, 0], words[:, 1]
    body = np.ones(buf.size, bool)
    body[head] = body[head + 1] = False
    buf[body] = ids
    return buf.tobytes()


class Deterministic(Metric):
    name = "deterministic"
    label = "determ."
    unit = "yes / no"
    definition = ("Yes when a sample of the documents (the first 32 and every 64th, by position, within a budget of "
                  "65,536 code points plus 1/64 of those measured) encodes to the same "
                  "ids in the measuring pass (encode_ids of chunks, on threads), again one by one with encode, and "
                  "again in one encode_batch call in reverse order.")
    source = "tokembed"
    higher_is_better = True

    def __init__(self, tokenizer: Any):
        super().__init__(tokenizer)
        self.first: Any = hashlib.blake2b(digest_size=16)
        self.equal = True
        self.checked = 0
        self.seen_chars = 0
        self.sample_chars = 0

    def prepare_chunk(self, chunk: Any) -> None:
        chunk.cached("ids_digest_stream", lambda: ids_digest_stream(chunk.ids, chunk.token_indptr))

    def update_chunk(self, chunk: Any) -> None:
        self.first.update(chunk.cached("ids_digest_stream", lambda: ids_digest_stream(chunk.ids, chunk.token_indptr)))
        candidates = determinism_sample(chunk.start, chunk.n_docs)
        picked, self.sample_chars = within_budget(candidates, chunk.characters, self.seen_chars, self.sample_chars)
        self.seen_chars += int(chunk.characters.sum())
        if not picked:
            return
        docs = [chunk.docs[i] for i in picked]
        seen = [chunk.doc_ids(i) for i in picked]
        single = [self.tokenizer.encode(d, add_special_tokens=False).ids for d in docs]
        batch = [e.ids for e in self.tokenizer.encode_batch(docs[::-1], add_special_tokens=False)][::-1]
        same = all(np.array_equal(a, b) and np.array_equal(a, c) for a, b, c in zip(seen, single, batch))
        self.equal = self.equal and same
        self.checked += len(picked)

    @staticmethod
    def _digest(h: Any) -> bytes:
        return h if isinstance(h, bytes) else h.digest()

    def result(self, stats: PassStats) -> bool:
        return bool(self.equal)

    def extras(self) -> dict[str, Any]:
        """The BLAKE2b of the measuring pass's ids (after a merge: of the parts' digests, in corpus order) and
        how many documents were encoded again."""
        return {"ids_blake2b": self._digest(self.first).hex(), "sample_documents": int(self.checked)}

    def merge(self, other: "Deterministic") -> "Deterministic":
        out = _summed(self, other, "checked", "seen_chars", "sample_chars")
        out.equal = self.equal and other.equal
        out.first = hashlib.blake2b(self._digest(self.first) + self._digest(other.first), digest_size=16).digest()
        return out

    def __getstate__(self) -> dict[str, Any]:  # a hash object cannot be pickled: its digest travels
        state = super().__getstate__()
        state["first"] = self._digest(self.first)
        return state


class _Premium(ParallelMetric):
    unit = "tokens / reference tokens"
    higher_is_better = False
    compression = True
    source = "Petrov et al. 2023, 'Language Model Tokenizers Introduce Unfairness Between Languages' (NeurIPS)"

    def __init__(self, tokenizer: Any):
        super().__init__(tokenizer)
        self.counts: list[np.ndarray] = []

    def update_chunk(self, chunk: Any) -> None:
        self.counts.append(chunk.lengths)

    def chapter_tokens(self) -> np.ndarray:
        """Tokens of each chapter, in order: float64, shape (n_chapters,)."""
        return np.concatenate(self.counts).astype(np.float64) if self.counts else np.zeros(0)

    @staticmethod
    def ratios(runs: dict[str, "_Premium"], reference: str) -> dict[str, np.ndarray]:
        """Per language, ``tokens(lang, i) / tokens(reference, i)`` for each chapter ``i`` the reference encodes
        into at least one token.

        Raises
        ------
        TokembedError
            If the reference is missing or the languages have different numbers of chapters.
        """
        check_parallel({lang: run.chapter_tokens().size for lang, run in runs.items()}, reference, "premium")
        ref = runs[reference].chapter_tokens()
        out = {}
        for lang, run in runs.items():
            counts = run.chapter_tokens()
            keep = ref > 0
            out[lang] = counts[keep] / ref[keep]
        return out


class PremiumMedian(_Premium):
    name = "premium_median"
    label = "premium"
    definition = ("Tokenization premium: for each aligned chapter, tokens in this language divided by tokens in the "
                  "reference language; the median over chapters (1 for the reference).")

    @classmethod
    def combine(cls, runs: dict[str, ParallelMetric], reference: str) -> dict[str, float | None]:
        return {k: float(np.median(v)) if v.size else None for k, v in cls.ratios(runs, reference).items()}


class PremiumMean(_Premium):
    name = "premium_mean"
    label = "premium mean"
    definition = "Tokenization premium as premium_median, averaged over chapters (arithmetic mean)."

    @classmethod
    def combine(cls, runs: dict[str, ParallelMetric], reference: str) -> dict[str, float | None]:
        return {k: float(np.mean(v)) if v.size else None for k, v in cls.ratios(runs, reference).items()}


#: The built-in metrics, in the order tables show them.
BUILTIN_METRICS: tuple[type[Metric], ...] = (
    VocabSize, Tokens, CharsPerToken, BytesPerToken, Fertility, ContinuedWords, Strr, UnkRate, PartialCharRate,
    RoundTrip, VocabUtilization, RenyiEfficiency, PremiumMedian, PremiumMean, PremiumGini, Throughput, Deterministic,
    BoundaryPrecision, BoundaryRecall, BoundaryF1,
)


@hookimpl
def tokembed_register_metrics() -> list[type]:
    """The core's own implementation of the hook: the built-in metrics."""
    return list(BUILTIN_METRICS)
