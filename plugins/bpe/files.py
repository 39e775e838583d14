"""BPE file formats: GPT-2 ``vocab.json`` + ``merges.txt``, tiktoken rank files, Hugging Face ``tokenizer.json``.

Readers return plain data (token strings in id order, merges as string pairs); the tokenizer class builds itself
from it. Every problem with a file raises :class:`~tokembed.errors.ArtifactError` naming the file (and the line).

Formats
-------
``vocab.json``
    ``{"token": id, ...}``; ids must be exactly ``0 .. n-1``.
``merges.txt`` (GPT-2, subword-nmt, Hugging Face)
    An optional first line starting with ``#version``, then one merge per line, rank = order. Each line is split
    on the ASCII space after removing ``\\r``, ``\\n`` and ASCII spaces at both ends (never on other whitespace:
    ``"\\u00a0 e"`` is the pair ``("\\u00a0", "e")``); empty lines are skipped. A line with other than two fields is
    an error naming its line number; a repeated pair keeps its first rank, with a warning.
tiktoken ranks (``gpt2.tiktoken``, ``cl100k_base.tiktoken``)
    One ``<base64 of the token's bytes> <rank>`` per line; ranks must be ``0 .. n-1``. Merges are recovered by
    running byte-pair encoding on each token's bytes with only the lower ranks, which must end in exactly two
    parts (the conversion Hugging Face and tiktoken's own tests use).
"""

from __future__ import annotations

import base64
import os
import warnings
from typing import Any

from tokembed.errors import ArtifactError, TokembedError
from tokembed.io import atomic_write_json, atomic_write_text, read_json
from tokembed.text.pre_tokenizers import GPT2_PATTERN

from .bytelevel import BYTE_CHARS, bytes_to_token
from .hf_stages import LossyConversionWarning, from_hf_normalizer, from_hf_pre_tokenizer, to_hf_normalizer, \
    to_hf_pre_tokenizer

__all__ = [
    "read_vocab_json",
    "read_merges_txt",
    "parse_merge_lines",
    "write_vocab_merges",
    "read_tiktoken",
    "write_tiktoken",
    "ranks_to_merges",
    "read_hf_json",
    "write_hf_json",
    "hf_post_processor",
    "DuplicateMergeWarning",
]


class DuplicateMergeWarning(UserWarning):
    """A merges file lists the same pair twice; the first rank is kept."""


def _read_text(path: str | os.PathLike) -> str:
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            return fh.read()
    except OSError as exc:
        raise ArtifactError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ArtifactError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _read_json(path: str | os.PathLike) -> Any:
    return read_json(path, what="JSON")


def check_contiguous(ids: dict[str, int], source: str) -> list[str]:
    """Tokens in id order; ids must be distinct ints covering exactly ``0 .. n-1``."""
    out: list[str | None] = [None] * len(ids)
    for tok, i in ids.items():
        if not isinstance(tok, str) or isinstance(i, bool) or not isinstance(i, int):
            raise ArtifactError(f"{source}: vocabulary entries must map str to int, got {tok!r}: {i!r}")
        if not 0 <= i < len(ids) or out[i] is not None:
            raise ArtifactError(f"{source}: vocabulary ids must be exactly 0 .. {len(ids) - 1} (no gap, no repeat); "
                                f"{tok!r} has id {i}")
        out[i] = tok
    return out  # type: ignore[return-value]


def read_vocab_json(path: str | os.PathLike) -> list[str]:
    """Tokens of a ``vocab.json`` in id order.

    Raises
    ------
    ArtifactError
        If the file is missing, not a JSON object of str -> int, or the ids are not exactly ``0 .. n-1``.
    """
    data = _read_json(path)
    if not isinstance(data, dict):
        raise ArtifactError(f"{path}: a vocab.json must hold an object token -> id")
    return check_contiguous(data, str(path))


