"""WordPiece's ``vocab:`` parameter checked before any run (``check_params``, ``tokembed validate``) and in ``fit``:
the file is read, a dataset must be a WordPiece vocabulary; and the training-size warnings and the warm-up."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from tokembed.errors import ArtifactError, DataError, RecipeError, TokembedError, VocabularySizeWarning
from tokembed.plugins.wordpiece.tokenizer import WordPieceTokenizer

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
VOCAB = FIXTURES / "bert-base-uncased-vocab.txt"


def write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


# -- a vocab.txt whose content is wrong: found by check_params (validate) and by fit, with the same message ----------
@pytest.mark.parametrize(("data", "reason"), [
    (b"[PAD]\n[UNK]\nthe\n##s\nthe\n", "line 5 repeats the token 'the' of line 3"),
    (b"", "holds no token (the file is empty)"),
    (b"\n", "line 1 is empty"),
    (b"[PAD]\n[UNK]\n\nthe\n", "line 3 is empty"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "line 1 is not UTF-8"),
    (b"[PAD]\nab\x00cd\n", "line 2 holds a NUL character: a binary file"),
    # tiktoken ranks ("<base64> <rank>"): 3 of 3 lines hold a space
    (b"IQ== 0\nIg== 1\nIw== 2\n", "3 of its 3 lines hold whitespace (line 1: 'IQ== 0'): not a WordPiece vocab.txt"),
    # a corpus: 2 of 3 lines hold a space (more than half)
    (b"Call me Ishmael.\nSome years ago\nnever\n", "2 of its 3 lines hold whitespace"),
])
def test_a_bad_vocab_file_is_reported_by_check_params_and_fit(tmp_path, data, reason):
    path = write(tmp_path / "vocab.txt", data)
    problems = WordPieceTokenizer.check_params({"vocab": path})
    assert len(problems) == 1 and problems[0][0] == "vocab"
    assert problems[0][1].startswith(f"wordpiece: vocab: {path}: {reason}")
    with pytest.raises(ArtifactError) as caught:
        WordPieceTokenizer(vocab=path, show_progress=False).fit(["ignored"])
    assert str(caught.value) == problems[0][1]  # the same message at validate and at run time


def test_a_good_vocab_file_has_no_problem_and_others_are_still_reported(tmp_path):
    assert WordPieceTokenizer.check_params({"vocab": str(VOCAB)}) == []
    # one token with a space among five is allowed (the whitespace rule is "more than half of the lines")
    assert WordPieceTokenizer.check_params({"vocab": write(tmp_path / "v.txt", b"[PAD]\n[UNK]\na\n x \n##b\n")}) == []
    dup = write(tmp_path / "dup.txt", b"a\na\n")
    assert WordPieceTokenizer.check_params({"vocab_size": 0, "vocab": dup, "scoring": "bogus"}) == [
        ("vocab_size", "wordpiece: vocab_size must be an int >= 1, got 0"),
        ("scoring", "wordpiece: scoring must be one of 'likelihood', 'frequency', got 'bogus'"),
        ("vocab", f"wordpiece: vocab: {dup}: line 2 repeats the token 'a' of line 1"),
    ]
    missing = str(tmp_path / "missing.txt")
    assert WordPieceTokenizer.check_params({"vocab": missing}) == [
        ("vocab", f"wordpiece: vocab: {missing}: cannot read: no such file")]
    assert WordPieceTokenizer.check_params({"vocab": str(tmp_path)}) == [
        ("vocab", f"wordpiece: vocab: {tmp_path}: cannot read: a directory, not a file")]


def test_a_tokenizer_json_vocab_is_read_at_validate_time(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps({"model": {"type": "BPE", "vocab": {}, "merges": []}}), encoding="utf-8")
    assert WordPieceTokenizer.check_params({"vocab": str(path)}) == [
        ("vocab", f"wordpiece: vocab: {path}: not a WordPiece tokenizer.json (model type 'BPE')")]


# -- {dataset: NAME}: only a WordPiece vocabulary; the check needs no fetched data -------------------------------------
@pytest.mark.parametrize(("name", "message"), [
    ("gpt2_ranks", "wordpiece: vocab: dataset 'gpt2_ranks' (tokenizer_file: GPT-2 / r50k_base byte-level BPE ranks "
                   "in tiktoken format (50,256 ranks)) is not a WordPiece vocabulary. Datasets that are: "
                   "bert_uncased_vocab"),
    ("prose_mix", "wordpiece: vocab: dataset 'prose_mix' (corpus: "),
    ("glove_6b_50d", "wordpiece: vocab: dataset 'glove_6b_50d' (vectors: "),
    ("bert_uncased_vocb", "wordpiece: vocab: unknown dataset 'bert_uncased_vocb'. Did you mean 'bert_uncased_vocab'? "
                          "Datasets that are WordPiece vocabularies: bert_uncased_vocab"),
])
def test_a_dataset_that_is_not_a_wordpiece_vocabulary_is_refused(monkeypatch, tmp_path, name, message):
    monkeypatch.setenv("TOKEMBED_DATA", str(tmp_path))  # nothing fetched: the kind is checked first
    problems = WordPieceTokenizer.check_params({"vocab": {"dataset": name}})
    assert len(problems) == 1 and problems[0][0] == "vocab" and problems[0][1].startswith(message)
    assert problems[0][1].endswith(": bert_uncased_vocab")  # the datasets that are WordPiece vocabularies
    with pytest.raises(TokembedError) as caught:
        WordPieceTokenizer(vocab={"dataset": name}, show_progress=False).fit(["ignored"])
    assert str(caught.value) == problems[0][1]


def test_a_dataset_not_fetched_yet_names_the_fetch_command(monkeypatch, tmp_path):
    monkeypatch.setenv("TOKEMBED_DATA", str(tmp_path))
    params = {"vocab": {"dataset": "bert_uncased_vocab"}}
    expected = (f"wordpiece: vocab: dataset 'bert_uncased_vocab' is not fetched yet (looked in {tmp_path}). "
                "Run: tokembed data fetch bert_uncased_vocab")
    assert WordPieceTokenizer.check_params(params) == [("vocab", expected)]
    with pytest.raises(DataError) as caught:
        WordPieceTokenizer(**params, show_progress=False).fit(["ignored"])
    assert str(caught.value) == expected


def test_the_wordpiece_vocabulary_dataset_is_read_at_validate_time(monkeypatch, tmp_path):
    import tokembed.datasets

    bad = write(tmp_path / "bert_uncased_vocab.txt", b"a\nb\na\n")
    monkeypatch.setattr(tokembed.datasets, "dataset_path", lambda name: bad)
    assert WordPieceTokenizer.check_params({"vocab": {"dataset": "bert_uncased_vocab"}}) == [
        ("vocab", f"wordpiece: vocab: {bad}: line 3 repeats the token 'a' of line 1")]
    monkeypatch.setattr(tokembed.datasets, "dataset_path", lambda name: VOCAB)
    assert WordPieceTokenizer.check_params({"vocab": {"dataset": "bert_uncased_vocab"}}) == []
    assert WordPieceTokenizer.check_params({"vocab": {"dataset": "bert_uncased_vocab", "path": "x"}}) == [(
        "vocab", "wordpiece: vocab must be a path or {dataset: NAME} or null, got {'dataset': 'bert_uncased_vocab', "
        "'path': 'x'}")]


def test_the_recipe_checker_places_the_vocab_problem_at_the_vocab_value(tmp_path):
    from tokembed.recipe import load_recipe_string

    write(tmp_path / "vocab.txt", b"")
    text = ("corpus: {builtin: moby-dick}\n"
            "tokenizers:\n"
            "  w: {type: wordpiece, vocab: vocab.txt}\n"
            "  g: {type: wordpiece, vocab: {dataset: gpt2_ranks}}\n"
            f"output: {json.dumps(str(tmp_path / 'out'))}\n")
    with pytest.raises(RecipeError) as caught:
        load_recipe_string(text, base_dir=tmp_path)
    message = str(caught.value)
    assert f"tokenizers.w.vocab: wordpiece: vocab: {tmp_path / 'vocab.txt'}: holds no token" in message
    assert "tokenizers.g.vocab: wordpiece: vocab: dataset 'gpt2_ranks' (tokenizer_file: " in message


def test_a_saved_tokenizer_loads_without_its_vocab_file(tmp_path):
    path = write(tmp_path / "vocab.txt", b"[PAD]\n[UNK]\nun\n##able\n")
    tok = WordPieceTokenizer.from_vocab_file(path, special_tokens=[])
    tok.save(tmp_path / "t.tokembed.json")
    Path(path).unlink()  # the artifact holds the vocabulary
    loaded = WordPieceTokenizer.load(tmp_path / "t.tokembed.json")
    assert loaded.encode("unable").tokens == ["un", "##able"]
    with pytest.raises(ArtifactError, match="cannot read: no such file"):
        WordPieceTokenizer(vocab=path).fit([])  # fitting again needs it


def test_a_saved_tokenizer_with_a_bad_parameter_is_refused_at_load(tmp_path):
    path = write(tmp_path / "vocab.txt", b"[PAD]\n[UNK]\nun\n##able\n")
    WordPieceTokenizer.from_vocab_file(path, special_tokens=[]).save(tmp_path / "t.tokembed.json")
    data = json.loads((tmp_path / "t.tokembed.json").read_text(encoding="utf-8"))
    data["params"].update(lowercase="yes", max_input_chars_per_word=0)  # an artifact edited by hand
    (tmp_path / "t.tokembed.json").write_text(json.dumps(data), encoding="utf-8")
    Path(path).unlink()  # still not needed: only the declarations are checked at load
    with pytest.raises(TokembedError, match="^wordpiece: 2 invalid parameters: lowercase must be true or false, got "
                                            "'yes'; max_input_chars_per_word must be an int >= 1, got 0$"):
        WordPieceTokenizer.load(tmp_path / "t.tokembed.json")


# -- training-size warnings and the warm-up ----------------------------------------------------------------------------
def test_the_stop_reason_depends_on_min_frequency():
    # "hello world": 2 words of count 1; with min_frequency <= 1 merging runs out of pairs (25 entries, see
    # test_a_vocabulary_of_another_size_than_asked_is_a_warning); with 2 no pair qualifies from the start
    for min_frequency in (0, 1):
        with pytest.warns(VocabularySizeWarning) as caught:
            WordPieceTokenizer(vocab_size=1000, min_frequency=min_frequency, show_progress=False).fit(["hello world"])
        assert str(caught[0].message) == ("wordpiece: training stopped because no pair is left to merge; the "
                                          "vocabulary has 25 entries, not the vocab_size=1000 asked for")
    with pytest.warns(VocabularySizeWarning) as caught:
        WordPieceTokenizer(vocab_size=1000, min_frequency=2, show_progress=False).fit(["hello world"])
    assert str(caught[0].message) == ("wordpiece: training stopped because no pair occurs at least min_frequency=2 "
                                      "times; the vocabulary has 17 entries, not the vocab_size=1000 asked for")


def test_warmup_emits_no_warning_of_its_own():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        WordPieceTokenizer.warmup()
    assert [str(w.message) for w in caught if issubclass(w.category, UserWarning)] == []
