"""The tidy trial table of the simulation studies (``bayeval.experiments``): one row per trial × pair × method ×
confidence method, in parquet or csv.

Columns (:data:`COLUMNS`):

- ``collection, trial, seed, k, c, depth, alpha`` — the study and the trial;
- ``method`` (``mtc``, ``rtc``, ``bayes``, ``ip``), ``confidence`` (``paper``, ``delta``, ``exact``, ``mc``;
  ``none`` for ``ip``);
- ``run_a, run_b`` — the pair; ``pair_type`` — ``both``/``one``/``none`` of the two runs among the
  originals (carterette2007 Table 3); ``similarity`` — average fraction of documents in common (Table 4);
- ``p_less`` — P(ΔMAP < 0), Δ = MAP(a) − MAP(b) (NaN for ``ip``); ``e_delta``, ``var_delta`` — E and Var of ΔMAP;
- ``e_map_a, e_map_b`` — E[MAP] of the runs; ``true_map_a, true_map_b, true_delta`` — on the complete qrels;
- ``judgments`` — judgments made on the originals by the method's selection; ``decided`` — whether it
  reached α on every original pair; ``tau`` — Kendall τ between E[MAP] and true MAP over the k runs
  (repeated on the trial's rows); ``seconds`` — the method's time in the trial; ``trial_seconds``.

A study is resumable: :func:`completed_trials` lists the trials already in a file, and
:func:`write_table` replaces the file atomically, so an interrupted study loses at most the trials
not yet written.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from bayeval.errors import BayevalInputError
from bayeval.io._files import check_file, quoted

__all__ = ["COLUMNS", "FORMATS", "completed_trials", "read_table", "table_format", "write_table"]

COLUMNS = ("collection", "trial", "seed", "k", "c", "depth", "alpha", "method", "confidence", "run_a", "run_b",
           "pair_type", "similarity", "p_less", "e_delta", "var_delta", "e_map_a", "e_map_b", "true_map_a",
           "true_map_b", "true_delta", "judgments", "decided", "tau", "seconds", "trial_seconds")

FORMATS = ("parquet", "csv")


def table_format(path: str | os.PathLike) -> str:
    """``"parquet"`` or ``"csv"`` from the file name (``.parquet``/``.pq``, ``.csv``/``.csv.gz``)."""
    name = str(path).lower()
    if name.endswith((".parquet", ".pq")):
        return "parquet"
    if name.endswith((".csv", ".csv.gz")):
        return "csv"
    raise BayevalInputError(f"table: {path}: the name must end in .parquet, .pq, .csv or .csv.gz")


def read_table(path: str | os.PathLike, columns=COLUMNS, optional=None) -> pd.DataFrame:
    """Read a trial table written by :func:`write_table` (or by a study), checking its ``columns``
    (default: the robustness study's); a column named in ``optional`` (a mapping column -> default) may be
    absent, as in a table written before it existed, and is then read as its default."""
    fmt = table_format(path)
    p = Path(path)
    if not p.exists():
        raise BayevalInputError(f"table: {p} does not exist")
    check_file(p, size_limit=False)  # a device, a pipe: refused before pandas reads without end
    try:
        frame = pd.read_parquet(p) if fmt == "parquet" else pd.read_csv(p, dtype={"run_a": str, "run_b": str})
    except (OSError, ValueError) as exc:  # pandas' messages may span lines and quote whole fields
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise BayevalInputError(f"table: {p}: not a readable {fmt} file: {quoted(reason)}") from None
    optional = dict(optional or {})
    missing = [c for c in columns if c not in frame.columns and c not in optional]
    if missing:
        shown = ", ".join(missing[:5]) + (f" … ({len(missing)} in all)" if len(missing) > 5 else "")
        raise BayevalInputError(f"table: {p}: missing column(s) {shown}")
    absent = {c: optional[c] for c in columns if c not in frame.columns}
    return (frame.assign(**absent) if absent else frame)[list(columns)]


def write_table(frame: pd.DataFrame, path: str | os.PathLike, columns=COLUMNS) -> None:
    """Write the ``columns`` of ``frame`` to ``path`` atomically (a temporary file, then a rename)."""
    fmt = table_format(path)
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise BayevalInputError(f"frame: missing column(s) {missing}")
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{p.name}.tmp")
    frame = frame[list(columns)]
    if fmt == "parquet":
        frame.to_parquet(tmp, index=False)
    else:
        frame.to_csv(tmp, index=False)
    os.replace(tmp, p)


def completed_trials(frame: pd.DataFrame, *, collection: str | None = None, seed: int | None = None,
                     methods=None) -> set[int]:
    """Trials in ``frame`` that hold every one of ``methods`` (for the given collection and seed)."""
    f = frame
    if collection is not None:
        f = f[f["collection"] == collection]
    if seed is not None:
        f = f[f["seed"] == seed]
    if not len(f):
        return set()
    if methods is None:
        return set(int(t) for t in f["trial"].unique())
    have = f.groupby("trial")["method"].agg(lambda m: set(m))
    return {int(t) for t, m in have.items() if set(methods) <= m}
