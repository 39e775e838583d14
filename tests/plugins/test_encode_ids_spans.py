"""``encode_ids(texts, spans=True)`` of every built-in tokenizer equals ``encode_batch(texts, add_special_tokens=False)``
exactly (ids, tokens per text, offsets into the ORIGINAL texts), on hard text and on random Unicode.

The packed path is each plugin's own (kernel arrays, no Encoding per text); encode_batch is the path the rest of the
suite checks against the reference libraries, so equality here carries that parity over to the packed arrays.
"""

from __future__ import annotations

import functools
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokembed.testing import sample_corpus

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

_WORDS = "the whale's white hump, Ahab cried; 12 harpoons - naïve Ünïcödé 日本語 🐳".split()
#: A line of 80,773 characters: longer than a chunk of ``map_text_chunks`` (64K), so it is a chunk alone.
LONG_LINE = " ".join(_WORDS[i % len(_WORDS)] for i in range(15_000))

#: Text that breaks naive offset arithmetic: empty and whitespace-only texts, CJK, emoji sequences, combining marks,
#: lone surrogates (and a surrogate pair left in a str), characters no vocabulary has, controls, and characters that
#: the normalizers lengthen or shorten (NFKC ﬁ -> fi and ① -> 1, lowercase İ -> i + U+0307, accents stripped).
HARD_TEXTS = [
    "",
    " ",
    "  \t\n\r\n  ",
    "\u3000\u00a0\u2003\u2028",
    "日本語のテキストと中文文本，한국어 텍스트。",
    "👩‍👩‍👧‍👦 family, 👍🏽 thumbs, 🏳️‍🌈 flag, 1️⃣ keycap",
    "e\u0301 vs é, a\u0308\u0304, Z\u0351\u0315a\u0300l\u0362go",
    "lone \ud800 high, \udfff low, a pair \ud83d\ude00 left in the str",
    "İstanbul ΣΊΣΥΦΟΣ ﬁne ①②③ ＡＢＣ ｶﾀｶﾅ x\ufe30y Crème Brûlée ǅemal ß",
    "unknown: \U0010fffd \U000e0001 ꙮ 𓀀 \U0001fbf9",
    "ctrl\x00\x01\x07\x7f\x85 zero\u200bwidth\u200djoiner \ufeffBOM \ufffd",
    "it's they're we've I'm you'll he'd 'quoted' ''",
    "digits ١٢٣ ४५६ 789 ½ ² 3.14 1,000,000",
    "a" * 300,
]


def test_the_long_line_is_longer_than_a_chunk():
    assert len(LONG_LINE) > 1 << 16


def _texts() -> list[str]:
    # sample paragraphs around the hard texts and the long line, so the batch spans several chunks
    paragraphs = sample_corpus()
    return paragraphs[:10] + HARD_TEXTS + [LONG_LINE] + paragraphs[10:] + HARD_TEXTS[::-1]


