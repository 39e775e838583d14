"""The HTML report of a tokenizer comparison: one self-contained file that opens offline.

:func:`render_html` turns a :class:`~tokembed.compare.Comparison` into a single HTML page with

- a summary table per corpus (every metric, the best value of each column highlighted, the definition and unit of
  each metric on hover of its header);
- plots drawn with matplotlib and embedded as base64 PNG: characters per token and fertility per tokenizer and
  corpus, the distribution of token lengths, and the tokenization premium per language (with a parallel set);
- a segmentation view: sample sentences of each corpus split by each tokenizer side by side, each token a box
  whose ``title`` (shown on hover) gives its id, its string and its character span;
- the metrics' definitions and sources, the tokenizers' parameters and the corpora's sizes.

No script, font, stylesheet or image is fetched: everything is inline. All text is HTML-escaped. The output is
deterministic for a given comparison (PNG metadata carries no date or version); only the timing figures (MB/s)
change between runs.

Matplotlib is imported only when a report is drawn (the ``report`` extra: ``pip install 'tokembed[report]'``).
"""

from __future__ import annotations

import base64
import html
import json
import os
from pathlib import Path
from typing import Any

from ..metrics import format_value
from .boundaries import agreeing
from .plots import LABEL_NOTE, MARK_NOTE, PLOTS, chart_data, draw_plots

__all__ = ["render_html", "write_html", "draw_plots", "PLOTS"]


def _esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


