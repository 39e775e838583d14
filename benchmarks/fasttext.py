"""fastText and word2vec skip-gram training on wv_corpus against gensim 4 and Facebook's fastText.

Rows
    ``fasttext_gensim``, ``word2vec_gensim``: gensim's ``FastText`` / ``Word2Vec`` fed token lists
    (``sentences=``) split in the untimed setup. ``fasttext_gensim_corpus_file``, ``word2vec_gensim_corpus_file``:
    the same models given the text file (``corpus_file=``, gensim's fastest input: a C++ line reader, one thread
    per part of the file, no Python in the training loop). ``fasttext_facebook``: Facebook's fastText, which reads
    the file inside its timed call too.

    Ours, in every row: the timed call reads the same file, splits each line on whitespace (``str.split``, as
    gensim's ``LineSentence``; wv_corpus holds only single spaces and newlines, so every side's splitter gives the
    same tokens), packs the token lists into :class:`~tokembed.sequences.TokenSequences` and fits.

Settings
    Skip-gram, 100 dimensions, window 5, min_count 5, 5 epochs, 2 threads on every side. Ours runs with the
    defaults of the reference beside it: gensim's (sample 1e-3, alpha 0.025 to 1e-4, negatives by count^0.75)
    against gensim, fastText's (t 1e-4, lr 0.05 to 0, count^0.5) against fastText. Each side's vectors are scored
    on wordsim353, simlex999 and google_analogy (30,000 most frequent words) by
    :func:`tokembed.evaluation.evaluate_vectors`; every score of ours must be at least the reference's minus
    :data:`_TOL`, or the check fails.

Update rule (stated in every row)
    Ours averages a skip-gram centre word's rows (its own and its n-gram rows) once per centre, predicts each
    context word from that average, and adds the summed input gradient to those rows once per centre. gensim and
    fastText average and write back for every (centre, context) pair. See docs/fasttext.md.

Pairs per second
    :func:`_pair_count` gives the expected number of (centre, context) pairs one fit trains, from the corpus
    statistics and the settings of the row, and each side's pairs/s is that count over the side's own time: the
    same count for both sides, so the two rates are in the ratio of the times.

Sizes (environment variables, read when the setup runs)
    By default the whole corpus and 5 epochs. ``TOKEMBED_BENCH_TOKENS=N`` (the first whole lines holding N
    tokens) and ``TOKEMBED_BENCH_EPOCHS=E`` shorten a run; its scores are still enforced, but its section is
    printed, never written to BENCHMARKS.md (the rows' descriptions name the whole corpus and 5 epochs).
    ``TOKEMBED_BENCH_TRIAL=1`` is the trial size (1,000,000 tokens and 1 epoch unless the two variables above say
    otherwise): it proves the rows run end to end; scores are reported but NOT enforced, the check line and the
    notes say TRIAL, and the section is never written to BENCHMARKS.md (``Case.trial``)::

        TOKEMBED_BENCH_TRIAL=1 python -m benchmarks fasttext_gensim_corpus_file --repeat 1 --no-memory --no-write

Repeats
    These benchmarks declare no warm-up call (``warmup=0``: the Numba kernels are compiled in the untimed setup,
    the references have nothing to warm), so ``--repeat 3`` is three timed calls per side, alternating, and the
    first call of each side is the one scored. A full-size call takes 3 to 8 minutes per side on 2 idle cores.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from . import Case, CheckFailed, benchmark

_SETS = ["wordsim353", "simlex999", "google_analogy"]
_THREADS = 2
_WINDOW = 5
_MIN_COUNT = 5
_COMMON = dict(vector_size=100, window=_WINDOW, min_count=_MIN_COUNT)
#: Every score of ours must be at least the reference's minus this.
_TOL = 0.02
_TRIAL_TOKENS = 1_000_000
_TRIAL_EPOCHS = 1
_EPOCHS = 5
#: gensim's defaults and fastText's, as ours is given them (``sample`` is the subsampling threshold, fastText's -t).
_GENSIM_SAMPLE = 1e-3
_FASTTEXT_SAMPLE = 1e-4
#: gensim's MAX_SENTENCE_LEN: the longest list it trains on whole.
_GENSIM_MAX_LEN = 10_000
_FACEBOOK_PARAMS = dict(sample=_FASTTEXT_SAMPLE, alpha=0.05, min_alpha=0.0, ns_exponent=0.5)

_RULE_OURS = "averages a centre word's subword rows once per centre and writes the summed gradient back once per centre"
_RULE_REF = "averages and writes back per (centre, context) pair"
_CHECK = f"every wordsim353, simlex999 and google_analogy (30k) score of ours >= the reference's - {_TOL}"
_DESCRIPTION = "skip-gram, 100 dimensions, window 5, 5 epochs, min_count 5, 2 threads, from the same text file"


# -- sizes and the corpus file ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Size:
    tokens: int | None  # None: the whole corpus
    epochs: int
    trial: bool

    @property
    def full(self) -> bool:
        """The size the rows describe (whole corpus, 5 epochs): the only one written to BENCHMARKS.md."""
        return self.tokens is None and self.epochs == _EPOCHS and not self.trial

    def label(self) -> str:
        if self.trial:
            return (f"TRIAL SIZE (TOKEMBED_BENCH_TRIAL): first {self.tokens:,} tokens, {self.epochs} epoch(s); scores "
                    "reported, NOT enforced; not a benchmark figure")
        what = "wv_corpus (15,348,119 tokens, one document per line)" if self.tokens is None else \
            f"the first {self.tokens:,} tokens of wv_corpus (TOKEMBED_BENCH_TOKENS: a shortened run, scores enforced)"
        return f"{what}; {self.epochs} epoch(s)"


def _env_int(name: str, default: int | None) -> int | None:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw.replace("_", ""))
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"{name}={raw!r}: give a whole number >= 1 (or unset it)")
    return value


def _size() -> _Size:
    trial_raw = os.environ.get("TOKEMBED_BENCH_TRIAL", "").strip()
    if trial_raw not in ("", "0", "1"):
        raise ValueError(f"TOKEMBED_BENCH_TRIAL={trial_raw!r}: give 1 (the trial size) or 0 / unset (a real run)")
    trial = trial_raw == "1"
    return _Size(tokens=_env_int("TOKEMBED_BENCH_TOKENS", _TRIAL_TOKENS if trial else None),
                 epochs=_env_int("TOKEMBED_BENCH_EPOCHS", _TRIAL_EPOCHS if trial else _EPOCHS),  # type: ignore
                 trial=trial)


@functools.lru_cache(maxsize=None)
def _corpus_file(tokens: int | None) -> Path:
    """The text file every side reads: wv_corpus itself, or a temporary file of its first whole lines that hold at
    least ``tokens`` tokens (removed at exit). Cached, so the rows of one run share it."""
    from tokembed.datasets import dataset_path

    path = dataset_path("wv_corpus")
    if tokens is None:
        return path
    folder = Path(tempfile.mkdtemp(prefix="tokembed-bench-ft-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    sliced = folder / "wv_corpus_slice.txt"
    n = 0
    with open(path, encoding="utf-8") as src, open(sliced, "w", encoding="utf-8") as dst:
        for line in src:
            dst.write(line)
            n += len(line.split())
            if n >= tokens:
                break
    return sliced


def _read_token_lists(path: Path) -> list[list[str]]:
    """gensim's ``sentences=`` input: the lines of ``path`` split on whitespace (token strings interned), each cut
    into pieces of at most 10,000 tokens, as gensim's ``LineSentence`` and ``corpus_file=`` reader cut them.

    Uncut, gensim would train on the first 10,000 tokens of a longer list and drop the rest (its
    ``MAX_SENTENCE_LEN``): wv_corpus has 52 such lines, 301,324 tokens past 10,000.
    """
    intern = sys.intern
    docs: list[list[str]] = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            toks = [intern(t) for t in line.split()]
            docs.extend(toks[i:i + _GENSIM_MAX_LEN] for i in range(0, len(toks), _GENSIM_MAX_LEN))
    return docs


def _read_sequences(path: Path):
    """What our timed call starts with: the lines of ``path`` split on whitespace, packed as TokenSequences."""
    from tokembed.sequences import TokenSequences

    with open(path, encoding="utf-8") as fh:
        return TokenSequences.from_tokens(line.split() for line in fh)


# -- (centre, context) pairs ------------------------------------------------------------------------------------------
def _pairs_in_documents(lengths: np.ndarray, window: int) -> float:
    """Expected skip-gram pairs of documents of ``lengths`` tokens with windows drawn uniformly in ``1 .. window``.

    A centre at position ``i`` of ``n`` tokens with window ``b`` has ``min(b, i) + min(b, n - 1 - i)`` contexts;
    summed over ``i`` that is ``2 S(n, b)`` with ``S = n (n - 1) / 2`` when ``n - 1 <= b``, else
    ``b (b + 1) / 2 + (n - 1 - b) b``; averaged over ``b``. (n = 3, window 1: 4 pairs; window 2: (4 + 6) / 2 = 5.)
    """
    n = lengths.astype(np.float64)
    total = 0.0
    for b in range(1, window + 1):
        short = n - 1 <= b
        s = np.where(short, n * (n - 1) / 2, b * (b + 1) / 2 + (n - 1 - b) * b)
        total += 2.0 * float(s[n > 0].sum())
    return total / window


@dataclass(frozen=True)
class _Pairs:
    total: float  # expected (centre, context) pairs of one fit, all epochs
    how: str


@functools.lru_cache(maxsize=None)
def _trained_corpus(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The corpus as the trainer sees it: ``(ids, offsets, counts)`` of the words with count >= 5 (ours and gensim's
    vocabulary rule), rarer tokens removed, lines cut into pieces of at most 10,000 tokens. Cached per file."""
    from tokembed.plugins.fasttext import training as T

    seqs = _read_sequences(path)
    vocab = T.build_vocabulary(seqs, _MIN_COUNT, None, "pair count")
    corpus = T.plan_corpus(seqs, vocab.token_map)  # the trainer's own plan: the same pieces it trains on
    parts = [corpus.chunk(c) for c in range(corpus.n_chunks)]
    ids = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.int32)
    offsets = np.zeros(corpus.n_pieces + 1, np.int64)
    if parts:
        np.cumsum(np.concatenate([np.diff(p[1]) for p in parts]), out=offsets[1:])
    return ids, offsets, vocab.counts


