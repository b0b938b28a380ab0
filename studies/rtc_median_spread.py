"""How far the median judgments-to-decision of RTC moves between random samples of TREC-8 pairs.

Reads the per-pair rows of ``studies/selection_trec8.py --out FILE`` (a JSON list; or JSON lines with at least
``judgments``, ``decided`` and ``correct``) and prints the median, mean and wrong decisions, then the bootstrap
distribution of the median over ``--sizes`` pairs drawn with replacement: the range a median of 24 or 36 random
pairs falls in when nothing but the pairs changes (docs/notes/depth.md, "RTC judging").

    python studies/selection_trec8.py --pairs 50 --seed 0 --methods rtc --out rtc50.json
    python studies/rtc_median_spread.py rtc50.json --sizes 24,36,50
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("rows", type=Path)
    ap.add_argument("--sizes", default="24,36,50")
    ap.add_argument("--method", default="rtc")
    ap.add_argument("--resamples", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    text = a.rows.read_text()
    rows = json.loads(text) if text.lstrip().startswith("[") else [json.loads(x) for x in text.splitlines() if x]
    rows = [r for r in rows if "judgments" in r and r.get("method", a.method) == a.method]
    j = np.array([r["judgments"] for r in rows], dtype=float)
    dec = [r for r in rows if r["decided"]]
    wrong = sum(1 for r in dec if not r["correct"])
    print(f"{len(rows)} pairs: median {np.median(j):g}, mean {j.mean():.1f} judgments; decided {len(dec)}, "
          f"wrong {wrong} ({wrong / max(len(dec), 1):.1%} of decided)")
    rng = np.random.default_rng(a.seed)
    print("| pairs | median of the median | 2.5% | 97.5% |\n|---:|---:|---:|---:|")
    for n in (int(x) for x in a.sizes.split(",")):
        m = np.median(rng.choice(j, size=(a.resamples, n), replace=True), axis=1)
        lo, mid, hi = np.percentile(m, [2.5, 50, 97.5])
        print(f"| {n} | {mid:g} | {lo:g} | {hi:g} |")


if __name__ == "__main__":
    main()
