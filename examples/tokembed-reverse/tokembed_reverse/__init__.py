"""tokembed-reverse: an example third-party tokembed plugin.

tokembed finds this module through the entry point ``reverse = "tokembed_reverse"`` in the group ``tokembed``
(see ``pyproject.toml``) and calls the hook below when it builds its registry. The hook imports the tokenizer
only when it is called, so that merely building the registry stays cheap, as tokembed asks of every plugin.
"""

from tokembed import hookimpl

__version__ = "0.1.0"


@hookimpl
def tokembed_register_tokenizers():
    """Register :class:`tokembed_reverse.tokenizer.ReverseTokenizer` under the name ``reverse``."""
    from .tokenizer import ReverseTokenizer

    return [ReverseTokenizer]
