"""The plots of the HTML report (:mod:`tokembed.compare.report`), drawn with matplotlib as PNG bytes.

:func:`draw_plots` draws characters per token and fertility per tokenizer and corpus, the distribution of token
lengths, and the tokenization premium per language (with a parallel set). Every figure has the same width
(``_WIDTH``) and the same style (``_RC``); PNG metadata carries no date or version, so the bytes are deterministic.
Matplotlib is imported only when a plot is drawn (the ``report`` extra: ``pip install 'tokembed[report]'``).
"""

from __future__ import annotations

import io
from typing import Any

from ..errors import TokembedError

__all__ = ["draw_plots", "chart_data", "overlaps", "PLOTS", "MARK_NOTE", "LABEL_NOTE"]

#: Plot id -> caption. ``premium`` is drawn only when the comparison has a parallel set.
PLOTS: dict[str, str] = {
    "chars-per-token": "Characters per token (code points / token) per tokenizer and corpus; higher means stronger "
                       "compression.",
    "fertility": "Fertility (tokens / whitespace-separated word) per tokenizer and corpus; lower is better, 1 means "
                 "one token per word. n/a for text written without spaces.",
    "token-lengths": "Distribution of token lengths in characters (the length of each token's span in the text), "
                     "as a share of all tokens of the corpus.",
    "premium": "Tokenization premium per language: tokens needed for a chapter divided by tokens for the same chapter "
               "in the reference language (bars: median over chapters, diamonds: mean). Lower is better; the "
               "dashed line is parity. Under each language, the share of its prose identical to the reference's "
               "(lines over 80 characters); a language marked \u26a0 is mostly the reference's text, so its premium "
               "says little about that language.",
}
#: Said under every plot where a tokenizer is marked: how it is drawn.
MARK_NOTE = ("Hatched bars and dashed lines: a tokenizer with more than {limit:.0%} unknown tokens on that corpus "
             "(its compression is bought with unknown tokens and is not compared).")
#: Said under every plot: where the values not written are.
LABEL_NOTE = "Values are written only where they fit without overlapping; every value is in the summary tables."

_PALETTE = ["#3b6fb6", "#e07b39", "#3a9a5b", "#c0392b", "#7d5ba6", "#8c6d46", "#d16ba5", "#6b7280", "#b8a22f",
            "#2a9db5"]
_MAX_LEN = 16  # token lengths >= this are pooled into one "16+" bin
_WIDTH = 10.0  # inches: every plot has the same width, so all are drawn at one scale
_DPI = 110  # the figures' resolution, as saved: the value labels are laid out in these pixels


def _matplotlib():
    try:
        import matplotlib
        import matplotlib.lines
        import matplotlib.patches
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise TokembedError("the HTML report draws its plots with matplotlib, which is not installed: "
                            "pip install 'tokembed[report]'") from None
    return matplotlib, Figure, FigureCanvasAgg


_RC = {
    "font.family": "DejaVu Sans",
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.titleweight": "bold",
    "axes.labelsize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.edgecolor": "#6b7280",
    "axes.grid": True,
    "axes.grid.axis": "y",
    "grid.color": "#e5e7eb",
    "grid.linewidth": 0.8,
    "axes.axisbelow": True,
    "legend.frameon": False,
    "svg.hashsalt": "tokembed",
}


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=_DPI, metadata={"Software": None}, bbox_inches="tight", facecolor="white")
    return buf.getvalue()


def _mpl(text: str) -> str:
    """A label as matplotlib shows it literally (``$`` would start mathtext)."""
    return str(text).replace("$", r"\$")


def _colors(labels: list[str]) -> dict[str, str]:
    return {label: _PALETTE[i % len(_PALETTE)] for i, label in enumerate(labels)}


#: How a tokenizer above the unknown-token threshold is drawn: hatched, faded bars; dashed lines.
_MARK = {"hatch": "////", "alpha": 0.4, "edgecolor": "#374151", "linestyle": (0, (3, 2))}


def _mark_note(comparison: Any) -> str:
    return f"hatched / dashed: > {comparison.unk_rate_limit:.0%} unknown tokens (not compared)"


