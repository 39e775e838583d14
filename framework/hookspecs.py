"""Hook specifications: the contract between tokembed and its plugins.

A plugin is a module (or object) with functions marked ``@tokembed.hookimpl`` whose names are the hooks below.
It is found through the entry-point group ``tokembed``; built-ins are declared the same way. Every hook is
collect-all: tokembed calls each plugin's implementation and gathers the results. A misspelled hook name is an
error (``check_pending``), not a silent no-op.

Each hook returns a list of component classes. A class carries ``name`` (the key recipes use, unique per kind
across all installed plugins) and derives from the kind's base class in :mod:`tokembed.components`.
Implementations should import heavy modules (numba, torch) lazily: building the registry must stay cheap.
"""

from __future__ import annotations

import pluggy

hookspec = pluggy.HookspecMarker("tokembed")
#: Marker for plugin hook implementations: ``@tokembed.hookimpl def tokembed_register_tokenizers(): ...`` (also
#: importable as ``tokembed.hookimpl``).
hookimpl = pluggy.HookimplMarker("tokembed")

# ---------------------------------------------------------------------------------------------------------------
# components
# ---------------------------------------------------------------------------------------------------------------


@hookspec
def tokembed_register_tokenizers() -> list[type]:
    """Return the tokenizer classes this plugin provides.

    Each class subclasses :class:`tokembed.Tokenizer` and has a unique ``name``.

    Added in 0.1.
    """


@hookspec
def tokembed_register_vectorizers() -> list[type]:
    """Return the vectorizer classes this plugin provides.

    Each class subclasses :class:`tokembed.Vectorizer` and has a unique ``name``.

    Added in 0.1.
    """


@hookspec
def tokembed_register_embedders() -> list[type]:
    """Return the embedder classes this plugin provides.

    Each class subclasses :class:`tokembed.Embedder` and has a unique ``name``.

    Added in 0.1.
    """


# ---------------------------------------------------------------------------------------------------------------
# metrics
# ---------------------------------------------------------------------------------------------------------------


@hookspec
def tokembed_register_metrics() -> list[type]:
    """Return the tokenizer metric classes this plugin provides.

    Each class subclasses :class:`tokembed.metrics.Metric` (or :class:`tokembed.metrics.ParallelMetric` for a
    metric over a parallel set) and has a unique ``name``, the column name in comparison outputs; it also sets
    ``unit``, ``definition``, ``source`` and ``higher_is_better``. A comparison builds one instance per tokenizer
    and corpus as ``cls(tokenizer)``, calls ``update_chunk(chunk)`` for each chunk of documents (encoded once, as
    flat arrays shared by every metric: :class:`tokembed.metrics.Chunk`), then ``result(stats)``. A metric with
    ``update(doc, encoding)`` instead is measured on the slower per-document path, only when named. The built-in metrics are registered through this same hook by the core
    (:mod:`tokembed.metrics.builtin`); a name that two plugins register is an error naming both.
    :func:`tokembed.testing.check_metric` checks a class against the contract.

    Added in 0.1.
    """
