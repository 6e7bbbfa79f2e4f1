"""Time delta-rs (python `deltalake`) loading a table's protocol and metadata,
the peer measurement for deltalog's BenchmarkLoad (see BENCHMARKS.md).

Usage: python peer_bench.py TABLE_DIR [RUNS]

It opens the table RUNS times (after one warm-up) and prints one JSON line:
{"deltalake", "runs", "median_ms", "min_ms", "max_ms", "version"}.
delta-rs 1.x always materializes the active-file list when it loads a table
(the without_files=True flag is deprecated and ignored), so this is the
cost a delta-rs based tool pays to learn protocol and metadata.
"""

import json
import statistics
import sys
import time

import deltalake
from deltalake import DeltaTable


def load(path):
    t = DeltaTable(path)
    t.metadata()
    t.protocol()
    return t.version()


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: peer_bench.py TABLE_DIR [RUNS]")
    path = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) == 3 else 10
    version = load(path)  # warm-up (page cache, lazy init)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        load(path)
        times.append((time.perf_counter() - start) * 1000)
    print(json.dumps({"deltalake": deltalake.__version__, "runs": runs,
                      "median_ms": round(statistics.median(times), 2),
                      "min_ms": round(min(times), 2), "max_ms": round(max(times), 2),
                      "version": version}), flush=True)


if __name__ == "__main__":
    main()
