"""encode_*: ``tokembed encode`` run as a command (its process start and imports included) against a reference
library encoding the same documents in batches and writing the same ``uint16`` ids, ids checked identical.

- ``encode_gpt2``: GPT-2's ranks (``tokembed data fetch gpt2_ranks``) saved as a tokembed tokenizer, against tiktoken
  ``Encoding.encode_ordinary_batch(batch, num_threads=2)`` with its own shipped GPT-2 pattern and the same ranks
  file (loaded offline); ``encode_gpt2_loop`` (and ``_1gb``): the same against tiktoken at its fastest on short lines, each batch
  cut in two halves encoded by plain ``encode_ordinary`` loops on two threads.
- ``encode_bert``: the bert-base-uncased vocabulary (``bert_uncased_vocab``) as a tokembed WordPiece tokenizer,
  against Hugging Face ``BertWordPieceTokenizer(vocab, lowercase=True).encode_batch(batch, add_special_tokens=False)``.

``encode_gpt2`` and ``encode_bert`` read prose_mix four times over (about 93 MB, written untimed to
``~/.cache/tokembed/bench/``; ``TOKEMBED_ENCODE_BENCH=PATH`` puts another text file in its place, a small one to
try the benchmark); ``encode_gpt2_1gb`` and ``encode_bert_1gb`` read the 1 GB corpus of ``benchmarks.scale``
(``/work/scale-data/corpus-1GB.txt`` when it exists, else the same text built by :mod:`benchmarks.engine`). Both
sides read the file, skip blank and whitespace-only lines (the corpus rule of ``tokembed encode``), encode batches of
about 4 MB of text and write ``ids.npy`` (``uint16``) and ``offsets.npy`` (``int64``) under a temporary folder; the
check compares the two written arrays. Neither side ever holds the whole corpus's ids as Python objects.
"""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from . import Case, CheckFailed, benchmark

_BATCH_CHARS = 1 << 22  # about 4 MB of text per batch on the reference side, as tokembed encode's batches


def x4_path() -> Path:
    """4 x prose_mix (built on first use), or the file ``TOKEMBED_ENCODE_BENCH`` names."""
    if os.environ.get("TOKEMBED_ENCODE_BENCH"):
        return Path(os.environ["TOKEMBED_ENCODE_BENCH"])
    from tokembed.datasets import dataset_path

    source = dataset_path("prose_mix")
    path = Path.home() / ".cache" / "tokembed" / "bench" / "prose_mix-x4.txt"
    size = source.stat().st_size
    if not path.exists() or path.stat().st_size != 4 * size:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = source.read_bytes()
        if not data.endswith(b"\n"):
            raise RuntimeError(f"{source} does not end with a newline: its copies would join two lines")
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(data * 4)
        os.replace(tmp, path)
    return path


def gb_path() -> Path:
    """The 1 GB corpus: benchmarks.scale's when built (``build --size 1GB``), else the engine benchmark's (the same
    text: both are ``engine.write_corpus(path, 10**9)``)."""
    from .scale import DEFAULT_DATA
    from ._scale_steps import corpus_file

    built = corpus_file(DEFAULT_DATA, "1GB")
    if built.exists():
        return built
    from .engine import corpus_path

    return corpus_path()


_X4 = (f"{os.environ['TOKEMBED_ENCODE_BENCH']} (TOKEMBED_ENCODE_BENCH)" if os.environ.get("TOKEMBED_ENCODE_BENCH")
       else "prose_mix x 4 (92,604,908 bytes, ~/.cache/tokembed/bench/prose_mix-x4.txt)")
_GB = "the 1 GB corpus of benchmarks/scale.py (/work/scale-data/corpus-1GB.txt; = benchmarks/engine.py's)"


def _tokembed_command() -> list[str]:
    script = Path(sys.executable).with_name("tokembed")
    return [str(script)] if script.exists() else [sys.executable, "-m", "tokembed.cli"]


def _batches(path: Path):
    """The documents of ``path`` (non-blank lines, without their newline) in lists of about 4 MB of text: the
    reference side's own reader, as a user of tiktoken or Hugging Face writes it (not tokembed's corpus reader, whose
    speed is ours to measure); the check proves both sides read the same documents."""
    batch: list[str] = []
    chars = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.endswith("\r"):
                line = line[:-1]
            if not line.strip():
                continue
            batch.append(line)
            chars += len(line)
            if chars >= _BATCH_CHARS:
                yield batch
                batch, chars = [], 0
    if batch:
        yield batch


