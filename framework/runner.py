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

import json
import os
import re
import shutil
import sys
import tempfile
import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from .corpus import Corpus
from .errors import CorpusError, CorpusReadError, RecipeError, TokembedError
from .io import RUN_MARKER, atomic_save_npy, atomic_write_json, atomic_write_text

__all__ = ["run_recipe", "RunResult", "open_corpus"]


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


def open_corpus(spec) -> Corpus:
    """Build a :class:`Corpus` from a recipe's corpus spec."""
    kwargs = {"format": spec.format, "field": spec.field, "errors": spec.errors, "unit": spec.unit}
    kwargs = {k: v for k, v in kwargs.items() if v is not None}
    if spec.source == "builtin":
        return Corpus.builtin(spec.value, **kwargs)
    if spec.source == "dataset":
        return Corpus.dataset(spec.value, **kwargs)
    return Corpus(tuple(spec.paths), name=str(spec.value), **kwargs)


class _Timer:
    def __init__(self) -> None:
        self.table: dict[str, dict[str, float]] = {}

    @contextmanager
    def step(self, name: str, nbytes: int | None = None) -> Iterator[None]:
        t0 = time.perf_counter()
        yield
        dt = time.perf_counter() - t0
        row: dict[str, float] = {"seconds": round(dt, 4)}
        if nbytes:
            row["MB_per_s"] = round(nbytes / 1e6 / dt, 3) if dt > 0 else float("inf")
        self.table[name] = row


def _progress(iterable, desc: str, quiet: bool):
    from tqdm.auto import tqdm

    return tqdm(iterable, desc=desc, unit=" docs", mininterval=0.5, leave=False, disable=quiet or None,
                file=sys.stderr)


def _yaml_dump(data: Any) -> str:
    import yaml

    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False, width=110)


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
    result = _RunFolder(out_dir).write(lambda folder: _run(recipe, reg, folder, quiet))
    result.output = out_dir
    if not quiet:
        print(summary_table(result))
    return result


