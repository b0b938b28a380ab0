r"""Paired tests between two systems (or methods) over the same topics (or trials), many pairs at once.

- :func:`paired_pvalues` — the tests IR papers report on per-topic scores: the paired t-test, Wilcoxon's
  signed-rank test, Fisher's randomization (sign-flip) test and the studentized bootstrap test;
- :func:`uncertain_paired_t` — the paired t-test when each topic's difference is itself uncertain (unjudged
  documents): one probability that counts both the sampling of topics and the uncertainty of relevance
  (docs/expected.md, "Across topics").

References: Student (1908), *The probable error of a mean*, Biometrika 6; F. Wilcoxon (1945), *Individual
comparisons by ranking methods*, Biometrics Bulletin 1(6); R. A. Fisher (1935), *The design of experiments*;
B. Efron, R. Tibshirani (1993), *An introduction to the bootstrap*, §16.4; M. D. Smucker, J. Allan,
B. Carterette (2007), *A comparison of statistical significance tests for information retrieval evaluation*, CIKM;
F. E. Satterthwaite (1946), *An approximate distribution of estimates of variance components*, Biometrics 2(6).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats

from bayeval.errors import BayevalInputError

__all__ = ["PAIRED_TESTS", "RESAMPLES", "UncertainT", "paired_pvalues", "uncertain_paired_t"]

PAIRED_TESTS = ("t", "wilcoxon", "randomization", "bootstrap")
"""The paired tests :func:`paired_pvalues` runs."""

RESAMPLES = 10_000
"""Default sign flips (randomization) and resamples (bootstrap): a p-value near 0.05 to about ±0.004."""

_CHUNK = 256  # pairs per block of the resampling tests: (chunk x resamples) floats at a time


def paired_pvalues(a, b, test: str = "t", mask=None, *, resamples: int = RESAMPLES, rng=None) -> np.ndarray:
    r"""Two-sided p-values of paired tests between the rows of ``a`` and ``b``.

    Parameters
    ----------
    a, b : ndarray, shape (P, n)
        Per-topic scores of the first and second system of each of P pairs over the same n topics.
    test : {"t", "wilcoxon", "randomization", "bootstrap"}
        ``"t"`` (default): the paired t-test :math:`t = \bar d\sqrt n/s_d` on :math:`n-1` degrees of freedom,
        :math:`d = a - b` (``scipy.stats.ttest_rel``). ``"wilcoxon"``: the Wilcoxon signed-rank test
        (``scipy.stats.wilcoxon``, zero differences dropped). ``"randomization"``: Fisher's randomization test of
        the mean difference: the signs of the :math:`d_t` flipped at random (all :math:`2^n` flips when there are
        at most ``resamples``), two-sided :math:`p = 2\min(P(\bar d^* \le \bar d), P(\bar d^* \ge \bar d))`,
        a random test counting the observed flip once, :math:`(k + 1)/(B + 1)`, as
        ``scipy.stats.permutation_test(permutation_type="samples")``. ``"bootstrap"``: the studentized bootstrap
        test: :math:`t^*` of resamples of the centred differences :math:`d - \bar d` (the null made true),
        :math:`p = (1 + \#\{|t^*| \ge |t|\}) / (B + 1)`. The two resampling tests use the same flips or
        resamples for every pair.
    mask : ndarray of bool, shape (P, n), optional
        The topics each pair is tested on (default all).
    resamples : int
        Sign flips or bootstrap resamples B (``"randomization"``, ``"bootstrap"``; default :data:`RESAMPLES`).
    rng : numpy.random.Generator or int, optional
        Their random source (default seed 0: the same p-values on every call).

    Returns
    -------
    ndarray, shape (P,)
        NaN where the test is undefined (fewer than two topics; every difference zero). A constant
        nonzero difference gives p = 0 for the t-test (whose answer would otherwise depend on rounding).

    Examples
    --------
    >>> a = np.array([[0.3, 0.5, 0.4, 0.6]]); b = a - np.array([[0.1, 0.2, 0.05, 0.15]])
    >>> round(float(paired_pvalues(a, b)[0]), 4)
    0.0305
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 2:
        raise BayevalInputError(f"a, b: expected two arrays of the same shape (pairs, topics), got {a.shape}, "
                                f"{b.shape}")
    if test not in PAIRED_TESTS:
        raise BayevalInputError(f"test: must be one of {', '.join(PAIRED_TESTS)}, got {test!r}")
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != a.shape:
            raise BayevalInputError(f"mask: expected shape {a.shape}, got {mask.shape}")
        return np.array([paired_pvalues(a[i, m][None], b[i, m][None], test, resamples=resamples, rng=rng)[0]
                         for i, m in enumerate(mask)])
    if isinstance(resamples, bool) or not isinstance(resamples, int | np.integer) or resamples < 1:
        raise BayevalInputError(f"resamples: must be a positive integer, got {resamples!r}")
    P, n = a.shape
    if P == 0:
        return np.empty(0)
    if n < 2:
        return np.full(P, np.nan)
    d = a - b
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        if test == "t":
            p = np.asarray(stats.ttest_rel(a, b, axis=1).pvalue, dtype=np.float64)
            const = np.all(d == d[:, :1], axis=1)  # zero variance: ttest_rel's answer depends on rounding
            p[const] = np.where(d[const, 0] == 0.0, np.nan, 0.0)
        elif test == "randomization":
            p = _randomization(d, int(resamples), np.random.default_rng(0 if rng is None else rng))
        elif test == "bootstrap":
            p = _bootstrap(d, int(resamples), np.random.default_rng(0 if rng is None else rng))
        else:
            p = np.full(P, np.nan)
            nz = np.any(d != 0, axis=1)
            for i in np.flatnonzero(nz):
                p[i] = stats.wilcoxon(d[i], zero_method="wilcox").pvalue
    return np.atleast_1d(p)


