"""Word-vector evaluation: hand-computed scores, parity with gensim's evaluate_word_pairs / evaluate_word_analogies
(on the GloVe sample and on vectors built to exercise case folding), set resolution, and the reference figures of
DATA.md on the full GloVe 6B 50d vectors when they are fetched."""

from __future__ import annotations

import importlib
import inspect
import json
import re
from pathlib import Path

import numpy as np
import pytest

from tokembed.datasets import dataset_path
from tokembed.errors import DataError, TokembedError
from tokembed.evaluation import (
    evaluate_vectors,
    evaluate_word_analogies,
    evaluate_word_pairs,
    format_evaluation,
    resolve_evaluation_sets,
)
from tokembed.io import dumps_json
from tokembed.keyedvectors import KeyedVectors

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "vectors" / "glove6b50d_sample.txt"


@pytest.fixture(scope="module")
def sample() -> KeyedVectors:
    return KeyedVectors.load_word2vec_format(FIXTURE)


@pytest.fixture
def toy() -> KeyedVectors:
    # unit vectors: man (1, 0); woman (0, 1); king (1, 1)/sqrt2; queen (0, 1); apple (1, -1)/sqrt2
    return KeyedVectors.from_arrays(
        ["man", "woman", "king", "queen", "apple"],
        np.array([[2, 0], [0, 3], [1, 1], [0, 2], [1, -1]], dtype=np.float32),
    )


def gensim_data(name: str) -> Path:
    gensim_utils = pytest.importorskip("gensim.test.utils")
    return Path(gensim_utils.datapath(name))


def read_gensim_pairs(path: Path) -> list[tuple[str, str, float]]:
    rows = [ln.split("\t") for ln in path.read_text(encoding="utf-8").splitlines() if ln and not ln.startswith("#")]
    return [(a, b, float(s)) for a, b, s in rows]


def gensim_kv(kv: KeyedVectors):
    from gensim.models import KeyedVectors as GensimKV

    g = GensimKV(kv.vector_size)
    g.add_vectors(list(kv.index_to_key), np.array(kv.vectors))
    return g


# -- by hand ---------------------------------------------------------------------------------------------------------
def test_word_pairs_by_hand(toy):
    # model cosines: man-woman 0, man-king 1/sqrt2 = 0.70711, woman-queen 1; man-pear is skipped (pear unknown)
    pairs = [("man", "woman", 5.0), ("Man", "KING", 1.0), ("woman", "queen", 9.0), ("man", "pear", 3.0)]
    res = evaluate_word_pairs(toy, pairs)
    # ranks: model [1, 2, 3], human [2, 1, 3]; d = [-1, 1, 0], sum d^2 = 2; rho = 1 - 6*2 / (3 * (9 - 1)) = 0.5
    assert res["spearman"] == pytest.approx(0.5, abs=1e-12)
    # p-value: t = rho sqrt((n-2)/(1-rho^2)) = 0.5 / sqrt(0.75) = 1/sqrt3, 1 degree of freedom (Cauchy):
    # p = 2 (1 - (1/2 + atan(1/sqrt3)/pi)) = 2 (1/2 - 1/6) = 2/3
    assert res["pvalue"] == pytest.approx(2 / 3, abs=1e-9)
    # Pearson between [0, 0.70711, 1] and [5, 1, 9]: deviations [-0.56904, 0.13807, 0.43096] and [0, -4, 4];
    # r = (-0.55228 + 1.72386) / sqrt(0.52860 * 32) = 1.17157 / 4.11285 = 0.28486
    assert res["pearson"] == pytest.approx(0.28486, abs=1e-5)
    assert (res["pairs_used"], res["pairs_total"], res["oov_pairs"], res["oov_share"]) == (3, 4, 1, 0.25)
    # case-sensitive: "Man"/"KING" are unknown too, 2 pairs left: fewer than 3, no correlation
    strict = evaluate_word_pairs(toy, pairs, case_insensitive=False)
    assert strict["spearman"] is None and strict["pairs_used"] == 2 and strict["oov_share"] == 0.5
    # restrict_vocab=2 keeps man and woman only
    assert evaluate_word_pairs(toy, pairs, restrict_vocab=2)["pairs_used"] == 1


