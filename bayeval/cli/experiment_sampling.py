"""``bayeval experiment sampling``: coverage and width of intervals from a random sample of the pool."""

from __future__ import annotations

import argparse
import sys

from bayeval.cli._inputs import add_depth_argument, add_format_argument, positive_int
from bayeval.cli._output import write_frame
from bayeval.defaults import DEFAULT_MODEL

__all__ = ["register_sampling"]


def _shares(text: str) -> tuple[float, ...]:
    from bayeval.errors import BayevalInputError

    try:
        out = tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        out = ()
    if not out or any(not 0 < b <= 1 for b in out):
        raise BayevalInputError(f"--budgets: comma-separated shares in (0, 1], got {text!r}")
    return out


def _counts(text: str) -> tuple[float, ...]:
    try:
        out = tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        out = ()
    if not out or any(not b >= 1 for b in out):
        raise argparse.ArgumentTypeError(f"comma-separated judgments per topic, each >= 1, got {text!r}")
    return out


def _methods(text: str) -> tuple[str, ...]:
    from bayeval.errors import BayevalInputError
    from bayeval.experiments.sampling import SAMPLING_METHODS

    out = tuple(m.strip() for m in text.split(",") if m.strip())
    if not out or set(out) - set(SAMPLING_METHODS):
        raise BayevalInputError(f"--methods: comma-separated subset of {','.join(SAMPLING_METHODS)}, got {text!r}")
    return out


def register_sampling(studies, parser_class) -> None:
    smp = studies.add_parser("sampling", help="intervals from a random sample of the pool: sample alone, model "
                                              "alone, model-assisted (docs/sampling.md)",
                             description="Per trial and budget, a stratified random sample of each topic's pool; "
                                         "MAP intervals and P(dMAP<0) from the sample alone (statAP), the "
                                         "relevance model alone, and the model corrected by the sample.")
    acts = smp.add_subparsers(dest="action", metavar="ACTION", parser_class=parser_class)
    r = acts.add_parser("run", help="run or resume trials, writing the trial table",
                        description="Run (or resume) sampling trials; trials already in --out with every requested "
                                    "budget and method are skipped, those lacking some get only those; refused "
                                    "when the settings differ from the table's (docs/sampling.md).")
    r.add_argument("collection", metavar="DIR", help="collection directory: runs/, qrels.txt[.gz], runs.tsv")
    r.add_argument("--out", required=True, metavar="TABLE", help="trial table (.parquet or .csv), resumed if present")
    r.add_argument("--trials", type=positive_int, default=20, help="number of trials 0..N-1 (default 20)")
    r.add_argument("--name", default=None, help="collection name in the table (default: the directory's)")
    size = r.add_mutually_exclusive_group()
    size.add_argument("--budgets", type=_shares, default=None,
                      help="shares of each topic's pool judged (default 0.02,0.05,0.1,0.2)")
    size.add_argument("--per-topic", type=_counts, default=None, metavar="N[,N...]",
                      help="instead: judgments drawn in each topic (expected), e.g. 10,20,40")
    r.add_argument("--relevance-level", type=positive_int, default=1, metavar="L",
                   help="lowest grade counted relevant, by the truth, the model and the estimators (default 1)")
    r.add_argument("--condense", action="store_true",
                   help="runs keep only the documents the qrels judge, so the truth is complete where the qrels are "
                        "shallow (rows name the collection '<name>-condensed')")
    add_depth_argument(r, study=True)  # the pool and evaluation depth
    r.add_argument("--model", default=DEFAULT_MODEL,
                   help=f"relevance model configuration (default {DEFAULT_MODEL}, the model of every other command)")
    r.add_argument("--pairs", type=positive_int, default=200, help="run pairs per trial (default 200)")
    r.add_argument("--seed", type=int, default=1, help="study seed (default 1)")
    r.add_argument("--folds", type=int, default=5,
                   help="cross-fitting folds of the model-assisted predictions (default 5; 0: the model fitted "
                        "on the whole sample that corrects it, for comparison)")
    r.add_argument("--variance", choices=("jackknife", "own-label", "linearised"), default="jackknife",
                   help="AP's variance estimate (default jackknife; docs/sampling.md)")
    r.add_argument("--share", type=float, default=0.5,
                   help="combined: share of the sample's error the model's estimate carries (default 0.5)")
    r.add_argument("--run-groups", action="store_true",
                   help="combined: one shift of the model per run type (runs.tsv's type: manual/automatic) "
                        "instead of one for all runs (docs/sampling.md)")
    r.add_argument("--form", choices=("auto", "anchored", "ratio"), default="auto",
                   help="assisted (and combined's design-based part): anchored, AP's expansion around the model's "
                        "expected AP estimated from the sample; ratio, the ratio of the corrected labels' sums; "
                        "auto (default): anchored below a median of 50 expected judgments a topic, ratio from 50 "
                        "(docs/sampling.md)")
    r.add_argument("--design", choices=("rank", "prior"), default="rank",
                   help="how each budget's sample is drawn: rank (default) strata by best rank 1-10/11-30/deeper "
                        "at rates 10:5:2; prior: in proportion to the AP-prior of the runs' ranks (statAP's design; "
                        "docs/sampling.md)")
    r.add_argument("--methods", type=_methods, default=None,
                   help="comma-separated subset of sample,sample-bc,sample-bcp,model,assisted,model-recal,mtc,"
                        "combined (default "
                        "sample,model,assisted; "
                        "mtc: trial 0 only)")
    r.set_defaults(func=_run)
    s = acts.add_parser("stats", help="coverage, width, RMSE, tau and proper scores per budget and method")
    s.add_argument("table", metavar="TABLE", help="trial table written by 'experiment sampling run'")
    s.add_argument("--reliability", action="store_true",
                   help="instead: reliability of P(dMAP<0) per budget and method (Wilson-interval bins)")
    add_format_argument(s)
    s.set_defaults(func=_stats)
    f = acts.add_parser("figure", help="coverage and width of the 95%% MAP interval against the budget")
    f.add_argument("table", metavar="TABLE", help="trial table written by 'experiment sampling run'")
    f.add_argument("--out", required=True, metavar="PNG", help="figure file to write (.png, .pdf or .svg)")
    f.set_defaults(func=_figure)


