"""Facebook fastText's ``.bin`` and ``.vec`` files: our files in gensim and fastText, theirs in ours, clear errors."""

from __future__ import annotations

import struct
import warnings
from pathlib import Path

import numpy as np
import pytest

from tokembed.errors import ArtifactError, TokembedError
from tokembed.keyedvectors import KeyedVectors
from tokembed.plugins.fasttext import FastTextEmbedder, Word2VecEmbedder, load_facebook_vectors, read_facebook_bin
from tokembed.testing import sample_corpus

OOV = ["whalez", "q", "é", "東京", "😀", "xyzzy", "ab", "Ahab's", "</s>"]


@pytest.fixture(scope="module")
def docs():
    return [p.split() for p in sample_corpus(30_000)]


@pytest.fixture(scope="module")
def models(docs, tmp_path_factory):
    """Three small fitted models and their .bin files: skip-gram/negative, CBOW/hs (fasttext), word2vec."""
    out = {}
    folder = tmp_path_factory.mktemp("bin")
    for label, cls, kw in (("sg", FastTextEmbedder, {"bucket": 5000}),
                           ("cbow_hs", FastTextEmbedder, {"bucket": 3000, "sg": False, "hs": True, "minn": 2,
                                                          "maxn": 4}),
                           ("w2v", Word2VecEmbedder, {})):
        e = cls(vector_size=12, min_count=2, epochs=2, workers=1, show_progress=False, **kw).fit(docs)
        out[label] = (e, e.save_facebook_model(folder / f"{label}.bin"))
    return out


def _gensim_data(name: str) -> Path:
    gensim = pytest.importorskip("gensim")
    path = Path(gensim.__file__).parent / "test" / "test_data" / name
    if not path.exists():
        pytest.skip(f"missing test data: gensim's test file {name} is not installed")  # fails under CI=true
    return path


def _fasttext():
    fasttext = pytest.importorskip("fasttext", reason="fasttext-wheel is not installed (test extra)")
    fasttext.FastText.eprint = lambda *a, **k: None  # its load_model prints a deprecation note
    return fasttext


# -- what we write ----------------------------------------------------------------------------------------------
def test_header_bytes(models):
    e, path = models["sg"]
    data = path.read_bytes()
    assert data[:8] == bytes.fromhex("BA 16 4F 2F 0C 00 00 00")  # magic 793712314, version 12
    args = struct.unpack("<12id", data[8:8 + 56])
    # dim, ws, epoch, minCount, neg, wordNgrams, loss (2 = ns), model (2 = sg), bucket, minn, maxn, lrUpdateRate, t
    assert args == (12, 5, 2, 2, 5, 1, 2, 2, 5000, 3, 6, 100, 1e-3)
    size, nwords, nlabels, ntokens, prune = struct.unpack("<3iqq", data[64:92])
    assert (size, nwords, nlabels, prune) == (len(e.wv_), len(e.wv_), 0, -1)
    assert ntokens == e.n_tokens_ == sum(len(d) for d in [p.split() for p in sample_corpus(30_000)])
    w2v = models["w2v"][1].read_bytes()
    assert struct.unpack("<12id", w2v[8:64])[6:11] == (2, 2, 0, 0, 0)  # bucket = minn = maxn = 0


def test_writing_is_deterministic_and_reads_back(models, tmp_path):
    for label, (e, path) in models.items():
        again = e.save_facebook_model(tmp_path / "again.bin")
        assert again.read_bytes() == path.read_bytes(), label
        m = read_facebook_bin(path)
        assert m.words == e.wv_.index_to_key and m.counts.tolist() == e.counts_.tolist()
        np.testing.assert_array_equal(m.input_matrix, e.input_matrix_)
        np.testing.assert_array_equal(m.output_matrix, e.output_matrix_)
        kv = load_facebook_vectors(path)
        np.testing.assert_array_equal(kv.vectors, e.wv_.vectors)
        if label != "w2v":
            for w in OOV:
                np.testing.assert_array_equal(kv[w], e.wv_[w])


def test_from_facebook_model_rebuilds_the_embedder(models):
    e, path = models["cbow_hs"]
    back = FastTextEmbedder.from_facebook_model(path)
    assert (back.sg, back.hs, back.minn, back.maxn, back.bucket, back.vector_size) == (False, True, 2, 4, 3000, 12)
    np.testing.assert_array_equal(back.wv_.vectors, e.wv_.vectors)
    np.testing.assert_array_equal(back.wv_["whalez"], e.wv_["whalez"])


