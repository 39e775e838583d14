"""BPE training: word counts as partial counts that merge, the base symbols, and the merge loop.

The merge loop itself is ``tokembed.plugins._subword.learn_bpe_merges`` (an incremental Numba kernel). This module
turns word counts into its input (words as base-symbol ids, numbered by the tie rule below) and its output (merges
of kernel ids) into a vocabulary and merges of token strings.

Tie rule (the BPE issue's): the pair with the highest count wins, then the smallest ``(left id, right id)``, where
base symbols are numbered special tokens first, then characters in code-point order, then characters carrying the
end-of-word suffix in code-point order (then, with ``continuing_subword_prefix``, prefixed characters, then
prefixed characters with the suffix), or the 256 bytes in byte order at byte level, and each merge takes the next
id when it is created. Nothing depends on input order or on a hash seed.
"""

from __future__ import annotations

import warnings
from collections import Counter
from typing import Iterable, NamedTuple

import numpy as np

from tokembed.errors import CorpusError, TokembedError, VocabularySizeWarning
from tokembed.text import repair_surrogates
from tokembed.text.normalizers import Identity, Normalizer
from tokembed.text.pre_tokenizers import Bert, PreTokenizer, WhitespaceSplit, WordPunct

from .bytelevel import BYTE_CHARS

__all__ = ["word_counts", "count_words_python", "learn_bpe", "TrainResult", "VocabularySizeWarning"]

#: Pre-tokenizers for which ``"\n"`` never belongs to a piece and always ends one: documents of a chunk can be
#: joined with ``"\n"`` and split in one call, with exactly the pieces of splitting them one by one.
_JOINABLE = (WordPunct, WhitespaceSplit, Bert)


def _clean(doc: object) -> str:
    if not isinstance(doc, str):
        raise CorpusError(f"bpe: documents must be str, got {type(doc).__name__}")
    if doc.isascii():  # O(1) for Python's compact strings
        return doc
    try:
        doc.encode("utf-8")
        return doc
    except UnicodeEncodeError:
        return repair_surrogates(doc).normalized


