"""File formats: merges.txt rules, vocab.json, tiktoken ranks, our artifact, and files written then read back."""

from __future__ import annotations

import base64
import json
import warnings

import pytest

import tokembed
from tokembed.errors import ArtifactError, TokembedError
from tokembed.plugins.bpe import files
from tokembed.plugins.bpe.tokenizer import BPETokenizer

from _bpe_data import GPT2_RANKS, UNICODE_TEXTS, gpt2_tokenizer, moby_text


def write(path, text: str):
    path.write_bytes(text.encode("utf-8"))
    return path


# -- merges.txt reader ------------------------------------------------------------------------------------------------
def test_merges_reader_rules(tmp_path):
    text = "#version: 0.2\r\n\u00a0 e\r\nt h  \n\n  th e\nx\u2028 y\n"
    merges = files.read_merges_txt(write(tmp_path / "merges.txt", text))
    # the no-break space and U+2028 are symbols: only ASCII spaces split, only \r \n and spaces are trimmed
    assert merges == [("\u00a0", "e"), ("t", "h"), ("th", "e"), ("x\u2028", "y")]


def test_merges_reader_without_header_keeps_the_first_line(tmp_path):
    assert files.read_merges_txt(write(tmp_path / "m.txt", "a b\n#version c\n")) == [("a", "b"), ("#version", "c")]


def test_merges_reader_duplicate_keeps_first_rank_with_a_warning(tmp_path):
    path = write(tmp_path / "m.txt", "#version: 0.2\na b\nb c\na b\n")
    with pytest.warns(files.DuplicateMergeWarning, match=r"m\.txt:4.*line 2"):
        assert files.read_merges_txt(path) == [("a", "b"), ("b", "c")]


@pytest.mark.parametrize("bad_line", ["a b c", "a  b", "ab"])
def test_merges_reader_error_names_the_line(tmp_path, bad_line):
    path = write(tmp_path / "m.txt", f"#version: 0.2\na b\n{bad_line}\n")
    with pytest.raises(ArtifactError, match=r"m\.txt:3:"):
        files.read_merges_txt(path)


def test_vocab_json_ids_must_be_contiguous(tmp_path):
    assert files.read_vocab_json(write(tmp_path / "v.json", '{"a": 1, "b": 0}')) == ["b", "a"]
    for bad in ('{"a": 0, "b": 2}', '{"a": 0, "b": 0}', '["a"]', '{"a": "0"}', '{"a": 0'):
        with pytest.raises(ArtifactError):
            files.read_vocab_json(write(tmp_path / "v.json", bad))
    with pytest.raises(ArtifactError):
        files.read_vocab_json(tmp_path / "missing.json")


# -- tiktoken ---------------------------------------------------------------------------------------------------------
def test_tiktoken_reader_errors(tmp_path):
    good = [f"{base64.b64encode(bytes([b])).decode()} {b}" for b in range(256)]
    assert len(files.read_tiktoken(write(tmp_path / "r.tiktoken", "\n".join(good)))) == 256
    with pytest.raises(ArtifactError, match=r":3:"):
        files.read_tiktoken(write(tmp_path / "r.tiktoken", "\n".join(good[:2] + ["!!! 2"] + good[3:])))
    with pytest.raises(ArtifactError, match="0 .. 255; rank 255 is missing"):
        files.read_tiktoken(write(tmp_path / "r.tiktoken", "\n".join(good[:-1] + [good[-1][:-3] + "300"])))
    # the last byte given rank 7 again: line 256 repeats line 8's rank
    with pytest.raises(ArtifactError, match=r"r.tiktoken:256: rank 7 repeats the rank of line 8"):
        files.read_tiktoken(write(tmp_path / "r.tiktoken", "\n".join(good[:-1] + [good[-1][:-3] + "7"])))
    no_zero = [f"{base64.b64encode(bytes([b])).decode()} {b - 1}" for b in range(1, 256)]
    with pytest.raises(ArtifactError, match="single byte"):
        BPETokenizer.from_tiktoken(write(tmp_path / "r.tiktoken", "\n".join(no_zero)))


def test_ranks_to_merges_recovers_the_merge_of_each_token():
    # ranks: bytes, then "ab" (3... after 256), "bc", "abc": "abc" is built with lower ranks as ab + c
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({b"ab": 256, b"bc": 257, b"abc": 258, b"bca": 259})
    assert files.ranks_to_merges(ranks) == [(b"a", b"b"), (b"b", b"c"), (b"ab", b"c"), (b"bc", b"a")]


def test_gpt2_ranks_fixture_loads_to_gpt2_sizes():
    tok = gpt2_tokenizer()
    assert tok.get_vocab_size() == 50257 and len(tok.merges_) == 50000
    assert tok.merges_[0] == ("Ġ", "t") and tok.special_tokens_ == ["<|endoftext|>"]
    assert tok.get_params()["byte_level"] is True and tok.get_params()["pre_tokenizer"] == "gpt2"


# -- written then read back -------------------------------------------------------------------------------------------
def test_gpt2_vocab_merges_written_and_read_back(tmp_path):
    tok = gpt2_tokenizer()
    tok.to_vocab_merges(tmp_path / "vocab.json", tmp_path / "merges.txt")
    assert (tmp_path / "merges.txt").read_text(encoding="utf-8").startswith("#version: 0.2\nĠ t\n")
    again = BPETokenizer.from_vocab_merges(tmp_path / "vocab.json", tmp_path / "merges.txt")
    assert again.merges_ == tok.merges_ and again.get_vocab() == tok.get_vocab()
    assert again.special_tokens_ == ["<|endoftext|>"] and again.get_params()["byte_level"] is True
    for text in UNICODE_TEXTS:
        assert again.encode(text).ids.tolist() == tok.encode(text).ids.tolist()


