"""``bayeval evaluate``: expected measures, variances and pairwise confidence."""

from __future__ import annotations

import argparse

from bayeval.cli._inputs import (
    add_collection_arguments,
    add_format_argument,
    load_collection,
    positive_int,
    probability,
)
from bayeval.cli._output import write_frame

__all__ = ["register"]

METHODS = ("paper", "delta", "exact", "mc")


def register(sub) -> None:
    p = sub.add_parser(
        "evaluate", help="expected measures and P(difference < 0) under uncertain relevance",
        description="Expected value and variance of each measure for every run, treating each unjudged "
                    "document as relevant with probability p (from --probabilities, else --default-p), "
                    "and with --pairs the confidence P(measure_a - measure_b < 0) for every pair of runs. "
                    "With --pairs and csv/json output only the pairs table is written.")
    add_collection_arguments(p)
    p.add_argument("--probabilities", metavar="FILE",
                   help="probabilities of relevance of unjudged documents, mtc-eval format 'topic Q0 docno prob'")
    p.add_argument("--default-p", type=probability, default=0.5,
                   help="probability for unjudged documents not in --probabilities (default 0.5, MTC's assumption)")
    p.add_argument("--method", choices=METHODS, default="exact",
                   help="paper: the papers' closed form; delta: 2nd-order delta method; exact: exact moments; "
                        "mc: Monte Carlo (default exact)")
    p.add_argument("--draws", type=positive_int, default=2000, help="Monte Carlo draws (default 2000)")
    p.add_argument("--seed", type=int, default=0, help="Monte Carlo seed (default 0)")
    p.add_argument("--measures", default="AP", help="comma-separated measures (default AP), e.g. AP,P@10,nDCG@10")
    p.add_argument("--pairs", action="store_true", help="confidence for every pair of runs")
    p.add_argument("--per-topic", action="store_true", help="also print every topic's rows")
    add_format_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bayeval.data.rankdata import RankData
    from bayeval.expected import compare_systems, expected_measures
    from bayeval.io.probabilities import read_probabilities
    from bayeval.measures import parse_measures

    measures = parse_measures(args.measures)
    probs = read_probabilities(args.probabilities) if args.probabilities else None
    qrels, runs = load_collection(args)
    data = RankData.build(runs, qrels, depth=args.depth)
    mc = {"draws": args.draws, "seed": args.seed} if args.method == "mc" else {}
    if not (args.pairs and args.format != "table"):
        exp = expected_measures(data, probs, default_p=args.default_p, measures=measures, method=args.method, **mc)
        frame = exp.to_frame(per_topic=args.per_topic)
        write_frame(frame, args.format, title=f"expected measures ({args.method}), {len(data.topics)} topics")
    if args.pairs:
        for m in measures:
            cmp = compare_systems(data, probs, default_p=args.default_p, measure=m, method=args.method, **mc)
            frame = cmp.to_frame(per_topic=args.per_topic)
            write_frame(frame, args.format, title=f"P({m}_a - {m}_b < 0), {args.method}")
    return 0
