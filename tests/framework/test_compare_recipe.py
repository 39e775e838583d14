"""``compare:`` recipes and ``tokembed compare``: loading and checking the section, ``{load: FILE}`` dispatch, corpus
limits, the parallel set, and a whole run on tiny corpora.

Bad recipes live in ``tests/recipes/bad/compare_*.yaml`` with their exact messages in ``.expected`` files (the
recipe tests check them too, with their own fake registry; the one here lists the same tokenizer names). The
``{load:}`` readers of the BPE and WordPiece plugins are stood in for by fakes that record their calls.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest

import tokembed
from tokembed import Tokenizer, hookimpl
from tokembed.cli import main
from tokembed.compare import Comparison
from tokembed.compare import PRINT_FORMATS, render, run_comparison
from tokembed.errors import ArtifactError, RecipeError
from tokembed.plugins.char.tokenizer import CharTokenizer
from tokembed.plugins.word.tokenizer import WordTokenizer
from tokembed.recipe import CompareSpec, ComponentSpec, LoadSpec, load_recipe, load_recipe_string
from tokembed.corpus import open_corpus, open_parallel, spread
from tokembed.recipe.load import load_tokenizer, read_tokenizer
from tokembed.registry import build_registry
from tokembed.io import RUN_MARKER

ROOT = Path(__file__).resolve().parents[2]
BAD = sorted((ROOT / "tests" / "recipes" / "bad").glob("compare*.yaml"))


# -- fakes -----------------------------------------------------------------------------------------------------------
class Typed(Tokenizer):
    """Only here so that the registry lists ``char, typed, word`` like the recipe tests' registry."""

    name: ClassVar[str] = "typed"

    def __init__(self, size: int = 1):
        self.size = size


class FakeBPE(CharTokenizer):
    """Stands in for the BPE plugin's readers: records each call and returns a char tokenizer fitted on the file."""

    name: ClassVar[str] = "bpe"
    load_formats: ClassVar[tuple[str, ...]] = ("tiktoken", "hf_json:BPE")
    calls: ClassVar[list] = []

    @classmethod
    def from_tiktoken(cls, path: str, pattern: str = "gpt2", **params: Any) -> "FakeBPE":
        cls.calls.append(("from_tiktoken", path, pattern, params))
        return cls(**params).fit([Path(path).read_text(encoding="utf-8")])

    @classmethod
    def from_hf_json(cls, path: str, dropout: float = 0.0) -> "FakeBPE":
        cls.calls.append(("from_hf_json", path, dropout))
        if dropout >= 1:
            raise ValueError("dropout must be below 1")
        return cls().fit(["json"])


class FakeWordPiece(CharTokenizer):
    """Reads a vocab.txt (but has no ``from_hf_json``)."""

    name: ClassVar[str] = "wordpiece"
    load_formats: ClassVar[tuple[str, ...]] = ("vocab_txt",)
    calls: ClassVar[list] = []

    @classmethod
    def from_vocab_file(cls, path: str, lowercase: bool = True) -> "FakeWordPiece":
        cls.calls.append(("from_vocab_file", path, lowercase))
        return cls().fit(Path(path).read_text(encoding="utf-8").split())


class Fakes:
    def __init__(self, *classes: type):
        self.classes = list(classes)

    @hookimpl
    def tokembed_register_tokenizers(self):
        return self.classes


def make_registry(*classes: type):
    reg = build_registry(autoload=False, blocked=["tokembed"],
                         plugins=["tokembed.plugins.char", "tokembed.plugins.word", Fakes(Typed, *classes)])
    assert not reg.failures, reg.failures
    return reg


@pytest.fixture
def reg(monkeypatch):
    monkeypatch.delenv("TOKEMBED_PLUGINS", raising=False)
    return make_registry()


@pytest.fixture
def fake_reg(monkeypatch):
    monkeypatch.delenv("TOKEMBED_PLUGINS", raising=False)
    FakeBPE.calls.clear()
    FakeWordPiece.calls.clear()
    return make_registry(FakeBPE, FakeWordPiece)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def problems_of(text: str, reg, base: Path, **kw) -> list[str]:
    with pytest.raises(RecipeError) as info:
        load_recipe_string(text, source="r.yaml", base_dir=base, registry=reg, **kw)
    return [str(p) for p in info.value.problems]


# -- a tiny project: training text, an evaluation corpus, a parallel set, a saved tokenizer --------------------------
TRAIN = "the cat sat\nthe dog sat\na cat!\n"
EVAL = "the cat\nthe bird\n"
PARALLEL = {"en": {"1.txt": "the cat", "2.txt": "the dog sat"},
            "de": {"1.txt": "die katze", "2.txt": "der hund sass"}}
RECIPE = """\
corpus: {path: data/train.txt, max_lines: 2}
compare:
  tokenizers:
    char: {type: char}
    words: {type: word, min_frequency: 1}
    saved: {load: models/xyz.tokembed.json}
  corpora:
    eval: {path: data/eval.txt}
  parallel: {path: data/parallel, reference: en}
  metrics: [vocab_size, tokens, unk_rate, fertility, premium_median, premium_mean]
  samples: 2
output: out
"""


@pytest.fixture
def project(tmp_path):
    write(tmp_path / "data" / "train.txt", TRAIN)
    write(tmp_path / "data" / "eval.txt", EVAL)
    for lang, chapters in PARALLEL.items():
        for name, text in chapters.items():
            write(tmp_path / "data" / "parallel" / lang / name, text)
    (tmp_path / "models").mkdir()
    CharTokenizer().fit(["xyz"]).save(tmp_path / "models" / "xyz.tokembed.json")
    return write(tmp_path / "compare.yaml", RECIPE)


# -- bad recipes: exact messages, before any work --------------------------------------------------------------------
def test_there_are_bad_compare_recipes():
    assert [p.stem for p in BAD] == ["compare_missing_corpus", "compare_sections", "compare_unknown_tokenizer"]


@pytest.mark.parametrize("recipe", BAD, ids=lambda p: p.stem)
def test_bad_compare_recipe_fails_before_any_work(recipe, reg, monkeypatch, capsys, tmp_path):
    monkeypatch.chdir(ROOT)  # messages name the recipe as given, relative to the repository root
    monkeypatch.setattr("tokembed.registry.build_registry", lambda **kw: reg)

    def no_work(self, corpus):
        raise AssertionError("a tokenizer was trained although the recipe is invalid")

    monkeypatch.setattr(CharTokenizer, "fit", no_work)
    rel = recipe.relative_to(ROOT).as_posix()
    out = tmp_path / "out"
    assert main(["compare", rel, "--out", str(out)]) == 2
    expected = recipe.with_suffix(".expected").read_text(encoding="utf-8").splitlines()
    captured = capsys.readouterr()
    assert captured.err == "tokembed: error:\n" + "\n".join(expected) + "\n"
    assert captured.out == ""
    assert all(line.startswith(rel + ":") for line in expected)
    assert not out.exists()  # not even recipe.resolved.yaml


