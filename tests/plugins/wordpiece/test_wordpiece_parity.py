"""WordPiece against Hugging Face tokenizers and llama.cpp's reference ids, with the bert-base-uncased vocabulary.

Fixtures (see NOTICE): ``tests/fixtures/bert-base-uncased-vocab.txt`` (30,522 entries, Apache-2.0, rebuilt from
llama.cpp's ``ggml-vocab-bert-bge.gguf``) and ``ggml-vocab-bert-bge.gguf.inp`` / ``.out`` (llama.cpp, MIT): input
texts separated by ``"\\n__ggml_vocab_test__\\n"`` and, one line per text, the ids llama.cpp expects (no
[CLS]/[SEP]).
"""

from __future__ import annotations

import gzip
from importlib import resources
from pathlib import Path

import pytest

from tokembed.plugins.wordpiece.tokenizer import WordPieceTokenizer

tokenizers = pytest.importorskip("tokenizers")

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
VOCAB = FIXTURES / "bert-base-uncased-vocab.txt"

#: Written for these tests: accents, CJK, emoji, Devanagari, Arabic, Cyrillic, Greek, Korean, mixed scripts,
#: combining marks, control and format characters, odd whitespace.
MULTILINGUAL = [
    "Crème brûlée, café au lait and a piñata: naïve façades in Zürich.",
    "Ångström, Øresund, Łódź, Dvořák, São Paulo, İstanbul, ΑΘΗΝΑ and Ὀδυσσεύς.",
    "東京は日本の首都です。北京是中国的首都，上海也很大！",
    "漢字とひらがなとカタカナ、そして한국어 문장도 있습니다.",
    "Emoji: 😀 👍🏽 🇫🇷 👨‍👩‍👧 ❤️ and text🙂mixed.",
    "हिन्दी भारत की राजभाषा है। नमस्ते दुनिया!",
    "العربية لغة جميلة، مرحبا بالعالم! ٣٤٥",
    "Русский текст: Москва — столица России. «Цитата»",
    "Tabs\tand\u00a0non-breaking\u2003spaces\u3000here, zero\u200bwidth, soft\u00adhyphen.",
    "Decomposed e\u0301 and precomposed \u00e9; ligature \ufb01ne; \u2126hm; \u212bngstr\u00f6m.",
    "Numbers 3.14159, 1,000,000 and 12:30pm; emails a.b@c.org; URLs https://x.y/z?q=1&r=2.",
    "Control\x00chars\x07in\ufffdtext\x1fhere and CRLF\r\nline.",
    "UPPER lower MiXeD O'Neill don't won't I'm you're we've",
]


@pytest.fixture(scope="module")
def ours() -> WordPieceTokenizer:
    return WordPieceTokenizer.from_vocab_file(VOCAB, post_processor={"single": "[CLS] $A [SEP]",
                                                                     "pair": "[CLS] $A [SEP] $B:1 [SEP]:1"})


@pytest.fixture(scope="module")
def hf():
    return tokenizers.BertWordPieceTokenizer(str(VOCAB), lowercase=True)


def gguf_cases() -> list[tuple[str, list[int]]]:
    texts = (FIXTURES / "ggml-vocab-bert-bge.gguf.inp").read_text(encoding="utf-8").split("\n__ggml_vocab_test__\n")
    assert texts[-1] == ""  # every text ends with the separator
    texts = texts[:-1]
    lines = (FIXTURES / "ggml-vocab-bert-bge.gguf.out").read_text(encoding="utf-8").split("\n")[:-1]
    assert len(texts) == len(lines) == 46
    return [(t, [int(x) for x in line.split()]) for t, line in zip(texts, lines)]


def moby_lines() -> list[str]:
    raw = (resources.files("tokembed") / "samples" / "moby-dick.txt.gz").read_bytes()
    return gzip.decompress(raw).decode("utf-8").splitlines()


