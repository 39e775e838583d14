"""Tokenizer metrics: each built-in on small cases computed by hand (the arithmetic is in the comments), the hook
that registers metrics, and the metric contract (``check_metric``) over every registered metric."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import tokembed
from tokembed.metrics.builtin import (
    BUILTIN_METRICS,
    Deterministic,
    PremiumMean,
    PremiumMedian,
    Throughput,
    is_partial_token,
    renyi_efficiency,
    tokens_per_word,
)
from tokembed.components import Tokenizer
from tokembed.encoding import Encoding
from tokembed.errors import PluginError, TokembedError, UnknownComponentError
from tokembed.metrics.base import SlowMetricWarning
from tokembed.metrics import (
    Metric,
    MetricRun,
    PassStats,
    format_value,
    registered_metrics,
    resolve_metrics,
    tokenizer_metrics,
)
from tokembed.plugins.char.tokenizer import CharTokenizer
from tokembed.plugins.word.tokenizer import WordTokenizer
from tokembed.registry import build_registry
from tokembed.testing import check_metric

FIT = ["the cat sat", "the dog"]
REG = build_registry()


@pytest.fixture(scope="module")
def registry():
    return build_registry()


@pytest.fixture(scope="module")
def char():
    # vocabulary: <pad>, <unk>, then t(4) ' '(3) a(2) e(2) h(2) c(1) d(1) g(1) o(1) s(1): 12 entries
    return CharTokenizer().fit(FIT)


@pytest.fixture(scope="module")
def word():
    # vocabulary: <pad>, <unk>, the(2), cat, dog, sat: 6 entries
    return WordTokenizer().fit(FIT)


def run(tokenizer, docs, metrics=None):
    return tokenizer_metrics(tokenizer, docs, metrics=metrics or [m.name for m in BUILTIN_METRICS
                                                                     if m.scope == "corpus"
                                                                     and not m.argument_required], registry=REG)


class ByteToy(Tokenizer):
    """One token per UTF-8 byte (ids 0-255), like byte-level BPE before any merge. Bytes >= 0x80 are shown as
    ``<XX>`` so a token's string never holds U+FFFD; ``decode`` replaces invalid UTF-8 as byte-level decoders do."""

    name = "bytetoy"

    def __init__(self, unk_token=None):
        self.unk_token = unk_token

    def fit(self, corpus, y=None):
        self.special_tokens_ = []
        self.vocab_ = {(chr(b) if b < 0x80 else f"<{b:02X}>"): b for b in range(256)}
        return self

    def _encode_text(self, text):
        ids, offsets = [], []
        for i, ch in enumerate(text):
            for b in ch.encode("utf-8"):
                ids.append(b)
                offsets.append((i, i + 1))
        return Encoding(np.array(ids, np.int32), [self.id_to_token(b) for b in ids],
                        np.array(offsets, np.int64).reshape(-1, 2))

    def decode(self, ids, skip_special_tokens=False):
        return bytes(int(i) for i in ids).decode("utf-8", "replace")

    def get_vocab(self):
        return dict(self.vocab_)


class ByteToyWithBytes(ByteToy):
    """The same, exposing ``token_bytes`` (the path tokembed prefers)."""

    def token_bytes(self, token_id):
        return bytes([token_id])


# -- the counts every metric shares ----------------------------------------------------------------------------------
def test_counts_and_compression_by_hand(char, word):
    docs = ["the cat sat.", "a dog", "the dog"]
    m = run(char, docs)
    # characters: 12 + 5 + 7 = 24; bytes the same (ASCII); words: 3 + 2 + 2 = 7
    assert (m["documents"], m["characters"], m["bytes"], m["words"]) == (3, 24, 24, 7)
    assert m["vocab_size"] == 12
    # one token per character
    assert m["tokens"] == 24 and m["chars_per_token"] == 1.0 and m["bytes_per_token"] == 1.0
    # fertility: 24 tokens / 7 words
    assert m["fertility"] == round(24 / 7, 6)

    w = run(word, docs)
    # word_punct: [the, cat, sat, .] [a, dog] [the, dog] -> 8 tokens
    assert w["tokens"] == 8
    assert w["chars_per_token"] == round(24 / 8, 6) == 3.0
    assert w["fertility"] == round(8 / 7, 6)