# ---------------------------------------------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------------------------------------------
_CSS = """
:root { --fg:#1f2937; --muted:#6b7280; --line:#e5e7eb; --bg:#f6f7f9; --card:#fff; --accent:#2563eb;
        --best-bg:#dcfce7; --best-fg:#14532d; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--fg); line-height:1.5;
       font:15px/1.5 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", "DejaVu Sans",
       sans-serif; }
header { background:#111827; color:#f9fafb; padding:28px 36px 20px; }
header h1 { margin:0 0 4px; font-size:26px; font-weight:650; letter-spacing:-0.01em; }
header .lede { margin:0; color:#d1d5db; }
header nav { margin-top:14px; display:flex; gap:18px; flex-wrap:wrap; }
header nav a { color:#93c5fd; text-decoration:none; font-size:14px; }
main { max-width:1440px; margin:0 auto; padding:8px 28px 40px; }
section { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:20px 20px;
          margin-top:24px; box-shadow:0 1px 2px rgba(0,0,0,.04); }
h2 { margin:0 0 6px; font-size:20px; }
h3 { margin:22px 0 8px; font-size:16px; }
h3 small { font-weight:400; color:var(--muted); font-size:13px; margin-left:8px; }
p.note { color:var(--muted); margin:4px 0 12px; font-size:14px; }
.table-wrap { overflow-x:auto; }
table { border-collapse:collapse; font-size:14px; }
th, td { padding:6px 10px; border-bottom:1px solid var(--line); text-align:left; vertical-align:top; }
thead th { font-weight:600; color:#374151; border-bottom:2px solid #d1d5db; white-space:nowrap; }
table.summary { font-size:13px; }
table.summary th, table.summary td { padding:6px 6px; }
table.summary thead th { white-space:normal; vertical-align:bottom; line-height:1.25; }
table.summary td.num, table.summary th.num { text-align:right; font-variant-numeric:tabular-nums; }
table.summary td.num { white-space:nowrap; }
table.summary tbody tr:hover { background:#f9fafb; }
table.summary tbody th { font-weight:600; white-space:nowrap; }
table.summary tbody th .type { display:block; font-weight:400; font-size:12px; }
td.best { background:var(--best-bg); color:var(--best-fg); font-weight:700; }
td.excluded { color:var(--muted); background:#f3f4f6; font-style:italic; }
td.na { color:#9ca3af; font-style:italic; }
td.flagged { background:#fef3c7; color:#92400e; }
td.best.flagged { background:var(--best-bg); color:var(--best-fg); box-shadow:inset 0 -3px 0 #f59e0b; }
p.flag { margin:2px 0 8px; padding:6px 10px; background:#fef3c7; color:#92400e; border-radius:6px; font-size:13.5px; }
.dir { color:var(--muted); font-weight:400; margin-left:3px; }
.type { color:var(--muted); }
figure.plot { margin:18px 0 26px; }
figure.plot img { max-width:100%; height:auto; display:block; border:1px solid var(--line); border-radius:6px; }
figure.plot figcaption { color:var(--muted); font-size:13.5px; margin-top:6px; max-width:900px; }
.sample { border:1px solid var(--line); border-radius:8px; padding:10px 14px; margin:10px 0 14px; }
.sample-text { margin:0 0 8px; font-size:14px; color:#374151; }
.seg-row { display:grid; grid-template-columns: 140px 1fr 90px; gap:10px; align-items:start; padding:4px 0;
           border-top:1px dashed var(--line); }
.seg-label { font-weight:600; font-size:13px; padding-top:3px; overflow-wrap:anywhere; }
.seg-count { color:var(--muted); font-size:12.5px; text-align:right; padding-top:3px; white-space:nowrap; }
.seg-tokens { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace;
              font-size:13px; line-height:1.9; }
.tok { display:inline-block; white-space:pre; padding:0 3px; margin:1px 1px; border:1px solid; border-radius:3px;
       line-height:1.45; cursor:default; }
.tok.t0 { background:#e3edfc; border-color:#9dbbea; }
.tok.t1 { background:#fdecd8; border-color:#eab37a; }
.tok.part { background:#f3e8ff; border-color:#b794e6; border-style:dashed; }
.tok.unk { background:#fee2e2; border-color:#ef9a9a; color:#991b1b; }
.tok.special { background:#e5e7eb; border-color:#9ca3af; }
.tok:hover { outline:2px solid var(--accent); }
.ws { color:#9ca3af; }
.gap { white-space:pre; color:#c0c4cc; }
.diff-input { position:absolute; opacity:0; pointer-events:none; }
.diff-pick { position:sticky; top:0; background:var(--card); padding:6px 0 8px; z-index:1;
             border-bottom:1px solid var(--line); margin-bottom:6px; }
.diff-side { display:flex; flex-wrap:wrap; gap:4px; align-items:center; margin:3px 0; font-size:13px; }
.diff-side b { width:18px; }
.diff-side label { border:1px solid #d1d5db; border-radius:4px; padding:1px 7px; cursor:pointer; }
.tok.diffed { background:#fde047; border-color:#a16207; color:#422006; }
.legend-tok { margin-right:14px; font-size:13px; color:var(--muted); }
td.def { max-width:520px; }
td.src { color:#4b5563; font-size:13px; max-width:360px; }
code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace;
       font-size:12.5px; background:#f3f4f6; padding:1px 4px; border-radius:3px; }
footer { text-align:center; color:var(--muted); font-size:13px; padding:10px 0 30px; }
"""


def _visible(text: str) -> str:
    """Escape ``text`` and make whitespace visible: spaces as middle dots, tabs and newlines as arrows."""
    out = []
    for ch in text:
        if ch == " ":
            out.append('<span class="ws">·</span>')
        elif ch == "\t":
            out.append('<span class="ws">→</span>')
        elif ch in "\r\n":
            out.append('<span class="ws">↵</span>')
        else:
            out.append(_esc(ch))
    return "".join(out)


def _gap(text: str) -> str:
    return f'<span class="gap">{_visible(text)}</span>' if text else ""


