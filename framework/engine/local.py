"""The local engine: partitions counted by threads of this process (the counting kernels release the GIL)."""

from __future__ import annotations

from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, Callable, Sequence

from .base import (
    DEFAULT_FAN_IN,
    Engine,
    EngineStats,
    Progress,
    _check_partitions,
    count_leaf,
    describe_partition,
    describe_span,
    failure,
    merge_nodes,
    merge_counts,
    tree_levels,
)

__all__ = ["LocalEngine"]


class LocalEngine(Engine):
    """Count on ``workers`` threads of this process.

    Without ``partition_mb`` (the default), :meth:`count` streams the corpus in one pass, as ``fit`` always has
    (the counter's own threads count chunks of it); with ``partition_mb``, the corpus is cut into partitions that
    the threads read and count, and merged by the same ordered tree as on a cluster.

    Parameters
    ----------
    workers : int, default 2
        Threads counting partitions at the same time.
    partition_mb : float or None, default None
        Target size of a partition in MiB; None streams the corpus.
    fan_in : int, default 4
        Partial results merged by one merge task.
    """

    type = "local"
    default_partition_mb = None

    def __init__(self, workers: int = 2, partition_mb: float | None = None, fan_in: int = DEFAULT_FAN_IN):
        super().__init__(workers, partition_mb, fan_in)

    def map_reduce(self, count_fn: Callable[[Any], Any], partitions: Sequence[Any],
                   merge: Callable[[Any, Any], Any] = merge_counts, *, warm: Callable[[], None] | None = None,
                   progress: Progress | None = None, shards: int = 1) -> Any:
        # shards: threads share one memory, so cutting the counts would not lower the peak; merged whole
        parts = _check_partitions(partitions)
        levels = tree_levels(len(parts), self.fan_in)
        stats = EngineStats(self.type, self.workers, len(parts), self.fan_in, len(levels))
        if warm is not None:
            warm()
        # done[k][i]: the result of node i of level k (level 0: the leaves), dropped once merged
        done: list[dict[int, Any]] = [{} for _ in range(len(levels) + 1)]
        parent = [{i: j for j, group in enumerate(level) for i in group} for level in levels]
        what: dict[Future, tuple[int, int]] = {}
        with ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="tokembed-engine") as pool:
            for i, part in enumerate(parts):
                what[pool.submit(count_leaf, count_fn, part)] = (0, i)
            pending = set(what)
            try:
                while pending:
                    finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for fut in sorted(finished, key=what.__getitem__):
                        level, i = what.pop(fut)
                        exc = fut.exception()
                        if exc is not None:
                            raise failure(exc, self._where(level, i, levels, parts)) from exc
                        done[level][i] = fut.result()
                        if level == 0 and progress is not None:
                            progress.advance(parts[i].nbytes if hasattr(parts[i], "nbytes") else 0)
                        if level == len(levels):
                            continue
                        j = parent[level][i]
                        group = levels[level][j]
                        if all(k in done[level] for k in group):
                            nodes = [done[level].pop(k) for k in group]
                            fut2 = pool.submit(merge_nodes, merge, *nodes)
                            what[fut2] = (level + 1, j)
                            pending.add(fut2)
            except BaseException:
                for fut in pending:
                    fut.cancel()
                raise
        root = done[len(levels)][0]
        stats.count_seconds, stats.merge_seconds = root.count_seconds, root.merge_seconds
        self.last_stats = stats
        return root.value

    @staticmethod
    def _where(level: int, i: int, levels: list, parts: list) -> str:
        if level == 0:
            return describe_partition(parts[i], len(parts))
        first, last = i, i + 1
        for k in range(level - 1, -1, -1):
            first, last = levels[k][first].start, levels[k][last - 1].stop
        return describe_span(parts, first, last)