def test_unknown_tokenizer_and_missing_corpus_name_their_lines(reg, monkeypatch):
    monkeypatch.chdir(ROOT)
    with pytest.raises(RecipeError) as info:
        load_recipe("tests/recipes/bad/compare_unknown_tokenizer.yaml", registry=reg)
    assert ("tests/recipes/bad/compare_unknown_tokenizer.yaml:5:19: compare.tokenizers.bpe8k.type: unknown tokenizer "
            "'bep'. Available: char, typed, word") in [str(p) for p in info.value.problems]
    with pytest.raises(RecipeError) as info:
        load_recipe("tests/recipes/bad/compare_missing_corpus.yaml", registry=reg)
    where = [line.split(": ")[:2] for line in [str(p) for p in info.value.problems]]
    assert where == [
        ["tests/recipes/bad/compare_missing_corpus.yaml:1:16", "corpus.path"],
        ["tests/recipes/bad/compare_missing_corpus.yaml:5:18", "compare.tokenizers.gpt2.load"],
        ["tests/recipes/bad/compare_missing_corpus.yaml:7:19", "compare.corpora.prose.path"],
        ["tests/recipes/bad/compare_missing_corpus.yaml:8:21", "compare.corpora.moby.builtin"],
        ["tests/recipes/bad/compare_missing_corpus.yaml:9:20", "compare.parallel.path"],
    ]


# -- loading ---------------------------------------------------------------------------------------------------------
def test_compare_recipe_loads_to_specs(project, reg):
    r = load_recipe(project, registry=reg)
    base = project.parent
    assert r.tokenizers == () and r.embedders == () and r.vectorizers is None
    assert (r.corpus.source, r.corpus.paths, r.corpus.max_lines, r.corpus.sample_lines) == (
        "path", (base / "data" / "train.txt",), 2, None)
    spec = r.compare
    assert isinstance(spec, CompareSpec)
    char, words, saved = spec.tokenizers
    assert char == ComponentSpec("char", "tokenizer", "char", {})
    assert words == ComponentSpec("words", "tokenizer", "word", {"min_frequency": 1})
    assert saved == LoadSpec("saved", "path", "models/xyz.tokembed.json", base / "models" / "xyz.tokembed.json",
                             "tokembed", "char", "load", {})
    assert saved.cls is CharTokenizer and saved.location == f"{project}:6:12"
    assert spec.trained == (char, words) and spec.loaded == (saved,)
    assert list(spec.corpora) == ["eval"] and spec.corpora["eval"].paths == (base / "data" / "eval.txt",)
    p = spec.parallel
    assert (p.root, p.reference, p.languages, p.chapters, p.name) == (
        base / "data" / "parallel", "en", ("en", "de"), ("1.txt", "2.txt"), "parallel")  # the reference first
    assert spec.metrics == ("vocab_size", "tokens", "unk_rate", "fertility", "premium_median", "premium_mean")
    assert spec.samples == 2
    assert r.describe() == ("corpus path:data/train.txt (1 file, first 2 lines); compare 3 tokenizers (2 trained, "
                            "1 loaded) on 1 corpus and 2 languages (parallel parallel)")


def test_resolved_compare_recipe_reloads_to_the_same_specs(project, reg, tmp_path):
    r = load_recipe(project, registry=reg, overrides=["compare.tokenizers.char.vocab_size=50"])
    res = r.resolved()
    assert list(res) == ["corpus", "compare", "output"]
    assert res["compare"]["tokenizers"] == {
        "char": {"type": "char", "vocab_size": 50},
        "words": {"type": "word", "min_frequency": 1},
        "saved": {"load": str(project.parent / "models" / "xyz.tokembed.json")},
    }
    assert res["corpus"]["max_lines"] == 2
    assert res["compare"]["parallel"] == {"path": str(project.parent / "data" / "parallel"), "reference": "en",
                                          "languages": ["en", "de"], "errors": "strict"}
    elsewhere = write(tmp_path / "elsewhere" / "recipe.resolved.yaml", r.resolved_yaml())
    again = load_recipe(elsewhere, registry=reg)
    assert again.resolved() == res  # paths were made absolute, so the file works from anywhere
    assert again.corpus.paths == r.corpus.paths and again.compare.trained == r.compare.trained
    assert again.compare.loaded[0].path == r.compare.loaded[0].path
    assert again.compare.parallel.chapters == r.compare.parallel.chapters


def test_compare_needs_tokenizers_and_corpora(reg, tmp_path):
    assert problems_of("compare: {}\n", reg, tmp_path) == [
        "r.yaml:1:10: compare.tokenizers: missing: the tokenizers to compare, label -> {type: ...}, {preset: ...} "
        "(trained on the recipe's corpus) or {load: FILE}",
        "r.yaml:1:10: compare.corpora: missing: the corpora to compare on ({name: {path: ...}}), a parallel: set, "
        "a grid:, or several",
    ]
    assert problems_of("compare: [char]\n", reg, tmp_path) == [
        "r.yaml:1:10: compare: expected a mapping {tokenizers: {...}, corpora: {...}, parallel: {...}, metrics: "
        "[...], samples: N}, got a list"]


def test_a_recipe_of_loaded_tokenizers_needs_no_training_corpus(project, reg):
    text = ("compare:\n  tokenizers: {saved: {load: models/xyz.tokembed.json}}\n"
            "  corpora: {eval: {path: data/eval.txt}}\n")
    r = load_recipe_string(text, base_dir=project.parent, registry=reg)
    assert r.corpus is None and r.compare.loaded[0].label == "saved"
    assert r.describe() == "no training corpus; compare 1 tokenizer (0 trained, 1 loaded) on 1 corpus"
    assert list(r.resolved()) == ["compare"]


def test_corpus_limits_belong_to_compare_recipes(reg, tmp_path):
    text = "corpus: {builtin: moby-dick, max_lines: 10}\ntokenizers: {c: {type: char}}\n"
    assert problems_of(text, reg, tmp_path) == [
        "r.yaml:1:30: corpus.max_lines: only the corpora of a compare recipe take it: tokembed run reads the whole "
        "corpus (cut the file instead)"]
    text = ("corpus: {builtin: moby-dick, max_lines: 0}\ncompare:\n  tokenizers: {c: {type: char}}\n"
            "  corpora: {m: {builtin: moby-dick, max_lines: 5, sample_lines: 5}, n: {builtin: moby-dick, "
            "sample_line: 3}}\n")
    assert problems_of(text, reg, tmp_path) == [
        "r.yaml:1:41: corpus.max_lines: expected int >= 1, got 0",
        "r.yaml:4:65: compare.corpora.m.sample_lines: give one of max_lines, sample_lines, not both",
        "r.yaml:4:93: compare.corpora.n.sample_line: unknown corpus key. Did you mean 'sample_lines'? Allowed: "
        "path, builtin, dataset, format, field, errors, unit, max_lines, sample_lines",
    ]


