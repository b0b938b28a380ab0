"""Coverage of the 95% MAP interval of held-out runs evaluated beside few or many other runs.

The judgments are a depth-``judged_depth`` pool of the *contributing* runs only; a held-out run's documents did
not shape them. The held-out run is evaluated together with ``k`` contributing runs (``k`` small: 2–4; or all of
them), with the default model (``hier-default``, Laplace, posterior draws of p), and its 95% interval of E[MAP]
(E[MAP] ± 1.96 sd, the variance by ``mc`` over the draws of p: parameter and relevance uncertainty) is
checked against its MAP under the complete judgments.
docs/notes/calibration-record.md ("Extrapolation in the open") reports the figures.

Synthetic (the generator knows the complete truth)::

    python studies/extrapolation_coverage.py --seeds 8 --k 2,4,all [--model studies/models/hier-extrap.toml]

A collection directory (complete truth = its qrels; runs condensed to the documents the qrels judge)::

    python studies/extrapolation_coverage.py --collection ../shared/data/robust03 --seeds 3 --k 2,all \
        --depth 100 --topics 20
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd

from bayeval.data import RankData
from bayeval.data.coverage import beyond_judged_runs
from bayeval.data.qrels import pool_qrels
from bayeval.expected import expected_measures
from bayeval.measures import evaluate
from bayeval.relevance import estimate_probabilities
from bayeval.synthetic import make_collection


def _interval(data: RankData, est, seed: int):
    """Per run of ``data``: (point E[MAP], 2.5%, 97.5% quantile of MAP over the draws of p)."""
    ev = expected_measures(data, est.arrays(draws=True), measures=["AP"], method="mc", seed=seed, progress=False)
    e = ev.all_expected[0]
    sd = np.sqrt(ev.all_variance[0])
    return e, e - 1.959963984540054 * sd, e + 1.959963984540054 * sd


def trial(runs, qrels, judged_depth: int, n_held: int, ks, seed: int, model: str, depth: int, p_draws: int,
          topics=None):
    """One split: ``n_held`` held-out runs, judgments pooled from the others; rows per (held-out run, k)."""
    rng = np.random.default_rng(seed)
    names = list(runs.names)
    held = list(rng.choice(names, size=n_held, replace=False))
    contrib = [n for n in names if n not in held]
    judgments = pool_qrels(runs.select(contrib), qrels, judged_depth)
    rows = []
    for k in ks:
        for h in held:
            others = contrib if k == "all" else list(rng.choice(contrib, size=int(k), replace=False))
            sel = runs.select([h] + others)
            data = RankData.build(sel, judgments, depth=depth, topics=topics)
            truth = evaluate(RankData.build(sel, qrels, depth=depth, topics=topics), ["AP"]).mean()[0][0]
            est = estimate_probabilities(data, model, fit="laplace", seed=seed, p_draws=p_draws)
            e, lo, hi = _interval(data, est, seed)
            beyond = float(np.mean([beyond_judged_runs(tr, judged_depth)[tr.ranked[0][tr.ranked[0] >= 0]].mean()
                                    for tr in data]))
            rows.append({"seed": seed, "k": str(k), "run": h, "truth": truth, "expected": e[0], "lo": lo[0],
                         "hi": hi[0], "width": hi[0] - lo[0], "covered": lo[0] <= truth <= hi[0],
                         "beyond_docs": beyond})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--collection", help="collection directory (runs + qrels); default: synthetic")
    ap.add_argument("--seeds", type=int, default=4, help="splits (synthetic: one collection each)")
    ap.add_argument("--k", default="2,all", help="comma list of how many contributing runs beside each held-out run")
    ap.add_argument("--held", type=int, default=2, help="held-out runs per split")
    ap.add_argument("--model", default="hier-default", help="relevance model (default: the default)")
    ap.add_argument("--p-draws", type=int, default=100, help="posterior draws of p")
    ap.add_argument("--judged-depth", type=int, default=10, help="pool depth of the contributing runs")
    ap.add_argument("--depth", type=int, default=50, help="rank depth evaluated")
    ap.add_argument("--independent", type=int, default=3, help="synthetic: systems not sharing the document effect")
    ap.add_argument("--topics", type=int, default=12, help="synthetic: topics (real: first N topics)")
    ap.add_argument("--runs", type=int, default=10, help="collection: runs drawn per split")
    ap.add_argument("--out", help="write the rows (CSV)")
    a = ap.parse_args(argv)
    ks = [s if s == "all" else int(s) for s in a.k.split(",")]
    rows = []
    for seed in range(a.seeds):
        if a.collection:
            from bayeval.experiments.collection import load_collection

            tc = load_collection(a.collection, condense=True)
            rng = np.random.default_rng(1000 + seed)
            runs, qrels = tc.runs(tc.sample_runs(a.runs, rng)), tc.qrels()
            topics = tc.topics()[:a.topics]
        else:
            col = make_collection(n_topics=a.topics, n_systems=12, n_docs=300, depth=a.depth,
                                  judged_depth=a.judged_depth, seed=100 + seed, independent=a.independent)
            runs, qrels, topics = col.runs, col.qrels, None
        rows += trial(runs, qrels, a.judged_depth, a.held, ks, seed, a.model, a.depth, a.p_draws, topics)
        print(f"seed {seed} done", file=sys.stderr)
    df = pd.DataFrame(rows)
    if a.out:
        df.to_csv(a.out, index=False)
    summ = df.groupby("k").agg(n=("covered", "size"), covered=("covered", "sum"), width=("width", "mean"),
                               bias=("expected", lambda s: float(np.mean(s - df.loc[s.index, "truth"]))),
                               beyond_docs=("beyond_docs", "mean"))
    print(summ.to_string(float_format=lambda x: f"{x:.3f}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
