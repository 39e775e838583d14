"""The WordPiece tokenizer: encoding and training against the plain-Python references, parameters, files,
recipes and the component contract."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import _wordpiece_ref as ref
from tokembed.encoding import Encoding
from tokembed.errors import ArtifactError, CorpusError, TokembedError
from tokembed.plugins.wordpiece import _train
from tokembed.plugins.wordpiece._charmap import char_map
from tokembed.plugins.wordpiece._encode import fast_encoding
from tokembed.plugins.wordpiece.tokenizer import WordPieceTokenizer
from tokembed.testing import check_component, sample_corpus

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
VOCAB = FIXTURES / "bert-base-uncased-vocab.txt"
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
BERT = {"single": "[CLS] $A [SEP]", "pair": "[CLS] $A [SEP] $B:1 [SEP]:1"}


def small(vocab, **params) -> WordPieceTokenizer:
    """A tokenizer over a hand-written vocabulary (the special tokens it lists are special)."""
    tok = WordPieceTokenizer(show_progress=False, **params)
    tok._validate()
    tok._set_vocab(list(vocab), [t for t in tok._specials() if t in vocab])
    return tok


@pytest.fixture(scope="module")
def bert() -> WordPieceTokenizer:
    return WordPieceTokenizer.from_vocab_file(VOCAB)


# -- encoding: hand-computed cases --------------------------------------------------------------------------------
def test_greedy_longest_match_first():
    tok = small(SPECIALS + ["un", "##aff", "##able", "##a", "##ff", "a", "##b", "unaff"])
    # "unaffable": longest initial prefix is "unaff", then the longest continuation of "able" is "##able"
    assert tok.encode("unaffable").tokens == ["unaff", "##able"]
    # "unaffa": "unaff" + "##a"; "unab": "un" then "a" is not a continuation but "##a" is, then "##b"
    assert tok.encode("unaffa").tokens == ["unaff", "##a"]
    assert tok.encode("unab").tokens == ["un", "##a", "##b"]
    # offsets are character spans into the original text
    enc = tok.encode("  Unaffable!")
    assert enc.tokens == ["unaff", "##able", "[UNK]"]
    assert enc.offsets.tolist() == [[2, 7], [7, 11], [11, 12]]


def test_a_word_without_segmentation_is_one_unk_spanning_it():
    tok = small(SPECIALS + ["un", "##able"])
    enc = tok.encode("unable unxable able")
    # "unxable": "un" matches, then no continuation starts with "x": the whole word is [UNK] (7, 14), not "un" + unk
    assert enc.tokens == ["un", "##able", "[UNK]", "[UNK]"]
    assert enc.offsets.tolist() == [[0, 2], [2, 6], [7, 14], [15, 19]]


def test_max_input_chars_per_word():
    tok = small(SPECIALS + ["a", "##a"], max_input_chars_per_word=5)
    assert tok.encode("aaaaa").tokens == ["a"] + ["##a"] * 4
    enc = tok.encode("x aaaaaa")
    assert enc.tokens == ["[UNK]", "[UNK]"] and enc.offsets.tolist() == [[0, 1], [2, 8]]
    # the limit counts characters after normalization: 5 letters with 5 stripped accents are 5 characters
    assert tok.encode("a\u0301" * 5).tokens == ["a"] + ["##a"] * 4


def test_no_unk_token_makes_an_unknown_word_an_error():
    tok = small(["a", "##b"], unk_token=None, pad_token=None, special_tokens=())
    assert tok.encode("ab a").tokens == ["a", "##b", "a"]
    with pytest.raises(TokembedError, match="'ac' has no segmentation"):
        tok.encode("ab ac")


def test_special_tokens_are_never_matched_in_text():
    tok = small(SPECIALS + ["mask", "[", "]", "a"])
    enc = tok.encode("[MASK] a")
    assert enc.tokens == ["[", "mask", "]", "a"]
    assert tok.encode("[MASK] a", allowed_special=["[MASK]"]).tokens == ["[MASK]", "a"]


def test_strip_accents_follows_lowercase_unless_set():
    vocab = SPECIALS + ["cafe", "café", "CAFE", "Café"]
    assert small(vocab).encode("Café").tokens == ["cafe"]  # lowercase, accents stripped
    assert small(vocab, strip_accents=False).encode("Café").tokens == ["café"]
    assert small(vocab, lowercase=False).encode("Café").tokens == ["Café"]  # cased: accents kept
    assert small(vocab, lowercase=False, strip_accents=True).encode("CAFÉ").tokens == ["CAFE"]


def test_clean_text_and_chinese_characters():
    vocab = SPECIALS + ["ab", "##cd", "中", "文", "中文", "x"]
    tok = small(vocab)
    # a NUL and a zero-width space are removed, and the word goes on across them; a tab is a space
    enc = tok.encode("ab\x00cd\u200b\tx")
    assert enc.tokens == ["ab", "##cd", "x"] and enc.offsets.tolist() == [[0, 2], [3, 5], [7, 8]]
    assert tok.encode("中文").tokens == ["中", "文"]  # each ideograph is a piece
    assert small(vocab, handle_chinese_chars=False).encode("中文").tokens == ["中文"]
    assert small(vocab, clean_text=False).encode("ab\x00cd").tokens == ["[UNK]"]  # "ab\x00cd" is not in the vocab


def test_offsets_of_expanding_and_removed_characters(bert):
    # "İ" lowercases to "i" + U+0307, the accent is stripped; the token spans the original character
    enc = bert.encode("İstanbul café\u0301", add_special_tokens=False)
    assert enc.tokens == ["istanbul", "cafe"]
    assert enc.offsets.tolist() == [[0, 8], [9, 13]]  # the stripped accents belong to no token, as in HF


def test_encode_batch_equals_encode_with_every_option(bert):
    bert_template = WordPieceTokenizer.from_vocab_file(VOCAB, post_processor=BERT)
    texts = ["Hello, world!", "", "   ", "An extraordinarily long sentence, with punctuation; and more words.",
             "中文 text", "a" * 120]
    pairs = ["Second text.", "x", "", "y y y y y y y y", "z", "w"]
    options = [
        {}, {"add_special_tokens": False}, {"padding": True}, {"padding": "max_length", "max_length": 20,
                                                              "truncation": True},
        {"truncation": True, "max_length": 10, "stride": 2}, {"padding": True, "padding_side": "left"},
        {"post_processor": {"single": "[SEP]:3 $A:2"}}, {"return_arrays": True, "padding": True},
    ]
    from tokembed.components import Tokenizer

    for opts in options:
        for tok in (bert, bert_template):
            # the base class's path, one text at a time through encode's machinery, gives the same
            batch = tok.encode_batch(texts, **opts)
            assert list(batch) == list(Tokenizer.encode_batch(tok, texts, **opts)), opts
            assert type(batch) is type(Tokenizer.encode_batch(tok, texts, **opts))
            pbatch = tok.encode_batch(texts, pairs, **opts)
            assert list(pbatch) == list(Tokenizer.encode_batch(tok, texts, pairs, **opts)), opts
            if not opts.get("padding"):  # padding a batch pads to its longest text
                single = {k: v for k, v in opts.items() if k != "return_arrays"}
                assert list(batch) == [tok.encode(t, **single) for t in texts], opts


def test_encode_batch_errors_match_the_base_class(bert):
    with pytest.raises(TypeError, match="not one str"):
        bert.encode_batch("text")
    with pytest.raises(TypeError, match="text 1"):
        bert.encode_batch(["a", 3])
    with pytest.raises(TokembedError, match="2 texts but 1 pairs"):
        bert.encode_batch(["a", "b"], ["c"])
    with pytest.raises(TokembedError, match="num_workers"):
        bert.encode_batch(["a"], num_workers=0)
    with pytest.raises(TokembedError, match="different lengths"):
        bert.encode_batch(["a", "a b"], return_arrays=True)
    assert len(bert.encode_batch(["a", "b c"], num_workers=2)) == 2


def test_fast_encoding_equals_the_validating_constructor():
    ids = np.array([3, 4], np.int32)
    off = np.array([[0, 1], [1, 3]], np.int64)
    ty = np.array([0, 1], np.int32)
    stm = np.array([0, 1], np.int8)
    att = np.ones(2, np.int8)
    fast = fast_encoding(ids, ["a", "##bc"], off, ty, stm, att)
    slow = Encoding(ids, ["a", "##bc"], off, ty, stm, att)
    assert fast == slow and vars(fast).keys() == vars(slow).keys()
    assert all(type(getattr(fast, k)) is type(getattr(slow, k)) for k in vars(slow))


def test_long_text_is_cut_into_chunks_without_changing_the_result(monkeypatch, bert):
    from tokembed.plugins.wordpiece import _encode

    text = ("The whale, the WHALE! Café au lait; 中文 and more.\n" * 300) + "tail" + "x" * 50
    whole = bert.encode_batch([text, "short", text[:999]], add_special_tokens=False)
    monkeypatch.setattr(_encode, "CHUNK_CHARS", 97)
    cut = bert.encode_batch([text, "short", text[:999]], add_special_tokens=False)
    assert list(cut) == list(whole)
    threads = bert.encode_batch([text, "short", text[:999]] * 3, add_special_tokens=False, num_workers=2)
    assert list(threads) == list(whole) * 3


def test_decode(bert):
    ids = bert.encode("Hello, y'all! Don't stop.", post_processor=BERT).ids
    # Hugging Face's cleanup glues " ," " !" " ." and " n't", but not a lone apostrophe (" ' " never occurs in one
    # token): "y ' all"
    assert bert.decode(ids) == "[CLS] hello, y ' all! don ' t stop. [SEP]"
    assert bert.decode(ids, skip_special_tokens=True) == "hello, y ' all! don ' t stop."
    assert bert.decode(bert.encode("unaffable").ids, skip_special_tokens=True) == "unaffable"
    with pytest.raises(TokembedError, match="outside the vocabulary"):
        bert.decode([30522])


# -- encoding: the kernel against the reference -------------------------------------------------------------------
_ALPHABET = "abcAB \t\n.,!é\u0301\u00c9中文\x00\u200b\u0130ß\u00a0"
_texts = st.text(alphabet=_ALPHABET, max_size=40)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=_texts,
    pieces=st.lists(st.text(alphabet="abcé中.", min_size=1, max_size=4), max_size=25),
    lowercase=st.booleans(),
    strip_accents=st.sampled_from([None, True, False]),
    clean_text=st.booleans(),
    chinese=st.booleans(),
    max_chars=st.integers(1, 8),
)
def test_kernel_equals_reference(text, pieces, lowercase, strip_accents, clean_text, chinese, max_chars):
    vocab = list(dict.fromkeys(SPECIALS + [p for k, p in enumerate(pieces) for p in ([p] if k % 2 else ["##" + p])]))
    norm = dict(lowercase=lowercase, strip_accents=strip_accents, clean_text=clean_text)
    tok = small(vocab, handle_chinese_chars=chinese, max_input_chars_per_word=max_chars, **norm)
    expected = ref.encode(text, vocab, specials=SPECIALS, max_chars=max_chars, handle_chinese_chars=chinese, **norm)
    enc = tok.encode(text)
    assert list(zip(enc.ids.tolist(), enc.offsets[:, 0].tolist(), enc.offsets[:, 1].tolist())) == expected


def test_pieces_equal_the_framework_text_stages():
    # the code point map reproduces tokembed.text's normalizers and the `bert` pre-tokenizer
    from tokembed.text import split_text

    cmap = char_map(True, True, True, True)
    texts = sample_corpus(5000) + ["Crème Brûlée! 東京, İstanbul\u00a0and ﬁne ⑴ \u1e9b\u0323 한국어"]
    got = "".join(_train.normalized_chunks(texts, cmap)).split()
    expected = [p for t in texts for p, _ in split_text(t, ["bert_clean", "strip_accents", "lowercase"], "bert")]
    assert got == expected
    # in small chunks (long documents cut at spaces), the same pieces
    assert "".join(_train.normalized_chunks(texts, cmap, chunk_chars=50)).split() == expected
    with pytest.raises(CorpusError, match="got int at index 5000"):
        list(_train.normalized_chunks(["a"] * 5000 + [3], cmap))


# -- training -------------------------------------------------------------------------------------------------------
TRAIN_TEXT = [
    "the unhappy unicorn was unable to hug the huge hungry hippo",
    "hugging huggable huge things: unbelievable, undeniable, unforgettable!",
    "The hippos hum. Unicorns hug. Hugs and hums and hippo hugs.",
]


@pytest.mark.parametrize("scoring", ["likelihood", "frequency"])
def test_training_agrees_with_the_reference_merge_for_merge(scoring):
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab, merges = ref.train(TRAIN_TEXT, 140, specials, scoring=scoring)
    cmap = char_map(True, True, True, True)
    cps, off, counts = _train.count_words(TRAIN_TEXT, cmap, True)
    learned = _train.learn_vocabulary(cps, off, counts, specials=specials, vocab_size=140, min_frequency=0,
                                      limit_alphabet=None, prefix="##", scoring=scoring)
    assert len(merges) > 60
    assert learned.merges[:len(merges)] == merges
    assert learned.vocab == vocab
    tok = WordPieceTokenizer(vocab_size=140, scoring=scoring, min_frequency=0, show_progress=False).fit(TRAIN_TEXT)
    assert tok._itos.tolist() == vocab


def test_likelihood_merges_by_score_not_count():
    # words: "ab" x 3, "xy" x 1 -> symbols a, ##b (3 each), x, ##y (1 each)
    # likelihood: (a,##b) 3 / (3 * 3) = 1/3 < (x,##y) 1 / (1 * 1) = 1: "xy" first; frequency: "ab" first
    docs = ["ab ab ab xy"]
    lik = WordPieceTokenizer(vocab_size=8, special_tokens=(), unk_token=None, pad_token=None, min_frequency=0,
                             show_progress=False).fit(docs)
    freq = WordPieceTokenizer(vocab_size=8, special_tokens=(), unk_token=None, pad_token=None, min_frequency=0,
                              scoring="frequency", show_progress=False).fit(docs)
    base = ["a", "b", "x", "y", "##b", "##y"]  # every character has an initial form, "##" forms where seen
    assert lik._itos.tolist() == base + ["xy", "ab"]
    assert freq._itos.tolist() == base + ["ab", "xy"]
    # no pair left: 8 entries, fewer than asked
    assert len(WordPieceTokenizer(vocab_size=20, min_frequency=0, show_progress=False).fit(docs).get_vocab()) == 13
    # the default min_frequency 2 leaves "xy" (seen once) alone
    assert "xy" not in WordPieceTokenizer(vocab_size=20, show_progress=False).fit(docs).get_vocab()


def test_min_frequency_limit_alphabet_and_prefix():
    tok = WordPieceTokenizer(vocab_size=100, min_frequency=3, show_progress=False).fit(["ab ab ab cd cd"])
    assert "ab" in tok.get_vocab() and "cd" not in tok.get_vocab()
    tok = WordPieceTokenizer(vocab_size=100, limit_alphabet=2, special_tokens=(), unk_token=None, pad_token=None,
                             show_progress=False).fit(["aaab aaa aab c"])
    assert sorted(t for t in tok.get_vocab() if len(t.lstrip("#")) == 1) == ["##a", "##b", "a", "b"]
    tok = WordPieceTokenizer(vocab_size=100, continuing_subword_prefix="@@", show_progress=False).fit(["abab abab"])
    assert "@@b" in tok.get_vocab() and tok.encode("abab").tokens[0] == "abab"


def test_training_is_independent_of_document_order():
    docs = sample_corpus(8000)
    a = WordPieceTokenizer(vocab_size=400, show_progress=False).fit(docs)
    b = WordPieceTokenizer(vocab_size=400, show_progress=False).fit(docs[::-1])
    assert a.get_vocab() == b.get_vocab()


def test_empty_corpus_and_bad_documents():
    with pytest.raises(CorpusError, match="no word"):
        WordPieceTokenizer(show_progress=False).fit(["", "  \n"])
    with pytest.raises(CorpusError, match="must be str"):
        WordPieceTokenizer(show_progress=False).fit(["ok", b"bytes"])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs=st.lists(st.text(alphabet="abcABCéÉ中文.,! ", min_size=1, max_size=30), min_size=1, max_size=6),
       size=st.integers(20, 120))
def test_cased_roundtrip_of_the_training_words(docs, size):
    # every character of the texts is in the vocabulary, in the forms the texts use, so joining each word's tokens
    # (prefix removed) gives back the pre-tokenized words
    tok = WordPieceTokenizer(vocab_size=size, lowercase=False, unk_token=None, show_progress=False)
    try:
        tok.fit(docs)
    except CorpusError:
        return  # only spaces
    for doc in docs:
        enc = tok.encode(doc)
        words = ref.basic_pieces(doc, lowercase=False)
        joined: list[str] = []
        for t in enc.tokens:
            if t.startswith("##"):
                joined[-1] += t[2:]
            else:
                joined.append(t)
        assert joined == [w for w, _ in words]


# -- parameters -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("params, message", [
    ({"vocab_size": 0}, "vocab_size must be an int >= 1, got 0"),
    ({"scoring": "count"}, "scoring must be one of 'likelihood', 'frequency', got 'count'"),
    ({"min_frequency": -1}, "min_frequency must be an int >= 0, got -1"),
    ({"lowercase": "yes"}, "lowercase must be true or false, got 'yes'"),
    ({"strip_accents": 1}, "strip_accents must be true or false or null, got 1 (use true/false: true where gensim "
                           "takes 1)"),
    ({"max_input_chars_per_word": 0}, "max_input_chars_per_word must be an int >= 1, got 0"),
    ({"special_tokens": "[CLS]"}, "special_tokens must be a list, each a non-empty str, got '[CLS]'"),
    ({"vocab": {"path": "x"}}, "vocab must be a path or {dataset: NAME} or null, got {'path': 'x'}"),
    ({"unk_token": ""}, "unk_token must be a non-empty str or null, got ''"),
    ({"continuing_subword_prefix": None}, "continuing_subword_prefix must be a str, got None"),
    ({"show_progress": None}, "show_progress must be true or false, got None"),
])
def test_invalid_parameters(params, message):
    with pytest.raises(TokembedError) as info:
        WordPieceTokenizer(**{"show_progress": False, **params}).fit(["a b"])
    assert str(info.value) == f"wordpiece: {message}"


def test_validate_reports_every_bad_parameter_not_only_the_first(tmp_path):
    # as `tokembed validate` calls it: every declaration, then the vocab file of the valid values (read at validate)
    missing = str(tmp_path / "missing.txt")
    assert WordPieceTokenizer.check_params({"vocab_size": 2.5, "clean_text": 0, "vocab": missing}) == [
        ("vocab_size", "wordpiece: vocab_size must be an int >= 1, got 2.5"),
        ("clean_text", "wordpiece: clean_text must be true or false, got 0 (use true/false: false where gensim "
                       "takes 0)"),
        ("vocab", f"wordpiece: vocab: {missing}: cannot read: no such file"),
    ]


def test_expected_special_ids():
    assert WordPieceTokenizer.expected_special_ids({}) == {t: i for i, t in enumerate(SPECIALS)}
    assert WordPieceTokenizer.expected_special_ids({"pad_token": None, "special_tokens": ["<s>"]}) == {
        "[UNK]": 0, "<s>": 1}
    assert WordPieceTokenizer.expected_special_ids({"vocab": str(VOCAB)}) == {
        "[PAD]": 0, "[UNK]": 100, "[CLS]": 101, "[SEP]": 102, "[MASK]": 103}
    assert WordPieceTokenizer.expected_special_ids({"vocab": "/no/such/vocab.txt"}) == {}
    tok = WordPieceTokenizer(vocab_size=200, show_progress=False).fit(sample_corpus(3000))
    assert {t: tok.token_to_id(t) for t in SPECIALS} == WordPieceTokenizer.expected_special_ids({})


def test_contract():
    check_component(WordPieceTokenizer)


# -- files --------------------------------------------------------------------------------------------------------
def test_vocab_txt_rules(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_bytes("[PAD]\r\n[UNK]\na\u2028b\n x \n##c".encode())
    tok = WordPieceTokenizer.from_vocab_file(path, special_tokens=["[PAD]", "[UNK]"], lowercase=False)
    # split on "\n" only, one trailing "\r" removed, U+2028 inside a token, spaces kept, last line without "\n"
    assert tok._itos.tolist() == ["[PAD]", "[UNK]", "a\u2028b", " x ", "##c"]
    path.write_text("a\nb\nc\nb\n", encoding="utf-8")
    with pytest.raises(ArtifactError, match=r"line 4 repeats the token 'b' of line 2"):
        WordPieceTokenizer.from_vocab_file(path)
    with pytest.raises(ArtifactError, match="cannot read"):
        WordPieceTokenizer.from_vocab_file(tmp_path / "missing.txt")
    path.write_bytes(b"a\n\xff\n")
    with pytest.raises(ArtifactError, match="line 2 is not UTF-8"):
        WordPieceTokenizer.from_vocab_file(path)


def test_vocab_txt_roundtrip_and_missing_specials(tmp_path, bert):
    path = tmp_path / "out.txt"
    bert.to_vocab_file(path)
    assert path.read_bytes() == VOCAB.read_bytes()
    path.write_text("a\n##b\n", encoding="utf-8")
    tok = WordPieceTokenizer.from_vocab_file(path)
    assert tok._itos.tolist() == ["a", "##b", "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]  # specials appended
    assert WordPieceTokenizer.expected_special_ids({"vocab": str(path)}) == {
        "[PAD]": 2, "[UNK]": 3, "[CLS]": 4, "[SEP]": 5, "[MASK]": 6}
    trained = WordPieceTokenizer(vocab_size=50, show_progress=False).fit(["line\nbreak"])
    trained._set_vocab(trained._itos.tolist() + ["bad\ntoken"], trained.special_tokens_)
    with pytest.raises(TokembedError, match="line break"):
        trained.to_vocab_file(path)


def test_save_load_keeps_a_loaded_vocabulary(tmp_path, bert):
    bert.save(tmp_path / "bert.tokembed.json")
    loaded = WordPieceTokenizer.load(tmp_path / "bert.tokembed.json")
    assert loaded.get_vocab() == bert.get_vocab()
    assert loaded.encode("Hello there").ids.tolist() == bert.encode("Hello there").ids.tolist()
    art = json.loads((tmp_path / "bert.tokembed.json").read_text(encoding="utf-8"))
    assert art["params"]["vocab"] == str(VOCAB) and len(art["state"]["vocab"]) == 30522


def test_recipe_preset_loads_the_bert_vocabulary(monkeypatch, tmp_path):
    import tokembed.datasets
    from tokembed.recipe import load_recipe_string

    monkeypatch.setattr(tokembed.datasets, "dataset_path", lambda name: VOCAB if name == "bert_uncased_vocab"
                        else pytest.fail(name))
    text = """
