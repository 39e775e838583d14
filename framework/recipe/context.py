"""The one object every section checker of a recipe receives: where problems go, the registry, the recipe's folder,
and what the check read that a run should not read again."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .nodes import Problems

__all__ = ["Context"]


@dataclass
class Context:
    """What ``recipe/X.py`` needs to check the section ``X:``.

    Attributes
    ----------
    problems : Problems
        Where each problem is recorded, located at its node.
    registry : Registry
        The components and presets names are looked up in.
    base_dir : Path
        The recipe's folder: relative paths in the recipe are relative to it (``--set`` values: to the current
        directory).
    stage : callable
        ``stage(kind, section, label, node, path) -> ComponentSpec | None``: checks one component stage
        (``type:``/``preset:`` and parameters), for a section that holds stages (``compare.tokenizers``).
    kept : dict
        Tokenizers the check read from ``{load: FILE}`` stages (label -> ``(tokenizer, seconds)``), handed to the
        :class:`~tokembed.recipe.Recipe` so that a run reads each file once.
    encode_outs : dict
        The folders that ``encode: {out: DIR}`` stages write (absolute path -> the stage's path), so that two
        stages writing one folder are a problem (the second would replace the first's output).
    """

    problems: Problems
    registry: Any
    base_dir: Path
    stage: Callable[..., Any] | None = None
    kept: dict[str, tuple[Any, float]] = field(default_factory=dict)
    encode_outs: dict[Path, str] = field(default_factory=dict)
