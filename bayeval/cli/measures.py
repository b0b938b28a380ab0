"""``bayeval measures``: trec_eval-exact measures (unjudged documents count as nonrelevant)."""

from __future__ import annotations

import argparse

from bayeval.cli._inputs import add_collection_arguments, add_format_argument, qrels_and_runs
from bayeval.cli._output import write_frame

__all__ = ["register"]


def register(sub) -> None:
    p = sub.add_parser(
        "measures", help="standard measures, exactly as trec_eval computes them",
        description="Compute AP, P@k, nDCG@k, R-prec, RR, bpref, recall@k as trec_eval does. "
                    "The 'all' row of a run is its mean over the topics it has results for "
                    "(trec_eval's default -c off), restricted to topics with judgments.")
    add_collection_arguments(p)
    p.add_argument("--measures", default="AP,P@10,nDCG@10,R-prec,RR,bpref",
                   help="comma-separated measures, e.g. AP,AP@100,P@10,nDCG@10,R-prec,RR,bpref,recall@100 "
                        "(default AP,P@10,nDCG@10,R-prec,RR,bpref)")
    p.add_argument("--per-topic", action="store_true", help="also print every topic's value")
    add_format_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bayeval.data.rankdata import RankData
    from bayeval.measures import evaluate, parse_measures

    measures = parse_measures(args.measures)
    qrels, runs = qrels_and_runs(args)
    data = RankData.build(runs, qrels, depth=args.depth)
    result = evaluate(data, measures)
    frame = result.to_frame(per_topic=args.per_topic)
    if args.format == "table" and not args.per_topic:
        wide = frame.pivot(index="run", columns="measure", values="value")
        wide = wide.reindex(index=list(result.systems), columns=[str(m) for m in result.measures])
        legend = {str(m): m.description for m in result.measures}
        write_frame(wide.reset_index(), "table", title=f"{len(data.topics)} topics, mean over topics",
                    legend=legend)
        print("  unjudged documents count as nonrelevant, as in trec_eval")
    else:
        write_frame(frame, args.format)
    return 0
