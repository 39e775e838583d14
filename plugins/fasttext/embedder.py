"""The ``fasttext`` and ``word2vec`` embedders: skip-gram and CBOW word vectors, with or without character n-grams.

References: Mikolov, Chen, Corrado & Dean, "Efficient estimation of word representations in vector space" (2013)
and Mikolov, Sutskever, Chen, Corrado & Dean, "Distributed representations of words and phrases and their
compositionality" (NeurIPS 2013) for skip-gram, CBOW, negative sampling, hierarchical softmax and subsampling;
Bojanowski, Grave, Joulin & Mikolov, "Enriching word vectors with subword information" (TACL 2017) for the
character n-grams. Conventions follow Facebook's fastText (https://github.com/facebookresearch/fastText: hashing,
vector composition, the ``.bin`` format) and gensim 4 (parameter names, defaults, the subsampling formula).
"""

from __future__ import annotations

import math
import os
from typing import Any, ClassVar

import numpy as np

from tokembed.components import Embedder
from tokembed.errors import ArtifactError, EmptyVocabularyError, ParameterError, TokembedError
from tokembed.keyedvectors import KeyedVectors
from tokembed.params import Boolean, Interval, Options
from tokembed.sequences import as_token_sequences

__all__ = ["FastTextEmbedder", "Word2VecEmbedder"]

#: The kernels count and index with int32 (row indices of the input matrix among them): the bound of the rows and of
#: the integer parameters.
_INT_MAX = 2**31 - 1


