"""Post-processing: templates, truncation with overflowing windows, padding, batches, thread safety.

Expected values are either written by hand (the arithmetic is in the comments) or produced by Hugging Face
``tokenizers`` built with the same word-level vocabulary (a ``WordLevel`` model with a ``WhitespaceSplit``
pre-tokenizer), whose post-processing is the model this module follows.
"""

from __future__ import annotations

import json
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokembed.components import Tokenizer
from tokembed.encoding import BatchEncoding, Encoding
from tokembed.errors import NotFittedError, ParameterError, TokembedError
from tokembed.plugins.char.tokenizer import CharTokenizer
from tokembed.postprocess import TemplateProcessing, truncate

hf = pytest.importorskip("tokenizers")
from tokenizers.models import WordLevel  # noqa: E402
from tokenizers.pre_tokenizers import WhitespaceSplit  # noqa: E402
from tokenizers.processors import TemplateProcessing as HFTemplate  # noqa: E402

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
# ids: [PAD]=0 [UNK]=1 [CLS]=2 [SEP]=3 [MASK]=4 a=5 b=6 c=7 d=8 e=9 f=10 g=11 h=12 i=13 j=14
WORDS = "a b c d e f g h i j".split()
VOCAB = {t: i for i, t in enumerate(SPECIALS + WORDS)}
BERT = {"single": "[CLS] $A [SEP]", "pair": "[CLS] $A [SEP] $B:1 [SEP]:1"}


class WordTok(Tokenizer):
    """A word-level tokenizer for the tests: whitespace split, one id per word, unknown words -> [UNK]."""

    name: ClassVar[str] = "test-word"

    def __init__(self, unk_token: str = "[UNK]", pad_token: str | None = "[PAD]", post_processor: Any = None):
        self.unk_token = unk_token
        self.pad_token = pad_token
        self.post_processor = post_processor

    def fit(self, corpus, y=None):
        words: list[str] = []
        for doc in corpus:
            words += [w for w in doc.split() if w not in words and w not in SPECIALS]
        self.special_tokens_ = list(SPECIALS)
        self.vocab_ = {t: i for i, t in enumerate(SPECIALS + words)}
        self._itos = SPECIALS + words
        return self

    def _encode_text(self, text: str) -> Encoding:
        found = list(re.finditer(r"\S+", text))
        unk = self.vocab_[self.unk_token]
        ids = [self.vocab_.get(m.group(), unk) for m in found]
        return Encoding(ids, [self._itos[i] for i in ids], [[m.start(), m.end()] for m in found])

    def decode(self, ids, skip_special_tokens=False):
        return " ".join(self._itos[i] for i in ids)

    def get_vocab(self):
        return dict(self.vocab_)

    def token_to_id(self, token):
        return self.vocab_.get(token)


class BertWordTok(WordTok):
    """Declares a default post-processor the way a BERT-style tokenizer class would: as its parameter default."""

    name: ClassVar[str] = "test-bert-word"

    def __init__(self, unk_token: str = "[UNK]", pad_token: str | None = "[PAD]",
                 post_processor: Any = BERT):
        super().__init__(unk_token, pad_token, post_processor)


def word_tok(**params) -> WordTok:
    tok = WordTok(**params).fit([" ".join(WORDS)])
    assert tok.get_vocab() == VOCAB
    return tok


# -- the Hugging Face oracle ------------------------------------------------------------------------------------
def hf_tok(template: dict | None, *, truncation: str | None = None, max_length: int | None = None, stride: int = 0,
           padding: str | None = None, pad_to_multiple_of: int | None = None, padding_side: str = "right"):
    tok = hf.Tokenizer(WordLevel(VOCAB, unk_token="[UNK]"))
    tok.pre_tokenizer = WhitespaceSplit()
    if template is not None:
        single, pair = template["single"], template.get("pair", "$A:0 $B:1")
        used = {p.split(":")[0] for p in (single + " " + pair).split() if not p.startswith("$")}
        tok.post_processor = HFTemplate(single=single, pair=pair, special_tokens=[(t, VOCAB[t]) for t in used])
    if truncation is not None:
        tok.enable_truncation(max_length, stride=stride, strategy=truncation)
    if padding is not None:
        tok.enable_padding(direction=padding_side, pad_id=0, pad_token="[PAD]",
                           length=max_length if padding == "max_length" else None,
                           pad_to_multiple_of=pad_to_multiple_of)
    return tok


