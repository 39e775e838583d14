"""Co-occurrence counting over CSR-packed token ids: partial counts that merge exactly, and the vocabulary rule.

This is the layer the vectorizer and the GloVe embedder share. Everything here takes NumPy arrays (a
:class:`~tokembed.sequences.TokenSequences`' ``ids`` and ``offsets``) and a kept-vocabulary mapping ``row_of_id``
(the row of each input id, -1 for a dropped id); nothing works on strings per token.

How the counting runs (the scheme, and why)
-------------------------------------------
Pairs are counted in the stored half only: (left, right) when the context is left-only, (min, max) of the two
rows when symmetric (the mirror image is written once, at the end). The rows are ranks in count-descending order,
so the most frequent words have the smallest rows, and:

1. pairs of two rows below ``n_dense`` (the 2,048 most frequent words by default: 78% of the pair occurrences
   of wv_corpus) are added into a dense int64 block, one random access each and no further work;
2. every other pair is written to a buffer as one packed int64 key ``((a * n_rows + b) << code_bits) | code``
   (the distance code rides in the low bits, so no weight array travels with it); a full buffer is radix-sorted
   on the pair bits only and reduced to a sorted run of distinct pairs (:func:`_kernels.sort_reduce`);
3. runs are kept on a stack and merged whenever the newest is at least half as long as the one below it (a
   binary-counter merge), so at most ``log2`` of them live at once and the memory is bounded by the number of
   distinct pairs (plus one buffer), not by the number of pair occurrences; this is GloVe's dense array for
   frequent pairs plus sorted overflow runs, kept in memory;
4. with ``workers`` threads, the token range is cut into ``workers`` equal parts; each thread has its own dense
   block and its own runs (no locks, no shared writes); at the end the dense blocks are added and every run is
   merged.

Why not a hash table: about 150 M pair occurrences fall on 12.3 M distinct cells of the stored half for
wv_corpus; a hash probe per occurrence into a table of that size is a cache miss each time, where the dense block
serves the frequent pairs from cache and the radix sort streams the other 33 M occurrences sequentially. Measured
on one thread (CPU time, wv_corpus): the window loop 1.3 s, sorting 0.7 s, merging runs 0.8 s; a larger dense
block (4,096 words, 128 MB per thread) moves time from sorting to the window loop's cache misses without a gain.

Order independence (results never depend on chunks or threads)
---------------------------------------------------------------
Every sum is an int64 sum of integers: the weight of distance ``d`` is ``scale // d`` with ``scale`` the least
common multiple of 1..window (2,520 for window 10), which ``scale / d`` divides exactly, so ``sum / scale`` is the
exact rational sum of the ``1 / d`` weights, rounded once to float64 at the end. Integer addition is associative,
so any order, chunking or thread count gives identical bits. For ``window`` above 22 that multiple exceeds 2^32
and the weights are instead ``round(2^24 / d)`` (``scale = 2^24``): still exactly order-independent, with each
weight off by at most ``2^-25`` (a relative error below ``d * 3e-8``). Uniform weighting uses ``scale = 1``.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np

from tokembed.errors import TokembedError

__all__ = [
    "CooccurrenceCounts",
    "PairCounter",
    "TokenCounts",
    "count_cooccurrences",
    "cooccurrence_coo",
    "select_vocabulary",
    "weight_scale",
]

#: Rows below this are counted in a dense block by default (int64, n_dense ** 2 cells per thread).
DEFAULT_DENSE_WORDS = 2048
#: Pair keys per sort buffer (int64 each; one buffer and its radix scratch per thread).
DEFAULT_BUFFER_KEYS = 1 << 22
_MAX_LCM_SCALE = 2**32
_FIXED_POINT_SCALE = 2**24
_INT64_MAX = 2**63 - 1


def _kernels():
    """The Numba kernels, imported on first use (building the registry must not import numba)."""
    from . import _kernels

    return _kernels


def weight_scale(window: int, weighting: str) -> tuple[int, np.ndarray]:
    """The integer scale of the weights and the scaled weight of each distance code.

    Returns
    -------
    scale : int
        ``lcm(1, ..., window)`` for ``"harmonic"`` when it is at most 2^32 (window <= 22), else 2^24; 1 for
        ``"uniform"``.
    weights : int64 ndarray of shape (window,) for "harmonic", (1,) for "uniform"
        ``weights[d - 1] = scale // d`` (exact when scale is the lcm; ``round(2^24 / d)`` otherwise), or ``[1]``.
    """
    if weighting == "uniform":
        return 1, np.ones(1, np.int64)
    lcm = 1
    for d in range(1, window + 1):
        lcm = lcm * d // math.gcd(lcm, d)
        if lcm > _MAX_LCM_SCALE:
            break
    if lcm <= _MAX_LCM_SCALE:
        return lcm, np.array([lcm // d for d in range(1, window + 1)], np.int64)
    scale = _FIXED_POINT_SCALE
    return scale, np.array([(2 * scale + d) // (2 * d) for d in range(1, window + 1)], np.int64)


@dataclass(frozen=True, eq=False)
class CooccurrenceCounts:
    """Partial co-occurrence counts over a fixed set of rows: they merge exactly, in any order.

    This is a mergeable statistic (docs/architecture.md, "Counts that merge"): count each chunk (or cluster
    partition, cut at document boundaries) with :func:`count_cooccurrences` over the same ``row_of_id``, and
    :meth:`merge` the results (any tree, any order: the sums are integers); the merge equals one pass over the whole
    corpus.

    Attributes
    ----------
    n_rows : int
        Number of kept words V (the matrix is (V, V)).
    window : int
    symmetric : bool
    weighting : {"harmonic", "uniform"}
    scale : int
        Every value is an integer multiple of ``1 / scale`` (see :func:`weight_scale`).
    keys : int64 ndarray of shape (nnz_half,)
        Strictly increasing ``a * n_rows + b`` of the stored cells: all (left, right) cells when left-only, the
        upper half a <= b when symmetric.
    sums : int64 ndarray of shape (nnz_half,)
        The scaled weight sum of each stored cell (> 0).
    n_tokens : int
        Kept tokens counted (for information; sums over merges).
    """

    n_rows: int
    window: int
    symmetric: bool
    weighting: str
    scale: int
    keys: np.ndarray
    sums: np.ndarray
    n_tokens: int = 0

    @property
    def nnz(self) -> int:
        """Non-zero cells of the full (mirrored) matrix."""
        if not self.symmetric:
            return int(self.keys.size)
        diag = int(np.count_nonzero(self.keys // self.n_rows == self.keys % self.n_rows))
        return 2 * int(self.keys.size) - diag

    def _compatible(self, other: "CooccurrenceCounts") -> None:
        mine = (self.n_rows, self.window, self.symmetric, self.weighting, self.scale)
        theirs = (other.n_rows, other.window, other.symmetric, other.weighting, other.scale)
        if mine != theirs:
            raise TokembedError(f"cooccurrence: cannot merge counts of (n_rows, window, symmetric, weighting, "
                                f"scale) = {theirs} into {mine}")

    def merge(self, other: "CooccurrenceCounts") -> "CooccurrenceCounts":
        """The counts of both corpora together (exact; ``a.merge(b)`` equals ``b.merge(a)`` bit for bit)."""
        self._compatible(other)
        keys, sums = _kernels().merge_runs(self.keys, self.sums, other.keys, other.sums)
        return CooccurrenceCounts(self.n_rows, self.window, self.symmetric, self.weighting, self.scale, keys, sums,
                                  self.n_tokens + other.n_tokens)

    def shard(self, k: int, n: int) -> "CooccurrenceCounts":
        """The cells of rows ``k * V // n`` to ``(k + 1) * V // n - 1`` (shard ``k`` of ``n``; V = ``n_rows``),
        which merge with the same shard of other counts; :meth:`concat` of the ``n`` merged shards, in order, is
        the merge of the whole counts (the keys are ordered by row). ``n_tokens`` rides on shard 0."""
        lo, hi = (k * self.n_rows // n) * self.n_rows, ((k + 1) * self.n_rows // n) * self.n_rows
        a, b = np.searchsorted(self.keys, [lo, hi])
        return CooccurrenceCounts(self.n_rows, self.window, self.symmetric, self.weighting, self.scale,
                                  self.keys[a:b].copy(), self.sums[a:b].copy(), self.n_tokens if k == 0 else 0)

    @classmethod
    def concat(cls, shards: Sequence["CooccurrenceCounts"]) -> "CooccurrenceCounts":
        """Shards ``0 .. n - 1`` (of :meth:`shard`), each merged apart, as one count."""
        first = shards[0]
        for other in shards[1:]:
            first._compatible(other)
        return CooccurrenceCounts(first.n_rows, first.window, first.symmetric, first.weighting, first.scale,
                                  np.concatenate([p.keys for p in shards]), np.concatenate([p.sums for p in shards]),
                                  sum(p.n_tokens for p in shards))

    @classmethod
    def merge_all(cls, parts: Iterable["CooccurrenceCounts"]) -> "CooccurrenceCounts":
        """Merge any number of partial counts (pairwise, as a balanced tree)."""
        items = list(parts)
        if not items:
            raise TokembedError("cooccurrence: no partial counts to merge")
        while len(items) > 1:
            items = [items[i].merge(items[i + 1]) if i + 1 < len(items) else items[i]
                     for i in range(0, len(items), 2)]
        return items[0]

    def to_csr_arrays(self, dtype: Any = np.float64) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The full matrix as ``(indptr int64 (V + 1,), indices int32 (nnz,), values (nnz,) of dtype)``, columns
        sorted within each row; each value is the exact sum rounded once to float64 (then to float32 if asked)."""
        single = np.dtype(dtype) == np.float32
        if not single and np.dtype(dtype) != np.float64:
            raise TokembedError(f"cooccurrence: dtype must be float32 or float64, got {np.dtype(dtype)}")
        indptr, indices, v64, v32 = _kernels().runs_to_csr(self.keys, self.sums, self.n_rows, self.symmetric,
                                                           float(self.scale), bool(single))
        return indptr, indices, (v32 if single else v64)

    def to_coo(self, dtype: Any = np.float64) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The full matrix as COO arrays ``(row int32 (nnz,), col int32 (nnz,), value dtype (nnz,))`` sorted by
        (row, col); mirrored when symmetric (the diagonal holds both directions, as GloVe writes it)."""
        indptr, indices, values = self.to_csr_arrays(dtype)
        rows = np.repeat(np.arange(self.n_rows, dtype=np.int32), np.diff(indptr))
        return rows, indices, values

    def to_csr(self, dtype: Any = np.float32):
        """The full matrix as a ``scipy.sparse.csr_matrix`` of shape (V, V), sorted indices, no explicit zeros."""
        import scipy.sparse as sp

        indptr, indices, values = self.to_csr_arrays(dtype)
        m = sp.csr_matrix((values, indices, indptr), shape=(self.n_rows, self.n_rows))
        m.has_sorted_indices = True
        return m


@dataclass(frozen=True, eq=False)
class TokenCounts:
    """Partial token counts, pass 1 of co-occurrence counting (the vocabulary), that merge exactly.

    What :meth:`CooccurrenceVectorizer.partial_counts` returns before the vocabulary is fixed. Counts of parts of
    one tokenizer's output share its vocabulary and are added; parts given as token strings (ids in order of first
    occurrence) are merged on the token, the second part's new tokens after the first's, which is the order of
    first occurrence of the two parts together. Either way the merge equals one pass over the whole input.

    Attributes
    ----------
    keys : tuple of str, length n
        The input vocabulary (``TokenSequences.vocab``).
    counts : int64 ndarray of shape (n,)
        Occurrences of each key (special tokens included; the vocabulary rule drops them).
    special : frozenset of int
        Indices of ``keys`` that are special tokens.
    n_tokens, n_docs : int
        Tokens and documents counted.
    from_sequences : bool
        Every part was given as :class:`~tokembed.sequences.TokenSequences` (a tokenizer's output).
    """

    keys: tuple
    counts: np.ndarray
    special: frozenset = frozenset()
    n_tokens: int = 0
    n_docs: int = 0
    from_sequences: bool = True

    def merge(self, other: "TokenCounts") -> "TokenCounts":
        """The counts of this part followed by ``other``'s."""
        flag = self.from_sequences and other.from_sequences
        n_tokens, n_docs = self.n_tokens + other.n_tokens, self.n_docs + other.n_docs
        if self.keys == other.keys:
            return TokenCounts(self.keys, self.counts + other.counts, self.special | other.special, n_tokens, n_docs,
                               flag)
        index = {k: i for i, k in enumerate(self.keys)}
        keys = list(self.keys)
        for k in other.keys:
            if k not in index:
                index[k] = len(keys)
                keys.append(k)
        counts = np.zeros(len(keys), np.int64)
        counts[: len(self.keys)] = self.counts
        where = np.fromiter((index[k] for k in other.keys), dtype=np.int64, count=len(other.keys))
        np.add.at(counts, where, other.counts)
        special = self.special | frozenset(int(where[i]) for i in other.special)
        return TokenCounts(tuple(keys), counts, special, n_tokens, n_docs, flag)


def select_vocabulary(keys: Sequence[str], counts: np.ndarray, min_count: int = 1,
                      max_vocab: int | None = None, drop: Iterable[int] = ()) -> np.ndarray:
    """The indices of the kept words, in row order: counts >= ``min_count``, then the ``max_vocab`` first in
    count-descending order, ties broken by the key (code-point order), as GloVe's ``vocab_count`` orders them.

    Parameters
    ----------
    keys : sequence of str, length n
    counts : int64 array-like, shape (n,)
    drop : iterable of int
        Indices never kept (special tokens).

    Returns
    -------
    int64 ndarray of shape (V,): indices into ``keys`` (V may be 0).

    Notes
    -----
    GloVe's ``vocab_count`` truncates to ``max_vocab`` after a sort that breaks ties arbitrarily (hash order);
    here the cut is deterministic (the ties sorted by key before the cut).
    """
    counts = np.asarray(counts, dtype=np.int64)
    ok = counts >= max(int(min_count), 1)
    for i in drop:
        ok[int(i)] = False
    cand = np.flatnonzero(ok).tolist()
    cnt = counts.tolist()
    kept = sorted(cand, key=lambda i: (-cnt[i], keys[i]))  # str order is code-point order
    if max_vocab is not None:
        kept = kept[: int(max_vocab)]
    kept = np.asarray(kept, dtype=np.int64)
    return kept.astype(np.int64)


def _resolve_workers(workers: int | None) -> int:
    if workers is None or workers == -1:
        return os.cpu_count() or 1
    return max(1, int(workers))


def count_cooccurrences(ids: np.ndarray, offsets: np.ndarray, row_of_id: np.ndarray, n_rows: int, *,
                        window: int = 10, symmetric: bool = True, weighting: str = "harmonic",
                        workers: int | None = None, dense_words: int | None = None,
                        buffer_keys: int | None = None) -> CooccurrenceCounts:
    """Count the weighted co-occurrences of a corpus of CSR-packed ids, as GloVe's ``cooccur`` does.

    For every token ``right`` whose row is kept and each of the (up to) ``window`` kept tokens ``left`` before it
    in the same document, at distance ``d`` (counted over kept tokens: dropped ids are removed before windowing),
    ``X[left, right] += w(d)`` and, when ``symmetric``, ``X[right, left] += w(d)`` too (so a word paired with
    itself adds ``2 w(d)`` to its diagonal cell). ``w(d) = 1 / d`` (``"harmonic"``) or 1 (``"uniform"``). No pair
    crosses a document boundary. One :meth:`PairCounter.add` of the whole arrays (see :class:`PairCounter` to
    count a corpus chunk by chunk).

    Parameters
    ----------
    ids : int32 ndarray of shape (n_tokens,)
    offsets : int64 ndarray of shape (n_docs + 1,)
        Document i is ``ids[offsets[i]:offsets[i + 1]]`` (a :class:`~tokembed.sequences.TokenSequences`' arrays).
    row_of_id : int32 ndarray of shape (vocab_size,)
        The row (0 .. n_rows - 1) of each id, or -1 for an id to drop (filtered words, special tokens).
    n_rows : int
        V, the number of kept words.
    window : int >= 1
    symmetric : bool
    weighting : {"harmonic", "uniform"}
    workers : int or None
        Threads; None or -1 for one per CPU. The result does not depend on it.
    dense_words, buffer_keys : int, optional
        Tuning (and tests): rows below ``dense_words`` on both sides are counted in a dense block (default
        2,048); the sort buffer holds ``buffer_keys`` keys (default 2^22). The result does not depend on them.

    Returns
    -------
    CooccurrenceCounts

    Raises
    ------
    TokembedError
        If the arrays do not fit together, or V is too large to pack a pair into an int64 key.
    """
    counter = PairCounter(row_of_id, n_rows, window=window, symmetric=symmetric, weighting=weighting,
                          workers=workers, dense_words=dense_words, buffer_keys=buffer_keys)
    counter.add(ids, offsets)
    return counter.result()


class PairCounter:
    """:func:`count_cooccurrences` fed chunk by chunk: each :meth:`add` counts whole documents into state that
    persists across chunks (per thread: a dense block and a stack of sorted runs), and :meth:`result` merges it
    once. The counts equal one :func:`count_cooccurrences` over the chunks concatenated, bit for bit (integer sums;
    no pair crosses a document, so none crosses a chunk), while only one chunk's ids are held: this is how a
    memory-mapped corpus is counted (:meth:`~tokembed.sequences.TokenSequences.in_memory_chunks`). Memory: the
    chunk, plus per thread ``dense_words ** 2`` int64 cells, one sort buffer and the runs (bounded by the distinct
    pairs).

    Parameters are those of :func:`count_cooccurrences` without the arrays.

    Raises
    ------
    TokembedError
        For parameters that cannot count (``window < 1``, an unknown ``weighting``, a ``row_of_id`` with a row
        >= ``n_rows``, V too large to pack a pair into an int64 key); :meth:`add` for arrays that do not fit.
    """

    def __init__(self, row_of_id: np.ndarray, n_rows: int, *, window: int = 10, symmetric: bool = True,
                 weighting: str = "harmonic", workers: int | None = None, dense_words: int | None = None,
                 buffer_keys: int | None = None):
        self.row_of_id = np.ascontiguousarray(row_of_id, dtype=np.int32)
        self.n_rows = n_rows = int(n_rows)
        self.window = window = int(window)
        self.symmetric = bool(symmetric)
        self.weighting = weighting
        if window < 1:
            raise TokembedError(f"cooccurrence: window must be >= 1, got {window}")
        if weighting not in ("harmonic", "uniform"):
            raise TokembedError(f"cooccurrence: weighting must be 'harmonic' or 'uniform', got {weighting!r}")
        if self.row_of_id.size and int(self.row_of_id.max()) >= n_rows:
            raise TokembedError(f"cooccurrence: row_of_id holds a row >= n_rows ({n_rows})")
        self.scale, self.weights = weight_scale(window, weighting)
        self.code_bits = int(window - 1).bit_length() if weighting == "harmonic" else 0
        if (n_rows * n_rows) << self.code_bits > _INT64_MAX:
            raise TokembedError(f"cooccurrence: {n_rows} rows are too many to pack a pair into an int64 key")
        self.n_dense = min(n_rows, DEFAULT_DENSE_WORDS if dense_words is None else max(0, int(dense_words)))
        self.cap = DEFAULT_BUFFER_KEYS if buffer_keys is None else max(int(buffer_keys), window)
        self.block_tokens = max(1, self.cap // window)
        self.pair_bits = int(n_rows * n_rows - 1).bit_length() if n_rows > 1 else 0
        self.workers = _resolve_workers(workers)
        self.kept_tokens = 0
        # per thread: [dense block, stack of sorted runs]; thread k only ever touches self._states[k]
        self._states: list[list[Any]] = []

    def add(self, ids: np.ndarray, offsets: np.ndarray) -> None:
        """Count the documents ``ids`` (int32 (n_tokens,)) / ``offsets`` (int64 (n_docs + 1,), from 0): whole
        documents, as a :class:`~tokembed.sequences.TokenSequences`' arrays.

        Raises
        ------
        TokembedError
            If the arrays do not fit together or with ``row_of_id``, or the kept tokens so far could overflow the
            int64 sums.
        """
        _k = _kernels()
        ids = np.ascontiguousarray(ids, dtype=np.int32)
        offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        row_of_id, window = self.row_of_id, self.window
        if offsets.size == 0 or offsets[0] != 0 or offsets[-1] != ids.size:
            raise TokembedError("cooccurrence: offsets must start at 0 and end at the number of ids")
        if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= row_of_id.size):
            raise TokembedError(f"cooccurrence: an id is outside row_of_id (size {row_of_id.size})")
        kept_tokens = self.kept_tokens + (int(np.count_nonzero(row_of_id[ids] >= 0)) if ids.size else 0)
        # the largest possible sum: every kept token adds at most `scale * H(window) * 2` to one cell
        if kept_tokens * 2 * int(self.weights.sum()) > _INT64_MAX:
            raise TokembedError(f"cooccurrence: {kept_tokens} tokens with window {window} could overflow the int64 "
                                "sums; count the corpus in parts and merge fewer of them")
        self.kept_tokens = kept_tokens
        n_workers = min(self.workers, max(1, ids.size // (4 * self.block_tokens) + 1))
        while len(self._states) < n_workers:
            self._states.append([np.zeros(self.n_dense * self.n_dense, np.int64), []])
        symmetric, code_bits, weights, n_rows = self.symmetric, self.code_bits, self.weights, self.n_rows
        n_dense, pair_bits = self.n_dense, self.pair_bits

        def count_part(k: int, lo: int, hi: int) -> None:
            dense, stack = self._states[k]
            buf = np.empty(min(self.cap, max(1, (hi - lo) * window)), np.int64)
            tmp = np.empty_like(buf)
            step = max(1, buf.size // window)
            for start in range(lo, hi, step):
                stop = min(hi, start + step)
                n = _k.count_block(ids, offsets, row_of_id, start, stop, window, symmetric, code_bits, weights,
                                   n_rows, n_dense, dense, buf)
                if n:
                    stack.append(_k.sort_reduce(buf, n, tmp, pair_bits, code_bits, weights))
                    while len(stack) > 1 and 2 * stack[-1][0].size >= stack[-2][0].size:  # binary-counter merges
                        top = stack.pop()
                        below = stack.pop()
                        stack.append(_k.merge_runs(below[0], below[1], top[0], top[1]))

        n_tok = int(ids.size)
        cuts = [n_tok * i // n_workers for i in range(n_workers + 1)]
        parts = [(k, cuts[k], cuts[k + 1]) for k in range(n_workers) if cuts[k] < cuts[k + 1]]
        if len(parts) > 1:
            with ThreadPoolExecutor(max_workers=len(parts), thread_name_prefix="tokembed-cooc") as pool:
                list(pool.map(lambda p: count_part(*p), parts))
        else:
            for p in parts:
                count_part(*p)

    def result(self) -> CooccurrenceCounts:
        """The counts of every chunk added (the counter is emptied: add nothing after)."""
        _k = _kernels()
        runs: list[tuple[np.ndarray, np.ndarray]] = []
        dense_total = None
        states, self._states = self._states, []

        def collapse(stack: list[tuple[np.ndarray, np.ndarray]]) -> None:
            while len(stack) > 1:
                top = stack.pop()
                below = stack.pop()
                stack.append(_k.merge_runs(below[0], below[1], top[0], top[1]))

        if len(states) > 1:  # each thread's runs in a thread of its own, so the main thread merges one per thread
            with ThreadPoolExecutor(max_workers=len(states), thread_name_prefix="tokembed-cooc") as pool:
                list(pool.map(lambda state: collapse(state[1]), states))
        for dense, stack in states:
            collapse(stack)
            runs.extend(stack)
            if dense_total is None:
                dense_total = dense
            else:
                dense_total += dense
        del states
        if dense_total is not None and self.n_dense:
            runs.append(_k.dense_to_run(dense_total, self.n_dense, self.n_rows))
        del dense_total
        runs.sort(key=lambda r: r[0].size)
        while len(runs) > 1:
            a = runs.pop(0)
            b = runs.pop(0)
            merged = _k.merge_runs(a[0], a[1], b[0], b[1])
            # keep the list ordered by size so the small runs merge first
            pos = 0
            while pos < len(runs) and runs[pos][0].size < merged[0].size:
                pos += 1
            runs.insert(pos, merged)
        if runs:
            keys, sums = runs[0]
        else:
            keys, sums = np.zeros(0, np.int64), np.zeros(0, np.int64)
        return CooccurrenceCounts(self.n_rows, self.window, self.symmetric, self.weighting, self.scale, keys, sums,
                                  self.kept_tokens)


def cooccurrence_coo(ids: np.ndarray, offsets: np.ndarray, row_of_id: np.ndarray, n_rows: int, *,
                     window: int = 10, symmetric: bool = True, weighting: str = "harmonic",
                     dtype: Any = np.float64, workers: int | None = None
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The co-occurrence matrix of :func:`count_cooccurrences` as raw COO arrays, without building scipy objects.

    Returns
    -------
    row : int32 ndarray (nnz,)
    col : int32 ndarray (nnz,)
    value : ndarray (nnz,) of ``dtype`` (float64 by default: the exact weighted count rounded once)
        Sorted by (row, col); every value > 0; mirrored when ``symmetric``.
    """
    counts = count_cooccurrences(ids, offsets, row_of_id, n_rows, window=window, symmetric=symmetric,
                                 weighting=weighting, workers=workers)
    return counts.to_coo(dtype)
