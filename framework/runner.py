"""``tokembed run``: train, apply, evaluate and save what a recipe names. Orchestration only.

The run folder receives, each file written atomically:

- ``recipe.resolved.yaml``: the recipe with presets expanded and overrides applied;
- ``<label>.tokembed.json``: each fitted tokenizer (and each embedder) in tokembed's format;
- ``metrics.json``: per tokenizer, the metrics of :mod:`tokembed.metrics` on the corpus;
- ``<label>.input_ids.npy``, ``<label>.attention_mask.npy``, ``<label>.embeddings.npy``: for each embedder with a
  ``batch:``, the padded batch of ids and its embedding;
- ``timings.json``: seconds and MB/s per step, the only file that differs between two runs with the same seeds.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from .corpus import open_corpus
from .errors import CorpusError, RecipeError, TokembedError
from .io import atomic_save_npy, atomic_write_json, atomic_write_text
from .runs import RunFolder, Timer, progress, stage, yaml_dump

__all__ = ["run_recipe", "RunResult", "summary_table"]


@dataclass
class RunResult:
    """What a run produced: the output folder, the fitted components, metrics and timings."""

    output: Path
    tokenizers: dict[str, Any] = field(default_factory=dict)
    embedders: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, dict[str, Any]] = field(default_factory=dict)
    timings: dict[str, dict[str, float]] = field(default_factory=dict)
    arrays: dict[str, Any] = field(default_factory=dict)
    evaluation: dict[str, dict[str, Any]] = field(default_factory=dict)


def run_recipe(
    path: str | Path,
    overrides: Sequence[str] = (),
    out: str | Path | None = None,
    blocked: Sequence[str] = (),
    registry=None,
    quiet: bool = False,
) -> RunResult:
    """Run a recipe end to end and write the run folder.

    Parameters
    ----------
    path : str or Path
        The YAML recipe.
    overrides : sequence of str
        ``dotted.path=value`` overrides (``--set``).
    out : str or Path, optional
        Output folder; overrides the recipe's ``output:`` (default ``runs/<recipe name>``).
    blocked : sequence of str
        Plugins not to load.
    registry : Registry, optional
        A registry to use instead of building one.
    quiet : bool
        No progress bars and no printed summary.

    Raises
    ------
    RecipeError
        If the recipe is invalid (every problem listed, before any work).
    TokembedError
        If the corpus or a component fails with a user-caused error.
    """
    from .recipe import load_recipe
    from .registry import build_registry

    reg = registry if registry is not None else build_registry(blocked=blocked)
    recipe = load_recipe(path, overrides=overrides, out=out, registry=reg)
    if getattr(recipe, "compare", None) is not None:
        raise RecipeError(
            f"{path}: this is a comparison recipe (it has a `compare:` section): run it with `tokembed compare {path}`"
        )
    out_dir = Path(recipe.output) if recipe.output is not None else Path("runs") / Path(path).stem
    result = RunFolder(out_dir).write(lambda folder: _run(recipe, reg, folder, quiet))
    result.output = out_dir
    if not quiet:
        print(summary_table(result))
    return result


def _run(recipe, reg, out_dir: Path, quiet: bool) -> RunResult:
    corpus_at = recipe.corpus.location if recipe.corpus is not None else None
    corpus = None
    if recipe.corpus is not None:
        try:
            corpus = open_corpus(recipe.corpus)
        except CorpusError as exc:
            raise type(exc)(f"{corpus_at}: corpus: {exc}") from None
    timer = Timer()
    result = RunResult(out_dir)
    atomic_write_text(out_dir / "recipe.resolved.yaml", yaml_dump(recipe.resolved()))

    from .metrics import tokenizer_metrics

    corpus_bytes = corpus.size_bytes() if corpus is not None else 0
    docs: list[str] | None = None
    n_bytes = 0
    for spec in recipe.tokenizers:
        with stage(spec, corpus_at=corpus_at):
            tok = recipe.build(spec)
            with timer.step(f"fit tokenizer {spec.label}", corpus_bytes):
                tok.fit(progress(corpus, f"fit {spec.label}", quiet))
            tok.save(out_dir / f"{spec.label}.tokembed.json")
            result.tokenizers[spec.label] = tok
            if docs is None:  # read once, after the first fit, and shared by every tokenizer's evaluation
                docs = list(corpus)
                n_bytes = sum(len(d.encode("utf-8", "surrogatepass")) for d in docs)
            with timer.step(f"evaluate tokenizer {spec.label}", n_bytes):
                result.metrics[spec.label] = tokenizer_metrics(
                    tok, progress(docs, f"evaluate {spec.label}", quiet), registry=reg
                )
        # written after each tokenizer, so a later failure keeps what was measured (in <out>.incomplete)
        atomic_write_json(out_dir / "metrics.json", {"corpus": corpus.describe(), "tokenizers": result.metrics})

    for spec in recipe.embedders:
        with stage(spec, corpus_at=corpus_at):
            _run_embedder(recipe, spec, result, corpus, out_dir, timer)

    if recipe.evaluate is not None:
        result.evaluation = _evaluate(recipe.evaluate, result, out_dir, timer, quiet)
    result.timings = timer.table
    atomic_write_json(out_dir / "timings.json", timer.table)
    return result


def _run_embedder(recipe, spec, result: RunResult, corpus, out_dir: Path, timer: Timer) -> None:
    tok = result.tokenizers.get(spec.input) if spec.input else None
    emb = recipe.build(spec)
    if tok is not None:
        # what the embedder takes from its tokenizer (the recipe checked any value it sets against the plan)
        emb.set_params(**emb.params_from_tokenizer(tok))
    with timer.step(f"fit embedder {spec.label}"):
        emb.fit(None)
    emb.save(out_dir / f"{spec.label}.tokembed.json")
    result.embedders[spec.label] = emb
    batch = spec.batch
    if batch is None or tok is None:
        return
    truncation, max_length = bool(batch.truncation), batch.max_length
    limit = emb.max_input_length()
    lines = corpus.head(batch.lines)
    if isinstance(limit, int):
        if max_length is not None and max_length > limit:
            raise TokembedError(f"batch.max_length={max_length} is longer than the embedder's max_len={limit}; "
                                "lower batch.max_length or raise max_len")
        if max_length is None:
            # a batch must fit the embedding's position table: cut at max_len (as if truncation were asked), and
            # say so when a line is longer
            truncation, max_length = True, limit
            longest = max((len(e) for e in tok.encode_batch(lines)), default=0)
            if longest > limit:
                warnings.warn(f"embedders.{spec.label}: the batch is cut at the embedder's max_len={limit} (its "
                              f"longest line has {longest} tokens); set batch.max_length (with truncation: true) or "
                              "raise max_len to choose", stacklevel=2)
    enc = tok.encode_batch(lines, padding=batch.padding or False, truncation=truncation,
                           max_length=max_length if truncation or batch.padding == "max_length" else None,
                           return_arrays=True)
    with timer.step(f"embed batch {spec.label}"):
        vectors = emb.embed(enc["input_ids"])
    atomic_save_npy(out_dir / f"{spec.label}.input_ids.npy", enc["input_ids"])
    atomic_save_npy(out_dir / f"{spec.label}.attention_mask.npy", enc["attention_mask"])
    atomic_save_npy(out_dir / f"{spec.label}.embeddings.npy", vectors)
    result.arrays[spec.label] = {"input_ids": enc["input_ids"], "embeddings": vectors}


def _evaluate(spec, result: RunResult, out_dir: Path, timer: Timer, quiet: bool) -> dict[str, Any]:
    """Score every word-vector embedder of the run (``wv_``) and each pretrained vectors source on the sets."""
    from .evaluation import evaluate_vectors, format_evaluation

    sources: list[tuple[str, Any, str]] = []  # (label, getter, the recipe's FILE:LINE:COL or "")
    for label, emb in result.embedders.items():
        if getattr(emb, "wv_", None) is not None:
            sources.append((label, lambda emb=emb: emb.wv_, ""))
    for vec in spec.vectors:
        sources.append((vec.label, vec.load, vec.where))
    results: dict[str, Any] = {}
    for label, get, where in sources:
        with timer.step(f"evaluate vectors {label}"):
            vectors = get()
            try:
                results[label] = evaluate_vectors(vectors, list(spec.sets), **spec.options())
            except TokembedError as exc:  # NaN vectors, ...: say which source
                prefix = f"{where}: evaluate.vectors.{label}" if where else f"evaluate: vectors {label}"
                raise type(exc)(f"{prefix}: {exc}") from None
        if not quiet:
            print(f"evaluation of {label}:\n{format_evaluation(results[label])}")
    if not sources and not quiet:
        print("evaluate: no word vectors to score (no embedder of this recipe produces them, and evaluate.vectors "
              "names none)")
    atomic_write_json(out_dir / "evaluation.json", results)
    return results


def summary_table(result: RunResult) -> str:
    """The summary printed at the end of a run: one row per tokenizer, then the embedded batches."""
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
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(headers, widths)))] \
        if rows else []
    for r in rows:
        lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))))
    for label, arrays in result.arrays.items():
        ids, vec = arrays["input_ids"], arrays["embeddings"]
        lines.append(f"embedder {label}: batch {tuple(ids.shape)} ids -> embeddings {tuple(vec.shape)} {vec.dtype}")
    lines.append(f"run folder: {result.output}")
    return "\n".join(lines)
