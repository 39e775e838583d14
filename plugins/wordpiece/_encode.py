"""Batch encoding around the Numba kernel: chunking, the vocabulary table, and building Encodings fast.

:class:`VocabModel` holds the vocabulary table of :func:`_kernels.encode_chunk`; :func:`encode_texts` runs the
kernel over many texts in chunks of about a million code points (a longer text is cut at a space or newline,
which no word crosses) and returns flat arrays; :func:`to_encodings` and :func:`template_arrays` turn those into
:class:`~tokembed.Encoding` objects without a Python loop per token.
"""

from __future__ import annotations

import gc
import threading
from typing import Iterable, Iterator, NamedTuple, Sequence

import numpy as np

from tokembed.encoding import Encoding
from tokembed.errors import TokembedError

from ._charmap import CharMap, codepoints

__all__ = ["VocabModel", "encode_texts", "to_encodings", "template_arrays", "fast_encoding", "batch_encodings"]

#: Code points per kernel call (texts are grouped up to this size; a longer text is cut at a space or newline).
CHUNK_CHARS = 1 << 20


class VocabModel:
    """The lookup structure of greedy longest-match-first WordPiece over one vocabulary.

    Parameters
    ----------
    tokens : sequence of str
        The vocabulary in id order.
    never : collection of int
        Ids never produced by matching text (the special tokens).
    prefix : str
        The continuation prefix (``"##"``). A token ``prefix + body`` (``body`` non-empty) continues a word; any
        other token starts one. With an empty prefix every token may do both.
    """

    def __init__(self, tokens: Sequence[str], never: Iterable[int], prefix: str):
        from . import _kernels as K  # imports numba: not at module level, so registering the plugin stays light

        n = len(tokens)
        kinds = np.zeros(n, np.int8)
        bodies = list(tokens)
        if prefix:
            p = len(prefix)
            for t, tok in enumerate(tokens):
                if len(tok) > p and tok.startswith(prefix):
                    kinds[t] = 1
                    bodies[t] = tok[p:]
        for t in never:
            kinds[t] = -1
        lengths = np.fromiter(map(len, bodies), dtype=np.int64, count=n)
        kinds[lengths == 0] = -1
        self.body_off = np.zeros(n + 1, np.int64)
        np.cumsum(lengths, out=self.body_off[1:])
        self.body_cps = codepoints("".join(bodies)).astype(np.int32)
        self.one_kind = not prefix
        max_len = np.zeros(2, np.int64)
        for kind in (0, 1):
            sel = lengths[kinds == kind]
            max_len[kind] = int(sel.max()) if sel.size else 0
        if self.one_kind:
            max_len[:] = max_len.max()
        self.max_len = max_len
        size = 1 << max(4, int(2 * n).bit_length())
        self.hkeys = np.zeros(size, np.uint64)
        self.hvals = np.full(size, -1, np.int32)
        K.build_vocab_table(self.body_cps, self.body_off, kinds.astype(np.int64), self.hkeys, self.hvals)


def _cut(text: str, pos: int) -> int:
    """First index >= ``pos`` of a space or newline in ``text`` (a safe place to cut: both always separate words),
    or -1."""
    a = text.find(" ", pos)
    b = text.find("\n", pos)
    if a < 0:
        return b
    return a if b < 0 else min(a, b)


class _Chunk(NamedTuple):
    """Texts ``first .. stop - 1`` whole (``part`` None), or the part ``text[start:end]`` of text ``first``
    (``part == (start, end)``, ``stop == first + 1``)."""

    first: int
    stop: int
    part: tuple[int, int] | None


def _chunks(texts: Sequence[str], target: int) -> Iterator[_Chunk]:
    """Group the texts into chunks of about ``target`` code points (at least one text each); a text longer than
    ``target`` is cut into parts at spaces or newlines, each part a chunk."""
    lengths = np.fromiter(map(len, texts), np.int64, len(texts))
    long = np.flatnonzero(lengths > target).tolist()
    pos = 0
    for stop in long + [len(texts)]:
        if stop > pos:
            cum = np.cumsum(lengths[pos:stop])
            first = pos
            while first < stop:
                base = int(cum[first - pos - 1]) if first > pos else 0
                end = min(stop, pos + int(np.searchsorted(cum, base + target, side="left")) + 1)
                yield _Chunk(first, end, None)
                first = end
        if stop < len(texts):
            text = texts[stop]
            start = 0
            while len(text) - start > target:
                cut = _cut(text, start + target)
                if cut < 0:
                    break
                yield _Chunk(stop, stop + 1, (start, cut))
                start = cut
            yield _Chunk(stop, stop + 1, (start, len(text)))
            pos = stop + 1


class _Buffers:
    """Output arrays reused from chunk to chunk by one thread (no fresh pages to fault in for every chunk)."""

    def __init__(self):
        self.ids = np.empty(0, np.int32)
        self.span = np.empty((0, 2), np.int64)

    def ensure(self, room: int) -> None:
        if self.ids.shape[0] < room:
            room = max(room, 2 * self.ids.shape[0])
            self.ids = np.empty(room, np.int32)
            self.span = np.empty((room, 2), np.int64)


