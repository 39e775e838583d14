"""Parameter constraints as data: each component declares every ``__init__`` parameter ONCE, in its class attribute
``param_constraints``, and one validator (:func:`parameter_errors`) turns that table into
:class:`~tokembed.errors.ParameterError`\\ s for ``fit``, for ``tokembed validate`` and for typing recipe values.

In the spirit of scikit-learn's ``_parameter_constraints`` (``Interval``, ``StrOptions``), written for tokembed::

    param_constraints = {
        "vector_size": Interval(int, 1, 2**16),
        "x_max": Interval(float, 0, None, closed="neither"),
        "norm": [Options("l2", "l1"), None],       # a list: any alternative may match; None allows None
        "symmetric": Boolean(),
        "stop_words": [Options("english"), ListOf(Text()), PathLike(), None],
    }

A value is valid when it satisfies at least one alternative. ``None`` is valid only where ``None`` is listed. Rules
that tie parameters together (``min_df <= max_df``, ``minn <= maxn``) stay in the component's ``_validate``.

Every constraint has ``accepts(value) -> bool``, ``describe() -> str`` (``"an int >= 1"``, used in messages) and
``hint`` (the Python type a recipe reads a YAML scalar as: ``int``, ``float``, ``bool``, ``str``, ``list[str]``...).
"""

from __future__ import annotations

import math
import numbers
import os
import typing
from typing import Any, Callable, Iterable, Literal, Mapping, Sequence

from .errors import ParameterError, TokembedError

__all__ = ["Constraint", "Interval", "Options", "Boolean", "Text", "PathLike", "ListOf", "MappingOf", "InstanceOf",
           "Satisfies", "Builds", "Alternatives", "normalize", "parameter_errors", "raise_parameter_errors",
           "describe_alternatives", "hint_of",
           "check_declared", "satisfies"]


class Constraint:
    """One rule a parameter value may satisfy (subclass and implement :meth:`accepts` and :meth:`describe`)."""

    #: The type a recipe reads a YAML scalar as for this constraint (``typing.Any`` when it cannot say).
    hint: Any = Any

    def accepts(self, value: Any) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def advice(self, value: Any) -> str:
        """A hint appended to the problem for this (rejected) value, or ``""``."""
        return ""

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.describe()}>"


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and not _is_bool(value)


def _is_bool(value: Any) -> bool:
    t = type(value)  # numpy.bool_ too, without importing numpy
    return isinstance(value, bool) or (t.__module__ == "numpy" and t.__name__ in ("bool", "bool_"))


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not _is_bool(value)


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() and abs(v) < 2**63 else repr(float(v))


