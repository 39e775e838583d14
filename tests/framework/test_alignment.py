"""Encoding alignment helpers against Hugging Face's on the same text and vocabulary (issue 12, item 3): word_ids,
sequence_ids, token_to_chars/word/sequence, char_to_token, char_to_word, word_to_tokens, word_to_chars, for one text
and pairs, with unknown words of several characters and emoji."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from tokembed.corpus import Corpus
from tokembed.encoding import Encoding

tokenizers = pytest.importorskip("tokenizers")

ROOT = Path(__file__).resolve().parents[2]
TEXTS = [
    "Hello, world! It's 2024.",
    "naïve café: 東京タワー and 👩🏽‍🚀 rockets 🚀🚀",
    "unknownish 𓀀𓀁𓀂 hieroglyphs, ⅷ and Ωmega",
    "  spaces\tand\ttabs   ",
    "",
    "don't stop-believing...",
]
PAIRS = [(a, b) for a in TEXTS[:4] for b in TEXTS[1:3]]


def _ours_and_hf(kind: str, tmp_path):
    from tokembed.plugins.bpe.tokenizer import BPETokenizer
    from tokembed.plugins.wordpiece.tokenizer import WordPieceTokenizer

    if kind == "bpe-byte":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours = BPETokenizer(vocab_size=600, byte_level=True, special_tokens=["<s>", "</s>"],
                                post_processor={"single": "<s> $A </s>", "pair": "<s> $A </s> $B:1 </s>:1"}
                                ).fit(Corpus.builtin("moby-dick").head(2000))
    elif kind == "bpe-char":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours = BPETokenizer(vocab_size=600, end_of_word_suffix="</w>", limit_alphabet=70,
                                special_tokens=["[CLS]", "[SEP]"],
                                post_processor={"single": "[CLS] $A [SEP]", "pair": "[CLS] $A [SEP] $B:1 [SEP]:1"}
                                ).fit(Corpus.builtin("moby-dick").head(2000))
    else:
        ours = WordPieceTokenizer.from_vocab_file(ROOT / "tests" / "fixtures" / "bert-base-uncased-vocab.txt",
                                                  post_processor={"single": "[CLS] $A [SEP]",
                                                                  "pair": "[CLS] $A [SEP] $B:1 [SEP]:1"})
    ours.to_hf_json(tmp_path / "tokenizer.json")
    return ours, tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))


def _alignment(enc, texts) -> dict:
    n = len(enc.ids)
    words = [w for w in enc.word_ids if w is not None]
    out = {
        "ids": list(enc.ids), "word_ids": list(enc.word_ids), "sequence_ids": list(enc.sequence_ids),
        "token_to_chars": [enc.token_to_chars(t) for t in range(n)],
        "token_to_word": [enc.token_to_word(t) for t in range(n)],
        "token_to_sequence": [enc.token_to_sequence(t) for t in range(n)],
    }
    for s, text in enumerate(texts):
        out[f"char_to_token/{s}"] = [enc.char_to_token(c, s) for c in range(len(text) + 1)]
        out[f"char_to_word/{s}"] = [enc.char_to_word(c, s) for c in range(len(text) + 1)]
        out[f"word_to_tokens/{s}"] = [enc.word_to_tokens(w, s) for w in range(max(words, default=0) + 2)]
        out[f"word_to_chars/{s}"] = [enc.word_to_chars(w, s) for w in range(max(words, default=0) + 2)]
    return {k: [tuple(x) if isinstance(x, (list, tuple)) else x for x in v] for k, v in out.items()}


@pytest.mark.parametrize("kind", ["bpe-byte", "bpe-char", "wordpiece"])
def test_alignment_helpers_equal_hugging_face(kind, tmp_path):
    ours, hf = _ours_and_hf(kind, tmp_path)
    for text in TEXTS:
        assert _alignment(ours.encode(text), [text]) == _alignment(hf.encode(text), [text]), text
    for a, b in PAIRS:
        assert _alignment(ours.encode(a, b), [a, b]) == _alignment(hf.encode(a, b), [a, b]), (a, b)
    # the batch path (BPE's and WordPiece's own) gives the same
    for enc, text in zip(ours.encode_batch(TEXTS), TEXTS):
        assert _alignment(enc, [text]) == _alignment(hf.encode(text), [text]), text


def test_alignment_survives_truncation_and_padding(tmp_path):
    ours, hf = _ours_and_hf("wordpiece", tmp_path)
    hf.enable_truncation(8, stride=2)
    hf.enable_padding(length=8, pad_id=0, pad_token="[PAD]")
    text = TEXTS[1] + " " + TEXTS[0]
    enc = ours.encode(text, truncation=True, max_length=8, stride=2, padding="max_length")
    ref = hf.encode(text)
    assert _alignment(enc, [text]) == _alignment(ref, [text])
    assert [_alignment(o, [text]) for o in enc.overflowing] == [_alignment(o, [text]) for o in ref.overflowing]


def test_an_encoding_built_by_hand_counts_words_at_gaps():
    enc = Encoding([5, 6, 7, 8], ["ab", "c", "d", "!"], [[0, 2], [2, 3], [4, 5], [5, 6]])
    assert enc.word_ids == [0, 0, 1, 1] and enc.sequence_ids == [0, 0, 0, 0]
    assert enc.char_to_token(3) is None and enc.char_to_word(4) == 1 and enc.word_to_tokens(1) == (2, 4)
    assert enc.word_to_chars(0) == (0, 3) and enc.token_to_chars(1) == (2, 3) and enc.n_sequences == 1
    with pytest.raises(IndexError, match="outside this encoding of 4 tokens"):
        enc.token_to_word(4)
    assert np.array_equal(Encoding.concatenate([enc, enc]).ids, np.array([5, 6, 7, 8] * 2))
