"""What `tokembed run` would hit is reported by `tokembed validate`, before any training (issue 12, item 4), and
padding never undoes truncation's bound (item 5)."""

from __future__ import annotations

import gzip
import textwrap

import pytest

from tokembed.corpus import Corpus
from tokembed.errors import CorpusError, RecipeError, TokembedError
from tokembed.recipe import load_recipe
from tokembed.registry import build_registry

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


def problems_of(path, overrides=(), registry=None) -> str:
    with pytest.raises(RecipeError) as info:
        load_recipe(path, overrides=overrides, registry=registry or build_registry())
    return str(info.value)


# -- batch padding ----------------------------------------------------------------------------------------------
def test_batch_padding_false_is_rejected_at_validate():
    # was: "OK", then `run` failed after the training: "the encodings have different lengths (5 to 17 tokens)"
    msg = problems_of(ROOT / "recipes" / "quickstart.yaml", ["embedders.position.batch.padding=false"])
    assert "embedders.position.batch.padding: false" in msg and "lines: 1" in msg


def test_batch_padding_false_with_one_line_is_accepted():
    load_recipe(ROOT / "recipes" / "quickstart.yaml", ["embedders.position.batch.padding=false",
                                                        "embedders.position.batch.lines=1"], registry=build_registry())


PLUGIN = '''
import numpy as np
from tokembed import Encoding, Tokenizer, hookimpl


class NoPad(Tokenizer):
    """A third-party tokenizer that declares no pad token (no pad_token parameter, the class default None)."""

    name = "nopad-words"

    def __init__(self, lowercase: bool = True):
        self.lowercase = lowercase

    def fit(self, corpus, y=None):
        words = sorted({w for doc in corpus for w in doc.split()})
        self.vocab_ = {w: i for i, w in enumerate(["<unk>", *words])}
        self.special_tokens_ = ["<unk>"]
        return self

    def _encode_text(self, text):
        words = text.split()
        ids = [self.vocab_.get(w, 0) for w in words]
        return Encoding(np.array(ids, np.int32), [w if i else "<unk>" for w, i in zip(words, ids)],
                        np.zeros((len(ids), 2), np.int64))

    def decode(self, ids, skip_special_tokens=False):
        inv = {i: w for w, i in self.vocab_.items()}
        return " ".join(inv[int(i)] for i in ids)

    def get_vocab(self):
        return dict(self.vocab_)

    def _get_state(self):
        return {"vocab": self.vocab_}

    def _set_state(self, state):
        self.vocab_ = dict(state["vocab"])
        self.special_tokens_ = ["<unk>"]


@hookimpl
def tokembed_register_tokenizers():
    return [NoPad]
'''


def test_padding_with_a_third_party_tokenizer_without_pad_token_is_caught_at_validate(fake_dists, tmp_path):
    fake_dists.module("tokembed_nopad", PLUGIN)
    fake_dists.dist("tokembed-nopad", {"nopad": "tokembed_nopad"})
    recipe = tmp_path / "r.yaml"
    recipe.write_text(textwrap.dedent("""\
        corpus: {builtin: moby-dick}
        tokenizers:
          theirs: {type: nopad-words}
        embedders:
          position: {type: sinusoidal, input: theirs, d_model: 8, max_len: 64, batch: {lines: 4}}
        """), encoding="utf-8")
    msg = problems_of(recipe, registry=build_registry())
    assert "embedders.position.batch.padding: 'longest' needs a pad token, but tokenizer 'theirs'" in msg
    assert "docs/plugins.md" in msg


# -- corpus files read before any work --------------------------------------------------------------------------
def _corpus_recipe(tmp_path, name: str, data: bytes, extra: str = "") -> str:
    (tmp_path / name).write_bytes(data)
    recipe = tmp_path / f"{name}.yaml"
    recipe.write_text(f"corpus: {{path: {name}{extra}}}\ntokenizers:\n  c: {{type: char}}\n", encoding="utf-8")
    return str(recipe)


TEXT = "the whale and the sea\ncall me Ishmael\n"


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_utf16_without_bom_is_reported_like_the_bom_case(tmp_path, encoding):
    path = _corpus_recipe(tmp_path, "u16.txt", TEXT.encode(encoding))
    msg = problems_of(path)
    assert "corpus.path" in msg and "UTF-16" in msg and "iconv -f " + encoding.upper().replace("-LE", "LE").replace(
        "-BE", "BE") in msg
    # and reading it (what run does) says the same instead of training on NULs
    with pytest.raises(CorpusError, match="UTF-16"):
        list(Corpus.from_path(tmp_path / "u16.txt"))


@pytest.mark.parametrize("name, data, expect", [
    ("bom16.txt", TEXT.encode("utf-16"), "byte-order mark"),
    ("latin1.txt", "café crème\nsecond line\n".encode("latin-1"), "latin1.txt:1: invalid UTF-8 at byte offset 3"),
    ("binary.txt", gzip.compress(TEXT.encode() * 20), "a binary file"),
    ("nul.txt", b"text\x00\x01\x02\x00\x00binary\x00\n", "NUL"),
])
def test_validate_reads_the_first_bytes_of_every_corpus_file(tmp_path, name, data, expect):
    (tmp_path / "good.txt").write_text(TEXT, encoding="utf-8")
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "a.txt").write_text(TEXT, encoding="utf-8")
    (tmp_path / "dir" / name).write_bytes(data)  # the second file of a folder
    recipe = tmp_path / "r.yaml"
    recipe.write_text("corpus: {path: dir}\ntokenizers:\n  c: {type: char}\n", encoding="utf-8")
    msg = problems_of(recipe)
    assert "corpus.path" in msg and name in msg and expect in msg


