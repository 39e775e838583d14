"""The result of encoding one text (:class:`Encoding`) and a padded batch as arrays (:class:`BatchEncoding`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Sequence

import numpy as np

__all__ = ["Encoding", "BatchEncoding"]


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


class BatchEncoding:
    """Encodings of equal length stacked into rectangular arrays (what ``encode_batch`` returns when padding).

    Parameters
    ----------
    encodings : sequence of Encoding
        All of the same length (pad them first).

    Attributes
    ----------
    input_ids : ndarray of int64, shape (batch, seq)
        Token ids.
    attention_mask : ndarray of int64, shape (batch, seq)
        0 for padding, else 1.
    token_type_ids : ndarray of int64, shape (batch, seq)
        Segment ids (0 first text, 1 second text of a pair, as the template says; 0 for padding).
    special_tokens_mask : ndarray of int64, shape (batch, seq)
        1 for tokens added by the post-processor and for padding, else 0.
    offsets : ndarray of int64, shape (batch, seq, 2)
        Code-point spans into each original text; ``(0, 0)`` for added tokens and padding.
    encodings : list of Encoding, length batch
        The encodings the arrays were built from (with their ``overflowing`` windows, which the arrays leave out).

    Notes
    -----
    ``batch["input_ids"]`` is ``batch.input_ids`` (the key names are transformers'). Otherwise a BatchEncoding
    behaves as the list of its encodings: ``len(batch)`` is the batch size, ``batch[i]`` is the ``i``-th
    :class:`Encoding` and iterating yields the encodings, so code written for the plain list that ``encode_batch``
    returns without padding keeps working. :meth:`keys` and :meth:`to_dict` give the arrays by name.

    Raises
    ------
    ValueError
        If the encodings do not all have the same length.
    """

    KEYS: tuple[str, ...] = ("input_ids", "attention_mask", "token_type_ids", "special_tokens_mask", "offsets")

    def __init__(self, encodings: Sequence[Encoding]):
        self.encodings: list[Encoding] = list(encodings)
        lengths = {len(e) for e in self.encodings}
        if len(lengths) > 1:
            raise ValueError(f"encodings of different lengths {sorted(lengths)} cannot be stacked; pad them first")
        seq = lengths.pop() if lengths else 0
        b = len(self.encodings)

        def stack(field: str) -> np.ndarray:
            if not b:
                return np.zeros((0, seq), np.int64)
            return np.stack([getattr(e, field) for e in self.encodings]).astype(np.int64, copy=False)

        self.input_ids = stack("ids")
        self.attention_mask = stack("attention_mask")
        self.token_type_ids = stack("type_ids")
        self.special_tokens_mask = stack("special_tokens_mask")
        self.offsets = (np.stack([e.offsets for e in self.encodings]).astype(np.int64, copy=False) if b
                        else np.zeros((0, seq, 2), np.int64))

    @property
    def shape(self) -> tuple[int, int]:
        """``(batch, seq)``."""
        return tuple(self.input_ids.shape)  # type: ignore[return-value]

    def keys(self) -> tuple[str, ...]:
        """The names of the arrays."""
        return self.KEYS

    def to_dict(self) -> dict[str, np.ndarray]:
        """The arrays by name (the arrays themselves, not copies)."""
        return {k: getattr(self, k) for k in self.KEYS}

    def __getitem__(self, key):
        if isinstance(key, str):
            if key not in self.KEYS:
                raise KeyError(f"{key!r}; the arrays are {', '.join(self.KEYS)}")
            return getattr(self, key)
        return self.encodings[key]

    def __len__(self) -> int:
        return len(self.encodings)

    def __iter__(self) -> Iterator[Encoding]:
        return iter(self.encodings)

    def __repr__(self) -> str:
        return f"BatchEncoding(batch={self.shape[0]}, seq={self.shape[1]})"