def parse_merge_lines(lines: list[str], source: str, first_line: int = 1, header: bool = True
                      ) -> list[tuple[str, str]]:
    """Merges from the lines of a merges file (rules in the module docstring).

    ``first_line`` is the number given to ``lines[0]`` in messages; ``header`` allows a ``#version`` first line.

    Raises
    ------
    ArtifactError
        For a line that does not hold exactly two symbols, naming ``source`` and the line number.

    Warns
    -----
    DuplicateMergeWarning
        For a repeated pair (its first rank is kept).
    """
    merges: list[tuple[str, str]] = []
    seen: dict[tuple[str, str], int] = {}
    for n, line in enumerate(lines, first_line):
        body = line.strip("\r\n ")
        if not body or (header and n == first_line and body.startswith("#version")):
            continue
        fields = body.split(" ")
        if len(fields) != 2 or not all(fields):
            raise ArtifactError(f"{source}:{n}: a merge line holds two symbols separated by one space; got "
                                f"{len(fields)} fields in {line!r}")
        pair = (fields[0], fields[1])
        if pair in seen:
            warnings.warn(f"{source}:{n}: the merge {pair!r} repeats line {seen[pair]}; its first rank is kept",
                          DuplicateMergeWarning, stacklevel=3)
            continue
        seen[pair] = n
        merges.append(pair)
    return merges


def read_merges_txt(path: str | os.PathLike) -> list[tuple[str, str]]:
    """Merges of a ``merges.txt``, in rank order (rules in the module docstring).

    Raises
    ------
    ArtifactError
        If the file cannot be read or a line does not hold exactly two symbols (the message names the line).
    """
    return parse_merge_lines(_read_text(path).split("\n"), str(path))


