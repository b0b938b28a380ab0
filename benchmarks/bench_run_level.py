"""Cost of the held-out run levels, shifts and the reuse prior (bayeval.relevance.run_level, run_shift,
reuse_prior) on the posterior draws of p, with and without a top-up.

Both act on the draws only (the fit is the configuration's base fit), so the cost is that of
``HierarchicalFit.probabilities(draws=...)`` with and without them on the same fit. Data: the shape of
the robustness trials (the ten TREC-8 runs of docs/relevance.md at depth 100, 50 topics, judged by the
depth-10 pool of the first two, so that eight runs are held out and their own documents are the targets), fitted
once by the fast path's Laplace (``hier-default``). Reference: the draws
of ``hier-default`` (no level, no shift) on the same fit, and the Laplace fit itself, timed in the same run; the
ratios are what load inflates least.

The reuse prior is timed as configured in ``--reuse`` (default the default model), pure and with a top-up of one
document a topic of each held-out run (:func:`bayeval.selection.topup.draw_topup`, judged by the qrels).

Usage::

    python benchmarks/bench_run_level.py [--data PATH] [--repeat 3] [--draws 200] [--reuse MODEL]
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np
from bench_relevance import TREC8_SYSTEMS, _best  # the ten runs and the timer of the RTC benchmark (same folder)

from bayeval.data import RankData
from bayeval.data.coverage import contributing_runs
from bayeval.data.qrels import pool_qrels
from bayeval.defaults import DEFAULT_MODEL
from bayeval.io import read_qrels, read_runs
from bayeval.relevance import HierarchicalEstimator, load_config
from bayeval.relevance.topup import TopUpSample
from bayeval.selection.topup import draw_topup

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec8"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--reuse", default=DEFAULT_MODEL, help="configuration whose reuse prior is timed")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    qrels = read_qrels(args.data / "qrels.txt.gz")
    runs = read_runs(sorted((args.data / "runs").iterdir()))
    ten = runs.select(list(TREC8_SYSTEMS))
    data = RankData.build(ten, pool_qrels(ten.select(list(TREC8_SYSTEMS)[:2]), qrels, 10), depth=100)
    est = HierarchicalEstimator("hier-default")
    lap, _, fit = _best(lambda: est.fit(data, "laplace", seed=1, draws=1000, chains=4), 1)
    print(f"TREC-8: {len(data.systems)} runs × {len(data)} topics, depth 100, judged: depth-10 pool of 2\n")
    print("| draws of p | time | ratio |\n|---|---:|---:|")
    print(f"| the Laplace fit (hier-default), for scale | {lap:.2f} s | |")
    ref, _, _ = _best(lambda: fit.probabilities(draws=args.draws, seed=2), args.repeat)
    print(f"| reference: hier-default, {args.draws} draws | {ref:.2f} s | 1.00× |")
    for label, kw in (("run level (run_level_sd = 1)", {"run_level_sd": 1.0}),
                      ("run shift (run_shift_sd = 2)", {"run_shift_sd": 2.0}),
                      ("level and shift (1, 2)", {"run_level_sd": 1.0, "run_shift_sd": 2.0})):
        f = fit.with_held_out_runs(**kw)
        best, _, _ = _best(lambda f=f: f.probabilities(draws=args.draws, seed=2), args.repeat)
        print(f"| {label} | {best:.2f} s | {best / ref:.2f}× (+{best - ref:.2f} s; "
              f"{(best - ref) / lap:.1%} of the fit) |", flush=True)
    h = load_config(args.reuse).held_out_runs
    reuse = {k: getattr(h, k) for k in ("reuse_mean", "reuse_common_sd", "reuse_run_sd", "reuse_run_df",
                                        "reuse_slope_mean", "reuse_slope_sd")}
    f = fit.with_held_out_runs(**reuse)
    held = [n for k, n in enumerate(data.systems) if k not in set(contributing_runs(data).tolist())]
    s = draw_topup(data, held, 1, depth=100, rng=np.random.default_rng(0))
    sample = TopUpSample(s.frame.assign(grade=[max(qrels.grade_of(t, d) or 0, 0)
                                               for t, d in zip(s.frame.topic, s.frame.docno, strict=True)]))
    for label, kw in ((f"reuse prior of {args.reuse}", {}),
                      (f"the same with a top-up ({len(sample.frame)} judged documents)", {"topup": sample})):
        best, _, _ = _best(lambda kw=kw: f.probabilities(draws=args.draws, seed=2, **kw), args.repeat)
        print(f"| {label} | {best:.2f} s | {best / ref:.2f}× (+{best - ref:.2f} s; "
              f"{(best - ref) / lap:.1%} of the fit) |", flush=True)


if __name__ == "__main__":
    main()
