"""``bayeval experiment``: simulation studies over real collections.

- ``bayeval experiment robustness run DIR --trials N --out TABLE.parquet [--workers W | --scheduler ADDR]``
  runs (or resumes) the carterette2007 §4.3 robustness study on the collection in DIR
  (``runs/``, ``qrels.txt[.gz]``, optional ``runs.tsv``);
- ``bayeval experiment robustness stats TABLE [--what overall|proper|reliability|...] [--runs-info runs.tsv]``
  prints the papers' statistics of a trial table and the proper scores of P(ΔMAP < 0) (Brier, log score,
  reliability bins, sharpness; :mod:`bayeval.stats.forecast`);
- ``bayeval experiment robustness report TABLE --page PAGE.md [--figures DIR]`` writes the markdown
  page (with its figures in DIR) that docs/robustness-*.md are;
- ``bayeval experiment similarity run|stats|trajectory|report|cranfield`` — the same for the similarity
  study of Carterette & Allan (2007) (docs/similarity-*.md).
- ``bayeval experiment sparse DIR`` — one judged relevant document per topic (docs/sparse-labels.md).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys

import pandas as pd

from bayeval.cli._flags import add_progress
from bayeval.cli._inputs import add_depth_argument, add_format_argument, confidence, positive_int
from bayeval.cli.experiment_depth import register_depth
from bayeval.cli.experiment_sampling import register_sampling
from bayeval.cli.sparse import register_sparse
from bayeval.defaults import DEFAULT_MODEL
from bayeval.errors import BayevalInputError
from bayeval.methods import CONFIDENCES, FIT_METHODS

__all__ = ["register"]


def _csv_list(text: str) -> tuple[str, ...]:
    return tuple(x.strip() for x in text.split(",") if x.strip())


def _budget(text: str) -> int | None:
    if text.lower() in ("none", "0"):
        return None
    return positive_int(text)


def register(sub) -> None:
    p = sub.add_parser("experiment", help="simulation studies: robustness of reused judgments (carterette2007), "
                                          "similarity-based estimation (carterette-allan2007)",
                       description="Simulation studies over collections with complete qrels.")
    studies = p.add_subparsers(dest="study", metavar="STUDY", parser_class=type(p))
    rob = studies.add_parser("robustness", help="can the confidence be trusted when judgments are reused?",
                             description="carterette2007 §4.3: judge c of k random runs to confidence alpha, "
                                         "predict every pair of the k, score against the complete qrels.")
    acts = rob.add_subparsers(dest="action", metavar="ACTION", parser_class=type(p))

    r = acts.add_parser("run", help="run or resume trials, writing the tidy trial table",
                        description="Run (or resume) robustness trials; trials already in --out are skipped.")
    r.add_argument("collection", metavar="DIR", help="collection directory: runs/, qrels.txt[.gz], runs.tsv")
    r.add_argument("--out", required=True, metavar="TABLE", help="trial table (.parquet or .csv), resumed if present")
    r.add_argument("--trials", type=positive_int, default=200, help="number of trials 0..N-1 (default 200)")
    r.add_argument("--name", default=None, help="collection name in the table (default: the directory's)")
    r.add_argument("--k", type=positive_int, default=10, help="runs per trial (default 10)")
    r.add_argument("--c", type=positive_int, default=2, help="original runs judged per trial (default 2)")
    add_depth_argument(r, study=True)
    r.add_argument("--alpha", type=confidence, default=0.95, help="confidence that stops judging (default 0.95)")
    r.add_argument("--methods", type=_csv_list, default=("mtc", "rtc", "bayes", "ip"),
                   help="comma-separated among mtc, rtc, bayes, ip (default all)")
    r.add_argument("--confidences", type=_csv_list, default=CONFIDENCES,
                   help="comma-separated among paper, delta, exact, mc (default all)")
    r.add_argument("--budget", type=_budget, default=5000, help="judgments per selection at most (default 5000; "
                                                                 "'none' for no limit)")
    r.add_argument("--selection-config", default="rtc-mtc", help="RTC model while judging (default rtc-mtc)")
    r.add_argument("--estimate-config", default="rtc-mtc", help="model of the rtc estimate (default rtc-mtc)")
    r.add_argument("--bayes-config", default=DEFAULT_MODEL,
                   help=f"model of the bayes estimate: a hierarchical or RTC configuration (default {DEFAULT_MODEL}, "
                        "the model of every other command)")
    r.add_argument("--bayes-fit", default="laplace", choices=FIT_METHODS,
                   help="posterior of the bayes estimate (default laplace)")
    r.add_argument("--bayes-stages", default="aggregation", choices=("aggregation", "calibration+aggregation"),
                   help="stages of the bayes model that are sampled (default aggregation)")
    r.add_argument("--mc-draws", type=positive_int, default=1000, help="Monte Carlo draws (default 1000)")
    r.add_argument("--closed-form-draws", type=positive_int, default=25,
                   help="posterior draws of p the bayes closed forms (paper, delta, exact) combine by the law of "
                        "total variance (default 25 of the 200)")
    r.add_argument("--run-effect-sd", type=float, default=0.0,
                   help="sd of a random log-odds effect per run in the bayes draws (default 0: none)")
    r.add_argument("--unseen", action=argparse.BooleanOptionalAction, default=True,
                   help="add the estimated relevant documents no run retrieves to R_t of the bayes estimate "
                        "(default: yes)")
    r.add_argument("--topup", type=int, default=0, metavar="N",
                   help="top-up of the bayes estimate: N of each held-out run's unjudged documents a topic drawn "
                        "at random and judged by the qrels, the model learning the runs' levels from them "
                        "(default 0: pure reuse; docs/calibration.md)")
    r.add_argument("--relevance-level", type=int, default=1, help="lowest relevant grade (default 1)")
    r.add_argument("--condense", action="store_true",
                   help="score against condensed lists: runs keep only documents the qrels judge, so the truth is "
                        "complete where the qrels are shallow (rows name the collection '<name>-condensed')")
    r.add_argument("--seed", type=int, default=0, help="study seed (default 0)")
    _cluster_arguments(r, ": run the trials on that cluster instead")
    r.set_defaults(func=_run)

    s = _stats_action(acts, "the papers' statistics of a trial table",
                      "Confidence bins, bookmaker W, judgments, Kendall tau, paired tests.")
    s.add_argument("--what", choices=("overall", "proper", "reliability", "bins", "pair-type", "similarity", "tests"),
                   default="overall",
                   help="overall: per method, with Brier, log score and sharpness; proper: proper scores by pair type "
                        "and run type; reliability: bins of P(ΔMAP<0); bins: accuracy per confidence bin; pair-type, "
                        "similarity: breakdowns; tests: paired tests between methods (default overall)")
    s.add_argument("--runs-info", default=None, metavar="runs.tsv",
                   help="run table marking manual runs (adds the automatic/manual split; default none)")
    add_format_argument(s)
    s.set_defaults(func=_stats)

    g = _report_action(acts, "Write the markdown page of one collection's study, next to the papers.", "page title")
    g.add_argument("--paper", choices=("adhoc99", "robust05"), default="adhoc99",
                   help="carterette2007 Table 5 column quoted next to the results (default adhoc99)")
    g.add_argument("--figures", default=None, metavar="DIR",
                   help="folder (created) to write the figures into, PAGE-calibration.png, -reliability.png, "
                        "-emap.png and -tau.png (PAGE: the page's name), linked from the page")
    g.add_argument("--runs-info", default=None, metavar="runs.tsv", help="run table marking manual runs")
    g.add_argument("--tau-goal", type=float, default=None, help="mean tau goal to check (e.g. 0.60)")
    g.add_argument("--notes", default=None, metavar="FILE.md", help="hand-written reading appended to the page")
    g.add_argument("--merge", action="append", default=[], metavar="LABEL=TABLE",
                   help="add another study's methods (same seed: same runs and judgments per trial) as METHOD-LABEL "
                        "(repeatable), e.g. a bayes variant")
    g.add_argument("--command", default=None, help="the command line printed at the top (default: this one)")
    g.set_defaults(func=_report)
    _register_similarity(studies, type(p))
    register_sampling(studies, type(p))
    register_depth(studies, type(p))
    register_sparse(studies, type(p))
    p.set_defaults(func=lambda args: (p.print_help(sys.stderr), 2)[1])
    rob.set_defaults(func=lambda args: (rob.print_help(sys.stderr), 2)[1])


def _stats_action(acts, help_text: str, description: str):
    """A study's ``stats`` action: its parser with the TABLE and ``--collection`` arguments."""
    s = acts.add_parser("stats", help=help_text, description=description)
    s.add_argument("table", metavar="TABLE", help="trial table (.parquet or .csv)")
    s.add_argument("--collection", default=None, help="the collection to summarise (if the table holds several)")
    return s


