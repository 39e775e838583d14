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

    Alignment (Hugging Face ``tokenizers``' ``Encoding`` names and meaning): :attr:`word_ids`,
    :attr:`sequence_ids`, :meth:`token_to_sequence`, :meth:`token_to_chars`, :meth:`token_to_word`,
    :meth:`char_to_token`, :meth:`char_to_word`, :meth:`word_to_tokens`, :meth:`word_to_chars`. A word is a piece
    of the tokenizer's pre-tokenizer (``Tokenizer.word_spans``); words are numbered from 0 in each text of a pair,
    characters are code points of that text, and tokens added by the post-processor and padding belong to no word
    and no sequence (None). Encodings built by hand, or by a tokenizer that does not give its pieces, count a new
    word wherever a token starts after the end of the previous one (text between them that no token covers).
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

    #: Per token, the text of the pair it comes from (0, 1) or -1 (added token, padding); None: 0 for every token
    #: but those of ``special_tokens_mask``. Set by templates, truncation and padding (not a constructor argument).
    _sequences = None  # ndarray of int8 (n,) or None; a class attribute, not a dataclass field
    #: ``(word_spans, text, pair)``: the tokenizer's ``word_spans`` method and the text(s) encoded, set by
    #: ``Tokenizer.encode``/``encode_batch``; the spans are computed when an alignment method first needs them.
    _word_source = None  # tuple or None; a class attribute, not a dataclass field

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    # -- alignment (Hugging Face's Encoding methods) ----------------------------------------------------------
    def _sequence_array(self) -> np.ndarray:
        if self._sequences is not None and self._sequences.shape[0] == len(self):
            return self._sequences
        return np.where(self.special_tokens_mask == 1, -1, 0).astype(np.int8)

    def _word_array(self) -> np.ndarray:
        """Word index per token (-1: none), numbered per sequence."""
        seqs = self._sequence_array()
        words = np.full(len(self), -1, np.int64)
        starts = self.offsets[:, 0]
        for s in (0, 1):
            where = np.flatnonzero(seqs == s)
            if not where.size:
                continue
            spans = self._spans_of(s)
            if spans is not None and len(spans):
                words[where] = np.maximum(np.searchsorted(spans[:, 0], starts[where], side="right") - 1, 0)
            else:  # a new word where a token starts after the previous one ended
                ends = self.offsets[where, 1]
                gap = np.concatenate([[False], starts[where][1:] > np.maximum.accumulate(ends)[:-1]])
                words[where] = np.cumsum(gap)
        return words

    def _spans_of(self, s: int) -> np.ndarray | None:
        source = self._word_source
        if source is None or source[1 + s] is None:
            return None
        cache = self.__dict__.setdefault("_spans_cache", {})
        if s not in cache:
            spans = source[0](source[1 + s])
            cache[s] = None if spans is None else np.asarray(spans, np.int64).reshape(-1, 2)
        return cache[s]

    @property
    def n_sequences(self) -> int:
        """1 for one text, 2 for a pair."""
        return 2 if (self._sequence_array() == 1).any() else 1

    @property
    def sequence_ids(self) -> list[int | None]:
        """Per token, the index of the text it comes from (0, or 1 for the second of a pair); None for tokens added
        by the post-processor and for padding."""
        return [None if s < 0 else int(s) for s in self._sequence_array().tolist()]

    @property
    def word_ids(self) -> list[int | None]:
        """Per token, the index of its word in its text (None for added tokens and padding)."""
        return [None if w < 0 else int(w) for w in self._word_array().tolist()]

    def _check_token(self, token_index: int) -> int:
        n = len(self)
        if not isinstance(token_index, (int, np.integer)) or not -n <= token_index < n:
            raise IndexError(f"token index {token_index!r} is outside this encoding of {n} tokens")
        return int(token_index) % n if n else 0

    def token_to_sequence(self, token_index: int) -> int | None:
        """The text (0 or 1) the token comes from, None for an added token or padding."""
        s = int(self._sequence_array()[self._check_token(token_index)])
        return None if s < 0 else s

    def token_to_chars(self, token_index: int) -> tuple[int, int] | None:
        """The ``(start, end)`` code-point span of the token in its text, None for an added token or padding."""
        t = self._check_token(token_index)
        if self._sequence_array()[t] < 0:
            return None
        start, end = self.offsets[t].tolist()
        return start, end

    def token_to_word(self, token_index: int) -> int | None:
        """The index of the token's word in its text, None for an added token or padding."""
        w = int(self._word_array()[self._check_token(token_index)])
        return None if w < 0 else w

    def char_to_token(self, char_pos: int, sequence_index: int = 0) -> int | None:
        """The first token of text ``sequence_index`` whose span holds the code point ``char_pos``, or None (a
        character no token covers, such as a space the pre-tokenizer dropped)."""
        seqs = self._sequence_array()
        hit = np.flatnonzero((seqs == sequence_index) & (self.offsets[:, 0] <= char_pos)
                             & (char_pos < self.offsets[:, 1]))
        return int(hit[0]) if hit.size else None

    def char_to_word(self, char_pos: int, sequence_index: int = 0) -> int | None:
        """The word of text ``sequence_index`` holding the code point ``char_pos`` (through its token), or None."""
        t = self.char_to_token(char_pos, sequence_index)
        return None if t is None else self.token_to_word(t)

    def word_to_tokens(self, word_index: int, sequence_index: int = 0) -> tuple[int, int] | None:
        """``(first, last + 1)``: the tokens of word ``word_index`` of text ``sequence_index``, or None."""
        hit = np.flatnonzero((self._sequence_array() == sequence_index) & (self._word_array() == word_index))
        return (int(hit[0]), int(hit[-1]) + 1) if hit.size else None

    def word_to_chars(self, word_index: int, sequence_index: int = 0) -> tuple[int, int] | None:
        """The code-point span of word ``word_index`` of text ``sequence_index``: from the start of its first token
        to the end of its last, or None."""
        tokens = self.word_to_tokens(word_index, sequence_index)
        if tokens is None:
            return None
        return int(self.offsets[tokens[0], 0]), int(self.offsets[tokens[1] - 1, 1])

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
        out = cls(
            np.concatenate([p.ids for p in parts]),
            [t for p in parts for t in p.tokens],
            np.concatenate([p.offsets for p in parts]),
            np.concatenate([p.type_ids for p in parts]),
            np.concatenate([p.special_tokens_mask for p in parts]),
            np.concatenate([p.attention_mask for p in parts]),
        )
        if any(p._sequences is not None for p in parts):
            out._sequences = np.concatenate([p._sequence_array() for p in parts])
        return out


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
