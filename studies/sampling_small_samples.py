"""Sampled intervals at small per-topic samples: the bias decomposed, and variants scored on the study's own samples
(docs/notes/sampling-small-samples.md).

The sampling study (``bayeval experiment sampling run``) refits the relevance model for every method it runs;
this script fits once per trial and budget and stores what the fits give — the cross-fitted predictions and the
model alone's estimates — so that many estimators can be scored on the same samples. ``fit`` draws exactly the
study's samples (:func:`bayeval.experiments.sampling.prepare_sampling_trial`, then one
:func:`~bayeval.experiments.sampling.draw_pool_sample` per budget in order, the study's fold seeds); ``evaluate``
writes a trial table in the study's layout (``method`` = the variant's name) that ``bayeval experiment sampling
stats`` reads — its ``assisted``, ``sample-bcp`` and ``combined`` rows are the study's; ``decompose`` splits each
run's MAP error into the parts of the ratio estimate::

    python studies/sampling_small_samples.py fit ../shared/data/dl20-passage --condense --relevance-level 1 \\
        --per-topic 10,20,40 --trials 40 --cache /tmp/ss
    python studies/sampling_small_samples.py decompose ../shared/data/dl20-passage --condense \\
        --relevance-level 1 --per-topic 10,20,40 --trials 40 --cache /tmp/ss
    python studies/sampling_small_samples.py evaluate ../shared/data/dl20-passage --condense \\
        --relevance-level 1 --per-topic 10,20,40 --trials 40 --cache /tmp/ss --out dl1.parquet \\
        --variants assisted,sample-bcp,combined
    bayeval experiment sampling stats dl1.parquet
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from bayeval.experiments import load_collection
from bayeval.experiments.sampling import (
    SAMPLING_COLUMNS,
    SamplingStudyConfig,
    draw_pool_sample,
    prepare_sampling_trial,
    read_sampling_table,
    sampling_reliability,
    sampling_statistics,
    trial_rows,
)
from bayeval.experiments.sampling_methods import (
    SAMPLING_STRATEGIES,
    BudgetSample,
    combined_estimate,
    design_estimate,
)
from bayeval.io.trials import write_table
from bayeval.measures import evaluate
from bayeval.sampling import (
    anchored_measures,
    assisted_measures,
    corrected_measures,
    cross_fitted_predictions,
    power_bounds,
    stratum_rates,
)

#: the per-topic shrink of the tuned weight in :func:`bayeval.sampling.assisted_measures` (its default)
SHRINK = 50.0


def _config(args, methods=("assisted",)) -> SamplingStudyConfig:
    per_topic = args.per_topic is not None
    budgets = tuple(float(b) for b in (args.per_topic or args.budgets).split(","))
    return SamplingStudyConfig(budgets=budgets, per_topic=per_topic, relevance_level=args.relevance_level,
                               depth=args.depth, pairs=args.pairs, methods=methods, seed=args.seed)


def _collection(args):
    return load_collection(args.collection, name=args.name, relevance_level=args.relevance_level,
                           condense=args.condense)


def _cache_path(args, col, trial: int) -> Path:
    return Path(args.cache) / f"{col.name}-l{args.relevance_level}-{args.per_topic or args.budgets}-{trial}.pkl"


def _samples(col, cfg, trial: int):
    """The study's trial and its samples, budget by budget (the study's random stream)."""
    rng = np.random.default_rng([cfg.seed, trial])
    tr = prepare_sampling_trial(col, cfg, trial, rng)
    out = []
    for bi, budget in enumerate(cfg.budgets):
        sample, incl = draw_pool_sample(tr.base, tr.qrels, budget, rng, design=cfg.design, per_topic=cfg.per_topic)
        out.append((bi, budget, sample, incl))
    return tr, out


def fit(args) -> None:
    col, cfg = _collection(args), _config(args)
    Path(args.cache).mkdir(parents=True, exist_ok=True)
    for trial in range(args.first, args.trials):
        path = _cache_path(args, col, trial)
        if path.exists():
            continue
        t0 = time.perf_counter()
        tr, samples = _samples(col, cfg, trial)
        rec = {}
        for bi, budget, sample, incl in samples:
            bs = BudgetSample(tr, bi, sample, incl)
            rec[budget] = {"cross": bs.cross_fitted, "model": bs.estimate("model")}
        with open(path, "wb") as fh:
            pickle.dump(rec, fh)
        print(f"{col.name} level {args.relevance_level} trial {trial}: {time.perf_counter() - t0:.0f} s", flush=True)


def _cached(args, col, cfg, trial):
    path = _cache_path(args, col, trial)
    if not path.exists():
        sys.exit(f"{path}: not fitted; run 'fit' first")
    with open(path, "rb") as fh:
        rec = pickle.load(fh)
    tr, samples = _samples(col, cfg, trial)
    return tr, [BudgetSample(tr, bi, sample, incl, cross_fitted=rec[budget]["cross"],
                             known={"model": rec[budget]["model"]})
                for bi, budget, sample, incl in samples]


def _truth(tr):
    """Every run's true AP per topic (S, T) and every topic's R, on the pool's complete judgments."""
    frame = evaluate(tr.rank_data(tr.truth), "AP").to_frame()
    frame = frame[frame.topic != "all"].pivot(index="run", columns="topic", values="value")
    ap = frame.reindex(index=list(tr.names), columns=list(tr.base.topics)).to_numpy()
    level = tr.qrels.relevance_level
    r = np.array([float((tr.truth[t].grades >= level).sum()) for t in tr.base.topics])
    return ap, r


