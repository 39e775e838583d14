"""GloVe: global vectors for word representation, trained on the co-occurrence plugin's counts with Numba.

Reference: Pennington, Socher and Manning, "GloVe: Global Vectors for Word Representation", EMNLP 2014 (the
loss, section 3; the weighting function, equation 9; W + W~ as the output, section 4.2), and the reference
implementation ``src/glove.c`` of github.com/stanfordnlp/GloVe (AdaGrad, initialisation, gradient clipping, the
reported cost).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np

from tokembed.components import Embedder
from tokembed.errors import EmptyVocabularyError, TokembedError
from tokembed.keyedvectors import KeyedVectors
from tokembed.params import Interval, Options
from tokembed.plugins.cooccurrence.vectorizer import CooccurrenceVectorizer
from tokembed.sequences import TokenSequences, as_token_sequences

__all__ = ["GloVe"]

_NAME = "glove"
_OUTPUTS = ("sum", "word", "concat")
_COUNTING = ("window", "symmetric", "weighting", "min_count", "max_vocab", "workers")


class GloVe(Embedder):
    """GloVe word vectors: weighted least squares on the log co-occurrence counts, AdaGrad, Hogwild threads.

    The co-occurrence matrix ``X`` comes from the ``cooccurrence`` plugin
    (:class:`~tokembed.plugins.cooccurrence.CooccurrenceVectorizer`, which builds it as GloVe's ``cooccur``: words
    below ``min_count`` or beyond ``max_vocab`` and the input's special tokens are removed before windowing;
    harmonic 1/distance weights; both directions when ``symmetric``). Then, over the non-zero entries::

        J = sum_ij f(X_ij) (w_i . w~_j + b_i + b~_j - ln X_ij) ** 2 / 2
        f(x) = (x / x_max) ** alpha  for x < x_max,   1 for x >= x_max

    is minimised by AdaGrad, one record at a time, as the reference ``glove`` does (``src/glove.c``): parameters
    (vectors and biases) start uniform in [-0.5, 0.5) / vector_size, accumulators at 1.0; for a record with
    ``diff = w_i . w~_j + b_i + b~_j - ln X_ij`` and ``fdiff = f(X_ij) diff``, each vector component steps by
    ``u / sqrt(G)`` with ``u = learning_rate * clip(fdiff * other vector's component)`` and then ``G += u ** 2``;
    each bias steps by ``fdiff / sqrt(G)`` and then ``G += fdiff ** 2`` (the reference applies neither the
    learning rate nor clipping to the biases). ``clip(g)`` limits g to [-clip, clip].

    Every epoch visits all records in a fresh pseudo-random order (a keyed Feistel permutation of the record
    indices computed on the fly: the reference's ``shuffle`` step, in memory, without storing a permutation).
    With ``workers`` threads, each takes an equal share of the epoch's order and all update the same arrays
    without locks (Hogwild, as the reference's threads).

    Parameters
    ----------
    vector_size : int, default 50
        Dimensions of W and W~ (>= 1). ``output="concat"`` gives vectors of twice this size.
    epochs : int, default 25
        Passes over the non-zero entries (>= 1); the reference's ``-iter``.
    x_max : float, default 100.0
        Cut-off of the weighting function (> 0). The paper uses 100; the reference's demo script uses 10 for
        small corpora.
    alpha : float, default 0.75
        Exponent of the weighting function (>= 0).
    learning_rate : float, default 0.05
        AdaGrad's initial step for the vector components (> 0); the reference's ``-eta``.
    clip : float, default 100.0
        Bound on each gradient component of the vectors (> 0); the reference's ``-grad-clip``.
    output : {"sum", "word", "concat"}, default "sum"
        ``wv_`` holds W + W~ (the paper's choice; the reference's ``-model 2``), W only (``-model 1``), or
        [W, W~] side by side (``-model 3``). Biases are never part of the vectors.
    window : int, default 10
        Context words on each side (>= 1).
    symmetric : bool, default True
        Count right contexts too (the matrix is then symmetric); False: left context only.
    weighting : {"harmonic", "uniform"}, default "harmonic"
        Weight of a pair at distance d: 1 / d, or 1.
    min_count : int, default 5
        Keep words counted at least this many times (>= 1).
    max_vocab : int or None, default None
        Keep at most this many words, the most frequent (>= 1).
    workers : int or None, default None
        Training (and counting) threads; None: one per CPU. With 1 the result is the same bit for bit in every
        process for a given seed; with more it is not (Hogwild: the threads' updates interleave differently on
        every run), which the saved model records.
    seed : int, default 0
        Seed of the initialisation and of every epoch's order (>= 0). Our own counter-based generator, so the
        draw does not depend on NumPy, Numba or ``PYTHONHASHSEED``.

    Attributes
    ----------
    wv_ : KeyedVectors
        The vectors (float32, (V, vector_size), or (V, 2 vector_size) for ``concat``), keys in count-descending
        order with ties broken by the key (code-point order), so ``restrict_vocab=N`` means the N most frequent.
    word_vectors_, context_vectors_ : ndarray of float32, shape (V, vector_size)
        W and W~.
    word_biases_, context_biases_ : ndarray of float32, shape (V,)
        b and b~.
    counts_ : ndarray of int64, shape (V,)
        Corpus count of each key.
    token_ids_ : ndarray of int64, shape (V,)
        The id of each key in the fitted input's vocabulary (``TokenSequences.vocab``: the tokenizer's ids).
    input_vocab_size_ : int or None
        ``len(vocab)`` of the fitted TokenSequences (the tokenizer's vocabulary size), or None when ``fit`` was
        given token lists; :meth:`to_torch` uses it.
    costs_ : list of float
        The cost of every epoch, as the reference reports it: the mean over the non-zero entries of
        ``f(X) (w . w~ + b + b~ - ln X) ** 2 / 2`` (the squared error halved), each entry's term taken just before
        its update.
    n_records_ : int
        Non-zero entries of X trained on (both directions counted when symmetric).
    n_tokens_ : int
        Kept tokens of the corpus (counted in the windows).

    Raises
    ------
    ParameterError
        (at ``fit``, and by ``tokembed validate``) for an invalid parameter: ``x_max <= 0``, ``alpha < 0``,
        ``learning_rate <= 0``, ``clip <= 0``, a size below 1, an unknown ``output`` or ``weighting``.
    EmptyVocabularyError
        When there is nothing to train on: no word reaches ``min_count``, or no document holds two kept tokens
        (no co-occurrence pair at all). The message gives the vocabulary size and the token count; it is raised
        before the first epoch.
    TrainingDivergedError
        (a :class:`~tokembed.errors.TokembedError`) When the cost or a parameter becomes NaN or infinite; the
        message names the epoch and suggests a lower ``learning_rate``. The model stays unfitted, so no vectors
        file can hold NaN.

    Notes
    -----
    Differences from the reference, all deliberate: parameters are float32 (the reference uses double), so an
    update moves half the bytes; the dot product is summed in 16 lanes (a fixed order, see
    ``_kernels._row_dot``); a record whose error is not finite stops training with an error (the reference
    skips it and goes on); the order of an epoch is a fresh permutation (the reference shuffles its file once);
    ``<unk>`` gets no vector (the reference appends the mean of the 100 rarest words to its text output).
    """

    name: ClassVar[str] = _NAME
    fits_on_tokens: ClassVar[bool] = True
    param_constraints: ClassVar[dict[str, Any]] = {
        "vector_size": Interval(int, 1, 2**16),
        "epochs": Interval(int, 1, 2**31 - 1),
        "x_max": Interval(float, 0, None, closed="neither"),
        "alpha": Interval(float, 0, None),
        "learning_rate": Interval(float, 0, None, closed="neither"),
        "clip": Interval(float, 0, None, closed="neither"),  # finite: a large value such as 1e30 turns it off
        "output": Options(*_OUTPUTS),
        # the counting parameters are the co-occurrence plugin's, declared there
        **{name: CooccurrenceVectorizer.param_constraints[name] for name in _COUNTING},
        "seed": Interval(int, 0, 2**63 - 1),
    }

    def __init__(
        self,
        vector_size: int = 50,
        epochs: int = 25,
        x_max: float = 100.0,
        alpha: float = 0.75,
        learning_rate: float = 0.05,
        clip: float = 100.0,
        output: Literal["sum", "word", "concat"] = "sum",
        window: int = 10,
        symmetric: bool = True,
        weighting: Literal["harmonic", "uniform"] = "harmonic",
        min_count: int = 5,
        max_vocab: int | None = None,
        workers: int | None = None,
        seed: int = 0,
    ):
        self.vector_size = vector_size
        self.epochs = epochs
        self.x_max = x_max
        self.alpha = alpha
        self.learning_rate = learning_rate
        self.clip = clip
        self.output = output
        self.window = window
        self.symmetric = symmetric
        self.weighting = weighting
        self.min_count = min_count
        self.max_vocab = max_vocab
        self.workers = workers
        self.seed = seed

    # -- counting -------------------------------------------------------------------------------------------
    def _cooccurrence(self):
        return CooccurrenceVectorizer(window=self.window, symmetric=self.symmetric, weighting=self.weighting,
                                      min_count=self.min_count, max_vocab=self.max_vocab, dtype="float64",
                                      workers=self.workers)

    def _n_workers(self) -> int:
        return int(self.workers) if self.workers is not None else (os.cpu_count() or 1)

    # -- training ---------------------------------------------------------------------------------------------
    def fit(self, X: Any, y: Any = None) -> "GloVe":
        """Count the co-occurrences of ``X`` and train the vectors.

        Parameters
        ----------
        X : TokenSequences or iterable of token lists
            The documents: a tokenizer's output (``TokenSequences.from_tokenizer(tok, docs)``, what a recipe run
            passes) or lists of token strings. A pair never crosses a document. A memory-mapped one
            (``TokenSequences.open``) is counted range by range, never converted whole; it trains the same vectors
            as the same documents in memory.

        Returns
        -------
        self

        Raises
        ------
        ParameterError, EmptyVocabularyError, TrainingDivergedError
            See the class docstring. ``TokembedError`` for input that is not token sequences.
        """
        self._validate_params()
        self._reset()
        if X is None:
            raise TokembedError(f"{_NAME}: fit needs documents as token sequences (a tokenizer's TokenSequences, or "
                                "lists of token strings), got None; in a recipe, name the tokenizer as the "
                                "embedder's input")
        seqs = as_token_sequences(X, _NAME, mapped=True)  # counted range by range
        cv = self._cooccurrence()
        try:
            cv.fit(seqs)
        except EmptyVocabularyError:
            raise self._no_pair_error(seqs.n_tokens, len(seqs), cv) from None
        return self._train(cv, seqs.vocab_size if isinstance(X, TokenSequences) else None)

    # -- training from counts (the corpus-statistics engine) --------------------------------------------------
    def counting_passes(self) -> int:
        """2, as the co-occurrence counts it trains on: the vocabulary, then the pairs."""
        return 2

    def partial_counts(self, X: Any) -> Any:
        """The mergeable counts of ``X`` for the current pass (see
        :meth:`tokembed.plugins.cooccurrence.CooccurrenceVectorizer.partial_counts`): the token counts on a new
        or fitted instance, the pair counts once ``fit_counts`` has fixed the vocabulary. ``fit_counts`` of the
        two merged passes trains exactly what ``fit`` trains on the whole data. The instance is not changed."""
        self._validate_params()
        cv = self.__dict__.get("_counting")
        if cv is None:
            return self._cooccurrence().partial_counts(X)
        return cv.partial_counts(X)

    def count_shards(self) -> int:
        """Row shards of the pair counts on a cluster (those of the co-occurrence counts it trains on)."""
        cv = self.__dict__.get("_counting")
        return 1 if cv is None else cv.count_shards()

    def fit_counts(self, counts: Any) -> "GloVe":
        """Pass 1's merged token counts fix the vocabulary (resetting anything fitted); pass 2's merged pair counts
        train the vectors, as :meth:`fit` does. Returns self.

        Raises
        ------
        EmptyVocabularyError, TrainingDivergedError, NotFittedError, TokembedError
            As :meth:`fit`; pair counts before the vocabulary, or counts of another kind.
        """
        from tokembed.errors import NotFittedError
        from tokembed.plugins.cooccurrence.counting import CooccurrenceCounts, TokenCounts

        self._validate_params()
        if isinstance(counts, TokenCounts):
            self._reset()
            cv = self._cooccurrence()
            try:
                cv.fit_counts(counts)
            except EmptyVocabularyError:
                raise self._no_pair_error(counts.n_tokens, counts.n_docs, cv) from None
            self._counting = cv
            self._counted = (counts.n_tokens, counts.n_docs, len(counts.keys) if counts.from_sequences else None)
            return self
        if isinstance(counts, CooccurrenceCounts):
            cv = self.__dict__.get("_counting")
            if cv is None:
                raise NotFittedError(f"{_NAME}: fit_counts got pair counts before the vocabulary: fit the merged "
                                     "token counts of pass 1 first (partial_counts on a new embedder)")
            n_tokens, n_docs, input_vocab = self._counted
            try:
                cv.fit_counts(counts)
            except EmptyVocabularyError:
                raise self._no_pair_error(n_tokens, n_docs, cv) from None
            del self._counting, self._counted
            return self._train(cv, input_vocab)
        raise TokembedError(f"{_NAME}: fit_counts takes the merged partial_counts (TokenCounts, then "
                            f"CooccurrenceCounts), got {type(counts).__name__}")

    def _train(self, cv: Any, input_vocab_size: int | None) -> "GloVe":
        """Train on the fitted co-occurrence vectorizer ``cv`` (its vocabulary and matrix) and set the model."""
        from .training import make_records, train

        matrix = cv.matrix_
        rows = np.repeat(np.arange(matrix.shape[0], dtype=np.int32), np.diff(matrix.indptr))
        records = make_records(rows, matrix.indices, matrix.data, float(self.x_max), float(self.alpha))
        keys, counts, token_ids, n_tokens = cv.index_to_key_, cv.counts_, cv.token_ids_, cv.n_tokens_
        del cv, matrix, rows
        bar = _progress_bar(int(self.epochs), records.size, len(keys))
        try:
            params = train(records, len(keys), int(self.vector_size), epochs=int(self.epochs),
                           learning_rate=float(self.learning_rate), clip=float(self.clip), seed=int(self.seed),
                           workers=self._n_workers(), on_epoch=bar.update_epoch if bar else None)
        finally:
            if bar:
                bar.close()
        self._set_model(list(keys), params.word, params.context, params.word_bias, params.context_bias)
        self.counts_ = np.asarray(counts, dtype=np.int64)
        self.token_ids_ = np.asarray(token_ids, dtype=np.int64)
        self.input_vocab_size_ = input_vocab_size
        self.costs_ = [float(c) for c in params.costs]
        self.n_records_ = int(records.size)
        self.n_tokens_ = int(n_tokens)
        self.workers_ = self._n_workers()
        return self

    def _no_pair_error(self, n_input_tokens: int, n_docs: int, cv: Any) -> EmptyVocabularyError:
        n_words = len(getattr(cv, "index_to_key_", ()))
        kept = int(np.asarray(getattr(cv, "counts_", np.zeros(0, np.int64))).sum())
        limits = f"min_count={self.min_count}" + (f", max_vocab={self.max_vocab}" if self.max_vocab else "")
        if n_words == 0:
            why = f"no word is counted at least {self.min_count} times"
            hint = "lower min_count or give more text"
        else:
            why = "no document holds two kept tokens (each document is one token, or the filter removed the others)"
            hint = "give documents of more than one token (e.g. paragraphs rather than words per line) or lower " \
                   "min_count"
        return EmptyVocabularyError(
            f"{_NAME}: no co-occurrence pair to train on: a vocabulary of {n_words} words ({limits}) and "
            f"{kept} kept tokens of {n_input_tokens} in {n_docs} documents, but {why}; {hint}. Nothing was "
            "trained")

    def _set_model(self, keys: list[str], word: np.ndarray, context: np.ndarray, word_bias: np.ndarray,
                   context_bias: np.ndarray) -> None:
        self.word_vectors_ = np.asarray(word, dtype=np.float32)
        self.context_vectors_ = np.asarray(context, dtype=np.float32)
        self.word_biases_ = np.asarray(word_bias, dtype=np.float32)
        self.context_biases_ = np.asarray(context_bias, dtype=np.float32)
        if self.output == "sum":
            vectors = self.word_vectors_ + self.context_vectors_
        elif self.output == "word":
            vectors = self.word_vectors_
        else:
            vectors = np.hstack([self.word_vectors_, self.context_vectors_])
        self.wv_ = KeyedVectors.from_arrays(keys, vectors)

    # -- output -----------------------------------------------------------------------------------------------
    @property
    def vectors_(self) -> np.ndarray:
        """``wv_.vectors``: float32, (V, vector_size) (twice as wide for ``output="concat"``)."""
        self._check_is_fitted()
        return self.wv_.vectors

    def to_torch(self, freeze: bool = True, padding_idx: int | None = None):
        """A ``torch.nn.Embedding`` of the vectors, indexed by the tokenizer's ids when ``fit`` got its output.

        When ``fit`` was given a :class:`~tokembed.sequences.TokenSequences` (a tokenizer's ids), the weight has
        one row per id of that vocabulary (``input_vocab_size_`` rows): row ``token_ids_[r]`` holds the vector of
        key ``r``, and the rows of ids without a vector (special tokens, tokens below ``min_count`` or never seen)
        are zeros. After ``fit`` on token lists, row ``r`` is key ``r`` of ``wv_`` (``wv_.to_torch()``).

        Parameters
        ----------
        freeze : bool, default True
            Weight without gradient, as ``nn.Embedding.from_pretrained``.
        padding_idx : int, optional
            Passed to ``nn.Embedding.from_pretrained``.

        Raises
        ------
        NotFittedError
            Before ``fit``.
        TokembedError
            torch is not installed (``pip install 'tokembed[torch]'``).
        """
        self._check_is_fitted()
        if self.input_vocab_size_ is None:
            return self.wv_.to_torch(freeze=freeze, padding_idx=padding_idx)
        try:
            import torch
        except ImportError:
            raise TokembedError("to_torch needs PyTorch: pip install 'tokembed[torch]'") from None
        weight = np.zeros((int(self.input_vocab_size_), self.wv_.vector_size), dtype=np.float32)
        weight[self.token_ids_] = self.wv_.vectors
        return torch.nn.Embedding.from_pretrained(torch.from_numpy(weight), freeze=freeze, padding_idx=padding_idx)

    def save_word2vec_format(self, path: str | os.PathLike, binary: bool = False) -> Path:
        """Write ``wv_`` as a word2vec text (or binary) file: a ``"<count> <dimensions>"`` line, then one vector
        per line, most frequent first (:meth:`KeyedVectors.save_word2vec_format`)."""
        self._check_is_fitted()
        return self.wv_.save_word2vec_format(path, binary=binary)

    def save_glove_format(self, path: str | os.PathLike) -> Path:
        """Write ``wv_`` as the reference's text output: one ``key v1 ... vd`` line per key, no header line
        (read back with ``load_vectors(path, no_header=True)``)."""
        self._check_is_fitted()
        return self.wv_.save_word2vec_format(path, binary=False, write_header=False)

    # -- state ------------------------------------------------------------------------------------------------
    def _get_state(self) -> dict[str, Any]:
        workers = int(self.workers_)
        return {
            "keys": list(self.wv_.index_to_key),
            "word_vectors": self.word_vectors_,
            "context_vectors": self.context_vectors_,
            "word_biases": self.word_biases_,
            "context_biases": self.context_biases_,
            "counts": self.counts_.astype(np.int64),
            "token_ids": self.token_ids_.astype(np.int64),
            "input_vocab_size": self.input_vocab_size_,
            "costs": list(self.costs_),
            "n_records": int(self.n_records_),
            "n_tokens": int(self.n_tokens_),
            "workers": workers,
            "reproducible": workers == 1,
            "reproducibility": (
                "trained on 1 thread: the same corpus, parameters and seed give these vectors bit for bit"
                if workers == 1 else
                f"trained on {workers} threads without locks (Hogwild): another run with the same seed gives "
                "slightly different vectors; train with workers=1 for bit-identical runs"),
        }

    def _set_state(self, state: dict[str, Any]) -> None:
        keys = [str(k) for k in state["keys"]]
        n, d = len(keys), int(self.vector_size)
        arrays = {name: np.asarray(state[name]) for name in
                  ("word_vectors", "context_vectors", "word_biases", "context_biases", "counts", "token_ids")}
        for name, shape in (("word_vectors", (n, d)), ("context_vectors", (n, d)), ("word_biases", (n,)),
                            ("context_biases", (n,)), ("counts", (n,)), ("token_ids", (n,))):
            if arrays[name].shape != shape:
                raise ValueError(f"{name} has shape {arrays[name].shape}, expected {shape}")
        self._set_model(keys, arrays["word_vectors"], arrays["context_vectors"], arrays["word_biases"],
                        arrays["context_biases"])
        self.counts_ = arrays["counts"].astype(np.int64)
        self.token_ids_ = arrays["token_ids"].astype(np.int64)
        size = state["input_vocab_size"]
        self.input_vocab_size_ = None if size is None else int(size)
        self.costs_ = [float(c) for c in state["costs"]]
        self.n_records_ = int(state["n_records"])
        self.n_tokens_ = int(state["n_tokens"])
        self.workers_ = int(state["workers"])

    # -- hooks ------------------------------------------------------------------------------------------------
    @classmethod
    def _contract_params(cls) -> dict[str, Any]:
        return {"vector_size": 8, "epochs": 3, "min_count": 2, "window": 5, "x_max": 10.0}

    @classmethod
    def warmup(cls) -> None:
        """Compile the training kernels (and the co-occurrence plugin's) on a tiny corpus."""
        from tokembed.plugins.cooccurrence import CooccurrenceVectorizer

        CooccurrenceVectorizer.warmup()
        cls(vector_size=4, epochs=1, min_count=1, window=2, workers=1).fit([["a", "b", "c", "a", "b"], ["b", "c"]])


# -- helpers --------------------------------------------------------------------------------------------------------
class _EpochBar:
    """A tqdm bar over epochs showing the last epoch's cost (hidden when stderr is not a terminal)."""

    def __init__(self, epochs: int, n_records: int, n_words: int):
        from tqdm.auto import tqdm

        self._bar = tqdm(total=epochs, desc=f"glove ({n_words:,} words, {n_records:,} pairs)", unit=" epoch",
                         mininterval=0.5, leave=False, disable=None)

    def update_epoch(self, epoch: int, cost: float) -> None:
        self._bar.set_postfix_str(f"epoch {epoch}, cost {cost:.6f}", refresh=False)
        self._bar.update(1)

    def close(self) -> None:
        self._bar.close()


def _progress_bar(epochs: int, n_records: int, n_words: int) -> _EpochBar | None:
    try:
        return _EpochBar(epochs, n_records, n_words)
    except ImportError:  # tqdm is a dependency; without it, train silently
        return None
