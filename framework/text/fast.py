"""Fast pre-tokenization and one-pass word counting with the Numba scanner of ``text/_kernels.py``.

The built-in pre-tokenizers ``whitespace_split``, ``word_punct``, ``bert``, ``sklearn`` and ``gpt2`` are
character-class scanners: each is a lookup table from code point to class plus a small rule (runs of one class;
runs of at least two characters; GPT-2's pattern). This module builds the five tables once for the whole Unicode range (from ``regex``, ``unicodedata`` and
``str.isspace``, exactly the definitions the reference path in :mod:`tokembed.text.pre_tokenizers` uses), keeps
them on disk, and drives the kernels:

- :func:`fast_spans` -- what ``PreTokenizer.spans`` calls for long texts; equal to the reference path's spans.
- :func:`count_words` -- counts of the pieces of a corpus, scanned from UTF-8 bytes into a hash table inside
  Numba without a Python string per piece, chunks counted by several threads (the kernels release the GIL) and
  merged in input order.
- :func:`index_words` -- the same pass, returning every document as ids into the table of distinct pieces (what a
  vectorizer with its own pre-tokenizer needs: CSR-packed ids, no Python string per piece).
- :func:`warmup` -- compile (or load from Numba's cache) every kernel and load the tables.

:mod:`tokembed.text.scan` drives the third kernel, ``scan_docs`` (the pieces of many texts, looked up in a fixed
vocabulary), with the tables and the hash table of this module.

``TOKEMBED_PURE_PYTHON=1`` in the environment switches all of it off: the ``regex``/NumPy reference path runs
instead, and :func:`count_words` counts with ``collections.Counter``. Importing this module does not import
numba; the first call that needs a kernel does.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import sys
import tempfile
import threading
import unicodedata
from collections import Counter, deque
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import regex

from tokembed.errors import CorpusError
from tokembed.text._base import N_CODEPOINTS, WHITE_SPACE, TextStageError, from_codepoints
from tokembed.text.normalizers import Identity, Normalizer, build_normalizer
from tokembed.text.pre_tokenizers import (
    _CJK_RANGES,
    GPT2,
    Bert,
    PreTokenizer,
    SklearnWords,
    WhitespaceSplit,
    WholeText,
    WordPunct,
    build_pre_tokenizer,
    register_fast_path,
)

__all__ = ["WordCounts", "count_words", "index_words", "fast_spans", "class_tables", "is_enabled", "kernels_loaded", "warmup"]

#: Rows of :func:`class_tables`.
ROW_WHITESPACE_SPLIT = 0
ROW_WORD_PUNCT = 1
ROW_BERT = 2
ROW_GPT2 = 3
ROW_SKLEARN = 4
_N_ROWS = 5
#: Bump when the class definitions below change, so that a stale table on disk is not used.
_TABLE_FORMAT = 2

_DEFAULT_CHUNK_BYTES = 1 << 20

_tables: np.ndarray | None = None
_tables_lock = threading.Lock()
_numba_found: bool | None = None


def is_enabled() -> bool:
    """True if the Numba path is used: numba is importable and ``TOKEMBED_PURE_PYTHON`` is unset, empty or 0."""
    global _numba_found
    if os.environ.get("TOKEMBED_PURE_PYTHON", "") not in ("", "0"):
        return False
    if _numba_found is None:
        _numba_found = importlib.util.find_spec("numba") is not None
    return _numba_found


def _kernels():
    from tokembed.text import _kernels

    return _kernels


_loaded = False


def kernels_loaded() -> bool:
    """True once the kernels have run in this process (compiled or loaded from cache), so calling them is cheap."""
    return _loaded


# ----------------------------------------------------------------------------------------------------------------
# Class tables


def _build_class_tables() -> np.ndarray:
    """Compute the five class tables for all 0x110000 code points (about 0.3 s)."""
    everything = np.arange(N_CODEPOINTS, dtype="<u4").tobytes().decode("utf-32-le", "surrogatepass")

    def matching(pattern: str, engine: Any = regex) -> np.ndarray:
        # The properties are per character, so the runs of one pattern over all code points in order give the set.
        mask = np.zeros(N_CODEPOINTS, dtype=bool)
        for m in engine.finditer(pattern + "+", everything):
            mask[m.start() : m.end()] = True
        return mask

    space = matching(r"\s")
    word = matching(r"\w")
    letter = matching(r"\p{L}")
    number = matching(r"\p{N}")
    isspace = np.fromiter(map(str.isspace, everything), dtype=bool, count=N_CODEPOINTS)
    white = np.zeros(N_CODEPOINTS, dtype=bool)
    white[[ord(ch) for ch in WHITE_SPACE]] = True
    # First letter of every general category ("Po" -> "P"), as in pre_tokenizers.is_bert_punctuation.
    categories = "".join(map(unicodedata.category, everything)).encode("ascii")
    punct = np.frombuffer(categories, dtype=np.uint8)[0::2] == ord("P")
    for lo, hi in ((33, 47), (58, 64), (91, 96), (123, 126)):
        punct[lo : hi + 1] = True
    cjk = np.zeros(N_CODEPOINTS, dtype=bool)
    for lo, hi in _CJK_RANGES:
        cjk[lo : hi + 1] = True

    k = _kernels()
    tables = np.empty((_N_ROWS, N_CODEPOINTS), dtype=np.uint8)
    tables[ROW_WHITESPACE_SPLIT] = np.where(isspace, 0, 1)
    tables[ROW_WORD_PUNCT] = np.where(word, 1, np.where(space, 0, 2))
    tables[ROW_BERT] = np.where(white, 0, np.where(punct | cjk, 2, 1))
    tables[ROW_SKLEARN] = matching(r"\w", re)  # Python's re, as scikit-learn's token_pattern
    tables[ROW_GPT2] = np.where(
        letter, k.GPT2_LETTER, np.where(number, k.GPT2_NUMBER, np.where(space, k.GPT2_SPACE, k.GPT2_OTHER))
    )
    return tables


def _cache_file() -> Path:
    """Where the tables are kept: ``$XDG_CACHE_HOME/tokembed/text`` (or ``~/.cache/tokembed/text``), one file per
    table format, Unicode database, ``regex`` and Python version."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    key = f"{_TABLE_FORMAT}|{unicodedata.unidata_version}|{regex.__version__}|{sys.version_info[:3]}"
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
    return base / "tokembed" / "text" / f"char-classes-{digest}.npy"


