"""Relevance models end to end, as in a notebook: fit, diagnose, score on held-out judgments, compare priors,
and turn the posterior into Bayesian confidence in system comparisons.

Data: the shallow-pool held-out protocol (docs/relevance.md) — judgments are a depth-10 pool of all runs, the
systems are ten runs at depth 100, and the held-out targets are their top-100 documents outside the pool that
the full qrels judge.
By default a synthetic collection generated on the spot (no downloads, ~30 s); ``--trec8`` uses TREC-8
from ``../shared/data/trec8`` (~2 min).

    python examples/relevance_models.py
    python examples/relevance_models.py --trec8 --plot reliability.png
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from bayeval.relevance import (
    RTCEstimator,
    bayesian_confidence,
    compare_priors,
    estimate_probabilities,
    reliability_table,
    shallow_pool_split,
)
from bayeval.relevance.diagnostics import heldout_elpd

TREC8 = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec8"
TREC8_SYSTEMS = ["INQ601", "INQ602", "Sab8A1", "Sab8A2", "ok8alx", "ok8amxc", "pir9Aatd", "weaver1", "att99atde",
                 "fub99a"]


def load(trec8: bool):
    if trec8:
        from bayeval.io import read_qrels, read_runs
        runs = read_runs(sorted((TREC8 / "runs").glob("input.*.gz")))
        return runs, read_qrels(TREC8 / "qrels.txt.gz"), TREC8_SYSTEMS
    from bayeval.synthetic import make_collection
    col = make_collection(n_topics=20, n_systems=10, n_docs=400, depth=100, judged_depth=10, seed=7)
    return col.runs, col.qrels, None  # col.qrels: every document judged (the truth)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trec8", action="store_true", help="use TREC-8 instead of a synthetic collection")
    ap.add_argument("--plot", metavar="PNG", help="save a reliability diagram")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)

    runs, qrels, systems = load(args.trec8)
    split = shallow_pool_split(runs, qrels, systems, judged_depth=10, depth=100)
    data = split.data
    print(f"{len(data.systems)} systems x {len(data)} topics; {split.n_targets} held-out judged documents\n")

    # 1. the fast path: three stages by Newton/IRLS, no PyMC ------------------------------------------------
    rtc = RTCEstimator("rtc-default")
    fit_map = rtc.fit(data, "map")
    print("aggregation weights (MAP, Laplace sd):")
    print(fit_map.aggregation.summary().round(3).to_string(), "\n")

    # 2. the full posterior of the aggregation stage by NUTS (the other stages at their MAP) -----------------
    fit_nuts = rtc.fit(data, "map", stage_methods={"aggregation": "mcmc"}, draws=500, tune=500, chains=4,
                       seed=args.seed)
    agg = fit_nuts.aggregation
    print("az.summary of the aggregation weights (NUTS):")
    print(agg.summary().round(3).to_string())
    print(f"max r-hat {agg.rhat().max():.4f}, min bulk ESS {agg.ess().min():.0f}, divergences {agg.divergences()}\n")
    # agg.idata is an ArviZ InferenceData: az.plot_trace(agg.idata), az.plot_forest(agg.idata), ...

    # 3. held-out accuracy: uniform, plus-one smoothing, RTC (MAP) and its posterior predictive ---------------
    ests = {"uniform 0.5": estimate_probabilities(data, "uniform"),
            "plus-one": estimate_probabilities(data, "smoothed"),
            "rtc MAP": fit_map.probabilities(),
            "rtc NUTS": fit_nuts.probabilities(draws=200, seed=args.seed)}
    print(f"{'estimator':<12} {'log loss':>9} {'constant':>9} {'AUC':>6} {'Brier':>7} {'mean p':>7} {'rate':>7} "
          f"{'ELPD':>9}")
    for name, est in ests.items():
        s = split.score(est.p)
        y, p = split.gather(est.p)
        elpd = heldout_elpd(y, split.gather(est.draws)[1] if est.has_draws else p)
        print(f"{name:<12} {s['log_loss']:9.4f} {s['base_log_loss']:9.4f} {s['auc']:6.3f} {s['brier']:7.4f} "
              f"{s['mean_p']:7.4f} {s['rate']:7.4f} {elpd:9.1f}")

    # 4. reliability: predicted p against the observed rate, in equal-count bins ------------------------------
    y, p = split.gather(ests["rtc MAP"].p)
    print("\nreliability of rtc MAP (held-out):")
    print(reliability_table(y, p, bins=8).round(4).to_string(index=False))
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from bayeval.relevance import reliability_diagram
        fig, ax = plt.subplots(figsize=(4.5, 4.5))
        reliability_diagram(y, p, bins=8, ax=ax, label="rtc-default (MAP)")
        reliability_diagram(*split.gather(estimate_probabilities(data, "rtc-mtc").p), bins=8, ax=ax,
                            label="rtc-mtc (paper)")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        print(f"wrote {args.plot}")

    # 5. priors side by side (configurations from models/), Laplace posterior for the ELPD -------------------
    print("\nprior comparison (held-out):")
    study = Path(__file__).resolve().parents[1] / "studies" / "models"  # the prior study's variants, not shipped
    configs = ["rtc-default", "rtc-mtc", str(study / "rtc-weak.toml"), str(study / "rtc-intercept.toml")]
    print(compare_priors(split, configs, seed=args.seed).summary())

    # 6. Bayesian confidence in ΔMAP: Monte Carlo over posterior draws of p, next to the plug-in -------------
    bc = bayesian_confidence(data, ests["rtc NUTS"], draws=2000, seed=args.seed)
    print("\n" + bc.summary())
    frame = bc.to_frame()
    worst = frame.iloc[np.argsort(-np.abs(frame.p_less_bayes - frame.p_less_plugin).to_numpy())[:5]]
    print(worst.round(4).to_string(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
