"""``tokembed encode``: a corpus's token ids written to disk, streamed, in one of the layouts of
:mod:`tokembed.encoded` (which describes them and reads them back).

Documents are encoded in batches with :meth:`tokembed.Tokenizer.encode_ids` (the same ids as
``encode_batch(docs, add_special_tokens=False)``; the built-in tokenizers encode a batch on several threads) and
appended in order, so memory does not grow with the corpus. The folder is written under a temporary name and
renamed into place when complete (:class:`tokembed.runs.RunFolder`): an interrupted run leaves no folder with a
manifest.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import shutil
import struct
import tempfile
import time
import uuid
from dataclasses import dataclass, is_dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from .encoded import (
    ENCODE_FORMATS,
    MANIFEST,
    MANIFEST_FORMAT,
    MANIFEST_VERSION,
    MEGATRON_DTYPE_CODES,
    MEGATRON_MAGIC,
    TOKENIZER_FILE,
    end_of_text_id,
    id_dtype,
)
from .errors import TokembedError
from .io import atomic_write_json, dumps_json
from .runs import RunFolder

__all__ = ["EncodePartition", "EncodedPart", "EncodedParts", "EncodeSummary", "encode_corpus", "on_engine",
           "options_problem", "tokenizer_digest"]

_BATCH_CHARS = 1 << 22  # about 4 MB of text per encode_ids call
_BATCH_DOCS = 16384

@dataclass(frozen=True)
class EncodeSummary:
    """What :func:`encode_corpus` wrote: the folder, the counts, bytes of text read and the wall time in seconds."""

    folder: Path
    format: str
    documents: int
    tokens: int
    text_bytes: int
    seconds: float

    @property
    def mb_per_s(self) -> float:
        """Megabytes (10^6 bytes) of UTF-8 text encoded per second."""
        return self.text_bytes / 1e6 / self.seconds if self.seconds > 0 else 0.0


def tokenizer_digest(tokenizer: Any) -> str:
    """The SHA-256 (hex) of the tokenizer's saved JSON, as ``tokenizer.save(path)`` writes it (the JSON records
    its arrays file's own SHA-256, so the digest covers both). Equal tokenizers give equal digests."""
    with tempfile.TemporaryDirectory(prefix="tokembed-digest-") as tmp:
        path = Path(tmp) / TOKENIZER_FILE
        tokenizer.save(path)
        return hashlib.sha256(path.read_bytes()).hexdigest()


def options_problem(format: str, eot_id: int | None, vocab_size: int | None) -> tuple[str, str] | None:
    """``(option, why)``: which option (``"format"`` or ``"eot_id"``) cannot encode with a vocabulary of
    ``vocab_size`` entries (None: not known yet, the size-dependent rules are skipped) and why; or None. The rules
    of :func:`encode_corpus` that need no fitted tokenizer, so that a recipe's ``encode:`` is checked by validate
    with the same words, at the option's line."""
    eot = "the end-of-text id (--eot-id, eot_id: in a recipe)"
    if format not in ENCODE_FORMATS:
        return "format", f"format must be one of {', '.join(ENCODE_FORMATS)}, got {format!r}"
    if eot_id is not None and not (isinstance(eot_id, int) and not isinstance(eot_id, bool) and eot_id >= 0
                                   and (vocab_size is None or eot_id < vocab_size)):
        bound = f"in [0, {vocab_size - 1}]" if vocab_size is not None else ">= 0"
        return "eot_id", f"{eot} must be an id of the vocabulary, {bound}, got {eot_id!r}"
    if format == "tokembed" and eot_id is not None:  # it would be dropped without a word
        return "eot_id", (f"{eot} applies to the nanogpt and megatron formats; the tokembed layout keeps each "
                          "document's ids apart (offsets.npy) and writes no end-of-text id")
    if format == "nanogpt" and vocab_size is not None and id_dtype(vocab_size) != np.uint16:
        return "format", (f"the nanogpt format stores ids as uint16 (at most 65,535), but this tokenizer's "
                          f"vocabulary has {vocab_size:,} entries; use the tokembed or megatron format")
    return None


