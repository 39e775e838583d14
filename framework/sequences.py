"""Documents as token-id sequences, packed as CSR arrays: what vectorizers and embedders read from a tokenizer.

:class:`TokenSequences` is the fast path between the stages of a recipe: the tokenizer's ids, never strings, in
two flat arrays (``ids`` and ``offsets``, as a CSR matrix's ``indices`` and ``indptr``), with the vocabulary that
names the ids. Kernels take the two arrays directly (``symbols int32, offsets int64``: docs/architecture.md,
"Kernels").

>>> seqs = TokenSequences.from_tokens([["a", "b", "a"], ["c"]])
>>> seqs.ids.tolist(), seqs.offsets.tolist(), seqs.vocab
([0, 1, 0, 2], [0, 3, 4], ('a', 'b', 'c'))
>>> seqs.tokens(0)
['a', 'b', 'a']
"""

from __future__ import annotations

import mmap
import os
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from .errors import TokembedError

__all__ = ["TokenSequences", "as_token_sequences", "page_release", "CHUNK_TOKENS", "READ_TOKENS"]

#: Ids per range when a consumer streams a memory-mapped corpus (:meth:`TokenSequences.id_chunks` without
#: ``max_tokens``): 2^22, 16 MiB once converted to ``int32``.
CHUNK_TOKENS = 1 << 22
#: Ids read at a time by the passes that never convert them (counting, checking offsets): 2^20, so that at most
#: 2-4 MiB of a mapped file's pages are resident before they are released.
READ_TOKENS = 1 << 20


