"""Files of the design workflow: the design csv, the run → site table, per-topic scores.

Their formats are described, and the files parsed, in :mod:`bayeval.io.designs` (all file reading is in
``bayeval.io``); here the parsed frames become a :class:`~bayeval.design.Design` and
:class:`~bayeval.design.TopicScores`, and :func:`read_sites` is re-exported.
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
    design.to_csv(path)


def read_design(path: str | os.PathLike) -> Design:
    """Read a design csv as a :class:`~bayeval.design.Design`.

    Raises
    ------
    FileFormatError
        Naming the file and line, as :func:`bayeval.io.designs.read_design_frame` lists.
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
