"""Staying on a topic while judging: share of consecutive judgments on the same topic, and the extra
judgments it costs, for a grid of tolerances (``simulate(..., topic_tolerance=tau)``; docs/judging.md).

For ``--pairs`` random pairs of runs (seeded) of one collection, an MTC campaign runs against the full
qrels (the assessor) at depth 100 on AP until the pair is decided at alpha 0.95, once per tolerance.
Printed per tolerance: the share of consecutive judgments on the same topic (pooled over pairs), the
total judgments against tau = 0 (the extra cost, in %), the median of the per-pair ratios, and decided /
right decisions.

    python studies/topic_batching.py ../shared/data/robust03 --pairs 20 --seed 0 --tau 0,0.1,0.2,0.3,0.5
    python studies/topic_batching.py ../shared/data/trec8 --pairs 20 --seed 0 --tau 0,0.2

The tolerance is chosen on Robust 2003 and reported on TREC-8 (out of sample).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("collection", help="directory with qrels.txt.gz and runs/")
    ap.add_argument("--pairs", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tau", default="0,0.1,0.2,0.3,0.5")
    ap.add_argument("--method", default="mtc")
    args = ap.parse_args()
    from bayeval.io import read_qrels, read_runs
    from bayeval.selection import simulate

    root = Path(args.collection)
    files = sorted(p for p in (root / "runs").iterdir() if p.name.endswith(".gz"))
    rng = np.random.default_rng(args.seed)
    picks = [tuple(rng.choice(len(files), 2, replace=False)) for _ in range(args.pairs)]
    qrels = read_qrels(root / "qrels.txt.gz")
    taus = [float(t) for t in args.tau.split(",")]
    rows = {t: [] for t in taus}
    for a, b in picks:
        runs = read_runs([files[a], files[b]])
        for t in taus:
            res = simulate(runs, qrels, method=args.method, depth=100, alpha=0.95, topic_tolerance=t)
            hist = [h[0] for h in res.history]
            same = sum(x == y for x, y in zip(hist[1:], hist[:-1], strict=True))
            p = res.pairs[0]
            rows[t].append((res.judgments, same, max(len(hist) - 1, 0), p.decided, bool(p.correct)))
    base = np.array([r[0] for r in rows[taus[0]]], dtype=float)
    print(f"{root.name}: {args.pairs} random pairs (seed {args.seed}), {args.method}, AP, depth 100, alpha 0.95")
    print("| tau | same topic | judgments | extra (total) | median ratio | decided | right |")
    print("|---|---|---|---|---|---|---|")
    for t in taus:
        r = np.array(rows[t], dtype=float)
        ratio = r[:, 0] / np.maximum(base, 1)
        print(f"| {t:g} | {r[:, 1].sum() / max(r[:, 2].sum(), 1):.1%} | {int(r[:, 0].sum())} | "
              f"{r[:, 0].sum() / base.sum() - 1:+.1%} | {np.median(ratio):.3f} | {int(r[:, 3].sum())} | "
              f"{int((r[:, 3] * r[:, 4]).sum())} |", flush=True)


if __name__ == "__main__":
    main()