def test_metrics_are_checked_against_the_registry(reg, tmp_path):
    head = ("corpus: {builtin: moby-dick}\ncompare:\n  tokenizers: {c: {type: char}}\n"
            "  corpora: {m: {builtin: moby-dick}}\n")
    available = ", ".join(reg.metrics)
    assert problems_of(head + "  metrics: [fertility, fertilty, fertility]\n", reg, tmp_path) == [
        "r.yaml:5:24: compare.metrics.1: unknown metric 'fertilty'. Did you mean 'fertility'? Available: "
        + available,
        "r.yaml:5:34: compare.metrics.2: 'fertility' is listed twice",
    ]
    assert problems_of(head + "  metrics: []\n", reg, tmp_path) == [
        "r.yaml:5:12: compare.metrics: expected at least one metric (leave metrics: out to compute all)"]
    assert load_recipe_string(head, registry=reg).compare.metrics is None  # default: every registered metric


def test_metric_arguments_and_columns_are_checked_before_any_work(reg, tmp_path, monkeypatch):
    # a missing or malformed gold file was found after every tokenizer was trained and measured, "strr" with
    # "strr:FILE" (one column) at run time with no line, and premium_gini without a parallel set gave no column
    monkeypatch.chdir(tmp_path)  # a metric's file is relative to the working directory
    (tmp_path / "gold.tsv").write_text("unhappiness\tun hap ness\n", encoding="utf-8")
    (tmp_path / "words.txt").write_text("whale\n", encoding="utf-8")
    head = ("corpus: {builtin: moby-dick}\ncompare:\n  tokenizers: {c: {type: char}}\n"
            "  corpora: {m: {builtin: moby-dick}}\n")
    assert problems_of(head + "  metrics: [strr, premium_gini, boundary_f1:gold.tsv, boundary_recall:nope.tsv, "
                       "strr:words.txt, boundary_precision, fertility:x]\n", reg, tmp_path) == [
        "r.yaml:5:19: compare.metrics.1: 'premium_gini' is measured across the languages of a parallel: set, and "
        "this comparison has none, so it would have no value",
        "r.yaml:5:33: compare.metrics.2: gold segmentation 'gold.tsv', line 1: the morphs 'un hap ness' do not "
        "spell the word 'unhappiness'",
        "r.yaml:5:55: compare.metrics.3: gold segmentation 'nope.tsv' is not a file",
        "r.yaml:5:81: compare.metrics.4: 'strr' is listed too, and both are the column 'strr': keep one",
        "r.yaml:5:97: compare.metrics.5: metric 'boundary_precision' needs a gold segmentation file (word<TAB>morph "
        "morph ... per line): name it as boundary_precision:VALUE",
        "r.yaml:5:117: compare.metrics.6: metric 'fertility' takes no argument (got fertility:x)",
    ]
    (tmp_path / "gold.tsv").write_text("unhappiness\tun happi ness\n", encoding="utf-8")
    spec = load_recipe_string(head + "  metrics: [strr:words.txt, boundary_f1:gold.tsv]\n", registry=reg).compare
    assert spec.metrics == ("strr:words.txt", "boundary_f1:gold.tsv")


def test_corpus_names_must_not_clash_with_languages(project, reg):
    text = RECIPE.replace("eval: {path: data/eval.txt}", "de: {path: data/eval.txt}")
    assert problems_of(text, reg, project.parent) == [
        "r.yaml:8:5: compare.corpora.de: 'de' is also a language of the parallel set: rename the corpus"]


def test_set_overrides_reach_the_compare_section(project, reg):
    r = load_recipe(project, registry=reg, overrides=["compare.tokenizers.words.min_frequency=2",
                                                      "compare.samples=0", "compare.metrics=[tokens]"])
    assert r.compare.tokenizers[1].params == {"min_frequency": 2}
    assert (r.compare.samples, r.compare.metrics) == (0, ("tokens",))
    with pytest.raises(RecipeError) as info:
        load_recipe(project, registry=reg, overrides=["compare.tokenizers.char.vocab_size=lots"])
    assert [str(p) for p in info.value.problems] == ["--set compare.tokenizers.char.vocab_size=lots: compare.tokenizers.char.vocab_size: "
                                   "expected int >= 1 or null, got 'lots'"]


# -- the parallel set ------------------------------------------------------------------------------------------------
def test_parallel_set_checks(project, reg):
    base = project.parent
    head = ("compare:\n  tokenizers: {saved: {load: models/xyz.tokembed.json}}\n  parallel: ")

    def check(value: str) -> list[str]:
        return problems_of(head + value + "\n", reg, base)

    assert check("{path: data/parallel, reference: fr}") == [
        "r.yaml:3:46: compare.parallel.reference: 'fr' is not one of the languages of the set. Languages: de, en"]
    assert check("{path: data/parallel, reference: en, languages: [en, en, dee]}") == [
        "r.yaml:3:66: compare.parallel.languages.1: 'en' is listed twice",
        "r.yaml:3:70: compare.parallel.languages.2: no language folder 'dee'. Did you mean 'de'? Available: de, en"]
    assert check("{path: data/parallel, languages: [de]}") == [
        "r.yaml:3:13: compare.parallel.reference: missing: the language the premium divides by"]
    assert check("{path: data/nowhere, reference: en}") == [
        "r.yaml:3:20: compare.parallel.path: data/nowhere: no such folder; paths are relative to the recipe file"]
    write(base / "data" / "parallel" / "de" / "3.txt", "drei")
    (base / "data" / "parallel" / "de" / "1.txt").unlink()
    assert check("{path: data/parallel, reference: en, sample_chapters: 0}") == [
        "r.yaml:3:20: compare.parallel.path: chapters are aligned by file name, but de lacks 1 of en's (1.txt) and "
        "has 1 that en lacks (3.txt)",
        "r.yaml:3:67: compare.parallel.sample_chapters: expected int >= 1, got 0",
    ]
    # a language list that leaves the misaligned language out is fine
    r = load_recipe_string(head + "{path: data/parallel, reference: en, languages: [en]}\n", base_dir=base,
                           registry=reg)
    assert r.compare.parallel.languages == ("en",) and r.compare.parallel.chapters == ("1.txt", "2.txt")


