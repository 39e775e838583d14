"""BPE merge learning: the Numba kernel against the plain-Python reference and against Hugging Face tokenizers."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokembed.plugins import _subword as sw
from tokembed.plugins._subword import reference as ref

from _subword_data import WORD_RE, char_corpus, moby_text


def learn(words, counts, n_base, max_merges, **kw):
    symbols, offsets = ref.to_csr(words)
    m = sw.learn_bpe_merges(symbols, offsets, np.asarray(counts, np.int64), n_base, max_merges, **kw)
    assert m.left.dtype == np.int32 and m.right.dtype == np.int32 and m.pair_count.dtype == np.int64
    return list(zip(m.left.tolist(), m.right.tolist(), m.pair_count.tolist()))


def reference(words, counts, n_base, max_merges, **kw):
    (left, right, counts_out), final = ref.learn_merges(words, list(counts), n_base, max_merges, **kw)
    return list(zip(left, right, counts_out)), final


# ---------------------------------------------------------------------------------------------------------------
# hand-computed cases


def test_ties_go_to_smallest_pair():
    # a=0 b=1 c=2 d=3; words ab, bc, cd once each: every pair has count 1, so the order is (a,b) < (b,c) < (c,d)
    # by (left, right); then no pair is left.
    assert learn([[0, 1], [1, 2], [2, 3]], [1, 1, 1], 4, 10) == [(0, 1, 1), (1, 2, 1), (2, 3, 1)]


def test_overlapping_windows_count_and_merge_left_to_right():
    # "a a a": windows (a,a) twice -> count 2; the merge rewrites left to right: "aa a"; then (aa, a) count 1.
    assert learn([[0, 0, 0]], [1], 1, 10) == [(0, 0, 2), (1, 0, 1)]
    # "a a a a": count 3 -> "aa aa" -> (aa, aa) count 1.
    assert learn([[0, 0, 0, 0]], [1], 1, 10) == [(0, 0, 3), (1, 1, 1)]
    # "aaa" x3 and "bc" x5 (a=0 b=1 c=2): (a,a) has 3 * 2 windows = 6 > 5 = (b,c), so it goes first (counting
    # non-overlapping occurrences would give it 3 and put (b,c) first). Then (b,c) 5, then (aa, a) 3.
    assert learn([[0, 0, 0], [1, 2]], [3, 5], 3, 10) == [(0, 0, 6), (1, 2, 5), (3, 0, 3)]


def test_sennrich_example():
    # Sennrich et al. (2016), figure 1: low x5, lower x2, newest x6, widest x3, with </w> as its own symbol.
    chars = sorted(set("lowernewestwidest")) + ["</w>"]
    cid = {c: i for i, c in enumerate(chars)}
    words = [[cid[c] for c in w] + [cid["</w>"]] for w in ("low", "lower", "newest", "widest")]
    merges = learn(words, [5, 2, 6, 3], len(chars), 5)
    names = list(chars)
    got = []
    for a, b, c in merges:
        names.append(names[a] + names[b])
        got.append((names[a], names[b], c))
    # (e,s) 6+3 = 9 first. Then (es,t) and (t,</w>) tie at 9; "es" is a new id, larger than every base id, so
    # (t,</w>) wins; then (es,t</w>) 9. Then (l,o) 5+2 = 7 ties with (o,w) 7 and l < o; then (lo,w) 7.
    assert got == [("e", "s", 9), ("t", "</w>", 9), ("es", "t</w>", 9), ("l", "o", 7), ("lo", "w", 7)]


def test_min_frequency_and_never_zero():
    # ab x2, cd x1 (a..d = 0..3): with min_frequency 2 only (a,b) qualifies.
    assert learn([[0, 1], [2, 3]], [2, 1], 4, 10, min_frequency=2) == [(0, 1, 2)]
    # a word of count 0 adds nothing: its pair is never merged, even with min_frequency 0.
    assert learn([[0, 1], [2, 3]], [0, 1], 4, 10, min_frequency=0) == [(2, 3, 1)]


def test_max_token_length():
    # "abc" once: (a,b) and (b,c) tie at 1, (a,b) wins; (ab, c) would be 3 characters > 2.
    assert learn([[0, 1, 2]], [1], 3, 10, max_token_length=2) == [(0, 1, 1)]
    # with c a zero-length marker (like </w>), (ab, c) is 2 characters: allowed.
    assert learn([[0, 1, 2]], [1], 3, 10, max_token_length=2, token_len=np.array([1, 1, 0])) == [
        (0, 1, 1), (3, 2, 1)]


def test_max_merges_and_empty_inputs():
    assert learn([[0, 1, 0, 1]], [1], 2, 1) == [(0, 1, 2)]
    assert learn([[0, 1]], [1], 2, 0) == []
    assert learn([], [], 5, 10) == []
    assert learn([[], [0], []], [1, 1, 1], 1, 10) == []


# ---------------------------------------------------------------------------------------------------------------
# kernel == reference


corpora = st.integers(2, 4).flatmap(lambda n_base: st.tuples(
    st.just(n_base),
    st.lists(st.lists(st.integers(0, n_base - 1), max_size=12), min_size=1, max_size=15),
    st.randoms(use_true_random=False),
))


@settings(max_examples=300, deadline=None)
@given(corpora, st.integers(0, 3), st.sampled_from([0, 0, 2, 3, 5]))
def test_kernel_equals_reference_on_random_corpora(corpus, min_frequency, max_token_length):
    n_base, words, rnd = corpus
    counts = [rnd.randint(0, 4) for _ in words]
    token_len = [rnd.randint(0, 2) for _ in range(n_base)]
    kw = dict(min_frequency=min_frequency, max_token_length=max_token_length, token_len=token_len)
    expected, final = reference(words, counts, n_base, 60, **kw)
    assert learn(words, counts, n_base, 60, **kw) == expected
    # the rank-based encoder reproduces the training segmentation
    if expected:
        symbols, offsets = ref.to_csr(words)
        left, right, _ = zip(*expected)
        table = sw.build_merge_table(left, right, n_base + np.arange(len(left)))
        enc = sw.apply_merges(symbols, offsets, table)
        assert [enc.ids[enc.offsets[w]:enc.offsets[w + 1]].tolist() for w in range(len(words))] == final


def test_chunked_run_with_progress_equals_one_run():
    words, counts, chars = char_corpus(moby_text()[:60_000])
    symbols, offsets = ref.to_csr(words)
    whole = sw.learn_bpe_merges(symbols, offsets, counts, len(chars), 700)
    seen = []
    chunked = sw.learn_bpe_merges(symbols, offsets, counts, len(chars), 700, progress=seen.append, chunk_size=64)
    for a, b in zip(whole, chunked):
        np.testing.assert_array_equal(a, b)
    assert seen == list(range(64, 700, 64)) + [700]


def test_growth_from_tiny_tables(monkeypatch):
    # start with room for one pair record and a tiny heap: every phase must ask for room and resume correctly
    words, counts, chars = char_corpus(moby_text()[:30_000])
    symbols, offsets = ref.to_csr(words)
    normal = sw.learn_bpe_merges(symbols, offsets, counts, len(chars), 500)
    monkeypatch.setattr(sw, "_INITIAL_RECORDS", 1)
    tiny = sw.learn_bpe_merges(symbols, offsets, counts, len(chars), 500)
    for a, b in zip(normal, tiny):
        np.testing.assert_array_equal(a, b)


def test_moby_dick_slice_1000_merges_equal_reference():
    # 300 KB of Moby Dick, words and punctuation runs, characters numbered in code-point order
    words, counts, chars = char_corpus(moby_text()[:300_000])
    expected, _ = reference(words, counts, len(chars), 1000)
    got = learn(words, counts, len(chars), 1000)
    assert len(got) == 1000
    assert got == expected


def test_ids_beyond_65536():
    # Map the base ids of a text onto spread-out ids below n_base = 2,000,000 (increasing, so the tie order is
    # kept); new ids are then 2,000,000 + k. The merges must be the same ones, renamed.
    words, counts, chars = char_corpus(moby_text()[:20_000])
    n_base = 2_000_000
    big = [7 + 19_001 * i for i in range(len(chars))]
    assert big[-1] < n_base

    def rename(i):
        return big[i] if i < len(chars) else n_base + i - len(chars)

    small = learn(words, counts, len(chars), 300)
    large = learn([[big[c] for c in w] for w in words], counts, n_base, 300)
    assert large == [(rename(a), rename(b), c) for a, b, c in small]
    symbols, offsets = ref.to_csr([[big[c] for c in w] for w in words])
    left, right, _ = zip(*large)
    enc = sw.apply_merges(symbols, offsets, sw.build_merge_table(left, right, n_base + np.arange(len(left))))
    small_enc = sw.apply_merges(*ref.to_csr(words), sw.build_merge_table(
        [a for a, _, _ in small], [b for _, b, _ in small], len(chars) + np.arange(len(small))))
    assert enc.ids.tolist() == [rename(i) for i in small_enc.ids.tolist()]


def test_one_long_word_is_not_quadratic():
    # reference on a smaller instance: every merge equal
    assert learn([[0] * 5000], [1], 1, 100) == reference([[0] * 5000], [1], 1, 100)[0]
    # 200,000 identical symbols. By hand: 199,999 windows; "a a ... a" -> 100,000 x "aa" with 99,999 windows;
    # -> 50,000 x "aaaa" (49,999); -> 25,000 (24,999); -> 12,500 (12,499); -> 6,250 (6,249); -> 3,125 x a^64.
    n = 200_000
    symbols = np.zeros(n, np.int32)
    offsets = np.array([0, n], np.int64)
    # (a recount of every pair after each merge would stall the suite here; speed is left to the benchmarks)
    m = sw.learn_bpe_merges(symbols, offsets, np.array([1], np.int64), 1, 1000)
    assert m.pair_count[:6].tolist() == [199_999, 99_999, 49_999, 24_999, 12_499, 6_249]
    assert m.left[:6].tolist() == [0, 1, 2, 3, 4, 5] and m.right[:6].tolist() == [0, 1, 2, 3, 4, 5]
    # the merges end with the whole word as one token
    table = sw.build_merge_table(m.left, m.right, 1 + np.arange(m.left.size))
    enc = sw.apply_merges(symbols, offsets, table)
    assert enc.ids.tolist() == [m.left.size] and enc.first.tolist() == [0] and enc.last.tolist() == [n - 1]


# ---------------------------------------------------------------------------------------------------------------
# parity with Hugging Face tokenizers


def _hf_vocab_and_merges(text, vocab_size):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(end_of_word_suffix="</w>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, end_of_word_suffix="</w>", show_progress=False)
    tok.train_from_iterator([text], trainer)
    model = json.loads(tok.to_str())["model"]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
    return set(model["vocab"]), merges


def _our_vocab_and_merges(text, vocab_size):
    # Hugging Face's base numbering: the characters in code-point order, then each "c</w>" (HF adds those in
    # hash-map order; we use code-point order). A word is its characters with </w> fused to the last one.
    words, counts, chars = char_corpus(text)
    ends = sorted({chars[w[-1]] for w in words})
    strings = chars + [c + "</w>" for c in ends]
    end_id = {c: len(chars) + i for i, c in enumerate(ends)}
    words = [w[:-1] + [end_id[chars[w[-1]]]] for w in words]
    symbols, offsets = ref.to_csr(words)
    m = sw.learn_bpe_merges(symbols, offsets, counts, len(strings), vocab_size - len(strings))
    merges = []
    for a, b in zip(m.left.tolist(), m.right.tolist()):
        merges.append((strings[a], strings[b]))
        strings.append(strings[a] + strings[b])
    return set(strings), merges


@pytest.mark.parametrize("vocab_size", [3000, 8000])
def test_vocabulary_matches_hugging_face(vocab_size):
    pytest.importorskip("tokenizers")
    text = moby_text()
    hf_vocab, hf_merges = _hf_vocab_and_merges(text, vocab_size)
    ours, our_merges = _our_vocab_and_merges(text, vocab_size)
    assert len(ours) == len(hf_vocab) == vocab_size
    # Both learners take the pair of highest count; they can differ only in the order of pairs of EQUAL count
    # (Hugging Face numbers its "c</w>" ids in hash-map order, so its ties among them change from run to run),
    # and a different tie order can only swap in or out pairs whose count ties at the cutoff or that a tie
    # consumed. Measured: 100% of the 3,000 and 8,000 tokens equal over repeated runs; the order of merges first
    # differs at merge 2,166 (a tie). Allow 0.5% for tie effects at the cutoff.
    assert len(ours & hf_vocab) >= 0.995 * vocab_size, sorted(ours ^ hf_vocab)[:20]
    # high counts have no ties: the first 500 merges come in the same order
    assert our_merges[:500] == hf_merges[:500]


def test_words_split_like_hugging_face_whitespace():
    # the corpus helper splits text the way Hugging Face's Whitespace pre-tokenizer does
    pytest.importorskip("tokenizers")
    from tokenizers import pre_tokenizers

    text = moby_text()[:20_000]
    assert [w for w, _ in pre_tokenizers.Whitespace().pre_tokenize_str(text)] == WORD_RE.findall(text)


# ---------------------------------------------------------------------------------------------------------------
# validation


@pytest.mark.parametrize("kw, match", [
    (dict(symbols=[0, 5]), "n_base"),
    (dict(offsets=[0, 1]), "offsets"),
    (dict(offsets=[0, 2, 1, 2]), "offsets"),
    (dict(counts=[1, -1]), "counts"),
    (dict(counts=[1]), "counts"),
    (dict(max_merges=-1), "max_merges"),
    (dict(min_frequency=1.5), "min_frequency"),
    (dict(token_len=[1, 1]), "token_len"),
    (dict(symbols=np.array([0.0, 1.0])), "integers"),
])
def test_bad_arguments_raise(kw, match):
    args = dict(symbols=[0, 1], offsets=[0, 1, 2], counts=[1, 1], n_base=3, max_merges=5)
    args.update(kw)
    token_len = args.pop("token_len", None)
    min_frequency = args.pop("min_frequency", 1)
    with pytest.raises(ValueError, match=match):
        sw.learn_bpe_merges(np.asarray(args["symbols"]), np.asarray(args["offsets"]), np.asarray(args["counts"]),
                            args["n_base"], args["max_merges"], token_len=token_len, min_frequency=min_frequency)


def test_every_bad_scalar_argument_is_named_at_once():
    # the scalar arguments are declared with tokembed.params: one call names each bad one with its rule
    with pytest.raises(ValueError, match=r"^2 invalid parameters: n_base must be an int >= 0, got -1; max_merges must "
                                         r"be an int >= 0, got 1\.5$"):
        sw.learn_bpe_merges(np.array([0, 1]), np.array([0, 1, 2]), np.array([1, 1]), -1, 1.5)
