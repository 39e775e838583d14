"""KeyedVectors: lookup, cosine, nearest neighbours (hand-computed and against gensim), word2vec files (round trips
and gensim interoperability), errors, PyTorch export and the reference-vector folders."""

from __future__ import annotations

import math
import struct
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tokembed.errors import ArtifactError, DataError, TokembedError
from tokembed.keyedvectors import (
    HAS_HEADER_HINT,
    KeyedVectors,
    OutOfVocabularyError,
    header_then_vector,
    load_vectors,
    read_word2vec_header,
)

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "vectors" / "glove6b50d_sample.txt"
SQ2 = math.sqrt(2.0)
SQ3 = math.sqrt(3.0)


@pytest.fixture
def toy() -> KeyedVectors:
    # unit vectors: man (1, 0); woman (0, 1); king (1, 1)/sqrt2; queen (0, 1); apple (1, -1)/sqrt2
    return KeyedVectors.from_arrays(
        ["man", "woman", "king", "queen", "apple"],
        np.array([[2, 0], [0, 3], [1, 1], [0, 2], [1, -1]], dtype=np.float32),
    )


@pytest.fixture(scope="module")
def sample() -> KeyedVectors:
    return KeyedVectors.load_word2vec_format(FIXTURE)


def gensim_kv(kv: KeyedVectors):
    from gensim.models import KeyedVectors as GensimKV

    g = GensimKV(kv.vector_size)
    g.add_vectors(list(kv.index_to_key), np.array(kv.vectors))
    return g


# -- basics ------------------------------------------------------------------------------------------------------
def test_attributes_and_lookup(toy):
    assert len(toy) == 5 and toy.vector_size == 2
    assert toy.index_to_key == ["man", "woman", "king", "queen", "apple"]
    assert toy.key_to_index == {"man": 0, "woman": 1, "king": 2, "queen": 3, "apple": 4}
    assert toy.vectors.dtype == np.float32 and toy.vectors.shape == (5, 2)
    assert "king" in toy and "prince" not in toy and 3 not in toy
    np.testing.assert_array_equal(toy["woman"], [0, 3])
    np.testing.assert_array_equal(toy[["man", "queen"]], [[2, 0], [0, 2]])
    np.testing.assert_allclose(toy.get_vector("king", norm=True), [1 / SQ2, 1 / SQ2], rtol=1e-6)
    np.testing.assert_allclose(toy.get_norms(), [2, 3, SQ2, 2, SQ2], rtol=1e-6)
    assert repr(toy) == "KeyedVectors(5 keys, vector_size=2)"


def test_cosine_by_hand(toy):
    # cos(man, king) = (2*1 + 0*1) / (2 * sqrt2) = 1/sqrt2 ; cos(man, woman) = 0 ; cos(king, apple) = (1 - 1)/2 = 0
    assert toy.similarity("man", "king") == pytest.approx(1 / SQ2, abs=1e-7)
    assert toy.similarity("man", "woman") == 0.0
    assert toy.similarity("king", "apple") == 0.0
    # cos(woman, queen) = 6 / (3 * 2) = 1 ; cos(man, apple) = 2 / (2 sqrt2)
    assert toy.similarity("woman", "queen") == pytest.approx(1.0, abs=1e-12)
    assert toy.similarity("apple", "man") == pytest.approx(1 / SQ2, abs=1e-7)
    # n_similarity: mean(man, woman) = (1, 1.5); mean(king) = (1, 1): cos = 2.5 / (sqrt(3.25) * sqrt2) = 0.98058
    assert toy.n_similarity(["man", "woman"], ["king"]) == pytest.approx(2.5 / (math.sqrt(3.25) * SQ2), abs=1e-7)


