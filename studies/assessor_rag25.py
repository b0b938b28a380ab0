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

The reliability follow-up's variants (:func:`variants`):

- ``map, predictive``: the exact posterior predictive of one pair, over pi_t's Beta posterior and the map's
  hyperparameter draws (:func:`predictive`; ``map`` is the same at the hyperparameters' mode);
- ``map, mean of draws``: the mean of expit(logit pi + log LR) over joint draws (:func:`mean_of_draws`);
- ``dawid-skene``: every pair of the topic, the held-out ones' grades with latent relevance, by Gibbs sampling
  (:func:`dawid_skene`); ``map, b_t from dawid-skene``: the map with that posterior mean of pi_t;
- ``map, tempered``: the topic maps with the prior c alpha m, c by leave-one-out over the labelled pairs
  (:func:`tempered`);
- diagnostics ``map, hyper from all pairs`` and ``dawid-skene, hyper from all pairs``: the map's alpha and m
  learned on every pair (what 10 labels a topic cannot know).

Reliability is also checked against the map's own joint predictive (:func:`predictive_bins`), which carries the
errors a topic's pairs share; ``--synthetic SEED`` (with ``--synthetic-prior``) replaces the pairs by draws from
the Dawid–Skene model the map assumes, a well-specified control for every figure.

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
    python studies/assessor_rag25.py --reps 20 --level 2 --synthetic 1
"""

from __future__ import annotations

import argparse
import dataclasses
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
METHODS = ("map", "map-flat", "pooled-lr", "raw-grade", "base-rate", "map, predictive", "map, mean of draws",
           "dawid-skene", "map, b_t from dawid-skene", "map, tempered", "map, true b_t", "map, hyper from all pairs",
           "dawid-skene, hyper from all pairs")
COLS = ["bin", "n", "mean_forecast", "frequency", "lower", "upper", "consistent", "topic_lower", "topic_upper",
        "topic_consistent"]


def base_rates(n_rel: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Per topic the posterior mean of its base rate under a beta-binomial prior fitted to all topics (EB)."""
    a, b = base_rate_prior(n_rel, n)
    return (n_rel + a) / (n + a + b)


def base_rate_prior(n_rel: np.ndarray, n: np.ndarray) -> tuple[float, float]:
    """The Beta(a, b) prior of a topic's base rate, a = mu kappa, b = (1 - mu) kappa, by the beta-binomial marginal
    likelihood across topics (with a weak prior on log kappa)."""

    def nll(x):
        mu, kappa = expit(x[0]), np.exp(x[1])
        a, b = mu * kappa, (1 - mu) * kappa
        return -np.sum(betaln(a + n_rel, b + n - n_rel) - betaln(a, b)) + 0.5 * ((x[1] - np.log(10)) / 2) ** 2

    pooled = (n_rel.sum() + 0.5) / (n.sum() + 1.0)
    x = minimize(nll, [logit(pooled), np.log(10.0)], method="Nelder-Mead").x
    mu, kappa = expit(x[0]), np.exp(x[1])
    return float(mu * kappa), float((1 - mu) * kappa)


def _qrels(frame: pd.DataFrame) -> Qrels:
    return Qrels({t: TopicJudgments(g.docno.to_numpy(dtype=object), g.human.to_numpy(dtype=np.int64))
                  for t, g in frame.groupby("topic", sort=False)})


def _one_topic(labels: AssessorLabels, frame: pd.DataFrame) -> tuple[AssessorLabels, Qrels]:
    """Every pair in one topic '*' (docnos prefixed by their topic): the map without topic variation."""
    f = frame.assign(docno=frame.topic + "/" + frame.docno, topic="*")
    lab = AssessorLabels.from_frame(f.rename(columns={"llm": "value"})[["topic", "docno", "value"]], labels.name,
                                    "grades")
    return lab, _qrels(f)


def forecasts(pairs: pd.DataFrame, train: pd.DataFrame, test: pd.DataFrame, level: int, seed=0) -> dict:
    """P(relevant) of each ``test`` pair by each method, learned on ``train`` (and the labels of every pair)."""
    labels = AssessorLabels.from_frame(pairs.rename(columns={"llm": "value"})[["topic", "docno", "value"]],
                                       "umbrela", "grades")
    tq = _qrels(train)
    topics = sorted(pairs.topic.unique())
    counts = train.assign(rel=train.human >= level).groupby("topic").rel.agg(["sum", "count"]).reindex(topics,
                                                                                                   fill_value=0)
    a_pi, b_pi = base_rate_prior(counts["sum"].to_numpy(float), counts["count"].to_numpy(float))
    b = dict(zip(topics, base_rates(counts["sum"].to_numpy(float), counts["count"].to_numpy(float)), strict=True))
    ab = {t: (a_pi + counts["sum"][t], b_pi + counts["count"][t] - counts["sum"][t]) for t in topics}
    bt = test.topic.map(b).to_numpy(float)
    out = {"base-rate": bt}
    truth = test.assign(rel=test.human >= level).groupby("topic").rel.mean().to_dict()
    for name, prior in (("map", "pooled"), ("map-flat", "flat")):
        amap = fit_assessor_map(labels, tq, relevance_level=level, prior=prior)
        if prior == "pooled":
            out["alpha"] = amap.alpha
            out["summary"] = amap.summary()
            out.update(variants(amap, test, bt, ab, a_pi, b_pi, seed))
            full = fit_assessor_map(labels, _qrels(pairs), relevance_level=level)
            oracle = dataclasses.replace(amap, profile=full.profile, alpha=full.alpha, hyper_mode=full.hyper_mode,
                                         hyper_cov=full.hyper_cov)
            k = amap.categories(test.llm.to_numpy(float))
            idx = np.array([amap.topics.index(t) for t in test.topic])
            out["map, hyper from all pairs"] = expit(logit(bt) + _lr(oracle, test.topic.to_numpy(), k))
            n, u = _topic_arrays(oracle, test)
            out["dawid-skene, hyper from all pairs"] = dawid_skene(
                oracle, n, u, a_pi, b_pi, np.random.default_rng([*np.atleast_1d(seed), 41]))[0][idx, k]
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
    return ({k: (v if k in ("map", "map-flat", "alpha", "map, true b_t", "temper", "pred_bins", "summary")
                 else v[order])
             for k, v in out.items()},
            test.iloc[order])


def variants(amap, test: pd.DataFrame, bt: np.ndarray, ab: dict, a_pi: float, b_pi: float, seed) -> dict:
    """The forecasts of the reliability follow-up (docs/notes/assessor-rag25.md), in ``test``'s order."""
    rng = np.random.default_rng([*np.atleast_1d(seed), 40])
    hyper = amap.hyper_draws(400, rng)
    k = amap.categories(test.llm.to_numpy(float))
    topics = test.topic.to_numpy()
    idx = np.array([amap.topics.index(t) for t in topics])
    out = {"map, predictive": predictive(amap, hyper, k, bt, topics),
           "map, mean of draws": mean_of_draws(amap, hyper, k, topics, ab, rng)}
    n, u = _topic_arrays(amap, test)
    q, pi = dawid_skene(amap, n, u, a_pi, b_pi, rng)
    out["dawid-skene"] = q[idx, k]
    out["map, b_t from dawid-skene"] = predictive(amap, hyper, k, pi[idx], topics)
    y = (test.human >= amap.relevance_level).to_numpy()
    out["pred_bins"] = predictive_bins(amap, hyper, test, expit(logit(bt) + _lr(amap, topics, k)), y, ab, rng)
    c, th = tempered(amap, a_pi, b_pi)
    out["temper"] = c
    out["map, tempered"] = expit(logit(bt) + np.log(th[idx, 1, k]) - np.log(th[idx, 0, k]))
    return out


def _lr(amap, topics: np.ndarray, k: np.ndarray) -> np.ndarray:
    out = np.empty(len(k))
    for t in np.unique(topics):
        sel = topics == t
        out[sel] = amap.log_lr(t, amap.levels[k[sel]])
    return out


def predictive_bins(amap, hyper, test: pd.DataFrame, p: np.ndarray, y: np.ndarray, ab: dict, rng,
                    level: float = 0.95) -> pd.DataFrame:
    """Reliability bins of the forecasts ``p`` with each bin's 95% interval of its frequency from the model's own
    joint predictive: per draw, pi_t from its Beta posterior and the topic's LR from the map's draws (``hyper``
    shared across topics), every held-out pair's relevance drawn from expit(logit pi_t + log LR_t(g)); the bin's
    frequency over the draws. Unlike the Wilson interval it carries the errors a topic's pairs share (of pi_t and
    LR_t), which is what the pairs of 22 topics cannot average away."""
    e = np.asarray(EDGES)
    b = np.clip(np.searchsorted(e, p, side="right") - 1, 0, len(e) - 2)
    n_draws = hyper[0].shape[0]
    sims = np.zeros((n_draws, len(e) - 1))
    topics = test.topic.to_numpy()
    g = test.llm.to_numpy(float)
    for t in np.unique(topics):
        sel = np.flatnonzero(topics == t)
        pi = rng.beta(*ab[t], size=n_draws)
        pr = expit(logit(pi)[:, None] + amap.log_lr_draws(t, g[sel], n_draws, rng, hyper))
        hit = (rng.random(pr.shape) < pr).astype(float)
        for j in np.unique(b[sel]):
            sims[:, j] += hit[:, b[sel] == j].sum(axis=1)
    n = np.bincount(b, minlength=len(e) - 1).astype(float)
    obs = np.bincount(b, weights=y.astype(float), minlength=len(e) - 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        lo, hi = np.quantile(sims / n, [(1 - level) / 2, (1 + level) / 2], axis=0)
        freq = obs / n
    rel = pd.DataFrame({"bin": [f"{a:g}–{c:g}" for a, c in zip(e[:-1], e[1:], strict=True)], "n": n,
                        "mean_forecast": np.bincount(b, weights=p, minlength=len(e) - 1) / np.maximum(n, 1),
                        "frequency": freq, "pred_lower": lo, "pred_upper": hi})
    rel["pred_consistent"] = (freq >= lo) & (freq <= hi)
    return rel[rel.n > 0].reset_index(drop=True)


def _topic_arrays(amap, test: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The map's judged counts (T, 2, K) and the test pairs' grade counts (T, K), in the map's topic order."""
    u = np.zeros((len(amap.topics), amap.n_categories))
    for i, t in enumerate(amap.topics):
        k = amap.categories(test.llm[test.topic == t].to_numpy(float))
        np.add.at(u[i], k, 1.0)
    return amap.counts, u


def predictive(amap, hyper, k: np.ndarray, b: np.ndarray, topics: np.ndarray) -> np.ndarray:
    """The exact posterior predictive P(R = 1 | g, labels) of one new pair: with pi_t and theta_t independent a
    posteriori, P = E[pi] E[theta_1g] / (E[pi] E[theta_1g] + (1 - E[pi]) E[theta_0g]), the expectations over pi_t's
    Beta posterior (its mean b) and theta_t's Dirichlet posterior given each draw of the hyperparameters."""
    out = np.empty(len(k))
    for t in np.unique(topics):
        sel = topics == t
        a0, a1 = amap.posterior(t, hyper)
        e1, e0 = (a1 / a1.sum(-1, keepdims=True)).mean(0), (a0 / a0.sum(-1, keepdims=True)).mean(0)
        out[sel] = expit(logit(b[sel]) + np.log(e1[k[sel]]) - np.log(e0[k[sel]]))
    return out


def mean_of_draws(amap, hyper, k: np.ndarray, topics: np.ndarray, ab: dict, rng) -> np.ndarray:
    """The mean over joint draws (pi_t from its Beta posterior, the LR from the map's) of expit(logit pi + log LR):
    what ``with_assessors`` makes the point p when p has draws."""
    n = hyper[0].shape[0]
    out = np.empty(len(k))
    for t in np.unique(topics):
        sel = topics == t
        pi = rng.beta(*ab[t], size=n)
        lr = amap.log_lr_draws(t, amap.levels[k[sel]], n, rng, hyper)
        out[sel] = expit(logit(pi)[:, None] + lr).mean(0)
    return out


def dawid_skene(amap, n: np.ndarray, u: np.ndarray, a: float, b: float, rng, *, iters: int = 1500,
                burn: int = 300, init: float | None = None) -> np.ndarray:
    """Dawid–Skene on each topic's every pair: the human-labelled counts ``n`` (T, 2, K) and the grades ``u``
    (T, K) of the pairs without a human label, whose relevance is latent. Gibbs sampling of
    r_tk ~ Binomial(u_tk, q_tk), q_tk = pi_t theta_t1k / (pi_t theta_t1k + (1 - pi_t) theta_t0k);
    pi_t ~ Beta(a + rel, b + nonrel); theta_tc ~ Dirichlet(alpha_c m_c + counts of class c), the hyperparameters
    a new Laplace draw of the map's each sweep. Returns the posterior means of q_tk, P(R = 1 | g = k, every pair
    of the topic), (T, K), and of pi_t, (T,)."""
    alpha, m = amap.hyper_draws(iters, rng)
    prior = alpha[..., None] * m  # (iters, 2, K)
    pi = np.full(len(n), init) if init is not None else (a + n[:, 1].sum(1)) / (a + b + n.sum((1, 2)))
    th = (prior[0] + n) / (prior[0] + n).sum(-1, keepdims=True)
    acc, acc_pi = np.zeros_like(u), np.zeros(len(n))
    for s in range(iters):
        w1, w0 = pi[:, None] * th[:, 1], (1 - pi[:, None]) * th[:, 0]
        q = w1 / (w1 + w0)
        if s >= burn:
            acc += q
            acc_pi += pi
        r = rng.binomial(u.astype(np.int64), q)
        pi = rng.beta(a + n[:, 1].sum(1) + r.sum(1), b + n[:, 0].sum(1) + (u - r).sum(1))
        g = rng.standard_gamma(prior[s] + n + np.stack([u - r, r], axis=1))
        th = np.maximum(g, 1e-300) / np.maximum(g, 1e-300).sum(-1, keepdims=True)
    return acc / (iters - burn), acc_pi / (iters - burn)


TEMPER = np.r_[2.0 ** np.arange(-2, 9), np.inf]


def tempered(amap, a: float, b: float) -> tuple[float, np.ndarray]:
    """The topic maps with the prior c alpha_c m_c (c = 1: the empirical-Bayes map; c = inf: the pooled profile),
    c chosen from :data:`TEMPER` by leave-one-out log loss over the human-labelled pairs (each labelled pair
    forecast from the others of its topic: base rate and map). Returns c and the posterior means of
    P(g | class) per topic, (T, 2, K)."""
    n = amap.counts
    prior = amap.alpha[:, None] * amap.profile
    nt, nr = n.sum((1, 2)), n[:, 1].sum(1)
    best, best_c = np.inf, 1.0
    for c in TEMPER:
        loss = 0.0
        for y in (0, 1):
            bt = (a + nr - y) / (a + b + nt - 1)
            lr = np.empty((len(n), n.shape[2]))
            for k in range(n.shape[2]):
                cnt = n.copy()
                cnt[:, y, k] -= 1.0
                th = _theta(prior, cnt, c)
                lr[:, k] = np.log(th[:, 1, k]) - np.log(th[:, 0, k])
            pk = expit(logit(bt)[:, None] + lr)
            ll = np.log(pk) if y == 1 else np.log1p(-pk)
            loss -= np.sum(n[:, y] * ll)
        if loss < best:
            best, best_c = loss, c
    return best_c, _theta(prior, n, best_c)


def _theta(prior: np.ndarray, cnt: np.ndarray, c: float) -> np.ndarray:
    if np.isinf(c):
        return np.broadcast_to(prior / prior.sum(-1, keepdims=True), cnt.shape)
    x = c * prior + np.maximum(cnt, 0.0)
    return x / x.sum(-1, keepdims=True)


def _mixture_rate(amap, topic_grades: np.ndarray) -> float:
    """The base rate b maximising sum log(b P(g | rel) + (1 - b) P(g | nonrel)) over a topic's LLM grades."""
    a0, a1 = amap.posterior("__new__")
    k = amap.categories(topic_grades)
    p1, p0 = (a1 / a1.sum())[k], (a0 / a0.sum())[k]
    res = minimize(lambda x: -np.sum(np.log(expit(x[0]) * p1 + (1 - expit(x[0])) * p0)), [0.0],
                   method="Nelder-Mead")
    return float(expit(res.x[0]))


def synthetic(pairs: pd.DataFrame, level: int, seed: int, from_prior: bool = False) -> pd.DataFrame:
    """The same topics and pair counts, relevance and grades drawn from the Dawid–Skene model that the map assumes:
    R ~ Bernoulli(pi_t), G | R = c ~ Categorical(theta_tc), with pi_t each topic's share relevant and theta_tc the
    posterior mean of the map learned on every pair (pooled prior), or with ``from_prior`` a draw from its
    Dirichlet(alpha_c m_c) (the hierarchy exactly as the map assumes it). The human grade is set to ``level``
    or 0."""
    labels = AssessorLabels.from_frame(pairs.rename(columns={"llm": "value"})[["topic", "docno", "value"]],
                                       "umbrela", "grades")
    amap = fit_assessor_map(labels, _qrels(pairs), relevance_level=level)
    rng = np.random.default_rng([seed, 7])
    out = []
    for t, g in pairs.groupby("topic", sort=False):
        a0, a1 = amap.posterior(t)
        if from_prior:
            a0, a1 = rng.dirichlet(amap.alpha[0] * amap.profile[0]), rng.dirichlet(amap.alpha[1] * amap.profile[1])
        rel = rng.random(len(g)) < (g.human >= level).mean()
        grade = np.where(rel, rng.choice(amap.levels, size=len(g), p=a1 / a1.sum()),
                         rng.choice(amap.levels, size=len(g), p=a0 / a0.sum()))
        out.append(g.assign(human=np.where(rel, level, 0), llm=grade.astype(np.int64)))
    return pd.concat(out, ignore_index=True)


def scores(p: np.ndarray, y: np.ndarray) -> dict:
    """Log loss, Brier and the expected calibration error sum_b n_b |freq_b - mean forecast_b| / n over EDGES."""
    d = 0.5 - y.astype(float)  # the forecast module's outcome "Δ < 0" is here "relevant"
    e = np.asarray(EDGES)
    b = np.clip(np.searchsorted(e, p, side="right") - 1, 0, len(e) - 2)
    gap = np.bincount(b, weights=y.astype(float) - p, minlength=len(e) - 1)
    return {"log_loss": float(log_score(p, d).mean()), "brier": float(brier_score(p, d).mean()),
            "ece": float(np.abs(gap).sum() / len(p))}


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
    alphas, tempers, pred_ok, pred_first = [], [], 0, None
    for r in range(reps):
        rng = np.random.default_rng([seed, r])
        pick = np.zeros(len(pairs), bool)
        for _, idx in pairs.groupby("topic").indices.items():
            pick[rng.choice(idx, size=min(per_topic, len(idx)), replace=False)] = True
        fc, test = forecasts(pairs, pairs[pick], pairs[~pick], level, [seed, r])
        tempers.append(fc["temper"])
        pred_ok += bool(fc["pred_bins"].pred_consistent.all())
        if r == 0:
            pred_first = fc["pred_bins"]
            print(f"the map of repetition 0, a new topic's profile:\n{fc['summary']}\n")
        y = (test.human >= level).to_numpy()
        alphas.append(fc["alpha"])
        for m in METHODS:
            rows.append({"rep": r, "method": m, **scores(fc[m], y)})
            rel = reliability(fc[m], y, test.topic.to_numpy(), seed=r)
            all_ok[m] += bool(rel[rel.n > 0].consistent.all())
            all_topic_ok[m] += bool(rel[rel.n > 0].topic_consistent.all())
            if r == 0:
                first = {**(first or {}), m: rel}
    return (pd.DataFrame(rows), first, all_ok, all_topic_ok, np.array(alphas), np.array(tempers), pred_ok,
            pred_first)


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
    ap.add_argument("--synthetic", type=int, default=None, metavar="SEED",
                    help="replace the pairs by draws from the fitted Dawid–Skene model (a well-specified control)")
    ap.add_argument("--synthetic-prior", action="store_true",
                    help="with --synthetic: each topic's P(grade | class) drawn from the fitted Dirichlet hierarchy")
    args = ap.parse_args()
    t0 = time.time()
    human = read_qrels(Path(args.data) / "qrels-human.txt.gz").to_frame().rename(columns={"grade": "human"})
    llm = read_labels(Path(args.data) / "labels-umbrela.txt.gz").to_frame().rename(columns={"value": "llm"})
    pairs = human.merge(llm, on=["topic", "docno"], how="inner")
    pairs["llm"] = pairs.llm.astype(np.int64)
    if args.synthetic is not None:
        pairs = synthetic(pairs, args.level, args.synthetic, args.synthetic_prior)
        print(f"SYNTHETIC pairs (seed {args.synthetic}): Dawid–Skene draws from each topic's share relevant and "
              + ("P(grade | class) drawn from the fitted hierarchy" if args.synthetic_prior else
                 "fitted P(grade | class)"))
    print(f"{len(pairs)} pairs, {pairs.topic.nunique()} topics; relevant = human grade >= {args.level} "
          f"(base rate {(pairs.human >= args.level).mean():.3f})\n")
    table, first, all_ok, all_topic_ok, alphas, tempers, pred_ok, pred_first = held_out_pairs(
        pairs, args.level, args.reps, args.per_topic, args.seed)
    labels = AssessorLabels.from_frame(pairs.rename(columns={"llm": "value"})[["topic", "docno", "value"]],
                                       "umbrela", "grades")
    full = fit_assessor_map(labels, _qrels(pairs), relevance_level=args.level)
    print(f"map on every pair: alpha nonrelevant {full.alpha[0]:.1f}, relevant {full.alpha[1]:.1f}; from "
          f"{args.per_topic} a topic, over the repetitions: nonrelevant {alphas[:, 0].min():.1f}–"
          f"{alphas[:, 0].max():.1f}, relevant {alphas[:, 1].min():.1f}–{alphas[:, 1].max():.1f}\n")
    print("P(grade | class) on every pair:\n"
          + pd.crosstab(pairs.human >= args.level, pairs.llm, normalize="index").round(4).to_markdown() + "\n")
    vals, cnt = np.unique(tempers, return_counts=True)
    print("map, tempered: c chosen by leave-one-out over the labelled pairs: "
          + ", ".join(f"{v:g} ({c}x)" for v, c in zip(vals, cnt, strict=True)) + "\n")
    summ = table.groupby("method", sort=False)[["log_loss", "brier", "ece"]].agg(["mean", "std"])
    summ.columns = [f"{a}_{b}" for a, b in summ.columns]
    summ["all_bins_wilson"] = [f"{all_ok[m]}/{args.reps}" for m in summ.index]
    summ["all_bins_topic_boot"] = [f"{all_topic_ok[m]}/{args.reps}" for m in summ.index]
    print(f"## Same topics, {args.per_topic} human labels a topic, held-out pairs ({args.reps} repetitions)\n")
    print(summ.round(4).to_markdown())
    wins = table.pivot(index="rep", columns="method", values="log_loss")
    print(f"\nmap's log loss below raw-grade's in {int((wins['map'] < wins['raw-grade']).sum())}/{args.reps} "
          f"repetitions, below base-rate's in {int((wins['map'] < wins['base-rate']).sum())}/{args.reps}")
    print(f"\nmap: every bin's frequency inside its 95% interval from the model's joint predictive (pi_t and the "
          f"map drawn per topic) in {pred_ok}/{args.reps} repetitions; repetition 0:\n")
    print(pred_first.round(3).to_markdown(index=False))
    for m in ("map", "raw-grade", "dawid-skene", "map, tempered"):
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