def assert_same(ours: Encoding, theirs, *, windows: bool = True) -> None:
    """Field-by-field equality with a ``tokenizers.Encoding``; ``overflowing`` compared at the top level."""
    assert ours.ids.tolist() == theirs.ids
    assert ours.tokens == theirs.tokens
    assert ours.type_ids.tolist() == theirs.type_ids
    assert ours.attention_mask.tolist() == theirs.attention_mask
    assert ours.special_tokens_mask.tolist() == theirs.special_tokens_mask
    assert [tuple(o) for o in ours.offsets.tolist()] == theirs.offsets
    if windows:
        assert len(ours.overflowing) == len(theirs.overflowing)
        for mine, other in zip(ours.overflowing, theirs.overflowing):
            assert mine.overflowing == []
            assert_same(mine, other, windows=False)


def offsets(*pairs):
    return np.array(pairs, dtype=np.int64).reshape(-1, 2)


# -- hand-computed cases ----------------------------------------------------------------------------------------
def test_bert_template_pair_by_hand():
    tok = word_tok(post_processor=BERT)
    enc = tok.encode("a b c", "d  e")
    # [CLS] a b c [SEP] d e [SEP]; "d  e" has two spaces, so e is at (3, 4) in the pair text
    assert enc.ids.tolist() == [2, 5, 6, 7, 3, 8, 9, 3]
    assert enc.tokens == ["[CLS]", "a", "b", "c", "[SEP]", "d", "e", "[SEP]"]
    assert enc.type_ids.tolist() == [0, 0, 0, 0, 0, 1, 1, 1]
    assert enc.special_tokens_mask.tolist() == [1, 0, 0, 0, 1, 0, 0, 1]
    assert enc.attention_mask.tolist() == [1] * 8
    np.testing.assert_array_equal(enc.offsets, offsets((0, 0), (0, 1), (2, 3), (4, 5), (0, 0), (0, 1), (3, 4), (0, 0)))
    assert enc.overflowing == []
    # add_special_tokens=False keeps the template's type ids and drops the added tokens
    plain = tok.encode("a b c", "d  e", add_special_tokens=False)
    assert plain.ids.tolist() == [5, 6, 7, 8, 9]
    assert plain.type_ids.tolist() == [0, 0, 0, 1, 1]
    assert plain.special_tokens_mask.tolist() == [0] * 5


def test_single_truncation_windows_by_hand():
    tok = word_tok(post_processor=BERT)
    text = "a b c d e f g h i"  # 9 words; word k spans (2k, 2k + 1)
    enc = tok.encode(text, truncation=True, max_length=5, stride=1)
    # room = 5 - 2 specials = 3 tokens; windows start every 3 - 1 = 2 tokens: 0, 2, 4, 6 (6 + 3 = 9 reaches the end)
    assert enc.ids.tolist() == [2, 5, 6, 7, 3]  # [CLS] a b c [SEP]
    assert [o.ids.tolist() for o in enc.overflowing] == [
        [2, 7, 8, 9, 3],  # c d e
        [2, 9, 10, 11, 3],  # e f g
        [2, 11, 12, 13, 3],  # g h i
    ]
    np.testing.assert_array_equal(enc.overflowing[0].offsets, offsets((0, 0), (4, 5), (6, 7), (8, 9), (0, 0)))
    assert [o.special_tokens_mask.tolist() for o in enc.overflowing] == [[1, 0, 0, 0, 1]] * 3
    # without special tokens the whole max_length is room: windows of 5 every 5 - 1 = 4 tokens: 0, 4 (4 + 5 = 9)
    plain = tok.encode(text, truncation=True, max_length=5, stride=1, add_special_tokens=False)
    assert plain.ids.tolist() == [5, 6, 7, 8, 9]
    assert [o.ids.tolist() for o in plain.overflowing] == [[9, 10, 11, 12, 13]]


def test_longest_first_shares_room_by_hand():
    tok = word_tok(post_processor=BERT)
    # A has 6 tokens, B 2; room = 8 - 3 specials = 5. The shorter (B, 2) keeps all; A gets max(2, 5 - 2) = 3.
    enc = tok.encode("a b c d e f", "g h", truncation=True, max_length=8)
    assert enc.ids.tolist() == [2, 5, 6, 7, 3, 11, 12, 3]
    assert [o.ids.tolist() for o in enc.overflowing] == [[2, 8, 9, 10, 3, 11, 12, 3]]  # (d e f | g h)
    # Both 5 tokens, room 5: neither fits in max(5, 5 - 5), so A gets 5 // 2 = 2 and B 2 + 5 % 2 = 3.
    # A windows: [a b] [c d] [e]; B windows: [f g h] [i j]. HF's order of the overflowing combinations:
    # (a1, B), (a1, b1), (a2, B), (a2, b1), then (A, b1).
    enc = tok.encode("a b c d e", "f g h i j", truncation=True, max_length=8)
    assert enc.ids.tolist() == [2, 5, 6, 3, 10, 11, 12, 3]
    assert [o.ids.tolist() for o in enc.overflowing] == [
        [2, 7, 8, 3, 10, 11, 12, 3],
        [2, 7, 8, 3, 13, 14, 3],
        [2, 9, 3, 10, 11, 12, 3],
        [2, 9, 3, 13, 14, 3],
        [2, 5, 6, 3, 13, 14, 3],
    ]
    assert enc.overflowing[1].type_ids.tolist() == [0, 0, 0, 0, 1, 1, 1]


