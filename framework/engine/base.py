"""What every engine shares: the ordered merge tree, the tasks that count a partition and merge counts, the
statistics of a run, and the progress bar.

The tasks are module-level functions and classes of the installed tokembed, so a Dask worker unpickles them by
module reference (never as ``__main__`` functions or closures).
"""

from __future__ import annotations

import itertools
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Sequence

from ..errors import EngineError, TokembedError, with_context

__all__ = ["Engine", "EngineStats", "Progress", "ListPartition", "CountDocuments", "CountTokens", "Counted",
           "TransformPartition", "Rows", "merge_counts", "pick_shard", "join_shards",
           "tree_levels", "count_leaf", "merge_nodes", "describe_partition", "describe_span", "failure",
           "DEFAULT_FAN_IN", "MB"]

MB = 1 << 20
#: Partial results merged by one merge task (the tree's branching factor).
DEFAULT_FAN_IN = 4
#: A few documents that go through every counting kernel, for the warm-up task.
WARMUP_DOCS = ("warm up, it's 1 \u00e9t\u00e9 \u6771\u4eac!\n", "Warm-up: two  lines\tof text 42.")


@dataclass(frozen=True)
class ListPartition:
    """Documents already in memory (a corpus cut with ``max_lines`` or ``sample_lines``): ``docs`` are documents
    ``start`` to ``end - 1`` of that selection. They travel with the task, since no file range describes them."""

    index: int
    start: int
    end: int
    docs: tuple[str, ...]
    nbytes: int

    def describe(self) -> str:
        return f"documents {self.start}-{self.end - 1} of the selected lines"


def describe_span(parts: Sequence[Any], first: int, last: int) -> str:
    """``merging partitions 1-4 of 16 (A, bytes 0-9 to A, bytes 27-36)``: the merge task over ``parts[first:last]``."""
    def what(p: Any) -> str:
        return p.describe() if hasattr(p, "describe") else repr(p)

    return (f"merging partitions {first + 1}-{last} of {len(parts)} ({what(parts[first])} to "
            f"{what(parts[last - 1])})")


def describe_partition(part: Any, total: int) -> str:
    """``partition 3/16 (data.txt, bytes 0-134217728)``."""
    index = getattr(part, "index", None)
    what = part.describe() if hasattr(part, "describe") else repr(part)
    return f"partition {index + 1}/{total} ({what})" if isinstance(index, int) else f"partition ({what})"


@dataclass
class Counted:
    """A partial count and the number of documents it was counted from (an empty corpus is an error the caller
    reports once, after the merge)."""

    value: Any
    documents: int

    def merge(self, other: "Counted") -> "Counted":
        return Counted(self.value.merge(other.value), self.documents + other.documents)


def pick_shard(node: "_Node", k: int, n: int) -> "_Node":
    """Shard ``k`` of ``n`` of a leaf's :class:`Counted` value (its ``value.shard(k, n)``; the documents and the
    counting seconds ride on shard 0)."""
    c = node.value
    return _Node(Counted(c.value.shard(k, n), c.documents if k == 0 else 0), node.count_seconds if k == 0 else 0.0)


def join_shards(nodes: Sequence["_Node"]) -> "_Node":
    """The merged shards, in order, as one :class:`Counted` (``type(value).concat``)."""
    values = [n.value for n in nodes]
    first = values[0].value
    return _Node(Counted(type(first).concat([v.value for v in values]), sum(v.documents for v in values)),
                 sum(n.count_seconds for n in nodes), sum(n.merge_seconds for n in nodes))


def merge_counts(a: Any, b: Any) -> Any:
    """``a.merge(b)``: the counts of ``a``'s data followed by ``b``'s (:meth:`tokembed.Component.partial_counts`)."""
    return a.merge(b)


class _Tally:
    """An iterator over documents that counts them."""

    def __init__(self, docs: Iterable[str]):
        self.docs, self.n = iter(docs), 0

    def __iter__(self) -> Iterator[str]:
        for doc in self.docs:
            self.n += 1
            yield doc