def test_most_similar_by_hand(toy):
    # neighbours of man (1, 0): apple 1/sqrt2 = 0.70711, king 1/sqrt2 too (tie: row order, king is row 2),
    # woman 0 and queen 0 (tie: woman first)
    got = toy.most_similar("man", topn=4)
    assert [k for k, _ in got] == ["king", "apple", "woman", "queen"]
    np.testing.assert_allclose([s for _, s in got], [1 / SQ2, 1 / SQ2, 0, 0], atol=1e-7)
    # man : king :: woman : ?   query = u_king - u_man + u_woman = (1/sqrt2 - 1, 1/sqrt2 + 1) = (-0.29289, 1.70711)
    # |query|^2 = (1/2 - sqrt2 + 1) + (1/2 + sqrt2 + 1) = 3, so |query| = sqrt3
    # queen (0, 1): cos = 1.70711 / sqrt3 = 0.98560 ; apple (1, -1)/sqrt2: cos = (-0.29289 - 1.70711) / (sqrt2 sqrt3)
    #   = -2 / sqrt6 = -0.81650 ; man, king and woman are left out
    got = toy.most_similar(positive=["king", "woman"], negative=["man"], topn=10)
    assert [k for k, _ in got] == ["queen", "apple"]
    np.testing.assert_allclose([s for _, s in got], [(1 + 1 / SQ2) / SQ3, -2 / math.sqrt(6)], atol=1e-6)
    # restrict_vocab=4 searches rows 0-3 only: apple (row 4) is gone
    assert [k for k, _ in toy.most_similar(["king", "woman"], ["man"], restrict_vocab=4)] == ["queen"]
    # topn=None: the cosine of every row, the query words included (king: (0.5 - 0.70711 + 0.70711 + 0.5)... )
    allsims = toy.most_similar(["king", "woman"], ["man"], topn=None)
    assert allsims.shape == (5,)
    assert allsims[3] == pytest.approx((1 + 1 / SQ2) / SQ3, abs=1e-6)
    assert toy.most_similar("man", topn=0) == []


def test_most_similar_cosmul_by_hand(toy):
    # s = (1 + cos) / 2 ; queen: s(queen, king) = (1 + 0.70711)/2 = 0.85355, s(queen, woman) = 1, s(queen, man) = 0.5
    #   score = 0.85355 * 1 / (0.5 + 1e-6) = 1.70710
    # apple: s(apple, king) = 0.5, s(apple, woman) = (1 - 0.70711)/2 = 0.14645, s(apple, man) = 0.85355
    #   score = 0.5 * 0.14645 / (0.85355 + 1e-6) = 0.085786
    got = toy.most_similar_cosmul(positive=["king", "woman"], negative=["man"])
    assert [k for k, _ in got] == ["queen", "apple"]
    s_king = (1 + 1 / SQ2) / 2
    np.testing.assert_allclose(
        [s for _, s in got], [s_king / (0.5 + 1e-6), 0.5 * (1 - 1 / SQ2) / 2 / (s_king + 1e-6)], rtol=1e-6
    )


def test_vector_terms_and_weights(toy):
    # a query vector is normalised and excludes nothing: (0, 5) -> woman and queen first (cos 1), woman by row order
    assert [k for k, _ in toy.most_similar(np.array([0, 5], dtype=np.float32), topn=2)] == ["woman", "queen"]
    # weights: 3*u_man - 1*u_woman = (3, -1): apple (1, -1)/sqrt2 gives (3 + 1)/(sqrt10 sqrt2) = 0.89443 first
    got = toy.most_similar(positive=[("man", 3.0), ("woman", -1.0)], topn=1)
    assert got[0][0] == "apple" and got[0][1] == pytest.approx(4 / math.sqrt(20), abs=1e-6)
    # an explicit weight is used as given, in negative too (gensim's rule): 3*u_man + 1*u_woman = (3, 1), so king
    # (1, 1)/sqrt2 comes first with (3 + 1)/(sqrt10 sqrt2)
    got = toy.most_similar(positive=[("man", 3.0)], negative=[("woman", 1.0)], topn=1)
    assert got[0][0] == "king" and got[0][1] == pytest.approx(4 / math.sqrt(20), abs=1e-6)
    with pytest.raises(TokembedError, match="at least one"):
        toy.most_similar()
    with pytest.raises(TokembedError, match="restrict_vocab"):
        toy.most_similar("man", restrict_vocab=0)


def test_zero_vector_has_cosine_zero():
    kv = KeyedVectors.from_arrays(["z", "x"], np.array([[0, 0], [1, 2]], dtype=np.float32))
    assert kv.similarity("z", "x") == 0.0
    np.testing.assert_array_equal(kv.get_normed_vectors()[0], [0, 0])


