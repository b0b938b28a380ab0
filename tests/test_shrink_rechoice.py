"""The rule that re-chooses the model-assisted estimator's (tuning, shrink): studies/shrink_rechoice.py."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "studies"))
from shrink_rechoice import band_distance, decide, score  # noqa: E402

from bayeval.errors import BayevalInputError  # noqa: E402

CELLS = [("c", "all", 0.05), ("c", "all", 0.1)]


def _scores(spec):
    """``spec``: method -> (coverages, x_stat, rmse factor, brier, overconfident) over the two cells."""
    rows = []
    for method, (cov, x, rmse, brier, over) in spec.items():
        for (col, group, budget), c in zip(CELLS, cov, strict=True):
            rows.append((col, group, budget, method, 10, c, 0.01, 0.01, x, x, 0.01 * rmse, 0.0, brier, 0.0002,
                         50, 1.0, over))
    return pd.DataFrame(rows, columns=["collection", "group", "budget", "method", "trials", "coverage",
                                       "coverage_se", "dcoverage_se", "width", "x_stat", "rmse", "bias", "brier",
                                       "dbrier_se", "calls99", "right99", "overconfident"])


def test_band_distance():
    np.testing.assert_allclose(band_distance([0.90, 0.93, 0.95, 0.97, 0.99]), [0.03, 0, 0, 0, 0.02], atol=1e-12)


def test_rule_excludes_what_leaves_the_band_and_keeps_what_moves_into_it():
    spec = {"D": ((0.95, 0.99), 0.90, 1.0, 0.02, 1),
            "A": ((0.90, 0.99), 0.60, 1.0, 0.02, 1),     # narrowest, but one cell leaves the band by 3 points
            "C": ((0.95, 0.97), 0.65, 1.10, 0.02, 1),    # RMSE 10% higher
            "G": ((0.95, 0.97), 0.66, 1.0, 0.0215, 1),   # Brier 0.0015 higher (noise 0.0005)
            "H": ((0.95, 0.97), 0.67, 1.0, 0.02, 2),     # one more over-confident bin
            "F": ((0.95, 0.955), 0.80, 1.0, 0.02, 1)}    # 99 -> 95.5%: a 3.5-point fall into the band
    table, chosen = decide(_scores(spec), "D", ["A", "C", "G", "H", "F"])
    assert chosen == "F"
    ok = dict(zip(table.method, table.eligible, strict=True))
    assert ok == {"D": True, "A": False, "C": False, "G": False, "H": False, "F": True}
    assert "coverage c all 0.05" in table.set_index("method").failed["A"]


def test_rule_keeps_the_default_without_a_clear_gain_and_breaks_ties_in_order():
    near = {"D": ((0.95, 0.95), 0.80, 1.0, 0.02, 0), "N": ((0.95, 0.95), 0.797, 1.0, 0.02, 0)}
    assert decide(_scores(near), "D", ["N"])[1] == "D"      # 0.003 narrower: under the 0.005 margin
    tie = {"D": ((0.95, 0.95), 0.80, 1.0, 0.02, 0), "P": ((0.95, 0.95), 0.7005, 1.0, 0.02, 0),
           "Q": ((0.95, 0.95), 0.70, 1.0, 0.02, 0)}
    assert decide(_scores(tie), "D", ["P", "Q"])[1] == "P"  # within 0.001: the earlier candidate
    assert decide(_scores(tie), "D", ["Q", "P"])[1] == "Q"
    below = {"D": ((0.90, 0.95), 0.80, 1.0, 0.02, 0), "B": ((0.895, 0.95), 0.70, 1.0, 0.02, 0)}
    assert decide(_scores(below), "D", ["B"])[1] == "B"     # 0.5 point farther below: within its se (1 point)


def _frame():
    """One collection, 3 trials × 4 runs; methods D (default), R (reference), X; pairs of runs 0-1."""
    rows = []
    cover = {"D": [4, 3, 2], "R": [4, 4, 4], "X": [3, 3, 0]}    # runs covered per trial
    for method, hits in cover.items():
        for trial, h in enumerate(hits):
            for run in range(4):
                est = 0.3 if run < h else 0.5                    # se 0.01: 0.5 misses the truth 0.3
                rows.append(("c", trial, 1, 0.1, 100, method, "run", f"r{run}", "", False, est,
                             0.02 if method == "R" else 0.01, np.nan, 0.3, 10, 100, 0.5, 1.0, 0.0, 1.0, None))
            p = {"D": 0.9, "R": 0.5, "X": 0.8}[method] if trial else 0.2
            rows.append(("c", trial, 1, 0.1, 100, method, "pair", "r0", "r1", False, -0.01, 0.01, p, -0.01, 10,
                         100, 0.5, 1.0, 0.0, 1.0, None))
    from bayeval.experiments.sampling import SAMPLING_COLUMNS
    return pd.DataFrame(rows, columns=list(SAMPLING_COLUMNS))


def test_scores_pair_the_trials():
    s = score(_frame(), "D", "R").set_index("method")
    assert s.coverage["D"] == pytest.approx(9 / 12) and s.coverage["X"] == pytest.approx(6 / 12)
    diff = np.array([3 - 4, 3 - 3, 0 - 2]) / 4
    assert s.dcoverage_se["X"] == pytest.approx(diff.std(ddof=1) / np.sqrt(3))
    assert s.x_stat["X"] == pytest.approx(0.5) and s.x_stat["R"] == pytest.approx(1.0)
    bd = np.array([0.8**2 - 0.8**2, 0.2**2 - 0.1**2, 0.2**2 - 0.1**2])   # X's Brier minus D's, per trial
    assert s.dbrier_se["X"] == pytest.approx(bd.std(ddof=1) / np.sqrt(3))
    with pytest.raises(BayevalInputError, match="default"):
        score(_frame(), "Z", "R")
