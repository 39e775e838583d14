"""Tests of tokembed.text: normalizers with alignments, pre-tokenizers with spans, split_text.

Oracles: ``unicodedata`` / ``str`` calls on the whole string, plain-Python reference implementations written here,
the ``regex`` package, and Hugging Face ``tokenizers`` (parity on pieces and offsets).
"""

from __future__ import annotations

import doctest
import gzip
import importlib
import json
import subprocess
import sys
import unicodedata
from pathlib import Path

import numpy as np
import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tokembed.text
from tokembed.errors import TokembedError
from tokembed.text import (
    NORMALIZERS,
    PRE_TOKENIZERS,
    NormalizedText,
    TextStageError,
    build_normalizer,
    build_pre_tokenizer,
    split_text,
    split_text_arrays,
)
from tokembed.text._unicode import backward_combiners
from tokembed.text.pre_tokenizers import WORD_PUNCT_PATTERN

tokenizers = pytest.importorskip("tokenizers")

ROOT = Path(__file__).resolve().parents[2]
MOBY = ROOT / "framework" / "samples" / "moby-dick.txt.gz"

# Characters chosen to exercise every rule: combining marks (incl. the ones whose decomposition starts with a
# non-starter), Hangul conjoining and compatibility jamo, Indic/Myanmar/Balinese starters that compose backward,
# singletons (Ohm, Kelvin, Angstrom), ligatures, fullwidth forms, presentation forms, Greek sigma, dotted I,
# controls, format characters, all kinds of spaces, CJK, emoji, and a lone surrogate.
TRICKY = (
    "aeiouAEIOUsSnN \t\n\r\x0b\x0c\x1c\x1f\x00\x85\xa0 _-.,!?'\"()$%"
    "\u0300\u0301\u0302\u0308\u0327\u0323\u031b\u0344\u0345\u0488\u20dd"
    "\u0f71\u0f72\u0f73\u0f75\u0f81\u0fb5\u0fb7"
    "\u1100\u1101\u1161\u1162\u11a8\u11a9\uac00\uac01\u3131\u314f\u3133\uffa0\uffc2"
    "\u09c7\u09be\u09d7\u0b47\u0b3e\u0b56\u0b57\u0cbf\u0cc6\u0cc2\u0cd5\u0dd9\u0dcf\u1025\u102e\u1b05\u1b35"
    "\u2126\u212a\u212b\u00c5\u00e9\u1e9b\u1ec7\ufb01\ufb03\ufe30\uff21\uff41\uff10\u2474\u00bd\u2460"
    "\u03a3\u03c3\u03c2\u0130\u0131\u00df\u1e9e\u0149\u01f0"
    "\u200b\u200d\ufeff\u00ad\u2028\u2029\u3000\u2003\u1680\ufffd\ue000"
    "\u6771\u4eac\u3400\uf900\U00020000\u3002\uff0c\U0001f600\U0001f44d\u0627\u0644\u0915\u094d\u0937\u093f"
    "\ud800\udfff"
)
tricky_text = st.text(alphabet=st.sampled_from(TRICKY), max_size=40)
any_text = st.one_of(tricky_text, st.text(max_size=40))

# For parity with Hugging Face: characters whose properties agree across Unicode versions (assigned long ago).
PARITY = (
    "abcXYZ019 _\t\n.,;:!?'\"()[]{}<>@#$%&*+-=/\\|~^`"
    "\u00e9\u00e8\u00fc\u00f1\u00e7\u00c9\u00df\u0301\u0308\u0327 \u00a0\u2003\u3000\u2028"
    "\u03b1\u03b2\u03a3\u03c3\u0416\u0436\u0627\u0644\u05d0\u0915\u093f\u094d\u0e01\u0e31"
    "\u6771\u4eac\u3042\u30a2\uac00\u2019\u201c\u201d\u2014\u00bf\u00a1\u00b7\u3002\uff0c\u2026"
    "\u00b2\u0660\u2153\u20ac\u00a3\u00a9\u2122\u2192\U0001f600\u0130"
)
parity_text = st.text(alphabet=st.sampled_from(PARITY), max_size=60)

FORMS = ("NFC", "NFD", "NFKC", "NFKD")


def check_alignment(nt: NormalizedText) -> None:
    """Structural invariants of every built-in stage's alignment."""
    a = nt.alignments
    assert a.dtype == np.int64 and a.shape == (len(nt.normalized), 2)
    if len(a):
        assert (a[:, 0] >= 0).all() and (a[:, 1] <= len(nt.original)).all()
        assert (a[:, 0] < a[:, 1]).all()
        assert (np.diff(a[:, 0]) >= 0).all() and (np.diff(a[:, 1]) >= 0).all()


