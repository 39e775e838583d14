"""The Stanford GloVe C tools as a benchmark reference: compiled from their published source under the system's
temporary folder, run as their pipeline (vocab_count, cooccur, shuffle, glove), binary output read back.

Nothing of theirs is in this repository. Point ``TOKEMBED_GLOVE_SRC`` at a copy of their source tree (the folder
holding their ``Makefile`` and ``src/``; default ``/tmp/stanford-glove``), e.g.
``git clone https://github.com/stanfordnlp/GloVe /tmp/stanford-glove``. :func:`tools` compiles it with their
Makefile into ``<tmp>/tokembed-glove-builds/<build>-<hash>/`` (the hash covers the source, the flags and the
compiler, so an unchanged build is reused) and never writes into the source tree.

Builds (see :data:`BUILDS`): ``"default"`` is their Makefile as shipped (``CFLAGS = -pthread -O3 -march=native
-funroll-loops -Wall -Wextra -Wpedantic`` at commit 52f7dbc); ``"ofast"`` overrides ``CFLAGS`` with the alternative
their Makefile carries commented out, ``-pthread -Ofast -march=native -funroll-loops`` (its warning flags dropped;
``-lm`` comes from their ``LDLIBS`` either way). ``-Ofast`` implies ``-ffast-math``: their Makefile warns that the
trainer's NaN checks then never fire.

File formats read here, from their source (``src/glove.c``, ``src/common.h``): ``vocab.txt`` is one ``word count``
line per word, most frequent first, word ``i`` (0-based) being record id ``i + 1``; a co-occurrence record is 16
bytes (int32 word1, int32 word2, float64 value); ``-binary 1`` writes ``<save-file>.bin``: ``2 * V * (d + 1)``
float64, the rows of W (``V`` rows of ``d`` weights then the bias) then the rows of W~, and no text file.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SRC_ENV = "TOKEMBED_GLOVE_SRC"
SRC_DEFAULT = "/tmp/stanford-glove"
PROGRAMS = ("vocab_count", "cooccur", "shuffle", "glove")
#: build name -> (label for a report, CFLAGS override or None for their Makefile's own)
BUILDS: dict[str, tuple[str, str | None]] = {
    "default": ("their Makefile's default flags", None),
    "ofast": ("-Ofast (their Makefile's alternative CFLAGS line)", "-pthread -Ofast -march=native -funroll-loops"),
}
RECORD_BYTES = 16  # CREC: int32 word1, int32 word2, float64 value


@dataclass(frozen=True)
class Tools:
    """One compiled build: the folder holding the four programs, its report label, and the exact gcc command that
    compiled ``glove.c`` (from the build log) and the compiler's version line."""

    folder: Path
    build: str
    label: str
    compile_line: str
    compiler: str

    def describe(self) -> str:
        return f"{self.label}: `{self.compile_line}` ({self.compiler})"


def _source() -> Path:
    src = Path(os.environ.get(SRC_ENV, SRC_DEFAULT))
    if not ((src / "Makefile").is_file() and (src / "src" / "glove.c").is_file()):
        raise RuntimeError(
            f"the Stanford GloVe source is not at {src} (no Makefile and src/glove.c): get it with `git clone "
            f"https://github.com/stanfordnlp/GloVe {SRC_DEFAULT}` (or any copy of that tree) and set {SRC_ENV} to "
            "its folder; the benchmark compiles it under the temporary folder, never in the source tree")
    return src


