"""Subword machinery shared by the BPE and WordPiece tokenizers: learn merges, apply merges.

Private to tokembed (not a plugin). Everything works on a corpus of words packed as CSR, with ids chosen by the
caller: word ``w`` is ``symbols[offsets[w]:offsets[w + 1]]`` and occurs ``counts[w]`` times.

- :func:`learn_bpe_merges` -- Sennrich et al. (2016): repeatedly merge the most frequent adjacent pair.
- :func:`learn_wordpiece_merges` -- Schuster & Nakajima (2012), Wu et al. (2016): repeatedly merge the pair with
  the highest likelihood gain ``count(ab) / (count(a) * count(b))``.
- :func:`build_merge_table` and :func:`apply_merges` -- encode words with learned merges by rank (lowest rank
  first, leftmost among equal ranks, as tiktoken and Hugging Face ``BPE`` do), optionally with BPE-dropout
  (Provilkov et al. 2020).

Importing this module is light: numba is imported by the first call. The kernels are in ``_kernels.py`` (merge
learning, tables) and ``_kernels_encode.py`` (merge application); the plain-Python references the tests compare
them with are in ``reference.py``.

Counting rule (Hugging Face ``BpeTrainer``'s, and Sennrich's ``learn_bpe.py``'s): the count of pair (x, y) is
the sum over words of ``counts[w]`` times the number of adjacent windows (x, y) in the word's current
segmentation, overlapping windows included: ``a a a`` adds 2 to (a, a). Applying a merge rewrites the word left
to right without overlap: ``a a a`` becomes ``aa a``, and ``a a a a`` becomes ``aa aa``.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from tokembed.params import Interval, ListOf, Text, raise_parameter_errors

__all__ = [
    "SUBWORD_PARAM_CONSTRAINTS",
    "MergeResult",
    "MergeTable",
    "EncodeResult",
    "learn_bpe_merges",
    "learn_wordpiece_merges",
    "build_merge_table",
    "apply_merges",
    "warmup",
]

_MAX_ID = 2**31 - 1

#: The declarations (:mod:`tokembed.params`) of the parameters the BPE and WordPiece tokenizers share, with the same
#: meaning in both; each spreads them into its own ``param_constraints``.
SUBWORD_PARAM_CONSTRAINTS = {
    "vocab_size": Interval(int, 1, None),
    "min_frequency": Interval(int, 0, None),  # 0 and 1 both allow every pair that occurs
    "special_tokens": ListOf(Text()),
    "limit_alphabet": [Interval(int, 0, None), None],
    "unk_token": [Text(), None],
    "pad_token": [Text(), None],
    "seed": Interval(int, None, None),
}
_INITIAL_RECORDS = 1 << 14  # pair records allocated up front (at most the number of windows); grown on demand
_INITIAL_HEAP = 64


class MergeResult(NamedTuple):
    """Learned merges, in order: merge ``k`` creates id ``n_base + k`` = concat(``left[k]``, ``right[k]``).

    Attributes
    ----------
    left, right : ndarray of int32, shape (n_merges,)
        The two ids merged.
    pair_count : ndarray of int64, shape (n_merges,)
        The pair's count (weighted number of windows) when it was merged.
    """

    left: np.ndarray
    right: np.ndarray
    pair_count: np.ndarray


class MergeTable(NamedTuple):
    """Open-addressing table ``(left, right) -> rank`` for :func:`apply_merges`; build with :func:`build_merge_table`.

    Attributes
    ----------
    keys : ndarray of int64, shape (2**b,)
        ``left << 32 | right``, or -1 for an empty slot.
    ranks : ndarray of int32, shape (2**b,)
        Rank of the merge stored in each slot.
    new_ids : ndarray of int32, shape (n_merges,)
        Id produced by the merge of each rank.
    """

    keys: np.ndarray
    ranks: np.ndarray
    new_ids: np.ndarray


class EncodeResult(NamedTuple):
    """Words encoded by :func:`apply_merges`, packed as CSR like the input.

    Attributes
    ----------
    ids : ndarray of int32, shape (n_out,)
        Output ids; word ``w``'s are ``ids[offsets[w]:offsets[w + 1]]``.
    offsets : ndarray of int64, shape (n_words + 1,)
        CSR offsets into ``ids``.
    first, last : ndarray of int64, shape (n_out,)
        Index into the input ``symbols`` of the first and of the last input symbol each output id covers
        (inclusive), for computing character offsets.
    """

    ids: np.ndarray
    offsets: np.ndarray
    first: np.ndarray
    last: np.ndarray


# ----------------------------------------------------------------------------------------------------------------
# validation


def _check_csr(symbols, offsets, name="symbols"):
    symbols = np.ascontiguousarray(symbols)
    offsets = np.ascontiguousarray(offsets)
    if symbols.ndim != 1 or offsets.ndim != 1:
        raise ValueError(f"{name} and offsets must be 1-D arrays, got shapes {symbols.shape} and {offsets.shape}")
    if symbols.size and not np.issubdtype(symbols.dtype, np.integer):
        raise ValueError(f"{name} must hold integers, got dtype {symbols.dtype}")
    if offsets.size == 0 or offsets[0] != 0 or offsets[-1] != symbols.size or np.any(np.diff(offsets) < 0):
        raise ValueError(f"offsets must start at 0, never decrease and end at len({name}) = {symbols.size}")
    if symbols.size >= _MAX_ID:
        raise ValueError(f"at most {_MAX_ID - 1} symbols are supported, got {symbols.size}")
    if symbols.size and (symbols.min() < 0 or symbols.max() > _MAX_ID):
        raise ValueError(f"{name} must be ids in [0, 2**31 - 1]")
    return symbols.astype(np.int32, copy=False), offsets.astype(np.int64, copy=False)


#: The scalar arguments of the functions below, declared with :mod:`tokembed.params` (a bad one raises a
#: ``ParameterError``, which is a ``ValueError``).
_ARGUMENTS = {
    "n_base": Interval(int, 0, None),
    "max_merges": Interval(int, 0, None),
    "min_frequency": Interval(int, 0, None),
    "max_token_length": Interval(int, 0, None),
    "chunk_size": Interval(int, 1, None),
    "dropout": Interval(float, 0, 1, closed="left"),
    "seed": Interval(int, 0, None),
}


# ----------------------------------------------------------------------------------------------------------------
# merge learning


def learn_bpe_merges(symbols, offsets, counts, n_base, max_merges, *, min_frequency=1, token_len=None,
                     max_token_length=0, progress: Callable[[int], None] | None = None, chunk_size=500):
    """Learn BPE merges by frequency (Sennrich, Haddow & Birch 2016, "Neural Machine Translation of Rare Words
    with Subword Units"; the rules of Hugging Face ``tokenizers``' ``BpeTrainer``).

    At each step the eligible pair with the highest count is merged into a new id; ties go to the smallest
    ``(left, right)``. Counts follow the window rule of the module docstring. Training stops after ``max_merges``
    merges or when no pair has count >= ``max(min_frequency, 1)`` (never a zero-count merge).

    Incremental: a merge visits only the positions of the merged pair; the best pair comes from a max-heap with
    lazy invalidation. The cost does not grow with the length of a word (one word of 10**6 identical symbols is
    fine). Hugging Face's order on ties can differ from ours because it numbers its ``</w>`` ids in hash-map order;
    ours is a fixed rule, independent of the order of the words.

    Parameters
    ----------
    symbols : array of int, shape (n_symbols,)
        Base ids of all words, concatenated; each in ``[0, n_base)``. Fewer than 2**31 - 1 symbols.
    offsets : array of int, shape (n_words + 1,)
        Word ``w`` is ``symbols[offsets[w]:offsets[w + 1]]``; ``offsets[0] == 0``, ``offsets[-1] == n_symbols``.
    counts : array of int, shape (n_words,)
        Frequency of each word (>= 0); words are expected to be unique, but repeats are simply added up.
    n_base : int
        Ids ``0 .. n_base - 1`` are taken (special tokens and base symbols); merge ``k`` creates id ``n_base + k``.
    max_merges : int
        Upper bound on the number of merges (>= 0); ``n_base + max_merges`` must stay below 2**31.
    min_frequency : int, default 1
        A pair with a lower count is never merged (Hugging Face's ``min_frequency``).
    token_len : array of int, shape (n_base,), optional
        Length in characters of each base id, for ``max_token_length`` (default: 1 each). Give 0 for markers such
        as ``</w>`` or ``##`` that should not count, as Hugging Face does.
    max_token_length : int, default 0
        If > 0, a pair whose two parts total more than this many characters is never merged. (Hugging Face
        exempts the initial pairs and requires newer ones to total strictly less; here every pair is allowed up to
        and including the limit.)
    progress : callable, optional
        Called as ``progress(n_merges_done)`` every ``chunk_size`` merges and at the end (e.g. to move a tqdm bar:
        Numba code cannot call Python, so the kernel runs in resumable chunks).
    chunk_size : int, default 500
        Merges per kernel call when ``progress`` is given.

    Returns
    -------
    MergeResult
        ``left``, ``right`` (int32) and ``pair_count`` (int64), each of shape (n_merges,), n_merges <= max_merges.

    Raises
    ------
    ValueError
        If an array has the wrong shape, dtype or values, or a parameter is out of range.
    """
    return _learn(0, symbols, offsets, counts, n_base, max_merges, min_frequency, token_len, max_token_length,
                  progress, chunk_size)


def learn_wordpiece_merges(symbols, offsets, counts, n_base, max_merges, *, min_frequency=1, token_len=None,
                           max_token_length=0, progress: Callable[[int], None] | None = None, chunk_size=500):
    """Learn WordPiece merges by likelihood (Schuster & Nakajima 2012, "Japanese and Korean Voice Search";
    Wu et al. 2016, "Google's Neural Machine Translation System").

    At each step the eligible pair with the highest score ``count(ab) / (count(a) * count(b))`` is merged, where
    ``count(ab)`` is the pair count of :func:`learn_bpe_merges` and ``count(x)`` the weighted number of
    occurrences of id ``x`` in the current segmentation: the merge that most increases the likelihood of a unigram
    model of the corpus. Scores are compared exactly (cross-multiplied in 192-bit integer arithmetic); ties go to
    the higher pair count, then to the smallest ``(left, right)``. Stops like :func:`learn_bpe_merges`.

    The caller chooses the base ids: for BERT-style WordPiece, a non-initial character ``c`` is a different id
    (``##c``) from an initial one.

    Parameters and return value are those of :func:`learn_bpe_merges`.
    """
    return _learn(1, symbols, offsets, counts, n_base, max_merges, min_frequency, token_len, max_token_length,
                  progress, chunk_size)


class _MergeState:
    """The arrays of one resumable run of ``_kernels.merge_run`` (layout in that module's docstring)."""

    def __init__(self, K, mode, symbols, offsets, n_base, n_ids, token_len):
        total = symbols.size
        n_words = offsets.size - 1
        lengths = np.diff(offsets)
        pos = np.full((K.N_P, total), -1, np.int32)
        pos[K.P_SYM] = symbols
        if total:
            idx = np.arange(total, dtype=np.int32)
            pos[K.P_NXT] = idx + 1
            pos[K.P_PRV] = idx - 1
            nonempty = lengths > 0
            pos[K.P_NXT, offsets[1:][nonempty] - 1] = -1
            pos[K.P_PRV, offsets[:-1][nonempty]] = -1
            pos[K.P_WORD] = np.repeat(np.arange(n_words, dtype=np.int32), lengths)
        self.pos = pos
        self.mode = mode
        self.i32 = np.full((K.N_I, n_ids), -1, np.int32)
        self.i32[K.I_TLEN] = 0
        self.i32[K.I_TLEN, :n_base] = token_len
        self.i64 = np.zeros((K.N_I, n_ids), np.int64)
        self.st = np.zeros(K.N_S, np.int64)
        windows = int(total - np.count_nonzero(lengths))
        self.r32 = np.empty((K.N_R32, 0), np.int32)
        self.r64 = np.empty((K.N_R64, 0), np.int64)
        self.h64 = np.empty((K.N_H, 0), np.int64)
        self.hsc = np.empty(0, np.float64)
        self._grow_records(K, min(windows, _INITIAL_RECORDS) + 1)
        self._grow_heap(K, 0)

    def _grow_records(self, K, need):
        cap = max(need, 2 * self.r32.shape[1])
        n = int(self.st[K.S_NREC])
        r32 = np.empty((K.N_R32, cap), np.int32)
        r64 = np.empty((K.N_R64, cap), np.int64)
        r32[:, :n] = self.r32[:, :n]
        r64[:, :n] = self.r64[:, :n]
        self.r32, self.r64 = r32, r64
        size = 1 << max(4, int(2 * cap - 1).bit_length())  # a power of two >= 2 * cap: load <= 1/2
        self.ht_key = np.full(size, -1, np.int64)
        self.ht_val = np.empty(size, np.int32)
        K.fill_pair_table(r32[K.R_LEFT], r32[K.R_RIGHT], n, self.ht_key, self.ht_val)

    def _grow_heap(self, K, need):
        old = self.h64.shape[1]
        cap = max(need + need // 4, 2 * old, _INITIAL_HEAP)
        h64 = np.empty((K.N_H, cap), np.int64)
        h64[:, :old] = self.h64
        self.h64 = h64
        if self.mode == K.MODE_LIKELIHOOD:
            hsc = np.empty(cap, np.float64)
            hsc[:old] = self.hsc
            self.hsc = hsc

    def grow(self, K):
        if self.st[K.S_NEED_REC] > self.r32.shape[1]:
            self._grow_records(K, int(self.st[K.S_NEED_REC]))
        if self.st[K.S_NEED_HEAP] > self.h64.shape[1]:
            self._grow_heap(K, int(self.st[K.S_NEED_HEAP]))


def _learn(mode, symbols, offsets, counts, n_base, max_merges, min_frequency, token_len, max_token_length,
           progress, chunk_size):
    from . import _kernels as K

    raise_parameter_errors("", _ARGUMENTS, {"n_base": n_base, "max_merges": max_merges, "min_frequency": min_frequency,
                                            "max_token_length": max_token_length, "chunk_size": chunk_size})
    n_base, max_merges, min_frequency = int(n_base), int(max_merges), int(min_frequency)
    max_token_length, chunk_size = int(max_token_length), int(chunk_size)
    symbols, offsets = _check_csr(symbols, offsets)
    counts = np.ascontiguousarray(counts)
    if counts.shape != (offsets.size - 1,) or (counts.size and not np.issubdtype(counts.dtype, np.integer)):
        raise ValueError(f"counts must be integers of shape ({offsets.size - 1},), got {counts.dtype} {counts.shape}")
    counts = counts.astype(np.int64, copy=False)
    if counts.size and counts.min() < 0:
        raise ValueError("counts must be >= 0")
    if symbols.size and symbols.max() >= n_base:
        raise ValueError(f"symbols must be base ids in [0, n_base = {n_base}), got {symbols.max()}")
    if token_len is None:
        token_len = np.ones(n_base, np.int32)
    token_len = np.ascontiguousarray(token_len)
    if (token_len.shape != (n_base,) or (n_base and not np.issubdtype(token_len.dtype, np.integer))
            or (n_base and (token_len.min() < 0 or token_len.max() > 2**20))):
        raise ValueError(f"token_len must be integers of shape ({n_base},) with values in [0, 2**20]")
    # each merge removes at least one symbol: the number of merges is bounded by the number of windows
    windows = int(symbols.size - np.count_nonzero(np.diff(offsets)))
    max_merges = min(max_merges, windows)
    if n_base + max_merges > _MAX_ID:
        raise ValueError(f"n_base + max_merges must be at most 2**31 - 1, got {n_base + max_merges}")

    if max_merges == 0:
        return MergeResult(np.empty(0, np.int32), np.empty(0, np.int32), np.empty(0, np.int64))
    state = _MergeState(K, mode, symbols, offsets, n_base, n_base + max_merges, token_len)
    left = np.empty(max_merges, np.int32)
    right = np.empty(max_merges, np.int32)
    pair_count = np.empty(max_merges, np.int64)
    thr = max(min_frequency, 1)
    step = chunk_size if progress is not None else max_merges
    k_stop = min(step, max_merges)
    while True:
        s = state
        status = K.merge_run(mode, counts, n_base, thr, max_token_length, k_stop, s.pos, s.r32, s.r64, s.ht_key,
                             s.ht_val, s.i32, s.i64, s.h64, s.hsc, s.st, left, right, pair_count)
        if status == K.STATUS_NEED_ROOM:
            state.grow(K)
            continue
        k = int(state.st[K.S_K])
        if progress is not None:
            progress(k)
        if status == K.STATUS_DONE or k >= max_merges:
            break
        k_stop = min(k + step, max_merges)
    return MergeResult(left[:k].copy(), right[:k].copy(), pair_count[:k].copy())


# ----------------------------------------------------------------------------------------------------------------
# merge application


def build_merge_table(left, right, new_ids) -> MergeTable:
    """Build the ``(left, right) -> (rank, new id)`` table that :func:`apply_merges` uses.

    Parameters
    ----------
    left, right : array of int, shape (n_merges,)
        Merge ``k`` (its rank) joins ``left[k]`` and ``right[k]``; ids in [0, 2**31 - 1].
    new_ids : array of int, shape (n_merges,)
        Id each merge creates; for merges from :func:`learn_bpe_merges`, ``n_base + np.arange(n_merges)``.

    Returns
    -------
    MergeTable
        If a pair occurs twice, its first (lowest) rank is kept.

    Raises
    ------
    ValueError
        If the arrays have different lengths or ids out of range.
    """
    from . import _kernels as K

    left = np.ascontiguousarray(left)
    right = np.ascontiguousarray(right)
    new_ids = np.ascontiguousarray(new_ids)
    n = left.size
    if left.shape != (n,) or right.shape != (n,) or new_ids.shape != (n,):
        raise ValueError(f"left, right and new_ids must be 1-D of equal length, got {left.shape}, {right.shape}, "
                         f"{new_ids.shape}")
    for name, a in (("left", left), ("right", right), ("new_ids", new_ids)):
        if n and (not np.issubdtype(a.dtype, np.integer) or a.min() < 0 or a.max() > _MAX_ID):
            raise ValueError(f"{name} must be integer ids in [0, 2**31 - 1]")
    size = 1 << max(4, int(2 * n).bit_length())  # load < 1/2
    keys = np.full(size, -1, np.int64)
    ranks = np.empty(size, np.int32)
    K.fill_pair_table(left.astype(np.int32, copy=False), right.astype(np.int32, copy=False), n, keys, ranks)
    return MergeTable(keys, ranks, new_ids.astype(np.int32))


def apply_merges(symbols, offsets, table: MergeTable, *, dropout=0.0, seed=0) -> EncodeResult:
    """Encode words by applying merges by rank (lowest rank first, leftmost among equal ranks).

    The rule of tiktoken and of Hugging Face ``BPE``; on the training words it reproduces the segmentation that
    :func:`learn_bpe_merges` ended with. O(n log n) per word of n symbols (a heap over a linked list), so one word
    of 10**6 symbols is fine.

    Parameters
    ----------
    symbols : array of int, shape (n_symbols,)
        Ids of the words, concatenated (ids absent from the table are left as they are).
    offsets : array of int, shape (n_words + 1,)
        Word ``w`` is ``symbols[offsets[w]:offsets[w + 1]]``.
    table : MergeTable
        From :func:`build_merge_table`.
    dropout : float, default 0.0
        BPE-dropout probability in [0, 1) (Provilkov, Emelianenko & Voita 2020): each candidate merge is skipped
        with this probability. 0 gives plain BPE.
    seed : int, default 0
        Seed of the dropout randomness (splitmix64 per word): the same seed and batch give the same output.

    Returns
    -------
    EncodeResult

    Raises
    ------
    ValueError
        If the arrays are malformed or ``dropout`` is outside [0, 1).
    """
    from ._kernels_encode import encode_words

    symbols, offsets = _check_csr(symbols, offsets)
    raise_parameter_errors("", _ARGUMENTS, {"dropout": dropout, "seed": seed})  # a ParameterError is a ValueError
    dropout, seed = float(dropout), int(seed) & (2**64 - 1)
    n = symbols.size
    ids = np.empty(n, np.int32)
    first = np.empty(n, np.int64)
    last = np.empty(n, np.int64)
    out_offsets = np.empty(offsets.size, np.int64)
    n_out = encode_words(symbols, offsets, table.keys, table.ranks, table.new_ids, dropout, np.uint64(seed), ids,
                           first, last, out_offsets)
    return EncodeResult(ids[:n_out].copy(), out_offsets, first[:n_out].copy(), last[:n_out].copy())


_WARM_SYMBOLS = ([0, 1, 0, 1, 1], [0, 3, 5], [2, 1])


def warmup_merge_loop() -> None:
    """Compile (or load) the merge loop, ``merge_run`` (both criteria share one compiled kernel): the single most
    expensive compilation of tokembed (about 5 s of CPU), so ``tokembed warmup`` gives it a process of its own."""
    symbols, offsets, counts = (np.array(a, t) for a, t in zip(_WARM_SYMBOLS, (np.int32, np.int64, np.int64)))
    learn_bpe_merges(symbols, offsets, counts, 2, 2)
    learn_wordpiece_merges(symbols, offsets, counts, 2, 2)


def warmup_apply() -> None:
    """Compile (or load) the pair table and merge application kernels (with and without dropout)."""
    symbols, offsets, _ = (np.array(a, t) for a, t in zip(_WARM_SYMBOLS, (np.int32, np.int64, np.int64)))
    table = build_merge_table(np.array([0], np.int32), np.array([1], np.int32), np.array([2], np.int64))
    apply_merges(symbols, offsets, table)
    apply_merges(symbols, offsets, table, dropout=0.1, seed=1)


#: The warm-up steps of this module, for a plugin's ``warmup_shared()``.
WARMUP_STEPS = ["tokembed.plugins._subword:warmup_merge_loop", "tokembed.plugins._subword:warmup_apply"]


def warmup() -> None:
    """Compile (or load from Numba's cache) every kernel of this module by running each on a tiny input."""
    warmup_merge_loop()
    warmup_apply()
