"""The specs of a recipe's ``compare:`` section: :class:`CompareSpec` and the :class:`LoadSpec` (a tokenizer
read from a file), :class:`ParallelSpec` (a parallel set) and :class:`GridSpec` (tokenizers x embedders) it holds.

Import these from :mod:`tokembed.recipe`.
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from dataclasses import field as _field
from pathlib import Path
from typing import Any, Literal, Mapping

from ..errors import RecipeError
from .params import plain_data
from .specs import ComponentSpec, CorpusSpec

__all__ = ["LoadSpec", "ParallelSpec", "GridSpec", "CompareSpec"]


@dataclass(frozen=True)
class LoadSpec:
    """A pretrained tokenizer of a ``compare:`` recipe, read from a file (``{load: FILE}``) instead of trained.

    Attributes
    ----------
    label : str
        The recipe's name for it (the key under ``compare.tokenizers``).
    source : {"path", "dataset"}
        ``load: PATH`` (or ``load: {path: PATH}``), or ``load: {dataset: NAME}`` (a fetched tokenizer file).
    value : str
        The path as written, or the dataset's name.
    path : Path
        The file, absolute.
    format : {"tokembed", "tiktoken", "hf_json", "vocab_txt", "sentencepiece", "vocab_merges"}
        What the file is: a saved tokembed tokenizer (``*.tokembed.json``), tiktoken BPE ranks (``*.tiktoken``),
        a Hugging Face ``tokenizer.json``, a WordPiece ``vocab.txt`` (one token per line), or a ``vocab.json``
        (``path``) with its ``merges.txt`` (``merges``), given as ``load: {vocab: FILE, merges: FILE}``.
    type : str
        The tokenizer type that reads it: the file's own type for ``tokembed``; for the other formats the
        recipe's ``type:``, else the one installed tokenizer whose ``load_formats`` lists the file's format.
    loader : str
        ``load`` for ``tokembed`` files; otherwise the format's classmethod
        (:data:`tokembed.export.LOAD_FORMATS`), called as ``cls.loader(str(path), **params)``.
    params : Mapping[str, Any]
        Read-only keyword arguments of the loader, typed by its signature (empty for ``tokembed`` files).
    location : str
        ``FILE:LINE:COL`` of the stage.
    cls : type
        The tokenizer class from the registry.

    Notes
    -----
    The recipe check reads the file (:func:`tokembed.recipe.load.read_tokenizer`), so that a file the reader
    rejects is a recipe problem found before any training, and keeps the tokenizer in :attr:`Recipe.kept`;
    :func:`tokembed.recipe.load.load_tokenizer` hands it over, so a run reads each file once.
    """

    label: str
    source: Literal["path", "dataset"]
    value: str
    path: Path
    format: Literal["tokembed", "tiktoken", "hf_json", "vocab_txt", "sentencepiece", "vocab_merges"]
    type: str
    loader: str
    params: Mapping[str, Any] = _field(default_factory=lambda: types.MappingProxyType({}), hash=False)
    location: str = _field(default="", compare=False)
    cls: type | None = _field(default=None, repr=False, compare=False)
    merges: Path | None = None
    #: ``encode:`` of a ``tokenizers:`` stage of a run recipe (:class:`~tokembed.recipe.specs.EncodeSpec`).
    encode: Any = None
    kind = "tokenizer"

    def build(self) -> Any:
        """A ``{load:}`` stage is read, not built: raises :class:`~tokembed.errors.RecipeError` saying how to get
        its tokenizer (:func:`tokembed.recipe.load.load_tokenizer`)."""
        raise RecipeError(f"{self.location}: {self.label}: read from {self.path}, not built from parameters; get the "
                          "tokenizer with tokembed.recipe.load.load_tokenizer(spec, recipe.kept)")

    def as_dict(self) -> dict[str, Any]:
        """The stage as the resolved recipe writes it: ``load`` (an absolute path, or ``{dataset: NAME}``), the
        ``type`` for formats other than ``tokembed``, then the loader's parameters sorted by name."""
        out: dict[str, Any] = {"load": {"dataset": self.value} if self.source == "dataset" else str(self.path)}
        if self.merges is not None:
            out["load"] = {"vocab": str(self.path), "merges": str(self.merges)}
        if self.format != "tokembed":
            out["type"] = self.type
        for name in sorted(self.params):
            out[name] = plain_data(self.params[name])
        if self.encode is not None:
            out["encode"] = self.encode.as_dict()
        return out


