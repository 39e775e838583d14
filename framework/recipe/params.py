"""The schema layer of recipes: a component's parameters from its ``__init__``, and recipe values typed against them.

A parameter's type is its annotation (``typing.get_type_hints(cls.__init__)``); without one, the type of its default
(int, float, bool or str); otherwise any value. Each plain YAML scalar is read from its raw text *for the target
type*, so YAML 1.1's implicit typing never decides: with a ``str`` parameter, ``no`` is ``"no"`` and ``3:30`` is
``"3:30"``; with a ``float`` one, ``1e-3`` is ``0.001``. Quoted scalars are always strings. The rules are listed in
``docs/recipes.md``.

Typed values are frozen for the spec objects (lists become tuples; the top-level parameter mapping is read-only)
and thawed to the annotated container by :func:`thaw` when a component is built.

Private to :mod:`tokembed.recipe`; nothing here is public API.
"""

from __future__ import annotations

import collections.abc as cabc
import functools
import inspect
import re
import sys
import types
import typing
from dataclasses import dataclass
from typing import Any, Literal, Union

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..params import Interval, check_declared, hint_of, normalize, satisfies
from .nodes import (
    NULL_WORDS,
    Problems,
    describe_node,
    did_you_mean,
    is_plain,
    join_path,
    mapping_items,
)

__all__ = ["ANY", "REQUIRED", "INVALID", "alternatives", "Param", "class_params", "method_params", "coerce", "describe",
           "thaw", "plain_data"]

ANY: Any = Any
#: Default of a parameter that has none (it must be given).
REQUIRED = inspect.Parameter.empty
#: Returned by :func:`coerce` after it recorded a problem.
INVALID: Any = type("Invalid", (), {"__repr__": lambda self: "<invalid>"})()
_NO: Any = object()  # a scalar that does not read as the wanted type

_NoneType = type(None)
_TRUE = frozenset({"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"})
_FALSE = frozenset({"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"})
_TRUE_12, _FALSE_12 = frozenset({"true", "True", "TRUE"}), frozenset({"false", "False", "FALSE"})
_DIGITS = r"[0-9]+(?:_[0-9]+)*"
_INT_RE = re.compile(rf"[-+]?(?:{_DIGITS}|0x[0-9a-fA-F]+|0o[0-7]+)")
_FLOAT_RE = re.compile(rf"[-+]?(?:\.{_DIGITS}|{_DIGITS}(?:\.(?:{_DIGITS})?)?)(?:[eE][-+]?[0-9]+)?")
_INF_RE = re.compile(r"[-+]?\.(?:inf|Inf|INF)")
_NAN_RE = re.compile(r"\.(?:nan|NaN|NAN)")
_SEQ_ORIGINS = (list, tuple, set, frozenset, cabc.Sequence, cabc.MutableSequence, cabc.Collection, cabc.Iterable,
                cabc.Set, cabc.MutableSet)
_MAP_ORIGINS = (dict, cabc.Mapping, cabc.MutableMapping)
_MAX_DEPTH = 50


def _read_int(text: str) -> int | Any:
    if not _INT_RE.fullmatch(text):
        return _NO
    t = text.replace("_", "")
    sign = -1 if t.startswith("-") else 1
    body = t.lstrip("+-")
    if body.startswith(("0x", "0o")):
        return sign * int(body[2:], 16 if body[1] == "x" else 8)
    return sign * int(body)


def _read_float(text: str) -> float | Any:
    if _FLOAT_RE.fullmatch(text):
        return float(text.replace("_", ""))
    if _INF_RE.fullmatch(text):
        return float("-inf") if text.startswith("-") else float("inf")
    if _NAN_RE.fullmatch(text):
        return float("nan")
    if _INT_RE.fullmatch(text):  # 0x10 as a float
        return float(_read_int(text))
    return _NO


# -- constraints --------------------------------------------------------------------------------------------------
def alternatives(spec: Any) -> tuple | None:
    """A constraint declaration (a :mod:`tokembed.params` constraint, or a list of them) as its tuple of
    alternatives; None for None."""
    return None if spec is None else normalize(spec)


