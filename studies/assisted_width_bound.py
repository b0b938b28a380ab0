"""How narrow can the model-assisted interval of MAP be with this model's predictions and the study's design?

For samples of the sampling study (``bayeval experiment sampling run``), the model's cross-fitted p of that
sample and the complete truth of the pool, this script computes the design variance of the linearised
model-assisted MAP (:mod:`bayeval.sampling.oracle`) for:

- ``statAP`` (λ = 0) — the reference;
- ``estimator`` — the λ the estimator uses (:func:`bayeval.sampling.assisted_measures`, tuned on the sample,
  shrunk per topic by ``m_t/(m_t + 50)``); ``estimator-noshrink`` the same tuned λ without the shrink;
  ``estimator-tm`` the λ tuned with the derivatives at the model's predictions (``tuning="model"``), shrunk;
- ``oracle`` — the best single λ (closed form, the truth known); ``oracle-shrunk`` the same shrunk per topic as
  the estimator shrinks its λ; ``oracle-topic`` the best λ per topic;
- ``iso``, ``iso-w``, ``iso-topic`` — p replaced by its oracle recalibration, the isotonic regression of the
  truth on p over the whole pool (unweighted; weighted by each document's variance weight
  ``(1 - π)/π · Σ_s (∂MAP_s/∂x)²``; per topic, weighted), then the best λ: the most any difference or
  regression estimator using this model's ranking of the documents could get;
- ``truth`` — p = x (0: the sanity check); ``truth-shrunk`` p = x with λ = 1 shrunk per topic as the estimator
  shrinks it (what the shrink alone leaves with a perfect model);

as the ratio of the runs' mean standard error to statAP's (the study's ``× statAP`` is a ratio of mean widths),
the median of the per-run ratios, and ``√(ΣV/ΣV₀)`` (pooled over runs, = √(1 − R²_w) for the oracle λ, R²_w the
uncentred R² of x on p weighted by the variance weights). Beside them the *estimated* ratio on the same sample:
the estimator's standard errors against statAP's (``est-jackknife``: the study's; ``est-linearised``: the
textbook linearisation). A second design at the same budget, ``prior`` (probabilities proportional to Aslam,
Pavlu & Savell's AP-prior of the documents' ranks averaged over runs, floor 0.05:
:func:`bayeval.sampling.design.prior_inclusion`),
gets statAP and oracle rows too (needs no sample: the design variance is closed form). The decomposition table
splits ``V₀`` and ``V(λ*)`` (summed over runs) by rank stratum, by relevance and by topic.

The samples and fits come from ``studies/sampling_variants.py fit`` (the study's draws: same seeds, folds and
fits; 5 folds), so nothing is refitted here::

    python studies/sampling_variants.py fit ../shared/data/robust03 --cache C --trials 3 --folds 5 --no-whole
    python studies/assisted_width_bound.py ../shared/data/robust03 --cache C --trials 0,1,2 --out r03_bound.csv
    python studies/assisted_width_bound.py summary r03_bound.csv syn_bound.csv ...   # markdown tables
"""

from __future__ import annotations

import argparse
import pickle
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.isotonic import IsotonicRegression

from bayeval.data.rankdata import RankData
from bayeval.experiments import load_collection
from bayeval.experiments.sampling import pool_judgments
from bayeval.sampling import assisted_measures, cross_fitted_predictions
from bayeval.sampling.crossfit import assign_folds
from bayeval.sampling.design import prior_inclusion, rank_inclusion
from bayeval.sampling.oracle import design_variance, design_variance_terms, oracle_weight, truth_slopes

SEED, DEPTH, FOLDS, SHRINK = 1, 100, 5, 50.0
BUDGETS = (0.05, 0.1, 0.2)          # the place of each budget in studies/sampling_variants.py's draws
STRATA = ("ranks 1-10", "ranks 11-30", "ranks 31-100")


def _replayed(entry: dict, trial: int, bi: int):
    """The study's cross-fitted p of a cached sample: :func:`cross_fitted_predictions` replaying the stored
    fold fits in order (the fold assignment checked against the cached one)."""
    sample = entry["sample"]
    fold, fits = entry["folds"][FOLDS]
    seed = SEED * 1_000_003 + trial * 101 + bi
    again = assign_folds(sample, FOLDS, seed)
    if any(not np.array_equal(again[t], fold[t]) for t in sample):
        raise SystemExit("cached folds differ from the study's assignment")
    order = iter(fits)
    return cross_fitted_predictions(sample, lambda _: next(order), folds=FOLDS, seed=seed)