class TokenSequences:
    """A corpus of documents, each a sequence of token ids, with the vocabulary that names the ids.

    Parameters
    ----------
    ids : array-like of int, shape (n_tokens,)
        Every document's ids, one after the other (stored as int32).
    offsets : array-like of int, shape (n_docs + 1,)
        Document ``i`` is ``ids[offsets[i]:offsets[i + 1]]``; ``offsets[0] == 0``, never decreasing, and
        ``offsets[-1] == n_tokens`` (stored as int64). An empty document has two equal offsets.
    vocab : sequence of str
        ``vocab[i]`` is the token string of id ``i`` (the tokenizer's ``id_to_token``); every id is below
        ``len(vocab)``. Ids of the vocabulary that never occur are allowed.
    special_ids : iterable of int, optional
        Ids of special tokens (padding, unknown, ...). They stay in ``ids``; a consumer that should not learn them
        (a word-vector trainer, say) reads this set.

    Raises
    ------
    TokembedError
        If the arrays are not 1-D, the offsets are not a valid partition of ``ids``, or an id is outside
        ``[0, len(vocab))``.
    """

    __slots__ = ("ids", "offsets", "vocab", "special_ids")

    def __init__(self, ids: Any, offsets: Any, vocab: Sequence[str], special_ids: Iterable[int] = ()):
        ids_arr = np.ascontiguousarray(ids, dtype=np.int32).reshape(-1) if np.size(ids) else np.zeros(0, np.int32)
        off_arr = np.ascontiguousarray(offsets, dtype=np.int64).reshape(-1)
        vocab = tuple(vocab)
        if off_arr.size == 0 or off_arr[0] != 0 or off_arr[-1] != ids_arr.size or np.any(np.diff(off_arr) < 0):
            raise TokembedError(f"token sequences: offsets must start at 0, never decrease and end at the number of "
                                f"ids ({ids_arr.size})")
        if ids_arr.size and (int(ids_arr.min()) < 0 or int(ids_arr.max()) >= len(vocab)):
            bad = int(ids_arr.min()) if int(ids_arr.min()) < 0 else int(ids_arr.max())
            raise TokembedError(f"token sequences: id {bad} is outside the vocabulary [0, {len(vocab)})")
        specials = frozenset(int(i) for i in special_ids)
        if any(not 0 <= i < len(vocab) for i in specials):
            raise TokembedError(f"token sequences: a special id is outside the vocabulary [0, {len(vocab)})")
        self.ids, self.offsets, self.vocab, self.special_ids = ids_arr, off_arr, vocab, specials

    # -- constructors ---------------------------------------------------------------------------------------------
    @classmethod
    def from_tokens(cls, docs: Iterable[Sequence[str]], vocab: Sequence[str] | None = None) -> "TokenSequences":
        """Pack documents given as token strings.

        Without ``vocab``, ids are given in order of first occurrence (deterministic, whatever the hash seed).
        With ``vocab``, a token outside it raises :class:`TokembedError` naming it.
        """
        index: dict[str, int] = {} if vocab is None else {t: i for i, t in enumerate(vocab)}
        grow = vocab is None
        ids: list[int] = []
        offsets = [0]
        for d, doc in enumerate(docs):
            if isinstance(doc, str):
                raise TokembedError(f"token sequences: document {d} is a str; give each document as a list of "
                                    "tokens (or pass raw documents to a component that splits them)")
            for tok in doc:
                i = index.get(tok)
                if i is None:
                    if not grow:
                        raise TokembedError(f"token sequences: document {d} holds {tok!r}, which is not in the "
                                            "vocabulary")
                    if not isinstance(tok, str):
                        raise TokembedError(f"token sequences: document {d} holds {tok!r}, not a str")
                    i = index[tok] = len(index)
                ids.append(i)
            offsets.append(len(ids))
        return cls(np.asarray(ids, dtype=np.int32), np.asarray(offsets, dtype=np.int64),
                   list(index) if grow else vocab)

    @classmethod
    def from_tokenizer(cls, tokenizer: Any, documents: Iterable[str], *, batch_size: int = 4096,
                       num_workers: int | None = None) -> "TokenSequences":
        """Encode ``documents`` with a fitted tokenizer (no special tokens added, no truncation) and pack the ids.

        The documents are streamed in batches of ``batch_size`` through ``tokenizer.encode_ids`` (ids only; see
        :meth:`tokembed.Tokenizer.encode_ids`), so only the ids are held. ``vocab`` is the tokenizer's vocabulary
        in id order; ``special_ids`` its special tokens.
        """
        if isinstance(documents, str):
            raise TokembedError("token sequences: documents must be an iterable of str, got one str; wrap it in a "
                                "list")
        n_vocab = tokenizer.get_vocab_size()
        vocab = [tokenizer.id_to_token(i) for i in range(n_vocab)]
        parts: list[np.ndarray] = []
        lengths: list[np.ndarray] = []
        batch: list[str] = []
        encode_ids = getattr(tokenizer, "encode_ids", None)

        def flush() -> None:
            if callable(encode_ids):
                ids, n = encode_ids(batch)
                parts.append(np.asarray(ids, dtype=np.int32))
                lengths.append(np.asarray(n, dtype=np.int64))
            else:  # a tokenizer written before encode_ids existed
                encs = tokenizer.encode_batch(batch, add_special_tokens=False, num_workers=num_workers)
                lengths.append(np.fromiter((len(e.ids) for e in encs), dtype=np.int64, count=len(encs)))
                parts.extend(e.ids for e in encs)
            batch.clear()

        for doc in documents:
            batch.append(doc)
            if len(batch) >= batch_size:
                flush()
        if batch:
            flush()
        ids = np.concatenate(parts).astype(np.int32, copy=False) if parts else np.zeros(0, np.int32)
        offsets = np.zeros(sum(len(x) for x in lengths) + 1, dtype=np.int64)
        if lengths:
            np.cumsum(np.concatenate(lengths), out=offsets[1:])
        specials = [tokenizer.token_to_id(t) for t in getattr(tokenizer, "special_tokens_", ())]
        return cls(ids, offsets, vocab, [i for i in specials if i is not None])

    @classmethod
    def open(cls, folder: str | os.PathLike) -> "TokenSequences":
        """Map the token corpus that ``tokembed encode`` wrote into ``folder`` (its default layout, see
        :mod:`tokembed.encoded`): ``ids`` is the memory-mapped ``uint16``/``uint32`` array itself (read-only, never
        converted whole), ``offsets`` the mapped ``int64`` array, ``vocab`` and ``special_ids`` from the folder.

        Opening reads the small files only (the manifest and the vocabulary), whatever the corpus size; ids and
        offsets are checked as a consumer reads them. The built-in consumers stream a mapped corpus, so their memory
        depends on the vocabulary and the model, not on the corpus: ``cooccurrence`` and ``glove`` (both counting
        passes), ``bow``, ``tfidf`` and ``onehot`` (fit, ``partial_fit`` and transform; the transform's output
        matrix is the one part that grows with the corpus) by bounded document ranges (:meth:`in_memory_chunks`,
        each converted to ``int32`` apart), and ``word2vec`` / ``fasttext`` in place, one training chunk per thread.
        The pages a pass has read are released (:func:`page_release`). A consumer that needs the whole corpus as
        ``int32`` in memory calls :meth:`in_memory` (what :func:`as_token_sequences` does without
        ``mapped=True``); see docs/scale.md.

        Raises
        ------
        ArtifactError
            When ``folder`` has no manifest (not an encoded corpus, or an interrupted ``tokembed encode``), holds
            another layout, or its files disagree with the manifest.
        """
        from .encoded import open_arrays

        manifest, ids, offsets, vocab = open_arrays(folder)
        out = cls.__new__(cls)
        out.ids, out.offsets, out.vocab = ids, offsets, tuple(vocab)
        out.special_ids = frozenset(int(i) for i in manifest.get("special_ids", ()))
        return out

    @property
    def is_mapped(self) -> bool:
        """True when ``ids`` is not the ``int32`` in-memory array (a corpus opened with :meth:`open`)."""
        return self.ids.dtype != np.int32 or isinstance(self.ids, np.memmap)

    def in_memory(self) -> "TokenSequences":
        """These documents with ``int32`` ids and ``int64`` offsets in memory (``self`` when they already are)."""
        if not self.is_mapped:
            return self
        return TokenSequences(np.asarray(self.ids, dtype=np.int32), np.asarray(self.offsets, dtype=np.int64),
                              self.vocab, self.special_ids)

    @classmethod
    def concatenate(cls, parts: Sequence["TokenSequences"]) -> "TokenSequences":
        """The documents of ``parts`` in order; every part must have the same vocabulary."""
        if not parts:
            raise TokembedError("token sequences: nothing to concatenate")
        vocab = parts[0].vocab
        if any(p.vocab != vocab for p in parts[1:]):
            raise TokembedError("token sequences: the parts have different vocabularies")
        ids = np.concatenate([p.ids for p in parts])
        starts = np.cumsum([0] + [p.ids.size for p in parts[:-1]])
        offsets = np.concatenate([[0]] + [p.offsets[1:] + s for p, s in zip(parts, starts)])
        return cls(ids, offsets, vocab, frozenset().union(*(p.special_ids for p in parts)))

    # -- reading --------------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        """Number of documents."""
        return self.offsets.size - 1

    @property
    def n_tokens(self) -> int:
        """Number of tokens over all documents."""
        return int(self.ids.size)

    @property
    def vocab_size(self) -> int:
        """``len(vocab)``: one more than the largest id that may occur."""
        return len(self.vocab)

    def __getitem__(self, i: int) -> np.ndarray:
        """The ids of document ``i`` (a read-only view; int32, or the file's uint16/uint32 for a mapped corpus)."""
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"document {i} of {n}")
        i %= n
        view = self.ids[self.offsets[i]:self.offsets[i + 1]]
        view.flags.writeable = False
        return view

    def __iter__(self) -> Iterator[np.ndarray]:
        for i in range(len(self)):
            yield self[i]

    def tokens(self, i: int) -> list[str]:
        """The token strings of document ``i``."""
        return [self.vocab[j] for j in self[i].tolist()]

    def to_tokens(self) -> list[list[str]]:
        """Every document as a list of token strings (for small inputs and tests)."""
        return [self.tokens(i) for i in range(len(self))]

    def lengths(self) -> np.ndarray:
        """Tokens per document, int64 (n_docs,)."""
        return np.diff(self.offsets)

    def counts(self) -> np.ndarray:
        """Occurrences of each id over the corpus, int64 (vocab_size,).

        Counted in place by a Numba kernel over consecutive slices of :data:`READ_TOKENS` ids, never converted (a
        ``numpy.bincount`` would copy them as int64); a mapped file's pages are released after each slice
        (:func:`page_release`). A mapped corpus's ids and offsets are checked as they
        are read (``TokenSequences.open`` reads neither).

        Raises
        ------
        TokembedError
            When an id is outside ``[0, vocab_size)`` or the offsets decrease (a damaged encoded folder).
        """
        from ._id_kernels import count_ids  # Numba is loaded when a corpus is first counted, not on import

        total = np.zeros(len(self.vocab), np.int64)
        ids, release = self.ids.view(np.ndarray), page_release(self.ids)
        ids.flags.writeable = False  # a plain read-only view, mapped or not: one compiled kernel per dtype
        for lo in range(0, int(ids.size), READ_TOKENS):
            hi = min(int(ids.size), lo + READ_TOKENS)
            bad = int(count_ids(ids, lo, hi, total))
            release(lo, hi)
            if bad >= 0:
                raise _outside(bad, total.size)
        if self.is_mapped:
            self._check_offsets()
        return total

    def _check_offsets(self) -> None:
        """Raise TokembedError when a mapped corpus's offsets decrease somewhere (its ends are checked when it is
        opened), read in slices with pages released."""
        offsets, release = self.offsets, page_release(self.offsets)
        for lo in range(0, max(int(offsets.size) - 1, 0), READ_TOKENS):
            hi = min(int(offsets.size), lo + READ_TOKENS + 1)
            decreasing = bool(np.any(np.diff(offsets[lo:hi]) < 0))
            release(lo, hi)
            if decreasing:
                raise TokembedError("token sequences: the document offsets decrease (the encoded corpus's offsets.npy "
                                    "was changed): offsets must start at 0, never decrease and end at the number of "
                                    "ids")

    def slice(self, start: int, stop: int) -> "TokenSequences":
        """Documents ``start`` to ``stop`` (exclusive) as a new object sharing the vocabulary (ids are an ``int32``
        copy in memory, also when ``self`` is mapped)."""
        n = len(self)
        start, stop = max(0, min(start, n)), max(0, min(stop, n))
        stop = max(stop, start)
        lo, hi = int(self.offsets[start]), int(self.offsets[stop])
        part = self.ids[lo:hi]
        if part.dtype != np.int32 and part.size and int(part.max()) >= len(self.vocab):  # before int32 wraps it
            raise _outside(int(part.max()), len(self.vocab))
        return TokenSequences(part.astype(np.int32), self.offsets[start:stop + 1] - lo, self.vocab, self.special_ids)

    def chunks(self, n_docs: int) -> Iterator["TokenSequences"]:
        """Consecutive pieces of at most ``n_docs`` documents (for ``partial_fit`` and bounded memory)."""
        if n_docs < 1:
            raise TokembedError(f"token sequences: chunk size must be >= 1, got {n_docs}")
        for start in range(0, len(self), n_docs):
            yield self.slice(start, start + n_docs)

    def id_chunks(self, max_tokens: int | None = None) -> Iterator[tuple[int, int]]:
        """Document ranges ``(start, stop)`` in order, each holding at most ``max_tokens`` ids (default
        :data:`CHUNK_TOKENS`; or one document, when a single document is longer): the unit in which a consumer of a
        mapped corpus reads ``ids[offsets[start]:offsets[stop]]`` and converts it to ``int32``, so its memory stays
        bounded whatever the corpus size. Every document is in exactly one range; an empty corpus gives no range.

        Raises
        ------
        TokembedError
            If ``max_tokens < 1``.
        """
        if max_tokens is None:
            max_tokens = CHUNK_TOKENS
        if max_tokens < 1:
            raise TokembedError(f"token sequences: max_tokens must be >= 1, got {max_tokens}")
        n = len(self)
        start = 0
        while start < n:
            limit = int(self.offsets[start]) + int(max_tokens)
            stop = int(np.searchsorted(self.offsets, limit, side="right")) - 1
            stop = min(max(stop, start + 1), n)
            yield start, stop
            start = stop

    def in_memory_chunks(self, max_tokens: int | None = None) -> Iterator["TokenSequences"]:
        """The documents of each range of :meth:`id_chunks`, in order, as in-memory :class:`TokenSequences` (ids
        converted to an ``int32`` copy, offsets from 0, the same ``vocab`` object and special ids): how a consumer
        streams a mapped corpus, holding one chunk (at most ``max_tokens`` ids, or one longer document) at a time.

        Raises
        ------
        TokembedError
            If ``max_tokens < 1``, or a chunk read from the map holds an id outside the vocabulary (a damaged
            file).
        """
        release_ids, release_offsets = page_release(self.ids), page_release(self.offsets)
        for start, stop in self.id_chunks(max_tokens):
            part = self.slice(start, stop)
            release_ids(int(self.offsets[start]), int(self.offsets[stop]))
            release_offsets(start, stop + 1)
            yield part

    def __repr__(self) -> str:
        return f"TokenSequences({len(self)} documents, {self.n_tokens} tokens, vocabulary of {len(self.vocab)})"


