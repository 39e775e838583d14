"""Tokenizers x embedders: which tokenizer makes the best word vectors, in one run.

:func:`run_grid` takes fitted tokenizers and the documents of the recipe's corpus. Each tokenizer's token
sequences are computed once (:meth:`tokembed.sequences.TokenSequences.from_tokenizer`) and shared by every
embedder; each embedder is trained over each tokenizer's sequences, one cell after the other; the evaluation
words get vectors composed from their pieces (:func:`tokembed.pieces.compose_word_vectors`) and are scored on the
evaluation sets (:func:`tokembed.evaluation.evaluate_vectors`). A cell that fails is recorded with its error and
the others still run.

How a cell is scored
--------------------
- Word pairs: Spearman rho with its 95% confidence interval (Fisher z, :func:`tokembed.evaluation.spearman_interval`)
  and the share of the set's pairs whose two words got a vector.
- Analogies: 3CosAdd accuracy among a candidate pool common to every cell: the 30,000 most frequent words of the
  training corpus (:func:`tokembed.pieces.frequent_words`: lowercased whitespace-separated forms, count-descending,
  ties by the word), each given a vector composed from its pieces as the evaluation words are. A question is answered when its four words
  are in the pool and got a vector (gensim's ``restrict_vocab=30000`` over word vectors, made to work for subword
  tokenizers, which have no word vocabulary to search); its share of the questions is the set's coverage. The
  pool is the same list of words for every tokenizer, so no tokenizer is scored against a smaller or easier set
  of candidates: one that cannot give a pool word a vector (a word tokenizer's ``<unk>``) loses that candidate
  and the questions that need it.
- The share of evaluation words that the tokenizer keeps as a single token (not ``<unk>`` or another special
  token; a property of the tokenizer, the same in every embedder's cell).

:class:`Grid` holds the cells and renders them (terminal table, JSON, CSV); the HTML report draws a heat map per
evaluation set (:mod:`tokembed.compare.report`).
"""

from __future__ import annotations

import csv
import io
import json
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..errors import TokembedError

__all__ = ["Grid", "Cell", "run_grid"]


@dataclass
class Cell:
    """One (tokenizer, embedder) cell: its scores per set, or the error that stopped it."""

    tokenizer: str
    embedder: str
    scores: dict[str, dict[str, Any]] = field(default_factory=dict)
    single_token_share: float | None = None
    words: int = 0
    vectors: int = 0
    seconds: float = 0.0
    vectors_file: str | None = None
    error: str | None = None

    def headline(self, set_name: str) -> float | None:
        """The cell's main figure on a set: Spearman rho for word pairs, accuracy for analogies."""
        score = self.scores.get(set_name) or {}
        return score.get("spearman") if score.get("kind") == "word_pairs" else score.get("accuracy")

    def as_dict(self) -> dict[str, Any]:
        return {"tokenizer": self.tokenizer, "embedder": self.embedder, "error": self.error,
                "seconds": self.seconds, "words": self.words, "word_vectors": self.vectors,
                "single_token_share": self.single_token_share, "vectors_file": self.vectors_file,
                "scores": self.scores}


