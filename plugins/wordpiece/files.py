"""WordPiece file formats: BERT's ``vocab.txt`` and Hugging Face's ``tokenizer.json`` (WordPiece model).

Readers return plain data; the tokenizer class builds itself from it. Every problem with a file raises
:class:`~tokembed.errors.ArtifactError` naming the file (and the line).

``vocab.txt`` (google-research/bert, Hugging Face ``BertWordPieceTokenizer``)
    One token per line; a token's id is its line number minus one. Lines are split on ``"\\n"`` only, and one
    ``"\\r"`` at the end of a line is removed (Windows line ends); nothing else is stripped, and other line
    separators (U+2028, U+0085, ...) are ordinary characters of a token. The text after the last ``"\\n"`` is a
    last token when it is not empty. A token on two lines is an error naming both line numbers, and so are an
    empty line, a NUL character (a binary file) and a file with no token. A file where most lines hold whitespace
    is refused too: a WordPiece token never does (text is split at whitespace), so it is another format (a
    tiktoken ranks file, a BPE ``merges.txt``, a corpus). (Hugging Face also strips trailing whitespace from each
    line; tokembed keeps it, so a token ending in a space stays as it is.)
``tokenizer.json`` (Hugging Face ``tokenizers``)
    A ``WordPiece`` model, a ``BertNormalizer`` (or none) and a ``BertPreTokenizer``; ``BertProcessing`` or
    ``TemplateProcessing`` become our template; special added tokens become ``special_tokens``.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Sequence

from tokembed.errors import ArtifactError, TokembedError
from tokembed.io import atomic_write_text

_SPACE = re.compile(r"\s")

__all__ = ["read_vocab_txt", "write_vocab_txt", "read_hf_json", "write_hf_json", "hf_template", "our_template"]


def _read_text(path: str | os.PathLike) -> str:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise ArtifactError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if data.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte-order mark is not part of the first token
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ArtifactError(f"{path}: line {line} is not UTF-8 ({exc.reason} at byte {exc.start})") from None


def parse_vocab_lines(text: str, source: str) -> list[str]:
    """Tokens of a ``vocab.txt`` held in ``text`` (rules in the module docstring).

    Raises
    ------
    ArtifactError
        If a token is repeated (naming both line numbers), a line is empty, the text holds a NUL character (a
        binary file), there is no token, or more than half of the lines hold whitespace (a tiktoken ranks file, a
        BPE ``merges.txt`` or a corpus: a WordPiece token never holds whitespace).
    """
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise ArtifactError(f"{source}: line {line} holds a NUL character: a binary file, not a vocab.txt "
                            "(one token per line)")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    tokens = [line[:-1] if line.endswith("\r") else line for line in lines]
    if not tokens:
        raise ArtifactError(f"{source}: holds no token (the file is empty); a vocab.txt holds one token per line")
    first: dict[str, int] = {}
    for number, tok in enumerate(tokens, 1):
        if tok in first:
            raise ArtifactError(f"{source}: line {number} repeats the token {tok!r} of line {first[tok]}")
        if not tok:
            raise ArtifactError(f"{source}: line {number} is empty; a vocab.txt holds one token per line and a "
                                "token cannot be empty")
        first[tok] = number
    spaced = [number for number, tok in enumerate(tokens, 1) if _SPACE.search(tok)]
    if 2 * len(spaced) > len(tokens):
        # a WordPiece token never holds whitespace (text is split at it): a tiktoken ranks file ("<base64> <rank>"),
        # a BPE merges.txt ("a b") or a corpus is no vocabulary
        raise ArtifactError(
            f"{source}: {len(spaced)} of its {len(tokens)} lines hold whitespace (line {spaced[0]}: "
            f"{tokens[spaced[0] - 1][:60]!r}): not a WordPiece vocab.txt, whose lines are single tokens (is it a "
            "tiktoken ranks file, a BPE merges.txt or a text corpus?)")
    return tokens


def read_vocab_txt(path: str | os.PathLike) -> list[str]:
    """The tokens of a ``vocab.txt`` in id order.

    Raises
    ------
    ArtifactError
        If the file is missing, not UTF-8, binary, empty, has an empty line, repeats a token (the message names both
        lines) or is mostly lines with whitespace (see :func:`parse_vocab_lines`).
    """
    return parse_vocab_lines(_read_text(path), str(path))


def write_vocab_txt(tokens: Sequence[str], path: str | os.PathLike) -> None:
    """Write ``tokens`` one per line (``"\\n"`` line ends), atomically; :func:`read_vocab_txt` reads them back.

    Raises
    ------
    TokembedError
        If a token holds ``"\\n"`` or ends with ``"\\r"``, which the format cannot keep.
    """
    for i, tok in enumerate(tokens):
        if "\n" in tok or tok.endswith("\r"):
            raise TokembedError(f"wordpiece: token {i} ({tok!r}) holds a line break; vocab.txt cannot store it "
                                "(save the tokenizer with save() instead)")
    atomic_write_text(path, "".join(tok + "\n" for tok in tokens))


# ----------------------------------------------------------------------------------------------------------------
# Hugging Face tokenizer.json


def our_template(spec: Any, source: str) -> dict[str, str] | None:
    """Our ``post_processor`` spec for a Hugging Face post-processor (``BertProcessing``, ``TemplateProcessing``,
    ``RobertaProcessing`` or none): :func:`tokembed.postprocess.template_from_hf`.

    Raises
    ------
    ArtifactError
        For another post-processor type.
    """
    from tokembed.postprocess import template_from_hf

    try:
        return template_from_hf(spec, source)
    except TokembedError as exc:
        raise ArtifactError(str(exc)) from None


def hf_template(spec: Any, vocab: dict[str, int]) -> dict[str, Any] | None:
    """Hugging Face's ``TemplateProcessing`` JSON for our ``post_processor`` spec (None for None):
    :func:`tokembed.postprocess.template_to_hf`."""
    from tokembed.postprocess import template_to_hf

    return template_to_hf(spec, vocab)


def read_hf_json(path: str | os.PathLike) -> dict[str, Any]:
    """Read the WordPiece parts of a Hugging Face ``tokenizer.json``.

    Returns
    -------
    dict
        ``vocab`` (tokens in id order) and ``params``: the tokenizer parameters the file sets
        (``continuing_subword_prefix``, ``unk_token``, ``max_input_chars_per_word``, the four normalizer switches,
        ``special_tokens``, ``post_processor``, and ``pad_token`` when the file pads).

    Raises
    ------
    ArtifactError
        If the file is not JSON, has no WordPiece model, ids that are not ``0 .. n-1``, or a normalizer or
        pre-tokenizer other than Hugging Face's BERT ones.
    """
    source = str(path)
    try:
        data = json.loads(_read_text(path))
    except ValueError as exc:
        raise ArtifactError(f"{source}: not JSON ({exc})") from None
    model = data.get("model") if isinstance(data, dict) else None
    if not isinstance(model, dict) or model.get("type", "WordPiece") != "WordPiece" or "vocab" not in model \
            or "continuing_subword_prefix" not in model:
        if not isinstance(model, dict):
            raise ArtifactError(f"{source}: not a Hugging Face tokenizer.json (no \"model\" object)")
        if model.get("type", "WordPiece") != "WordPiece":
            raise ArtifactError(f"{source}: not a WordPiece tokenizer.json (model type {model.get('type')!r})")
        missing = [k for k in ("vocab", "continuing_subword_prefix") if k not in model]
        raise ArtifactError(f"{source}: the WordPiece model lacks {' and '.join(map(repr, missing))}")
    vocab_map = model["vocab"]
    if not isinstance(vocab_map, dict) or not all(isinstance(i, int) for i in vocab_map.values()):
        raise ArtifactError(f"{source}: model.vocab must map tokens to integer ids")
    vocab: list[str | None] = [None] * len(vocab_map)
    for tok, i in vocab_map.items():
        if not 0 <= i < len(vocab) or vocab[i] is not None:
            raise ArtifactError(f"{source}: model.vocab ids must be exactly 0 .. {len(vocab) - 1} (id {i} of {tok!r})")
        vocab[i] = tok
    params: dict[str, Any] = {
        "continuing_subword_prefix": model.get("continuing_subword_prefix") or "",
        "unk_token": model.get("unk_token"),
        "max_input_chars_per_word": int(model.get("max_input_chars_per_word", 100)),
    }
    norm = data.get("normalizer")
    if norm is None:
        params.update(lowercase=False, strip_accents=False, clean_text=False, handle_chinese_chars=False)
    elif isinstance(norm, dict) and norm.get("type") == "BertNormalizer":
        params.update(lowercase=bool(norm.get("lowercase", True)), strip_accents=norm.get("strip_accents"),
                      clean_text=bool(norm.get("clean_text", True)),
                      handle_chinese_chars=bool(norm.get("handle_chinese_chars", True)))
    else:
        raise ArtifactError(f"{source}: the normalizer {norm.get('type') if isinstance(norm, dict) else norm!r} "
                            "has no tokembed WordPiece equivalent (BertNormalizer or none)")
    pre = data.get("pre_tokenizer")
    if not (isinstance(pre, dict) and pre.get("type") == "BertPreTokenizer"):
        raise ArtifactError(f"{source}: the pre-tokenizer "
                            f"{pre.get('type') if isinstance(pre, dict) else pre!r} has no tokembed WordPiece "
                            "equivalent (BertPreTokenizer)")
    added = [t for t in data.get("added_tokens") or [] if isinstance(t, dict) and t.get("special")]
    specials = [t["content"] for t in sorted(added, key=lambda t: t["id"])]
    missing = [t["content"] for t in added if t["content"] not in vocab_map]
    vocab.extend(missing)  # an added token outside model.vocab (not written by BertWordPieceTokenizer)
    params["special_tokens"] = specials
    params["post_processor"] = our_template(data.get("post_processor"), source)
    padding = data.get("padding")
    if isinstance(padding, dict) and padding.get("pad_token"):
        params["pad_token"] = padding["pad_token"]
    elif "[PAD]" not in specials:
        params["pad_token"] = None
    return {"vocab": vocab, "params": params}


def write_hf_json(path: str | os.PathLike, *, vocab: list[str], specials: list[str], params: dict[str, Any]) -> None:
    """Write a Hugging Face ``tokenizer.json`` that ``tokenizers.Tokenizer.from_file`` loads and that encodes to
    the same ids (vocabulary, ``BertNormalizer``, ``BertPreTokenizer``, WordPiece model and decoder, template)."""
    ids = {tok: i for i, tok in enumerate(vocab)}
    prefix = params["continuing_subword_prefix"]
    data = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": ids[tok], "content": tok, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": True} for tok in specials
        ],
        "normalizer": {"type": "BertNormalizer", "clean_text": bool(params["clean_text"]),
                       "handle_chinese_chars": bool(params["handle_chinese_chars"]),
                       "strip_accents": params["strip_accents"], "lowercase": bool(params["lowercase"])},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": hf_template(params["post_processor"], ids),
        "decoder": {"type": "WordPiece", "prefix": prefix, "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": params["unk_token"], "continuing_subword_prefix": prefix,
                  "max_input_chars_per_word": int(params["max_input_chars_per_word"]), "vocab": ids},
    }
    atomic_write_text(path, json.dumps(data, ensure_ascii=False, indent=2) + "\n")