def _ratios(v: np.ndarray, v0: np.ndarray) -> tuple[float, float, float, float]:
    """Ratio of the runs' mean standard errors, median of the per-run ratios, pooled ratio, and the runs' mean
    standard error itself (the design one, to set beside the spread of the estimates over samples)."""
    se, se0 = np.sqrt(np.maximum(v, 0)), np.sqrt(v0)
    ok = v0 > 0
    return (float(se[ok].mean() / se0[ok].mean()), float(np.median(se[ok] / se0[ok])),
            float(np.sqrt(v[ok].sum() / v0[ok].sum())), float(se[ok].mean()))


def _isotonic(sl, incl, preds, per_topic: bool, weighted: bool) -> dict[str, np.ndarray]:
    """The isotonic regression of the truth on p, over the whole pool or per topic, optionally weighted by
    each document's variance weight ``(1 - π)/π · Σ_s slope²``."""
    w = {t: ((1 - incl[t]) / incl[t] * np.sum(sl.slopes[t] ** 2, axis=0)) if weighted else np.ones(len(incl[t]))
         for t in sl.topics}
    iso = IsotonicRegression(out_of_bounds="clip")
    if per_topic:
        out = {}
        for t in sl.topics:
            if w[t].sum() > 0:
                out[t] = iso.fit(preds[t], sl.labels[t], sample_weight=w[t] + 1e-300).predict(preds[t])
            else:
                out[t] = preds[t]
        return out
    cat = np.concatenate([preds[t] for t in sl.topics])
    fitted = iso.fit(cat, np.concatenate([sl.labels[t] for t in sl.topics]),
                     sample_weight=np.concatenate([w[t] for t in sl.topics]) + 1e-300).predict(cat)
    edges = np.cumsum([0] + [len(preds[t]) for t in sl.topics])
    return {t: fitted[edges[i]:edges[i + 1]] for i, t in enumerate(sl.topics)}


