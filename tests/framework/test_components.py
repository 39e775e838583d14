"""The component base classes (params, fitted state, artifacts, special tokens in text) and Encoding.

Post-processing options of ``encode`` (pairs, truncation, padding) are tested with tokembed.postprocess.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import tokembed
from tokembed import Component, Encoding, Tokenizer
from tokembed.components import ARTIFACT_FORMAT, ARTIFACT_VERSION
from tokembed.errors import ArtifactError, NotFittedError, TokembedError, UnknownComponentError
from tokembed.plugins.char.tokenizer import CharTokenizer


class Toy(Tokenizer):
    """Splits on single spaces; the vocabulary is fixed by ``words``, specials first."""

    name = "toy"

    def __init__(self, words=("a", "b"), specials=("<s>", "<|end|>", "<|e"), flag=None):
        self.words = words
        self.specials = specials
        self.flag = flag

    def fit(self, corpus, y=None):
        list(corpus)
        self.special_tokens_ = list(self.specials)
        self.vocab_ = {t: i for i, t in enumerate([*self.specials, *self.words])}
        return self

    def _encode_text(self, text):
        ids, toks, offs, pos = [], [], [], 0
        for piece in text.split(" "):
            if piece:
                i = -1 if piece in self.special_tokens_ else self.vocab_.get(piece, -1)
                if i < 0:
                    raise TokembedError(f"toy: unknown piece {piece!r}")
                ids.append(i)
                toks.append(piece)
                offs.append((pos, pos + len(piece)))
            pos += len(piece) + 1
        return Encoding(ids, toks, np.array(offs, np.int64).reshape(-1, 2))

    def decode(self, ids, skip_special_tokens=False):
        inv = {i: t for t, i in self.vocab_.items()}
        return " ".join(inv[int(i)] for i in ids)

    def get_vocab(self):
        self._check_is_fitted()
        return dict(self.vocab_)

    def _get_state(self):
        return {"vocab": list(self.vocab_)}

    def _set_state(self, state):
        self.special_tokens_ = list(self.specials)
        self.vocab_ = {t: i for i, t in enumerate(state["vocab"])}


def fitted(**params) -> Toy:
    return Toy(**params).fit([])


# -- parameters -----------------------------------------------------------------------------------------------------
def test_get_params_returns_init_arguments_in_order_as_given():
    # the objects themselves, as scikit-learn's get_params: its clone() checks that a rebuilt estimator holds the
    # very objects it was given (`param1 is param2`), so a copy here would make clone() raise
    words = ["x", "y"]
    tok = Toy(words=words, flag={"k": [1]})
    params = tok.get_params()
    assert list(params) == ["words", "specials", "flag"]
    assert params == {"words": ["x", "y"], "specials": ("<s>", "<|end|>", "<|e"), "flag": {"k": [1]}}
    assert params["words"] is words and tok.get_params(deep=False) == params
    assert Toy(**tok.get_params()).get_params() == tok.get_params()


def test_set_params_sets_and_returns_self_and_refuses_unknown_names():
    tok = Toy()
    assert tok.set_params(words=("q",), flag=3) is tok
    assert tok.words == ("q",) and tok.flag == 3
    with pytest.raises(ValueError, match="Toy has no parameter 'wrods'; valid: flag, specials, words"):
        tok.set_params(wrods=())


def test_var_keyword_init_is_refused():
    class Loose(Tokenizer):
        name = "loose"

        def __init__(self, **kwargs):
            pass

    with pytest.raises(TypeError, match=r"Loose.__init__ must list its parameters explicitly, not \*kwargs"):
        Loose().get_params()


def test_repr_shows_only_non_default_params():
    assert repr(Toy()) == "Toy()"
    assert repr(Toy(flag=2)) == "Toy(flag=2)"
    assert repr(CharTokenizer(vocab_size=10, special_tokens=["<s>"])) == (
        "CharTokenizer(vocab_size=10, special_tokens=['<s>'])"
    )


def test_name_and_kind():
    assert (Toy.kind, Toy.name) == ("tokenizer", "toy")
    assert tokembed.Vectorizer.kind == "vectorizer" and tokembed.Embedder.kind == "embedder"
    assert Component.name == "" and Component.kind == ""


# -- fitted state ---------------------------------------------------------------------------------------------------
def test_is_fitted_looks_at_public_trailing_underscore_attributes():
    tok = Toy()
    assert not tok.is_fitted()
    tok._cache_ = 1  # private: does not count
    assert not tok.is_fitted()
    tok.fit([])
    assert tok.is_fitted()


def test_use_before_fit_raises_not_fitted_with_advice():
    tok = Toy()
    with pytest.raises(NotFittedError, match=r"this Toy \(tokenizer 'toy'\) is not fitted yet: call fit\(...\) or "
                                             r"load\(...\) before using it"):
        tok.encode("a")
    for call in (tok.to_dict, tok.get_vocab, lambda: tok.encode_batch(["a"]), lambda: tok.save("x.json")):
        with pytest.raises(NotFittedError):
            call()
    assert isinstance(NotFittedError("x"), ValueError)


# -- artifacts ------------------------------------------------------------------------------------------------------
def test_to_dict_layout():
    tok = fitted(words=("a",))
    assert tok.to_dict() == {
        "format": "tokembed",
        "format_version": 1,
        "kind": "tokenizer",
        "type": "toy",
        "params": {"words": ("a",), "specials": ("<s>", "<|end|>", "<|e"), "flag": None},
        "state": {"vocab": ["<s>", "<|end|>", "<|e", "a"]},
    }
    assert (ARTIFACT_FORMAT, ARTIFACT_VERSION) == ("tokembed", 1)


def test_save_load_round_trip(tmp_path):
    tok = fitted(words=("a", "b", "c"), flag=[1, 2])
    path = tok.save(tmp_path / "sub" / "toy.tokembed.json")
    assert path == tmp_path / "sub" / "toy.tokembed.json"
    loaded = Toy.load(path)
    assert loaded.get_params() == {"words": ["a", "b", "c"], "specials": ["<s>", "<|end|>", "<|e"], "flag": [1, 2]}
    assert loaded.get_vocab() == tok.get_vocab()
    assert loaded.encode("c a") == tok.encode("c a")
    assert [p.name for p in (tmp_path / "sub").iterdir()] == ["toy.tokembed.json"]  # no temporary file left


def _artifact(tmp_path, **changes):
    data = {**fitted().to_dict(), **changes}
    path = tmp_path / "a.tokembed.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"format": "other"}, r'not a tokembed artifact \(no "format": "tokembed"\)'),
        ({"format_version": 2}, "artifact format version 2; this tokembed reads version 1"),
        ({"format_version": None}, "artifact format version None"),
        ({"kind": "vectorizer"}, "holds a vectorizer of type 'toy', not a tokenizer of type 'toy'; use tokembed.load"),
        ({"type": "char"}, "holds a tokenizer of type 'char', not a tokenizer of type 'toy'"),
        ({"params": []}, '"params" and "state" must be objects'),
        ({"state": None}, '"params" and "state" must be objects'),
        ({"params": {"wrods": []}}, "parameters do not match Toy: .*unexpected keyword argument 'wrods'"),
        ({"state": {}}, r"broken toy state: KeyError: 'vocab'"),
        ({"state": {"vocab": 5}}, "broken toy state: TypeError"),
    ],
)
def test_load_refuses_bad_artifacts_with_artifact_error(tmp_path, changes, message):
    path = _artifact(tmp_path, **changes)
    with pytest.raises(ArtifactError, match=message) as err:
        Toy.load(path)
    assert str(err.value).startswith(str(path))


def test_load_refuses_missing_and_truncated_files(tmp_path):
    with pytest.raises(ArtifactError, match="no such artifact file"):
        Toy.load(tmp_path / "missing.json")
    path = fitted().save(tmp_path / "t.json")
    path.write_bytes(path.read_bytes()[:40])
    with pytest.raises(ArtifactError, match="not a valid JSON artifact .*the file may be truncated"):
        Toy.load(path)


def test_from_dict_without_a_file():
    tok = Toy.from_dict(fitted(words=("z",)).to_dict())
    assert tok.get_vocab()["z"] == 3
    with pytest.raises(ArtifactError, match=r"^<dict>: not a tokembed artifact"):
        Toy.from_dict([1, 2])


def test_tokembed_load_dispatches_on_kind_and_type(tmp_path):
    char = CharTokenizer().fit(["hello"])
    path = char.save(tmp_path / "c.tokembed.json")
    loaded = tokembed.load(path)
    assert type(loaded) is CharTokenizer and loaded.get_vocab() == char.get_vocab()
    other = tmp_path / "o.json"
    other.write_text('{"format": "other"}', encoding="utf-8")
    with pytest.raises(ArtifactError, match="not a tokembed artifact"):
        tokembed.load(other)
    unknown = _artifact(tmp_path)  # type "toy" is not registered
    with pytest.raises(UnknownComponentError, match="unknown tokenizer 'toy'"):
        tokembed.load(unknown)
    reg = tokembed.build_registry(blocked=["char"])
    with pytest.raises(UnknownComponentError, match="unknown tokenizer 'char'"):
        tokembed.load(path, registry=reg)


# -- special tokens written in the text -----------------------------------------------------------------------------
def test_special_token_text_is_plain_unless_allowed():
    tok = fitted(words=("a", "<|end|>x"))
    # plain: the text "<|end|>x" is the ordinary word at id 4 (3 specials + "a"); "<s>" alone is not a word
    assert tok.encode("a <|end|>x").ids.tolist() == [3, 4]
    with pytest.raises(TokembedError, match="unknown piece '<s>'"):
        tok.encode("<s> a")
    enc = tok.encode("<s> a", allowed_special=["<s>"])
    assert enc.ids.tolist() == [0, 3]
    assert enc.tokens == ["<s>", "a"]
    assert enc.offsets.tolist() == [[0, 3], [4, 5]]  # " a" is encoded from offset 3 and shifted back


def test_allowed_special_longest_match_first_and_offsets():
    tok = fitted(words=("a", "x"))
    text = "a <|end|>x <|e"
    # "<|end|>" is preferred to its prefix "<|e"; pieces between specials are shifted to their place in the text
    enc = tok.encode(text, allowed_special="all")
    assert enc.tokens == ["a", "<|end|>", "x", "<|e"]
    assert enc.ids.tolist() == [3, 1, 4, 2]
    assert enc.offsets.tolist() == [[0, 1], [2, 9], [9, 10], [11, 14]]
    assert [text[s:e] for s, e in enc.offsets.tolist()] == enc.tokens
    only_short = tok.encode("<|e", allowed_special=["<|e"])
    assert only_short.ids.tolist() == [2]


def test_allowed_special_errors():
    tok = fitted()
    with pytest.raises(TypeError, match="not a string"):
        tok.encode("a", allowed_special="<s>")
    with pytest.raises(TokembedError, match=r"allowed_special lists \['<mask>'\], which are not special tokens"):
        tok.encode("a", allowed_special=["<mask>"])
    assert tok.encode("a", allowed_special=set()).ids.tolist() == [3]


def test_encode_refuses_non_str():
    tok = fitted()
    for bad in (b"a", None, ["a"]):
        with pytest.raises(TypeError):
            tok.encode(bad)
    with pytest.raises(TypeError):
        tok.encode_batch("a b")


def test_encode_batch_is_encode_per_text():
    tok = fitted()
    assert tok.encode_batch(["a b", "", "b"]) == [tok.encode("a b"), tok.encode(""), tok.encode("b")]


def test_provided_vocabulary_helpers():
    tok = fitted(words=("a", "b"))
    assert tok.get_vocab_size() == 5
    assert tok.token_to_id("b") == 4 and tok.token_to_id("zz") is None
    assert [tok.id_to_token(i) for i in (-1, 0, 4, 5)] == [None, "<s>", "b", None]


# -- Encoding -------------------------------------------------------------------------------------------------------
def test_encoding_coerces_dtypes_and_fills_defaults():
    enc = Encoding([1, 2], ["a", "b"], [[0, 1], [1, 2]])
    assert enc.ids.dtype == np.int32 and enc.offsets.dtype == np.int64
    assert enc.type_ids.tolist() == [0, 0] and enc.type_ids.dtype == np.int32
    assert enc.special_tokens_mask.tolist() == [0, 0] and enc.attention_mask.tolist() == [1, 1]
    assert enc.overflowing == [] and len(enc) == 2
    empty = Encoding([], [], [])
    assert empty.offsets.shape == (0, 2) and len(empty) == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([[1]], ["a"], [[0, 1]]), r"ids must have shape \(n,\)"),
        (([1, 2], ["a"], [[0, 1], [1, 2]]), "1 tokens for 2 ids"),
        (([1], ["a"], [[0, 1, 2]]), r"offsets must have shape \(1, 2\)"),
    ],
)
def test_encoding_validates_shapes(args, message):
    with pytest.raises(ValueError, match=message):
        Encoding(*args)
    with pytest.raises(ValueError, match=r"attention_mask must have shape \(1,\)"):
        Encoding([1], ["a"], [[0, 1]], attention_mask=[1, 1])


def test_encoding_equality_and_concatenate():
    a = Encoding([1], ["a"], [[0, 1]])
    b = Encoding([2, 3], ["b", "c"], [[1, 2], [2, 3]], special_tokens_mask=[0, 1])
    assert a == Encoding([1], ["a"], [[0, 1]]) and a != b and a != "a"
    assert a != Encoding([1], ["a"], [[0, 2]])
    joined = Encoding.concatenate([a, b])
    assert joined.ids.tolist() == [1, 2, 3] and joined.tokens == ["a", "b", "c"]
    assert joined.offsets.tolist() == [[0, 1], [1, 2], [2, 3]]
    assert joined.special_tokens_mask.tolist() == [0, 0, 1]
    assert len(Encoding.concatenate([])) == 0
    assert repr(Encoding(list(range(10)), list("abcdefghij"), [[i, i + 1] for i in range(10)])) == (
        "Encoding(n=10, tokens=['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', ...])"
    )


# -- token ids given to decode ---------------------------------------------------------------------------------------
def test_check_token_ids():
    from tokembed.components import check_token_ids

    assert check_token_ids((1, 2, 3, 0), 4, "t").tolist() == [1, 2, 3, 0]
    assert check_token_ids(np.array([3], np.uint8), 4, "t").dtype == np.int64
    assert check_token_ids([], 4, "t").shape == (0,)
    for bad, message in (([1.5], "t: ids must be integers, got float64"), ([2.0], "ids must be integers"),
                         ([True], "got bool"), (["a"], "ids must be integers"),
                         ([4], r"id 4 is outside the vocabulary \[0, 4\)"), ([-1], "id -1 is outside"),
                         ([10**30], "ids must be integers"), ([[1, 2], [3]], "a flat sequence of integers"),
                         ([[1, 2], [3, 0]], r"got shape \(2, 2\)"),
                         (np.array([2**63], np.uint64), "id 9223372036854775808 is outside")):
        with pytest.raises(TokembedError, match=message):
            check_token_ids(bad, 4, "t")


@pytest.mark.parametrize("name", ["char", "word", "bpe", "wordpiece"])
def test_every_built_in_decode_refuses_ids_that_are_not_integers(name):
    from tokembed import build_registry

    cls = build_registry().get("tokenizer", name)
    params = {"vocab_size": 60, "min_frequency": 1} if name in ("bpe", "wordpiece") else {}
    tok = cls(**params).fit(["the cat sat on the mat", "a dog sat on a log"] * 3)
    assert isinstance(tok.decode([0, 1]), str)
    for bad in ([1.5], [True], ["a"], [tok.get_vocab_size()]):
        with pytest.raises(TokembedError, match=f"^{name}: "):
            tok.decode(bad)


# -- the reason a trainer gives for a vocabulary smaller than asked ---------------------------------------------------
@pytest.mark.parametrize(("name", "params", "reason"), [
    # "hello world": 7 letters + 1 special (<unk>) = 8 base entries; 4 merges make "hello", 4 make "world": 16
    ("bpe", {"min_frequency": 0}, "after 8 merges because no pair is left to merge; the vocabulary has 16 entries"),
    ("bpe", {"min_frequency": 1}, "after 8 merges because no pair is left to merge; the vocabulary has 16 entries"),
    ("bpe", {"min_frequency": 2}, "after 0 merges because no pair occurs at least min_frequency=2 times; the "
                                  "vocabulary has 8 entries"),
    # two-character tokens only: each 5-letter word takes 2 merges (e.g. "he" "ll" "o"), then no pair fits: 8 + 4
    ("bpe", {"min_frequency": 1, "max_token_length": 2}, "after 4 merges because no pair is left to merge within "
                                                         "max_token_length=2; the vocabulary has 12 entries"),
    # 5 specials + 7 initial letters + 5 "##" letters = 17 base entries; 4 + 4 merges: 25
    ("wordpiece", {"min_frequency": 0}, "because no pair is left to merge; the vocabulary has 25 entries"),
    ("wordpiece", {"min_frequency": 1}, "because no pair is left to merge; the vocabulary has 25 entries"),
    ("wordpiece", {"min_frequency": 3}, "because no pair occurs at least min_frequency=3 times; the vocabulary has "
                                        "17 entries"),
])
def test_a_trainer_says_why_the_vocabulary_is_smaller_than_asked(name, params, reason):
    import warnings

    from tokembed import build_registry
    from tokembed.errors import VocabularySizeWarning

    cls = build_registry().get("tokenizer", name)
    extra = {"byte_level": False} if name == "bpe" else {"show_progress": False}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cls(vocab_size=1000, **extra, **params).fit(["hello world"])
    messages = [str(w.message) for w in caught if issubclass(w.category, VocabularySizeWarning)]
    assert messages == [f"{name}: training stopped {reason}, not the vocab_size=1000 asked for"]


# -- arrays of a fitted state go to an .npz beside the JSON ------------------------------------------------------------
def _array_component():
    from tokembed.components import Embedder

    class Arrays(Embedder):
        name = "arrays-test"

        def __init__(self, n: int = 3):
            self.n = n

        def fit(self, X=None):
            self.table_ = np.arange(self.n * 2, dtype=np.float32).reshape(self.n, 2)
            return self

        def _get_state(self):
            return {"table": self.table_, "note": "kept in the JSON"}

        def _set_state(self, state):
            assert state["note"] == "kept in the JSON"
            self.table_ = state["table"]

    return Arrays


def test_state_arrays_are_saved_beside_the_json_and_checked_on_load(tmp_path):
    cls = _array_component()
    path = tmp_path / "a.tokembed.json"
    cls().fit().save(path)
    data = json.loads(path.read_text())
    assert data["arrays"]["names"] == ["table"] and "table" not in data["state"]
    back = cls.load(path)
    assert back.table_.dtype == np.float32 and back.table_.tolist() == [[0, 1], [2, 3], [4, 5]]
    first = (tmp_path / "a.tokembed.npz").read_bytes()
    cls().fit().save(tmp_path / "b.tokembed.json")
    assert (tmp_path / "b.tokembed.npz").read_bytes() == first  # deterministic: no time stamps in the zip
    assert (tmp_path / "b.tokembed.json").read_bytes() == path.read_bytes()  # the JSON names no file
    (tmp_path / "a.tokembed.npz").write_bytes((tmp_path / "b.tokembed.npz").read_bytes()[:-10])
    with pytest.raises(ArtifactError, match="not the one saved with it"):
        cls.load(path)
    (tmp_path / "a.tokembed.npz").unlink()
    with pytest.raises(ArtifactError, match="arrays file .* cannot be read"):
        cls.load(path)
    bad = cls().fit()
    bad.table_[1, 1] = np.nan
    with pytest.raises(TokembedError, match="holds NaN or infinity; nothing was saved"):
        bad.save(tmp_path / "nan.tokembed.json")
    assert not (tmp_path / "nan.tokembed.json").exists() and not (tmp_path / "nan.tokembed.npz").exists()


def test_an_old_style_get_feature_names_out_works_in_a_scikit_learn_pipeline():
    from sklearn.pipeline import Pipeline

    from tokembed import Vectorizer

    class Lengths(Vectorizer):
        name = "lengths-test"

        def fit(self, X, y=None):
            self.fitted_ = True
            return self

        def transform(self, X):
            return np.array([[len(doc)] for doc in X], dtype=np.float64)

        def get_feature_names_out(self):  # written without scikit-learn's input_features argument
            return np.array(["length"], dtype=object)

    pipe = Pipeline([("lengths", Lengths())]).fit([["a", "b"], ["c"]])
    assert pipe.get_feature_names_out().tolist() == ["length"]
    assert Lengths().get_feature_names_out(["x"]).tolist() == ["length"]
