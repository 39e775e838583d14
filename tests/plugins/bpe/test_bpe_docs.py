"""docs/bpe.md cannot rot: its examples run (from the repository root, as a reader would run them)."""

from __future__ import annotations

import doctest

from _bpe_data import ROOT


def test_docs_examples_run(monkeypatch):
    monkeypatch.chdir(ROOT)
    result = doctest.testfile(str(ROOT / "docs" / "bpe.md"), module_relative=False, verbose=False,
                              optionflags=doctest.ELLIPSIS)
    assert result.attempted >= 12 and result.failed == 0
