"""Byte-level helpers: GPT-2's byte <-> printable character table, and surrogate repair with alignments.

GPT-2 (Radford et al. 2019, openai/gpt-2 ``src/encoder.py``, ``bytes_to_unicode``) writes each of the 256 byte
values as one printable Unicode character, so that byte-level tokens are ordinary strings in ``vocab.json`` and
``merges.txt`` (a space is ``Ġ``, a newline ``Ċ``). Hugging Face ``ByteLevel`` and tiktoken's GPT-2 files use the
same table. This module holds only NumPy and the standard library.
"""

from __future__ import annotations

import numpy as np

from tokembed.text import NormalizedText

__all__ = ["BYTE_CHARS", "CHAR_BYTES", "token_bytes", "bytes_to_token", "repair_surrogates"]


def _byte_chars() -> list[str]:
    # Bytes that are printable Latin-1 characters ('!'..'~', '¡'..'¬', '®'..'ÿ') stand for themselves; the other 68
    # bytes (controls, space, DEL, NBSP, soft hyphen) take the code points 256, 257, ... in byte order.
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    kept = set(printable)
    out = [""] * 256
    extra = 0
    for b in range(256):
        if b in kept:
            out[b] = chr(b)
        else:
            out[b] = chr(256 + extra)
            extra += 1
    return out


#: ``BYTE_CHARS[b]`` is the one-character string that stands for byte ``b`` in byte-level vocabularies.
BYTE_CHARS: tuple[str, ...] = tuple(_byte_chars())
#: Inverse of :data:`BYTE_CHARS`: character -> byte value.
CHAR_BYTES: dict[str, int] = {c: b for b, c in enumerate(BYTE_CHARS)}


def token_bytes(token: str) -> bytes | None:
    """The bytes a byte-level token string stands for, or None if a character is outside the byte alphabet."""
    try:
        return bytes(CHAR_BYTES[c] for c in token)
    except KeyError:
        return None


def bytes_to_token(data: bytes) -> str:
    """The byte-level token string of ``data`` (each byte as its :data:`BYTE_CHARS` character)."""
    return "".join(BYTE_CHARS[b] for b in data)


def repair_surrogates(text: str) -> NormalizedText:
    """Replace surrogate code points so that the text has a UTF-8 encoding, keeping the alignment.

    A high surrogate followed by a low surrogate (a UTF-16 pair left in a Python ``str``, e.g. from
    ``json.loads`` of ``"\\ud83d\\ude00"``) becomes the character it encodes; any other surrogate becomes U+FFFD
    REPLACEMENT CHARACTER, as ``bytes.decode("utf-8", "replace")`` would give for its encoded form.

    Parameters
    ----------
    text : str

    Returns
    -------
    NormalizedText
        ``normalized`` is the repaired text; each of its characters is aligned to the one or two code points of
        ``text`` it came from. Texts without surrogates come back unchanged (one-to-one).
    """
    try:
        text.encode("utf-8")
        return NormalizedText.unchanged(text)
    except UnicodeEncodeError:
        pass
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4").astype(np.int64)
    high = (cps >= 0xD800) & (cps <= 0xDBFF)
    low = (cps >= 0xDC00) & (cps <= 0xDFFF)
    pair = np.zeros(cps.size, bool)
    pair[:-1] = high[:-1] & low[1:]  # a low surrogate is never a high one, so pairs cannot overlap
    second = np.zeros(cps.size, bool)
    second[1:] = pair[:-1]
    out = np.where(high | low, 0xFFFD, cps)
    nxt = np.zeros(cps.size, np.int64)
    nxt[:-1] = cps[1:]
    out = np.where(pair, 0x10000 + ((cps - 0xD800) << 10) + (nxt - 0xDC00), out)
    keep = ~second
    starts = np.flatnonzero(keep).astype(np.int64)
    ends = starts + 1 + pair[keep]
    repaired = out[keep].astype("<u4").tobytes().decode("utf-32-le")
    return NormalizedText(text, repaired, np.stack([starts, ends], axis=1))
