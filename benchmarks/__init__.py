"""Side-by-side benchmarks: one of our components against a reference implementation, on the same data.

Run them from the repository root with ``python -m benchmarks [NAME ...] [--repeat N] [--list]`` (see
``docs/benchmarks.md``). They never run inside the test suite.

Adding a benchmark: create ``benchmarks/<name>.py`` with a function decorated by :func:`benchmark`. The function
does the untimed setup (load data, fit what must be fitted) and returns a :class:`Case`: the two callables to time
and the check that proves both did the same work::

    from benchmarks import Case, CheckFailed, benchmark

    @benchmark(
        "bpe_train",
        description="BPE training, 32k vocabulary, on prose_mix",
        ours="tokembed bpe", reference="HF tokenizers BpeTrainer",
        check="same vocabulary", libraries=("tokenizers",),
    )
    def bpe_train() -> Case:
        text = ...
        def check(ours_result, reference_result) -> str:
            if set(ours_result) != set(reference_result):
                raise CheckFailed("vocabularies differ: ...")
            return "32,000 of 32,000 tokens in common"
        return Case(ours=lambda: ..., reference=lambda: ..., check=check, work_bytes=len(text.encode()))

Every module of this package whose name does not start with ``_`` (nor is ``harness``) is imported by
:func:`load_benchmarks`, so the new file needs no other registration.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["BENCHMARKS", "Benchmark", "Case", "CheckFailed", "benchmark", "load_benchmarks"]


class CheckFailed(AssertionError):
    """Raised by a benchmark's check when the two sides did not do the same work."""


@dataclass
class Case:
    """What one benchmark times, prepared by its setup function.

    Attributes
    ----------
    ours, reference : callable
        Zero-argument callables, each doing the whole timed work once and returning its result.
    check : callable
        ``check(ours_result, reference_result) -> str``: raises :class:`CheckFailed` (or ``AssertionError``) when
        the two results disagree, else returns a one-line account of what was compared (``"1,190,317 ids
        identical"``).
    work_bytes : int or None
        Bytes of input text one call processes; the report then shows throughput in MB/s (10^6 bytes per second).
    notes : str
        Anything a reader needs to read the figures fairly (what each side returns, threads used, ...).
    quality : bool
        The check compares quality scores (word-vector evaluations), not outputs that must agree: when it fails, the
        benchmark still times both sides and reports the miss beside the figures, and the command exits with
        status 1. A check of identical outputs keeps the default (False): a faster wrong answer is not a result, so
        nothing is timed.
    trial : bool
        The setup ran at a trial size (one that only proves the benchmark runs, named in ``notes``): the section is
        printed but never written to the results file.
    """

    ours: Callable[[], Any]
    reference: Callable[[], Any]
    check: Callable[[Any, Any], str]
    work_bytes: int | None = None
    notes: str = ""
    quality: bool = False
    trial: bool = False


@dataclass(frozen=True)
class Benchmark:
    """A registered benchmark: metadata and the setup function that returns its :class:`Case`."""

    name: str
    setup: Callable[[], Case]
    description: str
    ours: str
    reference: str
    check: str
    data: str = ""
    libraries: tuple[str, ...] = field(default_factory=tuple)
    warmup: int = 1
    repeat: int = 3


#: Registered benchmarks by name (filled by importing the benchmark modules: see :func:`load_benchmarks`).
BENCHMARKS: dict[str, Benchmark] = {}


def benchmark(
    name: str,
    *,
    description: str,
    ours: str,
    reference: str,
    check: str,
    data: str = "",
    libraries: tuple[str, ...] = (),
    warmup: int = 1,
    repeat: int = 3,
) -> Callable[[Callable[[], Case]], Callable[[], Case]]:
    """Register the decorated setup function as benchmark ``name``.

    ``ours`` / ``reference`` name the two implementations, ``check`` says how their results are compared,
    ``data`` the input, ``libraries`` the distributions whose versions the report records (numpy and tokembed are
    always recorded), ``warmup`` the untimed calls per side when ``--warmup`` is not given (0 for a long run whose
    setup already compiles what it needs: a warm-up call would only add its minutes), ``repeat`` the timed calls
    per side when ``--repeat`` is not given (5 for rows whose two sides are close, so the spread shows).
    """

    def register(setup: Callable[[], Case]) -> Callable[[], Case]:
        if name in BENCHMARKS and BENCHMARKS[name].setup.__module__ != setup.__module__:
            raise ValueError(f"benchmark {name!r} is defined twice ({BENCHMARKS[name].setup.__module__})")
        BENCHMARKS[name] = Benchmark(name, setup, description, ours, reference, check, data, tuple(libraries),
                                     warmup, repeat)
        return setup

    return register


def load_benchmarks() -> dict[str, Benchmark]:
    """Import every benchmark module of this package and return the registry."""
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_") and info.name != "harness":
            importlib.import_module(f"{__name__}.{info.name}")
    return BENCHMARKS
