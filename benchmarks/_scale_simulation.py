"""The simulation behind the 1 TB estimate of docs/scale.md: many small partitions of a real corpus, counted and
merged by the engine's tree on this machine, and the measured growth extrapolated.

``python -m benchmarks._scale_simulation [--dataset prose_mix] [--json]`` prints, for partitions of 16 KiB to
4 MiB of the dataset: the distinct words of a partition (the mean), the bytes of its pickled partial count (what a
worker sends up the tree), the time to count and to merge per distinct word; it fits Heaps' law
``distinct = K * bytes ** beta`` to them, checks that 2,000+ partitions merged by the tree give exactly the
streamed count, and extrapolates partitions, tree depth, transfer and client memory to 1 TB of text. Not a
benchmark (no reference side); the harness does not load it (its name starts with ``_``).
"""

from __future__ import annotations

import argparse
import json
import math
import pickle
import statistics
import sys
import time

import numpy as np

MiB = 1 << 20
TB = 10 ** 12


def _heaps(points: list[tuple[float, float]]) -> tuple[float, float]:
    """Least-squares fit of ``log d = log K + beta log n``."""
    x = np.log([p[0] for p in points])
    y = np.log([p[1] for p in points])
    beta, logk = np.polyfit(x, y, 1)
    return float(math.exp(logk)), float(beta)


