"""Training against sentencepiece's trainer on botchan (same settings), the written files in sentencepiece and
Hugging Face tokenizers, and the training options."""

from __future__ import annotations

import io

import numpy as np
import pytest

from tokembed.plugins.unigram import UnigramTokenizer

from _unigram_data import botchan_lines, held_out_lines, quiet_fit

spm = pytest.importorskip("sentencepiece")


@pytest.fixture(scope="module")
def trained():
    lines = list(botchan_lines())
    ours = quiet_fit(UnigramTokenizer(vocab_size=1000, num_threads=2), lines)
    proto = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=proto, vocab_size=1000,
                                   model_type="unigram", num_threads=2, minloglevel=2)
    return ours, spm.SentencePieceProcessor(model_proto=proto.getvalue()), lines


def _mean_log_likelihood(ids_per_line, scores) -> float:
    ids = np.concatenate([np.asarray(i, np.int64) for i in ids_per_line])
    return float(np.mean(scores[ids]))


def test_vocabulary_overlap_with_sentencepiece_trainer(trained):
    ours, ref, _ = trained
    a = {ours.id_to_token(i) for i in range(ours.get_vocab_size())}
    b = {ref.id_to_piece(i) for i in range(ref.get_piece_size())}
    assert len(a) == len(b) == 1000
    # measured: 985 of 1,000 (98.5%) with sentencepiece 0.2.3
    assert len(a & b) >= 0.90 * len(b), len(a & b)


def test_average_log_likelihood_per_token_within_one_percent(trained):
    ours, ref, lines = trained
    ref_scores = np.array([ref.get_score(i) for i in range(ref.get_piece_size())])
    ll_ours = _mean_log_likelihood([e.ids for e in ours.encode_batch(lines)], ours.piece_scores().astype(float))
    ll_ref = _mean_log_likelihood(ref.encode(lines), ref_scores)
    assert abs(ll_ours - ll_ref) <= 0.01 * abs(ll_ref), (ll_ours, ll_ref)


def test_written_model_loads_in_sentencepiece_and_encodes_the_same(trained, tmp_path):
    ours, _, lines = trained
    path = tmp_path / "ours.model"
    ours.to_sentencepiece(path)
    sp = spm.SentencePieceProcessor(model_file=str(path))
    test = held_out_lines()
    assert [e.ids.tolist() for e in ours.encode_batch(test)] == sp.encode(test)
    assert [ours.decode(i) for i in sp.encode(test)] == [sp.decode(i) for i in sp.encode(test)]
    back = UnigramTokenizer.from_sentencepiece(path)
    assert back.get_vocab() == ours.get_vocab()


def test_hugging_face_tokenizer_json_round_trip(trained, tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    ours, _, lines = trained
    path = tmp_path / "tokenizer.json"
    ours.to_hf_json(path)
    hf = tokenizers.Tokenizer.from_file(str(path))
    test = [line for line in lines[-500:] if line.strip()]
    assert [e.ids for e in hf.encode_batch(test)] == [e.ids.tolist() for e in ours.encode_batch(test)]
    back = UnigramTokenizer.from_hf_json(path)
    assert [e.ids.tolist() for e in back.encode_batch(test)] == [e.ids.tolist() for e in ours.encode_batch(test)]


def test_training_does_not_depend_on_threads(trained):
    ours, _, lines = trained
    one = quiet_fit(UnigramTokenizer(vocab_size=1000, num_threads=1), lines)
    assert one.get_vocab() == ours.get_vocab()
    np.testing.assert_array_equal(one.piece_scores(), ours.piece_scores())


def test_special_pieces_byte_fallback_split_digits_and_user_symbols(trained):
    lines = list(botchan_lines())[:1500] + ["In 1906, 2024 and 31415 the <sep> mark."] * 5
    tok = quiet_fit(UnigramTokenizer(vocab_size=600, byte_fallback=True, split_digits=True, pad_token="<pad>",
                                     user_defined_symbols=["<sep>"], special_tokens=["<mask>"]), lines)
    vocab = tok.get_vocab()
    assert [tok.id_to_token(i) for i in range(7)] == ["<unk>", "<s>", "</s>", "<pad>", "<mask>", "<sep>", "<0x00>"]
    assert tok.expected_special_ids(tok.get_params()) == {"<unk>": 0, "<s>": 1, "</s>": 2, "<pad>": 3, "<mask>": 4}
    assert len(vocab) == 600
    assert not any(len(p.strip("\u2581")) > 1 and any(c.isdigit() for c in p) for p in vocab if not p.startswith("<"))
    enc = tok.encode("a <sep> b \u2603")
    assert "<sep>" in enc.tokens and "<0xE2>" in enc.tokens
    assert tok.decode(enc.ids) == "a <sep> b \u2603"
