"""The fasttext and word2vec embedders: parameters, vocabulary, inputs, determinism, memory, what training learns."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tokembed.errors import EmptyVocabularyError, ParameterError, TokembedError
from tokembed.keyedvectors import OutOfVocabularyError
from tokembed.plugins.fasttext import FastTextEmbedder, Word2VecEmbedder
from tokembed.plugins.fasttext.training import _Progress
from tokembed.sequences import TokenSequences
from tokembed.testing import check_component, sample_corpus

SMALL = {"vector_size": 8, "min_count": 1, "epochs": 1, "workers": 1, "show_progress": False}


def _ft(**kw):
    return FastTextEmbedder(**{**SMALL, "bucket": 500, **kw})


def _w2v(**kw):
    return Word2VecEmbedder(**{**SMALL, **kw})


@pytest.mark.parametrize("cls", [FastTextEmbedder, Word2VecEmbedder], ids=["fasttext", "word2vec"])
def test_contract(cls):
    check_component(cls)


# -- parameters ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("params, param, message", [
    ({"vector_size": 0}, "vector_size", "must be an int >= 1"),
    ({"window": 1.5}, "window", "must be an int >= 1"),
    ({"negative": 0}, "negative", "must be >= 1 without hierarchical softmax"),
    ({"sample": -1e-3}, "sample", "must be a number >= 0"),
    ({"min_count": 0}, "min_count", "must be an int >= 1"),
    ({"max_vocab": 0}, "max_vocab", "must be an int >= 1"),
    ({"epochs": 0}, "epochs", "must be an int >= 1"),
    ({"alpha": 0.0}, "alpha", "must be a number > 0 or null"),
    ({"alpha": 0.01, "min_alpha": 0.02}, "min_alpha", "must not exceed the starting learning rate"),
    ({"workers": 0}, "workers", "must be -1 or an int >= 1 and <= 1,024, got 0"),
    ({"seed": -1}, "seed", "must be an int >= 0"),
    ({"sg": 1}, "sg", r"must be true or false, got 1 \(use true/false: true where gensim takes 1\)"),
    ({"hs": 0}, "hs", r"must be true or false, got 0 \(use true/false: false where gensim takes 0\)"),
    ({"ns_exponent": float("nan")}, "ns_exponent", "must be a number in "),
    ({"bucket": 0}, "bucket", "must be >= 1 when n-grams are used"),
    ({"minn": -1}, "minn", "must be an int >= 0"),
    # refused before any work instead of overflowing inside a kernel or dividing by zero in the sampling table
    ({"vector_size": 10**20}, "vector_size", "must be an int >= 1 and <= 65,536"),
    ({"window": 10**20}, "window", "must be an int >= 1 and <= 2,147,483,647"),
    ({"bucket": 10**20}, "bucket", "must be an int >= 0 and <= 2,147,483,647"),
    ({"ns_exponent": -5000.0}, "ns_exponent", r"must be a number in \[-10, 10\], got -5000.0"),
    ({"minn": 5, "maxn": 2}, "maxn", "=2 is below minn=5: no n-gram length is in range"),
])
def test_parameter_errors_name_the_parameter(params, param, message):
    problems = FastTextEmbedder.check_params(params)
    assert [p for p, _ in problems] == [param]
    assert re.search(message, problems[0][1])
    with pytest.raises(ParameterError, match=message):
        FastTextEmbedder(**{**SMALL, **params}).fit([["a", "b"]])


def test_every_problem_is_reported_at_once():
    problems = Word2VecEmbedder.check_params({"vector_size": 0, "window": 0, "epochs": 0})
    assert [p for p, _ in problems] == ["vector_size", "window", "epochs"]


@pytest.mark.parametrize("cls", [FastTextEmbedder, Word2VecEmbedder])
def test_two_bad_values_are_both_reported_by_check_params_and_fit(cls):
    # a declared rule (sg) and a rule between parameters (min_alpha above alpha) are both found
    bad = {"sg": 1, "alpha": 0.01, "min_alpha": 0.02}
    assert cls.check_params(bad) == [
        ("sg", f"{cls.name}: sg must be true or false, got 1 (use true/false: true where gensim takes 1)"),
        ("min_alpha", f"{cls.name}: min_alpha must not exceed the starting learning rate alpha=0.01; got 0.02"),
    ]
    with pytest.raises(ParameterError) as info:  # fit reports every declared problem in one error
        cls(**{**SMALL, "sg": 1, "window": 0}).fit([["a", "b"]])
    assert [e.param for e in info.value.errors] == ["window", "sg"]
    assert str(info.value).startswith(f"{cls.name}: 2 invalid parameters: window must be an int >= 1")


def test_no_ngrams_needs_no_bucket():
    e = _ft(maxn=0, bucket=0).fit([["a", "b", "a"]])
    assert e.input_matrix_.shape == (2, 8)
    with pytest.raises(OutOfVocabularyError):
        _w2v().fit([["a", "b"]]).wv_["zzz"]
    np.testing.assert_array_equal(e.wv_["zzz"], np.zeros(8, np.float32))  # fastText without n-grams: zeros


def test_default_learning_rates():
    docs = [p.split() for p in sample_corpus(5_000)]
    for sg, alpha in ((True, 0.025), (False, 0.05)):
        a = _w2v(sg=sg).fit(docs)
        b = _w2v(sg=sg, alpha=alpha).fit(docs)
        np.testing.assert_array_equal(a.wv_.vectors, b.wv_.vectors)
        c = _w2v(sg=sg, alpha=alpha * 2).fit(docs)
        assert not np.array_equal(a.wv_.vectors, c.wv_.vectors)


# -- vocabulary and inputs ----------------------------------------------------------------------------------------
def test_vocabulary_is_count_descending_ties_by_key():
    docs = [["b", "a", "c", "b", "d", "a", "e", "e", "b"], ["zz", "c"]]
    e = _w2v(min_count=2).fit(docs)
    assert e.wv_.index_to_key == ["b", "a", "c", "e"]
    assert e.counts_.tolist() == [3, 2, 2, 2]
    assert _w2v(min_count=2, max_vocab=2).fit(docs).wv_.index_to_key == ["b", "a"]
    with pytest.raises(EmptyVocabularyError, match="min_count=9"):
        _w2v(min_count=9).fit(docs)


def test_token_sequences_and_token_lists_give_the_same_model(tmp_path):
    docs = [p.split() for p in sample_corpus(8_000)]
    seqs = TokenSequences.from_tokens(docs)
    # the tokenizer's ids are in another order than ours: a reversed vocabulary gives the same words
    rev = list(reversed(seqs.vocab))
    index = {t: i for i, t in enumerate(rev)}
    shuffled = TokenSequences(np.array([index[seqs.vocab[i]] for i in seqs.ids], np.int32), seqs.offsets, rev)
    a, b, c = (_ft(min_count=2).fit(x) for x in (docs, seqs, shuffled))
    for other in (b, c):
        assert other.wv_.index_to_key == a.wv_.index_to_key
        np.testing.assert_array_equal(other.input_matrix_, a.input_matrix_)


def test_special_ids_are_never_trained_on():
    docs = [["[CLS]", "the", "whale", "[SEP]"] for _ in range(10)]
    seqs = TokenSequences.from_tokens(docs)
    special = TokenSequences(seqs.ids, seqs.offsets, seqs.vocab, special_ids=[0, 3])
    e = _w2v().fit(special)
    assert e.wv_.index_to_key == ["the", "whale"] and e.n_tokens_ == 20
    assert _w2v().fit(seqs).wv_.index_to_key == ["[CLS]", "[SEP]", "the", "whale"]


def test_bad_inputs():
    with pytest.raises(TokembedError, match="got one str"):
        _w2v().fit("the whale")
    with pytest.raises(TokembedError, match="document 0 is a str"):
        _w2v().fit(["the whale"])
    with pytest.raises(EmptyVocabularyError):
        _w2v().fit([[], []])


def test_long_documents_are_cut_and_empty_ones_skipped():
    from tokembed.plugins.fasttext.training import MAX_PIECE, build_vocabulary, plan_corpus

    seqs = TokenSequences.from_tokens([["a", "b"] * (MAX_PIECE + 3), [], ["x"], ["b"]])
    vocab = build_vocabulary(seqs, 2, None, "t")
    corpus = plan_corpus(seqs, vocab.token_map)
    assert corpus.pieces() == [MAX_PIECE, MAX_PIECE, 6, 1]  # "x" is below min_count, its document empty
    assert corpus.n_tokens == 2 * MAX_PIECE + 7


# -- what training learns -----------------------------------------------------------------------------------------
def _two_topics(n_docs=600, seed=0):
    """Documents drawn from one of two disjoint word sets: words of a set co-occur, words of different sets never."""
    rng = np.random.default_rng(seed)
    sets = [[f"sea{i}" for i in range(8)], [f"land{i}" for i in range(8)]]
    return [list(rng.choice(sets[d % 2], size=12)) for d in range(n_docs)], sets


@pytest.mark.parametrize("make", [
    lambda: _w2v(vector_size=16, epochs=5, sample=0),
    lambda: _w2v(vector_size=16, epochs=5, sample=0, sg=False),
    lambda: _w2v(vector_size=16, epochs=5, sample=0, hs=True),
    lambda: _ft(vector_size=16, epochs=5, sample=0, bucket=2000),
    lambda: _ft(vector_size=16, epochs=5, sample=0, bucket=2000, sg=False, hs=True),
    lambda: _ft(vector_size=16, epochs=3, sample=0, bucket=2000, workers=2),
], ids=["w2v-sg", "w2v-cbow", "w2v-hs", "ft-sg", "ft-cbow-hs", "ft-2-workers"])
def test_words_of_a_topic_end_up_closer_than_words_of_the_other(make):
    docs, (sea, land) = _two_topics()
    kv = make().fit(docs).wv_
    within = np.mean([kv.similarity(a, b) for a in sea for b in sea if a < b])
    across = np.mean([kv.similarity(a, b) for a in sea for b in land])
    assert within > across + 0.3, (within, across)


def test_oov_vectors_of_fasttext_resemble_their_word():
    docs, (sea, land) = _two_topics()
    kv = _ft(vector_size=16, epochs=5, sample=0, bucket=5000).fit(docs).wv_
    # "seaX" shares the n-grams "<se", "<sea", "sea", ... with the sea words
    assert kv.similarity("seaX", "sea3") > kv.similarity("seaX", "land3")


# -- determinism --------------------------------------------------------------------------------------------------
_PROGRAM = textwrap.dedent("""
    import hashlib, json, sys, tempfile, pathlib
    from tokembed.plugins.fasttext import FastTextEmbedder, Word2VecEmbedder
    from tokembed.testing import sample_corpus
    docs = [p.split() for p in sample_corpus(10_000)]
    out = {}
    tmp = pathlib.Path(tempfile.mkdtemp())
    for cls, kw in ((FastTextEmbedder, {"bucket": 2000}), (Word2VecEmbedder, {"sg": False, "hs": True})):
        e = cls(vector_size=10, min_count=2, epochs=2, workers=1, seed=int(sys.argv[1]), show_progress=False, **kw)
        e.fit(docs)
        e.save(tmp / "m.tokembed.json")
        e.save_facebook_model(tmp / "m.bin")
        out[cls.name] = [hashlib.sha256((tmp / n).read_bytes()).hexdigest() for n in ("m.tokembed.npz", "m.bin")]
    print(json.dumps(out))
