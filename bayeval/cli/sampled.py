"""``bayeval sampled``: measures estimated from judgments sampled at random (xinfAP, infNDCG, iP@k; statAP, statP@k;
model-assisted MAP and P@k with design-based intervals)."""

from __future__ import annotations

import argparse
import sys

from bayeval.cli._flags import add_labels, add_progress
from bayeval.cli._inputs import add_format_argument, add_reading_arguments, confidence, number_in, positive_int
from bayeval.cli._output import write_frame
from bayeval.cli.estimate import add_model_depth_argument, model_options

__all__ = ["register"]

ESTIMATORS = ("inferred", "stat", "assisted")
#: options of ``--estimator assisted`` only (attribute, flag)
_ASSISTED_ONLY = (("model", "--model"), ("folds", "--folds"), ("seed", "--seed"), ("extra_qrels", "--qrels"),
                  ("pairs", "--pairs"), ("level", "--level"), ("combine", "--combine"),
                  ("model_depth", "--model-depth"), ("form", "--form"), ("labels", "--labels"))


def register(sub) -> None:
    from bayeval.relevance.catalog import model_help

    p = sub.add_parser(
        "sampled", help="measures estimated from a random sample of the pool (xinfAP, infNDCG, statAP, "
                        "model-assisted MAP)",
        description="Estimate measures from judgments sampled at random with known inclusion probabilities "
                    "(docs/sampling.md). 'inferred' (default): xinfAP, infNDCG, iP@10/50/1000 and interpolated "
                    "precision, exactly as NIST's sample_eval.pl, from a stratified sample "
                    "'topic 0 docno stratum rel' (rel = -1: pooled, not sampled). 'stat': statAP and statP@k with "
                    "standard errors, from the same file (inclusion probability n_c/N_c of each stratum) or, with "
                    "--prels, from a Million Query prels file 'topic docno grade algorithm probability'. "
                    "'assisted': a relevance model's p of every pooled document (cross-fitted) corrected by the "
                    "random sample: MAP and P@10 with design-based standard errors and intervals, and with "
                    "--pairs every pair's ΔMAP and P(Δ < 0); --qrels adds judgments not drawn at random, which "
                    "the model learns from but which never correct it; --labels adds an automatic assessor's labels "
                    "to the model (its map learned in each fold from the other folds' judgments), which the sample "
                    "corrects as it corrects the model.")
    p.add_argument("sample", metavar="SAMPLE", help="stratified sample (or prels with --prels), plain or .gz")
    p.add_argument("runs", metavar="RUN", nargs="+", help="TREC run files or directories of them")
    p.add_argument("--estimator", choices=ESTIMATORS, default=None,
                   help="inferred: sample_eval.pl's measures; stat: statAP/statP@k with standard errors; "
                        "assisted: model-assisted MAP and P@10 with design-based intervals (default inferred, "
                        "stat with --prels)")
    p.add_argument("--prels", action="store_true",
                   help="SAMPLE is a prels file with inclusion probabilities (--estimator stat or assisted; "
                        "assisted pools every document the runs rank within --depth, and every sampled one)")
    p.add_argument("--depth", type=positive_int, default=1000, metavar="D",
                   help="keep only each run's top D documents (default 1000, as sample_eval.pl)")
    p.add_argument("--per-topic", action="store_true", help="also print every topic's value")
    p.add_argument("--relevance-level", type=positive_int, default=1, metavar="L",
                   help="the least grade counted relevant by --estimator stat and assisted (default 1; the inferred "
                        "measures follow sample_eval.pl)")
    a = p.add_argument_group("--estimator assisted")
    a.add_argument("--model", default=None, metavar="MODEL", help=model_help())
    a.add_argument("--folds", type=number_in(int, 2, what="an integer >= 2"), default=None, metavar="K",
                   help="cross-fitting folds: the model is fitted K times, each time without the judgments of "
                        "the documents it predicts (default 5)")
    a.add_argument("--seed", type=int, default=None, help="seed of the folds (default 0)")
    a.add_argument("--qrels", dest="extra_qrels", metavar="EXTRA", default=None,
                   help="judgments NOT drawn at random (a selector's picks, an initial pool; a campaign's "
                        "'judge export --out' file): the model learns from them, they never correct it")
    a.add_argument("--pairs", action="store_true",
                   help="print every pair of runs instead: ΔMAP, se, interval, P(Δ < 0)")
    add_model_depth_argument(a)
    add_labels(a)
    a.add_argument("--level", type=confidence, default=None, help="interval level (default 0.95)")
    a.add_argument("--form", choices=("auto", "anchored", "ratio"), default=None,
                   help="anchored: AP's expansion around the model's expected AP, estimated from the sample; ratio: "
                        "the ratio of the corrected labels' sums; auto (default): anchored below a median of 50 "
                        "judgments drawn a topic, ratio from 50 (docs/sampling.md)")
    a.add_argument("--combine", action="store_true",
                   help="lean on the model alone (fitted on every judgment) as far as the sample says it errs "
                        "(empirical Bayes, share 0.5): sharper, but NOT design-based (docs/sampling.md)")
    add_progress(a)
    add_reading_arguments(p)
    add_format_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bayeval.data import Qrels
    from bayeval.errors import BayevalInputError
    from bayeval.io import match_sample_topics, read_prels, read_runs, read_stratified_sample
    from bayeval.sampling import inferred_measures, stat_measures

    estimator = args.estimator or ("stat" if args.prels else "inferred")
    if args.prels and estimator == "inferred":
        raise BayevalInputError("--estimator: inferred needs a stratified sample, not --prels (use stat or assisted)")
    if args.combine and args.per_topic:
        raise BayevalInputError("--per-topic: the combined estimates are the runs' MAP only (drop --combine)")
    if estimator == "inferred" and args.relevance_level != 1:
        raise BayevalInputError("--relevance-level: the inferred measures count grade >= 1, as sample_eval.pl; use "
                                "--estimator stat or assisted for another level")
    if estimator != "assisted":
        given = [flag for attr, flag in _ASSISTED_ONLY if getattr(args, attr) not in (None, False, [])]
        if given:
            raise BayevalInputError(f"{given[0]}: only with --estimator assisted")
    runs = read_runs(args.runs, run_names=args.run_names, strict=args.strict)
    if args.prels:
        judgments = read_prels(args.sample, relevance_level=args.relevance_level, strict=args.strict)
        topics = judgments.topics
    else:
        sample = read_stratified_sample(args.sample)
        judgments, topics = None, sample.topics
    runs = match_sample_topics(runs, topics)  # sample_eval.pl's rule: run topics lose their leading zeros
    if not set(runs.topics) & set(topics):
        raise BayevalInputError(f"{args.sample}: no topic in common with the runs")
    if estimator == "assisted":
        return _assisted(args, runs, judgments if args.prels else sample)
    if estimator == "stat":
        judged = judgments if args.prels else Qrels(sample.judged().topic_judgments, args.relevance_level)
        ev = stat_measures(runs, judged, depth=args.depth)
        frame = ev.to_frame(per_topic=args.per_topic)
        title = f"{len(ev.topics)} topics; statAP and statP@k with their design-based standard errors"
    else:
        ev = inferred_measures(runs, sample, depth=args.depth)
        frame = ev.to_frame(per_topic=args.per_topic)
        title = f"{len(ev.topics)} topics, as sample_eval.pl"
    if args.format == "table" and not args.per_topic:
        wide, legend, note = _wide(frame, list(ev.systems))
        write_frame(wide, "table", title=title, legend=legend)
        if note:
            print(f"  {note}")
    else:
        write_frame(frame, args.format, title=title, legend=_LONG_LEGEND)
    return 0


