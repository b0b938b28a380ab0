"""Speed of the hierarchical relevance model (docs/calibration.md), each against a reference timed in the same run.

A. Fast path (``hier-default``, MAP: Laplace marginal likelihood over the hyperparameters, Newton for the
   latent effects, then p of every document) on all 129 TREC-8 runs × 50 topics at depth 100 with the
   official judgments. Goal ≤ 5 s; the CPU time of one more call is printed beside the wall time.
   Reference: the fast-path RTC chain it builds on (``rtc-default``, MAP),
   timed in the same run (wall, and the CPU time of one more call); the hierarchical time includes it.
B. NUTS on the full hierarchical model (half-normal hyperpriors, non-centred effects) on the 10-run held-out
   protocol (depth-10 pool of all 129 runs as judgments, the ten runs of docs/relevance.md at depth 100):
   4 chains × 1000 tuning + 1000 draws with ``--nuts-sampler`` (default nutpie: the optional dependency
   ``bayeval[nutpie]``; ``pymc`` for PyMC's own sampler), ``--cores`` processes/threads for the chains; the
   time includes nutpie's numba compilation. Goal ≤ 5 minutes with r-hat < 1.01 and no divergences.
   Reference: the fast path's Laplace fit of the same model (importance-weighted hyperparameter points).

Times are the best of ``--repeat`` runs (the machine is shared); the first, cold call is printed too.

Usage::

    python benchmarks/bench_hierarchical.py [--data PATH] [--repeat 3] [--skip-nuts] [--nuts-sampler nutpie] \
        [--cores 1] [--configs hier-default,studies/models/hier-crossfit-slope.toml]
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import arviz as az
import numpy as np
from bench_relevance import TREC8_SYSTEMS, _best  # the ten runs and the timer of the RTC benchmark (same folder)

from bayeval.data import RankData
from bayeval.io import read_qrels, read_runs
from bayeval.methods import NUTS_SAMPLERS
from bayeval.relevance import HierarchicalEstimator, RTCEstimator, shallow_pool_split

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec8"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-nuts", action="store_true")
    ap.add_argument("--configs", default="hier-default",
                    help="hierarchical configurations timed in A (comma-separated)")
    ap.add_argument("--cores", type=int, default=1)
    ap.add_argument("--nuts-sampler", choices=NUTS_SAMPLERS, default="nutpie")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    qrels = read_qrels(args.data / "qrels.txt.gz")
    runs = read_runs(sorted((args.data / "runs").iterdir()))
    data = RankData.build(runs, qrels, depth=100)
    print(f"TREC-8: {len(data.systems)} runs × {len(data)} topics, depth 100, official judgments\n")
    print("| what | time | notes |\n|---|---:|---|")
    def rtc():
        return RTCEstimator("rtc-default").fit(data, "map").probabilities(draws=None)

    ref, ref_first, _ = _best(rtc, args.repeat)
    c0 = time.process_time()
    rtc()
    ref_cpu = time.process_time() - c0
    print(f"| reference: fast-path RTC chain (rtc-default, MAP) + p | {ref:.2f} s (cold {ref_first:.2f} s; "
          f"CPU {ref_cpu:.2f} s) | |")

    for config in args.configs.split(","):
        def hier(config=config):
            fit = HierarchicalEstimator(config).fit(data, "map")
            return fit, fit.probabilities(draws=None)

        best, first, (fit, est) = _best(hier, args.repeat)
        c0 = time.process_time()  # CPU time of one more call: what load on a shared machine inflates least
        hier()
        cpu = time.process_time() - c0
        h = fit.fit.mode.x[-3:]
        n_unj = sum(int((~j).sum()) for j in est.judged)
        print(f"| **fast path, {config}: fit + p of {n_unj:,} unjudged docs** | **{best:.2f} s** (cold {first:.2f} s; "
              f"CPU {cpu:.2f} s) | {best / ref:.2f}× the RTC chain (CPU {cpu / ref_cpu:.2f}×); {len(fit.model.y):,} "
              f"judged rows; τ, σ0, σ1 = "
              f"{h[0]:.2f}, {h[1]:.2f}, {h[2]:.2f}; goal ≤ 5 s: {'met' if best <= 5 else 'missed'} "
              f"(CPU: {'met' if cpu <= 5 else 'missed'}) |")

    if args.skip_nuts:
        return
    split = shallow_pool_split(runs, qrels, TREC8_SYSTEMS, judged_depth=10, depth=100)
    small = split.data
    est = HierarchicalEstimator("hier-default")
    lap, lap_first, lfit = _best(lambda: est.fit(small, "laplace", seed=1, draws=1000, chains=4), 1)
    print(f"| reference: fast path Laplace (64 hyperparameter points × conditional Laplace), 10-run protocol | "
          f"{lap:.2f} s | {len(lfit.model.y):,} judged rows |")
    t0 = time.perf_counter()
    nfit = est.fit(small, "mcmc", seed=1, draws=1000, tune=1000, chains=4, cores=args.cores,
                   nuts_sampler=args.nuts_sampler)
    nuts = time.perf_counter() - t0
    rh = az.rhat(nfit.fit.core.posterior)  # unrounded (summary() rounds to 0.01)
    worst = max(rh.data_vars, key=lambda v: float(rh[v].max()))
    rhat = float(rh[worst].max())
    ess = min(float(v.min()) for v in az.ess(nfit.fit.core.posterior).data_vars.values())
    div = nfit.fit.divergences()
    pl = np.concatenate([p[~j] for p, j in zip(lfit.probabilities(draws=400, seed=1).p, small_judged(small),
                                               strict=True)])
    pn = np.concatenate([p[~j] for p, j in zip(nfit.probabilities(draws=400, seed=1).p, small_judged(small),
                                               strict=True)])
    ok = nuts <= 300 and rhat < 1.01 and div == 0
    print(f"| **NUTS ({args.nuts_sampler}, {args.cores} core(s)), hier-default, 4 × (1000 + 1000), 10-run protocol** | "
          f"**{nuts:.0f} s** | "
          f"{nuts / lap:.0f}× Laplace; max r-hat {rhat:.4f} ({worst}), min bulk ESS {ess:.0f}, divergences {div}; "
          f"mean p of unjudged docs {pn.mean():.4f} (Laplace {pl.mean():.4f}), max |Δp| {np.abs(pn - pl).max():.3f}; "
          f"goal ≤ 300 s, r-hat < 1.01, no divergences: {'met' if ok else 'missed'} |")


def small_judged(data):
    return [np.asarray(tr.judged) for tr in data]


if __name__ == "__main__":
    main()