def test_parallel_dataset_and_chapter_sample(reg, tmp_path, monkeypatch):
    import tokembed.datasets as ds

    root = tmp_path / "multilingual"
    for lang in ("zh-CN", "en-US", "de-DE"):
        for i in range(10):
            write(root / lang / f"c{i}.txt", f"{lang} {i}")
    monkeypatch.setattr(ds, "dataset_path", lambda name: root)
    head = "corpus: {builtin: moby-dick}\ncompare:\n  tokenizers: {c: {type: char}}\n  parallel: "
    r = load_recipe_string(head + "{dataset: multilingual, reference: en-US, sample_chapters: 3}\n", registry=reg)
    p = r.compare.parallel
    # spread(10, 3) = [0, 10 // 3, 20 // 3] = [0, 3, 6]
    assert (p.name, p.languages, p.chapters) == (
        "multilingual", ("en-US", "de-DE", "zh-CN"), ("c0.txt", "c3.txt", "c6.txt"))
    pset = open_parallel(p)
    assert pset.reference == "en-US" and pset.texts["zh-CN"] == ["zh-CN 0", "zh-CN 3", "zh-CN 6"]
    assert problems_of(head + "{dataset: prose_mix, reference: en-US}\n", reg, tmp_path) == [
        "r.yaml:4:23: compare.parallel.dataset: dataset 'prose_mix' is a text corpus, not a folder of texts. "
        "Datasets of that kind: multilingual"]


# -- corpus limits ---------------------------------------------------------------------------------------------------
def test_spread_is_even_and_exact():
    assert spread(10, 3) == [0, 3, 6]  # i * 10 // 3 for i = 0, 1, 2
    assert spread(7, 7) == list(range(7)) and spread(3, 5) == [0, 1, 2]
    assert spread(165_631, 40_000)[:4] == [0, 4, 8, 12] and len(set(spread(165_631, 40_000))) == 40_000


def test_max_lines_and_sample_lines_select_documents(reg, tmp_path):
    write(tmp_path / "ten.txt", "".join(f"line {i}\n\n" for i in range(10)))  # empty lines are not documents
    head = "compare:\n  tokenizers: {c: {type: char}}\n  corpora: {x: {builtin: moby-dick}}\ncorpus: {path: ten.txt"
    r = load_recipe_string(head + ", max_lines: 3}\n", base_dir=tmp_path, registry=reg)
    assert open_corpus(r.corpus) == ["line 0", "line 1", "line 2"]
    r = load_recipe_string(head + ", sample_lines: 3}\n", base_dir=tmp_path, registry=reg)
    assert open_corpus(r.corpus) == ["line 0", "line 3", "line 6"]
    r = load_recipe_string(head + ", sample_lines: 30}\n", base_dir=tmp_path, registry=reg)
    assert open_corpus(r.corpus) == [f"line {i}" for i in range(10)]
    r = load_recipe_string(head + "}\n", base_dir=tmp_path, registry=reg)
    assert list(open_corpus(r.corpus)) == [f"line {i}" for i in range(10)]  # streamed, unlimited


# -- {load: FILE} ----------------------------------------------------------------------------------------------------
@pytest.fixture
def files(tmp_path):
    write(tmp_path / "ranks.tiktoken", "abc")
    write(tmp_path / "bpe.json", json.dumps({"model": {"type": "BPE", "vocab": {}}}))
    write(tmp_path / "wp.json", json.dumps({"model": {"type": "WordPiece"}}))
    write(tmp_path / "uni.json", json.dumps({"model": {"type": "Unigram"}}))
    write(tmp_path / "vocab.txt", "[UNK]\nhello\n##s\n")
    CharTokenizer().fit(["ab"]).save(tmp_path / "ab.tokembed.json")
    return tmp_path


def test_load_dispatches_on_the_file(files, fake_reg):
    text = """\
compare:
  tokenizers:
    ranks: {load: ranks.tiktoken, pattern: mine, vocab_size: 50}
    hf: {load: {path: bpe.json}, dropout: 0.25}
    vocab: {load: vocab.txt, lowercase: no}
    saved: {load: ab.tokembed.json}
  corpora: {x: {builtin: moby-dick}}
"""
    r = load_recipe_string(text, base_dir=files, registry=fake_reg)
    ranks, hf, vocab, saved = r.compare.tokenizers
    assert (ranks.format, ranks.type, ranks.loader, dict(ranks.params), ranks.cls) == (
        "tiktoken", "bpe", "from_tiktoken", {"pattern": "mine", "vocab_size": 50}, FakeBPE)
    assert (hf.format, hf.type, hf.loader, dict(hf.params)) == ("hf_json", "bpe", "from_hf_json", {"dropout": 0.25})
    assert (vocab.format, vocab.type, vocab.loader, dict(vocab.params), vocab.cls) == (
        "vocab_txt", "wordpiece", "from_vocab_file", {"lowercase": False}, FakeWordPiece)
    assert (saved.format, saved.type, saved.loader, saved.cls) == ("tokembed", "char", "load", CharTokenizer)
    assert r.compare.trained == ()
    # the recipe check read every file once, and load_tokenizer hands those tokenizers over without reading again
    calls = ([("from_tiktoken", str(files / "ranks.tiktoken"), "mine", {"vocab_size": 50}),
              ("from_hf_json", str(files / "bpe.json"), 0.25)],
             [("from_vocab_file", str(files / "vocab.txt"), False)])
    assert (FakeBPE.calls, FakeWordPiece.calls) == calls
    built = [load_tokenizer(s, r.kept)[0] for s in r.compare.tokenizers]
    assert (FakeBPE.calls, FakeWordPiece.calls) == calls
    assert built[0].vocab_size == 50 and set(built[0].get_vocab()) >= {"a", "b", "c"}
    assert set(built[2].get_vocab()) >= set("[UNK]hello##s")  # the fake fits a char tokenizer on the file
    assert built[3].get_vocab() == CharTokenizer().fit(["ab"]).get_vocab()
    assert r.resolved()["compare"]["tokenizers"] == {
        "ranks": {"load": str(files / "ranks.tiktoken"), "type": "bpe", "pattern": "mine", "vocab_size": 50},
        "hf": {"load": str(files / "bpe.json"), "type": "bpe", "dropout": 0.25},
        "vocab": {"load": str(files / "vocab.txt"), "type": "wordpiece", "lowercase": False},
        "saved": {"load": str(files / "ab.tokembed.json")},
    }


