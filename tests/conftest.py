"""Shared test configuration: the ``--run-network`` switch, missing test data failing under CI, and a factory of
fake installed distributions."""

from __future__ import annotations

import importlib
import os
import sys
import textwrap
from pathlib import Path

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-network", action="store_true", default=False,
        help="run the tests marked `network` (they reach the package registries)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-network"):
        return
    skip = pytest.mark.skip(reason="needs the network: pass --run-network")
    for item in items:
        if "network" in item.keywords:
            item.add_marker(skip)


#: A skip whose reason starts with this is missing data the suite is meant to have (a shipped fixture, a file of a
#: test-extra package): a skip on a developer's machine, a failure in CI (``CI=true``), where it must never pass
#: unnoticed.
MISSING_DATA = "missing test data: "


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    report = outcome.get_result()
    if not report.skipped or os.environ.get("CI", "").lower() not in ("true", "1"):
        return
    reason = str(call.excinfo.value) if call.excinfo is not None else ""
    if reason.startswith(MISSING_DATA):
        report.outcome = "failed"
        report.longrepr = f"{reason} (CI=true: missing test data is a failure, not a skip)"


class FakeDists:
    """Writes ``NAME-VERSION.dist-info`` folders (METADATA + entry_points.txt) and plugin modules into a folder put
    on ``sys.path``, so that ``importlib.metadata`` sees them as installed distributions."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
        self.tmp_path = tmp_path
        self.monkeypatch = monkeypatch
        self.roots: list[Path] = []
        self.modules: set[str] = set()

    def root(self, label: str = "site") -> Path:
        """A folder on sys.path (created and prepended on first use)."""
        path = self.tmp_path / label
        if path not in self.roots:
            path.mkdir(parents=True, exist_ok=True)
            self.monkeypatch.syspath_prepend(str(path))
            self.roots.append(path)
        return path

    def module(self, name: str, source: str, *, site: str = "site") -> Path:
        """Write module ``name`` (dedented ``source``) into ``site``."""
        path = self.root(site) / f"{name}.py"
        path.write_text(textwrap.dedent(source), encoding="utf-8")
        self.modules.add(name)
        importlib.invalidate_caches()
        return path

    def dist(self, name: str, entry_points: dict[str, str], *, version: str = "1.0", site: str = "site") -> Path:
        """Write a ``.dist-info`` for distribution ``name`` with entry points ``{ep_name: target}`` in group
        ``tokembed``."""
        info = self.root(site) / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8")
        lines = ["[tokembed]", *(f"{k} = {v}" for k, v in entry_points.items())]
        (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        importlib.invalidate_caches()
        return info

    def cleanup(self) -> None:
        for name in list(sys.modules):
            if name.split(".")[0] in self.modules:
                del sys.modules[name]


@pytest.fixture
def fake_dists(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Factory of fake installed distributions; plugin switches in the environment are cleared for the test."""
    monkeypatch.delenv("TOKEMBED_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    monkeypatch.delenv("TOKEMBED_PLUGINS", raising=False)
    fakes = FakeDists(tmp_path, monkeypatch)
    yield fakes
    fakes.cleanup()
