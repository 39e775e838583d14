"""The contract checks of declared parameters and of scikit-learn's estimator protocol (``get_params(deep)``,
``set_params``, ``fit(X, y=None)``), so that ``sklearn.base.clone``, ``Pipeline`` and ``GridSearchCV`` work with a
component. Each takes a component CLASS, as every check of :mod:`tokembed.testing.checks` does."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from ..params import check_declared, parameter_errors
from ._support import _defaults, _fail, _fit_data, _make, _param_names, _same, _short, contract_params


def check_param_constraints(cls: type, fit_data: Any = None, inputs: Any = None) -> None:
    """``param_constraints`` is well formed (each value a :mod:`tokembed.params` constraint or a list of them, each
    key a parameter); when the class declares any parameter it declares every one (a rule no table holds is a rule
    checked nowhere); the defaults and the suite's parameters satisfy their declarations."""
    names = _param_names(cls)
    bugs = check_declared(cls, names)
    if bugs:
        _fail(cls, "; ".join(bugs))
    table = getattr(cls, "param_constraints", None) or {}
    if table:
        missing = [n for n in names if n not in table]
        if missing:
            _fail(cls, f"param_constraints declares some parameters but not {', '.join(missing)}: declare every "
                       "parameter (tokembed.params: Interval, Options, Boolean, Text, PathLike, ListOf, ...)")
    for label, values in (("default", _defaults(cls)), ("contract parameter", contract_params(cls))):
        errors = parameter_errors(getattr(cls, "name", ""), table, values)
        if errors:
            _fail(cls, f"a {label} breaks its own declaration: {errors[0]}")


def check_sklearn_protocol(cls: type, fit_data: Any = None, inputs: Any = None) -> None:
    """scikit-learn's protocol: ``get_params(deep=False)`` returns the very objects given to ``__init__`` (``clone``
    checks that a rebuilt estimator holds them: ``param1 is param2``), ``set_params`` returns self, and ``fit``
    takes ``y`` as its second argument (``Pipeline`` passes it). With scikit-learn installed: ``clone`` works, and
    a one-step ``Pipeline`` fitted on the suite's data with a ``y`` gives ``fit_transform``'s output (vectorizers)."""
    obj = _make(cls)
    try:
        params = obj.get_params(deep=False)
    except TypeError as exc:
        _fail(cls, f"get_params(deep=False) raised TypeError ({exc}); accept scikit-learn's `deep` argument")
    rebuilt = cls(**params)
    same = rebuilt.get_params(deep=False)
    for name in _param_names(cls):
        if same[name] is not params[name]:
            _fail(cls, f"get_params() returns a copy of {name!r} ({_short(params[name])}); return the object itself, "
                       "as scikit-learn's clone() requires")
    if obj.set_params() is not obj:
        _fail(cls, "set_params() does not return self")
    fit_params = list(inspect.signature(cls.fit).parameters)
    if len(fit_params) < 3 or fit_params[2] != "y":
        _fail(cls, f"fit{inspect.signature(cls.fit)} does not take y as its second argument; write fit(X, y=None)")
    try:
        from sklearn.base import clone
        from sklearn.pipeline import Pipeline
    except ImportError:  # the suite runs without scikit-learn: the rules above are what clone relies on
        return
    try:
        cloned = clone(obj)
    except Exception as exc:
        _fail(cls, f"sklearn.base.clone raised {type(exc).__name__}: {exc}")
    if type(cloned) is not cls or not _same(cloned.get_params(deep=False), params):
        _fail(cls, "sklearn.base.clone gave another component")
    if cls.kind != "vectorizer":
        return
    data = _fit_data(cls, fit_data)
    n = data.shape[0] if hasattr(data, "shape") else len(data)
    y = np.arange(n) % 2
    try:
        piped = Pipeline([(cls.name or "step", clone(obj))]).fit(data, y).transform(data)
    except Exception as exc:
        _fail(cls, f"Pipeline([(name, component)]).fit(X, y) raised {type(exc).__name__}: {exc}")
    direct = _make(cls).fit_transform(data)
    dense = [m.toarray() if hasattr(m, "toarray") else np.asarray(m) for m in (piped, direct)]
    if dense[0].shape != dense[1].shape or not np.array_equal(dense[0], dense[1]):
        _fail(cls, "in a scikit-learn Pipeline it transforms the data otherwise than fit_transform")
