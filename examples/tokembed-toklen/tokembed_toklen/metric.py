"""The ``mean_token_length`` metric: how many characters of the text a token covers, on average.

It implements both paths of :class:`tokembed.metrics.Metric`: ``update_chunk(chunk)``, the array path (a chunk of
documents as flat arrays: ``chunk.spans`` holds every token's ``[start, end)``), which a tokembed that has it
prefers, and ``update(doc, encoding)``, the per-document path of earlier versions. Both add the same spans.
"""

from __future__ import annotations

from typing import Any

from tokembed.metrics import Metric, PassStats

__all__ = ["MeanTokenLength"]


class MeanTokenLength(Metric):
    """Mean over the tokens of a corpus of ``end - start`` of each token's offsets: the code points of the text it
    covers. Unlike ``chars_per_token`` (all characters / tokens), the whitespace a tokenizer drops between words
    counts for no token; a token covering part of a character (a byte of an emoji) counts its span (1 or 0, as the
    tokenizer's offsets say). None on a corpus without tokens."""

    name = "mean_token_length"
    label = "tok len"
    unit = "characters / token"
    definition = "Sum over tokens of the length of the text span each covers (code points), divided by the tokens."
    source = "tokembed-toklen (example plugin)"
    higher_is_better = None
    display = ".2f"

    def __init__(self, tokenizer: Any):
        super().__init__(tokenizer)
        self.covered = 0

    def update_chunk(self, chunk: Any) -> None:
        self.covered += int((chunk.spans[:, 1] - chunk.spans[:, 0]).sum())

    def update(self, doc: str, encoding: Any) -> None:
        self.covered += int((encoding.offsets[:, 1] - encoding.offsets[:, 0]).sum())

    def result(self, stats: PassStats) -> float | None:
        return self.covered / stats.tokens if stats.tokens else None

    def merge(self, other: "MeanTokenLength") -> "MeanTokenLength":
        out = self.copy()
        out.covered = self.covered + other.covered
        return out
