"""Every cached tokenizer kernel compiles exactly one signature: the one ``tokembed warmup`` compiles.

Each extra signature of a Numba kernel is another full compile (a read-only against a writeable array, int32
against int64, a literal constant against int64), paid by the user at the first call that uses it. The check runs
in a fresh process (after the warmups and then real calls of every path), so other tests cannot add signatures.
"""

from __future__ import annotations

import json
import subprocess
import sys

KERNELS = {
    "tokembed.text._kernels": ["count_pieces", "scan_docs", "scan_spans"],
    "tokembed.plugins._subword._kernels": ["fill_pair_table", "merge_run"],
    "tokembed.plugins._subword._kernels_encode": ["encode_words"],
    "tokembed.plugins.bpe._kernels": ["_dedup_words", "expand_words"],
    "tokembed.plugins.wordpiece._kernels": ["build_vocab_table", "encode_chunk", "pieces_text"],
    "tokembed.plugins.cooccurrence._kernels": ["count_block", "dense_to_run", "merge_runs", "runs_to_csr",
                                               "sort_reduce"],
    "tokembed.plugins.tfidf._kernels": ["count_rows", "intern_ngrams", "normalize_rows"],
    "tokembed.plugins.svd._kernels": ["csr_times_dense"],
    "tokembed.plugins.unigram._kernels": ["build_double_array"],
    "tokembed.plugins.unigram._kernels_encode": ["encode_docs", "lattice_text", "normalize_docs", "normalize_text"],
    "tokembed.plugins.unigram._kernels_segment": ["nbest", "sample_path"],
    "tokembed.plugins.unigram._kernels_decode": ["decode_pieces"],
    "tokembed.decoding._kernels": ["gather_entries"],
    "tokembed.plugins.unigram._kernels_train": ["build_piece_table", "count_substrings", "e_step",
                                                "piece_alternatives", "viterbi_counts"],
}

