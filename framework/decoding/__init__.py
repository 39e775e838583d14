"""Decoding many id sequences at once (``decode_batch``) with array operations instead of a loop over tokens.

A tokenizer whose decoder writes each token as a string that depends only on the token and on its place in the
sequence (first, last, in between) describes the decoder as a table: for each id and each place, the UTF-8 bytes
it writes (:class:`VariantTable`). :func:`decode_table` then gathers the bytes of every token of every sequence in
one Numba pass and decodes each sequence's bytes once. Python work is per sequence, never per token.

Places (the ``variant`` index of a table): ``MIDDLE`` (0) neither first nor last, ``FIRST`` (1), ``LAST`` (2),
``ONLY`` (3) both first and last, counted after special tokens are removed when ``skip_special_tokens``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..components import check_token_ids

__all__ = ["VariantTable", "flatten_ids", "decode_table", "split_decode", "warmup", "MIDDLE", "FIRST", "LAST",
           "ONLY"]

MIDDLE, FIRST, LAST, ONLY = 0, 1, 2, 3


@dataclass(frozen=True)
class VariantTable:
    """The bytes each token writes, by place in its sequence.

    Attributes
    ----------
    data : array of uint8
        The bytes of every entry, concatenated.
    offsets : array of int64, shape (n_variants * vocab_size + 1,)
        Entry ``v * vocab_size + id`` is ``data[offsets[k]:offsets[k + 1]]``.
    vocab_size : int
    n_variants : int
        1 (the place does not matter), 2 (``MIDDLE``, ``FIRST``) or 4 (all places).
    """

    data: np.ndarray
    offsets: np.ndarray
    vocab_size: int
    n_variants: int

    def entry(self, id: int, place: int = ONLY) -> bytes:
        """The bytes ``id`` writes at ``place`` (``ONLY``: a sequence of that one token)."""
        if self.n_variants == 1:
            place = 0
        elif self.n_variants == 2:
            place &= FIRST
        k = place * self.vocab_size + id
        return self.data[self.offsets[k]:self.offsets[k + 1]].tobytes()

    def token_entry(self, id: Any, name: str, place: int = ONLY) -> bytes:
        """:meth:`entry` of one id given by a caller (``token_bytes``), checked as ``decode`` checks ids.

        Raises
        ------
        TokembedError
            If ``id`` is not an integer in ``[0, vocab_size)`` (the message of ``decode``)."""
        if not isinstance(id, (int, np.integer)) or isinstance(id, bool) or not 0 <= id < self.vocab_size:
            id = check_token_ids([id], self.vocab_size, name)[0]  # raises for a bad id; a good one passes
        return self.entry(int(id), place)

    @classmethod
    def from_strings(cls, tokens: Sequence[str], write: Callable[[int, str, int], str] | None = None,
                     n_variants: int = 1) -> "VariantTable":
        """The table of ``write(id, token, place)`` for each id and place (``token`` itself when ``write`` is
        None), as UTF-8 with lone surrogates kept (``surrogatepass``). Built once per tokenizer: a Python loop
        over the vocabulary times ``n_variants``."""
        entries = [(write(i, tok, v) if write else tok).encode("utf-8", "surrogatepass")
                   for v in range(n_variants) for i, tok in enumerate(tokens)]
        return cls.from_bytes(entries, len(tokens), n_variants)

    @classmethod
    def from_bytes(cls, entries: Sequence[bytes], vocab_size: int, n_variants: int = 1) -> "VariantTable":
        """The table of ``entries`` (``n_variants * vocab_size`` byte strings, place-major)."""
        lengths = np.fromiter(map(len, entries), np.int64, len(entries))
        offsets = np.zeros(len(entries) + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        data = np.frombuffer(b"".join(entries), np.uint8)
        return cls(data, offsets, vocab_size, n_variants)


def flatten_ids(ids_list: Sequence[Any], vocab_size: int, name: str) -> tuple[np.ndarray, np.ndarray]:
    """The id sequences of ``ids_list`` as one flat int64 array and its boundaries (int64, ``len + 1``).

    Raises
    ------
    TokembedError
        As ``decode`` would for the first bad sequence (:func:`tokembed.components.check_token_ids`).
    """
    arrays = list(ids_list)
    lengths = np.zeros(len(arrays) + 1, np.int64)
    if all(isinstance(a, np.ndarray) and a.ndim == 1 and a.dtype.kind in "iu" for a in arrays):
        flat = check_token_ids(np.concatenate(arrays) if arrays else np.zeros(0, np.int64), vocab_size, name)
        np.cumsum([a.size for a in arrays], out=lengths[1:])
        return flat, lengths
    checked = [check_token_ids(a, vocab_size, name) for a in arrays]
    np.cumsum([a.size for a in checked], out=lengths[1:])
    return (np.concatenate(checked) if checked else np.zeros(0, np.int64)), lengths


def drop_ids(ids: np.ndarray, indptr: np.ndarray, drop: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``ids`` without the ids whose ``drop`` entry (bool, per id) is True, and the new boundaries."""
    keep = ~drop[ids]
    kept = np.zeros(ids.size + 1, np.int64)
    np.cumsum(keep, out=kept[1:])
    return ids[keep], kept[indptr]


