"""Arguments shared by sub-commands: qrels, runs, depth, measures, output format."""

from __future__ import annotations

import argparse

from bayeval.cli._output import FORMATS
from bayeval.data.qrels import Qrels
from bayeval.data.run import RunSet
from bayeval.defaults import RELEVANCE_LEVEL, STUDY_DEPTH
from bayeval.io.collection import load_collection
from bayeval.io.runs import RUN_NAME_RULES

__all__ = ["add_collection_arguments", "add_depth_argument", "add_format_argument",
           "add_reading_arguments", "confidence", "level", "nonnegative_int", "number_in", "port",
           "positive_int", "probability", "qrels_and_runs"]


def number_in(cast, low=None, high=None, *, open_low: bool = False, open_high: bool = False, what: str):
    """An argparse ``type``: ``cast(text)`` within [low, high] (open ends as asked), else a one-line error
    ``expected {what}, got '...'`` that argparse prints with the option's name."""

    def parse(text: str):
        try:
            value = cast(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        below = low is not None and (value <= low if open_low else value < low)
        above = high is not None and (value >= high if open_high else value > high)
        if below or above or value != value:  # value != value: NaN
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return value

    parse.__name__ = what  # argparse names the type by it in its own messages
    return parse


positive_int = number_in(int, 1, what="a positive integer")
nonnegative_int = number_in(int, 0, what="a non-negative integer")
probability = number_in(float, 0.0, 1.0, what="a number in [0, 1]")
level = number_in(float, 0.0, 1.0, open_low=True, open_high=True, what="a number in (0, 1)")
confidence = number_in(float, 0.5, 1.0, open_low=True, open_high=True, what="a confidence level in (0.5, 1)")
port = number_in(int, 0, 65535, what="a port number in 0..65535")


def add_collection_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("qrels", metavar="QRELS", help="TREC qrels file (plain or .gz)")
    parser.add_argument("runs", metavar="RUN", nargs="+", help="TREC run files or directories of them")
    add_depth_argument(parser)
    parser.add_argument("--relevance-level", type=positive_int, default=RELEVANCE_LEVEL, metavar="L",
                        help=f"minimum grade counted relevant (trec_eval -l; default {RELEVANCE_LEVEL})")
    add_reading_arguments(parser)


def add_depth_argument(parser: argparse.ArgumentParser, *, study: bool = False) -> None:
    """``--depth``: keep only each run's top D documents; default all (as trec_eval) in every command on
    the user's runs. Only the study commands, which replicate published protocols, default to
    :data:`bayeval.defaults.STUDY_DEPTH` and say so (README.md, "On TREC data")."""
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


def qrels_and_runs(args: argparse.Namespace) -> tuple[Qrels, RunSet]:
    """The qrels and runs named by :func:`add_collection_arguments` (:func:`bayeval.io.load_collection`)."""
    col = load_collection(args.qrels, runs=list(args.runs), relevance_level=args.relevance_level,
                          run_names=getattr(args, "run_names", "auto"), strict=getattr(args, "strict", False))
    return col.qrels(), col.runs()