def _outside(bad: int, n_vocab: int) -> TokembedError:
    """The error of an id read from a mapped corpus that is not below its vocabulary size."""
    return TokembedError(f"token sequences: id {bad} is outside the vocabulary [0, {n_vocab}) (the encoded corpus "
                         "does not match its vocabulary)")


def as_token_sequences(X: Any, what: str = "input", *, mapped: bool = False) -> TokenSequences:
    """``X`` as :class:`TokenSequences`: returned as is, or packed from an iterable of token lists.

    A mapped corpus (from :meth:`TokenSequences.open`, ids ``uint16``/``uint32`` on disk) is read into memory as
    ``int32`` unless ``mapped=True``: a consumer that converts the ids chunk by chunk (see
    :meth:`TokenSequences.id_chunks` and :meth:`TokenSequences.in_memory_chunks`) passes ``mapped=True`` and never
    holds the whole corpus. The built-ins that do: ``cooccurrence``, ``glove``, ``bow``, ``tfidf``, ``onehot``,
    ``word2vec`` and ``fasttext``.

    Raises
    ------
    TokembedError
        If ``X`` is a ``str``, or holds a document that is a ``str`` (raw text must be split first), or a token
        that is not a ``str``.
    """
    if isinstance(X, TokenSequences):
        return X if mapped else X.in_memory()
    if X is None:
        raise TokembedError(f"{what}: expected documents as token sequences, got None")
    if isinstance(X, str):
        raise TokembedError(f"{what}: expected documents as token sequences, got one str")
    if hasattr(X, "shape") and len(getattr(X, "shape", ())) == 2:  # scipy.sparse or a 2-D ndarray
        raise TokembedError(f"{what}: expected documents as token sequences, got a {X.shape[0]} x {X.shape[1]} "
                            "matrix (a vectorizer that reads documents cannot follow one that outputs a matrix)")
    return TokenSequences.from_tokens(X)


