"""The corpus-statistics engine on a corpus of about 1 GB: a 2-worker Dask LocalCluster against the local engine
(threads of one process), for BPE training and TF-IDF's document frequencies, with identical results checked.

The corpus is built once from the fetched datasets prose_mix and wv_corpus by repetition with variation (each copy
shuffles the lines and marks the long words of a third of them with a copy-specific suffix, so the vocabulary
keeps growing as in a larger real corpus), under ``~/.cache/tokembed/bench/`` (``TOKEMBED_ENGINE_BENCH_MB`` sets
its size in MB, default 1000). On 2 cores the cluster cannot be faster than the threads, which already use both:
what it buys is that the client never reads the corpus and holds only the merged counts.
"""

from __future__ import annotations

import os
import random
import re
import resource
import sys
from pathlib import Path

from . import Case, CheckFailed, benchmark

_SUFFIXES = ["", "ish", "ward", "ling", "kin", "ster", "ette", "dom", "hood", "ful", "less", "ment", "ness", "ity"]
_LONG_WORD = re.compile(r"\b([A-Za-z]{6,})\b")


def corpus_path() -> Path:
    """The benchmark corpus, built on first use (a few minutes): copies of prose_mix + wv_corpus with variation."""
    target = int(os.environ.get("TOKEMBED_ENGINE_BENCH_MB", "1000")) * 10 ** 6
    folder = Path.home() / ".cache" / "tokembed" / "bench"
    path = folder / f"engine-corpus-{target // 10 ** 6}mb.txt"
    if path.exists() and path.stat().st_size >= target:
        return path
    folder.mkdir(parents=True, exist_ok=True)
    return write_corpus(path, target)


def write_corpus(path: Path, target: int, *, progress=None) -> Path:
    """Write about ``target`` bytes of text to ``path`` (through a temporary name): copies of the non-blank lines of
    prose_mix + wv_corpus, each copy shuffled with its own seed and with the long words (6+ letters) of every third
    line given the copy's suffix (``ish``, ``ward``, ... then ``ish14``, ``ward15``, ...: a suffix never repeats
    after the 14th copy), so each copy adds new word types and the vocabulary keeps growing with the size. The text
    up to ``target`` bytes does not depend on ``target``: a smaller corpus is a prefix of a larger one.
    ``progress(written_bytes)`` is called after each copy when given. Returns ``path``."""
    from tokembed.datasets import dataset_path

    lines = []
    for name in ("prose_mix", "wv_corpus"):
        source = dataset_path(name)
        files = sorted(source.rglob("*")) if source.is_dir() else [source]
        for f in files:
            if f.is_file():
                lines.extend(line for line in f.read_text(encoding="utf-8").splitlines() if line.strip())
    tmp = path.with_name(path.name + ".tmp")
    written = 0
    with open(tmp, "w", encoding="utf-8") as out:
        copy = 0
        while written < target:
            rng = random.Random(copy)
            order = list(range(len(lines)))
            rng.shuffle(order)
            suffix = _SUFFIXES[copy % len(_SUFFIXES)] + ("" if copy < len(_SUFFIXES) else str(copy))
            for n, i in enumerate(order):
                line = lines[i]
                if suffix and n % 3 == 0:
                    line = _LONG_WORD.sub(lambda m: m.group(1) + suffix, line)
                out.write(line + "\n")
                written += len(line.encode("utf-8")) + 1
                if written >= target:
                    break
            copy += 1
            if progress is not None:
                progress(written)
    os.replace(tmp, path)
    return path


def _client_peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _report(label: str, engine) -> None:
    s = engine.last_stats
    total = s.count_seconds + s.merge_seconds
    share = s.merge_seconds / total if total else 0.0
    print(f"[engine bench] {label}: {s.partitions} partitions on {s.workers} workers, merge depth {s.depth}; task "
          f"seconds: count {s.count_seconds:.1f}, merge {s.merge_seconds:.1f} ({share:.1%} merging); client peak "
          f"RSS so far {_client_peak_mb():,.0f} MB", file=sys.stderr)


_NOTES = ("Both sides on this 2-core machine. Local: the streamed fit, as without an engine: (BPE: one reader, two "
          "counting threads; TF-IDF: the local engine's two threads over 64 MiB partitions). Dask: a LocalCluster of "
          "2 worker processes (1 thread each), 64 MiB partitions, started in the untimed setup; workers read their "
          "byte ranges, only the merged counts reach the client. The merge share and the client's peak RSS are "
          "printed on standard error ([engine bench]); the memory column is the largest process (client or "
          "worker).")


