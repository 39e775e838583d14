"""Character tokenizer: one token per Unicode code point."""

from __future__ import annotations

from collections import Counter
from typing import Any, ClassVar, Iterable, Sequence

import numpy as np

from tokembed.components import Tokenizer
from tokembed.encoding import Encoding
from tokembed.errors import CorpusError, TokembedError

__all__ = ["CharTokenizer"]


def _code_points(text: str) -> np.ndarray:
    """Code points of ``text`` as uint32, shape (len(text),); lone surrogates kept as their code point."""
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")


class CharTokenizer(Tokenizer):
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
    (see :meth:`tokembed.Tokenizer.encode`). With every character of ``s`` in the vocabulary,
    ``decode(encode(s).ids) == s`` exactly, whitespace included. A lone surrogate (``"\\ud800"``) is a code point
    like any other. Offsets are ``(i, i + 1)`` (code points).
    """

    name: ClassVar[str] = "char"

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
    def _specials(self) -> list[str]:
        out: list[str] = []
        for tok in [self.pad_token, self.unk_token, *self.special_tokens]:
            if tok is not None and tok not in out:
                out.append(tok)
        return out

    @classmethod
    def expected_special_ids(cls, params: dict[str, Any]) -> dict[str, int]:
        """Special token -> id as :meth:`fit` will assign them: ``pad_token``, ``unk_token``, then
        ``special_tokens``, unset ones skipped and repeats dropped, numbered from 0.

        Raises
        ------
        TypeError
            If ``params`` holds a name that is not a parameter.
        """
        return {tok: i for i, tok in enumerate(cls(**params)._specials())}

    def _validate(self) -> None:
        if self.vocab_size is not None and (not isinstance(self.vocab_size, int) or self.vocab_size < 1):
            raise TokembedError(f"char: vocab_size must be an int >= 1 or None, got {self.vocab_size!r}")
        if not isinstance(self.min_frequency, int) or self.min_frequency < 1:
            raise TokembedError(f"char: min_frequency must be an int >= 1, got {self.min_frequency!r}")
        if isinstance(self.special_tokens, str):
            raise TokembedError("char: special_tokens must be a list of strings, not one string")
        for tok in self._specials():
            if not isinstance(tok, str) or not tok:
                raise TokembedError(f"char: special tokens must be non-empty strings, got {tok!r}")
        if self.vocab_size is not None and self.vocab_size < len(self._specials()):
            raise TokembedError(
                f"char: vocab_size={self.vocab_size} is smaller than the {len(self._specials())} special tokens"
            )

    def fit(self, corpus: Iterable[str]) -> "CharTokenizer":
        """Count code points over ``corpus`` (an iterable of str, streamed once) and build the vocabulary.

        Raises
        ------
        CorpusError
            If the corpus holds no character at all.
        TokembedError
            If a parameter is invalid.
        """
        self._validate()
        if isinstance(corpus, str):
            corpus = [corpus]
        counts: Counter[str] = Counter()
        for doc in corpus:
            if not isinstance(doc, str):
                raise CorpusError(f"char: documents must be str, got {type(doc).__name__}")
            counts.update(doc)
        if not counts:
            raise CorpusError("char: the corpus is empty (no character to learn a vocabulary from)")
        specials = self._specials()
        chars = sorted(
            (c for c, n in counts.items() if n >= self.min_frequency and c not in specials),
            key=lambda c: (-counts[c], ord(c)),
        )
        if self.vocab_size is not None:
            chars = chars[: self.vocab_size - len(specials)]
        self._set_vocab(specials, chars)
        self.char_counts_ = {c: counts[c] for c in chars}
        return self

    def _set_vocab(self, specials: list[str], chars: list[str]) -> None:
        tokens = specials + chars
        self.special_tokens_ = list(specials)
        self.vocab_ = {t: i for i, t in enumerate(tokens)}
        self._itos = np.array(tokens, dtype=object)
        self._is_special = np.zeros(len(tokens), bool)
        self._is_special[: len(specials)] = True
        unk = self.vocab_.get(self.unk_token, -1) if self.unk_token is not None else -1
        self._unk_id = unk
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

    def decode(self, ids: Sequence[int] | np.ndarray, skip_special_tokens: bool = False) -> str:
        """Join the tokens of ``ids``; the unk token decodes to its own text unless ``skip_special_tokens``.

        Raises
        ------
        TokembedError
            If an id is outside ``[0, get_vocab_size())``.
        """
        self._check_is_fitted()
        arr = np.asarray(ids, dtype=np.int64).reshape(-1)
        if arr.size and (arr.min() < 0 or arr.max() >= len(self._itos)):
            bad = int(arr[(arr < 0) | (arr >= len(self._itos))][0])
            raise TokembedError(f"char: id {bad} is outside the vocabulary [0, {len(self._itos)})")
        if skip_special_tokens:
            arr = arr[~self._is_special[arr]]
        return "".join(self._itos[arr].tolist())

    def get_vocab(self) -> dict[str, int]:
        self._check_is_fitted()
        return dict(self.vocab_)

    def get_vocab_size(self) -> int:
        self._check_is_fitted()
        return len(self.vocab_)

    def token_to_id(self, token: str) -> int | None:
        self._check_is_fitted()
        return self.vocab_.get(token)

    def id_to_token(self, id: int) -> str | None:
        self._check_is_fitted()
        return self._itos[id] if 0 <= id < len(self._itos) else None

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
        if len(set(specials + chars)) != len(specials) + len(chars):
            raise ValueError("duplicate entries in the vocabulary")
        self._set_vocab(specials, chars)
        counts = state.get("char_counts") or [0] * len(chars)
        self.char_counts_ = dict(zip(chars, (int(n) for n in counts)))