#: The most a page fault in a file mapping maps at once on Linux x86-64: a PMD-sized page-cache folio (2 MiB).
_MAP_BLOCK = 1 << 21


def page_release(arr: np.ndarray) -> Callable[[int, int], None]:
    """``release(lo, hi)``: drop this process's resident pages of ``arr[lo:hi]`` when ``arr`` is a read-only
    ``numpy.memmap`` of a file (``madvise(MADV_DONTNEED)``); a no-op otherwise. The range is widened to the
    :data:`_MAP_BLOCK` blocks it touches: at a page fault Linux maps more than the page (the cached pages of a
    64 KiB block around it, or a whole large folio of the page cache, up to 2 MiB on ext4), and pages mapped that
    way before a range that was already released would otherwise stay (measured: 10 of a 20 MB file's MB).

    A mapped file's pages count in the process's RSS once read, so without this a pass over a mapped corpus would
    make RSS grow to the file's size, though nothing is copied. The pages stay in the system's page cache; reading
    them again (the next epoch, or a neighbouring chunk in another thread) maps them back, so releasing a page
    another thread still reads is safe.
    """
    mm = getattr(arr, "_mmap", None) if isinstance(arr, np.memmap) else None
    if mm is None or arr.flags.writeable or not hasattr(mm, "madvise") or not hasattr(mmap, "MADV_DONTNEED"):
        return lambda lo, hi: None
    base = np.frombuffer(mm, np.uint8)
    start = arr.ctypes.data - base.ctypes.data  # where arr[0] lies in the mapping
    del base  # no buffer export left open on the mapping
    size, item, page = len(mm), arr.itemsize, max(mmap.PAGESIZE, _MAP_BLOCK)

    def release(lo: int, hi: int) -> None:
        a = (start + lo * item) // page * page
        b = min(size, -(-(start + hi * item) // page) * page)
        if b > a:
            try:
                mm.madvise(mmap.MADV_DONTNEED, a, b - a)
            except OSError:  # advice only: a system that refuses it keeps the pages, nothing else changes
                pass

    return release
