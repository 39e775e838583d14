"""Tokenizer metrics: the :class:`Metric` contract and the one encoding pass that feeds every metric.

A metric is a class registered through the hook ``tokembed_register_metrics`` (see :mod:`tokembed.hookspecs`). The
built-in metrics (:mod:`tokembed.builtin_metrics`) are registered the same way: that module is the core's own plugin,
which :func:`tokembed.registry.build_registry` registers before any entry point, under the distribution ``tokembed``.
``docs/metrics.md`` gives every definition with its unit and source.

How a metric is computed
------------------------
For one tokenizer and one corpus, :class:`MetricRun` encodes each document ONCE, with
``encode_batch(docs, add_special_tokens=False)`` in chunks (only that call is timed), keeps the counts every metric
shares in :class:`PassStats`, and hands each ``(doc, encoding)`` to every metric's :meth:`Metric.update`. At the end
:meth:`Metric.result` turns the metric's state (and the shared counts) into one value. Two kinds of metric need more:

- ``timing = True`` (throughput): the value depends on wall time, so two runs differ; outputs that must be
  byte-identical across runs (``metrics.json`` of ``tokembed run``) leave such metrics out;
- ``repeat = True`` (determinism): the runner makes a second, independent pass, encoding each document again one
  at a time with ``encode``, and calls :meth:`Metric.update_repeat`.

A :class:`ParallelMetric` (the tokenization premium) is computed over a parallel set, the same documents in several
languages: each language is evaluated as a corpus, then :meth:`ParallelMetric.combine` compares the languages.

A third party writes a subclass of :class:`Metric`, returns it from its ``tokembed_register_metrics`` hook, and
checks it with :func:`check_metric`.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Iterable, Sequence

import numpy as np

from .encoding import Encoding
from .errors import PluginError, TokembedError, UnknownComponentError

__all__ = [
    "Metric",
    "ParallelMetric",
    "PassStats",
    "MetricRun",
    "resolve_metrics",
    "registered_metrics",
    "tokenizer_metrics",
    "check_metric",
    "format_value",
    "clean_value",
    "iter_chunks",
    "CHUNK_SIZE",
    "UNSPACED_SCRIPTS",
]

#: Scripts written without spaces between words. When their letters are more than half of a corpus's letters, the
#: whitespace-word metrics (fertility, continued words) are not defined for it and are reported as n/a.
UNSPACED_SCRIPTS = ("Han", "Hiragana", "Katakana", "Thai", "Lao", "Khmer", "Myanmar")
#: Documents per ``encode_batch`` call in :class:`MetricRun`.
CHUNK_SIZE = 256

_SCOPES = ("corpus", "parallel")
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


# ---------------------------------------------------------------------------------------------------------------
# the contract
# ---------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PassStats:
    """Counts shared by every metric, over the documents of one encoding pass.

    Attributes
    ----------
    documents : int
        Documents encoded.
    characters : int
        Unicode code points (``len(doc)`` summed).
    bytes : int
        UTF-8 bytes (lone surrogates encoded with ``surrogatepass``).
    words : int
        Whitespace-separated words (``len(doc.split())`` summed).
    tokens : int
        Tokens produced (no special token added: documents are encoded with ``add_special_tokens=False``).
    letters : int
        Letters (Unicode category L).
    unspaced_letters : int
        Letters of the scripts in :data:`UNSPACED_SCRIPTS`.
    seconds : float
        Wall time spent inside ``encode_batch`` during the pass, in seconds.
    """

    documents: int = 0
    characters: int = 0
    bytes: int = 0
    words: int = 0
    tokens: int = 0
    letters: int = 0
    unspaced_letters: int = 0
    seconds: float = 0.0

    @property
    def has_words(self) -> bool:
        """True when whitespace words are meaningful: some word, and at most half the letters in unspaced scripts."""
        return self.words > 0 and 2 * self.unspaced_letters <= self.letters

    def as_dict(self) -> dict[str, Any]:
        """The counts (``seconds`` left out: it is a timing figure)."""
        out = asdict(self)
        del out["seconds"]
        return out


class Metric:
    """Base class of a tokenizer metric: an accumulator over the encodings of one corpus.

    A subclass sets the class attributes below, then implements :meth:`update` (called once per document with its
    encoding) and :meth:`result`. An instance is built per (tokenizer, corpus) as ``cls(tokenizer)``; a subclass that
    overrides ``__init__`` calls ``super().__init__(tokenizer)``.

    Attributes
    ----------
    name : str
        Unique key (``[a-z][a-z0-9_]*``), the column name in JSON and CSV.
    label : str
        Short column header for tables (default: ``name``).
    unit : str
        Unit of the value (``"tokens / word"``, ``"share of tokens"``, ``"MB/s"``).
    definition : str
        One or two sentences: exactly what is computed.
    source : str
        The paper or reference implementation the metric follows (or "tokembed" for a plain count).
    higher_is_better : bool or None
        Which way is better, for highlighting the best value; None when neither is (vocabulary size).
    display : str
        Format spec for tables (``",d"``, ``".3f"``, ``".2%"``); booleans print as yes/no, None as n/a.
    scope : {"corpus", "parallel"}
        ``"parallel"`` only for :class:`ParallelMetric`.
    timing : bool
        The value depends on wall time (left out of outputs that must be identical across runs).
    repeat : bool
        The metric needs a second, independent encoding pass (:meth:`update_repeat`).
    """

    name: ClassVar[str] = ""
    label: ClassVar[str] = ""
    unit: ClassVar[str] = ""
    definition: ClassVar[str] = ""
    source: ClassVar[str] = ""
    higher_is_better: ClassVar[bool | None] = None
    display: ClassVar[str] = ".3f"
    scope: ClassVar[str] = "corpus"
    timing: ClassVar[bool] = False
    repeat: ClassVar[bool] = False

    def __init__(self, tokenizer: Any):
        self.tokenizer = tokenizer

    def update(self, doc: str, encoding: Encoding) -> None:
        """Take one document and its encoding (``add_special_tokens=False``). The default ignores them."""

    def update_repeat(self, doc: str, encoding: Encoding) -> None:
        """Take one document of the second pass (only called when ``repeat`` is True)."""

    def result(self, stats: PassStats) -> Any:
        """The value: a float, an int, a bool, or None when the metric is not defined for this corpus."""
        raise NotImplementedError(f"{type(self).__name__} does not implement result()")

    def extras(self) -> dict[str, Any]:
        """JSON-able details kept beside the value in the comparison's JSON (default: none)."""
        return {}

    @classmethod
    def describe(cls) -> dict[str, Any]:
        """The metric's metadata as a JSON-able dict."""
        return {
            "name": cls.name,
            "label": cls.label or cls.name,
            "unit": cls.unit,
            "definition": cls.definition,
            "source": cls.source,
            "higher_is_better": cls.higher_is_better,
            "display": cls.display,
            "scope": cls.scope,
            "timing": cls.timing,
        }