def test_constant_scores_give_no_correlation(toy):
    res = evaluate_word_pairs(toy, [("man", "woman", 1), ("man", "king", 1), ("woman", "queen", 1)])
    assert res["spearman"] is None and res["pearson"] is None and res["pairs_used"] == 3
    json.loads(dumps_json(res))  # JSON-able: None, not NaN


def test_analogies_by_hand(toy):
    # man : king :: woman : ? -> queen (cos 0.98560 against apple's -0.81650, see test_keyedvectors), so the first
    # question is right and the second (expects apple) wrong; the third has an unknown word and is skipped
    questions = {
        "royal": [("man", "king", "woman", "queen"), ("MAN", "King", "woman", "apple")],
        "other": [("man", "king", "woman", "prince")],
    }
    res = evaluate_word_analogies(toy, questions)
    assert res["accuracy"] == 0.5 and res["correct"] == 1
    assert (res["questions_used"], res["questions_total"], res["oov_questions"]) == (2, 3, 1)
    assert res["oov_share"] == pytest.approx(1 / 3)
    assert res["sections"] == {
        "royal": {"accuracy": 0.5, "correct": 1, "used": 2, "total": 2},
        "other": {"accuracy": None, "correct": 0, "used": 0, "total": 1},
    }
    # restrict_vocab=4: apple (row 4) is neither a candidate nor allowed in a question
    res = evaluate_word_analogies(toy, questions, restrict_vocab=4)
    assert (res["correct"], res["questions_used"]) == (1, 1)
    # case-sensitive: "MAN" and "King" are unknown
    assert evaluate_word_analogies(toy, questions, case_insensitive=False)["questions_used"] == 1
    with pytest.raises(TokembedError, match="restrict_vocab"):
        evaluate_word_analogies(toy, questions, restrict_vocab=0)


def test_no_usable_question(toy):
    res = evaluate_word_analogies(toy, {"s": [("x", "y", "z", "w")]})
    assert res["accuracy"] is None and res["questions_used"] == 0 and res["oov_share"] == 1.0



