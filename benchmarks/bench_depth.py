"""Cost of p beyond the judged depth (bayeval.relevance.beyond_depth): the default model against the one before it.

``hier-depth`` is ``hier-level-shift`` plus the transform; the reference, ``hier-level-shift``, is timed alternately in
the same run on the same data, so the ratios are what the machine's load inflates least. Two cases of TREC-8's
129 runs × 50 topics with the official qrels:

- **depth 100, all 8,256 pairs** (fit + ΔMAP by the delta method): every run's top 100 is judged or the run is
  reused, the judged depth is 100 and nothing lies beyond it — the transform only looks (``judged_depth`` per topic)
  and the estimate has no draws;
- **depth 1000, E[MAP] per run** (fit + exact moments, as ``bayeval evaluate`` computes by default): ranks 101–1000
  lie beyond the judged depth; the model is refitted on the top 50's judgments for the band, and 50 draws of p carry
  the offsets, of which the exact moments combine 25 by the law of total variance.

Usage::

    python benchmarks/bench_depth.py [--data PATH] [--repeat 3] [--cases 100,1000]
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

from bayeval.data import RankData
from bayeval.expected import compare_systems, expected_measures
from bayeval.io import read_qrels, read_runs
from bayeval.relevance import estimate_probabilities

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec8"
MODELS = (str(Path(__file__).resolve().parents[1] / "studies" / "models" / "hier-level-shift.toml"), "hier-depth")


def _pairs(data, model):
    est = estimate_probabilities(data, model)
    return compare_systems(data, est, measure="AP", method="delta", progress=False).all_p_less


def _per_run(data, model):
    est = estimate_probabilities(data, model)
    return expected_measures(data, est, measures=["AP"], method="exact", progress=False).all_expected[0]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cases", default="100,1000")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    qrels = read_qrels(args.data / "qrels.txt.gz")
    runs = read_runs(sorted((args.data / "runs").iterdir()))
    print(f"TREC-8: {len(runs)} runs, official qrels; each cell the median of {args.repeat} runs, the two models "
          "alternately\n")
    print("| case | hier-level-shift | hier-depth | ratio (median of the pairwise ratios) |\n|---|---:|---:|---:|")
    for case in (int(c) for c in args.cases.split(",")):
        data = RankData.build(runs, qrels, depth=case)
        work = _pairs if case <= 100 else _per_run
        work(data, MODELS[0])  # warm-up: numba caches, imports
        times = {m: [] for m in MODELS}
        for _ in range(args.repeat):
            for m in MODELS:
                t0 = time.perf_counter()
                work(data, m)
                times[m].append(time.perf_counter() - t0)
        a, b = np.asarray(times[MODELS[0]]), np.asarray(times[MODELS[1]])
        label = "depth 100, all pairs (delta)" if case <= 100 else f"depth {case}, E[MAP] per run (exact)"
        print(f"| {label} | {np.median(a):.2f} s | {np.median(b):.2f} s | {np.median(b / a):.2f}× |", flush=True)


if __name__ == "__main__":
    main()