_LONG_LEGEND = {"value": "the estimate (topic all: the mean over topics; inum_rel, inum_rel_ret, num_ret: the sum)",
                "se": "its design-based standard error"}


def _describe(measure: str) -> str:
    """What a column of ``sampled``'s table is (sample_eval.pl's names and statAP's)."""
    fixed = {"infAP": "inferred AP (xinfAP), mean over topics", "infNDCG": "inferred nDCG, mean over topics",
             "inum_rel": "estimated relevant documents, summed over topics",
             "inum_rel_ret": "estimated relevant documents retrieved, summed over topics",
             "num_ret": "documents retrieved, summed over topics", "statAP": "statAP, mean over topics"}
    if measure in fixed:
        return fixed[measure]
    for head, what in (("iP", "inferred precision at"), ("statP", "statistical precision at")):
        if measure.startswith(head) and measure[len(head):].isdigit():
            return f"{what} {measure[len(head):]}, mean over topics"
    return measure


def _wide(frame, systems: list[str]):
    """``(table, legend, note)``: one row per run, one column per measure (and ``<measure>_se`` where there are
    standard errors); the interpolated precisions, 11 columns that would make the table ~300 characters wide,
    only in csv/json (the note says so)."""
    import pandas as pd

    frame = frame[frame.topic == "all"]
    measures = [m for m in dict.fromkeys(frame.measure) if not str(m).startswith("iprec@")]
    left_out = len(set(frame.measure)) - len(measures)
    wide = pd.DataFrame({"run": systems})
    legend = {}
    for m in measures:
        f = frame[frame.measure == m].set_index("run").reindex(systems)
        wide[m] = f.value.to_numpy()
        legend[m] = _describe(m)
        if "se" in f.columns:
            wide[f"{m}_se"] = f.se.to_numpy()
            legend[f"{m}_se"] = f"design-based standard error of {m}"
    note = (f"not shown: interpolated precision at {left_out} recall levels (iprec@rec0.00 ... iprec@rec1.00; "
            "--format csv or json has them)") if left_out else None
    return wide, legend, note


