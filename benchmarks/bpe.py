"""BPE: training (word level with ``</w>``, and byte level) against Hugging Face tokenizers, encoding with the GPT-2
ranks against tiktoken (one string on one thread, and the lines on 2 threads), and the encoding time of one long run
of a letter at N and 2N characters."""

from __future__ import annotations

from pathlib import Path

from . import Case, CheckFailed, benchmark
from ._common import dataset_file, prose_lines

_PROSE = "prose_mix (23,151,227 bytes, 165,631 non-empty lines); each side gets the same list of lines"
_GPT2_RANKS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "gpt2.tiktoken"


def _quiet(fn):
    def run():
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn()

    return run


def _vocab_check(vocab_size: int, least: float):
    def check(ours: set, ref: set) -> str:
        common = len(ours & ref)
        if len(ours) != vocab_size or len(ref) != vocab_size:
            raise CheckFailed(f"vocabulary sizes {len(ours):,} (ours) and {len(ref):,} (reference), expected "
                              f"{vocab_size:,}")
        if common < least * vocab_size:
            raise CheckFailed(f"only {common:,} of {vocab_size:,} tokens in common (at least {least:.0%} expected)")
        return (f"{common:,} of {vocab_size:,} tokens in common (merge order differs only on ties, which Hugging "
                "Face breaks in hash-map order)")

    return check


@benchmark(
    "bpe_train",
    description="BPE training, 32,000 entries, word/punctuation split and `</w>` suffix, min_frequency 2.",
    ours="tokembed `BPETokenizer(pre_tokenizer='word_punct', end_of_word_suffix='</w>').fit(lines)`",
    reference="Hugging Face tokenizers `BpeTrainer` (`Whitespace` pre-tokenizer, `end_of_word_suffix='</w>'`)",
    check="the two vocabularies share at least 99% of their 32,000 tokens",
    data=_PROSE,
    libraries=("tokenizers", "numba"),
)
def bpe_train() -> Case:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    from tokembed.plugins.bpe.tokenizer import BPETokenizer

    lines, n_bytes = prose_lines()

    def ours():
        tok = BPETokenizer(vocab_size=32_000, min_frequency=2, pre_tokenizer="word_punct", end_of_word_suffix="</w>",
                           unk_token=None).fit(lines)
        return set(tok.get_vocab())

    def reference():
        hf = Tokenizer(models.BPE(end_of_word_suffix="</w>"))
        hf.pre_tokenizer = pre_tokenizers.Whitespace()
        trainer = trainers.BpeTrainer(vocab_size=32_000, min_frequency=2, end_of_word_suffix="</w>",
                                      show_progress=False)
        hf.train_from_iterator(lines, trainer)
        return set(hf.get_vocab())

    return Case(ours=_quiet(ours), reference=reference, check=_vocab_check(32_000, 0.99), work_bytes=n_bytes,
                notes="Both sides count words on the 2 cores (ours: the Numba counter of `tokembed.text.fast`; "
                "Hugging Face: rayon) and run the merge loop on one. Ours' Numba kernels are loaded from the "
                "on-disk cache by the untimed warm-up call, so the timed calls do not include that load "
                "(`bpe_train_fresh_process` times it).")


@benchmark(
    "bpe_train_bytelevel",
    description="Byte-level BPE training (GPT-2 pre-tokenizer, 256 byte symbols), 32,000 entries, min_frequency 2.",
    ours="tokembed `BPETokenizer(byte_level=True).fit(lines)`",
    reference="Hugging Face tokenizers `ByteLevelBPETokenizer.train_from_iterator`",
    check="the two vocabularies share at least 99% of their 32,000 tokens",
    data=_PROSE,
    libraries=("tokenizers", "numba"),
)
def bpe_train_bytelevel() -> Case:
    from tokenizers import ByteLevelBPETokenizer

    from tokembed.plugins.bpe.tokenizer import BPETokenizer

    lines, n_bytes = prose_lines()

    def ours():
        return set(BPETokenizer(vocab_size=32_000, min_frequency=2, byte_level=True).fit(lines).get_vocab())

    def reference():
        hf = ByteLevelBPETokenizer()
        hf.train_from_iterator(lines, vocab_size=32_000, min_frequency=2, show_progress=False, special_tokens=[])
        return set(hf.get_vocab())

    return Case(ours=_quiet(ours), reference=reference, check=_vocab_check(32_000, 0.99), work_bytes=n_bytes,
                notes="Same split of the work as `bpe_train`.")


