"""The built-ins that count or transform token sequences (cooccurrence, glove, bow, tfidf, onehot) on a
memory-mapped corpus (``TokenSequences.open`` of a ``tokembed encode`` folder): the same bytes as in memory, read
range by range, never converted whole (issue 27, item 2)."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import tokembed.errors
import tokembed.sequences
from tokembed.encode import encode_corpus
from tokembed.plugins.cooccurrence import CooccurrenceVectorizer
from tokembed.plugins.glove import GloVe
from tokembed.plugins.tfidf.onehot import OneHotVectorizer
from tokembed.plugins.tfidf.vectorizer import BagOfWords, TfidfVectorizer
from tokembed.plugins.word.tokenizer import WordTokenizer
from tokembed.sequences import TokenSequences
from tokembed.testing import sample_corpus

STOP = ["the", "of", "and", "a", "to"]

#: name -> a factory of the component, fitted on the same corpus mapped and in memory. Each covers the paths of its
#: issue item: windows over dropped words, PPMI, n-grams, stop words, max_df / min_df / max_features, sublinear tf.
COMPONENTS = {
    "cooccurrence": lambda: CooccurrenceVectorizer(window=5, min_count=2, workers=1),
    "cooccurrence-ppmi-2-threads": lambda: CooccurrenceVectorizer(window=3, min_count=1, max_vocab=300, ppmi=True,
                                                                   symmetric=False, workers=2),
    "glove": lambda: GloVe(vector_size=8, epochs=3, window=5, min_count=2, workers=1, seed=3),
    "bow": lambda: BagOfWords(),
    "bow-ngrams-stop-max-df": lambda: BagOfWords(ngram_range=(1, 3), stop_words=STOP, min_df=2, max_df=0.5,
                                                 max_features=400, binary=True, dtype="int32"),
    "tfidf": lambda: TfidfVectorizer(),
    "tfidf-ngrams-stop-max-df": lambda: TfidfVectorizer(ngram_range=(1, 2), stop_words=STOP, max_df=0.3,
                                                        sublinear_tf=True, norm="l1", dtype="float32"),
    "onehot": lambda: OneHotVectorizer(stop_words=STOP, max_df=0.6),
}


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    """The same documents encoded into a folder (mapped, uint16 ids) and packed in memory (int32), by a word
    tokenizer whose special tokens (``<unk>``, from ``min_frequency=2``) occur in them."""
    docs = sample_corpus(40_000)
    tok = WordTokenizer(min_frequency=2).fit(docs)
    folder = tmp_path_factory.mktemp("encoded") / "enc"
    encode_corpus(tok, docs, folder, progress=False)
    mapped = TokenSequences.open(folder)
    memory = TokenSequences.from_tokenizer(tok, docs)
    assert mapped.is_mapped and mapped.ids.dtype == np.uint16 and not memory.is_mapped
    assert np.array_equal(mapped.ids, memory.ids) and mapped.special_ids == memory.special_ids
    assert np.isin(memory.ids, list(memory.special_ids)).any()  # <unk> occurs: the special-token paths run
    return mapped, memory


@pytest.fixture
def streaming_only(monkeypatch):
    """Small ranges (many chunks, documents of every length across their edges), and a mapped corpus that refuses
    to be converted whole."""
    monkeypatch.setattr(tokembed.sequences, "CHUNK_TOKENS", 97)
    real = TokenSequences.in_memory

    def refuse(self):
        if self.is_mapped:
            raise AssertionError("the mapped corpus was converted whole (TokenSequences.in_memory)")
        return real(self)

    monkeypatch.setattr(TokenSequences, "in_memory", refuse)


def _saved(component, folder: Path) -> dict[str, bytes]:
    folder.mkdir()
    component.save(folder / "c.tokembed.json")
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _same_matrix(a, b) -> None:
    if sp.issparse(a):
        assert sp.issparse(b) and a.format == b.format == "csr"
        assert a.shape == b.shape and a.dtype == b.dtype
        assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)
        assert np.array_equal(a.data, b.data)
    else:
        assert np.array_equal(np.asarray(a), np.asarray(b)) and np.asarray(a).dtype == np.asarray(b).dtype


@pytest.mark.parametrize("name", sorted(COMPONENTS))
def test_fitted_on_a_mapped_corpus_saves_the_same_bytes_and_transforms_alike(name, corpora, streaming_only,
                                                                            tmp_path):
    mapped, memory = corpora
    assert len(list(mapped.id_chunks())) > 50  # CHUNK_TOKENS patched: really many ranges
    make = COMPONENTS[name]
    want, got = make().fit(memory), make().fit(mapped)
    assert _saved(got, tmp_path / "mapped") == _saved(want, tmp_path / "memory")
    if hasattr(want, "transform") and name != "glove":
        _same_matrix(got.transform(mapped), want.transform(memory))
        _same_matrix(make().fit_transform(mapped), make().fit_transform(memory))
    if name == "onehot":  # the row offsets of the documents too
        _, off = got.transform(mapped, return_offsets=True)
        assert off.dtype == np.int64 and np.array_equal(off, memory.offsets)


def test_a_mapped_corpus_counts_its_ids_range_by_range(corpora, streaming_only):
    mapped, memory = corpora
    counts = mapped.counts()
    assert counts.dtype == np.int64 and np.array_equal(counts, np.bincount(memory.ids, minlength=len(memory.vocab)))
    parts = list(mapped.in_memory_chunks())
    assert all(p.ids.dtype == np.int32 and p.vocab is mapped.vocab and (p.n_tokens <= 97 or len(p) == 1)
               for p in parts)
    back = TokenSequences.concatenate(parts)
    assert np.array_equal(back.ids, memory.ids) and np.array_equal(back.offsets, memory.offsets)


def _random_word_corpus(n_docs: int, seed: int = 0) -> list[str]:
    """Documents of 40 to 160 words drawn from 300 fixed words (Zipf-like): the vocabulary, and so every counted
    statistic, stays the same whatever the number of documents."""
    rng = np.random.default_rng(seed)
    words = np.array([f"w{i}" for i in range(300)])
    p = 1.0 / np.arange(1, 301)
    p /= p.sum()
    return [" ".join(words[rng.choice(300, size=int(rng.integers(40, 160)), p=p)]) for _ in range(n_docs)]


@pytest.fixture(scope="module")
def small_and_large(tmp_path_factory):
    """One corpus encoded as is (about 300k tokens) and repeated 4 times: the same vocabulary, 4 times the ids."""
    docs = _random_word_corpus(3000)
    tok = WordTokenizer(min_frequency=1).fit(docs)
    top = tmp_path_factory.mktemp("growth")
    encode_corpus(tok, docs, top / "small", progress=False)
    encode_corpus(tok, docs * 4, top / "large", progress=False)
    return TokenSequences.open(top / "small"), TokenSequences.open(top / "large")


def _peak_bytes(make, seqs) -> int:
    tracemalloc.start()
    try:
        make().fit(seqs)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("name", ["cooccurrence", "glove", "bow", "tfidf", "onehot"])
def test_fitting_memory_does_not_grow_with_the_mapped_corpus(name, small_and_large, monkeypatch):
    """Fitting on 4 times the ids must not need more memory: converting the extra ids whole to int32 alone would
    take 4 bytes each (3.6 MB here), so the peak may grow by a quarter of that at most (NumPy's allocations are
    traced by tracemalloc; the fixed vocabulary keeps every fitted statistic the same size)."""
    small, large = small_and_large
    monkeypatch.setattr(tokembed.sequences, "CHUNK_TOKENS", 1 << 14)
    make = COMPONENTS[name]
    make().fit(small)  # compiled and cached before anything is measured
    extra = (large.n_tokens - small.n_tokens) * 4
    assert extra > 3_000_000
    grew = _peak_bytes(make, large) - _peak_bytes(make, small)
    assert grew < extra / 4, f"{name}: the peak grew by {grew:,} bytes for {extra:,} bytes of extra int32 ids"


@pytest.fixture(scope="module")
def damaged(tmp_path_factory):
    """A uint32-id folder whose last id is 2**32 - 1: far past its vocabulary (a damaged or hand-edited file)."""
    from tokembed.plugins.char.tokenizer import CharTokenizer

    docs = sample_corpus(2_000)
    tok = CharTokenizer().fit(docs)
    folder = tmp_path_factory.mktemp("damaged") / "enc"
    encode_corpus(tok, docs, folder, progress=False)
    ids = np.load(folder / "ids.npy")
    wide = ids.astype(np.uint32)
    wide[-1] = np.iinfo(np.uint32).max
    np.save(folder / "ids.npy", wide)
    manifest = (folder / "encoded.json").read_text(encoding="utf-8").replace('"uint16"', '"uint32"')
    (folder / "encoded.json").write_text(manifest, encoding="utf-8")
    return folder


@pytest.mark.parametrize("make", [
    lambda: CooccurrenceVectorizer(window=2, min_count=1),
    lambda: GloVe(vector_size=4, epochs=1, window=2, min_count=1, workers=1),
    lambda: TfidfVectorizer(),
    lambda: OneHotVectorizer(),
    lambda: __import__("tokembed.plugins.fasttext", fromlist=["Word2VecEmbedder"]).Word2VecEmbedder(
        vector_size=4, epochs=1, min_count=1, workers=1, show_progress=False),
], ids=["cooccurrence", "glove", "tfidf", "onehot", "word2vec"])
def test_an_id_past_the_vocabulary_in_a_mapped_folder_is_a_clear_error(damaged, make):
    # checked before counting: numpy's bincount of 2**32 - 1 would first allocate 34 GB
    seqs = TokenSequences.open(damaged)
    assert seqs.ids.dtype == np.uint32
    with pytest.raises(tokembed.errors.TokembedError, match=r"id 4294967295 is outside the vocabulary"):
        make().fit(seqs)
