"""The GloVe embedder: errors the issue lists, outputs, files, PyTorch, determinism across processes, subwords."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from tokembed import build_registry
from tokembed.errors import EmptyVocabularyError, NotFittedError, ParameterError, TokembedError
from tokembed.keyedvectors import KeyedVectors, load_vectors
from tokembed.plugins.glove import GloVe, TrainingDivergedError
from tokembed.sequences import TokenSequences
from tokembed.testing import check_component, sample_corpus

SMALL = dict(vector_size=12, epochs=5, min_count=2, x_max=10.0, window=5, workers=1, seed=0)


@pytest.fixture(scope="module")
def moby_tokens() -> list[list[str]]:
    return [p.lower().split() for p in sample_corpus(60_000)]


@pytest.fixture(scope="module")
def fitted(moby_tokens) -> GloVe:
    return GloVe(**SMALL).fit(moby_tokens)


# -- registration and the contract --------------------------------------------------------------------------------
def test_registered_as_a_trained_embedder():
    assert build_registry().get("embedder", "glove") is GloVe and GloVe.fits_on_tokens


def test_contract():
    check_component(GloVe)


# -- bad input ----------------------------------------------------------------------------------------------------
def _lines_as_documents(text: str) -> list[list[str]]:
    return [line.split() for line in text.split("\n")]


def test_no_pair_at_all_is_a_clear_error_before_training(tmp_path):
    docs = _lines_as_documents("apple\nbanana\napple\nbanana")  # one word per document: no pair
    model = GloVe(vector_size=4, min_count=1, workers=1)
    with pytest.raises(EmptyVocabularyError) as err:
        model.fit(docs)
    msg = str(err.value)
    assert msg.startswith("glove: no co-occurrence pair to train on")
    assert "a vocabulary of 2 words" in msg and "4 kept tokens of 4 in 4 documents" in msg
    assert "no document holds two kept tokens" in msg
    # nothing is fitted, so nothing can be written
    assert not model.is_fitted()
    with pytest.raises(NotFittedError):
        model.save(tmp_path / "glove.tokembed.json")
    assert list(tmp_path.iterdir()) == []


def test_min_count_above_every_count_is_the_same_error():
    docs = _lines_as_documents("apple banana apple banana")
    with pytest.raises(EmptyVocabularyError, match=r"a vocabulary of 0 words \(min_count=5\) and 0 kept tokens of 4 "
                                                   r"in 1 documents, but no word is counted at least 5 times"):
        GloVe(vector_size=4, workers=1).fit(docs)


def test_a_failed_refit_leaves_no_old_vectors(fitted, moby_tokens, tmp_path):
    model = GloVe(**{**SMALL, "min_count": 1}).fit(moby_tokens[:3])
    with pytest.raises(EmptyVocabularyError):
        model.fit([["one"], ["two"]])
    with pytest.raises(NotFittedError):
        model.save(tmp_path / "x.tokembed.json")


@pytest.mark.parametrize("param, value, problem", [
    ("x_max", 0, "must be a number > 0, got 0"),
    ("x_max", -1.5, "must be a number > 0, got -1.5"),
    ("alpha", -0.1, "must be a number >= 0, got -0.1"),
    ("learning_rate", 0.0, "must be a number > 0, got 0.0"),
    ("learning_rate", float("nan"), "must be a number > 0, got nan"),
    ("clip", 0, "must be a number > 0, got 0"),
    ("vector_size", 0, "must be an int >= 1 and <= 65,536, got 0"),
    ("vector_size", 10**20, "must be an int >= 1 and <= 65,536, got 100000000000000000000"),
    ("clip", float("inf"), "must be a number > 0, got inf (infinity is not allowed: give a large finite number)"),
    ("output", "both", "must be one of 'sum', 'word', 'concat', got 'both'"),
    ("window", 0, "must be an int >= 1 and <= 2,147,483,647, got 0"),
    ("weighting", "gaussian", "must be one of 'harmonic', 'uniform', got 'gaussian'"),
])
def test_parameter_errors_name_the_parameter(param, value, problem):
    with pytest.raises(ParameterError) as err:
        GloVe(**{param: value}).fit([["a", "b"]])
    assert (err.value.component, err.value.param, err.value.problem) == ("glove", param, problem)


def test_validate_reports_every_bad_parameter_at_once():
    problems = GloVe.check_params({"x_max": 0, "alpha": -1, "learning_rate": 0})
    assert [p for p, _ in problems] == ["x_max", "alpha", "learning_rate"]
    assert problems[0][1] == "glove: x_max must be a number > 0, got 0"


def test_tokembed_validate_names_the_parameters(tmp_path):
    (tmp_path / "c.txt").write_text("a b c\n")
    recipe = tmp_path / "r.yaml"
    recipe.write_text(textwrap.dedent("""\
        corpus: {path: c.txt}
        tokenizers:
          words: {type: word}
        embedders:
          glove: {type: glove, input: words, x_max: 0, alpha: -1, learning_rate: 0}
        output: out
    """))
    proc = subprocess.run([sys.executable, "-m", "tokembed.cli", "validate", str(recipe)], capture_output=True,
                          text=True)
    assert proc.returncode == 2
    for name in ("x_max", "alpha", "learning_rate"):
        assert f"embedders.glove.{name}:" in proc.stderr


def test_divergence_names_the_epoch_and_keeps_nothing(moby_tokens, tmp_path):
    model = GloVe(**{**SMALL, "learning_rate": 1e30})
    with pytest.raises(TrainingDivergedError) as err:
        model.fit(moby_tokens)
    assert isinstance(err.value, TokembedError)
    assert f"in epoch {err.value.epoch} of 5" in str(err.value)
    assert "lower learning_rate (now 1e+30" in str(err.value)
    assert not model.is_fitted()
    with pytest.raises(NotFittedError):
        model.save(tmp_path / "glove.tokembed.json")


def test_fit_none_and_raw_text_are_refused():
    with pytest.raises(TokembedError, match="fit needs documents as token sequences"):
        GloVe().fit(None)
    with pytest.raises(TokembedError, match="document 0 is a str"):
        GloVe().fit(["raw text, not tokens"])


# -- outputs ------------------------------------------------------------------------------------------------------
def test_vectors_shapes_order_and_costs(fitted, moby_tokens):
    kv = fitted.wv_
    V = len(kv)
    assert kv.vectors.dtype == np.float32 and kv.vectors.shape == (V, 12)
    counts = fitted.counts_
    keys = kv.index_to_key
    # count-descending, ties broken by the key
    assert all(counts[i] > counts[i + 1] or (counts[i] == counts[i + 1] and keys[i] < keys[i + 1])
               for i in range(V - 1))
    flat = [t for doc in moby_tokens for t in doc]
    assert counts[0] == flat.count(keys[0])
    assert min(counts) >= 2
    np.testing.assert_array_equal(kv.vectors, fitted.word_vectors_ + fitted.context_vectors_)
    assert len(fitted.costs_) == 5 and fitted.costs_[-1] < fitted.costs_[0]
    from tokembed.plugins.cooccurrence import CooccurrenceVectorizer

    cv = CooccurrenceVectorizer(window=5, min_count=2).fit(moby_tokens)
    assert cv.index_to_key_ == keys and fitted.n_records_ == cv.matrix_.nnz  # trained on the plugin's matrix


@pytest.mark.parametrize("output", ["word", "concat"])
def test_output_modes(fitted, moby_tokens, output):
    other = GloVe(**{**SMALL, "output": output}).fit(moby_tokens)
    np.testing.assert_array_equal(other.word_vectors_, fitted.word_vectors_)  # same training, other read-out
    expected = fitted.word_vectors_ if output == "word" else np.hstack([fitted.word_vectors_,
                                                                        fitted.context_vectors_])
    np.testing.assert_array_equal(other.wv_.vectors, expected)


def test_save_load_and_vector_files(fitted, tmp_path):
    path = fitted.save(tmp_path / "glove.tokembed.json")
    assert (tmp_path / "glove.tokembed.npz").exists()
    data = json.loads(path.read_text())
    assert data["state"]["reproducible"] is True and "bit for bit" in data["state"]["reproducibility"]
    back = GloVe.load(path)
    np.testing.assert_array_equal(back.wv_.vectors, fitted.wv_.vectors)
    assert back.wv_.index_to_key == fitted.wv_.index_to_key and back.costs_ == fitted.costs_
    # word2vec text / binary and GloVe's own text layout, read back exactly
    for name, binary, header in (("w2v.txt", False, True), ("w2v.bin", True, True), ("glove.txt", False, False)):
        out = tmp_path / name
        if header:
            fitted.save_word2vec_format(out, binary=binary)
        else:
            fitted.save_glove_format(out)
        kv = load_vectors(out, binary=binary, no_header=not header)
        assert kv.index_to_key == fitted.wv_.index_to_key
        np.testing.assert_array_equal(kv.vectors, fitted.wv_.vectors)
    first = (tmp_path / "glove.txt").read_text().split("\n", 1)[0].split(" ")
    assert first[0] == fitted.wv_.index_to_key[0] and len(first) == 13


def test_hogwild_state_says_not_reproducible(moby_tokens, tmp_path):
    model = GloVe(**{**SMALL, "workers": 2}).fit(moby_tokens)
    assert np.isfinite(model.wv_.vectors).all()
    state = json.loads(model.save(tmp_path / "g.tokembed.json").read_text())["state"]
    assert state["reproducible"] is False and "Hogwild" in state["reproducibility"]


# -- tokenizer ids: word and subword ------------------------------------------------------------------------------
def _word_tokenizer():
    from tokembed.plugins.word.tokenizer import WordTokenizer

    return WordTokenizer(min_frequency=1).fit(sample_corpus(60_000))


def test_fit_on_a_tokenizers_token_sequences_and_to_torch():
    torch = pytest.importorskip("torch")
    tok = _word_tokenizer()
    seqs = TokenSequences.from_tokenizer(tok, sample_corpus(60_000))
    model = GloVe(**SMALL).fit(seqs)
    keys = model.wv_.index_to_key
    assert "<pad>" not in keys and "<unk>" not in keys  # special tokens are not trained
    assert [tok.id_to_token(int(i)) for i in model.token_ids_] == keys
    emb = model.to_torch()
    assert isinstance(emb, torch.nn.Embedding) and emb.weight.shape == (tok.get_vocab_size(), 12)
    weight = emb.weight.detach().numpy()
    for r in (0, 5, len(keys) - 1):
        np.testing.assert_array_equal(weight[tok.token_to_id(keys[r])], model.wv_.vectors[r])
    # rows without a vector (special tokens, words below min_count) are zeros
    missing = np.setdiff1d(np.arange(tok.get_vocab_size()), model.token_ids_)
    assert missing.size and not weight[missing].any()
    assert not emb.weight.requires_grad


def test_to_torch_after_token_lists_follows_the_keys(fitted):
    pytest.importorskip("torch")
    weight = fitted.to_torch(freeze=False).weight.detach().numpy()
    np.testing.assert_array_equal(weight, fitted.wv_.vectors)


def test_glove_over_bpe_pieces_is_keyed_by_the_tokenizers_tokens():
    from tokembed.plugins.bpe.tokenizer import BPETokenizer

    docs = sample_corpus(120_000)
    tok = BPETokenizer(vocab_size=600, end_of_word_suffix="</w>", pre_tokenizer="word_punct", seed=0).fit(docs)
    seqs = TokenSequences.from_tokenizer(tok, docs)
    model = GloVe(**SMALL).fit(seqs)
    vocab = {tok.id_to_token(i) for i in range(tok.get_vocab_size())}
    keys = model.wv_.index_to_key
    assert set(keys) <= vocab and any(k.endswith("</w>") for k in keys) and any(not k.endswith("</w>") for k in keys)
    assert [tok.id_to_token(int(i)) for i in model.token_ids_] == keys
    assert np.isfinite(model.wv_.vectors).all() and model.costs_[-1] < model.costs_[0]


# -- determinism across processes ---------------------------------------------------------------------------------
_CHILD = """
import hashlib, sys
from pathlib import Path
from tokembed.plugins.glove import GloVe
from tokembed.testing import sample_corpus
docs = [p.lower().split() for p in sample_corpus(40_000)]
out = Path(sys.argv[1])
GloVe(vector_size=10, epochs=4, min_count=2, x_max=10.0, workers=1, seed=7).fit(docs).save(out / "g.tokembed.json")
print(hashlib.sha256((out / "g.tokembed.npz").read_bytes() + (out / "g.tokembed.json").read_bytes()).hexdigest())
"""


def test_same_bytes_in_three_processes_with_different_hash_seeds(tmp_path):
    digests = []
    for hash_seed in ("0", "1", "12345"):
        folder = tmp_path / hash_seed
        folder.mkdir()
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        proc = subprocess.run([sys.executable, "-c", _CHILD, str(folder)], capture_output=True, text=True, env=env,
                              check=True)
        digests.append(proc.stdout.strip())
    assert len(digests[0]) == 64 and len(set(digests)) == 1, digests


def test_warmup():
    GloVe.warmup()