def test_load_problems(files, fake_reg):
    head = "compare:\n  corpora: {x: {builtin: moby-dick}}\n  tokenizers:\n"

    def check(*stages: str) -> list[str]:
        return problems_of(head + "".join(f"    {s}\n" for s in stages), fake_reg, files)

    assert check("a: {load: wp.json}") == [
        "r.yaml:4:15: compare.tokenizers.a.load: no installed tokenizer reads a Hugging Face tokenizer.json with a "
        "WordPiece model: none lists 'hf_json:WordPiece' in its load_formats (installed: bpe, char, typed, word, "
        "wordpiece); install a plugin that does, or give type: to name a tokenizer whose class has from_hf_json()"]
    assert check("a: {load: wp.json, type: wordpiece}") == [
        f"r.yaml:4:30: compare.tokenizers.a.type: tokenizer 'wordpiece' ({__name__}.FakeWordPiece) has no "
        "classmethod from_hf_json(path, ...), so it cannot read a Hugging Face tokenizer.json with a WordPiece model"]
    assert check("a: {load: uni.json}")[0].startswith(
        "r.yaml:4:15: compare.tokenizers.a.load: no installed tokenizer reads a Hugging Face tokenizer.json with a "
        "Unigram model: none lists 'hf_json:Unigram'")
    # GPT-2's pair is no longer bpe's by default: FakeBPE does not list vocab_merges
    write(files / "vocab.json", "{}")
    write(files / "merges.txt", "")
    assert check("a: {load: {vocab: vocab.json, merges: merges.txt}}")[0].startswith(
        "r.yaml:4:15: compare.tokenizers.a.load: no installed tokenizer reads a vocab.json and merges.txt pair: none "
        "lists 'vocab_merges' in its load_formats")
    # a file whose name says nothing is recognised by its content, or the message says what was not recognised
    write(files / "model.bin", json.dumps({"model": {"type": "BPE"}}))
    r = load_recipe_string(head + "    a: {load: model.bin}\n", base_dir=files, registry=fake_reg)
    assert (r.compare.tokenizers[0].format, r.compare.tokenizers[0].type) == ("hf_json", "bpe")
    write(files / "weights.bin", "\x00\x01binary")
    assert check("a: {load: weights.bin}") == [
        "r.yaml:4:15: compare.tokenizers.a.load: weights.bin: cannot tell how to read this file: its name ends in "
        "none of .json, .tiktoken, .model, .txt, and it is not a JSON object; load: reads a saved tokenizer "
        "(*.tokembed.json), a Hugging Face tokenizer.json, tiktoken BPE ranks (.tiktoken), a SentencePiece model "
        "(.model), a WordPiece vocab.txt, or {vocab: vocab.json, merges: merges.txt}"]
    assert check("a: {load: bpe.json, colour: red}") == [
        "r.yaml:4:25: compare.tokenizers.a.colour: unknown parameter of bpe.from_hf_json(). Parameters: dropout"]
    assert check("a: {load: vocab.txt, type: word}") == [
        "r.yaml:4:32: compare.tokenizers.a.type: tokenizer 'word' (tokembed.plugins.word.tokenizer.WordTokenizer) has "
        "no classmethod from_vocab_file(path, ...), so it cannot read a WordPiece vocab.txt"]
    assert check("a: {load: ab.tokembed.json, vocab_size: 3, type: word}") == [
        "r.yaml:4:54: compare.tokenizers.a.type: 'word' disagrees with the file, which holds a 'char' tokenizer "
        "(drop type:)"]
    assert check("a: {load: ab.tokembed.json, vocab_size: 3}") == [
        "r.yaml:4:33: compare.tokenizers.a.vocab_size: not used: a saved tokembed tokenizer is loaded with the "
        "parameters it was saved with"]
    assert check("a: {load: ranks.tiktoken, preset: gpt2-bpe}") == [
        "r.yaml:4:31: compare.tokenizers.a.preset: not used with load: (the file holds the model); give type: to "
        "choose the plugin that reads it, and the reader's parameters"]
    assert check("a: {load: ranks.tiktoken, vocab_size: big}") == [
        # via **params: __init__'s
        "r.yaml:4:43: compare.tokenizers.a.vocab_size: expected int >= 1 or null, got 'big'"]
    assert check("a: {load: .}") == [
        "r.yaml:4:15: compare.tokenizers.a.load: .: is a folder; load: names one tokenizer file (a saved tokenizer "
        "(*.tokembed.json), a Hugging Face tokenizer.json, tiktoken BPE ranks (.tiktoken), a SentencePiece model "
        "(.model), a WordPiece vocab.txt, or {vocab: vocab.json, merges: merges.txt})"]
    assert check("a: {load: {dataset: gpt2_ranks, path: x}}") == [
        "r.yaml:4:15: compare.tokenizers.a.load: expected a file path, {path: FILE} or {dataset: NAME} (a fetched "
        "tokenizer file), got a mapping with dataset, path"]


def test_load_needs_the_plugin_that_reads_the_format(files, reg):
    text = "compare:\n  corpora: {x: {builtin: moby-dick}}\n  tokenizers:\n    a: {load: ranks.tiktoken}\n"
    assert problems_of(text, reg, files) == [
        "r.yaml:4:15: compare.tokenizers.a.load: no installed tokenizer reads tiktoken BPE ranks (.tiktoken): none "
        "lists 'tiktoken' in its load_formats (installed: char, typed, word); install a plugin that does, or give "
        "type: to name a tokenizer whose class has from_tiktoken()"]


class PairReader(CharTokenizer):
    """A third party's tokenizer that reads GPT-2's pair and tiktoken ranks: a loader found from its load_formats."""

    name: ClassVar[str] = "pairs"
    load_formats: ClassVar[tuple[str, ...]] = ("vocab_merges", "tiktoken")

    @classmethod
    def from_vocab_merges(cls, vocab_json: str, merges_txt: str, **params: Any) -> "PairReader":
        return cls(**params).fit([Path(vocab_json).read_text(encoding="utf-8")])

    @classmethod
    def from_tiktoken(cls, path: str) -> "PairReader":
        return cls().fit(["t"])


class Undeclared(CharTokenizer):
    """Lists a format without its classmethod: a plugin bug, said as such."""

    name: ClassVar[str] = "undeclared"
    load_formats: ClassVar[tuple[str, ...]] = ("vocab_txt",)