def _report_action(acts, description: str, title_help: str):
    """A study's ``report`` action: its parser with TABLE, ``--page``, ``--title`` and ``--collection``."""
    g = acts.add_parser("report", help="write the markdown page (and figures) of a study", description=description)
    g.add_argument("table", metavar="TABLE", help="trial table (.parquet or .csv)")
    g.add_argument("--page", required=True, metavar="FILE.md", help="markdown page to write")
    g.add_argument("--title", default=None, help=title_help)
    g.add_argument("--collection", default=None, help="the collection to report (if the table holds several)")
    return g


def _cluster_arguments(p, scheduler_use: str = "") -> None:
    """``--workers``, ``--scheduler`` and ``--progress`` of the commands that run trials."""
    p.add_argument("--workers", type=positive_int, default=2, help="local worker processes (default 2)")
    p.add_argument("--scheduler", default=None, metavar="ADDR",
                   help=f"Dask scheduler address (tcp://host:8786){scheduler_use}")
    add_progress(p)


def _optional_int(text: str) -> int | None:
    return None if text.lower() in ("all", "none") else positive_int(text)


def _register_similarity(studies, parser_class) -> None:
    sim = studies.add_parser("similarity", help="MTC+sim vs MTC+one vs incremental pooling (carterette-allan2007)",
                             description="Carterette & Allan 2007: judge with MTC whose probabilities come from "
                                         "document similarities (MTC+sim), plus-one smoothing (MTC+one), or "
                                         "incremental pooling, until the ranking of k runs is 95% sure; score the "
                                         "ranking against the complete qrels.")
    acts = sim.add_subparsers(dest="action", metavar="ACTION", parser_class=parser_class)
    r = acts.add_parser("run", help="run or resume trials, writing the trial table",
                        description="Run (or resume) similarity-study trials; trials already in --out are skipped.")
    r.add_argument("collection", metavar="DIR", help="collection directory: runs/, qrels.txt[.gz], optional "
                                                     "texts.tsv (docno<TAB>text) and runs.tsv")
    r.add_argument("--out", required=True, metavar="TABLE", help="trial table (.parquet or .csv), resumed if present")
    r.add_argument("--trials", type=positive_int, default=50, help="number of trials 0..N-1 (default 50)")
    _similarity_settings(r)
    _cluster_arguments(r)
    r.set_defaults(func=_sim_run)

    s = _stats_action(acts, "the paper's statistics of a trial table",
                      "Judgments, Kendall tau, pairwise accuracy (all and significant pairs), W.")
    s.add_argument("--what", choices=("overall", "trials", "tests"), default="overall",
                   help="overall: per method; trials: one row per trial; tests: paired tests (default overall)")
    add_format_argument(s)
    s.set_defaults(func=_sim_stats)

    t = acts.add_parser("trajectory", help="tau as one trial's judgments accumulate (the paper's Figure 2)",
                        description="Re-run one trial, recording Kendall tau every N judgments, to a csv file.")
    t.add_argument("collection", metavar="DIR", help="collection directory: runs/, qrels.txt[.gz], optional texts")
    t.add_argument("--out", required=True, metavar="FILE.csv", help="csv of the trajectory points to write")
    t.add_argument("--trial", type=int, default=0, help="trial number (default 0)")
    t.add_argument("--every", type=positive_int, default=25, help="judgments between points (default 25)")
    t.add_argument("--judgments", type=positive_int, default=None,
                   help="judgments per method (default: as many as the first MTC method needs)")
    _similarity_settings(t)
    t.set_defaults(func=_sim_trajectory)

    g = _report_action(acts, "Write the markdown page of one collection's similarity study.",
                       "page title (default: from the collection)")
    g.add_argument("--paper-trec", default="8",
                   help="carterette-allan2007 Table 1 row quoted (3, 5-8; 'none'; default 8)")
    g.add_argument("--trajectory", default=None, metavar="FILE.csv", help="csv of 'trajectory' to plot")
    g.add_argument("--figures", default=None, metavar="DIR",
                   help="folder (created) to write the figures into, PAGE-emap.png (and -tau.png; PAGE: the page's "
                        "name), linked from the page")
    g.add_argument("--runs-info", default=None, metavar="runs.tsv", help="run table marking manual runs")
    g.add_argument("--notes", default=None, metavar="FILE.md", help="hand-written reading appended to the page")
    g.add_argument("--command", default=None, help="the command line printed at the top (default: this one)")
    g.set_defaults(func=_sim_report)

    c = acts.add_parser("cranfield", help="write Cranfield as a collection directory (8 runs, complete qrels, texts)",
                        description="Build eight retrieval runs over the Cranfield 1400 texts and write runs/, "
                                    "qrels.txt (complete: cranqrel codes 1-4 relevant) and texts.tsv.")
    c.add_argument("source", metavar="CRANFIELD_DIR", help="cran.all.1400.gz, cran.qry.gz, cranqrel.gz")
    c.add_argument("out", metavar="OUT_DIR", help="collection directory to write")
    c.add_argument("--depth", type=positive_int, default=100, metavar="D",
                   help="documents each generated run retrieves per query (default 100)")
    c.set_defaults(func=_sim_cranfield)
    sim.set_defaults(func=lambda args: (sim.print_help(sys.stderr), 2)[1])


