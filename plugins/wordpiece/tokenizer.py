"""WordPiece: BERT's tokenizer, trained by likelihood or frequency, encoding greedy longest-match-first."""

from __future__ import annotations

import difflib
import os
import warnings
from pathlib import Path
from typing import Any, ClassVar, Iterable, Literal, Sequence

import numpy as np

from tokembed.components import Tokenizer, check_token_ids
from tokembed.encoding import Encoding
from tokembed.errors import (ArtifactError, CorpusError, DataError, TokembedError,
                             VocabularySizeWarning)
from tokembed.postprocess import EncodeOptions, POST_PROCESSOR_SPEC, check_batch_inputs, resolve_workers
from tokembed.params import Boolean, Interval, Options, PathLike, Satisfies, Text, raise_parameter_errors
from tokembed.plugins._subword import SUBWORD_PARAM_CONSTRAINTS

from . import files
from ._charmap import char_map
from ._encode import VocabModel, batch_encodings, encode_texts

__all__ = ["WordPieceTokenizer", "BERT_SPECIAL_TOKENS"]

#: BERT's special tokens, the default ``special_tokens``.
BERT_SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
SCORINGS = ("likelihood", "frequency")

# Hugging Face's WordPiece decoder cleanup (tokenizers/src/decoders/wordpiece.rs), applied to each token.
_CLEANUP = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"), (" 'm", "'m"),
            (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))


#: BERT's split without isolating CJK ideographs (``handle_chinese_chars=False``): punctuation alone, runs of the rest.
_BERT_NO_CJK = r"[!-/:-@\[-`{-~\p{P}]|[^\s!-/:-@\[-`{-~\p{P}]+"


#: ``vocab={"dataset": NAME}``: a vocabulary fetched by ``tokembed data`` (which dataset is :meth:`_validate`'s check).
_DATASET_REF = Satisfies(lambda v: isinstance(v, dict) and set(v) == {"dataset"} and isinstance(v["dataset"], str),
                         "{dataset: NAME}", hint=dict)


def _about_vocab(cls: type[TokembedError], message: str) -> TokembedError:
    """An error of type ``cls`` about the ``vocab`` parameter (``err.param``, read by ``check_params``)."""
    err = cls(message)
    err.param = "vocab"
    return err