def _load_cached(path: Path) -> np.ndarray | None:
    try:
        tables = np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        return None
    if tables.shape != (_N_ROWS, N_CODEPOINTS) or tables.dtype != np.uint8 or not tables.flags.c_contiguous:
        return None
    return tables


def _store(path: Path, tables: np.ndarray) -> None:
    """Write ``tables`` to a temporary name beside ``path`` and rename it into place; give up quietly if the
    folder is not writable (the tables are then rebuilt by the next process)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                np.save(handle, tables, allow_pickle=False)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass


def class_tables() -> np.ndarray:
    """The class of every code point for each scanning pre-tokenizer.

    Built once per machine (about 0.3 s) and kept as a ``.npy`` file in the user cache folder (see
    :func:`_cache_file`), written atomically; later processes load it in milliseconds.

    Returns
    -------
    ndarray of uint8, shape (5, 0x110000), read-only
        Row ``ROW_WHITESPACE_SPLIT``: 0 for ``str.isspace``, else 1. Row ``ROW_WORD_PUNCT``: 1 for ``regex``'s
        ``\\w``, else 0 for ``\\s``, else 2. Row ``ROW_BERT``: 0 for Unicode ``White_Space``, 2 for BERT's
        punctuation (ASCII 33-47, 58-64, 91-96, 123-126, or ``unicodedata`` category P*) and CJK ideographs, else
        1. Row ``ROW_GPT2``: the kernels' ``GPT2_LETTER`` (``\\p{L}``), ``GPT2_NUMBER`` (``\\p{N}``),
        ``GPT2_SPACE`` (``\\s``), else ``GPT2_OTHER``. Row ``ROW_SKLEARN``: 1 for Python ``re``'s ``\\w``, else 0.
        Lone surrogates fall in the last class of each row.
    """
    global _tables
    tables = _tables
    if tables is not None:
        return tables
    with _tables_lock:
        if _tables is None:
            path = _cache_file()
            tables = _load_cached(path)
            if tables is None:
                tables = _build_class_tables()
                _store(path, tables)
            tables.flags.writeable = False
            _tables = tables
        return _tables


# Pre-tokenizer class -> (kernel mode name, isolated class, table row). The exact type is looked up: a subclass may
# override ``_spans`` and then keeps the reference path.
_SCANNERS: dict[type, tuple[str, int, int]] = {
    WordPunct: ("MODE_RUNS", -1, ROW_WORD_PUNCT),
    WhitespaceSplit: ("MODE_RUNS", -1, ROW_WHITESPACE_SPLIT),
    Bert: ("MODE_RUNS", 2, ROW_BERT),
    SklearnWords: ("MODE_LONG_RUNS", -1, ROW_SKLEARN),
    GPT2: ("MODE_GPT2", -1, ROW_GPT2),
    WholeText: ("MODE_WHOLE", -1, ROW_GPT2),
}


def _scan_spec(pre_tokenizer: PreTokenizer) -> tuple[int, int, int] | None:
    """``(mode, isolate, table row)`` of a built-in scanning pre-tokenizer, None for any other stage."""
    entry = _SCANNERS.get(type(pre_tokenizer))
    if entry is None:
        return None
    return getattr(_kernels(), entry[0]), entry[1], entry[2]


def _utf8(text: str) -> np.ndarray:
    """UTF-8 bytes of ``text`` (lone surrogates as 3-byte sequences), as a read-only uint8 array."""
    return np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)


# ----------------------------------------------------------------------------------------------------------------
# Spans


def fast_spans(pre_tokenizer: PreTokenizer, text: str) -> np.ndarray | None:
    """Spans of the pieces of ``text`` from the Numba scanner, or None if the stage or the setting has none.

    Parameters
    ----------
    pre_tokenizer : PreTokenizer
        ``whitespace_split``, ``word_punct``, ``bert``, ``sklearn`` or ``gpt2`` give spans; any other stage (``regex``,
        ``identity``, a subclass) gives None, as does :func:`is_enabled` being False.
    text : str

    Returns
    -------
    ndarray of shape (n_pieces, 2), int64, or None
        ``[start, end)`` code-point spans, equal to ``pre_tokenizer._spans(text)`` (the reference path).
    """
    global _loaded
    if not is_enabled() or type(pre_tokenizer) is WholeText:
        return None
    spec = _scan_spec(pre_tokenizer)
    if spec is None:
        return None
    mode, isolate, row = spec
    k = _kernels()
    table = class_tables()[row]
    buf = _utf8(text)
    out = np.empty((buf.shape[0] // 8 + 16, 2), dtype=np.int64)
    state = np.zeros(k.SPANS_STATE_SIZE, dtype=np.int64)
    while k.scan_spans(buf, mode, isolate, table, out, state) == k.NEED_ROOM:
        grown = np.empty((2 * out.shape[0], 2), dtype=np.int64)
        grown[: out.shape[0]] = out
        out = grown
    _loaded = True
    return out[: state[k.P_OUT]]


# ----------------------------------------------------------------------------------------------------------------
# Word counts


class WordCounts:
    """Unique pieces of a corpus and their counts, packed as CSR over code points.

    Word ``w`` is ``codepoints[offsets[w]:offsets[w + 1]]`` and occurs ``counts[w]`` times. Words are in order of
    first occurrence in the input, which is the iteration order of the equal ``collections.Counter``; the order
    does not depend on chunking or threads.

    Parameters
    ----------
    codepoints : array-like of int, shape (total,)
        Code points of all words, concatenated (stored as int32).
    offsets : array-like of int, shape (n_words + 1,)
        Word boundaries in ``codepoints``, from 0 to ``total`` (stored as int64).
    counts : array-like of int, shape (n_words,)
        Count of each word (stored as int64).

    Raises
    ------
    ValueError
        If the shapes or offsets are inconsistent.
    """

    __slots__ = ("codepoints", "offsets", "counts")

    def __init__(self, codepoints: Any, offsets: Any, counts: Any):
        self.codepoints = np.ascontiguousarray(codepoints, dtype=np.int32).reshape(-1)
        self.offsets = np.ascontiguousarray(offsets, dtype=np.int64).reshape(-1)
        self.counts = np.ascontiguousarray(counts, dtype=np.int64).reshape(-1)
        o = self.offsets
        if (
            o.shape[0] != self.counts.shape[0] + 1
            or o[0] != 0
            or o[-1] != self.codepoints.shape[0]
            or (o.shape[0] > 1 and (np.diff(o) < 0).any())
        ):
            raise ValueError("WordCounts: offsets must run from 0 to len(codepoints), one more than counts")

    @classmethod
    def from_dict(cls, counts: Mapping[str, int]) -> WordCounts:
        """Pack a ``{word: count}`` mapping (a ``Counter``), keeping its order."""
        words = list(counts)
        lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        offsets = np.zeros(len(words) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        joined = "".join(words).encode("utf-32-le", "surrogatepass")
        cps = np.frombuffer(joined, dtype="<u4").astype(np.int32)
        return cls(cps, offsets, np.fromiter(counts.values(), dtype=np.int64, count=len(words)))

    def __len__(self) -> int:
        return self.counts.shape[0]

    def words(self) -> list[str]:
        """The words as Python strings, in order (for tests and debugging: one str per word)."""
        text = from_codepoints(self.codepoints.astype(np.uint32))
        o = self.offsets.tolist()
        return [text[a:b] for a, b in zip(o[:-1], o[1:])]

    def to_dict(self) -> dict[str, int]:
        """``{word: count}`` in order; equals the ``Counter`` of the same pieces, order included."""
        return dict(zip(self.words(), self.counts.tolist()))

    def merge(self, other: WordCounts) -> WordCounts:
        """Counts of the concatenated inputs: ``self``'s words first, then ``other``'s new words in their order.

        Partial counts of the chunks of a corpus merge, in corpus order, into the count of the whole.
        """
        if not isinstance(other, WordCounts):
            raise TypeError(f"WordCounts.merge expects WordCounts, got {type(other).__name__}")
        if not is_enabled():
            merged = Counter(self.to_dict())
            merged.update(other.to_dict())
            return WordCounts.from_dict(merged)
        k = _kernels()
        table = _Table(self.codepoints.shape[0] * 4 + other.codepoints.shape[0] * 4, len(self) + len(other))
        for part in (self, other):
            buf, bounds = part._utf8()
            table.add(buf, bounds, part.counts, k.MODE_WHOLE, -1, class_tables()[ROW_GPT2])
        return table.result()

    def _utf8(self) -> tuple[np.ndarray, np.ndarray]:
        """UTF-8 of the words, concatenated, and the word boundaries in it."""
        cps = self.codepoints.astype(np.int64)
        lengths = 1 + (cps >= 0x80) + (cps >= 0x800) + (cps >= 0x10000)
        ends = np.zeros(cps.shape[0] + 1, dtype=np.int64)
        np.cumsum(lengths, out=ends[1:])
        return _utf8(from_codepoints(self.codepoints.astype(np.uint32))), ends[self.offsets]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, WordCounts):
            return NotImplemented
        return (
            np.array_equal(self.codepoints, other.codepoints)
            and np.array_equal(self.offsets, other.offsets)
            and np.array_equal(self.counts, other.counts)
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"WordCounts({len(self)} words, {int(self.counts.sum())} pieces)"


class _Table:
    """The arrays of one hash table of :func:`count_pieces` and the grow-and-resume loop around it."""

    def __init__(self, pool_bytes: int, words: int = 1024):
        k = _kernels()
        words = 1 << max(10, int(words - 1).bit_length())
        self.pool = np.empty(max(64, pool_bytes), dtype=np.uint8)
        self.wend = np.zeros(words + 1, dtype=np.int64)
        self.whash = np.empty(words, dtype=np.int64)
        self.wcount = np.empty(words, dtype=np.int64)
        self.slots = np.full(2 * words, -1, dtype=np.int64)
        self.state = np.zeros(k.COUNT_STATE_SIZE, dtype=np.int64)

    def add(self, buf: np.ndarray, bounds: np.ndarray, weights: np.ndarray, mode: int, isolate: int,
            table: np.ndarray, record: bool = False) -> tuple[np.ndarray, np.ndarray] | None:
        """Add the pieces of the documents ``buf[bounds[d]:bounds[d + 1]]`` (each weighted, unless ``weights`` is
        empty). With ``record``, return the word id of every piece (int32) and the number of pieces up to the end
        of each document (int64, shape (n_docs,))."""
        k = _kernels()
        st = self.state
        st[k.S_DOC] = 0
        st[k.S_POS] = 0
        st[k.S_OUT] = 0
        n_docs = bounds.shape[0] - 1
        # every piece holds at least one byte, so this is enough room unless the documents are empty
        piece_ids = np.empty(max(1, int(bounds[-1] - bounds[0])) if record else 0, dtype=np.int32)
        doc_ends = np.zeros(n_docs if record else 0, dtype=np.int64)
        while k.count_pieces(buf, bounds, weights, mode, isolate, table, self.pool, self.wend, self.whash,
                             self.wcount, self.slots, st, piece_ids, doc_ends) == k.NEED_ROOM:
            if record and int(st[k.S_OUT]) >= piece_ids.shape[0]:
                piece_ids = _grown(piece_ids, 2 * piece_ids.shape[0], int(st[k.S_OUT]))
                continue
            n = int(st[k.S_WORDS])
            if n >= self.whash.shape[0]:
                cap = 4 * self.whash.shape[0] if n < 1 << 20 else 2 * self.whash.shape[0]
                self.wend = _grown(self.wend, cap + 1, n + 1)
                self.whash = _grown(self.whash, cap, n)
                self.wcount = _grown(self.wcount, cap, n)
                self.slots = np.empty(2 * cap, dtype=np.int64)
                st[k.S_REHASH] = 1
            else:  # the word did not fit in the pool
                self.pool = _grown(self.pool, 2 * self.pool.shape[0], int(st[k.S_POOL]))
        if record:
            return piece_ids[: int(st[k.S_OUT])], doc_ends
        return None

    def merge(self, other: _Table, record: bool = False) -> np.ndarray | None:
        """Add ``other``'s words with their counts, after this table's words; with ``record``, return the id here of
        each of ``other``'s words (int32, shape (len(other),))."""
        k = _kernels()
        n = int(other.state[k.S_WORDS])
        used = int(other.state[k.S_POOL])
        need = int(self.state[k.S_POOL]) + used
        if need > self.pool.shape[0]:
            self.pool = _grown(self.pool, max(need, 2 * self.pool.shape[0]), int(self.state[k.S_POOL]))
        pool = other.pool[:used]
        pool.flags.writeable = False  # the kernels take every text buffer read-only (one compiled signature)
        got = self.add(pool, other.wend[: n + 1], other.wcount[:n], k.MODE_WHOLE, -1, class_tables()[ROW_GPT2],
                       record)
        return None if got is None else got[0]

    def result(self) -> WordCounts:
        """The words as code points (via one decode of the pool) with their counts."""
        k = _kernels()
        n = int(self.state[k.S_WORDS])
        pool = self.pool[: int(self.state[k.S_POOL])]
        text = pool.tobytes().decode("utf-8", "surrogatepass")
        cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4").astype(np.int32)
        starts = np.zeros(pool.shape[0] + 1, dtype=np.int64)
        np.cumsum((pool & 0xC0) != 0x80, out=starts[1:])  # code points before each byte
        return WordCounts(cps, starts[self.wend[: n + 1]], self.wcount[:n].copy())