def _encode_chunk(model: VocabModel, cmap: CharMap, texts: Sequence[str], chunk: _Chunk, unk_id: int,
                  max_chars: int, buf: _Buffers) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One kernel call over ``chunk``: ``(ids, spans into each text, tokens per text of the chunk)``."""
    from . import _kernels as K

    if chunk.part is None:
        parts = texts[chunk.first:chunk.stop]
        joined = parts[0] if len(parts) == 1 else "".join(parts)
        bounds = np.zeros(len(parts) + 1, np.int64)
        np.cumsum(np.fromiter(map(len, parts), np.int64, len(parts)), out=bounds[1:])
        shift = -bounds[:-1]
    else:
        a, b = chunk.part
        joined = texts[chunk.first][a:b]
        bounds = np.array([0, b - a], np.int64)
        shift = np.array([a], np.int64)
    cps = codepoints(joined)
    cmap.prepare(joined, cps)
    table, exp_off, exp_vals, max_exp = cmap.arrays()
    seg_count = np.zeros(bounds.shape[0] - 1, np.int64)
    err = np.zeros(2, np.int64)
    room = cps.shape[0] + 16  # one token per character, unless normalization adds characters
    while True:
        buf.ensure(room)
        n = K.encode_chunk(cps, bounds, table, exp_off, exp_vals, max_exp, model.hkeys, model.hvals,
                           model.body_cps, model.body_off, model.max_len, unk_id, max_chars, model.one_kind,
                           buf.ids, buf.span, seg_count, err)
        if n != K.NEED_ROOM:
            break
        room = 2 * buf.ids.shape[0]
    if n == K.NO_UNK:
        word = joined[int(err[0]):int(err[1])]
        raise TokembedError(f"wordpiece: the word {word!r} has no segmentation in the vocabulary and there is "
                            "no unk_token")
    spans = buf.span[:n].copy()
    if seg_count.shape[0] > 1 or shift[0]:  # kernel offsets are into the chunk: make them offsets into each text
        per_token = np.repeat(shift, seg_count)
        spans[:, 0] += per_token
        spans[:, 1] += per_token
    return buf.ids[:n].copy(), spans, seg_count


def encode_texts(model: VocabModel, cmap: CharMap, texts: Sequence[str], unk_id: int, max_chars: int,
                 chunk_chars: int | None = None, workers: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Normalize, split and WordPiece-encode ``texts``, in chunks of about ``chunk_chars`` code points
    (default :data:`CHUNK_CHARS`).

    With ``workers > 1`` the chunks are encoded on that many threads (the kernel releases the GIL); the result
    does not depend on ``workers``.

    Returns
    -------
    ids : ndarray of int32, shape (n_tokens,)
    spans : ndarray of int64, shape (n_tokens, 2)
        ``[start, end)`` code-point offsets of each token into its own text.
    counts : ndarray of int64, shape (len(texts),)
        Tokens of each text; text ``i``'s tokens follow those of texts ``0 .. i-1``.

    Raises
    ------
    TokembedError
        If a word has no segmentation and ``unk_id`` is -1.
    """
    if not isinstance(texts, (list, tuple)):
        texts = list(texts)
    chunks = list(_chunks(texts, chunk_chars or CHUNK_CHARS))
    if workers > 1 and len(chunks) > 1:
        from concurrent.futures import ThreadPoolExecutor

        local = threading.local()

        def job(chunk: _Chunk):
            buf = getattr(local, "buf", None)
            if buf is None:
                buf = local.buf = _Buffers()
            return _encode_chunk(model, cmap, texts, chunk, unk_id, max_chars, buf)

        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="tokembed-wordpiece") as pool:
            results = list(pool.map(job, chunks))
    else:
        buf = _Buffers()
        results = [_encode_chunk(model, cmap, texts, chunk, unk_id, max_chars, buf) for chunk in chunks]
    counts = np.zeros(len(texts), np.int64)
    for chunk, (_, _, seg_count) in zip(chunks, results):
        counts[chunk.first:chunk.stop] += seg_count
    if not results:
        return np.zeros(0, np.int32), np.zeros((0, 2), np.int64), counts
    if len(results) == 1:
        return results[0][0], results[0][1], counts
    return np.concatenate([r[0] for r in results]), np.concatenate([r[1] for r in results]), counts


def fast_encoding(ids: np.ndarray, tokens: list[str], offsets: np.ndarray, type_ids: np.ndarray,
                  special_tokens_mask: np.ndarray, attention_mask: np.ndarray) -> Encoding:
    """An :class:`Encoding` from arrays already of the right dtypes and shapes, without re-validating them.

    ``Encoding(...)`` converts and checks every field (about 3.5 microseconds); a batch of 200,000 lines spends
    most of its time there. The fields set here are exactly those of the dataclass, and a test checks that the
    result equals the validating constructor's.
    """
    enc = object.__new__(Encoding)
    enc.ids = ids
    enc.tokens = tokens
    enc.offsets = offsets
    enc.type_ids = type_ids
    enc.special_tokens_mask = special_tokens_mask
    enc.attention_mask = attention_mask
    enc.overflowing = []
    return enc