def _run(args: argparse.Namespace) -> int:
    import pandas as pd

    from bayeval.experiments import load_collection
    from bayeval.experiments.sampling import (
        SAMPLING_COLUMNS,
        SamplingStudyConfig,
        read_sampling_table,
        run_sampling_trial,
        sampling_resume_plan,
    )
    from bayeval.io.trials import write_table

    col = load_collection(args.collection, name=args.name, relevance_level=args.relevance_level,
                          condense=args.condense)
    budgets = args.per_topic or args.budgets or (0.02, 0.05, 0.10, 0.20)
    cfg = SamplingStudyConfig(budgets=budgets, per_topic=args.per_topic is not None,
                              relevance_level=args.relevance_level, depth=args.depth, model=args.model,
                              pairs=args.pairs,
                              seed=args.seed, folds=args.folds, variance=args.variance, share=args.share,
                              run_groups=args.run_groups, design=args.design, form=args.form,
                              **({} if args.methods is None else {"methods": args.methods}))
    import os

    for line in _size_notices(col, cfg):
        print(f"bayeval: warning: {line}", file=sys.stderr)
    frame = read_sampling_table(args.out) if os.path.exists(args.out) else None
    plan, warnings = sampling_resume_plan(frame, col.name, cfg, range(args.trials), table=args.out)
    for line in warnings:
        print(f"bayeval: warning: {line}", file=sys.stderr)
    full = {t: len(w) for t, w in sampling_resume_plan(None, col.name, cfg, range(args.trials))[0].items()}
    for trial in range(args.trials):
        missing = plan[trial]
        if not missing:
            continue
        rows = run_sampling_trial(col, cfg, trial, only=None if len(missing) == full[trial] else missing)
        frame = rows if frame is None else pd.concat([frame, rows], ignore_index=True)
        write_table(frame, args.out, SAMPLING_COLUMNS)
        if len(missing) == full[trial]:
            print(f"bayeval: trial {trial} of {col.name} written", file=sys.stderr)
        else:
            added = ", ".join(f"{m} at {b:g}" for b, m in sorted(missing))
            print(f"bayeval: trial {trial} of {col.name} completed: {added}", file=sys.stderr)
    return 0


