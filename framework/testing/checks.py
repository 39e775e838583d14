"""The contract checks: each ``check_*`` takes a component CLASS (``check(cls, fit_data=None, inputs=None)``),
builds fresh instances and raises ``AssertionError`` naming the component and the broken rule (see
:mod:`tokembed.testing` for the list)."""

from __future__ import annotations

import copy
import json
import re
import tempfile
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..components import Component
from ..encoding import Encoding
from ..errors import ArtifactError, NotFittedError, TokembedError
from ._support import (  # the shared helpers, private
    _BASES,
    _apply,
    _artifact_bytes,
    _as_array,
    _defaults,
    _fail,
    _first_difference,
    _fit,
    _fit_data,
    _fitted,
    _inputs,
    _json_params,
    _make,
    _param_names,
    _same,
    _seed_overrides,
    _short,
    contract_params,
)

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
            loaded = cls.load(tmp_path / "first.tokembed.json")
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
        from ..io import dumps_json

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
            path = tmp_path / f"{label.replace(' ', '-')}.tokembed.json"
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


def check_partial_counts(cls: type, fit_data: Any = None, inputs: Any = None) -> None:
    """For a component that fits from partial counts (:meth:`~tokembed.Component.fits_on_counts`): the counts of
    the two halves of the fit data, merged (after the counts of an empty part, and through pickle, as between
    processes), fitted with ``fit_counts``, give the artifact ``fit`` gives on the whole data, byte for byte."""
    import pickle

    overrides = _seed_overrides(cls)
    probe = _make(cls, **overrides)
    if not probe.fits_on_counts():
        return
    data = _fit_data(cls, fit_data)
    if not isinstance(data, (list, tuple)) or len(data) < 2:
        return  # a custom fit input that cannot be cut in two
    whole = _fitted(cls, data, **overrides)
    half = len(data) // 2
    merged = _make(cls, **overrides)
    passes = merged.counting_passes()
    for k in range(passes):  # each pass counted by a copy of the instance, as a worker unpickles it
        try:
            counter = pickle.loads(pickle.dumps(merged, protocol=pickle.HIGHEST_PROTOCOL))
            parts = [counter.partial_counts(copy.deepcopy(list(chunk))) for chunk in ([], data[:half], data[half:])]
            counts = pickle.loads(pickle.dumps(parts[0], protocol=pickle.HIGHEST_PROTOCOL))
            for part in parts[1:]:
                counts = counts.merge(pickle.loads(pickle.dumps(part, protocol=pickle.HIGHEST_PROTOCOL)))
            back = merged.fit_counts(counts)
        except Exception as exc:
            _fail(cls, f"partial_counts / merge / fit_counts (pass {k + 1} of {passes}) raised "
                       f"{type(exc).__name__}: {exc}")
        if back is not merged:
            _fail(cls, "fit_counts should return self")
    with tempfile.TemporaryDirectory() as tmp:
        if _artifact_bytes(cls, whole, Path(tmp), "whole") != _artifact_bytes(cls, merged, Path(tmp), "merged"):
            _fail(cls, "fit_counts(partial_counts(first half).merge(partial_counts(second half))) learns something "
                       "else than fit(all of it): partial counts must merge into the counts of the whole")