def _topic_parts(ev, bs: BudgetSample, probs, lam_t, r_true, ap_true):
    """Per run and topic: N̂ (the numerator as the estimator has it), R̂ before and after its floor, the
    topic's sampled relevant count and draws, for an evaluation ``ev`` of :func:`assisted_measures`."""
    level = bs.trial.qrels.relevance_level
    topics = bs.trial.base.topics
    r_raw, r_used, n_rel, n_draw = (np.zeros(len(topics)) for _ in range(4))
    for ti, t in enumerate(topics):
        ts, pi = bs.sample[t], bs.inclusion[t]
        p = np.zeros(len(ts)) if probs is None else probs.lookup(t, ts.docnos, 0.0)
        x = (ts.grades >= level).astype(float)
        smp = ts.sampled
        lt = lam_t(pi)
        r_raw[ti] = lt * p.sum() + np.sum((x - lt * p)[smp] / pi[smp])
        n_rel[ti], n_draw[ti] = x[smp].sum(), smp.sum()
        r_used[ti] = max(r_raw[ti], n_rel[ti])
    unclipped = ev.unclipped["AP"]
    num = unclipped * r_used[None, :]
    return num, r_raw, r_used, n_rel, n_draw


def _decompose_one(name, ev, bs, probs, lam_t, ap_true, r_true, ratio=None):
    """Rows of one estimator on one sample: the MAP error of every run split into its parts — the numerator's
    error ``N̂/R - AP``, the denominator's ``N̂/R̂ - N̂/R``, R̂'s floor, the bias correction (``ratio``: the
    uncorrected evaluation, statAP for ``sample-bc``), the projection onto [0, 1], and the mean over the
    informative topics against the mean over all."""
    num, r_raw, r_used, n_rel, n_draw = _topic_parts(ratio or ev, bs, probs, lam_t, r_true, ap_true)
    inf = ev.informative
    vals = ev.values["AP"]
    with np.errstate(divide="ignore", invalid="ignore"):
        raw = np.where(r_raw > 0, num / r_raw, 0.0)
        floored = np.where(r_used > 0, num / r_used, 0.0)
        at_truth = num / r_true
    est_map, _ = ev.mean("AP")
    rows = []
    for s, run in enumerate(bs.trial.names):
        i = inf & ~np.isnan(vals[s])
        rows.append({"estimator": name, "run": run, "truth": bs.trial.true_map[s], "estimate": est_map[s],
                     "numerator": np.mean(at_truth[s, i] - ap_true[s, i]),
                     "denominator": np.mean(raw[s, i] - at_truth[s, i]),
                     "floor": np.mean(floored[s, i] - raw[s, i]),
                     "correction": np.mean(ev.unclipped["AP"][s, i] - floored[s, i]),
                     "clipping": np.mean(vals[s, i] - ev.unclipped["AP"][s, i]),
                     "informative": np.mean(ap_true[s, i]) - bs.trial.true_map[s],
                     "topics_empty": float(np.mean(~inf)), "relevant_drawn": float(np.mean(n_rel)),
                     "draws": float(np.mean(n_draw)), "r_error": float(np.mean(np.abs(r_raw - r_true) / r_true)),
                     "clipped": float(np.mean(vals[s, i] != ev.unclipped["AP"][s, i]))})
    return rows