def word_counts(docs: Iterable[str], normalizer: Normalizer, pre_tokenizer: PreTokenizer
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Count the pre-tokenized pieces of ``docs`` (streamed once), packed as CSR over code points.

    Surrogates are repaired first (see :func:`tokembed.text.repair_surrogates`), as in encoding.
    The count is made of partial counts that merge (chunks of the corpus counted apart and added up), so memory
    holds one chunk plus the counts: the Numba counter of ``tokembed.text.fast`` when it is installed, else
    ``collections.Counter`` per chunk (:func:`count_words_python`).

    Returns
    -------
    codepoints : ndarray of int64, shape (total,)
        Code points of the distinct pieces, concatenated.
    offsets : ndarray of int64, shape (n_words + 1,)
        Piece ``w`` is ``codepoints[offsets[w]:offsets[w + 1]]``.
    counts : ndarray of int64, shape (n_words,)
        Occurrences of each piece.

    Raises
    ------
    CorpusError
        If a document is not a str.
    """
    docs = map(_clean, docs)
    try:
        from tokembed.text.fast import count_words as fast_count_words
    except ImportError:  # the fast counter is not part of this installation
        fast_count_words = None
    if fast_count_words is not None:
        wc = fast_count_words(docs, pre_tokenizer, normalizer)
        return wc.codepoints.astype(np.int64), wc.offsets.astype(np.int64), wc.counts.astype(np.int64)
    counts = count_words_python(docs, normalizer, pre_tokenizer)
    words = list(counts)
    lengths = np.fromiter(map(len, words), np.int64, len(words))
    offsets = np.zeros(len(words) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    cps = np.frombuffer("".join(words).encode("utf-32-le"), "<u4").astype(np.int64)
    return cps, offsets, np.fromiter(counts.values(), np.int64, len(words))


def count_words_python(docs: Iterable[str], normalizer: Normalizer, pre_tokenizer: PreTokenizer,
                       chunk_chars: int = 1 << 20) -> Counter:
    """Count the pieces of ``docs`` with ``collections.Counter``, in chunks of about ``chunk_chars`` characters.

    Each chunk gives a partial count; partial counts add up (``Counter.update``) to the count of the whole.
    ``docs`` must already be free of surrogates.
    """
    total: Counter = Counter()
    joinable = isinstance(normalizer, Identity) and isinstance(pre_tokenizer, _JOINABLE)
    chunk: list[str] = []
    size = 0
    for doc in docs:
        chunk.append(doc)
        size += len(doc)
        if size >= chunk_chars:
            total.update(_count_chunk(chunk, normalizer, pre_tokenizer, joinable))
            chunk, size = [], 0
    if chunk:
        total.update(_count_chunk(chunk, normalizer, pre_tokenizer, joinable))
    return total


def _count_chunk(chunk: list[str], normalizer: Normalizer, pre_tokenizer: PreTokenizer, joinable: bool) -> Counter:
    counts: Counter = Counter()
    if joinable:
        text = "\n".join(chunk)
        spans = pre_tokenizer.spans(text)
        counts.update(map(text.__getitem__, map(slice, spans[:, 0].tolist(), spans[:, 1].tolist())))
        return counts
    identity = isinstance(normalizer, Identity)
    for doc in chunk:
        text = doc if identity else normalizer.normalize_str(doc)
        counts.update(piece for piece, _ in pre_tokenizer.pre_tokenize(text))
    return counts


class TrainResult(NamedTuple):
    """What :func:`learn_bpe` learned: vocabulary (id order), merges (rank order) and each merge's pair count."""

    vocab: list[str]
    merges: list[tuple[str, str]]
    merge_counts: list[int]


def _decorate(cp: int, cls: int, prefix: str, suffix: str) -> str:
    return (prefix if cls & 2 else "") + chr(cp) + (suffix if cls & 1 else "")


def _char_words(cps: np.ndarray, offsets: np.ndarray, counts: np.ndarray, prefix: str | None, suffix: str | None,
                initial_alphabet: list[str], limit_alphabet: int | None):
    """Words as base ids (relative to the first base id), splitting words at characters left out of the alphabet.

    Returns ``(symbols, offsets, word_counts, base strings)``.
    """
    lengths = np.diff(offsets)
    word_of = np.repeat(np.arange(lengths.size), lengths)
    ends = offsets[1:]
    is_first = np.zeros(cps.size, bool)
    is_first[ends - lengths] = True
    is_last = np.zeros(cps.size, bool)
    is_last[ends - 1] = True
    # the alphabet: characters by weighted count; initial_alphabet counts as infinitely frequent (as in HF).
    # Code points are < 0x110000, so counting by index (bincount) replaces sorting them.
    weight_of = np.bincount(cps, weights=counts[word_of].astype(np.float64))
    chars = np.flatnonzero(weight_of)  # every word count is >= 1: a character that occurs has a weight > 0
    weight = weight_of[chars]
    forced = sorted({ord(c) for c in initial_alphabet})
    extra = np.setdiff1d(np.array(forced, np.int64), chars)
    chars = np.concatenate([chars, extra])
    weight = np.concatenate([weight, np.full(extra.size, np.inf)])
    weight[np.isin(chars, forced)] = np.inf
    if limit_alphabet is not None and chars.size > limit_alphabet:
        order = np.lexsort((chars, -weight))  # most frequent first, ties by smaller code point
        chars = chars[order[:limit_alphabet]]
    chars = np.sort(chars)
    index_of = np.full(max(weight_of.size, int(chars[-1]) + 1 if chars.size else 0), -1, np.int64)
    index_of[chars] = np.arange(chars.size)
    pos = index_of[cps]  # -1 for a character left out of the alphabet
    known = pos >= 0
    cls = np.zeros(cps.size, np.int64)
    if suffix:
        cls |= is_last.astype(np.int64)
    if prefix:
        cls |= (~is_first).astype(np.int64) << 1
    # decorated base symbols that occur, numbered by (class, code point) after the bare characters
    key = cls * 0x110000 + cps
    decorated = known & (cls > 0)
    deco = np.unique(key[decorated])
    n_chars = chars.size
    sym = pos
    sym[decorated] = n_chars + np.searchsorted(deco, key[decorated])
    # split words at characters outside the alphabet: a kept position starts a word if it is the first character
    # of its word or follows a dropped one
    starts_word = is_first.copy()
    starts_word[1:] |= ~known[:-1]
    keep = np.flatnonzero(known)
    new_start = starts_word[keep]
    sub_of = np.cumsum(new_start) - 1
    n_sub = int(new_start.sum())
    offsets = np.zeros(n_sub + 1, np.int64)
    np.cumsum(np.bincount(sub_of, minlength=n_sub), out=offsets[1:])
    sub_counts = counts[word_of[keep[new_start]]] if n_sub else np.zeros(0, np.int64)
    base = [chr(c) for c in chars.tolist()]
    base += [_decorate(int(k) % 0x110000, int(k) // 0x110000, prefix or "", suffix or "") for k in deco.tolist()]
    return sym[keep].astype(np.int32), offsets, sub_counts.astype(np.int64), base


def _byte_words(cps: np.ndarray, offsets: np.ndarray, counts: np.ndarray):
    """Words as their UTF-8 bytes. Returns ``(symbols, offsets, word_counts, base strings)``."""
    nbytes = 1 + (cps >= 0x80) + (cps >= 0x800) + (cps >= 0x10000)
    ends = np.zeros(cps.size + 1, np.int64)
    np.cumsum(nbytes, out=ends[1:])
    text = cps.astype("<u4").tobytes().decode("utf-32-le")
    symbols = np.frombuffer(text.encode("utf-8"), np.uint8).astype(np.int32)
    return symbols, ends[offsets], counts, list(BYTE_CHARS)


def learn_bpe(cps: np.ndarray, offsets: np.ndarray, counts: np.ndarray, *, specials: list[str], vocab_size: int,
              min_frequency: int, byte_level: bool,
              initial_alphabet: list[str], limit_alphabet: int | None, max_token_length: int | None,
              end_of_word_suffix: str | None, continuing_subword_prefix: str | None,
              show_progress: bool = True) -> TrainResult:
    """Learn BPE merges from word counts (Sennrich, Haddow & Birch 2016; GPT-2's byte level).

    Merges are learned on kernel ids (a fresh id per merge) and then written as token strings. Two merges may
    spell the same string (``a + bc`` and ``ab + c``): the string enters the vocabulary once, with the id of its
    first creation, and both merges are kept (as Hugging Face does); the vocabulary grows by one per new string
    until it reaches ``vocab_size``. A later merge whose two strings repeat an earlier merge is dropped.

    Raises
    ------
    CorpusError
        If there is no word to learn from.

    Warns
    -----
    VocabularySizeWarning
        If the vocabulary ends smaller than ``vocab_size`` (no pair left with count >= ``min_frequency``) or
        larger (the special tokens and the alphabet alone exceed it).
    """
    from tokembed.plugins._subword import learn_bpe_merges

    if cps.size == 0:
        raise CorpusError("bpe: the corpus holds no word to learn from (empty, or nothing left by the pre-tokenizer)")
    if byte_level:
        symbols, offsets, wcounts, base = _byte_words(cps, offsets, counts)
    else:
        symbols, offsets, wcounts, base = _char_words(cps, offsets, counts, continuing_subword_prefix,
                                                      end_of_word_suffix, initial_alphabet, limit_alphabet)
    n_spec = len(specials)
    names = list(specials) + base  # kernel id -> token string
    n_base = len(names)
    symbols = symbols + np.int32(n_spec)
    token_len = np.ones(n_base, np.int32)
    prefix = continuing_subword_prefix or ""
    vocab = list(names)
    tok2id = {t: i for i, t in enumerate(vocab)}
    if len(tok2id) != len(vocab):
        dup = next(t for t in specials if t in base)
        raise TokembedError(f"bpe: the special token {dup!r} is also a base symbol of the corpus; choose another")
    merges: list[tuple[str, str]] = []
    merge_counts: list[int] = []
    seen: set[tuple[str, str]] = set()
    wanted = max(vocab_size - n_base, 0)
    ask = wanted + max(16, wanted // 64)  # room for merges that repeat a string (rare): see the docstring
    done = 0
    stopped = False
    while len(vocab) < vocab_size and not stopped:
        bar = _ProgressBar(wanted, done) if show_progress else None
        try:
            result = learn_bpe_merges(symbols, offsets, wcounts, n_base, ask, min_frequency=min_frequency,
                                      token_len=token_len, max_token_length=max_token_length or 0, progress=bar)
        finally:
            if bar is not None:
                bar.close()
        stopped = result.left.size < ask
        left, right, pc = result.left.tolist(), result.right.tolist(), result.pair_count.tolist()
        for k in range(done, len(left)):
            if len(vocab) >= vocab_size:
                break
            a, b = names[left[k]], names[right[k]]
            new = a + (b[len(prefix):] if prefix and b.startswith(prefix) else b)
            names.append(new)
            if (a, b) in seen:
                continue
            seen.add((a, b))
            merges.append((a, b))
            merge_counts.append(int(pc[k]))
            if new not in tok2id:
                tok2id[new] = len(vocab)
                vocab.append(new)
        done = len(left)
        ask = done + 2 * (vocab_size - len(vocab)) + 16
    if len(vocab) < vocab_size:
        why = ("no pair is left to merge" if min_frequency <= 1 else
               f"no pair occurs at least min_frequency={min_frequency} times")
        if max_token_length is not None:
            why += f" within max_token_length={max_token_length}"
        if limit_alphabet is not None and limit_alphabet < 2 and not byte_level:
            why = f"limit_alphabet={limit_alphabet} leaves {limit_alphabet} base character{'s' * (limit_alphabet != 1)}"
        # stacklevel 4: the caller of BPETokenizer.fit or fit_counts (both call _learn, which calls this)
        warnings.warn(
            f"bpe: training stopped after {len(merges)} merges because {why}; the vocabulary has {len(vocab)} "
            f"entries, not the vocab_size={vocab_size} asked for", VocabularySizeWarning, stacklevel=4)
    elif len(vocab) > vocab_size:
        warnings.warn(
            f"bpe: the {n_spec} special tokens and {len(base)} base symbols alone exceed vocab_size={vocab_size}; "
            f"the vocabulary has {len(vocab)} entries and no merge", VocabularySizeWarning, stacklevel=4)
    return TrainResult(vocab, merges, merge_counts)


class _ProgressBar:
    """A tqdm bar over merges (hidden when stderr is not a terminal), moved by the kernel's progress callback."""

    def __init__(self, total: int, done: int):
        from tqdm.auto import tqdm

        self.total = total
        self.bar = tqdm(total=total, initial=min(done, total), desc="bpe merges", unit="merge", disable=None,
                        leave=False)

    def __call__(self, k: int) -> None:
        self.bar.update(max(0, min(k, self.total) - self.bar.n))

    def close(self) -> None:
        self.bar.close()
