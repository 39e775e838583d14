"""The tokenizer-metric contract: :class:`Metric`, :class:`ParallelMetric` and the counts every metric shares
(:class:`PassStats`), with the helpers that present values.

How metrics are computed (one shared encoding pass) is :mod:`tokembed.metrics.run`; the built-in metrics are
:mod:`tokembed.metrics.builtin`; :func:`tokembed.testing.check_metric` checks a class against this contract.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

import numpy as np

from ..encoding import Encoding

__all__ = ["Metric", "ParallelMetric", "PassStats", "SlowMetricWarning", "clean_value", "format_value",
           "unknown_id", "check_parallel", "ratio", "UNSPACED_SCRIPTS", "SCOPES", "NAME_PATTERN"]

#: Scripts written without spaces between words. When their letters are more than half of a corpus's letters, the
#: whitespace-word metrics (fertility, continued words) are not defined for it and are reported as n/a.
UNSPACED_SCRIPTS = ("Han", "Hiragana", "Katakana", "Thai", "Lao", "Khmer", "Myanmar")

SCOPES = ("corpus", "parallel")
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]*$")


# ---------------------------------------------------------------------------------------------------------------
# the contract
# ---------------------------------------------------------------------------------------------------------------
class SlowMetricWarning(UserWarning):
    """A metric is measured on the per-document path (:meth:`Metric.update`), which costs a second encoding of
    every chunk and a Python call per document."""


def unknown_id(tokenizer: Any) -> int | None:
    """The id of the tokenizer's unknown token (attribute ``unk_token``), or None without one."""
    unk = getattr(tokenizer, "unk_token", None)
    return tokenizer.token_to_id(unk) if isinstance(unk, str) else None


@dataclass(frozen=True)
class PassStats:
    """Counts shared by every metric, over the documents of one encoding pass.

    Attributes
    ----------
    documents : int
        Documents encoded.
    characters : int
        Unicode code points (``len(doc)`` summed).
    bytes : int
        UTF-8 bytes (lone surrogates encoded with ``surrogatepass``).
    words : int
        Whitespace-separated words (``len(doc.split())`` summed).
    tokens : int
        Tokens produced (no special token added: documents are encoded with ``add_special_tokens=False``).
    letters : int
        Letters (Unicode category L).
    unspaced_letters : int
        Letters of the scripts in :data:`UNSPACED_SCRIPTS`.
    unknown : int
        Tokens equal to the tokenizer's unknown token (:func:`unknown_id`; 0 without one).
    seconds : float
        Wall time spent encoding (``encode_ids`` of each chunk) during the pass, in seconds: summed over chunks,
        so with chunks measured on several threads it is the time of one thread's worth of work.
    """

    documents: int = 0
    characters: int = 0
    bytes: int = 0
    words: int = 0
    tokens: int = 0
    letters: int = 0
    unspaced_letters: int = 0
    unknown: int = 0
    seconds: float = 0.0

    @property
    def has_words(self) -> bool:
        """True when whitespace words are meaningful: some word, and at most half the letters in unspaced scripts."""
        return self.words > 0 and 2 * self.unspaced_letters <= self.letters

    def as_dict(self) -> dict[str, Any]:
        """The counts (``seconds`` left out: it is a timing figure)."""
        out = asdict(self)
        del out["seconds"]
        return out


