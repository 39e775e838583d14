"""tokembed-ppmi: an example third-party embedder plugin (PPMI + SVD word vectors).

Found through the entry point ``ppmi = "tokembed_ppmi"`` in the group ``tokembed``; the hook imports the embedder
only when it is called, so that building tokembed's registry stays cheap.
"""

from tokembed import hookimpl

__version__ = "0.1.0"


@hookimpl
def tokembed_register_embedders():
    """Register :class:`tokembed_ppmi.embedder.PPMIEmbedder` under the name ``ppmi``."""
    from .embedder import PPMIEmbedder

    return [PPMIEmbedder]
