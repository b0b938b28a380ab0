"""Label-level check of the assessor map on TREC RAG 2025's pairs (docs/notes/assessor-rag25.md).

The pairs ``../shared/data/rag25-labels``: 10,284 (topic, segment) pairs of 22 topics with a person's grade and
UMBRELA's (an LLM's) grade, both 0–4. Relevance is the human grade >= ``--level`` (2 is the primary setting,
1 the other).

**Same topics, held-out pairs.** Per repetition, 10 pairs a topic drawn at random are the human labels; the rest of
the topic's pairs are held out. Forecasts of P(relevant) for each held-out pair:

- ``map``: the assessor map (:func:`bayeval.relevance.fit_assessor_map`, pooled empirical-Bayes prior) with the
  topic's base rate: expit(logit b_t + log LR_t(grade));
- ``map-flat``: the same with the fixed flat prior Dirichlet(1, ..., 1) per topic and class;
- ``pooled-lr``: one LR for all topics (the map learned with every pair in one topic) with b_t: how much the topic
  variation of the LR gives;
- ``raw-grade``: pooled P(relevant | grade) = (n_rel,g + 1) / (n_g + 2) over the training pairs, no topic variation;
- ``base-rate``: b_t alone;
- ``map, true b_t``: a diagnostic, not a forecast — the map with the held-out pairs' own share relevant as b_t, to
  tell the map's errors from b_t's.

b_t is the topic's base rate from its 10 pairs, shrunk to the others' by an empirical-Bayes beta-binomial
(posterior mean (n_rel + mu kappa) / (n + kappa), mu and kappa maximising the marginal likelihood) — what a
random sample of the topic says; in a collection the relevance model's p takes its place.

**Other topics only** (leave one topic out): the map and the raw-grade map learned on every human label of the 21
other topics, forecasting every pair of the left-out topic, with b_t (i) the other topics' pooled base rate or
(ii) estimated from the left-out topic's own LLM grades alone (the mixture b P(g | rel) + (1 - b) P(g | nonrel),
the new-topic map's predictive class-conditionals, by maximum likelihood): no human label of the topic at all.

Scores: log loss (nats, forecasts clipped to [1e-4, 1 - 1e-4]) and Brier (:mod:`bayeval.stats.forecast`, with the
outcome "relevant" in place of "Δ < 0"), mean and sd over repetitions; reliability bins with 95% Wilson intervals
of the first repetition, and in how many repetitions every bin is consistent; the same with 95% intervals of each
bin's frequency by a bootstrap over topics (a topic's held-out pairs share its errors, so they are not independent
and the Wilson interval, which takes them to be, is too narrow).

    python studies/assessor_rag25.py --reps 20 --level 2
    python studies/assessor_rag25.py --reps 20 --level 1
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import minimize
from scipy.special import betaln, expit, logit

from bayeval.data import AssessorLabels, Qrels, TopicJudgments
from bayeval.io import read_labels, read_qrels
from bayeval.relevance import fit_assessor_map
from bayeval.stats.forecast import brier_score, log_score, reliability_bins

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "rag25-labels"
EDGES = (0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0)
METHODS = ("map", "map-flat", "pooled-lr", "raw-grade", "base-rate", "map, true b_t")
COLS = ["bin", "n", "mean_forecast", "frequency", "lower", "upper", "consistent", "topic_lower", "topic_upper",
        "topic_consistent"]


def base_rates(n_rel: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Per topic the posterior mean of its base rate under a beta-binomial prior fitted to all topics (EB)."""

    def nll(x):
        mu, kappa = expit(x[0]), np.exp(x[1])
        a, b = mu * kappa, (1 - mu) * kappa
        return -np.sum(betaln(a + n_rel, b + n - n_rel) - betaln(a, b)) + 0.5 * ((x[1] - np.log(10)) / 2) ** 2

    pooled = (n_rel.sum() + 0.5) / (n.sum() + 1.0)
    x = minimize(nll, [logit(pooled), np.log(10.0)], method="Nelder-Mead").x
    mu, kappa = expit(x[0]), np.exp(x[1])
    return (n_rel + mu * kappa) / (n + kappa)


