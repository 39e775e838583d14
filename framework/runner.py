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

import time
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Sequence

from .components import describe_limit
from .corpus import open_corpus
from .errors import CorpusError, RecipeError, TokembedError, with_context
from .io import atomic_save_npy, atomic_write_json, atomic_write_text, save_matrix
from .export import export_into_run
from .runs import RunFolder, Timer, progress, stage, yaml_dump

__all__ = ["run_recipe", "RunResult"]


@dataclass
class RunResult:
    """What a run produced: the output folder, the fitted components, metrics, matrices and timings."""

    output: Path
    tokenizers: dict[str, Any] = field(default_factory=dict)
    embedders: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, dict[str, Any]] = field(default_factory=dict)
    timings: dict[str, dict[str, float]] = field(default_factory=dict)
    arrays: dict[str, Any] = field(default_factory=dict)
    evaluation: dict[str, dict[str, Any]] = field(default_factory=dict)
    vectorizers: dict[str, Any] = field(default_factory=dict)
    #: Embedder label -> the label of its input tokenizer.
    embedder_inputs: dict[str, str] = field(default_factory=dict)
    #: Vectorizer step label -> ``{"shape", "dtype", "sparse", "nnz"}`` of its output matrix.
    matrices: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: ``"vectorizers"`` -> the nearest documents of one document; embedder label -> word -> nearest words.
    neighbours: dict[str, Any] = field(default_factory=dict)
    #: The corpus was token ids (``corpus: {encoded: DIR}``): no text, so no tokenizer metrics.
    encoded: bool = False


