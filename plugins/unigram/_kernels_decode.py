"""The decoding kernel: SentencePiece's ``Decode`` over many id sequences at once (see
:meth:`~tokembed.plugins.unigram.model.SentencePieceModel.decode_batch`)."""

from __future__ import annotations

import numpy as np
from numba import njit

# piece types of the ModelProto (tokembed.plugins.unigram._proto)
_UNKNOWN, _CONTROL, _BYTE = 2, 3, 6


@njit  # a helper: compiled into the kernel that calls it
def utf8_valid(buf, start, end):
    """Whether ``buf[start:end]`` (uint8) is strict UTF-8 as Python's ``bytes.decode("utf-8")`` accepts it
    (RFC 3629: no overlong form, no surrogate, nothing above U+10FFFF)."""
    i = start
    while i < end:
        b = buf[i]
        if b < 0x80:
            i += 1
            continue
        if 0xC2 <= b <= 0xDF:
            n, lo, hi = 1, 0x80, 0xBF
        elif b == 0xE0:
            n, lo, hi = 2, 0xA0, 0xBF
        elif b == 0xED:
            n, lo, hi = 2, 0x80, 0x9F
        elif 0xE1 <= b <= 0xEF:
            n, lo, hi = 2, 0x80, 0xBF
        elif b == 0xF0:
            n, lo, hi = 3, 0x90, 0xBF
        elif 0xF1 <= b <= 0xF3:
            n, lo, hi = 3, 0x80, 0xBF
        elif b == 0xF4:
            n, lo, hi = 3, 0x80, 0x8F
        else:
            return False
        if i + n >= end:  # the sequence is cut by the end of the run
            return False
        c = buf[i + 1]
        if c < lo or c > hi:
            return False
        for j in range(i + 2, i + n + 1):
            if buf[j] < 0x80 or buf[j] > 0xBF:
                return False
        i += n + 1
    return True


@njit(cache=True)
def decode_pieces(ids, indptr, types, byte_values, data, offsets, n_pieces, starts_space, unk, skip_unk,
                  strip_first, seen_after_strip, out, bounds, fallback):
    """SentencePiece's ``Decode`` of each sequence ``ids[indptr[d]:indptr[d + 1]]`` into UTF-8 bytes.

    ``data[offsets[k]:offsets[k + 1]]`` is what piece ``k`` writes (``▁`` as a space), and entry ``n_pieces + k``
    what it writes with its leading ``▁`` dropped (the dummy prefix at the start of a text); ``byte_values[k]``
    the byte of a byte piece; ``unk`` the unknown piece's surface (written unless ``skip_unk``). Writes the bytes
    to ``out`` and sequence ``d``'s to ``out[bounds[d]:bounds[d + 1]]``; ``fallback[d]`` is set when a run of byte
    pieces is not valid UTF-8 on its own (the caller decodes that sequence with the per-sequence decoder, whose
    replacement characters depend on where each run ends). Returns the number of bytes written.
    """
    pos = 0
    n_docs = indptr.shape[0] - 1
    for d in range(n_docs):
        bounds[d] = pos
        is_bos = True
        seen = False
        pending = -1
        for t in range(indptr[d], indptr[d + 1]):
            i = ids[t]
            kind = types[i]
            if kind == _BYTE:
                if pending < 0:
                    pending = pos
                out[pos] = byte_values[i]
                pos += 1
                continue
            if pending >= 0:
                if not utf8_valid(out, np.int64(pending), np.int64(pos)):
                    fallback[d] = True
                pending = -1
            if seen or pos > bounds[d]:
                is_bos = False
            seen = False
            if kind == _CONTROL:
                continue
            if kind == _UNKNOWN:
                if not skip_unk:
                    for j in range(unk.shape[0]):
                        out[pos] = unk[j]
                        pos += 1
                continue
            k = i
            if is_bos and strip_first and starts_space[i]:
                k = n_pieces + i
                seen = seen_after_strip
            for j in range(offsets[k], offsets[k + 1]):
                out[pos] = data[j]
                pos += 1
        if pending >= 0 and not utf8_valid(out, np.int64(pending), np.int64(pos)):
            fallback[d] = True
    bounds[n_docs] = pos
    return pos
