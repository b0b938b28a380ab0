"""The empirical-Bayes combination (``bayeval.sampling.combine_differences`` / ``combine_means``) and its
variants, computed from trial tables of the sampling study that hold the model's and the model-assisted rows of
the same samples (docs/notes/sampling-record.md, "Revision of 27 November 2026").

The study's ``combined`` method computes the chosen form inside each trial, from the assisted estimate's exact
covariance; this script computes it, and the variants that were not chosen, from the tables alone, so that
many forms can be compared without refitting the model. The covariance of the runs' assisted MAP comes from the
table's pairs: ``C_ab = (s_a² + s_b² - se_ab²)/2`` for every pair in the table, the mean of those for the pairs
that are not (exact when the table has every pair, as on Robust 2003 and the 20-run synthetic collection;
TREC-8 and ``synt8`` have 200 of 8,256 and 4,950). The pairs' figures use nothing else::

    python studies/sampling_combined.py ASSISTED.parquet MODEL.parquet --assisted K5-raw-jackknife --out OUT.parquet
    bayeval experiment sampling stats OUT.parquet              # --reliability: the bins

Variants (``--variants``, ``;``-separated; default all): ``combined`` (the chosen form: ρ = 0.5, the slope,
the spread proportional to the model's variance), ``no-slope``, ``constant`` (one spread), ``rho0``,
``rho0.3``, ``rho0.7`` (the share), ``fay-herriot`` (constant spread, no slope, Fay & Herriot's equation),
``t10`` (P(Δ < 0) from a t distribution with 10 degrees of freedom), ``manual`` (the spread estimated apart for
pairs with a manual run), ``median`` (constant spread from the median of ``r²/(s² + σ²)``, no slope),
``runs-slope`` (runs' means regressed on the model with an intercept, pairs as ``combined``), ``groups`` (runs'
MAP with a shift per run group, the table's ``manual`` column — the collection's runs.tsv type — as the groups,
:func:`bayeval.sampling.combine_means` ``groups=``; pairs as ``combined``; one group where no run is manual).
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from scipy import optimize, stats

from bayeval.experiments.sampling import SAMPLING_COLUMNS, read_sampling_table
from bayeval.sampling import combine_differences, combine_means
from bayeval.sampling.combined import CombinedEstimate, weigh

VARIANTS = ("combined", "no-slope", "constant", "rho0", "rho0.3", "rho0.7", "fay-herriot", "t10", "manual",
            "median", "runs-slope", "groups")
SETTINGS = {"combined": {}, "no-slope": {"slope": False}, "constant": {"spread": "constant"},
            "rho0": {"share": 0.0}, "rho0.3": {"share": 0.3}, "rho0.7": {"share": 0.7},
            "fay-herriot": {"spread": "constant", "slope": False, "estimator": "fay-herriot"}, "t10": {},
            "manual": {}, "median": {}, "runs-slope": {}, "groups": {}}


def covariance_from_pairs(runs: pd.DataFrame, pairs: pd.DataFrame) -> np.ndarray:
    """The covariance of the runs' estimates from their standard errors and the pairs' (see the module)."""
    names = list(runs.run_a)
    at = {n: i for i, n in enumerate(names)}
    s2 = runs.se.to_numpy() ** 2
    c = np.full((len(names), len(names)), np.nan)
    np.fill_diagonal(c, s2)
    for a, b, se in zip(pairs.run_a, pairs.run_b, pairs.se, strict=True):
        i, j = at[a], at[b]
        c[i, j] = c[j, i] = (s2[i] + s2[j] - se ** 2) / 2
    off = ~np.eye(len(names), dtype=bool)
    c[np.isnan(c)] = np.nanmean(c[off])
    return c


def _median_spread(resid: np.ndarray, s2: np.ndarray) -> float:
    """σ² with ``median(r²/(s² + σ²))`` equal to the median of χ²₁ (0 when already below it)."""
    q = stats.chi2.ppf(0.5, 1)
    keep = (s2 > 0) | (resid != 0)                     # a difference of two identical runs says nothing
    resid, s2 = resid[keep], s2[keep]

    def excess(v):
        return float(np.median(resid ** 2 / (s2 + v))) - q

    if excess(0.0) <= 0:
        return 0.0
    hi = max(float(np.mean(resid ** 2)), 1e-12)
    while excess(hi) > 0:
        hi *= 2
    return float(optimize.brentq(excess, 0.0, hi))


def _runs_slope(y, c, m, t, share=0.5) -> tuple[np.ndarray, np.ndarray]:
    """Runs' means regressed on the decorrelated model estimate with an intercept (Fay & Herriot's regression
    synthetic), the spread ∝ the model's variance by moments through the residual projection, the synthetic
    estimate's error variance and covariance with the sample's from the hat matrix."""
    n = y.size
    x = np.column_stack([np.ones(n), (m - share * y) / (1 - share)])
    coef = np.linalg.lstsq(x, y, rcond=None)[0]
    hat = x @ np.linalg.inv(x.T @ x) @ x.T
    resid_proj = np.eye(n) - hat
    r = y - x @ coef
    floor = (coef[1] * t / (1 - share)) ** 2
    k2 = max((r @ r - np.trace(resid_proj @ c @ resid_proj))
             / np.trace(resid_proj @ np.diag(floor) @ resid_proj), 0.0)
    sig2 = np.maximum(k2 * floor, floor)
    f2 = np.diag(hat @ c @ hat.T) + np.diag(resid_proj @ np.diag(sig2) @ resid_proj.T)
    mean, var, _ = weigh(y, np.diag(c), x @ coef, f2, np.diag(hat @ c))
    return mean, np.sqrt(var)


def combine_trial(group: pd.DataFrame, variant: str) -> pd.DataFrame:
    """One trial × budget's rows (model and assisted merged: ``estimate``/``se`` assisted, ``estimate_m``/
    ``se_m`` the model's) combined by ``variant``."""
    pairs, runs = group[group.kind == "pair"], group[group.kind == "run"]
    kw = SETTINGS[variant]
    y, s, m, t = (pairs[c].to_numpy() for c in ("estimate", "se", "estimate_m", "se_m"))
    if variant == "median":
        x = (m - 0.5 * y) / 0.5
        both = combine_differences(y, s, m, t, slope=False, spread=_median_spread(y - x, s * s))
    else:
        both = combine_differences(y, s, m, t, groups=pairs.manual.to_numpy() if variant == "manual" else None,
                                   **kw)
    p_less = both.p_less()
    if variant == "t10":
        sd = np.where(both.se > 0, both.se, 1.0)
        p_less = np.where(both.se > 0, stats.t.cdf(-both.mean / sd, df=10), p_less)
    c = covariance_from_pairs(runs, pairs)
    yr, mr, tr = runs.estimate.to_numpy(), runs.estimate_m.to_numpy(), runs.se_m.to_numpy()
    if variant == "runs-slope":
        rmean, rse = _runs_slope(yr, c, mr, tr)
        w = np.full(yr.size, np.nan)
    elif variant == "median":
        x = (mr - 0.5 * yr) / 0.5
        r = yr - x
        rc: CombinedEstimate = combine_means(yr, c, mr, tr, spread=_median_spread(r - np.median(r), np.diag(c)))
        rmean, rse, w = rc.mean, rc.se, rc.weight
    else:
        means_kw = {k: v for k, v in kw.items() if k in ("share", "spread")}
        if variant == "groups":
            means_kw["groups"] = runs.manual.to_numpy()
        rc = combine_means(yr, c, mr, tr, **means_kw)
        rmean, rse, w = rc.mean, rc.se, rc.weight
    out_p = pairs.assign(estimate=both.mean, se=both.se, p_less=p_less, weight=both.weight)
    out_r = runs.assign(estimate=rmean, se=rse, weight=w)
    # the variants are not the study's method: their settings are not recorded (the study does not resume them)
    return pd.concat([out_r, out_p]).assign(method=variant, settings=None)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("assisted", help="trial table holding the model-assisted rows")
    ap.add_argument("model", help="trial table holding the model rows of the same samples")
    ap.add_argument("--assisted-method", default="assisted", help="method name of the assisted rows")
    ap.add_argument("--out", required=True)
    ap.add_argument("--variants", default=";".join(VARIANTS))
    ap.add_argument("--keep", action="store_true", help="also write the model and assisted rows")
    args = ap.parse_args(argv)
    variants = [v for v in args.variants.split(";") if v]
    unknown = set(variants) - set(VARIANTS)
    if unknown:
        ap.error(f"--variants: unknown {sorted(unknown)}; choose from {';'.join(VARIANTS)}")
    a = read_sampling_table(args.assisted)
    a = a[a.method == args.assisted_method]
    mo = read_sampling_table(args.model)
    mo = mo[mo.method == "model"]
    key = ["collection", "trial", "seed", "budget", "kind", "run_a", "run_b"]
    both = a.merge(mo[[*key, "estimate", "se", "judgments"]], on=key, suffixes=("", "_m"))
    if not len(both) or not (both.judgments == both.judgments_m).all():
        ap.error("the two tables do not hold the same samples (trial, budget, judgments)")
    frames = [combine_trial(g, v) for v in variants for _, g in both.groupby(["collection", "budget", "trial"])]
    if args.keep:
        frames += [a.assign(method="assisted"), mo[mo.set_index(key).index.isin(both.set_index(key).index)]]
    out = pd.concat(frames, ignore_index=True)[list(SAMPLING_COLUMNS)]
    out.to_parquet(args.out, index=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
