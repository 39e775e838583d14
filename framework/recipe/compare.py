"""The ``compare:`` section of a recipe: tokenizers (trained or loaded from files), corpora, a parallel set, metrics.

Every problem is recorded, never raised, and located at its node like the rest of the recipe, so an unknown
tokenizer, a corpus that names no file or a tokenizer file that no installed plugin can read is reported before any
work. Private to :mod:`tokembed.recipe`.
"""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any, Literal

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..errors import TokembedError, UnknownComponentError
from ..corpus import spread
from .context import Context
from .corpus import check_corpus, dataset_location
from .grid import check_grid
from .load import check_load
from .nodes import (
    NULL_WORDS,
    Problems,
    bad_label,
    describe_node,
    did_you_mean,
    from_override,
    is_plain,
    join_path,
    mapping_items,
    path_base,
)
from ..params import Interval
from .params import INVALID, coerce
from .compare_specs import CompareSpec, LoadSpec, ParallelSpec
from .specs import ComponentSpec, CorpusSpec

__all__ = ["COMPARE_KEYS", "PARALLEL_KEYS", "check_compare", "trained_labels"]

#: Keys of the ``compare:`` mapping.
COMPARE_KEYS = ("tokenizers", "corpora", "parallel", "metrics", "samples", "grid")
#: Keys of ``compare.parallel``.
PARALLEL_KEYS = ("dataset", "path", "reference", "languages", "errors", "sample_chapters")
_AT_LEAST_ONE = Interval(int, 1, None)
_AT_LEAST_ZERO = Interval(int, 0, None)


def _is_null(node: Node | None) -> bool:
    return isinstance(node, ScalarNode) and is_plain(node) and node.value in NULL_WORDS



def trained_labels(node: Node) -> list[str]:
    """Labels under ``compare.tokenizers`` whose stage is not ``{load: ...}`` (they need the training corpus); read
    from the raw node, so that it works even when the section has problems."""
    if not isinstance(node, MappingNode):
        return []
    tokenizers = next((v for k, _, v in mapping_items(node) if k == "tokenizers"), None)
    if not isinstance(tokenizers, MappingNode):
        return []
    out = []
    for label, _, stage in mapping_items(tokenizers):
        if not (isinstance(stage, MappingNode) and any(k == "load" for k, _, _ in mapping_items(stage))):
            out.append(label)
    return out


