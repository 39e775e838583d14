"""tokembed.params: parameter constraints as data, and the one validator built on them."""

from __future__ import annotations

import math
import typing
from typing import Any, ClassVar

import numpy as np
import pytest

from tokembed import Vectorizer
from tokembed.errors import ParameterError
from tokembed.params import (
    Boolean,
    Builds,
    InstanceOf,
    Interval,
    ListOf,
    MappingOf,
    Options,
    PathLike,
    Satisfies,
    Text,
    check_declared,
    describe_alternatives,
    hint_of,
    normalize,
    parameter_errors,
    raise_parameter_errors,
)


@pytest.mark.parametrize("constraint, good, bad, words", [
    (Interval(int, 1, None), [1, 2, np.int64(7), 10**12], [0, -1, 1.0, True, "1", None], "an int >= 1"),
    (Interval(float, 0, None, closed="neither"), [1e-9, 3, 2.5, np.float32(0.1)],
     [0, 0.0, -1.0, math.nan, math.inf, False], "a number > 0"),
    (Interval(float, 0, 1, closed="left"), [0.0, 0.5, 0], [1.0, 1, -0.1], "a number in [0, 1)"),
    (Interval(float, 0.98, 1), [0.98, 1.0, 1], [0.97, 1.01], "a number in [0.98, 1]"),
    (Interval(float, 0.001, None, finite=False), [math.inf, 0.001], [math.nan, 0.0], "a number >= 0.001"),
    (Interval(int, None, 5, closed="neither"), [4, -10], [5], "an int < 5"),
    (Interval(int, 1, 2**16), [1, 65536], [0, 65537], "an int >= 1 and <= 65,536"),
    (Options("l2", "l1"), ["l2", "l1"], ["L2", None, 2], "one of 'l2', 'l1'"),
    (Boolean(), [True, False, np.bool_(True)], [0, 1, "true", None], "true or false"),
    (Text(), ["x"], ["", None, b"x"], "a non-empty str"),
    (Text(max_length=1), ["x"], ["xy", ""], "a single character"),
    (PathLike(), ["a.txt"], ["", 3], "a path"),
    (ListOf(Text()), [[], ["a"], ("a", "b")], ["ab", ["a", ""], [1], None], "a list, each a non-empty str"),
    (ListOf(Interval(int, 1, None), length=2), [(1, 2), [3, 4]], [(1,), (0, 1)], "a list of 2 items, each an int >= 1"),
    (MappingOf(Text(), Interval(int, 0, None)), [{"a": 0}, {}], [{"a": -1}, {"": 1}, ["a"]],
     "a mapping of a non-empty str to an int >= 0"),
    (InstanceOf(dict, description="{dataset: NAME}"), [{"dataset": "x"}], ["x"], "{dataset: NAME}"),
    (Satisfies(lambda v: v % 2 == 0, "an even number"), [2, 0], [1, "x"], "an even number"),
])
def test_each_constraint_accepts_and_describes(constraint, good, bad, words):
    assert constraint.describe() == words
    for value in good:
        assert constraint.accepts(value), value
    for value in bad:
        assert not constraint.accepts(value), value


def test_none_is_allowed_only_where_listed_and_alternatives_are_described_together():
    spec = normalize([Interval(int, 1, None), None])
    assert describe_alternatives(spec) == "an int >= 1 or null"
    assert parameter_errors("x", {"n": spec}, {"n": None}) == []
    assert parameter_errors("x", {"n": Interval(int, 1, None)}, {"n": None})[0].param == "n"
    # max_df of tfidf: a share (float in [0, 1]) or a number of documents (int >= 1)
    df = [Interval(float, 0, 1, integers=False), Interval(int, 1, None)]
    assert describe_alternatives(df) == "a number in [0, 1] or an int >= 1"
    assert [bool(parameter_errors("t", {"d": df}, {"d": v})) for v in (0.5, 3, 0, 1.5, "x")] == \
        [False, False, True, True, True]


def test_hint_of_says_how_a_recipe_reads_the_value():
    assert hint_of([Interval(int, 1, None), None]) == typing.Optional[int]
    assert hint_of(Boolean()) is bool
    assert hint_of(Options("a", "b")) == typing.Literal["a", "b"]
    assert hint_of(ListOf(Text())) == typing.List[str]
    assert hint_of([Satisfies(callable, "a function")]) is Any


