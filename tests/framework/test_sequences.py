"""TokenSequences: the CSR-packed token ids that vectorizers and embedders read."""

import numpy as np
import pytest

import tokembed.sequences
from tokembed.errors import TokembedError
from tokembed.sequences import TokenSequences, as_token_sequences


def test_from_tokens_numbers_ids_by_first_occurrence():
    seqs = TokenSequences.from_tokens([["b", "a", "b"], [], ["c", "a"]])
    assert seqs.vocab == ("b", "a", "c")
    assert seqs.ids.tolist() == [0, 1, 0, 2, 1] and seqs.ids.dtype == np.int32
    assert seqs.offsets.tolist() == [0, 3, 3, 5] and seqs.offsets.dtype == np.int64
    assert len(seqs) == 3 and seqs.n_tokens == 5
    assert seqs.to_tokens() == [["b", "a", "b"], [], ["c", "a"]]
    assert seqs.counts().tolist() == [2, 2, 1]
    assert seqs.lengths().tolist() == [3, 0, 2]


def test_from_tokens_with_a_fixed_vocabulary_refuses_an_unknown_token():
    seqs = TokenSequences.from_tokens([["a", "c"]], vocab=["a", "b", "c"])
    assert seqs.ids.tolist() == [0, 2] and seqs.vocab_size == 3
    with pytest.raises(TokembedError, match="document 0 holds 'z', which is not in the vocabulary"):
        TokenSequences.from_tokens([["z"]], vocab=["a"])


def test_bad_arrays_and_raw_text_are_clear_errors():
    with pytest.raises(TokembedError, match="offsets must start at 0"):
        TokenSequences([0, 1], [0, 1], ["a", "b"])
    with pytest.raises(TokembedError, match=r"id 2 is outside the vocabulary \[0, 2\)"):
        TokenSequences([0, 2], [0, 2], ["a", "b"])
    with pytest.raises(TokembedError, match="document 0 is a str"):
        as_token_sequences(["a raw document"])
    with pytest.raises(TokembedError, match="one str"):
        as_token_sequences("text")


def test_slices_and_chunks_concatenate_back_to_the_whole():
    docs = [["x"] * k + ["y"] for k in range(7)]
    seqs = TokenSequences.from_tokens(docs)
    parts = list(seqs.chunks(3))
    assert [len(p) for p in parts] == [3, 3, 1]
    back = TokenSequences.concatenate(parts)
    assert back.ids.tolist() == seqs.ids.tolist() and back.offsets.tolist() == seqs.offsets.tolist()
    assert seqs.slice(2, 4).to_tokens() == docs[2:4]
    assert seqs[-1].tolist() == [1] * 6 + [0]  # doc 0 is ["y"]: y is id 0, x id 1
    with pytest.raises(ValueError):
        seqs[0][0] = 5  # a read-only view


def test_from_tokenizer_packs_the_ids_without_special_tokens():
    from tokembed.plugins.word.tokenizer import WordTokenizer

    tok = WordTokenizer().fit(["the whale", "the sea"])
    seqs = TokenSequences.from_tokenizer(tok, ["the whale the", "", "sea"], batch_size=2)
    assert seqs.to_tokens() == [["the", "whale", "the"], [], ["sea"]]
    assert seqs.vocab == tuple(tok.id_to_token(i) for i in range(tok.get_vocab_size()))
    assert {seqs.vocab[i] for i in seqs.special_ids} == set(tok.special_tokens_)


def test_id_chunks_cover_every_document_once_within_the_token_budget():
    # Lengths 3, 1, 0, 5, 1 (offsets 0 3 4 4 9 10). With a budget of 3: [doc 0] (3 ids), [docs 1-2] (1 id),
    # [doc 3] (5 ids: one document longer than the budget stands alone), [doc 4].
    seqs = TokenSequences.from_tokens([["a", "b", "a"], ["c"], [], ["a"] * 5, ["b"]])
    assert list(seqs.id_chunks(3)) == [(0, 1), (1, 3), (3, 4), (4, 5)]
    assert list(seqs.id_chunks(100)) == [(0, 5)]
    empty = TokenSequences(np.zeros(0, np.int32), np.zeros(1, np.int64), ())
    assert list(empty.id_chunks(4)) == []
    with pytest.raises(TokembedError, match="max_tokens"):
        list(seqs.id_chunks(0))


