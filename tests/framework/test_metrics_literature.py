"""The metrics from the literature (Gini of the per-language cost, STRR, morphological boundaries), Rényi
efficiency against tokenization-scorer, metric arguments (``name:VALUE``), and the unknown-token rule on compression
metrics when ``unk_rate`` is not requested. Every expected value is computed by hand in the comments."""

from __future__ import annotations

import numpy as np
import pytest

from tokembed.compare import compare_tokenizers
from tokembed.errors import TokembedError
from tokembed.metrics import MetricRun, resolve_metrics, tokenizer_metrics
from tokembed.metrics.builtin import renyi_efficiency
from tokembed.metrics.literature import PremiumGini, Strr, boundary_counts, gini, read_segmentation
from tokembed.plugins.char.tokenizer import CharTokenizer
from tokembed.plugins.word.tokenizer import WordTokenizer

FIT = ["the cat sat", "the dog"]


@pytest.fixture(scope="module")
def word():
    # vocabulary: <pad>, <unk>, the, cat, dog, sat (word_punct pre-tokenizer)
    return WordTokenizer().fit(FIT)


@pytest.fixture(scope="module")
def char():
    return CharTokenizer().fit(["abcdefghijklmnopqrstuvwxyz"])


@pytest.fixture()
def gold(tmp_path):
    path = tmp_path / "gold.tsv"
    path.write_text("walked\twalk ed\n\nunhappiness\tun happi ness\n", encoding="utf-8")
    return path


# -- Gini ---------------------------------------------------------------------------------------------------------------
def test_gini_by_hand():
    # 1, 2, 3: |differences| over ordered pairs 2 * (1 + 2 + 1) = 8; 2 n^2 mean = 2 * 9 * 2 = 36 -> 2/9
    assert gini(np.array([1, 2, 3])) == pytest.approx(2 / 9, abs=1e-15)
    assert gini(np.array([5, 5, 5])) == 0.0
    assert gini(np.array([0, 0, 7])) == pytest.approx(2 / 3)  # one holds everything: (n - 1) / n
    assert gini(np.array([300, 100, 200])) == pytest.approx(2 / 9)  # scale and order do not matter
    assert gini(np.array([])) is None and gini(np.array([0, 0])) is None


def _parallel_runs(tok, texts):
    runs = {}
    for lang, chapters in texts.items():
        run = MetricRun(tok, [PremiumGini])
        run.feed_all(chapters, workers=1, size=1)
        runs[lang] = run.metrics["premium_gini"]
    return runs


def test_premium_gini_on_a_parallel_set_by_hand(char):
    # character tokenizer: en 2 + 1 = 3 tokens, de 4 + 2 = 6, fr 7 + 2 = 9 -> Gini of (3, 6, 9) = 2/9, in every row
    texts = {"en": ["ab", "c"], "de": ["abcd", "ef"], "fr": ["abcdefg", "hi"]}
    values = PremiumGini.combine(_parallel_runs(char, texts), "en")
    assert values == pytest.approx({"en": 2 / 9, "de": 2 / 9, "fr": 2 / 9})
    with pytest.raises(TokembedError, match="'de' has 1 chapters but the reference 'en' has 2"):
        PremiumGini.combine(_parallel_runs(char, {"en": ["ab", "c"], "de": ["abcd"]}), "en")


def test_premium_gini_in_a_comparison(char):
    parallel = {"reference": "en", "texts": {"en": ["ab", "c"], "de": ["abcd", "ef"], "fr": ["abcdefg", "hi"]}}
    comp = compare_tokenizers({"c": char}, {}, parallel=parallel, metrics=["tokens", "premium_gini"], samples=0)
    assert comp.value("c", "fr", "premium_gini") == round(2 / 9, 6)


# -- STRR ---------------------------------------------------------------------------------------------------------------
def test_strr_over_the_corpus_words_by_hand(word):
    # "the cat sat." -> the | cat | sat | . : "the" and "cat" are one token each, "sat." two -> 2/3
    # "the zebra" -> the | <unk>: both words one token (an unknown token still keeps the word whole) -> 2/2
    m = tokenizer_metrics(word, ["the cat sat.", "the zebra"], metrics=["strr", "continued_words"])
    assert m["strr"] == round(4 / 5, 6) and m["continued_words"] == round(1 / 5, 6)
    # no word: n/a (the fertility rule)
    assert tokenizer_metrics(word, ["", "  "], metrics=["strr"])["strr"] is None


