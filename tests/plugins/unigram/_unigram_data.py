"""Test data of the unigram plugin, none of it committed: SentencePiece's own test models and text, taken from the
sentencepiece 0.2.3 source distribution (downloaded once with pip into tokembed's download cache, each file
checked by its sha256), and the Mistral model of the ``mistral_v1_model`` dataset.

Tests that need them are skipped when they cannot be had (no registry reachable and nothing cached).
"""

from __future__ import annotations

import functools
import warnings
from pathlib import Path

import pytest

from tokembed.datasets import Member, Source, data_home

SENTENCEPIECE_SDIST = Source("pypi", "sentencepiece", "0.2.3", sdist=True)
_SHA = {
    "botchan_en_unigram_1000.model": "f8c7e5e0fa9e948783d20ea9dccf0e2611f567bc1a4e468a658becd5015f458e",
    "botchan_en_bpe_1000.model": "c8636a43e913dad9d5eb5d2eee2077706a55589fd2d6caf1e7ee4a7d03e4360a",
    "kyoto_ja_unigram_8000.model": "e39551e7ab937745b25edf55a7399d3c78948fda1dabca6b1781df2fcec67f65",
    "botchan.txt": "464bd5300c24fce16fcc4555d4231a57632caae4d0090ad6aa92854a3b227ba7",
}
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
MULTILINGUAL = sorted((FIXTURES / "multilingual").glob("*.txt"))


@functools.lru_cache(maxsize=None)
def sentencepiece_file(name: str) -> Path:
    """``test/<name>`` of the sentencepiece sdist, extracted once into ``<data_home>/unigram-test/``."""
    from tokembed.datasets._sources import SourceStore
    from tokembed.errors import DataError

    home = data_home()
    out = home / "unigram-test" / name
    if out.is_file():
        return out
    store = SourceStore(home / "downloads")
    member = Member(SENTENCEPIECE_SDIST, f"sentencepiece-0.2.3/test/{name}", count=1, sha256=_SHA[name])
    try:
        data = store.read(member, "unigram-test")[0][1]
    except DataError as exc:
        pytest.skip(f"sentencepiece's test file {name} is not available: {exc}")
    finally:
        store.close()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(out)
    return out


@functools.lru_cache(maxsize=1)
def mistral_model() -> Path:
    from tokembed.datasets import dataset_path, fetch
    from tokembed.errors import DataError

    try:
        return dataset_path("mistral_v1_model")
    except DataError:
        pass
    try:
        fetch(["mistral_v1_model"])
        return dataset_path("mistral_v1_model")
    except DataError as exc:
        pytest.skip(f"the mistral_v1_model dataset is not available: {exc}")


def model_path(key: str) -> Path:
    if key == "mistral":
        return mistral_model()
    return sentencepiece_file(key)


@functools.lru_cache(maxsize=1)
def botchan_lines() -> tuple[str, ...]:
    return tuple(sentencepiece_file("botchan.txt").read_text(encoding="utf-8").splitlines())


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
