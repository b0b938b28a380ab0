"""``bayeval measures``: trec_eval-exact measures (unjudged documents count as nonrelevant)."""

from __future__ import annotations

import argparse

from bayeval.cli._inputs import add_collection_arguments, add_format_argument
from bayeval.cli._output import write_frame

__all__ = ["register"]


def register(sub) -> None:
    p = sub.add_parser(
        "measures", help="standard measures, exactly as trec_eval computes them",
        description="Compute AP, P@k, nDCG@k, R-prec, RR, RR@k, bpref, recall@k, judged@k ... as trec_eval does. "
                    "The 'all' row of a run is its mean over the topics it has results for "
                    "(trec_eval's default -c off), restricted to topics with judgments. Runs are read and "
                    "scored one at a time, so memory does not grow with their number (docs/scale.md).")
    add_collection_arguments(p)
    p.add_argument("-m", "--measures", default="AP,P@10,nDCG@10,R-prec,RR,bpref",
                   help="comma-separated measures in bayeval's, ir_measures', ranx's or trec_eval's names, e.g. "
                        "AP,AP@100,P@10,nDCG@10,RR@10,R@1000,P(rel=2)@10,Judged@10,map_cut_100 "
                        "(default AP,P@10,nDCG@10,R-prec,RR,bpref; docs/measures.md)")
    p.add_argument("--per-topic", action="store_true", help="also print every topic's value")
    add_format_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bayeval.io import iter_runs, read_qrels
    from bayeval.measures import parse_measures
    from bayeval.measures.cube import evaluate_runs

    measures = parse_measures(args.measures)
    qrels = read_qrels(args.qrels, relevance_level=args.relevance_level, strict=args.strict)
    runs = iter_runs(args.runs, run_names=args.run_names, strict=args.strict)
    result = evaluate_runs(runs, qrels, measures, depth=args.depth)
    frame = result.to_frame(per_topic=args.per_topic)
    if args.format == "table" and not args.per_topic:
        wide = frame.pivot(index="run", columns="measure", values="value")
        wide = wide.reindex(index=list(result.systems), columns=[str(m) for m in result.measures])
        legend = {str(m): m.description for m in result.measures}
        write_frame(wide.reset_index(), "table", title=f"{len(result.topics)} topics, mean over topics",
                    legend=legend)
        print("  unjudged documents count as nonrelevant, as in trec_eval")
    else:
        write_frame(frame, args.format)
    return 0
