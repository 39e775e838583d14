"""``{load: FILE}`` stages of a ``compare:`` recipe: which file, what format, which plugin reads it, with what.

The file is found and its format told apart before any work: a saved tokembed tokenizer (``*.tokembed.json``, read
with the class its ``type`` names), a Hugging Face ``tokenizer.json`` (its ``model.type`` picks ``bpe`` or
``wordpiece`` or ``unigram``), tiktoken ranks (``*.tiktoken``), a SentencePiece model (``*.model``, read by
``unigram``) or a WordPiece ``vocab.txt``. For the last three the plugin's
classmethod (:data:`LOADERS`) must exist, and the stage's other keys are typed against its signature. Then the file
is read with its reader (:meth:`LoadSpec.read`): a file the reader rejects is a problem of the stage, reported with
the other problems before any training, and the tokenizer read is kept for the run. Private to
:mod:`tokembed.recipe`.
"""

from __future__ import annotations

import time

import types
from pathlib import Path
from typing import Any, Literal

from yaml.nodes import MappingNode, Node

from ..errors import ArtifactError, TokembedError, UnknownComponentError
from .corpus import dataset_location
from .nodes import did_you_mean, join_path, mapping_items
from .context import Context
from .params import ANY, INVALID, REQUIRED, class_params, coerce, describe, method_params, thaw
from .compare_specs import LoadSpec

__all__ = ["LOAD_KEYS", "LOADERS", "check_load"]

#: Reserved keys of a ``{load: ...}`` stage; the others are parameters of the loader.
LOAD_KEYS = ("load", "type")
#: File format -> (default tokenizer type, classmethod that reads it, what the file is, in words).
LOADERS: dict[str, tuple[str, str, str]] = {
    "tiktoken": ("bpe", "from_tiktoken", "tiktoken BPE ranks (.tiktoken)"),
    "hf_json:BPE": ("bpe", "from_hf_json", "a Hugging Face tokenizer.json with a BPE model"),
    "hf_json:WordPiece": ("wordpiece", "from_hf_json", "a Hugging Face tokenizer.json with a WordPiece model"),
    "vocab_txt": ("wordpiece", "from_vocab_file", "a WordPiece vocab.txt"),
    "sentencepiece": ("unigram", "from_sentencepiece", "a SentencePiece model (.model)"),
    "hf_json:Unigram": ("unigram", "from_hf_json", "a Hugging Face tokenizer.json with a Unigram model"),
    "vocab_merges": ("bpe", "from_vocab_merges", "a vocab.json and merges.txt pair"),
}
_FORMS = "a saved tokenizer (*.tokembed.json), a Hugging Face tokenizer.json, tiktoken ranks (*.tiktoken), a " \
         "SentencePiece model (*.model), a WordPiece vocab.txt, or {vocab: vocab.json, merges: merges.txt}"


