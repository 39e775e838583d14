"""The array path of the metrics against the per-document definitions they replaced.

:func:`reference` below is the measuring pass as it was before metrics ran on arrays (one ``encode_batch`` per chunk,
every count taken per document in Python: ``len(doc.encode())``, ``regex.findall``, ``doc.split()``, a ``decode``
per document), kept here as the slow, obviously correct reference. Each built-in tokenizer is measured both ways on
fixture documents with the awkward cases (empty lines, CJK, emoji, combining marks, lone surrogates, runs of
``<unk>``): counts must be equal, ratios within 1e-12. Then: threads give the results of one thread, chunking does
not change anything, and the determinism check still catches a tokenizer whose output depends on call order.
"""

from __future__ import annotations

import hashlib
import math
import re

import numpy as np
import pytest

from tokembed.metrics import MeasureDocuments, MetricRun, UNSPACED_SCRIPTS, measure_chunk
from tokembed.metrics.builtin import (
    BUILTIN_METRICS,
    RENYI_ALPHA,
    Deterministic,
    PremiumMedian,
    ids_digest_stream,
    is_partial_token,
    renyi_efficiency,
    tokens_per_word,
)
from tokembed.testing import sample_corpus, sample_texts

EDGE = [
    "",
    "   ",
    "\t\n",
    "plain words here",
    "Caf\u00e9 na\u00efve e\u0301te\u0301 cafe\u0301",          # precomposed and combining accents
    "\u6771\u4eac\u90fd\u306b\u4f4f\u3080 \u30c6\u30b9\u30c8",     # CJK, kana
    "\u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35\u0e04\u0e23\u0e31\u0e1a",  # Thai
    "emoji \U0001F600\U0001F433 \U0001F468\u200d\U0001F469\u200d\U0001F467 flag \U0001F1EB\U0001F1F7",
    "lone \ud800 surrogate \udfff end",
    "\ud83d",
    "zz\u00a0qq\u2003ww\u3000vv",                                  # non-ASCII spaces
    "\u0645\u0631\u062d\u0628\u0627 \u05e9\u05dc\u05d5\u05dd",
    "xqzv xqzv xqzv \u2603\u2603\u2603 \u16a0\u16a1\u16a2 \u0f00\u0f01",  # rare words: runs of <unk>
    "a" * 300,
    "\x1c\x1d\x1e\x1f separators",                                  # str.isspace only (not \s in regex)
]


# ---------------------------------------------------------------------------------------------------------------
# the reference: the per-document definitions of the measuring pass before arrays
# ---------------------------------------------------------------------------------------------------------------
def reference(tok, docs, chunk_size=256):
    import regex

    scripts = "".join(rf"\p{{Script={s}}}" for s in UNSPACED_SCRIPTS)
    letters_re, unspaced_re = regex.compile(r"\p{L}+"), regex.compile(rf"[{scripts}]+")
    word_re = re.compile(r"\S+")
    unk = getattr(tok, "unk_token", None)
    unk_id = tok.token_to_id(unk) if isinstance(unk, str) else None
    c = dict.fromkeys(("documents", "characters", "bytes", "words", "tokens", "letters", "unspaced_letters"), 0)
    unknown = words = continued = partial = exact = 0
    counts = np.zeros(max(int(tok.get_vocab_size()), 1), np.int64)
    lengths, h = [], hashlib.blake2b(digest_size=16)
    for lo in range(0, len(docs), chunk_size):
        part = docs[lo:lo + chunk_size]
        for doc, enc in zip(part, tok.encode_batch(part, add_special_tokens=False)):
            c["documents"] += 1
            c["characters"] += len(doc)
            c["bytes"] += len(doc.encode("utf-8", "surrogatepass"))
            c["words"] += len(doc.split())
            c["tokens"] += len(enc)
            c["letters"] += sum(map(len, letters_re.findall(doc)))
            c["unspaced_letters"] += sum(map(len, unspaced_re.findall(doc)))
            ids = np.asarray(enc.ids)
            if unk_id is not None:
                unknown += int(np.count_nonzero(ids == unk_id))
            spans = [m.span() for m in word_re.finditer(doc)]
            if spans:
                words += len(spans)
                continued += int(np.count_nonzero(tokens_per_word(spans, enc.offsets) >= 2))
            partial += sum(is_partial_token(tok, i) for i in ids.tolist())
            exact += tok.decode(ids) == doc
            np.add.at(counts, ids.astype(np.int64), 1)
            lengths.append(len(enc))
            a = np.ascontiguousarray(ids, dtype="<i4")
            h.update(len(a).to_bytes(8, "little"))
            h.update(a.tobytes())
    has_words = c["words"] > 0 and 2 * c["unspaced_letters"] <= c["letters"]
    t, n = c["tokens"], c["documents"]
    ratio = (lambda a, b: a / b if b else None)
    return dict(
        c,
        vocab_size=int(tok.get_vocab_size()),
        chars_per_token=ratio(c["characters"], t),
        bytes_per_token=ratio(c["bytes"], t),
        fertility=ratio(t, c["words"]) if has_words else None,
        continued_words=ratio(continued, words) if has_words else None,
        unk_rate=ratio(unknown, t),
        partial_char_rate=ratio(partial, t),
        round_trip=ratio(exact, n),
        vocab_utilization=ratio(int(np.count_nonzero(counts)), int(tok.get_vocab_size())),
        renyi_efficiency=renyi_efficiency(counts, int(tok.get_vocab_size()), RENYI_ALPHA),
        deterministic=True,
        _lengths=lengths,
        _digest=h.hexdigest(),
    )


