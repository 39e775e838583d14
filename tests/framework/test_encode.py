"""tokembed encode: a corpus's ids on disk in three layouts, equal to encode_batch, written atomically."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
import warnings

import numpy as np
import pytest

from tokembed.cli import main
from tokembed.encode import encode_corpus, tokenizer_digest
from tokembed.encoded import id_dtype, read_manifest
from tokembed.errors import ArtifactError, TokembedError
from tokembed.plugins.bpe.tokenizer import BPETokenizer
from tokembed.plugins.word.tokenizer import WordTokenizer
from tokembed.sequences import TokenSequences, as_token_sequences
from tokembed.testing import sample_corpus

# blank and whitespace-only documents, CJK, emoji, a combining mark, a lone surrogate, a long line
DOCS = ["The whale, the whale!", "", "   ", "鯨は海にいる。", "🐋 and 🐳", "cafe\u0301", "lone \ud800 surrogate",
        "ahab " * 3000, "Call me Ishmael."]


@pytest.fixture(scope="module")
def gpt():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return BPETokenizer(vocab_size=400, byte_level=True, special_tokens=["<|endoftext|>"]).fit(sample_corpus())


def _reference(tok, docs):
    encs = tok.encode_batch(docs, add_special_tokens=False)
    return [np.asarray(e.ids, dtype=np.int64) for e in encs]


def test_tokembed_layout_maps_back_to_the_ids_of_encode_batch(gpt, tmp_path):
    summary = encode_corpus(gpt, DOCS, tmp_path / "enc", progress=False)
    assert (summary.documents, summary.tokens) == (len(DOCS), sum(len(r) for r in _reference(gpt, DOCS)))
    seqs = TokenSequences.open(tmp_path / "enc")
    assert isinstance(seqs.ids, np.memmap) and seqs.ids.dtype == np.uint16 and seqs.is_mapped
    assert [np.asarray(seqs[i], dtype=np.int64).tolist() for i in range(len(seqs))] == \
        [r.tolist() for r in _reference(gpt, DOCS)]
    assert seqs.vocab == tuple(gpt.id_to_token(i) for i in range(gpt.get_vocab_size()))
    assert seqs.special_ids == {gpt.token_to_id("<|endoftext|>")}
    # what consumers read today: the same documents as from_tokenizer, int32 in memory
    mem = as_token_sequences(seqs)
    ref = TokenSequences.from_tokenizer(gpt, DOCS)
    assert mem.ids.dtype == np.int32 and np.array_equal(mem.ids, ref.ids) and np.array_equal(mem.offsets, ref.offsets)
    manifest = read_manifest(tmp_path / "enc")
    # the digest is the saved tokenizer's SHA-256, and the folder holds that tokenizer
    assert manifest["tokenizer"]["sha256"] == tokenizer_digest(gpt) == \
        hashlib.sha256((tmp_path / "enc" / "tokenizer.tokembed.json").read_bytes()).hexdigest()
    assert (manifest["dtype"], manifest["documents"], manifest["layout"]) == ("uint16", len(DOCS), "tokembed")


def test_nanogpt_layout_is_one_uint16_array_with_the_end_of_text_id_after_each_document(gpt, tmp_path):
    encode_corpus(gpt, DOCS, tmp_path / "nano", format="nanogpt", progress=False)
    eot = gpt.token_to_id("<|endoftext|>")
    flat = np.fromfile(tmp_path / "nano" / "tokens.bin", dtype=np.uint16)
    expected = np.concatenate([np.append(r, eot) for r in _reference(gpt, DOCS)])
    assert np.array_equal(flat, expected)
    assert read_manifest(tmp_path / "nano")["eot_id"] == eot


def test_megatron_layout_is_read_by_megatron_core(gpt, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from megatron.core.datasets.indexed_dataset import IndexedDataset
    encode_corpus(gpt, DOCS, tmp_path / "mega", format="megatron", progress=False)
    ds = IndexedDataset(str(tmp_path / "mega" / "tokens"))
    ref = _reference(gpt, DOCS)
    assert len(ds) == len(DOCS) and ds.document_indices.tolist() == list(range(len(DOCS) + 1))
    assert all(np.array_equal(np.asarray(ds[i], np.int64), r) for i, r in enumerate(ref))
    eot = 7  # with an end-of-text id, each sequence ends with it
    encode_corpus(gpt, DOCS, tmp_path / "mega-eot", format="megatron", eot_id=eot, progress=False)
    ds = IndexedDataset(str(tmp_path / "mega-eot" / "tokens"))
    assert all(np.array_equal(np.asarray(ds[i], np.int64), np.append(r, eot)) for i, r in enumerate(ref))


def test_a_vocabulary_past_16_bits_is_stored_as_uint32_and_refused_by_nanogpt(tmp_path):
    # 70,000 distinct words, each kept (min_frequency 1): ids up to 70,000 do not fit in uint16
    words = [f"w{i}" for i in range(70_000)]
    tok = WordTokenizer(pre_tokenizer="whitespace_split", min_frequency=1).fit([" ".join(words[i:i + 1000])
                                                                                  for i in range(0, 70_000, 1000)])
    assert tok.get_vocab_size() > 65_536 and id_dtype(tok.get_vocab_size()) == np.uint32
    with pytest.raises(TokembedError, match="65,535") as info:
        encode_corpus(tok, ["w1 w69999"], tmp_path / "nano", format="nanogpt", eot_id=0, progress=False)
    assert f"{tok.get_vocab_size():,}" in str(info.value)
    assert not (tmp_path / "nano").exists()
    encode_corpus(tok, ["w1 w69999"], tmp_path / "wide", progress=False)
    seqs = TokenSequences.open(tmp_path / "wide")
    assert seqs.ids.dtype == np.uint32 and seqs[0].tolist() == tok.encode("w1 w69999").ids.tolist()


def test_an_interrupted_encode_leaves_nothing_that_looks_complete(gpt, tmp_path):
    def docs():  # past the first batch (16,384 documents), which is read before any file is made
        for _ in range(16384 // len(DOCS) + 1):
            yield from DOCS
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        encode_corpus(gpt, docs(), tmp_path / "enc", progress=False)
    assert not (tmp_path / "enc").exists()
    kept = tmp_path / "enc.incomplete"
    assert kept.is_dir() and not (kept / "encoded.json").exists()
    with pytest.raises(ArtifactError, match="no encoded.json"):
        TokenSequences.open(kept)


def test_bad_input_is_a_clear_error(gpt, tmp_path):
    with pytest.raises(TokembedError, match="holds no document"):
        encode_corpus(gpt, [], tmp_path / "empty", progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # neither empty/ nor empty.incomplete/, nor a lock
    with pytest.raises(TokembedError, match="wrap it in a list"):
        encode_corpus(gpt, "one string", tmp_path / "s", progress=False)
    with pytest.raises(TokembedError, match=r"in a recipe\) must be an id of the vocabulary, in \[0, "):
        encode_corpus(gpt, DOCS, tmp_path / "e", format="nanogpt", eot_id=10**6, progress=False)
    with pytest.raises(TokembedError, match="format must be one of"):
        encode_corpus(gpt, DOCS, tmp_path / "f", format="arrow", progress=False)
    encode_corpus(gpt, DOCS, tmp_path / "enc", progress=False)
    (tmp_path / "enc" / "ids.npy").write_bytes((tmp_path / "enc" / "ids.npy").read_bytes()[:-4])  # truncated
    with pytest.raises(ArtifactError):
        TokenSequences.open(tmp_path / "enc")


def test_the_command_reads_a_corpus_file_as_a_recipe_does(gpt, tmp_path, capsys):
    gpt.save(tmp_path / "gpt.tokembed.json")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("first line\n\n   \nsecond line\n", encoding="utf-8")
    assert main(["encode", str(tmp_path / "gpt.tokembed.json"), str(corpus), "--out", str(tmp_path / "out"),
                 "-q"]) == 0
    assert "encoded 2 documents" in capsys.readouterr().out  # blank and whitespace-only lines are not documents
    seqs = TokenSequences.open(tmp_path / "out")
    assert [np.asarray(s, np.int64).tolist() for s in seqs] == [r.tolist() for r in
                                                               _reference(gpt, ["first line", "second line"])]
    assert json.loads((tmp_path / "out" / "encoded.json").read_text())["corpus"]["source"] == str(corpus)


def test_an_end_of_text_id_is_refused_where_it_would_be_dropped(gpt, tmp_path):
    # the tokembed layout writes no end-of-text id (offsets keep documents apart): --eot-id was silently ignored
    with pytest.raises(TokembedError, match=r"in a recipe\) applies to the nanogpt and megatron formats"):
        encode_corpus(gpt, DOCS, tmp_path / "enc", eot_id=0, progress=False)
    assert not (tmp_path / "enc").exists() and not (tmp_path / "enc.incomplete").exists()


def test_the_command_names_what_it_was_given_instead_of_a_tokenizer(gpt, tmp_path, capsys):
    from tokembed.plugins.sinusoidal.embedder import SinusoidalEmbedder

    SinusoidalEmbedder(d_model=4, max_len=8, vocab_size=10).fit(None).save(tmp_path / "pos.tokembed.json")
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(b"fine\nbad \xff byte\n")
    assert main(["encode", str(tmp_path / "pos.tokembed.json"), str(corpus), "--out", str(tmp_path / "o"),
                 "-q"]) == 2
    assert "holds an embedder, not a tokenizer" in capsys.readouterr().err
    gpt.save(tmp_path / "gpt.tokembed.json")
    assert main(["encode", str(tmp_path / "gpt.tokembed.json"), str(corpus), "--out", str(tmp_path / "o"),
                 "-q"]) == 2
    assert "`--errors replace` for tokembed encode" in capsys.readouterr().err  # the option this command has
    assert main(["encode", str(tmp_path / "gpt.tokembed.json"), str(corpus), "--out", str(tmp_path / "o"),
                 "--errors", "replace", "-q"]) == 0


@pytest.mark.parametrize("change", [
    {"special_ids": ["x"]}, {"special_ids": 5}, {"special_ids": [10**6]}, {"documents": "9"}, {"tokens": None},
    {"dtype": "float32"}, {"vocab_size": True},
])
def test_a_changed_manifest_is_an_artifact_error(gpt, tmp_path, change):
    # these raised ValueError or TypeError from inside open (int("x"), "9" + 1, iterating 5)
    encode_corpus(gpt, DOCS, tmp_path / "enc", progress=False)
    manifest = json.loads((tmp_path / "enc" / "encoded.json").read_text())
    (tmp_path / "enc" / "encoded.json").write_text(json.dumps({**manifest, **change}))
    with pytest.raises(ArtifactError, match="encoded.json has an invalid"):
        TokenSequences.open(tmp_path / "enc")


def test_a_vocabulary_of_other_things_than_str_is_an_artifact_error(gpt, tmp_path):
    encode_corpus(gpt, DOCS, tmp_path / "enc", progress=False)
    vocab = json.loads((tmp_path / "enc" / "vocab.json").read_text())
    (tmp_path / "enc" / "vocab.json").write_text(json.dumps([None] + vocab[1:]))
    with pytest.raises(ArtifactError, match="vocab.json must be a list of str"):
        TokenSequences.open(tmp_path / "enc")


def test_counting_a_mapped_corpus_with_an_id_past_its_vocabulary_is_a_tokembed_error(gpt, tmp_path):
    # counts() (cooccurrence and glove count with it) raised numpy's "operands could not be broadcast"
    encode_corpus(gpt, DOCS, tmp_path / "enc", progress=False)
    ids = np.load(tmp_path / "enc" / "ids.npy")
    ids[-1] = gpt.get_vocab_size()
    np.save(tmp_path / "enc" / "ids.npy", ids)
    with pytest.raises(TokembedError, match=rf"id {gpt.get_vocab_size()} is outside the vocabulary"):
        TokenSequences.open(tmp_path / "enc").counts()


def test_word_vectors_refuse_a_mapped_corpus_whose_offsets_decrease(gpt, tmp_path):
    # open checks the first and last offset only; word2vec and fasttext trained silently on the changed documents
    from tokembed.plugins.fasttext.embedder import Word2VecEmbedder
    encode_corpus(gpt, DOCS, tmp_path / "enc", progress=False)
    offsets = np.load(tmp_path / "enc" / "offsets.npy")
    offsets[1] = offsets[2] + 1
    np.save(tmp_path / "enc" / "offsets.npy", offsets)
    with pytest.raises(TokembedError, match="offsets decrease"):
        Word2VecEmbedder(vector_size=4, epochs=1, min_count=1, workers=1,
                         show_progress=False).fit(TokenSequences.open(tmp_path / "enc"))


def test_open_says_when_there_is_no_folder(tmp_path):
    with pytest.raises(ArtifactError, match="no such folder"):
        TokenSequences.open(tmp_path / "nowhere")
    (tmp_path / "corpus.txt").write_text("text\n", encoding="utf-8")
    with pytest.raises(ArtifactError, match="is a file; an encoded corpus is the folder"):
        TokenSequences.open(tmp_path / "corpus.txt")


def test_an_empty_corpus_is_a_clear_error_and_leaves_nothing(gpt, tmp_path, capsys):
    gpt.save(tmp_path / "gpt.tokembed.json")
    (tmp_path / "blank.txt").write_text("\n   \n\t\n", encoding="utf-8")  # no document by the recipe's rule
    before = sorted(p.name for p in tmp_path.iterdir())
    assert main(["encode", str(tmp_path / "gpt.tokembed.json"), str(tmp_path / "blank.txt"), "--out",
                 str(tmp_path / "out"), "-q"]) != 0
    assert "blank.txt: empty (no non-empty document in 1 file)" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no out/, out.incomplete/ nor lock file


def test_the_command_says_which_tokenizer_files_it_reads(gpt, tmp_path, capsys):
    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    (tmp_path / "c.txt").write_text("one line\n", encoding="utf-8")
    for given, what in ((fixtures / "gpt2.tiktoken", "tiktoken"), (fixtures / "bert-base-uncased-vocab.txt",
                                                                  "vocab")):
        assert main(["encode", str(given), str(tmp_path / "c.txt"), "--out", str(tmp_path / "o"), "-q"]) != 0
        err = capsys.readouterr().err
        assert what in err and "not a saved tokembed tokenizer" in err and "<label>.tokembed.json" in err, err
        assert "not a valid JSON artifact" not in err
    (tmp_path / "x.bin").write_bytes(b"\x00\x01binary")
    assert main(["encode", str(tmp_path / "x.bin"), str(tmp_path / "c.txt"), "--out", str(tmp_path / "o"), "-q"]) != 0
    assert "not a tokenizer file tokembed knows; tokembed encode reads a saved tokembed tokenizer" in \
        capsys.readouterr().err
