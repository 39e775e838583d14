"""Bad input to the unigram plugin: broken ``.model`` and ``tokenizer.json`` files, corpora that cannot be trained
on. Each is a TokembedError whose message names the file (or the corpus) and what is wrong, never a traceback from
protobuf, json, base64 or NumPy. Also: the shipped test data is what NOTICE says it is."""

from __future__ import annotations

import copy
import json
import warnings

import pytest

from tokembed.errors import ArtifactError, CorpusError, ParameterError, TokembedError, VocabularySizeWarning
from tokembed.plugins.unigram import UnigramTokenizer
from tokembed.plugins.unigram import _proto as P

from _unigram_data import SHA256, model_path, sha256_of

GOOD = "botchan_en_unigram_1000.model"


def test_shipped_test_data_is_what_notice_records():
    for name, digest in SHA256.items():
        assert sha256_of(name) == digest, name


# -- .model files ---------------------------------------------------------------------------------------------------
def _write(tmp_path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _proto(mutate) -> bytes:
    msg = P.message_classes()["ModelProto"]()
    msg.ParseFromString(model_path(GOOD).read_bytes())
    mutate(msg)
    return msg.SerializeToString()


@pytest.mark.parametrize("cut", [1, 10, 1000, 126_576, 253_147])
def test_a_truncated_model_is_an_artifact_error(tmp_path, cut):
    data = model_path(GOOD).read_bytes()
    assert len(data) == 253_152
    path = _write(tmp_path, "cut.model", data[:cut])
    with pytest.raises(ArtifactError, match=r"cut\.model: not a SentencePiece model \(protobuf ModelProto\)"):
        UnigramTokenizer.from_sentencepiece(path)


@pytest.mark.parametrize("data, problem", [
    (bytes(range(256)) * 10, r"not a SentencePiece model \(protobuf ModelProto\)"),
    (b"", "not a SentencePiece model: it holds no piece"),
    (json.dumps({"model": {"type": "Unigram"}}).encode(), "not a SentencePiece model"),  # a tokenizer.json
])
def test_a_corrupt_model_is_an_artifact_error(tmp_path, data, problem):
    path = _write(tmp_path, "bad.model", data)
    with pytest.raises(ArtifactError, match=problem) as err:
        UnigramTokenizer.from_sentencepiece(path)
    assert str(path) in str(err.value)


@pytest.mark.parametrize("kind, name", [(P.MODEL_WORD, "word"), (P.MODEL_CHAR, "char")])
def test_a_model_of_an_unsupported_type_is_refused(tmp_path, kind, name):
    path = _write(tmp_path, f"{name}.model", _proto(lambda m: setattr(m.trainer_spec, "model_type", kind)))
    with pytest.raises(ArtifactError, match=f"a SentencePiece '{name}' model; tokembed reads unigram and bpe models"):
        UnigramTokenizer.from_sentencepiece(path)


@pytest.mark.parametrize("score", [float("nan"), float("inf"), float("-inf")])
def test_a_model_with_a_score_that_is_not_finite_is_refused(tmp_path, score):
    def mutate(msg):
        msg.pieces[10].score = score

    path = _write(tmp_path, "nan.model", _proto(mutate))
    with pytest.raises(ArtifactError, match=rf"nan\.model: piece 10 \('▁to'\) has the score {score}: a piece score "
                                            r"must be a finite number"):
        UnigramTokenizer.from_sentencepiece(path)


def test_a_missing_model_file_is_an_artifact_error(tmp_path):
    with pytest.raises(ArtifactError, match="nothing.model: cannot read"):
        UnigramTokenizer.from_sentencepiece(tmp_path / "nothing.model")


# -- tokenizer.json -------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def hf_json(tmp_path_factory) -> dict:
    path = tmp_path_factory.mktemp("hf") / "tokenizer.json"
    UnigramTokenizer.from_sentencepiece(model_path(GOOD)).to_hf_json(path)
    return json.loads(path.read_text(encoding="utf-8"))


def _edited(data: dict, edit) -> dict:
    out = copy.deepcopy(data)
    edit(out)
    return out


def _set(keys: tuple, value):
    def edit(d):
        for k in keys[:-1]:
            d = d[k]
        d[keys[-1]] = value
    return edit


BAD_JSON = {
    "not an object": (lambda d: [1, 2], "not a Hugging Face tokenizer.json with a Unigram model"),
    "a BPE model": (_set(("model",), {"type": "BPE", "vocab": {}}), "with a Unigram model"),
    "empty vocab": (_set(("model", "vocab"), []), "model.vocab must be a non-empty list of"),
    "vocab an object": (_set(("model", "vocab"), {"a": 1}), "model.vocab must be a non-empty list of"),
    "score a string": (_set(("model", "vocab", 5, 1), "abc"), r'model.vocab\[5\] must be a \[piece, score\] pair of '
                                                             r'a string and a number, got \[",", "abc"\]'),
    "score null": (_set(("model", "vocab", 5, 1), None), r"model.vocab\[5\] must be a \[piece, score\] pair"),
    "score true": (_set(("model", "vocab", 5, 1), True), r"model.vocab\[5\] must be a \[piece, score\] pair"),
    "piece a number": (_set(("model", "vocab", 5, 0), 17), r"model.vocab\[5\] must be a \[piece, score\] pair"),
    "a triple": (_set(("model", "vocab", 5), [",", 1.0, 2]), r"model.vocab\[5\] must be a \[piece, score\] pair"),
    "score NaN": (_set(("model", "vocab", 5, 1), float("nan")), r"piece 5 \(','\) has the score nan"),
    "score past float32": (_set(("model", "vocab", 5, 1), 1e300), r"piece 5 \(','\) has the score inf"),
    "unk_id out of range": (_set(("model", "unk_id"), 99_999), r"model.unk_id must be null or an id of model.vocab "
                                                              r"\(0 to 999\), got 99999"),
    "unk_id a string": (_set(("model", "unk_id"), "0"), "model.unk_id must be null or an id"),
    "added_tokens a string": (_set(("added_tokens",), "x"), "added_tokens must be a list of objects"),
    "added content a number": (_set(("added_tokens",), [{"content": 5, "special": True}]),
                               "added_tokens must be a list of objects, each with a string content"),
    "charsmap not base64": (_set(("normalizer",), {"type": "Precompiled", "precompiled_charsmap": "!!no"}),
                            "the normalizer's precompiled_charsmap is not base64 text"),
    "charsmap broken": (_set(("normalizer",), {"type": "Precompiled", "precompiled_charsmap": "AAAA"}),
                        "precompiled_charsmap: the normalization rule blob is broken"),
    "unknown normalizer": (_set(("normalizer",), {"type": "Lowercase"}), "the normalizer 'Lowercase' has no "
                                                                          "SentencePiece equivalent"),
    "byte fallback without bytes": (_set(("model", "byte_fallback"), True),
                                    "byte_fallback is true but the byte piece <0x00> is missing"),
}


@pytest.mark.parametrize("case", sorted(BAD_JSON))
def test_a_bad_tokenizer_json_is_an_artifact_error(tmp_path, hf_json, case):
    edit, problem = BAD_JSON[case]
    data = edit(copy.deepcopy(hf_json)) if case == "not an object" else _edited(hf_json, edit)
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ArtifactError, match=problem) as err:
        UnigramTokenizer.from_hf_json(path)
    assert str(err.value).startswith(f"{path}: ")


