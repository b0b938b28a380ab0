"""Held-out accuracy of probabilities of relevance on TREC-8 and TREC 2003 Robust (issue 3, point 6).

Protocol (:func:`bayeval.relevance.shallow_pool_split`):

- judgments = the depth-10 pool over *all* runs of the collection (every document some run ranks in its
  top 10, with its official judgment);
- systems = ten runs at depth 100 (TREC-8: the ten named in issue 3; Robust 2003: ten of the 17 runs
  spread evenly over their official MAP ranking);
- targets = every document these ten runs retrieve in their top 100 that lies outside the depth-10 pool
  but has an official judgment;
- scores = log loss, AUC, Brier, mean p against the true rate, and the log loss of predicting the constant
  true rate (the bar: a model must beat it).

Estimators: uniform 0.5 (MTC), plus-one smoothing per topic, the paper's / mtc-eval's RTC settings
(``rtc-mtc``), bayeval's RTC configurations, each RTC fitted by the fast path (MAP) and, for the default,
also with Laplace draws (posterior predictive p: the mean of 200 draws). Prints markdown tables
(docs/relevance.md holds a copy of the output).

Usage::

    python benchmarks/bench_relevance_heldout.py [--data PATH] [--collections trec8 robust03] [--mcmc]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from bayeval.data import RankData
from bayeval.io import read_qrels, read_runs
from bayeval.measures import evaluate
from bayeval.relevance import estimate_probabilities, shallow_pool_split
from bayeval.relevance.diagnostics import heldout_elpd

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
TREC8_SYSTEMS = ("INQ601", "INQ602", "Sab8A1", "Sab8A2", "ok8alx", "ok8amxc", "pir9Aatd", "weaver1", "att99atde",
                 "fub99a")
GOALS = "goals: log loss < constant-rate log loss, AUC >= 0.75, mean p within 25% of the true rate"


def _robust_systems(runs, qrels, k: int = 10) -> tuple[str, ...]:
    """k runs spread evenly over the official MAP ranking (full qrels, full depth)."""
    data = RankData.build(runs, qrels)
    maps = evaluate(data, ["AP"]).mean()[0]
    order = [data.systems[i] for i in np.argsort(-maps, kind="stable")]
    idx = np.linspace(0, len(order) - 1, k).round().astype(int)
    return tuple(order[i] for i in idx)


def _estimators(mcmc: bool):
    yield "uniform 0.5", "uniform", "map"
    yield "plus-one smoothing", "smoothed", "map"
    yield "rtc-mtc (paper / mtc-eval settings), MAP", "rtc-mtc", "map"
    yield "rtc-default, MAP", "rtc-default", "map"
    yield "rtc-default, Laplace (posterior predictive)", "rtc-default", "laplace"
    if mcmc:
        yield "rtc-default, NUTS (posterior predictive)", "rtc-default", "mcmc"
    yield "rtc-intercept, MAP", "rtc-intercept", "map"
    yield "rtc-weak, MAP", "rtc-weak", "map"


def study(name: str, runs, qrels, systems, mcmc: bool) -> None:
    t0 = time.perf_counter()
    split = shallow_pool_split(runs, qrels, systems, judged_depth=10, depth=100)
    data = split.data
    n_j = sum(int(tr.judged.sum()) for tr in data)
    y_all = np.concatenate(split.labels)
    print(f"\n### {name}: {len(systems)} runs x {len(data)} topics at depth 100, depth-10 pool of all {len(runs)} runs")
    print(f"\nruns: {', '.join(systems)}  ")
    print(f"judged (depth-10 pool): {n_j} documents; held-out targets: {split.n_targets} documents, "
          f"{int(y_all.sum())} relevant (rate {y_all.mean():.4f}); split built in {time.perf_counter() - t0:.1f} s\n")
    print("| estimator | log loss | const. log loss | AUC | Brier | mean p | true rate | mean p / rate | ELPD/doc "
          "| goals met | fit s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for label, model, fit in _estimators(mcmc):
        kw = {"draws": 500, "tune": 500, "chains": 2} if fit == "mcmc" else {"draws": 250, "chains": 4}
        t0 = time.perf_counter()
        est = estimate_probabilities(data, model, fit=fit, p_draws=200, seed=1, **kw)
        dt = time.perf_counter() - t0
        y, p = split.gather(est.p)
        s = split.score(est.p)
        elpd = heldout_elpd(y, split.gather(est.draws)[1] if est.has_draws else p) / len(y)
        ok = (s["log_loss"] < s["base_log_loss"], s["auc"] >= 0.75, abs(s["mean_p_ratio"] - 1) <= 0.25)
        goals = "/".join("yes" if g else "no" for g in ok)
        print(f"| {label} | {s['log_loss']:.4f} | {s['base_log_loss']:.4f} | {s['auc']:.3f} | {s['brier']:.4f} | "
              f"{s['mean_p']:.4f} | {s['rate']:.4f} | {s['mean_p_ratio']:.2f} | {elpd:.4f} | {goals} | {dt:.1f} |")
    print(f"\n({GOALS}; 'goals met' lists the three in that order. The constant is the true held-out rate, "
          "which no estimator knows.)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="directory holding trec8/ and robust03/")
    ap.add_argument("--collections", nargs="+", default=["trec8", "robust03"], choices=["trec8", "robust03"])
    ap.add_argument("--mcmc", action="store_true", help="also fit rtc-default with NUTS (slow)")
    args = ap.parse_args(argv)
    for c in args.collections:
        d = args.data / c
        t0 = time.perf_counter()
        qrels = read_qrels(d / "qrels.txt.gz")
        runs = read_runs(sorted((d / "runs").glob("input.*.gz")))
        print(f"\n<!-- {c}: read {len(runs)} runs in {time.perf_counter() - t0:.1f} s -->")
        systems = TREC8_SYSTEMS if c == "trec8" else _robust_systems(runs, qrels)
        study("TREC-8 ad hoc" if c == "trec8" else "TREC 2003 Robust", runs, qrels, systems, args.mcmc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