@dataclass(frozen=True)
class ParallelSpec:
    """The parallel set of a ``compare:`` recipe: one folder per language, the same chapter files in each.

    Attributes
    ----------
    source : {"path", "dataset"}
    value : str
        The folder as written, or the dataset's name (``multilingual``).
    root : Path
        The folder holding one sub-folder per language, absolute.
    reference : str
        The language the premium divides by.
    languages : tuple of str
        The languages compared, reference included, in the recipe's order (default: every sub-folder, sorted).
    chapters : tuple of str
        The chapter files (paths relative to a language folder, ``/``-separated, sorted), the same in every
        language; after ``sample_chapters`` when it is set.
    errors : {"strict", "replace"}
        What undecodable bytes do.
    sample_chapters : int or None
        Keep this many chapters spread evenly over the sorted list (chapter ``i * total // n``).
    location : str
        ``FILE:LINE:COL`` of the ``parallel:`` mapping.
    base : Path or None
        ``path`` sources: the folder a relative ``value`` is resolved against.
    """

    source: Literal["path", "dataset"]
    value: str
    root: Path
    reference: str
    languages: tuple[str, ...]
    chapters: tuple[str, ...]
    errors: Literal["strict", "replace"] = "strict"
    sample_chapters: int | None = None
    location: str = _field(default="", compare=False)
    base: Path | None = _field(default=None, compare=False)

    @property
    def name(self) -> str:
        """A label for reports: the dataset's name or the folder's name."""
        return self.value if self.source == "dataset" else (self.root.name or str(self.root))

    def describe(self) -> str:
        """``dataset:multilingual (4 languages, reference en-US, 40 chapters)``."""
        return (f"{self.source}:{self.value} ({len(self.languages)} languages, reference {self.reference}, "
                f"{len(self.chapters)} chapters)")

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {self.source: self.value if self.source == "dataset" else str(self.root),
                               "reference": self.reference, "languages": list(self.languages),
                               "errors": self.errors}
        if self.sample_chapters is not None:
            out["sample_chapters"] = self.sample_chapters
        return out


@dataclass(frozen=True)
class GridSpec:
    """The ``compare.grid:`` part: every embedder trained over every tokenizer's token sequences of the recipe's
    corpus, each cell's word vectors scored on the evaluation sets.

    Attributes
    ----------
    embedders : tuple of ComponentSpec
        The embedders (kind ``embedder``, no ``input:``), in recipe order (the order of the columns).
    sets : tuple of str
        Evaluation dataset names (word pairs and analogies).
    compose : {"mean", "sum", "fasttext"}
        How an evaluation word split into several pieces gets its vector (:mod:`tokembed.pieces`).
    save_vectors : bool
        Write each cell's piece vectors (``grid/<tokenizer>.<embedder>.vectors.npz``: ``keys`` and ``vectors``).
    location : str
        ``FILE:LINE:COL`` of the ``grid:`` mapping.
    """

    embedders: tuple[ComponentSpec, ...]
    sets: tuple[str, ...]
    compose: str = "mean"
    save_vectors: bool = True
    location: str = _field(default="", compare=False)

    def as_dict(self) -> dict[str, Any]:
        return {"embedders": {s.label: s.as_dict() for s in self.embedders}, "sets": list(self.sets),
                "compose": self.compose, "save_vectors": self.save_vectors}


@dataclass(frozen=True)
class CompareSpec:
    """The ``compare:`` section: tokenizers compared side by side on corpora and, optionally, a parallel set.

    Attributes
    ----------
    tokenizers : tuple of ComponentSpec or LoadSpec
        In recipe order (the order of the tables). A :class:`ComponentSpec` is trained once on the recipe's
        ``corpus:``; a :class:`LoadSpec` is read from a file.
    corpora : Mapping[str, CorpusSpec]
        Read-only; evaluation corpora by name, in recipe order.
    parallel : ParallelSpec or None
    metrics : tuple of str or None
        The metrics to compute, in table order; None: every registered metric.
    samples : int
        Sample sentences per corpus in the report (>= 0).
    location : str
        ``FILE:LINE:COL`` of the ``compare:`` mapping.
    grid : GridSpec or None
        Tokenizers x embedders: word vectors trained over each tokenizer's output and scored.
    """

    tokenizers: tuple[ComponentSpec | LoadSpec, ...]
    corpora: Mapping[str, CorpusSpec] = _field(default_factory=lambda: types.MappingProxyType({}), hash=False)
    parallel: ParallelSpec | None = None
    metrics: tuple[str, ...] | None = None
    samples: int = 5
    location: str = _field(default="", compare=False)
    grid: GridSpec | None = None

    @property
    def trained(self) -> tuple[ComponentSpec, ...]:
        """The tokenizers trained on the recipe's corpus, in recipe order."""
        return tuple(s for s in self.tokenizers if isinstance(s, ComponentSpec))

    @property
    def loaded(self) -> tuple[LoadSpec, ...]:
        """The tokenizers read from files, in recipe order."""
        return tuple(s for s in self.tokenizers if isinstance(s, LoadSpec))

    def describe(self) -> str:
        """``compare 3 tokenizers (2 trained, 1 loaded) on 1 corpus and 4 languages (parallel multilingual)``."""
        n = len(self.tokenizers)
        text = (f"compare {n} tokenizer{'s' if n != 1 else ''} ({len(self.trained)} trained, {len(self.loaded)} "
                "loaded) on ")
        parts = []
        if self.corpora:
            parts.append(f"{len(self.corpora)} corp{'ora' if len(self.corpora) != 1 else 'us'}")
        if self.parallel is not None:
            parts.append(f"{len(self.parallel.languages)} languages (parallel {self.parallel.name})")
        if self.grid is not None:
            n_emb = len(self.grid.embedders)
            parts.append(f"a grid with {n_emb} embedder{'s' if n_emb != 1 else ''} and {len(self.grid.sets)} "
                         f"evaluation set{'s' if len(self.grid.sets) != 1 else ''}")
        return text + " and ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tokenizers": {s.label: s.as_dict() for s in self.tokenizers}}
        if self.corpora:
            out["corpora"] = {name: spec.as_dict() for name, spec in self.corpora.items()}
        if self.parallel is not None:
            out["parallel"] = self.parallel.as_dict()
        if self.metrics is not None:
            out["metrics"] = list(self.metrics)
        out["samples"] = self.samples
        if self.grid is not None:
            out["grid"] = self.grid.as_dict()
        return out
