"""The ``mean_token_length`` metric: how many characters of the text a token covers, on average.

Written against the per-document metric contract (``update(doc, encoding)``, :class:`tokembed.metrics.Metric`).
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

    def update(self, doc: str, encoding: Any) -> None:
        spans = encoding.offsets
        self.covered += int((spans[:, 1] - spans[:, 0]).sum()) if len(spans) else 0

    def result(self, stats: PassStats) -> float | None:
        return self.covered / stats.tokens if stats.tokens else None

    def merge(self, other: "MeanTokenLength") -> "MeanTokenLength":
        out = self.copy()
        out.covered = self.covered + other.covered
        return out
