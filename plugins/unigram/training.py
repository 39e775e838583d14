"""Unigram language-model training as SentencePiece does it (Kudo 2018, "Subword Regularization"; SentencePiece's
``unigram_model_trainer.cc``), over word counts.

1. Words: each document is normalized (the rule, ``remove_extra_whitespaces``), cut at spaces, and each word gets
   the ``▁`` mark in front (SentencePiece's ``SplitIntoWords``); words are counted by the shared fast counter.
2. Required characters: the most frequent characters covering ``character_coverage`` of all characters; the others
   become U+2585 (SentencePiece's unknown mark), which no piece may hold.
3. Seed pieces: every character, plus the ``seed_size`` best substrings of 2 to ``max_piece_length`` characters by
   ``frequency * length``, among those that occur twice or more, are right-branching (SentencePiece takes the
   nodes of a suffix array) and are valid pieces (``▁`` only first, one Unicode script, digits alone with
   ``split_digits``). Found with a hash table over the words' substrings: linear in the text, never quadratic.
4. EM: ``n_sub_iterations`` rounds of E-step (expected piece counts by forward-backward over each word's lattice)
   and M-step (pieces with an expected count under 0.5 dropped; log-probabilities by the digamma-based update
   ``digamma(count) - digamma(total)``, the variational Bayes estimate SentencePiece uses), then pruning: each
   piece whose own string has another segmentation loses ``freq / total * (log p(piece) - log p(alternative))``
   likelihood when removed; the pieces that lose least are dropped until ``shrinking_factor`` of them remain
   (never below 1.1 x ``vocab_size``). Repeated until the vocabulary is that small.
5. Pieces that another segmentation beats on their own string are removed; the required characters are added
   (with the smallest score minus a little when EM dropped them), then the best-scoring pieces up to
   ``vocab_size``.
"""

from __future__ import annotations

import warnings
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Iterable, Iterator

import numpy as np

from tokembed.errors import CorpusError, ParameterError, VocabularySizeWarning

from .model import SPACE

__all__ = ["TrainResult", "corpus_words", "train_unigram", "UNK_CHAR"]

#: SentencePiece's mark of a character outside the required characters (U+2585 LOWER FIVE EIGHTHS BLOCK).
UNK_CHAR = "\u2585"
_EXPECTED_FREQUENCY_THRESHOLD = 0.5
_MIN_SCORE_PENALTY_DELTA = 0.0001
_N_RANGES = 16  # words are processed in this many fixed ranges (threads take ranges; sums in range order)
#: Appended to each normalized document while counting, so that the words that end a document are told apart (a
#: suffix array of the text sees the end of a sentence after them, not the next word's ``▁``); removed after.
_END = "\uffff"


@dataclass
class TrainResult:
    """What :func:`train_unigram` learned: pieces and their log-probabilities, best first."""

    pieces: list[str]
    scores: list[float]
    required_chars: list[str]
    objective: list[float]


def _chunks(docs: Iterable[str], size: int = 1 << 22) -> Iterator[list[str]]:
    chunk: list[str] = []
    total = 0
    try:
        docs = iter(docs)
    except TypeError:
        raise CorpusError(f"unigram: fit needs an iterable of documents (str), got {type(docs).__name__}") from None
    for index, doc in enumerate(docs):
        if not isinstance(doc, str):
            raise CorpusError(f"unigram: documents must be str, got {type(doc).__name__} at index {index}")
        chunk.append(doc)
        total += len(doc)
        if total >= size:
            yield chunk
            chunk, total = [], 0
    if chunk:
        yield chunk


