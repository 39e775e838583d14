"""Co-occurrence matrix on wv_corpus (window 10, harmonic, symmetric, min_count 5) against the Stanford GloVe C
tools ``vocab_count`` + ``cooccur`` + ``shuffle`` run on the same settings in the same benchmark.

The Stanford tools are not on any package registry: build them from github.com/stanfordnlp/GloVe (``make``) and
point ``TOKEMBED_GLOVE_BIN`` at the folder that holds the binaries (default ``/work/ref/GloVe/build``). Nothing of
theirs is part of this repository.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import weakref
from array import array
from pathlib import Path

import numpy as np

from . import Case, CheckFailed, benchmark

_BIN_ENV = "TOKEMBED_GLOVE_BIN"
_BIN_DEFAULT = "/work/ref/GloVe/build"
_TOOLS = ("vocab_count", "cooccur", "shuffle")
_SETTINGS = {"window": 10, "symmetric": True, "weighting": "harmonic", "min_count": 5}
_RECORD = np.dtype([("word1", "<i4"), ("word2", "<i4"), ("value", "<f8")])


def _glove_bin() -> Path:
    path = Path(os.environ.get(_BIN_ENV, _BIN_DEFAULT))
    missing = [t for t in _TOOLS if not (path / t).is_file()]
    if missing:
        raise RuntimeError(
            f"the Stanford GloVe tools are not at {path} (missing: {', '.join(missing)}): build them from "
            f"https://github.com/stanfordnlp/GloVe with `make` and set {_BIN_ENV} to their build/ folder")
    return path


def _token_sequences(path: Path):
    """wv_corpus as TokenSequences, split exactly as GloVe's tools read it: documents are the lines (split on
    "\\n"), tokens are separated by spaces (wv_corpus holds single spaces between [a-z'] tokens only)."""
    from tokembed.sequences import TokenSequences

    text = path.read_text(encoding="utf-8")
    index: dict[str, int] = {}
    ids = array("i")
    lengths = array("q")
    for line in text.split("\n"):
        toks = line.split()
        ids.extend([index.setdefault(t, len(index)) for t in toks])
        lengths.append(len(toks))
    del text
    offsets = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(np.frombuffer(lengths, np.int64), out=offsets[1:])
    return TokenSequences(np.frombuffer(ids, np.int32), offsets, list(index))


@benchmark(
    "cooccurrence_wv",
    description="Word-word co-occurrence matrix of wv_corpus: window 10, harmonic 1/d weighting, symmetric, "
    "min_count 5 (the settings of the GloVe issue).",
    ours="tokembed `CooccurrenceVectorizer(window=10, symmetric=True, weighting='harmonic', min_count=5).fit(seqs)` "
    "-> float32 CSR (2 threads), from the corpus' token ids",
    reference="Stanford GloVe C tools `vocab_count -min-count 5` + `cooccur -window-size 10 -symmetric 1 -memory 4` "
    "+ `shuffle -memory 4`, from the text file",
    check="same vocabulary in the same order, same non-zero cells, every value within 1e-6 relative",
    data="wv_corpus (86,713,425 bytes, 15.35 M tokens, 1.82 M lines; documents are lines)",
    libraries=("numba", "scipy"),
)
def cooccurrence_wv() -> Case:
    from tokembed.datasets import dataset_path
    from tokembed.plugins.cooccurrence import CooccurrenceVectorizer

    bin_dir = _glove_bin()
    corpus = dataset_path("wv_corpus")
    seqs = _token_sequences(corpus)
    CooccurrenceVectorizer.warmup()
    work = Path(tempfile.mkdtemp(prefix="tokembed-bench-glove-"))

    def ours():
        cv = CooccurrenceVectorizer(**_SETTINGS, workers=2).fit(seqs)
        cv.matrix_  # noqa: B018 (built in fit; read to be sure it is part of the timed work)
        return cv

    def reference():
        vocab_file, cooc, shuf = work / "vocab.txt", work / "cooc.bin", work / "cooc.shuf.bin"
        with open(corpus, "rb") as fin, open(vocab_file, "wb") as fout:
            subprocess.run([str(bin_dir / "vocab_count"), "-min-count", "5", "-verbose", "0"], stdin=fin,
                           stdout=fout, stderr=subprocess.DEVNULL, check=True)
        with open(corpus, "rb") as fin, open(cooc, "wb") as fout:
            subprocess.run([str(bin_dir / "cooccur"), "-vocab-file", str(vocab_file), "-window-size", "10",
                            "-symmetric", "1", "-distance-weighting", "1", "-memory", "4.0", "-verbose", "0",
                            "-overflow-file", str(work / "overflow")], stdin=fin, stdout=fout,
                           stderr=subprocess.DEVNULL, check=True)
        with open(cooc, "rb") as fin, open(shuf, "wb") as fout:
            subprocess.run([str(bin_dir / "shuffle"), "-memory", "4.0", "-verbose", "0", "-temp-file",
                            str(work / "shuffle")], stdin=fin, stdout=fout, stderr=subprocess.DEVNULL, check=True)
        return vocab_file, shuf

    def check(cv, ref) -> str:
        vocab_file, shuf = ref
        words = [line.split(" ", 1)[0] for line in vocab_file.read_text(encoding="utf-8").splitlines()]
        if words != cv.index_to_key_:
            diff = next((i for i, (a, b) in enumerate(zip(words, cv.index_to_key_)) if a != b),
                        min(len(words), len(cv.index_to_key_)))
            raise CheckFailed(f"vocabularies differ: {len(cv.index_to_key_):,} words (ours), {len(words):,} "
                              f"(vocab_count); first difference at row {diff}")
        rec = np.fromfile(shuf, dtype=_RECORD)
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
                f"difference {worst:.1e} (ours float32, cooccur float64)")

    case = Case(
        ours=ours, reference=reference, check=check, work_bytes=corpus.stat().st_size,
        notes="Ours starts from the corpus' token ids (a TokenSequences, as a recipe's tokenizer stage hands "
        "them over; built untimed in the setup by splitting the lines on spaces, exactly as GloVe's tools read "
        "them) and returns the float32 CSR matrix in memory, counted on 2 threads. The reference reads the text "
        "file twice (vocab_count, cooccur), so its time includes tokenizing and hashing the words, which ours "
        "does not; it writes the float64 records to disk (cooccur: dense array for frequent pairs, sorted "
        "overflow files merged; shuffle: the records in random order, which GloVe's trainer needs and our GloVe "
        "embedder does in memory), single-threaded, `-memory 4.0` as in GloVe's demo.sh. Peak RSS of the "
        "reference is the largest of the three tools (and of the Python process that runs them). Ours: counts "
        "as int64 multiples of 1/2520 (exact), a dense block for the 2,048 most frequent words, radix-sorted "
        "runs for the other pairs.",
    )  # fmt: skip
    weakref.finalize(case, shutil.rmtree, work, True)  # the reference's temporary files go with the case
    return case