corpus: {builtin: moby-dick}
tokenizers:
  bert: {preset: bert-wordpiece, vocab: {dataset: bert_uncased_vocab}}
  local: {preset: bert-wordpiece, vocab: %s}
output: %s
""" % (json.dumps(str(VOCAB)), json.dumps(str(tmp_path)))
    recipe = load_recipe_string(text)
    for label in ("bert", "local"):
        tok = recipe.build(f"tokenizers.{label}").fit(["ignored"])
        assert tok.get_vocab_size() == 30522
        assert tok.encode("Hello world!").ids.tolist() == [101, 7592, 2088, 999, 102]


def test_hf_json_errors_and_vocab_param(tmp_path, bert):
    path = tmp_path / "tokenizer.json"
    bert.to_hf_json(path)
    tok = WordPieceTokenizer(vocab=str(path), show_progress=False).fit([])  # a .json vocab is a tokenizer.json
    assert tok.get_vocab() == bert.get_vocab()
    data = json.loads(path.read_text(encoding="utf-8"))
    for change, match in [({"model": {"type": "BPE", "vocab": {}, "merges": []}}, "not a WordPiece"),
                          ({"model": {"type": "WordPiece", "vocab": {}}}, "lacks 'continuing_subword_prefix'"),
                          ({"model": None}, "no \"model\" object"),
                          ({"normalizer": {"type": "NFKC"}}, "normalizer 'NFKC'"),
                          ({"pre_tokenizer": {"type": "Whitespace"}}, "pre-tokenizer 'Whitespace'"),
                          ({"post_processor": {"type": "RobertaProcessing"}}, "RobertaProcessing")]:
        path.write_text(json.dumps({**data, **change}), encoding="utf-8")
        with pytest.raises(ArtifactError, match=match):
            WordPieceTokenizer.from_hf_json(path)
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(ArtifactError, match="not JSON"):
        WordPieceTokenizer.from_hf_json(path)


def test_degenerate_input():
    # large enough that a quadratic longest-match would stall the suite; speed is left to the benchmarks
    tok = WordPieceTokenizer.from_vocab_file(VOCAB, max_input_chars_per_word=10**7)
    for text in ("a" * 10**6, "ab" * 500_000, "\u00e9" * 10**6):
        assert len(tok.encode(text)) == 500_000  # "aa" / "ab" repeated: "aa"/"ab" then "##aa"/"##ab" ...
    trained = WordPieceTokenizer(vocab_size=300, min_frequency=0, show_progress=False).fit(["x" * 300_000])
    assert "x" * 256 in trained.get_vocab()  # doubling merges: x, xx, ..., 2**k characters


def test_warmup_runs():
    WordPieceTokenizer.warmup()


def test_vocab_file_byte_order_mark_is_not_part_of_the_first_token(tmp_path):
    from tokembed.plugins.wordpiece.tokenizer import WordPieceTokenizer

    path = tmp_path / "vocab.txt"
    path.write_bytes(b"\xef\xbb\xbf[PAD]\n[UNK]\nhello\n")
    tok = WordPieceTokenizer.from_vocab_file(path)
    assert tok.token_to_id("[PAD]") == 0 and tok.token_to_id("[UNK]") == 1 and tok.token_to_id("hello") == 2


def test_a_vocabulary_of_another_size_than_asked_is_a_warning():
    from tokembed.errors import VocabularySizeWarning

    # "hello world": 5 specials + the 7 characters h e l o w r d (the alphabet holds each character in word-initial
    # form) + ##e ##l ##o ##r ##d (those seen after a word's start) = 17 entries before any merge
    with pytest.warns(VocabularySizeWarning, match="alone exceed vocab_size=1; the vocabulary has 17 entries"):
        tok = WordPieceTokenizer(vocab_size=1, show_progress=False).fit(["hello world"])
    assert tok.get_vocab_size() == 17
    # two words: merging runs out of pairs once both are whole (17 + 4 merges for "hello" + 4 for "world" = 25)
    with pytest.warns(VocabularySizeWarning, match="has 25 entries, not the vocab_size=1000 asked for"):
        tok = WordPieceTokenizer(vocab_size=1000, min_frequency=1, show_progress=False).fit(["hello world"])
    assert tok.get_vocab_size() == 25 and {"hello", "world"} <= set(tok.get_vocab())
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", VocabularySizeWarning)
        assert WordPieceTokenizer(vocab_size=20, min_frequency=1, show_progress=False).fit(
            ["hello world"]).get_vocab_size() == 20
