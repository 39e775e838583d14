"""Comparison report fixes (issue 12, item 7): no "best" for compression bought with unknown tokens, byte pieces of a
character shown as bytes, each tokenizer's origin named, no speed highlight on a corpus too small to time."""

from __future__ import annotations

import re
import warnings

import pytest

from tokembed.compare import compare_tokenizers
from tokembed.compare.tables import TIMING_MIN_BYTES, UNK_RATE_LIMIT
from tokembed.corpus import Corpus
from tokembed.plugins.bpe.tokenizer import BPETokenizer
from tokembed.plugins.char.tokenizer import CharTokenizer
from tokembed.plugins.word.tokenizer import WordTokenizer

LINES = Corpus.builtin("moby-dick").head(3000)


@pytest.fixture(scope="module")
def comparison():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        toks = {
            "char": CharTokenizer().fit(LINES),
            # a tiny vocabulary: most words are <unk>, so it "compresses" best of all
            "unky": WordTokenizer(vocab_size=30).fit(LINES),
            "bytes": BPETokenizer(vocab_size=300, byte_level=True).fit(LINES[:500]),
        }
    corpus = LINES[1000:1400] + ["Ταχίστη αλώπηξ βαφής ψημένη γη, δρασκελίζει υπέρ νωθρού κυνός 😀"]
    return compare_tokenizers(toks, {"moby": corpus}, samples=3,
                              origins={"char": "trained on moby (3,000 documents)", "unky": "loaded from unky.json"})


def test_compression_bought_with_unknown_tokens_is_not_best(comparison):
    unk = comparison.value("unky", "moby", "unk_rate")
    assert unk > UNK_RATE_LIMIT  # the observed case: a tokenizer with most tokens unknown
    # it has the fewest tokens, the most characters per token and the lowest fertility...
    tokens = {t: comparison.value(t, "moby", "tokens") for t in comparison.tokenizers}
    assert min(tokens, key=tokens.get) == "unky"
    # ...and was highlighted for them; now it is left out of "best" and its cells are marked as such
    for metric in ("tokens", "chars_per_token", "fertility"):
        assert "unky" not in comparison.best("moby", metric), metric
        assert comparison.excluded("moby", metric) == ["unky"]
    assert comparison.best("moby", "unk_rate") != ["unky"]
    assert "unky" not in comparison.excluded("moby", "unk_rate")  # only compression metrics
    md = comparison.to_markdown()
    assert f"unknown-token rate is above {UNK_RATE_LIMIT:.0%} are not compared" in md
    html = comparison.to_html()
    cells = re.findall(r'<td class="([^"]*)" data-metric="tokens"', html)
    assert any("excluded" in c for c in cells) and f"above {UNK_RATE_LIMIT:.0%}" in html


def test_speed_is_not_highlighted_on_a_corpus_too_small_to_time(comparison):
    assert comparison.corpora["moby"]["bytes"] < TIMING_MIN_BYTES
    assert comparison.best("moby", "throughput") == []
    assert f"{TIMING_MIN_BYTES / 1e6:g} MB" in comparison.to_markdown()


def test_byte_pieces_of_a_character_are_shown_as_bytes(comparison):
    from tokembed.compare.engine import _segments
    from tokembed.compare.report import _segmentation

    text = "a smile 😀 here"
    tokens = _segments(BPETokenizer(vocab_size=300, byte_level=True).fit(["smile here"] * 3), text)
    pieces = [tok for tok, _, s, e in tokens if text[s:e] == "😀"]
    # 😀 is F0 9F 98 80; GPT-2's stand-in characters ("ðŁĺ" ...) look like real text
    assert "".join(pieces) == "<0xF0><0x9F><0x98><0x80>"
    html = _segmentation(text, tokens, None)
    assert html.count('class="tok part"') == 4 and "&lt;0xF0&gt;" in html and "ð" not in html
    assert [t for t, _, _, _ in tokens if text.find("smile") >= 0][:1] == ["a"]  # whole tokens keep their string


def test_the_report_names_what_each_tokenizer_was_trained_on_or_loaded_from(comparison):
    assert comparison.tokenizers["char"]["origin"] == "trained on moby (3,000 documents)"
    assert comparison.tokenizers["unky"]["origin"] == "loaded from unky.json"
    html = comparison.to_html()
    assert "trained on moby (3,000 documents)" in html and "loaded from unky.json" in html
    assert "loaded from unky.json" in comparison.to_markdown()


def test_compare_run_records_origins(tmp_path):
    from tokembed.compare import run_comparison

    (tmp_path / "c.txt").write_text("\n".join(LINES[:300]) + "\n", encoding="utf-8")
    CharTokenizer().fit(LINES[:50]).save(tmp_path / "ch.tokembed.json")
    (tmp_path / "r.yaml").write_text(
        "corpus: {path: c.txt}\ncompare:\n  tokenizers:\n    w: {type: word}\n    ch: {load: ch.tokembed.json}\n"
        "  corpora:\n    c: {path: c.txt}\n", encoding="utf-8")
    result = run_comparison(tmp_path / "r.yaml", out=tmp_path / "out", quiet=True)
    origins = {k: v["origin"] for k, v in result.comparison.tokenizers.items()}
    size = (tmp_path / "c.txt").stat().st_size
    assert origins["w"] == f"trained on path:c.txt (1 file): {size:,} bytes"
    assert origins["ch"] == f"loaded from {tmp_path / 'ch.tokembed.json'}"
