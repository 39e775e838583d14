"""The ``tokembed`` command line.

Every user error is a :class:`~tokembed.errors.TokembedError`: it is printed as one clear message (one line per
problem) and the exit status is 2. ``--debug`` shows the traceback as well. Heavy modules (numba, torch) are imported
only by the commands that need them, so ``tokembed --help`` and ``tokembed plugins`` stay fast.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from contextlib import contextmanager
from typing import Iterator, Sequence

from ._version import __version__
from .errors import TokembedError

__all__ = ["main", "build_parser"]


def _blocked(args: argparse.Namespace) -> list[str]:
    out = []
    for item in args.plugin_switches or []:
        if item.startswith("no:"):
            out.append(item[3:])
        else:
            raise TokembedError(f"-p {item}: only '-p no:NAME' (block a plugin by entry-point or distribution name) is supported")
    return out


def _registry(args: argparse.Namespace):
    from .registry import build_registry

    return build_registry(blocked=_blocked(args))


# -- commands ------------------------------------------------------------------------------------------------------
def cmd_plugins(args: argparse.Namespace) -> int:
    reg = _registry(args)
    rows = [info.as_dict() for info in reg.all(args.kind)]
    failures = [{"plugin": f.plugin.name, "distribution": f.plugin.distribution, "version": f.plugin.version,
                 "target": f.plugin.target, "error": f.error} for f in reg.failures]
    if args.json:
        print(json.dumps({"components": rows, "failures": failures}, indent=1))
        return 0
    headers = ["name", "kind", "distribution", "version", "module"]
    table = [[str(r[h] if r[h] is not None else "-") for h in headers] for r in rows]
    widths = [max([len(h)] + [len(row[i]) for row in table]) for i, h in enumerate(headers)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip())
    for row in table:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
    for f in reg.failures:
        print(f"warning: {f}", file=sys.stderr)
    return 0


def _engine(args: argparse.Namespace) -> dict[str, str] | None:
    """The ``engine:`` keys ``--engine`` / ``--scheduler`` set (``--scheduler`` alone implies ``--engine dask``)."""
    keys = {}
    if args.engine is not None or args.scheduler is not None:
        keys["type"] = args.engine or "dask"
    if args.scheduler is not None:
        keys["address"] = args.scheduler
    return keys or None


def cmd_run(args: argparse.Namespace) -> int:
    from .runner import run_recipe

    run_recipe(args.recipe, overrides=args.set or [], out=args.out, blocked=_blocked(args), engine=_engine(args))
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from .compare import render, run_comparison

    result = run_comparison(args.recipe, overrides=args.set or [], out=args.out, blocked=_blocked(args),
                            quiet=args.quiet)
    text = render(result.comparison, args.format)
    print(text, end="" if text.endswith("\n") else "\n")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from .recipe import load_recipe
    from .registry import build_registry

    recipe = load_recipe(args.recipe, overrides=args.set or [], registry=build_registry(blocked=_blocked(args)),
                         engine=_engine(args))
    print(f"{args.recipe}: OK ({recipe.describe()})")
    return 0


def cmd_warmup(args: argparse.Namespace) -> int:
    import time

    reg = _registry(args)
    total = time.perf_counter()
    from .text import fast

    t0 = time.perf_counter()
    fast.warmup()
    print(f"warmed up the pre-tokenizer scanner in {time.perf_counter() - t0:.2f} s")
    for info in reg.all():
        t0 = time.perf_counter()
        info.cls.warmup()
        dt = time.perf_counter() - t0
        if dt >= 0.01:
            print(f"warmed up {info.kind} {info.name} in {dt:.2f} s")
    print(f"warmup done in {time.perf_counter() - total:.2f} s")
    return 0


# -- parser --------------------------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tokembed",
        description="Train, apply and compare tokenizers, vectorizers and embedders from YAML recipes.",
    )
    parser.add_argument("--version", action="version", version=f"tokembed {__version__}")
    parser.add_argument("--debug", action="store_true", help="show the full traceback on errors")
    parser.add_argument(
        "-p", dest="plugin_switches", action="append", metavar="no:NAME",
        help="block a plugin by entry-point or distribution name (repeatable); "
             "TOKEMBED_DISABLE_PLUGIN_AUTOLOAD=1 skips all third-party plugins",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="show the full traceback on errors")
    _add_parser = sub.add_parser

    def add_parser(name, **kwargs):  # every command also takes --debug after its name
        kwargs.setdefault("parents", []).append(common)
        return _add_parser(name, **kwargs)

    sub.add_parser = add_parser

    p = sub.add_parser("plugins", help="list the registered components and the plugins behind them")
    p.add_argument("--kind", choices=["tokenizer", "vectorizer", "embedder"], help="only this kind")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_plugins)

    p = sub.add_parser("warmup", help="compile and cache every Numba kernel now, so first runs do not pay for it")
    p.set_defaults(func=cmd_warmup)

    for name, func, helptext in (
        ("run", cmd_run, "train, apply, evaluate and save everything a recipe names"),
        ("validate", cmd_validate, "check a recipe without running it"),
    ):
        p = sub.add_parser(name, help=helptext)
        p.add_argument("recipe", help="path of the YAML recipe")
        p.add_argument("--set", action="append", metavar="PATH=VALUE",
                       help="override a recipe value, e.g. --set tokenizers.bpe.vocab_size=16000 (repeatable)")
        if name == "run":
            p.add_argument("--out", metavar="DIR", help="output folder (overrides the recipe's `output:`)")
        p.add_argument("--engine", choices=["local", "dask"],
                       help="where corpus statistics are counted (sets engine.type; dask: a local cluster of 2 "
                            "workers unless --scheduler or engine.address names one; docs/scale.md)")
        p.add_argument("--scheduler", metavar="ADDRESS",
                       help="a running Dask scheduler, e.g. tcp://10.0.0.5:8786 (sets engine.address; implies "
                            "--engine dask)")
        p.set_defaults(func=func)

    p = sub.add_parser("compare", help="train, load and compare the tokenizers of a compare: recipe side by side")
    p.add_argument("recipe", help="path of the YAML recipe (with a compare: section)")
    p.add_argument("--set", action="append", metavar="PATH=VALUE",
                   help="override a recipe value, e.g. --set compare.tokenizers.bpe.vocab_size=16000 (repeatable)")
    p.add_argument("--out", metavar="DIR", help="output folder (overrides the recipe's `output:`)")
    p.add_argument("--format", choices=["table", "json", "csv", "markdown", "html"], default="table",
                   help="what to print on standard output (every format is written into the output folder)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress messages on standard error")
    p.set_defaults(func=cmd_compare)

    try:
        from .datasets import add_data_commands
    except ImportError:  # pragma: no cover - the data module is optional while it is being written
        pass
    else:
        add_data_commands(sub)
    return parser


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings as one line (``tokembed: warning: ...``), not with the source line that raised them."""
    print(f"tokembed: warning: {message}", file=sys.stderr if file is None else file)


