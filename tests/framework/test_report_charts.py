"""A report that never misleads (issue 24, item 6): value labels that never overlap, unknown-token-heavy tokenizers
marked in every chart and never best on compression whatever metrics were asked, a loaded model's real type, a
parallel language that is largely the reference's text flagged beside its premium, and the boundary diff."""

from __future__ import annotations

import itertools
import re
import warnings

import pytest

pytest.importorskip("matplotlib", reason="the report extra is not installed: pip install 'tokembed[report]'")

from tokembed.compare import Comparison, Result, compare_tokenizers  # noqa: E402
from tokembed.compare.boundaries import agreeing, core_span, cuts  # noqa: E402
from tokembed.compare.engine import same_as_reference, tokenizer_type  # noqa: E402
from tokembed.compare.plots import chart_data, draw_plots, overlaps  # noqa: E402
from tokembed.compare.report import render_html  # noqa: E402
from tokembed.compare.tables import SAME_TEXT_LIMIT, UNK_RATE_LIMIT  # noqa: E402
from tokembed.corpus import Corpus  # noqa: E402
from tokembed.plugins.char.tokenizer import CharTokenizer  # noqa: E402
from tokembed.plugins.word.tokenizer import WordTokenizer  # noqa: E402

LINES = Corpus.builtin("moby-dick").head(2000)
LONG = "x" * 81  # a prose line: longer than 80 characters

# Chapter 1 in "de" is its own text; chapter 2 keeps the English prose line (81 characters of 81 + 90).
PARALLEL = {"reference": "en", "texts": {
    "en": [f"The whale swam in the deep sea. {LONG}", f"Call me Ishmael.\n{LONG}\n" + "e" * 90],
    "de": [f"Der Wal schwamm im tiefen Meer. {'y' * 81}", f"Nennt mich Ismael.\n{LONG}\n" + "d" * 90],
}}


@pytest.fixture(scope="module")
def toks():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {"char": CharTokenizer().fit(LINES),
                "unky": WordTokenizer(vocab_size=30).fit(LINES),  # most words are <unk>: it "compresses" best
                "word": WordTokenizer(min_frequency=1).fit(LINES)}


@pytest.fixture(scope="module")
def narrow(toks):
    """Only compression metrics asked: ``unk_rate`` is not among them."""
    return compare_tokenizers(toks, {"moby": LINES[500:900]}, parallel=PARALLEL,
                              metrics=["tokens", "chars_per_token", "fertility", "premium_median"], samples=2)


# -- the unknown-token rule ---------------------------------------------------------------------------------------
def test_the_unknown_token_rule_applies_when_unk_rate_is_not_requested(narrow):
    assert "unk_rate" not in narrow.metrics and "unk_rate" not in narrow.result("unky", "moby").values
    assert narrow.unk_rate("unky", "moby") > UNK_RATE_LIMIT >= narrow.unk_rate("char", "moby") == 0.0
    tokens = {t: narrow.value(t, "moby", "tokens") for t in narrow.tokenizers}
    assert min(tokens, key=tokens.get) == "unky"  # the fewest tokens, bought with <unk>...
    for metric in ("tokens", "chars_per_token", "fertility"):
        assert narrow.excluded("moby", metric) == ["unky"]  # ...so it is never best on compression
        assert "unky" not in narrow.best("moby", metric) and narrow.best("moby", metric)
    # the rate survives comparison.json, so a re-rendered report applies the same rule
    again = Comparison.from_dict(narrow.to_dict())
    assert again.unk_heavy("unky", "moby") and again.best("moby", "tokens") == narrow.best("moby", "tokens")


def test_every_chart_holds_every_tokenizer_and_marks_the_unknown_heavy(narrow, toks):
    data = chart_data(narrow)
    assert set(data) == {"chars-per-token", "fertility", "token-lengths", "premium"}
    for key, chart in data.items():
        pairs = {(r["tokenizer"], r["group"]) for r in chart["series"]}
        assert pairs == set(itertools.product(narrow.tokenizers, chart["groups"])), key
        for row in chart["series"]:
            assert row["marked"] == narrow.unk_heavy(row["tokenizer"], row["group"]), (key, row)
        assert any(r["marked"] and r["tokenizer"] == "unky" for r in chart["series"]), key
        assert not any(r["marked"] and r["tokenizer"] == "char" for r in chart["series"]), key
    # the caption of every plot says what the marks mean, where a tokenizer is marked
    page = render_html(narrow)
    for key in data:
        caption = re.search(rf'id="plot-{key}">.*?<figcaption>(.*?)</figcaption>', page, re.S).group(1)
        assert f"more than {UNK_RATE_LIMIT:.0%} unknown tokens" in caption and "Hatched" in caption
    clean = compare_tokenizers({"char": toks["char"]}, {"k": LINES[:50]}, metrics=["tokens"], samples=0)
    assert "Hatched" not in render_html(clean)  # nothing marked, nothing to explain


