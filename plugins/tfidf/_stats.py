"""Mergeable corpus statistics of the term vectorizers, and the vocabulary they select.

:class:`TermCounts` holds, per term name, the document frequency (documents that contain the term, never
occurrences) and the term frequency (occurrences), plus the number of documents seen. Counts of chunks of a corpus
add up, in any order, to the counts of the whole, so ``partial_fit`` over chunks selects exactly what one ``fit``
selects: the vocabulary is chosen from these totals only, and sorted by name.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tokembed.errors import EmptyVocabularyError, ParameterError


class TermCounts:
    """Document and term frequencies by term name; ``add`` merges the counts of another chunk."""

    __slots__ = ("index", "df", "tf", "n_docs")

    def __init__(self) -> None:
        self.index: dict[str, int] = {}  # name -> row of df / tf, in order of first sight
        self.df = np.zeros(0, dtype=np.int64)
        self.tf = np.zeros(0, dtype=np.int64)
        self.n_docs = 0

    def ids_of(self, names: list[str]) -> np.ndarray:
        """Rows of ``names`` (int32), new names added with zero counts."""
        index = self.index
        rows = np.fromiter((index.setdefault(n, len(index)) for n in names), dtype=np.int64, count=len(names))
        grow = len(index) - self.df.shape[0]
        if grow:
            self.df = np.concatenate([self.df, np.zeros(grow, np.int64)])
            self.tf = np.concatenate([self.tf, np.zeros(grow, np.int64)])
        return rows.astype(np.int32)

    def merge(self, other: "TermCounts") -> "TermCounts":
        """The counts of this chunk followed by ``other``: names in order of first sight, counts added."""
        out = TermCounts()
        out.index = dict(self.index)
        rows = out.ids_of(list(other.index))
        out.df[: self.df.shape[0]] += self.df
        out.tf[: self.tf.shape[0]] += self.tf
        np.add.at(out.df, rows, other.df)
        np.add.at(out.tf, rows, other.tf)
        out.n_docs = self.n_docs + other.n_docs
        return out

    def __getstate__(self) -> tuple:
        return self.index, self.df, self.tf, self.n_docs

    def __setstate__(self, state: tuple) -> None:
        self.index, self.df, self.tf, self.n_docs = state

    def add_counts(self, indices: np.ndarray, data: np.ndarray, n_docs: int) -> None:
        """Add a chunk's per-document counts (CSR ``indices`` / ``data`` over these rows) and its document count."""
        size = self.df.shape[0]
        self.df += np.bincount(indices, minlength=size)
        self.tf += np.bincount(indices, weights=data, minlength=size).astype(np.int64)
        self.n_docs += int(n_docs)


def _docs(n: float) -> str:
    return f"{n:g} document" + ("" if n == 1 else "s")


def _doc_count(value: int | float, n_docs: int) -> float:
    """A ``min_df`` / ``max_df`` in documents: an int counts documents, a float is a share of them."""
    return float(value) if isinstance(value, (int, np.integer)) else float(value) * n_docs


def document_range(name: str, min_df: int | float, max_df: int | float,
                   n_docs: int | None = None) -> tuple[float, float]:
    """``min_df`` and ``max_df`` in documents of a corpus of ``n_docs`` (the rule ``min_df <= max_df``, kept here
    only). Without ``n_docs`` (before any document is counted) the rule is decided where it does not depend on the
    corpus: two ints (numbers of documents) or two floats (shares); an int and a float are compared by ``fit``.

    Returns
    -------
    (low, high) : tuple of float
        The bounds in documents (in shares without ``n_docs`` when both are floats); ``(0, inf)`` when undecided.

    Raises
    ------
    ParameterError
        (about no single parameter) If ``min_df`` is above ``max_df``, naming both and what they keep.
    """
    if n_docs is None:
        if isinstance(min_df, (int, np.integer)) != isinstance(max_df, (int, np.integer)):
            return 0.0, float("inf")  # 0.5 of the documents against 2 of them: depends on how many there are
        low, high = float(min_df), float(max_df)
        if high < low:
            kept = (f"{low:g} and at most {_docs(high)}" if isinstance(min_df, (int, np.integer))
                    else f"{low:.0%} and at most {high:.0%} of the documents")
            raise ParameterError(name, None, f"min_df={min_df!r} is above max_df={max_df!r}: no term can be in at "
                                             f"least {kept}; lower min_df or raise max_df")
        return low, high
    low, high = _doc_count(min_df, n_docs), _doc_count(max_df, n_docs)
    if high < low:
        raise ParameterError(name, None, f"min_df={min_df!r} ({_docs(low)} of {n_docs}) is above max_df={max_df!r} "
                                         f"({_docs(high)}): no term can pass both; lower min_df or raise max_df")
    return low, high


