"""Per-trial difference of the proper scores of two sparse-label study runs on the same trials and pairs.

Both CSVs come from ``studies/sparse_share_draws.py ... --out FILE`` with the same collection, trials and
``--max-pairs`` (so the same sparse labels and pairs). Prints, for the Brier and log score of P(Δ<0), the mean
over trials of (B − A) with its standard error, and in how many trials B scored better (lower).

    python studies/sparse_paired_scores.py robust_shipped.csv robust_variant.csv
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd


def per_trial_scores(pairs: pd.DataFrame) -> pd.DataFrame:
    """Brier and log score of ``p_less`` against 1{true_delta < 0}, averaged per trial."""
    y = (pairs["true_delta"] < 0).astype(float)
    p = pairs["p_less"].clip(1e-6, 1 - 1e-6)
    scored = pairs.assign(brier=(p - y) ** 2, log=-(y * np.log(p) + (1 - y) * np.log(1 - p)))
    return scored.groupby("trial")[["brier", "log"]].mean()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", help="pairs CSV of the reference (e.g. the shipped configuration)")
    ap.add_argument("b", help="pairs CSV of the variant")
    args = ap.parse_args()
    a, b = pd.read_csv(args.a), pd.read_csv(args.b)
    key = ["trial", "run_a", "run_b"]
    if len(a) != len(b) or not (a[key].to_numpy() == b[key].to_numpy()).all():
        raise SystemExit(f"{args.a}, {args.b}: not the same trials and pairs")
    sa, sb = per_trial_scores(a), per_trial_scores(b)
    for m in ("brier", "log"):
        d = sb[m] - sa[m]
        print(f"{m}: B − A per trial {d.mean():+.4f} ± {d.std(ddof=1) / np.sqrt(len(d)):.4f} "
              f"(B better in {(d < 0).sum()} of {len(d)} trials)")


if __name__ == "__main__":
    main()
