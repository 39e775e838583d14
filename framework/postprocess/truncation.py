"""Truncation with overflowing windows, and padding (see :mod:`tokembed.postprocess`)."""

from __future__ import annotations

import math
from typing import Literal, Mapping, Sequence

import numpy as np

from ..encoding import Encoding
from ..errors import TokembedError
from .template import TemplateProcessing

__all__ = ["TRUNCATION_STRATEGIES", "truncate", "combine", "pad", "padding_length"]

TruncationStrategy = Literal["longest_first", "only_first", "only_second"]
#: Accepted values of ``truncation_strategy`` (transformers' names).
TRUNCATION_STRATEGIES: tuple[str, ...] = ("longest_first", "only_first", "only_second")
_PADDINGS = ("longest", "max_length")


# -- truncation -------------------------------------------------------------------------------------------------
def _slice(enc: Encoding, start: int, stop: int) -> Encoding:
    out = Encoding(enc.ids[start:stop], enc.tokens[start:stop], enc.offsets[start:stop],
                   enc.type_ids[start:stop], enc.special_tokens_mask[start:stop], enc.attention_mask[start:stop])
    return _keep_alignment(out, enc, enc._sequence_array()[start:stop] if enc._sequences is not None else None)


def _keep_alignment(out: Encoding, enc: Encoding, sequences: np.ndarray | None) -> Encoding:
    """``out`` with the given sequence ids of ``enc``'s tokens (see :class:`Encoding`'s alignment)."""
    out._sequences = sequences
    return out


def _windows(enc: Encoding, max_len: int, stride: int, what: str) -> list[Encoding]:
    """``[kept, *overflowing]``: windows of ``max_len`` tokens starting every ``max_len - stride`` tokens."""
    n = len(enc)
    if max_len >= n:
        return [enc]
    if max_len == 0:  # as HF: nothing kept, the whole text is one overflowing window
        return [_slice(enc, 0, 0), enc]
    if stride >= max_len:
        raise TokembedError(
            f"stride={stride} must be smaller than the {max_len} token(s) kept of the {what} after truncation "
            "(max_length minus the added special tokens, shared between the texts of a pair)"
        )
    step = max_len - stride
    out = []
    for start in range(0, n, step):
        stop = min(start + max_len, n)
        out.append(_slice(enc, start, stop))
        if stop == n:
            break
    return out


def truncate(
    a: Encoding, b: Encoding | None, max_length: int, *, stride: int = 0,
    strategy: TruncationStrategy = "longest_first",
) -> tuple[list[Encoding], list[Encoding] | None]:
    """Cut one text or a pair to ``max_length`` tokens in total, keeping the rest as overlapping windows.

    Parameters
    ----------
    a, b : Encoding
        The texts, before special tokens are added (``b`` None for one text).
    max_length : int
        Tokens allowed for the texts together (the caller has subtracted the special tokens).
    stride : int, default 0
        Tokens shared by consecutive windows of one text.
    strategy : {"longest_first", "only_first", "only_second"}
        ``longest_first`` shares ``max_length`` between the two texts as HF does: a text shorter than half
        keeps all its tokens and the other gets the rest; otherwise each gets half (the second text the odd
        token). ``only_first`` / ``only_second`` cut only that text.

    Returns
    -------
    (list of Encoding, list of Encoding or None)
        For each text, its windows: ``[kept, overflow_1, overflow_2, ...]``; a text that was not cut is
        ``[itself]``. Window ``k`` starts at token ``k * (L - stride)`` of the text, ``L`` being the kept length.

    Raises
    ------
    TokembedError
        If ``only_second`` is asked without a pair, if the text to cut is not longer than the number of tokens to
        remove, or if ``stride`` is not smaller than the number of tokens kept of a text that is cut.
    """
    if strategy not in TRUNCATION_STRATEGIES:
        raise TokembedError(
            f"truncation strategy {strategy!r} is unknown; use one of {', '.join(TRUNCATION_STRATEGIES)}"
        )
    if strategy == "only_second" and b is None:
        raise TokembedError("truncation strategy 'only_second' needs a pair of texts; got one text")
    total = len(a) + (len(b) if b is not None else 0)
    if total <= max_length:
        return [a], (None if b is None else [b])
    if strategy == "longest_first":
        if b is None:
            return _windows(a, max_length, stride, "text"), None
        n1, n2 = len(a), len(b)
        swap = n1 > n2
        if swap:
            n1, n2 = n2, n1
        n2 = n1 if n1 > max_length else max(n1, max_length - n1)
        if n1 + n2 > max_length:
            n1 = max_length // 2
            n2 = n1 + max_length % 2
        if swap:
            n1, n2 = n2, n1
        return _windows(a, n1, stride, "first text"), _windows(b, n2, stride, "second text")
    to_remove = total - max_length
    first = strategy == "only_first"
    target = a if first else b
    what = "first text" if first else "second text"
    if len(target) <= to_remove:
        raise TokembedError(
            f"truncation {strategy!r}: the {what} has {len(target)} token(s) but {to_remove} must be removed to fit "
            f"max_length; use truncation_strategy='longest_first' or a larger max_length"
        )
    cut = _windows(target, len(target) - to_remove, stride, what)
    return (cut, [b]) if first else ([a], cut)


