"""The 1 / 2.5 / 10 GB runs of issue 27 ("any corpus on one machine"), one resumable step per invocation.

::

    python -m benchmarks.scale build --size 1GB            # the corpus (untimed elsewhere; its own result too)
    python -m benchmarks.scale encode --size 1GB           # tokembed encode, GPT-2 ranks -> encoded-1GB/
    python -m benchmarks.scale bpe --size 1GB              # BPE 32k: word counts + merges, streamed from the file
    python -m benchmarks.scale cooccurrence --size 1GB     # co-occurrence counts from the encoded folder
    python -m benchmarks.scale tfidf-df --size 1GB         # TF-IDF document frequencies from the file
    python -m benchmarks.scale word2vec --size 1GB [--token-budget N]       # from the mapped encoded folder
    python -m benchmarks.scale w2v-in-memory --size 1GB [--token-budget N]  # the same, ids read into RAM first
    python -m benchmarks.scale hf-bpe --size 1GB           # references: Hugging Face BpeTrainer,
    python -m benchmarks.scale spm --size 1GB --cap 10M    #   sentencepiece (--cap 0: every sentence),
    python -m benchmarks.scale gensim-w2v --size 1GB [--token-budget N]     #   gensim Word2Vec(corpus_file=...)
    python -m benchmarks.scale table [--sizes 1GB,2.5GB,10GB] [--write]     # the table (--write: BENCHMARKS.md)
    python -m benchmarks.scale delete [--size 1GB]         # remove the corpora and derived files (results kept)

Every measured step runs as a child process under ``prlimit --as=BYTES`` (``--limit-gb``, default 80% of the
machine's memory), optionally stopped after ``--timeout`` seconds; the driver records its wall time (process start
included), MB/s of corpus text, peak RSS (the child's ``ru_maxrss`` from ``os.wait4``, which also carries the
driver's own ~16 MB high-water mark through exec: the driver imports nothing heavy), RSS sampled every 2 s, and the
status: ``ok``, ``oom`` (a failed allocation under the limit: "out of memory at N GB limit"), ``stopped`` or
``failed``. A result is written to ``DATA/results/SIZE/STEP.json``; a step with a result other than ``failed`` is not
run again unless ``--force``. The data folder defaults to ``/work/scale-data`` (``--data`` or
``TOKEMBED_SCALE_DATA``), outside the repository. What each step measures: docs/scale.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from . import _scale_steps as S

DEFAULT_DATA = Path(os.environ.get("TOKEMBED_SCALE_DATA", "/work/scale-data"))
REPO_ROOT = Path(__file__).resolve().parent.parent
SIZES = ("1GB", "2.5GB", "10GB")
#: the table's rows: (result name, what it is), ours first, then the references
ROWS = (
    ("build", "build the corpus (not a benchmark)"),
    ("encode", "`tokembed encode` (GPT-2 ranks, uint16)"),
    ("bpe", "BPE 32k: word counts + merges"),
    ("cooccurrence", "co-occurrence counts (from the encoded folder)"),
    ("tfidf-df", "TF-IDF document frequencies"),
    ("word2vec", "word2vec, mapped encoded folder"),
    ("w2v-in-memory", "word2vec, ids in RAM (before)"),
    ("hf-bpe", "Hugging Face BpeTrainer 32k"),
    ("spm-cap10M", "sentencepiece BPE 32k, 10 M sentences"),
    ("spm-cap0", "sentencepiece BPE 32k, every sentence"),
    ("gensim-w2v", "gensim Word2Vec(corpus_file)"),
)
#: the rows whose missing cells are projected: the references and the in-memory "before", which the issue runs at 1
#: and 2.5 GB only; our bounded-memory steps are measured at every size or shown as not run
PROJECTED = ("w2v-in-memory", "hf-bpe", "spm", "gensim-w2v")
_OOM = re.compile(r"MemoryError|Unable to allocate|memory allocation of \d+ bytes failed|std::bad_alloc|"
                  r"Cannot allocate memory|out of memory|can't start new thread|failed to map segment",
                  re.IGNORECASE)


def parse_size(text: str) -> int:
    """``"20MB"``, ``"2.5GB"`` -> bytes (10^6, 10^9). Raises SystemExit on anything else."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([MG])B?\s*", text, re.IGNORECASE)
    if not m:
        raise SystemExit(f"--size: expected a size such as 20MB, 1GB or 2.5GB, got {text!r}")
    return int(float(m.group(1)) * (10 ** 6 if m.group(2).upper() == "M" else 10 ** 9))


