"""The component contract as reusable checks, for tokembed's own tests and for third-party plugins.

One suite runs over every registered component, built-in or not, in the spirit of scikit-learn's
``parametrize_with_checks``. In a plugin's test file::

    from tokembed.testing import check_component, parametrize_with_checks
    from my_plugin.tokenizer import MyTokenizer

    def test_contract():                      # every check, one test, all failures listed together
        check_component(MyTokenizer)

    @parametrize_with_checks([MyTokenizer])   # or: one pytest test per check
    def test_each_check(component, check):
        check(component)

and ``registered_components()`` lists every installed component class, so a project can run the contract over
the whole registry.

Each ``check_*`` function takes the component CLASS (``check(cls, fit_data=None, inputs=None)``), builds fresh
instances, and raises ``AssertionError`` with a message naming the component and the broken rule. The checks:

- ``name`` and ``kind`` are set and agree with the base class;
- ``__init__`` stores every parameter unchanged under its own name, validates nothing and sets nothing else;
- ``get_params()`` rebuilds an equal component, and ``fit`` does not change the parameters;
- using the component before ``fit`` raises :class:`~tokembed.errors.NotFittedError`;
- ``fit`` returns ``self``;
- ``save`` then ``load`` gives identical outputs and a byte-identical re-saved artifact;
- a truncated artifact, another component's artifact or an unknown format version raises ``ArtifactError``;
- fitting twice with ``seed=0`` (and ``workers=1`` where the parameter exists) gives byte-identical artifacts;
- tokenizers: ``Encoding`` shapes and dtypes, offsets inside the text, ``encode_batch``, the vocabulary is a
  bijection onto ``range(get_vocab_size())``, ``fit`` streams a one-shot iterator, ``allowed_special``;
- vectorizers: ``transform`` gives one row per input and one column per ``get_feature_names_out()`` name.

What the suite feeds a component
--------------------------------
A component class may define three optional classmethods (all private: they are for the suite only):

``_contract_params() -> dict``
    Keyword arguments for every instance the suite builds (small sizes keep the suite fast; required parameters
    must be given here). Default ``{}``.
``_contract_fit_data() -> object``
    What ``fit`` receives. Default: tokenizers get :func:`sample_corpus` (paragraphs of the bundled Moby Dick
    sample); vectorizers and embedders get the same paragraphs split on whitespace (``list[list[str]]``).
``_contract_inputs() -> object``
    What the fitted component is applied to when outputs are compared. Default: tokenizers get
    :func:`sample_texts` (each text is encoded and decoded); vectorizers get their fit data (passed whole to
    ``transform``); embedders get nothing (only the saved state is compared) unless they define this hook, and
    then ``embed(inputs)`` (or ``transform(inputs)``) is compared.

``fit_data`` / ``inputs`` passed to a check override these hooks.

This module imports neither pytest (only :func:`parametrize_with_checks` does, when called) nor numba.
"""

from __future__ import annotations

import copy
import functools
import gzip
import inspect
import json
import re
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from .components import Component, Embedder, Tokenizer, Vectorizer
from .encoding import Encoding
from .errors import ArtifactError, NotFittedError, TokembedError

__all__ = [
    "sample_corpus",
    "sample_texts",
    "contract_params",
    "contract_fit_data",
    "contract_inputs",
    "registered_components",
    "component_id",
    "iter_checks",
    "check_component",
    "parametrize_with_checks",
    "check_name_and_kind",
    "check_init_stores_params",
    "check_get_params_rebuilds",
    "check_not_fitted",
    "check_fit_returns_self",
    "check_save_load_roundtrip",
    "check_load_rejects_broken",
    "check_deterministic",
    "check_tokenizer_encoding",
    "check_tokenizer_vocab",
    "check_tokenizer_streams_corpus",
    "check_allowed_special",
    "check_vectorizer_output",
]

Check = Callable[..., None]

_BASES: dict[str, type[Component]] = {"tokenizer": Tokenizer, "vectorizer": Vectorizer, "embedder": Embedder}