def test_only_first_and_only_second_by_hand():
    tok = word_tok(post_processor=BERT)
    # total 4 + 3 = 7 tokens, room 8 - 3 = 5: remove 2 from the chosen text
    first = tok.encode("a b c d", "e f g", truncation="only_first", max_length=8)
    assert first.ids.tolist() == [2, 5, 6, 3, 9, 10, 11, 3]
    assert [o.ids.tolist() for o in first.overflowing] == [[2, 7, 8, 3, 9, 10, 11, 3]]
    second = tok.encode("a b c d", "e f g", truncation=True, truncation_strategy="only_second", max_length=8)
    assert second.ids.tolist() == [2, 5, 6, 7, 8, 3, 9, 3]
    assert [o.ids.tolist() for o in second.overflowing] == [[2, 5, 6, 7, 8, 3, 10, 3], [2, 5, 6, 7, 8, 3, 11, 3]]


def test_batch_padding_arrays_by_hand():
    tok = word_tok(post_processor=BERT)
    batch = tok.encode_batch(["a b", "c d  e f", "g"], padding=True, pad_to_multiple_of=4)
    # lengths with [CLS]/[SEP]: 4, 6, 3 -> longest 6 -> next multiple of 4 is 8
    assert isinstance(batch, BatchEncoding)
    assert batch.shape == (3, 8) and len(batch) == 3
    for key in batch.keys():
        assert batch[key].dtype == np.int64
    np.testing.assert_array_equal(batch["input_ids"], [[2, 5, 6, 3, 0, 0, 0, 0],
                                                       [2, 7, 8, 9, 10, 3, 0, 0],
                                                       [2, 11, 3, 0, 0, 0, 0, 0]])
    np.testing.assert_array_equal(batch["attention_mask"], [[1, 1, 1, 1, 0, 0, 0, 0],
                                                            [1, 1, 1, 1, 1, 1, 0, 0],
                                                            [1, 1, 1, 0, 0, 0, 0, 0]])
    np.testing.assert_array_equal(batch["special_tokens_mask"], [[1, 0, 0, 1, 1, 1, 1, 1],
                                                                 [1, 0, 0, 0, 0, 1, 1, 1],
                                                                 [1, 0, 1, 1, 1, 1, 1, 1]])
    np.testing.assert_array_equal(batch["token_type_ids"], np.zeros((3, 8)))
    assert batch["offsets"].shape == (3, 8, 2)
    # "c d  e f": c (0, 1), d (2, 3), e (5, 6) after two spaces, f (7, 8)
    np.testing.assert_array_equal(batch["offsets"][1], offsets((0, 0), (0, 1), (2, 3), (5, 6), (7, 8),
                                                               (0, 0), (0, 0), (0, 0)))
    assert batch[1].tokens == ["[CLS]", "c", "d", "e", "f", "[SEP]", "[PAD]", "[PAD]"]
    assert [e.tokens for e in batch] == [e.tokens for e in batch.encodings]

    left = tok.encode_batch(["a b", "c d  e f", "g"], padding="longest", padding_side="left")
    # longest 6, no multiple
    np.testing.assert_array_equal(left["input_ids"], [[0, 0, 2, 5, 6, 3],
                                                      [2, 7, 8, 9, 10, 3],
                                                      [0, 0, 0, 2, 11, 3]])
    np.testing.assert_array_equal(left["attention_mask"][2], [0, 0, 0, 1, 1, 1])


def test_max_length_padding_with_truncation_by_hand():
    tok = word_tok(post_processor=BERT)
    batch = tok.encode_batch(["a b c d e f g", "h"], padding="max_length", truncation=True, max_length=6)
    # room 6 - 2 = 4: row 0 keeps a b c d, its overflow e f g (+ specials = 5) is padded to 6 as well
    np.testing.assert_array_equal(batch.input_ids, [[2, 5, 6, 7, 8, 3], [2, 12, 3, 0, 0, 0]])
    assert [o.ids.tolist() for o in batch[0].overflowing] == [[2, 9, 10, 11, 3, 0]]
    assert batch[0].overflowing[0].attention_mask.tolist() == [1, 1, 1, 1, 1, 0]
    # encode pads one text to max_length too
    enc = tok.encode("h", padding="max_length", max_length=5, padding_side="left")
    assert enc.ids.tolist() == [0, 0, 2, 12, 3]
    assert enc.special_tokens_mask.tolist() == [1, 1, 1, 0, 1]
    assert enc.attention_mask.tolist() == [0, 0, 1, 1, 1]


