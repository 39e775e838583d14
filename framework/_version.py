"""The version of tokembed, in one place (``tokembed.__version__``)."""

__version__ = "0.1.0"
