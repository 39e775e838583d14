"""Packaging: one fact in one place, and the derived places agree.

- our distribution's entry points == the ``plugins/`` folders (private ``_`` folders aside) == the ``plugin:``
  fields of ``registry.yaml`` == ``[project.entry-points.tokembed]`` in pyproject.toml;
- the components our distribution registers == the names ``registry.yaml`` lists per kind;
- the built wheel holds every source file, ``tokembed/registry.yaml`` as a real file, the samples and the entry
  points;
- nothing imports ``framework`` or ``plugins`` by those names (from the repository root that loads a second copy).
"""

from __future__ import annotations

import ast
import importlib.metadata as metadata
import inspect
import re
import shutil
import stat
import subprocess
import sys
import zipfile
from configparser import ConfigParser
from pathlib import Path

import pytest
import yaml

import tokembed
from tokembed.registry import KINDS, build_registry

ROOT = Path(__file__).resolve().parents[2]
SECTIONS = {"tokenizer": "tokenizers", "vectorizer": "vectorizers", "embedder": "embedders"}
REINSTALL = "the installed metadata is stale: re-run `pip install -e .` (make install-test)"


def pyproject() -> dict:
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def catalogue() -> dict:
    return yaml.safe_load((ROOT / "registry.yaml").read_text(encoding="utf-8"))


def plugin_folders() -> set[str]:
    return {p.name for p in (ROOT / "plugins").iterdir()
            if p.is_dir() and not p.name.startswith(("_", ".")) and p.name != "__pycache__"}


def declared_entry_points() -> dict[str, str]:
    return dict(pyproject()["project"]["entry-points"]["tokembed"])


def installed_entry_points() -> dict[str, str]:
    dist = metadata.distribution("tokembed")
    return {ep.name: ep.value for ep in dist.entry_points if ep.group == "tokembed"}


def catalogue_plugins() -> dict[str, str]:
    """component ``kind:name`` -> its ``plugin:`` field."""
    cat = catalogue()
    return {f"{kind}:{name}": entry["plugin"]
            for kind, section in SECTIONS.items() for name, entry in (cat.get(section) or {}).items()}


# -- entry points, folders, catalogue -------------------------------------------------------------------------------
def test_pyproject_entry_points_are_the_plugin_folders():
    declared = declared_entry_points()
    assert set(declared) == plugin_folders(), (
        "each folder of plugins/ (private _ folders aside) needs exactly one entry point in "
        "[project.entry-points.tokembed] of pyproject.toml, named after the folder"
    )
    assert declared == {name: f"tokembed.plugins.{name}" for name in declared}


def test_installed_entry_points_match_pyproject():
    assert installed_entry_points() == declared_entry_points(), REINSTALL


def test_catalogue_plugin_fields_are_the_plugin_folders():
    assert set(catalogue_plugins().values()) == plugin_folders(), (
        "every plugin folder registers at least one component listed in registry.yaml, and every `plugin:` "
        "there names a folder"
    )


def test_components_of_our_distribution_are_the_catalogue():
    reg = build_registry()
    ours = {f"{i.kind}:{i.name}": i.plugin.name for i in reg.all() if i.plugin.distribution == "tokembed"}
    assert ours == catalogue_plugins(), "registry.yaml must list exactly the components the built-ins register"
    assert not [f for f in reg.failures if f.plugin.distribution == "tokembed"]


def test_catalogue_entries_are_complete():
    cat = catalogue()
    assert set(cat) <= {*SECTIONS.values(), "presets"}
    for section in SECTIONS.values():
        for name, entry in (cat.get(section) or {}).items():
            assert set(entry) == {"plugin", "summary", "reference"}, f"{section}.{name}"
            assert all(isinstance(v, str) and v.strip() for v in entry.values()), f"{section}.{name}"


def test_presets_name_registered_types_and_real_parameters():
    reg = build_registry()
    for name, preset in (catalogue().get("presets") or {}).items():
        assert set(preset) <= {"kind", "type", "summary", "params"}, name
        cls = reg.get(preset["kind"], preset["type"])
        params = set(inspect.signature(cls.__init__).parameters) - {"self"}
        unknown = set(preset.get("params") or {}) - params
        assert not unknown, f"preset {name!r} sets parameters {sorted(unknown)} that {cls.__name__} does not take"


def test_the_catalogue_ships_as_a_symlink_to_the_root_file():
    link = ROOT / "framework" / "registry.yaml"
    assert link.is_symlink() and link.resolve() == (ROOT / "registry.yaml").resolve()
    from importlib import resources

    assert (resources.files("tokembed") / "registry.yaml").read_text(encoding="utf-8") == \
        (ROOT / "registry.yaml").read_text(encoding="utf-8")


