"""The BPE issue's cases, each with its stated value, and the rules of training and encoding around them."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from tokembed.errors import CorpusError, NotFittedError, TokembedError
from tokembed.plugins.bpe.tokenizer import BPETokenizer, VocabularySizeWarning

from _bpe_data import gpt2_tokenizer


def fit_quiet(tok: BPETokenizer, corpus) -> tuple[BPETokenizer, list[str]]:
    """Fit and return the VocabularySizeWarning messages."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tok.fit(corpus)
    return tok, [str(w.message) for w in caught if issubclass(w.category, VocabularySizeWarning)]


def byte_merges(tok: BPETokenizer) -> list[tuple[bytes, bytes]]:
    from tokembed.plugins.bpe.bytelevel import token_bytes

    return [(token_bytes(a), token_bytes(b)) for a, b in tok.merges_]


# -- case 1: "a ☃ b" -------------------------------------------------------------------------------------------------
def test_snowman_no_merge_and_spans():
    # "a ☃ b": a (0, 1), space (1, 2), the three UTF-8 bytes of ☃ (E2 98 83) all (2, 3), space (3, 4), b (4, 5).
    # Pairs all occur once, so min_frequency=2 allows no merge.
    tok, messages = fit_quiet(BPETokenizer(byte_level=True, pre_tokenizer=None, min_frequency=2), ["a ☃ b"])
    assert tok.merges_ == [] and tok.get_vocab_size() == 256 and len(messages) == 1
    enc = tok.encode("a ☃ b")
    assert tok.decode_bytes(enc.ids) == "a ☃ b".encode()
    assert [tok.decode_bytes([i]) for i in enc.ids] == [b"a", b" ", b"\xe2", b"\x98", b"\x83", b" ", b"b"]
    assert enc.offsets.tolist() == [[0, 1], [1, 2], [2, 3], [2, 3], [2, 3], [3, 4], [4, 5]]


@pytest.mark.parametrize("vocab_size", [257, 258, 259, 260, 262, 300])
def test_snowman_with_merges_spans_never_cut_a_character(vocab_size):
    text = "a ☃ b"
    tok, _ = fit_quiet(BPETokenizer(byte_level=True, pre_tokenizer=None, min_frequency=1, vocab_size=vocab_size),
                       [text])
    # 6 windows over 7 bytes: at most 6 merges, each of count 1
    assert len(tok.merges_) == min(vocab_size - 256, 6)
    enc = tok.encode(text)
    assert tok.decode(enc.ids) == text
    for (start, end), tid in zip(enc.offsets.tolist(), enc.ids.tolist()):
        assert 0 <= start < end <= 5
        # the token's bytes lie inside the UTF-8 of its span: the span covers whole characters
        assert tok.decode_bytes([tid]) in text[start:end].encode()


# -- case 2: "   " ----------------------------------------------------------------------------------------------------
def test_three_spaces_two_merges_then_a_message():
    # "   " = 20 20 20: (20, 20) counts 2 (overlapping windows) and merges into "  " (id 256); the word is then
    # ["  ", " "], whose one pair (count 1) merges into "   " (id 257); then no pair is left: 258 entries, not 260.
    tok, messages = fit_quiet(BPETokenizer(byte_level=True, pre_tokenizer=None, vocab_size=260, min_frequency=1),
                              ["   "])
    assert byte_merges(tok) == [(b" ", b" "), (b"  ", b" ")]
    assert tok.merge_counts_ == [2, 1]
    assert tok.get_vocab_size() == 258
    assert len(messages) == 1 and "258" in messages[0] and "260" in messages[0]
    two, messages = fit_quiet(BPETokenizer(byte_level=True, pre_tokenizer=None, vocab_size=260, min_frequency=2),
                              ["   "])
    assert byte_merges(two) == [(b" ", b" ")] and two.get_vocab_size() == 257 and len(messages) == 1


@pytest.mark.parametrize("corpus", [[""], [], ["", ""]])
def test_empty_corpus_raises(corpus):
    with pytest.raises(CorpusError):
        BPETokenizer(byte_level=True, pre_tokenizer=None).fit(corpus)


def test_whitespace_only_corpus_with_word_split_raises():
    with pytest.raises(CorpusError):
        BPETokenizer().fit(["   \n\t "])