def corpus_words(docs: Iterable[str], model_arrays: tuple, params: np.ndarray, meta_pieces: list[str],
                 identity: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Normalize the documents and count their words, each with ``▁`` in front (CSR over code points).

    ``model_arrays`` is ``(charsmap units, replacements, user-defined units)``; ``params`` the kernels' int64
    parameters (the normalizer flags). Occurrences of ``meta_pieces`` (special and user-defined tokens) are cut
    out of the training text, as SentencePiece does.

    Returns ``(codepoints int64, offsets int64, counts int64, final bool)``: ``final`` marks the words counted
    at the end of a document (the same word elsewhere is another entry).
    """
    from tokembed.text import repair_surrogates
    from tokembed.text.fast import WordCounts, count_words

    from ._kernels_encode import P_ADD_DUMMY_PREFIX, P_ESCAPE_WHITESPACES, normalize_docs

    charsmap, replacements, user = model_arrays
    p = params.copy()
    p[P_ESCAPE_WHITESPACES] = 0  # spaces stay spaces: the counter cuts at them
    p[P_ADD_DUMMY_PREFIX] = 0
    metas = sorted((m for m in meta_pieces if m), key=len, reverse=True)
    remove_extra = bool(params[4])
    # with remove_extra_whitespaces and the nmt_nfkc rule, every whitespace character is a space, and words are
    # exactly the runs between spaces: the fast counter's whitespace_split. Otherwise SentencePiece's own split
    # (only " " separates; a run of spaces leaves "▁" words) is counted in Python.
    fast = remove_extra and not identity

    def normalized() -> Iterator[str]:
        for chunk in _chunks(docs):
            parts = []
            for doc in chunk:
                try:
                    parts.append(doc.encode("utf-8"))
                except UnicodeEncodeError:
                    parts.append(repair_surrogates(doc).normalized.encode("utf-8"))
            offsets = np.zeros(len(parts) + 1, np.int64)
            np.cumsum(np.fromiter(map(len, parts), np.int64, len(parts)), out=offsets[1:])
            buf = np.frombuffer(b"".join(parts) or b"\x00", np.uint8)
            out, out_offsets = normalize_docs(buf, offsets, charsmap, replacements, user, p)
            text = out.tobytes().decode("utf-8", "replace")
            if len(text) == len(out):  # ASCII: byte offsets are character offsets
                bounds = out_offsets.tolist()
            else:
                starts = np.zeros(out.size + 1, np.int64)
                np.cumsum((out & 0xC0) != 0x80, out=starts[1:])
                bounds = starts[out_offsets].tolist()
            for a, b in zip(bounds[:-1], bounds[1:]):
                piece = text[a:b]
                for m in metas:
                    if m in piece:
                        piece = piece.replace(m, " ")
                if piece:
                    yield piece + _END

    if fast:
        wc = count_words(normalized(), "whitespace_split")
        counts = wc.counts.astype(np.int64)
        lengths = np.diff(wc.offsets)
        cps = np.insert(wc.codepoints.astype(np.int64), wc.offsets[:-1], ord(SPACE))
        offsets = np.zeros(counts.size + 1, np.int64)
        np.cumsum(lengths + 1, out=offsets[1:])
        if not bool(params[P_ADD_DUMMY_PREFIX]):
            raise ParameterError("unigram", "add_dummy_prefix", "False is only supported with "
                                 "remove_extra_whitespaces=False (training)")
        return _split_final(cps, offsets, counts)
    counter: Counter = Counter()
    add_prefix = bool(params[P_ADD_DUMMY_PREFIX])
    for text in normalized():
        if not text:
            continue
        escaped = (SPACE if add_prefix else "") + text.replace(" ", SPACE)
        # SplitIntoWords: a new word at the text start and at every ▁
        words = escaped.split(SPACE)
        if words[0]:
            counter[words[0]] += 1
        for w in words[1:]:
            counter[SPACE + w] += 1
    counter.pop(SPACE + _END, None)
    counter.pop(_END, None)
    wc = WordCounts.from_dict(counter)
    return _split_final(wc.codepoints.astype(np.int64), wc.offsets, wc.counts)


def _split_final(cps, offsets, counts):
    """Remove the end mark from the words that carry it; returns ``(cps, offsets, counts, final)``."""
    last = offsets[1:] - 1
    final = (np.diff(offsets) > 0) & (cps[np.maximum(last, 0)] == ord(_END))
    keep = np.ones(cps.size, bool)
    keep[last[final]] = False
    lengths = np.diff(offsets) - final
    new_offsets = np.zeros(counts.size + 1, np.int64)
    np.cumsum(lengths, out=new_offsets[1:])
    ok = lengths > 0
    cps = cps[keep]
    if not ok.all():
        idx = np.flatnonzero(ok)
        starts, ends = new_offsets[idx], new_offsets[idx + 1]
        sel = np.concatenate([np.arange(a, b) for a, b in zip(starts.tolist(), ends.tolist())]) if idx.size else \
            np.zeros(0, np.int64)
        cps = cps[sel]
        new_offsets = np.zeros(idx.size + 1, np.int64)
        np.cumsum(lengths[idx], out=new_offsets[1:])
        counts, final = counts[idx], final[idx]
    return cps, new_offsets, counts, final


def _pack(pieces: list[str]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(pieces) + 1, np.int64)
    np.cumsum(np.fromiter(map(len, pieces), np.int64, len(pieces)), out=offsets[1:])
    cps = np.frombuffer("".join(pieces).encode("utf-32-le"), "<u4").astype(np.int64)
    return cps, offsets


def _digamma(x: np.ndarray) -> np.ndarray:
    from scipy.special import digamma

    return digamma(x)


class _Trainer:
    def __init__(self, cps, offsets, counts, max_len: int, workers: int):
        self.cps, self.offsets, self.counts = cps, offsets, counts
        self.max_len = max_len
        self.workers = max(1, int(workers))
        # fixed ranges of about equal numbers of characters
        n = counts.size
        cut = np.searchsorted(offsets, np.linspace(0, offsets[-1], _N_RANGES + 1)[1:-1])
        bounds = np.unique(np.concatenate([[0], np.clip(cut, 0, n), [n]]))
        self.ranges = list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))
        self.total = int(counts.sum())

    def set_pieces(self, pieces: list[str], logp: np.ndarray) -> None:
        from ._kernels_train import build_piece_table

        self.pieces = pieces
        self.logp = np.asarray(logp, np.float64)
        self.pcps, self.poffsets = _pack(pieces)
        self.slots, self.hashes = build_piece_table(self.pcps, self.poffsets)
        self.min_score = float(self.logp.min())
        self.unk_score = self.min_score - 10.0

    def _map(self, fn):
        if self.workers == 1:
            return [fn(r) for r in self.ranges]
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            return list(pool.map(fn, self.ranges))

    def e_step(self) -> tuple[np.ndarray, float, int]:
        from ._kernels_train import e_step

        def run(r):
            expected = np.zeros(len(self.pieces), np.float64)
            obj, ntok = e_step(self.cps, self.offsets, self.counts, r[0], r[1], self.slots, self.hashes, self.pcps,
                               self.poffsets, self.logp, self.max_len, self.unk_score, expected)
            return expected, obj, ntok

        parts = self._map(run)
        expected = np.zeros(len(self.pieces), np.float64)
        obj, ntok = 0.0, 0
        for e, o, t in parts:  # in range order
            expected += e
            obj += o
            ntok += t
        return expected, -obj / self.total, ntok

    def viterbi_freq(self) -> np.ndarray:
        from ._kernels_train import viterbi_counts

        def run(r):
            freq = np.zeros(len(self.pieces), np.float64)
            viterbi_counts(self.cps, self.offsets, self.counts, r[0], r[1], self.slots, self.hashes, self.pcps,
                           self.poffsets, self.logp, self.max_len, self.unk_score, freq)
            return freq

        freq = np.zeros(len(self.pieces), np.float64)
        for f in self._map(run):
            freq += f
        return freq

    def alternatives(self):
        from ._kernels_train import piece_alternatives

        n = len(self.pieces)
        alt_ids = np.empty(self.pcps.size + n, np.int64)
        alt_offsets = np.zeros(n + 1, np.int64)
        own_best = np.zeros(n, np.int64)
        alt_score = np.zeros(n, np.float64)
        piece_alternatives(self.slots, self.hashes, self.pcps, self.poffsets, self.logp, self.max_len,
                           self.unk_score, alt_ids, alt_offsets, own_best, alt_score)
        return own_best, alt_ids, alt_offsets, alt_score


def _seeds(cps, offsets, counts, final, *, seed_size: int, max_len: int, split_digits: bool, split_by_script: bool,
           split_by_number: bool) -> tuple[list[str], np.ndarray]:
    """Seed pieces (characters by count, then substrings by frequency x length) and their log-probabilities."""
    from ._kernels_train import count_substrings
    from ._scripts import script_ids

    lengths = np.diff(offsets)
    weight = np.repeat(counts, lengths)
    unk = ord(UNK_CHAR)
    char_count = np.bincount(cps, weights=weight.astype(np.float64))
    chars = np.flatnonzero(char_count)
    chars = chars[chars != unk]
    ccount = char_count[chars]
    order = np.lexsort((chars, -ccount))
    pieces = [chr(c) for c in chars[order].tolist()]
    scores = ccount[order].astype(np.float64)
    if split_by_script:
        script = script_ids(cps, split_by_number)
    else:
        script = np.zeros(cps.size, np.int64)
        if not split_by_number:
            script[:] = -2
    uniq, inv = np.unique(cps, return_inverse=True)
    digit = np.array([chr(c).isdecimal() for c in uniq.tolist()], bool)[inv]
    first, slen, scount, branching = count_substrings(cps, offsets, counts, final, script, digit, max_len,
                                                      split_digits, unk, ord(SPACE))
    keep = np.flatnonzero((scount >= 2) & branching)
    first, slen, scount = first[keep], slen[keep], scount[keep]
    score = scount.astype(np.float32) * slen.astype(np.float32)
    # UTF-8 size of each candidate, for SentencePiece's tie rule (score, then longer in bytes, then the string)
    nbytes = 1 + (cps >= 0x80) + (cps >= 0x800) + (cps >= 0x10000)
    csum = np.zeros(cps.size + 1, np.int64)
    np.cumsum(nbytes, out=csum[1:])
    size = csum[first + slen] - csum[first]
    # rank by score and size first, and build strings only for the candidates that can make the cut
    coarse = np.lexsort((-size, -score))
    if coarse.size > seed_size:
        limit_score, limit_size = score[coarse[seed_size - 1]], size[coarse[seed_size - 1]]
        near = (score > limit_score) | ((score == limit_score) & (size >= limit_size))
        coarse = coarse[near[coarse]]
    text = cps.astype("<u4").tobytes().decode("utf-32-le")
    strings = np.array([text[a:a + n] for a, n in zip(first[coarse].tolist(), slen[coarse].tolist())], dtype=object)
    order = np.lexsort((strings.astype(str), -size[coarse], -score[coarse]))[:seed_size]
    pieces += strings[order].tolist()
    scores = np.concatenate([scores, score[coarse][order].astype(np.float64)])
    logp = np.log(scores) - np.log(scores.sum())
    return pieces, logp


def train_unigram(cps: np.ndarray, offsets: np.ndarray, counts: np.ndarray, final: np.ndarray, *, vocab_size: int, n_meta: int,
                  character_coverage: float, seed_size: int, max_piece_length: int, shrinking_factor: float,
                  n_sub_iterations: int, split_digits: bool, split_by_unicode_script: bool, split_by_number: bool,
                  required_chars: str = "", workers: int = 2) -> TrainResult:
    """Learn ``vocab_size - n_meta`` pieces from word counts (steps in the module docstring).

    Parameters
    ----------
    cps, offsets, counts : int64 arrays
        Words (with their ``▁``), CSR over code points, and their counts.
    final : bool array
        Words counted at the end of a document (for the seeds' right-branching test).
    vocab_size : int
        Size of the whole vocabulary; ``n_meta`` entries of it are special, user-defined and byte pieces.

    Raises
    ------
    CorpusError
        If there is no word.
    ParameterError
        If the required characters alone exceed the room ``vocab_size - n_meta``.

    Warns
    -----
    VocabularySizeWarning
        When fewer pieces than asked for could be learned.
    """
    if counts.size == 0 or cps.size == 0:
        raise CorpusError("unigram: the corpus holds no word to learn from (empty, or only whitespace)")
    room = vocab_size - n_meta
    # 2. required characters, and the others replaced by UNK_CHAR
    lengths = np.diff(offsets)
    char_count = np.bincount(cps, weights=np.repeat(counts, lengths).astype(np.float64))
    chars = np.flatnonzero(char_count)
    forced = np.array(sorted({ord(c) for c in required_chars}), np.int64)
    is_forced = np.isin(chars, forced)
    order = np.lexsort((chars, -char_count[chars], ~is_forced))
    total = char_count.sum()
    acc = np.concatenate([[0.0], np.cumsum(char_count[chars][order])[:-1]]) / total
    take = order[(acc < character_coverage) | is_forced[order]]
    required = chars[take]
    if required.size > room:
        raise ParameterError("unigram", "vocab_size", f"is too small: character_coverage={character_coverage} "
                             f"requires {required.size} characters, and {n_meta} entries are special, "
                             f"user-defined or byte pieces; use vocab_size >= {required.size + n_meta} or a lower "
                             "character_coverage")
    is_required = np.zeros(max(int(cps.max()) + 1, int(forced.max()) + 1 if forced.size else 0), bool)
    is_required[required] = True
    rare = ~is_required[cps]
    if rare.any():
        cps = cps.copy()
        cps[rare] = ord(UNK_CHAR)
    # 3. seeds
    pieces, logp = _seeds(cps, offsets, counts, final, seed_size=seed_size, max_len=max_piece_length,
                          split_digits=split_digits, split_by_script=split_by_unicode_script,
                          split_by_number=split_by_number)
    trainer = _Trainer(cps, offsets, counts, max_piece_length, workers)
    trainer.set_pieces(pieces, logp)
    desired = int(vocab_size * 1.1)
    objective: list[float] = []
    # 4. EM and pruning
    while True:
        for _ in range(n_sub_iterations):
            expected, obj, _ntok = trainer.e_step()
            objective.append(obj)
            keep = np.flatnonzero(expected >= _EXPECTED_FREQUENCY_THRESHOLD)
            freq = expected[keep]
            trainer.set_pieces([trainer.pieces[i] for i in keep.tolist()], _digamma(freq) - _digamma(freq.sum()))
        size_before = len(trainer.pieces)
        _prune(trainer, desired, shrinking_factor)
        if len(trainer.pieces) <= desired or len(trainer.pieces) >= size_before:
            break
    # 5. unreachable pieces, required characters, the best pieces
    own_best, _, _, _ = trainer.alternatives()
    reach = np.flatnonzero(own_best != 0)
    trainer.set_pieces([trainer.pieces[i] for i in reach.tolist()], trainer.logp[reach])
    score_of = dict(zip(trainer.pieces, trainer.logp.tolist()))
    final: dict[str, float] = {}
    penalty = 0.0
    req_order = np.lexsort((required, -char_count[required]))
    req_chars = [chr(c) for c in required[req_order].tolist()]
    for c in req_chars:
        if c in score_of:
            final[c] = score_of[c]
        else:
            final[c] = float(np.float32(trainer.min_score + penalty))
            penalty += _MIN_SCORE_PENALTY_DELTA
    ranked = sorted(score_of.items(), key=lambda kv: (-kv[1], kv[0]))
    for piece, score in ranked:
        if len(final) >= room:
            break
        if piece not in final:
            final[piece] = score
    out = sorted(final.items(), key=lambda kv: (-kv[1], kv[0]))
    if len(out) < room:
        warnings.warn(f"unigram: only {len(out) + n_meta} entries could be learned, not the vocab_size={vocab_size} "
                      "asked for (the corpus is too small)", VocabularySizeWarning, stacklevel=3)
    return TrainResult([p for p, _ in out], [s for _, s in out], req_chars, objective)


def _prune(trainer: _Trainer, desired: int, shrinking_factor: float) -> None:
    """SentencePiece's ``PruneSentencePieces`` (see the module docstring)."""
    own_best, alt_ids, alt_offsets, _ = trainer.alternatives()
    freq = trainer.viterbi_freq()
    total = freq.sum()
    logsum = np.log(total)
    n = len(trainer.pieces)
    kept: list[int] = []
    candidates: list[tuple[float, int]] = []
    bounds = alt_offsets.tolist()
    alt = alt_ids.tolist()
    for i in range(n):
        if freq[i] == 0 or own_best[i] == 0:
            continue
        if own_best[i] == -1:
            kept.append(i)
            continue
        alts = alt[bounds[i]:bounds[i + 1]]
        logprob_sp = np.log(freq[i]) - logsum
        logsum_alt = np.log(total + freq[i] * (len(alts) - 1))
        logprob_alt = 0.0
        for a in alts:
            logprob_alt += np.log((freq[a] if a >= 0 else 0.0) + freq[i]) - logsum_alt
        loss = freq[i] / total * (logprob_sp - logprob_alt)
        candidates.append((-loss, i))
    pruned_size = max(desired, int(shrinking_factor * n))
    candidates.sort()
    for _, i in candidates:
        if len(kept) >= pruned_size:
            break
        kept.append(i)
    trainer.set_pieces([trainer.pieces[i] for i in kept], trainer.logp[np.array(kept, np.int64)])