def to_encodings(ids: np.ndarray, tokens: list[str], offsets: np.ndarray, counts: np.ndarray,
                 type_ids: np.ndarray | None = None, special_tokens_mask: np.ndarray | None = None
                 ) -> list[Encoding]:
    """Cut flat arrays (text ``i`` owns ``counts[i]`` consecutive tokens) into one Encoding per text.

    Each Encoding gets views of its own stretch of the flat arrays (no two share an element).
    """
    total = ids.shape[0]
    if type_ids is None:
        type_ids = np.zeros(total, np.int32)
    if special_tokens_mask is None:
        special_tokens_mask = np.zeros(total, np.int8)
    attention = np.ones(total, np.int8)
    ends = np.cumsum(counts).tolist()
    starts = [0] + ends[:-1]
    return [fast_encoding(ids[a:b], tokens[a:b], offsets[a:b], type_ids[a:b], special_tokens_mask[a:b],
                          attention[a:b]) for a, b in zip(starts, ends)]


def template_arrays(ids: np.ndarray, offsets: np.ndarray, counts: np.ndarray, template, special_ids: dict,
                    add_special_tokens: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Apply a single-text template (``[CLS] $A [SEP]``) to every text at once.

    The same result as :meth:`tokembed.postprocess.TemplateProcessing.apply` text by text: added tokens get
    offsets (0, 0), their template type id and ``special_tokens_mask`` 1.

    Returns
    -------
    ids, offsets, counts, type_ids, special_tokens_mask
        The flat arrays after the template (int32, int64 (n, 2), int64, int32, int8).
    """
    pieces = template.single
    a_index = next(k for k, p in enumerate(pieces) if p.sequence is not None)
    a_type = pieces[a_index].type_id
    pre = [p for p in pieces[:a_index] if p.token is not None] if add_special_tokens else []
    post = [p for p in pieces[a_index + 1:] if p.token is not None] if add_special_tokens else []
    extra = len(pre) + len(post)
    new_counts = counts + extra
    total = int(new_counts.sum())
    out_ids = np.empty(total, np.int32)
    out_off = np.zeros((total, 2), np.int64)
    out_type = np.empty(total, np.int32)
    out_stm = np.zeros(total, np.int8)
    out_start = np.cumsum(new_counts) - new_counts
    is_a = np.ones(total, bool)  # a boolean mask writes the texts' tokens faster than an index array
    special_pos = [(out_start + k, piece) for k, piece in enumerate(pre)]
    special_pos += [(out_start + len(pre) + counts + k, piece) for k, piece in enumerate(post)]
    for pos, _ in special_pos:
        is_a[pos] = False
    out_ids[is_a] = ids
    out_off[is_a] = offsets
    out_type[is_a] = a_type
    for pos, piece in special_pos:
        out_ids[pos] = special_ids[piece.token]
        out_type[pos] = piece.type_id
        out_stm[pos] = 1
    return out_ids, out_off, new_counts, out_type, out_stm


def batch_encodings(encode_arrays, itos: np.ndarray, texts: list[str], pairs: list[str] | None, opts,
                    workers: int) -> list[Encoding]:
    """The post-processed, padded encodings of ``texts`` (and ``pairs``) under the call options ``opts``.

    ``encode_arrays(texts, workers)`` gives the flat arrays of :func:`encode_texts`. One-text batches without
    truncation get the template with :func:`template_arrays`; pairs and truncation go through
    ``opts.process`` encoding by encoding, as :meth:`tokembed.Tokenizer.encode_batch` does.
    """
    ids, offsets, counts = encode_arrays(texts, workers)
    enabled = gc.isenabled()
    gc.disable()  # hundreds of thousands of small objects: the collector would run again and again
    try:
        if pairs is None and opts.truncation is None:
            type_ids = stm = None
            if not opts.is_identity:
                ids, offsets, counts, type_ids, stm = template_arrays(
                    ids, offsets, counts, opts.template, opts.special_ids, opts.add_special_tokens)
            encodings = to_encodings(ids, itos[ids].tolist(), offsets, counts, type_ids, stm)
        else:
            firsts = to_encodings(ids, itos[ids].tolist(), offsets, counts)
            seconds: list[Encoding | None] = [None] * len(texts)
            if pairs is not None:
                p_ids, p_off, p_counts = encode_arrays(pairs, workers)
                seconds = to_encodings(p_ids, itos[p_ids].tolist(), p_off, p_counts)
            encodings = [a if opts.is_identity else opts.process(a, b) for a, b in zip(firsts, seconds)]
        return opts.pad_batch(encodings)
    finally:
        if enabled:
            gc.enable()