@dataclass
class Grid:
    """Every (tokenizer, embedder) cell of a grid, with what the rows and columns are."""

    tokenizers: dict[str, dict[str, Any]]
    embedders: dict[str, dict[str, Any]]
    sets: list[str]
    compose: str
    cells: list[Cell]
    seconds: float = 0.0

    def cell(self, tokenizer: str, embedder: str) -> Cell:
        for c in self.cells:
            if (c.tokenizer, c.embedder) == (tokenizer, embedder):
                return c
        raise KeyError(f"no cell ({tokenizer}, {embedder})")

    # -- renderings ---------------------------------------------------------------------------------------------
    def to_dict(self, timings: bool = True) -> dict[str, Any]:
        cells = []
        for c in self.cells:
            d = c.as_dict()
            if not timings:
                d.pop("seconds")
            cells.append(d)
        out: dict[str, Any] = {"tokenizers": self.tokenizers, "embedders": self.embedders, "sets": self.sets,
                               "compose": self.compose, "cells": cells}
        if timings:
            out["seconds"] = self.seconds
        return out

    def to_json(self) -> str:
        """``grid.json``: the cells in order; only the ``seconds`` fields differ between two runs with seeds."""
        from ..io import dumps_json

        return dumps_json(self.to_dict())

    def columns(self) -> list[tuple[str, str]]:
        return [(e, s) for e in self.embedders for s in self.sets]

    def to_csv(self) -> str:
        """One row per cell and set: tokenizer, embedder, set, score, its interval, coverage, single-token share."""
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(["tokenizer", "embedder", "set", "kind", "score", "ci95_low", "ci95_high", "coverage",
                         "single_token_share", "seconds", "error"])
        for c in self.cells:
            for s in self.sets:
                score = c.scores.get(s) or {}
                ci = score.get("spearman_ci95") or [None, None]
                writer.writerow([c.tokenizer, c.embedder, s, score.get("kind", ""), _num(c.headline(s)),
                                 _num(ci[0]), _num(ci[1]), _num(_coverage(score)), _num(c.single_token_share),
                                 round(c.seconds, 3), c.error or ""])
        return buf.getvalue()

    def to_table(self) -> str:
        """Rows tokenizers, columns embedder x set (rho or accuracy), then the single-token share and time."""
        cols = self.columns()
        headers = ["tokenizer", *(f"{e}:{s}" for e, s in cols), *(f"{e}:1-token" for e in self.embedders),
                   "seconds"]
        rows = []
        for tok in self.tokenizers:
            row = [tok]
            for e, s in cols:
                c = self.cell(tok, e)
                row.append("error" if c.error else _fmt(c.headline(s)))
            row.extend(_fmt(self.cell(tok, e).single_token_share, ".1%") for e in self.embedders)  # the tokenizer's
            row.append(f"{sum(self.cell(tok, e).seconds for e in self.embedders):.1f}")
            rows.append(row)
        widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
        lines = ["  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(headers, widths)))]
        lines.extend("  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(r, widths)))
                     for r in rows)
        for c in self.cells:
            if c.error:
                lines.append(f"cell {c.tokenizer} x {c.embedder} failed: {c.error}")
        lines.append(f"grid: {len(self.cells)} cells in {self.seconds:.1f} s; scores are Spearman rho (word pairs) "
                     f"and accuracy (analogies), words composed by {self.compose} of their pieces")
        return "\n".join(lines)

    def html_section(self) -> str:
        """The report's section for the grid: heat maps per set and every cell (needs matplotlib)."""
        from .grid_report import grid_section

        return grid_section(self)

    def write(self, folder: Path) -> dict[str, Path]:
        from ..io import atomic_write_text

        folder = Path(folder)
        return {"grid_json": atomic_write_text(folder / "grid.json", self.to_json()),
                "grid_csv": atomic_write_text(folder / "grid.csv", self.to_csv())}

    @classmethod
    def from_json(cls, text: str) -> "Grid":
        data = json.loads(text)
        cells = [Cell(c["tokenizer"], c["embedder"], c["scores"], c["single_token_share"], c["words"],
                      c["word_vectors"], c.get("seconds", 0.0), c["vectors_file"], c["error"]) for c in data["cells"]]
        return cls(data["tokenizers"], data["embedders"], data["sets"], data["compose"], cells,
                   data.get("seconds", 0.0))


def _coverage(score: Mapping[str, Any]) -> float | None:
    from .grid_report import scored_counts

    counts = scored_counts(dict(score))
    return counts[0] / counts[1] if counts else None


def _num(x: Any) -> Any:
    return "" if x is None else (round(x, 6) if isinstance(x, float) else x)


def _fmt(x: float | None, spec: str = ".3f") -> str:
    return "n/a" if x is None else format(x, spec)


# ---------------------------------------------------------------------------------------------------------------
# running
# ---------------------------------------------------------------------------------------------------------------
def run_grid(spec: Any, tokenizers: Mapping[str, Any], docs: Sequence[str], *, folder: Path | None = None,
             progress: Callable[[str], None] | None = None, quiet: bool = True) -> Grid:
    """Train every embedder of ``spec`` (a :class:`tokembed.recipe.GridSpec`) over every tokenizer's token
    sequences of ``docs`` and score each cell (see the module notes).

    Parameters
    ----------
    spec : GridSpec
    tokenizers : mapping of str to Tokenizer
        Fitted tokenizers by label, in row order.
    docs : sequence of str
        The training documents (read once per tokenizer).
    folder : Path, optional
        Where each cell's piece vectors go (``grid/<tokenizer>.<embedder>.vectors.npz``) when ``spec.save_vectors``.
    progress : callable, optional
        Called with a line naming each cell as it starts and ends.

    Returns
    -------
    Grid
        A cell that raised holds its error (``"TypeName: message"``); the other cells still ran.

    Raises
    ------
    TokembedError
        If the evaluation sets cannot be read (not fetched: the message gives the command), before any training.
    """
    from ..evaluation import evaluate_vectors, evaluation_words
    from ..pieces import compose_word_vectors, frequent_words, with_candidates
    from ..runs import progress as bar
    from ..sequences import TokenSequences

    say = progress or (lambda message: None)
    words = evaluation_words(spec.sets)
    pool = frequent_words(docs)
    started = time.perf_counter()
    cells: list[Cell] = []
    n_cells = len(tokenizers) * len(spec.embedders)
    done = 0
    for tok_label, tok in tokenizers.items():
        t0 = time.perf_counter()
        seqs = TokenSequences.from_tokenizer(tok, bar(docs, f"encode {tok_label}", quiet))
        encode_seconds = time.perf_counter() - t0
        say(f"grid: {tok_label}: {seqs.n_tokens:,} tokens in {len(seqs):,} documents ({encode_seconds:.1f} s)")
        for emb_spec in spec.embedders:
            done += 1
            cell = Cell(tok_label, emb_spec.label)
            say(f"grid: cell {done}/{n_cells}: {emb_spec.label} over {tok_label} ...")
            t1 = time.perf_counter()
            try:
                emb = emb_spec.build()
                emb.set_params(**emb.params_from_tokenizer(tok))
                emb.fit(seqs)
                wv = getattr(emb, "wv_", None)
                if wv is None:
                    raise TokembedError(f"{emb.name} produced no word vectors (wv_) to evaluate")
                composed = compose_word_vectors(tok, wv, words, spec.compose)
                cell.words, cell.vectors = composed.words, composed.covered
                cell.single_token_share = round(composed.single_token_share, 6)
                if composed.covered:
                    table, n_pool = with_candidates(tok, wv, composed, pool, spec.compose)
                    cell.scores = evaluate_vectors(table, list(spec.sets), restrict_vocab=max(n_pool, 1))
                else:
                    raise TokembedError(f"no evaluation word got a vector ({composed.words:,} words; every piece "
                                        "is unknown to the vectors)")
                if spec.save_vectors and folder is not None:
                    cell.vectors_file = _save_vectors(wv, Path(folder), f"{tok_label}.{emb_spec.label}")
            except Exception as exc:  # noqa: BLE001 - one cell's failure is reported in that cell, the grid goes on
                cell.error = f"{type(exc).__name__}: {exc}"
                if not isinstance(exc, TokembedError):  # a plugin bug: say where, the code line of the last frame
                    lines = traceback.format_exc(limit=-1).strip().splitlines()[:-1]
                    code = [x.strip() for x in lines if x.strip() and set(x.strip()) - set("^~ ")]
                    if code:
                        cell.error += f" ({code[-1]})"
            cell.seconds = round(time.perf_counter() - t1, 3)
            cells.append(cell)
            say(f"grid: cell {done}/{n_cells}: {emb_spec.label} over {tok_label}: "
                f"{'failed: ' + cell.error if cell.error else 'done'} ({cell.seconds:.1f} s)")
    tok_info = {label: {"type": getattr(t, "name", type(t).__name__), "vocab_size": int(t.get_vocab_size())}
                for label, t in tokenizers.items()}
    emb_info = {s.label: {"type": s.type, "params": {k: _plain(v) for k, v in sorted(s.params.items())}}
                for s in spec.embedders}
    return Grid(tok_info, emb_info, list(spec.sets), spec.compose, cells, round(time.perf_counter() - started, 3))


def _save_vectors(wv: Any, folder: Path, stem: str) -> str:
    """The cell's piece vectors as ``grid/<stem>.vectors.npz``: ``keys`` (str, n) and ``vectors`` (float32 (n, d)),
    deterministic, no pickle (token keys may hold spaces, which word2vec files cannot). Returns the path relative to
    ``folder``. Read back with ``KeyedVectors.from_arrays(z["keys"].tolist(), z["vectors"])``."""
    import numpy as np

    from ..io import atomic_save_npz

    path = folder / "grid" / f"{stem}.vectors.npz"
    atomic_save_npz(path, keys=np.array(list(wv.index_to_key), dtype=str), vectors=np.asarray(wv.vectors))
    return str(path.relative_to(folder))


def _plain(value: Any) -> Any:
    from ..recipe.params import plain_data

    return plain_data(value)
