"""From what a term vectorizer is given to term occurrences: input forms, stop words, n-grams, word lists on disk.

Every input form ends as :class:`~tokembed.sequences.TokenSequences` (ids per document plus the strings that name
the ids), and every later step works on the ids:

- ``TokenSequences`` (a recipe tokenizer's output) is used as it is; a memory-mapped one
  (:meth:`~tokembed.sequences.TokenSequences.open`) is read by bounded document ranges, each converted to ``int32``
  apart (:meth:`~tokembed.sequences.TokenSequences.in_memory_chunks`);
- an iterable of token lists is packed by :func:`~tokembed.sequences.as_token_sequences`;
- an iterable of raw documents (``str``) is lowercased with ``str.lower`` (as scikit-learn's preprocessor) when
  asked, then split by the vectorizer's pre-tokenizer with :func:`tokembed.text.fast.index_words` (the Numba
  scanner: no Python string per token).
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from tokembed.errors import ParameterError, TokembedError
from tokembed.sequences import TokenSequences, as_token_sequences


def to_sequences(name: str, X: Any, pre_tokenizer: Any, lowercase: bool) -> tuple[TokenSequences, bool]:
    """``X`` as token sequences, and whether it was raw text. A memory-mapped ``TokenSequences`` is returned as it
    is (callers read it chunk by chunk, never whole).

    Raises
    ------
    TokembedError
        If ``X`` is one ``str`` (a list of documents is expected), a matrix, or mixes raw documents and token lists.
    """
    if isinstance(X, TokenSequences):
        return X, False
    if X is None:
        raise TokembedError(f"{name}: expected documents (token sequences, token lists or raw text), got None")
    if isinstance(X, (str, bytes)):
        raise TokembedError(f"{name}: expected an iterable of documents, got one {type(X).__name__}; wrap it in a "
                            "list")
    if hasattr(X, "tocsr") or (isinstance(X, np.ndarray) and X.ndim == 2 and X.dtype.kind in "biuf"):
        raise TokembedError(f"{name}: expected documents (token sequences, token lists or raw text), got a "
                            "matrix")
    if isinstance(X, tuple) and len(X) == 2 and isinstance(X[0], TokenSequences):
        raise TokembedError(f"{name}: expected documents, got a pair")
    it = iter(X)
    first = next(it, None)
    if first is None:
        return TokenSequences(np.zeros(0, np.int32), np.zeros(1, np.int64), ()), False
    docs = itertools.chain([first], it)
    if isinstance(first, str):
        return _raw_documents(name, docs, pre_tokenizer, lowercase), True
    return as_token_sequences(_token_lists(name, docs), what=name), False


def _token_lists(name: str, docs: Iterable[Any]) -> Iterable[Any]:
    for i, doc in enumerate(docs):
        if isinstance(doc, str):
            raise TokembedError(f"{name}: document {i} is a str but document 0 is a token list; give every "
                                "document in the same form")
        yield doc


def _raw_documents(name: str, docs: Iterable[Any], pre_tokenizer: Any, lowercase: bool) -> TokenSequences:
    from tokembed.text import fast

    docs = list(docs)  # the ids of every document are held anyway; a list takes index_words' fast path
    if not all(map(str.__instancecheck__, docs)):
        i, doc = next((i, d) for i, d in enumerate(docs) if not isinstance(d, str))
        raise TokembedError(f"{name}: document {i} is a {type(doc).__name__} but document 0 is a str; give every "
                            "document in the same form")
    if lowercase:
        docs = list(map(str.lower, docs))  # per document, as scikit-learn (str.lower's final-sigma rule is contextual)
    ids, offsets, words = fast.index_words(docs, pre_tokenizer)
    return TokenSequences(ids, offsets, words.words())


def drop_tokens(seqs: TokenSequences, drop: np.ndarray) -> TokenSequences:
    """``seqs`` without the tokens whose id is marked in ``drop`` (bool, shape (vocab_size,))."""
    if not drop.any():
        return seqs
    keep = ~drop[seqs.ids]
    kept = np.zeros(seqs.ids.shape[0] + 1, dtype=np.int64)
    np.cumsum(keep, out=kept[1:])
    return TokenSequences(seqs.ids[keep], kept[seqs.offsets], seqs.vocab)


class TermNumbering:
    """The terms (token n-grams) of successive parts of one corpus, numbered once across the parts, each number
    mapped to an int32 value (a row of the counts, a column of the vocabulary) by ``value_of``, which is asked
    only about the terms a part adds: a memory-mapped corpus read part by part names each term once, as one pass
    over the whole does.

    Parameters
    ----------
    vocab : tuple of str
        The parts' vocabulary (one corpus: every part has it).
    ngram_range : (min_n, max_n)
    value_of : callable, list of str -> int32 ndarray of the same length
        The value of new terms given by name: the token itself, or the n-gram's tokens joined by one space
        (scikit-learn's feature names). Two terms may share a name (a token holding a space).
    values : int32 ndarray, optional
        The values of every id already known (unigrams only: ``value_of(list(vocab))`` of an earlier numbering).
    """

    def __init__(self, vocab: tuple, ngram_range: tuple[int, int], value_of: Any, values: np.ndarray | None = None):
        self.vocab, self.ngram_range, self.value_of = vocab, (int(ngram_range[0]), int(ngram_range[1])), value_of
        self.values = np.zeros(0, np.int32) if values is None else values
        self.n_terms = self.values.shape[0]
        self._table: list[Any] | None = None

    def map(self, seqs: TokenSequences) -> tuple[np.ndarray, np.ndarray]:
        """The value of every term occurrence of ``seqs`` (int32, documents one after the other; within a document
        by ``n``, then by position) and the document offsets into them (int64 (n_docs + 1,))."""
        terms, offsets, names = self._occurrences(seqs)
        if names:
            new = np.asarray(self.value_of(names), dtype=np.int32)
            if self.n_terms + new.shape[0] > self.values.shape[0]:  # grown by doubling: parts add few terms
                grown = np.empty(max(2 * self.values.shape[0], self.n_terms + new.shape[0]), np.int32)
                grown[: self.n_terms] = self.values[: self.n_terms]
                self.values = grown
            self.values[self.n_terms: self.n_terms + new.shape[0]] = new
            self.n_terms += new.shape[0]
        return (self.values[terms] if terms.size else terms.astype(np.int32)), offsets

    def _occurrences(self, seqs: TokenSequences) -> tuple[np.ndarray, np.ndarray, list[str]]:
        min_n, max_n = self.ngram_range
        if min_n == max_n == 1:  # the ids are the terms
            return seqs.ids, seqs.offsets, list(self.vocab[self.n_terms:])
        from . import _kernels  # numba is imported on first use, not when the registry is built
        if self._table is None:
            self._table = list(_kernels.new_ngram_table(max_n))
        terms, offsets, *self._table = _kernels.intern_ngrams(seqs.ids, seqs.offsets, min_n, max_n, *self._table)
        key_tokens, key_offsets, n_keys = self._table[0], self._table[1], self._table[4]
        bounds = key_offsets[self.n_terms: n_keys + 1].tolist()
        if len(bounds) < 2:
            return terms, offsets, []
        first = bounds[0]
        vocab = self.vocab
        toks = [vocab[i] for i in key_tokens[first: bounds[-1]].tolist()]
        names = [" ".join(toks[a - first: b - first]) if b - a > 1 else toks[a - first]
                 for a, b in zip(bounds[:-1], bounds[1:])]
        return terms, offsets, names


def read_word_list(name: str, param: str, value: Any) -> list[str]:
    """A list of words from a parameter given as a file path (UTF-8, one word per line, blank lines skipped,
    surrounding whitespace stripped) or as words (a list, tuple or set of str, as its declaration allows; a set is
    sorted).

    Raises
    ------
    ParameterError
        If the file cannot be read as UTF-8 text, or holds a NUL byte (a binary file).
    """
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if isinstance(value, (list, tuple)):
        return list(value)
    path = Path(value)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ParameterError(name, param, f": no file {str(path)!r} (give a list of words, or a file with one "
                                          "word per line)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ParameterError(name, param, f": cannot read {str(path)!r} as UTF-8 text ({exc})") from None
    if "\x00" in text:  # valid UTF-8, never a word list: a binary file
        raise ParameterError(name, param, f": {str(path)!r} holds a NUL byte at character {text.index(chr(0))}: "
                                          "a binary file, not a word list") from None
    return [line.strip() for line in text.splitlines() if line.strip()]