def test_the_unedited_tokenizer_json_loads(tmp_path, hf_json):
    # the cases above fail because of their edit, not because the file was already unreadable
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(hf_json), encoding="utf-8")
    ours = UnigramTokenizer.from_hf_json(path)
    assert ours.get_vocab_size() == 1000


def test_text_that_is_not_json_is_an_artifact_error(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text('{"model": {"type": "Unigram", ', encoding="utf-8")
    with pytest.raises(ArtifactError, match="tokenizer.json: not JSON: "):
        UnigramTokenizer.from_hf_json(path)


# -- training -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("corpus", [[], [""], ["   ", "\n\t"]], ids=["no document", "empty", "whitespace"])
def test_an_empty_corpus_is_a_corpus_error(corpus):
    with pytest.raises(CorpusError, match=r"unigram: the corpus holds no word to learn from \(empty, or only "
                                          r"whitespace\)"):
        UnigramTokenizer(vocab_size=100).fit(corpus)


@pytest.mark.parametrize("corpus, problem", [
    (None, r"unigram: fit needs an iterable of documents \(str\), got NoneType"),
    (5, r"unigram: fit needs an iterable of documents \(str\), got int"),
    (["fine", b"bytes"], "unigram: documents must be str, got bytes at index 1"),
])
def test_a_corpus_that_is_not_documents_is_a_corpus_error(corpus, problem):
    with pytest.raises(CorpusError, match=problem):
        UnigramTokenizer(vocab_size=100).fit(corpus)


def test_vocab_size_above_what_the_corpus_allows():
    corpus = ["the cat sat on the mat"] * 3
    # the corpus has 8 distinct characters (t h e c a s o m) and the default meta pieces are <unk>, <s>, </s>:
    # a vocabulary below 3 + 8 cannot hold them, which is a parameter error before any training
    with pytest.raises(ParameterError) as err:
        UnigramTokenizer(vocab_size=6).fit(corpus)
    assert isinstance(err.value, TokembedError) and err.value.param == "vocab_size"
    # above what the corpus can give, training ends smaller and says so with a warning that names the sizes, and
    # the model is usable (the BPE and WordPiece trainers do the same; SentencePiece's own trainer refuses instead)
    with pytest.warns(VocabularySizeWarning, match=r"only \d+ entries could be learned, not the vocab_size=5000"):
        tok = UnigramTokenizer(vocab_size=5000).fit(corpus)
    assert 11 <= tok.get_vocab_size() < 5000
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tok.decode(tok.encode("the mat").ids) == "the mat"
