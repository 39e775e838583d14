"""Built-in plugin ``sinusoidal``: the Transformer input embedding (token table + sinusoidal positions)."""

from tokembed import hookimpl


@hookimpl
def tokembed_register_embedders():
    from .embedder import SinusoidalEmbedder

    return [SinusoidalEmbedder]
