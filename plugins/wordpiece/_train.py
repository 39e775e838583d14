"""WordPiece training: word counts, base symbols, the merge loop, and the vocabulary of merged strings.

The merge loop is ``tokembed.plugins._subword`` (``learn_wordpiece_merges`` for the likelihood criterion,
``learn_bpe_merges`` for frequency): an incremental Numba kernel over words packed as CSR of base-symbol ids.
This module turns word counts into that input and the merges it returns into token strings.

Base symbols and the tie rule
    Every character of the alphabet has a word-initial symbol (the character) and, when it occurs after the
    first position of a word, a continuation symbol (``##`` + character), as in Hugging Face's trainer. Ids:
    special tokens first, then initial symbols in code-point order, then continuation symbols in code-point
    order; merge ``k`` creates the next id. Ties of the score are broken by the higher pair count, then by the
    smallest ``(left id, right id)``, the rule of tokembed's BPE: the result never depends on input order.

A merged symbol is ``left + right`` with ``right``'s prefix removed (``"un" + "##able" -> "unable"``,
``"##a" + "##b" -> "##ab"``). Two merges may spell the same string (``"a" + "##bc"`` and ``"ab" + "##c"``);
the kernel gives them different ids, and the vocabulary keeps the string once (its first merge).
"""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Callable, Iterable, Iterator, NamedTuple

import numpy as np

from tokembed.errors import CorpusError
from tokembed.text import from_codepoints

from ._charmap import CharMap, codepoints
from ._encode import _cut

__all__ = ["count_words", "normalized_chunks", "base_symbols", "learn_vocabulary", "Learned"]

#: Characters of corpus text normalized per kernel call.
CHUNK_CHARS = 1 << 22


def normalized_chunks(docs: Iterable[str], cmap: CharMap, chunk_chars: int = CHUNK_CHARS) -> Iterator[str]:
    """The documents, normalized and split, as strings of pieces each followed by one space.

    Documents are joined by a space (which always separates words) into chunks of about ``chunk_chars``
    characters; a longer document is cut at a space or newline. Read lazily: about one chunk in memory at a time.

    Raises
    ------
    CorpusError
        If a document is not a str.
    """
    it = iter(docs)
    done = 0
    parts: list[str] = []
    size = 0
    while True:
        batch = list(itertools.islice(it, 4096))
        if batch:
            try:
                parts.append(" ".join(batch))
            except TypeError:
                bad = next(k for k, doc in enumerate(batch) if not isinstance(doc, str))
                raise CorpusError(f"wordpiece: documents must be str, got {type(batch[bad]).__name__} at index "
                                  f"{done + bad}") from None
            done += len(batch)
            size += len(parts[-1]) + 1
        if parts and (size >= chunk_chars or not batch):
            text = " ".join(parts) if len(parts) > 1 else parts[0]
            parts, size = [], 0
            start = 0
            while len(text) - start > chunk_chars:  # a very long document: cut where no word is
                cut = _cut(text, start + chunk_chars)
                if cut < 0:
                    break
                yield _normalize(text[start:cut], cmap)
                start = cut
            yield _normalize(text[start:] if start else text, cmap)
        if not batch:
            return


def _normalize(text: str, cmap: CharMap) -> str:
    from . import _kernels as K  # imports numba: not at module level, so registering the plugin stays light

    cps = codepoints(text)
    cmap.prepare(text, cps)
    table, exp_off, exp_vals, max_exp = cmap.arrays()
    room = 2 * cps.shape[0] + 16
    while True:
        out = np.empty(room, np.uint32)
        n = K.pieces_text(cps, table, exp_off, exp_vals, out)
        if n != K.NEED_ROOM:
            return from_codepoints(out[:n])
        room = 2 * room + 2 * max_exp * cps.shape[0]


