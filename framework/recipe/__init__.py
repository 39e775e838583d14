"""Recipes: a YAML file -> a validated, frozen :class:`Recipe`, with every problem reported at once.

>>> from tokembed.recipe import load_recipe                      # doctest: +SKIP
>>> recipe = load_recipe("recipes/quickstart.yaml", overrides=["tokenizers.words.min_frequency=3"])
>>> recipe.describe()                                           # doctest: +SKIP
'corpus builtin:moby-dick; 2 tokenizers, 1 embedder'
>>> tok = recipe.build("tokenizers.words")                      # an unfitted component  # doctest: +SKIP

The format is documented in ``docs/recipes.md``. In short:

- The file is composed with PyYAML's safe loader into a node tree, so every value keeps its line and column;
  duplicate keys are errors.
- Each stage names a registered component (``type:``) or a preset (``preset:``); its other keys are parameters of
  the component class, checked against its ``__init__`` signature and annotations. Plain scalars are read against
  the parameter's type (``lang: no`` is ``"no"`` for a ``str``), not by YAML 1.1's implicit rules.
- Cross-stage checks (``input:`` names a tokenizer; an embedder's ``vocab_size``/``padding_idx`` agree with the
  tokenizer's plan) run before any work.
- A ``compare:`` recipe (``tokembed compare``) lists tokenizers to train or to read from files, corpora and a parallel
  set; its files, datasets and file readers are checked before any work too (:mod:`tokembed.recipe.compare`).
- Problems are collected and raised together as :class:`~tokembed.errors.RecipeError`, one
  ``FILE:LINE:COL: dotted.path: problem`` line each (``--set PATH=VALUE: ...`` for overrides).

Raw YAML never leaves this module: the result is made of the frozen dataclasses :class:`Recipe`,
:class:`CorpusSpec`, :class:`ComponentSpec`, :class:`PipelineSpec`, :class:`BatchSpec` and, for ``compare:``,
:class:`CompareSpec`, :class:`LoadSpec` and :class:`ParallelSpec`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..errors import RecipeError
from .check import BATCH_FIELDS, RESERVED, TOP_KEYS, check_recipe
from .compare import COMPARE_KEYS, PARALLEL_KEYS
from .corpus import CORPUS_LIMITS, CORPUS_OPTIONS, CORPUS_SOURCES
from .load import LOAD_KEYS
from .nodes import Problems, apply_override, check_tree, compose_text
from .compare_specs import CompareSpec, GridSpec, LoadSpec, ParallelSpec
from .specs import SECTIONS, BatchSpec, ComponentSpec, CorpusSpec, PipelineSpec, Recipe

__all__ = [
    "load_recipe",
    "load_recipe_string",
    "Recipe",
    "CorpusSpec",
    "ComponentSpec",
    "PipelineSpec",
    "BatchSpec",
    "CompareSpec",
    "LoadSpec",
    "ParallelSpec",
    "GridSpec",
    "TOP_KEYS",
    "SECTIONS",
    "RESERVED",
    "CORPUS_SOURCES",
    "CORPUS_OPTIONS",
    "CORPUS_LIMITS",
    "BATCH_FIELDS",
    "COMPARE_KEYS",
    "PARALLEL_KEYS",
    "LOAD_KEYS",
]


def load_recipe(
    path: str | os.PathLike,
    overrides: Iterable[str] = (),
    out: str | os.PathLike | None = None,
    registry: Any = None,
    engine: Mapping[str, Any] | None = None,
) -> Recipe:
    """Load, check and resolve a recipe file.

    Parameters
    ----------
    path : str or PathLike
        The YAML recipe. Messages name it as given; a corpus ``path:`` is resolved relative to its folder.
    overrides : iterable of str
        ``dotted.path=value`` strings (``--set``), applied in order before checking. The value is read as YAML
        (``100``, ``null``, ``[a, b]``, ``{type: char}``) and typed by the schema like a value in the file; the
        last path element is created if its parent exists.
    out : str or PathLike, optional
        Output folder; replaces the recipe's ``output:`` (``--out``).
    registry : Registry, optional
        The component registry; built with :func:`tokembed.registry.build_registry` when None.
    engine : mapping, optional
        ``engine:`` keys to set (``{"type": "dask", "address": ...}``, from ``--engine`` / ``--scheduler``), applied
        before ``overrides``: an ``engine:`` section is created if the recipe has none, and its other keys are
        kept.

    Returns
    -------
    Recipe

    Raises
    ------
    RecipeError
        With every problem found, one ``FILE:LINE:COL: dotted.path: problem`` line each: a missing or unreadable
        file (``FILE: no such recipe file``), invalid YAML, unknown sections, components, presets or parameters
        (with the closest name), values of the wrong type, duplicate keys, a corpus path that matches no file, a
        stage input that names no tokenizer, an embedder whose ``vocab_size``/``padding_idx`` disagrees with its
        tokenizer, and ``--set`` arguments that do not apply. In ``compare:``: the same for each tokenizer stage,
        plus a ``load:`` file that is missing, of an unknown format or that no installed plugin can read, corpora,
        a parallel set whose folders are missing or misaligned, and unknown metrics.
    """
    source = os.fspath(path)
    file = Path(source)
    try:
        data = file.read_bytes()
    except FileNotFoundError:
        raise RecipeError(f"{source}: no such recipe file") from None
    except IsADirectoryError:
        raise RecipeError(f"{source}: is a folder, not a recipe file") from None
    except OSError as exc:
        raise RecipeError(f"{source}: cannot read the recipe file: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise RecipeError(f"{source}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None
    return _load(text, source=source, base_dir=file.parent, path=file, overrides=overrides, out=out,
                 registry=registry, engine=engine)


def load_recipe_string(
    text: str,
    *,
    source: str = "<recipe>",
    base_dir: str | os.PathLike = ".",
    overrides: Iterable[str] = (),
    out: str | os.PathLike | None = None,
    registry: Any = None,
    engine: Mapping[str, Any] | None = None,
) -> Recipe:
    """Like :func:`load_recipe`, for recipe text: ``source`` names it in messages and relative corpus paths are
    resolved against ``base_dir``. The result's ``path`` is None."""
    return _load(text, source=source, base_dir=Path(base_dir), path=None, overrides=overrides, out=out,
                 registry=registry, engine=engine)