# -- OOV -----------------------------------------------------------------------------------------------------------
def test_oov_error_names_the_key(toy):
    with pytest.raises(OutOfVocabularyError, match="'prince' is not in the vocabulary of 5 keys") as info:
        toy["prince"]
    assert isinstance(info.value, KeyError) and isinstance(info.value, TokembedError)
    assert info.value.key == "prince"
    with pytest.raises(KeyError, match=r"'King'.*\(but 'king' is\)"):
        toy.similarity("King", "man")
    with pytest.raises(KeyError):
        toy.most_similar(["king", "prince"])
    with pytest.raises(KeyError):
        toy.get_index("prince")
    assert toy.get_index("prince", -1) == -1 and toy.get_index("queen") == 3


class CharSumVectors(KeyedVectors):
    """OOV vectors as the sum of the vectors of the key's known characters (a stand-in for FastText)."""

    def _oov_vector(self, key):
        known = [self.vectors[self.key_to_index[ch]] for ch in key if ch in self.key_to_index]
        return np.sum(known, axis=0) if known else None


def test_oov_hook():
    kv = CharSumVectors.from_arrays(["a", "b", "c"], np.array([[1, 0], [0, 1], [-1, 0]], dtype=np.float32))
    assert isinstance(kv, CharSumVectors)
    np.testing.assert_array_equal(kv["ab"], [1, 1])
    assert "ab" not in kv and not kv.has_index_for("ab")
    # cos(ab, a) = 1 / sqrt2
    assert kv.similarity("ab", "a") == pytest.approx(1 / SQ2, abs=1e-7)
    np.testing.assert_allclose(kv.get_vector("ab", norm=True), [1 / SQ2, 1 / SQ2], rtol=1e-6)
    # an OOV query word has no row to exclude: "a" and "b" (cos 1/sqrt2) are both returned
    assert [k for k, _ in kv.most_similar("ab", topn=2)] == ["a", "b"]
    with pytest.raises(OutOfVocabularyError, match="'xyz'"):
        kv["xyz"]


# -- changes and the cache -----------------------------------------------------------------------------------------
def test_vectors_are_read_only_and_changes_refresh_the_cache(toy):
    assert toy.most_similar("man", topn=1)[0][0] == "king"
    with pytest.raises(ValueError, match="read-only"):
        toy.vectors[0, 0] = 5.0
    toy["apple"] = np.array([3, 0.1], dtype=np.float32)  # now almost parallel to man
    assert toy.most_similar("man", topn=1)[0][0] == "apple"
    toy["pear"] = np.array([-1, 0], dtype=np.float32)  # a new key
    assert len(toy) == 6 and toy.index_to_key[-1] == "pear" and toy.key_to_index["pear"] == 5
    assert toy.most_similar("man", topn=6)[-1] == ("pear", pytest.approx(-1.0))
    toy.add_vectors(["man", "plum"], np.array([[0, 1], [5, 5]], dtype=np.float32))  # man kept (replace=False)
    np.testing.assert_array_equal(toy["man"], [2, 0])
    assert toy.similarity("plum", "king") == pytest.approx(1.0)
    toy.vectors = np.tile(np.array([[0, 1]], dtype=np.float32), (7, 1))
    assert toy.similarity("man", "apple") == pytest.approx(1.0)
    with pytest.raises(TokembedError, match="one row per key"):
        toy.vectors = np.zeros((3, 2))


def test_from_arrays_checks_and_copies():
    arr = np.array([[1, 2], [3, 4]], dtype=np.float32)
    kv = KeyedVectors.from_arrays(["a", "b"], arr)
    arr[0, 0] = 9
    assert kv["a"][0] == 1 and arr.flags.writeable
    shared = KeyedVectors.from_arrays(["a", "b"], arr, copy=False)
    assert np.shares_memory(shared.vectors, arr) and arr.flags.writeable
    assert KeyedVectors.from_arrays(["x"], [[1, 2, 3]]).vectors.dtype == np.float32
    with pytest.raises(TokembedError, match="appears twice"):
        KeyedVectors.from_arrays(["a", "a"], arr)
    with pytest.raises(TokembedError, match="one row per key"):
        KeyedVectors.from_arrays(["a"], arr)
    with pytest.raises(TypeError, match="keys must be str"):
        KeyedVectors.from_arrays([1, 2], arr)
    with pytest.raises(TokembedError, match="vector_size"):
        KeyedVectors(0)


