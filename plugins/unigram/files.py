"""File formats of the unigram plugin: SentencePiece ``.model`` files and Hugging Face ``tokenizer.json``.

SentencePiece ``.model``
    A serialized protobuf ``ModelProto`` (schema in :mod:`tokembed.plugins.unigram._proto`): the pieces with their
    scores and types, the ``TrainerSpec`` (model type, byte fallback, the special pieces) and the
    ``NormalizerSpec`` (rule name and its compiled table, ``add_dummy_prefix``, ``remove_extra_whitespaces``).
    Unigram and BPE models are read; a file read is written back unchanged, and a trained tokenizer is written
    with the settings it was trained with, so that ``sentencepiece.SentencePieceProcessor`` loads it and encodes
    as tokembed does.
``tokenizer.json`` (Hugging Face ``tokenizers``)
    A ``Unigram`` model (``vocab`` as ``[piece, score]`` pairs, ``unk_id``, ``byte_fallback``), the normalizer
    (``Precompiled`` with the rule's table, then SentencePiece's whitespace handling as ``Replace`` and
    ``Strip``), the ``Metaspace`` pre-tokenizer and decoder, and the special pieces as added tokens. This is how
    Hugging Face converts a SentencePiece model; its pre-tokenizer splits the text at spaces before the model, so a
    model whose pieces hold an inner ``▁`` encodes differently there.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from typing import Any

import numpy as np

from tokembed.errors import ArtifactError, TokembedError
from tokembed.io import atomic_write_bytes, atomic_write_text

from . import _proto as P
from .model import SPACE, NormalizerSettings, SentencePieceModel

__all__ = ["read_model_file", "model_proto_bytes", "write_model_file", "read_hf_json", "write_hf_json"]


def read_model_file(path: str | os.PathLike) -> SentencePieceModel:
    """Read a SentencePiece ``.model`` file.

    Raises
    ------
    ArtifactError
        If the file cannot be read, is not a ModelProto, or holds a model tokembed cannot encode with.
    """
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise ArtifactError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return SentencePieceModel.from_proto_bytes(data, str(path))


def model_proto_bytes(model: SentencePieceModel, trainer: dict[str, Any] | None = None) -> bytes:
    """The serialized ``ModelProto`` of ``model``: the file it was read from, unchanged, or one built from the
    model and the ``trainer`` settings (TrainerSpec field names: ``vocab_size``, ``character_coverage``, ...)."""
    if model.proto:
        return model.proto
    classes = P.message_classes()
    msg = classes["ModelProto"]()
    for piece, score, kind in zip(model.pieces, model.scores.tolist(), model.types.tolist()):
        sp = msg.pieces.add()
        sp.piece = piece
        sp.score = score
        sp.type = int(kind)
    ts = msg.trainer_spec
    ts.model_type = P.MODEL_UNIGRAM if model.model_type == "unigram" else P.MODEL_BPE
    ts.vocab_size = len(model.pieces)
    ts.byte_fallback = model.byte_fallback
    ts.unk_surface = model.unk_surface
    ts.treat_whitespace_as_suffix = model.normalizer.treat_whitespace_as_suffix
    # the ids of <unk>, <s>, </s> and <pad>: SentencePiece reads them to tell the pieces apart
    ids = {"unk": model.unk_id, "bos": -1, "eos": -1, "pad": -1}
    for key, value in (trainer or {}).items():
        if key in ("bos_piece", "eos_piece", "pad_piece", "unk_piece"):
            setattr(ts, key, value)
            ids[key[:3]] = model.tok2id.get(value, -1)
        elif value is not None:
            setattr(ts, key, value)
    for key, value in ids.items():
        setattr(ts, f"{key}_id", value)
    ns = msg.normalizer_spec
    norm = model.normalizer
    ns.name = norm.name
    ns.precompiled_charsmap = norm.charsmap
    ns.add_dummy_prefix = norm.add_dummy_prefix
    ns.remove_extra_whitespaces = norm.remove_extra_whitespaces
    ns.escape_whitespaces = norm.escape_whitespaces
    return msg.SerializeToString(deterministic=True)


def write_model_file(path: str | os.PathLike, data: bytes) -> None:
    """Write a serialized ``ModelProto`` atomically."""
    atomic_write_bytes(path, data)


# ----------------------------------------------------------------------------------------------------------------
# Hugging Face tokenizer.json


def _stages(spec: Any) -> list[dict]:
    if not isinstance(spec, dict):
        return []
    if spec.get("type") == "Sequence":
        key = "normalizers" if "normalizers" in spec else "pretokenizers"
        return [s for s in spec.get(key, []) if isinstance(s, dict)]
    return [spec]


def read_hf_json(path: str | os.PathLike) -> tuple[SentencePieceModel, list[str]]:
    """The ``Unigram`` model of a ``tokenizer.json`` and its special added tokens.

    The normalizer may be ``Precompiled`` (its table is used), ``Replace`` of runs of spaces, ``Strip`` or nothing;
    the pre-tokenizer ``Metaspace`` (``prepend_scheme`` ``always``/``first`` adds the dummy prefix) or nothing.

    Raises
    ------
    ArtifactError
        If the file is not a tokenizer.json with a Unigram model, or uses a stage tokembed cannot mirror.
    """
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as exc:
        raise ArtifactError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ArtifactError(f"{path}: not JSON: {exc}") from None
    model = data.get("model") if isinstance(data, dict) else None
    if not isinstance(model, dict) or model.get("type") != "Unigram":
        raise ArtifactError(f"{path}: not a Hugging Face tokenizer.json with a Unigram model")
    vocab = model.get("vocab")
    if not isinstance(vocab, list) or not vocab:
        raise ArtifactError(f"{path}: model.vocab must be a non-empty list of [piece, score] pairs")
    for i, v in enumerate(vocab):
        if not (isinstance(v, list) and len(v) == 2 and isinstance(v[0], str) and isinstance(v[1], (int, float))
                and not isinstance(v[1], bool)):
            raise ArtifactError(f"{path}: model.vocab[{i}] must be a [piece, score] pair of a string and a number, "
                                f"got {json.dumps(v, ensure_ascii=False)[:80]}")
    pieces = [v[0] for v in vocab]
    with np.errstate(over="ignore"):  # a score beyond float32 becomes infinite, which the model refuses
        scores = np.array([v[1] for v in vocab], np.float64).astype(np.float32)
    byte_fallback = bool(model.get("byte_fallback", False))
    unk_id = model.get("unk_id")
    if unk_id is not None and not (isinstance(unk_id, int) and not isinstance(unk_id, bool)
                                   and 0 <= unk_id < len(pieces)):
        raise ArtifactError(f"{path}: model.unk_id must be null or an id of model.vocab (0 to {len(pieces) - 1}), "
                            f"got {unk_id!r}")
    added = data.get("added_tokens") or []
    if not isinstance(added, list) or not all(isinstance(t, dict) and isinstance(t.get("content"), str)
                                              for t in added):
        raise ArtifactError(f"{path}: added_tokens must be a list of objects, each with a string content")
    specials = [t["content"] for t in added if t.get("special")]
    types = np.full(len(pieces), P.PIECE_NORMAL, np.int8)
    for i, p in enumerate(pieces):
        if byte_fallback and len(p) == 6 and p.startswith("<0x") and p.endswith(">"):
            types[i] = P.PIECE_BYTE
        if p in specials:
            types[i] = P.PIECE_CONTROL
    if isinstance(unk_id, int) and 0 <= unk_id < len(pieces):
        types[unk_id] = P.PIECE_UNKNOWN
    charsmap, name = b"", "identity"
    remove_extra = False
    for stage in _stages(data.get("normalizer")):
        kind = stage.get("type")
        if kind == "Precompiled":
            try:
                charsmap = base64.b64decode(stage.get("precompiled_charsmap") or "", validate=True)
            except (binascii.Error, TypeError):
                raise ArtifactError(f"{path}: the normalizer's precompiled_charsmap is not base64 text") from None
            name = "custom" if charsmap else "identity"
        elif kind == "Replace" and stage.get("content") == " ":
            remove_extra = True
        elif kind == "Strip":
            remove_extra = True
        else:
            raise ArtifactError(f"{path}: the normalizer {kind!r} has no SentencePiece equivalent in tokembed")
    add_prefix = True
    for stage in _stages(data.get("pre_tokenizer")):
        if stage.get("type") == "Metaspace":
            scheme = stage.get("prepend_scheme", "always" if stage.get("add_prefix_space", True) else "never")
            add_prefix = scheme != "never"
        else:
            raise ArtifactError(f"{path}: the pre-tokenizer {stage.get('type')!r} has no SentencePiece equivalent "
                                "in tokembed (Metaspace is read)")
    normalizer = NormalizerSettings(name=name, charsmap=charsmap, add_dummy_prefix=add_prefix,
                                    remove_extra_whitespaces=remove_extra)
    try:
        return SentencePieceModel(pieces, scores, types, "unigram", normalizer, byte_fallback), specials
    except ValueError as exc:
        raise ArtifactError(f"{path}: {exc}") from None


def write_hf_json(path: str | os.PathLike, model: SentencePieceModel) -> None:
    """Write a ``tokenizer.json`` with a ``Unigram`` model that ``tokenizers.Tokenizer.from_file`` reads.

    Raises
    ------
    TokembedError
        If the model is a BPE model (Hugging Face's ``Unigram`` is the only model written here).
    """
    if model.model_type != "unigram":
        raise TokembedError("unigram: to_hf_json writes Unigram models; this one is a SentencePiece BPE model")
    norm = model.normalizer
    normalizers: list[dict] = []
    if norm.charsmap:
        normalizers.append({"type": "Precompiled",
                            "precompiled_charsmap": base64.b64encode(norm.charsmap).decode("ascii")})
    if norm.remove_extra_whitespaces:
        normalizers.append({"type": "Strip", "strip_left": True, "strip_right": True})
        normalizers.append({"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "})
    scheme = "always" if norm.add_dummy_prefix else "never"
    metaspace = {"type": "Metaspace", "replacement": SPACE, "prepend_scheme": scheme, "split": True}
    added = [{"id": i, "content": p, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
              "special": True} for i, p in enumerate(model.pieces) if model.is_special[i]]
    data = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None if not normalizers else (normalizers[0] if len(normalizers) == 1 else
                                                     {"type": "Sequence", "normalizers": normalizers}),
        "pre_tokenizer": metaspace,
        "post_processor": None,
        "decoder": dict(metaspace),
        "model": {"type": "Unigram", "unk_id": model.unk_id if model.unk_id >= 0 else None,
                  "vocab": [[p, float(s)] for p, s in zip(model.pieces, model.scores.tolist())],
                  "byte_fallback": bool(model.byte_fallback)},
    }
    atomic_write_text(path, json.dumps(data, ensure_ascii=False, indent=2) + "\n")
