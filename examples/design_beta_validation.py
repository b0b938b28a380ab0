"""Carterette et al. (SIGIR 2010) §4.1: the agreement test rejects a collection that is not reusable.

Per-topic scores are drawn from beta distributions. Ten runs: nine with means evenly spaced in
[0.20, 0.30] and one run with mean 0.40 on the baseline topics but 0.25 on the reuse topics (it is
"worse when held out"). Every score is Beta(mu * phi, (1 - mu) * phi) with phi = 4 (sd about 0.2,
like AP), independently per run and topic. With n = 100 baseline topics and a growing number n' of
reuse topics, the §3.2.1 procedure (paired t-tests over all 45 pairs, power-based expected table,
chi^2 / Monte Carlo goodness of fit) is repeated on fresh draws; the script prints, per n', the
median p-value and how often it is below 0.01 and 0.05, for this scenario and for the null scenario
where the tenth run keeps its mean 0.40 on the reuse topics (the collection is reusable).

    python examples/design_beta_validation.py                   # 200 replications per n' (24 s measured, 2 cores)
    python examples/design_beta_validation.py --reps 50 --plot beta_curve.png
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from bayeval.design import agreement_test

REUSE_SIZES = (5, 10, 20, 30, 40, 50, 75, 100, 150)


def draw(rng: np.random.Generator, mu: np.ndarray, n: int, phi: float) -> np.ndarray:
    """(runs, n) scores, Beta(mu * phi, (1 - mu) * phi) per run."""
    mu = np.asarray(mu, dtype=float)[:, None]
    return rng.beta(mu * phi, (1.0 - mu) * phi, size=(mu.shape[0], n))


def experiment(reps: int, n_base: int = 100, sizes=REUSE_SIZES, phi: float = 4.0, top: float = 0.40,
               drop_to: float | None = 0.25, draws: int = 2000, seed: int = 2010) -> pd.DataFrame:
    """Median p-value and rejection rates per reuse-set size; ``drop_to=None`` is the null scenario."""
    mu = np.r_[top, np.linspace(0.20, 0.30, 9)]
    mu_reuse = mu.copy()
    if drop_to is not None:
        mu_reuse[0] = drop_to
    rows = []
    for n_reuse, child in zip(sizes, np.random.SeedSequence(seed).spawn(len(sizes)), strict=True):
        rng = np.random.default_rng(child)
        ps = np.array([agreement_test(draw(rng, mu, n_base, phi), draw(rng, mu_reuse, n_reuse, phi), draws=draws,
                                      seed=rng).p_value for _ in range(reps)])
        rows.append({"reuse_topics": n_reuse, "median_p": np.median(ps), "p<0.01": np.mean(ps < 0.01),
                     "p<0.05": np.mean(ps < 0.05)})
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=200, help="replications per reuse-set size (default 200)")
    ap.add_argument("--seed", type=int, default=2010)
    ap.add_argument("--plot", help="save the p-value curve here")
    args = ap.parse_args()
    bad = experiment(args.reps, seed=args.seed)
    null = experiment(args.reps, drop_to=None, seed=args.seed + 1)
    table = bad.merge(null, on="reuse_topics", suffixes=("", " (null)"))
    print(f"n = 100 baseline topics, 10 runs (45 pairs), {args.reps} replications per row")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5.5, 4))
        ax.plot(bad["reuse_topics"], bad["median_p"], "o-", label="one run worse on reuse topics")
        ax.plot(null["reuse_topics"], null["median_p"], "s--", label="reusable (null)")
        ax.axhline(0.01, color="0.5", lw=0.8, ls=":")
        ax.set_yscale("log")
        ax.set_xlabel("reuse topics n'")
        ax.set_ylabel("median chi^2 p-value")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=130)


if __name__ == "__main__":
    main()
