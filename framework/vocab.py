"""A vocabulary table shared by tokenizers whose model is a plain token <-> id table (char, word, ...).

:class:`VocabTokenizer` gives such a tokenizer its special-token numbering, the declarations of its shared
parameters (:data:`VOCAB_PARAM_CONSTRAINTS`), ``get_vocab``, ``token_to_id``, ``id_to_token`` and ``decode``; the
subclass supplies ``fit``, ``_encode_text`` and the string that joins decoded tokens.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, ClassVar, Sequence

import numpy as np

from .components import Tokenizer, check_token_ids
from .errors import ParameterError, SpecialTokenInCorpusWarning, VocabularySizeWarning
from .params import Interval, ListOf, Text

__all__ = ["VocabTokenizer", "VOCAB_PARAM_CONSTRAINTS", "SpecialTokenInCorpusWarning"]

#: The declarations (:mod:`tokembed.params`) of the parameters every table tokenizer shares; a subclass spreads them
#: into its own ``param_constraints`` (``{**VOCAB_PARAM_CONSTRAINTS, "normalizer": ...}``).
VOCAB_PARAM_CONSTRAINTS: dict[str, Any] = {
    "vocab_size": [Interval(int, 1, None), None],
    "min_frequency": Interval(int, 1, None),
    "unk_token": [Text(), None],
    "pad_token": [Text(), None],
    "special_tokens": ListOf(Text()),
    "seed": Interval(int, None, None),  # accepted like every trainer's; table training uses no randomness
}


class VocabTokenizer(Tokenizer):
    """Base for tokenizers with a token table: specials first (pad, unk, then ``special_tokens``), then tokens.

    Subclasses store the parameters ``vocab_size``, ``min_frequency``, ``unk_token``, ``pad_token``,
    ``special_tokens`` and ``seed`` (declared in :data:`VOCAB_PARAM_CONSTRAINTS`), call :meth:`_set_table` from
    ``fit``/``_set_state``, and set ``decode_joiner`` and ``_entry_name``. A string has one id: a special token that is also an entry of the corpus keeps only its special
    id, so that entry typed in a text encodes as ``unk_token``; :meth:`_select` warns about it
    (:class:`SpecialTokenInCorpusWarning`).
    """

    #: The string placed between decoded tokens ("" for characters, " " for words).
    decode_joiner: ClassVar[str] = ""
    #: What one entry of the table is, for messages ("character", "word").
    _entry_name: ClassVar[str] = "entry"

    # -- specials and parameters ------------------------------------------------------------------------------
    @classmethod
    def expected_special_ids(cls, params: dict[str, Any]) -> dict[str, int]:
        """Special token -> id as ``fit`` assigns them: ``pad_token``, ``unk_token``, then ``special_tokens``,
        unset ones skipped and repeats dropped, numbered from 0.

        Raises
        ------
        TypeError
            If ``params`` holds a name that is not a parameter.
        """
        return {tok: i for i, tok in enumerate(cls(**params)._specials())}

    def _specials(self) -> list[str]:
        out: list[str] = []
        extra = self.special_tokens if not isinstance(self.special_tokens, str) else [self.special_tokens]
        for tok in [self.pad_token, self.unk_token, *extra]:
            if tok is not None and tok not in out:
                out.append(tok)
        return out

    def _validate(self) -> None:
        """The rule between parameters (each already checked against :data:`VOCAB_PARAM_CONSTRAINTS`):
        ``vocab_size`` holds at least the special tokens."""
        specials = self._specials()
        if self.vocab_size is not None and self.vocab_size < len(specials):
            raise ParameterError(
                self.name, "vocab_size", f"={self.vocab_size} is smaller than the {len(specials)} special tokens "
                f"({self._describe_specials()}); raise vocab_size, or set unused ones to null"
            )

    def _describe_specials(self) -> str:
        """The special tokens with the parameter that sets each: ``'<pad>' (pad_token), '<unk>' (unk_token)``."""
        roles: dict[str, str] = {}
        extra = self.special_tokens if not isinstance(self.special_tokens, str) else [self.special_tokens]
        for role, tok in [("pad_token", self.pad_token), ("unk_token", self.unk_token),
                          *(("special_tokens", t) for t in extra)]:
            if tok is not None:
                roles.setdefault(tok, role)
        return ", ".join(f"{tok!r} ({role})" for tok, role in roles.items())

    def _warn_specials_in_corpus(self, counts: Mapping[str, int], entry: str) -> None:
        """Warn (:class:`SpecialTokenInCorpusWarning`) about the special tokens, ``unk_token`` aside, that are also
        entries of the corpus reaching ``min_frequency`` (``counts``: entry -> corpus count; ``entry``: what an
        entry is, "character" or "word"). Such an entry keeps no id of its own: typed in a text it encodes as
        ``unk_token`` (a special token in text is plain text), or raises without one. ``unk_token`` is left out:
        the text ``"<unk>"`` encoding as ``unk_token`` loses nothing."""
        clash = [t for t in self._specials() if t != self.unk_token and counts.get(t, 0) >= self.min_frequency]
        if not clash:
            return
        found = ", ".join(f"{t!r} (seen {counts[t]} time{'s' if counts[t] != 1 else ''})" for t in clash)
        one = len(clash) == 1
        head = (f"the special token {found} is also a {entry}" if one
                else f"the special tokens {found} are also {entry}s")
        them = f"this {entry}" if one else f"these {entry}s"
        outcome = (f"{them} encode{'s' if one else ''} as unk_token {self.unk_token!r}" if self.unk_token is not None
                   else f"encoding {them} raises (there is no unk_token)")
        warnings.warn(
            f"{self.name}: {head} of the corpus, with no id of {'its' if one else 'their'} own (a string has one "
            f"id, the special token's, and a special token typed in a text is plain text): {outcome}. Choose "
            "special tokens that do not occur in the corpus, or pass allowed_special=... to encode them as the "
            "special tokens", SpecialTokenInCorpusWarning, stacklevel=self._caller_level())

    def _caller_level(self) -> int:
        """The ``stacklevel`` of a warning raised by a method of this class (or a base): it points at the first
        caller outside the class's files, whichever of ``fit`` / ``fit_counts`` it went through."""
        import sys

        own = {getattr(sys.modules.get(c.__module__), "__file__", None) for c in type(self).__mro__}
        frame, level = sys._getframe(1), 1
        while frame is not None and frame.f_code.co_filename in own:
            frame, level = frame.f_back, level + 1
        return level

    def _select(self, counts: dict[str, int], key) -> list[str]:
        """Entries reaching ``min_frequency`` (specials excluded), sorted by ``key``, cut to ``vocab_size``.

        Warns
        -----
        SpecialTokenInCorpusWarning
            If a special token other than ``unk_token`` is an entry of ``counts`` reaching ``min_frequency``.
        VocabularySizeWarning
            If no entry reaches ``min_frequency`` (the vocabulary holds only the special tokens).
        """
        self._warn_specials_in_corpus(counts, self._entry_name)
        specials = set(self._specials())
        chosen = sorted((t for t, n in counts.items() if n >= self.min_frequency and t not in specials), key=key)
        if counts and not chosen:
            warnings.warn(f"{self.name}: no {self._entry_name} occurs at least min_frequency={self.min_frequency} "
                          f"times (the most frequent: {max(counts.values())}); the vocabulary holds only the "
                          "special tokens", VocabularySizeWarning, stacklevel=self._caller_level())
        if self.vocab_size is not None:
            chosen = chosen[: self.vocab_size - len(specials)]
        return chosen

    # -- the table --------------------------------------------------------------------------------------------
    def _set_table(self, specials: list[str], tokens: list[str]) -> None:
        """Install the vocabulary ``specials + tokens`` (ids in that order)."""
        all_tokens = list(specials) + list(tokens)
        vocab = {t: i for i, t in enumerate(all_tokens)}
        if len(vocab) != len(all_tokens):
            raise ValueError("duplicate entries in the vocabulary")
        self.special_tokens_ = list(specials)
        self.vocab_ = vocab
        self._itos = np.array(all_tokens, dtype=object)
        self._is_special = np.zeros(len(all_tokens), bool)
        self._is_special[: len(specials)] = True
        self._unk_id = vocab.get(self.unk_token, -1) if self.unk_token is not None else -1

    def decode(self, ids: Sequence[int] | np.ndarray, skip_special_tokens: bool = False) -> str:
        """Join the tokens of ``ids`` with ``decode_joiner``; special tokens decode to their own text unless
        ``skip_special_tokens``.

        Raises
        ------
        TokembedError
            If an id is outside ``[0, get_vocab_size())``.
        """
        self._check_is_fitted()
        arr = check_token_ids(ids, len(self._itos), self.name)
        if skip_special_tokens:
            arr = arr[~self._is_special[arr]]
        return self.decode_joiner.join(self._itos[arr].tolist())

    def decode_batch(self, ids_list: Sequence[Sequence[int] | np.ndarray], skip_special_tokens: bool = False
                     ) -> list[str]:
        """``[decode(ids, skip_special_tokens) for ids in ids_list]`` in one array pass (a table of each token's
        text, :func:`tokembed.decoding.decode_table`): no Python work per token.

        Raises
        ------
        TokembedError
            As :meth:`decode`, for the first bad sequence.
        """
        from .decoding import decode_table

        self._check_is_fitted()
        return decode_table(self._decode_table(), ids_list, self.name,
                            self._is_special if skip_special_tokens else None)

    def _decode_table(self) -> Any:
        """The :class:`~tokembed.decoding.VariantTable` of the tokens (built once per vocabulary)."""
        from .decoding import VariantTable

        cached = getattr(self, "_decode_cache", None)
        if cached is None or cached[0] is not getattr(self, "_itos", None):
            self._check_is_fitted()
            joiner = self.decode_joiner
            tokens = self._itos.tolist()
            table = (VariantTable.from_strings(tokens, lambda i, tok, first: tok if first else joiner + tok, 2)
                     if joiner else VariantTable.from_strings(tokens))
            cached = self._decode_cache = (self._itos, table)
        return cached[1]

    def token_bytes(self, id: int) -> bytes:
        """The UTF-8 bytes of ``decode([id])`` (lone surrogates kept, ``surrogatepass``): the hook of the
        ``partial_char_rate`` metric.

        Raises
        ------
        TokembedError
            If ``id`` is outside ``[0, get_vocab_size())``.
        NotFittedError
            Before ``fit``."""
        return self._decode_table().token_entry(id, self.name)  # checks fitted and the id, per id no more

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