class _RunFolder:
    """A run is written into a temporary folder beside ``out`` and renamed into place when it succeeds, so a run
    folder never mixes files of two runs and a failed run never leaves a half-written one. A failed run's files are
    kept in ``<out>.incomplete`` for inspection.

    Replacing a folder deletes what it held, so an existing ``out`` (and ``<out>.incomplete``) is replaced only if it
    is empty or holds nothing but what an earlier run wrote (the entries its :data:`~tokembed.io.RUN_MARKER` lists);
    ``out`` may not be the current folder or one of its parents. Otherwise :class:`~tokembed.errors.TokembedError`
    is raised before any work (for ``<out>.incomplete``, the failed run's files stay in the hidden temporary
    folder, whose path the error gives). A symbolic link as ``out`` stands for the folder it points to.
    """

    def __init__(self, out: Path):
        shown = out
        out = Path(os.path.realpath(out))
        self.out = out
        self._check(out, shown)
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            self.tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
        except OSError as exc:
            raise TokembedError(f"output {shown}: cannot create the run folder: {exc.strerror or exc}") from None

    @staticmethod
    def _check(out: Path, shown: Path) -> None:
        hint = "choose a new or empty folder with --out DIR (or output: in the recipe)"
        for parent in out.parents:
            if parent.exists() and not parent.is_dir():
                raise TokembedError(f"output {shown}: {parent} is a file, not a folder; {hint}")
        if out.exists() and not out.is_dir():
            raise TokembedError(f"output {shown}: exists and is not a folder; {hint}")
        cwd = Path(os.path.realpath(os.getcwd()))
        if out == cwd or out in cwd.parents or out == Path(out.anchor):
            raise TokembedError(f"output {shown}: is the current folder or contains it, and a run replaces its "
                                f"output folder whole; {hint}")
        if out.is_dir():
            foreign = _foreign_entries(out)
            if foreign:
                listed = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
                raise TokembedError(
                    f"output {shown}: the folder holds files tokembed did not write ({len(foreign)} "
                    f"{'entry' if len(foreign) == 1 else 'entries'}: {listed}), and a run replaces its output "
                    f"folder whole; {hint}, or move them out")

    def write(self, work: Callable[[Path], Any]) -> Any:
        """Run ``work(temporary_folder)``; on success rename the folder into place and return ``work``'s result.
        On failure keep what was written in ``<out>.incomplete`` and say so in the error."""
        try:
            result = work(self.tmp)
        except BaseException as exc:
            kept = self.abandon()
            state = "is unchanged" if self.out.exists() else "was not created"
            if isinstance(exc, TokembedError) and kept is not None:
                raise type(exc)(f"{exc}\n(the files written before the error are in {kept}; {self.out} {state})"
                                ) from None
            if isinstance(exc, (KeyboardInterrupt, SystemExit)) and kept is not None:
                print(f"tokembed: the files written before the interruption are in {kept}; {self.out} {state}",
                      file=sys.stderr)
            raise
        foreign = _foreign_entries(self.out) if self.out.is_dir() else []
        if foreign:  # added while the run was working: keep them, and the run's files apart
            kept = self.abandon()
            raise TokembedError(f"output {self.out}: {', '.join(foreign[:3])} appeared in the folder during the run, "
                                f"so it was not replaced; the run's files are in {kept}")
        self.commit()
        return result

    def _mark(self) -> None:
        """List the entries the run wrote in the marker file, so that a later run knows what it may replace."""
        names = sorted(e.name for e in self.tmp.iterdir() if e.name != RUN_MARKER)
        (self.tmp / RUN_MARKER).write_text(
            json.dumps({"written_by": "tokembed", "files": names}, indent=1) + "\n", encoding="utf-8")

    def commit(self) -> None:
        self._mark()
        old = None
        if self.out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{self.out.name}.old-", dir=self.out.parent))
            os.replace(self.out, old / self.out.name)
        os.replace(self.tmp, self.out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        os.chmod(self.out, 0o777 & ~_umask())

    def abandon(self) -> Path | None:
        if not self.tmp.exists():
            return None
        if not any(self.tmp.iterdir()):
            shutil.rmtree(self.tmp, ignore_errors=True)
            return None
        self._mark()
        kept = self.out.with_name(self.out.name + ".incomplete")
        if kept.is_symlink() or (kept.exists() and (not kept.is_dir() or _foreign_entries(kept))):
            return self.tmp  # never replace something the user made
        shutil.rmtree(kept, ignore_errors=True)
        try:
            os.replace(self.tmp, kept)
            os.chmod(kept, 0o777 & ~_umask())
        except OSError:
            return self.tmp
        return kept


#: What a run folder written before the marker listed its files could hold.
_LEGACY_RUN_FILES = re.compile(r"^(recipe\.resolved\.yaml|timings\.json|metrics\.json|evaluation\.json|"
                               r"comparison\.(json|csv|md|txt)|report\.html|.+\.tokembed\.json|.+\.npy|"
                               r"\.tokembed-run)$")


def _foreign_entries(folder: Path) -> list[str]:
    """The entries of ``folder`` that no earlier run wrote (sorted): everything but what its marker lists (for a
    folder without a parseable marker, everything but the file names a run writes, if it has
    ``recipe.resolved.yaml``)."""
    try:
        entries = sorted(e.name for e in folder.iterdir())
    except OSError as exc:
        raise TokembedError(f"output {folder}: cannot read the folder: {exc.strerror or exc}") from None
    written: set[str] | None = None
    try:
        listed = json.loads((folder / RUN_MARKER).read_text(encoding="utf-8"))["files"]
        if isinstance(listed, list) and all(isinstance(n, str) for n in listed):
            written = set(listed)
    except (OSError, ValueError, KeyError, TypeError):
        written = None
    if written is not None:
        return [n for n in entries if n != RUN_MARKER and n not in written]
    if "recipe.resolved.yaml" in entries:
        return [n for n in entries if not _LEGACY_RUN_FILES.match(n)]
    return entries


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def _stage(spec, prefix: str = "", corpus_at: str | None = None) -> Iterator[None]:
    """Name the recipe stage (file:line:col and dotted path) in any error a component raises while it runs; an
    error reading the corpus names the corpus section instead (at ``corpus_at``, its file:line:col)."""
    try:
        yield
    except CorpusReadError as exc:
        if corpus_at is None:
            raise
        raise type(exc)(f"{corpus_at}: corpus: {exc}") from None
    except TokembedError as exc:
        section = {"tokenizer": "tokenizers", "embedder": "embedders", "vectorizer": "vectorizers"}.get(
            spec.kind, spec.kind)
        raise type(exc)(f"{spec.location}: {prefix}{section}.{spec.label}: {exc}") from None


def _run(recipe, reg, out_dir: Path, quiet: bool) -> RunResult:
    corpus_at = recipe.corpus.location if recipe.corpus is not None else None
    corpus = None
    if recipe.corpus is not None:
        try:
            corpus = open_corpus(recipe.corpus)
        except CorpusError as exc:
            raise type(exc)(f"{corpus_at}: corpus: {exc}") from None
    timer = _Timer()
    result = RunResult(out_dir)
    atomic_write_text(out_dir / "recipe.resolved.yaml", _yaml_dump(recipe.resolved()))

    from .metrics import tokenizer_metrics

    corpus_bytes = corpus.size_bytes() if corpus is not None else 0
    docs: list[str] | None = None
    n_bytes = 0
    for spec in recipe.tokenizers:
        with _stage(spec, corpus_at=corpus_at):
            tok = recipe.build(spec)
            with timer.step(f"fit tokenizer {spec.label}", corpus_bytes):
                tok.fit(_progress(corpus, f"fit {spec.label}", quiet))
            tok.save(out_dir / f"{spec.label}.tokembed.json")
            result.tokenizers[spec.label] = tok
            if docs is None:  # read once, after the first fit, and shared by every tokenizer's evaluation
                docs = list(corpus)
                n_bytes = sum(len(d.encode("utf-8", "surrogatepass")) for d in docs)
            with timer.step(f"evaluate tokenizer {spec.label}", n_bytes):
                result.metrics[spec.label] = tokenizer_metrics(
                    tok, _progress(docs, f"evaluate {spec.label}", quiet), registry=reg
                )
        # written after each tokenizer, so a later failure keeps what was measured (in <out>.incomplete)
        atomic_write_json(out_dir / "metrics.json", {"corpus": corpus.describe(), "tokenizers": result.metrics})

    for spec in recipe.embedders:
        with _stage(spec, corpus_at=corpus_at):
            _run_embedder(recipe, spec, result, corpus, out_dir, timer)

    if recipe.evaluate is not None:
        result.evaluation = _evaluate(recipe.evaluate, result, out_dir, timer, quiet)
    result.timings = timer.table
    atomic_write_json(out_dir / "timings.json", timer.table)
    return result


def _run_embedder(recipe, spec, result: RunResult, corpus, out_dir: Path, timer: _Timer) -> None:
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


def _evaluate(spec, result: RunResult, out_dir: Path, timer: _Timer, quiet: bool) -> dict[str, Any]:
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
