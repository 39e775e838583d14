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
from contextlib import contextmanager, nullcontext
from typing import Any, Iterator, Sequence

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
    rows = [info.as_dict() for info in reg.listed(args.kind)]
    failures = [{"plugin": f.plugin.name, "distribution": f.plugin.distribution, "version": f.plugin.version,
                 "target": f.plugin.target, "error": f.error} for f in reg.failures]
    if args.json:
        print(json.dumps({"components": rows, "failures": failures}, indent=1))
        return 0
    from .tables import text_table

    headers = ["name", "kind", "distribution", "version", "module"]
    print(text_table(headers, [[str(r[h] if r[h] is not None else "-") for h in headers] for r in rows]))
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

    result = run_recipe(args.recipe, overrides=args.set or [], out=args.out, blocked=_blocked(args),
                        metrics=not args.no_metrics, engine=_engine(args), quiet=args.quiet)
    if args.quiet:  # as compare's -q: no progress on standard error, the result still printed
        from .tables import summary_table

        print(summary_table(result))
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from .compare import render, run_comparison

    result = run_comparison(args.recipe, overrides=args.set or [], out=args.out, blocked=_blocked(args),
                            quiet=args.quiet)
    text = render(result.comparison, args.format, grid=result.grid)
    print(text, end="" if text.endswith("\n") else "\n")
    failed = [c for c in result.grid.cells if c.error] if result.grid is not None else []
    if failed:  # every result is written; the status says that some are missing
        names = ", ".join(f"{c.tokenizer} x {c.embedder}" for c in failed)
        print(f"tokembed compare: {len(failed)} of {len(result.grid.cells)} grid cells failed ({names}); the "
              "others' results are written", file=sys.stderr)
        return 1
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from .recipe import load_recipe
    from .registry import build_registry

    recipe = load_recipe(args.recipe, overrides=args.set or [], registry=build_registry(blocked=_blocked(args)),
                         engine=_engine(args))
    print(f"{args.recipe}: OK ({recipe.describe()})")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from pathlib import Path

    from . import load
    from .errors import ArtifactError
    from .export import export_tokenizer

    tok = load(args.file, registry=_registry(args))
    if getattr(tok, "kind", None) != "tokenizer":
        kind = getattr(tok, "kind", None) or "component of unknown kind"
        article = "an" if kind[0] in "aeiou" else "a"
        raise ArtifactError(f"{args.file}: holds {article} {kind}, not a tokenizer; tokembed export writes "
                            "tokenizers")
    stem = Path(args.file).name.removesuffix(".json").removesuffix(".tokembed")
    for path in export_tokenizer(tok, args.to, args.out, stem=stem):
        print(f"wrote {path}")
    if args.to == "tiktoken" and callable(getattr(tok, "tiktoken_spec", None)):
        spec = tok.tiktoken_spec()
        print(f"tiktoken: pat_str={spec['pat_str']!r}, special_tokens={spec['special_tokens']!r}")
    return 0