def _spoilt(kv: KeyedVectors, key: str, value: float) -> KeyedVectors:
    vectors = np.array(kv.vectors)
    vectors[kv.key_to_index[key], 1] = value
    return KeyedVectors.from_arrays(kv.index_to_key, vectors)


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_non_finite_vectors_are_an_error_not_a_silent_score(toy, value):
    pairs = [("man", "woman", 5.0), ("man", "king", 1.0), ("woman", "queen", 9.0)]
    questions = {"royal": [("man", "king", "woman", "queen")]}
    bad = _spoilt(toy, "queen", value)  # queen is row 3
    # without the check a NaN made rho None and answered every analogy with queen (its NaN score wins np.argmax)
    with pytest.raises(TokembedError, match=r"^the word-pair evaluation uses 1 vector holding NaN or infinite values "
                                            r"\(the first: 'queen', row 3 of 5\), so its score would be meaningless"):
        evaluate_word_pairs(bad, pairs)
    with pytest.raises(TokembedError, match=r"^the analogy evaluation \(searching the first 5 rows\) uses 1 vector "
                                            r"holding NaN .*'queen', row 3 of 5"):
        evaluate_word_analogies(bad, questions)
    # only the vectors that can change the score count: pairs that skip queen, analogies searching rows 0-2
    clean = evaluate_word_pairs(toy, pairs[:2] + [("woman", "king", 2.0)])
    assert evaluate_word_pairs(bad, pairs[:2] + [("woman", "king", 2.0)]) == clean
    with np.errstate(invalid="ignore"):  # normalising all rows divides inf by inf outside the searched rows
        assert evaluate_word_analogies(bad, {"s": [("man", "king", "woman", "man")]}, restrict_vocab=3) == \
            evaluate_word_analogies(toy, {"s": [("man", "king", "woman", "man")]}, restrict_vocab=3)
    # two spoilt rows are counted
    with pytest.raises(TokembedError, match=r"uses 2 vectors holding NaN or infinite values \(the first: 'man', row 0"):
        evaluate_word_analogies(_spoilt(bad, "man", value), questions)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_non_finite_vectors_are_an_error_however_few_pairs_are_used(tmp_path, monkeypatch, toy, value):
    # the tester's case: a file whose king row holds NaN, and a set of which only 2 pairs are usable (fewer than
    # the 3 a correlation needs): the check ran only for >= 3 pairs, so this gave spearman None and no error
    vec = tmp_path / "vec.txt"
    vec.write_text(f"4 3\nking 0.1 {value} 0.3\nqueen 0.2 0.1 0.3\nman 0.3 0.3 0.1\nwoman 0.1 0.5 0.2\n")
    kv = KeyedVectors.load_word2vec_format(vec)
    fake_home(tmp_path, monkeypatch, {"wordsim353.tsv": "king\tqueen\t8\nman\twoman\t7\ntiger\tcat\t6\n"})
    with pytest.raises(TokembedError, match=r"^the word-pair evaluation on 'wordsim353' uses 1 vector holding NaN or "
                                            rf"infinite values \(the first: 'king', row 0 of 4 in {re.escape(str(vec))}\)"):
        evaluate_vectors(kv, ["wordsim353"])
    for used in ([("king", "queen", 8.0)], [("king", "queen", 8.0), ("man", "woman", 7.0)]):
        with pytest.raises(TokembedError, match=r"^the word-pair evaluation uses 1 vector holding NaN"):
            evaluate_word_pairs(kv, used)
    # a pair file is named by its path
    pairs_file = tmp_path / "pairs.tsv"
    pairs_file.write_text("king\tqueen\t8\n")
    with pytest.raises(TokembedError, match=rf"^the word-pair evaluation on {re.escape(repr(str(pairs_file)))} uses"):
        evaluate_word_pairs(kv, pairs_file)
    # the rule is "the vectors the evaluation uses": without king, 1 pair and no correlation, and no error
    res = evaluate_word_pairs(kv, [("man", "woman", 7.0), ("king", "pear", 1.0)])
    assert (res["pairs_used"], res["spearman"]) == (1, None)
    # an analogy set names itself and the file too (king is among the searched rows)
    questions = tmp_path / "q.txt"
    questions.write_text(": s\nman woman king queen\n")
    with np.errstate(invalid="ignore"):
        with pytest.raises(TokembedError, match=rf"^the analogy evaluation on {re.escape(repr(str(questions)))} "
                                                r"\(searching the first 4 rows\) uses 1 vector .* in "):
            evaluate_word_analogies(kv, questions)


# -- parity with gensim ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("restrict_vocab", [None, 200])
@pytest.mark.parametrize("name", ["wordsim353.tsv", "simlex999.txt"])
def test_word_pairs_match_gensim(sample, name, restrict_vocab):
    path = gensim_data(name)
    g = gensim_kv(sample)
    pearson, spearman, oov_percent = g.evaluate_word_pairs(str(path), restrict_vocab=restrict_vocab or 300000)
    ours = evaluate_word_pairs(sample, read_gensim_pairs(path), restrict_vocab=restrict_vocab)
    assert ours["pairs_used"] >= 25  # 45 and 58 pairs unrestricted, 28 and 33 among the first 200 keys
    assert ours["spearman"] == spearman.statistic  # same ranks, so the very same float
    assert ours["pvalue"] == pytest.approx(spearman.pvalue, rel=1e-9)
    assert ours["pearson"] == pytest.approx(pearson.statistic, abs=1e-6)
    assert ours["oov_share"] == pytest.approx(oov_percent / 100, abs=1e-12)


