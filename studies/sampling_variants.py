"""Variants of the model-assisted estimate, evaluated on the sampling study's own samples (docs/sampling.md).

The sampling study (``bayeval experiment sampling run``) refits the relevance model for every variant it
runs; this script fits once per trial and budget and evaluates many variants from the stored fits. ``fit``
reproduces the study's draws exactly (same seeds: the trial's pairs, then one sample per budget in order, the
folds of :func:`bayeval.sampling.assign_folds` with the study's seed) and stores, per trial, the sample, the
whole-sample fit and every fold's fit for each number of folds; ``evaluate`` writes a trial table in the
study's layout (``method`` = the variant's name) that ``bayeval experiment sampling stats`` reads. The rows of
``K5-raw-jackknife`` are those of ``bayeval experiment sampling run DIR --methods assisted --folds 5`` (checked:
identical estimates, standard errors and P(ΔMAP < 0) on Robust 2003, trial 0).

A variant is ``SOURCE-PREDICTION-VARIANCE[-OPTION]``, or ``sample-VARIANCE`` for statAP (λ = 0):

- SOURCE: ``K2``, ``K5`` … (cross-fitted with that many folds) or ``whole`` (the fit on the whole sample);
- PREDICTION: ``raw`` (the fold's p); ``recal`` (the fold's p recalibrated by inverse-probability-weighted
  Platt scaling fitted on the fold's own training sample, :func:`bayeval.sampling.recalibrate`); ``rank``
  (an IPW logistic regression of relevance on the fold's logit p and the log of the document's best rank,
  fitted on the fold's training sample). Both adjustments use only the other folds' judgments, so the
  estimate stays design-unbiased;
- VARIANCE: ``jackknife``, ``own`` (own-label) or ``linearised`` (:func:`bayeval.sampling.assisted_measures`);
- OPTION: ``w0.5`` (a fixed λ, no per-topic shrinkage), ``ns`` (tuned λ without per-topic shrinkage, the
  same as ``s0``), ``s25`` … (tuned λ shrunk per topic by ``m_t / (m_t + 25)``: ``shrink`` of
  :func:`bayeval.sampling.assisted_measures`; without an ``s`` option the shrink is 50) or ``tm`` (tuned λ with
  each document's derivatives at the model's predictions, ``tuning="model"``). ``tm`` combines with a shrink:
  ``K5-raw-jackknife-tm-s25``.

Choose on Robust 2003 and the synthetic collection; TREC-8 is the report::

    python studies/sampling_variants.py fit ../shared/data/robust03 --cache /tmp/sv --trials 10 --folds 2,5
    python studies/sampling_variants.py evaluate ../shared/data/robust03 --cache /tmp/sv --out r03_var.parquet \\
        --variants "sample-jackknife;K2-raw-jackknife;K5-raw-jackknife;K5-raw-linearised;K5-recal-jackknife"
    bayeval experiment sampling stats r03_var.parquet
"""

from __future__ import annotations

import argparse
import pickle
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import optimize, stats
from scipy.special import expit, logit

from bayeval.data.probabilities import RelevanceProbabilities
from bayeval.data.qrels import Qrels, TopicJudgments
from bayeval.data.rankdata import RankData
from bayeval.experiments import load_collection
from bayeval.experiments.sampling import SAMPLING_COLUMNS, draw_pool_sample, pool_judgments
from bayeval.measures import evaluate
from bayeval.relevance import estimate_probabilities
from bayeval.sampling import assisted_measures, recalibrate
from bayeval.sampling.crossfit import assign_folds, held_out

SEED, DEPTH, BUDGETS, MODEL, PAIRS = 1, 100, (0.05, 0.1, 0.2), "hier-default", 200
VARIANCE_NAMES = {"own": "own-label", "jackknife": "jackknife", "linearised": "linearised"}


def _pool_truth(runs, qrels, topics):
    """The study's RankData of the pool and every run's true MAP (complete judgments of the depth-100 pool)."""
    base = RankData.build(runs, None, depth=DEPTH, topics=topics)
    frame = evaluate(RankData.build(runs, pool_judgments(base, qrels), depth=DEPTH, topics=topics),
                     "AP").to_frame()
    return base, frame[frame.topic == "all"].set_index("run").value.reindex(runs.names).to_numpy()