def _grown(array: np.ndarray, size: int, keep: int) -> np.ndarray:
    out = np.empty(size, dtype=array.dtype)
    out[:keep] = array[:keep]
    return out


# A chunk of a long document may end after a newline (or before a space) that has a printable ASCII character on
# each side: there every built-in pre-tokenizer ends a piece, and the scan of either part alone gives the same
# pieces (for GPT-2 the newline is a piece alone, and the space attaches to the piece after it either way).
_LINE_CUT = re.compile(rb"[\x21-\x7e]\n(?=[\x21-\x7e])")
_ANY_CUT = re.compile(rb"[\x21-\x7e](?:\n(?=[\x21-\x7e])|(?= [\x21-\x7e]))")


def _cuts(data: bytes, target: int) -> list[int]:
    """Positions that cut ``data`` into parts of about ``target`` bytes without changing any piece."""
    cuts = [0]
    n = len(data)
    while n - cuts[-1] > target:
        start = cuts[-1] + target
        m = _LINE_CUT.search(data, start, start + max(4096, target // 8)) or _ANY_CUT.search(data, start)
        if m is None:
            break
        cuts.append(m.end())
    cuts.append(n)
    return cuts


def _chunks(docs: Iterable[str], norm: Normalizer, chunk_bytes: int, whole: bool
            ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Pack the documents' UTF-8 into chunks of about ``chunk_bytes``: ``(buf, bounds)`` for :func:`count_pieces`.

    A document longer than ``chunk_bytes`` is cut at safe points (:func:`_cuts`) unless ``whole``.
    """
    identity = type(norm) is Identity
    parts: list[bytes] = []
    size = 0
    for index, doc in enumerate(docs):
        if not isinstance(doc, str):
            raise CorpusError(f"count_words: documents must be str, got {type(doc).__name__} at index {index}")
        if not identity:
            doc = norm.normalize_str(doc)
        data = doc.encode("utf-8", "surrogatepass")
        if len(data) > chunk_bytes and not whole:
            if parts:
                yield _pack(parts)
                parts, size = [], 0
            buf = np.frombuffer(data, dtype=np.uint8)
            cuts = _cuts(data, chunk_bytes)
            for a, b in zip(cuts[:-1], cuts[1:]):
                yield buf, np.array([a, b], dtype=np.int64)
            continue
        parts.append(data)
        size += len(data)
        if size >= chunk_bytes:
            yield _pack(parts)
            parts, size = [], 0
    if parts:
        yield _pack(parts)


def _list_chunks(docs: list, chunk_bytes: int) -> Iterator[tuple[np.ndarray, np.ndarray]] | None:
    """:func:`_chunks` of whole documents for a list of str and no normalizer, without a Python step per
    document: about ``chunk_bytes`` code points of documents are joined and encoded at once, and the document
    bounds found from the code-point lengths (through the positions of the UTF-8 lead bytes when the text is not
    ASCII). None when a document is not a str (the generic path then reports it)."""
    try:
        lengths = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
        if not all(map(str.__instancecheck__, docs)):
            return None
    except TypeError:
        return None

    def chunks() -> Iterator[tuple[np.ndarray, np.ndarray]]:
        ends = np.cumsum(lengths)
        start = 0
        while start < len(docs):
            base = ends[start - 1] if start else 0
            stop = max(start + 1, int(np.searchsorted(ends, base + chunk_bytes, side="left")) + 1)
            stop = min(stop, len(docs))
            text = "".join(docs[start:stop])
            data = text.encode("utf-8", "surrogatepass")
            bounds = np.zeros(stop - start + 1, dtype=np.int64)
            np.cumsum(lengths[start:stop], out=bounds[1:])
            buf = np.frombuffer(data, dtype=np.uint8)
            if len(data) != len(text):
                lead = np.flatnonzero((buf & 0xC0) != 0x80)
                bounds = np.append(lead, len(data))[bounds]
            yield buf, bounds
            start = stop

    return chunks()


def _pack(parts: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    bounds = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, parts), dtype=np.int64, count=len(parts)), out=bounds[1:])
    return np.frombuffer(b"".join(parts), dtype=np.uint8), bounds


def count_words(
    docs: str | Iterable[str],
    pre_tokenizer: Any,
    normalizer: Any = None,
    *,
    workers: int = 2,
    chunk_bytes: int = _DEFAULT_CHUNK_BYTES,
) -> WordCounts:
    """Count the pieces of a corpus in one pass: ``Counter(piece for doc in docs for piece, _ in split_text(doc,
    normalizer, pre_tokenizer))``, packed as :class:`WordCounts`.

    The documents are normalized in Python (skipped for the identity normalizer), encoded as UTF-8 and packed into
    chunks of about ``chunk_bytes``; a longer document is cut after a newline (or before a space) between two
    printable ASCII characters, where no piece of any built-in pre-tokenizer can cross. Each chunk is scanned and
    counted by the Numba kernel ``count_pieces`` (a hash table from piece bytes to count, no Python object per
    piece) on a pool of ``workers`` threads; the chunk tables are merged in input order, so the result is the same
    for every ``workers`` and ``chunk_bytes``. The documents are read lazily: at most ``workers + 1`` chunks and
    their tables are held at a time, besides the merged table (peak memory: see BENCHMARKS.md). With a custom
    pre-tokenizer (``regex``) or ``TOKEMBED_PURE_PYTHON=1`` the count is the ``Counter`` above. This is the word-frequency pass of BPE and
    WordPiece training (Sennrich et al., 2016), as Hugging Face ``tokenizers``' trainers do it before merging.

    Parameters
    ----------
    docs : str or iterable of str
        The documents; a str is one document. Pieces never cross a document boundary.
    pre_tokenizer : PreTokenizer or spec
        Anything :func:`~tokembed.text.build_pre_tokenizer` accepts (``"word_punct"``, ``"gpt2"``, ...).
    normalizer : Normalizer or spec, optional
        Anything :func:`~tokembed.text.build_normalizer` accepts; None leaves the text unchanged.
    workers : int, default 2
        Threads that count chunks (1: count in the calling thread).
    chunk_bytes : int, default 1 MiB
        Target size of a chunk in UTF-8 bytes.

    Returns
    -------
    WordCounts
        Words in order of first occurrence, with int64 counts.

    Raises
    ------
    TextStageError
        If a stage spec is invalid, or ``workers`` or ``chunk_bytes`` is not a positive int.
    CorpusError
        If a document is not a str.
    """
    global _loaded
    pre = build_pre_tokenizer(pre_tokenizer)
    norm = build_normalizer(normalizer)
    for name, value in (("workers", workers), ("chunk_bytes", chunk_bytes)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
            raise TextStageError(f"count_words: {name} must be a positive int, got {value!r}")
    if isinstance(docs, str):
        docs = (docs,)
    spec = _scan_spec(pre) if is_enabled() else None
    if spec is None:
        return _count_python(docs, norm, pre)
    k = _kernels()
    mode, isolate, row = spec
    table = class_tables()[row]
    no_weights = np.zeros(0, dtype=np.int64)

    def count_chunk(chunk: tuple[np.ndarray, np.ndarray]) -> _Table:
        buf, bounds = chunk
        counts = _Table(int(bounds[-1] - bounds[0]))
        counts.add(buf, bounds, no_weights, mode, isolate, table)
        return counts

    chunks = _chunks(docs, norm, int(chunk_bytes), whole=mode == k.MODE_WHOLE)
    total: _Table | None = None

    def take(part: _Table) -> _Table:
        if total is None:
            return part
        total.merge(part)
        return total

    if workers == 1:
        for chunk in chunks:
            total = take(count_chunk(chunk))
    else:
        with ThreadPoolExecutor(max_workers=int(workers), thread_name_prefix="tokembed-count") as pool:
            pending: deque = deque()
            for chunk in chunks:
                pending.append(pool.submit(count_chunk, chunk))
                if len(pending) > workers:
                    total = take(pending.popleft().result())
            while pending:
                total = take(pending.popleft().result())
    if total is None:
        return WordCounts(np.zeros(0, np.int32), np.zeros(1, np.int64), np.zeros(0, np.int64))
    _loaded = True
    return total.result()


def index_words(
    docs: str | Iterable[str],
    pre_tokenizer: Any,
    normalizer: Any = None,
    *,
    workers: int = 2,
    chunk_bytes: int = _DEFAULT_CHUNK_BYTES,
) -> tuple[np.ndarray, np.ndarray, WordCounts]:
    """Every document as ids of its pieces, in one pass: :func:`count_words` that also records which word each
    piece is.

    The scan, the chunks (of whole documents: a document is never cut), the threads and the in-order merge are
    those of :func:`count_words`; each chunk's ids are mapped to the merged table's ids by one NumPy gather, so no
    Python object is made per piece.

    Parameters
    ----------
    docs, pre_tokenizer, normalizer, workers, chunk_bytes
        As in :func:`count_words`.

    Returns
    -------
    ids : ndarray of int32, shape (n_pieces,)
        The word id of every piece, documents one after the other.
    offsets : ndarray of int64, shape (n_docs + 1,)
        Document ``d`` is ``ids[offsets[d]:offsets[d + 1]]`` (CSR, as :class:`tokembed.sequences.TokenSequences`).
    words : WordCounts
        Word ``i`` of the ids with its count; words in order of first occurrence, equal to
        ``count_words(docs, ...)`` (the same for every ``workers`` and ``chunk_bytes``).

    Raises
    ------
    TextStageError, CorpusError
        As :func:`count_words`.
    """
    global _loaded
    pre = build_pre_tokenizer(pre_tokenizer)
    norm = build_normalizer(normalizer)
    for name, value in (("workers", workers), ("chunk_bytes", chunk_bytes)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
            raise TextStageError(f"index_words: {name} must be a positive int, got {value!r}")
    if isinstance(docs, str):
        docs = (docs,)
    spec = _scan_spec(pre) if is_enabled() else None
    if spec is None:
        return _index_python(docs, norm, pre)
    mode, isolate, row = spec
    table = class_tables()[row]
    no_weights = np.zeros(0, dtype=np.int64)

    def index_chunk(chunk: tuple[np.ndarray, np.ndarray]) -> tuple[_Table, np.ndarray, np.ndarray]:
        buf, bounds = chunk
        counts = _Table(int(bounds[-1] - bounds[0]))
        piece_ids, doc_ends = counts.add(buf, bounds, no_weights, mode, isolate, table, record=True)
        return counts, piece_ids, doc_ends

    total: _Table | None = None
    id_parts: list[np.ndarray] = []
    end_parts: list[np.ndarray] = []
    n_pieces = 0

    def take(part: tuple[_Table, np.ndarray, np.ndarray]) -> None:
        nonlocal total, n_pieces
        counts, piece_ids, doc_ends = part
        if total is None:
            total = counts
        else:
            piece_ids = total.merge(counts, record=True)[piece_ids]
        id_parts.append(piece_ids)
        end_parts.append(doc_ends + n_pieces)
        n_pieces += piece_ids.shape[0]

    chunks = None
    if isinstance(docs, list) and type(norm) is Identity:
        chunks = _list_chunks(docs, int(chunk_bytes))
    if chunks is None:
        chunks = _chunks(docs, norm, int(chunk_bytes), whole=True)
    if workers == 1:
        for chunk in chunks:
            take(index_chunk(chunk))
    else:
        with ThreadPoolExecutor(max_workers=int(workers), thread_name_prefix="tokembed-index") as pool:
            pending: deque = deque()
            for chunk in chunks:
                pending.append(pool.submit(index_chunk, chunk))
                if len(pending) > workers:
                    take(pending.popleft().result())
            while pending:
                take(pending.popleft().result())
    ends = np.concatenate(end_parts) if end_parts else np.zeros(0, np.int64)
    offsets = np.zeros(ends.shape[0] + 1, dtype=np.int64)
    offsets[1:] = ends
    ids = np.concatenate(id_parts) if id_parts else np.zeros(0, np.int32)
    if total is None:
        return ids, offsets, WordCounts(np.zeros(0, np.int32), np.zeros(1, np.int64), np.zeros(0, np.int64))
    _loaded = True
    return ids, offsets, total.result()


def _index_python(docs: Iterable[str], norm: Normalizer, pre: PreTokenizer
                  ) -> tuple[np.ndarray, np.ndarray, WordCounts]:
    """The reference of :func:`index_words`: a dict from piece to id over the pieces of the regex/NumPy path."""
    index: dict[str, int] = {}
    counts: list[int] = []
    ids: list[int] = []
    offsets = [0]
    for position, doc in enumerate(docs):
        if not isinstance(doc, str):
            raise CorpusError(f"index_words: documents must be str, got {type(doc).__name__} at index {position}")
        for piece, _ in pre.pre_tokenize(norm.normalize_str(doc)):
            i = index.setdefault(piece, len(index))
            if i == len(counts):
                counts.append(0)
            counts[i] += 1
            ids.append(i)
        offsets.append(len(ids))
    words = WordCounts.from_dict(dict(zip(index, counts)))
    return np.asarray(ids, dtype=np.int32), np.asarray(offsets, dtype=np.int64), words


def _count_python(docs: Iterable[str], norm: Normalizer, pre: PreTokenizer) -> WordCounts:
    """The reference count: ``Counter`` over the pieces of the regex/NumPy path."""
    counts: Counter = Counter()
    for index, doc in enumerate(docs):
        if not isinstance(doc, str):
            raise CorpusError(f"count_words: documents must be str, got {type(doc).__name__} at index {index}")
        counts.update(piece for piece, _ in pre.pre_tokenize(norm.normalize_str(doc)))
    return WordCounts.from_dict(counts)


def warmup() -> None:
    """Compile every kernel of ``text/_kernels.py`` (or load it from Numba's cache) and load the class tables.

    Each kernel is run once on a tiny input with the argument types of real calls, so a later first call pays
    neither compilation nor cache loading.
    """
    count_words("warm up, it's 1 \u00e9t\u00e9 \u6771!", "gpt2", workers=1)
    fast_spans(WordPunct(), "warm up")
    # scan_docs, with the argument types of tokembed.text.scan's calls (the table arrays empty: no lookup)
    k = _kernels()
    buf = _utf8("warm up")
    none = np.zeros(0, np.int64)
    k.scan_docs(buf, np.array([0, buf.shape[0]], np.int64), k.MODE_RUNS, -1, class_tables()[ROW_WORD_PUNCT],
                np.zeros(0, np.uint8), none, none, none, np.zeros(0, np.int32), -1, np.zeros(0, np.int32),
                np.empty((buf.shape[0], 2), np.int64), np.empty(1, np.int64))


register_fast_path(fast_spans, kernels_loaded)