@benchmark(
    "engine_bpe",
    description="BPE training (8,000 entries) on a 1 GB corpus: word counts on a 2-worker Dask LocalCluster vs the "
    "streamed local fit; the merge loop runs on the client either way.",
    ours="`engine.count(tok.partial_counts, corpus)` then `tok.fit_counts(counts)` with `open_engine('dask', "
    "workers=2, partition_mb=64)`",
    reference="`BPETokenizer(vocab_size=8000).fit(corpus)` (streamed, local threads)",
    check="identical vocabulary and merges",
    data="~/.cache/tokembed/bench/engine-corpus-1000mb.txt (prose_mix + wv_corpus, repeated with variation)",
    libraries=("dask", "distributed", "numba"),
)
def engine_bpe() -> Case:
    from tokembed.corpus import Corpus
    from tokembed.engine import open_engine
    from tokembed.plugins.bpe.tokenizer import BPETokenizer

    path = corpus_path()
    corpus = Corpus((path,))
    engine = open_engine("dask", workers=2, partition_mb=64)
    engine.start()

    def ours():
        tok = BPETokenizer(vocab_size=8000)
        tok.fit_counts(engine.count(tok.partial_counts, corpus))
        _report("bpe on dask", engine)
        return tok

    def reference():
        tok = BPETokenizer(vocab_size=8000).fit(corpus)
        print(f"[engine bench] bpe local: client peak RSS so far {_client_peak_mb():,.0f} MB", file=sys.stderr)
        return tok

    def check(a, b) -> str:
        if a.merges_ != b.merges_ or a.get_vocab() != b.get_vocab():
            raise CheckFailed("the dask engine learned other merges than the local fit")
        return f"{len(a.merges_):,} merges and {a.get_vocab_size():,} entries identical"

    return Case(ours=ours, reference=reference, check=check, work_bytes=path.stat().st_size, notes=_NOTES)


@benchmark(
    "engine_tfidf",
    description="TF-IDF document frequencies and vocabulary (min_df 5) of a 1 GB corpus, one document per line: "
    "a 2-worker Dask LocalCluster vs the local engine's threads.",
    ours="`engine.count(vec.partial_counts, corpus)` then `vec.fit_counts(...)` with `open_engine('dask', workers=2, "
    "partition_mb=64)`",
    reference="the same with `open_engine('local', workers=2, partition_mb=64)`",
    check="identical vocabulary_ and idf_",
    data="~/.cache/tokembed/bench/engine-corpus-1000mb.txt",
    libraries=("dask", "distributed", "numba"),
)
def engine_tfidf() -> Case:
    import numpy as np

    from tokembed.corpus import Corpus
    from tokembed.engine import open_engine
    from tokembed.plugins.tfidf.vectorizer import TfidfVectorizer

    path = corpus_path()
    corpus = Corpus((path,))
    dask_engine = open_engine("dask", workers=2, partition_mb=64)
    dask_engine.start()
    local_engine = open_engine("local", workers=2, partition_mb=64)

    def run(engine, label):
        def side():
            vec = TfidfVectorizer(min_df=5)
            vec.fit_counts(engine.count(vec.partial_counts, corpus))
            _report(f"tfidf on {label}", engine)
            return vec
        return side

    def check(a, b) -> str:
        if a.vocabulary_ != b.vocabulary_ or not np.array_equal(a.idf_, b.idf_):
            raise CheckFailed("the two engines selected different vocabularies or idf")
        return f"{len(a.vocabulary_):,} terms and their idf identical"

    return Case(ours=run(dask_engine, "dask"), reference=run(local_engine, "local threads"), check=check,
                work_bytes=path.stat().st_size, notes=_NOTES)


@benchmark(
    "engine_metrics",
    description="The tokenizer metrics of metrics.json (every default metric) for a word tokenizer over wv_corpus: "
    "measured partition by partition on a 2-worker Dask LocalCluster and merged, vs one pass on the client.",
    ours="`engine.count(MeasureDocuments(tok, run_metrics(None, reg)), corpus)` with `open_engine('dask', "
    "workers=2, partition_mb=16)`, then `metrics_of(run.attach(tok))`",
    reference="`tokenizer_metrics(tok, corpus, registry=reg)` (what `tokembed run` does without an engine)",
    check="identical metrics",
    data="wv_corpus (86.7 MB, one document per line)",
    libraries=("dask", "distributed", "numba"),
)
def engine_metrics() -> Case:
    from tokembed.corpus import Corpus
    from tokembed.datasets import dataset_path
    from tokembed.engine import open_engine
    from tokembed.metrics import MeasureDocuments, metrics_of, run_metrics, tokenizer_metrics
    from tokembed.plugins.word.tokenizer import WordTokenizer
    from tokembed.registry import build_registry

    path = dataset_path("wv_corpus")
    corpus = Corpus((path,))
    reg = build_registry()
    tok = WordTokenizer(pre_tokenizer="whitespace_split", min_frequency=5).fit(corpus)
    engine = open_engine("dask", workers=2, partition_mb=16)
    engine.start()
    measure = MeasureDocuments(tok, run_metrics(None, reg))

    def ours():
        run = engine.count(measure, corpus)
        _report("metrics on dask", engine)
        return metrics_of(run.attach(tok))

    def reference():
        return tokenizer_metrics(tok, corpus, registry=reg)

    def check(a, b) -> str:
        if a != b:
            raise CheckFailed(f"the merged metrics differ: {sorted(k for k in a if a[k] != b.get(k))}")
        return f"{len(a)} values identical ({a['documents']:,} documents, {a['tokens']:,} tokens)"

    return Case(ours=ours, reference=reference, check=check, work_bytes=path.stat().st_size,
                notes="The client measures its chunks on its default threads; the cluster's two worker processes "
                      "measure two partitions at a time. The merge (sums and id counts) is a small part.")
