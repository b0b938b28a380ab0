"""Held-out accuracy of probabilities of relevance on TREC-8 and TREC 2003 Robust.

Protocol (:func:`bayeval.relevance.shallow_pool_split`):

- judgments = the depth-10 pool over *all* runs of the collection (every document some run ranks in its
  top 10, with its official judgment);
- systems = ten runs at depth 100 (TREC-8: ``TREC8_SYSTEMS``; Robust 2003: ten of the 17 runs
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

    python studies/relevance_heldout.py [--data PATH] [--collections trec8 robust03] [--mcmc]
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

#: the study variants' model configurations (not shipped; loaded by path)
STUDY_MODELS = Path(__file__).resolve().parent / "models"


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
        yield "rtc-default, NUTS on calibration + aggregation (posterior predictive)", "rtc-default", "mcmc"
    yield "hier-default, MAP (MacKay predictive)", "hier-default", "map"
    yield "hier-default, Laplace (posterior predictive)", "hier-default", "laplace"
    yield "rtc-intercept, MAP", str(STUDY_MODELS / "rtc-intercept.toml"), "map"
    yield "rtc-weak, MAP", str(STUDY_MODELS / "rtc-weak.toml"), "map"


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
        # NUTS on the rank coefficients (50 x 101 with dense pairwise terms) takes far too long: MAP for that
        # stage, whose posterior reflects the pseudo-comparisons' weight more than the judgments anyway
        kw = ({"draws": 500, "tune": 500, "chains": 4, "stage_methods": {"rank": "map"}} if fit == "mcmc"
              else {"draws": 250, "chains": 4})
        t0 = time.perf_counter()
        if model.startswith("hier"):
            kw.pop("stage_methods", None)
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
    confidence_study(split, runs, qrels, systems)


def confidence_study(split, runs, qrels, systems, draws: int = 2000) -> None:
    """Is P(ΔMAP < 0) trustworthy? Pairs called at confidence >= 0.95 against the sign of the true ΔMAP
    (official qrels, the same runs at depth 100)."""
    from bayeval.data.run import RunSet
    from bayeval.relevance import bayesian_confidence

    by = {r.name: r for r in runs}
    truth = RankData.build(RunSet(tuple(by[s] for s in systems)), qrels, depth=100, topics=list(split.data.topics))
    true_map = dict(zip(truth.systems, evaluate(truth, ["AP"]).mean()[0], strict=True))
    print("\n| estimator | confidence | pairs called (conf >= 0.95) | of which right | "
          "mean confidence of called | pairs called at 0.99 | right |")
    print("|---|---|---|---|---|---|---|")
    for label, model, fit in (("uniform 0.5", "uniform", "map"), ("plus-one smoothing", "smoothed", "map"),
                              ("rtc-mtc, MAP", "rtc-mtc", "map"), ("rtc-default, MAP", "rtc-default", "map"),
                              ("rtc-default, Laplace", "rtc-default", "laplace")):
        est = estimate_probabilities(split.data, model, fit=fit, p_draws=200, seed=1, draws=250, chains=4)
        bc = bayesian_confidence(split.data, est, draws=draws, plugin_method="exact", seed=1)
        f = bc.to_frame()
        true_less = np.array([true_map[a] < true_map[b] for a, b in zip(f.run_a, f.run_b, strict=True)])
        for kind, col in (("plug-in (exact)", "p_less_plugin"), ("Bayesian (MC over draws)" if est.has_draws
                                                                  else "MC at the point p", "p_less_bayes")):
            pl = f[col].to_numpy()
            conf = np.maximum(pl, 1 - pl)
            right = (pl > 0.5) == true_less
            cells = []
            for a in (0.95, 0.99):
                called = conf >= a
                cells += [f"{int(called.sum())}", f"{int((called & right).sum())}"]
            mc = conf[conf >= 0.95].mean() if (conf >= 0.95).any() else float("nan")
            print(f"| {label} | {kind} | {cells[0]} | {cells[1]} | {mc:.3f} | {cells[2]} | {cells[3]} |")
    print(f"\n({len(f)} pairs; 'right' = the sign of the official-qrels ΔMAP agrees.)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="directory holding trec8/ and robust03/")
    ap.add_argument("--collections", nargs="+", default=["trec8", "robust03"], choices=["trec8", "robust03"])
    ap.add_argument("--mcmc", action="store_true",
                    help="also fit rtc-default's calibration and aggregation with NUTS (a few minutes)")
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
