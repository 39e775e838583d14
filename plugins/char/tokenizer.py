"""Character tokenizer: one token per Unicode code point."""

from __future__ import annotations

from collections import Counter
from typing import Any, ClassVar, Iterable, Sequence

import numpy as np

from tokembed.encoding import Encoding
from tokembed.errors import CorpusError, TokembedError
from tokembed.vocab import VocabTokenizer

__all__ = ["CharTokenizer"]


def _code_points(text: str) -> np.ndarray:
    """Code points of ``text`` as uint32, shape (len(text),); lone surrogates kept as their code point."""
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")


class CharTokenizer(VocabTokenizer):
    """One token per Unicode code point, with a vocabulary of the code points seen in the corpus.

    The vocabulary holds, in id order: ``pad_token`` (if set), ``unk_token`` (if set), the other
    ``special_tokens`` in the order given, then the code points whose count is at least ``min_frequency``, most
    frequent first, ties by code point; ``vocab_size`` caps the total, special tokens included.

    Parameters
    ----------
    vocab_size : int or None, default None
        Largest vocabulary, special tokens included; None keeps every code point that reaches ``min_frequency``.
    min_frequency : int, default 1
        Smallest corpus count (in code points) a character needs to enter the vocabulary.
    unk_token : str or None, default "<unk>"
        Token for characters outside the vocabulary. With None, encoding such a character raises
        ``TokembedError``.
    pad_token : str or None, default "<pad>"
        Padding token (id 0 when set).
    special_tokens : sequence of str, default ()
        More special tokens, after the pad and unk tokens.
    seed : int, default 0
        Accepted like every trainer's; this training is deterministic and uses no randomness.

    Notes
    -----
    Special-token strings written inside the text are ordinary characters unless passed in ``allowed_special``
    (see :meth:`tokembed.Tokenizer.encode`). A one-character special token is not also a character of the
    vocabulary (a string has one id): ``fit`` warns (:class:`tokembed.errors.SpecialTokenInCorpusWarning`) when
    the corpus holds it, since that character then encodes as ``unk_token``. With every character of ``s`` in the
    vocabulary, ``decode(encode(s).ids) == s`` exactly, whitespace included. A lone surrogate (``"\\ud800"``) is a
    code point like any other. Offsets are ``(i, i + 1)`` (code points).
    """

    name: ClassVar[str] = "char"
    decode_joiner: ClassVar[str] = ""
    _entry_name: ClassVar[str] = "character"

    def __init__(
        self,
        vocab_size: int | None = None,
        min_frequency: int = 1,
        unk_token: str | None = "<unk>",
        pad_token: str | None = "<pad>",
        special_tokens: Sequence[str] = (),
        seed: int = 0,
    ):
        self.vocab_size = vocab_size
        self.min_frequency = min_frequency
        self.unk_token = unk_token
        self.pad_token = pad_token
        self.special_tokens = special_tokens
        self.seed = seed

    # -- training ---------------------------------------------------------------------------------------------
    def fit(self, corpus: Iterable[str]) -> "CharTokenizer":
        """Count code points over ``corpus`` (an iterable of str, streamed once) and build the vocabulary.

        Raises
        ------
        CorpusError
            If the corpus holds no character at all.
        TokembedError
            If a parameter is invalid.

        Warns
        -----
        SpecialTokenInCorpusWarning
            If a special token other than ``unk_token`` is a character of the corpus (reaching
            ``min_frequency``): that character encodes as ``unk_token``.
        """
        return self.fit_counts(self.partial_counts(corpus))

    def partial_counts(self, corpus: Iterable[str]) -> Any:
        """Counts of the code points of ``corpus``, as :class:`tokembed.text.fast.WordCounts` of one-character
        words (partial counts that merge).

        Raises
        ------
        CorpusError
            If a document is not a str.
        """
        from tokembed.text.fast import WordCounts

        self._validate()
        counts: Counter[str] = Counter()
        for doc in corpus:
            if not isinstance(doc, str):
                raise CorpusError(f"char: documents must be str, got {type(doc).__name__}")
            counts.update(doc)
        return WordCounts.from_dict(counts)

    def fit_counts(self, counts: Any) -> "CharTokenizer":
        """Build the vocabulary from the merged :meth:`partial_counts` of the corpus (see :meth:`fit`)."""
        self._validate()
        counts = counts.to_dict()
        if not counts:
            raise CorpusError("char: the corpus is empty (no character to learn a vocabulary from)")
        chars = self._select(counts, key=lambda c: (-counts[c], ord(c)))
        self._set_vocab(self._specials(), chars)
        self.char_counts_ = {c: counts[c] for c in chars}
        return self

    def _set_vocab(self, specials: list[str], chars: list[str]) -> None:
        self._set_table(specials, chars)
        unk = self._unk_id
        top = max((ord(c) for c in chars), default=-1) + 1
        table = np.full(top, unk, dtype=np.int32)
        for c in chars:
            table[ord(c)] = self.vocab_[c]
        self._table = table

    # -- encoding ---------------------------------------------------------------------------------------------
    def _encode_text(self, text: str) -> Encoding:
        cps = _code_points(text)
        n = cps.shape[0]
        table = self._table
        inside = cps < table.shape[0]
        ids = np.full(n, self._unk_id, dtype=np.int32)
        ids[inside] = table[cps[inside]]
        if self._unk_id < 0 and (ids < 0).any():
            pos = int(np.flatnonzero(ids < 0)[0])
            raise TokembedError(
                f"char: character {text[pos]!r} (U+{ord(text[pos]):04X}) at position {pos} is not in the vocabulary "
                "and this tokenizer has no unk_token"
            )
        offsets = np.empty((n, 2), dtype=np.int64)
        offsets[:, 0] = np.arange(n, dtype=np.int64)
        offsets[:, 1] = offsets[:, 0] + 1
        return Encoding(ids, self._itos[ids].tolist(), offsets)

    # -- state ------------------------------------------------------------------------------------------------
    def _get_state(self) -> dict[str, Any]:
        return {
            "special_tokens": list(self.special_tokens_),
            "chars": self._itos[len(self.special_tokens_):].tolist(),
            "char_counts": [self.char_counts_.get(c, 0) for c in self._itos[len(self.special_tokens_):]],
        }

    def _set_state(self, state: dict[str, Any]) -> None:
        specials = [str(t) for t in state["special_tokens"]]
        chars = [str(c) for c in state["chars"]]
        if any(len(c) != 1 for c in chars):
            raise ValueError("every entry of \"chars\" must be one character")
        self._set_vocab(specials, chars)
        counts = state.get("char_counts") or [0] * len(chars)
        self.char_counts_ = dict(zip(chars, (int(n) for n in counts)))