@dataclass(frozen=True)
class CountDocuments:
    """The count task of one partition: read its documents (the worker opens the file) and count them with
    ``count_fn(documents) -> partial counts``.

    ``count_fn`` is typically a bound method of a component (``tokenizer.partial_counts``), pickled with the
    component's parameters and its class by reference; ``corpus`` is the :class:`~tokembed.corpus.Corpus` (how to
    read the files), None for :class:`ListPartition`.
    """

    count_fn: Callable[[Iterable[str]], Any]
    corpus: Any = None

    def __call__(self, part: Any) -> Counted:
        docs = _Tally(part.docs if isinstance(part, ListPartition) else self.corpus.read_partition(part))
        value = self.count_fn(docs)
        return Counted(value, docs.n)

    def warm(self, part: Any = None) -> None:
        """Count the first two documents of ``part`` (default: a few sample sentences) twice and merge the counts:
        compiles (or loads from Numba's cache) every kernel that counting and merging use."""
        docs = list(WARMUP_DOCS)
        if isinstance(part, ListPartition):
            docs = list(part.docs[:2])
        elif part is not None:
            docs = list(itertools.islice(self.corpus.read_partition(part), 2)) or docs
        merge_counts(self.count_fn(docs), self.count_fn(docs[::-1]))


@dataclass(frozen=True)
class WarmUp:
    """The warm-up task: ``task.warm(part)``."""

    task: CountDocuments
    part: Any = None

    def __call__(self) -> None:
        self.task.warm(self.part)


@dataclass(frozen=True)
class _Apply:
    """A warm-up task: ``fn(part)``, result dropped (compiles the kernels that ``fn`` uses, once per host)."""

    fn: Callable[[Any], Any]
    part: Any

    def __call__(self) -> None:
        self.fn(self.part)


@dataclass(frozen=True)
class CountTokens:
    """``count_fn`` over documents encoded by ``tokenizer`` (a fitted one, shipped to the workers), as the
    :class:`~tokembed.sequences.TokenSequences` a vectorizer of a recipe fits on; without a tokenizer, over the
    documents themselves."""

    count_fn: Callable[[Any], Any]
    tokenizer: Any = None

    def __call__(self, docs: Iterable[str]) -> Any:
        if self.tokenizer is None:
            return self.count_fn(list(docs))
        from ..sequences import TokenSequences

        return self.count_fn(TokenSequences.from_tokenizer(self.tokenizer, list(docs)))


@dataclass
class Rows:
    """Consecutive row blocks of a matrix, in partition order: what :class:`TransformPartition` returns. ``merge``
    joins the lists (cheap, in any tree); :meth:`stack` builds the matrix once, on the client. A block is a
    matrix, or, when the partitions were written by the workers, the :class:`PartFile` that describes one."""

    blocks: list

    def merge(self, other: "Rows") -> "Rows":
        return Rows(self.blocks + other.blocks)

    def stack(self) -> Any:
        """The blocks as one matrix: CSR blocks concatenated array by array (the same arrays as transforming
        every document at once: each row is computed from its own document), dense ones with ``numpy.vstack``."""
        import numpy as np

        blocks = self.blocks
        if not blocks:
            raise ValueError("no row block to stack")
        if not hasattr(blocks[0], "tocsr"):
            return np.vstack([np.asarray(b) for b in blocks])
        import scipy.sparse as sp

        csr = [b.tocsr() for b in blocks]
        shifts = np.cumsum([0] + [int(b.indptr[-1]) for b in csr[:-1]])
        indptr = np.concatenate([csr[0].indptr[:1]] + [b.indptr[1:] + shift for b, shift in zip(csr, shifts)])
        out = sp.csr_matrix((np.concatenate([b.data for b in csr]), np.concatenate([b.indices for b in csr]),
                             indptr.astype(csr[0].indptr.dtype, copy=False)),
                            shape=(sum(b.shape[0] for b in csr), csr[0].shape[1]))
        out.has_sorted_indices = all(b.has_sorted_indices for b in csr)
        return out