def _compiler() -> str:
    try:
        out = subprocess.run(["gcc", "--version"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise RuntimeError(f"gcc is needed to build the Stanford GloVe tools: {exc}") from None
    return out.splitlines()[0].strip()


def tools(build: str) -> Tools:
    """The Stanford tools compiled as ``build`` (a key of :data:`BUILDS`), compiling them if this source, these
    flags and this compiler have not been built yet. Raises RuntimeError (no source, no gcc, make failed)."""
    label, cflags = BUILDS[build]
    src = _source()
    compiler = _compiler()
    digest = hashlib.sha256(f"{build}\0{cflags}\0{compiler}\0".encode())
    for path in [src / "Makefile", *sorted((src / "src").glob("*.[ch]"))]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    root = Path(tempfile.gettempdir()) / "tokembed-glove-builds"
    folder = root / f"{build}-{digest.hexdigest()[:12]}"
    log = folder / "compile-line.txt"
    if not (log.is_file() and all((folder / p).is_file() for p in PROGRAMS)):
        root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{build}-", dir=root))
        cmd = ["make", "-C", str(src), f"BUILDDIR={tmp}"] + ([f"CFLAGS={cflags}"] if cflags else [])
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode:
            shutil.rmtree(tmp, ignore_errors=True)
            raise RuntimeError(f"building the Stanford GloVe tools ({' '.join(cmd)}) failed:\n{proc.stderr[-2000:]}")
        line = next((ln for ln in proc.stdout.splitlines() if re.search(r"-c \S*glove\.c\b", ln)), None)
        if line is None:
            shutil.rmtree(tmp, ignore_errors=True)
            raise RuntimeError(f"building the Stanford GloVe tools: no compile line of glove.c in make's output of "
                               f"{' '.join(cmd)}")
        (tmp / "compile-line.txt").write_text(line.replace(str(tmp), "$BUILDDIR").strip() + "\n", encoding="utf-8")
        try:
            os.replace(tmp, folder)
        except OSError:  # built meanwhile by another process: keep that one
            shutil.rmtree(tmp, ignore_errors=True)
    return Tools(folder, build, label, log.read_text(encoding="utf-8").strip(), compiler)


def run_pipeline(t: Tools, corpus: Path, work: Path, *, vector_size: int, window: int, min_count: int, x_max: float,
                 alpha: float, learning_rate: float, workers: int, seed: int, epochs: int) -> dict:
    """vocab_count, cooccur (window ``window``, symmetric, 1/d weighting: their defaults), shuffle and glove
    (``-binary 1``: W, W~ and biases in one float64 file, no text file) in ``work``, each timed.

    Returns ``{"work": work, "times": {program: seconds}, "costs": [per-epoch cost from glove's log],
    "n_records": records written by cooccur}``. The vectors are left on disk for :func:`read_vectors`.
    Raises RuntimeError when a program fails.
    """
    times: dict[str, float] = {}

    def step(name: str, args: list[str], stdin: Path, stdout: Path | None) -> str:
        t0 = time.perf_counter()
        with open(stdin, "rb") as fin, open(stdout or os.devnull, "wb") as fout:
            proc = subprocess.run([str(t.folder / name), *args], stdin=fin, stdout=fout, stderr=subprocess.PIPE,
                                  cwd=work, check=False)
        times[name] = time.perf_counter() - t0
        if proc.returncode:
            raise RuntimeError(f"{name} failed ({proc.returncode}): {proc.stderr.decode('utf-8', 'replace')[-500:]}")
        return proc.stderr.decode("utf-8", "replace")

    step("vocab_count", ["-min-count", str(min_count), "-verbose", "0"], corpus, work / "vocab.txt")
    step("cooccur", ["-memory", "4.0", "-vocab-file", "vocab.txt", "-verbose", "0", "-window-size", str(window)],
         corpus, work / "cooc.bin")
    step("shuffle", ["-memory", "4.0", "-verbose", "0", "-seed", str(seed)], work / "cooc.bin", work / "cooc.shuf.bin")
    log = step("glove", ["-save-file", "vectors", "-threads", str(workers), "-input-file", "cooc.shuf.bin",
                         "-x-max", str(x_max), "-alpha", str(alpha), "-eta", str(learning_rate), "-iter", str(epochs),
                         "-vector-size", str(vector_size), "-binary", "1", "-vocab-file", "vocab.txt",
                         "-verbose", "2", "-seed", str(seed)], Path(os.devnull), None)
    costs = [float(c) for c in re.findall(r"iter: \d+, cost: ([0-9.eE+-]+)", log)]
    return {"work": work, "times": times, "costs": costs,
            "n_records": (work / "cooc.bin").stat().st_size // RECORD_BYTES}


def vocab_words(work: Path) -> list[str]:
    """The words of ``work/vocab.txt`` in id order."""
    return [line.split(" ", 1)[0] for line in (work / "vocab.txt").read_text(encoding="utf-8").splitlines()]


def read_vectors(work: Path, vector_size: int):
    """``work/vectors.bin`` (``-binary 1``) as KeyedVectors of W + W~ without biases, what their ``-model 2`` text
    output holds, keyed by ``vocab.txt``'s words. Raises RuntimeError if the file's size does not fit."""
    from tokembed.keyedvectors import KeyedVectors

    words = vocab_words(work)
    flat = np.fromfile(work / "vectors.bin", dtype="<f8")
    if flat.size != 2 * len(words) * (vector_size + 1):
        raise RuntimeError(f"{work / 'vectors.bin'} holds {flat.size:,} float64, not 2 * {len(words):,} * "
                           f"({vector_size} + 1)")
    w = flat.reshape(2, len(words), vector_size + 1)
    return KeyedVectors.from_arrays(words, w[0, :, :vector_size] + w[1, :, :vector_size])
