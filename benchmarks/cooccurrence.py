"""Co-occurrence matrix of wv_corpus (window 10, harmonic, symmetric, min_count 5) against the Stanford GloVe C
tools ``vocab_count`` + ``cooccur`` on the same settings, both from the same text file: ours on its default threads
(``cooccurrence_wv``) and on one core (``cooccurrence_wv_1core``), as the C tools run.

The Stanford tools are compiled from their source by :mod:`benchmarks._stanford_glove` (their Makefile's default
flags; set ``TOKEMBED_GLOVE_SRC``), the same builds the GloVe rows use. Nothing of theirs is part of this repository.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
import weakref
from pathlib import Path

import numpy as np

from . import Case, CheckFailed, benchmark

_SETTINGS = {"window": 10, "symmetric": True, "weighting": "harmonic", "min_count": 5}
_RECORD = np.dtype([("word1", "<i4"), ("word2", "<i4"), ("value", "<f8")])


def _glove_bin() -> Path:
    """The folder of the Stanford tools built with their Makefile's default flags (compiled on first use)."""
    from ._stanford_glove import tools

    return tools("default").folder


_DATA = ("wv_corpus (86,713,425 bytes, 15.35 M tokens, 1.82 M lines; documents are lines), one text file read by "
         "both sides")
_OURS = ("tokembed: read the file, split the lines on whitespace (`tokembed.text.fast.index_words(lines, "
         "'whitespace_split')`) and `CooccurrenceVectorizer(window=10, symmetric=True, weighting='harmonic', "
         "min_count=5).fit(seqs)` -> float32 CSR")
_REFERENCE = ("Stanford GloVe C tools `vocab_count -min-count 5` + `cooccur -window-size 10 -symmetric 1 -memory 4` "
              "(their Makefile's default flags: -O3 -march=native), from the file, one thread")
_CHECK = "same vocabulary in the same order, same non-zero cells, every value within 1e-6 relative"


