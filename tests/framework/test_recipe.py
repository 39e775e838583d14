"""Recipes: loading, YAML typing against parameter types, errors with their locations, overrides, specs.

Component types that may not exist yet (word, sinusoidal, glove, tfidf, svd) are small fake classes registered
through ``build_registry(plugins=[...])``; the real built-ins are blocked so the fakes never clash with them, and
only the real ``char`` plugin is added back. Bad recipes live in ``tests/recipes/bad/NAME.yaml`` with the exact
error lines in ``NAME.expected`` (paths relative to the repository root, where these tests run).
"""

from __future__ import annotations

import dataclasses
import math
import types
from pathlib import Path
from typing import Any, ClassVar, Literal, Sequence

import pytest

import tokembed
from tokembed import Embedder, Tokenizer, Vectorizer, hookimpl
from tokembed.corpus import Corpus
from tokembed.errors import CorpusError, DataError, RecipeError
from tokembed.plugins.char.tokenizer import CharTokenizer
from tokembed.plugins.sinusoidal.embedder import SinusoidalEmbedder
from tokembed.recipe import (
    BatchSpec,
    ComponentSpec,
    CorpusSpec,
    PipelineSpec,
    Recipe,
    load_recipe,
    load_recipe_string,
)
from tokembed.params import Interval
from tokembed.recipe.params import class_params
from tokembed.registry import build_registry

ROOT = Path(__file__).resolve().parents[2]
RECIPES = ROOT / "tests" / "recipes"
BAD = sorted((RECIPES / "bad").glob("*.yaml"))
GOOD = sorted((RECIPES / "good").glob("*.yaml"))


# -- fake components ----------------------------------------------------------------------------------------------
class FakeWord(CharTokenizer):
    """Stands in for the word tokenizer: the char tokenizer's parameters and special-token plan, plus one more."""

    name: ClassVar[str] = "word"
    param_constraints: ClassVar[dict[str, Any]] = {"vocab_size": [Interval(int, 1, None), None],
                                                   "min_frequency": Interval(int, 1, None)}

    def __init__(self, vocab_size: int | None = None, min_frequency: int = 1, lowercase: bool = True,
                 unk_token: str | None = "<unk>", pad_token: str | None = "<pad>",
                 special_tokens: Sequence[str] = (), seed: int = 0):
        super().__init__(vocab_size, min_frequency, unk_token, pad_token, special_tokens, seed)
        self.lowercase = lowercase


class Typed(Tokenizer):
    """One parameter per annotation the schema understands."""

    name: ClassVar[str] = "typed"

    def __init__(self, lr: float = 0.1, scale: float = 1.0, lang: str = "en", window: str = "", lowercase: bool = False,
                 count: int | None = None, maybe: str | None = "x", names: list[str] = [],  # noqa: B006
                 pair: tuple[int, int] = (0, 0), mode: Literal["fast", "slow"] = "fast",
                 auto: bool | Literal["auto"] = False, weights: dict[str, float] | None = None, free=None,
                 inferred=3):
        self.lr, self.scale, self.lang, self.window, self.lowercase = lr, scale, lang, window, lowercase
        self.count, self.maybe, self.names, self.pair, self.mode = count, maybe, names, pair, mode
        self.auto, self.weights, self.free, self.inferred = auto, weights, free, inferred


class FakeSinusoidal(Embedder):
    name: ClassVar[str] = "sinusoidal"
    param_constraints: ClassVar[dict[str, Any]] = {"d_model": Interval(int, 1, None), "max_len": Interval(int, 1, None),
                                                   "dropout": Interval(float, 0, 1, closed="left")}

    def __init__(self, d_model: int, max_len: int = 512, dropout: float = 0.1, vocab_size: int | None = None,
                 padding_idx: int | None = None, seed: int = 0):
        self.d_model, self.max_len, self.dropout = d_model, max_len, dropout
        self.vocab_size, self.padding_idx, self.seed = vocab_size, padding_idx, seed

    # the real embedder's checks against its tokenizer (the recipe checker asks the class, naming no parameter)
    check_tokenizer_plan = classmethod(SinusoidalEmbedder.check_tokenizer_plan.__func__)
    planned_max_input_length = classmethod(SinusoidalEmbedder.planned_max_input_length.__func__)
    input_length_param = "max_len"


class FakeGlove(Embedder):
    name: ClassVar[str] = "glove"

    def __init__(self, vector_size: int = 100, x_max: float = 100.0, alpha: float = 0.75, epochs: int = 15,
                 seed: int = 0, workers: int = 1):
        self.vector_size, self.x_max, self.alpha, self.epochs, self.seed, self.workers = (
            vector_size, x_max, alpha, epochs, seed, workers)


class FakeTfidf(Vectorizer):
    name: ClassVar[str] = "tfidf"

    def __init__(self, sublinear_tf: bool = False, norm: Literal["l1", "l2"] | None = "l2"):
        self.sublinear_tf, self.norm = sublinear_tf, norm


class FakeSvd(Vectorizer):
    name: ClassVar[str] = "svd"
    input_kind: ClassVar[str] = "matrix"

    def __init__(self, n_components: int = 100, seed: int = 0):
        self.n_components, self.seed = n_components, seed


class FakePlugin:
    @hookimpl
    def tokembed_register_tokenizers(self):
        return [FakeWord, Typed]

    @hookimpl
    def tokembed_register_vectorizers(self):
        return [FakeTfidf, FakeSvd]

    @hookimpl
    def tokembed_register_embedders(self):
        return [FakeSinusoidal, FakeGlove]


PRESETS = {
    "small-words": {"kind": "tokenizer", "type": "word", "params": {"vocab_size": 4000, "min_frequency": 2}},
    "lsa-100": {"kind": "vectorizer", "type": "svd", "params": {"n_components": 100}},
    "broken-words": {"kind": "tokenizer", "type": "word", "params": {"vocab_size": "big", "min_frequncy": 2}},
}


