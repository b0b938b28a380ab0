"""``bayeval sampled``: measures estimated from judgments sampled at random (xinfAP, infNDCG, iP@k; statAP, statP@k)."""

from __future__ import annotations

import argparse

from bayeval.cli._inputs import add_format_argument, add_reading_arguments, positive_int
from bayeval.cli._output import write_frame

__all__ = ["register"]

ESTIMATORS = ("inferred", "stat")


def register(sub) -> None:
    p = sub.add_parser(
        "sampled", help="measures estimated from a random sample of the pool (xinfAP, infNDCG, statAP)",
        description="Estimate measures from judgments sampled at random with known inclusion probabilities "
                    "(docs/sampling.md). 'inferred' (default): xinfAP, infNDCG, iP@10/50/1000 and interpolated "
                    "precision, exactly as NIST's sample_eval.pl, from a stratified sample "
                    "'topic 0 docno stratum rel' (rel = -1: pooled, not sampled). 'stat': statAP and statP@k with "
                    "standard errors, from the same file (inclusion probability n_c/N_c of each stratum) or, with "
                    "--prels, from a Million Query prels file 'topic docno grade algorithm probability'.")
    p.add_argument("sample", metavar="SAMPLE", help="stratified sample (or prels with --prels), plain or .gz")
    p.add_argument("runs", metavar="RUN", nargs="+", help="TREC run files or directories of them")
    p.add_argument("--estimator", choices=ESTIMATORS, default="inferred",
                   help="inferred: sample_eval.pl's measures; stat: statAP/statP@k with standard errors "
                        "(default inferred)")
    p.add_argument("--prels", action="store_true",
                   help="SAMPLE is a prels file with inclusion probabilities (implies --estimator stat)")
    p.add_argument("--depth", type=positive_int, default=1000, metavar="D",
                   help="keep only each run's top D documents (default 1000, as sample_eval.pl)")
    p.add_argument("--per-topic", action="store_true", help="also print every topic's value")
    add_reading_arguments(p)
    add_format_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bayeval.errors import BayevalInputError
    from bayeval.io import read_prels, read_runs, read_stratified_sample
    from bayeval.sampling import inferred_measures, stat_measures

    runs = read_runs(args.runs, run_names=args.run_names, strict=args.strict)
    if args.prels:
        judgments = read_prels(args.sample, strict=args.strict)
        topics = judgments.topics
    else:
        sample = read_stratified_sample(args.sample)
        judgments, topics = None, sample.topics
    if not set(runs.topics) & set(topics):
        raise BayevalInputError(f"{args.sample}: no topic in common with the runs")
    if args.prels or args.estimator == "stat":
        ev = stat_measures(runs, judgments if args.prels else sample.judged(), depth=args.depth)
        frame = ev.to_frame(per_topic=args.per_topic)
        title = f"{len(ev.topics)} topics; se: design-based standard error"
    else:
        ev = inferred_measures(runs, sample, depth=args.depth)
        frame = ev.to_frame(per_topic=args.per_topic)
        title = f"{len(ev.topics)} topics, as sample_eval.pl"
    if args.format == "table" and not args.per_topic:
        wide = frame.pivot(index="run", columns="measure", values="value")
        wide = wide.reindex(index=list(ev.systems), columns=list(dict.fromkeys(frame.measure)))
        write_frame(wide.reset_index(), "table", title=title)
    else:
        write_frame(frame, args.format)
    return 0
