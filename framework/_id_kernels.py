"""Numba kernels over token-id arrays as they lie (an int32 array in memory, or the uint16 / uint32 memory map of a
folder ``tokembed encode`` wrote): module-level ``@njit(cache=True, nogil=True)`` functions, the caller
(:mod:`tokembed.sequences`) validates the arrays (docs/architecture.md, "Kernels")."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def count_ids(ids, lo, hi, counts):
    """Add the occurrences of ``ids[lo:hi]`` to ``counts`` (int64 (vocab_size,)) in place, without converting the
    ids (a mapped uint16 / uint32 slice stays one). Returns -1, or the first id outside ``[0, vocab_size)`` (the
    counts are then incomplete)."""
    n = counts.shape[0]
    for t in range(lo, hi):
        i = np.int64(ids[t])
        if i < 0 or i >= n:
            return i
        counts[i] += 1
    return np.int64(-1)
