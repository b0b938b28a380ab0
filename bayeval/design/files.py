"""Files of the design workflow: the design csv, the run → site table, per-topic scores.

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

import csv
import io
import os

import numpy as np
import pandas as pd

from bayeval.design.assign import BLOCK, TOPIC, Design
from bayeval.design.scores import TopicScores
from bayeval.errors import BayevalInputError, FileFormatError
from bayeval.io import quoted

__all__ = ["read_design", "read_scores", "read_sites", "write_design"]

_TRUE = {"1", "+", "yes", "y", "true", "t", "contribute", "contributes", "contributed", "in"}
_FALSE = {"0", "-", "no", "n", "false", "f", "held-out", "held_out", "heldout", "held out", "out", "\u2212"}


def _text(path) -> str:
    from bayeval.io import read_text

    return read_text(path)


def write_design(design: Design, path: str | os.PathLike) -> None:
    """Write a design as csv (see the module notes); read back with :func:`read_design`."""
    design.to_frame().to_csv(path, index=False, lineterminator="\n")


def read_design(path: str | os.PathLike) -> Design:
    """Read a design csv (see the module notes).

    Raises
    ------
    FileFormatError
        Naming the file and line: no ``topic`` column, fewer than two sites, a repeated site or
        topic, a cell that is neither contribute nor held out, a bad block number, a topic no site
        contributes to.
    """
    path = str(path)
    rows = list(csv.reader(io.StringIO(_text(path))))
    lines = [(i + 1, r) for i, r in enumerate(rows) if any(c.strip() for c in r)]
    if not lines:
        raise FileFormatError(path, None, "empty file: expected a header 'topic,block,<site>,...'")
    head_line, header = lines[0]
    header = [h.strip() for h in header]
    if TOPIC not in header:
        raise FileFormatError(path, head_line, f"header has no {quoted(TOPIC)} column")
    seen: set[str] = set()
    for h in header:
        if not h:
            raise FileFormatError(path, head_line, "empty column name in the header")
        if h in seen:
            raise FileFormatError(path, head_line, f"column {quoted(h)} appears twice")
        seen.add(h)
    ti = header.index(TOPIC)
    bi = header.index(BLOCK) if BLOCK in header else None
    site_cols = [j for j, h in enumerate(header) if h not in (TOPIC, BLOCK)]
    if len(site_cols) < 2:
        raise FileFormatError(path, head_line, f"a design needs at least 2 site columns, got {len(site_cols)}")
    topics, blocks, contrib, where = [], [], [], {}
    for lineno, row in lines[1:]:
        if len(row) != len(header):
            raise FileFormatError(path, lineno, f"expected {len(header)} fields, got {len(row)}")
        topic = row[ti].strip()
        if not topic:
            raise FileFormatError(path, lineno, "empty topic")
        if topic in where:
            raise FileFormatError(path, lineno, f"topic {quoted(topic)} already listed on line {where[topic]}")
        where[topic] = lineno
        cells = []
        for j in site_cols:
            v = row[j].strip().lower()
            if v in _TRUE:
                cells.append(True)
            elif v in _FALSE:
                cells.append(False)
            else:
                raise FileFormatError(path, lineno, f"site {quoted(header[j])}: {quoted(row[j])} is neither 1 "
                                                    "(contributes) "
                                                    "nor 0 (held out)")
        if not any(cells):
            raise FileFormatError(path, lineno, f"no site contributes to topic {quoted(topic)}")
        if bi is not None:
            try:
                b = int(row[bi].strip())
            except ValueError:
                raise FileFormatError(path, lineno, f"block {quoted(row[bi])} is not an integer") from None
            if b < 0:
                raise FileFormatError(path, lineno, f"block {b} is negative")
            blocks.append(b)
        topics.append(topic)
        contrib.append(cells)
    if not topics:
        raise FileFormatError(path, None, "no topic rows after the header")
    frame = pd.DataFrame(np.array(contrib, dtype=bool), columns=[header[j] for j in site_cols])
    frame.insert(0, TOPIC, topics)
    if bi is not None:
        frame.insert(1, BLOCK, blocks)
    try:
        return Design.from_frame(frame)
    except BayevalInputError as exc:  # pragma: no cover - everything is checked above
        raise FileFormatError(path, None, str(exc)) from None


def read_sites(path: str | os.PathLike) -> dict[str, str]:
    """Read a run → site table (see the module notes; :func:`bayeval.io.read_run_table`).

    Raises
    ------
    FileFormatError
        On a missing column, a short line, or a run given two different sites.
    """
    from bayeval.io.tables import read_run_table

    table = read_run_table(path, required=("run", "site"))
    site = table["site"] if "site" in table.columns else table["group"]
    for run, s, lineno in zip(table["run"], site, table["line"], strict=True):
        if not s:
            raise FileFormatError(str(path), int(lineno), f"empty site for run {quoted(run)}")
    return dict(zip(table["run"], site, strict=True))


def read_scores(path: str | os.PathLike, measure: str | None = None, *, fill: float | None = None) -> TopicScores:
    """Read per-topic scores (csv or tsv with columns ``run, topic, value[, measure]``).

    See :meth:`TopicScores.from_frame` for ``measure`` and ``fill``.
    """
    path = str(path)
    text = _text(path)
    first = text.split("\n", 1)[0]
    sep = "\t" if "\t" in first else ","
    try:
        frame = pd.read_csv(io.StringIO(text), sep=sep, dtype={"run": str, "topic": str, "measure": str})
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise FileFormatError(path, None, f"not a csv table ({exc})") from None
    return TopicScores.from_frame(frame, measure, fill=fill, source=path)
