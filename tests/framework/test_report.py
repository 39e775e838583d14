"""The HTML report: it parses, names every tokenizer and metric, embeds one PNG per plot, shows the segmentation view
with 5 sentences per corpus, escapes what it shows, fetches nothing, is deterministic, loads matplotlib only when
drawn, and renders to something that is not one flat colour in headless Chromium."""

from __future__ import annotations

import base64
import html.parser
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("matplotlib", reason="the report extra is not installed: pip install 'tokembed[report]'")

from tokembed.compare import compare_tokenizers  # noqa: E402
from tokembed.plugins.char.tokenizer import CharTokenizer  # noqa: E402
from tokembed.plugins.word.tokenizer import WordTokenizer  # noqa: E402
from tokembed.compare.report import PLOTS, _segmentation, draw_plots, render_html, write_html  # noqa: E402
from tokembed.testing import sample_corpus  # noqa: E402

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

PARALLEL = {"reference": "en", "texts": {
    "en": ["The whale swam in the deep sea.", "Call me Ishmael.", "The ship sailed at dawn with the crew."],
    "de": ["Der Wal schwamm im tiefen Meer.", "Nennt mich Ismael.", "Das Schiff segelte im Morgengrauen."],
}}


class Tree(html.parser.HTMLParser):
    """A strict-enough parser: every non-void element closes in order; collects elements with their attributes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.elements: list[tuple[str, dict, list[str]]] = []  # (tag, attrs, ancestors)
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs), list(self.stack)))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.elements.append((tag, dict(attrs), list(self.stack)))

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1] if self.stack else 'nothing'}")
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def parse(doc: str) -> Tree:
    tree = Tree()
    tree.feed(doc)
    tree.close()
    assert tree.errors == [] and tree.stack == [], (tree.errors, tree.stack)
    return tree


def classes(attrs: dict) -> set[str]:
    return set((attrs.get("class") or "").split())


@pytest.fixture(scope="module")
def comparison():
    corpus = sample_corpus(6_000)
    lines = [line for p in corpus for line in p.splitlines()]
    tokenizers = {"char": CharTokenizer().fit(corpus), "word": WordTokenizer(min_frequency=2).fit(corpus),
                  "<b>words</b> & co": WordTokenizer(normalizer="lowercase", vocab_size=200).fit(corpus)}
    return compare_tokenizers(tokenizers, {"moby": lines, "tail": lines[::-1]}, parallel=PARALLEL, samples=5)


@pytest.fixture(scope="module")
def page(comparison):
    return render_html(comparison)


def test_the_html_parses_and_is_a_full_document(page):
    assert page.startswith("<!DOCTYPE html>")
    tree = parse(page)
    tags = [t for t, _, _ in tree.elements]
    assert tags[0] == "html" and "head" in tags and "body" in tags and tags.count("title") == 1


def test_names_every_tokenizer_and_every_metric(page, comparison):
    tree = parse(page)
    text = "".join(tree.text)
    for label in comparison.tokenizers:
        assert label in text
    for name, meta in comparison.metrics.items():
        assert name in text and meta["label"] in text and meta["definition"] in text
    # the summary has one table per corpus, with a header per shown metric
    tables = [a for t, a, _ in tree.elements if t == "table" and "summary" in classes(a)]
    assert len(tables) == len(comparison.corpora)
    headers = {a["data-metric"] for t, a, anc in tree.elements if t == "th" and "data-metric" in a}
    assert headers == set(comparison.shown_metrics())


def test_best_values_are_highlighted(page, comparison):
    tree = parse(page)
    best_cells = [a["data-metric"] for t, a, _ in tree.elements if t == "td" and "best" in classes(a)]
    expected = sum(len(comparison.best(c, m)) for c in comparison.corpora for m in comparison.shown_metrics(c))
    assert len(best_cells) == expected > 0
    assert "unk_rate" in best_cells and "throughput" not in best_cells  # the corpus is too small to time
    # the word tokenizers emit unknown tokens (above 1%): compression cells are greyed, not compared
    excluded = [a["data-metric"] for t, a, _ in tree.elements if t == "td" and "excluded" in classes(a)]
    assert "chars_per_token" in excluded and "chars_per_token" not in best_cells


def test_one_embedded_png_per_plot(page, comparison):
    tree = parse(page)
    figures = {a["id"]: anc for t, a, anc in tree.elements if t == "figure"}
    assert set(figures) == {f"plot-{k}" for k in PLOTS}  # the premium plot is there: a parallel set was given
    assert all(anc[-1] == "figure" for t, _, anc in tree.elements if t == "img")
    srcs = re.findall(r'<figure class="plot" id="plot-([a-z-]+)"><img alt="[^"]*" src="data:image/png;base64,'
                      r'([A-Za-z0-9+/=]+)"', page)
    assert {k for k, _ in srcs} == set(PLOTS)
    for _, data in srcs:
        png = base64.b64decode(data)
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5_000


def test_no_premium_plot_without_a_parallel_set():
    tok = CharTokenizer().fit(["abc def"])
    # labels with "$" are drawn literally ("$x_{$" would be broken mathtext)
    comp = compare_tokenizers({"$x_{$": tok}, {"$k": ["abc def", "fed cba"]}, samples=2)
    assert set(draw_plots(comp)) == {"chars-per-token", "fertility", "token-lengths"}
    assert "No parallel set was given" in render_html(comp)
    # a plot whose metric was not computed is left out
    only = compare_tokenizers({"c": tok}, {"k": ["abc def"]}, metrics=["tokens", "fertility"], samples=1)
    assert set(draw_plots(only)) == {"fertility", "token-lengths"}


def test_segmentation_view_has_five_sentences_per_corpus_split_by_each_tokenizer(page, comparison):
    tree = parse(page)
    samples = [a for t, a, _ in tree.elements if t == "div" and "sample" in classes(a)]
    for corpus in comparison.corpora:
        n = sum(1 for a in samples if a["data-corpus"] == corpus)
        assert n == (5 if corpus in ("moby", "tail") else 3), corpus  # the parallel languages have 3 chapters
    rows = [a for t, a, _ in tree.elements if t == "div" and "seg-row" in classes(a)]
    assert len(rows) == len(samples) * len(comparison.tokenizers)
    assert {a["data-tokenizer"] for a in rows} == set(comparison.tokenizers)
    tokens = [a for t, a, _ in tree.elements if t == "span" and "tok" in classes(a) and "data-id" in a]
    assert tokens and all(re.match(r"id \d+ · token ", a["title"]) for a in tokens)
    total = sum(len(toks) for s in comparison.samples.values() for sample in s for toks in sample.tokens.values())
    assert len(tokens) == total  # one box per token


def test_segmentation_boxes_cover_the_text():
    # word tokenizer on "ab, cd": tokens ab [0,2) , [2,3) cd [4,6); the space is a gap
    html_row = _segmentation("ab, cd", [("ab", 5, 0, 2), (",", 6, 2, 3), ("cd", 7, 4, 6)], "<unk>")
    assert re.sub(r"<[^>]+>", "", html_row) == "ab,·cd"
    assert html_row.count('class="tok t') == 3 and 'class="gap"' in html_row
    # a byte piece sharing the previous token's character gets a dashed box with its own string
    pieces = _segmentation("é", [("<C3>", 195, 0, 1), ("<A9>", 169, 0, 1)], None)
    assert 'class="tok t0"' in pieces and 'class="tok part"' in pieces and "&lt;A9&gt;" in pieces
    # the unknown token shows the text it replaced, in red
    assert 'class="tok unk"' in _segmentation("zz", [("<unk>", 1, 0, 2)], "<unk>")


def test_everything_is_escaped(page):
    assert "<b>words</b>" not in page
    assert "&lt;b&gt;words&lt;/b&gt; &amp; co" in page
    assert "<script" not in page.lower()


def test_nothing_is_fetched(page):
    tree = parse(page)
    for tag, attrs, _ in tree.elements:
        assert tag not in ("script", "link", "iframe", "object")
        for key in ("src", "href"):
            value = attrs.get(key)
            if value is not None:
                assert value.startswith(("data:image/png;base64,", "#")), (tag, key, value[:40])
    assert "url(" not in page and "@import" not in page


def test_deterministic_apart_from_timing(comparison):
    import copy

    twin = copy.deepcopy(comparison)
    assert render_html(twin) == render_html(comparison)
    for r in twin.results:
        r.values["throughput"] = 123.0
    changed = render_html(twin)
    assert changed != render_html(comparison) and "123.00" in changed


def test_write_html_and_comparison_write(comparison, tmp_path):
    path = write_html(comparison, tmp_path / "r.html", title="My <title>")
    text = path.read_text("utf-8")
    assert "<title>My &lt;title&gt;</title>" in text
    out = comparison.write(tmp_path / "all")
    assert sorted(p.name for p in out.values()) == ["comparison.csv", "comparison.json", "comparison.md",
                                                    "report.html"]


def test_matplotlib_is_imported_only_when_a_report_is_drawn():
    code = textwrap.dedent("""
        import sys
        from tokembed.compare import compare_tokenizers
        from tokembed.plugins.char.tokenizer import CharTokenizer
        comp = compare_tokenizers({"c": CharTokenizer().fit(["abc"])}, {"k": ["abc", "cab"]})
        import tokembed.compare.report
        before = "matplotlib" in sys.modules
        comp.to_html()
        print("BEFORE", before, "AFTER", "matplotlib" in sys.modules)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert "BEFORE False AFTER True" in done.stdout


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.mark.skipif(_chromium() is None, reason="headless Chromium is not installed (Debian: apt-get install chromium;"
                                                " .ci/run installs it)")
