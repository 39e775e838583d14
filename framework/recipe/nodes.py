"""The YAML layer of recipes: a node tree with line and column marks, problems located on it, ``--set`` overrides.

A recipe is never loaded into plain Python values. It is *composed* (``yaml.compose``) into PyYAML's node tree,
in which every scalar keeps its raw text, its quoting style and its 1-based line and column. The schema layer
(:mod:`tokembed.recipe.params`) later reads each scalar against the type of the parameter it feeds, so that
``lang: no`` stays ``"no"`` for a ``str`` parameter while ``lowercase: no`` is ``False`` for a ``bool`` one.

Private to :mod:`tokembed.recipe`; nothing here is public API.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any, Iterable

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..errors import Problem, RecipeError

__all__ = [
    "Problems",
    "compose_text",
    "check_tree",
    "mapping_items",
    "apply_override",
    "python_to_node",
    "did_you_mean",
    "is_plain",
    "NULL_WORDS",
    "bad_label",
]

#: Stage labels name output files (``<label>.tokembed.json``): ASCII letters, digits, ``_`` and ``-``, at most 100.
_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}")


def bad_label(label: str) -> str | None:
    """Why ``label`` cannot name a stage (it names output files), or None if it can."""
    if _LABEL.fullmatch(label):
        return None
    if len(label) > 100 and _LABEL.fullmatch(label[:100]):
        return f"a label is at most 100 characters (it names output files), got {len(label)}"
    return ("labels are ASCII letters, digits, '_' and '-', starting with a letter or digit (they name output "
            "files)")

_TAG = "tag:yaml.org,2002:"
STR_TAG, NULL_TAG, BOOL_TAG = _TAG + "str", _TAG + "null", _TAG + "bool"
INT_TAG, FLOAT_TAG = _TAG + "int", _TAG + "float"
SEQ_TAG, MAP_TAG, MERGE_TAG = _TAG + "seq", _TAG + "map", _TAG + "merge"
#: Tags a recipe may write explicitly (``!!str 8000``); the others (``!!binary``, ``!python/...``) are errors.
_SCALAR_TAGS = {STR_TAG, NULL_TAG, BOOL_TAG, INT_TAG, FLOAT_TAG, _TAG + "timestamp", MERGE_TAG}

#: Plain scalars that mean null (YAML 1.1 and 1.2 agree on these).
NULL_WORDS = frozenset({"", "~", "null", "Null", "NULL"})

# Attributes this module adds to PyYAML nodes.
_ORIGIN = "tokembed_origin"  # "--set PATH=VALUE" for nodes made from an override
_NOTE = "tokembed_note"  # "from preset 'x'" for nodes made from a preset's parameters
_EXPLICIT = "tokembed_explicit_tag"  # the scalar carried an explicit tag (``!!str``, ``!``)


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, remembering which scalars carried an explicit tag (only composing is used)."""

    def compose_scalar_node(self, anchor):  # noqa: D102 - PyYAML hook
        explicit = self.peek_event().tag is not None
        node = super().compose_scalar_node(anchor)
        setattr(node, _EXPLICIT, explicit)
        return node


def from_override(node: Node) -> bool:
    """Whether ``node`` was made from a ``--set PATH=VALUE`` override."""
    return getattr(node, _ORIGIN, None) is not None


def path_base(node: Node, base_dir: Path) -> Path:
    """The folder a relative path written in ``node`` is relative to: the recipe's folder (``base_dir``), or the
    current directory for a ``--set`` value. The one rule of recipe paths (docs/recipes.md)."""
    return Path.cwd() if from_override(node) else base_dir


def is_plain(node: ScalarNode) -> bool:
    """True for an unquoted scalar without an explicit ``!!str``/``!`` tag: its text is typed by the schema."""
    if node.style is not None:  # quoted, literal (|) or folded (>)
        return False
    return not (getattr(node, _EXPLICIT, False) and node.tag == STR_TAG)


# -- problems -----------------------------------------------------------------------------------------------------


