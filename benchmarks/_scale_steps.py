"""The work of each step of :mod:`benchmarks.scale`, run in its own process (``python -m benchmarks._scale_steps
STEP DATA SIZE_LABEL SIZE_BYTES [ARG]``) so that its peak RSS and an out-of-memory failure are its own.

Each step writes a small JSON of what it did (counts, the time of its parts) to the file named by the environment
variable ``TOKEMBED_SCALE_DETAIL``; the driver adds the wall time, MB/s, peak RSS and status. The parameters of
each step are stated here once, in :data:`W2V`, :data:`BPE` and the functions; docs/scale.md describes them.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

#: word2vec / gensim settings, shared by every word-vector step (skip-gram, 100 d, one epoch, 2 threads, seed 0)
W2V = dict(vector_size=100, window=5, negative=5, sample=1e-3, min_count=5, epochs=1, seed=0, workers=2)
#: the BPE 32k of the bpe and hf-bpe steps (the settings of benchmarks/bpe.py's bpe_train)
BPE = dict(vocab_size=32_000, min_frequency=2)


def corpus_file(data: Path, label: str) -> Path:
    return data / f"corpus-{label}.txt"


def encoded_dir(data: Path, label: str) -> Path:
    return data / f"encoded-{label}"


def gpt2_tokenizer(data: Path) -> Path:
    return data / "gpt2.tokembed.json"


def gensim_file(data: Path, label: str, budget: int) -> Path:
    return data / f"gensim-{label}-{budget}.txt"


def _detail(**values) -> None:
    path = os.environ.get("TOKEMBED_SCALE_DETAIL")
    if path:
        Path(path).write_text(json.dumps(values), encoding="utf-8")


def _quiet():
    import warnings

    warnings.simplefilter("ignore")


# -- our steps --------------------------------------------------------------------------------------------------------
def build(data: Path, label: str, size: int) -> None:
    from .engine import write_corpus

    t0 = time.perf_counter()
    write_corpus(corpus_file(data, label), size)
    _detail(seconds=time.perf_counter() - t0)


def bpe(data: Path, label: str, size: int) -> None:
    """BPE 32k: the word counts streamed from the file (local engine: one reader, two counting threads), then the
    merge loop on the counts."""
    from tokembed.corpus import Corpus
    from tokembed.engine import open_engine
    from tokembed.plugins.bpe.tokenizer import BPETokenizer

    _quiet()
    tok = BPETokenizer(**BPE, pre_tokenizer="word_punct", end_of_word_suffix="</w>", unk_token=None)
    t0 = time.perf_counter()
    counts = open_engine("local", workers=2).count(tok.partial_counts, Corpus((corpus_file(data, label),)))
    t1 = time.perf_counter()
    distinct = len(counts.value) if hasattr(counts, "value") else len(counts)
    tok.fit_counts(counts)
    t2 = time.perf_counter()
    _detail(count_seconds=t1 - t0, merge_seconds=t2 - t1, distinct_words=distinct, vocab=tok.get_vocab_size())


def _mapped(data: Path, label: str, budget: int = 0):
    """The encoded folder mapped; with ``budget`` > 0, only its first documents holding at most ``budget`` tokens
    (views of the maps: nothing is read)."""
    import numpy as np

    from tokembed.sequences import TokenSequences

    seqs = TokenSequences.open(encoded_dir(data, label))
    if budget <= 0 or budget >= seqs.n_tokens:
        return seqs
    k = max(1, int(np.searchsorted(seqs.offsets, budget, side="right")) - 1)
    part = TokenSequences.__new__(TokenSequences)  # the public slots, as TokenSequences.open fills them
    part.ids, part.offsets = seqs.ids[:int(seqs.offsets[k])], seqs.offsets[:k + 1]
    part.vocab, part.special_ids = seqs.vocab, seqs.special_ids
    return part


def cooccurrence(data: Path, label: str, size: int) -> None:
    """Co-occurrence counts (the vectorizer's defaults) from the encoded folder, as a user runs them:
    ``CooccurrenceVectorizer().fit(TokenSequences.open(DIR))``, which streams the map range by range (the token
    counts, then the pairs over the kept vocabulary)."""
    from tokembed.plugins.cooccurrence.vectorizer import CooccurrenceVectorizer

    seqs = _mapped(data, label)
    vec = CooccurrenceVectorizer().fit(seqs)
    _detail(vocab=len(vec.index_to_key_), stored_pairs=int(vec.matrix_.nnz), tokens=int(seqs.n_tokens))


def tfidf_df(data: Path, label: str, size: int) -> None:
    """TF-IDF document frequencies and vocabulary (min_df 5) of the text, one document per line, on the local
    engine's two threads over 64 MiB partitions (as benchmarks/engine.py's engine_tfidf)."""
    from tokembed.corpus import Corpus
    from tokembed.engine import open_engine
    from tokembed.plugins.tfidf.vectorizer import TfidfVectorizer

    vec = TfidfVectorizer(min_df=5)
    t0 = time.perf_counter()
    vec.fit_counts(open_engine("local", workers=2, partition_mb=64).count(vec.partial_counts,
                                                                          Corpus((corpus_file(data, label),))))
    _detail(seconds=time.perf_counter() - t0, terms=len(vec.vocabulary_))


def _word2vec(data: Path, label: str, budget: int, in_memory: bool) -> None:
    from tokembed.plugins.fasttext.embedder import Word2VecEmbedder

    seqs = _mapped(data, label, budget)
    t0 = time.perf_counter()
    if in_memory:
        seqs = seqs.in_memory()  # the "before": every id copied into RAM as int32
    model = Word2VecEmbedder(sg=True, show_progress=False, **W2V)
    t1 = time.perf_counter()
    model.fit(seqs)
    t2 = time.perf_counter()
    tokens = int(seqs.n_tokens)
    _detail(tokens=tokens, load_seconds=t1 - t0, fit_seconds=t2 - t1, tokens_per_s=tokens / (t2 - t1),
            vocab=len(model.wv_.index_to_key))


def word2vec(data: Path, label: str, size: int, budget: str = "0") -> None:
    """word2vec (skip-gram, 100 d, one epoch) on the mapped encoded folder, or its first ``budget`` tokens."""
    _word2vec(data, label, int(budget), in_memory=False)


def w2v_in_memory(data: Path, label: str, size: int, budget: str = "0") -> None:
    """The same, after reading the ids into memory as int32 (``TokenSequences.in_memory``): the "before"."""
    _word2vec(data, label, int(budget), in_memory=True)


# -- references --------------------------------------------------------------------------------------------------------
def hf_bpe(data: Path, label: str, size: int) -> None:
    """Hugging Face ``BpeTrainer`` (32k, min_frequency 2, ``</w>``, Whitespace pre-tokenizer) from the file."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    hf = Tokenizer(models.BPE(end_of_word_suffix="</w>"))
    hf.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.BpeTrainer(**BPE, end_of_word_suffix="</w>", show_progress=False)
    t0 = time.perf_counter()
    hf.train([str(corpus_file(data, label))], trainer)
    _detail(seconds=time.perf_counter() - t0, vocab=hf.get_vocab_size())