def _assisted(args: argparse.Namespace, runs, sample) -> int:
    """``--estimator assisted``: :func:`bayeval.sampling.evaluate_assisted` with the package's relevance model."""
    import pandas as pd
    from scipy import stats

    from bayeval.data import Qrels
    from bayeval.defaults import DEFAULT_MODEL
    from bayeval.io import read_qrels
    from bayeval.relevance import PredictionFit, load_config
    from bayeval.sampling import evaluate_assisted, minimum_notices

    level = 0.95 if args.level is None else args.level
    folds = 5 if args.folds is None else args.folds
    model = DEFAULT_MODEL if args.model is None else args.model
    options = model_options(args, load_config(model), "map")  # the rank model's depth, as every command
    fit = PredictionFit(runs, model, depth=args.depth, options=options)
    extra = None if args.extra_qrels is None else read_qrels(args.extra_qrels, strict=args.strict)
    extra = None if extra is None else Qrels(extra.topic_judgments, args.relevance_level)
    res = evaluate_assisted(runs, sample, fit, extra=extra, folds=folds, seed=0 if args.seed is None else args.seed,
                            depth=args.depth, relevance_level=args.relevance_level, progress=args.progress,
                            form="auto" if args.form is None else args.form)
    for line in minimum_notices(res.drawn_per_topic(), args.relevance_level,
                                form="auto" if args.form is None else args.form):
        print(f"bayeval: warning: {line}", file=sys.stderr)
    if args.combine:
        return _combined(args, runs, res, fit, level)
    extra_note = f", {res.extra} not drawn at random only fit it" if res.extra else ""
    extra_note += _labels_note(options)
    how = ("anchored at its expected AP" if res.form == "anchored"
           else f"ratio form, weight on the model {res.weight:.3f}")
    title = (f"{len(res.topics)} topics; model-assisted: {res.model} cross-fitted over {res.folds} folds, corrected "
             f"by {res.sampled} judgments drawn at random{extra_note} ({how}); se and {level:.0%} interval: "
             "design-based")
    if args.pairs:
        write_frame(res.differences("AP", level), args.format, title=title,
                    legend={"delta": "MAP_a - MAP_b", "se": "design-based standard error of delta (paired)",
                            "p_less": "P(MAP_a - MAP_b < 0), normal with that se"})
        return 0
    z = stats.norm.ppf(0.5 + level / 2)
    frame = res.to_frame(per_topic=args.per_topic)
    frame["lower"], frame["upper"] = frame.value - z * frame.se, frame.value + z * frame.se
    if args.format != "table" or args.per_topic:
        write_frame(frame, args.format, title=title)
        return 0
    wide = pd.DataFrame({"run": list(res.systems)})
    for m in res.measures:
        f = frame[(frame.topic == "all") & (frame.measure == m)].set_index("run").reindex(res.systems)
        name = "MAP" if m == "AP" else m
        wide[name] = f.value.to_numpy()
        wide[f"{name}_se"] = f.se.to_numpy()
        if m == "AP":
            wide["lower"], wide["upper"] = f.lower.to_numpy(), f.upper.to_numpy()
    write_frame(wide, "table", title=title,
                legend={"MAP_se": "design-based standard error", "lower": f"{level:.0%} interval of MAP"})
    return 0


