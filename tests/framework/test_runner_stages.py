"""The runner's vectorizer pipeline and trained-embedder stages, exercised end to end with a small plugin installed
for the test as a distribution with an entry point (the path every third-party plugin takes), not a mock."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse

from tokembed.errors import RecipeError, TokembedError
from tokembed.registry import build_registry
from tokembed.runner import run_recipe

PLUGIN = '''
import numpy as np
import scipy.sparse

from tokembed import hookimpl
from tokembed.components import Embedder, Vectorizer
from tokembed.keyedvectors import KeyedVectors
from tokembed.sequences import TokenSequences, as_token_sequences


class TinyCounts(Vectorizer):
    """Token counts per document over the token ids of the input (CSR float64)."""

    name = "tiny-counts"

    def __init__(self, scale: float = 1.0):
        self.scale = scale

    def fit(self, X, y=None):
        seqs = as_token_sequences(X)
        self.vocab_ = list(seqs.vocab)
        return self

    def transform(self, X):
        self._check_is_fitted()
        seqs = as_token_sequences(X)
        rows = np.repeat(np.arange(len(seqs)), seqs.lengths())
        data = np.full(seqs.n_tokens, float(self.scale))
        m = scipy.sparse.csr_matrix((data, (rows, seqs.ids)), shape=(len(seqs), len(self.vocab_)))
        m.sum_duplicates()
        return m

    def get_feature_names_out(self):
        return np.asarray(self.vocab_, dtype=object)

    def _get_state(self):
        return {"vocab": self.vocab_}

    def _set_state(self, state):
        self.vocab_ = list(state["vocab"])


class TinyDense(Vectorizer):
    """The first n_components columns of the input matrix, dense (a stand-in for a truncated SVD)."""

    name = "tiny-dense"
    input_kind = "matrix"

    def __init__(self, n_components: int = 2):
        self.n_components = n_components

    def fit(self, X, y=None):
        self.n_features_in_ = X.shape[1]
        return self

    def transform(self, X):
        return np.asarray(X[:, : self.n_components].todense(), dtype=np.float32)

    def get_feature_names_out(self):
        return np.asarray([f"c{i}" for i in range(self.n_components)], dtype=object)

    def _get_state(self):
        return {"n_features_in": self.n_features_in_}

    def _set_state(self, state):
        self.n_features_in_ = state["n_features_in"]


class TinyVectors(Embedder):
    """Word vectors: each token's (count, first position / 100); trained on token sequences."""

    name = "tiny-vectors"

    def __init__(self, seed: int = 0):
        self.seed = seed

    def fit(self, X, y=None):
        seqs = as_token_sequences(X)
        counts = seqs.counts()
        first = np.full(seqs.vocab_size, -1.0)
        for pos in range(seqs.n_tokens - 1, -1, -1):
            first[seqs.ids[pos]] = pos
        keep = [i for i in range(seqs.vocab_size) if counts[i] and i not in seqs.special_ids]
        vectors = np.stack([counts[keep], first[keep] / 100.0 + 1.0], axis=1).astype(np.float32)
        self.wv_ = KeyedVectors.from_arrays([seqs.vocab[i] for i in keep], vectors)
        return self

    def _get_state(self):
        return {"keys": list(self.wv_.index_to_key), "vectors": self.wv_.vectors}

    def _set_state(self, state):
        self.wv_ = KeyedVectors.from_arrays(state["keys"], state["vectors"])


@hookimpl
def tokembed_register_vectorizers():
    return [TinyCounts, TinyDense]


@hookimpl
def tokembed_register_embedders():
    return [TinyVectors]
