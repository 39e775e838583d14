"""KeyedVectors' own file (save/load, bit for bit, FastText's n-gram rows included) and load_vectors over every
vector file tokembed writes, with errors that name the expected formats instead of printing bytes."""

from __future__ import annotations

import numpy as np
import pytest

from tokembed.errors import ArtifactError
from tokembed.io import atomic_save_npz
from tokembed.keyedvectors import KeyedVectors, load_vectors
from tokembed.plugins.fasttext.keyedvectors import FastTextKeyedVectors

# keys word2vec files cannot hold (a space, a newline, a trailing NUL that numpy's str arrays would drop, a lone
# surrogate) and values whose bits matter (-0.0, the smallest subnormal, a float32 that is not a short decimal)
KEYS = ["a b", "line\nbreak", "nul\x00", "\ud800", "plain"]
ROWS = np.array([[-0.0, 1.0], [np.float32(1e-45), 3.0], [np.float32(0.1), -2.5], [7.0, 8.0], [1 / 3, 2 / 3]],
                np.float32)


def test_save_then_load_keeps_every_key_and_bit(tmp_path):
    kv = KeyedVectors.from_arrays(KEYS, ROWS)
    path = kv.save(tmp_path / "v.vectors.npz")
    back = KeyedVectors.load(path)
    assert type(back) is KeyedVectors and back.index_to_key == KEYS
    assert back.vectors.tobytes() == ROWS.tobytes()  # bit for bit: -0.0 keeps its sign, the subnormal survives
    assert back.source == str(path)
    # deterministic: saving what was read gives the same bytes
    assert back.save(tmp_path / "again.npz").read_bytes() == path.read_bytes()
    assert load_vectors(path).index_to_key == KEYS and load_vectors(path, limit=2).index_to_key == KEYS[:2]


def test_fasttext_vectors_come_back_with_their_ngram_rows(tmp_path):
    rng = np.random.default_rng(0)
    kv = FastTextKeyedVectors.from_fasttext(["whale", "sea"], rng.normal(size=(2, 4)).astype(np.float32),
                                            rng.normal(size=(50, 4)).astype(np.float32), minn=2, maxn=4)
    path = kv.save(tmp_path / "ft.vectors.npz")
    back = KeyedVectors.load(path)  # the base class's load gives the class that saved it
    assert type(back) is FastTextKeyedVectors and (back.minn, back.maxn, back.bucket) == (2, 4, 50)
    assert back.vectors_ngrams.tobytes() == kv.vectors_ngrams.tobytes()
    assert back.vectors.tobytes() == kv.vectors.tobytes()
    # an unseen word is built from the n-gram rows: the same vector as before saving
    assert back["whales"].tobytes() == kv["whales"].tobytes() and "whales" not in back


def test_a_file_saved_from_a_class_that_is_gone_says_so(tmp_path):
    kv = KeyedVectors.from_arrays(["a"], np.ones((1, 2), np.float32))
    path = kv.save(tmp_path / "v.npz")
    raw = dict(np.load(path))
    raw["class"] = np.array("not_installed_mod:Vectors")
    atomic_save_npz(path, **raw)
    with pytest.raises(ArtifactError, match=r"saved from not_installed_mod:Vectors, which cannot be imported .*install "
                                            r"the plugin that provides it"):
        KeyedVectors.load(path)


def test_load_vectors_reads_a_grid_cell_file(tmp_path):
    from tokembed.compare.grid import _save_vectors  # the grid's own writer

    kv = KeyedVectors.from_arrays(["Ġthe", "whale"], np.array([[1, 2], [3, 4]], np.float32))
    rel = _save_vectors(kv, tmp_path, "bpe.glove")
    back = load_vectors(tmp_path / rel)
    assert rel == "grid/bpe.glove.vectors.npz" and back.index_to_key == ["Ġthe", "whale"]
    assert back.vectors.tobytes() == kv.vectors.tobytes()


def test_files_that_are_not_vectors_name_the_formats_expected(tmp_path):
    other = tmp_path / "matrix.npz"
    atomic_save_npz(other, data=np.ones(3))
    with pytest.raises(ArtifactError) as err:
        load_vectors(other)
    assert str(err.value) == (f"{other}: an .npz holding data, not vectors: expected a KeyedVectors file "
                              "(KeyedVectors.save: format 'tokembed-keyedvectors') or a grid cell's vectors (keys and "
                              "vectors)")
    blob = tmp_path / "model.vec"
    blob.write_bytes(b"\xba\x16O/\x00\x00\x00\x0c" * 8)  # binary bytes read as text
    with pytest.raises(ArtifactError) as err:
        load_vectors(blob)
    assert str(err.value).startswith(f"{blob}: binary data, not a word2vec text file; load_vectors reads a word2vec "
                                     "text file (or binary: .bin, binary=True), a KeyedVectors file")
    assert "\\x" not in str(err.value)  # no bytes shown
    saved = tmp_path / "glove.tokembed.json"
    saved.write_text('{\n "format": "tokembed",\n "kind": "embedder"\n}\n', encoding="utf-8")
    with pytest.raises(ArtifactError, match=r"a saved tokembed component, not a vector file: read it with "
                                            r"tokembed.load\(path\) \(an embedder's vectors are its wv_\)"):
        load_vectors(saved)
