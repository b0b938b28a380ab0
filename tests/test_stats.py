"""bayeval.stats: Kendall's τ (τ-b and ties-agree), RMSE and the paired tests shared by design, bias and experiments."""

import numpy as np
import pytest
from scipy import stats

from bayeval.errors import BayevalInputError
from bayeval.stats import kendall_tau, paired_pvalues, pairwise_tau, rmse


def test_kendall_tau_b_matches_scipy_and_is_nan_when_undefined():
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 4, 15).astype(float), rng.random(15)  # ties in a: τ-b, not τ-a
    assert kendall_tau(a, b) == pytest.approx(stats.kendalltau(a, b).statistic, abs=1e-15)
    assert np.isnan(kendall_tau([1.0], [2.0])) and np.isnan(kendall_tau([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]))
    with pytest.raises(BayevalInputError, match="ties"):
        kendall_tau(a, b, ties="a")
    with pytest.raises(BayevalInputError, match="x, y"):
        kendall_tau(a, b[:3])


def test_kendall_tau_ties_agree_matches_scipy_without_ties_and_counts_ties_as_agreeing():
    rng = np.random.default_rng(0)
    a, b = rng.random(12), rng.random(12)
    assert kendall_tau(a, b, ties="agree") == pytest.approx(stats.kendalltau(a, b).statistic, abs=1e-12)
    # a tie in b is "ranked in the correct order": no inversion
    assert kendall_tau(np.array([3.0, 2.0, 1.0]), np.array([2.0, 2.0, 1.0]), ties="agree") == 1.0


def test_kendall_tau_ties_agree_reproduces_buettcher_p20_figure():
    # Büttcher et al. §5.2: 74 inversions among C(42, 2) = 861 pairs -> tau = 0.8281
    n, inv = 42, 74
    a = np.arange(n, 0, -1, dtype=float)
    b = a.copy()
    swaps = 0
    for i in range(n - 1):  # adjacent swaps of a bubble sort, one inversion each
        for j in range(n - 1 - i):
            if swaps == inv:
                break
            b[j], b[j + 1] = b[j + 1], b[j]
            swaps += 1
    assert kendall_tau(a, b, ties="agree") == pytest.approx(1 - 2 * 74 / 861)
    assert round(kendall_tau(a, b, ties="agree"), 4) == 0.8281


def test_pairwise_tau():
    # pairs: (+,+) concordant, (-,+) discordant, (+,+) concordant, (+,0) tie -> (2 - 1) / 4
    assert pairwise_tau([0.1, -0.2, 0.3, 0.1], [0.05, 0.1, 0.2, 0.0]) == (0.25, 2, 1, 4)
    assert np.isnan(pairwise_tau([], [])[0])


def test_rmse():
    assert rmse([0.5, 0.25], [0.25, 0.25]) == pytest.approx(np.sqrt(0.0625 / 2))
    assert rmse(np.array([0.3, 0.1]), np.array([0.0, 0.5])) == pytest.approx(np.sqrt((0.09 + 0.16) / 2))
    assert np.isnan(rmse([], []))
    with pytest.raises(BayevalInputError, match="same shape"):
        rmse(np.zeros(2), np.zeros(3))


def test_paired_pvalues_match_scipy_ttest_rel():
    rng = np.random.default_rng(0)
    a, b = rng.random((6, 15)), rng.random((6, 15))
    expect = [stats.ttest_rel(a[i], b[i]).pvalue for i in range(6)]
    assert np.allclose(paired_pvalues(a, b), expect)
    w = paired_pvalues(a, b, "wilcoxon")
    assert np.allclose(w, [stats.wilcoxon(a[i] - b[i]).pvalue for i in range(6)])
    # undefined and degenerate cases
    assert np.isnan(paired_pvalues(a[:1, :1], b[:1, :1])).all()
    same = paired_pvalues(a[:2], a[:2])
    assert np.isnan(same).all()
    x = np.array([[0.5, 0.25, 0.75]])
    assert paired_pvalues(x, x - 0.125).tolist() == [0.0]  # constant nonzero difference: t is infinite


def test_paired_pvalues_mask_tests_each_pair_on_its_topics():
    rng = np.random.default_rng(1)
    o = rng.random((3, 20))
    n = o + rng.normal(0.02, 0.05, size=o.shape)
    p = paired_pvalues(n, o)
    for s in range(3):
        assert p[s] == pytest.approx(stats.ttest_rel(n[s], o[s]).pvalue, rel=1e-12)
    mask = np.ones(o.shape, bool)
    mask[0, :10] = False
    assert paired_pvalues(n, o, mask=mask)[0] == pytest.approx(stats.ttest_rel(n[0, 10:], o[0, 10:]).pvalue)
    mask[1, 1:] = False
    assert np.isnan(paired_pvalues(n, o, mask=mask)[1])  # one topic left: undefined


def test_laguerre_nodes_integrate_polynomials_below_degree_2m_exactly_and_are_shared():
    """Gauss–Laguerre with m nodes: ∫₀^∞ e^{-y} y^k dy = k! for k < 2m (and not for k = 2m); the exact
    moments and the anchored estimate read the same cached table."""
    from math import factorial

    from bayeval.expected import _tilt
    from bayeval.sampling import _anchored_kernels
    from bayeval.stats.quadrature import laguerre_nodes

    m = 6
    y, logw = laguerre_nodes(m)
    w = np.exp(logw)
    for k in range(2 * m):
        assert np.sum(w * y**k) == pytest.approx(factorial(k), rel=1e-10)
    assert abs(np.sum(w * y ** (2 * m)) - factorial(2 * m)) > 1.0  # the rule's degree is exactly 2m - 1
    assert not y.flags.writeable and not logw.flags.writeable
    assert laguerre_nodes(m) is laguerre_nodes(m)
    assert _tilt.laguerre_nodes is laguerre_nodes and _anchored_kernels.laguerre_nodes is laguerre_nodes