# ---------------------------------------------------------------------------------------------------------------
# tokenizer checks
# ---------------------------------------------------------------------------------------------------------------
def check_tokenizer_encoding(cls: type, fit_data: Any = None, inputs: Any = None) -> None:
    """``encode`` returns an :class:`Encoding` (ids int32 (n,), offsets int64 (n, 2) inside the text, tokens that
    match the ids); ``encode_batch`` equals encoding one by one, and ``encode_ids(texts, spans=True)`` equals
    ``encode_batch(texts, add_special_tokens=False)`` packed; ``decode`` returns a str, and the optional
    ``decode_batch`` equals it sequence by sequence (``token_bytes`` returns bytes); non-str input raises
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
    _check_encode_ids(cls, tok, encoded_ok)
    _check_decode_hooks(cls, tok, [e.ids for e in batch])
    try:
        tok.encode(b"bytes")  # type: ignore[arg-type]
    except TypeError:
        pass
    except Exception as exc:
        _fail(cls, f"encode(b'bytes') raised {type(exc).__name__}, expected TypeError")
    else:
        _fail(cls, "encode(b'bytes') did not raise TypeError")


def _check_decode_hooks(cls: type, tok: Any, ids_list: list[np.ndarray]) -> None:
    """The optional hooks the metrics read: ``decode_batch(ids_list, skip_special_tokens)`` equals ``decode`` of
    each sequence (with and without the special tokens); ``token_bytes(id)`` returns bytes."""
    if callable(getattr(tok, "decode_batch", None)):
        for skip in (False, True):
            try:
                got = tok.decode_batch(ids_list, skip_special_tokens=skip)
            except Exception as exc:
                _fail(cls, f"decode_batch(..., skip_special_tokens={skip}) raised {type(exc).__name__}: {exc}")
            want = [tok.decode(ids, skip_special_tokens=skip) for ids in ids_list]
            if list(got) != want:
                bad = next(i for i, (a, b) in enumerate(zip(list(got) + [None] * len(want), want)) if a != b)
                _fail(cls, f"decode_batch(..., skip_special_tokens={skip})[{bad}] differs from decode of sequence "
                           f"{bad}: {_short(got[bad] if bad < len(got) else None, 60)} != {_short(want[bad], 60)}")
    if callable(getattr(tok, "token_bytes", None)):
        for i in sorted({int(i) for ids in ids_list for i in ids})[:200]:
            if not isinstance(tok.token_bytes(i), bytes):
                _fail(cls, f"token_bytes({i}) returned {type(tok.token_bytes(i)).__name__}, not bytes")


def _check_encode_ids(cls: type, tok: Any, texts: list[str]) -> None:
    """``encode_ids(texts, spans=True)`` is ``encode_batch(texts, add_special_tokens=False)`` packed: the same ids,
    tokens per text and offsets, with the documented dtypes and shapes; ``spans=False`` gives the same ids."""
    try:
        ids, lengths, spans = tok.encode_ids(texts, spans=True)
    except Exception as exc:
        _fail(cls, f"encode_ids(texts, spans=True) raised {type(exc).__name__}: {exc}")
    plain = tok.encode_batch(texts, add_special_tokens=False)
    if (ids.dtype != np.int32 or lengths.dtype != np.int64 or spans.dtype != np.int64
            or lengths.shape != (len(texts),) or spans.shape != (ids.shape[0], 2)):
        _fail(cls, "encode_ids(texts, spans=True) must give ids int32 (n,), lengths int64 (n_texts,) and spans "
                   "int64 (n, 2)")
    if lengths.tolist() != [len(e) for e in plain]:
        _fail(cls, "encode_ids(texts) gives other token counts than encode_batch(texts, add_special_tokens=False)")
    want_ids = np.concatenate([e.ids for e in plain]) if plain else np.zeros(0, np.int32)
    want_spans = np.concatenate([np.reshape(e.offsets, (-1, 2)) for e in plain]) if plain else np.zeros((0, 2))
    if not np.array_equal(ids, want_ids):
        _fail(cls, "encode_ids(texts) gives other ids than encode_batch(texts, add_special_tokens=False)")
    if not np.array_equal(spans, want_spans):
        _fail(cls, "encode_ids(texts, spans=True) gives other spans than the offsets of encode_batch(texts, "
                   "add_special_tokens=False)")
    again = tok.encode_ids(texts)
    if len(again) != 2 or not np.array_equal(again[0], ids) or not np.array_equal(again[1], lengths):
        _fail(cls, "encode_ids(texts) must give (ids, lengths), equal to those of encode_ids(texts, spans=True)")


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


def check_tokenizer_load_formats(cls: type, fit_data: Any = None, inputs: Any = None) -> None:
    """Each entry of ``load_formats`` is a format of :data:`tokembed.export.LOAD_FORMATS` (``hf_json`` with its
    model type: ``"hf_json:BPE"``) whose classmethod the class has; ``fit`` refuses one str."""
    from ..export import LOAD_FORMATS

    formats = getattr(cls, "load_formats", ())
    if not isinstance(formats, tuple) or not all(isinstance(f, str) for f in formats):
        _fail(cls, f"load_formats must be a tuple of str, got {_short(formats)}")
    for key in formats:
        name, _, variant = key.partition(":")
        if name not in LOAD_FORMATS or (name == "hf_json") != bool(variant):
            _fail(cls, f"load_formats lists {key!r}, which is not a format: {', '.join(LOAD_FORMATS)} "
                       "(hf_json as 'hf_json:<model type>')")
        if not callable(getattr(cls, LOAD_FORMATS[name].method, None)):
            _fail(cls, f"load_formats lists {key!r} but the class has no classmethod {LOAD_FORMATS[name].method}()")
    try:
        _make(cls).fit("one text")
    except TokembedError:
        pass
    except Exception as exc:
        _fail(cls, f"fit('one text') raised {type(exc).__name__}: {exc}; one str must raise TokembedError (the "
                   "Tokenizer base class's check: a fit that does not take the corpus first bypasses it)")
    else:
        _fail(cls, "fit('one text') learned from each character as a document; one str must raise TokembedError")


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
