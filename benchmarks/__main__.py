"""``python -m benchmarks [NAME ...] [--repeat N] [--list]``: run side-by-side benchmarks, merge into BENCHMARKS.md."""

from __future__ import annotations

import argparse
import difflib
import shlex
import sys
from pathlib import Path

from . import load_benchmarks
from .harness import DEFAULT_OUTPUT, merge_section, render_section, run_benchmark


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Time our components against reference implementations on the same data (see docs/benchmarks.md).",
    )
    parser.add_argument("names", nargs="*", metavar="NAME", help="benchmarks to run (default: all)")
    parser.add_argument("--repeat", type=int, default=None,
                        help="timed calls per side, alternating (default: the benchmark's own, 3 unless it says)")
    parser.add_argument("--warmup", type=int, default=None,
                        help="untimed calls per side before timing (default: the benchmark's own, 1 unless it says)")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-memory measurement")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help=f"results file (default {DEFAULT_OUTPUT})")
    parser.add_argument("--no-write", action="store_true", help="print the sections, do not update the results file")
    args = parser.parse_args(argv)
    if (args.repeat is not None and args.repeat < 1) or (args.warmup is not None and args.warmup < 0):
        parser.error("--repeat must be >= 1 and --warmup >= 0")

    registry = load_benchmarks()
    if args.list:
        width = max((len(n) for n in registry), default=0)
        for name, bench in sorted(registry.items()):
            print(f"{name:<{width}}  {bench.description}  [ours: {bench.ours} | reference: {bench.reference}]")
        return 0
    names = args.names or sorted(registry)
    unknown = [n for n in names if n not in registry]
    if unknown:
        for n in unknown:
            close = difflib.get_close_matches(n, list(registry), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            print(f"unknown benchmark {n!r}.{hint} Available: {', '.join(sorted(registry))}", file=sys.stderr)
        return 2

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    status = 0
    for name in names:
        warmup = registry[name].warmup if args.warmup is None else args.warmup
        own = [] if warmup == registry[name].warmup else ["--warmup", str(warmup)]
        repeat = registry[name].repeat if args.repeat is None else args.repeat
        command = "python -m benchmarks " + shlex.join([name, "--repeat", str(repeat), *own])
        try:
            result = run_benchmark(registry[name], repeat=repeat, warmup=warmup,
                                   memory=not args.no_memory, log=log)  # fmt: skip
        except Exception as exc:  # noqa: BLE001 - a setup that cannot run here (missing dataset or library): report, go on
            log(f"[{name}] ERROR: {type(exc).__name__}: {exc}")
            status = 1
            continue
        section = render_section(result, command)
        print(section)
        if not result.ok or result.missed:  # a quality miss is timed and reported, and still fails the command
            status = 1
        if result.trial:
            log(f"[{name}] a trial size: not written to {args.output}")
        elif not args.no_write:
            merge_section(args.output, name, section)
            log(f"[{name}] written to {args.output}")
    return status


if __name__ == "__main__":
    sys.exit(main())
