"""``bayeval experiment sparse DIR``: the sparse-label study (one judged relevant document per topic).

Reads the collection directory (``runs/``, ``qrels.txt[.gz]``), runs :func:`bayeval.experiments.sparse.
run_sparse_study` and prints Kendall's τ and RMSE of trec_eval on the sparse labels and of bayeval's expected
measure against the deep judgments, the proper scores of bayeval's P(Δ<0) and its reliability bins
(docs/sparse-labels.md). ``--out`` writes the pair table (.csv or .parquet).
"""

from __future__ import annotations

import argparse

from bayeval.cli._inputs import add_depth_argument, positive_int

__all__ = ["register_sparse"]


def register_sparse(studies, parser_class) -> None:
    s = studies.add_parser("sparse", help="one judged relevant document per topic: trec_eval vs bayeval",
                           description="Keep one relevant judgment per topic at random, evaluate every run by "
                                       "trec_eval on the sparse labels and by bayeval's expected measure and "
                                       "P(Δ<0); score both against the deep judgments.")
    s.add_argument("collection", metavar="DIR", help="collection directory: runs/, qrels.txt[.gz]")
    s.add_argument("--trials", type=positive_int, default=3, help="draws of the sparse labels (default 3)")
    s.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    s.add_argument("--measure", default="AP", help="measure (default AP); RR@k, AP, nDCG@k and recall@k "
                   "compute every pair on the rank cube (docs/scale.md)")
    s.add_argument("--model", default="sparse", help="relevance model for the unjudged documents (default sparse: "
                   "sparse-default, docs/sparse-labels.md; studies/models/sparse-trec.toml for a deep-pool ad hoc "
                   "collection)")
    s.add_argument("--method", default="delta", choices=("delta", "paper", "exact"),
                   help="moments of the expected measure (default delta)")
    s.add_argument("--max-pairs", type=positive_int, default=None, help="pairs scored per trial (default all)")
    add_depth_argument(s, study=True)
    s.add_argument("--scheduler", default=None, metavar="ADDR",
                   help="Dask scheduler address (tcp://host:8786): run the trials on that cluster")
    s.add_argument("--out", default=None, metavar="TABLE", help="write the pair table (.csv or .parquet)")
    s.set_defaults(func=_sparse)


def _sparse(args: argparse.Namespace) -> int:
    from bayeval.experiments.sparse import run_sparse_study
    from bayeval.io.collection import load_collection

    col = load_collection(args.collection)
    study = run_sparse_study(col.runs(col.run_names), col.qrels(), trials=args.trials, seed=args.seed,
                             measure=args.measure, model=args.model, method=args.method, max_pairs=args.max_pairs,
                             depth=args.depth, scheduler=args.scheduler)
    print(study.summary())
    print(study.reliability().to_string(index=False))
    if args.out:
        if str(args.out).endswith(".parquet"):
            study.pairs.to_parquet(args.out, index=False)
        else:
            study.pairs.to_csv(args.out, index=False)
    return 0