def _load(text: str, *, source: str, base_dir: Path, path: Path | None, overrides: Iterable[str], out: Any,
          registry: Any, engine: Mapping[str, Any] | None = None) -> Recipe:
    overrides = (overrides,) if isinstance(overrides, str) else tuple(overrides)
    root = compose_text(text, source)
    if root is None:
        raise RecipeError(f"{source}: the recipe is empty (it needs corpus: and tokenizers:, vectorizers: or "
                          "embedders:)")
    problems = Problems(source)
    check_tree(root, "", problems)
    if root.tag == "tag:yaml.org,2002:map":
        engine_args = _engine_overrides(root, engine or {})
        for arg, origin in engine_args:
            apply_override(root, arg, problems, origin=origin)
        for arg in overrides:
            apply_override(root, arg, problems)
        overrides = tuple(arg for arg, _ in engine_args) + overrides
    if registry is None:
        from ..registry import build_registry

        registry = build_registry()
    recipe = check_recipe(root, source=source, base_dir=base_dir, registry=registry, problems=problems, path=path,
                          overrides=overrides, out=out)
    problems.raise_if_any()
    assert recipe is not None
    return recipe


#: The command-line option that sets each ``engine:`` key (where a problem with its value is reported).
_ENGINE_OPTIONS = {"type": "--engine", "address": "--scheduler"}


def _engine_overrides(root: Any, engine: Mapping[str, Any]) -> list[tuple[str, str | None]]:
    """``(--set string, origin)`` pairs that set the ``engine:`` keys given (creating the section, or turning the
    short form ``engine: dask`` into a mapping first); a key's origin is the option that set it
    (``--scheduler tcp://...``), so a problem with its value names that option."""
    import json

    from yaml.nodes import ScalarNode

    keys = {k: v for k, v in engine.items() if v is not None}
    if not keys:
        return []
    current = next((v for k, v in root.value if isinstance(k, ScalarNode) and k.value == "engine"), None)
    out: list[tuple[str, str | None]] = []
    if current is None:
        out.append(("engine={}", None))
    elif isinstance(current, ScalarNode):
        out.append((f"engine={{type: {json.dumps(current.value)}}}", None))
    for k, v in keys.items():
        option = _ENGINE_OPTIONS.get(k)
        out.append((f"engine.{k}={json.dumps(v) if isinstance(v, str) else v}", option and f"{option} {v}"))
    return out