def make_registry(*extra: Any):
    reg = build_registry(autoload=False, blocked=["tokembed"], plugins=["tokembed.plugins.char", FakePlugin(), *extra])
    assert not reg.failures, reg.failures
    reg._catalogue = {"presets": PRESETS}
    return reg


@pytest.fixture
def reg(monkeypatch):
    monkeypatch.delenv("TOKEMBED_PLUGINS", raising=False)
    return make_registry()


@pytest.fixture
def at_root(monkeypatch):
    """Run from the repository root, so recipe paths (and the messages naming them) are relative."""
    monkeypatch.chdir(ROOT)


def load(text: str, reg, **kw) -> Recipe:
    return load_recipe_string(text, source="r.yaml", registry=reg, **kw)


def problems(text: str, reg, **kw) -> list[str]:
    with pytest.raises(RecipeError) as info:
        load(text, reg, **kw)
    assert str(info.value) == "\n".join([str(p) for p in info.value.problems])
    return [str(p) for p in info.value.problems]


TYPED = "corpus: {builtin: moby-dick}\ntokenizers:\n  t:\n    type: typed\n"


def typed(reg, line: str, **kw) -> dict[str, Any]:
    """Params of a ``typed`` tokenizer whose stage adds ``line`` (``"lr: 1e-3"``)."""
    return dict(load(TYPED + "    " + line + "\n", reg, **kw).tokenizers[0].params)


# -- bad recipes: exact messages ----------------------------------------------------------------------------------
def test_bad_recipes_and_expected_files_pair_up():
    assert len(BAD) >= 15
    expected = sorted((RECIPES / "bad").glob("*.expected"))
    assert [p.stem for p in expected] == [p.stem for p in BAD]


@pytest.mark.parametrize("recipe", BAD, ids=lambda p: p.stem)
def test_bad_recipe_reports_exactly_the_expected_problems(recipe, reg, at_root):
    rel = recipe.relative_to(ROOT).as_posix()
    expected = recipe.with_suffix(".expected").read_text(encoding="utf-8").splitlines()
    with pytest.raises(RecipeError) as info:
        load_recipe(rel, registry=reg)
    assert [str(p) for p in info.value.problems] == expected
    assert all(line.startswith(rel + ":") for line in expected)  # FILE is the path as given


def test_several_problems_are_reported_together(reg, at_root):
    with pytest.raises(RecipeError) as info:
        load_recipe("tests/recipes/bad/several_problems.yaml", registry=reg)
    paths = [line.split(": ")[1] for line in [str(p) for p in info.value.problems]]
    # one problem in each part of the recipe, none hiding another
    assert paths == ["corpus.builtin", "tokenizers.char.type", "tokenizers.words.min_frequency", "vectorizers.input",
                     "vectorizers.steps.0.sublinear", "embedders.position.d_model", "outptu"]


@pytest.mark.parametrize("name", ["unknown_type", "several_problems"])
def test_bad_recipe_on_the_command_line(name, reg, at_root, monkeypatch, capsys):
    from tokembed import cli

    monkeypatch.setattr("tokembed.registry.build_registry", lambda **kw: reg)
    rel = f"tests/recipes/bad/{name}.yaml"
    assert cli.main(["validate", rel]) == 2
    lines = (RECIPES / "bad" / f"{name}.expected").read_text(encoding="utf-8").splitlines()
    err = capsys.readouterr().err
    if len(lines) == 1:
        assert err == f"tokembed: error: {lines[0]}\n"
    else:
        assert err == "tokembed: error:\n" + "\n".join(lines) + "\n"


def test_good_recipe_on_the_command_line(reg, at_root, monkeypatch, capsys):
    from tokembed import cli

    monkeypatch.setattr("tokembed.registry.build_registry", lambda **kw: reg)
    rel = "tests/recipes/good/quickstart.yaml"
    assert cli.main(["validate", rel, "--set", "tokenizers.char.vocab_size=100"]) == 0
    assert capsys.readouterr().out == f"{rel}: OK (corpus builtin:moby-dick; 3 tokenizers, 2 vectorizers, 1 embedder)\n"
    assert cli.main(["validate", rel, "--set", "tokenizers.char.vocab_size=lots"]) == 2
    assert capsys.readouterr().err == (
        "tokembed: error: --set tokenizers.char.vocab_size=lots: tokenizers.char.vocab_size: "
        "expected int >= 1 or null, got 'lots'\n")


