"""Compare tokenizers side by side: every metric for every (tokenizer, corpus), then tables, files and a report.

- :mod:`tokembed.compare.engine`: :func:`compare_tokenizers` reads each corpus once per pass, in chunks, and
  encodes every chunk with every tokenizer (one :class:`~tokembed.metrics.MetricRun` per pair, the encoding
  shared by every metric), so memory stays bounded by a chunk whatever the corpus size;
- :mod:`tokembed.compare.tables`: the :class:`Comparison` it returns, rendered as a terminal table, JSON, CSV and
  Markdown;
- :mod:`tokembed.compare.report`: the self-contained HTML report (needs matplotlib: ``pip install
  'tokembed[report]'``);
- :mod:`tokembed.compare.run`: ``tokembed compare RECIPE`` (:func:`run_comparison`): a recipe's tokenizers trained
  or read from files, compared on its corpora, written into a run folder.

A parallel set (:class:`~tokembed.corpus.ParallelSet`: the same chapters in several languages, one of them the
reference) adds each language as a corpus and the tokenization premium (Petrov et al. 2023) per language. Outputs
are deterministic apart from the timing figures (throughput and encoding seconds).
"""

from ..corpus import ParallelSet
from .engine import compare_tokenizers
from .report import render_html
from .run import PRINT_FORMATS, CompareRun, render, run_comparison
from .tables import FORMATS, Comparison, Result, Sample

__all__ = ["compare_tokenizers", "Comparison", "ParallelSet", "Result", "Sample", "FORMATS", "run_comparison",
           "render", "render_html", "CompareRun", "PRINT_FORMATS"]
