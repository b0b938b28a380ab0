"""Scores from an automatic assessor: quantile bins (the map's choice) against a Platt map, on simulated scores.

Each of ``--topics`` topics has 400 documents, relevant with probability b_t ~ Beta(2, 6); an assessor scores each
document s ~ Normal(d_t + 1.5 R, 1), with a topic offset d_t ~ Normal(0, 0.5²) (a cross-encoder's logits drift by
topic). ``--judged`` documents a topic are judged: at random, or (``--select top``) the highest-scoring
(the assessor's own top, as a pool's top is richer in relevant documents). Forecasts of P(relevant) for the other
documents, all with the topic's true base rate b_t so that only the label's likelihood ratio is compared:

- ``bins-K``: :func:`bayeval.relevance.fit_assessor_map` with ``score_bins=K`` (class-conditional, topic hierarchy);
- ``platt``: a logistic regression of relevance on the score over the judged pairs, read as a likelihood ratio
  (its logit minus the logit of the judged pairs' share relevant);
- ``truth``: the true likelihood ratio (the lower bound of the log loss).

Log loss (nats) over ``--reps`` repetitions, mean and sd.

    python studies/assessor_scores.py --judged 10 --reps 20
    python studies/assessor_scores.py --judged 30 --reps 20
    python studies/assessor_scores.py --judged 30 --reps 20 --select top
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from scipy.optimize import minimize
from scipy.special import expit, logit
from scipy.stats import norm

from bayeval.data import AssessorLabels, Qrels, TopicJudgments
from bayeval.relevance import fit_assessor_map
from bayeval.stats.forecast import log_score

SHIFT = 1.5


def simulate(rng, topics: int, docs: int = 400):
    rows = []
    for t in range(topics):
        b, d = rng.beta(2, 6), rng.normal(0, 0.5)
        rel = rng.random(docs) < b
        s = rng.normal(d + SHIFT * rel, 1.0)
        rows.append(pd.DataFrame({"topic": str(t), "docno": [f"d{i}" for i in range(docs)], "rel": rel, "score": s,
                                  "b": b, "offset": d}))
    return pd.concat(rows, ignore_index=True)


def platt(s: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    def nll(w):
        z = w[0] + w[1] * s
        return np.sum(np.logaddexp(0, z) - y * z) + 0.5 * (w ** 2).sum() / 100.0

    return tuple(minimize(nll, [0.0, 1.0], method="BFGS").x)


def one(rng, topics: int, judged: int, select: str, bins: tuple[int, ...]) -> dict:
    f = simulate(rng, topics)
    pick = np.zeros(len(f), bool)
    for _, idx in f.groupby("topic").indices.items():
        chosen = (idx[np.argsort(-f.score.to_numpy()[idx])[:judged]] if select == "top"
                  else rng.choice(idx, size=judged, replace=False))
        pick[chosen] = True
    train, test = f[pick], f[~pick]
    labels = AssessorLabels.from_frame(f.rename(columns={"score": "value"}), "ce", "scores")
    q = Qrels({t: TopicJudgments(g.docno.to_numpy(dtype=object), g.rel.to_numpy(dtype=np.int64))
               for t, g in train.groupby("topic")})
    y = test.rel.to_numpy()
    d = 0.5 - y.astype(float)
    lb = logit(test.b.to_numpy())
    out = {}
    for k in bins:
        amap = fit_assessor_map(labels, q, score_bins=k)
        lr = np.concatenate([amap.log_lr(t, g.score.to_numpy()) for t, g in test.groupby("topic", sort=False)])
        order = np.concatenate([np.flatnonzero(test.topic.to_numpy() == t) for t in test.topic.unique()])
        out[f"bins-{k}"] = float(log_score(expit(lb[order] + lr), d[order]).mean())
    a, w = platt(train.score.to_numpy(), train.rel.to_numpy(float))
    share = train.rel.mean()
    out["platt"] = float(log_score(expit(lb + a + w * test.score.to_numpy() - logit(share)), d).mean())
    s, off = test.score.to_numpy(), test.offset.to_numpy()
    true_lr = norm.logpdf(s, off + SHIFT) - norm.logpdf(s, off)
    out["truth"] = float(log_score(expit(lb + true_lr), d).mean())
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--topics", type=int, default=20)
    ap.add_argument("--judged", type=int, default=10)
    ap.add_argument("--select", choices=("random", "top"), default="random")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rows = [one(np.random.default_rng([args.seed, r]), args.topics, args.judged, args.select, (3, 5, 10))
            for r in range(args.reps)]
    f = pd.DataFrame(rows)
    print(f"{args.topics} topics, {args.judged} judged a topic ({args.select}), {args.reps} repetitions: "
          "held-out log loss (nats)\n")
    print(f.agg(["mean", "std"]).T.round(4).to_markdown())


if __name__ == "__main__":
    main()