def test_template_type_ids_reach_overflowing_windows():
    """Our documented departure from HF: a template's type ids apply to every window of that text."""
    tok = word_tok(post_processor={"single": "$A:1 [SEP]:2", "pair": "$A $B"})
    enc = tok.encode("a b c d e", truncation=True, max_length=3)
    # room 2: windows [a b] [c d] [e], each followed by [SEP] with type 2
    assert enc.type_ids.tolist() == [1, 1, 2]
    assert [o.type_ids.tolist() for o in enc.overflowing] == [[1, 1, 2], [1, 2]]  # HF: [0, 0, 2], [0, 2]
    enc = tok.encode("a b", "c d e f", truncation=True, max_length=4)
    assert [o.type_ids.tolist() for o in enc.overflowing] == [[0, 0, 0, 0]]  # HF gives the $B window 1


# -- templates --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("single, pair", [
    ("[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1"),
    ("$0 [SEP]:3", "$b:2 [MASK] $a"),
    ("$1", "$A:0 $B:1"),
    (["[CLS]:4", "$", "[SEP]"], ["$A", "[SEP]", "$B:7"]),
])
def test_template_parsing_matches_hf(single, pair):
    ours = TemplateProcessing(single, pair)
    used = [("[CLS]", 2), ("[SEP]", 3), ("[MASK]", 4)]
    state = json.loads(HFTemplate(single=single, pair=pair, special_tokens=used).__getstate__())

    def as_hf(pieces):
        return [{"Sequence": {"id": p.sequence, "type_id": p.type_id}} if p.sequence
                else {"SpecialToken": {"id": p.token, "type_id": p.type_id}} for p in pieces]

    assert as_hf(ours.single) == state["single"]
    assert as_hf(ours.pair) == state["pair"]
    # the canonical spec reads back to the same template
    assert TemplateProcessing.from_spec(ours.to_spec()) == ours


def test_template_counts_and_spec():
    tp = TemplateProcessing.from_spec(BERT)
    assert tp.num_special_tokens(False) == 2 and tp.num_special_tokens(True) == 3
    assert tp.special_tokens == ["[CLS]", "[SEP]"]
    assert tp.to_spec() == {"single": "[CLS]:0 $A:0 [SEP]:0", "pair": "[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1"}
    assert TemplateProcessing.from_spec({"type": "template", "single": "$A"}).pair == TemplateProcessing().pair
    assert TemplateProcessing.from_spec(None) is None
    assert BertWordTok().fit(["a"]).num_special_tokens_to_add(pair=True) == 3
    assert word_tok().num_special_tokens_to_add() == 0


@pytest.mark.parametrize("spec, match", [
    ({"single": "$C"}, "cannot read the piece '\\$C'"),
    ({"single": "[CLS]:x $A"}, "type id"),
    ({"single": "$A $A"}, "exactly once"),
    ({"single": "$A $B"}, "no \\$B"),
    ({"single": "$A", "pair": "$A [SEP]"}, "\\$A and \\$B exactly once"),
    ({"pair": "$A $B"}, "'single' template is required"),
    ({"single": "$A", "extra": 1}, "unknown key"),
    ({"single": "$A", "type": "roberta"}, "unknown type"),
    ({"single": 3}, "must be a string"),
    ("[CLS] $A [SEP]", "mapping"),
])
def test_bad_template_specs(spec, match):
    tok = word_tok()
    with pytest.raises(TokembedError, match=match):
        tok.encode("a", post_processor=spec)


def test_missing_template_token_is_named():
    tok = word_tok(post_processor={"single": "<s> $A </s>"})
    with pytest.raises(TokembedError, match=r"\['<s>', '</s>'\].*not in the tokenizer's vocabulary"):
        tok.encode("a")
    # add_special_tokens=False needs no lookup
    assert tok.encode("a", add_special_tokens=False).ids.tolist() == [5]


