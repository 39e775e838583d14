"""A corpus's token ids on disk: the layouts ``tokembed encode`` writes (:mod:`tokembed.encode`) and what
:meth:`tokembed.TokenSequences.open` maps back.

Three layouts (``format``), each in its own folder with a manifest, ``encoded.json``, written last:

``tokembed`` (default)
    ``ids.npy`` (every document's ids one after the other; ``uint16`` when the vocabulary has at most 65,536
    entries, else ``uint32``), ``offsets.npy`` (``int64``, ``n_documents + 1`` entries: document ``i`` is
    ``ids[offsets[i]:offsets[i + 1]]``, as a CSR matrix's ``indptr``), ``vocab.json`` (the token of each id, in id
    order) and the tokenizer itself (``tokenizer.tokembed.json``, with its ``.npz`` where it has one): the folder
    alone is enough to read the ids and to encode more text the same way.
``nanogpt``
    ``tokens.bin``: one flat ``uint16`` array, the end-of-text id after every document, as nanoGPT's
    ``data/*/prepare.py`` writes ``train.bin`` (read it with ``numpy.memmap(path, dtype=numpy.uint16, mode="r")``).
    Refused when an id does not fit in 16 bits or when no end-of-text id is known.
``megatron``
    ``tokens.bin`` + ``tokens.idx``: Megatron-LM's indexed dataset (``MMIDIDX`` index, version 1), one sequence per
    document, read by ``megatron.core.datasets.indexed_dataset.IndexedDataset("DIR/tokens")``. The index is, in
    order: the 9-byte magic ``MMIDIDX\\x00\\x00``, the version (``<Q`` = 1), the dtype code (``<B``: 8 for
    ``uint16``, 4 for ``int32``), the sequence count (``<Q``), the document count (``<Q``, documents + 1), then the
    sequence lengths (``int32``), the sequence byte offsets into ``.bin`` (``int64``) and the document indices
    (``int64``, ``0, 1, ..., n``). The end-of-text id is appended to each document only when given.

The manifest names the format, the dtype, the counts, the corpus, and the tokenizer's digest (the SHA-256 of its
saved JSON, :func:`tokenizer_digest`), so a recipe can check that a folder was made by the tokenizer it names.

"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from .errors import ArtifactError
from .io import read_json
from .params import Interval, ListOf, Options, parameter_errors

__all__ = ["ENCODE_FORMATS", "MANIFEST", "MANIFEST_FORMAT", "MANIFEST_VERSION", "TOKENIZER_FILE", "id_dtype",
           "end_of_text_id", "read_manifest", "open_arrays", "MEGATRON_DTYPE_CODES", "MEGATRON_MAGIC"]

ENCODE_FORMATS = ("tokembed", "nanogpt", "megatron")
MANIFEST = "encoded.json"
MANIFEST_FORMAT = "tokembed-encoded"
MANIFEST_VERSION = 1
TOKENIZER_FILE = "tokenizer.tokembed.json"
#: Megatron-LM's dtype codes in an ``.idx`` header (its ``DType`` enum) for the dtypes we write.
MEGATRON_DTYPE_CODES = {"uint16": 8, "int32": 4}
MEGATRON_MAGIC = b"MMIDIDX\x00\x00"
_UINT16_IDS = 65536  # ids 0..65535


def id_dtype(vocab_size: int) -> np.dtype:
    """``uint16`` when every id of a ``vocab_size`` vocabulary fits (at most 65,536 entries), else ``uint32``."""
    return np.dtype(np.uint16) if vocab_size <= _UINT16_IDS else np.dtype(np.uint32)


def end_of_text_id(tokenizer: Any) -> int | None:
    """The id of the tokenizer's end-of-text token: ``<|endoftext|>`` (GPT-2), else its ``eos_token``, when the
    vocabulary has it; None otherwise."""
    for token in ("<|endoftext|>", getattr(tokenizer, "eos_token", None)):
        if isinstance(token, str) and token:
            i = tokenizer.token_to_id(token)
            if i is not None:
                return int(i)
    return None


def read_manifest(folder: str | os.PathLike) -> dict[str, Any]:
    """The manifest of an encoded folder.

    Raises
    ------
    ArtifactError
        When the folder has no manifest (not written by ``tokembed encode``, or an interrupted run), or it is not
        one this version reads.
    """
    path = Path(folder) / MANIFEST
    if not Path(folder).exists():
        raise ArtifactError(f"{folder}: no such folder (an encoded corpus is the folder tokembed encode --out wrote)")
    if not Path(folder).is_dir():
        raise ArtifactError(f"{folder}: is a file; an encoded corpus is the folder tokembed encode --out wrote")
    if not path.is_file():
        hint = " (an interrupted tokembed encode leaves its files in DIR.incomplete, without it)"
        raise ArtifactError(f"{folder}: not an encoded corpus: no {MANIFEST}{hint}")
    data = read_json(path, what="manifest")
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
        raise ArtifactError(f"{path}: not a tokembed encoded-corpus manifest")
    if data.get("version") != MANIFEST_VERSION:
        raise ArtifactError(f"{path}: manifest version {data.get('version')!r}; this tokembed reads "
                            f"{MANIFEST_VERSION}")
    return data


def open_arrays(folder: str | os.PathLike) -> tuple[dict[str, Any], np.ndarray, np.ndarray, list[str]]:
    """The manifest, the memory-mapped ``ids`` and ``offsets`` and the vocabulary of a ``tokembed``-layout folder.

    Raises
    ------
    ArtifactError
        Not an encoded folder, another layout, or files that disagree with the manifest.
    """
    folder = Path(folder)
    manifest = read_manifest(folder)
    if manifest.get("layout") != "tokembed":
        raise ArtifactError(f"{folder}: holds the {manifest.get('layout')!r} layout; TokenSequences.open reads the "
                            "tokembed layout (ids.npy + offsets.npy)")
    _check_manifest_fields(folder, manifest)
    try:
        ids = np.load(folder / "ids.npy", mmap_mode="r", allow_pickle=False)
        offsets = np.load(folder / "offsets.npy", mmap_mode="r", allow_pickle=False)
        vocab = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ArtifactError(f"{folder}: cannot read the encoded corpus: {exc}") from None
    if (ids.ndim != 1 or offsets.ndim != 1 or ids.dtype.name != manifest.get("dtype")
            or ids.size != manifest.get("tokens") or offsets.size != manifest.get("documents", -2) + 1
            or (offsets.size and (int(offsets[0]) != 0 or int(offsets[-1]) != ids.size))
            or offsets.dtype != np.int64
            or not isinstance(vocab, list) or len(vocab) != manifest.get("vocab_size")):
        raise ArtifactError(f"{folder}: ids.npy, offsets.npy or vocab.json do not match {MANIFEST} (a changed or "
                            "truncated file)")
    if not all(isinstance(t, str) for t in vocab):
        raise ArtifactError(f"{folder}: vocab.json must be a list of str (the token of each id)")
    return manifest, ids, offsets, vocab


#: What a manifest's fields must be (checked before the arrays are opened), declared as parameters are.
_MANIFEST_FIELDS = {
    "documents": Interval(int, 0, None), "tokens": Interval(int, 0, None), "vocab_size": Interval(int, 0, None),
    "dtype": Options("uint16", "uint32"), "special_ids": ListOf(Interval(int, 0, None)),
}


def _check_manifest_fields(folder: Path, manifest: dict[str, Any]) -> None:
    """The manifest's counts are ints, its dtype one that ``tokembed encode`` writes, and its special ids ids of
    the vocabulary, so that a changed manifest is an :class:`ArtifactError`, not a TypeError later."""
    fields = {**dict.fromkeys(_MANIFEST_FIELDS), "special_ids": [], **manifest}  # a missing field is invalid
    bad = [e.param for e in parameter_errors("", _MANIFEST_FIELDS, fields)]
    if "vocab_size" not in bad and "special_ids" not in bad and any(i >= fields["vocab_size"]
                                                                    for i in fields["special_ids"]):
        bad.append("special_ids")
    if bad:
        raise ArtifactError(f"{folder}: {MANIFEST} has an invalid {', '.join(bad)} (a changed file): counts are "
                            "ints >= 0, the dtype uint16 or uint32, special_ids a list of ids of the vocabulary")