def segments(nt: NormalizedText) -> list[tuple[tuple[int, int], str]]:
    """Group consecutive output characters that share one original span."""
    groups: list[tuple[tuple[int, int], str]] = []
    for ch, (s, e) in zip(nt.normalized, nt.alignments.tolist()):
        if groups and groups[-1][0] == (s, e):
            groups[-1] = ((s, e), groups[-1][1] + ch)
        else:
            groups.append(((s, e), ch))
    return groups


# ----------------------------------------------------------------------------------------------------------------
# NormalizedText


def test_required_nfkc_example_maps_both_dots_to_the_one_source_char():
    nt = build_normalizer("nfkc").normalize("x\ufe30y")
    assert nt.normalized == "x..y"
    # U+FE30 (index 1) expands to two dots: both come from original span (1, 2).
    assert nt.alignments.tolist() == [[0, 1], [1, 2], [1, 2], [2, 3]]
    assert nt.original_span(1, 2) == (1, 2)
    assert nt.original_span(2, 3) == (1, 2)
    assert nt.original_span(1, 3) == (1, 2)
    assert nt.original_span(0, 4) == (0, 3)


def test_original_span_empty_spans_and_bounds():
    nt = build_normalizer("bert_clean").normalize("\x00ab\x00")  # normalized "ab" from original indices 1, 2
    assert nt.normalized == "ab"
    assert nt.alignments.tolist() == [[1, 2], [2, 3]]
    assert nt.original_span(0, 0) == (1, 1)  # empty span at char 0 -> start of its source
    assert nt.original_span(1, 1) == (2, 2)
    assert nt.original_span(2, 2) == (3, 3)  # at the end -> end of the last char's source
    assert nt.original_span(0, 2) == (1, 3)
    for bad in [(-1, 1), (0, 3), (2, 1)]:
        with pytest.raises(IndexError):
            nt.original_span(*bad)
    empty = build_normalizer("bert_clean").normalize("\x00\x00")
    assert empty.normalized == "" and empty.alignments.shape == (0, 2)
    assert empty.original_span(0, 0) == (0, 0)
    one = NormalizedText.unchanged("abc")
    assert one.original_span(3, 3) == (3, 3) and one.original_span(1, 3) == (1, 3)


def test_normalized_text_validates_and_is_read_only():
    with pytest.raises(ValueError):
        NormalizedText("ab", "abc")  # one-to-one needs equal lengths
    with pytest.raises(ValueError):
        NormalizedText("ab", "abc", np.zeros((2, 2)))
    nt = NormalizedText("ab", "a", [[0, 2]])
    assert nt.alignments.dtype == np.int64
    with pytest.raises(ValueError):
        nt.alignments[0, 0] = 1
    with pytest.raises(AttributeError):
        nt.normalized = "x"  # type: ignore[misc]
    assert nt == NormalizedText("ab", "a", np.array([[0, 2]]))
    assert NormalizedText.unchanged("ab") == NormalizedText("ab", "ab", [[0, 1], [1, 2]])


def test_compose_maps_through_the_intermediate_text():
    first = NormalizedText("AB\u2474", "ab(1)", [[0, 1], [1, 2], [2, 3], [2, 3], [2, 3]])
    second = NormalizedText("ab(1)", "b1", [[1, 2], [3, 4]])
    composed = first.compose(second)
    # "b" <- intermediate (1, 2) <- original (1, 2); "1" <- intermediate (3, 4) <- original (2, 3).
    assert composed.original == "AB\u2474" and composed.normalized == "b1"
    assert composed.alignments.tolist() == [[1, 2], [2, 3]]
    with pytest.raises(ValueError):
        first.compose(NormalizedText.unchanged("other"))


# ----------------------------------------------------------------------------------------------------------------
# Unicode normalization forms


@pytest.mark.parametrize("form", FORMS)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=any_text)
def test_unicode_forms_equal_the_library_call_and_segments_normalize_independently(form, text):
    nt = build_normalizer(form.lower()).normalize(text)
    assert nt.normalized == unicodedata.normalize(form, text)
    check_alignment(nt)
    groups = segments(nt)
    if text:
        # The segment spans tile the original text, and each segment alone normalizes to its output: so the
        # concatenation of segment normalizations is the whole-string normalization.
        spans = [span for span, _ in groups]
        assert spans[0][0] == 0 and spans[-1][1] == len(text)
        assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
        for (s, e), out in groups:
            assert unicodedata.normalize(form, text[s:e]) == out
        assert "".join(unicodedata.normalize(form, text[s:e]) for s, e in spans) == unicodedata.normalize(form, text)


