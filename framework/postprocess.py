"""Post-processing of encodings: special-token templates, truncation with overflowing windows, padding.

This is the last stage of Hugging Face tokenizers' pipeline (normalizer -> pre-tokenizer -> model ->
post-processor), with its semantics:

- :class:`TemplateProcessing` is HF's ``tokenizers.processors.TemplateProcessing``: a template for one text
  (``"[CLS] $A [SEP]"``) and one for a pair (``"[CLS] $A [SEP] $B:1 [SEP]:1"``), where ``$A``/``$B`` are the two
  texts and ``:n`` sets the type id. Added tokens get offsets ``(0, 0)`` and ``special_tokens_mask`` 1.
- :func:`truncate` is HF's ``truncate_encodings`` (strategies ``longest_first``, ``only_first``, ``only_second``,
  the names transformers uses) and ``Encoding.truncate``: the kept window and the cut-off tokens as windows of the
  same length that overlap by ``stride`` tokens.
- :func:`pad` is HF's ``Encoding.pad``: pad tokens have type id 0, offsets ``(0, 0)``, attention mask 0 and
  ``special_tokens_mask`` 1; overflowing windows are padded too.

:class:`EncodeOptions` validates the per-call options of :meth:`tokembed.Tokenizer.encode` once per call; it is
immutable, so one tokenizer serves several threads. Nothing here writes into the encodings it receives: results
are new :class:`~tokembed.encoding.Encoding` objects.

References: Hugging Face tokenizers (``tokenizers/src/processors/template.rs``,
``tokenizers/src/utils/truncation.rs``, ``tokenizers/src/tokenizer/encoding.rs``) and transformers'
``PreTrainedTokenizerBase.__call__`` (``truncation=``, ``padding=``, ``stride=``).
"""

from __future__ import annotations

import functools
import math
import os
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Literal, Mapping, Sequence

import numpy as np

from .encoding import BatchEncoding, Encoding
from .errors import TokembedError

__all__ = [
    "TemplateProcessing",
    "EncodeOptions",
    "TRUNCATION_STRATEGIES",
    "truncate",
    "combine",
    "pad",
    "padding_length",
    "check_batch_inputs",
    "batch_result",
    "resolve_workers",
]

TruncationStrategy = Literal["longest_first", "only_first", "only_second"]
#: Accepted values of ``truncation_strategy`` (transformers' names).
TRUNCATION_STRATEGIES: tuple[str, ...] = ("longest_first", "only_first", "only_second")
_PADDINGS = ("longest", "max_length")
_DIGITS = re.compile(r"[0-9]+")


# -- templates --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Piece:
    """One piece of a template: a text (``sequence`` "A" or "B") or a special ``token``, with its type id."""

    sequence: str | None
    token: str | None
    type_id: int

    def __str__(self) -> str:
        return f"${self.sequence}:{self.type_id}" if self.sequence else f"{self.token}:{self.type_id}"


def _parse_piece(text: str, where: str) -> _Piece:
    def bad(why: str) -> TokembedError:
        return TokembedError(f"post_processor {where}: cannot read the piece {text!r}: {why}")

    name, sep, type_part = text.partition(":")
    type_id = None
    if sep:
        if not _DIGITS.fullmatch(type_part):
            raise bad("the part after ':' must be a type id (a non-negative integer)")
        type_id = int(type_part)
    if not name:
        raise bad("empty token name")
    if name.startswith("$"):
        rest = name[1:]
        if rest in ("", "A", "a"):
            seq, default = "A", 0
        elif rest in ("B", "b"):
            seq, default = "B", 0
        elif _DIGITS.fullmatch(rest):  # "$1" is the first text with type id 1, as in HF
            seq, default = "A", int(rest)
        else:
            raise bad("a text is written $A, $B or $<type id>")
        return _Piece(seq, None, default if type_id is None else type_id)
    return _Piece(None, name, 0 if type_id is None else type_id)