def _bounds(constraint: tuple | None, kind: type) -> str:
    """The bounds of the first :class:`~tokembed.params.Interval` of type ``kind`` among the alternatives."""
    for c in constraint or ():
        if isinstance(c, Interval) and c.type is kind:
            return c.bounds()
    return ""


def _satisfies(constraint: tuple | None, value: Any) -> bool:
    """True when ``value`` satisfies one alternative (or there is no constraint). Only numbers are checked here:
    the rest is :func:`tokembed.params.parameter_errors`' (run by ``check_params``), so a recipe reports it once."""
    if constraint is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return True
    return satisfies(constraint, value)


# -- parameters of a class ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Param:
    """One ``__init__`` parameter: name, type hint (:data:`ANY` when unknown), default (:data:`REQUIRED` when
    none) and its constraint (the tuple of alternatives of the class's ``param_constraints``, or None)."""

    name: str
    hint: Any
    default: Any
    constraint: tuple | None = None


@functools.lru_cache(maxsize=None)
def class_params(cls: type) -> tuple[types.MappingProxyType, tuple[str, ...]]:
    """The parameters of ``cls.__init__`` (name -> :class:`Param`, in signature order) and plugin bugs found.

    Bugs (``*args``/``**kwargs``, positional-only parameters, a broken ``param_constraints``) are returned as
    messages; the parameters that can still be checked are returned.
    """
    raw_constraints = _declared(cls)
    params, bugs, _ = _signature_params(cls.__init__, f"{cls.__qualname__}.__init__", 1, raw_constraints, False)
    bugs.extend(check_declared(cls, list(params)))
    return types.MappingProxyType(params), tuple(dict.fromkeys(bugs))


def _declared(cls: type) -> dict[str, Any]:
    table = getattr(cls, "param_constraints", None)
    return dict(table) if isinstance(table, dict) else {}


@functools.lru_cache(maxsize=None)
def method_params(cls: type, method: str, files: int = 1) -> tuple[types.MappingProxyType, tuple[str, ...], bool]:
    """The keyword parameters of the classmethod ``cls.method(path, ...)`` after its first ``files`` (the files to
    read: 2 for ``from_vocab_merges(vocab_json, merges_txt, ...)``).

    Used for ``{load: FILE, ...}`` stages, whose other keys are passed to a loader such as
    ``from_vocab_file(path, lowercase=True)``. Returns ``(parameters, bugs, takes_kwargs)``; ``takes_kwargs`` is
    True when the method ends in ``**kwargs`` (the caller then also accepts the ``__init__`` parameters, which such
    a loader usually forwards). The class's ``param_constraints`` apply to parameters of the same name.
    """
    fn = getattr(cls, method)
    raw = _declared(cls)
    params, bugs, kwargs = _signature_params(fn, f"{cls.__qualname__}.{method}", files, raw, True)
    return types.MappingProxyType(params), tuple(bugs), kwargs


def _signature_params(fn: Any, where: str, drop: int, raw_constraints: Any,
                      allow_kwargs: bool) -> tuple[dict[str, Param], list[str], bool]:
    """Parameters of ``fn`` after its first ``drop`` ones, with their hints, defaults and constraints."""
    bugs: list[str] = []
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        return {}, [f"{where} has no readable signature: {exc}"], False
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # an annotation that does not evaluate: fall back to one parameter at a time
        hints = _hints_one_by_one(fn, sig)
    params: dict[str, Param] = {}
    takes_kwargs = False
    for p in list(sig.parameters.values())[drop:]:
        if p.kind is p.VAR_KEYWORD and allow_kwargs:
            takes_kwargs = True
            continue
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            bugs.append(f"{where} takes *{p.name}; components must list their parameters")
            continue
        if p.kind is p.POSITIONAL_ONLY:
            bugs.append(f"{where} parameter {p.name!r} is positional-only")
            continue
        constraint = None
        if p.name in raw_constraints:
            try:
                constraint = alternatives(raw_constraints[p.name])
            except TypeError as exc:
                owner = where.rsplit(".", 1)[0]
                bugs.append(f"{owner}.param_constraints[{p.name!r}]: {exc}")
        # the type a YAML value is read as: the annotation, else what the constraints say, else the default's type
        hint = hints.get(p.name, hint_of(constraint) if constraint else _hint_from_default(p.default))
        params[p.name] = Param(p.name, hint, p.default, constraint)
    return params, bugs, takes_kwargs