def _labels_note(options) -> str:
    """``, with the labels of NAME, ...`` where ``--labels`` gave the model assessors, else empty."""
    labels = dict(options).get("labels") or []
    return f", with the labels of {', '.join(lab.name for lab in labels)}" if labels else ""


def _combined(args: argparse.Namespace, runs, res, fit, level: float) -> int:
    """``--combine``: the model alone (fitted on every judgment, E and Var of MAP and ΔMAP by the delta method)
    and the model-assisted estimates combined by empirical Bayes (:meth:`AssistedResult.combined`)."""
    import numpy as np
    import pandas as pd

    from bayeval.data import RankData
    from bayeval.expected import compare_systems, expected_measures
    from bayeval.relevance import estimate_probabilities

    data = RankData.build(runs, res.judgments, depth=args.depth, topics=res.topics)
    est = estimate_probabilities(data, fit.model, fit="map", p_draws=None, seed=res.seed, **dict(fit.options))
    alone = expected_measures(data, est, measures="AP", method="delta")
    a, b = res.pairs()
    cmp = compare_systems(data, est, pairs=list(zip(a.tolist(), b.tolist(), strict=True)), method="delta")
    both, diffs = res.combined(alone.all_expected[0], np.sqrt(np.maximum(alone.all_variance[0], 0.0)),
                               cmp.all_expected, np.sqrt(np.maximum(cmp.all_variance, 0.0)))
    title = (f"{len(res.topics)} topics; model-assisted ({res.model}, {res.folds} folds, {res.sampled} judgments "
             f"drawn at random{_labels_note(fit.options)}) combined with the model alone by empirical Bayes "
             f"(share {both.share:g}): "
             f"NOT design-based; {level:.0%} interval")
    names = np.array(res.systems, dtype=object)
    if args.pairs:
        lo, hi = diffs.interval(level)
        frame = pd.DataFrame({"run_a": names[a], "run_b": names[b], "delta": diffs.mean, "se": diffs.se,
                              "lower": lo, "upper": hi, "p_less": diffs.p_less(), "weight": diffs.weight})
    else:
        lo, hi = both.interval(level)
        frame = pd.DataFrame({"run": names, "MAP": both.mean, "se": both.se, "lower": lo, "upper": hi,
                              "weight": both.weight})
    write_frame(frame, args.format, title=title,
                legend={"weight": "weight of the model-assisted estimate (1: the sample alone, 0: the model)",
                        "p_less": "P(MAP_a - MAP_b < 0)"})
    return 0