class _SkipGramCBOW(Embedder):
    """What ``fasttext`` and ``word2vec`` share: parameters, training, state, files. Not registered itself."""

    fits_on_tokens: ClassVar[bool] = True
    #: ``wv_`` is a FastTextKeyedVectors (unseen words get n-gram vectors, or zeros) rather than KeyedVectors.
    _oov_from_ngrams: ClassVar[bool] = False
    param_constraints: ClassVar[dict[str, Any]] = {
        # upper bounds: the kernels index with int32/int64 and allocate vector_size per row, so a huge value is
        # refused before any work instead of overflowing inside a kernel
        "vector_size": Interval(int, 1, 2**16),
        "window": Interval(int, 1, _INT_MAX),
        "sg": Boolean(),
        "hs": Boolean(),
        "negative": Interval(int, 0, _INT_MAX),  # and >= 1 without hs (_validate)
        # counts ** exponent would underflow or overflow every weight beyond (0.75: word2vec's; 0.5: fastText's)
        "ns_exponent": Interval(float, -10, 10),
        "sample": Interval(float, 0, None),
        "min_count": Interval(int, 1, _INT_MAX),
        "max_vocab": [Interval(int, 1, _INT_MAX), None],
        "epochs": Interval(int, 1, _INT_MAX),
        "alpha": [Interval(float, 0, None, closed="neither"), None],
        "min_alpha": Interval(float, 0, None),  # and <= the starting learning rate (_validate)
        "shrink_windows": Boolean(),
        "workers": [Options(-1), Interval(int, 1, 1024)],  # -1: one thread per CPU
        "seed": Interval(int, 0, 2**63 - 1),
        "show_progress": Boolean(),
    }

    # subclasses: the n-gram settings in force (word2vec: none)
    def _ngram_settings(self) -> tuple[int, int, int]:
        raise NotImplementedError

    # -- validation -------------------------------------------------------------------------------------------
    def _validate(self) -> None:
        """The rules between parameters, once each satisfies :attr:`param_constraints`."""
        if not self.hs and self.negative < 1:
            raise ParameterError(self.name, "negative", "must be >= 1 without hierarchical softmax (hs: true), which "
                                                        f"is what trains the output layer then; got {self.negative}")
        if self.min_alpha > self._alpha():
            raise ParameterError(self.name, "min_alpha", f"must not exceed the starting learning rate alpha="
                                                         f"{self._alpha()}; got {self.min_alpha}")

    def _alpha(self) -> float:
        """The starting learning rate: ``alpha``, or 0.025 for skip-gram and 0.05 for CBOW when unset."""
        if self.alpha is not None:
            return float(self.alpha)
        return 0.025 if self.sg else 0.05

    def _workers(self) -> int:
        return (os.cpu_count() or 1) if self.workers == -1 else int(self.workers)

    # -- memory -----------------------------------------------------------------------------------------------
    def estimate_memory(self, vocab_size: int | None = None, n_tokens: int | None = None) -> dict[str, int]:
        """Bytes of every array that :meth:`fit` allocates and keeps, by name, and their ``"total"``.

        Parameters
        ----------
        vocab_size : int, optional
            Words of the vocabulary (``V``); default: the fitted vocabulary's size (required before ``fit``).
        n_tokens : int, optional
            Tokens of the corpus; default: the fitted corpus (0 before ``fit``). Only the chunk plan grows with it.

        Returns
        -------
        dict of str to int
            ``input_words`` (V x d float32), ``input_ngrams`` (bucket x d float32: the n-gram rows; 0 for word2vec),
            ``output`` (V x d float32), ``word_vectors`` (the composed V x d vectors of ``wv_``; 0 without n-grams,
            where ``wv_`` shares the input rows), ``subword_rows`` (the int32 row lists, counted exactly after
            fit, else estimated from 8-character words), ``corpus`` (no copy of the corpus, which is read where
            it lies, memory-mapped or not: the chunk plan, 16 bytes per chunk of about 20,000 tokens, and each
            worker's current chunk as int32 vocabulary indices with int64 piece offsets), ``tables`` (counts,
            subsampling, negative-sampling or Huffman tables, the input-id map), and ``total``. There are no per-row
            learning factors (gensim's ``*_lockf`` arrays). The mapped pages of a corpus opened with
            ``TokenSequences.open`` are the operating system's page cache, not counted here.

        Raises
        ------
        TokembedError
            Without ``vocab_size`` before ``fit``.
        """
        d = int(self.vector_size)
        minn, maxn, bucket = self._ngram_settings()
        fitted = self.is_fitted()
        if vocab_size is None:
            if not fitted:
                raise TokembedError(f"{self.name}: estimate_memory() before fit needs vocab_size (and n_tokens)")
            vocab_size = len(self.wv_)
        V = int(vocab_size)
        if n_tokens is None:
            n_tokens = int(self.corpus_tokens_) if fitted else 0
        f32 = 4
        if fitted and vocab_size == len(self.wv_):
            n_rows = int(self._row_offsets[-1])
        else:
            n_rows = V * (1 + _ngrams_of_length(8, minn, maxn, bucket))
        from .training import CHUNK_TOKENS, MAX_PIECE

        n_chunks = int(n_tokens) // CHUNK_TOKENS + 1
        chunk_tokens = CHUNK_TOKENS + MAX_PIECE  # a chunk ends at the first piece boundary past CHUNK_TOKENS
        hs_len = V * max(1, math.ceil(math.log2(max(V, 2)))) if self.hs else 0
        report = {
            "input_words": V * d * f32,
            "input_ngrams": bucket * d * f32,
            "output": V * d * f32,
            "word_vectors": V * d * f32 if bucket else 0,
            "subword_rows": n_rows * 4 + (V + 1) * 8,
            "corpus": n_chunks * 16 + self._workers() * chunk_tokens * (4 + 8),
            "tables": V * (8 + 8 + 8 + 4) + (hs_len * 5 + (V + 1) * 8 if self.hs else 0),
        }
        report["total"] = sum(report.values())
        return report

    # -- fitting ----------------------------------------------------------------------------------------------
    def fit(self, X: Any, y: Any = None) -> "_SkipGramCBOW":
        """Learn word vectors from token sequences.

        Parameters
        ----------
        X : TokenSequences or iterable of list of str
            The corpus: a recipe tokenizer's output (the words are ``X.vocab[id]``; ``X.special_ids`` are never
            trained on) or documents as token lists. Windows never cross a document boundary.

        Returns
        -------
        self

        Raises
        ------
        ParameterError
            A parameter out of range (see the class docstring).
        EmptyVocabularyError
            No token occurs ``min_count`` times, or no document holds two kept tokens (no context to train on).
        TokembedError
            The input is not token sequences, the model would need more than 2**31 - 1 input rows, or training
            diverged (NaN); lower ``alpha``.
        """
        from . import training as T

        self._validate_params()
        seqs = as_token_sequences(X, what=f"{self.name}.fit", mapped=True)  # read in place, chunk by chunk
        minn, maxn, bucket = self._ngram_settings()
        self._reset()  # fit starts afresh
        vocab = T.build_vocabulary(seqs, int(self.min_count), self.max_vocab, self.name)
        V = len(vocab.words)
        if V + bucket > _INT_MAX:
            raise TokembedError(f"{self.name}: {V:,} words + bucket {bucket:,} rows exceed {_INT_MAX:,}; lower "
                                "bucket or max_vocab")
        corpus = T.plan_corpus(seqs, vocab.token_map)
        del seqs
        if corpus.longest < 2:  # no (centre, context) pair to train on
            raise EmptyVocabularyError(f"{self.name}: no document holds two kept tokens (each document is one token, "
                                       f"or min_count={self.min_count} removed the others), so there is no context "
                                       "to train on; give documents of several tokens")
        tables = T.make_tables(vocab, minn=minn, maxn=maxn, bucket=bucket, sample=float(self.sample),
                               hs=bool(self.hs), ns_exponent=float(self.ns_exponent))
        syn0, syn1 = T.init_matrices(V, V + bucket, int(self.vector_size), int(self.seed))
        T.train(corpus, syn0, syn1, tables, sg=bool(self.sg), negative=int(self.negative), hs=bool(self.hs),
                window=int(self.window), shrink_windows=bool(self.shrink_windows), alpha=self._alpha(),
                min_alpha=float(self.min_alpha), epochs=int(self.epochs), workers=self._workers(),
                seed=int(self.seed), show_progress=bool(self.show_progress), desc=self.name)
        self._install(vocab.words, vocab.counts, int(vocab.n_tokens), corpus.n_tokens, syn0, syn1,
                      tables.row_offsets, tables.rows)
        return self

    def _install(self, words: list[str], counts: np.ndarray, n_tokens: int, corpus_tokens: int, syn0: np.ndarray,
                 syn1: np.ndarray, row_offsets: np.ndarray | None = None, rows: np.ndarray | None = None) -> None:
        """Set the fitted attributes from the matrices (after fit, load or reading a ``.bin`` file)."""
        from . import _kernels as K
        from .keyedvectors import FastTextKeyedVectors
        from .training import subword_rows

        minn, maxn, bucket = self._ngram_settings()
        V = len(words)
        if row_offsets is None:
            row_offsets, rows = subword_rows(words, minn, maxn, bucket)
        self._row_offsets, self._rows = row_offsets, rows
        if bucket:  # the mean of each word's rows, a new (V, d) array
            vectors = K.compose_vectors(syn0, row_offsets, rows)
        else:  # one row per word: the vectors are those rows (shared, not copied)
            vectors = syn0
        _check_finite(vectors, self.name)
        if self._oov_from_ngrams:
            wv = FastTextKeyedVectors.from_fasttext(words, vectors, syn0[V:], minn=minn, maxn=maxn, copy=False)
        else:
            wv = KeyedVectors.from_arrays(words, vectors, copy=False)
        self.input_matrix_ = syn0
        self.output_matrix_ = syn1
        self.counts_ = counts
        self.n_tokens_ = int(n_tokens)
        self.corpus_tokens_ = int(corpus_tokens)
        self.wv_ = wv

    # -- saving -----------------------------------------------------------------------------------------------
    def _get_state(self) -> dict[str, Any]:
        return {
            "words": list(self.wv_.index_to_key),
            "n_tokens": self.n_tokens_,
            "corpus_tokens": self.corpus_tokens_,
            "counts": self.counts_,
            "input_matrix": self.input_matrix_,
            "output_matrix": self.output_matrix_,
        }

    def _set_state(self, state: dict[str, Any]) -> None:
        words = state["words"]
        if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
            raise ArtifactError(f"{self.name}: \"words\" must be a list of str")
        V = len(words)
        d = int(self.vector_size)
        _, _, bucket = self._ngram_settings()
        syn0 = np.asarray(state["input_matrix"])
        syn1 = np.asarray(state["output_matrix"])
        counts = np.asarray(state["counts"])
        if syn0.dtype != np.float32 or syn0.shape != (V + bucket, d) or syn1.dtype != np.float32 or \
                syn1.shape != (V, d) or counts.shape != (V,) or counts.dtype.kind not in "iu":
            raise ArtifactError(f"{self.name}: saved matrices of shapes {syn0.shape} / {syn1.shape} do not fit "
                                f"{V} words, bucket {bucket} and vector_size {d}")
        self._install(words, counts.astype(np.int64), int(state["n_tokens"]), int(state["corpus_tokens"]),
                      np.ascontiguousarray(syn0), np.ascontiguousarray(syn1))

    # -- Facebook's files -------------------------------------------------------------------------------------
    def _facebook_args(self) -> dict[str, Any]:
        minn, maxn, bucket = self._ngram_settings()
        return {"dim": int(self.vector_size), "ws": int(self.window), "epoch": int(self.epochs),
                "min_count": int(self.min_count), "neg": int(self.negative), "word_ngrams": 1,
                "loss": 1 if self.hs else 2, "model": 2 if self.sg else 1, "bucket": bucket, "minn": minn,
                "maxn": maxn, "lr_update_rate": 100, "t": float(self.sample)}

    def save_facebook_model(self, path: str | os.PathLike):
        """Write the model as Facebook fastText's ``.bin`` (version 12): loads in ``fasttext.load_model`` and in
        gensim's ``load_facebook_model`` / ``load_facebook_vectors`` with the same word and OOV vectors.

        word2vec models are written with ``bucket = minn = maxn = 0`` (no n-gram rows). Returns the path.

        Raises
        ------
        NotFittedError
            Before ``fit``.
        TokembedError
            A word holds a NUL character.
        """
        from .files import FacebookModel, write_facebook_bin

        self._check_is_fitted()
        model = FacebookModel(self._facebook_args(), list(self.wv_.index_to_key), self.counts_, self.n_tokens_,
                              self.input_matrix_, self.output_matrix_)
        return write_facebook_bin(path, model)

    def save_facebook_vectors(self, path: str | os.PathLike):
        """Write the word vectors as fastText's ``.vec`` (word2vec text: a ``"<count> <dim>"`` line, then one word
        and its values per line). Returns the path."""
        self._check_is_fitted()
        self.wv_.save_word2vec_format(path, binary=False)
        return path

    @classmethod
    def _from_facebook(cls, model, params: dict[str, Any]) -> "_SkipGramCBOW":
        obj = cls(**params)
        obj._install(list(model.words), model.counts, model.n_tokens, 0, model.input_matrix, model.output_matrix)
        return obj

    # -- compilation ------------------------------------------------------------------------------------------
    @classmethod
    def warmup(cls) -> None:
        """Compile (or load from Numba's cache) the kernels on a tiny corpus, silently; the corpus kernels also for
        the uint16 and uint32 ids of a mapped corpus (``TokenSequences.open``)."""
        from .training import warm_corpus_kernels

        docs = [["a", "b", "c", "a", "b", "a"], ["c", "a", "d"]]
        for sg in (True, False):
            cls(vector_size=4, min_count=1, epochs=1, workers=1, sg=sg, show_progress=False,
                **cls._warmup_params()).fit(docs)
        warm_corpus_kernels()

    @classmethod
    def _warmup_params(cls) -> dict[str, Any]:
        return {}

    # -- the contract suite -----------------------------------------------------------------------------------
    @classmethod
    def _contract_params(cls) -> dict[str, Any]:
        return {"vector_size": 8, "min_count": 2, "epochs": 1, "workers": 1, "show_progress": False,
                **cls._warmup_params()}


