"""The validated, frozen result of loading a recipe: :class:`Recipe` and the specs of its stages (corpus,
components, the vectorizer pipeline, batches); the ``compare:`` section's specs are in
:mod:`tokembed.recipe.compare_specs` (:class:`Recipe` names :class:`CompareSpec` in an annotation only).

Import these from :mod:`tokembed.recipe`.
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from dataclasses import field as _field
from pathlib import Path
from typing import Any, Literal, Mapping

from ..errors import RecipeError
from .params import class_params, plain_data, thaw

__all__ = ["BatchSpec", "EncodeSpec", "CorpusSpec", "ComponentSpec", "PipelineSpec", "Recipe", "SECTIONS"]

#: Recipe section -> component kind.
SECTIONS: dict[str, str] = {"tokenizers": "tokenizer", "vectorizers": "vectorizer", "embedders": "embedder"}


@dataclass(frozen=True)
class BatchSpec:
    """Which sample an embedder encodes and embeds (``batch:`` of an embedder stage).

    Attributes
    ----------
    lines : int
        The first ``lines`` documents of the corpus (>= 1).
    padding : {"longest", "max_length"} or False
        Pad to the longest sequence of the batch, to ``max_length``, or not at all.
    truncation : bool
        Cut sequences longer than ``max_length``.
    max_length : int or None
        Length in tokens for ``padding="max_length"`` and ``truncation``.
    location : str
        ``FILE:LINE:COL`` of the ``batch:`` mapping.
    """

    lines: int = 32
    padding: Literal["longest", "max_length", False] = "longest"
    truncation: bool = False
    max_length: int | None = None
    location: str = _field(default="", compare=False)

    def as_dict(self) -> dict[str, Any]:
        return {"lines": self.lines, "padding": self.padding, "truncation": self.truncation,
                "max_length": self.max_length}


@dataclass(frozen=True)
class EncodeSpec:
    """Where a run writes the corpus's token ids with a fitted tokenizer (``encode:`` of a tokenizer stage), by
    :func:`tokembed.encode.encode_corpus`.

    Attributes
    ----------
    format : {"tokembed", "nanogpt", "megatron"}
        The layout (:mod:`tokembed.encoded`).
    out : Path or None
        The folder, absolute (relative to the recipe file as written); None: ``<label>.encoded`` in the run folder.
    eot_id : int or None
        The id written after each document (``nanogpt``: default the tokenizer's end-of-text token).
    location : str
        ``FILE:LINE:COL`` of ``encode:``.
    """

    format: str = "tokembed"
    out: Path | None = None
    eot_id: int | None = None
    location: str = _field(default="", compare=False)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"format": self.format}
        if self.out is not None:
            out["out"] = str(self.out)
        if self.eot_id is not None:
            out["eot_id"] = self.eot_id
        return out


@dataclass(frozen=True)
class CorpusSpec:
    """The corpus a recipe reads.

    Attributes
    ----------
    source : {"path", "builtin", "dataset", "encoded"}
        Where the documents come from (``encoded``: a folder ``tokembed encode`` wrote, token ids instead of text).
    value : str
        The path or glob as written, the bundled text's name, the dataset's name, or the encoded folder as
        written.
    paths : tuple of Path
        For ``path`` sources (and fetched datasets): the files, absolute, globs expanded and folders listed
        recursively in sorted order; empty for ``builtin``.
    format : {"text", "jsonl"}
    field : str or None
        The JSONL key holding each document (``jsonl`` only).
    errors : {"strict", "replace"}
        What undecodable bytes do.
    unit : {"line", "file"}
        For text: one document per line or per file.
    location : str
        ``FILE:LINE:COL`` of the ``corpus:`` mapping.
    base : Path or None
        ``path`` sources: the absolute folder a relative ``value`` is resolved against (the recipe's folder, or
        the current directory for a ``--set`` value).
    max_lines : int or None
        Read only the first ``max_lines`` documents (lines, or files with ``unit: file``, or JSONL records).
    sample_lines : int or None
        Read ``sample_lines`` documents spread evenly over the whole corpus (document ``i * total // n`` for
        ``i < n``; two passes: the first counts). At most one of ``max_lines`` and ``sample_lines`` is set.
    digest : str or None
        ``encoded`` sources: the SHA-256 of the tokenizer that wrote the folder, from its manifest
        (:func:`tokembed.encode.tokenizer_digest`); ``paths`` then holds the folder, absolute.
    """

    source: Literal["path", "builtin", "dataset", "encoded"]
    value: str
    paths: tuple[Path, ...] = ()
    format: Literal["text", "jsonl"] = "text"
    field: str | None = None
    errors: Literal["strict", "replace"] = "strict"
    unit: Literal["line", "file"] = "line"
    location: str = _field(default="", compare=False)
    base: Path | None = _field(default=None, compare=False)
    max_lines: int | None = None
    sample_lines: int | None = None
    digest: str | None = None

    @property
    def encoded(self) -> Path | None:
        """The encoded folder (absolute) of an ``encoded`` source, else None."""
        return self.paths[0] if self.source == "encoded" and self.paths else None

    def describe(self) -> str:
        """``builtin:moby-dick``, ``path:data/*.txt (3 files)``, ``dataset:prose_mix (20,000 lines sampled)``."""
        text = f"{self.source}:{self.value}"
        notes = []
        if self.source == "path":
            notes.append(f"{len(self.paths)} file{'s' if len(self.paths) != 1 else ''}")
        if self.max_lines is not None:
            notes.append(f"first {self.max_lines:,} lines")
        if self.sample_lines is not None:
            notes.append(f"{self.sample_lines:,} lines sampled")
        return text + (f" ({', '.join(notes)})" if notes else "")

    def absolute_value(self) -> str:
        """``value``, made absolute for ``path`` sources (``~`` expanded, joined to :attr:`base`)."""
        if self.source not in ("path", "encoded"):
            return self.value
        value = Path(self.value).expanduser()
        return str(value if value.is_absolute() or self.base is None else self.base / value)

    def as_dict(self) -> dict[str, Any]:
        if self.source == "encoded":  # token ids: how the text was read is the folder's own
            return {"encoded": self.absolute_value()}
        out: dict[str, Any] = {self.source: self.absolute_value(), "format": self.format}
        if self.format == "jsonl":
            out["field"] = self.field
        else:
            out["unit"] = self.unit
        out["errors"] = self.errors
        if self.max_lines is not None:
            out["max_lines"] = self.max_lines
        if self.sample_lines is not None:
            out["sample_lines"] = self.sample_lines
        return out


@dataclass(frozen=True)
class ComponentSpec:
    """One component of a recipe: a tokenizer, a vectorizer step or an embedder.

    Attributes
    ----------
    label : str
        The recipe's name for it (the key under ``tokenizers:``/``embedders:``; for a vectorizer step its type,
        suffixed ``-INDEX`` when the type repeats in the pipeline). Output files are named after it.
    kind : {"tokenizer", "vectorizer", "embedder"}
    type : str
        The registered component name.
    params : Mapping[str, Any]
        Read-only. The parameters the recipe (and its preset) set, typed; lists are tuples. Defaults are not
        filled in. Use :meth:`Recipe.build` to instantiate.
    input : str or None
        Embedders: the tokenizer label whose output they read. None for tokenizers and vectorizer steps (the
        pipeline's input is :attr:`PipelineSpec.input`).
    preset : str or None
        The preset the stage started from.
    batch : BatchSpec or None
        Embedders only.
    location : str
        ``FILE:LINE:COL`` of the stage.
    cls : type
        The component class from the registry.
    nearest : tuple of str
        Embedders: words whose nearest neighbours (in the fitted ``wv_``) a run prints.
    exports : tuple of str
        Tokenizers: the formats of :data:`tokembed.export.EXPORT_FORMATS` a run also writes the fitted tokenizer
        in (``export: [hf, tiktoken]``).
    encode : EncodeSpec or None
        Tokenizers: where the run writes the corpus's token ids once the tokenizer is fitted (``encode:``).
    """

    label: str
    kind: str
    type: str
    params: Mapping[str, Any] = _field(default_factory=lambda: types.MappingProxyType({}), hash=False)
    input: str | None = None
    preset: str | None = None
    batch: BatchSpec | None = None
    location: str = _field(default="", compare=False)
    cls: type | None = _field(default=None, repr=False, compare=False)
    nearest: tuple[str, ...] = ()
    exports: tuple[str, ...] = ()
    encode: EncodeSpec | None = None

    def as_dict(self) -> dict[str, Any]:
        """The stage as the resolved recipe writes it: type, input, parameters sorted by name, batch, nearest,
        export, encode."""
        out: dict[str, Any] = {"type": self.type}
        if self.input is not None:
            out["input"] = self.input
        for name in sorted(self.params):
            out[name] = plain_data(self.params[name])
        if self.batch is not None:
            out["batch"] = self.batch.as_dict()
        if self.nearest:
            out["nearest"] = list(self.nearest)
        if self.exports:
            out["export"] = list(self.exports)
        if self.encode is not None:
            out["encode"] = self.encode.as_dict()
        return out

    def build(self) -> Any:
        """A new, unfitted component: ``cls(**params)``, each list thawed to its annotated container.

        Raises
        ------
        RecipeError
            If the class rejects the parameters (a plugin whose ``__init__`` does more than store them).
        """
        if self.cls is None:
            raise RecipeError(f"{self.location}: {self.label}: no component class (spec built without a registry)")
        schema, _ = class_params(self.cls)
        kwargs = {k: thaw(v, schema[k].hint if k in schema else Any) for k, v in self.params.items()}
        try:
            return self.cls(**kwargs)
        except TypeError as exc:
            raise RecipeError(f"{self.location}: {self.label}: {self.cls.__qualname__}(...) failed: {exc}") from None


@dataclass(frozen=True)
class PipelineSpec:
    """The ``vectorizers:`` section: steps applied in order, the first to ``input``'s output.

    Attributes
    ----------
    input : str or None
        The tokenizer whose token sequences feed the first step; None: the raw documents (the first vectorizer
        splits them itself).
    steps : tuple of ComponentSpec
    location : str
    save_matrix : bool or "partitions"
        Write each step's output matrix into the run folder (``<label>.npz`` for sparse, ``<label>.npy`` for
        dense); False keeps only the fitted components (for huge corpora); ``"partitions"`` (with an engine, a
        one-step pipeline): each partition's rows written by the worker that transformed them,
        ``<label>.part-NNNNN.npz``, listed in ``<label>.parts.json``, the matrix never gathered.
    unit : {"line", "paragraph", "file"} or None
        What one document of the pipeline is, when it differs from the corpus's (the tokenizers train on lines,
        the vectorizers read paragraphs); None: the corpus's own documents.
    nearest : int or None
        Print the 5 documents nearest (by cosine) to this document (0-based) in the last step's output.
    nearest_location : str
        ``FILE:LINE:COL`` of ``nearest:`` (where a run reports a document number past the corpus's end).
    """

    input: str | None
    steps: tuple[ComponentSpec, ...]
    location: str = _field(default="", compare=False)
    save_matrix: bool | str = True
    unit: str | None = None
    nearest: int | None = None
    nearest_location: str = _field(default="", compare=False)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.input is not None:
            out["input"] = self.input
        if self.unit is not None:
            out["unit"] = self.unit
        if self.save_matrix is not True:
            out["save_matrix"] = self.save_matrix
        if self.nearest is not None:
            out["nearest"] = self.nearest
        out["steps"] = [s.as_dict() for s in self.steps]
        return out


@dataclass(frozen=True)
class Recipe:
    """A validated recipe: everything a run needs, with no raw YAML left.

    Attributes
    ----------
    path : Path or None
        The recipe file (None when loaded from a string).
    corpus : CorpusSpec or None
        The corpus tokenizers are trained on. None only in a ``compare:`` recipe whose tokenizers are all loaded
        from files.
    tokenizers : tuple of ComponentSpec
        In recipe order.
    vectorizers : PipelineSpec or None
    embedders : tuple of ComponentSpec
        In recipe order.
    output : Path or None
        The output folder (relative paths are relative to the current directory), None when the recipe sets
        none (the runner then picks one).
    overrides : tuple of str
        The ``--set`` arguments applied.
    registry : Registry
        The registry the recipe was checked against (used by :meth:`build`).
    compare : CompareSpec or None
        The ``compare:`` section (``tokembed compare``). A recipe with it has no tokenizers:, vectorizers: or
        embedders: of its own.
    evaluate : EvaluateSpec or None
        The ``evaluate:`` section: word-vector evaluation sets and pretrained vectors to score
        (:mod:`tokembed.recipe.evaluate`).
    kept : dict
        Tokenizers the recipe check read from the ``{load:}`` files of a compare recipe, label ->
        ``(tokenizer, seconds)``; :func:`tokembed.recipe.load.load_tokenizer` hands each over once.
    engine : EngineSpec or None
        The ``engine:`` section: where corpus statistics are counted (:mod:`tokembed.recipe.engine`); None
        fits every component with its own ``fit``, on this machine.
    """

    path: Path | None
    corpus: CorpusSpec | None
    tokenizers: tuple[ComponentSpec, ...] = ()
    vectorizers: PipelineSpec | None = None
    embedders: tuple[ComponentSpec, ...] = ()
    output: Path | None = None
    overrides: tuple[str, ...] = ()
    registry: Any = _field(default=None, repr=False, compare=False)
    compare: CompareSpec | None = None
    evaluate: Any = None
    kept: dict[str, tuple[Any, float]] = _field(default_factory=dict, repr=False, compare=False)
    engine: Any = None

    @property
    def components(self) -> tuple[ComponentSpec, ...]:
        """Every component: tokenizers, vectorizer steps, embedders, in that order."""
        steps = self.vectorizers.steps if self.vectorizers is not None else ()
        return (*self.tokenizers, *steps, *self.embedders)

    def component(self, ref: str | ComponentSpec) -> ComponentSpec:
        """The spec named ``SECTION.LABEL`` (``tokenizers.char``, ``embedders.position``, ``vectorizers.svd`` or
        ``vectorizers.1``; the singular kind works too), or a bare label when it is unique.

        Raises
        ------
        KeyError
            If nothing matches, naming what exists.
        """
        if isinstance(ref, ComponentSpec):
            return ref
        section, dot, label = str(ref).partition(".")
        section = {v: k for k, v in SECTIONS.items()}.get(section, section)
        if dot and section in SECTIONS:
            if section == "vectorizers":
                steps = self.vectorizers.steps if self.vectorizers is not None else ()
                if label.isdigit() and int(label) < len(steps):
                    return steps[int(label)]
                pool: tuple[ComponentSpec, ...] = steps
            else:
                pool = getattr(self, section)
            for spec in pool:
                if spec.label == label:
                    return spec
        else:
            found = [s for s in self.components if s.label == ref]
            if len(found) == 1:
                return found[0]
        names = ", ".join(f"{k}s.{s.label}" for s in self.components for k in [s.kind])
        raise KeyError(f"no component {ref!r} in this recipe; components: {names or '(none)'}")

    def build(self, ref: str | ComponentSpec) -> Any:
        """Instantiate the component ``ref`` names (see :meth:`component`) with its parameters, unfitted."""
        return self.component(ref).build()

    def describe(self) -> str:
        """One line: ``corpus builtin:moby-dick; 2 tokenizers, 1 embedder``."""
        counts = [(len(self.tokenizers), "tokenizer"),
                  (len(self.vectorizers.steps) if self.vectorizers else 0, "vectorizer"),
                  (len(self.embedders), "embedder")]
        parts = [f"{n} {word}{'s' if n != 1 else ''}" for n, word in counts if n]
        corpus = f"corpus {self.corpus.describe()}" if self.corpus is not None else "no training corpus"
        if self.compare is not None:
            return f"{corpus}; {self.compare.describe()}"
        if self.evaluate is not None:
            n = len(self.evaluate.sets)
            parts.append(f"evaluation on {n} set{'s' if n != 1 else ''}")
        return f"{corpus}; {', '.join(parts) or 'no components'}"

    def resolved(self) -> dict[str, Any]:
        """The recipe with presets expanded and overrides applied, as plain data (for ``recipe.resolved.yaml``).

        Sections in a fixed order (corpus, tokenizers, vectorizers, embedders, compare, evaluate, engine, output),
        stages in recipe order, parameters sorted by name; a corpus path made absolute, so the file works from any
        folder. Loading it again gives the same corpus files and components (``preset`` aside: its parameters are
        written out). Dump it with ``sort_keys=False`` (or use :meth:`resolved_yaml`).
        """
        out: dict[str, Any] = {}
        if self.corpus is not None:
            out["corpus"] = self.corpus.as_dict()
        if self.tokenizers:
            out["tokenizers"] = {s.label: s.as_dict() for s in self.tokenizers}
        if self.vectorizers is not None:
            out["vectorizers"] = self.vectorizers.as_dict()
        if self.embedders:
            out["embedders"] = {s.label: s.as_dict() for s in self.embedders}
        if self.compare is not None:
            out["compare"] = self.compare.as_dict()
        if self.evaluate is not None:
            out["evaluate"] = self.evaluate.as_dict()
        if self.engine is not None:
            out["engine"] = self.engine.as_dict()
        if self.output is not None:
            out["output"] = str(self.output)
        return out

    def resolved_yaml(self) -> str:
        """:meth:`resolved` as YAML text (keys in the order given, block style, UTF-8 characters kept)."""
        import yaml

        return yaml.safe_dump(self.resolved(), sort_keys=False, allow_unicode=True, default_flow_style=False,
                              width=110)