@functools.lru_cache(maxsize=256)
def _parse_template(template: str | tuple[str, ...], which: str) -> tuple[_Piece, ...]:
    pieces_text = template.split() if isinstance(template, str) else template
    where = f"{which} template {template!r}" if isinstance(template, str) else f"{which} template {list(template)!r}"
    pieces = tuple(_parse_piece(p, where) for p in pieces_text)
    n_a = sum(p.sequence == "A" for p in pieces)
    n_b = sum(p.sequence == "B" for p in pieces)
    if which == "single" and (n_a, n_b) != (1, 0):
        raise TokembedError(f"post_processor {where}: a single template must hold $A exactly once and no $B")
    if which == "pair" and (n_a, n_b) != (1, 1):
        raise TokembedError(f"post_processor {where}: a pair template must hold $A and $B exactly once each")
    return pieces


def _template_key(value: Any, which: str) -> str | tuple[str, ...]:
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(p, str) for p in value):
        return tuple(value)
    raise TokembedError(
        f"post_processor: the {which} template must be a string such as \"[CLS] $A [SEP]\" or a list of pieces, "
        f"got {value!r}"
    )


class TemplateProcessing:
    """Add special tokens around one text or a pair of texts, following a template.

    The syntax is Hugging Face tokenizers' ``TemplateProcessing``: a template is a string of whitespace-separated
    pieces (or a list of pieces). ``$A`` is the first text and ``$B`` the second; any other piece is a special
    token, looked up in the tokenizer's vocabulary. A piece may end in ``:n`` to give it type id ``n`` (default
    0); ``$n`` alone means ``$A:n``. Example (BERT)::

        TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1")

    Parameters
    ----------
    single : str or list of str, default "$A"
        Template for one text; holds ``$A`` exactly once and no ``$B``.
    pair : str or list of str, default "$A:0 $B:1"
        Template for a pair; holds ``$A`` and ``$B`` exactly once each. The default (HF's) joins the two texts
        with type ids 0 and 1 and adds nothing.

    Raises
    ------
    TokembedError
        If a template cannot be read. (A special token missing from the vocabulary is reported when the
        template is applied, by :meth:`special_ids`.)

    Notes
    -----
    Differences from HF, both deliberate: a text may appear only once in a template, and the type ids the template
    gives a text also apply to that text's overflowing windows (HF gives the windows type id 0 for ``$A`` and 1 for
    ``$B`` whatever the template says; the two agree for the usual templates, ``$A``/``$A:0`` and ``$B:1``).
    """

    def __init__(self, single: str | Sequence[str] = "$A", pair: str | Sequence[str] = "$A:0 $B:1"):
        self._single_src = _template_key(single, "single")
        self._pair_src = _template_key(pair, "pair")
        self.single: tuple[_Piece, ...] = _parse_template(self._single_src, "single")
        self.pair: tuple[_Piece, ...] = _parse_template(self._pair_src, "pair")

    @classmethod
    def from_spec(cls, spec: "TemplateProcessing | Mapping[str, Any] | None") -> "TemplateProcessing | None":
        """Build from a JSON-able spec ``{"single": ..., "pair": ...}`` (``pair`` optional), or pass through.

        ``{"type": "template", ...}`` is accepted too. None gives None.

        Raises
        ------
        TokembedError
            If the spec is not a mapping with a ``single`` template, has unknown keys, or a template is invalid.
        """
        if spec is None or isinstance(spec, TemplateProcessing):
            return spec
        if not isinstance(spec, Mapping):
            raise TokembedError(
                "post_processor must be None or a mapping such as "
                f"{{\"single\": \"[CLS] $A [SEP]\", \"pair\": \"[CLS] $A [SEP] $B:1 [SEP]:1\"}}, got {spec!r}"
            )
        unknown = sorted(set(spec) - {"single", "pair", "type"})
        if unknown:
            raise TokembedError(f"post_processor: unknown key(s) {unknown!r}; expected 'single' and 'pair'")
        if spec.get("type", "template") != "template":
            raise TokembedError(f"post_processor: unknown type {spec['type']!r}; the only type is 'template'")
        if "single" not in spec:
            raise TokembedError("post_processor: a 'single' template is required, e.g. \"[CLS] $A [SEP]\"")
        return _from_spec_cached(_template_key(spec["single"], "single"),
                                 _template_key(spec.get("pair", "$A:0 $B:1"), "pair"))

    def to_spec(self) -> dict[str, str]:
        """The JSON-able spec, with every type id written out: ``{"single": "...", "pair": "..."}``."""
        return {"single": " ".join(map(str, self.single)), "pair": " ".join(map(str, self.pair))}

    @property
    def special_tokens(self) -> list[str]:
        """The special tokens the templates use, each once, in order of appearance (single, then pair)."""
        out: list[str] = []
        for piece in self.single + self.pair:
            if piece.token is not None and piece.token not in out:
                out.append(piece.token)
        return out

    def num_special_tokens(self, pair: bool = False) -> int:
        """Number of tokens the template adds to one text (``pair=False``) or to a pair."""
        return sum(p.token is not None for p in (self.pair if pair else self.single))

    def special_ids(self, token_to_id: Callable[[str], int | None]) -> dict[str, int]:
        """Look up the id of every special token of the templates.

        Raises
        ------
        TokembedError
            Naming every special token the vocabulary lacks.
        """
        ids = {tok: token_to_id(tok) for tok in self.special_tokens}
        missing = [tok for tok, i in ids.items() if i is None]
        if missing:
            raise TokembedError(
                f"post_processor: special token(s) {missing!r} of the template are not in the tokenizer's "
                "vocabulary; add them to special_tokens when training, or change the template"
            )
        return {tok: int(i) for tok, i in ids.items()}

    def is_identity(self, pair: bool, add_special_tokens: bool) -> bool:
        """True when applying the template leaves a text unchanged (adds nothing and keeps type id 0)."""
        if pair:
            return False
        return all(p.type_id == 0 for p in self.single if p.sequence) and not (
            add_special_tokens and self.num_special_tokens(False)
        )

    def apply(self, a: Encoding, b: Encoding | None = None, *, special_ids: Mapping[str, int],
              add_special_tokens: bool = True) -> Encoding:
        """Fill the template with one text (``b`` None) or a pair; the ``overflowing`` of the inputs is ignored.

        Parameters
        ----------
        a, b : Encoding
            The encoded texts (``b`` None for one text).
        special_ids : mapping of str to int
            The ids of the special tokens, from :meth:`special_ids`.
        add_special_tokens : bool, default True
            With False, only the texts are kept (with the template's type ids).

        Returns
        -------
        Encoding
            A new encoding; added tokens have offsets ``(0, 0)``, ``special_tokens_mask`` 1, attention mask 1.
        """
        pieces = self.single if b is None else self.pair
        ids: list[np.ndarray] = []
        tokens: list[str] = []
        offsets: list[np.ndarray] = []
        type_ids: list[np.ndarray] = []
        stm: list[np.ndarray] = []
        att: list[np.ndarray] = []
        for piece in pieces:
            if piece.sequence is not None:
                enc = a if piece.sequence == "A" else b
                n = len(enc)
                ids.append(enc.ids)
                tokens.extend(enc.tokens)
                offsets.append(enc.offsets)
                type_ids.append(np.full(n, piece.type_id, np.int32))
                stm.append(enc.special_tokens_mask)
                att.append(enc.attention_mask)
            elif add_special_tokens:
                ids.append(np.array([special_ids[piece.token]], np.int32))
                tokens.append(piece.token)
                offsets.append(np.zeros((1, 2), np.int64))
                type_ids.append(np.array([piece.type_id], np.int32))
                stm.append(np.ones(1, np.int8))
                att.append(np.ones(1, np.int8))
        return Encoding(np.concatenate(ids), tokens, np.concatenate(offsets), np.concatenate(type_ids),
                        np.concatenate(stm), np.concatenate(att))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TemplateProcessing):
            return NotImplemented
        return self.single == other.single and self.pair == other.pair

    def __hash__(self) -> int:
        return hash((self.single, self.pair))

    def __repr__(self) -> str:
        spec = self.to_spec()
        return f"TemplateProcessing(single={spec['single']!r}, pair={spec['pair']!r})"