def _segmentation(text: str, tokens: list[tuple[str, int, int, int]], unk_token: Any,
                  agree: list[list[int]] | None = None) -> str:
    """Token boxes for one sentence: the text each token covers, in order; gaps the tokenizer skipped stay plain.

    A token whose span starts inside the previous token's (a byte piece of the same character) shows its own
    string in a dashed box; a token without span (a special token) shows its string in a grey box. ``agree`` gives,
    per token, the positions (in the comparison's tokenizer order) of the tokenizers that cut it out the same way
    (:func:`tokembed.compare.boundaries.agreeing`): each becomes a class ``s<k>``, which the boundary diff's style
    rules read.
    """
    parts = []
    pos = 0
    for k, (tok, tid, start, end) in enumerate(tokens):
        start, end = max(0, min(start, len(text))), max(0, min(end, len(text)))
        span_text = text[start:end]
        where = f"{start}\u2013{end}"
        piece = tok.startswith("<0x") and tok.endswith(">")  # the engine writes a character's pieces as bytes
        if end <= start:
            cls, shown, note = "special", tok, "no span in the text"
        elif start < pos:
            cls, shown, note = "part", tok, "shares its characters with the token before (a piece of a character)"
        elif piece:
            parts.append(_gap(text[pos:start]))
            cls, shown, note = "part", tok, f"the first bytes of {span_text!r} (a piece of a character)"
            pos = end
        else:
            parts.append(_gap(text[pos:start]))
            cls, shown, note = f"t{k % 2}", span_text, ""
            if isinstance(unk_token, str) and tok == unk_token and span_text != tok:
                cls = "unk"
                note = "unknown token"
            pos = end
        title = f"id {tid} · token {tok!r} · characters {where}" + (f" · {note}" if note else "")
        if agree is not None:
            cls += "".join(f" s{j}" for j in agree[k])
        parts.append(f'<span class="tok {cls}" title="{_esc(title)}" data-id="{tid}">{_visible(shown)}</span>')
    parts.append(_gap(text[pos:]))
    return "".join(parts)


def _summary(comparison: Any) -> str:
    out = ['<section id="summary"><h2>Summary</h2>',
           '<p class="note">One table per corpus. The best value of each column on that corpus is '
           '<span style="background:var(--best-bg);color:var(--best-fg);font-weight:700;padding:0 4px">'
           'highlighted</span> (only where a direction is better and the values differ). ↑ higher is better, '
           '↓ lower is better. Hover a column header for its definition and unit. Not compared: '
           f'{_esc(comparison.fairness_note("html"))}.</p>']
    for corpus, info in comparison.corpora.items():
        shown = comparison.shown_metrics(corpus)
        out.append(f'<h3 id="corpus-{_esc(_slug(corpus))}">{_esc(corpus)}<small>{_esc(_corpus_stats(info))}'
                   "</small></h3>")
        flag = comparison.same_text_note(corpus)
        if flag:
            out.append(f'<p class="flag" data-corpus="{_esc(corpus)}">\u26a0 {_esc(flag)}</p>')
        out.append('<div class="table-wrap"><table class="summary"><thead><tr><th>tokenizer</th>')
        for m in shown:
            meta = comparison.metrics[m]
            arrow = {True: "↑", False: "↓", None: ""}[meta["higher_is_better"]]
            tip = f"{m}: {meta['definition']} Unit: {meta['unit']}."
            out.append(f'<th class="num" title="{_esc(tip)}" data-metric="{_esc(m)}">'
                       f'{_esc(meta.get("label") or m)}<span class="dir">{arrow}</span></th>')
        out.append("</tr></thead><tbody>")
        for r in (r for r in comparison.results if r.corpus == corpus):
            kind = comparison.tokenizers[r.tokenizer]["type"]
            kind_html = f'<span class="type">{_esc(kind)}</span>' if kind != r.tokenizer else ""
            out.append(f'<tr><th scope="row" title="type: {_esc(kind)}">{_esc(r.tokenizer)}{kind_html}</th>')
            for m in shown:
                v = r.values.get(m)
                cls = ["num"]
                tips = []
                if v is None:
                    cls.append("na")
                elif r.tokenizer in comparison.best(corpus, m):
                    cls.append("best")
                elif r.tokenizer in comparison.excluded(corpus, m):
                    cls.append("excluded")
                    rate = format_value(comparison.unk_rate(r.tokenizer, corpus), ".1%")
                    tips.append(f"not compared: {rate} of its tokens are unknown "
                                f"(above {comparison.unk_rate_limit:.0%})")
                if v is not None and flag and comparison.metrics[m].get("scope") == "parallel":
                    cls.append("flagged")
                    tips.append(flag)
                tip = f' title="{_esc(" ".join(tips))}"' if tips else ""
                text = format_value(v, comparison.metrics[m].get("display", ".3f"))
                out.append(f'<td class="{" ".join(cls)}" data-metric="{_esc(m)}"{tip}>{_esc(text)}</td>')
            out.append("</tr>")
        out.append("</tbody></table></div>")
    out.append("</section>")
    return "\n".join(out)


