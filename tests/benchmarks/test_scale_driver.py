"""The driver of benchmarks/scale.py: sizes, how a child's end is classified (ok, out of memory under prlimit,
stopped, failed) and the table's cells, projections included. Never a timing: the children here are tiny."""

from __future__ import annotations

import json
import shutil
import sys

import pytest

from benchmarks import scale

needs_prlimit = pytest.mark.skipif(shutil.which("prlimit") is None, reason="prlimit (util-linux) is not installed")


@pytest.mark.parametrize("text, nbytes, label", [
    ("20MB", 20_000_000, "20MB"), ("1GB", 10 ** 9, "1GB"), ("2.5gb", 2_500_000_000, "2.5GB"), ("10G", 10 ** 10, "10GB"),
])
def test_sizes(text, nbytes, label):
    assert scale.parse_size(text) == nbytes
    assert scale.size_label(text) == label


def test_a_size_in_other_units_is_refused():
    with pytest.raises(SystemExit, match="20MB, 1GB or 2.5GB"):
        scale.parse_size("3TB")


def test_counts():
    assert scale.parse_count("10M") == 10_000_000
    assert scale.parse_count("0") == 0
    assert scale.parse_count("2.5k") == 2_500


def _run(tmp_path, code: str, **kw) -> dict:
    return scale.run_child([sys.executable, "-c", code], detail=tmp_path / "d.json", log=lambda *_: None, **kw)


@needs_prlimit
def test_a_child_that_allocates_past_the_limit_is_out_of_memory_not_a_crash(tmp_path):
    # 400 MB of bytes under an address-space limit of 300 MB: Python raises MemoryError in the child only
    res = _run(tmp_path, "x = bytearray(400_000_000)", limit=300_000_000, timeout=None)
    assert res["status"] == "oom"
    assert "MemoryError" in res["stderr_tail"]
    assert scale.describe({**res, "limit_bytes": 300_000_000}).startswith("out of memory at 0.3 GB limit")


def test_the_peak_rss_is_the_childs_own(tmp_path):
    # Measured from a small fresh driver, as `python -m benchmarks.scale` runs: a child's ru_maxrss carries the
    # high-water mark of the process that spawned it through exec, and pytest's own is hundreds of MB. The second
    # child runs after a larger one: its own peak, not the max over the driver's children.
    import subprocess
    from pathlib import Path

    code = ("import json, sys; from pathlib import Path; from benchmarks import scale\n"
            "def peak(c): return scale.run_child([sys.executable, '-c', c], limit=None, timeout=None, "
            "detail=Path(sys.argv[1]) / 'd.json', log=lambda *_: None)['peak_rss_mb']\n"
            "print(json.dumps([peak('x = bytearray(400_000_000)'), peak('pass')]))")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[2])
    assert proc.returncode == 0, proc.stderr[-2000:]
    big, small = json.loads(proc.stdout.strip().splitlines()[-1])
    assert big >= 400  # the 400 MB the child touched
    assert small < 100


def test_a_child_that_fails_otherwise_is_failed_with_its_message(tmp_path):
    res = _run(tmp_path, "raise SystemExit('bad input')", limit=None, timeout=None)
    assert res["status"] == "failed"
    assert res["returncode"] == 1 and "bad input" in res["stderr_tail"]


def test_a_child_past_the_timeout_is_stopped(tmp_path):
    res = _run(tmp_path, "import time; time.sleep(60)", limit=None, timeout=0.5)
    assert res["status"] == "stopped"
    assert res["wall_s"] < 5


def test_the_detail_the_child_writes_is_kept(tmp_path):
    code = ("import json, os; open(os.environ['TOKEMBED_SCALE_DETAIL'], 'w').write(json.dumps({'tokens': 7}))")
    assert _run(tmp_path, code, limit=None, timeout=None)["detail"] == {"tokens": 7}


def _result(tmp_path, step, size, **values):
    folder = tmp_path / "results" / size
    folder.mkdir(parents=True, exist_ok=True)
    res = {"step": step, "size": size, "status": "ok", "returncode": 0, "peak_rss_mb": 100.0, "limit_bytes": None,
           **values}
    (folder / f"{step}.json").write_text(json.dumps(res), encoding="utf-8")


