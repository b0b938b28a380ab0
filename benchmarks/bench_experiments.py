"""Speed of the robustness study (goal: 200 TREC-8 trials, k = 10, c = 2, in <= 30 min on 2 cores).

Runs (or resumes) the study through the public API and prints a markdown table: wall time of this call,
trials per minute, and where a trial's time goes (per method: selection + estimation + confidence), read
from the trial table's ``seconds`` columns.

    python benchmarks/bench_experiments.py ../shared/data/trec8 --trials 200 --workers 2 --out /tmp/trec8.parquet
    python benchmarks/bench_experiments.py --table /tmp/trec8.parquet      # only summarise an existing table
    python benchmarks/bench_experiments.py ../shared/data/trec8 --reference 4   # warm vs cold RTC refits

A resumed call times only the trials it ran; ``--table`` reports the per-trial times recorded in the table.
``--reference N`` runs trials 0..N-1 in this process twice — as bayeval does (each RTC refit reuses the
rank coefficients of the topics whose judgments did not change) and with every refit from scratch (the
naive reference) — checks that both give the same rows and prints the ratio.
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


def reference(collection, trials: int) -> str:
    """Trials 0..n-1 with warm-started RTC refits (bayeval) and with cold refits; same rows, ratio of times."""
    import pandas as pd

    from bayeval.experiments import RobustnessConfig, run_trial
    from bayeval.selection import rtc

    cfg = RobustnessConfig()
    run_trial(collection, cfg, 0)  # warm up: imports, numba, the runs read once
    times, frames = {}, {}
    warm = rtc.RTCSelector._rtc_estimate

    def cold(self, data):
        self._fit = None  # forget the previous fit: every refit from scratch
        return warm(self, data)

    for label, fn in (("bayeval (warm refits)", warm), ("reference (cold refits)", cold)):
        rtc.RTCSelector._rtc_estimate = fn
        t0 = time.perf_counter()
        frames[label] = pd.concat([run_trial(collection, cfg, t) for t in range(trials)])
        times[label] = time.perf_counter() - t0
    rtc.RTCSelector._rtc_estimate = warm
    a, b = (f.drop(columns=["seconds", "trial_seconds"]).reset_index(drop=True) for f in frames.values())
    same = a[["method", "confidence", "run_a", "run_b", "judgments"]].equals(
        b[["method", "confidence", "run_a", "run_b", "judgments"]])
    diff = float((a["p_less"] - b["p_less"]).abs().max())
    (tw, tc) = times.values()
    return (f"| what | {trials} trials, one process |\n|---|---:|\n| bayeval (warm refits) | {tw:.1f} s |\n"
            f"| reference (cold refits) | {tc:.1f} s |\n| ratio | {tc / tw:.1f}x |\n"
            f"| same judgments and rows | {same} (max abs diff of P(ΔMAP<0): {diff:.1e}) |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("collection", nargs="?", help="collection directory (runs/, qrels.txt.gz)")
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--budget", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="/tmp/bench_experiments.parquet")
    ap.add_argument("--table", default=None, help="summarise this trial table instead of running")
    ap.add_argument("--reference", type=int, default=0, metavar="N",
                    help="time N trials with warm and with cold RTC refits (no study run)")
    args = ap.parse_args()
    from bayeval.experiments import RobustnessConfig, load_collection, read_table, run_study

    if args.table:
        print(summarise(read_table(args.table), None, 0, args.workers))
        return
    if not args.collection:
        ap.error("give a collection directory or --table")
    col = load_collection(args.collection)
    if args.reference:
        print(reference(col, args.reference))
        return
    t0 = time.perf_counter()
    res = run_study(col, RobustnessConfig(seed=args.seed, budget=args.budget), args.trials, out=args.out,
                    workers=args.workers)
    wall = time.perf_counter() - t0
    print(res.summary())
    print(summarise(res.frame, wall, len(res.ran), args.workers))


if __name__ == "__main__":
    main()
