"""tokembed.engine without a cluster: the ordered merge tree, the local engine, the engine: recipe section, and
the contract check of partial counts. (On a Dask LocalCluster: test_engine_dask.py.)"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

import pytest

from tokembed.corpus import Corpus
from tokembed.engine import CountDocuments, LocalEngine, merge_counts, open_engine, tree_levels
from tokembed.errors import CorpusReadError, EngineError, RecipeError, TokembedError
from tokembed.plugins.word.tokenizer import WordTokenizer
from tokembed.recipe import load_recipe_string
from tokembed.testing import sample_corpus

from engine_helpers import tokenizers, write_corpus


# -- the tree ---------------------------------------------------------------------------------------------------
def test_tree_levels_join_adjacent_nodes_only():
    for n in range(1, 40):
        for fan_in in (2, 3, 4):
            items = [str(i) for i in range(n)]
            for level in tree_levels(n, fan_in):
                assert level[0].start == 0 and level[-1].stop == len(items)
                assert all(a.stop == b.start and len(a) <= fan_in for a, b in zip(level, level[1:]))
                items = ["+".join(items[i] for i in group) for group in level]
            assert items == ["+".join(str(i) for i in range(n))]  # every leaf, in order, once
    assert [len(level) for level in tree_levels(8192, 4)] == [2048, 512, 128, 32, 8, 2, 1]


@dataclass(frozen=True)
class _Slow:
    """A count that finishes in random order: the string of the partition after a random sleep."""

    def __call__(self, part: int) -> str:
        time.sleep(random.random() * 0.01)
        return f"[{part}]"


def _concat(a: str, b: str) -> str:  # not commutative: shows any reordering
    return a + b


def test_local_map_reduce_merges_in_partition_order_whatever_finishes_first():
    engine = LocalEngine(workers=4, fan_in=3)
    got = engine.map_reduce(_Slow(), list(range(30)), _concat)
    assert got == "".join(f"[{i}]" for i in range(30))
    assert engine.last_stats.partitions == 30 and engine.last_stats.depth == 4  # 30 -> 10 -> 4 -> 2 -> 1
    assert engine.map_reduce(_Slow(), [7], _concat) == "[7]"  # a single partition: no merge
    with pytest.raises(ValueError, match="no partition"):
        engine.map_reduce(_Slow(), [], _concat)


# -- counting a corpus with the local engine ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory):
    return write_corpus(tmp_path_factory.mktemp("engine") / "corpus.txt")


@pytest.mark.parametrize("unit", ["line", "paragraph"])
@pytest.mark.parametrize("partition_mb", [0.002, 0.05, 100])
def test_local_partitions_count_what_the_streamed_corpus_counts(corpus_file, unit, partition_mb):
    corpus = Corpus((corpus_file,), unit=unit)
    engine = LocalEngine(workers=2, partition_mb=partition_mb)
    parts = engine.partitions(corpus)
    assert len(parts) >= 8
    if partition_mb == 0.002:  # ranges inside the 30 KB line hold no line start: empty partitions
        assert any(not list(corpus.read_partition(p)) for p in parts)
    for tok in tokenizers():
        assert engine.count(tok.partial_counts, corpus) == tok.partial_counts(corpus), tok


def test_the_local_engine_without_partition_mb_streams_in_one_pass(corpus_file):
    corpus = Corpus((corpus_file,))
    engine = open_engine("local")
    assert engine.partitions(corpus) is None
    tok = WordTokenizer()
    assert engine.count(tok.partial_counts, corpus) == tok.partial_counts(corpus)
    assert engine.last_stats.as_dict() == {"engine": "local", "workers": 2, "partitions": 1}


def test_documents_in_memory_are_cut_into_list_partitions():
    docs = sample_corpus(20_000)
    engine = LocalEngine(partition_mb=0.001)
    parts = engine.partitions(docs)
    assert [d for p in parts for d in p.docs] == docs and len(parts) > 8
    tok = WordTokenizer()
    assert engine.count(tok.partial_counts, docs) == tok.partial_counts(docs)


def test_a_bad_partition_is_named_by_file_and_byte_range(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"good line\n" * 400 + b"bad \xff byte\n" + b"good again\n" * 100)
    corpus = Corpus((path,))
    engine = LocalEngine(partition_mb=0.001)
    with pytest.raises(CorpusReadError) as caught:
        engine.count(WordTokenizer().partial_counts, corpus)
    # 5,111 bytes in 8 partitions (4 per thread; 1 KiB would make 5): ranges i * 5111 // 8; the bad line starts at
    # byte 4,000, in [3833, 4472), the seventh, and the bad byte is its fifth; it is the file's line 401 (400 lines
    # before it), though the partition's 18th
    assert str(caught.value) == (f"partition 7/8 ({path}, bytes 3833-4472): {path}:401: invalid UTF-8 at byte offset "
                                 "4004 (b'\\xff': invalid start byte); fix the file, or read it with `errors: "
                                 "replace` in the corpus spec (`--errors replace` for tokembed encode)")


def test_an_empty_corpus_counted_by_partitions_is_one_error(tmp_path):
    path = tmp_path / "blank.txt"
    path.write_text("\n  \n\n" * 100, encoding="utf-8")
    with pytest.raises(CorpusReadError, match=r"corpus .*blank\.txt: empty \(no non-empty document in 8 partitions\)"):
        LocalEngine(partition_mb=0.0001).count(WordTokenizer().partial_counts, Corpus.from_path(path))


def test_count_documents_is_picklable_by_reference():
    import pickle

    task = CountDocuments(WordTokenizer(min_frequency=3).partial_counts, Corpus.builtin("moby-dick"))
    data = pickle.dumps(task)
    assert b"tokembed.plugins.word.tokenizer" in data and b"WordTokenizer" in data
    assert pickle.loads(data).count_fn.__self__.min_frequency == 3
    assert merge_counts.__module__ == "tokembed.engine.base"


def test_cooccurrence_and_tfidf_counts_merge_exactly_through_the_tree():
    """The vectorizers' partial counts (integer-scaled 1/d co-occurrence sums, document frequencies) merged by the
    tree over 16 partitions equal one pass, bit for bit."""
    import numpy as np

    from tokembed.plugins.cooccurrence.vectorizer import CooccurrenceVectorizer
    from tokembed.plugins.tfidf.vectorizer import TfidfVectorizer

    docs = [d.split() for d in sample_corpus(40_000)]
    engine = LocalEngine(partition_mb=0.002)
    assert len(engine.partitions(docs)) >= 16  # paragraphs of about 2 KB each
    cooc = CooccurrenceVectorizer(window=7)
    vocab_whole, vocab_merged = cooc.partial_counts(docs), engine.count(cooc.partial_counts, docs)  # pass 1
    assert vocab_whole.keys == vocab_merged.keys and np.array_equal(vocab_whole.counts, vocab_merged.counts)
    assert vocab_merged.n_docs == len(docs)
    cooc.fit_counts(vocab_merged)
    whole, merged = cooc.partial_counts(docs), engine.count(cooc.partial_counts, docs)  # pass 2: the pairs
    assert np.array_equal(whole.keys, merged.keys) and np.array_equal(whole.sums, merged.sums)
    cooc.fit_counts(merged)
    assert (cooc.matrix_ != CooccurrenceVectorizer(window=7).fit(docs).matrix_).nnz == 0
    tfidf = TfidfVectorizer(min_df=2)
    a, b = tfidf.partial_counts(docs).terms, engine.count(tfidf.partial_counts, docs).terms
    assert a.index == b.index and np.array_equal(a.df, b.df) and np.array_equal(a.tf, b.tf) and a.n_docs == b.n_docs


# -- the recipe section ---------------------------------------------------------------------------------------------
_RECIPE = "corpus: {builtin: moby-dick}\ntokenizers:\n  w: {type: word}\n"


def _problems(text: str) -> list[str]:
    with pytest.raises(RecipeError) as caught:
        load_recipe_string(_RECIPE + text, source="r.yaml")
    return [str(p) for p in caught.value.problems]


def test_engine_section_problems_at_their_lines():
    assert _problems("engine: {type: dusk, workerz: 2}") == [
        "r.yaml:4:16: engine.type: expected one of 'local', 'dask', got 'dusk'. Did you mean 'dask'?",
        "r.yaml:4:22: engine.workerz: unknown engine key. Did you mean 'workers'? Allowed: type, address, workers, "
        "partition_mb",
    ]
    assert _problems("engine: {type: local, address: tcp://127.0.0.1:1}") == [
        "r.yaml:4:32: engine.address: only the dask engine connects to a scheduler: set type: dask, or drop address"]
    assert _problems("engine: {partition_mb: 0, workers: 0}") == [
        "r.yaml:4:24: engine.partition_mb: expected float >= 0.001 or null, got 0.0",
        "r.yaml:4:36: engine.workers: expected int >= 1 or null, got 0"]
    assert _problems("engine: [dask]")[0].startswith("r.yaml:4:9: engine: expected {type: local | dask, address:")


def test_engine_section_resolves_and_takes_the_command_line_keys():
    recipe = load_recipe_string(_RECIPE + "engine: {type: local, workers: 3}", engine={"partition_mb": 64})
    assert recipe.resolved()["engine"] == {"type": "local", "workers": 3, "partition_mb": 64}
    assert load_recipe_string(_RECIPE).engine is None
    short = load_recipe_string(_RECIPE + "engine: local", engine={"workers": 1})
    assert short.resolved()["engine"] == {"type": "local", "workers": 1}


def test_an_empty_engine_section_is_absent_and_set_names_how_to_add_one():
    assert load_recipe_string(_RECIPE + "engine:\n").engine is None
    with pytest.raises(RecipeError) as caught:
        load_recipe_string(_RECIPE, source="r.yaml", overrides=["engine.partition_mb=64"])
    (problem,) = [str(p) for p in caught.value.problems]
    assert problem.endswith("To add a section, set it whole: --set 'engine={...}' (or give --engine dask)")
    assert load_recipe_string(_RECIPE, engine={"type": "dask"}, overrides=["engine.partition_mb=64"],
                              ).resolved()["engine"]["partition_mb"] == 64
    assert _problems("engine: {partition_mb: .inf}") == [
        "r.yaml:4:24: engine.partition_mb: expected a finite float >= 0.001 (MiB), got inf"]


def test_a_bad_engine_option_is_named_as_the_command_line_option():
    with pytest.raises(RecipeError) as caught:
        load_recipe_string(_RECIPE, source="r.yaml", engine={"type": "dask", "address": "localhost"})
    assert [str(p) for p in caught.value.problems] == [
        "--scheduler localhost: engine.address: expected a scheduler address tcp://HOST:PORT (as `dask scheduler` "
        "prints it), got 'localhost'"]
    with pytest.raises(RecipeError) as caught:
        load_recipe_string(_RECIPE, source="r.yaml", engine={"type": "dusk"})
    assert [str(p) for p in caught.value.problems] == [
        "--engine dusk: engine.type: expected one of 'local', 'dask', got the quoted string 'dusk'"]


def test_dask_engine_without_the_extra_is_a_recipe_problem(monkeypatch):
    import tokembed.engine.cluster as cluster

    monkeypatch.setattr(cluster, "dask_missing", lambda: "the dask engine needs dask, which is not installed: pip "
                                                         "install 'tokembed[dask]'")
    assert _problems("engine: dask") == ["r.yaml:4:9: engine.type: the dask engine needs dask, which is not "
                                         "installed: pip install 'tokembed[dask]'"]
    with pytest.raises(EngineError, match="pip install 'tokembed\\[dask\\]'"):
        open_engine("dask")


def test_a_scheduler_that_does_not_answer_is_a_recipe_problem(monkeypatch):
    """Refused at once; a service that accepts the connection but never speaks Dask's protocol after the timeout,
    not a hang; a malformed address before any connection."""
    pytest.importorskip("distributed")
    import socket

    import tokembed.engine.cluster as cluster

    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT", 1)
    (problem,) = _problems("engine: {type: dask, address: 'tcp://127.0.0.1:9'}")
    assert problem.startswith("r.yaml:4:31: engine.address: no Dask scheduler answers at tcp://127.0.0.1:9: "
                              "Connection refused; start one")
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen()  # accepts connections (the kernel does), never answers
    port = silent.getsockname()[1]
    t0 = time.perf_counter()
    try:
        (problem,) = _problems(f"engine: {{type: dask, address: 'tcp://127.0.0.1:{port}'}}")
    finally:
        silent.close()
    assert time.perf_counter() - t0 < 10  # the 1 s timeout, and the recipe check around it
    assert problem.startswith(f"r.yaml:4:31: engine.address: no Dask scheduler answers at tcp://127.0.0.1:{port}: "
                              "something accepts the connection but gives no answer to Dask's handshake within 1 s")
    assert _problems("engine: {type: dask, address: 'localhost'}") == [
        "r.yaml:4:31: engine.address: expected a scheduler address tcp://HOST:PORT (as `dask scheduler` prints it), "
        "got 'localhost'"]
    assert _problems("engine: {type: dask, address: 'tcp://h:99999'}") == [
        "r.yaml:4:31: engine.address: port 99999 of tcp://h:99999 is outside 1-65535"]


def test_an_empty_engine_section_counts_as_absent():
    assert load_recipe_string(_RECIPE + "engine: {}").engine is None
    (problem,) = _problems("engine: {}\nvectorizers: {input: w, save_matrix: partitions, steps: [{type: bow}]}")
    assert "add an engine: section" in problem


# -- the contract check -----------------------------------------------------------------------------------------
class _ForgetfulWord(WordTokenizer):
    """Keeps only the last part's counts: partial counts that do not merge."""

    name = "forgetful"

    def partial_counts(self, corpus):
        return _Last(super().partial_counts(corpus))

    def fit_counts(self, counts):
        return super().fit_counts(counts.wc)


