"""The fitted BPE model: vocabulary, merges, and the tables and steps that encode and decode text.

Encoding one text (all steps vectorized; no Python loop runs per piece):

1. surrogates repaired (:func:`~tokembed.text.repair_surrogates`), then the normalizer; both keep
   an alignment to the original text;
2. the pre-tokenizer cuts the normalized texts into pieces: one scan of all texts of the call by the Numba scanner
   (:func:`tokembed.text.scan.batch_spans`) when it knows the pre-tokenizer, else text by text;
3. each piece becomes base symbols: its UTF-8 bytes (byte level) or its characters, decorated with the
   continuing-subword prefix / end-of-word suffix and looked up in the vocabulary (character level; a character
   without an entry becomes ``unk_token``);
4. the word cache: equal pieces are found with a hash table (``_kernels.dedup_words``) so that the merges run
   once per distinct piece of the call (a cache bounded by the call's size; with BPE-dropout every piece is
   encoded on its own, so each gets its own random draw);
5. the ``_subword`` merge kernel (what ``_subword.apply_merges`` runs, called without its input checks) applies
   the merges by rank, lowest first (tiktoken's and Hugging Face's rule), O(n log n) in the length of a piece;
6. ``_kernels.expand_words`` gives every piece its tokens and every token its span: the characters its symbols
   come from (all byte-level tokens of one character carry that character's span), mapped back to the original
   (:meth:`BPEModel.encode_packed` keeps the call's arrays packed; :meth:`BPEModel.encode_many` cuts them per
   text).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from tokembed.components import check_token_ids
from tokembed.errors import TokembedError
from tokembed.text.normalizers import Identity, Normalizer
from tokembed.text import repair_surrogates
from tokembed.text.pre_tokenizers import PreTokenizer
from tokembed.text.scan import batch_spans, to_original

from .bytelevel import BYTE_CHARS, CHAR_BYTES

__all__ = ["BPEModel"]

_EMPTY_I64 = np.zeros(0, np.int64)


class BPEModel:
    """Vocabulary (ids ``0 .. n-1``), merges by rank, and the text stages, ready to encode.

    Parameters
    ----------
    vocab : list of str
        Token strings in id order, special tokens included; all distinct.
    merges : list of (str, str)
        Merge ``k`` (rank ``k``) joins two vocabulary tokens into ``left + right`` (minus the right part's
        ``continuing_subword_prefix``), which must be in the vocabulary. A repeated pair keeps its first rank.
    specials : list of str
        The special tokens (vocabulary entries), never produced by the model from text.
    byte_level : bool
        Base symbols are the 256 bytes, written as GPT-2's byte characters (all must be in the vocabulary).
    unk_token : str or None
        Character level: token for a character without a vocabulary entry (None: such a character is an error).
    end_of_word_suffix, continuing_subword_prefix : str or None
        Character level: decorations of the last / non-initial character of each piece.
    normalizer, pre_tokenizer : built text stages

    Raises
    ------
    ValueError
        If the vocabulary, specials or merges are inconsistent (the message says which entry).
    """

    def __init__(self, vocab: Sequence[str], merges: Sequence[tuple[str, str]], specials: Sequence[str], *,
                 byte_level: bool, unk_token: str | None, end_of_word_suffix: str | None,
                 continuing_subword_prefix: str | None, normalizer: Normalizer, pre_tokenizer: PreTokenizer):
        from tokembed.plugins._subword import build_merge_table

        self.vocab = list(vocab)
        self.tok2id = {t: i for i, t in enumerate(self.vocab)}
        if len(self.tok2id) != len(self.vocab):
            dup = next(t for i, t in enumerate(self.vocab) if self.tok2id[t] != i)
            raise ValueError(f"the vocabulary holds {dup!r} twice")
        self.specials = list(specials)
        for s in self.specials:
            if s not in self.tok2id:
                raise ValueError(f"special token {s!r} is not in the vocabulary")
        self.byte_level = bool(byte_level)
        self.suffix = end_of_word_suffix or ""
        self.prefix = continuing_subword_prefix or ""
        self.normalizer = normalizer
        self.pre_tokenizer = pre_tokenizer
        self.itos = np.array(self.vocab, dtype=object)
        self.is_special = np.zeros(len(self.vocab), bool)
        self.is_special[[self.tok2id[s] for s in self.specials]] = True
        self.merges = [(str(a), str(b)) for a, b in merges]
        if len(set(self.merges)) != len(self.merges):
            seen: set[tuple[str, str]] = set()
            k, dup = next((k, m) for k, m in enumerate(self.merges) if m in seen or seen.add(m))
            raise ValueError(f"merge {k} {dup!r} repeats an earlier merge")
        left = np.empty(len(self.merges), np.int64)
        right = np.empty(len(self.merges), np.int64)
        new = np.empty(len(self.merges), np.int64)
        for k, (a, b) in enumerate(self.merges):
            merged = a + (b[len(self.prefix):] if self.prefix and b.startswith(self.prefix) else b)
            try:
                left[k], right[k], new[k] = self.tok2id[a], self.tok2id[b], self.tok2id[merged]
            except KeyError as exc:
                raise ValueError(f"merge {k} ({a!r}, {b!r}): {exc.args[0]!r} is not in the vocabulary") from None
        self.table = build_merge_table(left, right, new)
        self.unk_id = -1
        if self.byte_level:
            missing = [c for c in BYTE_CHARS if c not in self.tok2id]
            if missing:
                raise ValueError(f"byte level, but {len(missing)} of the 256 byte symbols are not in the vocabulary "
                                 f"(first: {missing[0]!r})")
            self.byte_ids = np.array([self.tok2id[c] for c in BYTE_CHARS], np.int32)
        else:
            if unk_token is not None:
                if unk_token not in self.tok2id:
                    raise ValueError(f"unk_token {unk_token!r} is not in the vocabulary")
                self.unk_id = self.tok2id[unk_token]
            self._char_tables()
        self._token_bytes: list[bytes] | None = None

    # -- base symbols ---------------------------------------------------------------------------------------------
    def _char_tables(self) -> None:
        """Per decoration class (0 bare, 1 suffix, 2 prefix, 3 both): sorted code points and their token ids."""
        pre, suf = self.prefix, self.suffix
        tables: list[dict[int, int]] = [{}, {}, {}, {}]
        longest = 1 + len(pre) + len(suf)  # a longer token is no decorated character
        for tok, i in self.tok2id.items():
            if len(tok) > longest or self.is_special[i]:
                continue
            for cls in range(4):
                if (cls & 1 and not suf) or (cls & 2 and not pre):
                    continue
                core = tok
                if cls & 2:
                    if not core.startswith(pre):
                        continue
                    core = core[len(pre):]
                if cls & 1:
                    if not core.endswith(suf):
                        continue
                    core = core[: len(core) - len(suf)]
                if len(core) == 1:
                    tables[cls].setdefault(ord(core), i)
        self.char_keys = []
        self.char_ids = []
        for t in tables:
            keys = np.array(sorted(t), np.int64)
            self.char_keys.append(keys)
            self.char_ids.append(np.array([t[k] for k in keys.tolist()], np.int32))

    def _char_symbols(self, cps: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Base ids of the characters of packed words (CSR over code points), int32 of shape (len(cps),)."""
        total = cps.shape[0]
        cls = np.zeros(total, np.int64)
        if self.suffix:
            cls[offsets[1:] - 1] |= 1
        if self.prefix:
            not_first = np.ones(total, bool)
            not_first[offsets[:-1]] = False
            cls[not_first] |= 2
        ids = np.full(total, -1, np.int32)
        for c in range(4):
            keys = self.char_keys[c]
            sel = np.flatnonzero(cls == c)
            if sel.size == 0 or keys.size == 0:
                continue
            pos = np.minimum(np.searchsorted(keys, cps[sel]), keys.size - 1)
            hit = keys[pos] == cps[sel]
            ids[sel[hit]] = self.char_ids[c][pos[hit]]
        bad = np.flatnonzero(ids < 0)
        if bad.size:
            if self.unk_id < 0:
                raise TokembedError(f"bpe: the character {chr(cps[bad[0]])!r} has no vocabulary entry (in this "
                                    "position of its word) and there is no unk_token")
            ids[bad] = self.unk_id
        return ids

    # -- encoding -------------------------------------------------------------------------------------------------
    def encode(self, text: str, dropout: float = 0.0, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """Encode one text as ordinary text; see :meth:`encode_many`."""
        return self.encode_many([text], dropout, seed)[0]

    def encode_many(self, texts: Sequence[str], dropout: float = 0.0, seed: int = 0
                    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Encode texts as ordinary text, all in one pass (the steps are in the module docstring).

        With ``dropout`` > 0 the random draws depend on the position of each piece in the whole call.

        Returns
        -------
        list of (ids, offsets)
            Per text: ids int32 of shape (n,) and offsets int64 of shape (n, 2), code-point spans into the text.

        Raises
        ------
        TokembedError
            At character level without ``unk_token``, for a character without a vocabulary entry.
        """
        ids, lengths, offsets = self.encode_packed(texts, dropout, seed)
        ends = np.cumsum(lengths).tolist()
        return [(ids[lo:hi], offsets[lo:hi]) for lo, hi in zip([0] + ends[:-1], ends)]

    def encode_packed(self, texts: Sequence[str], dropout: float = 0.0, seed: int = 0, spans: bool = True
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """:meth:`encode_many` packed as CSR: ``(ids int32 (n_tokens,), lengths int64 (n_texts,), offsets int64
        (n_tokens, 2))``, text ``i`` owning the next ``lengths[i]`` tokens, each offset a code-point span into its
        own text. ``spans=False`` skips mapping the offsets back (``offsets`` is then None).

        Raises
        ------
        TokembedError
            As :meth:`encode_many`.
        """
        from ._kernels import dedup_words, expand_words

        changed: list = []  # (text index, alignment) of the texts a stage changed
        strings: list[str] = []
        identity = isinstance(self.normalizer, Identity)
        for t, text in enumerate(texts):
            nt = repair_surrogates(text)
            if not identity:
                nt = nt.compose(self.normalizer.normalize(nt.normalized))
            if not nt.is_one_to_one:
                changed.append((t, nt))
            strings.append(nt.normalized)
        scanned = batch_spans(self.pre_tokenizer, strings)  # one Numba scan, when it knows the pre-tokenizer
        if scanned is not None:
            pieces, n_pieces = scanned
        else:
            spans_list: list[np.ndarray] = []
            base = 0
            for s in strings:
                found = self.pre_tokenizer.spans(s)
                spans_list.append(found + base if base else found)
                base += len(s)
            n_pieces = np.fromiter(map(len, spans_list), np.int64, len(spans_list))
            pieces = spans_list[0] if len(spans_list) == 1 else np.concatenate(spans_list) if spans_list else None
        joined = strings[0] if len(strings) == 1 else "".join(strings)
        k = int(n_pieces.sum())
        if k == 0:
            return np.zeros(0, np.int32), np.zeros(len(strings), np.int64), np.zeros((0, 2), np.int64)
        pieces = np.ascontiguousarray(pieces, dtype=np.int64)
        ascii_only = joined.isascii()
        if ascii_only:
            cps = np.frombuffer(joined.encode("ascii"), np.uint8).astype(np.int32)
        else:
            cps = np.frombuffer(joined.encode("utf-32-le"), np.int32)
        word_of = np.empty(k, np.int64)
        packed = np.empty(int((pieces[:, 1] - pieces[:, 0]).sum()), np.int32)
        packed_offsets = np.empty(k + 1, np.int64)
        nu = dedup_words(cps, pieces, dropout == 0.0, word_of, packed, packed_offsets)
        u_off = packed_offsets[: nu + 1]
        u_cps = packed[: u_off[-1]]
        pos_map = _EMPTY_I64
        if not self.byte_level:
            symbols, sym_offsets = self._char_symbols(u_cps, u_off), u_off
        elif ascii_only:
            symbols, sym_offsets = self.byte_ids[u_cps], u_off
        else:
            # distinct words as UTF-8 bytes; pos_map[b] = index in u_cps of the character that byte b belongs to
            nbytes = 1 + (u_cps >= 0x80).astype(np.int64) + (u_cps >= 0x800) + (u_cps >= 0x10000)
            b_end = np.cumsum(nbytes)
            raw = u_cps.astype("<u4").tobytes().decode("utf-32-le").encode("utf-8")
            symbols = self.byte_ids[np.frombuffer(raw, np.uint8)]
            sym_offsets = np.zeros(nu + 1, np.int64)
            sym_offsets[1:] = b_end[u_off[1:] - 1]
            pos_map = np.repeat(np.arange(u_cps.size, dtype=np.int64), nbytes)
        enc_ids, enc_offsets, enc_first, enc_last = self._merge(symbols, sym_offsets, dropout, seed)
        tok_count = np.zeros(k + 1, np.int64)
        np.cumsum(np.diff(enc_offsets)[word_of], out=tok_count[1:])
        n_out = int(tok_count[-1])
        ids = np.empty(n_out, np.int32)
        offsets = np.empty((n_out, 2), np.int64)
        expand_words(word_of, np.ascontiguousarray(pieces[:, 0]), u_off, enc_ids, enc_offsets, enc_first, enc_last,
                     pos_map, ids, offsets)
        bounds = tok_count[np.cumsum(n_pieces) - n_pieces]  # first token of each text
        lengths = np.diff(np.append(bounds, n_out))
        if not spans:
            return ids, lengths, None
        if len(strings) > 1:  # offsets into the joined text -> into each (normalized) text
            text_base = np.zeros(len(strings), np.int64)
            np.cumsum(np.fromiter(map(len, strings[:-1]), np.int64, len(strings) - 1), out=text_base[1:])
            offsets -= np.repeat(text_base, lengths)[:, None]
        if changed:  # back to the original text
            to_original(offsets, np.append(bounds, n_out), changed)
        return ids, lengths, offsets

    def _merge(self, symbols: np.ndarray, offsets: np.ndarray, dropout: float, seed: int):
        """``_subword.apply_merges`` without its input checks (the arrays are built here, valid by construction):
        the checks cost more than the merges on a short text. Returns ids, offsets, first, last."""
        from tokembed.plugins._subword._kernels_encode import encode_words

        n = symbols.shape[0]
        ids = np.empty(n, np.int32)
        first = np.empty(n, np.int64)
        last = np.empty(n, np.int64)
        out_offsets = np.empty(offsets.shape[0], np.int64)
        table = self.table
        n_out = encode_words(symbols, offsets, table.keys, table.ranks, table.new_ids, float(dropout),
                             np.uint64(seed & 0xFFFFFFFFFFFFFFFF), ids, first, last, out_offsets)
        return ids[:n_out], out_offsets, first[:n_out], last[:n_out]

    # -- decoding -------------------------------------------------------------------------------------------------
    def check_ids(self, ids) -> np.ndarray:
        return check_token_ids(ids, len(self.vocab), "bpe")

    def token_bytes(self) -> list[bytes]:
        """Byte level: the bytes of each token (a special token's own UTF-8)."""
        if self._token_bytes is None:
            out = []
            for i, tok in enumerate(self.vocab):
                if self.is_special[i]:
                    out.append(tok.encode("utf-8", "surrogatepass"))
                    continue
                try:
                    out.append(bytes([CHAR_BYTES[c] for c in tok]))
                except KeyError:  # a non-special entry outside the byte alphabet (an added token): its UTF-8
                    out.append(tok.encode("utf-8", "surrogatepass"))
            self._token_bytes = out
        return self._token_bytes

    def decode_bytes(self, ids, skip_special_tokens: bool = False) -> bytes:
        arr = self.check_ids(ids)
        if skip_special_tokens:
            arr = arr[~self.is_special[arr]]
        if self.byte_level:
            tb = self.token_bytes()
            return b"".join([tb[i] for i in arr.tolist()])
        return self.decode(arr, skip_special_tokens).encode("utf-8", "surrogatepass")

    def decode(self, ids, skip_special_tokens: bool = False) -> str:
        arr = self.check_ids(ids)
        if skip_special_tokens:
            arr = arr[~self.is_special[arr]]
        if self.byte_level:
            return self.decode_bytes(arr).decode("utf-8", "replace")
        last = arr.size - 1
        return "".join([self._decoded_token(tok, sp, i == 0, i == last)
                        for i, (tok, sp) in enumerate(zip(self.itos[arr].tolist(), self.is_special[arr].tolist()))])

    def _decoded_token(self, tok: str, special: bool, first: bool, last: bool) -> str:
        """Character level: what the decoder writes for ``tok`` at its place in the sequence (see ``decode``)."""
        if special:
            return tok
        pre, suf = self.prefix, self.suffix
        if pre:
            if tok.startswith(pre):
                tok = tok[len(pre):]
            elif not first and not suf:
                tok = " " + tok
        if suf:
            tok = tok.replace(suf, "" if last else " ")
        return tok

    def decode_table(self):
        """The :class:`tokembed.decoding.VariantTable` of the decoder (built once): byte level, each token's
        bytes; character level, what each token writes at each place."""
        from tokembed.decoding import FIRST, LAST, VariantTable

        if getattr(self, "_decode_cache", None) is None:
            if self.byte_level:
                self._decode_cache = VariantTable.from_bytes(self.token_bytes(), len(self.vocab))
            else:
                special = self.is_special.tolist()
                self._decode_cache = VariantTable.from_strings(
                    self.vocab, lambda i, tok, v: self._decoded_token(tok, special[i], bool(v & FIRST),
                                                                      bool(v & LAST)), 4)
        return self._decode_cache

    def decode_batch(self, ids_list, skip_special_tokens: bool = False) -> list[str]:
        """``[decode(ids, skip_special_tokens) for ids in ids_list]`` through :meth:`decode_table` in one array
        pass (:func:`tokembed.decoding.decode_table`)."""
        from tokembed.decoding import decode_table

        return decode_table(self.decode_table(), ids_list, "bpe", self.is_special if skip_special_tokens else None,
                            "replace" if self.byte_level else "surrogatepass")