def _similarity_settings(p) -> None:
    """The study settings shared by ``run`` and ``trajectory`` (a trajectory re-runs a trial of a study)."""
    p.add_argument("--name", default=None, help="collection name in the table (default: the directory's)")
    p.add_argument("--k", type=_optional_int, default=10, help="runs per trial, or 'all' (default 10)")
    p.add_argument("--topics", type=_optional_int, default=None, help="topics drawn per trial (default: all)")
    add_depth_argument(p, study=True)
    p.add_argument("--alpha", type=confidence, default=0.95, help="target confidence (default 0.95)")
    p.add_argument("--stop", choices=("accuracy", "decided"), default="accuracy",
                   help="stop when the expected pairwise accuracy reaches alpha (default) or every pair is decided")
    p.add_argument("--methods", type=_csv_list, default=("sim", "one", "ip"),
                   help="comma-separated among sim, one, mtc, rtc, ip (default sim,one,ip)")
    p.add_argument("--similarity", choices=("rank-profile", "texts"), default=None,
                   help="similarity of MTC+sim (default: texts when DIR/texts.tsv exists, else rank-profile)")
    p.add_argument("--similarity-config", default="similarity-default",
                   help="similarity regression configuration (default similarity-default)")
    p.add_argument("--budget", type=_budget, default=5000, help="judgments per selection at most (default 5000)")
    p.add_argument("--relevance-level", type=int, default=1, help="lowest relevant grade (default 1)")
    p.add_argument("--seed", type=int, default=0, help="study seed (default 0)")


