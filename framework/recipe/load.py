"""``{load: FILE}`` stages of a ``compare:`` recipe: which file, what format, which plugin reads it, with what.

The file is found and its format told apart before any work (:func:`tokembed.export.recognise_tokenizer_file`): a
saved tokembed tokenizer (``*.tokembed.json``, read with the class its ``type`` names), or one of the formats of
:data:`tokembed.export.LOAD_FORMATS` (a Hugging Face ``tokenizer.json``, tiktoken ranks, a SentencePiece model, a
WordPiece ``vocab.txt``, GPT-2's ``{vocab, merges}`` pair). Without ``type:``, the reader is the one installed
tokenizer whose class lists that format in ``load_formats`` (none or several is a problem that says so); the core
names no plugin. The reader's classmethod must exist, and the stage's other keys are typed against its signature.
Then the file is read (:meth:`LoadSpec.read`): a file the reader rejects is a problem of the stage, reported with
the other problems before any training, and the tokenizer read is kept for the run. Private to
:mod:`tokembed.recipe`.
"""

from __future__ import annotations

import time

import types
from pathlib import Path
from typing import Any, Literal

from yaml.nodes import MappingNode, Node

from ..errors import ArtifactError, TokembedError, UnknownComponentError, with_context
from ..export import FORMS_IN_WORDS, LOAD_FORMATS, load_format, readers_of, recognise_tokenizer_file
from .corpus import dataset_location
from .nodes import did_you_mean, from_override, join_path, mapping_items, path_base
from .context import Context
from .params import ANY, INVALID, REQUIRED, class_params, coerce, describe, method_params, thaw
from .compare_specs import LoadSpec

__all__ = ["LOAD_KEYS", "check_load"]

#: Reserved keys of a ``{load: ...}`` stage; the others are parameters of the loader.
LOAD_KEYS = ("load", "type")



def check_load(ctx: Context, label: str, node: MappingNode, path: str) -> LoadSpec | None:
    """The ``{load: ...}`` stage ``node`` (at dotted ``path``) as a :class:`LoadSpec`, or None after recording its
    problems. Relative paths are relative to the recipe's folder, or to the current directory for a ``--set``
    value. The file is read now, and the tokenizer kept in ``ctx.kept`` for the run."""
    return _LoadChecker(ctx).stage(label, node, path)


def read_tokenizer(spec: LoadSpec) -> Any:
    """Read the tokenizer a ``{load:}`` stage names: ``cls.load(path)`` for a tokembed file, else
    ``cls.<loader>(str(path), **params)``.

    Returns
    -------
    Tokenizer
        Fitted (ready to encode).

    Raises
    ------
    TokembedError
        The reader's own error, unchanged (``ArtifactError`` for a malformed file, naming the file and line).
    ArtifactError
        Any other exception of the reader, wrapped: ``Class.loader('PATH') failed: ValueError: ...``. Neither
        names the recipe (see :func:`load_tokenizer`).
    """
    kwargs: dict[str, Any] = {}
    files = [str(spec.path)] + ([str(spec.merges)] if spec.merges is not None else [])
    if spec.format != "tokembed":
        schema, _, _ = method_params(spec.cls, spec.loader, len(files))
        init, _ = class_params(spec.cls)
        kwargs = {k: thaw(v, schema[k].hint if k in schema else init[k].hint if k in init else ANY)
                  for k, v in spec.params.items()}
    try:
        if spec.format == "tokembed":
            return spec.cls.load(spec.path)
        return getattr(spec.cls, spec.loader)(*files, **kwargs)
    except TokembedError:
        raise
    except Exception as exc:
        what = f"{spec.cls.__qualname__}.{spec.loader}({', '.join(map(repr, files))})"
        raise ArtifactError(f"{what} failed: {type(exc).__name__}: {exc}") from exc


