"""Word vectors by key: lookup, cosine similarity, nearest neighbours, analogies, word2vec files, PyTorch export.

:class:`KeyedVectors` is what trained word-vector embedders (GloVe, FastText) produce and what
:mod:`tokembed.evaluation` scores. Its names are gensim 4's (``vectors``, ``index_to_key``, ``key_to_index``,
``vector_size``, ``most_similar``, ``save_word2vec_format``), so code written for gensim reads the same.

>>> import numpy as np
>>> kv = KeyedVectors.from_arrays(["a", "b", "c"], np.eye(3, dtype=np.float32))
>>> kv.similarity("a", "b")
0.0

Files
-----
word2vec text and binary files, and tokembed's own ``.npz`` file, are read and written by
:mod:`tokembed.vectorfiles` (the formats are described there); :meth:`KeyedVectors.save` / :meth:`KeyedVectors.load`
(every key and value bit for bit, and a subclass's own arrays: FastText's n-gram rows) and
:meth:`KeyedVectors.save_word2vec_format` / :meth:`KeyedVectors.load_word2vec_format` are their faces here, and
:func:`load_vectors` reads any of them.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any, Iterable, Sequence, Union

import numpy as np

from .errors import ArtifactError, DataError, TokembedError
from .vectorfiles import (  # noqa: F401 - re-exported: the file functions' historical home
    HAS_HEADER_HINT,
    NO_HEADER_HINT,
    header_then_vector,
    read_vector_npz,
    read_word2vec,
    saved_class,
    sniff_vector_file,
    read_word2vec_header,
    write_keyed_vectors,
    write_word2vec,
)

__all__ = ["KeyedVectors", "OutOfVocabularyError", "load_vectors", "read_word2vec_header"]


#: Rows per block when computing norms and writing files (bounds temporary memory).
_BLOCK = 65536
_LE_F32 = np.dtype("<f4")

Term = Union[str, np.ndarray]


class OutOfVocabularyError(TokembedError, KeyError):
    """A key has no vector: it is not in the vocabulary and the vectors cannot build one for it.

    A :class:`KeyError`, so ``except KeyError`` (gensim's convention) catches it. ``key`` holds the key.
    """

    def __init__(self, message: str, key: Any = None):
        super().__init__(message)
        self.key = key

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class KeyedVectors:
    """A vocabulary of string keys, each with a dense float32 vector.

    Parameters
    ----------
    vector_size : int
        Dimensions of every vector (>= 1). The instance starts empty; fill it with :meth:`add_vectors`, or build
        one with :meth:`from_arrays`, :meth:`load_word2vec_format` or :meth:`from_dataset`.

    Attributes
    ----------
    vectors : ndarray of shape (n_keys, vector_size), float32
        Row ``i`` is the vector of ``index_to_key[i]``. Read-only: assign a new array to ``vectors``, or use
        :meth:`add_vectors` / ``kv[key] = vector``, so that the cached unit vectors are recomputed.
    index_to_key : list of str
        Keys in row order (by convention most frequent first, which ``restrict_vocab`` relies on). Do not modify.
    key_to_index : dict of str to int
        Row of each key. Do not modify.
    vector_size : int
        Columns of ``vectors``.
    source : str or None
        Where the vectors were read from: the file (:meth:`load_word2vec_format`), the folder or the dataset name
        (:meth:`from_dataset`); None for vectors built in memory. Error messages name it (an evaluation that finds
        NaN vectors says which file holds them).

    Notes
    -----
    Out-of-vocabulary keys raise :class:`OutOfVocabularyError` (a ``KeyError``). A subclass that can build
    vectors for unseen keys (FastText from character n-grams) overrides :meth:`_oov_vector`; lookups,
    :meth:`similarity` and query terms of :meth:`most_similar` then use it, while :meth:`has_index_for` still says
    whether a key has a row. Evaluation (:mod:`tokembed.evaluation`) uses rows only, as gensim does.

    Cosine similarities use unit vectors; a zero vector's unit vector is taken to be zero, so its cosine with
    anything is 0 (gensim would give NaN).
    """

    #: Where the vectors were read from (see the class notes); a class attribute so that subclasses get it too.
    source: str | None = None

    def __init__(self, vector_size: int):
        if isinstance(vector_size, bool) or not isinstance(vector_size, (int, np.integer)) or vector_size < 1:
            raise TokembedError(f"vector_size must be an int >= 1, got {vector_size!r}")
        self._vectors = _frozen(np.zeros((0, int(vector_size)), dtype=np.float32))
        self.index_to_key: list[str] = []
        self.key_to_index: dict[str, int] = {}
        self._normed: np.ndarray | None = None
        self._norms: np.ndarray | None = None

    # -- construction -----------------------------------------------------------------------------------------
    @classmethod
    def from_arrays(cls, keys: Iterable[str], vectors: Any, *, copy: bool = True) -> "KeyedVectors":
        """Vectors from a key list and a matrix.

        Parameters
        ----------
        keys : iterable of str
            ``n`` distinct keys, in row order.
        vectors : array-like of shape (n, vector_size)
            Converted to float32 (C order). Copied unless ``copy=False`` and it is already float32 in C order.
        copy : bool
            With ``copy=False`` the instance may share memory with ``vectors``: do not modify it afterwards.

        Raises
        ------
        TokembedError
            If ``vectors`` is not 2-D with one row per key and at least one column, or keys repeat.
        TypeError
            If a key is not a ``str``.
        """
        keys = list(keys)
        arr = np.asarray(vectors)
        if arr.ndim != 2 or arr.shape[0] != len(keys) or arr.shape[1] < 1:
            raise TokembedError(
                f"from_arrays needs a 2-D array with one row per key and >= 1 column: got shape {arr.shape} "
                f"for {len(keys)} keys"
            )
        kv = cls(arr.shape[1])
        kv._set_keys(keys)
        arr = np.array(arr, dtype=np.float32, order="C", copy=True if copy else None)
        kv._vectors = _frozen(arr.view())  # a read-only view: the caller's array keeps its own flags
        return kv

    @classmethod
    def from_dataset(cls, name_or_path: str | os.PathLike, *, limit: int | None = None) -> "KeyedVectors":
        """Reference vectors from a fetched dataset of kind ``vectors`` (``"glove_6b_50d"``), or from a folder.

        The folder holds ``vectors.npy`` (float32, shape (n, d), no pickle) and ``vocab.txt`` (n keys, one per
        line, UTF-8, in row order).

        Parameters
        ----------
        name_or_path : str or path
            A dataset name from :data:`tokembed.datasets.DATASETS`, or a folder.
        limit : int, optional
            Keep only the first ``limit`` keys (the most frequent ones for GloVe); the rest is never read into
            memory.

        Raises
        ------
        DataError
            Unknown dataset name, a dataset of another kind, or a dataset not fetched yet (the message gives the
            ``tokembed data fetch`` command).
        ArtifactError
            The folder's files are missing, or their sizes disagree.
        """
        from .datasets import DATASETS, dataset_path, get_spec

        if isinstance(name_or_path, str) and name_or_path in DATASETS:
            spec = get_spec(name_or_path)
            if spec.kind != "vectors":
                raise DataError(f"dataset {spec.name!r} is of kind {spec.kind!r}, not 'vectors'")
            folder = dataset_path(name_or_path)
        else:
            folder = Path(name_or_path)
            if not folder.is_dir():
                if folder.exists():
                    raise ArtifactError(
                        f"{folder}: is a file, expected a folder with vectors.npy and vocab.txt "
                        "(word2vec files are read with load_word2vec_format)"
                    )
                if _looks_like_name(name_or_path):
                    get_spec(name_or_path)  # an unknown dataset name: did-you-mean and the list
                raise ArtifactError(f"{folder}: no such folder (expected vectors.npy and vocab.txt inside)")
        limit = _check_limit(limit)
        try:
            arr = np.load(folder / "vectors.npy", mmap_mode="r", allow_pickle=False)
            text = (folder / "vocab.txt").read_bytes().decode("utf-8")  # no newline translation
        except FileNotFoundError as exc:
            raise ArtifactError(f"{folder}: missing {Path(exc.filename).name}") from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise ArtifactError(f"{folder}: cannot read the vectors: {exc}") from None
        keys = text.split("\n")  # not splitlines(): keys may hold U+2028, U+0085, ...
        if keys and keys[-1] == "":
            keys.pop()
        if arr.ndim != 2 or arr.shape[0] != len(keys):
            raise ArtifactError(f"{folder}: vectors.npy has shape {arr.shape} but vocab.txt has {len(keys)} keys")
        n = len(keys) if limit is None else min(limit, len(keys))
        try:
            kv = cls.from_arrays(keys[:n], arr[:n])
        except TokembedError as exc:
            raise ArtifactError(f"{folder}: {exc}") from None
        kv.source = name_or_path if isinstance(name_or_path, str) and name_or_path in DATASETS else str(folder)
        return kv

    def _set_keys(self, keys: list[str]) -> None:
        index: dict[str, int] = {}
        for i, key in enumerate(keys):
            if not isinstance(key, str):
                raise TypeError(f"keys must be str, got {type(key).__name__} at position {i}")
            if index.setdefault(key, i) != i:
                raise TokembedError(f"key {key!r} appears twice (positions {index[key]} and {i})")
        self.index_to_key = keys
        self.key_to_index = index

    # -- the matrix and its cached unit vectors ---------------------------------------------------------------
    @property
    def vectors(self) -> np.ndarray:
        return self._vectors

    @vectors.setter
    def vectors(self, value: Any) -> None:
        arr = np.asarray(value)
        if arr.ndim != 2 or arr.shape[0] != len(self.index_to_key) or arr.shape[1] < 1:
            raise TokembedError(
                f"vectors must have shape ({len(self.index_to_key)}, d >= 1), one row per key; got {arr.shape}"
            )
        self._vectors = _frozen(np.array(arr, dtype=np.float32, order="C"))
        self._invalidate()

    @property
    def vector_size(self) -> int:
        return int(self._vectors.shape[1])

    def _invalidate(self) -> None:
        self._normed = None
        self._norms = None

    def get_norms(self) -> np.ndarray:
        """Euclidean norm of every row: float32, shape (n_keys,), computed in float64 and cached."""
        if self._norms is None:
            v = self._vectors
            norms = np.empty(len(v), dtype=np.float64)
            for lo in range(0, len(v), _BLOCK):
                block = v[lo:lo + _BLOCK].astype(np.float64)
                norms[lo:lo + _BLOCK] = np.sqrt(np.einsum("ij,ij->i", block, block))
            self._norms = _frozen(norms.astype(np.float32))
        return self._norms

    def get_normed_vectors(self) -> np.ndarray:
        """Unit-length rows: float32, shape (n_keys, vector_size), read-only, cached until the vectors change.

        Rows of zero norm stay zero.
        """
        if self._normed is None:
            v = self._vectors
            out = np.empty_like(v)
            for lo in range(0, len(v), _BLOCK):
                block = v[lo:lo + _BLOCK].astype(np.float64)
                norms = np.sqrt(np.einsum("ij,ij->i", block, block))
                norms[norms == 0] = 1.0
                out[lo:lo + _BLOCK] = block / norms[:, None]
            self._normed = _frozen(out)
        return self._normed

    # -- lookup -----------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.index_to_key)

    def __contains__(self, key: object) -> bool:
        """True when ``key`` has a row (a subclass with OOV vectors may answer True for more keys)."""
        return self.has_index_for(key)

    def has_index_for(self, key: object) -> bool:
        """True when ``key`` is in the vocabulary (has a row of ``vectors``)."""
        return isinstance(key, str) and key in self.key_to_index

    def get_index(self, key: str, default: int | None = None) -> int:
        """The row of ``key``; ``default`` if it has none and a default is given, else :class:`OutOfVocabularyError`."""
        idx = self.key_to_index.get(key)
        if idx is not None:
            return idx
        if default is not None:
            return default
        raise self._oov_error(key)

    def _oov_vector(self, key: str) -> np.ndarray | None:
        """Hook: a vector (shape (vector_size,)) for a key without a row, or None when there is none.

        The base class has none. FastText-like subclasses compose one from subword vectors.
        """
        return None

    def _oov_error(self, key: Any) -> OutOfVocabularyError:
        hint = ""
        if isinstance(key, str) and key != key.lower() and key.lower() in self.key_to_index:
            hint = f" (but {key.lower()!r} is)"
        return OutOfVocabularyError(
            f"key {key!r} is not in the vocabulary of {len(self):,} keys{hint}", key
        )

    def get_vector(self, key: str, norm: bool = False) -> np.ndarray:
        """The vector of ``key``: float32, shape (vector_size,). With ``norm=True`` the unit vector.

        Rows are returned as read-only views of ``vectors``; OOV vectors (subclasses) as new arrays.

        Raises
        ------
        OutOfVocabularyError
            ``key`` has no row and :meth:`_oov_vector` gives none.
        """
        idx = self.key_to_index.get(key) if isinstance(key, str) else None
        if idx is not None:
            return self.get_normed_vectors()[idx] if norm else self._vectors[idx]
        vec = self._oov_vector(key) if isinstance(key, str) else None
        if vec is None:
            raise self._oov_error(key)
        vec = np.asarray(vec, dtype=np.float32).reshape(self.vector_size)
        return _unit(vec).astype(np.float32) if norm else vec

    def __getitem__(self, key: str | Sequence[str]) -> np.ndarray:
        """``kv["word"]`` -> shape (vector_size,); ``kv[["a", "b"]]`` -> shape (2, vector_size). float32."""
        if isinstance(key, str):
            return self.get_vector(key)
        if isinstance(key, (list, tuple)):
            if not key:
                return np.zeros((0, self.vector_size), dtype=np.float32)
            return np.vstack([self.get_vector(k) for k in key])
        raise self._oov_error(key)

    def __setitem__(self, key: str, vector: Any) -> None:
        """Set the vector of ``key``, adding the key when it is new."""
        self.add_vectors([key], np.asarray(vector, dtype=np.float32).reshape(1, -1), replace=True)

    def add_vectors(self, keys: Sequence[str], vectors: Any, replace: bool = False) -> None:
        """Append new keys with their vectors; a key already present keeps its vector unless ``replace``.

        Parameters
        ----------
        keys : sequence of str
            Distinct keys.
        vectors : array-like of shape (len(keys), vector_size)
        replace : bool
            Overwrite the vectors of keys already present.

        Raises
        ------
        TokembedError
            Wrong shape, or a key repeated within ``keys``.
        """
        keys = list(keys)
        arr = np.asarray(vectors, dtype=np.float32)
        if arr.ndim != 2 or arr.shape != (len(keys), self.vector_size):
            raise TokembedError(
                f"add_vectors needs shape ({len(keys)}, {self.vector_size}) for {len(keys)} keys, got {arr.shape}"
            )
        for key in keys:
            if not isinstance(key, str):
                raise TypeError(f"keys must be str, got {type(key).__name__}")
        if len(set(keys)) != len(keys):
            raise TokembedError("add_vectors: a key is given twice")
        old = np.array([k in self.key_to_index for k in keys], dtype=bool)
        new_keys = [k for k, o in zip(keys, old) if not o]
        merged = self._vectors
        if replace and old.any():
            merged = merged.copy()
            merged[[self.key_to_index[k] for k, o in zip(keys, old) if o]] = arr[old]
        if new_keys:
            start = len(self.index_to_key)
            for i, key in enumerate(new_keys):
                self.key_to_index[key] = start + i
            self.index_to_key.extend(new_keys)
            merged = np.concatenate([merged, arr[~old]])
        if merged is not self._vectors:
            self._vectors = _frozen(np.ascontiguousarray(merged))
            self._invalidate()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self):,} keys, vector_size={self.vector_size})"

    # -- similarity -------------------------------------------------------------------------------------------
    def similarity(self, key1: str, key2: str) -> float:
        """Cosine similarity of two keys' vectors, ``u.v / (|u| |v|)``, computed in float64; 0.0 if one is zero.

        Raises
        ------
        OutOfVocabularyError
            A key has no vector.
        """
        return _cosine(self.get_vector(key1), self.get_vector(key2))

    def n_similarity(self, keys1: Sequence[str], keys2: Sequence[str]) -> float:
        """Cosine similarity between the mean vectors of two non-empty key lists (gensim's ``n_similarity``).

        Raises
        ------
        TokembedError
            A list is empty.
        OutOfVocabularyError
            A key has no vector.
        """
        if not len(keys1) or not len(keys2):
            raise TokembedError("n_similarity needs two non-empty lists of keys")
        return _cosine(self[list(keys1)].astype(np.float64).mean(axis=0),
                       self[list(keys2)].astype(np.float64).mean(axis=0))

    def most_similar(
        self,
        positive: Term | Sequence[Term | tuple[Term, float]] = (),
        negative: Term | Sequence[Term | tuple[Term, float]] = (),
        topn: int | None = 10,
        restrict_vocab: int | None = None,
    ) -> list[tuple[str, float]] | np.ndarray:
        """The keys nearest by cosine to the weighted mean of unit vectors (3CosAdd for analogies).

        With ``positive=[b, c], negative=[a]`` this answers ``a : b :: c : ?`` by the vector offset method of
        Mikolov et al. (2013, "Linguistic regularities in continuous space word representations"):
        ``argmax_x cos(x, u_b + u_c - u_a)`` over the keys other than ``a``, ``b``, ``c``. As in gensim and
        ``word2vec.c``'s ``word-analogy``, every term enters as a unit vector with weight +1 (positive) or -1
        (negative), or the weight given as ``(term, weight)``, used as given in either list (gensim's rule); the
        query is ``sum(w_i u_i) / sum(|w_i|)``, normalised. Keys given as strings are left out of the result.

        Parameters
        ----------
        positive, negative : str, ndarray, or a list of str / ndarray / (str or ndarray, float)
            Query terms. Arrays (shape (vector_size,)) are normalised too (gensim uses arrays as given).
        topn : int or None
            Number of results; ``None`` returns the cosine of every searched row instead (float32, shape
            (restrict_vocab or n_keys,)), query keys included.
        restrict_vocab : int, optional
            Search only the first ``restrict_vocab`` rows (the most frequent keys).

        Returns
        -------
        list of (str, float), or ndarray when ``topn`` is None
            ``(key, cosine)`` by decreasing cosine; equal cosines in row order.

        Raises
        ------
        TokembedError
            No term given, or ``restrict_vocab`` < 1.
        OutOfVocabularyError
            A query key has no vector.
        """
        positive = [positive] if isinstance(positive, (str, np.ndarray)) else list(positive)
        negative = [negative] if isinstance(negative, (str, np.ndarray)) else list(negative)
        if not positive and not negative:
            raise TokembedError("most_similar needs at least one positive or negative term")
        query = np.zeros(self.vector_size, dtype=np.float64)
        total = 0.0
        exclude: list[int] = []
        for sign, terms in ((1.0, positive), (-1.0, negative)):
            for term in terms:
                weight = sign
                if isinstance(term, tuple):
                    term, weight = term
                    weight = float(weight)
                query += weight * self._term_unit(term, exclude)
                total += abs(weight)
        query = _unit(query / total if total else query).astype(np.float32)
        end = _check_restrict(restrict_vocab, len(self))
        scores = self.get_normed_vectors()[:end] @ query
        if topn is None:
            return scores
        if topn < 1:
            return []
        scores = scores.astype(np.float64)
        scores[[i for i in exclude if i < end]] = -np.inf
        best = _top_indices(scores, topn)
        return [(self.index_to_key[i], float(scores[i])) for i in best if scores[i] != -np.inf]

    def most_similar_cosmul(
        self,
        positive: str | Sequence[str] = (),
        negative: str | Sequence[str] = (),
        topn: int = 10,
        restrict_vocab: int | None = None,
    ) -> list[tuple[str, float]]:
        """3CosMul (Levy and Goldberg 2014, "Linguistic regularities in sparse and explicit word
        representations"): ``argmax_x prod_b s(x, b) / (prod_a s(x, a) + 1e-6)`` with ``s = (1 + cos) / 2``.

        Same parameters, exclusions and errors as :meth:`most_similar`; terms are keys only.
        """
        positive = [positive] if isinstance(positive, str) else list(positive)
        negative = [negative] if isinstance(negative, str) else list(negative)
        if not positive and not negative:
            raise TokembedError("most_similar_cosmul needs at least one positive or negative key")
        end = _check_restrict(restrict_vocab, len(self))
        normed = self.get_normed_vectors()[:end]
        exclude: list[int] = []
        num = np.ones(end, dtype=np.float64)
        den = np.ones(end, dtype=np.float64)
        for terms, acc in ((positive, num), (negative, den)):
            for term in terms:
                acc *= (1.0 + normed @ self._term_unit(term, exclude).astype(np.float32)) / 2.0
        scores = num / (den + 1e-6)
        if topn < 1:
            return []
        scores[[i for i in exclude if i < end]] = -np.inf
        best = _top_indices(scores, topn)
        return [(self.index_to_key[i], float(scores[i])) for i in best if scores[i] != -np.inf]

    def _term_unit(self, term: Term, exclude: list[int]) -> np.ndarray:
        if isinstance(term, np.ndarray):
            if term.shape != (self.vector_size,):
                raise TokembedError(f"a query vector must have shape ({self.vector_size},), got {term.shape}")
            return _unit(term.astype(np.float64))
        if not isinstance(term, str):
            raise TypeError(f"query terms are str keys or vectors, got {type(term).__name__}")
        idx = self.key_to_index.get(term)
        if idx is not None:
            exclude.append(idx)
        return _unit(self.get_vector(term).astype(np.float64))

    # -- tokembed's own file ---------------------------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> Path:
        """Write the keys, the vectors and a subclass's own arrays (FastText's n-gram rows) as one ``.npz``,
        atomically and deterministically (no pickle; the layout is in :mod:`tokembed.vectorfiles`). Every key is
        kept as it is (spaces, newlines: what word2vec files cannot hold) and every value bit for bit.

        Returns
        -------
        Path
            ``path`` (``.npz`` is not added; ``<name>.vectors.npz`` is the convention).
        """
        cls = type(self)
        return write_keyed_vectors(path, f"{cls.__module__}:{cls.__qualname__}", self.index_to_key, self._vectors,
                                   self._saved_arrays())

    @classmethod
    def load(cls, path: str | os.PathLike) -> "KeyedVectors":
        """Read what :meth:`save` wrote, as the class that saved it (a :class:`KeyedVectors` subclass named in the
        file, imported when it is not ``cls``; FastText's vectors come back with their n-gram rows), or a grid
        cell's ``grid/<cell>.vectors.npz``.

        Raises
        ------
        ArtifactError
            The file is missing, not an ``.npz`` or an ``.npz`` of something else (the message names the layouts
            expected), of another format version, broken; or it was saved from a class that cannot be imported
            or is not a subclass of ``cls``.
        """
        p = Path(path)
        saved = read_vector_npz(p)
        target: type[KeyedVectors] = cls
        if saved.class_path is not None and saved.class_path != f"{cls.__module__}:{cls.__qualname__}":
            target = saved_class(saved.class_path, cls, p)
        try:
            kv = target._from_saved(saved.keys, saved.vectors, saved.extra)
        except TokembedError as exc:
            raise ArtifactError(f"{p}: {exc}") from None
        kv.source = str(p)
        return kv

    def _saved_arrays(self) -> dict[str, np.ndarray]:
        """The arrays a subclass keeps besides keys and vectors, for :meth:`save` (none here)."""
        return {}

    @classmethod
    def _from_saved(cls, keys: list[str], vectors: np.ndarray, extra: dict[str, np.ndarray]) -> "KeyedVectors":
        """An instance from what :meth:`save` wrote (``extra``: :meth:`_saved_arrays`); raise TokembedError when
        the arrays do not fit."""
        if extra:
            raise TokembedError(f"holds arrays {cls.__qualname__} does not read ({', '.join(sorted(extra))})")
        return cls.from_arrays(keys, vectors)

    # -- word2vec files ---------------------------------------------------------------------------------------
    def save_word2vec_format(self, path: str | os.PathLike, binary: bool = False, write_header: bool = True) -> Path:
        """Write the vectors in word2vec text (default) or binary format, atomically (see the module notes).

        Parameters
        ----------
        path : str or path
        binary : bool
            The binary format.
        write_header : bool
            Start with the ``"<count> <dimensions>"`` line (gensim's parameter of the same name). Without it, a
            text file is GloVe's own ``.txt`` layout (read back with ``no_header=True``); text only.

        Returns
        -------
        Path
            ``path``.

        Raises
        ------
        TokembedError
            A key is empty, contains whitespace or cannot be encoded as UTF-8, or ``write_header=False`` with
            ``binary=True`` (nothing is written).
        """
        if binary and not write_header:
            raise TokembedError("write_header=False applies to the text format only (a binary file needs its header)")
        write_word2vec(path, self.index_to_key, self._vectors, binary=binary, write_header=write_header)
        return Path(path)

    @classmethod
    def load_word2vec_format(
        cls,
        path: str | os.PathLike,
        binary: bool = False,
        limit: int | None = None,
        no_header: bool = False,
    ) -> "KeyedVectors":
        """Read a word2vec text or binary file (written by ``word2vec.c``, gensim, fastText or tokembed).

        Parameters
        ----------
        path : str or path
        binary : bool
            The binary format (see the module notes).
        limit : int, optional
            Read only the first ``limit`` vectors.
        no_header : bool
            Text files without the ``"<count> <dimensions>"`` line (GloVe's own ``.txt`` files); text only.

        Returns
        -------
        KeyedVectors
            A key repeated in the file keeps its first vector (a warning says how many were dropped), as gensim
            does.

        Raises
        ------
        ArtifactError
            Missing or empty file, malformed header, a key that is not UTF-8, a line with the wrong number of
            values or a value that is not a number, or fewer vectors than the header announces (truncated). The
            message names the file and the line (text) or record and byte offset (binary). With ``no_header=True``
            on a file that does start with a header line, the error at line 2 says so.
        """
        p = Path(path)
        keys, vectors = read_word2vec(p, binary=binary, limit=_check_limit(limit), no_header=no_header)
        kv = _dedupe(cls, keys, vectors, p)
        kv.source = str(p)
        return kv

    # -- PyTorch ----------------------------------------------------------------------------------------------
    def to_torch(self, freeze: bool = True, padding_idx: int | None = None):
        """A ``torch.nn.Embedding`` whose weight is a copy of ``vectors`` (row ``i`` = ``index_to_key[i]``).

        Parameters
        ----------
        freeze : bool
            Weight without gradient (``requires_grad=False``), as ``nn.Embedding.from_pretrained``.
        padding_idx : int, optional
            Passed to ``nn.Embedding.from_pretrained``.

        Raises
        ------
        TokembedError
            torch is not installed (``pip install tokembed[torch]``).
        """
        try:
            import torch
        except ImportError:
            raise TokembedError("to_torch needs PyTorch: pip install 'tokembed[torch]'") from None
        weight = torch.from_numpy(np.array(self._vectors, dtype=np.float32, copy=True))
        return torch.nn.Embedding.from_pretrained(weight, freeze=freeze, padding_idx=padding_idx)


def load_vectors(
    source: str | os.PathLike, *, binary: bool | None = None, limit: int | None = None, no_header: bool = False
) -> KeyedVectors:
    """Vectors from any vector source tokembed writes or reads: a dataset name, a ``vectors.npy`` + ``vocab.txt``
    folder, a file of :meth:`KeyedVectors.save` or a grid cell's ``grid/<cell>.vectors.npz`` (told by content: an
    ``.npz`` is a zip archive), or a word2vec file.

    A word2vec file is read as binary when ``binary`` is True, or when it is None and the file name ends in
    ``.bin``; otherwise as text. ``no_header=True`` reads a text file without the ``"<count> <dimensions>"`` line
    (GloVe's own ``.txt`` files). ``limit`` keeps the first ``limit`` vectors.

    Raises
    ------
    DataError, ArtifactError
        As :meth:`KeyedVectors.from_dataset`, :meth:`KeyedVectors.load` and :meth:`KeyedVectors.load_word2vec_format`.
        A file that is none of these (a saved tokembed component, another binary file read as text) names the
        formats expected rather than showing its bytes.
    TokembedError
        ``no_header`` with a binary file, a dataset, a folder or an ``.npz``.
    """
    from .datasets import DATASETS

    p = Path(source)
    if (isinstance(source, str) and source in DATASETS) or p.is_dir() or (not p.exists() and _looks_like_name(source)):
        if no_header:
            raise TokembedError(f"{source}: no_header applies to word2vec text files, not to a dataset or a folder")
        return KeyedVectors.from_dataset(source, limit=limit)  # an unknown dataset name: DataError
    if binary is None:
        binary = p.suffix == ".bin"
    if sniff_vector_file(p, binary) == "npz":
        if no_header:
            raise TokembedError(f"{source}: no_header applies to word2vec text files, not to an .npz")
        kv = KeyedVectors.load(p)
        limit = _check_limit(limit)
        return kv if limit is None or limit >= len(kv) else _first(kv, limit)
    return KeyedVectors.load_word2vec_format(p, binary=binary, limit=limit, no_header=no_header)


def _first(kv: KeyedVectors, n: int) -> KeyedVectors:
    out = KeyedVectors.from_arrays(kv.index_to_key[:n], kv.vectors[:n])
    out.source = kv.source
    return out


# -- helpers --------------------------------------------------------------------------------------------------------
def _looks_like_name(source: object) -> bool:
    """A bare word (no folder separator, no suffix): reported as an unknown dataset name, not a missing file."""
    return isinstance(source, str) and bool(source) and "/" not in source and os.sep not in source \
        and "." not in source


def _frozen(arr: np.ndarray) -> np.ndarray:
    arr.flags.writeable = False
    return arr


def _unit(v: np.ndarray) -> np.ndarray:
    n = np.sqrt(np.dot(v, v))
    return v / n if n > 0 else v


def _cosine(u: np.ndarray, v: np.ndarray) -> float:
    """``u.v / (|u| |v|)`` in float64; 0.0 when either is zero."""
    u, v = u.astype(np.float64), v.astype(np.float64)
    den = np.sqrt(np.dot(u, u) * np.dot(v, v))
    return float(np.dot(u, v) / den) if den > 0 else 0.0


def _check_limit(limit: int | None) -> int | None:
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or limit < 0:
        raise TokembedError(f"limit must be None or an int >= 0, got {limit!r}")
    return int(limit)


def _check_restrict(restrict_vocab: int | None, n: int) -> int:
    if restrict_vocab is None:
        return n
    if isinstance(restrict_vocab, bool) or not isinstance(restrict_vocab, (int, np.integer)) or restrict_vocab < 1:
        raise TokembedError(f"restrict_vocab must be None or an int >= 1, got {restrict_vocab!r}")
    return min(int(restrict_vocab), n)


def _top_indices(scores: np.ndarray, topn: int) -> np.ndarray:
    """Indices of the ``topn`` largest scores, by decreasing score then increasing index (ties included exactly)."""
    n = len(scores)
    if topn < n:
        kth = np.partition(scores, n - topn)[n - topn]  # the topn-th largest value
        cand = np.flatnonzero(scores >= kth)
    else:
        cand = np.arange(n)
    order = np.lexsort((cand, -scores[cand]))
    return cand[order[:topn]]


def _dedupe(cls: type, keys: list[str], vectors: np.ndarray, path: Path) -> KeyedVectors:
    seen: dict[str, int] = {}
    keep = [i for i, k in enumerate(keys) if seen.setdefault(k, i) == i]
    if len(keep) != len(keys):
        warnings.warn(
            f"{path}: {len(keys) - len(keep)} repeated key(s) ignored (the first vector of each key is kept)",
            stacklevel=3,
        )
        keys = [keys[i] for i in keep]
        vectors = vectors[keep]
    return cls.from_arrays(keys, vectors, copy=False)
