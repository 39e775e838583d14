"""The component contract as reusable checks, for tokembed's own tests and for third-party plugins.

One suite runs over every registered component, built-in or not, in the spirit of scikit-learn's
``parametrize_with_checks``. In a plugin's test file::

    from tokembed.testing import check_component, parametrize_with_checks
    from my_plugin.tokenizer import MyTokenizer

    def test_contract():                      # every check, one test, all failures listed together
        check_component(MyTokenizer)

    @parametrize_with_checks([MyTokenizer])   # or: one pytest test per check
    def test_each_check(component, check):
        check(component)

and ``registered_components()`` lists every installed component class, so a project can run the contract over
the whole registry.

Each ``check_*`` function takes the component CLASS (``check(cls, fit_data=None, inputs=None)``), builds fresh
instances, and raises ``AssertionError`` with a message naming the component and the broken rule. The checks:

- ``name`` and ``kind`` are set and agree with the base class;
- ``__init__`` stores every parameter unchanged under its own name, validates nothing and sets nothing else;
- ``get_params()`` rebuilds an equal component, and ``fit`` does not change the parameters;
- ``param_constraints`` is well formed, declares every parameter when it declares any, and the defaults satisfy it;
- scikit-learn's protocol: ``get_params(deep=False)`` returns the objects given, ``fit(X, y=None)``; with
  scikit-learn installed, ``clone`` works and a vectorizer in a ``Pipeline`` transforms as ``fit_transform``;
- using the component before ``fit`` raises :class:`~tokembed.errors.NotFittedError`;
- ``fit`` returns ``self``;
- ``save`` then ``load`` gives identical outputs and a byte-identical re-saved artifact;
- a truncated artifact, another component's artifact or an unknown format version raises ``ArtifactError``;
- fitting twice with ``seed=0`` (and ``workers=1`` where the parameter exists) gives byte-identical artifacts;
- a component that fits from partial counts: the merged counts of two halves of the data give ``fit``'s artifact;
- tokenizers: ``Encoding`` shapes and dtypes, offsets inside the text, ``encode_batch``, the vocabulary is a
  bijection onto ``range(get_vocab_size())``, ``fit`` streams a one-shot iterator, ``allowed_special``;
- vectorizers: ``transform`` gives the rows ``output_rows`` promises and one column per ``get_feature_names_out()``
  name; ``fit_transform`` equals ``fit`` then ``transform``; fitted on a real tokenizer's ``TokenSequences``
  (:func:`contract_sequences`), one that reads documents learns what it learns from the same token lists;
- embedders that fit on tokens: fitted on those ``TokenSequences``, ``wv_`` is a ``KeyedVectors`` keyed by tokens
  of the sequences, with finite rows, and survives save and load;
- both: fitted on those ``TokenSequences`` memory-mapped (``tokembed encode`` + ``TokenSequences.open``), the
  artifact is byte-identical to the one fitted in memory, and a vectorizer's ``transform`` equal.

What the suite feeds a component
--------------------------------
A component class may define three optional classmethods (all private: they are for the suite only):

``_contract_params() -> dict``
    Keyword arguments for every instance the suite builds (small sizes keep the suite fast; required parameters
    must be given here). Default ``{}``.
``_contract_fit_data() -> object``
    What ``fit`` receives. Default: tokenizers get :func:`sample_corpus` (paragraphs of the bundled Moby Dick
    sample); vectorizers and embedders get the same paragraphs split on whitespace (``list[list[str]]``). The
    sequence checks also fit them on :func:`contract_sequences` (a real tokenizer's ``TokenSequences``), whatever
    this hook returns.
``_contract_inputs() -> object``
    What the fitted component is applied to when outputs are compared. Default: tokenizers get
    :func:`sample_texts` (each text is encoded and decoded); vectorizers get their fit data (passed whole to
    ``transform``); embedders get nothing (only the saved state is compared) unless they define this hook, and
    then ``embed(inputs)`` (or ``transform(inputs)``) is compared.

``fit_data`` / ``inputs`` passed to a check override these hooks.

The package: :mod:`~tokembed.testing.checks` (the checks), :mod:`~tokembed.testing.sequences_checks` (the checks
on a tokenizer's ``TokenSequences``), :mod:`~tokembed.testing.suite` (running them,
listing the registered components), :mod:`~tokembed.testing.samples` (the texts), and
:mod:`~tokembed.testing.metrics` (:func:`check_metric`, the same idea for tokenizer metrics). It imports neither
pytest (only :func:`parametrize_with_checks` does, when called) nor numba.
"""

from .checks import (
    check_allowed_special,
    check_deterministic,
    check_partial_counts,
    check_fit_returns_self,
    check_get_params_rebuilds,
    check_init_stores_params,
    check_load_rejects_broken,
    check_name_and_kind,
    check_not_fitted,
    check_save_load_roundtrip,
    check_tokenizer_encoding,
    check_tokenizer_streams_corpus,
    check_tokenizer_vocab,
    check_vectorizer_output,
)
from .protocol import check_param_constraints, check_sklearn_protocol
from .sequences_checks import (
    check_embedder_word_vectors,
    check_mapped_token_sequences,
    check_vectorizer_token_sequences,
    contract_sequences,
)
from ._support import component_id, contract_fit_data, contract_inputs, contract_params
from .metrics import check_metric
from .samples import sample_corpus, sample_texts
from .suite import check_component, iter_checks, parametrize_with_checks, registered_components

__all__ = [
    "sample_corpus",
    "sample_texts",
    "contract_params",
    "contract_fit_data",
    "contract_inputs",
    "registered_components",
    "component_id",
    "iter_checks",
    "check_component",
    "parametrize_with_checks",
    "check_metric",
    "check_name_and_kind",
    "check_init_stores_params",
    "check_get_params_rebuilds",
    "check_param_constraints",
    "check_sklearn_protocol",
    "check_not_fitted",
    "check_fit_returns_self",
    "check_save_load_roundtrip",
    "check_load_rejects_broken",
    "check_deterministic",
    "check_partial_counts",
    "check_tokenizer_encoding",
    "check_tokenizer_vocab",
    "check_tokenizer_streams_corpus",
    "check_allowed_special",
    "check_vectorizer_output",
    "check_vectorizer_token_sequences",
    "check_embedder_word_vectors",
    "check_mapped_token_sequences",
    "contract_sequences",
]
