"""Sinusoidal Transformer input embedding: a token table scaled by sqrt(d_model) plus fixed sinusoidal positions.

Reference: Vaswani et al., "Attention is all you need", NeurIPS 2017, sections 3.4 (embeddings, multiplied by
sqrt(d_model)) and 3.5 (positional encoding).
"""

from __future__ import annotations

import base64
import inspect
import math
from typing import Any, ClassVar, Literal

import numpy as np

from tokembed.components import Embedder
from tokembed.errors import ParameterError, TokembedError
from tokembed.params import Boolean, Interval, Options, raise_parameter_errors

__all__ = ["SinusoidalEmbedder", "sinusoidal_table"]

#: The base of the wavelengths' geometric progression (Vaswani et al. 2017, section 3.5).
BASE = 10000.0

_LAYOUTS = ("interleaved", "concat")
#: The parameters of the positional table, declared once for :func:`sinusoidal_table` and the embedder.
_TABLE_PARAMS = {"d_model": Interval(int, 1, None), "max_len": Interval(int, 1, None), "layout": Options(*_LAYOUTS)}


def sinusoidal_table(max_len: int, d_model: int, layout: str = "interleaved") -> np.ndarray:
    """The fixed sinusoidal positional-encoding table.

    With ``n_sin = ceil(d_model / 2)`` sine columns and ``n_cos = floor(d_model / 2)`` cosine columns, for
    position ``pos`` and frequency index ``i``::

        angle(pos, i) = pos / 10000 ** (2 * i / d_model)
        interleaved:  PE[pos, 2i]         = sin(angle(pos, i))   for 0 <= i < n_sin
                      PE[pos, 2i + 1]     = cos(angle(pos, i))   for 0 <= i < n_cos
        concat:       PE[pos, i]          = sin(angle(pos, i))   for 0 <= i < n_sin
                      PE[pos, n_sin + i]  = cos(angle(pos, i))   for 0 <= i < n_cos

    ``interleaved`` is the paper's layout; ``concat`` holds the same values with all sines first and all cosines
    after (the layout of tensor2tensor and several later implementations). With an odd ``d_model`` the last
    column is a sine and has no cosine partner.

    Parameters
    ----------
    max_len : int
        Number of positions (rows), >= 1.
    d_model : int
        Model dimension (columns), >= 1.
    layout : {"interleaved", "concat"}
        Column order, see above.

    Returns
    -------
    numpy.ndarray of float32, shape (max_len, d_model)
        Computed in float64 (``numpy.sin`` / ``numpy.cos``) and rounded to float32 once.

    Raises
    ------
    ParameterError
        (a ``TokembedError``) If ``max_len`` or ``d_model`` is not an int >= 1, or ``layout`` is unknown (every
        problem in one error).

    References
    ----------
    Vaswani et al., "Attention is all you need", NeurIPS 2017, section 3.5.
    """
    raise_parameter_errors("sinusoidal", _TABLE_PARAMS, {"max_len": max_len, "d_model": d_model, "layout": layout})
    max_len, d_model = int(max_len), int(d_model)
    n_sin, n_cos = (d_model + 1) // 2, d_model // 2
    # 2i for i = 0 .. n_sin - 1, i.e. the even column indices of the interleaved layout
    wavelength_scale = np.power(BASE, np.arange(0, d_model, 2, dtype=np.float64) / d_model)  # (n_sin,)
    angles = np.arange(max_len, dtype=np.float64)[:, None] / wavelength_scale[None, :]  # (max_len, n_sin)
    table = np.empty((max_len, d_model), dtype=np.float64)
    if layout == "interleaved":
        table[:, 0::2] = np.sin(angles)
        table[:, 1::2] = np.cos(angles[:, :n_cos])
    else:
        table[:, :n_sin] = np.sin(angles)
        table[:, n_sin:] = np.cos(angles[:, :n_cos])
    return table.astype(np.float32)