def _tiktoken_gpt2():
    """tiktoken's GPT-2 encoding as tiktoken ships it (``tiktoken_ext.openai_public.gpt2``: its own pattern
    ``r50k_pat_str``, never our ``GPT2_PATTERN``), with the ranks read from our fixture instead of downloaded."""
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe
    from tiktoken_ext.openai_public import r50k_pat_str

    return tiktoken.Encoding("gpt2", pat_str=r50k_pat_str, mergeable_ranks=load_tiktoken_bpe(str(_GPT2_RANKS)),
                             special_tokens={"<|endoftext|>": 50256})


@benchmark(
    "bpe_encode",
    description="Encode the whole of prose_mix (one call, one string) with the GPT-2 ranks, on one thread.",
    ours="tokembed `BPETokenizer.from_tiktoken(gpt2.tiktoken).encode(text)` (ids, tokens and offsets)",
    reference="tiktoken `Encoding.encode_ordinary(text)` (ids only) with its own shipped pattern (r50k_pat_str)",
    check="identical ids",
    data="prose_mix as one string (23,151,227 bytes); ranks: tests/fixtures/gpt2.tiktoken",
    libraries=("tiktoken", "numba"),
    repeat=5,  # the two sides are close: five calls each, so the median and the minimum mean something
)
def bpe_encode() -> Case:
    import numpy as np

    from tokembed.plugins.bpe.tokenizer import BPETokenizer

    text = dataset_file("prose_mix").read_text(encoding="utf-8")
    tok = BPETokenizer.from_tiktoken(_GPT2_RANKS)
    ref = _tiktoken_gpt2()

    def check(enc, ref_ids) -> str:
        ids = np.asarray(ref_ids, dtype=np.int64)
        if enc.ids.shape != ids.shape:
            raise CheckFailed(f"ours gave {enc.ids.size:,} ids, tiktoken {ids.size:,}")
        diff = np.flatnonzero(enc.ids != ids)
        if diff.size:
            raise CheckFailed(f"{diff.size:,} ids differ, first at token {int(diff[0])}")
        return f"{ids.size:,} ids identical"

    return Case(ours=lambda: tok.encode(text), reference=lambda: ref.encode_ordinary(text), check=check,
                work_bytes=len(text.encode("utf-8")),
                notes="Ours also builds the `tokens` list (one str per token) and the (n, 2) `offsets` array; "
                "tiktoken returns a list of ids. Both run on one thread.")


_BATCH_THREADS = 2


@benchmark(
    "bpe_encode_batch",
    description=f"Encode prose_mix's lines (one call, a list of lines) with the GPT-2 ranks, on {_BATCH_THREADS} "
    "threads each side.",
    ours=f"tokembed `BPETokenizer.from_tiktoken(gpt2.tiktoken).encode_ids(lines, num_workers={_BATCH_THREADS})` "
    "(ids and lengths, packed)",
    reference=f"tiktoken `Encoding.encode_ordinary_batch(lines, num_threads={_BATCH_THREADS})` (a list of id lists) "
    "with its own shipped pattern (r50k_pat_str)",
    check="identical ids, line by line",
    data=_PROSE + "; ranks: tests/fixtures/gpt2.tiktoken",
    libraries=("tiktoken", "numba"),
    repeat=5,
)
def bpe_encode_batch() -> Case:
    from tokembed.plugins.bpe.tokenizer import BPETokenizer

    lines, n_bytes = prose_lines()
    tok = BPETokenizer.from_tiktoken(_GPT2_RANKS)
    ref = _tiktoken_gpt2()
    return Case(ours=lambda: tok.encode_ids(lines, num_workers=_BATCH_THREADS),
                reference=lambda: ref.encode_ordinary_batch(lines, num_threads=_BATCH_THREADS), check=_same_lines,
                work_bytes=n_bytes,
                notes=f"Both sides get the same list of lines and {_BATCH_THREADS} threads. Ours packs the lines into "
                "chunks of about a million characters and encodes each chunk in the Numba kernels (scan, then the "
                "merges once per distinct piece of the chunk), returning one int32 array of ids and the number of "
                "ids per line; tiktoken hands the lines to a pool of that many Python threads, each calling its Rust "
                "encoder per line, and returns a Python list of ids per line. On 165,631 short lines tiktoken's "
                "batch call pays the pool's hand-off per line and is slower than its own plain loop: see "
                "bpe_encode_lines_1thread for tiktoken at its fastest on these lines.")


