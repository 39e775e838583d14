"""Computing tokenizer metrics: each document encoded ONCE, the shared counts kept in
:class:`~tokembed.metrics.base.PassStats`, and every metric fed from that one pass (:class:`MetricRun`).

For one tokenizer and one corpus, :class:`MetricRun` encodes each document once, with
``encode_batch(docs, add_special_tokens=False)`` in chunks (only that call is timed), and hands each
``(doc, encoding)`` to every metric's :meth:`~tokembed.metrics.Metric.update`. A metric with ``repeat = True``
(determinism) gets a second, independent pass that encodes each document again with ``encode``. This one shared
pass is what keeps a comparison of many metrics as cheap as one.

Which metrics exist comes from a registry, always passed in (:func:`tokembed.build_registry` builds one): the
built-ins and every plugin's ``tokembed_register_metrics`` hook.
"""

from __future__ import annotations

import time
from typing import Any, Iterable, Sequence

from ..encoding import Encoding
from ..errors import PluginError, TokembedError, UnknownComponentError
from .base import UNSPACED_SCRIPTS, Metric, PassStats, clean_value

__all__ = ["MetricRun", "MeasureDocuments", "iter_chunks", "metrics_of", "registered_metrics", "resolve_metrics",
           "run_metrics", "tokenizer_metrics", "CHUNK_SIZE"]

#: Documents per ``encode_batch`` call in :class:`MetricRun`.
CHUNK_SIZE = 256


def _unspaced_pattern():
    """Patterns of letters, and of letters of the scripts written without spaces (:data:`UNSPACED_SCRIPTS`)."""
    import regex

    scripts = "".join(rf"\p{{Script={s}}}" for s in UNSPACED_SCRIPTS)
    return regex.compile(r"\p{L}+"), regex.compile(rf"[{scripts}]+")


def _who(cls: type) -> str:
    return f"metric {getattr(cls, 'name', '?')!r} ({cls.__module__}:{cls.__qualname__})"


class MetricRun:
    """Encode the documents of one corpus with one tokenizer, once, and feed every metric.

    Parameters
    ----------
    tokenizer : tokembed.Tokenizer
        A fitted tokenizer.
    metrics : sequence of Metric subclasses
        Instantiated here as ``cls(tokenizer)``.
    observers : sequence of objects with ``update(doc, encoding)``
        Extra accumulators fed the same encodings (the comparison's token-length histogram).

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
        self._letters, self._unspaced = _unspaced_pattern()
        self._counts = dict.fromkeys(("documents", "characters", "bytes", "words", "tokens", "letters",
                                      "unspaced_letters"), 0)
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
        """True when a metric asks for the second pass."""
        return any(m.repeat for m in self.metrics.values())

    def feed(self, docs: Sequence[str]) -> list[Encoding]:
        """Encode ``docs`` (timed), count them and update every metric; returns the encodings."""
        docs = list(docs)
        t0 = time.perf_counter()
        encodings = self.tokenizer.encode_batch(docs, add_special_tokens=False)
        self._seconds += time.perf_counter() - t0
        c = self._counts
        letters, unspaced = self._letters, self._unspaced
        encodings = list(encodings)
        pairs = list(zip(docs, encodings))
        for doc, enc in pairs:
            c["documents"] += 1
            c["characters"] += len(doc)
            c["bytes"] += len(doc.encode("utf-8", "surrogatepass"))
            c["words"] += len(doc.split())
            c["tokens"] += len(enc)
            c["letters"] += sum(map(len, letters.findall(doc)))
            c["unspaced_letters"] += sum(map(len, unspaced.findall(doc)))
        for metric in self.metrics.values():
            self._call(type(metric), "update", lambda: [metric.update(doc, enc) for doc, enc in pairs])
        for obs in self.observers:
            for doc, enc in pairs:
                obs.update(doc, enc)
        return encodings

    def feed_repeat(self, docs: Iterable[str]) -> None:
        """The second pass: encode each document again with ``encode`` and call ``update_repeat``."""
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
        out._counts = {k: v + other._counts[k] for k, v in self._counts.items()}
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
        state["_letters"] = state["_unspaced"] = None  # compiled again on arrival
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        vars(self).update(state)
        self._letters, self._unspaced = _unspaced_pattern()

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
    """The metric classes to compute: every registered one (``None``), or the names / classes given. Names are
    looked up in ``registry`` (a :class:`tokembed.registry.Registry`); without one, among the built-in metrics.

    Raises
    ------
    UnknownComponentError
        If a name is not registered (the message lists the available names).
    TypeError
        If an item is neither a name nor a :class:`Metric` subclass.
    """
    if metrics is None:
        return registered_metrics(registry)
    items = list(metrics)
    builtins = None if registry is not None else {m.name: m for m in registered_metrics()}
    out: list[type[Metric]] = []
    for item in items:
        if isinstance(item, str):
            if builtins is None:
                out.append(registry.metric(item).cls)
            elif item in builtins:
                out.append(builtins[item])
            else:
                raise UnknownComponentError(f"unknown metric {item!r} among the built-in metrics (pass a registry "
                                            f"for plugins' metrics). Available: {', '.join(builtins)}")
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
        The documents (for example the lines of a corpus), read once unless a metric needs the second pass
        (``deterministic``): then a one-shot iterator is first turned into a list.
    metrics : iterable of str or Metric subclasses, optional
        Default: every registered corpus metric except the timing ones (so the result is identical across runs).
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
    del out["letters"], out["unspaced_letters"]
    out.update(run.results())
    return out


class MeasureDocuments:
    """``MeasureDocuments(tokenizer, metrics)(documents)``: a :class:`MetricRun` fed every document (and the
    second pass when a metric asks for it). On the engine, each partition is measured apart and the runs merged
    (:meth:`MetricRun.merge`); the merged run's :func:`metrics_of` equals one pass over the corpus.

    A module-level class, so that a cluster's workers unpickle it by reference (the tokenizer travels with it)."""

    def __init__(self, tokenizer: Any, metrics: Sequence[type[Metric]]):
        self.tokenizer, self.metrics = tokenizer, tuple(metrics)

    def __call__(self, docs: Iterable[str]) -> MetricRun:
        run = MetricRun(self.tokenizer, self.metrics)
        if run.needs_repeat and not isinstance(docs, (list, tuple)) and not hasattr(docs, "read_partition"):
            docs = list(docs)  # an iterator (a partition's documents) is read once; a corpus can be read again
        for chunk in iter_chunks(docs):
            run.feed(chunk)
        if run.needs_repeat:
            run.feed_repeat(docs)
        return run