def count_words(docs: Iterable[str], cmap: CharMap, handle_chinese_chars: bool
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Count the normalized pieces (words, punctuation marks, CJK ideographs) of ``docs``, streamed once.

    The one place training counts words. Normalization and splitting are this plugin's kernels
    (:func:`normalized_chunks`); the counting is :func:`tokembed.text.fast.count_words`, partial counts over
    chunks of the corpus merged in order, on two threads. The pieces of the normalized text are re-found with the
    ``bert`` pre-tokenizer, which gives back exactly our pieces; without ``handle_chinese_chars``, where ``bert``
    would isolate CJK ideographs inside words, with ``whitespace_split``, which differs only for U+001C..U+001F
    inside a word (possible only with ``clean_text=False``). Without the fast counter, a ``Counter`` per chunk.

    Returns
    -------
    codepoints : ndarray of int64, shape (total,)
    offsets : ndarray of int64, shape (n_words + 1,)
    counts : ndarray of int64, shape (n_words,)
        Distinct piece ``w`` is ``codepoints[offsets[w]:offsets[w + 1]]`` and occurs ``counts[w]`` times.
    """
    chunks = normalized_chunks(docs, cmap)
    try:
        from tokembed.text.fast import count_words as fast_count_words
    except ImportError:  # the fast counter is not part of this installation
        fast_count_words = None
    if fast_count_words is not None:
        wc = fast_count_words(chunks, "bert" if handle_chinese_chars else "whitespace_split")
        return wc.codepoints.astype(np.int64), wc.offsets.astype(np.int64), wc.counts.astype(np.int64)
    total: Counter = Counter()
    for chunk in chunks:
        total.update(chunk.split(" "))
    total.pop("", None)
    words = list(total)
    lengths = np.fromiter(map(len, words), np.int64, len(words))
    offsets = np.zeros(len(words) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    cps = codepoints("".join(words)).astype(np.int64)
    return cps, offsets, np.fromiter(total.values(), np.int64, len(words))


def base_symbols(cps: np.ndarray, offsets: np.ndarray, counts: np.ndarray, limit_alphabet: int | None, n_special: int
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Words as base-symbol ids.

    The alphabet is every character of the words, or with ``limit_alphabet`` the most frequent ones (count of a
    character = sum of the counts of the words it occurs in, per occurrence; ties keep the smaller code point).
    A character left out of the alphabet splits its word there; whether a character is word-initial is decided
    by its position in the original word (as Hugging Face's trainer does).

    Returns
    -------
    symbols : ndarray of int32, shape (n_symbols,)
    sym_offsets : ndarray of int64, shape (n_seqs + 1,)
    seq_counts : ndarray of int64, shape (n_seqs,)
        The symbol sequences to merge, with their counts.
    initial, continuation : ndarray of int64
        Code points of the initial symbols (ids ``n_special + i``) and of the continuation symbols (ids
        ``n_special + len(initial) + j``), each sorted.
    """
    lengths = np.diff(offsets)
    word_of = np.repeat(np.arange(lengths.size), lengths)
    is_first = np.zeros(cps.size, bool)
    is_first[offsets[:-1][lengths > 0]] = True
    chars, inverse = np.unique(cps, return_inverse=True)
    weights = counts[word_of]
    if counts.size and int(counts.max()) * max(cps.size, 1) < 2**53:
        weight = np.rint(np.bincount(inverse, weights=weights.astype(np.float64), minlength=chars.size))
    else:  # exact integer sums for astronomically large counts
        weight = np.zeros(chars.size, np.int64)
        np.add.at(weight, inverse, weights)
    if limit_alphabet is not None and chars.size > limit_alphabet:
        order = np.lexsort((chars, -weight))  # most frequent first, ties by the smaller code point
        chars = np.sort(chars[order[:limit_alphabet]])
    pos = np.searchsorted(chars, cps)
    known = (pos < chars.size) & (chars[np.minimum(pos, max(chars.size - 1, 0))] == cps) if chars.size else \
        np.zeros(cps.size, bool)
    cont_chars = np.unique(cps[known & ~is_first])
    cont_pos = np.searchsorted(cont_chars, cps)
    sym = np.where(is_first, n_special + pos, n_special + chars.size + cont_pos)
    starts_seq = is_first.copy()
    starts_seq[1:] |= ~known[:-1]
    keep = np.flatnonzero(known)
    new_start = starts_seq[keep]
    seq_of = np.cumsum(new_start) - 1
    n_seq = int(new_start.sum())
    sym_offsets = np.zeros(n_seq + 1, np.int64)
    np.cumsum(np.bincount(seq_of, minlength=n_seq), out=sym_offsets[1:])
    seq_counts = counts[word_of[keep[new_start]]] if n_seq else np.zeros(0, np.int64)
    return sym[keep].astype(np.int32), sym_offsets, seq_counts.astype(np.int64), chars, cont_chars


class Learned(NamedTuple):
    """What :func:`learn_vocabulary` learned: the vocabulary in id order, and every merge the loop made (token
    strings ``(left, right)``, in order; the last ones may lie beyond ``vocab_size``)."""

    vocab: list[str]
    merges: list[tuple[str, str]]


def learn_vocabulary(cps: np.ndarray, offsets: np.ndarray, counts: np.ndarray, *, specials: list[str],
                     vocab_size: int, min_frequency: int, limit_alphabet: int | None, prefix: str, scoring: str,
                     progress: Callable[[int, int], None] | None = None) -> Learned:
    """The vocabulary in id order: ``specials``, the base symbols, then merged strings up to ``vocab_size``.

    Parameters
    ----------
    cps, offsets, counts : ndarray
        Word counts (see :func:`count_words`).
    specials : list of str
        Special tokens, first in the vocabulary.
    vocab_size : int
        Target size, special tokens and base symbols included (the alphabet is never cut to fit).
    min_frequency : int
        Smallest pair count merged.
    limit_alphabet : int or None
    prefix : str
        Continuation prefix.
    scoring : {"likelihood", "frequency"}
    progress : callable, optional
        ``progress(done, total)`` during the merge loop.

    Returns
    -------
    Learned
        ``vocab``: distinct tokens; ``merges``: the merges made, as token strings.
    """
    from tokembed.plugins import _subword

    n_special = len(specials)
    symbols, sym_off, seq_counts, initial, cont = base_symbols(cps, offsets, counts, limit_alphabet, n_special)
    bodies = [chr(c) for c in initial.tolist()] + [chr(c) for c in cont.tolist()]
    is_cont = [False] * initial.size + [True] * cont.size
    vocab = list(specials)
    seen = set(vocab)
    for body, c in zip(bodies, is_cont):
        tok = prefix + body if c else body
        if tok not in seen:
            seen.add(tok)
            vocab.append(tok)
    need = vocab_size - len(vocab)
    if need <= 0:
        return Learned(vocab, [])
    learn = _subword.learn_wordpiece_merges if scoring == "likelihood" else _subword.learn_bpe_merges
    n_base = n_special + len(bodies)
    ask = need + need // 256 + 8  # room for merges that spell a string already in the vocabulary
    while True:
        total = ask

        def report(done: int) -> None:
            if progress is not None:
                progress(done, total)

        result = learn(symbols, sym_off, seq_counts, n_base, ask, min_frequency=min_frequency,
                       progress=report if progress is not None else None)
        new = list(vocab)
        new_seen = set(seen)
        m_bodies = list(bodies)
        m_cont = list(is_cont)
        names = [prefix + b if c else b for b, c in zip(bodies, is_cont)]
        merges = []
        for a, b in zip(result.left.tolist(), result.right.tolist()):
            body = m_bodies[a - n_special] + m_bodies[b - n_special]
            c = m_cont[a - n_special]
            m_bodies.append(body)
            m_cont.append(c)
            tok = prefix + body if c else body
            merges.append((names[a - n_special], names[b - n_special]))
            names.append(tok)
            if len(new) < vocab_size and tok not in new_seen:
                new_seen.add(tok)
                new.append(tok)
        if len(new) >= vocab_size or result.left.size < ask:
            return Learned(new, merges)
        ask += 2 * (ask - (len(new) - len(vocab))) + 16  # many repeated strings: learn more merges
