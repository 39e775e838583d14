"""The core commands of the command line: ``plugins``, ``--version``, ``--help``, and errors -> exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tokembed
from tokembed.cli import main

SCRIPT = Path(sys.executable).with_name("tokembed")


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"tokembed {tokembed.__version__}\n"


def test_console_script_help_and_version():
    assert SCRIPT.exists(), f"{SCRIPT} missing: the editable install provides the console script"
    done = subprocess.run([str(SCRIPT), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert done.stdout.startswith("usage: tokembed")
    for word in ("plugins", "run", "validate", "--version", "-p no:NAME"):
        assert word in done.stdout
    done = subprocess.run([str(SCRIPT), "--version"], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, f"tokembed {tokembed.__version__}\n")


def test_no_command_prints_help_and_exits_2(capsys):
    code, out, _ = run([], capsys)
    assert code == 2 and out.startswith("usage: tokembed")


def test_plugins_table(capsys):
    code, out, err = run(["plugins"], capsys)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].split() == ["name", "kind", "distribution", "version", "module"]
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert rows["char"] == ["char", "tokenizer", "tokembed", tokembed.__version__, "tokembed.plugins.char.tokenizer"]
    assert rows["reverse"] == ["reverse", "tokenizer", "tokembed-reverse", "0.1.0", "tokembed_reverse.tokenizer"]
    # one row per registered component and metric, columns aligned
    reg = tokembed.build_registry()
    assert len(lines) - 1 == len(reg.all()) + len(reg.metrics)
    assert rows["fertility"] == ["fertility", "metric", "tokembed", tokembed.__version__, "tokembed.metrics.builtin"]
    assert len({line.index("tokenizer") for line in lines[1:] if " tokenizer " in line}) == 1


def test_plugins_json_and_kind_filter(capsys):
    code, out, _ = run(["plugins", "--json", "--kind", "tokenizer"], capsys)
    assert code == 0
    data = json.loads(out)
    assert data["failures"] == []
    by_name = {row["name"]: row for row in data["components"]}
    assert by_name["char"] == {
        "name": "char", "kind": "tokenizer", "distribution": "tokembed", "version": tokembed.__version__,
        "plugin": "char", "module": "tokembed.plugins.char.tokenizer", "class": "CharTokenizer",
    }
    assert {row["kind"] for row in data["components"]} == {"tokenizer"}


def test_plugins_lists_the_metrics_with_their_distribution(fake_dists, capsys):
    fake_dists.module("fake_cli_metric", """
        from tokembed import hookimpl
        from tokembed.metrics import Metric

        class Longest(Metric):
            name = "longest_token"

        @hookimpl
        def tokembed_register_metrics():
            return [Longest]
    """)
    fake_dists.dist("fake-cli-metric", {"longest": "fake_cli_metric"}, version="2.1")
    code, out, _ = run(["plugins", "--kind", "metric", "--json"], capsys)
    assert code == 0
    rows = json.loads(out)["components"]
    assert {r["kind"] for r in rows} == {"metric"}
    names = [r["name"] for r in rows]
    assert names == sorted(names) and len(names) == len(tokembed.build_registry().metrics)
    by_name = {r["name"]: r for r in rows}
    assert by_name["longest_token"] == {"name": "longest_token", "kind": "metric", "distribution": "fake-cli-metric",
                                        "version": "2.1", "plugin": "longest", "module": "fake_cli_metric",
                                        "class": "Longest"}
    assert by_name["fertility"]["distribution"] == "tokembed" and by_name["fertility"]["plugin"] == "builtin_metrics"
    code, out, _ = run(["plugins", "--kind", "metric"], capsys)
    lines = out.splitlines()
    assert lines[0].split() == ["name", "kind", "distribution", "version", "module"]
    assert ["longest_token", "metric", "fake-cli-metric", "2.1", "fake_cli_metric"] in [x.split() for x in lines]
    assert all(x.split()[1] == "metric" for x in lines[1:])


def test_block_switch(capsys):
    code, out, _ = run(["-p", "no:char", "-p", "no:tokembed-reverse", "plugins", "--kind", "tokenizer"], capsys)
    assert code == 0
    names = [line.split()[0] for line in out.splitlines()[1:]]
    assert "char" not in names and "reverse" not in names


def test_bad_switch_is_a_user_error(capsys):
    code, out, err = run(["-p", "char", "plugins"], capsys)
    assert code == 2 and out == ""
    assert err == ("tokembed: error: -p char: only '-p no:NAME' (block a plugin by entry-point or distribution "
                   "name) is supported\n")


def test_failed_plugin_is_a_warning_not_an_error(fake_dists, capsys):
    fake_dists.module("fake_cli_broken", "raise ImportError('no libfoo')\n")
    fake_dists.dist("fake-cli-broken", {"broken": "fake_cli_broken"}, version="0.9")
    code, out, err = run(["plugins"], capsys)
    assert code == 0 and "char" in out
    assert err == ("warning: plugin 'broken' (fake-cli-broken 0.9, fake_cli_broken) failed: "
                   "import failed: ImportError: no libfoo\n")
    code, out, _ = run(["plugins", "--json"], capsys)
    assert json.loads(out)["failures"] == [{
        "plugin": "broken", "distribution": "fake-cli-broken", "version": "0.9", "target": "fake_cli_broken",
        "error": "import failed: ImportError: no libfoo",
    }]


def test_plugin_clash_exits_2_with_one_message_and_traceback_only_with_debug(fake_dists, capsys):
    fake_dists.module("fake_cli_clash", """
        from tokembed import Tokenizer, hookimpl

        class Clash(Tokenizer):
            name = "char"

        @hookimpl
        def tokembed_register_tokenizers():
            return [Clash]
    """)
    fake_dists.dist("fake-cli-clash", {"clash": "fake_cli_clash"})
    code, out, err = run(["plugins"], capsys)
    assert code == 2 and out == ""
    assert err.startswith("tokembed: error: tokenizer name 'char' is registered twice: by distribution tokembed")
    assert "fake-cli-clash" in err and "Traceback" not in err and err.count("\n") == 1
    code, _, err = run(["--debug", "plugins"], capsys)
    assert code == 2
    assert "Traceback (most recent call last)" in err and "PluginError" in err
    # the way out the message suggests
    code, out, _ = run(["-p", "no:clash", "plugins"], capsys)
    assert code == 0 and "tokembed.plugins.char.tokenizer" in out


def test_argparse_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["plugins", "--kind", "tokeniser"])
    assert exit_.value.code == 2
    assert "invalid choice: 'tokeniser'" in capsys.readouterr().err


def test_user_error_in_a_subprocess_exits_2():
    done = subprocess.run([str(SCRIPT), "-p", "oops", "plugins"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.startswith("tokembed: error: -p oops") and "Traceback" not in done.stderr


@pytest.mark.parametrize("unbuffered", [True, False])
def test_a_closed_pipe_ends_the_cli_quietly(unbuffered):
    """`tokembed plugins | head -1`: the reader is gone. Writing raises BrokenPipeError (unbuffered stdout) or the
    final flush at interpreter exit does (buffered); either way exit status 0 and nothing on stderr."""
    import os
    import subprocess
    import sys

    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader left before the first write: every write to the pipe fails with EPIPE
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    try:
        done = subprocess.run([sys.executable, "-m", "tokembed.cli", "plugins"], stdout=write_end,
                              stderr=subprocess.PIPE, text=True, env=env, timeout=120)
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (0, "")


def test_warmup_runs_the_independent_steps_then_the_components_in_parallel_processes(capsys):
    import importlib

    from tokembed.registry import build_registry

    for info in build_registry().all():  # every declared step names a module-level function
        for step in info.cls.warmup_shared():
            module, _, function = step.partition(":")
            assert callable(getattr(importlib.import_module(module), function)), step
    # a parallel kernel run in this process first (as earlier tests do) starts Numba's threading layer, after
    # which a forked child running one is terminated by Numba's OpenMP layer: warmup must not fork then
    from tokembed.cli import _numba_threads_started
    from tokembed.plugins.tfidf import _kernels

    _kernels.normalize_rows(np.array([0, 2], dtype=np.int64), np.array([3.0, 4.0]), False)
    assert _numba_threads_started()
    assert main(["warmup", "--jobs", "2"]) == 0
    out = capsys.readouterr().out
    assert "independent steps in" in out and "components in" in out and "with 2 processes" in out
    assert main(["warmup", "--jobs", "0"]) == 2
