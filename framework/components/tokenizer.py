"""The tokenizer base class: text -> :class:`~tokembed.encoding.Encoding` and back, with the shared handling of
special tokens, post-processing (templates, truncation, padding) and batches."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Collection, Iterable, Literal, Sequence

import numpy as np

from ..encoding import BatchEncoding, Encoding
from ..errors import TokembedError
from ..postprocess import (
    EncodeOptions,
    _check_str,
    batch_result,
    check_batch_inputs,
    resolve_workers,
)
from .base import Component

__all__ = ["Tokenizer", "TokenizerPlan", "check_token_ids", "join_packed", "map_text_chunks", "refuse_one_text"]


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


def refuse_one_text(method: Any) -> Any:
    """``method(self, corpus, ...)`` that raises :class:`TokembedError` when ``corpus`` is one ``str`` (or
    ``bytes``): the name, what was given and the fix, as the vectorizers say it. Applied by :class:`Tokenizer` to
    each subclass's own ``fit`` and ``partial_counts``."""
    import functools

    @functools.wraps(method)
    def checked(self: Any, *args: Any, **kwargs: Any) -> Any:
        corpus = args[0] if args else kwargs.get("corpus", kwargs.get("X"))
        if isinstance(corpus, (str, bytes)):
            raise TokembedError(f"{getattr(self, 'name', type(self).__name__)}: {method.__name__} expects an iterable "
                                f"of documents, got one {type(corpus).__name__}; wrap it in a list ([text]) to learn "
                                "from one document")
        return method(self, *args, **kwargs)

    checked._refuses_one_text = True  # type: ignore[attr-defined]
    return checked