@functools.lru_cache(maxsize=64)
def _from_spec_cached(single: str | tuple[str, ...], pair: str | tuple[str, ...]) -> TemplateProcessing:
    return TemplateProcessing(single, pair)


#: The template used when a tokenizer has no post-processor: adds nothing, a pair gets type ids 0 and 1.
DEFAULT_TEMPLATE = TemplateProcessing()


# -- truncation -------------------------------------------------------------------------------------------------
def _slice(enc: Encoding, start: int, stop: int) -> Encoding:
    return Encoding(enc.ids[start:stop], enc.tokens[start:stop], enc.offsets[start:stop],
                    enc.type_ids[start:stop], enc.special_tokens_mask[start:stop], enc.attention_mask[start:stop])


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
        return out
    pads = (np.full(k, pad_id, np.int32), [pad_token] * k, np.zeros((k, 2), np.int64), np.zeros(k, np.int32),
            np.ones(k, np.int8), np.zeros(k, np.int8))
    mine = (enc.ids, enc.tokens, enc.offsets, enc.type_ids, enc.special_tokens_mask, enc.attention_mask)
    parts = [(m, p) if side == "right" else (p, m) for m, p in zip(mine, pads)]
    out = Encoding(
        np.concatenate(parts[0]), parts[1][0] + parts[1][1], np.concatenate(parts[2]), np.concatenate(parts[3]),
        np.concatenate(parts[4]), np.concatenate(parts[5]),
    )
    out.overflowing = over
    return out


