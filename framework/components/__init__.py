"""Base classes of the three kinds of component: :class:`Tokenizer`, :class:`Vectorizer` and :class:`Embedder`,
and :class:`Component`, their common base (parameters, fitted state, artifact files).

``base`` holds :class:`Component` and the artifact format, ``tokenizer``, ``vectorizer`` and ``embedder`` one kind
each. Import from here: ``from tokembed.components import Tokenizer``.
"""

from .base import (
           ARTIFACT_FORMAT,
           ARTIFACT_VERSION,
           Component,
           arrays_path,
           read_artifact,
)
from .embedder import Embedder, describe_limit
from .tokenizer import Tokenizer, TokenizerPlan, check_token_ids, join_packed, map_text_chunks
from .vectorizer import Vectorizer

__all__ = ["Component", "Tokenizer", "TokenizerPlan", "Vectorizer", "Embedder", "ARTIFACT_FORMAT", "ARTIFACT_VERSION", "check_token_ids", "map_text_chunks", "join_packed",
           "arrays_path", "read_artifact", "describe_limit"]