# ---------------------------------------------------------------------------------------------------------------
# data the suite feeds components
# ---------------------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=4)
def _sample_paragraphs(max_chars: int) -> tuple[str, ...]:
    from importlib import resources

    raw = (resources.files("tokembed") / "samples" / "moby-dick.txt.gz").read_bytes()
    text = gzip.decompress(raw).decode("utf-8")[:max_chars]
    cut = text.rfind("\n\n")
    if cut > 0:
        text = text[:cut]
    return tuple(p for p in text.split("\n\n") if p.strip())


def sample_corpus(max_chars: int = 20_000) -> list[str]:
    """Paragraphs from the start of the bundled Moby Dick sample (public domain), for fitting in tests.

    Parameters
    ----------
    max_chars : int, default 20000
        Read at most this many characters (cut back to the last paragraph break).

    Returns
    -------
    list of str
        The paragraphs (split on blank lines; line breaks inside a paragraph kept), in order: 28 paragraphs and
        about 3,600 whitespace-separated words for the default size.
    """
    return list(_sample_paragraphs(int(max_chars)))


def sample_texts() -> list[str]:
    """Texts a fitted tokenizer is applied to by the contract suite.

    Three paragraphs of the sample corpus, then edge cases: the empty text, whitespace only, leading and trailing
    spaces, tabs and newlines (``\\r\\n`` included), accents, CJK, emoji, special-token strings typed as text,
    and a long run of one character.
    """
    paragraphs = sample_corpus()
    return paragraphs[:3] + [
        "",
        " ",
        "  leading and trailing  ",
        "tabs\tand\nnewlines\r\n\n",
        "multiple   spaces between\twords",
        "Ünïcödé café naïve façade",
        "日本語のテキスト",
        "emoji 🐳🐋 whale",
        "<unk> <pad> [CLS] [SEP] <|endoftext|> typed as text",
        "a" * 300,
    ]


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


# ---------------------------------------------------------------------------------------------------------------
# finding the components
# ---------------------------------------------------------------------------------------------------------------
def registered_components(kind: str | None = None, *, registry: Any = None) -> list[type]:
    """Every registered component class (of ``kind``), sorted by kind then name.

    Parameters
    ----------
    kind : {"tokenizer", "vectorizer", "embedder"}, optional
    registry : tokembed.registry.Registry, optional
        Default: a fresh :func:`tokembed.build_registry` (honouring ``TOKEMBED_DISABLE_PLUGIN_AUTOLOAD``).

    Use with pytest: ``@pytest.mark.parametrize("cls", registered_components(), ids=component_id)`` or
    :func:`parametrize_with_checks`.
    """
    if registry is None:
        from .registry import build_registry

        registry = build_registry()
    return [info.cls for info in registry.all(kind)]


def component_id(cls: type) -> str:
    """``"KIND:NAME"`` (e.g. ``"tokenizer:char"``), a readable pytest id."""
    return f"{getattr(cls, 'kind', '?')}:{getattr(cls, 'name', '?') or cls.__qualname__}"


def iter_checks(cls: type) -> Iterator[Check]:
    """The checks that apply to ``cls`` (common ones, then those of its kind), in order."""
    yield check_name_and_kind
    yield check_init_stores_params
    yield check_get_params_rebuilds
    yield check_not_fitted
    yield check_fit_returns_self
    yield check_save_load_roundtrip
    yield check_load_rejects_broken
    yield check_deterministic
    kind = getattr(cls, "kind", "")
    if kind == "tokenizer":
        yield check_tokenizer_encoding
        yield check_tokenizer_vocab
        yield check_tokenizer_streams_corpus
        yield check_allowed_special
    elif kind == "vectorizer":
        yield check_vectorizer_output


