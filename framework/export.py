"""Tokenizer files in other libraries' formats: written (``tokembed export``, a recipe tokenizer's ``export:``) and
read (a ``compare:`` recipe's ``{load: FILE}``).

Each format is a method a tokenizer class may have (the plugin implements the format; the core only knows the
names): ``hf`` -> ``to_hf_json(path)``, ``vocab-merges`` -> ``to_vocab_merges(vocab_json, merges_txt)``,
``vocab-txt`` -> ``to_vocab_file(path)``, ``tiktoken`` -> ``to_tiktoken(path)``. A class can also refuse a format
for some parameters before any training, through its classmethod ``export_problem(format, params)`` (see
:meth:`tokembed.Tokenizer.export_problem`), which ``tokembed validate`` asks.

Reading is the mirror image: :data:`LOAD_FORMATS` names each format a file can be read from, how a file of it is
recognised, and the classmethod that reads it (``from_hf_json``, ``from_tiktoken``, ...). A tokenizer class says which
formats it reads in its class attribute ``load_formats`` (keys of the table; ``"hf_json:BPE"`` for a Hugging Face
``tokenizer.json`` whose model has that type), so a ``{load: FILE}`` without ``type:`` finds the one installed
tokenizer that reads the file, a third-party tokenizer included; the core names no plugin.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import TokembedError

__all__ = ["ExportFormat", "EXPORT_FORMATS", "export_formats_of", "export_problem", "export_tokenizer",
           "export_into_run", "LoadFormat", "LOAD_FORMATS", "load_format", "readers_of", "recognise_tokenizer_file"]


@dataclass(frozen=True)
class ExportFormat:
    """One export format.

    Attributes
    ----------
    method : str
        The tokenizer method that writes it; it takes one path per file, in the order of ``files``.
    files : tuple of str
        The files it writes, by their usual names (``{stem}`` is replaced by the tokenizer's label or file stem).
    what : str
        The format in words, for messages.
    """

    method: str
    files: tuple[str, ...]
    what: str


#: Format name -> how it is written (the names of ``tokembed export --to`` and of a recipe's ``export:`` list).
EXPORT_FORMATS: dict[str, ExportFormat] = {
    "hf": ExportFormat("to_hf_json", ("tokenizer.json",), "a Hugging Face tokenizer.json"),
    "vocab-merges": ExportFormat("to_vocab_merges", ("vocab.json", "merges.txt"), "GPT-2's vocab.json and merges.txt"),
    "vocab-txt": ExportFormat("to_vocab_file", ("vocab.txt",), "a WordPiece vocab.txt"),
    "tiktoken": ExportFormat("to_tiktoken", ("{stem}.tiktoken",), "tiktoken BPE ranks"),
}
#: The file names inside a run folder, per format: ``<label>.<suffix>``.
RUN_SUFFIXES: dict[str, tuple[str, ...]] = {
    "hf": ("tokenizer.json",), "vocab-merges": ("vocab.json", "merges.txt"), "vocab-txt": ("vocab.txt",),
    "tiktoken": ("tiktoken",),
}


def export_formats_of(cls: type) -> list[str]:
    """The formats a tokenizer class can write (those whose method it has)."""
    return [name for name, fmt in EXPORT_FORMATS.items() if callable(getattr(cls, fmt.method, None))]


def export_problem(cls: type, fmt: str, params: dict[str, Any] | None = None) -> str | None:
    """Why ``cls`` (built with ``params``) cannot be exported as ``fmt``, or None: an unknown format, a class
    without the format's method, or the class's own ``export_problem(fmt, params)``."""
    if fmt not in EXPORT_FORMATS:
        return f"unknown export format {fmt!r}; the formats are {', '.join(EXPORT_FORMATS)}"
    spec = EXPORT_FORMATS[fmt]
    if not callable(getattr(cls, spec.method, None)):
        can = [f for f in export_formats_of(cls) if _class_problem(cls, f, params) is None]
        name = getattr(cls, "name", cls.__name__)
        return (f"tokenizer {name!r} ({cls.__qualname__}) has no {spec.method}(), so it cannot be written as "
                f"{spec.what}; " + (f"it can be exported as {', '.join(can)}" if can else "it has no export format"))
    return _class_problem(cls, fmt, params)


def _class_problem(cls: type, fmt: str, params: dict[str, Any] | None) -> str | None:
    """The class's own ``export_problem(fmt, params)`` (None when it has none)."""
    ask = getattr(cls, "export_problem", None)
    if callable(ask):
        try:
            return ask(fmt, dict(params or {}))
        except Exception:  # a plugin whose check breaks is left to the export itself, which reports in context
            return None
    return None


def _write(tok: Any, fmt: str, paths: list[Path]) -> list[Path]:
    problem = export_problem(type(tok), fmt, tok.get_params() if hasattr(tok, "get_params") else None)
    if problem is not None:
        raise TokembedError(problem)
    getattr(tok, EXPORT_FORMATS[fmt].method)(*map(str, paths))
    return paths


def export_tokenizer(tok: Any, fmt: str, out: str | os.PathLike, stem: str = "tokenizer") -> list[Path]:
    """Write ``tok`` as ``fmt`` at ``out``; return the files written.

    ``out`` is the file for the one-file formats (an existing folder, or a path ending in ``/``, gets the
    format's usual name inside it: ``tokenizer.json``, ``vocab.txt``, ``<stem>.tiktoken``), and a folder,
    created if needed, for
    ``vocab-merges`` (``vocab.json`` and ``merges.txt`` inside it).

    Raises
    ------
    TokembedError
        If the tokenizer cannot be written in this format (the message says which formats it has), or its
        writer refuses (a merge holding a space in ``merges.txt``, ...).
    """
    spec = EXPORT_FORMATS.get(fmt)
    if spec is None:
        raise TokembedError(f"unknown export format {fmt!r}; the formats are {', '.join(EXPORT_FORMATS)}")
    folder = os.fspath(out).endswith(("/", os.sep)) or Path(out).is_dir()
    out = Path(out)
    names = [n.format(stem=stem) for n in spec.files]
    if len(names) > 1:
        if out.exists() and not out.is_dir():
            raise TokembedError(f"{out}: {fmt} writes {len(names)} files ({', '.join(names)}): give a folder")
        out.mkdir(parents=True, exist_ok=True)
        paths = [out / n for n in names]
    else:
        if not folder and out.suffix == "" and fmt != "tiktoken":
            raise TokembedError(f"{out}: give the file to write ({names[0]}), or a folder ending in '/'")
        paths = [out / names[0] if folder else out]
        paths[0].parent.mkdir(parents=True, exist_ok=True)
    return _write(tok, fmt, paths)


def export_into_run(tok: Any, fmt: str, folder: Path, label: str) -> list[Path]:
    """Write ``tok`` as ``fmt`` into a run folder as ``<label>.<suffix>`` (``bpe.tokenizer.json``,
    ``bpe.vocab.json`` + ``bpe.merges.txt``, ``wp.vocab.txt``, ``bpe.tiktoken``); return the files."""
    return _write(tok, fmt, [folder / f"{label}.{suffix}" for suffix in RUN_SUFFIXES[fmt]])


@dataclass(frozen=True)
class LoadFormat:
    """One format a tokenizer can be read from.

    Attributes
    ----------
    method : str
        The classmethod that reads it: ``cls.method(path, ..., **params)``, one path per file of ``files``.
    files : tuple of str
        The files it reads, by their usual names (two for GPT-2's pair, given as ``{vocab: FILE, merges: FILE}``).
    what : str
        The format in words, for messages.
    suffixes : tuple of str
        File-name endings (lower case) that identify a one-file format; ``.json`` files are told apart by content.
    """

    method: str
    files: tuple[str, ...]
    what: str
    suffixes: tuple[str, ...] = ()


#: Format name -> how it is read. A class lists the names it reads in ``load_formats``; ``hf_json`` is listed per
#: model type (``"hf_json:BPE"``, ``"hf_json:WordPiece"``, ``"hf_json:Unigram"``, ...), since one
#: ``tokenizer.json`` layout holds several models.
LOAD_FORMATS: dict[str, LoadFormat] = {
    "hf_json": LoadFormat("from_hf_json", ("tokenizer.json",), "a Hugging Face tokenizer.json", (".json",)),
    "tiktoken": LoadFormat("from_tiktoken", ("{stem}.tiktoken",), "tiktoken BPE ranks (.tiktoken)", (".tiktoken",)),
    "sentencepiece": LoadFormat("from_sentencepiece", ("tokenizer.model",), "a SentencePiece model (.model)",
                                (".model",)),
    "vocab_txt": LoadFormat("from_vocab_file", ("vocab.txt",), "a WordPiece vocab.txt", (".txt",)),
    "vocab_merges": LoadFormat("from_vocab_merges", ("vocab.json", "merges.txt"), "a vocab.json and merges.txt pair"),
}


def load_format(key: str) -> tuple[LoadFormat, str]:
    """The :class:`LoadFormat` of a ``load_formats`` key and the key in words (``"hf_json:WordPiece"`` -> ``"a
    Hugging Face tokenizer.json with a WordPiece model"``).

    Raises
    ------
    KeyError
        If the key's format (before ``:``) is not in :data:`LOAD_FORMATS`.
    """
    name, _, variant = key.partition(":")
    fmt = LOAD_FORMATS[name]
    return fmt, f"{fmt.what} with a {variant} model" if variant else fmt.what


def readers_of(classes: dict[str, type], key: str) -> list[str]:
    """The names, among ``classes`` (name -> tokenizer class), of those that list ``key`` in ``load_formats``."""
    return [name for name, cls in classes.items() if key in (getattr(cls, "load_formats", ()) or ())]


def recognise_tokenizer_file(path: str | os.PathLike, shown: str | None = None) -> tuple[str, str | None]:
    """What the tokenizer file ``path`` is: ``("tokembed", saved type)`` for a saved tokembed tokenizer, else
    ``(key, None)`` with the :data:`LOAD_FORMATS` key a class lists in ``load_formats`` (``"tiktoken"``,
    ``"hf_json:BPE"``, ...). By the name's ending first; a ``.json`` file, or a file whose name says nothing, by its
    content (JSON with ``"format": "tokembed"``, or a Hugging Face ``"model": {"type": ...}``).

    ``shown`` is how the messages name the file (default: ``path``; a recipe gives the path as written).

    Raises
    ------
    TokembedError
        Naming what could not be recognised (the name's ending, the content) and the formats that can be read.
    ArtifactError
        If a ``.json`` file cannot be read as JSON (naming the path and the line).
    """
    from .io import read_json

    path = Path(path)
    shown = str(path) if shown is None else shown
    name = path.name.lower()
    for key, fmt in LOAD_FORMATS.items():
        if key != "hf_json" and name.endswith(fmt.suffixes):
            return key, None
    if not name.endswith(".json"):
        try:
            with open(path, "rb") as fh:
                head = fh.read(1).lstrip()
        except OSError as exc:
            raise TokembedError(f"{shown}: cannot be read: {exc.strerror or exc}") from None
        if head != b"{":
            raise TokembedError(f"{shown}: cannot tell how to read this file: its name ends in none of "
                                f"{', '.join(_suffixes())}, and it is not a JSON object; load: reads {FORMS_IN_WORDS}")
    data = read_json(path, what="tokenizer")
    if isinstance(data, dict) and data.get("format") == "tokembed":
        if data.get("kind") != "tokenizer" or not isinstance(data.get("type"), str):
            raise TokembedError(f"{shown}: holds a tokembed {data.get('kind')}, not a tokenizer")
        return "tokembed", data["type"]
    model = data.get("model") if isinstance(data, dict) else None
    if isinstance(model, dict) and isinstance(model.get("type"), str) and model["type"]:
        return f"hf_json:{model['type']}", None
    raise TokembedError(f"{shown}: neither a saved tokembed tokenizer (\"format\": \"tokembed\") nor a Hugging Face "
                        "tokenizer.json (\"model\": {\"type\": ...})")


def _suffixes() -> list[str]:
    return [s for fmt in LOAD_FORMATS.values() for s in fmt.suffixes]


#: What ``{load:}`` reads, in words (for messages).
FORMS_IN_WORDS = ("a saved tokenizer (*.tokembed.json), " + ", ".join(
    f"{fmt.what}" for key, fmt in LOAD_FORMATS.items() if key != "vocab_merges")
    + ", or {vocab: vocab.json, merges: merges.txt}")