def test_unicode_forms_on_every_assigned_code_point_between_interacting_bases():
    # Every assigned code point, each preceded by a base from a rotating set (Latin letter, Hangul L jamo, Hangul
    # LV syllable, Oriya/Kannada vowel signs that compose with following marks, a letter with a mark) so that any
    # composition or reordering across a segment boundary would show up as a difference from the library call.
    chars = [chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) not in ("Cn", "Cs")]
    bases = ["a", "\u1100", "\uac00", "\u0b47", "\u0cc6", "e\u0301"]
    text = "".join(bases[i % len(bases)] + ch for i, ch in enumerate(chars))
    for form in FORMS:
        nt = build_normalizer(form.lower()).normalize(text)
        assert nt.normalized == unicodedata.normalize(form, text), form
        assert nt.alignments.shape == (len(nt.normalized), 2)


def test_unicode_forms_hand_cases():
    nfc = build_normalizer("nfc")
    nt = nfc.normalize("e\u0301x")
    assert nt.normalized == "\u00e9x" and nt.alignments.tolist() == [[0, 2], [2, 3]]
    nfd = build_normalizer("nfd").normalize("\u00e9x")
    assert nfd.normalized == "e\u0301x" and nfd.alignments.tolist() == [[0, 1], [0, 1], [1, 2]]
    # NFKC composes a conjoining L jamo with the vowel that a compatibility jamo decomposes to: one segment.
    nt = build_normalizer("nfkc").normalize("\u1100\u314f")
    assert nt.normalized == "\uac00" and nt.alignments.tolist() == [[0, 2]]
    # Under NFKD they do not compose, so the boundary before U+314F is kept.
    nt = build_normalizer("nfkd").normalize("\u1100\u314f")
    assert nt.normalized == "\u1100\u1161" and nt.alignments.tolist() == [[0, 1], [1, 2]]
    # Reordering of marks stays inside the segment: e + acute(230) + cedilla(202) -> cedilla first.
    nt = build_normalizer("nfd").normalize("e\u0301\u0327!")
    assert nt.normalized == "e\u0327\u0301!" and nt.alignments.tolist() == [[0, 3]] * 3 + [[3, 4]]


def test_backward_combiners_include_the_known_starters():
    bc = backward_combiners()
    # Vowel length marks (ccc 0) that compose with a preceding vowel sign, and Hangul V/T jamo.
    for cp in (0x09BE, 0x09D7, 0x0B3E, 0x0B56, 0x0B57, 0x0CD5, 0x0DCF, 0x102E, 0x1B35, 0x1161, 0x11A8, 0x11C2):
        assert chr(cp) in bc
    assert "a" not in bc and "\uac00" not in bc


def test_ascii_and_already_normalized_text_take_the_one_to_one_path():
    for name in ("nfc", "nfd", "nfkc", "nfkd", "strip_accents", "lowercase", "bert_clean"):
        assert build_normalizer(name).normalize("plain ascii text").is_one_to_one
    assert build_normalizer("nfc").normalize("d\u00e9j\u00e0 vu").is_one_to_one
    assert not build_normalizer("nfd").normalize("d\u00e9j\u00e0 vu").is_one_to_one


# ----------------------------------------------------------------------------------------------------------------
# lowercase, strip_accents, bert_clean: references written out in plain Python


def ref_lowercase(text: str) -> str:
    return "".join(ch.lower() for ch in text)


def ref_strip_accents(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")


def ref_bert_clean(text: str) -> str:
    white = {chr(c) for c in (*range(9, 14), 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B))}
    white |= {"\u2028", "\u2029", "\u202f", "\u205f", "\u3000"}
    out = []
    for ch in text:
        if ch in "\t\n\r":
            out.append(" ")
        elif ch in "\x00\ufffd" or unicodedata.category(ch) in ("Cc", "Cf", "Co", "Cs"):
            continue
        else:
            out.append(" " if ch in white else ch)
    return "".join(out)


REFERENCES = {
    "identity": lambda t: t,
    "nfc": lambda t: unicodedata.normalize("NFC", t),
    "nfd": lambda t: unicodedata.normalize("NFD", t),
    "nfkc": lambda t: unicodedata.normalize("NFKC", t),
    "nfkd": lambda t: unicodedata.normalize("NFKD", t),
    "lowercase": ref_lowercase,
    "strip_accents": ref_strip_accents,
    "bert_clean": ref_bert_clean,
}


def test_every_normalizer_has_a_reference():
    assert set(REFERENCES) | {"sequence"} == set(NORMALIZERS)


@pytest.mark.parametrize("name", sorted(REFERENCES))
@settings(max_examples=150, deadline=None)
@given(text=any_text)
def test_normalizers_equal_their_reference(name, text):
    nt = build_normalizer(name).normalize(text)
    assert nt.original == text
    assert nt.normalized == REFERENCES[name](text)
    check_alignment(nt)


