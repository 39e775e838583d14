"""Built-in plugin ``bpe``: byte-pair encoding, word level (end-of-word suffix) or byte level (GPT-2).

The hook imports the implementation when it is called, and ``from tokembed.plugins.bpe import BPETokenizer``
imports it on first access, so building the registry stays light (no numba).
"""

from tokembed import hookimpl

__all__ = ["BPETokenizer", "VocabularySizeWarning"]


@hookimpl
def tokembed_register_tokenizers():
    from .tokenizer import BPETokenizer

    return [BPETokenizer]


def __getattr__(name: str):
    if name in __all__:
        from . import tokenizer

        return getattr(tokenizer, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
