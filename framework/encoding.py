"""The result of encoding one text: ids, tokens and offsets."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

__all__ = ["Encoding"]


def _as_ids(values) -> np.ndarray:
    arr = np.asarray(values, dtype=np.int32)
    if arr.ndim != 1:
        raise ValueError(f"ids must have shape (n,), got {arr.shape}")
    return arr


def _as_offsets(values, n: int) -> np.ndarray:
    arr = np.asarray(values, dtype=np.int64)
    if arr.size == 0:
        arr = arr.reshape(0, 2)
    if arr.shape != (n, 2):
        raise ValueError(f"offsets must have shape ({n}, 2), got {arr.shape}")
    return arr


@dataclass(eq=False)
class Encoding:
    """One encoded text.

    Attributes
    ----------
    ids : ndarray of int32, shape (n,)
        Token ids.
    tokens : list of str, length n
        The token strings, ``tokens[i] == tokenizer.id_to_token(ids[i])``.
    offsets : ndarray of int64, shape (n, 2)
        ``[start, end)`` code-point spans into the ORIGINAL text (Python ``str`` indices). Tokens added by a
        post-processor (``[CLS]``, ``[SEP]``) and padding have the span ``(0, 0)``.
    type_ids : ndarray of int32, shape (n,)
        Segment ids: 0 for the first text, 1 for the second text of a pair.
    special_tokens_mask : ndarray of int8, shape (n,)
        1 where the token was added by the post-processor or is padding, else 0.
    attention_mask : ndarray of int8, shape (n,)
        0 for padding, else 1.
    overflowing : list of Encoding
        The windows cut off by truncation (with ``stride`` tokens of overlap), in order.
    """

    ids: np.ndarray
    tokens: list[str]
    offsets: np.ndarray
    type_ids: np.ndarray | None = None
    special_tokens_mask: np.ndarray | None = None
    attention_mask: np.ndarray | None = None
    overflowing: list["Encoding"] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.ids = _as_ids(self.ids)
        n = self.ids.shape[0]
        self.tokens = list(self.tokens)
        if len(self.tokens) != n:
            raise ValueError(f"{len(self.tokens)} tokens for {n} ids")
        self.offsets = _as_offsets(self.offsets, n)
        self.type_ids = np.zeros(n, np.int32) if self.type_ids is None else np.asarray(self.type_ids, np.int32)
        if self.special_tokens_mask is None:
            self.special_tokens_mask = np.zeros(n, np.int8)
        else:
            self.special_tokens_mask = np.asarray(self.special_tokens_mask, np.int8)
        if self.attention_mask is None:
            self.attention_mask = np.ones(n, np.int8)
        else:
            self.attention_mask = np.asarray(self.attention_mask, np.int8)
        for label, arr in (("type_ids", self.type_ids), ("special_tokens_mask", self.special_tokens_mask),
                           ("attention_mask", self.attention_mask)):
            if arr.shape != (n,):
                raise ValueError(f"{label} must have shape ({n},), got {arr.shape}")

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Encoding):
            return NotImplemented
        return (
            np.array_equal(self.ids, other.ids)
            and self.tokens == other.tokens
            and np.array_equal(self.offsets, other.offsets)
            and np.array_equal(self.type_ids, other.type_ids)
            and np.array_equal(self.special_tokens_mask, other.special_tokens_mask)
            and np.array_equal(self.attention_mask, other.attention_mask)
            and self.overflowing == other.overflowing
        )

    def __repr__(self) -> str:
        shown = ", ".join(repr(t) for t in self.tokens[:8])
        more = ", ..." if len(self.tokens) > 8 else ""
        return f"Encoding(n={len(self)}, tokens=[{shown}{more}])"

    @classmethod
    def concatenate(cls, parts: Sequence["Encoding"]) -> "Encoding":
        """Join encodings end to end (offsets are kept as they are)."""
        if not parts:
            return cls(np.zeros(0, np.int32), [], np.zeros((0, 2), np.int64))
        return cls(
            np.concatenate([p.ids for p in parts]),
            [t for p in parts for t in p.tokens],
            np.concatenate([p.offsets for p in parts]),
            np.concatenate([p.type_ids for p in parts]),
            np.concatenate([p.special_tokens_mask for p in parts]),
            np.concatenate([p.attention_mask for p in parts]),
        )
