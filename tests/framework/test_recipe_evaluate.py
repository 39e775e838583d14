"""The recipe's ``evaluate:`` section: sets read by dataset name, checked before any work, scored by the runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tokembed.cli import main
from tokembed.datasets import DATASETS
from tokembed.datasets._store import manifest_path
from tokembed.errors import RecipeError
from tokembed.recipe import load_recipe
from tokembed.runner import run_recipe

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "vectors" / "glove6b50d_sample.txt"

# Five pairs whose words are all in the GloVe fixture, with made-up human scores.
PAIRS = [("king", "queen", 8.0), ("tiger", "cat", 7.0), ("money", "cash", 9.0), ("father", "mother", 6.0),
         ("king", "cabbage", 0.5)]


def _fake_fetch(home: Path, name: str, text: str) -> None:
    """Put a dataset into ``home`` the way ``tokembed data fetch`` leaves it: the file and a matching manifest."""
    import hashlib

    spec = DATASETS[name]
    out = spec.path_in(home)
    out.write_text(text, encoding="utf-8")
    data = out.read_bytes()
    manifest_path(spec, home).write_text(json.dumps({
        "name": name, "build_version": spec.version, "sha256": hashlib.sha256(data).hexdigest(),
        "size_bytes": len(data)}), encoding="utf-8")


@pytest.fixture()
def data_home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "data"
    home.mkdir()
    monkeypatch.setenv("TOKEMBED_DATA", str(home))
    return home


def test_evaluate_section_scores_pretrained_vectors_like_gensim(data_home, tmp_path):
    gensim = pytest.importorskip("gensim")
    _fake_fetch(data_home, "wordsim353", "".join(f"{a}\t{b}\t{s}\n" for a, b, s in PAIRS))
    recipe = tmp_path / "eval.yaml"
    recipe.write_text(f"evaluate:\n  sets: [wordsim353]\n  vectors:\n    glove: {{path: {FIXTURE}}}\n"
                      f"output: {tmp_path / 'run'}\n")
    result = run_recipe(recipe, quiet=True)
    written = json.loads((tmp_path / "run" / "evaluation.json").read_text())
    assert written == result.evaluation
    ours = written["glove"]["wordsim353"]
    kv = gensim.models.KeyedVectors.load_word2vec_format(str(FIXTURE))
    pairs_file = tmp_path / "pairs.tsv"
    pairs_file.write_text("".join(f"{a}\t{b}\t{s}\n" for a, b, s in PAIRS))
    pearson, spearman, oov = kv.evaluate_word_pairs(str(pairs_file), delimiter="\t", restrict_vocab=10**6)
    assert ours["pairs_used"] == 5 and ours["pairs_total"] == 5
    assert ours["spearman"] == pytest.approx(spearman.statistic, abs=1e-12)


def test_short_form_and_problems_are_reported_before_any_work(data_home, tmp_path):
    _fake_fetch(data_home, "wordsim353", "king\tqueen\t8\n")
    good = tmp_path / "short.yaml"
    good.write_text("evaluate: [wordsim353]\n")
    assert load_recipe(good).evaluate.sets == ("wordsim353",)
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "evaluate:\n"
        "  sets: [wordsim35, prose_mix, simlex999]\n"
        "  restrict_vocab: 0\n"
        "  vectors:\n"
        "    v: {path: missing.bin}\n"
    )
    with pytest.raises(RecipeError) as err:
        load_recipe(bad)
    lines = err.value.problems
    assert lines[0].startswith(f"{bad}:2:10: evaluate.sets.0: unknown dataset 'wordsim35'. Did you mean 'wordsim353'?")
    assert lines[1].startswith(f"{bad}:2:21: evaluate.sets.1: dataset 'prose_mix' is a corpus, not a word_pairs or analogies")
    # simlex999 is a real set, not fetched into this empty data home: the message gives the command to run
    assert lines[2].startswith(f"{bad}:2:32: evaluate.sets.2: dataset 'simlex999' is not fetched yet")
    assert lines[2].endswith("Run: tokembed data fetch simlex999")
    assert lines[3] == f"{bad}:3:19: evaluate.restrict_vocab: expected int >= 1 or null, got 0"
    assert lines[4] == f"{bad}:5:15: evaluate.vectors.v.path: no such file or folder: missing.bin"
    assert len(lines) == 5
    assert main(["run", str(bad), "--out", str(tmp_path / "never")]) == 2
    assert not (tmp_path / "never").exists()
