"""The pieces of many texts in one call of the Numba scanner: spans, and the id of each piece in a fixed vocabulary.

What a tokenizer's batch encoder needs from its pre-tokenizer, without a Python step per piece or per text:

- :func:`batch_spans` -- the pre-tokenizer's pieces of texts joined end to end (what the BPE model encodes), as
  code-point spans of the joined text, with the number of pieces per text;
- :class:`PieceVocabulary` -- a fixed set of words with an id each (a word-level vocabulary) and
  :meth:`PieceVocabulary.encode`: normalize, scan, look every piece up in a hash table inside Numba, and give ids
  and spans in each ORIGINAL text (normalization undone, as :func:`tokembed.text.split_text_arrays` does).

Both equal the reference path (``normalizer.normalize`` then ``pre_tokenizer.spans`` text by text), and both say
None when the scanner cannot stand in for it: a pre-tokenizer it does not know (``regex``, a subclass), numba
missing or ``TOKEMBED_PURE_PYTHON=1`` (see :func:`tokembed.text.fast.is_enabled`). The kernel is
``text/_kernels.py``'s :func:`scan_docs`, which releases the GIL: callers run chunks of texts on threads.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from tokembed.text.fast import _SCANNERS, ROW_GPT2, _kernels, _scan_spec, _Table, class_tables, is_enabled
from tokembed.text.normalized import NormalizedText
from tokembed.text.normalizers import Identity, Normalizer
from tokembed.text.pre_tokenizers import PreTokenizer

__all__ = ["batch_spans", "PieceVocabulary", "scans", "to_original"]

_NO_U8 = np.zeros(0, np.uint8)
_NO_I64 = np.zeros(0, np.int64)
_NO_I32 = np.zeros(0, np.int32)


def _utf8_bounds(joined: str, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The UTF-8 of ``joined`` (``surrogatepass``, read-only) and the byte bounds of texts of ``lengths`` code
    points laid end to end in it, shape (n + 1,)."""
    data = joined.encode("utf-8", "surrogatepass")
    buf = np.frombuffer(data, dtype=np.uint8)
    bounds = np.zeros(lengths.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=bounds[1:])
    if len(data) != len(joined):  # not ASCII: code point -> byte through the lead bytes
        lead = np.append(np.flatnonzero((buf & 0xC0) != 0x80), len(data))
        bounds = lead[bounds]
    return buf, bounds


