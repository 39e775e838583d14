"""The embedder base class: tokens -> dense vectors (trained word vectors, or a module-producing embedding)."""

from __future__ import annotations

from typing import Any, ClassVar

from .base import Component
from .tokenizer import Tokenizer

__all__ = ["Embedder"]


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

    def fit(self, X: Any) -> "Embedder":
        raise NotImplementedError

    def params_from_tokenizer(self, tokenizer: Tokenizer) -> dict[str, Any]:
        """Parameters a recipe run sets from the (fitted) input tokenizer before ``fit``, for those the recipe
        leaves unset: for example ``{"vocab_size": tokenizer.get_vocab_size()}``. The default sets nothing."""
        return {}

    @classmethod
    def planned_params_from_tokenizer(cls, tokenizer_cls: type, tokenizer_params: dict[str, Any]
                                      ) -> dict[str, Any]:
        """What :meth:`params_from_tokenizer` will set, as far as it follows from the tokenizer's class and
        parameters before training (``tokembed validate`` checks the embedder's parameters with these, e.g. a
        ``padding_idx`` planned from the tokenizer's special tokens). The default knows nothing: ``{}``."""
        return {}

    def max_input_length(self) -> int | None:
        """The longest sequence ``embed`` accepts (a position table's length), or None for no limit."""
        return None
