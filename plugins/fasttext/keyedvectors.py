"""fastText word vectors: a :class:`~tokembed.keyedvectors.KeyedVectors` that builds vectors for unseen words.

An out-of-vocabulary word's vector is the mean of the rows of its character n-grams (Bojanowski et al. 2017,
section 3.2; fastText's ``FastText::getWordVector``); a word none of whose n-grams is in the length range gets the
zero vector. The hashing is fastText's, so rows agree with a ``.bin`` file written by Facebook's fastText or by
gensim (:func:`ngram_hashes` equals gensim's ``ft_ngram_hashes``).
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from tokembed.errors import TokembedError
from tokembed.keyedvectors import KeyedVectors

__all__ = ["FastTextKeyedVectors", "ft_hash", "ngrams", "ngram_hashes"]

_FNV_OFFSET = 2166136261
_FNV_PRIME = 16777619
#: fastText's end-of-sentence word, which has no n-grams.
EOS = "</s>"


def ft_hash(data: bytes) -> int:
    """fastText's hash of ``data``: 32-bit FNV-1a in which each byte is sign-extended before the XOR.

    ``h = 2166136261``; for each byte ``b``: ``h = (h XOR int32(int8(b))) * 16777619 mod 2**32``, so a byte
    ``b >= 0x80`` is XOR-ed as ``0xFFFFFF00 | b`` (fastText's ``Dictionary::hash``, kept for compatibility with the
    models it has published). ``ft_hash("<ab>".encode()) == 674621742``; ``ft_hash("é".encode()) == 1023043777``
    (513665217 without the sign extension).
    """
    h = _FNV_OFFSET
    for b in data:
        h = ((h ^ (b | 0xFFFFFF00 if b >= 0x80 else b)) * _FNV_PRIME) & 0xFFFFFFFF
    return h


def ngrams(word: str, minn: int, maxn: int) -> list[bytes]:
    """The character n-grams of ``"<" + word + ">"`` with ``minn`` to ``maxn`` code points, as UTF-8 bytes.

    In fastText's order: by start, then by length; the one-character n-grams ``"<"`` and ``">"`` are left out.
    ``"</s>"`` has none (fastText's end-of-sentence word). Code points are counted on the UTF-8 bytes, so a lone
    surrogate (encoded with ``surrogatepass``) counts as one.
    """
    if word == EOS or maxn < 1:
        return []
    data = ("<" + word + ">").encode("utf-8", "surrogatepass")
    starts = [i for i, b in enumerate(data) if b & 0xC0 != 0x80] + [len(data)]
    out = []
    last = len(starts) - 1  # characters
    for a in range(last):
        for n in range(max(minn, 1), maxn + 1):
            if a + n > last:
                break
            if n == 1 and (a == 0 or a + 1 == last):
                continue
            out.append(data[starts[a]:starts[a + n]])
    return out


def ngram_hashes(word: str, minn: int, maxn: int, bucket: int) -> list[int]:
    """``ft_hash(g) % bucket`` for each n-gram ``g`` of :func:`ngrams`: the n-gram rows of ``word`` (repeats kept)."""
    return [ft_hash(g) % bucket for g in ngrams(word, minn, maxn)] if bucket > 0 else []


class FastTextKeyedVectors(KeyedVectors):
    """Word vectors with character n-gram vectors for out-of-vocabulary words.

    Build one with :meth:`from_fasttext` (a fitted ``fasttext`` embedder's ``wv_`` is one; so is what
    :func:`tokembed.plugins.fasttext.load_facebook_vectors` reads).

    Attributes
    ----------
    vectors : ndarray of float32, shape (n_keys, vector_size)
        The in-vocabulary vectors: the mean of each word's own row and its n-gram rows.
    vectors_ngrams : ndarray of float32, shape (bucket, vector_size)
        The n-gram rows (read-only); row ``ft_hash(g) % bucket`` belongs to n-gram ``g``.
    minn, maxn, bucket : int
        The n-gram lengths (code points) and the number of n-gram rows.

    Notes
    -----
    ``kv[word]`` never raises for a ``str``: an unseen word gets the mean of its n-gram rows, or the zero vector
    when it has no n-gram of ``minn`` to ``maxn`` code points (``"q"`` with ``minn=5``), as fastText's
    ``getWordVector`` does. ``word in kv`` and :meth:`has_index_for` still say whether the word has a row, and
    evaluation (:mod:`tokembed.evaluation`) uses rows only.
    """

    minn: int = 0
    maxn: int = 0
    bucket: int = 0

    def __init__(self, vector_size: int):
        super().__init__(vector_size)
        self._ngrams = np.zeros((0, self.vector_size), np.float32)

    @classmethod
    def from_fasttext(cls, keys: Iterable[str], vectors: Any, vectors_ngrams: Any, *, minn: int, maxn: int,
                      copy: bool = True) -> "FastTextKeyedVectors":
        """Vectors from keys, their (composed) vectors and the n-gram matrix.

        Parameters
        ----------
        keys : iterable of str
            ``n`` distinct keys, in row order.
        vectors : array-like of shape (n, vector_size)
            The in-vocabulary vectors.
        vectors_ngrams : array-like of shape (bucket, vector_size)
            The n-gram rows. ``bucket`` may be 0 only without n-grams (``maxn < max(minn, 1)``); every unseen
            word then gets the zero vector.
        minn, maxn : int
            N-gram lengths.
        copy : bool
            With False the instance may share memory with the arrays: do not modify them afterwards.

        Raises
        ------
        TokembedError
            Shapes that disagree, or ``bucket == 0`` with ``maxn >= 1``.
        """
        kv = cls.from_arrays(keys, vectors, copy=copy)
        ngr = np.array(vectors_ngrams, dtype=np.float32, order="C", copy=True if copy else None)
        if ngr.ndim != 2 or ngr.shape[1] != kv.vector_size:
            raise TokembedError(f"vectors_ngrams must have shape (bucket, {kv.vector_size}), got {ngr.shape}")
        if ngr.shape[0] == 0 and maxn >= 1 and maxn >= minn:
            raise TokembedError("vectors_ngrams has no row but maxn >= 1: n-grams would have nowhere to go")
        view = ngr.view()
        view.flags.writeable = False
        kv._ngrams = view
        kv.minn, kv.maxn, kv.bucket = int(minn), int(maxn), int(ngr.shape[0])
        return kv

    def _saved_arrays(self) -> dict[str, np.ndarray]:
        """The n-gram rows and ``[minn, maxn]``, for :meth:`KeyedVectors.save`."""
        return {"vectors_ngrams": self._ngrams, "ngram_lengths": np.array([self.minn, self.maxn], np.int64)}

    @classmethod
    def _from_saved(cls, keys: list[str], vectors: np.ndarray, extra: dict[str, np.ndarray]) -> "FastTextKeyedVectors":
        if set(extra) != {"vectors_ngrams", "ngram_lengths"} or extra["ngram_lengths"].shape != (2,):
            raise TokembedError(f"FastText vectors need vectors_ngrams and ngram_lengths, found "
                                f"{', '.join(sorted(extra)) or 'neither'}")
        minn, maxn = (int(x) for x in extra["ngram_lengths"])
        return cls.from_fasttext(keys, vectors, extra["vectors_ngrams"], minn=minn, maxn=maxn)

    @property
    def vectors_ngrams(self) -> np.ndarray:
        return self._ngrams

    def ngram_rows(self, word: str) -> list[int]:
        """The rows of :attr:`vectors_ngrams` that make ``word``'s out-of-vocabulary vector (repeats kept)."""
        return ngram_hashes(word, self.minn, self.maxn, self.bucket)

    def _oov_vector(self, key: str) -> np.ndarray | None:
        rows = self.ngram_rows(key)
        out = np.zeros(self.vector_size, np.float32)
        for r in rows:  # summed in order in float32, as fastText does
            out += self._ngrams[r]
        if rows:
            out *= np.float32(1.0 / len(rows))
        return out

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({len(self):,} keys, vector_size={self.vector_size}, minn={self.minn}, "
                f"maxn={self.maxn}, bucket={self.bucket:,})")