@pytest.mark.parametrize("unit", ["line", "file"])
def test_a_nul_past_the_sniffed_start_is_refused_where_it_is(tmp_path, unit):
    # validate sniffs the first 64 KiB only; a NUL after them must stop the read, not become part of a token
    head = b"call me ishmael\n" * 5000  # 80,000 bytes, 5,000 lines
    (tmp_path / "late.txt").write_bytes(head + b"the\x00whale\n")
    with pytest.raises(CorpusError) as info:
        list(Corpus.from_path(tmp_path / "late.txt", unit=unit))
    offset = len(head) + 3  # "the" precedes the NUL on line 5,001
    assert f"NUL byte at byte offset {offset}" in str(info.value)
    if unit == "line":
        assert "late.txt:5001:" in str(info.value)


def test_errors_replace_lets_latin1_through_validate(tmp_path):
    path = _corpus_recipe(tmp_path, "latin1.txt", "café\n".encode("latin-1"), ", errors: replace")
    load_recipe(path, registry=build_registry())


def test_a_gzip_corpus_is_checked_after_decompression(tmp_path):
    path = _corpus_recipe(tmp_path, "u16.txt.gz", gzip.compress(TEXT.encode("utf-16-le")))
    assert "UTF-16" in problems_of(path)
    load_recipe(_corpus_recipe(tmp_path, "ok.txt.gz", gzip.compress(TEXT.encode())), registry=build_registry())


# -- truncation bound with pad_to_multiple_of -------------------------------------------------------------------
def test_truncation_with_pad_to_multiple_of_never_exceeds_max_length():
    from tokembed.plugins.char.tokenizer import CharTokenizer

    tok = CharTokenizer(pad_token="<pad>").fit(["abcdefghijklmnopqrstuvwxyz"])
    text = "abcdefghijklmnopqrst"  # 20 tokens
    # was: 16 ids, longer than max_length=10
    with pytest.raises(TokembedError, match=r"max_length=10.*pad_to_multiple_of=8"):
        tok.encode(text, truncation=True, max_length=10, padding=True, pad_to_multiple_of=8)
    with pytest.raises(TokembedError, match=r"max_length=10.*pad_to_multiple_of=8"):
        tok.encode_batch([text], truncation=True, max_length=10, padding="max_length", pad_to_multiple_of=8)
    # a multiple is fine: 16 ids at most
    enc = tok.encode(text, truncation=True, max_length=16, padding=True, pad_to_multiple_of=8)
    assert len(enc) == 16
    assert len(tok.encode("abc", truncation=True, max_length=16, padding=True, pad_to_multiple_of=8)) == 8
    # without truncation, rounding up is what was asked
    assert len(tok.encode(text, padding=True, pad_to_multiple_of=8)) == 24


@pytest.mark.parametrize("data", [b"", b" \n\n\t\n"])
def test_an_empty_or_blank_corpus_is_refused_at_validate(tmp_path, data):
    path = _corpus_recipe(tmp_path, "empty.txt", data)
    msg = problems_of(path)
    assert "corpus.path: empty.txt is empty or blank: the corpus has no document to train on" in msg
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "a.txt").write_bytes(data)
    (tmp_path / "dir" / "b.txt").write_text("one word\n", encoding="utf-8")  # one file with text is enough
    recipe = tmp_path / "r.yaml"
    recipe.write_text("corpus: {path: dir}\ntokenizers:\n  c: {type: char}\n", encoding="utf-8")
    load_recipe(recipe, registry=build_registry())


def test_a_lone_surrogate_escaped_in_jsonl_is_refused_or_replaced(tmp_path):
    # "\ud83d" alone is valid JSON but no text: it would become a token that cannot be saved as UTF-8
    (tmp_path / "s.jsonl").write_text('{"text": "ok"}\n{"text": "a\\ud83db"}\n', encoding="utf-8")
    with pytest.raises(CorpusError, match=r"s.jsonl:2: field 'text' holds a lone surrogate \(U\+D83D at character 1\)"):
        list(Corpus.from_path(tmp_path / "s.jsonl", format="jsonl", field="text"))
    assert list(Corpus.from_path(tmp_path / "s.jsonl", format="jsonl", field="text", errors="replace")) == [
        "ok", "a\ufffdb"]


# -- a declaration's advice reaches the recipe --------------------------------------------------------------------
def test_validate_gives_the_advice_fit_gives(tmp_path):
    # fit said "use true/false: true where gensim takes 1" and "infinity is not allowed"; validate said only
    # "expected bool, got '1'" and "expected float > 0, got inf" (as if inf were not > 0)
    path = tmp_path / "r.yaml"
    path.write_text(textwrap.dedent("""\
        corpus: {builtin: moby-dick}
        tokenizers:
          words: {type: word}
        embedders:
          w2v: {type: word2vec, input: words, sg: 1, vector_size: 4.0}
          glove: {type: glove, input: words, x_max: .inf}
        """), encoding="utf-8")
    msg = problems_of(path)
    assert "embedders.w2v.sg: expected bool, got '1' (use true/false: true where gensim takes 1)" in msg
    assert "embedders.w2v.vector_size: expected int >= 1 and <= 65,536, got '4.0' (write it without a decimal " \
           "point)" in msg
    assert "embedders.glove.x_max: expected float > 0, got inf (infinity is not allowed: give a large finite " \
           "number)" in msg
