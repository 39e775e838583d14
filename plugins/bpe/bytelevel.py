"""Byte-level helpers: GPT-2's byte <-> printable character table.

GPT-2 (Radford et al. 2019, openai/gpt-2 ``src/encoder.py``, ``bytes_to_unicode``) writes each of the 256 byte
values as one printable Unicode character, so that byte-level tokens are ordinary strings in ``vocab.json`` and
``merges.txt`` (a space is ``Ġ``, a newline ``Ċ``). Hugging Face ``ByteLevel`` and tiktoken's GPT-2 files use the
same table. This module holds only the standard library.
"""

from __future__ import annotations

__all__ = ["BYTE_CHARS", "CHAR_BYTES", "token_bytes", "bytes_to_token"]


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
