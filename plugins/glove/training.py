"""The GloVe training loop around the Numba kernels: records, epochs, threads, cost, divergence checks.

:func:`make_records` packs co-occurrence entries (COO) into the kernels' 16-byte records; :func:`train` runs the
epochs (AdaGrad, Hogwild threads, a fresh pseudo-random record order per epoch) and returns the parameters and the
cost of every epoch. Both work on NumPy arrays only; :class:`~tokembed.plugins.glove.embedder.GloVe` is the
component around them.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from tokembed.errors import TokembedError

__all__ = ["GloVeParameters", "TrainingDivergedError", "make_records", "epoch_key", "order_bits", "train"]

#: Row length of the parameter arrays is dim + 1 rounded up to a multiple of this (16 float32 = one 64-byte line).
_ROW_ALIGN = 16


class TrainingDivergedError(TokembedError, ArithmeticError):
    """The cost or a parameter became NaN or infinite during training (the learning rate is too high for the
    data). ``epoch`` is the 1-based epoch in which it happened."""

    def __init__(self, message: str, epoch: int):
        super().__init__(message)
        self.epoch = epoch


@dataclass
class GloVeParameters:
    """The trained model: W, W~ and the biases, float32, plus the cost of every epoch.

    Attributes
    ----------
    word, context : ndarray of float32, shape (V, dim)
        W and W~ (row i: word i of the vocabulary).
    word_bias, context_bias : ndarray of float32, shape (V,)
        b and b~.
    costs : list of float
        Per epoch, the mean over records of ``0.5 * f(X) * (w . w~ + b + b~ - ln X) ** 2``, each record's term
        taken just before its update (what the reference ``glove`` prints as ``cost``).
    """

    word: np.ndarray
    context: np.ndarray
    word_bias: np.ndarray
    context_bias: np.ndarray
    costs: list[float] = field(default_factory=list)


def _kernels():
    from . import _kernels

    return _kernels


def make_records(rows: np.ndarray, cols: np.ndarray, values: np.ndarray, x_max: float, alpha: float) -> np.ndarray:
    """Pack co-occurrence entries into the kernels' records (``_kernels.RECORD``: row, col, ln X, f(X)).

    Parameters
    ----------
    rows, cols : int array-like (n,)
        Word and context indices.
    values : float array-like (n,)
        X_ij, all > 0 (a co-occurrence matrix's non-zero values).
    x_max, alpha : float
        Weighting parameters: f(x) = (x / x_max) ** alpha below x_max, 1 from x_max up.

    Returns
    -------
    ndarray of RECORD, shape (n,)
        16 bytes per record; ln X and f(X) computed in float64 and rounded to float32 once.
    """
    k = _kernels()
    rows = np.ascontiguousarray(rows, dtype=np.int32)
    cols = np.ascontiguousarray(cols, dtype=np.int32)
    values = np.ascontiguousarray(values, dtype=np.float64)
    out = np.empty(rows.size, dtype=k.RECORD)
    k.pack_records(rows, cols, values, float(x_max), float(alpha), out)
    return out


def epoch_key(seed: int, epoch: int) -> int:
    """The key of epoch ``epoch`` (0-based) of a run with ``seed``: a 63-bit integer derived by a fixed formula
    (no Python hash), so the orders are the same in every process."""
    return (int(seed) * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019 * (int(epoch) + 1)) % (1 << 63)


def order_bits(n_records: int) -> int:
    """The width of the Feistel permutation that orders ``n_records`` records: the smallest b >= 2 with
    2 ** b >= n_records."""
    return max(2, int(n_records - 1).bit_length())


def row_stride(dim: int) -> int:
    """Row length of the parameter arrays: dim + 1 (the bias) rounded up to a multiple of 16 float32."""
    return -(-(dim + 1) // _ROW_ALIGN) * _ROW_ALIGN


def train(records: np.ndarray, n_words: int, dim: int, *, epochs: int, learning_rate: float, clip: float,
          seed: int, workers: int = 1, on_epoch: Callable[[int, float], None] | None = None) -> GloVeParameters:
    """Train GloVe on packed records: ``epochs`` passes of AdaGrad, each over a fresh pseudo-random order.

    Parameters
    ----------
    records : ndarray of RECORD (n,), n >= 1
        From :func:`make_records`; rows and cols below ``n_words``.
    n_words : int
        V.
    dim : int
        Vector size.
    epochs : int
        Passes over the records.
    learning_rate, clip : float
        See :func:`tokembed.plugins.glove._kernels.train_span`.
    seed : int
        Seeds the initialisation and every epoch's order.
    workers : int
        Threads. Thread ``t`` of ``w`` updates positions ``[t n / w, (t + 1) n / w)`` of the epoch's order, all
        threads at once on the same arrays without locks (Hogwild, as the reference). With 1 the run is
        sequential and its result identical, bit for bit, in every process; with more, the interleaving of the
        threads' updates varies from run to run, and so do the last bits.
    on_epoch : callable, optional
        ``on_epoch(epoch, cost)`` after each epoch (1-based), e.g. to move a progress bar.

    Returns
    -------
    GloVeParameters

    Raises
    ------
    TrainingDivergedError
        When a record's error, the epoch's cost or a parameter is not finite; the message names the epoch and
        suggests a lower learning rate. Nothing is returned then.
    """
    k = _kernels()
    n = int(records.size)
    stride = row_stride(dim)
    W, C, GW, GC = k.init_params(int(n_words), int(dim), stride, int(seed))
    bits = order_bits(n)
    workers = max(1, min(int(workers), n))
    cuts = [n * t // workers for t in range(workers + 1)]
    costs: list[float] = []
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="tokembed-glove") if workers > 1 else None
    try:
        for epoch in range(epochs):
            key = epoch_key(seed, epoch)

            def span(t: int, key: int = key) -> tuple[float, int]:
                return k.train_span(W, C, GW, GC, records, dim, bits, key, cuts[t], cuts[t + 1],
                                    float(learning_rate), float(clip))

            results = list(pool.map(span, range(workers))) if pool is not None else [span(0)]
            total = math.fsum(r[0] for r in results)
            cost = total / n
            if any(r[1] >= 0 for r in results) or not math.isfinite(cost):
                raise _diverged(epoch + 1, epochs, "the error of a record", learning_rate)
            for name, arr in (("a word vector", W), ("a context vector", C)):
                if not np.isfinite(arr[:, :dim + 1]).all():
                    raise _diverged(epoch + 1, epochs, name, learning_rate)
            costs.append(cost)
            if on_epoch is not None:
                on_epoch(epoch + 1, cost)
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
    return GloVeParameters(np.ascontiguousarray(W[:, :dim]), np.ascontiguousarray(C[:, :dim]),
                           W[:, dim].copy(), C[:, dim].copy(), costs)


def _diverged(epoch: int, epochs: int, what: str, learning_rate: float) -> TrainingDivergedError:
    return TrainingDivergedError(
        f"glove: training diverged in epoch {epoch} of {epochs}: {what} became NaN or infinite; lower "
        f"learning_rate (now {learning_rate:g}, the reference's default is 0.05) and train again; no vectors were "
        "kept", epoch)