# -- default post-processor and call overrides ------------------------------------------------------------------
def test_class_default_post_processor_and_call_override():
    tok = BertWordTok().fit([" ".join(WORDS)])
    assert tok.get_params()["post_processor"] == BERT
    assert type(tok)(**tok.get_params()).post_processor == BERT
    assert tok.encode("a b").ids.tolist() == [2, 5, 6, 3]
    assert tok.encode("a b", post_processor={"single": "$A [MASK]"}).ids.tolist() == [5, 6, 4]
    assert tok.encode("a b", post_processor=TemplateProcessing("[MASK]:1 $A")).type_ids.tolist() == [1, 0, 0]
    assert tok.encode("a b", add_special_tokens=False).ids.tolist() == [5, 6]
    # the override did not stick
    assert tok.encode("a b").ids.tolist() == [2, 5, 6, 3]
    assert WordTok(post_processor=BERT).fit([" ".join(WORDS)]).encode("c").ids.tolist() == [2, 7, 3]


def test_no_post_processor_keeps_model_output():
    tok = word_tok()
    text = "a  b zz"
    assert tok.encode(text) == tok._encode_text(text)
    assert tok.encode(text, add_special_tokens=True) == tok._encode_text(text)
    pair = tok.encode("a b", "c")
    assert pair.ids.tolist() == [5, 6, 7] and pair.type_ids.tolist() == [0, 0, 1]  # HF: pair gets type id 1
    assert tok.encode_batch(["a", "b c"]) == [tok.encode("a"), tok.encode("b c")]


def test_char_tokenizer_unchanged():
    tok = CharTokenizer(special_tokens=["<s>"]).fit(["hello world"])
    for text in ["hello", "", "wor<s>ld", "héllo"]:
        assert tok.encode(text) == tok._encode_text(text)
    enc = tok.encode("he<s>lo", allowed_special=["<s>"])
    assert enc.tokens == ["h", "e", "<s>", "l", "o"]
    np.testing.assert_array_equal(enc.offsets, offsets((0, 1), (1, 2), (2, 5), (5, 6), (6, 7)))
    assert tok.encode_batch(["he", "lo"]) == [tok.encode("he"), tok.encode("lo")]
    # the char tokenizer has a pad token ("<pad>", id 0), so it can pad
    batch = tok.encode_batch(["he", "hello"], padding=True)
    assert batch.input_ids[0, 2:].tolist() == [0, 0, 0]
    assert batch.attention_mask.tolist() == [[1, 1, 0, 0, 0], [1, 1, 1, 1, 1]]


def test_allowed_special_with_template():
    tok = word_tok(post_processor=BERT)
    enc = tok.encode("a [MASK]b", allowed_special=["[MASK]"])
    # "[MASK]b": [MASK] recognised at (2, 8), then "b" at (8, 9)
    assert enc.ids.tolist() == [2, 5, 4, 6, 3]
    np.testing.assert_array_equal(enc.offsets, offsets((0, 0), (0, 1), (2, 8), (8, 9), (0, 0)))
    assert enc.special_tokens_mask.tolist() == [1, 0, 0, 0, 1]


def test_empty_inputs():
    tok = word_tok(post_processor=BERT)
    assert tok.encode("").ids.tolist() == [2, 3]
    assert tok.encode("", "").ids.tolist() == [2, 3, 3]
    assert tok.encode_batch([]) == []
    batch = tok.encode_batch([], padding=True)
    assert batch.input_ids.shape == (0, 0) and batch.offsets.shape == (0, 0, 2) and len(batch) == 0


def test_return_arrays_without_padding():
    tok = word_tok()
    batch = tok.encode_batch(["a b", "c d"], return_arrays=True)
    np.testing.assert_array_equal(batch.input_ids, [[5, 6], [7, 8]])
    assert list(batch.to_dict()) == list(batch.keys()) == ["input_ids", "attention_mask", "token_type_ids",
                                                           "special_tokens_mask", "offsets"]
    assert batch["offsets"].tolist() == [[[0, 1], [2, 3]], [[0, 1], [2, 3]]]
    assert batch[-1] is batch.encodings[1]
    with pytest.raises(KeyError, match="'ids'; the arrays are input_ids"):
        batch["ids"]
    with pytest.raises(TokembedError, match="different lengths \\(1 to 2 tokens\\)"):
        tok.encode_batch(["a", "c d"], return_arrays=True)