# -- case 3: words ab, bc, cd with </w> ---------------------------------------------------------------------------
def test_word_level_suffix_three_merges_then_clean_stop():
    # Base symbols: a b c d (0..3), then b</w> c</w> d</w> (4..6): 7 entries. Windows: (a, b</w>), (b, c</w>),
    # (c, d</w>), each of count 1; ties go to the smallest (left, right): (0, 4), (1, 5), (2, 6).
    params = dict(end_of_word_suffix="</w>", unk_token=None, vocab_size=7 + 10)
    none, messages = fit_quiet(BPETokenizer(min_frequency=2, **params), ["ab bc cd"])
    assert none.merges_ == [] and none.get_vocab_size() == 7 and len(messages) == 1
    tok, messages = fit_quiet(BPETokenizer(min_frequency=1, **params), ["ab", "bc", "cd"])
    assert [t for t, _ in sorted(tok.get_vocab().items(), key=lambda kv: kv[1])][:7] == \
        ["a", "b", "c", "d", "b</w>", "c</w>", "d</w>"]
    assert tok.merges_ == [("a", "b</w>"), ("b", "c</w>"), ("c", "d</w>")]
    assert tok.merge_counts_ == [1, 1, 1]
    assert tok.get_vocab_size() == 10 and len(messages) == 1 and "10 entries" in messages[0]
    assert tok.encode("ab cd").tokens == ["ab</w>", "cd</w>"]
    assert tok.decode(tok.encode("ab cd bc").ids) == "ab cd bc"


# -- case 4: round trip -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("pre_tokenizer", ["gpt2", None])
def test_whitespace_round_trip_byte_for_byte(pre_tokenizer):
    text = "  lead  two\ttab\nline  "
    tok, _ = fit_quiet(BPETokenizer(byte_level=True, pre_tokenizer=pre_tokenizer, vocab_size=270, min_frequency=1),
                       [text])
    enc = tok.encode(text)
    assert tok.decode_bytes(enc.ids) == text.encode()
    assert tok.decode(enc.ids) == text
    assert gpt2_tokenizer().decode(gpt2_tokenizer().encode(text).ids) == text


# -- surrogates and incomplete bytes ----------------------------------------------------------------------------------
def test_surrogates_are_repaired_like_utf16():
    tok = gpt2_tokenizer()
    assert tok.encode("\ud800").ids.tolist() == tok.encode("\ufffd").ids.tolist()
    assert tok.encode("x\udc00y").ids.tolist() == tok.encode("x\ufffdy").ids.tolist()
    assert tok.encode("\ud83d\ude00").ids.tolist() == tok.encode("😀").ids.tolist()
    # a surrogate pair is one character of the original str's two code points: its tokens span both
    enc = tok.encode("a\ud83d\ude00b")
    assert enc.offsets.min() == 0 and enc.offsets.max() == 4
    assert [o for o, t in zip(enc.offsets.tolist(), enc.tokens) if t not in ("a", "b")] == \
        [[1, 3]] * (len(enc) - 2)
    # and a letter written as a surrogate pair joins the neighbouring letters, as the character would
    assert tok.encode("x\ud835\udc00y").ids.tolist() == tok.encode("x𝐀y").ids.tolist()


def test_incomplete_bytes_decode_like_utf8_replace():
    from tokembed.plugins.bpe.bytelevel import BYTE_CHARS

    tok = gpt2_tokenizer()
    raw = "x☃y".encode()  # 78 E2 98 83 79
    for cut in range(len(raw) + 1):
        ids = [tok.token_to_id(BYTE_CHARS[b]) for b in raw[:cut]]
        assert tok.decode_bytes(ids) == raw[:cut]
        assert tok.decode(ids) == raw[:cut].decode("utf-8", "replace")
    assert tok.decode([tok.token_to_id(BYTE_CHARS[0xE2])]) == "\ufffd"


# -- long inputs ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["z" * 120_000, "~" * 1_000_000], ids=["z*120k", "~*1M"])
def test_long_runs_encode_and_round_trip(text):
    tok = gpt2_tokenizer()
    enc = tok.encode(text)
    assert tok.decode(enc.ids) == text
    assert enc.offsets[0, 0] == 0 and enc.offsets[-1, 1] == len(text)
    assert (enc.offsets[1:, 0] == enc.offsets[:-1, 1]).all()