class SinusoidalEmbedder(Embedder):
    """The Transformer input embedding: learned token vectors times sqrt(d_model) plus sinusoidal positions.

    For a sequence of token ids ``ids`` of length ``seq``::

        out[t, :] = token_table_[ids[t], :] * sqrt(d_model) + PE[t, :]      (t = 0 .. seq - 1)

    (without the factor ``sqrt(d_model)`` when ``scale_embeddings`` is false), where ``PE`` is
    :func:`sinusoidal_table` and ``token_table_`` is drawn at :meth:`fit` from a normal distribution of mean 0
    and standard deviation ``d_model ** -0.5`` (so that the scaled token part has unit variance, as in the
    tensor2tensor Transformer), with the ``padding_idx`` row set to zero. Dropout (section 5.4 of the paper)
    applies only in the PyTorch module returned by :meth:`to_torch`, in training mode; :meth:`embed` is the
    deterministic (evaluation-mode) forward pass in NumPy.

    Parameters
    ----------
    d_model : int, default 512
        Embedding dimension, >= 1. Odd values work (the last column is a sine).
    max_len : int, default 512
        Longest sequence :meth:`embed` accepts (rows of the positional table), >= 1.
    layout : {"interleaved", "concat"}, default "interleaved"
        Column order of the positional table: the paper's alternating sin/cos, or all sines then all cosines.
    scale_embeddings : bool, default True
        Multiply the token vectors by ``sqrt(d_model)`` (section 3.4).
    dropout : float, default 0.1
        Dropout rate applied to the sum by the PyTorch module in training mode; ``0 <= dropout < 1``.
    seed : int, default 0
        Seed of ``numpy.random.default_rng`` for the token table; >= 0.
    vocab_size : int or None, default None
        Rows of the token table; required (>= 1) at :meth:`fit`. A recipe run passes the fitted tokenizer's
        ``get_vocab_size()``.
    padding_idx : int or None, default None
        Id whose token vector is zero (and gets no gradient in the PyTorch module); ``0 <= padding_idx <
        vocab_size``. A recipe run passes the tokenizer's pad id.

    Attributes
    ----------
    token_table_ : numpy.ndarray of float32, shape (vocab_size, d_model)
        The token vectors (unscaled).
    positional_encoding_ : numpy.ndarray of float32, shape (max_len, d_model)
        The sinusoidal table ``PE``.
    scale_ : float
        ``sqrt(d_model)`` rounded to float32, or 1.0 when ``scale_embeddings`` is false.

    Notes
    -----
    Padded positions: the ``padding_idx`` row is zero, but the positional encoding is still added, so a padded
    position ``t`` embeds to exactly ``PE[t]``: well defined, finite, and independent of the token table. As in
    the Transformer, masking padded positions is the job of the attention layers (or of the caller, e.g.
    ``out * attention_mask[..., None]``), not of the input embedding.

    Saved state (``save``/``load``): the token table as base64 of its little-endian float32 bytes, with its
    shape and dtype, so that it round-trips bit for bit; the positional table is recomputed from the parameters.

    References
    ----------
    Vaswani, Shazeer, Parmar, Uszkoreit, Jones, Gomez, Kaiser, Polosukhin, "Attention is all you need",
    NeurIPS 2017, sections 3.4 and 3.5.
    """

    name: ClassVar[str] = "sinusoidal"
    #: Not trained on data: the tables depend only on the parameters and ``seed``.
    fits_on_tokens: ClassVar[bool] = False
    input_length_param: ClassVar[str] = "max_len"
    param_constraints: ClassVar[dict[str, Any]] = {
        **_TABLE_PARAMS,
        "scale_embeddings": Boolean(),
        "dropout": Interval(float, 0, 1, closed="left"),
        "seed": Interval(int, 0, None),
        "vocab_size": [Interval(int, 1, None), None],  # None until a recipe run passes the tokenizer's; fit needs it
        "padding_idx": [Interval(int, 0, None), None],  # and < vocab_size (_validate)
    }

    def __init__(
        self,
        d_model: int = 512,
        max_len: int = 512,
        layout: Literal["interleaved", "concat"] = "interleaved",
        scale_embeddings: bool = True,
        dropout: float = 0.1,
        seed: int = 0,
        vocab_size: int | None = None,
        padding_idx: int | None = None,
    ):
        self.d_model = d_model
        self.max_len = max_len
        self.layout = layout
        self.scale_embeddings = scale_embeddings
        self.dropout = dropout
        self.seed = seed
        self.vocab_size = vocab_size
        self.padding_idx = padding_idx

    # -- what a recipe run takes from the input tokenizer ------------------------------------------------------
    def params_from_tokenizer(self, tokenizer: Any) -> dict[str, Any]:
        """``vocab_size`` (the tokenizer's vocabulary size) and ``padding_idx`` (the id of its ``pad_token``),
        for those left unset."""
        out: dict[str, Any] = {}
        if self.vocab_size is None:
            out["vocab_size"] = tokenizer.get_vocab_size()
        pad = getattr(tokenizer, "pad_token", None)
        if self.padding_idx is None and pad is not None and tokenizer.token_to_id(pad) is not None:
            out["padding_idx"] = tokenizer.token_to_id(pad)
        return out

    def max_input_length(self) -> int | None:
        """``max_len``: the positional table's length."""
        return self.max_len if isinstance(self.max_len, int) else None

    @classmethod
    def planned_max_input_length(cls, params: dict[str, Any]) -> int | None:
        limit = params["max_len"] if "max_len" in params else inspect.signature(cls.__init__).parameters["max_len"].default
        return limit if isinstance(limit, int) and not isinstance(limit, bool) else None

    @classmethod
    def check_tokenizer_plan(cls, params: dict[str, Any], plan: Any, tokenizer: str) -> list[tuple[str | None, str]]:
        """A ``vocab_size`` set below the tokenizer's (or leaving no row for a special token), and a
        ``padding_idx`` set for a tokenizer without a pad token or disagreeing with its pad token's id."""
        problems: list[tuple[str | None, str]] = []
        vocab, ids = params.get("vocab_size"), plan.special_ids
        if isinstance(vocab, int) and not isinstance(vocab, bool):
            if plan.vocab_size is not None and vocab < plan.vocab_size:
                problems.append(("vocab_size", f"{vocab} is smaller than the vocab_size of tokenizer {tokenizer!r} "
                                               f"({plan.vocab_size}): ids up to {plan.vocab_size - 1} would have no row"))
            elif ids and vocab <= max(ids.values()):
                top = max(ids, key=ids.__getitem__)
                problems.append(("vocab_size", f"{vocab} leaves no row for the special token {top!r} of tokenizer "
                                               f"{tokenizer!r} (id {ids[top]})"))
        pidx = params.get("padding_idx")
        if pidx is not None and not isinstance(pidx, bool):
            if plan.pad_token is None:
                problems.append(("padding_idx", f"{pidx} but tokenizer {tokenizer!r} has no pad token "
                                                "(pad_token: null)"))
            elif plan.pad_token in ids and ids[plan.pad_token] != pidx:
                problems.append(("padding_idx", f"{pidx} disagrees with tokenizer {tokenizer!r}: its pad token "
                                                f"{plan.pad_token!r} will get id {ids[plan.pad_token]}"))
        return problems

    # -- validation -------------------------------------------------------------------------------------------
    def _validate(self) -> None:
        """The rule between parameters: ``padding_idx`` is a row of the token table. An unset ``vocab_size`` (a
        recipe run passes the tokenizer's) is left to :meth:`_require_vocab_size`, so ``tokembed validate`` does not
        report it."""
        if self.padding_idx is not None and self.vocab_size is not None and self.padding_idx >= self.vocab_size:
            raise ParameterError("sinusoidal", "padding_idx",
                                 f"={self.padding_idx} is outside the vocabulary [0, {self.vocab_size})")

    def _require_vocab_size(self) -> None:
        if self.vocab_size is None:
            raise ParameterError("sinusoidal", "vocab_size", "is required (the number of token ids; a recipe run "
                                 "passes the tokenizer's vocabulary size), got None")

    # -- fitting ----------------------------------------------------------------------------------------------
    # -- contract suite (tokembed.testing) -------------------------------------------------------------------
    @classmethod
    def _contract_params(cls) -> dict[str, Any]:
        """Small parameters for the contract suite: the vocabulary size normally comes from a tokenizer."""
        return {"vocab_size": 50, "d_model": 8, "max_len": 16}

    @classmethod
    def _contract_inputs(cls) -> np.ndarray:
        """A (2, 6) int batch of ids below the contract vocabulary size."""
        return np.arange(12).reshape(2, 6) % 50

    def fit(self, X: Any = None, y: Any = None) -> "SinusoidalEmbedder":
        """Validate the parameters, draw the token table and compute the positional table.

        Parameters
        ----------
        X : ignored
            Accepted (token sequences, ids or None) so that every embedder is fitted the same way; this
            embedding is not trained on data: its tables depend only on the parameters and ``seed``.

        Returns
        -------
        self

        Raises
        ------
        TokembedError
            If a parameter is invalid (``d_model`` or ``max_len`` < 1, ``dropout`` outside [0, 1), ``vocab_size``
            missing or < 1, ``padding_idx`` outside [0, vocab_size), unknown ``layout``, negative ``seed``).
        """
        self._validate_params()
        self._require_vocab_size()
        d, v = int(self.d_model), int(self.vocab_size)
        rng = np.random.default_rng(int(self.seed))
        table = rng.normal(0.0, d ** -0.5, size=(v, d)).astype(np.float32)
        if self.padding_idx is not None:
            table[int(self.padding_idx)] = 0.0
        self._set_tables(table)
        return self

    def _set_tables(self, token_table: np.ndarray) -> None:
        self.token_table_ = token_table
        self.positional_encoding_ = sinusoidal_table(self.max_len, self.d_model, self.layout)
        self.scale_ = float(np.float32(math.sqrt(int(self.d_model)))) if self.scale_embeddings else 1.0

    # -- use --------------------------------------------------------------------------------------------------
    def positional_encoding(self) -> np.ndarray:
        """The positional table for the current parameters (no fit needed).

        Returns
        -------
        numpy.ndarray of float32, shape (max_len, d_model)
            See :func:`sinusoidal_table` for the formula.

        Raises
        ------
        TokembedError
            If ``max_len``, ``d_model`` or ``layout`` is invalid.
        """
        return sinusoidal_table(self.max_len, self.d_model, self.layout)

    def embed(self, ids: Any) -> np.ndarray:
        """Embed token ids: ``token_table_[ids] * scale_ + PE[:seq]`` (no dropout).

        Parameters
        ----------
        ids : array-like of int, shape (batch, seq) or (seq,)
            Token ids in ``[0, vocab_size)``, sequences padded to one length (with ``padding_idx``);
            ``seq <= max_len``. Any integer dtype.

        Returns
        -------
        numpy.ndarray of float32, shape (batch, seq, d_model) or (seq, d_model)

        Raises
        ------
        NotFittedError
            If called before :meth:`fit` or ``load``.
        TokembedError
            If ``ids`` is not a 1-D or 2-D integer array (floats, bools and ragged lists are refused), an id is
            outside ``[0, vocab_size)``, or ``seq > max_len``.
        """
        self._check_is_fitted()
        arr = self._check_ids(ids)
        seq = arr.shape[-1]
        out = self.token_table_[arr]
        if self.scale_ != 1.0:
            out *= np.float32(self.scale_)
        out += self.positional_encoding_[:seq]
        return out

    def _check_ids(self, ids: Any) -> np.ndarray:
        try:
            arr = np.asarray(ids)
        except ValueError:
            raise TokembedError(
                "sinusoidal: ids must be a rectangular integer array of shape (batch, seq) or (seq,); "
                "pad the sequences to one length (with padding_idx)"
            ) from None
        if arr.size == 0 and arr.dtype.kind == "f":  # np.asarray([]) is float64
            arr = arr.astype(np.int64)
        if arr.dtype.kind not in "iu":
            raise TokembedError(f"sinusoidal: ids must have an integer dtype, got {arr.dtype}")
        if arr.ndim not in (1, 2):
            raise TokembedError(f"sinusoidal: ids must have shape (batch, seq) or (seq,), got shape {arr.shape}")
        seq, max_len, vocab = arr.shape[-1], self.positional_encoding_.shape[0], self.token_table_.shape[0]
        if seq > max_len:
            raise TokembedError(
                f"sinusoidal: sequence length {seq} is longer than max_len={max_len}; "
                f"truncate the sequences or raise max_len"
            )
        if arr.size:
            bad = (arr < 0) | (arr >= vocab)
            if bad.any():
                where = tuple(int(k) for k in np.argwhere(bad)[0])
                raise TokembedError(
                    f"sinusoidal: id {int(arr[where])} at position {where} is outside the vocabulary [0, {vocab})"
                )
        return arr.astype(np.intp, copy=False)

    def to_torch(self, freeze: bool = False) -> Any:
        """A ``torch.nn.Module`` computing the same embedding, with dropout in training mode.

        The module holds an ``nn.Embedding`` initialised from ``token_table_`` (with ``padding_idx``, so the pad
        row gets no gradient), the positional table as a non-persistent buffer, and ``nn.Dropout(dropout)``.
        Its ``forward(ids)`` takes an integer tensor of shape (batch, seq) or (seq,) and returns float32 of shape
        (batch, seq, d_model) or (seq, d_model). In eval mode it equals :meth:`embed` (to float32 rounding).
        It is returned in training mode, torch's default: call ``.eval()`` to turn dropout off.

        Parameters
        ----------
        freeze : bool, default False
            Freeze the token vectors (``requires_grad=False``).

        Returns
        -------
        torch.nn.Module
            A ``tokembed.plugins.sinusoidal._torch_module.SinusoidalEmbedding``.

        Raises
        ------
        NotFittedError
            If called before :meth:`fit` or ``load``.
        TokembedError
            If PyTorch is not installed (``pip install tokembed[torch]``).
        """
        self._check_is_fitted()
        try:
            from ._torch_module import SinusoidalEmbedding
        except ImportError as exc:
            if getattr(exc, "name", None) == "torch":
                raise TokembedError(
                    "sinusoidal: to_torch() needs PyTorch, which is not installed (pip install 'tokembed[torch]')"
                ) from None
            raise
        return SinusoidalEmbedding(
            self.token_table_,
            self.positional_encoding_,
            padding_idx=self.padding_idx,
            scale=self.scale_,
            dropout=float(self.dropout),
            freeze=freeze,
        )

    # -- state ------------------------------------------------------------------------------------------------
    def _get_state(self) -> dict[str, Any]:
        table = np.ascontiguousarray(self.token_table_, dtype="<f4")
        return {
            "token_table": {
                "dtype": "<f4",
                "shape": list(table.shape),
                "encoding": "base64",
                "data": base64.b64encode(table.tobytes()).decode("ascii"),
            }
        }

    def _set_state(self, state: dict[str, Any]) -> None:
        try:
            self._validate_params()
            self._require_vocab_size()
        except TokembedError as exc:  # reported by Component.from_dict as a broken artifact
            raise ValueError(f"invalid parameters: {exc}") from None
        entry = state["token_table"]
        if entry.get("dtype") != "<f4" or entry.get("encoding", "base64") != "base64":
            raise ValueError(f"token_table must be base64 of '<f4' bytes, got dtype {entry.get('dtype')!r}")
        shape = tuple(int(n) for n in entry["shape"])
        expected = (int(self.vocab_size), int(self.d_model))
        if shape != expected:
            raise ValueError(f"token_table has shape {shape}, parameters say (vocab_size, d_model) = {expected}")
        raw = base64.b64decode(entry["data"], validate=True)
        if len(raw) != 4 * shape[0] * shape[1]:
            raise ValueError(f"token_table holds {len(raw)} bytes, expected {4 * shape[0] * shape[1]}")
        table = np.frombuffer(raw, dtype="<f4").reshape(shape).astype(np.float32)  # native order, writable copy
        self._set_tables(table)
