"""Run a benchmark: time both sides alternately, measure peak memory in fresh processes, check, report.

Timing
    The setup runs once, untimed. Each side is called ``warmup`` times untimed (the first results are the ones
    checked; with ``warmup=0`` the first timed call's results are), then the two sides alternate
    ``ours, reference, ours, reference, ...`` for ``repeat`` rounds, each call timed with
    :func:`time.perf_counter` after a :func:`gc.collect`. The report gives the median, minimum and maximum, and
    the ratio of the medians ours / reference (below 1: ours is faster).

Memory
    Never measured in the shared process. For each side a *probe* process (``python -m benchmarks._memory``)
    starts one child that runs the setup and that side once, waits for it, and reads
    ``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss``: the child's peak resident set size (its only child, so the
    figure is that child's alone). A third child runs the setup alone, for comparison.

Check
    The benchmark's ``check(ours_result, reference_result)`` must pass; otherwise the row is reported as
    ``CHECK FAILED`` with the message, no timing is recorded, and the command exits with status 1.
"""

from __future__ import annotations

import datetime as dt
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from . import Benchmark
from ._common import bench_bytes

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = REPO_ROOT / "BENCHMARKS.md"

_HEADER = """\
# Benchmarks

Side-by-side timings of tokembed components against reference implementations on the same data, produced by
`python -m benchmarks` (how to run them and how they are measured: `docs/benchmarks.md`). Each section is
rewritten when its benchmark runs again; the other sections are kept. A ratio below 1 means ours is faster.
"""


@dataclass
class SideResult:
    times: list[float]
    peak_rss_mb: float | None = None

    @property
    def median(self) -> float:
        return statistics.median(self.times)


@dataclass
class Result:
    bench: Benchmark
    ok: bool
    check_detail: str
    repeat: int
    warmup: int
    ours: SideResult | None = None
    reference: SideResult | None = None
    setup_rss_mb: float | None = None
    work_bytes: int | None = None
    notes: str = ""
    missed: bool = False  # a quality check failed, the timings were taken anyway
    trial: bool = False  # a trial size: printed, never written to the results file
    when: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.timezone.utc))

    @property
    def ratio(self) -> float | None:
        if not self.ok or self.ours is None or self.reference is None or self.reference.median == 0:
            return None
        return self.ours.median / self.reference.median


