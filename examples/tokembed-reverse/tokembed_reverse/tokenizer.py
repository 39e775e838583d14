"""The ``reverse`` tokenizer: whitespace-separated words, each token spelled backwards.

A toy with a real contract: it learns a vocabulary, encodes with offsets, decodes exactly, and saves and loads
through tokembed's artifact format. Its tokens read backwards (``"whale"`` -> ``"elahw"``), so in a side-by-side
comparison nobody mistakes them for the output of the built-in ``word`` tokenizer.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, ClassVar, Iterable, Sequence

import numpy as np

from tokembed import CorpusError, Encoding, TokembedError, Tokenizer

__all__ = ["ReverseTokenizer"]

#: A piece is a maximal run of whitespace or a maximal run of anything else, so the pieces tile the text.
_PIECE = re.compile(r"\s+|\S+")


class ReverseTokenizer(Tokenizer):
    """Split text into runs of whitespace and runs of non-whitespace; each run, reversed, is one token.

    The vocabulary holds, in id order, ``unk_token`` (if set), the other ``special_tokens`` in the order given,
    then the reversed pieces whose corpus count is at least ``min_frequency``, most frequent first, ties by the
    token string; ``vocab_size`` caps the total, special tokens included. Whitespace runs are tokens too, so
    ``decode(encode(s).ids) == s`` exactly when every piece of ``s`` is in the vocabulary.

    Parameters
    ----------
    vocab_size : int or None, default None
        Largest vocabulary, special tokens included; None keeps every piece that reaches ``min_frequency``.
    min_frequency : int, default 1
        Smallest corpus count a piece needs to enter the vocabulary.
    unk_token : str or None, default "<unk>"
        Token for pieces outside the vocabulary (it decodes to its own text). With None such a piece raises
        ``TokembedError``.
    special_tokens : sequence of str, default ()
        More special tokens, after ``unk_token``.

    Notes
    -----
    Offsets are the ``[start, end)`` code-point span of the piece in the original text. This is an example for
    plugin authors, not a method from the literature.
    """

    name: ClassVar[str] = "reverse"

    def __init__(
        self,
        vocab_size: int | None = None,
        min_frequency: int = 1,
        unk_token: str | None = "<unk>",
        special_tokens: Sequence[str] = (),
    ):
        # scikit-learn's rule: store the parameters unchanged; validate and convert in fit.
        self.vocab_size = vocab_size
        self.min_frequency = min_frequency
        self.unk_token = unk_token
        self.special_tokens = special_tokens

    # -- training ---------------------------------------------------------------------------------------------
    def _specials(self) -> list[str]:
        out: list[str] = []
        for tok in [self.unk_token, *self.special_tokens]:
            if tok is not None and tok not in out:
                out.append(tok)
        return out

    def _validate(self) -> None:
        if self.vocab_size is not None and (
            isinstance(self.vocab_size, bool) or not isinstance(self.vocab_size, int) or self.vocab_size < 1
        ):
            raise TokembedError(f"reverse: vocab_size must be an int >= 1 or None, got {self.vocab_size!r}")
        if isinstance(self.min_frequency, bool) or not isinstance(self.min_frequency, int) or self.min_frequency < 1:
            raise TokembedError(f"reverse: min_frequency must be an int >= 1, got {self.min_frequency!r}")
        if isinstance(self.special_tokens, str):
            raise TokembedError("reverse: special_tokens must be a list of strings, not one string")
        for tok in self._specials():
            if not isinstance(tok, str) or not tok:
                raise TokembedError(f"reverse: special tokens must be non-empty strings, got {tok!r}")
        if self.vocab_size is not None and self.vocab_size < len(self._specials()):
            raise TokembedError(
                f"reverse: vocab_size={self.vocab_size} is smaller than the {len(self._specials())} special tokens"
            )

    def fit(self, corpus: Iterable[str], y: Any = None) -> "ReverseTokenizer":
        """Count the reversed pieces of ``corpus`` (an iterable of str, read once) and build the vocabulary.

        Raises
        ------
        CorpusError
            If a document is not a str, or the corpus holds no character at all.
        TokembedError
            If a parameter is invalid.
        """
        self._validate()
        if isinstance(corpus, str):
            corpus = [corpus]
        counts: Counter[str] = Counter()
        for doc in corpus:
            if not isinstance(doc, str):
                raise CorpusError(f"reverse: documents must be str, got {type(doc).__name__}")
            counts.update(m.group()[::-1] for m in _PIECE.finditer(doc))
        if not counts:
            raise CorpusError("reverse: the corpus is empty (no text to learn a vocabulary from)")
        specials = self._specials()
        tokens = sorted(
            (t for t, n in counts.items() if n >= self.min_frequency and t not in specials),
            key=lambda t: (-counts[t], t),
        )
        if self.vocab_size is not None:
            tokens = tokens[: self.vocab_size - len(specials)]
        self._set_vocab(specials, tokens)
        self.token_counts_ = {t: counts[t] for t in tokens}
        return self

    def _set_vocab(self, specials: list[str], tokens: list[str]) -> None:
        self.special_tokens_ = list(specials)
        self.vocab_ = {t: i for i, t in enumerate(specials + tokens)}
        self._itos = specials + tokens
        # pieces are looked up among the learned tokens only: a piece reading "<unk>" backwards stays plain text
        self._plain = {t: i for i, t in enumerate(tokens, start=len(specials))}
        self._unk_id = self.vocab_[self.unk_token] if self.unk_token is not None else -1

    # -- encoding ---------------------------------------------------------------------------------------------
    def _encode_text(self, text: str) -> Encoding:
        ids, tokens, offsets = [], [], []
        for m in _PIECE.finditer(text):
            i = self._plain.get(m.group()[::-1], self._unk_id)
            if i < 0:
                raise TokembedError(
                    f"reverse: {m.group()!r} at {m.start()} is not in the vocabulary and this tokenizer has no "
                    "unk_token"
                )
            ids.append(i)
            tokens.append(self._itos[i])
            offsets.append((m.start(), m.end()))
        return Encoding(np.array(ids, dtype=np.int32), tokens, np.array(offsets, dtype=np.int64).reshape(-1, 2))

    def decode(self, ids: Sequence[int] | np.ndarray, skip_special_tokens: bool = False) -> str:
        """Spell each token forwards again and join them; special tokens decode to their own text.

        Raises
        ------
        TokembedError
            If an id is outside ``[0, get_vocab_size())``.
        """
        self._check_is_fitted()
        n_special = len(self.special_tokens_)
        out = []
        for i in np.asarray(ids, dtype=np.int64).reshape(-1).tolist():
            if not 0 <= i < len(self._itos):
                raise TokembedError(f"reverse: id {i} is outside the vocabulary [0, {len(self._itos)})")
            if i < n_special:
                if not skip_special_tokens:
                    out.append(self._itos[i])
            else:
                out.append(self._itos[i][::-1])
        return "".join(out)

    def get_vocab(self) -> dict[str, int]:
        self._check_is_fitted()
        return dict(self.vocab_)

    # -- state ------------------------------------------------------------------------------------------------
    def _get_state(self) -> dict[str, Any]:
        learned = self._itos[len(self.special_tokens_):]
        return {
            "special_tokens": list(self.special_tokens_),
            "tokens": list(learned),
            "counts": [self.token_counts_[t] for t in learned],
        }

    def _set_state(self, state: dict[str, Any]) -> None:
        specials, tokens, counts = state["special_tokens"], state["tokens"], state["counts"]
        if not all(isinstance(t, str) and t for t in [*specials, *tokens]):
            raise ValueError("every token must be a non-empty string")
        if len(set(specials) | set(tokens)) != len(specials) + len(tokens):
            raise ValueError("duplicate entries in the vocabulary")
        if len(counts) != len(tokens):
            raise ValueError(f"{len(counts)} counts for {len(tokens)} tokens")
        self._set_vocab(list(specials), list(tokens))
        self.token_counts_ = {t: int(n) for t, n in zip(tokens, counts)}