def write_ids(out: Path, batches) -> Path:
    """Write the ids of ``batches`` (each a list of per-document id lists or arrays) as ``ids.npy`` (uint16) and
    ``offsets.npy`` (int64) in ``out``, appending batch by batch. Returns ``out``."""
    import numpy as np
    from numpy.lib.format import open_memmap

    out.mkdir(parents=True, exist_ok=True)
    raw = out / "ids.u16"
    lengths: list[np.ndarray] = []
    with open(raw, "wb") as f:
        for docs in batches:
            lens = np.fromiter((len(d) for d in docs), dtype=np.int64, count=len(docs))
            flat = np.fromiter(itertools.chain.from_iterable(docs), dtype=np.uint16, count=int(lens.sum()))
            f.write(flat.tobytes())
            lengths.append(lens)
    n = raw.stat().st_size // 2
    ids = open_memmap(out / "ids.npy", mode="w+", dtype=np.uint16, shape=(n,))
    ids[:] = np.memmap(raw, dtype=np.uint16, mode="r", shape=(n,))
    ids.flush()
    del ids
    raw.unlink()
    offsets = np.zeros(sum(x.size for x in lengths) + 1, dtype=np.int64)
    if lengths:
        np.cumsum(np.concatenate(lengths), out=offsets[1:])
    np.save(out / "offsets.npy", offsets)
    return out


def _check(ours: Path, ref: Path) -> str:
    import numpy as np

    a = np.load(ours / "ids.npy", mmap_mode="r")
    b = np.load(ref / "ids.npy", mmap_mode="r")
    if a.dtype != np.uint16:
        raise CheckFailed(f"tokembed encode wrote {a.dtype} ids, expected uint16")
    oa, ob = np.load(ours / "offsets.npy"), np.load(ref / "offsets.npy")
    if oa.shape != ob.shape or not np.array_equal(oa, ob):
        raise CheckFailed(f"document boundaries differ: {oa.size - 1:,} documents (ours) vs {ob.size - 1:,}, or "
                          "their lengths")
    step = 1 << 24
    for lo in range(0, a.size, step):
        diff = np.flatnonzero(a[lo:lo + step] != b[lo:lo + step])
        if diff.size:
            raise CheckFailed(f"ids differ, first at token {lo + int(diff[0]):,}")
    return f"{a.size:,} ids in {oa.size - 1:,} documents identical (the written uint16 arrays compared)"


def _case(path: Path, save_tokenizer, reference_batches, notes: str) -> Case:
    work = Path(tempfile.mkdtemp(prefix="tokembed-encode-bench-"))
    atexit.register(shutil.rmtree, work, True)  # both sides' outputs, removed when the benchmark process ends
    tok_file = work / "tokenizer.tokembed.json"
    save_tokenizer(tok_file)
    ours_out, ref_out = work / "ours", work / "reference"
    env = dict(os.environ)

    def ours():
        proc = subprocess.Popen([*_tokembed_command(), "encode", str(tok_file), str(path), "--out", str(ours_out),
                                 "-q"], env=env, stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)  # the command's own peak RSS, apart from this process's
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode:
            raise RuntimeError(f"tokembed encode exited with status {proc.returncode}")
        print(f"[encode bench] tokembed encode: peak RSS {usage.ru_maxrss / 1e3:,.0f} MB", file=sys.stderr)
        return ours_out

    def reference():
        if ref_out.exists():
            shutil.rmtree(ref_out)
        return write_ids(ref_out, reference_batches(path))

    return Case(ours=ours, reference=reference, check=_check, work_bytes=path.stat().st_size,
                notes=notes + " The peak RSS of ours is that of a process holding the setup (both tokenizers) "
                "that runs the command: the command's own peak is printed on standard error ([encode bench]).")


_GPT2 = dict(
    description="Write a corpus's GPT-2 token ids to disk (uint16), the command against tiktoken + numpy.",
    ours="`tokembed encode gpt2.tokembed.json CORPUS --out DIR -q` as a command (process start, imports, Numba "
    "cache load, reading, encoding on the tokenizer's threads, writing ids.npy + offsets.npy + vocab.json)",
    reference="tiktoken `Encoding('gpt2', pat_str=r50k_pat_str, mergeable_ranks=load_tiktoken_bpe(ranks))"
    ".encode_ordinary_batch(batch, num_threads=2)` on 4 MB batches of lines, written as ids.npy (uint16) + "
    "offsets.npy, in this process",
    check="identical ids and document boundaries (the written arrays compared)",
    libraries=("tiktoken", "numba"),
)
_BERT = dict(
    description="Write a corpus's BERT WordPiece ids to disk (uint16), the command against Hugging Face + numpy.",
    ours="`tokembed encode bert.tokembed.json CORPUS --out DIR -q` as a command, with "
    "`WordPieceTokenizer.from_vocab_file(vocab.txt)` saved untimed",
    reference="Hugging Face `BertWordPieceTokenizer(vocab.txt, lowercase=True).encode_batch(batch, "
    "add_special_tokens=False)` on 4 MB batches of lines (rayon, 2 threads), written as ids.npy (uint16) + "
    "offsets.npy, in this process",
    check="identical ids and document boundaries (the written arrays compared)",
    libraries=("tokenizers", "numba"),
)


