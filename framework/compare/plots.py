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

__all__ = ["draw_plots", "PLOTS"]

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
               "dashed line is parity.",
}

_PALETTE = ["#3b6fb6", "#e07b39", "#3a9a5b", "#c0392b", "#7d5ba6", "#8c6d46", "#d16ba5", "#6b7280", "#b8a22f",
            "#2a9db5"]
_MAX_LEN = 16  # token lengths >= this are pooled into one "16+" bin
_WIDTH = 10.0  # inches: every plot has the same width, so all are drawn at one scale


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
    fig.savefig(buf, format="png", dpi=110, metadata={"Software": None}, bbox_inches="tight", facecolor="white")
    return buf.getvalue()


def _mpl(text: str) -> str:
    """A label as matplotlib shows it literally (``$`` would start mathtext)."""
    return str(text).replace("$", r"\$")


def _colors(labels: list[str]) -> dict[str, str]:
    return {label: _PALETTE[i % len(_PALETTE)] for i, label in enumerate(labels)}


def _grouped_bars(comparison: Any, metric: str, ylabel: str, title: str, corpora: list[str]) -> bytes:
    matplotlib, Figure, Canvas = _matplotlib()
    labels = list(comparison.tokenizers)
    colors = _colors(labels)
    n_tok = len(labels)
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(_WIDTH, 3.6))
        Canvas(fig)
        ax = fig.subplots()
        width = 0.8 / n_tok
        top = max([comparison.value(t, c, metric) or 0 for t in labels for c in corpora] + [1e-9])
        for i, label in enumerate(labels):
            for j, corpus in enumerate(corpora):
                x = j + (i - (n_tok - 1) / 2) * width
                v = comparison.value(label, corpus, metric)
                if v is None:
                    ax.text(x, top * 0.02, "n/a", ha="center", va="bottom", fontsize=8, color="#6b7280", rotation=90)
                    continue
                ax.bar(x, v, width * 0.92, color=colors[label], label=label if j == 0 else None)
                ax.text(x, v + top * 0.01, f"{v:.2f}", ha="center", va="bottom", fontsize=7.5, color="#374151")
        ax.set_xticks(range(len(corpora)))
        ax.set_xticklabels([_mpl(c) for c in corpora])
        ax.set_ylabel(ylabel)
        ax.set_title(title, loc="left")
        ax.set_ylim(0, top * 1.15)
        handles = [matplotlib.patches.Patch(color=colors[t], label=_mpl(t)) for t in labels]
        ax.legend(handles=handles, title="tokenizer", loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=9)
        return _png(fig)


def _token_lengths(comparison: Any) -> bytes:
    matplotlib, Figure, Canvas = _matplotlib()
    labels = list(comparison.tokenizers)
    colors = _colors(labels)
    corpora = list(comparison.corpora)
    ncols = min(3, len(corpora))
    nrows = -(-len(corpora) // ncols)
    xs = list(range(1, _MAX_LEN + 1))
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(_WIDTH, 2.8 * nrows + 0.4))
        Canvas(fig)
        axes = fig.subplots(nrows, ncols, squeeze=False, sharey=True)
        for k, corpus in enumerate(corpora):
            ax = axes[k // ncols][k % ncols]
            for label in labels:
                counts = comparison.result(label, corpus).token_lengths
                total = sum(counts.values())
                if not total:
                    continue
                shares = [100 * counts.get(x, 0) / total for x in xs[:-1]]
                shares.append(100 * sum(v for n, v in counts.items() if n >= _MAX_LEN) / total)
                ax.plot(xs, shares, marker="o", markersize=3, linewidth=1.6, color=colors[label], label=label)
            ax.set_title(_mpl(corpus), loc="left", fontsize=10)
            ax.set_xticks([1, 4, 8, 12, _MAX_LEN])
            ax.set_xticklabels(["1", "4", "8", "12", f"{_MAX_LEN}+"])
            ax.set_xlabel("token length (characters)")
            if k % ncols == 0:
                ax.set_ylabel("share of tokens (%)")
        for k in range(len(corpora), nrows * ncols):
            axes[k // ncols][k % ncols].set_visible(False)
        handles = [matplotlib.lines.Line2D([], [], color=colors[t], marker="o", label=_mpl(t)) for t in labels]
        fig.legend(handles=handles, title="tokenizer", loc="upper left", bbox_to_anchor=(1.0, 0.95), fontsize=9)
        fig.suptitle("Token length distribution", x=0.01, ha="left", fontweight="bold", fontsize=11)
        fig.tight_layout()
        return _png(fig)


def _premium(comparison: Any) -> bytes:
    matplotlib, Figure, Canvas = _matplotlib()
    labels = list(comparison.tokenizers)
    colors = _colors(labels)
    langs = list(comparison.parallel["languages"])
    ref = comparison.parallel["reference"]
    n_tok = len(labels)
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(_WIDTH, 3.6))
        Canvas(fig)
        ax = fig.subplots()
        width = 0.8 / n_tok
        top = 1.0
        for i, label in enumerate(labels):
            for j, lang in enumerate(langs):
                x = j + (i - (n_tok - 1) / 2) * width
                median = comparison.value(label, lang, "premium_median")
                mean = comparison.value(label, lang, "premium_mean")
                if median is not None:
                    ax.bar(x, median, width * 0.92, color=colors[label])
                    ax.text(x, median + 0.02, f"{median:.2f}", ha="center", va="bottom", fontsize=7.5,
                            color="#374151")
                    top = max(top, median)
                if mean is not None:
                    ax.plot([x], [mean], marker="D", markersize=4, color="#111827", linestyle="none")
                    top = max(top, mean)
        ax.axhline(1.0, color="#111827", linestyle="--", linewidth=1)
        ax.set_xticks(range(len(langs)))
        ax.set_xticklabels([f"{_mpl(lang)}\n(reference)" if lang == ref else _mpl(lang) for lang in langs])
        ax.set_ylabel(f"premium (tokens / {_mpl(ref)} tokens)")
        ax.set_title(f"Tokenization premium relative to {_mpl(ref)}", loc="left")
        ax.set_ylim(0, top * 1.18)
        handles = [matplotlib.patches.Patch(color=colors[t], label=_mpl(t)) for t in labels]
        handles.append(matplotlib.lines.Line2D([], [], color="#111827", marker="D", linestyle="none", label="mean"))
        ax.legend(handles=handles, title="tokenizer", loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=9)
        return _png(fig)


def draw_plots(comparison: Any) -> dict[str, bytes]:
    """Draw the report's plots as PNG bytes, keyed by the ids of :data:`PLOTS`.

    ``premium`` is drawn only with a parallel set, and a plot whose metric was not computed (``metrics=[...]``
    without it) is left out.

    Raises
    ------
    TokembedError
        If matplotlib is not installed.
    """
    corpora = list(comparison.corpora)
    plots = {}
    if "chars_per_token" in comparison.metrics:
        plots["chars-per-token"] = _grouped_bars(comparison, "chars_per_token", "characters per token",
                                                 "Characters per token", corpora)
    if "fertility" in comparison.metrics:
        plots["fertility"] = _grouped_bars(comparison, "fertility", "tokens per word", "Fertility", corpora)
    plots["token-lengths"] = _token_lengths(comparison)
    if comparison.parallel and "premium_median" in comparison.metrics:
        plots["premium"] = _premium(comparison)
    return plots
