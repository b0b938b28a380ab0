"""An automatic assessor's labels of every pooled document as the predictor of the sampling estimates: does a 5%
random human sample still give honest intervals of MAP, and how much narrower than the sample alone's
(docs/notes/assessor-sampling.md)?

Each trial of a collection draws the sampling study's sample (:func:`bayeval.experiments.sampling.
prepare_sampling_trial`, then :func:`~bayeval.experiments.sampling.draw_pool_sample` at ``--budget``, strata by
best rank at rates 10 : 5 : 2) and a simulated assessor's grade of every pooled document
(:func:`bayeval.experiments.auto_labels.simulate_labels`, the TREC RAG 2025 confusion of UMBRELA with people),
once per error mode on the same sample: ``independent`` and ``correlated`` (nonrelevant documents in the top
``--favour-depth`` of the trial's favoured runs, a share ``--favour-share`` of the runs drawn per trial, labelled
as relevant ones with probability ``--strength``). Methods (rows of the sampling study's trial table,
:data:`bayeval.experiments.sampling.SAMPLING_COLUMNS`; ``collection`` is ``NAME/MODE``, ``manual`` marks the
trial's favoured runs, and pairs with one, in both modes):

- ``sample``: statAP, the sample alone (no labels);
- ``labels-model``: the default model with the labels (``estimate_probabilities(..., labels=[...])``) fitted on
  the sample, E and Var of MAP and P(ΔMAP < 0) from its posterior (200 draws of p, the delta method): the
  model alone, nothing design-based;
- ``labels-assisted``: that model cross-fitted (5 folds) as the predictor of the model-assisted estimate
  (:func:`bayeval.sampling.anchored_measures` or :func:`~bayeval.sampling.assisted_measures` by the sample's
  size, as ``evaluate_assisted``): prediction-powered, the sample corrects what the labels get wrong;
- ``labels-combined``: the two above combined by empirical Bayes (share 0.5);
- ``assisted``: the model-assisted estimate without labels (the rank evidence only; ``--no-baseline`` drops it),
  computed once per trial (it does not depend on the labels).

The truth is MAP at ``--depth`` with every pooled document judged. Statistics (``stats``): per collection, mode
and method the coverage of the 95% interval of MAP with its Monte Carlo standard error over trials (a trial's
runs share a sample), the mean width and its ratio to ``sample``'s, the bias; for favoured runs apart; and for
the pairs the share called at ≥ 0.95 and right::

    python studies/assessor_sampling.py run trec8=../shared/data/trec8 robust03=../shared/data/robust03 \\
        dl20=../shared/data/dl20-passage:2:condense --trials 20 --out /tmp/as.parquet
    python studies/assessor_sampling.py stats /tmp/as.parquet

**Reuse** (``reuse``): the robustness protocol of docs/calibration.md (k = 10 runs, c = 2 judged by the RTC
selection to α = 0.95, depth 100; :func:`bayeval.experiments.robustness.prepare_trial` and its ``rtc`` selection),
the default model fitted by Laplace with the unseen relevant documents in R_t (as the study's ``bayes``), P(ΔMAP < 0)
by ``mc`` (1,000 draws over 200 draws of p), for every pair of the 10 runs; without labels (``none``: pure reuse),
and with the assessor's labels of every document the 10 runs retrieve — the held-out runs' own documents
included —, errors ``independent`` or ``correlated`` (favoured: two held-out runs drawn per trial). A trial
whose selection decided without judging anything is skipped (no map can be learned; the log says which)::

    python studies/assessor_sampling.py reuse trec8=../shared/data/trec8 --trials 40 --out /tmp/reuse.parquet
    python studies/assessor_sampling.py reuse-stats /tmp/reuse.parquet

A collection is ``NAME=DIR[:LEVEL[:condense]]`` (LEVEL the least relevant grade; ``condense``: runs keep only the
judged documents). The confusion is learned from ``--source`` (a directory with ``qrels-human.txt.gz`` and
``labels-umbrela.txt.gz``); ``--sharpen W`` simulates a better assessor, each row of the confusion moved a share W
of the way to agreement (:meth:`~bayeval.experiments.auto_labels.LabelConfusion.sharpened`; give the collection
another NAME). The table is resumed: a (collection, trial) already in it is skipped.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from bayeval.data import AssessorLabels, Qrels, RankData
from bayeval.defaults import DEFAULT_MODEL
from bayeval.expected import compare_systems, expected_measures
from bayeval.experiments import load_collection
from bayeval.experiments.auto_labels import SIMULATION_MODES, fit_label_confusion, simulate_labels
from bayeval.experiments.robustness import STUDY_STRATEGIES, RobustnessConfig, prepare_trial
from bayeval.experiments.sampling import (
    SAMPLING_COLUMNS,
    SamplingStudyConfig,
    draw_pool_sample,
    pool_judgments,
    prepare_sampling_trial,
    sampling_statistics,
    trial_rows,
)
from bayeval.experiments.sampling_methods import BudgetSample, MethodEstimate, SamplingTrial
from bayeval.io import read_qrels
from bayeval.relevance import estimate_probabilities
from bayeval.relevance.unseen import with_unseen

METHODS = ("sample", "labels-model", "labels-assisted", "labels-combined", "assisted")
ASSESSOR = "assessor"


@dataclass(frozen=True, eq=False)
class LabelledTrial(SamplingTrial):
    """A sampling trial whose relevance model also sees an automatic assessor's labels of every pooled document."""

    labels: AssessorLabels | None = None
    p_draws: int | None = None

    def fit(self, judgments: Qrels):
        return estimate_probabilities(self.rank_data(judgments), self.config.model, fit="map",
                                      p_draws=self.p_draws, seed=self.trial,
                                      labels=None if self.labels is None else [self.labels])


