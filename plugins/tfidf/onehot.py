"""One-hot token vectors (``onehot``): each token is a row with a single 1 at its vocabulary column."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np

from tokembed.errors import ArtifactError

from ._base import ANY_DTYPE, SHARED_CONSTRAINTS, TermVectorizer

__all__ = ["OneHotVectorizer", "save_onehot", "load_onehot"]


class OneHotVectorizer(TermVectorizer):
    """One-hot encoding of tokens: the first representation the others improve on.

    ``transform(X)`` has one row per token of ``X`` (documents one after the other, tokens in order), with a
    single 1 at the token's column; a token outside the vocabulary (a stop word, a token filtered out by
    ``min_df`` / ``max_df`` / ``max_features``, or one unseen in ``fit``) is a zero row, so row ``i`` is always
    token ``i``. Document ``d`` is rows ``offsets[d]:offsets[d + 1]``; ``transform(X, return_offsets=True)``
    returns the offsets too, and :func:`save_onehot` / :func:`load_onehot` keep both in one ``.npz`` file (the
    layout of ``scipy.sparse.save_npz``, which ``scipy.sparse.load_npz`` also reads, plus an ``offsets`` array).
    The vocabulary is chosen as ``bow``'s for unigrams (code-point order, same filters), so the sum of a
    document's one-hot rows is its ``bow`` row.

    Parameters
    ----------
    lowercase, pre_tokenizer, stop_words, min_df, max_df, max_features, vocabulary
        As for ``bow`` (:class:`tokembed.plugins.tfidf.vectorizer.BagOfWords`).
    dtype : str, default "float64"
        dtype of the matrix (float or integer; the values are 0 and 1).

    Attributes
    ----------
    vocabulary_ : dict of str -> int
    n_docs_ : int

    ``output_rows`` is ``"tokens"``. Source: the one-hot (1-of-V) word representation, e.g. Jurafsky & Martin,
    *Speech and Language Processing* (3rd ed. draft), chapter 6.
    """

    name: ClassVar[str] = "onehot"
    output_rows: ClassVar[Literal["documents", "tokens", "vocabulary"]] = "tokens"
    _ngrams: ClassVar[bool] = False
    param_constraints: ClassVar[dict[str, Any]] = {
        **{k: v for k, v in SHARED_CONSTRAINTS.items() if k != "ngram_range"}, "dtype": ANY_DTYPE}

    def __init__(
        self,
        lowercase: bool = True,
        pre_tokenizer: str | dict = "word_punct",
        stop_words: list[str] | str | None = None,
        min_df: int | float = 1,
        max_df: int | float = 1.0,
        max_features: int | None = None,
        vocabulary: list[str] | str | None = None,
        dtype: Literal["float64", "float32", "int64", "int32", "int16", "int8", "uint64", "uint32", "uint16",
                       "uint8"] = "float64",
    ):
        self.lowercase = lowercase
        self.pre_tokenizer = pre_tokenizer
        self.stop_words = stop_words
        self.min_df = min_df
        self.max_df = max_df
        self.max_features = max_features
        self.vocabulary = vocabulary
        self.dtype = dtype

    def fit_transform(self, X: Any, y: Any = None, return_offsets: bool = False) -> Any:
        """``fit(X).transform(X, return_offsets)``, with raw documents split once."""
        from . import _analysis

        self._validate_params()
        seqs, raw = _analysis.to_sequences(self.name, X, self._pre_tokenizer(), self.lowercase)
        self._fit_sequences(seqs, raw)
        return self.transform(seqs, return_offsets=return_offsets)

    def transform(self, X: Any, return_offsets: bool = False) -> Any:
        """One-hot rows of the tokens of ``X``.

        Parameters
        ----------
        X : TokenSequences, iterable of token lists, or iterable of str
            As for :meth:`fit`.
        return_offsets : bool, default False
            Also return the row offsets of the documents.

        Returns
        -------
        matrix : scipy.sparse.csr_matrix of shape (n_tokens, n_features), dtype ``dtype``
            Row ``i`` holds a 1 at the column of token ``i`` (a zero row outside the vocabulary).
        offsets : ndarray of int64, shape (n_docs + 1,)
            Only with ``return_offsets``: document ``d`` is ``matrix[offsets[d]:offsets[d + 1]]``.

        Raises
        ------
        NotFittedError
            Before ``fit``.
        TokembedError
            If ``X`` is not documents.
        """
        import scipy.sparse as sp

        from . import _analysis

        self._check_is_fitted()
        seqs, _ = _analysis.to_sequences(self.name, X, self._pre_tokenizer(), self.lowercase)
        vocab = self.vocabulary_
        stop = set(self._stop_list)
        lookup = np.fromiter((-1 if t in stop else vocab.get(t, -1) for t in seqs.vocab), dtype=np.int32,
                             count=len(seqs.vocab))
        n = seqs.n_tokens
        indptr = np.zeros(n + 1, dtype=np.int64)
        hits, lo = [], 0
        # a mapped corpus range by range: its ids are never converted whole (the matrix has a row per token)
        for part in seqs.in_memory_chunks() if seqs.is_mapped else (seqs,):
            hi = lo + part.n_tokens
            cols = lookup[part.ids] if part.n_tokens else np.zeros(0, np.int32)
            hit = cols >= 0
            np.cumsum(hit, out=indptr[lo + 1:hi + 1])
            if lo:
                indptr[lo + 1:hi + 1] += indptr[lo]
            hits.append(cols[hit])
            lo = hi
        indices = np.concatenate(hits) if len(hits) > 1 else (hits[0] if hits else np.zeros(0, np.int32))
        data = np.ones(int(indptr[-1]), dtype=np.dtype(self.dtype))
        matrix = sp.csr_matrix((data, indices, indptr), shape=(n, len(vocab)))
        matrix.has_sorted_indices = True
        return (matrix, np.array(seqs.offsets, dtype=np.int64)) if return_offsets else matrix


def save_onehot(path: str | os.PathLike, matrix: Any, offsets: np.ndarray) -> Path:
    """Save a one-hot matrix and its document offsets in one ``.npz`` file.

    The file holds ``scipy.sparse.save_npz``'s arrays (``format``, ``shape``, ``data``, ``indices``, ``indptr``),
    so ``scipy.sparse.load_npz`` reads the matrix, plus ``offsets`` (int64, shape (n_docs + 1,)).

    Raises
    ------
    ValueError
        If the offsets do not run from 0 to the number of rows.
    """
    import scipy.sparse as sp

    csr = sp.csr_matrix(matrix)
    offsets = np.asarray(offsets, dtype=np.int64)
    if offsets.ndim != 1 or offsets.size == 0 or offsets[0] != 0 or offsets[-1] != csr.shape[0] \
            or (np.diff(offsets) < 0).any():
        raise ValueError(f"offsets must run from 0 to the number of rows ({csr.shape[0]}) without decreasing")
    path = Path(path)
    np.savez(path, format=np.array(b"csr"), shape=np.array(csr.shape), data=csr.data, indices=csr.indices,
             indptr=csr.indptr, offsets=offsets)
    return path if path.suffix == ".npz" else path.with_name(path.name + ".npz")


def load_onehot(path: str | os.PathLike) -> tuple[Any, np.ndarray]:
    """Read what :func:`save_onehot` wrote: ``(matrix, offsets)``.

    Raises
    ------
    ArtifactError
        If the file is missing, not an ``.npz`` or holds no ``offsets``.
    """
    import scipy.sparse as sp

    try:
        with np.load(path, allow_pickle=False) as f:
            offsets = f["offsets"]
        matrix = sp.load_npz(path).tocsr()
    except (OSError, KeyError, ValueError) as exc:
        raise ArtifactError(f"{path}: not a one-hot matrix file ({exc})") from None
    return matrix, offsets
