"""``bayeval experiment depth DIR``: judged to depth K, evaluated to depth D (docs/depth.md).

Reads the collection directory (``runs/``, ``qrels.txt[.gz]``), keeps the judgments of the depth-K pool of every
run, runs :func:`bayeval.experiments.depth.depth_study` for each K and model, and prints per K and estimator the
median E[MAP]/true MAP, the coverage of the 95% intervals, their half-width against the median error, Kendall's τ
with the truth and the reliability of p — with the anchors (trec_eval on the pool, condensed AP, bpref, infAP)
beside. ``--out`` writes the per-run table, ``--bins`` the reliability table (.csv or .parquet).
"""

from __future__ import annotations

import argparse
import sys

from bayeval.cli._inputs import add_depth_argument, add_format_argument, confidence, positive_int
from bayeval.errors import BayevalInputError

__all__ = ["register_depth"]


def _depths(text: str) -> tuple[int, ...]:
    out = tuple(positive_int(x.strip()) for x in text.split(",") if x.strip())
    if not out:
        raise argparse.ArgumentTypeError("give at least one depth, e.g. 10,20,50")
    return out


def register_depth(studies, parser_class) -> None:
    from bayeval.defaults import DEFAULT_MODEL

    d = studies.add_parser("depth", help="judged to depth K, evaluated deeper: E[MAP] and its interval against "
                                         "the truth",
                           description="Keep only the judgments of every run's top K documents, evaluate every run "
                                       "at depth D with each model and score E[MAP], its interval and p of the "
                                       "unjudged documents against the complete qrels, beside trec_eval on the "
                                       "pool, condensed AP, bpref and infAP (docs/depth.md).")
    d.add_argument("collection", metavar="DIR", help="collection directory: runs/, qrels.txt[.gz]")
    d.add_argument("--pool-depths", type=_depths, default=(10, 20, 50), metavar="K,...",
                   help="judged depths K (default 10,20,50)")
    add_depth_argument(d, study=True)
    d.add_argument("--relevance-level", type=positive_int, default=1, metavar="L",
                   help="lowest relevant grade (default 1; 2 for TREC DL's passages)")
    d.add_argument("--no-condense", dest="condense", action="store_false",
                   help="score against the runs as they are (default: runs condensed to the documents the qrels "
                        "judge, so that the truth is complete)")
    d.add_argument("--models", default=f"{DEFAULT_MODEL}+unseen", metavar="MODEL[/FIT][+unseen],...",
                   help=f"estimators, comma-separated (default {DEFAULT_MODEL}+unseen: the default model with the "
                        "unseen relevant documents in R, as evaluate adds them)")
    d.add_argument("--level", type=confidence, default=0.95, help="level of the intervals (default 0.95)")
    d.add_argument("--seed", type=int, default=0, help="seed of the fits and draws (default 0)")
    d.add_argument("--out", default=None, metavar="TABLE", help="write the per-run table (.csv or .parquet)")
    d.add_argument("--bins", default=None, metavar="TABLE", help="write the reliability table of p (.csv or .parquet)")
    add_format_argument(d)
    d.set_defaults(func=_depth)


def _depth(args: argparse.Namespace) -> int:
    from bayeval.cli._output import write_frame
    from bayeval.experiments.depth import depth_study, parse_variant
    from bayeval.io.collection import load_collection
    from bayeval.io.trials import table_format, write_table

    for path in (args.out, args.bins):
        if path:
            table_format(path)
    variants = [parse_variant(v.strip()) for v in args.models.split(",") if v.strip()]
    if not variants:
        raise BayevalInputError("--models: give at least one model")
    col = load_collection(args.collection, relevance_level=args.relevance_level, condense=args.condense)
    study = depth_study(col, args.pool_depths, variants, depth=args.depth, level=args.level, seed=args.seed,
                        progress=lambda line: print(f"bayeval: {line}", file=sys.stderr, flush=True))
    write_frame(study.statistics(), args.format,
                title=f"{col.name}: judged to depth K, evaluated at {args.depth}; ratio = median E/true MAP, "
                      "coverage of the intervals, half-width and median error, tau with the truth, reliability "
                      "bins of p whose Wilson interval excludes their mean p")
    if args.out:
        write_table(study.runs, args.out, columns=tuple(study.runs.columns))
    if args.bins:
        write_table(study.bins, args.bins, columns=tuple(study.bins.columns))
    return 0