# -- value labels -------------------------------------------------------------------------------------------------
def test_the_overlap_rule():
    assert overlaps((0, 0, 10, 10), (5, 5, 15, 15))
    assert overlaps((0, 0, 10, 10), (10.5, 0, 20, 10))  # closer than the 1-pixel pad
    assert not overlaps((0, 0, 10, 10), (12, 0, 20, 10))
    assert not overlaps((0, 0, 10, 10), (0, 12, 10, 20))


def crowded() -> Comparison:
    """9 tokenizers on 10 languages (compare-languages' shape), values close together: labels must give way."""
    labels = [f"tok{i}" for i in range(9)]
    langs = [f"l{j}" for j in range(10)]
    meta = {"higher_is_better": True, "unit": "", "definition": "", "source": "", "compression": True}
    metrics = {"chars_per_token": meta, "fertility": {**meta, "higher_is_better": False},
               "premium_median": {**meta, "higher_is_better": False, "scope": "parallel"},
               "premium_mean": {**meta, "higher_is_better": False, "scope": "parallel"}}
    results = [Result(t, g, {"chars_per_token": 3 + 0.01 * i + 0.1 * j, "fertility": 1.3 + 0.02 * i,
                             "premium_median": 1 + 0.05 * i, "premium_mean": 1.02 + 0.05 * i},
                      token_lengths={1: 5, 3: 2}, unk_rate=0.2 if i == 1 else 0.0)
               for j, g in enumerate(langs) for i, t in enumerate(labels)]
    tokenizers = {t: {"type": "bpe", "params": {}, "vocab_size": 100} for t in labels}
    corpora = {g: {"documents": 1, "characters": 10, "bytes": 10, "words": 2, "parallel": True} for g in langs}
    parallel = {"name": "p", "reference": "l0", "languages": langs, "chapters": 1,
                "same_as_reference": {g: 0.1 * j for j, g in enumerate(langs)}}
    return Comparison(tokenizers, corpora, metrics, results, {}, parallel)


def test_value_labels_never_overlap_in_a_crowded_chart():
    layout: dict = {}
    draw_plots(crowded(), layout)
    assert set(layout) == {"chars-per-token", "fertility", "premium"}
    for key, found in layout.items():
        boxes = found["labels"]
        assert found["candidates"] == 90 and 0 < len(boxes) < 90, key  # some written, the rest left out
        for a, b in itertools.combinations(boxes, 2):
            assert not overlaps(a, b, pad=0), (key, a, b)


def test_value_labels_all_written_when_there_is_room(narrow):
    layout: dict = {}
    draw_plots(narrow, layout)
    # 3 tokenizers on 3 corpora (moby, en, de): every bar has its label
    assert len(layout["chars-per-token"]["labels"]) == layout["chars-per-token"]["candidates"] == 9


# -- the tokenizer's type -----------------------------------------------------------------------------------------
def test_a_sentencepiece_bpe_model_is_shown_as_bpe():
    from tokembed.datasets import dataset_path
    from tokembed.errors import DataError
    from tokembed.plugins.unigram.tokenizer import UnigramTokenizer

    try:
        path = dataset_path("mistral_v1_model")
    except DataError as exc:
        pytest.skip(f"the mistral_v1_model dataset is not fetched: {exc}")
    mistral = UnigramTokenizer.from_sentencepiece(path)
    assert mistral.name == "unigram" and tokenizer_type(mistral) == "sentencepiece bpe"
    comp = compare_tokenizers({"mistral": mistral}, {"k": ["a whale"]}, metrics=["tokens"], samples=0)
    assert comp.tokenizers["mistral"]["type"] == "sentencepiece bpe"


def test_a_trained_tokenizer_keeps_its_plugin_name(toks):
    from tokembed.plugins.unigram.tokenizer import UnigramTokenizer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        unigram = UnigramTokenizer(vocab_size=200).fit(LINES[:300])
    assert tokenizer_type(unigram) == "unigram"
    assert tokenizer_type(toks["char"]) == "char"


# -- a language that is largely the reference's text --------------------------------------------------------------
def test_same_as_reference_by_hand():
    shares = same_as_reference(PARALLEL["texts"], "en")
    # de: prose lines 1: "Der Wal ... y*81" (113 chars, not in en); 2: LONG (81, in en chapter 2), "d"*90 (90, no)
    assert shares["de"] == round(81 / (113 + 81 + 90), 4)
    assert "en" not in shares  # the reference itself
    assert same_as_reference({"en": ["short"], "de": ["kurz"]}, "en") == {"de": None}  # no prose line to compare


def test_a_language_mostly_in_the_reference_text_is_flagged_beside_its_premium(toks):
    twin = {"reference": "en", "texts": {"en": PARALLEL["texts"]["en"],
                                         "de": PARALLEL["texts"]["de"],
                                         "xx": PARALLEL["texts"]["en"]}}  # an untranslated "translation"
    comp = compare_tokenizers(toks, {}, parallel=twin, metrics=["tokens", "premium_median"], samples=0)
    assert comp.same_text("xx") == 1.0 > SAME_TEXT_LIMIT and comp.mostly_reference_text("xx")
    assert not comp.mostly_reference_text("de") and comp.same_text("en") is None  # the reference itself
    assert chart_data(comp)["premium"]["flagged"] == ["xx"]
    page = render_html(comp)
    flags = re.findall(r'<p class="flag" data-corpus="([^"]+)">', page)
    assert flags == ["xx"] and "100% of the xx text" in page
    assert f"- {comp.same_text_note('xx')}" in comp.to_markdown()
    cells = re.findall(r'<td class="([^"]*)" data-metric="premium_median"', page)
    assert sum("flagged" in c for c in cells) == len(toks)  # the xx row of every tokenizer