@pytest.mark.parametrize("restrict_vocab", [30000, 200])
def test_analogies_match_gensim(sample, restrict_vocab):
    path = gensim_data("questions-words.txt")
    score, sections = gensim_kv(sample).evaluate_word_analogies(str(path), restrict_vocab=restrict_vocab)
    ours = evaluate_word_analogies(sample, path, restrict_vocab=restrict_vocab)
    theirs = {s["section"]: (len(s["correct"]), len(s["correct"]) + len(s["incorrect"])) for s in sections}
    total = theirs.pop("Total accuracy")
    assert {k: (v["correct"], v["used"]) for k, v in ours["sections"].items()} == theirs
    assert (ours["correct"], ours["questions_used"]) == total
    assert ours["accuracy"] == score
    assert ours["questions_total"] == 19544 and total[1] >= 100  # 546 answerable questions, 102 among 200 keys


def case_variant_vectors() -> tuple[KeyedVectors, dict[str, list[tuple[str, str, str, str]]]]:
    """Vectors where keys differing only in case sit near the 3CosAdd query, so that case folding matters.

    Rows: 8 base words and 20 random fillers, then capitalised variants (after the lowercase keys, so that the
    lowercase key is the one a folded form stands for) placed just off a question's query direction:

    - q0 athens : greece :: paris : france -- ``Paris`` is nearest to the query and passed over; france, placed a
      little further, answers (right);
    - q1 berlin : germany :: rome : italy -- five variants of rome are the 5 nearest: all passed over, the 5th
      answers, folded "rome" (wrong, although italy comes next);
    - q2 f0 : f1 :: f2 : f3 -- ``F3`` is nearest; folded it is the expected f3 (right; wrong when case-sensitive).
    """
    rng = np.random.default_rng(3)
    keys = ["athens", "greece", "paris", "france", "berlin", "germany", "rome", "italy"] + [f"f{i}" for i in range(20)]
    vecs = {k: rng.standard_normal(6) for k in keys}

    def near(a, b, c, eps):
        u = {k: vecs[k] / np.linalg.norm(vecs[k]) for k in (a, b, c)}
        q = u[b] - u[a] + u[c]
        return q / np.linalg.norm(q) + eps * rng.standard_normal(6)

    vecs["france"] = near("athens", "greece", "paris", 0.05)
    vecs["italy"] = near("berlin", "germany", "rome", 0.05)
    vecs["Paris"] = near("athens", "greece", "paris", 1e-3)
    for i, variant in enumerate(["Rome", "ROME", "rOme", "roMe", "romE"]):
        vecs[variant] = near("berlin", "germany", "rome", 1e-3 * (i + 1))
    vecs["F3"] = near("f0", "f1", "f2", 1e-3)
    kv = KeyedVectors.from_arrays(list(vecs), np.array(list(vecs.values()), dtype=np.float32))
    questions = [
        ("athens", "greece", "paris", "france"),
        ("berlin", "germany", "rome", "italy"),
        ("f0", "f1", "f2", "f3"),
        ("Athens", "Greece", "berlin", "germany"),
        ("athens", "greece", "Paris", "france"),  # case-sensitive: Paris is a row of its own
        ("rome", "italy", "paris", "France"),
        ("f4", "f5", "f6", "f7"),
        ("f8", "f9", "f10", "f11"),
    ]
    return kv, {f"q{i}": [q] for i, q in enumerate(questions)}  # one question per section: per-question parity


