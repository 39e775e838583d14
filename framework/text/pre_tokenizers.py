"""Pre-tokenizers: split a (normalized) text into pieces with code-point spans.

Every stage has a ``name``, a JSON-able ``spec`` from which :func:`build_pre_tokenizer` rebuilds it,
``spans(text)`` (the fast path: an int64 array of shape (n, 2)) and ``pre_tokenize(text)`` (a list of
``(piece, (start, end))``). Pieces are non-empty, in order and non-overlapping; offsets are code-point (Python
``str``) indices.

The character-class pre-tokenizers (``whitespace_split``, ``word_punct``, ``bert``, ``sklearn``) classify each code point once
through a lazily filled lookup table and take the runs with NumPy, so no Python loop runs per character; ``gpt2``
uses ``regex.findall``. That is the reference path (``_spans``). Long texts go to the Numba scanner of
:mod:`tokembed.text.fast` instead, which gives the same spans: texts of at least :data:`FAST_MIN_CHARS` code points
once its kernels are loaded in the process (by ``tokembed.text.fast.warmup()``, ``count_words`` or an earlier
long text), and texts of at least :data:`FAST_LOAD_MIN_CHARS` in any case, since loading the kernels costs about
0.5 s (and compiling them, with a cold Numba cache, about 2.5 s). It is skipped when numba is not importable or
``TOKEMBED_PURE_PYTHON=1`` is set, and custom stages (``regex``) never use it.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from typing import Any, ClassVar

import numpy as np
import regex

from tokembed.params import Builds
from tokembed.text._base import WHITE_SPACE, CharTable, TextStageError, check_no_params, class_runs, parse_spec

__all__ = [
    "PreTokenizer",
    "WhitespaceSplit",
    "WordPunct",
    "GPT2",
    "Bert",
    "SklearnWords",
    "WholeText",
    "Regex",
    "PRE_TOKENIZERS",
    "build_pre_tokenizer",
    "GPT2_PATTERN",
    "WORD_PUNCT_PATTERN",
    "SKLEARN_TOKEN_PATTERN",
]

#: GPT-2's pre-tokenization pattern (Radford et al., 2019; openai/gpt-2 ``encoder.py``), for the ``regex`` package.
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
#: The pattern of Hugging Face's ``Whitespace`` pre-tokenizer; ``word_punct`` gives exactly its matches.
WORD_PUNCT_PATTERN = r"\w+|[^\w\s]+"
#: scikit-learn's default ``token_pattern`` (``CountVectorizer``, ``TfidfVectorizer``), for Python's ``re`` module;
#: ``sklearn`` gives exactly its matches.
SKLEARN_TOKEN_PATTERN = r"(?u)\b\w\w+\b"
#: Texts with at least this many code points are scanned by the Numba kernels (:func:`tokembed.text.fast.fast_spans`)
#: once they are loaded; shorter ones take the reference path, which is about as fast there.
FAST_MIN_CHARS = 20_000
#: Texts with at least this many code points load the Numba kernels if they are not loaded yet: about where the
#: time saved on ``gpt2`` pays for loading them from Numba's cache.
FAST_LOAD_MIN_CHARS = 2_000_000


#: The Numba scanner's entry points, set by :mod:`tokembed.text.fast` when it is imported (``tokembed.text``
#: imports it), so that this reference module never imports the fast one: ``spans(pre_tokenizer, text)`` (spans,
#: or None when the scanner does not handle this pre-tokenizer) and ``loaded()`` (the kernels are in memory).
_FAST: dict[str, Any] = {}


def register_fast_path(spans: Any, loaded: Any) -> None:
    """Called once by :mod:`tokembed.text.fast`: route long texts through its scanner."""
    _FAST.update(spans=spans, loaded=loaded)


def _use_fast(n_chars: int) -> bool:
    """True if a text of ``n_chars`` code points should try the Numba scanner (see the module docstring)."""
    if n_chars < FAST_MIN_CHARS or not _FAST:
        return False
    if n_chars >= FAST_LOAD_MIN_CHARS:
        return True
    return bool(_FAST["loaded"]())


class PreTokenizer:
    """Base class of the pre-tokenizers. Subclasses set ``name`` and implement ``_spans``."""

    name: ClassVar[str]

    @property
    def spec(self) -> Any:
        """JSON-able description: ``build_pre_tokenizer(stage.spec)`` rebuilds an equal stage."""
        return self.name

    def spans(self, text: str) -> np.ndarray:
        """Code-point spans of the pieces of ``text``.

        Parameters
        ----------
        text : str

        Returns
        -------
        ndarray of shape (n_pieces, 2), int64
            ``[start, end)`` spans, non-empty, in order, non-overlapping.

        Raises
        ------
        TypeError
            If ``text`` is not a str.
        """
        if not isinstance(text, str):
            raise TypeError(f"{type(self).__name__} expects str, got {type(text).__name__}")
        if _use_fast(len(text)):
            spans = _FAST["spans"](self, text)
            if spans is not None:
                return spans
        return self._spans(text)

    def pre_tokenize(self, text: str) -> list[tuple[str, tuple[int, int]]]:
        """Pieces of ``text`` with their spans: ``[(text[s:e], (s, e)), ...]`` (Hugging Face's ``pre_tokenize_str``).

        Raises
        ------
        TypeError
            If ``text`` is not a str.
        """
        spans = self.spans(text)
        starts, ends = spans[:, 0].tolist(), spans[:, 1].tolist()
        return list(zip(map(text.__getitem__, map(slice, starts, ends)), zip(starts, ends)))

    def _spans(self, text: str) -> np.ndarray:
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.spec == self.spec  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(repr(self.spec))

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


_ISSPACE = CharTable(lambda ch: 0 if ch.isspace() else 1)


class WhitespaceSplit(PreTokenizer):
    """Maximal runs of non-whitespace: the pieces of ``str.split()`` (whitespace as ``str.isspace``).

    ``str.isspace`` is Unicode ``White_Space`` plus U+001C..U+001F (Python's bidirectional-class rule).
    """

    name = "whitespace_split"

    def _spans(self, text: str) -> np.ndarray:
        return class_runs(_ISSPACE.classes(text))


_WORD = regex.compile(r"\w")
_SPACE = regex.compile(r"\s")
_WORD_PUNCT = CharTable(lambda ch: 1 if _WORD.match(ch) else (0 if _SPACE.match(ch) else 2))


class WordPunct(PreTokenizer):
    """Runs of word characters and runs of other non-space characters: the matches of ``\\w+|[^\\w\\s]+``.

    With the ``regex`` package's Unicode classes (``\\w``: letters, marks, decimal digits, connector punctuation,
    join controls; ``\\s``: ``White_Space``), which are those of Hugging Face's ``Whitespace`` pre-tokenizer
    (Rust ``regex``). Example: ``"Hello, world!"`` -> ``Hello``, ``,``, ``world``, ``!``.
    """

    name = "word_punct"

    def _spans(self, text: str) -> np.ndarray:
        return class_runs(_WORD_PUNCT.classes(text))


_RE_WORD = re.compile(r"\w")
_SKLEARN = CharTable(lambda ch: 1 if _RE_WORD.match(ch) else 0)


class SklearnWords(PreTokenizer):
    """Runs of at least two word characters: the matches of scikit-learn's default ``token_pattern``
    ``(?u)\\b\\w\\w+\\b``.

    Word characters are those of Python's ``re`` module (``str.isalnum()`` or ``_``), which scikit-learn uses, not
    the ``regex`` package's wider ``\\w`` of ``word_punct`` (which adds marks and join controls): ``"café"`` written
    with a combining accent splits before the accent here, as it does in scikit-learn. One-character words and all
    punctuation are dropped. Example: ``"I saw a cat, 2 cats."`` -> ``saw``, ``cat``, ``cats``.
    Source: scikit-learn ``sklearn/feature_extraction/text.py`` (``CountVectorizer.token_pattern``).
    """

    name = "sklearn"

    def _spans(self, text: str) -> np.ndarray:
        runs = class_runs(_SKLEARN.classes(text))
        return runs[runs[:, 1] - runs[:, 0] >= 2]


_GPT2 = regex.compile(GPT2_PATTERN)


class GPT2(PreTokenizer):
    """GPT-2's regex split (contractions, letters, numbers, other symbols, whitespace), with the ``regex`` package.

    One space before a word, number or symbol run stays attached to it (``" world"``); a longer whitespace run
    before it is a piece of its own, less its last character if that is a space. The pieces tile the text: their
    concatenation is the text exactly. Source: Radford et al., 2019, openai/gpt-2 ``src/encoder.py``.
    """

    name = "gpt2"

    def _spans(self, text: str) -> np.ndarray:
        pieces = _GPT2.findall(text)
        ends = np.cumsum(np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces)))
        out = np.empty((len(pieces), 2), dtype=np.int64)
        out[:, 1] = ends
        out[:1, 0] = 0
        out[1:, 0] = ends[:-1]
        return out

    def pre_tokenize(self, text: str) -> list[tuple[str, tuple[int, int]]]:
        if not isinstance(text, str):
            raise TypeError(f"{type(self).__name__} expects str, got {type(text).__name__}")
        if _use_fast(len(text)):
            return super().pre_tokenize(text)
        pieces = _GPT2.findall(text)
        ends = list(itertools.accumulate(map(len, pieces)))
        return list(zip(pieces, zip([0, *ends[:-1]], ends)))


# Google BERT tokenization.py _is_chinese_char: the CJK Unified Ideographs blocks and compatibility ideographs.
_CJK_RANGES = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)


def is_bert_punctuation(ch: str) -> bool:
    """BERT's ``_is_punctuation``: ASCII 33-47, 58-64, 91-96, 123-126, or Unicode category P*."""
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


def is_cjk(ch: str) -> bool:
    """BERT's ``_is_chinese_char``: the code point is in one of the CJK ideograph ranges."""
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in _CJK_RANGES)


