"""Writing result tables as an aligned table, csv or json."""

from __future__ import annotations

import json
import sys
from typing import TextIO

import numpy as np
import pandas as pd

from bayeval.errors import BayevalInputError

__all__ = ["FORMATS", "write_frame"]

FORMATS = ("table", "csv", "json")


def write_frame(frame: pd.DataFrame, fmt: str, out: TextIO | None = None, *, title: str | None = None,
                float_digits: int = 4) -> None:
    """Print ``frame`` as ``table`` (rich; every text printed literally, never as markup), ``csv`` or ``json``
    (a list of records)."""
    out = out or sys.stdout
    if fmt == "csv":
        frame.to_csv(out, index=False, float_format="%.6g", lineterminator="\n")
    elif fmt == "json":
        records = frame.replace({np.nan: None}).to_dict(orient="records")
        json.dump(records, out, indent=1, default=_json_default)
        out.write("\n")
    elif fmt == "table":
        from rich.console import Console
        from rich.table import Table
        from rich.text import Text

        # Text, not str: rich would read names such as 'lam[sys01]' or 'a[/x]' as markup
        table = Table(title=None if title is None else Text(title), show_edge=False, header_style="bold")
        for col in frame.columns:
            table.add_column(Text(str(col)), justify="right" if frame[col].dtype.kind in "fiu" else "left")
        for row in frame.itertuples(index=False):
            table.add_row(*(Text(_cell(v, float_digits)) for v in row))
        Console(file=out, width=200 if not out.isatty() else None).print(table)
    else:
        raise BayevalInputError(f"--format: must be one of {', '.join(FORMATS)}, got {fmt!r}")


def _cell(v, digits: int) -> str:
    if isinstance(v, (float, np.floating)):
        if np.isnan(v):
            return "nan"
        # small non-zero values (variances) keep their significant digits
        return f"{v:.2e}" if v != 0 and abs(v) < 10.0 ** -digits * 50 else f"{v:.{digits}f}"
    return str(v)


def _json_default(v):
    if isinstance(v, np.generic):
        return v.item()
    raise TypeError(type(v).__name__)