def _qrels(frame: pd.DataFrame) -> Qrels:
    return Qrels({t: TopicJudgments(g.docno.to_numpy(dtype=object), g.human.to_numpy(dtype=np.int64))
                  for t, g in frame.groupby("topic", sort=False)})


def _one_topic(labels: AssessorLabels, frame: pd.DataFrame) -> tuple[AssessorLabels, Qrels]:
    """Every pair in one topic '*' (docnos prefixed by their topic): the map without topic variation."""
    f = frame.assign(docno=frame.topic + "/" + frame.docno, topic="*")
    lab = AssessorLabels.from_frame(f.rename(columns={"llm": "value"})[["topic", "docno", "value"]], labels.name,
                                    "grades")
    return lab, _qrels(f)


def forecasts(pairs: pd.DataFrame, train: pd.DataFrame, test: pd.DataFrame, level: int) -> dict:
    """P(relevant) of each ``test`` pair by each method, learned on ``train`` (and the labels of every pair)."""
    labels = AssessorLabels.from_frame(pairs.rename(columns={"llm": "value"})[["topic", "docno", "value"]],
                                       "umbrela", "grades")
    tq = _qrels(train)
    topics = sorted(pairs.topic.unique())
    counts = train.assign(rel=train.human >= level).groupby("topic").rel.agg(["sum", "count"]).reindex(topics,
                                                                                                   fill_value=0)
    b = dict(zip(topics, base_rates(counts["sum"].to_numpy(float), counts["count"].to_numpy(float)), strict=True))
    bt = test.topic.map(b).to_numpy(float)
    out = {"base-rate": bt}
    truth = test.assign(rel=test.human >= level).groupby("topic").rel.mean().to_dict()
    for name, prior in (("map", "pooled"), ("map-flat", "flat")):
        amap = fit_assessor_map(labels, tq, relevance_level=level, prior=prior)
        if prior == "pooled":
            out["alpha"] = amap.alpha
            out["map, true b_t"] = np.concatenate([amap.probability(t, g.llm.to_numpy(float), np.full(len(g), truth[t]))
                                                   for t, g in test.groupby("topic", sort=False)])
        out[name] = np.concatenate([amap.probability(t, g.llm.to_numpy(float), g.topic.map(b).to_numpy(float))
                                    for t, g in test.groupby("topic", sort=False)])
    one_lab, one_q = _one_topic(labels, pairs[pairs.set_index(["topic", "docno"]).index.isin(
        train.set_index(["topic", "docno"]).index)])
    pooled = fit_assessor_map(one_lab, one_q, relevance_level=level)
    out["pooled-lr"] = expit(logit(np.clip(bt, 1e-9, 1 - 1e-9)) + pooled.log_lr("*", test.llm.to_numpy(float)))
    raw = train.assign(rel=train.human >= level).groupby("llm").rel.agg(["sum", "count"])
    rate = (raw["sum"] + 1) / (raw["count"] + 2)
    out["raw-grade"] = test.llm.map(rate).fillna((raw["sum"].sum() + 1) / (raw["count"].sum() + 2)).to_numpy(float)
    order = np.concatenate([np.flatnonzero(test.topic.to_numpy() == t) for t in test.topic.unique()])
    # the map forecasts were made topic by topic: put every method in that order
    return ({k: (v if k in ("map", "map-flat", "alpha", "map, true b_t") else v[order]) for k, v in out.items()},
            test.iloc[order])


def _mixture_rate(amap, topic_grades: np.ndarray) -> float:
    """The base rate b maximising sum log(b P(g | rel) + (1 - b) P(g | nonrel)) over a topic's LLM grades."""
    a0, a1 = amap.posterior("__new__")
    k = amap.categories(topic_grades)
    p1, p0 = (a1 / a1.sum())[k], (a0 / a0.sum())[k]
    res = minimize(lambda x: -np.sum(np.log(expit(x[0]) * p1 + (1 - expit(x[0])) * p0)), [0.0],
                   method="Nelder-Mead")
    return float(expit(res.x[0]))


