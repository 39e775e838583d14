"""What a metric receives: :class:`Chunk`, a run of documents as flat arrays, built once by :func:`measure_chunk`
and shared by every metric.

The arrays come from one call of the tokenizer's ``encode_ids(docs, spans=True)`` (ids, token counts, spans) and
one Numba pass over the documents' code points (:func:`tokembed.metrics._kernels.chunk_counts`); nothing here loops
over documents or tokens in Python. A code point's class (UTF-8 width, space, letter, unspaced-script letter) is
looked up in a table filled lazily, with Python's ``str.isspace`` and the ``regex`` package, only for the code
points that occur.
"""

from __future__ import annotations

import inspect
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .base import UNSPACED_SCRIPTS

__all__ = ["Chunk", "measure_chunk", "encode_for_measuring", "code_point_classes"]

_TABLE = None
_LETTER = _UNSPACED = None
_SPANS_PARAM: dict[type, bool] = {}


def _classify(ch: str) -> int:
    from . import _kernels as k

    o = ord(ch)
    width = 1 if o < 0x80 else 2 if o < 0x800 else 3 if o < 0x10000 else 4
    bits = width - 1
    if ch.isspace():
        bits |= k.SPACE
    if _LETTER.match(ch):
        bits |= k.LETTER
    if _UNSPACED.match(ch):
        bits |= k.UNSPACED
    return bits


def code_point_classes(text: str) -> np.ndarray:
    """The class bits of every code point of ``text`` (uint8, shape (len(text),)): UTF-8 width minus one in bits
    0-1, then :data:`~tokembed.metrics._kernels.SPACE`, ``LETTER`` (``\\p{L}``), ``UNSPACED`` (a letter of
    :data:`~tokembed.metrics.UNSPACED_SCRIPTS`). Classified once per distinct code point ever seen (cached)."""
    global _TABLE, _LETTER, _UNSPACED
    if _TABLE is None:
        import regex

        from ..text._base import CharTable

        scripts = "".join(rf"\p{{Script={s}}}" for s in UNSPACED_SCRIPTS)
        _LETTER, _UNSPACED = regex.compile(r"\p{L}"), regex.compile(rf"[{scripts}]")
        _TABLE = CharTable(_classify)
    return _TABLE.classes(text)


@dataclass(eq=False)
class Chunk:
    """A run of consecutive documents and their encoding, as flat arrays: what
    :meth:`tokembed.metrics.Metric.update_chunk` receives.

    Attributes
    ----------
    docs : list of str
        The documents.
    start : int
        Index of the first document in the measured sequence (a corpus, or one partition of it on the engine).
    ids : int32 array, shape (n_tokens,)
        Every document's token ids (no special token added), one document after the other.
    spans : int64 array, shape (n_tokens, 2)
        Each token's ``[start, end)`` in code points of its own document.
    token_indptr : int64 array, shape (n_docs + 1,)
        Document ``d``'s tokens are ``ids[token_indptr[d]:token_indptr[d + 1]]``.
    characters, bytes, words, letters, unspaced_letters : int64 arrays, shape (n_docs,)
        Per document: code points (``len``), UTF-8 bytes (``surrogatepass``), whitespace words (``str.split``),
        letters (``\\p{L}``), letters of :data:`~tokembed.metrics.UNSPACED_SCRIPTS`.
    word_spans : int64 array, shape (n_words, 2)
        Each whitespace word's ``[start, end)`` in code points of its own document (``re.finditer(r"\\S+")``).
    word_indptr : int64 array, shape (n_docs + 1,)
        Document ``d``'s words are ``word_spans[word_indptr[d]:word_indptr[d + 1]]``.
    unknown : int
        Tokens equal to the tokenizer's unknown token (0 without one).
    seconds : float
        Wall time of the ``encode_ids`` call, in seconds.
    """

    docs: list[str]
    start: int
    ids: np.ndarray
    spans: np.ndarray
    token_indptr: np.ndarray
    characters: np.ndarray
    bytes: np.ndarray
    words: np.ndarray
    letters: np.ndarray
    unspaced_letters: np.ndarray
    word_spans: np.ndarray
    word_indptr: np.ndarray
    unknown: int = 0
    seconds: float = 0.0
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def lengths(self) -> np.ndarray:
        """Tokens per document: int64, shape (n_docs,)."""
        return np.diff(self.token_indptr)

    @property
    def n_docs(self) -> int:
        return len(self.docs)

    def doc_ids(self, d: int) -> np.ndarray:
        """Document ``d``'s ids (a view)."""
        return self.ids[self.token_indptr[d]:self.token_indptr[d + 1]]

    def cached(self, key: str, compute: Any) -> Any:
        """``compute()``, called once per chunk and key: what several metrics derive from the chunk, or what a
        metric's :meth:`~tokembed.metrics.Metric.prepare_chunk` computes on the preparing threads."""
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    def tokens_per_word(self) -> np.ndarray:
        """Tokens overlapping each word (int64, shape (n_words,)), computed once per chunk; see
        :func:`tokembed.metrics._kernels.tokens_per_word`."""
        return self.cached("tpw", self._tokens_per_word)

    def _tokens_per_word(self) -> np.ndarray:
        from ._kernels import tokens_per_word

        out = np.empty(self.word_spans.shape[0], np.int64)
        tokens_per_word(self.word_spans, self.word_indptr, self.spans, self.token_indptr, out)
        return out

    def totals(self) -> dict[str, int]:
        """The chunk's shared counts, summed (the fields of :class:`~tokembed.metrics.PassStats` but seconds)."""
        return {"documents": self.n_docs, "characters": int(self.characters.sum()), "bytes": int(self.bytes.sum()),
                "words": int(self.words.sum()), "tokens": int(self.ids.size), "letters": int(self.letters.sum()),
                "unspaced_letters": int(self.unspaced_letters.sum()), "unknown": int(self.unknown)}


