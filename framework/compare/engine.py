"""The comparison engine: every metric for every (tokenizer, corpus), in one encoding pass per pair and chunk.

:func:`compare_tokenizers` reads each corpus once per pass, in chunks, and encodes every chunk with every tokenizer
(one :class:`~tokembed.metrics.MetricRun` per pair), so memory stays bounded by a chunk whatever the corpus size. It
returns a :class:`Comparison`, which renders as a terminal table, JSON, CSV, Markdown and a self-contained HTML
report (:mod:`tokembed.compare.report`, which needs matplotlib: ``pip install 'tokembed[report]'``).

A parallel set (the same chapters in several languages, one of them the reference) adds each language as a corpus
and the tokenization premium (Petrov et al. 2023) per language.

Outputs are deterministic apart from the timing figures (throughput and encoding seconds).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Iterable, Mapping

import numpy as np

from ..corpus import ParallelSet
from ..errors import CorpusError, NotFittedError, PluginError, TokembedError
from ..metrics import MetricRun, clean_value, default_workers, iter_chunks, resolve_metrics
from .tables import Comparison, Result, Sample, _cut, _json_safe

__all__ = ["compare_tokenizers"]

_SAMPLE_MIN, _SAMPLE_MAX = 20, 240  # characters of a sample sentence
_MAX_CANDIDATES = 2000


def _as_docs(name: str, docs: Any) -> Any:
    """A re-iterable source of documents: lists, tuples and Corpus objects stay; one-shot iterators become lists."""
    if isinstance(docs, (str, bytes)):
        raise TokembedError(f"corpus {name!r}: expected a list of documents or a Corpus, got one {type(docs).__name__}")
    try:
        it = iter(docs)
    except TypeError:
        raise TokembedError(f"corpus {name!r}: expected a list of documents or a Corpus, "
                            f"got {type(docs).__name__}") from None
    return list(docs) if it is docs else docs


class _TokenLengths:
    """Histogram of token lengths (code points of each token's offset span)."""

    def __init__(self) -> None:
        self.counts: Counter = Counter()

    def update(self, doc: str, encoding: Any) -> None:
        if len(encoding):
            lengths = (encoding.offsets[:, 1] - encoding.offsets[:, 0]).tolist()
            self.counts.update(lengths)

    def update_chunk(self, chunk: Any) -> None:
        """The same from a chunk's arrays (:class:`tokembed.metrics.Chunk`), without a loop per document."""
        if chunk.spans.size:
            values, counts = np.unique(chunk.spans[:, 1] - chunk.spans[:, 0], return_counts=True)
            self.counts.update(dict(zip(values.tolist(), counts.tolist())))


class _SampleCollector:
    """Candidate sample sentences: lines of 20 to 240 characters (the first 2,000), then an even spread of them."""

    def __init__(self, k: int):
        self.k = k
        self.candidates: list[str] = []
        self.fallback: list[str] = []

    def add(self, docs: Iterable[str]) -> None:
        if self.k <= 0 or len(self.candidates) >= _MAX_CANDIDATES:
            return
        for doc in docs:
            for line in doc.splitlines():
                text = line.strip()
                if _SAMPLE_MIN <= len(text) <= _SAMPLE_MAX:
                    self.candidates.append(text)
                    if len(self.candidates) >= _MAX_CANDIDATES:
                        return
                elif text and len(self.fallback) < self.k:
                    self.fallback.append(_cut(text, _SAMPLE_MAX))

    def pick(self) -> list[str]:
        n, k = len(self.candidates), self.k
        if n >= k:
            return [self.candidates[(i * n) // k] for i in range(k)]
        return self.candidates + self.fallback[: k - n]


# ---------------------------------------------------------------------------------------------------------------
# the engine
# ---------------------------------------------------------------------------------------------------------------
def _feed_runs(runs: list[MetricRun], docs: Iterable[str], collector: Any, workers: int) -> None:
    """Read ``docs`` once in chunks; each chunk is encoded for every run on ``workers`` threads
    (:meth:`MetricRun.prepare <tokembed.metrics.MetricRun.prepare>`, as :meth:`~tokembed.metrics.MetricRun.feed_all`
    does for one run) and fed to the runs and ``collector`` in document order: the results equal those of one
    thread."""
    if workers <= 1:
        for chunk in iter_chunks(docs):
            collector.add(chunk)
            for run in runs:
                run.feed(chunk)
        return
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor

    def flush(prepared: list) -> None:
        for run, future in prepared:
            run.add(future.result())

    start = 0
    with ThreadPoolExecutor(max_workers=workers) as pool:
        pending: deque = deque()
        for chunk in iter_chunks(docs):
            collector.add(chunk)
            pending.append([(run, pool.submit(run.prepare, chunk, start)) for run in runs])
            start += len(chunk)
            if len(pending) >= 2 * workers:
                flush(pending.popleft())
        while pending:
            flush(pending.popleft())


def compare_tokenizers(
    tokenizers: Mapping[str, Any],
    corpora: Mapping[str, Any],
    *,
    parallel: ParallelSet | Mapping[str, Any] | None = None,
    metrics: Iterable[str | type] | None = None,
    registry: Any = None,
    samples: int = 5,
    origins: Mapping[str, str] | None = None,
) -> Comparison:
    """Compute every metric for every tokenizer on every corpus.

    Each corpus is read once, in chunks of 256 documents; each chunk is encoded once per tokenizer
    (``encode_ids``, on :func:`~tokembed.metrics.default_workers` threads) and the arrays feed every metric in
    document order, so the results do not depend on the threads. A metric with
    ``repeat`` (``deterministic``) adds a second pass that encodes each document again with ``encode``.

    Parameters
    ----------
    tokenizers : mapping of str to Tokenizer
        Label -> fitted tokenizer, in table order.
    corpora : mapping of str to (list of str or Corpus)
        Name -> documents. A one-shot iterator is read into a list; a :class:`~tokembed.corpus.Corpus` streams.
    parallel : ParallelSet or dict, optional
        ``{"reference": "en", "texts": {"en": [chapters], "de": [chapters], ...}}``: each language becomes a corpus
        named by its code (its chapters are its documents), and the parallel metrics (``premium_median``,
        ``premium_mean``) are computed per tokenizer and language against the reference.
    metrics : iterable of str or Metric subclasses, optional
        Default: every registered metric (built-in and from plugins), timing ones included.
    registry : Registry, optional
        Where metric names resolve (default: a fresh :func:`tokembed.build_registry`).
    samples : int, default 5
        Sample sentences per corpus for the report's segmentation view (lines of 20-240 characters, spread over
        the first 2,000 such lines).
    origins : mapping of str to str, optional
        Label -> where the tokenizer comes from, in words ("trained on ...", "loaded from ..."), shown by the
        report (``tokembed compare`` gives it).

    Returns
    -------
    Comparison

    Raises
    ------
    TokembedError
        If there is no tokenizer or corpus, a label is not a non-empty string, a corpus name clashes with a
        language of the parallel set, or the parallel set is not aligned.
    NotFittedError
        If a tokenizer is not fitted (naming its label).
    CorpusError
        If a corpus holds no document.
    PluginError
        If a metric fails (naming it).
    """
    tokenizers = dict(tokenizers)
    if not tokenizers:
        raise TokembedError("compare: give at least one tokenizer")
    for label, tok in tokenizers.items():
        if not isinstance(label, str) or not label:
            raise TokembedError(f"compare: tokenizer labels must be non-empty strings, got {label!r}")
        if not callable(getattr(tok, "encode_batch", None)):
            raise TokembedError(f"compare: {label!r} is not a tokenizer ({type(tok).__name__})")
        if hasattr(tok, "is_fitted") and not tok.is_fitted():
            raise NotFittedError(f"compare: tokenizer {label!r} is not fitted; fit or load it first")
    sources: dict[str, Any] = {}
    for name, docs in dict(corpora).items():
        if not isinstance(name, str) or not name:
            raise TokembedError(f"compare: corpus names must be non-empty strings, got {name!r}")
        sources[name] = _as_docs(name, docs)
    pset = ParallelSet.coerce(parallel) if parallel is not None else None
    if pset is not None:
        clash = sorted(set(sources) & set(pset.texts))
        if clash:
            raise TokembedError(f"compare: corpus name(s) {', '.join(map(repr, clash))} are also languages of the "
                                "parallel set; rename the corpus")
        sources.update(pset.texts)
    if not sources:
        raise TokembedError("compare: give at least one corpus (or a parallel set)")
    classes = resolve_metrics(metrics, registry)
    if samples < 0:
        raise TokembedError(f"compare: samples must be >= 0, got {samples}")

    results: list[Result] = []
    corpus_info: dict[str, dict[str, Any]] = {}
    sample_map: dict[str, list[Sample]] = {}
    parallel_runs: dict[str, dict[str, MetricRun]] = {}  # tokenizer -> language -> run
    for name, docs in sources.items():
        is_parallel = pset is not None and name in pset.texts
        scoped = [c for c in classes if c.scope == "corpus" or (is_parallel and c.scope == "parallel")]
        lengths = {label: _TokenLengths() for label in tokenizers}
        runs = {label: MetricRun(tok, scoped, observers=[lengths[label]]) for label, tok in tokenizers.items()}
        collector = _SampleCollector(samples)
        _feed_runs(list(runs.values()), docs, collector, default_workers())
        first = next(iter(runs.values()))
        if first.stats.documents == 0:
            raise CorpusError(f"compare: corpus {name!r} holds no document")
        for run in runs.values():
            if run.needs_repeat:
                run.feed_repeat(docs)
        stats = first.stats.as_dict()
        corpus_info[name] = {k: stats[k] for k in ("documents", "characters", "bytes", "words")}
        corpus_info[name]["parallel"] = is_parallel
        for label, run in runs.items():
            values = run.results()
            values = {c.name: values.get(c.name) for c in classes}
            # the rule on compression metrics needs the unknown share even when unk_rate is not requested: the
            # measuring pass always counts unknown tokens
            unk = clean_value(run.stats.unknown / run.stats.tokens) if run.stats.tokens else None
            results.append(Result(label, name, values, run.extras(), dict(sorted(lengths[label].counts.items())),
                                  run.stats.seconds, unk))
            if is_parallel:
                parallel_runs.setdefault(label, {})[name] = run
        sample_map[name] = [
            Sample(name, text, {label: _segments(tok, text) for label, tok in tokenizers.items()})
            for text in collector.pick()
        ]

    if pset is not None:
        for cls in (c for c in classes if c.scope == "parallel"):
            for label, by_lang in parallel_runs.items():
                per_lang = MetricRun._call(cls, "combine", lambda: cls.combine(
                    {lang: run.metrics[cls.name] for lang, run in by_lang.items()}, pset.reference))
                for r in results:
                    if r.tokenizer == label and r.corpus in per_lang:
                        r.values[cls.name] = _clean_value(cls, per_lang[r.corpus])

    tok_info = {
        label: {"type": tokenizer_type(tok),
                "params": json.loads(json.dumps(_json_safe(tok.get_params())))
                if callable(getattr(tok, "get_params", None)) else {},
                "vocab_size": int(tok.get_vocab_size())}
        for label, tok in tokenizers.items()
    }
    for label, origin in (origins or {}).items():
        if label in tok_info and origin:
            tok_info[label]["origin"] = str(origin)
    parallel_info = None
    if pset is not None:
        parallel_info = {"name": pset.name, "reference": pset.reference, "languages": list(pset.texts),
                         "chapters": len(pset.texts[pset.reference]),
                         "same_as_reference": same_as_reference(pset.texts, pset.reference)}
    return Comparison(tok_info, corpus_info, {c.name: c.describe() for c in classes}, results, sample_map,
                      parallel_info)


def same_as_reference(texts: Mapping[str, list[str]], reference: str) -> dict[str, float | None]:
    """Language -> share of its prose identical to the reference's, for each language but the reference: the
    characters of its lines longer than 80 characters that are also a line of the same chapter in the reference,
    over the characters of all such lines (the measure of ``untranslated_share`` in the ``multilingual`` dataset's
    manifest); None for a language without such lines. A language whose text is mostly the reference's has a
    premium near 1 that says nothing about the language."""
    from ..datasets._builders import untranslated_chars

    out: dict[str, float | None] = {}
    for lang, chapters in texts.items():
        if lang == reference:
            continue
        same = total = 0
        for text, ref in zip(chapters, texts[reference]):
            s, t = untranslated_chars(text, ref)
            same, total = same + s, total + t
        out[lang] = round(same / total, 4) if total else None
    return out


def tokenizer_type(tok: Any) -> str:
    """What the report calls a tokenizer's type: its plugin name, or what the model it holds is when that differs.

    A tokenizer that reads SentencePiece files (it has ``from_sentencepiece``) and whose learned ``model_type_``
    is not its plugin name (a SentencePiece BPE model such as Mistral's, encoded by the unigram plugin) is shown as
    ``"sentencepiece bpe"``.
    """
    name = getattr(tok, "name", "") or type(tok).__name__
    model_type = getattr(tok, "model_type_", None)
    if isinstance(model_type, str) and model_type and model_type != name:
        return f"sentencepiece {model_type}" if hasattr(tok, "from_sentencepiece") else f"{name} ({model_type} model)"
    return name


def _clean_value(cls: type, value: Any) -> Any:
    try:
        return clean_value(value)
    except TypeError as exc:
        raise PluginError(f"metric {cls.name!r} ({cls.__module__}:{cls.__qualname__}): {exc}") from None


def _segments(tokenizer: Any, text: str) -> list[tuple[str, int, int, int]]:
    """The sample's tokens ``(token, id, start, end)``; a piece of a character is written as its bytes."""
    enc = tokenizer.encode(text, add_special_tokens=False)
    spans = enc.offsets.tolist()
    out = []
    for k, (t, i, (s, e)) in enumerate(zip(enc.tokens, enc.ids.tolist(), spans)):
        shared = (k > 0 and spans[k - 1] == [s, e]) or (k + 1 < len(spans) and spans[k + 1] == [s, e])
        shown = str(t)
        if shared and e - s == 1:
            raw = _token_bytes(tokenizer, int(i))
            if raw is not None and _partial(raw):
                shown = "".join(f"<0x{b:02X}>" for b in raw)
        out.append((shown, int(i), int(s), int(e)))
    return out


def _token_bytes(tokenizer: Any, token_id: int) -> bytes | None:
    """The bytes a token stands for: ``token_bytes(id)`` or ``decode_bytes([id])`` when the tokenizer has one."""
    for name, arg in (("token_bytes", token_id), ("decode_bytes", [token_id])):
        fn = getattr(tokenizer, name, None)
        if callable(fn):
            try:
                return bytes(fn(arg))
            except Exception:
                return None
    return None


def _partial(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False