def test_every_problem_is_reported_not_only_the_first_and_messages_say_what_to_write():
    table = {"vector_size": Interval(int, 1, None), "x_max": Interval(float, 0, None, closed="neither"),
             "symmetric": Boolean(), "norm": [Options("l2", "l1"), None]}
    errors = parameter_errors("glove", table, {"vector_size": 2.0, "x_max": 0, "symmetric": 1, "norm": "l22"})
    assert [str(e) for e in errors] == [
        "glove: vector_size must be an int >= 1, got 2.0 (write it without a decimal point)",
        "glove: x_max must be a number > 0, got 0",
        "glove: symmetric must be true or false, got 1 (use true/false: true where gensim takes 1)",
        "glove: norm must be one of 'l2', 'l1' or null, got 'l22' (did you mean 'l2'?)",
    ]
    combined = ParameterError.of_all(errors)
    assert combined.param == "vector_size" and combined.errors == tuple(errors)
    assert str(combined).startswith("glove: 4 invalid parameters: vector_size must be an int >= 1, got 2.0")


def test_builds_accepts_what_its_builder_builds_and_quotes_the_builders_message():
    from tokembed.text import build_normalizer

    spec = Builds(build_normalizer, "a normalizer spec")
    assert [spec.accepts(v) for v in ("nfc", ["nfd", "lowercase"], "nfcc", 3, None)] == \
        [True, True, False, False, False]  # None only where listed, though build_normalizer(None) builds
    (error,) = parameter_errors("word", {"normalizer": [spec, None]}, {"normalizer": "nfcc"})
    assert str(error) == ("word: normalizer must be a normalizer spec or null, got 'nfcc': unknown normalizer 'nfcc'. "
                          "Did you mean 'nfc'? Available: bert_clean, identity, lowercase, nfc, nfd, nfkc, nfkd, "
                          "sequence, strip_accents")

    def refuses(value: Any) -> None:  # an error that is not a TokembedError: refused, with no message to quote
        raise TypeError("not this")

    assert parameter_errors("x", {"p": Builds(refuses, "a thing")}, {"p": 1})[0].problem == "must be a thing, got 1"


def test_raise_parameter_errors_raises_every_problem_at_once_or_nothing():
    table = {"n": Interval(int, 1, None), "flag": Boolean()}
    assert raise_parameter_errors("f", table, {"n": 1, "flag": True}) is None
    with pytest.raises(ParameterError) as info:
        raise_parameter_errors("f", table, {"n": 0, "flag": 1})
    assert [e.param for e in info.value.errors] == ["n", "flag"]
    assert str(info.value).startswith("f: 2 invalid parameters: n must be an int >= 1, got 0; flag must be")


class _Declared(Vectorizer):
    name: ClassVar[str] = "declared"
    param_constraints: ClassVar[dict[str, Any]] = {"low": Interval(int, 0, None), "high": Interval(int, 0, None),
                                                   "mode": Options("a", "b")}

    def __init__(self, low: int = 0, high: int = 10, mode: str = "a"):
        self.low, self.high, self.mode = low, high, mode

    def _validate(self) -> None:  # the rule between parameters stays the component's own
        if self.low > self.high:
            raise ParameterError(self.name, None, f"low={self.low} is above high={self.high}")

    def fit(self, X: Any, y: Any = None) -> "_Declared":
        self._validate_params()
        self.fitted_ = True
        return self


def test_the_base_validator_checks_the_table_then_the_rules_between_parameters():
    with pytest.raises(ParameterError) as info:
        _Declared(low=-1, mode="c").fit([])
    assert [e.param for e in info.value.errors] == ["low", "mode"]
    with pytest.raises(ParameterError, match="low=5 is above high=2"):
        _Declared(low=5, high=2).fit([])
    # validate: every problem of the table, then the rule on what is valid (bad values back at their defaults)
    assert _Declared.check_params({"low": -1, "mode": "c", "high": 3}) == [
        ("low", "declared: low must be an int >= 0, got -1"),
        ("mode", "declared: mode must be one of 'a', 'b', got 'c'"),
    ]
    assert _Declared.check_params({"low": 4, "high": 3}) == [(None, "declared: low=4 is above high=3")]


def test_broken_declarations_are_plugin_bugs():
    class Broken(_Declared):
        param_constraints: ClassVar[dict[str, Any]] = {"low": ">= 0", "ghost": Boolean(), "mode": []}

    assert check_declared(Broken, ["low", "high", "mode"]) == [
        "test_broken_declarations_are_plugin_bugs.<locals>.Broken.param_constraints['low']: a parameter constraint "
        "must be a tokembed.params.Constraint or None, got '>= 0'",
        "test_broken_declarations_are_plugin_bugs.<locals>.Broken.param_constraints names 'ghost', which is not a "
        "parameter",
        "test_broken_declarations_are_plugin_bugs.<locals>.Broken.param_constraints['mode']: a parameter "
        "declaration lists no constraint",
    ]