def write_vocab_merges(vocab: list[str], merges: list[tuple[str, str]], vocab_path: str | os.PathLike,
                       merges_path: str | os.PathLike) -> None:
    """Write ``vocab.json`` and ``merges.txt`` (with a ``#version: 0.2`` header), each atomically.

    Raises
    ------
    TokembedError
        If a merged symbol contains an ASCII space, ``\\r`` or ``\\n`` (the format could not read it back).
    """
    for a, b in merges:
        for sym in (a, b):
            if not sym or any(c in sym for c in " \r\n"):
                raise TokembedError(f"bpe: the merge ({a!r}, {b!r}) holds a symbol with a space or line break, "
                                    "which merges.txt cannot represent; save as .tokembed.json or tokenizer.json")
    atomic_write_json(vocab_path, {t: i for i, t in enumerate(vocab)})
    atomic_write_text(merges_path, "#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges))


def read_tiktoken(path: str | os.PathLike, gaps: frozenset[int] = frozenset()) -> dict[bytes, int]:
    """Ranks of a tiktoken file: token bytes -> rank.

    ``gaps``: ranks that may be missing (the ids of special tokens placed among the ranks, as an export of a
    tokenizer whose special tokens come first writes them).

    Raises
    ------
    ArtifactError
        If a line is not ``<base64> <int>`` (naming it), or the ranks and ``gaps`` are not exactly ``0 .. n-1``.
    """
    ranks: dict[bytes, int] = {}
    rank_line: dict[int, int] = {}
    for n, line in enumerate(_read_text(path).split("\n"), 1):
        if not line.strip():
            continue
        fields = line.split()
        try:
            if len(fields) != 2:
                raise ValueError
            token = base64.b64decode(fields[0], validate=True)
            rank = int(fields[1])
        except ValueError:
            raise ArtifactError(f"{path}:{n}: expected '<base64 token> <rank>', got {line[:80]!r}") from None
        if token in ranks:
            raise ArtifactError(f"{path}:{n}: the token {token!r} appears twice")
        if rank in rank_line:
            raise ArtifactError(f"{path}:{n}: rank {rank} repeats the rank of line {rank_line[rank]}")
        ranks[token] = rank
        rank_line[rank] = n
    taken = sorted([*ranks.values(), *gaps])
    if taken != list(range(len(taken))):
        clash = sorted(set(ranks.values()) & gaps)
        if clash:
            raise ArtifactError(f"{path}: rank {clash[0]} is also the id given to a special token")
        missing = next((i for i, r in enumerate(taken) if i != r), len(taken))
        raise ArtifactError(f"{path}: ranks must be exactly 0 .. {len(taken) - 1}"
                            + (" with the special tokens' ids" if gaps else "") + f"; rank {missing} is missing"
                            + ("" if gaps else " (a tokenizer whose special tokens hold the first ids was exported: "
                               "pass special_tokens={token: id, ...})"))
    return ranks


def write_tiktoken(path: str | os.PathLike, vocab: list[str], specials: list[str]) -> None:
    """Write the byte-level ``vocab`` (token strings in id order) as tiktoken ranks, each token's id its rank;
    the special tokens are left out (tiktoken takes them apart), so their ids are gaps among the ranks."""
    from .bytelevel import token_bytes

    skip = set(specials)
    lines = [f"{base64.b64encode(token_bytes(tok)).decode('ascii')} {i}\n" for i, tok in enumerate(vocab)
             if tok not in skip]
    atomic_write_text(path, "".join(lines))


def ranks_to_merges(ranks: dict[bytes, int], source: str = "<ranks>") -> list[tuple[bytes, bytes]]:
    """The merge that creates each token of two or more bytes, in rank order.

    Each token's bytes are encoded with the merges of lower rank (lowest rank first, tiktoken's rule); the two
    parts left are its merge.

    Raises
    ------
    ArtifactError
        If a single byte is missing from the ranks or a token does not end in exactly two parts.
    """
    missing = [b for b in range(256) if bytes([b]) not in ranks]
    if missing:
        raise ArtifactError(f"{source}: the single byte {bytes([missing[0]])!r} has no rank (byte-level ranks "
                            "must hold all 256 bytes)")
    merges: list[tuple[bytes, bytes]] = []
    for token, rank in sorted(ranks.items(), key=lambda kv: kv[1]):
        if len(token) < 2:
            continue
        parts = [token[i:i + 1] for i in range(len(token))]
        while len(parts) > 2:
            best, at = rank, -1
            for i in range(len(parts) - 1):
                r = ranks.get(parts[i] + parts[i + 1])
                if r is not None and r < best:
                    best, at = r, i
            if at < 0:
                break
            parts[at:at + 2] = [parts[at] + parts[at + 1]]
        if len(parts) != 2:
            raise ArtifactError(f"{source}: the token {token!r} (rank {rank}) cannot be built from two tokens of "
                                "lower rank")
        merges.append((parts[0], parts[1]))
    return merges


# -- Hugging Face tokenizer.json --------------------------------------------------------------------------------------
def hf_post_processor(spec: Any, source: str) -> Any:
    """Our ``post_processor`` spec of a ``post_processor`` JSON: a template (:func:`tokembed.postprocess.
    template_from_hf`), with ``ByteLevel`` stages (which only trim offsets) left out, a warning when they or a
    ``RobertaProcessing`` trim: tokembed's offsets keep the space a byte-level token starts with."""
    from tokembed.postprocess import template_from_hf

    if spec is None:
        return None
    stages = spec.get("processors") or [] if isinstance(spec, dict) and spec.get("type") == "Sequence" else [spec]
    templates = []
    for stage in stages:
        kind = stage.get("type") if isinstance(stage, dict) else None
        if kind in ("ByteLevel", "RobertaProcessing") and stage.get("trim_offsets"):
            warnings.warn(f"{source}: the post-processor {kind} trims the spaces out of the offsets; tokembed's "
                          "offsets keep them (ids and tokens are the same)", LossyConversionWarning, stacklevel=4)
        if kind != "ByteLevel":
            templates.append(template_from_hf(stage, source))
    if len(templates) > 1:
        raise TokembedError(f"{source}: the post-processor holds {len(templates)} templates; tokembed applies one; "
                            "pass post_processor=... to choose it")
    return templates[0] if templates else None


def read_hf_json(path: str | os.PathLike) -> dict[str, Any]:
    """The BPE model of a Hugging Face ``tokenizer.json`` and the matching tokembed parameters.

    Returns
    -------
    dict
        ``vocab`` (tokens in id order, added tokens included), ``merges`` (string pairs), ``specials`` (added
        tokens marked special), and ``params``: ``byte_level``, ``pre_tokenizer``, ``normalizer``,
        ``unk_token``, ``end_of_word_suffix``, ``continuing_subword_prefix``, ``dropout`` (what tokembed can
        mirror; a stage it cannot raises TokembedError when the caller has not chosen one).

    Raises
    ------
    ArtifactError
        If the file is not a tokenizer.json with a BPE model, or its ids are not ``0 .. n-1``.
    """
    data = _read_json(path)
    source = str(path)
    model = data.get("model") if isinstance(data, dict) else None
    if not isinstance(model, dict) or model.get("type", "BPE") != "BPE" or "merges" not in model:
        raise ArtifactError(f"{source}: not a Hugging Face tokenizer.json with a BPE model")
    unsupported = [k for k in ("ignore_merges", "byte_fallback", "fuse_unk") if model.get(k)]
    if unsupported:
        raise TokembedError(f"{source}: the BPE model sets {', '.join(unsupported)}, which tokembed does not mirror")
    ids = dict(model.get("vocab") or {})
    specials = []
    for added in data.get("added_tokens") or []:
        tok, i = added.get("content"), added.get("id")
        if tok in ids and ids[tok] != i:
            raise ArtifactError(f"{source}: added token {tok!r} has id {i} but the model gives it {ids[tok]}")
        ids[tok] = i
        if added.get("special"):
            specials.append(tok)
    vocab = check_contiguous(ids, source)
    raw = model.get("merges") or []
    if raw and isinstance(raw[0], str):
        merges = parse_merge_lines(raw, f"{source} (model.merges entry)", first_line=0, header=False)
    else:
        merges = []
        seen: dict[tuple[str, str], int] = {}
        for n, pair in enumerate(raw):
            if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)):
                raise ArtifactError(f"{source}: model.merges[{n}] is not a pair of strings: {pair!r}")
            key = (pair[0], pair[1])
            if key in seen:
                warnings.warn(f"{source}: model.merges[{n}] repeats model.merges[{seen[key]}] {key!r}; its first "
                              "rank is kept", DuplicateMergeWarning, stacklevel=3)
                continue
            seen[key] = n
            merges.append(key)
    return {
        "vocab": vocab, "merges": merges, "specials": specials,
        "pre_tokenizer_spec": data.get("pre_tokenizer"), "normalizer_spec": data.get("normalizer"),
        "post_processor_spec": data.get("post_processor"), "decoder": data.get("decoder"),
        "params": {"unk_token": model.get("unk_token"), "end_of_word_suffix": model.get("end_of_word_suffix") or None,
                   "continuing_subword_prefix": model.get("continuing_subword_prefix") or None,
                   "dropout": model.get("dropout")},
    }