def _sim_config(args: argparse.Namespace, col):
    from bayeval.experiments import SimilarityStudyConfig

    similarity = args.similarity or ("texts" if col.texts_path else "rank-profile")
    return SimilarityStudyConfig(k=args.k, n_topics=args.topics, depth=args.depth, alpha=args.alpha, stop=args.stop,
                                 methods=args.methods, similarity=similarity,
                                 similarity_config=args.similarity_config, budget=args.budget, seed=args.seed)


def _sim_run(args: argparse.Namespace) -> int:
    from bayeval.experiments import load_collection, run_study

    col = load_collection(args.collection, name=args.name, relevance_level=args.relevance_level)
    res = run_study(col, _sim_config(args, col), args.trials, out=args.out, workers=args.workers,
                    scheduler=args.scheduler, progress=args.progress)
    print(res.summary())
    return _failed(res)


def _sim_table(path: str, collection):
    from bayeval.experiments import SIMILARITY_COLUMNS, read_table

    return _one_collection(read_table(path, SIMILARITY_COLUMNS), collection)


#: Why a statistic of a study table can be missing (the table's one-line note instead of a column of NA).
_WHY_MISSING = {**dict.fromkeys(("wilcoxon_p", "t_p"),
                                "paired tests need two trials or more with a nonzero difference"),
                "reached": "incremental pooling has no target confidence",
                **dict.fromkeys(("W_mean", "calls_95"), "no pair with a confidence"),
                "accuracy_95": "no call at confidence 0.95 or more"}


