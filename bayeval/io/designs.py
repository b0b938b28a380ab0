"""Files of the reusable-design workflow (``bayeval.design``, docs/reusable-designs.md): the design csv, the run →
site table, per-topic scores.

Design csv (written by ``bayeval.design.write_design``, read by :func:`read_design_frame`)::

    topic,block,S1,S2,S3,S4
    1,0,1,1,1,1
    2,1,1,1,0,0

one row per topic in design order, ``block`` 0 for the all-site baseline, one column per site with
1 = the site's runs contributed judgments to the topic, 0 = held out (``+``/``-``, ``yes``/``no``,
``true``/``false``, ``contribute``/``held-out`` are read too). The ``block`` column is optional.

Sites table (:func:`read_sites`): tab-, comma- or space-separated, with a header naming a ``run``
column and a ``site`` (or ``group``) column — TREC's ``runs.tsv`` works as is — or two columns
``run site`` without a header.

Scores (:func:`read_score_frame`): csv (or tsv) with columns ``run, topic, value`` and optionally
``measure``, as written by ``bayeval measures --per-topic --format csv``.
"""

from __future__ import annotations

import csv
import io
import os

import numpy as np
import pandas as pd

from bayeval.errors import FileFormatError
from bayeval.io._files import quoted, read_text
from bayeval.io._numbers import as_integer
from bayeval.io.tables import read_run_table

__all__ = ["read_design_frame", "read_score_frame", "read_sites"]

#: reserved column names of a design table; every other column is a site
TOPIC, BLOCK = "topic", "block"
_TRUE = {"1", "+", "yes", "y", "true", "t", "contribute", "contributes", "contributed", "in"}
_FALSE = {"0", "-", "no", "n", "false", "f", "held-out", "held_out", "heldout", "held out", "out", "\u2212"}


def read_design_frame(path: str | os.PathLike) -> pd.DataFrame:
    """Read a design csv (see the module notes) into the frame ``Design.from_frame`` takes: ``topic``,
    ``block`` (when given) and one boolean column per site.

    Raises
    ------
    FileFormatError
        Naming the file and line: no ``topic`` column, fewer than two sites, a repeated site or
        topic, a cell that is neither contribute nor held out, a bad block number, a topic no site
        contributes to.
    """
    path = str(path)
    reader = csv.reader(io.StringIO(read_text(path)))
    rows = []
    try:
        for r in reader:
            rows.append((reader.line_num, r))
    except csv.Error as exc:  # e.g. a carriage return inside an unquoted field
        raise FileFormatError(path, reader.line_num or None, f"not a csv line: {quoted(str(exc))}") from None
    lines = [(k, r) for k, r in rows if any(c.strip() for c in r)]
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
            b = as_integer(row[bi].strip())
            if b is None:
                raise FileFormatError(path, lineno, f"block {quoted(row[bi])} is not an integer")
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
    return frame


def read_sites(path: str | os.PathLike) -> dict[str, str]:
    """Read a run → site table (see the module notes; :func:`bayeval.io.read_run_table`).

    Raises
    ------
    FileFormatError
        On a missing column, a short line, or a run given two different sites.
    """
    table = read_run_table(path, required=("run", "site"))
    site = table["site"] if "site" in table.columns else table["group"]
    for run, s, lineno in zip(table["run"], site, table["line"], strict=True):
        if not s:
            raise FileFormatError(str(path), int(lineno), f"empty site for run {quoted(run)}")
    return dict(zip(table["run"], site, strict=True))


def read_score_frame(path: str | os.PathLike) -> pd.DataFrame:
    """Read per-topic scores (csv or tsv with columns ``run, topic, value[, measure]``) as a frame; the columns
    are checked by ``TopicScores.from_frame``."""
    path = str(path)
    text = read_text(path)
    first = text.split("\n", 1)[0]
    sep = "\t" if "\t" in first else ","
    try:
        frame = pd.read_csv(io.StringIO(text), sep=sep, dtype={"run": str, "topic": str, "measure": str})
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:  # pandas' messages may span lines
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise FileFormatError(path, None, f"not a csv table: {quoted(reason)}") from None
    return frame
