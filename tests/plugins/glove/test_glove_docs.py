"""docs/glove.md cannot rot: its Python examples run, its parameter table lists every parameter with its default."""

from __future__ import annotations

import doctest
import inspect
from pathlib import Path

from tokembed.plugins.glove import GloVe

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "glove.md"


def test_doc_examples_run(monkeypatch):
    monkeypatch.chdir(ROOT)
    text = DOC.read_text(encoding="utf-8")
    test = doctest.DocTestParser().get_doctest(text, {}, "docs/glove.md", str(DOC), 0)
    assert len(test.examples) >= 8
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} example(s) of docs/glove.md failed (output above)"


def test_doc_lists_every_parameter_with_its_default():
    table = DOC.read_text(encoding="utf-8").split("## Parameters", 1)[1].split("\n## ", 1)[0]
    for p in list(inspect.signature(GloVe.__init__).parameters.values())[1:]:
        d = p.default
        shown = "null" if d is None else str(d).lower() if isinstance(d, bool) else f"`{d}`" if isinstance(d, str) \
            else d
        assert f"| `{p.name}` | {shown} |" in table, p.name