@functools.lru_cache(maxsize=None)
def _pair_count(path: Path, sample: float, epochs: int) -> _Pairs:
    """Expected (centre, context) pairs one fit trains on ``path`` with ``min_count`` 5, window 5 (shrinking) and
    subsampling threshold ``sample``, over ``epochs`` epochs: the same figure for both sides of a row.

    On :func:`_trained_corpus`, each token is kept with its subsampling probability (gensim's formula, see
    ``keep_thresholds``) in one seeded draw, and :func:`_pairs_in_documents` counts the pairs of the kept pieces.
    """
    from tokembed.plugins.fasttext.training import keep_thresholds

    ids, offsets, counts = _trained_corpus(path)
    keep_p = keep_thresholds(counts, sample).astype(np.float64) / float(1 << 32)
    kept = np.random.default_rng(0).random(ids.size) < keep_p[ids]
    csum = np.concatenate([[0], np.cumsum(kept, dtype=np.int64)])
    lengths = csum[offsets[1:]] - csum[offsets[:-1]]
    per_epoch = _pairs_in_documents(lengths, _WINDOW)
    n_kept = int(csum[-1])
    how = (f"{per_epoch * epochs / 1e6:,.1f} M expected (centre, context) pairs = {epochs} epoch(s) x "
           f"{per_epoch / 1e6:,.2f} M: each of the {ids.size:,} tokens of words with count >= {_MIN_COUNT} kept "
           f"with its subsampling probability at sample {sample:g} (one seeded draw: {n_kept:,} kept), then every "
           f"kept token's contexts counted within its line, window uniform in 1..{_WINDOW} "
           f"({per_epoch / max(n_kept, 1):.2f} contexts per centre)")
    return _Pairs(per_epoch * epochs, how)