def _hints_one_by_one(fn: Any, sig: inspect.Signature) -> dict[str, Any]:
    module = sys.modules.get(getattr(fn, "__module__", ""), None)
    env = dict(vars(module)) if module else {}
    out = {}
    for p in sig.parameters.values():
        ann = p.annotation
        if ann is inspect.Parameter.empty:
            continue
        if isinstance(ann, str):
            try:
                ann = eval(ann, env)  # noqa: S307 - the plugin's own annotation, as get_type_hints would
            except Exception:
                ann = ANY
        out[p.name] = ann
    return out


def _hint_from_default(default: Any) -> Any:
    if default is not REQUIRED and type(default) in (int, float, bool, str):
        return type(default)
    return ANY


# -- analysing hints ----------------------------------------------------------------------------------------------
def _unwrap(hint: Any) -> Any:
    while typing.get_origin(hint) is typing.Annotated:
        hint = typing.get_args(hint)[0]
    if hint is None:
        return _NoneType
    if isinstance(hint, typing.TypeVar):
        return ANY
    return hint


def _members(hint: Any) -> list[Any]:
    """The alternatives of a hint: a Union flattened, Optional included; a single type is one member."""
    hint = _unwrap(hint)
    origin = typing.get_origin(hint)
    if origin is Union or (hasattr(types, "UnionType") and isinstance(hint, types.UnionType)):
        out: list[Any] = []
        for arg in typing.get_args(hint):
            out.extend(_members(arg))
        return out
    return [hint]


def _is_any(m: Any) -> bool:
    return m is ANY or m is object


def _literal_values(m: Any) -> tuple | None:
    return typing.get_args(m) if typing.get_origin(m) is Literal else None


def _seq_origin(m: Any) -> Any:
    origin = typing.get_origin(m) or m
    return origin if isinstance(origin, type) and origin in _SEQ_ORIGINS else None


def _map_origin(m: Any) -> Any:
    origin = typing.get_origin(m) or m
    return origin if isinstance(origin, type) and origin in _MAP_ORIGINS else None