_BERT = CharTable(lambda ch: 0 if ch in WHITE_SPACE else (2 if is_bert_punctuation(ch) or is_cjk(ch) else 1))


class Bert(PreTokenizer):
    """BERT's basic split: at whitespace, with every punctuation character and every CJK ideograph a piece alone.

    Whitespace is Unicode ``White_Space`` (as Hugging Face's ``BertPreTokenizer``; Python's ``str.split`` would
    also split at U+001C..U+001F, which ``bert_clean`` removes anyway). Punctuation is BERT's ``_is_punctuation``
    (ASCII 33-47, 58-64, 91-96, 123-126, or category P*), CJK is BERT's ``_is_chinese_char`` ranges. Source:
    Devlin et al., 2019, google-research/bert ``tokenization.py`` (``BasicTokenizer``). Hugging Face's
    ``BertPreTokenizer`` does not isolate CJK ideographs itself (its ``BertNormalizer(handle_chinese_chars=True)``
    pads them with spaces instead, which shifts offsets); this stage gives the same pieces with offsets into the
    unpadded text. Categories come from ``unicodedata``; Hugging Face's punctuation table is from an older Unicode
    version, so about a hundred recently added or recategorized characters (e.g. U+061D, U+166D) split differently.
    """

    name = "bert"

    def _spans(self, text: str) -> np.ndarray:
        return class_runs(_BERT.classes(text), isolate=2)


