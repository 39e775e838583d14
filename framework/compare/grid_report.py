"""The grid's part of the HTML report: a heat map per evaluation set (rows tokenizers, columns embedders), the
compared vocabulary sizes, and each cell's figures with a link to its vectors in the run folder."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

from .plots import _RC, _WIDTH, _matplotlib, _mpl, _png
from .report import _CSS, _esc

__all__ = ["grid_section", "grid_heatmap", "write_grid_html", "scored_counts"]


def grid_heatmap(grid: Any, set_name: str) -> bytes:
    """PNG: the set's headline score (rho or accuracy) per tokenizer (rows) and embedder (columns), each cell
    annotated with its value (a failed or empty cell shows its reason, greyed)."""
    import numpy as np

    matplotlib, Figure, Canvas = _matplotlib()
    toks, embs = list(grid.tokenizers), list(grid.embedders)
    values = np.full((len(toks), len(embs)), np.nan)
    for i, t in enumerate(toks):
        for j, e in enumerate(embs):
            v = grid.cell(t, e).headline(set_name)
            if v is not None:
                values[i, j] = v
    counts = [u[0] for u in (scored_counts(c.scores.get(set_name) or {}) for c in grid.cells) if u is not None]
    most = max(counts, default=0)
    with matplotlib.rc_context({**_RC, "axes.grid": False}):
        fig = Figure(figsize=(min(_WIDTH, 2.2 + 1.6 * len(embs)), 0.9 + 0.45 * len(toks)))
        Canvas(fig)
        ax = fig.subplots()
        finite = values[np.isfinite(values)]
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        if hi - lo < 1e-9:
            lo, hi = lo - 0.05, hi + 0.05
        cmap = matplotlib.colormaps["viridis"].with_extremes(bad="#e5e7eb")
        image = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=lo, vmax=hi, aspect="auto")
        ax.set_xticks(range(len(embs)), [_mpl(e) for e in embs])
        ax.set_yticks(range(len(toks)), [_mpl(t) for t in toks])
        ax.tick_params(length=0)
        for i, t in enumerate(toks):
            for j, e in enumerate(embs):
                cell = grid.cell(t, e)
                if np.isfinite(values[i, j]):
                    dark = (values[i, j] - lo) / (hi - lo) < 0.55
                    used = scored_counts(cell.scores.get(set_name) or {})
                    label = f"{values[i, j]:.3f}"
                    if used is not None and used[0] < most:  # fewer pairs or questions than the best-covered cell
                        label += f"\n{used[0]:,} of {used[1]:,}"
                    ax.text(j, i, label, ha="center", va="center", fontsize=9 if "\n" not in label else 8,
                            color="white" if dark else "black")
                else:
                    ax.text(j, i, "failed" if cell.error else "n/a", ha="center", va="center", fontsize=8,
                            color="#6b7280")
        measure = "accuracy" if _kind(grid, set_name) == "analogies" else "Spearman rho"
        ax.set_title(_mpl(f"{set_name}: {measure}"))
        fig.colorbar(image, ax=ax, fraction=0.05, pad=0.02)
        return _png(fig)


def scored_counts(score: dict) -> tuple[int, int] | None:
    """``(scored, total)``: the pairs (word pairs) or questions (analogies) of a cell's score on a set that were
    answered, and all of them; None for no score."""
    if score.get("kind") == "word_pairs":
        used, total = score.get("pairs_used"), score.get("pairs_total")
    elif score.get("kind") == "analogies":
        used = score.get("questions_used", score.get("used"))
        total = score.get("questions_total") or score.get("total")
    else:
        return None
    return (int(used or 0), int(total)) if total else None


def _kind(grid: Any, set_name: str) -> str | None:
    for c in grid.cells:
        kind = (c.scores.get(set_name) or {}).get("kind")
        if kind:
            return kind
    return None


def grid_section(grid: Any) -> str:
    """The HTML section: heat maps, vocabulary sizes, and a table of every cell with its interval and coverage."""
    out = ['<section id="grid"><h2>Word vectors by tokenizer</h2>',
           f'<p class="note">Each embedder trained over each tokenizer\'s token sequences of the same corpus; an '
           f'evaluation word split into several pieces gets the {_esc(grid.compose)} of its pieces\' vectors. '
           'Scores: Spearman rho (word pairs, 95% interval by Fisher z) and 3CosAdd accuracy (analogies, answered '
           'among the 30,000 most frequent words of the corpus, composed the same way for every tokenizer). A cell '
           'that scored fewer pairs or questions than the best-covered cell of its map says how many; each map has '
           'its own colour '
           'scale. Grey cells: no score (the cell failed, or too few pairs). The whole grid took '
           f'{grid.seconds:.1f} s.</p>']
    sizes = " · ".join(f"{_esc(t)} {info['vocab_size']:,}" for t, info in grid.tokenizers.items())
    out.append(f'<p class="note"><b>Vocabulary sizes:</b> {sizes}</p>')
    out.append('<div class="heatmaps" style="display:flex;flex-wrap:wrap;gap:12px">')
    for set_name in grid.sets:
        data = base64.b64encode(grid_heatmap(grid, set_name)).decode("ascii")
        out.append(f'<figure class="plot" id="grid-{_esc(set_name)}" style="margin:0"><img alt="{_esc(set_name)} '
                   f'heat map" src="data:image/png;base64,{data}"></figure>')
    out.append("</div>")
    out.append('<div class="table-wrap"><table><thead><tr><th>tokenizer</th><th>embedder</th>'
               + "".join(f"<th>{_esc(s)}</th>" for s in grid.sets)
               + '<th class="num">single-token words</th><th class="num">seconds</th><th>vectors</th></tr>'
               "</thead><tbody>")
    for c in grid.cells:
        row = [f"<th>{_esc(c.tokenizer)}</th><td>{_esc(c.embedder)}</td>"]
        for s in grid.sets:
            score = c.scores.get(s) or {}
            head = c.headline(s)
            if c.error or head is None:
                row.append('<td class="na">n/a</td>')
                continue
            extra = ""
            ci = score.get("spearman_ci95")
            if ci:
                extra = f" <small>[{ci[0]:.3f}, {ci[1]:.3f}]</small>"
            counts = scored_counts(score)
            cover = f"<br><small>{counts[0]:,} of {counts[1]:,}</small>" if counts else ""
            row.append(f'<td class="num">{head:.3f}{extra}{cover}</td>')
        share = "n/a" if c.single_token_share is None else f"{c.single_token_share:.1%}"  # the tokenizer's
        link = f'<a href="{_esc(c.vectors_file)}">{_esc(os.path.basename(c.vectors_file))}</a>' if c.vectors_file \
            else ""
        row.append(f'<td class="num">{share}</td><td class="num">{c.seconds:.1f}</td><td>{link}</td>')
        out.append("<tr>" + "".join(row) + "</tr>")
        if c.error:
            out.append(f'<tr class="error"><td colspan="{len(grid.sets) + 5}">failed: {_esc(c.error)}</td></tr>')
    out.append("</tbody></table></div></section>")
    return "\n".join(out)


def write_grid_html(grid: Any, path: str | os.PathLike, title: str = "Word vectors by tokenizer") -> Path:
    """A report page holding only the grid (for a compare recipe without corpora to compare metrics on)."""
    from .._version import __version__
    from ..io import atomic_write_text

    page = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">', f"<title>{_esc(title)}</title>",
            f"<style>{_CSS}</style></head><body>", f"<header><h1>{_esc(title)}</h1></header>", "<main>",
            grid_section(grid), "</main>",
            f"<footer>Generated by tokembed {_esc(__version__)}. Self-contained: opens offline.</footer>",
            "</body></html>"]
    return atomic_write_text(path, "\n".join(page) + "\n")