# -- memory in fresh processes --------------------------------------------------------------------------------------
def peak_rss_mb(name: str, side: str) -> float:
    """Peak RSS (MB, 10^6 bytes) of a fresh process that runs benchmark ``name``'s setup and ``side`` once.

    ``side`` is ``"ours"``, ``"reference"`` or ``"setup"`` (setup alone). Raises RuntimeError when the child fails.
    """
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks._memory", name, side],
        cwd=REPO_ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        raise RuntimeError(f"memory probe for {name}/{side} failed:\n{proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])["maxrss_kb"] * 1024 / 1e6


# -- running ---------------------------------------------------------------------------------------------------------
def _timed(fn) -> float:
    gc.collect()
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def run_benchmark(bench: Benchmark, *, repeat: int = 3, warmup: int = 1, memory: bool = True, log=print) -> Result:
    """Set up, check and time ``bench`` (see the module docstring). Setup errors propagate."""
    log(f"[{bench.name}] setup")
    case = bench.setup()
    # a head of the dataset (TOKEMBED_BENCH_MB) is a trial size whatever the benchmark says: its data line names
    # the whole dataset, so its section must never reach the results file
    trial = case.trial or bench_bytes() is not None
    result = Result(bench, ok=False, check_detail="", repeat=repeat, warmup=warmup, work_bytes=case.work_bytes,
                    notes=case.notes, trial=trial)  # fmt: skip
    ours_times: list[float] = []
    ref_times: list[float] = []
    first: dict[str, object] = {}
    for i in range(warmup):
        ours_out, ref_out = case.ours(), case.reference()
        if i == 0:
            first = {"ours": ours_out, "reference": ref_out}
        del ours_out, ref_out
    if warmup:
        log(f"[{bench.name}] warm-up done ({warmup} call(s) per side)")
    if not first:  # no warm-up: the first timed round gives the results to check
        gc.collect()
        t0 = time.perf_counter()
        first["ours"] = case.ours()
        ours_times.append(time.perf_counter() - t0)
        gc.collect()
        t0 = time.perf_counter()
        first["reference"] = case.reference()
        ref_times.append(time.perf_counter() - t0)
    try:
        result.check_detail = case.check(first["ours"], first["reference"])
    except AssertionError as exc:  # CheckFailed included
        result.check_detail = str(exc) or type(exc).__name__
        log(f"[{bench.name}] CHECK FAILED: {result.check_detail}")
        if not case.quality:
            return result
        result.missed = True
    first.clear()
    if not result.missed:
        log(f"[{bench.name}] check passed: {result.check_detail}")
    while len(ours_times) < repeat:
        ours_times.append(_timed(case.ours))
        ref_times.append(_timed(case.reference))
        log(f"[{bench.name}] round {len(ours_times)}/{repeat}: ours {_fmt_time(ours_times[-1])}, "
            f"reference {_fmt_time(ref_times[-1])}")  # fmt: skip
    result.ok = True
    result.ours, result.reference = SideResult(ours_times), SideResult(ref_times)
    del case
    gc.collect()
    if memory:
        log(f"[{bench.name}] peak memory in fresh processes")
        result.setup_rss_mb = peak_rss_mb(bench.name, "setup")
        result.ours.peak_rss_mb = peak_rss_mb(bench.name, "ours")
        result.reference.peak_rss_mb = peak_rss_mb(bench.name, "reference")
    return result


# -- report -----------------------------------------------------------------------------------------------------------
def _fmt_time(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.3f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds * 1e6:.0f} us"


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def machine_description() -> str:
    """CPU model, cores, memory and OS of this machine, in one line."""
    cpu = platform.processor() or platform.machine()
    mem = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = f", {int(line.split()[1]) / 2**20:.1f} GiB"
                break
    except OSError:
        pass
    blas = [f"{k}={os.environ[k]}" for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ]
    extra = f"; {' '.join(blas)} set" if blas else ""
    return f"{platform.machine()} {cpu}, {os.cpu_count()} cores{mem}; {platform.system()} {platform.release()}{extra}"


def render_section(result: Result, command: str) -> str:
    """The Markdown section ``## <name>`` for BENCHMARKS.md."""
    b = result.bench
    libs = ["tokembed", "numpy", *[lib for lib in b.libraries if lib not in ("tokembed", "numpy")]]
    lines = [f"## {b.name}", "", f"{b.description}", ""]
    if result.trial:  # printed only (never written), but a copied section must still say what it is
        mb = bench_bytes()
        what = f"the data below cut to its first {mb / 1e6:g} MB (TOKEMBED_BENCH_MB)" if mb else "the notes say which"
        lines += [f"**TRIAL SIZE: not a benchmark figure** (a shortened input or run: {what}).", ""]
    if b.data:
        lines.append(f"- data: {b.data}")
    lines += [
        f"- date: {result.when:%Y-%m-%d %H:%M} UTC; command: `{command}`",
        f"- machine: {machine_description()}",
        f"- Python {platform.python_version()} ({platform.python_implementation()}); "
        + ", ".join(f"{lib} {_version(lib)}" for lib in libs),
    ]
    if not result.ok:
        lines += ["", f"**CHECK FAILED** ({b.check}): {result.check_detail}", "",
                  "No timing is recorded while the two sides disagree.", ""]  # fmt: skip
        return "\n".join(lines)
    assert result.ours is not None and result.reference is not None
    verdict_line = (f"- check ({b.check}): **MISSED**; {result.check_detail}" if result.missed
                    else f"- check ({b.check}): passed; {result.check_detail}")
    lines += [
        verdict_line,
        (
            f"- timing: median of {result.repeat} calls per side, alternating ours / reference, after "
            f"{result.warmup} untimed warm-up call(s) per side"
        ),
        "",
        "| side | implementation | median | min | max | throughput | peak RSS |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for side, impl, res in (("ours", b.ours, result.ours), ("reference", b.reference, result.reference)):
        thr = f"{result.work_bytes / res.median / 1e6:.1f} MB/s" if result.work_bytes else "-"
        rss = f"{res.peak_rss_mb:.0f} MB" if res.peak_rss_mb is not None else "not measured"
        lines.append(
            f"| {side} | {impl} | {_fmt_time(res.median)} | {_fmt_time(min(res.times))} | "
            f"{_fmt_time(max(res.times))} | {thr} | {rss} |"
        )
    ratio = result.ratio
    assert ratio is not None
    verdict = f"ours is {1 / ratio:.1f}x faster" if ratio < 1 else f"ours is {ratio:.1f}x slower"
    lines += ["", f"**ours / reference (median time): {ratio:.2f}x** ({verdict})."]
    if result.setup_rss_mb is not None:
        lines.append(
            f"Peak RSS: a fresh process running the setup and one call of that side; the setup alone peaks at "
            f"{result.setup_rss_mb:.0f} MB."
        )
    if result.notes:
        lines += ["", result.notes]
    lines.append("")
    return "\n".join(lines)


def merge_section(path: Path, name: str, section: str) -> None:
    """Replace the ``## name`` section of the Markdown file ``path`` (or append it), keeping every other section.

    The file is written to a temporary name and renamed into place.
    """
    text = path.read_text(encoding="utf-8") if path.exists() else _HEADER
    preamble: list[str] = []
    sections: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("## "):
            sections.append((line[3:].strip(), [line]))
        elif sections:
            sections[-1][1].append(line)
        else:
            preamble.append(line)
    new = section.rstrip("\n").splitlines()
    for i, (sec_name, _) in enumerate(sections):
        if sec_name == name:
            sections[i] = (name, new)
            break
    else:
        sections.append((name, new))
    out = "\n".join(preamble).rstrip("\n") + "\n"
    for _, body in sections:
        out += "\n" + "\n".join(body).rstrip("\n") + "\n"
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(out, encoding="utf-8")
    os.replace(tmp, path)
