"""One direction of imports in the core: the import-linter contracts of pyproject.toml, and no import cycle at all.

Lazy imports inside functions count (grimp, which import-linter uses, reads every import statement)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

grimp = pytest.importorskip("grimp", reason="import-linter (the test extra) is not installed")


def test_the_layer_contracts_are_kept():
    script = Path(sys.executable).with_name("lint-imports")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "importlinter.cli"]
    done = subprocess.run([*command, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_no_module_of_the_core_is_in_an_import_cycle():
    graph = grimp.build_graph("tokembed")
    cycles = []
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back:
                cycles.append(" -> ".join((importer, *back)))
    assert not cycles, "import cycles:\n" + "\n".join(cycles)
