"""Tests of tokembed.text.fast: the Numba pre-tokenizer and one-pass word counting.

Oracles: the reference path of each pre-tokenizer (``PreTokenizer._spans``: ``regex`` and NumPy over a lazily
filled class table, itself tested against ``regex``, ``str.split`` and Hugging Face in ``test_text.py``), the
``regex`` package's matches of the same pattern, and ``collections.Counter`` over ``split_text``.
"""

from __future__ import annotations

import gzip
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokembed.errors import CorpusError, TokembedError
from tokembed.text import TextStageError, build_pre_tokenizer, pre_tokenizers, split_text
from tokembed.text import fast
from tokembed.text.pre_tokenizers import SKLEARN_TOKEN_PATTERN, WORD_PUNCT_PATTERN

ROOT = Path(__file__).resolve().parents[2]
MOBY = ROOT / "framework" / "samples" / "moby-dick.txt.gz"
MULTILINGUAL = ROOT / "tests" / "fixtures" / "multilingual"
LANGUAGES = ("en-US", "de-DE", "ru-RU", "ar-MA", "ja-JP", "zh-CN")
SCANNED = ("whitespace_split", "word_punct", "bert", "gpt2", "sklearn")

pytestmark = pytest.mark.skipif(not fast.is_enabled(), reason="numba is not importable or TOKEMBED_PURE_PYTHON=1")

# Characters that exercise every rule: the contraction letters and apostrophes, U+0020 before each class, other
# whitespace (incl. U+001C..U+001F, which only str.isspace counts, and U+0085/U+00A0/U+3000), letters and numbers
# outside ASCII, marks (word characters for \w, "other" for GPT-2), BERT punctuation and CJK, 2-, 3- and 4-byte
# UTF-8, NUL, and lone surrogates (3-byte sequences with surrogatepass).
TRICKY = (
    "'''stmdrevlLSx  \t\n\r\x0b\x0c\x1c\x1f\x85\xa0\u2028\u3000\u200b_-.,!?$%0129\u00b2\u0660\u2153"
    "\u00e9\u0301\u0308\u093f\u0915\u0416\u0627\u6771\u4eac\u3002\uff0c\u3042\U00020000\U0001f600\u00bf\u061d"
    "\x00\ud800\udfff\udc00"
)
# Fragments that make contractions (and near misses) and space/class boundaries frequent.
FRAGMENTS = ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'r", "'v", "'l", "'", "'S", " ", "  ", "\n", "\t ",
             " \n", "a", "Ab", "1", "\u00b2", "!", ".,", "\u00e9", "\u0301", "\u6771", "\u3000", "\ud800", "\xa0"]
tricky_text = st.one_of(
    st.text(alphabet=st.sampled_from(TRICKY), max_size=80),
    st.lists(st.sampled_from(FRAGMENTS), max_size=30).map("".join),
)
any_text = st.one_of(tricky_text, st.text(st.characters(exclude_categories=()), max_size=80))


@pytest.fixture(scope="module")
def moby() -> str:
    return gzip.open(MOBY, "rt", encoding="utf-8").read()


def multilingual_text(lang: str) -> str:
    return (MULTILINGUAL / f"{lang}.txt").read_text(encoding="utf-8")


def reference_counts(docs, pre_tokenizer, normalizer=None) -> Counter:
    return Counter(piece for doc in docs for piece, _ in split_text(doc, normalizer, pre_tokenizer))


def regex_spans(name: str, text: str) -> list[tuple[int, int]]:
    """The spans of the regex engine (or ``str.split`` semantics) for the same split, written out here."""
    if name == "gpt2":
        # tiktoken's own shipped GPT-2 pattern, not ours (GPT2_PATTERN): the scanner is checked against theirs
        tiktoken_pattern = pytest.importorskip("tiktoken_ext.openai_public").r50k_pat_str
        return [m.span() for m in regex.finditer(tiktoken_pattern, text)]
    if name == "word_punct":
        return [m.span() for m in regex.finditer(WORD_PUNCT_PATTERN, text)]
    if name == "sklearn":  # scikit-learn applies its token_pattern with Python's re
        return [m.span() for m in re.finditer(SKLEARN_TOKEN_PATTERN, text)]
    if name == "whitespace_split":
        spans, start = [], None
        for i, ch in enumerate(text + " "):
            if ch.isspace():
                if start is not None:
                    spans.append((start, i))
                start = None
            elif start is None:
                start = i
        return spans
    raise ValueError(name)