@benchmark(
    "bpe_encode_lines_1thread",
    description="Encode prose_mix's lines (a list of lines) with the GPT-2 ranks, one thread each side: tiktoken at "
    "its fastest on many short texts.",
    ours="tokembed `BPETokenizer.from_tiktoken(gpt2.tiktoken).encode_ids(lines, num_workers=1)` (ids and lengths, "
    "packed)",
    reference="tiktoken `[enc.encode_ordinary(line) for line in lines]` (a list of id lists) with its own shipped "
    "pattern (r50k_pat_str)",
    check="identical ids, line by line",
    data=_PROSE + "; ranks: tests/fixtures/gpt2.tiktoken",
    libraries=("tiktoken", "numba"),
    repeat=5,
)
def bpe_encode_lines_1thread() -> Case:
    from tokembed.plugins.bpe.tokenizer import BPETokenizer

    lines, n_bytes = prose_lines()
    tok = BPETokenizer.from_tiktoken(_GPT2_RANKS)
    encode = _tiktoken_gpt2().encode_ordinary
    return Case(ours=lambda: tok.encode_ids(lines, num_workers=1), reference=lambda: [encode(t) for t in lines],
                check=_same_lines, work_bytes=n_bytes,
                notes="Both sides get the same list of lines on one thread. tiktoken's encoder is called once per "
                "line from a Python loop (no thread pool: on short lines faster than its batch call); ours packs the "
                "lines into chunks and encodes each chunk in the Numba kernels.")


def _same_lines(ours, ref_lists) -> str:
    """The check of the line-by-line rows: ours' packed ``(ids, lengths)`` equal tiktoken's list of id lists."""
    import numpy as np

    ids, lengths = ours
    ref_lengths = np.fromiter(map(len, ref_lists), dtype=np.int64, count=len(ref_lists))
    if not np.array_equal(lengths, ref_lengths):
        line = int(np.flatnonzero(lengths != ref_lengths)[0]) if lengths.shape == ref_lengths.shape else -1
        raise CheckFailed(f"ids per line differ (first at line {line}; {lengths.size:,} lines ours, "
                          f"{ref_lengths.size:,} tiktoken)")
    ref_ids = np.fromiter((i for part in ref_lists for i in part), dtype=np.int64, count=int(ref_lengths.sum()))
    diff = np.flatnonzero(ids != ref_ids)
    if diff.size:
        raise CheckFailed(f"{diff.size:,} ids differ, first at token {int(diff[0])}")
    return f"{ref_ids.size:,} ids in {len(ref_lists):,} lines identical"


@benchmark(
    "bpe_encode_long",
    description="Encode one run of the letter 'z' (one GPT-2 piece): 2N = 2,000,000 characters against N = "
    "1,000,000, same tokenizer.",
    ours="tokembed GPT-2 ranks, `encode('z' * 2_000_000)`",
    reference="the same tokenizer, `encode('z' * 1_000_000)`",
    check="both decode back to their text",
    data="generated: 'z' * N and 'z' * 2N",
    libraries=("numba",),
)
def bpe_encode_long() -> Case:
    from tokembed.plugins.bpe.tokenizer import BPETokenizer

    tok = BPETokenizer.from_tiktoken(_GPT2_RANKS)
    n = 1_000_000

    def check(long, short) -> str:
        if tok.decode(long.ids) != "z" * (2 * n) or tok.decode(short.ids) != "z" * n:
            raise CheckFailed("a run did not decode back to itself")
        return f"{len(long):,} and {len(short):,} tokens, both decode back"

    return Case(ours=lambda: tok.encode("z" * (2 * n)), reference=lambda: tok.encode("z" * n), check=check,
                work_bytes=None,
                notes="Here the ratio is time(2N) / time(N) of our own encoder: linear scaling gives 2, quadratic "
                "4; the issue requires at most 3. (tiktoken's merge loop is quadratic in the length of a piece, "
                "so it is not the reference here.)")