def test_a_third_party_tokenizer_is_a_loader_through_its_load_formats(files, monkeypatch):
    monkeypatch.delenv("TOKEMBED_PLUGINS", raising=False)
    write(files / "v.json", '{"xy": 0}')
    write(files / "m.txt", "x y\n")
    text = "compare:\n  corpora: {x: {builtin: moby-dick}}\n  tokenizers:\n    a: {load: %s}\n"
    pair = "{vocab: v.json, merges: m.txt}"
    r = load_recipe_string(text % pair, base_dir=files, registry=make_registry(PairReader))
    a = r.compare.tokenizers[0]
    assert (a.format, a.type, a.loader, a.cls, a.merges) == (
        "vocab_merges", "pairs", "from_vocab_merges", PairReader, files / "m.txt")
    assert set(r.kept["a"][0].get_vocab()) >= set('{"xy: 0}')  # the char tokenizer fitted on vocab.json's text
    # two readers of one format: the recipe must choose, and type: does
    two = make_registry(PairReader, FakeBPE)
    assert problems_of(text % "ranks.tiktoken", two, files) == [
        "r.yaml:4:15: compare.tokenizers.a.load: several installed tokenizers read tiktoken BPE ranks (.tiktoken) "
        "(bpe, pairs): give type: to choose one"]
    r = load_recipe_string(text % "ranks.tiktoken, type: pairs", base_dir=files, registry=two)
    assert r.compare.tokenizers[0].cls is PairReader
    assert problems_of(text % "vocab.txt", make_registry(Undeclared), files) == [
        f"r.yaml:4:15: compare.tokenizers.a.load: tokenizer 'undeclared' ({__name__}.Undeclared) has no classmethod "
        "from_vocab_file(path, ...), so it cannot read a WordPiece vocab.txt (its load_formats lists it: a plugin bug)"]


def test_the_built_in_readers_are_found_from_their_load_formats():
    from tokembed.export import LOAD_FORMATS, readers_of

    classes = {n: tokembed.build_registry().get("tokenizer", n) for n in ("bpe", "wordpiece", "unigram", "word")}
    found = {key: readers_of(classes, key) for key in [*LOAD_FORMATS, "hf_json:BPE", "hf_json:WordPiece",
                                                        "hf_json:Unigram"] if key != "hf_json"}
    assert found == {"tiktoken": ["bpe"], "sentencepiece": ["unigram"], "vocab_txt": ["wordpiece"],
                     "vocab_merges": ["bpe"], "hf_json:BPE": ["bpe"], "hf_json:WordPiece": ["wordpiece"],
                     "hf_json:Unigram": ["unigram"]}
    for name, cls in classes.items():  # every format a class lists has its classmethod
        assert all(callable(getattr(cls, LOAD_FORMATS[k.partition(":")[0]].method, None)) for k in cls.load_formats)


def test_load_dataset_is_a_tokenizer_file(files, fake_reg, monkeypatch):
    import tokembed.datasets as ds

    monkeypatch.setattr(ds, "dataset_path", lambda name: files / "ranks.tiktoken")
    text = "compare:\n  corpora: {x: {builtin: moby-dick}}\n  tokenizers:\n    a: {load: {dataset: %s}}\n"
    r = load_recipe_string(text % "gpt2_ranks", base_dir=files, registry=fake_reg)
    a = r.compare.tokenizers[0]
    assert (a.source, a.value, a.path, a.format) == ("dataset", "gpt2_ranks", files / "ranks.tiktoken", "tiktoken")
    assert r.resolved()["compare"]["tokenizers"]["a"] == {"load": {"dataset": "gpt2_ranks"}, "type": "bpe"}
    assert problems_of(text % "prose_mix", fake_reg, files) == [
        "r.yaml:4:25: compare.tokenizers.a.load.dataset: dataset 'prose_mix' is a text corpus, not a tokenizer "
        "file. Datasets of that kind: bert_uncased_vocab, gpt2_ranks, mistral_v1_model"]


def test_a_reader_that_fails_is_a_problem_of_the_stage(files, fake_reg):
    text = "compare:\n  corpora: {x: {builtin: moby-dick}}\n  tokenizers:\n    hf: {load: bpe.json, dropout: 1.5}\n"
    assert problems_of(text, fake_reg, files) == [
        f"r.yaml:4:9: compare.tokenizers.hf: FakeBPE.from_hf_json({str(files / 'bpe.json')!r}) failed: ValueError: "
        "dropout must be below 1"]


def test_build_reads_again_once_handed_over_and_names_the_stage_when_it_fails(files, fake_reg):
    text = "compare:\n  corpora: {x: {builtin: moby-dick}}\n  tokenizers:\n    hf: {load: bpe.json}\n"
    recipe = load_recipe_string(text, source="r.yaml", base_dir=files, registry=fake_reg)
    spec = recipe.compare.tokenizers[0]
    assert len(FakeBPE.calls) == 1 and recipe.kept["hf"][1] >= 0  # read once by the check, with its time
    (first, _), (second, seconds) = load_tokenizer(spec, recipe.kept), load_tokenizer(spec, recipe.kept)
    assert first is not second and len(FakeBPE.calls) == 2 and seconds >= 0  # the kept one once, then a new reading
    # the file changes after the check: load_tokenizer reads it again and its error names the recipe's stage
    object.__setattr__(spec, "params", {"dropout": 1.5})
    with pytest.raises(ArtifactError) as info:
        load_tokenizer(spec, recipe.kept)
    assert str(info.value) == (f"r.yaml:4:9: compare.tokenizers.hf: FakeBPE.from_hf_json({str(files / 'bpe.json')!r}) "
                               "failed: ValueError: dropout must be below 1")
    assert isinstance(info.value.__cause__, ArtifactError)
    assert isinstance(info.value.__cause__.__cause__, ValueError)
    # read_tokenizer raises the reader's message alone (what the recipe check locates itself)
    with pytest.raises(ArtifactError, match=r"^FakeBPE\.from_hf_json\(.*\) failed: ValueError: dropout must be "
                                            r"below 1$"):
        read_tokenizer(spec)


BAD_RANKS = "IQ== 0\nIg== 1\n!!!notb64 2\n"  # '!' and '"' as base64, then a line that is not base64


@pytest.fixture
def bpe_reg(monkeypatch):
    monkeypatch.delenv("TOKEMBED_PLUGINS", raising=False)
    reg = build_registry(autoload=False, blocked=["tokembed"],
                         plugins=["tokembed.plugins.char", "tokembed.plugins.word", "tokembed.plugins.bpe"])
    assert not reg.failures, reg.failures
    return reg


