"""The metric contract as a check, for tokembed's own metrics and third parties' (:func:`check_metric`)."""

from __future__ import annotations

import math
import warnings
from typing import Any, Sequence

from ..metrics.base import (NAME_PATTERN, SCOPES, Metric, ParallelMetric, SlowMetricWarning, _formats, clean_value,
                            unknown_id)
from ..metrics.chunk import measure_chunk
from ..metrics.run import MetricRun, _who
from .samples import sample_corpus, sample_texts

__all__ = ["check_metric"]


def check_metric(cls: type, tokenizers: Sequence[Any] | None = None, docs: Sequence[str] | None = None,
                 argument: str | None = None) -> None:
    """Check that a metric class keeps the contract; raise one ``AssertionError`` listing every problem.

    The rules: ``name`` matches ``[a-z][a-z0-9_]*``; ``unit``, ``definition`` and ``source`` are non-empty strings;
    ``higher_is_better`` is True, False or None; ``scope`` is ``corpus`` or ``parallel`` (and ``parallel`` exactly
    for :class:`ParallelMetric` subclasses); ``display`` formats a number; on each tokenizer the value is None, a
    bool, an int or a finite float, the same on a second run (unless ``timing``) and with the chunks prepared on
    two threads, the extras are JSON-able, and an empty corpus gives a value without raising; a metric with
    ``prepare_chunk`` gives the same value when it is skipped; a metric that implements both paths (``update_chunk`` on arrays and ``update`` per document) gives the same value on each;
    a metric that merges gives, measured in parts and merged, the value of one pass; a parallel metric's
    ``combine`` gives one JSON value per language.

    Parameters
    ----------
    argument : str, optional
        The metric's argument (:meth:`tokembed.metrics.Metric.configure`), required when ``argument_required``.

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
    if not isinstance(cls.name, str) or not NAME_PATTERN.match(cls.name):
        problems.append(f"name {cls.name!r} must match [a-z][a-z0-9_]*")
    for attr in ("unit", "definition", "source"):
        if not isinstance(getattr(cls, attr), str) or not getattr(cls, attr).strip():
            problems.append(f"{attr} must be a non-empty string (docs and reports show it)")
    if not (cls.higher_is_better is None or isinstance(cls.higher_is_better, bool)):
        problems.append(f"higher_is_better must be True, False or None, got {cls.higher_is_better!r}")
    if cls.scope not in SCOPES:
        problems.append(f"scope must be one of {SCOPES}, got {cls.scope!r}")
    elif (cls.scope == "parallel") != issubclass(cls, ParallelMetric):
        problems.append("scope 'parallel' is for ParallelMetric subclasses only, and they must keep it")
    if not any(_formats(x, cls.display) for x in (1, 1.5)):
        problems.append(f"display {cls.display!r} is not a format spec for numbers")
    if cls.argument_required and argument is None:
        problems.append(f"needs an argument ({cls.argument}): pass check_metric(cls, argument=...)")
    if problems:
        raise AssertionError(f"{_who(cls)} breaks the metric contract:\n" + "\n".join(problems))
    if argument is not None:
        cls = cls.configure(argument)

    if tokenizers is None:
        from ..registry import build_registry

        reg = build_registry(autoload=False)
        corpus = sample_corpus(8_000)
        tokenizers = [reg.get("tokenizer", "char")().fit(corpus),
                      reg.get("tokenizer", "word")(min_frequency=2).fit(corpus)]
    if docs is None:
        docs = sample_texts()
    docs = list(docs)

    def evaluate(tok: Any, texts: list[str], workers: int = 1, metric: type = cls,
                 prepared: bool = True) -> tuple[Any, dict, MetricRun]:
        with warnings.catch_warnings():  # the slow path's warning: said once by the caller's own run
            warnings.simplefilter("ignore", SlowMetricWarning)
            run = MetricRun(tok, [metric])
        if prepared:
            run.feed_all(texts, workers=workers, size=7)  # small chunks: several per corpus
        else:  # chunks fed without prepare_chunk: update_chunk must give the same value
            for start in range(0, len(texts), 7):
                run.add(measure_chunk(tok, texts[start:start + 7], start, unknown_id(tok)))
        if run.needs_repeat:
            run.feed_repeat(texts)
        return run.results()[metric.name], run.extras(), run

    both_paths = (cls.update_chunk is not Metric.update_chunk and cls.update is not Metric.update
                  and not cls.per_document)
    slow = type(cls.__name__, (cls,), {"per_document": True, "__module__": cls.__module__}) if both_paths else None

    def ok_value(v: Any) -> bool:
        return v is None or isinstance(v, (bool, int)) or (isinstance(v, float) and math.isfinite(v))

    for tok in tokenizers:
        where = f"on {type(tok).__name__}"
        try:
            value, extras, run = evaluate(tok, docs)
            again, _, run2 = evaluate(tok, docs)
            threaded, threaded_extras, _ = evaluate(tok, docs, workers=2)
            empty, _, _ = evaluate(tok, [])
            per_doc = evaluate(tok, docs, metric=slow)[0] if slow is not None else value
            unprepared = (evaluate(tok, docs, prepared=False)[0] if cls.prepare_chunk is not Metric.prepare_chunk
                          else value)
        except Exception as exc:  # noqa: BLE001 - reported with the others
            problems.append(f"{where}: raised {type(exc).__name__}: {exc}")
            continue
        if not ok_value(value):
            problems.append(f"{where}: value {value!r} is not None, bool, int or a finite float")
        if not cls.timing and value != again:
            problems.append(f"{where}: two runs gave {value!r} and {again!r} (set timing = True if it is timed)")
        if not cls.timing and (threaded != value or threaded_extras != extras):
            problems.append(f"{where}: with chunks prepared on two threads gave {threaded!r}, on one {value!r}")
        if not cls.timing and unprepared != value:
            problems.append(f"{where}: without prepare_chunk gave {unprepared!r}, with it {value!r}")
        if not cls.timing and per_doc != value:
            problems.append(f"{where}: update_chunk (arrays) gave {value!r}, update (per document) gave {per_doc!r}")
        if not ok_value(empty):
            problems.append(f"{where}: on an empty corpus gave {empty!r}")
        try:
            json.dumps(extras, allow_nan=False)
        except (TypeError, ValueError) as exc:
            problems.append(f"{where}: extras are not JSON-able: {exc}")
        if cls.scope == "corpus" and not cls.timing and run.mergeable():
            problems.extend(f"{where}: {p}" for p in _merge_problems(cls, tok, docs, value))
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


def _merge_problems(cls: type, tok: Any, docs: list[str], whole: Any) -> list[str]:
    """A metric that merges: the documents measured in three parts (one empty), each sent through pickle as
    between processes, merged in order, give the value of one pass; the parts are left unchanged."""
    import pickle

    from ..metrics import MeasureDocuments

    third = max(1, len(docs) // 3)
    chunks = [docs[:third], [], docs[third:]]
    measure = MeasureDocuments(tok, [cls], workers=1)
    try:
        pickle.dumps(cls)
        trip = lambda run: pickle.loads(pickle.dumps(run, protocol=pickle.HIGHEST_PROTOCOL))  # noqa: E731
    except Exception:  # a class defined in a function (a test's): checked without the trip between processes
        trip = lambda run: run  # noqa: E731
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SlowMetricWarning)
            parts = [trip(measure(chunk)) for chunk in chunks]
        before = [p.attach(tok).results()[cls.name] for p in parts]
        merged = parts[0]
        for part in parts[1:]:
            merged = merged.merge(part)
        value = merged.attach(tok).results()[cls.name]
        after = [p.results()[cls.name] for p in parts]
    except Exception as exc:  # noqa: BLE001 - reported with the others
        return [f"measured in parts, pickled and merged, raised {type(exc).__name__}: {exc}"]
    problems = []
    if value != whole:
        problems.append(f"merging the results of three parts gave {value!r}, one pass gave {whole!r} (merge must "
                        "add this metric's state of the parts)")
    if before != after:
        problems.append("merge changed its inputs (it must return a new metric: a cluster may merge them again)")
    return problems
