"""The dask engine on LocalClusters on 127.0.0.1: the same counts and byte-identical run artifacts as one process,
whatever the partitions, killed workers, hash seeds or a cold Numba cache (skipped without the dask extra).

One cluster of two worker processes serves the module (about 5 s to start here); the hash-seed test starts its own
three workers, with a cold NUMBA_CACHE_DIR."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")

from tokembed.corpus import Corpus, Partition  # noqa: E402
from tokembed.engine import CountDocuments, merge_counts, open_engine  # noqa: E402
from tokembed.errors import CorpusReadError, EngineError  # noqa: E402
from tokembed.plugins.word.tokenizer import WordTokenizer  # noqa: E402
from tokembed.runner import run_recipe  # noqa: E402

from engine_helpers import DieOn, DieOnce, local_cluster, tokenizers, write_corpus  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster():
    with local_cluster() as cl:
        yield cl


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory):
    return write_corpus(tmp_path_factory.mktemp("engine-dask") / "corpus.txt")


def _engine(cluster, partition_mb):
    return open_engine("dask", address=cluster.scheduler_address, workers=2, partition_mb=partition_mb)


@pytest.mark.parametrize("unit, partition_mb", [("line", 0.002), ("paragraph", 0.04)])
def test_dask_counts_equal_one_process_for_every_counting_path(cluster, corpus_file, unit, partition_mb):
    corpus = Corpus((corpus_file,), unit=unit)
    expected = [tok.partial_counts(corpus) for tok in tokenizers()]
    if partition_mb:  # 2 KB ranges: some inside the 30 KB line, empty
        with _engine(cluster, partition_mb) as engine:
            parts = engine.partitions(corpus)
            assert len(parts) >= 8
            for tok, want in zip(tokenizers(), expected):
                assert engine.count(tok.partial_counts, corpus) == want, (tok, partition_mb)
            assert engine.last_stats.partitions == len(parts) and engine.last_stats.workers == 2
            # a single partition, the whole file: no merge task
            whole = [Partition(0, str(corpus_file), 0, corpus_file.stat().st_size, 0)]
            counted = engine.map_reduce(CountDocuments(tokenizers()[0].partial_counts, corpus), whole, merge_counts)
            assert counted.value == expected[0]


def test_a_worker_killed_in_a_count_or_a_merge_task_changes_nothing(cluster, corpus_file, tmp_path):
    corpus = Corpus((corpus_file,))
    tok = WordTokenizer()
    expected = tok.partial_counts(corpus)
    with _engine(cluster, 0.01) as engine:
        # the first partition counted kills its worker; Dask recomputes it on another one
        dying = DieOnce(tok.partial_counts, str(tmp_path / "count-died"))
        assert engine.count(dying, corpus) == expected
        assert (tmp_path / "count-died").exists()
        # the first merge task kills its worker: the partitions below it are recomputed and merged again
        parts = engine.partitions(corpus)
        merged = engine.map_reduce(CountDocuments(tok.partial_counts, corpus), parts,
                                   DieOnce(merge_counts, str(tmp_path / "merge-died")))
        assert merged.value == expected and (tmp_path / "merge-died").exists()


def test_a_partition_that_kills_every_worker_is_one_error_naming_it(corpus_file):
    """On a cluster of its own (its workers die twice each), with one retry after a death."""
    import dask

    corpus = Corpus((corpus_file,))
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        engine = open_engine("dask", workers=2, partition_mb=0.01)
        engine.start()
    with engine:
        parts = engine.partitions(corpus)
        p = parts[2]
        with pytest.raises(EngineError) as caught:
            engine.map_reduce(DieOn(CountDocuments(WordTokenizer().partial_counts, corpus), 2), parts)
    message = str(caught.value)
    # the culprit is named; a partition queued on a dying worker may be named beside it (Dask blames both)
    assert f"partition 3/{len(parts)} ({corpus_file}, bytes {p.start}-{p.end})" in message
    assert " died 2 times (Dask's retry limit, distributed.scheduler.allowed-failures=1)" in message
    assert "lower engine.partition_mb" in message


def _run(recipe: Path, out: Path, **kwargs) -> dict[str, str]:
    run_recipe(recipe, out=out, quiet=True, **kwargs)
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.iterdir())
            if p.name not in ("timings.json", "recipe.resolved.yaml")}


_RECIPE = """\
corpus: {path: CORPUS, unit: paragraph}
tokenizers:
  words: {type: word, min_frequency: 2, normalizer: [lowercase]}
  bpe: {type: bpe, vocab_size: 400, end_of_word_suffix: "</w>"}
  wp: {type: wordpiece, vocab_size: 400}
  chars: {type: char}
vectorizers:
  input: words
  save_matrix: true
  steps:
    - {type: tfidf, sublinear_tf: true, min_df: 2}