""")


def _fit_in_process(seed: int, hashseed: str) -> dict:
    env = {**os.environ, "PYTHONHASHSEED": hashseed}
    proc = subprocess.run([sys.executable, "-c", _PROGRAM, str(seed)], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_one_worker_and_a_seed_give_identical_files_whatever_the_hash_seed():
    runs = [_fit_in_process(3, h) for h in ("0", "4242")]
    assert runs[0] == runs[1]
    assert _fit_in_process(4, "0") != runs[0]


# -- memory -------------------------------------------------------------------------------------------------------
def test_estimate_memory_figures():
    big = FastTextEmbedder(vector_size=100, bucket=2_000_000).estimate_memory(vocab_size=1000)
    assert big["input_ngrams"] == 800_000_000  # 2,000,000 x 100 float32
    assert big["input_words"] == big["output"] == 400_000
    assert big["total"] == sum(v for k, v in big.items() if k != "total") > 800_000_000
    small = FastTextEmbedder(vector_size=100, bucket=10_000).estimate_memory(vocab_size=1000)
    assert small["input_ngrams"] == 4_000_000
    w2v = Word2VecEmbedder(vector_size=100, workers=2).estimate_memory(vocab_size=1000, n_tokens=10**6)
    assert w2v["input_ngrams"] == w2v["word_vectors"] == 0
    # no copy of the corpus: the plan (16 bytes per chunk of 20,000 tokens: 51 chunks) and, per worker, one chunk of
    # at most 30,000 tokens as int32 indices and int64 piece offsets
    assert w2v["corpus"] == 51 * 16 + 2 * 30_000 * 12
    assert Word2VecEmbedder(workers=2).estimate_memory(vocab_size=1000, n_tokens=10**9)["corpus"] == \
        50_001 * 16 + 2 * 30_000 * 12
    with pytest.raises(TokembedError, match="needs vocab_size"):
        FastTextEmbedder().estimate_memory()
    fitted = _ft(min_count=2).fit([p.split() for p in sample_corpus(5_000)])
    report = fitted.estimate_memory()
    assert report["input_words"] + report["input_ngrams"] == fitted.input_matrix_.nbytes
    assert report["output"] == fitted.output_matrix_.nbytes
    assert report["word_vectors"] == fitted.wv_.vectors.nbytes


_MEMORY = textwrap.dedent("""
    import json, resource
    import numpy as np
    from tokembed.plugins.fasttext import FastTextEmbedder
    from tokembed.sequences import TokenSequences
    FastTextEmbedder.warmup()
    rng = np.random.default_rng(0)
    words = [f"w{i}x{i % 97}" for i in range(20_000)]
    p = 1.0 / np.arange(1, 20_001); p /= p.sum()
    ids = rng.choice(20_000, size=200_000, p=p).astype(np.int32)
    seqs = TokenSequences(ids, np.arange(0, 200_001, 50), words)
    def rss():
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * resource.getpagesize()
    def hwm():  # the process's peak resident set since the last reset, in bytes (Linux's VmHWM)
        with open("/proc/self/status") as fh:
            return next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmHWM:"))
    e = FastTextEmbedder(vector_size=50, bucket=600_000, min_count=1, epochs=1, workers=1, show_progress=False)
    before = rss()
    with open("/proc/self/clear_refs", "w") as fh:  # reset the peak to now: what came before fit does not count
        fh.write("5")
    assert hwm() < before + 20_000_000
    e.fit(seqs)
    print(json.dumps({"delta": hwm() - before, "estimate": e.estimate_memory()}))
