"""A recipe that starts from an encoded folder (``corpus: {encoded: DIR}``): the folder's own tokenizer or a
``load:``\\ ed one whose digest matches the manifest's, never a trained one; validate reads only the manifest."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from tokembed.corpus import Corpus, read_documents
from tokembed.encode import encode_corpus, tokenizer_digest
from tokembed.errors import RecipeError
from tokembed.recipe import load_recipe
from tokembed.runner import run_recipe

TFIDF = """\
vectorizers:
  steps: [{type: tfidf}]
"""


@pytest.fixture()
def work(tmp_path) -> Path:
    """small.txt (300 lines of Moby-Dick and some blank ones), the word tokenizer trained on it (tok.tokembed.json),
    another one (other.tokembed.json, min_frequency 3) and the corpus encoded with the first into enc/."""
    from tokembed.plugins.word.tokenizer import WordTokenizer

    lines = Corpus.builtin("moby-dick").head(300)
    (tmp_path / "small.txt").write_text("\n".join(lines[:150] + ["", "  "] + lines[150:]) + "\n", encoding="utf-8")
    tok = WordTokenizer(min_frequency=2).fit(read_documents(tmp_path / "small.txt"))
    tok.save(tmp_path / "tok.tokembed.json")
    WordTokenizer(min_frequency=3).fit(read_documents(tmp_path / "small.txt")).save(tmp_path / "other.tokembed.json")
    encode_corpus(tok, read_documents(tmp_path / "small.txt"), tmp_path / "enc", progress=False)
    return tmp_path


def _write(folder: Path, name: str, text: str) -> Path:
    (folder / name).write_text(text, encoding="utf-8")
    return folder / name


def test_a_run_from_the_encoded_folder_fits_what_a_run_from_the_text_fits(work):
    text = _write(work, "text.yaml", "corpus: {path: small.txt}\ntokenizers:\n  words: {load: tok.tokembed.json}\n"
                                      "vectorizers:\n  input: words\n  steps: [{type: tfidf}]\n")
    enc = _write(work, "enc.yaml", "corpus: {encoded: enc}\n" + TFIDF)  # the folder's own tokenizer
    loaded = _write(work, "loaded.yaml", "corpus: {encoded: enc}\ntokenizers:\n  words: {load: tok.tokembed.json}\n"
                                         "vectorizers:\n  input: words\n  steps: [{type: tfidf}]\n")
    results = {recipe.stem: run_recipe(recipe, out=work / f"run-{recipe.stem}", quiet=True)
               for recipe in (text, enc, loaded)}
    reference = (work / "run-text" / "tfidf.tokembed.json").read_bytes()
    for name in ("enc", "loaded"):
        assert (work / f"run-{name}" / "tfidf.tokembed.json").read_bytes() == reference
        a, b = (np.load(work / f"run-{n}" / "tfidf.npz") for n in ("text", name))
        assert all(np.array_equal(a[k], b[k]) for k in a.files)
    assert not (work / "run-enc" / "metrics.json").exists()  # no text to measure a tokenizer on
    # the loaded tokenizer is saved into the run as any recipe tokenizer; it is the folder's, byte for byte
    assert (work / "run-loaded" / "words.tokembed.json").read_bytes() == (work / "tok.tokembed.json").read_bytes()
    from tokembed.tables import summary_table

    assert re.search(r"tokenizer words \(word\): [\d,]+ entries, loaded in [\d.]+ s \(not measured: the corpus is "
                     r"token ids\)", summary_table(results["loaded"]))
    assert "tokenizer words" not in summary_table(results["text"])  # measured: in the metrics table instead


def test_validate_refuses_a_tokenizer_that_did_not_encode_the_folder_naming_both_digests(work):
    from tokembed import load

    recipe = _write(work, "r.yaml", "corpus: {encoded: enc}\ntokenizers:\n  words: {load: other.tokembed.json}\n"
                                    + TFIDF)
    with pytest.raises(RecipeError) as info:
        load_recipe(recipe)
    message = str(info.value)
    mine, folders = tokenizer_digest(load(work / "other.tokembed.json")), tokenizer_digest(load(work / "tok.tokembed.json"))
    assert mine != folders and mine in message and folders in message
    assert re.search(r"r\.yaml:3:\d+: tokenizers\.words\.load: ", message), message


def test_a_recipe_that_trains_its_tokenizer_on_an_encoded_folder_is_refused(work):
    recipe = _write(work, "r.yaml", "corpus: {encoded: enc}\ntokenizers:\n  words: {type: word}\n" + TFIDF)
    with pytest.raises(RecipeError, match=r"r\.yaml:3:\d+: tokenizers\.words: trains a tokenizer, but corpus: is an "
                                          r"encoded folder"):
        load_recipe(recipe)


def test_validate_reads_the_manifest_not_the_ids(work):
    recipe = _write(work, "r.yaml", "corpus: {encoded: enc}\n" + TFIDF)
    (work / "enc" / "ids.npy").write_bytes(b"not an array")  # a run would refuse it; validate never opens it
    spec = load_recipe(recipe).corpus
    assert spec.encoded == (work / "enc").absolute()
    assert spec.as_dict() == {"encoded": str((work / "enc").absolute())}


@pytest.mark.parametrize("corpus, problem", [
    ("{encoded: nowhere}", r"corpus\.encoded: \S*nowhere: no such folder.*relative to the recipe file"),
    ("{encoded: small.txt}", r"corpus\.encoded: \S*small.txt: is a file"),
    ("{encoded: enc, unit: file}", r"corpus\.unit: not used with encoded"),
    ("{encoded: nano}", r"corpus\.encoded: nano: holds the 'nanogpt' layout"),
])
def test_a_bad_encoded_corpus_is_a_problem_at_its_line(work, corpus, problem):
    from tokembed import load

    encode_corpus(load(work / "tok.tokembed.json"), ["a b"], work / "nano", format="nanogpt", eot_id=0,
                  progress=False)
    recipe = _write(work, "r.yaml", f"corpus: {corpus}\n" + TFIDF)
    with pytest.raises(RecipeError, match=r"r\.yaml:1:\d+: " + problem):
        load_recipe(recipe)


def test_stages_that_need_the_text_are_refused_with_an_encoded_corpus(work):
    recipe = _write(work, "r.yaml", "corpus: {encoded: enc}\nvectorizers:\n  unit: paragraph\n  steps: [{type: tfidf}]\n"
                                    "engine: {type: local}\n")
    with pytest.raises(RecipeError) as info:
        load_recipe(recipe)
    assert "vectorizers.unit: reads the corpus's text by another unit" in str(info.value)
    assert "engine: counts text partitions" in str(info.value)


def test_a_folder_whose_own_tokenizer_was_replaced_is_refused(work):
    # the manifest's digest was compared with a load:ed tokenizer only; the folder's own file was trusted
    (work / "enc" / "tokenizer.tokembed.json").write_bytes((work / "other.tokembed.json").read_bytes())
    recipe = _write(work, "r.yaml", "corpus: {encoded: enc}\n" + TFIDF)
    with pytest.raises(RecipeError, match=r"r\.yaml:1:\d+: corpus\.encoded: enc: its tokenizer\.tokembed\.json "
                                          r"\(digest [0-9a-f]{64}\) is not the tokenizer that encoded the folder"):
        load_recipe(recipe)


def test_a_corpus_option_beside_encoded_does_not_hide_the_other_problems(work):
    # the option made the corpus None: the stages were then checked as over text (no "encode" or "unit" problem,
    # and an embedder without input: was wrongly told to name one)
    recipe = _write(work, "r.yaml", "corpus: {encoded: enc, unit: paragraph}\ntokenizers:\n"
                                    "  w: {load: tok.tokembed.json, encode: true}\n"
                                    "vectorizers: {input: w, unit: paragraph, steps: [{type: tfidf}]}\n"
                                    "embedders:\n  s: {type: sinusoidal, d_model: 8}\n")
    with pytest.raises(RecipeError) as info:
        load_recipe(recipe)
    message = str(info.value)
    assert "corpus.unit: not used with encoded" in message
    assert "tokenizers.w.encode: corpus: is already encoded" in message
    assert "vectorizers.unit: reads the corpus's text by another unit" in message
    assert "embedders.s.input" not in message


def test_an_embedder_and_nearest_documents_from_the_encoded_folder_match_the_text_run(work):
    w2v = "{type: word2vec, vector_size: 8, epochs: 1, min_count: 2, workers: 1, seed: 3, show_progress: false"
    text = _write(work, "text.yaml", "corpus: {path: small.txt}\ntokenizers:\n  words: {load: tok.tokembed.json}\n"
                                      f"embedders:\n  w2v: {w2v}, input: words}}\n"
                                      "vectorizers: {input: words, steps: [{type: bow}], nearest: 4}\n")
    enc = _write(work, "enc.yaml", f"corpus: {{encoded: enc}}\nembedders:\n  w2v: {w2v}}}\n"  # input: the folder's
                                   "vectorizers: {steps: [{type: bow}], nearest: 4}\n")
    a = run_recipe(text, out=work / "run-text", quiet=True)
    b = run_recipe(enc, out=work / "run-enc", quiet=True)
    # one worker and a seed: the same vectors, byte for byte
    assert sorted(p.name for p in (work / "run-enc").glob("w2v*")) == sorted(p.name for p in (work / "run-text").glob("w2v*"))
    for p in (work / "run-text").glob("w2v*"):
        assert p.read_bytes() == (work / "run-enc" / p.name).read_bytes(), p.name
    near_a, near_b = a.neighbours["vectorizers"], b.neighbours["vectorizers"]
    assert [(n["document"], n["cosine"]) for n in near_a["nearest"]] == \
        [(n["document"], n["cosine"]) for n in near_b["nearest"]]
    assert near_b["text"]  # the document's text, decoded from its ids


def test_evaluation_composes_subword_vectors_with_the_folders_tokenizer(tmp_path, monkeypatch):
    """A BPE-encoded folder: the evaluation words get vectors composed from their pieces with the folder's
    tokenizer, among the corpus's frequent words decoded from the ids: the same evaluation.json as the text run."""
    import hashlib
    import json

    from tokembed.datasets import DATASETS
    from tokembed.datasets._store import manifest_path
    from tokembed.plugins.bpe.tokenizer import BPETokenizer

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("TOKEMBED_DATA", str(home))
    spec = DATASETS["wordsim353"]
    out = spec.path_in(home)
    out.write_text("whale\tsea\t8\nship\tboat\t9\ncaptain\tsailor\t7\nwhale\tship\t4\nsea\tcaptain\t2\n",
                   encoding="utf-8")
    manifest_path(spec, home).write_text(json.dumps({
        "name": "wordsim353", "build_version": spec.version, "sha256": hashlib.sha256(out.read_bytes()).hexdigest(),
        "size_bytes": out.stat().st_size}), encoding="utf-8")
    (tmp_path / "small.txt").write_text("\n".join(Corpus.builtin("moby-dick").head(400)) + "\n", encoding="utf-8")
    tok = BPETokenizer(vocab_size=300, byte_level=True, seed=0).fit(read_documents(tmp_path / "small.txt"))
    tok.save(tmp_path / "bpe.tokembed.json")
    encode_corpus(tok, read_documents(tmp_path / "small.txt"), tmp_path / "enc", progress=False)
    w2v = "{type: word2vec, vector_size: 8, epochs: 1, min_count: 1, workers: 1, seed: 3, show_progress: false"
    tail = "evaluate: {sets: [wordsim353]}\n"
    text = _write(tmp_path, "text.yaml", "corpus: {path: small.txt}\ntokenizers:\n  bpe: {load: bpe.tokembed.json}\n"
                                         f"embedders:\n  w2v: {w2v}, input: bpe}}\n" + tail)
    enc = _write(tmp_path, "enc.yaml", f"corpus: {{encoded: enc}}\nembedders:\n  w2v: {w2v}}}\n" + tail)
    a = run_recipe(text, out=tmp_path / "run-text", quiet=True)
    b = run_recipe(enc, out=tmp_path / "run-enc", quiet=True)
    assert "composed" in a.evaluation["w2v"]  # the pieces were composed into words: the case this test is about
    assert a.evaluation == b.evaluation