def spm(data: Path, label: str, size: int, cap: str = "10000000") -> None:
    """sentencepiece's trainer, BPE 32k, 2 threads, on at most ``cap`` sentences (lines; 0: all of them)."""
    import tempfile

    import sentencepiece

    with tempfile.TemporaryDirectory(dir=data) as tmp:
        t0 = time.perf_counter()
        sentencepiece.SentencePieceTrainer.train(
            input=str(corpus_file(data, label)), model_prefix=str(Path(tmp) / "spm"), model_type="bpe",
            vocab_size=BPE["vocab_size"], input_sentence_size=int(cap), shuffle_input_sentence=True, num_threads=2,
            train_extremely_large_corpus=True, minloglevel=2)
        _detail(seconds=time.perf_counter() - t0, cap=int(cap))


def gensim_w2v(data: Path, label: str, size: int, budget: str = "0") -> None:
    """gensim 4 ``Word2Vec(corpus_file=...)``: the same token stream as the word2vec step (ids written as words,
    one document per line, by the driver beforehand), the same settings."""
    from gensim.models import Word2Vec

    path = gensim_file(data, label, int(budget))
    t0 = time.perf_counter()
    model = Word2Vec(corpus_file=str(path), sg=1, **W2V)
    seconds = time.perf_counter() - t0
    tokens = int(model.corpus_total_words)
    _detail(tokens=tokens, fit_seconds=seconds, tokens_per_s=tokens / seconds, vocab=len(model.wv.index_to_key))


def write_gensim_file(data: Path, label: str, budget: int) -> Path:
    """The gensim step's input, written once (untimed): each document of the mapped encoded folder (or its first
    ``budget`` tokens) as its ids in decimal, space-separated, one line each; documents of fewer than 2 tokens are
    written too (gensim skips them as word2vec does)."""
    import numpy as np

    path = gensim_file(data, label, budget)
    if path.exists():
        return path
    seqs = _mapped(data, label, budget)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="ascii") as out:
        for start, stop in seqs.id_chunks(1 << 22):
            lo = int(seqs.offsets[start])
            ids = np.asarray(seqs.ids[lo:int(seqs.offsets[stop])])
            words = ids.astype(str).tolist()
            bounds = (seqs.offsets[start:stop + 1] - lo).tolist()
            out.write("".join(" ".join(words[a:b]) + "\n" for a, b in zip(bounds[:-1], bounds[1:])))
    os.replace(tmp, path)
    return path


STEPS = {"build": build, "bpe": bpe, "cooccurrence": cooccurrence, "tfidf-df": tfidf_df, "word2vec": word2vec,
         "w2v-in-memory": w2v_in_memory, "hf-bpe": hf_bpe, "spm": spm, "gensim-w2v": gensim_w2v}


def main(argv: list[str]) -> int:
    step, data, label, size, *extra = argv
    STEPS[step](Path(data), label, int(size), *extra)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
