"""Real-data check: MTC, RTC and incremental pooling on TREC-8, 50 random pairs, depth 100, AP.

For each pair the full TREC-8 qrels are the assessor; a campaign runs until P(ΔMAP < 0) >= alpha or
<= 1 - alpha (or the budget ends), and the decided sign is checked against ΔMAP on the full qrels
(runs cut to depth 100, unjudged documents nonrelevant).

    python studies/selection_trec8.py --pairs 50 --seed 0 --methods mtc,rtc --out /tmp/sel_trec8.json
    python studies/selection_trec8.py --pairs 50 --seed 0 --methods rtc --automatic   # automatic runs only

Needs ../shared/data/trec8. Prints one markdown table (docs/judging.md quotes it).
"""

from __future__ import annotations

import argparse
import json
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec8"


def _one(args):
    method, a, b, alpha, depth, budget, extra = args
    from bayeval.io import read_qrels, read_runs
    from bayeval.selection import simulate

    runs = read_runs([DATA / "runs" / f"input.{a}.gz", DATA / "runs" / f"input.{b}.gz"])
    qrels = read_qrels(DATA / "qrels.txt.gz")
    t0 = time.perf_counter()
    res = simulate(runs, qrels, method=method, alpha=alpha, depth=depth, budget=budget, **extra)
    p = res.pairs[0]
    return {"method": method, "run_a": a, "run_b": b, "judgments": res.judgments, "decided": p.decided,
            "correct": p.correct, "p_less": p.p_less, "true_delta": p.true_delta, "seconds": time.perf_counter() - t0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--alpha", type=float, default=0.95)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--budget", type=int, default=5000)
    ap.add_argument("--methods", default="mtc,rtc")
    ap.add_argument("--config", default="rtc-mtc")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default=None)
    ap.add_argument("--automatic", action="store_true", help="draw pairs of automatic runs only (runs.tsv)")
    args = ap.parse_args()
    names = sorted(p.name[len("input."):-len(".gz")] for p in (DATA / "runs").glob("input.*.gz"))
    if args.automatic:
        from bayeval.io import manual_runs

        manual = set(manual_runs(DATA / "runs.tsv"))
        names = [n for n in names if n not in manual]
    rng = np.random.default_rng(args.seed)
    pairs = []
    while len(pairs) < args.pairs:
        i, j = rng.choice(len(names), size=2, replace=False)
        if (names[i], names[j]) not in pairs:
            pairs.append((names[i], names[j]))
    jobs = []
    for m in args.methods.split(","):
        extra = {"config": args.config} if m == "rtc" else {}
        jobs += [(m, a, b, args.alpha, args.depth, args.budget, extra) for a, b in pairs]
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as ex:
        rows = list(ex.map(_one, jobs))
    wall = time.perf_counter() - t0
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))
    kind = "automatic " if args.automatic else ""
    print(f"TREC-8, {args.pairs} random pairs of {kind}runs (seed {args.seed}), depth {args.depth}, AP, "
          f"alpha {args.alpha}, budget {args.budget}; {wall:.0f} s with {args.workers} workers\n")
    print("| method | median judgments | mean judgments | decided | correct of decided | correct, all pairs* |")
    print("|---|---:|---:|---:|---:|---:|")
    for m in args.methods.split(","):
        r = [x for x in rows if x["method"] == m]
        j = np.array([x["judgments"] for x in r])
        dec = [x for x in r if x["decided"]]
        acc = np.mean([x["correct"] for x in dec]) if dec else float("nan")
        # undecided pairs (budget spent): the sign of E[ΔMAP] at the end
        allc = np.mean([x["correct"] if x["decided"] else (np.sign(0.5 - x["p_less"]) == np.sign(x["true_delta"]))
                        for x in r])
        print(f"| {m} | {np.median(j):.0f} | {j.mean():.1f} | {len(dec)}/{len(r)} | {acc:.1%} | {allc:.1%} |")


if __name__ == "__main__":
    main()
