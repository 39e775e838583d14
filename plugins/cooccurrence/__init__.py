"""Built-in plugin ``cooccurrence``: the word-word co-occurrence matrix as Stanford GloVe's ``cooccur`` builds it.

Registers the vectorizer ``cooccurrence`` (:class:`CooccurrenceVectorizer`, ``output_rows = "vocabulary"``).
The implementation is imported lazily (building the registry imports no numba); the names below are available
as ``from tokembed.plugins.cooccurrence import ...``.

The vectorizer::

    from tokembed.plugins.cooccurrence import CooccurrenceVectorizer
    cv = CooccurrenceVectorizer(window=10, symmetric=True, weighting="harmonic", min_count=5, max_vocab=None,
                                ppmi=False, shift=1.0, cds=0.75, dtype="float32", workers=None)
    cv.fit(X)           # X: TokenSequences (a tokenizer's output) or an iterable of token lists
    cv.matrix_          # scipy.sparse.csr_matrix (V, V) of dtype, vocabulary order, sorted indices, no zeros
    cv.index_to_key_    # list[str], V keys, count-descending, ties broken by the key (code-point order)
    cv.vocabulary_      # dict key -> row
    cv.counts_          # int64 (V,) corpus counts of the kept words
    cv.token_ids_       # int64 (V,) id of each row in the input TokenSequences.vocab (map rows to tokenizer ids)
    cv.n_tokens_        # kept tokens counted
    cv.transform(X)     # the matrix of X over the fitted vocabulary (V, V)

Words below ``min_count`` or beyond ``max_vocab``, and the special ids of the input ``TokenSequences`` (pad, unk,
...), are removed BEFORE windowing, as GloVe does. With no word left, or no pair at all, ``fit`` raises
:class:`~tokembed.errors.EmptyVocabularyError`.

Streaming (two passes, as GloVe's ``vocab_count`` then ``cooccur``)::

    for chunk in seqs.chunks(100_000): cv.partial_fit_vocabulary(chunk)   # pass 1: word counts
    for chunk in seqs.chunks(100_000): cv.partial_fit(chunk)              # pass 2: pair counts, merged exactly

On a cluster, each partition computes ``cv.partial_counts(part)`` (a :class:`CooccurrenceCounts` over the fixed
vocabulary) and the results are merged with :meth:`CooccurrenceCounts.merge` / ``merge_all`` in any tree order:
the sums are integers, so the merge is exact and order-independent.

Lower level, without scipy objects (what the GloVe embedder calls)::

    from tokembed.plugins.cooccurrence import count_cooccurrences, cooccurrence_coo, select_vocabulary
    kept = select_vocabulary(seqs.vocab, seqs.counts(), min_count=5, max_vocab=None, drop=seqs.special_ids)
    row_of_id = np.full(seqs.vocab_size, -1, np.int32); row_of_id[kept] = np.arange(kept.size)
    row, col, value = cooccurrence_coo(seqs.ids, seqs.offsets, row_of_id, kept.size, window=10,
                                       symmetric=True, weighting="harmonic", dtype=np.float64, workers=None)
    # row, col int32 (nnz,), value float64 (nnz,), sorted by (row, col), mirrored when symmetric
    counts = count_cooccurrences(...)   # the mergeable CooccurrenceCounts itself (.to_coo(), .to_csr(), .merge())

``ppmi_matrix(matrix, shift, cds)`` is the shifted PPMI with context-distribution smoothing (Levy et al. 2015).
"""

from __future__ import annotations

from typing import Any

from tokembed import hookimpl

__all__ = ["CooccurrenceVectorizer", "CooccurrenceCounts", "count_cooccurrences", "cooccurrence_coo",
           "select_vocabulary", "ppmi_matrix"]

_LAZY = {
    "CooccurrenceVectorizer": "vectorizer",
    "ppmi_matrix": "vectorizer",
    "CooccurrenceCounts": "counting",
    "count_cooccurrences": "counting",
    "cooccurrence_coo": "counting",
    "select_vocabulary": "counting",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


@hookimpl
def tokembed_register_vectorizers():
    from .vectorizer import CooccurrenceVectorizer

    return [CooccurrenceVectorizer]