def measured(tok, docs, workers=1, size=256, metrics=None):
    """The array path: a MetricRun fed in chunks of ``size`` on ``workers`` threads; raw (unrounded) values."""
    classes = [m for m in (metrics or BUILTIN_METRICS) if not m.timing and not m.argument_required]
    run = MetricRun(tok, classes)
    run.feed_all(docs, workers=workers, size=size)
    stats = run.stats
    out = dict(stats.as_dict())
    for name, metric in run.metrics.items():
        out[name] = metric.result(stats)
    return out, run


# ---------------------------------------------------------------------------------------------------------------
# the tokenizers: every built-in kind
# ---------------------------------------------------------------------------------------------------------------
def _tokenizers():
    from tokembed.plugins.bpe.tokenizer import BPETokenizer
    from tokembed.plugins.char.tokenizer import CharTokenizer
    from tokembed.plugins.unigram.tokenizer import UnigramTokenizer
    from tokembed.plugins.word.tokenizer import WordTokenizer
    from tokembed.plugins.wordpiece.tokenizer import WordPieceTokenizer

    corpus = sample_corpus(30_000)
    return {
        "char": CharTokenizer(min_frequency=3),
        "word": WordTokenizer(min_frequency=2),
        "word_bert_nfkc": WordTokenizer(pre_tokenizer="bert", normalizer=["nfkc", "lowercase"]),
        "bpe_suffix": BPETokenizer(vocab_size=300, end_of_word_suffix="</w>"),
        "bpe_bytelevel": BPETokenizer(vocab_size=400, byte_level=True, pre_tokenizer="gpt2"),
        "wordpiece": WordPieceTokenizer(vocab_size=300),
        "unigram": UnigramTokenizer(vocab_size=300),
    }, corpus


@pytest.fixture(scope="module")
def fitted():
    toks, corpus = _tokenizers()
    return {k: t.fit(corpus) for k, t in toks.items()}


@pytest.fixture(scope="module")
def docs():
    return EDGE + sample_texts() + sample_corpus(20_000)[:60] + EDGE


RATIOS = ("chars_per_token", "bytes_per_token", "fertility", "continued_words", "unk_rate", "partial_char_rate",
          "round_trip", "vocab_utilization", "renyi_efficiency")
COUNTS = ("documents", "characters", "bytes", "words", "tokens", "letters", "unspaced_letters", "vocab_size")


@pytest.mark.parametrize("name", ["char", "word", "word_bert_nfkc", "bpe_suffix", "bpe_bytelevel", "wordpiece",
                                  "unigram"])
def test_the_array_path_equals_the_per_document_definitions(fitted, docs, name):
    tok = fitted[name]
    ref = reference(tok, docs, chunk_size=16)
    got, run = measured(tok, docs, size=16)
    for key in COUNTS:
        assert got[key] == ref[key], (name, key)
    for key in RATIOS:
        if ref[key] is None:
            assert got[key] is None, (name, key)
        else:
            assert got[key] == pytest.approx(ref[key], abs=1e-12, rel=0), (name, key)
    assert got["deterministic"] is True
    # the digest of the ids hashes the same bytes per document as the per-document definition
    assert run.extras()["deterministic"]["ids_blake2b"] == ref["_digest"]


def test_the_fixture_exercises_the_awkward_cases(fitted, docs):
    # a property that can fail: the edge cases really produce unknown tokens, unspaced letters and lone surrogates
    ref = reference(fitted["word"], docs)
    assert ref["unk_rate"] > 0.05 and ref["unspaced_letters"] > 0 and ref["round_trip"] < 1
    assert ref["bytes"] > ref["characters"] and any("\ud800" in d for d in docs)


