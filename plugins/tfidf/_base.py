"""What the three term vectorizers share: parameters, input handling, mergeable statistics, vocabulary, state."""

from __future__ import annotations

from typing import Any, ClassVar, Iterator

import numpy as np

from tokembed.components import Vectorizer
from tokembed.errors import CorpusError, EmptyVocabularyError, ParameterError, TokembedError
from tokembed.params import Boolean, Constraint, Interval, ListOf, MappingOf, Options, PathLike, Text
from tokembed.sequences import TokenSequences
from tokembed.text import PRE_TOKENIZER_SPEC

from . import _analysis, _stats

#: ``dtype`` of ``tfidf`` (its values are floats), and of ``bow`` and ``onehot`` (counts: any float or integer dtype)
FLOAT_DTYPE = Options("float64", "float32")
ANY_DTYPE = Options(*FLOAT_DTYPE.values, "int64", "int32", "int16", "int8", "uint64", "uint32", "uint16", "uint8")


class Words(Constraint):
    """Words given in the parameter itself: a list or tuple of str (a set too with ``sets``, for ``stop_words``)."""

    hint = list[str]

    def __init__(self, *, sets: bool = False):
        self.types = (list, tuple, set, frozenset) if sets else (list, tuple)

    def accepts(self, value: Any) -> bool:
        return isinstance(value, self.types) and all(isinstance(w, str) for w in value)

    def describe(self) -> str:
        return "a list of str"


class DocumentFrequency(Interval):
    """``min_df`` / ``max_df``: an :class:`~tokembed.params.Interval` whose message says what the number means (a
    share of the documents is a float, a number of them an int)."""

    def __init__(self, type: type, low: float, high: float | None, meaning: str):
        super().__init__(type, low, high, integers=False)
        self.meaning = meaning

    def describe(self) -> str:
        return f"{self.meaning} ({'a float' if self.type is float else 'an int'} {self.bounds()})"


#: ``min_df`` / ``max_df``: a share of the documents (a float, so ``1.0`` is every document) or a number of them
#: (an int: ``1`` is one document); ``0``, no number of documents, is refused with the advice to write ``0.0``.
_DOCUMENT_FREQUENCY = [DocumentFrequency(float, 0, 1, "a share of the documents"),
                       DocumentFrequency(int, 1, None, "a number of documents")]
#: The parameters every term vectorizer has, declared once; a subclass adds its own (``binary``, ``dtype``, ...).
SHARED_CONSTRAINTS: dict[str, Any] = {
    "lowercase": Boolean(),
    "pre_tokenizer": [PRE_TOKENIZER_SPEC, None],  # None: each document is one token
    "stop_words": [Words(sets=True), PathLike(), None],  # a file is read by _validate
    "ngram_range": ListOf(Interval(int, 1, None), length=2),  # and min_n <= max_n (_validate)
    "min_df": _DOCUMENT_FREQUENCY,
    "max_df": _DOCUMENT_FREQUENCY,  # and min_df <= max_df (_stats.document_range)
    "max_features": [Interval(int, 1, None), None],
    # a fixed vocabulary: terms in column order, a mapping term -> column (exactly 0 .. n-1: _validate) or a file
    "vocabulary": [Words(), MappingOf(Text(nonempty=False), Interval(int, 0, None)), PathLike(), None],
}


