"""GloVe on wv_corpus against the Stanford GloVe C tools (vocab_count, cooccur, shuffle, glove), both sides from the
same text file, same settings, scores enforced; and the same model over a 32k BPE tokenizer's pieces (time only).

Two rows: ``glove`` against the tools built with ``-Ofast`` (their Makefile's alternative flags: the headline) and
``glove_default_build`` against the tools built with their Makefile as shipped (``-O3``). The tools are compiled
from their source under the temporary folder by :mod:`benchmarks._stanford_glove` (set ``TOKEMBED_GLOVE_SRC``;
nothing of theirs is in this repository).

Timed, ours: read the text file, split it into lines (the documents) and tokens, build the TokenSequences, then
``GloVe(...).fit``, which counts the co-occurrences and trains. Timed, theirs: vocab_count, cooccur, shuffle and
glove with ``-binary 1``; their vectors file is read back in the check, untimed. The check fails the row (the
command exits 1, no timing recorded) unless both sides have the same vocabulary in the same order, the same number
of co-occurrence records, and every score of ours is at least the reference's minus 0.02.

The full run is long (each side once: ours about 40 s, the ``-O3`` tools about 6 minutes on 2 cores): run
``python -m benchmarks glove glove_default_build --warmup 0 --repeat 1 --no-memory``. A trial on a small corpus:
``TOKEMBED_BENCH_TOKENS=1000000`` trains on the first lines of wv_corpus up to a million tokens (a file of about
5.9 MB that both sides read; ``TOKEMBED_BENCH_TRIAL=1``, the fastText rows' switch, gives the same slice); the
rows then say TRIAL SIZE, the scores are reported but NOT enforced (on a few MB they mean little) and the sections
are never written to BENCHMARKS.md (``Case.trial``).
``TOKEMBED_BENCH_EPOCHS=N`` shortens training (default 15; the scores stay enforced unless the size is a trial's
too; the sections are printed, never written, as the rows' descriptions say 15 epochs). A quick proof that
everything runs: ``TOKEMBED_BENCH_TOKENS=1000000 TOKEMBED_BENCH_EPOCHS=2 python -m benchmarks glove
glove_default_build --warmup 0 --repeat 1 --no-memory --no-write``.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import tempfile
import time
import weakref
from pathlib import Path

from . import Case, CheckFailed, benchmark
from . import _stanford_glove as stanford

SETS = ["wordsim353", "simlex999", "google_analogy"]
#: ours may score at most this much below the reference on each set (enforced except at a trial size)
TOLERANCE = 0.02
_SETTINGS = dict(vector_size=100, window=10, min_count=5, x_max=10.0, alpha=0.75, learning_rate=0.05, workers=2,
                 seed=1)
_EPOCHS = 15


def _epochs() -> int:
    return int(os.environ.get("TOKEMBED_BENCH_EPOCHS", str(_EPOCHS)))


def _corpus() -> tuple[Path, int | None]:
    """The text both sides read, and its token count when it is a trial slice (None for the whole wv_corpus).

    ``TOKEMBED_BENCH_TOKENS=N`` gives the first lines of wv_corpus up to N tokens, copied byte for byte to a
    temporary file. Raises RuntimeError when the text holds whitespace other than space, tab and newline: GloVe's
    tools split tokens at those three only, ours (``whitespace_split``) at every ``str.isspace`` character, so the
    two sides would read different tokens.
    """
    from tokembed.datasets import dataset_path

    path = dataset_path("wv_corpus")
    limit = os.environ.get("TOKEMBED_BENCH_TOKENS")
    if not limit and os.environ.get("TOKEMBED_BENCH_TRIAL", "").strip() == "1":  # the fastText rows' trial switch
        limit = "1000000"
    n_tokens = None
    if limit:
        lines, n_tokens = [], 0
        with open(path, "rb") as fh:
            for line in fh:
                lines.append(line)
                n_tokens += len(line.split())
                if n_tokens >= int(limit):
                    break
            whole = not fh.read(1)
        if whole:  # the limit covers the corpus: the real run
            n_tokens = None
        else:
            folder = Path(tempfile.mkdtemp(prefix="tokembed-bench-glove-trial-"))
            atexit.register(shutil.rmtree, folder, True)
            path = folder / "wv_corpus_trial.txt"
            path.write_bytes(b"".join(lines))
    other = re.search(r"[^\S \t\n]", path.read_text(encoding="utf-8"))
    if other:
        raise RuntimeError(f"{path} holds the whitespace character {other.group()!r} (offset {other.start()}): GloVe's "
                           "tools split tokens at space, tab and newline only, ours at every whitespace character")
    return path, n_tokens


def _fit_ours(seqs, epochs: int) -> dict:
    """``GloVe(...).fit(seqs)`` with the counting (the co-occurrence plugin's fit, inside GloVe.fit) timed apart."""
    from tokembed.plugins.glove import GloVe

    class Timed(GloVe):  # the counting time, measured inside fit (the class itself records no timing)
        def _cooccurrence(self):
            cv = super()._cooccurrence()
            fit = cv.fit

            def timed_fit(X):
                t0 = time.perf_counter()
                out = fit(X)
                self._count_s = time.perf_counter() - t0
                return out

            cv.fit = timed_fit
            return cv

    t0 = time.perf_counter()
    model = Timed(epochs=epochs, **_SETTINGS).fit(seqs)
    total = time.perf_counter() - t0
    return {"wv": model.wv_, "n_records": model.n_records_, "costs": model.costs_,
            "times": {"count": model._count_s, "train": total - model._count_s}}


def _run_ours(corpus: Path, epochs: int) -> dict:
    """Read ``corpus``, documents at newlines, tokens by the Numba ``whitespace_split`` scan on 2 threads
    (:func:`benchmarks._common.text_file_sequences`, as the co-occurrence rows); then :func:`_fit_ours`."""
    from ._common import text_file_sequences

    t0 = time.perf_counter()
    seqs = text_file_sequences(corpus, workers=_SETTINGS["workers"])
    tokenize = time.perf_counter() - t0
    out = _fit_ours(seqs, epochs)
    out["times"]["tokenize"] = tokenize
    return out


def _scores(kv) -> dict[str, float]:
    from tokembed.evaluation import evaluate_vectors

    res = evaluate_vectors(kv, SETS)  # analogies among the 30,000 most frequent keys (gensim's restrict_vocab)
    out = {}
    for name, r in res.items():
        value = r.get("spearman", r.get("accuracy"))
        out[name] = float("nan") if value is None else float(value)  # None: too few items found to score
    return out


def _same_work(ours: dict, ref_words: list[str], ref_records: int) -> None:
    if ours["wv"].index_to_key != ref_words:
        a, b = set(ours["wv"].index_to_key), set(ref_words)
        raise CheckFailed(f"vocabularies differ: {len(a - b)} keys only ours, {len(b - a)} only the reference's "
                          "(or the same keys in another order)")
    if ours["n_records"] != ref_records:
        raise CheckFailed(f"{ours['n_records']:,} co-occurrence records (ours) vs {ref_records:,}")


def _split(ours: dict, ref: dict) -> str:
    t_o, t_r = ours["times"], ref["times"]
    ours_count = t_o.get("tokenize", 0.0) + t_o["count"]
    ref_count = t_r["vocab_count"] + t_r["cooccur"] + t_r["shuffle"]
    read = f"reading and tokenizing {t_o['tokenize']:.1f} s + " if "tokenize" in t_o else ""
    return (f"counting {ours_count:.1f} s ({read}co-occurrences {t_o['count']:.1f} s) vs {ref_count:.1f} s "
            f"(vocab_count {t_r['vocab_count']:.1f} + cooccur {t_r['cooccur']:.1f} + shuffle {t_r['shuffle']:.1f}), "
            f"training {t_o['train']:.1f} s vs {t_r['glove']:.1f} s ({t_o['train'] / t_r['glove']:.2f}x)")


def _check(enforce: bool):
    def check(ours: dict, ref: dict) -> str:
        kv_ref = stanford.read_vectors(ref["work"], _SETTINGS["vector_size"])  # untimed: the parse of their output
        _same_work(ours, kv_ref.index_to_key, ref["n_records"])
        so, sr = _scores(ours["wv"]), _scores(kv_ref)
        scores = ", ".join(f"{k} {so[k]:.3f} vs {sr[k]:.3f}" for k in SETS)
        costs = (f"cost after epoch 1 {ours['costs'][0]:.4f} vs {ref['costs'][0]:.4f}, last {ours['costs'][-1]:.4f} "
                 f"vs {ref['costs'][-1]:.4f}") if ref["costs"] else "reference costs not parsed"
        detail = (f"same {len(ours['wv']):,} keys in the same order and {ours['n_records']:,} records; "
                  f"{_split(ours, ref)}; scores (ours vs reference): {scores}; {costs}")
        if not enforce:
            return detail + "; TRIAL SIZE: scores NOT enforced (not meaningful on a small corpus)"
        worse = [k for k in SETS if not so[k] >= sr[k] - TOLERANCE]  # NaN on either side fails too
        if worse:
            raise CheckFailed(f"ours scores more than {TOLERANCE} below the reference on {', '.join(worse)}: {detail}")
        return detail + f"; every score of ours >= the reference's - {TOLERANCE} (enforced)"

    return check


def _work_root(case: Case) -> Path:
    """A temporary folder for the reference's files, removed with ``case`` (or at exit)."""
    root = Path(tempfile.mkdtemp(prefix="tokembed-bench-glove-"))
    weakref.finalize(case, shutil.rmtree, root, True)
    return root


def _glove_case(build: str) -> Case:
    from tokembed.plugins.glove import GloVe
    from tokembed.text import fast

    tools = stanford.tools(build)
    corpus, trial_tokens = _corpus()
    GloVe.warmup()
    fast.warmup()
    epochs = _epochs()
    root: list[Path] = []

    def reference() -> dict:  # each call in a new folder under root, so the files checked are that call's
        return stanford.run_pipeline(tools, corpus, Path(tempfile.mkdtemp(dir=root[0])), epochs=epochs, **_SETTINGS)

    size = corpus.stat().st_size
    what = ("wv_corpus, the whole file" if trial_tokens is None else
            f"TRIAL SIZE: the first {trial_tokens:,} tokens of wv_corpus (TOKEMBED_BENCH_TOKENS), scores not "
            "enforced")
    notes = (
        f"Data: {what} ({size:,} bytes), one document per line; both sides read this same file inside the timed "
        "call. Ours: read it, split it at newlines and its tokens with the Numba `whitespace_split` scan "
        "(`tokembed.text.fast.index_words`, 2 threads; the setup verified the file holds no whitespace but space, "
        "tab and newline, where GloVe's tools split), pack TokenSequences, then `GloVe.fit`: co-occurrence "
        "counting, shuffle and training in memory, float32; the vectors stay in memory. Reference: vocab_count and "
        "cooccur each read and tokenize the text (one thread); vocab_count writes vocab.txt, cooccur writes its "
        "float64 records (16 bytes each) to a file, shuffle writes them shuffled to a second file (their pipeline's "
        "files, kept), glove trains in double on 2 threads and writes `-binary 1` output (W, W~ and biases, float64; "
        "no text file); reading that file back (W + W~, as their `-model 2`) is untimed, in the check. Same "
        "settings: 100 dimensions, window 10 (1/d weighting, symmetric), min_count 5, x_max 10, alpha 0.75, learning "
        f"rate 0.05, gradient clipping 100, 2 threads, {epochs} epochs, output W + W~. The check line splits counting "
        "(ours: reading and tokenizing + co-occurrences) from training. Reference build: "
        f"{tools.describe()}. Scores: Spearman rho (word pairs, every key), analogy accuracy among the 30,000 most "
        "frequent keys, by tokembed.evaluation on both sides; enforced: each of ours >= the reference's - "
        f"{TOLERANCE}, else the check fails.")
    if epochs != _EPOCHS:
        notes += f" SHORTENED RUN: {epochs} epochs (TOKEMBED_BENCH_EPOCHS)."
    case = Case(ours=lambda: _run_ours(corpus, epochs), reference=reference, check=_check(trial_tokens is None),
                work_bytes=size, notes=notes, trial=trial_tokens is not None or epochs != _EPOCHS)
    root.append(_work_root(case))
    return case


_DATA = ("wv_corpus (86.7 MB, 15.35 M tokens, 1.82 M lines; one document per line, as GloVe's cooccur treats a "
         "newline); both sides read the text file inside the timed call"
         + (". TRIAL SIZE (TOKEMBED_BENCH_TOKENS or TOKEMBED_BENCH_TRIAL): only the first lines, scores not "
            "enforced; see the notes" if os.environ.get("TOKEMBED_BENCH_TOKENS")
            or os.environ.get("TOKEMBED_BENCH_TRIAL", "").strip() == "1" else ""))
_OURS = ("tokembed: read the file, `index_words(lines, 'whitespace_split')`, TokenSequences, `GloVe(...).fit` "
         "(cooccurrence plugin + Numba AdaGrad, Hogwild)")
_CHECK = (f"same vocabulary and co-occurrence records; every score of ours >= the reference's - {TOLERANCE} "
          "(wordsim353, simlex999, google_analogy)")


@benchmark(
    "glove",
    description="GloVe training on wv_corpus from its text file, 100 dimensions, window 10, min_count 5, x_max 10, "
    "15 epochs, 2 threads, against the Stanford GloVe tools built with -Ofast",
    ours=_OURS,
    reference="Stanford GloVe C tools vocab_count + cooccur + shuffle + glove (-binary 1), built from source with "
    "-Ofast -march=native -funroll-loops (their Makefile's alternative flags)",
    check=_CHECK,
    data=_DATA,
    libraries=("numba",),
)
def glove() -> Case:
    return _glove_case("ofast")


@benchmark(
    "glove_default_build",
    description="The glove benchmark against the Stanford GloVe tools built with their Makefile's default flags "
    "(-O3 -march=native -funroll-loops)",
    ours=_OURS,
    reference="Stanford GloVe C tools vocab_count + cooccur + shuffle + glove (-binary 1), built from source with "
    "their Makefile as shipped (-O3 -march=native -funroll-loops)",
    check=_CHECK,
    data=_DATA,
    libraries=("numba",),
)
def glove_default_build() -> Case:
    return _glove_case("default")


def _bpe_check(ours: dict, ref: dict) -> str:
    words = stanford.vocab_words(ref["work"])
    if set(ours["wv"].index_to_key) != set(words) or ours["n_records"] != ref["n_records"]:
        raise CheckFailed(f"{len(ours['wv']):,} keys / {ours['n_records']:,} records (ours) vs "
                          f"{len(words):,} / {ref['n_records']:,}")
    return f"same {len(words):,} piece keys and {ours['n_records']:,} records; {_split(ours, ref)}"


@benchmark(
    "glove_bpe32k",
    description="The same GloVe over the pieces of a 32k word-level BPE tokenizer trained on wv_corpus (time only)",
    ours="tokembed `GloVe(...).fit(TokenSequences.from_tokenizer(bpe, lines))`",
    reference="Stanford GloVe C tools (built with -Ofast) on the same pieces, written one document per line, "
    "separated by spaces",
    check="same piece vocabulary and co-occurrence records",
    data="wv_corpus, BPE vocab_size 32000 with a </w> end-of-word suffix (trained and applied untimed)",
    libraries=("numba",),
)
def glove_bpe32k() -> Case:
    from tokembed.plugins.bpe.tokenizer import BPETokenizer
    from tokembed.plugins.glove import GloVe
    from tokembed.sequences import TokenSequences

    tools = stanford.tools("ofast")
    text, trial_tokens = _corpus()  # a trial slice with TOKEMBED_BENCH_TOKENS, as the glove benchmark's
    lines = text.read_text(encoding="utf-8").splitlines()
    tok = BPETokenizer(vocab_size=32_000, end_of_word_suffix="</w>", pre_tokenizer="whitespace_split",
                       seed=0).fit(lines)
    seqs = TokenSequences.from_tokenizer(tok, lines, num_workers=2)
    GloVe.warmup()
    epochs = _epochs()
    root: list[Path] = []

    def reference() -> dict:
        return stanford.run_pipeline(tools, corpus, Path(tempfile.mkdtemp(dir=root[0])), epochs=epochs, **_SETTINGS)

    case = Case(ours=lambda: _fit_ours(seqs, epochs), reference=reference, check=_bpe_check,
                notes="Time only (piece vectors are not word vectors). Ours starts from the pieces' token ids, made "
                "untimed in the setup; the reference reads the pieces from a text file (its tokenizing timed). "
                f"Settings as the glove benchmark's; reference build: {tools.describe()}."
                + ("" if epochs == _EPOCHS else f" SHORTENED RUN: {epochs} epochs.")
                + ("" if trial_tokens is None else f" TRIAL SIZE: the first {trial_tokens:,} tokens of wv_corpus."),
                trial=trial_tokens is not None or epochs != _EPOCHS)
    root.append(_work_root(case))
    corpus = root[0] / "pieces.txt"
    vocab = seqs.vocab
    with open(corpus, "w", encoding="utf-8") as fh:
        for doc in seqs:
            fh.write(" ".join(vocab[i] for i in doc.tolist()) + "\n")
    case.work_bytes = corpus.stat().st_size
    return case