def test_a_malformed_tokenizer_file_fails_the_recipe_before_any_training(project, bpe_reg, monkeypatch, capsys):
    """The tester's case: a trained tokenizer listed before a {load:} file that the bpe plugin's reader rejects."""
    write(project.parent / "models" / "bad.tiktoken", BAD_RANKS)
    write(project, RECIPE.replace("saved: {load: models/xyz.tokembed.json}", "bad: {load: models/bad.tiktoken}"))
    fits: list[str] = []
    monkeypatch.setattr(CharTokenizer, "fit", lambda self, corpus: fits.append("char"))
    monkeypatch.chdir(project.parent)
    expected = (f"{project}:6:10: compare.tokenizers.bad: {project.parent / 'models' / 'bad.tiktoken'}:3: expected "
                "'<base64 token> <rank>', got '!!!notb64 2'")
    with pytest.raises(RecipeError) as info:
        run_comparison(project, registry=bpe_reg, quiet=True)
    assert [str(p) for p in info.value.problems] == [expected]
    assert fits == [] and sorted(p.name for p in project.parent.iterdir()) == ["compare.yaml", "data", "models"]
    monkeypatch.setattr("tokembed.registry.build_registry", lambda **kw: bpe_reg)
    for command in ("validate", "compare"):
        assert main([command, str(project)]) == 2
        assert capsys.readouterr().err == f"tokembed: error: {expected}\n"
    assert fits == [] and not (project.parent / "out").exists() and not (project.parent / "out.incomplete").exists()


def test_a_tokenizer_file_that_fails_at_run_time_fails_before_any_training(project, reg, monkeypatch):
    """A loaded Recipe whose kept tokenizer was handed over reads the file again: a file spoilt since the check
    fails before the corpus is read and before the run folder exists, its message naming the stage."""
    monkeypatch.chdir(project.parent)
    recipe = load_recipe(project, registry=reg)
    saved = next(s for s in recipe.compare.tokenizers if s.label == "saved")
    load_tokenizer(saved, recipe.kept)  # hands the kept tokenizer over
    (project.parent / "models" / "xyz.tokembed.json").write_text("{", encoding="utf-8")
    opened: list[str] = []
    monkeypatch.setattr("tokembed.compare.run.open_corpus", lambda spec: opened.append("corpus") or [])
    with pytest.raises(ArtifactError, match=rf"^{project}:6:12: compare\.tokenizers\.saved: .*xyz\.tokembed\.json"):
        run_comparison(recipe, registry=reg, quiet=True)
    assert opened == [] and not (project.parent / "out").exists() and not (project.parent / "out.incomplete").exists()


# -- a whole run -----------------------------------------------------------------------------------------------------
def test_run_trains_once_on_the_training_corpus_and_writes_everything(project, reg, monkeypatch):
    fits: list[tuple[str, list[str]]] = []
    for cls in (CharTokenizer, WordTokenizer):
        original = cls.fit

        def counting(self, corpus, _original=original, _name=cls.name):
            docs = list(corpus)
            fits.append((_name, docs))
            return _original(self, docs)

        monkeypatch.setattr(cls, "fit", counting)
    monkeypatch.chdir(project.parent)
    run = run_comparison(project, registry=reg, quiet=True)

    # each trained tokenizer is fitted once, on the first 2 lines (max_lines), whatever the number of corpora
    assert fits == [("char", ["the cat sat", "the dog sat"]), ("word", ["the cat sat", "the dog sat"])]
    out = project.parent / "out"
    assert run.output == Path("out")
    assert sorted(p.name for p in out.iterdir()) == sorted([
        RUN_MARKER, "char.tokembed.json", "comparison.csv", "comparison.json", "comparison.md", "comparison.txt",
        "recipe.resolved.yaml", "report.html", "timings.json", "words.tokembed.json"])
    assert set(run.files) == {"json", "csv", "md", "txt", "html"}
    assert tokembed.load(out / "char.tokembed.json").get_vocab() == run.tokenizers["char"].get_vocab()
    assert list(run.tokenizers) == ["char", "words", "saved"]
    timings = json.loads((out / "timings.json").read_text(encoding="utf-8"))
    # the loaded tokenizer first (before any training), with the time the recipe check took to read it
    assert list(timings) == ["load saved", "read training corpus", "fit char", "fit words", "read parallel set",
                             "compare", "write report.html", "total"]

    c = Comparison.from_dict(json.loads((out / "comparison.json").read_text(encoding="utf-8")))
    assert list(c.corpora) == ["eval", "en", "de"] and list(c.tokenizers) == ["char", "words", "saved"]
    # char: 10 characters seen in "the cat sat" / "the dog sat" ('!' of line 3 is not), plus <unk> and <pad>
    assert c.value("char", "eval", "vocab_size") == 12
    # eval: "the cat" (7 characters) + "the bird" (8) = 15 character tokens; 'b', 'i', 'r' were never seen
    assert c.value("char", "eval", "tokens") == 15 and c.value("char", "eval", "unk_rate") == pytest.approx(3 / 15)
    assert c.value("char", "eval", "fertility") == pytest.approx(15 / 4)  # 4 whitespace words
    # words: the, cat, sat, dog + <unk>, <pad>; "the cat the bird" is 4 tokens, "bird" unknown
    assert c.value("words", "eval", "vocab_size") == 6
    assert (c.value("words", "eval", "tokens"), c.value("words", "eval", "unk_rate")) == (4, 0.25)
    # saved: fitted on "xyz" elsewhere, so every character of the corpus is unknown to it
    assert (c.value("saved", "eval", "vocab_size"), c.value("saved", "eval", "unk_rate")) == (5, 1.0)
    # premium of de over en for the char tokenizer: chapters of 9 and 13 characters against 7 and 11
    assert c.value("char", "de", "premium_median") == pytest.approx((9 / 7 + 13 / 11) / 2, abs=1e-6)
    assert c.value("char", "de", "premium_mean") == pytest.approx((9 / 7 + 13 / 11) / 2, abs=1e-6)
    assert c.value("char", "en", "premium_median") == 1.0
    # the word tokenizer gives each chapter as many tokens in both languages (2 and 3 words)
    assert c.value("words", "de", "premium_median") == 1.0
    # same_as_reference: no chapter line is over 80 characters, so nothing to compare
    assert c.parallel == {"name": "parallel", "reference": "en", "languages": ["en", "de"], "chapters": 2,
                          "same_as_reference": {"de": None}}
    assert (out / "comparison.txt").read_text(encoding="utf-8") == c.to_table(color=False, width=10_000) + "\n"
    assert (out / "report.html").read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html>")
    assert load_recipe(out / "recipe.resolved.yaml", registry=reg).resolved() == run_recipe_resolved(project, reg)


def run_recipe_resolved(project: Path, reg) -> dict:
    return load_recipe(project, registry=reg).resolved()