def test_training_on_one_long_word_is_not_quadratic():
    tok, _ = fit_quiet(BPETokenizer(byte_level=True, pre_tokenizer=None, vocab_size=300, min_frequency=1),
                       ["ab" * 200_000])
    enc = tok.encode("ab" * 1000)
    assert tok.decode(enc.ids) == "ab" * 1000 and len(enc) < 100


# -- special tokens ---------------------------------------------------------------------------------------------------
def test_special_tokens_are_plain_text_unless_allowed():
    tok = gpt2_tokenizer()
    text = "a<|endoftext|>b"
    plain = tok.encode(text)
    assert 50256 not in plain.ids.tolist() and tok.decode(plain.ids) == text
    allowed = tok.encode(text, allowed_special=["<|endoftext|>"])
    assert allowed.ids.tolist() == [64, 50256, 65]
    assert allowed.offsets.tolist() == [[0, 1], [1, 14], [14, 15]]
    assert tok.decode(allowed.ids, skip_special_tokens=True) == "ab"


def test_special_ids_planned_before_fit_are_the_fitted_ids():
    params = dict(special_tokens=["<s>", "</s>", "<s>"], pad_token="<pad>", vocab_size=300,
                  end_of_word_suffix="</w>")
    planned = BPETokenizer.expected_special_ids(params)
    assert planned == {"<pad>": 0, "<unk>": 1, "<s>": 2, "</s>": 3}
    tok, _ = fit_quiet(BPETokenizer(**params), ["some text for the model"])
    assert {s: tok.token_to_id(s) for s in planned} == planned and tok.special_tokens_ == list(planned)
    byte = BPETokenizer.expected_special_ids({"byte_level": True, "special_tokens": ["<|endoftext|>"]})
    assert byte == {"<|endoftext|>": 0}
    tok, _ = fit_quiet(BPETokenizer(byte_level=True, special_tokens=["<|endoftext|>"], vocab_size=260), ["text"])
    assert tok.token_to_id("<|endoftext|>") == 0 and tok.token_to_id("<unk>") is None
    assert tok.token_to_id("a") == 1 + ord("a")  # bytes follow the specials, in byte order


# -- character level: unk, alphabet, prefix, max_token_length ------------------------------------------------------
def test_unknown_characters_become_unk_or_raise():
    tok, _ = fit_quiet(BPETokenizer(end_of_word_suffix="</w>", vocab_size=40), ["abc abd"])
    enc = tok.encode("abz")
    assert enc.tokens[-1] == "<unk>" and enc.offsets.tolist()[-1] == [2, 3]
    strict, _ = fit_quiet(BPETokenizer(unk_token=None, vocab_size=40), ["abc abd"])
    with pytest.raises(TokembedError, match="'z'"):
        strict.encode("abz")


def test_limit_alphabet_keeps_the_most_frequent_and_splits_words():
    # counts: a=4, b=3, c=1, x=1 (ties by code point): limit 2 keeps a, b; "abcab" is split at c into "ab", "ab"
    tok, _ = fit_quiet(BPETokenizer(limit_alphabet=2, min_frequency=1, vocab_size=100), ["abcab ax"])
    vocab = tok.get_vocab()
    assert "a" in vocab and "b" in vocab and "c" not in vocab and "x" not in vocab
    assert tok.merges_ == [("a", "b")] and tok.merge_counts_ == [2]
    forced, _ = fit_quiet(BPETokenizer(limit_alphabet=2, initial_alphabet="zx", min_frequency=1, vocab_size=100),
                          ["abcab ax"])
    assert {"z", "x"} <= set(forced.get_vocab()) and "a" not in forced.get_vocab()


def test_continuing_subword_prefix_and_decode():
    tok, _ = fit_quiet(BPETokenizer(continuing_subword_prefix="##", min_frequency=1, vocab_size=60),
                       ["low lower lowest"])
    assert tok.merges_[0] == ("l", "##o") and tok.token_to_id("lo") is not None
    enc = tok.encode("lower low")
    assert tok.decode(enc.ids) == "lower low"