def load_tokenizer(spec: LoadSpec, kept: dict[str, tuple[Any, float]] | None = None) -> tuple[Any, float]:
    """The tokenizer of a ``{load:}`` stage and the seconds its reading took: the one the recipe check read and kept
    (``kept``, usually ``recipe.kept``; handed over once), else read from the file now.

    Raises
    ------
    TokembedError
        As :func:`read_tokenizer`, its message prefixed with the stage: ``FILE:LINE:COL:
        compare.tokenizers.LABEL: ...`` (the same class and attributes: :func:`tokembed.errors.with_context`).
    """
    if kept is not None and spec.label in kept:
        return kept.pop(spec.label)
    started = time.perf_counter()
    try:
        tok = read_tokenizer(spec)
    except TokembedError as exc:
        raise with_context(exc, f"{spec.location}: compare.tokenizers.{spec.label}: {exc}") from exc
    return tok, time.perf_counter() - started


class _LoadChecker:
    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.problems = ctx.problems
        self.registry = ctx.registry
        self.base_dir = ctx.base_dir

    def stage(self, label: str, node: MappingNode, path: str) -> LoadSpec | None:
        before = len(self.problems)
        fields: dict[str, tuple[Node, Node]] = {}
        given: dict[str, tuple[Node, Node]] = {}
        for key, knode, vnode in mapping_items(node):
            if key in LOAD_KEYS:
                fields[key] = (knode, vnode)
            elif key == "preset":
                self.problems.add(knode, join_path(path, key),
                                  "not used with load: (the file holds the model); give type: to choose the plugin "
                                  "that reads it, and the reader's parameters")
            elif key in ("input", "batch"):
                self.problems.add(knode, join_path(path, key), "not used by tokenizers")
            else:
                given[key] = (knode, vnode)
        lnode = fields["load"][1]
        type_name = None
        if "type" in fields:
            value = coerce(fields["type"][1], str, join_path(path, "type"), self.problems)
            type_name = None if value is INVALID else value
        if isinstance(lnode, MappingNode) and {k for k, _, _ in mapping_items(lnode)} & {"vocab", "merges"}:
            pair = self.vocab_merges(lnode, join_path(path, "load"))
            if pair is None or len(self.problems) > before:
                return None
            (value, file), merges = pair
            source, key = "path", "vocab_merges"
        else:
            located = self.source(lnode, join_path(path, "load"))
            if located is None or len(self.problems) > before:
                return None
            source, value, file = located
            merges = None
            try:
                key, file_type = recognise_tokenizer_file(file, value)
            except TokembedError as exc:
                self.problems.add(lnode, join_path(path, "load"), str(exc))
                return None
            if key == "tokembed":
                return self.saved(label, node, path, fields, given, type_name, source, value, file, file_type)
        found = self.reader(key, type_name, fields, lnode, path)
        if found is None:
            return None
        cls, type_name, loader = found
        type_node = fields["type"][1] if "type" in fields else lnode
        params = self.loader_params(cls, type_name, loader, given, type_node, path, files=2 if merges else 1)
        if params is None:
            return None
        spec = LoadSpec(label, source, value, file, key.partition(":")[0], type_name,  # type: ignore[arg-type]
                        loader, types.MappingProxyType(params), self.problems.where(node), cls, merges=merges)
        return self.read(spec, node, path)

    def saved(self, label: str, node: MappingNode, path: str, fields: dict[str, tuple[Node, Node]],
              given: dict[str, tuple[Node, Node]], type_name: str | None, source: Any, value: str, file: Path,
              file_type: str) -> LoadSpec | None:
        """A saved tokembed tokenizer: read by the class its ``type`` names, with the parameters it was saved with."""
        lnode = fields["load"][1]
        if type_name is not None and type_name != file_type:
            self.problems.add(fields["type"][1], join_path(path, "type"),
                              f"{type_name!r} disagrees with the file, which holds a {file_type!r} tokenizer "
                              "(drop type:)")
            return None
        try:
            cls = self.registry.get("tokenizer", file_type)
        except UnknownComponentError:
            self.problems.add(lnode, join_path(path, "load"),
                              f"{value}: holds a {file_type!r} tokenizer, which no installed plugin provides: "
                              + self.registry.unknown_message("tokenizer", file_type))
            return None
        for name, (knode, _) in given.items():
            self.problems.add(knode, join_path(path, name), "not used: a saved tokembed tokenizer is loaded "
                                                            "with the parameters it was saved with")
        if given:
            return None
        return self.read(LoadSpec(label, source, value, file, "tokembed", file_type, "load",
                                  types.MappingProxyType({}), self.problems.where(node), cls), node, path)

    def reader(self, key: str, type_name: str | None, fields: dict[str, tuple[Node, Node]], lnode: Node,
               path: str) -> tuple[type, str, str] | None:
        """``(class, type name, classmethod)`` that reads a file of format ``key``: the recipe's ``type:``, else the
        one installed tokenizer whose ``load_formats`` lists ``key``; None after recording why there is none."""
        name = key.partition(":")[0]
        if name not in LOAD_FORMATS:
            self.problems.add(lnode, join_path(path, "load"), f"{key}: not a format load: reads ({FORMS_IN_WORDS})")
            return None
        fmt, what = load_format(key)
        type_node = fields["type"][1] if "type" in fields else lnode
        type_path = join_path(path, "type" if "type" in fields else "load")
        if type_name is None:
            classes = {n: self.registry.get("tokenizer", n) for n in self.registry.names("tokenizer")}
            readers = readers_of(classes, key)
            if not readers:
                failed = ("; plugins that failed to load: " + "; ".join(map(str, self.registry.failures))
                          if self.registry.failures else "")
                self.problems.add(lnode, type_path, f"no installed tokenizer reads {what}: none lists {key!r} in its "
                                                    f"load_formats (installed: {', '.join(classes) or 'none'}); "
                                                    f"install a plugin that does, or give type: to name a tokenizer "
                                                    f"whose class has {fmt.method}(){failed}")
                return None
            if len(readers) > 1:
                self.problems.add(lnode, type_path, f"several installed tokenizers read {what} "
                                                    f"({', '.join(readers)}): give type: to choose one")
                return None
            type_name = readers[0]
        try:
            cls = self.registry.get("tokenizer", type_name)
        except UnknownComponentError:
            self.problems.add(type_node, type_path, self.registry.unknown_message("tokenizer", type_name))
            return None
        if not callable(getattr(cls, fmt.method, None)):
            args = ", ".join(f.split(".")[0].replace("{stem}", "path") for f in fmt.files) if len(fmt.files) > 1 \
                else "path"
            declared = " (its load_formats lists it: a plugin bug)" if key in (cls.load_formats or ()) else ""
            self.problems.add(type_node, type_path,
                              f"tokenizer {type_name!r} ({cls.__module__}.{cls.__qualname__}) has no classmethod "
                              f"{fmt.method}({args}, ...), so it cannot read {what}{declared}")
            return None
        return cls, type_name, fmt.method

    def vocab_merges(self, lnode: MappingNode, lpath: str) -> tuple[tuple[str, Path], Path] | None:
        """``load: {vocab: vocab.json, merges: merges.txt}``: ``((vocab as written, vocab file), merges file)``, or
        None after recording the problems."""
        items = {k: (kn, vn) for k, kn, vn in mapping_items(lnode)}
        extra = sorted(set(items) - {"vocab", "merges"})
        for key in extra:
            self.problems.add(items[key][0], join_path(lpath, key), "unknown key: a vocab.json + merges.txt pair is "
                                                                     "{vocab: FILE, merges: FILE}")
        missing = [k for k in ("vocab", "merges") if k not in items]
        for key in missing:
            self.problems.add(lnode, join_path(lpath, key), f"missing: the {key} file of the pair "
                                                             f"({'vocab.json' if key == 'vocab' else 'merges.txt'})")
        if extra or missing:
            return None
        found = {}
        for key in ("vocab", "merges"):
            value = coerce(items[key][1], str, join_path(lpath, key), self.problems)
            file = None if value is INVALID else self.file(value, items[key][1], join_path(lpath, key))
            found[key] = (value, file)
        if any(file is None for _, file in found.values()):
            return None
        return found["vocab"], found["merges"][1]

    def read(self, spec: LoadSpec, node: MappingNode, path: str) -> LoadSpec | None:
        """Read the file now (a tokenizer file is cheap to read, and a run would read it anyway), keeping the
        tokenizer for the run; a file its reader rejects is a problem of the stage, found before any training."""
        started = time.perf_counter()
        try:
            tok = read_tokenizer(spec)
        except TokembedError as exc:
            self.problems.add(node, path, str(exc))
            return None
        self.ctx.kept[spec.label] = (tok, time.perf_counter() - started)
        return spec

    def source(self, node: Node, path: str) -> tuple[Literal["path", "dataset"], str, Path] | None:
        """``load: PATH``, ``load: {path: PATH}`` or ``load: {dataset: NAME}`` -> (source, value, absolute file)."""
        if isinstance(node, MappingNode):
            items = mapping_items(node)
            keys = [k for k, _, _ in items]
            if len(items) != 1 or keys[0] not in ("path", "dataset"):
                self.problems.add(node, path, "expected a file path, {path: FILE} or {dataset: NAME} (a fetched "
                                              f"tokenizer file), got a mapping with {', '.join(keys) or 'no key'}")
                return None
            key, _, vnode = items[0]
            value = coerce(vnode, str, join_path(path, key), self.problems)
            if value is INVALID:
                return None
            if key == "dataset":
                found = dataset_location(value, vnode, join_path(path, key), self.problems, ("tokenizer_file",))
                if found is None:
                    return None
                if found == ():
                    self.problems.add(vnode, join_path(path, key), "tokembed.datasets is not available to find it")
                    return None
                return "dataset", value, Path(found).absolute()  # type: ignore[arg-type]
            file = self.file(value, vnode, join_path(path, key))
            return None if file is None else ("path", value, file)
        value = coerce(node, str, path, self.problems)
        if value is INVALID:
            return None
        file = self.file(value, node, path)
        return None if file is None else ("path", value, file)

    def file(self, value: str, node: Node, path: str) -> Path | None:
        """The existing file ``value`` names, absolute (relative to the recipe's folder, or to the current
        directory for a ``--set`` value), or None after recording why there is none."""
        p = Path(value).expanduser()
        base = path_base(node, self.base_dir)
        full = p if p.is_absolute() else base / p
        if full.is_file():
            return full.absolute()
        if full.is_dir():
            self.problems.add(node, path, f"{value}: is a folder; load: names one tokenizer file ({FORMS_IN_WORDS})")
            return None
        relative = not p.is_absolute() and not from_override(node)
        looked = f" (looked in {full})" if str(full) != value else ""
        self.problems.add(node, path, f"{value}: no such file{looked}"
                                      + ("; paths are relative to the recipe file" if relative else ""))
        return None

    def loader_params(self, cls: type, type_name: str, loader: str, given: dict[str, tuple[Node, Node]],
                      at: Node, path: str, files: int = 1) -> dict[str, Any] | None:
        """The stage's other keys typed against ``cls.loader``'s keyword parameters (and, when the loader takes
        ``**kwargs``, the class's ``__init__`` parameters)."""
        schema, bugs, takes_kwargs = method_params(cls, loader, files)
        merged = dict(schema)
        if takes_kwargs:
            init, init_bugs = class_params(cls)
            merged = {**init, **schema}
            bugs = (*bugs, *init_bugs)
        for bug in bugs:
            self.problems.add(at, path, f"plugin bug: {bug}")
        ok = not bugs
        params: dict[str, Any] = {}
        for name, (knode, vnode) in given.items():
            ppath = join_path(path, name)
            if name not in merged:
                listing = f" Parameters: {', '.join(merged)}" if merged else " It takes none."
                self.problems.add(knode, ppath, f"unknown parameter of {type_name}.{loader}()."
                                                f"{did_you_mean(name, list(merged))}{listing}")
                ok = False
                continue
            value = coerce(vnode, merged[name].hint, ppath, self.problems, merged[name].constraint)
            if value is INVALID:
                ok = False
            else:
                params[name] = value
        for name, prm in schema.items():
            if prm.default is REQUIRED and name not in given:
                self.problems.add(at, join_path(path, name),
                                  f"missing: a required parameter of {type_name}.{loader}() ({describe(prm.hint)})")
                ok = False
        return params if ok else None