class ParallelMetric(Metric):
    """A metric over a parallel set: aligned documents (chapters) in several languages, one reference language.

    Each language is encoded as a corpus (``update`` sees its documents in order); :meth:`result` returns None, and
    :meth:`combine` receives the finished accumulators of all languages and returns one value per language.
    """

    scope: ClassVar[str] = "parallel"

    def result(self, stats: PassStats) -> Any:
        return None

    @classmethod
    def combine(cls, runs: dict[str, "ParallelMetric"], reference: str) -> dict[str, Any]:
        """Values per language, from the accumulators ``runs`` (language -> accumulator) of one tokenizer."""
        raise NotImplementedError(f"{cls.__name__} does not implement combine()")


# ---------------------------------------------------------------------------------------------------------------
# one encoding pass feeds every metric
# ---------------------------------------------------------------------------------------------------------------
def _unspaced_pattern():
    import regex

    scripts = "".join(rf"\p{{Script={s}}}" for s in UNSPACED_SCRIPTS)
    return regex.compile(r"\p{L}+"), regex.compile(rf"[{scripts}]+")


def clean_value(value: Any, digits: int = 6) -> Any:
    """A JSON-stable value: numpy scalars to Python, floats rounded, NaN and infinities to None."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value) + 0.0  # + 0.0 turns -0.0 into 0.0
        return round(value, digits) + 0.0 if math.isfinite(value) else None
    raise TypeError(f"a metric value must be a number, a bool or None, got {type(value).__name__}")


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
    """Every registered metric class, built-ins first, in registration order.

    Parameters
    ----------
    registry : tokembed.registry.Registry, optional
        Default: a fresh :func:`tokembed.build_registry`.
    """
    if registry is None:
        from .registry import build_registry

        registry = build_registry()
    return [info.cls for info in registry.metrics.values()]


def resolve_metrics(metrics: Iterable[str | type[Metric]] | None = None, registry: Any = None) -> list[type[Metric]]:
    """The metric classes to compute: every registered one (``None``), or the names / classes given.

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
    if any(isinstance(m, str) for m in items):
        if registry is None:
            from .registry import build_registry

            registry = build_registry()
    out: list[type[Metric]] = []
    for item in items:
        if isinstance(item, str):
            out.append(registry.metric(item).cls)
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
        Where names and the default set come from (default: a fresh registry).

    Returns
    -------
    dict
        ``vocab_size``, ``documents``, ``characters``, ``bytes``, ``words``, ``tokens``, then each metric by name
        (``chars_per_token``, ``fertility``, ``unk_rate``, ``round_trip``, ...). Floats are rounded to 6 decimals;
        a metric not defined for the corpus is None.
    """
    chosen = resolve_metrics(metrics, registry)
    if metrics is None:
        chosen = [m for m in chosen if not m.timing]
    chosen = [m for m in chosen if m.scope == "corpus"]
    run = MetricRun(tokenizer, chosen)
    if run.needs_repeat and iter(docs) is docs:
        docs = list(docs)
    for chunk in iter_chunks(docs):
        run.feed(chunk)
    if run.needs_repeat:
        run.feed_repeat(docs)
    out: dict[str, Any] = {"vocab_size": int(tokenizer.get_vocab_size())}
    out.update(run.stats.as_dict())
    del out["letters"], out["unspaced_letters"]
    out.update(run.results())
    return out


# ---------------------------------------------------------------------------------------------------------------
# presentation
# ---------------------------------------------------------------------------------------------------------------
def _formats(value: Any, spec: str) -> bool:
    try:
        format(value, spec)
    except (ValueError, TypeError):
        return False
    return True


def format_value(value: Any, display: str = ".3f") -> str:
    """A value as tables print it: n/a for None, yes/no for booleans, else ``format(value, display)``."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    try:
        return format(value, display)
    except (ValueError, TypeError):
        return str(value)


