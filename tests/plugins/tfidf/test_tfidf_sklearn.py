"""bow and tfidf in scikit-learn's machinery: ``clone``, a ``Pipeline`` with a classifier, and ``GridSearchCV``
tuning ``min_df`` (issue 25: "clone, Pipeline and GridSearchCV work on tfidf/bow/svd")."""

from __future__ import annotations

import numpy as np
import pytest

from tokembed.plugins.tfidf.vectorizer import BagOfWords, TfidfVectorizer

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import GridSearchCV, StratifiedKFold  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402

# 12 reviews, labels alternating. Every review holds "the film was" (document frequency 12/12); the label is told
# by "great" (label 1) or "awful" (label 0), each in 6 of the 12; the last word is in that review only.
_UNIQUE = ["tuesday", "popcorn", "sequel", "cinema", "ticket", "trailer", "actor", "script", "scene", "camera",
           "studio", "credits"]
DOCS = [f"the film was {'great' if i % 2 else 'awful'} {word}" for i, word in enumerate(_UNIQUE)]
LABELS = np.arange(12) % 2


@pytest.mark.parametrize("cls", [BagOfWords, TfidfVectorizer])
def test_clone_gives_an_unfitted_copy_with_the_same_parameters(cls):
    vec = cls(ngram_range=(1, 2), min_df=2, stop_words=["the"]).fit(DOCS)
    copy = clone(vec)
    assert type(copy) is cls and copy is not vec and not copy.is_fitted()
    assert copy.get_params() == vec.get_params() == {**cls().get_params(), "ngram_range": (1, 2), "min_df": 2,
                                                     "stop_words": ["the"]}
    assert (copy.fit(DOCS).transform(DOCS) != vec.transform(DOCS)).nnz == 0


def test_pipeline_into_a_classifier_fits_raw_text_with_labels():
    pipe = Pipeline([("tfidf", TfidfVectorizer()), ("clf", LogisticRegression())]).fit(DOCS, LABELS)
    # "great" / "awful" separate the classes exactly, so the training reviews are all classified right
    assert pipe.predict(DOCS).tolist() == LABELS.tolist()
    assert pipe.predict(["the film was great", "awful"]).tolist() == [1, 0]


def test_grid_search_tunes_min_df():
    # In a training fold of 8 reviews (stratified 3-fold: 4 + 4), "great" and "awful" are each in 4 of 8 = 50%.
    # min_df=0.6 keeps only "the", "film", "was", identical in every review: every row is the same, the classifier
    # can only predict one class, and a balanced test fold of 2 + 2 scores 0.5. min_df=2 keeps "great"/"awful"
    # (the unique words, in 1 review each, go): every test review is classified right, 1.0. 0.6 is listed first,
    # so a search where min_df did not reach the vectorizer (equal scores) would pick it and fail here.
    search = GridSearchCV(Pipeline([("tfidf", TfidfVectorizer()), ("clf", LogisticRegression())]),
                          {"tfidf__min_df": [0.6, 2]}, cv=StratifiedKFold(3)).fit(DOCS, LABELS)
    assert search.cv_results_["mean_test_score"].tolist() == [0.5, 1.0]
    assert search.best_params_ == {"tfidf__min_df": 2}
    best = search.best_estimator_.named_steps["tfidf"]
    assert best.min_df == 2 and sorted(best.vocabulary_) == ["awful", "film", "great", "the", "was"]


def test_a_pipeline_names_its_output_features():
    # Pipeline.get_feature_names_out() passes each step the previous step's names (scikit-learn's input_features):
    # a vectorizer that took no argument raised TypeError there
    pipe = Pipeline([("tfidf", TfidfVectorizer()), ("clf", LogisticRegression())]).fit(DOCS, LABELS)
    assert pipe[:-1].get_feature_names_out().tolist() == pipe.named_steps["tfidf"].get_feature_names_out().tolist()
    assert "great" in pipe[:-1].get_feature_names_out().tolist()
