"""tokembed-toklen: an example third-party metric plugin (mean token length in characters).

Found through the entry point ``toklen = "tokembed_toklen"`` in the group ``tokembed``.
"""

from tokembed import hookimpl

__version__ = "0.1.0"


@hookimpl
def tokembed_register_metrics():
    """Register :class:`tokembed_toklen.metric.MeanTokenLength` under the name ``mean_token_length``."""
    from .metric import MeanTokenLength

    return [MeanTokenLength]
