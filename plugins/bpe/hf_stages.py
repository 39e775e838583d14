"""A BPE tokenizer's text stages as Hugging Face ``tokenizer.json`` JSON, and back.

Export writes, for each tokembed stage, the Hugging Face stage that gives the same pieces with the same offsets:

==========================  ==================================================================================
tokembed                    tokenizer.json
==========================  ==================================================================================
``nfc`` ... ``nfkd``        ``NFC`` ... ``NFKD``
``lowercase``               ``Lowercase`` (both lowercase code point by code point)
``strip_accents``           ``BertNormalizer(strip_accents=true)``, the only switch on: NFD, then drop the
                            nonspacing marks (Mn). Hugging Face's ``StripAccents`` drops spacing marks too.
``bert_clean``              ``BertNormalizer(clean_text=true)``, the only switch on
``word_punct``              ``Whitespace``
``whitespace_split``        ``Split`` on ``[^\\s\\x1c-\\x1f]+``: ``WhitespaceSplit`` keeps U+001C..U+001F inside
                            pieces, ``str.split`` (and tokembed) splits at them
``bert``                    ``Split`` isolating BERT's punctuation and CJK ideographs: ``BertPreTokenizer`` alone
                            leaves CJK runs whole and carries an older punctuation table
``gpt2``                    ``ByteLevel(use_regex=true)`` at byte level, else ``Split`` on GPT-2's pattern
``{type: regex}``           ``Split(invert=true, behavior="Removed")`` on the pattern rewritten for Oniguruma
                            (:mod:`~tokembed.plugins.bpe.hf_regex`), or an error naming the construct
identity                    no pre-tokenizer (``ByteLevel(use_regex=false)`` at byte level)
==========================  ==================================================================================

Import reads the same JSON back to the same stages, and Hugging Face's own stock stages where tokembed has an
equivalent: ``BertNormalizer`` (each switch), ``BertPreTokenizer`` (``bert`` when the normalizer's
``handle_chinese_chars`` pads CJK, else a ``regex`` stage without CJK isolation), ``WhitespaceSplit`` (as the
regex ``\\S+``), ``Split`` with any behavior but the merged ones. Hugging Face's ``StripAccents`` has no exact
equivalent: reading it is an error unless ``lossy=True``, which reads it as ``strip_accents`` and warns with
:class:`LossyConversionWarning`.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import regex

from tokembed.errors import TokembedError
from tokembed.text.pre_tokenizers import GPT2_PATTERN, _CJK_RANGES

from .hf_regex import RegexDialectError, from_oniguruma, to_oniguruma

__all__ = ["LossyConversionWarning", "to_hf_normalizer", "to_hf_pre_tokenizer", "from_hf_normalizer",
           "from_hf_pre_tokenizer", "WHITESPACE_SPLIT_PATTERN", "BERT_PATTERN"]


class LossyConversionWarning(UserWarning):
    """A stage was read with ``lossy=True`` into a tokembed stage that encodes some texts differently."""


_UNICODE_FORMS = {"nfc": "NFC", "nfd": "NFD", "nfkc": "NFKC", "nfkd": "NFKD", "lowercase": "Lowercase"}
_BERT_SWITCHES = {"bert_clean": "clean_text", "strip_accents": "strip_accents"}
_PUNCT = r"!-/:-@\[-`{-~\p{P}"
_CJK = "".join(f"\\x{{{lo:X}}}-\\x{{{hi:X}}}" for lo, hi in _CJK_RANGES)
#: Oniguruma patterns (the same text in the regex package) of the two pre-tokenizers Hugging Face has no stage for.
WHITESPACE_SPLIT_PATTERN = r"[^\s\x1c-\x1f]+"
BERT_PATTERN = f"[{_PUNCT}{_CJK}]|[^\\s{_PUNCT}{_CJK}]+"
_BERT_NO_CJK = f"[{_PUNCT}]|[^\\s{_PUNCT}]+"
_KEEP_MATCHES = {"behavior": "Removed", "invert": True}


def _bert_normalizer(**on: bool) -> dict[str, Any]:
    switches = {"clean_text": False, "handle_chinese_chars": False, "strip_accents": False, "lowercase": False}
    return {"type": "BertNormalizer", **switches, **on}


# -- export -------------------------------------------------------------------------------------------------------
def to_hf_normalizer(spec: Any) -> dict[str, Any] | None:
    """The ``normalizer`` JSON of our normalizer ``spec`` (a stage's ``spec``), None for identity.

    Raises
    ------
    TokembedError
        For a stage with no Hugging Face equivalent (none of the built-in stages).
    """
    if spec is None or spec == "identity":
        return None
    if isinstance(spec, list):
        stages = [s for s in (to_hf_normalizer(item) for item in spec) if s is not None]
        return None if not stages else stages[0] if len(stages) == 1 else {"type": "Sequence", "normalizers": stages}
    if spec in _UNICODE_FORMS:
        return {"type": _UNICODE_FORMS[spec]}
    if spec in _BERT_SWITCHES:
        return _bert_normalizer(**{_BERT_SWITCHES[spec]: True})
    raise TokembedError(f"bpe: the normalizer {spec!r} has no Hugging Face tokenizer.json equivalent")


def _split(pattern: str, *, behavior: str = "Removed", invert: bool = True) -> dict[str, Any]:
    return {"type": "Split", "pattern": {"Regex": pattern}, "behavior": behavior, "invert": invert}


def _byte_level(use_regex: bool) -> dict[str, Any]:
    return {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": use_regex}


def _checked_onig(pattern: str) -> str:
    try:
        translated = to_oniguruma(pattern)
    except RegexDialectError as exc:
        raise TokembedError(f"bpe: the pre-tokenizer regex cannot be written to tokenizer.json: {exc}") from None
    try:  # when tokenizers is installed, let its engine compile the pattern now rather than at load time
        from tokenizers import Regex
    except ImportError:
        return translated
    try:
        Regex(translated)
    except Exception as exc:
        raise TokembedError(f"bpe: the pre-tokenizer regex {pattern!r}, written for Hugging Face as "
                            f"{translated!r}, does not compile in its engine: {exc}") from None
    return translated


def to_hf_pre_tokenizer(spec: Any, byte_level: bool) -> dict[str, Any] | None:
    """The ``pre_tokenizer`` JSON of our pre-tokenizer ``spec`` (a stage's ``spec``), byte level or not.

    Raises
    ------
    TokembedError
        For a regex with a construct that has no Oniguruma equivalent (the message names it), or an unknown stage.
    """
    if byte_level:
        if spec == "gpt2":
            return _byte_level(True)
        inner = to_hf_pre_tokenizer(spec, False)
        if inner is None:
            return _byte_level(False)
        return {"type": "Sequence", "pretokenizers": [inner, _byte_level(False)]}
    if spec is None or spec in ("identity", "none"):
        return None
    if spec == "word_punct":
        return {"type": "Whitespace"}
    if spec == "whitespace_split":
        return _split(WHITESPACE_SPLIT_PATTERN)
    if spec == "bert":
        return _split(BERT_PATTERN)
    if spec == "gpt2":
        return _split(GPT2_PATTERN, behavior="Isolated", invert=False)
    if isinstance(spec, dict) and spec.get("type") == "regex":
        return _split(_checked_onig(spec["pattern"]))
    raise TokembedError(f"bpe: the pre-tokenizer {spec!r} has no Hugging Face tokenizer.json equivalent")


# -- import -------------------------------------------------------------------------------------------------------
_READ_NORMALIZERS = ("NFC, NFD, NFKC, NFKD, Lowercase, BertNormalizer (clean_text as bert_clean, strip_accents, "
                     "lowercase, handle_chinese_chars with BertPreTokenizer) and Sequence")


def from_hf_normalizer(spec: Any, source: str, lossy: bool = False) -> tuple[Any, bool]:
    """(our normalizer spec, True when a ``BertNormalizer`` pads CJK ideographs) of a ``normalizer`` JSON.

    Raises
    ------
    TokembedError
        For a stage with no tokembed equivalent (the message lists those read, and suggests ``bert_clean``
        for a BertNormalizer), or ``StripAccents`` without ``lossy``.

    Warns
    -----
    LossyConversionWarning
        ``StripAccents`` read with ``lossy=True``.
    """
    if spec is None:
        return None, False
    kind = spec.get("type") if isinstance(spec, dict) else None
    if kind == "Sequence":
        parts = [from_hf_normalizer(s, source, lossy) for s in spec.get("normalizers") or []]
        stages = [s for p, _ in parts for s in (p if isinstance(p, list) else [p]) if s is not None]
        return (stages[0] if len(stages) == 1 else stages or None), any(cjk for _, cjk in parts)
    ours = {v: k for k, v in _UNICODE_FORMS.items()}
    if kind in ours:
        return ours[kind], False
    if kind == "BertNormalizer":
        lowercase = bool(spec.get("lowercase", True))
        strip = spec.get("strip_accents")
        strip = lowercase if strip is None else bool(strip)
        stages = (["bert_clean"] if spec.get("clean_text", True) else []) + (["strip_accents"] if strip else []) \
            + (["lowercase"] if lowercase else [])
        return (stages[0] if len(stages) == 1 else stages or None), bool(spec.get("handle_chinese_chars", True))
    if kind == "StripAccents":
        if not lossy:
            raise TokembedError(
                f"{source}: the normalizer StripAccents drops every mark (Mn, Mc, Me: the Devanagari vowel signs of "
                "'हिन्दी' too) without decomposing; tokembed's strip_accents is NFD then drop the nonspacing marks "
                "(Mn) only, as BERT and BertNormalizer(strip_accents=true) do, so some texts encode differently. "
                "Pass lossy=True to read it as strip_accents anyway, or normalizer=... to choose one")
        warnings.warn(f"{source}: StripAccents read as strip_accents (lossy=True): marks of category Mc and Me "
                      "(e.g. Devanagari vowel signs) are kept by tokembed and dropped by Hugging Face, and text is "
                      "decomposed (NFD) first", LossyConversionWarning, stacklevel=4)
        return "strip_accents", False
    raise TokembedError(
        f"{source}: the normalizer {json.dumps(spec)[:200]} has no tokembed equivalent (tokembed reads "
        f"{_READ_NORMALIZERS}); pass normalizer=... to from_hf_json to choose one, e.g. normalizer='bert_clean' "
        "for BertNormalizer(clean_text=true) alone")


def _from_split(spec: dict[str, Any], source: str) -> Any:
    pattern_spec = spec.get("pattern") or {}
    if "String" in pattern_spec:
        onig = regex.escape(pattern_spec["String"])
        pattern = onig
    else:
        onig = pattern_spec.get("Regex")
        if not isinstance(onig, str):
            raise TokembedError(f"{source}: the Split pre-tokenizer has no pattern")
        if onig == WHITESPACE_SPLIT_PATTERN and spec.get("invert") and spec.get("behavior") == "Removed":
            return "whitespace_split"
        if onig == BERT_PATTERN and spec.get("invert") and spec.get("behavior") == "Removed":
            return "bert"
        try:
            pattern = from_oniguruma(onig)
        except RegexDialectError as exc:
            raise TokembedError(f"{source}: the Split pre-tokenizer's regex cannot be read: {exc}; pass "
                                "pre_tokenizer=... to from_hf_json to choose one") from None
    behavior, invert = spec.get("behavior"), bool(spec.get("invert"))
    if onig == GPT2_PATTERN and behavior == "Isolated":
        return "gpt2"
    if behavior == "Removed" and invert:
        return {"type": "regex", "pattern": pattern}
    if behavior in ("Removed", "Isolated"):
        if regex.fullmatch(f"(?:{pattern})", ""):
            raise TokembedError(f"{source}: the Split pre-tokenizer's regex {onig!r} matches the empty text, so its "
                                "pieces have no tokembed regex equivalent; pass pre_tokenizer=... to choose one")
        gaps = f"(?s:(?:(?!(?:{pattern})).)+)"
        return {"type": "regex", "pattern": gaps if behavior == "Removed" else f"(?:{pattern})|{gaps}"}
    raise TokembedError(f"{source}: the Split behavior {behavior!r} has no tokembed equivalent (Removed and "
                        "Isolated do); pass pre_tokenizer=... to from_hf_json to choose one")


_READ_PRE_TOKENIZERS = ("ByteLevel (add_prefix_space=false), Whitespace, WhitespaceSplit, BertPreTokenizer, Split "
                        "(Removed or Isolated) and a Sequence of one of them and ByteLevel(use_regex=false)")


def from_hf_pre_tokenizer(spec: Any, source: str, cjk: bool = False) -> tuple[bool, Any]:
    """(byte level, our pre-tokenizer spec) of a ``pre_tokenizer`` JSON. ``cjk``: the normalizer pads CJK
    ideographs with spaces (``BertNormalizer(handle_chinese_chars=true)``).

    Raises
    ------
    TokembedError
        For a stage with no tokembed equivalent (the message lists those read), or ``cjk`` with a pre-tokenizer
        other than ``BertPreTokenizer``.
    """
    if cjk and not (isinstance(spec, dict) and spec.get("type") == "BertPreTokenizer"):
        raise TokembedError(f"{source}: BertNormalizer(handle_chinese_chars=true) pads CJK ideographs with spaces, "
                            "which tokembed mirrors only before a BertPreTokenizer (as its bert pre-tokenizer); "
                            "pass normalizer=... and pre_tokenizer=... to from_hf_json to choose them")
    if spec is None:
        return False, None
    kind = spec.get("type") if isinstance(spec, dict) else None
    if kind == "ByteLevel":
        if spec.get("add_prefix_space"):
            raise TokembedError(f"{source}: ByteLevel with add_prefix_space=true (a space added before the text) "
                                "has no tokembed equivalent; pass pre_tokenizer=... and byte_level=True to choose")
        return True, ("gpt2" if spec.get("use_regex", True) else None)
    if kind == "Whitespace":
        return False, "word_punct"
    if kind == "WhitespaceSplit":
        return False, {"type": "regex", "pattern": r"\S+"}
    if kind == "BertPreTokenizer":
        return False, ("bert" if cjk else {"type": "regex", "pattern": _BERT_NO_CJK})
    if kind == "Split":
        return False, _from_split(spec, source)
    if kind == "Sequence":
        stages = spec.get("pretokenizers") or []
        if len(stages) == 1:
            return from_hf_pre_tokenizer(stages[0], source, cjk)
        if len(stages) == 2 and isinstance(stages[1], dict) and stages[1].get("type") == "ByteLevel":
            byte_level, last = from_hf_pre_tokenizer(stages[1], source)
            if last is None:
                return True, from_hf_pre_tokenizer(stages[0], source, cjk)[1]
    raise TokembedError(f"{source}: the pre-tokenizer {json.dumps(spec)[:200]} has no tokembed equivalent "
                        f"(tokembed reads {_READ_PRE_TOKENIZERS}); pass pre_tokenizer=... to from_hf_json to "
                        "choose one")