# ---------------------------------------------------------------------------------------------------------------
# the metric contract, for tokembed's tests and third-party plugins
# ---------------------------------------------------------------------------------------------------------------
def check_metric(cls: type, tokenizers: Sequence[Any] | None = None, docs: Sequence[str] | None = None) -> None:
    """Check that a metric class keeps the contract; raise one ``AssertionError`` listing every problem.

    The rules: ``name`` matches ``[a-z][a-z0-9_]*``; ``unit``, ``definition`` and ``source`` are non-empty strings;
    ``higher_is_better`` is True, False or None; ``scope`` is ``corpus`` or ``parallel`` (and ``parallel`` exactly
    for :class:`ParallelMetric` subclasses); ``display`` formats a number; on each tokenizer the value is None, a
    bool, an int or a finite float, the same on a second run (unless ``timing``), the extras are JSON-able, and an
    empty corpus gives a value without raising; a parallel metric's ``combine`` gives one JSON value per language.

    Parameters
    ----------
    cls : type
        The metric class.
    tokenizers : sequence of fitted tokenizers, optional
        Default: the built-in character and word tokenizers fitted on :func:`tokembed.testing.sample_corpus`.
    docs : sequence of str, optional
        Default: :func:`tokembed.testing.sample_texts` (paragraphs and edge cases: empty, CJK, emoji, ...).
    """
    import json

    problems: list[str] = []
    if not (isinstance(cls, type) and issubclass(cls, Metric)):
        raise AssertionError(f"{cls!r} is not a subclass of tokembed.metrics.Metric")
    if not isinstance(cls.name, str) or not _NAME.match(cls.name):
        problems.append(f"name {cls.name!r} must match [a-z][a-z0-9_]*")
    for attr in ("unit", "definition", "source"):
        if not isinstance(getattr(cls, attr), str) or not getattr(cls, attr).strip():
            problems.append(f"{attr} must be a non-empty string (docs and reports show it)")
    if not (cls.higher_is_better is None or isinstance(cls.higher_is_better, bool)):
        problems.append(f"higher_is_better must be True, False or None, got {cls.higher_is_better!r}")
    if cls.scope not in _SCOPES:
        problems.append(f"scope must be one of {_SCOPES}, got {cls.scope!r}")
    elif (cls.scope == "parallel") != issubclass(cls, ParallelMetric):
        problems.append("scope 'parallel' is for ParallelMetric subclasses only, and they must keep it")
    if not any(_formats(x, cls.display) for x in (1, 1.5)):
        problems.append(f"display {cls.display!r} is not a format spec for numbers")
    if problems:
        raise AssertionError(f"{_who(cls)} breaks the metric contract:\n" + "\n".join(problems))

    if tokenizers is None:
        from .registry import build_registry
        from .testing import sample_corpus

        reg = build_registry(autoload=False)
        corpus = sample_corpus(8_000)
        tokenizers = [reg.get("tokenizer", "char")().fit(corpus),
                      reg.get("tokenizer", "word")(min_frequency=2).fit(corpus)]
    if docs is None:
        from .testing import sample_texts

        docs = sample_texts()
    docs = list(docs)

    def evaluate(tok: Any, texts: list[str]) -> tuple[Any, dict, MetricRun]:
        run = MetricRun(tok, [cls])
        for chunk in iter_chunks(texts):
            run.feed(chunk)
        if run.needs_repeat:
            run.feed_repeat(texts)
        return run.results()[cls.name], run.extras(), run

    def ok_value(v: Any) -> bool:
        return v is None or isinstance(v, (bool, int)) or (isinstance(v, float) and math.isfinite(v))

    for tok in tokenizers:
        where = f"on {type(tok).__name__}"
        try:
            value, extras, run = evaluate(tok, docs)
            again, _, run2 = evaluate(tok, docs)
            empty, _, _ = evaluate(tok, [])
        except Exception as exc:  # noqa: BLE001 - reported with the others
            problems.append(f"{where}: raised {type(exc).__name__}: {exc}")
            continue
        if not ok_value(value):
            problems.append(f"{where}: value {value!r} is not None, bool, int or a finite float")
        if not cls.timing and value != again:
            problems.append(f"{where}: two runs gave {value!r} and {again!r} (set timing = True if it is timed)")
        if not ok_value(empty):
            problems.append(f"{where}: on an empty corpus gave {empty!r}")
        try:
            json.dumps(extras, allow_nan=False)
        except (TypeError, ValueError) as exc:
            problems.append(f"{where}: extras are not JSON-able: {exc}")
        if cls.scope == "parallel":
            try:
                combined = cls.combine({"xx": run.metrics[cls.name], "yy": run2.metrics[cls.name]}, "xx")
            except Exception as exc:  # noqa: BLE001
                problems.append(f"{where}: combine raised {type(exc).__name__}: {exc}")
                continue
            if not isinstance(combined, dict) or set(combined) != {"xx", "yy"}:
                problems.append(f"{where}: combine must return one value per language, got {combined!r}")
            elif not all(ok_value(clean_value(v)) for v in combined.values()):
                problems.append(f"{where}: combine gave non-JSON values {combined!r}")
    if problems:
        raise AssertionError(f"{_who(cls)} breaks the metric contract:\n" + "\n".join(problems))
