"""Which part of the sparse-label model over-credits weak runs (docs/notes/sparse-labels-record.md, "Consensus
weights").

For each trial of the sparse-label study (the same sparse labels, depth 100) and each run, it compares the
rate of relevant documents among the run's unjudged top-100 positions (each cell, run × rank bin, weighted by
its unjudged positions) with the rate the model's cells give before any combination:

* ``true``: the deep judgments' share relevant;
* ``model``: the model's posterior-mean cell rate, E[clip((R̄−1)θ/(1−θ), 0, 1)] (400 draws, κ as configured);
* ``R_t known``: Σ_t (R_t − 1) J_tsb / n^u_sb, the unbiased count of the module notes with each topic's true
  R_t (an oracle: what the model would give if it knew R_t);
* ``consensus α``: the model's rate with each judged document weighted by m_t^−α
  (:func:`bayeval.relevance.sparse_labels.consensus_weights`).

It prints, per run (best deep MAP first), the mean over trials of each, and for each estimate the ratio to the
truth per run and its correlation with the deep MAP (negative: weak runs over-credited).

    python studies/sparse_rate_bias.py ../shared/data/robust03 --trials 3 --powers 0.5,1
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from bayeval.data.rankdata import RankData
from bayeval.experiments.collection import load_collection
from bayeval.experiments.sparse import sparse_labels
from bayeval.measures import evaluate
from bayeval.relevance import load_config
from bayeval.relevance.sparse_labels import SparseLabelModel, consensus_weights, rank_bin_counts, rank_layout

#: the study variants' model configurations (not shipped; loaded by path)
STUDY_MODELS = Path(__file__).resolve().parent / "models"



def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("collection")
    ap.add_argument("--model", default=str(STUDY_MODELS / "sparse-trec.toml"))
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--powers", default="0.5,1", help="consensus powers alpha to compare (comma-separated)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    cfg = load_config(args.model)
    powers = [float(x) for x in args.powers.split(",") if x.strip()]
    col = load_collection(args.collection)
    runs, deep = col.runs(col.run_names), col.qrels()
    names = ["true", "model", "R_t known"] + [f"consensus {a:g}" for a in powers]
    acc, maps = [], []
    for i in range(args.trials):
        rng = np.random.default_rng([args.seed, i])  # the study's trial i
        data = RankData.build(runs, sparse_labels(deep, rng), depth=100)
        truth = RankData.build(runs, deep, topics=data.topics, depth=100)
        lay, lay_deep = rank_layout(data), rank_layout(truth)
        rel = lay_deep.judged_relevant[lay_deep.doc]  # positions align: same runs, topics and depth
        hit = lay.judged_relevant[lay.doc]
        r_t = np.array([np.sum(np.asarray(deep[t].grades) >= deep.relevance_level) for t in data.topics], float)
        n_b = len(cfg.bin_edges)
        cell = lay.system * n_b + np.searchsorted(np.asarray(cfg.bin_edges) - 1, lay.rank, side="right") - 1
        size = lay.n_systems * n_b
        n_u = np.bincount(cell[~hit], minlength=size)
        rates = [np.bincount(cell[~hit], weights=rel[~hit], minlength=size) / np.maximum(n_u, 1)]

        def model_rate(weights, lay=lay):
            fit = SparseLabelModel.fit(lay, relevant_mean=cfg.relevant_mean, relevant_shape=cfg.relevant_shape,
                                       bin_edges=cfg.bin_edges, pooling=cfg.pooling, weights=weights)
            return fit.unjudged_rate(*fit.draw_parts(400, np.random.default_rng(1))).mean(axis=0).ravel()

        rates.append(model_rate(None))
        _, c_r = rank_bin_counts(lay, cfg.bin_edges, weights=r_t - 1.0)
        rates.append(np.clip(c_r.ravel() / np.maximum(n_u, 1), 0, 1))
        rates += [model_rate(consensus_weights(lay, a)) for a in powers]
        weight = n_u.reshape(lay.n_systems, n_b)
        acc.append(np.stack([(r.reshape(lay.n_systems, n_b) * weight).sum(1) / weight.sum(1) for r in rates], 1))
        maps.append(evaluate(truth, "AP").mean()[0])
    rate, deep_map = np.mean(acc, axis=0), np.mean(maps, axis=0)
    order = np.argsort(-deep_map)
    print(f"{args.collection}, {args.model}, {args.trials} trial(s): rate of relevant among each run's unjudged "
          f"top-100 positions")
    print(f"{'run':16s} {'deep MAP':>8s} " + " ".join(f"{n:>14s}" for n in names))
    for s in order:
        print(f"{data.systems[s][:16]:16s} {deep_map[s]:8.3f} " + " ".join(f"{x:14.3f}" for x in rate[s]))
    for j, name in enumerate(names[1:], start=1):
        ratio = rate[:, j] / np.maximum(rate[:, 0], 1e-12)
        print(f"{name:14s} ratio to true, best → worst run: {np.array2string(ratio[order], precision=2)}; "
              f"corr with deep MAP {np.corrcoef(ratio, deep_map)[0, 1]:+.2f}")


if __name__ == "__main__":
    main()