@dataclass(frozen=True)
class PartFile:
    """One partition's output matrix, written by the worker that transformed it."""

    name: str
    rows: int
    columns: int
    nnz: int | None
    dtype: str
    source: str = ""


@dataclass(frozen=True)
class TransformPartition:
    """The transform task of one partition: read its documents, encode them with ``tokenizer`` (when given) and
    return ``Rows([transform(documents)])``; with ``folder``, write that block as ``STEM.part-NNNNN.npz`` (or
    ``.npy``) there instead (:func:`tokembed.io.save_matrix`: atomic, NaN refused) and return its description.

    ``transform`` is a fitted vectorizer's bound ``transform`` whose rows are documents or tokens (so blocks of
    consecutive documents stack into the whole corpus's output)."""

    transform: Callable[[Any], Any]
    tokenizer: Any = None
    corpus: Any = None
    folder: str | None = None
    stem: str = ""

    def __call__(self, part: Any) -> Rows:
        docs = list(part.docs if isinstance(part, ListPartition) else self.corpus.read_partition(part))
        if self.tokenizer is not None:
            from ..sequences import TokenSequences

            block = self.transform(TokenSequences.from_tokenizer(self.tokenizer, docs))
        else:
            block = self.transform(docs)
        if self.folder is None:
            return Rows([block])
        from pathlib import Path

        from ..io import save_matrix

        path = save_matrix(Path(self.folder) / f"{self.stem}.part-{part.index:05d}", block)
        source = part.describe() if hasattr(part, "describe") else ""
        return Rows([PartFile(path.name, int(block.shape[0]), int(block.shape[1]),
                              int(block.nnz) if hasattr(block, "nnz") else None, str(block.dtype), source)])


def tree_levels(n: int, fan_in: int = DEFAULT_FAN_IN) -> list[list[range]]:
    """The ordered merge tree over ``n`` leaves: level ``k`` lists, for each of its nodes, the range of nodes of
    level ``k - 1`` (level 0: the leaves) it merges, left to right. Adjacent nodes only, so every merge joins
    consecutive parts of the corpus; the shape depends on ``n`` and ``fan_in`` alone, never on timing.

    >>> [[(r.start, r.stop) for r in level] for level in tree_levels(5, 2)]
    [[(0, 2), (2, 4), (4, 5)], [(0, 2), (2, 3)], [(0, 2)]]
    """
    if fan_in < 2:
        raise ValueError(f"fan_in must be >= 2, got {fan_in}")
    levels: list[list[range]] = []
    width = n
    while width > 1:
        level = [range(i, min(i + fan_in, width)) for i in range(0, width, fan_in)]
        levels.append(level)
        width = len(level)
    return levels


@dataclass
class _Node:
    """What a task of the tree returns: the (merged) value, and the seconds spent counting and merging below it."""

    value: Any
    count_seconds: float = 0.0
    merge_seconds: float = 0.0


def count_leaf(fn: Callable[[Any], Any], part: Any) -> _Node:
    """The leaf task: ``fn(part)`` timed."""
    t0 = time.perf_counter()
    value = fn(part)
    return _Node(value, time.perf_counter() - t0)


def merge_nodes(merge: Callable[[Any, Any], Any], *nodes: _Node) -> _Node:
    """The merge task: fold ``merge`` over the nodes' values left to right, timed."""
    t0 = time.perf_counter()
    value = nodes[0].value
    for node in nodes[1:]:
        value = merge(value, node.value)
    dt = time.perf_counter() - t0
    return _Node(value, sum(n.count_seconds for n in nodes), sum(n.merge_seconds for n in nodes) + dt)


@dataclass
class EngineStats:
    """What ``timings.json`` records of a count on the engine."""

    engine: str
    workers: int
    partitions: int
    fan_in: int = DEFAULT_FAN_IN
    depth: int = 0
    count_seconds: float = 0.0
    merge_seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out = {"engine": self.engine, "workers": self.workers, "partitions": self.partitions}
        if self.partitions > 1:
            out.update(fan_in=self.fan_in, merge_depth=self.depth, count_task_seconds=round(self.count_seconds, 4),
                       merge_task_seconds=round(self.merge_seconds, 4))
        out.update(self.extra)
        return out


