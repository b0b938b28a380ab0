"""Arguments shared by sub-commands: qrels, runs, depth, measures, output format."""

from __future__ import annotations

import argparse

from bayeval.cli._output import FORMATS
from bayeval.data.qrels import Qrels
from bayeval.data.run import RunSet
from bayeval.errors import BayevalInputError
from bayeval.io.qrels import read_qrels
from bayeval.io.runs import RUN_NAME_RULES, read_runs

__all__ = ["STUDY_DEPTH", "add_collection_arguments", "add_depth_argument", "add_format_argument",
           "add_reading_arguments", "load_collection", "positive_int"]


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def probability(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {text!r}")
    return value


def add_collection_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("qrels", metavar="QRELS", help="TREC qrels file (plain or .gz)")
    parser.add_argument("runs", metavar="RUN", nargs="+", help="TREC run files or directories of them")
    add_depth_argument(parser)
    parser.add_argument("--relevance-level", type=positive_int, default=1, metavar="L",
                        help="minimum grade counted relevant (trec_eval -l; default 1)")
    add_reading_arguments(parser)


#: ``--depth`` of the study commands (``experiment ... run``), which replicate papers judged to depth 100.
STUDY_DEPTH = 100


def add_depth_argument(parser: argparse.ArgumentParser, *, study: bool = False) -> None:
    """``--depth``: keep only each run's top D documents; default all (as trec_eval) in every command on
    the user's runs. Only the study commands, which replicate published protocols, default to
    :data:`STUDY_DEPTH` and say so (README.md, "On TREC data")."""
    if study:
        parser.add_argument("--depth", type=positive_int, default=STUDY_DEPTH, metavar="D",
                            help=f"keep only each run's top D documents (default {STUDY_DEPTH}, the studies' "
                                 "published setting)")
    else:
        parser.add_argument("--depth", type=positive_int, default=None, metavar="D",
                            help="keep only each run's top D documents (default: all, as trec_eval)")


def add_reading_arguments(parser: argparse.ArgumentParser) -> None:
    """``--run-names`` and ``--strict``: how runs are named, and whether tolerated irregularities are errors."""
    parser.add_argument("--run-names", choices=RUN_NAME_RULES, default="auto",
                        help="name runs by their tag, by their file name, or auto: the tag unless another file "
                             "has the same tag (default auto; docs/data.md)")
    parser.add_argument("--strict", action="store_true",
                        help="refuse, with file and line, what the readers otherwise tolerate with a note "
                             "(repeated documents, mixed tags, shared tags, extra qrels column, non-run files)")


def add_format_argument(parser: argparse.ArgumentParser, default: str = "table") -> None:
    parser.add_argument("--format", choices=FORMATS, default=default, help=f"output format (default {default})")


def load_collection(args: argparse.Namespace) -> tuple[Qrels, RunSet]:
    strict = getattr(args, "strict", False)
    qrels = read_qrels(args.qrels, relevance_level=args.relevance_level, strict=strict)
    runs = read_runs(args.runs, run_names=getattr(args, "run_names", "auto"), strict=strict)
    if not set(runs.topics) & set(qrels.topics):
        raise BayevalInputError(f"{args.qrels}: no topic in common with the runs")
    return qrels, runs
