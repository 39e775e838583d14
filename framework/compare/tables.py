"""The result of a comparison and its renderings: :class:`Comparison` (every metric for every tokenizer and
corpus) as a terminal table, JSON, CSV, Markdown, and the HTML report (:mod:`tokembed.compare.report`)."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..errors import TokembedError
from ..metrics import format_value

__all__ = ["Comparison", "Result", "Sample", "FORMATS", "UNK_RATE_LIMIT", "TIMING_MIN_BYTES"]

#: A tokenizer whose unknown-token rate on a corpus is above this is not called best there for a compression metric
#: (``compression`` in the metric's metadata: tokens, characters per token, fertility, ...): emitting ``<unk>`` for
#: every rare word is not compression.
UNK_RATE_LIMIT = 0.01
#: A corpus of fewer UTF-8 bytes than this is too small to time: timing metrics (throughput) get no highlight there.
TIMING_MIN_BYTES = 1_000_000


def fairness_note(markup: str = "text") -> str:
    """The sentence that explains which values are never called best (for legends)."""
    return (f"compression values (tokens, characters per token, fertility, ...) of a tokenizer whose unknown-token "
            f"rate is above {UNK_RATE_LIMIT:.0%} are not compared (shown {'greyed' if markup == 'html' else 'in italics'}"
            f"), and speed is not compared on a corpus under {TIMING_MIN_BYTES / 1e6:g} MB (too small to time)")

#: Output formats of :meth:`Comparison.write` and their file names.
FORMATS: dict[str, str] = {
    "json": "comparison.json",
    "csv": "comparison.csv",
    "md": "comparison.md",
    "txt": "comparison.txt",
    "html": "report.html",
}


# ---------------------------------------------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------------------------------------------
@dataclass
class Result:
    """The metrics of one tokenizer on one corpus.

    Attributes
    ----------
    tokenizer, corpus : str
        Labels.
    values : dict
        Metric name -> value (None where the metric is not defined).
    extras : dict
        Metric name -> its details (the ids hash of ``deterministic``).
    token_lengths : dict of int to int
        Token length in code points (offset span) -> number of tokens.
    seconds : float
        Wall time spent encoding (a timing figure).
    """

    tokenizer: str
    corpus: str
    values: dict[str, Any]
    extras: dict[str, Any] = field(default_factory=dict)
    token_lengths: dict[int, int] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def unk_rate(self) -> float | None:
        """The unknown-token share: the ``unk_rate`` value, or when that metric was not requested the share the
        measuring pass always counts (``extras["unk_rate"]["share"]``)."""
        value = self.values.get("unk_rate")
        return value if value is not None else (self.extras.get("unk_rate") or {}).get("share")

    def to_dict(self) -> dict[str, Any]:
        return {"tokenizer": self.tokenizer, "corpus": self.corpus, "values": dict(self.values),
                "extras": dict(self.extras),
                "token_lengths": {str(k): v for k, v in sorted(self.token_lengths.items())},
                "encode_seconds": round(self.seconds, 4)}


@dataclass
class Sample:
    """One sample sentence of a corpus and its tokens under each tokenizer.

    ``tokens[label]`` is a list of ``(token, id, start, end)``, offsets being code-point spans into ``text``. A token
    that is a piece of a character (a byte-level token whose bytes are not UTF-8 on their own) is written as its
    bytes, ``"<0xF0><0x9F>"``, not as the tokenizer's string (GPT-2's stand-in characters look like real text).
    """

    corpus: str
    text: str
    tokens: dict[str, list[tuple[str, int, int, int]]]

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "tokens": {k: [list(t) for t in v] for k, v in self.tokens.items()}}


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", limit // 2, limit)
    return text[: cut if cut > 0 else limit] + " …"


def _json_safe(value: Any) -> Any:
    try:
        json.dumps(value, allow_nan=False)
        return value
    except (TypeError, ValueError):
        if isinstance(value, dict):
            return {str(k): _json_safe(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [_json_safe(v) for v in value]
        return repr(value)


@dataclass
class Comparison:
    """Every metric for every (tokenizer, corpus), with the metadata to render them.

    Attributes
    ----------
    tokenizers : dict
        Label -> ``{"type", "params", "vocab_size"}``, and ``"origin"`` when known: what it was trained on
        ("trained on path:corpus.txt (1,000 documents, 1.2 MB)") or the file it was loaded from.
    corpora : dict
        Name -> ``{"documents", "characters", "bytes", "words", "parallel"}``.
    metrics : dict
        Name -> the metric's metadata (:meth:`tokembed.metrics.Metric.describe`), in table order.
    results : list of Result
        Corpus by corpus, tokenizers in the order given.
    samples : dict
        Corpus -> list of :class:`Sample`.
    parallel : dict or None
        ``{"name", "reference", "languages", "chapters"}`` when a parallel set was given.
    """

    tokenizers: dict[str, dict[str, Any]]
    corpora: dict[str, dict[str, Any]]
    metrics: dict[str, dict[str, Any]]
    results: list[Result]
    samples: dict[str, list[Sample]] = field(default_factory=dict)
    parallel: dict[str, Any] | None = None

    #: See :data:`UNK_RATE_LIMIT` and :data:`TIMING_MIN_BYTES` (here for the report, which sits below this module).
    unk_rate_limit = UNK_RATE_LIMIT
    timing_min_bytes = TIMING_MIN_BYTES

    @staticmethod
    def fairness_note(markup: str = "text") -> str:
        """The legend's sentence on the values never called best (:func:`fairness_note`)."""
        return fairness_note(markup)

    # -- lookups ----------------------------------------------------------------------------------------------
    def result(self, tokenizer: str, corpus: str) -> Result:
        """The :class:`Result` of one pair; ``KeyError`` if there is none."""
        for r in self.results:
            if r.tokenizer == tokenizer and r.corpus == corpus:
                return r
        raise KeyError(f"no result for tokenizer {tokenizer!r} on corpus {corpus!r}")

    def value(self, tokenizer: str, corpus: str, metric: str) -> Any:
        """One metric value (None where not defined)."""
        return self.result(tokenizer, corpus).values.get(metric)

    def shown_metrics(self, corpus: str | None = None) -> list[str]:
        """Metrics with at least one defined value (the premium disappears without a parallel set); for a ``corpus``
        outside the parallel set, the parallel metrics are left out too."""
        shown = [m for m in self.metrics if any(r.values.get(m) is not None for r in self.results)]
        if corpus is not None and not self.corpora[corpus].get("parallel"):
            shown = [m for m in shown if self.metrics[m].get("scope") != "parallel"]
        return shown

    def excluded(self, corpus: str, metric: str) -> list[str]:
        """Tokenizers whose value of ``metric`` on ``corpus`` is not compared for "best": for a compression metric,
        those whose unknown-token rate there is above :data:`UNK_RATE_LIMIT`."""
        if not self.metrics[metric].get("compression"):
            return []
        return [r.tokenizer for r in self.results if r.corpus == corpus
                and isinstance(r.unk_rate, (int, float)) and r.unk_rate > UNK_RATE_LIMIT]

    def timed_too_briefly(self, corpus: str) -> bool:
        """The corpus is smaller than :data:`TIMING_MIN_BYTES`: its timing figures are noise."""
        return int(self.corpora.get(corpus, {}).get("bytes") or 0) < TIMING_MIN_BYTES

    def best(self, corpus: str, metric: str) -> list[str]:
        """Tokenizers with the best value of ``metric`` on ``corpus``.

        Empty when the metric has no direction (``higher_is_better`` None), when fewer than two values are defined,
        when all defined values are equal (nothing stands out), or for a timing metric on a corpus too small to time
        (:meth:`timed_too_briefly`). The :meth:`excluded` tokenizers (compression bought with unknown tokens) are
        left out.
        """
        meta = self.metrics[metric]
        direction = meta["higher_is_better"]
        if direction is None or (meta.get("timing") and self.timed_too_briefly(corpus)):
            return []
        left_out = set(self.excluded(corpus, metric))
        pairs = [(r.tokenizer, r.values.get(metric)) for r in self.results
                 if r.corpus == corpus and r.tokenizer not in left_out]
        pairs = [(t, v) for t, v in pairs if v is not None]
        if len({v for _, v in pairs}) < 2:
            return []
        target = max(v for _, v in pairs) if direction else min(v for _, v in pairs)
        return [t for t, v in pairs if v == target]

    # -- serialisation ----------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Everything as JSON-able data (what ``comparison.json`` holds; :meth:`from_dict` reads it back)."""
        from .._version import __version__

        return {
            "format": "tokembed-comparison",
            "format_version": 1,
            "tokembed_version": __version__,
            "tokenizers": self.tokenizers,
            "corpora": self.corpora,
            "parallel": self.parallel,
            "metrics": self.metrics,
            "results": [r.to_dict() for r in self.results],
            "best": {c: {m: self.best(c, m) for m in self.metrics if self.best(c, m)} for c in self.corpora},
            "samples": {c: [s.to_dict() for s in v] for c, v in self.samples.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Comparison":
        """Rebuild a comparison from :meth:`to_dict` data (to re-render a report from ``comparison.json``).

        Raises
        ------
        TokembedError
            If ``data`` is not a tokembed comparison.
        """
        if not isinstance(data, Mapping) or data.get("format") != "tokembed-comparison":
            raise TokembedError('not a tokembed comparison (no "format": "tokembed-comparison")')
        try:
            results = [Result(r["tokenizer"], r["corpus"], dict(r["values"]), dict(r.get("extras") or {}),
                              {int(k): int(v) for k, v in (r.get("token_lengths") or {}).items()},
                              float(r.get("encode_seconds") or 0.0)) for r in data["results"]]
            samples = {c: [Sample(c, s["text"], {k: [tuple(t) for t in v] for k, v in s["tokens"].items()})
                           for s in v] for c, v in (data.get("samples") or {}).items()}
            return cls(dict(data["tokenizers"]), dict(data["corpora"]), dict(data["metrics"]), results, samples,
                       data.get("parallel"))
        except (KeyError, TypeError, ValueError) as exc:
            raise TokembedError(f"broken comparison data: {type(exc).__name__}: {exc}") from None

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON (1-space indent, UTF-8, final newline)."""
        from ..io import dumps_json

        return dumps_json(self.to_dict())

    def to_csv(self) -> str:
        """One row per (tokenizer, corpus): ``tokenizer, type, corpus``, then every metric (raw values; empty = n/a)."""
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        names = list(self.metrics)
        writer.writerow(["tokenizer", "type", "corpus", *names])
        for r in self.results:
            cells = []
            for m in names:
                v = r.values.get(m)
                cells.append("" if v is None else ("true" if v is True else "false" if v is False else v))
            writer.writerow([r.tokenizer, self.tokenizers[r.tokenizer]["type"], r.corpus, *cells])
        return buf.getvalue()

    def _cell(self, r: Result, metric: str) -> str:
        return format_value(r.values.get(metric), self.metrics[metric].get("display", ".3f"))

    def to_markdown(self) -> str:
        """A Markdown table per corpus (best values in bold), then the metrics' definitions."""
        lines = ["# Tokenizer comparison", ""]
        n_tok, n_corp = len(self.tokenizers), len(self.corpora)
        lines.append(f"{n_tok} tokenizer{'s' * (n_tok != 1)} on {n_corp} corp{'ora' if n_corp != 1 else 'us'}. The "
                     "best value of each column on each corpus is in **bold** (where a direction is better and the "
                     f"values differ); {fairness_note()}.")
        origins = [(label, info["origin"]) for label, info in self.tokenizers.items() if info.get("origin")]
        if origins:
            lines += [""] + [f"- {_md(label)}: {_md(origin)}" for label, origin in origins]
        for corpus, info in self.corpora.items():
            shown = self.shown_metrics(corpus)
            lines += ["", f"## {_md(corpus)}", "", _corpus_line(info), ""]
            lines.append("| tokenizer | type | " + " | ".join(_md(self.metrics[m].get("label") or m) for m in shown)
                         + " |")
            lines.append("|---|---|" + "---:|" * len(shown))
            for r in (r for r in self.results if r.corpus == corpus):
                cells = []
                for m in shown:
                    text = _md(self._cell(r, m))
                    cells.append(f"**{text}**" if r.tokenizer in self.best(corpus, m) else
                                 f"*{text}*" if r.tokenizer in self.excluded(corpus, m) else text)
                lines.append(f"| {_md(r.tokenizer)} | {_md(self.tokenizers[r.tokenizer]['type'])} | "
                             + " | ".join(cells) + " |")
        if self.parallel:
            p = self.parallel
            lines += ["", f"Parallel set {_md(p['name'])}: {len(p['languages'])} languages, {p['chapters']} aligned "
                      f"chapters, reference {_md(p['reference'])}."]
        lines += ["", "## Metrics", "", "| metric | unit | better | definition | source |", "|---|---|---|---|---|"]
        for name, meta in self.metrics.items():
            better = {True: "higher", False: "lower", None: "—"}[meta["higher_is_better"]]
            lines.append(f"| `{name}` | {_md(meta['unit'])} | {better} | {_md(meta['definition'])} | "
                         f"{_md(meta['source'])} |")
        return "\n".join(lines) + "\n"

    def to_table(self, color: bool | None = None, width: int | None = None) -> str:
        """A plain-text table for the terminal: one row per (corpus, tokenizer), one column per metric.

        Parameters
        ----------
        color : bool, optional
            Highlight best values in bold green (ANSI). Default: when standard output is a terminal and
            ``NO_COLOR`` is unset. Without colour a best value is marked with ``*``.
        width : int, optional
            Wrap the metric columns into several blocks narrower than this. Default: the terminal's width.
        """
        if color is None:
            color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        if width is None:
            width = shutil.get_terminal_size((120, 24)).columns
        shown = self.shown_metrics()
        rows: list[tuple[str, str, list[tuple[str, bool]]]] = []
        for corpus in self.corpora:
            for r in (r for r in self.results if r.corpus == corpus):
                rows.append((corpus, r.tokenizer,
                             [(self._cell(r, m), r.tokenizer in self.best(corpus, m)) for m in shown]))
        mark = "" if color else "*"

        def cell_text(text: str, best: bool) -> str:
            return text + (mark if best else (" " if mark else ""))

        head_w = [max([len("corpus")] + [len(c) for c, _, _ in rows]),
                  max([len("tokenizer")] + [len(t) for _, t, _ in rows])]
        col_w = [max([len(self.metrics[m].get("label") or m)] + [len(cell_text(*row[2][i])) for row in rows])
                 for i, m in enumerate(shown)]
        blocks: list[list[int]] = [[]]
        used = head_w[0] + head_w[1] + 2
        for i, w in enumerate(col_w):
            if blocks[-1] and used + 2 + w > width:
                blocks.append([])
                used = head_w[0] + head_w[1] + 2
            blocks[-1].append(i)
            used += 2 + w
        out: list[str] = []
        for block in blocks:
            if out:
                out.append("")
            header = ["corpus".ljust(head_w[0]), "tokenizer".ljust(head_w[1])]
            header += [(self.metrics[shown[i]].get("label") or shown[i]).rjust(col_w[i]) for i in block]
            out.append("  ".join(header).rstrip())
            out.append("-" * len(out[-1]))
            previous = None
            for corpus, tok, cells in rows:
                line = [(corpus if corpus != previous else "").ljust(head_w[0]), tok.ljust(head_w[1])]
                for i in block:
                    text, best = cells[i]
                    padded = cell_text(text, best).rjust(col_w[i])
                    if color and best:
                        padded = padded.replace(text, f"\x1b[1;32m{text}\x1b[0m", 1)
                    line.append(padded)
                out.append("  ".join(line).rstrip())
                previous = corpus
        out.append("")
        out.append(("best value per corpus in bold green" if color else "* best value per corpus")
                   + "; n/a: not defined for that corpus; "
                   + fairness_note().replace(" (shown in italics)", ""))
        return "\n".join(out)

    def to_html(self, title: str | None = None, grid: Any = None) -> str:
        """The self-contained HTML report (see :func:`tokembed.compare.report.render_html`; needs matplotlib)."""
        from .report import render_html

        return render_html(self, title=title, grid=grid)

    def write(self, out_dir: str | os.PathLike,
              formats: Iterable[str] = ("json", "csv", "md", "html"), grid: Any = None) -> dict[str, Path]:
        """Write the comparison into ``out_dir`` (created), each file atomically.

        Parameters
        ----------
        out_dir : path
        formats : iterable of {"json", "csv", "md", "txt", "html"}
            File names are in :data:`FORMATS` (``comparison.json``, ..., ``report.html``).
        grid : Grid, optional
            Adds the grid's section to ``report.html``.

        Returns
        -------
        dict
            Format -> path written.

        Raises
        ------
        TokembedError
            If a format is unknown, or ``html`` is asked without matplotlib installed.
        """
        from ..io import atomic_write_text

        formats = list(formats)
        unknown = [f for f in formats if f not in FORMATS]
        if unknown:
            raise TokembedError(f"unknown output format(s) {', '.join(map(repr, unknown))}; "
                                f"choose from {', '.join(FORMATS)}")
        render = {"json": self.to_json, "csv": self.to_csv, "md": self.to_markdown,
                  "txt": lambda: self.to_table(color=False, width=10_000) + "\n",
                  "html": lambda: self.to_html(grid=grid)}
        out = Path(out_dir)
        return {f: atomic_write_text(out / FORMATS[f], render[f]()) for f in dict.fromkeys(formats)}


def _md(text: Any) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _corpus_line(info: Mapping[str, Any]) -> str:
    return (f"{info['documents']:,} documents, {info['characters']:,} characters, {info['bytes']:,} bytes, "
            f"{info['words']:,} whitespace words" + (" (parallel set)" if info.get("parallel") else ""))
