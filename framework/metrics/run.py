"""Computing tokenizer metrics: each chunk of documents encoded ONCE into flat arrays
(:class:`~tokembed.metrics.chunk.Chunk`), the shared counts kept in :class:`~tokembed.metrics.base.PassStats`, and
every metric fed from that one pass (:class:`MetricRun`).

For one tokenizer and one corpus, :class:`MetricRun` encodes the documents in chunks of :data:`CHUNK_SIZE` with
``encode_ids(chunk, spans=True)`` (only that call is timed), derives the per-document counts and word spans in one
Numba pass (:func:`~tokembed.metrics.chunk.measure_chunk`), and hands the chunk to every metric's
:meth:`~tokembed.metrics.Metric.update_chunk`. Chunks can be prepared on threads (:meth:`MetricRun.feed_all`);
metrics always take them in document order, so the results do not depend on the number of threads. A metric on
the per-document path (:meth:`~tokembed.metrics.Metric.uses_documents`) is fed ``(doc, encoding)`` pairs from an
extra ``encode_batch`` of each chunk, with a :class:`~tokembed.metrics.base.SlowMetricWarning`.

Which metrics exist comes from a registry, always passed in (:func:`tokembed.build_registry` builds one): the
built-ins and every plugin's ``tokembed_register_metrics`` hook.
"""

from __future__ import annotations

import os
import warnings
from collections import deque
from typing import Any, Iterable, Iterator, Sequence

from ..errors import PluginError, TokembedError, UnknownComponentError
from .base import Metric, PassStats, SlowMetricWarning, clean_value, unknown_id

__all__ = ["MetricRun", "MeasureDocuments", "iter_chunks", "metrics_of", "registered_metrics", "resolve_metrics",
           "run_metrics", "tokenizer_metrics", "default_workers", "CHUNK_SIZE"]

#: Documents per chunk (one ``encode_ids`` call) in :class:`MetricRun`.
CHUNK_SIZE = 256

_COUNTS = ("documents", "characters", "bytes", "words", "tokens", "letters", "unspaced_letters", "unknown")


def _who(cls: type) -> str:
    return f"metric {getattr(cls, 'name', '?')!r} ({cls.__module__}:{cls.__qualname__})"


def default_workers() -> int:
    """Threads that prepare chunks when none is given: the CPUs, at most 4."""
    return max(1, min(4, os.cpu_count() or 1))