def write_hf_json(path: str | os.PathLike, *, vocab: list[str], merges: list[tuple[str, str]], specials: list[str],
                  byte_level: bool, pre_tokenizer: Any, normalizer: Any, unk_token: str | None,
                  end_of_word_suffix: str | None, continuing_subword_prefix: str | None,
                  post_processor: Any = None, dropout: float | None = None) -> None:
    """Write a Hugging Face ``tokenizer.json`` (BPE model, merges as pairs) atomically: the text stages as
    :mod:`~tokembed.plugins.bpe.hf_stages` maps them, the template, BPE-dropout.

    Raises
    ------
    TokembedError
        If a text stage has no Hugging Face equivalent (a regex construct: the message names it); nothing is
        written then.
    """
    from tokembed.postprocess import template_to_hf

    if byte_level:
        decoder: Any = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}
    elif end_of_word_suffix:
        decoder = {"type": "BPEDecoder", "suffix": end_of_word_suffix}
    elif continuing_subword_prefix:
        decoder = {"type": "WordPiece", "prefix": continuing_subword_prefix, "cleanup": False}
    else:
        decoder = {"type": "Fuse"}
    ids = {t: i for i, t in enumerate(vocab)}
    data = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [{"id": ids[s], "content": s, "single_word": False, "lstrip": False, "rstrip": False,
                          "normalized": False, "special": True} for s in specials],
        "normalizer": to_hf_normalizer(normalizer),
        "pre_tokenizer": to_hf_pre_tokenizer(pre_tokenizer, byte_level),
        "post_processor": template_to_hf(post_processor, ids),
        "decoder": decoder,
        "model": {"type": "BPE", "dropout": float(dropout) if dropout else None,
                  "unk_token": None if byte_level else unk_token,
                  "continuing_subword_prefix": continuing_subword_prefix, "end_of_word_suffix": end_of_word_suffix,
                  "fuse_unk": False, "byte_fallback": False, "ignore_merges": False, "vocab": ids,
                  "merges": [[a, b] for a, b in merges]},
    }
    atomic_write_json(path, data)