# -- writers ----------------------------------------------------------------------------------------------------
class _NpyAppender:
    """A 1-D ``.npy`` file written by appending: the header is reserved at the start and rewritten with the final
    length on :meth:`close` (a shape of up to 20 digits fits the same 128 header bytes)."""

    def __init__(self, path: Path, dtype: np.dtype):
        self.path, self.dtype, self.n = path, np.dtype(dtype), 0
        self.fh = open(path, "wb")
        self.header_len = self._write_header(10**19)

    def _write_header(self, n: int) -> int:
        self.fh.seek(0)
        np.lib.format.write_array_header_1_0(self.fh, {"descr": np.lib.format.dtype_to_descr(self.dtype),
                                                        "fortran_order": False, "shape": (n,)})
        return self.fh.tell()

    def append(self, arr: np.ndarray) -> None:
        self.fh.write(np.ascontiguousarray(arr, dtype=self.dtype).tobytes())
        self.n += int(arr.size)

    def close(self) -> None:
        end = self.fh.tell()
        if self._write_header(self.n) != self.header_len:  # pragma: no cover - cannot happen below 10**19 items
            raise TokembedError(f"{self.path}: the .npy header changed length")
        self.fh.seek(end)
        self.fh.close()


class _Writer:
    """Appends batches of ``(ids, lengths)`` in one of :data:`ENCODE_FORMATS` into ``folder``."""

    def __init__(self, folder: Path, fmt: str, dtype: np.dtype, eot: int | None):
        self.folder, self.fmt, self.dtype, self.eot = folder, fmt, dtype, eot
        self.documents = self.tokens = 0
        if fmt == "tokembed":
            self.ids = _NpyAppender(folder / "ids.npy", dtype)
            self.offsets = _NpyAppender(folder / "offsets.npy", np.int64)
            self.offsets.append(np.zeros(1, np.int64))
        else:
            self.bin = open(folder / "tokens.bin", "wb")
            if fmt == "megatron":  # lengths kept on disk until the index is written
                self.lengths = open(folder / ".lengths.tmp", "wb")

    def add(self, ids: np.ndarray, lengths: np.ndarray) -> None:
        if self.fmt == "tokembed":
            self.ids.append(ids)
            self.offsets.append(self.tokens + np.cumsum(lengths, dtype=np.int64))
        else:
            out, lens = ids, lengths
            if self.eot is not None:  # the end-of-text id after every document
                out = np.insert(ids, np.cumsum(lengths), self.eot)
                lens = lengths + 1
            self.bin.write(np.ascontiguousarray(out, dtype=self.dtype).tobytes())
            if self.fmt == "megatron":
                self.lengths.write(np.asarray(lens, dtype=np.int64).tobytes())
        self.documents += int(lengths.size)
        self.tokens += int(ids.size)

    def close(self) -> None:
        if self.fmt == "tokembed":
            self.ids.close()
            self.offsets.close()
            return
        self.bin.close()
        if self.fmt == "megatron":
            self.lengths.close()
            _write_megatron_index(self.folder / "tokens.idx", self.folder / ".lengths.tmp", self.dtype)
            (self.folder / ".lengths.tmp").unlink()


def _write_megatron_index(path: Path, lengths_path: Path, dtype: np.dtype, chunk: int = 1 << 22) -> None:
    """Megatron-LM's ``.idx`` (see the module docstring) for the sequence lengths stored in ``lengths_path``."""
    lengths = np.memmap(lengths_path, dtype=np.int64, mode="r") if lengths_path.stat().st_size else \
        np.zeros(0, np.int64)
    n = int(lengths.size)
    if n and int(lengths.max()) > np.iinfo(np.int32).max:
        raise TokembedError("megatron: a document has more than 2**31 - 1 tokens, which its index cannot hold")
    with open(path, "wb") as fh:
        fh.write(MEGATRON_MAGIC)
        fh.write(struct.pack("<Q", 1))
        fh.write(struct.pack("<B", MEGATRON_DTYPE_CODES[dtype.name]))
        fh.write(struct.pack("<Q", n))
        fh.write(struct.pack("<Q", n + 1))
        for start in range(0, n, chunk):
            fh.write(np.asarray(lengths[start:start + chunk], dtype=np.int32).tobytes())
        byte_start = 0
        for start in range(0, n, chunk):
            part = np.asarray(lengths[start:start + chunk], dtype=np.int64) * dtype.itemsize
            ends = np.cumsum(part) + byte_start
            fh.write((ends - part).tobytes())
            byte_start = int(ends[-1])
        for start in range(0, n + 1, chunk):
            fh.write(np.arange(start, min(n + 1, start + chunk), dtype=np.int64).tobytes())
    del lengths