def cmd_encode(args: argparse.Namespace) -> int:
    from pathlib import Path

    from . import load
    from .corpus import Corpus, builtin_names, implied_format, read_documents
    from .encode import encode_corpus, on_engine
    from .errors import ArtifactError, CorpusError

    _refuse_other_tokenizer_files(args.tokenizer)
    tok = load(args.tokenizer, registry=_registry(args))
    if getattr(tok, "kind", None) != "tokenizer":
        kind = getattr(tok, "kind", None) or "component"
        raise ArtifactError(f"{args.tokenizer}: holds {'an' if kind[0] in 'aeiou' else 'a'} {kind}, not a "
                            "tokenizer; tokembed encode needs a saved tokenizer (<label>.tokembed.json)")
    kwargs = {"unit": args.unit, "errors": args.errors}
    if args.field:
        kwargs.update(format="jsonl", field=args.field)
    if args.corpus in builtin_names() and not Path(args.corpus).exists():
        corpus = Corpus.builtin(args.corpus, **kwargs)
    else:  # read as a recipe's corpus: {path:} is (docs/recipes.md#documents)
        if not args.field and implied_format(args.corpus) == "jsonl":
            raise CorpusError(f"{args.corpus}: JSON Lines (by its name): give --field KEY, the key holding each "
                              "record's text")
        corpus = read_documents(args.corpus, **kwargs)
    engine = _encode_engine(args)
    with engine if engine is not None else nullcontext():
        if engine is not None:
            engine.start()  # a scheduler that does not answer fails here, before any folder is made
        summary = encode_corpus(
            tok, corpus, args.out, format=args.format, eot_id=args.eot_id, corpus=str(args.corpus),
            total_bytes=corpus.size_bytes(), progress=not args.quiet,
            map_partitions=None if engine is None else on_engine(engine, corpus, quiet=args.quiet))
    docs = f"{summary.documents:,} document" + ("" if summary.documents == 1 else "s")
    print(f"encoded {docs} into {summary.tokens:,} tokens ({summary.text_bytes / 1e6:,.1f} "
          f"MB of text in {summary.seconds:.1f} s, {summary.mb_per_s:.1f} MB/s): {summary.folder} "
          f"({summary.format} layout)")
    return 0


def _encode_engine(args: argparse.Namespace):
    """The Dask engine ``tokembed encode --engine dask`` (or ``--scheduler``) encodes on, or None for this
    process's threads (``--engine local``, the default)."""
    import math

    from .errors import EngineError

    if args.scheduler is None and args.engine in (None, "local"):
        for flag, value in (("--workers", args.workers), ("--partition-mb", args.partition_mb)):
            if value is not None:
                raise EngineError(f"tokembed encode: {flag} applies to --engine dask; the local engine encodes on "
                                 "the tokenizer's threads")
        return None
    if args.engine == "local":
        raise EngineError("tokembed encode: --scheduler needs --engine dask (or no --engine)")
    from .engine import open_engine

    if args.scheduler is not None:
        from .engine.cluster import address_problem

        problem = address_problem(args.scheduler)
        if problem:
            raise EngineError(f"tokembed encode: --scheduler {args.scheduler}: {problem}")
    from .params import satisfies
    from .recipe.engine import ENGINE_KEYS  # the rules of engine.workers and engine.partition_mb, stated once

    workers, partition_mb = ENGINE_KEYS["workers"][1], ENGINE_KEYS["partition_mb"][1]
    if args.workers is not None and not satisfies(workers, args.workers):
        raise EngineError(f"tokembed encode: --workers must be at least {workers.low}, got {args.workers}")
    if args.partition_mb is not None and not (satisfies(partition_mb, args.partition_mb)
                                              and math.isfinite(args.partition_mb)):
        raise EngineError(f"tokembed encode: --partition-mb must be a finite number of MiB >= {partition_mb.low}, "
                         f"got {args.partition_mb}")
    return open_engine("dask", address=args.scheduler, workers=args.workers, partition_mb=args.partition_mb)


def _refuse_other_tokenizer_files(path: str) -> None:
    """``tokembed encode`` reads a saved tokembed tokenizer: another tokenizer file (tiktoken ranks, a Hugging Face
    tokenizer.json, ...) is named as what it is, with how to save it as one, instead of "not a valid JSON
    artifact"."""
    from pathlib import Path

    from .errors import ArtifactError, TokembedError
    from .export import load_format, recognise_tokenizer_file

    if not Path(path).is_file():
        return  # load() says there is no such file
    accepted = "tokembed encode reads a saved tokembed tokenizer (<label>.tokembed.json, as tokembed run writes)"
    try:
        key, _ = recognise_tokenizer_file(path)
    except ArtifactError:
        return  # a .json that is not JSON: load() names the line
    except TokembedError:
        with open(path, "rb") as fh:
            if fh.read(64).lstrip().startswith(b"{"):
                return  # JSON: load() says what it holds (an embedder, another JSON)
        raise ArtifactError(f"{path}: not a tokenizer file tokembed knows; {accepted}") from None
    if key == "tokembed":
        return
    fmt, what = load_format(key)
    raise ArtifactError(f"{path}: is {what}, not a saved tokembed tokenizer; {accepted}. Save it as one first: "
                        f"read it with the {fmt.method}() of the tokenizer class that reads it, then "
                        ".save('NAME.tokembed.json') (docs/encode.md does so for GPT-2's ranks)")