# -- parity with gensim ----------------------------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # gensim's most_similar_cosmul calls its init_sims
def test_similarity_and_neighbours_match_gensim(sample):
    pytest.importorskip("gensim")
    g = gensim_kv(sample)
    for a, b in [("king", "queen"), ("tiger", "cat"), ("the", ","), ("good", "better")]:
        assert sample.similarity(a, b) == pytest.approx(float(g.similarity(a, b)), abs=1e-6)
    queries = [
        dict(positive=["king"]),
        dict(positive=["king", "sister"], negative=["brother"]),
        dict(positive=["athens", "egypt"], negative=["greece"], restrict_vocab=120),
        dict(positive=["computer"], negative=["money"], topn=25),
    ]
    for q in queries:
        ours, theirs = sample.most_similar(**q), g.most_similar(**q)
        assert [k for k, _ in ours] == [k for k, _ in theirs], q
        np.testing.assert_allclose([s for _, s in ours], [s for _, s in theirs], atol=1e-6)
    ours = sample.most_similar_cosmul(positive=["king", "sister"], negative=["brother"], topn=8)
    theirs = g.most_similar_cosmul(positive=["king", "sister"], negative=["brother"], topn=8)
    assert [k for k, _ in ours] == [k for k, _ in theirs]
    np.testing.assert_allclose([s for _, s in ours], [s for _, s in theirs], rtol=1e-5)
    np.testing.assert_allclose(sample.most_similar("king", topn=None), g.most_similar("king", topn=None), atol=1e-6)
    assert sample.n_similarity(["king", "brother"], ["queen", "sister"]) == pytest.approx(
        float(g.n_similarity(["king", "brother"], ["queen", "sister"])), abs=1e-6
    )


# -- word2vec files ----------------------------------------------------------------------------------------------------
def test_the_fixture_is_the_glove_sample(sample):
    assert len(sample) == 260 and sample.vector_size == 50
    assert sample.index_to_key[:3] == ["the", ",", "."]
    # the first values of "the" in the official glove.6B.50d.txt
    np.testing.assert_array_equal(sample["the"][:3], np.array([0.418, 0.24968, -0.41242], dtype=np.float32))


def test_text_format_by_hand(tmp_path):
    kv = KeyedVectors.from_arrays(["a", "é"], np.array([[0.5, -1e-05], [3.0, 0.1]], dtype=np.float32))
    path = kv.save_word2vec_format(tmp_path / "v.txt")
    # float32 0.1 is 0.100000001490116...; its shortest float32 repr is "0.1"
    assert path.read_bytes() == "2 2\na 0.5 -1e-05\né 3.0 0.1\n".encode("utf-8")


def test_text_without_header_is_glove_layout(tmp_path):
    kv = KeyedVectors.from_arrays(["a", "é"], np.array([[0.5, -1e-05], [3.0, 0.1]], dtype=np.float32))
    path = kv.save_word2vec_format(tmp_path / "v.txt", write_header=False)
    assert path.read_bytes() == "a 0.5 -1e-05\né 3.0 0.1\n".encode("utf-8")
    back = KeyedVectors.load_word2vec_format(path, no_header=True)
    assert back.index_to_key == ["a", "é"]
    np.testing.assert_array_equal(back.vectors, kv.vectors)
    with pytest.raises(TokembedError, match="text format only"):
        kv.save_word2vec_format(tmp_path / "v.bin", binary=True, write_header=False)
    assert not (tmp_path / "v.bin").exists()


def test_binary_format_by_hand(tmp_path):
    kv = KeyedVectors.from_arrays(["a", "é"], np.array([[0.5, -2.0], [3.0, 0.25]], dtype=np.float32))
    path = kv.save_word2vec_format(tmp_path / "v.bin", binary=True)
    f32 = lambda *xs: struct.pack("<" + "f" * len(xs), *xs)  # noqa: E731
    assert path.read_bytes() == b"2 2\n" + b"a " + f32(0.5, -2.0) + b"\n" + "é ".encode() + f32(3.0, 0.25) + b"\n"


@pytest.mark.parametrize("binary", [False, True])
def test_round_trip_is_bit_exact(tmp_path, binary):
    rng = np.random.default_rng(7)
    scale = rng.choice([1e-30, 1e-6, 1.0, 1e6, 1e30], size=(300, 17))
    vecs = (rng.standard_normal((300, 17)) * scale).astype(np.float32)
    vecs[0, :4] = [0.0, -0.0, np.float32(1.4e-45), np.finfo(np.float32).max]  # a subnormal and the largest
    keys = [f"w{i}" for i in range(299)] + ["日本語"]
    kv = KeyedVectors.from_arrays(keys, vecs)
    back = KeyedVectors.load_word2vec_format(kv.save_word2vec_format(tmp_path / "v", binary=binary), binary=binary)
    assert back.index_to_key == keys
    np.testing.assert_array_equal(back.vectors.view(np.uint32), vecs.view(np.uint32))  # bit for bit, -0.0 too


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.float32, hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=6),
                  elements=st.floats(width=32, allow_nan=False)))
