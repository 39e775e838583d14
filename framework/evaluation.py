"""Word-vector evaluation: word-pair similarity (Spearman rho) and analogies (3CosAdd accuracy).

The semantics are gensim 4's ``KeyedVectors.evaluate_word_pairs`` and ``evaluate_word_analogies``, which follow
``word2vec.c``'s ``compute-accuracy``; the figures agree with gensim's on the same vectors (``docs/evaluation.md``
and ``tests/framework/test_evaluation.py``). Analogies are answered for all questions at once with NumPy matrix
products in batches: the 19,544 Google questions against 30,000 x 50 vectors take about a second (gensim, one
question at a time: about two minutes).

>>> from tokembed.keyedvectors import KeyedVectors                      # doctest: +SKIP
>>> kv = KeyedVectors.from_dataset("glove_6b_50d")                       # doctest: +SKIP
>>> evaluate_vectors(kv, ["wordsim353", "google_analogy"])               # doctest: +SKIP
{'wordsim353': {'kind': 'word_pairs', 'spearman': 0.5033..., ...}, 'google_analogy': {'accuracy': 0.4969..., ...}}

Which words count
-----------------
Only keys with a row of ``kv.vectors`` are used (a FastText model's synthesized out-of-vocabulary vectors are
not), among the first ``restrict_vocab`` rows when it is set (the most frequent keys, when the vocabulary is
sorted by frequency, as it is for GloVe, word2vec and tokembed's embedders). With ``case_insensitive=True``
(the default, as in gensim) keys and test words are compared lowercased; when several keys share a lowercased
form, the first one (the most frequent) stands for them all. gensim compares uppercased forms, which differs
only for the few characters whose case mapping is not one-to-one (``ß``, dotless ``ı``). Pairs and questions
with a word left out are skipped and counted.
"""

from __future__ import annotations

import math
import os
import warnings
from typing import Any, Mapping, Sequence

import numpy as np

from .errors import DataError, TokembedError
from .keyedvectors import KeyedVectors

__all__ = [
    "evaluate_vectors",
    "evaluate_word_pairs",
    "evaluate_word_analogies",
    "spearman_interval",
    "evaluation_words",
    "resolve_evaluation_sets",
    "format_evaluation",
    "EVALUATION_KINDS",
    "DEFAULT_RESTRICT_VOCAB",
]

#: Dataset kinds that are evaluation sets, and the function that scores each.
EVALUATION_KINDS = ("word_pairs", "analogies")
#: Analogies are solved among the 30,000 most frequent keys (gensim's ``evaluate_word_analogies(restrict_vocab=
#: 30000)`` as commonly run, and DATA.md's reference figures).
DEFAULT_RESTRICT_VOCAB = 30000
#: Questions per matrix product; with 30,000 keys one batch of scores takes 512 x 30,000 x 4 bytes = 61 MB.
_BATCH = 512
#: Candidates gensim looks at per question (its ``most_similar(..., topn=5)`` call).
_TOPN = 5

WordPairs = Sequence[tuple[str, str, float]]
Analogies = Mapping[str, Sequence[tuple[str, str, str, str]]]


# ---------------------------------------------------------------------------------------------------------------
# the restricted, optionally case-folded vocabulary
# ---------------------------------------------------------------------------------------------------------------
def _vocabulary(kv: KeyedVectors, restrict_vocab: int | None, case_insensitive: bool) -> tuple[dict[str, int], int]:
    """``(form -> row, rows searched)``: the first ``restrict_vocab`` keys, each form mapped to its first row."""
    if restrict_vocab is None:
        end = len(kv)
    elif isinstance(restrict_vocab, bool) or not isinstance(restrict_vocab, (int, np.integer)) or restrict_vocab < 1:
        raise TokembedError(f"restrict_vocab must be None or an int >= 1, got {restrict_vocab!r}")
    else:
        end = min(int(restrict_vocab), len(kv))
    keys = kv.index_to_key[:end]
    vocab: dict[str, int] = {}
    if case_insensitive:
        for i, key in enumerate(keys):
            vocab.setdefault(key.lower(), i)
    else:
        vocab = {key: i for i, key in enumerate(keys)}
    return vocab, end