""")


@pytest.mark.slow
def test_real_peak_stays_within_a_quarter_of_the_estimate():
    # compile into Numba's cache first, in a process of its own: a cold compile's own peak (LLVM) would otherwise
    # be the measuring process's high-water mark before fit starts (a fresh checkout, as in CI)
    warm = subprocess.run([sys.executable, "-c", "from tokembed.plugins.fasttext import FastTextEmbedder; "
                           "FastTextEmbedder.warmup()"], capture_output=True, text=True)
    assert warm.returncode == 0, warm.stderr[-3000:]
    proc = subprocess.run([sys.executable, "-c", _MEMORY], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    total = out["estimate"]["total"]
    assert out["estimate"]["input_ngrams"] == 120_000_000
    assert 0.8 * total <= out["delta"] <= 1.25 * total, out


# -- progress and compilation -------------------------------------------------------------------------------------
def test_progress_shows_words_per_second_per_thread():
    assert _Progress.rate(3_000_000, 2.0, 2) == "750,000 words/s/thread"


def test_warmup_compiles_each_kernel_once():
    program = textwrap.dedent("""
        import json, warnings
        warnings.simplefilter("ignore")
        from numba.core.registry import CPUDispatcher
        from tokembed.plugins.fasttext import FastTextEmbedder, Word2VecEmbedder, load_facebook_vectors, _kernels
        from tokembed.plugins.fasttext import _kernels_corpus
        from tokembed.sequences import TokenSequences
        from tokembed.testing import sample_corpus
        import tempfile, pathlib
        FastTextEmbedder.warmup(); Word2VecEmbedder.warmup()
        docs = [p.split() for p in sample_corpus(3000)]
        seqs = TokenSequences.from_tokens(docs)
        tmp = pathlib.Path(tempfile.mkdtemp())
        for kw in ({"sg": True}, {"sg": False, "hs": True}, {"workers": 2}):
            e = FastTextEmbedder(vector_size=6, bucket=100, min_count=1, epochs=1, show_progress=False, **kw).fit(seqs)
            Word2VecEmbedder(vector_size=6, min_count=1, epochs=1, show_progress=False, **kw).fit(docs)
            load_facebook_vectors(e.save_facebook_model(tmp / "m.bin"))
        print(json.dumps({n: len(o.signatures) for module in (_kernels, _kernels_corpus)
                          for n, o in vars(module).items() if isinstance(o, CPUDispatcher)}))
    """)
    proc = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    counts = json.loads(proc.stdout.strip().splitlines()[-1])
    for name in ("ngram_rows", "alias_table", "huffman_paths", "train_chunk", "compose_vectors"):
        assert counts[name] == 1, (name, counts)
    for name in ("plan_chunks", "remap_range"):  # once per id dtype: int32, uint16, uint32
        assert counts[name] == 3, (name, counts)


def test_documents_of_one_token_are_a_clear_error_not_an_untrained_model():
    from tokembed.errors import EmptyVocabularyError

    # every document is a single token: no (centre, context) pair, nothing would be trained
    with pytest.raises(EmptyVocabularyError, match="no document holds two kept tokens"):
        _ft().fit([["a"], ["b"], ["c"], ["a"]])
