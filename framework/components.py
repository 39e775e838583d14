"""Base classes of the three kinds of component: Tokenizer, Vectorizer and Embedder.

They follow scikit-learn's estimator conventions:

- ``__init__`` only stores its keyword arguments, under the same names, and validates nothing;
- ``fit`` validates, learns, sets attributes whose names end in ``_`` and returns ``self``;
- using a component before ``fit`` (or ``load``) raises :class:`~tokembed.errors.NotFittedError`;
- ``get_params()`` returns exactly the keyword arguments that rebuild an equal, unfitted component; a recipe stores
  nothing else.

Every component class carries ``name``, the key recipes use, and ``kind``. Fitted state is saved as JSON (no pickle)
with :meth:`Component.save` and read back with :meth:`Component.load`; a subclass provides ``_get_state`` and
``_set_state``.
"""

from __future__ import annotations

import copy
import inspect
import os
from pathlib import Path
from typing import Any, ClassVar, Collection, Iterable, Literal, Sequence

import numpy as np

from .encoding import Encoding
from .errors import ArtifactError, NotFittedError, TokembedError
from .io import atomic_write_json, read_json

__all__ = ["Component", "Tokenizer", "Vectorizer", "Embedder", "ARTIFACT_FORMAT", "ARTIFACT_VERSION"]

ARTIFACT_FORMAT = "tokembed"
ARTIFACT_VERSION = 1

Kind = Literal["tokenizer", "vectorizer", "embedder"]


class Component:
    """Common behaviour of every component; subclass :class:`Tokenizer`, :class:`Vectorizer` or :class:`Embedder`."""

    #: The key recipes use (``type: char``). Unique per kind across all installed plugins.
    name: ClassVar[str] = ""
    #: ``"tokenizer"``, ``"vectorizer"`` or ``"embedder"``; set by the kind's base class.
    kind: ClassVar[str] = ""

    # -- parameters -------------------------------------------------------------------------------------------
    @classmethod
    def _param_names(cls) -> list[str]:
        """Names of the keyword parameters of ``__init__`` (``*args``/``**kwargs`` are not allowed)."""
        sig = inspect.signature(cls.__init__)
        names = []
        for p in list(sig.parameters.values())[1:]:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise TypeError(f"{cls.__qualname__}.__init__ must list its parameters explicitly, not *{p.name}")
            names.append(p.name)
        return names

    def get_params(self) -> dict[str, Any]:
        """Return the parameters as passed to ``__init__`` (deep copies): ``type(c)(**c.get_params())`` is equal."""
        return {name: copy.deepcopy(getattr(self, name)) for name in self._param_names()}

    def set_params(self, **params: Any) -> "Component":
        """Set parameters by name; unknown names raise ``ValueError``. Returns ``self``."""
        valid = set(self._param_names())
        for key, value in params.items():
            if key not in valid:
                raise ValueError(f"{type(self).__name__} has no parameter {key!r}; valid: {', '.join(sorted(valid))}")
            setattr(self, key, value)
        return self

    def __repr__(self) -> str:
        defaults = {
            p.name: p.default for p in list(inspect.signature(type(self).__init__).parameters.values())[1:]
        }
        shown = [f"{k}={v!r}" for k, v in self.get_params().items() if not _same(defaults.get(k, inspect._empty), v)]
        return f"{type(self).__name__}({', '.join(shown)})"

    # -- fitted state -----------------------------------------------------------------------------------------
    def is_fitted(self) -> bool:
        """True when ``fit`` (or ``load``) has set the learned attributes (public names ending in ``_``)."""
        return any(k.endswith("_") and not k.startswith("_") for k in vars(self))

    def _check_is_fitted(self) -> None:
        if not self.is_fitted():
            raise NotFittedError(
                f"this {type(self).__name__} ({self.kind} {self.name!r}) is not fitted yet: "
                "call fit(...) or load(...) before using it"
            )

    # -- save / load ------------------------------------------------------------------------------------------
    def _get_state(self) -> dict[str, Any]:
        """The learned state as JSON-able data (override)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement _get_state")

    def _set_state(self, state: dict[str, Any]) -> None:
        """Restore the learned state written by ``_get_state`` (override)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement _set_state")

    def to_dict(self) -> dict[str, Any]:
        """The artifact as JSON-able data: format, kind, type, params and learned state."""
        self._check_is_fitted()
        return {
            "format": ARTIFACT_FORMAT,
            "format_version": ARTIFACT_VERSION,
            "kind": self.kind,
            "type": self.name,
            "params": self.get_params(),
            "state": self._get_state(),
        }

    def save(self, path: str | os.PathLike) -> Path:
        """Save the fitted component as JSON (``<label>.tokembed.json`` by convention), atomically.

        Raises
        ------
        NotFittedError
            If the component is not fitted.
        """
        return atomic_write_json(path, self.to_dict())

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "<dict>") -> "Component":
        """Rebuild a component from :meth:`to_dict` data; raises :class:`ArtifactError` when it does not fit."""
        if not isinstance(data, dict) or data.get("format") != ARTIFACT_FORMAT:
            raise ArtifactError(f"{source}: not a tokembed artifact (no \"format\": \"{ARTIFACT_FORMAT}\")")
        version = data.get("format_version")
        if version != ARTIFACT_VERSION:
            raise ArtifactError(
                f"{source}: artifact format version {version!r}; this tokembed reads version {ARTIFACT_VERSION}"
            )
        if data.get("kind") != cls.kind or (cls.name and data.get("type") != cls.name):
            raise ArtifactError(
                f"{source}: holds a {data.get('kind')} of type {data.get('type')!r}, "
                f"not a {cls.kind} of type {cls.name!r}; use tokembed.load() to dispatch on the type"
            )
        params, state = data.get("params"), data.get("state")
        if not isinstance(params, dict) or not isinstance(state, dict):
            raise ArtifactError(f"{source}: \"params\" and \"state\" must be objects")
        try:
            obj = cls(**params)
        except TypeError as exc:
            raise ArtifactError(f"{source}: parameters do not match {cls.__name__}: {exc}") from None
        try:
            obj._set_state(state)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            if isinstance(exc, TokembedError):
                raise
            raise ArtifactError(f"{source}: broken {cls.name} state: {type(exc).__name__}: {exc}") from None
        return obj

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Component":
        """Load a component saved by :meth:`save`.

        Raises
        ------
        ArtifactError
            If the file is missing, not JSON, truncated, of another component type, or of an unknown version.
        """
        return cls.from_dict(read_json(path), source=str(path))


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # arrays and the like
        return False


