"""Bag of words (``bow``) and TF-IDF (``tfidf``): scikit-learn's ``CountVectorizer`` / ``TfidfVectorizer`` over any
tokenizer's ids."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import numpy as np

from tokembed.params import Boolean, Options

from ._base import ANY_DTYPE, FLOAT_DTYPE, SHARED_CONSTRAINTS, TermVectorizer

__all__ = ["BagOfWords", "TfidfVectorizer"]

_SHARED_PARAMS = """\
    lowercase : bool, default True
        Lowercase raw documents with ``str.lower`` before splitting them (scikit-learn's preprocessor). Token
        sequences and token lists are taken as they are: lowercase those in the tokenizer (its ``lowercase``
        normalizer).
    pre_tokenizer : str or dict, default "word_punct"
        How raw documents are split into tokens: any :mod:`tokembed.text` pre-tokenizer spec. ``"word_punct"``
        (``\\\\w+|[^\\\\w\\\\s]+``) keeps one-character words and punctuation; ``"sklearn"`` is scikit-learn's
        default ``token_pattern`` ``(?u)\\\\b\\\\w\\\\w+\\\\b`` (with ``lowercase`` it gives scikit-learn's tokens
        exactly). Both run on the Numba scanner; a ``{"type": "regex", ...}`` spec runs in Python.
    stop_words : list of str, str or None, default None
        Tokens removed before the n-grams are formed (as scikit-learn does), or a UTF-8 file with one per line. They
        are compared with the tokens after lowercasing.
    ngram_range : (int, int), default (1, 1)
        Terms are the token n-grams for ``min_n <= n <= max_n``; an n-gram's name is its tokens joined by a space.
    min_df : int or float, default 1
        Keep terms in at least this many documents (int), or this share of them (float in [0, 1]). Document
        frequency counts documents, never occurrences.
    max_df : int or float, default 1.0
        Keep terms in at most this many documents (int), or this share of them (float in [0, 1]).
    max_features : int or None, default None
        Keep the ``max_features`` terms of largest frequency over the corpus (after ``min_df`` / ``max_df``; with
        ``binary``, of largest document frequency, as scikit-learn); ties go to the term first in code-point order.
    vocabulary : list of str, dict or str, optional
        A fixed vocabulary: the terms in column order, a mapping term -> column (columns ``0 .. n-1``; Python
        only), or a file with one term per line. ``min_df``, ``max_df`` and ``max_features`` are then ignored.
"""


class BagOfWords(TermVectorizer):
    """Term counts per document (bag of words), scikit-learn's ``CountVectorizer`` over token sequences.

    ``transform(X)[d, t]`` is the number of occurrences of term ``t`` in document ``d`` (1 for any occurrence with
    ``binary``). Terms are token n-grams; the vocabulary is every term of the fitted documents that passes
    ``min_df``, ``max_df`` and ``max_features``, sorted by code point (``vocabulary_`` maps term -> column).

    Parameters
    ----------
{shared}    binary : bool, default False
        Count 1 for a term present in a document, whatever its number of occurrences.
    dtype : str, default "float64"
        dtype of the matrix: ``float64``, ``float32`` or an integer dtype (``int64`` is scikit-learn's default;
        ours is float64 so that every vectorizer returns floats). Counts never wrap: a count that an integer dtype
        cannot hold raises :class:`TokembedError` naming the term, its count and the dtype.

    Attributes
    ----------
    vocabulary_ : dict of str -> int
        Term -> column.
    n_docs_ : int
        Documents seen by ``fit`` (or all ``partial_fit`` calls).

    Input, output and errors: see :meth:`fit` and :meth:`transform`. Source: scikit-learn
    ``sklearn.feature_extraction.text.CountVectorizer``; Salton & McGill, *Introduction to Modern Information
    Retrieval* (1983).
    """

    name: ClassVar[str] = "bow"
    param_constraints: ClassVar[dict[str, Any]] = {
        **SHARED_CONSTRAINTS, "binary": Boolean(), "dtype": ANY_DTYPE}

    def __init__(
        self,
        lowercase: bool = True,
        pre_tokenizer: str | dict = "word_punct",
        stop_words: list[str] | str | None = None,
        ngram_range: tuple[int, int] = (1, 1),
        min_df: int | float = 1,
        max_df: int | float = 1.0,
        max_features: int | None = None,
        vocabulary: list[str] | str | None = None,
        binary: bool = False,
        dtype: Literal["float64", "float32", "int64", "int32", "int16", "int8", "uint64", "uint32", "uint16",
                       "uint8"] = "float64",
    ):
        self.lowercase = lowercase
        self.pre_tokenizer = pre_tokenizer
        self.stop_words = stop_words
        self.ngram_range = ngram_range
        self.min_df = min_df
        self.max_df = max_df
        self.max_features = max_features
        self.vocabulary = vocabulary
        self.binary = binary
        self.dtype = dtype

    def transform(self, X: Any) -> Any:
        """Count the vocabulary's terms in each document of ``X`` (terms outside the vocabulary are ignored).

        Parameters
        ----------
        X : TokenSequences, iterable of token lists, or iterable of str
            As for :meth:`fit`.

        Returns
        -------
        scipy.sparse.csr_matrix of shape (n_docs, n_features), dtype ``dtype``
            Sorted column indices, no explicit zero; an empty document is an empty row.

        Raises
        ------
        NotFittedError
            Before ``fit``.
        TokembedError
            If ``X`` is not documents, or a count does not fit an integer ``dtype``.
        """
        self._check_is_fitted()
        return self._weigh(self._counts_matrix(X)[0])

    def _weigh(self, matrix: Any) -> Any:
        if self.binary:
            matrix.data[:] = 1
        return self._cast(matrix, self.dtype)


class TfidfVectorizer(BagOfWords):
    """TF-IDF document vectors, scikit-learn's ``TfidfVectorizer`` over token sequences.

    For term ``t`` in document ``d``, with ``tf`` its count there (1 with ``binary``), ``n`` the number of fitted
    documents and ``df(t)`` the number of them that contain ``t``:

    - ``tf`` becomes ``1 + ln(tf)`` with ``sublinear_tf``;
    - ``idf(t) = ln((1 + n) / (1 + df(t))) + 1`` with ``smooth_idf`` (as if one more document held every term), else
      ``ln(n / df(t)) + 1``; the ``+ 1`` keeps a term of every document. A fixed vocabulary's term that no fitted
      document holds (df = 0) gets ``ln(n) + 1`` unsmoothed, where scikit-learn gives infinity: ``idf_`` is never
      NaN or infinite. Without ``use_idf``, ``idf = 1``;
    - ``x[d, t] = tf * idf(t)``, and each row is divided by its l2 norm (``norm="l2"``), its l1 norm (``"l1"``) or
      left as is (``None``). A zero row (an empty document, or one with no term of the vocabulary) stays zero.

    Values are computed in float64 and stored as ``dtype``.

    Parameters
    ----------
{shared}    binary : bool, default False
        ``tf`` is 1 for a present term.
    dtype : {"float64", "float32"}, default "float64"
    norm : {"l2", "l1"} or None, default "l2"
    use_idf : bool, default True
    smooth_idf : bool, default True
    sublinear_tf : bool, default False

    Attributes
    ----------
    vocabulary_ : dict of str -> int
    idf_ : ndarray of float64, shape (n_features,)
        The idf of each column (all ones without ``use_idf``; scikit-learn has no ``idf_`` then).
    n_docs_ : int

    Source: scikit-learn ``sklearn.feature_extraction.text.TfidfVectorizer`` / ``TfidfTransformer``; Sparck Jones,
    A statistical interpretation of term specificity and its application in retrieval (1972); Salton & Buckley,
    Term-weighting approaches in automatic text retrieval (1988).
    """

    name: ClassVar[str] = "tfidf"
    param_constraints: ClassVar[dict[str, Any]] = {
        **SHARED_CONSTRAINTS, "binary": Boolean(), "dtype": FLOAT_DTYPE, "norm": [Options("l2", "l1"), None],
        "use_idf": Boolean(), "smooth_idf": Boolean(), "sublinear_tf": Boolean()}

    def __init__(
        self,
        lowercase: bool = True,
        pre_tokenizer: str | dict = "word_punct",
        stop_words: list[str] | str | None = None,
        ngram_range: tuple[int, int] = (1, 1),
        min_df: int | float = 1,
        max_df: int | float = 1.0,
        max_features: int | None = None,
        vocabulary: list[str] | str | None = None,
        binary: bool = False,
        dtype: Literal["float64", "float32"] = "float64",
        norm: Literal["l2", "l1"] | None = "l2",
        use_idf: bool = True,
        smooth_idf: bool = True,
        sublinear_tf: bool = False,
    ):
        self.lowercase = lowercase
        self.pre_tokenizer = pre_tokenizer
        self.stop_words = stop_words
        self.ngram_range = ngram_range
        self.min_df = min_df
        self.max_df = max_df
        self.max_features = max_features
        self.vocabulary = vocabulary
        self.binary = binary
        self.dtype = dtype
        self.norm = norm
        self.use_idf = use_idf
        self.smooth_idf = smooth_idf
        self.sublinear_tf = sublinear_tf

    def _set_weights(self, df: np.ndarray, n_docs: int) -> None:
        if not self.use_idf:
            self.idf_ = np.ones(df.shape[0], dtype=np.float64)
        elif self.smooth_idf:
            self.idf_ = np.log((n_docs + 1) / (df.astype(np.float64) + 1)) + 1.0
        else:
            self.idf_ = np.log(max(n_docs, 1) / np.maximum(df, 1).astype(np.float64)) + 1.0

    def _weights_state(self) -> dict[str, Any]:
        return {"idf": self.idf_}

    def _set_weights_state(self, state: dict[str, Any]) -> None:
        idf = np.asarray(state["idf"], dtype=np.float64)
        if idf.shape != (len(self.vocabulary_),):
            raise ValueError(f"idf has shape {idf.shape}, expected ({len(self.vocabulary_)},)")
        self.idf_ = idf

    def transform(self, X: Any) -> Any:
        """TF-IDF vectors of the documents of ``X``.

        Parameters
        ----------
        X : TokenSequences, iterable of token lists, or iterable of str
            As for :meth:`fit`.

        Returns
        -------
        scipy.sparse.csr_matrix of shape (n_docs, n_features), dtype ``dtype``
            Sorted column indices, no explicit zero, never NaN; a document without a vocabulary term is a zero row.

        Raises
        ------
        NotFittedError
            Before ``fit``.
        TokembedError
            If ``X`` is not documents.
        """
        self._check_is_fitted()
        return self._weigh(self._counts_matrix(X)[0])

    def _weigh(self, matrix: Any) -> Any:
        from . import _kernels

        data = np.ones(matrix.nnz, np.float64) if self.binary else matrix.data.astype(np.float64)
        if self.sublinear_tf:
            np.log(data, out=data)
            data += 1.0
        data *= self.idf_[matrix.indices]
        if self.norm is not None:
            _kernels.normalize_rows(matrix.indptr.astype(np.int64, copy=False), data, self.norm == "l1")
        matrix.data = data.astype(np.dtype(self.dtype), copy=False)
        return matrix


BagOfWords.__doc__ = BagOfWords.__doc__.replace("{shared}", _SHARED_PARAMS)
TfidfVectorizer.__doc__ = TfidfVectorizer.__doc__.replace("{shared}", _SHARED_PARAMS)
