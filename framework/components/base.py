"""The base of every component: parameters, fitted state, and the artifact files ``save`` writes and ``load`` reads.

Components follow scikit-learn's estimator conventions:

- ``__init__`` only stores its keyword arguments, under the same names, and validates nothing;
- ``fit`` validates, learns, sets attributes whose names end in ``_`` and returns ``self``;
- using a component before ``fit`` (or ``load``) raises :class:`~tokembed.errors.NotFittedError`;
- ``get_params()`` returns exactly the keyword arguments that rebuild an equal, unfitted component; a recipe stores
  nothing else.

Every component class carries ``name``, the key recipes use, and ``kind``. Fitted state is saved as JSON (no pickle)
with :meth:`Component.save` and read back with :meth:`Component.load`; a subclass provides ``_get_state`` and
``_set_state``. Arrays of the state go to a deterministic ``.npz`` beside the JSON.
"""

from __future__ import annotations

import hashlib
import inspect
import io
import os
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ..errors import ArtifactError, NotFittedError, ParameterError, TokembedError
from ..io import atomic_write_bytes, atomic_write_json, npz_bytes, read_json, read_npz

__all__ = ["Component", "ARTIFACT_FORMAT", "ARTIFACT_VERSION", "arrays_path", "read_artifact"]

ARTIFACT_FORMAT = "tokembed"
_SKLEARN_PREFIXES = ("_parent_callback", "_skl_", "_callback_")
ARTIFACT_VERSION = 1


