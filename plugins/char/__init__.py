"""Built-in plugin ``char``: the character (code point) tokenizer."""

from tokembed import hookimpl


@hookimpl
def tokembed_register_tokenizers():
    from .tokenizer import CharTokenizer

    return [CharTokenizer]