def test_the_shared_pass_counts_each_document_as_python_does():
    from tokembed.plugins.char.tokenizer import CharTokenizer

    tok = CharTokenizer().fit(EDGE)
    chunk = measure_chunk(tok, EDGE)
    assert chunk.characters.tolist() == [len(d) for d in EDGE]
    assert chunk.bytes.tolist() == [len(d.encode("utf-8", "surrogatepass")) for d in EDGE]
    assert chunk.words.tolist() == [len(d.split()) for d in EDGE]
    spans = [[m.span() for m in re.finditer(r"\S+", d)] for d in EDGE]
    got = [chunk.word_spans[a:b].tolist() for a, b in zip(chunk.word_indptr[:-1], chunk.word_indptr[1:])]
    assert got == [[list(s) for s in doc] for doc in spans]


def test_tokens_per_word_kernel_equals_the_searchsorted_definition_in_any_token_order():
    # the kernel walks words from the previous token's start; tokens that start earlier than the one before (and
    # empty or overlapping spans) must give the same counts as the per-document NumPy definition
    from tokembed.metrics._kernels import tokens_per_word as kernel

    rng = np.random.default_rng(7)
    word_spans, token_spans, w_indptr, t_indptr, expected = [], [], [0], [0], []
    for d in range(60):
        bounds = np.sort(rng.choice(np.arange(200), size=2 * int(rng.integers(0, 8)), replace=False))
        words = bounds.reshape(-1, 2)
        starts = rng.integers(0, 200, size=int(rng.integers(0, 12)))
        toks = np.stack([starts, starts + rng.integers(0, 30, size=starts.size)], axis=1).astype(np.int64)
        if d % 2:
            toks = toks[np.argsort(toks[:, 0], kind="stable")]  # sorted starts: the usual case
        word_spans.append(words), token_spans.append(toks)
        w_indptr.append(w_indptr[-1] + len(words)), t_indptr.append(t_indptr[-1] + len(toks))
        if len(words):
            expected.append(tokens_per_word([tuple(w) for w in words.tolist()], toks))
    ws = np.ascontiguousarray(np.concatenate(word_spans).reshape(-1, 2), np.int64)
    ts = np.ascontiguousarray(np.concatenate(token_spans).reshape(-1, 2), np.int64)
    out = np.full(len(ws), -1, np.int64)
    kernel(ws, np.array(w_indptr, np.int64), ts, np.array(t_indptr, np.int64), out)
    assert out.tolist() == np.concatenate(expected).tolist()
    assert out.max() >= 2  # the case is not trivial: some word is overlapped by several tokens


def test_premium_keeps_the_chapter_counts_in_order(fitted, docs):
    tok = fitted["bpe_suffix"]
    run = MetricRun(tok, [PremiumMedian])
    run.feed_all(docs, workers=1, size=7)
    assert run.metrics["premium_median"].chapter_tokens().tolist() == reference(tok, docs)["_lengths"]


# ---------------------------------------------------------------------------------------------------------------
# both cores, and chunking
# ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["bpe_bytelevel", "wordpiece", "word"])
def test_threads_give_the_results_of_one_thread(fitted, docs, name):
    tok = fitted[name]
    many = docs * 6
    one, run1 = measured(tok, many, workers=1, size=9)
    four, run4 = measured(tok, many, workers=4, size=9)
    assert one == four
    assert run1.extras() == run4.extras()
    # and chunking does not change a value (nor the digest: it hashes per document)
    big, run_big = measured(tok, many, workers=1, size=1000)
    assert {k: v for k, v in big.items()} == one
    assert run_big.extras()["deterministic"]["ids_blake2b"] == run1.extras()["deterministic"]["ids_blake2b"]


def test_measure_documents_on_threads_merges_exactly(fitted, docs):
    tok = fitted["unigram"]
    whole = MeasureDocuments(tok, [m for m in BUILTIN_METRICS if m.scope == "corpus" and not m.timing
                                   and not m.argument_required], workers=3)
    parts = [whole(docs[:20]), whole(docs[20:]), whole([])]
    merged = parts[0].merge(parts[1]).merge(parts[2])
    single = MeasureDocuments(tok, whole.metrics, workers=1)(docs)
    assert merged.results() == single.results()


# ---------------------------------------------------------------------------------------------------------------
# determinism on a sample
# ---------------------------------------------------------------------------------------------------------------
def test_ids_digest_stream_is_the_per_document_bytes():
    ids = np.array([5, 6, 7], np.int32)
    indptr = np.array([0, 2, 2, 3], np.int64)
    expected = b"".join(len(a).to_bytes(8, "little") + np.asarray(a, "<i4").tobytes()
                        for a in ([5, 6], [], [7]))
    assert ids_digest_stream(ids, indptr) == expected


