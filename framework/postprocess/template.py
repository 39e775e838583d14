"""Special-token templates: Hugging Face's ``TemplateProcessing`` (see :mod:`tokembed.postprocess`)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..encoding import Encoding
from ..errors import TokembedError
from ..params import Builds

__all__ = ["TemplateProcessing", "DEFAULT_TEMPLATE", "POST_PROCESSOR_SPEC", "template_from_hf", "template_to_hf"]

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
        seqs: list[np.ndarray] = []
        for piece in pieces:
            if piece.sequence is not None:
                enc = a if piece.sequence == "A" else b
                n = len(enc)
                own = enc._sequence_array()
                seqs.append(np.where(own < 0, -1, 0 if piece.sequence == "A" else 1).astype(np.int8))
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
                seqs.append(np.full(1, -1, np.int8))
        out = Encoding(np.concatenate(ids), tokens, np.concatenate(offsets), np.concatenate(type_ids),
                       np.concatenate(stm), np.concatenate(att))
        out._sequences = np.concatenate(seqs)
        return out

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

#: The declaration of a tokenizer's ``post_processor`` parameter (:mod:`tokembed.params`): a spec that
#: :meth:`TemplateProcessing.from_spec` reads, its message following the problem; null (no template) allowed.
POST_PROCESSOR_SPEC = [Builds(TemplateProcessing.from_spec, "a post-processor template"), None]


# -- Hugging Face tokenizer.json ---------------------------------------------------------------------------------
def _hf_pieces(spec: Any, source: str) -> list[str]:
    pieces = []
    for item in spec:
        if not isinstance(item, Mapping) or len(item) != 1:
            raise TokembedError(f"{source}: cannot read the post-processor template piece {item!r}")
        (kind, body), = item.items()
        if kind == "Sequence":
            pieces.append(f"${body['id']}:{int(body.get('type_id', 0))}")
        elif kind == "SpecialToken":
            pieces.append(f"{body['id']}:{int(body.get('type_id', 0))}")
        else:
            raise TokembedError(f"{source}: unknown post-processor template piece {kind!r}")
    return pieces


def template_from_hf(spec: Any, source: str) -> dict[str, str] | None:
    """Our ``post_processor`` spec of a Hugging Face ``post_processor`` JSON: ``TemplateProcessing``,
    ``BertProcessing`` (``[CLS] $A [SEP]`` / ``[CLS] $A [SEP] $B:1 [SEP]:1``), ``RobertaProcessing`` (``<s> $A </s>``
    / ``<s> $A </s> </s> $B </s>``, its offset trimming aside) or none (None).

    Raises
    ------
    TokembedError
        For another type or a malformed template, naming ``source``.
    """
    if spec is None:
        return None
    kind = spec.get("type") if isinstance(spec, Mapping) else None
    try:
        return _template_from_hf(spec, kind, source)
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise TokembedError(f"{source}: the post-processor {kind!r} is malformed ({type(exc).__name__}: {exc})"
                            ) from None


def _template_from_hf(spec: Any, kind: Any, source: str) -> dict[str, str]:
    if kind == "BertProcessing":
        cls, sep = spec["cls"][0], spec["sep"][0]
        return {"single": f"{cls} $A {sep}", "pair": f"{cls} $A {sep} $B:1 {sep}:1"}
    if kind == "RobertaProcessing":
        cls, sep = spec["cls"][0], spec["sep"][0]
        return {"single": f"{cls} $A {sep}", "pair": f"{cls} $A {sep} {sep} $B {sep}"}
    if kind == "TemplateProcessing":
        return {"single": " ".join(_hf_pieces(spec["single"], source)),
                "pair": " ".join(_hf_pieces(spec["pair"], source))}
    raise TokembedError(f"{source}: the post-processor {kind!r} has no tokembed equivalent (TemplateProcessing, "
                        "BertProcessing and RobertaProcessing do); pass post_processor=... to choose one")


def template_to_hf(spec: Any, vocab: Mapping[str, int]) -> dict[str, Any] | None:
    """Hugging Face's ``TemplateProcessing`` JSON of our ``post_processor`` spec (None for None); ``vocab`` maps
    each special token of the template to its id.

    Raises
    ------
    TokembedError
        If the spec is invalid or a special token of the template is not in ``vocab``.
    """
    template = TemplateProcessing.from_spec(spec)
    if template is None:
        return None
    ids = template.special_ids(vocab.get)

    def pieces(seq: Sequence[_Piece]) -> list[dict[str, Any]]:
        return [{"Sequence": {"id": p.sequence, "type_id": p.type_id}} if p.sequence is not None
                else {"SpecialToken": {"id": p.token, "type_id": p.type_id}} for p in seq]

    specials = {tok: {"id": tok, "ids": [ids[tok]], "tokens": [tok]} for tok in template.special_tokens}
    return {"type": "TemplateProcessing", "single": pieces(template.single), "pair": pieces(template.pair),
            "special_tokens": specials}
