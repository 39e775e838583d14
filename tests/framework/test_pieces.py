"""Word vectors composed from piece vectors (tokembed.pieces), checked by hand."""

import numpy as np
import pytest

from tokembed.errors import TokembedError
from tokembed.keyedvectors import KeyedVectors
from tokembed.pieces import compose_word_vectors, word_pieces
from tokembed.plugins.char.tokenizer import CharTokenizer
from tokembed.plugins.word.tokenizer import WordTokenizer


@pytest.fixture(scope="module")
def chars():
    return CharTokenizer(unk_token="<unk>").fit(["the cat sat", "dog"])


def test_a_word_of_three_pieces_gets_the_mean_of_their_rows(chars):
    # "cat" is three character tokens c, a, t; their rows are (1, 0), (0, 2), (3, 4): mean (4/3, 2), sum (4, 6)
    kv = KeyedVectors.from_arrays(["c", "a", "t", "d"], np.array([[1, 0], [0, 2], [3, 4], [9, 9]], np.float32))
    assert word_pieces(chars, ["cat"]) == [["c", "a", "t"]]
    mean = compose_word_vectors(chars, kv, ["cat", "Cat"], "mean")
    assert mean.vectors.index_to_key == ["cat"]  # "Cat" is lowercased to the same word
    assert np.allclose(mean.vectors["cat"], [4 / 3, 2.0])
    total = compose_word_vectors(chars, kv, ["cat"], "sum")
    assert np.allclose(total.vectors["cat"], [4.0, 6.0])
    assert (mean.words, mean.single_token, mean.covered) == (1, 0, 1)


def test_pieces_without_a_vector_are_skipped_and_a_word_without_any_is_left_out(chars):
    kv = KeyedVectors.from_arrays(["c", "t"], np.array([[2, 2], [4, 0]], np.float32))
    out = compose_word_vectors(chars, kv, ["cat", "dog", "t"])
    # "cat": a has no row, mean of c and t = (3, 1); "dog": no piece has a row; "t": one token with a row
    assert out.vectors.index_to_key == ["cat", "t"] and np.allclose(out.vectors["cat"], [3.0, 1.0])
    assert (out.words, out.single_token, out.covered) == (3, 1, 2)
    assert out.single_token_share == pytest.approx(1 / 3) and out.covered_share == pytest.approx(2 / 3)


def test_words_are_encoded_as_inside_running_text():
    words = WordTokenizer().fit(["the whale and the sea"])
    assert word_pieces(words, ["whale", "kraken"]) == [["whale"], ["<unk>"]]


def test_the_single_token_share_is_the_tokenizers_not_the_vectors():
    words = WordTokenizer(unk_token="<unk>").fit(["the whale and the sea"])
    kv = KeyedVectors.from_arrays(["whale", "<unk>"], np.eye(2, dtype=np.float32))
    out = compose_word_vectors(words, kv, ["whale", "sea", "kraken"])
    # whale and sea are one token each (sea has no vector: still kept whole); kraken is <unk>, one special token
    assert out.single_token == 2
    assert out.vectors.index_to_key == ["whale"]  # the <unk> row is no vector for kraken


def test_fasttext_mode_asks_the_vectors_for_the_whole_word_first(chars):
    class WithOOV(KeyedVectors):
        def _oov_vector(self, key):
            return np.full(self.vector_size, 7.0, np.float32) if key == "cat" else None

    kv = WithOOV.from_arrays(["c", "a", "t"], np.eye(3, dtype=np.float32))
    out = compose_word_vectors(chars, kv, ["cat", "ta"], "fasttext")
    assert np.allclose(out.vectors["cat"], 7.0)  # the model's own vector for the word
    assert np.allclose(out.vectors["ta"], [0.0, 0.5, 0.5])  # no model vector: the mean of t and a
    with pytest.raises(TokembedError, match="compose must be one of mean, sum, fasttext"):
        compose_word_vectors(chars, kv, ["cat"], "max")


def test_the_evaluation_table_puts_the_pool_first_and_restricts_analogies_to_it(chars):
    from tokembed.pieces import evaluation_table

    kv = KeyedVectors.from_arrays(["c", "a", "t", "d"], np.array([[1, 0], [0, 2], [3, 4], [9, 9]], np.float32))
    # pool "at" -> mean of a (0, 2) and t (3, 4) = (1.5, 3); evaluation word "cat" (4/3, 2) is outside the pool
    table, composed, restrict = evaluation_table(chars, kv, ["cat"], ["at"])
    assert table.index_to_key == ["at", "cat"] and restrict == 1 and composed.covered == 1
    assert np.allclose(table["at"], [1.5, 3.0]) and np.allclose(table["cat"], [4 / 3, 2.0])
    # no pool word gets a vector ("zz": unknown pieces): no restriction, only the evaluation words
    table, _, restrict = evaluation_table(chars, kv, ["cat"], ["zz"])
    assert table.index_to_key == ["cat"] and restrict is None