def _call_order_tokenizer(base):
    """A tokenizer whose ids depend on how many times it was called: every call after the first maps id 0..n to
    n..0 on its odd calls (a stateful cache gone wrong)."""

    class Flaky(type(base)):
        calls = 0

        def encode(self, text, **kw):
            enc = super().encode(text, **kw)
            type(self).calls += 1
            if type(self).calls % 2:
                enc.ids[...] = self.get_vocab_size() - 1 - enc.ids
            return enc

    tok = Flaky.__new__(Flaky)
    vars(tok).update(vars(base))
    return tok


def _batch_order_tokenizer(base):
    """A tokenizer whose ids depend on a text's position in its batch (the first text of a batch gets its last id
    dropped), single calls being right."""

    class ByPosition(type(base)):
        def encode_batch(self, texts, *args, **kw):
            out = super().encode_batch(texts, *args, **kw)
            texts = list(texts)
            if len(texts) > 1 and len(out[0].ids):
                e = out[0]
                out[0] = type(e)(e.ids[:-1], e.tokens[:-1], e.offsets[:-1])
            return out

    tok = ByPosition.__new__(ByPosition)
    vars(tok).update(vars(base))
    return tok


def test_a_tokenizer_whose_output_depends_on_call_order_is_not_deterministic(fitted, docs):
    base = fitted["char"]
    assert measured(base, docs, metrics=[Deterministic])[0]["deterministic"] is True
    assert measured(_call_order_tokenizer(base), docs, metrics=[Deterministic])[0]["deterministic"] is False
    assert measured(_batch_order_tokenizer(base), docs, metrics=[Deterministic])[0]["deterministic"] is False


def test_the_determinism_sample_is_the_stated_one(fitted):
    from tokembed.metrics.builtin import SAMPLE_EVERY, SAMPLE_HEAD, determinism_sample

    assert (SAMPLE_HEAD, SAMPLE_EVERY) == (32, 64)
    got = [30 + int(i) for i in determinism_sample(30, 200)]
    assert got == [30, 31, 64, 128, 192]
    docs = [f"doc {i}" for i in range(300)]
    out, run = measured(fitted["char"], docs, metrics=[Deterministic], size=50)
    assert run.extras()["deterministic"]["sample_documents"] == 32 + 4  # 0..31, 64, 128, 192, 256


def test_the_determinism_sample_keeps_within_its_budget_of_characters(fitted):
    from tokembed.metrics.builtin import SAMPLE_FLOOR_CHARS, within_budget

    assert SAMPLE_FLOOR_CHARS == 65_536
    # positions 0..3 are candidates, each 40,000 code points: 0 is always taken (nothing sampled yet); 1 would make
    # 80,000 > 65,536 + 80,000 // 64 = 66,786; 2 and 3 likewise (80,000 > 67,411 and > 68,036)
    chars = np.full(4, 40_000, np.int64)
    assert within_budget(np.arange(4), chars, 0, 0) == ([0], 40_000)
    # after 64 * 10,000,000 code points measured the budget is 65,536 + 10,000,000: all four fit
    assert within_budget(np.arange(4), chars, 640_000_000, 40_000) == ([0, 1, 2, 3], 200_000)
    # short documents: every candidate is taken, as by position alone
    assert within_budget(np.array([0, 5]), np.ones(6, np.int64), 0, 0) == ([0, 5], 2)
    # through a run: documents of 50,000 code points then short ones; the long ones past the first are skipped
    docs = ["x" * 50_000] * 40 + ["short doc"] * 200
    out, run = measured(fitted["char"], docs, metrics=[Deterministic], size=64)
    assert out["deterministic"] is True
    det = run.metrics["deterministic"]
    # candidates: 0..31, 64, 128, 192; taken: 0 (always) then 64, 128, 192 (9 code points each); the long documents
    # 1..31 each exceed 65,536 + their position's share
    assert det.checked == 4 and det.sample_chars == 50_000 + 27
    assert det.seen_chars == 40 * 50_000 + 200 * 9


@pytest.mark.parametrize("name", ["vocab_utilization", "renyi_efficiency", "partial_char_rate"])
def test_a_negative_id_is_a_clear_error_not_a_wrapped_index(fitted, name):
    from types import SimpleNamespace

    from tokembed.errors import TokembedError

    cls = next(m for m in BUILTIN_METRICS if m.name == name)
    metric = cls(fitted["char"])
    with pytest.raises(TokembedError, match=r"negative id \(-1\)"):
        metric.update_chunk(SimpleNamespace(ids=np.array([3, -1, 2], np.int32)))
