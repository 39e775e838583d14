"""The texts the contract suite (and metric checks) feed components: paragraphs of the bundled Moby Dick sample and
a list of hard cases (empty, CJK, emoji, long runs, special tokens typed as text)."""

from __future__ import annotations

import functools
import gzip

__all__ = ["sample_corpus", "sample_texts"]


@functools.lru_cache(maxsize=4)
def _sample_paragraphs(max_chars: int) -> tuple[str, ...]:
    from importlib import resources

    raw = (resources.files("tokembed") / "samples" / "moby-dick.txt.gz").read_bytes()
    text = gzip.decompress(raw).decode("utf-8")[:max_chars]
    cut = text.rfind("\n\n")
    if cut > 0:
        text = text[:cut]
    return tuple(p for p in text.split("\n\n") if p.strip())


def sample_corpus(max_chars: int = 20_000) -> list[str]:
    """Paragraphs from the start of the bundled Moby Dick sample (public domain), for fitting in tests.

    Parameters
    ----------
    max_chars : int, default 20000
        Read at most this many characters (cut back to the last paragraph break).

    Returns
    -------
    list of str
        The paragraphs (split on blank lines; line breaks inside a paragraph kept), in order: 28 paragraphs and
        about 3,600 whitespace-separated words for the default size.
    """
    return list(_sample_paragraphs(int(max_chars)))


def sample_texts() -> list[str]:
    """Texts a fitted tokenizer is applied to by the contract suite.

    Three paragraphs of the sample corpus, then edge cases: the empty text, whitespace only, leading and trailing
    spaces, tabs and newlines (``\\r\\n`` included), accents, CJK, emoji, special-token strings typed as text,
    and a long run of one character.
    """
    paragraphs = sample_corpus()
    return paragraphs[:3] + [
        "",
        " ",
        "  leading and trailing  ",
        "tabs\tand\nnewlines\r\n\n",
        "multiple   spaces between\twords",
        "Ünïcödé café naïve façade",
        "日本語のテキスト",
        "emoji 🐳🐋 whale",
        "<unk> <pad> [CLS] [SEP] <|endoftext|> typed as text",
        "a" * 300,
    ]