'''

CORPUS = "the whale and the sea\nthe ship\n\nthe whale\nsea and ship and whale\n"


@pytest.fixture
def tiny(fake_dists):
    fake_dists.module("tokembed_tiny", PLUGIN)
    fake_dists.dist("tokembed-tiny", {"tiny": "tokembed_tiny"})
    return fake_dists


def _recipe(tmp_path, body: str) -> str:
    (tmp_path / "corpus.txt").write_text(CORPUS, encoding="utf-8")
    path = tmp_path / "r.yaml"
    path.write_text("corpus: {path: corpus.txt}\ntokenizers:\n  words: {type: word, pre_tokenizer: whitespace_split}\n"
                    + textwrap.dedent(body), encoding="utf-8")
    return str(path)


def test_a_vectorizer_pipeline_runs_step_after_step_and_writes_each_matrix(tiny, tmp_path):
    reg = build_registry()
    path = _recipe(tmp_path, """\
        vectorizers:
          input: words
          nearest: 0
          steps:
            - {type: tiny-counts, scale: 2.0}
            - {type: tiny-dense, n_components: 3}
        """)
    from tokembed.similarity import ZeroRowWarning

    # the last step keeps 3 columns (<pad>, <unk>, "the"): line 3 has no "the", so its row is all zero
    with pytest.warns(ZeroRowWarning, match=r"1 of 4 rows are all zero \(rows 3\)"):
        result = run_recipe(path, out=tmp_path / "out", registry=reg, quiet=True)
    out = tmp_path / "out"
    counts = scipy.sparse.load_npz(out / "tiny-counts.npz")
    # 4 non-empty lines; the word tokenizer's vocabulary has <pad>, <unk>, then the words by frequency
    tok = result.tokenizers["words"]
    assert counts.shape == (4, tok.get_vocab_size())
    the, whale = tok.token_to_id("the"), tok.token_to_id("whale")
    assert counts[0, the] == 4.0 and counts[0, whale] == 2.0  # "the" twice in line 0, scale 2
    dense = np.load(out / "tiny-dense.npy")
    assert dense.shape == (4, 3) and dense.dtype == np.float32
    assert np.array_equal(dense, counts[:, :3].toarray().astype(np.float32))  # the second step read the first's output
    assert result.matrices["tiny-counts"] == {"shape": [4, tok.get_vocab_size()], "dtype": "float64",
                                              "sparse": True, "nnz": counts.nnz}
    assert (out / "tiny-counts.tokembed.json").is_file() and (out / "tiny-dense.tokembed.json").is_file()
    marker = json.loads((out / ".tokembed-run").read_text())
    assert {"tiny-counts.npz", "tiny-dense.npy", "tiny-counts.tokembed.json"} <= set(marker["files"])
    timings = json.loads((out / "timings.json").read_text())
    assert {"encode corpus words", "fit vectorizer tiny-counts", "fit vectorizer tiny-dense"} <= set(
        timings)
    near = result.neighbours["vectorizers"]
    assert near["document"] == 0 and len(near["nearest"]) == 3  # every other document, the most similar first
    assert [n["cosine"] for n in near["nearest"]] == sorted((n["cosine"] for n in near["nearest"]), reverse=True)
    assert {n["document"]: n["cosine"] for n in near["nearest"]}[3] == 0.0  # the zero row: cosine 0, not NaN
    assert dense[3].tolist() == [0.0, 0.0, 0.0]


def test_the_pipeline_reads_paragraphs_when_asked_and_can_skip_saving_matrices(tiny, tmp_path):
    reg = build_registry()
    path = _recipe(tmp_path, """\
        vectorizers:
          input: words
          unit: paragraph
          save_matrix: false
          steps: [{type: tiny-counts}]
        """)
    result = run_recipe(path, out=tmp_path / "out", registry=reg, quiet=True)
    assert result.matrices["tiny-counts"]["shape"][0] == 2  # two paragraphs (a blank line between them)
    assert not (tmp_path / "out" / "tiny-counts.npz").exists()  # save_matrix: false
    assert (tmp_path / "out" / "tiny-counts.tokembed.json").exists()


def test_a_trained_embedder_reads_the_tokenizer_output_and_is_evaluated(tiny, tmp_path):
    reg = build_registry()
    path = _recipe(tmp_path, """\
        embedders:
          vec: {type: tiny-vectors, input: words, nearest: [whale, kraken]}
        """)
    result = run_recipe(path, out=tmp_path / "out", registry=reg, quiet=True)
    wv = result.embedders["vec"].wv_
    # counts over the 4 lines: the 4, whale 3, and 3, sea 2, ship 2; no vector for <pad>/<unk> (special ids)
    assert wv["the"][0] == 4.0 and wv["whale"][0] == 3.0 and "<unk>" not in wv
    assert result.neighbours["vec"]["kraken"] is None and len(result.neighbours["vec"]["whale"]) == 4
    saved = (tmp_path / "out" / "vec.tokembed.npz")
    assert saved.is_file()  # the vectors went to the arrays file beside the JSON


def test_validate_rejects_misplaced_pipeline_keys(tiny, tmp_path):
    reg = build_registry()
    path = _recipe(tmp_path, """\
        vectorizers:
          input: words
          unit: sentence
          nearest: -1
          steps: [{type: tiny-counts, nearest: [a]}]
        """)
    with pytest.raises(RecipeError) as info:
        run_recipe(path, out=tmp_path / "out", registry=reg, quiet=True)
    lines = [str(p) for p in info.value.problems]
    assert any("vectorizers.unit: expected one of 'line', 'paragraph', 'file'" in line for line in lines)
    assert any("vectorizers.nearest: " in line and ">= 0" in line for line in lines)
    assert any("vectorizers.steps.0.nearest: not used by vectorizers" in line for line in lines)
    assert not (tmp_path / "out").exists()


def test_the_cli_runs_the_pipeline_and_prints_the_shapes(tiny, tmp_path):
    path = _recipe(tmp_path, """\
        vectorizers:
          input: words
          steps: [{type: tiny-counts}]
        """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(r) for r in tiny.roots] + sys.path)}
    done = subprocess.run([sys.executable, "-m", "tokembed.cli", "run", path, "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    # 4 lines x 7 entries (<pad>, <unk>, the, whale, and, sea, ship); 12 distinct (line, word) pairs
    assert "vectorizer tiny-counts: 4 x 7 float64 (sparse, 12 non-zeros)" in done.stdout


def test_errors_with_their_own_constructor_are_located_not_turned_into_tracebacks(tmp_path):
    """A component error whose class takes more than a message (ParameterError) raised while a stage runs keeps its
    class and attributes and gains the stage's location."""
    from tokembed.errors import ParameterError, with_context

    err = with_context(ParameterError("svd", "n_components", "=50 is above its bound 3"), "r.yaml:4:9: x: boom")
    assert isinstance(err, ParameterError) and err.param == "n_components" and str(err) == "r.yaml:4:9: x: boom"
    path = _recipe(tmp_path, """\
        vectorizers:
          input: words
          steps: [{type: tfidf}, {type: svd, n_components: 500}]
        """)
    with pytest.raises(ParameterError) as info:
        run_recipe(path, out=tmp_path / "out", registry=build_registry(), quiet=True)
    # line 6 is the steps line; column 26 is the second step's "{" ("  steps: [" is 10 characters, "{type: tfidf}, " 15)
    assert str(info.value).startswith(f"{path}:6:26: vectorizers.svd: svd: n_components=500 is above")
    assert info.value.param == "n_components"


def test_validate_checks_the_order_of_the_pipeline(tmp_path):
    path = _recipe(tmp_path, """\
        vectorizers:
          input: words
          steps: [{type: svd, n_components: 2}, {type: tfidf}, {type: cooccurrence}]
        """)
    with pytest.raises(RecipeError) as info:
        run_recipe(path, out=tmp_path / "out", registry=build_registry(), quiet=True)
    assert [str(p).split(": ", 1)[1] for p in info.value.problems] == [
        "vectorizers.steps.0: svd reads a matrix, but the pipeline starts from documents (the input tokenizer's "
        "token sequences, or the raw text)",
        "vectorizers.steps.1: tfidf reads documents, but it follows svd, whose output is a matrix",
        "vectorizers.steps.2: cooccurrence reads documents, but it follows tfidf, whose output is a matrix"]


def test_nearest_needs_document_rows_and_a_document_that_exists(tmp_path):
    reg = build_registry()
    path = _recipe(tmp_path, """\
        vectorizers:
          input: words
          nearest: 0
          steps: [{type: onehot}]
        """)
    with pytest.raises(RecipeError) as info:  # refused at validate: onehot's rows are the tokens
        run_recipe(path, out=tmp_path / "out", registry=reg, quiet=True)
    assert [str(p).split(": ", 1)[1] for p in info.value.problems] == [
        "vectorizers.nearest: the pipeline's rows are not documents: onehot gives one row per token, so there are "
        "no nearest documents to show (start the pipeline with bow or tfidf, or drop nearest)"]
    path = _recipe(tmp_path, """\
        vectorizers:
          input: words
          nearest: 4
          steps: [{type: tfidf}]
        """)
    with pytest.raises(TokembedError) as info:  # the corpus has 4 lines, 0 to 3: stopped before fitting tfidf
        run_recipe(path, out=tmp_path / "out", registry=reg, quiet=True)
    assert "vectorizers.nearest: 4 is not a document of the corpus (it has 4, numbered 0 to 3)" in str(info.value)
    assert str(info.value).startswith(f"{path}:6:12: ")  # the nearest: line ("  nearest: " is 11 characters)
    assert not (tmp_path / "out" / "tfidf.tokembed.json").exists()


def test_an_all_zero_output_matrix_is_warned_about(tmp_path):
    # a fixed vocabulary that no word of the corpus is in: every row is zero
    path = _recipe(tmp_path, """\
        vectorizers:
          input: words
          steps: [{type: bow, vocabulary: [kraken, leviathan]}]
        """)
    with pytest.warns(UserWarning, match=r"vectorizers.bow: every value of its 4 x 2 output is zero"):
        run_recipe(path, out=tmp_path / "out", registry=build_registry(), quiet=True)


def test_a_first_step_that_reads_token_sequences_only_needs_an_input(tmp_path):
    path = _recipe(tmp_path, """\
        vectorizers:
          steps: [{type: cooccurrence}]
        """)
    with pytest.raises(RecipeError) as info:
        run_recipe(path, out=tmp_path / "out", registry=build_registry(), quiet=True)
    assert [str(p).split(": ", 1)[1] for p in info.value.problems] == [
        "vectorizers.steps.0: cooccurrence counts token sequences and has no pre-tokenizer of its own: give the "
        "pipeline an input: tokenizer of this recipe"]
    path = _recipe(tmp_path, """\
        vectorizers:
          input: null
          steps: [{type: cooccurrence}]
        """)
    with pytest.raises(RecipeError, match="cooccurrence counts token sequences"):  # input: null is the raw text
        run_recipe(path, out=tmp_path / "out", registry=build_registry(), quiet=True)
