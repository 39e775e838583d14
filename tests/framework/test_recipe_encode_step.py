"""``encode:`` on a tokenizer stage: the run writes the corpus's token ids with the fitted tokenizer, the same files
``tokembed encode`` writes, into the run folder or a folder named relative to the recipe file; its options are
checked by validate."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from tokembed.cli import main
from tokembed.corpus import Corpus, read_documents
from tokembed.errors import RecipeError
from tokembed.recipe import load_recipe
from tokembed.runner import run_recipe
from tokembed.sequences import TokenSequences

BPE = "{type: bpe, vocab_size: 400, byte_level: true, special_tokens: ['<|endoftext|>'], seed: 0"


@pytest.fixture()
def work(tmp_path, monkeypatch) -> Path:
    lines = Corpus.builtin("moby-dick").head(200)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "small.txt").write_text("\n".join(lines[:100] + ["", " "] + lines[100:]) + "\n",
                                                 encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _recipe(work: Path, body: str) -> Path:
    (work / "data" / "r.yaml").write_text("corpus: {path: small.txt}\ntokenizers:\n" + body, encoding="utf-8")
    return work / "data" / "r.yaml"


def test_the_run_writes_what_tokembed_encode_writes(work):
    recipe = _recipe(work, f"  bpe: {BPE}, encode: true}}\n  nano: {BPE}, encode: {{format: nanogpt, out: nano}}}}\n")
    run_recipe(recipe, out=work / "run", quiet=True, metrics=False)
    folder = work / "run" / "bpe.encoded"
    tok_file = work / "run" / "bpe.tokembed.json"
    assert main(["encode", str(tok_file), str(work / "data" / "small.txt"), "--out", str(work / "cli"), "-q"]) == 0
    for name in ("ids.npy", "offsets.npy", "vocab.json", "tokenizer.tokembed.json"):
        assert (folder / name).read_bytes() == (work / "cli" / name).read_bytes(), name
    seqs = TokenSequences.open(folder)  # and they are the ids of encode_batch over the recipe's documents
    docs = list(read_documents(work / "data" / "small.txt"))
    from tokembed import load

    ref = [list(map(int, e.ids)) for e in load(tok_file).encode_batch(docs, add_special_tokens=False)]
    assert len(seqs) == len(docs) == 200 and [list(map(int, s)) for s in seqs] == ref
    # out: is relative to the recipe file (data/), and a nanogpt file puts <|endoftext|> (id 0) after each document
    bin_ = np.fromfile(work / "data" / "nano" / "tokens.bin", dtype=np.uint16)
    assert bin_.size == seqs.n_tokens + len(docs) and int((bin_ == 0).sum()) == len(docs)
    # the run's encoded folder starts another recipe: its tokenizer is the folder's (the digests agree)
    (work / "next.yaml").write_text("corpus: {encoded: run/bpe.encoded}\ntokenizers:\n  bpe: {load: "
                                    "run/bpe.tokembed.json}\nvectorizers: {input: bpe, steps: [{type: bow}]}\n",
                                    encoding="utf-8")
    assert load_recipe(work / "next.yaml").corpus.encoded == folder.absolute()
    assert "encode: {format: tokembed}" not in (work / "run" / "recipe.resolved.yaml").read_text() and re.search(
        r"encode:\n\s+format: tokembed", (work / "run" / "recipe.resolved.yaml").read_text())


@pytest.mark.parametrize("encode, problem", [
    ("{format: tokembed, eot_id: 0}", r"tokenizers\.bpe\.encode\.eot_id: the end-of-text id \(--eot-id, eot_id: in "
                                      r"a recipe\) applies to the nanogpt and megatron formats"),
    ("{fromat: nanogpt}", r"tokenizers\.bpe\.encode\.fromat: unknown encode key\. Did you mean 'format'\?"),
    ("{format: arrow}", r"tokenizers\.bpe\.encode\.format: expected one of 'tokembed', 'nanogpt', 'megatron'"),
    ("{eot_id: -1}", r"tokenizers\.bpe\.encode\.eot_id: expected int >= 0"),
    ("[nanogpt]", r"tokenizers\.bpe\.encode: expected true or a mapping"),
])
def test_bad_encode_options_are_validate_errors_at_their_line(work, encode, problem):
    recipe = _recipe(work, f"  bpe: {BPE}, encode: {encode}}}\n")
    with pytest.raises(RecipeError, match=r"r\.yaml:3:\d+: " + problem):
        load_recipe(recipe)


def test_nanogpt_is_refused_at_validate_when_the_vocabulary_may_pass_16_bits(work):
    recipe = _recipe(work, "  bpe: {type: bpe, vocab_size: 70000, encode: {format: nanogpt}}\n")
    with pytest.raises(RecipeError, match=r"encode\.format: the nanogpt format stores ids as uint16 \(at most "
                                          r"65,535\), but this tokenizer's vocabulary has 70,000 entries"):
        load_recipe(recipe)


def test_encode_is_a_tokenizer_key_only(work):
    (work / "data" / "r.yaml").write_text("corpus: {path: small.txt}\ntokenizers:\n  w: {type: word}\nembedders:\n"
                                          "  e: {type: sinusoidal, input: w, d_model: 4, max_len: 8, encode: true}\n",
                                          encoding="utf-8")
    with pytest.raises(RecipeError, match=r"embedders\.e\.encode: not used by embedders: only a tokenizer encodes"):
        load_recipe(work / "data" / "r.yaml")


def test_a_loaded_tokenizer_encodes_too_and_an_encoded_corpus_is_not_encoded_again(work):
    run_recipe(_recipe(work, f"  bpe: {BPE}, encode: true}}\n"), out=work / "run", quiet=True, metrics=False)
    loaded = _recipe(work, "  gpt: {load: ../run/bpe.tokembed.json, encode: {format: megatron, out: mega}}\n")
    run_recipe(loaded, out=work / "run2", quiet=True, metrics=False)
    seqs = TokenSequences.open(work / "run" / "bpe.encoded")
    # megatron without eot_id: the documents' ids back to back, as the tokembed layout's ids.npy
    assert np.array_equal(np.fromfile(work / "data" / "mega" / "tokens.bin", dtype=np.uint16), np.asarray(seqs.ids))
    (work / "again.yaml").write_text("corpus: {encoded: run/bpe.encoded}\ntokenizers:\n  bpe: {load: "
                                     "run/bpe.tokembed.json, encode: true}\n", encoding="utf-8")
    with pytest.raises(RecipeError, match=r"again\.yaml:3:\d+: tokenizers\.bpe\.encode: corpus: is already encoded"):
        load_recipe(work / "again.yaml")


def test_two_stages_encoding_into_one_folder_are_a_problem(tmp_path):
    # the second stage's encode replaced the first's output silently
    (tmp_path / "c.txt").write_text("a b\nc d\n", encoding="utf-8")
    (tmp_path / "r.yaml").write_text("corpus: {path: c.txt}\ntokenizers:\n  a: {type: char, encode: {out: same}}\n"
                                     "  b: {type: word, encode: {out: same}}\n", encoding="utf-8")
    with pytest.raises(RecipeError, match=r"r\.yaml:4:\d+: tokenizers\.b\.encode\.out: same: tokenizers\.a\.encode "
                                          r"writes this folder too"):
        load_recipe(tmp_path / "r.yaml")


def test_an_encode_folder_inside_the_run_folder_is_a_validate_error(work):
    # out: is relative to the recipe (data/), the run folder to the current directory (runs/r by default): the run
    # writes runs/r whole, so an encode there failed at the end of the run with a misleading lock message
    recipe = _recipe(work, f"  bpe: {BPE}, encode: {{out: ../runs/r/ids}}}}\n")
    with pytest.raises(RecipeError, match=r"r\.yaml:3:\d+: tokenizers\.bpe\.encode\.out: \S+ids is inside the run "
                                          r"folder \S+r, which the run writes whole"):
        load_recipe(recipe)
    assert load_recipe(_recipe(work, f"  bpe: {BPE}, encode: {{out: ../ids}}}}\n")).tokenizers[0].encode.out == \
        (work / "ids").absolute()
