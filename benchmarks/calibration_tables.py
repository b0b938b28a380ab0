"""The tables and reliability figures of docs/calibration.md from robustness trial tables.

One row per (method, confidence): trials, pairs, Brier and log score of P(ΔMAP < 0), sharpness (share of
pairs called at ≥ 0.95 / ≥ 0.99), accuracy of the calls at ≥ 0.99 on automatic and on manual pairs (with
``--runs-info``), reliability bins whose Wilson interval misses the bin, mean Kendall τ of E[MAP], median
judgments. Scores come from :func:`bayeval.experiments.statistics.proper_scores`.

Usage::

    python benchmarks/calibration_tables.py TABLE.parquet [MORE.parquet ...] [--runs-info runs.tsv] \\
        [--rows mtc/delta,rtc/delta,bayes0/mc,hier+unseen/mc] [--figure docs/img/calibration-X.png]
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from bayeval.experiments.statistics import proper_scores
from bayeval.io.tables import manual_runs


def _manual(path) -> tuple[str, ...]:
    return manual_runs(path) if path else ()


def table(frame: pd.DataFrame, rows, manual=None) -> str:
    proper, rel = proper_scores(frame, manual=manual)
    out = ["| method / confidence | trials | pairs | Brier | log score | calls ≥ 0.95 (right) | calls ≥ 0.99 (right) | "
           "right ≥ 0.99, automatic | right ≥ 0.99, manual | bins missed | mean τ | median judged |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]

    def pct(x, n=None):
        if not np.isfinite(x):
            return "–"
        return f"{100 * x:.1f}%" + ("" if n is None else f" (n={n})")

    for m, c in rows:
        g = proper[(proper.method == m) & (proper.confidence == c)]
        if g.empty:
            continue
        a = g[g.split == "all"].iloc[0]
        auto = g[(g.split == "run_type") & (g.group == "automatic")]
        man = g[(g.split == "run_type") & (g.group == "manual")]
        ra = pct(auto.right_99.iloc[0], int(auto.n_99.iloc[0])) if len(auto) else "–"
        rm = pct(man.right_99.iloc[0], int(man.n_99.iloc[0])) if len(man) else "–"
        r = rel[(rel.method == m) & (rel.confidence == c) & (rel.split == "all")]
        missed = int((~r.consistent.astype(bool) & (r.n > 0)).sum())
        sub = frame[(frame.method == m) & (frame.confidence == c)]
        per_trial = sub.groupby("trial").agg(tau=("tau", "first"), judgments=("judgments", "first"))
        calls = f"{pct(a.share_95)} ({pct(a.right_95)}) | {pct(a.share_99)} ({pct(a.right_99)})"
        out.append(f"| {m} / {c} | {sub.trial.nunique()} | {int(a.pairs)} | {a.brier:.4f} | {a.log_score:.3f} | "
                   f"{calls} | {ra} | {rm} | {missed} of {int((r.n > 0).sum())} | "
                   f"{per_trial.tau.mean():.3f} | {per_trial.judgments.median():.0f} |")
    return "\n".join(out)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("tables", nargs="+")
    ap.add_argument("--runs-info", default=None)
    ap.add_argument("--rows", default=None, help="method/confidence,... (default: every pair in the tables)")
    ap.add_argument("--figure", default=None, help="reliability diagram of the rows")
    ap.add_argument("--trials", type=int, default=None, help="only trials present for every row, at most this many")
    a = ap.parse_args(argv)
    frame = pd.concat([pd.read_parquet(t) for t in a.tables], ignore_index=True)
    rows = ([tuple(r.split("/")) for r in a.rows.split(",")] if a.rows
            else list(frame.groupby(["method", "confidence"]).groups))
    # score every row on the same trials
    keep = None
    for m, c in rows:
        t = set(frame[(frame.method == m) & (frame.confidence == c)].trial)
        keep = t if keep is None else keep & t
    keep = sorted(keep or ())[: a.trials] if a.trials else sorted(keep or ())
    frame = frame[frame.trial.isin(keep)]
    manual = _manual(a.runs_info) if a.runs_info else None
    print(table(frame, rows, manual))
    if a.figure:
        from bayeval.experiments.plots import plot_reliability

        plot_reliability(frame, rows, path=a.figure, manual=manual, split="run_type" if manual else "all")
        print(f"\nwrote {a.figure}")


if __name__ == "__main__":
    main()
