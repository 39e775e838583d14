"""Parity with the reference library: sentencepiece's own test models (unigram English and Japanese, BPE) and
Mistral's 32k BPE model with byte fallback encode to identical ids on held-out multilingual text, decode to
sentencepiece's own decode, and give its offsets."""

from __future__ import annotations

import numpy as np
import pytest

from tokembed.plugins.unigram import UnigramTokenizer

from _unigram_data import EDGE_TEXTS, held_out_lines, model_path

spm = pytest.importorskip("sentencepiece")

MODELS = ["botchan_en_unigram_1000.model", "kyoto_ja_unigram_8000.model", "botchan_en_bpe_1000.model", "mistral"]


@pytest.fixture(scope="module", params=MODELS)
def pair(request):
    path = model_path(request.param)
    return UnigramTokenizer.from_sentencepiece(path), spm.SentencePieceProcessor(model_file=str(path))


def test_ids_identical_for_every_line(pair):
    ours, ref = pair
    lines = held_out_lines()
    got = [e.ids.tolist() for e in ours.encode_batch(lines, num_workers=2)]
    want = ref.encode(lines)
    bad = [i for i, (a, b) in enumerate(zip(got, want)) if a != b]
    assert not bad, f"{len(bad)} of {len(lines)} lines differ; first: {lines[bad[0]][:80]!r}"
    # one by one too, and the tokens are the pieces
    for line in EDGE_TEXTS:
        enc = ours.encode(line)
        assert enc.ids.tolist() == ref.encode(line)
        assert enc.tokens == [ref.id_to_piece(i) for i in ref.encode(line)]


def test_encode_ids_equals_sentencepiece_ids_packed(pair):
    ours, ref = pair
    lines = held_out_lines() * 40 + list(EDGE_TEXTS) + ["", "a\ud800b"]  # many 64K-character chunks, on 2 threads
    ids, lengths = ours.encode_ids(lines, num_workers=2)
    assert ids.dtype == np.int32 and lengths.dtype == np.int64 and lengths.shape == (len(lines),)
    want = ref.encode(lines[:-1]) + [ours.encode("a\ud800b", add_special_tokens=False).ids.tolist()]
    assert ids.tolist() == [i for w in want for i in w]
    assert lengths.tolist() == [len(w) for w in want]
    # with spans: the same ids, and the offsets encode_batch gives (checked against sentencepiece's own below)
    ids2, lengths2, spans = ours.encode_ids(lines, num_workers=2, spans=True)
    assert np.array_equal(ids2, ids) and np.array_equal(lengths2, lengths)
    encodings = ours.encode_batch(lines, add_special_tokens=False)
    assert spans.dtype == np.int64 and spans.tolist() == [list(o) for e in encodings for o in e.offsets.tolist()]


def test_decode_equals_sentencepiece_decode(pair):
    ours, ref = pair
    for line in held_out_lines():
        ids = ref.encode(line)
        assert ours.decode(ids) == ref.decode(ids), line[:80]


def test_offsets_equal_sentencepiece_spans(pair):
    ours, ref = pair
    for line in held_out_lines()[:400] + EDGE_TEXTS:
        data = line.encode("utf-8")
        char_of = np.zeros(len(data) + 1, np.int64)
        np.cumsum(np.frombuffer(data, np.uint8) & 0xC0 != 0x80, out=char_of[1:])
        proto = ref.encode(line, return_type="proto")
        want = [[int(char_of[p.begin]), int(char_of[p.end])] for p in proto.pieces]
        got = ours.encode(line).offsets.tolist()
        # sentencepiece gives the byte pieces of one character an empty span except the last; ours give each the
        # character's span
        for (g, w, p) in zip(got, want, proto.pieces):
            if p.begin != p.end:
                assert g == w, line[:60]
        assert len(got) == len(want)


def test_vocabulary_and_special_pieces(pair):
    ours, ref = pair
    assert ours.get_vocab_size() == ref.get_piece_size()
    assert [ours.id_to_token(i) for i in range(ours.get_vocab_size())] == \
        [ref.id_to_piece(i) for i in range(ref.get_piece_size())]
    assert ours.token_to_id("<unk>") == ref.unk_id()
    assert "<s>" in ours.special_tokens_ and "</s>" in ours.special_tokens_
    np.testing.assert_array_equal(ours.piece_scores(), [ref.get_score(i) for i in range(ref.get_piece_size())])


def test_written_back_unchanged(pair, tmp_path):
    ours, ref = pair
    path = tmp_path / "copy.model"
    ours.to_sentencepiece(path)
    assert path.read_bytes() == ref.serialized_model_proto()


def test_saved_and_loaded_tokenizer_encodes_the_same(pair, tmp_path):
    ours, _ = pair
    ours.save(tmp_path / "t.tokembed.json")
    again = UnigramTokenizer.load(tmp_path / "t.tokembed.json")
    lines = held_out_lines()[:200]
    assert [e.ids.tolist() for e in again.encode_batch(lines)] == [e.ids.tolist() for e in ours.encode_batch(lines)]


def test_mistral_byte_fallback_round_trip():
    ours = UnigramTokenizer.from_sentencepiece(model_path("mistral"))
    text = "☃ 𝔘 \u0f0f emoji 😀 and a rare 𐌰"
    enc = ours.encode(text)
    assert any(t.startswith("<0x") for t in enc.tokens)
    assert ours.decode(enc.ids) == text
    # all byte pieces of one character carry its span
    snow = [o for t, o in zip(enc.tokens, enc.offsets.tolist()) if t.startswith("<0x")]
    assert all(b - a == 1 for a, b in snow)
