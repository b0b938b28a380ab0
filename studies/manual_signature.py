r"""The manual-run signature of a robustness trial table: bias of E[MAP] and spread of ΔMAP's errors by run type.

docs/notes/calibration-record.md (revisions 4–6) measured on TREC-8 under reuse that a held-out manual run's E[MAP] is
biased low and an automatic run's high, and that the standardised error of ΔMAP,

.. math:: z = \frac{\Delta MAP - E[\Delta MAP]}{\sqrt{\operatorname{Var}[\Delta MAP]}},

spreads far more on pairs with a manual run than on pairs of automatic runs. This prints, for every
(method, confidence) of a table written by ``studies/calibration_study.py`` (or ``bayeval experiment robustness
run``), per run type: E[MAP] ÷ MAP (sums over run-trials, as ``calibration_tables.py``), and per pair type
(automatic: both runs automatic; manual: at least one manual run, as ``calibration_tables.py`` splits them):
the share of calls at ≥ 0.99 that are right, the standard deviation of z and the Brier score of P(ΔMAP < 0).
Used to check that a synthetic choosing collection carries the signature (docs/notes/calibration-record.md, "A choosing
collection with manual-like runs").

Usage::

    python studies/manual_signature.py TABLE.parquet --runs-info COLLECTION/runs.tsv
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd

from bayeval.errors import BayevalInputError
from bayeval.io.tables import manual_runs
from bayeval.io.trials import read_table


def signature(frame: pd.DataFrame, manual) -> pd.DataFrame:
    """One row per (method, confidence, type): E[MAP] ÷ MAP, right at ≥ 0.99, sd of z, Brier.

    Parameters
    ----------
    frame : DataFrame
        A robustness trial table (columns ``method``, ``confidence``, ``trial``, ``run_a``, ``run_b``,
        ``e_map_a``/``_b``, ``true_map_a``/``_b``, ``p_less``, ``e_delta``, ``var_delta``, ``true_delta``).
    manual : collection of str
        The manual runs.

    Returns
    -------
    DataFrame
        Columns ``method``, ``confidence``, ``type``, ``run_trials``, ``emap_over_map``, ``pairs``,
        ``calls_99``, ``right_99``, ``z_sd``, ``brier``.
    """
    need = {"method", "confidence", "trial", "run_a", "run_b", "e_map_a", "e_map_b", "true_map_a", "true_map_b",
            "p_less", "e_delta", "var_delta", "true_delta"}
    missing = need - set(frame.columns)
    if missing:
        raise BayevalInputError(f"table: not a robustness trial table (missing {', '.join(sorted(missing))})")
    man = set(manual)
    rows = []
    for (m, c), f in frame.groupby(["method", "confidence"], sort=True):
        sides = pd.concat([f[["trial", f"run_{x}", f"e_map_{x}", f"true_map_{x}"]]
                           .set_axis(["trial", "run", "e", "t"], axis=1) for x in "ab"])
        sides = sides.drop_duplicates(["trial", "run"])
        with_manual = f.run_a.isin(man) | f.run_b.isin(man)
        conf = np.maximum(f.p_less, 1.0 - f.p_less)
        right = (f.p_less >= 0.5) == (f.true_delta < 0)
        z = (f.true_delta - f.e_delta) / np.sqrt(f.var_delta)
        for kind, runs, pairs in (("automatic", ~sides.run.isin(man), ~with_manual),
                                  ("manual", sides.run.isin(man), with_manual)):
            called = pairs & (conf >= 0.99)
            rows.append({"method": m, "confidence": c, "type": kind, "run_trials": int(runs.sum()),
                         "emap_over_map": sides.e[runs].sum() / sides.t[runs].sum() if runs.any() else np.nan,
                         "pairs": int(pairs.sum()), "calls_99": int(called.sum()),
                         "right_99": right[called].mean() if called.any() else np.nan,
                         "z_sd": z[pairs].std() if pairs.sum() > 1 else np.nan,
                         "brier": ((f.p_less[pairs] - (f.true_delta[pairs] < 0)) ** 2).mean() if pairs.any()
                         else np.nan})
    return pd.DataFrame(rows)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("table", help="robustness trial table (.parquet or .csv)")
    ap.add_argument("--runs-info", required=True, help="runs.tsv with a 'type' column (manual runs)")
    a = ap.parse_args(argv)
    try:
        frame = read_table(a.table)
        out = signature(frame, manual_runs(a.runs_info))
    except (BayevalInputError, OSError) as exc:
        sys.exit(f"manual_signature.py: {exc}")
    print(f"trials: {frame.trial.nunique()}")
    print(out.round(4).to_string(index=False))


if __name__ == "__main__":
    main()