def _fold(word: str, case_insensitive: bool) -> str:
    return word.lower() if case_insensitive else word


def _named(what: str, source: Any) -> str:
    """``what`` followed by the set it scores when ``source`` names one (a dataset name or a file)."""
    return f"{what} on {os.fspath(source)!r}" if isinstance(source, (str, os.PathLike)) else what


def _finite(x: Any) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def _require_finite(kv: KeyedVectors, rows: np.ndarray | int, what: str) -> None:
    """Raise if a vector the evaluation uses holds NaN or an infinity: the ``rows`` given (those of the word pairs
    counted), or, for an int, every row below it (those analogies search). Without this check NaN makes a
    correlation undefined (None) and wins every argmax of an analogy search (a wrong accuracy), both silently.
    The message names the source of ``kv`` (its file, folder or dataset) when it has one."""
    if isinstance(rows, np.ndarray):
        rows = np.unique(rows)
        bad = rows[~np.isfinite(kv.vectors[rows]).all(axis=1)]
    else:
        found = [lo + np.flatnonzero(~np.isfinite(kv.vectors[lo:min(lo + 65536, rows)]).all(axis=1))
                 for lo in range(0, rows, 65536)]  # in blocks: a bounded temporary array
        bad = np.concatenate(found) if found else np.zeros(0, dtype=np.int64)
    if len(bad):
        first = int(bad[0])
        source = getattr(kv, "source", None)
        raise TokembedError(
            f"{what} uses {len(bad):,} vector{'s' if len(bad) != 1 else ''} holding NaN or infinite values (the "
            f"first: {kv.index_to_key[first]!r}, row {first} of {len(kv):,}{f' in {source}' if source else ''}), "
            "so its score would be meaningless. "
            "Such vectors come from a training run that diverged (try a lower learning rate) or from a file with "
            "'nan' or 'inf' values"
        )