class WholeText(PreTokenizer):
    """No split: the whole text is one piece (an empty text gives no piece)."""

    name = "identity"

    def _spans(self, text: str) -> np.ndarray:
        if not text:
            return np.zeros((0, 2), dtype=np.int64)
        return np.array([[0, len(text)]], dtype=np.int64)


class Regex(PreTokenizer):
    """The non-empty matches of a custom pattern, found with ``regex.finditer`` (the ``regex`` package).

    Text between matches is in no piece; empty matches are skipped. Spec: ``{"type": "regex", "pattern": ...}``.

    Parameters
    ----------
    pattern : str
        A pattern of the ``regex`` package (``\\p{L}`` and friends available).

    Raises
    ------
    TextStageError
        If the pattern is not a string or does not compile.
    """

    name = "regex"

    def __init__(self, pattern: str):
        if not isinstance(pattern, str):
            raise TextStageError(f"pre-tokenizer 'regex' needs a string 'pattern', got {pattern!r}")
        try:
            self._compiled = regex.compile(pattern)
        except regex.error as err:
            raise TextStageError(f"pre-tokenizer 'regex': invalid pattern {pattern!r}: {err}") from None
        self.pattern = pattern

    @property
    def spec(self) -> dict[str, str]:
        return {"type": "regex", "pattern": self.pattern}

    def _spans(self, text: str) -> np.ndarray:
        flat = [i for m in self._compiled.finditer(text) if m.end() > m.start() for i in m.span()]
        return np.array(flat, dtype=np.int64).reshape(-1, 2)

    def __repr__(self) -> str:
        return f"Regex({self.pattern!r})"


#: Stage name -> class. ``none`` is an alias of ``identity``.
PRE_TOKENIZERS: dict[str, type[PreTokenizer]] = {
    **{cls.name: cls for cls in (WhitespaceSplit, WordPunct, GPT2, Bert, SklearnWords, WholeText, Regex)},
    "none": WholeText,
}


def build_pre_tokenizer(spec: Any = None) -> PreTokenizer:
    """Build a pre-tokenizer from its spec.

    Parameters
    ----------
    spec : None, str, dict or PreTokenizer
        ``None`` -> ``identity`` (the whole text is one piece); a name (``"word_punct"``); a dict
        ``{"type": name, ...parameters}`` (``{"type": "regex", "pattern": "\\\\d+"}``); or a ``PreTokenizer``,
        returned as is.

    Returns
    -------
    PreTokenizer

    Raises
    ------
    TextStageError
        (a ``TokembedError`` and ``ValueError``) for an unknown name, listing the available names, for missing or
        unknown parameters, or for a regex that does not compile.
    """
    if spec is None:
        return WholeText()
    if isinstance(spec, PreTokenizer):
        return spec
    name, params = parse_spec("pre-tokenizer", spec, PRE_TOKENIZERS)
    if name == "regex":
        if "pattern" not in params:
            raise TextStageError("pre-tokenizer 'regex' needs a 'pattern', e.g. {'type': 'regex', 'pattern': '\\\\w+'}")
        pattern = params.pop("pattern")
        check_no_params("pre-tokenizer", name, params)
        return Regex(pattern)
    check_no_params("pre-tokenizer", name, params)
    return PRE_TOKENIZERS[name]()


#: The declaration of a component parameter that holds a pre-tokenizer spec (:mod:`tokembed.params`): what
#: :func:`build_pre_tokenizer` builds, its message following the problem (an unknown name, a regex that does not
#: compile). List ``None`` beside it where a parameter allows null.
PRE_TOKENIZER_SPEC = Builds(build_pre_tokenizer, "a pre-tokenizer spec")
