"""The tables and reliability figures of docs/calibration.md from robustness trial tables.

For the chosen (method, confidence) rows, on the trials every row has: Brier and log score of P(ΔMAP < 0),
sharpness (share of pairs called at ≥ 0.95 / ≥ 0.99) and the right share of those calls, over all pairs, by
pair type and (with ``--runs-info``) automatic against manual; the reliability bins with Wilson intervals (⚠
where the interval misses the bin); mean Kendall τ of E[MAP] and the judgments; with ``--runs-info``, E[MAP] ÷ MAP
per run type. The tables are the study
page's own, rendered by :func:`bayeval.experiments.report.render_scores`.

Usage::

    python studies/calibration_tables.py TABLE.parquet [MORE.parquet ...] [--runs-info runs.tsv] \\
        [--rows mtc/delta,rtc/delta,bayes0/mc,hier+unseen/mc] [--figure docs/img/calibration-X.png]
"""

from __future__ import annotations

import argparse

import pandas as pd

from bayeval.experiments.report import render_scores
from bayeval.io.tables import manual_runs


def _bias_table(frame: pd.DataFrame, rows, manual: set) -> str:
    """E[MAP] ÷ MAP (sums over run-trials) and the mean error E[MAP] − MAP per row and run type
    (docs/notes/calibration-record.md, revision 5: a manual run's E[MAP] is biased low)."""
    out = ["| method | run type | run-trials | E[MAP] ÷ MAP | mean E[MAP] − MAP |", "|---|---|---:|---:|---:|"]
    for m, c in rows:
        f = frame[(frame.method == m) & (frame.confidence == c)]
        sides = [f[["trial", f"run_{x}", f"e_map_{x}", f"true_map_{x}"]].set_axis(["trial", "run", "e", "t"], axis=1)
                 for x in "ab"]
        r = pd.concat(sides).drop_duplicates(["trial", "run"])
        for kind, g in (("automatic", r[~r.run.isin(manual)]), ("manual", r[r.run.isin(manual)])):
            if len(g):
                ratio, err = g.e.sum() / g.t.sum(), (g.e - g.t).mean()
                out.append(f"| {m} / {c} | {kind} | {len(g)} | {ratio:.3f} | {err:+.3f} |")
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
    manual = manual_runs(a.runs_info) if a.runs_info else None
    print(render_scores(frame, rows, manual=manual or ()))
    if manual:
        print("\n" + _bias_table(frame, rows, set(manual)))
    if a.figure:
        from bayeval.experiments.plots import plot_reliability

        plot_reliability(frame, rows, path=a.figure, manual=manual, split="run_type" if manual else "all")
        print(f"\nwrote {a.figure}")


if __name__ == "__main__":
    main()
