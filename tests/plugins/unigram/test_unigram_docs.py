"""docs/unigram.md cannot rot: its Python examples run (from the repository root, where its paths point)."""

from __future__ import annotations

import doctest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "unigram.md"


def test_doc_examples_run(monkeypatch):
    monkeypatch.chdir(ROOT)
    text = DOC.read_text(encoding="utf-8")
    parser = doctest.DocTestParser()
    test = parser.get_doctest(text, {}, "docs/unigram.md", str(DOC), 0)
    assert len(test.examples) >= 8
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} example(s) of docs/unigram.md failed (output above)"


def test_doc_lists_every_parameter():
    from tokembed.plugins.unigram.tokenizer import UnigramTokenizer

    text = DOC.read_text(encoding="utf-8")
    table = text.split("## Parameters", 1)[1].split("\n## ", 1)[0]
    for name in UnigramTokenizer._param_names():
        assert f"| `{name}` |" in table, name
