"""Word vectors from a tokenizer's piece vectors: what an evaluation word means to vectors trained on subword tokens.

Vectors trained over a subword tokenizer's output (GloVe over BPE pieces, say) are keyed by pieces, while the
word-similarity and analogy sets are made of words. :func:`compose_word_vectors` gives each evaluation word a
vector from the vectors of the pieces its tokenizer splits it into:

- The word is encoded **as the tokenizer encodes a word inside running text**: ``tokenizer.encode(CONTEXT + " " +
  word)`` with ``CONTEXT = "the"``, keeping the tokens whose offsets overlap the word's characters. A byte-level
  BPE (GPT-2) thus gives the word its leading-space piece (``Ġwhale``), a WordPiece tokenizer its word-initial
  piece then ``##`` continuations, a word tokenizer the word itself (or ``<unk>``), a character tokenizer one
  piece per character. Special tokens added by a post-processor are not used.
- ``compose="mean"`` (the default) averages the vectors of the pieces that have one; ``"sum"`` adds them;
  ``"fasttext"`` asks the vectors for the whole word first (FastText's own character n-gram lookup, through
  :meth:`KeyedVectors.get_vector`), and falls back to the mean of the pieces when they have no vector for it.
- A word none of whose pieces has a vector (all unknown) gets none, and the evaluation skips it (counted as out
  of vocabulary). Special tokens (``<unk>``) never lend their vector: a word the tokenizer does not know is out
  of vocabulary even when the vectors hold a row for ``<unk>``.

Analogies need candidates to search, and a subword tokenizer has no word vocabulary: :func:`with_candidates`
puts first the :data:`POOL_SIZE` most frequent words of the training corpus (:func:`frequent_words`), composed
the same way, so that analogies are answered among the same words whatever the tokenizer (``restrict_vocab`` =
the pool's rows), as gensim answers them among the 30,000 most frequent words of word vectors.

The returned :class:`ComposedVectors` also says how many evaluation words are a single token of the tokenizer
(a token that is not one of its special tokens such as ``<unk>``), the figure that separates "the tokenizer keeps
this word whole" from "the vector is made up". It is a property of the tokenizer alone: a word kept whole still
counts when the embedder dropped its token (``min_count``) and the word got no vector.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Literal

import numpy as np

from .errors import TokembedError
from .keyedvectors import KeyedVectors

__all__ = ["ComposedVectors", "compose_word_vectors", "word_pieces", "frequent_words", "with_candidates",
           "evaluation_table", "COMPOSE_MODES", "CONTEXT", "POOL_SIZE"]

#: How piece vectors make a word vector.
COMPOSE_MODES = ("mean", "sum", "fasttext")
#: The text a word follows when it is encoded, so that it is encoded as inside running text.
CONTEXT = "the"
#: Words of the analogy candidate pool: the corpus's most frequent (gensim's ``restrict_vocab`` default).
POOL_SIZE = 30_000


@dataclass
class ComposedVectors:
    """Vectors for evaluation words, composed from a tokenizer's piece vectors.

    Attributes
    ----------
    vectors : KeyedVectors
        One float32 row per word that got a vector, keys in the order the words were given.
    words : int
        Distinct words asked for.
    single_token : int
        Words the tokenizer encodes as exactly one token that is not a special token (``<unk>``, ...), whether or
        not the vectors have that token.
    covered : int
        Words that got a vector.
    compose : str
        The mode used.
    """

    vectors: KeyedVectors
    words: int
    single_token: int
    covered: int
    compose: str

    @property
    def single_token_share(self) -> float:
        """``single_token / words`` (0.0 for no word)."""
        return self.single_token / self.words if self.words else 0.0

    @property
    def covered_share(self) -> float:
        """``covered / words`` (0.0 for no word)."""
        return self.covered / self.words if self.words else 0.0


def word_pieces(tokenizer: Any, words: Iterable[str]) -> list[list[str]]:
    """The tokens each word is split into inside running text (see the module notes), one list per word.

    Raises
    ------
    TokembedError
        If the tokenizer cannot encode the texts (not fitted, ...): its own error.
    """
    words = list(words)
    texts = [f"{CONTEXT} {w}" for w in words]
    start = len(CONTEXT) + 1
    out: list[list[str]] = []
    encodings = tokenizer.encode_batch(texts, add_special_tokens=False)
    for word, enc in zip(words, encodings):
        end = start + len(word)
        offsets = np.asarray(enc.offsets).reshape(-1, 2)
        keep = (offsets[:, 0] < end) & (offsets[:, 1] > start)
        out.append([tok for tok, k in zip(enc.tokens, keep) if k])
    return out


def compose_word_vectors(tokenizer: Any, vectors: KeyedVectors, words: Iterable[str],
                         compose: Literal["mean", "sum", "fasttext"] = "mean", *,
                         lowercase: bool = True) -> ComposedVectors:
    """Vectors for ``words`` from ``vectors`` keyed by ``tokenizer``'s tokens (see the module notes).

    Parameters
    ----------
    tokenizer : Tokenizer
        The fitted tokenizer the vectors were trained on.
    vectors : KeyedVectors
        Piece vectors, keyed by the tokenizer's token strings.
    words : iterable of str
        The evaluation words (repeats are kept once, in first-seen order).
    compose : {"mean", "sum", "fasttext"}
    lowercase : bool, default True
        Lowercase the words first (the evaluation compares lowercased forms, as gensim does, and word-vector
        corpora such as wv_corpus are lowercased).

    Returns
    -------
    ComposedVectors

    Raises
    ------
    TokembedError
        For an unknown ``compose``.
    """
    if compose not in COMPOSE_MODES:
        raise TokembedError(f"compose must be one of {', '.join(COMPOSE_MODES)}, got {compose!r}")
    unique = list(dict.fromkeys((w.lower() if lowercase else w) for w in words
                                if w and not any(c.isspace() for c in w)))
    pieces = word_pieces(tokenizer, unique)
    specials = set(getattr(tokenizer, "special_tokens_", ()) or ())
    keys: list[str] = []
    rows: list[np.ndarray] = []
    single = 0
    for word, toks in zip(unique, pieces):
        found = [vectors.get_index(t, -1) for t in toks if t not in specials]  # an <unk> row means nothing
        present = [i for i in found if i >= 0]
        if len(toks) == 1 and toks[0] not in specials:
            single += 1
        vec = None
        if compose == "fasttext":
            try:
                vec = np.asarray(vectors.get_vector(word), dtype=np.float32)
            except KeyError:
                vec = None
        if vec is None and present:
            block = vectors.vectors[present].astype(np.float64)
            vec = (block.sum(axis=0) if compose == "sum" else block.mean(axis=0)).astype(np.float32)
        if vec is not None:
            keys.append(word)
            rows.append(vec)
    dim = vectors.vector_size
    matrix = np.stack(rows).astype(np.float32) if rows else np.zeros((0, dim), np.float32)
    kv = KeyedVectors.from_arrays(keys, matrix, copy=False) if keys else KeyedVectors(dim)
    return ComposedVectors(kv, len(unique), single, len(keys), compose)


def frequent_words(docs: Iterable[str], n: int = POOL_SIZE) -> list[str]:
    """The ``n`` most frequent lowercased whitespace-separated words of ``docs``, count-descending, ties by the word
    (the same documents give the same list in any process)."""
    from collections import Counter

    counts: Counter[str] = Counter()
    for doc in docs:
        counts.update(doc.lower().split())
    return [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]


def with_candidates(tokenizer: Any, vectors: KeyedVectors, composed: ComposedVectors, pool: list[str],
                    compose: Literal["mean", "sum", "fasttext"] = "mean") -> tuple[KeyedVectors, int]:
    """One table for evaluation: the pool words that get a vector (composed from ``vectors`` as the evaluation
    words were, in pool order), then the evaluation words of ``composed`` outside the pool; and the number of pool
    rows (pass it as ``restrict_vocab`` so that analogies are answered among the pool).

    Returns ``(table, n_pool)``; ``n_pool`` is 0 when no pool word got a vector.
    """
    table = compose_word_vectors(tokenizer, vectors, pool, compose, lowercase=False).vectors
    words = composed.vectors
    extra = [w for w in words.index_to_key if w not in table.key_to_index]
    keys = list(table.index_to_key) + extra
    if not len(table):
        return words, 0
    rows = [table.vectors] + ([words.vectors[[words.key_to_index[w] for w in extra]]] if extra else [])
    return KeyedVectors.from_arrays(keys, np.vstack(rows).astype(np.float32), copy=False), len(table)


def evaluation_table(tokenizer: Any, vectors: KeyedVectors, words: Iterable[str], pool: list[str],
                     compose: Literal["mean", "sum", "fasttext"] = "mean"
                     ) -> tuple[KeyedVectors, ComposedVectors, int | None]:
    """What the evaluation scores for vectors of ``tokenizer``'s pieces: ``words`` (the evaluation sets' words)
    composed from ``vectors`` (:func:`compose_word_vectors`), behind the ``pool`` words composed the same way
    (:func:`with_candidates`).

    Returns
    -------
    (KeyedVectors, ComposedVectors, int or None)
        The table to score, the composition (its counts: words, covered, single-token share), and the
        ``restrict_vocab`` that makes analogies search the pool (None when no pool word got a vector).
    """
    composed = compose_word_vectors(tokenizer, vectors, words, compose)
    table, n_pool = with_candidates(tokenizer, vectors, composed, pool, compose)
    return table, composed, n_pool or None