def test_strr_over_a_word_list_by_hand(word, char, tmp_path):
    words = tmp_path / "words.txt"
    words.write_text("the\ncat\tignored column\nzebra\nsat.\n\n", encoding="utf-8")
    # word tokenizer: the, cat, zebra (<unk>) one token each, "sat." two -> 3/4, whatever the corpus
    m = tokenizer_metrics(word, ["dog dog dog"], metrics=[f"strr:{words}"])
    assert m["strr"] == 0.75
    # character tokenizer: no listed word has a single character -> 0
    assert tokenizer_metrics(char, ["x"], metrics=[f"strr:{words}"])["strr"] == 0.0


# -- morphological boundaries -----------------------------------------------------------------------------------------
def test_boundaries_by_hand(char, word, gold):
    # gold: walk|ed (boundary 4), un|happi|ness (2, 7): 3 gold boundaries
    # char tokenizer: a boundary at every position: walked 1..5 (5), unhappiness 1..10 (10) -> 15 predicted,
    # all 3 gold among them: P = 3/15, R = 3/3, F1 = 2*3 / (15 + 3) = 1/3
    words, morphs = read_segmentation(gold)
    assert words == ["walked", "unhappiness"] and morphs[1] == ["un", "happi", "ness"]
    assert boundary_counts(char, words, morphs) == (3, 15, 3)
    names = [f"boundary_precision:{gold}", f"boundary_recall:{gold}", f"boundary_f1:{gold}"]
    m = tokenizer_metrics(char, ["any corpus"], metrics=names)
    assert (m["boundary_precision"], m["boundary_recall"], m["boundary_f1"]) == (0.2, 1.0, round(1 / 3, 6))
    # word tokenizer: each word is one token (<unk>): no predicted boundary -> P n/a, R 0, F1 0
    m = tokenizer_metrics(word, ["any corpus"], metrics=names)
    assert (m["boundary_precision"], m["boundary_recall"], m["boundary_f1"]) == (None, 0.0, 0.0)


class _Pieces:
    """A fixed segmentation: 'unhappiness' -> unh | appi | ness, 'walked' -> walked (the docs' example)."""

    SEG = {"unhappiness": [(0, 3), (3, 7), (7, 11)], "walked": [(0, 6)]}

    def encode_ids(self, texts, *, spans=False):
        s = [self.SEG[t] for t in texts]
        flat = np.array([p for seg in s for p in seg], np.int64).reshape(-1, 2)
        return np.zeros(len(flat), np.int32), np.array([len(x) for x in s], np.int64), flat


def test_boundaries_of_the_docs_example(gold):
    # unh|appi|ness predicts 3 and 7, gold 2 and 7; walked predicts none, gold 4: TP 1, predicted 2, gold 3
    # -> P 1/2, R 1/3, F1 2/5 (the docs' example counts unhappiness alone: 1/2, 1/2, 1/2)
    assert boundary_counts(_Pieces(), *read_segmentation(gold)) == (1, 2, 3)
    assert boundary_counts(_Pieces(), ["unhappiness"], [["un", "happi", "ness"]]) == (1, 2, 2)


def test_bad_gold_files_are_named_with_their_line(tmp_path, char):
    bad = tmp_path / "bad.tsv"
    bad.write_text("walked\twalk ed\nwalking walk ing\n", encoding="utf-8")
    with pytest.raises(TokembedError, match=r"bad.tsv', line 2: expected 'word<TAB>morph morph"):
        read_segmentation(bad)
    bad.write_text("walked\twalk ing\n", encoding="utf-8")
    with pytest.raises(TokembedError, match="line 1: the morphs 'walk ing' do not spell the word 'walked'"):
        read_segmentation(bad)
    with pytest.raises(TokembedError, match="is not a file"):
        tokenizer_metrics(char, ["x"], metrics=[f"boundary_f1:{tmp_path / 'missing.tsv'}"])