@dataclass
class _Last:
    wc: object

    def merge(self, other):
        return other


def test_the_contract_check_catches_counts_that_do_not_merge():
    from tokembed.testing import check_partial_counts

    check_partial_counts(WordTokenizer)
    with pytest.raises(AssertionError, match="partial counts must merge into the counts of the whole"):
        check_partial_counts(_ForgetfulWord)


def _fail_merge(a: str, b: str) -> str:
    if "[5]" in b:
        raise ValueError("merge broke")
    return a + b


def test_a_failed_merge_names_the_partitions_it_merges():
    with pytest.raises(EngineError, match=r"^merging partitions 5-8 of 9 \(4 to 7\): ValueError: merge broke$"):
        LocalEngine(workers=2, fan_in=4).map_reduce(_Slow(), list(range(9)), _fail_merge)


def test_save_matrix_partitions_needs_an_engine_and_a_one_step_document_pipeline():
    pipe = "vectorizers:\n  input: w\n  save_matrix: partitions\n  steps: [{type: STEPS}]\n"
    assert _problems(pipe.replace("STEPS", "tfidf")) == [
        "r.yaml:6:16: vectorizers.save_matrix: partitions: the matrix is written partition by partition by the "
        "engine's workers: add an engine: section (engine: {type: dask}, or {type: local, partition_mb: 64}) or use "
        "save_matrix: true"]
    engine = "engine: {type: local, partition_mb: 1}\n"
    (two,) = _problems(engine + pipe.replace("STEPS", "tfidf}, {type: svd, n_components: 2"))
    assert two.startswith("r.yaml:7:16: vectorizers.save_matrix: partitions needs a pipeline of one step whose rows "
                          "are documents or tokens and no nearest: the engine writes the first step's output")
    (cooc,) = _problems(engine + pipe.replace("STEPS", "cooccurrence"))
    assert "cooccurrence's output is one matrix over its vocabulary, not rows of documents" in cooc
    (near,) = _problems(engine + pipe.replace("STEPS", "bow") + "  nearest: 3\n")
    assert "nearest needs the whole matrix on this machine" in near
    ok = load_recipe_string(_RECIPE + engine + pipe.replace("STEPS", "onehot"))
    assert ok.resolved()["vectorizers"]["save_matrix"] == "partitions"