def failure(exc: BaseException, where: str) -> TokembedError:
    """The one error a failed task becomes on the caller's side: a TokembedError keeps its class, attributes and
    message, prefixed with the partition (:func:`tokembed.errors.with_context`); anything else becomes an
    :class:`EngineError` naming its type."""
    if isinstance(exc, TokembedError):
        return with_context(exc, f"{where}: {exc}")  # its class and attributes (a ParameterError's param) kept
    return EngineError(f"{where}: {type(exc).__name__}: {exc}")


class Progress:
    """Partitions done / total and bytes per second on standard error (tqdm), unless quiet."""

    def __init__(self, label: str, total_bytes: int, partitions: int, quiet: bool):
        from tqdm.auto import tqdm

        self.partitions, self.done = partitions, 0
        self.bar = tqdm(total=total_bytes, desc=label, unit="B", unit_scale=True, mininterval=0.5, leave=False,
                        disable=quiet or None, file=sys.stderr)
        self.bar.set_postfix_str(f"partitions 0/{partitions}", refresh=False)

    def advance(self, nbytes: int) -> None:
        self.done += 1
        self.bar.set_postfix_str(f"partitions {self.done}/{self.partitions}", refresh=False)
        self.bar.update(nbytes)

    def close(self) -> None:
        self.bar.close()


