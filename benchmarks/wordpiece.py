"""WordPiece: training (likelihood and frequency criteria) against Hugging Face's WordPiece trainer, and encoding with
the bert-base-uncased vocabulary against Hugging Face's ``BertWordPieceTokenizer.encode_batch``."""

from __future__ import annotations

from pathlib import Path

from . import Case, CheckFailed, benchmark
from ._common import prose_lines as _prose_lines

_PROSE = "prose_mix (23,151,227 bytes, 165,631 non-empty lines); each side gets the same list of lines"
_VOCAB = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "bert-base-uncased-vocab.txt"
_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
_BERT = {"single": "[CLS] $A [SEP]", "pair": "[CLS] $A [SEP] $B:1 [SEP]:1"}


def _train_hf(lines: list[str]) -> set[str]:
    from tokenizers import BertWordPieceTokenizer

    hf = BertWordPieceTokenizer(lowercase=True)
    hf.train_from_iterator(lines, vocab_size=30_000, min_frequency=2, limit_alphabet=1000, show_progress=False,
                           special_tokens=_SPECIALS)
    return set(hf.get_vocab())


def _train_check(least: float | None):
    def check(ours: set, ref: set) -> str:
        common = len(ours & ref)
        if len(ours) != 30_000 or len(ref) != 30_000:
            raise CheckFailed(f"vocabulary sizes {len(ours):,} (ours) and {len(ref):,} (reference), expected 30,000")
        singles = {t for t in ref if len(t.removeprefix("##")) == 1}
        if not singles <= ours:
            raise CheckFailed(f"{len(singles - ours)} characters of the reference's alphabet are missing from ours")
        if least is not None and common < least * 30_000:
            raise CheckFailed(f"only {common:,} of 30,000 tokens in common (at least {least:.0%} expected)")
        what = ("the criteria differ, so only the alphabet must agree" if least is None
                else "same criterion; ties are broken differently")
        return f"30,000 entries each, {common:,} in common, same alphabet ({what})"

    return check


_TRAIN_NOTES = ("Both sides count words on the 2 cores (ours: this plugin's normalization kernel, then the Numba "
                "counter of `tokembed.text.fast`; Hugging Face: rayon) and run the merge loop on one. Same settings "
                "on both sides: lowercase with accents stripped, min_frequency 2, limit_alphabet 1000 (prose_mix "
                "has fewer characters). Ours' Numba kernels are loaded from the on-disk cache by the untimed warm-up "
                "call, so the timed calls do not include that load.")


@benchmark(
    "wordpiece_train",
    description="WordPiece training by likelihood (our default), 30,000 entries, BERT uncased normalization.",
    ours="tokembed `WordPieceTokenizer(vocab_size=30000, min_frequency=2, limit_alphabet=1000).fit(lines)` "
    "(scoring='likelihood')",
    reference="Hugging Face `BertWordPieceTokenizer(lowercase=True).train_from_iterator` (`WordPieceTrainer`, which "
    "merges by frequency)",
    check="30,000 entries on each side and the same alphabet (the criteria differ, so the merges do)",
    data=_PROSE,
    libraries=("tokenizers", "numba"),
)
def wordpiece_train() -> Case:
    from tokembed.plugins.wordpiece.tokenizer import WordPieceTokenizer

    lines, n_bytes = _prose_lines()

    def ours():
        tok = WordPieceTokenizer(vocab_size=30_000, min_frequency=2, limit_alphabet=1000, show_progress=False)
        return set(tok.fit(lines).get_vocab())

    return Case(ours=ours, reference=lambda: _train_hf(lines), check=_train_check(None), work_bytes=n_bytes,
                notes=_TRAIN_NOTES + " The likelihood criterion costs more per merge than frequency: merging (a, b) "
                "lowers count(a) and count(b) and so re-scores every pair that holds a or b.")


@benchmark(
    "wordpiece_train_frequency",
    description="WordPiece training by frequency (Hugging Face's criterion), 30,000 entries, BERT uncased "
    "normalization.",
    ours="tokembed `WordPieceTokenizer(vocab_size=30000, min_frequency=2, limit_alphabet=1000, "
    "scoring='frequency').fit(lines)`",
    reference="Hugging Face `BertWordPieceTokenizer(lowercase=True).train_from_iterator` (`WordPieceTrainer`)",
    check="the two vocabularies share at least 95% of their 30,000 tokens",
    data=_PROSE,
    libraries=("tokenizers", "numba"),
)
def wordpiece_train_frequency() -> Case:
    from tokembed.plugins.wordpiece.tokenizer import WordPieceTokenizer

    lines, n_bytes = _prose_lines()

    def ours():
        tok = WordPieceTokenizer(vocab_size=30_000, min_frequency=2, limit_alphabet=1000, scoring="frequency",
                                 show_progress=False)
        return set(tok.fit(lines).get_vocab())

    return Case(ours=ours, reference=lambda: _train_hf(lines), check=_train_check(0.95), work_bytes=n_bytes,
                notes=_TRAIN_NOTES)


@benchmark(
    "wordpiece_encode",
    description="Encode every non-empty line of prose_mix with the bert-base-uncased vocabulary, [CLS] and [SEP] "
    "added (a batch of 165,631 texts).",
    ours="tokembed `WordPieceTokenizer.from_vocab_file(vocab.txt, post_processor=BERT template).encode_batch(lines)` "
    "(one thread)",
    reference="Hugging Face `BertWordPieceTokenizer(vocab.txt, lowercase=True).encode_batch(lines)` (rayon, 2 threads)",
    check="identical ids for every line",
    data=_PROSE + "; vocabulary: tests/fixtures/bert-base-uncased-vocab.txt (30,522 entries)",
    libraries=("tokenizers", "numba"),
)
def wordpiece_encode() -> Case:
    from tokenizers import BertWordPieceTokenizer

    from tokembed.plugins.wordpiece.tokenizer import WordPieceTokenizer

    lines, n_bytes = _prose_lines()
    ours_tok = WordPieceTokenizer.from_vocab_file(_VOCAB, post_processor=_BERT)
    ref_tok = BertWordPieceTokenizer(str(_VOCAB), lowercase=True)

    def check(ours, ref) -> str:
        if len(ours) != len(ref):
            raise CheckFailed(f"ours gave {len(ours):,} encodings, the reference {len(ref):,}")
        total = 0
        for k, (a, b) in enumerate(zip(ours, ref)):
            ids = b.ids
            if a.ids.tolist() != ids:
                raise CheckFailed(f"line {k} differs: {lines[k][:80]!r}: ours {a.ids.tolist()[:20]}, reference "
                                  f"{ids[:20]}")
            total += len(ids)
        return f"{len(ours):,} lines, {total:,} ids identical"

    return Case(
        ours=lambda: ours_tok.encode_batch(lines), reference=lambda: ref_tok.encode_batch(lines), check=check,
        work_bytes=n_bytes,
        notes="Both sides return one encoding per line with ids, tokens, offsets, type ids and masks (ours as "
        "NumPy arrays and lists built in the call; Hugging Face's as Rust objects converted to Python on access). "
        "Ours runs on one thread: the Numba kernel normalizes, splits and encodes the whole batch in chunks of "
        "about a million characters; Hugging Face uses both cores.",
    )  # fmt: skip