def fit_trials(args) -> None:
    col = load_collection(args.collection, name=args.name)
    runs, qrels, topics = col.runs(col.run_names), col.qrels(), col.topics()
    base, true_map = _pool_truth(runs, qrels, topics)
    folds = [int(k) for k in args.folds.split(",")]
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    for trial in range(args.trials):
        path = cache / f"{col.name}_{trial}.pkl"
        if path.exists():   # a cached trial is kept only when it holds what is asked for now
            with open(path, "rb") as fh:
                rec = pickle.load(fh)
            lacking = sorted({k for e in rec["budgets"].values() for k in folds if k not in e["folds"]})
            if lacking or (not args.no_whole and any(e["whole"] is None for e in rec["budgets"].values())):
                raise SystemExit(f"{path}: cached without the fits asked for now (folds {lacking or '-'}"
                                 f"{'' if args.no_whole else ', or the whole-sample fit'}); use another --cache")
            continue
        t0 = time.perf_counter()
        rng = np.random.default_rng([SEED, trial])
        ia, ib = np.triu_indices(len(runs), 1)
        pick = rng.choice(len(ia), size=min(PAIRS, len(ia)), replace=False)
        rec = {"names": runs.names, "manual": sorted(col.manual), "true_map": true_map, "ia": ia[pick],
               "ib": ib[pick], "budgets": {}}
        for bi, budget in enumerate(BUDGETS):
            sample, incl = draw_pool_sample(base, qrels, budget, rng)

            def fit(smp, incl=incl, trial=trial):
                judged = Qrels({t: TopicJudgments(s.docnos[s.sampled], s.grades[s.sampled], incl[t][s.sampled])
                                for t, s in smp.items()}, qrels.relevance_level)
                est = estimate_probabilities(RankData.build(runs, judged, depth=DEPTH, topics=topics), MODEL,
                                             fit="map", p_draws=None, seed=trial)
                return RelevanceProbabilities({t: dict(zip(d, p.tolist(), strict=True))
                                               for t, d, p in zip(est.topics, est.docnos, est.p, strict=True)})

            entry = {"sample": sample, "incl": incl, "whole": None if args.no_whole else fit(sample), "folds": {}}
            for k in folds:
                fold = assign_folds(sample, k, SEED * 1_000_003 + trial * 101 + bi)
                entry["folds"][k] = (fold, [fit(held_out(sample, fold, j)) for j in range(k)])
            rec["budgets"][budget] = entry
        with open(path, "wb") as fh:
            pickle.dump(rec, fh)
        print(f"{col.name} trial {trial}: {time.perf_counter() - t0:.0f} s", flush=True)


def _ipw_logistic(features, x, w):
    """Maximiser of the inverse-probability-weighted log-likelihood of a logistic regression."""
    w = w / w.sum()

    def loss(theta):
        eta = features @ theta
        return np.sum(w * (np.logaddexp(0.0, eta) - x * eta)), features.T @ (w * (expit(eta) - x))

    start = np.zeros(features.shape[1])
    start[1] = 1.0
    return optimize.minimize(loss, start, jac=True, method="BFGS").x


def _adjusted(kind, pred, train, incl, best, mine):
    """One fold's p for its own documents ``mine`` (topic -> docnos), adjusted on its training sample."""
    if kind == "raw":
        return {t: pred.lookup(t, d, 0.0) for t, d in mine.items()}
    if kind == "recal":
        m = recalibrate(pred, train, inclusion=incl)
        return {t: m(pred.lookup(t, d, 0.0)) for t, d in mine.items()}
    if kind != "rank":
        raise ValueError(f"prediction: raw, recal or rank, got {kind!r}")

    def design(t, sel):
        lp = logit(np.clip(pred.lookup(t, train[t].docnos[sel], 0.0), 1e-6, 1 - 1e-6))
        return np.column_stack([np.ones(int(sel.sum())), lp, np.log(best[t][sel])])

    feats, xs, ws = [], [], []
    for t, ts in train.items():
        feats.append(design(t, ts.sampled))
        xs.append((ts.grades[ts.sampled] >= 1).astype(float))
        ws.append(1.0 / incl[t][ts.sampled])
    theta = _ipw_logistic(np.concatenate(feats), np.concatenate(xs), np.concatenate(ws))
    out = {}
    for t, d in mine.items():
        sel = np.isin(train[t].docnos, d)
        q = dict(zip(train[t].docnos[sel], expit(design(t, sel) @ theta), strict=True))
        out[t] = np.array([q[doc] for doc in d])
    return out


def _cross_fitted(entry, k, kind, best):
    fold, preds = entry["folds"][k]
    sample, incl = entry["sample"], entry["incl"]
    out = {t: {} for t in sample}
    for j in range(k):
        mine = {t: ts.docnos[fold[t] == j] for t, ts in sample.items()}
        q = _adjusted(kind, preds[j], held_out(sample, fold, j), incl, best, mine)
        for t in sample:
            out[t].update(zip(mine[t].tolist(), np.asarray(q[t]).tolist(), strict=True))
    return RelevanceProbabilities(out)


def _options(options):
    """``(weight, shrink, tuning)`` of a variant's OPTION parts (``w0.5``, ``ns``, ``s25``, ``tm``; at most one
    of ``w``/``ns``/``s``, ``tm`` not with ``w``), or None when they cannot be read."""
    weight, shrink, tuning, fixed = None, 50.0, "corrected", 0
    for o in options:
        try:
            if o == "tm":
                tuning = "model"
                continue
            if o == "ns":
                shrink = 0.0
            elif o[:1] == "s" and 0.0 <= float(o[1:]) < np.inf:
                shrink = float(o[1:])
            elif o[:1] == "w" and 0.0 <= float(o[1:]) <= 1.0:
                weight = float(o[1:])
            else:
                return None
        except ValueError:
            return None
        fixed += 1
    if fixed > 1 or len(set(options)) < len(options) or (weight is not None and tuning == "model"):
        return None
    return weight, shrink, tuning