#: The columns of the studies' statistics tables (a legend line each; shared ones are in bayeval.display.LEGENDS).
_STUDY_LEGEND = {
    "method": "the study's method (mtc, rtc, bayes: Bayesian RTC, ip: incremental pooling; sim, one: MTC with "
              "similarity, MTC with one judged document)",
    "confidence": "how P(ΔMAP < 0) was computed (the moment method, or Monte Carlo)",
    "trials": "trials of the method",
    "trial": "the trial",
    "pairs": "pairs of runs scored",
    "judgments": "judgments made in the trial",
    "reached": "share of trials (per trial: whether) the selection reached the target confidence",
    "tau": "Kendall τ between the runs' E[MAP] and their true MAP",
    "sd_tau": "sd of τ over trials",
    "sig_accuracy": "accuracy of the calls of the pairs a paired t-test over topics finds significant at 0.05 (true "
                    "MAP)",
    "sig_pairs": "share of pairs significant at 0.05 by that test",
    "brier": "Brier score of P(ΔMAP < 0) against the sign of the true ΔMAP (lower is better)",
    "log_score": "log score of P(ΔMAP < 0) (mean -log of the probability given to what happened; lower is better)",
    "share_95": "share of pairs called with confidence ≥ 0.95",
    "share_99": "share of pairs called with confidence ≥ 0.99",
    "n_95": "pairs called with confidence ≥ 0.95",
    "n_99": "pairs called with confidence ≥ 0.99",
    "right_95": "share of the calls at ≥ 0.95 that are right (NA: none)",
    "right_99": "share of the calls at ≥ 0.99 that are right (NA: none)",
    "reliable": "every reliability bin's observed frequency lies in its Wilson interval",
    "split": "how the pairs are grouped: all, pair_type (which runs were judged), run_type (automatic/manual)",
    "group": "the group of that split (pair type, run type or similarity bin)",
    "bin": "the bin of confidence (or of P(ΔMAP < 0))",
    "lower_edge": "lower edge of the bin",
    "upper_edge": "upper edge of the bin",
    "n": "pairs (or trials) counted",
    "share": "share of the method's pairs in the bin",
    "mean_confidence": "mean confidence of the pairs in the bin",
    "mean_forecast": "mean P(ΔMAP < 0) of the pairs in the bin",
    "frequency": "share of them whose true ΔMAP < 0",
    "lower": "lower end of the 95% Wilson interval of that share (accuracy, or frequency)",
    "upper": "upper end of that interval",
    "consistent": "the bin's mean lies in that interval",
    "quantity": "the per-trial quantity tested",
    "a": "the first method",
    "b": "the second method",
    "mean_a": "mean of the quantity for a over trials",
    "mean_b": "mean for b",
    "median_a": "median for a",
    "median_b": "median for b",
    "wilcoxon_p": "two-sided p-value of Wilcoxon's signed-rank test over trials",
    "t_p": "two-sided p-value of the paired t-test over trials",
}


def _sim_stats(args: argparse.Namespace) -> int:
    from bayeval.cli._output import write_frame
    from bayeval.experiments.similarity_report import similarity_statistics

    frame = _sim_table(args.table, args.collection)
    st = similarity_statistics(frame)
    table = {"overall": st.overall, "trials": st.per_trial, "tests": st.tests}[args.what]
    write_frame(table, args.format, title=f"{frame['collection'].iloc[0]}: {frame['trial'].nunique()} trials",
                missing=_WHY_MISSING, legend=_STUDY_LEGEND)
    return 0


def _sim_trajectory(args: argparse.Namespace) -> int:
    from bayeval.experiments import load_collection, similarity_trajectory

    col = load_collection(args.collection, name=args.name, relevance_level=args.relevance_level)
    traj = similarity_trajectory(col, _sim_config(args, col), args.trial, every=args.every, judgments=args.judgments)
    traj.to_csv(args.out, index=False)
    print(f"wrote {args.out} ({len(traj)} points)")
    return 0


