"""studies/sample_alone_decomposition.py: the coverage decomposition (bias, variance, shape) of a trial table,
against a table drawn from known normal estimates."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bayeval.experiments.sampling import SAMPLING_COLUMNS

ROOT = Path(__file__).resolve().parents[1]


def _module():
    spec = importlib.util.spec_from_file_location("sample_alone_decomposition",
                                                  ROOT / "studies" / "sample_alone_decomposition.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _table(trials=3000, seed=5):
    """Four runs with normal estimates: automatic a1, a2 unbiased with se = the true sd; a3 unbiased with se = twice
    the true sd; manual m1 biased by -1 sd with se = the true sd."""
    rng = np.random.default_rng(seed)
    spec = [("a1", False, 0.20, 0.0, 0.02, 1.0), ("a2", False, 0.30, 0.0, 0.03, 1.0),
            ("m1", True, 0.40, -0.04, 0.04, 1.0), ("a3", False, 0.25, 0.0, 0.02, 2.0)]
    rows = []
    for name, manual, truth, bias, sd, se_factor in spec:
        m = truth + bias + sd * rng.standard_normal(trials)
        for t in range(trials):
            row = dict.fromkeys(SAMPLING_COLUMNS)
            row.update(collection="toy", trial=t, seed=1, budget=0.05, depth=100, method="sample-bcp", kind="run",
                       run_a=name, run_b="", manual=manual, estimate=m[t], se=se_factor * sd, p_less=np.nan,
                       truth=truth, power=1.0, settings=None)
            rows.append(row)
    return pd.DataFrame(rows, columns=list(SAMPLING_COLUMNS))


def test_decomposition_separates_bias_from_variance():
    mod = _module()
    out = mod.decomposition(_table(), "sample-bcp").set_index("runs")
    z = stats.norm.ppf(0.975)
    man = out.loc["manual"]
    # bias of -1 sd: the interval covers P(|N(-1, 1)| <= z), the truth above it P(N(0,1) > z - 1)
    assert man.bias_over_sd == pytest.approx(-1.0, abs=0.05)
    assert man.cov_a == pytest.approx(stats.norm.cdf(z - 1) - stats.norm.cdf(-z - 1), abs=0.02)
    assert man.above_a == pytest.approx(1 - stats.norm.cdf(z - 1), abs=0.02)
    assert man.cov_b == pytest.approx(man.cov_a, abs=0.02)          # the true sd does not help a bias
    assert man.cov_c == pytest.approx(man.cov_a, abs=0.02)          # nor the true shape
    assert man.cov_a_nobias == pytest.approx(0.95, abs=0.015)       # removing the bias does
    assert man.cov_b_nobias == pytest.approx(0.95, abs=0.015)
    assert man.var_ratio == pytest.approx(1.0, abs=0.08)
    aut = out.loc["automatic"]
    # a3 reports twice the sd: variance ratio (1 + 1 + 4)/3, its interval covers P(|N| <= 2z)
    assert aut.var_ratio == pytest.approx(2.0, abs=0.12)
    assert aut.cov_a == pytest.approx((0.95 + 0.95 + (2 * stats.norm.cdf(2 * z) - 1)) / 3, abs=0.012)
    assert aut.cov_b == pytest.approx(0.95, abs=0.012)              # with the true sd it is right
    assert abs(aut.bias) < 0.002


def test_decomposition_refuses_a_method_not_in_the_table():
    mod = _module()
    with pytest.raises(Exception, match="no run rows of 'sample'"):
        mod.decomposition(_table(trials=5), "sample")
    assert mod.main([str(ROOT / "no-such-table.parquet")]) == 2
