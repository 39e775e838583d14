"""Plain-text tables the command line prints: aligned columns (:func:`text_table`), the summary of ``tokembed run``
(:func:`summary_table`) and the plugin listing of ``tokembed plugins``. The comparison's tables are
:class:`tokembed.compare.Comparison`'s; the evaluation's, :func:`tokembed.evaluation.format_evaluation`."""

from __future__ import annotations

from typing import Any, Collection, Sequence

__all__ = ["text_table", "summary_table"]


def text_table(headers: Sequence[str], rows: Sequence[Sequence[str]], right: Collection[int] = ()) -> str:
    """``headers`` then ``rows`` as lines of columns two spaces apart, each column as wide as its widest cell;
    columns whose index is in ``right`` aligned right, the others left; trailing spaces dropped."""
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    right = set(right)

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    return "\n".join(line(r).rstrip() for r in [list(headers), *rows])


def summary_table(result: Any) -> str:
    """The summary ``tokembed run`` prints at the end: one row per measured tokenizer, then a line per vectorizer,
    batch, embedder and evaluation, then the run folder. ``result`` is a :class:`tokembed.runner.RunResult`."""
    headers = ["tokenizer", "type", "vocab", "tokens", "chars/token", "fertility", "unk rate", "round trip", "eval MB/s"]
    rows = []
    for label, m in result.metrics.items():
        tok = result.tokenizers[label]
        speed = result.timings.get(f"evaluate tokenizer {label}", {}).get("MB_per_s")

        def f(x, fmt):
            return "n/a" if x is None else format(x, fmt)

        rows.append([label, tok.name, f"{m['vocab_size']:,}", f"{m['tokens']:,}", f(m["chars_per_token"], ".3f"),
                     f(m["fertility"], ".3f"), f(m["unk_rate"], ".2%"), f(m["round_trip"], ".1%"),
                     f(speed, ".2f")])
    lines = text_table(headers, rows, right=range(1, len(headers))).splitlines() if rows else []
    measuring = sum(t["seconds"] for step, t in result.timings.items() if step.startswith("evaluate tokenizer "))
    timed = sum(t["seconds"] for t in result.timings.values())
    if measuring > timed / 2:  # the timed steps run one after the other: their sum is the run's working time
        lines.append(f"metrics took {measuring:.1f} s of the run's {timed:.1f} s; tokembed run --no-metrics skips "
                     "them (the tokenizers are still trained and saved)")
    for label, tok in result.tokenizers.items():
        if label not in result.metrics:  # --no-metrics, or a corpus of token ids (corpus: {encoded: DIR})
            loaded = f"load tokenizer {label}" in result.timings
            seconds = result.timings.get(f"{'load' if loaded else 'fit'} tokenizer {label}", {}).get("seconds")
            why = "the corpus is token ids" if getattr(result, "encoded", False) else "--no-metrics"
            lines.append(f"tokenizer {label} ({tok.name}): {tok.get_vocab_size():,} entries, "
                         f"{'loaded' if loaded else 'trained'} in {seconds or 0:.2f} s (not measured: {why})")
    for label, m in result.matrices.items():
        seconds = result.timings.get(f"fit vectorizer {label}", {}).get("seconds")
        kind = f"sparse, {m['nnz']:,} non-zeros" if m["sparse"] else "dense"
        took = f" in {seconds:.2f} s" if seconds is not None else ""
        lines.append(f"vectorizer {label}: {' x '.join(f'{n:,}' for n in m['shape'])} {m['dtype']} ({kind}){took}")
    near = result.neighbours.get("vectorizers")
    if near:
        lines.append(f"documents nearest to document {near['document']} ({near['text']!r}):")
        lines.extend(f"  {n['cosine']:.3f}  #{n['document']}: {n['text']}" for n in near["nearest"])
    for label, arrays in result.arrays.items():
        ids, vec = arrays["input_ids"], arrays["embeddings"]
        lines.append(f"embedder {label}: batch {tuple(ids.shape)} ids -> embeddings {tuple(vec.shape)} {vec.dtype}")
    for label, emb in result.embedders.items():
        wv = getattr(emb, "wv_", None)
        if wv is not None:
            seconds = result.timings.get(f"fit embedder {label}", {}).get("seconds")
            took = f" in {seconds:.1f} s" if seconds is not None else ""
            lines.append(f"embedder {label}: {len(wv):,} vectors of {wv.vector_size} dimensions{took}")
        for word, found in (result.neighbours.get(label) or {}).items():
            shown = "no vector" if found is None else ", ".join(f"{k} {s:.2f}" for k, s in found)
            lines.append(f"  {word}: {shown}")
    if result.evaluation:
        from .evaluation import format_evaluation

        for label, scores in result.evaluation.items():
            composed = scores.get("composed")
            note = ""
            if composed is not None:
                tok = result.tokenizers[result.embedder_inputs[label]]
                note = f" (words composed from {tok.name} pieces: {composed['single_token_share']:.1%} are one token)"
            shown = {k: v for k, v in scores.items() if k != "composed"}
            lines.append(f"evaluation of {label}{note}:\n{format_evaluation(shown)}")
    lines.append(f"run folder: {result.output}")
    return "\n".join(lines)