class Problems:
    """Problems found in one recipe, each located at a node: ``FILE:LINE:COL: dotted.path: message``.

    Nodes built from a ``--set`` override are located as ``--set PATH=VALUE``; nodes built from a preset carry a
    note that is appended to the message. :meth:`lines` sorts file problems by position, then override problems in
    the order found.
    """

    def __init__(self, source: str):
        self.source = source
        self._items: list[tuple[tuple, Problem]] = []

    def where(self, node: Node | None) -> str:
        """``FILE:LINE:COL`` of ``node`` (1-based), ``--set ...`` for override nodes, ``FILE`` without a node."""
        if node is None:
            return self.source
        origin = getattr(node, _ORIGIN, None)
        if origin is not None:
            return origin
        mark = node.start_mark
        return f"{self.source}:{mark.line + 1}:{mark.column + 1}"

    def add(self, node: Node | None, path: str, message: str) -> None:
        """Record a problem at ``node`` for the dotted ``path`` (may be empty)."""
        note = getattr(node, _NOTE, None) if node is not None else None
        if note:
            message = f"{message} ({note})"
        n = len(self._items)
        origin = getattr(node, _ORIGIN, None) if node is not None else None
        if node is None:
            key: tuple = (0, 0, 0, n)
            problem = Problem(message, self.source, path=path)
        elif origin is not None:
            key = (2, 0, 0, n)
            problem = Problem(message, self.source, path=path, origin=origin)
        else:
            mark = node.start_mark
            key = (1, mark.line, mark.column, n)
            problem = Problem(message, self.source, mark.line + 1, mark.column + 1, path)
        self._items.append((key, problem))

    def __bool__(self) -> bool:
        return bool(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def sorted(self) -> list[Problem]:
        """The problems, duplicates dropped, file problems by position, then override problems in the order found."""
        out: list[Problem] = []
        for _, p in sorted(self._items, key=lambda item: item[0]):
            if p not in out:
                out.append(p)
        return out

    def lines(self) -> list[str]:
        """:meth:`sorted` as lines (``FILE:LINE:COL: dotted.path: message``)."""
        return [str(p) for p in self.sorted()]

    def raise_if_any(self) -> None:
        """Raise :class:`RecipeError` with every problem if there is at least one."""
        if self._items:
            raise RecipeError(self.sorted())


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """``" Did you mean 'x'?"`` for the closest of ``choices``, or ``""``."""
    close = difflib.get_close_matches(str(name), list(choices), n=1, cutoff=0.6)
    return f" Did you mean {close[0]!r}?" if close else ""


def join_path(path: str, key: str | int) -> str:
    """Append a mapping key or a sequence index to a dotted path."""
    return f"{path}.{key}" if path else str(key)


def describe_node(node: Node) -> str:
    """What a value is, for ``got ...`` in messages: ``a list``, ``a mapping``, ``null``, ``the quoted string
    '8000'`` or the plain scalar's text in quotes."""
    if isinstance(node, SequenceNode):
        return "a list" if node.value else "an empty list"
    if isinstance(node, MappingNode):
        return "a mapping" if node.value else "an empty mapping"
    if not is_plain(node):
        quoted = "" if getattr(node, _NOTE, None) else "quoted "  # preset values were not written in the recipe
        return f"the {quoted}string {node.value!r}"
    if node.value == "":
        return "null (an empty value)"
    if node.value in NULL_WORDS:
        return "null"
    return repr(node.value)


# -- composing ----------------------------------------------------------------------------------------------------
def compose_text(text: str, source: str) -> Node | None:
    """Compose ``text`` into a node tree; None for an empty document.

    Raises
    ------
    RecipeError
        With one ``FILE:LINE:COL: invalid YAML: ...`` problem on a syntax error (or a second document).
    """
    try:
        return yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        raise RecipeError([_syntax_message(exc, source)]) from None
    except yaml.YAMLError as exc:  # reader errors (control characters) carry no marks
        raise RecipeError([f"{source}: invalid YAML: {exc}"]) from None


def _syntax_message(exc: yaml.MarkedYAMLError, source: str) -> str:
    mark = exc.problem_mark or exc.context_mark
    where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark is not None else source
    problem = exc.problem or exc.context or "syntax error"
    if exc.context and exc.problem:
        cm = exc.context_mark
        at = f" at line {cm.line + 1}, column {cm.column + 1}" if cm is not None else ""
        problem += f" ({exc.context}{at})"
    return f"{where}: invalid YAML: {problem}"


def check_tree(node: Node, path: str, problems: Problems) -> None:
    """Report what no schema should have to handle: unsupported tags, recursive aliases, non-scalar or duplicate
    mapping keys and malformed merge keys (``<<``), each at its node."""
    _check(node, path, problems, set(), set())


def _check(node: Node, path: str, problems: Problems, ancestors: set[int], done: set[int]) -> None:
    if id(node) in ancestors:
        problems.add(node, path, "recursive alias: this value contains itself")
        return
    if id(node) in done:  # a shared (aliased) node is checked once
        return
    done.add(id(node))
    if isinstance(node, ScalarNode):
        if getattr(node, _EXPLICIT, False) and node.tag not in _SCALAR_TAGS:
            problems.add(node, path, f"unsupported YAML tag {node.tag!r}")
        return
    expected = SEQ_TAG if isinstance(node, SequenceNode) else MAP_TAG
    if node.tag != expected:
        problems.add(node, path, f"unsupported YAML tag {node.tag!r}")
        return
    ancestors = ancestors | {id(node)}
    if isinstance(node, SequenceNode):
        for i, item in enumerate(node.value):
            _check(item, join_path(path, i), problems, ancestors, done)
        return
    seen: dict[str, Node] = {}
    for key, value in node.value:
        if not isinstance(key, ScalarNode):
            problems.add(key, path, f"mapping keys must be plain names, got {describe_node(key)}")
            continue
        if key.tag == MERGE_TAG:
            sources = value.value if isinstance(value, SequenceNode) else [value]
            if not all(isinstance(s, MappingNode) for s in sources):
                problems.add(value, path, "a merge key (<<) needs a mapping or a list of mappings (e.g. *anchor)")
            _check(value, path, problems, ancestors, done)
            continue
        first = seen.get(key.value)
        if first is not None:
            m = first.start_mark
            problems.add(key, join_path(path, key.value),
                         f"duplicate key {key.value!r} (first at line {m.line + 1}, column {m.column + 1})")
            continue
        seen[key.value] = key
        _check(value, join_path(path, key.value), problems, ancestors, done)


def mapping_items(node: MappingNode, _active: frozenset[int] = frozenset()) -> list[tuple[str, ScalarNode, Node]]:
    """``(key text, key node, value node)`` of a mapping in order, merge keys (``<<``) expanded.

    Explicit keys win over merged ones; among several merged mappings the first wins (as YAML specifies); of
    duplicate explicit keys (reported by :func:`check_tree`) the first is kept.
    """
    if id(node) in _active:  # a recursive merge, reported by check_tree
        return []
    _active = _active | {id(node)}
    explicit = {k.value for k, _ in node.value if isinstance(k, ScalarNode) and k.tag != MERGE_TAG}
    out: list[tuple[str, ScalarNode, Node]] = []
    seen: set[str] = set()
    for key, value in node.value:
        if not isinstance(key, ScalarNode):
            continue
        if key.tag == MERGE_TAG:
            sources = value.value if isinstance(value, SequenceNode) else [value]
            for src in sources:
                if isinstance(src, MappingNode):
                    for item in mapping_items(src, _active):
                        if item[0] not in explicit and item[0] not in seen:
                            seen.add(item[0])
                            out.append(item)
        elif key.value not in seen:
            seen.add(key.value)
            out.append((key.value, key, value))
    return out


# -- nodes from Python values (preset parameters) -----------------------------------------------------------------
def python_to_node(value: Any, at: Node, note: str) -> Node:
    """A node tree for a Python value (a preset parameter), located at ``at`` and carrying ``note``.

    Strings become quoted scalars (they stay strings); numbers, booleans and None become plain scalars that the
    schema types like any recipe value.
    """
    if isinstance(value, dict):
        node: Node = MappingNode(MAP_TAG, [(python_to_node(str(k), at, note), python_to_node(v, at, note))
                                           for k, v in value.items()], at.start_mark, at.end_mark)
    elif isinstance(value, (list, tuple)):
        node = SequenceNode(SEQ_TAG, [python_to_node(v, at, note) for v in value], at.start_mark, at.end_mark)
    elif value is None:
        node = ScalarNode(NULL_TAG, "null", at.start_mark, at.end_mark)
    elif isinstance(value, bool):
        node = ScalarNode(BOOL_TAG, "true" if value else "false", at.start_mark, at.end_mark)
    elif isinstance(value, int):
        node = ScalarNode(INT_TAG, str(value), at.start_mark, at.end_mark)
    elif isinstance(value, float):
        text = ".nan" if value != value else (".inf" if value == float("inf") else
                                             "-.inf" if value == float("-inf") else repr(value))
        node = ScalarNode(FLOAT_TAG, text, at.start_mark, at.end_mark)
    else:
        node = ScalarNode(STR_TAG, str(value), at.start_mark, at.end_mark, style="'")
    setattr(node, _NOTE, note)
    if getattr(at, _ORIGIN, None) is not None:
        setattr(node, _ORIGIN, getattr(at, _ORIGIN))
    return node


def _mark_origin(node: Node, origin: str, seen: set[int] | None = None) -> None:
    seen = set() if seen is None else seen
    if id(node) in seen:
        return
    seen.add(id(node))
    setattr(node, _ORIGIN, origin)
    if isinstance(node, SequenceNode):
        for item in node.value:
            _mark_origin(item, origin, seen)
    elif isinstance(node, MappingNode):
        for k, v in node.value:
            _mark_origin(k, origin, seen)
            _mark_origin(v, origin, seen)


# -- --set overrides ----------------------------------------------------------------------------------------------
_INDEX = re.compile(r"\[(\d+)\]")


def _parse_value(text: str, origin: str) -> Node:
    """The override's value as a YAML node; text that is not valid YAML (``*.txt``) is taken as plain text."""
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError:
        node = None
        fallback = True
    else:
        fallback = False
    if node is None:
        mark = yaml.Mark("<--set>", 0, 0, 0, None, None)
        node = ScalarNode(STR_TAG if fallback else NULL_TAG, text if fallback else "", mark, mark)
        setattr(node, _EXPLICIT, False)
    _mark_origin(node, origin)
    return node


def apply_override(root: MappingNode, arg: str, problems: Problems, origin: str | None = None) -> None:
    """Apply one ``--set dotted.path=value`` to the node tree, or record why it cannot be applied (located at
    ``origin``, by default ``--set ARG``: the command-line option that set it).

    The value is composed as YAML (a scalar, or a flow list/mapping such as ``{type: char}``) and typed later by
    the schema like any recipe value. The last path element is created when its parent exists; sequence items are
    addressed by index (``steps.1`` or ``steps[1]``) and one past the end appends. Only the value at the path
    changes: mappings and lists along it are copied first, so other aliases of an anchored node keep their value.
    """
    origin = origin or f"--set {arg}"
    anchor = _parse_value("", origin)  # a located node for problems about the argument itself
    path_text, sep, value_text = arg.partition("=")
    path_text = _INDEX.sub(r".\1", path_text.strip())
    parts = path_text.split(".")
    if not sep or not path_text or any(not p.strip() for p in parts):
        problems.add(anchor, "", "expected PATH=VALUE, e.g. --set tokenizers.char.vocab_size=100")
        return
    parts = [p.strip() for p in parts]
    value = _parse_value(value_text, origin)
    check_tree(value, path_text, problems)
    node: Node = root
    for depth, part in enumerate(parts):
        here = ".".join(parts[: depth + 1])
        last = depth == len(parts) - 1
        if isinstance(node, MappingNode):
            items = mapping_items(node)
            index = next((i for i, (k, _) in enumerate(node.value)
                          if isinstance(k, ScalarNode) and k.tag != MERGE_TAG and k.value == part), None)
            if last:
                if index is not None:
                    node.value[index] = (node.value[index][0], value)
                else:
                    key = ScalarNode(STR_TAG, part, anchor.start_mark, anchor.end_mark)
                    setattr(key, _ORIGIN, origin)
                    node.value.append((key, value))
                return
            found = next(((k, v) for name, k, v in items if name == part), None)
            if found is None:
                keys = [k for k, _, _ in items]
                hint = did_you_mean(part, keys)
                parent = ".".join(parts[:depth])
                avail = f" ({parent or 'the recipe'} has: {', '.join(keys)})" if keys else f" ({parent} is empty)"
                add = ""
                if parent in ("tokenizers", "embedders", "compare.tokenizers"):
                    add = f" To add a stage, set it whole: --set '{here}={{type: ...}}'"
                elif parent == "compare.corpora":
                    add = f" To add a corpus, set it whole: --set '{here}={{path: ...}}'"
                elif here == "engine":
                    add = " To add a section, set it whole: --set 'engine={...}' (or give --engine dask)"
                problems.add(anchor, here, f"not in the recipe{avail}.{hint}{add}")
                return
            child = _own_copy(found[1])
            if index is not None:
                node.value[index] = (node.value[index][0], child)
            else:  # reached through a merge key (<<): becomes an explicit key of this mapping
                node.value.append((found[0], child))
            node = child
        elif isinstance(node, SequenceNode):
            if not part.isdigit():
                problems.add(anchor, here, f"{'.'.join(parts[:depth])} is a list: use an index (0, 1, ...)")
                return
            i = int(part)
            if last and i == len(node.value):
                node.value.append(value)
                return
            if i >= len(node.value):
                problems.add(anchor, here, f"index {i} is out of range: the list has {len(node.value)} items")
                return
            if last:
                node.value[i] = value
                return
            node.value[i] = _own_copy(node.value[i])
            node = node.value[i]
        else:
            problems.add(anchor, here, f"{'.'.join(parts[:depth])} is a single value, not a mapping or list")
            return


def _own_copy(node: Node) -> Node:
    """A shallow copy of a mapping or list node, so that changing it leaves other aliases of the node alone."""
    if isinstance(node, MappingNode):
        copy: Node = MappingNode(node.tag, list(node.value), node.start_mark, node.end_mark, node.flow_style)
    elif isinstance(node, SequenceNode):
        copy = SequenceNode(node.tag, list(node.value), node.start_mark, node.end_mark, node.flow_style)
    else:
        return node
    for attr in (_ORIGIN, _NOTE):
        if hasattr(node, attr):
            setattr(copy, attr, getattr(node, attr))
    return copy
