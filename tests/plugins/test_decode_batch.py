"""``decode_batch(ids_list)`` of every built-in tokenizer equals ``[decode(ids) for ids in ids_list]`` exactly, and
``token_bytes(id)`` equals the bytes of ``decode([id])``: on the encodings of hard text (empty texts, CJK, emoji,
combining marks, lone surrogates, unknown characters), on random id sequences (byte-level ids cut in the middle of
a character, runs of byte-fallback pieces that are not UTF-8, special and unknown tokens anywhere), and on random
sequences drawn by hypothesis.

``decode`` is the path the rest of the suite checks against the reference libraries, so equality here carries that
parity over to the one-pass batch decoders the ``round_trip`` metric uses.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from test_encode_ids_spans import HARD_TEXTS, TOKENIZERS, _texts, _tokenizer
from tokembed.errors import TokembedError


def _id_lists(tok, seed: int = 0) -> list:
    """The encodings of the hard texts (special tokens added where the tokenizer adds them), empty sequences, and
    random sequences of 0..40 ids over the whole vocabulary (lists, int32 and int64 arrays mixed)."""
    rng = np.random.default_rng(seed)
    n = tok.get_vocab_size()
    out: list = [enc.ids for enc in tok.encode_batch(_texts())]
    out += [[], np.zeros(0, np.int32)]
    for k in range(200):
        ids = rng.integers(0, n, rng.integers(0, 41))
        out.append(ids.tolist() if k % 3 == 0 else ids.astype(np.int32 if k % 3 == 1 else np.int64))
    return out


@pytest.mark.parametrize("skip", [False, True])
@pytest.mark.parametrize("key", TOKENIZERS)
def test_decode_batch_equals_decode_of_each_sequence(key, skip):
    tok = _tokenizer(key)
    lists = _id_lists(tok)
    assert tok.decode_batch(lists, skip) == [tok.decode(ids, skip) for ids in lists]
    assert tok.decode_batch([]) == []


@pytest.mark.parametrize("key", TOKENIZERS)
def test_decode_batch_round_trips_like_decode(key):
    # the round_trip metric's own input: flat int32 ids of encode_ids cut at the document boundaries
    tok = _tokenizer(key)
    ids, lengths = tok.encode_ids(HARD_TEXTS)
    parts = np.split(ids, np.cumsum(lengths)[:-1])
    assert tok.decode_batch(parts) == [tok.decode(p) for p in parts]


def test_hand_values():
    gpt2 = _tokenizer("gpt2")
    # "日" is the UTF-8 bytes e6 97 a5; GPT-2 has a token for each byte (bytes_to_unicode): the first two bytes alone
    # are a cut sequence, one U+FFFD with errors="replace"; the three give the character back
    byte_ids = [gpt2.token_to_id(c) for c in ("æ", "Ĺ", "¥")]  # the byte-level characters of e6, 97, a5
    assert gpt2.token_bytes(byte_ids[0]) == b"\xe6"
    assert gpt2.decode_batch([byte_ids[:2], byte_ids, [], byte_ids[1:]]) == ["\ufffd", "日", "", "\ufffd\ufffd"]
    bert = _tokenizer("bert")
    ids = [bert.token_to_id(t) for t in ("[CLS]", "hello", "##s", ",", "don", "'", "t", "[SEP]")]
    # a space before every token but a ## one, then Hugging Face's cleanup of each token: " ," -> ","; the
    # cleanup sees one token at a time, so " ' " (three characters) never matches and the apostrophe keeps spaces
    assert bert.decode_batch([ids, ids[1:3]], True) == ["hellos, don ' t", "hellos"]
    assert bert.decode_batch([ids]) == ["[CLS] hellos, don ' t [SEP]"]
    assert bert.token_bytes(ids[2]) == b"##s"  # decode(["##s"]): a first token keeps its prefix, as in HF
    uni = _tokenizer("unigram-byte-fallback")
    e3, x81, x82 = (uni.token_to_id(f"<0x{b:02X}>") for b in (0xE3, 0x81, 0x82))
    # e3 81 82 is "あ"; a run cut by the end of the text is one U+FFFD; the dummy prefix's "▁" is dropped
    word = uni.token_to_id("\u2581the")
    assert uni.decode_batch([[e3, x81, x82], [e3, x81], [word, word, e3]]) == ["あ", "\ufffd", "the the\ufffd"]
    assert uni.token_bytes(e3) == b"\xe3"


@pytest.mark.parametrize("key", TOKENIZERS)
def test_token_bytes_are_the_bytes_of_the_token_alone(key):
    tok = _tokenizer(key)
    n = tok.get_vocab_size()
    ids = range(n) if n <= 2000 else np.random.default_rng(1).integers(0, n, 2000).tolist()
    for i in ids:
        if hasattr(tok, "decode_bytes"):  # BPE: raw bytes at byte level
            expected = tok.decode_bytes([i])
        elif tok.id_to_token(i).startswith("<0x") and key.startswith("unigram-byte"):
            expected = bytes([int(tok.id_to_token(i)[3:5], 16)])
        else:
            expected = tok.decode([i]).encode("utf-8", "surrogatepass")
        assert tok.token_bytes(i) == expected, (i, tok.id_to_token(i))


@pytest.mark.parametrize("key", ["char", "gpt2", "bert", "unigram-byte-fallback"])
def test_bad_ids_are_refused_as_decode_refuses_them(key):
    tok = _tokenizer(key)
    n = tok.get_vocab_size()
    for bad in ([0, n], [-1], [1.5], [[1, 2]]):
        with pytest.raises(TokembedError) as one:
            tok.decode(bad)
        with pytest.raises(TokembedError) as batch:
            tok.decode_batch([[0], bad])
        assert str(batch.value) == str(one.value)
    with pytest.raises(TokembedError):
        tok.token_bytes(n)


@pytest.mark.parametrize("key", ["bert", "unigram-byte-fallback", "char", "bpe-eow-nfkc-lowercase"])
def test_partial_char_rate_is_unchanged_by_token_bytes(key):
    # the metric reads token_bytes when it exists, else decodes each id alone: both must classify every id alike
    # (byte-level BPE excepted: see test_token_bytes_fix_the_partial_test_of_a_whole_replacement_character)
    from tokembed.metrics.builtin import is_partial_token

    tok = _tokenizer(key)

    class WithoutHook:  # the tokenizer as the metric saw it before token_bytes
        def __init__(self, inner):
            self.decode, self.id_to_token = inner.decode, inner.id_to_token

    ids, _ = tok.encode_ids(_texts())
    for i in np.unique(ids).tolist():
        assert is_partial_token(tok, i) == is_partial_token(WithoutHook(tok), i), (i, tok.id_to_token(i))


def test_token_bytes_fix_the_partial_test_of_a_whole_replacement_character():
    # GPT-2's token "Ġï¿½" is the bytes 20 ef bf bd: a space and a whole U+FFFD. Decoded alone it shows U+FFFD that
    # its token string lacks, so the test without token_bytes called it partial; with token_bytes it is whole. The
    # byte e6 alone (the first of the three bytes of "日") is partial either way.
    from tokembed.metrics.builtin import is_partial_token

    gpt2 = _tokenizer("gpt2")
    whole = gpt2.token_to_id("\u0120\u00ef\u00bf\u00bd")
    assert gpt2.token_bytes(whole) == b" \xef\xbf\xbd"
    assert not is_partial_token(gpt2, whole)
    assert is_partial_token(gpt2, gpt2.token_to_id("\u00e6"))


_KEYS = ["char", "word", "bpe-eow-nfkc-lowercase", "gpt2", "bert", "unigram", "unigram-byte-fallback"]


@settings(deadline=None, max_examples=60)
@given(key=st.sampled_from(_KEYS), draw=st.data(), skip=st.booleans())
def test_decode_batch_property(key, draw, skip):
    tok = _tokenizer(key)
    n = tok.get_vocab_size()
    lists = draw.draw(st.lists(st.lists(st.integers(0, n - 1), max_size=30), max_size=8))
    assert tok.decode_batch(lists, skip) == [tok.decode(ids, skip) for ids in lists]
