"""Peak memory of one benchmark side, measured in fresh processes (used by the harness, not by people).

``python -m benchmarks._memory NAME SIDE`` is the probe: it runs ``python -m benchmarks._memory --child NAME SIDE``
as its only child, waits for it, and prints ``{"maxrss_kb": N}`` from ``getrusage(RUSAGE_CHILDREN).ru_maxrss``
(kilobytes on Linux). The child runs the benchmark's setup, then the side (``ours`` or ``reference``) once, or
nothing more for ``setup``.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys

from . import load_benchmarks

SIDES = ("setup", "ours", "reference")


def _child(name: str, side: str) -> None:
    case = load_benchmarks()[name].setup()
    if side == "ours":
        case.ours()
    elif side == "reference":
        case.reference()


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--child":
        _child(argv[1], argv[2])
        return 0
    name, side = argv
    if side not in SIDES:
        raise SystemExit(f"side must be one of {SIDES}, got {side!r}")
    proc = subprocess.run([sys.executable, "-m", "benchmarks._memory", "--child", name, side], check=False)
    if proc.returncode != 0:
        return proc.returncode
    print(json.dumps({"maxrss_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