def places(indptr: np.ndarray, n_tokens: int) -> np.ndarray:
    """The place (``MIDDLE``, ``FIRST``, ``LAST``, ``ONLY``) of each of ``n_tokens`` tokens, int64."""
    out = np.zeros(n_tokens, np.int64)
    starts, ends = indptr[:-1], indptr[1:]
    full = ends > starts
    out[starts[full]] += FIRST
    out[ends[full] - 1] += LAST
    return out


def gather(table: VariantTable, keys: np.ndarray, indptr: np.ndarray) -> tuple[bytes, np.ndarray]:
    """The bytes of table entries ``keys`` concatenated, and each sequence's byte boundaries (int64)."""
    from ._kernels import gather_entries

    out, ends = gather_entries(table.data, table.offsets, np.ascontiguousarray(keys, np.int64))
    return out.tobytes(), ends[indptr]


def split_decode(buf: bytes, bounds: np.ndarray, errors: str, skip: np.ndarray | None = None) -> list[str | None]:
    """``buf[a:b].decode("utf-8", errors)`` for each pair of consecutive ``bounds``; None where ``skip`` (bool,
    one per pair) is True."""
    b = bounds.tolist()
    if skip is None:
        return [buf[s:e].decode("utf-8", errors) for s, e in zip(b[:-1], b[1:])]
    return [None if k else buf[s:e].decode("utf-8", errors) for s, e, k in zip(b[:-1], b[1:], skip.tolist())]


def decode_table(table: VariantTable, ids_list: Sequence[Any], name: str, skip: np.ndarray | None = None,
                 errors: str = "surrogatepass") -> list[str]:
    """Decode each id sequence of ``ids_list`` through ``table``: its tokens' entries (by place) joined, then
    decoded from UTF-8 with ``errors`` (``"surrogatepass"`` for a table of strings, ``"replace"`` for raw bytes).

    Parameters
    ----------
    table : VariantTable
    ids_list : sequence of sequences or 1-D integer arrays
    name : str
        The tokenizer's name, for error messages.
    skip : array of bool, shape (vocab_size,), optional
        Ids removed before places are counted (the special tokens, with ``skip_special_tokens``).
    errors : str

    Returns
    -------
    list of str, one per sequence.

    Raises
    ------
    TokembedError
        If a sequence is not flat integers or holds an id outside ``[0, vocab_size)``.
    """
    ids, indptr = flatten_ids(ids_list, table.vocab_size, name)
    if skip is not None:
        ids, indptr = drop_ids(ids, indptr, skip)
    keys = ids
    if table.n_variants > 1:
        where = places(indptr, ids.size)
        if table.n_variants == 2:
            where &= FIRST
        keys = where * table.vocab_size + ids
    buf, bounds = gather(table, keys, indptr)
    return split_decode(buf, bounds, errors)


def warmup() -> None:
    """Compile (or load from Numba's cache) the gathering kernel, with the argument types of real calls."""
    table = VariantTable.from_strings(["warm", " up"], lambda i, tok, v: tok, 2)
    decode_table(table, [np.array([0, 1, 1], np.int32), [0]], "warmup")
