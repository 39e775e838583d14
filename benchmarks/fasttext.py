"""fastText and word2vec training on wv_corpus against gensim 4's ``FastText`` and ``Word2Vec`` and Facebook's fastText.

Every side trains skip-gram, 100 dimensions, window 5, 5 epochs, min_count 5, 2 threads on the same text, and the
check scores both sides' vectors on wordsim353, simlex999 and google_analogy (vocabulary restricted to the 30,000
most frequent words) with :func:`tokembed.evaluation.evaluate_vectors`. Ours runs with the parameters of the
reference it is compared with: gensim's defaults (sample 1e-3, alpha 0.025 to min_alpha 1e-4, negatives drawn with
exponent 0.75) against gensim, fastText's (t 1e-4, lr 0.05 to 0, exponent 0.5) against fastText.

These runs are long (gensim's FastText takes about 4 minutes, fastText 7, on 2 cores): run them with one timed call
and no memory probe, ``python -m benchmarks fasttext_gensim word2vec_gensim fasttext_facebook --warmup 0 --repeat 1
--no-memory``. For a quick check that they work, ``TOKEMBED_BENCH_TOKENS=1000000 TOKEMBED_BENCH_EPOCHS=1`` trains
on the first million tokens for one epoch (the scores then mean little).
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

from . import Case, CheckFailed, benchmark

_SETS = ["wordsim353", "simlex999", "google_analogy"]
_THREADS = 2
_COMMON = dict(vector_size=100, window=5, min_count=5)
_TOL = 0.02


def _limits() -> tuple[int | None, int]:
    tokens = os.environ.get("TOKEMBED_BENCH_TOKENS")
    return (int(tokens) if tokens else None), int(os.environ.get("TOKEMBED_BENCH_EPOCHS", "5"))


def _data_note() -> str:
    tokens, epochs = _limits()
    what = "wv_corpus (15,348,119 tokens, one document per line)" if tokens is None else \
        f"the first {tokens:,} tokens of wv_corpus (TOKEMBED_BENCH_TOKENS; a shortened run)"
    return f"{what}; {epochs} epoch(s); every side reads the same lines"


def _lines() -> tuple[list[list[str]], Path]:
    """The corpus as token lists (interned strings) and a file holding exactly those lines (for fastText)."""
    from tokembed.datasets import dataset_path

    path = dataset_path("wv_corpus")
    limit, _ = _limits()
    docs: list[list[str]] = []
    n = 0
    intern = sys.intern
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            toks = [intern(t) for t in line.split()]
            if not toks:
                continue
            docs.append(toks)
            n += len(toks)
            if limit is not None and n >= limit:
                break
    if limit is None:
        return docs, path
    folder = Path(tempfile.mkdtemp(prefix="tokembed-bench-ft-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    sliced = folder / "wv_corpus_slice.txt"
    sliced.write_text("".join(" ".join(d) + "\n" for d in docs), encoding="utf-8")
    return docs, sliced


def _scores(kv) -> dict[str, float]:
    from tokembed.evaluation import evaluate_vectors

    res = evaluate_vectors(kv, _SETS, restrict_vocab=30_000)
    return {name: (r["accuracy"] if r.get("kind") == "analogies" else r["spearman"]) or 0.0 for name, r in res.items()}


def _check(reference: str, tolerance: float):
    def check(ours, ref) -> str:
        a, b = _scores(ours), _scores(ref)
        shown = "; ".join(f"{k} {a[k]:.3f} vs {b[k]:.3f}" for k in _SETS)
        worse = [k for k in _SETS if a[k] < b[k] - tolerance]
        if worse:
            raise CheckFailed(f"ours scores more than {tolerance} below {reference} on {', '.join(worse)} ({shown})")
        return f"scores ours vs {reference}: {shown} (ours must not be more than {tolerance} below); vocabularies " \
               f"{len(ours):,} and {len(ref):,} words"

    return check


def _from_gensim(wv):
    from tokembed.keyedvectors import KeyedVectors

    return KeyedVectors.from_arrays(list(wv.index_to_key), wv.vectors)


_GENSIM_NOTES = ("Both sides get the same list of token lists (ours packs it into TokenSequences inside the timed "
                 "call, gensim scans it for its vocabulary), then train with gensim's defaults: negative 5 with "
                 "exponent 0.75, sample 1e-3, alpha 0.025 decaying to 1e-4, shrinking windows, seed 0. Ours differs "
                 "in two documented ways: the skip-gram centre word's input gradient is summed over its window "
                 "and applied once (gensim applies it after each context word), and negatives come from an alias "
                 "table instead of a cumulative table. Numba kernels are compiled in the untimed setup.")


@benchmark(
    "fasttext_gensim",
    description="fastText skip-gram with character n-grams (3-6, 2,000,000 buckets), 100 dimensions, window 5, "
    "5 epochs, min_count 5, 2 threads.",
    ours="tokembed `FastTextEmbedder(sg=True, workers=2)` with gensim's defaults",
    reference="gensim 4 `FastText(sg=1, workers=2)`",
    check=f"wordsim353, simlex999 and google_analogy (30k) scores of ours not more than {_TOL} below gensim's",
    data="wv_corpus",
    libraries=("gensim", "numba"),
)
def fasttext_gensim() -> Case:
    from gensim.models import FastText

    from tokembed.plugins.fasttext import FastTextEmbedder

    docs, _ = _lines()
    _, epochs = _limits()
    FastTextEmbedder.warmup()

    def ours():
        return FastTextEmbedder(**_COMMON, sg=True, epochs=epochs, workers=_THREADS, seed=0,
                                show_progress=False).fit(docs).wv_

    def reference():
        m = FastText(sentences=docs, **_COMMON, sg=1, epochs=epochs, workers=_THREADS, seed=0, bucket=2_000_000,
                     min_n=3, max_n=6)
        return _from_gensim(m.wv)

    return Case(ours=ours, reference=reference, quality=True, check=_check("gensim", _TOL), notes=_data_note() + ". " +
                _GENSIM_NOTES)


@benchmark(
    "word2vec_gensim",
    description="word2vec skip-gram, 100 dimensions, window 5, 5 epochs, min_count 5, 2 threads.",
    ours="tokembed `Word2VecEmbedder(sg=True, workers=2)` with gensim's defaults",
    reference="gensim 4 `Word2Vec(sg=1, workers=2)`",
    check=f"wordsim353, simlex999 and google_analogy (30k) scores of ours not more than {_TOL} below gensim's",
    data="wv_corpus",
    libraries=("gensim", "numba"),
)
def word2vec_gensim() -> Case:
    from gensim.models import Word2Vec

    from tokembed.plugins.fasttext import Word2VecEmbedder

    docs, _ = _lines()
    _, epochs = _limits()
    Word2VecEmbedder.warmup()

    def ours():
        return Word2VecEmbedder(**_COMMON, sg=True, epochs=epochs, workers=_THREADS, seed=0,
                                show_progress=False).fit(docs).wv_

    def reference():
        m = Word2Vec(sentences=docs, **_COMMON, sg=1, epochs=epochs, workers=_THREADS, seed=0)
        return _from_gensim(m.wv)

    return Case(ours=ours, reference=reference, quality=True, check=_check("gensim", _TOL), notes=_data_note() + ". " +
                _GENSIM_NOTES)


@benchmark(
    "fasttext_facebook",
    description="fastText skip-gram with character n-grams (3-6, 2,000,000 buckets), 100 dimensions, window 5, "
    "5 epochs, min_count 5, 2 threads, fastText's defaults otherwise.",
    ours="tokembed `FastTextEmbedder(sg=True, workers=2, sample=1e-4, alpha=0.05, min_alpha=0, ns_exponent=0.5)`",
    reference="Facebook fastText (`fasttext-wheel`) `train_unsupervised(model='skipgram', thread=2)`",
    check="scores of ours not more than 0.05 below fastText's (the goal: within 0.02, at half gensim's time)",
    data="wv_corpus",
    libraries=("fasttext-wheel", "numba"),
)
def fasttext_facebook() -> Case:
    import fasttext

    from tokembed.keyedvectors import KeyedVectors
    from tokembed.plugins.fasttext import FastTextEmbedder

    docs, path = _lines()
    _, epochs = _limits()
    FastTextEmbedder.warmup()

    def ours():
        return FastTextEmbedder(**_COMMON, sg=True, epochs=epochs, workers=_THREADS, seed=0, sample=1e-4, alpha=0.05,
                                min_alpha=0.0, ns_exponent=0.5, show_progress=False).fit(docs).wv_

    def reference():
        m = fasttext.train_unsupervised(str(path), model="skipgram", dim=100, ws=5, epoch=epochs, minCount=5,
                                        thread=_THREADS, verbose=0)
        words = m.words
        import numpy as np

        return KeyedVectors.from_arrays(words, np.array([m.get_word_vector(w) for w in words]))

    return Case(ours=ours, reference=reference, quality=True, check=_check("fastText", 0.05),
                notes=_data_note() + ". fastText reads the same lines from a file (its time includes reading and "
                "counting them; it also trains its end-of-line token </s>, which ours does not have); ours gets the "
                "token lists. Same parameters on both sides: lr 0.05 decaying to 0, t (sample) 1e-4, neg 5, "
                "negatives by counts^0.5, minn 3, maxn 6, bucket 2,000,000. fastText redraws a negative equal to "
                "the target, ours skips it.")


def _encoded_corpus() -> Path:
    """wv_corpus (or its first TOKEMBED_BENCH_TOKENS tokens) written by ``tokembed encode`` with a whitespace word
    tokenizer, built once under the temporary folder and reused (the memory probes then only open it)."""
    from tokembed.encode import encode_corpus
    from tokembed.encoded import MANIFEST
    from tokembed.plugins.word.tokenizer import WordTokenizer

    limit, _ = _limits()
    folder = Path(tempfile.gettempdir()) / f"tokembed-bench-w2v-mapped-{limit or 'all'}"
    if not (folder / MANIFEST).is_file():
        docs, _ = _lines()
        lines = [" ".join(d) for d in docs]
        del docs
        tok = WordTokenizer(pre_tokenizer="whitespace_split", unk_token=None, pad_token=None).fit(lines)
        encode_corpus(tok, lines, folder, corpus="wv_corpus", progress=False)
    return folder


@benchmark(
    "word2vec_mapped",
    description="word2vec skip-gram, 100 dimensions, window 5, min_count 5, 1 thread, seed 0, trained from the "
    "memory-mapped folder `tokembed encode` wrote vs from the same documents in memory.",
    ours="tokembed `Word2VecEmbedder(workers=1).fit(TokenSequences.open(DIR))` (ids read in place, chunk by chunk)",
    reference="tokembed `Word2VecEmbedder(workers=1).fit(TokenSequences.open(DIR).in_memory())` (int32 ids in RAM)",
    check="identical input and output matrices (one worker and a seed); the goal: time within 1.1x",
    data="wv_corpus",
    libraries=("numba",),
)
def word2vec_mapped() -> Case:
    import numpy as np

    from tokembed.plugins.fasttext import Word2VecEmbedder
    from tokembed.sequences import TokenSequences

    folder = _encoded_corpus()
    _, epochs = _limits()
    Word2VecEmbedder.warmup()
    params = dict(**_COMMON, sg=True, epochs=epochs, workers=1, seed=0, show_progress=False)
    # compile the kernels for the mapped dtype too, outside the timed calls
    tiny = TokenSequences.open(folder)
    Word2VecEmbedder(**{**params, "epochs": 1, "vector_size": 4}).fit(tiny)

    def ours():
        return Word2VecEmbedder(**params).fit(TokenSequences.open(folder))

    def reference():
        return Word2VecEmbedder(**params).fit(TokenSequences.open(folder).in_memory())

    def check(a, b) -> str:
        same = np.array_equal(a.input_matrix_, b.input_matrix_) and np.array_equal(a.output_matrix_, b.output_matrix_)
        if not same:
            raise CheckFailed("the mapped corpus and the in-memory one gave different vectors")
        return f"identical input and output matrices ({len(a.wv_):,} words, {a.corpus_tokens_:,} tokens per epoch)"

    return Case(ours=ours, reference=reference, check=check,
                notes=_data_note() + ". The folder is encoded once (untimed) with a whitespace word tokenizer; the "
                "in-memory side's time includes converting the mapped ids to int32 (a copy of 4 bytes per token), "
                "which is what a caller without streaming pays. Peak RSS counts the mapped pages of ids.npy that "
                "the process touched (2 bytes per token, page cache the system can reclaim).")