def test_the_table_projects_a_missing_10gb_cell_from_1_and_2_5gb(tmp_path):
    _result(tmp_path, "hf-bpe", "1GB", wall_s=10.0, peak_rss_mb=100.0, work_bytes=10 ** 9, mb_per_s=100.0)
    _result(tmp_path, "hf-bpe", "2.5GB", wall_s=25.0, peak_rss_mb=250.0, work_bytes=2_500_000_000, mb_per_s=100.0,
            limit_bytes=500_000_000)
    _result(tmp_path, "spm-cap0", "1GB", status="oom", wall_s=3.0, limit_bytes=4 * 10 ** 9, work_bytes=10 ** 9)
    table = scale.render_table(tmp_path, ["1GB", "2.5GB", "10GB"])
    row = next(line for line in table.splitlines() if "`hf-bpe`" in line)
    # linear in the bytes: 10 + (25 - 10) * (10 - 1) / (2.5 - 1) = 100 s; 100 + 150 * 6 = 1,000 MB, over 0.5 GB
    assert row.endswith("| 10.0 s, 100.0 MB/s, 100 MB | 25.0 s, 100.0 MB/s, 250 MB | "
                        "*projected: ~100.0 s, ~1,000 MB; over the 0.5 GB limit* |")
    spm = next(line for line in table.splitlines() if "`spm-cap0`" in line)
    assert "out of memory at 4 GB limit (after 3.0 s) | not run | not run |" in spm
    assert "`bpe`" not in table  # a step without any result has no row


def test_two_runs_stopped_at_the_same_time_project_their_plateau_only(tmp_path):
    # the in-memory word2vec "before", stopped after 240 s at 1 and 2.5 GB: 1,600 + (4,000 - 1,600) * 6 = 16,000 MB
    flat = [[t, 1200.0] for t in range(2, 240, 2)]
    _result(tmp_path, "w2v-in-memory", "1GB", status="stopped", wall_s=240.1, peak_rss_mb=1600.0, timeout_s=240,
            work_bytes=10 ** 9, rss_samples=flat)
    _result(tmp_path, "w2v-in-memory", "2.5GB", status="stopped", wall_s=240.3, peak_rss_mb=4000.0, timeout_s=240,
            work_bytes=2_500_000_000, rss_samples=flat)
    _result(tmp_path, "gensim-w2v", "1GB", status="stopped", wall_s=240.0, timeout_s=240, work_bytes=10 ** 9,
            rss_samples=flat)
    _result(tmp_path, "gensim-w2v", "2.5GB", status="stopped", wall_s=300.0, timeout_s=300,  # not comparable
            work_bytes=2_500_000_000, rss_samples=flat)
    growing = [[t, 10.0 * t] for t in range(2, 240, 2)]  # stopped while still growing: no plateau to project
    _result(tmp_path, "hf-bpe", "1GB", status="stopped", wall_s=240.0, timeout_s=240, work_bytes=10 ** 9,
            rss_samples=growing)
    _result(tmp_path, "hf-bpe", "2.5GB", status="stopped", wall_s=240.0, timeout_s=240, work_bytes=2_500_000_000,
            rss_samples=growing)
    # a token-budget run does the same work at every size (work_bytes None): nothing to project
    _result(tmp_path, "gensim-w2v-20M", "1GB", wall_s=30.0, work_bytes=None)
    _result(tmp_path, "gensim-w2v-20M", "2.5GB", wall_s=31.0, work_bytes=None)
    table = scale.render_table(tmp_path, ["1GB", "2.5GB", "10GB"])
    row = next(line for line in table.splitlines() if "`w2v-in-memory`" in line)
    assert row.endswith("| *projected: peak RSS ~16,000 MB* |")
    assert next(line for line in table.splitlines() if "`gensim-w2v`" in line).endswith("| not run |")
    assert next(line for line in table.splitlines() if "`gensim-w2v-20M`" in line).endswith("| not run |")
    assert next(line for line in table.splitlines() if "`hf-bpe`" in line).endswith("| not run |")


def test_the_table_names_budget_variants_and_other_caps(tmp_path):
    for name in ("word2vec-50M", "word2vec-5M", "spm-cap5M"):
        _result(tmp_path, name, "1GB", wall_s=1.0, work_bytes=None)
    rows = [line.split(" | ")[0] for line in scale.render_table(tmp_path, ["1GB"]).splitlines()[2:-1]]
    assert rows == ["| word2vec, mapped encoded folder, first 5M tokens (`word2vec-5M`)",
                    "| word2vec, mapped encoded folder, first 50M tokens (`word2vec-50M`)", "| spm-cap5M (`spm-cap5M`)"]


def test_a_recorded_step_is_not_run_again_but_a_failed_one_is(tmp_path):
    import argparse

    args = argparse.Namespace(data=tmp_path, force=False, limit_gb=0, timeout=None)
    fail = [sys.executable, "-c", "raise SystemExit(2)"]
    first = scale.record(args, "hf-bpe", "1GB", fail, work_bytes=None, log=lambda *_: None)
    assert first["status"] == "failed"
    ok = [sys.executable, "-c", "pass"]
    assert scale.record(args, "hf-bpe", "1GB", ok, work_bytes=10 ** 6, log=lambda *_: None)["status"] == "ok"
    # now recorded: the failing command is not run again (the ok result stays) unless --force
    assert scale.record(args, "hf-bpe", "1GB", fail, work_bytes=None, log=lambda *_: None)["status"] == "ok"
    args.force = True
    assert scale.record(args, "hf-bpe", "1GB", fail, work_bytes=None, log=lambda *_: None)["status"] == "failed"
