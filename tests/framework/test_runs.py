"""The run folder's lock against concurrent runs into one output folder, stale locks, and the clean-up of an
earlier failed run's ``<out>.incomplete`` (issue 12, item 6)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import pytest

from tokembed.errors import TokembedError
from tokembed.runs import RunFolder, lock_path


def _write(name: str, text: str = "x"):
    def work(folder):
        (folder / name).write_text(text, encoding="utf-8")
        return name
    return work


HOLDER = """
import sys, time
from pathlib import Path
from tokembed.runs import RunFolder

def work(folder):
    (folder / "first.txt").write_text("first run", encoding="utf-8")
    Path(sys.argv[2]).write_text("started", encoding="utf-8")
    # hold the lock until the test says so, not for a fixed time (a loaded machine may be slower than any)
    deadline = time.monotonic() + 120
    while not Path(sys.argv[3]).exists() and time.monotonic() < deadline:
        time.sleep(0.02)

RunFolder(Path(sys.argv[1])).write(work)
"""


def test_a_second_run_into_the_same_folder_fails_at_once_and_the_first_keeps_its_results(tmp_path):
    out, flag, release = tmp_path / "out", tmp_path / "started", tmp_path / "release"
    first = subprocess.Popen([sys.executable, "-c", HOLDER, str(out), str(flag), str(release)])
    try:
        deadline = time.monotonic() + 60
        while not flag.exists():
            assert first.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        with pytest.raises(TokembedError, match=rf"another tokembed run \(pid {first.pid}.*is writing"):
            RunFolder(out)
    finally:
        release.write_text("done", encoding="utf-8")
        assert first.wait(60) == 0
    # was: both exited 0 and the first run's files vanished
    assert (out / "first.txt").read_text(encoding="utf-8") == "first run"
    assert not lock_path(out).exists()
    assert RunFolder(out).write(_write("second.txt")) == "second.txt"  # the lock is free again


def test_a_lock_held_in_this_process_blocks_and_is_released_after_write(tmp_path):
    out = tmp_path / "out"
    holder = RunFolder(out)
    assert json.loads(lock_path(out).read_text(encoding="utf-8"))["pid"] == os.getpid()
    with pytest.raises(TokembedError, match="is writing this folder"):
        RunFolder(out)
    holder.write(_write("a.txt"))
    assert not lock_path(out).exists()
    with pytest.raises(TokembedError, match="boom"):
        RunFolder(out).write(lambda folder: (_ for _ in ()).throw(TokembedError("boom")))
    assert not lock_path(out).exists()  # a failed run releases it too


def test_a_stale_lock_of_a_dead_process_is_taken_over(tmp_path):
    out = tmp_path / "out"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    lock_path(out).parent.mkdir(parents=True, exist_ok=True)
    lock_path(out).write_text(json.dumps({"pid": dead.pid, "host": socket.gethostname(), "started": 1.0}),
                              encoding="utf-8")
    assert RunFolder(out).write(_write("a.txt")) == "a.txt"
    assert (out / "a.txt").exists() and not lock_path(out).exists()


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="process start times need /proc")
def test_a_lock_whose_pid_was_reused_is_stale(tmp_path):
    out = tmp_path / "out"
    lock_path(out).parent.mkdir(parents=True, exist_ok=True)
    # our own pid is alive, but the process that wrote the lock started at another time
    lock_path(out).write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "started": 1.0,
                                          "process_start": "1"}), encoding="utf-8")
    RunFolder(out).write(_write("a.txt"))


def test_a_lock_of_another_host_is_not_judged_and_the_message_says_what_to_do(tmp_path):
    out = tmp_path / "out"
    lock_path(out).parent.mkdir(parents=True, exist_ok=True)
    lock_path(out).write_text(json.dumps({"pid": 1, "host": "elsewhere", "started": 1.0}), encoding="utf-8")
    with pytest.raises(TokembedError, match=r"pid 1 on elsewhere.*delete .*\.out\.lock"):
        RunFolder(out)


def test_a_successful_run_removes_its_own_earlier_incomplete_folder(tmp_path):
    out = tmp_path / "out"
    incomplete = tmp_path / "out.incomplete"

    def fail(folder):
        (folder / "partial.txt").write_text("half", encoding="utf-8")
        raise TokembedError("training failed")

    with pytest.raises(TokembedError, match="out.incomplete"):
        RunFolder(out).write(fail)
    assert (incomplete / "partial.txt").exists()
    RunFolder(out).write(_write("done.txt"))
    assert (out / "done.txt").exists() and not incomplete.exists()
    # one the user put files into is not the run's to delete
    with pytest.raises(TokembedError):
        RunFolder(out).write(fail)
    (incomplete / "notes.md").write_text("mine", encoding="utf-8")
    RunFolder(out).write(_write("done.txt"))
    assert (incomplete / "notes.md").exists()


def test_an_encoded_corpus_and_a_run_do_not_replace_each_other(tmp_path):
    # `tokembed encode runs/q/bpe8k.tokembed.json corpus.txt --out runs/q` deleted the whole run (every trained
    # component, the tokenizer it had just read included) to write the encoded corpus there
    run, enc = tmp_path / "run", tmp_path / "enc"
    RunFolder(run).write(_write("bpe8k.tokembed.json"))
    with pytest.raises(TokembedError, match="holds the output of tokembed run or compare .* which tokembed encode "
                                            "would delete"):
        RunFolder(run, kind="encode")
    assert (run / "bpe8k.tokembed.json").exists()
    RunFolder(enc, kind="encode").write(_write("encoded.json"))
    with pytest.raises(TokembedError, match="holds a corpus encoded by tokembed encode, which this run would delete"):
        RunFolder(enc)
    # each kind still replaces its own earlier output
    RunFolder(run).write(_write("words.tokembed.json"))
    RunFolder(enc, kind="encode").write(_write("encoded.json", "again"))
    assert sorted(p.name for p in run.iterdir() if not p.name.startswith(".")) == ["words.tokembed.json"]
    assert (enc / "encoded.json").read_text(encoding="utf-8") == "again"


def test_out_of_memory_inside_a_stage_is_located_at_it():
    from types import SimpleNamespace

    import numpy as np
    import pytest

    from tokembed.errors import TokembedError
    from tokembed.runs import stage

    spec = SimpleNamespace(kind="embedder", label="ft", location="r.yaml:7:3")
    with pytest.raises(TokembedError) as info:
        with stage(spec):
            np.empty(1 << 55, dtype=np.uint8)  # 32 PiB: numpy raises its MemoryError subclass at once
    msg = str(info.value)
    assert msg.startswith("r.yaml:7:3: embedders.ft: out of memory: Unable to allocate") and "vector_size" in msg