def check_component(cls: type, fit_data: Any = None, inputs: Any = None) -> None:
    """Run every applicable check on ``cls``; raise one ``AssertionError`` listing all that failed.

    Parameters
    ----------
    cls : type
        A subclass of :class:`tokembed.Tokenizer`, :class:`tokembed.Vectorizer` or :class:`tokembed.Embedder`.
    fit_data, inputs : optional
        Override the class's ``_contract_fit_data()`` / ``_contract_inputs()`` (see the module docstring).
    """
    fit_data, inputs = _materialise(fit_data), _materialise(inputs)  # a generator is read once, here
    problems = []
    for check in iter_checks(cls):
        try:
            check(cls, fit_data=fit_data, inputs=inputs)
        except AssertionError as exc:
            problems.append(f"{check.__name__}: {exc}")
        except Exception as exc:  # the component crashed inside the check: report it with the others
            problems.append(f"{check.__name__}: {_who(cls)}: raised {type(exc).__name__}: {exc}")
    if problems:
        raise AssertionError(f"{_who(cls)} breaks the component contract:\n" + "\n".join(problems))


def parametrize_with_checks(classes: Iterable[type]):
    """A ``pytest.mark.parametrize`` decorator giving one test per (class, check) with arguments
    ``component`` and ``check``: ``def test_contract(component, check): check(component)``.

    Test ids read ``tokenizer:char-check_save_load_roundtrip``.
    """
    import pytest

    params = [
        pytest.param(cls, check, id=f"{component_id(cls)}-{check.__name__}")
        for cls in classes
        for check in iter_checks(cls)
    ]
    return pytest.mark.parametrize(("component", "check"), params)


# ---------------------------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------------------------
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


def _artifact_path(tmp: Path, label: str) -> Path:
    """Where the artifact ``label`` is saved: one folder per label, the same file name in each. An artifact with
    arrays names its ``.npz`` file, so artifacts saved under different names could never be byte-identical (the
    JSON records the ``.npz``'s SHA-256, so comparing the JSON bytes compares the arrays too)."""
    folder = tmp / label
    folder.mkdir(exist_ok=True)
    return folder / "component.tokembed.json"


def _artifact_bytes(cls: type, obj: Any, tmp: Path, label: str) -> bytes:
    path = _artifact_path(tmp, label)
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
    from .io import dumps_json

    return dumps_json(params)


# ---------------------------------------------------------------------------------------------------------------
# common checks
# ---------------------------------------------------------------------------------------------------------------
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*")


def check_name_and_kind(cls: type, fit_data: Any = None, inputs: Any = None) -> None:
    """``name`` is a non-empty identifier-like str (recipes write ``type: NAME``); ``kind`` matches the base class."""
    if not isinstance(cls, type) or not issubclass(cls, Component):
        _fail(cls, "is not a subclass of tokembed.Tokenizer, tokembed.Vectorizer or tokembed.Embedder")
    kind = getattr(cls, "kind", None)
    if kind not in _BASES:
        _fail(cls, f"kind is {kind!r}; subclass Tokenizer, Vectorizer or Embedder, which set it")
    if not issubclass(cls, _BASES[kind]):
        _fail(cls, f"kind is {kind!r} but the class does not derive from tokembed.{_BASES[kind].__name__}")
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        _fail(cls, f"name is {name!r}; set a class attribute `name` made of letters, digits, '_', '-', '.'")


class _Sentinel:
    """A parameter value that survives deepcopy as itself and equals only itself."""

    def __init__(self, label: str):
        self.label = label

    def __deepcopy__(self, memo: dict) -> "_Sentinel":
        return self

    def __repr__(self) -> str:
        return f"<sentinel for {self.label}>"


