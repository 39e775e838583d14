"""Built-in plugin ``wordpiece``: BERT's WordPiece, trained by likelihood or frequency, encoded greedily.

The implementation is imported when the hook is called, so building the registry does not import numba.
"""

from tokembed import hookimpl


@hookimpl
def tokembed_register_tokenizers():
    from .tokenizer import WordPieceTokenizer

    return [WordPieceTokenizer]