_STAGES = """\
corpus: {path: CORPUS}
tokenizers:
  w: {type: word, min_frequency: 2}
  b: {type: bpe, vocab_size: 500}
vectorizers:
  input: b
  steps: [{type: STEP, min_count: 2, window: 5}]
embedders:
  g: {type: glove, input: w, vector_size: 8, epochs: 2, min_count: 3, window: 3, workers: 1, seed: 5}
"""


@pytest.mark.parametrize("step", ["cooccurrence", "bow"])
def test_a_run_on_local_partitions_writes_the_streamed_run_s_artifacts(tmp_path, step):
    """Co-occurrence (two passes on the engine), bow (document frequencies, then the transform partition by
    partition, stacked) and GloVe (its co-occurrences counted on the engine, trained here) over 16+ partitions
    of the local engine: every artifact is the bytes of the run without an engine."""
    import hashlib
    import json

    from tokembed.runner import run_recipe

    from tokembed.corpus import Corpus

    corpus = tmp_path / "moby.txt"  # the builtin is one .gz file: one partition
    corpus.write_text("\n".join(Corpus.builtin("moby-dick")), encoding="utf-8")
    text = _STAGES.replace("STEP", step).replace("CORPUS", str(corpus))
    if step == "bow":
        text = text.replace("min_count: 2, window: 5", "min_df: 2")
    recipe = tmp_path / "r.yaml"
    recipe.write_text(text, encoding="utf-8")

    def run(out, **kwargs):
        run_recipe(recipe, out=out, quiet=True, **kwargs)  # metrics.json included: measured by partition
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.iterdir())
                if p.name not in ("timings.json", "recipe.resolved.yaml")}

    streamed = run(tmp_path / "plain")
    parted = run(tmp_path / "parted", engine={"type": "local", "partition_mb": 0.05})
    assert parted == streamed and {f"{step}.npz", "g.tokembed.json", "w.tokembed.json", "metrics.json"} <= set(streamed)
    timings = json.loads((tmp_path / "parted" / "timings.json").read_text())
    assert timings["evaluate tokenizer b"]["partitions"] >= 16
    assert timings[f"fit vectorizer {step}"]["partitions"] >= 16
    assert timings[f"fit vectorizer {step}"].get("passes") == (2 if step == "cooccurrence" else None)
    assert timings["fit embedder g"]["passes"] == 2


