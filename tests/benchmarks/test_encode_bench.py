"""The encode benchmark's writer and check (benchmarks/encode.py): the reference side's uint16 files and the
comparison that decides whether a timing is recorded. No tokenizer runs here."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks import CheckFailed
from benchmarks.encode import _batches, _check, write_ids


def test_write_ids_appends_batches_as_one_uint16_array_with_offsets(tmp_path):
    out = write_ids(tmp_path / "a", iter([[[1, 2, 3], []], [[65535, 7]]]))
    ids = np.load(out / "ids.npy")
    assert ids.dtype == np.uint16 and ids.tolist() == [1, 2, 3, 65535, 7]
    assert np.load(out / "offsets.npy").tolist() == [0, 3, 3, 5]  # an empty document keeps its place


def test_the_check_passes_on_identical_files_and_names_the_first_differing_token(tmp_path):
    a = write_ids(tmp_path / "a", iter([[[1, 2, 3], [4, 5]]]))
    b = write_ids(tmp_path / "b", iter([[[1, 2], [3]], [[4, 5]]]))  # other batches, other boundaries
    c = write_ids(tmp_path / "c", iter([[[1, 2, 3], [4, 6]]]))
    same = write_ids(tmp_path / "d", iter([[[1, 2, 3]], [[4, 5]]]))
    assert _check(a, same) == "5 ids in 2 documents identical (the written uint16 arrays compared)"
    with pytest.raises(CheckFailed, match="document boundaries differ"):
        _check(a, b)
    with pytest.raises(CheckFailed, match="first at token 4"):
        _check(a, c)


def test_the_reference_reader_skips_blank_and_whitespace_only_lines(tmp_path):
    path = tmp_path / "t.txt"
    path.write_bytes(b"one\n\n  \t\ntwo\r\n three \n")
    assert [doc for batch in _batches(path) for doc in batch] == ["one", "two", " three "]
