"""Measuring against a user's own script: tokens, chars/token, fertility, continued words, unknown rate and Rényi
efficiency computed by plain Python/NumPy over Hugging Face ``tokenizers`` encodings, against
``tokembed.metrics.tokenizer_metrics`` with the same six metrics, on the same documents (issue 24: must <= 1.0x
the script's time, goal <= 0.5x). Both sides encode inside the timed call."""

from __future__ import annotations

import math
import re
import tempfile
from pathlib import Path

import numpy as np

from . import Case, CheckFailed, benchmark
from .metrics import _DATA, _docs, _tokenizer

_METRICS = ("tokens", "chars_per_token", "fertility", "continued_words", "unk_rate", "renyi_efficiency")
_WORD = re.compile(r"\S+")


def _script(hf, docs: list[str], vocab_size: int, unk_id: int | None) -> dict[str, float]:
    """What a careful user writes: encode in one batch call, gather every document's ids, offsets and whitespace
    words into flat arrays (one pass in Python), then compute each metric with NumPy over the whole corpus."""
    encodings = hf.encode_batch(docs, add_special_tokens=False)
    ids, offs, word_starts, word_ends = [], [], [], []
    base = 0
    for doc, enc in zip(docs, encodings):
        ids.append(enc.ids)
        offs.append(np.asarray(enc.offsets, np.int64).reshape(-1, 2) + base)
        spans = [m.span() for m in _WORD.finditer(doc)]
        word_starts.extend(base + a for a, _ in spans)
        word_ends.extend(base + b for _, b in spans)
        base += len(doc) + 1  # a gap between documents: no word or token spans two
    all_ids = np.fromiter((i for doc_ids in ids for i in doc_ids), np.int64)
    off = np.concatenate(offs) if offs else np.zeros((0, 2), np.int64)
    ws, we = np.asarray(word_starts, np.int64), np.asarray(word_ends, np.int64)
    tokens, words, chars = int(all_ids.size), int(ws.size), base - len(docs)
    # tokens per word: a token counts for every word its span overlaps
    first = np.searchsorted(we, off[:, 0], side="right")
    last = np.searchsorted(ws, off[:, 1], side="left") - 1
    ok = (off[:, 1] > off[:, 0]) & (first <= last)
    diff = np.bincount(first[ok], minlength=words + 1) - np.bincount(last[ok] + 1, minlength=words + 1)
    continued = int(np.count_nonzero(np.cumsum(diff[:-1]) >= 2))
    unknown = int(np.count_nonzero(all_ids == unk_id)) if unk_id is not None else 0
    counts = np.bincount(all_ids, minlength=vocab_size)
    p = counts[counts > 0] / tokens
    renyi = math.log(float((p ** 2.5).sum())) / (1 - 2.5) / math.log(vocab_size)
    return {"tokens": tokens, "chars_per_token": chars / tokens, "fertility": tokens / words,
            "continued_words": continued / words, "unk_rate": unknown / tokens, "renyi_efficiency": renyi}


def _register(kind: str, shape: str) -> None:
    @benchmark(
        f"metrics_script_{kind}_{shape.replace(' ', '_')}",
        description=f"Six metrics by tokembed vs a hand-written script over Hugging Face encodings ({kind}, "
                    f"prose_mix {shape}).",
        ours=f"tokembed `tokenizer_metrics(tok, docs, metrics={list(_METRICS)})`, encoding included",
        reference="Hugging Face `tokenizers` `encode_batch` (its threads) + a Python/NumPy loop over the encodings "
                  "(benchmarks/metrics_script.py `_script`)",
        check="the six values equal (the script's rounded to tokembed's 6 decimals)",
        data=_DATA,
        libraries=("tokenizers", "numba"),
    )
    def case() -> Case:
        import tokenizers

        from tokembed.export import export_tokenizer
        from tokembed.metrics import tokenizer_metrics

        docs = _docs(shape)
        n_bytes = sum(len(d.encode("utf-8", "surrogatepass")) for d in docs)
        tok = _tokenizer(kind, docs)  # the same published vocabulary / ranks as the measure / encode rows
        with tempfile.TemporaryDirectory() as tmp:  # the same model in Hugging Face (ids identical: tests)
            path = export_tokenizer(tok, "hf", Path(tmp) / "tokenizer.json", stem="tok")[0]
            hf = tokenizers.Tokenizer.from_file(str(path))
        unk = getattr(tok, "unk_token", None)
        unk_id = tok.token_to_id(unk) if unk else None
        vocab_size = tok.get_vocab_size()

        def check(ours, ref) -> str:
            for name in _METRICS:  # tokembed rounds its values to 6 decimals (metrics.json)
                if float(ours[name]) != round(float(ref[name]), 6):
                    raise CheckFailed(f"{name}: tokembed {ours[name]!r}, script {ref[name]!r}")
            return f"six values equal ({ref['tokens']:,} tokens)"

        return Case(ours=lambda: tokenizer_metrics(tok, docs, metrics=list(_METRICS)),
                    reference=lambda: _script(hf, docs, vocab_size, unk_id), check=check, work_bytes=n_bytes,
                    notes="Both sides encode inside the timed call (Hugging Face on its own thread pool, tokembed on "
                    "its default threads).")


for _kind in ("bert", "gpt2"):
    for _shape in ("sentences", "long lines"):
        _register(_kind, _shape)
