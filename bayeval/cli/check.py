"""``bayeval check QRELS RUN...``: what the readers find in new data, on one screen (exit 0 or 2)."""

from __future__ import annotations

import argparse

from bayeval.cli._flags import add_labels
from bayeval.cli._inputs import add_format_argument, add_reading_arguments, positive_int

__all__ = ["register", "run"]


def register(sub) -> None:
    p = sub.add_parser(
        "check", help="report what the readers find in a qrels file and run files (run this first on new data)",
        description="Read the qrels and the runs as every other command does and report, per file, the topics, "
                    "documents per topic, repeated documents, tied scores, renamed runs and topics missing on "
                    "either side, and per run how incomplete the judgments are (judged@10, judged@100, share of "
                    "the top 100 nobody judged). Exit status 0 when everything loads, 2 when a file cannot be "
                    "read (each such file is named with its line). docs/data.md lists the rules.")
    p.add_argument("qrels", metavar="QRELS", help="TREC qrels file (plain or .gz)")
    p.add_argument("runs", metavar="RUN", nargs="+", help="run files or directories of them")
    p.add_argument("--relevance-level", type=positive_int, default=1, metavar="L",
                   help="minimum grade counted relevant (trec_eval -l; default 1)")
    add_reading_arguments(p)
    p.add_argument("--all", action="store_true", help="list every run (default: at most 20 rows)")
    add_labels(p)
    add_format_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bayeval.io.check import check_collection

    result = check_collection(args.qrels, args.runs, run_names=args.run_names, strict=args.strict,
                              relevance_level=args.relevance_level)
    if args.format == "table":
        print(result.summary(max_rows=len(result.runs) if args.all else 20))
    else:
        import sys

        from bayeval.cli._output import write_frame

        write_frame(result.to_frame(), args.format)
        for line in result.notes:
            print(f"bayeval: note: {line}", file=sys.stderr)
        for line in result.errors:
            print(f"bayeval: error: {line}", file=sys.stderr)
    ok = result.ok
    if args.labels:
        ok = _check_labels(args) and ok
    return 0 if ok else 2


def _check_labels(args) -> bool:
    """Each ``--labels`` file's overlap with the judgments (:func:`bayeval.io.check_labels`); False when one cannot
    be read or no pair of it is judged."""
    import sys

    from bayeval.cli._flags import labels_from_args
    from bayeval.errors import BayevalInputError
    from bayeval.io import check_labels, read_qrels

    try:
        qrels = read_qrels(args.qrels, args.relevance_level, strict=args.strict)
        labels = labels_from_args(args)
    except BayevalInputError as exc:
        print(f"bayeval: error: {exc}", file=sys.stderr)
        return False
    ok = True
    for lab in labels:
        c = check_labels(lab, qrels)
        if args.format == "table":
            print("\n" + c.summary())
        else:
            from bayeval.cli._output import write_frame

            write_frame(c.to_frame().reset_index(), args.format)
        ok = ok and c.both > 0
    return ok
