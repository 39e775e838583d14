"""Byte-level BPE training (ours) against SentencePiece BPE training with byte fallback, 32,000 entries each.

The two do not learn the same vocabulary: ours splits the text with the GPT-2 pre-tokenizer and merges bytes,
SentencePiece merges characters within whitespace-delimited pieces (also split between scripts and at digits;
``▁`` marks a word start) and keeps 256 byte pieces for fallback. The check therefore compares sizes only; the
overlap of the learned pieces is reported as information.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

from . import Case, CheckFailed, benchmark
from ._common import prose_lines as _prose_lines
from .bpe import _PROSE, _quiet

_VOCAB = 32_000
_TOLERANCE = 300


def _comparable(pieces: set[str]) -> set[str]:
    """Lower-cased pieces with a leading space written ``▁`` (SentencePiece's word-start mark), empty dropped."""
    return {p.lower() for p in pieces if p}


def _ours_as_text(vocab: set[str]) -> set[str]:
    """Our byte-level tokens as text (``Ġ`` -> ``▁``); tokens that are not whole UTF-8 sequences are skipped."""
    from tokembed.plugins.bpe.bytelevel import token_bytes

    out = set()
    for tok in vocab:
        data = token_bytes(tok)
        if data is None:
            continue
        try:
            out.add(data.decode("utf-8").replace(" ", "\u2581"))
        except UnicodeDecodeError:
            continue
    return out


def _check(ours: set[str], ref: list[str]) -> str:
    n_ours, n_ref = len(ours), len(ref)
    sizes = (("ours", n_ours), ("sentencepiece", n_ref))
    bad = [f"{side} has {n:,}" for side, n in sizes if abs(n - _VOCAB) > _TOLERANCE]
    if bad:
        raise CheckFailed(f"vocabulary size outside {_VOCAB:,} +/- {_TOLERANCE}: {', '.join(bad)}")
    # SentencePiece's learned pieces: drop <unk>/<s>/</s> and the 256 <0xNN> byte-fallback pieces.
    sp_learned = {p for p in ref if not (p.startswith("<") and p.endswith(">"))}
    ours_text = _ours_as_text(ours)
    a, b = _comparable(ours_text), _comparable(sp_learned)
    common = len(a & b)
    return (f"{n_ours:,} (ours) and {n_ref:,} (sentencepiece) entries; information only: {common:,} lower-cased "
            f"pieces in common out of {len(a):,} (ours, decoded to text, space as ▁) and {len(b):,} "
            f"(sentencepiece, learned pieces without the byte/special ones), {common / len(b):.1%} of the latter")


@benchmark(
    "bpe_train_bytelevel_vs_sentencepiece",
    description="Byte-level BPE training, 32,000 entries, against SentencePiece BPE training with byte fallback.",
    ours="tokembed `BPETokenizer(vocab_size=32_000, min_frequency=2, byte_level=True).fit(lines)`",
    reference="sentencepiece `SentencePieceTrainer.train(model_type='bpe', vocab_size=32000, num_threads=2, "
    "input_sentence_size=10_000_000, max_sentence_length=1_048_576, byte_fallback=True, character_coverage=1.0)` "
    "on prose_mix.txt",
    check=f"both vocabularies have {_VOCAB:,} +/- {_TOLERANCE} entries (their overlap is reported, not required)",
    data="prose_mix (23,151,227 bytes): ours gets its 165,631 non-empty lines as a list, sentencepiece reads the file",
    libraries=("sentencepiece", "numba"),
)
def bpe_train_bytelevel_vs_sentencepiece() -> Case:
    import sentencepiece as spm

    from tokembed.plugins.bpe.tokenizer import BPETokenizer

    from ._common import dataset_file

    lines, n_bytes = _prose_lines()
    path = str(dataset_file("prose_mix"))  # the file ours' lines come from (its head in a TOKEMBED_BENCH_MB trial)
    tmpdir = tempfile.mkdtemp(prefix="tokembed-spm-bench-")
    atexit.register(shutil.rmtree, tmpdir, ignore_errors=True)  # the model files are not needed afterwards

    def ours():
        return set(BPETokenizer(vocab_size=_VOCAB, min_frequency=2, byte_level=True).fit(lines).get_vocab())

    def reference():
        prefix = str(Path(tmpdir) / "bpe")
        spm.SentencePieceTrainer.train(input=path, model_type="bpe", vocab_size=_VOCAB, num_threads=2,
                                       input_sentence_size=10_000_000, max_sentence_length=1_048_576,
                                       model_prefix=prefix, byte_fallback=True, character_coverage=1.0,
                                       minloglevel=2)
        sp = spm.SentencePieceProcessor(model_file=prefix + ".model")
        return [sp.id_to_piece(i) for i in range(sp.get_piece_size())]

    return Case(ours=_quiet(ours), reference=reference, check=_check, work_bytes=n_bytes,
                notes="Different algorithms on purpose: ours pre-tokenizes with the GPT-2 pattern and merges bytes "
                "(256 base symbols); SentencePiece splits at whitespace (and, by default, between Unicode scripts and "
                "around digits), merges characters (all kept, "
                "character_coverage 1.0) and adds 256 `<0xNN>` byte-fallback pieces plus `<unk>`, `<s>`, `</s>` "
                "within its 32,000. SentencePiece reads the file itself (its time includes loading it, and writing "
                "its .model/.vocab to a temporary directory); ours gets the list of lines already in memory. "
                "SentencePiece runs with num_threads=2; `minloglevel=2` only silences its log.")
