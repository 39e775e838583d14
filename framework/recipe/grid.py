"""The ``compare.grid:`` part of a compare recipe: embedders to train over every tokenizer, and the evaluation sets.

```yaml
corpus: {dataset: wv_corpus}            # what the tokenizers and every embedder train on
compare:
  tokenizers: {words: {type: word}, bpe8k: {preset: textbook-bpe}}
  grid:
    embedders:
      glove: {type: glove, vector_size: 100, seed: 0, workers: 1}
    sets: [wordsim353, simlex999, google_analogy]
    compose: mean                        # mean | sum | fasttext
    save_vectors: true
```

Each embedder is a stage like those of ``embedders:`` without ``input:`` (every tokenizer of the comparison is its
input in turn) and without ``batch:``/``nearest:``. Private to :mod:`tokembed.recipe`.
"""

from __future__ import annotations

from typing import Any, Literal

from yaml.nodes import MappingNode, Node

from ..pieces import COMPOSE_MODES
from .context import Context
from .evaluate import check_sets
from .nodes import bad_label, describe_node, did_you_mean, join_path, mapping_items
from .params import INVALID, coerce
from .compare_specs import GridSpec
from .specs import ComponentSpec

__all__ = ["GRID_KEYS", "check_grid"]

#: Keys of ``compare.grid``.
GRID_KEYS = ("embedders", "sets", "compose", "save_vectors")
_NOT_IN_GRID = {"input": "every tokenizer of the comparison is the input of every grid embedder",
                "batch": "the grid embeds no batch", "nearest": "the grid prints no neighbours"}


def check_grid(ctx: Context, node: Node, path: str = "compare.grid") -> GridSpec | None:
    """``compare.grid`` as a :class:`GridSpec`, or None after recording its problems."""
    problems = ctx.problems
    if not isinstance(node, MappingNode):
        problems.add(node, path, "expected a mapping {embedders: {LABEL: {type: ...}}, sets: [...]}, got "
                                 f"{describe_node(node)}")
        return None
    before = len(problems)
    fields: dict[str, tuple[Node, Node]] = {}
    for key, knode, vnode in mapping_items(node):
        if key in GRID_KEYS:
            fields[key] = (knode, vnode)
        else:
            problems.add(knode, join_path(path, key), f"unknown key.{did_you_mean(key, GRID_KEYS)} "
                                                      f"Allowed: {', '.join(GRID_KEYS)}")
    embedders = _embedders(ctx, fields.get("embedders", (None, None))[1], node, join_path(path, "embedders"))
    sets = None
    if "sets" in fields:
        sets = check_sets(fields["sets"][1], join_path(path, "sets"), problems)
    else:
        problems.add(node, join_path(path, "sets"), "missing: the evaluation sets, e.g. [wordsim353, simlex999]")
    options: dict[str, Any] = {}
    if "compose" in fields:
        value = coerce(fields["compose"][1], Literal[COMPOSE_MODES], join_path(path, "compose"), problems)
        if value is not INVALID:
            options["compose"] = value
    if "save_vectors" in fields:
        value = coerce(fields["save_vectors"][1], bool, join_path(path, "save_vectors"), problems)
        if value is not INVALID:
            options["save_vectors"] = value
    if len(problems) > before or embedders is None or sets is None:
        return None
    return GridSpec(embedders, sets, location=problems.where(node), **options)


def _embedders(ctx: Context, node: Node | None, parent: Node, path: str) -> tuple[ComponentSpec, ...] | None:
    problems = ctx.problems
    if node is None or not isinstance(node, MappingNode) or not node.value:
        what = "missing" if node is None else f"expected a non-empty mapping of label -> stage, got {describe_node(node)}"
        problems.add(node if node is not None else parent, path,
                     f"{what}: the embedders to train over every tokenizer, label -> {{type: ...}}")
        return None
    specs: list[ComponentSpec] = []
    ok = True
    for label, knode, vnode in mapping_items(node):
        lpath = join_path(path, label)
        why = bad_label(label)
        if why:
            problems.add(knode, lpath, why)
            ok = False
            continue
        if isinstance(vnode, MappingNode):
            for key, kn, _ in mapping_items(vnode):
                if key in _NOT_IN_GRID:
                    problems.add(kn, join_path(lpath, key), f"not used in a grid: {_NOT_IN_GRID[key]}")
                    ok = False
        before = len(problems)
        spec = ctx.stage("embedder", path, label, vnode, lpath)
        if spec is None or len(problems) > before:
            ok = False
        elif not getattr(spec.cls, "fits_on_tokens", True):
            problems.add(vnode, lpath, f"{spec.type} learns nothing from token sequences (its table comes from its "
                                       "parameters alone), so it has no word vectors to score; a grid trains "
                                       "embedders such as glove, fasttext or word2vec")
            ok = False
        else:
            specs.append(spec)
    return tuple(specs) if ok else None
