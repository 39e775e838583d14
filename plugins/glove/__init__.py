"""Built-in plugin ``glove``: GloVe word vectors (Pennington, Socher and Manning 2014) trained with Numba.

Registers the embedder ``glove`` (:class:`~tokembed.plugins.glove.embedder.GloVe`, ``fits_on_tokens = True``).
The implementation is imported lazily (building the registry imports no numba)::

    from tokembed.plugins.glove import GloVe
    model = GloVe(vector_size=100, epochs=15, x_max=10.0, workers=2, seed=0).fit(token_sequences)
    model.wv_.most_similar("whale")

The co-occurrence counts come from the ``cooccurrence`` plugin; the training kernels are in ``_kernels.py`` and
the epoch loop in ``training.py``.
"""

from __future__ import annotations

from typing import Any

from tokembed import hookimpl

__all__ = ["GloVe", "TrainingDivergedError"]

_LAZY = {"GloVe": "embedder", "TrainingDivergedError": "training"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


@hookimpl
def tokembed_register_embedders():
    from .embedder import GloVe

    return [GloVe]