def _by_relevant_drawn(name, ev, bs, ap_true, level):
    """The per-topic error of the estimate by the number of relevant documents drawn in the topic."""
    topics = bs.trial.base.topics
    n_rel = np.array([float(((bs.sample[t].grades >= level) & bs.sample[t].sampled).sum()) for t in topics])
    err = ev.values["AP"] - ap_true
    unc = ev.unclipped["AP"] - ap_true
    rows = []
    for ti in range(len(topics)):
        ok = ~np.isnan(err[:, ti])
        rows.append({"estimator": name, "relevant_drawn": n_rel[ti], "informative": bool(ev.informative[ti]),
                     "error": float(np.mean(err[ok, ti])), "error_unclipped": float(np.mean(unc[ok, ti]))})
    return rows


def decompose(args) -> None:
    col = _collection(args)
    cfg = _config(args)
    rows, by_rel = [], []
    for trial in range(args.first, args.trials):
        tr, samples = _cached(args, col, cfg, trial)
        ap_true, r_true = _truth(tr)
        for bs in samples:
            budget = cfg.budgets[bs.index]
            runs, kw = tr.runs, {"inclusion": bs.inclusion, "cutoffs": (), "depth": cfg.depth,
                                 "relevance_level": cfg.relevance_level}
            lam = None
            for name, probs, weight, shrink in (("statAP", None, 0.0, SHRINK),
                                                ("assisted", bs.cross_fitted, None, SHRINK),
                                                ("assisted-unshrunk", bs.cross_fitted, None, 0.0),
                                                ("lambda-1", bs.cross_fitted, 1.0, 0.0)):
                ev = assisted_measures(runs, bs.sample, probs, weight=weight, shrink=shrink, **kw)
                lam = ev.weight

                def lam_t(pi, lam=lam, weight=weight, shrink=shrink):
                    m = float(pi.sum())
                    return lam if weight is not None else lam * m / (m + shrink)

                for r in _decompose_one(name, ev, bs, probs, lam_t, ap_true, r_true):
                    rows.append({"trial": trial, "budget": budget, "weight": lam, **r})
                by_rel += [{"trial": trial, "budget": budget, **r}
                           for r in _by_relevant_drawn(name, ev, bs, ap_true, cfg.relevance_level)]
            stat = assisted_measures(runs, bs.sample, None, weight=0.0, **kw)
            bc = corrected_measures(runs, bs.sample, inclusion=bs.inclusion, depth=cfg.depth,
                                    relevance_level=cfg.relevance_level)
            for r in _decompose_one("sample-bc", bc, bs, None, lambda pi: 0.0, ap_true, r_true, ratio=stat):
                rows.append({"trial": trial, "budget": budget, "weight": 0.0, **r})
            by_rel += [{"trial": trial, "budget": budget, **r}
                       for r in _by_relevant_drawn("sample-bc", bc, bs, ap_true, cfg.relevance_level)]
        print(f"trial {trial} decomposed", file=sys.stderr, flush=True)
    frame = pd.DataFrame(rows)
    frame["bias"] = frame.estimate - frame.truth
    parts = ["bias", "numerator", "denominator", "floor", "correction", "clipping", "informative", "weight",
             "topics_empty", "relevant_drawn", "draws", "r_error", "clipped"]
    table = frame.groupby(["budget", "estimator"], sort=True)[parts].mean()
    print(f"# {col.name}, relevance level {cfg.relevance_level}, {frame.trial.nunique()} samples a budget")
    print(table.round(4).to_string())
    rel = pd.DataFrame(by_rel)
    rel["drawn"] = pd.cut(rel.relevant_drawn, [-0.5, 0.5, 1.5, 2.5, 5.5, 10.5, np.inf],
                          labels=["0", "1", "2", "3-5", "6-10", ">10"])
    print("# per-topic error (mean over runs) by relevant documents drawn in the topic; share of topics")
    summary = rel.groupby(["budget", "estimator", "drawn"], observed=True).agg(
        topics=("error", "size"), error=("error", "mean"), error_unclipped=("error_unclipped", "mean"))
    summary["share"] = summary.topics / summary.groupby(level=[0, 1]).topics.transform("sum")
    print(summary.round(4).to_string())
    if args.out:
        frame.to_csv(args.out, index=False)


