"""docs/plugins.md cannot rot: every hook is documented with its exact signature (datasette's test), no heading
names a hook that does not exist, and the guide's Python examples run (Hugging Face tests its snippets)."""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path

import pytest

from tokembed import hookspecs

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "plugins.md"


def hook_specs(module=hookspecs) -> dict[str, list[str]]:
    """hook name -> argument names, for every function marked ``@hookspec`` in ``module``."""
    return {
        name: list(inspect.signature(fn).parameters)
        for name, fn in vars(module).items()
        if callable(fn) and hasattr(fn, "tokembed_spec")
    }


def signature_text(name: str, args: list[str]) -> str:
    return f"{name}({', '.join(args)})"


def heading_hooks(text: str) -> dict[str, str]:
    """Hook name -> the signature written in a Markdown heading ``### `name(args)` ``."""
    out = {}
    for m in re.finditer(r"^#{2,4}\s+`(tokembed_\w+)\(([^)]*)\)`\s*$", text, re.MULTILINE):
        out[m.group(1)] = f"{m.group(1)}({m.group(2)})"
    return out


def doc_problems(text: str, specs: dict[str, list[str]]) -> list[str]:
    """What the guide gets wrong about ``specs``: missing hooks, wrong signatures, undocumented arguments, and
    headings of hooks that do not exist."""
    problems = []
    documented = heading_hooks(text)
    for name, args in specs.items():
        expected = signature_text(name, args)
        if name not in documented:
            problems.append(f"hook {name} has no heading `### `{expected}``")
            continue
        if documented[name] != expected:
            problems.append(f"hook {name} is documented as {documented[name]}, the spec is {expected}")
        section = text.split(f"`{documented[name]}`", 1)[-1].split("\n## ", 1)[0].split("\n### ", 1)[0]
        for arg in args:
            if f"`{arg}`" not in section:
                problems.append(f"argument {arg!r} of hook {name} is not described (as `{arg}`) in its section")
    for name in documented:
        if name not in specs:
            problems.append(f"the guide documents {name}, which is not a hook")
    return problems


def test_hookspecs_are_found():
    specs = hook_specs()
    assert set(specs) >= {"tokembed_register_tokenizers", "tokembed_register_vectorizers",
                          "tokembed_register_embedders"}


def test_every_hook_is_documented_with_its_exact_signature():
    assert doc_problems(GUIDE.read_text(encoding="utf-8"), hook_specs()) == []


def _fake_specs():
    """A stand-in hookspecs module: one hook the guide has, one with an argument that it lacks."""
    import types

    import pluggy

    spec = pluggy.HookspecMarker("tokembed")
    module = types.ModuleType("fake_hookspecs")

    @spec
    def tokembed_register_tokenizers():
        pass

    @spec
    def tokembed_register_readers(config):
        pass

    def not_a_hook(x):
        pass

    module.tokembed_register_tokenizers = tokembed_register_tokenizers
    module.tokembed_register_readers = tokembed_register_readers
    module.not_a_hook = not_a_hook
    return module


def test_the_docs_check_fails_when_a_hook_or_argument_is_missing():
    specs = hook_specs(_fake_specs())
    assert specs == {"tokembed_register_tokenizers": [], "tokembed_register_readers": ["config"]}
    text = "## Hooks\n\n### `tokembed_register_tokenizers()`\n\nReturns classes.\n"
    assert doc_problems(text, specs) == ["hook tokembed_register_readers has no heading "
                                         "`### `tokembed_register_readers(config)``"]
    text += "\n### `tokembed_register_readers()`\n\nNo arguments described.\n"
    assert doc_problems(text, specs) == ["hook tokembed_register_readers is documented as "
                                         "tokembed_register_readers(), the spec is tokembed_register_readers(config)",
                                         "argument 'config' of hook tokembed_register_readers is not described "
                                         "(as `config`) in its section"]
    text = text.replace("readers()`\n\nNo arguments described.", "readers(config)`\n\n`config` is the settings.")
    assert doc_problems(text, specs) == []
    assert doc_problems(text + "\n### `tokembed_register_ghosts()`\n", specs) == [
        "the guide documents tokembed_register_ghosts, which is not a hook"]


