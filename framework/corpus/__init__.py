"""Corpus readers: text files, folders, globs, ``.gz``, JSONL fields, bundled samples and named datasets.

A :class:`Corpus` is a re-iterable stream of documents (``str``): one per line (``unit="line"``, the default for
text), one per file (``unit="file"``) or one per JSONL record (``format="jsonl"``, the string at ``field``). It
never holds the whole corpus in memory; each iteration reads the files again.

Errors are :class:`~tokembed.errors.CorpusError` naming the file, the line where it is known and, for undecodable bytes, the byte offset.

The package: :mod:`~tokembed.corpus.files` (paths, bundled texts, first-bytes checks), :mod:`~tokembed.corpus.formats`
(the table of formats), :mod:`~tokembed.corpus.partitions` (byte ranges for the engine),
:mod:`~tokembed.corpus.reader` (:class:`Corpus`, :func:`open_corpus`) and :mod:`~tokembed.corpus.parallel`
(:class:`ParallelSet`).
"""

from .files import (
    BUILTIN_TEXTS,
    SNIFF_BYTES,
    builtin_names,
    builtin_path,
    check_file_start,
    expand_paths,
    read_text,
)
from .formats import ERROR_MODES, FORMATS, UNITS, Format, implied_format
from .parallel import ParallelSet, open_parallel
from .partitions import Partition
from .reader import Corpus, open_corpus, read_documents, spread

__all__ = ["Corpus", "Partition", "ParallelSet", "Format", "FORMATS", "UNITS", "ERROR_MODES", "open_corpus",
           "read_documents", "implied_format", "open_parallel", "spread", "BUILTIN_TEXTS", "builtin_names", "builtin_path", "expand_paths", "read_text",
           "check_file_start", "SNIFF_BYTES"]