def simulate(dataset: str = "prose_mix") -> dict:
    from tokembed.corpus import Corpus
    from tokembed.engine import CountDocuments, LocalEngine, merge_counts, tree_levels
    from tokembed.plugins.bpe.tokenizer import BPETokenizer

    corpus = Corpus.dataset(dataset)
    total_bytes = corpus.size_bytes()
    tok = BPETokenizer(vocab_size=8000)  # its count: the normalizer-free, whitespace-split word count BPE uses
    t0 = time.perf_counter()
    whole = tok.partial_counts(corpus)
    stream_s = time.perf_counter() - t0
    task = CountDocuments(tok.partial_counts, corpus)
    rows = []
    points = []
    for kib in (16, 64, 256, 1024, 4096):
        parts = corpus.partitions(kib * 1024)
        sample = parts[:: max(1, len(parts) // 24)][:24]  # about 24 partitions spread over the corpus
        distinct, pickled, count_s, merge_s, words_in = [], [], [], [], 0
        partials = []
        for part in sample:
            t0 = time.perf_counter()
            counted = task(part)
            count_s.append(time.perf_counter() - t0)
            distinct.append(len(counted.value))
            pickled.append(len(pickle.dumps(counted.value, protocol=pickle.HIGHEST_PROTOCOL)))
            partials.append(counted.value)
        for a, b in zip(partials[0::2], partials[1::2]):
            t0 = time.perf_counter()
            merge_counts(a, b)
            merge_s.append(time.perf_counter() - t0)
            words_in += len(a) + len(b)
        mean_bytes = statistics.mean(p.nbytes for p in sample)
        rows.append({
            "partition_kib": kib, "partitions": len(parts), "mean_partition_bytes": round(mean_bytes),
            "distinct_words": round(statistics.mean(distinct)),
            "pickled_bytes_per_word": round(sum(pickled) / sum(distinct), 1),
            "count_MB_per_s": round(sum(p.nbytes for p in sample) / sum(count_s) / 1e6, 2),
            "merge_ns_per_input_word": round(sum(merge_s) / max(1, words_in) * 1e9, 1),
        })
        points.append((mean_bytes, statistics.mean(distinct)))
    points.append((total_bytes, len(whole)))
    k, beta = _heaps(points)

    # the tree over many small partitions equals the streamed count, bit for bit
    engine = LocalEngine(workers=2, partition_mb=total_bytes / MiB / 2048)
    t0 = time.perf_counter()
    merged = engine.count(tok.partial_counts, corpus)
    tree_s = time.perf_counter() - t0
    stats = engine.last_stats
    assert merged == whole, "the tree's merge differs from the streamed count"

    # extrapolation to 1 TB with 128 MiB partitions
    part_bytes = 128 * MiB
    n_parts = math.ceil(TB / part_bytes)
    fan_in = 4
    depth = len(tree_levels(n_parts, fan_in))
    bytes_per_word = statistics.mean(r["pickled_bytes_per_word"] for r in rows[-2:])
    merge_ns = statistics.mean(r["merge_ns_per_input_word"] for r in rows[-2:])
    levels = []
    width, node_bytes = n_parts, part_bytes
    transfer = 0.0
    merge_seconds = 0.0
    for level in range(depth + 1):
        words = k * node_bytes ** beta
        size = words * bytes_per_word
        levels.append({"level": level, "nodes": width, "text_per_node_GB": round(node_bytes / 1e9, 3),
                       "distinct_words_per_node": round(words), "partial_count_MB": round(size / 1e6, 1)})
        if level < depth:
            transfer += width * size  # every node moves once, to the worker that merges it (worst case)
            merge_seconds += width * words * merge_ns / 1e9
        width = math.ceil(width / fan_in)
        node_bytes = min(TB, node_bytes * fan_in)
    root_words = k * TB ** beta
    return {
        "dataset": dataset, "bytes": total_bytes, "distinct_words": len(whole),
        "stream_count_seconds": round(stream_s, 2),
        "partition_sizes": rows,
        "heaps": {"K": round(k, 3), "beta": round(beta, 4)},
        "tree_check": {"partitions": stats.partitions, "depth": stats.depth, "seconds": round(tree_s, 2),
                       "count_task_seconds": round(stats.count_seconds, 2),
                       "merge_task_seconds": round(stats.merge_seconds, 2), "equal_to_stream": True},
        "one_terabyte": {
            "partition_MiB": 128, "partitions": n_parts, "fan_in": fan_in, "merge_depth": depth,
            "bytes_per_distinct_word": bytes_per_word, "levels": levels,
            "tree_transfer_GB": round(transfer / 1e9, 1),
            "merge_cpu_seconds": round(merge_seconds),
            "distinct_words_at_root": round(root_words),
            "client_receives_MB": round(root_words * bytes_per_word / 1e6),
        },
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks._scale_simulation")
    parser.add_argument("--dataset", default="prose_mix")
    parser.add_argument("--json", action="store_true", help="print the whole result as JSON")
    args = parser.parse_args(argv)
    result = simulate(args.dataset)
    if args.json:
        print(json.dumps(result, indent=1))
        return 0
    print(f"{result['dataset']}: {result['bytes']:,} bytes, {result['distinct_words']:,} distinct words "
          f"(streamed count {result['stream_count_seconds']} s)")
    for r in result["partition_sizes"]:
        print(f"  {r['partition_kib']:>5} KiB partitions ({r['partitions']:>5}): {r['distinct_words']:>7,} distinct "
              f"words, {r['pickled_bytes_per_word']} B/word pickled, count {r['count_MB_per_s']} MB/s, merge "
              f"{r['merge_ns_per_input_word']} ns/input word")
    h = result["heaps"]
    print(f"  Heaps' law: distinct = {h['K']} * bytes ** {h['beta']}")
    t = result["tree_check"]
    print(f"  tree over {t['partitions']:,} partitions (depth {t['depth']}): {t['seconds']} s, count tasks "
          f"{t['count_task_seconds']} s, merge tasks {t['merge_task_seconds']} s; equal to the streamed count")
    o = result["one_terabyte"]
    print(f"1 TB in {o['partition_MiB']} MiB partitions: {o['partitions']:,} partitions, fan-in {o['fan_in']}, "
          f"merge depth {o['merge_depth']}, {o['bytes_per_distinct_word']} B per distinct word")
    for lv in o["levels"]:
        print(f"  level {lv['level']}: {lv['nodes']:>5} nodes of {lv['text_per_node_GB']} GB text, "
              f"{lv['distinct_words_per_node']:,} distinct words, {lv['partial_count_MB']} MB each")
    print(f"  moved up the tree: {o['tree_transfer_GB']} GB; merge CPU {o['merge_cpu_seconds']} s in all; the client "
          f"receives {o['client_receives_MB']} MB ({o['distinct_words_at_root']:,} distinct words)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