def test_metric_arguments(gold):
    [cls] = resolve_metrics([f"boundary_f1:{gold}"])
    assert cls.name == "boundary_f1" and cls.given == str(gold)
    with pytest.raises(TokembedError, match="'boundary_f1' needs a gold segmentation file .* boundary_f1:VALUE"):
        resolve_metrics(["boundary_f1"])
    with pytest.raises(TokembedError, match="metric 'fertility' takes no argument"):
        resolve_metrics(["fertility:x"])
    # the default set leaves out the metrics that need an argument, keeps strr (the corpus's words)
    default = {m.name for m in resolve_metrics(None)}
    assert "strr" in default and "premium_gini" in default and not default & {"boundary_f1", "boundary_recall"}


def test_a_recipe_names_a_metric_with_its_argument(tmp_path, gold):
    from tokembed.recipe import load_recipe

    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat\n", encoding="utf-8")
    recipe = tmp_path / "r.yaml"
    recipe.write_text(f"corpus: {{path: {corpus}}}\n"
                      f"compare:\n  tokenizers:\n    c: {{type: char}}\n  corpora:\n    c: {{path: {corpus}}}\n"
                      f"  metrics: [tokens, 'boundary_f1:{gold}']\n", encoding="utf-8")
    spec = load_recipe(recipe)
    assert spec.compare.metrics == ("tokens", f"boundary_f1:{gold}")


# -- Rényi efficiency against tokenization-scorer ---------------------------------------------------------------------
def test_renyi_efficiency_by_hand_and_as_tokenization_scorer():
    # tokens a a a a b b c d over |V| = 10: p = 1/2, 1/4, 1/8, 1/8; sum p^2.5 = 0.1767767 + 0.03125 + 2 * 0.0055243
    # = 0.2190752; H_2.5 = ln(0.2190752) / (1 - 2.5) = 1.0121883; / ln 10 = 0.4396045.
    # tokenization-scorer 1.1.8: score("a a a a b b c d", metric="renyi", power=2.5, vocab=10)
    # = 0.43960447088765453 (run once, pip install tokenization-scorer)
    value = renyi_efficiency(np.array([4, 2, 1, 1]), 10, 2.5)
    assert value == pytest.approx(0.43960447088765453, abs=1e-15)


def test_renyi_efficiency_of_a_tokenizer_equals_tokenization_scorer(char):
    scorer = pytest.importorskip("tokenization_scorer")
    docs = ["the quick brown fox", "jumps over the lazy dog", "aaaa bbb cc d"]
    # alpha 2.5, |V| = the tokenizer's whole vocabulary (get_vocab_size(), special tokens included)
    ours = tokenizer_metrics(char, docs, metrics=["renyi_efficiency"])["renyi_efficiency"]
    ids = [e.ids for e in char.encode_batch(docs, add_special_tokens=False)]
    text = "\n".join(" ".join(f"t{i}" for i in doc) for doc in ids)
    theirs = scorer.score(text, metric="renyi", power=2.5, vocab=char.get_vocab_size())
    assert ours == round(float(theirs), 6)


# -- the unknown-token rule when unk_rate is not requested --------------------------------------------------------------
def test_an_unk_heavy_tokenizer_is_never_best_on_compression_even_without_unk_rate(word, char):
    # on "zebra yak cat": word -> <unk> <unk> cat (2/3 unknown, 5 code points per token... fewer tokens), char -> 13
    # tokens, none unknown. Asked only for chars_per_token, word would be best; its unknown share (66.7% > 1%)
    # excludes it, though unk_rate was not requested.
    comp = compare_tokenizers({"word": word, "char": CharTokenizer().fit(["zebra yak cat"])},
                              {"t": ["zebra yak cat"]}, metrics=["chars_per_token"], samples=0)
    assert "unk_rate" not in comp.metrics
    assert comp.value("word", "t", "chars_per_token") > comp.value("char", "t", "chars_per_token")
    assert comp.excluded("t", "chars_per_token") == ["word"]
    assert comp.best("t", "chars_per_token") == []  # one value left: nothing stands out
