"""Unigram (SentencePiece): training 32k on prose_mix against sentencepiece's trainer, and encoding prose_mix with a
32k model against ``SentencePieceProcessor.encode`` on a batch (same threads, same model file)."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

import numpy as np

from . import Case, CheckFailed, benchmark
from ._common import dataset_file
from ._common import prose_lines as _prose_lines
from .bpe import _quiet

_VOCAB = 32_000
_SP_TRAIN = dict(model_type="unigram", vocab_size=_VOCAB, num_threads=2, input_sentence_size=10_000_000,
                 max_sentence_length=1_048_576, minloglevel=2)


def _tmpdir() -> Path:
    path = Path(tempfile.mkdtemp(prefix="tokembed-unigram-bench-"))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


@benchmark(
    "unigram_train",
    description="Unigram LM training (SentencePiece's algorithm), 32,000 entries, nmt_nfkc, 2 threads.",
    ours="tokembed `UnigramTokenizer(vocab_size=32_000, num_threads=2).fit(lines)`",
    reference="sentencepiece `SentencePieceTrainer.train(model_type='unigram', vocab_size=32000, num_threads=2, "
    "input_sentence_size=10_000_000, max_sentence_length=1_048_576)` on prose_mix.txt",
    check="both vocabularies have 32,000 entries and share at least 85% of them (the figure is reported)",
    data="prose_mix (23,151,227 bytes): ours gets its 165,631 non-empty lines as a list, sentencepiece reads the "
    "file (input_sentence_size and max_sentence_length raised so that no line is skipped or sampled out)",
    libraries=("sentencepiece", "numba", "protobuf"),
)
def unigram_train() -> Case:
    import sentencepiece as spm

    from tokembed.plugins.unigram import UnigramTokenizer

    lines, n_bytes = _prose_lines()
    path = str(dataset_file("prose_mix"))  # the file ours' lines come from (its head in a TOKEMBED_BENCH_MB trial)
    tmp = _tmpdir()

    def ours():
        return set(UnigramTokenizer(vocab_size=_VOCAB, num_threads=2).fit(lines).get_vocab())

    def reference():
        prefix = str(tmp / "uni")
        spm.SentencePieceTrainer.train(input=path, model_prefix=prefix, **_SP_TRAIN)
        sp = spm.SentencePieceProcessor(model_file=prefix + ".model")
        return {sp.id_to_piece(i) for i in range(sp.get_piece_size())}

    def check(a: set, b: set) -> str:
        if len(a) != _VOCAB or len(b) != _VOCAB:
            raise CheckFailed(f"vocabulary sizes {len(a):,} (ours) and {len(b):,} (sentencepiece), expected {_VOCAB:,}")
        common = len(a & b)
        if common < 0.85 * _VOCAB:
            raise CheckFailed(f"only {common:,} of {_VOCAB:,} pieces in common (at least 85% expected)")
        return f"{common:,} of {_VOCAB:,} pieces in common ({common / _VOCAB:.1%})"

    return Case(ours=_quiet(ours), reference=reference, check=check, work_bytes=n_bytes,
                notes="Same algorithm and settings (nmt_nfkc, character_coverage 0.9995, seed 1M, shrinking 0.75, "
                "2 sub-iterations). sentencepiece reads and normalizes the file itself and writes its .model/.vocab "
                "to a temporary folder; ours gets the lines in memory. Both use 2 threads (ours: the word counter "
                "and the E-steps). Seeds differ slightly: sentencepiece takes suffix-array nodes of the raw text, ours "
                "exact substring counts over the words.")


@benchmark(
    "unigram_encode",
    description="Encode the 165,631 lines of prose_mix with a 32k Unigram model trained by sentencepiece.",
    ours="tokembed `UnigramTokenizer.from_sentencepiece(model).encode_batch(lines, num_workers=2)` (ids, tokens "
    "and offsets)",
    reference="sentencepiece `SentencePieceProcessor(model_file=model).encode(lines, num_threads=2)` (ids only)",
    check="identical ids for every line",
    data="prose_mix non-empty lines; the model is trained by sentencepiece on prose_mix in the untimed setup",
    libraries=("sentencepiece", "numba", "protobuf"),
)
def unigram_encode() -> Case:
    lines, n_bytes, ours_tok, sp = _encode_setup()

    def ours():
        return [e.ids for e in ours_tok.encode_batch(lines, num_workers=2)]

    def reference():
        return sp.encode(lines, num_threads=2)

    return Case(ours=ours, reference=reference, check=_same_ids, work_bytes=n_bytes,
                notes="Ours builds an Encoding per line (ids, token strings, offsets); sentencepiece returns lists of "
                "ids. Both on 2 threads; ours releases the GIL in the kernel only, building the Encodings holds it.")


def _encode_setup():
    """prose_mix's lines, their bytes, and a 32k model trained by sentencepiece, read by both sides."""
    import sentencepiece as spm

    from tokembed.plugins.unigram import UnigramTokenizer

    lines, n_bytes = _prose_lines()
    prefix = str(_tmpdir() / "uni")
    spm.SentencePieceTrainer.train(input=str(dataset_file("prose_mix")), model_prefix=prefix, **_SP_TRAIN)
    ours_tok = UnigramTokenizer.from_sentencepiece(prefix + ".model")
    sp = spm.SentencePieceProcessor(model_file=prefix + ".model")
    ours_tok.encode_batch(lines[:100])  # kernels loaded before timing
    return lines, n_bytes, ours_tok, sp


def _same_ids(a, b) -> str:
    if len(a) != len(b):
        raise CheckFailed(f"{len(a):,} lines (ours) and {len(b):,} (sentencepiece)")
    bad = sum(list(x) != list(y) for x, y in zip(a, b))
    if bad:
        raise CheckFailed(f"{bad:,} of {len(a):,} lines encode to other ids")
    return f"{sum(map(len, a)):,} ids identical over {len(a):,} lines"


@benchmark(
    "unigram_encode_ids",
    description="Encode the 165,631 lines of prose_mix to ids only with a 32k Unigram model trained by sentencepiece.",
    ours="tokembed `UnigramTokenizer.from_sentencepiece(model).encode_ids(lines, num_workers=2)` (packed ids and "
    "lengths, what TokenSequences reads a corpus with)",
    reference="sentencepiece `SentencePieceProcessor(model_file=model).encode(lines, num_threads=2)` (ids only)",
    check="identical ids for every line",
    data="prose_mix non-empty lines; the model is trained by sentencepiece on prose_mix in the untimed setup",
    libraries=("sentencepiece", "numba", "protobuf"),
)
def unigram_encode_ids() -> Case:
    lines, n_bytes, ours_tok, sp = _encode_setup()

    def ours():
        ids, lengths = ours_tok.encode_ids(lines, num_workers=2)
        ends = np.cumsum(lengths)
        return np.split(ids, ends[:-1])

    def reference():
        return sp.encode(lines, num_threads=2)

    return Case(ours=ours, reference=reference, check=_same_ids, work_bytes=n_bytes,
                notes="Both sides return ids only (ours one packed int32 array and the lengths, split per line "
                "inside the timed call; sentencepiece lists of ints), on 2 threads.")
