"""`tokembed run` end to end on a small text: the run folder, determinism, and what a failed run leaves."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tokembed import load as tokembed_load
from tokembed.cli import main
from tokembed.corpus import Corpus

RECIPE = """\
corpus: {path: small.txt}
tokenizers:
  char: {type: char}
  words: {type: word, min_frequency: 2}
  bpe: {preset: textbook-bpe, vocab_size: 300, seed: 0}
embedders:
  position:
    type: sinusoidal
    input: words
    d_model: 16
    max_len: 64
    seed: 0
    batch: {lines: 8, padding: longest}
"""


@pytest.fixture()
def workdir(tmp_path, monkeypatch) -> Path:
    lines = Corpus.builtin("moby-dick").head(300)
    (tmp_path / "small.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "recipe.yaml").write_text(RECIPE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_run_writes_the_run_folder_and_is_byte_identical_across_runs(workdir, capsys):
    assert main(["run", "recipe.yaml", "--out", "a"]) == 0
    a = _files(workdir / "a")
    assert main(["run", "recipe.yaml", "--out", "a"]) == 0  # the same run again, into the same folder
    b = _files(workdir / "a")
    assert sorted(a) == [
        ".tokembed-run", "bpe.tokembed.json", "char.tokembed.json", "metrics.json", "position.attention_mask.npy",
        "position.embeddings.npy", "position.input_ids.npy", "position.tokembed.json", "recipe.resolved.yaml",
        "timings.json", "words.tokembed.json"]
    assert [n for n in a if a[n] != b[n]] == ["timings.json"]
    metrics = json.loads(a["metrics.json"])["tokenizers"]
    # every character of the text is in the char vocabulary: 300 lines encode back exactly, one token per character
    assert metrics["char"]["round_trip"] == 1.0
    assert metrics["char"]["tokens"] == metrics["char"]["characters"]
    ids = np.load(workdir / "a" / "position.input_ids.npy")
    emb = np.load(workdir / "a" / "position.embeddings.npy")
    mask = np.load(workdir / "a" / "position.attention_mask.npy")
    assert ids.shape[0] == 8 and emb.shape == (*ids.shape, 16) and emb.dtype == np.float32
    # padded to the longest line: the longest row has no padding, and padding is the word tokenizer's pad id 0
    assert mask.sum(axis=1).max() == ids.shape[1]
    assert (ids[mask == 0] == 0).all()
    out = capsys.readouterr().out
    assert "chars/token" in out and "position: batch (8," in out


def test_a_failed_run_keeps_the_previous_run_and_its_own_files_apart(workdir, capsys):
    assert main(["run", "recipe.yaml", "--out", "r"]) == 0
    before = _files(workdir / "r")
    # a pre-tokenizer pattern that matches nothing in the text: the third tokenizer fails in fit, after the first
    # two were trained and saved
    (workdir / "bad.yaml").write_text(RECIPE.replace("seed: 0}", "seed: 0, pre_tokenizer: {type: regex, "
                                                                 "pattern: '\\d{40}'}}"))
    assert main(["run", "bad.yaml", "--out", "r"]) == 2
    err = capsys.readouterr().err
    assert "bad.yaml:5:8: tokenizers.bpe: bpe: the corpus holds no word to learn from" in err
    assert f"r.incomplete; {workdir / 'r'} is unchanged)" in err
    assert _files(workdir / "r") == before  # the earlier run is untouched
    partial = _files(workdir / "r.incomplete")
    assert "words.tokembed.json" in partial and "metrics.json" in partial and "bpe.tokembed.json" not in partial


def test_a_batch_longer_than_the_position_table_is_caught_before_any_work(workdir, capsys):
    (workdir / "bad.yaml").write_text(RECIPE.replace("lines: 8, padding: longest",
                                                     "lines: 8, padding: longest, max_length: 100"))
    assert main(["validate", "bad.yaml"]) == 2
    # line 13 holds the batch; the value 100 starts at column 53 of "    batch: {lines: 8, ..., max_length: 100}"
    assert capsys.readouterr().err.strip() == (
        "tokembed: error: bad.yaml:13:53: embedders.position.batch.max_length: 100 is longer than the embedder's "
        "max_len=64; lower batch.max_length or raise max_len")
    assert main(["run", "bad.yaml", "--out", "never"]) == 2
    assert not (workdir / "never").exists() and not (workdir / "never.incomplete").exists()


def test_validate_reports_component_parameter_problems_before_any_work(workdir, capsys):
    (workdir / "bad.yaml").write_text(RECIPE.replace("min_frequency: 2}", "min_frequency: 0}")
                                      .replace("d_model: 16", "d_model: 16\n    dropout: 1.5"))
    assert main(["validate", "bad.yaml"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[1:] == [
        "bad.yaml:4:38: tokenizers.words.min_frequency: expected int >= 1, got 0",
        "bad.yaml:11:14: embedders.position.dropout: expected float in [0, 1), got 1.5",
    ]
    assert main(["run", "bad.yaml", "--out", "never"]) == 2
    assert not (workdir / "never").exists() and not (workdir / "never.incomplete").exists()


def test_validate_reports_every_parameter_problem_of_a_stage(workdir, capsys):
    (workdir / "multi.yaml").write_text(
        "corpus: {path: small.txt}\n"
        "tokenizers:\n"
        "  b: {type: bpe, pre_tokenizer: nosuch, normalizer: [nfc, bogus]}\n"
        "  w: {type: wordpiece, max_input_chars_per_word: 0, vocab_size: 0}\n")
    assert main(["validate", "multi.yaml"]) == 2
    err = capsys.readouterr().err.splitlines()
    # two problems in each stage, each at its own value (columns counted in the lines above)
    assert [line.split(": ")[0] + ": " + line.split(": ")[1] for line in err[1:]] == [
        "multi.yaml:3:33: tokenizers.b.pre_tokenizer", "multi.yaml:3:53: tokenizers.b.normalizer",
        "multi.yaml:4:50: tokenizers.w.max_input_chars_per_word", "multi.yaml:4:65: tokenizers.w.vocab_size"]
    assert "unknown normalizer 'bogus'" in err[2]
    assert err[4].endswith("tokenizers.w.vocab_size: expected int >= 1, got 0")  # the recipe reads it with its bounds


def test_file_parameters_are_relative_to_the_recipe_folder(workdir, capsys):
    from tokembed.recipe import load_recipe

    sub = workdir / "sub"
    sub.mkdir()
    (sub / "vocab.txt").write_text("[PAD]\n[UNK]\nthe\n##s\n", encoding="utf-8")
    (workdir / "vocab.txt").write_text("decoy\n", encoding="utf-8")  # the current folder's file must not be read
    (sub / "r.yaml").write_text("corpus: {path: ../small.txt}\ntokenizers:\n  w: {type: wordpiece, vocab: vocab.txt}\n"
                                "  x: {type: wordpiece, vocab: missing.txt}\n")
    assert main(["validate", "sub/r.yaml"]) == 2
    err = capsys.readouterr().err
    assert f"sub/r.yaml:4:31: tokenizers.x.vocab: wordpiece: vocab: {sub / 'missing.txt'}: cannot read" in err
    assert "tokenizers.w" not in err
    (sub / "r.yaml").write_text((sub / "r.yaml").read_text().replace("  x: {type: wordpiece, vocab: missing.txt}\n", ""))
    recipe = load_recipe("sub/r.yaml")
    assert recipe.tokenizers[0].params["vocab"] == str(sub / "vocab.txt")
    assert main(["run", "sub/r.yaml", "--out", "w"]) == 0
    assert tokembed_load(workdir / "w" / "w.tokembed.json").get_vocab() == {"[PAD]": 0, "[UNK]": 1, "the": 2, "##s": 3,
                                                                            "[CLS]": 4, "[SEP]": 5, "[MASK]": 6}
    # a --set value is relative to the current folder
    recipe = load_recipe("sub/r.yaml", overrides=["tokenizers.w.vocab=vocab.txt"])
    assert recipe.tokenizers[0].params["vocab"] == str(workdir / "vocab.txt")


def test_validate_reports_range_problems_beside_type_problems(workdir, capsys):
    (workdir / "m.yaml").write_text(
        "corpus: {path: small.txt}\n"
        "tokenizers:\n"
        "  words: {type: word, min_frequency: -1, nonsense: 3}\n"
        "  bpe3: {type: bpe, vocab_size: \"8000\", dropout: 1.5}\n"
        "embedders:\n"
        "  e: {type: sinusoidal, input: words, batch: {lines: 0, padding: max_length}}\n")
    assert main(["validate", "m.yaml"]) == 2
    paths = [line.split(": ")[0] + ": " + line.split(": ")[1] for line in capsys.readouterr().err.splitlines()[1:]]
    assert paths == ["m.yaml:3:38: tokenizers.words.min_frequency", "m.yaml:3:42: tokenizers.words.nonsense",
                     "m.yaml:4:33: tokenizers.bpe3.vocab_size", "m.yaml:4:50: tokenizers.bpe3.dropout",
                     "m.yaml:6:54: embedders.e.batch.lines", "m.yaml:6:66: embedders.e.batch.padding"]


def test_a_label_too_long_for_a_file_name_is_caught_by_validate(workdir, capsys):
    (workdir / "long.yaml").write_text("corpus: {path: small.txt}\ntokenizers:\n  " + "a" * 250 + ": {type: char}\n")
    assert main(["validate", "long.yaml"]) == 2
    assert "long.yaml:3:3: tokenizers." + "a" * 250 + ": a label is at most 100 characters (it names output files), " \
           "got 250" in capsys.readouterr().err


def test_a_file_added_to_the_output_folder_during_the_run_is_kept(workdir, monkeypatch, capsys):
    from tokembed import runner

    assert main(["run", "recipe.yaml", "--out", "race"]) == 0
    real = runner._run_embedder

    def slow(*args):  # the user saves a note while the run works
        (workdir / "race" / "notes.txt").write_text("mine")
        return real(*args)

    monkeypatch.setattr(runner, "_run_embedder", slow)
    assert main(["run", "recipe.yaml", "--out", "race"]) == 2
    err = capsys.readouterr().err
    assert "output " in err and "notes.txt appeared in the folder during the run, so it was not replaced" in err
    assert (workdir / "race" / "notes.txt").read_text() == "mine"
    assert "bpe.tokembed.json" in _files(workdir / "race.incomplete")


def test_a_batch_cut_at_max_len_is_a_warning(workdir, capsys):
    (workdir / "cut.yaml").write_text(RECIPE.replace("max_len: 64", "max_len: 4"))
    assert main(["run", "cut.yaml", "--out", "cut"]) == 0
    assert "embedders.position: the batch is cut at the embedder's max_len=4" in capsys.readouterr().err
    assert np.load(workdir / "cut" / "position.input_ids.npy").shape == (8, 4)


def test_output_that_is_a_file_is_a_clear_error(workdir, capsys):
    (workdir / "taken").write_text("x")
    assert main(["run", "recipe.yaml", "--out", "taken"]) == 2
    assert "taken: exists and is not a folder" in capsys.readouterr().err


def test_an_output_folder_tokembed_did_not_write_is_never_replaced(workdir, capsys):
    # the recipe's own folder as output: replacing it would delete the recipe and the corpus
    (workdir / "mine.txt").write_text("precious")
    sub = workdir / "project"
    sub.mkdir()
    (sub / "notes.txt").write_text("keep me")
    before = {p.relative_to(workdir): p.read_bytes() for p in workdir.rglob("*") if p.is_file()}
    assert main(["run", "recipe.yaml", "--out", str(workdir)]) == 2
    err = capsys.readouterr().err
    assert "is the current folder or contains it" in err
    assert main(["run", "recipe.yaml", "--out", "project"]) == 2
    err = capsys.readouterr().err
    assert "output project: the folder holds files tokembed did not write (1 entry: notes.txt)" in err
    assert _files(sub) == {"notes.txt": b"keep me"}
    for out in (".", "..", "/"):
        assert main(["run", "recipe.yaml", "--out", out]) == 2
        assert "is the current folder or contains it" in capsys.readouterr().err
    assert main(["run", "recipe.yaml", "--out", "mine.txt/sub"]) == 2
    assert f"output mine.txt/sub: {workdir / 'mine.txt'} is a file, not a folder" in capsys.readouterr().err
    after = {p.relative_to(workdir): p.read_bytes() for p in workdir.rglob("*") if p.is_file()}
    assert after == before  # nothing written, nothing left behind (no .partial or .incomplete folder)
    # an empty folder, and a run folder written before the marker existed, are replaced
    (workdir / "empty").mkdir()
    assert main(["run", "recipe.yaml", "--out", "empty"]) == 0
    legacy = workdir / "legacy"
    legacy.mkdir()
    for name in ("recipe.resolved.yaml", "timings.json", "old.npy"):
        (legacy / name).write_text("{}")
    assert main(["run", "recipe.yaml", "--out", "legacy"]) == 0
    assert "old.npy" not in _files(legacy) and ".tokembed-run" in _files(legacy)


def test_files_added_to_a_run_folder_are_never_replaced(workdir, capsys):
    assert main(["run", "recipe.yaml", "--out", "out1"]) == 0
    marker = json.loads((workdir / "out1" / ".tokembed-run").read_text())
    assert marker["files"] == sorted(p.name for p in (workdir / "out1").iterdir() if p.name != ".tokembed-run")
    (workdir / "out1" / "analysis.ipynb").write_text("mine")
    assert main(["run", "recipe.yaml", "--out", "out1"]) == 2
    assert "holds files tokembed did not write (1 entry: analysis.ipynb)" in capsys.readouterr().err
    assert (workdir / "out1" / "analysis.ipynb").read_text() == "mine"
    # a marker copied into a folder of one's own covers only the files it lists
    (workdir / "thesis").mkdir()
    (workdir / "thesis" / "thesis.tex").write_text("mine")
    (workdir / "thesis" / ".tokembed-run").write_text(json.dumps(marker))
    assert main(["run", "recipe.yaml", "--out", "thesis"]) == 2
    assert (workdir / "thesis" / "thesis.tex").read_text() == "mine"
    capsys.readouterr()
    # a symbolic link stands for the run folder it points to
    (workdir / "out1" / "analysis.ipynb").unlink()
    (workdir / "link").symlink_to(workdir / "out1")
    assert main(["run", "recipe.yaml", "--out", "link"]) == 0
    assert (workdir / "link").is_symlink() and (workdir / "out1" / "metrics.json").is_file()


def test_a_failed_run_never_replaces_a_users_incomplete_folder(workdir, capsys):
    (workdir / "u.incomplete").mkdir()
    (workdir / "u.incomplete" / "keep.txt").write_text("mine")
    (workdir / "bad.yaml").write_text(RECIPE.replace("seed: 0}", "seed: 0, pre_tokenizer: {type: regex, "
                                                                 "pattern: '\\d{40}'}}"))
    assert main(["run", "bad.yaml", "--out", "u"]) == 2
    err = capsys.readouterr().err
    assert _files(workdir / "u.incomplete") == {"keep.txt": b"mine"}
    hidden = [p for p in workdir.iterdir() if p.name.startswith(".u.partial-")]
    assert len(hidden) == 1 and f"the files written before the error are in {hidden[0]}" in err
    assert "words.tokembed.json" in _files(hidden[0])


def test_a_corpus_folder_skips_run_folders_inside_it(workdir, capsys):
    data = workdir / "data"
    data.mkdir()
    (data / "a.txt").write_text("the cat sat\n")
    (workdir / "c.yaml").write_text("corpus: {path: data}\ntokenizers:\n  c: {type: char}\noutput: data/run\n")
    assert main(["run", "c.yaml"]) == 0
    first = json.loads((data / "run" / "metrics.json").read_text())["tokenizers"]["c"]
    assert main(["run", "c.yaml"]) == 0  # the first run's files are not read as corpus text
    assert json.loads((data / "run" / "metrics.json").read_text())["tokenizers"]["c"]["tokens"] == first["tokens"] == 11


def test_sigterm_during_a_run_keeps_its_files_in_incomplete(workdir):
    import subprocess
    import sys

    # the run is killed (SIGTERM to itself) after the first tokenizer was saved
    code = (
        "import os, signal, sys\n"
        "from tokembed import runner\n"
        "from tokembed.cli import main\n"
        "real = runner._run_embedder\n"
        "def killed(*args):\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "runner._run_embedder = killed\n"
        "sys.exit(main(['run', 'recipe.yaml', '--out', 'k']))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=workdir, capture_output=True, text=True, timeout=300)
    assert done.returncode == 128 + 15, done.stderr
    assert f"the files written before the interruption are in {workdir / 'k.incomplete'}" in done.stderr
    assert not (workdir / "k").exists()
    assert "bpe.tokembed.json" in _files(workdir / "k.incomplete")
    assert not [p.name for p in workdir.iterdir() if ".partial-" in p.name]


def test_corpus_byte_order_marks(tmp_path):
    from tokembed.errors import CorpusError

    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbfhello\nw\xffx\n")
    assert list(Corpus(path, errors="replace")) == ["hello", "w\ufffdx"]  # the UTF-8 mark is not text
    # the offset counts from the start of the file: 3 (mark) + 6 ("hello\n") + 1 ("w") = 10
    with pytest.raises(CorpusError, match="bom.txt:2: invalid UTF-8 at byte offset 10"):
        list(Corpus(path))
    path.write_bytes("h\u00e9llo\n".encode("utf-16"))
    with pytest.raises(CorpusError, match="UTF-16 or UTF-32"):
        list(Corpus(path, errors="replace"))


def test_an_unreadable_corpus_is_reported_at_the_corpus_not_at_a_tokenizer(workdir, capsys):
    (workdir / "latin.txt").write_bytes(b"ok line\ncaf\xe9\n")
    (workdir / "lat.yaml").write_text("tokenizers:\n  c: {type: char}\ncorpus: {path: latin.txt}\n")
    assert main(["run", "lat.yaml", "--out", "o"]) == 2
    err = capsys.readouterr().err
    # found by the recipe check, which reads the first bytes of every file: byte offset 11 ("ok line\n" is 8
    # bytes, then "caf")
    assert "lat.yaml:3:16: corpus.path: " in err and "latin.txt:2: invalid UTF-8 at byte offset 11" in err
    # past the bytes the check reads, the run finds it, and names the corpus: section
    (workdir / "latin.txt").write_bytes(b"ok line\n" * 10_000 + b"caf\xe9\n")
    assert main(["run", "lat.yaml", "--out", "o"]) == 2
    err = capsys.readouterr().err
    assert "lat.yaml:3:9: corpus: " in err and "latin.txt:10001: invalid UTF-8 at byte offset 80003" in err
    (workdir / "ws.txt").write_text("  \n\t\n")
    (workdir / "ws.yaml").write_text("tokenizers:\n  c: {type: char}\ncorpus: {path: ws.txt}\n")
    assert main(["run", "ws.yaml", "--out", "o2"]) == 2
    err = capsys.readouterr().err
    # found by the recipe check too: every file is blank
    assert "ws.yaml:3:16: corpus.path: ws.txt is empty or blank" in err and not (workdir / "o2").exists()


def test_a_corpus_path_that_is_a_device_is_a_clear_error():
    from tokembed.errors import CorpusError

    with pytest.raises(CorpusError, match="/dev/null: not a regular file or folder"):
        Corpus.from_path("/dev/null")


def test_corpus_size_counts_the_uncompressed_bytes_of_gzip_files(tmp_path):
    import gzip

    text = ("caf\u00e9 au lait\n" * 5000).encode("utf-8")  # 14 bytes a line ("\u00e9" is 2): 70,000
    (tmp_path / "a.txt.gz").write_bytes(gzip.compress(text))
    (tmp_path / "b.txt").write_bytes(text[:14])
    assert len(gzip.compress(text)) < 1000  # the file on disk is far smaller than its content
    assert Corpus(tmp_path / "a.txt.gz").size_bytes() == 70_000
    assert Corpus.from_path(str(tmp_path / "*.txt*")).size_bytes() == 70_014


def test_a_failed_comparison_leaves_the_output_folder_as_it_was(workdir, capsys):
    (workdir / "cmp.yaml").write_text(
        "corpus: {path: small.txt}\n"
        "compare:\n"
        "  tokenizers:\n"
        "    char: {type: char}\n"
        "    bad: {type: word, vocab_size: 1, special_tokens: [a, b]}\n"
        "  corpora:\n"
        "    small: {path: small.txt, max_lines: 20}\n")
    (workdir / "out").mkdir()
    (workdir / "out" / "earlier.txt").write_text("kept")
    marker = '{"files": ["earlier.txt"]}'  # an earlier run's folder, which wrote earlier.txt: a run may replace it
    (workdir / "out" / ".tokembed-run").write_text(marker)
    # vocab_size 1 cannot hold the 4 special tokens: caught before any work, nothing written
    assert main(["compare", "cmp.yaml", "--out", "out"]) == 2
    assert "cmp.yaml:5:35: compare.tokenizers.bad.vocab_size: word: vocab_size=1 is smaller than the 4 special tokens" in capsys.readouterr().err
    assert _files(workdir / "out") == {".tokembed-run": marker.encode(), "earlier.txt": b"kept"}
    assert not (workdir / "out.incomplete").exists()
    # a pre-tokenizer pattern that matches nothing leaves no word to learn: the error comes from fit
    (workdir / "cmp.yaml").write_text((workdir / "cmp.yaml").read_text().replace(
        "{type: word, vocab_size: 1, special_tokens: [a, b]}", "{type: word, pre_tokenizer: {type: regex, pattern: '\\\\d{40}'}}"))
    assert main(["compare", "cmp.yaml", "--out", "out"]) == 2
    err = capsys.readouterr().err
    assert "cmp.yaml:5:10: compare.tokenizers.bad: word: the corpus holds no word" in err
    assert _files(workdir / "out") == {".tokembed-run": marker.encode(), "earlier.txt": b"kept"}
    assert "char.tokembed.json" in _files(workdir / "out.incomplete")


def test_run_takes_q_as_compare_does(workdir, capsys, monkeypatch):
    import tokembed.runner as runner

    seen = []

    def spy(iterable, desc, quiet):  # the progress bars' switch, recorded
        seen.append(quiet)
        return iterable

    monkeypatch.setattr(runner, "progress", spy)
    (workdir / "one.yaml").write_text("corpus: {path: small.txt}\ntokenizers:\n  char: {type: char}\n",
                                      encoding="utf-8")
    assert main(["run", "one.yaml", "--out", "q", "-q"]) == 0
    out = capsys.readouterr().out
    assert seen and all(seen)  # every bar off
    assert out.splitlines()[0].split() == ["tokenizer", "type", "vocab", "tokens", "chars/token", "fertility",
                                           "unk", "rate", "round", "trip", "eval", "MB/s"]  # the summary still printed
    assert out.rstrip().endswith("run folder: q")
    seen.clear()
    assert main(["run", "one.yaml", "--out", "r", "--quiet"]) == 0 and all(seen)
    seen.clear()
    assert main(["run", "one.yaml", "--out", "s"]) == 0 and seen and not any(seen)
