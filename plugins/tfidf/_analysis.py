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


def term_occurrences(seqs: TokenSequences, ngram_range: tuple[int, int]
                     ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The terms (token n-grams) of every document.

    Returns
    -------
    terms : ndarray of int32, shape (n_occurrences,)
        A local term id per occurrence, documents one after the other.
    offsets : ndarray of int64, shape (n_docs + 1,)
    names : list of str
        ``names[t]`` is local term ``t``: the token itself, or the n-gram's tokens joined by one space (scikit-learn's
        feature names). Two terms may share a name (a token holding a space); callers merge them by name.
    """
    min_n, max_n = ngram_range
    if min_n == max_n == 1:
        return seqs.ids, seqs.offsets, list(seqs.vocab)
    from . import _kernels  # numba is imported on first use, not when the registry is built
    terms, offsets, key_tokens, key_offsets = _kernels.ngram_features(seqs.ids, seqs.offsets, int(min_n),
                                                                      int(max_n))
    vocab = seqs.vocab
    toks = [vocab[i] for i in key_tokens.tolist()]
    bounds = key_offsets.tolist()
    names = [" ".join(toks[a:b]) if b - a > 1 else toks[a] for a, b in zip(bounds[:-1], bounds[1:])]
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