def test_with_an_engine_the_client_never_reads_the_corpus(tmp_path, monkeypatch):
    """Tokenizers (fitted and measured), a tfidf pipeline (counted, then transformed by partition) and GloVe: every
    read goes through a partition (what a worker does); iterating the corpus on the client is recorded here."""
    from tokembed.corpus import Corpus
    from tokembed.runner import run_recipe

    corpus = tmp_path / "moby.txt"
    corpus.write_text("\n".join(Corpus.builtin("moby-dick")), encoding="utf-8")
    recipe = tmp_path / "r.yaml"
    recipe.write_text(_STAGES.replace("CORPUS", str(corpus)).replace("STEP", "tfidf")
                      .replace("min_count: 2, window: 5", "min_df: 2"), encoding="utf-8")
    read = []
    monkeypatch.setattr(Corpus, "__iter__", lambda self: read.append("iter") or iter(()))
    monkeypatch.setattr(Corpus, "head", lambda self, n: read.append("head") or [])
    result = run_recipe(recipe, out=tmp_path / "out", quiet=True, engine={"type": "local", "partition_mb": 0.1})
    assert read == []
    assert result.metrics["b"]["documents"] > 10_000 and result.metrics["w"]["round_trip"] is not None
    assert result.matrices["tfidf"]["shape"][0] > 10_000  # Moby-Dick's lines, all transformed by partition
    assert len(result.embedders["g"].wv_) > 1_000