# -- sides and check --------------------------------------------------------------------------------------------------
@dataclass
class _Trained:
    """A side's vectors and the wall time of the call that made them (the span the harness times)."""

    kv: Any
    seconds: float


def _timed(train: Callable[[], Any]) -> Callable[[], _Trained]:
    def call() -> _Trained:
        t0 = time.perf_counter()
        kv = train()
        return _Trained(kv, time.perf_counter() - t0)

    return call


def _scores(kv) -> dict[str, float]:
    from tokembed.evaluation import evaluate_vectors

    res = evaluate_vectors(kv, _SETS, restrict_vocab=30_000)
    return {name: (r["accuracy"] if r.get("kind") == "analogies" else r["spearman"]) or 0.0 for name, r in res.items()}


def _check(reference: str, size: _Size, pairs: _Pairs):
    def check(ours: _Trained, ref: _Trained) -> str:
        a, b = _scores(ours.kv), _scores(ref.kv)
        shown = "; ".join(f"{k} {a[k]:.3f} vs {b[k]:.3f}" for k in _SETS)
        rates = (f"pairs/s of the scored call: ours {pairs.total / ours.seconds / 1e6:.2f} M/s ({ours.seconds:.1f} s), "
                 f"{reference} {pairs.total / ref.seconds / 1e6:.2f} M/s ({ref.seconds:.1f} s); {pairs.how}")
        vocab = f"vocabularies {len(ours.kv):,} and {len(ref.kv):,} words"
        worse = [k for k in _SETS if not a[k] >= b[k] - _TOL]  # a NaN score (diverged vectors) fails too
        if size.trial:
            missed = f"; would fail at full size on {', '.join(worse)}" if worse else ""
            return f"{size.label()}: scores ours vs {reference}: {shown}{missed}; {vocab}; {rates}"
        if worse:
            raise CheckFailed(f"ours scores more than {_TOL} below {reference} on {', '.join(worse)} ({shown}); "
                              f"{rates}")
        return f"scores ours vs {reference}: {shown}; {vocab}; {rates}"

    return check