def check_fast_spans(name: str, text: str) -> None:
    pre = build_pre_tokenizer(name)
    got = fast.fast_spans(pre, text)
    assert got is not None and got.dtype == np.int64 and got.ndim == 2 and got.shape[1] == 2
    assert got.tolist() == pre._spans(text).tolist()
    if name != "bert":
        assert [tuple(s) for s in got.tolist()] == regex_spans(name, text)


# ----------------------------------------------------------------------------------------------------------------
# Spans


@pytest.mark.parametrize("name", SCANNED)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=any_text)
def test_fast_spans_equal_the_reference_on_arbitrary_unicode(name, text):
    check_fast_spans(name, text)


@pytest.mark.parametrize("name", SCANNED)
def test_fast_spans_hand_cases(name):
    cases = ["", " ", "a", "'s", "'", "' ", " 's", "x'llama 're", "I'd you'd we'm they've 'T 'r 'v 'l", "a  b",
             "trailing   ", "x\n\ny", "a \t b", "\ud800", "a\ud800b c", "\U0001f600 \U0001f600", " \u6771\u4eac!", "\x1c\x1fa\x1c", "\u3000x\u3000"]
    for text in cases:
        check_fast_spans(name, text)
    if name == "gpt2":
        # 's and 'll are contractions; "'x" is not, so the apostrophe starts an "other" run.
        text = "it's 'x y'll I'd"
        assert [text[s:e] for s, e in fast.fast_spans(build_pre_tokenizer(name), text).tolist()] == [
            "it", "'s", " '", "x", " y", "'ll", " I", "'d"]


@pytest.mark.parametrize("name", SCANNED)
def test_fast_spans_on_the_bundled_book_and_the_multilingual_fixture(name, moby):
    check_fast_spans(name, moby)
    for lang in LANGUAGES:
        check_fast_spans(name, multilingual_text(lang))


def test_multilingual_fixture_is_what_it_claims():
    for lang in LANGUAGES:
        data = (MULTILINGUAL / f"{lang}.txt").read_bytes()
        assert 1000 < len(data) <= 4096
    # Each non-English file is mostly in its own script.
    scripts = {"ru-RU": r"\p{Cyrillic}", "ar-MA": r"\p{Arabic}", "ja-JP": r"[\p{Hiragana}\p{Katakana}]",
               "zh-CN": r"\p{Han}"}
    for lang, script in scripts.items():
        text = multilingual_text(lang)
        assert len(regex.findall(script, text)) > len(text) // 4, lang


def test_long_texts_take_the_fast_path_through_the_public_api(monkeypatch, moby):
    fast.warmup()
    assert fast.kernels_loaded()
    calls = []
    real = fast.fast_spans
    assert pre_tokenizers._FAST["spans"] is real

    def spy(pre, text):
        calls.append(len(text))
        return real(pre, text)

    monkeypatch.setitem(pre_tokenizers._FAST, "spans", spy)  # the entry point tokembed.text.fast registered
    text = moby[:50_000]
    for name in SCANNED:
        pre = build_pre_tokenizer(name)
        assert pre.spans(text).tolist() == pre._spans(text).tolist()
        pieces = pre.pre_tokenize(text)
        assert [p for p, _ in pieces] == [text[s:e] for s, e in pre._spans(text).tolist()]
    assert calls == [50_000] * (2 * len(SCANNED))
    # Short texts, custom stages and identity stay on the reference path.
    calls.clear()
    build_pre_tokenizer("gpt2").pre_tokenize(text[: pre_tokenizers.FAST_MIN_CHARS - 1])
    assert calls == []
    assert build_pre_tokenizer({"type": "regex", "pattern": r"\d+"}).spans(text).shape[1] == 2
    assert build_pre_tokenizer("identity").spans(text).tolist() == [[0, 50_000]]
    assert real(build_pre_tokenizer({"type": "regex", "pattern": r"\d+"}), text) is None
    assert real(build_pre_tokenizer("identity"), text) is None


def test_kernels_are_loaded_by_spans_only_for_very_long_texts():
    # In a fresh process the kernels are not loaded: a long text below FAST_LOAD_MIN_CHARS keeps the reference
    # path and does not import numba; a text above it loads them. Both give the reference spans.
    code = (
        "import sys; from tokembed.text import build_pre_tokenizer, pre_tokenizers as p; "
        "text = 'it\\'s a b\\u00e9 ' * 10_000; pre = build_pre_tokenizer('gpt2'); "
        "first = pre.spans(text).tolist(); print('numba' in sys.modules); "
        "p.FAST_LOAD_MIN_CHARS = 100_000; "
        "assert pre.spans(text).tolist() == first == pre._spans(text).tolist(); "
        "from tokembed.text import fast; print(fast.kernels_loaded())"
    )
    assert run_python(code).split() == ["False", "True"]


