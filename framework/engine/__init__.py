"""Where corpus statistics are counted: threads of this process, or the workers of a Dask cluster.

The expensive, parallel part of fitting a tokenizer (or a vectorizer) is counting: words, document frequencies,
co-occurrences. A component that implements :meth:`~tokembed.Component.partial_counts` and
:meth:`~tokembed.Component.fit_counts` is fitted from counts an engine computes:

>>> from tokembed.engine import open_engine                              # doctest: +SKIP
>>> with open_engine("dask", workers=2) as engine:                       # a LocalCluster on 127.0.0.1
...     counts = engine.count(tok.partial_counts, corpus)                # partitions counted on the workers
...     tok.fit_counts(counts)                                           # the merge loop, here

Partitions are descriptions (:class:`~tokembed.corpus.Partition`: a file and a byte range, cut at line starts;
a ``.gz`` file is one partition), so the workers read the files and the client never reads the corpus. Partial
counts are merged by an ordered tree (adjacent partitions, fixed shape), so the result is the same for every
number of partitions and workers and every completion order: byte-identical artifacts (docs/scale.md).

``local`` (the default) counts on threads: without ``partition_mb`` it streams the corpus in one pass, exactly as
``fit`` does. ``dask`` needs the ``dask`` extra (``pip install 'tokembed[dask]'``); importing this package does
not import dask.
"""

from __future__ import annotations

from typing import Any

from ..errors import EngineError
from .base import (
    DEFAULT_FAN_IN,
    CountDocuments,
    CountTokens,
    Counted,
    Engine,
    EngineStats,
    ListPartition,
    merge_counts,
    tree_levels,
)
from .local import LocalEngine

__all__ = ["Engine", "LocalEngine", "DaskEngine", "EngineStats", "CountDocuments", "CountTokens", "Counted",
           "ListPartition",
           "ENGINE_TYPES", "DEFAULT_PARTITION_MB", "open_engine", "merge_counts", "tree_levels", "dask_missing"]

#: The ``engine.type`` values of a recipe.
ENGINE_TYPES = ("local", "dask")
#: ``engine.partition_mb`` of the dask engine when the recipe sets none.
DEFAULT_PARTITION_MB = 128


def dask_missing() -> str | None:
    """None when the ``dask`` extra is installed, else the message saying what to install."""
    from .cluster import dask_missing as missing

    return missing()


def __getattr__(name: str) -> Any:
    if name == "DaskEngine":  # imported on first use: the module is light, but its work needs distributed
        from .cluster import DaskEngine

        return DaskEngine
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def open_engine(type: str = "local", *, address: str | None = None, workers: int | None = None,
                partition_mb: float | None = None, fan_in: int = DEFAULT_FAN_IN,
                env: dict[str, str] | None = None) -> Engine:
    """The engine a recipe's ``engine:`` section names (use it as a context manager: a cluster it starts is
    closed on exit).

    Parameters
    ----------
    type : {"local", "dask"}
    address : str, optional
        ``dask``: the scheduler (``tcp://HOST:PORT``); None starts a ``LocalCluster`` on 127.0.0.1.
    workers : int, optional
        ``local``: threads (default 2). ``dask``: the local cluster's worker processes (default 2), or how many
        workers of an existing cluster to wait for.
    partition_mb : float, optional
        Target partition size in MiB. ``local`` streams the corpus without it; ``dask`` defaults to 128.
    fan_in : int, default 4
        Partial results merged by one merge task.
    env : dict, optional
        ``dask`` without ``address``: environment variables of the worker processes.

    Raises
    ------
    EngineError
        If ``type`` is unknown, or ``dask`` is asked for without the extra installed.
    """
    if type == "local":
        return LocalEngine(workers or 2, partition_mb, fan_in)
    if type == "dask":
        missing = dask_missing()
        if missing:
            raise EngineError(missing)
        from .cluster import DaskEngine

        return DaskEngine(address, workers, partition_mb if partition_mb is not None else DEFAULT_PARTITION_MB,
                          fan_in, env)
    raise EngineError(f"unknown engine {type!r}; engines: {', '.join(ENGINE_TYPES)}")
