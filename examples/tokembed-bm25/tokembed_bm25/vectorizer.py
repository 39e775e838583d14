"""The ``bm25`` vectorizer: Okapi BM25 weights of each document's terms, one sparse row per document.

Source: S. Robertson and H. Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond", Foundations and
Trends in Information Retrieval 3(4), 2009, eq. 3.15 (term weight) with the non-negative idf of Lucene's
``BM25Similarity``, ``ln(1 + (N - df + 0.5) / (df + 0.5))``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from tokembed import CorpusError, Vectorizer
from tokembed.params import Interval
from tokembed.sequences import TokenSequences, as_token_sequences

__all__ = ["BM25Vectorizer"]


class BM25Vectorizer(Vectorizer):
    """BM25 weight of term ``t`` in document ``d``::

        idf(t) * tf(t, d) * (k1 + 1) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))

    with ``idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))``, ``N`` the documents fitted on, ``df(t)`` those
    holding ``t``, ``|d|`` the document's terms and ``avgdl`` their mean over the fitted documents.

    ``X`` is a tokenizer's :class:`~tokembed.sequences.TokenSequences` (what a recipe passes) or documents as token
    lists. The features are the token strings seen in ``fit``, sorted; special tokens (``X.special_ids``: a
    tokenizer's ``<unk>``, ``<pad>``) are not terms. A token ``transform`` meets that ``fit`` did not see counts in
    ``|d|`` but has no column.

    Parameters
    ----------
    k1 : float >= 0, default 1.2
        Term-frequency saturation (0: a term counts once however often it occurs).
    b : float in [0, 1], default 0.75
        Length normalisation (0: none; 1: full).

    Attributes
    ----------
    vocabulary_ : list of str
        The feature names, sorted.
    idf_ : ndarray of float64, shape (n_features,)
    avgdl_ : float
        Mean document length (terms) over the fitted documents.
    """

    name: ClassVar[str] = "bm25"
    #: no pre-tokenizer of its own: a pipeline of a recipe gives it an input: tokenizer (tokembed validate says so)
    reads_text: ClassVar[bool] = False
    param_constraints: ClassVar[dict[str, Any]] = {
        "k1": Interval(float, 0, None),
        "b": Interval(float, 0, 1),
    }

    def __init__(self, k1: float = 1.2, b: float = 0.75):
        self.k1 = k1
        self.b = b

    def _counts(self, X: Any, index: dict[str, int]) -> tuple[sp.csr_matrix, np.ndarray]:
        """Term counts (documents x features, float64) of the tokens ``index`` knows, and every document's number
        of terms (special tokens left out)."""
        seqs: TokenSequences = as_token_sequences(X, self.name)
        column = np.array([index.get(t, -1) for t in seqs.vocab], dtype=np.int64)  # id -> column, by its string
        column[list(seqs.special_ids)] = -2
        cols = column[seqs.ids] if seqs.n_tokens else np.zeros(0, np.int64)
        rows = np.repeat(np.arange(len(seqs)), seqs.lengths())
        lengths = np.bincount(rows[cols > -2], minlength=len(seqs)).astype(np.float64)
        keep = cols >= 0
        counts = sp.csr_matrix((np.ones(int(keep.sum())), (rows[keep], cols[keep])),
                               shape=(len(seqs), len(index)))
        counts.sum_duplicates()
        return counts, lengths

    def fit(self, X: Any, y: Any = None) -> "BM25Vectorizer":
        """Learn the vocabulary, the idf of each term and the mean document length.

        Raises
        ------
        ParameterError
            If ``k1`` or ``b`` breaks its declaration.
        CorpusError
            If the documents hold no term.
        TokembedError
            If ``X`` is not token sequences (one str, raw text, a matrix).
        """
        self._validate_params()
        seqs = as_token_sequences(X, self.name)
        occurring = np.flatnonzero(seqs.counts())
        terms = sorted({seqs.vocab[i] for i in occurring.tolist() if i not in seqs.special_ids})
        if not terms:
            raise CorpusError(f"{self.name}: the documents hold no term to weigh")
        index = {t: i for i, t in enumerate(terms)}
        counts, lengths = self._counts(seqs, index)
        df = np.bincount(counts.indices, minlength=len(terms)).astype(np.float64)
        n = float(len(seqs))
        self.vocabulary_ = terms
        self.idf_ = np.log1p((n - df + 0.5) / (df + 0.5))
        self.avgdl_ = float(lengths.mean())
        self._index = index
        return self

    def transform(self, X: Any) -> sp.csr_matrix:
        """BM25 weights, a CSR float64 matrix of shape (n_documents, n_features)."""
        self._check_is_fitted()
        counts, lengths = self._counts(X, self._index)
        tf = counts.data
        row_of = np.repeat(np.arange(counts.shape[0]), np.diff(counts.indptr))
        norm = 1.0 - self.b + self.b * lengths[row_of] / self.avgdl_
        counts.data = self.idf_[counts.indices] * tf * (self.k1 + 1.0) / (tf + self.k1 * norm)
        return counts

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """The terms, an object ndarray of str of shape (n_features,)."""
        self._check_is_fitted()
        return np.array(self.vocabulary_, dtype=object)

    def _get_state(self) -> dict[str, Any]:
        return {"vocabulary": list(self.vocabulary_), "idf": self.idf_, "avgdl": self.avgdl_}

    def _set_state(self, state: dict[str, Any]) -> None:
        terms, idf = list(state["vocabulary"]), np.asarray(state["idf"], dtype=np.float64)
        if len(terms) != idf.shape[0] or len(set(terms)) != len(terms):
            raise ValueError(f"{len(terms)} terms (unique?) for {idf.shape[0]} idf values")
        self.vocabulary_, self.idf_, self.avgdl_ = terms, idf, float(state["avgdl"])
        self._index = {t: i for i, t in enumerate(terms)}
