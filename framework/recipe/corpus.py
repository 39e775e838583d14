"""The ``corpus:`` section of a recipe: one source (a path, a bundled text or a named dataset) and its options.

Paths are expanded here with :func:`tokembed.corpus.expand_paths`, so a corpus that names no file is an error
before any work. Private to :mod:`tokembed.recipe`.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, Literal

from yaml.nodes import MappingNode, Node

from ..corpus import ERROR_MODES, FORMATS, UNITS, builtin_names, implied_format
from ..errors import TokembedError
from .context import Context
from .nodes import (
    Problems,
    describe_node,
    did_you_mean,
    from_override,
    join_path,
    mapping_items,
    path_base,
)
from ..params import Interval
from .params import INVALID, coerce
from .specs import CorpusSpec

__all__ = ["ENCODED", "check_encoded", "check_encoded_stages", "CORPUS_SOURCES", "CORPUS_OPTIONS", "CORPUS_LIMITS", "check_corpus", "builtin_corpus_names",
           "dataset_location"]

CORPUS_SOURCES = ("path", "builtin", "dataset")
#: Corpus options and their types, derived from the reader table of :mod:`tokembed.corpus` (``FORMATS`` and the
#: options each format reads, ``UNITS``, ``ERROR_MODES``).
CORPUS_OPTIONS: dict[str, Any] = {
    "format": Literal[tuple(FORMATS)],
    **{name: hint for fmt in FORMATS.values() for name, hint in fmt.options.items()},
    "errors": Literal[ERROR_MODES],
    "unit": Literal[UNITS],
}
#: Options that bound the documents read (at most one of them), each an int >= 1. Only the corpora of a
#: ``compare:`` recipe take them (``tokembed run`` reads its whole corpus).
CORPUS_LIMITS: dict[str, Any] = {"max_lines": int, "sample_lines": int}
_AT_LEAST_ONE = Interval(int, 1, None)


def builtin_corpus_names() -> list[str]:
    """Names accepted by ``corpus: {builtin: NAME}`` (from :func:`tokembed.corpus.builtin_names`)."""
    return list(builtin_names())



def check_corpus(ctx: Context, node: Node, where: str = "corpus", limits: bool = False,
                 encoded: bool = False) -> CorpusSpec | None:
    """The ``corpus:`` mapping (or another corpus mapping, at the dotted path ``where``) as a :class:`CorpusSpec`,
    or None after recording its problems.

    A relative ``path:`` is resolved against ``base_dir`` (the recipe's folder), or against the current directory
    when the value comes from ``--set``. ``limits``: accept :data:`CORPUS_LIMITS` (the corpora of a compare recipe).
    ``encoded``: accept ``{encoded: DIR}`` (the corpus of a run recipe), checked by :func:`check_encoded`.
    """
    problems, base_dir = ctx.problems, ctx.base_dir
    if not isinstance(node, MappingNode):
        problems.add(node, where, "expected a mapping: {builtin: NAME}, {path: FILE_OR_GLOB} or "
                                  f"{{dataset: NAME}}, got {describe_node(node)}")
        return None
    if any(key == ENCODED for key, _, _ in mapping_items(node)):
        if encoded:
            return check_encoded(ctx, node, where)
        knode = next(k for key, k, _ in mapping_items(node) if key == ENCODED)
        problems.add(knode, join_path(where, ENCODED), "only the corpus: of a tokembed run recipe may be an encoded "
                                                       "folder; here the tokenizers read text")
        return None
    allowed = [*CORPUS_SOURCES, *CORPUS_OPTIONS, *(CORPUS_LIMITS if limits else ())]
    sources = []
    options: dict[str, tuple[Node, Any]] = {}  # key -> (value node, typed value or INVALID)
    ok = True
    for key, knode, vnode in mapping_items(node):
        path = join_path(where, key)
        if key in CORPUS_SOURCES:
            sources.append((key, knode, vnode))
        elif key in CORPUS_OPTIONS or (limits and key in CORPUS_LIMITS):
            hint = CORPUS_OPTIONS.get(key) or CORPUS_LIMITS[key]
            value = coerce(vnode, hint, path, problems, _AT_LEAST_ONE if key in CORPUS_LIMITS else None)
            ok = ok and value is not INVALID
            options[key] = (vnode, value)
        elif key in CORPUS_LIMITS:
            problems.add(knode, path, "only the corpora of a compare recipe take it: tokembed run reads the whole "
                                      "corpus (cut the file instead)")
            ok = False
        else:
            problems.add(knode, path, f"unknown corpus key.{did_you_mean(key, allowed)} Allowed: {', '.join(allowed)}")
            ok = False
    if not sources:
        problems.add(node, where, "needs one of path:, builtin: or dataset:")
        return None
    if len(sources) > 1:
        (first, _, _), (second, second_key, _) = sources[:2]
        problems.add(second_key, join_path(where, second),
                     f"give one of path:, builtin:, dataset:, not both {first}: and {second}:")
        return None
    limits = [k for k in CORPUS_LIMITS if k in options]
    if len(limits) > 1:
        problems.add(options[limits[1]][0], join_path(where, limits[1]),
                     f"give one of {', '.join(CORPUS_LIMITS)}, not both")
        ok = False
    source, _, vnode = sources[0]
    spath = join_path(where, source)
    value = coerce(vnode, str, spath, problems)
    if value is INVALID:
        return None

    def option(key: str, default: Any) -> Any:
        found = options.get(key, (None, None))[1]
        return default if found is None or found is INVALID else found

    implied = implied_format(value) if source == "path" else "text"
    fmt = option("format", implied)
    spec_fmt = FORMATS.get(fmt)
    if spec_fmt is not None:
        if fmt != "text" and source == "builtin":
            problems.add(options["format"][0], join_path(where, "format"), "the bundled texts are plain text")
            ok = False
        else:
            for key, what in spec_fmt.required.items():
                if key not in options:
                    problems.add(node, join_path(where, key), f"missing: format {fmt} needs {what}")
                    ok = False
        if not spec_fmt.units and "unit" in options and options["unit"][1] is not INVALID:
            problems.add(options["unit"][0], join_path(where, "unit"),
                         f"applies to text; in {fmt} each record is a document")
            ok = False
        for key in options:
            owners = [name for name, f in FORMATS.items() if key in f.options]
            if owners and fmt not in owners:
                problems.add(options[key][0], join_path(where, key), f"only used with format: {' or '.join(owners)}")
                ok = False

    paths: tuple[Path, ...] = ()
    base = path_base(vnode, base_dir)
    if source == "builtin":
        names = builtin_corpus_names()
        if value not in names:
            problems.add(vnode, spath, f"unknown bundled text {value!r}.{did_you_mean(value, names)} "
                                       f"Available: {', '.join(names)}")
            ok = False
    elif source == "path":
        found = _expand(value, base, vnode, spath, problems)
        if found is None:
            ok = False
        else:
            paths = found
    else:
        found = _dataset(value, vnode, spath, problems)
        if found is None:
            ok = False
        else:
            paths = found
    if ok and paths:
        ok = _check_starts(paths, option("errors", "strict"), vnode, spath, problems)
    if not ok:
        return None
    return CorpusSpec(source, value, paths, fmt, option("field", None), option("errors", "strict"),
                      option("unit", "line"), problems.where(node), base.absolute() if source == "path" else None,
                      option("max_lines", None), option("sample_lines", None))


#: The corpus key of a folder written by ``tokembed encode`` (token ids, read mapped).
ENCODED = "encoded"


def check_encoded(ctx: Context, node: MappingNode, where: str = "corpus") -> CorpusSpec | None:
    """``corpus: {encoded: DIR}``: a folder ``tokembed encode`` wrote in its ``tokembed`` layout, relative to the
    recipe's folder (the current directory for a ``--set`` value). Only its manifest is read (never the ids): the
    spec keeps the tokenizer's digest, which :mod:`tokembed.recipe.check` compares with a tokenizer read with ``load:``.
    None after recording the problems."""
    from ..encoded import TOKENIZER_FILE, read_manifest
    from ..errors import ArtifactError

    problems = ctx.problems
    vnode = None
    for key, knode, value in mapping_items(node):
        if key == ENCODED:
            vnode = value
        else:
            problems.add(knode, join_path(where, key), "not used with encoded: (the folder holds token ids; how "
                                                       "its text was read was fixed by tokembed encode)")
    assert vnode is not None
    path = join_path(where, ENCODED)
    value = coerce(vnode, str, path, problems)
    if value is INVALID:  # a key beside encoded: (recorded above) still lets the folder and the stages be checked
        return None
    if not value.strip():
        problems.add(vnode, path, "empty: name the folder tokembed encode --out wrote")
        return None
    base = path_base(vnode, ctx.base_dir)
    folder = Path(value).expanduser()
    folder = (folder if folder.is_absolute() else base / folder).absolute()
    try:
        manifest = read_manifest(folder)
    except ArtifactError as exc:
        relative = not Path(value).expanduser().is_absolute() and not from_override(vnode)
        problems.add(vnode, path, str(exc) + ("; paths are relative to the recipe file" if relative else ""))
        return None
    layout = manifest.get("layout")
    if layout != "tokembed":
        problems.add(vnode, path, f"{value}: holds the {layout!r} layout; a recipe reads the tokembed layout "
                                  "(tokembed encode --format tokembed, the default)")
        return None
    tok = manifest.get("tokenizer")
    digest = tok.get("sha256") if isinstance(tok, dict) else None
    if not isinstance(digest, str) or not (folder / TOKENIZER_FILE).is_file():
        problems.add(vnode, path, f"{value}: its manifest names no tokenizer digest, or {TOKENIZER_FILE} is missing "
                                  "(a changed folder): encode the corpus again")
        return None
    own = hashlib.sha256((folder / TOKENIZER_FILE).read_bytes()).hexdigest()
    if own != digest:  # the run would decode the ids (and check embedders) with another tokenizer
        problems.add(vnode, path, f"{value}: its {TOKENIZER_FILE} (digest {own}) is not the tokenizer that encoded "
                                  f"the folder (digest {digest}, in its encoded.json): a changed folder; encode the "
                                  "corpus again")
        return None
    return CorpusSpec(ENCODED, value, (folder,), location=problems.where(node), base=base.absolute(),
                      digest=digest)


def check_encoded_stages(ctx: Context, corpus: CorpusSpec, tokenizers: tuple[Any, ...], embedders: tuple[Any, ...],
                         nodes: dict[tuple[str, str], dict[str, Node]], engine: tuple[Node, Node] | None = None,
                         unit: Node | None = None) -> None:
    """The stages of a recipe that starts from token ids (``corpus: {encoded: DIR}``): no tokenizer is trained or
    encodes (there is no text), a tokenizer read with ``load:`` is the one that encoded the folder (its digest
    against the manifest's, :func:`tokembed.encode.tokenizer_digest`), and nothing asks for the corpus's text: an
    embedder's ``batch:``, ``vectorizers.unit`` (its node ``unit``), an ``engine:`` (its key and value nodes).
    ``nodes``: (section, label) -> the stage's nodes (``"<stage>"``, ``"load"``, ``"encode"``)."""
    from ..encode import tokenizer_digest
    from .compare_specs import LoadSpec

    problems, folder = ctx.problems, corpus.value
    for spec in tokenizers:
        at = nodes.get(("tokenizers", spec.label), {})
        if getattr(spec, "encode", None) is not None:
            problems.add(at.get("encode") or at["<stage>"], f"tokenizers.{spec.label}.encode",
                         f"corpus: is already encoded ({folder}): there is no text to encode")
        if not isinstance(spec, LoadSpec):
            problems.add(at["<stage>"], f"tokenizers.{spec.label}",
                         f"trains a tokenizer, but corpus: is an encoded folder ({folder}): token ids, no text to "
                         "train on. Drop the stage (the folder's own tokenizer is used) or load the tokenizer that "
                         "encoded it: {load: " + f"{folder}/tokenizer.tokembed.json}}")
            continue
        kept = ctx.kept.get(spec.label)
        if kept is None:
            continue
        try:
            digest = tokenizer_digest(kept[0])
        except Exception as exc:  # a plugin whose save breaks: say so here rather than mid-run
            problems.add(at["load"], f"tokenizers.{spec.label}.load",
                         f"cannot compute the tokenizer's digest: {type(exc).__name__}: {exc}")
            continue
        if digest != corpus.digest:
            problems.add(at["load"], f"tokenizers.{spec.label}.load",
                         f"{spec.value}: this tokenizer's digest {digest} is not the digest of the tokenizer that "
                         f"encoded corpus.encoded {folder} ({corpus.digest}, in its encoded.json): the ids would "
                         "mean other tokens; load the tokenizer saved in the folder, or drop this stage (the "
                         "folder's own tokenizer is used)")
    for spec in embedders:
        if spec.batch is not None:
            problems.add(nodes.get(("embedders", spec.label), {}).get("<stage>"), f"embedders.{spec.label}.batch",
                         "encodes the corpus's first lines of text, and corpus: is an encoded folder (token ids): "
                         "drop batch:")
    if unit is not None:
        problems.add(unit, "vectorizers.unit", "reads the corpus's text by another unit, and corpus: is an encoded "
                                               "folder (its documents are fixed): drop unit:")
    if engine is not None:
        problems.add(engine[1], "engine", "counts text partitions on its workers, and corpus: is an encoded folder, "
                                          "read mapped on this machine: drop engine:")


#: At most this many unreadable files are reported one by one; the rest are counted.
_MAX_BAD_FILES = 5


def _check_starts(paths: tuple[Path, ...], errors: str, node: Node, path: str, problems: Problems) -> bool:
    """Read the first bytes of every file (:func:`tokembed.corpus.check_file_start`), so that a binary, Latin-1 or
    UTF-16 file is reported now rather than after the work before it; False after recording the problems."""
    from ..corpus import check_file_start
    from ..errors import CorpusError

    bad = []
    blank = 0
    for file in paths:
        try:
            blank += check_file_start(file, errors)
        except CorpusError as exc:
            bad.append(str(exc))
    if paths and blank == len(paths):
        what = f"{paths[0].name} is" if len(paths) == 1 else f"all {len(paths)} files are"
        problems.add(node, path, f"{what} empty or blank: the corpus has no document to train on")
        return False
    for message in bad[:_MAX_BAD_FILES]:
        problems.add(node, path, message)
    if len(bad) > _MAX_BAD_FILES:
        problems.add(node, path, f"and {len(bad) - _MAX_BAD_FILES} more files that cannot be read as UTF-8 text")
    return not bad


def _expand(value: str, base: Path | None, node: Node, path: str, problems: Problems) -> tuple[Path, ...] | None:
    """The files ``value`` names (absolute, sorted), or None after recording why there are none."""
    from ..corpus import expand_paths
    from ..errors import CorpusError

    if not value.strip():
        problems.add(node, path, "empty path: name a file, a folder or a glob")
        return None
    try:
        return tuple(p.absolute() for p in expand_paths(value, base))
    except (OSError, RuntimeError) as exc:  # ~unknownuser, a folder that cannot be read, ...
        problems.add(node, path, f"cannot read {value!r}: {getattr(exc, 'strerror', None) or exc}")
        return None
    except CorpusError as exc:
        relative = base is not None and not os.path.isabs(os.path.expanduser(value)) and not from_override(node)
        problems.add(node, path, str(exc) + ("; paths are relative to the recipe file" if relative else ""))
        return None


def _dataset(name: str, node: Node, path: str, problems: Problems) -> tuple[Path, ...] | None:
    """Files of a named dataset; () when :mod:`tokembed.datasets` is absent (it cannot be checked here); None,
    after recording the problem, for an unknown or unfetched dataset."""
    found = dataset_location(name, node, path, problems, kinds=("corpus", "corpus_dir"))
    if found is None or found == ():
        return found  # type: ignore[return-value]
    return _expand(str(found), None, node, path, problems)


#: Dataset kinds (:data:`tokembed.datasets.KINDS`) as the words of a message: "dataset 'prose_mix' is a text
#: corpus, not a word-pair set or an analogy set".
_KIND_WORDS = {
    "corpus": "a text corpus",
    "corpus_dir": "a folder of texts",
    "word_pairs": "a word-pair set",
    "analogies": "an analogy set",
    "tokenizer_file": "a tokenizer file",
    "vectors": "word vectors",
}


def _kind_words(kind: str) -> str:
    return _KIND_WORDS.get(kind, f"a dataset of kind {kind}")


def dataset_location(name: str, node: Node, path: str, problems: Problems,
                     kinds: tuple[str, ...] = ()) -> Path | tuple[()] | None:
    """Where the fetched dataset ``name`` is (a file or a folder); ``()`` when :mod:`tokembed.datasets` is absent
    (nothing can be checked); None, after recording the problem, for an unknown or unfetched dataset or, when
    ``kinds`` is given, a dataset of another kind (``corpus``, ``corpus_dir``, ``tokenizer_file``, ...)."""
    try:
        from .. import datasets
    except ImportError:
        return ()
    names = getattr(datasets, "DATASETS", None)
    locate = getattr(datasets, "dataset_path", None)
    if names is None or locate is None:
        return ()
    choices = sorted(n for n in names if not kinds or getattr(names[n], "kind", None) in kinds)
    if name not in choices:
        if name in names:
            wanted = " or ".join(_kind_words(k) for k in kinds)
            problems.add(node, path, f"dataset {name!r} is {_kind_words(names[name].kind)}, not {wanted}. "
                                     f"Datasets of {'that kind' if len(kinds) == 1 else 'those kinds'}: "
                                     f"{', '.join(choices) or '(none)'}")
        else:
            problems.add(node, path, f"unknown dataset {name!r}.{did_you_mean(name, choices)} "
                                     f"Available: {', '.join(choices)}")
        return None
    try:
        return Path(locate(name))
    except TokembedError as exc:  # DataError: not fetched yet, with the command that fetches it
        problems.add(node, path, str(exc))
        return None


# -- reading ------------------------------------------------------------------------------------------------------
