"""The ``encode:`` key of a tokenizer stage: after the tokenizer is fitted, the run writes the corpus's token ids
with it, through :func:`tokembed.encode.encode_corpus` (the writer of ``tokembed encode``).

```yaml
tokenizers:
  bpe: {type: bpe, vocab_size: 16000, byte_level: true, encode: true}          # runs/x/bpe.encoded/
  gpt: {preset: gpt2-bpe, encode: {format: nanogpt, out: ../data/gpt}}         # relative to the recipe file
```
Each option is declared once (:data:`ENCODE_OPTIONS`, :mod:`tokembed.params` constraints); the rules between
them and the tokenizer's planned vocabulary are :func:`tokembed.encode.options_problem`'s. Private to
:mod:`tokembed.recipe`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode

from ..encode import options_problem
from ..encoded import ENCODE_FORMATS
from ..params import Interval, Options, PathLike, hint_of
from .context import Context
from .nodes import Problems, describe_node, did_you_mean, join_path, mapping_items, path_base
from .params import INVALID, coerce
from .specs import EncodeSpec

__all__ = ["ENCODE_OPTIONS", "check_encode"]

#: The keys of ``encode:`` and what each must be.
ENCODE_OPTIONS: dict[str, Any] = {
    "format": Options(*ENCODE_FORMATS),
    "out": [PathLike(), None],
    "eot_id": [Interval(int, 0, None), None],
}


def check_encode(ctx: Context, node: Node, path: str, plan_vocab: int | None) -> EncodeSpec | None:
    """``encode: true`` (the defaults), ``encode: false`` / ``null`` (none) or ``encode: {format:, out:, eot_id:}``
    as an :class:`EncodeSpec`; None when there is none or after recording the problems. ``plan_vocab``: the
    largest vocabulary the tokenizer's parameters allow (:meth:`tokembed.Tokenizer.plan`), None when unknown."""
    problems = ctx.problems
    if isinstance(node, ScalarNode):
        value = coerce(node, bool | None, path, problems)
        return EncodeSpec(location=problems.where(node)) if value is True else None
    if not isinstance(node, MappingNode):
        problems.add(node, path, f"expected true or a mapping {{format: {' | '.join(ENCODE_FORMATS)}, out: DIR, "
                                 f"eot_id: ID}}, got {describe_node(node)}")
        return None
    values: dict[str, Any] = {}
    nodes: dict[str, Node] = {}
    ok = True
    for key, knode, vnode in mapping_items(node):
        if key not in ENCODE_OPTIONS:
            problems.add(knode, join_path(path, key), f"unknown encode key.{did_you_mean(key, list(ENCODE_OPTIONS))} "
                                                      f"Allowed: {', '.join(ENCODE_OPTIONS)}")
            ok = False
            continue
        constraint = ENCODE_OPTIONS[key]
        value = coerce(vnode, hint_of(constraint), join_path(path, key), problems, constraint)
        if value is INVALID:
            ok = False
        elif value is not None:
            values[key], nodes[key] = value, vnode
    if not ok:
        return None
    fmt, eot_id = values.get("format", "tokembed"), values.get("eot_id")
    problem = options_problem(fmt, eot_id, plan_vocab)
    if problem is not None:
        where, why = problem
        problems.add(nodes.get(where, node), join_path(path, where), why)
        return None
    out = None
    if "out" in values:
        given = Path(values["out"]).expanduser()
        base = path_base(nodes["out"], ctx.base_dir)
        out = Path(os.path.abspath(given if given.is_absolute() else base / given))  # ".." resolved: one name each
        first = ctx.encode_outs.setdefault(out, path)
        if first != path:
            problems.add(nodes["out"], join_path(path, "out"), f"{values['out']}: {first} writes this folder too, "
                                                               "and each encode replaces it whole: give each its own "
                                                               "out:")
            return None
    return EncodeSpec(fmt, out, eot_id, location=problems.where(node))


def check_encode_outside_run(problems: Problems, nodes: dict, tokenizers: tuple[Any, ...], run_dir: Path) -> None:
    """A problem for each ``encode: {out: DIR}`` at or inside the run folder ``run_dir``: the run writes that folder
    whole (and its lock would refuse the encode), so ``out:`` must name a folder outside it, or be left out (the
    run folder's ``<label>.encoded``). ``nodes`` is the checker's ``(section, label) -> {key: node}``."""
    run_dir = Path(os.path.abspath(run_dir))
    for spec in tokenizers:
        encode = getattr(spec, "encode", None)
        out = encode.out if encode is not None else None
        if out is not None and (out == run_dir or run_dir in out.parents):
            at = nodes.get(("tokenizers", spec.label), {})
            problems.add(at.get("encode") or at.get("<stage>"), f"tokenizers.{spec.label}.encode.out",
                         f"{out} is inside the run folder {run_dir}, which the run writes whole: name a folder "
                         f"outside it, or leave out: unset to write {spec.label}.encoded in the run folder")