def _gpt2_case(path: Path, loop: bool = False) -> Case:
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe
    from tiktoken_ext.openai_public import r50k_pat_str

    from tokembed.datasets import dataset_path
    from tokembed.plugins.bpe.tokenizer import BPETokenizer

    ranks = dataset_path("gpt2_ranks")
    ref = tiktoken.Encoding("gpt2", pat_str=r50k_pat_str, mergeable_ranks=load_tiktoken_bpe(str(ranks)),
                            special_tokens={"<|endoftext|>": 50256})

    def reference_batches(path):
        for batch in _batches(path):
            yield ref.encode_ordinary_batch(batch, num_threads=2)

    def loop_batches(path):  # two threads, each a plain encode_ordinary loop over its half of the batch
        from concurrent.futures import ThreadPoolExecutor

        encode = ref.encode_ordinary
        with ThreadPoolExecutor(2) as pool:
            for batch in _batches(path):
                half = (len(batch) + 1) // 2
                first, second = pool.map(lambda part: [encode(t) for t in part], (batch[:half], batch[half:]))
                yield first + second

    notes = ("Ours is timed as a user runs it, a fresh process each call; tiktoken runs in the benchmark's process "
             "with its module already imported and the ranks loaded (untimed). Both on 2 threads.")
    if loop:
        notes += (" tiktoken at its fastest on many short lines: its batch call hands each line to a thread pool "
                  "(encode_gpt2), slower than its own plain loop; here each 4 MB batch is cut in two halves, each "
                  "encoded by a plain `encode_ordinary` loop on its own thread (tiktoken releases the GIL while "
                  "encoding).")
    return _case(path, lambda f: BPETokenizer.from_tiktoken(ranks).save(f),
                 loop_batches if loop else reference_batches, notes)


def _bert_case(path: Path) -> Case:
    from tokenizers import BertWordPieceTokenizer

    from tokembed.datasets import dataset_path
    from tokembed.plugins.wordpiece.tokenizer import WordPieceTokenizer

    vocab = dataset_path("bert_uncased_vocab")
    ref = BertWordPieceTokenizer(str(vocab), lowercase=True)

    def reference_batches(path):
        for batch in _batches(path):
            yield [e.ids for e in ref.encode_batch(batch, add_special_tokens=False)]

    return _case(path, lambda f: WordPieceTokenizer.from_vocab_file(vocab).save(f), reference_batches,
                 "Ours is timed as a user runs it, a fresh process each call; Hugging Face runs in the benchmark's "
                 "process with the vocabulary loaded (untimed). Hugging Face returns an Encoding object per line "
                 "(ids read from each); ours writes from packed arrays.")


_RANKS = "; ranks: gpt2_ranks (~/.cache/tokembed/gpt2.tiktoken)"
_VOCAB = "; vocabulary: bert_uncased_vocab (30,522 entries)"


@benchmark("encode_gpt2", data=_X4 + _RANKS, **_GPT2)
def encode_gpt2() -> Case:
    return _gpt2_case(x4_path())


_GPT2_LOOP = dict(_GPT2, reference="tiktoken, the same `Encoding`: each 4 MB batch of lines cut in two halves, "
                  "each half encoded by `[enc.encode_ordinary(t) for t in half]` on its own thread (2 threads), "
                  "written as ids.npy (uint16) + offsets.npy, in this process",
                  description="Write a corpus's GPT-2 token ids to disk (uint16), the command against tiktoken at "
                  "its fastest on short lines (two plain loops on two threads) + numpy.")


@benchmark("encode_gpt2_loop", data=_X4 + _RANKS, **_GPT2_LOOP)
def encode_gpt2_loop() -> Case:
    return _gpt2_case(x4_path(), loop=True)


@benchmark("encode_gpt2_loop_1gb", data=_GB + _RANKS, **_GPT2_LOOP)
def encode_gpt2_loop_1gb() -> Case:
    return _gpt2_case(gb_path(), loop=True)


@benchmark("encode_bert", data=_X4 + _VOCAB, **_BERT)
def encode_bert() -> Case:
    return _bert_case(x4_path())


@benchmark("encode_gpt2_1gb", data=_GB + _RANKS, **_GPT2)
def encode_gpt2_1gb() -> Case:
    return _gpt2_case(gb_path())


@benchmark("encode_bert_1gb", data=_GB + _VOCAB, **_BERT)
def encode_bert_1gb() -> Case:
    return _bert_case(gb_path())
