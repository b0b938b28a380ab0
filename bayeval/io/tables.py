"""Run tables: one line per run with its metadata, such as TREC's ``runs.tsv`` (run, group, type, ...).

:func:`read_run_table` is the one reader of such tables; the biased-pool study (run groups and types),
the judging designs (run → site) and the simulation studies (manual runs) take their columns from it.

Layout: tab-, comma- or whitespace-separated (the first data line decides: a tab, else a comma, else
whitespace), plain or gzip, blank and ``#`` lines skipped. A first line with a column named ``run``
(any case) is a header; column names are lower-cased. Without a header the columns are ``run``,
``group``, then ``column3``, ``column4``, ... A line with fewer cells than the header is an error; cells
beyond it are ignored. A run listed twice with the same cells is kept once (a
:class:`~bayeval.errors.DataNotice`); with different cells it is an error naming both lines.
"""

from __future__ import annotations

import csv
import os
import warnings

import pandas as pd

from bayeval.errors import DataNotice, FileFormatError
from bayeval.io._files import quoted, read_text

__all__ = ["manual_runs", "read_run_table"]


def read_run_table(path: str | os.PathLike, required: tuple[str, ...] = ("run",)) -> pd.DataFrame:
    """Read a run table (module notes).

    Parameters
    ----------
    path : path-like
    required : tuple of str
        Columns the table must have (``site`` is accepted for ``group`` and the reverse).

    Returns
    -------
    pandas.DataFrame
        One row per run, string columns named by the header, plus ``line`` (the file line of the row).

    Raises
    ------
    FileFormatError
        Naming file and line: a missing column, a short line, an empty run name, a run listed twice
        with different cells, no runs at all.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "runs.tsv"
    >>> _ = f.write_text("run\\tgroup\\ttype\\nA\\tg1\\tautomatic\\nB\\tg1\\tmanual\\n")
    >>> read_run_table(f)[["run", "type", "line"]].values.tolist()
    [['A', 'automatic', 2], ['B', 'manual', 3]]
    """
    path = str(path)
    rows = [(i, ln.rstrip("\r")) for i, ln in enumerate(read_text(path).split("\n"), start=1)
            if ln.strip() and not ln.lstrip().startswith("#")]
    if not rows:
        raise FileFormatError(path, None, "empty file: expected a header 'run group type ...' or 'run group' lines")
    first_line, first = rows[0]
    sep = "\t" if "\t" in first else "," if "," in first else None

    def cells(line: str, lineno: int) -> list[str]:
        if sep == ",":
            try:
                return [c.strip() for c in next(csv.reader([line]), [])]
            except csv.Error as exc:
                raise FileFormatError(path, lineno, f"not a comma-separated line ({exc})") from None
        return [c.strip() for c in line.split(sep)] if sep else line.split()

    head = [c.lower() for c in cells(first, first_line)]
    if "run" in head:
        columns, body = head, rows[1:]
        if len(set(columns)) != len(columns) or "" in columns:
            raise FileFormatError(path, first_line, f"header has an empty or repeated column name: {quoted(head)}")
    else:
        columns = ["run", "group"] + [f"column{j}" for j in range(3, len(head) + 1)]
        body = rows
    for name in required:
        alias = {"group": "site", "site": "group"}.get(name)
        if name not in columns and alias not in columns:
            raise FileFormatError(path, first_line, f"header lacks column {quoted(name)} (found {quoted(head)})")
    out: dict[str, list] = {}
    seen: dict[str, int] = {}
    repeats: list[int] = []
    ri = columns.index("run")
    for lineno, line in body:
        c = cells(line, lineno)
        if len(c) < len(columns):
            raise FileFormatError(path, lineno, f"expected {len(columns)} cells ({', '.join(columns)}), found {len(c)}")
        c = c[: len(columns)]
        run = c[ri]
        if not run:
            raise FileFormatError(path, lineno, "empty run name")
        if run in seen:
            if out[run][:-1] != c:
                raise FileFormatError(path, lineno, f"run {quoted(run)} listed on line {seen[run]} "
                                                    "with different cells")
            repeats.append(lineno)
            continue
        seen[run] = lineno
        out[run] = c + [lineno]
    if not out:
        raise FileFormatError(path, None, "no runs listed")
    if repeats:
        warnings.warn(f"{path}:{repeats[0]}: {len(repeats)} run(s) listed again with the same cells; kept once",
                      DataNotice, stacklevel=2)
    frame = pd.DataFrame(list(out.values()), columns=columns + ["line"])
    return frame.astype({"line": "int64"})


def manual_runs(path: str | os.PathLike) -> tuple[str, ...]:
    """The runs whose ``type`` is ``manual`` (any case) in a run table with columns ``run`` and ``type``."""
    table = read_run_table(path, required=("run", "type"))
    return tuple(table.loc[table["type"].str.lower() == "manual", "run"])
