"""Speed of the robustness study (issue 6, goal: 200 TREC-8 trials, k = 10, c = 2, in <= 30 min on 2 cores).

Runs (or resumes) the study through the public API and prints a markdown table: wall time of this call,
trials per minute, and where a trial's time goes (per method: selection + estimation + confidence), read
from the trial table's ``seconds`` columns.

    python benchmarks/bench_experiments.py ../shared/data/trec8 --trials 200 --workers 2 --out /tmp/trec8.parquet
    python benchmarks/bench_experiments.py --table /tmp/trec8.parquet      # only summarise an existing table

A resumed call times only the trials it ran; ``--table`` reports the per-trial times recorded in the table.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def summarise(frame, wall: float | None, ran: int, workers: int) -> str:
    trials = frame.groupby("trial")["trial_seconds"].first()
    per = frame.groupby(["method", "trial"])["seconds"].first().groupby("method")
    lines = ["| quantity | value |", "|---|---:|"]
    if wall is not None and ran:
        lines += [f"| trials run by this call | {ran} |", f"| wall time | {wall / 60:.1f} min |",
                  f"| trials per minute | {ran / wall * 60:.2f} |", f"| workers | {workers} |"]
    lines += [f"| trials in the table | {len(trials)} |",
              f"| trial time, median / mean / max | {trials.median():.1f} / {trials.mean():.1f} / "
              f"{trials.max():.1f} s |",
              f"| sum of trial times / 2 cores | {trials.sum() / 2 / 60:.1f} min |"]
    for m, s in per:
        lines.append(f"| {m}: mean s per trial (selection + estimate + confidences) | {s.mean():.2f} |")
    j = frame[frame["method"] == "rtc"].groupby("trial")["judgments"].first()
    if len(j):
        lines.append(f"| RTC judgments per trial, median / mean | {np.median(j):.0f} / {j.mean():.0f} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("collection", nargs="?", help="collection directory (runs/, qrels.txt.gz)")
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--budget", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="/tmp/bench_experiments.parquet")
    ap.add_argument("--table", default=None, help="summarise this trial table instead of running")
    args = ap.parse_args()
    from bayeval.experiments import RobustnessConfig, load_collection, read_table, run_study

    if args.table:
        print(summarise(read_table(args.table), None, 0, args.workers))
        return
    if not args.collection:
        ap.error("give a collection directory or --table")
    col = load_collection(args.collection)
    t0 = time.perf_counter()
    res = run_study(col, RobustnessConfig(seed=args.seed, budget=args.budget), args.trials, out=args.out,
                    workers=args.workers)
    wall = time.perf_counter() - t0
    print(res.summary())
    print(summarise(res.frame, wall, len(res.ran), args.workers))


if __name__ == "__main__":
    main()