def test_text_round_trip_property(vecs):
    keys = [f"k{i}" for i in range(len(vecs))]
    with tempfile.TemporaryDirectory() as tmp:
        path = KeyedVectors.from_arrays(keys, vecs).save_word2vec_format(Path(tmp) / "v.txt")
        back = KeyedVectors.load_word2vec_format(path)
    np.testing.assert_array_equal(back.vectors.view(np.uint32), vecs.view(np.uint32))


@pytest.mark.parametrize("binary", [False, True])
def test_gensim_reads_our_files_and_we_read_gensims(tmp_path, sample, binary):
    pytest.importorskip("gensim")
    from gensim.models import KeyedVectors as GensimKV

    kv = KeyedVectors.from_arrays(sample.index_to_key + ["café", "naïve"],
                                  np.vstack([sample.vectors, sample.vectors[:2] * 3]))
    ours = kv.save_word2vec_format(tmp_path / "ours", binary=binary)
    g = GensimKV.load_word2vec_format(str(ours), binary=binary)
    assert g.index_to_key == kv.index_to_key
    np.testing.assert_array_equal(g.vectors, kv.vectors)

    theirs = tmp_path / "theirs"
    gensim_kv(kv).save_word2vec_format(str(theirs), binary=binary)
    back = KeyedVectors.load_word2vec_format(theirs, binary=binary)
    assert back.index_to_key == kv.index_to_key
    np.testing.assert_array_equal(back.vectors, kv.vectors)
    if not binary:  # same float repr: the text files are identical
        assert theirs.read_bytes() == ours.read_bytes()
    else:  # word2vec.c ends each record with a newline, gensim does not
        assert len(ours.read_bytes()) - len(theirs.read_bytes()) == len(kv)


@pytest.mark.parametrize("binary", [False, True])
def test_limit(tmp_path, sample, binary):
    path = sample.save_word2vec_format(tmp_path / "v", binary=binary)
    kv = KeyedVectors.load_word2vec_format(path, binary=binary, limit=10)
    assert kv.index_to_key == sample.index_to_key[:10]
    np.testing.assert_array_equal(kv.vectors, sample.vectors[:10])
    assert len(KeyedVectors.load_word2vec_format(path, binary=binary, limit=0)) == 0


def test_glove_text_without_header_and_trailing_spaces(tmp_path):
    # GloVe's own .txt has no header line; word2vec.c writes a space after the last value
    path = tmp_path / "glove.txt"
    path.write_bytes(b"the 0.418 0.24968 \n, 0.013441 0.23682 \r\n")
    kv = KeyedVectors.load_word2vec_format(path, no_header=True)
    assert kv.index_to_key == ["the", ","]
    np.testing.assert_array_equal(kv.vectors, np.array([[0.418, 0.24968], [0.013441, 0.23682]], dtype=np.float32))
    assert len(KeyedVectors.load_word2vec_format(path, no_header=True, limit=1)) == 1
    with pytest.raises(ArtifactError, match="no_header=True"):
        KeyedVectors.load_word2vec_format(path)
    # limit=0 without a header: line 1 still gives the dimensions (it raised "no vectors in the file")
    none = KeyedVectors.load_word2vec_format(path, no_header=True, limit=0)
    assert (len(none), none.vector_size) == (0, 2)
    path.write_bytes(b"")
    with pytest.raises(ArtifactError, match=r"glove.txt: the file is empty$"):
        KeyedVectors.load_word2vec_format(path, no_header=True)