class MetricRun:
    """Encode the documents of one corpus with one tokenizer, once, and feed every metric.

    Parameters
    ----------
    tokenizer : tokembed.Tokenizer
        A fitted tokenizer.
    metrics : sequence of Metric subclasses
        Instantiated here as ``cls(tokenizer)``. A metric on the per-document path is measured with a
        :class:`~tokembed.metrics.base.SlowMetricWarning`.
    observers : sequence of objects with ``update_chunk(chunk)`` (or ``update(doc, encoding)``, slow)
        Extra accumulators fed the same chunks (the comparison's token-length histogram).

    Raises
    ------
    PluginError
        When a metric raises anything else than a :class:`TokembedError` (naming the metric and its class).
    """

    def __init__(self, tokenizer: Any, metrics: Sequence[type[Metric]], observers: Sequence[Any] = ()):
        self.tokenizer = tokenizer
        self.metrics: dict[str, Metric] = {}
        for cls in metrics:
            self.metrics[cls.name] = self._call(cls, "__init__", lambda: cls(tokenizer))
        self.observers = list(observers)
        slow = [m.name for m in self.metrics.values() if type(m).uses_documents()]
        if slow:
            warnings.warn(f"metric(s) {', '.join(slow)} measured on the slow per-document path (update(doc, "
                          "encoding): every chunk encoded a second time into Encoding objects); implement "
                          "update_chunk(chunk) to measure on arrays", SlowMetricWarning, stacklevel=2)
        self._unk_id = unknown_id(tokenizer)
        self._counts = dict.fromkeys(_COUNTS, 0)
        self._seconds = 0.0

    @staticmethod
    def _call(cls: type, what: str, fn: Any) -> Any:
        try:
            return fn()
        except TokembedError:
            raise
        except Exception as exc:
            raise PluginError(f"{_who(cls)} failed in {what}: {type(exc).__name__}: {exc}") from exc

    @property
    def needs_repeat(self) -> bool:
        """True when a metric asks for the second, per-document pass (``repeat``)."""
        return any(m.repeat for m in self.metrics.values())

    # -- feeding ---------------------------------------------------------------------------------------------
    def prepare(self, docs: Sequence[str], start: int | None = None) -> Any:
        """The :class:`~tokembed.metrics.chunk.Chunk` of ``docs`` (encoded once, timed), with each metric's
        :meth:`~tokembed.metrics.Metric.prepare_chunk` done, without feeding it: thread-safe when the tokenizer's
        ``encode_ids`` and ``decode_batch`` are. ``start``: index of ``docs[0]`` (default: the
        documents fed so far)."""
        from .chunk import measure_chunk

        start = self._counts["documents"] if start is None else start
        chunk = measure_chunk(self.tokenizer, docs, start, self._unk_id)
        for metric in self.metrics.values():
            if not type(metric).uses_documents():
                self._call(type(metric), "prepare_chunk", lambda: metric.prepare_chunk(chunk))
        return chunk

    def add(self, chunk: Any) -> None:
        """Feed a prepared chunk to the shared counts, every metric and every observer (chunks in document order)."""
        for key, value in chunk.totals().items():
            self._counts[key] += value
        self._seconds += chunk.seconds
        pairs = None
        for metric in self.metrics.values():
            if type(metric).uses_documents():
                pairs = pairs if pairs is not None else self._pairs(chunk)
                self._call(type(metric), "update", lambda: [metric.update(doc, enc) for doc, enc in pairs])
            else:
                self._call(type(metric), "update_chunk", lambda: metric.update_chunk(chunk))
        for obs in self.observers:
            if callable(getattr(obs, "update_chunk", None)):
                obs.update_chunk(chunk)
            else:
                pairs = pairs if pairs is not None else self._pairs(chunk)
                for doc, enc in pairs:
                    obs.update(doc, enc)

    def _pairs(self, chunk: Any) -> list:
        encodings = self.tokenizer.encode_batch(chunk.docs, add_special_tokens=False)
        return list(zip(chunk.docs, encodings))

    def feed(self, docs: Sequence[str]) -> Any:
        """Encode ``docs`` (timed), count them and update every metric; returns the chunk."""
        chunk = self.prepare(list(docs))
        self.add(chunk)
        return chunk

    def feed_all(self, docs: Iterable[str], workers: int | None = None, size: int = CHUNK_SIZE) -> None:
        """Feed every document, in chunks of ``size``, the chunks prepared on ``workers`` threads (default
        :func:`default_workers`) and fed in document order: the results equal those of one thread."""
        for chunk in self._prepared(docs, workers or default_workers(), size):
            self.add(chunk)

    def _prepared(self, docs: Iterable[str], workers: int, size: int) -> Iterator[Any]:
        start = self._counts["documents"]
        if workers <= 1:
            for part in iter_chunks(docs, size):
                chunk = self.prepare(part, start)
                start += len(part)
                yield chunk
            return
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=workers) as pool:
            pending: deque = deque()
            for part in iter_chunks(docs, size):
                pending.append(pool.submit(self.prepare, part, start))
                start += len(part)
                if len(pending) >= 2 * workers:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()

    def feed_repeat(self, docs: Iterable[str]) -> None:
        """The second pass, for a metric with ``repeat = True``: encode each document again with ``encode`` and
        call ``update_repeat`` (per document: the slow path)."""
        repeaters = [m for m in self.metrics.values() if m.repeat]
        for chunk in iter_chunks(docs):
            pairs = [(doc, self.tokenizer.encode(doc, add_special_tokens=False)) for doc in chunk]
            for metric in repeaters:
                self._call(type(metric), "update_repeat", lambda: [metric.update_repeat(d, e) for d, e in pairs])

    @property
    def stats(self) -> PassStats:
        return PassStats(**self._counts, seconds=self._seconds)

    def results(self) -> dict[str, Any]:
        """Metric name -> value (floats rounded to 6 decimals; NaN and infinities become None)."""
        stats = self.stats
        out = {}
        for name, metric in self.metrics.items():
            value = self._call(type(metric), "result", lambda: metric.result(stats))
            try:
                out[name] = clean_value(value)
            except TypeError as exc:
                raise PluginError(f"{_who(type(metric))}: {exc}") from None
        return out

    # -- on the corpus-statistics engine ---------------------------------------------------------------------
    def mergeable(self) -> bool:
        """True when every metric merges (:meth:`tokembed.metrics.Metric.merge`) and no observer is attached."""
        return not self.observers and all(m.mergeable() for m in self.metrics.values())

    def merge(self, other: "MetricRun") -> "MetricRun":
        """A new run holding this run's documents followed by ``other``'s (same tokenizer and metrics; neither
        changed): the shared counts added, each metric merged. ``results`` of the merge equal those of one run
        over all the documents.

        Raises
        ------
        PluginError
            When a metric's merge raises anything else than a TokembedError."""
        out = object.__new__(MetricRun)
        vars(out).update(vars(self))  # not copy.copy: that goes through __getstate__, which drops the tokenizer
        out._counts = {k: v + other._counts.get(k, 0) for k, v in self._counts.items()}
        out._seconds = self._seconds + other._seconds
        out.metrics = {}
        for name, metric in self.metrics.items():
            out.metrics[name] = self._call(type(metric), "merge", lambda: metric.merge(other.metrics[name]))
        return out

    def attach(self, tokenizer: Any) -> "MetricRun":
        """Give the run and its metrics ``tokenizer`` again after a trip between processes (which drops it)."""
        self.tokenizer = tokenizer
        for metric in self.metrics.values():
            metric.tokenizer = tokenizer
        return self

    def __getstate__(self) -> dict[str, Any]:
        state = dict(vars(self))
        state["tokenizer"] = None
        return state

    def extras(self) -> dict[str, dict[str, Any]]:
        """Metric name -> its :meth:`Metric.extras` (metrics without extras left out)."""
        out = {}
        for name, metric in self.metrics.items():
            extra = self._call(type(metric), "extras", metric.extras)
            if extra:
                out[name] = dict(extra)
        return out


