"""What several benchmark modules share: their input (the whole dataset, or its head for a trial run) and a way to
run our side on one CPU core.

Trial runs
    ``TOKEMBED_BENCH_MB=N`` makes the benchmarks that read their data through this module use only the first ``N``
    MB (10^6 bytes, cut after a whole line) of their dataset, so a change can be proved to run in seconds. The
    ``data`` line of a section always names the whole dataset, so the harness treats any run with the variable set
    as a trial size (:attr:`benchmarks.Case.trial`): printed, never written to BENCHMARKS.md.

One core
    :func:`one_core` confines a call to one CPU: every thread of this process (and every thread started during the
    call, which inherits its creator's affinity) is pinned to one CPU with ``sched_setaffinity``, Numba's thread
    count is set to 1 and BLAS's to 1 (threadpoolctl). A component that starts its own threads (``workers``) should
    also be given one thread: pinning alone would leave them time-sliced on the one CPU.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BENCH_MB_ENV = "TOKEMBED_BENCH_MB"


def bench_bytes() -> int | None:
    """The byte budget of a trial run (``TOKEMBED_BENCH_MB`` in MB), None for the whole dataset."""
    value = os.environ.get(BENCH_MB_ENV)
    if not value:
        return None
    mb = float(value)
    if mb <= 0:
        raise ValueError(f"{BENCH_MB_ENV} must be a positive number of MB, got {value!r}")
    return int(mb * 1e6)


def _head(data: bytes, limit: int | None) -> bytes:
    if limit is None or len(data) <= limit:
        return data
    cut = data.rfind(b"\n", 0, limit)
    return data[: cut + 1] if cut >= 0 else data[:limit]


def dataset_file(name: str) -> Path:
    """The file of dataset ``name``; in a trial run a copy of its head in a temporary folder (removed at exit)."""
    from tokembed.datasets import dataset_path

    path = dataset_path(name)
    limit = bench_bytes()
    if limit is None or path.stat().st_size <= limit:
        return path
    folder = Path(tempfile.mkdtemp(prefix="tokembed-bench-head-"))
    import atexit
    import shutil

    atexit.register(shutil.rmtree, folder, True)
    head = folder / path.name
    with open(path, "rb") as f:
        head.write_bytes(_head(f.read(limit + 1), limit))
    return head


def prose_lines() -> tuple[list[str], int]:
    """prose_mix's non-empty lines (the documents of the prose benchmarks) and the UTF-8 size of the text they
    come from, in bytes."""
    text = dataset_file("prose_mix").read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip()], len(text.encode("utf-8"))


def text_file_sequences(path: Path, workers: int):
    """The text file ``path`` as :class:`~tokembed.sequences.TokenSequences`, split as the Stanford GloVe tools
    read a corpus: documents are the lines, tokens the runs of non-whitespace (``whitespace_split``, on
    ``workers`` threads of the Numba scanner of :func:`tokembed.text.fast.index_words`); ids in order of first
    occurrence. The whole work a user's own code does from the file: read, decode, split, index."""
    from tokembed.sequences import TokenSequences
    from tokembed.text.fast import index_words

    lines = path.read_text(encoding="utf-8").split("\n")
    if lines and not lines[-1]:
        lines.pop()  # the file's final newline ends the last document; it starts no new one
    ids, offsets, words = index_words(lines, "whitespace_split", workers=workers)
    return TokenSequences(ids, offsets, words.words())


@contextmanager
def one_core() -> Iterator[int]:
    """Run the body on one CPU core (see the module docstring); yields the CPU's number. Linux only."""
    import numba
    from threadpoolctl import threadpool_limits

    allowed = os.sched_getaffinity(0)
    cpu = min(allowed)

    def pin(cpus: set[int]) -> None:
        for tid in os.listdir("/proc/self/task"):
            try:
                os.sched_setaffinity(int(tid), cpus)
            except OSError:  # the thread ended meanwhile
                pass

    threads = numba.get_num_threads()
    pin({cpu})
    numba.set_num_threads(1)
    try:
        with threadpool_limits(limits=1):
            yield cpu
    finally:
        numba.set_num_threads(threads)
        pin(allowed)
