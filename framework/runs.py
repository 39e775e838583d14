"""What every run shares, ``tokembed run`` and ``tokembed compare`` alike: the transactional run folder, the step
timer, progress bars, and locating a component's error at its recipe stage.

A run is written into a temporary folder beside its output and renamed into place when it succeeds
(:class:`RunFolder`), so a run folder never mixes files of two runs, a failed run never leaves a half-written one,
and nothing tokembed did not write is ever replaced: a folder's :data:`~tokembed.io.RUN_MARKER` lists what the run
wrote.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from .errors import CorpusReadError, TokembedError, with_context
from .io import RUN_MARKER

__all__ = ["RunFolder", "Timer", "stage", "progress", "yaml_dump", "lock_path"]


class Timer:
    """Seconds (and MB/s when the step states its input size) per named step, for ``timings.json``."""

    def __init__(self) -> None:
        self.table: dict[str, dict[str, float]] = {}

    @contextmanager
    def step(self, name: str, nbytes: int | None = None) -> Iterator[None]:
        t0 = time.perf_counter()
        yield
        dt = time.perf_counter() - t0
        row: dict[str, float] = {"seconds": round(dt, 4)}
        if nbytes:
            row["MB_per_s"] = round(nbytes / 1e6 / dt, 3) if dt > 0 else float("inf")
        self.table[name] = row


def progress(iterable, desc: str, quiet: bool):
    from tqdm.auto import tqdm

    return tqdm(iterable, desc=desc, unit=" docs", mininterval=0.5, leave=False, disable=quiet or None,
                file=sys.stderr)


def yaml_dump(data: Any) -> str:
    import yaml

    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False, width=110)


# -- the lock against concurrent runs into one folder ----------------------------------------------------------------
def lock_path(out: Path) -> Path:
    """The lock file of the output folder ``out``: ``.<name>.lock`` beside it (the folder itself is replaced whole)."""
    out = Path(os.path.realpath(out))
    return out.with_name(f".{out.name}.lock")


def _process_start(pid: int) -> str | None:
    """The start time of process ``pid`` in clock ticks since boot (Linux ``/proc``), None where unknown: with the
    pid it tells a live holder from a new process that reused a dead holder's pid."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _holder_alive(info: dict[str, Any]) -> bool | None:
    """True / False when the lock's holder runs / does not run on this host; None when that cannot be told (another
    host)."""
    pid = info.get("pid")
    if info.get("host") != socket.gethostname() or not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        pass
    except OSError:
        return None
    recorded, now = info.get("process_start"), _process_start(pid)
    return not (recorded is not None and now is not None and recorded != now)


#: A lock file that holds no readable record yet (its writer was stopped between creating and writing it) is
#: stale after this many seconds.
_UNREADABLE_LOCK_SECONDS = 30.0


class _Lock:
    """An exclusive lock file (``O_CREAT | O_EXCL``) holding the holder's pid, host and start times, as JSON."""

    def __init__(self, path: Path, shown: Path):
        self.path = path
        self.held = False
        record = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.time(),
                  "process_start": _process_start(os.getpid()), "argv": sys.argv[:6]}
        for _ in range(3):
            try:
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                if self._take_over_stale(shown):
                    continue
            except OSError as exc:
                raise TokembedError(f"output {shown}: cannot create the lock file {path}: {exc.strerror or exc}"
                                    ) from None
            else:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write(json.dumps(record) + "\n")
                self.held = True
                return
        raise TokembedError(f"output {shown}: cannot take the lock {path} (it keeps coming back)")

    def _take_over_stale(self, shown: Path) -> bool:
        """Remove the lock if its holder is gone (True); else raise the error that names it."""
        try:
            text = self.path.read_text(encoding="utf-8")
            age = time.time() - self.path.stat().st_mtime
        except FileNotFoundError:
            return True  # released meanwhile
        except OSError:
            text, age = "", 0.0
        try:
            info = json.loads(text)
            info = info if isinstance(info, dict) else {}
        except ValueError:
            info = {}
        alive = _holder_alive(info) if info else (None if age < _UNREADABLE_LOCK_SECONDS else False)
        if alive is False:
            try:  # rename first: of two runs taking over the same stale lock, one wins
                stale = self.path.with_name(f"{self.path.name}.stale-{os.getpid()}")
                os.replace(self.path, stale)
                stale.unlink()
            except FileNotFoundError:
                pass
            return True
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(info["started"])) \
            if isinstance(info.get("started"), (int, float)) else "an unknown time"
        who = f"pid {info.get('pid', '?')} on {info.get('host', '?')}, started {since}"
        raise TokembedError(
            f"output {shown}: another tokembed run ({who}) is writing this folder; wait for it to finish or choose "
            f"another --out DIR (if no run is going on, delete {self.path})")

    def release(self) -> None:
        if self.held:
            self.held = False
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass


class RunFolder:
    """A run is written into a temporary folder beside ``out`` and renamed into place when it succeeds, so a run
    folder never mixes files of two runs and a failed run never leaves a half-written one. A failed run's files are
    kept in ``<out>.incomplete`` for inspection.

    Replacing a folder deletes what it held, so an existing ``out`` (and ``<out>.incomplete``) is replaced only if it
    is empty or holds nothing but what an earlier run wrote (the entries its :data:`~tokembed.io.RUN_MARKER` lists);
    ``out`` may not be the current folder or one of its parents, and ``kind`` (``"run"`` for a run or a comparison,
    ``"encode"`` for an encoded corpus) does not replace the other kind's output. Otherwise
    :class:`~tokembed.errors.TokembedError` is raised before any work (for ``<out>.incomplete``, the failed run's
    files stay in the hidden temporary folder, whose path the error gives). A symbolic link as ``out`` stands for the folder it points to.

    One run at a time writes a folder: building a RunFolder takes the lock file :func:`lock_path` (``.<name>.lock``
    beside ``out``, holding the pid, host and start time), and :meth:`write` releases it. A second run into the same
    folder raises :class:`~tokembed.errors.TokembedError` at once, naming the holder. A lock whose holder no longer
    runs on this host (no such pid, or a pid reused by a process started later) is stale and taken over; a lock from
    another host is left alone, and the message says which file to delete if no run is going on. A successful run
    also removes ``<out>.incomplete`` when it holds only what an earlier failed run wrote.
    """

    def __init__(self, out: Path, kind: str = "run"):
        shown = out
        out = Path(os.path.realpath(out))
        self.out = out
        self.kind = kind
        self._check(out, shown, kind)
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise TokembedError(f"output {shown}: cannot create the run folder: {exc.strerror or exc}") from None
        self._lock = _Lock(lock_path(out), shown)
        try:
            self._check(out, shown, kind)  # again, now that no other run can change the folder
            self.tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
        except OSError as exc:
            self._lock.release()
            raise TokembedError(f"output {shown}: cannot create the run folder: {exc.strerror or exc}") from None
        except BaseException:
            self._lock.release()
            raise

    @staticmethod
    def _check(out: Path, shown: Path, kind: str = "run") -> None:
        hint = "choose a new or empty folder with --out DIR (or output: in the recipe)"
        for parent in out.parents:
            if parent.exists() and not parent.is_dir():
                raise TokembedError(f"output {shown}: {parent} is a file, not a folder; {hint}")
        if out.exists() and not out.is_dir():
            raise TokembedError(f"output {shown}: exists and is not a folder; {hint}")
        cwd = Path(os.path.realpath(os.getcwd()))
        if out == cwd or out in cwd.parents or out == Path(out.anchor):
            raise TokembedError(f"output {shown}: is the current folder or contains it, and a run replaces its "
                                f"output folder whole; {hint}")
        if out.is_dir():
            foreign = _foreign_entries(out)
            if foreign:
                listed = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
                raise TokembedError(
                    f"output {shown}: the folder holds files tokembed did not write ({len(foreign)} "
                    f"{'entry' if len(foreign) == 1 else 'entries'}: {listed}), and a run replaces its output "
                    f"folder whole; {hint}, or move them out")
            other = _output_kind(out)
            if other is not None and other != kind:
                theirs = "a corpus encoded by tokembed encode" if other == "encode" else \
                    "the output of tokembed run or compare (trained components, metrics)"
                ours = "tokembed encode" if kind == "encode" else "this run"
                raise TokembedError(f"output {shown}: holds {theirs}, which {ours} would delete (it replaces its "
                                    f"output folder whole); {hint}, or delete the folder first")

    def write(self, work: Callable[[Path], Any]) -> Any:
        """Run ``work(temporary_folder)``; on success rename the folder into place and return ``work``'s result.
        On failure keep what was written in ``<out>.incomplete`` and say so in the error. Releases the lock."""
        try:
            return self._write(work)
        finally:
            self._lock.release()

    def _write(self, work: Callable[[Path], Any]) -> Any:
        try:
            result = work(self.tmp)
        except BaseException as exc:
            kept = self.abandon()
            state = "is unchanged" if self.out.exists() else "was not created"
            if isinstance(exc, TokembedError) and kept is not None:
                raise with_context(exc, f"{exc}\n(the files written before the error are in {kept}; {self.out} "
                                        f"{state})") from None
            if isinstance(exc, (KeyboardInterrupt, SystemExit)) and kept is not None:
                print(f"tokembed: the files written before the interruption are in {kept}; {self.out} {state}",
                      file=sys.stderr)
            raise
        foreign = _foreign_entries(self.out) if self.out.is_dir() else []
        if foreign:  # added while the run was working: keep them, and the run's files apart
            kept = self.abandon()
            raise TokembedError(f"output {self.out}: {', '.join(foreign[:3])} appeared in the folder during the run, "
                                f"so it was not replaced; the run's files are in {kept}")
        self.commit()
        return result

    def _mark(self) -> None:
        """List the entries the run wrote in the marker file, so that a later run knows what it may replace."""
        names = sorted(e.name for e in self.tmp.iterdir() if e.name != RUN_MARKER)
        (self.tmp / RUN_MARKER).write_text(
            json.dumps({"written_by": "tokembed", "files": names}, indent=1) + "\n", encoding="utf-8")

    def commit(self) -> None:
        self._mark()
        old = None
        if self.out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{self.out.name}.old-", dir=self.out.parent))
            os.replace(self.out, old / self.out.name)
        os.replace(self.tmp, self.out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        os.chmod(self.out, 0o777 & ~_umask())
        kept = self.out.with_name(self.out.name + ".incomplete")
        if kept.is_dir() and not kept.is_symlink() and (kept / RUN_MARKER).is_file() and not _foreign_entries(kept):
            shutil.rmtree(kept, ignore_errors=True)  # an earlier failed run's files: this run supersedes them

    def abandon(self) -> Path | None:
        if not self.tmp.exists():
            return None
        if not any(self.tmp.iterdir()):
            shutil.rmtree(self.tmp, ignore_errors=True)
            return None
        self._mark()
        kept = self.out.with_name(self.out.name + ".incomplete")
        if kept.is_symlink() or (kept.exists() and (not kept.is_dir() or _foreign_entries(kept))):
            return self.tmp  # never replace something the user made
        shutil.rmtree(kept, ignore_errors=True)
        try:
            os.replace(self.tmp, kept)
            os.chmod(kept, 0o777 & ~_umask())
        except OSError:
            return self.tmp
        return kept


#: What a run folder written before the marker listed its files could hold.
_LEGACY_RUN_FILES = re.compile(r"^(recipe\.resolved\.yaml|timings\.json|metrics\.json|evaluation\.json|"
                               r"comparison\.(json|csv|md|txt)|report\.html|.+\.tokembed\.json|.+\.npy|"
                               r"\.tokembed-run)$")


def _foreign_entries(folder: Path) -> list[str]:
    """The entries of ``folder`` that no earlier run wrote (sorted): everything but what its marker lists (for a
    folder without a parseable marker, everything but the file names a run writes, if it has
    ``recipe.resolved.yaml``)."""
    try:
        entries = sorted(e.name for e in folder.iterdir())
    except OSError as exc:
        raise TokembedError(f"output {folder}: cannot read the folder: {exc.strerror or exc}") from None
    written: set[str] | None = None
    try:
        listed = json.loads((folder / RUN_MARKER).read_text(encoding="utf-8"))["files"]
        if isinstance(listed, list) and all(isinstance(n, str) for n in listed):
            written = set(listed)
    except (OSError, ValueError, KeyError, TypeError):
        written = None
    if written is not None:
        return [n for n in entries if n != RUN_MARKER and n not in written]
    if "recipe.resolved.yaml" in entries:
        return [n for n in entries if not _LEGACY_RUN_FILES.match(n)]
    return entries


def _output_kind(folder: Path) -> str | None:
    """What wrote ``folder``, when tokembed did: ``"encode"`` (its marker lists ``encoded.json``) or ``"run"`` (a
    run or a comparison); None for an empty folder or one without tokembed's files."""
    try:
        listed = json.loads((folder / RUN_MARKER).read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError):
        listed = None
    if isinstance(listed, list):
        if "encoded.json" in listed:
            return "encode"
        return "run" if listed else None
    return "run" if (folder / "recipe.resolved.yaml").is_file() else None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def stage(spec, prefix: str = "", corpus_at: str | None = None) -> Iterator[None]:
    """Name the recipe stage (file:line:col and dotted path) in any error a component raises while it runs; an
    error reading the corpus names the corpus section instead (at ``corpus_at``, its file:line:col)."""
    try:
        yield
    except CorpusReadError as exc:
        if corpus_at is None:
            raise
        raise with_context(exc, f"{corpus_at}: corpus: {exc}") from None
    except TokembedError as exc:
        raise with_context(exc, f"{spec.location}: {prefix}{_section(spec)}.{spec.label}: {exc}") from None
    except MemoryError as exc:  # numpy says what it could not allocate ("Unable to allocate 7.45 GiB for ...")
        raise TokembedError(f"{spec.location}: {prefix}{_section(spec)}.{spec.label}: out of memory"
                            f"{': ' + str(exc) if str(exc) else ''}; lower the sizes this stage allocates "
                            "(vector_size, bucket, max_vocab, vocab_size, ...) or use a smaller corpus") from None


def _section(spec) -> str:
    return {"tokenizer": "tokenizers", "embedder": "embedders", "vectorizer": "vectorizers"}.get(spec.kind, spec.kind)