def _from_gensim(wv):
    from tokembed.keyedvectors import KeyedVectors

    return KeyedVectors.from_arrays(list(wv.index_to_key), wv.vectors)


def _ours(cls, path: Path, epochs: int, **params) -> Callable[[], _Trained]:
    """Our timed call: read and split ``path``, pack TokenSequences, fit ``cls`` (2 threads, seed 0)."""
    cls.warmup()  # compiled (or loaded from Numba's cache) here, in the untimed setup

    def train():
        seqs = _read_sequences(path)
        return cls(**_COMMON, sg=True, epochs=epochs, workers=_THREADS, seed=0, show_progress=False,
                   **params).fit(seqs).wv_

    return _timed(train)


def _gensim_case(model: str, corpus_file: bool) -> Case:
    """A row against gensim's ``FastText`` or ``Word2Vec`` (``model``), fed token lists or the file."""
    import gensim.models

    from tokembed.plugins.fasttext import FastTextEmbedder, Word2VecEmbedder

    size = _size()
    path = _corpus_file(size.tokens)
    extra: dict[str, Any] = dict(bucket=2_000_000, min_n=3, max_n=6) if model == "FastText" else {}
    cls = getattr(gensim.models, model)
    if corpus_file:
        feed: dict[str, Any] = dict(corpus_file=str(path))
    else:
        feed = dict(sentences=_read_token_lists(path))  # split here, untimed

    def reference():
        m = cls(**feed, **_COMMON, sg=1, epochs=size.epochs, workers=_THREADS, seed=0, **extra)
        return _from_gensim(m.wv)

    ours_cls = FastTextEmbedder if model == "FastText" else Word2VecEmbedder
    pairs = _pair_count(path, _GENSIM_SAMPLE, size.epochs)
    fed = ("gensim reads the file itself inside its timed call (`corpus_file=`: its vocabulary scan in Python, "
           "training in C++ line readers, one per thread and part of the file; in this mode gensim 4.4 measures "
           "each thread's progress against the whole corpus (`get_next_alpha` in word2vec_corpusfile.pyx): with 2 "
           "threads its learning rate falls half as far as intended within each epoch and the last epoch ends "
           "near 0.0026, not 1e-4)"
           if corpus_file else
           "gensim gets the lines as token lists split in the untimed setup (`sentences=`, its iterable API: "
           "splitting and interning are not in its time; lines cut into pieces of 10,000 tokens as its "
           "`LineSentence` cuts them; gensim scans the lists for its vocabulary, then a Python thread feeds "
           "batches to the training threads)")
    rule = (f"Update rule: ours {_RULE_OURS}; gensim {_RULE_REF}" if model == "FastText" else
            "Update rule: ours predicts each context word from the centre word's row and adds the summed input "
            "gradient to that row once per centre; gensim predicts the centre word from each context word's row "
            "and updates that row per (centre, context) pair (without subword rows the input side is one row per "
            "update on both sides, beside the 6 output rows, target and 5 negatives, that every pair touches)")
    notes = (f"{size.label()}. Both sides start from the same text file. Ours reads it, splits each line "
             f"(`str.split`), packs TokenSequences and fits, all inside its timed call; {fed}. Both train with "
             "gensim's defaults: negative 5 with exponent 0.75, sample 1e-3, alpha 0.025 decaying to 1e-4, "
             f"shrinking windows, seed 0. {rule}. Negatives: ours an alias table, gensim a cumulative table. Numba "
             "kernels are compiled in the untimed setup.")
    return Case(ours=_ours(ours_cls, path, size.epochs), reference=_timed(reference), quality=True,
                check=_check("gensim", size, pairs), notes=notes, work_bytes=path.stat().st_size, trial=not size.full)