def test_bytes_per_token_counts_utf8_bytes(char):
    # "é" is 2 bytes, "🐳" 4: "é🐳" = 2 characters, 6 bytes; the char tokenizer gives 2 tokens (both unknown)
    m = run(char, ["é🐳"])
    assert (m["characters"], m["bytes"], m["tokens"]) == (2, 6, 2)
    assert m["bytes_per_token"] == 3.0 and m["chars_per_token"] == 1.0


def test_continued_words_by_hand(char, word):
    docs = ["the cat sat.", "a dog", "the dog"]
    # words: the cat sat. a dog the dog (7). Word tokenizer: only "sat." is split (sat + .) -> 1/7
    assert run(word, docs)["continued_words"] == round(1 / 7, 6)
    # char tokenizer: every word of 2+ characters is split; "a" is one token -> 6/7
    assert run(char, docs)["continued_words"] == round(6 / 7, 6)


def test_tokens_per_word_overlap_rule():
    # words "ab" [0,2) and "cd" [3,5); tokens: [0,1) [1,3) (covers "b" and the space) [3,5) [5,5) (empty)
    offsets = np.array([[0, 1], [1, 3], [3, 5], [5, 5]], np.int64)
    assert tokens_per_word([(0, 2), (3, 5)], offsets).tolist() == [2, 1]
    # a byte-level token " cd" = [2,5) belongs to "cd" only
    assert tokens_per_word([(0, 2), (3, 5)], np.array([[0, 2], [2, 5]])).tolist() == [1, 1]
    # one token spanning both words counts for both
    assert tokens_per_word([(0, 2), (3, 5)], np.array([[0, 5]])).tolist() == [1, 1]


def test_whitespace_word_metrics_are_na_for_unspaced_scripts(char):
    # letters of "ab 日本語": a b 日 本 語 = 5, unspaced 3; 2 * 3 = 6 > 5 -> n/a
    m = run(char, ["ab 日本語"])
    assert m["fertility"] is None and m["continued_words"] is None
    # "abc 日本": 5 letters, 2 unspaced; 2 * 2 = 4 <= 5 -> defined: 6 tokens / 2 words
    m = run(char, ["abc 日本"])
    assert m["fertility"] == 3.0
    assert run(char, ["日本語のテキスト"])["fertility"] is None
    assert run(char, ["สวัสดีครับ"])["fertility"] is None  # Thai
    # Korean is written with spaces: defined, 7 characters / 2 words
    assert run(char, ["한국어 텍스트"])["fertility"] == 3.5
    # no word at all
    assert run(char, ["   "])["fertility"] is None


def test_unk_rate_by_hand(word, char):
    # [the cat sat <unk>] [<unk> dog] [the dog]: 2 unknown of 8
    assert run(word, ["the cat sat.", "a dog", "the dog"])["unk_rate"] == 0.25
    # "hat!" with the char tokenizer: h a t are known, "!" is not -> 1/4
    assert run(char, ["hat!"])["unk_rate"] == 0.25
    # a tokenizer without unk token
    assert run(ByteToy().fit([]), ["héllo"])["unk_rate"] == 0.0


@pytest.mark.parametrize("cls", [ByteToy, ByteToyWithBytes])
def test_partial_character_rate_by_hand(cls, char):
    tok = cls().fit([])
    # "aé": a (0x61, whole) + é = C3 A9 (two pieces, neither valid UTF-8 alone) -> 2 of 3 tokens
    assert run(tok, ["aé"])["partial_char_rate"] == round(2 / 3, 6)
    # "🐳" is 4 pieces, "ab" 2 whole tokens: 4 / 6
    assert run(tok, ["🐳ab"])["partial_char_rate"] == round(4 / 6, 6)
    assert run(tok, ["plain ascii"])["partial_char_rate"] == 0.0
    assert is_partial_token(tok, 0xC3) and not is_partial_token(tok, ord("a"))
    # whole characters are never partial, even U+FFFD itself as a vocabulary entry
    assert run(char, ["é"])["partial_char_rate"] == 0.0
    fffd = CharTokenizer().fit(["\ufffd ok"])
    assert run(fffd, ["\ufffd"])["partial_char_rate"] == 0.0


