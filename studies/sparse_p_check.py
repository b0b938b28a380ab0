"""The check of p on unjudged top-ranked documents under sparse labels (docs/sparse-labels.md).

Each trial keeps one relevant judgment per topic (:func:`bayeval.experiments.sparse.sparse_labels`), fits a
relevance model to those labels alone, and compares the p it gives every unjudged document that some run ranks in
its top ``--top`` with the truth of the deep judgments (a document the deep qrels do not judge counts as not
relevant, as trec_eval counts it): the mean p against the share relevant, the Brier score of p, and reliability
bins of p (:func:`bayeval.stats.forecast.reliability_bins` takes P(Δ<0) and a sign; here the forecast is p and
the outcome "relevant").

    python studies/sparse_p_check.py /tmp/sparse/synth-msm --model sparse-default --trials 3
    python studies/sparse_p_check.py ../shared/data/robust03 --model studies/models/sparse-trec.toml --trials 3
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bayeval.data.rankdata import RankData
from bayeval.experiments.collection import load_collection
from bayeval.experiments.sparse import sparse_labels
from bayeval.relevance import estimate_probabilities
from bayeval.stats.forecast import reliability_bins

EDGES = (0.0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0)


def check(runs, deep, *, model: str, trials: int, depth: int, top: int, seed: int = 0):
    """``(p, truth)`` of every unjudged document in some run's top ``top``, over ``trials`` draws of the labels."""
    ps, ys = [], []
    for i in range(trials):
        rng = np.random.default_rng([seed, i])
        sparse = sparse_labels(deep, rng)
        data = RankData.build(runs, sparse, depth=depth)
        est = estimate_probabilities(data, model, seed=int(rng.integers(2**31)), p_draws=None)
        for tr, p in zip(data, est.arrays(), strict=True):
            shown = np.unique(tr.ranked[:, :top][tr.ranked[:, :top] >= 0])
            shown = shown[~tr.judged[shown]]
            tj = deep[tr.topic]
            rel = {d for d, g in zip(tj.docnos, tj.grades, strict=True) if g >= deep.relevance_level}
            ps.append(p[shown])
            ys.append(np.array([d in rel for d in tr.docnos[shown]], dtype=bool))
    return np.concatenate(ps), np.concatenate(ys)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("collection")
    ap.add_argument("--model", default="sparse-default")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--top", type=int, default=10)
    args = ap.parse_args()
    col = load_collection(args.collection)
    t0 = time.perf_counter()
    p, y = check(col.runs(col.run_names), col.qrels(), model=args.model, trials=args.trials, depth=args.depth,
                 top=args.top)
    # reliability_bins scores P(Δ<0) against the sign of Δ: Δ = -1 for a relevant document makes "Δ<0" relevant
    bins = reliability_bins(p, np.where(y, -1.0, 1.0), edges=EDGES)
    print(f"{args.collection} model {args.model}, {args.trials} trial(s): {len(p)} unjudged top-{args.top} "
          f"documents; mean p {p.mean():.4f}, share relevant {y.mean():.4f}; Brier {np.mean((p - y) ** 2):.4f} "
          f"(p = share: {np.mean((y.mean() - y) ** 2):.4f}); {time.perf_counter() - t0:.1f} s")
    print(bins[bins["n"] > 0][["bin", "n", "mean_forecast", "frequency", "lower", "upper", "consistent"]]
          .round(4).to_string(index=False))


if __name__ == "__main__":
    main()