# ---------------------------------------------------------------------------------------------------------------
# the data behind each chart
# ---------------------------------------------------------------------------------------------------------------
def chart_data(comparison: Any) -> dict[str, dict[str, Any]]:
    """The data each plot draws, keyed by the ids of :data:`PLOTS` (the plots :func:`draw_plots` would draw).

    Each value is ``{"groups": [...], "series": [...]}``: ``groups`` are the corpora (the languages for
    ``premium``) in x order, and ``series`` holds one dict per (tokenizer, group), tokenizers in table order, with
    ``tokenizer``, ``group``, ``value`` (None where the metric is not defined; for ``token-lengths`` the share of
    tokens in percent per length 1..16+, for ``premium`` the median, ``mean`` beside it) and ``marked``
    (:meth:`~tokembed.compare.Comparison.unk_heavy`: drawn hatched or dashed, with a note). ``premium`` also has
    ``same_text``: language -> the share of its prose identical to the reference's, and ``flagged``: the languages
    whose text is largely the reference's (:meth:`~tokembed.compare.Comparison.mostly_reference_text`).
    """
    labels = list(comparison.tokenizers)
    corpora = list(comparison.corpora)
    out: dict[str, dict[str, Any]] = {}

    def series(groups: list[str], value: Any) -> list[dict[str, Any]]:
        return [{"tokenizer": t, "group": g, "value": value(t, g), "marked": comparison.unk_heavy(t, g)}
                for t in labels for g in groups]

    for key, metric in (("chars-per-token", "chars_per_token"), ("fertility", "fertility")):
        if metric in comparison.metrics:
            out[key] = {"groups": corpora, "series": series(corpora, lambda t, c, m=metric: comparison.value(t, c, m))}
    out["token-lengths"] = {"groups": corpora, "series": series(corpora, lambda t, c: _length_shares(
        comparison.result(t, c).token_lengths))}
    if comparison.parallel and "premium_median" in comparison.metrics:
        langs = list(comparison.parallel["languages"])
        rows = series(langs, lambda t, g: comparison.value(t, g, "premium_median"))
        for row in rows:
            row["mean"] = comparison.value(row["tokenizer"], row["group"], "premium_mean")
        out["premium"] = {"groups": langs, "series": rows,
                          "same_text": {g: comparison.same_text(g) for g in langs},
                          "flagged": [g for g in langs if comparison.mostly_reference_text(g)]}
    return out


def _length_shares(counts: dict[int, int]) -> list[float] | None:
    """Percent of tokens of length 1, 2, ..., 15 and 16 or more (None without tokens)."""
    total = sum(counts.values())
    if not total:
        return None
    shares = [100 * counts.get(x, 0) / total for x in range(1, _MAX_LEN)]
    return shares + [100 * sum(v for n, v in counts.items() if n >= _MAX_LEN) / total]


# ---------------------------------------------------------------------------------------------------------------
# value labels that never overlap
# ---------------------------------------------------------------------------------------------------------------
def overlaps(a: tuple[float, float, float, float], b: tuple[float, float, float, float], pad: float = 1.0) -> bool:
    """Whether two boxes ``(x0, y0, x1, y1)`` (pixels) come closer than ``pad`` pixels."""
    return a[0] < b[2] + pad and b[0] < a[2] + pad and a[1] < b[3] + pad and b[1] < a[3] + pad


def _place_labels(fig: Any, ax: Any, items: list[tuple[float, float, str, list[Any]]],
                  obstacles: list[Any]) -> list[tuple[float, ...]]:
    """Write value labels above bars where they fit: each ``(x, y, text, own)`` (data coordinates; ``own``: the
    artists it labels) is tried level, then turned upright; a label that would overlap a label already written, or
    an artist of ``obstacles`` other than its own (bars, mean markers), or leave the axes, is left out (the value is
    in the summary table). Returns the pixel boxes of the labels written, none of which overlap another."""
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    boxes = {id(a): _box(a.get_window_extent(renderer)) for a in obstacles}
    placed: list[tuple[float, ...]] = []
    for x, y, text, own in items:
        mine = {id(a) for a in own}
        blocking = [b for k, b in boxes.items() if k not in mine]
        for rotation in (0, 90):
            label = ax.text(x, y, text, ha="center", va="bottom", fontsize=7, color="#374151", rotation=rotation,
                            bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.4, "alpha": 0.85})
            extent = _box(label.get_window_extent(renderer))
            inside = frame.x0 <= extent[0] and extent[2] <= frame.x1 and extent[3] <= frame.y1
            if inside and not any(overlaps(extent, other) for other in placed + blocking):
                placed.append(extent)
                break
            label.remove()
    return placed