def _anchored(order):
    def run(bs: BudgetSample):
        cfg = bs.trial.config
        ev = anchored_measures(bs.trial.runs, bs.sample, bs.cross_fitted, order=order, inclusion=bs.inclusion,
                               cutoffs=(), depth=cfg.depth, relevance_level=cfg.relevance_level)
        return design_estimate(ev, bs)
    return run


def _switch(bs: BudgetSample):
    """anchored-2 where the sample's median expected draws a topic are below 50, else the study's ratio form."""
    m = float(np.median([float(np.sum(v)) for v in bs.inclusion.values()]))
    return _variant(bs, "anchored-2") if m < 50 else bs.estimate("assisted")


def _sample_anchored(order):
    def run(bs: BudgetSample):
        cfg, tr = bs.trial.config, bs.trial
        rates = cross_fitted_predictions(bs.sample, lambda smp: stratum_rates(smp, relevance_level=cfg.relevance_level),
                                         folds=5, seed=cfg.seed * 1_000_003 + tr.trial * 101 + bs.index)
        ev = anchored_measures(tr.runs, bs.sample, rates, order=order, inclusion=bs.inclusion, cutoffs=(),
                               depth=cfg.depth, relevance_level=cfg.relevance_level)
        return design_estimate(ev, bs)
    return run


def _variant(bs: BudgetSample, name: str):
    """A variant's estimate on ``bs``, computed once (the combinations reuse their design-based part)."""
    memo = bs.__dict__.setdefault("_variants", {})
    if name not in memo:
        memo[name] = VARIANTS[name](bs)
    return memo[name]


def _combined_with(name: str):
    def run(bs: BudgetSample):
        return combined_estimate(bs.estimate("model"), _variant(bs, name), bs)
    return run


VARIANTS: dict = {"anchored-1": _anchored(1), "anchored-2": _anchored(2), "anchored-all": _anchored("all"),
                  "sample-anchored-1": _sample_anchored(1), "sample-anchored-2": _sample_anchored(2),
                  "sample-anchored-all": _sample_anchored("all"), "combined-anchored-1": _combined_with("anchored-1"),
                  "combined-anchored-2": _combined_with("anchored-2"),
                  "combined-anchored-all": _combined_with("anchored-all"), "assisted-switch": _switch,
                  "combined-switch": _combined_with("assisted-switch")}
"""Variants scored by ``evaluate``: name -> function of a :class:`BudgetSample` returning a
:class:`~bayeval.experiments.sampling_methods.MethodEstimate`; the study's methods under their own names."""


def evaluate_variants(args) -> None:
    col = _collection(args)
    cfg = _config(args)
    names = [v for v in args.variants.split(",") if v]
    known = {**{m: SAMPLING_STRATEGIES[m].compute for m in SAMPLING_STRATEGIES}, **VARIANTS}
    bad = [v for v in names if v not in known]
    if bad:
        sys.exit(f"--variants: unknown {bad}; choose from {', '.join(known)}")
    frames = []
    for trial in range(args.first, args.trials):
        tr, samples = _cached(args, col, cfg, trial)
        for bs in samples:
            for v in names:
                t0 = time.perf_counter()
                est = bs.estimate(v) if v in SAMPLING_STRATEGIES else _variant(bs, v)
                frames.append(trial_rows(col.name, tr, cfg.budgets[bs.index], v, est, bs.n_pool,
                                         time.perf_counter() - t0))
        print(f"trial {trial} evaluated", file=sys.stderr, flush=True)
    write_table(pd.concat(frames, ignore_index=True), args.out, SAMPLING_COLUMNS)


