"""PyTorch module of the sinusoidal Transformer input embedding. Imports torch: load it lazily (``to_torch``)."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from tokembed.errors import TokembedError

__all__ = ["SinusoidalEmbedding"]


class SinusoidalEmbedding(nn.Module):
    """``dropout(embedding(ids) * scale + PE[:seq])``, the input embedding of Vaswani et al. 2017 (3.4, 3.5, 5.4).

    Built by :meth:`tokembed.plugins.sinusoidal.embedder.SinusoidalEmbedder.to_torch`.

    Parameters
    ----------
    token_table : numpy.ndarray of float32, shape (vocab_size, d_model)
        Initial token vectors (copied into ``self.token.weight``).
    positional_encoding : numpy.ndarray of float32, shape (max_len, d_model)
        The fixed positional table, kept as the non-persistent buffer ``positional_encoding``.
    padding_idx : int or None
        Passed to ``nn.Embedding``: that row receives no gradient.
    scale : float
        Factor on the token vectors (``sqrt(d_model)`` or 1.0).
    dropout : float
        Dropout rate, active in training mode only.
    freeze : bool
        Whether the token vectors are frozen.
    """

    def __init__(
        self,
        token_table: np.ndarray,
        positional_encoding: np.ndarray,
        *,
        padding_idx: int | None,
        scale: float,
        dropout: float,
        freeze: bool = False,
    ):
        super().__init__()
        weight = torch.from_numpy(np.array(token_table, dtype=np.float32, copy=True))
        self.token = nn.Embedding.from_pretrained(weight, freeze=freeze, padding_idx=padding_idx)
        pe = torch.from_numpy(np.array(positional_encoding, dtype=np.float32, copy=True))
        self.register_buffer("positional_encoding", pe, persistent=False)
        self.scale = float(scale)
        self.dropout = nn.Dropout(float(dropout))

    @property
    def max_len(self) -> int:
        """Longest sequence accepted."""
        return int(self.positional_encoding.shape[0])

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """Embed ``ids``, an integer tensor of shape (batch, seq) or (seq,).

        Returns float32 of shape (batch, seq, d_model) or (seq, d_model). Raises ``TokembedError`` when
        ``seq > max_len``.
        """
        seq = ids.shape[-1]
        if seq > self.max_len:
            raise TokembedError(
                f"sinusoidal: sequence length {seq} is longer than max_len={self.max_len}; "
                "truncate the sequences or raise max_len"
            )
        x = self.token(ids)
        if self.scale != 1.0:
            x = x * self.scale
        return self.dropout(x + self.positional_encoding[:seq])

    def extra_repr(self) -> str:
        return f"max_len={self.max_len}, scale={self.scale:g}"
