"""A SentencePiece model ready to encode and decode: pieces, scores, types, the normalizer and the model type.

:class:`SentencePieceModel` holds what a ``.model`` file holds and builds the arrays the kernels read (the double
array of the pieces, the normalization rule, kinds and scores). Encoding a batch is one kernel call
(:func:`~tokembed.plugins.unigram._kernels_encode.encode_docs`); decoding follows ``SentencePieceProcessor::Decode``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from tokembed.components import check_token_ids
from tokembed.errors import TokembedError
from tokembed.text.scan import to_original

from . import _proto as P
from ._charsmap import build_trie, decode_charsmap

__all__ = ["SentencePieceModel", "NormalizerSettings", "SPACE", "byte_piece"]

#: SentencePiece's whitespace mark, U+2581 LOWER ONE EIGHTH BLOCK.
SPACE = "\u2581"
#: Score penalty of an unknown character below the smallest piece score (SentencePiece's ``kUnkPenalty``).
UNK_PENALTY = 10.0

_KIND_OF_TYPE = np.array([0, 0, 1, 2, 3, 4, 5], np.int8)  # proto type (1..6) -> KIND_*


def byte_piece(b: int) -> str:
    """The byte-fallback piece of byte ``b``: ``<0x41>`` for 65."""
    return f"<0x{b:02X}>"


@dataclass(frozen=True)
class NormalizerSettings:
    """SentencePiece's ``NormalizerSpec`` (and the one ``TrainerSpec`` field the normalizer reads).

    ``charsmap`` is the ``precompiled_charsmap`` blob (empty: no rule); ``name`` the rule's name as recorded.
    """

    name: str = "identity"
    charsmap: bytes = b""
    add_dummy_prefix: bool = True
    remove_extra_whitespaces: bool = True
    escape_whitespaces: bool = True
    treat_whitespace_as_suffix: bool = False


@dataclass
class SentencePieceModel:
    """Pieces in id order with their float32 scores and SentencePiece types, and how text is prepared.

    Parameters
    ----------
    pieces : list of str
    scores : array of float32, shape (n,)
    types : array of int8, shape (n,)
        ``ModelProto.SentencePiece.Type`` values: 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused,
        6 byte.
    model_type : {"unigram", "bpe"}
    normalizer : NormalizerSettings
    byte_fallback : bool
        Unknown characters become their UTF-8 bytes (the 256 ``<0xNN>`` pieces must exist).
    unk_surface : str
        What ``decode`` writes for the unknown piece (SentencePiece's default ``" \\u2047 "``).
    proto : bytes
        The serialized ``ModelProto`` this model was read from (kept so that writing it back keeps every field);
        empty for a trained model.

    Raises
    ------
    ValueError
        If the pieces are inconsistent as SentencePiece checks them: an empty or repeated piece, a NUL in a piece,
        no unknown piece and no byte fallback, two unknown pieces, byte pieces without byte fallback or not all
        256 of them, a score that is NaN or infinite.
    """

    pieces: list[str]
    scores: np.ndarray
    types: np.ndarray
    model_type: str = "unigram"
    normalizer: NormalizerSettings = field(default_factory=NormalizerSettings)
    byte_fallback: bool = False
    unk_surface: str = " \u2047 "
    proto: bytes = b""

    def __post_init__(self) -> None:
        self.pieces = [str(p) for p in self.pieces]
        self.scores = np.ascontiguousarray(self.scores, np.float32)
        self.types = np.ascontiguousarray(self.types, np.int8)
        n = len(self.pieces)
        if self.scores.shape != (n,) or self.types.shape != (n,):
            raise ValueError(f"{n} pieces but {self.scores.shape[0]} scores and {self.types.shape[0]} types")
        if self.model_type not in ("unigram", "bpe"):
            raise ValueError(f"model type {self.model_type!r}: tokembed reads unigram and bpe models")
        if not np.isfinite(self.scores).all():
            bad = int(np.flatnonzero(~np.isfinite(self.scores))[0])
            raise ValueError(f"piece {bad} ({self.pieces[bad]!r}) has the score {float(self.scores[bad])}: a piece "
                             "score must be a finite number (a float32)")
        if ((self.types < 1) | (self.types > 6)).any():
            bad = int(np.flatnonzero((self.types < 1) | (self.types > 6))[0])
            raise ValueError(f"piece {bad} has the unknown type {int(self.types[bad])}")
        self.kinds = _KIND_OF_TYPE[self.types]
        self.tok2id: dict[str, int] = {}
        for i, p in enumerate(self.pieces):
            if not p:
                raise ValueError(f"piece {i} is empty")
            if "\x00" in p:
                raise ValueError(f"piece {i} ({p!r}) holds a NUL character")
            if p in self.tok2id:
                raise ValueError(f"piece {i} repeats piece {self.tok2id[p]} ({p!r})")
            self.tok2id[p] = i
        unk = np.flatnonzero(self.types == P.PIECE_UNKNOWN)
        if unk.size > 1:
            raise ValueError(f"two unknown pieces: {int(unk[0])} and {int(unk[1])}")
        self.unk_id = int(unk[0]) if unk.size else -1
        if self.unk_id < 0 and not self.byte_fallback:
            raise ValueError("no unknown piece (type UNKNOWN) and no byte fallback")
        byte_rows = np.flatnonzero(self.types == P.PIECE_BYTE)
        if byte_rows.size and not self.byte_fallback:
            raise ValueError(f"byte piece {self.pieces[int(byte_rows[0])]!r} although byte_fallback is false")
        self.byte_ids = np.full(256, -1, np.int64)
        for i in byte_rows.tolist():
            p = self.pieces[i]
            b = int(p[3:5], 16) if len(p) == 6 and p.startswith("<0x") and p.endswith(">") else -1
            if b < 0 or byte_piece(b) != p:
                raise ValueError(f"byte piece {i} ({p!r}) is not of the form <0xNN>")
            self.byte_ids[b] = i
        if self.byte_fallback and (self.byte_ids < 0).any():
            missing = int(np.flatnonzero(self.byte_ids < 0)[0])
            raise ValueError(f"byte_fallback is true but the byte piece {byte_piece(missing)} is missing")
        normal = self.types == P.PIECE_NORMAL
        self.min_score = float(self.scores[normal].min()) if normal.any() else float(np.finfo(np.float32).max)
        self.unk_score = float(np.float32(self.min_score) - np.float32(UNK_PENALTY))
        self.itos = np.array(self.pieces, dtype=object)
        self.is_special = np.isin(self.types, (P.PIECE_UNKNOWN, P.PIECE_CONTROL))
        self._build_tables()

    # -- tables ---------------------------------------------------------------------------------------------------
    def _build_tables(self) -> None:
        from ._kernels_encode import F_DROPOUT, F_UNK_SCORE, N_FPARAMS, N_PARAMS, P_ADD_DUMMY_PREFIX, \
            P_BYTE_FALLBACK, P_ESCAPE_WHITESPACES, P_MODEL_TYPE, P_REMOVE_EXTRA_WHITESPACES, \
            P_TREAT_WHITESPACE_AS_SUFFIX, P_UNK_ID

        if self.model_type == "unigram":
            in_trie = np.isin(self.types, (P.PIECE_NORMAL, P.PIECE_USER_DEFINED, P.PIECE_UNUSED))
        else:
            in_trie = np.ones(len(self.pieces), bool)
        ids = np.flatnonzero(in_trie).tolist()
        self.units = build_trie([self.pieces[i].encode("utf-8") for i in ids], ids)
        user = np.flatnonzero(self.types == P.PIECE_USER_DEFINED).tolist()
        self.user_units = build_trie([self.pieces[i].encode("utf-8") for i in user], user) if user else \
            np.zeros(0, np.uint32)
        self.charsmap_units, self.replacements = decode_charsmap(self.normalizer.charsmap)
        self.has_internal_space = any(
            SPACE in (p[1:] if p.startswith(SPACE) else p)
            for p, t in zip(self.pieces, self.types.tolist()) if t not in (P.PIECE_CONTROL, P.PIECE_UNKNOWN,
                                                                             P.PIECE_BYTE))
        params = np.zeros(N_PARAMS, np.int64)
        params[P_MODEL_TYPE] = 0 if self.model_type == "unigram" else 1
        params[P_UNK_ID] = self.unk_id
        params[P_BYTE_FALLBACK] = int(self.byte_fallback)
        norm = self.normalizer
        params[P_ADD_DUMMY_PREFIX] = int(norm.add_dummy_prefix)
        params[P_REMOVE_EXTRA_WHITESPACES] = int(norm.remove_extra_whitespaces)
        params[P_ESCAPE_WHITESPACES] = int(norm.escape_whitespaces)
        params[P_TREAT_WHITESPACE_AS_SUFFIX] = int(norm.treat_whitespace_as_suffix)
        self.params = params
        fparams = np.zeros(N_FPARAMS, np.float64)
        fparams[F_UNK_SCORE] = self.unk_score
        fparams[F_DROPOUT] = 0.0
        self.fparams = fparams

    # -- encoding -------------------------------------------------------------------------------------------------
    def encode_many(self, texts: Sequence[str], dropout: float = 0.0, seed: int = 0
                    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Encode texts as SentencePiece does (normalize, segment, byte fallback or merged unknowns), in one
        kernel call.

        Parameters
        ----------
        texts : sequence of str
        dropout : float
            BPE models only: BPE-dropout probability of each merge.
        seed : int
            Seed of the dropout draws.

        Returns
        -------
        list of (ids, offsets)
            Per text: ids int32 of shape (n,) and offsets int64 of shape (n, 2), code-point spans into the text.
        """
        ids, spans, tok_offsets, changed = self._encode_packed(texts, dropout, seed)
        to_original(spans, tok_offsets, changed)
        bounds = tok_offsets.tolist()
        return [(ids[lo:hi], spans[lo:hi]) for lo, hi in zip(bounds[:-1], bounds[1:])]

    def encode_ids(self, texts: Sequence[str], spans: bool = False
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """What :meth:`encode_many` gives, packed: ``(ids int32 (n_tokens,), lengths int64 (n_texts,), spans int64
        (n_tokens, 2))``, text ``i`` owning the next ``lengths[i]`` tokens; ``spans`` is None unless asked (the
        offsets are then not mapped back)."""
        ids, offsets, tok_offsets, changed = self._encode_packed(texts, 0.0, 0)
        n = int(tok_offsets[-1])
        if not spans:
            return ids[:n].copy(), np.diff(tok_offsets), None
        offsets = offsets[:n].copy()
        to_original(offsets, tok_offsets, changed)
        return ids[:n].copy(), np.diff(tok_offsets), offsets

    def _encode_packed(self, texts: Sequence[str], dropout: float, seed: int):
        """One kernel call over ``texts``: ids, spans and per-text token offsets (CSR), and the surrogate repairs
        applied, as ``(text index, NormalizedText)`` for :func:`tokembed.text.scan.to_original`."""
        from tokembed.text import repair_surrogates

        from ._kernels_encode import F_DROPOUT, P_SEED, encode_docs

        changed = []
        parts = []
        for d, text in enumerate(texts):
            try:
                data = text.encode("utf-8")
            except UnicodeEncodeError:
                nt = repair_surrogates(text)
                data = nt.normalized.encode("utf-8")
                changed.append((d, nt))
            parts.append(data)
        n_docs = len(parts)
        doc_offsets = np.zeros(n_docs + 1, np.int64)
        np.cumsum(np.fromiter(map(len, parts), np.int64, n_docs), out=doc_offsets[1:])
        buf = np.frombuffer(b"".join(parts) or b"\x00", np.uint8)
        cap = int(doc_offsets[-1]) + 4 * n_docs + 16
        ids = np.empty(cap, np.int32)
        spans = np.empty((cap, 2), np.int64)
        tok_offsets = np.zeros(n_docs + 1, np.int64)
        params = self.params
        fparams = self.fparams
        if dropout or seed:
            params = params.copy()
            params[P_SEED] = np.int64(np.uint64(seed & 0xFFFFFFFFFFFFFFFF).astype(np.int64))
            fparams = fparams.copy()
            fparams[F_DROPOUT] = float(dropout)
        done = 0
        while True:
            done = encode_docs(buf, doc_offsets, done, self.units, self.scores, self.kinds, self.byte_ids,
                               self.charsmap_units, self.replacements, self.user_units, params, fparams, ids, spans,
                               tok_offsets)
            if done >= n_docs:
                break
            cap *= 2
            ids = _grown(ids, cap)
            grown = np.empty((cap, 2), np.int64)
            grown[: spans.shape[0]] = spans
            spans = grown
        return ids, spans, tok_offsets, changed

    def normalize(self, text: str) -> str:
        """The normalized text SentencePiece segments (``▁`` for spaces, the rule applied)."""
        from ._kernels_encode import normalize_text

        buf = np.frombuffer(text.encode("utf-8", "replace") or b"", np.uint8)
        norm, _ = normalize_text(buf, self.charsmap_units, self.replacements, self.user_units, self.params)
        return norm.tobytes().decode("utf-8", "replace")

    # -- decoding -------------------------------------------------------------------------------------------------
    def check_ids(self, ids) -> np.ndarray:
        return check_token_ids(ids, len(self.pieces), "unigram")

    def decode(self, ids, skip_special_tokens: bool = False) -> str:
        """SentencePiece's ``Decode``: ``▁`` becomes a space, the first one (the dummy prefix) is dropped,
        control pieces are invisible, the unknown piece writes ``unk_surface`` (nothing with
        ``skip_special_tokens``), runs of byte pieces are joined and decoded as UTF-8 with
        ``bytes.decode("utf-8", "replace")``."""
        arr = self.check_ids(ids).tolist()
        norm = self.normalizer
        strip_first = norm.add_dummy_prefix or norm.remove_extra_whitespaces
        out: list[str] = []
        size = 0
        pending = bytearray()
        is_bos_ws = True
        bos_ws_seen = False
        types = self.types
        for i in arr:
            t = types[i]
            if t == P.PIECE_BYTE:
                pending.append(int(self.pieces[i][3:5], 16))
                continue
            if pending:
                piece = bytes(pending).decode("utf-8", "replace")
                out.append(piece)
                size += len(piece)
                pending.clear()
            if bos_ws_seen or size:
                is_bos_ws = False
            bos_ws_seen = False
            if t == P.PIECE_CONTROL:
                continue
            if t == P.PIECE_UNKNOWN:
                if not skip_special_tokens:
                    out.append(self.unk_surface)
                    size += len(self.unk_surface)
                continue
            piece = self.pieces[i]
            if is_bos_ws and strip_first:
                if piece.startswith(SPACE):
                    piece = piece[1:]
                    bos_ws_seen = not norm.remove_extra_whitespaces
            if piece.startswith(SPACE):
                piece = " " + piece[1:]
            if self.has_internal_space:
                piece = piece.replace(SPACE, " ")
            out.append(piece)
            size += len(piece)
        if pending:
            out.append(bytes(pending).decode("utf-8", "replace"))
        return "".join(out)

    def _decode_arrays(self):
        """The arrays of :func:`~tokembed.plugins.unigram._kernels_decode.decode_pieces` (built once): what each
        piece writes, then with its leading ``▁`` dropped; the byte of each byte piece; which pieces start with
        ``▁``; the unknown surface's UTF-8."""
        from tokembed.decoding import VariantTable

        if getattr(self, "_decode_cache", None) is None:
            def write(piece: str) -> str:  # the rule of decode for a piece that is written
                piece = " " + piece[1:] if piece.startswith(SPACE) else piece
                return piece.replace(SPACE, " ") if self.has_internal_space else piece

            n = len(self.pieces)
            table = VariantTable.from_strings(self.pieces, lambda i, p, v: write(p[1:] if v else p), 2)
            byte_values = np.zeros(n, np.uint8)
            for i in np.flatnonzero(self.types == P.PIECE_BYTE).tolist():
                byte_values[i] = int(self.pieces[i][3:5], 16)
            starts_space = np.array([p.startswith(SPACE) for p in self.pieces], bool)
            unk = np.frombuffer(self.unk_surface.encode("utf-8", "surrogatepass"), np.uint8)
            longest = np.maximum(np.diff(table.offsets[: n + 1]), max(unk.size, 1))
            self._decode_cache = (table, byte_values, starts_space, unk, longest)
        return self._decode_cache

    def decode_batch(self, ids_list, skip_special_tokens: bool = False) -> list[str]:
        """``[decode(ids, skip_special_tokens) for ids in ids_list]`` in one kernel pass
        (:func:`~tokembed.plugins.unigram._kernels_decode.decode_pieces`); a sequence whose run of byte pieces is
        not valid UTF-8 on its own goes through :meth:`decode` (its replacement characters depend on the runs)."""
        from tokembed.decoding import flatten_ids, split_decode

        from ._kernels_decode import decode_pieces

        arrays = list(ids_list)
        ids, indptr = flatten_ids(arrays, len(self.pieces), "unigram")
        table, byte_values, starts_space, unk, longest = self._decode_arrays()
        out = np.empty(int(longest[ids].sum()), np.uint8)
        bounds = np.empty(indptr.size, np.int64)
        fallback = np.zeros(indptr.size - 1, bool)
        norm = self.normalizer
        decode_pieces(ids, indptr, self.types, byte_values, table.data, table.offsets, len(self.pieces),
                      starts_space, unk, bool(skip_special_tokens), norm.add_dummy_prefix or
                      norm.remove_extra_whitespaces, not norm.remove_extra_whitespaces, out, bounds, fallback)
        texts = split_decode(out.tobytes(), bounds, "surrogatepass", fallback)
        for d in np.flatnonzero(fallback).tolist():
            texts[d] = self.decode(arrays[d], skip_special_tokens)
        return texts

    def token_bytes(self, id: int) -> bytes:
        """The raw byte of a byte piece, else the UTF-8 of ``decode([id])`` (lone surrogates kept)."""
        from tokembed.decoding import FIRST, MIDDLE

        table, byte_values, starts_space, unk, _ = self._decode_arrays()
        n = len(self.pieces)
        if not isinstance(id, (int, np.integer)) or isinstance(id, bool) or not 0 <= id < n:
            id = self.check_ids([id])[0]  # raises for a bad id
        i = int(id)
        kind = self.types[i]
        if kind == P.PIECE_BYTE:
            return bytes([byte_values[i]])
        if kind == P.PIECE_CONTROL:
            return b""
        if kind == P.PIECE_UNKNOWN:
            return unk.tobytes()
        norm = self.normalizer  # alone, a piece is first: the dummy prefix's "▁" is dropped as decode drops it
        strip = (norm.add_dummy_prefix or norm.remove_extra_whitespaces) and starts_space[i]
        return table.entry(i, FIRST if strip else MIDDLE)

    # -- files ----------------------------------------------------------------------------------------------------
    @classmethod
    def from_proto_bytes(cls, data: bytes, source: str) -> "SentencePieceModel":
        """Read a serialized ``ModelProto``.

        Raises
        ------
        ArtifactError
            If the bytes are not a ModelProto or the model is one tokembed cannot encode with (the message says
            what).
        """
        from tokembed.errors import ArtifactError

        from google.protobuf.message import DecodeError

        msg = P.message_classes()["ModelProto"]()
        try:
            msg.ParseFromString(data)
        except DecodeError as exc:
            raise ArtifactError(f"{source}: not a SentencePiece model (protobuf ModelProto): {exc}") from None
        if not msg.pieces:
            raise ArtifactError(f"{source}: not a SentencePiece model: it holds no piece")
        ts, ns = msg.trainer_spec, msg.normalizer_spec
        kinds = {P.MODEL_UNIGRAM: "unigram", P.MODEL_BPE: "bpe", P.MODEL_WORD: "word", P.MODEL_CHAR: "char"}
        model_type = kinds.get(ts.model_type, str(ts.model_type))
        if model_type not in ("unigram", "bpe"):
            raise ArtifactError(f"{source}: a SentencePiece {model_type!r} model; tokembed reads unigram and bpe "
                                "models")
        if msg.HasField("denormalizer_spec") and msg.denormalizer_spec.precompiled_charsmap:
            raise ArtifactError(f"{source}: the model has a denormalization rule, which tokembed does not apply")
        normalizer = NormalizerSettings(
            name=ns.name or ("identity" if not ns.precompiled_charsmap else "custom"),
            charsmap=bytes(ns.precompiled_charsmap), add_dummy_prefix=ns.add_dummy_prefix,
            remove_extra_whitespaces=ns.remove_extra_whitespaces, escape_whitespaces=ns.escape_whitespaces,
            treat_whitespace_as_suffix=ts.treat_whitespace_as_suffix)
        pieces = [p.piece for p in msg.pieces]
        # SentencePiece skips an unused piece that is a lone NUL
        keep = [i for i, p in enumerate(msg.pieces) if not (p.piece == "\x00" and p.type == P.PIECE_UNUSED)]
        if len(keep) != len(pieces):
            raise ArtifactError(f"{source}: an unused NUL piece; tokembed needs one piece per id")
        try:
            return cls(pieces, np.array([p.score for p in msg.pieces], np.float32),
                       np.array([p.type for p in msg.pieces], np.int8), model_type, normalizer,
                       bool(ts.byte_fallback), ts.unk_surface, bytes(data))
        except (ValueError, TokembedError) as exc:
            raise ArtifactError(f"{source}: {exc}") from None


def _grown(a: np.ndarray, size: int) -> np.ndarray:
    out = np.empty(size, a.dtype)
    out[: a.shape[0]] = a
    return out