class Interval(Constraint):
    """A number of type ``int`` or ``float`` between ``low`` and ``high`` (``None``: unbounded on that side).

    ``closed`` says which bounds are included: ``"both"`` (default), ``"left"``, ``"right"`` or ``"neither"``.
    ``float`` accepts ints too (as scikit-learn's ``Real``) unless ``integers=False`` (where an int means something
    else, as tfidf's ``min_df``: a number of documents, not a share); ``int`` accepts no float and no bool. A float
    must be finite (NaN and infinity are refused) unless ``finite=False``.
    """

    def __init__(self, type: type, low: float | None, high: float | None, *, closed: str = "both",
                 finite: bool = True, integers: bool = True):
        if type not in (int, float):
            raise TypeError(f"Interval takes int or float, not {type!r}")
        if closed not in ("both", "left", "right", "neither"):
            raise ValueError(f"closed must be 'both', 'left', 'right' or 'neither', got {closed!r}")
        if low is not None and high is not None and low > high:
            raise ValueError(f"Interval: low {low!r} is above high {high!r}")
        self.type, self.low, self.high, self.closed, self.finite = type, low, high, closed, finite
        self.integers = integers
        self.hint = type

    def accepts(self, value: Any) -> bool:
        if not (_is_int(value) if self.type is int else _is_real(value)):
            return False
        if self.type is float and not self.integers and _is_int(value):
            return False
        if self.type is float:
            v = float(value)
            if math.isnan(v) or (self.finite and math.isinf(v)):
                return False
        left = self.closed in ("both", "left")
        right = self.closed in ("both", "right")
        if self.low is not None and (value < self.low if left else value <= self.low):
            return False
        if self.high is not None and (value > self.high if right else value >= self.high):
            return False
        return True

    def bounds(self) -> str:
        """The bounds in words: ``>= 1``, ``> 0``, ``>= 1 and <= 65,536`` (ints), ``in [0, 1)`` (floats); ``""`` when
        unbounded."""
        lo, hi = self.low, self.high
        num = (lambda v: f"{int(v):,}") if self.type is int else _num
        ge = ">=" if self.closed in ("both", "left") else ">"
        le = "<=" if self.closed in ("both", "right") else "<"
        if lo is not None and hi is not None:
            if self.type is int:
                return f"{ge} {num(lo)} and {le} {num(hi)}"
            return (f"in {'[' if ge == '>=' else '('}{num(lo)}, {num(hi)}{']' if le == '<=' else ')'}")
        if lo is not None:
            return f"{ge} {num(lo)}"
        if hi is not None:
            return f"{le} {num(hi)}"
        return ""

    def describe(self) -> str:
        what = "an int" if self.type is int else "a number"
        b = self.bounds()
        return f"{what} {b}" if b else what

    def advice(self, value: Any) -> str:
        if self.type is int and _is_real(value) and float(value).is_integer() and not isinstance(value, int):
            return " (write it without a decimal point)"
        if self.type is float and self.finite and _is_real(value) and math.isinf(float(value)):
            return " (infinity is not allowed: give a large finite number)"
        if self.type is float and not self.integers and _is_int(value):
            return " (an int means something else here: write it with a decimal point)"
        return ""


class Options(Constraint):
    """One of a fixed set of values (strings, usually): ``Options("l2", "l1")``."""

    def __init__(self, *values: Any):
        if not values:
            raise ValueError("Options needs at least one value")
        self.values = tuple(values)
        self.hint = Literal[self.values] if all(isinstance(v, (str, int)) for v in values) else Any

    def accepts(self, value: Any) -> bool:
        return any(type(value) is type(v) and value == v for v in self.values)

    def describe(self) -> str:
        shown = ", ".join(repr(v) for v in self.values)
        return f"one of {shown}" if len(self.values) > 1 else shown

    def advice(self, value: Any) -> str:
        if isinstance(value, str):
            import difflib

            near = difflib.get_close_matches(value, [v for v in self.values if isinstance(v, str)], n=1)
            if near:
                return f" (did you mean {near[0]!r}?)"
        return ""


class Boolean(Constraint):
    """``True`` or ``False`` (a NumPy bool too). ``1``/``0`` are refused with the advice to write true/false, which
    users of gensim (``sg=1``, ``hs=0``) meet first."""

    hint = bool

    def accepts(self, value: Any) -> bool:
        return _is_bool(value)

    def describe(self) -> str:
        return "true or false"

    def advice(self, value: Any) -> str:
        if _is_int(value) and value in (0, 1):
            return f" (use true/false: {'true' if value else 'false'} where gensim takes {value})"
        return ""


class Text(Constraint):
    """A ``str``; ``nonempty=True`` (default) refuses ``""``. ``max_length`` bounds its length in code points."""

    hint = str

    def __init__(self, *, nonempty: bool = True, max_length: int | None = None):
        self.nonempty, self.max_length = nonempty, max_length

    def accepts(self, value: Any) -> bool:
        return (isinstance(value, str) and (not self.nonempty or value != "")
                and (self.max_length is None or len(value) <= self.max_length))

    def describe(self) -> str:
        if self.max_length == 1:
            return "a single character"
        return "a non-empty str" if self.nonempty else "a str"


class PathLike(Constraint):
    """A file path: a non-empty ``str`` or an ``os.PathLike``. Whether the file exists is the component's check."""

    hint = str

    def accepts(self, value: Any) -> bool:
        return (isinstance(value, str) and value != "") or isinstance(value, os.PathLike)

    def describe(self) -> str:
        return "a path"