def test_round_trip_by_hand(char, word):
    docs = ["the cat sat.", "a dog", "the dog"]
    # char: "." and "a"... "a" is known, "." is not: decode gives "<unk>" for "." -> docs 2 and 3 round-trip: 2/3
    assert run(char, docs)["round_trip"] == round(2 / 3, 6)
    # word: "the cat sat <unk>" != doc 1, "<unk> dog" != doc 2, "the dog" == doc 3: 1/3
    assert run(word, docs)["round_trip"] == round(1 / 3, 6)
    assert run(word, ["the  dog"])["round_trip"] == 0.0  # two spaces are not recoverable at word level


def test_vocab_utilization_by_hand(char, word):
    # word: ids seen {the, cat, sat, <unk>, dog} = 5 of 6 (<pad> never appears)
    assert run(word, ["the cat sat.", "a dog"])["vocab_utilization"] == round(5 / 6, 6)
    # char on the fitting corpus: the 10 characters of 12 entries
    assert run(char, FIT)["vocab_utilization"] == round(10 / 12, 6)


def test_renyi_efficiency_by_hand(char):
    # char tokenizer on FIT: counts t4 ' '3 a2 e2 h2 c1 d1 g1 o1 s1, total 18, |V| = 12
    counts = [4, 3, 2, 2, 2, 1, 1, 1, 1, 1]
    power_sum = sum((c / 18) ** 2.5 for c in counts)
    expected = (math.log(power_sum) / (1 - 2.5)) / math.log(12)
    assert run(char, FIT)["renyi_efficiency"] == round(expected, 6)
    assert 0 < expected < 1
    # a uniform distribution over the whole vocabulary has efficiency 1 for every alpha
    assert renyi_efficiency(np.ones(8), 8) == pytest.approx(1.0)
    assert renyi_efficiency(np.ones(8), 8, alpha=1.0) == pytest.approx(1.0)
    # one type only: entropy 0; no token or a 1-entry vocabulary: not defined
    assert renyi_efficiency(np.array([5]), 10) == 0.0
    assert renyi_efficiency(np.zeros(3), 10) is None and renyi_efficiency(np.ones(1), 1) is None
    # parity with the reference implementation (tokenization-scorer, whose own test expects 0.8265064834225245 for
    # "pick @@ed pick @@l @@ed pick @@les" at power 2.5): 7 tokens of 4 types, counts pick 3, @@ed 2, @@l 1,
    # @@les 1, and |V| = the 4 observed types (its default)
    ref = renyi_efficiency(np.array([3, 2, 1, 1]), 4)
    assert ref == pytest.approx(0.8265064834225245, abs=1e-12)


def test_throughput_from_the_shared_counts():
    # 3,000,000 bytes in 1.5 s = 2 MB/s
    assert Throughput(None).result(PassStats(bytes=3_000_000, seconds=1.5)) == 2.0
    assert Throughput(None).result(PassStats(bytes=10, seconds=0.0)) is None
    assert Throughput.timing and not Deterministic.timing


def test_throughput_is_measured_and_left_out_of_run_metrics(char):
    m = run(char, FIT * 50, metrics=["throughput"])
    assert m["throughput"] > 0
    assert "throughput" not in tokenizer_metrics(char, FIT, registry=REG)  # default: no timing metric (metrics.json stays stable)


class Flaky(CharTokenizer):
    """Ids depend on how many texts were encoded before: two passes disagree."""

    name = "flaky"

    def _encode_text(self, text):
        self._calls = getattr(self, "_calls", 0) + 1
        enc = super()._encode_text(text)
        enc.ids[:1] = self._calls % 2
        return enc


def test_determinism(char):
    assert run(char, FIT)["deterministic"] is True
    flaky = Flaky().fit(FIT)
    assert run(flaky, ["one", "two", "three"])["deterministic"] is False
    # the hash of the ids is kept beside the value
    r = MetricRun(char, [Deterministic])
    r.feed(FIT)
    r.feed_repeat(FIT)
    assert r.results() == {"deterministic": True}
    assert len(r.extras()["deterministic"]["ids_blake2b"]) == 32


