"""The character tokenizer: vocabulary order, limits, special tokens, offsets, exact round trips, artifacts."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokembed.errors import ArtifactError, CorpusError, NotFittedError, TokembedError
from tokembed.plugins.char.tokenizer import CharTokenizer


def vocab_list(tok) -> list[str]:
    return [t for t, _ in sorted(tok.get_vocab().items(), key=lambda kv: kv[1])]


# -- vocabulary -----------------------------------------------------------------------------------------------------
def test_vocabulary_order_most_frequent_first_ties_by_code_point():
    # "abracadabra": a=5, b=2, r=2, c=1, d=1. Ties by code point: b (U+0062) before r (U+0072), c (U+0063)
    # before d (U+0064). Specials first: <pad>=0, <unk>=1.
    tok = CharTokenizer().fit(["abracadabra"])
    assert vocab_list(tok) == ["<pad>", "<unk>", "a", "b", "r", "c", "d"]
    assert tok.char_counts_ == {"a": 5, "b": 2, "r": 2, "c": 1, "d": 1}
    assert tok.special_tokens_ == ["<pad>", "<unk>"]
    assert tok.encode("abracadabra").ids.tolist() == [2, 3, 4, 2, 5, 2, 6, 2, 3, 4, 2]


def test_counts_add_up_over_documents_and_one_str_is_refused():
    # "ba" + "b" + "ccc": b=2, c=3, a=1 -> c, b, a
    assert vocab_list(CharTokenizer(pad_token=None, unk_token=None).fit(iter(["ba", "b", "ccc"]))) == ["c", "b", "a"]
    assert vocab_list(CharTokenizer(pad_token=None, unk_token=None).fit(["abb"])) == ["b", "a"]
    # one str is not a corpus of one document: every tokenizer refuses it with the fix (issue 25)
    with pytest.raises(TokembedError, match=r"char: fit expects an iterable of documents, got one str; wrap it in a "
                                            r"list"):
        CharTokenizer().fit("abb")


def test_ties_by_code_point_not_by_first_appearance():
    # all counts 1; code points: " " U+0020 < "A" U+0041 < "z" U+007A < "é" U+00E9 < "🐳" U+1F433
    tok = CharTokenizer(pad_token=None, unk_token=None).fit(["🐳zé A"])
    assert vocab_list(tok) == [" ", "A", "z", "é", "🐳"]


def test_min_frequency():
    tok = CharTokenizer(min_frequency=2).fit(["abracadabra"])
    assert vocab_list(tok) == ["<pad>", "<unk>", "a", "b", "r"]
    assert tok.encode("cab").ids.tolist() == [1, 2, 3]  # "c" (count 1) is unknown now


def test_vocab_size_caps_the_total_special_tokens_included():
    tok = CharTokenizer(vocab_size=4).fit(["abracadabra"])
    assert vocab_list(tok) == ["<pad>", "<unk>", "a", "b"]
    assert tok.get_vocab_size() == 4 and tok.vocab_size == 4
    assert tok.char_counts_ == {"a": 5, "b": 2}
    assert CharTokenizer(vocab_size=100).fit(["ab"]).get_vocab_size() == 4  # asked 100, obtained 4
    assert CharTokenizer(vocab_size=2).fit(["ab"]).get_vocab() == {"<pad>": 0, "<unk>": 1}


def test_special_tokens_order_and_dedup():
    tok = CharTokenizer(special_tokens=["<s>", "<unk>", "</s>", "<s>"]).fit(["ab"])
    assert tok.special_tokens_ == ["<pad>", "<unk>", "<s>", "</s>"]
    assert vocab_list(tok)[:4] == ["<pad>", "<unk>", "<s>", "</s>"]
    assert tok.special_tokens == ["<s>", "<unk>", "</s>", "<s>"]  # the parameter is kept as given


def test_pad_id_is_zero_and_optional():
    assert CharTokenizer().fit(["x"]).token_to_id("<pad>") == 0
    tok = CharTokenizer(pad_token=None).fit(["x"])
    assert vocab_list(tok) == ["<unk>", "x"]
    tok = CharTokenizer(pad_token="[PAD]", unk_token="[UNK]").fit(["x"])
    assert vocab_list(tok) == ["[PAD]", "[UNK]", "x"]


def test_a_single_character_special_token_is_not_also_a_character():
    tok = CharTokenizer(pad_token=None, unk_token="?").fit(["a?b"])
    assert vocab_list(tok) == ["?", "a", "b"]


# -- unknown characters ---------------------------------------------------------------------------------------------
def test_unknown_characters_become_unk():
    tok = CharTokenizer().fit(["ab"])
    enc = tok.encode("a\u00e9b\U0001f433")
    assert enc.ids.tolist() == [2, 1, 3, 1]
    assert enc.tokens == ["a", "<unk>", "b", "<unk>"]
    assert tok.decode(enc.ids) == "a<unk>b<unk>"
    assert tok.decode(enc.ids, skip_special_tokens=True) == "ab"


def test_without_unk_an_unknown_character_is_an_error_naming_it():
    tok = CharTokenizer(unk_token=None).fit(["ab"])
    assert tok.encode("ba").ids.tolist() == [2, 1]
    with pytest.raises(TokembedError, match=r"character 'é' \(U\+00E9\) at position 1 is not in the vocabulary"):
        tok.encode("aéb")
    with pytest.raises(TokembedError, match=r"'🐳' \(U\+1F433\) at position 0"):
        tok.encode("\U0001f433")


# -- special-token text ---------------------------------------------------------------------------------------------
def test_special_token_text_is_plain_characters_unless_allowed():
    tok = CharTokenizer(special_tokens=["<s>"]).fit(["<unk> <s> <pad>"])
    plain = tok.encode("<s>x")
    assert plain.tokens == ["<", "s", ">", "<unk>"]
    assert tok.decode(tok.encode("<pad> <unk>").ids) == "<pad> <unk>"
    allowed = tok.encode("<s>x<pad>", allowed_special=["<s>"])
    assert allowed.tokens == ["<s>", "<unk>", "<", "p", "a", "d", ">"]
    assert allowed.ids[0] == tok.token_to_id("<s>") == 2
    assert allowed.offsets.tolist()[:2] == [[0, 3], [3, 4]]
    everything = tok.encode("<s>x<pad>", allowed_special="all")
    assert everything.ids.tolist() == [2, 1, 0]
    assert everything.offsets.tolist() == [[0, 3], [3, 4], [4, 9]]
    with pytest.raises(TokembedError, match="not special tokens"):
        tok.encode("x", allowed_special=["<mask>"])


# -- offsets and exact round trips ----------------------------------------------------------------------------------
def test_offsets_are_code_point_spans():
    tok = CharTokenizer().fit(["a🐳 é"])
    text = "🐳a é"
    enc = tok.encode(text)
    assert enc.offsets.tolist() == [[0, 1], [1, 2], [2, 3], [3, 4]]
    assert [text[s:e] for s, e in enc.offsets.tolist()] == enc.tokens
    assert enc.ids.dtype == np.int32 and enc.offsets.dtype == np.int64
    empty = tok.encode("")
    assert len(empty) == 0 and empty.offsets.shape == (0, 2) and tok.decode(empty.ids) == ""


@pytest.mark.parametrize("text", [
    "  two leading, two trailing  ",
    "\ttabs\t\tand\nnew\n\nlines\r\n",
    " ",
    "\n",
    "a  b   c    d",
    "\u00a0non-breaking\u2003em space\u3000ideographic",
    "zero\u200bwidth\ufeffBOM",
])
def test_exact_round_trip_on_whitespace(text):
    tok = CharTokenizer().fit([text])
    assert tok.decode(tok.encode(text).ids) == text


def test_lone_surrogates_are_code_points_like_any_other(tmp_path):
    text = "a\ud800b\udfffa"
    tok = CharTokenizer().fit([text])
    assert vocab_list(tok) == ["<pad>", "<unk>", "a", "b", "\ud800", "\udfff"]  # b U+0062 < U+D800 < U+DFFF
    enc = tok.encode(text)
    assert enc.tokens == ["a", "\ud800", "b", "\udfff", "a"]
    assert tok.decode(enc.ids) == text
    # a high and a low surrogate typed next to each other stay two code points (Python str semantics)
    assert len(tok.encode("\ud800\udfff")) == 2
    loaded = CharTokenizer.load(tok.save(tmp_path / "s.tokembed.json"))
    assert loaded.get_vocab() == tok.get_vocab() and loaded.decode(enc.ids) == text


@settings(deadline=None, max_examples=150)
@given(st.text(st.characters(exclude_categories=()), min_size=1, max_size=200))
def test_round_trip_when_fitted_on_the_text(text):
    tok = CharTokenizer().fit([text])
    enc = tok.encode(text)
    assert tok.decode(enc.ids) == text
    assert enc.offsets.tolist() == [[i, i + 1] for i in range(len(text))]


ALPHABET = "abcdefghij \t\n<>é🐳\ud800"


@settings(deadline=None, max_examples=150)
@given(st.text(st.sampled_from(ALPHABET), max_size=100))
def test_round_trip_of_any_text_whose_characters_are_in_the_vocabulary(text):
    tok = CharTokenizer().fit([ALPHABET])
    assert tok.decode(tok.encode(text).ids) == text


# -- errors ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("corpus", [[], [""], ["", ""], iter([])])
def test_empty_corpus_is_a_corpus_error(corpus):
    with pytest.raises(CorpusError, match="char: the corpus is empty"):
        CharTokenizer().fit(corpus)


def test_non_str_document_is_a_corpus_error():
    with pytest.raises(CorpusError, match="documents must be str, got bytes"):
        CharTokenizer().fit(["ok", b"bytes"])


@pytest.mark.parametrize(("params", "message"), [
    ({"vocab_size": 0}, "char: vocab_size must be an int >= 1 or null, got 0"),
    ({"vocab_size": "10"}, "char: vocab_size must be an int >= 1 or null, got '10'"),
    ({"vocab_size": 2.0}, "char: vocab_size must be an int >= 1 or null, got 2.0 (write it without a decimal point)"),
    ({"vocab_size": True}, "char: vocab_size must be an int >= 1 or null, got True"),
    ({"vocab_size": 1}, "char: vocab_size=1 is smaller than the 2 special tokens ('<pad>' (pad_token), '<unk>' "
                        "(unk_token)); raise vocab_size, or set unused ones to null"),
    ({"min_frequency": 0}, "char: min_frequency must be an int >= 1, got 0"),
    ({"special_tokens": "<s>"}, "char: special_tokens must be a list, each a non-empty str, got '<s>'"),
    ({"special_tokens": ["<s>", ""]}, "char: special_tokens must be a list, each a non-empty str, got ['<s>', '']"),
    ({"unk_token": 5}, "char: unk_token must be a non-empty str or null, got 5"),
    ({"pad_token": ""}, "char: pad_token must be a non-empty str or null, got ''"),
    ({"seed": "0"}, "char: seed must be an int, got '0'"),
])
def test_bad_params_are_tokembed_errors_raised_by_fit_not_init(params, message):
    tok = CharTokenizer(**params)  # __init__ only stores
    with pytest.raises(TokembedError) as info:
        tok.fit(["abc"])
    assert str(info.value) == message
    assert not tok.is_fitted()


def test_validate_reports_every_bad_parameter_not_only_the_first():
    # as `tokembed validate` calls it: one problem per bad parameter, each placed at its parameter
    assert CharTokenizer.check_params({"vocab_size": 0, "min_frequency": 2, "unk_token": "", "seed": 1.5}) == [
        ("vocab_size", "char: vocab_size must be an int >= 1 or null, got 0"),
        ("unk_token", "char: unk_token must be a non-empty str or null, got ''"),
        ("seed", "char: seed must be an int, got 1.5"),
    ]
    # and fit raises them together
    with pytest.raises(TokembedError, match="^char: 2 invalid parameters: vocab_size must be an int >= 1 or null, "
                                            "got 0; min_frequency must be an int >= 1, got 0$"):
        CharTokenizer(vocab_size=0, min_frequency=0).fit(["abc"])


def test_decode_rejects_ids_outside_the_vocabulary():
    tok = CharTokenizer().fit(["ab"])
    for bad in ([4], [-1], [0, 99]):
        with pytest.raises(TokembedError, match=r"outside the vocabulary \[0, 4\)"):
            tok.decode(bad)
    with pytest.raises(TokembedError, match="flat sequence"):  # a batch of sequences is not one sequence
        tok.decode(np.array([[2, 3]]))


def test_use_before_fit():
    tok = CharTokenizer()
    for call in (lambda: tok.encode("a"), lambda: tok.decode([0]), tok.get_vocab, tok.get_vocab_size,
                 lambda: tok.token_to_id("a"), lambda: tok.id_to_token(0)):
        with pytest.raises(NotFittedError):
            call()


def test_vocabulary_lookups():
    tok = CharTokenizer().fit(["abracadabra"])
    assert tok.token_to_id("r") == 4 and tok.token_to_id("z") is None
    assert tok.id_to_token(4) == "r" and tok.id_to_token(7) is None and tok.id_to_token(-1) is None
    assert tok.get_vocab_size() == 7


def test_refit_starts_afresh():
    tok = CharTokenizer().fit(["aaa"])
    tok.fit(["bb"])
    assert vocab_list(tok) == ["<pad>", "<unk>", "b"]
    assert tok.encode("a").ids.tolist() == [1]


# -- artifacts ------------------------------------------------------------------------------------------------------
def test_save_load_round_trip_and_artifact_content(tmp_path):
    tok = CharTokenizer(min_frequency=1, special_tokens=["<s>"]).fit(["abracadabra"])
    path = tok.save(tmp_path / "c.tokembed.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["state"] == {"special_tokens": ["<pad>", "<unk>", "<s>"], "chars": ["a", "b", "r", "c", "d"],
                             "char_counts": [5, 2, 2, 1, 1]}
    assert data["params"]["special_tokens"] == ["<s>"]
    loaded = CharTokenizer.load(path)
    assert loaded.get_vocab() == tok.get_vocab() and loaded.char_counts_ == tok.char_counts_
    text = "cab<s>z"
    assert loaded.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")
    assert loaded.save(tmp_path / "again.tokembed.json").read_bytes() == path.read_bytes()


@pytest.fixture
def saved(tmp_path):
    return CharTokenizer().fit(["abracadabra"]).save(tmp_path / "c.tokembed.json")


@pytest.mark.parametrize("cut", [0, 1, 10, -2])
def test_truncated_artifact_is_an_artifact_error(saved, cut):
    raw = saved.read_bytes()
    saved.write_bytes(raw[:cut] if cut >= 0 else raw[:len(raw) + cut])
    with pytest.raises(ArtifactError, match="the file may be truncated"):
        CharTokenizer.load(saved)


def test_not_json_is_an_artifact_error(saved):
    saved.write_bytes(b"\x89PNG\r\n\x1a\n")
    with pytest.raises(ArtifactError, match="not a UTF-8 JSON artifact"):
        CharTokenizer.load(saved)


@pytest.mark.parametrize(("state", "message"), [
    ({"special_tokens": ["<pad>", "<unk>"]}, "KeyError: 'chars'"),
    ({"special_tokens": ["<pad>", "<unk>"], "chars": ["ab"]}, "every entry of \"chars\" must be one character"),
    ({"special_tokens": ["<pad>", "<unk>"], "chars": ["a", "a"]}, "duplicate entries in the vocabulary"),
    ({"special_tokens": None, "chars": ["a"]}, "TypeError"),
    ({"special_tokens": ["<pad>"], "chars": ["a"], "char_counts": ["many"]}, "ValueError"),
])
def test_broken_state_is_an_artifact_error(saved, state, message):
    data = json.loads(saved.read_text(encoding="utf-8"))
    data["state"] = state
    saved.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ArtifactError, match=message):
        CharTokenizer.load(saved)


def test_artifact_of_another_type_is_an_artifact_error(saved):
    data = json.loads(saved.read_text(encoding="utf-8"))
    data["type"] = "word"
    saved.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ArtifactError, match="holds a tokenizer of type 'word', not a tokenizer of type 'char'"):
        CharTokenizer.load(saved)


# -- a special token that is also a character of the corpus ---------------------------------------------------------
def test_a_special_token_that_is_a_corpus_character_warns_and_encodes_as_unk():
    from tokembed.errors import SpecialTokenInCorpusWarning

    # "banana bread": a occurs 3 + 1 = 4 times; the special token "a" owns the string "a", so the character has
    # no id of its own: a string has one id, and special tokens typed in a text are plain text
    with pytest.warns(SpecialTokenInCorpusWarning) as caught:
        tok = CharTokenizer(special_tokens=["a"]).fit(["banana bread"])
    assert str(caught[0].message) == (
        "char: the special token 'a' (seen 4 times) is also a character of the corpus, with no id of its own (a "
        "string has one id, the special token's, and a special token typed in a text is plain text): this "
        "character encodes as unk_token '<unk>'. Choose special tokens that do not occur in the corpus, or pass "
        "allowed_special=... to encode them as the special tokens")
    assert caught[0].filename == __file__  # points at the caller of fit
    assert tok.encode("banana").tokens == ["b", "<unk>", "n", "<unk>", "n", "<unk>"]
    assert tok.encode("banana", allowed_special=["a"]).tokens == ["b", "a", "n", "a", "n", "a"]
    with pytest.warns(SpecialTokenInCorpusWarning, match=r"'a' \(seen 4 times\), 'b' \(seen 2 times\) are also "
                                                         r"characters .*: encoding these characters raises"):
        CharTokenizer(special_tokens=["a", "b", "z"], unk_token=None).fit(["banana bread"])


def test_no_warning_for_the_unk_token_or_a_character_below_min_frequency():
    import warnings

    from tokembed.errors import SpecialTokenInCorpusWarning

    with warnings.catch_warnings():
        warnings.simplefilter("error", SpecialTokenInCorpusWarning)
        # "?" typed in a text encodes as unk_token "?": nothing is lost
        assert CharTokenizer(pad_token=None, unk_token="?").fit(["a?b"]).encode("?").tokens == ["?"]
        # a: 4 < min_frequency 5, so it would encode as unk_token anyway
        CharTokenizer(special_tokens=["a"], min_frequency=5).fit(["banana bread"])
    with pytest.warns(UserWarning, match="'a' \\(seen 4 times\\)"):
        CharTokenizer(special_tokens=["a"], min_frequency=4).fit(["banana bread"])


def test_vocab_size_below_the_special_tokens_names_them():
    with pytest.raises(TokembedError) as caught:
        CharTokenizer(vocab_size=1, special_tokens=[]).fit(["abc"])
    assert str(caught.value) == ("char: vocab_size=1 is smaller than the 2 special tokens ('<pad>' (pad_token), "
                                 "'<unk>' (unk_token)); raise vocab_size, or set unused ones to null")
    # a repeat is counted once, under the first parameter that sets it
    params = {"vocab_size": 2, "pad_token": None, "special_tokens": ["<s>", "<unk>", "</s>"]}
    assert CharTokenizer.check_params(params) == [(
        "vocab_size",
        "char: vocab_size=2 is smaller than the 3 special tokens ('<unk>' (unk_token), '<s>' (special_tokens), "
        "'</s>' (special_tokens)); raise vocab_size, or set unused ones to null")]