def model_estimate(tr: SamplingTrial, est, judged: Qrels, n_judged: int) -> MethodEstimate:
    """The model alone: E and Var of every run's MAP and of the trial pairs' ΔMAP, P(ΔMAP < 0) (delta method)."""
    data = tr.rank_data(judged)
    evm = expected_measures(data, est, measures="AP", method="delta")
    pairs = list(zip(tr.pair_a.tolist(), tr.pair_b.tolist(), strict=True))
    cmp = compare_systems(data, est, pairs=pairs, method="delta")
    return MethodEstimate(evm.all_expected[0], evm.all_variance[0], cmp.all_expected, cmp.all_variance,
                          cmp.all_p_less, n_judged)


def parse_collection(spec: str) -> tuple[str, Path, int, bool]:
    name, _, rest = spec.partition("=")
    if not rest:
        raise SystemExit(f"collection: NAME=DIR[:LEVEL[:condense]], got {spec!r}")
    parts = rest.split(":")
    level = int(parts[1]) if len(parts) > 1 and parts[1] else 1
    return name, Path(parts[0]), level, len(parts) > 2 and parts[2] == "condense"


def assessor_labels(sim) -> AssessorLabels:
    return AssessorLabels.from_frame(sim.to_frame(), ASSESSOR, "grades")


def run_trial(name: str, collection, config: SamplingStudyConfig, confusion, trial: int, args) -> pd.DataFrame:
    """Every method's rows of one trial: one sample, then per error mode fresh labels."""
    rng = np.random.default_rng([config.seed, trial])
    base = prepare_sampling_trial(collection, config, trial, rng)
    sample, incl = draw_pool_sample(base.base, base.qrels, config.budgets[0], rng, design=config.design,
                                    per_topic=config.per_topic)
    fav_rng = np.random.default_rng([config.seed, trial, 7])
    n_fav = max(2, int(round(args.favour_share * len(base.names))))
    favoured = tuple(sorted(fav_rng.choice(np.array(base.names, dtype=object), size=n_fav, replace=False)))
    fields = {f: getattr(base, f) for f in ("config", "trial", "runs", "topics", "base", "qrels", "truth",
                                            "true_map", "pair_a", "pair_b")}
    frames = []

    def rows(label: str, tr: SamplingTrial, method: str, est: MethodEstimate, seconds: float, mode: str):
        f = trial_rows(f"{name}/{label}", tr, config.budgets[0], method, est, sum(len(s) for s in sample.values()),
                       seconds)
        return f.assign(mode=mode, favoured=",".join(favoured))

    plain = BudgetSample(LabelledTrial(**fields, manual=frozenset(favoured)), 0, sample, incl)
    t0 = time.perf_counter()
    est = plain.estimate("sample")
    for mode in args.modes:
        frames.append(rows(mode, plain.trial, "sample", est, time.perf_counter() - t0, mode))
    if args.baseline:
        t0 = time.perf_counter()
        est = plain.estimate("assisted")
        for mode in args.modes:
            frames.append(rows(mode, plain.trial, "assisted", est, time.perf_counter() - t0, mode))
    for k, mode in enumerate(args.modes):
        sim = simulate_labels(base.truth, confusion, mode=mode, runs=base.runs, favoured=favoured,
                              strength=args.strength, favour_depth=args.favour_depth,
                              seed=int(config.seed * 1_000_003 + trial * 10 + k))
        labels = assessor_labels(sim)
        tr = LabelledTrial(**fields, manual=frozenset(favoured), labels=labels)
        b = BudgetSample(tr, 0, sample, incl)
        t0 = time.perf_counter()
        post = LabelledTrial(**fields, manual=frozenset(favoured), labels=labels, p_draws=200).fit(b.judged)
        model = model_estimate(tr, post, b.judged, b.n_judged)
        b = BudgetSample(tr, 0, sample, incl, known={"model": model})
        frames.append(rows(mode, tr, "labels-model", model, time.perf_counter() - t0, mode))
        t0 = time.perf_counter()
        assisted = b.estimate("assisted")
        frames.append(rows(mode, tr, "labels-assisted", assisted, time.perf_counter() - t0, mode))
        t0 = time.perf_counter()
        frames.append(rows(mode, tr, "labels-combined", b.estimate("combined"), time.perf_counter() - t0, mode))
    return pd.concat(frames, ignore_index=True)