def size_label(text: str) -> str:
    n = parse_size(text)
    return f"{n / 1e9:g}GB" if n >= 10 ** 9 else f"{n / 1e6:g}MB"


def parse_count(text: str) -> int:
    """``"10M"``, ``"50000000"``, ``"0"`` -> int."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([kKmMgG]?)\s*", text)
    if not m:
        raise SystemExit(f"expected a count such as 10M or 0, got {text!r}")
    return int(float(m.group(1)) * {"": 1, "k": 10 ** 3, "m": 10 ** 6, "g": 10 ** 9}[m.group(2).lower()])


def _mem_total() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024
    return 16 * 10 ** 9


def _rss_of(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


# -- running one step --------------------------------------------------------------------------------------------------
def run_child(cmd: list[str], *, limit: int | None, timeout: float | None, detail: Path,
              log=print) -> dict:
    """Run ``cmd`` under ``prlimit --as=limit`` and return what the result JSON records of it (status, wall, peak
    RSS, RSS samples, the end of its standard error)."""
    full = (["prlimit", f"--as={limit}", "--"] if limit else []) + cmd
    env = dict(os.environ, TOKEMBED_SCALE_DETAIL=str(detail), PYTHONUNBUFFERED="1")
    detail.unlink(missing_ok=True)
    err_path = detail.with_suffix(".stderr")
    samples: list[tuple[float, float]] = []
    t0 = time.perf_counter()
    stopped_at = None
    next_sample = 2.0
    with open(err_path, "wb") as err:
        proc = subprocess.Popen(full, cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=err)
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)  # this child's own rusage, whatever ran before
            if pid:
                proc.returncode = rc = os.waitstatus_to_exitcode(status)
                break
            time.sleep(0.1)
            elapsed = time.perf_counter() - t0
            if elapsed >= next_sample:
                next_sample += 2.0
                rss = _rss_of(proc.pid)
                if rss is not None:
                    samples.append((round(elapsed, 1), round(rss / 1e6, 1)))
            if timeout and elapsed > timeout and stopped_at is None:
                log(f"  stopping the step after {elapsed:.0f} s (--timeout {timeout:g})")
                proc.send_signal(signal.SIGTERM)
                stopped_at = elapsed
            elif stopped_at is not None and elapsed > stopped_at + 20:
                proc.kill()
    wall = stopped_at if stopped_at is not None else time.perf_counter() - t0
    peak = usage.ru_maxrss * 1024  # kilobytes on Linux
    stderr = err_path.read_text(encoding="utf-8", errors="replace")
    err_path.unlink(missing_ok=True)
    if stopped_at is not None:
        status = "stopped"
    elif rc == 0:
        status = "ok"
    elif _OOM.search(stderr) or (limit and rc in (-signal.SIGABRT, -signal.SIGSEGV, -signal.SIGKILL)):
        status = "oom"
    else:
        status = "failed"
    out = {"status": status, "returncode": rc, "wall_s": round(wall, 2), "peak_rss_mb": round(peak / 1e6, 1),
           "rss_samples": samples[:: max(1, len(samples) // 200)]}
    if status != "ok":
        out["stderr_tail"] = stderr[-3000:]
    if detail.exists():
        out["detail"] = json.loads(detail.read_text(encoding="utf-8"))
        detail.unlink()
    return out


def _machine() -> str:
    from .harness import machine_description

    return machine_description()


def record(args, name: str, label: str, cmd: list[str], work_bytes: int | None, log=print) -> dict:
    """Run one measured step (unless it has a result other than ``failed`` and no ``--force``) and write its result
    JSON."""
    folder = args.data / "results" / label
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    if path.exists() and not args.force:
        old = json.loads(path.read_text(encoding="utf-8"))
        if old.get("status") != "failed":
            log(f"[{name} {label}] already recorded as {old.get('status')} ({path}); --force to run it again")
            return old
    limit = int(args.limit_gb * 1e9) if args.limit_gb else None
    log(f"[{name} {label}] running{f' under prlimit --as={limit}' if limit else ''}: {' '.join(cmd)}")
    res = run_child(cmd, limit=limit, timeout=args.timeout, detail=folder / f".{name}.detail.json", log=log)
    res.update(step=name, size=label, work_bytes=work_bytes, limit_bytes=limit, timeout_s=args.timeout,
               command=" ".join(cmd), when=dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
               machine=_machine(), load_before=round(os.getloadavg()[0], 2))
    if res["status"] == "ok" and work_bytes:
        res["mb_per_s"] = round(work_bytes / 1e6 / res["wall_s"], 2)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(res, indent=1), encoding="utf-8")
    os.replace(tmp, path)
    log(f"[{name} {label}] {describe(res)} -> {path}")
    return res


def describe(res: dict) -> str:
    """One cell of the table: the result in words."""
    status = res.get("status")
    rss = f"{res['peak_rss_mb']:,.0f} MB"
    if status == "oom":
        return f"out of memory at {res['limit_bytes'] / 1e9:g} GB limit (after {_dur(res['wall_s'])})"
    if status == "stopped":
        return f"stopped after {_dur(res['wall_s'])} (peak RSS {rss})"
    if status == "failed":
        return f"failed (exit {res['returncode']})"
    parts = [_dur(res["wall_s"])]
    if res.get("mb_per_s"):
        parts.append(f"{res['mb_per_s']:.1f} MB/s")
    tps = (res.get("detail") or {}).get("tokens_per_s")
    if tps:
        parts.append(f"{tps / 1e3:,.0f}k tok/s")
    parts.append(rss)
    return ", ".join(parts)


def _dur(s: float) -> str:
    return f"{s:.1f} s" if s < 120 else f"{s / 60:.1f} min"


# -- the steps ---------------------------------------------------------------------------------------------------------
def _need(path: Path, what: str, how: str) -> None:
    if not path.exists():
        raise SystemExit(f"{what} is missing ({path}): run `python -m benchmarks.scale {how}` first")


def _py(*args: str) -> list[str]:
    return [sys.executable, "-m", "benchmarks._scale_steps", *args]


def cmd_step(args) -> int:
    label, size = size_label(args.size), parse_size(args.size)
    data: Path = args.data
    data.mkdir(parents=True, exist_ok=True)
    corpus = S.corpus_file(data, label)
    step = args.step
    name = step
    extra: list[str] = []
    if step == "build":
        if corpus.exists() and not args.force:
            print(f"[build {label}] {corpus} exists ({corpus.stat().st_size:,} bytes); --force to rebuild")
            return 0
        free = shutil.disk_usage(data).free
        if free < size * 1.5:
            raise SystemExit(f"{data}: {free / 1e9:.1f} GB free, the {label} corpus needs {size / 1e9:.1f} GB and "
                             "its derived files about half as much again")
    elif step in ("encode", "bpe", "tfidf-df", "hf-bpe", "spm"):
        _need(corpus, f"the {label} corpus", f"build --size {label}")
    else:
        _need(S.encoded_dir(data, label) / "encoded.json", f"the {label} encoded folder", f"encode --size {label}")
    if step == "encode":
        tok = S.gpt2_tokenizer(data)
        if not tok.exists():
            from tokembed.datasets import dataset_path
            from tokembed.plugins.bpe.tokenizer import BPETokenizer

            BPETokenizer.from_tiktoken(dataset_path("gpt2_ranks")).save(tok)
        script = Path(sys.executable).with_name("tokembed")
        cmd = [str(script), "encode", str(tok), str(corpus), "--out", str(S.encoded_dir(data, label)), "-q"]
    else:
        if step == "spm":
            extra = [str(parse_count(args.cap))]
            name = f"spm-cap{args.cap}"
        elif step in ("word2vec", "w2v-in-memory", "gensim-w2v"):
            budget = parse_count(args.token_budget)
            extra = [str(budget)]
            if budget:
                name = f"{step}-{args.token_budget}"
            if step == "gensim-w2v":
                print(f"[{name} {label}] writing gensim's input (untimed) ...")
                S.write_gensim_file(data, label, budget)
        cmd = _py(step, str(data), label, str(size), *extra)
    budgeted = step in ("word2vec", "w2v-in-memory", "gensim-w2v") and int(extra[0]) > 0  # tokens/s, not MB/s
    work = None if budgeted else corpus.stat().st_size if step != "build" else size
    res = record(args, name, label, cmd, work_bytes=work)
    if step == "encode" and res["status"] == "ok":
        manifest = json.loads((S.encoded_dir(data, label) / "encoded.json").read_text(encoding="utf-8"))
        res["detail"] = {k: manifest.get(k) for k in ("documents", "tokens", "dtype")}
        (args.data / "results" / label / "encode.json").write_text(json.dumps(res, indent=1), encoding="utf-8")
    return 0 if res["status"] in ("ok", "oom", "stopped") else 1


# -- the table ---------------------------------------------------------------------------------------------------------
def load_results(data: Path) -> dict[tuple[str, str], dict]:
    out = {}
    for path in sorted((data / "results").glob("*/*.json")):
        res = json.loads(path.read_text(encoding="utf-8"))
        out[(res["step"], res["size"])] = res
    return out


def _plateau(res: dict) -> bool:
    """Whether a stopped run's RSS had levelled off: the second half of its samples within 2% of each other."""
    rss = [mb for _, mb in res.get("rss_samples") or []]
    tail = rss[len(rss) // 2:]
    return len(tail) >= 3 and max(tail) <= 1.02 * min(tail)


def _project(a: dict, b: dict, target: int, x0: int, x1: int) -> str | None:
    """A linear projection to ``target`` bytes from the results ``a`` and ``b`` of corpora of ``x0`` and ``x1``
    bytes, as words: wall time and peak RSS from two ok results over the whole corpus; peak RSS alone from two
    runs stopped by the same ``--timeout`` after their RSS levelled off (:func:`_plateau`; a run stopped while
    still growing is not projected). A token-budget run does the same work at
    every size: never projected."""
    status = {a.get("status"), b.get("status")}
    ok = status == {"ok"} and a.get("work_bytes") and b.get("work_bytes")  # not a token-budget run: same work
    stopped = status == {"stopped"} and a.get("timeout_s") and a.get("timeout_s") == b.get("timeout_s") \
        and _plateau(a) and _plateau(b)
    if x0 == x1 or not (ok or stopped):
        return None

    def at(y0, y1):
        return y0 + (y1 - y0) * (target - x0) / (x1 - x0)

    rss = at(a["peak_rss_mb"], b["peak_rss_mb"])
    limit = b.get("limit_bytes")
    over = f"; over the {limit / 1e9:g} GB limit" if limit and rss * 1e6 > limit else ""
    if status == {"stopped"}:
        return f"projected: peak RSS ~{rss:,.0f} MB{over}"
    return f"projected: ~{_dur(at(a['wall_s'], b['wall_s']))}, ~{rss:,.0f} MB{over}"


def render_table(data: Path, sizes: list[str]) -> str:
    results = load_results(data)
    titles = dict(ROWS)
    names = []
    for base, _ in ROWS:  # each row, then its token-budget variants (word2vec-50M, ...)
        names += [base] + sorted({s for s, _ in results if s.startswith(base + "-") and s not in titles
                                  and re.fullmatch(r"[0-9.]+[kMG]?", s[len(base) + 1:])},
                                 key=lambda n: parse_count(n.rsplit("-", 1)[1]))
    names += sorted({s for s, _ in results} - set(names))  # anything else recorded (spm-cap5M, ...)
    labels = [size_label(s) for s in sizes]
    lines = ["| step | " + " | ".join(labels) + " |", "|---|" + "---:|" * len(labels)]
    for name in names:
        cells = []
        for i, label in enumerate(labels):
            res = results.get((name, label))
            if res is not None:
                cells.append(describe(res))
                continue
            done = [(results.get((name, lab)), parse_size(lab)) for lab in labels[:i]]
            done = [(r, x) for r, x in done if r and r.get("status") in ("ok", "stopped")]
            proj = _project(done[-2][0], done[-1][0], parse_size(label), done[-2][1], done[-1][1]) \
                if len(done) >= 2 and name.startswith(PROJECTED) else None
            cells.append(f"*{proj}*" if proj else "not run")
        if any(c != "not run" for c in cells):
            base, _, budget = name.rpartition("-")
            title = titles.get(name) or (f"{titles[base]}, first {budget} tokens" if base in titles else name)
            lines.append(f"| {title} (`{name}`) | " + " | ".join(cells) + " |")
    vocab = []
    for label in labels:
        res = results.get(("bpe", label))
        vocab.append(f"{res['detail']['distinct_words']:,}" if res and res.get("detail") else "-")
    lines.append("| distinct words (the BPE word count: the vocabulary keeps growing) | " + " | ".join(vocab) + " |")
    return "\n".join(lines) + "\n"


SECTION = "scale"


def render_section(data: Path, sizes: list[str]) -> str:
    """The ``## scale`` section of BENCHMARKS.md: the table, the runs' dates and machine, how to read a cell."""
    results = load_results(data)
    whens = sorted(r["when"] for r in results.values() if r.get("when"))
    machines = sorted({r["machine"] for r in results.values() if r.get("machine")})
    lines = [f"## {SECTION}", "",
             "Issue 27's steps at 1, 2.5 and 10 GB on one machine, each its own process under `prlimit --as` "
             "(`python -m benchmarks.scale`; what each step measures: docs/scale.md).", "",
             f"- runs: {whens[0]} to {whens[-1]}" if whens else "- runs: none yet",
             f"- machine: {'; '.join(machines) or '-'}",
             "- a cell: wall time (process start to exit), MB/s of corpus text, tokens/s of a word2vec fit, peak "
             "RSS; *projected* cells are linear in the bytes from the two smaller sizes, not measurements", "",
             render_table(data, sizes)]
    return "\n".join(lines)


def cmd_table(args) -> int:
    sizes = args.sizes.split(",") if args.sizes else list(SIZES)
    if args.write:
        from .harness import DEFAULT_OUTPUT, merge_section

        out = Path(args.write) if args.write != "-" else DEFAULT_OUTPUT
        merge_section(out, SECTION, render_section(args.data, sizes))
        print(f"wrote the ## {SECTION} section of {out}")
        return 0
    print(render_table(args.data, sizes), end="")
    return 0


def cmd_delete(args) -> int:
    data: Path = args.data
    if not data.exists():
        print(f"{data}: nothing to delete")
        return 0
    labels = [size_label(args.size)] if args.size else None
    for path in sorted(data.iterdir()):
        if path.name == "results" and not args.all:
            continue
        if labels and not any(f"-{lab}" in path.name for lab in labels):
            continue
        print(f"removing {path}")
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    if args.all and not any(data.iterdir()):
        data.rmdir()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scale", description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help=f"data folder (default {DEFAULT_DATA})")
    sub = parser.add_subparsers(dest="command", required=True)
    for step in ("build", "encode", "bpe", "cooccurrence", "tfidf-df", "word2vec", "w2v-in-memory", "hf-bpe", "spm",
                 "gensim-w2v"):
        p = sub.add_parser(step)
        p.add_argument("--size", required=True, help="corpus size: 20MB, 1GB, 2.5GB, 10GB, ...")
        p.add_argument("--limit-gb", type=float, default=round(0.8 * _mem_total() / 1e9, 1),
                       help="prlimit --as for the step's process, in GB (default: 80%% of the memory; 0: none)")
        p.add_argument("--timeout", type=float, help="stop the step after this many seconds (recorded as stopped)")
        p.add_argument("--force", action="store_true", help="run again even if a result (ok, oom, stopped) exists")
        if step == "spm":
            p.add_argument("--cap", default="10M", help="input_sentence_size: 10M (default) or 0 (every sentence)")
        if step in ("word2vec", "w2v-in-memory", "gensim-w2v"):
            p.add_argument("--token-budget", default="0",
                           help="train on the first documents holding this many tokens (50M, ...); 0: all (default)")
        p.set_defaults(func=cmd_step, step=step)
    p = sub.add_parser("table", help="the markdown table of the results")
    p.add_argument("--sizes", help=f"comma-separated columns (default {','.join(SIZES)})")
    p.add_argument("--write", nargs="?", const="-", metavar="PATH",
                   help="merge the table as the '## scale' section of BENCHMARKS.md (or PATH) instead of printing it")
    p.set_defaults(func=cmd_table)
    p = sub.add_parser("delete", help="remove the corpora and derived files (the results are kept)")
    p.add_argument("--size", help="only this size's files")
    p.add_argument("--all", action="store_true", help="the results too")
    p.set_defaults(func=cmd_delete)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