class ListOf(Constraint):
    """A list or tuple (never a ``str``) whose items each satisfy ``item`` (a constraint or a list of alternatives).
    ``nonempty=True`` refuses an empty list."""

    def __init__(self, item: Any, *, nonempty: bool = False, length: int | None = None):
        self.item = normalize(item)
        self.nonempty, self.length = nonempty, length
        inner = hint_of(self.item)
        self.hint = typing.List[inner] if length is None else typing.Tuple[(inner,) * length]  # noqa: UP006

    def accepts(self, value: Any) -> bool:
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
            return False
        if (self.nonempty and not value) or (self.length is not None and len(value) != self.length):
            return False
        return all(_matches(self.item, v) for v in value)

    def describe(self) -> str:
        head = f"a list of {self.length} items" if self.length is not None else (
            "a non-empty list" if self.nonempty else "a list")
        return f"{head}, each {describe_alternatives(self.item)}"


class MappingOf(Constraint):
    """A mapping whose keys satisfy ``key`` and values satisfy ``value`` (constraints or lists of alternatives)."""

    def __init__(self, key: Any, value: Any):
        self.key, self.value = normalize(key), normalize(value)
        self.hint = typing.Dict[hint_of(self.key), hint_of(self.value)]  # noqa: UP006

    def accepts(self, value: Any) -> bool:
        return isinstance(value, Mapping) and all(_matches(self.key, k) and _matches(self.value, v)
                                                  for k, v in value.items())

    def describe(self) -> str:
        return f"a mapping of {describe_alternatives(self.key)} to {describe_alternatives(self.value)}"


class InstanceOf(Constraint):
    """An instance of one of ``types`` (for objects a recipe cannot write, such as a normalizer object)."""

    def __init__(self, *types: type, description: str | None = None):
        self.types = types
        self.description = description or " or ".join(f"a {t.__name__}" for t in types)

    def accepts(self, value: Any) -> bool:
        return isinstance(value, self.types) and not (bool not in self.types and _is_bool(value))

    def describe(self) -> str:
        return self.description


class Satisfies(Constraint):
    """Whatever ``predicate(value)`` returns true for; ``description`` says it in words (``"a regular
    expression"``). ``hint`` is the type a recipe reads it as (default: any value)."""

    def __init__(self, predicate: Callable[[Any], bool], description: str, *, hint: Any = Any):
        self.predicate, self.description, self.hint = predicate, description, hint

    def accepts(self, value: Any) -> bool:
        try:
            return bool(self.predicate(value))
        except Exception:
            return False

    def describe(self) -> str:
        return self.description


class Builds(Constraint):
    """A spec that ``build(value)`` turns into an object without raising (a normalizer, a pre-tokenizer, a
    post-processor template): the builder is the one place that knows what it accepts, and its own message (``unknown
    normalizer 'bogus'. Available: ...``) follows the problem. ``None`` is refused here (list it where it is allowed),
    even when the builder takes it. ``hint`` is the type a recipe reads it as (default: any value)."""

    def __init__(self, build: Callable[[Any], Any], description: str, *, hint: Any = Any):
        self.build, self.description, self.hint = build, description, hint

    def _error(self, value: Any) -> str | None:
        """The builder's message for ``value``, or None when it builds."""
        if value is None:
            return ""
        try:
            self.build(value)
        except (TokembedError, TypeError, ValueError) as exc:
            return str(exc) if isinstance(exc, TokembedError) else ""
        return None

    def accepts(self, value: Any) -> bool:
        return self._error(value) is None

    def describe(self) -> str:
        return self.description

    def advice(self, value: Any) -> str:
        message = self._error(value)
        return f": {message}" if message else ""


#: A parameter's declaration after :func:`normalize`: the tuple of alternatives (``None`` among them allows None).
Alternatives = tuple


def normalize(spec: Any) -> tuple:
    """A declaration (one constraint, ``None``, or a list of them) as a tuple of alternatives.

    Raises
    ------
    TypeError
        For anything else (a plugin bug, reported by ``tokembed validate`` and the contract suite).
    """
    items = list(spec) if isinstance(spec, (list, tuple)) else [spec]
    for item in items:
        if item is not None and not isinstance(item, Constraint):
            raise TypeError(f"a parameter constraint must be a tokembed.params.Constraint or None, got {item!r}")
    if not items:
        raise TypeError("a parameter declaration lists no constraint")
    return tuple(items)


