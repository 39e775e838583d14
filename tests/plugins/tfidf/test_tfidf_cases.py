"""bow, tfidf and onehot: the issue's cases with known values, edges, input forms, state, parameter checks."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from tokembed.errors import CorpusError, EmptyVocabularyError, NotFittedError, ParameterError, TokembedError
from tokembed.plugins.tfidf.onehot import OneHotVectorizer, load_onehot, save_onehot
from tokembed.plugins.tfidf.vectorizer import BagOfWords, TfidfVectorizer
from tokembed.plugins.word.tokenizer import WordTokenizer
from tokembed.sequences import TokenSequences
from tokembed.testing import sample_corpus


def names(vec):
    return list(vec.get_feature_names_out())


def check_csr(m):
    assert sp.isspmatrix_csr(m) or isinstance(m, sp.csr_array)
    assert m.has_sorted_indices and all(np.all(np.diff(m.indices[a:b]) > 0)
                                        for a, b in zip(m.indptr[:-1], m.indptr[1:]))
    assert (m.data != 0).all() and np.isfinite(m.data).all()


# -- the cases ------------------------------------------------------------------------------------------
def test_two_documents_smooth_idf_l2_by_hand():
    # n = 2; df(a) = 2, df(b) = df(c) = 1; idf = ln(3 / (1 + df)) + 1: idf(a) = 1, idf(b) = ln(1.5) + 1 = 1.4054651
    # row 0 = (1, 1.4054651, 0) / sqrt(1 + 1.4054651^2) = (0.5797387, 0.8148025, 0)
    vec = TfidfVectorizer(smooth_idf=True, norm="l2")
    X = vec.fit_transform(["a b", "a c"])
    assert names(vec) == ["a", "b", "c"] and vec.vocabulary_ == {"a": 0, "b": 1, "c": 2}
    np.testing.assert_allclose(vec.idf_, [1.0, 1.4054651, 1.4054651], atol=1e-6)
    np.testing.assert_allclose(X.toarray(), [[0.5797387, 0.8148025, 0], [0.5797387, 0, 0.8148025]], atol=1e-6)
    check_csr(X)


def test_word_punct_split_with_lowercase():
    vec = BagOfWords(pre_tokenizer="word_punct", lowercase=True).fit(["I saw a cat."])
    assert names(vec) == [".", "a", "cat", "i", "saw"]
    assert BagOfWords().fit(["7 8", "9 0"]).get_feature_names_out().shape == (4,)


def test_stop_words_that_remove_everything_are_named():
    with pytest.raises(EmptyVocabularyError, match="stop_words") as info:
        BagOfWords(stop_words=["the", "of", "and"]).fit(["the of", "and the"])
    assert "'and', 'of', 'the'" in str(info.value)


DOCS = ["x x x y", "y z", "z w", "w v"]


@pytest.mark.parametrize(("params", "kept"), [
    ({"min_df": 2}, ["w", "y", "z"]),  # x occurs 3 times, but in one document
    ({"max_df": 1}, ["v", "x"]),
    ({"max_df": 0.25}, ["v", "x"]),  # 0.25 of 4 documents = 1
])
def test_document_frequency_filters(params, kept):
    assert names(BagOfWords(**params).fit(DOCS)) == kept


def test_float_min_df_one_keeps_nothing_and_says_why():
    with pytest.raises(EmptyVocabularyError, match=r"min_df=1\.0") as info:
        BagOfWords(min_df=1.0).fit(DOCS)
    assert "4 documents of 4" in str(info.value)


def test_min_df_above_max_df_names_both():
    with pytest.raises(ParameterError, match="min_df=2") as info:
        BagOfWords(min_df=2, max_df=1).fit(DOCS)
    assert "max_df=1" in str(info.value) and isinstance(info.value, ValueError)
    # with a share, known only once the documents are counted: 0.75 of 4 = 3 > 2
    with pytest.raises(ParameterError, match=r"min_df=0\.75 \(3 documents of 4\) is above max_df=2"):
        BagOfWords(min_df=0.75, max_df=2).fit(DOCS)


def test_max_df_alone_removing_everything_is_named():
    with pytest.raises(EmptyVocabularyError, match=r"max_df=1 removed every term") as info:
        BagOfWords(max_df=1).fit(["a b", "b a"])
    assert "the rarest term is in 2 documents" in str(info.value)
    # below min_df in documents, max_df is a parameter problem naming both
    with pytest.raises(ParameterError, match=r"min_df=1 \(1 document of 4\) is above max_df=0\.0"):
        BagOfWords(max_df=0.0).fit(DOCS)


def test_integer_dtype_too_small_names_term_count_and_dtype():
    with pytest.raises(TokembedError, match="'x' occurs 300 times") as info:
        BagOfWords(dtype="uint8").fit_transform(["x " * 300 + "y"])
    assert "uint8" in str(info.value)
    X = BagOfWords(dtype="uint16").fit_transform(["x " * 300 + "y"])
    assert X.dtype == np.uint16 and X.toarray().tolist() == [[300, 1]]


# -- zero rows, never NaN -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("norm", ["l2", "l1", None])
@pytest.mark.parametrize("smooth_idf", [True, False])
@pytest.mark.parametrize("sublinear_tf", [True, False])
def test_zero_rows_stay_zero_and_nothing_is_nan(norm, smooth_idf, sublinear_tf):
    vec = TfidfVectorizer(norm=norm, smooth_idf=smooth_idf, sublinear_tf=sublinear_tf, vocabulary=["a", "b", "zz"])
    X = vec.fit_transform(["a a b", "", "!", "q r", "a"])
    assert np.isfinite(vec.idf_).all() and np.isfinite(X.data).all()
    dense = X.toarray()
    assert dense[1].tolist() == dense[2].tolist() == dense[3].tolist() == [0, 0, 0]
    check_csr(X)
    # "zz" never occurs (df = 0): ln((1 + 5) / 1) + 1 smoothed, ln(5 / 1) + 1 plain (scikit-learn: inf)
    assert vec.idf_[2] == pytest.approx(math.log(6) + 1 if smooth_idf else math.log(5) + 1)
    Y = vec.transform(["zz"])
    assert np.isfinite(Y.data).all() and Y.nnz == 1


def test_an_out_of_vocabulary_document_is_a_zero_row():
    vec = TfidfVectorizer().fit(["a b", "b c"])
    assert vec.transform(["d e", "", "a"]).toarray()[:2].tolist() == [[0, 0, 0], [0, 0, 0]]


# -- input forms ----------------------------------------------------------------------------------------------
def test_token_sequences_token_lists_and_raw_text_agree():
    docs = sample_corpus()
    tok = WordTokenizer(normalizer="lowercase").fit(docs)
    seqs = TokenSequences.from_tokenizer(tok, docs)
    lists = seqs.to_tokens()
    a = TfidfVectorizer().fit(seqs)
    b = TfidfVectorizer().fit(lists)
    c = TfidfVectorizer(pre_tokenizer="word_punct").fit([d.lower() for d in docs])
    assert names(a) == names(b)
    assert (abs(a.transform(seqs) - b.transform(lists)).max()) == 0
    # the word tokenizer keeps every word (no min_frequency): the same terms as splitting the text ourselves,
    # except the lowercase normalizer's final-sigma rule, irrelevant in English
    assert names(c) == names(a)
    assert abs(a.transform(seqs) - c.transform([d.lower() for d in docs])).max() < 1e-15


def test_recipe_pipeline_shape_tfidf_then_transform_of_new_sequences():
    docs = sample_corpus()
    tok = WordTokenizer(normalizer="lowercase", min_frequency=1).fit(docs)
    vec = TfidfVectorizer(sublinear_tf=True)
    X = vec.fit_transform(TokenSequences.from_tokenizer(tok, docs))
    assert X.shape == (len(docs), len(vec.vocabulary_))
    Y = vec.transform(TokenSequences.from_tokenizer(tok, docs[:3]))
    assert abs(Y - X[:3]).max() < 1e-15


def test_generators_are_read_once_and_strings_refused():
    vec = BagOfWords().fit(d for d in ["a b", "b c"])
    assert names(vec) == ["a", "b", "c"]
    with pytest.raises(TokembedError, match="one str"):
        vec.transform("a b")
    with pytest.raises(TokembedError, match="same form"):
        BagOfWords().fit(["a b", ["b"]])
    with pytest.raises(TokembedError, match="matrix"):
        BagOfWords().fit(sp.eye(3, format="csr"))
    with pytest.raises(CorpusError, match="no document"):
        BagOfWords().fit([])


def test_sklearn_pre_tokenizer_that_finds_nothing_says_so():
    with pytest.raises(EmptyVocabularyError, match="pre-tokenizer 'sklearn'"):
        BagOfWords(pre_tokenizer="sklearn").fit(["a b", "c"])


def test_lowercase_applies_to_raw_text_only():
    assert names(BagOfWords(lowercase=False).fit(["The the"])) == ["The", "the"]
    assert names(BagOfWords().fit(["The the"])) == ["the"]
    assert names(BagOfWords().fit([["The", "the"]])) == ["The", "the"]  # tokens are the tokenizer's decision


def test_custom_regex_pre_tokenizer():
    vec = BagOfWords(pre_tokenizer={"type": "regex", "pattern": r"\d+"}).fit(["a1b22", "22"])
    assert vec.vocabulary_ == {"1": 0, "22": 1}
    assert vec.transform(["22 22 1"]).toarray().tolist() == [[1, 2]]


# -- n-grams, stop words, fixed vocabulary, max_features ------------------------------------------------------------
def test_ngrams_are_formed_after_stop_words_are_removed():
    vec = BagOfWords(ngram_range=(2, 2), stop_words=["the"]).fit(["the cat the dog", "cat dog"])
    assert names(vec) == ["cat dog"]
    assert vec.transform(["cat the dog"]).toarray().tolist() == [[1]]


def test_stop_words_from_a_file(tmp_path):
    path = tmp_path / "stop.txt"
    path.write_text("the\n\n  of \n", encoding="utf-8")
    assert names(BagOfWords(stop_words=str(path)).fit(["the cat of the sea"])) == ["cat", "sea"]
    with pytest.raises(ParameterError, match="stop_words: no file"):
        BagOfWords(stop_words=str(tmp_path / "missing.txt")).fit(["a"])
    (tmp_path / "nul.txt").write_bytes(b"the\x00\nof\n")  # NUL is valid UTF-8: refused as a binary file
    assert BagOfWords.check_params({"stop_words": str(tmp_path / "nul.txt")}) == [
        ("stop_words", f"bow: stop_words: {str(tmp_path / 'nul.txt')!r} holds a NUL byte at character 3: a binary "
                       "file, not a word list")]


def test_fixed_vocabulary_orders_the_columns():
    vec = BagOfWords(vocabulary=["zebra", "a", "b"], min_df=5).fit(["a b b", "c"])
    assert names(vec) == ["zebra", "a", "b"]
    assert vec.transform(["b a c"]).toarray().tolist() == [[0, 1, 1]]
    vec = BagOfWords(vocabulary={"b": 0, "a": 1}).fit(["a b b"])
    assert names(vec) == ["b", "a"]
    with pytest.raises(ParameterError, match="twice"):
        BagOfWords(vocabulary=["a", "a"]).fit(["a"])
    with pytest.raises(ParameterError, match="columns must be exactly"):
        BagOfWords(vocabulary={"a": 0, "b": 2}).fit(["a"])


def test_max_features_keeps_the_most_frequent_ties_by_name():
    # corpus frequencies: a 4, b 2, c 2, d 1
    docs = ["a a b c", "a a d", "b c"]
    assert names(BagOfWords(max_features=1).fit(docs)) == ["a"]
    assert names(BagOfWords(max_features=2).fit(docs)) == ["a", "b"]  # b and c tie at 2: b first by name
    assert names(BagOfWords(max_features=10).fit(docs)) == ["a", "b", "c", "d"]


def test_binary_counts():
    assert BagOfWords(binary=True).fit_transform(["a a b"]).toarray().tolist() == [[1, 1]]
    X = TfidfVectorizer(binary=True, norm=None).fit_transform(["a a b", "a"])
    np.testing.assert_allclose(X.toarray(), [[1, math.log(3 / 2) + 1], [1, 0]])


# -- onehot -----------------------------------------------------------------------------------------------------------
def test_onehot_rows_are_tokens_with_offsets(tmp_path):
    vec = OneHotVectorizer(stop_words=["the"])
    M, offsets = vec.fit_transform(["the cat sat", "", "a cat"], return_offsets=True)
    assert names(vec) == ["a", "cat", "sat"]
    # the stop word keeps its row (a zero row): row i is token i
    assert M.toarray().tolist() == [[0, 0, 0], [0, 1, 0], [0, 0, 1], [1, 0, 0], [0, 1, 0]]
    assert offsets.tolist() == [0, 3, 3, 5] and M.dtype == np.float64
    bow = BagOfWords(stop_words=["the"]).fit(["the cat sat", "", "a cat"])
    summed = np.vstack([M[a:b].sum(axis=0) for a, b in zip(offsets[:-1], offsets[1:])])
    assert summed.tolist() == bow.transform(["the cat sat", "", "a cat"]).toarray().tolist()
    path = save_onehot(tmp_path / "m.npz", M, offsets)
    back, back_offsets = load_onehot(path)
    assert (back != M).nnz == 0 and back_offsets.tolist() == offsets.tolist()
    assert (sp.load_npz(path) != M).nnz == 0
    assert vec.transform([["cat", "dog"]]).toarray().tolist() == [[0, 1, 0], [0, 0, 0]]


# -- fitted state, errors -----------------------------------------------------------------------------------------
def test_save_load_keeps_the_stop_words_and_idf(tmp_path):
    vec = TfidfVectorizer(stop_words=["the"], ngram_range=(1, 2)).fit(["the cat the dog", "a cat"])
    vec.save(tmp_path / "v.tokembed.json")
    back = TfidfVectorizer.load(tmp_path / "v.tokembed.json")
    assert back.vocabulary_ == vec.vocabulary_ and np.array_equal(back.idf_, vec.idf_)
    assert abs(back.transform(["the cat dog"]) - vec.transform(["the cat dog"])).max() == 0
    with pytest.raises(TokembedError, match="loaded from an artifact"):
        back.partial_fit(["x"])


def test_not_fitted():
    with pytest.raises(NotFittedError):
        TfidfVectorizer().transform(["a"])
    with pytest.raises(NotFittedError):
        BagOfWords().get_feature_names_out()


@pytest.mark.parametrize(("params", "param"), [
    ({"min_df": 0}, "min_df"),
    ({"min_df": 1.5}, "min_df"),
    ({"max_df": -0.1}, "max_df"),
    ({"max_df": "1"}, "max_df"),
    ({"min_df": True}, "min_df"),
    ({"max_features": 0}, "max_features"),
    ({"ngram_range": (2, 1)}, "ngram_range"),
    ({"ngram_range": (0, 1)}, "ngram_range"),
    ({"ngram_range": 2}, "ngram_range"),
    ({"pre_tokenizer": "word_punk"}, "pre_tokenizer"),
    ({"dtype": "int8"}, "dtype"),  # tfidf values are floats
    ({"norm": "l3"}, "norm"),
    ({"binary": 1}, "binary"),
    ({"stop_words": 3}, "stop_words"),
    ({"vocabulary": []}, "vocabulary"),
])
def test_parameter_problems_name_the_parameter(params, param):
    with pytest.raises(ParameterError) as info:
        TfidfVectorizer(**params).fit(["a b"])
    assert info.value.param == param
    problems = TfidfVectorizer.check_params(params)
    assert [p for p, _ in problems] == [param]


def test_check_params_reports_every_problem_and_the_cross_check():
    problems = BagOfWords.check_params({"min_df": 0, "max_features": -1, "dtype": "complex"})
    assert [p for p, _ in problems] == ["min_df", "max_features", "dtype"]
    assert BagOfWords.check_params({"min_df": 3, "max_df": 2}) == [
        (None, "bow: min_df=3 is above max_df=2: no term can be in at least 3 and at most 2 documents; lower min_df "
               "or raise max_df")]
    # two shares: impossible whatever the number of documents (0.9 n > 0.1 n), so known before any
    assert BagOfWords.check_params({"min_df": 0.9, "max_df": 0.1}) == [
        (None, "bow: min_df=0.9 is above max_df=0.1: no term can be in at least 90% and at most 10% of the documents; "
               "lower min_df or raise max_df")]
    assert BagOfWords.check_params({"min_df": 0.5, "max_df": 2}) == []  # mixed: depends on the corpus, left to fit


@pytest.mark.parametrize("cls", [BagOfWords, TfidfVectorizer, OneHotVectorizer])
def test_two_bad_values_are_both_reported_by_check_params_and_fit(cls):
    bad = {"max_features": 0, "lowercase": 1}
    assert cls.check_params(bad) == [
        ("lowercase", f"{cls.name}: lowercase must be true or false, got 1 (use true/false: true where gensim "
                      "takes 1)"),
        ("max_features", f"{cls.name}: max_features must be an int >= 1 or null, got 0"),
    ]
    with pytest.raises(ParameterError) as info:  # fit: every problem in one error, not the first only
        cls(**bad).fit(["a b"])
    assert [e.param for e in info.value.errors] == ["lowercase", "max_features"]
    assert str(info.value).startswith(f"{cls.name}: 2 invalid parameters: lowercase must be true or false")


def test_document_frequency_messages_say_what_an_int_and_a_float_mean():
    (param, message), = BagOfWords.check_params({"min_df": 0})
    assert (param, message) == ("min_df", "bow: min_df must be a share of the documents (a float in [0, 1]) or a "
                                          "number of documents (an int >= 1), got 0 (an int means something else "
                                          "here: write it with a decimal point)")
    assert BagOfWords.check_params({"max_df": 1.5})[0][1].endswith("got 1.5")
    assert BagOfWords.check_params({"min_df": 0.0, "max_df": 1}) == []  # 0.0 is a share (no lower bound); 1 one doc


def test_a_word_list_is_a_list_a_set_or_a_file(tmp_path):
    assert names(BagOfWords(stop_words={"b", "c"}).fit(["a b c d"])) == ["a", "d"]
    (tmp_path / "stop.txt").write_text("b\n\n c \n", encoding="utf-8")
    assert names(BagOfWords(stop_words=str(tmp_path / "stop.txt")).fit(["a b c d"])) == ["a", "d"]
    assert TfidfVectorizer.check_params({"stop_words": ["a", 3]}) == [
        ("stop_words", "tfidf: stop_words must be a list of str or a path or null, got ['a', 3]")]
    assert TfidfVectorizer.check_params({"vocabulary": {"a": 1.0}}) == [
        ("vocabulary", "tfidf: vocabulary must be a list of str or a mapping of a str to an int >= 0 or a path or "
                       "null, got {'a': 1.0}")]
    # the file is read by the checks: a missing one is named before any work
    assert TfidfVectorizer.check_params({"stop_words": str(tmp_path / "none.txt")}) == [
        ("stop_words", f"tfidf: stop_words: no file {str(tmp_path / 'none.txt')!r} (give a list of words, or a file "
                       "with one word per line)")]
