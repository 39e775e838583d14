"""``tokembed encode`` on the Dask engine: each partition encoded by a worker, the parts appended in order, the
same folder byte for byte as encoding in one process (skipped without the dask extra)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")

from engine_helpers import local_cluster  # noqa: E402
from tokembed.cli import main  # noqa: E402
from tokembed.corpus import read_documents  # noqa: E402
from tokembed.encode import encode_corpus, on_engine  # noqa: E402
from tokembed.engine import open_engine  # noqa: E402
from tokembed.errors import CorpusError  # noqa: E402
from tokembed.plugins.bpe.tokenizer import BPETokenizer  # noqa: E402
from tokembed.testing import sample_corpus  # noqa: E402

pytestmark = pytest.mark.slow

# CJK, emoji, a combining mark, a long line, blank and whitespace-only lines (not documents)
LINES = ["The whale, the whale!", "", "   ", "鯨は海にいる。", "🐋 and 🐳", "cafe\u0301", "ahab " * 3000,
         "Call me Ishmael."]


@pytest.fixture(scope="module")
def cluster():
    with local_cluster() as cl:
        yield cl


@pytest.fixture(scope="module")
def gpt():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return BPETokenizer(vocab_size=400, byte_level=True, special_tokens=["<|endoftext|>"]).fit(sample_corpus())


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory):
    # about 60 KB: many partitions of 2 KiB, some inside the 15 KB line (empty ones)
    path = tmp_path_factory.mktemp("encode-dask") / "corpus.txt"
    lines = [f"{line} {i}" if line.strip() else line for i in range(4) for line in LINES]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("fmt, eot_id", [("tokembed", None), ("nanogpt", None), ("megatron", None),
                                         ("megatron", 0)])
def test_the_dask_engine_writes_the_same_folder_as_one_process(cluster, gpt, corpus_file, tmp_path, monkeypatch,
                                                                fmt, eot_id):
    import tokembed.encode

    corpus = read_documents(corpus_file)
    local = encode_corpus(gpt, corpus, tmp_path / "local", format=fmt, eot_id=eot_id, corpus="c", progress=False)
    monkeypatch.setattr(tokembed.encode, "_APPEND_DOCS", 2)  # parts appended two documents at a time
    with open_engine("dask", address=cluster.scheduler_address, workers=2, partition_mb=0.002) as engine:
        parts = engine.partitions(corpus)
        # 2 KiB ranges of a file whose 15 KB lines span several: some partitions own no document
        assert len(parts) >= 8 and any(not list(corpus.read_partition(p)) for p in parts)
        dask = encode_corpus(gpt, corpus, tmp_path / "dask", format=fmt, eot_id=eot_id, corpus="c",
                             progress=False, map_partitions=on_engine(engine, corpus))
        assert engine.last_stats.partitions == len(parts)
    assert (dask.documents, dask.tokens, dask.text_bytes) == (local.documents, local.tokens, local.text_bytes)
    assert _files(tmp_path / "dask") == _files(tmp_path / "local")  # ids, offsets, manifest: the same bytes


def test_the_command_encodes_on_a_cluster(cluster, gpt, corpus_file, tmp_path, capsys):
    gpt.save(tmp_path / "gpt.tokembed.json")
    args = ["encode", str(tmp_path / "gpt.tokembed.json"), str(corpus_file), "-q"]
    assert main(args + ["--out", str(tmp_path / "local")]) == 0
    assert main(args + ["--out", str(tmp_path / "dask"), "--scheduler", cluster.scheduler_address,
                        "--partition-mb", "0.004"]) == 0
    assert "encoded 24 documents" in capsys.readouterr().out  # 4 copies of 6 non-blank lines
    assert _files(tmp_path / "dask") == _files(tmp_path / "local")


def test_a_relative_corpus_path_is_found_by_workers_started_elsewhere(cluster, gpt, corpus_file, tmp_path,
                                                                      monkeypatch):
    # the cluster's workers were started in the test session's folder; the command runs in the corpus's
    gpt.save(tmp_path / "gpt.tokembed.json")
    monkeypatch.chdir(corpus_file.parent)
    assert main(["encode", str(tmp_path / "gpt.tokembed.json"), corpus_file.name, "-q", "--out",
                 str(tmp_path / "dask"), "--scheduler", cluster.scheduler_address, "--partition-mb", "0.004"]) == 0
    assert main(["encode", str(tmp_path / "gpt.tokembed.json"), corpus_file.name, "-q", "--out",
                 str(tmp_path / "local")]) == 0
    assert _files(tmp_path / "dask") == _files(tmp_path / "local")


def test_a_bad_partition_names_itself_and_leaves_no_output(cluster, gpt, tmp_path):
    bad = tmp_path / "bad.txt"
    # past the first batch (16,384 documents), which the client reads before anything is made
    bad.write_bytes(b"good line\n" * 17000 + b"broken \xff byte\n" + b"good line\n" * 10)
    corpus = read_documents(bad)
    with open_engine("dask", address=cluster.scheduler_address, workers=2, partition_mb=0.02) as engine:
        with pytest.raises(CorpusError, match=r"partition \d+/\d+ .*invalid UTF-8"):
            encode_corpus(gpt, corpus, tmp_path / "out", progress=False,
                          map_partitions=on_engine(engine, corpus))
    assert not (tmp_path / "out").exists()
    kept = tmp_path / "out.incomplete"  # as any failed encode: no manifest; and the parts were removed
    assert kept.is_dir() and not (kept / "encoded.json").exists() and not (kept / ".parts").exists()


@pytest.mark.parametrize("flags, message", [
    (["--partition-mb", "4"], "--partition-mb applies to --engine dask"),
    (["--workers", "3"], "--workers applies to --engine dask"),
    (["--engine", "local", "--scheduler", "tcp://127.0.0.1:8786"], "--scheduler needs --engine dask"),
    (["--scheduler", "http://127.0.0.1:8786"], "--scheduler http://127.0.0.1:8786: "),
    (["--scheduler", "tcp://127.0.0.1:1"], "tcp://127.0.0.1:1"),  # nothing listens: refused before any folder
    (["--engine", "dask", "--partition-mb", "0"], "--partition-mb must be a finite number of MiB >= 0.001"),
    (["--engine", "dask", "--workers", "0"], "--workers must be at least 1"),
])
def test_engine_options_are_checked_before_any_work(gpt, corpus_file, tmp_path, capsys, flags, message):
    gpt.save(tmp_path / "gpt.tokembed.json")
    code = main(["encode", str(tmp_path / "gpt.tokembed.json"), str(corpus_file), "--out", str(tmp_path / "o"),
                 "-q", *flags])
    assert code != 0 and message in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gpt.tokembed.json"]  # no o/, no o.incomplete/


def test_a_recipe_on_a_dask_engine_encodes_there(cluster, corpus_file, tmp_path):
    from tokembed.runner import run_recipe

    bpe = "{type: bpe, vocab_size: 400, byte_level: true, special_tokens: ['<|endoftext|>'], seed: 0, encode: true}"
    body = f"corpus: {{path: {corpus_file}}}\ntokenizers:\n  bpe: {bpe}\n"
    (tmp_path / "r.yaml").write_text(body, encoding="utf-8")
    (tmp_path / "d.yaml").write_text(body + f"engine: {{type: dask, address: {cluster.scheduler_address}, "
                                            "partition_mb: 0.004}\n", encoding="utf-8")
    run_recipe(tmp_path / "r.yaml", out=tmp_path / "local", quiet=True, metrics=False)
    run_recipe(tmp_path / "d.yaml", out=tmp_path / "dask", quiet=True, metrics=False)
    assert _files(tmp_path / "dask" / "bpe.encoded") == _files(tmp_path / "local" / "bpe.encoded")
    import json

    step = json.loads((tmp_path / "dask" / "timings.json").read_text())["encode corpus bpe (tokembed)"]
    assert step["engine"] == "dask" and step["partitions"] >= 8