_LONGEST_PLUGIN = """
from tokembed import hookimpl
from tokembed.metrics import Metric


class Longest(Metric):
    # a plugin's metric that keeps state and has no merge: the most tokens of one document
    name = "longest"
    unit = "tokens"
    definition = "The most tokens of one document."
    source = "a test"

    def __init__(self, tokenizer):
        super().__init__(tokenizer)
        self.longest = 0

    def update_chunk(self, chunk):  # on arrays (in the default set), but without merge
        self.longest = max(self.longest, int(chunk.lengths.max(initial=0)))

    def result(self, stats):
        return self.longest


@hookimpl
def tokembed_register_metrics():
    return [Longest]
"""


def test_a_metric_that_cannot_merge_is_measured_on_the_client_with_a_warning(tmp_path, fake_dists):
    from tokembed.corpus import Corpus
    from tokembed.registry import build_registry
    from tokembed.runner import run_recipe

    fake_dists.module("fake_longest", _LONGEST_PLUGIN)
    fake_dists.dist("tokembed-longest", {"longest": "fake_longest"})
    reg = build_registry()
    corpus = tmp_path / "moby.txt"
    corpus.write_text("\n".join(Corpus.builtin("moby-dick")), encoding="utf-8")
    recipe = tmp_path / "r.yaml"
    recipe.write_text(f"corpus: {{path: {corpus}}}\ntokenizers:\n  w: {{type: word}}\n", encoding="utf-8")
    with pytest.warns(UserWarning, match="tokenizers.w: metrics measured on this machine, not on the engine: "
                                         "longest cannot merge"):
        parted = run_recipe(recipe, out=tmp_path / "a", quiet=True, registry=reg,
                            engine={"type": "local", "partition_mb": 0.1})
    plain = run_recipe(recipe, out=tmp_path / "b", quiet=True, registry=reg)
    assert parted.metrics == plain.metrics and parted.metrics["w"]["longest"] > 10


