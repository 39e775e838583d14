"""Word-level tokenizer: a normalizer, a pre-tokenizer and a vocabulary of the words seen."""

from __future__ import annotations

from collections import Counter
from typing import Any, ClassVar, Iterable, Sequence

import numpy as np

from tokembed.components import join_packed, map_text_chunks
from tokembed.encoding import Encoding
from tokembed.errors import CorpusError, TokembedError
from tokembed.postprocess import EncodeOptions, check_batch_inputs, resolve_workers
from tokembed.text import NORMALIZER_SPEC, PRE_TOKENIZER_SPEC, build_normalizer, build_pre_tokenizer, split_text
from tokembed.vocab import VOCAB_PARAM_CONSTRAINTS, VocabTokenizer

__all__ = ["WordTokenizer", "count_words"]


def count_words(docs: Iterable[str], normalizer, pre_tokenizer) -> Counter:
    """Count the pre-tokenized pieces of ``docs``.

    The result is a partial count: counts of several chunks of a corpus add up (``Counter.update``) to the count
    of the whole, so a corpus can be counted in chunks, by several workers, and merged.
    """
    counts: Counter = Counter()
    for doc in docs:
        if not isinstance(doc, str):
            raise CorpusError(f"word: documents must be str, got {type(doc).__name__}")
        counts.update(piece for piece, _ in split_text(doc, normalizer, pre_tokenizer))
    return counts