def _fit(tok, corpus=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tok.fit(corpus if corpus is not None else sample_corpus() + HARD_TEXTS)


def _no_nul() -> list[str]:
    return [t.replace("\x00", "") for t in sample_corpus() + HARD_TEXTS]


@functools.lru_cache(maxsize=None)
def _tokenizer(key: str):
    from tokembed.plugins.bpe.tokenizer import BPETokenizer
    from tokembed.plugins.char.tokenizer import CharTokenizer
    from tokembed.plugins.unigram import UnigramTokenizer
    from tokembed.plugins.word.tokenizer import WordTokenizer
    from tokembed.plugins.wordpiece.tokenizer import WordPieceTokenizer

    builders = {
        "char": lambda: _fit(CharTokenizer(min_frequency=2)),  # characters seen once are unknown
        "word": lambda: _fit(WordTokenizer(min_frequency=2)),
        "word-nfkc-lowercase": lambda: _fit(WordTokenizer(normalizer=["nfkc", "lowercase"])),
        "word-bert-strip-accents": lambda: _fit(WordTokenizer(normalizer=["bert_clean", "nfd", "strip_accents",
                                                                          "lowercase"], pre_tokenizer="bert")),
        "word-gpt2": lambda: _fit(WordTokenizer(pre_tokenizer="gpt2", min_frequency=2)),
        "word-regex": lambda: _fit(WordTokenizer(pre_tokenizer={"type": "regex", "pattern": r"\w+"})),
        "bpe-eow-nfkc-lowercase": lambda: _fit(BPETokenizer(vocab_size=400, end_of_word_suffix="</w>",
                                                            normalizer=["nfkc", "lowercase"])),
        "bpe-byte-level": lambda: _fit(BPETokenizer(vocab_size=400, byte_level=True, unk_token=None)),
        "gpt2": lambda: BPETokenizer.from_tiktoken(FIXTURES / "gpt2.tiktoken"),
        "bert": lambda: WordPieceTokenizer.from_vocab_file(FIXTURES / "bert-base-uncased-vocab.txt"),
        "wordpiece": lambda: _fit(WordPieceTokenizer(vocab_size=300, show_progress=False)),
        # trained without the NUL of HARD_TEXTS: a U+0000 in the corpus becomes a piece the model refuses
        "unigram": lambda: _fit(UnigramTokenizer(vocab_size=300, character_coverage=1.0), _no_nul()),
        "unigram-byte-fallback": lambda: _fit(UnigramTokenizer(vocab_size=600, byte_fallback=True,
                                                                    character_coverage=0.99), _no_nul()),
    }
    return builders[key]()


TOKENIZERS = ["char", "word", "word-nfkc-lowercase", "word-bert-strip-accents", "word-gpt2", "word-regex",
              "bpe-eow-nfkc-lowercase", "bpe-byte-level", "gpt2", "bert", "wordpiece", "unigram",
              "unigram-byte-fallback"]


def assert_packed_equals_batch(tok, texts, **kwargs) -> None:
    """``encode_ids(texts, spans=True)`` against ``encode_batch(texts, add_special_tokens=False)``: dtypes, shapes
    and every value; ``spans=False`` gives the same ids and lengths."""
    ids, lengths, spans = tok.encode_ids(texts, spans=True, **kwargs)
    assert ids.dtype == np.int32 and ids.shape == (ids.shape[0],)
    assert lengths.dtype == np.int64 and lengths.shape == (len(texts),)
    assert spans.dtype == np.int64 and spans.shape == (ids.shape[0], 2)
    encodings = tok.encode_batch(texts, add_special_tokens=False)
    assert lengths.tolist() == [len(e) for e in encodings]
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    for t, enc in enumerate(encodings):
        lo, hi = bounds[t], bounds[t + 1]
        assert ids[lo:hi].tolist() == enc.ids.tolist(), f"ids of text {t} ({texts[t][:40]!r})"
        assert spans[lo:hi].tolist() == np.asarray(enc.offsets).reshape(-1, 2).tolist(), \
            f"spans of text {t} ({texts[t][:40]!r})"
    ids2, lengths2 = tok.encode_ids(texts, **kwargs)
    assert np.array_equal(ids2, ids) and np.array_equal(lengths2, lengths)


@pytest.mark.parametrize("key", TOKENIZERS)
def test_packed_ids_and_spans_equal_encode_batch_on_hard_text(key):
    tok = _tokenizer(key)
    texts = _texts()
    assert_packed_equals_batch(tok, texts)
    ids, _, spans = tok.encode_ids(texts, spans=True)
    if key.startswith("char"):  # offsets of the char tokenizer by hand: one token per code point, (j, j + 1)
        assert spans[:5].tolist() == [[0, 1], [1, 2], [2, 3], [3, 4], [4, 5]]
        assert ids.shape[0] == sum(map(len, texts))


@pytest.mark.parametrize("key", ["word", "word-nfkc-lowercase", "bpe-eow-nfkc-lowercase", "gpt2", "bert",
                                 "unigram"])
def test_threads_give_the_same_arrays(key):
    tok = _tokenizer(key)
    texts = _texts() * 12  # 1.2 million characters: several chunks of every plugin (BPE's are 2**20)
    one = tok.encode_ids(texts, spans=True)
    two = tok.encode_ids(texts, spans=True, num_workers=2)
    for a, b in zip(one, two):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("key", ["word", "word-bert-strip-accents", "bert", "char"])
def test_a_text_longer_than_a_million_characters(key):
    # WordPiece cuts a text of more than 2**20 code points into parts at spaces; the word and char paths take it
    # whole: every path must put the tokens back into the one text
    big = " ".join([LONG_LINE] * 17)
    assert len(big) > 1 << 20
    assert_packed_equals_batch(_tokenizer(key), ["before", big, "after \u0130"])


@pytest.mark.parametrize("key", TOKENIZERS)
def test_no_text_and_only_empty_texts(key):
    tok = _tokenizer(key)
    ids, lengths, spans = tok.encode_ids([], spans=True)
    assert ids.shape == (0,) and lengths.shape == (0,) and spans.shape == (0, 2)
    assert ids.dtype == np.int32 and lengths.dtype == np.int64 and spans.dtype == np.int64
    ids, lengths, spans = tok.encode_ids(["", ""], spans=True)
    assert lengths.tolist() == [len(e) for e in tok.encode_batch(["", ""], add_special_tokens=False)]


@pytest.mark.parametrize("key", ["char", "word", "gpt2", "bert", "unigram"])
def test_bad_input_is_refused_as_encode_batch_refuses_it(key):
    tok = _tokenizer(key)
    with pytest.raises(TypeError, match="not one str"):
        tok.encode_ids("one text", spans=True)
    with pytest.raises(TypeError, match="text 1"):
        tok.encode_ids(["fine", b"bytes"], spans=True)


def test_unknown_without_unk_token_names_the_first_one():
    from tokembed.errors import TokembedError
    from tokembed.plugins.char.tokenizer import CharTokenizer
    from tokembed.plugins.word.tokenizer import WordTokenizer

    char = CharTokenizer(unk_token=None).fit(["abc"])
    # "d" is the 2nd character (position 1) of text 1
    with pytest.raises(TokembedError, match=r"'d' \(U\+0064\) at position 1 of text 1 is not in the vocabulary"):
        char.encode_ids(["abc", "ad", "x"], spans=True)
    from tokembed.errors import SpecialTokenInCorpusWarning

    with pytest.warns(SpecialTokenInCorpusWarning, match="'<pad>'"):
        word = WordTokenizer(unk_token=None, normalizer="lowercase", pre_tokenizer="whitespace_split").fit(
            ["the whale <pad>"])
    # the same message as encode: the normalized word and its span in the original text ("SEA" is at 10..13)
    with pytest.raises(TokembedError, match=r"'sea' at \(10, 13\) is not in the vocabulary and there is no "
                                            "unk_token"):
        word.encode_ids(["The whale", "the WHALE SEA"], spans=True)
    with pytest.raises(TokembedError, match=r"'sea' at \(10, 13\) is not in the vocabulary"):
        word.encode("the WHALE SEA")
    with pytest.raises(TokembedError, match=r"'<pad>' at \(0, 5\) spells a special token"):
        word.encode_ids(["<pad>"])


_CHARS = st.one_of(st.characters(), st.sampled_from(" \t\n\u3000\u0301\u0130ﬁ①"), st.integers(0xD800, 0xDFFF).map(chr))


@pytest.mark.parametrize("key", ["char", "word-nfkc-lowercase", "word-bert-strip-accents", "gpt2", "bert",
                                 "bpe-eow-nfkc-lowercase", "unigram-byte-fallback"])
@settings(deadline=None, max_examples=60)
@given(texts=st.lists(st.text(_CHARS, max_size=40), max_size=6))
def test_property_packed_equals_batch_on_random_unicode(key, texts):
    assert_packed_equals_batch(_tokenizer(key), texts)