@settings(max_examples=200, deadline=None)
@given(text=any_text)
def test_lowercase_and_bert_clean_align_each_output_char_to_its_source_char(text):
    nt = build_normalizer("lowercase").normalize(text)
    for ch, (s, e) in zip(nt.normalized, nt.alignments.tolist()):
        assert e == s + 1 and ch in text[s].lower()
    nt = build_normalizer("bert_clean").normalize(text)
    for ch, (s, e) in zip(nt.normalized, nt.alignments.tolist()):
        assert e == s + 1 and (ch == text[s] or ch == " ")


def test_lowercase_is_per_code_point_like_hugging_face():
    lower = build_normalizer("lowercase")
    # Final sigma: str.lower gives the final form, per-code-point lowering (and Hugging Face) does not.
    assert "\u039f\u0394\u039f\u03a3".lower() == "\u03bf\u03b4\u03bf\u03c2"
    assert lower.normalize_str("\u039f\u0394\u039f\u03a3") == "\u03bf\u03b4\u03bf\u03c3"
    # U+0130 lowercases to two code points, i + U+0307, both aligned to the one source character.
    nt = lower.normalize("x\u0130y")
    assert nt.normalized == "xi\u0307y"
    assert nt.alignments.tolist() == [[0, 1], [1, 2], [1, 2], [2, 3]]


@settings(max_examples=200, deadline=None)
@given(text=parity_text)
def test_lowercase_parity_with_hugging_face(text):
    assert build_normalizer("lowercase").normalize_str(text) == tokenizers.normalizers.Lowercase().normalize_str(text)


@settings(max_examples=200, deadline=None)
@given(text=parity_text.filter(lambda t: not any(unicodedata.category(c) in ("Mc", "Me") for c in t)))
def test_strip_accents_parity_with_hugging_face(text):
    hf = tokenizers.normalizers.Sequence([tokenizers.normalizers.NFD(), tokenizers.normalizers.StripAccents()])
    assert build_normalizer("strip_accents").normalize_str(text) == hf.normalize_str(text)


def test_strip_accents_keeps_spacing_and_enclosing_marks():
    # BERT drops Mn only; Hugging Face's StripAccents drops every mark, also Mc (U+093F DEVANAGARI VOWEL SIGN I)
    # and Me (U+20DD COMBINING ENCLOSING CIRCLE).
    assert build_normalizer("strip_accents").normalize_str("a\u20dd\u00e9\u0915\u093f") == "a\u20dde\u0915\u093f"
    hf = tokenizers.normalizers.Sequence([tokenizers.normalizers.NFD(), tokenizers.normalizers.StripAccents()])
    assert hf.normalize_str("a\u20dd\u00e9\u0915\u093f") == "ae\u0915"
    nt = build_normalizer("strip_accents").normalize("cr\u00e8me")
    assert nt.normalized == "creme" and nt.alignments.tolist() == [[0, 1], [1, 2], [2, 3], [3, 4], [4, 5]]


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=st.sampled_from(PARITY + "\x00\x01\x0b\x0c\x1c\x7f\x85\u200b\ufeff\ufffd\ue000\u00ad"),
                    max_size=60))
def test_bert_clean_parity_with_hugging_face(text):
    hf = tokenizers.normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=False, strip_accents=False, lowercase=False
    )
    assert build_normalizer("bert_clean").normalize_str(text) == hf.normalize_str(text)


def test_bert_clean_hand_case():
    nt = build_normalizer("bert_clean").normalize("a\x00b\tc\u200bd\u3000e\ufffd")
    assert nt.normalized == "ab cd e"  # NUL (1), U+200B (5), U+FFFD (9) dropped; tab (3) and U+3000 (7) -> space
    assert nt.alignments[:, 0].tolist() == [0, 2, 3, 4, 6, 7, 8]


# ----------------------------------------------------------------------------------------------------------------
# Sequence and build_normalizer


def naive_compose(first: NormalizedText, second: NormalizedText) -> list[list[int]]:
    a1 = first.alignments.tolist()
    return [[a1[s][0], a1[e - 1][1]] for s, e in second.alignments.tolist()]


@settings(max_examples=150, deadline=None)
@given(text=any_text, names=st.lists(st.sampled_from(sorted(REFERENCES)), min_size=2, max_size=4))
def test_sequence_composes_text_and_alignments(text, names):
    nt = build_normalizer(names).normalize(text)
    expected = text
    for name in names:
        expected = REFERENCES[name](expected)
    assert nt.normalized == expected
    check_alignment(nt)
    # Against composing by hand, stage by stage.
    first = build_normalizer(names[0]).normalize(text)
    for name in names[1:]:
        second = build_normalizer(name).normalize(first.normalized)
        first = NormalizedText(text, second.normalized, naive_compose(first, second))
    assert nt.alignments.tolist() == first.alignments.tolist()


