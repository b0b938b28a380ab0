"""Which part of an interval breaks coverage — the estimate's bias, its variance estimate or the shape — from a
trial table of the sampling study with many trials (docs/notes/sampling-record.md, "Revision of 27 November 2026
(late)").

Per run, over the trials of one (collection, budget, method): the bias of the MAP estimate against the truth,
its Monte Carlo sd (the spread over trials), the mean variance estimate against the Monte Carlo variance, the
correlation of the estimate with its standard error, the skewness of the estimate; then, pooled over the runs
of a group (automatic / manual where the collection says, all runs otherwise) and the trials, the coverage of

- (a) the method's own interval (normal on the scale ``m^γ``, ``γ`` the table's ``power`` column:
  :func:`bayeval.sampling.power_bounds`);
- (a') the same interval (same standard error, same ``γ``) around ``m̂ - bias``: the bias removed, nothing else;
- (b) ``m̂ ± z·sd_MC``: the true spread, a normal shape, the bias kept;
- (b') ``(m̂ - bias) ± z·sd_MC``: the true spread, a normal shape, no bias;
- (c) the Monte Carlo quantiles of the estimate shifted to it, ``[m̂ - (q_hi - m̄), m̂ - (q_lo - m̄)]``: the true
  spread and shape, the bias kept.

Bias and spread are the trials' own, so (a'), (b), (b') and (c) are diagnoses, not intervals one could compute
from a sample. The sample-alone methods need no model fit, so hundreds of trials are cheap::

    bayeval experiment sampling run sm11 --name synth-manual-11 --out sm11.parquet --trials 400 \\
        --budgets 0.05,0.1,0.2 --methods sample-bcp
    python studies/sample_alone_decomposition.py sm11.parquet sm12.parquet sm13.parquet --method sample-bcp
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd
from scipy import stats

from bayeval.errors import BayevalInputError
from bayeval.experiments.sampling import read_sampling_table
from bayeval.sampling import power_bounds

COLUMNS = ["collection", "budget", "runs", "run_trials", "trials", "bias", "mc_sd", "bias_over_sd", "var_ratio",
           "corr_m_se", "skew", "cov_a", "above_a", "below_a", "cov_a_nobias", "cov_b", "cov_b_nobias", "cov_c",
           "width"]


def run_diagnosis(g: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Per run of one (collection, budget, method): the Monte Carlo figures and each trial's hits.

    ``g``: the table's run rows of one cell (columns ``trial, run_a, estimate, se, truth, power``). Returns one row
    per run with the per-run figures and the hit rates of intervals (a)-(c) over its trials.
    """
    z = stats.norm.ppf(0.5 + level / 2)
    lo_q, hi_q = (1 - level) / 2, 1 - (1 - level) / 2
    rows = []
    for run, r in g.groupby("run_a", sort=True):
        m, se, gam = r.estimate.to_numpy(), r.se.to_numpy(), r.power.to_numpy()
        truth = float(r.truth.iloc[0])
        if len(m) < 3:
            raise BayevalInputError(f"run {run!r}: {len(m)} trials; the Monte Carlo figures need at least 3")
        mean, sd = m.mean(), m.std(ddof=1)
        bias = mean - truth
        lo, hi = power_bounds(m, se, gam, level)
        lo2, hi2 = power_bounds(np.clip(m - bias, 0.0, 1.0), se, gam, level)
        q_lo, q_hi = np.quantile(m, lo_q), np.quantile(m, hi_q)
        rows.append(dict(
            run=run, bias=bias, mc_sd=sd, bias_over_sd=bias / sd if sd > 0 else np.nan,
            var_ratio=np.mean(se ** 2) / sd ** 2 if sd > 0 else np.nan,
            corr_m_se=np.corrcoef(m, se)[0, 1] if np.ptp(se) > 0 and sd > 0 else np.nan,
            skew=stats.skew(m) if sd > 0 else np.nan,
            cov_a=np.mean((lo <= truth) & (truth <= hi)), above_a=np.mean(truth > hi),
            below_a=np.mean(truth < lo), cov_a_nobias=np.mean((lo2 <= truth) & (truth <= hi2)),
            cov_b=np.mean(np.abs(m - truth) <= z * sd), cov_b_nobias=np.mean(np.abs(m - bias - truth) <= z * sd),
            cov_c=np.mean((m - (q_hi - mean) <= truth) & (truth <= m - (q_lo - mean))),
            width=np.mean(hi - lo), trials=len(m)))
    return pd.DataFrame(rows)


def decomposition(frame: pd.DataFrame, method: str, level: float = 0.95) -> pd.DataFrame:
    """The table of the module's docstring for every (collection, budget, run group) of ``method``'s run rows.

    Each collection is its own cell (``main``'s ``--pool`` renames several into one before the call). Per-run
    figures are averaged over the group's runs; coverages and width are pooled over its run-trials."""
    runs = frame[(frame.kind == "run") & (frame.method == method)]
    if runs.empty:
        raise BayevalInputError(f"method: no run rows of {method!r} in the table(s) "
                                f"(methods there: {', '.join(sorted(frame.method.unique()))})")
    out = []
    for (col, budget), cell in runs.groupby(["collection", "budget"], sort=True):
        per = run_diagnosis(cell, level)
        per["manual"] = per.run.map(cell.groupby("run_a").manual.first())
        groups = [("all", per.index == per.index)] if not per.manual.any() else \
            [("automatic", ~per.manual.astype(bool)), ("manual", per.manual.astype(bool))]
        for gname, sel in groups:
            p = per[sel]
            w = p.trials / p.trials.sum()          # pooled coverage: weighted by each run's trials
            row = dict(collection=col, budget=budget, runs=gname, run_trials=int(p.trials.sum()),
                       trials=int(cell.trial.nunique()))
            for k in ("bias", "mc_sd", "bias_over_sd", "var_ratio", "corr_m_se", "skew"):
                row[k] = float(p[k].mean())
            for k in ("cov_a", "above_a", "below_a", "cov_a_nobias", "cov_b", "cov_b_nobias", "cov_c", "width"):
                row[k] = float(np.sum(w * p[k]))
            out.append(row)
    return pd.DataFrame(out, columns=COLUMNS)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tables", nargs="+", help="trial tables of `bayeval experiment sampling run` (.parquet/.csv)")
    ap.add_argument("--method", default="sample-bcp", help="the study method to diagnose (default sample-bcp)")
    ap.add_argument("--pool", default=None,
                    help="one collection name under which every table's rows are pooled (e.g. synth-manual for "
                         "the seeds 11-13 of synth-manual-11/12/13)")
    args = ap.parse_args(argv)
    try:
        frame = pd.concat([read_sampling_table(t) for t in args.tables], ignore_index=True)
        if args.pool is not None:
            # the same run name in two collections is two runs: keep them apart when pooling
            frame["run_a"] = frame.collection + "/" + frame.run_a
            frame["collection"] = args.pool
        table = decomposition(frame, args.method)
    except (BayevalInputError, OSError) as exc:
        print(f"sample_alone_decomposition.py: {exc}", file=sys.stderr)
        return 2
    pd.set_option("display.width", 250)
    print(table.round(4).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
