"""Built-in plugin ``word``: the word-level tokenizer (a pre-tokenizer plus a vocabulary of words)."""

from tokembed import hookimpl


@hookimpl
def tokembed_register_tokenizers():
    from .tokenizer import WordTokenizer

    return [WordTokenizer]