def test_sequence_hand_case():
    nt = build_normalizer(["nfkc", "lowercase"]).normalize("\uff21\u0130\ufb01")
    # NFKC: "Ａ"->"A", "İ" stays, "ﬁ"->"fi"; lowercase: "A"->"a", "İ"->"i̇" (two), so 1 + 2 + 2 chars.
    assert nt.normalized == "ai\u0307fi"
    assert nt.alignments.tolist() == [[0, 1], [1, 2], [1, 2], [2, 3], [2, 3]]


def test_build_normalizer_specs_round_trip_and_are_json():
    specs = [None, "identity", "nfc", "nfd", "nfkc", "nfkd", "lowercase", "strip_accents", "bert_clean",
             ["nfd", "strip_accents", "lowercase"], {"type": "nfkc"},
             {"type": "sequence", "normalizers": ["bert_clean", ["nfd", "lowercase"]]}]
    for spec in specs:
        stage = build_normalizer(spec)
        assert isinstance(stage.name, str)
        rebuilt = build_normalizer(json.loads(json.dumps(stage.spec)))
        assert rebuilt == stage
        assert rebuilt.normalize_str("\u00c9T\u00c9\u2474") == stage.normalize_str("\u00c9T\u00c9\u2474")
    assert build_normalizer(None).name == "identity"
    assert build_normalizer([]).name == "identity"
    assert build_normalizer(["nfc"]).name == "nfc"
    nested = build_normalizer({"type": "sequence", "normalizers": ["bert_clean", ["nfd", "lowercase"]]})
    assert nested.spec == ["bert_clean", ["nfd", "lowercase"]]
    stage = build_normalizer("nfc")
    assert build_normalizer(stage) is stage


@pytest.mark.parametrize(
    "spec, fragment",
    [
        ("nfcc", "unknown normalizer 'nfcc'. Did you mean 'nfc'?"),
        (["nfd", "lowercse"], "unknown normalizer 'lowercse'"),
        ({"type": "nfc", "extra": 1}, "unknown parameter(s) 'extra'"),
        ({"normalizers": []}, "needs a string 'type'"),
        ({"type": "sequence"}, "needs a list 'normalizers'"),
        (42, "must be a name or a mapping"),
    ],
)
def test_build_normalizer_errors(spec, fragment):
    with pytest.raises(TokembedError) as info:
        build_normalizer(spec)
    assert isinstance(info.value, ValueError) and isinstance(info.value, TextStageError)
    assert fragment in str(info.value)
    if "unknown normalizer" in fragment:
        assert "Available: bert_clean, identity, lowercase, nfc, nfd, nfkc, nfkd, sequence, strip_accents" in str(
            info.value
        )


def test_normalize_rejects_non_str():
    with pytest.raises(TypeError):
        build_normalizer("nfc").normalize(b"bytes")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        build_pre_tokenizer("word_punct").spans(None)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------------------------------------------
# Pre-tokenizers


def check_spans(text: str, spans: np.ndarray, pieces) -> None:
    assert spans.dtype == np.int64 and spans.shape == (len(pieces), 2)
    if len(spans):
        assert (spans[:, 0] < spans[:, 1]).all()
        assert spans[0, 0] >= 0 and spans[-1, 1] <= len(text)
        assert (spans[1:, 0] >= spans[:-1, 1]).all()  # in order, no overlap
    assert [text[s:e] for s, e in spans.tolist()] == [p for p, _ in pieces]
    assert [tuple(x) for x in spans.tolist()] == [span for _, span in pieces]


@pytest.mark.parametrize("name", ["whitespace_split", "word_punct", "bert", "gpt2", "identity"])
@settings(max_examples=150, deadline=None)
@given(text=any_text)
def test_pre_tokenizer_pieces_are_ordered_and_cover_the_text(name, text):
    pre = build_pre_tokenizer(name)
    pieces = pre.pre_tokenize(text)
    check_spans(text, pre.spans(text), pieces)
    joined = "".join(p for p, _ in pieces)
    if name in ("gpt2", "identity"):
        assert joined == text
    elif name == "whitespace_split":
        assert joined == "".join(ch for ch in text if not ch.isspace())
    else:  # word_punct and bert drop exactly the White_Space characters
        assert joined == "".join(ch for ch in text if not regex.match(r"\s", ch))


@settings(max_examples=200, deadline=None)
@given(text=any_text)
def test_whitespace_split_equals_str_split(text):
    assert [p for p, _ in build_pre_tokenizer("whitespace_split").pre_tokenize(text)] == text.split()


@settings(max_examples=300, deadline=None)
@given(text=any_text)
def test_word_punct_equals_regex_finditer(text):
    expected = [m.span() for m in regex.finditer(WORD_PUNCT_PATTERN, text)]
    assert [span for _, span in build_pre_tokenizer("word_punct").pre_tokenize(text)] == expected


