"""The gathering kernel of :mod:`tokembed.decoding`."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def gather_entries(data, offsets, keys, out):
    """Copy ``data[offsets[k]:offsets[k + 1]]`` for each ``k`` of ``keys`` (int64), one after the other, into
    ``out`` (uint8, long enough); returns the end of each key's bytes in ``out`` (int64, ``len(keys) + 1``, from 0).
    """
    ends = np.empty(keys.shape[0] + 1, np.int64)
    ends[0] = 0
    pos = 0
    for t in range(keys.shape[0]):
        k = keys[t]
        for j in range(offsets[k], offsets[k + 1]):
            out[pos] = data[j]
            pos += 1
        ends[t + 1] = pos
    return ends