@pytest.mark.parametrize("label", ["sg", "cbow_hs", "w2v"])
def test_our_bin_loads_in_gensim_with_the_same_vectors(models, label):
    gensim_ft = pytest.importorskip("gensim.models.fasttext")
    e, path = models[label]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = gensim_ft.load_facebook_model(str(path))
        kv = gensim_ft.load_facebook_vectors(str(path))
    assert model.wv.index_to_key == e.wv_.index_to_key == kv.index_to_key
    assert (model.sg, model.hs, model.window, model.vector_size) == (int(e.sg), int(e.hs), e.window, 12)
    np.testing.assert_allclose(model.wv.vectors, e.wv_.vectors, atol=1e-6, rtol=0)
    np.testing.assert_allclose(kv.vectors, e.wv_.vectors, atol=1e-6, rtol=0)
    if label != "w2v":
        for w in OOV[:-1]:  # gensim gives "</s>" n-grams, fastText does not (see test_gensim_differs_on_eos)
            np.testing.assert_allclose(kv[w], e.wv_[w], atol=1e-6, rtol=0, err_msg=w)


@pytest.mark.parametrize("label", ["sg", "cbow_hs", "w2v"])
def test_our_bin_loads_in_facebook_fasttext_with_the_same_vectors(models, label):
    fasttext = _fasttext()
    e, path = models[label]
    f = fasttext.load_model(str(path))
    assert f.words == e.wv_.index_to_key
    assert (f.get_dimension(), f.f.getArgs().ws) == (12, 5)
    got = np.array([f.get_word_vector(w) for w in e.wv_.index_to_key])
    np.testing.assert_allclose(got, e.wv_.vectors, atol=1e-6, rtol=0)
    for w in OOV if label != "w2v" else []:
        np.testing.assert_allclose(f.get_word_vector(w), e.wv_[w], atol=1e-6, rtol=0, err_msg=w)
    if label == "w2v":  # no n-grams: fastText gives unseen words the zero vector, ours raises KeyError
        assert not f.get_word_vector("whalez").any()


def test_vec_file_is_word2vec_text(models, tmp_path):
    e, _ = models["sg"]
    path = e.save_facebook_vectors(tmp_path / "v.vec")
    first = Path(path).read_text(encoding="utf-8").splitlines()[0]
    assert first == f"{len(e.wv_)} 12"
    back = KeyedVectors.load_word2vec_format(path)
    assert back.index_to_key == e.wv_.index_to_key
    np.testing.assert_array_equal(back.vectors, e.wv_.vectors)