def test_pure_python_switch(monkeypatch):
    text = "Hello, world! it's 42"
    monkeypatch.setenv("TOKEMBED_PURE_PYTHON", "1")
    assert not fast.is_enabled()
    assert fast.fast_spans(build_pre_tokenizer("gpt2"), text) is None
    counts = fast.count_words([text, text], "gpt2")
    assert counts.to_dict() == dict(reference_counts([text, text], "gpt2"))
    monkeypatch.setenv("TOKEMBED_PURE_PYTHON", "0")
    assert fast.is_enabled()


def test_class_tables_agree_with_the_reference_classifiers_on_every_code_point():
    tables = fast.class_tables()
    assert tables.shape == (5, 0x110000) and tables.dtype == np.uint8 and not tables.flags.writeable
    everything = np.arange(0x110000, dtype="<u4").tobytes().decode("utf-32-le", "surrogatepass")
    # The reference path's own lazily filled tables, forced over every code point.
    for row, table in ((fast.ROW_WHITESPACE_SPLIT, pre_tokenizers._ISSPACE),
                       (fast.ROW_WORD_PUNCT, pre_tokenizers._WORD_PUNCT), (fast.ROW_BERT, pre_tokenizers._BERT),
                       (fast.ROW_SKLEARN, pre_tokenizers._SKLEARN)):
        assert np.array_equal(tables[row], table.classes(everything)), row
    from tokembed.text import _kernels as k

    gpt2 = np.full(0x110000, k.GPT2_OTHER)
    gpt2[[m.start() for m in regex.finditer(r"\s", everything)]] = k.GPT2_SPACE
    gpt2[[m.start() for m in regex.finditer(r"\p{L}", everything)]] = k.GPT2_LETTER
    gpt2[[m.start() for m in regex.finditer(r"\p{N}", everything)]] = k.GPT2_NUMBER
    assert np.array_equal(tables[fast.ROW_GPT2], gpt2)


def test_class_tables_are_cached_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(fast, "_tables", None)
    built = fast.class_tables()
    files = list((tmp_path / "tokembed" / "text").iterdir())
    assert [f.name for f in files] == [fast._cache_file().name] and files[0].suffix == ".npy"
    monkeypatch.setattr(fast, "_tables", None)
    monkeypatch.setattr(fast, "_build_class_tables", lambda: pytest.fail("rebuilt although cached"))
    assert np.array_equal(fast.class_tables(), built)
    # A damaged file is rebuilt, not trusted.
    files[0].write_bytes(b"not a table")
    monkeypatch.undo()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(fast, "_tables", None)
    assert np.array_equal(fast.class_tables(), built)
    assert np.array_equal(np.load(files[0]), built)


# ----------------------------------------------------------------------------------------------------------------
# Word counting


def check_counts(counts: fast.WordCounts, expected: Counter) -> None:
    assert counts.codepoints.dtype == np.int32 and counts.offsets.dtype == np.int64
    assert counts.counts.dtype == np.int64 and counts.offsets.shape == (len(expected) + 1,)
    assert counts.to_dict() == dict(expected)
    assert counts.words() == list(expected)  # first-occurrence order, as Counter's


