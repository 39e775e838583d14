"""Built-in plugin ``fasttext``: the ``fasttext`` and ``word2vec`` embedders (skip-gram and CBOW word vectors, with
and without character n-grams), Facebook fastText's ``.bin`` files and n-gram OOV vectors.

The hook imports the implementation when it is called, and ``from tokembed.plugins.fasttext import
FastTextEmbedder`` imports it on first access, so building the registry stays light (no numba).
"""

from tokembed import hookimpl

__all__ = ["FastTextEmbedder", "Word2VecEmbedder", "FastTextKeyedVectors", "load_facebook_vectors",
           "read_facebook_bin", "write_facebook_bin", "ft_hash", "ngram_hashes"]

_WHERE = {
    "FastTextEmbedder": "embedder", "Word2VecEmbedder": "embedder",
    "FastTextKeyedVectors": "keyedvectors", "ft_hash": "keyedvectors", "ngram_hashes": "keyedvectors",
    "load_facebook_vectors": "files", "read_facebook_bin": "files", "write_facebook_bin": "files",
}


@hookimpl
def tokembed_register_embedders():
    from .embedder import FastTextEmbedder, Word2VecEmbedder

    return [FastTextEmbedder, Word2VecEmbedder]


def __getattr__(name: str):
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