def test_every_fitted_tokenizer_pickles_and_encodes_the_same_after_the_trip():
    """What the engine ships to a worker (a tokenizer inside a count or metrics task) must pickle, fitted and after
    encoding (WordPiece's shared character map travels as its switches, not as its lock)."""
    import pickle

    from engine_helpers import tokenizers
    from tokembed.plugins.unigram.tokenizer import UnigramTokenizer

    docs = sample_corpus(20_000) + ["Caf\u00e9 \u6771\u4eac \U0001F600"]
    for tok in [*tokenizers(), UnigramTokenizer(vocab_size=300)]:
        tok.fit(docs)
        tok.encode_batch(docs[:20])
        back = pickle.loads(pickle.dumps(tok))
        assert [e.ids.tolist() for e in back.encode_batch(docs[-30:])] == \
            [e.ids.tolist() for e in tok.encode_batch(docs[-30:])], tok


def test_nearest_past_the_end_fails_before_any_vectorizer_is_fitted_on_the_engine(tmp_path):
    """The workers counted the documents while fitting the tokenizer: nearest is checked against that count
    before the vectorizer's counting (without a tokenizer on the engine: after its counting, before the
    transform). The run's parts.json names each part's source range."""
    import json

    from tokembed.runner import run_recipe

    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(f"line {i} of the corpus" for i in range(300)), encoding="utf-8")
    recipe = tmp_path / "r.yaml"
    recipe.write_text(f"corpus: {{path: {corpus}}}\ntokenizers:\n  w: {{type: word}}\nvectorizers:\n  input: w\n"
                      "  nearest: 300\n  steps: [{type: bow}]\n", encoding="utf-8")
    engine = {"type": "local", "partition_mb": 0.001}
    with pytest.raises(TokembedError, match=r"r\.yaml:6:12: vectorizers\.nearest: 300 is not a document of the "
                                            r"corpus \(it has 300, numbered 0 to 299\); no vectorizer was fitted"):
        run_recipe(recipe, out=tmp_path / "a", quiet=True, metrics=False, engine=engine)
    assert not (tmp_path / "a.incomplete" / "bow.tokembed.json").exists()
    recipe.write_text(recipe.read_text().replace("  nearest: 300\n", "  save_matrix: partitions\n"))
    run_recipe(recipe, out=tmp_path / "b", quiet=True, metrics=False, engine=engine)
    parts = json.loads((tmp_path / "b" / "bow.parts.json").read_text())["parts"]
    assert len(parts) >= 4 and parts[0]["source"] == f"{corpus}, bytes 0-{corpus.stat().st_size // len(parts)}"
    timings = json.loads((tmp_path / "b" / "timings.json").read_text())["fit vectorizer bow"]
    assert timings["transform_seconds"] > 0 and timings["MB_per_s"] > 0


def test_a_failed_task_keeps_its_error_class_and_attributes():
    from tokembed.engine.base import failure
    from tokembed.errors import EngineError, ParameterError

    err = failure(ParameterError("glove", "x_max", "must be > 0, got -1"), "a.txt bytes 0-99")
    # rebuilt from its message, a ParameterError would have failed (three arguments) and become an EngineError
    assert type(err) is ParameterError and (err.component, err.param) == ("glove", "x_max")
    assert str(err) == "a.txt bytes 0-99: glove: x_max must be > 0, got -1"
    other = failure(ValueError("boom"), "a.txt bytes 0-99")
    assert type(other) is EngineError and str(other) == "a.txt bytes 0-99: ValueError: boom"
