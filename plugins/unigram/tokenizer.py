"""SentencePiece's Unigram language-model tokenizer: trained by EM, encoded by Viterbi, with sampling and n-best."""

from __future__ import annotations

import base64
import binascii
import itertools
import os
from typing import Any, ClassVar, Iterable, Sequence

import numpy as np

from tokembed.components import Tokenizer, join_packed, map_text_chunks
from tokembed.encoding import Encoding
from tokembed.errors import ArtifactError, ParameterError, TokembedError
from tokembed.postprocess import EncodeOptions, POST_PROCESSOR_SPEC, check_batch_inputs, resolve_workers
from tokembed.params import Boolean, Interval, ListOf, Satisfies, Text, raise_parameter_errors

from . import _proto as P
from . import files
from ._charsmap import NORMALIZATION_RULES, OTHER_RULES
from .model import NormalizerSettings, SentencePieceModel, byte_piece

__all__ = ["UnigramTokenizer"]

_MASK64 = (1 << 64) - 1


class UnigramTokenizer(Tokenizer):
    """The Unigram language model of SentencePiece (Kudo 2018): a vocabulary of pieces with log-probabilities,
    trained by EM with pruning, a text encoded as its most probable segmentation (Viterbi).

    Text handling is SentencePiece's: the normalization rule (``nmt_nfkc``: NFKC plus SentencePiece's whitespace and
    control-character rules), spaces written ``▁`` (U+2581) with one in front of the text (``add_dummy_prefix``),
    leading, trailing and repeated spaces dropped (``remove_extra_whitespaces``). Pieces never hold an inner
    ``▁``, never mix Unicode scripts (Hiragana and Katakana count as Han) and, with ``split_digits``, hold a digit
    only alone. Encoding is ``sentencepiece.SentencePieceProcessor.encode``'s, id for id (ties, unknown characters
    and the float32 sums included); a model read from a ``.model`` file (unigram or BPE type) encodes as
    SentencePiece encodes with it. Training follows SentencePiece's trainer (see
    :mod:`tokembed.plugins.unigram.training`).

    Vocabulary of a trained tokenizer, in id order: ``unk_token``, ``bos_token``, ``eos_token``, ``pad_token`` (those
    set), ``special_tokens``, ``user_defined_symbols``, the 256 ``<0x00>``..``<0xFF>`` pieces with
    ``byte_fallback``, then the learned pieces by decreasing score (SentencePiece's order).

    Parameters
    ----------
    vocab_size : int, default 8000
        Size of the whole vocabulary (SentencePiece's ``vocab_size``), special and byte pieces included.
    character_coverage : float, default 0.9995
        Share of the characters of the corpus (by count) the vocabulary must cover: the most frequent characters
        up to it are always pieces; the rest are unknown (or bytes with ``byte_fallback``). In [0.98, 1].
    seed_size : int, default 1000000
        Seed substrings kept before EM (SentencePiece's ``seed_sentencepiece_size``).
    max_piece_length : int, default 16
        Longest piece, in characters.
    shrinking_factor : float, default 0.75
        Share of the pieces kept by each pruning step, in (0, 1).
    n_sub_iterations : int, default 2
        EM iterations between two pruning steps.
    unk_token, bos_token, eos_token : str or None
        ``<unk>`` (required: SentencePiece needs it), ``<s>``, ``</s>``; control pieces, never produced from text.
    pad_token : str or None, default None
        Padding piece (``<pad>``), placed after ``eos_token``.
    special_tokens : sequence of str, default ()
        More control pieces (SentencePiece's ``control_symbols``).
    user_defined_symbols : sequence of str, default ()
        Pieces that are always one token where they occur in a text, never normalized (SentencePiece's
        ``user_defined_symbols``).
    byte_fallback : bool, default False
        Add the 256 byte pieces: an unknown character becomes its UTF-8 bytes, so nothing is unknown and
        ``decode(encode(s))`` gives ``s`` back (after normalization).
    split_digits : bool, default False
        A digit is a piece alone.
    split_by_unicode_script, split_by_number : bool, default True
        A piece holds one Unicode script; digits count as their own script (False: digits join any piece).
    normalization_rule_name : {"nmt_nfkc", "identity"}, default "nmt_nfkc"
        The normalization rule. SentencePiece's other rules (``nfkc``, ``nmt_nfkc_cf``, ``nfkc_cf``) are applied
        when a ``.model`` file carries them (its compiled table is read) but cannot be chosen for training.
    add_dummy_prefix : bool, default True
        Put a ``▁`` in front of the text, so that a word at the start encodes as it does after a space.
    remove_extra_whitespaces : bool, default True
        Drop leading and trailing whitespace and collapse runs of it.
    enable_sampling : bool, default False
        ``encode`` samples a segmentation (subword regularisation, Kudo 2018) instead of the best one.
    alpha : float, default 0.1
        Sampling smoothing: segmentations are drawn with probability proportional to ``p ** alpha``.
    nbest_size : int, default -1
        Sample among the ``nbest_size`` best segmentations; -1 (or 0) samples from the whole lattice.
    post_processor : dict, optional
        Template of the special tokens added around a text (``{"single": "$A </s>"}`` as T5 does); None adds none.
    num_threads : int, default 2
        Threads of the EM steps (the result does not depend on it).
    seed : int, default 0
        Seed of sampling (and of BPE-dropout for a SentencePiece BPE model); training is deterministic. Draws come
        from ``seed`` and a call counter that restarts at 0 on ``fit``/``load``.

    Notes
    -----
    Offsets are code-point spans into the original text; the dummy ``▁`` belongs to the first token, and all the
    byte pieces of one unknown character carry that character's span. ``decode`` is SentencePiece's (``▁`` becomes
    a space, the first one dropped, control pieces invisible, ``<unk>`` written `` ⁇ ``), except that an incomplete
    run of byte pieces decodes as ``bytes.decode("utf-8", "replace")`` does (one U+FFFD per invalid sequence, where
    SentencePiece writes one per byte).
    """

    name: ClassVar[str] = "unigram"
    param_constraints: ClassVar[dict[str, Any]] = {
        "vocab_size": Interval(int, 1, None),
        "character_coverage": Interval(float, 0.98, 1),  # SentencePiece's range
        "seed_size": Interval(int, 1, None),
        "max_piece_length": Interval(int, 1, None),
        "shrinking_factor": Interval(float, 0, 1, closed="neither"),
        "n_sub_iterations": Interval(int, 1, None),
        "unk_token": Text(),  # required: SentencePiece needs an unknown piece
        "bos_token": [Text(), None],
        "eos_token": [Text(), None],
        "pad_token": [Text(), None],
        "special_tokens": ListOf(Text()),
        "user_defined_symbols": ListOf(Text()),
        "byte_fallback": Boolean(),
        "split_digits": Boolean(),
        "split_by_unicode_script": Boolean(),
        "split_by_number": Boolean(),
        # SentencePiece's other rules are read from .model files (their compiled table) but not built for training
        "normalization_rule_name": Satisfies(
            lambda rule: rule in NORMALIZATION_RULES,
            f"one of {', '.join(map(repr, NORMALIZATION_RULES))} (SentencePiece's {', '.join(map(repr, OTHER_RULES))} "
            "are read from .model files, not built by tokembed)", hint=str),
        "add_dummy_prefix": Boolean(),
        "remove_extra_whitespaces": Boolean(),
        "enable_sampling": Boolean(),
        "alpha": Interval(float, 0, None),
        "nbest_size": Interval(int, -1, None),  # -1 or 0: the whole lattice
        "post_processor": POST_PROCESSOR_SPEC,
        "num_threads": Interval(int, 1, None),
        "seed": Interval(int, None, None),
    }
    #: Read by ``{load: FILE}`` (see :data:`tokembed.export.LOAD_FORMATS`).
    load_formats: ClassVar[tuple[str, ...]] = ("sentencepiece", "hf_json:Unigram")

    def __init__(
        self,
        vocab_size: int = 8000,
        character_coverage: float = 0.9995,
        seed_size: int = 1000000,
        max_piece_length: int = 16,
        shrinking_factor: float = 0.75,
        n_sub_iterations: int = 2,
        unk_token: str = "<unk>",
        bos_token: str | None = "<s>",
        eos_token: str | None = "</s>",
        pad_token: str | None = None,
        special_tokens: Sequence[str] = (),
        user_defined_symbols: Sequence[str] = (),
        byte_fallback: bool = False,
        split_digits: bool = False,
        split_by_unicode_script: bool = True,
        split_by_number: bool = True,
        normalization_rule_name: str = "nmt_nfkc",
        add_dummy_prefix: bool = True,
        remove_extra_whitespaces: bool = True,
        enable_sampling: bool = False,
        alpha: float = 0.1,
        nbest_size: int = -1,
        post_processor: dict | None = None,
        num_threads: int = 2,
        seed: int = 0,
    ):
        self.vocab_size = vocab_size
        self.character_coverage = character_coverage
        self.seed_size = seed_size
        self.max_piece_length = max_piece_length
        self.shrinking_factor = shrinking_factor
        self.n_sub_iterations = n_sub_iterations
        self.unk_token = unk_token
        self.bos_token = bos_token
        self.eos_token = eos_token
        self.pad_token = pad_token
        self.special_tokens = special_tokens
        self.user_defined_symbols = user_defined_symbols
        self.byte_fallback = byte_fallback
        self.split_digits = split_digits
        self.split_by_unicode_script = split_by_unicode_script
        self.split_by_number = split_by_number
        self.normalization_rule_name = normalization_rule_name
        self.add_dummy_prefix = add_dummy_prefix
        self.remove_extra_whitespaces = remove_extra_whitespaces
        self.enable_sampling = enable_sampling
        self.alpha = alpha
        self.nbest_size = nbest_size
        self.post_processor = post_processor
        self.num_threads = num_threads
        self.seed = seed

    # -- parameters -----------------------------------------------------------------------------------------------
    @classmethod
    def _planned_meta(cls, params: dict[str, Any]) -> list[tuple[str, int]]:
        """``(piece, type)`` of the special, user-defined (and byte) pieces, in id order."""
        out: list[tuple[str, int]] = []
        seen: set[str] = set()

        def add(tok: Any, kind: int) -> None:
            if isinstance(tok, str) and tok and tok not in seen:
                seen.add(tok)
                out.append((tok, kind))

        add(params.get("unk_token", "<unk>"), P.PIECE_UNKNOWN)
        add(params.get("bos_token", "<s>"), P.PIECE_CONTROL)
        add(params.get("eos_token", "</s>"), P.PIECE_CONTROL)
        add(params.get("pad_token"), P.PIECE_CONTROL)
        for tok in params.get("special_tokens") or ():
            add(tok, P.PIECE_CONTROL)
        for tok in params.get("user_defined_symbols") or ():
            add(tok, P.PIECE_USER_DEFINED)
        if params.get("byte_fallback", False):
            for b in range(256):
                add(byte_piece(b), P.PIECE_BYTE)
        return out

    @classmethod
    def expected_special_ids(cls, params: dict[str, Any]) -> dict[str, int]:
        """Ids of the special tokens of a trained tokenizer: unk, bos, eos, pad, then ``special_tokens``."""
        return {tok: i for i, (tok, kind) in enumerate(cls._planned_meta(params))
                if kind in (P.PIECE_UNKNOWN, P.PIECE_CONTROL)}

    def _validate(self) -> None:
        """The rule between parameters: ``vocab_size`` leaves room for a learned piece after the meta pieces."""
        metas = [t for t, _ in self._planned_meta(self.get_params())]
        if self.vocab_size <= len(metas):
            raise ParameterError("unigram", "vocab_size", f"must exceed the {len(metas)} special, user-defined and "
                                 f"byte pieces, got {self.vocab_size}")

    # -- training -------------------------------------------------------------------------------------------------
    @classmethod
    def warmup(cls) -> None:
        """Compile (or load from Numba's cache) every kernel: training, the normalizer, Viterbi, BPE, sampling,
        n-best, batch decoding, and the shared word counter."""
        import warnings

        from tokembed.text import fast

        fast.warmup()
        docs = ["warm up the kernels: caf\u00e9 \u6771\u4eac 12", "unwarmed words and warm words"] * 3
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tok = cls(vocab_size=40, character_coverage=1.0, byte_fallback=False).fit(docs)
        tok.encode("warm up \u00e9\u00e9 \u2603 " * 50)
        tok.encode_batch(docs)
        tok.encode_nbest("warm up", 3)
        tok.decode_batch([tok.encode(docs[0]).ids, []])
        tok.sample_encode("warm up", alpha=0.5, nbest_size=-1)
        bpe_like = SentencePieceModel(["<unk>", "\u2581", "w", "a", "\u2581w"], np.array([0, -1, -2, -3, -0.5]),
                                      np.array([2, 1, 1, 1, 1]), "bpe")
        bpe_like.encode_many(["wa wa"])

    def _meta_pieces(self) -> list[tuple[str, int]]:
        return self._planned_meta(self.get_params())

    def _normalizer_settings(self) -> NormalizerSettings:
        from ._charsmap import nmt_nfkc_charsmap

        identity = self.normalization_rule_name == "identity"
        return NormalizerSettings(name=self.normalization_rule_name,
                                  charsmap=b"" if identity else nmt_nfkc_charsmap(),
                                  add_dummy_prefix=self.add_dummy_prefix,
                                  remove_extra_whitespaces=self.remove_extra_whitespaces)

    def fit(self, corpus: Iterable[str], y: Any = None) -> "UnigramTokenizer":
        """Train on ``corpus`` (an iterable of documents, read once, streamed in chunks).

        Raises
        ------
        CorpusError
            If the corpus holds no word, or a document is not a str.
        ParameterError
            If a parameter is invalid, or ``vocab_size`` cannot hold the required characters.

        Warns
        -----
        VocabularySizeWarning
            When fewer pieces than ``vocab_size`` could be learned.
        """
        from .training import corpus_words, train_unigram

        self._validate_params()
        if isinstance(corpus, str):
            corpus = [corpus]
        meta = self._meta_pieces()
        normalizer = self._normalizer_settings()
        # a model of the meta pieces only gives the normalizer's tables (and the user-defined symbols' trie)
        probe = SentencePieceModel([t for t, _ in meta], np.zeros(len(meta), np.float32),
                                   np.array([k for _, k in meta], np.int8), "unigram", normalizer,
                                   bool(self.byte_fallback))
        cps, offsets, counts, final = corpus_words(
            corpus, (probe.charsmap_units, probe.replacements, probe.user_units), probe.params,
            [t for t, k in meta if k in (P.PIECE_CONTROL, P.PIECE_UNKNOWN, P.PIECE_USER_DEFINED)],
            identity=self.normalization_rule_name == "identity")
        result = train_unigram(
            cps, offsets, counts, final, vocab_size=int(self.vocab_size), n_meta=len(meta),
            character_coverage=float(self.character_coverage), seed_size=int(self.seed_size),
            max_piece_length=int(self.max_piece_length), shrinking_factor=float(self.shrinking_factor),
            n_sub_iterations=int(self.n_sub_iterations), split_digits=self.split_digits,
            split_by_unicode_script=self.split_by_unicode_script, split_by_number=self.split_by_number,
            workers=int(self.num_threads))
        taken = {t for t, _ in meta}
        learned = [(p, s) for p, s in zip(result.pieces, result.scores) if p not in taken]
        pieces = [t for t, _ in meta] + [p for p, _ in learned]
        scores = np.array([0.0] * len(meta) + [s for _, s in learned], np.float32)
        types = np.array([k for _, k in meta] + [P.PIECE_NORMAL] * len(learned), np.int8)
        model = SentencePieceModel(pieces, scores, types, "unigram", normalizer, bool(self.byte_fallback))
        self._set_model(model, self._trainer_settings())
        self.objective_ = list(result.objective)
        return self

    def _trainer_settings(self) -> dict[str, Any]:
        """The TrainerSpec fields a written ``.model`` records."""
        out: dict[str, Any] = {
            "vocab_size": int(self.vocab_size), "character_coverage": float(self.character_coverage),
            "seed_sentencepiece_size": int(self.seed_size), "max_sentencepiece_length": int(self.max_piece_length),
            "shrinking_factor": float(self.shrinking_factor), "num_sub_iterations": int(self.n_sub_iterations),
            "split_digits": self.split_digits, "split_by_unicode_script": self.split_by_unicode_script,
            "split_by_number": self.split_by_number, "unk_piece": self.unk_token,
        }
        for key, tok in (("bos_piece", self.bos_token), ("eos_piece", self.eos_token), ("pad_piece", self.pad_token)):
            if tok is not None:
                out[key] = tok
        return out

    def _set_model(self, model: SentencePieceModel, trainer: dict[str, Any] | None = None) -> "UnigramTokenizer":
        self._model = model
        self._proto = files.model_proto_bytes(model, trainer)
        self.model_type_ = model.model_type
        self.special_tokens_ = [p for i, p in enumerate(model.pieces) if model.is_special[i]]
        self._calls = itertools.count()
        return self

    # -- encoding and decoding ------------------------------------------------------------------------------------
    def _call_seed(self) -> int:
        return ((int(self.seed) & _MASK64) ^ (next(self._calls) * 0x9E3779B97F4A7C15)) & _MASK64

    def _encoding(self, ids: np.ndarray, offsets: np.ndarray) -> Encoding:
        return Encoding(ids, self._model.itos[ids].tolist(), offsets)

    def _encode_text(self, text: str) -> Encoding:
        if self.enable_sampling:
            return self.sample_encode(text)
        ids, offsets = self._model.encode_many([text])[0]
        return self._encoding(ids, offsets)

    def _encode_batch(self, texts: list[str], pairs: list[str] | None, opts: EncodeOptions,
                      workers: int) -> list[Encoding]:
        """:meth:`tokembed.Tokenizer.encode_batch`, with the texts encoded together in chunks of about 64K
        characters, one kernel call per chunk, on ``workers`` threads (the kernel releases the GIL). Equal to
        ``[encode(t) for t in texts]``; with sampling, texts are encoded one by one."""
        if self.enable_sampling:
            return super()._encode_batch(texts, pairs, opts, workers)
        firsts = self._encode_chunks(texts, workers)
        if opts.is_identity:
            return opts.pad_batch(firsts)
        seconds = self._encode_chunks(pairs, workers) if pairs is not None else [None] * len(firsts)
        return opts.pad_batch([opts.process(a, b) for a, b in zip(firsts, seconds)])

    def encode_ids(self, texts: Sequence[str], num_workers: int | None = None, *, spans: bool = False
                   ) -> tuple[np.ndarray, np.ndarray] | tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Ids, and with ``spans=True`` code-point spans, packed (see :meth:`tokembed.Tokenizer.encode_ids`): the
        kernel's arrays, in chunks of about 64K characters on ``num_workers`` threads (default one), without
        building an :class:`Encoding` (token strings) per text. With sampling, through :meth:`encode_batch`.

        Raises
        ------
        TypeError, TokembedError
            As :meth:`encode_batch`.
        """
        self._check_is_fitted()
        texts, _ = check_batch_inputs(texts, None)
        if self.enable_sampling:
            return super().encode_ids(texts, spans=spans)
        model = self._model
        parts = map_text_chunks(lambda part: model.encode_ids(part, spans), texts, resolve_workers(num_workers))
        return join_packed(parts, spans)

    def _encode_chunks(self, texts: list[str], workers: int) -> list[Encoding]:
        model, itos = self._model, self._model.itos

        def work(part: list[str]) -> list[Encoding]:
            return [Encoding(ids, itos[ids].tolist(), offsets) for ids, offsets in model.encode_many(part)]

        return [e for part in map_text_chunks(work, texts, workers) for e in part]

    def _lattice(self, text: str):
        """The lattice of ``text``: normalized bytes, node arrays, and the map back to code points."""
        from ._kernels_encode import lattice_text, normalize_text

        m = self._model
        if m.model_type != "unigram":
            raise TokembedError("unigram: n-best and lattice sampling need a unigram model; this one is a "
                                "SentencePiece BPE model (use seed and BPE-dropout through sample_encode)")
        from tokembed.text import repair_surrogates

        nt = repair_surrogates(text)
        data = nt.normalized.encode("utf-8")
        buf = np.frombuffer(data or b"\x00", np.uint8)[: len(data)]
        norm, norm_map = normalize_text(buf, m.charsmap_units, m.replacements, m.user_units, m.params)
        starts, ends, ids, scores = lattice_text(norm, m.units, m.scores, m.kinds, m.unk_id, m.unk_score)
        cpos = np.zeros(len(data) + 1, np.int64)
        np.cumsum(np.frombuffer(data, np.uint8) & 0xC0 != 0x80, out=cpos[1:])
        return nt, norm, norm_map, cpos, starts, ends, ids, scores

    def _path_encoding(self, nt, norm, norm_map, cpos, starts, ends, ids, nodes) -> Encoding:
        """The Encoding of lattice nodes ``nodes`` (SentencePiece's output step: byte fallback, merged unknowns)."""
        m = self._model
        out_ids, out_off = [], []
        prev_unk = False
        for k in nodes.tolist():
            pid = int(ids[k])
            nb, ne = int(starts[k]), int(ends[k])
            span = [int(cpos[norm_map[nb]]), int(cpos[norm_map[ne]])]
            unk = pid == m.unk_id
            if unk and m.byte_fallback:
                for b in norm[nb:ne].tolist():
                    out_ids.append(int(m.byte_ids[b]))
                    out_off.append(span)
            elif unk and prev_unk:
                out_off[-1][1] = span[1]
            else:
                out_ids.append(pid)
                out_off.append(span)
            prev_unk = unk
        arr = np.array(out_ids, np.int32)
        off = np.array(out_off, np.int64).reshape(-1, 2)
        if not nt.is_one_to_one:
            off = nt.original_spans(off)
        return self._encoding(arr, off)

    def encode_nbest(self, text: str, nbest_size: int) -> list[tuple[Encoding, float]]:
        """The ``nbest_size`` most probable segmentations of ``text``, best first, with their scores (sums of
        piece log-probabilities, float64; SentencePiece's ``NBestEncode``). Ties among equal scores keep the
        segmentation found first.

        Raises
        ------
        TokembedError
            For a BPE model, or ``nbest_size`` not a positive int.
        """
        from ._kernels_segment import nbest

        self._check_is_fitted()
        raise_parameter_errors(self.name, {"nbest_size": Interval(int, 1, None)}, {"nbest_size": nbest_size})
        nt, norm, norm_map, cpos, starts, ends, ids, scores = self._lattice(text)
        size = norm.shape[0]
        if size == 0:
            return [(self._encoding(np.zeros(0, np.int32), np.zeros((0, 2), np.int64)), 0.0)]
        k = int(nbest_size)
        out_nodes = np.empty(k * (size + 1), np.int64)
        out_offsets = np.zeros(k + 1, np.int64)
        out_scores = np.zeros(k, np.float64)
        n = nbest(size, starts.shape[0], starts, ends, scores.astype(np.float64), k, out_nodes, out_offsets,
                  out_scores)
        return [(self._path_encoding(nt, norm, norm_map, cpos, starts, ends, ids,
                                     out_nodes[out_offsets[r]:out_offsets[r + 1]]), float(out_scores[r]))
                for r in range(n)]

    def sample_encode(self, text: str, alpha: float | None = None, nbest_size: int | None = None,
                      seed: int | None = None) -> Encoding:
        """A segmentation of ``text`` drawn at random (subword regularisation, Kudo 2018).

        With ``nbest_size`` -1 or 0 the draw is from the whole lattice, each segmentation with probability
        proportional to ``exp(alpha * score)`` (forward filtering, backward sampling); with ``nbest_size`` > 1
        from the ``nbest_size`` best ones with the same weights; 1 gives the best. For a SentencePiece BPE model,
        ``alpha`` is the BPE-dropout probability. ``alpha`` and ``nbest_size`` default to the parameters; ``seed``
        to the tokenizer's seed combined with a call counter.

        Raises
        ------
        ParameterError
            (a ``TokembedError``) If ``alpha`` or ``nbest_size`` breaks the parameter's declaration (a number >= 0;
            an int >= -1), naming each.
        """
        from ._kernels_segment import sample_path

        self._check_is_fitted()
        alpha = self.alpha if alpha is None else alpha
        nbest_size = self.nbest_size if nbest_size is None else nbest_size
        raise_parameter_errors(self.name, self.param_constraints, {"alpha": alpha, "nbest_size": nbest_size})
        alpha, nbest_size = float(alpha), int(nbest_size)
        seed = self._call_seed() if seed is None else int(seed) & _MASK64
        if self._model.model_type == "bpe":
            ids, offsets = self._model.encode_many([text], dropout=min(alpha, 1.0), seed=seed)[0]
            return self._encoding(ids, offsets)
        if nbest_size == 1:
            ids, offsets = self._model.encode_many([text])[0]
            return self._encoding(ids, offsets)
        if nbest_size > 1:
            best = self.encode_nbest(text, nbest_size)
            logits = np.array([alpha * s for _, s in best])
            probs = np.exp(logits - logits.max())
            probs /= probs.sum()
            return best[int(np.random.default_rng(seed).choice(len(best), p=probs))][0]
        nt, norm, norm_map, cpos, starts, ends, ids, scores = self._lattice(text)
        size = norm.shape[0]
        if size == 0:
            return self._encoding(np.zeros(0, np.int32), np.zeros((0, 2), np.int64))
        nodes = np.empty(size + 1, np.int64)
        n = sample_path(size, starts.shape[0], starts, ends, scores.astype(np.float64), alpha, np.uint64(seed), nodes)
        return self._path_encoding(nt, norm, norm_map, cpos, starts, ends, ids, nodes[:n])

    def segmentation_log_probs(self, text: str, nbest_size: int = 10) -> list[tuple[list[str], float]]:
        """The ``nbest_size`` best segmentations of ``text`` (as pieces) with their probability under the model,
        as natural logs: ``score - log Z``, where ``Z`` sums ``exp(score)`` over every segmentation (the lattice's
        forward pass)."""
        from ._kernels_segment import forward

        nt, norm, norm_map, cpos, starts, ends, ids, scores = self._lattice(text)
        size = norm.shape[0]
        alpha = np.empty(starts.shape[0], np.float64)
        log_z = forward(size, starts.shape[0], starts, ends, scores.astype(np.float64), 1.0, alpha) if size else 0.0
        return [(enc.tokens, score - log_z) for enc, score in self.encode_nbest(text, nbest_size)]

    def decode(self, ids: Sequence[int] | np.ndarray, skip_special_tokens: bool = False) -> str:
        """Turn ids back into text as SentencePiece does (see the class notes).

        Raises
        ------
        TokembedError
            If an id is outside ``[0, get_vocab_size())``.
        """
        self._check_is_fitted()
        return self._model.decode(ids, skip_special_tokens)

    def decode_batch(self, ids_list: Sequence[Sequence[int] | np.ndarray], skip_special_tokens: bool = False
                     ) -> list[str]:
        """``[decode(ids, skip_special_tokens) for ids in ids_list]`` in one Numba pass over all the ids
        (:meth:`SentencePieceModel.decode_batch <tokembed.plugins.unigram.model.SentencePieceModel.decode_batch>`).

        Raises
        ------
        TokembedError
            As :meth:`decode`, for the first bad sequence.
        """
        self._check_is_fitted()
        return self._model.decode_batch(ids_list, skip_special_tokens)

    def token_bytes(self, id: int) -> bytes:
        """The bytes piece ``id`` stands for: a byte piece's raw byte (``<0xE3>`` -> ``b"\\xe3"``), else the UTF-8
        of ``decode([id])``. The hook of the ``partial_char_rate`` metric.

        Raises
        ------
        TokembedError
            If ``id`` is outside ``[0, get_vocab_size())``.
        """
        model = getattr(self, "_model", None)
        if model is None:
            self._check_is_fitted()
        return model.token_bytes(id)

    def normalize(self, text: str) -> str:
        """The text as the model segments it: the rule applied, spaces as ``▁``, the dummy prefix added."""
        self._check_is_fitted()
        return self._model.normalize(text)

    # -- vocabulary -----------------------------------------------------------------------------------------------
    def get_vocab(self) -> dict[str, int]:
        self._check_is_fitted()
        return dict(self._model.tok2id)

    def get_vocab_size(self) -> int:
        self._check_is_fitted()
        return len(self._model.pieces)

    def token_to_id(self, token: str) -> int | None:
        self._check_is_fitted()
        return self._model.tok2id.get(token)

    def id_to_token(self, id: int) -> str | None:
        self._check_is_fitted()
        return self._model.pieces[id] if 0 <= id < len(self._model.pieces) else None

    def piece_scores(self) -> np.ndarray:
        """The score (log-probability) of each piece, float32 of shape (vocab_size,)."""
        self._check_is_fitted()
        return self._model.scores.copy()

    # -- state ----------------------------------------------------------------------------------------------------
    def _get_state(self) -> dict[str, Any]:
        # the serialized ModelProto (the .model file's bytes) is the whole model: one fact in one place
        state: dict[str, Any] = {"model_proto_base64": base64.b64encode(self._proto).decode("ascii")}
        if getattr(self, "objective_", None) is not None:
            state["objective"] = [float(x) for x in self.objective_]
        return state

    def _set_state(self, state: dict[str, Any]) -> None:
        try:
            data = base64.b64decode(state["model_proto_base64"], validate=True)
        except (KeyError, TypeError, ValueError, binascii.Error):
            raise ArtifactError("saved unigram tokenizer: model_proto_base64 is missing or not base64") from None
        self._set_model(SentencePieceModel.from_proto_bytes(data, "saved unigram tokenizer"))
        if "objective" in state:
            self.objective_ = [float(x) for x in state["objective"]]

    # -- files ----------------------------------------------------------------------------------------------------
    @classmethod
    def from_sentencepiece(cls, path: str | os.PathLike, **params: Any) -> "UnigramTokenizer":
        """Load a SentencePiece ``.model`` file (model type unigram or BPE); encoding then equals
        ``sentencepiece.SentencePieceProcessor(model_file=path).encode``, id for id.

        ``**params`` sets other parameters (``post_processor``, ``enable_sampling``, ``alpha``, ``seed``, ...);
        the parameters that describe the model come from the file.

        Raises
        ------
        ArtifactError
            If the file is not a SentencePiece model tokembed can encode with (the message says why).
        """
        model = files.read_model_file(path)
        return cls._from_model(model, params, str(path))

    @classmethod
    def _from_model(cls, model: SentencePieceModel, params: dict[str, Any], source: str) -> "UnigramTokenizer":
        found: dict[str, Any] = {
            "vocab_size": len(model.pieces), "byte_fallback": model.byte_fallback,
            "add_dummy_prefix": model.normalizer.add_dummy_prefix,
            "remove_extra_whitespaces": model.normalizer.remove_extra_whitespaces,
            "unk_token": model.pieces[model.unk_id] if model.unk_id >= 0 else "<unk>",
        }
        rule = model.normalizer.name
        if rule in NORMALIZATION_RULES:
            found["normalization_rule_name"] = rule
        controls = [p for p, t in zip(model.pieces, model.types.tolist()) if t == P.PIECE_CONTROL]
        found["bos_token"] = "<s>" if "<s>" in controls else None
        found["eos_token"] = "</s>" if "</s>" in controls else None
        found["special_tokens"] = [p for p in controls if p not in ("<s>", "</s>")]
        found["user_defined_symbols"] = [p for p, t in zip(model.pieces, model.types.tolist())
                                         if t == P.PIECE_USER_DEFINED]
        if "<pad>" in found["special_tokens"]:
            found["special_tokens"].remove("<pad>")
            found["pad_token"] = "<pad>"
        try:
            tok = cls(**{**found, **params})
        except TypeError as exc:
            raise TokembedError(f"unigram: {exc}") from None
        tok._set_model(model)
        return tok

    def to_sentencepiece(self, path: str | os.PathLike) -> None:
        """Write a SentencePiece ``.model`` file that ``sentencepiece.SentencePieceProcessor`` loads and encodes
        with exactly as this tokenizer does (a loaded file is written back unchanged).

        Raises
        ------
        NotFittedError
            If the tokenizer is not fitted.
        """
        self._check_is_fitted()
        files.write_model_file(path, self._proto)

    @classmethod
    def from_hf_json(cls, path: str | os.PathLike, **params: Any) -> "UnigramTokenizer":
        """Load the ``Unigram`` model of a Hugging Face ``tokenizer.json`` (see :mod:`tokembed.plugins.unigram.files`
        for the stages read).

        Raises
        ------
        ArtifactError
            If the file is not a tokenizer.json with a Unigram model, or uses a stage tokembed cannot mirror.
        """
        model, _ = files.read_hf_json(path)
        return cls._from_model(model, params, str(path))

    def to_hf_json(self, path: str | os.PathLike) -> None:
        """Write a Hugging Face ``tokenizer.json`` (``Unigram`` model, ``Precompiled`` normalizer, ``Metaspace``)
        that ``tokenizers.Tokenizer.from_file`` loads.

        Raises
        ------
        NotFittedError
            If the tokenizer is not fitted.
        TokembedError
            For a SentencePiece BPE model.
        """
        self._check_is_fitted()
        files.write_hf_json(path, self._model)

    # -- contract suite -------------------------------------------------------------------------------------------
    @classmethod
    def _contract_params(cls) -> dict[str, Any]:
        return {"vocab_size": 300, "character_coverage": 1.0}
