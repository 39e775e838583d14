"""Every tokenizer's fit refuses one str (it would train on each character as a document) with the fix."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

import tokembed
from tokembed import Tokenizer
from tokembed.errors import TokembedError


@pytest.mark.parametrize("name", ["bpe", "char", "unigram", "word", "wordpiece"])
def test_a_built_in_tokenizer_refuses_one_string(name):
    cls = tokembed.build_registry().get("tokenizer", name)
    tok = cls()
    with pytest.raises(TokembedError) as err:
        tok.fit("call me Ishmael")
    assert str(err.value) == (f"{name}: fit expects an iterable of documents, got one str; wrap it in a list ([text]) "
                              "to learn from one document")
    assert not tok.is_fitted()
    if hasattr(cls, "partial_counts") and "partial_counts" in vars(cls):
        with pytest.raises(TokembedError, match="partial_counts expects an iterable of documents, got one str"):
            tok.partial_counts("call me Ishmael")


class Letters(Tokenizer):
    """A third party's tokenizer, written without any check of its own: the base class adds it."""

    name: ClassVar[str] = "letters"
    calls: ClassVar[list] = []

    def fit(self, corpus: Any) -> "Letters":
        type(self).calls.append(corpus)
        self.vocab_ = {c: i for i, c in enumerate(sorted(set("".join(corpus))))}
        self.special_tokens_ = []
        return self


def test_a_third_party_tokenizer_gets_the_check_and_keeps_its_signature():
    import inspect

    with pytest.raises(TokembedError, match=r"^letters: fit expects an iterable of documents, got one bytes"):
        Letters().fit(b"abc")
    assert Letters.calls == []  # refused before the plugin's own fit ran
    assert Letters().fit(["ab", "c"]).vocab_ == {"a": 0, "b": 1, "c": 2}
    assert list(inspect.signature(Letters.fit).parameters) == ["self", "corpus"]
    assert Letters.fit.__doc__ is None and Letters.fit.__name__ == "fit"


def test_the_contract_checks_load_formats_and_the_one_text_refusal():
    from tokembed.plugins.char.tokenizer import CharTokenizer
    from tokembed.testing.checks import check_tokenizer_load_formats

    class Lists(CharTokenizer):
        name: ClassVar[str] = "lists"
        load_formats: ClassVar[tuple[str, ...]] = ("vocab_txt",)

    with pytest.raises(AssertionError, match=r"load_formats lists 'vocab_txt' but the class has no classmethod "
                                             r"from_vocab_file\(\)"):
        check_tokenizer_load_formats(Lists)
    Lists.load_formats = ("hf_json",)
    with pytest.raises(AssertionError, match=r"'hf_json', which is not a format: .*hf_json as 'hf_json:<model type>'"):
        check_tokenizer_load_formats(Lists)
    Lists.load_formats = ()
    check_tokenizer_load_formats(Lists)  # nothing listed, one str refused: kept

    class Late(CharTokenizer):
        name: ClassVar[str] = "late"

    def fit(self, corpus):  # set on the class after it was made: the base class never saw it
        self.vocab_ = {c: i for i, c in enumerate(sorted(set("".join(corpus))))}
        return self

    Late.fit = fit
    with pytest.raises(AssertionError, match=r"fit\('one text'\) learned from each character as a document"):
        check_tokenizer_load_formats(Late)