def test_no_header_on_a_file_with_the_header_says_so(tmp_path, toy):
    path = toy.save_word2vec_format(tmp_path / "v.txt")  # "5 2", then "man 2.0 0.0", ...
    # read as GloVe, line 1 is the key "5" with one value, and line 2 has 2 values where 1 is expected
    with pytest.raises(ArtifactError) as err:
        KeyedVectors.load_word2vec_format(path, no_header=True)
    assert str(err.value) == (f"{path}:2: expected the key and 1 values separated by single spaces, found 2 values"
                              f"{HAS_HEADER_HINT}")
    assert "read this file without no_header=True" in HAS_HEADER_HINT
    # a GloVe file whose line 2 does not fit: no such hint
    path.write_bytes(b"the 1 2\nof 1 2 3\n")
    with pytest.raises(ArtifactError, match=r"v.txt:2: expected the key and 2 values .*found 3 values$"):
        KeyedVectors.load_word2vec_format(path, no_header=True)


@pytest.mark.parametrize("first, second, expected", [
    (b"5 2\n", b"man 2.0 0.0\n", (5, 2)),
    (b"5 2\r\n", b"man 2.0 0.0 \r\n", (5, 2)),       # CR and a trailing space, as the reader allows
    (b"5 2\n", b"man 2.0\n", None),                   # line 2 does not hold 2 values
    (b"5 2\n", b"", None),                             # no line 2
    (b"7 1\n", b"man 2.0\n", None),                   # 1 dimension: also GloVe's key "7" with the value 1
    (b"the 1 2\n", b"of 1 2\n", None),                # line 1 is a vector
    (b"5 2.5\n", b"man 1 2 3\n", None),               # not integers
])
def test_header_then_vector(first, second, expected):
    assert header_then_vector(first, second) == expected


def test_source_names_where_the_vectors_were_read(tmp_path, toy, monkeypatch):
    import tokembed.datasets as ds

    assert toy.source is None and KeyedVectors(3).source is None
    for name, binary in (("v.txt", False), ("v.bin", True)):
        path = toy.save_word2vec_format(tmp_path / name, binary=binary)
        assert KeyedVectors.load_word2vec_format(path, binary=binary).source == str(path)
        assert load_vectors(path).source == str(path)
    folder = write_folder(tmp_path / "vecs", list(toy.index_to_key), np.array(toy.vectors))
    assert KeyedVectors.from_dataset(folder).source == str(folder)
    monkeypatch.setattr(ds, "dataset_path", lambda name: folder)  # as if glove_6b_50d were fetched there
    assert KeyedVectors.from_dataset("glove_6b_50d").source == "glove_6b_50d"


def test_repeated_keys_keep_the_first_like_gensim(tmp_path):
    path = tmp_path / "dup.txt"
    path.write_bytes(b"3 2\na 1 2\nb 3 4\na 5 6\n")
    with pytest.warns(UserWarning, match="1 repeated key"):
        kv = KeyedVectors.load_word2vec_format(path)
    assert kv.index_to_key == ["a", "b"]
    np.testing.assert_array_equal(kv["a"], [1, 2])


def test_keys_with_whitespace_cannot_be_saved(tmp_path):
    for bad in ["new york", "tab\there", "line\n", ""]:
        kv = KeyedVectors.from_arrays(["ok", bad], np.eye(2, dtype=np.float32))
        with pytest.raises(TokembedError, match="no whitespace"):
            kv.save_word2vec_format(tmp_path / "v.txt")
    assert list(tmp_path.iterdir()) == []  # nothing written, no temporary left


def test_save_is_atomic(tmp_path, toy, monkeypatch):
    target = tmp_path / "v.txt"
    target.write_text("old", encoding="utf-8")

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("tokembed.keyedvectors.os.fsync", broken)
    with pytest.raises(OSError, match="disk full"):
        toy.save_word2vec_format(target)
    assert target.read_text(encoding="utf-8") == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["v.txt"]


