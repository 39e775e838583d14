"""Read one string array (a tokenizer's pieces) from a GGUF file, with the standard library only.

GGUF (llama.cpp's model format, versions 2 and 3, little-endian): the magic ``GGUF``, a uint32 version, a uint64
tensor count, a uint64 count of key-value pairs, then the pairs: a key (uint64 length + UTF-8 bytes), a uint32 value
type, and the value. Types: 0-7 and 10-12 are fixed-size scalars, 8 a string (uint64 length + bytes), 9 an array
(uint32 element type, uint64 count, the elements). The tensors come after the pairs and are never read.

Written from the format's description in llama.cpp's ``docs/gguf.md``; the ``gguf`` package is not needed.
"""

from __future__ import annotations

import struct

from tokembed.errors import DataError

#: bytes of each fixed-size value type (uint8, int8, uint16, int16, uint32, int32, float32, bool, -, -, uint64,
#: int64, float64)
_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY = 8, 9


def read_gguf_strings(data: bytes, key: str, *, where: str = "GGUF file") -> list[str]:
    """The string array stored under ``key`` in the metadata of a GGUF file's bytes.

    Parameters
    ----------
    data : bytes
        The whole file (or at least its header and metadata).
    key : str
        A metadata key, e.g. ``"tokenizer.ggml.tokens"``.
    where : str
        Named in error messages (the dataset and file).

    Returns
    -------
    list of str
        The array's strings, decoded as UTF-8, in file order.

    Raises
    ------
    DataError
        If the bytes are not GGUF version 2 or 3, are cut short, hold an unknown value type, or have no string
        array under ``key``.
    """
    reader = _Reader(data, where)
    if reader.take(4) != b"GGUF":
        raise DataError(f"{where}: not a GGUF file (it does not start with the bytes 'GGUF')")
    version = reader.unpack("<I")
    if version not in (2, 3):
        raise DataError(f"{where}: GGUF version {version} is not supported (versions 2 and 3 are)")
    reader.unpack("<Q")  # tensor count
    n_pairs = reader.unpack("<Q")
    for _ in range(n_pairs):
        name = reader.string()
        kind = reader.unpack("<I")
        if name == key:
            if kind != _ARRAY or (elem := reader.unpack("<I")) != _STRING:
                raise DataError(f"{where}: the value of {key!r} is not an array of strings")
            return [reader.string() for _ in range(reader.unpack("<Q"))]
        reader.skip_value(kind)
    raise DataError(f"{where}: no key {key!r} among its {n_pairs} metadata entries")


class _Reader:
    """A cursor over bytes; every read past the end is a DataError naming the offset."""

    def __init__(self, data: bytes, where: str):
        self.data, self.pos, self.where = memoryview(data), 0, where

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise DataError(f"{self.where}: cut short: {n:,} bytes wanted at offset {self.pos:,} of "
                            f"{len(self.data):,}")
        out = bytes(self.data[self.pos:self.pos + n])
        self.pos += n
        return out

    def unpack(self, fmt: str) -> int:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        raw = self.take(self.unpack("<Q"))
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise DataError(f"{self.where}: a string before offset {self.pos:,} is not valid UTF-8") from None

    def skip_value(self, kind: int) -> None:
        if kind in _SIZES:
            self.take(_SIZES[kind])
        elif kind == _STRING:
            self.take(self.unpack("<Q"))
        elif kind == _ARRAY:
            elem, count = self.unpack("<I"), self.unpack("<Q")
            if elem in _SIZES:
                self.take(_SIZES[elem] * count)
            else:
                for _ in range(count):
                    self.skip_value(elem)
        else:
            raise DataError(f"{self.where}: unknown GGUF value type {kind} before offset {self.pos:,}")