def _sim_report(args: argparse.Namespace) -> int:
    from bayeval.experiments.plots import plot_expected_vs_true
    from bayeval.experiments.report import write_report
    from bayeval.experiments.similarity_report import NAMES, plot_trajectory, render_similarity_report

    frame = _sim_table(args.table, args.collection)
    name = frame["collection"].iloc[0]
    figures = {}
    if args.figures:
        args.figures, rel = _figure_prefix(args.figures, args.page)
        manual = _manual_runs(args.runs_info)
        methods = [m for m in NAMES if m in set(frame["method"])]
        plot_expected_vs_true(frame.assign(confidence="E[MAP]"), [(m, "E[MAP]") for m in methods], manual=manual,
                              path=f"{args.figures}-emap.png", title=f"{name}: E[MAP] vs true MAP")
        figures["E[MAP] against true MAP, every run of every trial"] = f"{rel}-emap.png"
        if args.trajectory:
            plot_trajectory(pd.read_csv(args.trajectory), path=f"{args.figures}-tau.png",
                            title=f"{name}: τ vs judgments")
            figures["Kendall τ as judgments accumulate (one trial)"] = f"{rel}-tau.png"
    notes = _read_notes(args.notes)
    command = args.command or _report_command(args, "similarity", ("title", "collection", "trajectory", "figures",
                                                                        "runs_info", "notes"), paper_trec="8")
    text = render_similarity_report(frame, title=args.title or f"Similarity-based estimation: {name}",
                                    command=command, paper_trec=None if args.paper_trec == "none" else args.paper_trec,
                                    figures=figures, notes=notes)
    write_report(args.page, text)
    print(f"wrote {args.page}")
    return 0


def _sim_cranfield(args: argparse.Namespace) -> int:
    from bayeval.experiments import write_cranfield_collection

    out = write_cranfield_collection(args.source, args.out, depth=args.depth)
    print(f"wrote {out}/runs, {out}/qrels.txt, {out}/texts.tsv")
    return 0


def _run(args: argparse.Namespace) -> int:
    from bayeval.experiments import RobustnessConfig, load_collection, run_study

    col = load_collection(args.collection, name=args.name, relevance_level=args.relevance_level,
                          condense=args.condense)
    cfg = RobustnessConfig(k=args.k, c=args.c, depth=args.depth, alpha=args.alpha, methods=args.methods,
                           confidences=args.confidences, budget=args.budget, selection_config=args.selection_config,
                           estimate_config=args.estimate_config, bayes_config=args.bayes_config,
                           bayes_fit=args.bayes_fit, bayes_stages=args.bayes_stages, mc_draws=args.mc_draws,
                           closed_form_draws=args.closed_form_draws, run_effect_sd=args.run_effect_sd,
                           unseen=args.unseen, topup=args.topup,
                           seed=args.seed)
    res = run_study(col, cfg, args.trials, out=args.out, workers=args.workers, scheduler=args.scheduler,
                    progress=args.progress)
    print(res.summary())
    if "bayes" in cfg.methods:
        print(f"bayes: {cfg.bayes_config} ({cfg.bayes_fit})" + (f", top-up {cfg.topup} a topic" if cfg.topup else ""))
    return _failed(res)


def _failed(res) -> int:
    """0, or the first failed trial: bad data as one line (exit 2), anything else with its traceback (exit 1)."""
    if not res.failed:
        return 0
    message = res.failed[0][1]
    if message.startswith("bayeval: error: "):
        raise BayevalInputError(message[len("bayeval: error: "):])
    print(message, file=sys.stderr)
    return 1


def _one_collection(frame, name):
    cols = sorted(frame["collection"].unique())
    if name is not None:
        if name not in cols:
            raise BayevalInputError(f"--collection: {name!r} is not in the table (it holds {cols})")
        return frame[frame["collection"] == name]
    if len(cols) > 1:
        raise BayevalInputError(f"--collection: the table holds several collections {cols}; name one")
    if not cols:
        raise BayevalInputError("table: holds no trials")
    return frame