def _fmt_literal(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(v)


def describe(hint: Any, constraint: tuple | None = None) -> str:
    """The type in words for messages: ``int >= 1 or null``, ``one of 'a', 'b'``, ``list of str``."""
    parts: list[str] = []
    literals: list[Any] = []
    nullable = False
    for m in _members(hint):
        if _is_any(m):
            return "any value"
        lit = _literal_values(m)
        if m is _NoneType:
            nullable = True
        elif lit is not None:
            literals.extend(v for v in lit if v is not None)
            nullable = nullable or None in lit
        elif m in (int, float):
            bounds = _bounds(constraint, m)
            parts.append(f"{m.__name__} {bounds}" if bounds else m.__name__)
        elif m in (bool, str):
            parts.append(m.__name__)
        elif _seq_origin(m) is not None:
            args = typing.get_args(m)
            if _seq_origin(m) is tuple and args and args[-1] is not Ellipsis:
                parts.append(f"list of {len(args)} items ({', '.join(describe(a) for a in args)})")
            else:
                parts.append(f"list of {describe(args[0])}" if args else "list")
        elif _map_origin(m) is not None:
            args = typing.get_args(m)
            parts.append(f"mapping of {describe(args[0])} to {describe(args[1])}" if len(args) == 2 else "mapping")
        else:
            parts.append(getattr(m, "__name__", str(m)))
    if literals:
        parts.insert(0, "one of " + ", ".join(_fmt_literal(v) for v in literals)
                     if len(literals) > 1 else _fmt_literal(literals[0]))
    if nullable:
        parts.append("null")
    return " or ".join(parts) if parts else "null"


# -- typing values ------------------------------------------------------------------------------------------------
def _read_scalar(node: ScalarNode, members: list[Any]) -> Any:
    """The scalar read as the first member it fits, or ``_NO``."""
    text = node.value
    if not is_plain(node):
        for m in members:
            lit = _literal_values(m)
            if m is str or (lit is not None and text in [v for v in lit if isinstance(v, str)]):
                return text
        return _NO
    if text in NULL_WORDS and any(m is _NoneType or None in (_literal_values(m) or ()) for m in members):
        return None
    if bool in members and (text in _TRUE or text in _FALSE):
        return text in _TRUE
    if int in members and (v := _read_int(text)) is not _NO:
        return v
    if float in members and (v := _read_float(text)) is not _NO:
        return v
    for m in members:
        for lit in _literal_values(m) or ():
            if _literal_matches(text, lit):
                return lit
    if str in members and text not in NULL_WORDS:
        return text
    return _NO


def _literal_matches(text: str, lit: Any) -> bool:
    if lit is None:
        return text in NULL_WORDS
    if isinstance(lit, bool):
        return text in (_TRUE if lit else _FALSE)
    if isinstance(lit, int):
        return _read_int(text) == lit
    if isinstance(lit, float):
        return _read_float(text) == lit
    return isinstance(lit, str) and text == lit


def natural(node: Node, depth: int = 0) -> Any:
    """A value with no type to read it against: YAML 1.2 core rules (``yes`` stays a string, ``1e3`` is a float).

    Lists become tuples and mappings dicts.
    """
    if depth > _MAX_DEPTH:
        return None
    if isinstance(node, SequenceNode):
        return tuple(natural(v, depth + 1) for v in node.value)
    if isinstance(node, MappingNode):
        return {k: natural(v, depth + 1) for k, _, v in mapping_items(node)}
    text = node.value
    if not is_plain(node):
        return text
    if text in NULL_WORDS:
        return None
    if text in _TRUE_12 or text in _FALSE_12:
        return text in _TRUE_12
    for reader in (_read_int, _read_float):
        v = reader(text)
        if v is not _NO:
            return v
    return text


def coerce(node: Node, hint: Any, path: str, problems: Problems, constraint: Any = None,
           depth: int = 0) -> Any:
    """Type ``node`` against ``hint``; on a mismatch record ``expected TYPE, got VALUE`` at ``node`` and return
    :data:`INVALID`.

    Lists are returned as tuples, mappings as dicts; :func:`thaw` turns them into the annotated containers.
    """
    constraint = alternatives(constraint) if constraint is not None and not isinstance(constraint, tuple) \
        else constraint
    members = _members(hint)
    if any(_is_any(m) for m in members) or depth > _MAX_DEPTH:
        return natural(node)
    if isinstance(node, ScalarNode):
        value = _read_scalar(node, members)
        if value is _NO:
            got = describe_node(node) + (_hint(node, members) or
                                         (_advice(constraint, natural(node)) if is_plain(node) else ""))
            problems.add(node, path, f"expected {describe(hint, constraint)}, got {got}")
            return INVALID
        if not _satisfies(constraint, value):
            problems.add(node, path, f"expected {describe(hint, constraint)}, got {value!r}"
                                     f"{_advice(constraint, value)}")
            return INVALID
        return value
    if isinstance(node, SequenceNode):
        seq = next((m for m in members if _seq_origin(m) is not None), None)
        if seq is None:
            problems.add(node, path, f"expected {describe(hint, constraint)}, got a list")
            return INVALID
        return _coerce_sequence(node, seq, path, problems, depth)
    mapping = next((m for m in members if _map_origin(m) is not None), None)
    if mapping is None:
        problems.add(node, path, f"expected {describe(hint, constraint)}, got a mapping")
        return INVALID
    args = typing.get_args(mapping)
    value_hint = args[1] if len(args) == 2 else ANY
    out: dict[str, Any] = {}
    bad = False
    for key, _, value in mapping_items(node):
        v = coerce(value, value_hint, join_path(path, key), problems, None, depth + 1)
        bad = bad or v is INVALID
        out[key] = v
    return INVALID if bad else out


def _coerce_sequence(node: SequenceNode, seq: Any, path: str, problems: Problems, depth: int) -> Any:
    args = typing.get_args(seq)
    items = node.value
    if _seq_origin(seq) is tuple and args and args[-1] is not Ellipsis:
        if len(items) != len(args):
            n = len(items)
            problems.add(node, path, f"expected {describe(seq)}, got a list of {n} item{'s' if n != 1 else ''}")
            return INVALID
        hints = list(args)
    else:
        hints = [args[0] if args else ANY] * len(items)
    out = [coerce(item, h, join_path(path, i), problems, None, depth + 1) for i, (item, h) in
           enumerate(zip(items, hints))]
    return INVALID if any(v is INVALID for v in out) else tuple(out)


def _advice(constraint: Any, value: Any) -> str:
    """The advice a declaration gives for a rejected value, as ``fit`` gives it (``sg: 1``: use true/false;
    ``x_max: .inf``: infinity is not allowed; ``vector_size: 4.0``: no decimal point), or ``""``."""
    for alt in constraint or ():
        advise = getattr(alt, "advice", None)
        if advise is not None and not isinstance(value, str):
            try:
                text = advise(value)
            except Exception:  # a plugin's constraint: the advice is a nicety, never a new error
                text = ""
            if text:
                return text
    return ""


def _hint(node: ScalarNode, members: list[Any]) -> str:
    """A suggestion appended to a type error: a near-miss of a choice, or quotes that made a number a string."""
    choices = [v for m in members for v in (_literal_values(m) or ()) if isinstance(v, str)]
    if choices and is_plain(node):
        hint = did_you_mean(node.value, choices)
        if hint:
            return "." + hint
    if not is_plain(node):
        unquoted = ScalarNode(node.tag, node.value, node.start_mark, node.end_mark)
        if _read_scalar(unquoted, members) is not _NO:
            return " (remove the quotes)"
    elif node.value in NULL_WORDS and str in members:
        return " (quote it to mean the text)"
    return ""


# -- thawing and plain data ---------------------------------------------------------------------------------------
def thaw(value: Any, hint: Any) -> Any:
    """The frozen value as the container its annotation names: tuple stays tuple for ``tuple[...]``, becomes a
    list otherwise (``list``, ``Sequence``, unannotated); mappings become fresh dicts."""
    if isinstance(value, tuple):
        members = _members(hint)
        seq = next((m for m in members if _seq_origin(m) is not None), None)
        args = typing.get_args(seq) if seq is not None else ()
        if seq is not None and _seq_origin(seq) is tuple and args and args[-1] is not Ellipsis:
            return tuple(thaw(v, a) for v, a in zip(value, args))
        item_hint = args[0] if args else ANY
        if seq is not None and _seq_origin(seq) in (tuple, frozenset, set):
            return _seq_origin(seq)(thaw(v, item_hint) for v in value)
        return [thaw(v, item_hint) for v in value]
    if isinstance(value, cabc.Mapping):
        members = _members(hint)
        mapping = next((m for m in members if _map_origin(m) is not None), None)
        args = typing.get_args(mapping) if mapping is not None else ()
        value_hint = args[1] if len(args) == 2 else ANY
        return {k: thaw(v, value_hint) for k, v in value.items()}
    return value


def plain_data(value: Any) -> Any:
    """JSON/YAML-able copy: tuples -> lists, mappings -> dicts, paths -> str."""
    if isinstance(value, (tuple, list)):
        return [plain_data(v) for v in value]
    if isinstance(value, cabc.Mapping):
        return {str(k): plain_data(v) for k, v in value.items()}
    if hasattr(value, "__fspath__"):
        return str(value)
    return value