# -- errors -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, match", [
    ({"truncation": True, "max_length": 1}, "max_length=1 leaves no room.*adds 2 special"),
    ({"truncation": True, "max_length": 2}, "max_length=2 leaves no room"),
    ({"truncation": True, "max_length": 4, "stride": 2}, "stride=2 must be smaller.*\\(= 2\\)"),
    ({"truncation": True, "max_length": 4, "stride": -1}, "stride must be an int >= 0"),
    ({"truncation": True, "max_length": 5, "truncation_strategy": "longest"}, "truncation_strategy 'longest'"),
    ({"truncation": "shortest_first", "max_length": 5}, "truncation 'shortest_first' is unknown"),
    ({"truncation": "only_first", "truncation_strategy": "only_second", "max_length": 5}, "contradicts"),
    ({"truncation": True, "max_length": 5, "truncation_strategy": "only_second"}, "needs pairs"),
    ({"truncation": True}, "max_length is required"),
    ({"padding": "max_length"}, "needs max_length"),
    ({"stride": 1}, "stride=1 does nothing"),
    ({"pad_to_multiple_of": 8}, "does nothing without padding"),
    # Hugging Face tokenizers pads past max_length here (6 ids for max_length=4); transformers refuses, as we do
    ({"truncation": True, "max_length": 4, "padding": "max_length", "pad_to_multiple_of": 3},
     "max_length=4.*pad_to_multiple_of=3.*not a multiple"),
    ({"padding": "longests"}, "padding must be"),
    ({"padding": True, "padding_side": "top"}, "padding_side"),
    ({"truncation": True, "max_length": 0}, "max_length must be an int >= 1"),
    ({"truncation": True, "max_length": True}, "max_length must be an int"),
])
def test_option_errors(kwargs, match):
    tok = word_tok(post_processor=BERT)
    with pytest.raises(TokembedError, match=match):
        tok.encode("a b c", **kwargs)
    with pytest.raises(TokembedError, match=match):
        tok.encode_batch(["a b c"], **kwargs)


def test_every_bad_numeric_option_is_named_at_once_as_a_parameter_would_be():
    # the options are declared with tokembed.params, so one call names all the bad ones, each with its rule
    tok = word_tok(post_processor=BERT)
    with pytest.raises(ParameterError) as info:
        tok.encode("a b c", truncation=True, max_length=2.0, stride=-1)
    assert [e.param for e in info.value.errors] == ["max_length", "stride"]
    assert str(info.value) == ("2 invalid parameters: max_length must be an int >= 1 or null, got 2.0 (write it "
                               "without a decimal point); stride must be an int >= 0, got -1")
    with pytest.raises(ParameterError, match="^num_workers must be -1 or an int >= 1 or null, got 0$"):
        tok.encode_batch(["a"], num_workers=0)


def test_max_length_alone_is_ignored_as_in_transformers():
    tok = word_tok(post_processor=BERT)
    assert tok.encode("a b c", max_length=2) == tok.encode("a b c")
    batch = tok.encode_batch(["a b c", "d"], padding="longest", max_length=2)
    assert batch.shape == (2, 5)  # longest: [CLS] a b c [SEP]


def test_max_length_counts_pair_specials():
    tok = word_tok(post_processor=BERT)
    tok.encode("a", truncation=True, max_length=3)  # single: 3 - 2 = 1 token of room
    with pytest.raises(TokembedError, match="max_length=3 leaves no room.*adds 3 special token\\(s\\) to a pair"):
        tok.encode("a", "b", truncation=True, max_length=3)


def test_truncation_data_errors():
    tok = word_tok(post_processor=BERT)
    with pytest.raises(TokembedError, match="first text has 1 token\\(s\\) but 2 must be removed"):
        tok.encode("a", "b c d e f", truncation="only_first", max_length=7)
    # room 5 - 3 = 2 shared: each text keeps 1 token, and stride 1 is not smaller than 1
    with pytest.raises(TokembedError, match="stride=1 must be smaller than the 1 token\\(s\\) kept of the first text"):
        tok.encode("a b c", "d e f", truncation=True, max_length=5, stride=1)
    with pytest.raises(TokembedError, match="unknown"):
        truncate(tok.encode("a"), None, 1, strategy="longest")
    with pytest.raises(TokembedError, match="needs a pair"):
        truncate(tok.encode("a"), None, 1, strategy="only_second")


def test_padding_errors():
    tok = word_tok(pad_token=None)
    with pytest.raises(TokembedError, match="padding needs a pad token.*WordTok has no pad_token"):
        tok.encode_batch(["a", "b c"], padding=True)
    # asked for padding is an error even when no row would need a pad token: the outcome must not depend on data
    with pytest.raises(TokembedError, match="padding needs a pad token"):
        tok.encode("a", padding=True)
    with pytest.raises(TokembedError, match="pad token '<pad>' is not in the vocabulary"):
        word_tok(pad_token="<pad>").encode_batch(["a"], padding=True)
    with pytest.raises(TokembedError, match="text 1 has 4 tokens, more than max_length=3"):
        word_tok().encode_batch(["a", "a b c d"], padding="max_length", max_length=3)