# -- the boundary diff --------------------------------------------------------------------------------------------
def test_boundaries_by_hand():
    text = "the whale €"
    a = [("the", 1, 0, 3), ("Ġwhale", 2, 3, 9), ("Ġ", 3, 9, 10), ("<0xE2>", 4, 10, 11), ("<0x82>", 5, 10, 11)]
    b = [("the", 1, 0, 3), ("wh", 2, 4, 6), ("ale", 3, 6, 9), ("€", 4, 10, 11)]
    assert core_span(text, 3, 9) == (4, 9) and core_span(text, 9, 10) is None
    assert cuts(text, a) == [0, 3, 4, 9, 10, 11] and cuts(text, b) == [0, 3, 4, 6, 9, 10, 11]
    agree = agreeing(text, {"a": a, "b": b})
    # "the" is cut the same by both; " whale" is one token in a, two in b; the space alone is never highlighted;
    # the two byte pieces of € and b's € cover the same character
    assert agree["a"] == [["a", "b"], ["a"], ["a", "b"], ["a", "b"], ["a", "b"]]
    assert agree["b"] == [["a", "b"], ["b"], ["b"], ["a", "b"]]


def test_the_boundary_diff_marks_tokens_for_the_picked_pair(narrow):
    page = render_html(narrow)
    labels = list(narrow.tokenizers)
    # two rows of radio buttons, the first two tokenizers picked
    assert re.findall(r'<input type="radio" name="diff-a" id="diff-a(\d)" class="diff-input"( checked)?>', page) \
        == [("0", " checked"), ("1", ""), ("2", "")]
    assert re.search(r'id="diff-b1" class="diff-input" checked>', page)
    # a style rule per ordered pair highlights the tokens the other one does not cut the same way
    for i, j in itertools.permutations(range(len(labels)), 2):
        assert f"#diff-a{i}:checked ~ #diff-b{j}:checked ~ .diff-samples .r{i} .tok:not(.s{j})" in page
    # the classes follow agreeing(): a char token of a word agrees with "word" only for one-letter words
    sample = narrow.samples["moby"][0]
    agree = agreeing(sample.text, sample.tokens)
    row = re.search(r'<div class="seg-row r0" data-tokenizer="char">(.*?)</div>', page, re.S).group(1)
    boxes = re.findall(r'<span class="tok ([^"]*)"', row)
    assert len(boxes) == len(agree["char"])
    for classes, same in zip(boxes, agree["char"]):
        assert {c for c in classes.split() if c[0] == "s"} == {f"s{labels.index(x)}" for x in same}
    assert any("s2" not in c.split() for c in boxes)  # char and word do cut differently


def _chromium() -> str | None:
    import shutil

    return next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)


@pytest.mark.skipif(_chromium() is None, reason="headless Chromium is not installed (Debian: apt-get install chromium)")
def test_chromium_highlights_the_picked_pair_and_nothing_when_a_equals_b(narrow, tmp_path):
    import os
    import subprocess
    import tempfile

    import numpy as np
    from matplotlib.image import imread

    page = render_html(narrow)
    page = re.sub(r'<section id="(summary|plots)">.*?</section>', "", page, flags=re.S)  # the samples on screen
    page = page.replace('class="tok t0 diffed"', 'class="tok t0"')  # the legend's highlighted sample box

    def yellow_pixels(doc: str, name: str) -> int:
        report = tmp_path / f"{name}.html"
        report.write_text(doc, encoding="utf-8")
        shot = tmp_path / f"{name}.png"
        profile = tempfile.mkdtemp(prefix="chromium-", dir=tmp_path)
        cmd = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
               f"--screenshot={shot}", "--window-size=1280,1600", report.as_uri()]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                              env={**os.environ, "HOME": str(tmp_path)})
        assert shot.exists(), f"no screenshot (exit {done.returncode}): {done.stderr[-2000:]}"
        rgb = (imread(str(shot))[..., :3] * 255).round()
        return int((np.abs(rgb - np.array([0xFD, 0xE0, 0x47])).max(axis=-1) <= 6).sum())  # #fde047, the highlight

    # char (A) against unky (B), picked by default: they cut differently, so tokens are highlighted
    assert yellow_pixels(page, "pair") > 500
    # A = B = char: nothing differs, nothing is highlighted
    same = page.replace('id="diff-b1" class="diff-input" checked>', 'id="diff-b1" class="diff-input">')
    same = same.replace('id="diff-b0" class="diff-input">', 'id="diff-b0" class="diff-input" checked>')
    assert yellow_pixels(same, "same") == 0