def _case(workers: int, confine: bool) -> Case:
    """Both sides from the same text file; ours on ``workers`` threads, on one core when ``confine``."""
    import contextlib

    from tokembed.plugins.cooccurrence import CooccurrenceVectorizer

    from ._common import dataset_file, one_core, text_file_sequences

    bin_dir = _glove_bin()
    corpus = dataset_file("wv_corpus")
    CooccurrenceVectorizer.warmup()
    work = Path(tempfile.mkdtemp(prefix="tokembed-bench-glove-"))

    def ours():
        with one_core() if confine else contextlib.nullcontext():
            seqs = text_file_sequences(corpus, workers)
            cv = CooccurrenceVectorizer(**_SETTINGS, workers=workers).fit(seqs)
            cv.matrix_  # noqa: B018 (built in fit; read to be sure it is part of the timed work)
        return cv

    def reference():
        vocab_file, cooc = work / "vocab.txt", work / "cooc.bin"
        with open(corpus, "rb") as fin, open(vocab_file, "wb") as fout:
            subprocess.run([str(bin_dir / "vocab_count"), "-min-count", "5", "-verbose", "0"], stdin=fin,
                           stdout=fout, stderr=subprocess.DEVNULL, check=True)
        with open(corpus, "rb") as fin, open(cooc, "wb") as fout:
            subprocess.run([str(bin_dir / "cooccur"), "-vocab-file", str(vocab_file), "-window-size", "10",
                            "-symmetric", "1", "-distance-weighting", "1", "-memory", "4.0", "-verbose", "0",
                            "-overflow-file", str(work / "overflow")], stdin=fin, stdout=fout,
                           stderr=subprocess.DEVNULL, check=True)
        return vocab_file, cooc

    def shuffle_seconds(cooc: Path) -> float:
        """GloVe's next step, untimed in the rows: shuffle the records once, and check it kept them all."""
        shuf = work / "cooc.shuf.bin"
        t0 = time.perf_counter()
        with open(cooc, "rb") as fin, open(shuf, "wb") as fout:
            subprocess.run([str(bin_dir / "shuffle"), "-memory", "4.0", "-verbose", "0", "-temp-file",
                            str(work / "shuffle")], stdin=fin, stdout=fout, stderr=subprocess.DEVNULL, check=True)
        seconds = time.perf_counter() - t0
        if shuf.stat().st_size != cooc.stat().st_size:
            raise CheckFailed(f"shuffle wrote {shuf.stat().st_size:,} bytes from {cooc.stat().st_size:,}")
        shuf.unlink()
        return seconds

    def check(cv, ref) -> str:
        vocab_file, cooc = ref
        words = [line.split(" ", 1)[0] for line in vocab_file.read_text(encoding="utf-8").splitlines()]
        if words != cv.index_to_key_:
            diff = next((i for i, (a, b) in enumerate(zip(words, cv.index_to_key_)) if a != b),
                        min(len(words), len(cv.index_to_key_)))
            raise CheckFailed(f"vocabularies differ: {len(cv.index_to_key_):,} words (ours), {len(words):,} "
                              f"(vocab_count); first difference at row {diff}")
        rec = np.fromfile(cooc, dtype=_RECORD)
        # GloVe's ids are 1-based lines of vocab.txt, which is our row order (checked above)
        order = np.lexsort((rec["word2"], rec["word1"]))
        rows = rec["word1"][order].astype(np.int64) - 1
        cols = rec["word2"][order].astype(np.int64) - 1
        vals = rec["value"][order]
        m = cv.matrix_.tocoo()
        if m.nnz != rec.size:
            raise CheckFailed(f"{m.nnz:,} non-zero cells (ours) against {rec.size:,} records (cooccur)")
        if not (np.array_equal(m.row, rows) and np.array_equal(m.col, cols)):
            raise CheckFailed("the non-zero cells are not the same")
        rel = np.abs(m.data.astype(np.float64) - vals) / vals
        worst = float(rel.max())
        if worst > 1e-6:
            k = int(rel.argmax())
            raise CheckFailed(f"cell ({words[rows[k]]}, {words[cols[k]]}): {m.data[k]!r} (ours) against "
                              f"{vals[k]!r} (cooccur), relative difference {worst:.2e}")
        return (f"{len(words):,} words in the same order, the same {rec.size:,} non-zero cells, largest relative "
                f"difference {worst:.1e} (ours float32, cooccur float64); GloVe's next step, `shuffle -memory 4` "
                f"of these records, in neither row, took {shuffle_seconds(cooc):.2f} s once")

    threads = ("one thread: the scanner and the counter run in the calling thread, and every thread of the process "
               "is pinned to one CPU" if confine else f"{workers} threads")
    case = Case(
        ours=ours, reference=reference, check=check, work_bytes=corpus.stat().st_size,
        notes=f"Both sides start from the same text file and end with the vocabulary and the matrix. Ours ({threads}) "
        "reads and decodes the file, splits it into lines and whitespace-separated tokens with the Numba scanner "
        "(ids by a hash table of the token bytes), counts the words, keeps those counted at least 5 times and "
        "counts the pairs: int64 multiples of 1/2520 (exact), a dense block for the 2,048 most frequent words, "
        "radix-sorted runs for the other pairs; it returns a float32 CSR matrix in memory. The reference reads the "
        "file twice on one thread (`vocab_count`, then `cooccur`, which hashes every word again), and `cooccur` "
        "writes the float64 records (a dense array for frequent pairs, sorted overflow files merged) to a file: "
        "the write is part of its time, reading them back is not. GloVe's pipeline then runs `shuffle` (the "
        "records in random order, which its trainer needs; our GloVe embedder shuffles in memory): it is in "
        "neither row, and the check line gives its time, measured once. Peak RSS of the reference is the "
        "larger of the two tools' and of the Python process that runs them.",
    )  # fmt: skip
    weakref.finalize(case, shutil.rmtree, work, True)  # the reference's temporary files go with the case
    return case


@benchmark(
    "cooccurrence_wv",
    description="Word-word co-occurrence matrix of wv_corpus from its text file: window 10, harmonic 1/d "
    "weighting, symmetric, min_count 5 (the settings of the GloVe issue); ours on 2 threads.",
    ours=_OURS + " (2 threads)",
    reference=_REFERENCE,
    check=_CHECK,
    data=_DATA,
    libraries=("numba", "scipy"),
)
def cooccurrence_wv() -> Case:
    return _case(workers=2, confine=False)


@benchmark(
    "cooccurrence_wv_1core",
    description="As cooccurrence_wv, ours on one core like the C tools: the like-for-like row.",
    ours=_OURS + " (one thread, pinned to one CPU)",
    reference=_REFERENCE,
    check=_CHECK,
    data=_DATA,
    libraries=("numba", "scipy"),
)
def cooccurrence_wv_1core() -> Case:
    return _case(workers=1, confine=True)