class Engine:
    """Where corpus statistics are counted. Subclasses: :class:`~tokembed.engine.LocalEngine` (threads of this
    process) and :class:`~tokembed.engine.DaskEngine` (a Dask cluster).

    An engine is a context manager (a cluster it started is closed on exit) and offers two calls:
    :meth:`map_reduce` (count descriptions of partitions, merge the partial results by an ordered tree) and
    :meth:`count` (the same over a corpus, with progress and the empty-corpus check).
    """

    type: str = ""
    #: ``partition_mb`` when the recipe sets none (None: the local engine streams the corpus in one pass).
    default_partition_mb: int | None = 128

    def __init__(self, workers: int = 2, partition_mb: float | None = None, fan_in: int = DEFAULT_FAN_IN):
        self.workers = workers
        self.partition_mb = partition_mb if partition_mb is not None else self.default_partition_mb
        self.fan_in = fan_in
        self.last_stats: EngineStats | None = None
        #: Documents of the corpus the last :meth:`count` counted by partition (None after a streamed count).
        self.last_documents: int | None = None

    # -- lifecycle ----------------------------------------------------------------------------------------------
    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def start(self) -> Any:
        """Start the engine now rather than at the first count (connect to the scheduler, start a local
        cluster); a no-op for threads."""
        return None

    def close(self) -> None:
        """Release what the engine started (a no-op for threads)."""

    def n_workers(self) -> int:
        """How many workers count at the same time."""
        return self.workers

    # -- work ---------------------------------------------------------------------------------------------------
    def map_reduce(self, count_fn: Callable[[Any], Any], partitions: Sequence[Any],
                   merge: Callable[[Any, Any], Any] = merge_counts, *, warm: Callable[[], None] | None = None,
                   progress: Progress | None = None, shards: int = 1) -> Any:
        """``merge``-fold of ``[count_fn(p) for p in partitions]`` in partition order, by an ordered tree.

        Parameters
        ----------
        count_fn : callable
            ``count_fn(partition) -> partial result``; runs where the engine runs tasks (a Dask worker: it must be
            picklable, by module reference).
        partitions : sequence
            Descriptions (:class:`~tokembed.corpus.Partition`, ...), not data: the task reads what it counts.
        merge : callable
            ``merge(a, b) -> ab``, associative; ``a`` always holds the earlier partitions.
        warm : callable, optional
            Run once (on one worker per host) before the counting starts: compiles the Numba kernels into the
            cache, so that workers do not all compile and write the cache at once.
        progress : Progress, optional
            Advanced by each partition's ``nbytes`` when its count is done.
        shards : int, default 1
            With more than one, each leaf's :class:`Counted` result is cut into that many shards
            (:func:`pick_shard`), each shard merged by its own tree and the merged shards joined in order
            (:func:`join_shards`): on a cluster no merge task holds the whole count. The result is the same; the
            local engine (one memory) merges unsharded.

        Returns
        -------
        The merged result (the single partition's result for one partition).

        Raises
        ------
        TokembedError
            A task's own error (a CorpusError, ...) with the partition prefixed (``partition 3/16 (FILE, bytes
            A-B): ...``), or :class:`EngineError` when a task failed past the engine's retry limit or with an
            unexpected error.
        ValueError
            If ``partitions`` is empty.
        """
        raise NotImplementedError

    def partitions(self, corpus: Any) -> list[Any] | None:
        """The partitions to count ``corpus`` in (at least 4 per worker when the corpus allows), or None to stream
        it in one pass (the local engine without ``partition_mb``)."""
        if self.partition_mb is None:
            return None
        minimum = 4 * self.n_workers()
        target = max(1, int(self.partition_mb * MB))
        if isinstance(corpus, (list, tuple)):
            return _list_partitions(corpus, target, minimum)
        return corpus.partitions(target, minimum)

    def count(self, count_fn: Callable[[Iterable[str]], Any], corpus: Any, *, label: str = "count",
              quiet: bool = True, shards: int = 1) -> Any:
        """``count_fn(documents)`` over the whole corpus, as merged partial counts (``.merge``): in one streamed
        pass, or partition by partition on the engine. The same result either way (the rule of
        :meth:`tokembed.Component.partial_counts`). Sets :attr:`last_stats`.

        Raises
        ------
        CorpusReadError
            If the corpus holds no non-empty document (as iterating it does), or a partition cannot be read (the
            message names the partition).
        """
        parts = self.partitions(corpus)
        self.last_documents = None
        if parts is None:
            t0 = time.perf_counter()
            value = count_fn(corpus)
            self.last_stats = EngineStats(self.type, self.n_workers(), 1, count_seconds=time.perf_counter() - t0)
            return value
        task = CountDocuments(count_fn, None if isinstance(corpus, (list, tuple)) else corpus)
        bar = Progress(label, sum(p.nbytes for p in parts), len(parts), quiet)
        try:
            counted = self.map_reduce(task, parts, merge_counts, warm=WarmUp(task, parts[0]), progress=bar,
                                      shards=shards)
        finally:
            bar.close()
        self.last_documents = counted.documents
        if counted.documents == 0:
            from ..errors import CorpusReadError

            name = getattr(corpus, "name", "") or "selected"
            raise CorpusReadError(f"corpus {name}: empty (no non-empty document in {len(parts)} partition"
                                  f"{'s' if len(parts) != 1 else ''})")
        return counted.value

    def transform(self, vectorizer: Any, corpus: Any, *, tokenizer: Any = None, folder: str | None = None,
                  stem: str = "", label: str = "transform", quiet: bool = True) -> Rows:
        """``vectorizer.transform`` of the whole corpus, partition by partition on the engine
        (:class:`TransformPartition`), as :class:`Rows` in corpus order: ``.stack()`` gives the matrix that
        transforming every document at once gives; with ``folder``, each partition's block was written there by
        its worker, and the rows describe the files. Sets :attr:`last_stats`.

        Raises
        ------
        CorpusReadError, TokembedError, EngineError
            As :meth:`count` (a NaN block: TokembedError naming the partition).
        """
        from dataclasses import replace

        task = TransformPartition(vectorizer.transform, tokenizer,
                                  None if isinstance(corpus, (list, tuple)) else corpus, folder, stem)
        return self.map_partitions(task, corpus, warm=replace(task, folder=None), label=label, quiet=quiet)

    def map_partitions(self, task: Callable[[Any], Any], corpus: Any, *, warm: Callable[[Any], Any] | None = None,
                       label: str = "map", quiet: bool = True) -> Any:
        """``task(partition)`` for every partition of ``corpus`` (the task reads its own documents), the results
        merged in corpus order (``.merge``, which must keep the order: a list of blocks, say). Each host first
        runs ``warm`` (default ``task``) on a :class:`ListPartition` of two short documents, to compile the kernels
        once. The local engine without ``partition_mb`` makes the whole corpus one in-memory partition. Sets
        :attr:`last_stats`.

        Raises
        ------
        CorpusReadError, TokembedError, EngineError
            As :meth:`count`.
        """
        parts = self.partitions(corpus)
        if parts is None:  # the local engine without partition_mb: one partition, the whole corpus
            docs = list(corpus)
            parts = [ListPartition(0, 0, len(docs), tuple(docs), 0)]
        bar = Progress(label, sum(p.nbytes for p in parts), len(parts), quiet)
        warm_task = _Apply(warm or task, ListPartition(0, 0, len(WARMUP_DOCS), WARMUP_DOCS, 0))
        try:
            return self.map_reduce(task, parts, merge_counts, warm=warm_task, progress=bar)
        finally:
            bar.close()

    def fit(self, component: Any, corpus: Any, *, tokenizer: Any = None, label: str = "count",
            quiet: bool = True) -> Any:
        """Fit ``component`` from counts of ``corpus`` counted here: ``component.fit_counts(count(...))`` once per
        pass (:meth:`tokembed.Component.counting_passes`; co-occurrence takes two, the vocabulary then the pairs).

        With ``tokenizer`` (a fitted one, shipped to the workers), each partition's documents are first encoded
        with it (:class:`CountTokens`: what a vectorizer or embedder of a recipe counts); without, the documents
        are counted as they are. Sets :attr:`last_stats` to the passes together (task seconds summed, ``passes``
        recorded when more than one). Returns ``component``.

        Raises
        ------
        CorpusReadError, TokembedError, EngineError
            As :meth:`count`; the component's own errors from ``fit_counts`` (an empty vocabulary, ...).
        """
        passes = int(component.counting_passes())
        total: EngineStats | None = None
        for k in range(passes):
            fn = component.partial_counts if tokenizer is None else CountTokens(component.partial_counts, tokenizer)
            step = label if passes == 1 else f"{label} (pass {k + 1}/{passes})"
            shards = int(component.count_shards())
            component.fit_counts(self.count(fn, corpus, label=step, quiet=quiet, shards=shards))
            stats = self.last_stats
            if stats is not None and shards > 1:
                stats.extra["shards"] = shards
            if total is None:
                total = stats
            elif stats is not None:
                total.count_seconds += stats.count_seconds
                total.merge_seconds += stats.merge_seconds
                total.extra.update(stats.extra)
        if total is not None and passes > 1:
            total.extra["passes"] = passes
        self.last_stats = total
        return component


def _list_partitions(docs: Sequence[str], target: int, minimum: int) -> list[ListPartition]:
    """Consecutive slices of documents already in memory, of about ``target`` bytes, at least ``minimum`` of
    them when there are enough documents."""
    sizes = [len(d.encode("utf-8", "surrogatepass")) if isinstance(d, str) else sum(len(t) + 1 for t in d)
             for d in docs]  # documents, or documents as token lists
    total = sum(sizes)
    target = max(1, min(target, -(-total // max(1, minimum)) if total else target))
    out: list[ListPartition] = []
    start, size = 0, 0
    for i, n in enumerate(sizes):
        size += n
        if size >= target:
            out.append(ListPartition(len(out), start, i + 1, tuple(docs[start:i + 1]), size))
            start, size = i + 1, 0
    if start < len(docs) or not out:
        out.append(ListPartition(len(out), start, len(docs), tuple(docs[start:]), size))
    return out


def _check_partitions(partitions: Sequence[Any]) -> list[Any]:
    parts = list(partitions)
    if not parts:
        raise ValueError("map_reduce: no partition to count")
    return parts