class FastTextEmbedder(_SkipGramCBOW):
    """fastText word vectors: skip-gram or CBOW over words and their character n-grams (Bojanowski et al. 2017).

    A word's vector is the mean of its own row and of one row per character n-gram of ``"<" + word + ">"``
    (``minn`` to ``maxn`` code points), the n-grams hashed into ``bucket`` shared rows with fastText's FNV-1a
    hash; an unseen word's vector is the mean of its n-gram rows (the zero vector when it has none), so
    ``wv_[word]`` works for any string. With ``maxn=0`` it is word2vec (see :class:`Word2VecEmbedder`).

    Parameters
    ----------
    vector_size : int, default 100
        Dimensions ``d``.
    window : int, default 5
        Largest distance between the centre word and a context word.
    sg : bool, default True
        Skip-gram (True: the centre word predicts each context word) or CBOW (False: the mean of the context
        predicts the centre word). gensim's default is CBOW, fastText's ``train_unsupervised`` skip-gram.
    hs : bool, default False
        Hierarchical softmax over a Huffman tree of the vocabulary instead of negative sampling.
    negative : int, default 5
        Negative samples per prediction (>= 1 unless ``hs``), drawn from the unigram law raised to
        ``ns_exponent``; a draw equal to the target is skipped.
    ns_exponent : float, default 0.75
        Exponent of the counts in the negative-sampling law (Mikolov et al. 2013; fastText uses 0.5).
    sample : float, default 1e-3
        Subsampling threshold ``s``: a word of count ``c`` is kept with probability
        ``min(1, (sqrt(c / (s N)) + 1) s N / c)``, ``N`` being the total count of the vocabulary's words
        (word2vec.c's and gensim's formula; fastText's ``-t`` is the same formula with ``N`` counting every token,
        default 1e-4). 0 turns subsampling off.
    min_count : int, default 5
        Words seen fewer times are left out (their tokens are removed before windows are formed).
    max_vocab : int or None, default None
        Keep at most this many words (the most frequent, ties broken by key).
    epochs : int, default 5
        Passes over the corpus.
    alpha : float or None, default None
        Starting learning rate; None means 0.025 for skip-gram and 0.05 for CBOW (gensim's and fastText's).
    min_alpha : float, default 0.0001
        The learning rate falls linearly from ``alpha`` to ``min_alpha`` over all epochs, by tokens read.
    minn, maxn : int, default 3 and 6
        N-gram lengths in code points. No n-gram rows are used when ``maxn < max(minn, 1)``.
    bucket : int, default 2_000_000
        Rows the n-grams are hashed into (exactly this many; n-grams that collide share a row). The n-gram matrix
        takes ``bucket * vector_size * 4`` bytes (800 MB by default): see :meth:`estimate_memory`.
    shrink_windows : bool, default True
        Draw each position's effective window uniformly in ``1 .. window`` (word2vec's, gensim's and fastText's
        practice), which weights near context words more; False uses ``window`` everywhere.
    workers : int, default -1
        Threads (-1: one per CPU). They update the shared matrices without locks (Hogwild); with ``workers=1``
        and a ``seed`` the result is byte-identical in every process.
    seed : int, default 0
        Seed of the initial vectors and of every random draw.
    show_progress : bool, default True
        A progress bar (words read, words per second per thread) on a terminal.

    Attributes
    ----------
    wv_ : FastTextKeyedVectors
        The word vectors, most frequent word first (ties by key), with OOV vectors from n-grams.
    input_matrix_ : ndarray of float32, shape (V + bucket, vector_size)
        The trained input rows: the ``V`` words' own rows, then the n-gram rows (fastText's layout).
    output_matrix_ : ndarray of float32, shape (V, vector_size)
        The output layer (negative sampling: one row per word; hierarchical softmax: one per inner tree node).
    counts_ : ndarray of int64, shape (V,)
        Count of each word.
    n_tokens_ : int
        Tokens of the corpus, special tokens aside (fastText's ``ntokens``).
    corpus_tokens_ : int
        Tokens trained on per epoch before subsampling (in-vocabulary tokens).

    Notes
    -----
    Skip-gram: the centre word's vector (its mean row) predicts each context word; the output rows are updated
    after each prediction, as in fastText and gensim, while the centre word's rows are averaged once per centre
    and its input gradient over the whole window is summed and added to them once (fastText and gensim average
    and add for every (centre, context) pair). A different update rule, with about 4x less input-row traffic on
    English text; docs/fasttext.md says what it changes. Sigmoid
    values come from fastText's 512-step table over [-8, 8] (0 or 1 outside, and the gradient is still applied).
    Negative samples are drawn by Walker's alias method (O(1) per draw) from the exact smoothed unigram law.
    Documents longer than 10,000 tokens are cut into pieces of that length, as gensim does.

    References
    ----------
    Bojanowski, Grave, Joulin & Mikolov, "Enriching word vectors with subword information", TACL 5 (2017);
    Mikolov et al., NeurIPS 2013 (negative sampling, subsampling); Facebook's fastText and gensim 4 as reference
    implementations.
    """

    name: ClassVar[str] = "fasttext"
    _oov_from_ngrams: ClassVar[bool] = True
    param_constraints: ClassVar[dict[str, Any]] = {
        **_SkipGramCBOW.param_constraints,
        "minn": Interval(int, 0, _INT_MAX),
        "maxn": Interval(int, 0, _INT_MAX),  # and >= minn unless 0 (_validate)
        "bucket": Interval(int, 0, _INT_MAX),  # and >= 1 when n-grams are used (_validate)
    }

    def __init__(
        self,
        vector_size: int = 100,
        window: int = 5,
        sg: bool = True,
        hs: bool = False,
        negative: int = 5,
        ns_exponent: float = 0.75,
        sample: float = 1e-3,
        min_count: int = 5,
        max_vocab: int | None = None,
        epochs: int = 5,
        alpha: float | None = None,
        min_alpha: float = 0.0001,
        minn: int = 3,
        maxn: int = 6,
        bucket: int = 2_000_000,
        shrink_windows: bool = True,
        workers: int = -1,
        seed: int = 0,
        show_progress: bool = True,
    ):
        self.vector_size = vector_size
        self.window = window
        self.sg = sg
        self.hs = hs
        self.negative = negative
        self.ns_exponent = ns_exponent
        self.sample = sample
        self.min_count = min_count
        self.max_vocab = max_vocab
        self.epochs = epochs
        self.alpha = alpha
        self.min_alpha = min_alpha
        self.minn = minn
        self.maxn = maxn
        self.bucket = bucket
        self.shrink_windows = shrink_windows
        self.workers = workers
        self.seed = seed
        self.show_progress = show_progress

    def _validate(self) -> None:
        super()._validate()
        if self.maxn > 0 and self.minn > self.maxn:
            raise ParameterError(self.name, "maxn", f"={self.maxn} is below minn={self.minn}: no n-gram length is in "
                                                    "range (set maxn: 0 to train without n-grams)")
        if self.maxn >= max(self.minn, 1) and self.bucket < 1:
            raise ParameterError(self.name, "bucket", f"must be >= 1 when n-grams are used (maxn={self.maxn}); "
                                                      "set maxn: 0 for no n-grams")

    def _ngram_settings(self) -> tuple[int, int, int]:
        """``(minn, maxn, bucket)``; the bucket rows are kept even when no n-gram is in range (as fastText)."""
        return int(self.minn), int(self.maxn), int(self.bucket)

    @classmethod
    def _warmup_params(cls) -> dict[str, Any]:
        return {"bucket": 1000}

    @classmethod
    def from_facebook_model(cls, path: str | os.PathLike) -> "FastTextEmbedder":
        """A fitted ``fasttext`` embedder from a Facebook fastText ``.bin`` file (ours, Facebook's or gensim's).

        The parameters come from the file's arguments (``alpha`` is not stored there and stays None; a softmax or
        one-vs-all loss is shown as ``hs=False``); ``wv_`` has the file's word vectors and OOV vectors.

        Raises
        ------
        ArtifactError
            As :func:`tokembed.plugins.fasttext.files.read_facebook_bin`.
        """
        from .files import read_facebook_bin

        m = read_facebook_bin(path)
        a = m.args
        params = {"vector_size": a["dim"], "window": max(a["ws"], 1), "sg": a["model"] == 2, "hs": a["loss"] == 1,
                  "negative": a["neg"], "sample": a["t"], "min_count": max(a["min_count"], 1),
                  "epochs": max(a["epoch"], 1), "minn": a["minn"], "maxn": a["maxn"], "bucket": a["bucket"]}
        try:
            return cls._from_facebook(m, params)
        except TokembedError as exc:
            raise ArtifactError(f"{path}: {exc}") from None