@pytest.mark.parametrize(
    "content, binary, message",
    [
        (b"2 2\na 1 2\n\xff\xfe 3 4\n", False, r"v:3: the key is not valid UTF-8"),
        (b"1 2\n\xe9t\xe9 " + struct.pack("<2f", 1, 2), True, r"record 1 \(byte 4\): the key is not valid UTF-8"),
        (b"3 2\na 1 2\nb 3 4\n", False, "announces 3 vectors but the file ends after 2"),
        (b"2 2\na " + struct.pack("<2f", 1, 2) + b"bbbbbbbbbb " + struct.pack("<f", 3), True, "ends inside record 2"),
        (b"9 2\na " + struct.pack("<2f", 1, 2), True, "more than the 10 bytes that follow hold"),
        (b"2 3\na 1 2 3\nb 1 2\n", False, r"v:3: expected the key and 3 values .* found 2 values"),
        (b"1 2\na 1 x\n", False, r"v:2: a value is not a number"),
        (b"1 2\na 1 2.5.5\n", False, r"v:2: a value is not a number"),
        (b"2 2\na 1 2\n\nb 1 2\n", False, "v:3: empty line"),
        (b"hello\n", False, r"v:1: expected a header '<count> <dimensions>', got 'hello'"),
        (b"", True, r"^\S*v: the file is empty \(a word2vec file starts with the line '<count> <dimensions>'\)$"),
        (b"", False, r"^\S*v: the file is empty"),
        (b"2 0\n", False, "expected a header"),
    ],
)
def test_malformed_files(tmp_path, content, binary, message):
    path = tmp_path / "v"
    path.write_bytes(content)
    with pytest.raises(ArtifactError, match=message):
        KeyedVectors.load_word2vec_format(path, binary=binary)


def test_missing_file(tmp_path):
    with pytest.raises(ArtifactError, match="no such file"):
        KeyedVectors.load_word2vec_format(tmp_path / "nope.txt")
    with pytest.raises(ArtifactError, match="is a folder"):
        KeyedVectors.load_word2vec_format(tmp_path)


# -- PyTorch -----------------------------------------------------------------------------------------------------------
def test_to_torch(toy):
    torch = pytest.importorskip("torch")
    emb = toy.to_torch()
    assert isinstance(emb, torch.nn.Embedding) and emb.weight.requires_grad is False
    assert emb.weight.dtype == torch.float32 and tuple(emb.weight.shape) == (5, 2)
    out = emb(torch.tensor([toy.key_to_index["woman"], toy.key_to_index["king"]]))
    np.testing.assert_array_equal(out.detach().numpy(), [[0, 3], [1, 1]])
    trainable = toy.to_torch(freeze=False, padding_idx=0)
    assert trainable.weight.requires_grad is True and trainable.padding_idx == 0
    trainable.weight.data[1, 0] = 42.0  # a copy: the vectors are untouched
    assert toy["woman"][0] == 0


def test_importing_stays_light():
    code = ("import sys, tokembed.keyedvectors, tokembed.evaluation; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'scipy', 'numba', 'gensim'}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# -- reference-vector folders and datasets -------------------------------------------------------------------------------
def write_folder(folder: Path, keys: list[str], vecs: np.ndarray) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / "vectors.npy", vecs)
    (folder / "vocab.txt").write_bytes(("\n".join(keys) + "\n").encode("utf-8"))
    return folder


def test_from_dataset_folder(tmp_path):
    keys = ["a", "b\u2028c", "d\re"]  # U+2028 or CR inside a key: the vocabulary is split on "\n" only
    vecs = np.arange(6, dtype=np.float32).reshape(3, 2)
    folder = write_folder(tmp_path / "vecs", keys, vecs)
    kv = KeyedVectors.from_dataset(folder)
    assert kv.index_to_key == keys
    np.testing.assert_array_equal(kv.vectors, vecs)
    assert KeyedVectors.from_dataset(folder, limit=2).index_to_key == keys[:2]
    assert load_vectors(folder).index_to_key == keys
    (folder / "vocab.txt").write_text("a\nb\n", encoding="utf-8")
    with pytest.raises(ArtifactError, match=r"shape \(3, 2\) but vocab.txt has 2 keys"):
        KeyedVectors.from_dataset(folder)
    (folder / "vectors.npy").unlink()
    with pytest.raises(ArtifactError, match="missing vectors.npy"):
        KeyedVectors.from_dataset(folder)


def test_from_dataset_names(tmp_path, monkeypatch):
    monkeypatch.setenv("TOKEMBED_DATA", str(tmp_path / "empty"))
    with pytest.raises(DataError, match="not fetched yet.*Run: tokembed data fetch glove_6b_50d"):
        KeyedVectors.from_dataset("glove_6b_50d")
    with pytest.raises(DataError, match="not fetched yet"):
        load_vectors("glove_6b_50d")
    with pytest.raises(DataError, match="unknown dataset 'glove_6b_5d'. Did you mean 'glove_6b_50d'"):
        KeyedVectors.from_dataset("glove_6b_5d")
    with pytest.raises(DataError, match="unknown dataset"):
        load_vectors("glove_6b_5d")
    with pytest.raises(DataError, match="of kind 'word_pairs', not 'vectors'"):
        KeyedVectors.from_dataset("wordsim353")
    with pytest.raises(ArtifactError, match="no such folder"):
        KeyedVectors.from_dataset(tmp_path / "nowhere")