def tiktoken_vocab(ranks: dict[bytes, int]) -> list[str]:
    """Byte-level token strings in rank order."""
    vocab = [""] * len(ranks)
    for token, rank in ranks.items():
        vocab[rank] = bytes_to_token(token)
    return vocab


# -- what the tokenizer's constructors read ---------------------------------------------------------------------------
Parts = tuple[list[str], list[tuple[str, str]], list[str], dict[str, Any]]


def tiktoken_parts(path: str | os.PathLike, pattern: str, special_tokens: Any) -> Parts:
    """Vocabulary (ranks as ids; the special tokens after the last rank, or at the ids a mapping gives them),
    merges, specials and parameters of a tiktoken file."""
    placed = dict(special_tokens) if isinstance(special_tokens, dict) else None
    if placed is not None and not all(isinstance(i, int) and not isinstance(i, bool) for i in placed.values()):
        raise TokembedError(f"{path}: special_tokens given as a mapping must map each token to an int id")
    ranks = read_tiktoken(path, frozenset(placed.values()) if placed else frozenset())
    merges = [(bytes_to_token(a), bytes_to_token(b)) for a, b in ranks_to_merges(ranks, str(path))]
    pre = "gpt2" if pattern == GPT2_PATTERN else {"type": "regex", "pattern": pattern}
    found = {"byte_level": True, "pre_tokenizer": pre}
    if placed is None:
        specials = list(special_tokens)
        return tiktoken_vocab(ranks) + specials, merges, specials, found
    vocab = [""] * (len(ranks) + len(placed))
    for token, rank in ranks.items():
        vocab[rank] = bytes_to_token(token)
    for token, i in placed.items():
        vocab[i] = token
    specials = sorted(placed, key=placed.__getitem__)
    return vocab, merges, specials, found


def vocab_merges_parts(vocab_json: str | os.PathLike, merges_txt: str | os.PathLike, byte_level: bool | None,
                       special_tokens: Any) -> Parts:
    """Vocabulary, merges, specials and parameters of a ``vocab.json`` + ``merges.txt`` pair (defaults: byte
    level when all 256 byte symbols are in the vocabulary; ``<|endoftext|>`` special if present; at character
    level, ``end_of_word_suffix="</w>"`` when a one-character token carries it, as subword-nmt's and Hugging Face's
    files do, and ``unk_token="<unk>"`` when the vocabulary has it)."""
    vocab = read_vocab_json(vocab_json)
    merges = read_merges_txt(merges_txt)
    present = set(vocab)
    if byte_level is None:
        byte_level = all(c in present for c in BYTE_CHARS)
    if special_tokens is None:
        special_tokens = [t for t in ("<|endoftext|>",) if t in present]
    found: dict[str, Any] = {"byte_level": byte_level}
    if not byte_level:
        if any(len(t) == 5 and t.endswith("</w>") for t in vocab):
            found["end_of_word_suffix"] = "</w>"
        if "<unk>" in present:
            found["unk_token"] = "<unk>"
    return vocab, merges, list(special_tokens), found


def hf_json_parts(path: str | os.PathLike, params: dict[str, Any], lossy: bool = False) -> Parts:
    """Vocabulary, merges, specials and parameters of a ``tokenizer.json``; ``params`` override what the file says
    (a stage given there is not translated, so a stage tokembed cannot mirror can be replaced; a ``normalizer``
    given replaces the file's, CJK padding of a ``BertNormalizer`` included). ``lossy``: read
    a stage whose tokembed equivalent encodes some texts differently (with a warning) instead of refusing it."""
    info = read_hf_json(path)
    found = dict(info["params"])
    source = str(path)
    normalizer, cjk = from_hf_normalizer(info["normalizer_spec"], source, lossy) if "normalizer" not in params \
        else (params["normalizer"], False)
    if "pre_tokenizer" not in params or "byte_level" not in params:
        found["byte_level"], found["pre_tokenizer"] = from_hf_pre_tokenizer(info["pre_tokenizer_spec"], source, cjk)
    found["normalizer"] = normalizer
    if "post_processor" not in params:
        found["post_processor"] = hf_post_processor(info["post_processor_spec"], source)
    found.update(params)
    if found.get("byte_level"):
        found["unk_token"] = None
    return info["vocab"], info["merges"], info["specials"], found
