"""The checks of a recipe: sections, stages, presets and parameters, then the cross-stage checks, into spec objects.

Every problem is recorded (never raised) so that :func:`tokembed.recipe.load_recipe` reports all of them at once.
Private to :mod:`tokembed.recipe`.
"""

from __future__ import annotations

import os
import types
from pathlib import Path
from typing import Any, Literal

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..errors import TokembedError, UnknownComponentError
from ..components import describe_limit
from ..corpus import UNITS
from .compare import check_compare, trained_labels
from .context import Context
from .compare_specs import LoadSpec
from .corpus import check_corpus, check_encoded_stages
from .encode import check_encode, check_encode_outside_run
from .load import check_load
from .engine import check_engine
from .evaluate import check_evaluate
from .nodes import (
    NULL_WORDS,
    Problems,
    bad_label,
    describe_node,
    did_you_mean,
    is_plain,
    join_path,
    mapping_items,
    path_base,
    python_to_node,
)
from ..params import Interval
from .params import ANY, INVALID, REQUIRED, class_params, coerce, describe, thaw
from .specs import SECTIONS, BatchSpec, ComponentSpec, PipelineSpec, Recipe

__all__ = ["TOP_KEYS", "RESERVED", "BATCH_FIELDS", "check_recipe"]

#: Top-level keys of a recipe. A recipe with ``compare:`` has none of the three component sections.
TOP_KEYS = ("corpus", "tokenizers", "vectorizers", "embedders", "evaluate", "compare", "engine", "output")
#: Stage keys that are not component parameters, per kind.
RESERVED: dict[str, tuple[str, ...]] = {
    "tokenizer": ("type", "preset", "export", "encode"),
    "vectorizer": ("type", "preset"),
    "embedder": ("type", "preset", "input", "batch", "nearest"),
}
_ALL_RESERVED = ("type", "preset", "input", "batch", "nearest", "export", "encode")
#: ``batch:`` keys of an embedder: type and range.
BATCH_FIELDS: dict[str, tuple[Any, Any]] = {
    "lines": (int, Interval(int, 1, None)),
    "padding": (Literal["longest", "max_length", False], None),
    "truncation": (bool, None),
    "max_length": (int | None, Interval(int, 1, None)),
}