class WordTokenizer(VocabTokenizer):
    """Word-level tokenizer: each pre-tokenized piece (after normalization) is one token.

    The vocabulary holds, in id order: ``pad_token`` (if set), ``unk_token`` (if set), the other
    ``special_tokens``, then the words whose count is at least ``min_frequency``, most frequent first, ties by
    code-point order of the word; ``vocab_size`` caps the total, special tokens included. This is the tokenizer
    that bag-of-words, TF-IDF, co-occurrence counting and GloVe work on.

    Parameters
    ----------
    vocab_size : int or None, default None
        Largest vocabulary, special tokens included; None keeps every word reaching ``min_frequency``.
    min_frequency : int, default 1
        Smallest corpus count a word needs to enter the vocabulary.
    normalizer : str, list of str or None, default None
        Normalizer stages applied in order (``"nfkc"``, ``"lowercase"``, ...; see ``tokembed.text``).
    pre_tokenizer : str or dict, default "word_punct"
        How text is split into words: ``"word_punct"`` (``\\w+|[^\\w\\s]+``), ``"whitespace_split"``,
        ``"bert"``, ``"gpt2"``, or ``{"type": "regex", "pattern": ...}``.
    unk_token : str or None, default "<unk>"
        Token for words outside the vocabulary; with None such a word raises ``TokembedError``.
    pad_token : str or None, default "<pad>"
        Padding token (id 0 when set).
    special_tokens : sequence of str, default ()
        More special tokens, after the pad and unk tokens.
    seed : int, default 0
        Accepted like every trainer's; this training is deterministic.

    Notes
    -----
    Special-token strings written inside the text are plain text unless passed in ``allowed_special`` (see
    :meth:`tokembed.Tokenizer.encode`): a word that spells a special token encodes as ``unk_token``, never as the
    special token, and ``fit`` warns (:class:`tokembed.errors.SpecialTokenInCorpusWarning`) when the corpus holds
    such a word (``unk_token`` itself aside: the word ``"<unk>"`` encoding as ``unk_token`` loses nothing).
    Offsets are code-point spans of each word in the original (un-normalized) text. ``decode`` joins words with
    one space (Hugging Face's ``WordLevel`` decoding): the original whitespace is not recoverable at word level.
    """

    name: ClassVar[str] = "word"
    whole_words: ClassVar[bool] = True
    decode_joiner: ClassVar[str] = " "
    _entry_name: ClassVar[str] = "word"
    param_constraints: ClassVar[dict[str, Any]] = {
        **VOCAB_PARAM_CONSTRAINTS,
        "normalizer": [NORMALIZER_SPEC, None],
        "pre_tokenizer": [PRE_TOKENIZER_SPEC, None],  # None: the whole text is one word
    }

    def __init__(
        self,
        vocab_size: int | None = None,
        min_frequency: int = 1,
        normalizer: str | list[str] | None = None,
        pre_tokenizer: str | dict = "word_punct",
        unk_token: str | None = "<unk>",
        pad_token: str | None = "<pad>",
        special_tokens: Sequence[str] = (),
        seed: int = 0,
    ):
        self.vocab_size = vocab_size
        self.min_frequency = min_frequency
        self.normalizer = normalizer
        self.pre_tokenizer = pre_tokenizer
        self.unk_token = unk_token
        self.pad_token = pad_token
        self.special_tokens = special_tokens
        self.seed = seed

    def _stages(self):
        """The normalizer and pre-tokenizer (their specs are checked by ``param_constraints``)."""
        return build_normalizer(self.normalizer), build_pre_tokenizer(self.pre_tokenizer)

    def fit(self, corpus: Iterable[str], y: Any = None) -> "WordTokenizer":
        """Count words over ``corpus`` (an iterable of str, streamed once) and build the vocabulary:
        ``fit_counts(partial_counts(corpus))``.

        Raises
        ------
        CorpusError
            If the corpus yields no word, or a document is not a str.
        TokembedError
            If a parameter is invalid.

        Warns
        -----
        SpecialTokenInCorpusWarning
            If a special token other than ``unk_token`` is a word of the corpus (reaching ``min_frequency``): that
            word encodes as ``unk_token``.
        """
        return self.fit_counts(self.partial_counts(corpus))

    def partial_counts(self, corpus: Iterable[str]) -> Any:
        """Counts of the words of ``corpus`` (normalized, pre-tokenized), as :class:`tokembed.text.fast.WordCounts`
        (partial counts that merge), counted by :func:`tokembed.text.fast.count_words`.

        Raises
        ------
        CorpusError
            If a document is not a str.
        TokembedError
            If a parameter is invalid.
        """
        from tokembed.text.fast import count_words as fast_count_words

        self._validate_params()
        normalizer, pre_tokenizer = self._stages()
        return fast_count_words(corpus, pre_tokenizer, normalizer)

    def fit_counts(self, counts: Any) -> "WordTokenizer":
        """Build the vocabulary from the merged :meth:`partial_counts` of the corpus (see :meth:`fit`)."""
        self._validate_params()
        counts = counts.to_dict()
        if not counts:
            raise CorpusError("word: the corpus holds no word (empty, or only whitespace)")
        words = self._select(counts, key=lambda w: (-counts[w], w))
        self._set_vocab(self._specials(), words, [counts[w] for w in words])
        return self

    def _set_vocab(self, specials: list[str], words: list[str], counts: list[int]) -> None:
        self._set_table(specials, words)
        self._piece_table = None
        self.word_counts_ = dict(zip(words, counts))
        self._normalizer, self._pre_tokenizer = self._stages()

    # -- encoding -------------------------------------------------------------------------------------------------
    def _encode_text(self, text: str) -> Encoding:
        """The reference path: :func:`tokembed.text.split_text` and a dictionary lookup per piece."""
        pieces = split_text(text, self._normalizer, self._pre_tokenizer)
        vocab = self.vocab_
        arr = np.fromiter((vocab.get(p, -1) for p, _ in pieces), dtype=np.int32, count=len(pieces))
        # special tokens hold ids 0 .. n-1; a word that spells one is plain text, not that special token
        unknown = arr < len(self.special_tokens_)
        if self._unk_id < 0 and unknown.any():
            k = int(np.flatnonzero(unknown)[0])
            word, span = pieces[k]
            raise self._unknown_word(word, span)
        arr[unknown] = self._unk_id
        offsets = np.asarray([span for _, span in pieces], dtype=np.int64).reshape(-1, 2)
        return Encoding(arr, self._itos[arr].tolist(), offsets)

    def _unknown_word(self, word: str, span: Any) -> TokembedError:
        what = ("spells a special token (plain text unless allowed_special lists it)" if word in self.vocab_
                else "is not in the vocabulary")
        return TokembedError(f"word: {word!r} at {tuple(span)} {what} and there is no unk_token")

    def _pieces(self) -> Any:
        """The vocabulary as a :class:`tokembed.text.scan.PieceVocabulary` (built at the first batch): the words
        (special tokens left out, so a word that spells one is unknown, as in :meth:`_encode_text`) with their ids,
        ``unk_token``'s id (or -1) for any other piece."""
        table = getattr(self, "_piece_table", None)
        if table is None:
            from tokembed.text.scan import PieceVocabulary

            n_special = len(self.special_tokens_)
            words = self._itos[n_special:].tolist()
            table = PieceVocabulary(words, np.arange(n_special, n_special + len(words)), self._unk_id)
            self._piece_table = table
        return table

    def _encode_packed(self, texts: list[str], spans: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Ids, pieces per text and (with ``spans``) spans of ``texts`` from the Numba scanner
        (:meth:`tokembed.text.scan.PieceVocabulary.encode`; the caller checked that it handles the pre-tokenizer).

        Raises
        ------
        TokembedError
            If a word is not in the vocabulary (or spells a special token) and there is no ``unk_token``: the
            first such word, as :meth:`_encode_text` names it.
        """
        ids, counts, offsets = self._pieces().encode(texts, self._pre_tokenizer, self._normalizer, spans=spans)
        if self._unk_id < 0 and ids.shape[0] and (ids < 0).any():
            k = int(np.flatnonzero(ids < 0)[0])
            t = int(np.searchsorted(np.cumsum(counts), k, side="right"))
            before = int(counts[:t].sum())
            word, span = split_text(texts[t], self._normalizer, self._pre_tokenizer)[k - before]
            raise self._unknown_word(word, span)
        return ids, counts, offsets

    def _encode_batch(self, texts: list[str], pairs: list[str] | None, opts: EncodeOptions,
                      workers: int) -> list[Encoding]:
        """:meth:`tokembed.Tokenizer.encode_batch` on the Numba scanner: the texts are encoded in chunks of about
        64K characters (:meth:`_encode_packed`, on ``workers`` threads: the kernel releases the GIL), then cut into
        one :class:`Encoding` per text. Equal to ``[encode(t) for t in texts]``; a custom (``regex``)
        pre-tokenizer, or ``TOKEMBED_PURE_PYTHON=1``, encodes text by text (:meth:`_encode_text`)."""
        firsts = self._encodings(texts, workers)
        if firsts is None:
            return super()._encode_batch(texts, pairs, opts, workers)
        if opts.is_identity:
            return opts.pad_batch(firsts)
        seconds = self._encodings(pairs, workers) if pairs is not None else [None] * len(firsts)
        return opts.pad_batch([opts.process(a, b) for a, b in zip(firsts, seconds)])

    def _encodings(self, texts: list[str], workers: int) -> list[Encoding] | None:
        got = self._encode_chunks(texts, True, workers)
        if got is None:
            return None
        ids, counts, offsets = got
        tokens = self._itos[ids].tolist()
        ends = np.cumsum(counts).tolist()
        return [Encoding(ids[a:b], tokens[a:b], offsets[a:b]) for a, b in zip([0] + ends[:-1], ends)]

    def _encode_chunks(self, texts: list[str], spans: bool, workers: int
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None] | None:
        """:meth:`_encode_packed` over chunks of ``texts`` on ``workers`` threads, joined; None when the scanner does
        not stand in for the pre-tokenizer."""
        from tokembed.text.scan import scans

        if not scans(self._pre_tokenizer):
            return None
        self._pieces()  # built once, before the threads
        got = join_packed(map_text_chunks(lambda part: self._encode_packed(part, spans), texts, workers), spans)
        return got[0], got[1], got[2] if spans else None

    def encode_ids(self, texts: Sequence[str], *, spans: bool = False, num_workers: int | None = None
                   ) -> tuple[np.ndarray, np.ndarray] | tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Ids, and with ``spans=True`` code-point spans, packed (see :meth:`tokembed.Tokenizer.encode_ids`): the
        Numba scanner cuts the texts and looks every piece up in a hash table of the vocabulary
        (:class:`tokembed.text.scan.PieceVocabulary`), in chunks of about 64K characters on ``num_workers``
        threads (default one); no Python string or :class:`Encoding` is made per token. Equal to
        ``encode_batch(texts, add_special_tokens=False)``'s ids and offsets.

        Raises
        ------
        TypeError
            If ``texts`` is a str or holds a non-str.
        TokembedError
            If a word is not in the vocabulary (or spells a special token) and there is no ``unk_token``.
        """
        self._check_is_fitted()
        texts, _ = check_batch_inputs(texts, None)
        got = self._encode_chunks(texts, spans, resolve_workers(num_workers))
        if got is None:
            return super().encode_ids(texts, spans=spans)
        return (got[0], got[1], got[2]) if spans else (got[0], got[1])

    # -- state ------------------------------------------------------------------------------------------------
    def word_spans(self, text: str) -> np.ndarray:
        """The pre-tokenizer's pieces of ``text`` as code-point spans: each token is one word."""
        from tokembed.text import split_text_arrays

        self._check_is_fitted()
        return split_text_arrays(text, self._normalizer, self._pre_tokenizer)[1]

    def _get_state(self) -> dict[str, Any]:
        words = self._itos[len(self.special_tokens_):].tolist()
        return {
            "special_tokens": list(self.special_tokens_),
            "words": words,
            "word_counts": [self.word_counts_.get(w, 0) for w in words],
        }

    def _set_state(self, state: dict[str, Any]) -> None:
        specials = [str(t) for t in state["special_tokens"]]
        words = [str(w) for w in state["words"]]
        counts = state.get("word_counts") or [0] * len(words)
        self._set_vocab(specials, words, [int(n) for n in counts])