def bound_rows(col, runs, truth, base, entry, trial, bi, budget):
    """Ratio rows and decomposition rows of one cached sample."""
    sample, incl = entry["sample"], entry["incl"]
    probs = _replayed(entry, trial, bi)
    preds = {t: probs.lookup(t, sample[t].docnos, 0.0) for t in sample}
    sl = truth_slopes(runs, sample, truth, depth=DEPTH)
    assert all(np.allclose(incl[t], rank_inclusion(_best(base[t], sample[t].docnos), budget)) for t in sl.topics)
    v0 = design_variance(sl, incl, None)
    ev = assisted_measures(runs, sample, probs, inclusion=incl, cutoffs=(), depth=DEPTH)
    lam_hat = ev.weight
    shrunk = _shrunk(lam_hat, incl)
    lam_star = oracle_weight(sl, incl, preds)
    lam_topic = oracle_weight(sl, incl, preds, per_topic=True)
    lam_model = assisted_measures(runs, sample, probs, inclusion=incl, cutoffs=(), depth=DEPTH,
                                  tuning="model").weight
    # (predictions, per-topic weights, the weight shown: the tuned or oracle λ before the per-topic shrink)
    variants = {"statAP": (None, 0.0, 0.0), "estimator": (preds, shrunk, lam_hat),
                "estimator-noshrink": (preds, lam_hat, lam_hat),
                "estimator-tm": (preds, _shrunk(lam_model, incl), lam_model),
                "oracle-shrunk": (preds, _shrunk(lam_star, incl), lam_star),
                "oracle": (preds, lam_star, lam_star),
                "oracle-topic": (preds, lam_topic, float(np.mean(list(lam_topic.values()))))}
    for name, per_topic, weighted in (("iso", False, False), ("iso-w", False, True), ("iso-topic", True, True)):
        q = _isotonic(sl, incl, preds, per_topic, weighted)
        lam_q = oracle_weight(sl, incl, q)
        variants[name] = (q, lam_q, lam_q)
    variants["truth"] = (sl.labels, 1.0, 1.0)
    variants["truth-shrunk"] = (sl.labels, _shrunk(1.0, incl), 1.0)    # what the shrink alone leaves
    rows, decomp = [], []
    key = (col.name, trial, budget)
    for name, (p, lam, shown) in variants.items():
        v = design_variance(sl, incl, p, lam)
        rows.append((*key, "rank", name, float(shown), *_ratios(v, v0)))
    # what the estimator's own standard errors say on this sample (estimated, not design, variances)
    for form in ("jackknife", "linearised"):
        se = np.sqrt(np.diag(assisted_measures(runs, sample, probs, inclusion=incl, cutoffs=(), depth=DEPTH,
                                                variance=form).covariance["AP"]))
        se0 = np.sqrt(np.diag(assisted_measures(runs, sample, probs, weight=0.0, inclusion=incl, cutoffs=(),
                                                 depth=DEPTH, variance=form).covariance["AP"]))
        rows.append((*key, "rank", f"est-{form}", float(lam_hat), float(se.mean() / se0.mean()),
                     float(np.median(se / se0)), float(np.sqrt((se**2).sum() / (se0**2).sum())), float(se.mean())))
    # another design at the same budget: proportional to the AP-prior of the runs' ranks
    prior = {}
    for t in sl.topics:
        prior[t] = prior_inclusion(_ranks(base[t], sample[t].docnos), budget, DEPTH)
    vp0 = design_variance(sl, prior, None)
    lam_p = oracle_weight(sl, prior, preds)
    vp = design_variance(sl, prior, preds, lam_p)
    rows.append((*key, "prior", "statAP", 0.0, *_ratios(vp0, v0)))
    rows.append((*key, "prior", "oracle", lam_p, *_ratios(vp, v0)))
    rows.append((*key, "prior", "oracle/own-statAP", lam_p, *_ratios(vp, vp0)))
    # decomposition of V0 and V(λ*), summed over runs
    for name, p, lam in (("V0", None, 0.0), ("Vstar", preds, lam_star)):
        terms = design_variance_terms(sl, incl, p, lam)
        total = sum(float(v.sum()) for v in terms.values())
        by_stratum = np.zeros(3)
        by_rel = np.zeros(2)
        by_topic = []
        for t in sl.topics:
            per_doc = terms[t].sum(axis=0)
            by_stratum += np.bincount(sample[t].strata, weights=per_doc, minlength=3)[:3]
            by_rel += np.bincount(sl.labels[t].astype(int), weights=per_doc, minlength=2)
            by_topic.append(per_doc.sum())
        by_topic = np.sort(np.array(by_topic))[::-1] / total
        for s in range(3):
            decomp.append((*key, name, STRATA[s], by_stratum[s] / total))
        decomp.append((*key, name, "relevant", by_rel[1] / total))
        decomp.append((*key, name, "nonrelevant", by_rel[0] / total))
        decomp.append((*key, name, "top 5 topics", float(by_topic[:5].sum())))
        decomp.append((*key, name, "top 10% topics", float(by_topic[:max(1, len(by_topic) // 10)].sum())))
        decomp.append((*key, name, "effective topics", float(1.0 / np.sum(by_topic**2))))
    # the model's weighted fit: the uncentred R² of x on p with the variance weights, and the share of the
    # variance weight on relevant documents with p < 0.1
    w_all = np.concatenate([(1 - incl[t]) / incl[t] * np.sum(sl.slopes[t] ** 2, axis=0) for t in sl.topics])
    x_all = np.concatenate([sl.labels[t] for t in sl.topics])
    p_all = np.concatenate([preds[t] for t in sl.topics])
    rel = x_all > 0
    w_rel = w_all[rel].sum()
    r2 = np.sum(w_all * x_all * p_all) ** 2 / (np.sum(w_all * x_all**2) * np.sum(w_all * p_all**2))
    decomp.append((*key, "model", "R2_w (uncentred)", float(r2)))
    decomp.append((*key, "model", "relevant weight at p<0.1", float(w_all[rel & (p_all < 0.1)].sum() / w_rel)))
    decomp.append((*key, "model", "relevant weight at p>=0.5", float(w_all[rel & (p_all >= 0.5)].sum() / w_rel)))
    decomp.append((*key, "model", "mean p relevant (weighted)", float(np.sum(w_all[rel] * p_all[rel]) / w_rel)))
    decomp.append((*key, "model", "mean shrink m/(m+50)", float(np.mean(list(_shrunk(1.0, incl).values())))))
    return rows, decomp


def _shrunk(lam: float, incl) -> dict[str, float]:
    """The estimator's per-topic weight ``λ · m_t/(m_t + 50)``, ``m_t = Σ π`` (:func:`assisted_measures`)."""
    return {t: lam * float(pi.sum()) / (float(pi.sum()) + SHRINK) for t, pi in incl.items()}


def _ranks(tr, docnos) -> np.ndarray:
    return tr.ranks[pd.Index(tr.docnos).get_indexer(docnos)]


def _best(tr, docnos) -> np.ndarray:
    r = _ranks(tr, docnos)
    return np.where(r > 0, r, np.iinfo(np.int32).max).min(axis=1)


ROW_COLUMNS = ["collection", "trial", "budget", "design", "variant", "weight", "ratio", "ratio_median",
               "ratio_pooled", "mean_se"]
DECOMP_COLUMNS = ["collection", "trial", "budget", "variance", "part", "share"]


def compute(args) -> None:
    col = load_collection(args.collection, name=args.name)
    runs, qrels, topics = col.runs(col.run_names), col.qrels(), col.topics()
    base = RankData.build(runs, None, depth=DEPTH, topics=topics)
    truth = pool_judgments(base, qrels)
    unknown = sorted(set(args.budgets) - set(BUDGETS))
    if unknown:
        raise SystemExit(f"--budgets: {unknown} not among the cached budgets {list(BUDGETS)}")
    try:
        trials = [int(t) for t in args.trials.split(",")]
    except ValueError:
        raise SystemExit(f"--trials: comma-separated integers, got {args.trials!r}") from None
    rows, decomp = [], []
    for trial in trials:
        path = Path(args.cache) / f"{col.name}_{trial}.pkl"
        if not path.is_file():
            raise SystemExit(f"--cache: {path} is missing (run studies/sampling_variants.py fit {args.collection} "
                             f"--cache {args.cache} --folds {FOLDS} first)")
        with open(path, "rb") as fh:
            rec = pickle.load(fh)
        if FOLDS not in next(iter(rec["budgets"].values()))["folds"]:
            raise SystemExit(f"--cache: {path} holds no {FOLDS}-fold fits")
        for bi, budget in enumerate(BUDGETS):
            if budget not in args.budgets:
                continue
            r, d = bound_rows(col, runs, truth, base, rec["budgets"][budget], trial, bi, budget)
            rows += r
            decomp += d
            print(f"{col.name} trial {trial} budget {budget}: done", file=sys.stderr, flush=True)
    pd.DataFrame(rows, columns=ROW_COLUMNS).to_csv(args.out, index=False)
    pd.DataFrame(decomp, columns=DECOMP_COLUMNS).to_csv(Path(args.out).with_suffix(".decomp.csv"), index=False)


def summary(args) -> None:
    rows = pd.concat([pd.read_csv(p) for p in args.tables], ignore_index=True)
    decomp = pd.concat([pd.read_csv(Path(p).with_suffix(".decomp.csv")) for p in args.tables], ignore_index=True)
    g = rows.groupby(["collection", "design", "variant", "budget"], sort=False)
    tab = g.agg(ratio=("ratio", "mean"), median=("ratio_median", "mean"), pooled=("ratio_pooled", "mean"),
                weight=("weight", "mean"), mean_se=("mean_se", "mean"),
                samples=("trial", "nunique")).reset_index()
    for value, digits in (("ratio", 3), ("weight", 3), ("pooled", 3), ("mean_se", 4)):
        print(tab.pivot_table(index=["collection", "design", "variant"], columns="budget", values=value,
                              sort=False).round(digits).to_markdown())
        print()
    d = decomp.groupby(["collection", "variance", "part", "budget"], sort=False).share.mean().reset_index()
    print(d.pivot_table(index=["collection", "variance", "part"], columns="budget", values="share",
                        sort=False).round(3).to_markdown())


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "summary":
        ap = argparse.ArgumentParser(description="markdown tables of bound tables")
        ap.add_argument("action")
        ap.add_argument("tables", nargs="+")
        summary(ap.parse_args())
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("collection")
    ap.add_argument("--name", default=None)
    ap.add_argument("--cache", required=True, help="studies/sampling_variants.py fit's cache (5 folds)")
    ap.add_argument("--trials", default="0,1,2")
    ap.add_argument("--budgets", default="0.05,0.1,0.2", type=lambda s: tuple(float(b) for b in s.split(",")))
    ap.add_argument("--out", required=True)
    compute(ap.parse_args())


if __name__ == "__main__":
    main()
