"""Importing tokembed, building the registry, ``tokembed --help`` and ``tokembed plugins`` load neither numba nor
torch: plugins import their implementations lazily (tiktoken's idea: check it in a fresh interpreter)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

HEAVY = ("numba", "torch")

REPORT = textwrap.dedent("""
    import json, sys
    heavy = sorted({name.split(".")[0] for name in sys.modules} & {"numba", "torch"})
    sys.__stdout__.write("\\nHEAVY=" + json.dumps(heavy) + "\\n")
""")


def heavy_modules_after(code: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code) + REPORT], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    line = [ln for ln in done.stdout.splitlines() if ln.startswith("HEAVY=")][-1]
    return json.loads(line[len("HEAVY="):])


def test_the_probe_sees_heavy_imports():
    # the check can fail: importing numba directly is reported
    assert heavy_modules_after("import numba") == ["numba"]


def test_import_and_build_registry_stay_light():
    assert heavy_modules_after("""
        import tokembed
        reg = tokembed.build_registry()
        assert reg.all(), "no component registered"
    """) == []


def test_cli_help_stays_light():
    assert heavy_modules_after("""
        from tokembed.cli import main
        try:
            main(["--help"])
        except SystemExit as exc:
            assert exc.code == 0
    """) == []


@pytest.mark.parametrize("argv", [["plugins"], ["plugins", "--json"]])
def test_cli_plugins_stays_light(argv):
    assert heavy_modules_after(f"""
        from tokembed.cli import main
        assert main({argv!r}) == 0
    """) == []


def test_testing_module_stays_light():
    # third parties import the contract suite in their test modules; it must not pull in pytest either
    assert heavy_modules_after("""
        import sys
        import tokembed.testing
        assert "pytest" not in sys.modules
    """) == []