def test_premium_by_hand(word):
    en = ["the cat", "the dog", "the cat sat"]  # 2, 2, 3 tokens
    de = ["a b c d", "a b", "a b c d e f"]  # 4, 2, 6 tokens (all unknown words: still tokens)
    runs = {}
    for lang, chapters in (("en", en), ("de", de)):
        r = MetricRun(word, [PremiumMedian, PremiumMean])
        r.feed(chapters)
        runs[lang] = r
    # ratios de/en per chapter: 4/2 = 2, 2/2 = 1, 6/3 = 2 -> median 2, mean 5/3
    median = PremiumMedian.combine({k: v.metrics["premium_median"] for k, v in runs.items()}, "en")
    mean = PremiumMean.combine({k: v.metrics["premium_mean"] for k, v in runs.items()}, "en")
    assert median == {"en": 1.0, "de": 2.0}
    assert mean["en"] == 1.0 and mean["de"] == pytest.approx(5 / 3)


def test_premium_skips_chapters_the_reference_does_not_encode_and_needs_alignment(word):
    def runs_for(texts):
        out = {}
        for lang, chapters in texts.items():
            r = MetricRun(word, [PremiumMedian])
            r.feed(chapters)
            out[lang] = r.metrics["premium_median"]
        return out

    # the empty reference chapter (0 tokens) is skipped: ratios 4/2 only
    assert PremiumMedian.combine(runs_for({"en": ["the cat", ""], "de": ["a b c d", "a"]}), "en")["de"] == 2.0
    with pytest.raises(TokembedError, match="aligned chapters"):
        PremiumMedian.combine(runs_for({"en": ["the cat", "the"], "de": ["a b"]}), "en")
    with pytest.raises(TokembedError, match="reference language 'fr'"):
        PremiumMedian.combine(runs_for({"en": ["the cat"]}), "fr")


def test_tokenizer_metrics_keeps_the_keys_the_runner_uses(char):
    m = tokenizer_metrics(char, FIT, registry=REG)
    for key in ("vocab_size", "documents", "characters", "words", "tokens", "chars_per_token", "fertility",
                "unk_rate", "round_trip"):
        assert key in m
    assert "premium_median" not in m  # parallel metrics need a parallel set
    assert tokenizer_metrics(char, iter(FIT), registry=REG) == m  # a one-shot iterator is read once, then kept for the 2nd pass
    assert tokenizer_metrics(char, FIT, registry=REG) == m  # identical across runs


def test_format_value():
    assert format_value(None) == "n/a"
    assert format_value(True) == "yes" and format_value(False) == "no"
    assert format_value(0.12345, ".1%") == "12.3%"
    assert format_value(1234567, ",d") == "1,234,567"


# -- the hook and the registry ------------------------------------------------------------------------------------
def test_builtins_register_through_the_hook(registry):
    # the built-ins first, then the installed plugins' (make install-test installs the example tokembed-toklen)
    assert list(registry.metrics)[:len(BUILTIN_METRICS)] == [m.name for m in BUILTIN_METRICS]
    assert all(i.plugin.distribution != "tokembed" for i in list(registry.metrics.values())[len(BUILTIN_METRICS):])
    info = registry.metric("fertility")
    assert info.kind == "metric" and info.plugin.distribution == "tokembed"
    assert info.plugin.target == "tokembed.metrics.builtin"
    assert registered_metrics(registry)[:len(BUILTIN_METRICS)] == list(BUILTIN_METRICS)


def test_builtins_are_registered_even_when_the_distribution_is_blocked():
    reg = build_registry(autoload=False, blocked=["tokembed"])
    assert "char" not in reg.names("tokenizer")
    assert "fertility" in reg.metrics


def test_unknown_metric_name(registry):
    with pytest.raises(UnknownComponentError, match="unknown metric 'fertilty'. Did you mean 'fertility'"):
        resolve_metrics(["fertilty"], registry)
    with pytest.raises(TypeError):
        resolve_metrics([42], registry)
    with pytest.raises(UnknownComponentError, match="listed twice: tokens"):
        resolve_metrics(["tokens", "tokens"], registry)


METRIC_PLUGIN = """
    from tokembed import hookimpl
    from tokembed.metrics import Metric

    class LongTokens(Metric):
        name = "{name}"
        unit = "share of tokens"
        definition = "Tokens spanning 3 or more characters divided by all tokens."
        source = "a test"
        higher_is_better = None

        def __init__(self, tokenizer):
            super().__init__(tokenizer)
            self.long = 0

        def update(self, doc, encoding):
            self.long += sum(1 for s, e in encoding.offsets.tolist() if e - s >= 3)

        def result(self, stats):
            return self.long / stats.tokens if stats.tokens else None

    @hookimpl
    def tokembed_register_metrics():
        return [LongTokens]
"""