@pytest.mark.parametrize("case_insensitive", [True, False])
@pytest.mark.parametrize("restrict_vocab", [None, 30])
def test_case_folding_matches_gensim(tmp_path, case_insensitive, restrict_vocab):
    pytest.importorskip("gensim")
    kv, sections = case_variant_vectors()
    path = tmp_path / "q.txt"
    path.write_text("".join(f": {name}\n" + "".join(" ".join(q) + "\n" for q in qs) for name, qs in sections.items()),
                    encoding="utf-8")
    _, theirs = gensim_kv(kv).evaluate_word_analogies(str(path), restrict_vocab=restrict_vocab or len(kv),
                                                      case_insensitive=case_insensitive)
    theirs = {s["section"]: (len(s["correct"]), len(s["correct"]) + len(s["incorrect"])) for s in theirs[:-1]}
    ours = evaluate_word_analogies(kv, sections, restrict_vocab=restrict_vocab, case_insensitive=case_insensitive)
    assert {k: (v["correct"], v["used"]) for k, v in ours["sections"].items() if v["used"]} == \
        {k: v for k, v in theirs.items() if v[1]}
    if case_insensitive and restrict_vocab is None:
        assert [ours["sections"][f"q{i}"]["correct"] for i in range(3)] == [1, 0, 1]  # see case_variant_vectors
    if not case_insensitive:
        assert ours["sections"]["q2"]["correct"] == 0


# -- sets by name ------------------------------------------------------------------------------------------------------
def fake_home(tmp_path: Path, monkeypatch, files: dict[str, str]) -> Path:
    """A data folder holding the given built datasets, each with a minimal manifest."""
    home = tmp_path / "data"
    home.mkdir()
    for filename, text in files.items():
        (home / filename).write_text(text, encoding="utf-8")
        name = filename.split(".")[0]
        (home / f"{name}.manifest.json").write_text(json.dumps({"build_version": 1}), encoding="utf-8")
    monkeypatch.setenv("TOKEMBED_DATA", str(home))
    return home


def test_evaluate_vectors_by_name(tmp_path, monkeypatch, sample):
    pairs = read_gensim_pairs(gensim_data("wordsim353.tsv"))
    fake_home(tmp_path, monkeypatch, {
        "wordsim353.tsv": "".join(f"{a}\t{b}\t{s}\n" for a, b, s in pairs),
        "google_analogy.txt": gensim_data("questions-words.txt").read_text(encoding="utf-8"),
    })
    results = evaluate_vectors(sample, ["wordsim353", "google_analogy"])
    assert list(results) == ["wordsim353", "google_analogy"]
    assert results["wordsim353"] == {"set": "wordsim353", **evaluate_word_pairs(sample, pairs)}
    assert results["google_analogy"]["kind"] == "analogies" and results["google_analogy"]["restrict_vocab"] == 30000
    assert results["google_analogy"]["accuracy"] == evaluate_word_analogies(
        sample, gensim_data("questions-words.txt"))["accuracy"]
    json.loads(dumps_json(results))
    table = format_evaluation(results).splitlines()
    assert table[0].split() == ["set", "measure", "score", "used", "oov"]
    assert table[1].split()[:3] == ["wordsim353", "spearman", f"{results['wordsim353']['spearman']:.3f}"]
    assert table[2].split()[:2] == ["google_analogy", "accuracy"]


def test_set_problems_are_data_errors(tmp_path, monkeypatch, sample):
    fake_home(tmp_path, monkeypatch, {"wordsim353.tsv": "a\tb\t1\n"})
    with pytest.raises(DataError, match="unknown dataset 'wordsim35'. Did you mean 'wordsim353'"):
        evaluate_vectors(sample, ["wordsim35"])
    with pytest.raises(DataError, match="'prose_mix' is of kind 'corpus', not an evaluation set"):
        resolve_evaluation_sets(["wordsim353", "prose_mix"])
    with pytest.raises(DataError, match="not fetched yet.*Run: tokembed data fetch simlex999"):
        evaluate_vectors(sample, ["wordsim353", "simlex999"])
    with pytest.raises(DataError, match="'simlex999', 'google_analogy' are not fetched.*fetch simlex999 google_analogy"):
        resolve_evaluation_sets(["simlex999", "wordsim353", "google_analogy"])
    with pytest.raises(TypeError, match="not one string"):
        evaluate_vectors(sample, "wordsim353")
    assert resolve_evaluation_sets(["wordsim353"]) == {"wordsim353": "word_pairs"}


# -- the reference figures of DATA.md ----------------------------------------------------------------------------------
REFERENCE_SETS = ["wordsim353", "simlex999", "google_analogy"]