@pytest.mark.parametrize("limit, merges", [(3, [("a", "b"), ("ab", "c")]), (2, [("a", "b")]), (None, None)])
def test_max_token_length_is_an_inclusive_limit(limit, merges):
    # "abc" * 10: (a, b) and (b, c) count 10, (c, a) 9; the tie goes to (a, b) (smaller ids). Then (ab, c) counts
    # 10 and makes a 3-character token, allowed by the inclusive limit 3 and refused by 2; (abc, abc) has 6.
    tok, _ = fit_quiet(BPETokenizer(pre_tokenizer=None, max_token_length=limit, vocab_size=100, min_frequency=1),
                       ["abc" * 10])
    if merges is None:
        assert tok.merges_[:3] == [("a", "b"), ("ab", "c"), ("abc", "abc")]
    else:
        assert tok.merges_ == merges


# -- merges that spell the same string -----------------------------------------------------------------------------
@pytest.mark.parametrize("vocab_size, n_vocab, n_merges", [(100, 7, 5), (6, 6, 3), (7, 7, 5)])
def test_merges_spelling_the_same_string(monkeypatch, vocab_size, n_vocab, n_merges):
    # The kernel numbers every merge afresh; two merges can spell one string (a + bc, ab + c). Such a string
    # enters the vocabulary once and both merges are kept; a merge repeating two earlier strings is dropped.
    from tokembed.plugins import _subword

    # base a b c = 0 1 2; kernel merges: 3 = b+c, 4 = a+(bc), 5 = a+b, 6 = (ab)+c ("abc" again),
    # 7 = (abc#6)+a, 8 = (abc#4)+a (the strings of merge 7 again)
    kernel = [(1, 2), (0, 3), (0, 1), (5, 2), (6, 0), (4, 0)]

    def fake(symbols, offsets, counts, n_base, max_merges, **kw):
        assert n_base == 3
        k = min(max_merges, len(kernel))
        left, right = zip(*kernel[:k])
        return _subword.MergeResult(np.array(left, np.int32), np.array(right, np.int32),
                                    np.arange(k, 0, -1).astype(np.int64))

    monkeypatch.setattr(_subword, "learn_bpe_merges", fake)
    tok, _ = fit_quiet(BPETokenizer(pre_tokenizer=None, unk_token=None, vocab_size=vocab_size), ["abc"])
    vocab = [t for t, _ in sorted(tok.get_vocab().items(), key=lambda kv: kv[1])]
    assert vocab == ["a", "b", "c", "bc", "abc", "ab", "abca"][:n_vocab]
    assert tok.merges_ == [("b", "c"), ("a", "bc"), ("a", "b"), ("ab", "c"), ("abc", "a")][:n_merges]
    assert tok.merge_counts_ == [6, 5, 4, 3, 2][:n_merges]
    # by rank: "abcab" -> a (bc) a b -> (abc) a b -> (abc) (ab); "abca" -> (abc) a -> (abca) with merge 4
    assert tok.encode("abc").tokens == ["abc"] and tok.encode("abcab").tokens == ["abc", "ab"]
    assert tok.encode("abca").tokens == (["abca"] if n_merges == 5 else ["abc", "a"])


def test_training_runs_the_kernel_again_when_repeated_merges_leave_the_vocabulary_short(monkeypatch):
    # vocab_size 4 over base a b: 2 merges wanted, the kernel is asked for 2 + 16; the fake kernel repeats the
    # pair (a, b) 20 times (dropped), so the first run leaves the vocabulary at 3 and the merge loop runs again
    from tokembed.plugins import _subword

    kernel = [(0, 1)] * 21 + [(2, 0)]
    asked = []

    def fake(symbols, offsets, counts, n_base, max_merges, **kw):
        asked.append(max_merges)
        left, right = zip(*kernel[:max_merges])
        return _subword.MergeResult(np.array(left, np.int32), np.array(right, np.int32),
                                    np.ones(len(left), np.int64))

    monkeypatch.setattr(_subword, "learn_bpe_merges", fake)
    tok, messages = fit_quiet(BPETokenizer(pre_tokenizer=None, unk_token=None, vocab_size=4), ["ab"])
    assert asked == [18, 36] and messages == []
    assert tok.merges_ == [("a", "b"), ("ab", "a")] and tok.get_vocab_size() == 4


def test_limit_alphabet_zero_leaves_only_specials():
    tok, messages = fit_quiet(BPETokenizer(limit_alphabet=0, vocab_size=10), ["abc"])
    assert tok.get_vocab() == {"<unk>": 0} and len(messages) == 1
    assert tok.encode("ab").tokens == ["<unk>", "<unk>"]