class Word2VecEmbedder(_SkipGramCBOW):
    """word2vec (Mikolov et al. 2013): skip-gram or CBOW word vectors, one row per word, no subwords.

    The same trainer as :class:`FastTextEmbedder` with no character n-grams (fastText's ``maxn=0``): the
    parameters, defaults and notes are those of ``fasttext`` without ``minn``, ``maxn`` and ``bucket``. ``wv_`` is
    a plain :class:`~tokembed.keyedvectors.KeyedVectors` (an unseen word raises ``OutOfVocabularyError``);
    ``input_matrix_`` has the ``V`` word rows only. :meth:`save_facebook_model` writes a fastText ``.bin`` with
    ``bucket = 0``.

    References
    ----------
    Mikolov, Chen, Corrado & Dean (2013), "Efficient estimation of word representations in vector space";
    Mikolov, Sutskever, Chen, Corrado & Dean, NeurIPS 2013; word2vec.c and gensim 4's ``Word2Vec``.
    """

    name: ClassVar[str] = "word2vec"

    def __init__(
        self,
        vector_size: int = 100,
        window: int = 5,
        sg: bool = True,
        hs: bool = False,
        negative: int = 5,
        ns_exponent: float = 0.75,
        sample: float = 1e-3,
        min_count: int = 5,
        max_vocab: int | None = None,
        epochs: int = 5,
        alpha: float | None = None,
        min_alpha: float = 0.0001,
        shrink_windows: bool = True,
        workers: int = -1,
        seed: int = 0,
        show_progress: bool = True,
    ):
        self.vector_size = vector_size
        self.window = window
        self.sg = sg
        self.hs = hs
        self.negative = negative
        self.ns_exponent = ns_exponent
        self.sample = sample
        self.min_count = min_count
        self.max_vocab = max_vocab
        self.epochs = epochs
        self.alpha = alpha
        self.min_alpha = min_alpha
        self.shrink_windows = shrink_windows
        self.workers = workers
        self.seed = seed
        self.show_progress = show_progress

    def _ngram_settings(self) -> tuple[int, int, int]:
        return 0, 0, 0


# -- helpers ----------------------------------------------------------------------------------------------------
def _ngrams_of_length(n_chars: int, minn: int, maxn: int, bucket: int) -> int:
    """N-grams of a word of ``n_chars`` code points (``n_chars + 2`` with the boundary marks)."""
    if bucket < 1 or maxn < max(minn, 1):
        return 0
    L = n_chars + 2
    return sum(L - n + 1 for n in range(max(minn, 1), maxn + 1) if n <= L) - (2 if minn <= 1 else 0)


def _check_finite(matrix: np.ndarray, who: str, block: int = 65536) -> None:
    for lo in range(0, matrix.shape[0], block):
        if not np.isfinite(matrix[lo:lo + block]).all():
            raise TokembedError(f"{who}: training diverged (the vectors hold NaN or infinity); lower alpha")