def _a(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def _is_null(node: Node | None) -> bool:
    return isinstance(node, ScalarNode) and is_plain(node) and node.value in NULL_WORDS


def _is_empty(node: Node) -> bool:
    return _is_null(node) or (isinstance(node, (MappingNode, SequenceNode)) and not node.value)


class _Checker:
    def __init__(self, source: str, base_dir: Path, registry: Any, problems: Problems):
        self.source = source
        self.base_dir = base_dir
        self.registry = registry
        self.problems = problems
        self.ctx = Context(problems, registry, base_dir, stage=self.stage)
        self.valid: set[tuple[str, str]] = set()  # (section, label) of stages without problems
        self.nodes: dict[tuple[str, str], dict[str, Node]] = {}  # (section, label) -> field/param -> value node
        self.encoded = False  # corpus: {encoded: DIR}: the stages read the folder's token ids, not text
        self.encoded_folder = Path()
        self._encoded_plan: tuple[Any, str, type | None] | None = None

    # -- helpers ------------------------------------------------------------------------------------------------
    def where(self, node: Node) -> str:
        return self.problems.where(node)

    def _mapping(self, node: Node, path: str, what: str) -> list[tuple[str, ScalarNode, Node]] | None:
        if isinstance(node, MappingNode):
            return mapping_items(node)
        self.problems.add(node, path, f"expected {what}, got {describe_node(node)}")
        return None

    def _unknown_key(self, key: str, knode: Node, path: str, allowed: list[str], what: str) -> None:
        self.problems.add(knode, join_path(path, key),
                          f"unknown {what}.{did_you_mean(key, allowed)} Allowed: {', '.join(allowed)}")

    # -- the whole recipe ---------------------------------------------------------------------------------------
    def recipe(self, root: Node, path: Path | None, overrides: tuple[str, ...], out: Any) -> Recipe | None:
        if not isinstance(root, MappingNode):
            self.problems.add(root, "", "expected a mapping at the top of the recipe (corpus:, tokenizers:, ...), "
                                        f"got {describe_node(root)}")
            return None
        top: dict[str, tuple[ScalarNode, Node]] = {}
        for key, knode, vnode in mapping_items(root):
            if key in TOP_KEYS:
                top[key] = (knode, vnode)
            else:
                self.problems.add(knode, key, f"unknown section.{did_you_mean(key, TOP_KEYS)} "
                                              f"Sections: {', '.join(TOP_KEYS)}")
        comparing = "compare" in top
        compare = check_compare(self.ctx, top["compare"][1]) if comparing else None
        if comparing:
            for key in SECTIONS:
                if key in top and not _is_empty(top[key][1]):
                    self.problems.add(top[key][0], key, "a compare recipe has no tokenizers:, vectorizers: or "
                                                        "embedders: (tokembed compare reads compare: only); list the "
                                                        "tokenizers to train under compare.tokenizers")
        evaluate = check_evaluate(self.ctx, top["evaluate"][1]) if "evaluate" in top else None
        engine = None
        if "engine" in top and comparing:
            self.problems.add(top["engine"][0], "engine", "tokembed compare counts on this machine: engine: is read "
                                                          "by tokembed run only")
        elif "engine" in top:
            engine = check_engine(self.ctx, top["engine"][1])
        evaluate_only = "evaluate" in top and not any(k in top and not _is_empty(top[k][1]) for k in SECTIONS)
        corpus = None
        if "corpus" in top:
            corpus = check_corpus(self.ctx, top["corpus"][1], limits=comparing, encoded=not comparing)
        elif not comparing and not evaluate_only:
            self.problems.add(root, "corpus", "missing: a recipe reads {builtin: moby-dick}, {path: FILE_OR_GLOB} "
                                              "or {dataset: NAME}")
        elif comparing and _has_grid(top["compare"][1]):
            self.problems.add(root, "corpus", "missing: the grid's embedders train on the recipe's corpus: add "
                                              "{builtin: moby-dick}, {path: FILE_OR_GLOB} or {dataset: NAME}")
        elif comparing and trained_labels(top["compare"][1]):
            first, *more = trained_labels(top["compare"][1])
            who = f"compare.tokenizers.{first} and {len(more)} more are" if more else \
                f"compare.tokenizers.{first} is"
            self.problems.add(root, "corpus", f"missing: {who} trained on the recipe's corpus: add "
                                              "{builtin: moby-dick}, {path: FILE_OR_GLOB} or {dataset: NAME}")
        self.encoded = corpus is not None and corpus.source == "encoded"
        if self.encoded:
            self.encoded_folder = corpus.encoded
        tokenizers = self.labelled("tokenizers", top["tokenizers"][1]) if "tokenizers" in top else ()
        embedders = self.labelled("embedders", top["embedders"][1]) if "embedders" in top else ()
        pipeline = self.pipeline(top["vectorizers"][1], {s.label for s in (*tokenizers, *embedders)}) \
            if "vectorizers" in top else None
        output = None
        if "output" in top:
            value = coerce(top["output"][1], str | None, "output", self.problems)
            if isinstance(value, str) and not value.strip():
                self.problems.add(top["output"][1], "output", "empty: name the run folder, e.g. runs/mine")
                value = None
            output = Path(value).expanduser() if isinstance(value, str) else None
        if out is not None:
            output = Path(os.fspath(out)).expanduser()
        if not comparing and "evaluate" not in top and not any(k in top and not _is_empty(top[k][1]) for k in SECTIONS):
            self.problems.add(root, "", "nothing to do: add tokenizers:, vectorizers:, embedders: or evaluate:")
        if pipeline is not None and pipeline.save_matrix == "partitions" and engine is None:
            where = next((v for k, _, v in mapping_items(top["vectorizers"][1]) if k == "save_matrix"),
                         top["vectorizers"][1])
            self.problems.add(where,
                              "vectorizers.save_matrix", "partitions: the matrix is written partition by partition "
                              "by the engine's workers: add an engine: section (engine: {type: dask}, or "
                              "{type: local, partition_mb: 64}) or use save_matrix: true")
        self.cross_checks(tokenizers, pipeline, embedders, encoded=self.encoded)
        if self.encoded:
            pipe = top.get("vectorizers", (None, None))[1]
            check_encoded_stages(self.ctx, corpus, tokenizers, embedders, self.nodes, engine=top.get("engine"),
                                 unit=next((v for k, _, v in mapping_items(pipe) if k == "unit"), None)
                                 if isinstance(pipe, MappingNode) and pipeline is not None else None)
        if evaluate is not None and embedders and "evaluate" in top:
            self.vector_labels(top["evaluate"][1], {s.label for s in embedders})
        run_dir = output or (Path("runs") / Path(path).stem if path is not None else None)  # as run_recipe names it
        if run_dir is not None:
            check_encode_outside_run(self.problems, self.nodes, tokenizers, run_dir.absolute())
        if self.problems or (corpus is None and compare is None and not evaluate_only):
            return None
        return Recipe(path, corpus, tokenizers, pipeline, embedders, output, overrides, self.registry, compare,
                      evaluate, kept=self.ctx.kept, engine=engine)

    def vector_labels(self, node: Node, embedders: set[str]) -> None:
        """An ``evaluate.vectors`` label that is also an embedder's would put two sources under one name in
        ``evaluation.json`` (the file's scores replaced the embedder's)."""
        if not isinstance(node, MappingNode):
            return
        for key, _, vnode in mapping_items(node):
            if key == "vectors" and isinstance(vnode, MappingNode):
                for label, knode, _ in mapping_items(vnode):
                    if label in embedders:
                        self.problems.add(knode, f"evaluate.vectors.{label}",
                                          f"{label!r} is also an embedder of this recipe, whose vectors are scored "
                                          "under that name: give the file another label")

    # -- tokenizers: and embedders: -----------------------------------------------------------------------------
    def labelled(self, section: str, node: Node) -> tuple[ComponentSpec, ...]:
        if _is_null(node):
            return ()
        items = self._mapping(node, section, f"a mapping of label -> stage ({section}: {{mine: {{type: ...}}}})")
        if items is None:
            return ()
        specs = []
        for label, knode, vnode in items:
            why = bad_label(label)
            if why:
                self.problems.add(knode, join_path(section, label), why)
                continue
            if section == "tokenizers" and isinstance(vnode, MappingNode) and any(
                    k == "load" for k, _, _ in mapping_items(vnode)):
                spec: Any = self.loaded(label, vnode, join_path(section, label))
            else:
                spec = self.stage(SECTIONS[section], section, label, vnode, join_path(section, label))
            if spec is not None:
                specs.append(spec)
        return tuple(specs)

    def loaded(self, label: str, node: MappingNode, path: str) -> Any:
        """A ``{load: FILE}`` stage under ``tokenizers:`` (as in ``compare.tokenizers``), which may also
        ``encode:`` the corpus with the tokenizer read."""
        items = mapping_items(node)
        encode_node = next((v for k, _, v in items if k == "encode"), None)
        rest = MappingNode(node.tag, [(k, v) for k, v in node.value if not (isinstance(k, ScalarNode)
                                                                           and k.value == "encode")],
                           node.start_mark, node.end_mark)
        spec = check_load(self.ctx, label, rest, path)
        self.nodes[("tokenizers", label)] = {"<stage>": node, "load": next(v for k, _, v in items if k == "load")}
        if spec is None or encode_node is None:
            return spec
        self.nodes[("tokenizers", label)]["encode"] = encode_node
        kept = self.ctx.kept.get(label)
        vocab = kept[0].get_vocab_size() if kept is not None else None
        return _replace(spec, encode=check_encode(self.ctx, encode_node, join_path(path, "encode"), vocab))

    def pipeline(self, node: Node, taken: set[str]) -> PipelineSpec | None:
        if _is_null(node):
            return None
        items = self._mapping(node, "vectorizers", "a mapping: {input: TOKENIZER, steps: [{type: ...}, ...]}")
        if items is None:
            return None
        fields = {}
        keys = ["input", "steps", "unit", "save_matrix", "nearest"]
        for key, knode, vnode in items:
            if key in keys:
                fields[key] = vnode
            else:
                self._unknown_key(key, knode, "vectorizers", keys, "key")
        options: dict[str, Any] = {}
        for key, hint, constraint in (("save_matrix", bool | Literal["partitions"], None),
                                      ("unit", Literal[UNITS] | None, None),
                                      ("nearest", int | None, Interval(int, 0, None))):
            if key in fields:
                value = coerce(fields[key], hint, f"vectorizers.{key}", self.problems, constraint)
                if value is not INVALID:
                    options[key] = value
        inp = None
        if "input" in fields:
            inp = coerce(fields["input"], str | None, "vectorizers.input", self.problems)
            inp = None if inp is INVALID else inp
            self.nodes[("vectorizers", "")] = {"input": fields["input"]}
        steps_node = fields.get("steps")
        if steps_node is None or _is_null(steps_node):
            self.problems.add(steps_node or node, "vectorizers.steps", "missing: the list of vectorizers to apply "
                                                                      "in order")
            return None
        if not isinstance(steps_node, SequenceNode) or not steps_node.value:
            self.problems.add(steps_node, "vectorizers.steps", "expected a non-empty list of stages "
                                                              f"[{{type: ...}}, ...], got {describe_node(steps_node)}")
            return None
        specs = []
        for i, item in enumerate(steps_node.value):
            spec = self.stage("vectorizer", "vectorizers", str(i), item, f"vectorizers.steps.{i}")
            if spec is not None:
                specs.append(spec)
        for i, spec in enumerate(specs):  # documents first, then each step reads the matrix the previous one gives
            wanted = "documents" if i == 0 else "matrix"
            kind = getattr(spec.cls, "input_kind", "documents")
            if kind != wanted:
                where = ("the pipeline starts from documents (the input tokenizer's token sequences, or the raw text)"
                         if i == 0 else f"it follows {specs[i - 1].type}, whose output is a matrix")
                self.problems.add(steps_node.value[int(spec.label)], f"vectorizers.steps.{spec.label}",
                                  f"{spec.type} reads {'a matrix' if kind == 'matrix' else 'documents'}, but {where}")
        no_input = "input" not in fields or _is_null(fields["input"])  # input: null is the raw text too
        if inp is None and no_input and specs and not getattr(specs[0].cls, "reads_text", True) and not self.encoded:
            self.problems.add(steps_node.value[int(specs[0].label)], f"vectorizers.steps.{specs[0].label}",
                              f"{specs[0].type} counts token sequences and has no pre-tokenizer of its own: give "
                              "the pipeline an input: tokenizer of this recipe")
        if options.get("nearest") is not None and specs:
            rows = getattr(specs[0].cls, "output_rows", "documents")  # later steps keep the rows they are given
            if rows != "documents":
                what = "token" if rows == "tokens" else "vocabulary entry"
                self.problems.add(fields["nearest"], "vectorizers.nearest",
                                  f"the pipeline's rows are not documents: {specs[0].type} gives one row per {what}, "
                                  "so there are no nearest documents to show (start the pipeline with bow or tfidf, "
                                  "or drop nearest)")
        if options.get("save_matrix") == "partitions" and specs:
            rows = getattr(specs[0].cls, "output_rows", "documents")
            why = ("the engine writes the first step's output partition by partition, and a later step needs it "
                   "whole" if len(specs) > 1 else
                   f"{specs[0].type}'s output is one matrix over its vocabulary, not rows of documents"
                   if rows == "vocabulary" else
                   "nearest needs the whole matrix on this machine" if options.get("nearest") is not None else "")
            if why:
                self.problems.add(fields["save_matrix"], "vectorizers.save_matrix",
                                  f"partitions needs a pipeline of one step whose rows are documents or tokens and no "
                                  f"nearest: {why} (use save_matrix: true to gather it)")
        types_seen = [s.type for s in specs]
        named = []
        for spec in specs:  # each spec's provisional label is its index in steps
            label = spec.type
            if types_seen.count(spec.type) > 1 or label in taken:
                label = f"{spec.type}-{spec.label}"
            named.append(_replace(spec, label=label))
        if "nearest" in fields:
            options["nearest_location"] = self.where(fields["nearest"])
        return PipelineSpec(inp, tuple(named), self.where(node), **options)

    # -- one stage ----------------------------------------------------------------------------------------------
    def stage(self, kind: str, section: str, label: str, node: Node, path: str) -> ComponentSpec | None:
        if not isinstance(node, MappingNode):
            hint = ""
            if isinstance(node, ScalarNode) and node.value in self.registry.names(kind):
                hint = f" (write {{type: {node.value}}})"
            self.problems.add(node, path, "expected a mapping with type: (or preset:) and parameters, got "
                                          f"{describe_node(node)}{hint}")
            return None
        before = len(self.problems)
        fields: dict[str, tuple[Node, Node]] = {}
        given: dict[str, tuple[Node, Node]] = {}
        for key, knode, vnode in mapping_items(node):
            if key in RESERVED[kind]:
                fields[key] = (knode, vnode)
            elif key in _ALL_RESERVED:
                why = {"input": "tokenizers read the corpus" if kind == "tokenizer" else
                       "a vectorizer step reads the previous step; set vectorizers.input",
                       "batch": "only embedders embed a batch",
                       "nearest": "only embedders have word vectors to show neighbours of (for documents, set "
                                  "vectorizers.nearest)",
                       "export": "only tokenizers are exported to other libraries' formats",
                       "encode": "only a tokenizer encodes the corpus into token ids"}[key]
                self.problems.add(knode, join_path(path, key), f"not used by {kind}s: {why}")
            else:
                given[key] = (knode, vnode)
        type_name = self._field_str(fields, "type", path)
        preset_name = self._field_str(fields, "preset", path)
        preset = self._preset(kind, preset_name, fields["preset"][1], path) if preset_name else None
        if preset is not None and type_name is not None and preset["type"] != type_name:
            self.problems.add(fields["type"][1], join_path(path, "type"),
                              f"{type_name!r} disagrees with preset {preset_name!r}, which is a {preset['type']!r} "
                              f"{kind} (drop type:)")
            return None
        if preset is not None:
            type_name = preset["type"]
        if type_name is None:
            if len(self.problems) == before:
                self.problems.add(node, join_path(path, "type"),
                                  f"missing: the {kind} to use (one of: {', '.join(self.registry.names(kind))}), "
                                  "or a preset:")
            return None
        type_node = fields["type"][1] if "type" in fields else fields["preset"][1]
        try:
            cls = self.registry.get(kind, type_name)
        except UnknownComponentError:
            msg = self.registry.unknown_message(kind, type_name)
            if "type" not in fields:
                msg = f"preset {preset_name!r} names a {kind} that is not installed: {msg}"
            self.problems.add(type_node, join_path(path, "type" if "type" in fields else "preset"), msg)
            return None
        schema, bugs = class_params(cls)
        for bug in bugs:
            self.problems.add(type_node, join_path(path, "type"), f"plugin bug: {bug}")
        merged: dict[str, tuple[Node, Node]] = {}
        if preset is not None:
            note = f"from preset {preset_name!r}"
            for name, value in (preset.get("params") or {}).items():
                vnode = python_to_node(value, fields["preset"][1], note)
                merged[str(name)] = (vnode, vnode)
        merged.update(given)
        params: dict[str, Any] = {}
        nodes: dict[str, Node] = {}
        for name, (knode, vnode) in merged.items():
            ppath = join_path(path, name)
            if name not in schema:
                listing = f" Parameters: {', '.join(schema)}" if schema else f" {kind} {type_name!r} takes none"
                self.problems.add(knode, ppath, f"unknown parameter of {kind} {type_name!r}."
                                                f"{did_you_mean(name, list(schema))}{listing}")
                continue
            value = coerce(vnode, schema[name].hint, ppath, self.problems, schema[name].constraint)
            if value is not INVALID:
                if name in getattr(cls, "path_params", ()) and isinstance(value, str) and value:
                    value = self._path(value, vnode)
                params[name] = value
                nodes[name] = vnode
        if not bugs and hasattr(cls, "check_params"):
            # the values that typed correctly (the others left at their defaults), so that a range problem is
            # reported together with a type problem of another key
            self._check_params(cls, params, nodes, node, path)
        for name, prm in schema.items():
            if prm.default is REQUIRED and name not in merged:
                self.problems.add(node, join_path(path, name),
                                  f"missing: a required parameter of {kind} {type_name!r} ({describe(prm.hint)})")
        inp = None
        if "input" in fields:
            value = coerce(fields["input"][1], str, join_path(path, "input"), self.problems)
            inp = None if value is INVALID else value
            nodes["input"] = fields["input"][1]
        nodes["<stage>"] = node
        batch = None
        if "batch" in fields and not _is_null(fields["batch"][1]):
            batch = self.batch(fields["batch"][1], join_path(path, "batch"), nodes)
        nearest: tuple[str, ...] = ()
        if "nearest" in fields:
            value = coerce(fields["nearest"][1], list[str], join_path(path, "nearest"), self.problems)
            nearest = () if value is INVALID or value is None else tuple(value)
        exports = self._exports(fields["export"][1], join_path(path, "export"), cls, params) \
            if "export" in fields and not _is_null(fields["export"][1]) else ()
        encode = None
        if "encode" in fields:
            plan = self._ask(ComponentSpec(label, kind, type_name, params, cls=cls), "plan",
                             {k: thaw(v, ANY) for k, v in params.items()})
            encode = check_encode(self.ctx, fields["encode"][1], join_path(path, "encode"),
                                  getattr(plan, "vocab_size", None))
            nodes["encode"] = fields["encode"][1]
        self.nodes[(section, label)] = nodes
        if len(self.problems) == before:
            self.valid.add((section, label))
        return ComponentSpec(label, kind, type_name, types.MappingProxyType(params), inp, preset_name, batch,
                             self.where(node), cls, nearest, exports, encode)

    def _exports(self, node: Node, path: str, cls: type, params: dict[str, Any]) -> tuple[str, ...]:
        """A tokenizer's ``export:`` list: each format known and writable by the class with these parameters
        (:func:`tokembed.export.export_problem`), checked now rather than after the training."""
        from ..export import export_problem

        value = coerce(node, list[str], path, self.problems)
        if value is INVALID or value is None:
            return ()
        items = node.value if isinstance(node, SequenceNode) else []
        out = []
        for k, fmt in enumerate(value):
            problem = export_problem(cls, fmt, {k: thaw(v, ANY) for k, v in params.items()})
            if problem is not None:
                self.problems.add(items[k] if k < len(items) else node, f"{path}[{k}]", problem)
            elif fmt not in out:
                out.append(fmt)
        return tuple(out)

    def _path(self, value: str, node: Node) -> str:
        """A file parameter's value, absolute: relative to the recipe's folder, or to the current directory for a
        ``--set`` value."""
        p = Path(value).expanduser()
        if p.is_absolute():
            return str(p)
        base = path_base(node, self.base_dir)
        return str((base / p).absolute())

    def _check_params(self, cls: type, params: dict[str, Any], nodes: dict[str, Node], node: Node,
                      path: str) -> None:
        """Run the class's own parameter checks (``check_params``) and place each problem at its parameter."""
        try:
            found = cls.check_params({k: thaw(v, Any) for k, v in params.items()})
        except Exception as exc:  # a plugin's check that breaks must not hide the recipe's other problems
            self.problems.add(node, path, f"the parameters could not be checked: {type(exc).__name__}: {exc}")
            return
        for name, message in found or ():
            name = name if name in nodes else None  # a parameter the recipe sets: report it at its key
            where = nodes[name] if name else node
            self.problems.add(where, join_path(path, name) if name else path, message)

    def _field_str(self, fields: dict[str, tuple[Node, Node]], key: str, path: str) -> str | None:
        if key not in fields:
            return None
        value = coerce(fields[key][1], str, join_path(path, key), self.problems)
        return None if value is INVALID else value

    def _preset(self, kind: str, name: str, node: Node, path: str) -> dict[str, Any] | None:
        ppath = join_path(path, "preset")
        try:
            presets = self.registry.presets
        except TokembedError as exc:
            self.problems.add(node, ppath, f"the presets cannot be read: {exc}")
            return None
        entry = presets.get(name)
        if entry is None:
            same = sorted(n for n, e in presets.items() if isinstance(e, dict) and e.get("kind") == kind)
            self.problems.add(node, ppath, f"unknown {kind} preset {name!r}.{did_you_mean(name, same)} "
                                           f"Available: {', '.join(same) or '(none)'}")
            return None
        if not (isinstance(entry, dict) and isinstance(entry.get("type"), str)
                and isinstance(entry.get("params") or {}, dict)):
            self.problems.add(node, ppath, f"preset {name!r} is broken in registry.yaml: it needs kind:, type: "
                                           "and params: (a mapping)")
            return None
        if entry.get("kind") != kind:
            other = entry.get("kind") or "?"
            self.problems.add(node, ppath, f"preset {name!r} is {_a(other)} {other} preset, not {_a(kind)} {kind} one")
            return None
        return entry

    def batch(self, node: Node, path: str, nodes: dict[str, Node]) -> BatchSpec | None:
        items = self._mapping(node, path, "a mapping {lines: N, padding: longest|max_length|false, truncation: "
                                          "BOOL, max_length: N}")
        if items is None:
            return None
        values: dict[str, Any] = {}
        ok = True
        for key, knode, vnode in items:
            if key not in BATCH_FIELDS:
                self._unknown_key(key, knode, path, list(BATCH_FIELDS), "batch key")
                ok = False
                continue
            hint, constraint = BATCH_FIELDS[key]
            value = coerce(vnode, hint, join_path(path, key), self.problems, constraint)
            if value is INVALID:
                ok = False
            else:
                values[key] = value
                nodes[f"batch.{key}"] = vnode
        spec = BatchSpec(**values, location=self.where(node))  # the valid keys, the others at their defaults
        if spec.max_length is None and "max_length" not in {key for key, _, _ in items}:  # not a bad one
            for key, on in (("padding", spec.padding == "max_length"), ("truncation", spec.truncation is True)):
                if on:
                    self.problems.add(nodes[f"batch.{key}"], join_path(path, key),
                                      f"{key}: {'max_length' if key == 'padding' else 'true'} needs batch.max_length")
                    ok = False
        if spec.padding is False and spec.lines > 1 and "batch.padding" in nodes:
            # the batch is embedded as one (batch, seq) array: unpadded lines of text have different lengths
            self.problems.add(nodes["batch.padding"], join_path(path, "padding"),
                              f"false cannot stack {spec.lines} lines of different lengths into one (batch, seq) "
                              "array of ids; use padding: longest (or max_length with max_length: N), or lines: 1")
            ok = False
        return spec if ok else None

    # -- across stages ------------------------------------------------------------------------------------------
    def cross_checks(self, tokenizers: tuple[ComponentSpec, ...], pipeline: PipelineSpec | None,
                     embedders: tuple[ComponentSpec, ...], encoded: bool = False) -> None:
        toks = {s.label: s for s in tokenizers}
        tok_labels = list(toks)
        listing = f"tokenizers: {', '.join(tok_labels)}" if tok_labels else "the recipe has no tokenizers"
        for spec in embedders:
            nodes = self.nodes.get(("embedders", spec.label), {})
            if spec.label in toks:
                self.problems.add(nodes["<stage>"], f"embedders.{spec.label}",
                                  f"label {spec.label!r} is already used by tokenizers.{spec.label}; labels name "
                                  "output files, so they must differ across sections")
            if ("embedders", spec.label) in self.valid:
                self._batch_vs_max_len(spec, nodes)
            if spec.input is None:
                if "input" not in nodes and not encoded:
                    self.problems.add(nodes["<stage>"], f"embedders.{spec.label}.input",
                                      f"missing: the tokenizer whose output it reads ({listing})")
                elif encoded and "input" not in nodes and ("embedders", spec.label) in self.valid:
                    self._embedder_vs_tokenizer(spec, nodes, *self._folder_plan())  # the folder's own tokenizer
                continue
            if spec.input not in toks:
                self._bad_input(nodes["input"], f"embedders.{spec.label}.input", spec.input, tok_labels, listing)
                continue
            if ("embedders", spec.label) in self.valid:
                self._embedder_vs_tokenizer(spec, nodes, self._plan(toks[spec.input]), spec.input,
                                            toks[spec.input].cls)
        if pipeline is not None and pipeline.input is not None and pipeline.input not in toks:
            node = self.nodes[("vectorizers", "")]["input"]
            self._bad_input(node, "vectorizers.input", pipeline.input, tok_labels, listing)

    def _batch_vs_max_len(self, emb: ComponentSpec, nodes: dict[str, Node]) -> None:
        """A batch whose ``max_length`` exceeds what the embedder accepts (its position table) cannot be embedded."""
        if emb.batch is None or emb.batch.max_length is None:
            return
        limit = self._ask(emb, "planned_max_input_length", self._thawed(emb))
        if isinstance(limit, int) and not isinstance(limit, bool) and emb.batch.max_length > limit:
            limit_text, raise_it = describe_limit(emb.cls, limit)
            self.problems.add(nodes.get("batch.max_length") or nodes["<stage>"],
                              f"embedders.{emb.label}.batch.max_length",
                              f"{emb.batch.max_length} is longer than the embedder's {limit_text}; lower "
                              f"batch.max_length or {raise_it}")

    @staticmethod
    def _thawed(spec: ComponentSpec) -> dict[str, Any]:
        schema, _ = class_params(spec.cls)
        return {k: thaw(v, schema[k].hint if k in schema else Any) for k, v in spec.params.items()}

    @staticmethod
    def _ask(spec: ComponentSpec, method: str, *args: Any) -> Any:
        """``spec.cls.<method>(*args)``; a plugin whose planning breaks is left to fit, which reports in context."""
        try:
            return getattr(spec.cls, method)(*args)
        except Exception:
            return None

    def _bad_input(self, node: Node, path: str, name: str, labels: list[str], listing: str) -> None:
        self.problems.add(node, path, f"no tokenizer {name!r} in this recipe.{did_you_mean(name, labels)} "
                                      f"{listing[0].upper()}{listing[1:]}")

    def _plan(self, tok: Any) -> Any:
        """The :class:`~tokembed.components.TokenizerPlan` of a tokenizer stage: planned from its parameters
        (:meth:`tokembed.Tokenizer.plan`), or, for a ``{load:}`` stage, what the tokenizer read is; None when it
        cannot be known (a stage with problems)."""
        if isinstance(tok, LoadSpec):
            kept = self.ctx.kept.get(tok.label)
            return None if kept is None else _fitted_plan(kept[0])
        if ("tokenizers", tok.label) not in self.valid:
            return None
        return self._ask(tok, "plan", self._thawed(tok))

    def _folder_plan(self) -> tuple[Any, str, type | None]:
        """``(plan, label, class)`` of the tokenizer stored in the encoded corpus folder (its file read, never the
        ids); ``(None, "", None)`` when it cannot be read (the run says why)."""
        from ..components import read_artifact
        from ..encoded import TOKENIZER_FILE

        if self._encoded_plan is None:
            self._encoded_plan = (None, "", None)
            try:
                data = read_artifact(self.encoded_folder / TOKENIZER_FILE)
                cls = self.registry.get("tokenizer", str(data.get("type")))
                tok = cls.from_dict(data, source=str(self.encoded_folder / TOKENIZER_FILE))
                self._encoded_plan = (_fitted_plan(tok), f"{self.encoded_folder.name} (corpus.encoded)", cls)
            except Exception:
                pass
        return self._encoded_plan

    def _embedder_vs_tokenizer(self, emb: ComponentSpec, nodes: dict[str, Node], plan: Any, label: str,
                               tok_cls: type | None) -> None:
        """The embedder's parameters against its tokenizer's plan (:meth:`tokembed.Tokenizer.plan`, checked by
        :meth:`tokembed.Embedder.check_tokenizer_plan`), and a padded batch against the tokenizer's pad token."""
        if plan is None:
            return
        for param, message in self._ask(emb, "check_tokenizer_plan", self._thawed(emb), plan, label) or ():
            where = nodes.get(param) if param else None
            self.problems.add(where or nodes["<stage>"],
                              f"embedders.{emb.label}" + (f".{param}" if param else ""), message)
        if emb.batch is not None and emb.batch.padding is not False and plan.pad_token is None:
            node = nodes.get("batch.padding") or nodes["<stage>"]
            self.problems.add(node, f"embedders.{emb.label}.batch.padding",
                              f"{emb.batch.padding!r} needs a pad token, but tokenizer {label!r} has pad_token: null"
                              + ("" if tok_cls is None or tok_cls.__module__.startswith("tokembed.") else
                                 f" ({tok_cls.__qualname__} declares none: a tokenizer is padded when its plan() "
                                 "names a pad_token, see docs/plugins.md)"))


def _fitted_plan(tok: Any) -> Any:
    """What a fitted tokenizer is, as a :class:`~tokembed.components.TokenizerPlan`: its vocabulary size, the ids
    of its special tokens, and its pad token when the vocabulary has it."""
    from ..components import TokenizerPlan

    ids = {t: tok.token_to_id(t) for t in getattr(tok, "special_tokens_", ()) or ()}
    pad = getattr(tok, "pad_token", None)
    return TokenizerPlan(int(tok.get_vocab_size()), {t: int(i) for t, i in ids.items() if i is not None},
                         pad if isinstance(pad, str) and tok.token_to_id(pad) is not None else None)


def _has_grid(node: Node) -> bool:
    return isinstance(node, MappingNode) and any(k == "grid" and not _is_null(v) for k, _, v in mapping_items(node))


def _replace(spec: ComponentSpec, **changes: Any) -> ComponentSpec:
    import dataclasses

    return dataclasses.replace(spec, **changes)


def check_recipe(root: Node, *, source: str, base_dir: Path, registry: Any, problems: Problems,
                 path: Path | None, overrides: tuple[str, ...], out: Any) -> Recipe | None:
    """Check the composed recipe ``root``; record every problem; return the :class:`Recipe` when there is none."""
    return _Checker(source, base_dir, registry, problems).recipe(root, path, overrides, out)