def scores(p: np.ndarray, y: np.ndarray) -> dict:
    d = 0.5 - y.astype(float)  # the forecast module's outcome "Δ < 0" is here "relevant"
    return {"log_loss": float(log_score(p, d).mean()), "brier": float(brier_score(p, d).mean())}


def reliability(p: np.ndarray, y: np.ndarray, topic: np.ndarray | None = None, *, boot: int = 1000,
                seed: int = 0) -> pd.DataFrame:
    """Reliability bins with 95% Wilson intervals (pairs independent); with ``topic``, also 95% intervals of each
    bin's frequency by a bootstrap over topics (``topic_lower``, ``topic_upper``, ``topic_consistent``): the
    held-out pairs of one topic share its errors of b_t and LR_t, so they are not independent."""
    rel = reliability_bins(p, 0.5 - y.astype(float), edges=EDGES)
    if topic is None:
        return rel
    e = np.asarray(EDGES)
    k = np.clip(np.searchsorted(e, p, side="right") - 1, 0, len(e) - 2)
    topics, t_idx = np.unique(topic, return_inverse=True)
    hits = np.zeros((len(topics), len(e) - 1))
    n = np.zeros_like(hits)
    np.add.at(hits, (t_idx, k), y.astype(float))
    np.add.at(n, (t_idx, k), 1.0)
    rng = np.random.default_rng(seed)
    draw = rng.integers(len(topics), size=(boot, len(topics)))
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a bin no drawn topic reaches: NaN
        freq = hits[draw].sum(axis=1) / n[draw].sum(axis=1)
        lo, hi = np.nanquantile(freq, [0.025, 0.975], axis=0)
    rel["topic_lower"], rel["topic_upper"] = lo, hi
    rel["topic_consistent"] = (hi >= e[:-1]) & (lo <= e[1:])
    return rel


def held_out_pairs(pairs: pd.DataFrame, level: int, reps: int, per_topic: int, seed: int):
    rows, first, all_ok, all_topic_ok = [], None, {m: 0 for m in METHODS}, {m: 0 for m in METHODS}
    alphas = []
    for r in range(reps):
        rng = np.random.default_rng([seed, r])
        pick = np.zeros(len(pairs), bool)
        for _, idx in pairs.groupby("topic").indices.items():
            pick[rng.choice(idx, size=min(per_topic, len(idx)), replace=False)] = True
        fc, test = forecasts(pairs, pairs[pick], pairs[~pick], level)
        y = (test.human >= level).to_numpy()
        alphas.append(fc["alpha"])
        for m in METHODS:
            rows.append({"rep": r, "method": m, **scores(fc[m], y)})
            rel = reliability(fc[m], y, test.topic.to_numpy(), seed=r)
            all_ok[m] += bool(rel[rel.n > 0].consistent.all())
            all_topic_ok[m] += bool(rel[rel.n > 0].topic_consistent.all())
            if r == 0:
                first = {**(first or {}), m: rel}
    return pd.DataFrame(rows), first, all_ok, all_topic_ok, np.array(alphas)


