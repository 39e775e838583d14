"""The per-call options of ``encode``/``encode_batch`` (:class:`EncodeOptions`) and the batch helpers of
:meth:`tokembed.Tokenizer.encode_batch` (see :mod:`tokembed.postprocess`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from ..encoding import BatchEncoding, Encoding
from ..errors import TokembedError
from ..params import Interval, Options, raise_parameter_errors
from .template import DEFAULT_TEMPLATE, TemplateProcessing
from .truncation import _PADDINGS, TRUNCATION_STRATEGIES, combine, pad, padding_length, truncate

__all__ = ["EncodeOptions", "check_batch_inputs", "batch_result", "resolve_workers"]


# -- per-call options -------------------------------------------------------------------------------------------
#: The numeric options of one call, declared as components declare their parameters (:mod:`tokembed.params`).
OPTION_CONSTRAINTS: dict[str, Any] = {
    "max_length": [Interval(int, 1, None), None],
    "stride": Interval(int, 0, None),
    "pad_to_multiple_of": [Interval(int, 1, None), None],
    "num_workers": [Options(-1), Interval(int, 1, None), None],  # -1: one thread per CPU
}


@dataclass(frozen=True)
class EncodeOptions:
    """The validated options of one ``encode`` / ``encode_batch`` call (immutable: safe to share across threads).

    Build with :meth:`resolve`; see :meth:`tokembed.Tokenizer.encode` for the meaning of each option.
    """

    pair: bool
    add_special_tokens: bool
    template: TemplateProcessing
    special_ids: Mapping[str, int]
    truncation: str | None
    max_length: int | None
    room: int | None
    stride: int
    padding: str | None
    pad_to_multiple_of: int | None
    padding_side: str
    pad_id: int | None
    pad_token: str | None

    @classmethod
    def resolve(
        cls,
        tokenizer: Any,
        *,
        pair: bool,
        add_special_tokens: bool = True,
        truncation: bool | str = False,
        max_length: int | None = None,
        stride: int = 0,
        truncation_strategy: str = "longest_first",
        padding: bool | str = False,
        pad_to_multiple_of: int | None = None,
        padding_side: str = "right",
        post_processor: Any = None,
    ) -> "EncodeOptions":
        """Validate the options against ``tokenizer`` (its ``post_processor``, ``pad_token`` and vocabulary).

        Raises
        ------
        TokembedError
            For any invalid or contradictory option: unknown strategy or padding, ``max_length`` missing where
            needed, ``stride`` or ``pad_to_multiple_of`` given where they do nothing (``max_length`` alone is
            ignored there, as transformers does, since recipes pass it for either use), ``max_length`` leaving no
            room after the special tokens,
            ``stride`` not smaller than that room, padding without a pad token, a special token of the template
            missing from the vocabulary.
        """
        # truncation: bool, or a strategy name (transformers' shorthand)
        if truncation is True:
            strategy: str | None = truncation_strategy
        elif truncation is False or truncation is None or truncation == "do_not_truncate":
            strategy = None
        elif isinstance(truncation, str):
            if truncation_strategy != "longest_first" and truncation != truncation_strategy:
                raise TokembedError(
                    f"truncation={truncation!r} contradicts truncation_strategy={truncation_strategy!r}; give one"
                )
            strategy = truncation
        else:
            raise TokembedError(f"truncation must be a bool or a strategy name, got {truncation!r}")
        if truncation_strategy not in TRUNCATION_STRATEGIES:
            raise TokembedError(f"truncation_strategy {truncation_strategy!r} is unknown; use one of "
                                f"{', '.join(TRUNCATION_STRATEGIES)}")
        if strategy is not None and strategy not in TRUNCATION_STRATEGIES:
            raise TokembedError(f"truncation {strategy!r} is unknown; use True, False or one of "
                                f"{', '.join(TRUNCATION_STRATEGIES)}")
        if strategy == "only_second" and not pair:
            raise TokembedError("truncation strategy 'only_second' needs pairs of texts; none were given")

        # padding: bool or "longest" / "max_length" / "do_not_pad"
        if padding is True:
            pad_mode: str | None = "longest"
        elif padding is False or padding is None or padding == "do_not_pad":
            pad_mode = None
        elif isinstance(padding, str) and padding in _PADDINGS:
            pad_mode = padding
        else:
            raise TokembedError(f"padding must be True, False, 'longest' or 'max_length', got {padding!r}")
        if padding_side not in ("right", "left"):
            raise TokembedError(f"padding_side must be 'right' or 'left', got {padding_side!r}")

        raise_parameter_errors("", OPTION_CONSTRAINTS, {"max_length": max_length, "stride": stride,
                                                       "pad_to_multiple_of": pad_to_multiple_of})
        max_length = None if max_length is None else int(max_length)
        stride = int(stride)
        pad_to_multiple_of = None if pad_to_multiple_of is None else int(pad_to_multiple_of)
        if max_length is None and (strategy is not None or pad_mode == "max_length"):
            raise TokembedError(
                "max_length is required with truncation" if strategy is not None
                else "padding='max_length' needs max_length"
            )
        if stride and strategy is None:
            raise TokembedError(f"stride={stride} does nothing without truncation=True")
        if pad_to_multiple_of is not None and pad_mode is None:
            raise TokembedError(f"pad_to_multiple_of={pad_to_multiple_of} does nothing without padding")
        if strategy is not None and pad_mode is not None and pad_to_multiple_of \
                and max_length % pad_to_multiple_of:  # type: ignore[operator]
            # rounding the padded length up would make a truncated result longer than max_length (transformers
            # refuses the same combination)
            raise TokembedError(
                f"truncation with max_length={max_length} and padding with pad_to_multiple_of={pad_to_multiple_of}: "
                f"max_length is not a multiple of pad_to_multiple_of, so padding would go past it; use a max_length "
                f"that is (e.g. {max_length - max_length % pad_to_multiple_of or pad_to_multiple_of})")

        # post-processor: the call's, else the tokenizer's, else the default (adds nothing)
        spec = post_processor if post_processor is not None else getattr(tokenizer, "post_processor", None)
        template = TemplateProcessing.from_spec(spec) or DEFAULT_TEMPLATE
        special_ids = template.special_ids(tokenizer.token_to_id) if add_special_tokens else {}

        room = None
        if strategy is not None:
            n_added = template.num_special_tokens(pair) if add_special_tokens else 0
            room = max_length - n_added  # type: ignore[operator]
            if room < 1:
                raise TokembedError(
                    f"max_length={max_length} leaves no room for text: the post-processor adds {n_added} special "
                    f"token(s) to {'a pair' if pair else 'a text'}"
                )
            if stride >= room:
                raise TokembedError(
                    f"stride={stride} must be smaller than max_length minus the {n_added} added special token(s) "
                    f"(= {room})"
                )

        pad_id = pad_token = None
        if pad_mode is not None:
            pad_token = getattr(tokenizer, "pad_token", None)
            if pad_token is None:
                raise TokembedError(f"padding needs a pad token, and this {type(tokenizer).__name__} has no "
                                    "pad_token; set pad_token when creating the tokenizer, or do not pad")
            pad_id = tokenizer.token_to_id(pad_token)
            if pad_id is None:
                raise TokembedError(f"the pad token {pad_token!r} is not in the vocabulary; cannot pad")

        return cls(pair, bool(add_special_tokens), template, special_ids, strategy, max_length, room, stride,
                   pad_mode, pad_to_multiple_of, padding_side, pad_id, pad_token)

    @property
    def is_identity(self) -> bool:
        """True when the options leave one text's encoding exactly as the model produced it."""
        return (self.truncation is None and self.padding is None
                and self.template.is_identity(self.pair, self.add_special_tokens))

    def process(self, a: Encoding, b: Encoding | None = None) -> Encoding:
        """Truncate, then apply the template (no padding: see :meth:`pad_one` and :meth:`pad_batch`)."""
        if self.truncation is not None:
            a_win, b_win = truncate(a, b, self.room, stride=self.stride,  # type: ignore[arg-type]
                                    strategy=self.truncation)  # type: ignore[arg-type]
        else:
            a_win, b_win = [a], (None if b is None else [b])
        return combine(a_win, b_win, self.template, special_ids=self.special_ids,
                       add_special_tokens=self.add_special_tokens)

    def pad_batch(self, encodings: list[Encoding]) -> list[Encoding]:
        """Pad every encoding (and its overflowing windows) to the common target length; no-op without padding."""
        if self.padding is None:
            return encodings
        target = padding_length([len(e) for e in encodings], self.padding, self.max_length,
                                self.pad_to_multiple_of)
        return [pad(e, target, pad_id=self.pad_id, pad_token=self.pad_token,  # type: ignore[arg-type]
                    side=self.padding_side) for e in encodings]  # type: ignore[arg-type]