def _warm_step(step: str) -> tuple[float, float]:
    """Run one warm-up step in this process: ``"module:function"`` or ``"component:KIND:NAME"``; its wall and CPU
    seconds."""
    import importlib
    import time

    t0, c0 = time.perf_counter(), time.process_time()
    if step.startswith("component:"):
        from .registry import build_registry

        _, kind, name = step.split(":", 2)
        build_registry().get(kind, name).warmup()
    else:
        module, _, function = step.partition(":")
        getattr(importlib.import_module(module), function)()
    return time.perf_counter() - t0, time.process_time() - c0


def _numba_threads_started() -> bool:
    """Whether this process has started Numba's threading layer (run a ``parallel=True`` kernel)."""
    parallel = sys.modules.get("numba.np.ufunc.parallel")
    return bool(getattr(parallel, "_is_initialized", False))


def cmd_warmup(args: argparse.Namespace) -> int:
    """Compile every kernel in two phases: the independent steps components declare (``warmup_shared``: the
    scanner, the merge loop, ...; each once), then each component's own ``warmup``, which loads those from the
    cache. Each phase runs its steps in parallel processes (``--jobs``, default one per CPU): Numba compiles a
    function on one core, so a cold cache fills in about the time of the longest chain of steps."""
    import time
    from contextlib import nullcontext

    reg = _registry(args)
    total = time.perf_counter()
    infos = list(reg.all())
    shared = ["tokembed.text.fast:warmup", "tokembed.decoding:warmup"]
    for info in infos:
        for step in info.cls.warmup_shared() if callable(getattr(info.cls, "warmup_shared", None)) else ():
            if step not in shared:
                shared.append(step)
    own = [f"component:{info.kind}:{info.name}" for info in infos]
    jobs = args.jobs if args.jobs is not None else (os.cpu_count() or 1)
    if jobs < 1:
        raise TokembedError(f"--jobs must be >= 1, got {jobs}")
    pool: Any = nullcontext()
    if jobs > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # fork: from the command line the parent has imported neither numba nor a kernel, so the children start
        # light; the same workers serve both phases (their imports are paid once). Not once Numba's threading layer
        # has started in this process (a caller that ran a parallel kernel first): its OpenMP layer terminates a
        # forked child that runs one (SIGTERM), so the children are spawned then
        fork = "fork" in multiprocessing.get_all_start_methods() and not _numba_threads_started()
        pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork" if fork else "spawn"))
    cpu = 0.0
    with pool as executor:
        for phase, steps in (("independent steps", shared), ("components", own)):
            t0 = time.perf_counter()
            # the longest first (the merge loop), so the other workers take the rest meanwhile
            ordered = sorted(steps, key=lambda s: not s.endswith(":warmup_merge_loop"))
            if executor is None:
                figures = [_warm_step(step) for step in ordered]
            else:
                figures = list(executor.map(_warm_step, ordered))
            for step, (dt, c) in zip(ordered, figures):
                cpu += c
                if dt >= 0.05:
                    print(f"  {step.removeprefix('component:')}: {dt:.2f} s ({c:.2f} s CPU)")
            print(f"warmed up {len(steps)} {phase} in {time.perf_counter() - t0:.2f} s")
    print(f"warmup done in {time.perf_counter() - total:.2f} s with {jobs} process{'es' * (jobs != 1)} "
          f"({cpu:.2f} s of CPU in the steps)")
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

    p = sub.add_parser("plugins", help="list the registered components and metrics, and the plugins behind them")
    p.add_argument("--kind", choices=["tokenizer", "vectorizer", "embedder", "metric"], help="only this kind")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_plugins)

    from .export import EXPORT_FORMATS  # light: no plugin, no numba

    p = sub.add_parser("export", help="write a saved tokenizer in another library's format (Hugging Face, tiktoken)")
    p.add_argument("file", help="a saved tokenizer, e.g. runs/quickstart/bpe8k.tokembed.json")
    p.add_argument("--to", required=True, choices=list(EXPORT_FORMATS),
                   help="hf: tokenizer.json; vocab-merges: vocab.json + merges.txt (a folder); vocab-txt: a "
                        "WordPiece vocab.txt; tiktoken: BPE ranks (ids kept as ranks)")
    p.add_argument("--out", required=True, metavar="PATH",
                   help="the file to write (an existing folder gets the usual name inside), or the folder for "
                        "vocab-merges")
    p.set_defaults(func=cmd_export)

    from .encoded import ENCODE_FORMATS  # light: no numpy work, no plugin

    p = sub.add_parser("encode", help="write a corpus's token ids to disk with a saved tokenizer (tokembed, nanoGPT "
                                      "or Megatron-LM layout)")
    p.add_argument("tokenizer", help="a saved tokenizer, e.g. runs/quickstart/bpe8k.tokembed.json")
    p.add_argument("corpus", help="a text file, folder or glob (.gz read transparently), or a bundled text's name "
                                  "(moby-dick); one document per line, blank lines skipped, as a recipe reads it")
    p.add_argument("--out", required=True, metavar="DIR", help="the folder to write (replaced whole if it holds "
                                                              "only an earlier tokembed output)")
    p.add_argument("--format", choices=list(ENCODE_FORMATS), default="tokembed",
                   help="tokembed: ids.npy + offsets.npy + vocab.json + the tokenizer (TokenSequences.open reads "
                        "it); nanogpt: one flat uint16 tokens.bin, an end-of-text id after each document; megatron: "
                        "tokens.bin + tokens.idx (Megatron-LM's indexed dataset)")
    p.add_argument("--eot-id", type=int, metavar="ID",
                   help="the id written after each document (nanogpt: default the tokenizer's <|endoftext|> or eos "
                        "token; megatron: none unless given)")
    p.add_argument("--unit", choices=["line", "paragraph", "file"], default="line",
                   help="what one document is (default: a line)")
    p.add_argument("--field", metavar="KEY", help="read JSON Lines, the document's text at KEY")
    p.add_argument("--errors", choices=["strict", "replace"], default="strict",
                   help="undecodable bytes: an error naming the line (strict), or U+FFFD (replace)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.add_argument("--engine", choices=["local", "dask"],
                   help="local (default): this process's threads; dask: each partition encoded by a worker and "
                        "the parts appended in order (a local cluster of 2 workers unless --scheduler names one; "
                        "docs/encode.md)")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="a running Dask scheduler, e.g. tcp://10.0.0.5:8786 (implies --engine dask; every worker "
                        "must see the corpus and the output folder under the same paths)")
    p.add_argument("--workers", type=int, metavar="N",
                   help="dask: the local cluster's worker processes (default 2), or the workers to wait for")
    p.add_argument("--partition-mb", type=float, metavar="MB", help="dask: target partition size in MiB (default "
                                                                   "128)")
    p.set_defaults(func=cmd_encode)

    p = sub.add_parser("warmup", help="compile and cache every Numba kernel now, so first runs do not pay for it")
    p.add_argument("--jobs", type=int, metavar="N",
                   help="processes compiling at once (default: one per CPU; 1 compiles in this process)")
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
            p.add_argument("--no-metrics", action="store_true",
                           help="train and write the components only: skip measuring each tokenizer on the corpus "
                                "(metrics.json), most of a run's time on a large corpus")
            p.add_argument("-q", "--quiet", action="store_true", help="no progress bars on standard error")
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