def test_character_level_vocab_merges_read_back_without_parameters(tmp_path):
    from tokembed.corpus import Corpus

    lines = Corpus.builtin("moby-dick").head(2000)
    tok = BPETokenizer(vocab_size=600, end_of_word_suffix="</w>").fit(lines)
    tok.to_vocab_merges(tmp_path / "vocab.json", tmp_path / "merges.txt")
    again = BPETokenizer.from_vocab_merges(tmp_path / "vocab.json", tmp_path / "merges.txt")
    # "</w>" on one-character tokens and "<unk>" in the vocabulary are recognised, so the ids are the same
    assert again.get_params()["end_of_word_suffix"] == "</w>" and again.get_params()["unk_token"] == "<unk>"
    text = " ".join(Corpus.builtin("moby-dick").head(4000)[2000:]) + " \u0130shmael"  # an unseen character
    assert again.encode(text).ids.tolist() == tok.encode(text).ids.tolist()


def test_merges_with_a_space_cannot_be_written_as_merges_txt(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = BPETokenizer(pre_tokenizer=None, min_frequency=1, vocab_size=40).fit(["a b a b a b"])
    assert any(" " in a + b for a, b in tok.merges_)
    with pytest.raises(TokembedError, match="space"):
        tok.to_vocab_merges(tmp_path / "v.json", tmp_path / "m.txt")
    tok.to_hf_json(tmp_path / "tokenizer.json")  # pairs in JSON hold any string
    assert BPETokenizer.from_hf_json(tmp_path / "tokenizer.json").merges_ == tok.merges_


def test_artifact_round_trip_of_a_loaded_gpt2(tmp_path):
    tok = gpt2_tokenizer()
    tok.save(tmp_path / "gpt2.tokembed.json")
    again = tokembed.load(tmp_path / "gpt2.tokembed.json")
    assert type(again) is BPETokenizer and again.merges_ == tok.merges_
    text = moby_text()[:5000]
    assert again.encode(text) == tok.encode(text)
    state = json.loads((tmp_path / "gpt2.tokembed.json").read_text(encoding="utf-8"))["state"]
    assert state["merges"][0] == ["Ġ", "t"] and len(state["vocab"]) == 50257


def test_artifact_with_a_merge_outside_the_vocabulary_is_rejected(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = BPETokenizer(end_of_word_suffix="</w>", vocab_size=150).fit([moby_text()[:2000]])
    tok.save(tmp_path / "t.tokembed.json")
    data = json.loads((tmp_path / "t.tokembed.json").read_text(encoding="utf-8"))
    data["state"]["merges"].append(["zzz", "q"])
    (tmp_path / "t.tokembed.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ArtifactError, match="zzz"):
        BPETokenizer.load(tmp_path / "t.tokembed.json")


def test_artifact_with_a_repeated_merge_is_rejected(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = BPETokenizer(end_of_word_suffix="</w>", vocab_size=150).fit([moby_text()[:2000]])
    tok.save(tmp_path / "t.tokembed.json")
    data = json.loads((tmp_path / "t.tokembed.json").read_text(encoding="utf-8"))
    data["state"]["merges"].append(data["state"]["merges"][0])
    (tmp_path / "t.tokembed.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ArtifactError, match="repeats"):
        BPETokenizer.load(tmp_path / "t.tokembed.json")


def test_hf_json_merges_as_pairs_or_strings_and_unsupported_options(tmp_path):
    model = {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "\u00a0": 3, "\u00a0a": 4},
             "merges": [["a", "b"], ["\u00a0", "a"], ["a", "b"]]}
    path = write(tmp_path / "tokenizer.json", json.dumps({"model": model, "pre_tokenizer": None}))
    with pytest.warns(files.DuplicateMergeWarning, match=r"merges\[2\]"):
        tok = BPETokenizer.from_hf_json(path)
    assert tok.merges_ == [("a", "b"), ("\u00a0", "a")]
    assert tok.encode("\u00a0ab").tokens == ["\u00a0", "ab"]  # (a, b) has the lower rank
    assert tok.encode("\u00a0a").tokens == ["\u00a0a"]
    model["merges"] = ["a b", "\u00a0 a"]
    assert BPETokenizer.from_hf_json(write(path, json.dumps({"model": model}))).merges_ == tok.merges_
    model["ignore_merges"] = True
    with pytest.raises(TokembedError, match="ignore_merges"):
        BPETokenizer.from_hf_json(write(path, json.dumps({"model": model})))


def test_hf_json_that_is_not_bpe_is_rejected(tmp_path):
    path = write(tmp_path / "tokenizer.json", json.dumps({"model": {"type": "WordPiece", "vocab": {"a": 0}}}))
    with pytest.raises(ArtifactError, match="BPE"):
        BPETokenizer.from_hf_json(path)


def test_fixture_is_the_published_file():
    import hashlib

    data = GPT2_RANKS.read_bytes()
    assert len(data) == 835_554
    assert hashlib.sha256(data).hexdigest() == "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930"
