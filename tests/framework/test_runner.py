"""`tokembed run` end to end on a small text: the run folder, determinism, and what a failed run leaves."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

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
        "bpe.tokembed.json", "char.tokembed.json", "metrics.json", "position.attention_mask.npy",
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
    # an embedder whose batch cannot fit its position table fails after the tokenizers were trained
    (workdir / "bad.yaml").write_text(RECIPE.replace("lines: 8, padding: longest",
                                                     "lines: 8, padding: longest, max_length: 100"))
    assert main(["run", "bad.yaml", "--out", "r"]) == 2
    err = capsys.readouterr().err
    assert "bad.yaml:8:5: embedders.position: batch.max_length=100 is longer than the embedder's max_len=64" in err
    assert "r.incomplete" in err
    assert _files(workdir / "r") == before  # the earlier run is untouched
    partial = _files(workdir / "r.incomplete")
    assert "words.tokembed.json" in partial and "metrics.json" in partial and "position.embeddings.npy" not in partial


def test_validate_reports_component_parameter_problems_before_any_work(workdir, capsys):
    (workdir / "bad.yaml").write_text(RECIPE.replace("min_frequency: 2}", "min_frequency: 0}")
                                      .replace("d_model: 16", "d_model: 16\n    dropout: 1.5"))
    assert main(["validate", "bad.yaml"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[1:] == [
        "bad.yaml:4:38: tokenizers.words.min_frequency: word: min_frequency must be an int >= 1, got 0",
        "bad.yaml:11:14: embedders.position.dropout: sinusoidal: dropout must be a number with 0 <= dropout < 1, "
        "got 1.5",
    ]
    assert main(["run", "bad.yaml", "--out", "never"]) == 2
    assert not (workdir / "never").exists() and not (workdir / "never.incomplete").exists()


def test_output_that_is_a_file_is_a_clear_error(workdir, capsys):
    (workdir / "taken").write_text("x")
    assert main(["run", "recipe.yaml", "--out", "taken"]) == 2
    assert "taken: exists and is not a folder" in capsys.readouterr().err


def test_corpus_byte_order_marks(tmp_path):
    from tokembed.errors import CorpusError

    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbfhello\nw\xffx\n")
    assert list(Corpus(path, errors="replace")) == ["hello", "w\ufffdx"]  # the UTF-8 mark is not text
    # the offset counts from the start of the file: 3 (mark) + 6 ("hello\n") + 1 ("w") = 10
    with pytest.raises(CorpusError, match="byte offset 10"):
        list(Corpus(path))
    path.write_bytes("h\u00e9llo\n".encode("utf-16"))
    with pytest.raises(CorpusError, match="UTF-16 or UTF-32"):
        list(Corpus(path, errors="replace"))


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
    # vocab_size 1 cannot hold the 4 special tokens: caught before any work, nothing written
    assert main(["compare", "cmp.yaml", "--out", "out"]) == 2
    assert "cmp.yaml:5:35: compare.tokenizers.bad.vocab_size: word: vocab_size=1 is smaller than the 4 special tokens" in capsys.readouterr().err
    assert _files(workdir / "out") == {"earlier.txt": b"kept"} and not (workdir / "out.incomplete").exists()
    # a pre-tokenizer pattern that matches nothing leaves no word to learn: the error comes from fit
    (workdir / "cmp.yaml").write_text((workdir / "cmp.yaml").read_text().replace(
        "{type: word, vocab_size: 1, special_tokens: [a, b]}", "{type: word, pre_tokenizer: {type: regex, pattern: '\\\\d{40}'}}"))
    assert main(["compare", "cmp.yaml", "--out", "out"]) == 2
    err = capsys.readouterr().err
    assert "cmp.yaml:5:10: compare.tokenizers.bad: word: the corpus holds no word" in err
    assert _files(workdir / "out") == {"earlier.txt": b"kept"}
    assert "char.tokembed.json" in _files(workdir / "out.incomplete")