def _blocks(P: int):
    for lo in range(0, P, _CHUNK):
        yield slice(lo, min(lo + _CHUNK, P))


def _randomization(d: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Two-sided sign-flip randomization p-values of the mean of each row of ``d`` (NaN where every d is 0)."""
    P, n = d.shape
    exact = n < 63 and 2**n <= resamples
    if exact:  # every flip once (the observed signs among them): no +1
        signs = 1.0 - 2.0 * ((np.arange(2**n)[:, None] >> np.arange(n)) & 1)
    else:
        signs = rng.choice(np.array([-1.0, 1.0]), size=(resamples, n))
    B, adj = len(signs), 0 if exact else 1
    obs = d.mean(axis=1)
    gamma = np.abs(obs) * 100 * np.finfo(np.float64).eps  # ties of the observed mean: scipy's tolerance
    p = np.empty(P)
    for blk in _blocks(P):
        null = d[blk] @ signs.T / n  # (chunk, B)
        o, g = obs[blk, None], gamma[blk, None]
        less = (np.count_nonzero(null <= o + g, axis=1) + adj) / (B + adj)
        greater = (np.count_nonzero(null >= o - g, axis=1) + adj) / (B + adj)
        p[blk] = np.minimum(1.0, 2.0 * np.minimum(less, greater))
    p[np.all(d == 0.0, axis=1)] = np.nan
    return p


def _t_statistic(mean: np.ndarray, sd: np.ndarray, n: int) -> np.ndarray:
    """mean / (sd / sqrt n), ±inf where sd is 0 and the mean is not, 0 where both are."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean * np.sqrt(n) / sd
    return np.where(sd > 0, t, np.where(mean == 0, 0.0, np.sign(mean) * np.inf))


def _bootstrap(d: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Studentized bootstrap p-values of the mean of each row of ``d`` under the null (rows centred)."""
    P, n = d.shape
    idx = rng.integers(0, n, size=(resamples, n))
    counts = np.zeros((resamples, n))
    np.add.at(counts, (np.repeat(np.arange(resamples), n), idx.ravel()), 1.0)  # resample r holds topic t c times
    t_obs = np.abs(_t_statistic(d.mean(axis=1), d.std(axis=1, ddof=1), n))
    p = np.empty(P)
    for blk in _blocks(P):
        c = d[blk] - d[blk].mean(axis=1, keepdims=True)  # the null made true
        m1 = c @ counts.T / n
        m2 = (c * c) @ counts.T / n
        sd = np.sqrt(np.maximum(m2 - m1 * m1, 0.0) * n / (n - 1))
        t_star = np.abs(_t_statistic(m1, sd, n))
        p[blk] = (1 + np.count_nonzero(t_star >= t_obs[blk, None] * (1 - 1e-12), axis=1)) / (resamples + 1)
    p[np.all(d == d[:, :1], axis=1)] = np.nan  # no spread: nothing to resample
    return p


@dataclass(frozen=True, eq=False)
class UncertainT:
    r"""The paired t-test over topics with uncertain per-topic differences (:func:`uncertain_paired_t`).

    Attributes
    ----------
    mean : ndarray, shape (P,)
        :math:`\bar e`, the mean over topics of the expected differences.
    se : ndarray, shape (P,)
        Its standard error, topic sampling and relevance together.
    df : ndarray, shape (P,)
        Degrees of freedom (Satterthwaite).
    p_less : ndarray, shape (P,)
        :math:`P(\mu < 0)`: the probability that a over the population of topics is worse than b.
    p_value : ndarray, shape (P,)
        Two-sided p-value of :math:`\mu = 0`, :math:`2\min(P(\mu<0), P(\mu>0))`.
    sampling_se : ndarray, shape (P,)
        :math:`s_e/\sqrt n`, the paired t-test's standard error (topic sampling alone).
    n : int
        Topics.
    """

    mean: np.ndarray
    se: np.ndarray
    df: np.ndarray
    p_less: np.ndarray
    p_value: np.ndarray
    sampling_se: np.ndarray
    n: int

    def interval(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        r"""``(lower, upper)`` of :math:`\mu`: :math:`\bar e \pm t_{\nu,(1+\ell)/2}\, se`, never narrower than
        the paired t-test's :math:`\bar e \pm t_{n-1,(1+\ell)/2}\, s_e/\sqrt n`."""
        if not 0.0 < float(level) < 1.0:
            raise BayevalInputError(f"level: must lie in (0, 1), got {level!r}")
        q = 0.5 + float(level) / 2
        half = np.maximum(stats.t.ppf(q, self.df) * self.se, stats.t.ppf(q, max(self.n - 1, 1)) * self.sampling_se)
        return self.mean - half, self.mean + half


def uncertain_paired_t(expected, variance, mean_variance=None) -> UncertainT:
    r"""The paired t-test over topics when each topic's difference is known only in distribution.

    Each of n topics has a difference :math:`d_t = m_a(t) - m_b(t)` of a measure between two systems, known from
    incomplete judgments only as :math:`E[d_t] = e_t` and :math:`\mathrm{Var}[d_t] = v_t` (relevance uncertain).
    The question is the paired t-test's: is :math:`\mu`, the mean of :math:`d_t` over the *population* of topics
    the n were drawn from, below 0?

    Parameters
    ----------
    expected, variance : ndarray, shape (P, n)
        :math:`e_t` and :math:`v_t` of P pairs over n topics (``delta_expected``, ``delta_variance`` of
        :class:`bayeval.expected.PairwiseComparison`).
    mean_variance : ndarray, shape (P,), optional
        :math:`V_r = \mathrm{Var}[\bar d]` under the relevance uncertainty (``all_variance``, which keeps the
        dependence posterior draws of p create between topics); default :math:`\sum_t v_t / n^2`, topics
        independent given p.

    Returns
    -------
    UncertainT

    Notes
    -----
    Write :math:`d_t = e_t + \gamma + \varepsilon_t`: :math:`\varepsilon_t` the error of topic t alone
    (independent between topics, :math:`E[\varepsilon_t \mid e_t] = 0` when the :math:`e_t` are expectations) and
    :math:`\gamma` an error every topic shares (a relevance model's parameters, uncertain by their posterior).
    Then :math:`\mu = E[e] + \gamma` and :math:`\bar e - \mu = (\bar e - E[e]) - \gamma`: the topic sampling of
    the :math:`e_t`, whose spread already holds the topics' own errors, plus the shared error. Its variance is
    the covariance part of :math:`V_r`, :math:`C = V_r - \sum_t v_t/n^2 = \frac1{n^2}\sum_{t\ne t'}
    \mathrm{Cov}(d_t, d_{t'})` (0 at a point p). So

    .. math:: se^2 = \frac{s_e^2}{n} + C, \qquad T = \bar e / se,

    (:math:`s_e^2` the sample variance of the :math:`e_t`, ddof 1) on Satterthwaite's degrees of freedom
    :math:`\nu = (n-1)\,se^4 / (s_e^2/n)^2` (only :math:`s_e^2` is estimated), and :math:`P(\mu < 0) =
    F_{t_\nu}(-T)`: the posterior probability of :math:`\mu < 0` under a flat prior, as for the t-test; it is
    never further from 1/2 than the paired t-test's without :math:`C` (more uncertainty never makes it surer,
    which the larger :math:`\nu` alone could, far in the tails or with very few topics). Adding
    :math:`\sum_t v_t/n^2` as well (posterior draws of each topic's difference inside a topic bootstrap) would
    count the topics' own errors twice: they are in :math:`s_e^2` already. With :math:`C = 0` (complete
    judgments, or a point p) this is the paired t-test on the :math:`e_t` exactly: :math:`\nu = n - 1` and the
    two-sided p-value :math:`2\min(P, 1-P)` is ``scipy.stats.ttest_rel``'s. What no variance holds is the bias of
    a model's p; its level under a true null, by topic resampling on the choosing collections and TREC-8:
    docs/expected.md, "Across topics".

    Examples
    --------
    >>> e = np.array([[0.02, 0.05, -0.01, 0.04, 0.03]]); v = np.full((1, 5), 1e-3)
    >>> round(float(uncertain_paired_t(e, v).p_value[0]), 3)  # a point p: the paired t-test on e
    0.065
    >>> round(float(uncertain_paired_t(e, v, mean_variance=[4e-4]).p_value[0]), 3)  # a shared error: sd 0.014
    0.147
    """
    e = np.asarray(expected, dtype=np.float64)
    v = np.asarray(variance, dtype=np.float64)
    if e.ndim != 2 or e.shape != v.shape:
        raise BayevalInputError(f"expected, variance: expected two arrays of the same shape (pairs, topics), got "
                                f"{e.shape}, {v.shape}")
    if np.any(v < 0):
        raise BayevalInputError("variance: must be >= 0")
    P, n = e.shape
    shared = np.zeros(P)
    if mean_variance is not None:
        vr = np.asarray(mean_variance, dtype=np.float64)
        if vr.shape != (P,):
            raise BayevalInputError(f"mean_variance: expected shape ({P},), got {vr.shape}")
        own = v.sum(axis=1) / max(n, 1) ** 2
        shared = np.maximum(vr - own, 0.0)
        shared[shared <= 1e-12 * np.maximum(own, 1e-300)] = 0.0  # rounding of vr - own, not a shared error
    if n < 2:
        nan = np.full(P, np.nan)
        return UncertainT(e.mean(axis=1) if n else nan, nan, nan, nan, nan, nan, n)
    mean = e.mean(axis=1)
    sampling = e.var(axis=1, ddof=1) / n
    var = sampling + shared
    se = np.sqrt(var)
    with np.errstate(divide="ignore", invalid="ignore"):
        df = np.where(sampling > 0, (n - 1) * (var / np.where(sampling > 0, sampling, 1.0)) ** 2, np.inf)
        z = np.where(se > 0, mean / np.where(se > 0, se, 1.0), 0.0)
        z_t = np.where(sampling > 0, mean / np.sqrt(np.where(sampling > 0, sampling, 1.0)), 0.0)
    certain = np.where(mean < 0, 1.0, np.where(mean > 0, 0.0, np.nan))
    p_less = np.where(se > 0, stats.t.cdf(-z, df), certain)
    # never surer than the t-test without the shared error (Satterthwaite's larger df alone could make it so)
    p_t = np.where(sampling > 0, stats.t.cdf(-z_t, n - 1), certain)
    p_less = np.where(np.abs(p_t - 0.5) < np.abs(p_less - 0.5), p_t, p_less)
    p_value = np.minimum(1.0, 2.0 * np.minimum(p_less, 1.0 - p_less))
    return UncertainT(mean, se, df, p_less, p_value, np.sqrt(sampling), n)
