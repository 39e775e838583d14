"""Atomic writes and checked reads (tokembed.io)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from tokembed.errors import ArtifactError
from tokembed.io import (
    atomic_path,
    atomic_save_npy,
    atomic_save_npz,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
    dumps_json,
    read_json,
)


def listing(folder):
    return sorted(p.name for p in folder.iterdir())


def test_atomic_write_creates_parents_and_replaces(tmp_path):
    target = tmp_path / "a" / "b" / "f.bin"
    assert atomic_write_bytes(target, b"one") == target
    assert target.read_bytes() == b"one"
    atomic_write_bytes(target, b"two")
    assert target.read_bytes() == b"two"
    assert listing(target.parent) == ["f.bin"]


def test_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "f.txt"
    target.write_text("old", encoding="utf-8")
    with pytest.raises(RuntimeError, match="disk full"):
        with atomic_path(target) as tmp:
            assert tmp.parent == tmp_path and tmp.name.startswith(".f.txt.") and tmp.name.endswith(".tmp")
            tmp.write_text("half", encoding="utf-8")
            raise RuntimeError("disk full")
    assert target.read_text(encoding="utf-8") == "old"
    assert listing(tmp_path) == ["f.txt"]


def test_failed_first_write_leaves_nothing(tmp_path):
    with pytest.raises(TypeError):
        atomic_write_json(tmp_path / "x.json", {"bad": object()})
    assert listing(tmp_path) == []


def test_interrupt_is_cleaned_up_too(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        with atomic_path(tmp_path / "k"):
            raise KeyboardInterrupt
    assert listing(tmp_path) == []


def test_text_is_utf8_without_newline_translation_and_keeps_lone_surrogates(tmp_path):
    path = atomic_write_text(tmp_path / "t.txt", "a\r\nb\nc\ud800é")
    # "é" is C3 A9 in UTF-8; the lone surrogate U+D800 is ED A0 80 (surrogatepass)
    assert path.read_bytes() == b"a\r\nb\nc\xed\xa0\x80\xc3\xa9"


def test_dumps_json_is_deterministic_and_readable():
    obj = {"b": 1, "a": [np.int64(2), np.float32(0.5), np.arange(3)], "s": {"z", "y"}, "p": tmp_path_like(),
           "u": "é\ud800"}
    text = dumps_json(obj)
    assert text.endswith("\n")
    assert text == dumps_json(obj)
    # insertion order kept, one-space indent, numpy values as plain numbers, sets sorted, paths as str; non-ASCII
    # written as is, except a lone surrogate, which UTF-8 cannot hold: it is written as its JSON escape
    assert text == (
        '{\n "b": 1,\n "a": [\n  2,\n  0.5,\n  [\n   0,\n   1,\n   2\n  ]\n ],\n "s": [\n  "y",\n  "z"\n ],\n'
        ' "p": "some/path",\n "u": "é\\ud800"\n}\n'
    )
    assert json.loads(text)["u"] == "é\ud800"
    text.encode("utf-8")  # valid UTF-8: no lone surrogate left in the text


def tmp_path_like():
    class P(os.PathLike):
        def __fspath__(self):
            return "some/path"

    return P()


@pytest.mark.parametrize("value", [float("nan"), float("inf"), np.float64("-inf")])
def test_dumps_json_refuses_non_finite_numbers(value):
    with pytest.raises(ValueError):
        dumps_json({"x": value})


def test_dumps_json_refuses_unknown_objects():
    with pytest.raises(TypeError, match="cannot write object to JSON"):
        dumps_json(object())


def test_json_round_trip(tmp_path):
    obj = {"ids": [1, 2, 3], "text": "tabs\tand\nnewlines é \ud800", "nested": {"x": None, "y": True}}
    path = atomic_write_json(tmp_path / "o.json", obj)
    assert read_json(path) == obj
    assert json.loads(path.read_bytes().decode("utf-8", "surrogatepass")) == obj


def test_read_json_errors_name_the_file(tmp_path):
    with pytest.raises(ArtifactError, match=r"missing\.json: no such artifact file"):
        read_json(tmp_path / "missing.json")
    with pytest.raises(ArtifactError, match="is a folder, expected a recipe file"):
        read_json(tmp_path, what="recipe")
    bad_utf8 = tmp_path / "latin1.json"
    bad_utf8.write_bytes(b'{"a": "caf\xe9"}')  # '{"a": "caf' is 10 bytes, so the Latin-1 byte is at offset 10
    with pytest.raises(ArtifactError, match=r"not a UTF-8 JSON artifact \(bad byte at offset 10\)"):
        read_json(bad_utf8)
    truncated = tmp_path / "t.json"
    truncated.write_text('{\n "a": [1,\n  2', encoding="utf-8")
    with pytest.raises(ArtifactError) as err:
        read_json(truncated)
    assert str(err.value).startswith(f"{truncated}:3:4: not a valid JSON artifact")
    assert "the file may be truncated" in str(err.value)


def test_npy_and_npz_round_trip_without_pickle(tmp_path):
    arr = np.arange(12, dtype=np.float32).reshape(3, 4)
    path = atomic_save_npy(tmp_path / "a.npy", arr)
    back = np.load(path, allow_pickle=False)
    assert back.dtype == np.float32 and np.array_equal(back, arr)
    path = atomic_save_npz(tmp_path / "m.npz", x=arr, ids=np.array([1, 2], np.int32))
    with np.load(path, allow_pickle=False) as z:
        assert sorted(z.files) == ["ids", "x"]
        assert np.array_equal(z["x"], arr) and z["ids"].dtype == np.int32
    assert listing(tmp_path) == ["a.npy", "m.npz"]


def test_object_arrays_are_refused(tmp_path):
    with pytest.raises(ValueError):
        atomic_save_npy(tmp_path / "o.npy", np.array([{"a": 1}], dtype=object))
    with pytest.raises(ValueError, match="array 'x' holds Python objects"):
        atomic_save_npz(tmp_path / "o.npz", ok=np.zeros(2), x=np.array([{"a": 1}], dtype=object))
    assert listing(tmp_path) == []