embedders:
  glove: {type: glove, input: bpe, vector_size: 8, epochs: 3, min_count: 2, window: 4, workers: 1, seed: 3}
"""


def test_a_recipe_on_the_cluster_writes_the_local_run_s_artifacts_byte_for_byte(cluster, corpus_file, tmp_path):
    import json

    recipe = tmp_path / "r.yaml"
    recipe.write_text(_RECIPE.replace("CORPUS", str(corpus_file)), encoding="utf-8")
    local = _run(recipe, tmp_path / "local")
    on_dask = _run(recipe, tmp_path / "dask", engine={"type": "dask", "address": cluster.scheduler_address},
                   overrides=["engine.partition_mb=0.01"])
    assert on_dask == local
    assert {"words.tokembed.json", "bpe.tokembed.json", "wp.tokembed.json", "chars.tokembed.json", "metrics.json",
            "tfidf.tokembed.json", "tfidf.npz"} <= set(local)
    timings = json.loads((tmp_path / "dask" / "timings.json").read_text())
    assert {k: timings["fit tokenizer bpe"][k] for k in ("engine", "workers")} == {"engine": "dask", "workers": 2}
    assert timings["fit tokenizer bpe"]["partitions"] >= 8
    assert timings["fit vectorizer tfidf"]["engine"] == "dask"  # document frequencies counted on the workers
    # GloVe's co-occurrences counted on the workers in two passes (the vocabulary, then the pairs), trained here
    assert {k: timings["fit embedder glove"][k] for k in ("engine", "passes")} == {"engine": "dask", "passes": 2}
    assert "glove.tokembed.json" in local
    resolved = (tmp_path / "dask" / "recipe.resolved.yaml").read_text()
    assert f"engine:\n  type: dask\n  address: {cluster.scheduler_address}\n  partition_mb: 0.01\n" in resolved


def test_a_failed_partition_fails_the_run_and_writes_no_output_folder(cluster, tmp_path):
    bad = tmp_path / "bad.txt"
    # the bad byte lies past the first 64 KiB that validate reads (SNIFF_BYTES): only a partition finds it
    bad.write_bytes(b"a fine line\n" * 6000 + b"\xff\n")
    recipe = tmp_path / "r.yaml"
    recipe.write_text(f"corpus: {{path: {bad}}}\ntokenizers:\n  w: {{type: word}}\n", encoding="utf-8")
    with pytest.raises(CorpusReadError, match=r"r\.yaml:1:9: corpus: partition \d+/\d+ \(.*bad\.txt, bytes \d+-72002\): "
                                              r".*bad\.txt:6001: invalid UTF-8 at byte offset 72000"):
        run_recipe(recipe, out=tmp_path / "out", quiet=True,
                   engine={"type": "dask", "address": cluster.scheduler_address})
    assert not (tmp_path / "out").exists()  # what was written before (the resolved recipe) is in out.incomplete
    assert sorted(p.name for p in (tmp_path / "out.incomplete").iterdir()) == [".tokembed-run",
                                                                               "recipe.resolved.yaml"]


def test_workers_with_different_hash_seeds_and_a_cold_numba_cache_give_the_same_artifacts(corpus_file, tmp_path):
    """Three worker processes started by hand (as on a real cluster), PYTHONHASHSEED 1, 2 and 3, sharing an empty
    NUMBA_CACHE_DIR: the warm-up task compiles the counting kernels once, the others load them."""
    recipe = tmp_path / "r.yaml"
    recipe.write_text(_RECIPE.replace("CORPUS", str(corpus_file)), encoding="utf-8")
    local = _run(recipe, tmp_path / "local")
    cache = tmp_path / "numba-cache"
    cache.mkdir()
    scheduler = distributed.LocalCluster(n_workers=0, host="127.0.0.1", dashboard_address=None)
    dask_cmd = str(Path(sys.executable).with_name("dask"))
    procs = []
    try:
        for seed in (1, 2, 3):
            env = {**os.environ, "PYTHONHASHSEED": str(seed), "NUMBA_CACHE_DIR": str(cache)}
            procs.append(subprocess.Popen(
                [dask_cmd, "worker", scheduler.scheduler_address, "--nthreads", "1", "--no-nanny", "--no-dashboard",
                 "--local-directory", str(tmp_path / f"w{seed}")],
                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        with distributed.Client(scheduler.scheduler_address, set_as_default=False) as client:
            client.wait_for_workers(3, timeout=120)
            assert len(set(client.run(hash, "tokembed").values())) == 3  # the seeds differ, so str hashes do
        on_dask = _run(recipe, tmp_path / "dask", engine={"type": "dask", "address": scheduler.scheduler_address,
                                                          "workers": 3},
                       overrides=["engine.partition_mb=0.01"])
        assert on_dask == local
        assert list(cache.rglob("*.nbi")), "the workers compiled into the cold cache"
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
        scheduler.close()


_PARTS_RECIPE = """\
corpus: {path: CORPUS, unit: paragraph}
tokenizers:
  words: {type: word, min_frequency: 2}