@settings(max_examples=300, deadline=None)
@given(text=parity_text)
def test_word_punct_parity_with_hugging_face_whitespace(text):
    hf = tokenizers.pre_tokenizers.Whitespace().pre_tokenize_str(text)
    assert build_pre_tokenizer("word_punct").pre_tokenize(text) == hf


def test_word_punct_parity_with_hugging_face_on_a_book():
    # Speed is measured by the pre-tokenization benchmarks (BENCHMARKS.md), never here.
    text = gzip.open(MOBY, "rt", encoding="utf-8").read()
    ours = build_pre_tokenizer("word_punct").pre_tokenize(text)
    assert ours == tokenizers.pre_tokenizers.Whitespace().pre_tokenize_str(text)


def test_word_punct_hand_cases():
    pieces = build_pre_tokenizer("word_punct").pre_tokenize("Hello, world!! x_1 caf\u00e9\u0301?")
    assert pieces == [("Hello", (0, 5)), (",", (5, 6)), ("world", (7, 12)), ("!!", (12, 14)), ("x_1", (15, 18)),
                      ("caf\u00e9\u0301", (19, 24)), ("?", (24, 25))]


GPT2_CASES = {
    "Hello world": ["Hello", " world"],
    "I'll pay 20$ now!": ["I", "'ll", " pay", " 20", "$", " now", "!"],
    "a  b": ["a", " ", " b"],
    "trailing   ": ["trailing", "   "],
    "x\n\ny": ["x", "\n", "\n", "y"],  # only a space attaches to the next word
    "a \t b": ["a", " \t", " b"],
    "don't DON'T": ["don", "'t", " DON", "'", "T"],
    "caf\u00e9 \u6771\u4eac 42\u00b2": ["caf\u00e9", " \u6771\u4eac", " 42\u00b2"],
    "": [],
}


@pytest.mark.parametrize("text, expected", list(GPT2_CASES.items()))
def test_gpt2_hand_cases_equal_regex_findall(text, expected):
    pieces = build_pre_tokenizer("gpt2").pre_tokenize(text)
    # the reference is tiktoken's own shipped GPT-2 pattern, not ours (GPT2_PATTERN)
    tiktoken_pattern = pytest.importorskip("tiktoken_ext.openai_public").r50k_pat_str
    assert [p for p, _ in pieces] == expected == regex.findall(tiktoken_pattern, text)
    check_spans(text, build_pre_tokenizer("gpt2").spans(text), pieces)


@settings(max_examples=300, deadline=None)
@given(text=parity_text)
def test_gpt2_boundaries_parity_with_hugging_face_byte_level(text):
    hf = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True).pre_tokenize_str(text)
    assert [span for _, span in build_pre_tokenizer("gpt2").pre_tokenize(text)] == [span for _, span in hf]


@settings(max_examples=300, deadline=None)
@given(text=parity_text.filter(lambda t: not any(0x3400 <= ord(c) <= 0x9FFF for c in t)))
def test_bert_parity_with_hugging_face_without_cjk(text):
    assert build_pre_tokenizer("bert").pre_tokenize(text) == tokenizers.pre_tokenizers.BertPreTokenizer(
    ).pre_tokenize_str(text)


@settings(max_examples=200, deadline=None)
@given(text=parity_text)
def test_bert_parity_with_hugging_face_chinese_char_padding(text):
    # Hugging Face isolates CJK in BertNormalizer(handle_chinese_chars=True), which pads them with spaces; the
    # pieces must be the same, while our offsets index the unpadded text.
    norm = tokenizers.normalizers.BertNormalizer(
        clean_text=False, handle_chinese_chars=True, strip_accents=False, lowercase=False
    )
    hf = tokenizers.pre_tokenizers.BertPreTokenizer().pre_tokenize_str(norm.normalize_str(text))
    ours = build_pre_tokenizer("bert").pre_tokenize(text)
    assert [p for p, _ in ours] == [p for p, _ in hf]
    assert all(text[s:e] == p for p, (s, e) in ours)


def test_bert_hand_case():
    pieces = build_pre_tokenizer("bert").pre_tokenize("Hi!\u6771\u4eacx, \u00bfok\u3002$5")
    assert [p for p, _ in pieces] == ["Hi", "!", "\u6771", "\u4eac", "x", ",", "\u00bf", "ok", "\u3002", "$", "5"]
    assert pieces[2] == ("\u6771", (3, 4))


def test_identity_pre_tokenizer_and_alias():
    for spec in ("identity", "none", None, {"type": "none"}):
        pre = build_pre_tokenizer(spec)
        assert pre.pre_tokenize("a b") == [("a b", (0, 3))]
        assert pre.pre_tokenize("") == []
        assert pre.spans("").shape == (0, 2)
    assert PRE_TOKENIZERS["none"] is PRE_TOKENIZERS["identity"]


