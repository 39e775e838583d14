"""The tokenizer x embedder grid of `tokembed compare`: every embedder over every tokenizer, cells scored, a failing
cell reported in place, deterministic output. Uses a tiny embedder plugin installed for the test."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from tokembed.compare import run_comparison
from tokembed.compare.grid import Grid
from tokembed.datasets import DATASETS
from tokembed.datasets._store import manifest_path
from tokembed.errors import RecipeError
from tokembed.recipe import load_recipe
from tokembed.registry import build_registry

PLUGIN = '''
import numpy as np

from tokembed import hookimpl
from tokembed.components import Embedder
from tokembed.errors import TokembedError
from tokembed.keyedvectors import KeyedVectors
from tokembed.sequences import as_token_sequences


class CountVectors(Embedder):
    """Each token's vector: its co-occurrence counts with the vocabulary's first `vector_size` tokens in a window
    of one (deterministic, no training)."""

    name = "count-vectors"

    def __init__(self, vector_size: int = 8, fail_on: str = ""):
        self.vector_size = vector_size
        self.fail_on = fail_on

    def fit(self, X, y=None):
        seqs = as_token_sequences(X)
        if self.fail_on and self.fail_on in seqs.vocab:
            raise TokembedError(f"refusing a vocabulary with {self.fail_on!r}")
        counts = seqs.counts()
        order = np.lexsort((np.arange(seqs.vocab_size), -counts))
        keep = [int(i) for i in order if counts[i] and int(i) not in seqs.special_ids]
        col = {t: j for j, t in enumerate(keep[: self.vector_size])}
        row = {t: i for i, t in enumerate(keep)}
        m = np.zeros((len(keep), self.vector_size), np.float32)
        for d in range(len(seqs)):
            ids = seqs[d].tolist()
            for a, b in zip(ids, ids[1:]):
                if a in row and b in col:
                    m[row[a], col[b]] += 1
                if b in row and a in col:
                    m[row[b], col[a]] += 1
        m += 0.01  # no zero vector
        self.wv_ = KeyedVectors.from_arrays([seqs.vocab[i] for i in keep], m)
        return self

    def _get_state(self):
        return {"keys": list(self.wv_.index_to_key), "vectors": self.wv_.vectors}

    def _set_state(self, state):
        self.wv_ = KeyedVectors.from_arrays(state["keys"], state["vectors"])


@hookimpl
def tokembed_register_embedders():
    return [CountVectors]
'''

PAIRS = [("whale", "sea", 9.0), ("ship", "sea", 8.0), ("whale", "ship", 6.0), ("captain", "ship", 7.0),
         ("captain", "whale", 3.0), ("sea", "the", 1.0)]
ANALOGIES = ": family\nwhale sea ship sea\nship sea whale sea\n"


def _fake_fetch(home: Path, name: str, text: str) -> None:
    spec = DATASETS[name]
    out = spec.path_in(home)
    out.write_text(text, encoding="utf-8")
    data = out.read_bytes()
    manifest_path(spec, home).write_text(json.dumps({
        "name": name, "build_version": spec.version, "sha256": hashlib.sha256(data).hexdigest(),
        "size_bytes": len(data)}), encoding="utf-8")


@pytest.fixture
def project(tmp_path, monkeypatch, fake_dists):
    fake_dists.module("tokembed_gridtest", PLUGIN)
    fake_dists.dist("tokembed-gridtest", {"gridtest": "tokembed_gridtest"})
    home = tmp_path / "data"
    home.mkdir()
    monkeypatch.setenv("TOKEMBED_DATA", str(home))
    _fake_fetch(home, "wordsim353", "".join(f"{a}\t{b}\t{s}\n" for a, b, s in PAIRS))
    _fake_fetch(home, "google_analogy", ANALOGIES)
    recipe = tmp_path / "grid.yaml"
    recipe.write_text("""\
corpus: {builtin: moby-dick}
compare:
  tokenizers:
    words: {type: word, min_frequency: 2}
    chars: {type: char}
  grid:
    embedders:
      counts: {type: count-vectors, vector_size: 16}
      picky: {type: count-vectors, fail_on: "q"}
    sets: [wordsim353, google_analogy]
""", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return recipe


def test_every_embedder_runs_over_every_tokenizer_and_each_cell_is_scored(project, tmp_path):
    run = run_comparison(project, out=tmp_path / "out", registry=build_registry(), quiet=True)
    grid = run.grid
    assert [(c.tokenizer, c.embedder) for c in grid.cells] == [
        ("words", "counts"), ("words", "picky"), ("chars", "counts"), ("chars", "picky")]
    words = grid.cell("words", "counts")
    # every word of the sets is a word of Moby Dick seen at least twice: one token each, all pairs evaluated
    assert words.error is None and words.single_token_share == 1.0
    ws = words.scores["wordsim353"]
    assert ws["pairs_used"] == 6 and -1 <= ws["spearman"] <= 1
    low, high = ws["spearman_ci95"]
    assert low <= ws["spearman"] <= high
    chars = grid.cell("chars", "counts")
    assert chars.error is None and chars.single_token_share == 0.0  # every word is several characters
    # the char tokenizer's vocabulary holds "q": that cell fails, in place, and the others ran
    assert "refusing a vocabulary with 'q'" in grid.cell("chars", "picky").error
    assert grid.cell("words", "picky").error is None
    out = tmp_path / "out"
    written = Grid.from_json((out / "grid.json").read_text())
    assert [c.error for c in written.cells] == [c.error for c in grid.cells]
    assert (out / "grid.csv").read_text().splitlines()[0].startswith("tokenizer,embedder,set,kind,score")
    assert words.vectors_file == "grid/words.counts.vectors.npz"
    saved = np.load(out / words.vectors_file)
    assert saved["vectors"].dtype == np.float32 and "whale" in saved["keys"].tolist()
    assert "comparison.json" not in {p.name for p in out.iterdir()}  # no corpora: no metric comparison
    table = grid.to_table()
    assert "counts:wordsim353" in table and "cell chars x picky failed" in table


def test_a_word_split_in_pieces_gets_the_mean_of_its_piece_vectors(project, tmp_path):
    run = run_comparison(project, out=tmp_path / "out", registry=build_registry(), quiet=True)
    tok = run.tokenizers["chars"]
    from tokembed.pieces import compose_word_vectors
    from tokembed.sequences import TokenSequences

    reg = build_registry()
    emb = reg.get("embedder", "count-vectors")(vector_size=16)
    emb.fit(TokenSequences.from_tokenizer(tok, ["the whale and the sea", "the ship"]))
    composed = compose_word_vectors(tok, emb.wv_, ["sea"])
    # "sea" is the three characters s, e, a: its vector is the mean of their three rows
    expected = np.mean([emb.wv_["s"], emb.wv_["e"], emb.wv_["a"]], axis=0)
    assert np.allclose(composed.vectors["sea"], expected)


def test_two_runs_give_the_same_grid_apart_from_times(project, tmp_path):
    first = run_comparison(project, out=tmp_path / "a", registry=build_registry(), quiet=True).grid
    second = run_comparison(project, out=tmp_path / "b", registry=build_registry(), quiet=True).grid
    assert first.to_dict(timings=False) == second.to_dict(timings=False)
    assert (tmp_path / "a" / "grid" / "chars.counts.vectors.npz").read_bytes() == \
        (tmp_path / "b" / "grid" / "chars.counts.vectors.npz").read_bytes()


def test_grid_problems_are_reported_before_any_work(project, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("""\
compare:
  tokenizers: {words: {type: word}}
  grid:
    embedders:
      counts: {type: count-vectors, input: words, vector_sise: 3}
    sets: [wordsim35]
    compose: max
    extra: 1
""", encoding="utf-8")
    with pytest.raises(RecipeError) as info:
        load_recipe(bad, registry=build_registry())
    lines = "\n".join(str(p) for p in info.value.problems)
    assert "corpus: missing: the grid's embedders train on the recipe's corpus" in lines
    assert "compare.grid.embedders.counts.input: not used in a grid" in lines
    assert "compare.grid.embedders.counts.vector_sise: unknown parameter" in lines
    assert "compare.grid.sets.0: " in lines and "wordsim353" in lines
    assert "compare.grid.compose: expected one of 'mean', 'sum', 'fasttext', got 'max'" in lines
    assert "compare.grid.extra: unknown key" in lines


def test_an_embedder_that_learns_nothing_from_tokens_is_refused_in_a_grid(project, tmp_path):
    bad = tmp_path / "sin.yaml"
    bad.write_text("""\
corpus: {builtin: moby-dick}
compare:
  tokenizers: {words: {type: word}}
  grid:
    embedders:
      pos: {type: sinusoidal, d_model: 8}
    sets: [wordsim353]
""", encoding="utf-8")
    with pytest.raises(RecipeError) as info:
        load_recipe(bad, registry=build_registry())
    assert [str(p).split(": ", 1)[1] for p in info.value.problems] == [
        "compare.grid.embedders.pos: sinusoidal learns nothing from token sequences (its table comes from its "
        "parameters alone), so it has no word vectors to score; a grid trains embedders such as glove, fasttext or "
        "word2vec"]


def test_a_run_scores_piece_vectors_through_composed_words(project, tmp_path):
    """tokembed run: an embedder over a character tokenizer is evaluated on words composed from its pieces; one
    over the word tokenizer (whole_words) on its own vectors."""
    from tokembed.runner import run_recipe

    recipe = tmp_path / "run.yaml"
    recipe.write_text("""\
corpus: {builtin: moby-dick}
tokenizers:
  words: {type: word, min_frequency: 2}
  chars: {type: char}
