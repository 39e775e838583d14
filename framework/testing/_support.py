"""What the contract checks share: the inputs the suite feeds a component (its ``_contract_*`` hooks or the
defaults), building and fitting instances, and comparing outputs. Private to :mod:`tokembed.testing`."""

from __future__ import annotations

import copy
import inspect
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..components import Component, Embedder, Tokenizer, Vectorizer
from ..encoding import Encoding
from ..errors import TokembedError
from .samples import sample_corpus, sample_texts

_BASES: dict[str, type[Component]] = {"tokenizer": Tokenizer, "vectorizer": Vectorizer, "embedder": Embedder}


def _hook(cls: type, name: str) -> Callable[[], Any] | None:
    fn = getattr(cls, name, None)
    return fn if callable(fn) else None


def contract_params(cls: type) -> dict[str, Any]:
    """The keyword arguments the suite builds ``cls`` with: ``cls._contract_params()`` or ``{}``."""
    hook = _hook(cls, "_contract_params")
    params = hook() if hook else {}
    if not isinstance(params, dict):
        raise AssertionError(f"{_who(cls)}: _contract_params() must return a dict, got {type(params).__name__}")
    return dict(params)


def contract_fit_data(cls: type) -> Any:
    """What ``fit`` receives in the suite: ``cls._contract_fit_data()`` or the default for the kind."""
    hook = _hook(cls, "_contract_fit_data")
    if hook:
        return hook()
    if cls.kind == "tokenizer":
        return sample_corpus()
    return [p.split() for p in sample_corpus()]


def contract_inputs(cls: type, fit_data: Any = None) -> Any:
    """What the fitted component is applied to: ``cls._contract_inputs()`` or the default for the kind.

    Returns None for an embedder without the hook (its outputs are then compared through its saved state only).
    """
    hook = _hook(cls, "_contract_inputs")
    if hook:
        return hook()
    if cls.kind == "tokenizer":
        return sample_texts()
    if cls.kind == "vectorizer":
        return _materialise(fit_data) if fit_data is not None else contract_fit_data(cls)
    return None


def component_id(cls: type) -> str:
    """``"KIND:NAME"`` (e.g. ``"tokenizer:char"``), a readable pytest id."""
    return f"{getattr(cls, 'kind', '?')}:{getattr(cls, 'name', '?') or cls.__qualname__}"


def _who(cls: type) -> str:
    return f"{getattr(cls, '__qualname__', cls)} ({component_id(cls)})"


def _fail(cls: type, message: str) -> None:
    raise AssertionError(f"{_who(cls)}: {message}") from None


def _materialise(data: Any) -> Any:
    """Lists, tuples, strings and arrays stay; any other iterable (a generator) becomes a list, so it can be reused."""
    if data is None or isinstance(data, (list, tuple, str, bytes, dict)) or hasattr(data, "shape"):
        return data
    try:
        return list(data)
    except TypeError:
        return data


def _fit_data(cls: type, fit_data: Any) -> Any:
    return _materialise(fit_data) if fit_data is not None else contract_fit_data(cls)


def _inputs(cls: type, fit_data: Any, inputs: Any) -> Any:
    return _materialise(inputs) if inputs is not None else contract_inputs(cls, fit_data)


def _param_names(cls: type) -> list[str]:
    try:
        return cls._param_names()
    except TypeError as exc:
        _fail(cls, str(exc))
        raise  # unreachable


def _defaults(cls: type) -> dict[str, Any]:
    sig = inspect.signature(cls.__init__)
    return {p.name: p.default for p in list(sig.parameters.values())[1:] if p.default is not p.empty}


def _make(cls: type, **overrides: Any) -> Any:
    names = _param_names(cls)
    given = contract_params(cls)
    unknown = sorted(set(given) - set(names))
    if unknown:
        _fail(cls, f"_contract_params() sets {unknown}, which are not parameters of __init__")
    params = {**given, **{k: v for k, v in overrides.items() if k in names}}
    try:
        return cls(**params)
    except TypeError as exc:
        _fail(cls, f"cannot be built with {params!r} ({exc}); a parameter without a default must be given by "
                   "_contract_params()")


def _fit(cls: type, obj: Any, data: Any) -> Any:
    try:
        return obj.fit(copy.deepcopy(data))
    except TokembedError as exc:
        _fail(cls, f"fit on the contract data raised {type(exc).__name__}: {exc} (a component that needs other "
                   "parameters or data defines _contract_params() / _contract_fit_data(); see tokembed.testing)")


def _fitted(cls: type, fit_data: Any, **overrides: Any) -> Any:
    obj = _make(cls, **overrides)
    _fit(cls, obj, _fit_data(cls, fit_data))
    return obj


def _seed_overrides(cls: type) -> dict[str, Any]:
    names = _param_names(cls)
    out: dict[str, Any] = {}
    if "seed" in names:
        out["seed"] = 0
    if "workers" in names:
        out["workers"] = 1
    return out


def _artifact_bytes(cls: type, obj: Any, tmp: Path, label: str) -> bytes:
    # saved under its own label: an artifact's bytes must not depend on its file name (the JSON names no file)
    path = tmp / f"{label}.tokembed.json"
    try:
        obj.save(path)
    except TokembedError as exc:
        _fail(cls, f"save of a fitted component raised {type(exc).__name__}: {exc}")
    return path.read_bytes()


def _dense(value: Any) -> Any:
    if hasattr(value, "toarray") and hasattr(value, "nnz"):  # scipy.sparse, without importing scipy
        return ("sparse", value.format, np.asarray(value.toarray()))
    return value


def _as_array(value: Any) -> np.ndarray:
    dense = _dense(value)
    return np.asarray(dense[2] if isinstance(dense, tuple) else dense)


def _outcome(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple:
    """``("ok", value)`` or ``("error", TypeName, message)`` for a TokembedError; other exceptions propagate."""
    try:
        return ("ok", _dense(fn(*args, **kwargs)))
    except TokembedError as exc:
        return ("error", type(exc).__name__, str(exc))


def _encoding_tuple(enc: Any) -> Any:
    if isinstance(enc, Encoding):
        return (enc.ids.tolist(), list(enc.tokens), enc.offsets.tolist(), enc.special_tokens_mask.tolist(),
                enc.attention_mask.tolist(), enc.type_ids.tolist())
    return enc


def _apply(obj: Any, inputs: Any) -> Any:
    """What the component produces on ``inputs``, as comparable plain data (errors included as outcomes)."""
    if inputs is None:
        return None
    if obj.kind == "tokenizer":
        out = []
        for text in inputs:
            enc = _outcome(obj.encode, text)
            if enc[0] == "ok":
                ids = enc[1].ids
                out.append((_encoding_tuple(enc[1]), _outcome(obj.decode, ids),
                            _outcome(obj.decode, ids, skip_special_tokens=True)))
            else:
                out.append(enc)
        return out
    if obj.kind == "vectorizer":
        return _outcome(obj.transform, copy.deepcopy(inputs))
    for method in ("embed", "transform"):
        if callable(getattr(obj, method, None)):
            return _outcome(getattr(obj, method), copy.deepcopy(inputs))
    return None


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return False
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, Encoding) and isinstance(b, Encoding):
        return a == b
    try:
        return bool(a == b)
    except Exception:
        return False


def _first_difference(a: Any, b: Any) -> str:
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            if not _same(x, y):
                return f"item {i}: {_short(x)} != {_short(y)}"
    return f"{_short(a)} != {_short(b)}"


def _short(value: Any, limit: int = 300) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _json_params(params: dict[str, Any]) -> str:
    from ..io import dumps_json

    return dumps_json(params)
