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
import hashlib
import inspect
import io
import os
from pathlib import Path
from typing import Any, ClassVar, Collection, Iterable, Literal, Sequence

import numpy as np

from .encoding import BatchEncoding, Encoding
from .errors import ArtifactError, NotFittedError, TokembedError
from .io import atomic_write_bytes, atomic_write_json, npz_bytes, read_json, read_npz
from .postprocess import EncodeOptions, _check_str, batch_result, check_batch_inputs, resolve_workers

__all__ = ["Component", "Tokenizer", "Vectorizer", "Embedder", "ARTIFACT_FORMAT", "ARTIFACT_VERSION", "check_token_ids",
           "arrays_path", "read_artifact"]

ARTIFACT_FORMAT = "tokembed"
ARTIFACT_VERSION = 1

Kind = Literal["tokenizer", "vectorizer", "embedder"]


class Component:
    """Common behaviour of every component; subclass :class:`Tokenizer`, :class:`Vectorizer` or :class:`Embedder`."""

    #: The key recipes use (``type: char``). Unique per kind across all installed plugins.
    name: ClassVar[str] = ""
    #: ``"tokenizer"``, ``"vectorizer"`` or ``"embedder"``; set by the kind's base class.
    kind: ClassVar[str] = ""
    #: Parameters that name a file: in a recipe, a relative path given as a str is made absolute against the
    #: recipe file's folder (against the current directory for a ``--set`` value), as corpus paths are.
    path_params: ClassVar[tuple[str, ...]] = ()

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

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> list[tuple[str | None, str]]:
        """Problems with ``params`` that can be found before any work (``tokembed validate`` reports them).

        Returns a list of ``(parameter, message)`` pairs: ``parameter`` is the name of the parameter the problem is
        about (the recipe checker reports it at that key's line), or None for a problem of the whole component;
        ``message`` is the full message (as ``str`` of the error ``fit`` would raise).

        The default builds the component and runs its ``_validate()`` method when it has one (the checks ``fit``
        starts with). A :class:`~tokembed.errors.ParameterError` it raises (or another :class:`TokembedError` with
        a ``param`` attribute, such as a ``DataError`` about a file parameter) is one problem about that parameter;
        the parameter is then set back to its default and the checks run again, so every problem is found, not
        only the first. A :class:`TokembedError` without ``param`` is one problem of the whole component and ends
        the checks.
        Override for checks that need more (call ``super().check_params(params)`` first).
        """
        validate = getattr(cls, "_validate", None)
        if validate is None:
            return []
        problems: list[tuple[str | None, str]] = []
        params = dict(params)
        while True:
            try:
                validate(cls(**params))
            except TokembedError as exc:
                param = getattr(exc, "param", None)  # a ParameterError, or another error tagged with .param
                problems.append((param, str(exc)))
                if param not in params:
                    return problems
                del params[param]  # back to its default: look for the next problem
            except (TypeError, ValueError):  # left to fit, which reports it in context
                return problems
            else:
                return problems

    @classmethod
    def warmup(cls) -> None:
        """Compile (or load from Numba's cache) every kernel this component uses; a no-op when it has none.

        ``tokembed warmup`` calls it for every registered component, so a user's first real run does not pay
        for compilation.
        """

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

        Arrays in the state (NumPy arrays among the top-level values of ``_get_state()``: vectors, matrices) are
        not written into the JSON: they go to an ``.npz`` file beside it (``<label>.tokembed.npz``), written first
        and deterministically, whose name and SHA-256 the JSON records; :meth:`load` checks both.

        Raises
        ------
        NotFittedError
            If the component is not fitted.
        TokembedError
            If a float array of the state holds NaN or infinity (nothing is written).
        """
        data = self.to_dict()
        state = data["state"]
        arrays = {k: v for k, v in state.items() if isinstance(v, np.ndarray)}
        if not arrays:
            return atomic_write_json(path, data)
        for key, arr in arrays.items():
            if arr.dtype.kind in "fc" and not np.isfinite(arr).all():
                raise TokembedError(f"{self.name}: the fitted {key} holds NaN or infinity; nothing was saved")
        side = arrays_path(path)
        blob = npz_bytes(arrays)
        atomic_write_bytes(side, blob)
        data["state"] = {k: v for k, v in state.items() if k not in arrays}
        data["arrays"] = {"file": side.name, "names": list(arrays), "sha256": hashlib.sha256(blob).hexdigest()}
        return atomic_write_json(path, data)

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
        return cls.from_dict(read_artifact(path), source=str(path))


def arrays_path(path: str | os.PathLike) -> Path:
    """The ``.npz`` file that holds the arrays of the artifact ``path``: ``x.tokembed.json`` -> ``x.tokembed.npz``
    (any other name gets ``.npz`` appended)."""
    p = Path(path)
    return p.with_suffix(".npz") if p.suffix == ".json" else p.with_name(p.name + ".npz")


def read_artifact(path: str | os.PathLike) -> Any:
    """The data :meth:`Component.save` wrote to ``path``, the arrays of its ``.npz`` file back in ``"state"``.

    Raises
    ------
    ArtifactError
        If the JSON is missing or broken, or its ``.npz`` file is missing, broken or not the one written with it
        (its SHA-256 differs).
    """
    data = read_json(path)
    if not isinstance(data, dict) or "arrays" not in data:
        return data
    ref = data.pop("arrays")
    if not (isinstance(ref, dict) and isinstance(ref.get("file"), str) and isinstance(ref.get("sha256"), str)
            and isinstance(data.get("state"), dict)):
        raise ArtifactError(f"{path}: broken \"arrays\" entry (it needs \"file\" and \"sha256\")")
    side = Path(path).with_name(Path(ref["file"]).name)
    try:
        blob = side.read_bytes()
    except OSError as exc:
        raise ArtifactError(f"{path}: its arrays file {side} cannot be read ({exc.strerror or exc}); keep the two "
                            "files together") from None
    if hashlib.sha256(blob).hexdigest() != ref["sha256"]:
        raise ArtifactError(f"{path}: its arrays file {side} is not the one saved with it (SHA-256 differs)")
    data["state"].update(read_npz(io.BytesIO(blob), what=f"arrays file {side}"))
    return data


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # arrays and the like
        return False


def check_token_ids(ids: Any, vocab_size: int, name: str) -> np.ndarray:
    """``ids`` (a sequence or array of token ids) as a flat int64 array, for ``decode``.

    Raises
    ------
    TokembedError
        If the ids are not integers (floats, bools and strings are refused: ``decode([1.5])`` is an error, not a
        silent cast), or an id is outside ``[0, vocab_size)``; the message starts with ``name``.
    """
    try:
        raw = np.asarray(ids)
    except ValueError:
        raise TokembedError(f"{name}: ids must be a flat sequence of integers") from None
    if raw.ndim > 1:
        raise TokembedError(f"{name}: ids must be a flat sequence of integers, got shape {raw.shape} (decode one "
                            "sequence at a time)")
    if raw.size == 0:
        return np.zeros(0, np.int64)
    if raw.dtype.kind not in "iu":
        raise TokembedError(f"{name}: ids must be integers, got {raw.dtype} values")
    if raw.dtype == np.uint64 and int(raw.max()) >= vocab_size:  # would wrap around in int64
        raise TokembedError(f"{name}: id {int(raw.max())} is outside the vocabulary [0, {vocab_size})")
    arr = raw.astype(np.int64).reshape(-1)
    bad = (arr < 0) | (arr >= vocab_size)
    if bad.any():
        raise TokembedError(f"{name}: id {int(arr[bad][0])} is outside the vocabulary [0, {vocab_size})")
    return arr


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

    Post-processing (special tokens around a text or pair, truncation, padding) follows Hugging Face tokenizers;
    see :meth:`encode` and :mod:`tokembed.postprocess`. A tokenizer declares its default post-processor as the
    attribute ``post_processor``: a subclass that lets recipes configure it takes ``post_processor`` as an
    ``__init__`` parameter whose default is the class's default (a BERT-style class would default to
    ``{"single": "[CLS] $A [SEP]", "pair": "[CLS] $A [SEP] $B:1 [SEP]:1"}``, and a preset may set it); a call
    overrides it with ``encode(..., post_processor=...)`` or drops it with ``add_special_tokens=False``. Padding
    uses the attribute ``pad_token`` (usually an ``__init__`` parameter too).
    """

    kind: ClassVar[str] = "tokenizer"
    #: Default post-processor: None (adds nothing) or a JSON-able template spec
    #: ``{"single": "...", "pair": "..."}`` (see :class:`tokembed.postprocess.TemplateProcessing`). An ``__init__``
    #: parameter of the same name, stored on the instance, takes precedence.
    post_processor: Any = None
    #: The padding token (a vocabulary entry), or None when the tokenizer cannot pad.
    pad_token: str | None = None

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

    @classmethod
    def expected_special_ids(cls, params: dict[str, Any]) -> dict[str, int]:
        """The id each special token will get, planned from the ``__init__`` parameters before fitting.

        Recipes use it to check an embedder's ``padding_idx`` against its tokenizer before any work. ``params``
        holds the parameters a recipe sets (defaults are the class's). This default knows nothing and returns
        ``{}``; a tokenizer whose special-token ids follow from its parameters overrides it.
        """
        return {}

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

    def num_special_tokens_to_add(self, pair: bool = False) -> int:
        """Number of special tokens the default post-processor adds to one text, or to a pair with ``pair=True``.

        Raises
        ------
        TokembedError
            If the tokenizer's ``post_processor`` spec is invalid.
        """
        return EncodeOptions.resolve(self, pair=pair, add_special_tokens=False).template.num_special_tokens(pair)

    def encode(
        self,
        text: str,
        pair: str | None = None,
        *,
        add_special_tokens: bool = True,
        allowed_special: Collection[str] | Literal["all"] = (),
        truncation: bool | str = False,
        max_length: int | None = None,
        stride: int = 0,
        truncation_strategy: str = "longest_first",
        padding: bool | str = False,
        pad_to_multiple_of: int | None = None,
        padding_side: Literal["right", "left"] = "right",
        post_processor: Any = None,
    ) -> Encoding:
        """Encode one text, or a pair of texts, then add special tokens, truncate and pad as asked.

        The steps and their semantics are Hugging Face tokenizers' (``Tokenizer.encode`` with
        ``enable_truncation`` / ``enable_padding``) with transformers' option names: each text is encoded, the
        texts are truncated so that texts plus added special tokens fit ``max_length``, the post-processor's
        template adds the special tokens, then the result is padded. Options apply to this call only and never
        change the tokenizer, so one tokenizer may serve several threads.

        Parameters
        ----------
        text : str
            The text. Offsets in the result are code-point spans into it.
        pair : str, optional
            A second text (question/answer, sentence pair). Its tokens' offsets are spans into ``pair``; without
            a post-processor its tokens get type id 1.
        add_special_tokens : bool, default True
            Apply the post-processor's special tokens; False keeps only the texts (with the template's type ids).
            A tokenizer without a post-processor adds nothing either way.
        allowed_special : collection of str or "all"
            Special tokens that are recognised when written in ``text`` (and ``pair``); all others are encoded as
            plain text.
        truncation : bool or {"longest_first", "only_first", "only_second"}, default False
            Cut to ``max_length`` tokens, special tokens included. True uses ``truncation_strategy``; a strategy
            name is shorthand for True plus that strategy (transformers' convention).
        max_length : int, optional
            Length limit for truncation and the target of ``padding="max_length"``; ignored otherwise (as in
            transformers).
        stride : int, default 0
            With truncation, the cut-off tokens are returned in ``overflowing`` as windows of the kept length
            that overlap the previous window by ``stride`` tokens (each window gets the special tokens too).
            A non-zero ``stride`` without truncation is an error.
        truncation_strategy : {"longest_first", "only_first", "only_second"}, default "longest_first"
            For pairs: share the room between the texts (the longer one is cut first), or cut only one text.
        padding : bool or {"longest", "max_length"}, default False
            For one text, ``True``/``"longest"`` pads only up to ``pad_to_multiple_of``; ``"max_length"`` pads to
            ``max_length``. Pad tokens use the tokenizer's ``pad_token``.
        pad_to_multiple_of : int, optional
            Round the padded length up to a multiple of this (an error without padding).
        padding_side : {"right", "left"}, default "right"
            Where padding goes.
        post_processor : dict or TemplateProcessing, optional
            Use this template for this call instead of the tokenizer's ``post_processor``.

        Returns
        -------
        Encoding
            ``ids`` int32 (n,), ``tokens``, ``offsets`` int64 (n, 2), ``type_ids``, ``special_tokens_mask``,
            ``attention_mask`` and, after truncation, ``overflowing`` (each window a full Encoding). With no
            option set and no post-processor, this is exactly what the model gives for ``text``.

        Raises
        ------
        NotFittedError
            If the tokenizer is not fitted.
        TypeError
            If ``text`` or ``pair`` is not a ``str``.
        TokembedError
            For invalid options: unknown strategy or padding, ``max_length`` missing or not leaving room for one
            token after the special tokens, ``stride`` not smaller than that room (or than the part of a text
            kept when a pair is shared), ``only_second`` without a pair, a text too short for ``only_first`` /
            ``only_second``, padding without a pad token, a template token missing from the vocabulary.
        """
        self._check_is_fitted()
        _check_str(text, "encode")
        if pair is not None:
            _check_str(pair, "encode (pair)")
        allowed = self._allowed_specials(allowed_special) if allowed_special else []
        opts = EncodeOptions.resolve(
            self, pair=pair is not None, add_special_tokens=add_special_tokens, truncation=truncation,
            max_length=max_length, stride=stride, truncation_strategy=truncation_strategy, padding=padding,
            pad_to_multiple_of=pad_to_multiple_of, padding_side=padding_side, post_processor=post_processor,
        )
        return opts.pad_batch([self._encode_one(text, pair, allowed, opts)])[0]

    def _encode_plain(self, text: str, allowed: list[str]) -> Encoding:
        """One text through the model, with the allowed special tokens written in it recognised."""
        if not allowed:
            return self._encode_text(text)
        return self._encode_with_specials(text, allowed)

    def _encode_one(self, text: str, pair: str | None, allowed: list[str], opts: EncodeOptions) -> Encoding:
        a = self._encode_plain(text, allowed)
        if opts.is_identity:
            return a
        b = None if pair is None else self._encode_plain(pair, allowed)
        return opts.process(a, b)

    def _encode_with_specials(self, text: str, allowed: list[str]) -> Encoding:
        import re

        # longest first, so "<|end|>" wins over "<|e" when both are special
        pattern = re.compile("|".join(re.escape(s) for s in sorted(allowed, key=len, reverse=True)))
        special_ids = {s: self.token_to_id(s) for s in allowed}
        parts: list[Encoding] = []
        pos = 0
        for m in pattern.finditer(text):
            if m.start() > pos:
                parts.append(_shift(self._encode_text(text[pos:m.start()]), pos))
            parts.append(Encoding([special_ids[m.group()]], [m.group()], [[m.start(), m.end()]]))
            pos = m.end()
        if pos < len(text) or not parts:
            parts.append(_shift(self._encode_text(text[pos:]), pos))
        return Encoding.concatenate(parts)

    def encode_batch(
        self,
        texts: Iterable[str],
        pairs: Iterable[str] | None = None,
        *,
        add_special_tokens: bool = True,
        allowed_special: Collection[str] | Literal["all"] = (),
        truncation: bool | str = False,
        max_length: int | None = None,
        stride: int = 0,
        truncation_strategy: str = "longest_first",
        padding: bool | str = False,
        pad_to_multiple_of: int | None = None,
        padding_side: Literal["right", "left"] = "right",
        post_processor: Any = None,
        return_arrays: bool = False,
        num_workers: int | None = None,
    ) -> "list[Encoding] | BatchEncoding":
        """Encode several texts (or pairs) with the same options; see :meth:`encode` for each option.

        Parameters
        ----------
        texts : iterable of str
            The texts (a single ``str`` is refused).
        pairs : iterable of str, optional
            Second texts, one per text.
        padding : bool or {"longest", "max_length"}, default False
            ``True``/``"longest"`` pads every encoding to the longest of the batch, ``"max_length"`` to
            ``max_length`` (both rounded up to ``pad_to_multiple_of``). Overflowing windows are padded too.
        return_arrays : bool, default False
            Return a :class:`~tokembed.encoding.BatchEncoding` even without padding (the encodings must then all
            have the same length).
        num_workers : int, optional
            Encode on this many threads (-1: one per CPU). Default: serial. Threads pay off when the tokenizer's
            kernels release the GIL; results are identical and in order either way.
        add_special_tokens, allowed_special, truncation, max_length, stride, truncation_strategy, \
pad_to_multiple_of, padding_side, post_processor
            As in :meth:`encode`.

        Returns
        -------
        list of Encoding or BatchEncoding
            Without padding and ``return_arrays``, the list of encodings, in order. With padding (or
            ``return_arrays=True``), a :class:`~tokembed.encoding.BatchEncoding`: int64 arrays ``input_ids``,
            ``attention_mask``, ``token_type_ids``, ``special_tokens_mask`` of shape (batch, seq) and ``offsets``
            (batch, seq, 2), plus ``encodings``; it also behaves as the list of encodings (``len``, ``[i]``,
            iteration), so code written for the list works with both. Overflowing windows stay in each encoding's
            ``overflowing`` and are not rows of the arrays.

        Raises
        ------
        NotFittedError
            If the tokenizer is not fitted.
        TypeError
            If ``texts`` is a ``str`` or holds a non-``str``.
        TokembedError
            As :meth:`encode`; also if ``pairs`` and ``texts`` differ in length, if ``num_workers`` is invalid,
            or if the arrays cannot be rectangular (``padding="max_length"`` with a longer encoding and no
            truncation, or ``return_arrays=True`` with unequal lengths and no padding).
        """
        self._check_is_fitted()
        texts, pairs = check_batch_inputs(texts, pairs)
        allowed = self._allowed_specials(allowed_special) if allowed_special else []
        opts = EncodeOptions.resolve(
            self, pair=pairs is not None, add_special_tokens=add_special_tokens, truncation=truncation,
            max_length=max_length, stride=stride, truncation_strategy=truncation_strategy, padding=padding,
            pad_to_multiple_of=pad_to_multiple_of, padding_side=padding_side, post_processor=post_processor,
        )
        workers = resolve_workers(num_workers)
        if allowed:
            encodings = self._encode_each(texts, pairs, allowed, opts, workers)
        else:
            encodings = self._encode_batch(texts, pairs, opts, workers)
        return batch_result(encodings, opts, return_arrays)

    def _encode_batch(self, texts: list[str], pairs: list[str] | None, opts: EncodeOptions,
                      workers: int) -> list[Encoding]:
        """Hook of :meth:`encode_batch` (no ``allowed_special``): the post-processed, padded encodings of ``texts``
        (and ``pairs``), one per text, equal to encoding each one alone. The default encodes text by text; a
        tokenizer whose model encodes many texts in one pass overrides it."""
        return self._encode_each(texts, pairs, [], opts, workers)

    def _encode_each(self, texts: list[str], pairs: list[str] | None, allowed: list[str], opts: EncodeOptions,
                     workers: int) -> list[Encoding]:
        """Encode text by text (:meth:`_encode_one`) on ``workers`` threads, then pad."""

        def work(lo: int, hi: int) -> list[Encoding]:
            return [self._encode_one(texts[i], None if pairs is None else pairs[i], allowed, opts)
                    for i in range(lo, hi)]

        n = len(texts)
        if workers == 1 or n < 2:
            encodings = work(0, n)
        else:
            from concurrent.futures import ThreadPoolExecutor

            size = max(1, -(-n // (4 * workers)))
            with ThreadPoolExecutor(max_workers=workers) as pool:
                chunks = [pool.submit(work, lo, min(lo + size, n)) for lo in range(0, n, size)]
                encodings = [e for c in chunks for e in c.result()]
        return opts.pad_batch(encodings)


def _shift(enc: Encoding, by: int) -> Encoding:
    """``enc`` with offsets moved by ``by`` (a new Encoding: a subclass may cache and reuse ``enc``)."""
    if not by:
        return enc
    return Encoding(enc.ids, enc.tokens, enc.offsets + by, enc.type_ids, enc.special_tokens_mask,
                    enc.attention_mask)


class Vectorizer(Component):
    """Token sequences, raw documents or a matrix -> a matrix (``scipy.sparse`` CSR or dense float array).

    ``fit(X)`` / ``transform(X)`` / ``fit_transform(X)`` follow scikit-learn. ``X`` is one of:

    - :class:`~tokembed.sequences.TokenSequences`: a tokenizer's ids per document (the fast path: no strings);
    - an iterable of token lists (``[["the", "whale"], ...]``), packed with
      :func:`~tokembed.sequences.as_token_sequences`;
    - a list of raw documents (``list[str]``), for a vectorizer that has a pre-tokenizer of its own;
    - a matrix (``scipy.sparse`` or ndarray), for a vectorizer that consumes another's output (truncated SVD).

    ``output_rows`` says what the rows of ``transform``'s result are, which the runner and the contract suite read.
    A vectorizer whose statistics merge also implements ``partial_fit(X) -> self``.
    """

    kind: ClassVar[str] = "vectorizer"
    #: What one row of ``transform(X)`` stands for: ``"documents"`` (one row per document of ``X``, as
    #: scikit-learn's vectorizers), ``"tokens"`` (one row per token of ``X``, documents one after the other: a
    #: one-hot encoding) or ``"vocabulary"`` (a square (V, V) matrix over ``get_feature_names_out()``: a word-word
    #: co-occurrence matrix).
    output_rows: ClassVar[Literal["documents", "tokens", "vocabulary"]] = "documents"

    def fit(self, X: Any) -> "Vectorizer":
        raise NotImplementedError

    def transform(self, X: Any) -> Any:
        raise NotImplementedError

    def fit_transform(self, X: Any) -> Any:
        """``fit(X)`` then ``transform(X)``; subclasses may override with a single pass."""
        return self.fit(X).transform(X)

    def get_feature_names_out(self) -> np.ndarray:
        """The name of each output column, an ndarray of str of shape (n_features,)."""
        raise NotImplementedError


class Embedder(Component):
    """Tokens -> dense vectors: trained word vectors (GloVe, FastText) or a module-producing embedding.

    A trained embedder's ``fit(X)`` reads token sequences (``X`` as for :class:`Vectorizer`: a
    :class:`~tokembed.sequences.TokenSequences` or an iterable of token lists) and sets ``wv_``, a
    :class:`~tokembed.keyedvectors.KeyedVectors` keyed by the tokens' strings, which a recipe's ``evaluate:``
    scores. A module-producing embedder (the sinusoidal Transformer input embedding) sets
    ``fits_on_tokens = False``: its tables depend only on its parameters, a recipe run calls ``fit(None)``, and
    ``embed(ids)`` maps a (batch, seq) array of ids to (batch, seq, d_model) float32.

    What a recipe run takes from the embedder's input tokenizer is asked through :meth:`params_from_tokenizer`
    and :meth:`max_input_length`, so the core names no parameter of a plugin.
    """

    kind: ClassVar[str] = "embedder"
    #: True when ``fit`` learns from token sequences; False when it needs no data (``fit(None)``).
    fits_on_tokens: ClassVar[bool] = True

    def fit(self, X: Any) -> "Embedder":
        raise NotImplementedError

    def params_from_tokenizer(self, tokenizer: Tokenizer) -> dict[str, Any]:
        """Parameters a recipe run sets from the (fitted) input tokenizer before ``fit``, for those the recipe
        leaves unset: for example ``{"vocab_size": tokenizer.get_vocab_size()}``. The default sets nothing."""
        return {}

    @classmethod
    def planned_params_from_tokenizer(cls, tokenizer_cls: type, tokenizer_params: dict[str, Any]
                                      ) -> dict[str, Any]:
        """What :meth:`params_from_tokenizer` will set, as far as it follows from the tokenizer's class and
        parameters before training (``tokembed validate`` checks the embedder's parameters with these, e.g. a
        ``padding_idx`` planned from the tokenizer's special tokens). The default knows nothing: ``{}``."""
        return {}

    def max_input_length(self) -> int | None:
        """The longest sequence ``embed`` accepts (a position table's length), or None for no limit."""
        return None
