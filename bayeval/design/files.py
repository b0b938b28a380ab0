"""Files of the design workflow: the design csv, the run → site table, per-topic scores.

Read by :mod:`bayeval.io.designs` (all file reading is in ``bayeval.io``); :func:`read_sites` is re-exported here.

Design csv (written by :func:`write_design`, read by :func:`read_design`)::

    topic,block,S1,S2,S3,S4
    1,0,1,1,1,1
    2,1,1,1,0,0

one row per topic in design order, ``block`` 0 for the all-site baseline, one column per site with
1 = the site's runs contributed judgments to the topic, 0 = held out (``+``/``-``, ``yes``/``no``,
``true``/``false``, ``contribute``/``held-out`` are read too). The ``block`` column is optional.

Sites table (:func:`read_sites`): tab-, comma- or space-separated, with a header naming a ``run``
column and a ``site`` (or ``group``) column — TREC's ``runs.tsv`` works as is — or two columns
``run site`` without a header.

Scores (:func:`read_scores`): csv (or tsv) with columns ``run, topic, value`` and optionally
``measure``, as written by ``bayeval measures --per-topic --format csv``.
"""

from __future__ import annotations

import os

from bayeval.design.assign import Design
from bayeval.design.scores import TopicScores
from bayeval.errors import BayevalInputError, FileFormatError
from bayeval.io.designs import read_design_frame, read_score_frame, read_sites

__all__ = ["read_design", "read_scores", "read_sites", "write_design"]


def write_design(design: Design, path: str | os.PathLike) -> None:
    """Write a design as csv (see the module notes); read back with :func:`read_design`."""
    design.to_frame().to_csv(path, index=False, lineterminator="\n")


def read_design(path: str | os.PathLike) -> Design:
    """Read a design csv (see the module notes; :func:`bayeval.io.designs.read_design_frame`).

    Raises
    ------
    FileFormatError
        Naming the file and line: no ``topic`` column, fewer than two sites, a repeated site or
        topic, a cell that is neither contribute nor held out, a bad block number, a topic no site
        contributes to.
    """
    frame = read_design_frame(path)
    try:
        return Design.from_frame(frame)
    except BayevalInputError as exc:  # pragma: no cover - everything is checked above
        raise FileFormatError(str(path), None, str(exc)) from None


def read_scores(path: str | os.PathLike, measure: str | None = None, *, fill: float | None = None) -> TopicScores:
    """Read per-topic scores (csv or tsv with columns ``run, topic, value[, measure]``;
    :func:`bayeval.io.designs.read_score_frame`).

    See :meth:`TopicScores.from_frame` for ``measure`` and ``fill``.
    """
    return TopicScores.from_frame(read_score_frame(path), measure, fill=fill, source=str(path))
