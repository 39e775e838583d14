"""Numba kernels of the SentencePiece models: double-array tries, the normalizer, Viterbi, sampling, n-best, BPE.

Everything works on UTF-8 bytes, as SentencePiece does: a text is normalized byte string -> byte string with a map
from each normalized byte back to the original byte it came from (``norm_to_orig``), and the models segment the
normalized bytes. Offsets are turned into code-point spans by the caller.

Double-array tries (the format of darts-clone, which SentencePiece uses for its ``precompiled_charsmap`` and its
piece index) are arrays of uint32 units: a unit holds a label (bits 0-7; bit 31 set marks a value unit), a
has-leaf flag (bit 8) and an offset (bits 10-30, times 256 when bit 9 is set). The child of the node at ``p`` for
byte ``c`` is at ``p ^ offset(p) ^ c`` and carries label ``c``; a node that ends a key has its value at
``p ^ offset(p)``. :func:`build_double_array` writes such arrays; the reading functions follow the format.

All kernels take NumPy arrays and scalars, hold no Python objects, and are compiled once (``cache=True``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

# piece kinds (per id), as the kernels see them
KIND_NORMAL = 0
KIND_UNKNOWN = 1
KIND_CONTROL = 2
KIND_USER_DEFINED = 3
KIND_UNUSED = 4
KIND_BYTE = 5

_VALUE_MASK = 0x7FFFFFFF
_IS_LEAF_BIT = 1 << 31
_HAS_LEAF_BIT = 1 << 8
_EXTENSION_BIT = 1 << 9



# ----------------------------------------------------------------------------------------------------------------
# double arrays


@njit(nogil=True, inline="always")
def _offset(unit):
    return (unit >> 10) << ((unit & _EXTENSION_BIT) >> 6)


@njit(nogil=True, inline="always")
def _label(unit):
    return unit & (_IS_LEAF_BIT | 0xFF)


@njit(nogil=True, inline="always")
def char_len(first_byte):
    """Bytes of the UTF-8 sequence that starts with ``first_byte`` (1 for a continuation byte), as SentencePiece's
    ``OneCharLen`` gives."""
    hi = first_byte >> 4
    if hi < 12:
        return 1
    if hi < 14:
        return 2
    if hi == 14:
        return 3
    return 4


@njit(nogil=True, inline="always")
def longest_prefix(units, key, start, end):
    """The longest key of the double array ``units`` that is a prefix of ``key[start:end]``.

    Returns ``(length, value)``; ``(0, -1)`` when none (or ``units`` is empty).
    """
    if units.shape[0] == 0:
        return 0, -1
    pos = np.int64(_offset(np.int64(units[0])))
    best_len = 0
    best_val = -1
    for i in range(start, end):
        c = np.int64(key[i])
        pos ^= c
        if pos >= units.shape[0]:
            break
        unit = np.int64(units[pos])
        if _label(unit) != c:
            break
        pos ^= _offset(unit)
        if unit & _HAS_LEAF_BIT:
            best_len = i + 1 - start
            best_val = np.int64(units[pos]) & _VALUE_MASK
    return best_len, best_val


@njit(nogil=True, inline="always")
def exact_match(units, key, start, end):
    """The value of ``key[start:end]`` in the double array, or -1."""
    if units.shape[0] == 0 or end <= start:
        return -1
    pos = np.int64(_offset(np.int64(units[0])))
    for i in range(start, end):
        c = np.int64(key[i])
        pos ^= c
        if pos >= units.shape[0]:
            return -1
        unit = np.int64(units[pos])
        if _label(unit) != c:
            return -1
        pos ^= _offset(unit)
        if i == end - 1:
            if unit & _HAS_LEAF_BIT:
                return np.int64(units[pos]) & _VALUE_MASK
            return -1
    return -1


@njit(nogil=True)
def _grow_bool(a, size):
    out = np.zeros(size, np.bool_)
    out[: a.shape[0]] = a
    return out


@njit(cache=True)
def build_double_array(keys, key_offsets, values):
    """A darts-clone double array of sorted, distinct byte keys.

    Parameters
    ----------
    keys : uint8 array
        The keys, concatenated; key ``k`` is ``keys[key_offsets[k]:key_offsets[k + 1]]``, non-empty, without a
        zero byte, strictly increasing in byte order.
    key_offsets : int64 array, shape (n + 1,)
    values : int64 array, shape (n,)
        Values in ``[0, 2**31)``.

    Returns
    -------
    uint32 array
        The units, a multiple of 256 long; -1-filled error: an empty array if a key breaks the rules above or the
        array would need more than 2**21 units (offsets beyond 21 bits are not written).
    """
    n = values.shape[0]
    total = key_offsets[n]
    # 1. a trie: first child / next sibling lists, children in increasing label order (keys are sorted)
    cap = total + 2
    first_child = np.full(cap, -1, np.int64)
    last_child = np.full(cap, -1, np.int64)
    next_sibling = np.full(cap, -1, np.int64)
    label = np.zeros(cap, np.int64)
    leaf = np.full(cap, -1, np.int64)
    n_nodes = 1
    for k in range(n):
        node = 0
        a, b = key_offsets[k], key_offsets[k + 1]
        if b <= a:
            return np.zeros(0, np.uint32)
        for i in range(a, b):
            c = np.int64(keys[i])
            if c == 0:
                return np.zeros(0, np.uint32)
            child = last_child[node]
            if child >= 0 and label[child] == c:
                node = child
                continue
            if child >= 0 and label[child] > c:
                return np.zeros(0, np.uint32)  # not sorted
            new = n_nodes
            n_nodes += 1
            label[new] = c
            if child < 0:
                first_child[node] = new
            else:
                next_sibling[child] = new
            last_child[node] = new
            node = new
        if leaf[node] >= 0:
            return np.zeros(0, np.uint32)  # repeated key
        leaf[node] = values[k]
    # 2. place the nodes breadth first: each node gets a base b with b ^ label free for all its labels. Free
    # units form a linked list, so a search visits free units only.
    size = 1024
    used = np.zeros(size, np.bool_)
    base_used = np.zeros(size, np.bool_)
    units = np.zeros(size, np.int64)
    nxt_free = np.arange(1, size + 1, dtype=np.int64)
    prv_free = np.arange(-1, size - 1, dtype=np.int64)
    head_free = 1  # unit 0 is the root
    prv_free[1] = -1
    pos = np.zeros(n_nodes, np.int64)
    used[0] = True
    queue = np.empty(n_nodes, np.int64)
    queue[0] = 0
    head, tail = 0, 1
    labels = np.empty(257, np.int64)
    while head < tail:
        node = queue[head]
        head += 1
        m = 0
        if leaf[node] >= 0:
            labels[m] = 0
            m += 1
        child = first_child[node]
        while child >= 0:
            labels[m] = label[child]
            m += 1
            child = next_sibling[child]
        if m == 0:
            continue
        p = pos[node]
        q = head_free
        while True:
            if q >= size - 256:
                old = size
                size *= 2
                used = _grow_bool(used, size)
                base_used = _grow_bool(base_used, size)
                grown = np.zeros(size, np.int64)
                grown[:old] = units
                units = grown
                nf = np.arange(1, size + 1, dtype=np.int64)
                nf[:old] = nxt_free
                pf = np.arange(-1, size - 1, dtype=np.int64)
                pf[:old] = prv_free
                nxt_free, prv_free = nf, pf
                # the old list ended at `old` (nxt_free of its last free unit), which is now the first new unit
            b = q ^ labels[0]
            ok = not used[q] and b != 0 and b != p and b < size and not base_used[b]
            if ok:
                for j in range(1, m):
                    if used[b ^ labels[j]]:
                        ok = False
                        break
            if ok:
                break
            q = nxt_free[q]
        base_used[b] = True
        offset = p ^ b
        if offset >= (1 << 21):
            return np.zeros(0, np.uint32)
        units[p] |= offset << 10
        for j in range(m):
            slot = b ^ labels[j]
            used[slot] = True
            a, c = prv_free[slot], nxt_free[slot]
            if a >= 0:
                nxt_free[a] = c
            else:
                head_free = c
            if c < size:
                prv_free[c] = a
            if labels[j] == 0:
                units[p] |= _HAS_LEAF_BIT
                units[slot] = leaf[node] | _IS_LEAF_BIT
        child = first_child[node]
        while child >= 0:
            slot = b ^ label[child]
            units[slot] |= label[child]
            pos[child] = slot
            queue[tail] = child
            tail += 1
            child = next_sibling[child]
    last = 0
    for i in range(size):
        if used[i]:
            last = i
    for i in range(size):
        if base_used[i] and i > last:
            last = i
    n_units = ((last | 0xFF) + 1)
    out = np.zeros(n_units, np.uint32)
    for i in range(n_units):
        out[i] = np.uint32(units[i])
    return out


# ----------------------------------------------------------------------------------------------------------------
# normalizer


@njit(nogil=True, inline="always")
def _put_space(out, norm_to_orig, n, consumed):
    """Write U+2581 (UTF-8 E2 96 81) at ``out[n]``; returns the new length."""
    out[n] = 0xE2
    out[n + 1] = 0x96
    out[n + 2] = 0x81
    norm_to_orig[n] = consumed
    norm_to_orig[n + 1] = consumed
    norm_to_orig[n + 2] = consumed
    return n + 3


@njit(nogil=True, inline="always")
def _normalize_prefix(text, pos, end, charsmap, normalized, user):
    """SentencePiece's ``NormalizePrefix``: ``(consumed bytes, replacement start, replacement length)``;
    a start of -1 means the input bytes themselves, -2 the U+FFFD replacement (never for valid UTF-8)."""
    if user.shape[0]:
        length, _ = longest_prefix(user, text, pos, end)
        if length > 0:
            return length, -1, length
    if charsmap.shape[0]:
        length, value = longest_prefix(charsmap, text, pos, end)
        if length > 0 and value < normalized.shape[0]:
            n = 0
            while normalized[value + n] != 0:
                n += 1
            return length, value, n
    length = min(char_len(text[pos]), end - pos)
    return length, -1, length


@njit(nogil=True)
def key_first_bytes(charsmap, user):
    """``out[b]`` (for ASCII ``b``) is True unless byte ``b`` followed by an ASCII byte (or the end) is surely
    left as it is: when ``b`` alone is a key of ``charsmap`` or ``user``, or a key goes on from ``b`` with an ASCII
    byte. (A key that goes on with a non-ASCII byte, ``e`` + a combining accent, is looked up the slow way.)"""
    out = np.zeros(256, np.bool_)
    for units in (charsmap, user):
        if units.shape[0] == 0:
            continue
        root = np.int64(_offset(np.int64(units[0])))
        for b in range(1, 128):
            pos = root ^ b
            if pos >= units.shape[0]:
                continue
            unit = np.int64(units[pos])
            if _label(unit) != b:
                continue
            if unit & _HAS_LEAF_BIT:
                out[b] = True
                continue
            base = pos ^ _offset(unit)
            for c in range(1, 128):
                q = base ^ c
                if q < units.shape[0] and _label(np.int64(units[q])) == c:
                    out[b] = True
                    break
    return out


@njit(nogil=True)
def normalize(text, start, end, charsmap, normalized, user, add_dummy_prefix, remove_extra_whitespaces,
              escape_whitespaces, treat_whitespace_as_suffix, out, norm_to_orig, first_bytes):
    """SentencePiece's ``Normalizer::Normalize`` of ``text[start:end]`` (UTF-8 bytes).

    Writes the normalized bytes into ``out`` and, for each of them plus one past the end, the byte offset (relative
    to ``start``) of the original byte it comes from into ``norm_to_orig``. ``charsmap`` / ``normalized`` are the
    double array and the replacement strings of a ``precompiled_charsmap`` (empty for identity), ``user`` the
    double array of the user-defined symbols (kept unnormalized).

    Returns the number of normalized bytes, or -1 - needed when ``out`` is too short (``norm_to_orig`` must hold
    one more entry than ``out``).
    """
    cap = out.shape[0]
    n = 0
    consumed = 0
    pos = start
    if remove_extra_whitespaces:
        while pos < end:
            used, rs, rl = _normalize_prefix(text, pos, end, charsmap, normalized, user)
            if rs >= 0 and not (rl == 1 and normalized[rs] == 32):
                break
            if rs < 0 and not (rl == 1 and text[pos] == 32):
                break
            pos += used
            consumed += used
    if pos >= end:
        norm_to_orig[0] = consumed
        return 0
    need = 0
    if not treat_whitespace_as_suffix and add_dummy_prefix:
        if escape_whitespaces:
            if n + 3 > cap:
                return -1 - (3 * (end - start) + 16)
            n = _put_space(out, norm_to_orig, n, consumed)
        else:
            out[n] = 32
            norm_to_orig[n] = consumed
            n += 1
    is_prev_space = remove_extra_whitespaces
    while pos < end:
        c0 = text[pos]
        if c0 < 0x80 and not first_bytes[c0] and (pos + 1 >= end or text[pos + 1] < 0x80):
            # fast path: an ASCII byte that no rule or user-defined symbol starts with stands for itself
            if c0 == 32:
                if not is_prev_space:
                    if n + 3 > cap:
                        return -1 - (2 * cap + 16)
                    if escape_whitespaces:
                        n = _put_space(out, norm_to_orig, n, consumed)
                    else:
                        out[n] = 32
                        norm_to_orig[n] = consumed
                        n += 1
                    is_prev_space = remove_extra_whitespaces
            else:
                if n + 1 > cap:
                    return -1 - (2 * cap + 16)
                out[n] = c0
                norm_to_orig[n] = consumed
                n += 1
                is_prev_space = False
            consumed += 1
            pos += 1
            continue
        used, rs, rl = _normalize_prefix(text, pos, end, charsmap, normalized, user)
        src_start = rs
        k0 = 0
        if is_prev_space:
            while k0 < rl and (normalized[src_start + k0] if src_start >= 0 else text[pos + k0]) == 32:
                k0 += 1
        if k0 < rl:
            for k in range(k0, rl):
                c = normalized[src_start + k] if src_start >= 0 else text[pos + k]
                if c == 32:
                    if escape_whitespaces:
                        if n + 3 > cap:
                            need = 1
                            break
                        n = _put_space(out, norm_to_orig, n, consumed)
                    else:
                        if n + 1 > cap:
                            need = 1
                            break
                        out[n] = 32
                        norm_to_orig[n] = consumed
                        n += 1
                else:
                    if n + 1 > cap:
                        need = 1
                        break
                    out[n] = c
                    norm_to_orig[n] = consumed
                    n += 1
            if need:
                return -1 - (2 * cap + 16)
            last = normalized[src_start + rl - 1] if src_start >= 0 else text[pos + rl - 1]
            is_prev_space = last == 32
        consumed += used
        pos += used
        if not remove_extra_whitespaces:
            is_prev_space = False
    if remove_extra_whitespaces:
        if escape_whitespaces:
            while n >= 3 and out[n - 3] == 0xE2 and out[n - 2] == 0x96 and out[n - 1] == 0x81:
                n -= 3
                consumed = norm_to_orig[n]
        else:
            while n >= 1 and out[n - 1] == 32:
                n -= 1
                consumed = norm_to_orig[n]
    if treat_whitespace_as_suffix and add_dummy_prefix:
        if n + 3 > cap:
            return -1 - (2 * cap + 16)
        if escape_whitespaces:
            n = _put_space(out, norm_to_orig, n, consumed)
        else:
            out[n] = 32
            norm_to_orig[n] = consumed
            n += 1
    norm_to_orig[n] = consumed
    return n
