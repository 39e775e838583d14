"""One direction of imports, over the core and the plugins: the import-linter contracts of pyproject.toml, no
plugin importing a private core module, and no import cycle at all.

Under the editable install ``tokembed`` is ``framework/`` and ``tokembed.plugins`` is found by a finder that
import-linter's graph builder (grimp) cannot see, so it would check the core only. These tests lay the working tree
out as the wheel lays it out (a temporary ``tokembed/`` whose entries are symlinks to ``framework/``'s, plus
``tokembed/plugins`` -> ``plugins/``) and put that folder first on ``PYTHONPATH``: an edit to a plugin is seen at
once, without reinstalling. Lazy imports inside functions count (grimp reads every import statement)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

grimp = pytest.importorskip("grimp", reason="import-linter (the test extra) is not installed")

#: Run in a subprocess whose PYTHONPATH starts with the wheel layout: the direct imports inside ``tokembed``.
_EDGES = """
import json, grimp, tokembed
graph = grimp.build_graph("tokembed")
edges = sorted((m, i) for m in graph.modules for i in graph.find_modules_directly_imported_by(m))
print(json.dumps({"file": tokembed.__file__, "edges": edges}))
"""


@pytest.fixture(scope="module")
def wheel_layout(tmp_path_factory) -> Path:
    """A folder holding ``tokembed/`` as the wheel has it: framework/'s entries and ``plugins/``, as symlinks."""
    top = tmp_path_factory.mktemp("wheel-layout")
    package = top / "tokembed"
    package.mkdir()
    for entry in (ROOT / "framework").iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    assert not (ROOT / "framework" / "plugins").exists(), "framework/plugins would hide plugins/ in the wheel"
    (package / "plugins").symlink_to(ROOT / "plugins")
    return top


def _env(layout: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(layout), *filter(None, [env.get("PYTHONPATH")])])
    return env


@pytest.fixture(scope="module")
def edges(wheel_layout) -> list[tuple[str, str]]:
    done = subprocess.run([sys.executable, "-c", _EDGES], cwd=wheel_layout, env=_env(wheel_layout),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    assert out["file"] == str(wheel_layout / "tokembed" / "__init__.py")  # the layout, not the editable install
    found = [tuple(e) for e in out["edges"]]
    # the graph holds the plugins (the point of the layout): bpe's modules import its own model
    assert ("tokembed.plugins.bpe.tokenizer", "tokembed.plugins.bpe.model") in found
    return found


def test_the_layer_contracts_are_kept(wheel_layout):
    script = Path(sys.executable).with_name("lint-imports")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "importlinter.cli"]
    done = subprocess.run([*command, "--no-cache", "--config", str(ROOT / "pyproject.toml")], cwd=wheel_layout,
                          env=_env(wheel_layout), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout
    # the plugin contracts ran over the plugins (a contract over modules that are absent would not be "KEPT")
    assert "plugins: independent of each other" in done.stdout


def _private(module: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in module.split(".")[1:])


def test_no_plugin_imports_a_private_module_of_the_core(edges):
    bad = [f"{m} -> {i}" for m, i in edges
           if m.startswith("tokembed.plugins.") and not i.startswith("tokembed.plugins") and _private(i)]
    assert not bad, ("plugins import private core modules (make the names public in the core instead):\n"
                     + "\n".join(bad))


def test_the_private_module_rule_sees_a_private_module():
    # the rule's own test: tokembed.text._base is private, tokembed.text and tokembed.plugins._subword are read as
    # a core module that is public and a plugin-side module
    assert _private("tokembed.text._base") and _private("tokembed._version")
    assert not _private("tokembed.text") and not _private("tokembed.plugins.bpe.model")


def test_no_module_is_in_an_import_cycle(edges):
    imports: dict[str, set[str]] = {}
    for m, i in edges:
        imports.setdefault(m, set()).add(i)
    cycles = []
    for importer in sorted(imports):
        for imported in sorted(imports[importer]):
            back = _path(imports, imported, importer)
            if back:
                cycles.append(" -> ".join((importer, *back)))
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def _path(imports: dict[str, set[str]], start: str, goal: str) -> list[str] | None:
    """A chain of direct imports from ``start`` to ``goal`` (breadth first), or None."""
    seen, frontier = {start: None}, [start]
    while frontier:
        nxt = []
        for m in frontier:
            if m == goal:
                chain = [m]
                while seen[chain[-1]] is not None:
                    chain.append(seen[chain[-1]])
                return chain[::-1]
            for i in sorted(imports.get(m, ())):
                if i not in seen:
                    seen[i] = m
                    nxt.append(i)
        frontier = nxt
    return None
