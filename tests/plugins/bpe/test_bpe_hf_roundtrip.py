"""tokenizer.json export and import of BPE, checked against Hugging Face ``tokenizers`` on held-out hard text.

Every configuration a recipe can express (normalizers, pre-tokenizers, byte level, suffix/prefix, unknown
characters, special tokens, templates, dropout) is exported, loaded in ``tokenizers``, and must give the same ids,
tokens and offsets on text the tokenizer never saw, one text and pairs; our own re-import must too.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from tokembed.errors import TokembedError
from tokembed.plugins.bpe.hf_regex import RegexDialectError, from_oniguruma, to_oniguruma
from tokembed.plugins.bpe.hf_stages import LossyConversionWarning
from tokembed.plugins.bpe.tokenizer import BPETokenizer

from _bpe_data import GPT2_RANKS, UNICODE_TEXTS, moby_text

tokenizers = pytest.importorskip("tokenizers")

MULTILINGUAL = Path(__file__).resolve().parents[2] / "fixtures" / "multilingual"
#: tiktoken's cl100k_base pattern (tiktoken_ext/openai_public.py), possessive quantifiers and `$` included.
CL100K = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
#: Text where the stages of the two libraries could part: every kind of case mapping, mark, space and digit run.
EXTRA = [
    "हिन्दी भाषा और देवनागरी लिपि", "किताबें पढ़ना",
    "numbers 1 12 123 1234 12345678 3.14159 ١٢٣٤٥ 1,000,000",
    "sep\x1cfile\x1dgroup\x1erecord\x1funit  end", "tab\there\r\nwindows\rmac\n\nend  \n  ",
    "İstanbul ΟΔΟΣ ǅemal ß ﬁne ﬀ ſtraße Kelvin \u212a Å",
    "quotes “double” ‘single’ «guillemets» — dash – en … ellipsis",
    "CJK 漢字かな交じり文 and 中文标点，。！ mixed日本語text",
    "مرحبا\u061dبالعالم \u166d end", "emoji 😀😃 👩🏽‍🚀 🇫🇷 ✌️ text",
    "trailing spaces   ", "   leading", "it's 'tis DON'T I'LL We'Ve",
    "x" * 40 + " unknownish Ωmega ẞharp \U0001f9ec",
]


def _lines() -> tuple[list[str], list[str]]:
    train, held = [], []
    for f in sorted(MULTILINGUAL.glob("*.txt")):
        lines = [ln for ln in f.read_text(encoding="utf-8").splitlines() if ln.strip()]
        train += lines[::2]
        held += lines[1::2]
    moby = moby_text().splitlines()
    return moby[:1500] + train, moby[20000:20150] + held + UNICODE_TEXTS + EXTRA


TRAIN, HELD_OUT = _lines()
PAIRS = list(zip(HELD_OUT[::2], HELD_OUT[1::2]))


def fit(**params) -> BPETokenizer:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return BPETokenizer(**{"vocab_size": 900, **params}).fit(TRAIN)


def agree(ours, hf, text, pair=None, segments=False):
    """Ids, tokens, offsets (and type ids) of our encoding and Hugging Face's are the same.

    ``segments``: the tokenizer has a Unicode normalization form (nfc ... nfkd, or strip_accents, which starts with
    NFD). tokembed then aligns every character of a segment that the form rewrites (a letter and its combining
    marks, ``docs/text.md``) to the segment's whole source span, where Hugging Face aligns each to one source
    character: there our span must contain Hugging Face's, and elsewhere equal it.
    """
    a = ours.encode(text, pair)
    b = hf.encode(text, pair)
    offsets = [tuple(o) for o in a.offsets.tolist()]
    if (a.ids.tolist(), a.tokens, a.type_ids.tolist()) != (b.ids, b.tokens, b.type_ids):
        return False
    if not segments:
        return offsets == b.offsets
    return all(s <= hs and he <= e for (s, e), (hs, he) in zip(offsets, b.offsets))


def disagreements(ours, hf, texts=HELD_OUT, pairs=(), segments=False):
    bad = [t for t in texts if not agree(ours, hf, t, segments=segments)]
    bad += [p for p in pairs if not agree(ours, hf, *p, segments=segments)]
    return bad


def has_unicode_form(tok) -> bool:
    spec = tok.get_params()["normalizer"]
    return any(s in ("nfc", "nfd", "nfkc", "nfkd", "strip_accents") for s in ([spec] if isinstance(spec, str)
                                                                              else spec or []))


TEMPLATE = {"single": "<s> $A </s>", "pair": "<s> $A </s> </s>:1 $B:1 </s>:1"}
#: Every configuration a recipe can express, by the stage it exercises.
CONFIGS = {
    "char-suffix-word_punct": {"end_of_word_suffix": "</w>", "pre_tokenizer": "word_punct"},
    "char-prefix-whitespace_split": {"continuing_subword_prefix": "##", "pre_tokenizer": "whitespace_split"},
    "char-suffix-and-prefix-bert": {"end_of_word_suffix": "</w>", "continuing_subword_prefix": "##",
                                    "pre_tokenizer": "bert"},
    "char-gpt2-unk-limit_alphabet": {"pre_tokenizer": "gpt2", "limit_alphabet": 60},
    "char-identity": {"pre_tokenizer": None, "end_of_word_suffix": "</w>", "vocab_size": 400},
    "char-regex-cl100k": {"pre_tokenizer": {"type": "regex", "pattern": CL100K}},
    "char-regex-simple": {"pre_tokenizer": {"type": "regex", "pattern": r"\w+|[^\w\s]"}},
    "norm-nfc-nfd": {"normalizer": ["nfc", "nfd"], "end_of_word_suffix": "</w>"},
    "norm-nfkc-lowercase": {"normalizer": ["nfkc", "lowercase"], "end_of_word_suffix": "</w>"},
    "norm-nfkd-strip_accents": {"normalizer": ["nfkd", "strip_accents"], "end_of_word_suffix": "</w>"},
    "norm-strip_accents": {"normalizer": "strip_accents", "end_of_word_suffix": "</w>"},
    "norm-bert_clean-all": {"normalizer": ["bert_clean", "nfd", "strip_accents", "lowercase"],
                            "pre_tokenizer": "bert", "end_of_word_suffix": "</w>"},
    "byte-gpt2-specials-template": {"byte_level": True, "special_tokens": ["<s>", "</s>"], "pad_token": "<pad>",
                                    "post_processor": TEMPLATE},
    "byte-identity": {"byte_level": True, "pre_tokenizer": None, "vocab_size": 500},
    "byte-word_punct-nfkc": {"byte_level": True, "pre_tokenizer": "word_punct", "normalizer": "nfkc"},
    "byte-whitespace_split": {"byte_level": True, "pre_tokenizer": "whitespace_split"},
    "byte-bert-bert_clean": {"byte_level": True, "pre_tokenizer": "bert", "normalizer": "bert_clean"},
    "byte-cl100k": {"byte_level": True, "pre_tokenizer": {"type": "regex", "pattern": CL100K}},
    "char-template-unk-specials": {"end_of_word_suffix": "</w>", "special_tokens": ["<s>", "</s>"],
                                   "post_processor": TEMPLATE, "initial_alphabet": "xyz"},
}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_export_encodes_held_out_hard_text_identically_in_tokenizers_and_on_reimport(name, tmp_path):
    ours = fit(**CONFIGS[name])
    path = tmp_path / "tokenizer.json"
    ours.to_hf_json(path)
    hf = tokenizers.Tokenizer.from_file(str(path))
    assert hf.get_vocab() == ours.get_vocab()
    pairs = PAIRS if ours.get_params()["post_processor"] else PAIRS[:10]
    assert disagreements(ours, hf, pairs=pairs, segments=has_unicode_form(ours)) == []
    again = BPETokenizer.from_hf_json(path)
    assert again.get_vocab() == ours.get_vocab() and again.merges_ == ours.merges_
    assert [t for t in HELD_OUT if again.encode(t) != ours.encode(t)] == []
    assert [p for p in pairs if again.encode(*p) != ours.encode(*p)] == []


def test_dropout_is_exported_and_read_back(tmp_path):
    ours = fit(end_of_word_suffix="</w>", dropout=0.25)
    ours.to_hf_json(tmp_path / "tokenizer.json")
    model = json.loads((tmp_path / "tokenizer.json").read_text(encoding="utf-8"))["model"]
    assert model["dropout"] == 0.25
    assert tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json")).model.dropout == pytest.approx(0.25)
    assert BPETokenizer.from_hf_json(tmp_path / "tokenizer.json").get_params()["dropout"] == 0.25


# -- the observed cases of the issue, one each ------------------------------------------------------------------
def test_cl100k_pattern_exports_instead_of_a_type_error(tmp_path):
    tok = BPETokenizer.from_tiktoken(GPT2_RANKS, pattern=CL100K)
    tok.to_hf_json(tmp_path / "x.json")  # was: TypeError: unhashable type: 'dict'
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "x.json"))
    text = "in 1234567 rooms, 12 are free\n\n  and 3.14159 more  "
    # cl100k's \p{N}{1,3}+ takes at most three digits; copied as is, Oniguruma would read a repeat (all digits)
    assert [t for t in hf.encode(text).tokens if t.isdigit()] == ["123", "456", "7", "12", "3", "141", "59"]
    assert disagreements(tok, hf) == []


def test_byte_level_template_is_exported():
    from tempfile import TemporaryDirectory

    with pytest.warns(UserWarning, match="no pair is left"):
        tok = BPETokenizer(vocab_size=300, byte_level=True, min_frequency=1, special_tokens=["<s>", "</s>"],
                           post_processor={"single": "<s> $A </s>"}).fit(["the fox the fox"])
    assert tok.encode("the fox").tokens == ["<s>", "the", "Ġfox", "</s>"]
    with TemporaryDirectory() as d:
        tok.to_hf_json(Path(d) / "y.json")
        assert tokenizers.Tokenizer.from_file(str(Path(d) / "y.json")).encode("the fox").tokens == \
            ["<s>", "the", "Ġfox", "</s>"]
        assert BPETokenizer.from_hf_json(Path(d) / "y.json").encode("the fox").tokens == \
            ["<s>", "the", "Ġfox", "</s>"]


def test_bert_clean_reads_back_and_stock_char_bpe_files_are_read(tmp_path):
    tok = fit(normalizer="bert_clean", end_of_word_suffix="</w>")
    tok.to_hf_json(tmp_path / "z.json")
    assert BPETokenizer.from_hf_json(tmp_path / "z.json").get_params()["normalizer"] == "bert_clean"
    # Hugging Face's stock CharBPETokenizer: BertNormalizer(lowercase=False) (clean_text, CJK padding, and
    # strip_accents following lowercase) and BertPreTokenizer
    from tokenizers import CharBPETokenizer

    hf = CharBPETokenizer()
    hf.train_from_iterator(TRAIN, vocab_size=900, min_frequency=2, show_progress=False)
    hf.save(str(tmp_path / "char.json"))
    ours = BPETokenizer.from_hf_json(tmp_path / "char.json")
    assert ours.get_params()["normalizer"] == "bert_clean" and ours.get_params()["pre_tokenizer"] == "bert"
    # BertPreTokenizer's punctuation table predates U+061D and U+166D (docs/text.md), which tokembed isolates
    assert [t for t in HELD_OUT if ours.encode(t).ids.tolist() != hf.encode(t).ids] == ["مرحبا\u061dبالعالم \u166d end"]


def test_bert_normalizer_without_an_equivalent_suggests_bert_clean(tmp_path):
    data = {"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "pre_tokenizer": {"type": "Whitespace"},
            "normalizer": {"type": "Replace", "pattern": {"String": "a"}, "content": "b"}}
    (tmp_path / "t.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(TokembedError, match="bert_clean"):
        BPETokenizer.from_hf_json(tmp_path / "t.json")
    data["normalizer"] = {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                          "strip_accents": None, "lowercase": False}
    (tmp_path / "t.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(TokembedError, match="handle_chinese_chars"):  # pads CJK: only before BertPreTokenizer
        BPETokenizer.from_hf_json(tmp_path / "t.json")


def test_strip_accents_exports_to_the_same_ids_on_devanagari(tmp_path):
    tok = fit(normalizer="strip_accents", end_of_word_suffix="</w>")
    tok.to_hf_json(tmp_path / "w.json")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "w.json"))
    assert hf.encode("हिन्दी").ids == tok.encode("हिन्दी").ids.tolist()  # was 5 ids in the export, 8 in ours


def test_hf_strip_accents_is_read_only_when_lossy_is_asked(tmp_path):
    data = {"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "pre_tokenizer": {"type": "Whitespace"},
            "normalizer": {"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "StripAccents"}]}}
    (tmp_path / "t.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(TokembedError, match="lossy=True"):
        BPETokenizer.from_hf_json(tmp_path / "t.json")
    with pytest.warns(LossyConversionWarning, match="Mc"):
        tok = BPETokenizer.from_hf_json(tmp_path / "t.json", lossy=True)
    assert tok.get_params()["normalizer"] == ["nfd", "strip_accents"]


def test_a_regex_without_an_oniguruma_equivalent_is_a_clear_error(tmp_path):
    tok = fit(pre_tokenizer={"type": "regex", "pattern": r"(?x) \w+ | \S"}, vocab_size=300)
    with pytest.raises(TokembedError, match=r"inline flag 'x'.*rewrite the pattern"):
        tok.to_hf_json(tmp_path / "t.json")
    assert not (tmp_path / "t.json").exists()


@pytest.mark.parametrize("ours, onig", [
    (r"\p{N}{1,3}+", r"(?>\p{N}{1,3})"), (r"a$", r"a(?=\n?\z)"), (r"^a", r"\Aa"), (r"a\Z", r"a\z"),
    (r"(?P<w>\w)(?P=w)", r"(?<w>\w)\k<w>"), (r"\U0001F600|\u00e9", r"\x{1F600}|\x{E9}"), (r"(?s:.)", r"(?m:.)"),
    (r"[[a]", r"[\[a]"), (r"\N{BULLET}", r"\x{2022}"), (r"\p{Script=Han}", r"\p{Han}"),
])
def test_regex_dialect_translation_and_its_meaning_in_both_engines(ours, onig):
    import regex

    assert to_oniguruma(ours) == onig
    back = from_oniguruma(onig)
    for text in ["1234567", "a\nb a", "aa\nab", "ww x", "😀é", "x\ny", "[a", "•", "漢a"]:
        expect = [m.group() for m in regex.finditer(ours, text) if m.group()]
        hf = tokenizers.pre_tokenizers.Split(tokenizers.Regex(onig), "removed", invert=True)
        assert [p for p, _ in hf.pre_tokenize_str(text)] == expect, text
        assert [m.group() for m in regex.finditer(back, text) if m.group()] == expect, text


@pytest.mark.parametrize("pattern, what", [(r"a\Kb", r"\\K"), (r"[[:alpha:]]", "POSIX"), (r"(?(1)a|b)", "group"),
                                           (r"a(?i)b", "flag group")])
def test_regex_constructs_without_equivalent_are_named(pattern, what):
    with pytest.raises(RegexDialectError, match=what):
        to_oniguruma(pattern)


def test_hf_isolated_split_with_any_pattern_is_read(tmp_path):
    # tiktoken-style files written by Hugging Face: Split(Isolated) then ByteLevel(use_regex=false)
    hf = tokenizers.Tokenizer(tokenizers.models.BPE())
    hf.pre_tokenizer = tokenizers.pre_tokenizers.Sequence([
        tokenizers.pre_tokenizers.Split(tokenizers.Regex(r"\p{N}{1,3}| ?\p{L}+"), "isolated"),
        tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    trainer = tokenizers.trainers.BpeTrainer(vocab_size=600, show_progress=False,
                                             initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet())
    hf.train_from_iterator(TRAIN, trainer)
    hf.save(str(tmp_path / "t.json"))
    ours = BPETokenizer.from_hf_json(tmp_path / "t.json")
    assert [t for t in HELD_OUT if ours.encode(t).ids.tolist() != hf.encode(t).ids] == []
