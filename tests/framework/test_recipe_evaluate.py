"""The recipe's ``evaluate:`` section: sets read by dataset name, checked before any work, scored by the runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tokembed.cli import main
from tokembed.datasets import DATASETS
from tokembed.datasets._store import manifest_path
from tokembed.errors import ArtifactError, RecipeError
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
    lines = [str(p) for p in err.value.problems]
    assert lines[0].startswith(f"{bad}:2:10: evaluate.sets.0: unknown dataset 'wordsim35'. Did you mean 'wordsim353'?")
    assert lines[1] == (f"{bad}:2:21: evaluate.sets.1: dataset 'prose_mix' is a text corpus, not a word-pair set or "
                        "an analogy set. Datasets of those kinds: google_analogy, men, rare_words, simlex999, "
                        "simverb3500, wordsim353")
    # simlex999 is a real set, not fetched into this empty data home: the message gives the command to run
    assert lines[2].startswith(f"{bad}:2:32: evaluate.sets.2: dataset 'simlex999' is not fetched yet")
    assert lines[2].endswith("Run: tokembed data fetch simlex999")
    assert lines[3] == f"{bad}:3:19: evaluate.restrict_vocab: expected int >= 1 or null, got 0"
    assert lines[4] == f"{bad}:5:15: evaluate.vectors.v.path: no such file or folder: missing.bin"
    assert len(lines) == 5
    assert main(["run", str(bad), "--out", str(tmp_path / "never")]) == 2
    assert not (tmp_path / "never").exists()


def test_no_header_reads_a_glove_text_file_and_scores_it_the_same(data_home, tmp_path):
    _fake_fetch(data_home, "wordsim353", "".join(f"{a}\t{b}\t{s}\n" for a, b, s in PAIRS))
    header, body = FIXTURE.read_text(encoding="utf-8").split("\n", 1)
    assert len(header.split()) == 2  # "<count> <dimensions>"
    (tmp_path / "glove.txt").write_text(body, encoding="utf-8")  # GloVe's own layout: no header line
    recipe = tmp_path / "eval.yaml"
    recipe.write_text("evaluate:\n  sets: [wordsim353]\n  vectors:\n"
                      f"    with_header: {{path: {FIXTURE}}}\n"
                      "    glove: {path: glove.txt, no_header: true}\n"
                      f"output: {tmp_path / 'run'}\n")
    loaded = load_recipe(recipe)
    glove = loaded.evaluate.vectors[1]
    assert (glove.no_header, glove.where) == (True, f"{recipe}:5:12")
    assert loaded.resolved()["evaluate"]["vectors"]["glove"] == {"path": str(tmp_path / "glove.txt"),
                                                                 "no_header": True}
    result = run_recipe(recipe, quiet=True).evaluation
    assert result["glove"]["wordsim353"]["pairs_used"] == 5
    assert result["glove"] == result["with_header"]


def test_a_missing_header_and_a_misplaced_no_header_are_recipe_problems(data_home, tmp_path):
    _fake_fetch(data_home, "wordsim353", "king\tqueen\t8\n")
    (tmp_path / "glove.txt").write_text("the 0.418 0.24968\nof 0.70853 0.57088\n", encoding="utf-8")
    (tmp_path / "glove.bin").write_text("the 0.418 0.24968\n", encoding="utf-8")
    (tmp_path / "folder").mkdir()
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "evaluate:\n"
        "  sets: [wordsim353]\n"
        "  vectors:\n"
        "    a: {path: glove.txt}\n"
        "    b: {path: glove.bin}\n"
        "    c: {path: glove.txt, binary: true, no_header: true}\n"
        "    d: {dataset: glove_6b_50d, no_header: true}\n"
        "    e: {path: folder, no_header: true}\n"
        "    f: {path: glove.txt, no_header: 1}\n"
    )
    with pytest.raises(RecipeError) as err:
        load_recipe(bad)
    assert [str(p) for p in err.value.problems] == [
        f"{bad}:4:15: evaluate.vectors.a.path: glove.txt: line 1 is not the word2vec header '<count> <dimensions>' "
        "(got 'the 0.418 0.24968'); a text file without this line (GloVe's .txt) reads with no_header: true",
        f"{bad}:5:15: evaluate.vectors.b.path: glove.bin: line 1 is not the word2vec header '<count> <dimensions>' "
        "(got 'the 0.418 0.24968'); every binary word2vec file starts with it",
        f"{bad}:6:51: evaluate.vectors.c.no_header: applies to the text format only (a binary word2vec file always "
        "has the header line)",
        f"{bad}:7:43: evaluate.vectors.d.no_header: applies to word2vec text files (path: FILE), not to a dataset",
        f"{bad}:8:34: evaluate.vectors.e.no_header: applies to word2vec text files (path: FILE), not to a folder",
        f"{bad}:9:37: evaluate.vectors.f.no_header: expected bool, got '1'",
    ]
    assert main(["validate", str(bad)]) == 2


def test_vectors_that_fail_to_load_at_run_time_name_the_recipe_entry(data_home, tmp_path):
    _fake_fetch(data_home, "wordsim353", "king\tqueen\t8\n")
    vec = tmp_path / "v.txt"
    vec.write_text("1 2\nthe 0.418 0.24968\n", encoding="utf-8")
    recipe = tmp_path / "eval.yaml"
    recipe.write_text("evaluate:\n  sets: [wordsim353]\n  vectors:\n    mine: {path: v.txt}\n")
    spec = load_recipe(recipe).evaluate.vectors[0]
    assert spec.load().index_to_key == ["the"]
    vec.write_text("the 0.418 0.24968\n", encoding="utf-8")  # the header is lost after the check
    with pytest.raises(ArtifactError) as err:
        spec.load()
    # the reader's hint says the recipe's form, not the Python keyword
    assert str(err.value) == (
        f"{recipe}:4:11: evaluate.vectors.mine: {vec}:1: expected a header '<count> <dimensions>', got "
        "'the 0.418 0.24968' (a file without this line, like GloVe's .txt, reads with no_header: true under "
        "evaluate.vectors.mine)")
    assert isinstance(err.value.__cause__, ArtifactError)


def test_file_and_folder_problems_are_found_at_check_time(data_home, tmp_path):
    import numpy as np

    _fake_fetch(data_home, "wordsim353", "king\tqueen\t8\n")
    (tmp_path / "vec.txt").write_text("4 3\nking 0.1 0.2 0.3\n", encoding="utf-8")  # has the header line
    (tmp_path / "glove.txt").write_text("4 3\nking 0.1 0.2\n", encoding="utf-8")  # line 2 does not fit "4 3"
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "blank.txt").write_text("\nking 0.1 0.2\n", encoding="utf-8")
    for name in ("nothing", "no_vocab", "flat", "good"):
        (tmp_path / name).mkdir()
    np.save(tmp_path / "no_vocab" / "vectors.npy", np.zeros((2, 3), dtype=np.float32))
    np.save(tmp_path / "flat" / "vectors.npy", np.zeros(6, dtype=np.float32))
    (tmp_path / "flat" / "vocab.txt").write_text("a\nb\n", encoding="utf-8")
    np.save(tmp_path / "good" / "vectors.npy", np.ones((2, 3), dtype=np.float32))
    (tmp_path / "good" / "vocab.txt").write_text("king\nqueen\n", encoding="utf-8")
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "evaluate:\n"
        "  sets: [wordsim353]\n"
        "  vectors:\n"
        "    a: {path: vec.txt, no_header: true}\n"
        "    b: {path: empty.txt}\n"
        "    c: {path: empty.txt, no_header: true}\n"
        "    d: {path: nothing}\n"
        "    e: {path: no_vocab}\n"
        "    f: {path: flat}\n"
        "    g: {path: blank.txt}\n"
        "    ok1: {path: glove.txt, no_header: true}\n"
        "    ok2: {path: good}\n"
    )
    with pytest.raises(RecipeError) as err:
        load_recipe(bad)
    folder_help = ("a folder of vectors holds vectors.npy (an array of n x dimensions numbers) and vocab.txt (the n "
                   "keys, one per line), as the vectors datasets do, and a word2vec file is given by its own path")
    assert [str(p) for p in err.value.problems] == [
        f"{bad}:4:35: evaluate.vectors.a.no_header: vec.txt starts with the word2vec header line '4 3' (<count> "
        "<dimensions>; line 2 holds a key and 3 values): remove no_header: true, which is for files without that line",
        f"{bad}:5:15: evaluate.vectors.b.path: empty.txt: the file is empty; expected word vectors in word2vec format",
        f"{bad}:6:15: evaluate.vectors.c.path: empty.txt: the file is empty; expected word vectors in word2vec format",
        f"{bad}:7:15: evaluate.vectors.d.path: nothing: the folder has no vectors.npy and no vocab.txt; {folder_help}",
        f"{bad}:8:15: evaluate.vectors.e.path: no_vocab: the folder has no vocab.txt; {folder_help}",
        f"{bad}:9:15: evaluate.vectors.f.path: flat: vectors.npy holds an array of shape (6,) and dtype float32, "
        "expected numbers of shape (keys, dimensions)",
        f"{bad}:10:15: evaluate.vectors.g.path: blank.txt: line 1 is not the word2vec header '<count> <dimensions>' "
        "(got ''); the first line must be the header, then one vector per line",
    ]
    assert main(["validate", str(bad)]) == 2


def test_a_header_read_with_no_header_at_run_time_says_to_remove_it(data_home, tmp_path):
    _fake_fetch(data_home, "wordsim353", "king\tqueen\t8\n")
    vec = tmp_path / "v.txt"
    vec.write_text("the 0.418 0.24968\n", encoding="utf-8")
    recipe = tmp_path / "eval.yaml"
    recipe.write_text("evaluate:\n  sets: [wordsim353]\n  vectors:\n    mine: {path: v.txt, no_header: true}\n")
    spec = load_recipe(recipe).evaluate.vectors[0]
    vec.write_text("1 2\nthe 0.418 0.24968\n", encoding="utf-8")  # a header appears after the check
    with pytest.raises(ArtifactError) as err:
        spec.load()
    assert str(err.value) == (
        f"{recipe}:4:11: evaluate.vectors.mine: {vec}:2: expected the key and 1 values separated by single spaces, "
        "found 2 values (line 1 is a word2vec header '<count> <dimensions>': remove no_header: true from "
        "evaluate.vectors.mine)")


@pytest.mark.parametrize("value", ["nan", "inf"])
def test_non_finite_vectors_fail_the_run_with_few_pairs_used(data_home, tmp_path, capsys, value):
    # only king-queen and man-woman are usable (2 pairs, too few for a correlation): the run used to write
    # spearman: null and exit 0
    _fake_fetch(data_home, "wordsim353", "king\tqueen\t8\nman\twoman\t7\nking\tcabbage\t1\ntiger\tcat\t6\n")
    vec = tmp_path / "vec.txt"
    vec.write_text(f"4 3\nking 0.1 {value} 0.3\nqueen 0.2 0.1 0.3\nman 0.3 0.3 0.1\nwoman 0.1 0.5 0.2\n")
    recipe = tmp_path / "eval.yaml"
    recipe.write_text(f"evaluate:\n  sets: [wordsim353]\n  vectors:\n    v: {{path: vec.txt}}\n"
                      f"output: {tmp_path / 'run'}\n")
    assert main(["run", str(recipe)]) == 2
    err = capsys.readouterr().err
    assert (f"eval.yaml:4:8: evaluate.vectors.v: the word-pair evaluation on 'wordsim353' uses 1 vector holding NaN "
            f"or infinite "
            f"values (the first: 'king', row 0 of 4 in {vec}), so its score would be meaningless") in err
    assert not (tmp_path / "run" / "evaluation.json").exists()


def test_docs_name_every_evaluate_key():
    from tokembed.recipe.evaluate import _VECTOR_KEYS, EVALUATE_KEYS

    root = Path(__file__).resolve().parents[2] / "docs"
    for doc in ("recipes.md", "evaluation.md"):
        text = (root / doc).read_text(encoding="utf-8")
        keys = [*EVALUATE_KEYS, *_VECTOR_KEYS] if doc == "recipes.md" else [*_VECTOR_KEYS]
        assert [k for k in keys if f"`{k}`" not in text and f"`{k}:" not in text] == [], doc


def test_a_vectors_label_that_is_also_an_embedder_is_refused(data_home, tmp_path):
    # both sources would be scored under one name in evaluation.json: the file's scores replaced the embedder's
    _fake_fetch(data_home, "wordsim353", "".join(f"{a}\t{b}\t{s}\n" for a, b, s in PAIRS))
    recipe = tmp_path / "both.yaml"
    recipe.write_text("corpus: {builtin: moby-dick}\ntokenizers:\n  w: {type: word}\n"
                      "embedders:\n  g: {type: glove, input: w, vector_size: 8, epochs: 1}\n"
                      f"evaluate:\n  sets: [wordsim353]\n  vectors:\n    g: {{path: {FIXTURE}}}\n")
    with pytest.raises(RecipeError) as info:
        load_recipe(recipe)
    assert [str(p) for p in info.value.problems] == [
        f"{recipe}:9:5: evaluate.vectors.g: 'g' is also an embedder of this recipe, whose vectors are scored under "
        "that name: give the file another label"]
