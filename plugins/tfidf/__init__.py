"""Built-in plugin ``tfidf``: term vectorizers over any tokenizer's ids: ``bow`` (counts), ``tfidf`` and ``onehot``."""

from tokembed import hookimpl


@hookimpl
def tokembed_register_vectorizers():
    from .onehot import OneHotVectorizer
    from .vectorizer import BagOfWords, TfidfVectorizer

    return [BagOfWords, TfidfVectorizer, OneHotVectorizer]
