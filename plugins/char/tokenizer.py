"""Character tokenizer: one token per Unicode code point."""

from __future__ import annotations

from collections import Counter
from typing import Any, ClassVar, Iterable, Sequence

import numpy as np

from tokembed.encoding import Encoding
from tokembed.errors import CorpusError, TokembedError
from tokembed.vocab import VOCAB_PARAM_CONSTRAINTS, VocabTokenizer

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
    param_constraints: ClassVar[dict[str, Any]] = {**VOCAB_PARAM_CONSTRAINTS}

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
    def fit(self, corpus: Iterable[str], y: Any = None) -> "CharTokenizer":
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

        self._validate_params()
        counts: Counter[str] = Counter()
        for doc in corpus:
            if not isinstance(doc, str):
                raise CorpusError(f"char: documents must be str, got {type(doc).__name__}")
            counts.update(doc)
        return WordCounts.from_dict(counts)

    def fit_counts(self, counts: Any) -> "CharTokenizer":
        """Build the vocabulary from the merged :meth:`partial_counts` of the corpus (see :meth:`fit`)."""
        self._validate_params()
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
    def _ids(self, cps: np.ndarray) -> np.ndarray:
        """int32 ids of code points (uint32, shape (n,)); -1 for a character without an entry when there is no
        ``unk_token``."""
        table = self._table
        inside = cps < table.shape[0]
        ids = np.full(cps.shape[0], self._unk_id, dtype=np.int32)
        ids[inside] = table[cps[inside]]
        return ids

    def _not_in_vocabulary(self, text: str, pos: int, where: str = "") -> TokembedError:
        return TokembedError(
            f"char: character {text[pos]!r} (U+{ord(text[pos]):04X}) at position {pos}{where} is not in the "
            "vocabulary and this tokenizer has no unk_token"
        )

    def _encode_text(self, text: str) -> Encoding:
        ids = self._ids(_code_points(text))
        n = ids.shape[0]
        if self._unk_id < 0 and (ids < 0).any():
            raise self._not_in_vocabulary(text, int(np.flatnonzero(ids < 0)[0]))
        offsets = np.empty((n, 2), dtype=np.int64)
        offsets[:, 0] = np.arange(n, dtype=np.int64)
        offsets[:, 1] = offsets[:, 0] + 1
        return Encoding(ids, self._itos[ids].tolist(), offsets)

    def encode_ids(self, texts: Sequence[str], *, spans: bool = False
                   ) -> tuple[np.ndarray, np.ndarray] | tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Ids (and with ``spans=True`` code-point spans) of many texts at once (see
        :meth:`tokembed.Tokenizer.encode_ids`): one table lookup over the code points of all texts joined, with no
        :class:`Encoding` or token string per text. Text ``i`` has ``len(texts[i])`` tokens, token ``j`` of it
        the span ``(j, j + 1)``.

        Raises
        ------
        TypeError
            If ``texts`` is a str or holds a non-str.
        TokembedError
            If a character is not in the vocabulary and there is no ``unk_token`` (naming the first one, its
            position and its text).
        """
        from tokembed.postprocess import check_batch_inputs

        self._check_is_fitted()
        texts, _ = check_batch_inputs(texts, None)
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        ids = self._ids(_code_points("".join(texts)))
        starts = np.zeros(len(texts), dtype=np.int64)
        np.cumsum(lengths[:-1], out=starts[1:])
        if self._unk_id < 0 and (ids < 0).any():
            pos = int(np.flatnonzero(ids < 0)[0])
            k = int(np.searchsorted(starts, pos, side="right")) - 1
            raise self._not_in_vocabulary(texts[k], pos - int(starts[k]), f" of text {k}")
        if not spans:
            return ids, lengths
        out = np.empty((ids.shape[0], 2), dtype=np.int64)
        out[:, 0] = np.arange(ids.shape[0], dtype=np.int64) - np.repeat(starts, lengths)
        out[:, 1] = out[:, 0] + 1
        return ids, lengths, out

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
