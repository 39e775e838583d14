"""One way to read a corpus: ``tokembed.corpus.read_documents`` (the API), a recipe's ``corpus: {path:}`` and
``tokembed encode`` read the same documents from the same file (blank and whitespace-only lines are not documents,
docs/recipes.md#documents), so the same parameters train the same tokenizer; ``fit(list)`` takes the list as given."""

from __future__ import annotations

from pathlib import Path

import pytest

from tokembed.corpus import Corpus, read_documents
from tokembed.errors import CorpusError
from tokembed.runner import run_recipe

BPE = dict(vocab_size=600, min_frequency=2, byte_level=True, seed=0)
RECIPE = """\
corpus: {path: blanky.txt}
tokenizers:
  bpe: {type: bpe, vocab_size: 600, min_frequency: 2, byte_level: true, seed: 0}
"""


@pytest.fixture()
def blanky(tmp_path) -> Path:
    """400 lines of Moby-Dick with an empty line, a line of 3 spaces and a line of a tab and 2 spaces after every
    fourth line (300 blank or whitespace-only lines in all)."""
    lines = []
    for i, line in enumerate(Corpus.builtin("moby-dick").head(400)):
        lines.append(line)
        if i % 4 == 3:
            lines += ["", "   ", "\t  "]
    (tmp_path / "blanky.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path / "blanky.txt"


def test_read_documents_skips_blank_and_whitespace_only_lines(blanky):
    raw = blanky.read_text(encoding="utf-8").split("\n")[:-1]
    docs = list(read_documents(blanky))
    assert docs == [line for line in raw if line.strip()]
    assert len(raw) - len(docs) == 300  # the 100 x 3 lines the fixture inserted
    assert list(read_documents([blanky, blanky])) == docs + docs  # several paths, in the order given


def test_the_api_and_a_recipe_train_the_same_tokenizer(blanky, tmp_path):
    from tokembed.plugins.bpe.tokenizer import BPETokenizer

    (tmp_path / "recipe.yaml").write_text(RECIPE, encoding="utf-8")
    run_recipe(tmp_path / "recipe.yaml", out=tmp_path / "run", quiet=True, metrics=False)
    BPETokenizer(**BPE).fit(read_documents(blanky)).save(tmp_path / "api.tokembed.json")
    assert (tmp_path / "api.tokembed.json").read_bytes() == (tmp_path / "run" / "bpe.tokembed.json").read_bytes()
    # fit(list) takes the list as given: the whitespace-only lines are words of their own for a byte-level BPE
    # ("ĠĠĠ" and "ĉĠĠ" counted 100 times each), so keeping them changes the tokenizer: the test above can fail
    kept = BPETokenizer(**BPE).fit(blanky.read_text(encoding="utf-8").split("\n"))
    kept.save(tmp_path / "kept.tokembed.json")
    assert (tmp_path / "kept.tokembed.json").read_bytes() != (tmp_path / "api.tokembed.json").read_bytes()
    assert kept.token_to_id("ĠĠ") is not None and BPETokenizer.load(tmp_path / "api.tokembed.json").token_to_id(
        "ĠĠ") is None


def test_read_documents_implies_the_format_and_says_what_is_wrong(tmp_path):
    (tmp_path / "a.jsonl").write_text('{"text": "one"}\n\n{"text": "  "}\n{"text": "two"}\n', encoding="utf-8")
    assert list(read_documents(tmp_path / "a.jsonl", field="text")) == ["one", "two"]
    with pytest.raises(CorpusError, match="needs `field:`"):
        read_documents(tmp_path / "a.jsonl")
    with pytest.raises(CorpusError, match="no such file"):
        read_documents(tmp_path / "missing.txt")
    with pytest.raises(CorpusError, match="at least one path"):
        read_documents([])
