"""The co-occurrence vectorizer against a plain-Python GloVe ``cooccur`` loop (exact), its partial counts, PPMI and
the edges."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from tokembed.errors import EmptyVocabularyError, NotFittedError, TokembedError
from tokembed.plugins.cooccurrence import (
    CooccurrenceCounts,
    CooccurrenceVectorizer,
    cooccurrence_coo,
    count_cooccurrences,
    ppmi_matrix,
    select_vocabulary,
)
from tokembed.plugins.cooccurrence.counting import weight_scale
from tokembed.sequences import TokenSequences
from tokembed.testing import sample_corpus

from .naive import glove_cooccur, glove_vocab, ppmi_dense, to_dense


def _moby(n_chars=6000):
    return [p.lower().split() for p in sample_corpus(n_chars)]


def _zipf_docs(seed, n_docs=40, max_len=60, n_words=50):
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, n_words + 1)
    p /= p.sum()
    return [[f"w{int(x)}" for x in rng.choice(n_words, size=int(rng.integers(0, max_len)), p=p)]
            for _ in range(n_docs)]


def _rows(seqs, vocab):
    index = {w: i for i, w in enumerate(vocab)}
    return np.array([index.get(t, -1) for t in seqs.vocab], dtype=np.int32)


def _reference(docs, window, symmetric, weighting, min_count=1, max_vocab=None):
    vocab, counts = glove_vocab(docs, min_count, max_vocab)
    X = glove_cooccur(docs, vocab, window, symmetric, weighting == "harmonic")
    return vocab, counts, X


# -- parity with GloVe's cooccur loop ---------------------------------------------------------------------------
CORPORA = {"moby": _moby(), "zipf": _zipf_docs(0), "tiny": [["a", "b", "c", "a", "b"], ["b", "c", "d"],
                                                              ["a", "a", "a", "b"], [], ["d"]]}


@pytest.mark.parametrize("corpus", sorted(CORPORA))
@pytest.mark.parametrize("window", [1, 2, 5, 10])
@pytest.mark.parametrize("symmetric", [True, False])
@pytest.mark.parametrize("weighting", ["harmonic", "uniform"])
def test_vectorizer_equals_the_glove_loop_exactly(corpus, window, symmetric, weighting):
    docs = CORPORA[corpus]
    vocab, counts, X = _reference(docs, window, symmetric, weighting, min_count=2)
    cv = CooccurrenceVectorizer(window=window, symmetric=symmetric, weighting=weighting, min_count=2,
                                dtype="float64").fit(docs)
    assert cv.index_to_key_ == vocab
    assert cv.counts_.tolist() == counts
    expected = to_dense(X, len(vocab))
    got = cv.matrix_
    assert got.dtype == np.float64 and got.has_sorted_indices
    assert np.all(got.data > 0)  # no explicit zeros
    # float64: the exact sum rounded once, so bit-equal to float(Fraction)
    np.testing.assert_array_equal(got.toarray(), expected)
    if symmetric:
        assert (got != got.T).nnz == 0
    f32 = CooccurrenceVectorizer(window=window, symmetric=symmetric, weighting=weighting, min_count=2).fit(docs)
    assert f32.matrix_.dtype == np.float32
    np.testing.assert_array_equal(f32.matrix_.toarray(), expected.astype(np.float32))


@pytest.mark.parametrize("window, symmetric, weighting", [(10, True, "harmonic"), (3, False, "harmonic"),
                                                        (7, True, "uniform")])
def test_vectorizer_equals_a_sparse_matrix_product(window, symmetric, weighting):
    """An independent algorithm: X = A^T B A (+ its transpose when symmetric), with A the (tokens x V) one-hot
    matrix of the kept tokens laid end to end and B the (tokens x tokens) band B[p, q] = weight(q - p) for
    0 < q - p <= window inside one document (1 / distance or 1). No window loop, no history: SciPy's sparse
    products sum the pairs. On 60,000 characters of Moby-Dick, min_count 3."""
    from collections import Counter

    docs = _moby(60_000)
    counts = Counter(t for d in docs for t in d)
    vocab = sorted((w for w, c in counts.items() if c >= 3), key=lambda w: (-counts[w], w))
    index = {w: i for i, w in enumerate(vocab)}
    kept = [[index[t] for t in d if t in index] for d in docs]  # words below min_count go before windowing
    ids = np.array([i for d in kept for i in d], dtype=np.int64)
    doc_of = np.repeat(np.arange(len(kept)), [len(d) for d in kept])
    n = ids.size
    A = sp.csr_matrix((np.ones(n), (np.arange(n), ids)), shape=(n, len(vocab)))
    rows, cols, vals = [], [], []
    for d in range(1, window + 1):
        p = np.flatnonzero(doc_of[:-d] == doc_of[d:])  # both ends in one document
        rows.append(p)
        cols.append(p + d)
        vals.append(np.full(p.size, 1.0 / d if weighting == "harmonic" else 1.0))
    B = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n))
    X = (A.T @ B @ A).toarray()
    if symmetric:
        X = X + X.T
    cv = CooccurrenceVectorizer(window=window, symmetric=symmetric, weighting=weighting, min_count=3,
                                dtype="float64").fit(docs)
    assert cv.index_to_key_ == vocab and len(vocab) > 500
    np.testing.assert_allclose(cv.matrix_.toarray(), X, rtol=1e-12, atol=0)
    assert cv.matrix_.nnz == np.count_nonzero(X)


@pytest.mark.parametrize("dense_words", [0, 1, 3, 10_000])
@pytest.mark.parametrize("buffer_keys", [1, 7, 64, None])
@pytest.mark.parametrize("workers", [1, 2, 3])
def test_kernel_paths_agree_with_the_loop(dense_words, buffer_keys, workers):
    """Dense block, sorted runs of any size (many merges), and threads cutting documents: all the same counts."""
    docs = CORPORA["zipf"]
    seqs = TokenSequences.from_tokens(docs)
    for symmetric in (True, False):
        vocab, _, X = _reference(docs, 4, symmetric, "harmonic", min_count=3)
        c = count_cooccurrences(seqs.ids, seqs.offsets, _rows(seqs, vocab), len(vocab), window=4,
                                symmetric=symmetric, workers=workers, dense_words=dense_words,
                                buffer_keys=buffer_keys)
        np.testing.assert_array_equal(c.to_csr(np.float64).toarray(), to_dense(X, len(vocab)))


def test_hand_computed_values():
    # "a b c a b" / "b c d" / "a a a b", window 2, harmonic, symmetric (vocabulary a:5, b:4, c:2, d:1)
    # a-a: only in "a a a b": distances 1, 2, 1 -> 2.5 in each direction -> X[a, a] = 5
    # a-b: "a b" (1) + "b . a" (2: b at 1, a at 3) + "a b" (1) in line 1, "a . b" (1/2) + "a b" (1) in line 3 = 4
    docs = [["a", "b", "c", "a", "b"], ["b", "c", "d"], ["a", "a", "a", "b"]]
    cv = CooccurrenceVectorizer(window=2, min_count=1, dtype="float64").fit(docs)
    assert cv.index_to_key_ == ["a", "b", "c", "d"]
    np.testing.assert_array_equal(cv.matrix_.toarray(), [[5.0, 4.0, 1.5, 0.0],
                                                          [4.0, 0.0, 2.5, 0.5],
                                                          [1.5, 2.5, 0.0, 1.0],
                                                          [0.0, 0.5, 1.0, 0.0]])
    left = CooccurrenceVectorizer(window=2, min_count=1, symmetric=False, dtype="float64").fit(docs)
    # rows are the left word: "c d" puts 1 at X[c, d] and nothing at X[d, c]
    assert left.matrix_[2, 3] == 1.0 and left.matrix_[3, 2] == 0.0
    np.testing.assert_array_equal((left.matrix_ + left.matrix_.T).toarray(), cv.matrix_.toarray())


def test_filtered_words_are_removed_before_windowing():
    # x is below min_count: "a x b" makes a and b adjacent (distance 1, weight 1), as GloVe's cooccur does
    docs = [["a", "x", "b"], ["a", "b"], ["b", "a", "y", "y"]]
    cv = CooccurrenceVectorizer(window=1, min_count=2, dtype="float64").fit(docs)
    assert cv.index_to_key_ == ["a", "b", "y"]  # a:3, b:3, y:2 (tie a/b broken by the key)
    assert cv.matrix_[0, 1] == 3.0  # a-b adjacent in each line once x is gone
    # max_vocab keeps the two most frequent, and y is then removed before windowing too
    top2 = CooccurrenceVectorizer(window=1, min_count=1, max_vocab=2, dtype="float64").fit(docs)
    assert top2.index_to_key_ == ["a", "b"]
    np.testing.assert_array_equal(top2.matrix_.toarray(), [[0.0, 3.0], [3.0, 0.0]])
    vocab, _, X = _reference(docs, 1, True, "harmonic", min_count=1, max_vocab=2)
    np.testing.assert_array_equal(top2.matrix_.toarray(), to_dense(X, 2))


def test_vocabulary_order_and_ties_follow_vocab_count():
    keys = ["b", "a", "é", "c", "Z"]
    counts = np.array([3, 3, 5, 1, 3])
    kept = select_vocabulary(keys, counts, min_count=2)
    # count descending (é:5), then ties by code point: "Z" (U+005A) < "a" < "b"; c dropped by min_count
    assert [keys[i] for i in kept] == ["é", "Z", "a", "b"]
    assert [keys[i] for i in select_vocabulary(keys, counts, min_count=1, max_vocab=2)] == ["é", "Z"]


def test_special_ids_are_dropped_like_filtered_words():
    # vocab: 0 <pad>, 1 a, 2 b; "<pad>" between a and b is removed before windowing
    seqs = TokenSequences([1, 0, 2, 1, 2], [0, 3, 5], ["<pad>", "a", "b"], special_ids=[0])
    cv = CooccurrenceVectorizer(window=1, min_count=1, dtype="float64").fit(seqs)
    assert cv.index_to_key_ == ["a", "b"]
    assert cv.token_ids_.tolist() == [1, 2]
    np.testing.assert_array_equal(cv.matrix_.toarray(), [[0.0, 2.0], [2.0, 0.0]])


def test_token_ids_map_rows_back_to_the_tokenizer():
    seqs = TokenSequences.from_tokens([["x", "y", "y", "z", "y", "z"]])
    cv = CooccurrenceVectorizer(window=2, min_count=1).fit(seqs)
    assert [seqs.vocab[i] for i in cv.token_ids_] == cv.index_to_key_ == ["y", "z", "x"]
    assert cv.vocabulary_ == {"y": 0, "z": 1, "x": 2}


def test_no_pair_across_a_document_boundary():
    docs = [["a"], ["b"], ["a"], ["b"]]  # "apple\nbanana\napple\nbanana" as lines
    with pytest.raises(EmptyVocabularyError, match="no co-occurrence pair"):
        CooccurrenceVectorizer(min_count=1).fit(docs)
    cv = CooccurrenceVectorizer(window=3, min_count=1).fit([["a", "b"], ["b", "c"]])
    assert cv.matrix_[cv.vocabulary_["a"], cv.vocabulary_["c"]] == 0


def test_empty_cases_raise_clear_errors_never_nan():
    with pytest.raises(EmptyVocabularyError, match=r"min_count=5.*largest count is 2"):
        CooccurrenceVectorizer(min_count=5).fit([["a", "b", "a"], ["b"]])
    with pytest.raises(EmptyVocabularyError):
        CooccurrenceVectorizer(min_count=1).fit([])
    with pytest.raises(EmptyVocabularyError):
        CooccurrenceVectorizer(min_count=1).fit([[], []])
    with pytest.raises(EmptyVocabularyError, match="special"):
        CooccurrenceVectorizer(min_count=1).fit(TokenSequences([0, 0], [0, 2], ["<pad>"], special_ids=[0]))
    cv = CooccurrenceVectorizer(min_count=1, ppmi=True).fit([["a", "b"]])
    for X in ([["a"], ["b"]], [], [["q", "r"]]):  # no pair over the fitted vocabulary: a zero matrix
        out = cv.transform(X)
        assert out.shape == (2, 2) and out.nnz == 0 and np.isfinite(out.toarray()).all()
    with pytest.raises(TokembedError):
        CooccurrenceVectorizer().fit("one string")


def test_transform_uses_the_fitted_vocabulary():
    docs = _moby(4000)
    cv = CooccurrenceVectorizer(window=3, min_count=3).fit(docs)
    np.testing.assert_array_equal(cv.transform(docs).toarray(), cv.matrix_.toarray())
    other = [["the", "zzzz", "whale"], ["whale", "the"]]
    vocab = cv.index_to_key_
    X = glove_cooccur(other, vocab, 3)  # zzzz is out of the vocabulary: dropped before windowing
    np.testing.assert_array_equal(cv.transform(other).toarray(), to_dense(X, len(vocab), np.float32))
    np.testing.assert_array_equal(cv.get_feature_names_out(), np.array(vocab))


# -- partial counts ---------------------------------------------------------------------------------------------
def _chunked(seqs, cuts):
    return [seqs.slice(a, b) for a, b in zip(cuts[:-1], cuts[1:])]


@settings(deadline=None, max_examples=60)
@given(docs=st.lists(st.lists(st.sampled_from("abcdefg"), max_size=25), max_size=12),
       cut_points=st.lists(st.integers(0, 12), max_size=4),
       window=st.integers(1, 6), symmetric=st.booleans(), weighting=st.sampled_from(["harmonic", "uniform"]),
       workers=st.integers(1, 3), dense=st.integers(0, 8), buffer_keys=st.integers(1, 40))
def test_chunked_counting_equals_one_pass(docs, cut_points, window, symmetric, weighting, workers, dense,
                                          buffer_keys):
    seqs = TokenSequences.from_tokens(docs)
    kept = select_vocabulary(seqs.vocab, seqs.counts(), 1)
    rows = np.full(seqs.vocab_size, -1, np.int32)
    rows[kept[: max(1, kept.size - 1)]] = np.arange(min(kept.size, max(1, kept.size - 1)))  # drop one word
    n_rows = int((rows >= 0).sum())
    kw = dict(window=window, symmetric=symmetric, weighting=weighting)
    whole = count_cooccurrences(seqs.ids, seqs.offsets, rows, n_rows, workers=1, **kw)
    cuts = sorted({0, len(seqs), *[min(c, len(seqs)) for c in cut_points]})
    cuts = cuts if len(cuts) > 1 else [0, 0]  # no document: one empty chunk
    parts = [count_cooccurrences(p.ids, p.offsets, rows, n_rows, workers=workers, dense_words=dense,
                                 buffer_keys=buffer_keys, **kw) for p in _chunked(seqs, cuts)]
    merged = CooccurrenceCounts.merge_all(parts[::-1])
    assert np.array_equal(merged.keys, whole.keys) and np.array_equal(merged.sums, whole.sums)
    assert merged.n_tokens == whole.n_tokens
    # and the reference loop, exactly
    if n_rows:
        vocab = [None] * n_rows
        for i, r in enumerate(rows.tolist()):
            if r >= 0:
                vocab[r] = seqs.vocab[i]
        X = glove_cooccur(docs, vocab, window, symmetric, weighting == "harmonic")
        np.testing.assert_array_equal(merged.to_csr(np.float64).toarray(), to_dense(X, n_rows))


def test_partial_fit_in_two_passes_equals_fit():
    docs = _moby(12000)
    seqs = TokenSequences.from_tokens(docs)
    ref = CooccurrenceVectorizer(window=5, min_count=2).fit(seqs)
    cv = CooccurrenceVectorizer(window=5, min_count=2)
    with pytest.raises(NotFittedError, match="partial_fit_vocabulary"):
        cv.partial_fit(seqs)
    for chunk in seqs.chunks(3):
        cv.partial_fit_vocabulary(chunk)
    for chunk in seqs.chunks(3):
        cv.partial_fit(chunk)
    assert cv.index_to_key_ == ref.index_to_key_
    assert cv.counts_.tolist() == ref.counts_.tolist()
    assert cv.token_ids_.tolist() == ref.token_ids_.tolist()
    assert cv.n_tokens_ == ref.n_tokens_
    assert (cv.matrix_ != ref.matrix_).nnz == 0
    with pytest.raises(TokembedError, match="fixed"):
        cv.partial_fit_vocabulary(seqs)
    # chunks given as token lists (each with its own vocabulary) give the same matrix
    lists = CooccurrenceVectorizer(window=5, min_count=2)
    for i in range(0, len(docs), 4):
        lists.partial_fit_vocabulary(docs[i:i + 4])
    for i in range(0, len(docs), 4):
        lists.partial_fit(docs[i:i + 4])
    assert lists.index_to_key_ == ref.index_to_key_ and (lists.matrix_ != ref.matrix_).nnz == 0


def test_partial_fit_with_no_pair_raises_when_the_matrix_is_read():
    cv = CooccurrenceVectorizer(min_count=1)
    cv.partial_fit_vocabulary([["a"], ["b"]]).partial_fit([["a"], ["b"]])
    with pytest.raises(EmptyVocabularyError, match="no co-occurrence pair"):
        cv.matrix_


def test_merge_refuses_other_settings():
    seqs = TokenSequences.from_tokens([["a", "b"]])
    rows = np.arange(2, dtype=np.int32)
    a = count_cooccurrences(seqs.ids, seqs.offsets, rows, 2, window=2)
    b = count_cooccurrences(seqs.ids, seqs.offsets, rows, 2, window=3)
    with pytest.raises(TokembedError, match="cannot merge"):
        a.merge(b)


def test_workers_do_not_change_a_bit():
    seqs = TokenSequences.from_tokens(_moby(20000))
    kept = select_vocabulary(seqs.vocab, seqs.counts(), 2)
    rows = np.full(seqs.vocab_size, -1, np.int32)
    rows[kept] = np.arange(kept.size)
    outs = [count_cooccurrences(seqs.ids, seqs.offsets, rows, kept.size, workers=w, dense_words=d, buffer_keys=b)
            for w, d, b in [(1, None, None), (2, 5, 100), (3, 0, 33)]]
    for o in outs[1:]:
        assert np.array_equal(o.keys, outs[0].keys) and np.array_equal(o.sums, outs[0].sums)


# -- the low-level COO function ---------------------------------------------------------------------------------
def test_cooccurrence_coo_is_the_matrix_as_sorted_coo():
    docs = _moby(5000)
    seqs = TokenSequences.from_tokens(docs)
    cv = CooccurrenceVectorizer(window=4, min_count=2, dtype="float64").fit(seqs)
    rows = np.full(seqs.vocab_size, -1, np.int32)
    rows[cv.token_ids_] = np.arange(len(cv.index_to_key_))
    r, c, v = cooccurrence_coo(seqs.ids, seqs.offsets, rows, len(cv.index_to_key_), window=4)
    assert r.dtype == np.int32 and c.dtype == np.int32 and v.dtype == np.float64
    assert np.all(np.diff(r.astype(np.int64) * len(cv.index_to_key_) + c) > 0)  # sorted by (row, col), unique
    m = cv.matrix_.tocoo()
    np.testing.assert_array_equal(r, m.row)
    np.testing.assert_array_equal(c, m.col)
    np.testing.assert_array_equal(v, m.data)
    _, _, v32 = cooccurrence_coo(seqs.ids, seqs.offsets, rows, len(cv.index_to_key_), window=4, dtype=np.float32)
    assert v32.dtype == np.float32 and np.array_equal(v32, v.astype(np.float32))


# -- weights ----------------------------------------------------------------------------------------------------
def test_weight_scale():
    assert weight_scale(10, "harmonic")[0] == 2520  # lcm(1..10)
    scale, w = weight_scale(10, "harmonic")
    assert all(scale % d == 0 and w[d - 1] * d == scale for d in range(1, 11))
    assert weight_scale(22, "harmonic")[0] == 232792560  # lcm(1..22), the largest exact scale
    scale, w = weight_scale(30, "harmonic")  # fixed point 2^24 beyond that
    assert scale == 2**24
    np.testing.assert_allclose(w / scale, 1.0 / np.arange(1, 31), rtol=30 * 2**-25)
    assert weight_scale(7, "uniform")[0] == 1


def test_wide_window_is_close_and_still_order_independent():
    docs = _zipf_docs(3, n_docs=10, max_len=80)
    vocab, _, X = _reference(docs, 30, True, "harmonic")
    cv = CooccurrenceVectorizer(window=30, min_count=1, dtype="float64").fit(docs)
    np.testing.assert_allclose(cv.matrix_.toarray(), to_dense(X, len(vocab)), rtol=1e-6)
    seqs = TokenSequences.from_tokens(docs)
    rows = _rows(seqs, vocab)
    a = count_cooccurrences(seqs.ids, seqs.offsets, rows, len(vocab), window=30, workers=1)
    b = count_cooccurrences(seqs.ids, seqs.offsets, rows, len(vocab), window=30, workers=3, dense_words=2,
                            buffer_keys=50)
    assert np.array_equal(a.sums, b.sums)


# -- PPMI -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shift,cds", [(1.0, 0.75), (5.0, 0.75), (1.0, 1.0), (2.0, 0.5)])
@pytest.mark.parametrize("symmetric", [True, False])
def test_ppmi_against_numpy(shift, cds, symmetric):
    docs = _moby(8000)
    raw = CooccurrenceVectorizer(window=4, min_count=2, symmetric=symmetric, dtype="float64").fit(docs)
    cv = CooccurrenceVectorizer(window=4, min_count=2, symmetric=symmetric, ppmi=True, shift=shift, cds=cds,
                                dtype="float64").fit(docs)
    expected = ppmi_dense(raw.matrix_.toarray(), shift, cds)
    np.testing.assert_allclose(cv.matrix_.toarray(), expected, rtol=1e-12, atol=1e-12)
    assert cv.matrix_.nnz == np.count_nonzero(expected)  # zeros removed, none stored
    assert cv.matrix_.has_sorted_indices and np.isfinite(cv.matrix_.data).all()
    f32 = CooccurrenceVectorizer(window=4, min_count=2, symmetric=symmetric, ppmi=True, shift=shift,
                                 cds=cds).fit(docs)
    assert f32.matrix_.dtype == np.float32
    np.testing.assert_array_equal(f32.matrix_.toarray(), expected.astype(np.float32))


def test_ppmi_of_a_zero_matrix_is_zero():
    out = ppmi_matrix(sp.csr_matrix((3, 3)))
    assert out.nnz == 0 and out.shape == (3, 3)


# -- parameters -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("params,param", [
    ({"window": 0}, "window"), ({"window": 2.5}, "window"), ({"min_count": 0}, "min_count"),
    ({"max_vocab": 0}, "max_vocab"), ({"weighting": "gaussian"}, "weighting"), ({"shift": 0}, "shift"),
    ({"shift": float("nan")}, "shift"), ({"cds": 0}, "cds"), ({"cds": 1.5}, "cds"), ({"dtype": "int8"}, "dtype"),
    ({"symmetric": "yes"}, "symmetric"), ({"ppmi": 1}, "ppmi"), ({"workers": 0}, "workers"),
])
def test_bad_parameters_are_named(params, param):
    problems = CooccurrenceVectorizer.check_params(params)
    assert [p for p, _ in problems] == [param]
    with pytest.raises(TokembedError, match=param):
        CooccurrenceVectorizer(**params).fit([["a", "b"]])


def test_all_bad_parameters_are_reported_together():
    problems = CooccurrenceVectorizer.check_params({"window": 0, "cds": 2, "min_count": -1})
    assert sorted(p for p, _ in problems) == ["cds", "min_count", "window"]


def test_save_load_keeps_the_matrix(tmp_path):
    cv = CooccurrenceVectorizer(window=3, min_count=2, ppmi=True).fit(_moby(5000))
    cv.save(tmp_path / "c.tokembed.json")
    back = CooccurrenceVectorizer.load(tmp_path / "c.tokembed.json")
    assert back.index_to_key_ == cv.index_to_key_ and back.matrix_.dtype == np.float32
    assert (back.matrix_ != cv.matrix_).nnz == 0
    np.testing.assert_array_equal(back.token_ids_, cv.token_ids_)


def test_unfitted_use_raises():
    cv = CooccurrenceVectorizer()
    with pytest.raises(NotFittedError):
        cv.transform([["a"]])
    with pytest.raises(NotFittedError):
        cv.matrix_


# -- the Stanford tools themselves, when built locally ----------------------------------------------------------
def _glove_bin():
    import os
    from pathlib import Path

    path = Path(os.environ.get("TOKEMBED_GLOVE_BIN", "/work/ref/GloVe/build"))
    return path if (path / "cooccur").is_file() and (path / "vocab_count").is_file() else None


@pytest.mark.skipif(_glove_bin() is None, reason="Stanford GloVe tools not built (set TOKEMBED_GLOVE_BIN)")
@pytest.mark.parametrize("symmetric", [1, 0])
def test_equals_stanford_cooccur_binary(tmp_path, symmetric):
    import subprocess

    bin_dir = _glove_bin()
    # ASCII words only: vocab_count breaks count ties with C's signed char comparison, which puts words with
    # non-ASCII bytes first; we break them by code point
    docs = [[t for t in d if t.isascii()] for d in _moby(20000)]
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(" ".join(d) for d in docs) + "\n")
    with open(corpus, "rb") as f:
        vocab_txt = subprocess.run([str(bin_dir / "vocab_count"), "-min-count", "2", "-verbose", "0"], stdin=f,
                                   capture_output=True, check=True).stdout
    (tmp_path / "vocab.txt").write_bytes(vocab_txt)
    # a small dense table and overflow buffer, so that both of cooccur's paths and its merge are used (its first
    # record is written twice when an overflow file is empty: not the case here)
    with open(corpus, "rb") as f:
        out = subprocess.run([str(bin_dir / "cooccur"), "-vocab-file", str(tmp_path / "vocab.txt"), "-window-size",
                              "6", "-symmetric", str(symmetric), "-verbose", "0", "-max-product", "200",
                              "-overflow-length", "5000", "-overflow-file", str(tmp_path / "overflow")], stdin=f,
                             capture_output=True, check=True).stdout
    rec = np.frombuffer(out, dtype=[("a", "<i4"), ("b", "<i4"), ("v", "<f8")])
    words = [line.split(" ")[0] for line in vocab_txt.decode().splitlines()]
    cv = CooccurrenceVectorizer(window=6, min_count=2, symmetric=bool(symmetric), dtype="float64").fit(docs)
    assert cv.index_to_key_ == words
    ours = cv.matrix_.tocoo()
    theirs = sp.coo_matrix((rec["v"], (rec["a"] - 1, rec["b"] - 1)), shape=ours.shape).tocsr()
    assert theirs.nnz == ours.nnz == rec.size
    np.testing.assert_allclose(ours.toarray(), theirs.toarray(), rtol=1e-12)


@settings(deadline=None, max_examples=25)
@given(docs=st.lists(st.lists(st.sampled_from("abcdefgh"), max_size=12), min_size=2, max_size=12),
       n=st.integers(1, 9), cut=st.integers(0, 12))
def test_row_shards_merged_apart_and_joined_equal_the_merged_counts(docs, n, cut):
    """Shard k of n holds rows k*V//n .. (k+1)*V//n - 1; each shard merged with the same shard of another part,
    then the n joined in order, equals merging the whole counts (what the cluster's per-shard trees compute)."""
    from tokembed.plugins.cooccurrence.counting import CooccurrenceCounts

    cut = min(cut, len(docs))
    vec = CooccurrenceVectorizer(window=3, min_count=1)
    try:
        vec.fit_counts(vec.partial_counts(docs))
    except EmptyVocabularyError:
        return  # no token at all
    a, b = vec.partial_counts(docs[:cut]), vec.partial_counts(docs[cut:])
    whole = a.merge(b)
    joined = CooccurrenceCounts.concat([a.shard(k, n).merge(b.shard(k, n)) for k in range(n)])
    assert np.array_equal(joined.keys, whole.keys) and np.array_equal(joined.sums, whole.sums)
    assert joined.n_tokens == whole.n_tokens
    V = whole.n_rows
    for k in range(n):  # every key of shard k is a cell of one of its rows
        rows = whole.shard(k, n).keys // V
        assert np.all((rows >= k * V // n) & (rows < (k + 1) * V // n))