def test_input_errors():
    tok = word_tok()
    with pytest.raises(TypeError, match="not one str"):
        tok.encode_batch("a b")
    with pytest.raises(TypeError, match="text 1"):
        tok.encode_batch(["a", 3])
    with pytest.raises(TypeError, match="pair"):
        tok.encode("a", 3)
    with pytest.raises(TokembedError, match="2 texts but 1 pairs"):
        tok.encode_batch(["a", "b"], ["c"])
    for bad in (0, -2, 1.5, True):
        with pytest.raises(TokembedError, match="num_workers"):
            tok.encode_batch(["a"], num_workers=bad)
    with pytest.raises(NotFittedError):
        WordTok().encode_batch(["a"], padding=True)


# -- parity with Hugging Face tokenizers ------------------------------------------------------------------------
PARITY_CASES = [
    # (template, text, pair, options)
    (BERT, "a b c d e f g h i", None, {"truncation": True, "max_length": 5, "stride": 2}),
    (BERT, "a b c d e f g h i", "j a b", {"truncation": True, "max_length": 8, "stride": 1}),
    (BERT, "a b", "c d e f g h i j", {"truncation": True, "max_length": 7, "stride": 1}),
    (BERT, "a b c d", "e f g h", {"truncation": "only_second", "max_length": 9, "stride": 1}),
    (BERT, "a b c d e f", "e f", {"truncation": "only_first", "max_length": 7}),
    (BERT, "a b c", "d e f", {"truncation": True, "max_length": 4}),  # room 1: A keeps 0 tokens, as HF
    (None, "a  b\tzz d e f", "g h i j", {"truncation": True, "max_length": 5, "stride": 1}),
    ({"single": "[CLS] $A", "pair": "[CLS] $A [SEP] $B:1"}, "a b c d e", "f", {"truncation": True, "max_length": 4}),
    ({"single": "$A [SEP]"}, "a b c d e", "f g", {"truncation": True, "max_length": 4}),
    (BERT, "a b c", "d", {"padding": "max_length", "max_length": 9, "padding_side": "left"}),
    (BERT, "a b c d e", None, {"truncation": True, "max_length": 6, "padding": "max_length", "pad_to_multiple_of": 3}),
    (BERT, "a b c", "d", {"padding": True, "pad_to_multiple_of": 4}),
    (BERT, "a b c d e f g", "h i", {"truncation": True, "max_length": 6, "add_special_tokens": False}),
    (BERT, "", "a b c d", {"truncation": True, "max_length": 5}),
]


def hf_for(template, options, batch=False):
    strategy = options.get("truncation", False)
    strategy = options.get("truncation_strategy", "longest_first") if strategy is True else (strategy or None)
    padding = options.get("padding", False)
    padding = "longest" if padding is True else (padding or None)
    return hf_tok(template, truncation=strategy, max_length=options.get("max_length"),
                  stride=options.get("stride", 0), padding=padding,
                  pad_to_multiple_of=options.get("pad_to_multiple_of"),
                  padding_side=options.get("padding_side", "right"))


@pytest.mark.parametrize("template, text, pair, options", PARITY_CASES)
def test_parity_with_hf_encode(template, text, pair, options):
    ours = word_tok(post_processor=template).encode(text, pair, **options)
    add = options.get("add_special_tokens", True)
    theirs = hf_for(template, options).encode(text, pair, add_special_tokens=add)
    assert_same(ours, theirs)


def test_parity_with_hf_batch():
    texts = ["a b c d e f g", "h", "i j a", "zz  b\tc d e f g h"]
    pairs = ["a", "b c d e f", "g", "h i"]
    for options in [
        {"padding": True},
        {"padding": True, "pad_to_multiple_of": 4, "padding_side": "left"},
        {"padding": "max_length", "max_length": 9, "truncation": True, "stride": 1},
        {"padding": "longest", "max_length": 10, "truncation": "only_first"},
    ]:
        for with_pairs in (False, True):
            if options.get("truncation") == "only_first" and not with_pairs:
                continue
            tok = word_tok(post_processor=BERT)
            ours = tok.encode_batch(texts, pairs if with_pairs else None, **options)
            hf_inputs = list(zip(texts, pairs)) if with_pairs else texts
            theirs = hf_for(BERT, options).encode_batch(hf_inputs)
            assert len(ours) == len(theirs)
            for mine, other in zip(ours, theirs):
                assert_same(mine, other)
            np.testing.assert_array_equal(ours.input_ids, [t.ids for t in theirs])
            np.testing.assert_array_equal(ours.attention_mask, [t.attention_mask for t in theirs])
            np.testing.assert_array_equal(ours.token_type_ids, [t.type_ids for t in theirs])
            np.testing.assert_array_equal(ours.special_tokens_mask, [t.special_tokens_mask for t in theirs])
            np.testing.assert_array_equal(ours.offsets, [t.offsets for t in theirs])


_TEMPLATES = [None, BERT, {"single": "[CLS] $A", "pair": "$A [SEP] [MASK]:1 $B:1"}, {"single": "$A [SEP] [SEP]"}]