def _plots(comparison: Any) -> str:
    images = draw_plots(comparison)
    charts = chart_data(comparison)
    out = ['<section id="plots"><h2>Plots</h2>']
    for key, png in images.items():
        data = base64.b64encode(png).decode("ascii")
        caption = PLOTS[key]
        marked = any(row["marked"] for row in charts[key]["series"])
        note = (MARK_NOTE.format(limit=comparison.unk_rate_limit) + " " if marked else "") + LABEL_NOTE
        out.append(f'<figure class="plot" id="plot-{key}"><img alt="{_esc(caption)}" '
                   f'src="data:image/png;base64,{data}"><figcaption>{_esc(caption)} {_esc(note)}</figcaption>'
                   "</figure>")
    if "premium" not in images:
        out.append('<p class="note">No parallel set was given, so there is no premium plot.</p>')
    out.append("</section>")
    return "\n".join(out)


def _segmentation_view(comparison: Any) -> str:
    labels = list(comparison.tokenizers)
    index = {label: j for j, label in enumerate(labels)}
    out = ['<section id="segmentation"><h2>Segmentation</h2>',
           '<p class="note">Sample sentences of each corpus split by each tokenizer. Each box is one token showing the '
           'text it covers; hover a token for its id. '
           '<span class="legend-tok">· space</span><span class="legend-tok">↵ line break</span>'
           '<span class="legend-tok">faded: text no token covers</span>'
           '<span class="tok part">dashed</span> a piece of a character '
           '<span class="tok unk">red</span> unknown token</p>']
    diff = len(labels) >= 2
    if diff:
        out.append(_diff_picker(labels))
    for corpus, samples in comparison.samples.items():
        out.append(f'<h3>{_esc(corpus)}<small>{len(samples)} sample sentences</small></h3>')
        for i, sample in enumerate(samples):
            agree = agreeing(sample.text, sample.tokens) if diff else {}
            out.append(f'<div class="sample" data-corpus="{_esc(corpus)}" data-sample="{i}">')
            out.append(f'<p class="sample-text">{_esc(sample.text)}</p>')
            for label, tokens in sample.tokens.items():
                unk = (comparison.tokenizers.get(label, {}).get("params") or {}).get("unk_token")
                marks = [[index[a] for a in row if a in index] for row in agree[label]] if label in agree else None
                row = f" r{index[label]}" if label in index else ""
                out.append(f'<div class="seg-row{row}" data-tokenizer="{_esc(label)}">'
                           f'<span class="seg-label">{_esc(label)}</span>'
                           f'<span class="seg-tokens">{_segmentation(sample.text, tokens, unk, marks)}</span>'
                           f'<span class="seg-count">{len(tokens)} tokens</span></div>')
            out.append("</div>")
    if diff:
        out.append("</div></div>")  # .diff-samples, .diff
    out.append("</section>")
    return "\n".join(out)