_FT = dict(description=f"fastText {_DESCRIPTION}; character n-grams 3-6, 2,000,000 buckets.", check=_CHECK,
           data="wv_corpus (or the size the notes name)", libraries=("gensim", "numba"), warmup=0)
_W2V = dict(description=f"word2vec {_DESCRIPTION}.", check=_CHECK, data="wv_corpus (or the size the notes name)",
            libraries=("gensim", "numba"), warmup=0)
_OURS_FT = (f"tokembed `FastTextEmbedder(sg=True, workers=2)`, gensim's defaults; {_RULE_OURS}; reads and splits "
            "the file")
_OURS_W2V = "tokembed `Word2VecEmbedder(sg=True, workers=2)`, gensim's defaults; reads and splits the file"


@benchmark("fasttext_gensim", ours=_OURS_FT, reference=f"gensim 4 `FastText(sentences=token lists, sg=1, workers=2)`; "
           f"{_RULE_REF}; lists split in the untimed setup", **_FT)
def fasttext_gensim() -> Case:
    return _gensim_case("FastText", corpus_file=False)


@benchmark("fasttext_gensim_corpus_file", ours=_OURS_FT, reference=f"gensim 4 `FastText(corpus_file=path, sg=1, "
           f"workers=2)`; {_RULE_REF}; reads the file", **_FT)
def fasttext_gensim_corpus_file() -> Case:
    return _gensim_case("FastText", corpus_file=True)


@benchmark("word2vec_gensim", ours=_OURS_W2V, reference="gensim 4 `Word2Vec(sentences=token lists, sg=1, workers=2)`; "
           "lists split in the untimed setup", **_W2V)
def word2vec_gensim() -> Case:
    return _gensim_case("Word2Vec", corpus_file=False)


@benchmark("word2vec_gensim_corpus_file", ours=_OURS_W2V, reference="gensim 4 `Word2Vec(corpus_file=path, sg=1, "
           "workers=2)`; reads the file", **_W2V)
def word2vec_gensim_corpus_file() -> Case:
    return _gensim_case("Word2Vec", corpus_file=True)


@benchmark(
    "fasttext_facebook",
    description=f"fastText {_DESCRIPTION}; character n-grams 3-6, 2,000,000 buckets, fastText's defaults otherwise.",
    ours="tokembed `FastTextEmbedder(sg=True, workers=2, sample=1e-4, alpha=0.05, min_alpha=0, ns_exponent=0.5)`; "
    f"{_RULE_OURS}; reads and splits the file",
    reference="Facebook fastText (`fasttext-wheel`) `train_unsupervised(path, model='skipgram', thread=2)`; "
    f"{_RULE_REF}; reads the file",
    check=_CHECK,
    data="wv_corpus (or the size the notes name)",
    libraries=("fasttext-wheel", "numba"),
    warmup=0,
)
def fasttext_facebook() -> Case:
    import fasttext

    from tokembed.keyedvectors import KeyedVectors
    from tokembed.plugins.fasttext import FastTextEmbedder

    size = _size()
    path = _corpus_file(size.tokens)

    def reference():
        m = fasttext.train_unsupervised(str(path), model="skipgram", dim=100, ws=_WINDOW, epoch=size.epochs,
                                        minCount=_MIN_COUNT, thread=_THREADS, verbose=0)
        words = m.words
        return KeyedVectors.from_arrays(words, np.array([m.get_word_vector(w) for w in words]))

    pairs = _pair_count(path, _FASTTEXT_SAMPLE, size.epochs)
    notes = (f"{size.label()}. Both sides read the same text file inside their timed call (fastText reads and "
             "counts it, and trains its end-of-line token </s>, which ours does not have; ours reads it, splits "
             "each line with `str.split`, packs TokenSequences and fits). Same parameters on both sides: lr 0.05 "
             "decaying to 0, t (sample) 1e-4, neg 5, negatives by counts^0.5, minn 3, maxn 6, bucket 2,000,000. "
             f"Update rule: ours {_RULE_OURS}; fastText {_RULE_REF}. fastText redraws a negative equal to the "
             "target, ours skips it; fastText cuts lines at 1,024 tokens, ours at 10,000. The pair count uses "
             "ours' subsampling law (fastText's differs only in counting rare words and </s> in the total). Build: "
             "fastText is the `fasttext-wheel` binary, generic x86-64 code (no AVX instructions), not its "
             "Makefile's `make opt` (-O3 -funroll-loops -march=native); Numba compiles ours for this CPU.")
    return Case(ours=_ours(FastTextEmbedder, path, size.epochs, **_FACEBOOK_PARAMS), reference=_timed(reference),
                quality=True, check=_check("fastText", size, pairs), notes=notes, work_bytes=path.stat().st_size,
                trial=not size.full)