def test_headless_chromium_renders_the_report(page, tmp_path):
    report = tmp_path / "report.html"
    report.write_text(page, encoding="utf-8")
    shot = tmp_path / "shot.png"
    profile = tempfile.mkdtemp(prefix="chromium-", dir=tmp_path)
    cmd = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
           f"--screenshot={shot}", "--window-size=1280,2000", report.as_uri()]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env={**os.environ, "HOME": str(tmp_path)})
    assert shot.exists(), f"no screenshot (exit {done.returncode}): {done.stderr[-2000:]}"
    from matplotlib.image import imread

    pixels = imread(str(shot))
    assert pixels.shape[:2] == (2000, 1280)
    assert not looks_flat(pixels), "the screenshot is (almost) one flat colour"
    # the dark header and the white cards are both there: the header's corner, and the card to the right of the
    # summary tables (a patch, so that a highlighted cell moving into one pixel does not decide)
    import numpy as np

    assert (pixels[20, 20, :3] < 0.2).all()
    assert (np.median(pixels[300:500, 1140:1200, :3], axis=(0, 1)) > 0.9).all()


def looks_flat(pixels) -> bool:
    """True when an RGB(A) float image is (almost) one colour: tiny spread, or fewer than 50 distinct colours."""
    flat = pixels[..., :3].reshape(-1, 3)
    distinct = len({tuple(p) for p in (flat[::97] * 255).astype(int).tolist()})
    return bool(flat.std() <= 0.05 or distinct <= 50)


def test_the_flatness_check_can_fail():
    import numpy as np

    assert looks_flat(np.ones((200, 100, 4)))
    assert looks_flat(np.dstack([np.full((200, 100), 0.2)] * 3))
    rng = np.random.default_rng(0)
    assert not looks_flat(rng.random((200, 100, 3)))


def test_the_report_extra_installs_matplotlib():
    root = Path(__file__).resolve().parents[2]
    text = (root / "pyproject.toml").read_text("utf-8")
    assert re.search(r'^report = \["matplotlib', text, re.MULTILINE)
