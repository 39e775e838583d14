"""``tokembed compare``: run a ``compare:`` recipe. Orchestration only.

The recipe is checked whole before any work (:func:`tokembed.recipe.load_recipe`). Then:

1. each ``{load: FILE}`` tokenizer is taken from the recipe check, which read its file (a file its reader rejects is a
   recipe problem, so nothing is trained and no run folder is made);
2. each tokenizer with ``type:``/``preset:`` is trained **once**, on the recipe's ``corpus:`` (read once into memory
   when ``max_lines``/``sample_lines`` bound it, streamed otherwise), and saved as ``<label>.tokembed.json``;
3. every tokenizer is evaluated on every corpus of ``compare.corpora`` and on each language of ``compare.parallel``
   by :func:`tokembed.compare.compare_tokenizers`;
4. the comparison is written in every format into the run folder.

The run folder receives, each file written atomically: ``recipe.resolved.yaml``, ``<label>.tokembed.json`` for each
trained tokenizer, ``comparison.json``, ``comparison.csv``, ``comparison.md``, ``comparison.txt`` (the terminal
table without colour), ``report.html`` (needs matplotlib; skipped with a warning without it) and ``timings.json``.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from ..corpus import open_corpus, open_parallel
from ..errors import CorpusError, RecipeError, TokembedError, with_context
from ..io import atomic_write_json, atomic_write_text
from ..recipe.load import load_tokenizer
from ..recipe.specs import ComponentSpec
from ..runs import RunFolder, stage, yaml_dump
from .engine import tokenizer_type

__all__ = ["run_comparison", "CompareRun", "PRINT_FORMATS", "render"]

#: ``--format`` choices: what is printed to standard output.
PRINT_FORMATS = ("table", "json", "csv", "markdown", "html")
#: Files written into the run folder, in this order (``html`` last: it is the slowest and may be skipped).
_FILE_FORMATS = ("json", "csv", "md", "txt", "html")


@dataclass
class CompareRun:
    """What a comparison run produced.

    Attributes
    ----------
    output : Path
        The run folder.
    comparison : Comparison
        Every metric for every (tokenizer, corpus).
    tokenizers : dict
        Label -> fitted tokenizer, in recipe order (trained and loaded).
    files : dict
        Format (``json``, ``csv``, ``md``, ``txt``, ``html``) -> path written; ``html`` is missing when matplotlib
        is not installed.
    timings : dict
        Step -> ``{"seconds": ...}`` (and ``MB_per_s`` for training), as in ``timings.json``.
    grid : Grid or None
        The tokenizers x embedders cells, when the recipe has ``compare.grid``.
    """

    output: Path
    comparison: Any
    tokenizers: dict[str, Any] = field(default_factory=dict)
    files: dict[str, Path] = field(default_factory=dict)
    timings: dict[str, dict[str, float]] = field(default_factory=dict)
    grid: Any = None


def render(comparison: Any, fmt: str, color: bool | None = None, grid: Any = None) -> str:
    """The comparison as ``--format`` prints it: ``table`` (terminal table; colour when ``color`` or, by default,
    when standard output is a terminal), ``json``, ``csv``, ``markdown`` or ``html``. With a ``grid`` (a
    :class:`~tokembed.compare.grid.Grid`), its table follows the comparison's (``table``), or it alone is given
    as ``json``/``csv`` when there is no comparison.

    Raises
    ------
    TokembedError
        For an unknown format, or ``html`` without matplotlib.
    """
    if comparison is None:
        if grid is None:
            raise TokembedError("nothing to render: no comparison and no grid")
        grid_renderers: dict[str, Callable[[], str]] = {"table": grid.to_table, "json": grid.to_json,
                                                        "csv": grid.to_csv, "markdown": grid.to_table}
        if fmt not in grid_renderers:
            raise TokembedError(f"format {fmt!r} is not available for a grid alone; choose from "
                                f"{', '.join(grid_renderers)}")
        return grid_renderers[fmt]()
    if fmt == "table" and grid is not None:
        return comparison.to_table(color=color) + "\n\n" + grid.to_table()
    if fmt == "table":
        return comparison.to_table(color=color)
    renderers: dict[str, Callable[[], str]] = {"json": comparison.to_json, "csv": comparison.to_csv,
                                               "markdown": comparison.to_markdown, "html": comparison.to_html}
    if fmt not in renderers:
        raise TokembedError(f"unknown format {fmt!r}; choose from {', '.join(PRINT_FORMATS)}")
    return renderers[fmt]()


def _say(quiet: bool, message: str) -> None:
    if not quiet:
        print(message, file=sys.stderr, flush=True)


def run_comparison(
    recipe: Any,
    overrides: Sequence[str] = (),
    out: str | Path | None = None,
    blocked: Sequence[str] = (),
    registry: Any = None,
    quiet: bool = False,
) -> CompareRun:
    """Run a ``compare:`` recipe end to end and write the run folder.

    Parameters
    ----------
    recipe : str, Path or Recipe
        The YAML recipe (checked with :func:`tokembed.recipe.load_recipe`), or an already loaded
        :class:`~tokembed.recipe.Recipe` (``overrides``, ``out`` and ``blocked`` then do not apply, except ``out``,
        which still picks the folder).
    overrides : sequence of str
        ``dotted.path=value`` overrides (``--set``).
    out : str or Path, optional
        Output folder; wins over the recipe's ``output:`` (default ``runs/<recipe file stem>``).
    blocked : sequence of str
        Plugins not to load.
    registry : Registry, optional
        A registry to use instead of building one.
    quiet : bool
        No progress messages on standard error.

    Returns
    -------
    CompareRun

    Raises
    ------
    RecipeError
        If the recipe is invalid, every problem listed, before any work (a ``{load: FILE}`` file that its reader
        rejects among them: ``FILE:LINE:COL: compare.tokenizers.LABEL: <the reader's message>``); or if it has no
        ``compare:`` section.
    TokembedError
        If a corpus, a tokenizer file or a component fails with a user-caused error (CorpusError, DataError,
        ArtifactError, ...). A tokenizer file that fails to read when the run reads it (a :class:`Recipe` passed
        in) fails before any training, its message located at the stage.
    """
    from ..recipe import Recipe, load_recipe

    if isinstance(recipe, Recipe):
        loaded = recipe
        source = str(recipe.path) if recipe.path is not None else "<recipe>"
    else:
        if registry is None:
            from ..registry import build_registry

            registry = build_registry(blocked=blocked)
        loaded = load_recipe(recipe, overrides=overrides, out=out, registry=registry)
        source = str(recipe)
    if loaded.compare is None:
        raise RecipeError(f"{source}: no compare: section; tokembed compare runs recipes with compare: "
                          "(tokembed run runs the others)")
    spec = loaded.compare
    reg = loaded.registry if loaded.registry is not None else registry
    stem = Path(loaded.path).stem if loaded.path is not None else "compare"
    out_dir = Path(out) if out is not None else (Path(loaded.output) if loaded.output is not None
                                                 else Path("runs") / stem)
    timings: dict[str, dict[str, float]] = {}
    started = time.perf_counter()

    def timed(step: str, fn: Callable[[], Any], nbytes: int | None = None) -> Any:
        t0 = time.perf_counter()
        value = fn()
        dt = time.perf_counter() - t0
        row: dict[str, float] = {"seconds": round(dt, 4)}
        if nbytes:
            row["MB_per_s"] = round(nbytes / 1e6 / dt, 3) if dt > 0 else float("inf")
        timings[step] = row
        return value

    # The loaded tokenizers first, before any training and before the run folder exists: the recipe check has read
    # each file and kept the tokenizer (so this hands it over; the time is that of the check's reading), and a
    # Recipe passed in whose tokenizers were handed over already is read again here, failing before any work.
    loaded_tokenizers: dict[str, Any] = {}
    for item in spec.loaded:
        tok, seconds = load_tokenizer(item, loaded.kept)
        step = f"load {item.label}"
        timings[step] = {"seconds": round(seconds, 4)}
        loaded_tokenizers[item.label] = tok
        _say(quiet, f"loaded {item.label} ({tokenizer_type(tok)}): {tok.get_vocab_size():,} entries in "
                    f"{timings[step]['seconds']:.2f} s")

    def _work(work_dir: Path) -> tuple[Any, Any, Any]:
        atomic_write_text(work_dir / "recipe.resolved.yaml", yaml_dump(loaded.resolved()))
        train: Any = None
        size = 0
        if spec.trained:
            assert loaded.corpus is not None  # the recipe check requires a corpus when a tokenizer is trained
            try:
                train = timed("read training corpus", lambda: open_corpus(loaded.corpus))
            except CorpusError as exc:
                raise with_context(exc, f"{loaded.corpus.location}: corpus: {exc}") from None
            size = _size(train)
            counted = f": {len(train):,} documents" if isinstance(train, list) else ""
            _say(quiet, f"training corpus {loaded.corpus.describe()}{counted}, {size / 1e6:.1f} MB")
        tokenizers: dict[str, Any] = {}
        for item in spec.tokenizers:
            if isinstance(item, ComponentSpec):
                step = f"fit {item.label}"
                with stage(item, "compare.", corpus_at=loaded.corpus.location):
                    tok = item.build()
                    timed(step, lambda tok=tok: tok.fit(train), size)
                tok.save(work_dir / f"{item.label}.tokembed.json")
                _say(quiet, f"trained {item.label} ({item.type}): {tok.get_vocab_size():,} entries in "
                            f"{timings[step]['seconds']:.2f} s")
            else:
                tok = loaded_tokenizers[item.label]
            tokenizers[item.label] = tok  # in recipe order

        from .engine import compare_tokenizers

        comparison = None
        files: dict[str, Path] = {}
        origins = {}
        for item in spec.tokenizers:
            if isinstance(item, ComponentSpec):
                docs = f"{len(train):,} documents, " if isinstance(train, list) else ""
                amount = f"{size / 1e6:.1f} MB" if size >= 100_000 else f"{size:,} bytes"
                origins[item.label] = f"trained on {loaded.corpus.describe()}: {docs}{amount}"
            else:
                origins[item.label] = (f"loaded from dataset {item.value}" if item.source == "dataset" else
                                       f"loaded from {item.path}" + (f" and {item.merges}" if item.merges else ""))
        if spec.corpora or spec.parallel is not None:
            corpora = {name: open_corpus(c) for name, c in spec.corpora.items()}
            parallel = (timed("read parallel set", lambda: open_parallel(spec.parallel))
                        if spec.parallel is not None else None)
            n_tok, n_corp = len(tokenizers), len(corpora) + (len(parallel.texts) if parallel else 0)
            _say(quiet, f"comparing {n_tok} tokenizer{'s' * (n_tok != 1)} on {n_corp} "
                        f"corp{'ora' if n_corp != 1 else 'us'} ...")
            comparison = timed("compare", lambda: compare_tokenizers(tokenizers, corpora, parallel=parallel,
                                                                     metrics=spec.metrics, registry=reg,
                                                                     samples=spec.samples, origins=origins))
            files = comparison.write(work_dir, [f for f in _FILE_FORMATS if f != "html"])
        grid = None
        if spec.grid is not None:
            from .grid import run_grid

            docs = train if isinstance(train, list) else None
            if docs is None:
                try:
                    docs = timed("read training corpus", lambda: list(open_corpus(loaded.corpus)))
                except CorpusError as exc:
                    raise with_context(exc, f"{loaded.corpus.location}: corpus: {exc}") from None
            grid = timed("grid", lambda: run_grid(spec.grid, tokenizers, docs, folder=work_dir,
                                                  progress=lambda m: _say(quiet, m), quiet=quiet))
            files.update(grid.write(work_dir))
        try:
            if comparison is not None:
                files.update(timed("write report.html", lambda: comparison.write(work_dir, ["html"], grid=grid)))
            elif grid is not None:
                from .grid_report import write_grid_html

                files["html"] = timed("write report.html", lambda: write_grid_html(grid, work_dir / "report.html"))
        except TokembedError as exc:  # matplotlib is an optional extra
            _say(False, f"tokembed: warning: report.html not written: {exc}")
        timings["total"] = {"seconds": round(time.perf_counter() - started, 4)}
        atomic_write_json(work_dir / "timings.json", timings)
        return comparison, tokenizers, files, grid

    comparison, tokenizers, files, grid = RunFolder(out_dir).write(_work)
    files = {k: out_dir / Path(p).name for k, p in files.items()}
    _say(quiet, f"wrote {out_dir}: {', '.join(p.name for p in files.values())}, timings.json")
    return CompareRun(out_dir, comparison, tokenizers, files, timings, grid)


def _size(docs: Any) -> int:
    """UTF-8 bytes of an in-memory list of documents; the files' size on disk for a streamed corpus."""
    if isinstance(docs, list):
        return sum(len(d.encode("utf-8", "surrogatepass")) for d in docs)
    return int(docs.size_bytes()) if hasattr(docs, "size_bytes") else 0
