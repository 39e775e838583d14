"""Encoding machinery: the word-cache kernels against plain Python, word counting, offsets through normalizers,
BPE-dropout, batches on threads, and the component contract for the byte-level and prefix variants."""

from __future__ import annotations

import warnings
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokembed.plugins.bpe import _kernels
from tokembed.plugins.bpe.tokenizer import BPETokenizer
from tokembed.plugins.bpe.training import count_words_python, word_counts
from tokembed.testing import check_component
from tokembed.text import build_normalizer, build_pre_tokenizer

from _bpe_data import UNICODE_TEXTS, gpt2_tokenizer, gpt2_variant, moby_text


def fit(tok: BPETokenizer, corpus) -> BPETokenizer:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tok.fit(corpus)


# -- kernels against plain Python -------------------------------------------------------------------------------------
@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.integers(0, 3), min_size=1, max_size=5), max_size=40), st.booleans())
def test_dedup_words_equals_python(words, unique):
    symbols = np.array([s for w in words for s in w], np.int32)
    ends = np.cumsum([len(w) for w in words]).astype(np.int64)
    spans = np.stack([ends - [len(w) for w in words], ends], axis=1).reshape(-1, 2).astype(np.int64)
    k = len(words)
    word_of = np.empty(k, np.int64)
    packed = np.empty(symbols.size, np.int32)
    offsets = np.empty(k + 1, np.int64)
    nu = _kernels.dedup_words(symbols, spans, unique, word_of, packed, offsets)
    first: dict[tuple, int] = {}
    expect_of, expect_packed = [], []
    for i, w in enumerate(words):
        key = tuple(w) if unique else i
        if key not in first:
            first[key] = len(first)
            expect_packed.append(list(w))
        expect_of.append(first[key])
    assert nu == len(first) and word_of.tolist() == expect_of
    assert [packed[offsets[u]:offsets[u + 1]].tolist() for u in range(nu)] == expect_packed