def _diff_css(n: int) -> str:
    """The boundary diff's style, for ``n`` tokenizers: without script, for each pair picked (A, B), rules put A's
    and B's rows first in every sample and highlight each of their tokens that the other does not cut out the same
    way (a token lacking the class ``s<other>``)."""
    if n < 2:
        return ""
    rules = [".diff .sample { display:flex; flex-direction:column; }", ".diff .sample-text { order:-3; }"]
    for i in range(n):
        rules.append(f"#diff-a{i}:checked ~ .diff-pick label[for=diff-a{i}], "
                     f"#diff-b{i}:checked ~ .diff-pick label[for=diff-b{i}] {{ background:#1f2937; color:#fff; }}")
        rules.append(f"#diff-a{i}:checked ~ .diff-samples .r{i} {{ order:-2; }}")
        rules.append(f"#diff-b{i}:checked ~ .diff-samples .r{i} {{ order:-1; }}")
        for j in range(n):
            if i != j:
                pair = f"#diff-a{i}:checked ~ #diff-b{j}:checked ~ .diff-samples"
                rules.append(f"{pair} .r{i} .tok:not(.s{j}), {pair} .r{j} .tok:not(.s{i}) "
                             "{ background:#fde047; border-color:#a16207; color:#422006; }")
                rules.append(f"{pair} .r{i} .seg-label, {pair} .r{j} .seg-label {{ color:#a16207; }}")
    return "\n".join(rules)


def _diff_picker(labels: list[str]) -> str:
    """The boundary diff's controls: two rows of radio buttons (tokenizers A and B, the first two picked), then
    the samples as their siblings (the caller closes both ``div``); :func:`_diff_css` styles them."""
    n = len(labels)
    inputs = "".join(f'<input type="radio" name="diff-{side}" id="diff-{side}{k}" class="diff-input"'
                     f'{" checked" if k == (0 if side == "a" else 1) else ""}>'
                     for side in "ab" for k in range(n))
    pick = []
    for side, name in (("a", "A"), ("b", "B")):
        pick.append(f'<div class="diff-side"><b>{name}</b>'
                    + "".join(f'<label for="diff-{side}{k}">{_esc(label)}</label>' for k, label in enumerate(labels))
                    + "</div>")
    return ('<div class="diff">' + inputs
            + '<div class="diff-pick"><p class="note">Boundary diff: pick two tokenizers; in every sample their rows '
            'come first, and each token that the other one does not cut out the same way is '
            '<span class="tok t0 diffed">highlighted</span> (compared on characters: the spaces a token carries '
            'and the bytes of one character do not count).</p>' + "".join(pick) + "</div>"
            '<div class="diff-samples">')


def _glossary(comparison: Any) -> str:
    out = ['<section id="metrics"><h2>Metrics</h2>',
           '<p class="note">What each column means. Documents are encoded once, without added special tokens.</p>',
           '<div class="table-wrap"><table><thead><tr><th>metric</th><th>unit</th><th>better</th>'
           "<th>definition</th><th>source</th></tr></thead><tbody>"]
    for name, meta in comparison.metrics.items():
        better = {True: "higher", False: "lower", None: "—"}[meta["higher_is_better"]]
        out.append(f'<tr id="metric-{_esc(name)}"><td><code>{_esc(name)}</code><br>{_esc(meta.get("label") or name)}'
                   f'</td><td>{_esc(meta["unit"])}</td><td>{better}</td><td class="def">{_esc(meta["definition"])}'
                   f'</td><td class="src">{_esc(meta["source"])}</td></tr>')
    out.append("</tbody></table></div></section>")
    return "\n".join(out)