def _encoded_corpus() -> Path:
    """wv_corpus (or its first TOKEMBED_BENCH_TOKENS tokens) written by ``tokembed encode`` with a whitespace word
    tokenizer, built once under the temporary folder and reused (the memory probes then only open it)."""
    from tokembed.encode import encode_corpus
    from tokembed.encoded import MANIFEST
    from tokembed.plugins.word.tokenizer import WordTokenizer

    limit = _size().tokens
    folder = Path(tempfile.gettempdir()) / f"tokembed-bench-w2v-mapped-{limit or 'all'}"
    if not (folder / MANIFEST).is_file():
        with open(_corpus_file(limit), encoding="utf-8") as fh:
            lines = [" ".join(line.split()) for line in fh]
        tok = WordTokenizer(pre_tokenizer="whitespace_split", unk_token=None, pad_token=None).fit(lines)
        encode_corpus(tok, lines, folder, corpus="wv_corpus", progress=False)
    return folder


@benchmark(
    "word2vec_mapped",
    description="word2vec skip-gram, 100 dimensions, window 5, min_count 5, 1 epoch, 1 thread, seed 0, trained from "
    "the memory-mapped folder `tokembed encode` wrote vs from the same documents in memory.",
    ours="tokembed `Word2VecEmbedder(workers=1).fit(TokenSequences.open(DIR))` (ids read in place, chunk by chunk)",
    reference="tokembed `Word2VecEmbedder(workers=1).fit(TokenSequences.open(DIR).in_memory())` (int32 ids in RAM)",
    check="identical input and output matrices (one worker and a seed); the goal: time within 1.1x",
    data="wv_corpus",
    libraries=("numba",),
)
def word2vec_mapped() -> Case:
    import numpy as np

    from tokembed.plugins.fasttext import Word2VecEmbedder
    from tokembed.sequences import TokenSequences

    size = _size()
    folder = _encoded_corpus()
    epochs = 1  # one pass: what is compared is reading the corpus, the same in every epoch
    Word2VecEmbedder.warmup()
    params = dict(**_COMMON, sg=True, epochs=epochs, workers=1, seed=0, show_progress=False)
    # compile the kernels for the mapped dtype too, outside the timed calls
    tiny = TokenSequences.open(folder)
    Word2VecEmbedder(**{**params, "epochs": 1, "vector_size": 4}).fit(tiny)

    def ours():
        return Word2VecEmbedder(**params).fit(TokenSequences.open(folder))

    def reference():
        return Word2VecEmbedder(**params).fit(TokenSequences.open(folder).in_memory())

    def check(a, b) -> str:
        same = np.array_equal(a.input_matrix_, b.input_matrix_) and np.array_equal(a.output_matrix_, b.output_matrix_)
        if not same:
            raise CheckFailed("the mapped corpus and the in-memory one gave different vectors")
        return f"identical input and output matrices ({len(a.wv_):,} words, {a.corpus_tokens_:,} tokens per epoch)"

    return Case(ours=ours, reference=reference, check=check, trial=size.tokens is not None,
                notes=size.label().split(";")[0] + "; 1 epoch. The folder is encoded once (untimed) with a whitespace word tokenizer; the "
                "in-memory side's time includes converting the mapped ids to int32 (a copy of 4 bytes per token), "
                "which is what a caller without streaming pays. Peak RSS counts the mapped pages of ids.npy that "
                "the process touched (2 bytes per token, page cache the system can reclaim).")