def check_init_stores_params(cls: type, fit_data: Any = None, inputs: Any = None) -> None:
    """``__init__`` stores each keyword argument unchanged (the same object) under its own name, validates nothing,
    and sets no other public attribute; a new instance is not fitted."""
    names = _param_names(cls)
    given = {**_defaults(cls), **contract_params(cls)}
    plain = _make(cls)
    for n in names:
        if n in given and getattr(plain, n, _Sentinel(n)) is not given[n]:
            _fail(cls, f"__init__ changes parameter {n!r} ({_short(given[n])} given, {_short(getattr(plain, n, None))} "
                       "stored); store it unchanged and convert it in fit")
    sentinels = {n: _Sentinel(n) for n in names}
    try:
        obj = cls(**sentinels)
    except Exception as exc:  # validation belongs in fit
        _fail(cls, f"__init__ must only store its arguments (validate in fit), but raised {type(exc).__name__}: {exc}")
    for n in names:
        if not hasattr(obj, n):
            _fail(cls, f"__init__ does not store parameter {n!r} as self.{n}")
        if getattr(obj, n) is not sentinels[n]:
            _fail(cls, f"__init__ changes parameter {n!r} (stores {_short(getattr(obj, n))} instead of the value "
                       "given); store it unchanged and convert it in fit")
    extra = sorted(k for k in vars(obj) if not k.startswith("_") and k not in sentinels)
    if extra:
        _fail(cls, f"__init__ sets attributes that are not parameters: {', '.join(extra)}")
    params = obj.get_params()
    if list(params) != names or any(params[n] is not sentinels[n] for n in names):
        _fail(cls, f"get_params() returns {_short(params)}, not the values given to __init__")
    if plain.is_fitted():
        _fail(cls, "is_fitted() is true right after __init__")
    try:
        repr(plain)
    except Exception as exc:
        _fail(cls, f"repr() raised {type(exc).__name__}: {exc}")


def check_get_params_rebuilds(cls: type, fit_data: Any = None, inputs: Any = None) -> None:
    """``type(c)(**c.get_params())`` has equal params; params are JSON-able; ``fit`` leaves the params unchanged."""
    obj = _make(cls)
    params = obj.get_params()
    if sorted(params) != sorted(_param_names(cls)):
        _fail(cls, f"get_params() keys {sorted(params)} != __init__ parameters {sorted(_param_names(cls))}")
    clone = cls(**params)
    if not _same(clone.get_params(), params):
        _fail(cls, f"rebuilt from get_params() it has params {_short(clone.get_params())} != {_short(params)}")
    try:
        before = _json_params(params)
    except (TypeError, ValueError) as exc:
        _fail(cls, f"parameters are not JSON-able ({exc}); recipes and artifacts store them as JSON")
    if obj.set_params(**params) is not obj:
        _fail(cls, "set_params() does not return self")
    _fit(cls, obj, _fit_data(cls, fit_data))
    after = obj.get_params()
    if not _same(after, params) or _json_params(after) != before:
        _fail(cls, f"fit changed the parameters: {_short(params)} -> {_short(after)}; store learned values in "
                   "attributes ending in '_'")


def _calls_before_fit(obj: Any, inputs: Any, tmp: Path) -> list[tuple[str, Callable[[], Any]]]:
    calls: list[tuple[str, Callable[[], Any]]] = [
        ("save(path)", lambda: obj.save(tmp / "unfitted.tokembed.json")),
        ("to_dict()", obj.to_dict),
    ]
    if obj.kind == "tokenizer":
        calls += [
            ("encode('a')", lambda: obj.encode("a")),
            ("encode_batch(['a'])", lambda: obj.encode_batch(["a"])),
            ("decode([0])", lambda: obj.decode([0])),
            ("get_vocab()", obj.get_vocab),
            ("get_vocab_size()", obj.get_vocab_size),
            ("token_to_id('a')", lambda: obj.token_to_id("a")),
            ("id_to_token(0)", lambda: obj.id_to_token(0)),
        ]
    elif obj.kind == "vectorizer":
        calls += [
            ("transform(inputs)", lambda: obj.transform(copy.deepcopy(inputs))),
            ("get_feature_names_out()", obj.get_feature_names_out),
        ]
    elif inputs is not None:
        for method in ("embed", "transform"):
            if callable(getattr(obj, method, None)):
                calls.append((f"{method}(inputs)", lambda m=method: getattr(obj, m)(copy.deepcopy(inputs))))
    return calls


