"""The comparison engine and its plain outputs (terminal table, JSON, CSV, Markdown).

The HTML report has its own tests (test_report.py)."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
import textwrap

import pytest

from tokembed.compare import FORMATS, Comparison, ParallelSet, compare_tokenizers
from tokembed.corpus import Corpus
from tokembed.errors import CorpusError, NotFittedError, PluginError, TokembedError
from tokembed.metrics import Metric, tokenizer_metrics
from tokembed.plugins.char.tokenizer import CharTokenizer
from tokembed.plugins.word.tokenizer import WordTokenizer
from tokembed.registry import build_registry

FIT = ["the cat sat", "the dog"]
TEXT = ["the cat sat on the mat.", "a dog and a cat", "the dog sat down on the mat today", "the end"]


@pytest.fixture(scope="module")
def registry():
    return build_registry()


@pytest.fixture(scope="module")
def tokenizers():
    return {"char": CharTokenizer().fit(FIT), "word": WordTokenizer().fit(FIT)}


@pytest.fixture(scope="module")
def comparison(tokenizers, registry):
    parallel = {"reference": "en", "texts": {"en": ["the cat", "the dog", "the cat sat"],
                                             "xx": ["a b c d", "a b", "a b c d e f"]}}
    return compare_tokenizers(tokenizers, {"text": TEXT, "fit": FIT}, parallel=parallel, registry=registry)


def test_results_cover_every_pair_and_agree_with_tokenizer_metrics(comparison, tokenizers, registry):
    assert list(comparison.corpora) == ["text", "fit", "en", "xx"]
    assert [(r.corpus, r.tokenizer) for r in comparison.results] == [
        (c, t) for c in ("text", "fit", "en", "xx") for t in ("char", "word")]
    for label, tok in tokenizers.items():
        alone = tokenizer_metrics(tok, TEXT, registry=registry)
        values = comparison.result(label, "text").values
        for name, value in alone.items():
            if name in values:
                assert values[name] == value, name
    assert comparison.corpora["text"] == {"documents": 4, "characters": 23 + 15 + 33 + 7, "bytes": 78,
                                          "words": 6 + 5 + 8 + 2, "parallel": False}
    params = WordTokenizer().get_params()
    assert comparison.tokenizers["word"] == {"type": "word", "vocab_size": 6,
                                             "params": {**params, "special_tokens": list(params["special_tokens"])}}


def test_premium_is_computed_on_the_parallel_languages(comparison):
    # word tokenizer: en chapters 2, 2, 3 tokens; xx 4, 2, 6 -> ratios 2, 1, 2: median 2, mean 5/3
    assert comparison.value("word", "xx", "premium_median") == 2.0
    assert comparison.value("word", "xx", "premium_mean") == round(5 / 3, 6)
    assert comparison.value("word", "en", "premium_median") == 1.0
    # char tokenizer: en 7, 7, 11 characters; xx 7, 3, 11 -> ratios 1, 3/7, 1: median 1, mean (2 + 3/7) / 3
    assert comparison.value("char", "xx", "premium_median") == 1.0
    assert comparison.value("char", "xx", "premium_mean") == round((2 + 3 / 7) / 3, 6)
    # not defined on ordinary corpora
    assert comparison.value("word", "text", "premium_median") is None
    # same_as_reference: the chapters have no prose line (over 80 characters) to compare
    assert comparison.parallel == {"name": "parallel", "reference": "en", "languages": ["en", "xx"], "chapters": 3,
                                   "same_as_reference": {"xx": None}}


def test_best_per_corpus(comparison):
    # on "text" both emit unknown tokens (char 12.8%, word 50%, above UNK_RATE_LIMIT): their compression is not
    # compared there; unknown tokens are (char has fewer)
    for metric in ("chars_per_token", "tokens", "continued_words", "fertility"):
        assert comparison.excluded("text", metric) == ["char", "word"] and comparison.best("text", metric) == []
    assert comparison.best("text", "unk_rate") == ["char"] and comparison.excluded("text", "unk_rate") == []
    # on "fit", its training text, neither has an unknown token: chars per token char 1.0, word > 1 -> word
    assert comparison.best("fit", "chars_per_token") == ["word"]
    assert comparison.best("fit", "tokens") == ["word"]
    assert comparison.best("fit", "fertility") == ["word"]
    # no direction: vocabulary size is never highlighted
    assert comparison.best("text", "vocab_size") == []
    # equal values stand out from nothing: both tokenizers are deterministic
    assert comparison.best("text", "deterministic") == []
    # all-n/a: premium on an ordinary corpus
    assert comparison.best("text", "premium_median") == []


def test_best_keeps_ties():
    comp = Comparison(
        {"a": {"type": "x", "params": {}, "vocab_size": 1}, "b": {"type": "x", "params": {}, "vocab_size": 1},
         "c": {"type": "x", "params": {}, "vocab_size": 1}},
        {"k": {"documents": 1, "characters": 1, "bytes": 1, "words": 1, "parallel": False}},
        {"m": {"name": "m", "label": "m", "unit": "u", "definition": "d", "source": "s", "higher_is_better": False,
               "display": ".3f", "scope": "corpus", "timing": False}},
        [], {})
    from tokembed.compare import Result

    comp.results = [Result("a", "k", {"m": 2.0}), Result("b", "k", {"m": 1.0}), Result("c", "k", {"m": 1.0})]
    assert comp.best("k", "m") == ["b", "c"]
    comp.metrics["m"]["higher_is_better"] = True
    assert comp.best("k", "m") == ["a"]


def test_samples_for_the_segmentation_view(comparison):
    samples = comparison.samples["text"]
    # 4 lines of 20 to 240 characters? "a dog and a cat" (15) and "the end" (7) are short: 2 candidates + 2 fallbacks
    assert [s.text for s in samples] == ["the cat sat on the mat.", "the dog sat down on the mat today",
                                         "a dog and a cat", "the end"]
    s = samples[0]
    assert set(s.tokens) == {"char", "word"}
    assert "".join(s.text[a:b] for _, _, a, b in s.tokens["char"]) == s.text
    assert [tok for tok, _, _, _ in s.tokens["char"]][:4] == ["t", "h", "e", " "]
    assert [s.text[a:b] for _, _, a, b in s.tokens["word"]] == ["the", "cat", "sat", "on", "the", "mat", "."]
    assert s.tokens["word"][3][:2] == ("<unk>", 1)  # "on" is not in the 6-entry vocabulary


def test_samples_spread_over_the_corpus(tokenizers):
    lines = [f"line number {i:03d} of the corpus" for i in range(100)]
    comp = compare_tokenizers(tokenizers, {"c": lines}, metrics=["tokens"], samples=5)
    assert [s.text for s in comp.samples["c"]] == [lines[i] for i in (0, 20, 40, 60, 80)]


def test_json_round_trip(comparison):
    data = json.loads(comparison.to_json())
    assert data["format"] == "tokembed-comparison"
    assert data["best"]["fit"]["chars_per_token"] == ["word"] and "chars_per_token" not in data["best"]["text"]
    again = Comparison.from_dict(data)
    assert again.to_dict() == comparison.to_dict()
    with pytest.raises(TokembedError, match="not a tokembed comparison"):
        Comparison.from_dict({"format": "other"})


def test_csv(comparison):
    rows = list(csv.DictReader(io.StringIO(comparison.to_csv())))
    assert len(rows) == 2 * 4
    first = rows[0]
    assert (first["tokenizer"], first["type"], first["corpus"]) == ("char", "char", "text")
    assert float(first["chars_per_token"]) == 1.0
    assert first["deterministic"] == "true" and first["premium_median"] == ""
    assert list(first)[3:] == list(comparison.metrics)


def test_markdown(comparison):
    md = comparison.to_markdown()
    assert md.count("\n## ") == 4 + 1  # one section per corpus and the metrics
    for name in comparison.metrics:
        assert f"`{name}`" in md
    word_row = next(line for line in md.split("## fit")[1].splitlines() if line.startswith("| word |"))
    assert "premium" not in md.split("## text")[1].split("## fit")[0]  # no parallel columns outside the set
    assert "| premium |" in md.split("## en")[1]
    chars = format(comparison.value("word", "fit", "chars_per_token"), ".3f")
    assert f"**{chars}**" in word_row
    text_row = next(line for line in md.split("## text")[1].splitlines() if line.startswith("| word |"))
    assert f"*{format(comparison.value('word', 'text', 'chars_per_token'), '.3f')}*" in text_row  # not compared
    assert "Parallel set parallel: 2 languages, 3 aligned chapters, reference en." in md


def test_terminal_table(comparison):
    plain = comparison.to_table(color=False, width=400)
    lines = plain.splitlines()
    assert lines[0].split()[:4] == ["corpus", "tokenizer", "vocab", "tokens"]
    # rows: header, rule, then text/char and text/word; on "text" token counts are not compared (unknown tokens),
    # on "fit" the word tokenizer has the fewest
    assert lines[2].split()[:3] == ["text", "char", "12"] and lines[3].split()[:3] == ["word", "6", "22"]
    assert lines[5].split()[2].endswith("*") and lines[5].split()[0] == "word"
    assert "\x1b[" not in plain and "n/a: not defined for that corpus" in plain and "too small to time" in plain
    colored = comparison.to_table(color=True, width=400)
    assert "\x1b[1;32m" in colored and "*" not in colored.replace("* best", "")
    # every metric shown has a column; the premium columns exist because a parallel set was given
    assert "premium" in lines[0]


def test_terminal_table_wraps_to_the_width(comparison):
    table = comparison.to_table(color=False, width=80)
    body = [line for line in table.splitlines()[:-1]]
    assert max(len(line) for line in body) <= 80
    assert sum(1 for line in body if line.startswith("corpus")) >= 3  # several blocks, each with its header


def test_write(comparison, tmp_path):
    paths = comparison.write(tmp_path / "out", formats=["json", "csv", "md", "txt"])
    assert {p.name for p in paths.values()} == {FORMATS[f] for f in ("json", "csv", "md", "txt")}
    assert json.loads((tmp_path / "out" / "comparison.json").read_text("utf-8"))["tokenizers"]["char"]["type"] == "char"
    with pytest.raises(TokembedError, match="unknown output format.*'pdf'"):
        comparison.write(tmp_path, formats=["pdf"])


def _without_timing(data):
    for r in data["results"]:
        r["values"].pop("throughput", None)
        r.pop("encode_seconds", None)
    data["best"] = {c: {m: v for m, v in b.items() if m != "throughput"} for c, b in data["best"].items()}
    return data


def test_outputs_are_deterministic_apart_from_timing(tokenizers, registry):
    def once():
        return compare_tokenizers(tokenizers, {"text": TEXT}, registry=registry)

    a, b = once(), once()
    assert _without_timing(a.to_dict()) == _without_timing(b.to_dict())
    no_timing = [m for m in a.metrics if m != "throughput"]
    c = compare_tokenizers(tokenizers, {"text": TEXT}, metrics=no_timing, registry=registry)
    d = compare_tokenizers(tokenizers, {"text": TEXT}, metrics=no_timing, registry=registry)
    strip = re.compile(r'"encode_seconds": [0-9.e-]+')
    assert strip.sub("", c.to_json()) == strip.sub("", d.to_json())
    assert c.to_csv() == d.to_csv() and c.to_markdown() == d.to_markdown()


def test_threads_give_the_same_comparison(tokenizers, registry, monkeypatch):
    # 2,400 documents: ten chunks of 256, encoded for both tokenizers on 1 and on 3 threads, fed in document order
    import tokembed.compare.engine as engine
    from tokembed.metrics import CHUNK_SIZE

    docs = [f"{t} {i}" for i in range(600) for t in TEXT]
    assert len(docs) > 3 * CHUNK_SIZE
    out = {}
    for workers in (1, 3):
        monkeypatch.setattr(engine, "default_workers", lambda w=workers: w)
        comp = compare_tokenizers(tokenizers, {"text": docs, "gen": (d for d in docs)}, registry=registry)
        out[workers] = _without_timing(comp.to_dict())
    assert out[1] == out[3]
    assert comp.corpora["text"]["documents"] == 2400 and comp.value("char", "text", "round_trip") is not None


def test_corpus_objects_stream(tokenizers, tmp_path, registry):
    path = tmp_path / "c.txt"
    path.write_text("\n".join(TEXT) + "\n", encoding="utf-8")
    comp = compare_tokenizers(tokenizers, {"file": Corpus.from_path(path), "gen": (t for t in TEXT)},
                              metrics=["tokens", "fertility", "deterministic"], registry=registry)
    assert comp.value("word", "file", "tokens") == comp.value("word", "gen", "tokens")
    assert comp.value("word", "gen", "deterministic") is True  # the generator was kept for the second pass


def test_input_errors(tokenizers, registry):
    with pytest.raises(TokembedError, match="at least one tokenizer"):
        compare_tokenizers({}, {"c": TEXT})
    with pytest.raises(NotFittedError, match="tokenizer 'raw' is not fitted"):
        compare_tokenizers({"raw": CharTokenizer()}, {"c": TEXT})
    with pytest.raises(TokembedError, match="'c': expected a list of documents or a Corpus, got one str"):
        compare_tokenizers(tokenizers, {"c": "one string"})
    with pytest.raises(CorpusError, match="'c' holds no document"):
        compare_tokenizers(tokenizers, {"c": []}, registry=registry)
    with pytest.raises(TokembedError, match="'en' are also languages of the parallel set"):
        compare_tokenizers(tokenizers, {"en": TEXT}, parallel={"reference": "en", "texts": {"en": ["a"]}})
    with pytest.raises(TokembedError, match="chapters must be aligned.*'de' has 1"):
        ParallelSet({"en": ["a", "b"], "de": ["a"]}, "en")
    with pytest.raises(TokembedError, match="reference language 'fr' is not one of its languages"):
        ParallelSet({"en": ["a"]}, "fr")
    with pytest.raises(TokembedError, match="ParallelSet or"):
        compare_tokenizers(tokenizers, {"c": TEXT}, parallel={"en": ["a"]})


def test_a_failing_metric_is_named(tokenizers):
    class Boom(Metric):
        name = "boom"
        unit = definition = source = "x"

        def result(self, stats):
            raise RuntimeError("no")

    with pytest.raises(PluginError, match="metric 'boom'.*failed in result: RuntimeError: no"):
        compare_tokenizers(tokenizers, {"c": TEXT}, metrics=[Boom])


def test_a_plain_comparison_does_not_import_matplotlib():
    # numba is expected: measuring runs on the Numba chunk pass (DESIGN section 8, tokembed.metrics._kernels)
    code = textwrap.dedent("""
        import sys
        from tokembed.compare import compare_tokenizers
        from tokembed.plugins.char.tokenizer import CharTokenizer
        comp = compare_tokenizers({"c": CharTokenizer().fit(["abc"])}, {"k": ["abc", "cab"]})
        comp.to_json(); comp.to_csv(); comp.to_markdown(); comp.to_table()
        import tokembed.compare.report
        print("LOADED", sorted(m for m in ("matplotlib", "torch") if m in sys.modules))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "LOADED []" in done.stdout