def test_as_token_sequences_keeps_a_mapped_corpus_only_when_asked():
    seqs = TokenSequences.from_tokens([["a", "b"], ["b"]])
    # uint16 ids, as TokenSequences.open gives them (the constructor would store int32)
    raw = TokenSequences.__new__(TokenSequences)
    raw.ids, raw.offsets, raw.vocab, raw.special_ids = seqs.ids.astype(np.uint16), seqs.offsets, seqs.vocab, frozenset()
    assert raw.is_mapped and as_token_sequences(raw, mapped=True) is raw
    assert as_token_sequences(raw).ids.dtype == np.int32


def test_a_mapped_corpus_is_read_in_int32_chunks_and_its_counts_add_up_over_ranges(monkeypatch):
    import tokembed.sequences

    # Lengths 3, 1, 0, 5, 1 as above; with ranges of at most 3 ids: docs [0], [1, 2], [3], [4]
    seqs = TokenSequences.from_tokens([["a", "b", "a"], ["c"], [], ["a"] * 5, ["b"]])
    raw = TokenSequences.__new__(TokenSequences)
    raw.ids, raw.offsets, raw.vocab, raw.special_ids = seqs.ids.astype(np.uint16), seqs.offsets, seqs.vocab, {2}
    parts = list(raw.in_memory_chunks(3))
    assert [p.to_tokens() for p in parts] == [[["a", "b", "a"]], [["c"], []], [["a"] * 5], [["b"]]]
    assert all(p.ids.dtype == np.int32 and not p.is_mapped and p.vocab is raw.vocab and p.special_ids == {2}
               for p in parts)
    monkeypatch.setattr(tokembed.sequences, "CHUNK_TOKENS", 2)  # the default range of id_chunks and counts
    assert list(raw.id_chunks()) == [(0, 1), (1, 3), (3, 4), (4, 5)]
    assert raw.counts().tolist() == [7, 2, 1] and raw.counts().dtype == np.int64  # a: 2 + 5, b: 1 + 1, c: 1
    assert raw.slice(1, 4).ids.dtype == np.int32


def test_the_counting_kernel_counts_in_place_and_names_an_id_outside_the_vocabulary():
    from tokembed._id_kernels import count_ids

    counts = np.zeros(4, np.int64)
    assert count_ids(np.array([3, 1, 3, 0], np.uint16), 1, 4, counts) == -1
    assert counts.tolist() == [1, 1, 0, 1]  # ids[1:4]: the first 3 is outside the range
    assert count_ids(np.array([2, 7, 1], np.uint32), 0, 3, counts) == 7


def test_counts_of_a_mapped_corpus_slice_by_slice_equal_bincount(monkeypatch):
    # slices of 3 ids cut documents anywhere: counting does not need their boundaries
    monkeypatch.setattr(tokembed.sequences, "READ_TOKENS", 3)
    seqs = TokenSequences.from_tokens([["a", "b", "a", "c"], ["c"], [], ["a"] * 5, ["b"]])
    raw = TokenSequences.__new__(TokenSequences)
    raw.ids, raw.offsets, raw.vocab, raw.special_ids = seqs.ids.astype(np.uint32), seqs.offsets, seqs.vocab, frozenset()
    assert raw.counts().tolist() == np.bincount(seqs.ids).tolist() == [7, 2, 2]
    raw.offsets = seqs.offsets.copy()
    raw.offsets[2] = 9  # 0 4 9 5 10 11: decreasing in the middle, as open does not check
    with pytest.raises(TokembedError, match="offsets decrease"):
        raw.counts()