# -- what Facebook's fastText wrote (gensim's test data) --------------------------------------------------------
@pytest.mark.parametrize("name", ["lee_fasttext_new.bin", "crime-and-punishment.bin", "toy-model.bin"])
def test_facebook_trained_files_load_with_gensims_vectors(name):
    gensim_ft = pytest.importorskip("gensim.models.fasttext")
    path = _gensim_data(name)
    ours = load_facebook_vectors(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = gensim_ft.load_facebook_vectors(str(path))
    assert ours.index_to_key == ref.index_to_key and (ours.minn, ours.maxn, ours.bucket) == (ref.min_n, ref.max_n,
                                                                                              ref.bucket)
    keep = [i for i, w in enumerate(ours.index_to_key) if w != "</s>"]
    np.testing.assert_allclose(ours.vectors[keep], ref.vectors[keep], atol=1e-6, rtol=0)
    for w in ["landlord", "steamtrain", "zzzqx", "é", "thé", "раздражительном", "東京"]:
        np.testing.assert_allclose(ours[w], ref[w], atol=1e-6, rtol=0, err_msg=w)


@pytest.mark.parametrize("name", ["lee_fasttext_new.bin", "crime-and-punishment.bin", "toy-model.bin"])
def test_facebook_trained_files_load_with_fasttexts_vectors(name):
    fasttext = _fasttext()
    path = _gensim_data(name)
    ours = load_facebook_vectors(path)
    f = fasttext.load_model(str(path))
    assert f.words == ours.index_to_key
    got = np.array([f.get_word_vector(w) for w in ours.index_to_key])
    np.testing.assert_allclose(got, ours.vectors, atol=1e-6, rtol=0)  # "</s>" included
    for w in ["landlord", "steamtrain", "zzzqx", "é", "thé", "раздражительном", "東京", "</s>x"]:
        np.testing.assert_allclose(ours[w], f.get_word_vector(w), atol=1e-6, rtol=0, err_msg=w)


def test_gensim_differs_on_eos():
    """fastText's end-of-sentence word "</s>" has no n-grams (Dictionary::initNgrams); gensim gives it some. We
    follow fastText, whose files these are."""
    gensim_ft = pytest.importorskip("gensim.models.fasttext")
    path = _gensim_data("crime-and-punishment.bin")
    ours = load_facebook_vectors(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = gensim_ft.load_facebook_vectors(str(path))
    i = ours.key_to_index["</s>"]
    m = read_facebook_bin(path)
    np.testing.assert_array_equal(ours.vectors[i], m.input_matrix[i])  # its own row only
    assert np.abs(ref.vectors[i] - ours.vectors[i]).max() > 1e-3


# -- errors -------------------------------------------------------------------------------------------------------
def test_pre_2017_layout_is_refused_clearly():
    path = _gensim_data("lee_fasttext.bin")
    with pytest.raises(ArtifactError, match=r"lee_fasttext\.bin: not a fastText \.bin model: bytes 0-3 hold 10 .*"
                                            r"magic number 793712314.*before 2017"):
        read_facebook_bin(path)


def test_supervised_model_is_refused():
    path = _gensim_data("pang_lee_polarity_fasttext.bin")
    with pytest.raises(ArtifactError, match="supervised"):
        load_facebook_vectors(path)


def _patched(src: Path, dst: Path, offset: int, data: bytes) -> Path:
    raw = bytearray(src.read_bytes())
    raw[offset:offset + len(data)] = data
    dst.write_bytes(bytes(raw))
    return dst


def test_each_broken_file_gets_its_own_message(models, tmp_path):
    e, path = models["sg"]
    raw = path.read_bytes()
    V = len(e.wv_)
    dict_end = 92 + sum(len(w.encode()) + 1 + 9 for w in e.wv_.index_to_key)
    input_at = dict_end + 1
    output_at = input_at + 16 + (V + 5000) * 12 * 4 + 1
    cases = {
        "wrong magic": (_patched(path, tmp_path / "m.bin", 0, b"\x00\x00\x00\x01"),
                        r"bytes 0-3 hold 16777216 \(hex 00 00 00 01\), expected the magic number 793712314"),
        "version": (_patched(path, tmp_path / "v.bin", 4, struct.pack("<i", 13)), r"version 13 at byte 4.*11 and 12"),
        "supervised": (_patched(path, tmp_path / "s.bin", 36, struct.pack("<i", 3)), "supervised"),
        "labels": (_patched(path, tmp_path / "l.bin", 72, struct.pack("<i", 4)), "holds 4 labels: a supervised"),
        "quantized": (_patched(path, tmp_path / "q.bin", dict_end, b"\x01"), r"quantized model \(\.ftz"),
        "shape": (_patched(path, tmp_path / "sh.bin", input_at + 8, struct.pack("<q", 13)),
                  rf"input matrix at byte {input_at:,} has shape \({V + 5000:,}, 13\), expected"),
        "empty": (tmp_path / "e.bin", "the file is empty"),
        "trailing": (tmp_path / "t.bin", "4 bytes after the output matrix"),
    }
    cases["empty"][0].write_bytes(b"")
    cases["trailing"][0].write_bytes(raw + b"abcd")
    for label, (bad, message) in cases.items():
        with pytest.raises(ArtifactError, match=message):
            read_facebook_bin(bad)
        assert str(bad) in str(pytest.raises(ArtifactError, read_facebook_bin, bad).value), label
    # a file cut anywhere: header, arguments, dictionary, either matrix
    for cut in (3, 20, 70, 100, dict_end - 3, input_at + 10, input_at + 1000, output_at + 20, len(raw) - 1):
        short = tmp_path / f"cut{cut}.bin"
        short.write_bytes(raw[:cut])
        with pytest.raises(ArtifactError, match="truncated file"):
            read_facebook_bin(short)
    with pytest.raises(ArtifactError, match="no such file"):
        read_facebook_bin(tmp_path / "missing.bin")


def test_a_word_with_nul_cannot_be_written(tmp_path):
    e = Word2VecEmbedder(vector_size=4, min_count=1, epochs=1, workers=1, show_progress=False)
    e.fit([["a\x00b", "c"]])
    with pytest.raises(TokembedError, match="NUL"):
        e.save_facebook_model(tmp_path / "x.bin")
    assert not (tmp_path / "x.bin").exists()
