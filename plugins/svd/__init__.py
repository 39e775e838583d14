"""Built-in plugin ``svd``: truncated SVD (latent semantic analysis) of a vectorizer's matrix."""

from tokembed import hookimpl


@hookimpl
def tokembed_register_vectorizers():
    from .vectorizer import TruncatedSVD

    return [TruncatedSVD]