_PROGRAM = """
import importlib, json, warnings
import numpy as np
warnings.simplefilter("ignore")
from numba.core.caching import NullCache
from numba.core.registry import CPUDispatcher
from tokembed.text import fast
from tokembed.text.pre_tokenizers import GPT2, Bert
from tokembed.plugins.bpe.tokenizer import BPETokenizer
from tokembed.plugins.wordpiece.tokenizer import WordPieceTokenizer
from tokembed.plugins.cooccurrence import CooccurrenceVectorizer
from tokembed.sequences import TokenSequences
from tokembed.plugins.tfidf.vectorizer import BagOfWords, TfidfVectorizer
from tokembed.plugins.tfidf.onehot import OneHotVectorizer
from tokembed.plugins.svd.vectorizer import TruncatedSVD

from tokembed.plugins.unigram.tokenizer import UnigramTokenizer

fast.warmup()
from tokembed.decoding import warmup as decoding_warmup
decoding_warmup()
UnigramTokenizer.warmup()
TfidfVectorizer.warmup()
TruncatedSVD.warmup()
BPETokenizer.warmup()
WordPieceTokenizer.warmup()
CooccurrenceVectorizer.warmup()
# real calls of every path after the warmups: none may compile another signature
docs = ["The caf\\u00e9's 2 cats \\u6771\\u4eac ran, then ran again!", "  unwarmed   words\\n\\tand more words  "] * 50
long_text = " ".join(docs) * 40
for pre in ("gpt2", "word_punct", "whitespace_split", "bert", "sklearn"):
    fast.count_words(docs, pre, workers=2, chunk_bytes=512)
    fast.index_words(docs, pre, workers=2, chunk_bytes=512)
for pre in (GPT2(), Bert()):
    fast.fast_spans(pre, long_text)
from tokembed.plugins.word.tokenizer import WordTokenizer
for pre in ("gpt2", "word_punct", "identity"):
    word = WordTokenizer(pre_tokenizer=pre, normalizer="lowercase").fit(docs)
    word.encode_ids(docs + [long_text], spans=True, num_workers=2)
    word.encode_batch(docs[:4])
for byte_level in (False, True):
    tok = BPETokenizer(vocab_size=120, byte_level=byte_level, dropout=None)
    tok.fit(docs)
    tok.encode(long_text)
    tok.encode_batch(docs[:4])
    ids, lengths = tok.encode_ids(docs)
    tok.decode_batch(np.split(ids, np.cumsum(lengths)[:-1]), skip_special_tokens=True)
tok = BPETokenizer(vocab_size=120, dropout=0.1).fit(docs)
tok.encode(long_text)
for scoring in ("likelihood", "frequency"):
    wp = WordPieceTokenizer(vocab_size=80, scoring=scoring, show_progress=False).fit(docs)
    wp.encode(long_text)
    wp.encode_batch(docs, num_workers=2)
words = [d.split() for d in docs]
seqs = TokenSequences.from_tokens(words)
for params in ({}, {"symmetric": False, "weighting": "uniform"}, {"ppmi": True, "dtype": "float64"},
               {"window": 30, "max_vocab": 5}):
    cv = CooccurrenceVectorizer(min_count=1, workers=2, **params).fit(seqs)
    cv.transform(words[:3])
cv = CooccurrenceVectorizer(min_count=1)
for chunk in seqs.chunks(7):
    cv.partial_fit_vocabulary(chunk)
for chunk in seqs.chunks(7):
    cv.partial_fit(chunk)
cv.matrix_
for vec in (TfidfVectorizer(ngram_range=(1, 2), norm="l1"), BagOfWords(stop_words=["the"]), OneHotVectorizer()):
    X = vec.fit_transform(docs)
    vec.transform([d.split() for d in docs])
    vec.partial_fit(docs[:3])
import pathlib, tempfile
from tokembed.encode import encode_corpus
from tokembed.plugins.word.tokenizer import WordTokenizer
with tempfile.TemporaryDirectory() as tmp:  # a memory-mapped corpus: its int32 chunks take the same signatures
    encode_corpus(WordTokenizer().fit(docs), docs, pathlib.Path(tmp) / "enc", progress=False)
    mapped = TokenSequences.open(pathlib.Path(tmp) / "enc")
    CooccurrenceVectorizer(min_count=1, workers=2).fit(mapped).transform(mapped)
    for vec in (TfidfVectorizer(ngram_range=(1, 2), norm="l1"), BagOfWords(stop_words=["the"]), OneHotVectorizer()):
        vec.fit(mapped).transform(mapped)
for algorithm in ("randomized", "arpack"):
    TruncatedSVD(n_components=3, algorithm=algorithm).fit(X.astype("float32")).transform(X.toarray())
for kwargs in ({}, {"byte_fallback": True, "split_digits": True, "normalization_rule_name": "identity"}):
    uni = UnigramTokenizer(vocab_size=300, character_coverage=1.0, **kwargs).fit(docs)
    uni.encode(long_text)
    uni.encode_batch(docs, num_workers=2)
    uni.encode_nbest(docs[0], 4)
    uni.sample_encode(docs[0], nbest_size=-1)
    uni.sample_encode(docs[0], nbest_size=3)
    uni.decode(uni.encode(docs[0]).ids)
    uni.decode_batch([uni.encode(d).ids for d in docs[:3]] + [[]], skip_special_tokens=True)

out = {}
for name in KERNELS:
    mod = importlib.import_module(name)
    out[name] = {attr: [len(obj.signatures), not isinstance(obj._cache, NullCache)] for attr, obj in vars(mod).items()
                 if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == name}
print(json.dumps(out))
"""


def test_each_kernel_has_one_signature_after_warmup_and_real_calls():
    program = f"KERNELS = {KERNELS!r}\n" + _PROGRAM
    proc = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    counts = json.loads(proc.stdout.strip().splitlines()[-1])
    for module, kernels in KERNELS.items():
        found = counts[module]
        # every cached kernel of the module is listed above, so a new kernel cannot escape the check
        assert sorted(name for name, (_, cached) in found.items() if cached) == sorted(kernels), module
        for kernel in kernels:
            assert found[kernel][0] == 1, (module, kernel, found[kernel][0])
        # Helpers (not cached) are compiled only when a kernel is, i.e. when Numba's cache was cold; then each
        # must have compiled one signature too (a literal 0 argument once gave a helper a second one).
        for helper, (n, _) in found.items():
            assert n <= 1, (module, helper, n)