embedders:
  on_words: {type: count-vectors, input: words, vector_size: 16}
  on_chars: {type: count-vectors, input: chars, vector_size: 16}
evaluate: [wordsim353]
""", encoding="utf-8")
    result = run_recipe(recipe, out=tmp_path / "run", registry=build_registry(), quiet=True)
    chars = result.evaluation["on_chars"]
    # every word of the set is several characters: all six pairs are scored from composed vectors
    assert chars["composed"] == {"compose": "mean", "words": 5, "single_token_share": 0.0}
    assert chars["wordsim353"]["pairs_used"] == 6
    assert "composed" not in result.evaluation["on_words"]
    assert result.evaluation["on_words"]["wordsim353"]["pairs_used"] == 6


def test_the_analogy_candidates_are_the_corpus_words_for_every_tokenizer(project, tmp_path):
    from tokembed.pieces import frequent_words

    # counts: the 3, sea 2, whale 2 (a tie, broken by the word), ship 1; lowercased
    assert frequent_words(["The whale the sea", "whale SEA ship the"], 3) == ["the", "sea", "whale"]
    run = run_comparison(project, out=tmp_path / "out", registry=build_registry(), quiet=True)
    words, chars = run.grid.cell("words", "counts"), run.grid.cell("chars", "counts")
    # the char tokenizer gives every pool word a vector; the word tokenizer (min_frequency 2) loses the words seen
    # once, so its pool, the same list of words, has fewer rows with a vector
    pool_words = words.scores["google_analogy"]["restrict_vocab"]
    pool_chars = chars.scores["google_analogy"]["restrict_vocab"]
    assert 0 < pool_words < pool_chars
    assert words.scores["google_analogy"]["questions_total"] == chars.scores["google_analogy"]["questions_total"] == 2


def test_the_cli_exits_1_naming_the_failed_cells_after_writing_the_others(project, tmp_path, capsys):
    from tokembed.cli import main

    status = main(["compare", str(project), "--out", str(tmp_path / "cli"), "--quiet"])
    err = capsys.readouterr().err
    # the picky embedder refuses the char vocabulary (it holds "q"): 1 of the 4 cells
    assert status == 1 and "1 of 4 grid cells failed (chars x picky)" in err
    written = json.loads((tmp_path / "cli" / "grid.json").read_text())
    assert [c["error"] is None for c in written["cells"]] == [True, True, True, False]


SHIPPED = Path(__file__).resolve().parents[2] / "recipes" / "grid-wordvectors.yaml"


@pytest.fixture
def small_sets(tmp_path, monkeypatch):
    """The five sets of the shipped recipe, as tiny files of Moby Dick's words (not the real datasets)."""
    home = tmp_path / "sets"
    home.mkdir()
    monkeypatch.setenv("TOKEMBED_DATA", str(home))
    pairs = "".join(f"{a}\t{b}\t{s}\n" for a, b, s in PAIRS)
    for name in ("wordsim353", "simlex999", "men", "rare_words"):
        _fake_fetch(home, name, pairs)
    _fake_fetch(home, "google_analogy", ANALOGIES)
    monkeypatch.chdir(tmp_path)


def test_the_shipped_grid_recipe_runs_on_the_bundled_text(small_sets, tmp_path):
    # the shipped recipe with its corpus, sizes and epochs made small: every tokenizer x GloVe and FastText
    small = ["corpus={builtin: moby-dick}", "compare.corpora.wv_corpus={builtin: moby-dick, max_lines: 500}",
             "compare.tokenizers.bpe8k.vocab_size=600", "compare.tokenizers.bpe32k.vocab_size=1200",
             "compare.tokenizers.bytebpe32k.vocab_size=600", "compare.tokenizers.wordpiece30k.vocab_size=1200"]
    for emb in ("glove", "fasttext"):
        small += [f"compare.grid.embedders.{emb}.vector_size=16", f"compare.grid.embedders.{emb}.epochs=1",
                  f"compare.grid.embedders.{emb}.workers=1"]
    small.append("compare.grid.embedders.fasttext.bucket=20000")
    run = run_comparison(SHIPPED, overrides=small, out=tmp_path / "grid", registry=build_registry(), quiet=True)
    grid = run.grid
    assert [t for t in grid.tokenizers] == ["words", "char", "bpe8k", "bpe32k", "bytebpe32k", "wordpiece30k"]
    assert [c.error for c in grid.cells] == [None] * 12
    for c in grid.cells:  # every cell scored every set; word pairs have an interval around rho
        assert set(c.scores) == {"wordsim353", "simlex999", "men", "rare_words", "google_analogy"}
        low, high = c.scores["men"]["spearman_ci95"]
        assert low <= c.scores["men"]["spearman"] <= high
    assert grid.cell("char", "glove").single_token_share == 0.0 and grid.cell("words", "glove").single_token_share == 1
    assert (tmp_path / "grid" / "grid.json").is_file() and (tmp_path / "grid" / "report.html").is_file()
