"""Built-in plugin ``unigram``: SentencePiece's Unigram language model (Kudo 2018), trained by EM, encoded by Viterbi;
reads and writes SentencePiece ``.model`` files (unigram and BPE) and Hugging Face ``Unigram`` tokenizer.json.

The hook imports the implementation when it is called, and ``from tokembed.plugins.unigram import UnigramTokenizer``
imports it on first access, so building the registry stays light (no numba, no protobuf).
"""

from tokembed import hookimpl

__all__ = ["UnigramTokenizer"]


@hookimpl
def tokembed_register_tokenizers():
    from .tokenizer import UnigramTokenizer

    return [UnigramTokenizer]


def __getattr__(name: str):
    if name in __all__:
        from . import tokenizer

        return getattr(tokenizer, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