class Metric:
    """Base class of a tokenizer metric: an accumulator over the encodings of one corpus.

    A subclass sets the class attributes below, then implements :meth:`update_chunk` (called once per chunk of
    documents with the chunk's flat arrays, :class:`~tokembed.metrics.chunk.Chunk`) and :meth:`result`. An instance
    is built per (tokenizer, corpus) as ``cls(tokenizer)``; a subclass that overrides ``__init__`` calls
    ``super().__init__(tokenizer)``. A metric that keeps no state of its own (its value comes from
    :class:`PassStats`) implements :meth:`result` only.

    The slow path: a metric that implements :meth:`update` (one call per document, with its
    :class:`~tokembed.encoding.Encoding`) and not :meth:`update_chunk`, or that sets ``per_document = True``, is fed
    document by document from ``encode_batch``, which costs a second encoding of every chunk and a Python call per
    document. Such a metric is left out of the default set (it runs only when a recipe or a call names it), and a
    run that measures it warns (:class:`SlowMetricWarning`).

    Attributes
    ----------
    name : str
        Unique key (``[a-z][a-z0-9_]*``), the column name in JSON and CSV.
    label : str
        Short column header for tables (default: ``name``).
    unit : str
        Unit of the value (``"tokens / word"``, ``"share of tokens"``, ``"MB/s"``).
    definition : str
        One or two sentences: exactly what is computed.
    source : str
        The paper or reference implementation the metric follows (or "tokembed" for a plain count).
    higher_is_better : bool or None
        Which way is better, for highlighting the best value; None when neither is (vocabulary size).
    display : str
        Format spec for tables (``",d"``, ``".3f"``, ``".2%"``); booleans print as yes/no, None as n/a.
    scope : {"corpus", "parallel"}
        ``"parallel"`` only for :class:`ParallelMetric`.
    timing : bool
        The value depends on wall time (left out of outputs that must be identical across runs; not highlighted on a
        corpus too small to time).
    compression : bool
        The value rewards fewer tokens, which a tokenizer also gets by emitting unknown tokens: comparisons do not
        call it best for a tokenizer whose unknown-token rate is high.
    repeat : bool
        The metric needs a second, independent encoding pass (:meth:`update_repeat`, per document; slow path).
    per_document : bool
        Feed this metric through :meth:`update` (the slow path) even if it has :meth:`update_chunk`.
    argument : str
        What the metric's argument is (a file, say), or empty when it takes none. A metric list names it as
        ``name:ARGUMENT``; :meth:`configure` binds it, and the metric reads it as ``self.given``.
    argument_required : bool
        The metric has no value without its argument: it is left out of the default set.
    """

    name: ClassVar[str] = ""
    label: ClassVar[str] = ""
    unit: ClassVar[str] = ""
    definition: ClassVar[str] = ""
    source: ClassVar[str] = ""
    higher_is_better: ClassVar[bool | None] = None
    display: ClassVar[str] = ".3f"
    scope: ClassVar[str] = "corpus"
    timing: ClassVar[bool] = False
    compression: ClassVar[bool] = False
    repeat: ClassVar[bool] = False
    per_document: ClassVar[bool] = False
    argument: ClassVar[str] = ""
    argument_required: ClassVar[bool] = False
    given: ClassVar[str | None] = None

    @classmethod
    def configure(cls, value: str) -> "type[Metric]":
        """A subclass with the argument ``value`` bound (read as ``self.given``); the same name.

        Raises
        ------
        TokembedError
            If the metric takes no argument, or ``value`` is empty.
        """
        from ..errors import TokembedError

        if not cls.argument:
            raise TokembedError(f"metric {cls.name!r} takes no argument (got {cls.name}:{value})")
        if not isinstance(value, str) or not value.strip():
            raise TokembedError(f"metric {cls.name!r}: give {cls.argument} as {cls.name}:VALUE")
        return type(cls.__name__, (cls,), {"given": value, "__module__": cls.__module__,
                                           "__qualname__": cls.__qualname__})

    @classmethod
    def check_argument(cls, value: str) -> None:
        """Check the argument ``value`` before any work (``tokembed validate``, and before a comparison encodes):
        a metric that reads a file reads it here, so that a missing or malformed file is reported at the recipe's
        metric list rather than after every tokenizer is trained and measured. Default: nothing to check.

        Raises
        ------
        TokembedError
            If the argument cannot be used.
        """

    def __init__(self, tokenizer: Any):
        self.tokenizer = tokenizer

    def update_chunk(self, chunk: Any) -> None:
        """Take one chunk of documents and their encoding as flat arrays (a :class:`~tokembed.metrics.chunk.Chunk`:
        ids, spans, document boundaries, per-document counts, word spans). Chunks come in document order, each
        once. The default ignores it (a metric computed from :class:`PassStats`)."""

    def prepare_chunk(self, chunk: Any) -> None:
        """Optional: work on a chunk that reads no state of the metric, done on the threads that prepare the chunks
        (:meth:`tokembed.metrics.MetricRun.prepare`) before :meth:`update_chunk` takes it in document order. It
        stores what it computes on the chunk (:meth:`~tokembed.metrics.chunk.Chunk.cached`), where
        :meth:`update_chunk` reads it, so it must not change the metric (several threads call it at once) and
        :meth:`update_chunk` must give the same result whether it ran or not. The default does nothing."""

    def update(self, doc: str, encoding: Encoding) -> None:
        """The slow path: take one document and its encoding (``add_special_tokens=False``). Called only for a
        metric on the per-document path (:meth:`uses_documents`). The default ignores them."""

    @classmethod
    def uses_documents(cls) -> bool:
        """True when the metric is fed document by document (:meth:`update`, the slow path): ``per_document`` is
        set, or the class implements :meth:`update` and not :meth:`update_chunk`."""
        return bool(cls.per_document) or (cls.update is not Metric.update and cls.update_chunk is Metric.update_chunk)

    def update_repeat(self, doc: str, encoding: Encoding) -> None:
        """Take one document of the second pass (only called when ``repeat`` is True)."""

    def result(self, stats: PassStats) -> Any:
        """The value: a float, an int, a bool, or None when the metric is not defined for this corpus."""
        raise NotImplementedError(f"{type(self).__name__} does not implement result()")

    def extras(self) -> dict[str, Any]:
        """JSON-able details kept beside the value in the comparison's JSON (default: none)."""
        return {}

    # -- on the corpus-statistics engine (optional) ------------------------------------------------------------
    def merge(self, other: "Metric") -> "Metric":
        """A NEW metric holding this one's state followed by ``other``'s (the same metric and tokenizer, fed the
        documents that come after this one's): what lets ``tokembed run`` measure the partitions of a corpus on
        the engine's workers and merge them, instead of reading the corpus on one machine. Neither input may be
        changed (a cluster may retry a merge). ``result`` of the merge must equal ``result`` after one pass over
        all the documents. The default serves a metric that keeps no state of its own (its result comes from the
        shared counts); any other metric implements it, or is measured on the client.
        """
        if not self._stateless():
            raise NotImplementedError(f"{type(self).__name__} keeps state and does not implement merge")
        return self

    def copy(self) -> "Metric":
        """A shallow copy that keeps the tokenizer (``copy.copy`` goes through :meth:`__getstate__`, which drops
        it)."""
        out = object.__new__(type(self))
        vars(out).update(vars(self))
        return out

    def _stateless(self) -> bool:
        return set(vars(self)) <= {"tokenizer"}

    def mergeable(self) -> bool:
        """True when :meth:`merge` is implemented (or the metric keeps no state of its own)."""
        return type(self).merge is not Metric.merge or self._stateless()

    def __getstate__(self) -> dict[str, Any]:
        """The state without the tokenizer (a metric travels between processes; the tokenizer is attached again
        on arrival, :meth:`tokembed.metrics.MetricRun.attach`)."""
        state = dict(vars(self))
        state["tokenizer"] = None
        return state

    @classmethod
    def describe(cls) -> dict[str, Any]:
        """The metric's metadata as a JSON-able dict."""
        return {
            "name": cls.name,
            "label": cls.label or cls.name,
            "unit": cls.unit,
            "definition": cls.definition,
            "source": cls.source,
            "higher_is_better": cls.higher_is_better,
            "display": cls.display,
            "scope": cls.scope,
            "timing": cls.timing,
            "compression": cls.compression,
        }


