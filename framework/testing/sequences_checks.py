"""The contract checks on what a recipe really hands a vectorizer or an embedder: a tokenizer's
:class:`~tokembed.sequences.TokenSequences` (ids and the vocabulary that names them), not whitespace-split strings.

A recipe encodes its corpus with the input tokenizer once and passes the ids to every stage; ``evaluate:``,
``nearest:`` and the grid then read an embedder's ``wv_``, a :class:`~tokembed.keyedvectors.KeyedVectors` keyed by
the tokens' strings. These checks feed the built-in ``word`` tokenizer's output over :func:`sample_corpus`
(``min_frequency=2``, so rare words are ``<unk>`` and ``<pad>`` is a vocabulary entry that never occurs), as a run
does. Each takes a component CLASS, as every check of :mod:`tokembed.testing.checks` does; a ``fit_data`` that is a
``TokenSequences`` replaces the suite's.
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ..keyedvectors import KeyedVectors
from ..sequences import TokenSequences
from ._support import _artifact_bytes, _as_array, _fail, _fit, _make, _seed_overrides, _short
from .samples import sample_corpus

__all__ = ["contract_sequences", "check_vectorizer_token_sequences", "check_embedder_word_vectors",
           "check_mapped_token_sequences"]


@functools.lru_cache(maxsize=1)
def _word_tokenizer() -> Any:
    from ..registry import build_registry

    return build_registry(autoload=False).get("tokenizer", "word")(min_frequency=2).fit(sample_corpus())


@functools.lru_cache(maxsize=1)
def _word_sequences() -> TokenSequences:
    return TokenSequences.from_tokenizer(_word_tokenizer(), sample_corpus())


def contract_sequences() -> TokenSequences:
    """What the suite's sequence checks feed: the built-in ``word`` tokenizer (``min_frequency=2``, fitted on
    :func:`sample_corpus`) applied to :func:`sample_corpus`, 28 documents. The same object each call: do not change
    its arrays."""
    return _word_sequences()


def _sequences(fit_data: Any) -> TokenSequences:
    return fit_data if isinstance(fit_data, TokenSequences) else contract_sequences()


def _by_name(matrix: np.ndarray, names: list[str], all_names: list[str], square: bool) -> np.ndarray:
    """``matrix``'s columns (and rows when ``square``) laid out over ``all_names``; a name it lacks is zeros."""
    where = {n: i for i, n in enumerate(names)}
    cols = np.array([where.get(n, -1) for n in all_names])
    out = np.zeros((matrix.shape[0], len(all_names)))
    out[:, cols >= 0] = matrix[:, cols[cols >= 0]]
    if square:
        rows = np.zeros((len(all_names), len(all_names)))
        rows[cols >= 0] = out[cols[cols >= 0]]
        out = rows
    return out


def _fitted_output(cls: type, data: Any) -> tuple[np.ndarray, list[str]]:
    vec = _make(cls, **_seed_overrides(cls))
    _fit(cls, vec, data)
    Y = _as_array(vec.transform(data)).astype(np.float64)
    names = [str(n) for n in np.asarray(vec.get_feature_names_out()).tolist()]
    if Y.ndim != 2 or Y.shape[1] != len(names):
        _fail(cls, f"transform gave shape {Y.shape} for {len(names)} feature names")
    return Y, names


def _difference(got: tuple[np.ndarray, list[str]], want: tuple[np.ndarray, list[str]], square: bool) -> str:
    """Where two outputs differ once laid out over the same feature names, or ``""``."""
    (Ys, names_s), (Yl, names_l) = got, want
    if Ys.shape[0] != Yl.shape[0] and not square:
        return f"{Ys.shape[0]} rows against {Yl.shape[0]}"
    everything = names_l + sorted(set(names_s) - set(names_l))
    a, b = _by_name(Ys, names_s, everything, square), _by_name(Yl, names_l, everything, square)
    close = np.isclose(a, b, rtol=1e-6, atol=1e-9)
    if close.all():
        return ""
    r, c = np.argwhere(~close)[0]
    return f"{float(a[r, c])!r} against {float(b[r, c])!r} at row {r}, feature {everything[c]!r}"