def test_dedup_words_grows_its_table():
    # 5,000 distinct words, each twice: the table starts at 1,024 slots and must grow several times
    words = [[i % 7, i // 7 % 7, i // 49 % 7, i // 343 % 7, i // 2401] for i in range(5000)] * 2
    symbols = np.array([s for w in words for s in w], np.int32)
    spans = np.stack([np.arange(0, symbols.size, 5), np.arange(5, symbols.size + 1, 5)], axis=1).astype(np.int64)
    word_of = np.empty(len(words), np.int64)
    offsets = np.empty(len(words) + 1, np.int64)
    nu = _kernels.dedup_words(symbols, spans, True, word_of, np.empty(symbols.size, np.int32), offsets)
    assert nu == 5000 and word_of.tolist() == list(range(5000)) * 2


@pytest.mark.parametrize("bytes_", [False, True])
def test_expand_words_equals_python(bytes_):
    # two distinct words packed at characters 0..1 ("ab") and 2..3 ("cd"); "ab" -> token 7 covering both
    # characters, "cd" -> tokens 8 and 9. As bytes, "ab" is 3 bytes (a = 1 byte, b = 2 bytes), "cd" 2.
    u_off = np.array([0, 2, 4], np.int64)
    enc_ids = np.array([7, 8, 9], np.int32)
    enc_offsets = np.array([0, 1, 3], np.int64)
    if bytes_:
        pos_map = np.array([0, 1, 1, 2, 3], np.int64)  # symbol (byte) -> character
        enc_first, enc_last = np.array([0, 3, 4]), np.array([2, 3, 4])
    else:
        pos_map = np.zeros(0, np.int64)
        enc_first, enc_last = np.array([0, 2, 3]), np.array([1, 2, 3])
    word_of = np.array([1, 0, 1, 1], np.int64)
    word_start = np.array([0, 3, 5, 9], np.int64)
    ids = np.empty(7, np.int32)
    offsets = np.empty((7, 2), np.int64)
    _kernels.expand_words(word_of, word_start, u_off, enc_ids, enc_offsets, enc_first.astype(np.int64),
                          enc_last.astype(np.int64), pos_map, ids, offsets)
    expect_ids, expect_off = [], []
    for u, start in zip(word_of.tolist(), word_start.tolist()):
        for j in range(enc_offsets[u], enc_offsets[u + 1]):
            a, b = int(enc_first[j]), int(enc_last[j])
            if bytes_:
                a, b = int(pos_map[a]), int(pos_map[b])
            expect_ids.append(int(enc_ids[j]))
            expect_off.append([start + a - int(u_off[u]), start + b + 1 - int(u_off[u])])
    assert ids.tolist() == expect_ids and offsets.tolist() == expect_off
    # "cd" at 0, "ab" at 3, "cd" at 5 and at 9
    assert expect_off == [[0, 1], [1, 2], [3, 5], [5, 6], [6, 7], [9, 10], [10, 11]]


# -- word counts ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("pre", ["word_punct", "gpt2", "whitespace_split", None])
@pytest.mark.parametrize("norm", [None, "lowercase"])
def test_word_counts_equal_counter_of_split_pieces(pre, norm):
    docs = moby_text()[:30_000].split("\n\n") + UNICODE_TEXTS + ["x\ud800y", "\ud83d\ude00"]
    n, p = build_normalizer(norm), build_pre_tokenizer(pre)
    from tokembed.text import repair_surrogates

    expect = Counter(piece for d in docs for piece, _ in p.pre_tokenize(n.normalize_str(repair_surrogates(d)
                                                                                           .normalized)))
    cps, offsets, counts = word_counts(iter(docs), n, p)
    text = cps.astype("<u4").tobytes().decode("utf-32-le")
    got = Counter({text[a:b]: c for a, b, c in zip(offsets[:-1].tolist(), offsets[1:].tolist(), counts.tolist())})
    assert got == expect and len(got) == counts.size
    # the plain-Python path, in chunks of any size, gives the same partial counts summed
    clean = [repair_surrogates(d).normalized for d in docs]
    for chunk in (1, 100, 1 << 20):
        assert count_words_python(clean, n, p, chunk_chars=chunk) == expect


@pytest.mark.parametrize("params", [{"end_of_word_suffix": "</w>"}, {"byte_level": True}])
def test_training_with_or_without_the_fast_counter_learns_the_same(monkeypatch, params, tmp_path):
    import sys

    docs = moby_text()[:40_000].split("\n\n") + UNICODE_TEXTS
    fast = fit(BPETokenizer(vocab_size=500, **params), docs)
    monkeypatch.setitem(sys.modules, "tokembed.text.fast", None)  # import fails: the Counter path
    plain = fit(BPETokenizer(vocab_size=500, **params), docs)
    assert plain.merges_ == fast.merges_ and plain.merge_counts_ == fast.merge_counts_
    assert plain.get_vocab() == fast.get_vocab()


# -- offsets ----------------------------------------------------------------------------------------------------------
def test_offsets_index_the_original_text_through_a_normalizer():
    tok = fit(BPETokenizer(normalizer=["nfkc", "lowercase"], end_of_word_suffix="</w>", vocab_size=200),
              ["ﬁne ﬁne FINE fine"])
    text = "Ｆｉｎｅ ﬁne"
    enc = tok.encode(text)
    # every token maps back inside the original: "Ｆｉｎｅ" (0..4) and "ﬁne" (5..8), the ligature one character
    assert enc.offsets.min() >= 0 and enc.offsets.max() == len(text)
    assert all(text[s:e] for s, e in enc.offsets.tolist())
    assert enc.offsets[-1].tolist()[1] == 8 and tok.decode(enc.ids) == "fine fine"


def test_byte_level_offsets_of_multibyte_characters():
    tok = gpt2_tokenizer()
    text = "é日😀"
    enc = tok.encode(text)
    for (s, e), i in zip(enc.offsets.tolist(), enc.ids.tolist()):
        assert tok.decode_bytes([i]) in text[s:e].encode() and e - s >= 1


# -- dropout --------------------------------------------------------------------------------------------------------
def test_dropout_is_seeded_varies_by_call_and_round_trips():
    text = moby_text()[:3000]
    plain = gpt2_tokenizer().encode(text).ids.tolist()
    a, b = gpt2_variant(dropout=0.3, seed=7), gpt2_variant(dropout=0.3, seed=7)
    first_a, second_a = a.encode(text).ids.tolist(), a.encode(text).ids.tolist()
    assert first_a == b.encode(text).ids.tolist()  # same seed, same call number
    assert first_a != second_a  # the next call draws again
    assert len(first_a) > len(plain)  # skipped merges leave more, shorter tokens
    assert a.decode(first_a) == text
    assert gpt2_variant(dropout=0.0, seed=7).encode(text).ids.tolist() == plain
    assert gpt2_variant(dropout=0.3, seed=8).encode(text).ids.tolist() != first_a


# -- batches --------------------------------------------------------------------------------------------------------
def test_encode_batch_on_two_threads_equals_one_by_one():
    tok = gpt2_tokenizer()
    texts = moby_text().splitlines()[:500] + UNICODE_TEXTS
    serial = [tok.encode(t) for t in texts]
    assert tok.encode_batch(texts, num_workers=2) == serial


@pytest.mark.parametrize("options", [
    {"padding": True, "pad_to_multiple_of": 8},
    {"truncation": True, "max_length": 6, "stride": 2},
    {"allowed_special": "all"},
    {"pairs": "pairs", "truncation": "longest_first", "max_length": 12, "padding": "max_length"},
])
def test_encode_batch_equals_the_base_class_path(options):
    # the base class's encode_batch encodes text by text; ours encodes chunks first, then hands them over
    from tokembed.components import Tokenizer

    tok = gpt2_variant(pad_token="<|endoftext|>")
    texts = moby_text().splitlines()[:40] + ["a<|endoftext|>b"] + UNICODE_TEXTS
    options = dict(options)
    if options.pop("pairs", None):
        options["pairs"] = list(reversed(texts))
    ours = tok.encode_batch(texts, **options)
    base = Tokenizer.encode_batch(tok, texts, **options)
    assert list(ours) == list(base)


# -- contract variants ----------------------------------------------------------------------------------------------
_SPECIALS = ["<|endoftext|>"]  # one object: the contract checks that __init__ stores the very object given


class ByteLevelBPE(BPETokenizer):
    @classmethod
    def _contract_params(cls):
        return {"byte_level": True, "vocab_size": 400, "special_tokens": _SPECIALS, "pad_token": "<pad>"}


class PrefixBPE(BPETokenizer):
    @classmethod
    def _contract_params(cls):
        return {"continuing_subword_prefix": "##", "vocab_size": 300, "normalizer": "nfkc"}


@pytest.mark.parametrize("cls", [ByteLevelBPE, PrefixBPE])
def test_contract_for_variants(cls):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_component(cls)


@pytest.mark.parametrize("byte_level", [False, True])
def test_encode_ids_equals_the_ids_of_encode_batch(byte_level):
    from tokembed.testing import sample_corpus, sample_texts

    docs = sample_corpus()
    tok = BPETokenizer(vocab_size=400, byte_level=byte_level, unk_token=None if byte_level else "<unk>").fit(docs)
    texts = docs + sample_texts()
    ids, lengths = tok.encode_ids(texts)
    expected = [e.ids.tolist() for e in tok.encode_batch(texts, add_special_tokens=False)]
    assert lengths.tolist() == [len(e) for e in expected]
    assert ids.tolist() == [i for e in expected for i in e]
