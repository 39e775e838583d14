"""Corpus partitions (tokembed.corpus.Partition): byte ranges cut after a newline, read by whoever counts them.

The property that everything distributed rests on: the partitions of a corpus, read in order, give exactly the
documents of ``iter(corpus)``, for every partition size, every unit and format, with empty partitions."""

from __future__ import annotations

import gzip
import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tokembed.corpus import Corpus, Partition
from tokembed.errors import CorpusError, CorpusReadError

# lines made of a few awkward pieces: blank and whitespace-only lines, CRLF, non-ASCII, a no-break space line
_PIECES = ["a", "b c", "", " ", "\u00a0", "\u00e9t\u00e9", "\u6771\u4eac", "x\r", "  y  ", "\t", "long " * 30]


def _write(tmp_path, name, lines, end="\n"):
    path = tmp_path / name
    path.write_bytes((end.join(lines) + (end if lines else "")).encode("utf-8"))
    return path


def _read_all(corpus: Corpus, parts: list[Partition]) -> list[str]:
    return [doc for part in parts for doc in corpus.read_partition(part)]


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(st.sampled_from(_PIECES), max_size=40), target=st.integers(1, 200),
       unit=st.sampled_from(["line", "paragraph"]), trailing=st.booleans())
# found by this test: a 1-byte partition ending inside the no-break space (C2 | A0) of a blank line lost the
# paragraph after it
@example(lines=["a", "\u00a0", "a"], target=1, unit="paragraph", trailing=False)
def test_partitions_read_in_order_give_the_corpus(tmp_path_factory, lines, target, unit, trailing):
    tmp = tmp_path_factory.mktemp("p")
    path = tmp / "c.txt"
    text = "\n".join(lines) + ("\n" if trailing and lines else "")
    path.write_bytes(text.encode("utf-8"))
    corpus = Corpus((path,), unit=unit)
    parts = corpus.partitions(target)
    expected = list(corpus._documents()) if any(s.strip() for s in lines) else []
    assert _read_all(corpus, parts) == expected
    # ranges tile the file
    assert [p.start for p in parts][0] == 0 and parts[-1].end == path.stat().st_size
    assert all(a.end == b.start for a, b in zip(parts, parts[1:]))


def test_several_files_jsonl_gz_and_min_partitions(tmp_path):
    a = _write(tmp_path, "a.jsonl", [json.dumps({"text": f"doc {i} \u00e9"}) for i in range(50)])
    b = tmp_path / "b.jsonl.gz"
    b.write_bytes(gzip.compress(b'{"text": "zipped one"}\n{"text": "zipped two"}\n'))
    c = _write(tmp_path, "c.jsonl", ["", json.dumps({"text": "last"}), ""])
    corpus = Corpus((a, b, c), format="jsonl", field="text")
    parts = corpus.partitions(1 << 20, min_partitions=8)
    # a and c are cut to reach 8 partitions; the .gz file is one partition read whole
    assert len([p for p in parts if p.path == str(b)]) == 1
    assert len(parts) >= 8
    assert [p.index for p in parts] == list(range(len(parts)))
    assert _read_all(corpus, parts) == list(corpus)
    gz = next(p for p in parts if p.path == str(b))
    assert gz.nbytes == len(b'{"text": "zipped one"}\n{"text": "zipped two"}\n')


def test_unit_file_is_one_partition_per_file(tmp_path):
    a = _write(tmp_path, "a.txt", ["one", "two"])
    b = _write(tmp_path, "b.txt", ["three"])
    corpus = Corpus((a, b), unit="file")
    parts = corpus.partitions(1, min_partitions=10)
    assert [(p.path, p.start, p.end) for p in parts] == [(str(a), 0, 8), (str(b), 0, 6)]
    assert _read_all(corpus, parts) == ["one\ntwo\n", "three\n"]


def test_bom_only_at_the_start_and_offsets_of_bad_bytes(tmp_path):
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbffirst line\nsecond line\nthird \xff line\n")
    corpus = Corpus((path,))
    parts = corpus.partitions(12)
    assert len(parts) == 4
    docs = []
    with pytest.raises(CorpusReadError, match=r"bom\.txt:3: invalid UTF-8 at byte offset 32"):
        for part in parts:
            docs.extend(corpus.read_partition(part))
    assert docs == ["first line", "second line"]


def test_jsonl_error_in_a_later_partition_names_the_line_of_the_file(tmp_path, monkeypatch):
    """The partition starts at byte 22 (line 3 of the file): the message names line 3, as reading the whole file
    does; past COUNT_LINES_UP_TO bytes it names the partition's line and the byte it counts from instead."""
    import tokembed.corpus.partitions as partitions

    path = _write(tmp_path, "r.jsonl", ['{"t": "a"}', '{"t": "b"}', "not json"])
    corpus = Corpus((path,), format="jsonl", field="t")
    parts = corpus.partitions(11)
    with pytest.raises(CorpusReadError, match=r"r\.jsonl:3:1: not valid JSON"):
        list(corpus)
    with pytest.raises(CorpusReadError, match=r"r\.jsonl:3:1: not valid JSON"):
        for part in parts:
            list(corpus.read_partition(part))
    monkeypatch.setattr(partitions, "COUNT_LINES_UP_TO", 10)
    with pytest.raises(CorpusReadError, match=r"r\.jsonl:1 \(counted from byte 22\):1: not valid JSON"):
        for part in parts:
            list(corpus.read_partition(part))


def test_one_long_line_is_read_once(tmp_path):
    """A file that is one line of 200 KB, cut in 100 partitions: the first partition reads it, the others find no
    line start in their range and read nothing past it (no quadratic re-reading)."""
    path = tmp_path / "one.txt"
    path.write_bytes(b"w " * 100_000 + b"\n")
    corpus = Corpus((path,), unit="paragraph")
    parts = corpus.partitions(2000)
    assert len(parts) == 101
    got = [list(corpus.read_partition(p)) for p in parts]
    assert got[0] == ["w " * 100_000] and not any(got[1:])


@pytest.mark.parametrize("unit", ["line", "paragraph", "file"])
def test_invalid_utf8_names_the_line_in_every_unit(tmp_path, unit):
    path = tmp_path / "bad.txt"
    # a chunk boundary of the whole-file decoder (1 MiB) lies inside the file: 200,000 lines of 6 bytes are
    # 1,200,000 bytes, then "\xff" on line 200,001 at byte offset 1,200,000
    path.write_bytes(b"word.\n" * 200_000 + b"\xff\n")
    with pytest.raises(CorpusError, match=r"bad\.txt:200001: invalid UTF-8 at byte offset 1200000 "):
        list(Corpus((path,), unit=unit))