def test_a_third_party_metric_is_found_and_computed(fake_dists, word):
    fake_dists.module("fake_metric", METRIC_PLUGIN.format(name="long_tokens"))
    fake_dists.dist("tokembed-longtokens", {"longtokens": "fake_metric"})
    reg = build_registry()
    info = reg.metric("long_tokens")
    assert info.plugin.distribution == "tokembed-longtokens"
    assert list(reg.metrics)[: len(BUILTIN_METRICS)] == [m.name for m in BUILTIN_METRICS]
    # a metric with only update(doc, encoding) is on the slow path: not in the default set, measured when named
    assert info.cls.uses_documents()
    assert "long_tokens" not in tokenizer_metrics(word, ["the cat sat."], registry=reg)
    # [the cat sat <unk>] [<unk> dog]: the, cat, sat, dog span 3 characters; "." and "a" do not -> 4/6
    with pytest.warns(SlowMetricWarning, match="long_tokens measured on the slow per-document path"):
        m = tokenizer_metrics(word, ["the cat sat.", "a dog"], metrics=["tokens", "long_tokens"], registry=reg)
    assert m["long_tokens"] == round(4 / 6, 6) and m["tokens"] == 6
    check_metric(info.cls)


def test_a_metric_name_registered_twice_is_an_error_naming_both(fake_dists):
    fake_dists.module("fake_fertility", METRIC_PLUGIN.format(name="fertility"))
    fake_dists.dist("tokembed-fertility", {"fert": "fake_fertility"})
    with pytest.raises(PluginError) as err:
        build_registry()
    msg = str(err.value)
    assert "metric name 'fertility' is registered twice" in msg
    assert "distribution tokembed " in msg and "distribution tokembed-fertility 1.0" in msg


def test_a_metric_hook_returning_something_else_is_reported(fake_dists):
    fake_dists.module("fake_badmetric", """
        from tokembed import hookimpl

        @hookimpl
        def tokembed_register_metrics():
            return [dict]
    """)
    fake_dists.dist("tokembed-badmetric", {"bad": "fake_badmetric"})
    reg = build_registry()
    [failure] = [f for f in reg.failures if f.plugin.distribution == "tokembed-badmetric"]
    assert failure.error.startswith("tokembed_register_metrics() returned <class 'dict'>")
    assert "fertility" in reg.metrics


def test_a_misspelled_metric_hook_gets_a_did_you_mean(fake_dists):
    fake_dists.module("fake_typo", """
        from tokembed import hookimpl

        @hookimpl
        def tokembed_register_metric():
            return []
    """)
    fake_dists.dist("tokembed-typo", {"typo": "fake_typo"})
    with pytest.raises(PluginError, match="Did you mean 'tokembed_register_metrics'"):
        build_registry()


def test_a_metric_that_raises_is_named(char):
    class Broken(Metric):
        name = "broken"
        unit = "x"
        definition = "x"
        source = "x"

        def update(self, doc, encoding):
            raise ZeroDivisionError("boom")

        def result(self, stats):
            return 0

    with pytest.raises(PluginError, match=r"metric 'broken' \(.*Broken\) failed in update: ZeroDivisionError: boom"):
        tokenizer_metrics(char, FIT, metrics=[Broken])


# -- the metric contract -----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def contract_tokenizers():
    from tokembed.testing import sample_corpus

    corpus = sample_corpus(4_000)
    return [CharTokenizer().fit(corpus), WordTokenizer(min_frequency=2).fit(corpus), ByteToy().fit([])]


@pytest.mark.parametrize("cls", registered_metrics(build_registry()), ids=lambda c: c.name)
def test_every_registered_metric_meets_the_contract(cls, contract_tokenizers, tmp_path):
    gold = tmp_path / "gold.tsv"
    gold.write_text("walked\twalk ed\nunhappiness\tun happi ness\n", encoding="utf-8")
    check_metric(cls, tokenizers=contract_tokenizers, argument=str(gold) if cls.argument_required else None)


def test_check_metric_with_its_default_tokenizers():
    check_metric(BUILTIN_METRICS[4])  # fertility, on the built-in char and word tokenizers


