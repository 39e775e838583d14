"""tokembed-bm25: an example third-party vectorizer plugin (Okapi BM25 weights).

Found through the entry point ``bm25 = "tokembed_bm25"`` in the group ``tokembed``; the hook imports the vectorizer
only when it is called, so that building tokembed's registry stays cheap.
"""

from tokembed import hookimpl

__version__ = "0.1.0"


@hookimpl
def tokembed_register_vectorizers():
    """Register :class:`tokembed_bm25.vectorizer.BM25Vectorizer` under the name ``bm25``."""
    from .vectorizer import BM25Vectorizer

    return [BM25Vectorizer]