def test_vocabulary_is_bert_base_uncased(ours):
    assert ours.get_vocab_size() == 30522
    assert [ours.token_to_id(t) for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")] == [0, 100, 101, 102, 103]
    assert ours.special_tokens_ == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert ours.id_to_token(7592) == "hello" and ours.id_to_token(2094) == "##d"


def test_llama_cpp_reference_ids(ours):
    cases = gguf_cases()
    got = ours.encode_batch([t for t, _ in cases], add_special_tokens=False)
    for (text, expected), enc in zip(cases, got):
        assert enc.ids.tolist() == expected, text
    # one by one, with the template: [CLS] = 101 ... [SEP] = 102
    for text, expected in cases[:12]:
        assert ours.encode(text).ids.tolist() == [101, *expected, 102]


def test_hugging_face_agrees_with_the_reference_ids(hf):
    for text, expected in gguf_cases():
        assert hf.encode(text, add_special_tokens=False).ids == expected, text


def _compare(ours, hf, texts):
    mine = ours.encode_batch(texts)
    theirs = hf.encode_batch(texts)
    for text, a, b in zip(texts, mine, theirs):
        assert a.ids.tolist() == b.ids, text
        assert a.tokens == b.tokens, text
        assert [tuple(o) for o in a.offsets.tolist()] == b.offsets, text
        assert a.special_tokens_mask.tolist() == b.special_tokens_mask
        assert a.type_ids.tolist() == b.type_ids


def test_ids_tokens_and_offsets_equal_hugging_face_on_moby_dick(ours, hf):
    lines = moby_lines()
    assert len(lines) > 20000
    _compare(ours, hf, lines)


def test_ids_tokens_and_offsets_equal_hugging_face_on_multilingual_text(ours, hf):
    _compare(ours, hf, MULTILINGUAL)
    _compare(ours, hf, ["\n".join(MULTILINGUAL)])


def test_pairs_equal_hugging_face(ours, hf):
    pairs = list(zip(MULTILINGUAL, MULTILINGUAL[1:]))
    mine = ours.encode_batch([a for a, _ in pairs], [b for _, b in pairs])
    theirs = hf.encode_batch(pairs)
    for a, b in zip(mine, theirs):
        assert a.ids.tolist() == b.ids and a.type_ids.tolist() == b.type_ids


def test_long_words_become_one_unk_as_in_hugging_face(ours, hf):
    # max_input_chars_per_word = 100: a 100-character word is split normally, a 101-character one is [UNK] (0, 101)
    for n in (99, 100, 101, 150):
        text = "a" * n
        mine, theirs = ours.encode(text, add_special_tokens=False), hf.encode(text, add_special_tokens=False)
        assert mine.ids.tolist() == theirs.ids and [tuple(o) for o in mine.offsets.tolist()] == theirs.offsets
    assert ours.encode("a" * 101, add_special_tokens=False).tokens == ["[UNK]"]
    assert ours.encode("a" * 101, add_special_tokens=False).offsets.tolist() == [[0, 101]]
    assert ours.encode("a" * 100, add_special_tokens=False).tokens[0] == "aaa"
    # after normalization: a word of 100 accented letters is 100 characters once the accents are stripped
    assert ours.encode("\u00e9" * 100, add_special_tokens=False).tokens[0] != "[UNK]"


def test_decode_equals_hugging_face_wordpiece_decoder(ours, hf):
    for text in MULTILINGUAL + [l for l in moby_lines()[:400] if l]:
        ids = ours.encode(text).ids.tolist()
        assert ours.decode(ids, skip_special_tokens=True) == hf.decode(ids, skip_special_tokens=True), text
        assert ours.decode(ids) == hf.decode(ids, skip_special_tokens=False), text


def test_hf_json_export_loads_in_hugging_face_and_encodes_alike(ours, tmp_path):
    path = tmp_path / "tokenizer.json"
    ours.to_hf_json(path)
    theirs = tokenizers.Tokenizer.from_file(str(path))
    texts = MULTILINGUAL + moby_lines()[:300]
    for text, mine in zip(texts, ours.encode_batch(texts)):
        assert theirs.encode(text).ids == mine.ids.tolist(), text
    assert theirs.decode(ours.encode(MULTILINGUAL[0]).ids.tolist()) == ours.decode(
        ours.encode(MULTILINGUAL[0]).ids, skip_special_tokens=True)


def test_hf_json_import_of_a_hugging_face_file(hf, tmp_path):
    path = tmp_path / "bert.json"
    hf.save(str(path))
    loaded = WordPieceTokenizer.from_hf_json(path)
    assert loaded.get_vocab_size() == 30522 and loaded.lowercase is True and loaded.strip_accents is None
    assert loaded.post_processor == {"single": "[CLS] $A [SEP]", "pair": "[CLS] $A [SEP] $B:1 [SEP]:1"}
    for text in MULTILINGUAL:
        assert loaded.encode(text).ids.tolist() == hf.encode(text).ids
    rebuilt = WordPieceTokenizer(**loaded.get_params()).fit([])
    assert rebuilt.get_vocab() == loaded.get_vocab()


def test_frequency_training_overlaps_hugging_face_wordpiece_trainer():
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    text = moby_lines()[:4000]  # about 250 KB of the bundled Moby Dick
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    ref = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    ref.normalizer = normalizers.BertNormalizer(lowercase=True)
    ref.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(vocab_size=2000, min_frequency=2, special_tokens=specials,
                                        show_progress=False)
    ref.train_from_iterator(text, trainer)
    theirs = set(ref.get_vocab())
    mine = WordPieceTokenizer(vocab_size=2000, min_frequency=2, scoring="frequency", show_progress=False).fit(text)
    assert mine.get_vocab_size() == len(theirs) == 2000
    common = len(set(mine.get_vocab()) & theirs)
    assert common >= 0.95 * 2000, common


def test_likelihood_training_differs_from_frequency():
    # the criteria agree on the alphabet and disagree on merges: likelihood prefers pairs of rare symbols
    text = moby_lines()[:2000]
    lik = WordPieceTokenizer(vocab_size=600, show_progress=False).fit(text)
    freq = WordPieceTokenizer(vocab_size=600, scoring="frequency", show_progress=False).fit(text)
    assert len(set(lik.get_vocab()) ^ set(freq.get_vocab())) > 100
    assert "the" in freq.get_vocab()