# -- encoding a corpus ----------------------------------------------------------------------------------------
def _batches(documents: Iterable[str]) -> Iterable[tuple[list[str], int]]:
    """Documents in batches of about :data:`_BATCH_CHARS` characters, with each batch's UTF-8 size in bytes."""
    batch: list[str] = []
    chars = nbytes = 0
    for doc in documents:
        if not isinstance(doc, str):
            raise TokembedError(f"encode: a document is a {type(doc).__name__}, not a str")
        batch.append(doc)
        chars += len(doc)
        nbytes += len(doc.encode("utf-8", "surrogatepass"))
        if chars >= _BATCH_CHARS or len(batch) >= _BATCH_DOCS:
            yield batch, nbytes
            batch, chars, nbytes = [], 0, 0
    if batch:
        yield batch, nbytes


@dataclass(frozen=True)
class EncodedPart:
    """One partition's ids as :class:`EncodePartition` wrote them: ``PATH.ids`` (raw ids of the output dtype) and
    ``PATH.lengths`` (raw int64, one per document), with its counts and the UTF-8 bytes of text it encoded."""

    path: str
    documents: int
    tokens: int
    text_bytes: int


@dataclass
class EncodedParts:
    """Consecutive partitions' :class:`EncodedPart` in corpus order; ``merge`` joins the lists (an engine's ordered
    merge tree keeps the order)."""

    parts: list

    def merge(self, other: "EncodedParts") -> "EncodedParts":
        return EncodedParts(self.parts + other.parts)


@dataclass(frozen=True)
class EncodePartition:
    """The task of one partition on an engine's worker (:meth:`tokembed.engine.Engine.map_partitions`): read the
    partition's documents from ``corpus`` (a :class:`tokembed.corpus.Corpus`; a partition that carries its own
    ``docs`` is read from them), encode them in the batches of :func:`encode_corpus` and append each batch's ids
    and lengths to ``folder/part-NNNNN.ids`` / ``.lengths`` (raw arrays, written under a name of their own and
    renamed when complete, so a retried task never mixes with another attempt), returned as
    :class:`EncodedParts`. Memory: one batch, whatever the partition's size (a ``.gz`` file is one partition).
    With ``folder`` None (the engine's warm-up) nothing is written. Module-level, so Dask ships it by reference
    with the tokenizer pickled."""

    tokenizer: Any
    corpus: Any
    folder: str | None
    dtype: str

    def __call__(self, part: Any) -> EncodedParts:
        docs = getattr(part, "docs", None)
        docs = self.corpus.read_partition(part) if docs is None else docs
        if self.folder is None:
            for batch, _ in _batches(docs):
                self.tokenizer.encode_ids(batch)
            return EncodedParts([])
        stem = Path(self.folder) / f"part-{int(part.index):05d}"
        attempt = f".{os.getpid()}-{uuid.uuid4().hex[:12]}.tmp"
        tmp_ids, tmp_lengths = (stem.with_name(stem.name + ext + attempt) for ext in (".ids", ".lengths"))
        documents = tokens = nbytes = 0
        try:
            with open(tmp_ids, "wb") as f_ids, open(tmp_lengths, "wb") as f_lengths:
                for batch, size in _batches(docs):
                    ids, lengths = self.tokenizer.encode_ids(batch)
                    f_ids.write(np.ascontiguousarray(ids, dtype=self.dtype).tobytes())
                    f_lengths.write(np.ascontiguousarray(lengths, dtype=np.int64).tobytes())
                    documents, tokens, nbytes = documents + len(batch), tokens + int(np.size(ids)), nbytes + size
            os.replace(tmp_ids, stem.with_name(stem.name + ".ids"))
            os.replace(tmp_lengths, stem.with_name(stem.name + ".lengths"))
        finally:
            for tmp in (tmp_ids, tmp_lengths):
                tmp.unlink(missing_ok=True)
        return EncodedParts([EncodedPart(str(stem), documents, tokens, nbytes)])


def on_engine(engine: Any, corpus: Any, *, label: str = "encode",
              quiet: bool = True) -> Callable[[EncodePartition], EncodedParts]:
    """The ``map_partitions`` argument of :func:`encode_corpus` that encodes ``corpus`` (a
    :class:`tokembed.corpus.Corpus`, the same object given as its ``documents``) on ``engine``
    (:func:`tokembed.engine.open_engine`, ``"dask"``): each partition by :meth:`~tokembed.engine.Engine.map_partitions`,
    the engine's warm-up writing nothing. The corpus's files are named by absolute paths, so that a worker started
    in another folder opens the same files."""
    paths = getattr(corpus, "paths", None)
    if paths is not None and is_dataclass(corpus):
        corpus = replace(corpus, paths=tuple(Path(p).absolute() for p in paths))

    def run(task: EncodePartition) -> EncodedParts:
        if task.corpus is not None:
            task = replace(task, corpus=corpus)
        return engine.map_partitions(task, corpus, warm=replace(task, folder=None), label=label, quiet=quiet)

    return run


