"""The ``evaluate:`` section of a recipe: word-vector evaluation sets, read by dataset name, and the vectors to score.

```yaml
evaluate:
  sets: [wordsim353, simlex999, google_analogy]   # word_pairs and analogies datasets (``tokembed data list``)
  restrict_vocab: 30000                           # analogies: only the 30,000 most frequent words (gensim's rule)
  vectors:                                        # pretrained vectors to score beside the recipe's own
    glove50: {dataset: glove_6b_50d}
    mine: {path: vectors.bin, binary: true, limit: 200000}
    glove: {path: glove.6B.50d.txt, no_header: true}   # a text file without the "<count> <dimensions>" line
```
The short form ``evaluate: [wordsim353, simlex999]`` names the sets only. Every set and every vector source must be
fetched (or exist) before any work; a missing one is a problem that gives the ``tokembed data fetch`` command. The
first lines of a word2vec file are checked too: a file without the header line needs ``no_header: true``, a file
with it must not have ``no_header: true``, and an empty file is a problem; so is a folder without ``vectors.npy``
or ``vocab.txt``.
Embedders that produce word vectors (an attribute ``wv_`` holding :class:`~tokembed.keyedvectors.KeyedVectors`)
are evaluated too. Private to :mod:`tokembed.recipe`.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as _field
from pathlib import Path
from typing import Any

from yaml.nodes import MappingNode, Node, SequenceNode

from ..errors import TokembedError, with_context
from .corpus import dataset_location
from .context import Context
from .nodes import Problems, describe_node, did_you_mean, join_path, mapping_items
from ..params import Interval
from .params import INVALID, coerce

__all__ = ["EvaluateSpec", "VectorsSpec", "check_evaluate", "check_sets", "EVALUATE_KEYS"]

EVALUATE_KEYS = ("sets", "restrict_vocab", "pairs_restrict_vocab", "case_insensitive", "vectors")
_SET_KINDS = ("word_pairs", "analogies")
_VECTOR_KEYS = ("dataset", "path", "binary", "limit", "no_header")
_AT_LEAST_ONE = Interval(int, 1, None)


@dataclass(frozen=True)
class VectorsSpec:
    """Pretrained vectors to evaluate: a ``vectors`` dataset or a word2vec file (text, or binary).

    Attributes
    ----------
    label : str
        The key under ``evaluate.vectors``.
    source : {"dataset", "path"}
    value : str
        The dataset's name, or the path as written.
    location : Path or None
        The file or folder (relative paths resolved against the recipe's folder); for a dataset, where it is.
    binary : bool or None
        The binary word2vec format; None: binary when the name ends in ``.bin``.
    limit : int or None
        Read only the first ``limit`` vectors.
    no_header : bool
        A text file without the ``"<count> <dimensions>"`` line (GloVe's own ``.txt``).
    where : str
        ``FILE:LINE:COL`` of the entry in the recipe.
    """

    label: str
    source: str  # "dataset" or "path"
    value: str
    location: Path | None
    binary: bool | None = None
    limit: int | None = None
    no_header: bool = False
    where: str = _field(default="", compare=False)

    def load(self) -> Any:
        """The vectors as :class:`~tokembed.keyedvectors.KeyedVectors`.

        Raises
        ------
        TokembedError
            As :func:`tokembed.keyedvectors.load_vectors` (``ArtifactError`` for a malformed file, ``DataError``
            for a dataset), its message prefixed with the entry: ``FILE:LINE:COL: evaluate.vectors.LABEL: ...``;
            a missing header line suggests ``no_header: true``, a header read with ``no_header: true`` says to
            remove it.
        """
        from ..keyedvectors import load_vectors

        target = self.value if self.source == "dataset" else str(self.location)
        try:
            return load_vectors(target, binary=self.binary, limit=self.limit, no_header=self.no_header)
        except TokembedError as exc:
            header = getattr(exc, "header", None)  # a header problem, as data (tokembed.vectorfiles)
            message = str(exc)
            if header == "missing":
                message = f"{exc.problem} (a file without this line, like GloVe's .txt, reads with no_header: " \
                          f"true under evaluate.vectors.{self.label})"
            elif header == "present":
                message = f"{exc.problem} (line 1 is a word2vec header '<count> <dimensions>': remove " \
                          f"no_header: true from evaluate.vectors.{self.label})"
            message = f"{self.where}: evaluate.vectors.{self.label}: {message}" if self.where else message
            raise with_context(exc, message) from exc

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {self.source: self.value if self.source == "dataset" else str(self.location)}
        if self.binary is not None:
            out["binary"] = self.binary
        if self.limit is not None:
            out["limit"] = self.limit
        if self.no_header:
            out["no_header"] = True
        return out


@dataclass(frozen=True)
class EvaluateSpec:
    """The ``evaluate:`` section: sets (dataset names), analogy vocabulary limit, vectors to score."""

    sets: tuple[str, ...]
    restrict_vocab: int | None = 30000
    pairs_restrict_vocab: int | None = None
    case_insensitive: bool = True
    vectors: tuple[VectorsSpec, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "sets": list(self.sets),
            "restrict_vocab": self.restrict_vocab,
            "pairs_restrict_vocab": self.pairs_restrict_vocab,
            "case_insensitive": self.case_insensitive,
        }
        if self.vectors:
            out["vectors"] = {v.label: v.as_dict() for v in self.vectors}
        return out

    def options(self) -> dict[str, Any]:
        """Keyword arguments of :func:`tokembed.evaluation.evaluate_vectors`."""
        return {"restrict_vocab": self.restrict_vocab, "pairs_restrict_vocab": self.pairs_restrict_vocab,
                "case_insensitive": self.case_insensitive}


def check_sets(node: Node, path: str, problems: Problems) -> tuple[str, ...] | None:
    if not isinstance(node, SequenceNode) or not node.value:
        problems.add(node, path, f"expected a list of evaluation sets, e.g. [wordsim353, simlex999], "
                                 f"got {describe_node(node)}")
        return None
    names: list[str] = []
    ok = True
    for i, item in enumerate(node.value):
        where = join_path(path, i)
        name = coerce(item, str, where, problems)
        if name is INVALID:
            ok = False
            continue
        if name in names:
            problems.add(item, where, f"{name!r} is listed twice")
            ok = False
            continue
        if dataset_location(name, item, where, problems, kinds=_SET_KINDS) is None:
            ok = False
        names.append(name)
    return tuple(names) if ok else None


def _vectors(node: Node, path: str, problems: Problems, base_dir: Path) -> tuple[VectorsSpec, ...] | None:
    if not isinstance(node, MappingNode):
        problems.add(node, path, f"expected a mapping of labels to {{dataset: NAME}} or {{path: FILE}}, "
                                 f"got {describe_node(node)}")
        return None
    out: list[VectorsSpec] = []
    ok = True
    for label, _, vnode in mapping_items(node):
        where = join_path(path, label)
        if not isinstance(vnode, MappingNode):
            problems.add(vnode, where, f"expected {{dataset: NAME}} or {{path: FILE}}, got {describe_node(vnode)}")
            ok = False
            continue
        fields: dict[str, tuple[Node, Any]] = {}
        for key, knode, fnode in mapping_items(vnode):
            if key not in _VECTOR_KEYS:
                problems.add(knode, join_path(where, key),
                             f"unknown key.{did_you_mean(key, _VECTOR_KEYS)} Allowed: {', '.join(_VECTOR_KEYS)}")
                ok = False
                continue
            hint = {"dataset": str, "path": str, "binary": bool | None, "limit": int | None, "no_header": bool}[key]
            value = coerce(fnode, hint, join_path(where, key), problems, _AT_LEAST_ONE if key == "limit" else None)
            ok = ok and value is not INVALID
            fields[key] = (fnode, value)
        sources = [k for k in ("dataset", "path") if k in fields]
        if len(sources) != 1:
            problems.add(vnode, where, "give exactly one of dataset: NAME or path: FILE")
            ok = False
            continue
        source = sources[0]
        fnode, value = fields[source]
        if value is INVALID:
            continue
        if source == "dataset" and fields.get("no_header", (None, False))[1] is True:
            problems.add(fields["no_header"][0], join_path(where, "no_header"),
                         "applies to word2vec text files (path: FILE), not to a dataset")
            ok = False
            continue
        if source == "dataset":
            location = dataset_location(value, fnode, join_path(where, "dataset"), problems, kinds=("vectors",))
            if location is None:
                ok = False
                continue
            location = location or None
        else:
            location = Path(value).expanduser()
            if not location.is_absolute():
                location = base_dir / location
            if not location.exists():
                problems.add(fnode, join_path(where, "path"), f"no such file or folder: {value}")
                ok = False
                continue
        binary = fields.get("binary", (None, None))[1]
        limit = fields.get("limit", (None, None))[1]
        no_header = fields.get("no_header", (None, False))[1]
        if binary is INVALID or no_header is INVALID:
            continue
        if not _file_fits(fields, source, location, binary, no_header, where, problems):
            ok = False
            continue
        out.append(VectorsSpec(label, source, value, location, binary, limit, no_header, problems.where(vnode)))
    return tuple(out) if ok else None


def _file_fits(fields: dict[str, tuple[Node, Any]], source: str, location: Path | None, binary: bool | None,
                 no_header: bool, where: str, problems: Problems) -> bool:
    """``no_header:`` agrees with the source, a word2vec file is not empty and has the header line exactly when it
    needs one, and a folder holds what :meth:`~tokembed.keyedvectors.KeyedVectors.from_dataset` reads. Cheap: the
    first two lines of a file, the names in a folder and the header of its ``vectors.npy``; the reader would fail on
    any of these after the run's training."""
    is_file = source == "path" and location is not None and location.is_file()
    binary_file = bool(binary) or (binary is None and location is not None and location.suffix == ".bin")
    if no_header:
        nnode = fields["no_header"][0]
        if not is_file:  # a folder (vectors.npy + vocab.txt); a dataset is refused before it is looked up
            problems.add(nnode, join_path(where, "no_header"),
                         "applies to word2vec text files (path: FILE), not to a folder")
            return False
        if binary_file:
            problems.add(nnode, join_path(where, "no_header"),
                         "applies to the text format only (a binary word2vec file always has the header line)")
            return False
    if source != "path" or location is None:
        return True  # a dataset: built by tokembed data fetch, and checked by it
    pnode, value = fields["path"]
    ppath = join_path(where, "path")
    if location.is_dir():
        problem = _folder_problem(location)
        if problem:
            problems.add(pnode, ppath, f"{value}: {problem}")
        return not problem
    if not is_file:
        return True
    try:
        with open(location, "rb") as fh:
            first = fh.readline(65536)
            second = fh.readline(1 << 20) if no_header else b""
    except OSError as exc:
        problems.add(pnode, ppath, f"{value}: cannot read: {exc.strerror or exc}")
        return False
    if not first:
        problems.add(pnode, ppath, f"{value}: the file is empty; expected word vectors in word2vec format")
        return False
    from ..keyedvectors import header_then_vector, read_word2vec_header

    if no_header:
        found = header_then_vector(first, second) if second.endswith(b"\n") or len(second) < 1 << 20 else None
        if found is None:
            return True
        problems.add(fields["no_header"][0], join_path(where, "no_header"),
                     f"{value} starts with the word2vec header line '{found[0]} {found[1]}' (<count> <dimensions>; "
                     f"line 2 holds a key and {found[1]} values): remove no_header: true, which is for files "
                     "without that line")
        return False
    try:
        if read_word2vec_header(location) is not None:
            return True
    except TokembedError as exc:
        problems.add(pnode, ppath, str(exc))
        return False
    shown = first[:60].decode("utf-8", "replace").rstrip("\r\n")
    if not shown.strip():
        fix = "the first line must be the header, then one vector per line"
    elif binary_file:
        fix = "every binary word2vec file starts with it"
    else:
        fix = "a text file without this line (GloVe's .txt) reads with no_header: true"
    problems.add(pnode, ppath, f"{value}: line 1 is not the word2vec header '<count> <dimensions>' (got {shown!r}); "
                               f"{fix}")
    return False


def _folder_problem(folder: Path) -> str | None:
    """Why ``folder`` cannot be read as vectors (``vectors.npy`` and ``vocab.txt``), or None. Only the header of
    ``vectors.npy`` is read (its shape and dtype)."""
    missing = [name for name in ("vectors.npy", "vocab.txt") if not (folder / name).is_file()]
    if missing:
        return (f"the folder has no {' and no '.join(missing)}; a folder of vectors holds vectors.npy (an array of "
                "n x dimensions numbers) and vocab.txt (the n keys, one per line), as the vectors datasets do, and a "
                "word2vec file is given by its own path")
    from numpy.lib import format as npy

    try:
        with open(folder / "vectors.npy", "rb") as fh:
            version = npy.read_magic(fh)
            if version not in ((1, 0), (2, 0)):
                return None  # a newer layout: left to the reader
            read = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
            shape, _, dtype = read(fh)
    except OSError as exc:
        return f"vectors.npy cannot be read: {exc.strerror or exc}"
    except ValueError as exc:  # not a .npy file, or a damaged header
        return f"vectors.npy is not a NumPy array file ({exc})"
    if len(shape) != 2 or shape[1] < 1 or dtype.kind not in "fiu":
        return f"vectors.npy holds an array of shape {shape} and dtype {dtype}, expected numbers of shape " \
               "(keys, dimensions)"
    return None


def check_evaluate(ctx: Context, node: Node) -> EvaluateSpec | None:
    """The ``evaluate:`` section as an :class:`EvaluateSpec`, or None after recording its problems."""
    problems, base_dir = ctx.problems, ctx.base_dir
    path = "evaluate"
    if isinstance(node, SequenceNode):
        sets = check_sets(node, path, problems)
        return EvaluateSpec(sets) if sets is not None else None
    if not isinstance(node, MappingNode):
        problems.add(node, path, "expected a list of evaluation sets or a mapping with sets:, got "
                                 f"{describe_node(node)}")
        return None
    values: dict[str, Any] = {}
    ok = True
    for key, knode, vnode in mapping_items(node):
        where = join_path(path, key)
        if key == "sets":
            values["sets"] = check_sets(vnode, where, problems)
            ok = ok and values["sets"] is not None
        elif key == "vectors":
            values["vectors"] = _vectors(vnode, where, problems, base_dir)
            ok = ok and values["vectors"] is not None
        elif key in ("restrict_vocab", "pairs_restrict_vocab"):
            values[key] = coerce(vnode, int | None, where, problems, _AT_LEAST_ONE)
            ok = ok and values[key] is not INVALID
        elif key == "case_insensitive":
            values[key] = coerce(vnode, bool, where, problems)
            ok = ok and values[key] is not INVALID
        else:
            problems.add(knode, where, f"unknown key.{did_you_mean(key, EVALUATE_KEYS)} "
                                       f"Allowed: {', '.join(EVALUATE_KEYS)}")
            ok = False
    if "sets" not in values:
        problems.add(node, join_path(path, "sets"), "missing: the evaluation sets, e.g. [wordsim353, simlex999]")
        return None
    if not ok:
        return None
    return EvaluateSpec(**values)