vectorizers:
  input: words
  save_matrix: SAVE
  steps:
    - {type: STEP, min_df: 2}
"""


def test_tfidf_written_by_partition_on_the_workers_stacks_into_the_local_matrix(cluster, corpus_file, tmp_path):
    """save_matrix: partitions: each worker transforms its partitions and writes tfidf.part-NNNNN.npz; the parts,
    stacked in the order of tfidf.parts.json, are the arrays of the local run's tfidf.npz, and the fitted
    vectorizer is the same bytes."""
    import json

    import numpy as np

    from tokembed.io import read_npz

    def recipe(save: str) -> Path:
        path = tmp_path / f"r-{save}.yaml"
        path.write_text(_PARTS_RECIPE.replace("CORPUS", str(corpus_file)).replace("SAVE", save)
                        .replace("STEP", "tfidf"), encoding="utf-8")
        return path

    local = _run(recipe("true"), tmp_path / "local")
    on_dask = _run(recipe("partitions"), tmp_path / "dask", engine={"type": "dask", "address": cluster.scheduler_address},
                   overrides=["engine.partition_mb=0.01"])
    assert on_dask["tfidf.tokembed.json"] == local["tfidf.tokembed.json"]
    assert "tfidf.npz" not in on_dask
    listing = json.loads((tmp_path / "dask" / "tfidf.parts.json").read_text())
    assert len(listing["parts"]) >= 8 and sorted(on_dask) == sorted(
        {"tfidf.parts.json", *(p["file"] for p in listing["parts"])} | (set(local) - {"tfidf.npz"}))
    whole = read_npz(tmp_path / "local" / "tfidf.npz")
    parts = [read_npz(tmp_path / "dask" / p["file"]) for p in listing["parts"]]
    assert [int(p["shape"][0]) for p in parts] == [p["rows"] for p in listing["parts"]]
    assert listing["shape"] == [int(n) for n in whole["shape"]] and listing["nnz"] == whole["data"].size
    for key in ("data", "indices"):
        stacked = np.concatenate([p[key] for p in parts])
        assert stacked.dtype == whole[key].dtype and np.array_equal(stacked, whole[key]), key
    starts = np.cumsum([0] + [int(p["indptr"][-1]) for p in parts[:-1]])
    indptr = np.concatenate([parts[0]["indptr"][:1]] + [p["indptr"][1:] + s for p, s in zip(parts, starts)])
    assert np.array_equal(indptr, whole["indptr"])


@pytest.mark.parametrize("shard_rows", [None, 40])
def test_a_cooccurrence_pipeline_on_the_cluster_equals_the_local_run(cluster, corpus_file, tmp_path, monkeypatch,
                                                                     shard_rows):
    """The co-occurrence vectorizer counted in two passes on the workers: the same vocabulary, counts and matrix
    bytes as one process; also with the pair counts cut into row shards of 40 words, each merged by its own tree."""
    import json

    import tokembed.plugins.cooccurrence.vectorizer as cooc

    if shard_rows is not None:
        monkeypatch.setattr(cooc, "SHARD_ROWS", shard_rows)  # decided on the client, before pass 2 is submitted

    path = tmp_path / "r.yaml"
    path.write_text(_PARTS_RECIPE.replace("CORPUS", str(corpus_file)).replace("SAVE", "true")
                    .replace("STEP", "cooccurrence").replace("min_df", "min_count"), encoding="utf-8")
    local = _run(path, tmp_path / "local")
    on_dask = _run(path, tmp_path / "dask", engine={"type": "dask", "address": cluster.scheduler_address},
                   overrides=["engine.partition_mb=0.01"])
    assert on_dask == local and {"cooccurrence.tokembed.json", "cooccurrence.npz"} <= set(local)
    timings = json.loads((tmp_path / "dask" / "timings.json").read_text())
    assert timings["fit vectorizer cooccurrence"]["passes"] == 2
    words = len(json.loads((tmp_path / "dask" / "cooccurrence.tokembed.json").read_text())["state"]["index_to_key"])
    shards = timings["fit vectorizer cooccurrence"].get("shards", 1)
    assert shards == (1 if shard_rows is None else -(-words // shard_rows)) and (shard_rows is None or shards > 2)


def test_starting_a_local_cluster_leaves_this_process_s_environment_as_it_was(monkeypatch):
    """A nanny sets OMP_NUM_THREADS=1 (and more) in the client's os.environ before spawning its worker and never
    restores it: a BLAS library loaded afterwards here would run on one thread and sum in another order (an SVD
    after a tfidf step gave other bytes than without an engine). The engine restores the variables."""
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    before = dict(os.environ)
    with open_engine("dask", workers=1) as engine:
        engine.start()
        assert dict(os.environ) == before