class _CompareChecker:
    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.problems: Problems = ctx.problems
        self.registry = ctx.registry
        self.base_dir: Path = ctx.base_dir

    # -- the section --------------------------------------------------------------------------------------------
    def section(self, node: Node) -> CompareSpec | None:
        if not isinstance(node, MappingNode):
            self.problems.add(node, "compare", "expected a mapping {tokenizers: {...}, corpora: {...}, parallel: "
                                               f"{{...}}, metrics: [...], samples: N}}, got {describe_node(node)}")
            return None
        before = len(self.problems)
        fields: dict[str, tuple[Node, Node]] = {}
        for key, knode, vnode in mapping_items(node):
            if key in COMPARE_KEYS:
                fields[key] = (knode, vnode)
            else:
                self.problems.add(knode, join_path("compare", key),
                                  f"unknown key.{did_you_mean(key, COMPARE_KEYS)} Allowed: {', '.join(COMPARE_KEYS)}")
        tokenizers = self.tokenizers(fields["tokenizers"][1] if "tokenizers" in fields else None, node)
        corpora: dict[str, CorpusSpec] = {}
        corpus_keys: dict[str, Node] = {}
        if "corpora" in fields and not _is_null(fields["corpora"][1]):
            corpora, corpus_keys = self.corpora(fields["corpora"][1])
        parallel = None
        if "parallel" in fields and not _is_null(fields["parallel"][1]):
            parallel = self.parallel(fields["parallel"][1])
        grid = None
        if "grid" in fields and not _is_null(fields["grid"][1]):
            grid = check_grid(self.ctx, fields["grid"][1])
        if not any(k in fields and not _is_empty(fields[k][1]) for k in ("corpora", "parallel", "grid")):
            at = fields["corpora"][1] if "corpora" in fields else node
            self.problems.add(at, "compare.corpora", f"{'missing' if 'corpora' not in fields else 'empty'}: the "
                                                     "corpora to compare on ({name: {path: ...}}), a parallel: set, "
                                                     "a grid:, or several")
        if parallel is not None:
            for name in corpora:
                if name in parallel.languages:
                    self.problems.add(corpus_keys[name], f"compare.corpora.{name}",
                                      f"{name!r} is also a language of the parallel set: rename the corpus")
        metrics = None
        if "metrics" in fields and not _is_null(fields["metrics"][1]):
            metrics = self.metrics(fields["metrics"][1], parallel="parallel" in fields and
                                   not _is_null(fields["parallel"][1]))
        samples = 5
        if "samples" in fields:
            value = coerce(fields["samples"][1], int, "compare.samples", self.problems, _AT_LEAST_ZERO)
            samples = 5 if value is INVALID else value
        if len(self.problems) > before or tokenizers is None:
            return None
        return CompareSpec(tokenizers, types.MappingProxyType(corpora), parallel, metrics, samples,
                           self.problems.where(node), grid)

    # -- tokenizers ---------------------------------------------------------------------------------------------
    def tokenizers(self, node: Node | None, parent: Node) -> tuple[ComponentSpec | LoadSpec, ...] | None:
        path = "compare.tokenizers"
        if node is None or _is_empty(node):
            self.problems.add(node if node is not None else parent, path,
                              "missing: the tokenizers to compare, label -> {type: ...}, {preset: ...} (trained on "
                              "the recipe's corpus) or {load: FILE}")
            return None
        if not isinstance(node, MappingNode):
            self.problems.add(node, path, f"expected a mapping of label -> stage, got {describe_node(node)}")
            return None
        specs: list[ComponentSpec | LoadSpec] = []
        ok = True
        for label, knode, vnode in mapping_items(node):
            lpath = join_path(path, label)
            why = bad_label(label)
            if why:
                self.problems.add(knode, lpath, why)
                ok = False
                continue
            if isinstance(vnode, MappingNode) and any(k == "load" for k, _, _ in mapping_items(vnode)):
                spec: Any = check_load(self.ctx, label, vnode, lpath)
            else:
                before = len(self.problems)
                spec = self.ctx.stage("tokenizer", path, label, vnode, lpath)
                spec = spec if len(self.problems) == before else None
            if spec is None:
                ok = False
            else:
                specs.append(spec)
        return tuple(specs) if ok else None

    # -- corpora ------------------------------------------------------------------------------------------------
    def corpora(self, node: Node) -> tuple[dict[str, CorpusSpec], dict[str, Node]]:
        path = "compare.corpora"
        if not isinstance(node, MappingNode):
            self.problems.add(node, path, "expected a mapping of name -> corpus ({name: {path: ...}}), got "
                                          f"{describe_node(node)}")
            return {}, {}
        out: dict[str, CorpusSpec] = {}
        keys: dict[str, Node] = {}
        for name, knode, vnode in mapping_items(node):
            spec = check_corpus(self.ctx, vnode, join_path(path, name), limits=True)
            keys[name] = knode
            if spec is not None:
                out[name] = spec
        return out, keys

    # -- the parallel set ---------------------------------------------------------------------------------------
    def parallel(self, node: Node) -> ParallelSpec | None:
        path = "compare.parallel"
        if not isinstance(node, MappingNode):
            self.problems.add(node, path, "expected a mapping {dataset: NAME or path: FOLDER, reference: LANG, "
                                          f"languages: [...]}}, got {describe_node(node)}")
            return None
        before = len(self.problems)
        fields: dict[str, tuple[Node, Node]] = {}
        for key, knode, vnode in mapping_items(node):
            if key in PARALLEL_KEYS:
                fields[key] = (knode, vnode)
            else:
                self.problems.add(knode, join_path(path, key), f"unknown key.{did_you_mean(key, PARALLEL_KEYS)} "
                                                               f"Allowed: {', '.join(PARALLEL_KEYS)}")
        sources = [k for k in ("dataset", "path") if k in fields]
        if not sources:
            self.problems.add(node, path, "needs dataset: NAME or path: FOLDER (one sub-folder per language)")
            return None
        if len(sources) > 1:
            self.problems.add(fields["path"][0], join_path(path, "path"), "give one of dataset:, path:, not both")
            return None
        source = sources[0]
        snode = fields[source][1]
        value = coerce(snode, str, join_path(path, source), self.problems)
        if "reference" not in fields:
            self.problems.add(node, join_path(path, "reference"), "missing: the language the premium divides by")
        reference = coerce(fields["reference"][1], str, join_path(path, "reference"), self.problems) \
            if "reference" in fields else INVALID
        languages = INVALID
        if "languages" in fields and not _is_null(fields["languages"][1]):
            languages = coerce(fields["languages"][1], list[str], join_path(path, "languages"), self.problems)
        errors = "strict"
        if "errors" in fields:
            errors = coerce(fields["errors"][1], Literal["strict", "replace"], join_path(path, "errors"), self.problems)
        sample = None
        if "sample_chapters" in fields and not _is_null(fields["sample_chapters"][1]):
            sample = coerce(fields["sample_chapters"][1], int, join_path(path, "sample_chapters"), self.problems,
                            _AT_LEAST_ONE)
        if value is INVALID:
            return None
        base = path_base(snode, self.base_dir)
        if source == "dataset":
            found = dataset_location(value, snode, join_path(path, source), self.problems, ("corpus_dir",))
            if found is None:
                return None
            if found == ():
                self.problems.add(snode, join_path(path, source), "tokembed.datasets is not available to find it")
                return None
            root = Path(found).absolute()  # type: ignore[arg-type]
        else:
            p = Path(value).expanduser()
            root = (p if p.is_absolute() else base / p).absolute()
            if not root.is_dir():
                rel = not p.is_absolute() and not from_override(snode)
                self.problems.add(snode, join_path(path, source),
                                  f"{value}: no such folder{'; paths are relative to the recipe file' if rel else ''}")
                return None
        found_langs = sorted(d.name for d in root.iterdir() if d.is_dir() and not d.name.startswith("."))
        if not found_langs:
            self.problems.add(snode, join_path(path, source), f"{value}: holds no language folder "
                                                              "(<lang>/<chapter>.txt)")
            return None
        if languages is INVALID:
            if "languages" in fields and not _is_null(fields["languages"][1]):
                return None
            # the reference first (when it is a language of the set), then the others in sorted order
            chosen = sorted(found_langs, key=lambda lang: (lang != reference, lang))
        else:
            chosen = self.languages(fields["languages"][1], list(languages), found_langs, join_path(path, "languages"))
            if chosen is None:
                return None
        if reference is INVALID:
            return None
        if reference not in chosen:
            where = "languages" if languages is not INVALID else "the languages of the set"
            self.problems.add(fields["reference"][1], join_path(path, "reference"),
                              f"{reference!r} is not one of {where}.{did_you_mean(reference, chosen)} "
                              f"Languages: {', '.join(chosen)}")
            return None
        chapters = self.chapters(root, chosen, reference, fields["languages"][1] if languages is not INVALID
                                 else snode, join_path(path, "languages" if languages is not INVALID else source))
        if chapters is None or len(self.problems) > before or errors is INVALID or sample is INVALID:
            return None
        if sample is not None:
            chapters = tuple(chapters[i] for i in spread(len(chapters), sample))
        return ParallelSpec(source, value, root, reference, tuple(chosen), chapters, errors, sample,
                            self.problems.where(node), base.absolute() if source == "path" else None)

    def languages(self, node: Node, names: list[str], found: list[str], path: str) -> list[str] | None:
        ok = True
        seen: set[str] = set()
        items = node.value if isinstance(node, SequenceNode) else []
        for i, name in enumerate(names):
            inode = items[i] if i < len(items) else node
            if name in seen:
                self.problems.add(inode, join_path(path, i), f"{name!r} is listed twice")
                ok = False
            elif name not in found:
                self.problems.add(inode, join_path(path, i), f"no language folder {name!r}.{did_you_mean(name, found)} "
                                                             f"Available: {', '.join(found)}")
                ok = False
            seen.add(name)
        if not names:
            self.problems.add(node, path, "expected at least one language (leave languages: out to use them all)")
            ok = False
        return names if ok else None

    def chapters(self, root: Path, languages: list[str], reference: str, node: Node,
                 path: str) -> tuple[str, ...] | None:
        """The chapter files, the same in every language (aligned by relative path), sorted."""
        def files(lang: str) -> set[str]:
            folder = root / lang
            return {f.relative_to(folder).as_posix() for f in folder.rglob("*")
                    if f.is_file() and not any(part.startswith(".") for part in f.relative_to(folder).parts)}

        ref = files(reference)
        if not ref:
            self.problems.add(node, path, f"the reference {reference!r} has no chapter file")
            return None
        ok = True
        for lang in languages:
            if lang == reference:
                continue
            have = files(lang)
            if have != ref:
                lacking, extra = sorted(ref - have), sorted(have - ref)
                parts = []
                if lacking:
                    parts.append(f"lacks {len(lacking)} of {reference}'s ({_few(lacking)})")
                if extra:
                    parts.append(f"has {len(extra)} that {reference} lacks ({_few(extra)})")
                self.problems.add(node, path, f"chapters are aligned by file name, but {lang} " + " and ".join(parts))
                ok = False
        return tuple(sorted(ref)) if ok else None

    # -- metrics ------------------------------------------------------------------------------------------------
    def metrics(self, node: Node, parallel: bool = True) -> tuple[str, ...] | None:
        path = "compare.metrics"
        names = coerce(node, list[str], path, self.problems)
        if names is INVALID:
            return None
        if not names:
            self.problems.add(node, path, "expected at least one metric (leave metrics: out to compute all)")
            return None
        items = node.value if isinstance(node, SequenceNode) else []
        ok = True
        seen: set[str] = set()
        columns: dict[str, str] = {}  # metric name -> the item that names it ("strr" and "strr:words.txt")
        for i, name in enumerate(names):
            inode = items[i] if i < len(items) else node
            if name in seen:
                self.problems.add(inode, join_path(path, i), f"{name!r} is listed twice")
                ok = False
                continue
            seen.add(name)
            base, colon, value = name.partition(":")  # name:ARGUMENT (Metric.configure)
            try:
                cls = self.registry.metric(base).cls
            except UnknownComponentError as exc:
                self.problems.add(inode, join_path(path, i), str(exc))
                ok = False
                continue
            problem = None
            if base in columns:
                problem = f"{columns[base]!r} is listed too, and both are the column {base!r}: keep one"
            elif getattr(cls, "scope", "corpus") == "parallel" and not parallel:
                problem = (f"{base!r} is measured across the languages of a parallel: set, and this comparison has "
                           "none, so it would have no value")
            else:
                try:
                    if colon:
                        cls.configure(value).check_argument(value)
                    elif cls.argument_required:
                        problem = f"metric {base!r} needs {cls.argument}: name it as {base}:VALUE"
                except TokembedError as exc:
                    problem = str(exc)
            columns.setdefault(base, name)
            if problem is not None:
                self.problems.add(inode, join_path(path, i), problem)
                ok = False
        return tuple(names) if ok else None


def _is_empty(node: Node) -> bool:
    return _is_null(node) or (isinstance(node, (MappingNode, SequenceNode)) and not node.value)


def _few(names: list[str], n: int = 3) -> str:
    return ", ".join(names[:n]) + (f", ... {len(names) - n} more" if len(names) > n else "")


def check_compare(ctx: Context, node: Node) -> CompareSpec | None:
    """Check the ``compare:`` section; return the :class:`CompareSpec`, or None after recording every problem."""
    return _CompareChecker(ctx).section(node)
