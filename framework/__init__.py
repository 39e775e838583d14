"""tokembed: tokenizers, vectorizers and embedders as plugins, composed from YAML recipes, compared side by side.

Importing this package is light: it loads neither numba nor torch, and builds no registry. Call
:func:`build_registry` to discover the installed plugins.
"""

from __future__ import annotations

from ._version import __version__
from .hookspecs import hookimpl

from .components import Component, Embedder, Tokenizer, Vectorizer  # noqa: E402
from .encoding import Encoding  # noqa: E402
from .sequences import TokenSequences  # noqa: E402
from .errors import (  # noqa: E402
    ArtifactError,
    CorpusError,
    DataError,
    NotFittedError,
    PluginError,
    RecipeError,
    TokembedError,
    UnknownComponentError,
)


def build_registry(autoload=None, blocked=(), plugins=()):
    """Discover the installed plugins; see :func:`tokembed.registry.build_registry`."""
    from .registry import build_registry as _build

    return _build(autoload=autoload, blocked=blocked, plugins=plugins)


def load(path, registry=None):
    """Load any saved component (``<label>.tokembed.json``), dispatching on its kind and type.

    Raises
    ------
    ArtifactError
        If the file is missing or is not a tokembed artifact.
    UnknownComponentError
        If no installed plugin provides the artifact's type.
    """
    from .components import read_artifact

    data = read_artifact(path)
    if not isinstance(data, dict) or data.get("format") != "tokembed":
        raise ArtifactError(f"{path}: not a tokembed artifact")
    reg = registry if registry is not None else build_registry()
    cls = reg.get(str(data.get("kind")), str(data.get("type")))
    return cls.from_dict(data, source=str(path))


__all__ = [
    "__version__",
    "hookimpl",
    "build_registry",
    "load",
    "Component",
    "Tokenizer",
    "Vectorizer",
    "Embedder",
    "Encoding",
    "TokenSequences",
    "TokembedError",
    "RecipeError",
    "UnknownComponentError",
    "PluginError",
    "NotFittedError",
    "CorpusError",
    "ArtifactError",
    "DataError",
]