@st.composite
def _texts(draw, min_size=0):
    n = draw(st.integers(min_size, 12))
    words = draw(st.lists(st.sampled_from(WORDS + ["zz", "[CLS]"]), min_size=n, max_size=n))
    seps = draw(st.lists(st.sampled_from([" ", "  ", "\t"]), min_size=len(words), max_size=len(words)))
    return "".join(w + s for w, s in zip(words, seps)).rstrip(" ") if words else ""


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_parity_with_hf_property(data):
    template = data.draw(st.sampled_from(_TEMPLATES))
    text = data.draw(_texts())
    pair = data.draw(st.none() | _texts())
    add = data.draw(st.booleans())
    tp = TemplateProcessing.from_spec(template or {"single": "$A"})
    n_added = tp.num_special_tokens(pair is not None) if add else 0
    # HF checks stride against max_length minus the SINGLE template's tokens when truncation is enabled, whatever
    # the call then does; keep the drawn options valid for both
    n_checked = max(n_added, tp.num_special_tokens(False))
    options: dict[str, Any] = {"add_special_tokens": add}
    strategies = ["longest_first", "only_first"] + (["only_second"] if pair is not None else [])
    strategy = data.draw(st.sampled_from([*strategies, None]))
    if strategy is not None:
        max_length = data.draw(st.integers(n_checked + 1, n_checked + 6))
        stride = data.draw(st.integers(0, max_length - n_checked - 1))
        options.update(truncation=True, truncation_strategy=strategy, max_length=max_length, stride=stride)
    padding = data.draw(st.sampled_from([False, "longest", "max_length"]))
    if padding:
        options["padding"] = padding
        options["padding_side"] = data.draw(st.sampled_from(["right", "left"]))
        options["pad_to_multiple_of"] = data.draw(st.none() | st.integers(1, 5))
        if padding == "max_length" and "max_length" not in options:
            options["max_length"] = data.draw(st.integers(1, 12))
    tok = word_tok(post_processor=template)
    if strategy is not None and options.get("pad_to_multiple_of") and max_length % options["pad_to_multiple_of"]:
        # Hugging Face would pad past max_length; we refuse (as transformers does)
        with pytest.raises(TokembedError, match="not a multiple"):
            tok.encode(text, pair, **options)
        return
    oracle = hf_for(template, options)
    try:
        ours = tok.encode(text, pair, **options)
    except TokembedError:
        # our errors here are HF's "sequence too short" error and its panic on a stride too large for a text
        with pytest.raises(BaseException) as info:
            oracle.encode(text, pair, add_special_tokens=add)
        assert type(info.value).__name__ in ("Exception", "PanicException")
        return
    assert_same(ours, oracle.encode(text, pair, add_special_tokens=add))


# -- thread safety ----------------------------------------------------------------------------------------------
def test_concurrent_calls_with_different_options_match_serial():
    tok = word_tok(post_processor=BERT)
    texts = ["a b c d e f g h i j " * k + "zz" for k in range(1, 6)]
    option_sets = [
        {},
        {"add_special_tokens": False},
        {"truncation": True, "max_length": 6, "stride": 2},
        {"truncation": True, "max_length": 9, "padding": "max_length", "padding_side": "left"},
        {"post_processor": {"single": "$A [MASK]"}, "padding": True, "pad_to_multiple_of": 8},
    ]
    jobs = [(t, o) for t in texts for o in option_sets] * 8
    serial = [tok.encode(t, **o) for t, o in jobs]
    barrier = threading.Barrier(8)

    def run(job):
        text, opts = job
        try:
            barrier.wait(timeout=0.05)  # start the first calls together
        except threading.BrokenBarrierError:
            pass
        return tok.encode(text, **opts)

    with ThreadPoolExecutor(max_workers=8) as pool:
        concurrent = list(pool.map(run, jobs))
    assert concurrent == serial
    assert tok.post_processor == BERT


def test_num_workers_gives_serial_results():
    tok = word_tok(post_processor=BERT)
    texts = [" ".join(WORDS[: 1 + k % 10]) for k in range(57)]
    pairs = [" ".join(WORDS[k % 7:]) for k in range(57)]
    options = {"truncation": True, "max_length": 9, "stride": 1, "padding": True}
    serial = tok.encode_batch(texts, pairs, **options)
    for workers in (2, 3, -1):
        threaded = tok.encode_batch(texts, pairs, num_workers=workers, **options)
        assert threaded.encodings == serial.encodings
        np.testing.assert_array_equal(threaded.input_ids, serial.input_ids)
    assert tok.encode_batch(texts, num_workers=2) == [tok.encode(t) for t in texts]