def run_recipe(
    path: str | Path,
    overrides: Sequence[str] = (),
    out: str | Path | None = None,
    blocked: Sequence[str] = (),
    registry=None,
    quiet: bool = False,
    metrics: bool = True,
    engine: dict[str, Any] | None = None,
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
    metrics : bool, default True
        Measure each tokenizer on the corpus (``metrics.json``); False (``tokembed run --no-metrics``) only trains
        and writes the components, which on a large corpus saves most of the time.
    engine : dict, optional
        ``engine:`` keys to set (``{"type": "dask", "address": ...}``: ``--engine`` / ``--scheduler``); see
        :func:`tokembed.recipe.load_recipe`.

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
    recipe = load_recipe(path, overrides=overrides, out=out, registry=reg, engine=engine)
    if getattr(recipe, "compare", None) is not None:
        raise RecipeError(
            f"{path}: this is a comparison recipe (it has a `compare:` section): run it with `tokembed compare {path}`"
        )
    out_dir = Path(recipe.output) if recipe.output is not None else Path("runs") / Path(path).stem
    result = RunFolder(out_dir).write(lambda folder: _run(recipe, reg, folder, quiet, metrics))
    result.output = out_dir
    if not quiet:
        from .tables import summary_table

        print(summary_table(result))
    return result


def _run(recipe, reg, out_dir: Path, quiet: bool, metrics: bool = True) -> RunResult:
    corpus_at = recipe.corpus.location if recipe.corpus is not None else None
    corpus = None
    if recipe.corpus is not None and recipe.corpus.encoded is not None:
        pass  # token ids, opened mapped by _Sequences: no text to read
    elif recipe.corpus is not None:
        try:
            corpus = open_corpus(recipe.corpus)
        except CorpusError as exc:
            raise with_context(exc, f"{corpus_at}: corpus: {exc}") from None
    timer = Timer()
    result = RunResult(out_dir)
    atomic_write_text(out_dir / "recipe.resolved.yaml", yaml_dump(recipe.resolved()))
    engine = recipe.engine.open() if recipe.engine is not None else None
    with engine if engine is not None else _nothing():
        _run_stages(recipe, reg, result, corpus, corpus_at, engine, out_dir, timer, quiet, metrics)
    result.timings = timer.table
    atomic_write_json(out_dir / "timings.json", timer.table)
    return result


def _run_stages(recipe, reg, result: RunResult, corpus, corpus_at: str | None, engine, out_dir: Path, timer: Timer,
                quiet: bool, metrics: bool = True) -> None:
    """Tokenizers (fit, save, evaluate), the vectorizer pipeline, embedders and evaluation, in that order."""
    from .metrics import tokenizer_metrics

    corpus_bytes = corpus.size_bytes() if corpus is not None else 0
    docs = _Documents(corpus)
    sequences = _Sequences(result, docs, quiet)
    if recipe.corpus is not None and recipe.corpus.encoded is not None:
        sequences.open_encoded(recipe.corpus, reg)
        result.encoded = True
    if engine is not None:
        from .errors import EngineError

        with timer.step(f"start engine {engine.type}"):
            try:
                engine.start()
            except EngineError as exc:
                raise with_context(exc, f"{recipe.engine.location}: engine: {exc}") from None
    for spec in recipe.tokenizers:
        with stage(spec, corpus_at=corpus_at):
            if getattr(spec, "loader", None) is not None:  # {load: FILE}: read by the recipe check, not trained
                tok = _loaded_tokenizer(recipe, spec, timer)
            else:
                tok = recipe.build(spec)
                _fit_tokenizer(tok, spec.label, corpus, corpus_bytes, engine, timer, quiet)
            if engine is not None and engine.last_documents is not None:
                docs.counted = engine.last_documents  # the corpus's documents, counted by the workers
            tok.save(out_dir / f"{spec.label}.tokembed.json")
            for fmt in getattr(spec, "exports", ()):
                with timer.step(f"export tokenizer {spec.label} as {fmt}"):
                    export_into_run(tok, fmt, out_dir, spec.label)
            if getattr(spec, "encode", None) is not None:
                _encode_corpus(tok, spec, corpus, corpus_bytes, out_dir, timer, quiet, engine)
            result.tokenizers[spec.label] = tok
            if not metrics or corpus is None:  # an encoded corpus has no text to measure on
                continue
            if not _measure_on_engine(tok, spec.label, corpus, corpus_bytes, engine, reg, result, timer, quiet):
                listed = docs.get()  # read once, after the first fit, and shared by every tokenizer's evaluation
                with timer.step(f"evaluate tokenizer {spec.label}", docs.n_bytes):
                    result.metrics[spec.label] = tokenizer_metrics(
                        tok, progress(listed, f"evaluate {spec.label}", quiet), registry=reg
                    )
        if metrics and corpus is not None:  # after each tokenizer: a later failure keeps what was measured
            atomic_write_json(out_dir / "metrics.json", {"corpus": corpus.describe(), "tokenizers": result.metrics})

    if recipe.vectorizers is not None:
        _run_pipeline(recipe, result, sequences, corpus, docs, out_dir, timer, corpus_at, quiet, engine)

    for spec in recipe.embedders:
        with stage(spec, corpus_at=corpus_at):
            _run_embedder(recipe, spec, result, corpus, sequences, out_dir, timer, quiet, engine, corpus_bytes)

    if recipe.evaluate is not None:
        result.evaluation = _evaluate(recipe.evaluate, result, out_dir, timer, quiet, docs, sequences)


class _Documents:
    """The corpus's documents as a list, read on this machine only when a stage first needs them (the tokenizer
    metrics, a stage that is not counted on the engine, the evaluation's candidate words), then shared. A run whose
    counting all happens on an engine never reads the corpus here."""

    def __init__(self, corpus: Any):
        self.corpus = corpus
        self.listed: list[str] | None = None
        self.n_bytes = 0
        #: How many documents there are, when an engine has counted them (the client has not read them).
        self.counted: int | None = None

    def count(self) -> int | None:
        """The number of documents if known without reading them here."""
        return len(self.listed) if self.listed is not None else self.counted

    def get(self) -> list[str]:
        if self.listed is None:
            self.listed = list(self.corpus) if self.corpus is not None else []
            self.n_bytes = sum(len(d.encode("utf-8", "surrogatepass")) for d in self.listed)
        return self.listed


def _measure_on_engine(tok, label: str, corpus, corpus_bytes: int, engine, reg, result: RunResult, timer: Timer,
                       quiet: bool) -> bool:
    """With an engine, measure the tokenizer's metrics partition by partition on it and merge them (the same
    ``metrics.json`` as one pass); False, to measure here, without an engine or when a metric does not merge
    (a plugin's metric without :meth:`~tokembed.metrics.Metric.merge`, named in a warning)."""
    if engine is None or corpus is None:
        return False
    from .metrics import MeasureDocuments, MetricRun, metrics_of, run_metrics

    measure = MeasureDocuments(tok, run_metrics(None, reg))
    probe = MetricRun(tok, measure.metrics)
    if not probe.mergeable():
        names = ", ".join(name for name, m in probe.metrics.items() if not m.mergeable())
        warnings.warn(f"tokenizers.{label}: metrics measured on this machine, not on the engine: {names} cannot "
                      "merge partial results (Metric.merge); the corpus is read here for metrics.json", stacklevel=2)
        return False
    name = f"evaluate tokenizer {label}"
    with timer.step(name, corpus_bytes):
        run = engine.count(measure, corpus, label=f"evaluate {label}", quiet=quiet)
        result.metrics[label] = metrics_of(run.attach(tok))
    if engine.last_stats is not None:
        timer.table[name].update(engine.last_stats.as_dict())
    return True


def _loaded_tokenizer(recipe, spec, timer: Timer) -> Any:
    """The tokenizer of a ``{load: FILE}`` stage: the one the recipe check read (handed over once), else read now;
    its reading time is the step's."""
    from .recipe.load import read_tokenizer

    name = f"load tokenizer {spec.label}"
    with timer.step(name):
        kept = recipe.kept.pop(spec.label, None)
        if kept is not None:
            tok, seconds = kept
        else:
            started = time.perf_counter()
            tok = read_tokenizer(spec)  # an error is placed at the stage by stage()
            seconds = time.perf_counter() - started
    timer.table[name]["seconds"] = round(seconds, 4)
    return tok


def _encode_corpus(tok, spec, corpus, corpus_bytes: int, out_dir: Path, timer: Timer, quiet: bool,
                   engine=None) -> None:
    """A tokenizer stage's ``encode:``: the corpus's token ids, written by :func:`tokembed.encode.encode_corpus`
    (as ``tokembed encode`` writes them) into ``<label>.encoded`` of the run folder or the folder it names; on
    the Dask engine, partition by partition on its workers (the same files)."""
    from .encode import encode_corpus, on_engine

    enc = spec.encode
    out = enc.out if enc.out is not None else out_dir / f"{spec.label}.encoded"
    name = f"encode corpus {spec.label} ({enc.format})"
    dask = engine is not None and engine.type == "dask"
    with timer.step(name, corpus_bytes):
        encode_corpus(tok, corpus, out, format=enc.format, eot_id=enc.eot_id, corpus=corpus.describe(),
                      total_bytes=corpus_bytes or None, progress=not quiet,
                      map_partitions=on_engine(engine, corpus, label=f"encode {spec.label}", quiet=quiet)
                      if dask else None)
    if dask and engine.last_stats is not None:
        timer.table[name].update(engine.last_stats.as_dict())


def _fit_tokenizer(tok, label: str, corpus, corpus_bytes: int, engine, timer: Timer, quiet: bool) -> None:
    """Fit one tokenizer. With an engine (``engine:`` in the recipe) and a tokenizer that fits from partial counts,
    the corpus is counted on the engine (``partial_counts`` of each partition, merged in corpus order) and the
    tokenizer fitted from the merged counts (``fit_counts``), the step's timings naming the engine, its workers
    and partitions; otherwise ``fit`` reads the streamed corpus."""
    name = f"fit tokenizer {label}"
    on_engine = engine is not None and tok.fits_on_counts()
    with timer.step(name, corpus_bytes):
        if on_engine:
            tok.fit_counts(engine.count(tok.partial_counts, corpus, label=f"count {label}", quiet=quiet))
        else:
            tok.fit(progress(corpus, f"fit {label}", quiet))
    if on_engine and engine.last_stats is not None:
        timer.table[name].update(engine.last_stats.as_dict())


class _Sequences:
    """Each tokenizer's output over the corpus as :class:`~tokembed.sequences.TokenSequences`, encoded once, when a
    vectorizer pipeline or a trained embedder first asks for it, and shared by every later stage."""

    def __init__(self, result: RunResult, docs: _Documents, quiet: bool):
        self.result, self.docs, self.quiet = result, docs, quiet
        self.cache: dict[tuple[str, int], Any] = {}
        #: ``corpus: {encoded: DIR}``: the folder's mapped ids, handed to every consumer, and its tokenizer.
        self.encoded: Any = None
        self.encoded_tokenizer: Any = None

    def open_encoded(self, spec: Any, reg: Any) -> None:
        """Map the encoded folder of ``spec`` (:meth:`TokenSequences.open`) and load the tokenizer stored in it."""
        from . import load
        from .encoded import TOKENIZER_FILE
        from .sequences import TokenSequences

        try:
            self.encoded = TokenSequences.open(spec.encoded)
            self.encoded_tokenizer = load(spec.encoded / TOKENIZER_FILE, registry=reg)
        except TokembedError as exc:
            raise with_context(exc, f"{spec.location}: corpus.encoded: {exc}") from None

    def tokenizer(self, label: str | None) -> Any:
        """The tokenizer ``label`` names; none named: the encoded folder's (None without an encoded corpus)."""
        return self.result.tokenizers.get(label) if label else self.encoded_tokenizer

    def of(self, label: str | None, docs: list[str] | None = None, timer: Timer | None = None) -> Any:
        from .sequences import TokenSequences

        if self.encoded is not None:  # the recipe check made sure every tokenizer is the folder's
            return self.encoded

        own = docs is None
        docs = self.docs.get() if own else docs
        key = (label, id(docs))
        if key not in self.cache:
            tok = self.result.tokenizers[label]
            step = f"encode corpus {label}" + ("" if own else f" ({len(docs):,} documents)")
            with (timer.step(step) if timer is not None else _nothing()):
                self.cache[key] = TokenSequences.from_tokenizer(
                    tok, progress(docs, f"encode {label}", self.quiet))
        return self.cache[key]


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def _run_pipeline(recipe, result: RunResult, sequences: _Sequences, corpus, docs: _Documents, out_dir: Path,
                  timer: Timer, corpus_at: str | None, quiet: bool, engine=None) -> None:
    """The ``vectorizers:`` pipeline: each step fitted on the previous step's output (the first on the input
    tokenizer's token sequences, or on the raw documents without ``input:``); each fitted step saved as
    ``<label>.tokembed.json`` and its output as ``<label>.npz`` (sparse) or ``<label>.npy`` (dense).

    With an engine, a first step that fits from partial counts (bow, tfidf, onehot, cooccurrence) is counted on
    it: each worker encodes its partitions with the input tokenizer and counts them (co-occurrence in two passes,
    the vocabulary then the pairs). Its output is then the fitted matrix itself (co-occurrence), or the transform
    of each partition on the engine, gathered in corpus order or, with ``save_matrix: partitions``, written by the
    workers as ``<label>.part-NNNNN.npz`` and never gathered; this machine does not read the corpus for it."""
    pipe = recipe.vectorizers
    source, own = corpus, True  # the pipeline's documents: the corpus's, or the same files read by another unit
    if pipe.unit is not None and recipe.corpus is not None and pipe.unit != recipe.corpus.unit:
        from dataclasses import replace

        try:
            source, own = open_corpus(replace(recipe.corpus, unit=pipe.unit)), False
        except CorpusError as exc:
            raise with_context(exc, f"{corpus_at}: corpus: {exc}") from None
    if source is None:
        source = []
    first = recipe.build(pipe.steps[0])
    on_engine = engine is not None and first.fits_on_counts()
    listed = _Documents(source) if not own else docs

    def check_nearest(n: int | None, fitted: bool = False) -> None:
        if pipe.nearest is not None and n is not None and pipe.nearest >= n:
            raise TokembedError(f"{pipe.nearest_location or pipe.location}: vectorizers.nearest: {pipe.nearest} is "
                                f"not a document of the corpus (it has {n:,}, numbered 0 to {n - 1:,}); "
                                f"{'nothing was transformed' if fitted else 'no vectorizer was fitted'}")

    # before any fitting: from the documents listed here, or counted by the engine's workers
    encoded = sequences.encoded
    check_nearest(len(encoded) if encoded is not None else listed.count() if on_engine else len(listed.get()))
    source_bytes = source.size_bytes() if hasattr(source, "size_bytes") else None
    tok = sequences.tokenizer(pipe.input)

    def first_input() -> Any:
        if encoded is not None:
            return encoded
        if pipe.input is None:
            return listed.get()
        return sequences.of(pipe.input, None if own else listed.get(), timer)

    X: Any = None
    for i, spec in enumerate(pipe.steps):
        with stage(spec, corpus_at=corpus_at):
            vec = first if i == 0 else recipe.build(spec)
            name = f"fit vectorizer {spec.label}"
            parts = None
            with timer.step(name, source_bytes if i == 0 and on_engine else None):
                if i == 0 and on_engine:
                    engine.fit(vec, source, tokenizer=tok, label=f"count {spec.label}", quiet=quiet)
                    fit_stats = engine.last_stats
                    check_nearest(engine.last_documents, fitted=True)  # counted by the workers: before the transform
                    Y = vec.fitted_output()
                    if Y is None:
                        t_transform = time.perf_counter()
                        rows = engine.transform(vec, source, tokenizer=tok, quiet=quiet, label=f"transform {spec.label}",
                                                folder=str(out_dir) if pipe.save_matrix == "partitions" else None,
                                                stem=spec.label)
                        if pipe.save_matrix == "partitions":
                            parts = rows.blocks
                        else:
                            Y = rows.stack()
                        if fit_stats is not None:
                            fit_stats.extra["transform_seconds"] = round(time.perf_counter() - t_transform, 4)
                else:
                    Y = vec.fit_transform(first_input() if i == 0 else X)
            if i == 0 and on_engine and fit_stats is not None:
                timer.table[name].update(fit_stats.as_dict())
            vec.save(out_dir / f"{spec.label}.tokembed.json")
        result.vectorizers[spec.label] = vec
        if parts is not None:
            result.matrices[spec.label] = _write_parts(out_dir / spec.label, parts, spec)
            return  # a one-step pipeline (recipe check): nothing follows
        result.matrices[spec.label] = _describe_matrix(Y)
        if _all_zero(Y):
            warnings.warn(f"{spec.location}: vectorizers.{spec.label}: every value of its {Y.shape[0]:,} x "
                          f"{Y.shape[1]:,} output is zero (a vocabulary that matches no token of the documents, or "
                          "parameters that zero every cell?)", stacklevel=2)
        if pipe.save_matrix:
            save_matrix(out_dir / spec.label, Y)
        X = Y
    if pipe.nearest is not None:
        if encoded is not None:  # the documents' text, decoded from their ids
            listed.listed = _Decoded(encoded, tok)  # type: ignore[assignment]
        result.neighbours["vectorizers"] = _nearest_documents(X, pipe.nearest, listed, pipe)


class _Decoded:
    """Document ``i`` of an encoded corpus as text (its ids decoded), for the nearest documents' previews."""

    def __init__(self, seqs: Any, tok: Any):
        self.seqs, self.tok = seqs, tok

    def __len__(self) -> int:
        return len(self.seqs)

    def __getitem__(self, i: int) -> str:
        return self.tok.decode(self.seqs[i].tolist())

    def __iter__(self) -> Iterator[str]:
        """Every document in order, decoded a chunk at a time (``decode_batch`` where the tokenizer has it)."""
        decode_batch = getattr(self.tok, "decode_batch", None)
        for part in self.seqs.in_memory_chunks():
            if callable(decode_batch):
                yield from decode_batch([part.ids[a:b] for a, b in zip(part.offsets[:-1], part.offsets[1:])])
            else:
                yield from (self.tok.decode(doc.tolist()) for doc in part)


def _write_parts(stem: Path, parts: list, spec) -> dict[str, Any]:
    """``<label>.parts.json``: the files the workers wrote, in corpus order, with their rows; returns the matrix's
    description (as ``_describe_matrix``)."""
    rows = sum(p.rows for p in parts)
    columns = parts[0].columns if parts else 0
    sparse = all(p.nnz is not None for p in parts)
    listing = {"shape": [rows, columns], "dtype": parts[0].dtype if parts else "float32", "sparse": sparse,
               "parts": [{"file": p.name, "rows": p.rows, **({"nnz": p.nnz} if sparse else {}),
                          "source": p.source} for p in parts]}
    if sparse:
        listing["nnz"] = sum(p.nnz for p in parts)
        if listing["nnz"] == 0:
            warnings.warn(f"{spec.location}: vectorizers.{spec.label}: every value of its {rows:,} x {columns:,} "
                          "output is zero (a vocabulary that matches no token of the documents, or parameters that "
                          "zero every cell?)", stacklevel=2)
    atomic_write_json(stem.with_name(stem.name + ".parts.json"), listing)
    return {k: v for k, v in listing.items() if k != "parts"}


def _all_zero(Y: Any) -> bool:
    import numpy as np

    if hasattr(Y, "nnz"):
        return Y.nnz == 0 or not np.any(Y.data)
    return not np.any(np.asarray(Y))


def _describe_matrix(Y: Any) -> dict[str, Any]:
    sparse = hasattr(Y, "nnz")
    out = {"shape": [int(n) for n in Y.shape], "dtype": str(Y.dtype), "sparse": sparse}
    if sparse:
        out["nnz"] = int(Y.nnz)
    return out


def _nearest_documents(Y: Any, query: int, docs: _Documents, pipe: Any = None, top: int = 5) -> dict[str, Any]:
    """The ``top`` rows nearest to row ``query`` of ``Y`` by cosine similarity
    (:func:`tokembed.similarity.nearest_rows`, which warns of all-zero rows by index), with the start of each
    document (read from the documents already listed, or else by one pass that keeps only those documents)."""
    from .similarity import nearest_rows

    n = Y.shape[0]
    if query >= n:
        where = f"{pipe.nearest_location or pipe.location}: " if pipe is not None else ""
        raise TokembedError(f"{where}vectorizers.nearest: {query} is not a document of the corpus (the output has "
                            f"{n:,}, numbered 0 to {n - 1:,})")
    nearest = nearest_rows(Y, query, top)
    wanted = {query, *(i for i, _ in nearest)}
    if docs.listed is not None:
        texts = {i: docs.listed[i] for i in wanted if i < len(docs.listed)}
    else:
        texts = {}
        for i, doc in enumerate(docs.corpus if docs.corpus is not None else ()):
            if i in wanted:
                texts[i] = doc
                if len(texts) == len(wanted):
                    break

    def head(i: int) -> str:
        text = " ".join(texts.get(i, "").split())
        return text[:70] + ("..." if len(text) > 70 else "")

    return {"document": query, "text": head(query),
            "nearest": [{"document": i, "cosine": round(cos, 4), "text": head(i)} for i, cos in nearest]}


def _run_embedder(recipe, spec, result: RunResult, corpus, sequences: _Sequences, out_dir: Path, timer: Timer,
                  quiet: bool, engine=None, corpus_bytes: int = 0) -> None:
    tok = sequences.tokenizer(spec.input)
    emb = recipe.build(spec)
    if tok is not None:
        # what the embedder takes from its tokenizer (the recipe checked any value it sets against the plan)
        emb.set_params(**emb.params_from_tokenizer(tok))
    if emb.fits_on_tokens:
        if tok is None:
            raise TokembedError(f"{emb.name} learns from token sequences: set input: to a tokenizer of the recipe")
        name = f"fit embedder {spec.label}"
        if engine is not None and emb.fits_on_counts():
            # the counting on the engine (each worker encodes its partitions with the input tokenizer), the
            # training here, on the merged counts (GloVe: the co-occurrence matrix)
            with timer.step(name, corpus_bytes):
                engine.fit(emb, corpus, tokenizer=tok, label=f"count {spec.label}", quiet=quiet)
            if engine.last_stats is not None:
                timer.table[name].update(engine.last_stats.as_dict())
        else:
            data = sequences.of(spec.input, timer=timer)
            with timer.step(name, None):
                emb.fit(data)
    else:
        with timer.step(f"fit embedder {spec.label}"):
            emb.fit(None)
    emb.save(out_dir / f"{spec.label}.tokembed.json")
    result.embedders[spec.label] = emb
    result.embedder_inputs[spec.label] = spec.input or ""
    if spec.nearest:
        result.neighbours[spec.label] = _nearest_words(emb, spec.nearest)
    batch = spec.batch
    if batch is None or tok is None:
        return
    truncation, max_length = bool(batch.truncation), batch.max_length
    limit = emb.max_input_length()
    lines = corpus.head(batch.lines)
    if isinstance(limit, int):
        if max_length is not None and max_length > limit:
            limit_text, raise_it = describe_limit(type(emb), limit)
            raise TokembedError(f"batch.max_length={max_length} is longer than the embedder's {limit_text}; "
                                f"lower batch.max_length or {raise_it}")
        if max_length is None:
            # a batch must fit the embedding's position table: cut at max_len (as if truncation were asked), and
            # say so when a line is longer
            truncation, max_length = True, limit
            longest = max((len(e) for e in tok.encode_batch(lines)), default=0)
            if longest > limit:
                limit_text, raise_it = describe_limit(type(emb), limit)
                warnings.warn(f"embedders.{spec.label}: the batch is cut at the embedder's {limit_text} (its "
                              f"longest line has {longest} tokens); set batch.max_length (with truncation: true) or "
                              f"{raise_it} to choose", stacklevel=2)
    enc = tok.encode_batch(lines, padding=batch.padding or False, truncation=truncation,
                           max_length=max_length if truncation or batch.padding == "max_length" else None,
                           return_arrays=True)
    with timer.step(f"embed batch {spec.label}"):
        vectors = emb.embed(enc["input_ids"])
    atomic_save_npy(out_dir / f"{spec.label}.input_ids.npy", enc["input_ids"])
    atomic_save_npy(out_dir / f"{spec.label}.attention_mask.npy", enc["attention_mask"])
    atomic_save_npy(out_dir / f"{spec.label}.embeddings.npy", vectors)
    result.arrays[spec.label] = {"input_ids": enc["input_ids"], "embeddings": vectors}


def _evaluate(spec, result: RunResult, out_dir: Path, timer: Timer, quiet: bool,
              docs: _Documents | None = None, sequences: _Sequences | None = None) -> dict[str, Any]:
    """Score every word-vector embedder of the run (``wv_``) and each pretrained vectors source on the sets.
    Vectors of a subword tokenizer's pieces are scored on words composed from them (:mod:`tokembed.pieces`), with
    the corpus's 30,000 most frequent words, composed the same way, as the analogy candidates."""
    from .evaluation import evaluate_vectors

    sources: list[tuple[str, Any, str, Any]] = []  # (label, getter, the recipe's FILE:LINE:COL or "", tokenizer)
    for label, emb in result.embedders.items():
        if getattr(emb, "wv_", None) is not None:
            tok = result.tokenizers.get(result.embedder_inputs.get(label, "")) if sequences is None else \
                sequences.tokenizer(result.embedder_inputs.get(label) or None)  # none named: the encoded folder's
            pieces = tok is not None and not getattr(tok, "whole_words", False)
            sources.append((label, lambda emb=emb: emb.wv_, "", tok if pieces else None))
    for vec in spec.vectors:
        sources.append((vec.label, vec.load, vec.where, None))
    results: dict[str, Any] = {}
    pool: list[str] | None = None
    for label, get, where, tok in sources:
        with timer.step(f"evaluate vectors {label}"):
            vectors = get()
            options = spec.options()
            composed = None
            if tok is not None:
                # vectors of a subword tokenizer's pieces: each evaluation word gets the mean of its pieces'
                # vectors, and analogies search the corpus's frequent words composed the same way
                from .evaluation import evaluation_words
                from .pieces import evaluation_table, frequent_words

                if pool is None:
                    pool = frequent_words(_Decoded(sequences.encoded, tok)
                                          if sequences is not None and sequences.encoded is not None else
                                          docs.listed if docs is not None and docs.listed is not None else
                                          (docs.corpus or []) if docs is not None else [])
                vectors, composed, options["restrict_vocab"] = evaluation_table(
                    tok, vectors, evaluation_words(spec.sets), pool)
            try:
                results[label] = evaluate_vectors(vectors, list(spec.sets), **options)
                if composed is not None:
                    results[label]["composed"] = {"compose": composed.compose, "words": composed.words,
                                                  "single_token_share": round(composed.single_token_share, 6)}
            except TokembedError as exc:  # NaN vectors, ...: say which source
                prefix = f"{where}: evaluate.vectors.{label}" if where else f"evaluate: vectors {label}"
                raise with_context(exc, f"{prefix}: {exc}") from None
    if not sources and not quiet:
        print("evaluate: no word vectors to score (no embedder of this recipe produces them, and evaluate.vectors "
              "names none)")
    atomic_write_json(out_dir / "evaluation.json", results)
    return results


def _nearest_words(emb: Any, words: Sequence[str], top: int = 5) -> dict[str, Any]:
    """For each word, its ``top`` nearest keys in the embedder's ``wv_`` (None for a word without a vector)."""
    wv = getattr(emb, "wv_", None)
    if wv is None:
        raise TokembedError(f"nearest: {emb.name} produces no word vectors (wv_) to look neighbours up in")
    out: dict[str, Any] = {}
    for word in words:
        try:
            out[word] = [[key, round(float(sim), 4)] for key, sim in wv.most_similar(word, topn=top)]
        except KeyError:
            out[word] = None
    return out