def check_not_fitted(cls: type, fit_data: Any = None, inputs: Any = None) -> None:
    """Every use of an unfitted component raises ``NotFittedError`` (not AttributeError or a silent result)."""
    obj = _make(cls)
    data = _inputs(cls, fit_data, inputs)
    with tempfile.TemporaryDirectory() as tmp:
        for label, call in _calls_before_fit(obj, data, Path(tmp)):
            try:
                call()
            except NotFittedError:
                continue
            except Exception as exc:
                _fail(cls, f"{label} before fit raised {type(exc).__name__}: {exc} (expected NotFittedError)")
            _fail(cls, f"{label} before fit did not raise NotFittedError")
        if (Path(tmp) / "unfitted.tokembed.json").exists():
            _fail(cls, "save() of an unfitted component wrote a file")


def check_fit_returns_self(cls: type, fit_data: Any = None, inputs: Any = None) -> None:
    """``fit`` returns ``self`` and sets at least one learned attribute ending in ``_``."""
    obj = _make(cls)
    result = _fit(cls, obj, _fit_data(cls, fit_data))
    if result is not obj:
        _fail(cls, f"fit returned {_short(result)}, not self")
    if not obj.is_fitted():
        _fail(cls, "after fit no learned attribute (public name ending in '_') is set, so is_fitted() is false")


def check_save_load_roundtrip(cls: type, fit_data: Any = None, inputs: Any = None) -> None:
    """``load(save(c))`` has the same params and outputs, and saves to the same bytes."""
    data = _fit_data(cls, fit_data)
    obj = _fitted(cls, data)
    applied = _inputs(cls, data, inputs)
    expected = _apply(obj, applied)
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        first = _artifact_bytes(cls, obj, tmp_path, "first")
        try:
            art = json.loads(first.decode("utf-8", "surrogatepass"))
        except ValueError as exc:
            _fail(cls, f"the saved artifact is not JSON: {exc}")
        if not isinstance(art, dict) or art.get("format") != "tokembed" or art.get("kind") != cls.kind \
                or art.get("type") != cls.name:
            _fail(cls, "the saved artifact does not carry format 'tokembed', its kind and its type (name)")
        try:
            loaded = cls.load(_artifact_path(tmp_path, "first"))
        except TokembedError as exc:
            _fail(cls, f"load of its own artifact raised {type(exc).__name__}: {exc}")
        if type(loaded) is not cls:
            _fail(cls, f"load returned a {type(loaded).__name__}")
        if not loaded.is_fitted():
            _fail(cls, "a loaded component is not fitted (is_fitted() is false)")
        if _json_params(loaded.get_params()) != _json_params(obj.get_params()):
            _fail(cls, f"params changed through save/load: {_short(obj.get_params())} -> {_short(loaded.get_params())}")
        got = _apply(loaded, applied)
        if not _same(expected, got):
            _fail(cls, f"outputs differ after save/load: {_first_difference(expected, got)}")
        second = _artifact_bytes(cls, loaded, tmp_path, "second")
        if second != first:
            _fail(cls, "saving the loaded component gives different bytes than the original artifact")