# -- validation -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("params, message", [
    ({"vocab_size": 0}, "vocab_size must be an int >= 1, got 0"),
    ({"vocab_size": "8k"}, "vocab_size must be an int >= 1, got '8k'"),
    ({"min_frequency": -1}, "min_frequency must be an int >= 0, got -1"),
    ({"dropout": 1.0}, "dropout must be a number in [0, 1) or null, got 1.0"),
    ({"dropout": True}, "dropout must be a number in [0, 1) or null, got True"),
    ({"special_tokens": "<s>"}, "special_tokens must be a list, each a non-empty str, got '<s>'"),
    ({"initial_alphabet": ["ab"]}, "initial_alphabet must be a str or a list, each a single character, got ['ab']"),
    ({"byte_level": True, "end_of_word_suffix": "</w>"},
     "end_of_word_suffix is not available at byte level (byte_level=True)"),
    ({"byte_level": True, "limit_alphabet": 10}, "limit_alphabet is not available at byte level (byte_level=True)"),
    ({"byte_level": 1}, "byte_level must be true or false, got 1 (use true/false: true where gensim takes 1)"),
    ({"end_of_word_suffix": ""}, "end_of_word_suffix must be a non-empty str or null, got ''"),
    ({"max_token_length": 0}, "max_token_length must be an int >= 1 or null, got 0"),
    ({"seed": 1.0}, "seed must be an int, got 1.0 (write it without a decimal point)"),
    ({"pre_tokenizer": "no-such-stage"}, "pre_tokenizer must be 'auto' or a pre-tokenizer spec or null, got "
     "'no-such-stage': unknown pre-tokenizer 'no-such-stage'. Available: bert, gpt2, identity, none, regex, sklearn, "
     "whitespace_split, word_punct"),
    # a template is checked before the first encode
    ({"post_processor": {"single": "[CLS]"}}, "post_processor must be a post-processor template or null, got "
     "{'single': '[CLS]'}: post_processor single template '[CLS]': a single template must hold $A exactly once and "
     "no $B"),
])
def test_invalid_parameters_raise_in_fit(params, message):
    tok = BPETokenizer(**params)  # __init__ stores, fit validates
    with pytest.raises(TokembedError) as info:
        tok.fit(["some text"])
    assert str(info.value) == f"bpe: {message}"


def test_validate_reports_every_bad_parameter_not_only_the_first():
    # as `tokembed validate` calls it: each declaration, then the byte-level rule on the values that are valid
    assert BPETokenizer.check_params({"vocab_size": 0, "byte_level": True, "min_frequency": -1,
                                      "end_of_word_suffix": "</w>", "limit_alphabet": 5}) == [
        ("vocab_size", "bpe: vocab_size must be an int >= 1, got 0"),
        ("min_frequency", "bpe: min_frequency must be an int >= 0, got -1"),
        ("end_of_word_suffix", "bpe: end_of_word_suffix is not available at byte level (byte_level=True)"),
        ("limit_alphabet", "bpe: limit_alphabet is not available at byte level (byte_level=True)"),
    ]


def test_a_str_initial_alphabet_is_its_characters():
    tok = BPETokenizer(initial_alphabet="zq", vocab_size=30, min_frequency=1, unk_token=None)
    fit_quiet(tok, ["ab"])
    assert {"z", "q", "a", "b"} <= set(tok.get_vocab())


def test_unfitted_use_raises():
    with pytest.raises(NotFittedError):
        BPETokenizer().encode("x")
    with pytest.raises(NotFittedError):
        BPETokenizer().to_hf_json("x.json")


def test_decode_rejects_ids_outside_the_vocabulary():
    tok = gpt2_tokenizer()
    with pytest.raises(TokembedError, match="50257"):
        tok.decode([50257])
    with pytest.raises(TokembedError):
        tok.decode([-1])
    assert tok.decode(np.array([], np.int32)) == ""


def test_an_empty_alphabet_is_named_as_the_reason_training_stopped():
    # limit_alphabet=0 keeps no character: the vocabulary is <unk> alone and no pair can form
    tok, messages = fit_quiet(BPETokenizer(vocab_size=100, limit_alphabet=0), ["hello world"])
    assert tok.get_vocab_size() == 1
    assert messages == ["bpe: training stopped after 0 merges because limit_alphabet=0 leaves 0 base characters; "
                        "the vocabulary has 1 entries, not the vocab_size=100 asked for"]
