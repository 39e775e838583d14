"""Errors raised by tokembed.

Every error a user can cause derives from :class:`TokembedError`. The command line prints such an error as one
message and exits with status 2; any other exception is a bug and shows a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "VocabularySizeWarning",
    "SpecialTokenInCorpusWarning",
    "CorpusReadError",
    "EngineError",
    "TokembedError",
    "RecipeError",
    "Problem",
    "UnknownComponentError",
    "PluginError",
    "NotFittedError",
    "CorpusError",
    "ArtifactError",
    "DataError",
    "ParameterError",
    "EmptyVocabularyError",
    "with_context",
]


class TokembedError(Exception):
    """Base class of every error tokembed raises on bad input, bad configuration or a broken plugin."""


@dataclass(frozen=True)
class Problem:
    """One problem of a recipe, as data.

    Attributes
    ----------
    message : str
        What is wrong (and, where it can, what to do).
    file : str or None
        The recipe file (or ``<string>``); None for a problem that is not located in a file.
    line, column : int or None
        1-based position of the offending value in ``file``.
    path : str
        The dotted path of the value (``tokenizers.bpe8k.vocab_size``); empty for the whole recipe.
    origin : str or None
        ``--set PATH=VALUE`` when the value came from a command-line override (then it has no line).

    ``str(problem)`` is the line the CLI prints: ``FILE:LINE:COL: dotted.path: message`` (``--set PATH=VALUE:
    dotted.path: message`` for an override).
    """

    message: str
    file: str | None = None
    line: int | None = None
    column: int | None = None
    path: str = ""
    origin: str | None = None

    @property
    def where(self) -> str:
        """``FILE:LINE:COL``, ``--set PATH=VALUE``, ``FILE``, or empty."""
        if self.origin is not None:
            return self.origin
        if self.file is None:
            return ""
        if self.line is None:
            return self.file
        return f"{self.file}:{self.line}:{self.column}"

    def __str__(self) -> str:
        parts = [p for p in (self.where, self.path) if p]
        return ": ".join([*parts, self.message])


class RecipeError(TokembedError, ValueError):
    """A recipe is invalid.

    ``problems`` holds one :class:`Problem` per problem (file, line, column, dotted path, message); ``str(err)`` is
    their lines (``FILE:LINE:COL: dotted.path: message``) joined by newlines. A plain string given instead of
    problems becomes one :class:`Problem` holding it as its message.
    """

    def __init__(self, problems: "list[Problem | str] | Problem | str"):
        if isinstance(problems, (str, Problem)):
            problems = [problems]
        self.problems: list[Problem] = [p if isinstance(p, Problem) else Problem(str(p)) for p in problems]
        super().__init__("\n".join(map(str, self.problems)))


class UnknownComponentError(TokembedError, KeyError):
    """No registered component has the requested kind and name.

    The message names the available components and the closest match.
    """

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class PluginError(TokembedError):
    """A plugin is broken: it failed to import, its hook raised, or two plugins claim one name."""


class ParameterError(TokembedError, ValueError):
    """A component parameter is invalid. Carries the problem as data, so that ``tokembed validate`` can place it at
    the parameter's line in a recipe without reading the message back.

    Attributes
    ----------
    component : str
        The component's registry name (``"tfidf"``), or ``""``.
    param : str or None
        The parameter the problem is about (``"min_df"``), or None when it concerns several together.
    problem : str
        The problem itself, without the component's name (``"must be an int >= 1, got 'x'"``).

    ``str(err)`` is ``"<component>: <param> <problem>"`` (no space before a problem starting with ``=`` or ``:``), or
    ``"<component>: <problem>"`` without a parameter.
    """

    def __init__(self, component: str, param: str | None, problem: str):
        self.component, self.param, self.problem = component, param, problem
        #: Every problem found together (this one first); ``(self,)`` for a single problem.
        self.errors: tuple[ParameterError, ...] = (self,)
        head = f"{component}: " if component else ""
        super().__init__(f"{head}{_param_problem(param, problem)}")

    @classmethod
    def of_all(cls, errors: "list[ParameterError]") -> "ParameterError":
        """One error to raise for several problems found together: the first (``param`` is the first's), its
        message listing them all (``"glove: 2 invalid parameters: x_max must be ...; alpha must be ..."``) and
        ``errors`` holding each."""
        if len(errors) == 1:
            return errors[0]
        first = errors[0]
        text = "; ".join(_param_problem(e.param, e.problem) for e in errors)
        out = cls(first.component, first.param, first.problem)
        head = f"{first.component}: " if first.component else ""
        Exception.__init__(out, f"{head}{len(errors)} invalid parameters: {text}")
        out.errors = tuple(errors)
        return out


def _param_problem(param: str | None, problem: str) -> str:
    sep = "" if problem[:1] in ("=", ":") else " "  # "vocab_size=3 is ...", "normalizer: ..."
    return f"{param}{sep}{problem}" if param else problem


class EmptyVocabularyError(TokembedError, ValueError):
    """Fitting left no feature or vocabulary entry; the message names the filter that removed everything and its
    value (stop words, ``min_df``, ``max_df``, ``max_features``, ``min_count``, the token pattern)."""


class NotFittedError(TokembedError, ValueError):
    """A component was used before ``fit`` (or ``load``)."""


class CorpusError(TokembedError, ValueError):
    """A corpus is empty, missing or cannot be decoded."""


class ArtifactError(TokembedError, ValueError):
    """A saved artifact cannot be read: missing, truncated, of another kind or of an unknown format version."""


class CorpusReadError(CorpusError):
    """A corpus's files cannot be read as documents (found while reading them: undecodable bytes, a broken file, an
    empty corpus), as opposed to a component finding nothing to learn in documents that were read."""


class EngineError(TokembedError):
    """The corpus-statistics engine failed: the Dask extra is missing, the scheduler does not answer, or a task
    failed past the engine's retry limit (the message names the partition: file and byte range)."""


class DataError(TokembedError):
    """A named dataset is missing, cannot be fetched, or failed its checksum."""


class SpecialTokenInCorpusWarning(UserWarning):
    """A special token is also an entry of the training corpus (a character, a word): a string has one id, the
    special token's, and a special token typed in a text is plain text, so that entry encodes as ``unk_token``."""


class VocabularySizeWarning(UserWarning):
    """Training ended with a vocabulary of another size than ``vocab_size`` (the message says why)."""


def with_context(exc: TokembedError, message: str) -> TokembedError:
    """A copy of ``exc`` (same class, same attributes: ``param``, ``epoch``, ...) whose message is ``message``: how
    an error is located at its recipe stage or corpus without losing what it carries. An error class whose
    constructor takes other arguments than one message is copied instead of rebuilt."""
    try:
        new = type(exc)(message)
    except TypeError:  # not built from a message: an instance of the class, its attributes copied
        new = type(exc).__new__(type(exc))
        new.__dict__.update(vars(exc))
    else:
        new.__dict__.update({k: v for k, v in vars(exc).items() if k not in vars(new)})
    new.args = (message,)
    return new
