"""The kernels against plain-Python references: double arrays, Viterbi, lattice probabilities (by hand and by
enumeration), n-best, sampling; and the byte-fallback round trip for any text."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokembed.errors import ParameterError, TokembedError
from tokembed.plugins.unigram import UnigramTokenizer
from tokembed.plugins.unigram._charsmap import build_trie, decode_charsmap, nmt_nfkc_charsmap, nmt_nfkc_rules
from tokembed.plugins.unigram._kernels import exact_match, longest_prefix
from tokembed.plugins.unigram.model import NormalizerSettings, SentencePieceModel

import naive


def toy(pieces: dict[str, float], byte_fallback: bool = False, **norm) -> UnigramTokenizer:
    """A tokenizer over ``<unk>`` plus ``pieces`` (identity rule, no dummy prefix unless asked)."""
    names = ["<unk>"] + list(pieces)
    scores = [0.0] + list(pieces.values())
    types = [2] + [1] * len(pieces)
    if byte_fallback:
        names += [f"<0x{b:02X}>" for b in range(256)]
        scores += [0.0] * 256
        types += [6] * 256
    settings_ = NormalizerSettings(**{"add_dummy_prefix": False, "remove_extra_whitespaces": False, **norm})
    model = SentencePieceModel(names, np.array(scores, np.float32), np.array(types, np.int8), "unigram", settings_,
                               byte_fallback)
    return UnigramTokenizer._from_model(model, {}, "toy")


def test_double_array_finds_exactly_the_keys():
    rng = random.Random(3)
    keys = sorted({"".join(rng.choice("ab\u00e9\u6771c") for _ in range(rng.randint(1, 6))) for _ in range(400)})
    units = build_trie([k.encode() for k in keys], list(range(len(keys))))
    assert units.size % 256 == 0
    for i, k in enumerate(keys):
        b = np.frombuffer(k.encode(), np.uint8)
        assert exact_match(units, b, 0, b.size) == i
        length, value = longest_prefix(units, b, 0, b.size)
        assert (length, value) == (b.size, i)
    for probe in ["zz", "abcabcabc", "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"]:
        b = np.frombuffer(probe.encode(), np.uint8)
        want = max((len(k.encode()) for k in keys if probe.encode().startswith(k.encode())), default=0)
        assert longest_prefix(units, b, 0, b.size)[0] == want
        assert exact_match(units, b, 0, b.size) == (keys.index(probe) if probe in keys else -1)


def test_our_nmt_nfkc_table_reads_back():
    units, repl = decode_charsmap(nmt_nfkc_charsmap())
    rules = nmt_nfkc_rules()
    for src in ["\u00a0", "\uff21", "\u2460", "\ufb01", "e\u0301", "\t", "\x01", "\u2581"]:
        b = np.frombuffer(src.encode(), np.uint8)
        length, value = longest_prefix(units, b, 0, b.size)
        end = value
        while repl[end]:
            end += 1
        assert length == b.size and bytes(repl[value:end]).decode() == rules[src]
    assert "\uff5e" not in rules and rules["\t"] == " " and rules["\x01"] == "" and rules["\uff21"] == "A"


def test_lattice_probabilities_of_a_three_piece_vocabulary_by_hand():
    # pieces a (p = 0.5), b (0.3), ab (0.2): "ab" has two segmentations, [a, b] with 0.5 * 0.3 = 0.15 and [ab]
    # with 0.2, so Z = 0.35, P([ab]) = 0.2 / 0.35 = 4/7 and P([a, b]) = 3/7.
    tok = toy({"a": math.log(0.5), "b": math.log(0.3), "ab": math.log(0.2)})
    got = dict((tuple(p), lp) for p, lp in tok.segmentation_log_probs("ab", 5))
    assert got.keys() == {("ab",), ("a", "b")}
    assert math.exp(got[("ab",)]) == pytest.approx(4 / 7, rel=1e-6)
    assert math.exp(got[("a", "b")]) == pytest.approx(3 / 7, rel=1e-6)
    assert tok.encode("ab").tokens == ["ab"]
    # "aab": [a, ab] 0.1, [a, a, b] 0.075 -> P([a, ab]) = 0.1 / 0.175 = 4/7
    got = dict((tuple(p), lp) for p, lp in tok.segmentation_log_probs("aab", 5))
    assert math.exp(got[("a", "ab")]) == pytest.approx(4 / 7, rel=1e-6)
    # sampling with alpha = 1 draws [ab] with probability 4/7: 7,000 draws with a fixed seed
    draws = [tuple(tok.sample_encode("ab", alpha=1.0, nbest_size=-1, seed=s).tokens) for s in range(7000)]
    assert draws.count(("ab",)) / 7000 == pytest.approx(4 / 7, abs=0.02)


@settings(deadline=None, max_examples=60)
@given(st.text(alphabet="abcd", min_size=0, max_size=14), st.integers(0, 10_000))
def test_viterbi_and_nbest_equal_the_references(text, seed):
    rng = random.Random(seed)
    vocab = {c: -rng.uniform(1, 5) for c in "abcd"}
    for _ in range(12):
        piece = "".join(rng.choice("abcd") for _ in range(rng.randint(2, 4)))
        vocab[piece] = -rng.uniform(1, 8)
    # float32 scores, as the model holds them
    vocab = {k: float(np.float32(v)) for k, v in vocab.items()}
    tok = toy(vocab)
    if not text:
        assert tok.encode(text).tokens == []
        return
    best = naive.best_segmentation(text, vocab)
    ours = tok.encode(text).tokens
    score = sum(vocab[p] for p in ours)
    assert score == pytest.approx(sum(vocab[p] for p in best), abs=1e-4)
    every = sorted((s for _, s in naive.all_segmentations(text, vocab)), reverse=True)
    nbest = tok.encode_nbest(text, 5)
    assert [s for _, s in nbest] == pytest.approx(every[:5], abs=1e-4)
    log_z = naive.log_partition(text, vocab)
    for tokens, lp in tok.segmentation_log_probs(text, 3):
        assert lp == pytest.approx(sum(vocab[p] for p in tokens) - log_z, abs=1e-4)


@settings(deadline=None, max_examples=80)
@given(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\u2581"), max_size=40))
def test_decode_encode_round_trip_with_byte_fallback(text):
    tok = toy({"a": -1.0, "b": -2.0, "ab": -2.5, "\u2581": -3.0}, byte_fallback=True, add_dummy_prefix=True)
    enc = tok.encode(text)
    assert tok.decode(enc.ids) == text
    assert len(enc) == 0 or (enc.offsets[:, 0].min() >= 0 and enc.offsets[:, 1].max() <= len(text))


def test_incomplete_byte_run_decodes_like_python():
    tok = toy({"a": -1.0}, byte_fallback=True)
    ids = [tok.token_to_id("a"), tok.token_to_id("<0xE6>"), tok.token_to_id("<0x9D>"), tok.token_to_id("a")]
    assert tok.decode(ids) == b"a\xe6\x9da".decode("utf-8", "replace") == "a\ufffda"


def test_unknown_characters_merge_into_one_unk_without_byte_fallback():
    tok = toy({"a": -1.0})
    enc = tok.encode("a\u6771\u4eaca")
    assert enc.tokens == ["a", "<unk>", "a"] and enc.offsets.tolist() == [[0, 1], [1, 3], [3, 4]]
    assert tok.decode(enc.ids) == "a \u2047 a"


def test_rule_names():
    rules = ("unigram: normalization_rule_name must be one of 'nmt_nfkc', 'identity' (SentencePiece's 'nfkc', "
             "'nmt_nfkc_cf', 'nfkc_cf' are read from .model files, not built by tokembed), got ")
    for rule in ("nfkc", "nfc"):
        with pytest.raises(ParameterError) as info:
            UnigramTokenizer(normalization_rule_name=rule).fit(["a b"])
        assert str(info.value) == f"{rules}{rule!r}"
    with pytest.raises(TokembedError, match=r"^unigram: nbest_size must be an int >= 1, got 0$"):
        toy({"a": -1.0}).encode_nbest("a", 0)


def test_validate_reports_every_bad_parameter_not_only_the_first():
    # as `tokembed validate` calls it: every declaration, then the rule between parameters on the valid values (3
    # meta pieces: the default <unk>, <s>, </s>, so vocab_size=3 leaves no room for a learned piece)
    assert UnigramTokenizer.check_params({"character_coverage": 0.9, "shrinking_factor": 1, "unk_token": None,
                                          "split_digits": 1, "vocab_size": 3}) == [
        ("character_coverage", "unigram: character_coverage must be a number in [0.98, 1], got 0.9"),
        ("shrinking_factor", "unigram: shrinking_factor must be a number in (0, 1), got 1"),
        ("unk_token", "unigram: unk_token must be a non-empty str, got None"),
        ("split_digits", "unigram: split_digits must be true or false, got 1 (use true/false: true where gensim "
                         "takes 1)"),
        ("vocab_size", "unigram: vocab_size must exceed the 3 special, user-defined and byte pieces, got 3"),
    ]


def test_sampling_arguments_follow_the_parameters_rules():
    tok = toy({"a": -1.0})
    with pytest.raises(ParameterError, match=r"^unigram: 2 invalid parameters: alpha must be a number >= 0, got -0\.5; "
                                             r"nbest_size must be an int >= -1, got -2$"):
        tok.sample_encode("a", alpha=-0.5, nbest_size=-2)
