"""Parallel sets: the same chapters in several languages (:class:`ParallelSet`), and opening a recipe's parallel
spec."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..errors import TokembedError
from .files import read_text


@dataclass(frozen=True)
class ParallelSet:
    """Aligned texts in several languages: ``texts[lang][i]`` is chapter ``i`` in language ``lang``.

    Parameters
    ----------
    texts : mapping of str to list of str
        Language -> chapters, all languages with the same number of chapters, in the same order.
    reference : str
        The language the premium divides by (it gets premium 1).
    name : str
        A label for reports.

    Raises
    ------
    TokembedError
        If the reference is missing, a language has no chapter, or the chapter counts differ.
    """

    texts: Mapping[str, Sequence[str]]
    reference: str
    name: str = "parallel"

    def __post_init__(self) -> None:
        texts = {str(k): list(v) for k, v in dict(self.texts).items()}
        object.__setattr__(self, "texts", texts)
        if self.reference not in texts:
            raise TokembedError(f"parallel set {self.name!r}: the reference language {self.reference!r} is not one of "
                                f"its languages ({', '.join(texts) or 'none'})")
        counts = {lang: len(chapters) for lang, chapters in texts.items()}
        if not counts[self.reference]:
            raise TokembedError(f"parallel set {self.name!r}: the reference {self.reference!r} has no chapter")
        wrong = {lang: n for lang, n in counts.items() if n != counts[self.reference]}
        if wrong:
            raise TokembedError(
                f"parallel set {self.name!r}: chapters must be aligned, but the reference {self.reference!r} has "
                f"{counts[self.reference]} and " + ", ".join(f"{lang!r} has {n}" for lang, n in wrong.items()))
        for lang, chapters in texts.items():
            for i, text in enumerate(chapters):
                if not isinstance(text, str):
                    raise TokembedError(f"parallel set {self.name!r}: chapter {i} of {lang!r} is "
                                        f"{type(text).__name__}, not str")

    @classmethod
    def coerce(cls, value: Any) -> "ParallelSet":
        """A :class:`ParallelSet` from itself or from ``{"reference": LANG, "texts": {LANG: [...], ...}}``."""
        if isinstance(value, cls):
            return value
        if isinstance(value, Mapping) and "reference" in value and "texts" in value:
            extra = set(value) - {"reference", "texts", "name"}
            if extra:
                raise TokembedError(f"parallel: unknown keys {sorted(extra)}; expected reference, texts, name")
            return cls(value["texts"], value["reference"], value.get("name", "parallel"))
        raise TokembedError('parallel must be a ParallelSet or {"reference": LANG, "texts": {LANG: [chapters]}}')


def open_parallel(spec: Any) -> ParallelSet:
    """The chapters of a recipe's parallel-set spec (a :class:`tokembed.recipe.ParallelSpec`) as a
    :class:`ParallelSet`: each chapter file is one document.

    Raises
    ------
    CorpusError
        If a chapter cannot be read or decoded.
    """
    texts = {lang: [read_text(spec.root / lang / ch, spec.errors) for ch in spec.chapters] for lang in spec.languages}
    return ParallelSet(texts, spec.reference, spec.name)