def check_load_rejects_broken(cls: type, fit_data: Any = None, inputs: Any = None) -> None:
    """A truncated artifact, another component's artifact and an unknown format version raise ``ArtifactError``."""
    obj = _fitted(cls, fit_data)
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        good = _artifact_bytes(cls, obj, tmp_path, "good")
        art = json.loads(good.decode("utf-8", "surrogatepass"))
        from .io import dumps_json

        cases = {
            "truncated": good[: len(good) // 2],
            "missing file": None,
            "another type": dumps_json({**art, "type": f"{cls.name}-other"}).encode("utf-8", "surrogatepass"),
            "another kind": dumps_json(
                {**art, "kind": next(k for k in _BASES if k != cls.kind)}).encode("utf-8", "surrogatepass"),
            "unknown format version": dumps_json({**art, "format_version": 10**6}).encode("utf-8", "surrogatepass"),
            "not an artifact": b'{"hello": "world"}\n',
        }
        for label, content in cases.items():
            path = tmp_path / "good" / f"{label.replace(' ', '-')}.tokembed.json"  # beside good's arrays
            if content is not None:
                path.write_bytes(content)
            try:
                cls.load(path)
            except ArtifactError:
                continue
            except Exception as exc:
                _fail(cls, f"load of a {label} artifact raised {type(exc).__name__}: {exc} (expected ArtifactError)")
            _fail(cls, f"load of a {label} artifact did not raise ArtifactError")


def check_deterministic(cls: type, fit_data: Any = None, inputs: Any = None) -> None:
    """Two fresh instances fitted with ``seed=0`` (``workers=1``) on the same data save to identical bytes, and
    fitting the first one again gives the same bytes too (``fit`` starts afresh)."""
    data = _fit_data(cls, fit_data)
    overrides = _seed_overrides(cls)
    a = _fitted(cls, data, **overrides)
    b = _fitted(cls, data, **overrides)
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        first = _artifact_bytes(cls, a, tmp_path, "a")
        second = _artifact_bytes(cls, b, tmp_path, "b")
        if first != second:
            _fail(cls, f"two fits with {overrides or 'the same parameters'} give different artifacts")
        _fit(cls, a, copy.deepcopy(data))
        again = _artifact_bytes(cls, a, tmp_path, "a-again")
        if again != first:
            _fail(cls, "fitting the same instance a second time gives a different artifact (state left from the "
                       "first fit?)")


# ---------------------------------------------------------------------------------------------------------------
# tokenizer checks
# ---------------------------------------------------------------------------------------------------------------
def check_tokenizer_encoding(cls: type, fit_data: Any = None, inputs: Any = None) -> None:
    """``encode`` returns an :class:`Encoding` (ids int32 (n,), offsets int64 (n, 2) inside the text, tokens that
    match the ids); ``encode_batch`` equals encoding one by one; ``decode`` returns a str; non-str input raises
    TypeError. A text may be refused only with a TokembedError."""
    tok = _fitted(cls, fit_data)
    texts = _inputs(cls, fit_data, inputs)
    size = tok.get_vocab_size()
    encoded_ok = []
    for text in texts:
        try:
            enc = tok.encode(text)
        except TokembedError:
            continue
        except Exception as exc:
            _fail(cls, f"encode({_short(text, 60)}) raised {type(exc).__name__}: {exc}; refuse a text with a "
                       "TokembedError")
        where = f"encode({_short(text, 60)})"
        if not isinstance(enc, Encoding):
            _fail(cls, f"{where} returned {type(enc).__name__}, not tokembed.Encoding")
        if enc.ids.dtype != np.int32 or enc.offsets.dtype != np.int64 or enc.offsets.shape != (len(enc), 2):
            _fail(cls, f"{where}: ids must be int32 (n,) and offsets int64 (n, 2)")
        if len(enc) and (enc.ids.min() < 0 or enc.ids.max() >= size):
            _fail(cls, f"{where}: ids outside [0, get_vocab_size()={size})")
        tokens = [tok.id_to_token(int(i)) for i in enc.ids]
        if tokens != list(enc.tokens):
            _fail(cls, f"{where}: tokens {_short(enc.tokens)} != id_to_token(ids) {_short(tokens)}")
        starts, ends = enc.offsets[:, 0], enc.offsets[:, 1]
        if len(enc) and (starts.min() < 0 or ends.max() > len(text) or (starts > ends).any()):
            _fail(cls, f"{where}: offsets must satisfy 0 <= start <= end <= len(text)={len(text)}")
        plain = enc.special_tokens_mask == 0
        if (np.diff(starts[plain]) < 0).any():
            _fail(cls, f"{where}: offsets of text tokens must not go backwards")
        try:
            decoded = tok.decode(enc.ids)
        except Exception as exc:
            _fail(cls, f"decode of {where}.ids raised {type(exc).__name__}: {exc}")
        if not isinstance(decoded, str):
            _fail(cls, f"decode returned {type(decoded).__name__}, not str")
        encoded_ok.append(text)
    if not encoded_ok:
        _fail(cls, "no sample text could be encoded")
    batch = tok.encode_batch(encoded_ok)
    single = [tok.encode(t) for t in encoded_ok]
    if len(batch) != len(single) or any(a != b for a, b in zip(batch, single)):
        _fail(cls, "encode_batch(texts) differs from [encode(t) for t in texts]")
    try:
        tok.encode(b"bytes")  # type: ignore[arg-type]
    except TypeError:
        pass
    except Exception as exc:
        _fail(cls, f"encode(b'bytes') raised {type(exc).__name__}, expected TypeError")
    else:
        _fail(cls, "encode(b'bytes') did not raise TypeError")


def check_tokenizer_vocab(cls: type, fit_data: Any = None, inputs: Any = None) -> None:
    """``get_vocab()`` maps tokens onto exactly ``range(get_vocab_size())``; ``token_to_id`` and ``id_to_token``
    invert each other and return None outside the vocabulary; ``special_tokens_`` is a list of vocabulary tokens."""
    tok = _fitted(cls, fit_data)
    vocab = tok.get_vocab()
    size = tok.get_vocab_size()
    if not isinstance(vocab, dict) or len(vocab) != size:
        _fail(cls, f"get_vocab() has {len(vocab)} entries but get_vocab_size() is {size}")
    if sorted(vocab.values()) != list(range(size)):
        _fail(cls, "get_vocab() ids are not exactly 0 .. get_vocab_size()-1 (gaps or duplicates)")
    items = sorted(vocab.items(), key=lambda kv: kv[1])
    step = max(1, len(items) // 1000)  # at most ~1000 lookups: a large vocabulary stays cheap to check
    for token, i in items[::step] + items[-1:]:
        if tok.token_to_id(token) != i or tok.id_to_token(i) != token:
            _fail(cls, f"token_to_id/id_to_token disagree with get_vocab() at {token!r} -> {i}")
    for bad in (-1, size):
        if tok.id_to_token(bad) is not None:
            _fail(cls, f"id_to_token({bad}) should be None (outside the vocabulary)")
    missing = "\x00never a token\x00"
    if missing not in vocab and tok.token_to_id(missing) is not None:
        _fail(cls, "token_to_id of a string outside the vocabulary should be None")
    specials = getattr(tok, "special_tokens_", None)
    if not isinstance(specials, list) or not all(isinstance(s, str) and s in vocab for s in specials):
        _fail(cls, f"special_tokens_ must be a list of tokens of the vocabulary, got {_short(specials)}")


def check_tokenizer_streams_corpus(cls: type, fit_data: Any = None, inputs: Any = None) -> None:
    """``fit`` accepts a one-shot iterator (a streamed corpus) and learns the same as from a list."""
    data = _fit_data(cls, fit_data)
    if not isinstance(data, (list, tuple)):
        return  # a custom fit input that is not a sequence of documents
    overrides = _seed_overrides(cls)
    from_list = _fitted(cls, data, **overrides)
    streamed = _make(cls, **overrides)
    try:
        streamed.fit(iter(copy.deepcopy(list(data))))
    except Exception as exc:
        _fail(cls, f"fit(iter(corpus)) raised {type(exc).__name__}: {exc}; a corpus is any iterable of documents")
    with tempfile.TemporaryDirectory() as tmp:
        if _artifact_bytes(cls, from_list, Path(tmp), "list") != _artifact_bytes(cls, streamed, Path(tmp), "iter"):
            _fail(cls, "fit(iter(corpus)) learns something else than fit(list(corpus))")


def check_allowed_special(cls: type, fit_data: Any = None, inputs: Any = None) -> None:
    """A special token typed in the text is plain text unless listed in ``allowed_special`` (or ``"all"``), where
    it becomes one token spanning it; unknown entries raise TokembedError, a bare string TypeError.

    The one exception to "plain text": typed text that the tokenizer does not know may become its ``unk_token``
    (a word tokenizer maps the unknown word ``<unk>`` to ``<unk>``, as it maps any unknown word)."""
    tok = _fitted(cls, fit_data)
    specials = list(tok.special_tokens_)
    vocab = tok.get_vocab()
    unk = getattr(tok, "unk_token", None)
    for s in specials:
        text = f"{s} x"
        span = [0, len(s)]

        def has_special(enc: Encoding) -> bool:
            return any(t == s and i == vocab[s] and list(o) == span
                       for t, i, o in zip(enc.tokens, enc.ids.tolist(), enc.offsets.tolist()))

        try:
            plain = tok.encode(text)
        except TokembedError:
            plain = None  # a tokenizer without unk may refuse the characters; the rule is still kept
        if plain is not None and s != unk and has_special(plain):
            _fail(cls, f"encode({text!r}) turned the typed text {s!r} into the special token; it must stay plain "
                       "text unless allowed_special lists it")
        for allowed in ([s], "all"):
            try:
                enc = tok.encode(text, allowed_special=allowed)
            except TokembedError:
                if plain is None:
                    continue
                raise
            if not has_special(enc):
                _fail(cls, f"encode({text!r}, allowed_special={allowed!r}) has no token {s!r} spanning {span}")
    try:
        tok.encode("x", allowed_special=["\x00not special\x00"])
    except TokembedError:
        pass
    except Exception as exc:
        _fail(cls, f"an unknown allowed_special entry raised {type(exc).__name__}, expected TokembedError")
    else:
        _fail(cls, "an allowed_special entry that is not a special token did not raise TokembedError")
    try:
        tok.encode("x", allowed_special="<unk>")
    except TypeError:
        pass
    except Exception as exc:
        _fail(cls, f"allowed_special given as a bare string raised {type(exc).__name__}, expected TypeError")
    else:
        _fail(cls, "allowed_special given as a bare string did not raise TypeError")


# ---------------------------------------------------------------------------------------------------------------
# vectorizer checks
# ---------------------------------------------------------------------------------------------------------------
def _n_tokens(X: Any) -> int:
    if hasattr(X, "n_tokens"):  # TokenSequences
        return int(X.n_tokens)
    return sum(len(doc) for doc in X)


def check_vectorizer_output(cls: type, fit_data: Any = None, inputs: Any = None) -> None:
    """``transform`` returns a 2-D matrix (scipy.sparse or float ndarray) with one column per name of
    ``get_feature_names_out()`` and the rows ``output_rows`` promises (one per input document, one per token, or
    one per feature); ``fit_transform`` equals ``fit`` then ``transform``."""
    data = _fit_data(cls, fit_data)
    vec = _fitted(cls, data)
    X = _inputs(cls, data, inputs)
    Y = vec.transform(copy.deepcopy(X))
    shape = getattr(Y, "shape", None)
    if shape is None or len(shape) != 2:
        _fail(cls, f"transform returned {type(Y).__name__} with shape {shape}, expected a 2-D matrix")
    names = np.asarray(vec.get_feature_names_out())
    if names.ndim != 1 or names.shape[0] != shape[1]:
        _fail(cls, f"get_feature_names_out() has shape {names.shape}, expected ({shape[1]},)")
    rows = getattr(cls, "output_rows", "documents")
    if rows == "vocabulary":
        n_rows, what = names.shape[0], "features (a square matrix, output_rows = 'vocabulary')"
    elif rows == "tokens":
        n_rows, what = _n_tokens(X), "tokens of the inputs (output_rows = 'tokens')"
    elif rows == "documents":
        n_rows, what = (X.shape[0] if hasattr(X, "shape") else len(X)), "inputs"
    else:
        _fail(cls, f"output_rows is {rows!r}; expected 'documents', 'tokens' or 'vocabulary'")
    if shape[0] != n_rows:
        _fail(cls, f"transform returned {shape[0]} rows for {n_rows} {what}")
    dense = _as_array(Y)
    if dense.dtype.kind != "f":
        _fail(cls, f"transform returned dtype {dense.dtype}, expected a float matrix")
    both = _make(cls, **_seed_overrides(cls)).fit_transform(copy.deepcopy(data))
    sep = _make(cls, **_seed_overrides(cls))
    _fit(cls, sep, data)
    sep_out = sep.transform(copy.deepcopy(data))
    a, b = _as_array(both).astype(np.float64), _as_array(sep_out).astype(np.float64)
    if a.shape != b.shape or not np.allclose(a, b, rtol=1e-6, atol=1e-9):
        _fail(cls, "fit_transform(X) differs from fit(X).transform(X)")