def iter_chunks(docs: Iterable[str], size: int = CHUNK_SIZE) -> Iterable[list[str]]:
    """Consecutive lists of at most ``size`` documents."""
    chunk: list[str] = []
    for doc in docs:
        chunk.append(doc)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


# ---------------------------------------------------------------------------------------------------------------
# choosing metrics
# ---------------------------------------------------------------------------------------------------------------
def registered_metrics(registry: Any = None) -> list[type[Metric]]:
    """Every metric class of ``registry`` (a :class:`tokembed.registry.Registry`), built-ins first, in registration
    order; without a registry, the built-in metrics only (:data:`tokembed.metrics.builtin.BUILTIN_METRICS`)."""
    if registry is None:
        from .builtin import BUILTIN_METRICS

        return list(BUILTIN_METRICS)
    return [info.cls for info in registry.metrics.values()]


def resolve_metrics(metrics: Iterable[str | type[Metric]] | None = None, registry: Any = None) -> list[type[Metric]]:
    """The metric classes to compute: the default set (``None``: every registered one except those on the slow
    per-document path, :meth:`~tokembed.metrics.Metric.uses_documents`, or with a second pass, ``repeat``: they run
    only when named), or the names / classes given. Names are looked up in ``registry`` (a
    :class:`tokembed.registry.Registry`); without one, among the built-in metrics.

    Raises
    ------
    UnknownComponentError
        If a name is not registered (the message lists the available names).
    TokembedError
        If a metric is given an argument (``name:VALUE``) it does not take or cannot use (a missing or malformed
        file: :meth:`~tokembed.metrics.Metric.check_argument`), or named without one it needs.
    TypeError
        If an item is neither a name nor a :class:`Metric` subclass.
    """
    if metrics is None:
        return [m for m in registered_metrics(registry)
                if not m.uses_documents() and not m.repeat and not m.argument_required]
    items = list(metrics)
    builtins = None if registry is not None else {m.name: m for m in registered_metrics()}
    out: list[type[Metric]] = []
    for item in items:
        if isinstance(item, str):
            name, colon, value = item.partition(":")
            if builtins is None:
                cls = registry.metric(name).cls
            elif name in builtins:
                cls = builtins[name]
            else:
                raise UnknownComponentError(f"unknown metric {name!r} among the built-in metrics (pass a registry "
                                            f"for plugins' metrics). Available: {', '.join(builtins)}")
            if colon:
                cls = cls.configure(value)
                cls.check_argument(value)  # a missing or malformed file now, not after the measuring pass
            elif cls.argument_required:
                raise TokembedError(f"metric {name!r} needs {cls.argument}: name it as {name}:VALUE")
            out.append(cls)
        elif isinstance(item, type) and issubclass(item, Metric):
            out.append(item)
        else:
            raise TypeError(f"metrics must be names or Metric subclasses, got {item!r}")
    names = [m.name for m in out]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise UnknownComponentError(f"metrics listed twice: {', '.join(dupes)}")
    return out