def encode_corpus(tokenizer: Any, documents: Iterable[str], out: str | os.PathLike, *, format: str = "tokembed",
                  eot_id: int | None = None, corpus: str = "", total_bytes: int | None = None,
                  progress: bool = True,
                  map_partitions: Callable[[EncodePartition], EncodedParts] | None = None) -> EncodeSummary:
    """Encode ``documents`` with a fitted tokenizer and write the ids to the folder ``out`` in ``format``.

    Parameters
    ----------
    tokenizer : tokembed.Tokenizer
        Fitted. No special token is added (``encode_ids``); ``nanogpt`` (and ``megatron`` when ``eot_id`` is given)
        put the end-of-text id between documents.
    documents : iterable of str
        Read once, streamed; :func:`tokembed.corpus.read_documents` reads corpus files by the recipe's rule
        (docs/recipes.md, "Documents").
    out : path
        The folder to write; replaced whole if it holds only what an earlier run wrote (as a run folder).
    format : {"tokembed", "nanogpt", "megatron"}
    eot_id : int, optional
        The id written after each document. Default for ``nanogpt``: :func:`end_of_text_id`; for ``megatron``:
        none appended; refused for ``tokembed``, whose offsets keep the documents apart.
    corpus : str
        A description of the corpus for the manifest.
    total_bytes : int, optional
        The corpus size in bytes, for the progress bar's total.
    progress : bool
        Show a progress bar (with MB/s) on a terminal.
    map_partitions : callable, optional
        Encode on an engine instead of this process's threads: called once with an :class:`EncodePartition`
        whose ``folder`` is a staging folder inside the output's temporary folder, it must return the
        :class:`EncodedParts` of every partition of ``documents`` (then a :class:`tokembed.corpus.Corpus`) in
        corpus order: :func:`on_engine` ``(engine, documents)`` on the Dask engine (the workers must see that
        folder: a shared file system). Each part is appended (read mapped, a million documents at a
        time) and deleted in turn: the same files as encoding here, and the parts' disk space until they are
        appended.

    Returns
    -------
    EncodeSummary

    Raises
    ------
    TokembedError
        An unknown format; ``nanogpt`` with a vocabulary above 65,536 entries (ids above 65,535) or with no
        end-of-text id; an ``eot_id`` outside the vocabulary, or given for ``tokembed``; an empty corpus. Nothing
        is left under ``out`` (the partial files go to ``<out>.incomplete``).
    """
    if isinstance(documents, str):
        raise TokembedError("encode: documents must be an iterable of str, got one str; wrap it in a list")
    vocab_size = int(tokenizer.get_vocab_size())
    dtype = id_dtype(vocab_size)
    problem = options_problem(format, eot_id, vocab_size)
    if problem is not None:
        raise TokembedError(f"encode: {problem[1]}")
    if format == "nanogpt":
        eot_id = end_of_text_id(tokenizer) if eot_id is None else eot_id
        if eot_id is None:
            raise TokembedError("encode: the nanogpt format puts an end-of-text id between documents, and this "
                                "tokenizer has no <|endoftext|> or eos token; give one with --eot-id ID (eot_id: in a "
                                "recipe)")
    if format == "megatron" and dtype != np.uint16:
        dtype = np.dtype(np.int32)  # Megatron reads int32 ids (its dtype code 4) beyond 16 bits
    if map_partitions is not None and not isinstance(documents, (list, tuple)) \
            and not callable(getattr(documents, "read_partition", None)):
        raise TokembedError("encode: encoding on an engine reads the corpus by partitions: documents must be a "
                            f"tokembed.corpus.Corpus (read_documents) or a list, not a {type(documents).__name__}")
    start = time.perf_counter()
    batches = _batches(documents)
    first = next(batches, None)  # before any file is made: an empty corpus leaves nothing behind
    if first is None:
        raise TokembedError(f"encode: the corpus{' ' + corpus if corpus else ''} holds no document (empty, or only "
                            "blank lines: docs/recipes.md#documents); nothing was written")
    bar = _progress_bar(total_bytes, progress and map_partitions is None)  # an engine shows its own

    def work(folder: Path) -> EncodeSummary:
        writer = _Writer(folder, format, dtype, eot_id)
        nbytes = 0
        try:
            if map_partitions is None:
                for batch, size in itertools.chain([first], batches):
                    ids, lengths = tokenizer.encode_ids(batch)
                    writer.add(np.asarray(ids), np.asarray(lengths, dtype=np.int64))
                    nbytes += size
                    if bar is not None:
                        bar.update(size)
            else:
                batches.close()  # read only to refuse an empty corpus: the workers read their partitions
                listed = isinstance(documents, (list, tuple))  # a list travels in its partitions, not whole
                nbytes = _append_parts(writer, map_partitions, EncodePartition(
                    tokenizer, None if listed else documents, str((folder / _PARTS).absolute()), dtype.name))
        finally:
            writer.close()
        tokenizer.save(folder / TOKENIZER_FILE)
        digest = hashlib.sha256((folder / TOKENIZER_FILE).read_bytes()).hexdigest()
        if format == "tokembed":
            vocab = [tokenizer.id_to_token(i) for i in range(vocab_size)]
            (folder / "vocab.json").write_text(dumps_json(vocab), encoding="utf-8")
        specials = [tokenizer.token_to_id(t) for t in getattr(tokenizer, "special_tokens_", ())]
        seconds = time.perf_counter() - start
        manifest = {
            "format": MANIFEST_FORMAT, "version": MANIFEST_VERSION, "layout": format, "dtype": dtype.name,
            "documents": writer.documents, "tokens": writer.tokens,
            "tokens_written": writer.tokens + (writer.documents if format != "tokembed" and eot_id is not None
                                               else 0),
            "eot_id": eot_id if format != "tokembed" else None,
            "vocab_size": vocab_size, "special_ids": sorted(int(i) for i in specials if i is not None),
            "tokenizer": {"file": TOKENIZER_FILE, "type": tokenizer.name, "sha256": digest},
            "corpus": {"source": corpus, "bytes": nbytes},
        }
        atomic_write_json(folder / MANIFEST, manifest)  # last: a folder with a manifest is complete
        return EncodeSummary(Path(out), format, writer.documents, writer.tokens, nbytes, seconds)

    try:
        return RunFolder(Path(out), kind="encode").write(work)
    finally:
        if bar is not None:
            bar.close()