class Tokenizer(Component):
    """Text -> token ids and back.

    Subclasses implement ``fit``, ``_encode_text`` (one text, no special-token handling), ``decode``,
    ``get_vocab`` and the state methods, and set the fitted attribute ``special_tokens_`` (list of str, in id
    order); this class provides ``encode``/``encode_batch`` with the shared handling of special tokens written in
    the text, ``token_to_id``, ``id_to_token`` and ``get_vocab_size``.

    Trainer parameters keep the Hugging Face names (``vocab_size``, ``special_tokens``) and, as in
    scikit-learn, are stored unchanged under those names: ``vocab_size`` is the size asked for, while
    ``get_vocab_size()`` is the size obtained.

    Special tokens written inside user text (``"<unk>"`` typed by a user) are encoded as ordinary text, unless the
    caller lists them in ``allowed_special`` (or passes ``allowed_special="all"``): then each occurrence becomes
    the special token's id. This is tiktoken's rule, and it keeps untrusted text from injecting control tokens.
    """

    kind: ClassVar[str] = "tokenizer"

    # -- to implement -----------------------------------------------------------------------------------------
    def fit(self, corpus: Iterable[str]) -> "Tokenizer":
        """Learn the vocabulary from ``corpus`` (an iterable of documents, read once, streamed); return self."""
        raise NotImplementedError

    def _encode_text(self, text: str) -> Encoding:
        """Encode ``text`` as ordinary text (special-token strings are not recognised)."""
        raise NotImplementedError

    def decode(self, ids: Sequence[int] | np.ndarray, skip_special_tokens: bool = False) -> str:
        """Turn ids back into text."""
        raise NotImplementedError

    def get_vocab(self) -> dict[str, int]:
        """The vocabulary, token -> id, special tokens included."""
        raise NotImplementedError

    # -- provided ---------------------------------------------------------------------------------------------
    def get_vocab_size(self) -> int:
        """Number of entries in the fitted vocabulary, special tokens included.

        (The ``vocab_size`` parameter of a trainer is the size asked for; this is the size obtained.)
        """
        return len(self.get_vocab())

    def token_to_id(self, token: str) -> int | None:
        """The id of ``token``, or None if it is not in the vocabulary."""
        return self.get_vocab().get(token)

    def id_to_token(self, id: int) -> str | None:
        """The token of ``id``, or None if ``id`` is out of range."""
        inv = getattr(self, "_id_to_token_cache", None)
        if inv is None or len(inv) != self.get_vocab_size():
            vocab = self.get_vocab()
            inv = [""] * len(vocab)
            for tok, i in vocab.items():
                inv[i] = tok
            self._id_to_token_cache = inv
        return inv[id] if 0 <= id < len(inv) else None

    def _allowed_specials(self, allowed_special: Collection[str] | Literal["all"]) -> list[str]:
        specials = self.special_tokens_
        if allowed_special == "all":
            return list(specials)
        if isinstance(allowed_special, str):
            raise TypeError('allowed_special must be a collection of special tokens or "all", not a string')
        unknown = [s for s in allowed_special if s not in specials]
        if unknown:
            raise TokembedError(f"allowed_special lists {unknown!r}, which are not special tokens of this tokenizer "
                                f"(special tokens: {specials!r})")
        return list(allowed_special)

    def encode(self, text: str, *, allowed_special: Collection[str] | Literal["all"] = ()) -> Encoding:
        """Encode one text.

        Parameters
        ----------
        text : str
            The text. Offsets in the result are code-point spans into it.
        allowed_special : collection of str or "all"
            Special tokens that are recognised when written in ``text``; all others are encoded as plain text.

        Returns
        -------
        Encoding
            ``ids`` int32 (n,), ``tokens``, ``offsets`` int64 (n, 2).

        Raises
        ------
        NotFittedError
            If the tokenizer is not fitted.
        TypeError
            If ``text`` is not a ``str``.
        """
        self._check_is_fitted()
        if not isinstance(text, str):
            raise TypeError(f"encode expects str, got {type(text).__name__}")
        allowed = self._allowed_specials(allowed_special) if allowed_special else []
        if not allowed:
            return self._encode_text(text)
        return self._encode_with_specials(text, allowed)

    def _encode_with_specials(self, text: str, allowed: list[str]) -> Encoding:
        import re

        # longest first, so "<|end|>" wins over "<|e" when both are special
        pattern = re.compile("|".join(re.escape(s) for s in sorted(allowed, key=len, reverse=True)))
        vocab = self.get_vocab()
        parts: list[Encoding] = []
        pos = 0
        for m in pattern.finditer(text):
            if m.start() > pos:
                parts.append(_shift(self._encode_text(text[pos:m.start()]), pos))
            parts.append(Encoding([vocab[m.group()]], [m.group()], [[m.start(), m.end()]]))
            pos = m.end()
        if pos < len(text) or not parts:
            parts.append(_shift(self._encode_text(text[pos:]), pos))
        return Encoding.concatenate(parts)

    def encode_batch(
        self, texts: Iterable[str], *, allowed_special: Collection[str] | Literal["all"] = ()
    ) -> list[Encoding]:
        """Encode several texts; returns one :class:`Encoding` per text, in order."""
        return [self.encode(t, allowed_special=allowed_special) for t in texts]


def _shift(enc: Encoding, by: int) -> Encoding:
    if by:
        enc.offsets = enc.offsets + by
    return enc


class Vectorizer(Component):
    """Token sequences, raw documents or a matrix -> a matrix (``scipy.sparse`` CSR or dense float array)."""

    kind: ClassVar[str] = "vectorizer"

    def fit(self, X: Any) -> "Vectorizer":
        raise NotImplementedError

    def transform(self, X: Any) -> Any:
        raise NotImplementedError

    def fit_transform(self, X: Any) -> Any:
        """``fit(X)`` then ``transform(X)``; subclasses may override with a single pass."""
        return self.fit(X).transform(X)

    def get_feature_names_out(self) -> np.ndarray:
        raise NotImplementedError


class Embedder(Component):
    """Tokens -> dense vectors: trained word vectors (GloVe, FastText) or a module-producing embedding."""

    kind: ClassVar[str] = "embedder"

    def fit(self, X: Any) -> "Embedder":
        raise NotImplementedError