def _size_notices(col, cfg) -> list[str]:
    """The stated minimum (:func:`bayeval.sampling.minimum_notices`) for each budget's expected judgments a topic,
    for the form of ``assisted`` (and ``sample-bcp``'s where it is run)."""
    from bayeval.data import RankData
    from bayeval.sampling import minimum_notices

    base = RankData.build(col.runs(col.run_names), None, depth=cfg.depth, topics=col.topics())
    pools = {tr.topic: int((tr.ranks > 0).any(axis=1).sum()) for tr in base}
    forms = [f for m, f in (("assisted", cfg.form), ("combined", cfg.form), ("sample-bcp", "sample-bcp"))
             if m in cfg.methods]
    out = []
    for budget in cfg.budgets:
        draws = {t: min(float(budget), n) if cfg.per_topic else float(budget) * n for t, n in pools.items()}
        for form in dict.fromkeys(forms):
            out += [f"budget {budget:g}: {line}" for line in minimum_notices(draws, cfg.relevance_level, form=form)]
    return out


def _stats(args: argparse.Namespace) -> int:
    from bayeval.experiments.sampling import read_sampling_table, sampling_reliability, sampling_statistics

    frame = read_sampling_table(args.table)
    write_frame(sampling_reliability(frame)[0] if args.reliability else sampling_statistics(frame), args.format,
                legend=_LEGEND)
    return 0


#: The columns of the sampling study's tables (docs/sampling.md).
_LEGEND = {
    "collection": "the collection", "budget": "judgments drawn at random per topic (or share of the pool)",
    "method": "the estimator", "split": "how the pairs are grouped: all, run_type (automatic/manual)",
    "group": "the run group: automatic, manual or all", "n": "intervals counted (runs × trials)",
    "trials": "trials", "coverage": "share of the 95% intervals of MAP that contain the true MAP",
    "coverage_se": "standard error of that share over trials (runs of one trial share a sample)",
    "above": "share of intervals the true MAP lies above", "below": "share it lies below",
    "width": "mean width of the intervals", "rmse": "root mean square error of the estimated MAP",
    "bias": "mean of estimated - true MAP", "tau": "Kendall τ between estimated and true MAP over the runs",
    "brier": "Brier score of P(ΔMAP < 0) over the pairs", "calls95": "share of pairs called at confidence ≥ 0.95",
    "right95": "share of those calls that are right", "right99": "share of the calls at ≥ 0.99 that are right",
    "judged_share": "judgments as a share of the pool", "pairs": "pairs scored",
    "bins": "reliability bins", "inconsistent": "bins whose Wilson interval misses the bin's mean forecast",
}


def _figure(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from bayeval.experiments.sampling import read_sampling_table, sampling_statistics

    st = sampling_statistics(read_sampling_table(args.table))
    st = st[st.group == "all"]
    cols = sorted(st.collection.unique())
    fig, axes = plt.subplots(2, len(cols), figsize=(4.5 * len(cols), 6), squeeze=False)
    for j, c in enumerate(cols):
        for method, g in st[st.collection == c].groupby("method"):
            g = g.sort_values("budget")
            axes[0, j].plot(100 * g.budget, 100 * g.coverage, marker="o", label=method)
            axes[1, j].plot(100 * g.budget, g.width, marker="o", label=method)
        axes[0, j].axhspan(93, 97, color="0.9")
        axes[0, j].set_title(c)
        axes[0, j].set_ylabel("coverage of 95% MAP interval (%)")
        axes[1, j].set_ylabel("mean interval width (log scale)")
        axes[1, j].set_yscale("log")
        axes[1, j].set_xlabel("budget (% of the pool judged)")
        axes[0, j].legend()
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    return 0
