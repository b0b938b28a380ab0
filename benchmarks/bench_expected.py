"""Time all-pairs ΔAP/ΔMAP on TREC-8 against the naive O(n^3) formula.

Every configuration runs in a fresh Python process, so the time includes importing bayeval and
loading (or, with ``--cold``, compiling) the numba kernels: what a user waits for. Reading the run
files is timed apart and not counted. For each configuration the naive reference -- the papers'
ΔAP sums evaluated literally, O(n^3) in the n documents of the two rankings, compiled with numba --
is timed on a few random (pair, topic) cells of the same data and extrapolated to all of them.

Usage::

    python benchmarks/bench_expected.py                  # the default configurations
    python benchmarks/bench_expected.py --cold           # clear the numba cache before each (compile time)
    python benchmarks/bench_expected.py --data PATH --configs 100:paper 100:delta

Configurations are ``DEPTH:METHOD`` (DEPTH an integer or ``full``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec8"
DEFAULT_CONFIGS = ["100:paper", "100:delta", "full:paper", "full:delta", "100:exact"]
LIMITS = {"100:paper": 10, "100:delta": 10, "full:paper": 120, "full:delta": 120, "100:exact": 120}


def _load(data_dir: Path, depth):
    from bayeval.data import RankData
    from bayeval.io import read_qrels, read_runs

    runs = read_runs(data_dir / "runs")
    qrels = read_qrels(data_dir / "qrels.txt.gz")
    return RankData.build(runs, qrels, depth=depth)


def _naive_per_cell(data, n_cells: int, seed: int) -> tuple[float, float]:
    """Mean seconds of the naive O(n^3) ΔAP moments per (pair, topic), and the mean n it saw."""
    from bayeval.expected.reference import paper_moments_delta_naive

    paper_moments_delta_naive(np.zeros(3), np.zeros(3), np.full(3, 0.5))  # compile outside the timing
    rng = np.random.default_rng(seed)
    n_sys = len(data.systems)
    total, sizes = 0.0, []
    for _ in range(n_cells):
        tr = data[int(rng.integers(len(data)))]
        a, b = rng.choice(n_sys, size=2, replace=False)
        p = tr.probabilities(None, 0.5)
        r = tr.ranks
        docs = np.flatnonzero((r[:, a] > 0) | (r[:, b] > 0))  # c_ij = 0 for the other documents
        wa = np.where(r[docs, a] > 0, 1.0 / np.maximum(r[docs, a], 1), 0.0)
        wb = np.where(r[docs, b] > 0, 1.0 / np.maximum(r[docs, b], 1), 0.0)
        pd_ = np.ascontiguousarray(p[docs])
        start = time.perf_counter()
        paper_moments_delta_naive(wa, wb, pd_)
        total += time.perf_counter() - start
        sizes.append(len(docs))
    return total / n_cells, float(np.mean(sizes))


def run_one(data_dir: Path, config: str, naive_cells: int) -> dict:
    t0 = time.perf_counter()
    from bayeval.expected import compare_systems

    depth_s, method = config.split(":")
    depth = None if depth_s == "full" else int(depth_s)
    t_import = time.perf_counter() - t0
    t0 = time.perf_counter()
    data = _load(data_dir, depth)
    t_load = time.perf_counter() - t0
    t0 = time.perf_counter()
    cmp = compare_systems(data, default_p=0.5, method=method, progress=False)
    t_pairs = time.perf_counter() - t0
    n_pairs, n_topics = cmp.delta_expected.shape
    naive, mean_n = _naive_per_cell(data, naive_cells, seed=0)
    naive_total = naive * n_pairs * n_topics
    return {"config": config, "pairs": n_pairs, "topics": n_topics, "seconds": t_import + t_pairs,
            "import_s": t_import, "load_s": t_load, "naive_per_cell_s": naive, "naive_mean_n": mean_n,
            "naive_extrapolated_s": naive_total, "ratio": naive_total / (t_import + t_pairs)}


def _clear_numba_cache() -> None:
    cache = Path(__file__).resolve().parents[1] / "bayeval" / "expected" / "__pycache__"
    for f in list(cache.glob("*.nbi")) + list(cache.glob("*.nbc")):
        f.unlink()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="TREC-8 directory (runs/, qrels.txt.gz)")
    parser.add_argument("--configs", nargs="+", default=DEFAULT_CONFIGS)
    parser.add_argument("--naive-cells", type=int, default=0,
                        help="(pair, topic) cells for the naive reference (default: 20 at depth 100, 3 at full)")
    parser.add_argument("--cold", action="store_true",
                        help="delete the numba cache before each configuration (counts compile time)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        cells = args.naive_cells or (3 if args.one.startswith("full") else 20)
        print(json.dumps(run_one(args.data, args.one, cells)))
        return 0
    if not (args.data / "runs").is_dir():
        print(f"no TREC-8 data at {args.data}", file=sys.stderr)
        return 2
    print(f"TREC-8 {args.data}: all pairs x 50 topics, default p = 0.5 for unjudged documents, "
          f"{'cold (compiling)' if args.cold else 'warm numba cache'}")
    print(f"{'config':<12} {'pairs':>6} {'time s':>8} {'limit':>6} {'load s':>7} {'naive n':>8} "
          f"{'naive/cell ms':>14} {'naive total s':>14} {'speed-up':>9}")
    worst = 0
    for config in args.configs:
        if args.cold:
            _clear_numba_cache()
        cmd = [sys.executable, __file__, "--data", str(args.data), "--one", config]
        if args.naive_cells:
            cmd += ["--naive-cells", str(args.naive_cells)]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        limit = LIMITS.get(config)
        ok = "" if limit is None or r["seconds"] <= limit else "  OVER LIMIT"
        worst |= bool(ok)
        print(f"{config:<12} {r['pairs']:>6} {r['seconds']:>8.2f} {limit or '':>6} {r['load_s']:>7.1f} "
              f"{r['naive_mean_n']:>8.0f} {1e3 * r['naive_per_cell_s']:>14.2f} {r['naive_extrapolated_s']:>14.0f} "
              f"{r['ratio']:>8.0f}x{ok}")
    return 1 if worst else 0


if __name__ == "__main__":
    raise SystemExit(main())