def _cell_figures(frame: pd.DataFrame, reference: str) -> pd.DataFrame:
    """Per (collection, budget, method): coverage, its paired se against ``reference`` (per-trial coverage
    differences), width, width ÷ ``sample-bcp``'s, RMSE, right at ≥ 0.99 and the over-confident bins."""
    stats_ = sampling_statistics(frame)
    stats_ = stats_[stats_.group == "all"].set_index(["collection", "budget", "method"])
    _, bins = sampling_reliability(frame)
    bins = bins[(bins.split == "all")] if len(bins) else bins
    over = ((bins.mean_forecast > 0.5) & (bins.upper < bins.mean_forecast)) | \
        ((bins.mean_forecast < 0.5) & (bins.lower > bins.mean_forecast))
    over = bins[over].groupby(["collection", "budget", "method"]).size()
    runs = frame[frame.kind == "run"].copy()
    lo, hi = power_bounds(runs.estimate.to_numpy(), runs.se.to_numpy(), runs.power.fillna(1.0).to_numpy(), 0.95)
    runs["hit"] = ((lo <= runs.truth) & (runs.truth <= hi)).astype(float)
    per_trial = runs.groupby(["collection", "budget", "method", "trial"]).hit.mean()
    rows = []
    for (col, budget, method), st in stats_.iterrows():
        mine = per_trial.loc[(col, budget, method)]
        ref = per_trial.loc[(col, budget, reference)].reindex(mine.index)
        diff = mine - ref
        width_ref = stats_.loc[(col, budget, "sample-bcp"), "width"]
        rows.append({"collection": col, "budget": budget, "method": method, "coverage": st.coverage,
                     "paired_se": float(diff.std(ddof=1) / np.sqrt(len(diff))) if len(diff) > 1 else np.nan,
                     "width": st.width, "width_x_bcp": st.width / width_ref, "rmse": st.rmse, "bias": st.bias,
                     "right99": st.right99, "over_bins": int(over.get((col, budget, method), 0))})
    return pd.DataFrame(rows)


def _dist(c: float) -> float:
    return max(0.0, 0.93 - c, c - 0.97)


def decide(cells: pd.DataFrame, incumbent: str, candidates: list[str], large: set, floor: float,
           ties: list[str]) -> tuple[str, pd.DataFrame]:
    """The rule of docs/notes/sampling-small-samples.md (28 November 2026): eligibility against ``incumbent`` on
    the ``large`` cells ((collection, budget) pairs), then the lexicographic ranking; ``floor``: the coverage the
    small-sample cells must reach (0.92 for the default, 0.90 for the sample alone); ``ties``: the order that
    breaks a tie. Returns the adopted method and the table of each method's eligibility and keys."""
    inc = cells[cells.method == incumbent].set_index(["collection", "budget"])
    rows = []
    for m in [incumbent, *candidates]:
        mine = cells[cells.method == m].set_index(["collection", "budget"])
        small = mine[[k not in large for k in mine.index]]
        big = mine[[k in large for k in mine.index]]
        ok_large = all(_dist(big.coverage[k]) - _dist(inc.coverage[k]) <= max(big.paired_se[k], 0.01) + 1e-12
                       and big.rmse[k] <= 1.10 * inc.rmse[k] for k in big.index)
        ok_right = bool((mine.right99.fillna(1.0) >= 0.97).all())
        ok_bins = int(mine.over_bins.sum()) <= int(inc.over_bins.sum()) + 1
        rows.append({"method": m, "eligible": m == incumbent or (ok_large and ok_right and ok_bins),
                     "large_no_worse": ok_large, "right99": ok_right, "over_bins": int(mine.over_bins.sum()),
                     "cells_at_floor": int((small.coverage >= floor).sum()),
                     "cells_in_band": int(small.coverage.between(0.93, 0.97).sum()),
                     "mean_abs_from_95": float(np.mean(np.abs(small.coverage - 0.95))),
                     "width_x_bcp": float(mine.width_x_bcp.mean())})
    table = pd.DataFrame(rows)
    order = {m: i for i, m in enumerate(ties)}
    pool = table[table.eligible].to_dict("records")

    def better(a, b) -> bool:   # is a ranked before b?
        for key, tol, sign in (("cells_at_floor", 0, 1), ("cells_in_band", 0, 1), ("mean_abs_from_95", 0.003, -1),
                               ("width_x_bcp", 0.01, -1)):
            d = (a[key] - b[key]) * sign
            if d > tol:
                return True
            if d < -tol:
                return False
        return order[a["method"]] < order[b["method"]]

    best = pool[0]
    for r in pool[1:]:
        if better(r, best):
            best = r
    return best["method"], table


