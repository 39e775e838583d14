"""Running the contract: which checks apply to a class, all of them at once, or one pytest test per check; and the
registered components to run them over."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator

from . import checks as _c
from . import protocol as _p
from . import sequences_checks as _s
from ._support import _materialise, _who, component_id

Check = Callable[..., None]

__all__ = ["registered_components", "iter_checks", "check_component", "parametrize_with_checks", "Check"]


def registered_components(kind: str | None = None, *, registry: Any = None) -> list[type]:
    """Every registered component class (of ``kind``), sorted by kind then name.

    Parameters
    ----------
    kind : {"tokenizer", "vectorizer", "embedder"}, optional
    registry : tokembed.registry.Registry, optional
        Default: a fresh :func:`tokembed.build_registry` (honouring ``TOKEMBED_DISABLE_PLUGIN_AUTOLOAD``).

    Use with pytest: ``@pytest.mark.parametrize("cls", registered_components(), ids=component_id)`` or
    :func:`parametrize_with_checks`.
    """
    if registry is None:
        from ..registry import build_registry

        registry = build_registry()
    return [info.cls for info in registry.all(kind)]


def iter_checks(cls: type) -> Iterator[Check]:
    """The checks that apply to ``cls`` (common ones, then those of its kind), in order."""
    yield _c.check_name_and_kind
    yield _c.check_init_stores_params
    yield _c.check_get_params_rebuilds
    yield _p.check_param_constraints
    yield _p.check_sklearn_protocol
    yield _c.check_not_fitted
    yield _c.check_fit_returns_self
    yield _c.check_save_load_roundtrip
    yield _c.check_load_rejects_broken
    yield _c.check_deterministic
    yield _c.check_partial_counts
    kind = getattr(cls, "kind", "")
    if kind == "tokenizer":
        yield _c.check_tokenizer_encoding
        yield _c.check_tokenizer_vocab
        yield _c.check_tokenizer_streams_corpus
        yield _c.check_tokenizer_load_formats
        yield _c.check_allowed_special
    elif kind == "vectorizer":
        yield _c.check_vectorizer_output
        yield _s.check_vectorizer_token_sequences
        yield _s.check_mapped_token_sequences
    elif kind == "embedder":
        yield _s.check_embedder_word_vectors
        yield _s.check_mapped_token_sequences


def check_component(cls: type, fit_data: Any = None, inputs: Any = None) -> None:
    """Run every applicable check on ``cls``; raise one ``AssertionError`` listing all that failed.

    Parameters
    ----------
    cls : type
        A subclass of :class:`tokembed.Tokenizer`, :class:`tokembed.Vectorizer` or :class:`tokembed.Embedder`.
    fit_data, inputs : optional
        Override the class's ``_contract_fit_data()`` / ``_contract_inputs()`` (see the module docstring).
    """
    fit_data, inputs = _materialise(fit_data), _materialise(inputs)  # a generator is read once, here
    problems = []
    for check in iter_checks(cls):
        try:
            check(cls, fit_data=fit_data, inputs=inputs)
        except AssertionError as exc:
            problems.append(f"{check.__name__}: {exc}")
        except Exception as exc:  # the component crashed inside the check: report it with the others
            problems.append(f"{check.__name__}: {_who(cls)}: raised {type(exc).__name__}: {exc}")
    if problems:
        raise AssertionError(f"{_who(cls)} breaks the component contract:\n" + "\n".join(problems))


def parametrize_with_checks(classes: Iterable[type]):
    """A ``pytest.mark.parametrize`` decorator giving one test per (class, check) with arguments
    ``component`` and ``check``: ``def test_contract(component, check): check(component)``.

    Test ids read ``tokenizer:char-check_save_load_roundtrip``.
    """
    import pytest

    params = [
        pytest.param(cls, check, id=f"{component_id(cls)}-{check.__name__}")
        for cls in classes
        for check in iter_checks(cls)
    ]
    return pytest.mark.parametrize(("component", "check"), params)