@contextmanager
def _sigterm_as_exit() -> Iterator[None]:
    """Turn SIGTERM into ``SystemExit(143)`` while a command runs, so a killed run cleans up as an interrupted one
    does (its files kept in ``<out>.incomplete``, no hidden partial folder)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum, frame):
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: Sequence[str] | None = None) -> int:
    import warnings

    warnings.showwarning = _show_warning
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        with _sigterm_as_exit():
            status = int(args.func(args) or 0)
            sys.stdout.flush()  # a closed pipe fails here, inside the handlers, not at interpreter exit
            return status
    except TokembedError as exc:
        if args.debug:
            import traceback

            traceback.print_exc()
        print(f"tokembed: error: {exc}" if "\n" not in str(exc) else f"tokembed: error:\n{exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tokembed: interrupted", file=sys.stderr)
        return 130
    except MemoryError:
        if args.debug:
            raise
        print("tokembed: error: out of memory (a parameter such as d_model, max_len or vocab_size may be far too "
              "large for this machine)", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `tokembed plugins | head -1`: the reader left; end quietly, as head expects
        return _closed_pipe()
    except OSError as exc:  # a full disk, a read-only folder, a path that is a file: the environment, not a bug
        if args.debug:
            raise
        where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
        print(f"tokembed: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 2


def _closed_pipe() -> int:
    """Exit status 0 after the reader of stdout closed the pipe. What is still buffered cannot be written, and the
    interpreter flushes stdout again at exit (which would fail once more and print an error): point stdout at
    /dev/null first, so that flush succeeds silently (the recipe in Python's signal documentation)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
