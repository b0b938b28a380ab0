"""How far the model's p is off on a held-out run's own documents: the levels a reuse prior must cover.

For every robustness trial (k = 10 runs, c = 2 judged by the RTC selection to α = 0.95, depth 100, the trials
of docs/calibration.md: the same runs and judgments per trial number) the *true levels* T_s of the held-out runs
are the log-odds offsets δ of y_i ~ Bernoulli(σ(logit p̄_i + Σ_s w_is δ_s)) over the held-out runs' unjudged
documents, fitted jointly, with y_i from the complete qrels, p̄_i the base model's predictive p (mean of its
posterior draws), w_is the weights of :func:`bayeval.relevance.reuse_prior.level_weights` (a document moves with
each held-out run's share of the runs retrieving it) and an N(0, 3²) penalty on each δ_s; standard errors from the
penalised information. Written per run and trial, with a summary: the maximum-likelihood fit of

    T_st ~ N(μ + g_t + e_st, se_st²),  g_t ~ N(0, σ_b²) (shared by the held-out runs of trial t),
    e_st ~ N(0, σ_w²)

with a rank profile γ_t shared by the trial's held-out runs fitted beside the levels (x_i of
:mod:`bayeval.relevance.reuse_prior`: the held-out runs' log rank relative to rank 10; its mean and spread over
trials), and without it (``flat_level``)

over the trials of the collections given (the prior of :mod:`bayeval.relevance.reuse_prior`,
docs/notes/calibration-record.md
"Where things stand"), and the excess kurtosis of the standardised run residuals (heavy tails?).

Usage::

    python studies/reuse_levels.py out/synth-ind --trials 12 --out lv-syn.parquet [--base hier-default]
    python studies/reuse_levels.py ../shared/data/dl20-passage --condense --relevance-level 2 --trials 12 \\
        --out lv-dl20.parquet
    python studies/reuse_levels.py --summary lv-*.parquet     # the fit, per collection and pooled
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import optimize
from scipy.special import expit, logit

from bayeval.data import RankData
from bayeval.data.coverage import contributing_runs
from bayeval.experiments import RobustnessConfig, load_collection
from bayeval.experiments.robustness import STUDY_STRATEGIES, prepare_trial
from bayeval.io.trials import write_table
from bayeval.relevance import HierarchicalEstimator
from bayeval.relevance.reuse_prior import level_weights

_PENALTY_SD = 3.0


def _joint_fit(o: np.ndarray, W: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Penalised maximum and standard errors of δ in y ~ Bern(σ(o + W δ)), δ_s ~ N(0, 3²) independently."""
    S = W.shape[1]
    d = np.zeros(S)

    def objective(v):
        eta = o + W @ v
        return float(np.sum(y * eta - np.logaddexp(0, eta))) - 0.5 * float(v @ v) / _PENALTY_SD ** 2

    for _ in range(200):
        p = expit(o + W @ d)
        g = W.T @ (y - p) - d / _PENALTY_SD ** 2
        H = (W * (p * (1 - p))[:, None]).T @ W + np.eye(S) / _PENALTY_SD ** 2
        step = np.linalg.solve(H, g)
        t, now = 1.0, objective(d)
        while objective(d + t * step) < now - 1e-12 and t > 1e-6:  # step halving: Newton may overshoot
            t /= 2
        d = d + t * step
        if np.max(np.abs(t * step)) < 1e-10:
            break
    p = expit(o + W @ d)
    H = (W * (p * (1 - p))[:, None]).T @ W + np.eye(S) / _PENALTY_SD ** 2
    return d, np.sqrt(np.diag(np.linalg.inv(H)))


def trial_levels(col, trial: int, base: str) -> pd.DataFrame:
    """Per held-out run of ``trial``: its true level, jointly over the held-out runs' unjudged documents with the
    weights of :func:`bayeval.relevance.reuse_prior.level_weights` (a document several runs retrieve moves with
    each held-out run's share)."""
    cfg = RobustnessConfig(methods=("bayes",))
    ctx = prepare_trial(col, cfg, trial)
    sel = STUDY_STRATEGIES["rtc"].select(ctx, {})
    data = RankData.build(ctx.runs_k, ctx.judged(sel), depth=cfg.depth, topics=ctx.topics)
    truth = RankData.build(ctx.runs_k, ctx.qrels, depth=cfg.depth, topics=ctx.topics)
    est = HierarchicalEstimator(base).fit(data, "laplace", seed=1, draws=200, chains=1).probabilities(draws=200, seed=1)
    contrib = contributing_runs(data, 10)
    S = len(data.systems)
    held = [s for s in range(S) if s not in set(contrib.tolist())]
    o, W, y = [], [], []
    for tr, tt, p in zip(data, truth, est.p, strict=True):
        w, xw = level_weights(tr, contrib, S)
        on = w.sum(axis=1) > 0
        if not on.any():
            continue
        pos = pd.Index(tt.docnos).get_indexer(tr.docnos[on])
        rel = np.where(pos >= 0, np.asarray(tt.relevant)[np.maximum(pos, 0)], False)
        o.append(logit(np.clip(np.asarray(p)[on], 1e-6, 1 - 1e-6)))
        W.append(np.column_stack([w[on][:, held], xw[on].sum(axis=1)]))
        y.append(rel.astype(float))
    o, W, y = np.concatenate(o), np.concatenate(W), np.concatenate(y)
    d, se = _joint_fit(o, W, y)
    flat, flat_se = _joint_fit(o, W[:, :-1], y)  # the levels without the rank profile
    manual = set(col.manual)
    rows = []
    for k, s in enumerate(held):
        m = W[:, k] > 0
        rows.append({"collection": col.name, "trial": trial, "run": data.systems[s],
                     "manual": data.systems[s] in manual, "documents": float(W[:, k].sum()),
                     "relevant": float((W[:, k] * y).sum()), "mean_p": float(expit(o[m]).mean()),
                     "rate": float(y[m].mean()), "level": d[k], "se": se[k], "slope": d[-1], "slope_se": se[-1],
                     "flat_level": flat[k], "flat_se": flat_se[k], "judgments": len(sel.history), "base": base})
    return pd.DataFrame(rows)