class ParallelMetric(Metric):
    """A metric over a parallel set: aligned documents (chapters) in several languages, one reference language.

    Each language is encoded as a corpus (``update`` sees its documents in order); :meth:`result` returns None, and
    :meth:`combine` receives the finished accumulators of all languages and returns one value per language.
    """

    scope: ClassVar[str] = "parallel"

    def result(self, stats: PassStats) -> Any:
        return None

    @classmethod
    def combine(cls, runs: dict[str, "ParallelMetric"], reference: str) -> dict[str, Any]:
        """Values per language, from the accumulators ``runs`` (language -> accumulator) of one tokenizer."""
        raise NotImplementedError(f"{cls.__name__} does not implement combine()")


def check_parallel(chapters: dict[str, int], reference: str, metric: str) -> None:
    """Check that a parallel metric's runs (language -> chapters measured) cover the reference and hold equally
    many chapters.

    Raises
    ------
    TokembedError
        If the reference is missing or the languages have different numbers of chapters.
    """
    from ..errors import TokembedError

    if reference not in chapters:
        raise TokembedError(f"{metric}: the reference language {reference!r} is not in the parallel set "
                            f"({', '.join(chapters)})")
    for lang, n in chapters.items():
        if n != chapters[reference]:
            raise TokembedError(f"{metric}: {lang!r} has {n} chapters but the reference {reference!r} has "
                                f"{chapters[reference]}; a parallel set needs aligned chapters")


def ratio(a: float, b: float) -> float | None:
    """``a / b``, or None when ``b`` is 0 (a metric not defined for the corpus)."""
    return a / b if b else None


# ---------------------------------------------------------------------------------------------------------------
# values
# ---------------------------------------------------------------------------------------------------------------
def clean_value(value: Any, digits: int = 6) -> Any:
    """A JSON-stable value: numpy scalars to Python, floats rounded, NaN and infinities to None."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value) + 0.0  # + 0.0 turns -0.0 into 0.0
        return round(value, digits) + 0.0 if math.isfinite(value) else None
    raise TypeError(f"a metric value must be a number, a bool or None, got {type(value).__name__}")


# ---------------------------------------------------------------------------------------------------------------
# presentation
# ---------------------------------------------------------------------------------------------------------------
def _formats(value: Any, spec: str) -> bool:
    try:
        format(value, spec)
    except (ValueError, TypeError):
        return False
    return True


def format_value(value: Any, display: str = ".3f") -> str:
    """A value as tables print it: n/a for None, yes/no for booleans, else ``format(value, display)``."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    try:
        return format(value, display)
    except (ValueError, TypeError):
        return str(value)


# ---------------------------------------------------------------------------------------------------------------
# the metric contract, for tokembed's tests and third-party plugins
# ---------------------------------------------------------------------------------------------------------------