# -- the wheel ------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    """Build the wheel once per session from a copy of the repository (setuptools' build/ folder would otherwise
    keep files of deleted modules, and two concurrent runs would share it)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    shutil.copytree(ROOT, src, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis", "runs",
        "tests", "benchmarks", "examples", "*.nbi", "*.nbc"))
    out = tmp / "dist"
    # Without build isolation when this environment's setuptools can build wheels by itself (>= 70.1 has
    # bdist_wheel); a fresh Python 3.11 venv has setuptools 65 and no `wheel`, so pip then builds in an isolated
    # environment from pyproject's [build-system] (a few seconds more, from the package index).
    flags = ["--no-build-isolation"] if _setuptools_builds_wheels() else []
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", *flags, "--quiet",
         "--disable-pip-version-check", "-w", str(out), str(src)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    [path] = out.glob("tokembed-*.whl")
    with zipfile.ZipFile(path) as zf:
        yield zf


def _setuptools_builds_wheels() -> bool:
    try:
        version = metadata.version("setuptools")
    except metadata.PackageNotFoundError:
        return False
    return tuple(int(x) for x in re.findall(r"\d+", version)[:2]) >= (70, 1)


def source_files() -> dict[str, Path]:
    """wheel path -> repository path of every source file that must ship."""
    out = {}
    for folder, package in (("framework", "tokembed"), ("plugins", "tokembed/plugins")):
        for path in (ROOT / folder).rglob("*.py"):
            rel = path.relative_to(ROOT / folder)
            if "__pycache__" not in rel.parts:
                out[f"{package}/{rel.as_posix()}"] = path
    return out


def test_wheel_holds_every_source_file(wheel):
    names = set(wheel.namelist())
    missing = sorted(set(source_files()) - names)
    assert not missing, (
        f"missing from the wheel: {missing}; a folder of .py files needs an __init__.py (setup.py finds packages)"
    )


def test_wheel_holds_every_plugin_package(wheel):
    names = set(wheel.namelist())
    for folder in plugin_folders():
        assert f"tokembed/plugins/{folder}/__init__.py" in names


def test_wheel_holds_the_catalogue_as_a_real_file(wheel):
    info = wheel.getinfo("tokembed/registry.yaml")
    mode = info.external_attr >> 16
    assert not stat.S_ISLNK(mode)
    assert wheel.read(info) == (ROOT / "registry.yaml").read_bytes()


def test_wheel_holds_the_samples(wheel):
    samples = sorted(p.name for p in (ROOT / "framework" / "samples").iterdir() if p.is_file())
    assert "moby-dick.txt.gz" in samples
    for name in samples:
        assert wheel.read(f"tokembed/samples/{name}") == (ROOT / "framework" / "samples" / name).read_bytes()


def test_wheel_entry_points(wheel):
    [name] = [n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt")]
    parser = ConfigParser(delimiters=("=",))
    parser.optionxform = str
    parser.read_string(wheel.read(name).decode("utf-8"))
    assert dict(parser["tokembed"]) == declared_entry_points()
    assert dict(parser["console_scripts"]) == {"tokembed": "tokembed.cli:main"}


def test_wheel_has_one_top_level_package_and_no_tests(wheel):
    tops = {n.split("/")[0] for n in wheel.namelist()}
    assert tops == {"tokembed", f"tokembed-{tokembed.__version__}.dist-info"}


# -- no imports of the folder names ---------------------------------------------------------------------------------
_BANNED = re.compile(r"^\s*(?:from|import)\s+(?:framework|plugins)\b", re.MULTILINE)


def _banned_name(name: str) -> bool:
    return name.split(".")[0] in ("framework", "plugins")


def banned_imports(source: str) -> list[int]:
    """Line numbers that import ``framework`` or ``plugins``: import statements (absolute) and
    ``import_module("...")`` calls; a file that does not parse is searched with a regex instead."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return sorted({source.count("\n", 0, m.start()) + 1 for m in _BANNED.finditer(source)})
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            hit = any(_banned_name(a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            hit = node.level == 0 and bool(node.module) and _banned_name(node.module)
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            arg = node.args[0] if node.args else None
            hit = (called in ("import_module", "__import__") and isinstance(arg, ast.Constant)
                   and isinstance(arg.value, str) and _banned_name(arg.value))
        else:
            continue
        if hit:
            lines.add(node.lineno)
    return sorted(lines)


@pytest.mark.parametrize(("source", "expected"), [
    ("import framework\n", [1]),
    ("import os, plugins.char\n", [1]),
    ("x = 1\nfrom framework.io import read_json\n", [2]),
    ("def f():\n    from plugins import char\n", [2]),
    ("importlib.import_module('framework.cli')\n", [1]),
    ("m = __import__('plugins')\n", [1]),
    ("from tokembed.plugins import char\nfrom . import framework\nimport frameworks\n", []),
    ('"""\nimport framework  (in a docstring)\n"""\n', []),
    ("def broken(:\n    import plugins\n", [2]),
])
def test_banned_import_detector(source, expected):
    assert banned_imports(source) == expected


def test_nothing_imports_the_folder_names():
    offenders = []
    for folder in ("framework", "plugins", "tests", "benchmarks", "examples"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            for line in banned_imports(path.read_text(encoding="utf-8", errors="replace")):
                offenders.append(f"{path.relative_to(ROOT)}:{line}")
    assert not offenders, f"import tokembed..., never framework/plugins: {offenders}"