def _negloglik(theta, groups) -> float:
    mu, lb, lw = theta
    sb2, sw2 = np.exp(2 * lb), np.exp(2 * lw)
    out = 0.0
    for t, se2 in groups:
        cov = np.diag(sw2 + se2) + sb2
        sign, logdet = np.linalg.slogdet(cov)
        r = t - mu
        out += 0.5 * (logdet + r @ np.linalg.solve(cov, r))
    return out


def fit_prior(frame: pd.DataFrame, level: str = "level", se: str = "se") -> dict:
    """Maximum-likelihood μ, σ_b, σ_w of the module docstring's model over the trials of ``frame``, and the rank
    profile's mean and spread over trials (its sampling variance removed)."""
    f = frame.dropna(subset=[level])
    if level != "level":
        f = f.drop(columns=["level", "se"]).rename(columns={level: "level", se: "se"})
    f = f[np.isfinite(f["se"]) & (f["se"] > 0)]
    groups = [(g.level.to_numpy(), g.se.to_numpy() ** 2) for _, g in f.groupby(["collection", "trial"])]
    res = optimize.minimize(_negloglik, x0=np.array([f.level.mean(), np.log(0.5), np.log(0.5)]), args=(groups,),
                            method="L-BFGS-B", bounds=[(-20, 20), (-6, 3), (-6, 3)])
    mu, lb, lw = res.x
    sb, sw = float(np.exp(lb)), float(np.exp(lw))
    # standardised run residuals within trial (the trial's own mean removed), for the tails
    z = []
    for t, se2 in groups:
        if len(t) > 1:
            r = t - t.mean()
            z.extend(r / np.sqrt(sw ** 2 + se2))
    z = np.asarray(z)
    kurt = float(np.mean(z ** 4) / np.mean(z ** 2) ** 2 - 3) if len(z) else np.nan
    slopes = f.groupby(["collection", "trial"])[["slope", "slope_se"]].first() if "slope" in f else None
    sl = {} if slopes is None else {
        "slope_mean": float(slopes.slope.mean()),
        "slope_sd": float(np.sqrt(max(slopes.slope.var() - (slopes.slope_se ** 2).mean(), 0.0)))}
    return {"runs": len(f), "trials": len(groups), "mu": float(mu), "sigma_b": sb, "sigma_w": sw, **sl,
            "excess_kurtosis": kurt, "share_beyond_2sd": float(np.mean(np.abs(z) > 2 * z.std())) if len(z) else np.nan}


def equal_weights(frame: pd.DataFrame) -> dict:
    """The prior across choosing sets, each set weighing the same: the fit of each set (a collection, its seeds —
    names ending in ``-<digits>`` — together), then μ and the rank profile's mean averaged, the run spread's
    variance averaged, and the sets' spread of μ (of the profile's mean) added to the shared spread (to the
    profile's): a new collection is another draw of a set."""
    sets = frame["collection"].str.replace(r"-\d+$", "", regex=True)
    fits = pd.DataFrame([fit_prior(g) for _, g in frame.groupby(sets)])
    return {"runs": int(fits.runs.sum()), "trials": int(fits.trials.sum()), "mu": float(fits.mu.mean()),
            "sigma_b": float(np.sqrt((fits.sigma_b ** 2).mean() + fits.mu.var())),
            "sigma_w": float(np.sqrt((fits.sigma_w ** 2).mean())), "slope_mean": float(fits.slope_mean.mean()),
            "slope_sd": float(np.sqrt((fits.slope_sd ** 2).mean() + fits.slope_mean.var())),
            "excess_kurtosis": float(fits.excess_kurtosis.mean()),
            "share_beyond_2sd": float(fits.share_beyond_2sd.mean())}


def summary(paths) -> None:
    frame = pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)
    rows = []
    for (name, base), g in frame.groupby(["collection", "base"]):
        rows.append({"collection": name, "base": base, **fit_prior(g),
                     "manual_minus_auto": float(g[g.manual].level.mean() - g[~g.manual].level.mean())
                     if g.manual.any() else np.nan})
    for base, g in frame.groupby("base"):
        rows.append({"collection": "pooled", "base": base, **fit_prior(g)})
        rows.append({"collection": "pooled, no profile", "base": base, **fit_prior(g, "flat_level", "flat_se")})
        rows.append({"collection": "choosing sets, equal weights", "base": base, **equal_weights(g)})
    print(pd.DataFrame(rows).to_markdown(index=False, floatfmt=".3f"))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("collection", type=Path, nargs="?")
    ap.add_argument("--trials", type=int, default=12)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--base", default="hier-default", help="base model whose p̄ the levels are relative to")
    ap.add_argument("--condense", action="store_true")
    ap.add_argument("--relevance-level", type=int, default=1)
    ap.add_argument("--summary", nargs="+", default=None, help="tables to summarise (no trials run)")
    a = ap.parse_args(argv)
    if a.summary:
        summary(a.summary)
        return
    col = load_collection(a.collection, condense=a.condense, relevance_level=a.relevance_level)
    frames, t0 = [], time.perf_counter()
    for i in range(a.first, a.first + a.trials):
        frames.append(trial_levels(col, i, a.base))
        table = pd.concat(frames, ignore_index=True)
        write_table(table, a.out, columns=list(table.columns))
        print(f"trial {i}: {time.perf_counter() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
