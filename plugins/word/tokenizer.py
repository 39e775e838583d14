"""Word-level tokenizer: a normalizer, a pre-tokenizer and a vocabulary of the words seen."""

from __future__ import annotations

from collections import Counter
from typing import Any, ClassVar, Iterable, Sequence

import numpy as np

from tokembed.encoding import Encoding
from tokembed.errors import CorpusError, ParameterError, TokembedError
from tokembed.text import build_normalizer, build_pre_tokenizer, split_text
from tokembed.vocab import VocabTokenizer

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
        """The normalizer and pre-tokenizer; a bad spec raises TokembedError naming the parameter."""
        stages = []
        for name, build, spec in (("normalizer", build_normalizer, self.normalizer),
                                  ("pre_tokenizer", build_pre_tokenizer, self.pre_tokenizer)):
            try:
                stages.append(build(spec))
            except TokembedError as exc:
                raise ParameterError("word", name, f": {exc}") from None
        return tuple(stages)

    def _validate(self) -> None:
        self._validate_vocab_params()
        self._stages()

    def fit(self, corpus: Iterable[str]) -> "WordTokenizer":
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

        self._validate()
        normalizer, pre_tokenizer = self._stages()
        return fast_count_words(corpus, pre_tokenizer, normalizer)

    def fit_counts(self, counts: Any) -> "WordTokenizer":
        """Build the vocabulary from the merged :meth:`partial_counts` of the corpus (see :meth:`fit`)."""
        self._validate()
        counts = counts.to_dict()
        if not counts:
            raise CorpusError("word: the corpus holds no word (empty, or only whitespace)")
        words = self._select(counts, key=lambda w: (-counts[w], w))
        self._set_vocab(self._specials(), words, [counts[w] for w in words])
        return self

    def _set_vocab(self, specials: list[str], words: list[str], counts: list[int]) -> None:
        self._set_table(specials, words)
        self.word_counts_ = dict(zip(words, counts))
        self._normalizer, self._pre_tokenizer = self._stages()

    # -- encoding ---------------------------------------------------------------------------------------------
    def _encode_text(self, text: str) -> Encoding:
        pieces = split_text(text, self._normalizer, self._pre_tokenizer)
        vocab = self.vocab_
        arr = np.fromiter((vocab.get(p, -1) for p, _ in pieces), dtype=np.int32, count=len(pieces))
        # special tokens hold ids 0 .. n-1; a word that spells one is plain text, not that special token
        unknown = arr < len(self.special_tokens_)
        if self._unk_id < 0 and unknown.any():
            k = int(np.flatnonzero(unknown)[0])
            word, span = pieces[k]
            what = ("spells a special token (plain text unless allowed_special lists it)" if arr[k] >= 0
                    else "is not in the vocabulary")
            raise TokembedError(f"word: {word!r} at {span} {what} and there is no unk_token")
        arr[unknown] = self._unk_id
        offsets = np.asarray([span for _, span in pieces], dtype=np.int64).reshape(-1, 2)
        return Encoding(arr, self._itos[arr].tolist(), offsets)

    def encode_ids(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Ids only, for many texts at once: the Numba scanner gives each piece the id of its distinct word
        (:func:`tokembed.text.fast.index_words`), and each distinct word is looked up once; no Python string or
        :class:`Encoding` is made per token. Equal to the ids of ``encode_batch(texts)``.

        Raises
        ------
        TokembedError
            If a word is not in the vocabulary (or spells a special token) and there is no ``unk_token``.
        """
        from tokembed.text.fast import index_words

        self._check_is_fitted()
        texts = list(texts)
        if not texts:
            return np.zeros(0, np.int32), np.zeros(0, np.int64)
        ids, offsets, words = index_words(texts, self._pre_tokenizer, self._normalizer)
        n_special = len(self.special_tokens_)
        vocab = self.vocab_
        table = np.fromiter((vocab.get(w, -1) for w in words.words()), dtype=np.int64, count=len(words))
        unknown = table < n_special  # a word that spells a special token is plain text, as in encode
        if unknown.any():
            if self._unk_id < 0:
                bad = words.words()[int(np.flatnonzero(unknown)[0])]
                what = "spells a special token (plain text unless allowed_special lists it)" if vocab.get(bad, -1) \
                    >= 0 else "is not in the vocabulary"
                raise TokembedError(f"word: {bad!r} {what} and there is no unk_token")
            table[unknown] = self._unk_id
        return table[ids].astype(np.int32), np.diff(offsets)

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
