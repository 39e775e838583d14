"""The vectorizer base class: token sequences, documents or a matrix -> a matrix."""

from __future__ import annotations

import functools
import inspect
from typing import Any, ClassVar, Literal

import numpy as np

from .base import Component

__all__ = ["Vectorizer"]


class Vectorizer(Component):
    """Token sequences, raw documents or a matrix -> a matrix (``scipy.sparse`` CSR or dense float array).

    ``fit(X)`` / ``transform(X)`` / ``fit_transform(X)`` follow scikit-learn. ``X`` is one of:

    - :class:`~tokembed.sequences.TokenSequences`: a tokenizer's ids per document (the fast path: no strings);
    - an iterable of token lists (``[["the", "whale"], ...]``), packed with
      :func:`~tokembed.sequences.as_token_sequences`;
    - a list of raw documents (``list[str]``), for a vectorizer that has a pre-tokenizer of its own;
    - a matrix (``scipy.sparse`` or ndarray), for a vectorizer that consumes another's output (truncated SVD).

    ``output_rows`` says what the rows of ``transform``'s result are, which the runner and the contract suite read.
    A vectorizer whose statistics merge also implements ``partial_fit(X) -> self``.
    """

    kind: ClassVar[str] = "vectorizer"
    #: What one row of ``transform(X)`` stands for: ``"documents"`` (one row per document of ``X``, as
    #: scikit-learn's vectorizers), ``"tokens"`` (one row per token of ``X``, documents one after the other: a
    #: one-hot encoding) or ``"vocabulary"`` (a square (V, V) matrix over ``get_feature_names_out()``: a word-word
    #: co-occurrence matrix).
    output_rows: ClassVar[Literal["documents", "tokens", "vocabulary"]] = "documents"
    #: What ``fit`` reads: ``"documents"`` (token sequences, token lists or raw text: a pipeline's first step) or
    #: ``"matrix"`` (another vectorizer's output: a later step). ``tokembed validate`` checks a pipeline's order.
    input_kind: ClassVar[Literal["documents", "matrix"]] = "documents"
    #: Whether a first step may be given raw text (``list[str]``, split by a pre-tokenizer of its own); False for
    #: one that reads token sequences only, which ``tokembed validate`` then requires an ``input:`` tokenizer for.
    reads_text: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A subclass's ``get_feature_names_out(self)`` written without scikit-learn's ``input_features`` argument
        is given one (accepted and ignored), so ``Pipeline.get_feature_names_out``, which passes it, works."""
        super().__init_subclass__(**kwargs)
        fn = cls.__dict__.get("get_feature_names_out")
        if callable(fn) and len(inspect.signature(fn).parameters) == 1:
            @functools.wraps(fn)
            def get_feature_names_out(self: Any, input_features: Any = None) -> np.ndarray:
                return fn(self)

            del get_feature_names_out.__wrapped__  # its signature is the one with input_features
            cls.get_feature_names_out = get_feature_names_out  # type: ignore[method-assign]

    def fit(self, X: Any, y: Any = None) -> "Vectorizer":
        raise NotImplementedError

    def transform(self, X: Any) -> Any:
        raise NotImplementedError

    def fit_transform(self, X: Any, y: Any = None) -> Any:
        """``fit(X)`` then ``transform(X)``; subclasses may override with a single pass."""
        return self.fit(X).transform(X)

    def fitted_output(self) -> Any:
        """What ``fit_transform`` returns for the data the vectorizer was just fitted on, when the fitted state
        already holds it (a co-occurrence matrix over the vocabulary), else None (an output with a row per
        document or token, which ``transform`` computes). A run that fitted the vectorizer from counts on the
        corpus-statistics engine takes its output from here, or else transforms the partitions. Default: None."""
        return None

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """The name of each output column, an ndarray of str of shape (n_features,). ``input_features`` is
        scikit-learn's argument (``Pipeline.get_feature_names_out`` passes the previous step's names); the names
        come from the fitted state, so it is accepted and ignored."""
        raise NotImplementedError
