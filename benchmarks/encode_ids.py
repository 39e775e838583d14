"""encode_ids_spans_*: each built-in tokenizer's packed encoder, ``encode_ids(lines, spans=True)`` (ids, token counts
and code-point spans straight from the kernels, what the measuring pass reads), against its own
``encode_batch(lines, add_special_tokens=False)`` (one Encoding per line, with token strings) on the same lines.

Both sides are ours: the row says what skipping the Encoding objects saves, tokenizer by tokenizer. The reference
libraries are compared with ``encode_batch`` in the other benchmarks (``wordpiece_encode``, ``bpe_encode*``,
``unigram_encode*``).
"""

from __future__ import annotations

import functools
import os
import warnings
from pathlib import Path

from . import Case, CheckFailed, benchmark

_FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"
_DATA = "prose_mix (23,151,227 bytes, 165,631 non-empty lines); both sides get the same list of lines"


@functools.lru_cache(maxsize=1)
def _lines() -> tuple[list[str], int]:
    from tokembed.datasets import dataset_path

    text = dataset_path("prose_mix").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line.strip()]
    return lines, sum(len(line.encode("utf-8")) for line in lines)


def _load() -> str:
    """How loaded the machine is, for the notes: the figures of a shared machine are noisy."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return ""
    cores = os.cpu_count() or 1
    shared = " Noisy, machine shared:" if load > cores else ""
    return f"{shared} load average {load:.1f} on {cores} cores when the setup ran."


def _case(tok) -> Case:
    import numpy as np

    lines, n_bytes = _lines()

    def ours():
        return tok.encode_ids(lines, spans=True)

    def reference():
        return tok.encode_batch(lines, add_special_tokens=False)

    def check(packed, encodings) -> str:
        ids, lengths, spans = packed
        if lengths.tolist() != [len(e) for e in encodings]:
            raise CheckFailed("token counts per line differ")
        if not np.array_equal(ids, np.concatenate([e.ids for e in encodings])):
            raise CheckFailed("ids differ")
        if not np.array_equal(spans, np.concatenate([e.offsets.reshape(-1, 2) for e in encodings])):
            raise CheckFailed("spans differ from the offsets")
        return f"{ids.shape[0]:,} ids and spans identical, {len(lines):,} lines"

    return Case(ours=ours, reference=reference, check=check, work_bytes=n_bytes,
                notes="One thread on each side (both default to one). The packed side returns three arrays; "
                "encode_batch returns an Encoding per line with its token strings." + _load())


_OURS = "tokembed `{cls}.encode_ids(lines, spans=True)` ({what})"
_REF = "tokembed `{cls}.encode_batch(lines, add_special_tokens=False)` (same tokenizer)"
_CHECK = "identical ids, token counts and spans (= offsets)"


@benchmark("encode_ids_spans_char", description="Char tokenizer (fitted on the lines): packed ids and spans against "
           "encode_batch.", ours=_OURS.format(cls="CharTokenizer", what="a NumPy table lookup over all lines"),
           reference=_REF.format(cls="CharTokenizer"), check=_CHECK, data=_DATA)
def encode_ids_spans_char() -> Case:
    from tokembed.plugins.char.tokenizer import CharTokenizer

    return _case(CharTokenizer().fit(_lines()[0]))


@benchmark("encode_ids_spans_word", description="Word tokenizer (word_punct, min_frequency 2, fitted on the lines): "
           "packed ids and spans against encode_batch.",
           ours=_OURS.format(cls="WordTokenizer", what="the Numba scanner looks each piece up in a hash table"),
           reference=_REF.format(cls="WordTokenizer"), check=_CHECK, data=_DATA, libraries=("numba",))
def encode_ids_spans_word() -> Case:
    from tokembed.plugins.word.tokenizer import WordTokenizer

    return _case(WordTokenizer(min_frequency=2).fit(_lines()[0]))


@benchmark("encode_ids_spans_bpe", description="BPE 32k with `</w>` (word_punct, fitted on the lines): packed ids "
           "and spans against encode_batch.",
           ours=_OURS.format(cls="BPETokenizer", what="one scan and one merge pass per million characters"),
           reference=_REF.format(cls="BPETokenizer"), check=_CHECK, data=_DATA, libraries=("numba",))
def encode_ids_spans_bpe() -> Case:
    from tokembed.plugins.bpe.tokenizer import BPETokenizer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = BPETokenizer(vocab_size=32_000, pre_tokenizer="word_punct", end_of_word_suffix="</w>",
                           min_frequency=2).fit(_lines()[0])
    return _case(tok)


@benchmark("encode_ids_spans_gpt2", description="GPT-2 byte-level BPE (the ranks of tests/fixtures/gpt2.tiktoken): "
           "packed ids and spans against encode_batch.",
           ours=_OURS.format(cls="BPETokenizer", what="one scan and one merge pass per million characters"),
           reference=_REF.format(cls="BPETokenizer"), check=_CHECK, data=_DATA, libraries=("numba",))
def encode_ids_spans_gpt2() -> Case:
    from tokembed.plugins.bpe.tokenizer import BPETokenizer

    return _case(BPETokenizer.from_tiktoken(_FIXTURES / "gpt2.tiktoken"))


@benchmark("encode_ids_spans_bert", description="BERT WordPiece (tests/fixtures/bert-base-uncased-vocab.txt): packed "
           "ids and spans against encode_batch.",
           ours=_OURS.format(cls="WordPieceTokenizer", what="the kernel's flat arrays"),
           reference=_REF.format(cls="WordPieceTokenizer"), check=_CHECK, data=_DATA, libraries=("numba",))
def encode_ids_spans_bert() -> Case:
    from tokembed.plugins.wordpiece.tokenizer import WordPieceTokenizer

    return _case(WordPieceTokenizer.from_vocab_file(_FIXTURES / "bert-base-uncased-vocab.txt"))


@benchmark("encode_ids_spans_unigram", description="Unigram 32k (fitted on the lines): packed ids and spans against "
           "encode_batch.", ours=_OURS.format(cls="UnigramTokenizer", what="one kernel call per 64K characters"),
           reference=_REF.format(cls="UnigramTokenizer"), check=_CHECK, data=_DATA, libraries=("numba",))
def encode_ids_spans_unigram() -> Case:
    from tokembed.plugins.unigram import UnigramTokenizer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok = UnigramTokenizer(vocab_size=32_000, num_threads=2).fit(_lines()[0])
    return _case(tok)