def test_glove_6b_50d_reference_figures():
    try:
        for name in ["glove_6b_50d", *REFERENCE_SETS]:
            dataset_path(name)
    except DataError as exc:
        pytest.skip(f"needs the fetched reference data: {exc}")
    kv = KeyedVectors.from_dataset("glove_6b_50d")
    res = evaluate_vectors(kv, REFERENCE_SETS, restrict_vocab=30000)
    print(f"\nglove_6b_50d:\n{format_evaluation(res)}")
    # DATA.md: WS353 0.503, SimLex 0.264, Google analogy 0.497 (top 30k words)
    assert res["wordsim353"]["spearman"] == pytest.approx(0.503, abs=0.002)
    assert res["simlex999"]["spearman"] == pytest.approx(0.264, abs=0.002)
    assert res["google_analogy"]["accuracy"] == pytest.approx(0.497, abs=0.002)
    # gensim 4.4.0 on the same vectors and files (measured once, 126 s for the analogies): rho 0.503319577396603
    # and 0.2645792192990813 (restrict_vocab=400000), analogies 7393 right of 14877 answerable
    assert res["wordsim353"]["spearman"] == pytest.approx(0.503319577396603, abs=1e-12)
    assert res["simlex999"]["spearman"] == pytest.approx(0.2645792192990813, abs=1e-12)
    assert (res["google_analogy"]["correct"], res["google_analogy"]["questions_used"]) == (7393, 14877)
    assert res["google_analogy"]["sections"]["capital-common-countries"] == {
        "accuracy": 403 / 506, "correct": 403, "used": 506, "total": 506}


# -- docs/evaluation.md cannot rot ---------------------------------------------------------------------------------------
def plain_signature(obj) -> str:
    sig = inspect.signature(obj)
    params = [p.replace(annotation=inspect.Parameter.empty) for p in sig.parameters.values()]
    return str(sig.replace(parameters=params, return_annotation=inspect.Signature.empty))


def test_docs_api_signatures_are_the_code():
    import tokembed.evaluation
    import tokembed.keyedvectors

    text = (Path(__file__).resolve().parents[2] / "docs" / "evaluation.md").read_text(encoding="utf-8")
    api = text.split("\n## API\n", 1)[1]
    documented: dict[str, set[str]] = {}
    module = None
    for line in api.splitlines():
        if line.startswith("`tokembed."):
            module = importlib.import_module(line.strip("`:"))
        elif line.startswith("- `") and module is not None:
            name, args = re.fullmatch(r"- `([\w.]+)(\(.*\))`", line).groups()
            obj = module
            for part in name.split("."):
                obj = getattr(obj, part)
            assert args == plain_signature(obj), f"docs/evaluation.md documents {name}{args}"
            documented.setdefault(module.__name__, set()).add(name.split(".")[0])
    assert len(documented) == 2
    for module in (tokembed.evaluation, tokembed.keyedvectors):
        functions = {n for n in module.__all__ if inspect.isfunction(getattr(module, n))}
        assert functions <= documented[module.__name__], functions - documented[module.__name__]


def test_spearman_interval_by_fisher_z_with_fieller_variance():
    from tokembed.evaluation import spearman_interval

    # rho 0.5 over 103 pairs: atanh(0.5) = 0.549306, half width 1.959964 * sqrt(1.06 / 100) = 0.201791,
    # tanh(0.347515) = 0.334170 and tanh(0.751097) = 0.635803
    low, high = spearman_interval(0.5, 103)
    assert low == pytest.approx(0.334170, abs=2e-6) and high == pytest.approx(0.635803, abs=2e-6)
    assert spearman_interval(None, 100) is None and spearman_interval(0.3, 3) is None
    assert spearman_interval(1.0, 10) == [1.0, 1.0]
    lo, hi = spearman_interval(-0.2, 50)
    assert -1 < lo < -0.2 < hi < 1  # around rho, inside (-1, 1)