def _box(bbox: Any) -> tuple[float, float, float, float]:
    return (float(bbox.x0), float(bbox.y0), float(bbox.x1), float(bbox.y1))


def _bars(ax: Any, data: dict[str, Any], colors: dict[str, str]) -> tuple[list[Any], list[Any], float]:
    """One bar per (tokenizer, group) of ``data``, marked ones hatched, and the mean's diamond where the rows have
    one; returns the value labels to place (:func:`_place_labels`), every artist drawn and the highest value."""
    labels = list(colors)
    n_tok = len(labels)
    width = 0.8 / n_tok
    slot = {t: i for i, t in enumerate(labels)}
    groups = {g: j for j, g in enumerate(data["groups"])}
    top = max([r["value"] or 0 for r in data["series"]] + [r.get("mean") or 0 for r in data["series"]] + [1e-9])
    items, artists = [], []
    for row in data["series"]:
        x = groups[row["group"]] + (slot[row["tokenizer"]] - (n_tok - 1) / 2) * width
        v = row["value"]
        if v is None:
            ax.text(x, top * 0.02, "n/a", ha="center", va="bottom", fontsize=7, color="#6b7280", rotation=90)
            continue
        style = ({"hatch": _MARK["hatch"], "alpha": _MARK["alpha"], "edgecolor": _MARK["edgecolor"],
                  "linewidth": 0.5} if row["marked"] else {})
        own = list(ax.bar(x, v, width * 0.92, color=colors[row["tokenizer"]], **style))
        if row.get("mean") is not None:
            own += ax.plot([x], [row["mean"]], marker="D", markersize=3.5, color="#111827", linestyle="none")
        artists += own
        items.append((x, max(v, row.get("mean") or 0) + top * 0.015, f"{v:.2f}", own))
    return items, artists, top


def _legend(ax: Any, comparison: Any, colors: dict[str, str], marked: bool, extra: list[Any] = ()) -> None:
    matplotlib, _, _ = _matplotlib()
    handles = [matplotlib.patches.Patch(color=c, label=_mpl(t)) for t, c in colors.items()] + list(extra)
    if marked:
        handles.append(matplotlib.patches.Patch(facecolor="white", hatch=_MARK["hatch"],
                                                edgecolor=_MARK["edgecolor"], label=_mark_note(comparison)))
    ax.legend(handles=handles, title="tokenizer", loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8.5)


def _grouped_bars(comparison: Any, data: dict[str, Any], ylabel: str, title: str,
                  layout: dict[str, Any] | None = None) -> bytes:
    matplotlib, Figure, Canvas = _matplotlib()
    colors = _colors(list(comparison.tokenizers))
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(_WIDTH, 3.6), dpi=_DPI)
        Canvas(fig)
        ax = fig.subplots()
        items, artists, top = _bars(ax, data, colors)
        ax.set_xticks(range(len(data["groups"])))
        ax.set_xticklabels([_mpl(c) for c in data["groups"]])
        ax.set_ylabel(ylabel)
        ax.set_title(title, loc="left")
        ax.set_ylim(0, top * 1.22)
        _legend(ax, comparison, colors, any(r["marked"] for r in data["series"]))
        placed = _place_labels(fig, ax, items, artists)
        if layout is not None:
            layout["labels"], layout["candidates"] = placed, len(items)
        return _png(fig)


