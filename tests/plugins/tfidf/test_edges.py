"""Edges of the term vectorizers: a tokenizer's special tokens, and a matrix given where documents are expected."""

import pytest


def test_special_tokens_of_the_input_are_not_terms():
    from tokembed.plugins.tfidf.vectorizer import TfidfVectorizer
    from tokembed.sequences import TokenSequences

    seqs = TokenSequences([0, 2, 3, 1, 2], [0, 3, 5], ["<pad>", "<unk>", "whale", "sea"], special_ids=[0, 1])
    vec = TfidfVectorizer().fit(seqs)
    assert vec.get_feature_names_out().tolist() == ["sea", "whale"]


def test_a_matrix_given_to_a_vectorizer_of_documents_is_a_clear_error():
    import scipy.sparse

    from tokembed.errors import TokembedError
    from tokembed.plugins.cooccurrence import CooccurrenceVectorizer

    with pytest.raises(TokembedError, match="got a 2 x 3 matrix"):
        CooccurrenceVectorizer(min_count=1).fit(scipy.sparse.csr_matrix((2, 3)))
