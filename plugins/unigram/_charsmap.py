"""SentencePiece's normalization rules: the ``precompiled_charsmap`` blob, and the ``nmt_nfkc`` rule built here.

A ``precompiled_charsmap`` (``NormalizerSpec`` field 2) is ``<uint32 little-endian: trie size in bytes><double
array of the source strings, values = offsets into the replacement block><replacement block: NUL-terminated UTF-8
strings>``. The normalizer replaces, at each position, the longest source string that matches by its replacement
(:func:`tokembed.plugins.unigram._kernels.normalize`).

``nmt_nfkc`` (SentencePiece's default rule) is Unicode NFKC plus the rules SentencePiece adds for machine
translation: TAB, LF, FF, CR and some invisible or separator characters (U+061C, U+1680, U+200B, U+200C, U+200E,
U+200F, U+2028, U+2029, U+2581, U+FEFF, U+FFFD) become a space, the ASCII control characters other than those and
U+007F, U+008F, U+009F are removed, and FULLWIDTH TILDE (U+FF5E) is left as it is. :func:`nmt_nfkc_rules` builds
the table from Python's :mod:`unicodedata`: every character whose NFKC differs from itself, and every canonical
decomposition (a base character followed by combining marks) whose NFKC composes it. SentencePiece builds its
table from ICU; where the Unicode versions of the two differ, a rare character may normalize differently. A model
read from a ``.model`` file always uses the file's own table.
"""

from __future__ import annotations

import functools
import struct
import sys
import unicodedata

import numpy as np

from tokembed.errors import ArtifactError

__all__ = ["decode_charsmap", "encode_charsmap", "nmt_nfkc_rules", "nmt_nfkc_charsmap", "charsmap_from_rules", "build_trie",
           "NORMALIZATION_RULES", "OTHER_RULES"]

#: Rule names tokembed can build itself (``normalization_rule_name``); a ``.model`` carries its own table.
NORMALIZATION_RULES = ("nmt_nfkc", "identity")
#: SentencePiece's other built-in rule names, which tokembed reads from a ``.model`` but cannot build.
OTHER_RULES = ("nfkc", "nmt_nfkc_cf", "nfkc_cf")

_TO_SPACE = (0x0009, 0x000A, 0x000C, 0x000D, 0x061C, 0x1680, 0x200B, 0x200E, 0x200F, 0x2028, 0x2029, 0x2581,
             0xFEFF, 0xFFFD, 0x200C)
_REMOVED = tuple(range(0x01, 0x09)) + (0x0B,) + tuple(range(0x0E, 0x20)) + (0x7F, 0x8F, 0x9F)


def decode_charsmap(blob: bytes, source: str = "precompiled_charsmap") -> tuple[np.ndarray, np.ndarray]:
    """``(units, replacements)`` of a ``precompiled_charsmap``: the double array as uint32 and the replacement
    block as uint8 (empty arrays for an empty blob).

    Raises
    ------
    ArtifactError
        If the blob is malformed (sizes that do not add up, a block not NUL-terminated).
    """
    if not blob:
        return np.zeros(0, np.uint32), np.zeros(0, np.uint8)
    if len(blob) <= 4:
        raise ArtifactError(f"{source}: the normalization rule blob is broken ({len(blob)} bytes)")
    (trie_size,) = struct.unpack("<I", blob[:4])
    if trie_size >= len(blob) - 4 or trie_size < 1024 or trie_size % 1024:
        raise ArtifactError(f"{source}: the normalization rule's trie size {trie_size} does not fit its blob of "
                            f"{len(blob)} bytes")
    units = np.frombuffer(blob[4:4 + trie_size], "<u4").astype(np.uint32)
    replacements = np.frombuffer(blob[4 + trie_size:], np.uint8).copy()
    if replacements.size == 0 or replacements[-1] != 0:
        raise ArtifactError(f"{source}: the normalization rule's replacement block is not NUL-terminated")
    return units, replacements


def encode_charsmap(units: np.ndarray, replacements: np.ndarray) -> bytes:
    """The blob :func:`decode_charsmap` reads."""
    trie = np.asarray(units, "<u4").tobytes()
    return struct.pack("<I", len(trie)) + trie + np.asarray(replacements, np.uint8).tobytes()


def build_trie(keys: list[bytes], values: list[int]) -> np.ndarray:
    """A double array (uint32 units) of distinct non-empty byte keys without a zero byte, any order."""
    from ._kernels import build_double_array

    order = sorted(range(len(keys)), key=keys.__getitem__)
    sorted_keys = [keys[i] for i in order]
    offsets = np.zeros(len(keys) + 1, np.int64)
    np.cumsum([len(k) for k in sorted_keys], out=offsets[1:])
    flat = np.frombuffer(b"".join(sorted_keys), np.uint8)
    vals = np.array([values[i] for i in order], np.int64)
    units = build_double_array(flat, offsets, vals)
    if units.size == 0 and keys:
        raise ValueError("cannot build the double array: empty or repeated keys, a zero byte, or more than 2**21 "
                         "units")
    return units


def charsmap_from_rules(rules: dict[str, str]) -> bytes:
    """A ``precompiled_charsmap`` blob for ``{source: replacement}`` (sources non-empty, without NUL)."""
    if not rules:
        return b""
    keys, values, block, seen = [], [], bytearray(), {}
    for src in sorted(rules):
        dst = rules[src].encode("utf-8")
        if dst not in seen:
            seen[dst] = len(block)
            block += dst + b"\x00"
        keys.append(src.encode("utf-8"))
        values.append(seen[dst])
    units = build_trie(keys, values)
    units = np.concatenate([units, np.zeros((-units.size) % 256, np.uint32)])
    return encode_charsmap(units, np.frombuffer(bytes(block), np.uint8))


@functools.lru_cache(maxsize=1)
def nmt_nfkc_rules() -> dict[str, str]:
    """The ``nmt_nfkc`` rule as ``{source: replacement}`` (see the module docstring); built in about a second."""
    rules: dict[str, str] = {}
    decomposed: set[str] = set()
    for cp in range(1, sys.maxunicode + 1):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        nfkc = unicodedata.normalize("NFKC", c)
        if nfkc != c:
            rules[c] = nfkc
        nfd = unicodedata.normalize("NFD", c)
        if len(nfd) >= 2:
            decomposed.add(nfd)
    for seq in decomposed:
        nfkc = unicodedata.normalize("NFKC", seq)
        if nfkc != seq:
            rules[seq] = nfkc
    for cp in _TO_SPACE:
        rules[chr(cp)] = " "
    for cp in _REMOVED:
        rules[chr(cp)] = ""
    rules.pop("\uff5e", None)
    return rules


@functools.lru_cache(maxsize=1)
def nmt_nfkc_charsmap() -> bytes:
    """The ``precompiled_charsmap`` of :func:`nmt_nfkc_rules` (cached per process)."""
    return charsmap_from_rules(nmt_nfkc_rules())