def _token_lengths(comparison: Any, data: dict[str, Any]) -> bytes:
    matplotlib, Figure, Canvas = _matplotlib()
    colors = _colors(list(comparison.tokenizers))
    corpora = data["groups"]
    ncols = min(3, len(corpora))
    nrows = -(-len(corpora) // ncols)
    xs = list(range(1, _MAX_LEN + 1))
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(_WIDTH, 2.8 * nrows + 0.4), dpi=_DPI)
        Canvas(fig)
        axes = fig.subplots(nrows, ncols, squeeze=False, sharey=True)
        for k, corpus in enumerate(corpora):
            ax = axes[k // ncols][k % ncols]
            for row in (r for r in data["series"] if r["group"] == corpus and r["value"] is not None):
                ax.plot(xs, row["value"], marker="o", markersize=3, linewidth=1.6, color=colors[row["tokenizer"]],
                        linestyle=_MARK["linestyle"] if row["marked"] else "-",
                        alpha=0.6 if row["marked"] else 1.0)
            ax.set_title(_mpl(corpus), loc="left", fontsize=10)
            ax.set_xticks([1, 4, 8, 12, _MAX_LEN])
            ax.set_xticklabels(["1", "4", "8", "12", f"{_MAX_LEN}+"])
            ax.set_xlabel("token length (characters)")
            if k % ncols == 0:
                ax.set_ylabel("share of tokens (%)")
        for k in range(len(corpora), nrows * ncols):
            axes[k // ncols][k % ncols].set_visible(False)
        handles = [matplotlib.lines.Line2D([], [], color=colors[t], marker="o", label=_mpl(t)) for t in colors]
        if any(r["marked"] for r in data["series"]):
            handles.append(matplotlib.lines.Line2D([], [], color="#374151", linestyle=_MARK["linestyle"],
                                                   label=_mark_note(comparison)))
        fig.legend(handles=handles, title="tokenizer", loc="upper left", bbox_to_anchor=(1.0, 0.95), fontsize=9)
        fig.suptitle("Token length distribution", x=0.01, ha="left", fontweight="bold", fontsize=11)
        fig.tight_layout()
        return _png(fig)


def _premium(comparison: Any, data: dict[str, Any], layout: dict[str, Any] | None = None) -> bytes:
    matplotlib, Figure, Canvas = _matplotlib()
    colors = _colors(list(comparison.tokenizers))
    langs = data["groups"]
    ref = comparison.parallel["reference"]
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(_WIDTH, 4.0), dpi=_DPI)
        Canvas(fig)
        ax = fig.subplots()
        items, artists, top = _bars(ax, data, colors)
        ax.axhline(1.0, color="#111827", linestyle="--", linewidth=1)
        ax.set_xticks(range(len(langs)))
        ticks = []
        for lang in langs:
            share = data["same_text"].get(lang)
            if lang == ref:
                ticks.append(f"{_mpl(lang)}\n(reference)")
            elif share is not None:
                flag = "\u26a0 " if lang in data["flagged"] else ""
                ticks.append(f"{flag}{_mpl(lang)}\n{share:.0%} same\nas {_mpl(ref)}")
            else:
                ticks.append(_mpl(lang))
        ax.set_xticklabels(ticks, fontsize=8)
        for tick, lang in zip(ax.get_xticklabels(), langs):
            if lang in data["flagged"]:
                tick.set_color("#b91c1c")
        ax.set_ylabel(f"premium (tokens / {_mpl(ref)} tokens)")
        ax.set_title(f"Tokenization premium relative to {_mpl(ref)}", loc="left")
        ax.set_ylim(0, max(top, 1.0) * 1.22)
        mean = matplotlib.lines.Line2D([], [], color="#111827", marker="D", linestyle="none", label="mean")
        _legend(ax, comparison, colors, any(r["marked"] for r in data["series"]), [mean])
        placed = _place_labels(fig, ax, items, artists)
        if layout is not None:
            layout["labels"], layout["candidates"] = placed, len(items)
        return _png(fig)


def draw_plots(comparison: Any, layout: dict[str, dict[str, Any]] | None = None) -> dict[str, bytes]:
    """Draw the report's plots as PNG bytes, keyed by the ids of :data:`PLOTS`, from :func:`chart_data`.

    ``premium`` is drawn only with a parallel set, and a plot whose metric was not computed (``metrics=[...]``
    without it) is left out. Value labels are written only where they fit (:func:`_place_labels`).

    Parameters
    ----------
    comparison : Comparison
    layout : dict, optional
        Filled with plot id -> ``{"labels": [(x0, y0, x1, y1), ...], "candidates": n}``: the pixel boxes of the value
        labels written (at the PNG's resolution, before cropping) and how many bars could have had one.

    Raises
    ------
    TokembedError
        If matplotlib is not installed.
    """
    data = chart_data(comparison)
    layout = {} if layout is None else layout
    plots = {}
    for key, ylabel, title in (("chars-per-token", "characters per token", "Characters per token"),
                               ("fertility", "tokens per word", "Fertility")):
        if key in data:
            plots[key] = _grouped_bars(comparison, data[key], ylabel, title, layout.setdefault(key, {}))
    plots["token-lengths"] = _token_lengths(comparison, data["token-lengths"])
    if "premium" in data:
        plots["premium"] = _premium(comparison, data["premium"], layout.setdefault("premium", {}))
    return plots
