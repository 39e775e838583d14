"""Rules of the test suite itself (tests/conftest.py): missing test data is a skip on a developer's machine and a
failure in CI."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"

PROGRAM = '''
import pytest

def test_data_missing():
    pytest.skip("missing test data: the fixture x.model")

def test_other_reason():
    pytest.skip("headless Chromium is not installed")
'''


def _run(tmp_path: Path, ci: str | None) -> subprocess.CompletedProcess:
    shutil.copy(CONFTEST, tmp_path / "conftest.py")
    (tmp_path / "test_example.py").write_text(PROGRAM, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rsf", "-p", "no:cacheprovider", str(tmp_path)],
                          capture_output=True, text=True, env=env, cwd=tmp_path)


def test_missing_test_data_fails_under_ci_and_skips_elsewhere(tmp_path):
    ci = _run(tmp_path, "true")
    assert ci.returncode == 1, ci.stdout
    assert "1 failed, 1 skipped" in ci.stdout
    assert "FAILED test_example.py::test_data_missing - missing test data: the fixture x.model (CI=true" in ci.stdout
    local = _run(tmp_path, None)
    assert local.returncode == 0 and "2 skipped" in local.stdout, local.stdout