def _metric(**attrs):
    base = {"name": "toy", "unit": "u", "definition": "d", "source": "s", "higher_is_better": True,
            "result": lambda self, stats: 1.0}
    base.update(attrs)
    return type("Toy", (Metric,), base)


@pytest.mark.parametrize("attrs, problem", [
    ({"name": "Bad Name"}, "name 'Bad Name' must match"),
    ({"unit": ""}, "unit must be a non-empty string"),
    ({"source": None}, "source must be a non-empty string"),
    ({"higher_is_better": 1}, "higher_is_better must be True, False or None"),
    ({"scope": "parallel"}, "scope 'parallel' is for ParallelMetric subclasses"),
    ({"display": "%%"}, "display '%%' is not a format spec"),
    ({"result": lambda self, stats: "high"}, "must be a number, a bool or None"),
    ({"result": lambda self, stats: float(next(_counter))}, "two runs gave"),
    ({"result": lambda self, stats: 1 / (stats.documents - stats.documents)}, "ZeroDivisionError"),
    ({"extras": lambda self: {"x": object()}}, "extras are not JSON-able"),
    # a metric whose update_chunk counts only what prepare_chunk left on the chunk (0 when it did not run)
    ({"prepare_chunk": lambda self, chunk: chunk.cached("toy", lambda: chunk.n_docs),
      "update_chunk": lambda self, chunk: setattr(self, "n", getattr(self, "n", 0) + chunk._cache.get("toy", 0)),
      "result": lambda self, stats: getattr(self, "n", 0)},
     "without prepare_chunk gave 0, with it"),
    # a metric with state whose merge forgets the second part's documents
    ({"update": lambda self, doc, enc: setattr(self, "n", getattr(self, "n", 0) + 1),
      "result": lambda self, stats: getattr(self, "n", 0), "merge": lambda self, other: self},
     "merging the results of three parts gave"),
    # ... or adds them into the first part's state in place
    ({"update": lambda self, doc, enc: setattr(self, "n", getattr(self, "n", 0) + 1),
      "result": lambda self, stats: getattr(self, "n", 0),
      "merge": lambda self, other: setattr(self, "n", getattr(self, "n", 0) + getattr(other, "n", 0)) or self},
     "merge changed its inputs"),
])
def test_check_metric_catches_broken_metrics(attrs, problem, char):
    with pytest.raises(AssertionError, match=problem.replace("(", r"\(").replace(")", r"\)")):
        check_metric(_metric(**attrs), tokenizers=[char], docs=FIT)


_counter = itertools.count()


def test_check_metric_passes_a_correct_toy(char):
    check_metric(_metric(), tokenizers=[char], docs=FIT)


def test_hookspec_is_documented_in_the_module():
    from tokembed import hookspecs

    doc = hookspecs.tokembed_register_metrics.__doc__
    assert "Added in 0.1" in doc and "Metric" in doc
    assert tokembed.hookimpl  # the marker plugins use


# -- docs/metrics.md cannot rot ---------------------------------------------------------------------------------------
DOC = __import__("pathlib").Path(__file__).resolve().parents[2] / "docs" / "metrics.md"


@pytest.mark.parametrize("cls", BUILTIN_METRICS, ids=lambda c: c.name)
def test_the_docs_list_every_builtin_with_its_unit_and_direction(cls):
    text = DOC.read_text("utf-8")
    better = {True: "higher", False: "lower", None: "—"}[cls.higher_is_better]
    assert f"| `{cls.name}` | {cls.unit} | {better} |" in text
    assert f"**`{cls.name}`**" in text  # a definition paragraph


def test_the_docs_example_metric_runs(tmp_path, monkeypatch, word):
    import re

    text = DOC.read_text("utf-8")
    [code] = [m.group(1) for m in re.finditer(r"```python\n(# file: my_metrics\.py\n.*?)```", text, re.DOTALL)]
    (tmp_path / "my_metrics.py").write_text(code, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        reg = build_registry(plugins=["my_metrics"])
        cls = reg.metric("long_tokens").cls
        check_metric(cls)
        # "infallibly lead": infallibly covers 10 characters, lead 4 -> 1 of 2 tokens (the word is unknown: a span
        # still covers it)
        assert tokenizer_metrics(word, ["infallibly lead"], metrics=[cls])["long_tokens"] == 0.5
    finally:
        import sys

        sys.modules.pop("my_metrics", None)