_PARTS = ".parts"  # the staging folder of an engine's parts, inside the output's temporary folder
_APPEND_DOCS = 1 << 20  # documents of a part read and appended at a time


def _append_parts(writer: _Writer, map_partitions: Callable[[EncodePartition], EncodedParts],
                  task: EncodePartition) -> int:
    """Run ``task`` on every partition through ``map_partitions``, then append the parts in order, each read
    mapped, :data:`_APPEND_DOCS` documents at a time, and deleted once appended; the bytes of text encoded. On any
    failure the staging folder is removed (the parts are of no use to a later run)."""
    staging = Path(task.folder)
    staging.mkdir()
    try:
        done = map_partitions(task)
        nbytes = 0
        for part in done.parts:
            ids_path, lengths_path = Path(part.path + ".ids"), Path(part.path + ".lengths")
            ids = np.memmap(ids_path, dtype=task.dtype, mode="r") if part.tokens else np.zeros(0, task.dtype)
            lengths = np.memmap(lengths_path, dtype=np.int64, mode="r") if part.documents else np.zeros(0, np.int64)
            at = 0
            for d0 in range(0, part.documents, _APPEND_DOCS):
                lens = np.array(lengths[d0:d0 + _APPEND_DOCS])
                stop = at + int(lens.sum())
                writer.add(np.array(ids[at:stop]), lens)
                at = stop
            del ids, lengths
            ids_path.unlink()
            lengths_path.unlink()
            nbytes += part.text_bytes
    finally:
        _remove_parts(staging)
    return nbytes


def _remove_parts(staging: Path, tries: int = 20) -> None:
    """Remove the staging folder, again while a worker that was still encoding when the run failed or was
    interrupted keeps adding a part to it (for up to about 2 s)."""
    for _ in range(tries):
        shutil.rmtree(staging, ignore_errors=True)
        if not staging.exists():
            return
        time.sleep(0.1)


def _progress_bar(total: int | None, show: bool) -> Any:
    if not show:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return None
    return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1000, desc="encode", mininterval=0.5,
                leave=False, disable=None)
