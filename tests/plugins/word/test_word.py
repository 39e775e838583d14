"""Word tokenizer: vocabulary order, offsets into the original text, and parity with Hugging Face WordLevel."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from tokembed.corpus import Corpus
from tokembed.errors import ArtifactError, CorpusError, NotFittedError, TokembedError
from tokembed.plugins.word.tokenizer import WordTokenizer, count_words
from tokembed.text import build_normalizer, build_pre_tokenizer


@pytest.fixture(scope="module")
def moby_lines() -> list[str]:
    return list(Corpus.builtin("moby-dick"))


def test_vocabulary_order_by_count_then_code_points():
    # counts: "the" 3, "cat" 2, "." 2, "a" 1, "dog" 1 (word_punct splits "cat." into "cat", ".")
    # ids: <pad> 0, <unk> 1, then by count descending, ties by code-point order of the word:
    #      the (3), "." (2) before "cat" (2) since "." < "c", then "a" (1) before "dog" (1)
    tok = WordTokenizer().fit(["the cat.", "the dog the cat.", "a"])
    assert tok.get_vocab() == {"<pad>": 0, "<unk>": 1, "the": 2, ".": 3, "cat": 4, "a": 5, "dog": 6}
    assert tok.word_counts_ == {"the": 3, ".": 2, "cat": 2, "a": 1, "dog": 1}


def test_min_frequency_and_vocab_size_cap():
    docs = ["the cat.", "the dog the cat.", "a"]
    assert list(WordTokenizer(min_frequency=2).fit(docs).get_vocab()) == ["<pad>", "<unk>", "the", ".", "cat"]
    # vocab_size counts the two specials: 4 leaves room for "the" and "."
    assert list(WordTokenizer(vocab_size=4).fit(docs).get_vocab()) == ["<pad>", "<unk>", "the", "."]


def test_encode_offsets_unk_and_decode():
    tok = WordTokenizer().fit(["Call me Ishmael."])
    enc = tok.encode("Call  me Queequeg.")
    assert enc.tokens == ["Call", "me", "<unk>", "."]
    assert enc.offsets.tolist() == [[0, 4], [6, 8], [9, 17], [17, 18]]
    assert enc.ids.dtype == np.int32 and enc.offsets.dtype == np.int64
    # word level joins with one space: the double space is not recoverable
    assert tok.decode(enc.ids) == "Call me <unk> ."
    assert tok.decode(enc.ids, skip_special_tokens=True) == "Call me ."


def test_offsets_point_into_the_original_text_after_nfkc_and_lowercase():
    tok = WordTokenizer(normalizer=["nfkc", "lowercase"]).fit(["hello world"])
    text = "\uff28ELLO \ufb01x"  # fullwidth H; the "fi" ligature becomes two characters under NFKC
    enc = tok.encode(text)
    assert enc.tokens == ["hello", "<unk>"]
    # "ﬁx" is 2 code points in the original: (6, 8), though it normalizes to 3 ("fix")
    assert enc.offsets.tolist() == [[0, 5], [6, 8]]


def test_vocabulary_and_ids_equal_hugging_face_word_level(moby_lines):
    tokenizers = pytest.importorskip("tokenizers")
    hf = tokenizers.Tokenizer(tokenizers.models.WordLevel(unk_token="<unk>"))
    hf.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    trainer = tokenizers.trainers.WordLevelTrainer(special_tokens=["<pad>", "<unk>"], min_frequency=2)
    hf.train_from_iterator(moby_lines, trainer)
    ours = WordTokenizer(min_frequency=2).fit(moby_lines)
    assert ours.get_vocab() == hf.get_vocab()
    for line in moby_lines[:2000]:
        assert ours.encode(line).ids.tolist() == hf.encode(line).ids


def test_partial_counts_merge_to_the_whole(moby_lines):
    norm, pre = build_normalizer(None), build_pre_tokenizer("word_punct")
    whole = count_words(moby_lines, norm, pre)
    parts = Counter()
    for i in range(0, len(moby_lines), 5000):
        parts.update(count_words(moby_lines[i:i + 5000], norm, pre))
    assert parts == whole
    assert whole["the"] > 10000


def test_save_load_round_trip(tmp_path, moby_lines):
    tok = WordTokenizer(min_frequency=3, normalizer="lowercase").fit(moby_lines[:3000])
    path = tok.save(tmp_path / "w.tokembed.json")
    back = WordTokenizer.load(path)
    assert back.get_vocab() == tok.get_vocab()
    for line in moby_lines[3000:3100]:
        assert back.encode(line) == tok.encode(line)
    path.write_text(path.read_text()[:100])
    with pytest.raises(ArtifactError):
        WordTokenizer.load(path)


def test_errors():
    with pytest.raises(NotFittedError):
        WordTokenizer().encode("x")
    with pytest.raises(CorpusError):
        WordTokenizer().fit(["", "   ", "\n"])
    with pytest.raises(TokembedError, match="min_frequency"):
        WordTokenizer(min_frequency=0).fit(["a"])
    with pytest.raises(TokembedError, match="pre_tokenizer|pre-tokenizer"):
        WordTokenizer(pre_tokenizer="no-such-split").fit(["a"])
    tok = WordTokenizer(unk_token=None, pad_token=None).fit(["a b"])
    with pytest.raises(TokembedError, match="not in the vocabulary"):
        tok.encode("a c")
    with pytest.raises(TokembedError, match="outside the vocabulary"):
        tok.decode([5])


# -- a special token that is also a word of the corpus --------------------------------------------------------------
def test_a_word_that_spells_a_special_token_is_plain_text_and_fit_warns():
    from tokembed.errors import SpecialTokenInCorpusWarning

    docs = ["the <pad> cat <unk>", "the bread"]
    with pytest.warns(SpecialTokenInCorpusWarning) as caught:
        tok = WordTokenizer(pre_tokenizer="whitespace_split", special_tokens=["bread"]).fit(docs)
    # "<unk>" is left out of the warning: as text it encodes as unk_token, which loses nothing
    assert len(caught) == 1 and str(caught[0].message).startswith(
        "word: the special tokens '<pad>' (seen 1 time), 'bread' (seen 1 time) are also words of the corpus, with "
        "no id of their own")
    assert tok.get_vocab() == {"<pad>": 0, "<unk>": 1, "bread": 2, "the": 3, "cat": 4}
    enc = tok.encode("the <pad> bread <unk>")
    assert enc.ids.tolist() == [3, 1, 1, 1]  # never the special tokens' ids 0 and 2 from plain text
    assert enc.tokens == ["the", "<unk>", "<unk>", "<unk>"]
    assert tok.encode("the <pad> bread", allowed_special="all").ids.tolist() == [3, 0, 2]


def test_without_unk_a_word_spelling_a_special_token_is_an_error():
    with pytest.warns(UserWarning, match="encoding this word raises"):
        tok = WordTokenizer(special_tokens=["bread"], unk_token=None).fit(["banana bread"])
    assert tok.encode("banana").ids.tolist() == [2]
    with pytest.raises(TokembedError, match=r"^word: 'bread' at \(7, 12\) spells a special token \(plain text unless "
                                            r"allowed_special lists it\) and there is no unk_token$"):
        tok.encode("banana bread")
    with pytest.raises(TokembedError, match="'x' at .* is not in the vocabulary"):
        tok.encode("x")


def test_vocab_size_below_the_special_tokens_names_them():
    assert WordTokenizer.check_params({"vocab_size": 2, "special_tokens": ["<s>"]}) == [(
        "vocab_size",
        "word: vocab_size=2 is smaller than the 3 special tokens ('<pad>' (pad_token), '<unk>' (unk_token), "
        "'<s>' (special_tokens)); raise vocab_size, or set unused ones to null")]


def test_validate_reports_every_bad_parameter_not_only_the_first():
    # as `tokembed validate` calls it: the shared vocabulary parameters and the text stages, each at its parameter;
    # a stage's own message follows the rule
    assert WordTokenizer.check_params({"min_frequency": 0, "normalizer": "nfcc", "pre_tokenizer": 3}) == [
        ("min_frequency", "word: min_frequency must be an int >= 1, got 0"),
        ("normalizer", "word: normalizer must be a normalizer spec or null, got 'nfcc': unknown normalizer 'nfcc'. "
                       "Did you mean 'nfc'? Available: bert_clean, identity, lowercase, nfc, nfd, nfkc, nfkd, "
                       "sequence, strip_accents"),
        ("pre_tokenizer", "word: pre_tokenizer must be a pre-tokenizer spec or null, got 3: a pre-tokenizer spec must "
                          "be a name or a mapping with 'type', got 3"),
    ]


def test_no_word_reaching_min_frequency_is_a_warning():
    from tokembed.errors import VocabularySizeWarning

    # "hello" and "world" occur once each: none reaches 3, the vocabulary is the 2 specials (<pad>, <unk>)
    with pytest.warns(VocabularySizeWarning, match="no word occurs at least min_frequency=3 times \\(the most "
                                                   "frequent: 1\\)"):
        tok = WordTokenizer(min_frequency=3).fit(["hello world"])
    assert tok.get_vocab_size() == 2


def test_encode_ids_equals_the_ids_of_encode_batch():
    import gzip
    from importlib import resources

    text = gzip.decompress((resources.files("tokembed") / "samples" / "moby-dick.txt.gz").read_bytes()).decode()
    lines = text.splitlines()[:3000]
    tok = WordTokenizer(min_frequency=3).fit(lines)
    extra = ["", "   ", "<unk> <pad> typed as text", "Ünïcödé café 日本語 🐳", "a" * 5000]
    docs = lines + extra
    ids, lengths = tok.encode_ids(docs)
    expected = [e.ids.tolist() for e in tok.encode_batch(docs, add_special_tokens=False)]
    assert lengths.tolist() == [len(e) for e in expected]
    assert ids.tolist() == [i for e in expected for i in e]
    strict = WordTokenizer(unk_token=None).fit(["the whale"])
    with pytest.raises(TokembedError, match=r"'sea' at \(4, 7\) is not in the vocabulary and there is no unk_token"):
        strict.encode_ids(["the sea"])


_HARD = ["", "  \t\n ", "The Whale's hump, 12 harpoons!", "İstanbul ﬁne ①② ＡＢＣ Crème Brûlée", "日本語のテキスト。",
         "👩‍👩‍👧 e\u0301 \ud800 lone", "ctrl\x00\x85 zero\u200bwidth", "a" * 70_000 + " tail"]


@pytest.mark.parametrize("pre_tokenizer", ["word_punct", "whitespace_split", "bert", "gpt2", "sklearn", "identity"])
@pytest.mark.parametrize("normalizer", [None, ["nfkc", "lowercase"], ["bert_clean", "nfd", "strip_accents",
                                                                      "lowercase"]], ids=str)
def test_the_numba_path_equals_the_python_path(monkeypatch, moby_lines, pre_tokenizer, normalizer):
    from tokembed.text import fast

    if not fast.is_enabled():
        pytest.skip("numba is not importable or TOKEMBED_PURE_PYTHON=1")
    docs = moby_lines[:2000] + _HARD
    # whole lines ("identity") are seldom seen twice: keep them all
    tok = WordTokenizer(min_frequency=1 if pre_tokenizer == "identity" else 2, pre_tokenizer=pre_tokenizer,
                        normalizer=normalizer).fit(moby_lines[:1000])
    numba_packed = tok.encode_ids(docs, spans=True)
    numba_batch = tok.encode_batch(docs, add_special_tokens=False)
    monkeypatch.setenv("TOKEMBED_PURE_PYTHON", "1")  # split_text and a dict lookup, text by text
    python_packed = tok.encode_ids(docs, spans=True)
    python_batch = tok.encode_batch(docs, add_special_tokens=False)
    for a, b in zip(numba_packed, python_packed):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    assert numba_batch == python_batch  # ids, tokens, offsets and masks, text by text
    assert numba_batch == [tok._encode_text(d) for d in docs]
