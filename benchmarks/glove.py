"""GloVe on wv_corpus against the Stanford GloVe C tools (vocab_count, cooccur, shuffle, glove), same settings,
with word-similarity and analogy scores of both sides; and the same model over a 32k BPE tokenizer's pieces.

The Stanford tools are not on the package registries: build them from their published source
(github.com/stanfordnlp/GloVe, ``make``) and point ``TOKEMBED_GLOVE_BIN`` at the folder holding ``vocab_count``,
``cooccur``, ``shuffle`` and ``glove`` (as for the ``cooccurrence_wv`` benchmark, whose corpus reader this one
shares). The run is long
(the reference trains for about 6.5 minutes on 2 cores); ``GLOVE_BENCH_EPOCHS=2`` gives a short check that the
benchmark works (figures then are not the benchmark's). Run with ``--warmup 0 --repeat 1 --no-memory``: each
side once.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

from . import Case, CheckFailed, benchmark
from .cooccurrence import _BIN_ENV, _glove_bin, _token_sequences

SETS = ["wordsim353", "simlex999", "google_analogy"]
#: DATA.md's figures for the reference (15 iterations, 2 threads): training time and scores.
REFERENCE_FIGURES = {"train_s": 391.0, "wordsim353": 0.463, "simlex999": 0.236, "google_analogy": 0.141}
_SETTINGS = dict(vector_size=100, window=10, min_count=5, x_max=10.0, alpha=0.75, learning_rate=0.05, workers=2,
                 seed=1)
_DATA = ("wv_corpus (15.35 M tokens, one document per line, as the reference's cooccur treats a newline); ours gets "
         "the lines as token ids (TokenSequences, packed untimed), the reference reads the text file")


def _epochs() -> int:
    return int(os.environ.get("GLOVE_BENCH_EPOCHS", "15"))


def _tools() -> Path:
    folder = _glove_bin()  # vocab_count, cooccur and shuffle, or a clear error
    if not (folder / "glove").is_file():
        raise RuntimeError(f"the Stanford GloVe tools in {folder} lack glove: build it with make ({_BIN_ENV})")
    return folder


def _run_reference(corpus: Path, epochs: int) -> dict:
    """vocab_count + cooccur + shuffle + glove in a temporary folder; the vectors (W + W~, -model 2) and timings."""
    from tokembed.keyedvectors import KeyedVectors

    tools = _tools()
    s = _SETTINGS
    times: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="glove-ref-") as tmp:
        work = Path(tmp)

        def step(name: str, args: list[str], stdin: Path, stdout: Path | None) -> str:
            t0 = time.perf_counter()
            with open(stdin, "rb") as fin, open(stdout or os.devnull, "wb") as fout:
                proc = subprocess.run([str(tools / name), *args], stdin=fin, stdout=fout, stderr=subprocess.PIPE,
                                      cwd=work, check=False)
            times[name] = time.perf_counter() - t0
            if proc.returncode:
                raise RuntimeError(f"{name} failed ({proc.returncode}): {proc.stderr.decode()[-500:]}")
            return proc.stderr.decode("utf-8", "replace")

        step("vocab_count", ["-min-count", str(s["min_count"]), "-verbose", "0"], corpus, work / "vocab.txt")
        step("cooccur", ["-memory", "4.0", "-vocab-file", "vocab.txt", "-verbose", "0", "-window-size",
                         str(s["window"])], corpus, work / "cooc.bin")
        step("shuffle", ["-memory", "4.0", "-verbose", "0", "-seed", str(s["seed"])], work / "cooc.bin",
             work / "cooc.shuf.bin")
        n_records = (work / "cooc.bin").stat().st_size // 16  # CREC: int32 word1, int32 word2, float64 value
        log = step("glove", ["-save-file", "vectors", "-threads", str(s["workers"]), "-input-file", "cooc.shuf.bin",
                             "-x-max", str(s["x_max"]), "-alpha", str(s["alpha"]), "-eta", str(s["learning_rate"]),
                             "-iter", str(epochs), "-vector-size", str(s["vector_size"]), "-binary", "0",
                             "-model", "2", "-vocab-file", "vocab.txt", "-verbose", "2", "-seed", str(s["seed"])],
                   Path(os.devnull), None)
        kv = KeyedVectors.load_word2vec_format(work / "vectors.txt", no_header=True)
    keys = kv.index_to_key[:-1] if kv.index_to_key[-1] == "<unk>" else kv.index_to_key  # the appended <unk> row
    kv = KeyedVectors.from_arrays(keys, kv.vectors[:len(keys)])
    costs = [float(c) for c in re.findall(r"iter: \d+, cost: ([0-9.eE+-]+)", log)]
    return {"wv": kv, "n_records": n_records, "costs": costs, "times": times}


def _run_ours(seqs, epochs: int) -> dict:
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

    s = _SETTINGS
    t0 = time.perf_counter()
    model = Timed(vector_size=s["vector_size"], epochs=epochs, window=s["window"], min_count=s["min_count"],
                  x_max=s["x_max"], alpha=s["alpha"], learning_rate=s["learning_rate"], workers=s["workers"],
                  seed=s["seed"]).fit(seqs)
    total = time.perf_counter() - t0
    return {"wv": model.wv_, "n_records": model.n_records_, "costs": model.costs_,
            "times": {"count": model._count_s, "train": total - model._count_s}}


def _scores(kv) -> dict[str, float]:
    from tokembed.evaluation import evaluate_vectors

    res = evaluate_vectors(kv, SETS)  # analogies among the 30,000 most frequent keys (gensim's restrict_vocab)
    return {name: float(r.get("spearman", r.get("accuracy"))) for name, r in res.items()}


def _check(ours: dict, ref: dict) -> str:
    if ours["wv"].index_to_key != ref["wv"].index_to_key:
        a, b = set(ours["wv"].index_to_key), set(ref["wv"].index_to_key)
        raise CheckFailed(f"vocabularies differ: {len(a - b)} keys only ours, {len(b - a)} only the reference's "
                          "(or the same keys in another order)")
    if ours["n_records"] != ref["n_records"]:
        raise CheckFailed(f"{ours['n_records']:,} co-occurrence records (ours) vs {ref['n_records']:,}")
    so, sr = _scores(ours["wv"]), _scores(ref["wv"])
    t_o, t_r = ours["times"], ref["times"]
    prep_r = t_r["vocab_count"] + t_r["cooccur"] + t_r["shuffle"]
    scores = ", ".join(f"{k} {so[k]:.3f} vs {sr[k]:.3f}" for k in SETS)
    costs = (f"cost after epoch 1 {ours['costs'][0]:.4f} vs {ref['costs'][0]:.4f}, last {ours['costs'][-1]:.4f} vs "
             f"{ref['costs'][-1]:.4f}") if ref["costs"] else "reference costs not parsed"
    return (f"same {len(ours['wv']):,} keys in the same order and {ours['n_records']:,} records; counting "
            f"{t_o['count']:.1f} s vs {prep_r:.1f} s (vocab_count + cooccur + shuffle), training {t_o['train']:.1f} s "
            f"vs {t_r['glove']:.1f} s ({t_o['train'] / t_r['glove']:.2f}x); scores (ours vs reference): {scores}; "
            f"{costs}")


def _wv_seqs():
    from tokembed.datasets import dataset_path

    path = dataset_path("wv_corpus")
    return path, _token_sequences(path)


_NOTES = ("Same settings on both sides: 100 dimensions, window 10 (harmonic, symmetric), min_count 5, x_max 10, "
          "alpha 0.75, learning rate 0.05, gradient clipping 100, 2 threads, output W + W~. Each side's time is "
          "counting + training; the check line splits them. The reference's glove is compiled with its Makefile's "
          "-O3 -march=native; it trains in double, ours in float32. Scores: Spearman rho (word pairs, every key), "
          "analogy accuracy among the 30,000 most frequent keys, by tokembed.evaluation on both sides. DATA.md's "
          "reference figures on this machine kind: 391 s training; 0.463 / 0.236 / 0.141.")


@benchmark(
    "glove",
    description="GloVe training on wv_corpus, 100 dimensions, window 10, min_count 5, x_max 10, 15 epochs, 2 threads",
    ours="tokembed `GloVe(...).fit(TokenSequences)` (cooccurrence plugin + Numba AdaGrad, Hogwild)",
    reference="Stanford GloVe C tools vocab_count + cooccur + shuffle + glove, built from source",
    check="same vocabulary and co-occurrence records; scores and cost of both sides reported",
    data=_DATA,
    libraries=("numba",),
)
def glove() -> Case:
    _tools()
    corpus, seqs = _wv_seqs()
    from tokembed.plugins.glove import GloVe

    GloVe.warmup()
    epochs = _epochs()
    return Case(ours=lambda: _run_ours(seqs, epochs), reference=lambda: _run_reference(corpus, epochs), quality=True,
                check=_check, work_bytes=corpus.stat().st_size,
                notes=_NOTES + ("" if epochs == 15 else f" SHORTENED RUN: {epochs} epochs."))


def _bpe_check(ours: dict, ref: dict) -> str:
    if set(ours["wv"].index_to_key) != set(ref["wv"].index_to_key) or ours["n_records"] != ref["n_records"]:
        raise CheckFailed(f"{len(ours['wv']):,} keys / {ours['n_records']:,} records (ours) vs "
                          f"{len(ref['wv']):,} / {ref['n_records']:,}")
    t_o, t_r = ours["times"], ref["times"]
    return (f"same {len(ours['wv']):,} piece keys and {ours['n_records']:,} records; counting {t_o['count']:.1f} s "
            f"vs {t_r['vocab_count'] + t_r['cooccur'] + t_r['shuffle']:.1f} s, training {t_o['train']:.1f} s vs "
            f"{t_r['glove']:.1f} s ({t_o['train'] / t_r['glove']:.2f}x)")


@benchmark(
    "glove_bpe32k",
    description="The same GloVe over the pieces of a 32k word-level BPE tokenizer trained on wv_corpus (time only)",
    ours="tokembed `GloVe(...).fit(TokenSequences.from_tokenizer(bpe, lines))`",
    reference="Stanford GloVe C tools on the same pieces, written one document per line, separated by spaces",
    check="same piece vocabulary and co-occurrence records",
    data="wv_corpus, BPE vocab_size 32000 with a </w> end-of-word suffix (trained and applied untimed)",
    libraries=("numba",),
)
def glove_bpe32k() -> Case:
    _tools()
    from tokembed.datasets import dataset_path
    from tokembed.plugins.bpe.tokenizer import BPETokenizer
    from tokembed.plugins.glove import GloVe
    from tokembed.sequences import TokenSequences

    lines = dataset_path("wv_corpus").read_text(encoding="utf-8").splitlines()
    tok = BPETokenizer(vocab_size=32_000, end_of_word_suffix="</w>", pre_tokenizer="whitespace_split",
                       seed=0).fit(lines)
    seqs = TokenSequences.from_tokenizer(tok, lines, num_workers=2)
    GloVe.warmup()
    tmp = Path(tempfile.mkdtemp(prefix="glove-bpe-"))
    corpus = tmp / "pieces.txt"
    vocab = seqs.vocab
    with open(corpus, "w", encoding="utf-8") as fh:
        for doc in seqs:
            fh.write(" ".join(vocab[i] for i in doc.tolist()) + "\n")
    epochs = _epochs()
    return Case(ours=lambda: _run_ours(seqs, epochs), reference=lambda: _run_reference(corpus, epochs),
                check=_bpe_check, work_bytes=corpus.stat().st_size,
                notes=_NOTES.split(" Scores:")[0] + " Time only (piece vectors are not word vectors)."
                + ("" if epochs == 15 else f" SHORTENED RUN: {epochs} epochs."))