def check_vectorizer_token_sequences(cls: type, fit_data: Any = None, inputs: Any = None) -> None:
    """A vectorizer that reads documents (``input_kind = "documents"``) fitted on a tokenizer's ``TokenSequences``
    learns what it learns from the same documents given as token lists: its features are named by the tokens'
    strings (never by their ids), ``transform`` gives the rows ``output_rows`` promises and the same values feature
    by feature (a feature one way has and the other lacks is a zero column). Special tokens (``special_ids``: the
    ``<unk>`` of a rare word) may be counted as any token or left out, as the built-ins do; left out, the token
    lists compared against are without them too (and so are the rows of special tokens, for one row per token)."""
    if getattr(cls, "input_kind", "documents") != "documents":
        return
    seqs = _sequences(fit_data)
    got = _fitted_output(cls, seqs)
    Ys, names_s = got
    rows = getattr(cls, "output_rows", "documents")
    expected = {"documents": len(seqs), "tokens": seqs.n_tokens, "vocabulary": len(names_s)}.get(rows)
    if Ys.shape[0] != expected:
        _fail(cls, f"on TokenSequences of {len(seqs)} documents ({seqs.n_tokens} tokens), transform gave "
                   f"{Ys.shape[0]} rows; output_rows = {rows!r} promises {expected}")
    foreign = [n for n in names_s if n not in set(seqs.vocab)]
    # rows per token or per vocabulary entry are named by tokens; for rows per document, n-gram names join tokens
    # and a hashing vectorizer names buckets, so only the ids written as strings (the vocabulary lost) are wrong
    ids_as_names = bool(foreign) and len(foreign) == len(names_s) and all(str(n).isdigit() for n in foreign)
    if (rows != "documents" and foreign) or ids_as_names:
        _fail(cls, f"fitted on TokenSequences it names features {_short(foreign[:5])}, which are not tokens of "
                   "the vocabulary: name features by seqs.vocab[id], not by the id")
    square = rows == "vocabulary"
    kept = _difference(got, _fitted_output(cls, seqs.to_tokens()), square)
    if not kept:
        return
    specials = {seqs.vocab[i] for i in seqs.special_ids}
    plain = [[t for t in doc if t not in specials] for doc in seqs.to_tokens()]
    if rows == "tokens":  # the rows of the special tokens go with them
        got = (Ys[~np.isin(seqs.ids, list(seqs.special_ids))], names_s)
    dropped = _difference(got, _fitted_output(cls, plain), square)
    if dropped:
        _fail(cls, f"fitted on TokenSequences it does not give what it gives on the same documents as token "
                   f"lists: {dropped} (special tokens left out), {kept} (special tokens kept)")


def check_embedder_word_vectors(cls: type, fit_data: Any = None, inputs: Any = None) -> None:
    """A trained embedder (``fits_on_tokens = True``) fitted on a tokenizer's ``TokenSequences`` sets ``wv_``, a
    :class:`~tokembed.keyedvectors.KeyedVectors` whose keys are tokens of the sequences (the strings, not the ids)
    and whose rows are finite, and a saved and loaded copy has the same ``wv_``: ``evaluate:``, ``nearest:`` and
    the grid read it."""
    if not getattr(cls, "fits_on_tokens", True):
        return
    seqs = _sequences(fit_data)
    emb = _make(cls, **_seed_overrides(cls))
    _fit(cls, emb, seqs)
    wv = getattr(emb, "wv_", None)
    if not isinstance(wv, KeyedVectors):
        _fail(cls, f"after fit, wv_ is {type(wv).__name__}, expected a tokembed.KeyedVectors keyed by the tokens' "
                   "strings (evaluate:, nearest: and the grid read wv_)")
    keys = list(wv.index_to_key)
    if not keys:
        _fail(cls, "after fit on the sample corpus, wv_ holds no vector")
    seen = {seqs.vocab[i] for i in np.unique(seqs.ids).tolist()}
    foreign = [k for k in keys if k not in seen]
    if foreign:
        _fail(cls, f"wv_ has keys {_short(foreign[:5])} that are not tokens of the sequences it was fitted on "
                   "(key vectors by seqs.vocab[id])")
    vectors = np.asarray(wv.vectors)
    if vectors.ndim != 2 or vectors.shape[0] != len(keys) or not np.all(np.isfinite(vectors)):
        _fail(cls, f"wv_.vectors has shape {vectors.shape} for {len(keys)} keys, or a value that is not finite")
    with tempfile.TemporaryDirectory() as tmp:
        back = getattr(type(emb).load(emb.save(Path(tmp) / "emb.tokembed.json")), "wv_", None)
        same = (isinstance(back, KeyedVectors) and list(back.index_to_key) == keys
                and np.array_equal(np.asarray(back.vectors), vectors))
    if not same:
        _fail(cls, "a saved and loaded copy does not have the same wv_ (rebuild it in _set_state)")


