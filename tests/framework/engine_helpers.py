"""What the engine tests share: a corpus with awkward content, tokenizers of every pre-tokenizer, and fault
injection (callables that kill the worker process running them).

The callables live in a module of their own (not a test module, not ``__main__``) so that the workers unpickle
them by module reference, as they do tokembed's own tasks; the workers find it on the ``sys.path`` they inherit."""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable


def write_corpus(path: Path) -> Path:
    """Prose paragraphs, non-ASCII lines, blank and whitespace-only lines, a 30 KB line, no final newline."""
    from tokembed.testing import sample_corpus

    parts = ["\n\n".join(sample_corpus(60_000)),
             "Caf\u00e9 na\u00efve \u00e9t\u00e9 \u6771\u4eac\u90fd \u0645\u0631\u062d\u0628\u0627 \U0001F600 x\u00a0y",
             "",
             "   ",
             "token " * 5000,
             "The end, it's 42."]
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def tokenizers() -> list[Any]:
    """One tokenizer per counting path: each scanning pre-tokenizer, a regex one (the Counter path), byte-level
    BPE with GPT-2's rule, WordPiece's own normalizer, characters."""
    from tokembed.plugins.bpe.tokenizer import BPETokenizer
    from tokembed.plugins.char.tokenizer import CharTokenizer
    from tokembed.plugins.word.tokenizer import WordTokenizer
    from tokembed.plugins.wordpiece.tokenizer import WordPieceTokenizer

    return [
        WordTokenizer(pre_tokenizer="word_punct"),
        WordTokenizer(pre_tokenizer="whitespace_split", normalizer=["lowercase"]),
        WordTokenizer(pre_tokenizer="bert", normalizer=["nfkc"]),
        WordTokenizer(pre_tokenizer={"type": "regex", "pattern": r"\w+"}),
        BPETokenizer(vocab_size=300, byte_level=True, pre_tokenizer="gpt2"),
        WordPieceTokenizer(vocab_size=300),
        CharTokenizer(),
    ]


def _first(marker: str) -> bool:
    """True for the one caller that creates ``marker`` (atomically, across processes)."""
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return False
    os.close(fd)
    return True


@dataclass(frozen=True)
class DieOnce:
    """Call ``fn``, except the first time (across all processes, per ``marker`` file) a partition is counted or
    ``merge`` is called: then kill this process at once, as a crash or the OOM killer would. Calls with a list of
    documents (the engine's warm-up) never die."""

    fn: Callable[..., Any]
    marker: str

    def __call__(self, *args: Any) -> Any:
        if not (len(args) == 1 and isinstance(args[0], list)) and _first(self.marker):
            os._exit(17)
        return self.fn(*args)


@dataclass(frozen=True)
class DieOn:
    """Count partitions with ``fn``, but kill the process every time partition ``index`` is counted."""

    fn: Callable[[Any], Any]
    index: int

    def __call__(self, part: Any) -> Any:
        if getattr(part, "index", None) == self.index:
            os._exit(17)
        return self.fn(part)


@contextmanager
def local_cluster(workers: int = 2):
    """A Dask LocalCluster of ``workers`` single-thread processes on 127.0.0.1, no dashboard (the tests' cluster)."""
    import distributed

    cl = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None)
    try:
        yield cl
    finally:
        cl.close()