# ---------------------------------------------------------------------------------------------------------------
# word pairs
# ---------------------------------------------------------------------------------------------------------------
def evaluate_word_pairs(
    kv: KeyedVectors,
    pairs: str | os.PathLike | WordPairs,
    *,
    restrict_vocab: int | None = None,
    case_insensitive: bool = True,
) -> dict[str, Any]:
    """Spearman correlation between the vectors' cosine similarities and human similarity scores.

    For every pair ``(w1, w2, score)`` whose two words are in the (restricted) vocabulary, the model's score is
    ``cos(v_w1, v_w2)``; the result is Spearman's rho between model and human scores over those pairs
    (:func:`scipy.stats.spearmanr`, average ranks for ties), as gensim's ``evaluate_word_pairs`` computes it
    (Finkelstein et al. 2002 introduced the protocol with WordSim-353).

    Parameters
    ----------
    kv : KeyedVectors
    pairs : str, path, or sequence of (str, str, float)
        A dataset name of kind ``word_pairs`` (``"wordsim353"``), a ``word1<TAB>word2<TAB>score`` file, or the
        pairs themselves.
    restrict_vocab : int, optional
        Use only the first ``restrict_vocab`` keys. Default: all (gensim's default, 300,000, is the same for
        vocabularies up to that size).
    case_insensitive : bool
        Compare lowercased forms (see the module notes).

    Returns
    -------
    dict
        ``kind`` ("word_pairs"), ``spearman`` (rho), ``pvalue`` (two-sided, of rho), ``spearman_ci95`` (its 95%
        confidence interval ``[low, high]``, see :func:`spearman_interval`), ``pearson`` (r between the raw
        scores), ``pairs_used``, ``pairs_total``, ``oov_pairs`` (skipped: a word missing), ``oov_share``
        (``oov_pairs / pairs_total``, a fraction, where gensim reports a percentage), ``restrict_vocab``,
        ``case_insensitive``. The correlations are None (null in JSON) when fewer than 3 pairs are usable or a
        side is constant.

    Raises
    ------
    DataError
        Unknown or unfetched dataset name, or a malformed file (see :func:`tokembed.datasets.read_word_pairs`).
    TokembedError
        If a vector of a usable pair holds NaN or an infinity (the correlation would be undefined), however few
        pairs are usable. The message names the set (when given by name or file), the first such key and the
        source of ``kv`` (:attr:`KeyedVectors.source`).
    """
    from scipy import stats

    from .datasets import read_word_pairs

    items = read_word_pairs(pairs) if isinstance(pairs, (str, os.PathLike)) else list(pairs)
    vocab, end = _vocabulary(kv, restrict_vocab, case_insensitive)
    rows_a, rows_b, gold = [], [], []
    for w1, w2, score in items:
        i = vocab.get(_fold(w1, case_insensitive))
        j = vocab.get(_fold(w2, case_insensitive))
        if i is not None and j is not None:
            rows_a.append(i)
            rows_b.append(j)
            gold.append(float(score))
    used = len(gold)
    total = len(items)
    result: dict[str, Any] = {"kind": "word_pairs", "spearman": None, "pvalue": None, "pearson": None,
                              "spearman_ci95": None}
    # every vector used is checked, even when too few pairs are left for a correlation: a NaN among them would
    # otherwise pass as "not enough pairs" (null) instead of the error it is
    _require_finite(kv, np.array(rows_a + rows_b, dtype=np.int64), _named("the word-pair evaluation", pairs))
    if used >= 3:
        va = kv.vectors[rows_a].astype(np.float64)
        vb = kv.vectors[rows_b].astype(np.float64)
        norms = np.linalg.norm(va, axis=1) * np.linalg.norm(vb, axis=1)
        model = np.einsum("ij,ij->i", va, vb) / np.where(norms > 0, norms, 1.0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # constant input: reported as None below
            rho, pvalue = stats.spearmanr(gold, model)
            pearson = stats.pearsonr(gold, model)[0] if np.ptp(model) > 0 and np.ptp(gold) > 0 else float("nan")
        result.update(spearman=_finite(rho), pvalue=_finite(pvalue), pearson=_finite(pearson))
    result["spearman_ci95"] = spearman_interval(result["spearman"], used)
    result.update(
        pairs_used=used,
        pairs_total=total,
        oov_pairs=total - used,
        oov_share=(total - used) / total if total else 0.0,
        restrict_vocab=None if restrict_vocab is None else int(restrict_vocab),
        case_insensitive=bool(case_insensitive),
    )
    return result


def spearman_interval(rho: float | None, n: int, level: float = 0.95) -> list[float] | None:
    """The confidence interval of a Spearman correlation ``rho`` over ``n`` pairs, by Fisher's z transformation
    with the variance of Fieller, Hartley & Pearson (1957) for Spearman's rho, ``1.06 / (n - 3)``:
    ``tanh(atanh(rho) +/- z_(1 - (1 - level) / 2) * sqrt(1.06 / (n - 3)))``.

    Returns ``[low, high]`` rounded to 6 decimals, or None when ``rho`` is None or ``n < 4``. A rho of exactly
    +/-1 gives the degenerate interval ``[rho, rho]``.
    """
    if rho is None or n < 4:
        return None
    from scipy import stats

    if abs(rho) >= 1.0:
        return [float(rho), float(rho)]
    half = float(stats.norm.ppf(0.5 + level / 2)) * math.sqrt(1.06 / (n - 3))
    z = math.atanh(rho)
    return [round(math.tanh(z - half), 6), round(math.tanh(z + half), 6)]


# ---------------------------------------------------------------------------------------------------------------
# analogies
# ---------------------------------------------------------------------------------------------------------------
def evaluate_word_analogies(
    kv: KeyedVectors,
    analogies: str | os.PathLike | Analogies,
    *,
    restrict_vocab: int | None = DEFAULT_RESTRICT_VOCAB,
    case_insensitive: bool = True,
    batch_size: int = _BATCH,
) -> dict[str, Any]:
    """Accuracy on analogy questions ``a : b :: c : d`` by 3CosAdd, per section and overall.

    The answer to a question is the key ``x`` among the first ``restrict_vocab`` rows, other than ``a``, ``b`` and
    ``c``, that maximises ``cos(x, u_b - u_a + u_c)`` with ``u`` the unit vectors (Mikolov et al. 2013, "Efficient
    estimation of word representations in vector space", whose Google analogy set this is). It is correct when it
    equals ``d``. Questions with a word outside the restricted vocabulary are skipped and counted, as in gensim's
    ``evaluate_word_analogies`` (``dummy4unknown=False``).

    One detail follows gensim exactly: with ``case_insensitive``, a key whose lowercased form equals that of
    ``a``, ``b`` or ``c`` (``Paris`` for ``paris``) is passed over, looking at most at the 5 best keys; when all 5
    are passed over, the 5th is the answer.

    Parameters
    ----------
    kv : KeyedVectors
    analogies : str, path, or mapping of section -> sequence of (a, b, c, d)
        A dataset name of kind ``analogies`` (``"google_analogy"``), a file in word2vec's
        ``questions-words.txt`` format, or the questions by section.
    restrict_vocab : int or None
        Rows searched and words allowed in questions (default 30,000). None: all keys (slow for large vocabularies:
        time and memory grow with the number of keys).
    case_insensitive : bool
        Compare lowercased forms (see the module notes).
    batch_size : int
        Questions per matrix product (memory: ``batch_size x restrict_vocab`` float32).

    Returns
    -------
    dict
        ``kind`` ("analogies"), ``method`` ("3CosAdd"), ``accuracy`` (correct / used, None when no question is
        usable), ``correct``, ``questions_used``, ``questions_total``, ``oov_questions``, ``oov_share`` (a
        fraction), ``restrict_vocab``, ``case_insensitive``, and ``sections``: section name -> ``accuracy``,
        ``correct``, ``used``, ``total``, in file order.

    Raises
    ------
    DataError
        Unknown or unfetched dataset name, or a malformed file (see :func:`tokembed.datasets.read_analogies`).
    TokembedError
        If a vector among the searched rows holds NaN or an infinity (it would win every search: a wrong
        accuracy) and at least one question is usable. The message names the set (when given by name or file),
        the first such key and the source of ``kv`` (:attr:`KeyedVectors.source`).
    """
    from .datasets import read_analogies

    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise TokembedError(f"batch_size must be an int >= 1, got {batch_size!r}")
    sections = read_analogies(analogies) if isinstance(analogies, (str, os.PathLike)) else analogies
    vocab, end = _vocabulary(kv, restrict_vocab, case_insensitive)
    names = list(sections)
    quads, owner, totals = [], [], []
    for s, name in enumerate(names):
        questions = sections[name]
        totals.append(len(questions))
        for question in questions:
            rows = [vocab.get(_fold(w, case_insensitive)) for w in question]
            if None not in rows:
                quads.append(rows)
                owner.append(s)
    q = np.array(quads, dtype=np.int64).reshape(-1, 4)
    owner_arr = np.array(owner, dtype=np.int64)
    if len(q):
        what = _named("the analogy evaluation", analogies)
        _require_finite(kv, end, f"{what} (searching the first {end:,} rows)")
    hit = _solve_3cosadd(kv, q, vocab, end, case_insensitive, batch_size) if len(q) else np.zeros(0, dtype=bool)

    correct = np.bincount(owner_arr[hit], minlength=len(names))
    used = np.bincount(owner_arr, minlength=len(names))
    per_section = {
        name: {
            "accuracy": float(correct[s] / used[s]) if used[s] else None,
            "correct": int(correct[s]),
            "used": int(used[s]),
            "total": int(totals[s]),
        }
        for s, name in enumerate(names)
    }
    n_used, n_total = int(len(q)), int(sum(totals))
    return {
        "kind": "analogies",
        "method": "3CosAdd",
        "accuracy": float(hit.sum() / n_used) if n_used else None,
        "correct": int(hit.sum()),
        "questions_used": n_used,
        "questions_total": n_total,
        "oov_questions": n_total - n_used,
        "oov_share": (n_total - n_used) / n_total if n_total else 0.0,
        "restrict_vocab": None if restrict_vocab is None else int(restrict_vocab),
        "case_insensitive": bool(case_insensitive),
        "sections": per_section,
    }


def _solve_3cosadd(
    kv: KeyedVectors, q: np.ndarray, vocab: dict[str, int], end: int, case_insensitive: bool, batch_size: int
) -> np.ndarray:
    """Whether each question (rows ``a, b, c, d`` in the folded vocabulary, shape (m, 4)) is answered correctly."""
    normed = kv.get_normed_vectors()[:end]
    if case_insensitive:
        # form id of every searched row: the first row of its lowercased form (the row questions refer to)
        form = np.fromiter((vocab[k.lower()] for k in kv.index_to_key[:end]), dtype=np.int64, count=end)
    else:
        form = np.arange(end, dtype=np.int64)
    hits = np.empty(len(q), dtype=bool)
    for lo in range(0, len(q), batch_size):
        block = q[lo:lo + batch_size]
        a, b, c, d = block.T
        query = normed[b] - normed[a] + normed[c]  # direction of gensim's mean of unit vectors; norm irrelevant
        scores = query @ normed.T  # (batch, end) float32
        rows = np.arange(len(block))
        for col in (a, b, c):  # gensim leaves out the query words' own rows
            scores[rows, col] = -np.inf
        answer = np.full(len(block), -1, dtype=np.int64)
        active = rows  # questions still looking: their best candidate so far shares a form with a, b or c
        for _ in range(_TOPN):
            sub = scores if len(active) == len(block) else scores[active]
            best = np.argmax(sub, axis=1)  # the first row among equal scores
            valid = sub[np.arange(len(active)), best] > -np.inf
            found = form[best]
            answer[active[valid]] = found[valid]  # the last candidate seen answers if all 5 are passed over
            passed = valid & ((found == a[active]) | (found == b[active]) | (found == c[active]))
            scores[active[passed], best[passed]] = -np.inf
            active = active[passed]
            if not len(active):
                break
        hits[lo:lo + len(block)] = answer == d
    return hits


# ---------------------------------------------------------------------------------------------------------------
# several sets by name
# ---------------------------------------------------------------------------------------------------------------
def resolve_evaluation_sets(sets: Sequence[str]) -> dict[str, str]:
    """Check evaluation set names before any work: name -> kind (``word_pairs`` or ``analogies``).

    Raises
    ------
    DataError
        An unknown name (with did-you-mean and the list), a dataset that is not an evaluation set, or a set not
        fetched yet (the message gives ``tokembed data fetch NAME``). Every name is checked; the first problem is
        raised, naming all the missing sets in one fetch command.
    TypeError
        ``sets`` is a single string.
    """
    from .datasets import dataset_path, get_spec

    if isinstance(sets, str):
        raise TypeError("sets must be a list of dataset names, not one string")
    kinds: dict[str, str] = {}
    missing: list[str] = []
    for name in dict.fromkeys(sets):
        spec = get_spec(name)
        if spec.kind not in EVALUATION_KINDS:
            raise DataError(
                f"dataset {name!r} is of kind {spec.kind!r}, not an evaluation set "
                f"({' or '.join(EVALUATION_KINDS)})"
            )
        kinds[name] = spec.kind
        try:
            dataset_path(name)
        except DataError:
            missing.append(name)
    if len(missing) == 1:
        dataset_path(missing[0])  # raises the datasets module's own message
    elif missing:
        raise DataError(
            f"evaluation sets {', '.join(repr(m) for m in missing)} are not fetched yet. "
            f"Run: tokembed data fetch {' '.join(missing)}"
        )
    return kinds


def evaluate_vectors(
    kv: KeyedVectors,
    sets: Sequence[str],
    *,
    restrict_vocab: int | None = DEFAULT_RESTRICT_VOCAB,
    pairs_restrict_vocab: int | None = None,
    case_insensitive: bool = True,
) -> dict[str, dict[str, Any]]:
    """Evaluate ``kv`` on named evaluation sets; what the runner calls for an ``evaluate:`` recipe section.

    Parameters
    ----------
    kv : KeyedVectors
    sets : list of str
        Dataset names of kind ``word_pairs`` or ``analogies`` (``["wordsim353", "simlex999",
        "google_analogy"]``).
    restrict_vocab : int or None
        For analogies (see :func:`evaluate_word_analogies`); default 30,000.
    pairs_restrict_vocab : int or None
        For word pairs (see :func:`evaluate_word_pairs`); default None, every key.
    case_insensitive : bool
        Compare lowercased forms.

    Returns
    -------
    dict
        Set name -> the result dict of :func:`evaluate_word_pairs` or :func:`evaluate_word_analogies` with
        ``"set"`` added; JSON-able (None for undefined values), in the order of ``sets``.

    Raises
    ------
    DataError
        As :func:`resolve_evaluation_sets`, before anything is computed.
    TokembedError
        If the vectors a set uses hold NaN or infinite values (see :func:`evaluate_word_pairs` and
        :func:`evaluate_word_analogies`).
    """
    kinds = resolve_evaluation_sets(sets)
    results: dict[str, dict[str, Any]] = {}
    for name, kind in kinds.items():
        if kind == "word_pairs":
            res = evaluate_word_pairs(kv, name, restrict_vocab=pairs_restrict_vocab,
                                      case_insensitive=case_insensitive)
        else:
            res = evaluate_word_analogies(kv, name, restrict_vocab=restrict_vocab, case_insensitive=case_insensitive)
        results[name] = {"set": name, **res}
    return results


def evaluation_words(sets: Sequence[str]) -> list[str]:
    """Every word of the evaluation sets (dataset names or files), in first-seen order."""
    from .datasets import read_analogies, read_word_pairs

    words: dict[str, None] = {}
    for name, kind in resolve_evaluation_sets(list(sets)).items():
        if kind == "word_pairs":
            for a, b, _ in read_word_pairs(name):
                words.setdefault(a)
                words.setdefault(b)
        else:
            for questions in read_analogies(name).values():
                for q in questions:
                    for w in q:
                        words.setdefault(w)
    return list(words)


def format_evaluation(results: Mapping[str, Mapping[str, Any]]) -> str:
    """A plain-text table of :func:`evaluate_vectors` results: set, measure, score, items used / total, OOV share."""
    lines = [f"{'set':<16} {'measure':<9} {'score':>7} {'used':>13} {'oov':>6}"]
    for name, res in results.items():
        if res.get("kind") == "analogies":
            measure, score, used, total = "accuracy", res["accuracy"], res["questions_used"], res["questions_total"]
        else:
            measure, score, used, total = "spearman", res["spearman"], res["pairs_used"], res["pairs_total"]
        shown = "n/a" if score is None else f"{score:.3f}"
        lines.append(f"{name:<16} {measure:<9} {shown:>7} {f'{used:,}/{total:,}':>13} {res['oov_share']:>6.1%}")
    return "\n".join(lines)