class TermVectorizer(Vectorizer):
    """Base of ``bow``, ``tfidf`` and ``onehot``; not registered. Subclasses define ``__init__`` (their parameters,
    a subset of the ones read here), ``param_constraints`` (:data:`SHARED_CONSTRAINTS` and their own) and
    ``_output``."""

    path_params: ClassVar[tuple[str, ...]] = ("stop_words", "vocabulary")
    #: whether the terms are token n-grams (``ngram_range`` is a parameter)
    _ngrams: ClassVar[bool] = True

    # -- parameters ---------------------------------------------------------------------------------------------
    def _ngram_range(self) -> tuple[int, int]:
        return tuple(self.ngram_range) if self._ngrams else (1, 1)  # type: ignore[attr-defined]

    def _validate(self) -> None:
        """The rules between parameters and the ones that read the word-list files, once every parameter satisfies
        its declaration; each problem is a :class:`ParameterError` naming its parameter."""
        name = self.name
        if self._ngrams and self.ngram_range[0] > self.ngram_range[1]:
            raise ParameterError(name, "ngram_range", f"must satisfy min_n <= max_n, got {tuple(self.ngram_range)!r}")
        if self.stop_words is not None:
            _analysis.read_word_list(name, "stop_words", self.stop_words)
        if self.vocabulary is not None:
            _stats.fixed_vocabulary(name, self.vocabulary, _analysis.read_word_list)
        # last: a problem of no single parameter ends check_params' search for more
        _stats.document_range(name, self.min_df, self.max_df)

    def _pre_tokenizer(self) -> Any:
        from tokembed.text import build_pre_tokenizer

        return build_pre_tokenizer(self.pre_tokenizer)

    # -- fitting ------------------------------------------------------------------------------------------------
    def _start(self) -> None:
        """Forget what was learned and read the word lists (after ``_validate_params``)."""
        self._reset()
        self._counts = _stats.TermCounts()
        self._stop_list = sorted(set(_analysis.read_word_list(self.name, "stop_words", self.stop_words))) \
            if self.stop_words is not None else []
        self._fixed = _stats.fixed_vocabulary(self.name, self.vocabulary, _analysis.read_word_list) \
            if self.vocabulary is not None else None
        self._saw_token = False
        self._saw_raw = False
        self._lookup_cache: tuple[Any, Any] | None = None
        self._problem: Exception | None = None
        self._fit_csr: tuple[np.ndarray, ...] | None = None

    def fit(self, X: Any, y: Any = None) -> "TermVectorizer":
        """Learn the vocabulary (and the statistics the weighting needs) from the documents ``X``.

        Parameters
        ----------
        X : TokenSequences, iterable of token lists, or iterable of str
            Token sequences from a tokenizer (the fast path: ids, no strings), documents as lists of tokens, or raw
            documents (lowercased if ``lowercase``, then split by ``pre_tokenizer``). Read once.

        Returns
        -------
        self

        Raises
        ------
        ParameterError
            For an invalid parameter, or ``min_df`` above ``max_df`` once the documents are counted.
        EmptyVocabularyError
            If no term is left, naming what removed them (the pre-tokenizer, ``stop_words``, ``min_df``,
            ``max_df``).
        CorpusError
            If ``X`` holds no document.
        TokembedError
            If ``X`` is not documents (one str, a matrix, documents of mixed forms).
        """
        self._fit_sequences(X)
        return self

    def fit_transform(self, X: Any, y: Any = None) -> Any:
        """``fit(X).transform(X)`` in one pass: raw documents are split once, and the counts ``fit`` makes (by
        term name, so with sorted columns) become the matrix once the filtered-out terms are dropped. A mapped
        corpus (``TokenSequences.open``) is fitted, then transformed, range by range: two passes over the map."""
        import scipy.sparse as sp

        seqs = self._fit_sequences(X, sort_names=self.vocabulary is None)
        fitted, self._fit_csr = self._fit_csr, None
        if fitted is None:
            return self.transform(seqs)
        indptr, indices, data = fitted
        counts = self._counts
        remap = np.full(len(counts.index), -1, dtype=np.int64)
        remap[[counts.index[t] for t in self._feature_names]] = np.arange(len(self._feature_names))
        cols = remap[indices]
        keep = cols >= 0  # remap is increasing on the kept rows, so each row's columns stay sorted
        kept = np.zeros(keep.shape[0] + 1, dtype=np.int64)
        np.cumsum(keep, out=kept[1:])
        matrix = sp.csr_matrix((data[keep], cols[keep].astype(np.int32), kept[indptr]),
                               shape=(len(seqs), len(self._feature_names)))
        matrix.has_sorted_indices = True
        return self._weigh(matrix)

    def _weigh(self, matrix: Any) -> Any:
        """The output for per-document counts over the vocabulary (CSR, int64 data); subclasses define it."""
        raise NotImplementedError

    def _fit_sequences(self, X: Any, raw: bool = False, sort_names: bool = False) -> TokenSequences:
        """Fit on ``X`` (``raw``: it was split from raw text already); return its token sequences (stop words
        dropped). With ``sort_names``, keep the counts' CSR arrays (columns in term-name order) in ``_fit_csr``."""
        self._validate_params()
        self._start()
        self._saw_raw = raw
        seqs = self._sequences(X, fitting=True)
        if len(seqs) == 0:
            raise CorpusError(f"{self.name}: fit got no document")
        csr = self._learn(seqs, sort_names)
        self._finish()
        self._fit_csr = csr if sort_names else None
        return seqs

    def partial_fit(self, X: Any) -> "TermVectorizer":
        """Add the documents ``X`` (a chunk of a corpus) to the statistics and select the vocabulary again.

        The statistics are counts that add up (document frequencies, term frequencies, the number of documents),
        so fitting chunk after chunk gives exactly the ``vocabulary_`` (and ``idf_``) of one ``fit`` over their
        concatenation, while only one chunk's tokens are held. The first call on a fresh (or re-``fit``) instance
        starts the counts; ``fit`` starts them afresh. A loaded artifact holds the selected vocabulary only, not
        the counts of every term seen, so ``partial_fit`` on it raises :class:`TokembedError`.

        Each call re-selects the vocabulary from all counts (a sort of the terms seen); give chunks of many
        documents. A selection that is empty so far (no term yet, or none passing ``min_df`` / ``max_df`` with the
        documents seen) is not an error here, since later chunks may change it: the vectorizer then stays
        unfitted, and ``transform`` raises that problem (:class:`EmptyVocabularyError`, or the
        :class:`ParameterError` of ``min_df`` above ``max_df``) until a later chunk resolves it.

        Raises
        ------
        ParameterError, TokembedError
            As :meth:`fit`, for parameters and input; an empty chunk adds nothing.
        """
        if getattr(self, "_counts", None) is None:
            if self.is_fitted():
                raise TokembedError(f"{self.name}: this vectorizer was loaded from an artifact, which keeps the "
                                    "selected vocabulary but not the counts partial_fit adds to; fit it again")
            self._validate_params()
            self._start()
        seqs = self._sequences(X, fitting=True)
        self._learn(seqs)
        try:
            self._finish()
        except (EmptyVocabularyError, ParameterError) as exc:  # may be resolved by a later chunk
            for key in [k for k in vars(self) if k.endswith("_") and not k.startswith("_")]:
                delattr(self, key)
            self._problem = exc
        return self

    def _check_is_fitted(self) -> None:
        problem = getattr(self, "_problem", None)
        if problem is not None and not self.is_fitted():
            raise type(problem)(*problem.args) if not isinstance(problem, ParameterError) else \
                ParameterError(problem.component, problem.param, problem.problem)
        super()._check_is_fitted()

    def partial_counts(self, X: Any) -> "_PartialTerms":
        """The statistics of the documents ``X`` (as for :meth:`fit`): document and term frequencies by term name
        and the number of documents, partial counts that merge (the corpus-statistics engine counts partitions
        with it; :meth:`fit_counts` selects the vocabulary from the merged counts, as :meth:`fit` does)."""
        work = type(self)(**self.get_params())  # this instance is left as it is: threads count parts at once
        work._validate_params()
        work._start()
        work._learn(work._sequences(X, fitting=True))
        return _PartialTerms(work._counts, work._saw_raw, work._saw_token)

    def fit_counts(self, counts: "_PartialTerms") -> "TermVectorizer":
        """Select the vocabulary (and the weights) from the merged :meth:`partial_counts` of the corpus."""
        self._validate_params()
        self._start()
        if counts.terms.n_docs == 0:
            raise CorpusError(f"{self.name}: fit got no document")
        self._counts, self._saw_raw, self._saw_token = counts.terms, counts.saw_raw, counts.saw_token
        self._finish()
        return self

    def _sequences(self, X: Any, fitting: bool = False) -> TokenSequences:
        """``X`` as token sequences (a memory-mapped one stays mapped: :meth:`_parts` reads it); when ``fitting``,
        note what was seen (for messages)."""
        seqs, raw = _analysis.to_sequences(self.name, X, self._pre_tokenizer(), self.lowercase)
        if fitting:
            self._saw_raw = self._saw_raw or raw
            self._saw_token = self._saw_token or seqs.n_tokens > 0
        return seqs

    def _parts(self, seqs: TokenSequences) -> Iterator[TokenSequences]:
        """The documents of ``seqs`` without the stop words and special tokens, in memory: ``seqs`` as one part,
        or, when it is memory-mapped, its :meth:`~tokembed.sequences.TokenSequences.in_memory_chunks` one at a time
        (the corpus is never converted whole). Every statistic and every row is per document, so the parts give
        what the whole gives."""
        drop = np.zeros(len(seqs.vocab), dtype=bool)
        if seqs.special_ids:  # a tokenizer's <unk>, <pad>, ...: not terms of the documents
            drop[list(seqs.special_ids)] = True
        if self._stop_list:
            stop = set(self._stop_list)
            drop |= np.fromiter((t in stop for t in seqs.vocab), dtype=bool, count=len(seqs.vocab))
        for part in seqs.in_memory_chunks() if seqs.is_mapped else (seqs,):
            yield _analysis.drop_tokens(part, drop) if drop.any() else part

    def _learn(self, seqs: TokenSequences, sort_names: bool = False) -> tuple[np.ndarray, ...] | None:
        """Add the counts of ``seqs`` (stop words and special tokens are dropped here) to ``self._counts``; return
        them as CSR arrays (``indptr``, ``indices`` over the rows of ``self._counts``, ``data``), or None for a
        memory-mapped ``seqs`` (counted part by part, keeping no per-document counts). With ``sort_names`` (fresh
        counts, in memory), the rows are numbered in term-name order."""
        from . import _kernels

        def sorted_rows(names: list[str]) -> np.ndarray:
            order = sorted(range(len(names)), key=names.__getitem__)
            rows = np.empty(len(names), dtype=np.int32)
            rows[order] = self._counts.ids_of([names[i] for i in order])
            return rows

        in_order = sort_names and not seqs.is_mapped
        numbering = _analysis.TermNumbering(seqs.vocab, self._ngram_range(),
                                            sorted_rows if in_order else self._counts.ids_of)
        csr = None
        for part in self._parts(seqs):
            rows, offsets = numbering.map(part)
            csr = _kernels.count_rows(rows, offsets, len(self._counts.index))
            self._counts.add_counts(csr[1], csr[2], len(part))
        return None if seqs.is_mapped else csr

    def _finish(self) -> None:
        """Select the vocabulary from the counts and set the fitted attributes."""
        counts = self._counts
        if self._fixed is not None:
            terms = self._fixed
            df = np.array([counts.df[counts.index[t]] if t in counts.index else 0 for t in terms], dtype=np.int64)
        else:
            if not (counts.df > 0).any():
                raise EmptyVocabularyError(self._nothing_found())
            # bow / tfidf rank binary counts by document frequency; onehot has no ``binary``
            terms, df = _stats.select_vocabulary(self.name, counts, self.min_df, self.max_df, self.max_features,
                                                 binary=bool(getattr(self, "binary", False)))
        self.vocabulary_ = {t: i for i, t in enumerate(terms)}
        self.n_docs_ = counts.n_docs
        self._feature_names = np.array(terms, dtype=object)
        self._lookup_cache = None
        self._problem = None
        self._set_weights(df, counts.n_docs)

    def _nothing_found(self) -> str:
        if self._stop_list and self._saw_token:
            shown = ", ".join(repr(w) for w in self._stop_list[:10]) + (", ..." if len(self._stop_list) > 10 else "")
            return (f"{self.name}: stop_words removed every term (the documents hold only stop words; stop_words: "
                    f"{shown}); empty vocabulary")
        if self._saw_raw:
            spec = self._pre_tokenizer().spec
            hint = " (the 'sklearn' pattern drops one-character words)" if spec == "sklearn" else ""
            return f"{self.name}: the pre-tokenizer {spec!r} found no token in the documents{hint}; empty vocabulary"
        return f"{self.name}: the documents hold no token; empty vocabulary"

    def _set_weights(self, df: np.ndarray, n_docs: int) -> None:
        """Hook: set the weighting's fitted attributes from the selected terms' document frequencies."""

    # -- transforming -------------------------------------------------------------------------------------------
    def _column_numbering(self, seqs: TokenSequences) -> Any:
        """The :class:`~._analysis.TermNumbering` of ``seqs``'s terms to vocabulary columns (-1 outside it); the
        unigram columns of a vocabulary are kept from one call to the next."""
        vocab = self.vocabulary_

        def columns(names: list[str]) -> np.ndarray:
            return np.fromiter((vocab.get(n, -1) for n in names), dtype=np.int32, count=len(names))

        known = None
        if self._ngram_range() == (1, 1):  # the terms are the ids: every id's column, once per vocabulary
            cache = self._lookup_cache
            if cache is None or cache[0] is not seqs.vocab:
                cache = self._lookup_cache = (seqs.vocab, columns(list(seqs.vocab)))
            known = cache[1]
        return _analysis.TermNumbering(seqs.vocab, self._ngram_range(), columns, known)

    def _counts_matrix(self, X: Any) -> tuple[Any, TokenSequences]:
        """Per-document counts over the vocabulary as a CSR matrix with int64 data, and the token sequences."""
        import scipy.sparse as sp

        from . import _kernels

        seqs = self._sequences(X)
        n_cols = len(self.vocabulary_)
        numbering = self._column_numbering(seqs)
        blocks = [_kernels.count_rows(*numbering.map(part), n_cols) for part in self._parts(seqs)]
        if len(blocks) == 1:
            indptr, indices, data = blocks[0]
        else:  # the rows of a mapped corpus's parts, one after the other
            starts = np.cumsum([0] + [b[0][-1] for b in blocks[:-1]])
            indptr = np.concatenate([[0]] + [b[0][1:] + s for b, s in zip(blocks, starts)]).astype(np.int64)
            indices = np.concatenate([b[1] for b in blocks]) if blocks else np.zeros(0, np.int32)
            data = np.concatenate([b[2] for b in blocks]) if blocks else np.zeros(0, np.int64)
        del blocks
        matrix = sp.csr_matrix((data, indices, indptr), shape=(len(seqs), n_cols))
        matrix.has_sorted_indices = True
        return matrix, seqs

    def _cast(self, matrix: Any, dtype: str) -> Any:
        """``matrix`` with data of ``dtype``; an integer dtype too small for a count is an error naming the term."""
        target = np.dtype(dtype)
        if target.kind in "iu" and matrix.nnz:
            top = int(matrix.data.max())
            if top > np.iinfo(target).max:
                at = int(np.argmax(matrix.data))
                term = self._feature_names[matrix.indices[at]]
                row = int(np.searchsorted(matrix.indptr, at, side="right") - 1)
                raise TokembedError(f"{self.name}: the term {term!r} occurs {top} times in document {row}, more "
                                    f"than dtype {target.name} holds (at most {np.iinfo(target).max}); use a wider "
                                    "dtype such as int64 or float64")
        matrix.data = matrix.data.astype(target, copy=False)
        return matrix

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """The term of each column, an ndarray of str (dtype object) of shape (n_features,), sorted by code point
        unless a fixed ``vocabulary`` gave the order."""
        self._check_is_fitted()
        return self._feature_names.copy()

    # -- state --------------------------------------------------------------------------------------------------
    def _get_state(self) -> dict[str, Any]:
        return {"vocabulary": list(self._feature_names), "n_docs": int(self.n_docs_),
                "stop_words": list(self._stop_list), **self._weights_state()}

    def _weights_state(self) -> dict[str, Any]:
        return {}

    def _set_state(self, state: dict[str, Any]) -> None:
        terms = state["vocabulary"]
        if not isinstance(terms, list) or not all(isinstance(t, str) for t in terms) or len(set(terms)) != len(terms):
            raise ValueError("vocabulary must be a list of distinct str")
        self._counts = None
        self._stop_list = [str(w) for w in state["stop_words"]]
        self._fixed = None
        self._lookup_cache = None
        self._saw_raw = self._saw_token = False
        self.vocabulary_ = {t: i for i, t in enumerate(terms)}
        self.n_docs_ = int(state["n_docs"])
        self._feature_names = np.array(terms, dtype=object)
        self._set_weights_state(state)

    def _set_weights_state(self, state: dict[str, Any]) -> None:
        pass

    @classmethod
    def warmup(cls) -> None:
        """Compile (or load from Numba's cache) the kernels, on tiny input."""
        from tokembed.text import fast

        from . import _kernels

        ids = np.array([0, 1, 0], dtype=np.int32)
        offsets = np.array([0, 2, 3], dtype=np.int64)
        _kernels.ngram_features(ids, offsets, 1, 2)
        indptr, _, data = _kernels.count_rows(ids, offsets, 2)
        _kernels.normalize_rows(indptr, data.astype(np.float64), False)
        fast.index_words(["warm up"], "sklearn", workers=1)


class _PartialTerms:
    """:class:`~._stats.TermCounts` of a part of a corpus and what its documents were (for the messages of an empty
    vocabulary); ``merge`` adds another part's."""

    __slots__ = ("terms", "saw_raw", "saw_token")

    def __init__(self, terms: Any, saw_raw: bool, saw_token: bool):
        self.terms, self.saw_raw, self.saw_token = terms, saw_raw, saw_token

    def merge(self, other: "_PartialTerms") -> "_PartialTerms":
        return _PartialTerms(self.terms.merge(other.terms), self.saw_raw or other.saw_raw,
                             self.saw_token or other.saw_token)

    def __getstate__(self) -> tuple:
        return self.terms, self.saw_raw, self.saw_token

    def __setstate__(self, state: tuple) -> None:
        self.terms, self.saw_raw, self.saw_token = state