def load_confusion(source: Path):
    return fit_label_confusion(read_qrels(source / "qrels-human.txt.gz"),
                               read_qrels(source / "labels-umbrela.txt.gz"))


def cmd_run(args) -> int:
    confusion = load_confusion(Path(args.source)).sharpened(args.sharpen)
    out = Path(args.out)
    table = pd.read_parquet(out) if out.exists() else None
    for spec in args.collections:
        name, path, level, condense = parse_collection(spec)
        collection = load_collection(path, relevance_level=level, condense=condense)
        config = SamplingStudyConfig(budgets=(args.budget,), depth=args.depth, pairs=args.pairs, seed=args.seed,
                                     relevance_level=level, methods=("sample", "model", "assisted", "combined"))
        for trial in range(args.trials):
            if table is not None and ((table.collection.str.startswith(f"{name}/")) & (table.trial == trial)).any():
                continue
            t0 = time.perf_counter()
            frame = run_trial(name, collection, config, confusion, trial, args)
            table = frame if table is None else pd.concat([table, frame], ignore_index=True)
            table.to_parquet(out, index=False)
            print(f"{name} trial {trial}: {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    return 0


def study_statistics(table: pd.DataFrame) -> pd.DataFrame:
    """Per collection/mode × method × run group (favoured, other, all): coverage ± its standard error over
    trials, mean width and its ratio to ``sample``'s width on the same trials, bias, pairs called at ≥ 0.95."""
    stats = sampling_statistics(table[list(SAMPLING_COLUMNS)])
    stats["group"] = stats.group.map({"manual": "favoured", "automatic": "other", "all": "all"})
    ref = stats[stats.method == "sample"].set_index(["collection", "group"]).width
    stats["width_ratio"] = stats.width.to_numpy() / ref.reindex(
        pd.MultiIndex.from_frame(stats[["collection", "group"]])).to_numpy()
    runs = table[table.kind == "run"]
    seconds = runs.groupby(["collection", "method", "trial"]).seconds.first().groupby(["collection", "method"]).mean()
    stats["seconds"] = seconds.reindex(pd.MultiIndex.from_frame(stats[["collection", "method"]])).to_numpy()
    return stats[["collection", "method", "group", "n", "trials", "coverage", "coverage_se", "above", "below",
                  "width", "width_ratio", "bias", "rmse", "calls95", "right95", "right99", "judged_share", "seconds"]]


def mode_shift(table: pd.DataFrame) -> pd.DataFrame:
    """What the correlated errors do, paired on the same sample: per collection, method and run group (favoured,
    other) the mean over runs and trials of a run's MAP estimate with correlated labels minus with independent
    ones, and its standard error over trials (a trial's runs share a sample)."""
    runs = table[(table.kind == "run") & table.method.str.startswith("labels-")]
    runs = runs.assign(name=runs.collection.str.split("/").str[0])
    wide = runs.pivot_table(index=["name", "method", "trial", "run_a", "manual"], columns="mode",
                            values="estimate").reset_index()
    if not {"independent", "correlated"} <= set(wide.columns):
        return pd.DataFrame()
    wide["shift"] = wide.correlated - wide.independent
    wide["group"] = np.where(wide.manual, "favoured", "other")
    per_trial = wide.groupby(["name", "method", "group", "trial"])["shift"].mean()
    out = per_trial.groupby(["name", "method", "group"]).agg(["mean", "std", "count"])
    out["se"] = out["std"] / np.sqrt(out["count"])
    return out.rename(columns={"mean": "shift", "count": "trials"})[["shift", "se", "trials"]].reset_index()


def cmd_stats(args) -> int:
    table = pd.read_parquet(args.table)
    stats = study_statistics(table)
    groups = args.groups.split(",")
    with pd.option_context("display.width", 250, "display.max_rows", 500, "display.max_columns", 30):
        print(stats[stats.group.isin(groups)].round(4).to_string(index=False))
        shift = mode_shift(table)
        if len(shift):
            print("\nMAP estimate with correlated minus with independent labels (same samples):")
            print(shift.round(4).to_string(index=False))
    return 0


REUSE_COLUMNS = ("collection", "trial", "labels", "run_a", "run_b", "manual", "favoured", "p_less", "truth",
                 "judgments", "seconds")


def reuse_trial(name: str, collection, confusion, trial: int, args) -> pd.DataFrame:
    """One robustness trial: the RTC selection's judgments, then P(ΔMAP < 0) of every pair without labels and with
    the assessor's labels of every document the k runs retrieve, in each error mode."""
    cfg = RobustnessConfig(depth=args.depth)
    ctx = prepare_trial(collection, cfg, trial)
    sel = STUDY_STRATEGIES["rtc"].select(ctx, {})
    if not sel.history:      # decided without a judgment: no map from labels to relevance can be learned
        return pd.DataFrame({c: [] for c in REUSE_COLUMNS})
    data = RankData.build(ctx.runs_k, ctx.judged(sel), depth=cfg.depth, topics=ctx.topics)
    truth_data = RankData.build(ctx.runs_k, ctx.qrels, depth=cfg.depth, topics=ctx.topics)
    true_map = expected_measures(truth_data, default_p=0.0, method="delta").all_expected[0]
    pool = pool_judgments(RankData.build(ctx.runs_k, None, depth=cfg.depth, topics=ctx.topics), ctx.qrels)
    names = list(ctx.names)
    held_out = names[cfg.c:]
    favoured = tuple(sorted(np.random.default_rng([args.seed, trial, 7]).choice(held_out, size=2, replace=False)))
    ia, ib = np.triu_indices(len(names), 1)
    manual = np.array([n in collection.manual for n in names])
    fav = np.array([n in favoured for n in names])
    fit_seed = int(ctx.s_fit.generate_state(1)[0])
    frames = []
    for k, mode in enumerate(("none", *args.modes)):
        t0 = time.perf_counter()
        labels = None
        if mode != "none":
            sim = simulate_labels(pool, confusion, mode=mode, runs=ctx.runs_k, favoured=favoured,
                                  strength=args.strength, favour_depth=args.favour_depth,
                                  seed=int(args.seed * 1_000_003 + trial * 10 + k))
            labels = [assessor_labels(sim)]
        est = estimate_probabilities(data, DEFAULT_MODEL, fit="laplace", p_draws=200, seed=fit_seed, draws=200,
                                     chains=1, labels=labels)
        d2, est = with_unseen(data, est, seed=fit_seed)
        cmp = compare_systems(d2, est, pairs=list(zip(ia.tolist(), ib.tolist(), strict=True)), method="mc",
                              draws=cfg.mc_draws, seed=int(ctx.s_mc.generate_state(1)[0]))
        frames.append(pd.DataFrame({"collection": name, "trial": trial, "labels": mode,
                                    "run_a": np.array(names)[ia], "run_b": np.array(names)[ib],
                                    "manual": manual[ia] | manual[ib], "favoured": fav[ia] | fav[ib],
                                    "p_less": cmp.all_p_less, "truth": true_map[ia] - true_map[ib],
                                    "judgments": len(sel.history), "seconds": time.perf_counter() - t0}))
    return pd.concat(frames, ignore_index=True)[list(REUSE_COLUMNS)]


def cmd_reuse(args) -> int:
    confusion = load_confusion(Path(args.source))
    out = Path(args.out)
    table = pd.read_parquet(out) if out.exists() else None
    for spec in args.collections:
        name, path, level, condense = parse_collection(spec)
        collection = load_collection(path, relevance_level=level, condense=condense)
        for trial in range(args.trials):
            if table is not None and ((table.collection == name) & (table.trial == trial)).any():
                continue
            t0 = time.perf_counter()
            frame = reuse_trial(name, collection, confusion, trial, args)
            if frame.empty:
                print(f"{name} reuse trial {trial}: the selection judged nothing, skipped", file=sys.stderr)
                continue
            table = frame if table is None else pd.concat([table, frame], ignore_index=True)
            table.to_parquet(out, index=False)
            print(f"{name} reuse trial {trial}: {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    return 0


def reuse_statistics(table: pd.DataFrame) -> pd.DataFrame:
    """Per collection × labels × pair group: pairs, Brier, the share called at ≥ 0.99 and how many of those right
    (with the Wilson 95% interval of that share), and the trials."""
    from bayeval.experiments import wilson_interval

    rows = []
    groups = {"all": lambda f: f.manual | True, "automatic": lambda f: ~f.manual, "manual": lambda f: f.manual,
              "favoured": lambda f: f.favoured}
    for (col, lab), f in table.groupby(["collection", "labels"], sort=False):
        for g, pick in groups.items():
            h = f[pick(f).to_numpy()]
            y = (h.truth < 0).to_numpy()
            pl = h.p_less.to_numpy()
            conf = np.maximum(pl, 1 - pl)
            right = (pl >= 0.5) == y
            c99 = conf >= 0.99
            lo, hi = wilson_interval(int(right[c99].sum()), int(c99.sum())) if c99.any() else (np.nan, np.nan)
            rows.append((col, lab, g, len(h), h.trial.nunique(), float(np.mean((pl - y) ** 2)),
                         float(np.mean(c99)), int(c99.sum()), float(np.mean(right[c99])) if c99.any() else np.nan,
                         lo, hi))
    return pd.DataFrame(rows, columns=["collection", "labels", "group", "pairs", "trials", "brier", "share99",
                                       "calls99", "right99", "right99_lo", "right99_hi"])


def cmd_reuse_stats(args) -> int:
    with pd.option_context("display.width", 250, "display.max_rows", 500):
        print(reuse_statistics(pd.read_parquet(args.table)).round(4).to_string(index=False))
    return 0


def _simulation_options(p) -> None:
    """The simulated assessor's options, shared by ``run`` and ``reuse``."""
    p.add_argument("--modes", type=lambda s: tuple(s.split(",")), default=SIMULATION_MODES)
    p.add_argument("--strength", type=float, default=0.5)
    p.add_argument("--favour-depth", type=int, default=20)
    p.add_argument("--source", default=str(Path(__file__).resolve().parents[2] / "shared" / "data" / "rag25-labels"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("collections", nargs="+", metavar="NAME=DIR[:LEVEL[:condense]]")
    r.add_argument("--out", required=True)
    r.add_argument("--trials", type=int, default=20)
    r.add_argument("--budget", type=float, default=0.05, help="share of each topic's pool drawn (default 0.05)")
    r.add_argument("--depth", type=int, default=100)
    r.add_argument("--pairs", type=int, default=200)
    r.add_argument("--seed", type=int, default=1)
    _simulation_options(r)
    r.add_argument("--favour-share", type=float, default=0.2)
    r.add_argument("--no-baseline", dest="baseline", action="store_false")
    r.add_argument("--sharpen", type=float, default=0.0,
                   help="a better assessor: the confusion's rows moved this share of the way to agreement "
                        "(LabelConfusion.sharpened; default 0, UMBRELA's); name the collection apart")
    r.set_defaults(func=cmd_run)
    u = sub.add_parser("reuse")
    u.add_argument("collections", nargs="+", metavar="NAME=DIR[:LEVEL[:condense]]")
    u.add_argument("--out", required=True)
    u.add_argument("--trials", type=int, default=20)
    u.add_argument("--depth", type=int, default=100)
    u.add_argument("--seed", type=int, default=1)
    _simulation_options(u)
    u.set_defaults(func=cmd_reuse)
    v = sub.add_parser("reuse-stats")
    v.add_argument("table")
    v.set_defaults(func=cmd_reuse_stats)
    s = sub.add_parser("stats")
    s.add_argument("table")
    s.add_argument("--groups", default="all,favoured")
    s.set_defaults(func=cmd_stats)
    args = ap.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