# ---------------------------------------------------------------------------------------------------------------
# the function `tokembed run` uses
# ---------------------------------------------------------------------------------------------------------------
def tokenizer_metrics(
    tokenizer: Any,
    docs: Iterable[str],
    *,
    metrics: Iterable[str | type[Metric]] | None = None,
    registry: Any = None,
) -> dict[str, Any]:
    """Encode every document once and return the corpus metrics, as ``metrics.json`` of a run stores them.

    Parameters
    ----------
    tokenizer : tokembed.Tokenizer
        A fitted tokenizer.
    docs : iterable of str
        The documents (for example the lines of a corpus), read once unless a named metric needs the second
        per-document pass (``repeat``): then a one-shot iterator is first turned into a list.
    metrics : iterable of str or Metric subclasses, optional
        Default: every registered corpus metric except the timing ones (so the result is identical across runs)
        and those on the slow per-document path (:func:`resolve_metrics`).
        Parallel metrics are skipped (they need a parallel set: see :func:`tokembed.compare.compare_tokenizers`).
    registry : Registry, optional
        Where names and the default set come from (plugins' metrics included); without one, the built-ins.

    Returns
    -------
    dict
        ``vocab_size``, ``documents``, ``characters``, ``bytes``, ``words``, ``tokens``, then each metric by name
        (``chars_per_token``, ``fertility``, ``unk_rate``, ``round_trip``, ...). Floats are rounded to 6 decimals;
        a metric not defined for the corpus is None.
    """
    run = MeasureDocuments(tokenizer, tuple(run_metrics(metrics, registry)))(docs)
    return metrics_of(run)


def run_metrics(metrics: Iterable[str | type[Metric]] | None = None, registry: Any = None) -> list[type[Metric]]:
    """The metric classes a run measures: those named (default: every registered one but the timing ones), of
    corpus scope."""
    chosen = resolve_metrics(metrics, registry)
    if metrics is None:
        chosen = [m for m in chosen if not m.timing]
    return [m for m in chosen if m.scope == "corpus"]


def metrics_of(run: MetricRun) -> dict[str, Any]:
    """What ``metrics.json`` stores of a finished run: ``vocab_size``, the shared counts, each metric's value."""
    out: dict[str, Any] = {"vocab_size": int(run.tokenizer.get_vocab_size())}
    out.update(run.stats.as_dict())
    del out["letters"], out["unspaced_letters"], out["unknown"]
    out.update(run.results())
    return out


class MeasureDocuments:
    """``MeasureDocuments(tokenizer, metrics)(documents)``: a :class:`MetricRun` fed every document, the chunks
    prepared on ``workers`` threads (:meth:`MetricRun.feed_all`; default :func:`default_workers`), and the second
    pass when a metric asks for it. On the engine, each partition is measured apart and the runs merged
    (:meth:`MetricRun.merge`); the merged run's :func:`metrics_of` equals one pass over the corpus.

    A module-level class, so that a cluster's workers unpickle it by reference (the tokenizer travels with it)."""

    def __init__(self, tokenizer: Any, metrics: Sequence[type[Metric]], workers: int | None = None):
        self.tokenizer, self.metrics, self.workers = tokenizer, tuple(metrics), workers

    def __call__(self, docs: Iterable[str]) -> MetricRun:
        run = MetricRun(self.tokenizer, self.metrics)
        if run.needs_repeat and not isinstance(docs, (list, tuple)) and not hasattr(docs, "read_partition"):
            docs = list(docs)  # an iterator (a partition's documents) is read once; a corpus can be read again
        run.feed_all(docs, self.workers)
        if run.needs_repeat:
            run.feed_repeat(docs)
        return run
