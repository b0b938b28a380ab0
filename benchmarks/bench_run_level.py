"""Cost of the held-out run levels and shifts (bayeval.relevance.run_level, run_shift) on the posterior draws of p.

Both act on the draws only (the fit is the configuration's base fit), so the cost is that of
``HierarchicalFit.probabilities(draws=...)`` with and without them on the same fit. Data: all TREC-8 runs × 50
topics at depth 100, judged by a depth-10 pool of ten runs (so that most runs are held out and their own
documents are the levels' targets). Reference: the draws of ``hier-default`` (no level, no shift) on the same
fit, timed in the same run; the ratio is what load inflates least.

Usage::

    python benchmarks/bench_run_level.py [--data PATH] [--repeat 3] [--draws 200]
"""

from __future__ import annotations

import argparse
import dataclasses
import time
import warnings
from pathlib import Path

from bench_relevance import _best  # the timer of the RTC benchmark (same folder)

from bayeval.data import RankData
from bayeval.data.qrels import pool_qrels
from bayeval.io import read_qrels, read_runs
from bayeval.relevance import HierarchicalEstimator

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec8"


def _with(fit, **hier):
    h = dataclasses.replace(fit.config.hierarchy, **hier)
    return dataclasses.replace(fit, config=dataclasses.replace(fit.config, hierarchy=h))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--draws", type=int, default=200)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    qrels = read_qrels(args.data / "qrels.txt.gz")
    runs = read_runs(sorted((args.data / "runs").iterdir()))
    judged = pool_qrels(runs.select(list(runs.names)[:10]), qrels, 10)
    data = RankData.build(runs, judged, depth=100)
    t0 = time.perf_counter()
    fit = HierarchicalEstimator("hier-default").fit(data, "laplace", seed=1, draws=400, chains=1)
    print(f"TREC-8: {len(data.systems)} runs × {len(data)} topics, depth 100, judged: depth-10 pool of 10 runs; "
          f"Laplace fit {time.perf_counter() - t0:.2f} s\n")
    print("| draws of p | time | ratio |\n|---|---:|---:|")
    ref, _, _ = _best(lambda: fit.probabilities(draws=args.draws, seed=2), args.repeat)
    print(f"| reference: hier-default, {args.draws} draws | {ref:.2f} s | 1.00× |")
    for label, kw in (("run level (run_level_sd = 1)", {"run_level_sd": 1.0}),
                      ("run shift (run_shift_sd = 2)", {"run_shift_sd": 2.0}),
                      ("level and shift (1, 2)", {"run_level_sd": 1.0, "run_shift_sd": 2.0})):
        f = _with(fit, **kw)
        best, _, _ = _best(lambda f=f: f.probabilities(draws=args.draws, seed=2), args.repeat)
        print(f"| {label} | {best:.2f} s | {best / ref:.2f}× (+{best - ref:.2f} s) |")


if __name__ == "__main__":
    main()