def _from_override(node: Node) -> bool:
    return getattr(node, "tokembed_origin", None) is not None


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
        compare.tokenizers.LABEL: ...`` (the same class when it can be built from a message, else
        ``ArtifactError``).
    """
    if kept is not None and spec.label in kept:
        return kept.pop(spec.label)
    started = time.perf_counter()
    try:
        tok = read_tokenizer(spec)
    except TokembedError as exc:
        message = f"{spec.location}: compare.tokenizers.{spec.label}: {exc}"
        try:
            located = type(exc)(message)
        except Exception:  # an error class whose constructor takes something else than a message
            located = ArtifactError(message)
        raise located from exc
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
        if isinstance(lnode, MappingNode) and {k for k, _, _ in mapping_items(lnode)} & {"vocab", "merges"}:
            return self.vocab_merges(label, node, lnode, path, fields, given)
        located = self.source(lnode, join_path(path, "load"))
        type_name = None
        if "type" in fields:
            value = coerce(fields["type"][1], str, join_path(path, "type"), self.problems)
            type_name = None if value is INVALID else value
        if located is None or len(self.problems) > before:
            return None
        source, value, file = located
        lnode = fields["load"][1]
        fmt = self.file_format(file, value, lnode, join_path(path, "load"))
        if fmt is None:
            return None
        fmt_name, file_type = fmt
        if fmt_name == "tokembed":
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
        default_type, loader, what = LOADERS[fmt_name if fmt_name != "hf_json" else f"hf_json:{file_type}"]
        type_name = type_name or default_type
        type_node = fields["type"][1] if "type" in fields else lnode
        type_path = join_path(path, "type" if "type" in fields else "load")
        try:
            cls = self.registry.get("tokenizer", type_name)
        except UnknownComponentError:
            msg = self.registry.unknown_message("tokenizer", type_name)
            if "type" not in fields:
                msg = f"reading {what} needs the tokenizer plugin {type_name!r}, which is not installed: {msg}"
            self.problems.add(type_node, type_path, msg)
            return None
        method = getattr(cls, loader, None)
        if not callable(method):
            self.problems.add(type_node, type_path,
                              f"tokenizer {type_name!r} ({cls.__module__}.{cls.__qualname__}) has no classmethod "
                              f"{loader}(path, ...), so it cannot read {what}")
            return None
        params = self.loader_params(cls, type_name, loader, given, type_node, path)
        if params is None:
            return None
        loader_format: Literal["tiktoken", "hf_json", "vocab_txt", "sentencepiece"] = fmt_name  # type: ignore[assignment]
        return self.read(LoadSpec(label, source, value, file, loader_format, type_name, loader,
                                  types.MappingProxyType(params), self.problems.where(node), cls), node, path)

    def vocab_merges(self, label: str, node: MappingNode, lnode: MappingNode, path: str,
                     fields: dict[str, tuple[Node, Node]], given: dict[str, tuple[Node, Node]]) -> LoadSpec | None:
        """``load: {vocab: vocab.json, merges: merges.txt}``: GPT-2's pair, read by ``from_vocab_merges``."""
        lpath = join_path(path, "load")
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
        type_name = "bpe"
        if "type" in fields:
            value = coerce(fields["type"][1], str, join_path(path, "type"), self.problems)
            if value is INVALID:
                return None
            type_name = value
        type_node = fields["type"][1] if "type" in fields else lnode
        try:
            cls = self.registry.get("tokenizer", type_name)
        except UnknownComponentError:
            self.problems.add(type_node, join_path(path, "type" if "type" in fields else "load"),
                              self.registry.unknown_message("tokenizer", type_name))
            return None
        if not callable(getattr(cls, "from_vocab_merges", None)):
            self.problems.add(type_node, join_path(path, "type"),
                              f"tokenizer {type_name!r} ({cls.__module__}.{cls.__qualname__}) has no classmethod "
                              "from_vocab_merges(vocab_json, merges_txt, ...), so it cannot read a vocab.json and "
                              "merges.txt pair")
            return None
        params = self.loader_params(cls, type_name, "from_vocab_merges", given, type_node, path, files=2)
        if params is None:
            return None
        spec = LoadSpec(label, "path", found["vocab"][0], found["vocab"][1], "vocab_merges", type_name,
                        "from_vocab_merges", types.MappingProxyType(params), self.problems.where(node), cls,
                        merges=found["merges"][1])
        return self.read(spec, node, path)

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
        base = Path.cwd() if _from_override(node) else self.base_dir
        full = p if p.is_absolute() else base / p
        if full.is_file():
            return full.absolute()
        if full.is_dir():
            self.problems.add(node, path, f"{value}: is a folder; load: names one tokenizer file ({_FORMS})")
            return None
        relative = not p.is_absolute() and not _from_override(node)
        looked = f" (looked in {full})" if str(full) != value else ""
        self.problems.add(node, path, f"{value}: no such file{looked}"
                                      + ("; paths are relative to the recipe file" if relative else ""))
        return None

    def file_format(self, file: Path, value: str, node: Node, path: str) -> tuple[str, str | None] | None:
        """``(format, type)``: ``("tokembed", saved type)``, ``("hf_json", "BPE" | "WordPiece")``,
        ``("tiktoken", None)``, ``("sentencepiece", None)`` or ``("vocab_txt", None)``; None after recording a problem."""
        name = file.name.lower()
        if name.endswith(".tiktoken"):
            return "tiktoken", None
        if name.endswith(".txt"):
            return "vocab_txt", None
        if name.endswith(".model"):
            return "sentencepiece", None
        if not name.endswith(".json"):
            self.problems.add(node, path, f"{value}: cannot tell how to read this file from its name; load: reads "
                                          f"{_FORMS}")
            return None
        from ..io import read_json

        try:
            data = read_json(file, what="tokenizer")
        except TokembedError as exc:
            self.problems.add(node, path, str(exc))
            return None
        if isinstance(data, dict) and data.get("format") == "tokembed":
            if data.get("kind") != "tokenizer" or not isinstance(data.get("type"), str):
                self.problems.add(node, path, f"{value}: holds a tokembed {data.get('kind')}, not a tokenizer")
                return None
            return "tokembed", data["type"]
        model = data.get("model") if isinstance(data, dict) else None
        if isinstance(model, dict) and model.get("type") in ("BPE", "WordPiece", "Unigram"):
            return "hf_json", model["type"]
        if isinstance(model, dict):
            self.problems.add(node, path, f"{value}: a Hugging Face tokenizer with a {model.get('type')!r} model; "
                                          "load: reads BPE, WordPiece and Unigram models")
            return None
        self.problems.add(node, path, f"{value}: neither a saved tokembed tokenizer (\"format\": \"tokembed\") nor a "
                                      "Hugging Face tokenizer.json (\"model\": {...})")
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
