"""The fastText / word2vec trainer behind both embedders: vocabulary, chunk plan, tables, threads, progress.

:func:`build_vocabulary` counts the input ids slice by slice (``TokenSequences.counts``) and keeps the frequent tokens
(special ids aside), count-descending with ties broken by the key; :func:`plan_corpus` reads the input once more
and plans chunks of about :data:`CHUNK_TOKENS` kept tokens; :func:`train` runs the Numba kernel of ``_kernels.py``
over the chunks in ``workers`` threads that share the matrices without locks (Hogwild), with a tqdm bar that shows
words per second per thread. Each task rewrites its own chunk as vocabulary indices (:meth:`Corpus.chunk`), so the
corpus is never copied whole: a memory-mapped corpus (``TokenSequences.open``) is read where it lies, and the
memory of a fit depends on the vocabulary and the model, not on the corpus (the plan takes 16 bytes per chunk).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from tokembed.errors import EmptyVocabularyError, TokembedError
from tokembed.sequences import READ_TOKENS, TokenSequences, page_release

from . import _kernels_corpus as CK
from . import _kernels as K

#: Longest piece of a document the trainer sees; longer documents are cut (gensim's MAX_WORDS_IN_BATCH: 10,000).
MAX_PIECE = 10_000
#: Tokens per chunk: the unit of work a thread takes, and the granularity of the progress bar and learning rate.
CHUNK_TOKENS = 20_000
#: fastText's end-of-sentence word: it gets no character n-grams (``Dictionary::initNgrams``).
EOS = "</s>"


@dataclass
class Vocabulary:
    """The trained words: ``words[i]`` has count ``counts[i]`` (non-increasing; ties in key order)."""

    words: list[str]
    counts: np.ndarray  # int64 (V,)
    token_map: np.ndarray  # int32 (len(seqs.vocab),): input id -> word index, or -1
    n_tokens: int  # tokens of the input, special ids aside (fastText's ntokens)
    n_dropped: int  # distinct tokens below min_count or beyond max_vocab


def build_vocabulary(seqs: TokenSequences, min_count: int, max_vocab: int | None, who: str) -> Vocabulary:
    """Words of ``seqs`` with at least ``min_count`` occurrences, most frequent first (ties by key), at most
    ``max_vocab`` of them.

    Special ids (``seqs.special_ids``) are never words. Ids whose strings are equal are counted as one word.

    Raises
    ------
    EmptyVocabularyError
        When no token reaches ``min_count``.
    TokembedError
        When an id is outside the vocabulary or the offsets decrease (a damaged encoded folder; see
        :meth:`tokembed.sequences.TokenSequences.counts`).
    """
    counts = seqs.counts()  # ids and offsets of a mapped corpus checked as read, pages released
    for i in seqs.special_ids:
        counts[i] = 0
    n_tokens = int(counts.sum())
    vocab = seqs.vocab
    present = np.flatnonzero(counts)
    by_key: dict[str, int] = {}
    merged: dict[str, int] = {}
    for i in present.tolist():
        key = vocab[i]
        if key in merged:
            merged[key] += int(counts[i])
        else:
            merged[key] = int(counts[i])
            by_key[key] = i
    kept = [(c, k) for k, c in merged.items() if c >= min_count]
    kept.sort(key=lambda ck: (-ck[0], ck[1]))
    n_dropped = len(merged) - len(kept)
    if max_vocab is not None and len(kept) > max_vocab:
        n_dropped += len(kept) - max_vocab
        del kept[max_vocab:]
    if not kept:
        most = max(merged.values(), default=0)
        raise EmptyVocabularyError(
            f"{who}: no token occurs at least min_count={min_count} times ({len(merged):,} distinct tokens, the most "
            f"frequent {most:,} times); lower min_count or give more text")
    words = [k for _, k in kept]
    index = {k: j for j, k in enumerate(words)}
    token_map = np.full(len(vocab), -1, np.int32)
    if len(merged) == len(present):  # every string once: the usual case
        for k, j in index.items():
            token_map[by_key[k]] = j
    else:
        for i in present.tolist():
            j = index.get(vocab[i])
            if j is not None:
                token_map[i] = j
    return Vocabulary(words, np.array([c for c, _ in kept], np.int64), token_map, n_tokens, n_dropped)


@dataclass
class Corpus:
    """The input corpus as the trainer reads it: the ids where they are, and a plan of chunks.

    The trained corpus is the input with tokens outside the vocabulary (and special tokens) removed, so that the
    words around them become neighbours (gensim and fastText do the same), empty documents dropped, and documents
    longer than :data:`MAX_PIECE` kept tokens cut into pieces of that length (windows do not cross a cut). Chunk
    ``c`` holds the input tokens ``starts[c] .. starts[c + 1] - 1``; :meth:`chunk` rewrites them.
    """

    ids: np.ndarray  # the input ids, read-only: int32 in memory, or the mapped uint16 / uint32 array
    offsets: np.ndarray  # int64 (n_docs + 1,): the input documents (mapped or in memory)
    token_map: np.ndarray  # int32 (len(seqs.vocab),): input id -> word index, or -1
    starts: np.ndarray  # int64 (n_chunks + 1,): where each chunk starts in the input; the last is n_tokens
    docs: np.ndarray  # int64 (n_chunks,): the input document that holds starts[c]
    n_tokens: int  # kept tokens: the tokens trained on per epoch, before subsampling
    n_pieces: int  # pieces of the trained corpus
    longest: int  # kept tokens of the longest piece
    max_piece: int = MAX_PIECE
    release_ids: Callable[[int, int], None] = field(default=lambda lo, hi: None, repr=False)
    release_offsets: Callable[[int, int], None] = field(default=lambda lo, hi: None, repr=False)

    @property
    def n_chunks(self) -> int:
        return int(self.docs.size)

    def chunk(self, c: int) -> tuple[np.ndarray, np.ndarray]:
        """Chunk ``c`` as vocabulary indices: ``(ids int32 (n,), pieces int64 (n_pieces + 1,))``, a new pair of
        arrays of about :data:`CHUNK_TOKENS` tokens, whatever the corpus size. The mapped pages it read are then
        released (see :func:`page_release`)."""
        lo, hi = int(self.starts[c]), int(self.starts[c + 1])
        out = CK.remap_range(self.ids, self.offsets, lo, hi, self.docs[c], self.token_map, self.max_piece)
        self.release_ids(lo, hi)
        last = int(self.docs[c + 1]) if c + 1 < self.n_chunks else int(self.offsets.size) - 2
        self.release_offsets(int(self.docs[c]), last + 2)
        return out

    def pieces(self) -> list[int]:
        """Kept tokens of every piece, in order (for tests and small corpora: it reads the whole corpus)."""
        return [int(n) for c in range(self.n_chunks) for n in np.diff(self.chunk(c)[1])]


def plan_corpus(seqs: TokenSequences, token_map: np.ndarray, chunk_tokens: int = CHUNK_TOKENS,
                max_piece: int = MAX_PIECE, read_tokens: int = READ_TOKENS) -> Corpus:
    """Read the ids once, in slices of ``read_tokens``, and plan the training chunks.

    Chunk boundaries fall at the first piece that starts at or after each multiple of ``chunk_tokens`` kept tokens,
    so a chunk holds whole pieces; they depend only on the documents, not on how the input is stored. Memory: the
    plan (16 bytes per chunk), whatever the corpus size; a mapped corpus is read in place.
    """
    ids, offsets = _readonly(seqs.ids), _readonly(seqs.offsets)
    release_ids, release_offsets = page_release(seqs.ids), page_release(seqs.offsets)
    state = np.array([0, -1, 0, 0, chunk_tokens, 0, 0], np.int64)
    starts: list[np.ndarray] = [np.zeros(1, np.int64)]
    docs: list[np.ndarray] = [np.zeros(1, np.int64)]
    n = int(ids.size)
    for lo in range(0, n, read_tokens):
        hi = min(n, lo + read_tokens)
        cap = (hi - lo) // chunk_tokens + 2
        found_starts, found_docs = np.empty(cap, np.int64), np.empty(cap, np.int64)
        first_doc = int(state[0])
        k = CK.plan_chunks(ids, offsets, lo, hi, token_map, max_piece, chunk_tokens, state, found_starts,
                          found_docs)
        release_ids(lo, hi)
        release_offsets(first_doc, int(state[0]) + 2)
        starts.append(found_starts[:k])
        docs.append(found_docs[:k])
    n_pieces = int(state[5])
    if n_pieces == 0:  # nothing kept: no chunk
        starts, docs = [], []
    starts.append(np.array([n], np.int64))
    return Corpus(ids, offsets, token_map, np.concatenate(starts), np.concatenate(docs or [np.zeros(0, np.int64)]),
                  int(state[3]), n_pieces, int(state[6]), max_piece, release_ids, release_offsets)


def warm_corpus_kernels() -> None:
    """Compile (or load from Numba's cache) the corpus kernels for the ids of a mapped corpus (uint16, uint32),
    which the in-memory warm-up (int32) does not reach."""
    for dtype in (np.uint16, np.uint32):
        seqs = TokenSequences.__new__(TokenSequences)  # as TokenSequences.open gives them: ids kept as dtype
        seqs.ids, seqs.offsets = np.array([0, 1, 0], dtype), np.array([0, 3], np.int64)
        seqs.vocab, seqs.special_ids = ("a", "b"), frozenset()
        seqs.counts()  # the counting kernel, for this dtype
        plan_corpus(seqs, np.array([0, 1], np.int32)).chunk(0)


def _readonly(arr: np.ndarray) -> np.ndarray:
    """A read-only plain-ndarray view (of a ``numpy.memmap`` too): the kernels then compile one signature per
    dtype, whether the caller's arrays are writeable or not."""
    view = arr.view(np.ndarray)
    view.flags.writeable = False
    return view


def keep_thresholds(counts: np.ndarray, sample: float) -> np.ndarray:
    """Subsampling: word ``i`` is kept with probability ``min(1, (sqrt(c_i / (s N)) + 1) s N / c_i)``.

    That is word2vec.c's and gensim's formula (``s = sample``, ``N`` = the total count of the vocabulary's words),
    equal to ``sqrt(s / f) + s / f`` with ``f = c / N``, fastText's form; fastText takes ``N`` over every token
    read, rare ones included, and calls ``s`` ``-t``. Returns uint64 (V,) thresholds on 32-bit draws (``2**32``:
    always kept; ``sample = 0``: no subsampling).
    """
    full = np.uint64(1 << 32)
    if sample <= 0:
        return np.full(counts.size, full, np.uint64)
    thr = sample * float(counts.sum())
    c = counts.astype(np.float64)
    p = (np.sqrt(c / thr) + 1.0) * (thr / c)
    return np.where(p >= 1.0, float(1 << 32), np.floor(p * float(1 << 32))).astype(np.uint64)


def mix_seed(seed: int, task: int) -> np.uint64:
    """The seed of chunk ``task`` (epoch * n_chunks + chunk): SplitMix64's finalizer of the pair."""
    mask = (1 << 64) - 1
    z = (seed * 0x9E3779B97F4A7C15 + task * 0xD1B54A32D192ED03 + 0x632BE59BD9B4E019) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    return np.uint64(z ^ (z >> 31))


@dataclass
class Tables:
    """Everything the kernel reads besides the corpus and the matrices."""

    row_offsets: np.ndarray
    rows: np.ndarray
    keep_thr: np.ndarray
    alias_thr: np.ndarray
    alias_idx: np.ndarray
    hs_offsets: np.ndarray
    hs_points: np.ndarray
    hs_codes: np.ndarray
    sigmoid: np.ndarray


def word_bytes(words: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The UTF-8 bytes of ``words`` concatenated (uint8) and their offsets (int64 (V + 1,))."""
    encoded = [w.encode("utf-8", "surrogatepass") for w in words]
    offsets = np.zeros(len(encoded) + 1, np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    return np.frombuffer(b"".join(encoded), np.uint8).copy(), offsets


def subword_rows(words: list[str], minn: int, maxn: int, bucket: int) -> tuple[np.ndarray, np.ndarray]:
    """Each word's input rows (its own, then its n-grams'): ``(row_offsets int64 (V + 1,), rows int32)``."""
    data, offsets = word_bytes(words)
    skip = words.index(EOS) if EOS in words else -1
    return K.ngram_rows(data, offsets, int(minn), int(maxn), int(max(bucket, 1)), int(skip))


def make_tables(vocab: Vocabulary, *, minn: int, maxn: int, bucket: int, sample: float, hs: bool,
                ns_exponent: float) -> Tables:
    row_offsets, rows = subword_rows(vocab.words, minn, maxn, bucket)
    counts = vocab.counts
    if hs:
        hs_offsets, hs_points, hs_codes = K.huffman_paths(counts)
    else:
        hs_offsets, hs_points, hs_codes = np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.uint8)
    weights = counts.astype(np.float64) ** float(ns_exponent)
    alias_thr, alias_idx = K.alias_table(weights)
    return Tables(row_offsets, rows, keep_thresholds(counts, sample), alias_thr, alias_idx, hs_offsets, hs_points,
                  hs_codes, K.sigmoid_table())


def init_matrices(n_words: int, n_rows: int, dim: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``syn0`` (n_rows, dim) uniform in [-1/dim, 1/dim) and ``syn1`` (n_words, dim) zero, both float32.

    As fastText and gensim initialise them; drawn with ``numpy.random.default_rng(seed)`` (PCG64) in place.
    """
    syn0 = np.empty((n_rows, dim), np.float32)
    rng = np.random.default_rng(seed)
    rng.random(out=syn0, dtype=np.float32)
    syn0 *= np.float32(2.0 / dim)
    syn0 -= np.float32(1.0 / dim)
    syn1 = np.zeros((n_words, dim), np.float32)
    return syn0, syn1


class _Progress:
    """A tqdm bar over the tokens to read (all epochs), with words/s per thread; hidden when stderr is no terminal."""

    def __init__(self, total: int, workers: int, show: bool, desc: str):
        self.bar = None
        self.workers = workers
        self.start = time.perf_counter()
        self.shown = 0
        if show:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, desc=desc, unit=" words", unit_scale=True, mininterval=0.5, leave=False,
                            disable=None, smoothing=0.1)

    @staticmethod
    def rate(done: int, elapsed: float, workers: int) -> str:
        """The bar's postfix: ``"12,345 words/s/thread"`` (fastText's measure: words read per second per thread)."""
        return f"{done / elapsed / workers:,.0f} words/s/thread" if elapsed > 0 else "- words/s/thread"

    def update(self, done: int) -> None:
        if self.bar is None:
            return
        self.bar.update(done - self.shown)
        self.shown = done
        self.bar.set_postfix_str(self.rate(done, time.perf_counter() - self.start, self.workers), refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def train(corpus: Corpus, syn0: np.ndarray, syn1: np.ndarray, tables: Tables, *, sg: bool,
          negative: int, hs: bool, window: int, shrink_windows: bool, alpha: float, min_alpha: float, epochs: int,
          workers: int, seed: int, show_progress: bool, desc: str) -> dict[str, Any]:
    """Run ``epochs`` passes over the corpus in ``workers`` threads; returns counts and the time taken.

    Work is cut into the chunks of ``corpus`` (about :data:`CHUNK_TOKENS` tokens), taken in order (epoch by epoch)
    by whichever thread is free, which rewrites its chunk as vocabulary indices (:meth:`Corpus.chunk`) and trains
    on it; task ``t`` (``epoch * n_chunks + chunk``) draws its random numbers from :func:`mix_seed` ``(seed, t)``,
    and its learning rate from the tokens read by all threads before it started. With one worker everything runs
    in the calling thread and the result depends only on the documents and ``seed`` (not on whether the corpus is
    memory-mapped).
    """
    n_chunks = corpus.n_chunks
    n_tasks = n_chunks * epochs
    total_words = corpus.n_tokens * epochs
    lock = threading.Lock()
    state = {"next": 0, "read": 0, "trained": 0, "error": None, "stop": False}
    args_tail = (tables.row_offsets, tables.rows, tables.keep_thr, tables.alias_thr, tables.alias_idx,
                 tables.hs_offsets, tables.hs_points, tables.hs_codes, tables.sigmoid, bool(sg), int(negative),
                 bool(hs), int(window), bool(shrink_windows), float(alpha), float(min_alpha))

    def run_one() -> bool:
        with lock:
            if state["stop"] or state["next"] >= n_tasks:
                return False
            task = state["next"]
            state["next"] += 1
            before = state["read"]
        ids, pieces = corpus.chunk(task % n_chunks)
        n_read, n_trained = K.train_chunk(ids, pieces, 0, pieces.size - 1, syn0, syn1, *args_tail,
                                          np.int64(before), np.int64(max(total_words, 1)), mix_seed(seed, task))
        with lock:
            state["read"] += int(n_read)
            state["trained"] += int(n_trained)
        return True

    def worker() -> None:
        try:
            while run_one():
                pass
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            with lock:
                state["error"] = exc
                state["stop"] = True

    progress = _Progress(total_words, workers, show_progress, desc)
    t0 = time.perf_counter()
    try:
        if workers == 1:
            while run_one():
                progress.update(state["read"])
        else:
            threads = [threading.Thread(target=worker, name=f"{desc}-{i}", daemon=True) for i in range(workers)]
            for t in threads:
                t.start()
            try:
                while any(t.is_alive() for t in threads):
                    threads[0].join(0.25) if threads[0].is_alive() else time.sleep(0.05)
                    progress.update(state["read"])
            except BaseException:
                with lock:
                    state["stop"] = True
                for t in threads:
                    t.join()
                raise
            if state["error"] is not None:
                raise state["error"]
        progress.update(state["read"])
    finally:
        progress.close()
    elapsed = time.perf_counter() - t0
    return {"words_read": state["read"], "words_trained": state["trained"], "seconds": elapsed}
