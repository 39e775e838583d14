"""The gathering kernel of :mod:`tokembed.decoding`."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def gather_entries(data, offsets, keys):
    """``data[offsets[k]:offsets[k + 1]]`` for each ``k`` of ``keys`` (int64), one after the other.

    Returns the bytes (uint8) and where each key's bytes end in them (int64, ``len(keys) + 1``, from 0).
    """
    n = keys.shape[0]
    ends = np.empty(n + 1, np.int64)
    ends[0] = 0
    for t in range(n):
        ends[t + 1] = ends[t] + offsets[keys[t] + 1] - offsets[keys[t]]
    out = np.empty(ends[n], np.uint8)
    pos = 0
    for t in range(n):
        for j in range(offsets[keys[t]], offsets[keys[t] + 1]):
            out[pos] = data[j]
            pos += 1
    return out, ends