class WordPieceTokenizer(Tokenizer):
    """WordPiece, the subword tokenizer of BERT: trained by likelihood or frequency, encoded as BERT encodes.

    Training counts the words of the corpus after normalization and pre-tokenization, splits them into base
    symbols (each character; ``##`` + character after the first position), and merges adjacent symbols again and
    again with the incremental Numba loop of ``tokembed.plugins._subword`` until the vocabulary has
    ``vocab_size`` entries:

    - ``scoring="likelihood"`` (the WordPiece criterion; Schuster & Nakajima 2012, Wu et al. 2016): the pair that
      most increases the likelihood of a unigram model of the training data, ``score(a, b) = count(ab) /
      (count(a) * count(b))``, compared exactly (cross-multiplied in 192-bit integers, no overflow); ties go to
      the higher pair count, then to the smallest ``(left id, right id)``;
    - ``scoring="frequency"``: the most frequent pair, which is what Hugging Face's ``WordPieceTrainer`` does (its
      BPE trainer with a ``##`` prefix); ties as above.

    Base symbol ids: special tokens, initial characters in code-point order, then ``##`` characters in code-point
    order; each merge takes the next id (so the result never depends on input order). A merged token is
    ``left + right`` without ``right``'s prefix; a string spelled by two merges is kept once.

    Encoding is BERT's (Devlin et al. 2019, google-research/bert ``tokenization.py``; Hugging Face
    ``BertWordPieceTokenizer``): the normalizer (``clean_text``, ``handle_chinese_chars``, ``strip_accents``,
    ``lowercase``), the split at whitespace and punctuation (each punctuation mark and CJK ideograph a piece), then
    for each piece greedy longest-match-first: the longest vocabulary token that starts the piece, then
    repeatedly the longest ``##`` token that continues it. A piece with no complete segmentation, or longer than
    ``max_input_chars_per_word`` characters, becomes one ``unk_token`` spanning the whole piece. All of it runs in
    one Numba kernel over the texts.

    Parameters
    ----------
    vocab_size : int, default 30000
        Size of the trained vocabulary, special tokens and alphabet included (the alphabet is never cut to fit:
        use ``limit_alphabet``). Smaller when no pair is left to merge. Ignored when ``vocab`` is given.
    min_frequency : int, default 2
        Smallest pair count that may be merged (0 and 1 both allow every pair that occurs), Hugging Face's
        ``min_frequency`` (the default of its ``BertWordPieceTokenizer.train`` and of tokembed's BPE). Likelihood
        scoring favours pairs of rare symbols, so a pair seen once would otherwise be merged early.
    special_tokens : sequence of str, default ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
        Special tokens of a trained vocabulary, after ``pad_token`` and ``unk_token``. Never produced from text:
        typed in a text they are plain text unless ``encode(..., allowed_special=...)`` lists them.
    limit_alphabet : int, optional
        Keep only the most frequent characters (ties: the smaller code point); a character left out splits the
        training words it occurs in, and a word holding it encodes as ``unk_token``.
    continuing_subword_prefix : str, default "##"
        Marks a token that continues a word.
    scoring : {"likelihood", "frequency"}, default "likelihood"
        Merge criterion (see above).
    vocab : str, dict or None, default None
        Load this vocabulary in ``fit`` instead of training: a path to a ``vocab.txt`` (ids are line numbers) or
        to a Hugging Face ``tokenizer.json`` (relative to the working directory; in a recipe, to the recipe's
        folder), or
        ``{"dataset": NAME}`` for a dataset of ``tokembed data`` (``{"dataset": "bert_uncased_vocab"}`` is
        bert-base-uncased). Special tokens missing from the file are added after its last entry.
    lowercase : bool, default True
        Lowercase character by character (BERT uncased).
    strip_accents : bool or None, default None
        Decompose (NFD) and drop nonspacing marks (category Mn); None follows ``lowercase`` (BERT's rule).
    clean_text : bool, default True
        Drop NUL, U+FFFD and control, format, private-use and surrogate characters; map whitespace to a space.
    handle_chinese_chars : bool, default True
        Each CJK ideograph is a piece by itself.
    unk_token : str or None, default "[UNK]"
        Token of a piece with no segmentation; None makes such a piece an error.
    pad_token : str or None, default "[PAD]"
        Padding token.
    max_input_chars_per_word : int, default 100
        Longer pieces (in characters after normalization) become one ``unk_token``.
    post_processor : dict, optional
        Template of the special tokens added around a text, e.g. ``{"single": "[CLS] $A [SEP]", "pair":
        "[CLS] $A [SEP] $B:1 [SEP]:1"}`` (the ``bert-wordpiece`` preset's); None adds nothing.
    show_progress : bool, default True
        Show a progress bar of the merges (only on a terminal).
    seed : int, default 0
        Accepted like every trainer's; training and encoding are deterministic.

    Notes
    -----
    Offsets are code-point spans into the original text: a token spans from the first to the last original
    character its characters came from; characters removed by normalization (accents, control characters)
    belong to no token, as in Hugging Face. ``decode`` is Hugging Face's WordPiece decoder: tokens joined by
    spaces, the ``##`` tokens glued to the one before, then its cleanup (``" ."`` -> ``"."``, ``" n't"`` ->
    ``"n't"``, ...). Differences from Hugging Face are listed in ``docs/wordpiece.md``.
    """

    name: ClassVar[str] = "wordpiece"
    #: Read by ``{load: FILE}`` (see :data:`tokembed.export.LOAD_FORMATS`).
    load_formats: ClassVar[tuple[str, ...]] = ("vocab_txt", "hf_json:WordPiece")
    path_params: ClassVar[tuple[str, ...]] = ("vocab",)
    param_constraints: ClassVar[dict[str, Any]] = {
        **SUBWORD_PARAM_CONSTRAINTS,  # vocab_size, min_frequency, special_tokens, limit_alphabet, the tokens, seed
        "continuing_subword_prefix": Text(nonempty=False),
        "scoring": Options(*SCORINGS),
        "vocab": [PathLike(), _DATASET_REF, None],
        "lowercase": Boolean(),
        "strip_accents": [Boolean(), None],  # None: as lowercase
        "clean_text": Boolean(),
        "handle_chinese_chars": Boolean(),
        "max_input_chars_per_word": Interval(int, 1, None),
        "post_processor": POST_PROCESSOR_SPEC,
        "show_progress": Boolean(),
    }

    def __init__(
        self,
        vocab_size: int = 30000,
        min_frequency: int = 2,
        special_tokens: Sequence[str] = BERT_SPECIAL_TOKENS,
        limit_alphabet: int | None = None,
        continuing_subword_prefix: str = "##",
        scoring: Literal["likelihood", "frequency"] = "likelihood",
        vocab: str | dict | None = None,
        lowercase: bool = True,
        strip_accents: bool | None = None,
        clean_text: bool = True,
        handle_chinese_chars: bool = True,
        unk_token: str | None = "[UNK]",
        pad_token: str | None = "[PAD]",
        max_input_chars_per_word: int = 100,
        post_processor: dict | None = None,
        show_progress: bool = True,
        seed: int = 0,
    ):
        self.vocab_size = vocab_size
        self.min_frequency = min_frequency
        self.special_tokens = special_tokens
        self.limit_alphabet = limit_alphabet
        self.continuing_subword_prefix = continuing_subword_prefix
        self.scoring = scoring
        self.vocab = vocab
        self.lowercase = lowercase
        self.strip_accents = strip_accents
        self.clean_text = clean_text
        self.handle_chinese_chars = handle_chinese_chars
        self.unk_token = unk_token
        self.pad_token = pad_token
        self.max_input_chars_per_word = max_input_chars_per_word
        self.post_processor = post_processor
        self.show_progress = show_progress
        self.seed = seed

    # -- parameters -----------------------------------------------------------------------------------------------
    @classmethod
    def _planned_specials(cls, params: dict[str, Any]) -> list[str]:
        out: list[str] = []
        for tok in [params.get("pad_token", "[PAD]"), params.get("unk_token", "[UNK]"),
                    *(params.get("special_tokens", BERT_SPECIAL_TOKENS) or ())]:
            if tok is not None and tok not in out:
                out.append(tok)
        return out

    @classmethod
    def expected_special_ids(cls, params: dict[str, Any]) -> dict[str, int]:
        """Ids of the special tokens: ``pad_token``, ``unk_token``, then ``special_tokens`` for a trained
        vocabulary; with ``vocab`` set, the ids in that file (read now; ``{}`` if it cannot be read yet)."""
        specials = cls._planned_specials(params)
        if params.get("vocab") is None:
            return {tok: i for i, tok in enumerate(specials)}
        if cls.parameter_errors({"vocab": params["vocab"]}):
            return {}
        try:
            tokens = cls._read_vocab(params["vocab"])
        except TokembedError:
            return {}
        index = {tok: i for i, tok in enumerate(tokens)}
        out = {}
        for tok in specials:
            out[tok] = index[tok] if tok in index else len(tokens) + len([t for t in out if t not in index])
        return out

    def _specials(self) -> list[str]:
        return self._planned_specials(self.get_params())

    def _resolved_strip(self) -> bool:
        return bool(self.lowercase) if self.strip_accents is None else bool(self.strip_accents)

    def _validate(self) -> None:
        """The checks that read something: a ``{dataset: NAME}`` is a WordPiece vocabulary of the dataset registry,
        a path is a file (read by :meth:`check_params` and by ``fit``)."""
        if isinstance(self.vocab, dict):
            self._vocab_dataset(self.vocab)
        elif self.vocab is not None:
            self._vocab_path(self.vocab)

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> list[tuple[str | None, str]]:
        """Problems with ``params`` (``tokembed validate``): those of :meth:`_validate`, then, when ``vocab`` is
        set and valid so far, those of reading the vocabulary file (a ``vocab.txt`` is 30k short lines: cheap),
        each as ``("vocab", "wordpiece: vocab: <the reader's message>")``."""
        problems = super().check_params(params)
        vocab = params.get("vocab")
        if vocab is None or any(param == "vocab" for param, _ in problems):
            return problems
        try:
            cls._read_vocab(vocab)
        except TokembedError as exc:
            problems.append(("vocab", str(exc)))
        return problems

    # -- training or loading --------------------------------------------------------------------------------------
    @staticmethod
    def _vocab_datasets() -> list[str]:
        """Names of the datasets that are WordPiece vocabularies: ``tokenizer_file`` datasets whose file is a
        ``vocab.txt`` (``.txt``) or a ``tokenizer.json`` (``.json``); ``gpt2_ranks`` (``.tiktoken``) is not."""
        from tokembed.datasets import DATASETS

        return sorted(name for name, spec in DATASETS.items()
                      if spec.kind == "tokenizer_file" and Path(spec.filename).suffix.lower() in (".txt", ".json"))

    @classmethod
    def _vocab_dataset(cls, vocab: dict) -> str:
        """The dataset name of ``vocab={"dataset": NAME}`` (a valid declaration), checked to be a WordPiece
        vocabulary (not fetched yet is left to :meth:`_vocab_path`)."""
        name = vocab["dataset"]
        from tokembed.datasets import DATASETS

        spec = DATASETS.get(name)
        choices = cls._vocab_datasets()
        if spec is None:
            close = difflib.get_close_matches(name, choices, n=3, cutoff=0.6)
            hint = f" Did you mean {' or '.join(map(repr, close))}?" if close else ""
            raise _about_vocab(DataError, f"wordpiece: vocab: unknown dataset {name!r}.{hint} Datasets that are WordPiece "
                            f"vocabularies: {', '.join(choices) or '(none)'}")
        if name not in choices:
            raise _about_vocab(
                TokembedError, f"wordpiece: vocab: dataset {name!r} ({spec.kind}: {spec.description}) is not a WordPiece "
                f"vocabulary. Datasets that are: {', '.join(choices) or '(none)'}")
        return name

    @classmethod
    def _vocab_path(cls, vocab: Any) -> Path:
        """The file of ``vocab``; raises (``"wordpiece: vocab: ..."``) for a missing file, a dataset that is not a
        WordPiece vocabulary, an unknown dataset or one not fetched yet (``DataError`` with the fetch command)."""
        if isinstance(vocab, dict):
            name = cls._vocab_dataset(vocab)
            from tokembed.datasets import dataset_path

            try:
                return Path(dataset_path(name))
            except TokembedError as exc:
                raise _about_vocab(type(exc), f"wordpiece: vocab: {exc}") from None
        path = Path(vocab)
        if not path.is_file():
            raise _about_vocab(ArtifactError, f"wordpiece: vocab: {vocab}: cannot read: "
                               + ("a directory, not a file" if path.is_dir() else "no such file")
                               + (f" (looked in {path.absolute()})" if not path.is_absolute() else ""))
        return path

    @classmethod
    def _read_vocab(cls, vocab: Any) -> list[str]:
        """Tokens of ``vocab`` (a ``vocab.txt``, a ``.json`` ``tokenizer.json`` or ``{dataset: NAME}``) in id order;
        every problem raises a :class:`TokembedError` starting ``"wordpiece: vocab: "``."""
        path = cls._vocab_path(vocab)
        try:
            if path.suffix.lower() == ".json":
                return files.read_hf_json(path)["vocab"]
            return files.read_vocab_txt(path)
        except TokembedError as exc:
            raise _about_vocab(type(exc), f"wordpiece: vocab: {exc}") from None

    def fit(self, corpus: Iterable[str], y: Any = None) -> "WordPieceTokenizer":
        """Train on ``corpus`` (an iterable of documents, read once, streamed in chunks), or, with ``vocab`` set,
        load that vocabulary and ignore the corpus.

        Raises
        ------
        CorpusError
            If the corpus holds no word, or a document is not a str.
        DataError
            If ``vocab`` names a dataset that is not fetched (the message gives the command).
        ArtifactError
            If the ``vocab`` file is missing or malformed.
        TokembedError
            If a parameter is invalid.
        """
        self._validate_params()
        specials = self._specials()
        if self.vocab is not None:
            tokens = self._read_vocab(self.vocab)
            present = set(tokens)
            tokens = tokens + [t for t in specials if t not in present]
            self._set_vocab(tokens, specials)
            return self
        from ._train import count_words

        if isinstance(corpus, str):
            corpus = [corpus]
        cmap = char_map(self.lowercase, self._resolved_strip(), self.clean_text, self.handle_chinese_chars)
        return self._learn(*count_words(corpus, cmap, self.handle_chinese_chars))

    def fits_on_counts(self) -> bool:
        """False with ``vocab`` set (the vocabulary is read, the corpus ignored)."""
        return self.vocab is None

    def partial_counts(self, corpus: Iterable[str]) -> Any:
        """The word counts training starts from (normalized pieces, see ``_train.count_words``), as
        :class:`tokembed.text.fast.WordCounts` (partial counts that merge); empty with ``vocab`` set.

        Raises
        ------
        CorpusError
            If a document is not a str.
        TokembedError
            If a parameter is invalid.
        """
        from tokembed.text.fast import WordCounts

        from ._train import count_words

        self._validate_params()
        if self.vocab is not None:
            return WordCounts(np.zeros(0, np.int32), np.zeros(1, np.int64), np.zeros(0, np.int64))
        if isinstance(corpus, str):
            corpus = [corpus]
        cmap = char_map(self.lowercase, self._resolved_strip(), self.clean_text, self.handle_chinese_chars)
        return WordCounts(*count_words(corpus, cmap, self.handle_chinese_chars))

    def fit_counts(self, counts: Any) -> "WordPieceTokenizer":
        """Learn the vocabulary from the merged :meth:`partial_counts` of the corpus (see :meth:`fit`); with
        ``vocab`` set, read that vocabulary instead."""
        if self.vocab is not None:
            return self.fit(())
        self._validate_params()
        return self._learn(counts.codepoints.astype(np.int64), counts.offsets, counts.counts)

    def _learn(self, cps: np.ndarray, offsets: np.ndarray, counts: np.ndarray) -> "WordPieceTokenizer":
        from ._train import learn_vocabulary

        specials = self._specials()
        if counts.size == 0:
            raise CorpusError("wordpiece: the corpus holds no word (empty, or only whitespace)")
        bar = None
        if self.show_progress:
            from tqdm.auto import tqdm

            bar = tqdm(desc="wordpiece merges", unit=" merges", mininterval=0.5, leave=False, disable=None)

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        try:
            tokens, _ = learn_vocabulary(
                cps, offsets, counts, specials=specials, vocab_size=int(self.vocab_size),
                min_frequency=int(self.min_frequency), limit_alphabet=self.limit_alphabet,
                prefix=self.continuing_subword_prefix, scoring=self.scoring,
                progress=progress if bar is not None else None)
        finally:
            if bar is not None:
                bar.close()
        if len(tokens) < self.vocab_size:
            why = ("no pair is left to merge" if self.min_frequency <= 1 else
                   f"no pair occurs at least min_frequency={self.min_frequency} times")
            warnings.warn(
                f"wordpiece: training stopped because {why}; the vocabulary has {len(tokens)} entries, not the "
                f"vocab_size={self.vocab_size} asked for", VocabularySizeWarning, stacklevel=3)
        elif len(tokens) > self.vocab_size:
            warnings.warn(
                f"wordpiece: the special tokens and the alphabet alone exceed vocab_size={self.vocab_size}; the "
                f"vocabulary has {len(tokens)} entries and no merge", VocabularySizeWarning, stacklevel=3)
        self._set_vocab(tokens, specials)
        return self

    def _set_vocab(self, tokens: list[str], specials: list[str]) -> None:
        index = {tok: i for i, tok in enumerate(tokens)}
        if len(index) != len(tokens):
            raise ValueError("the vocabulary repeats a token")
        missing = [t for t in specials if t not in index]
        if missing:
            raise ValueError(f"special tokens {missing!r} are not in the vocabulary")
        ordered = sorted(specials, key=index.__getitem__)
        self._model = VocabModel(tokens, [index[t] for t in ordered], self.continuing_subword_prefix)
        self._cmap = char_map(self.lowercase, self._resolved_strip(), self.clean_text, self.handle_chinese_chars)
        self._itos = np.array(tokens, dtype=object)
        self._is_special = np.zeros(len(tokens), bool)
        self._is_special[[index[t] for t in ordered]] = True
        self._unk_id = index.get(self.unk_token, -1) if self.unk_token is not None else -1
        self._vocab = index
        self.special_tokens_ = ordered

    # -- encoding -------------------------------------------------------------------------------------------------
    def _encode_arrays(self, texts: Sequence[str], workers: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return encode_texts(self._model, self._cmap, texts, self._unk_id, int(self.max_input_chars_per_word),
                            workers=workers)

    def _encode_text(self, text: str) -> Encoding:
        ids, offsets, _ = self._encode_arrays([text])
        return Encoding(ids, self._itos[ids].tolist(), offsets)

    def encode_ids(self, texts: Sequence[str], *, spans: bool = False, num_workers: int | None = None
                   ) -> tuple[np.ndarray, np.ndarray] | tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Ids, and with ``spans=True`` code-point spans, packed (see :meth:`tokembed.Tokenizer.encode_ids`): the
        flat arrays of the kernel (:func:`~tokembed.plugins.wordpiece._encode.encode_texts`, chunks of about a
        million characters on ``num_workers`` threads, default one), with no :class:`Encoding` or token string.

        Raises
        ------
        TypeError, TokembedError
            As :meth:`encode_batch`.
        """
        self._check_is_fitted()
        texts, _ = check_batch_inputs(texts, None)
        ids, offsets, lengths = self._encode_arrays(texts, resolve_workers(num_workers))
        return (ids, lengths, offsets) if spans else (ids, lengths)

    def word_spans(self, text: str) -> np.ndarray:
        """BERT's words of ``text`` (whitespace split, punctuation alone, CJK ideographs alone with
        ``handle_chinese_chars``), after the normalizer, as code-point spans of ``text``: the words of
        :attr:`Encoding.word_ids <tokembed.encoding.Encoding.word_ids>`."""
        from tokembed.text import split_text_arrays

        stages = (["bert_clean"] if self.clean_text else []) + (["strip_accents"] if self._resolved_strip() else []) \
            + (["lowercase"] if self.lowercase else [])
        pre = "bert" if self.handle_chinese_chars else {"type": "regex", "pattern": _BERT_NO_CJK}
        return split_text_arrays(text, stages, pre)[1]

    def _encode_batch(self, texts: list[str], pairs: list[str] | None, opts: EncodeOptions,
                      workers: int) -> list[Encoding]:
        """:meth:`tokembed.Tokenizer.encode_batch` in one pass of the Numba kernel over all texts.

        The texts are encoded together in chunks of about a million characters, and the template of one-text
        batches without truncation is applied to the whole batch with array operations; pairs and truncation
        post-process each encoding as the base class does. ``workers`` threads encode chunks (the kernel releases
        the GIL; building the Encodings stays on the calling thread). Results do not depend on ``workers``.
        """
        return batch_encodings(self._encode_arrays, self._itos, texts, pairs, opts, workers)

    def decode(self, ids: Sequence[int] | np.ndarray, skip_special_tokens: bool = False) -> str:
        """Hugging Face's WordPiece decoder: each token but the first gets a space before it unless it starts with
        the continuation prefix (which is removed), and each token is cleaned up (``" ."`` -> ``"."``, ``" ,"``
        -> ``","``, ``" n't"`` -> ``"n't"``, ``" 's"`` -> ``"'s"``, ...). Lossy: spaces around punctuation and the
        case and accents removed by normalization do not come back.

        Raises
        ------
        TokembedError
            If an id is outside ``[0, get_vocab_size())``.
        """
        self._check_is_fitted()
        arr = check_token_ids(ids, len(self._itos), "wordpiece")
        if skip_special_tokens:
            arr = arr[~self._is_special[arr]]
        return "".join([self._decoded_token(tok, i == 0) for i, tok in enumerate(self._itos[arr].tolist())])

    def _decoded_token(self, tok: str, first: bool) -> str:
        """What the decoder writes for ``tok``, first in its sequence or not (see :meth:`decode`)."""
        prefix = self.continuing_subword_prefix
        if not first:
            tok = tok[len(prefix):] if prefix and tok.startswith(prefix) else " " + tok
        for a, b in _CLEANUP:
            tok = tok.replace(a, b)
        return tok

    def decode_batch(self, ids_list: Sequence[Sequence[int] | np.ndarray], skip_special_tokens: bool = False
                     ) -> list[str]:
        """``[decode(ids, skip_special_tokens) for ids in ids_list]`` in one array pass: a table of what each
        token writes first and after the first (:func:`tokembed.decoding.decode_table`), no Python work per token.

        Raises
        ------
        TokembedError
            As :meth:`decode`, for the first bad sequence.
        """
        from tokembed.decoding import decode_table

        self._check_is_fitted()
        return decode_table(self._decode_table(), ids_list, "wordpiece",
                            self._is_special if skip_special_tokens else None)

    def _decode_table(self) -> Any:
        from tokembed.decoding import VariantTable

        cached = getattr(self, "_decode_cache", None)
        key = (getattr(self, "_itos", None), self.continuing_subword_prefix)
        if cached is None or cached[0] is not key[0] or cached[1] != key[1]:
            self._check_is_fitted()
            table = VariantTable.from_strings(self._itos.tolist(), lambda i, tok, v: self._decoded_token(tok, v), 2)
            cached = self._decode_cache = (*key, table)
        return cached[2]

    def token_bytes(self, id: int) -> bytes:
        """The UTF-8 bytes of ``decode([id])`` (lone surrogates kept): the hook of the ``partial_char_rate``
        metric.

        Raises
        ------
        TokembedError
            If ``id`` is outside ``[0, get_vocab_size())``."""
        return self._decode_table().token_entry(id, "wordpiece")  # checks fitted and the id, per id no more

    # -- vocabulary -----------------------------------------------------------------------------------------------
    def get_vocab(self) -> dict[str, int]:
        self._check_is_fitted()
        return dict(self._vocab)

    def get_vocab_size(self) -> int:
        self._check_is_fitted()
        return len(self._itos)

    def token_to_id(self, token: str) -> int | None:
        self._check_is_fitted()
        return self._vocab.get(token)

    def id_to_token(self, id: int) -> str | None:
        self._check_is_fitted()
        return self._itos[id] if 0 <= id < len(self._itos) else None

    # -- state ----------------------------------------------------------------------------------------------------
    def _get_state(self) -> dict[str, Any]:
        return {"special_tokens": list(self.special_tokens_), "vocab": self._itos.tolist()}

    def _set_state(self, state: dict[str, Any]) -> None:
        # the declarations only: the artifact holds the vocabulary, so the vocab file need not exist any more
        raise_parameter_errors(self.name, self.param_constraints, self.get_params(deep=False))
        self._set_vocab([str(t) for t in state["vocab"]], [str(t) for t in state["special_tokens"]])

    # -- files ----------------------------------------------------------------------------------------------------
    @classmethod
    def from_vocab_file(cls, path: str | os.PathLike, **params: Any) -> "WordPieceTokenizer":
        """Load a BERT ``vocab.txt`` (ids are line numbers; format in :mod:`tokembed.plugins.wordpiece.files`).

        The tokenizer is built with ``vocab=str(path)`` and ``**params`` (defaults: BERT uncased) and fitted, so
        ``get_params()`` rebuilds it. Example: ``WordPieceTokenizer.from_vocab_file("vocab.txt", lowercase=False)``
        for a cased vocabulary.

        Raises
        ------
        ArtifactError
            If the file is missing, not UTF-8, empty, or repeats a token (naming both lines).
        """
        return cls(vocab=os.fspath(path), **params).fit(())

    def to_vocab_file(self, path: str | os.PathLike) -> None:
        """Write the vocabulary as ``vocab.txt``, one token per line in id order (:meth:`from_vocab_file` reads it
        back to the same ids).

        Raises
        ------
        NotFittedError
            If the tokenizer is not fitted.
        TokembedError
            If a token holds a line break.
        """
        self._check_is_fitted()
        files.write_vocab_txt(self._itos.tolist(), path)

    @classmethod
    def from_hf_json(cls, path: str | os.PathLike, **params: Any) -> "WordPieceTokenizer":
        """Load a Hugging Face ``tokenizer.json`` with a WordPiece model (``BertWordPieceTokenizer.save``).

        The vocabulary, ``continuing_subword_prefix``, ``unk_token``, ``max_input_chars_per_word``, the
        ``BertNormalizer`` switches, the special added tokens and the post-processor come from the file;
        ``**params`` overrides any of them. The tokenizer keeps ``vocab=str(path)``, so ``get_params()`` rebuilds it.

        Raises
        ------
        ArtifactError
            If the file is not a WordPiece ``tokenizer.json`` or uses a normalizer or pre-tokenizer that tokembed
            cannot mirror.
        """
        info = files.read_hf_json(path)
        merged = {**info["params"], **params, "vocab": os.fspath(path)}
        return cls(**merged).fit(())

    def to_hf_json(self, path: str | os.PathLike) -> None:
        """Write a Hugging Face ``tokenizer.json`` (``BertNormalizer``, ``BertPreTokenizer``, WordPiece model and
        decoder, the post-processor as ``TemplateProcessing``) that ``tokenizers.Tokenizer.from_file`` loads and
        that encodes to the same ids.

        Raises
        ------
        NotFittedError
            If the tokenizer is not fitted.
        TokembedError
            Without an ``unk_token`` (Hugging Face's WordPiece needs one).
        """
        self._check_is_fitted()
        if self.unk_token is None or self.unk_token not in self._vocab:
            raise TokembedError("wordpiece: a Hugging Face WordPiece model needs an unk_token in the vocabulary")
        params = self.get_params()
        params["strip_accents"] = self.strip_accents
        files.write_hf_json(path, vocab=self._itos.tolist(), specials=self.special_tokens_, params=params)

    @classmethod
    def warmup_shared(cls) -> list[str]:
        """The shared kernels ``tokembed warmup`` compiles first, in parallel processes: the text scanner and the
        merge machinery of ``tokembed.plugins._subword``."""
        from tokembed.plugins import _subword

        return ["tokembed.text.fast:warmup", *_subword.WARMUP_STEPS,
                "tokembed.plugins.wordpiece.tokenizer:warmup_encoding"]

    @classmethod
    def warmup(cls) -> None:
        """Compile (or load from Numba's cache) every kernel WordPiece uses: the shared merge loop (both criteria),
        the word counter, and this plugin's normalization and encoding kernels."""
        from tokembed.plugins import _subword

        _subword.warmup()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the tiny corpus cannot reach the asked vocabulary size
            for scoring in SCORINGS:
                tok = cls(vocab_size=60, min_frequency=0, scoring=scoring, show_progress=False)
                tok.fit(["warm up the kernels: caf\u00e9 \u6771\u4eac", "unwarmed"])
        tok.encode_batch(["warm up", "caf\u00e9 \u6771"], num_workers=1)

    # -- contract suite -------------------------------------------------------------------------------------------
    @classmethod
    def _contract_params(cls) -> dict[str, Any]:
        return {"vocab_size": 300, "show_progress": False}


def warmup_encoding() -> None:
    """Compile (or load) WordPiece's normalization and encoding kernels on a tiny vocabulary, without training (so
    without the merge loop): a warm-up step that can run beside the others (``WordPieceTokenizer.warmup_shared``)."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        vocab = Path(folder) / "vocab.txt"
        files.write_vocab_txt(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "w", "a", "r", "m", "##a", "##r"], vocab)
        tok = WordPieceTokenizer.from_vocab_file(vocab)
        tok.encode_batch(["warm up", "caf\u00e9 \u6771"], num_workers=1)