@pytest.mark.parametrize("name", [*SCANNED, "identity"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    docs=st.lists(st.one_of(any_text, st.text(alphabet=st.sampled_from("ab '!\n"), max_size=80)), max_size=6),
    chunk_bytes=st.integers(1, 64),
    workers=st.integers(1, 3),
)
def test_count_words_equals_counter_for_any_chunking(name, docs, chunk_bytes, workers):
    counts = fast.count_words(docs, name, workers=workers, chunk_bytes=chunk_bytes)
    check_counts(counts, reference_counts(docs, name))


def reference_index(docs, pre_tokenizer, normalizer=None):
    """Ids of pieces in order of first occurrence, written out with a dict."""
    index: dict[str, int] = {}
    ids, offsets = [], [0]
    for doc in docs:
        for piece, _ in split_text(doc, normalizer, pre_tokenizer):
            ids.append(index.setdefault(piece, len(index)))
        offsets.append(len(ids))
    return ids, offsets, list(index)


def check_index(docs, name, **kwargs) -> None:
    ids, offsets, words = fast.index_words(docs, name, **kwargs)
    assert ids.dtype == np.int32 and offsets.dtype == np.int64
    want_ids, want_offsets, want_words = reference_index([docs] if isinstance(docs, str) else docs, name)
    assert ids.tolist() == want_ids and offsets.tolist() == want_offsets and words.words() == want_words
    check_counts(words, reference_counts([docs] if isinstance(docs, str) else docs, name))


@pytest.mark.parametrize("name", [*SCANNED, "identity"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    docs=st.lists(st.one_of(any_text, st.text(alphabet=st.sampled_from("ab '!\n"), max_size=80)), max_size=6),
    chunk_bytes=st.integers(1, 64),
    workers=st.integers(1, 3),
)
def test_index_words_equals_a_dict_for_any_chunking(name, docs, chunk_bytes, workers):
    check_index(docs, name, workers=workers, chunk_bytes=chunk_bytes)


def test_index_words_on_the_bundled_book_and_edge_cases(moby):
    lines = moby.splitlines()
    for name in ("sklearn", "word_punct"):
        check_index(lines, name, chunk_bytes=20_000)
    check_index([], "sklearn")
    check_index(["", "", "a"], "sklearn")  # no piece at all
    check_index(["", "x y"], "word_punct", chunk_bytes=1)
    check_index("one str is one document", "sklearn")
    # the custom regex stage takes the reference path, with the same result
    ids, offsets, words = fast.index_words(["a1b22", "22"], {"type": "regex", "pattern": r"\d+"})
    assert ids.tolist() == [0, 1, 1] and offsets.tolist() == [0, 2, 3] and words.to_dict() == {"1": 1, "22": 2}


@pytest.mark.parametrize("name", SCANNED)
def test_count_words_on_the_bundled_book(name, moby):
    expected = reference_counts([moby], name)
    check_counts(fast.count_words(moby, name), expected)
    lines = moby.splitlines(keepends=True)
    check_counts(fast.count_words(lines, name), reference_counts(lines, name))


def test_count_words_with_a_normalizer(moby):
    docs = moby[:200_000].splitlines() + [multilingual_text(lang) for lang in LANGUAGES]
    for normalizer in (["nfkc", "lowercase"], "bert_clean"):
        counts = fast.count_words(docs, "bert", normalizer, chunk_bytes=10_000)
        check_counts(counts, reference_counts(docs, "bert", normalizer))


def test_chunk_size_and_thread_count_do_not_change_the_result(moby):
    text = moby[:300_000]
    for name in ("word_punct", "gpt2"):
        first = fast.count_words(text, name, workers=1, chunk_bytes=1 << 30)
        for workers, chunk_bytes in ((1, 1000), (2, 1000), (3, 777), (2, 1 << 16)):
            assert fast.count_words(text, name, workers=workers, chunk_bytes=chunk_bytes) == first


def test_cuts_are_only_where_no_piece_changes():
    data = b"ab\ncd\n\nef gh  ij\nk!l " * 5
    cuts = fast._cuts(data, 4)
    assert cuts[0] == 0 and cuts[-1] == len(data) and cuts == sorted(set(cuts))
    for p in cuts[1:-1]:
        before, after = data[p - 1 : p], data[p : p + 1]
        if before == b"\n":  # after a newline between two printable characters
            assert 0x21 <= data[p - 2] <= 0x7E and 0x21 <= data[p] <= 0x7E
        else:  # before a space between two printable characters
            assert after == b" " and 0x21 <= data[p - 1] <= 0x7E and 0x21 <= data[p + 1] <= 0x7E
    assert fast._cuts(b"a" * 100, 10) == [0, 100]  # nowhere to cut
    assert fast._cuts(b" \n \n", 1) == [0, 4]


def test_empty_input():
    for docs in ([], "", ["", ""], iter(())):
        counts = fast.count_words(docs, "word_punct")
        assert len(counts) == 0 and counts.offsets.tolist() == [0] and counts.codepoints.shape == (0,)
    assert len(fast.count_words(["  \n", "\t"], "bert")) == 0
    assert fast.count_words(["  \n", "\t"], "gpt2").to_dict() == {"  \n": 1, "\t": 1}


def test_one_megabyte_word_and_a_line_of_one_repeated_character():
    word = "a" * 1_000_000
    for name in SCANNED:
        counts = fast.count_words(word, name, chunk_bytes=1000)
        assert counts.offsets.tolist() == [0, 1_000_000] and counts.counts.tolist() == [1]
        assert fast.fast_spans(build_pre_tokenizer(name), word).tolist() == [[0, 1_000_000]]
    bangs = "!" * 1_000_000
    assert fast.count_words(bangs, "bert").to_dict() == {"!": 1_000_000}
    assert fast.count_words(bangs, "word_punct").to_dict() == {bangs: 1}
    line = " ".join(["x"] * 500_000)  # one line, cut only before spaces
    assert fast.count_words(line, "gpt2", chunk_bytes=1000).to_dict() == {"x": 1, " x": 499_999}


def test_word_counts_merge_and_packing():
    first = fast.count_words(["the cat", "a \ud800 cat"], "word_punct")
    second = fast.count_words(["the \U0001f600 dog", "cat"], "word_punct")
    merged = first.merge(second)
    # Counts add; words keep first-occurrence order over the concatenated input.
    assert merged.to_dict() == {"the": 2, "cat": 3, "a": 1, "\ud800": 1, "\U0001f600": 1, "dog": 1}
    assert merged == fast.count_words(["the cat", "a \ud800 cat", "the \U0001f600 dog", "cat"], "word_punct")
    assert merged.codepoints.tolist()[:6] == [ord(c) for c in "thecat"]
    assert merged.offsets.tolist() == [0, 3, 6, 7, 8, 9, 12]
    assert fast.WordCounts.from_dict(merged.to_dict()) == merged
    empty = fast.count_words([], "gpt2")
    assert empty.merge(first) == first and first.merge(empty) == first
    with pytest.raises(TypeError):
        first.merge({"a": 1})  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        fast.WordCounts([97], [0, 2], [1])


def test_merge_of_partial_counts_equals_the_count_of_the_whole(moby):
    lines = moby[:100_000].splitlines()
    half = len(lines) // 2
    for name in ("word_punct", "gpt2"):
        whole = fast.count_words(lines, name)
        assert fast.count_words(lines[:half], name).merge(fast.count_words(lines[half:], name)) == whole


def test_custom_pre_tokenizer_falls_back_to_counter():
    docs = ["a1b22 c333", "22"]
    counts = fast.count_words(docs, {"type": "regex", "pattern": r"\d+"})
    assert counts.to_dict() == {"1": 1, "22": 2, "333": 1}


@pytest.mark.parametrize(
    "kwargs, error, fragment",
    [
        ({"workers": 0}, TextStageError, "workers must be a positive int"),
        ({"chunk_bytes": 0}, TextStageError, "chunk_bytes must be a positive int"),
        ({"workers": 1.5}, TextStageError, "workers must be a positive int"),
        ({"pre_tokenizer": "word_punk"}, TextStageError, "Did you mean 'word_punct'?"),
        ({"docs": ["ok", b"bytes"]}, CorpusError, "documents must be str, got bytes at index 1"),
    ],
)
def test_count_words_errors(kwargs, error, fragment):
    args = {"docs": ["a b"], "pre_tokenizer": "word_punct", **kwargs}
    with pytest.raises(error) as info:
        fast.count_words(args.pop("docs"), args.pop("pre_tokenizer"), **args)
    assert isinstance(info.value, TokembedError) and fragment in str(info.value)


# ----------------------------------------------------------------------------------------------------------------
# Imports, warmup and compile time


def run_python(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def test_import_of_fast_does_not_load_numba():
    assert run_python("import sys, tokembed.text.fast; print('numba' in sys.modules)") == "False"


def test_first_call_with_a_warm_cache_loads_every_kernel_from_the_cache():
    fast.warmup()  # compiles and fills Numba's cache if it was cold
    code = (
        "from tokembed.text import fast; fast.warmup(); from tokembed.text import _kernels as k; "
        "stats = [k.count_pieces.stats, k.scan_spans.stats, k.scan_docs.stats]; "
        "print(sum(len(s.cache_misses) for s in stats), sum(len(s.cache_hits) for s in stats))"
    )
    misses, hits = run_python(code).split()
    # The three kernels come from the cache, one signature each: nothing is compiled in the new process. The time
    # this takes is measured by the benchmarks (the warm side of tokenizer_kernels_cold_compile in BENCHMARKS.md),
    # not asserted here.
    assert (misses, hits) == ("0", "3")