def test_regex_pre_tokenizer():
    pre = build_pre_tokenizer({"type": "regex", "pattern": r"\p{L}+|\d"})
    assert pre.pre_tokenize("ab12 \u00e9!") == [("ab", (0, 2)), ("1", (2, 3)), ("2", (3, 4)), ("\u00e9", (5, 6))]
    # Empty matches are skipped.
    assert build_pre_tokenizer({"type": "regex", "pattern": r"\d*"}).pre_tokenize("a12b3") == [
        ("12", (1, 3)), ("3", (4, 5))]
    assert pre.spec == {"type": "regex", "pattern": r"\p{L}+|\d"}
    assert build_pre_tokenizer(json.loads(json.dumps(pre.spec))) == pre


@pytest.mark.parametrize(
    "spec, fragment",
    [
        ("word_punk", "unknown pre-tokenizer 'word_punk'. Did you mean 'word_punct'?"),
        ({"type": "regex"}, "needs a 'pattern'"),
        ({"type": "regex", "pattern": "(unclosed"}, "invalid pattern '(unclosed'"),
        ({"type": "regex", "pattern": 3}, "needs a string 'pattern'"),
        ({"type": "regex", "pattern": "a", "flags": 1}, "unknown parameter(s) 'flags'"),
        ({"type": "gpt2", "lowercase": True}, "unknown parameter(s) 'lowercase'"),
        (["gpt2"], "must be a name or a mapping"),
    ],
)
def test_build_pre_tokenizer_errors(spec, fragment):
    with pytest.raises(TextStageError) as info:
        build_pre_tokenizer(spec)
    assert isinstance(info.value, TokembedError) and isinstance(info.value, ValueError)
    assert fragment in str(info.value)
    if "unknown pre-tokenizer" in fragment:
        assert "Available: bert, gpt2, identity, none, regex, sklearn, whitespace_split, word_punct" in str(info.value)


def test_pre_tokenizer_specs_round_trip():
    for name in PRE_TOKENIZERS:
        spec = {"type": "regex", "pattern": "x"} if name == "regex" else name
        stage = build_pre_tokenizer(spec)
        assert build_pre_tokenizer(json.loads(json.dumps(stage.spec))) == stage
        assert isinstance(stage.name, str)


# ----------------------------------------------------------------------------------------------------------------
# Odd input


def test_lone_surrogates_do_not_crash_and_behave_as_documented():
    text = "A\ud800b c"
    for name in REFERENCES:
        nt = build_normalizer(name).normalize(text)
        if name == "bert_clean":
            assert nt.normalized == "Ab c"  # category Cs is dropped
            assert nt.alignments.tolist() == [[0, 1], [2, 3], [3, 4], [4, 5]]
        elif name == "lowercase":
            assert nt.normalized == "a\ud800b c"
        else:
            assert nt.normalized == text  # kept unchanged by the Unicode forms and strip_accents
    text = "a\ud800b c"
    assert [p for p, _ in build_pre_tokenizer("word_punct").pre_tokenize(text)] == ["a", "\ud800", "b", "c"]
    assert [p for p, _ in build_pre_tokenizer("gpt2").pre_tokenize(text)] == ["a", "\ud800", "b", " c"]
    assert [p for p, _ in build_pre_tokenizer("bert").pre_tokenize(text)] == ["a\ud800b", "c"]
    assert [p for p, _ in build_pre_tokenizer("whitespace_split").pre_tokenize(text)] == ["a\ud800b", "c"]
    assert split_text("\ud800", "nfkc", "word_punct") == [("\ud800", (0, 1))]


def test_empty_string_everywhere():
    for name in REFERENCES:
        nt = build_normalizer(name).normalize("")
        assert nt.normalized == "" and nt.alignments.shape == (0, 2)
    for name in PRE_TOKENIZERS:
        spec = {"type": "regex", "pattern": "x"} if name == "regex" else name
        assert build_pre_tokenizer(spec).pre_tokenize("") == []
        assert build_pre_tokenizer(spec).spans("").shape == (0, 2)
    assert split_text("", ["nfkc", "lowercase"], "bert") == []


def test_nul_characters():
    assert build_pre_tokenizer("word_punct").pre_tokenize("a\x00b") == [("a", (0, 1)), ("\x00", (1, 2)), ("b", (2, 3))]
    assert build_pre_tokenizer("whitespace_split").pre_tokenize("a\x00b") == [("a\x00b", (0, 3))]
    assert split_text("a\x00b", "bert_clean", "whitespace_split") == [("ab", (0, 3))]


