"""char_encode: the char tokenizer's ``encode`` against a plain-Python dictionary lookup, on Moby Dick."""

from __future__ import annotations

import gzip
import importlib.resources

from . import Case, CheckFailed, benchmark


def _moby_dick() -> str:
    with gzip.open(importlib.resources.files("tokembed") / "samples/moby-dick.txt.gz", "rt", encoding="utf-8") as fh:
        return fh.read()


@benchmark(
    "char_encode",
    description="Character tokenizer: encode the whole bundled Moby Dick text (one call, one string).",
    ours="tokembed `CharTokenizer.encode(text)` (NumPy code-point table; returns ids, tokens and offsets)",
    reference="plain Python `[vocab.get(c, unk) for c in text]` (ids only)",
    check="identical ids",
    data="bundled `tokembed/samples/moby-dick.txt.gz` (1,190,317 characters); the vocabulary is fitted on the "
    "first half of its lines, so characters seen only in the second half encode to the unk id",
)
def char_encode() -> Case:
    import numpy as np
    from tokembed.plugins.char.tokenizer import CharTokenizer

    text = _moby_dick()
    lines = text.splitlines(keepends=True)
    tok = CharTokenizer().fit(lines[: len(lines) // 2])
    vocab = tok.get_vocab()
    unk = vocab[tok.unk_token]

    def ours():
        return tok.encode(text)

    def reference():
        return [vocab.get(c, unk) for c in text]

    def check(enc, ref_ids) -> str:
        ids = np.asarray(enc.ids)
        if ids.dtype != np.int32:
            raise CheckFailed(f"ours returned ids of dtype {ids.dtype}, expected int32")
        if ids.shape != (len(ref_ids),):
            raise CheckFailed(f"ours returned {ids.shape[0]:,} ids, the reference {len(ref_ids):,}")
        ref = np.asarray(ref_ids, dtype=np.int64)
        diff = np.flatnonzero(ids != ref)
        if diff.size:
            i = int(diff[0])
            raise CheckFailed(
                f"{diff.size:,} of {ids.size:,} ids differ; first at character {i} ({text[i]!r}): "
                f"ours {int(ids[i])}, reference {int(ref[i])}"
            )
        return f"{ids.size:,} ids identical, {int((ref == unk).sum()):,} of them unk; vocabulary {len(vocab)} entries"

    return Case(
        ours=ours, reference=reference, check=check, work_bytes=len(text.encode("utf-8")),
        notes="Ours also builds the `tokens` list and the `offsets` array of the Encoding; the reference builds "
        "only a list of ids, so the comparison favours the reference.",
    )  # fmt: skip