def _reads_token_sequences(cls: type) -> bool:
    kind = getattr(cls, "kind", "")
    return ((kind == "vectorizer" and getattr(cls, "input_kind", "documents") == "documents")
            or (kind == "embedder" and getattr(cls, "fits_on_tokens", True)))


def _same_output(a: Any, b: Any) -> str:
    """Where two transform outputs differ (values, dtype or shape, exactly), or ``""``."""
    x, y = _as_array(a), _as_array(b)
    if x.shape != y.shape or x.dtype != y.dtype:
        return f"shape {x.shape} {x.dtype} against {y.shape} {y.dtype}"
    if np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"):
        return ""
    at = tuple(int(i) for i in np.argwhere(x != y)[0])
    return f"{x[at]!r} against {y[at]!r} at {at}"


def check_mapped_token_sequences(cls: type, fit_data: Any = None, inputs: Any = None) -> None:
    """A vectorizer that reads documents, or a trained embedder, fitted on a memory-mapped corpus (the suite's
    sequences written by :func:`tokembed.encode.encode_corpus` and opened with
    :meth:`~tokembed.sequences.TokenSequences.open`: ``uint16`` ids on disk, what a recipe starting from an encoded
    folder hands it) learns exactly what it learns from the same sequences in memory: the saved artifacts are
    equal byte for byte (``seed=0``, ``workers=1``) and a vectorizer's ``transform`` of each gives equal output.
    A component reads the ids through :func:`~tokembed.sequences.as_token_sequences` (``int32`` in memory) or,
    to stay within bounded memory, range by range (``mapped=True`` and
    :meth:`~tokembed.sequences.TokenSequences.in_memory_chunks`). Not run with a custom ``fit_data`` (its
    tokenizer is unknown)."""
    if not _reads_token_sequences(cls) or isinstance(fit_data, TokenSequences):
        return
    from ..encode import encode_corpus

    memory = contract_sequences()
    overrides = _seed_overrides(cls)
    with tempfile.TemporaryDirectory() as tmp:
        encode_corpus(_word_tokenizer(), sample_corpus(), Path(tmp) / "encoded", progress=False)
        mapped = TokenSequences.open(Path(tmp) / "encoded")
        want, got = _make(cls, **overrides), _make(cls, **overrides)
        _fit(cls, want, memory)
        try:
            got.fit(mapped)
            out = got.transform(mapped) if cls.kind == "vectorizer" else None
        except Exception as exc:
            _fail(cls, f"on a memory-mapped TokenSequences (uint16 ids on disk, TokenSequences.open) it raised "
                       f"{type(exc).__name__}: {exc}; read the ids with as_token_sequences(X) (int32 in memory) "
                       "or range by range (mapped=True and seqs.in_memory_chunks())")
        if _artifact_bytes(cls, got, Path(tmp), "mapped") != _artifact_bytes(cls, want, Path(tmp), "memory"):
            _fail(cls, "fitted on a memory-mapped TokenSequences it saves another artifact than fitted on the same "
                       "sequences in memory")
        if cls.kind == "vectorizer":
            differ = _same_output(out, want.transform(memory))
            if differ:
                _fail(cls, f"transform of a memory-mapped TokenSequences differs from that of the same sequences in "
                           f"memory: {differ}")