def evaluate_variants(args) -> None:
    col = load_collection(args.collection, name=args.name)
    runs = col.runs(col.run_names)
    base = RankData.build(runs, None, depth=DEPTH, topics=col.topics())
    best = {tr.topic: np.where(tr.ranks > 0, tr.ranks, 10**9).min(axis=1)[(tr.ranks > 0).any(axis=1)].astype(float)
            for tr in base}
    variants = [v.strip() for v in args.variants.split(";") if v.strip()]
    for v in variants:
        parts = v.split("-")
        ok = (len(parts) == 2 and parts[0] == "sample" and parts[1] in VARIANCE_NAMES) or (
            len(parts) >= 3 and (parts[0] == "whole" or (parts[0][:1] == "K" and parts[0][1:].isdigit()))
            and parts[1] in ("raw", "recal", "rank") and parts[2] in VARIANCE_NAMES
            and _options(parts[3:]) is not None)
        if not ok:
            raise SystemExit(f"--variants: cannot read {v!r} (see the module docstring for the names)")
    files = sorted(Path(args.cache).glob(f"{col.name}_*.pkl"), key=lambda p: int(p.stem.rsplit("_", 1)[1]))
    rows = []
    for path in files:
        trial = int(path.stem.rsplit("_", 1)[1])
        with open(path, "rb") as fh:
            rec = pickle.load(fh)
        names, manual, truth, ia, ib = (rec["names"], set(rec["manual"]), rec["true_map"], rec["ia"], rec["ib"])
        for budget, entry in rec["budgets"].items():
            preds = {}
            for v in variants:
                parts = v.split("-")
                t0 = time.perf_counter()
                shrink, weight, tuning = 50.0, None, "corrected"
                if parts[0] == "sample":
                    probs, variance, weight = None, VARIANCE_NAMES[parts[1]], 0.0
                else:
                    source, kind, variance = parts[0], parts[1], VARIANCE_NAMES[parts[2]]
                    weight, shrink, tuning = _options(parts[3:])
                    if (source, kind) not in preds:
                        preds[source, kind] = (entry["whole"] if source == "whole"
                                               else _cross_fitted(entry, int(source[1:]), kind, best))
                    probs = preds[source, kind]
                ev = assisted_measures(runs, entry["sample"], probs, weight=weight, inclusion=entry["incl"],
                                       cutoffs=(), depth=DEPTH, variance=variance, shrink=shrink, tuning=tuning)
                m, var = ev.mean("AP")
                d, se, p = ev.differences("AP")
                secs = time.perf_counter() - t0
                tau = stats.kendalltau(m, truth).statistic
                judged = sum(int(s.sampled.sum()) for s in entry["sample"].values())
                pool = sum(len(s) for s in entry["sample"].values())
                # power 1: symmetric intervals; settings not recorded (a variant is not the study's method), so
                # `bayeval experiment sampling run` refuses to add rows to this collection in such a table
                common = (judged, pool, ev.weight, tau, secs, 1.0, None)
                for s, name in enumerate(names):
                    rows.append((col.name, trial, SEED, budget, DEPTH, v, "run", name, "", name in manual, m[s],
                                 np.sqrt(max(var[s], 0.0)), np.nan, truth[s], *common))
                for a, b in zip(ia, ib, strict=True):
                    rows.append((col.name, trial, SEED, budget, DEPTH, v, "pair", names[a], names[b],
                                 names[a] in manual or names[b] in manual, d[a, b], se[a, b], p[a, b],
                                 truth[a] - truth[b], *common))
        print(f"{col.name} trial {trial} evaluated", flush=True)
    pd.DataFrame(rows, columns=list(SAMPLING_COLUMNS)).to_parquet(args.out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="action", required=True)
    f = sub.add_parser("fit", help="fit and store the model per trial, budget and fold")
    e = sub.add_parser("evaluate", help="evaluate variants from the stored fits")
    for p in (f, e):
        p.add_argument("collection")
        p.add_argument("--name", default=None)
        p.add_argument("--cache", required=True)
    f.add_argument("--trials", type=int, default=10)
    f.add_argument("--folds", default="2,5", help="comma-separated numbers of folds to fit")
    f.add_argument("--no-whole", action="store_true", help="skip the whole-sample fit")
    e.add_argument("--out", required=True)
    e.add_argument("--variants", required=True, help="semicolon-separated variant names (see above)")
    args = ap.parse_args()
    (fit_trials if args.action == "fit" else evaluate_variants)(args)


if __name__ == "__main__":
    main()