def other_topics(pairs: pd.DataFrame, level: int):
    labels = AssessorLabels.from_frame(pairs.rename(columns={"llm": "value"})[["topic", "docno", "value"]],
                                       "umbrela", "grades")
    ps = {k: [] for k in ("map, pooled b", "map, b from its LLM grades", "raw-grade", "base-rate (pooled)")}
    ys, ts = [], []
    for t in sorted(pairs.topic.unique()):
        train, test = pairs[pairs.topic != t], pairs[pairs.topic == t]
        amap = fit_assessor_map(labels, _qrels(train), relevance_level=level)
        b = float((train.human >= level).mean())
        g = test.llm.to_numpy(float)
        ps["map, pooled b"].append(amap.probability(t, g, np.full(len(g), b)))
        ps["map, b from its LLM grades"].append(amap.probability(t, g, np.full(len(g), _mixture_rate(amap, g))))
        raw = train.assign(rel=train.human >= level).groupby("llm").rel.agg(["sum", "count"])
        ps["raw-grade"].append(test.llm.map((raw["sum"] + 1) / (raw["count"] + 2)).fillna(b).to_numpy(float))
        ps["base-rate (pooled)"].append(np.full(len(g), b))
        ys.append((test.human >= level).to_numpy())
        ts.append(test.topic.to_numpy())
    y, tt = np.concatenate(ys), np.concatenate(ts)
    table = pd.DataFrame([{"method": k, **scores(np.concatenate(v), y)} for k, v in ps.items()])
    rel = {k: reliability(np.concatenate(v), y, tt) for k, v in ps.items()}
    return table, rel


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--level", type=int, default=2, help="relevant: human grade >= level (default 2)")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--per-topic", type=int, default=10, help="human labels a topic (default 10)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    t0 = time.time()
    human = read_qrels(Path(args.data) / "qrels-human.txt.gz").to_frame().rename(columns={"grade": "human"})
    llm = read_labels(Path(args.data) / "labels-umbrela.txt.gz").to_frame().rename(columns={"value": "llm"})
    pairs = human.merge(llm, on=["topic", "docno"], how="inner")
    pairs["llm"] = pairs.llm.astype(np.int64)
    print(f"{len(pairs)} pairs, {pairs.topic.nunique()} topics; relevant = human grade >= {args.level} "
          f"(base rate {(pairs.human >= args.level).mean():.3f})\n")
    table, first, all_ok, all_topic_ok, alphas = held_out_pairs(pairs, args.level, args.reps, args.per_topic,
                                                                args.seed)
    labels = AssessorLabels.from_frame(pairs.rename(columns={"llm": "value"})[["topic", "docno", "value"]],
                                       "umbrela", "grades")
    full = fit_assessor_map(labels, _qrels(pairs), relevance_level=args.level)
    print(f"map on every pair: alpha nonrelevant {full.alpha[0]:.1f}, relevant {full.alpha[1]:.1f}; from "
          f"{args.per_topic} a topic, over the repetitions: nonrelevant {alphas[:, 0].min():.1f}–"
          f"{alphas[:, 0].max():.1f}, relevant {alphas[:, 1].min():.1f}–{alphas[:, 1].max():.1f}\n")
    summ = table.groupby("method", sort=False)[["log_loss", "brier"]].agg(["mean", "std"])
    summ.columns = [f"{a}_{b}" for a, b in summ.columns]
    summ["all_bins_wilson"] = [f"{all_ok[m]}/{args.reps}" for m in summ.index]
    summ["all_bins_topic_boot"] = [f"{all_topic_ok[m]}/{args.reps}" for m in summ.index]
    print(f"## Same topics, {args.per_topic} human labels a topic, held-out pairs ({args.reps} repetitions)\n")
    print(summ.round(4).to_markdown())
    wins = table.pivot(index="rep", columns="method", values="log_loss")
    print(f"\nmap's log loss below raw-grade's in {int((wins['map'] < wins['raw-grade']).sum())}/{args.reps} "
          f"repetitions, below base-rate's in {int((wins['map'] < wins['base-rate']).sum())}/{args.reps}")
    for m in ("map", "raw-grade"):
        rel = first[m]
        print(f"\nreliability of {m}, repetition 0:\n")
        print(rel[rel.n > 0][COLS].round(3).to_markdown(index=False))
    loto, rel = other_topics(pairs, args.level)
    print("\n## Other topics only (leave one topic out; every human label of the other 21 topics)\n")
    print(loto.round(4).to_markdown(index=False))
    for m in ("map, pooled b", "map, b from its LLM grades"):
        r = rel[m]
        print(f"\nreliability of {m}:\n")
        print(r[r.n > 0][COLS].round(3).to_markdown(index=False))
    print(f"\n({time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