def _scan(spec: tuple[int, int, int], joined: str, lengths: np.ndarray, vocab: PieceVocabulary | None
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One :func:`scan_docs` call: ``(ids int32 (n,) or empty, spans int64 (n, 2) of ``joined``, pieces per text
    int64)``."""
    k = _kernels()
    mode, isolate, row = spec
    buf, bounds = _utf8_bounds(joined, lengths)
    cap = len(joined)
    spans = np.empty((cap, 2), dtype=np.int64)
    doc_ends = np.empty(lengths.shape[0], dtype=np.int64)
    if vocab is None:
        ids = _NO_I32
        n = k.scan_docs(buf, bounds, mode, isolate, class_tables()[row], _NO_U8, _NO_I64, _NO_I64, _NO_I64, _NO_I32,
                        -1, ids, spans, doc_ends)
    else:
        t = vocab._table
        ids = np.empty(cap, dtype=np.int32)
        n = k.scan_docs(buf, bounds, mode, isolate, class_tables()[row], t.pool, t.wend, t.whash, t.slots,
                        vocab._values, vocab.default, ids, spans, doc_ends)
        ids = ids[:n]
    counts = np.diff(doc_ends, prepend=0) if doc_ends.shape[0] else doc_ends
    return ids, spans[:n], counts


def scans(pre_tokenizer: PreTokenizer) -> bool:
    """True when :func:`batch_spans` and :meth:`PieceVocabulary.encode` scan for ``pre_tokenizer`` (a built stage)
    rather than say None: the scanner knows it and is enabled. Imports no numba."""
    return is_enabled() and type(pre_tokenizer) in _SCANNERS


def batch_spans(pre_tokenizer: PreTokenizer, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray] | None:
    """The pieces of ``texts`` laid end to end, from one scan: equal to ``pre_tokenizer.spans(text)`` text by text,
    each shifted by the code points of the texts before it.

    Parameters
    ----------
    pre_tokenizer : PreTokenizer
        A built stage; the scanner knows ``whitespace_split``, ``word_punct``, ``bert``, ``sklearn``, ``gpt2`` and
        ``identity``.
    texts : sequence of str

    Returns
    -------
    (spans, counts) or None
        ``spans`` int64 of shape (n_pieces, 2): ``[start, end)`` code points of ``"".join(texts)``, no piece
        crossing a text boundary; ``counts`` int64 of shape (len(texts),): pieces per text. None when the scanner
        does not stand in for this stage or setting (then call ``pre_tokenizer.spans`` per text).
    """
    spec = _scan_spec(pre_tokenizer) if is_enabled() else None
    if spec is None:
        return None
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    _, spans, counts = _scan(spec, "".join(texts), lengths, None)
    return spans, counts


def to_original(spans: np.ndarray, bounds: np.ndarray, changed: Sequence[tuple[int, NormalizedText]]) -> None:
    """Map packed spans back to the original texts, in place.

    ``spans[bounds[t]:bounds[t + 1]]`` are spans of text ``t``'s normalized form; for each ``(t, normalized)`` of
    ``changed`` (the texts whose alignment is not one-to-one) they become spans of ``normalized.original``
    (:meth:`NormalizedText.original_spans`). The other texts' spans are already right.
    """
    for t, nt in changed:
        lo, hi = int(bounds[t]), int(bounds[t + 1])
        if hi > lo:
            spans[lo:hi] = nt.original_spans(spans[lo:hi])


class PieceVocabulary:
    """Words with an id each, looked up by the Numba scanner: a piece of text gets its word's id, or ``default``.

    Parameters
    ----------
    words : sequence of str
        The words (distinct; an empty word is never a piece and is left out).
    ids : array-like of int, shape (len(words),)
        The id of each word (fits in int32).
    default : int
        The id of a piece that is no word (-1 marks it, for the caller to report).

    The table is the one :func:`tokembed.text.fast.count_words` builds (the same hash, so the scanner's pieces
    find their words); build once per vocabulary, then :meth:`encode` from any number of threads.
    """

    def __init__(self, words: Sequence[str], ids: Sequence[int] | np.ndarray, default: int):
        k = _kernels()
        data = [w.encode("utf-8", "surrogatepass") for w in words]
        bounds = np.zeros(len(data) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, data), dtype=np.int64, count=len(data)), out=bounds[1:])
        pool = np.frombuffer(b"".join(data), dtype=np.uint8)
        table = _Table(max(1, pool.shape[0]), max(1, len(data)))
        # every non-empty word once, in order: record gives the table's word number of each
        numbers, ends = table.add(pool, bounds, _NO_I64, k.MODE_WHOLE, -1, class_tables()[ROW_GPT2], record=True)
        ids = np.asarray(ids, dtype=np.int64).reshape(-1)
        nonempty = np.diff(bounds) > 0
        values = np.full(max(1, int(table.state[k.S_WORDS])), default, dtype=np.int32)
        values[numbers] = ids[nonempty]
        self._table = table
        self._values = values
        self.default = int(default)

    def encode(self, texts: Sequence[str], pre_tokenizer: PreTokenizer, normalizer: Normalizer, *,
               spans: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray | None] | None:
        """Normalize each text, cut it with ``pre_tokenizer`` and look every piece up.

        Parameters
        ----------
        texts : sequence of str
        pre_tokenizer, normalizer : built stages
        spans : bool, default True
            Also give each piece's span in its original text (else None in that place).

        Returns
        -------
        (ids, counts, spans) or None
            ``ids`` int32 (n_pieces,): the id of each piece's word, or ``default``; ``counts`` int64 (len(texts),):
            pieces per text; ``spans`` int64 (n_pieces, 2): ``[start, end)`` code points of each piece in its own
            original text, as :func:`tokembed.text.split_text_arrays` gives them. None when the scanner does not
            stand in for ``pre_tokenizer`` (see the module docstring).
        """
        spec = _scan_spec(pre_tokenizer) if is_enabled() else None
        if spec is None:
            return None
        changed: list[tuple[int, NormalizedText]] = []
        if type(normalizer) is not Identity:
            forms = []
            for t, text in enumerate(texts):
                nt = normalizer.normalize(text)
                if spans and not nt.is_one_to_one:
                    changed.append((t, nt))
                forms.append(nt.normalized)
            texts = forms
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        ids, out, counts = _scan(spec, "".join(texts), lengths, self)
        if not spans:
            return ids, counts, None
        starts = np.zeros(lengths.shape[0], dtype=np.int64)  # joined text -> each text
        np.cumsum(lengths[:-1], out=starts[1:])
        out -= np.repeat(starts, counts)[:, None]
        if changed:
            bounds = np.zeros(counts.shape[0] + 1, dtype=np.int64)
            np.cumsum(counts, out=bounds[1:])
            to_original(out, bounds, changed)
        return ids, counts, out