# -- the guide's examples run ---------------------------------------------------------------------------------------
def code_blocks(text: str) -> list[tuple[str, str]]:
    """``(language, code)`` of every fenced block, in order."""
    return [(lang, code) for lang, code, _ in located_blocks(text)]


def located_blocks(text: str) -> list[tuple[str, str, int]]:
    """``(language, code, line)`` of every fenced block, ``line`` the 1-based line of its first code line."""
    return [(m.group(1), m.group(2), text.count("\n", 0, m.start(2)) + 1)
            for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.MULTILINE | re.DOTALL)]


def test_the_guide_has_runnable_examples():
    blocks = code_blocks(GUIDE.read_text(encoding="utf-8"))
    python = [code for lang, code in blocks if lang == "python"]
    assert sum(code.startswith("# file: ") for code in python) >= 2
    assert sum(not code.startswith("# file: ") for code in python) >= 2
    assert all(lang for lang, _ in blocks), "give every block a language (python, toml, json, text)"


def test_the_guide_examples_run(tmp_path, monkeypatch):
    """Every Python block of the guide runs: ``# file: PATH`` blocks are written under tmp_path (put on sys.path),
    the other blocks run in order in one namespace, each written module must have been imported by them, and each
    written ``tests/`` file runs under pytest."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TOKEMBED_PLUGINS", raising=False)
    written: list[str] = []
    files: list[str] = []
    imported: set[str] = set()
    namespace: dict = {"__name__": "plugins_md"}
    try:
        for lang, code, line in located_blocks(GUIDE.read_text(encoding="utf-8")):
            if lang != "python":
                continue
            if code.startswith("# file: "):
                rel = code.splitlines()[0][len("# file: "):].strip()
                path = tmp_path / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(code, encoding="utf-8")
                written.append(rel.split("/")[0].removesuffix(".py"))
                files.append(rel)
                continue
            # padded so that a traceback gives the guide's own line numbers
            exec(compile("\n" * (line - 1) + code, str(GUIDE), "exec"), namespace)
        imported = {name for name in sys.modules if name.split(".")[0] in written}
    finally:
        for name in list(sys.modules):
            if name.split(".")[0] in written:
                del sys.modules[name]
    tests = [rel for rel in files if rel.startswith("tests/")]
    modules = {rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".") for rel in files} - {
        rel.removesuffix(".py").replace("/", ".") for rel in tests}
    assert tests and modules and modules <= imported, f"blocks written but never run: {sorted(modules - imported)}"
    # "the whale, the whale" in chunks of 3: "the", " wh", "ale", ", t", "he ", "wha", "le" (7) plus "<unk>"
    assert "Chunk" in namespace and namespace["tok"].get_vocab_size() == 8
    # a worked example per kind, each put through its contract check inside its block
    assert {"Presence", "NextWordCounts", "MeanTokenLength"} <= set(namespace)
    # the test file of the guide, copied into a plugin's tests, runs under pytest as it is
    import os
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    env.pop("TOKEMBED_PLUGINS", None)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "failed" not in done.stdout


@pytest.mark.parametrize("snippet", [
    "tokembed plugins",
    "TOKEMBED_DISABLE_PLUGIN_AUTOLOAD=1",
    "-p no:NAME",
    "TOKEMBED_PLUGINS",
    "_get_state",
    "_set_state",
    "_encode_text",
    "allowed_special",
    "special_tokens_",
    "NotFittedError",
    "get_params",
    "_contract_params",
    "_contract_fit_data",
    "_contract_inputs",
    "check_component",
    "parametrize_with_checks",
    "registered_components",
    "[project.entry-points.tokembed]",
    "examples/tokembed-reverse",
    "examples/tokembed-bm25",
    "examples/tokembed-ppmi",
    "examples/tokembed-toklen",
    "TokenSequences",
    "special_ids",
    "as_token_sequences",
    "wv_",
    "KeyedVectors",
    "param_constraints",
    "ParameterError(component, param, problem)",
    "_validate_params",
    "fit(X, y=None)",
    "reads_text",
    "input_kind",
    "output_rows",
    "fits_on_tokens",
    "path_params",
    "check_vectorizer_token_sequences",
    "check_embedder_word_vectors",
])
def test_the_guide_covers(snippet):
    assert snippet in GUIDE.read_text(encoding="utf-8")
