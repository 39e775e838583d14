"""Tokenizer metrics: the :class:`Metric` contract, the one encoding pass that feeds every metric, and the built-ins.

- :mod:`tokembed.metrics.base`: :class:`Metric`, :class:`ParallelMetric`, :class:`PassStats` (the contract);
- :mod:`tokembed.metrics.chunk`: :class:`Chunk`, what a metric receives (a chunk of documents as flat arrays), and
  :func:`measure_chunk` that builds it (one ``encode_ids`` call, one Numba pass);
- :mod:`tokembed.metrics.run`: :class:`MetricRun` (each chunk encoded once and shared by every metric),
  :func:`tokenizer_metrics` (what ``tokembed run`` stores in ``metrics.json``), :func:`resolve_metrics`;
- :mod:`tokembed.metrics.builtin`: the built-in metrics, registered through the hook ``tokembed_register_metrics``
  like a third party's (the registry adds them before any entry point, under the distribution ``tokembed``).

A third party writes a subclass of :class:`Metric`, returns it from its ``tokembed_register_metrics`` hook, and
checks it with :func:`tokembed.testing.check_metric`. ``docs/metrics.md`` gives every definition with its unit and
source.
"""

from .base import UNSPACED_SCRIPTS, Metric, ParallelMetric, PassStats, SlowMetricWarning, clean_value, format_value
from .chunk import Chunk, measure_chunk
from .run import (
    CHUNK_SIZE,
    MeasureDocuments,
    default_workers,
    MetricRun,
    iter_chunks,
    metrics_of,
    registered_metrics,
    resolve_metrics,
    run_metrics,
    tokenizer_metrics,
)

__all__ = [
    "Metric",
    "ParallelMetric",
    "PassStats",
    "Chunk",
    "measure_chunk",
    "SlowMetricWarning",
    "default_workers",
    "MetricRun",
    "MeasureDocuments",
    "metrics_of",
    "run_metrics",
    "resolve_metrics",
    "registered_metrics",
    "tokenizer_metrics",
    "format_value",
    "clean_value",
    "iter_chunks",
    "CHUNK_SIZE",
    "UNSPACED_SCRIPTS",
]