def score(args) -> None:
    frames = [read_sampling_table(p) for p in args.tables]
    frame = pd.concat(frames, ignore_index=True)
    large = {(c, float(b)) for c, b in (x.split(":") for x in args.large.split(","))} if args.large else set()
    large = {(c, b) for c, b in large}
    out = []
    for incumbent, candidates, floor, ties in (
            ("assisted", ["anchored-1", "anchored-2"], 0.92, ["assisted", "anchored-2", "anchored-1"]),
            ("sample-bcp", ["sample-anchored-1", "sample-anchored-2"], 0.90,
             ["sample-bcp", "sample-anchored-2", "sample-anchored-1"])):
        cells = _cell_figures(frame, incumbent)
        keep = cells[cells.method.isin([incumbent, *candidates])]
        chosen, table = decide(keep, incumbent, candidates, large, floor, ties)
        print(f"# {incumbent} against {', '.join(candidates)}: adopted {chosen}")
        print(table.to_string(index=False))
        print(keep.sort_values(["collection", "budget", "method"]).round(4).to_string(index=False))
        out.append(cells)
    combined = _cell_figures(frame, "combined")
    print("# the combinations")
    print(combined[combined.method.str.startswith("combined")].sort_values(["collection", "budget", "method"])
          .round(4).to_string(index=False))
    if args.out:
        pd.concat([*out, combined], ignore_index=True).drop_duplicates(["collection", "budget", "method"]).to_csv(
            args.out, index=False)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    for name, func in (("fit", fit), ("decompose", decompose), ("evaluate", evaluate_variants)):
        p = sub.add_parser(name)
        p.add_argument("collection")
        p.add_argument("--name", default=None)
        p.add_argument("--condense", action="store_true")
        p.add_argument("--relevance-level", type=int, default=1)
        size = p.add_mutually_exclusive_group(required=True)
        size.add_argument("--per-topic", default=None, help="judgments per topic, e.g. 10,20,40")
        size.add_argument("--budgets", default=None, help="shares of the pool, e.g. 0.05,0.1,0.2")
        p.add_argument("--depth", type=int, default=100)
        p.add_argument("--pairs", type=int, default=200)
        p.add_argument("--seed", type=int, default=1)
        p.add_argument("--trials", type=int, required=True, help="trials first..N-1")
        p.add_argument("--first", type=int, default=0)
        p.add_argument("--cache", required=True)
        p.set_defaults(func=func)
        if name == "decompose":
            p.add_argument("--out", default=None, help="also write every run's parts (csv)")
        if name == "evaluate":
            p.add_argument("--out", required=True, help="trial table (.parquet or .csv)")
            p.add_argument("--variants", required=True, help="comma-separated")
    p = sub.add_parser("score", help="the rule of the note: eligibility, ranking, adoption")
    p.add_argument("tables", nargs="+")
    p.add_argument("--large", default="", help="the large-sample cells, comma-separated collection:budget")
    p.add_argument("--out", default=None, help="every cell's figures (csv)")
    p.set_defaults(func=score)
    args = ap.parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    main()