@dataclass(frozen=True)
class TokenizerPlan:
    """A tokenizer as planned from its parameters, before training (:meth:`Tokenizer.plan`).

    Attributes
    ----------
    vocab_size : int or None
        The largest vocabulary it can end with (its ``vocab_size`` parameter), None when unbounded or unknown.
    special_ids : dict of str to int
        The id each special token will get (empty when that is not known before training).
    pad_token : str or None
        The padding token, None when it cannot pad.
    """

    vocab_size: int | None = None
    special_ids: dict[str, int] = field(default_factory=dict)
    pad_token: str | None = None


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
    #: True when every token is a whole word of the text (a word-level vocabulary): word vectors trained on its
    #: output are looked up by word. False (subword and character tokenizers): an evaluation word gets a vector
    #: composed from its pieces (:mod:`tokembed.pieces`).
    whole_words: ClassVar[bool] = False
    #: The file formats this class reads, each with its classmethod (keys of :data:`tokembed.export.LOAD_FORMATS`:
    #: ``"tiktoken"`` -> ``from_tiktoken(path, ...)``, ``"hf_json:BPE"`` -> ``from_hf_json(path, ...)`` for a
    #: Hugging Face ``tokenizer.json`` with a BPE model, ...). A ``{load: FILE}`` stage without ``type:`` is read by
    #: the one installed tokenizer that lists the file's format (several: the recipe must choose with ``type:``).
    load_formats: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Every tokenizer's own ``fit`` and ``partial_counts`` refuse one ``str`` (an iterable of characters, each
        of which would be taken for a document) before they run: :func:`refuse_one_text`."""
        super().__init_subclass__(**kwargs)
        for method in ("fit", "partial_counts"):
            fn = cls.__dict__.get(method)
            if callable(fn) and not getattr(fn, "_refuses_one_text", False):
                setattr(cls, method, refuse_one_text(fn))

    # -- to implement -----------------------------------------------------------------------------------------
    def fit(self, corpus: Iterable[str], y: Any = None) -> "Tokenizer":
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
    def plan(cls, params: dict[str, Any]) -> "TokenizerPlan":
        """What this tokenizer will be, as far as its ``__init__`` parameters say before training: the largest
        vocabulary it can have, the ids of its special tokens, its padding token. ``tokembed validate`` checks
        the stages that read the tokenizer against it (an embedder's ``check_tokenizer_plan``, a batch's padding).

        The default reads the trainer parameters every built-in shares (Hugging Face's names): ``vocab_size`` (an
        upper bound when set), ``pad_token`` (or the class's ``pad_token`` attribute), and
        :meth:`expected_special_ids`. ``params`` holds what a recipe sets; defaults are the class's. Override when
        the parameters mean something else.
        """
        import inspect

        defaults = {p.name: p.default for p in list(inspect.signature(cls.__init__).parameters.values())[1:]
                    if p.default is not inspect.Parameter.empty}
        merged = {**defaults, **params}
        vocab = merged.get("vocab_size")
        vocab = vocab if isinstance(vocab, int) and not isinstance(vocab, bool) else None
        can_pad = "pad_token" in defaults or "pad_token" in params
        pad = merged.get("pad_token") if can_pad else cls.pad_token
        return TokenizerPlan(vocab, dict(cls.expected_special_ids(params) or {}), pad if isinstance(pad, str) else None)

    @classmethod
    def export_problem(cls, fmt: str, params: dict[str, Any]) -> str | None:
        """Why a tokenizer built with ``params`` cannot be written in the export format ``fmt`` (``hf``,
        ``vocab-merges``, ``vocab-txt``, ``tiktoken``: :data:`tokembed.export.EXPORT_FORMATS`), or None.

        ``tokembed validate`` asks it for each entry of a recipe tokenizer's ``export:`` list, before any training.
        A class writes a format by having its method (``to_hf_json``, ...); this default finds no other problem.
        """
        return None

    @classmethod
    def expected_special_ids(cls, params: dict[str, Any]) -> dict[str, int]:
        """The id each special token will get, planned from the ``__init__`` parameters before fitting.

        Recipes use it to check an embedder's ``padding_idx`` against its tokenizer before any work. ``params``
        holds the parameters a recipe sets (defaults are the class's). This default knows nothing and returns
        ``{}``; a tokenizer whose special-token ids follow from its parameters overrides it.
        """
        return {}

    def word_spans(self, text: str) -> np.ndarray | None:
        """The words of ``text`` for the alignment methods of :class:`~tokembed.encoding.Encoding` (``word_ids``,
        ``char_to_word``, ...): the code-point spans, in the original text, of the pieces the pre-tokenizer cuts it
        into, an int64 array of shape (n_words, 2), in order. None (this default) when the tokenizer has no
        pre-tokenizer to say; a new word then starts wherever a token starts after the previous token's end.
        Called only when an alignment method is first used on an encoding of ``text``.
        """
        return None

    def _attach_words(self, enc: Encoding, text: str, pair: str | None) -> Encoding:
        """Let ``enc`` (and its overflowing windows) find the words of its text(s) when asked."""
        source = (self.word_spans, text, pair)
        enc._word_source = source
        if enc.overflowing:
            stack = list(enc.overflowing)
            while stack:
                e = stack.pop()
                e._word_source = source
                stack.extend(e.overflowing)
        return enc

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
        return self._attach_words(opts.pad_batch([self._encode_one(text, pair, allowed, opts)])[0], text, pair)

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
        spans = self.word_spans
        if pairs is None:
            for enc, text in zip(encodings, texts):
                enc._word_source = (spans, text, None)
                if enc.overflowing:
                    self._attach_words(enc, text, None)
        else:
            for enc, text, pair in zip(encodings, texts, pairs):
                self._attach_words(enc, text, pair)
        return batch_result(encodings, opts, return_arrays)

    def encode_ids(self, texts: Sequence[str], *, spans: bool = False) -> tuple[np.ndarray, ...]:
        """The ids of several texts, no special tokens added, packed as CSR arrays: ``(ids int32 (n_tokens,),
        lengths int64 (n_texts,))``, text ``i`` being the next ``lengths[i]`` ids. Equal to the ids of
        ``encode_batch(texts, add_special_tokens=False)``; what :meth:`tokembed.sequences.TokenSequences.from_tokenizer`
        reads a corpus with, and what the metrics measure (:mod:`tokembed.metrics`).

        With ``spans=True`` it returns ``(ids, lengths, spans)``, ``spans`` int64 of shape (n_tokens, 2): each
        token's ``[start, end)`` code-point offsets into its own text, equal to the ``offsets`` of
        ``encode_batch(texts, add_special_tokens=False)`` (offsets into the original text, whatever the
        normalizer did). What the measuring pass reads.

        The default goes through :meth:`encode_batch`; a tokenizer whose model can skip building an
        :class:`~tokembed.encoding.Encoding` per text (tokens and offsets) overrides it for speed.

        Raises
        ------
        NotFittedError, TokembedError
            As :meth:`encode_batch`.
        """
        encodings = self.encode_batch(list(texts), add_special_tokens=False)
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(encodings))
        ids = (np.concatenate([e.ids for e in encodings]).astype(np.int32, copy=False) if encodings
               else np.zeros(0, np.int32))
        if not spans:
            return ids, lengths
        offsets = (np.concatenate([np.asarray(e.offsets, np.int64).reshape(-1, 2) for e in encodings])
                   if encodings else np.zeros((0, 2), np.int64))
        return ids, lengths, np.ascontiguousarray(offsets, dtype=np.int64)

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


def map_text_chunks(work: Any, texts: Sequence[str], workers: int, chunk_chars: int = 1 << 16) -> list[Any]:
    """``work(texts[lo:hi])`` for consecutive ranges of ``texts`` of about ``chunk_chars`` characters each (32
    counted per text for its overhead), on ``workers`` threads; the results in text order, one per range.

    For a model that encodes many texts in one kernel call that releases the GIL (BPE, Unigram): one call per
    range keeps the calls large and the threads busy.
    """
    chunks, lo, size = [], 0, 0
    for hi, text in enumerate(texts, 1):
        size += len(text) + 32
        if size >= chunk_chars:
            chunks.append((lo, hi))
            lo, size = hi, 0
    if lo < len(texts):
        chunks.append((lo, len(texts)))
    if workers == 1 or len(chunks) < 2:
        return [work(texts[a:b]) for a, b in chunks]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda bounds: work(texts[bounds[0]:bounds[1]]), chunks))



def join_packed(parts: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray | None]], spans: bool
                ) -> tuple[np.ndarray, np.ndarray] | tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One :meth:`Tokenizer.encode_ids` result from those of consecutive ranges of the texts (what
    :func:`map_text_chunks` returns): each part ``(ids int32 (n,), lengths int64 (n_texts,), spans int64 (n, 2) or
    None)``; ``(ids, lengths)``, plus ``spans`` when ``spans`` is true."""
    if not parts:
        empty = (np.zeros(0, np.int32), np.zeros(0, np.int64))
        return (*empty, np.zeros((0, 2), np.int64)) if spans else empty
    if len(parts) == 1:
        ids, lengths, offsets = parts[0]
    else:
        ids = np.concatenate([p[0] for p in parts])
        lengths = np.concatenate([p[1] for p in parts])
        offsets = np.concatenate([p[2] for p in parts]) if spans else None
    ids = ids.astype(np.int32, copy=False)
    lengths = lengths.astype(np.int64, copy=False)
    return (ids, lengths, offsets.astype(np.int64, copy=False)) if spans else (ids, lengths)

def _shift(enc: Encoding, by: int) -> Encoding:
    """``enc`` with offsets moved by ``by`` (a new Encoding: a subclass may cache and reuse ``enc``)."""
    if not by:
        return enc
    return Encoding(enc.ids, enc.tokens, enc.offsets + by, enc.type_ids, enc.special_tokens_mask,
                    enc.attention_mask)
