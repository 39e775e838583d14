"""Normalizers: Hugging Face-style text stages that keep an alignment to the original text.

Every stage has a ``name``, a JSON-able ``spec`` from which :func:`build_normalizer` rebuilds it, and
``normalize(text) -> NormalizedText``. The normalized text always equals the plain library call on the whole
string (``unicodedata.normalize``, per-code-point ``str.lower``, ...); see each class for its exact rule.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence as SequenceABC
from typing import Any, ClassVar

import numpy as np

from tokembed.text._base import (
    WHITE_SPACE,
    CharTable,
    TextStageError,
    check_no_params,
    codepoints,
    from_codepoints,
    parse_spec,
)
from tokembed.params import Builds
from tokembed.text._unicode import normalize_form
from tokembed.text.normalized import NormalizedText

__all__ = [
    "Normalizer",
    "Identity",
    "NFC",
    "NFD",
    "NFKC",
    "NFKD",
    "Lowercase",
    "StripAccents",
    "BertClean",
    "Sequence",
    "NORMALIZERS",
    "build_normalizer",
]


class Normalizer:
    """Base class of the normalization stages.

    Subclasses set ``name`` and implement ``_normalize``; parameterless stages need nothing else.
    """

    name: ClassVar[str]

    @property
    def spec(self) -> Any:
        """JSON-able description: ``build_normalizer(stage.spec)`` rebuilds an equal stage."""
        return self.name

    def normalize(self, text: str) -> NormalizedText:
        """Normalize ``text``.

        Parameters
        ----------
        text : str

        Returns
        -------
        NormalizedText
            The normalized text with, for each of its code points, the code-point span of ``text`` it came from.

        Raises
        ------
        TypeError
            If ``text`` is not a str.
        """
        if not isinstance(text, str):
            raise TypeError(f"{type(self).__name__}.normalize expects str, got {type(text).__name__}")
        return self._normalize(text)

    def normalize_str(self, text: str) -> str:
        """Only the normalized string (Hugging Face's ``normalize_str``)."""
        return self.normalize(text).normalized

    def _normalize(self, text: str) -> NormalizedText:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.spec == self.spec  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(repr(self.spec))

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class Identity(Normalizer):
    """Leave the text unchanged."""

    name = "identity"

    def _normalize(self, text: str) -> NormalizedText:
        return NormalizedText.unchanged(text)


class _UnicodeForm(Normalizer):
    form: ClassVar[str]

    def _normalize(self, text: str) -> NormalizedText:
        return normalize_form(text, self.form)


class NFC(_UnicodeForm):
    """Unicode canonical composition: ``unicodedata.normalize("NFC", text)`` (UAX #15)."""

    name = "nfc"
    form = "NFC"


class NFD(_UnicodeForm):
    """Unicode canonical decomposition: ``unicodedata.normalize("NFD", text)`` (UAX #15)."""

    name = "nfd"
    form = "NFD"


class NFKC(_UnicodeForm):
    """Unicode compatibility composition: ``unicodedata.normalize("NFKC", text)`` (UAX #15).

    Example: ``"x\\ufe30y"`` -> ``"x..y"``, both dots aligned to the original span (1, 2).
    """

    name = "nfkc"
    form = "NFKC"


class NFKD(_UnicodeForm):
    """Unicode compatibility decomposition: ``unicodedata.normalize("NFKD", text)`` (UAX #15)."""

    name = "nfkd"
    form = "NFKD"


_LOWER_LEN = CharTable(lambda ch: len(ch.lower()))


class Lowercase(Normalizer):
    """Lowercase code point by code point: ``"".join(c.lower() for c in text)``.

    This is Hugging Face ``tokenizers``' ``Lowercase`` (Rust ``char::to_lowercase`` per code point), not Python's
    ``str.lower``: the only difference is the context rule for final sigma, which ``str.lower`` applies
    (``"ΟΔΟΣ".lower() == "οδος"``) and this stage does not (``"οδοσ"``). Full case mappings apply, so
    ``"İ"`` (U+0130) becomes the two code points ``"i̇"`` (U+0069 U+0307), both aligned to the one source character.
    Uses ``unicodedata``'s Unicode version.
    """

    name = "lowercase"

    def _normalize(self, text: str) -> NormalizedText:
        if text.isascii():
            return NormalizedText(text, text.lower(), None)
        # Replacing every capital sigma first switches off str.lower's only context-dependent rule.
        lowered = text.replace("\u03a3", "\u03c3").lower()
        if len(lowered) == len(text):  # no code point expanded, so the alignment is one-to-one
            return NormalizedText(text, lowered, None)
        lengths = _LOWER_LEN.classes(text).astype(np.int64)
        starts = np.repeat(np.arange(len(text), dtype=np.int64), lengths)
        return NormalizedText(text, lowered, np.stack([starts, starts + 1], axis=1))


_IS_MN = CharTable(lambda ch: unicodedata.category(ch) == "Mn")


class StripAccents(Normalizer):
    """Remove accents the way BERT does: NFD, then drop every code point of category Mn (nonspacing mark).

    Equals ``"".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")``, which
    is ``_run_strip_accents`` of Google's BERT ``tokenization.py`` (Devlin et al., 2019). The result is left in NFD.
    Hugging Face's ``StripAccents`` differs: it drops every mark, spacing (Mc, e.g. Devanagari vowel signs) and
    enclosing (Me) ones included.
    """

    name = "strip_accents"

    def _normalize(self, text: str) -> NormalizedText:
        if text.isascii():
            return NormalizedText.unchanged(text)
        nfd = normalize_form(text, "NFD")
        marks = _IS_MN.classes(nfd.normalized).view(bool)
        if not marks.any():
            return nfd
        keep = ~marks
        stripped = from_codepoints(codepoints(nfd.normalized)[keep])
        return NormalizedText(text, stripped, nfd.alignments[keep])


_KEEP, _DROP, _SPACE = 0, 1, 2


def _bert_clean_class(ch: str) -> int:
    if ch in "\t\n\r":
        return _SPACE
    if ch in "\x00\ufffd" or unicodedata.category(ch) in ("Cc", "Cf", "Co", "Cs"):
        return _DROP
    return _SPACE if ch in WHITE_SPACE else _KEEP


_BERT_CLEAN = CharTable(_bert_clean_class)


class BertClean(Normalizer):
    """BERT's ``clean_text``: drop NUL, U+FFFD and "other" characters; map every whitespace character to a space.

    The rule of Hugging Face's ``BertNormalizer(clean_text=True)``: tab, newline and carriage return are
    whitespace (-> ``" "``); otherwise characters of category Cc, Cf, Co or Cs (controls, formats such as U+200B
    and U+FEFF, private use, lone surrogates) and U+0000, U+FFFD are dropped; then every remaining ``White_Space``
    character (space, U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000) becomes a space.
    Google's original ``tokenization.py`` differs in two corners: it also drops unassigned code points (Cn, which
    depends on the Unicode version and would drop emoji newer than ``unicodedata``), and it keeps U+2028/U+2029.
    """

    name = "bert_clean"

    def _normalize(self, text: str) -> NormalizedText:
        classes = _BERT_CLEAN.classes(text)
        if not classes.any():
            return NormalizedText.unchanged(text)
        cps = codepoints(text)
        cps[classes == _SPACE] = 0x20
        keep = classes != _DROP
        if keep.all():
            return NormalizedText(text, from_codepoints(cps), None)
        kept = np.flatnonzero(keep).astype(np.int64)
        return NormalizedText(text, from_codepoints(cps[keep]), np.stack([kept, kept + 1], axis=1))


class Sequence(Normalizer):
    """Apply several normalizers in order, composing their alignments.

    Parameters
    ----------
    normalizers : sequence of Normalizer
        The stages, first applied first.

    The spec is the list of the members' specs, e.g. ``["nfd", "lowercase", "strip_accents"]``.
    """

    name = "sequence"

    def __init__(self, normalizers: SequenceABC[Normalizer]):
        self.normalizers = tuple(normalizers)

    @property
    def spec(self) -> list[Any]:
        return [stage.spec for stage in self.normalizers]

    def _normalize(self, text: str) -> NormalizedText:
        result = NormalizedText.unchanged(text)
        for stage in self.normalizers:
            result = result.compose(stage.normalize(result.normalized))
        return result

    def __repr__(self) -> str:
        return f"Sequence({list(self.normalizers)!r})"


#: Stage name -> class. ``sequence`` is built from a list spec, or ``{"type": "sequence", "normalizers": [...]}``.
NORMALIZERS: dict[str, type[Normalizer]] = {
    cls.name: cls for cls in (Identity, NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, BertClean, Sequence)
}


def build_normalizer(spec: Any = None) -> Normalizer:
    """Build a normalizer from its spec.

    Parameters
    ----------
    spec : None, str, list, dict or Normalizer
        ``None`` -> identity; a stage name (``"nfkc"``); ``{"type": name}``; a list of specs, composed in order
        (``["nfd", "lowercase"]``; one element gives that stage, none gives identity);
        ``{"type": "sequence", "normalizers": [...]}``; or a ``Normalizer``, returned as is.

    Returns
    -------
    Normalizer

    Raises
    ------
    TextStageError
        (a ``TokembedError`` and ``ValueError``) for an unknown name, listing the available names, or for a spec of
        the wrong shape.
    """
    if spec is None:
        return Identity()
    if isinstance(spec, Normalizer):
        return spec
    if isinstance(spec, (list, tuple)):
        stages = [build_normalizer(item) for item in spec]
        if not stages:
            return Identity()
        return stages[0] if len(stages) == 1 else Sequence(stages)
    name, params = parse_spec("normalizer", spec, NORMALIZERS)
    if name == "sequence":
        members = params.pop("normalizers", None)
        check_no_params("normalizer", name, params)
        if not isinstance(members, (list, tuple)):
            raise TextStageError("normalizer 'sequence' needs a list 'normalizers', e.g. ['nfd', 'lowercase']")
        return Sequence([build_normalizer(item) for item in members])
    check_no_params("normalizer", name, params)
    return NORMALIZERS[name]()


#: The declaration of a component parameter that holds a normalizer spec (:mod:`tokembed.params`): what
#: :func:`build_normalizer` builds, its message following the problem (``unknown normalizer 'nfcc'. Did you mean
#: 'nfc'?``). List ``None`` beside it where a parameter allows null.
NORMALIZER_SPEC = Builds(build_normalizer, "a normalizer spec")