def _stats(args: argparse.Namespace) -> int:
    from bayeval.cli._output import write_frame
    from bayeval.experiments import read_table, robustness_statistics

    frame = _one_collection(read_table(args.table), args.collection)
    st = robustness_statistics(frame, manual=_manual_runs(args.runs_info) if args.runs_info else None)
    table = {"overall": st.overall.drop(columns=["W_by_type", "W_by_similarity"]), "bins": st.bins,
             "proper": st.proper, "reliability": st.reliability,
             "pair-type": st.by_pair_type, "similarity": st.by_similarity, "tests": st.tests}[args.what]
    write_frame(table, args.format, title=f"{frame['collection'].iloc[0]}: {frame['trial'].nunique()} trials",
                missing=_WHY_MISSING, legend=_STUDY_LEGEND)
    return 0


def _merge(frame, specs, collection):
    """Append the rows of other trial tables, their methods renamed METHOD-LABEL."""
    from bayeval.experiments import read_table

    parts = [frame]
    for spec in specs:
        label, sep, path = spec.partition("=")
        if not sep or not label or not path:
            raise BayevalInputError(f"--merge: expected LABEL=TABLE, got {spec!r}")
        other = _one_collection(read_table(path), collection)
        if other["collection"].iloc[0] != frame["collection"].iloc[0] or other["seed"].iloc[0] != frame["seed"].iloc[0]:
            raise BayevalInputError(f"--merge: {path} is another collection or seed than the main table")
        parts.append(other.assign(method=other["method"] + f"-{label}"))
    return pd.concat(parts, ignore_index=True) if len(parts) > 1 else frame


def _report_command(args: argparse.Namespace, study: str, options: tuple[str, ...], **defaults) -> str:
    """The ``report`` command line that reproduces this page (from the parsed arguments): ``options`` when set,
    each ``--merge``, then the options of ``defaults`` that differ from their default."""
    parts = ["bayeval", "experiment", study, "report", args.table, "--page", args.page]
    for opt in options:
        if getattr(args, opt) is not None:
            parts += [f"--{opt.replace('_', '-')}", str(getattr(args, opt))]
    for spec in getattr(args, "merge", ()):
        parts += ["--merge", spec]
    for opt, default in defaults.items():
        if getattr(args, opt) != default:
            parts += [f"--{opt.replace('_', '-')}", getattr(args, opt)]
    return " ".join(shlex.quote(p) for p in parts)


def _manual_runs(runs_info: str | None) -> tuple[str, ...]:
    """Tags of the manual runs listed in a runs.tsv (columns run, type); none without a file."""
    if not runs_info:
        return ()
    from bayeval.io.tables import manual_runs

    return manual_runs(runs_info)


def _read_notes(path: str | None) -> str | None:
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except OSError as exc:
        raise BayevalInputError(f"--notes: cannot read {path} ({exc.strerror})") from exc


def _figure_prefix(folder: str, page: str) -> tuple[str, str]:
    """``(prefix, prefix relative to the page)`` of the figures written into ``folder`` (created): the page's name
    in it, so that two studies' figures can share a folder."""
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise BayevalInputError(f"--figures: {folder} is a file; give a folder (created when absent)")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise BayevalInputError(f"--figures: cannot create {folder} ({exc.strerror})") from exc
    prefix = os.path.join(folder, os.path.splitext(os.path.basename(page))[0])
    return prefix, os.path.relpath(os.path.abspath(prefix), os.path.dirname(os.path.abspath(page)))


def _report(args: argparse.Namespace) -> int:
    from bayeval.experiments import read_table
    from bayeval.experiments.report import render_report, write_report

    frame = _one_collection(read_table(args.table), args.collection)
    frame = _merge(frame, args.merge, args.collection)
    manual = _manual_runs(args.runs_info)
    notes = _read_notes(args.notes)
    command = args.command or _report_command(args, "robustness", ("title", "collection", "figures", "runs_info",
                                                                        "tau_goal", "notes"), paper="adhoc99")
    rel = None
    if args.figures:
        args.figures, rel = _figure_prefix(args.figures, args.page)
    text = render_report(frame, title=args.title or f"Robustness of reused judgments: {frame['collection'].iloc[0]}",
                         command=command, paper_key=args.paper, figures=args.figures, figures_rel=rel,
                         manual=manual, tau_goal=args.tau_goal, notes=notes)
    write_report(args.page, text)
    print(f"wrote {args.page}")
    return 0
