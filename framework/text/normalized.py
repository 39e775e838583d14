"""`NormalizedText`: a normalized string that remembers where each of its characters came from.

The alignment model is Hugging Face ``tokenizers``' ``NormalizedString``: every code point of the normalized text
carries the ``[start, end)`` code-point span of the original text it was produced from. Offsets are Python ``str``
indices (code points), never bytes.
"""

from __future__ import annotations

import numpy as np

__all__ = ["NormalizedText", "repair_surrogates"]


class NormalizedText:
    """An original text, its normalized form, and the alignment between the two.

    Immutable: the attributes are read-only and ``alignments`` is a read-only array.

    Parameters
    ----------
    original : str
        The text before normalization.
    normalized : str
        The text after normalization.
    alignments : array-like of shape (len(normalized), 2), optional
        For each code point of ``normalized``, the ``[start, end)`` code-point span of ``original`` it came from
        (int64). Rows are non-decreasing in both columns for every built-in stage; a character that expanded into
        several (``"ﬁ"`` -> ``"fi"``) gives each of them the same span. ``None`` means the one-to-one alignment
        ``(i, i + 1)``, which requires ``len(normalized) == len(original)``.

    Raises
    ------
    ValueError
        If ``alignments`` has the wrong shape, or is ``None`` while the lengths differ.

    Examples
    --------
    >>> import unicodedata
    >>> from tokembed.text import build_normalizer
    >>> nt = build_normalizer("nfkc").normalize("x\\ufe30y")
    >>> nt.normalized, nt.alignments.tolist()
    ('x..y', [[0, 1], [1, 2], [1, 2], [2, 3]])
    >>> nt.original_span(1, 3)
    (1, 2)
    """

    __slots__ = ("_original", "_normalized", "_alignments")

    def __init__(self, original: str, normalized: str, alignments: np.ndarray | None = None):
        if alignments is None:
            if len(original) != len(normalized):
                raise ValueError(
                    "alignments=None means one-to-one, but len(original) = "
                    f"{len(original)} != len(normalized) = {len(normalized)}"
                )
        else:
            alignments = np.array(alignments, dtype=np.int64)
            if alignments.size == 0:
                alignments = alignments.reshape(0, 2)
            if alignments.shape != (len(normalized), 2):
                raise ValueError(
                    f"alignments must have shape ({len(normalized)}, 2), got {alignments.shape}"
                )
            alignments.flags.writeable = False
        self._original = original
        self._normalized = normalized
        self._alignments = alignments

    @classmethod
    def unchanged(cls, text: str) -> NormalizedText:
        """The identity normalization of ``text`` (normalized == original, alignment ``(i, i + 1)``)."""
        return cls(text, text, None)

    @property
    def original(self) -> str:
        """The text before normalization."""
        return self._original

    @property
    def normalized(self) -> str:
        """The text after normalization."""
        return self._normalized

    @property
    def is_one_to_one(self) -> bool:
        """True when character ``i`` of ``normalized`` came from character ``i`` of ``original`` for every ``i``."""
        return self._alignments is None

    @property
    def alignments(self) -> np.ndarray:
        """int64 array of shape (len(normalized), 2): the original ``[start, end)`` span of each character."""
        if self._alignments is None:
            out = np.empty((len(self._normalized), 2), dtype=np.int64)
            out[:, 0] = np.arange(len(self._normalized), dtype=np.int64)
            out[:, 1] = out[:, 0] + 1
            out.flags.writeable = False
            return out
        return self._alignments

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        """Map the span ``normalized[start:end]`` to a ``[start, end)`` span of ``original``.

        A non-empty span maps to the start of its first character's source and the end of its last character's
        source. An empty span ``(i, i)`` maps to the empty span at the source start of character ``i``; for
        ``i == len(normalized)`` at the source end of the last character (``(0, 0)`` if ``normalized`` is empty).

        Raises
        ------
        IndexError
            Unless ``0 <= start <= end <= len(normalized)``.
        """
        out = self.original_spans(np.array([[start, end]], dtype=np.int64))
        return int(out[0, 0]), int(out[0, 1])

    def original_spans(self, spans: np.ndarray) -> np.ndarray:
        """Vectorized :meth:`original_span`.

        Parameters
        ----------
        spans : array-like of shape (k, 2), integer
            ``[start, end)`` code-point spans of ``normalized``.

        Returns
        -------
        ndarray of shape (k, 2), int64
            The corresponding spans of ``original``.

        Raises
        ------
        IndexError
            If a span is outside ``[0, len(normalized)]`` or has ``start > end``.
        """
        spans = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
        n = len(self._normalized)
        start, end = spans[:, 0], spans[:, 1]
        if spans.size and (start.min() < 0 or end.max() > n or bool(np.any(start > end))):
            bad = spans[(start < 0) | (end > n) | (start > end)][0]
            raise IndexError(f"span ({bad[0]}, {bad[1]}) is not within 0 <= start <= end <= {n}")
        if self._alignments is None:
            return spans.copy()
        if n == 0:
            return np.zeros_like(spans)
        a = self._alignments
        boundary = np.empty(n + 1, dtype=np.int64)
        boundary[:n] = a[:, 0]
        boundary[n] = a[n - 1, 1]
        out = np.empty_like(spans)
        out[:, 0] = boundary[start]
        out[:, 1] = np.where(end > start, a[np.maximum(end - 1, 0), 1], out[:, 0])
        return out

    def compose(self, after: NormalizedText) -> NormalizedText:
        """Chain a second normalization applied to ``self.normalized``.

        Parameters
        ----------
        after : NormalizedText
            A normalization whose ``original`` is ``self.normalized``.

        Returns
        -------
        NormalizedText
            From ``self.original`` to ``after.normalized``; character ``i`` maps to the original span covering the
            intermediate span ``after.alignments[i]``.

        Raises
        ------
        ValueError
            If ``after.original != self.normalized``.
        """
        if after._original is not self._normalized and after._original != self._normalized:
            raise ValueError("compose: after.original must equal self.normalized")
        if after._alignments is None:
            alignments = self._alignments
            if alignments is None:
                return NormalizedText(self._original, after._normalized, None)
        elif self._alignments is None:
            alignments = after._alignments
        else:
            alignments = self.original_spans(after._alignments)
        return NormalizedText(self._original, after._normalized, alignments)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NormalizedText):
            return NotImplemented
        return (
            self._original == other._original
            and self._normalized == other._normalized
            and (
                (self._alignments is None and other._alignments is None)
                or np.array_equal(self.alignments, other.alignments)
            )
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        def short(s: str) -> str:
            return repr(s) if len(s) <= 40 else repr(s[:37]) + "..."

        return f"NormalizedText(original={short(self._original)}, normalized={short(self._normalized)})"


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
