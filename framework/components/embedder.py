"""The embedder base class: tokens -> dense vectors (trained word vectors, or a module-producing embedding)."""

from __future__ import annotations

from typing import Any, ClassVar

from .base import Component
from .tokenizer import Tokenizer, TokenizerPlan

__all__ = ["Embedder", "describe_limit"]


class Embedder(Component):
    """Tokens -> dense vectors: trained word vectors (GloVe, FastText) or a module-producing embedding.

    A trained embedder's ``fit(X)`` reads token sequences (``X`` as for :class:`Vectorizer`: a
    :class:`~tokembed.sequences.TokenSequences` or an iterable of token lists) and sets ``wv_``, a
    :class:`~tokembed.keyedvectors.KeyedVectors` keyed by the tokens' strings, which a recipe's ``evaluate:``
    scores. A module-producing embedder (the sinusoidal Transformer input embedding) sets
    ``fits_on_tokens = False``: its tables depend only on its parameters, a recipe run calls ``fit(None)``, and
    ``embed(ids)`` maps a (batch, seq) array of ids to (batch, seq, d_model) float32.

    What a recipe run takes from the embedder's input tokenizer is asked through :meth:`params_from_tokenizer`
    and :meth:`max_input_length`, so the core names no parameter of a plugin.
    """

    kind: ClassVar[str] = "embedder"
    #: True when ``fit`` learns from token sequences; False when it needs no data (``fit(None)``).
    fits_on_tokens: ClassVar[bool] = True
    #: The parameter that sets :meth:`max_input_length` (``"max_len"``), named in messages; None when there is none.
    input_length_param: ClassVar[str | None] = None

    def fit(self, X: Any, y: Any = None) -> "Embedder":
        raise NotImplementedError

    def params_from_tokenizer(self, tokenizer: Tokenizer) -> dict[str, Any]:
        """Parameters a recipe run sets from the (fitted) input tokenizer before ``fit``, for those the recipe
        leaves unset: for example ``{"vocab_size": tokenizer.get_vocab_size()}``. The default sets nothing."""
        return {}

    @classmethod
    def check_tokenizer_plan(cls, params: dict[str, Any], plan: TokenizerPlan, tokenizer: str
                             ) -> list[tuple[str | None, str]]:
        """Problems of this embedder's ``params`` (what a recipe sets) against its input tokenizer's
        :class:`~tokembed.components.TokenizerPlan`, found by ``tokembed validate`` before any training:
        ``(parameter, message)`` pairs as :meth:`check_params` returns (``tokenizer`` is the tokenizer's label, for
        messages). The default finds none."""
        return []

    @classmethod
    def planned_max_input_length(cls, params: dict[str, Any]) -> int | None:
        """:meth:`max_input_length` of an embedder built with ``params`` (defaults are the class's), before
        fitting; ``tokembed validate`` checks a ``batch.max_length`` against it. The default: no limit."""
        return None

    def max_input_length(self) -> int | None:
        """The longest sequence ``embed`` accepts (a position table's length), or None for no limit."""
        return None


def describe_limit(cls: type, limit: int) -> tuple[str, str]:
    """``("max_len=64", "raise max_len")`` for an embedder class whose ``input_length_param`` is ``max_len``, else
    ``("limit of 64 tokens", "raise that limit")``: the words messages about a too long batch use."""
    param = getattr(cls, "input_length_param", None)
    if param:
        return f"{param}={limit}", f"raise {param}"
    return f"limit of {limit} tokens", "raise that limit"
