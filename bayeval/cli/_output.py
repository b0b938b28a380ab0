"""Writing result tables for people (aligned text) and programs (csv, json).

``table`` output never cuts a number: each column gets one number format, at most four significant digits
(:func:`bayeval.display.number_format`: counts whole, a column of small values the decimals that show three
significant digits, variances scientific; probabilities at or beyond 1e-6 of 0 or 1 read ``< 1e-6`` /
``> 1 - 1e-6``),
and the table is drawn by rich only on a terminal wide enough for it; otherwise — narrow terminal,
pipe, file — it is plain aligned text that keeps every character. Every column gets a
legend line under the table (:data:`bayeval.display.LEGENDS`; a command's own ``legend`` replaces the shared
line; tests/test_legends.py runs the commands and fails on a column without one).
An empty result says so on stderr in every format.
"""

from __future__ import annotations

import json
import shutil
import sys
from typing import TextIO

import numpy as np
import pandas as pd

from bayeval.display import LEGENDS, TINY_P, format_probability, format_pvalue, number_format
from bayeval.errors import BayevalInputError

__all__ = ["FORMATS", "LEGENDS", "TINY_P", "collapse_missing", "format_columns", "format_probability",
           "is_probability_column", "write_frame"]

FORMATS = ("table", "csv", "json")


def is_probability_column(name) -> bool:
    """Columns of probabilities (P(Δ < 0), confidences), printed with :func:`format_probability`."""
    name = str(name)
    return name.startswith("p_less") or name in ("confidence", "prob")


def _column_format(values: pd.Series, digits: int):
    """One formatter for a whole column (:func:`bayeval.display.number_format` for numbers)."""
    kind = values.dtype.kind
    if kind == "f" and is_probability_column(values.name):
        return lambda v: format_probability(float(v), digits)
    if kind == "f" and str(values.name).startswith("p_value"):
        return lambda v: format_pvalue(float(v), digits)
    if kind == "b":
        return lambda v: "yes" if v else "no"
    if kind in "iu":
        return lambda v: f"{int(v):d}"
    if kind != "f":
        return lambda v: "" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v)
    return number_format(values.to_numpy(dtype=float), digits, scientific="variance" in str(values.name))


def format_columns(frame: pd.DataFrame, digits: int = 4) -> list[list[str]]:
    """Every cell as text, one format per column (see the module docstring); rows of strings."""
    cols = [[_column_format(frame[c], digits)(v) for v in frame[c].tolist()] for c in frame.columns]
    return [list(r) for r in zip(*cols, strict=True)] if cols else []


def _plain(frame: pd.DataFrame, cells: list[list[str]], title: str | None) -> str:
    heads = [str(c) for c in frame.columns]
    right = [frame[c].dtype.kind in "fiub" for c in frame.columns]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(heads)]

    def line(vals):
        return "  ".join(v.rjust(w) if r else v.ljust(w) for v, w, r in zip(vals, widths, right, strict=True)).rstrip()

    out = [] if title is None else [title]
    out += [line(heads), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in cells]
    return "\n".join(out) + "\n"


def collapse_missing(frame: pd.DataFrame, why: dict | None = None) -> tuple[pd.DataFrame, str | None]:
    """``frame`` without the numeric columns that are missing (NaN) in every row, and without the rows whose
    numeric columns are all missing, with one line that says what was left out and why.

    ``why`` maps a column name to the reason it can be missing (the reason of a left-out row is that of its
    first column with one, else "no value"). Returns ``(frame, None)`` when nothing is missing everywhere.
    A table for people to read never prints rows or columns of NA; csv and json keep them.
    """
    why = why or {}
    num = [c for c in frame.columns if frame[c].dtype.kind == "f"]
    if not len(frame) or not num:
        return frame, None
    cols = [c for c in num if frame[c].isna().all()]
    rest = [c for c in num if c not in cols]
    rows = frame[rest].isna().all(axis=1) if rest else pd.Series(False, index=frame.index)
    parts = []
    if cols:
        reasons = sorted({why.get(c, "no value") for c in cols})
        parts.append(f"{', '.join(map(str, cols))} missing in every row ({'; '.join(reasons)})")
    if rows.any():
        reason = next((why[c] for c in rest if c in why), "no value")
        parts.append(f"{int(rows.sum())} of {len(frame)} rows with no value in {', '.join(map(str, rest))} "
                     f"({reason})")
    if not parts:
        return frame, None
    return frame.loc[~rows, [c for c in frame.columns if c not in cols]], "not shown: " + "; ".join(parts)


def write_frame(frame: pd.DataFrame, fmt: str, out: TextIO | None = None, *, title: str | None = None,
                float_digits: int = 4, legend: dict | None = None, empty: str = "no rows",
                missing: dict | None = None) -> None:
    """Print ``frame`` as ``table`` (aligned; rich only on a terminal wide enough), ``csv`` or ``json``
    (a list of records). ``legend`` adds or overrides column explanations; ``empty`` is said on stderr
    when the frame has no rows. A table leaves out columns and rows that are missing everywhere and says so
    in one line (:func:`collapse_missing`; ``missing`` maps a column to why it can be missing)."""
    out = out or sys.stdout
    if fmt not in FORMATS:
        raise BayevalInputError(f"--format: must be one of {', '.join(FORMATS)}, got {fmt!r}")
    note = None
    if fmt == "table":
        frame, note = collapse_missing(frame, missing)
    if frame.empty:
        print(f"bayeval: note: {empty}" + (f" ({title})" if title else ""), file=sys.stderr)
    if fmt == "csv":
        frame.to_csv(out, index=False, float_format="%.6g", lineterminator="\n")
        return
    if fmt == "json":
        records = frame.replace({np.nan: None}).to_dict(orient="records")
        json.dump(records, out, indent=1, default=_json_default)
        out.write("\n")
        return
    cells = format_columns(frame, float_digits)
    plain = _plain(frame, cells, title)
    legend = {k: v for k, v in (legend or {}).items() if k in frame.columns}
    legends = [f"  {c}: {legend.get(c, LEGENDS.get(c))}" for c in frame.columns if c in legend or c in LEGENDS]
    tty = getattr(out, "isatty", lambda: False)()
    width = shutil.get_terminal_size((80, 24)).columns
    fits = max(len(s) for s in plain.splitlines()) + 4 <= width
    if tty and fits:
        from rich.console import Console
        from rich.table import Table
        from rich.text import Text

        # Text, not str: rich would read names such as 'lam[sys01]' or 'a[/x]' as markup
        table = Table(title=None if title is None else Text(title), show_edge=False, header_style="bold")
        for col in frame.columns:
            table.add_column(Text(str(col)), justify="right" if frame[col].dtype.kind in "fiub" else "left",
                             no_wrap=True)
        for row in cells:
            table.add_row(*(Text(v) for v in row))
        Console(file=out, width=width).print(table)
    else:
        out.write(plain)
    if note:
        out.write(f"  {note}\n")
    if legends:
        out.write("\n".join(legends) + "\n")


def _json_default(v):
    if isinstance(v, np.generic):
        return v.item()
    raise TypeError(type(v).__name__)