def combine(a_windows: list[Encoding], b_windows: list[Encoding] | None, template: TemplateProcessing, *,
            special_ids: Mapping[str, int], add_special_tokens: bool = True) -> Encoding:
    """Apply ``template`` to the kept windows and to every overflowing combination, as HF orders them.

    For one text the overflowing windows are ``a_1, a_2, ...``. For a pair ``(A, B)`` with windows
    ``A, a_1, ...`` and ``B, b_1, ...`` they are ``(a_1, B), (a_1, b_1), ..., (a_2, B), ..., (A, b_1), ...``:
    the top-level ``overflowing`` list of HF tokenizers (HF also nests copies inside each window; we do not).

    Returns
    -------
    Encoding
        The kept windows filled into the template, with ``overflowing`` set (each window's own
        ``overflowing`` is empty).
    """
    def fill(x: Encoding, y: Encoding | None) -> Encoding:
        return template.apply(x, y, special_ids=special_ids, add_special_tokens=add_special_tokens)

    main = fill(a_windows[0], None if b_windows is None else b_windows[0])
    if b_windows is None:
        main.overflowing = [fill(x, None) for x in a_windows[1:]]
    else:
        over = [fill(x, y) for x in a_windows[1:] for y in b_windows]
        over += [fill(a_windows[0], y) for y in b_windows[1:]]
        main.overflowing = over
    return main


# -- padding ----------------------------------------------------------------------------------------------------
def pad(enc: Encoding, length: int, *, pad_id: int, pad_token: str,
        side: Literal["right", "left"] = "right") -> Encoding:
    """Pad ``enc`` (and its overflowing windows) to ``length`` tokens; longer encodings are left as they are.

    Pad tokens get id ``pad_id``, token ``pad_token``, type id 0, offsets ``(0, 0)``, attention mask 0 and
    ``special_tokens_mask`` 1 (HF's ``Encoding.pad``). Returns a new encoding (or ``enc`` itself when nothing
    changes).
    """
    over = [pad(o, length, pad_id=pad_id, pad_token=pad_token, side=side) for o in enc.overflowing]
    k = length - len(enc)
    if k <= 0:
        if all(o is p for o, p in zip(over, enc.overflowing)):
            return enc
        out = Encoding(enc.ids, enc.tokens, enc.offsets, enc.type_ids, enc.special_tokens_mask,
                       enc.attention_mask)
        out.overflowing = over
        return _keep_alignment(out, enc, enc._sequences)
    pads = (np.full(k, pad_id, np.int32), [pad_token] * k, np.zeros((k, 2), np.int64), np.zeros(k, np.int32),
            np.ones(k, np.int8), np.zeros(k, np.int8))
    mine = (enc.ids, enc.tokens, enc.offsets, enc.type_ids, enc.special_tokens_mask, enc.attention_mask)
    parts = [(m, p) if side == "right" else (p, m) for m, p in zip(mine, pads)]
    out = Encoding(
        np.concatenate(parts[0]), parts[1][0] + parts[1][1], np.concatenate(parts[2]), np.concatenate(parts[3]),
        np.concatenate(parts[4]), np.concatenate(parts[5]),
    )
    out.overflowing = over
    pads_seq = np.full(k, -1, np.int8)
    mine_seq = enc._sequence_array()
    return _keep_alignment(out, enc, np.concatenate((mine_seq, pads_seq) if side == "right" else (pads_seq, mine_seq)))


def padding_length(lengths: Sequence[int], padding: str, max_length: int | None,
                   pad_to_multiple_of: int | None) -> int:
    """Target length: the longest of ``lengths`` (``"longest"``) or ``max_length`` (``"max_length"``), rounded up
    to a multiple of ``pad_to_multiple_of`` when given."""
    target = max(lengths, default=0) if padding == "longest" else int(max_length)  # type: ignore[arg-type]
    if pad_to_multiple_of:
        target = math.ceil(target / pad_to_multiple_of) * pad_to_multiple_of
    return target
