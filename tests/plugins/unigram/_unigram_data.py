"""Test data of the unigram plugin, shipped in ``tests/fixtures/sentencepiece/`` (sources and licences in NOTICE):
SentencePiece's own test models and text from the sentencepiece 0.2.3 source distribution, and Mistral's first
SentencePiece model (the ``mistral_v1_model`` dataset's file). Nothing is downloaded: the tests run offline.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import warnings
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
SENTENCEPIECE = FIXTURES / "sentencepiece"
MULTILINGUAL = sorted((FIXTURES / "multilingual").glob("*.txt"))
#: sha256 of each shipped file as its source has it (botchan.txt before gzip), as NOTICE records
SHA256 = {
    "botchan_en_unigram_1000.model": "f8c7e5e0fa9e948783d20ea9dccf0e2611f567bc1a4e468a658becd5015f458e",
    "botchan_en_bpe_1000.model": "c8636a43e913dad9d5eb5d2eee2077706a55589fd2d6caf1e7ee4a7d03e4360a",
    "kyoto_ja_unigram_8000.model": "e39551e7ab937745b25edf55a7399d3c78948fda1dabca6b1781df2fcec67f65",
    "botchan.txt": "464bd5300c24fce16fcc4555d4231a57632caae4d0090ad6aa92854a3b227ba7",
    "mistral_v1.model": "dadfd56d766715c61d2ef780a525ab43b8e6da4de6865bda3d95fdef5e134055",
}


def fixture_bytes(name: str) -> bytes:
    """The bytes of a shipped file as its source has them (``botchan.txt`` is stored gzip-compressed)."""
    if name == "botchan.txt":
        return gzip.decompress((SENTENCEPIECE / "botchan.txt.gz").read_bytes())
    return (SENTENCEPIECE / name).read_bytes()


def model_path(key: str) -> Path:
    """The path of a shipped model: a sentencepiece test model's file name, or ``"mistral"``."""
    return SENTENCEPIECE / ("mistral_v1.model" if key == "mistral" else key)


def sha256_of(name: str) -> str:
    return hashlib.sha256(fixture_bytes(name)).hexdigest()


@functools.lru_cache(maxsize=1)
def botchan_lines() -> tuple[str, ...]:
    return tuple(fixture_bytes("botchan.txt").decode("utf-8").splitlines())


#: Texts every parity test encodes besides the corpora: whitespace, normalization, scripts, digits, emoji.
EDGE_TEXTS = [
    "", " ", "  Hello   world  ", "\t\ttab\nnew line\r\n", "café naïve ﬁ ①②③ Ⅻ ＡＢＣ ｶﾀｶﾅ", "東京タワー　は高い。",
    "x\u0301y e\u0301", "emoji 😀🎉 and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "a\u200bb\u200dc", "▁already▁marked▁", "<unk> <s> </s>",
    "12345 3.14 1,000,000", "\x00\x01 control", "Ünïcödé ΑΒΓ абв עברית العربية हिन्दी ไทย 한국어",
    "\ufeffBOM", "～〜~", "a" * 3000, "ab " * 500,
]


def held_out_lines() -> list[str]:
    """The multilingual fixture (six languages of the Debian handbook, held out of every model's training), the
    last 300 lines of botchan and :data:`EDGE_TEXTS`."""
    lines: list[str] = []
    for path in MULTILINGUAL:
        lines += path.read_text(encoding="utf-8").splitlines()
    return lines + list(botchan_lines()[-300:]) + EDGE_TEXTS


def quiet_fit(tok, corpus):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tok.fit(corpus)