def test_huge_line_and_repeated_character():
    # Inputs large enough that a quadratic scan would stall the suite; speed itself is left to the benchmarks.
    word = "a" * 1_000_000
    for name in ("whitespace_split", "word_punct", "bert", "gpt2"):
        assert build_pre_tokenizer(name).spans(word).tolist() == [[0, 1_000_000]]
    assert len(build_pre_tokenizer("bert").spans("!" * 200_000)) == 200_000
    marks = "e" + "\u0301" * 100_000  # one segment of 100,001 characters
    assert build_normalizer("nfc").normalize_str(marks) == unicodedata.normalize("NFC", marks)


# ----------------------------------------------------------------------------------------------------------------
# split_text


def test_split_text_maps_pieces_to_the_original():
    text = "\uff28\uff45\uff4c\uff4c\uff4f, \uff37\uff2f\uff32\uff2c\uff24! x\ufe30y"
    result = split_text(text, ["nfkc", "lowercase"], "word_punct")
    assert result == [("hello", (0, 5)), (",", (5, 6)), ("world", (7, 12)), ("!", (12, 13)), ("x", (14, 15)),
                      ("..", (15, 16)), ("y", (16, 17))]
    normalizer, pre_tokenizer = build_normalizer(["nfkc", "lowercase"]), build_pre_tokenizer("word_punct")
    pieces, offsets = split_text_arrays(text, normalizer, pre_tokenizer)
    assert pieces == [p for p, _ in result] and offsets.dtype == np.int64 and offsets.shape == (7, 2)
    # One original character expanded into three pieces: all share its span.
    assert split_text("\u2474x", "nfkc", "bert") == [("(", (0, 1)), ("1", (0, 1)), (")", (0, 1)), ("x", (1, 2))]
    # Accents stripped: offsets still cover the accented original.
    assert split_text("Cre\u0300me br\u00fbl\u00e9e", ["nfd", "strip_accents"], "whitespace_split") == [
        ("Creme", (0, 6)), ("brulee", (7, 13))]


@settings(max_examples=200, deadline=None)
@given(
    text=any_text,
    norm=st.lists(st.sampled_from(sorted(REFERENCES)), max_size=3),
    pre=st.sampled_from(["whitespace_split", "word_punct", "bert", "gpt2", "identity"]),
)
def test_split_text_offsets_are_consistent(text, norm, pre):
    normalizer = build_normalizer(norm)
    nt = normalizer.normalize(text)
    pieces, offsets = split_text_arrays(text, normalizer, pre)
    assert pieces == [p for p, _ in build_pre_tokenizer(pre).pre_tokenize(nt.normalized)]
    assert offsets.shape == (len(pieces), 2)
    if len(offsets):
        assert (offsets[:, 0] < offsets[:, 1]).all() and offsets.min() >= 0 and offsets.max() <= len(text)
        assert (np.diff(offsets[:, 0]) >= 0).all() and (np.diff(offsets[:, 1]) >= 0).all()
    if nt.is_one_to_one:
        # Each piece is the normalization of exactly the original text it maps to.
        for piece, (s, e) in zip(pieces, offsets.tolist()):
            assert normalizer.normalize_str(text[s:e]) == piece


# ----------------------------------------------------------------------------------------------------------------
# Package surface


def test_exports():
    for name in ("NormalizedText", "build_normalizer", "build_pre_tokenizer", "split_text", "NORMALIZERS",
                 "PRE_TOKENIZERS"):
        assert name in tokembed.text.__all__ and hasattr(tokembed.text, name)
    assert all(cls.name == name for name, cls in NORMALIZERS.items())
    assert all(cls.name == name for name, cls in PRE_TOKENIZERS.items() if name != "none")


def test_import_does_not_load_numba():
    code = "import sys, tokembed.text; tokembed.text.split_text('a b', 'nfkc', 'bert'); print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_documentation_examples_run():
    assert doctest.testfile(str(ROOT / "docs" / "text.md"), module_relative=False).failed == 0
    for module in ("tokembed.text", "tokembed.text.normalized", "tokembed.text.split"):
        assert doctest.testmod(importlib.import_module(module)).failed == 0


def test_char_table_classifies_each_new_character_once_and_looks_the_rest_up():
    from tokembed.text._base import CharTable

    calls = []

    def classify(ch):
        calls.append(ch)
        return ord(ch) % 7

    table = CharTable(classify)
    text = "ab\u00e9\u00e9\u6771\ud800\u00e9\U0001F600\u6771"
    assert table.classes(text).tolist() == [ord(c) % 7 for c in text]
    new = [c for c in calls if ord(c) >= 128]
    assert sorted(new) == sorted(set("\u00e9\u6771\ud800\U0001F600"))  # once each, ASCII filled up front
    calls.clear()
    assert table.classes(text + "\u00e9x").tolist() == [ord(c) % 7 for c in text + "\u00e9x"]
    assert calls == []  # everything known: no classify call
    assert table.classes("\u00e9\u00f1").tolist() == [0xE9 % 7, 0xF1 % 7] and calls == ["\u00f1"]