def test_every_print_format_renders(project, reg, monkeypatch):
    monkeypatch.chdir(project.parent)
    comparison = run_comparison(project, registry=reg, quiet=True).comparison
    assert render(comparison, "table", color=False) == comparison.to_table(color=False)
    assert json.loads(render(comparison, "json"))["format"] == "tokembed-comparison"
    assert render(comparison, "csv").splitlines()[0] == ("tokenizer,type,corpus,vocab_size,tokens,unk_rate,"
                                                          "fertility,premium_median,premium_mean")
    assert render(comparison, "markdown").startswith("# Tokenizer comparison\n")
    assert "<html" in render(comparison, "html")
    assert PRINT_FORMATS == ("table", "json", "csv", "markdown", "html")


def test_cli_prints_the_chosen_format_and_writes_the_folder(project, reg, monkeypatch, capsys):
    monkeypatch.chdir(project.parent)
    monkeypatch.setattr("tokembed.registry.build_registry", lambda **kw: reg)
    assert main(["compare", str(project), "--format", "csv", "--out", "elsewhere", "--set", "compare.samples=0"]) == 0
    captured = capsys.readouterr()
    rows = captured.out.splitlines()
    assert rows[0].startswith("tokenizer,type,corpus,") and len(rows) == 1 + 3 * 3  # 3 tokenizers x 3 corpora
    assert (project.parent / "elsewhere" / "comparison.csv").read_text(encoding="utf-8") == captured.out
    assert not (project.parent / "out").exists()  # --out wins over output:
    assert "trained char (char): 12 entries" in captured.err and "wrote elsewhere" in captured.err
    assert main(["compare", str(project), "--quiet", "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and json.loads(captured.out)["samples"]["eval"]


def test_compare_refuses_a_recipe_without_a_compare_section(reg, tmp_path):
    recipe = write(tmp_path / "run.yaml", "corpus: {builtin: moby-dick}\ntokenizers: {c: {type: char}}\n")
    with pytest.raises(RecipeError, match=r"run.yaml: no compare: section; tokembed compare runs recipes with "
                                          r"compare: \(tokembed run runs the others\)"):
        run_comparison(recipe, registry=reg, out=tmp_path / "out")
    assert not (tmp_path / "out").exists()


# -- the example recipes ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["compare-english", "compare-languages"])
def test_example_recipes_load(name, monkeypatch):
    real = _real_registry_or_skip(monkeypatch)
    monkeypatch.chdir(ROOT)
    r = load_recipe(f"recipes/{name}.yaml", registry=real)
    labels = [s.label for s in r.compare.tokenizers]
    assert {"char", "words", "gpt2", "bert"} <= set(labels)
    # the languages comparison also reads Mistral's SentencePiece model (the Unigram issue's row)
    assert [s.label for s in r.compare.loaded] == ["gpt2", "bert"] + (["mistral"] if name == "compare-languages" else [])
    assert r.output == Path(f"runs/{name}")
    if name == "compare-english":
        assert labels == ["char", "words", "bpe8k", "bpe32k", "bytebpe8k", "bytebpe32k", "wordpiece30k", "gpt2",
                          "bert"]
        assert list(r.compare.corpora) == ["prose_mix"]
    else:
        assert r.compare.parallel.reference == "en-US" and "zh-CN" in r.compare.parallel.languages


# -- the documentation -----------------------------------------------------------------------------------------------
DOC = ROOT / "docs" / "recipes.md"


def _real_registry_or_skip(monkeypatch):
    from tokembed.datasets import dataset_path
    from tokembed.errors import DataError

    monkeypatch.delenv("TOKEMBED_PLUGINS", raising=False)
    real = build_registry()
    missing = [n for n in ("bpe", "wordpiece") if n not in real.names("tokenizer")]
    if missing:
        pytest.skip(f"plugins not installed: {missing}")
    for dataset in ("prose_mix", "multilingual", "gpt2_ranks", "bert_uncased_vocab"):
        try:
            dataset_path(dataset)
        except DataError:
            pytest.skip(f"dataset {dataset} not fetched")
    return real


def test_docs_compare_example_loads(monkeypatch):
    real = _real_registry_or_skip(monkeypatch)
    text = DOC.read_text(encoding="utf-8")
    blocks = [b.split("\n", 1)[1] for b in text.split("```")[1::2] if b.startswith("yaml\n# recipes/compare")]
    assert len(blocks) == 1
    r = load_recipe_string(blocks[0], source="docs/recipes.md", registry=real)
    assert [s.label for s in r.compare.tokenizers] == ["char", "bpe8k", "bytebpe32k", "gpt2", "bert"]
    assert r.compare.loaded[1].params == {"lowercase": True}
    assert (r.compare.corpora["prose_mix"].sample_lines, r.compare.corpora["moby"].max_lines) == (40000, 5000)
    assert r.compare.parallel.languages == ("en-US", "de-DE", "zh-CN")


def test_docs_name_every_compare_key():
    from tokembed.recipe import COMPARE_KEYS, CORPUS_LIMITS, LOAD_KEYS, PARALLEL_KEYS

    text = DOC.read_text(encoding="utf-8")
    keys = [*COMPARE_KEYS, *PARALLEL_KEYS, *LOAD_KEYS, *CORPUS_LIMITS, "compare"]
    assert [k for k in keys if f"`{k}`" not in text and f"`{k}:`" not in text] == []
    for method in ("from_tiktoken", "from_hf_json", "from_vocab_file"):
        assert f"`{method}(path, ...)`" in text


def test_set_can_add_a_tokenizer_or_corpus_to_compare(project, reg, monkeypatch):
    monkeypatch.chdir(project.parent)
    r = load_recipe(project, registry=reg, overrides=["compare.tokenizers.more={type: char, vocab_size: 4}",
                                                      "compare.corpora.train={path: data/train.txt, max_lines: 1}"])
    assert [s.label for s in r.compare.tokenizers] == ["char", "words", "saved", "more"]
    assert r.compare.corpora["train"].max_lines == 1
    with pytest.raises(RecipeError) as info:
        load_recipe(project, registry=reg, overrides=["compare.tokenizers.chr.vocab_size=4"])
    assert [str(p) for p in info.value.problems] == [
        "--set compare.tokenizers.chr.vocab_size=4: compare.tokenizers.chr: not in the recipe (compare.tokenizers "
        "has: char, words, saved). Did you mean 'char'? To add a stage, set it whole: "
        "--set 'compare.tokenizers.chr={type: ...}'"]
    with pytest.raises(RecipeError) as info:
        load_recipe(project, registry=reg, overrides=["compare.corpora.new.max_lines=4"])
    assert [str(p) for p in info.value.problems] == [
        "--set compare.corpora.new.max_lines=4: compare.corpora.new: not in the recipe (compare.corpora has: eval). "
        "To add a corpus, set it whole: --set 'compare.corpora.new={path: ...}'"]