def test_load_vectors_infers_the_format(tmp_path, toy):
    toy.save_word2vec_format(tmp_path / "v.bin", binary=True)
    toy.save_word2vec_format(tmp_path / "v.vec")
    for name in ("v.bin", "v.vec"):
        kv = load_vectors(tmp_path / name)
        assert kv.index_to_key == toy.index_to_key
        np.testing.assert_array_equal(kv.vectors, toy.vectors)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ArtifactError):
            load_vectors(tmp_path / "v.bin", binary=False)


def test_load_vectors_reads_a_file_without_header(tmp_path, toy):
    with_header = toy.save_word2vec_format(tmp_path / "v.txt")
    lines = with_header.read_bytes().split(b"\n", 1)
    assert lines[0] == b"5 2"  # toy: 5 keys of 2 dimensions
    glove = tmp_path / "glove.txt"
    glove.write_bytes(lines[1])
    kv = load_vectors(glove, no_header=True)
    assert kv.index_to_key == toy.index_to_key
    np.testing.assert_array_equal(kv.vectors, toy.vectors)
    assert len(load_vectors(glove, no_header=True, limit=2)) == 2
    with pytest.raises(ArtifactError, match=r"glove.txt:1: expected a header .*reads with no_header=True\)$"):
        load_vectors(glove)
    with pytest.raises(TokembedError, match="no_header applies to the text format only"):
        load_vectors(glove, binary=True, no_header=True)
    with pytest.raises(TokembedError, match="no_header applies to word2vec text files, not to a dataset or a folder"):
        load_vectors(tmp_path, no_header=True)
    with pytest.raises(TokembedError, match="no_header applies to word2vec text files"):
        load_vectors("glove_6b_50d", no_header=True)


def test_read_word2vec_header(tmp_path, toy):
    assert read_word2vec_header(toy.save_word2vec_format(tmp_path / "v.txt")) == (5, 2)
    assert read_word2vec_header(toy.save_word2vec_format(tmp_path / "v.bin", binary=True)) == (5, 2)
    for first_line, expected in [(b"the 0.418 0.2\n", None), (b"3\n", None), (b"2 0\n", None), (b"-1 3\n", None),
                                 (b"", None), (b"0 7\r\n", (0, 7))]:
        (tmp_path / "h").write_bytes(first_line)
        assert read_word2vec_header(tmp_path / "h") == expected, first_line
    with pytest.raises(ArtifactError, match="cannot read"):
        read_word2vec_header(tmp_path / "missing")


def test_load_names_what_a_file_is_when_it_is_no_npz(tmp_path):
    # np.load read a .npy as one array (TypeError: no context manager) and tried anything else as a pickle, whose
    # message told the user to pass allow_pickle
    np.save(tmp_path / "arr.npy", np.zeros(3))
    (tmp_path / "words.txt").write_text("whale 0.1 0.2\n", encoding="utf-8")
    (tmp_path / "empty.npz").write_bytes(b"")
    for name, found in (("arr.npy", "a single .npy array"), ("words.txt", "not a zip archive"),
                        ("empty.npz", "empty")):
        with pytest.raises(ArtifactError) as info:
            KeyedVectors.load(tmp_path / name)
        assert str(info.value) == f"{tmp_path / name}: not an .npz vector file ({found})"
    with pytest.raises(ArtifactError, match="is a folder, expected an .npz vector file"):
        KeyedVectors.load(tmp_path)


def test_a_text_file_read_as_binary_is_named_as_text_even_when_its_sizes_align(tmp_path):
    # "w " + 8 value bytes per record, and the text's values are 8 bytes too ("1.5 2.25" = 8 characters: a
    # 2-d float32 record's size): the sizes agree, so only the bytes can tell text from binary.
    path = tmp_path / "v.txt"
    path.write_bytes(b"2 2\nw 1.5 2.25\nv 0.50 1.0\n")
    with pytest.raises(ArtifactError, match=r"record 1 \('w'\) are written as text.*pass binary=False"):
        KeyedVectors.load_word2vec_format(path, binary=True)
    assert KeyedVectors.load_word2vec_format(path).key_to_index == {"w": 0, "v": 1}