def _setup(comparison: Any) -> str:
    out = ['<section id="setup"><h2>Tokenizers and corpora</h2>',
           '<div class="table-wrap"><table><thead><tr><th>tokenizer</th><th>type</th><th class="num">vocabulary</th>'
           "<th>trained on / loaded from</th><th>parameters</th></tr></thead><tbody>"]
    for label, info in comparison.tokenizers.items():
        params = json.dumps(info.get("params") or {}, ensure_ascii=False, sort_keys=True)
        origin = info.get("origin") or "not recorded"
        out.append(f"<tr><th>{_esc(label)}</th><td>{_esc(info['type'])}</td>"
                   f"<td class=\"num\">{info['vocab_size']:,}</td><td>{_esc(origin)}</td>"
                   f"<td><code>{_esc(params)}</code></td></tr>")
    out.append("</tbody></table></div>")
    out.append('<h3>Corpora</h3><div class="table-wrap"><table><thead><tr><th>corpus</th><th>documents</th>'
               "<th>characters</th><th>UTF-8 bytes</th><th>whitespace words</th></tr></thead><tbody>")
    for name, info in comparison.corpora.items():
        out.append(f"<tr><th>{_esc(name)}</th><td>{info['documents']:,}</td><td>{info['characters']:,}</td>"
                   f"<td>{info['bytes']:,}</td><td>{info['words']:,}</td></tr>")
    out.append("</tbody></table></div>")
    if comparison.parallel:
        p = comparison.parallel
        out.append(f'<p class="note">Parallel set <b>{_esc(p["name"])}</b>: {len(p["languages"])} languages '
                   f'({_esc(", ".join(p["languages"]))}), {p["chapters"]} aligned chapters, reference '
                   f'<b>{_esc(p["reference"])}</b>.</p>')
    out.append("</section>")
    return "\n".join(out)


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in text).strip("-").lower() or "corpus"


def _corpus_stats(info: dict[str, Any]) -> str:
    return (f"{info['documents']:,} documents · {info['characters']:,} characters · {info['words']:,} words"
            + (" · parallel set" if info.get("parallel") else ""))


def render_html(comparison: Any, title: str | None = None, grid: Any = None) -> str:
    """The report as one HTML document (str).

    Parameters
    ----------
    comparison : tokembed.compare.Comparison
    title : str, optional
        Page title (default "Tokenizer comparison").
    grid : tokembed.compare.grid.Grid, optional
        Adds the grid's section (heat maps per evaluation set; :mod:`tokembed.compare.grid_report`).

    Raises
    ------
    TokembedError
        If matplotlib is not installed.
    """
    from .._version import __version__

    title = title or "Tokenizer comparison"
    n_tok, n_corp, n_met = len(comparison.tokenizers), len(comparison.corpora), len(comparison.shown_metrics())
    lede = (f"{n_tok} tokenizer{'s' * (n_tok != 1)} · {n_corp} corpor{'a' if n_corp != 1 else 'us'} · "
            f"{n_met} metrics · tokembed {__version__}")
    body = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_esc(title)}</title>",
        f"<style>{_CSS}{_diff_css(len(comparison.tokenizers))}</style></head><body>",
        f"<header><h1>{_esc(title)}</h1><p class=\"lede\">{_esc(lede)}</p>",
        '<nav><a href="#summary">Summary</a><a href="#plots">Plots</a><a href="#segmentation">Segmentation</a>'
        '<a href="#metrics">Metrics</a><a href="#setup">Tokenizers and corpora</a>'
        + ('<a href="#grid">Word vectors</a>' if grid is not None else "") + "</nav></header>",
        "<main>",
        _summary(comparison),
        _plots(comparison),
        _segmentation_view(comparison),
        _glossary(comparison),
        _setup(comparison),
        _grid(grid),
        "</main>",
        f"<footer>Generated by tokembed {_esc(__version__)}. Self-contained: opens offline.</footer>",
        "</body></html>",
    ]
    return "\n".join(body) + "\n"


def write_html(comparison: Any, path: str | os.PathLike, title: str | None = None, grid: Any = None) -> Path:
    """Write :func:`render_html` to ``path`` atomically; returns the path."""
    from ..io import atomic_write_text

    return atomic_write_text(path, render_html(comparison, title=title, grid=grid))


def _grid(grid: Any) -> str:
    """The grid's section, which the grid renders itself (:meth:`tokembed.compare.grid.Grid.html_section`)."""
    return "" if grid is None else grid.html_section()
