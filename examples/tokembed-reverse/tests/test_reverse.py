"""Tests of the example plugin: tokembed's contract suite, plus what is particular to ``reverse``."""

from __future__ import annotations

import importlib.metadata as metadata

import pytest

import tokembed
from tokembed.errors import CorpusError, TokembedError
from tokembed.testing import check_component, parametrize_with_checks
from tokembed_reverse.tokenizer import ReverseTokenizer


# -- the contract, as any plugin runs it ------------------------------------------------------------------------
def test_contract():
    check_component(ReverseTokenizer)


@parametrize_with_checks([ReverseTokenizer])
def test_each_contract_check(component, check):
    check(component)


# -- found through the entry point ------------------------------------------------------------------------------
def test_entry_point_and_registry():
    eps = [ep for ep in metadata.distribution("tokembed-reverse").entry_points if ep.group == "tokembed"]
    assert [(ep.name, ep.value) for ep in eps] == [("reverse", "tokembed_reverse")]
    info = tokembed.build_registry().info("tokenizer", "reverse")
    assert info.cls is ReverseTokenizer
    assert (info.plugin.distribution, info.plugin.version) == ("tokembed-reverse", "0.1.0")
    assert "reverse" not in tokembed.build_registry(blocked=["tokembed-reverse"]).names("tokenizer")
    assert "reverse" not in tokembed.build_registry(autoload=False).names("tokenizer")


# -- the tokenizer ----------------------------------------------------------------------------------------------
def test_tokens_are_pieces_spelled_backwards_most_frequent_first():
    # pieces of "the whale the sea": "the" x2, " " x3, "whale", "sea". Counts: " "=3, "eht"=2, then the count-1
    # tokens by string: "aes" < "elahw".
    tok = ReverseTokenizer().fit(["the whale the sea"])
    assert tok.get_vocab() == {"<unk>": 0, " ": 1, "eht": 2, "aes": 3, "elahw": 4}
    enc = tok.encode("the sea")
    assert enc.tokens == ["eht", " ", "aes"]
    assert enc.ids.tolist() == [2, 1, 3]
    assert enc.offsets.tolist() == [[0, 3], [3, 4], [4, 7]]
    assert tok.decode(enc.ids) == "the sea"


def test_whitespace_runs_round_trip_exactly():
    text = "  Call\tme\n\nIshmael.  "
    tok = ReverseTokenizer().fit([text])
    enc = tok.encode(text)
    assert enc.tokens == ["  ", "llaC", "\t", "em", "\n\n", ".leamhsI", "  "]
    assert tok.decode(enc.ids) == text
    assert [text[s:e] for s, e in enc.offsets.tolist()] == ["  ", "Call", "\t", "me", "\n\n", "Ishmael.", "  "]


def test_unknown_pieces_and_limits():
    tok = ReverseTokenizer(vocab_size=3, min_frequency=1).fit(["a a a b b c"])
    assert tok.get_vocab() == {"<unk>": 0, " ": 1, "a": 2}  # " "=5, "a"=3 kept; "b", "c" cut by vocab_size
    assert tok.decode(tok.encode("a b").ids) == "a <unk>"
    assert tok.decode(tok.encode("a b").ids, skip_special_tokens=True) == "a "
    assert ReverseTokenizer(min_frequency=3).fit(["a a a b b c"]).get_vocab() == {"<unk>": 0, " ": 1, "a": 2}
    strict = ReverseTokenizer(unk_token=None).fit(["a"])
    with pytest.raises(TokembedError, match="'b' at 0 is not in the vocabulary"):
        strict.encode("b")


def test_a_piece_reading_as_a_special_token_stays_plain_text():
    tok = ReverseTokenizer(special_tokens=["<s>"]).fit([">s< <s>"])
    # ">s<" reversed is "<s>", a special token: it is not a learned token, so it encodes as unknown text
    assert "<s>" not in tok.token_counts_
    assert tok.encode(">s<").ids.tolist() == [0]
    assert tok.encode("<s>", allowed_special=["<s>"]).ids.tolist() == [1]


@pytest.mark.parametrize(("params", "error"), [
    ({"vocab_size": 0}, "vocab_size must be an int >= 1"),
    ({"min_frequency": True}, "min_frequency must be an int >= 1"),
    ({"special_tokens": "<s>"}, "not one string"),
    ({"vocab_size": 1, "special_tokens": ["<s>"]}, "smaller than the 2 special tokens"),
])
def test_bad_params(params, error):
    with pytest.raises(TokembedError, match=error):
        ReverseTokenizer(**params).fit(["a"])


def test_empty_corpus():
    with pytest.raises(CorpusError):
        ReverseTokenizer().fit(["", ""])