def select_vocabulary(name: str, counts: TermCounts, min_df: int | float, max_df: int | float,
                      max_features: int | None, binary: bool = False) -> tuple[list[str], np.ndarray]:
    """The selected terms sorted by name, and their document frequencies.

    Filters, as scikit-learn's ``CountVectorizer``: keep terms with ``min_df <= df <= max_df`` (each in documents),
    then, if more than ``max_features`` remain, the ``max_features`` of largest term frequency over the corpus
    (with ``binary``, of largest document frequency: scikit-learn sets the counts to 1 before it ranks the terms);
    ties are broken by name (code-point order), where scikit-learn's unstable sort leaves the choice to NumPy.

    Raises
    ------
    ParameterError
        If ``min_df`` is above ``max_df`` in documents (naming both).
    EmptyVocabularyError
        If a filter removes every term (naming the filter and its value).
    """
    names = list(counts.index)
    order = sorted(range(len(names)), key=names.__getitem__)
    names = [names[i] for i in order]
    df = counts.df[order]
    tf = counts.tf[order]
    seen = df > 0  # rows added for names that never occurred (a fixed vocabulary's lookups) are not terms
    if not seen.all():
        names = [n for n, s in zip(names, seen.tolist()) if s]
        df, tf = df[seen], tf[seen]
    n_docs = counts.n_docs
    low, high = document_range(name, min_df, max_df, n_docs)
    keep = (df >= low) & (df <= high)
    if not keep.any():
        lows, highs = df >= low, df <= high
        if not lows.any():
            raise EmptyVocabularyError(
                f"{name}: min_df={min_df!r} removed every term: it keeps terms in at least {_docs(low)} of "
                f"{n_docs}, and the most widespread term is in {_docs(int(df.max()))}; lower min_df")
        if not highs.any():
            raise EmptyVocabularyError(
                f"{name}: max_df={max_df!r} removed every term: it keeps terms in at most {_docs(high)} of {n_docs}, "
                f"and the rarest term is in {_docs(int(df.min()))}; raise max_df")
        raise EmptyVocabularyError(
            f"{name}: min_df={min_df!r} and max_df={max_df!r} together removed every term: no term is in "
            f"{low:g} to {high:g} of the {n_docs} documents")
    if max_features is not None and int(keep.sum()) > max_features:
        kept = np.flatnonzero(keep)
        rank = df if binary else tf
        best = kept[np.argsort(-rank[kept], kind="stable")[:max_features]]
        keep = np.zeros_like(keep)
        keep[best] = True
    selected = [n for n, k in zip(names, keep.tolist()) if k]
    return selected, df[keep]


def fixed_vocabulary(name: str, vocabulary: Any, read_list: Any) -> list[str]:
    """A ``vocabulary`` parameter as the list of terms in column order.

    A mapping gives each term its column (the columns must be exactly ``0 .. n-1``); a list (or a file, one term
    per line) gives the columns in its order.

    Raises
    ------
    ParameterError
        If it is empty, holds a term twice, or a mapping's columns are not ``0 .. n-1``.
    """
    if isinstance(vocabulary, dict):  # str -> int >= 0, as declared
        terms = list(vocabulary)
        cols = list(vocabulary.values())
        if sorted(int(c) for c in cols) != list(range(len(cols))):
            raise ParameterError(name, "vocabulary", f"columns must be exactly 0 .. {len(cols) - 1}, each once")
        out = [""] * len(terms)
        for t, c in zip(terms, cols):
            out[int(c)] = t
    else:
        out = read_list(name, "vocabulary", vocabulary)
        seen: set[str] = set()
        for t in out:
            if t in seen:
                raise ParameterError(name, "vocabulary", f"holds {t!r} twice")
            seen.add(t)
    if not out:
        raise ParameterError(name, "vocabulary", "is empty")
    return out