def test_validate_checks_an_embedder_against_the_folders_tokenizer_and_a_loaded_one(work):
    from tokembed import load

    n = load(work / "tok.tokembed.json").get_vocab_size()
    emb = "{type: sinusoidal, d_model: 4, max_len: 8, vocab_size: 10"
    for name, text in (("own", f"corpus: {{encoded: enc}}\nembedders:\n  pos: {emb}}}\n"),
                       ("loaded", "corpus: {encoded: enc}\ntokenizers:\n  words: {load: tok.tokembed.json}\n"
                                  f"embedders:\n  pos: {emb}, input: words}}\n"),
                       ("text", "corpus: {path: small.txt}\ntokenizers:\n  words: {load: tok.tokembed.json}\n"
                                f"embedders:\n  pos: {emb}, input: words}}\n")):
        with pytest.raises(RecipeError, match=rf"embedders\.pos\.vocab_size: 10 is smaller than the vocab_size of "
                                              rf"tokenizer '[^']+' \({n}\)"):
            load_recipe(_write(work, f"{name}.yaml", text))
    ok = _write(work, "ok.yaml", f"corpus: {{encoded: enc}}\nembedders:\n  pos: {emb.replace('10', str(n))}}}\n")
    assert load_recipe(ok).embedders[0].params["vocab_size"] == n


def test_a_loaded_stage_says_how_to_get_its_tokenizer_instead_of_being_built(work):
    recipe = load_recipe(_write(work, "r.yaml", "corpus: {encoded: enc}\ntokenizers:\n  words: {load: "
                                                "tok.tokembed.json}\n" + TFIDF))
    with pytest.raises(RecipeError, match=r"words: read from .*tok\.tokembed\.json, not built from parameters; get "
                                          r"the tokenizer with tokembed\.recipe\.load\.load_tokenizer"):
        recipe.build("tokenizers.words")
