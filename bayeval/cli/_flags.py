"""One flag vocabulary for the draw counts of every sub-command, and for the automatic assessors' labels.

- ``--mc-draws N``: Monte Carlo draws of relevance (expected measures, P(Δ < 0));
- ``--posterior-draws N``: posterior draws per chain of a relevance model's fit (with ``--chains``,
  ``--tune``);
- ``--progress`` / ``--no-progress``: progress of long work, a bar on a terminal and a line every few seconds
  elsewhere (default), or none;
- ``--labels NAME=FILE``: an automatic assessor's labels (an LLM's grades, a cross-encoder's scores), repeatable,
  an expert of the relevance model (:func:`bayeval.relevance.with_assessors`).

The earlier spellings (``--draws``, ``--fit-draws``) still work for a while; they print a one-line
deprecation notice on stderr and are hidden from ``--help``.
"""

from __future__ import annotations

import argparse
import sys

from bayeval.cli._inputs import positive_int

__all__ = ["DeprecatedAlias", "add_labels", "add_mc_draws", "add_posterior_draws", "add_progress", "labels_from_args"]


class DeprecatedAlias(argparse.Action):
    """An old spelling of a flag: sets the new flag's value and says so on stderr."""

    def __init__(self, option_strings, dest, replacement: str, **kwargs):
        super().__init__(option_strings, dest, help=argparse.SUPPRESS, **kwargs)
        self.replacement = replacement

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"bayeval: warning: {option_string} is deprecated; use {self.replacement}", file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_mc_draws(parser, default: int = 2000, *, old: str | None = None) -> None:
    """``--mc-draws`` (and the deprecated ``old`` spelling, if any)."""
    parser.add_argument("--mc-draws", type=positive_int, default=default, metavar="N",
                        help=f"Monte Carlo draws of relevance (default {default})")
    if old:
        parser.add_argument(old, dest="mc_draws", type=positive_int, action=DeprecatedAlias,
                            replacement="--mc-draws")


def add_posterior_draws(parser, default: int = 1000, *, old: str | None = None) -> None:
    """``--posterior-draws`` (and the deprecated ``old`` spelling, if any)."""
    parser.add_argument("--posterior-draws", type=positive_int, default=default, metavar="N",
                        help=f"posterior draws per chain of the relevance model's fit (default {default})")
    if old:
        parser.add_argument(old, dest="posterior_draws", type=positive_int, action=DeprecatedAlias,
                            replacement="--posterior-draws")


def add_progress(parser) -> None:
    """``--progress`` / ``--no-progress`` (``args.progress``: True, False, or None = the default, shown)."""
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="progress of long work: a bar on a terminal, a line every few seconds in a log or a "
                             "pipe (default); --no-progress: none")


def add_labels(parser) -> None:
    """``--labels NAME=FILE`` (repeatable; ``args.labels``, a list of the raw values)."""
    parser.add_argument("--labels", action="append", default=[], metavar="NAME=FILE",
                        help="an automatic assessor's labels of (topic, docno) pairs: qrels 'topic iter docno grade' "
                             "(any grade scale) or 'topic docno score', plain or .gz; its map to relevance is learned "
                             "on the pairs also judged and applied to the unjudged ones, its uncertainty carried to "
                             "every confidence (docs/relevance.md, 'Labels from an automatic assessor'); NAME= may be "
                             "left out (the file's name); repeatable, one per assessor")


def labels_from_args(args) -> list:
    """The :class:`~bayeval.data.AssessorLabels` of ``--labels`` (read with :func:`bayeval.io.read_labels`; ``[]``
    when none); a repeated NAME is an error."""
    from bayeval.errors import BayevalInputError
    from bayeval.io.labels import read_labels

    out = []
    for item in getattr(args, "labels", None) or []:
        name, sep, path = item.partition("=")
        if not sep:
            name, path = None, item
        elif not name or not path:
            raise BayevalInputError(f"--labels: expected NAME=FILE, got {item!r}")
        out.append(read_labels(path, name=name, strict=getattr(args, "strict", False)))
    names = [lab.name for lab in out]
    if len(set(names)) != len(names):
        raise BayevalInputError(f"--labels: two label sets are named alike ({', '.join(names)}); give NAME=FILE")
    return out
