"""Byte-pair encoding (BPE): word level with an end-of-word suffix, or byte level as in GPT-2."""

from __future__ import annotations

import itertools
import os
from typing import Any, ClassVar, Iterable, Sequence

import numpy as np

from tokembed.components import Tokenizer, join_packed, map_text_chunks
from tokembed.postprocess import EncodeOptions, POST_PROCESSOR_SPEC, check_batch_inputs, resolve_workers
from tokembed.encoding import Encoding
from tokembed.errors import ArtifactError, ParameterError, TokembedError
from tokembed.params import Boolean, Interval, ListOf, Options, Text
from tokembed.plugins._subword import SUBWORD_PARAM_CONSTRAINTS
from tokembed.text import NORMALIZER_SPEC, PRE_TOKENIZER_SPEC, build_normalizer, build_pre_tokenizer
from tokembed.text.pre_tokenizers import GPT2_PATTERN

from . import files
from .model import BPEModel
from .training import VocabularySizeWarning, learn_bpe, word_counts

__all__ = ["BPETokenizer", "VocabularySizeWarning"]

_MASK64 = (1 << 64) - 1


class BPETokenizer(Tokenizer):
    """Byte-pair encoding: learn merges of frequent adjacent symbols, encode by applying them by rank.

    Training (Sennrich, Haddow & Birch 2016, "Neural Machine Translation of Rare Words with Subword Units"; byte
    level: Radford et al. 2019, GPT-2): words are counted after the normalizer and pre-tokenizer, split into base
    symbols (characters, or the 256 UTF-8 byte values at byte level), and the most frequent adjacent pair is merged
    into a new symbol again and again, by an incremental Numba kernel, until the vocabulary has ``vocab_size``
    entries or no pair occurs ``min_frequency`` times. A pair's count is the number of its adjacent occurrences,
    overlapping ones included (``a a a`` counts 2 for ``(a, a)``), as in Hugging Face ``BpeTrainer``. Ties: the
    highest count wins, then the smallest ``(left id, right id)``, where base symbols are numbered special tokens
    first, then characters in code-point order, then characters carrying the end-of-word suffix in code-point order
    (prefixed characters after them), or bytes in byte order, and each merge takes the next id when it is created;
    the result never depends on input order or on a hash seed.

    Encoding applies the merges by rank, lowest first, leftmost among equal ranks (tiktoken's and Hugging Face's
    rule); offsets are code-point spans into the original text, and all byte-level tokens that come from one
    character carry that character's span.

    Vocabulary of a trained tokenizer, in id order: ``pad_token`` (if set), ``unk_token`` (character level, if
    set), the other ``special_tokens``, the base symbols, then one entry per new merged string. Loaded files keep
    their own ids.

    Parameters
    ----------
    vocab_size : int, default 30000
        Size of the vocabulary asked for, special tokens and base symbols included. ``get_vocab_size()`` is the size
        obtained: smaller when no pair reaches ``min_frequency`` (a :class:`VocabularySizeWarning` says so).
    min_frequency : int, default 2
        Smallest count of a pair that is merged (0 and 1 both allow every pair that occurs).
    special_tokens : sequence of str, default ()
        Special tokens, after ``pad_token`` and ``unk_token``. Written inside a text they are plain text unless
        the caller lists them in ``encode(..., allowed_special=...)`` (tiktoken's rule); in the training corpus
        they are plain text too.
    initial_alphabet : sequence of str, default ()
        Characters always in the alphabet, even if absent from the corpus (character level only).
    limit_alphabet : int, optional
        Keep only this many characters, the most frequent (``initial_alphabet`` first); a character left out
        splits the words it occurs in and encodes as ``unk_token`` (character level only).
    max_token_length : int, optional
        Never merge a pair whose two parts total more than this many characters (or bytes at byte level);
        suffix and prefix not counted.
    end_of_word_suffix : str, optional
        Appended to the last character of each word (``"</w>"``: ``low`` starts as ``l o w</w>``), as subword-nmt
        and Hugging Face do; ``decode`` turns it back into a space.
    continuing_subword_prefix : str, optional
        Prepended to every character but the first of each word (``"##"``).
    byte_level : bool, default False
        GPT-2's byte level: the base symbols are the 256 byte values (written with GPT-2's byte characters), so no
        text is ever out of vocabulary and ``decode(encode(s)) == s``.
    normalizer : str, list or dict, optional
        Normalizer stages (``tokembed.text``), e.g. ``"nfkc"``.
    pre_tokenizer : str, dict or None, default "auto"
        How text is cut into words before BPE: ``"gpt2"``, ``"word_punct"``, ``"whitespace_split"``, ``"bert"``,
        ``{"type": "regex", "pattern": ...}``, or None (the whole text is one word). ``"auto"`` means ``"gpt2"``
        at byte level and ``"word_punct"`` otherwise.
    unk_token : str or None, default "<unk>"
        Character level: the token of a character with no vocabulary entry (None: such a character raises
        TokembedError). Ignored at byte level, where nothing is unknown (it is then not in the vocabulary).
    pad_token : str or None, default None
        Padding token; first special token when set.
    dropout : float, optional
        BPE-dropout (Provilkov, Emelianenko & Voita 2020): at encoding, each candidate merge is skipped with this
        probability, in [0, 1). Randomness comes from ``seed`` and a call counter that restarts at 0 on
        ``fit``/``load``: the n-th call of a fresh tokenizer is reproducible, and successive calls differ (with
        ``encode_batch(num_workers > 1)`` the order of calls, so the draws, depend on the threads).
    post_processor : dict, optional
        Template of special tokens added around a text (see ``tokembed.postprocess``); None adds nothing.
    seed : int, default 0
        Seed of the BPE-dropout randomness; training is deterministic.

    Notes
    -----
    Surrogates: a lone surrogate is treated as U+FFFD and a surrogate pair as the character it encodes, in training
    and encoding (``encode("\\ud800") == encode("\\ufffd")``); the offsets still index the original ``str``.
    Byte level, ``decode`` of an incomplete byte sequence gives what ``bytes.decode("utf-8", "replace")`` gives;
    :meth:`decode_bytes` returns the raw bytes.
    """

    name: ClassVar[str] = "bpe"
    param_constraints: ClassVar[dict[str, Any]] = {
        **SUBWORD_PARAM_CONSTRAINTS,  # vocab_size, min_frequency, special_tokens, limit_alphabet, the tokens, seed
        "initial_alphabet": [Text(nonempty=False), ListOf(Text(max_length=1))],  # a str: its characters
        "max_token_length": [Interval(int, 1, None), None],
        "end_of_word_suffix": [Text(), None],
        "continuing_subword_prefix": [Text(), None],
        "byte_level": Boolean(),
        "normalizer": [NORMALIZER_SPEC, None],
        "pre_tokenizer": [Options("auto"), PRE_TOKENIZER_SPEC, None],  # None: the whole text is one word
        "dropout": [Interval(float, 0, 1, closed="left"), None],
        "post_processor": POST_PROCESSOR_SPEC,
    }
    #: Read by ``{load: FILE}`` (see :data:`tokembed.export.LOAD_FORMATS`).
    load_formats: ClassVar[tuple[str, ...]] = ("tiktoken", "vocab_merges", "hf_json:BPE")

    def __init__(
        self,
        vocab_size: int = 30000,
        min_frequency: int = 2,
        special_tokens: Sequence[str] = (),
        initial_alphabet: Sequence[str] = (),
        limit_alphabet: int | None = None,
        max_token_length: int | None = None,
        end_of_word_suffix: str | None = None,
        continuing_subword_prefix: str | None = None,
        byte_level: bool = False,
        normalizer: str | list | dict | None = None,
        pre_tokenizer: str | dict | None = "auto",
        unk_token: str | None = "<unk>",
        pad_token: str | None = None,
        dropout: float | None = None,
        post_processor: dict | None = None,
        seed: int = 0,
    ):
        self.vocab_size = vocab_size
        self.min_frequency = min_frequency
        self.special_tokens = special_tokens
        self.initial_alphabet = initial_alphabet
        self.limit_alphabet = limit_alphabet
        self.max_token_length = max_token_length
        self.end_of_word_suffix = end_of_word_suffix
        self.continuing_subword_prefix = continuing_subword_prefix
        self.byte_level = byte_level
        self.normalizer = normalizer
        self.pre_tokenizer = pre_tokenizer
        self.unk_token = unk_token
        self.pad_token = pad_token
        self.dropout = dropout
        self.post_processor = post_processor
        self.seed = seed

    # -- parameters -----------------------------------------------------------------------------------------------
    @classmethod
    def expected_special_ids(cls, params: dict[str, Any]) -> dict[str, int]:
        """Ids of the special tokens of a trained tokenizer: pad, unk (character level), then ``special_tokens``."""
        byte_level = bool(params.get("byte_level", False))
        unk = None if byte_level else params.get("unk_token", "<unk>")
        out: dict[str, int] = {}
        for tok in [params.get("pad_token"), unk, *(params.get("special_tokens") or ())]:
            if tok is not None and tok not in out:
                out[tok] = len(out)
        return out

    def _specials(self) -> list[str]:
        return list(self.expected_special_ids(self.get_params()))

    def _pre_tokenizer_spec(self) -> Any:
        if self.pre_tokenizer == "auto":
            return "gpt2" if self.byte_level else "word_punct"
        return self.pre_tokenizer

    def _stages(self):
        """The normalizer and pre-tokenizer (their specs are checked by ``param_constraints``)."""
        return build_normalizer(self.normalizer), build_pre_tokenizer(self._pre_tokenizer_spec())

    def _validate(self) -> None:
        """The rule between parameters: at byte level, the 256 bytes are the alphabet, with no suffix or prefix."""
        if self.byte_level:
            for name in ("end_of_word_suffix", "continuing_subword_prefix", "limit_alphabet"):
                if getattr(self, name) is not None:
                    raise ParameterError("bpe", name, "is not available at byte level (byte_level=True)")
            if len(self.initial_alphabet):
                raise ParameterError("bpe", "initial_alphabet", "is not available at byte level: the 256 bytes "
                                     "are the alphabet")

    # -- training -------------------------------------------------------------------------------------------------
    @classmethod
    def warmup_shared(cls) -> list[str]:
        """The shared kernels ``tokembed warmup`` compiles first, in parallel processes: the text scanner and the
        merge machinery of ``tokembed.plugins._subword``."""
        from tokembed.plugins import _subword

        return ["tokembed.text.fast:warmup", *_subword.WARMUP_STEPS]

    @classmethod
    def warmup(cls) -> None:
        """Compile (or load from Numba's cache) every kernel BPE uses: the shared merge loop and merge
        application, the word counter and scanner, and this plugin's word dedup/expansion kernels."""
        import warnings

        from tokembed.plugins import _subword

        _subword.warmup()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the tiny corpus cannot reach the asked vocabulary size
            for byte_level in (False, True):
                tok = cls(vocab_size=300, min_frequency=1, byte_level=byte_level,
                          end_of_word_suffix=None if byte_level else "</w>")
                tok.fit(["warm up the kernels: caf\u00e9 \u6771\u4eac", "unwarmed words"])
                tok.encode("warm up the kernels " * 2000)

    def fit(self, corpus: Iterable[str], y: Any = None) -> "BPETokenizer":
        """Learn merges from ``corpus`` (an iterable of documents, read once, streamed in chunks).

        Raises
        ------
        CorpusError
            If the corpus holds no word (``fit([""])``), or a document is not a str.
        TokembedError
            If a parameter is invalid.

        Warns
        -----
        VocabularySizeWarning
            When the vocabulary obtained is not ``vocab_size`` entries (the message gives the real size and why).
        """
        self._validate_params()
        normalizer, pre_tokenizer = self._stages()
        if isinstance(corpus, str):
            corpus = [corpus]
        return self._learn(*word_counts(corpus, normalizer, pre_tokenizer))

    def partial_counts(self, corpus: Iterable[str]) -> Any:
        """The word counts training starts from (:func:`~tokembed.plugins.bpe.training.word_counts` of the
        normalized, pre-tokenized ``corpus``), as :class:`tokembed.text.fast.WordCounts` (partial counts that
        merge).

        Raises
        ------
        CorpusError
            If a document is not a str.
        TokembedError
            If a parameter is invalid.
        """
        from tokembed.text.fast import WordCounts

        self._validate_params()
        normalizer, pre_tokenizer = self._stages()
        if isinstance(corpus, str):
            corpus = [corpus]
        return WordCounts(*word_counts(corpus, normalizer, pre_tokenizer))

    def fit_counts(self, counts: Any) -> "BPETokenizer":
        """Learn merges from the merged :meth:`partial_counts` of the corpus (see :meth:`fit`)."""
        self._validate_params()
        return self._learn(counts.codepoints.astype(np.int64), counts.offsets, counts.counts)

    def _learn(self, cps: np.ndarray, offsets: np.ndarray, counts: np.ndarray) -> "BPETokenizer":
        specials = self._specials()
        result = learn_bpe(
            cps, offsets, counts, specials=specials, vocab_size=int(self.vocab_size),
            min_frequency=int(self.min_frequency),
            byte_level=self.byte_level, initial_alphabet=list(self.initial_alphabet),
            limit_alphabet=self.limit_alphabet, max_token_length=self.max_token_length,
            end_of_word_suffix=self.end_of_word_suffix, continuing_subword_prefix=self.continuing_subword_prefix,
        )
        self._set_model(result.vocab, result.merges, specials, result.merge_counts)
        return self

    def _set_model(self, vocab: list[str], merges: list[tuple[str, str]], specials: list[str],
                   merge_counts: list[int] | None) -> "BPETokenizer":
        normalizer, pre_tokenizer = self._stages()
        self._model = BPEModel(
            vocab, merges, specials, byte_level=bool(self.byte_level), unk_token=self.unk_token,
            end_of_word_suffix=self.end_of_word_suffix, continuing_subword_prefix=self.continuing_subword_prefix,
            normalizer=normalizer, pre_tokenizer=pre_tokenizer)
        self.special_tokens_ = list(specials)
        self.merges_ = list(self._model.merges)
        self.merge_counts_ = None if merge_counts is None else [int(c) for c in merge_counts]
        self._calls = itertools.count()
        return self

    # -- encoding and decoding ------------------------------------------------------------------------------------
    def _encode_text(self, text: str) -> Encoding:
        dropout = float(self.dropout or 0.0)
        seed = 0
        if dropout > 0.0:
            seed = ((int(self.seed) & _MASK64) ^ (next(self._calls) * 0x9E3779B97F4A7C15)) & _MASK64
        ids, offsets = self._model.encode(text, dropout, seed)
        return Encoding(ids, self._model.itos[ids].tolist(), offsets)

    def _encode_batch(self, texts: list[str], pairs: list[str] | None, opts: EncodeOptions,
                      workers: int) -> list[Encoding]:
        """:meth:`tokembed.Tokenizer.encode_batch`, with the texts encoded together in chunks of about 64K
        characters: one pass of the kernels per chunk, with the word cache shared by the chunk's texts. ``workers``
        threads encode chunks at the same time (the kernels release the GIL; pre-tokenization and building the
        ``Encoding`` objects do not). The result equals ``[encode(t) for t in texts]``; with BPE-dropout texts are
        encoded one by one (the draws depend on each call).
        """
        if self.dropout:
            return super()._encode_batch(texts, pairs, opts, workers)
        firsts = self._encode_chunks(texts, workers)
        if opts.is_identity:
            return opts.pad_batch(firsts)
        seconds = self._encode_chunks(pairs, workers) if pairs is not None else [None] * len(firsts)
        return opts.pad_batch([opts.process(a, b) for a, b in zip(firsts, seconds)])

    def encode_ids(self, texts: Sequence[str], *, spans: bool = False, num_workers: int | None = None
                   ) -> tuple[np.ndarray, np.ndarray] | tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Ids, and with ``spans=True`` code-point spans, packed (see :meth:`tokembed.Tokenizer.encode_ids`): the
        kernels' arrays for chunks of about a million characters on ``num_workers`` threads (default one), without
        the tokens or an :class:`Encoding` per text. With BPE-dropout, through :meth:`encode_batch`.

        Raises
        ------
        TypeError, TokembedError
            As :meth:`encode_batch`.
        """
        self._check_is_fitted()
        texts, _ = check_batch_inputs(texts, None)
        if self.dropout:
            return super().encode_ids(texts, spans=spans)
        model = self._model
        # chunks of about a million characters: the merges run once per distinct piece of a chunk; on the first
        # 30,000 lines of prose_mix (17.8 MB) that took 0.54 s of CPU against 0.80 s in 64K chunks (GPT-2 and a
        # 8k </w> vocabulary alike; one run, noisy, machine shared)
        parts = map_text_chunks(lambda part: model.encode_packed(part, spans=spans), texts,
                                resolve_workers(num_workers), chunk_chars=1 << 20)
        return join_packed(parts, spans)

    def _encode_chunks(self, texts: list[str], workers: int) -> list[Encoding]:
        model, itos = self._model, self._model.itos

        def work(part: list[str]) -> list[Encoding]:
            return [Encoding(ids, itos[ids].tolist(), offsets) for ids, offsets in model.encode_many(part)]

        return [e for part in map_text_chunks(work, texts, workers) for e in part]

    def word_spans(self, text: str) -> np.ndarray:
        """The pre-tokenizer's pieces of ``text`` (after the normalizer) as code-point spans of ``text``: the words
        of :attr:`Encoding.word_ids <tokembed.encoding.Encoding.word_ids>`."""
        from tokembed.text import split_text_arrays

        normalizer, pre_tokenizer = self._stages()
        return split_text_arrays(text, normalizer, pre_tokenizer)[1]

    def decode(self, ids: Sequence[int] | np.ndarray, skip_special_tokens: bool = False) -> str:
        """Turn ids back into text.

        Byte level: the tokens' bytes joined and decoded as UTF-8 with ``errors="replace"`` (an incomplete
        sequence becomes U+FFFD), so ``decode(encode(s)) == s`` for every ``s`` without surrogates and without a
        normalizer that changes it. Character level: tokens joined, the end-of-word suffix becoming a space (none
        after the last token) or, with only a continuing-subword prefix, a space before every token without it.

        Raises
        ------
        TokembedError
            If an id is outside ``[0, get_vocab_size())``.
        """
        self._check_is_fitted()
        return self._model.decode(ids, skip_special_tokens)

    def decode_bytes(self, ids: Sequence[int] | np.ndarray, skip_special_tokens: bool = False) -> bytes:
        """The bytes the ids stand for (byte level: raw, possibly incomplete UTF-8; else the decoded text's UTF-8).

        Raises
        ------
        TokembedError
            If an id is outside ``[0, get_vocab_size())``.
        """
        self._check_is_fitted()
        return self._model.decode_bytes(ids, skip_special_tokens)

    def decode_batch(self, ids_list: Sequence[Sequence[int] | np.ndarray], skip_special_tokens: bool = False
                     ) -> list[str]:
        """``[decode(ids, skip_special_tokens) for ids in ids_list]`` in one array pass: a table of each token's
        bytes (byte level) or of what it writes first, last or in between (character level), gathered by a Numba
        kernel (:func:`tokembed.decoding.decode_table`); Python work per sequence, none per token.

        Raises
        ------
        TokembedError
            As :meth:`decode`, for the first bad sequence.
        """
        self._check_is_fitted()
        return self._model.decode_batch(ids_list, skip_special_tokens)

    def token_bytes(self, id: int) -> bytes:
        """The bytes of ``decode_bytes([id])`` (byte level: raw, possibly an incomplete UTF-8 sequence): the hook
        of the ``partial_char_rate`` metric.

        Raises
        ------
        TokembedError
            If ``id`` is outside ``[0, get_vocab_size())``.
        """
        model = getattr(self, "_model", None)
        if model is None:
            self._check_is_fitted()
        return model.decode_table().token_entry(id, "bpe")

    # -- vocabulary -----------------------------------------------------------------------------------------------
    def get_vocab(self) -> dict[str, int]:
        self._check_is_fitted()
        return dict(self._model.tok2id)

    def get_vocab_size(self) -> int:
        self._check_is_fitted()
        return len(self._model.vocab)

    def token_to_id(self, token: str) -> int | None:
        self._check_is_fitted()
        return self._model.tok2id.get(token)

    def id_to_token(self, id: int) -> str | None:
        self._check_is_fitted()
        return self._model.vocab[id] if 0 <= id < len(self._model.vocab) else None

    # -- state ----------------------------------------------------------------------------------------------------
    def _get_state(self) -> dict[str, Any]:
        state: dict[str, Any] = {
            "special_tokens": list(self.special_tokens_),
            "vocab": list(self._model.vocab),
            "merges": [[a, b] for a, b in self.merges_],
        }
        if self.merge_counts_ is not None:
            state["merge_counts"] = list(self.merge_counts_)
        return state

    def _set_state(self, state: dict[str, Any]) -> None:
        merges = [(str(a), str(b)) for a, b in state["merges"]]
        counts = state.get("merge_counts")
        self._set_model([str(t) for t in state["vocab"]], merges, [str(t) for t in state["special_tokens"]],
                        None if counts is None else [int(c) for c in counts])

    # -- files ----------------------------------------------------------------------------------------------------
    @classmethod
    def _from_parts(cls, vocab: list[str], merges: list[tuple[str, str]], specials: list[str], source: str,
                    **params: Any) -> "BPETokenizer":
        params.setdefault("vocab_size", len(vocab))
        params.setdefault("special_tokens", list(specials))
        params.setdefault("unk_token", None)
        tok = cls(**params)
        try:
            tok._validate_params()
            tok._set_model(vocab, merges, specials, None)
        except ValueError as exc:
            if isinstance(exc, TokembedError):
                raise
            raise ArtifactError(f"{source}: {exc}") from None
        return tok

    @classmethod
    def from_tiktoken(cls, path: str | os.PathLike, pattern: str = GPT2_PATTERN,
                      special_tokens: Sequence[str] = ("<|endoftext|>",), **params: Any) -> "BPETokenizer":
        """Load a tiktoken rank file (``gpt2.tiktoken``, ``cl100k_base.tiktoken``) as a byte-level tokenizer.

        Token ids are the ranks; ``special_tokens`` take the ids after the last rank, in order (GPT-2:
        ``<|endoftext|>`` = 50256), or, given as a mapping ``{token: id}``, those ids, which the ranks must leave
        free (what :meth:`to_tiktoken` writes for a tokenizer whose special tokens come first, as tiktoken's own
        ``special_tokens`` argument takes them). Merges are recovered from the ranks (see
        :mod:`tokembed.plugins.bpe.files`).

        Parameters
        ----------
        path : path
        pattern : str, default GPT-2's
            The pre-tokenizer regex (``regex`` package syntax); GPT-2's pattern selects the ``gpt2`` stage.
        special_tokens : sequence of str, or mapping of str to int
        **params
            Other parameters of the tokenizer (e.g. ``dropout``).

        Raises
        ------
        ArtifactError
            If the file is malformed (the message names the line).
        """
        vocab, merges, specials, found = files.tiktoken_parts(path, pattern, special_tokens)
        return cls._from_parts(vocab, merges, specials, str(path), **{**found, **params})

    @classmethod
    def from_vocab_merges(cls, vocab_json: str | os.PathLike, merges_txt: str | os.PathLike, *,
                          byte_level: bool | None = None, special_tokens: Sequence[str] | None = None,
                          **params: Any) -> "BPETokenizer":
        """Load a ``vocab.json`` and a ``merges.txt`` (GPT-2's files, or a character-level model's).

        Parameters
        ----------
        vocab_json, merges_txt : path
        byte_level : bool, optional
            Default: True when the vocabulary holds all 256 byte symbols.
        special_tokens : sequence of str, optional
            Default: ``<|endoftext|>`` if the vocabulary has it.
        **params
            Other parameters (``pre_tokenizer``, ``end_of_word_suffix``, ``unk_token``, ...); ``pre_tokenizer``
            defaults to ``"auto"`` (gpt2 at byte level).

        Raises
        ------
        ArtifactError
            If a file is malformed or the merges do not fit the vocabulary.
        """
        vocab, merges, specials, found = files.vocab_merges_parts(vocab_json, merges_txt, byte_level, special_tokens)
        return cls._from_parts(vocab, merges, specials, f"{vocab_json} + {merges_txt}", **{**found, **params})

    @classmethod
    def from_hf_json(cls, path: str | os.PathLike, lossy: bool = False, **params: Any) -> "BPETokenizer":
        """Load the BPE model of a Hugging Face ``tokenizer.json`` with the text stages tokembed can mirror.

        From the file: byte level, pre-tokenizer (``ByteLevel``, ``Whitespace``, ``WhitespaceSplit``,
        ``BertPreTokenizer``, ``Split`` with any pattern, its regex read from Hugging Face's dialect), normalizer
        (Unicode forms, ``Lowercase``, ``BertNormalizer``), ``unk_token``, ``end_of_word_suffix``,
        ``continuing_subword_prefix``, ``dropout``, the template (``TemplateProcessing``, ``BertProcessing``,
        ``RobertaProcessing``) and the special added tokens; the table in :mod:`tokembed.plugins.bpe.hf_stages`
        says what each becomes. ``**params`` overrides any of them (a stage the file uses and tokembed cannot
        mirror must be given). Truncation and padding are not read.

        Parameters
        ----------
        path : path
        lossy : bool, default False
            Read a stage whose nearest tokembed stage encodes some texts differently (Hugging Face's
            ``StripAccents``) instead of refusing it; a :class:`~tokembed.plugins.bpe.hf_stages.
            LossyConversionWarning` names the difference.
        **params
            Tokenizer parameters that replace the file's.

        Raises
        ------
        ArtifactError
            If the file is not a tokenizer.json with a BPE model, or is inconsistent.
        TokembedError
            If a text stage has no tokembed equivalent and ``params`` does not choose one (the message lists what
            tokembed reads and suggests the nearest stage, e.g. ``bert_clean``).
        """
        vocab, merges, specials, found = files.hf_json_parts(path, params, lossy=lossy)
        return cls._from_parts(vocab, merges, specials, str(path), **found)

    def to_hf_json(self, path: str | os.PathLike) -> None:
        """Write a Hugging Face ``tokenizer.json`` that ``tokenizers.Tokenizer.from_file`` loads and that encodes
        to the same ids, tokens and offsets, one text or a pair: text stages mapped as in
        :mod:`tokembed.plugins.bpe.hf_stages` (a ``regex`` pre-tokenizer rewritten for Hugging Face's regex
        engine), merges written as pairs (``tokenizers`` >= 0.20 reads them), the ``post_processor`` template,
        ``dropout``. :meth:`from_hf_json` reads the file back to the same tokenizer.

        Two things tokenizer.json cannot say: special tokens are added tokens, which Hugging Face recognises
        wherever they are written in a text (tokembed does only with ``allowed_special``), and ``pad_token`` is
        only in the added tokens (tokenizer.json's ``padding`` would pad every batch), so a re-import needs
        ``pad_token=...`` to pad.

        Raises
        ------
        NotFittedError
            If the tokenizer is not fitted.
        TokembedError
            If the pre-tokenizer's regex holds a construct with no equivalent in Hugging Face's regex dialect (the
            message names it and where it is), or a template token is missing; no file is written then.
        """
        self._check_is_fitted()
        normalizer, pre_tokenizer = self._stages()
        files.write_hf_json(
            path, vocab=self._model.vocab, merges=self.merges_, specials=self.special_tokens_,
            byte_level=bool(self.byte_level), pre_tokenizer=pre_tokenizer.spec, normalizer=normalizer.spec,
            unk_token=self.unk_token, end_of_word_suffix=self.end_of_word_suffix,
            continuing_subword_prefix=self.continuing_subword_prefix, post_processor=self.post_processor,
            dropout=self.dropout)

    def to_tiktoken(self, path: str | os.PathLike) -> None:
        """Write tiktoken BPE ranks (``<base64 of the token's bytes> <rank>`` per line), each token's id its rank,
        so tiktoken and tokembed give the same ids. The special tokens are not ranks: tiktoken takes them apart,
        and their ids are gaps among the ranks when they come first. Load in tiktoken with
        ``tiktoken.Encoding(name, pat_str=PATTERN, mergeable_ranks=tiktoken.load.load_tiktoken_bpe(path),
        special_tokens={token: id, ...})``, and in tokembed with ``from_tiktoken(path, pattern=PATTERN,
        special_tokens={token: id, ...})`` (:meth:`tiktoken_spec` gives both values).

        Raises
        ------
        NotFittedError
            If the tokenizer is not fitted.
        TokembedError
            If the tokenizer is not byte level (tiktoken's ranks are byte sequences).
        """
        self._check_is_fitted()
        problem = self.export_problem("tiktoken", self.get_params())
        if problem:
            raise TokembedError(problem)
        files.write_tiktoken(path, self._model.vocab, self.special_tokens_)

    def tiktoken_spec(self) -> dict[str, Any]:
        """What tiktoken needs besides the ranks file: ``{"pat_str": ..., "special_tokens": {token: id}}`` (the
        pre-tokenizer's regex, GPT-2's for ``gpt2``)."""
        self._check_is_fitted()
        spec = self._stages()[1].spec
        pattern = GPT2_PATTERN if spec == "gpt2" else spec["pattern"] if isinstance(spec, dict) else None
        return {"pat_str": pattern, "special_tokens": {t: self._model.tok2id[t] for t in self.special_tokens_}}

    @classmethod
    def export_problem(cls, fmt: str, params: dict[str, Any]) -> str | None:
        """tiktoken needs byte level and a regex (or no) pre-tokenizer, with no normalizer; ``vocab-merges`` cannot
        say that tokens are special (they are written as plain vocabulary entries)."""
        if fmt != "tiktoken":
            return None
        if not params.get("byte_level", False):
            return ("bpe: a tiktoken export needs byte_level: true (tiktoken's ranks are byte sequences); export "
                    "as hf or vocab-merges instead")
        if params.get("normalizer") not in (None, [], "identity"):
            return (f"bpe: tiktoken has no normalizer, so this tokenizer's normalizer {params['normalizer']!r} "
                    "cannot be exported with the ranks; export as hf instead")
        pre = params.get("pre_tokenizer", "auto")
        if not (pre in ("auto", "gpt2") or (isinstance(pre, dict) and pre.get("type") == "regex")):
            return (f"bpe: tiktoken splits text with a regex, and this tokenizer's pre-tokenizer {pre!r} is not "
                    "one (gpt2 or {type: regex, pattern: ...} are); export as hf instead")
        return None

    def to_vocab_merges(self, vocab_json: str | os.PathLike, merges_txt: str | os.PathLike) -> None:
        """Write ``vocab.json`` and ``merges.txt`` (GPT-2's format), which :meth:`from_vocab_merges` reads back
        to the same vocabulary and merges.

        Raises
        ------
        NotFittedError
            If the tokenizer is not fitted.
        TokembedError
            If a merged symbol holds a space or a line break (the format cannot represent it).
        """
        self._check_is_fitted()
        files.write_vocab_merges(self._model.vocab, self.merges_, vocab_json, merges_txt)

    # -- contract suite -------------------------------------------------------------------------------------------
    @classmethod
    def _contract_params(cls) -> dict[str, Any]:
        return {"vocab_size": 400, "end_of_word_suffix": "</w>"}