def padding_length(lengths: Sequence[int], padding: str, max_length: int | None,
                   pad_to_multiple_of: int | None) -> int:
    """Target length: the longest of ``lengths`` (``"longest"``) or ``max_length`` (``"max_length"``), rounded up
    to a multiple of ``pad_to_multiple_of`` when given."""
    target = max(lengths, default=0) if padding == "longest" else int(max_length)  # type: ignore[arg-type]
    if pad_to_multiple_of:
        target = math.ceil(target / pad_to_multiple_of) * pad_to_multiple_of
    return target


# -- per-call options -------------------------------------------------------------------------------------------
def _check_int(name: str, value: Any, low: int, allow_none: bool) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise TokembedError(f"{name} must be an int >= {low}{' or None' if allow_none else ''}, got {value!r}")
    return int(value)


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

        max_length = _check_int("max_length", max_length, 1, True)
        stride = _check_int("stride", stride, 0, False)  # type: ignore[assignment]
        pad_to_multiple_of = _check_int("pad_to_multiple_of", pad_to_multiple_of, 1, True)
        if max_length is None and (strategy is not None or pad_mode == "max_length"):
            raise TokembedError(
                "max_length is required with truncation" if strategy is not None
                else "padding='max_length' needs max_length"
            )
        if stride and strategy is None:
            raise TokembedError(f"stride={stride} does nothing without truncation=True")
        if pad_to_multiple_of is not None and pad_mode is None:
            raise TokembedError(f"pad_to_multiple_of={pad_to_multiple_of} does nothing without padding")

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
    :class:`TokembedError`."""
    if num_workers is None:
        return 1
    if num_workers == -1 and not isinstance(num_workers, bool):
        return os.cpu_count() or 1
    if isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 1:
        raise TokembedError(f"num_workers must be None, -1 or an int >= 1, got {num_workers!r}")
    return num_workers