def _has_spans(tokenizer: Any) -> bool:
    cls = type(tokenizer)
    if cls not in _SPANS_PARAM:
        try:
            params = inspect.signature(tokenizer.encode_ids).parameters
            _SPANS_PARAM[cls] = "spans" in params
        except (TypeError, ValueError, AttributeError):
            _SPANS_PARAM[cls] = False
    return _SPANS_PARAM[cls]


def encode_for_measuring(tokenizer: Any, docs: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(ids int32 (n_tokens,), lengths int64 (n_docs,), spans int64 (n_tokens, 2))`` of ``docs``, no special
    token added: the tokenizer's ``encode_ids(docs, spans=True)`` when it takes ``spans``, else the same arrays
    gathered from ``encode_batch(docs, add_special_tokens=False)`` (a tokenizer that only has ``encode_batch``)."""
    if _has_spans(tokenizer):
        ids, lengths, spans = tokenizer.encode_ids(docs, spans=True)
    else:
        from ..components.tokenizer import Tokenizer

        if isinstance(tokenizer, Tokenizer):  # a subclass overriding encode_ids without spans: the base default
            ids, lengths, spans = Tokenizer.encode_ids(tokenizer, docs, spans=True)
        else:
            encs = list(tokenizer.encode_batch(list(docs), add_special_tokens=False))
            lengths = np.array([len(e.ids) for e in encs], np.int64)
            ids = np.concatenate([np.asarray(e.ids) for e in encs]) if encs else np.zeros(0, np.int32)
            spans = (np.concatenate([np.asarray(e.offsets, np.int64).reshape(-1, 2) for e in encs]) if encs
                     else np.zeros((0, 2), np.int64))
    return (np.ascontiguousarray(ids, np.int32), np.ascontiguousarray(lengths, np.int64),
            np.ascontiguousarray(np.asarray(spans).reshape(-1, 2), np.int64))


def measure_chunk(tokenizer: Any, docs: Sequence[str], start: int = 0, unk_id: int | None = None) -> Chunk:
    """Encode ``docs`` once (timed) and derive the arrays every metric shares.

    Thread-safe when the tokenizer's ``encode_ids`` is; the Numba pass releases the GIL.

    Parameters
    ----------
    tokenizer : tokembed.Tokenizer
        A fitted tokenizer.
    docs : sequence of str
    start : int
        Index of ``docs[0]`` in the measured sequence (:attr:`Chunk.start`).
    unk_id : int, optional
        The unknown token's id, counted into :attr:`Chunk.unknown`.
    """
    from . import _kernels as k

    docs = list(docs)
    t0 = time.perf_counter()
    ids, lengths, spans = encode_for_measuring(tokenizer, docs)
    seconds = time.perf_counter() - t0
    n = len(docs)
    characters = np.fromiter(map(len, docs), np.int64, n)
    char_indptr = np.zeros(n + 1, np.int64)
    np.cumsum(characters, out=char_indptr[1:])
    token_indptr = np.zeros(n + 1, np.int64)
    np.cumsum(lengths, out=token_indptr[1:])
    classes = code_point_classes("".join(docs))
    counts = np.zeros((n, 4), np.int64)
    room = (classes.size + 1) // 2 + 1
    starts, ends = np.empty(room, np.int64), np.empty(room, np.int64)
    word_indptr = np.zeros(n + 1, np.int64)
    k.chunk_counts(classes, char_indptr, counts, starts, ends, word_indptr)
    nw = int(word_indptr[-1])
    word_spans = np.empty((nw, 2), np.int64)
    word_spans[:, 0], word_spans[:, 1] = starts[:nw], ends[:nw]
    unknown = int(k.count_equal(ids, unk_id)) if unk_id is not None else 0
    return Chunk(docs, int(start), ids, spans, token_indptr, characters, counts[:, 0].copy(), counts[:, 1].copy(),
                 counts[:, 2].copy(), counts[:, 3].copy(), word_spans, word_indptr, unknown, seconds)