def test_missing_unreadable_and_empty_files(reg, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(RecipeError) as info:
        load_recipe("nope/r.yaml", registry=reg)
    assert [str(p) for p in info.value.problems] == ["nope/r.yaml: no such recipe file"]
    (tmp_path / "d").mkdir()
    with pytest.raises(RecipeError, match=r"^d: is a folder, not a recipe file$"):
        load_recipe("d", registry=reg)
    (tmp_path / "latin1.yaml").write_bytes(b"corpus: {\xff}\n")
    with pytest.raises(RecipeError, match=r"^latin1.yaml: not UTF-8 text \(byte 0xff at offset 9\)$"):
        load_recipe(Path("latin1.yaml"), registry=reg)
    (tmp_path / "blank.yaml").write_text("\n\n", encoding="utf-8")
    with pytest.raises(RecipeError, match=r"^blank.yaml: the recipe is empty"):
        load_recipe("blank.yaml", registry=reg)


# -- good recipes -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("recipe", GOOD, ids=lambda p: p.stem)
def test_good_recipes_load(recipe, reg, at_root):
    r = load_recipe(recipe.relative_to(ROOT), registry=reg)
    assert r.corpus.source == "builtin"
    assert r.tokenizers


def test_quickstart_loads_to_the_expected_specs(reg, at_root):
    rel = "tests/recipes/good/quickstart.yaml"
    r = load_recipe(rel, registry=reg)
    assert r.path == Path(rel)
    assert r.corpus == CorpusSpec("builtin", "moby-dick", (), "text", None, "strict", "line")
    assert r.tokenizers == (
        ComponentSpec("char", "tokenizer", "char", {}),
        ComponentSpec("words", "tokenizer", "word", {"min_frequency": 2}),
        # the preset's vocab_size 4000 is overridden by the recipe's 8000; its min_frequency stays
        ComponentSpec("bpe8k", "tokenizer", "word", {"vocab_size": 8000, "min_frequency": 2, "seed": 0},
                      preset="small-words"),
    )
    assert r.vectorizers == PipelineSpec("words", (
        ComponentSpec("tfidf", "vectorizer", "tfidf", {"sublinear_tf": True}),
        ComponentSpec("svd", "vectorizer", "svd", {"n_components": 100, "seed": 0}),
    ))
    assert r.embedders == (
        ComponentSpec("position", "embedder", "sinusoidal", {"d_model": 64, "max_len": 512}, input="words",
                      batch=BatchSpec(lines=32, padding="longest", truncation=True, max_length=512)),
    )
    assert r.output == Path("runs/quickstart")
    assert r.overrides == ()
    assert [s.cls for s in r.components] == [CharTokenizer, FakeWord, FakeWord, FakeTfidf, FakeSvd, FakeSinusoidal]
    assert [s.location for s in r.tokenizers] == [f"{rel}:5:9", f"{rel}:6:10", f"{rel}:7:10"]
    assert r.embedders[0].location == f"{rel}:15:5"  # a block mapping starts at its first key
    assert r.embedders[0].batch.location == f"{rel}:19:12"
    assert r.describe() == "corpus builtin:moby-dick; 3 tokenizers, 2 vectorizers, 1 embedder"


def test_specs_are_frozen_and_params_read_only(reg, at_root):
    r = load_recipe("tests/recipes/good/quickstart.yaml", registry=reg)
    spec = r.tokenizers[1]
    with pytest.raises(TypeError):
        spec.params["min_frequency"] = 5  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.label = "other"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.output = None  # type: ignore[misc]
    assert isinstance(spec.params, types.MappingProxyType)


def test_resolved_is_plain_ordered_and_reloads_to_the_same_recipe(reg, at_root, tmp_path):
    r = load_recipe("tests/recipes/good/quickstart.yaml", registry=reg, overrides=["tokenizers.char.vocab_size=300"])
    res = r.resolved()
    assert res == {
        "corpus": {"builtin": "moby-dick", "format": "text", "unit": "line", "errors": "strict"},
        "tokenizers": {
            "char": {"type": "char", "vocab_size": 300},
            "words": {"type": "word", "min_frequency": 2},
            "bpe8k": {"type": "word", "min_frequency": 2, "seed": 0, "vocab_size": 8000},
        },
        "vectorizers": {"input": "words", "steps": [{"type": "tfidf", "sublinear_tf": True},
                                                    {"type": "svd", "n_components": 100, "seed": 0}]},
        "embedders": {"position": {"type": "sinusoidal", "input": "words", "d_model": 64, "max_len": 512,
                                   "batch": {"lines": 32, "padding": "longest", "truncation": True,
                                             "max_length": 512}}},
        "output": "runs/quickstart",
    }
    assert list(res) == ["corpus", "tokenizers", "vectorizers", "embedders", "output"]
    assert list(res["tokenizers"]) == ["char", "words", "bpe8k"]  # recipe order
    assert list(res["tokenizers"]["bpe8k"]) == ["type", "min_frequency", "seed", "vocab_size"]  # type, then sorted
    out = tmp_path / "recipe.resolved.yaml"
    out.write_text(r.resolved_yaml(), encoding="utf-8")
    again = load_recipe(out, registry=reg)
    assert again.corpus == r.corpus and again.output == r.output
    # the preset is expanded in the resolved file, so only `preset` differs
    assert again.tokenizers == tuple(dataclasses.replace(s, preset=None) for s in r.tokenizers)
    assert again.vectorizers == r.vectorizers and again.embedders == r.embedders
    assert again.resolved() == res


def test_resolved_keeps_strings_that_yaml_1_1_would_retype(reg, at_root, tmp_path):
    r = load_recipe("tests/recipes/good/typing.yaml", registry=reg)
    out = tmp_path / "again.yaml"
    out.write_text(r.resolved_yaml(), encoding="utf-8")
    assert load_recipe(out, registry=reg).tokenizers == r.tokenizers


def test_anchors_merge_keys_and_quoted_strings(reg, at_root):
    r = load_recipe("tests/recipes/good/anchors.yaml", registry=reg)
    small, bigger = r.tokenizers
    assert dict(small.params) == {"vocab_size": 64, "unk_token": "null", "pad_token": "<pad>"}
    # merged from the anchor, with the explicit vocab_size winning
    assert dict(bigger.params) == {"vocab_size": 128, "unk_token": "null", "pad_token": "<pad>",
                                   "special_tokens": ("<s>", "</s>", "123")}
    assert (r.corpus.unit, r.corpus.errors) == ("file", "replace")
    assert r.embedders[0].params["padding_idx"] == 0 and r.output is None


# -- YAML typing against the parameter's type ---------------------------------------------------------------------
def test_typing_table(reg, at_root):
    import yaml

    rel = "tests/recipes/good/typing.yaml"
    p = dict(load_recipe(rel, registry=reg).tokenizers[0].params)
    assert p == {"lr": 0.001, "scale": 1000.0, "lang": "no", "window": "3:30", "lowercase": True, "count": 8000,
                 "maybe": None, "names": ("a", "b", "no"), "pair": (1, 2), "mode": "slow", "auto": "auto",
                 "weights": {"x": 1.0, "y": 0.5}, "free": "yes", "inferred": 16}
    assert [type(p[k]) for k in ("lr", "scale", "lang", "window", "lowercase", "count")] == [
        float, float, str, str, bool, int]
    assert type(p["weights"]["x"]) is float
    # what plain YAML 1.1 loading would have given for the same five values
    raw = yaml.safe_load((ROOT / rel).read_text(encoding="utf-8"))["tokenizers"]["typed"]
    assert [raw[k] for k in ("lr", "scale", "lang", "window", "lowercase")] == ["1e-3", "1.0e3", False, 210, True]


@pytest.mark.parametrize("line, key, value", [
    ("lr: 1e-3", "lr", 0.001),
    ("lr: 1", "lr", 1.0),
    ("lr: -.5", "lr", -0.5),
    ("lr: 1_000.5", "lr", 1000.5),
    ("lr: 2.", "lr", 2.0),
    ("lr: .inf", "lr", math.inf),
    ("lr: -.Inf", "lr", -math.inf),
    ("count: 8000", "count", 8000),
    ("count: 8_000", "count", 8000),
    ("count: +5", "count", 5),
    ("count: -3", "count", -3),
    ("count: 017", "count", 17),  # YAML 1.2: decimal, not octal
    ("count: 0o17", "count", 15),
    ("count: 0x1F", "count", 31),
    ("count: null", "count", None),
    ("count: ~", "count", None),
    ("count:", "count", None),
    ("maybe: NULL", "maybe", None),
    ("maybe: 'null'", "maybe", "null"),
    ('maybe: "~"', "maybe", "~"),
    ("maybe: no", "maybe", "no"),
    ("lang: 'no'", "lang", "no"),
    ("lang: 123", "lang", "123"),
    ("lang: 1e3", "lang", "1e3"),
    ("lang: 2001-01-01", "lang", "2001-01-01"),
    ("lang: !!str 5", "lang", "5"),
    ("lang: 'a: b'", "lang", "a: b"),
    ("lowercase: off", "lowercase", False),
    ("lowercase: NO", "lowercase", False),
    ("lowercase: True", "lowercase", True),
    ("auto: on", "auto", True),
    ("auto: auto", "auto", "auto"),
    ("mode: slow", "mode", "slow"),
    ("names: []", "names", ()),
    ("names: [1, yes, '~']", "names", ("1", "yes", "~")),
    ("pair: [3, -4]", "pair", (3, -4)),
    ("weights: {}", "weights", {}),
    ("weights: {a: 1, b: 1e-1}", "weights", {"a": 1.0, "b": 0.1}),
    ("weights: null", "weights", None),
    ("free: yes", "free", "yes"),
    ("free: 1e3", "free", 1000.0),
    ("free: [a, 1, true, null]", "free", ("a", 1, True, None)),
    ("free: {k: v}", "free", {"k": "v"}),
    ("free: '1'", "free", "1"),
    ("inferred: 12", "inferred", 12),
])
def test_scalar_read_against_the_parameter_type(reg, line, key, value):
    got = typed(reg, line)[key]
    assert got == value
    assert type(got) is type(value)


def test_nan_float(reg):
    assert math.isnan(typed(reg, "lr: .nan")["lr"])


@pytest.mark.parametrize("line, message", [
    ("lr: fast", "tokenizers.t.lr: expected float, got 'fast'"),
    ("lr: 3:30", "tokenizers.t.lr: expected float, got '3:30'"),
    ("lr: '0.5'", "tokenizers.t.lr: expected float, got the quoted string '0.5' (remove the quotes)"),
    ("count: 1.5", "tokenizers.t.count: expected int or null, got '1.5'"),
    ("count: 1e3", "tokenizers.t.count: expected int or null, got '1e3'"),
    ("count: 8__000", "tokenizers.t.count: expected int or null, got '8__000'"),
    ("count: true", "tokenizers.t.count: expected int or null, got 'true'"),
    ("count: eight thousand", "tokenizers.t.count: expected int or null, got 'eight thousand'"),
    ("lowercase: 1", "tokenizers.t.lowercase: expected bool, got '1'"),
    ("lowercase: 'yes'", "tokenizers.t.lowercase: expected bool, got the quoted string 'yes' (remove the quotes)"),
    ("lowercase: y", "tokenizers.t.lowercase: expected bool, got 'y'"),
    ("lang: null", "tokenizers.t.lang: expected str, got null (quote it to mean the text)"),
    ("lang: [a]", "tokenizers.t.lang: expected str, got a list"),
    ("lang: {a: 1}", "tokenizers.t.lang: expected str, got a mapping"),
    ("mode: slwo", "tokenizers.t.mode: expected one of 'fast', 'slow', got 'slwo'. Did you mean 'slow'?"),
    ("mode: null", "tokenizers.t.mode: expected one of 'fast', 'slow', got null"),
    ("auto: maybe", "tokenizers.t.auto: expected 'auto' or bool, got 'maybe'"),
    ("names: abc", "tokenizers.t.names: expected list of str, got 'abc'"),
    ("pair: [1]", "tokenizers.t.pair: expected list of 2 items (int, int), got a list of 1 item"),
    ("weights: [1]", "tokenizers.t.weights: expected mapping of str to float or null, got a list"),
])
def test_type_errors_name_the_expected_type(reg, line, message):
    col = 5 + line.index(":") + 2  # 4 spaces of indent, then the value after "key: "
    assert problems(TYPED + "    " + line + "\n", reg) == [f"r.yaml:5:{col}: {message}"]


def test_empty_value_is_null_located_after_the_colon(reg):
    # "    lang:" ends at column 9; the empty value is located right after it
    assert problems(TYPED + "    lang:\n", reg) == [
        "r.yaml:5:10: tokenizers.t.lang: expected str, got null (an empty value) (quote it to mean the text)"]


def test_type_errors_inside_lists_and_mappings_point_at_the_item(reg):
    text = TYPED + "    names: [a, [b], c]\n    weights: {a: 1, b: x}\n"
    assert problems(text, reg) == [
        "r.yaml:5:16: tokenizers.t.names.1: expected str, got a list",
        "r.yaml:6:24: tokenizers.t.weights.b: expected float, got 'x'",
    ]


def test_unsupported_tags_and_recursive_aliases_are_problems_not_crashes(reg):
    text = TYPED + "    lang: !!binary aGk=\n    free: &x [1, *x]\n"
    assert problems(text, reg) == [
        "r.yaml:5:11: tokenizers.t.lang: unsupported YAML tag 'tag:yaml.org,2002:binary'",
        # the alias is the anchored list itself, so it is located where the list starts
        "r.yaml:6:11: tokenizers.t.free.1: recursive alias: this value contains itself",
    ]


def test_build_thaws_lists_to_the_annotated_container(reg):
    r = load(TYPED + "    names: [a, b]\n    pair: [1, 2]\n    weights: {a: 1}\n    free: [x, [y]]\n", reg)
    obj = r.build("tokenizers.t")
    assert isinstance(obj, Typed) and not obj.is_fitted()
    assert obj.names == ["a", "b"] and obj.pair == (1, 2) and obj.weights == {"a": 1.0}
    assert obj.free == ["x", ["y"]]  # unannotated: lists
    assert r.build("t").names == ["a", "b"]  # a bare label, unique in the recipe
    assert r.build(r.tokenizers[0]).pair == (1, 2)
    obj.names.append("c")  # each build gets its own containers
    assert r.build("t").names == ["a", "b"]
    with pytest.raises(KeyError, match="no component 'tokenizers.x' in this recipe; components: tokenizers.t"):
        r.build("tokenizers.x")


def test_built_char_tokenizer_fits(reg):
    r = load("corpus: {builtin: moby-dick}\ntokenizers:\n  c: {type: char, special_tokens: ['<s>'], "
             "vocab_size: 6}\n", reg)
    tok = r.build("tokenizer.c").fit(["abcabca"])
    # specials <pad>, <unk>, <s>, then the 3 most frequent characters: a (3), b (2), c (2)
    assert tok.get_vocab() == {"<pad>": 0, "<unk>": 1, "<s>": 2, "a": 3, "b": 4, "c": 5}


# -- stages, presets, sections ------------------------------------------------------------------------------------
def test_vectorizer_step_labels_are_unique(reg):
    r = load("corpus: {builtin: moby-dick}\ntokenizers:\n  tfidf: {type: char}\nvectorizers:\n  steps:\n"
             "    - {type: tfidf}\n    - {preset: lsa-100}\n    - {type: svd, n_components: 5}\n", reg)
    # svd repeats and "tfidf" is a tokenizer's label: both get their index
    assert [s.label for s in r.vectorizers.steps] == ["tfidf-0", "svd-1", "svd-2"]
    assert r.vectorizers.input is None  # raw documents
    assert dict(r.vectorizers.steps[1].params) == {"n_components": 100}
    assert r.build("vectorizers.1").n_components == 100 and r.build("vectorizers.svd-2").n_components == 5


def test_vectorizer_section_shape(reg):
    head = "corpus: {builtin: moby-dick}\nvectorizers:\n"
    assert problems(head + "  input: null\n  steps: []\n", reg) == [
        "r.yaml:4:10: vectorizers.steps: expected a non-empty list of stages [{type: ...}, ...], got an empty list"]
    assert problems(head + "  steps: [{type: tfidf}]\n  order: 1\n", reg) == [
        "r.yaml:4:3: vectorizers.order: unknown key. Allowed: input, steps, unit, save_matrix, nearest"]
    assert problems(head + "  input: null\n", reg) == [
        "r.yaml:3:3: vectorizers.steps: missing: the list of vectorizers to apply in order"]


def test_stage_must_be_a_mapping_with_a_type(reg):
    text = "corpus: {builtin: moby-dick}\ntokenizers:\n  a: char\n  b: {min_frequency: 2}\n  c:\n"
    assert problems(text, reg) == [
        "r.yaml:3:6: tokenizers.a: expected a mapping with type: (or preset:) and parameters, got 'char' "
        "(write {type: char})",
        "r.yaml:4:6: tokenizers.b.type: missing: the tokenizer to use (one of: char, typed, word), or a preset:",
        "r.yaml:5:5: tokenizers.c: expected a mapping with type: (or preset:) and parameters, got null (an empty "
        "value)",
    ]


def test_empty_sections_mean_nothing_to_do(reg):
    assert problems("corpus: {builtin: moby-dick}\ntokenizers:\nembedders: {}\n", reg) == [
        "r.yaml:1:1: nothing to do: add tokenizers:, vectorizers:, embedders: or evaluate:"]
    assert problems("tokenizers: {c: {type: char}}\n", reg) == [
        "r.yaml:1:1: corpus: missing: a recipe reads {builtin: moby-dick}, {path: FILE_OR_GLOB} or {dataset: NAME}"]


class Loose(Tokenizer):
    """A broken plugin class: **kwargs and a bad param_constraints."""

    name: ClassVar[str] = "loose"
    param_constraints: ClassVar[dict[str, Any]] = {"size": ">= 1", "ghost": Interval(int, 1, None)}

    def __init__(self, size: int = 1, **kwargs):
        self.size = size


def test_plugin_bugs_are_reported_at_the_stage():
    class Plugin:
        @hookimpl
        def tokembed_register_tokenizers(self):
            return [Loose]

    reg = make_registry(Plugin())
    # "  l: {type: " is 12 characters: the type's value is at column 13
    assert problems("corpus: {builtin: moby-dick}\ntokenizers:\n  l: {type: loose, size: 2}\n", reg) == [
        "r.yaml:3:13: tokenizers.l.type: plugin bug: Loose.param_constraints['size']: a parameter constraint must "
        "be a tokembed.params.Constraint or None, got '>= 1'",
        "r.yaml:3:13: tokenizers.l.type: plugin bug: Loose.__init__ takes *kwargs; components must list their "
        "parameters",
        "r.yaml:3:13: tokenizers.l.type: plugin bug: Loose.param_constraints names 'ghost', which is not a "
        "parameter",
    ]


def test_class_params_reads_annotations_and_defaults():
    params, bugs = class_params(Typed)
    assert bugs == ()
    assert params["lr"].hint is float and params["lr"].default == 0.1
    assert params["inferred"].hint is int  # unannotated: from the default 3
    assert params["free"].hint is Any  # unannotated, default None
    params, _ = class_params(FakeSinusoidal)
    assert params["d_model"].default is inspect_empty()
    assert params["d_model"].constraint == (FakeSinusoidal.param_constraints["d_model"],)


def inspect_empty():
    import inspect

    return inspect.Parameter.empty


# -- cross-stage: the planned special-token ids ---------------------------------------------------------------
@pytest.mark.parametrize("params", [
    {},
    {"pad_token": None},
    {"unk_token": None, "special_tokens": ["<s>", "</s>"]},
    {"pad_token": "<unk>", "special_tokens": ["<s>", "<unk>", "<s>"]},
    {"pad_token": None, "unk_token": None},
])
def test_char_expected_special_ids_match_the_fitted_vocabulary(params):
    planned = CharTokenizer.expected_special_ids(params)
    tok = CharTokenizer(**params).fit(["hello world"])
    assert planned == {t: tok.token_to_id(t) for t in tok.special_tokens_}


def test_expected_special_ids_examples():
    assert CharTokenizer.expected_special_ids({}) == {"<pad>": 0, "<unk>": 1}
    assert CharTokenizer.expected_special_ids({"pad_token": None, "special_tokens": ["<s>", "<unk>"]}) == {
        "<unk>": 0, "<s>": 1}
    assert Typed.expected_special_ids({}) == {}  # the base class's default: no plan


def test_padding_idx_that_agrees_passes(reg):
    text = ("corpus: {builtin: moby-dick}\ntokenizers:\n  w: {type: word, pad_token: '[PAD]', unk_token: '[UNK]',"
            " special_tokens: ['[CLS]']}\nembedders:\n  e: {type: sinusoidal, input: w, d_model: 4,"
            " padding_idx: 0, vocab_size: 3}\n")
    assert load(text, reg).embedders[0].params["padding_idx"] == 0
    assert problems(text.replace("padding_idx: 0", "padding_idx: 1"), reg) == [
        "r.yaml:5:60: embedders.e.padding_idx: 1 disagrees with tokenizer 'w': its pad token '[PAD]' will get id 0"]
    # [PAD] 0, [UNK] 1, [CLS] 2: a table of 2 rows has no row for [CLS]
    assert problems(text.replace("vocab_size: 3", "vocab_size: 2"), reg) == [
        "r.yaml:5:75: embedders.e.vocab_size: 2 leaves no row for the special token '[CLS]' of tokenizer 'w' (id 2)"]


# -- --set overrides and out= -------------------------------------------------------------------------------------
QUICK = "tests/recipes/good/quickstart.yaml"


def test_set_values_are_typed_like_file_values(reg):
    p = typed(reg, "mode: fast", overrides=["tokenizers.t.lr=1e-3", "tokenizers.t.scale=1.0e3",
                                            "tokenizers.t.lang=no", "tokenizers.t.window=3:30",
                                            "tokenizers.t.lowercase=yes", "tokenizers.t.count=",
                                            "tokenizers.t.names=[a, 'b']"])
    assert p == {"mode": "fast", "lr": 0.001, "scale": 1000.0, "lang": "no", "window": "3:30", "lowercase": True,
                 "count": None, "names": ("a", "b")}


def test_set_replaces_creates_and_appends(reg, at_root):
    r = load_recipe(QUICK, registry=reg, overrides=[
        "tokenizers.words.min_frequency=3",
        "tokenizers.words.min_frequency=4",  # the last one wins
        "tokenizers.char.vocab_size=100",  # created: the parent exists
        "tokenizers.extra={type: char, pad_token: null}",  # a whole new stage
        "vectorizers.steps.1.n_components=50",
        "vectorizers.steps[1].seed=7",
        "vectorizers.steps.2={type: svd}",  # one past the end appends
        "embedders.position.batch.lines=8",
        "output=runs/other",
    ])
    assert dict(r.tokenizers[1].params) == {"min_frequency": 4}
    assert dict(r.tokenizers[0].params) == {"vocab_size": 100}
    assert (r.tokenizers[3].label, dict(r.tokenizers[3].params)) == ("extra", {"pad_token": None})
    assert r.tokenizers[3].location == "--set tokenizers.extra={type: char, pad_token: null}"
    assert [dict(s.params) for s in r.vectorizers.steps] == [{"sublinear_tf": True}, {"n_components": 50, "seed": 7},
                                                             {}]
    assert [s.label for s in r.vectorizers.steps] == ["tfidf", "svd-1", "svd-2"]
    assert r.embedders[0].batch.lines == 8
    assert r.output == Path("runs/other")
    assert r.overrides[0] == "tokenizers.words.min_frequency=3" and len(r.overrides) == 9


def test_out_wins_over_output(reg, at_root):
    r = load_recipe(QUICK, registry=reg, overrides=["output=a"], out="b")
    assert r.output == Path("b") and r.resolved()["output"] == "b"


@pytest.mark.parametrize("arg, message", [
    ("tokenizers.words.min_frequency=abc", "tokenizers.words.min_frequency: expected int >= 1, got 'abc'"),
    ("tokenizers.char.colour=red", "tokenizers.char.colour: unknown parameter of tokenizer 'char'. Parameters: "
                                   "vocab_size, min_frequency, unk_token, pad_token, special_tokens, seed"),
    ("tokenizers.x.y=1", "tokenizers.x: not in the recipe (tokenizers has: char, words, bpe8k). To add a stage, "
                         "set it whole: --set 'tokenizers.x={type: ...}'"),
    ("tokenizers.wrds.min_frequency=1", "tokenizers.wrds: not in the recipe (tokenizers has: char, words, bpe8k)."
                                        " Did you mean 'words'? To add a stage, set it whole: "
                                        "--set 'tokenizers.wrds={type: ...}'"),
    ("vectorizers.steps.5.seed=1", "vectorizers.steps.5: index 5 is out of range: the list has 2 items"),
    ("vectorizers.steps.x.seed=1", "vectorizers.steps.x: vectorizers.steps is a list: use an index (0, 1, ...)"),
    ("output.x=1", "output.x: output is a single value, not a mapping or list"),
    ("embedders.position={type: sinusoidal, input: words}",
     "embedders.position.d_model: missing: a required parameter of embedder 'sinusoidal' (int)"),
])
def test_set_errors_name_the_override(reg, at_root, arg, message):
    with pytest.raises(RecipeError) as info:
        load_recipe(QUICK, registry=reg, overrides=[arg])
    assert [str(p) for p in info.value.problems] == [f"--set {arg}: {message}"]


@pytest.mark.parametrize("arg", ["nonsense", "=1", "a..b=1"])
def test_set_needs_path_equals_value(reg, at_root, arg):
    with pytest.raises(RecipeError) as info:
        load_recipe(QUICK, registry=reg, overrides=[arg])
    assert [str(p) for p in info.value.problems] == [f"--set {arg}: expected PATH=VALUE, e.g. --set tokenizers.char.vocab_size=100"]


def test_file_problems_come_before_override_problems(reg):
    text = "corpus: {builtin: moby-dick}\ntokenizers:\n  c: {type: char, vocab_size: x}\n"
    assert problems(text, reg, overrides=["tokenizers.c.min_frequency=0.5", "tokenizers.c.seed=s"]) == [
        "r.yaml:3:31: tokenizers.c.vocab_size: expected int >= 1 or null, got 'x'",
        "--set tokenizers.c.min_frequency=0.5: tokenizers.c.min_frequency: expected int >= 1, got '0.5'",
        "--set tokenizers.c.seed=s: tokenizers.c.seed: expected int, got 's'",
    ]


# -- corpus -------------------------------------------------------------------------------------------------------
def _write(path: Path, text: str = "x\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_corpus_path_is_relative_to_the_recipe_file(reg, tmp_path, monkeypatch):
    a = _write(tmp_path / "proj" / "data" / "a.txt")
    recipe = _write(tmp_path / "proj" / "r.yaml", "corpus: {path: data/a.txt}\ntokenizers: {c: {type: char}}\n")
    monkeypatch.chdir(tmp_path)  # not the recipe's folder
    r = load_recipe("proj/r.yaml", registry=reg)
    assert r.corpus == CorpusSpec("path", "data/a.txt", (a,), "text", None, "strict", "line")
    assert r.corpus.paths[0].is_absolute()
    assert r.resolved()["corpus"]["path"] == str(tmp_path / "proj" / "data" / "a.txt")
    assert r.describe() == "corpus path:data/a.txt (1 file); 1 tokenizer"
    # the resolved recipe, written elsewhere, still finds the file
    out = _write(tmp_path / "elsewhere" / "recipe.resolved.yaml", r.resolved_yaml())
    assert load_recipe(out, registry=reg).corpus.paths == (a,)
    assert recipe.exists()


def test_corpus_folder_and_glob(reg, tmp_path):
    files = [_write(tmp_path / "c" / name) for name in ["b.txt", "a.txt", "sub/c.txt", "d.md"]]
    _write(tmp_path / "c" / ".hidden.txt")
    _write(tmp_path / "c" / ".git" / "x.txt")
    head = "tokenizers: {c: {type: char}}\ncorpus: "
    r = load_recipe_string(head + "{path: c}\n", base_dir=tmp_path, registry=reg)
    assert r.corpus.paths == (files[1], files[0], files[3], files[2])  # sorted, recursive, hidden skipped
    r = load_recipe_string(head + "{path: 'c/*.txt'}\n", base_dir=tmp_path, registry=reg)
    assert r.corpus.paths == (files[1], files[0])
    r = load_recipe_string(head + "{path: 'c/**/*.txt'}\n", base_dir=tmp_path, registry=reg)
    assert r.corpus.paths == (files[1], files[0], files[2])
    with pytest.raises(RecipeError) as info:
        load_recipe_string(head + "{path: 'c/*.csv'}\n", source="r.yaml", base_dir=tmp_path, registry=reg)
    assert [str(p) for p in info.value.problems] == [
        "r.yaml:2:16: corpus.path: c/*.csv: no file matches this pattern; paths are relative to the recipe file"]


def test_corpus_jsonl_format_is_inferred_and_needs_a_field(reg, tmp_path):
    _write(tmp_path / "d.jsonl", '{"text": "a"}\n')
    head = "tokenizers: {c: {type: char}}\ncorpus: "
    r = load_recipe_string(head + "{path: d.jsonl, field: text}\n", base_dir=tmp_path, registry=reg)
    assert (r.corpus.format, r.corpus.field) == ("jsonl", "text")
    assert r.resolved()["corpus"] == {"path": str(tmp_path / "d.jsonl"), "format": "jsonl", "field": "text",
                                      "errors": "strict"}
    with pytest.raises(RecipeError) as info:
        load_recipe_string(head + "{path: d.jsonl}\n", source="r.yaml", base_dir=tmp_path, registry=reg)
    assert [str(p) for p in info.value.problems] == [
        "r.yaml:2:9: corpus.field: missing: format jsonl needs the key holding each record's text"]
    r = load_recipe_string(head + "{path: d.jsonl, format: text, unit: file}\n", base_dir=tmp_path, registry=reg)
    assert (r.corpus.format, r.corpus.unit) == ("text", "file")
    _write(tmp_path / "e.jsonl", '{"text": "a"}\n[1, 2]\n')
    with pytest.raises(CorpusError, match=r"e.jsonl:2: the record is a JSON list, not an object with a field 'text'"):
        list(Corpus(tmp_path / "e.jsonl", format="jsonl", field="text"))


def test_corpus_path_from_set_is_relative_to_the_current_directory(reg, tmp_path, monkeypatch):
    data = _write(tmp_path / "cwd" / "mine.txt")
    _write(tmp_path / "recipes" / "r.yaml", "corpus: {builtin: moby-dick}\ntokenizers: {c: {type: char}}\n")
    monkeypatch.chdir(tmp_path / "cwd")
    r = load_recipe("../recipes/r.yaml", registry=reg, overrides=["corpus={path: mine.txt}"])
    assert r.corpus.source == "path" and r.corpus.paths == (data,)


def test_builtin_names_come_from_the_corpus_module(reg):
    from tokembed.corpus import builtin_names

    assert "moby-dick" in builtin_names()
    assert problems("corpus: {builtin: moby}\ntokenizers: {c: {type: char}}\n", reg) == [
        f"r.yaml:1:19: corpus.builtin: unknown bundled text 'moby'. Did you mean 'moby-dick'? "
        f"Available: {', '.join(builtin_names())}"]


def test_corpus_dataset(reg, tmp_path, monkeypatch):
    import tokembed.datasets as ds

    head = "tokenizers: {c: {type: char}}\ncorpus: "
    # only text datasets can be a corpus: the list names those (vectors, word pairs, ... are left out)
    names = sorted(n for n, spec in ds.DATASETS.items() if spec.kind in ("corpus", "corpus_dir"))
    assert "prose_mix" in names and "glove_6b_50d" not in names
    assert problems(head + "{dataset: prose_mx}\n", reg) == [
        f"r.yaml:2:19: corpus.dataset: unknown dataset 'prose_mx'. Did you mean 'prose_mix'? "
        f"Available: {', '.join(names)}"]

    def not_fetched(name):
        raise DataError(f"dataset {name!r} is not fetched: run `tokembed data fetch {name}`")

    monkeypatch.setattr(ds, "dataset_path", not_fetched)
    assert problems(head + "{dataset: prose_mix}\n", reg) == [
        "r.yaml:2:19: corpus.dataset: dataset 'prose_mix' is not fetched: run `tokembed data fetch prose_mix`"]
    fetched = _write(tmp_path / "prose_mix.txt")
    monkeypatch.setattr(ds, "dataset_path", lambda name: fetched)
    r = load(head + "{dataset: prose_mix}\n", reg)
    assert r.corpus == CorpusSpec("dataset", "prose_mix", (fetched,), "text", None, "strict", "line")
    assert r.describe() == "corpus dataset:prose_mix; 1 tokenizer"


def test_corpus_dataset_without_the_datasets_module(reg, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "tokembed.datasets", None)  # `import tokembed.datasets` now fails
    monkeypatch.delattr(tokembed, "datasets", raising=False)
    r = load("tokenizers: {c: {type: char}}\ncorpus: {dataset: anything}\n", reg)
    assert (r.corpus.source, r.corpus.value, r.corpus.paths) == ("dataset", "anything", ())


def test_default_registry_is_built_when_none_is_given(tmp_path, monkeypatch):
    monkeypatch.delenv("TOKEMBED_PLUGINS", raising=False)
    recipe = _write(tmp_path / "r.yaml", "corpus: {builtin: moby-dick}\ntokenizers: {c: {type: char}}\n")
    r = load_recipe(recipe)
    assert r.tokenizers[0].cls is CharTokenizer and r.registry is not None


# -- the documentation cannot drift -------------------------------------------------------------------------------
DOC = ROOT / "docs" / "recipes.md"


def _blocks(lang: str) -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    return [b.split("\n", 1)[1] for b in text.split("```")[1::2] if b.split("\n", 1)[0] == lang]


def test_docs_example_recipe_loads(reg):
    recipes = [b for b in _blocks("yaml") if b.startswith("corpus:")]
    assert recipes
    for text in recipes:
        r = load_recipe_string(text, source="docs/recipes.md", registry=reg)
        assert r.tokenizers and r.output == Path("runs/example")


def test_docs_error_example_is_the_real_output():
    example = next(b for b in _blocks("") if "several_problems.yaml" in b)
    assert example.splitlines() == (RECIPES / "bad" / "several_problems.expected").read_text("utf-8").splitlines()


def test_docs_name_every_key_the_schema_knows():
    from tokembed.recipe import BATCH_FIELDS, CORPUS_OPTIONS, CORPUS_SOURCES, RESERVED, TOP_KEYS

    text = DOC.read_text(encoding="utf-8")
    keys = [*TOP_KEYS, *CORPUS_SOURCES, *CORPUS_OPTIONS, *BATCH_FIELDS, *{k for ks in RESERVED.values() for k in ks}]
    missing = [k for k in keys if f"`{k}`" not in text and f"`{k}:`" not in text]
    assert missing == []


def test_set_changes_only_its_path_not_other_aliases(reg):
    text = ("corpus: {builtin: moby-dick}\ntokenizers:\n  a: &x {type: char, vocab_size: 10}\n  b: *x\n"
            "  c: {<<: *x, min_frequency: 2}\n")
    r = load(text, reg, overrides=["tokenizers.b.vocab_size=20", "tokenizers.c.vocab_size=30"])
    assert [dict(s.params) for s in r.tokenizers] == [
        {"vocab_size": 10}, {"vocab_size": 20}, {"min_frequency": 2, "vocab_size": 30}]
    # changing the anchored stage itself does not reach the stages that alias or merge it either
    r = load(text, reg, overrides=["tokenizers.a.vocab_size=40"])
    assert [s.params["vocab_size"] for s in r.tokenizers] == [40, 10, 10]


def test_a_single_override_string_is_one_override(reg):
    assert typed(reg, "mode: fast", overrides="tokenizers.t.lr=2")["lr"] == 2.0


def test_problems_are_data_with_file_line_column_and_path(reg):
    text = "corpus: {builtin: moby-dick}\ntokenizers:\n  w: {type: word, min_frequency: 0}\n"
    with pytest.raises(RecipeError) as info:
        load_recipe_string(text, source="r.yaml", registry=reg, overrides=["tokenizers.w.vocab_size=x"])
    first, second = info.value.problems
    # the value 0 of min_frequency is at line 3, column 34 (1-based: 2 spaces, "w: {type: word, min_frequency: ")
    assert (first.file, first.line, first.column, first.path) == ("r.yaml", 3, 34, "tokenizers.w.min_frequency")
    assert first.message == "expected int >= 1, got 0"  # this registry's word class declares the range
    assert (second.origin, second.line, second.path) == ("--set tokenizers.w.vocab_size=x", None,
                                                          "tokenizers.w.vocab_size")
    assert str(info.value) == f"{first}\n{second}"
    assert str(first) == f"r.yaml:3:34: tokenizers.w.min_frequency: {first.message}"
    assert second.message == "expected int >= 1 or null, got 'x'"