def satisfies(alternatives: Any, value: Any) -> bool:
    """True when ``value`` satisfies one of a declaration's alternatives (None among them allows None)."""
    return _matches(normalize(alternatives), value)


def _matches(alternatives: tuple, value: Any) -> bool:
    return any(value is None if c is None else c.accepts(value) for c in alternatives)


def describe_alternatives(alternatives: Any) -> str:
    """The alternatives in words: ``"an int >= 1 or null"``."""
    alts = normalize(alternatives)
    words = [c.describe() for c in alts if c is not None]
    if None in alts:
        words.append("null")
    return " or ".join(words)


def hint_of(alternatives: Any) -> Any:
    """The type hint a recipe reads a value as, from a parameter's alternatives (``int | None``, ...)."""
    alts = normalize(alternatives)
    hints = [c.hint for c in alts if c is not None]
    if any(h is Any for h in hints):
        return Any
    if None in alts:
        hints.append(type(None))
    out: Any = hints[0]
    for h in hints[1:]:
        out = typing.Union[out, h]
    return out


def _problem(alternatives: tuple, value: Any) -> str | None:
    if _matches(alternatives, value):
        return None
    advice = next((a for c in alternatives if c is not None and (a := c.advice(value))), "")
    return f"must be {describe_alternatives(alternatives)}, got {value!r}{advice}"


def parameter_errors(component: str, constraints: Mapping[str, Any], params: Mapping[str, Any],
                     names: Iterable[str] | None = None) -> list[ParameterError]:
    """Every problem of ``params`` against ``constraints``: one :class:`ParameterError` per invalid parameter.

    Parameters
    ----------
    component : str
        The component's registry name, the head of each message (``"glove: x_max must be ..."``).
    constraints : mapping of str to constraint, None or list of them
        A class's ``param_constraints``.
    params : mapping of str to value
        The values to check (a parameter missing here is not checked).
    names : iterable of str, optional
        Check only these parameters (default: every declared one present in ``params``).

    Raises
    ------
    TypeError
        When a declaration is not a constraint (a plugin bug).
    """
    errors = []
    for name in (names if names is not None else constraints):
        if name not in params or name not in constraints:
            continue
        problem = _problem(normalize(constraints[name]), params[name])
        if problem is not None:
            errors.append(ParameterError(component, name, problem))
    return errors


def raise_parameter_errors(component: str, constraints: Mapping[str, Any], params: Mapping[str, Any]) -> None:
    """Raise what :func:`parameter_errors` finds, all of it in one :class:`ParameterError`
    (:meth:`ParameterError.of_all`); return when every value is valid. For arguments declared like parameters: a
    function's scalar arguments, the options of one ``encode`` call.

    Raises
    ------
    ParameterError
        Naming every invalid value (``err.errors`` holds one error each).
    """
    errors = parameter_errors(component, constraints, params)
    if errors:
        raise ParameterError.of_all(errors)


def check_declared(cls: type, names: Sequence[str]) -> list[str]:
    """Plugin bugs in ``cls.param_constraints`` against the ``__init__`` parameters ``names``: a declaration that
    is not a constraint, or a key that is not a parameter. (A parameter without declaration is reported by the
    contract suite, not here: a third-party plugin may declare none.)"""
    table = getattr(cls, "param_constraints", None) or {}
    bugs = []
    if not isinstance(table, Mapping):
        return [f"{cls.__qualname__}.param_constraints must be a dict, got {type(table).__name__}"]
    for key, spec in table.items():
        if key not in names:
            bugs.append(f"{cls.__qualname__}.param_constraints names {key!r}, which is not a parameter")
            continue
        try:
            normalize(spec)
        except TypeError as exc:
            bugs.append(f"{cls.__qualname__}.param_constraints[{key!r}]: {exc}")
    return bugs
