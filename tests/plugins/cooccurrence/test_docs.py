"""docs/cooccurrence.md cannot drift: its examples run as doctests."""

import doctest
from pathlib import Path

DOC = Path(__file__).resolve().parents[3] / "docs" / "cooccurrence.md"


def test_docs_examples_run():
    result = doctest.testfile(str(DOC), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 10 and result.failed == 0
