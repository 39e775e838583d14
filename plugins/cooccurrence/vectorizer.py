"""The word-word co-occurrence matrix as the Stanford GloVe ``cooccur`` tool builds it, with an optional PPMI.

References: Pennington, Socher & Manning, "GloVe: Global vectors for word representation" (EMNLP 2014), section 3
and the reference tools ``vocab_count`` / ``cooccur`` (github.com/stanfordnlp/GloVe); Levy, Goldberg & Dagan,
"Improving distributional similarity with lessons learned from word embeddings" (TACL 2015), sections 2.1 and
3.2 (shifted PPMI, context-distribution smoothing).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Literal

import numpy as np

from tokembed.components import Vectorizer
from tokembed.errors import EmptyVocabularyError, NotFittedError, TokembedError
from tokembed.params import Boolean, Interval, Options
from tokembed.sequences import TokenSequences, as_token_sequences

from .counting import CooccurrenceCounts, PairCounter, TokenCounts, count_cooccurrences, select_vocabulary

__all__ = ["CooccurrenceVectorizer", "ppmi_matrix"]

_NAME = "cooccurrence"
_MAX_COUNT = 2**31 - 1
#: Kept words per row shard of the pair counts merged on a cluster (:meth:`CooccurrenceVectorizer.count_shards`).
SHARD_ROWS = 50_000


def ppmi_matrix(matrix: Any, shift: float = 1.0, cds: float = 0.75, dtype: Any = np.float32):
    """Shifted positive PMI with context-distribution smoothing (Levy, Goldberg & Dagan 2015).

    For a co-occurrence matrix ``X`` (rows: words w, columns: contexts c)::

        PMI(w, c)  = ln( X[w, c] * Z / (X[w, :].sum() * X[:, c].sum() ** cds) ),   Z = sum_c X[:, c].sum() ** cds
        SPPMI(w, c) = max(PMI(w, c) - ln(shift), 0)

    i.e. ``ln(P(w, c) / (P(w) P_cds(c)))`` with the smoothed context distribution ``P_cds(c) = #c ** cds / Z``.
    Computed in float64 from the float64 values and rounded once to ``dtype``. Only the non-zero cells of ``X``
    are evaluated (PMI of an unseen pair is -inf, clipped to 0); cells that clip to 0 are removed, so the result
    holds no explicit zero. A zero matrix gives a zero matrix: never NaN or infinity.

    Parameters
    ----------
    matrix : scipy.sparse matrix of shape (V, V), non-negative
    shift : float > 0
        ``k`` of the shifted PMI (``ln k`` subtracted); 1 for plain PPMI.
    cds : float in (0, 1]
        Exponent of the context counts; 1 for no smoothing.

    Returns
    -------
    scipy.sparse.csr_matrix of ``dtype``, shape (V, V), sorted indices.
    """
    import scipy.sparse as sp

    X = sp.csr_matrix(matrix, dtype=np.float64)
    X.sort_indices()
    row_tot = np.asarray(X.sum(axis=1)).ravel()
    col_tot = np.bincount(X.indices, weights=X.data, minlength=X.shape[1])
    col_smooth = np.power(col_tot, float(cds)) if cds != 1 else col_tot
    z = float(col_smooth.sum())
    if X.nnz == 0 or z <= 0:
        return sp.csr_matrix(X.shape, dtype=dtype)
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    pmi = np.log(X.data) + math.log(z) - np.log(row_tot[rows]) - np.log(col_smooth[X.indices]) - math.log(shift)
    keep = pmi > 0
    counts = np.bincount(rows[keep], minlength=X.shape[0])
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    out = sp.csr_matrix((pmi[keep].astype(dtype), X.indices[keep], indptr), shape=X.shape)
    out.has_sorted_indices = True
    return out


class CooccurrenceVectorizer(Vectorizer):
    """Word-word co-occurrence counts within a window, as GloVe's ``cooccur`` computes them; optionally PPMI.

    The vocabulary is the words counted at least ``min_count`` times, at most ``max_vocab`` of them (the most
    frequent), in count-descending order with ties broken by the word (code-point order), as GloVe's
    ``vocab_count`` writes it. Words outside it, and the special tokens of a tokenizer's output (its pad / unk /
    ... ids), are removed from the documents BEFORE windowing, as GloVe does: the words on either side of a
    removed word become neighbours. Then, for each kept token ``right`` and each of the up to ``window`` kept
    tokens ``left`` before it in the same document, at distance ``d`` (1 = adjacent)::

        X[left, right] += w(d)                       (rows: the left word, columns: the right word)
        X[right, left] += w(d)     when symmetric    (so a word next to itself adds 2 w(d) to X[w, w])

    with ``w(d) = 1 / d`` (``weighting="harmonic"``, GloVe's default) or 1 (``"uniform"``). No pair crosses a
    document boundary. The sums are exact and independent of the chunks and threads (integer sums, see
    :mod:`tokembed.plugins.cooccurrence.counting`); they are rounded once to ``dtype``.

    With ``ppmi=True`` the matrix is then replaced by its shifted positive PMI with context-distribution smoothing
    (:func:`ppmi_matrix`; Levy et al. 2015).

    Parameters
    ----------
    window : int, default 10
        Context words on each side (>= 1).
    symmetric : bool, default True
        Count the right context too (the matrix is then exactly symmetric); False: left context only,
        ``X[left, right]``.
    weighting : {"harmonic", "uniform"}, default "harmonic"
    min_count : int, default 5
        Keep words counted at least this many times (>= 1).
    max_vocab : int or None, default None
        Keep at most this many words (the most frequent; >= 1).
    ppmi : bool, default False
    shift : float, default 1.0
        ``k`` of the shifted PPMI (``ln k`` subtracted; > 0); used with ``ppmi``.
    cds : float, default 0.75
        Context-distribution smoothing exponent in (0, 1]; used with ``ppmi``.
    dtype : {"float32", "float64"}, default "float32"
    workers : int or None, default None
        Threads for counting; None for one per CPU. The result does not depend on it.

    Attributes
    ----------
    matrix_ : scipy.sparse.csr_matrix of shape (V, V), ``dtype``
        The co-occurrence (or PPMI) matrix of the fitted corpus, rows and columns in vocabulary order, sorted
        indices, no explicit zeros.
    index_to_key_ : list of str, length V
    vocabulary_ : dict str -> int
    counts_ : int64 ndarray (V,)
        Corpus counts of the kept words.
    token_ids_ : int64 ndarray (V,)
        The id of each row in the fitted input's vocabulary (``TokenSequences.vocab``; for a list of token lists,
        the ids of :meth:`TokenSequences.from_tokens`, i.e. order of first occurrence).
    n_tokens_ : int
        Tokens of the fitted corpus that were kept (counted in the windows).

    Raises
    ------
    EmptyVocabularyError
        When no word reaches ``min_count`` (the message gives the largest count), or when the kept words form no
        pair at all (every document has fewer than two kept tokens).

    Notes
    -----
    Streaming, in two passes as GloVe's two tools (the vocabulary must be known before windowing):
    :meth:`partial_fit_vocabulary` on every chunk, then :meth:`partial_fit` on every chunk; the result equals
    ``fit`` on the concatenated chunks bit for bit. On the corpus-statistics engine (a Dask cluster) the same two
    passes are :meth:`partial_counts` / :meth:`fit_counts` (``counting_passes() == 2``): a part's mergeable
    :class:`~tokembed.plugins.cooccurrence.counting.TokenCounts`, then, once the merged ones have fixed the
    vocabulary, its :class:`~tokembed.plugins.cooccurrence.counting.CooccurrenceCounts`. A memory-mapped
    :class:`~tokembed.sequences.TokenSequences` (:meth:`~tokembed.sequences.TokenSequences.open`) is counted range by
    range (:class:`~tokembed.plugins.cooccurrence.counting.PairCounter`), never converted whole: the same bits as
    the same documents in memory.

    Differences from GloVe's tools: ``max_vocab`` cuts ties deterministically (``vocab_count`` cuts them in hash
    order); the sums are exact (``cooccur`` adds float64 in corpus order); ``cooccur`` writes its first record
    twice when its overflow file is empty (tiny corpora), which is not reproduced.
    """

    name: ClassVar[str] = _NAME
    output_rows: ClassVar[str] = "vocabulary"
    reads_text: ClassVar[bool] = False  # counts token sequences; it has no pre-tokenizer of its own
    param_constraints: ClassVar[dict[str, Any]] = {
        "window": Interval(int, 1, _MAX_COUNT),  # the kernels count in int32/int64
        "symmetric": Boolean(),
        "weighting": Options("harmonic", "uniform"),
        "min_count": Interval(int, 1, _MAX_COUNT),
        "max_vocab": [Interval(int, 1, _MAX_COUNT), None],
        "ppmi": Boolean(),
        "shift": Interval(float, 0, None, closed="neither"),
        "cds": Interval(float, 0, 1, closed="right"),
        "dtype": Options("float32", "float64"),
        "workers": [Interval(int, 1, 1024), None],
    }

    def __init__(
        self,
        window: int = 10,
        symmetric: bool = True,
        weighting: Literal["harmonic", "uniform"] = "harmonic",
        min_count: int = 5,
        max_vocab: int | None = None,
        ppmi: bool = False,
        shift: float = 1.0,
        cds: float = 0.75,
        dtype: Literal["float32", "float64"] = "float32",
        workers: int | None = None,
    ):
        self.window = window
        self.symmetric = symmetric
        self.weighting = weighting
        self.min_count = min_count
        self.max_vocab = max_vocab
        self.ppmi = ppmi
        self.shift = shift
        self.cds = cds
        self.dtype = dtype
        self.workers = workers

    # -- vocabulary -------------------------------------------------------------------------------------------
    def _set_vocabulary(self, keys: list[str], counts: np.ndarray, token_ids: np.ndarray, n_seen: int,
                        max_count: int, n_special: int = 0) -> None:
        if not keys:
            if n_seen == 0 and n_special:
                why = f"every token of the input is a special token ({n_special} occurrences), and those are dropped"
            elif n_seen == 0:
                why = "the input holds no token"
            else:
                why = (f"min_count={self.min_count} removed all {n_seen} distinct tokens (the largest count is "
                       f"{max_count}); lower min_count or give more text")
            raise EmptyVocabularyError(f"{_NAME}: no word is left in the vocabulary: {why}")
        self.index_to_key_ = list(keys)
        self.vocabulary_ = {k: i for i, k in enumerate(keys)}
        self.counts_ = np.asarray(counts, dtype=np.int64)
        self.token_ids_ = np.asarray(token_ids, dtype=np.int64)

    def _vocabulary_from(self, seqs: TokenSequences) -> None:
        self._vocabulary_from_counts(_token_counts(seqs))

    def _vocabulary_from_counts(self, tc: TokenCounts) -> None:
        counts = np.asarray(tc.counts, dtype=np.int64)
        specials = sorted(tc.special)
        counted = counts.copy()
        counted[specials] = 0
        kept = select_vocabulary(tc.keys, counts, self.min_count, self.max_vocab, drop=specials)
        self._set_vocabulary([tc.keys[i] for i in kept.tolist()], counts[kept], kept,
                             int(np.count_nonzero(counted)), int(counted.max()) if counted.size else 0,
                             int(counts.sum() - counted.sum()))

    def _row_of_id(self, seqs: TokenSequences) -> np.ndarray:
        """Row of each id of ``seqs.vocab`` in the fitted vocabulary, -1 when not kept or special (int32)."""
        cache = getattr(self, "_row_cache", None)
        if cache is not None and cache[0] is seqs.vocab:
            return cache[1]
        index = self.vocabulary_
        rows = np.fromiter((index.get(t, -1) for t in seqs.vocab), dtype=np.int32, count=len(seqs.vocab))
        if seqs.special_ids:
            rows[sorted(seqs.special_ids)] = -1
        self._row_cache = (seqs.vocab, rows)
        return rows

    # -- counting ---------------------------------------------------------------------------------------------
    def counting_passes(self) -> int:
        """2: the vocabulary (token counts), then the pairs over it, as GloVe's ``vocab_count`` and ``cooccur``."""
        return 2

    def partial_counts(self, X: Any) -> TokenCounts | CooccurrenceCounts:
        """The mergeable counts of ``X`` (as for :meth:`fit`) for the current pass of :meth:`fit_counts`.

        Pass 1 (a new or fitted instance): the token counts, :class:`TokenCounts`. Pass 2 (after ``fit_counts``
        of the merged pass-1 counts has fixed the vocabulary): the pair counts over it,
        :class:`CooccurrenceCounts`. ``fit_counts`` of both merged passes learns exactly what ``fit`` learns on
        the whole data. The instance is not changed."""
        self._validate_params()
        if not self.__dict__.get("_awaiting_pairs"):
            return _token_counts(as_token_sequences(X, _NAME, mapped=True), isinstance(X, TokenSequences))
        return self._pair_counts(X)

    def count_shards(self) -> int:
        """Row shards of pass 2's pair counts on a cluster: one per :data:`SHARD_ROWS` kept words (at most 64),
        so that no single merge task holds every pair of a large vocabulary; 1 in pass 1."""
        if not self.__dict__.get("_awaiting_pairs"):
            return 1
        return max(1, min(64, -(-len(self.index_to_key_) // SHARD_ROWS)))

    def fit_counts(self, counts: TokenCounts | CooccurrenceCounts) -> "CooccurrenceVectorizer":
        """Fit from the merged :meth:`partial_counts` of one pass: pass 1's token counts fix the vocabulary (and
        reset anything fitted before), pass 2's pair counts give ``matrix_``. Returns self.

        Raises
        ------
        EmptyVocabularyError
            As :meth:`fit`: no word reaches ``min_count`` (pass 1), or no pair (pass 2).
        NotFittedError
            Pair counts given before the vocabulary.
        TokembedError
            Counts of another kind.
        """
        self._validate_params()
        if isinstance(counts, TokenCounts):
            self._reset()
            self._vocabulary_from_counts(counts)
            self._awaiting_pairs = True
            return self
        if isinstance(counts, CooccurrenceCounts):
            if not self.__dict__.get("_awaiting_pairs"):
                raise NotFittedError(f"{_NAME}: fit_counts got pair counts before the vocabulary: fit the merged "
                                     "token counts of pass 1 first (partial_counts on a new vectorizer)")
            if counts.n_rows != len(self.index_to_key_):
                raise TokembedError(f"{_NAME}: pair counts over {counts.n_rows} words do not fit this vocabulary of "
                                    f"{len(self.index_to_key_)}")
            del self._awaiting_pairs
            self._finish(counts, "the corpus")
            return self
        raise TokembedError(f"{_NAME}: fit_counts takes the merged partial_counts (TokenCounts, then "
                            f"CooccurrenceCounts), got {type(counts).__name__}")

    def _pair_counts(self, X: Any) -> CooccurrenceCounts:
        """The mergeable pair counts of ``X`` over the fitted vocabulary (``X`` as for :meth:`fit`)."""
        self._check_vocabulary()
        seqs = as_token_sequences(X, _NAME, mapped=True)
        counter = PairCounter(self._row_of_id(seqs), len(self.index_to_key_), window=self.window,
                              symmetric=bool(self.symmetric), weighting=self.weighting, workers=self.workers)
        for part in seqs.in_memory_chunks() if seqs.is_mapped else (seqs,):  # a mapped corpus: one range at a time
            counter.add(part.ids, part.offsets)
        return counter.result()

    def _matrix(self, counts: CooccurrenceCounts):
        if self.ppmi:
            return ppmi_matrix(counts.to_csr(np.float64), self.shift, self.cds, dtype=self.dtype)
        return counts.to_csr(self.dtype)

    def _check_vocabulary(self) -> None:
        if not hasattr(self, "index_to_key_"):
            raise NotFittedError(f"this {type(self).__name__} (vectorizer {_NAME!r}) has no vocabulary yet: call "
                                 "fit(X), or partial_fit_vocabulary(chunk) on every chunk before partial_fit")

    def _finish(self, counts: CooccurrenceCounts, what: str) -> None:
        if counts.keys.size == 0:
            raise EmptyVocabularyError(
                f"{_NAME}: no co-occurrence pair in {what}: {len(self.index_to_key_)} words kept, "
                f"{counts.n_tokens} kept tokens, but no document holds two kept tokens (one token per document, "
                f"or min_count={self.min_count} removed the others)")
        self._matrix_value = self._matrix(counts)
        self.n_tokens_ = int(counts.n_tokens)

    @property
    def matrix_(self):
        """The co-occurrence (or PPMI) matrix of the fitted corpus: scipy.sparse.csr_matrix (V, V) of ``dtype``.

        After :meth:`partial_fit` it is built from the merged partial counts when first read (so a stream of many
        chunks does not rebuild it for each one), and raises :class:`EmptyVocabularyError` then if the chunks
        held no pair at all."""
        value = self.__dict__.get("_matrix_value")
        if value is None:
            runs = self.__dict__.get("_pf_runs")
            if not runs:
                raise NotFittedError(f"this {type(self).__name__} (vectorizer {_NAME!r}) is not fitted yet: call "
                                     "fit(...) or load(...) before using it")
            total = CooccurrenceCounts.merge_all(runs[::-1])
            self._pf_runs = [total]
            self._finish(total, "the chunks")
            value = self._matrix_value
        return value

    def fit(self, X: Any, y: Any = None) -> "CooccurrenceVectorizer":
        """Count the vocabulary and the co-occurrences of ``X``.

        Parameters
        ----------
        X : TokenSequences or iterable of token lists
            The documents (a tokenizer's output in a recipe).

        Returns
        -------
        self

        Raises
        ------
        ParameterError, EmptyVocabularyError, TokembedError (input that is not token sequences)
        """
        self._validate_params()
        self._reset()
        seqs = as_token_sequences(X, _NAME, mapped=True)
        self._vocabulary_from(seqs)
        self._finish(self._pair_counts(seqs), "the corpus")
        return self

    def partial_fit_vocabulary(self, X: Any) -> "CooccurrenceVectorizer":
        """Pass 1 of streaming: add the token counts of the chunk ``X`` (call on every chunk, then
        :meth:`partial_fit` on every chunk). Special tokens are not counted."""
        self._validate_params()
        if hasattr(self, "_pf_runs"):
            raise TokembedError(f"{_NAME}: partial_fit_vocabulary after partial_fit: the vocabulary is fixed once "
                                "pair counting has started; call fit (or a new vectorizer) to start again")
        if hasattr(self, "index_to_key_") and not hasattr(self, "_pf_word_counts"):
            self._reset()  # a fitted vectorizer starts a new stream
        seqs = as_token_sequences(X, _NAME, mapped=True)
        counts = seqs.counts()
        acc: dict[str, int] = self.__dict__.setdefault("_pf_word_counts", {})
        first = self.__dict__.setdefault("_pf_vocab", seqs.vocab)
        if first is not seqs.vocab and first is not None and first != seqs.vocab:
            self._pf_vocab = None  # chunks with different vocabularies: token_ids_ cannot name one
        for i in np.flatnonzero(counts).tolist():
            if i in seqs.special_ids:
                continue
            key = seqs.vocab[i]
            acc[key] = acc.get(key, 0) + int(counts[i])
        return self

    def partial_fit(self, X: Any, y: Any = None) -> "CooccurrenceVectorizer":
        """Pass 2 of streaming: add the pair counts of the chunk ``X`` over the vocabulary of pass 1 (fixed at the
        first call), and update ``matrix_``.

        Documents must not be cut between chunks (a pair never spans two chunks). The merged counts equal one
        :meth:`fit` over all the chunks, exactly. ``token_ids_`` are ids of the chunks' vocabulary when every
        chunk had the same one (chunks of one TokenSequences), else -1. ``matrix_`` is built when first read.
        """
        self._validate_params()
        if not hasattr(self, "_pf_runs"):
            acc = getattr(self, "_pf_word_counts", None)
            if not acc:
                raise NotFittedError(f"{_NAME}: partial_fit needs the vocabulary first: call "
                                     "partial_fit_vocabulary(chunk) on every chunk (pass 1), then partial_fit on "
                                     "every chunk (pass 2)")
            keys = sorted(acc)
            counts = np.array([acc[k] for k in keys], dtype=np.int64)
            kept = select_vocabulary(keys, counts, self.min_count, self.max_vocab)
            kept_keys = [keys[i] for i in kept.tolist()]
            vocab = self._pf_vocab
            if vocab is not None:
                index = {t: i for i, t in enumerate(vocab)}
                token_ids = np.array([index[k] for k in kept_keys], dtype=np.int64)
            else:
                token_ids = np.full(len(kept_keys), -1, dtype=np.int64)
            self._set_vocabulary(kept_keys, counts[kept], token_ids, len(keys), int(counts.max()))
            self._pf_runs: list[CooccurrenceCounts] = []
        part = self._pair_counts(X)
        runs = self._pf_runs
        runs.append(part)
        while len(runs) > 1 and 2 * runs[-1].keys.size >= runs[-2].keys.size:  # binary-counter merges
            top = runs.pop()
            runs.append(runs.pop().merge(top))
        self.__dict__.pop("_matrix_value", None)
        self.n_tokens_ = int(sum(r.n_tokens for r in runs))
        return self

    # -- output -----------------------------------------------------------------------------------------------
    def transform(self, X: Any):
        """The co-occurrence (or PPMI) matrix of ``X`` over the fitted vocabulary, shape (V, V), ``dtype``.

        Words of ``X`` outside the vocabulary (and special tokens) are removed before windowing, as in ``fit``, so
        ``fit(X).transform(X)`` equals ``matrix_``. With ``ppmi`` the PMI uses ``X``'s own counts. ``X`` with no
        pair gives a zero matrix.
        """
        self._check_is_fitted()
        return self._matrix(self._pair_counts(X))

    def fit_transform(self, X: Any, y: Any = None):
        """``fit(X)`` and return ``matrix_`` (one counting pass)."""
        return self.fit(X).matrix_

    def fitted_output(self):
        """``matrix_``: the output of ``fit_transform`` on the fitted data (scipy.sparse.csr_matrix (V, V))."""
        return self.matrix_

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """The words of the columns (and rows), in vocabulary order: ndarray of str (V,)."""
        self._check_is_fitted()
        return np.asarray(self.index_to_key_, dtype=object).astype(str)

    # -- state ------------------------------------------------------------------------------------------------
    def _get_state(self) -> dict[str, Any]:
        m = self.matrix_
        return {
            "index_to_key": list(self.index_to_key_),
            "counts": self.counts_.astype(np.int64),
            "token_ids": self.token_ids_.astype(np.int64),
            "n_tokens": int(self.n_tokens_),
            "indptr": m.indptr.astype(np.int64),
            "indices": m.indices.astype(np.int32),
            "data": m.data.astype(self.dtype),
        }

    def _set_state(self, state: dict[str, Any]) -> None:
        import scipy.sparse as sp

        keys = [str(k) for k in state["index_to_key"]]
        n = len(keys)
        try:
            indptr = np.asarray(state["indptr"], np.int64)
            indices = np.asarray(state["indices"], np.int32)
            data = np.asarray(state["data"])
            if indptr.shape != (n + 1,) or indices.shape != data.shape or int(indptr[-1]) != indices.size:
                raise ValueError("matrix arrays do not fit the vocabulary")
            matrix = sp.csr_matrix((data, indices, indptr), shape=(n, n))
        except (KeyError, ValueError, TypeError) as exc:
            from tokembed.errors import ArtifactError

            raise ArtifactError(f"{_NAME}: broken saved state ({exc})") from None
        matrix.has_sorted_indices = True
        self.index_to_key_ = keys
        self.vocabulary_ = {k: i for i, k in enumerate(keys)}
        self.counts_ = np.asarray(state["counts"], np.int64)
        self.token_ids_ = np.asarray(state["token_ids"], np.int64)
        self.n_tokens_ = int(state["n_tokens"])
        self._matrix_value = matrix

    # -- hooks ------------------------------------------------------------------------------------------------
    @classmethod
    def _contract_params(cls) -> dict[str, Any]:
        return {"min_count": 2, "window": 5}

    @classmethod
    def warmup(cls) -> None:
        """Compile the counting kernels on a tiny corpus (both weightings, both directions, dense and sparse
        paths)."""
        seqs = TokenSequences.from_tokens([["a", "b", "c", "a", "b"], ["b", "c"]])
        row_of_id = np.arange(3, dtype=np.int32)
        for weighting in ("harmonic", "uniform"):
            for symmetric in (True, False):
                for dense in (0, 3):
                    c = count_cooccurrences(seqs.ids, seqs.offsets, row_of_id, 3, window=2, symmetric=symmetric,
                                            weighting=weighting, workers=1, dense_words=dense, buffer_keys=4)
                    c.merge(c).to_csr(np.float32)


def _token_counts(seqs: TokenSequences, from_sequences: bool = True) -> TokenCounts:
    """Pass 1's counts of ``seqs``: every token of its vocabulary, specials marked."""
    return TokenCounts(tuple(seqs.vocab), seqs.counts(), frozenset(seqs.special_ids), int(seqs.n_tokens), len(seqs),
                       from_sequences)