class Component:
    """Common behaviour of every component; subclass :class:`Tokenizer`, :class:`Vectorizer` or :class:`Embedder`."""

    #: The key recipes use (``type: char``). Unique per kind across all installed plugins.
    name: ClassVar[str] = ""
    #: ``"tokenizer"``, ``"vectorizer"`` or ``"embedder"``; set by the kind's base class.
    kind: ClassVar[str] = ""
    #: Parameters that name a file: in a recipe, a relative path given as a str is made absolute against the
    #: recipe file's folder (against the current directory for a ``--set`` value), as corpus paths are.
    path_params: ClassVar[tuple[str, ...]] = ()

    # -- parameters -------------------------------------------------------------------------------------------
    #: Every ``__init__`` parameter's rule, declared once as data: name -> a :mod:`tokembed.params` constraint
    #: (``Interval(int, 1, None)``, ``Options("l2", "l1")``, ``Boolean()``, ``PathLike()``, ...) or a list of
    #: alternatives (``None`` in the list allows None). :meth:`_validate_params` (``fit``), :meth:`check_params`
    #: (``tokembed validate``) and the recipe reader all check values against this one table; a component's own
    #: ``_validate`` keeps only the rules that tie parameters together. The contract suite checks that every
    #: parameter is declared and that the defaults satisfy their declarations.
    param_constraints: ClassVar[dict[str, Any]] = {}

    @classmethod
    def _param_names(cls) -> list[str]:
        """Names of the keyword parameters of ``__init__`` (``*args``/``**kwargs`` are not allowed)."""
        sig = inspect.signature(cls.__init__)
        names = []
        for p in list(sig.parameters.values())[1:]:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise TypeError(f"{cls.__qualname__}.__init__ must list its parameters explicitly, not *{p.name}")
            names.append(p.name)
        return names

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The parameters as passed to ``__init__`` (the objects themselves, as scikit-learn's ``get_params``):
        ``type(c)(**c.get_params())`` is an equal, unfitted component.

        With ``deep=True``, a parameter value that has ``get_params`` itself (an estimator) adds its own
        parameters as ``<name>__<param>``, as scikit-learn does, so that ``GridSearchCV`` can reach them.
        """
        out = {name: getattr(self, name) for name in self._param_names()}
        if deep:
            for name, value in list(out.items()):
                if hasattr(value, "get_params") and not isinstance(value, type):
                    out.update((f"{name}__{k}", v) for k, v in value.get_params().items())
        return out

    def set_params(self, **params: Any) -> "Component":
        """Set parameters by name (``<name>__<param>`` sets a parameter of a nested estimator, as scikit-learn's
        ``set_params``). Values are checked when ``fit`` runs, as in scikit-learn. Returns ``self``.

        Raises
        ------
        ValueError
            For a name that is not a parameter (the message lists the valid ones).
        """
        valid = set(self._param_names())
        nested: dict[str, dict[str, Any]] = {}
        for key, value in params.items():
            name, _, sub = key.partition("__")
            if name not in valid:
                raise ValueError(f"{type(self).__name__} has no parameter {name!r}; valid: {', '.join(sorted(valid))}")
            if sub:
                nested.setdefault(name, {})[sub] = value
            else:
                setattr(self, name, value)
        for name, sub_params in nested.items():
            getattr(self, name).set_params(**sub_params)
        return self

    def __repr__(self) -> str:
        defaults = {
            p.name: p.default for p in list(inspect.signature(type(self).__init__).parameters.values())[1:]
        }
        shown = [f"{k}={v!r}" for k, v in self.get_params(deep=False).items()
                 if not _same(defaults.get(k, inspect._empty), v)]
        return f"{type(self).__name__}({', '.join(shown)})"

    def __sklearn_tags__(self) -> Any:
        """scikit-learn's estimator tags, which its ``Pipeline`` and ``GridSearchCV`` read (built only when
        scikit-learn asks: tokembed does not import it). A component is an unsupervised transformer where it has
        ``transform``; a first step takes text or token lists (``input_kind == "documents"``), a later one a dense
        or sparse matrix."""
        from sklearn.utils import InputTags, Tags, TargetTags, TransformerTags

        documents = getattr(self, "input_kind", "documents") == "documents"
        return Tags(estimator_type=None, target_tags=TargetTags(required=False),
                    transformer_tags=TransformerTags() if callable(getattr(self, "transform", None)) else None,
                    input_tags=InputTags(one_d_array=documents, two_d_array=not documents, sparse=not documents,
                                         string=documents),
                    non_deterministic="seed" not in self._param_names())

    @classmethod
    def parameter_errors(cls, params: dict[str, Any]) -> list[ParameterError]:
        """Every value of ``params`` that breaks its declaration in :attr:`param_constraints`, one
        :class:`~tokembed.errors.ParameterError` each (all of them, not only the first). Parameters not declared,
        and parameters not in ``params``, are not checked."""
        from ..params import parameter_errors

        return parameter_errors(cls.name, cls.param_constraints, params)

    def _validate_params(self) -> None:
        """The checks ``fit`` starts with: every parameter against :attr:`param_constraints`, then the rules that
        tie parameters together (:meth:`_validate`).

        Raises
        ------
        ParameterError
            Listing every invalid parameter (``err.errors`` holds one error each), or a rule of :meth:`_validate`.
        """
        from ..params import raise_parameter_errors

        raise_parameter_errors(self.name, self.param_constraints, self.get_params(deep=False))
        self._validate()

    def _validate(self) -> None:
        """The rules between parameters (``min_df <= max_df``) and the checks that read something (a vocabulary
        file exists), run by :meth:`_validate_params` once every parameter is valid on its own; raises
        :class:`~tokembed.errors.ParameterError`. Default: none."""

    @classmethod
    def check_params(cls, params: dict[str, Any]) -> list[tuple[str | None, str]]:
        """Problems with ``params`` that can be found before any work (``tokembed validate`` reports them).

        Returns a list of ``(parameter, message)`` pairs: ``parameter`` is the name of the parameter the problem is
        about (the recipe checker reports it at that key's line), or None for a problem of the whole component;
        ``message`` is the full message (as ``str`` of the error ``fit`` would raise).

        First every given value is checked against :attr:`param_constraints` (every problem, one per parameter);
        the parameters found invalid are set back to their defaults, and the component's :meth:`_validate` (the
        rules between parameters) runs on the rest. A :class:`~tokembed.errors.ParameterError` it raises (or another
        :class:`TokembedError` with a ``param`` attribute, such as a ``DataError`` about a file parameter) is one
        problem about that parameter; that parameter is then set back to its default and the checks run again, so
        every problem is found. A :class:`TokembedError` without ``param`` is one problem of the whole component and
        ends the checks. Override for checks that need more (call ``super().check_params(params)`` first).
        """
        errors = cls.parameter_errors(params)
        problems: list[tuple[str | None, str]] = [(e.param, str(e)) for e in errors]
        params = {k: v for k, v in params.items() if k not in {e.param for e in errors}}
        if cls._validate is Component._validate:
            return problems
        while True:
            try:
                cls(**params)._validate()
            except TokembedError as exc:
                param = getattr(exc, "param", None)  # a ParameterError, or another error tagged with .param
                problems.append((param, str(exc)))
                if param not in params:
                    return problems
                del params[param]  # back to its default: look for the next problem
            except (TypeError, ValueError):  # left to fit, which reports it in context
                return problems
            else:
                return problems

    @classmethod
    def warmup(cls) -> None:
        """Compile (or load from Numba's cache) every kernel this component uses; a no-op when it has none.

        ``tokembed warmup`` calls it for every registered component, so a user's first real run does not pay
        for compilation.
        """

    @classmethod
    def warmup_shared(cls) -> list[str]:
        """Warm-up steps of machinery this component shares with others, as ``"module:function"`` names of
        module-level functions without arguments (``["tokembed.plugins._subword:warmup_merge_loop"]``).

        ``tokembed warmup`` runs every component's shared steps first (each name once, in parallel processes),
        then every component's :meth:`warmup` (in parallel too), which then loads the shared kernels from Numba's
        cache instead of compiling them in several processes at once. Default: none.
        """
        return []

    # -- statistics that merge (optional) ----------------------------------------------------------------------
    def partial_counts(self, X: Any) -> Any:
        """The statistics ``fit`` learns from, counted over ``X`` (part of the training data), as partial counts
        that merge. Implement it with :meth:`fit_counts` when ``fit`` starts by counting (words, document
        frequencies, co-occurrences): the corpus-statistics engine (:mod:`tokembed.engine`) then counts the parts
        of a corpus apart, on threads or a Dask cluster, and merges them in corpus order.

        It must not change the instance (threads count parts with one instance at the same time). The result
        must be picklable (it travels between processes) and have ``merge(other)``, returning the
        counts of ``X`` followed by ``other``'s data; merging must be associative, and counts of an empty part
        must change nothing. The rule the contract suite checks: ``fit_counts(partial_counts(a).merge(
        partial_counts(b)))`` learns exactly what ``fit(a + b)`` learns (the same artifact bytes). Results must not
        depend on how the data was cut: ids are assigned in :meth:`fit_counts`, ties broken by the token;
        floating-point sums are made exact or done in one fixed order there.
        """
        raise NotImplementedError(f"{type(self).__name__} does not count its training data in partial counts")

    def fit_counts(self, counts: Any) -> "Component":
        """Fit from the merged :meth:`partial_counts` of the whole training data; returns self."""
        raise NotImplementedError(f"{type(self).__name__} does not fit from partial counts")

    def count_shards(self) -> int:
        """Into how many shards the next pass's partial counts split (their ``shard(k, n)`` and ``concat``), each
        merged by its own tree on a cluster, so that no merge task holds all of a very large count (co-occurrence
        rows of a large vocabulary). The result does not depend on it. Default 1: one tree."""
        return 1

    def counting_passes(self) -> int:
        """Passes over the training data that fitting from counts takes: 1 by default; 2 for a method that must
        fix a vocabulary before counting what depends on it (co-occurrence: the token counts, then the pairs).

        With ``k`` passes, the engine calls ``fit_counts(merged partial_counts)`` ``k`` times over the same
        data; :meth:`partial_counts` counts the pass that follows the instance's last ``fit_counts`` (pass 1 on a
        new or fully fitted instance), and the rule of :meth:`partial_counts` holds for the ``k`` passes
        together."""
        return 1

    def fits_on_counts(self) -> bool:
        """True when ``fit(X)`` is ``fit_counts(partial_counts(X))`` for this instance: by default, when the class
        implements both. An instance whose parameters make counting pointless (a vocabulary read from a file)
        returns False, and is fitted with ``fit``."""
        cls = type(self)
        return cls.partial_counts is not Component.partial_counts and cls.fit_counts is not Component.fit_counts

    # -- fitted state -----------------------------------------------------------------------------------------
    def is_fitted(self) -> bool:
        """True when ``fit`` (or ``load``) has set the learned attributes (public names ending in ``_``)."""
        return any(k.endswith("_") and not k.startswith("_") for k in vars(self))

    def _reset(self) -> None:
        """Forget everything ``fit`` set (every attribute that is not a parameter), keeping what a scikit-learn
        meta-estimator attached around the call (its callback context: ``_parent_callback_ctx``, ``_skl_*``,
        ``_callback_*``), which it deletes itself after ``fit``."""
        params = set(self._param_names())
        for name in [k for k in vars(self) if k not in params and not k.startswith(_SKLEARN_PREFIXES)]:
            delattr(self, name)

    def _check_is_fitted(self) -> None:
        if not self.is_fitted():
            raise NotFittedError(
                f"this {type(self).__name__} ({self.kind} {self.name!r}) is not fitted yet: "
                "call fit(...) or load(...) before using it"
            )

    # -- save / load ------------------------------------------------------------------------------------------
    def _get_state(self) -> dict[str, Any]:
        """The learned state as JSON-able data (override)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement _get_state")

    def _set_state(self, state: dict[str, Any]) -> None:
        """Restore the learned state written by ``_get_state`` (override)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement _set_state")

    def to_dict(self) -> dict[str, Any]:
        """The artifact as JSON-able data: format, kind, type, params and learned state."""
        self._check_is_fitted()
        return {
            "format": ARTIFACT_FORMAT,
            "format_version": ARTIFACT_VERSION,
            "kind": self.kind,
            "type": self.name,
            "params": self.get_params(deep=False),
            "state": self._get_state(),
        }

    def save(self, path: str | os.PathLike) -> Path:
        """Save the fitted component as JSON (``<label>.tokembed.json`` by convention), atomically.

        Arrays in the state (NumPy arrays among the top-level values of ``_get_state()``: vectors, matrices) are
        not written into the JSON: they go to an ``.npz`` file beside it (``<label>.tokembed.npz``, see
        :func:`arrays_path`), written first and deterministically, whose SHA-256 the JSON records; :meth:`load`
        checks it. The JSON does not name the file, so the same state saved under two labels gives equal bytes.

        Raises
        ------
        NotFittedError
            If the component is not fitted.
        TokembedError
            If a float array of the state holds NaN or infinity (nothing is written).
        """
        data = self.to_dict()
        state = data["state"]
        arrays = {k: v for k, v in state.items() if isinstance(v, np.ndarray)}
        if not arrays:
            return atomic_write_json(path, data)
        for key, arr in arrays.items():
            if arr.dtype.kind in "fc" and not np.isfinite(arr).all():
                raise TokembedError(f"{self.name}: the fitted {key} holds NaN or infinity; nothing was saved")
        blob = npz_bytes(arrays)
        atomic_write_bytes(arrays_path(path), blob)
        data["state"] = {k: v for k, v in state.items() if k not in arrays}
        # the file is found from the JSON's own name (arrays_path), so the JSON's bytes do not depend on the label
        data["arrays"] = {"names": list(arrays), "sha256": hashlib.sha256(blob).hexdigest()}
        return atomic_write_json(path, data)

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "<dict>") -> "Component":
        """Rebuild a component from :meth:`to_dict` data; raises :class:`ArtifactError` when it does not fit."""
        if not isinstance(data, dict) or data.get("format") != ARTIFACT_FORMAT:
            raise ArtifactError(f"{source}: not a tokembed artifact (no \"format\": \"{ARTIFACT_FORMAT}\")")
        version = data.get("format_version")
        if version != ARTIFACT_VERSION:
            raise ArtifactError(
                f"{source}: artifact format version {version!r}; this tokembed reads version {ARTIFACT_VERSION}"
            )
        if data.get("kind") != cls.kind or (cls.name and data.get("type") != cls.name):
            raise ArtifactError(
                f"{source}: holds a {data.get('kind')} of type {data.get('type')!r}, "
                f"not a {cls.kind} of type {cls.name!r}; use tokembed.load() to dispatch on the type"
            )
        params, state = data.get("params"), data.get("state")
        if not isinstance(params, dict) or not isinstance(state, dict):
            raise ArtifactError(f"{source}: \"params\" and \"state\" must be objects")
        try:
            obj = cls(**params)
        except TypeError as exc:
            raise ArtifactError(f"{source}: parameters do not match {cls.__name__}: {exc}") from None
        try:
            obj._set_state(state)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            if isinstance(exc, TokembedError):
                raise
            raise ArtifactError(f"{source}: broken {cls.name} state: {type(exc).__name__}: {exc}") from None
        return obj

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Component":
        """Load a component saved by :meth:`save`.

        Raises
        ------
        ArtifactError
            If the file is missing, not JSON, truncated, of another component type, or of an unknown version.
        """
        return cls.from_dict(read_artifact(path), source=str(path))


def arrays_path(path: str | os.PathLike) -> Path:
    """The ``.npz`` file that holds the arrays of the artifact ``path``: ``x.tokembed.json`` -> ``x.tokembed.npz``
    (any other name gets ``.npz`` appended)."""
    p = Path(path)
    return p.with_suffix(".npz") if p.suffix == ".json" else p.with_name(p.name + ".npz")


def read_artifact(path: str | os.PathLike) -> Any:
    """The data :meth:`Component.save` wrote to ``path``, the arrays of its ``.npz`` file back in ``"state"``.

    Raises
    ------
    ArtifactError
        If the JSON is missing or broken, or its ``.npz`` file is missing, broken or not the one written with it
        (its SHA-256 differs).
    """
    data = read_json(path)
    if not isinstance(data, dict) or "arrays" not in data:
        return data
    ref = data.pop("arrays")
    if not (isinstance(ref, dict) and isinstance(ref.get("sha256"), str) and isinstance(data.get("state"), dict)):
        raise ArtifactError(f"{path}: broken \"arrays\" entry (it needs \"sha256\")")
    side = arrays_path(path)
    try:
        blob = side.read_bytes()
    except OSError as exc:
        raise ArtifactError(f"{path}: its arrays file {side} cannot be read ({exc.strerror or exc}); keep the two "
                            "files together") from None
    if hashlib.sha256(blob).hexdigest() != ref["sha256"]:
        raise ArtifactError(f"{path}: its arrays file {side} is not the one saved with it (SHA-256 differs)")
    data["state"].update(read_npz(io.BytesIO(blob), what=f"arrays file {side}"))
    return data


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # arrays and the like
        return False