# -- batch helpers of Tokenizer.encode_batch ------------------------------------------------------------------------
def check_batch_inputs(texts: Iterable[str], pairs: Iterable[str] | None) -> tuple[list[str], list[str] | None]:
    """``encode_batch``'s texts and pairs as lists, checked: str items, one pair per text."""
    if isinstance(texts, str):
        raise TypeError("encode_batch expects a list of str, not one str; use encode() for one text")
    texts = list(texts)
    for k, t in enumerate(texts):
        _check_str(t, f"encode_batch (text {k})")
    if pairs is not None:
        if isinstance(pairs, str):
            raise TypeError("encode_batch expects pairs as a list of str, not one str")
        pairs = list(pairs)
        if len(pairs) != len(texts):
            raise TokembedError(f"encode_batch got {len(texts)} texts but {len(pairs)} pairs")
        for k, t in enumerate(pairs):
            _check_str(t, f"encode_batch (pair {k})")
    return texts, pairs


def batch_result(encodings: list[Encoding], opts: EncodeOptions,
                 return_arrays: bool) -> "list[Encoding] | BatchEncoding":
    """The list of (already padded) encodings, or a :class:`BatchEncoding` when padding or arrays were asked;
    unequal lengths then raise :class:`TokembedError` saying which option makes them rectangular."""
    if opts.padding is None and not return_arrays:
        return encodings
    lengths = [len(e) for e in encodings]
    if len(set(lengths)) > 1:
        if opts.padding == "max_length":
            k = max(range(len(lengths)), key=lengths.__getitem__)
            raise TokembedError(
                f"text {k} has {lengths[k]} tokens, more than max_length={opts.max_length}: pass truncation=True "
                "or padding='longest' to get rectangular arrays"
            )
        raise TokembedError(
            f"the encodings have different lengths ({min(lengths)} to {max(lengths)} tokens): pass padding=True "
            "(or truncation with padding='max_length'; in a recipe, batch.padding: longest) to get rectangular arrays"
        )
    return BatchEncoding(encodings)


def _check_str(text: object, where: str) -> None:
    if not isinstance(text, str):
        raise TypeError(f"{where} expects str, got {type(text).__name__}")


def resolve_workers(num_workers: int | None) -> int:
    """Threads for ``num_workers``: None -> 1, -1 -> one per CPU; anything else but an int >= 1 raises
    :class:`~tokembed.errors.ParameterError` (a :class:`TokembedError`)."""
    raise_parameter_errors("", OPTION_CONSTRAINTS, {"num_workers": num_workers})
    if num_workers is None:
        return 1
    return (os.cpu_count() or 1) if num_workers == -1 else int(num_workers)
