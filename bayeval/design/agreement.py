r"""Agreement in statistical significance between baseline and reuse topics (paper §3.2.1).

For every pair of systems: a paired test over the baseline topics (p) and over the reuse topics
(p'); the observed 2×2 table of agreement; the expected table from power analysis; and a χ²
goodness-of-fit test of observed against expected, by the χ² distribution or, when expected counts
are small, by Monte Carlo (the paper's randomized "exact" test).

Table layout, as in the paper: rows are the reuse tests (0: p' < α, 1: p' ≥ α), columns the baseline
tests (0: p < α, 1: p ≥ α). Cell [0, 0] counts agreements on a difference, [1, 1] agreements on no
difference, [1, 0] errors of omission (significant on the baseline only), [0, 1] errors of
commission (significant on the reuse topics only).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from bayeval.design.power import effect_size, t_test_power
from bayeval.design.significance import adjust_pvalues, power_alpha
from bayeval.errors import BayevalInputError
from bayeval.stats import paired_pvalues

__all__ = [
    "GOF_METHODS",
    "AgreementTable",
    "agreement_test",
    "expected_table",
    "goodness_of_fit",
    "observed_table",
    "pair_statistics",
]

GOF_METHODS = ("auto", "chi2", "monte-carlo")
#: Cochran's rule: below this expected count in any cell, "auto" uses Monte Carlo
MIN_EXPECTED = 5.0
CELLS = (("both", True, True), ("commission", True, False), ("omission", False, True), ("neither", False, False))


def observed_table(sig_base: np.ndarray, sig_reuse: np.ndarray) -> np.ndarray:
    """``(2, 2)`` counts of pairs by (reuse significant?, baseline significant?); see module notes.

    Examples
    --------
    >>> observed_table(np.array([True, True, False]), np.array([True, False, False])).tolist()
    [[1, 0], [1, 1]]
    """
    b = np.asarray(sig_base, dtype=bool)
    r = np.asarray(sig_reuse, dtype=bool)
    return np.array([[np.sum(r & b), np.sum(r & ~b)], [np.sum(~r & b), np.sum(~r & ~b)]], dtype=np.int64)


def expected_table(power_base: np.ndarray, power_reuse: np.ndarray) -> np.ndarray:
    r"""``(2, 2)`` expected counts from the powers of each pair's two tests.

    Notes
    -----
    The two tests of a pair are taken as independent, each significant with probability its power
    :math:`\pi` (baseline) and :math:`\pi'` (reuse), so the pair adds :math:`\pi\pi'` to [0, 0],
    :math:`(1-\pi)\pi'` to [0, 1], :math:`\pi(1-\pi')` to [1, 0] and :math:`(1-\pi)(1-\pi')` to [1, 1].

    References
    ----------
    .. [1] Carterette et al., SIGIR 2010, §3.2.1.

    Examples
    --------
    The paper's APL example, with its rounded powers 0.964 (210 topics) and 0.354 (39 topics):

    >>> expected_table([0.964], [0.354]).round(3).tolist()
    [[0.341, 0.013], [0.623, 0.023]]
    """
    pb = np.asarray(power_base, dtype=np.float64)
    pr = np.asarray(power_reuse, dtype=np.float64)
    return np.array([[np.sum(pb * pr), np.sum((1 - pb) * pr)],
                     [np.sum(pb * (1 - pr)), np.sum((1 - pb) * (1 - pr))]], dtype=np.float64)


def _chi2_stat(obs: np.ndarray, exp: np.ndarray) -> np.ndarray:
    """Pearson's statistic over the last axis, cells with zero expectation excluded (inf if observed)."""
    pos = exp > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(pos, (obs - exp) ** 2 / np.where(pos, exp, 1.0), np.where(obs > 0, np.inf, 0.0))
    return terms.sum(axis=-1)


def goodness_of_fit(observed: np.ndarray, expected: np.ndarray, method: str = "auto", *, draws: int = 10000,
                    seed: int | np.random.SeedSequence | np.random.Generator | None = 0,
                    min_expected: float = MIN_EXPECTED) -> tuple[float, int, float, str]:
    r"""χ² goodness-of-fit of observed counts against expected counts.

    Parameters
    ----------
    observed : array_like of int
        Observed counts (any shape; flattened).
    expected : array_like of float
        Expected counts; rescaled to the observed total (cell probabilities ``expected / sum``).
    method : {"auto", "chi2", "monte-carlo"}
        ``"chi2"``: :math:`X^2 = \sum (O - E)^2 / E` against :math:`\chi^2` with (cells − 1) degrees
        of freedom. ``"monte-carlo"``: the randomized "exact" test: ``draws`` tables drawn from the
        multinomial with the expected cell probabilities and the observed total;
        :math:`p = (1 + \#\{X^2_{sim} \ge X^2_{obs}\}) / (1 + draws)` (as R's
        ``chisq.test(simulate.p.value = TRUE)``). ``"auto"``: Monte Carlo when an expected count is
        below ``min_expected`` (Cochran's rule, 5), else χ².
    draws : int
        Monte Carlo tables.
    seed : int, SeedSequence or Generator
        For the Monte Carlo draws.

    Returns
    -------
    statistic, df, p_value, method_used : float, int, float, str
        NaN p-value (method ``"none"``) when there is nothing to test (zero total).

    Notes
    -----
    Cells with zero expectation are left out of the statistic (and of the degrees of freedom); an
    observation in one makes :math:`X^2` infinite.

    References
    ----------
    .. [1] Carterette et al., SIGIR 2010, §3.2.1 and footnote 1.

    Examples
    --------
    The paper's Robust 2004 within-site table (Table 4; its p-value 0.74):

    >>> x, df, p, how = goodness_of_fit([[130, 17], [127, 160]], [[135.4, 13.9], [121.6, 163.1]])
    >>> round(x, 3), df, round(p, 2), how
    (1.205, 3, 0.75, 'chi2')
    """
    if method not in GOF_METHODS:
        raise BayevalInputError(f"method: must be one of {', '.join(GOF_METHODS)}, got {method!r}")
    obs = np.asarray(observed, dtype=np.float64).ravel()
    exp = np.asarray(expected, dtype=np.float64).ravel()
    if obs.shape != exp.shape:
        raise BayevalInputError("observed, expected: must have the same number of cells")
    if (obs < 0).any() or (exp < 0).any() or not np.isfinite(exp).all():
        raise BayevalInputError("observed, expected: counts must be finite and non-negative")
    total = obs.sum()
    if total == 0 or exp.sum() == 0:
        return float("nan"), 0, float("nan"), "none"
    exp = exp * (total / exp.sum())
    df = int(np.count_nonzero(exp > 0)) - 1
    x2 = float(_chi2_stat(obs, exp))
    if method == "auto":
        method = "monte-carlo" if exp.min() < min_expected else "chi2"
    if method == "chi2":
        if not np.isfinite(x2):
            p = 0.0
        elif df == 0:  # a single possible cell: the observed table is the only one
            p = 1.0
        else:
            p = float(stats.chi2.sf(x2, df))
        return x2, df, p, "chi2"
    if not isinstance(draws, (int, np.integer)) or draws < 1:
        raise BayevalInputError(f"draws: must be a positive integer, got {draws!r}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    n = int(round(total))
    exceed = 0
    threshold = x2 * (1.0 - 64 * np.finfo(float).eps)
    probs = exp / exp.sum()
    for start in range(0, int(draws), 100_000):
        size = min(100_000, int(draws) - start)
        sims = rng.multinomial(n, probs, size=size).astype(np.float64)
        exceed += int(np.count_nonzero(_chi2_stat(sims, exp) >= threshold))
    return x2, df, (1.0 + exceed) / (1.0 + draws), "monte-carlo"


def pair_statistics(base_a: np.ndarray, base_b: np.ndarray, reuse_a: np.ndarray, reuse_b: np.ndarray, *,
                    alpha: float = 0.05, test: str = "t", adjust: str = "none") -> dict[str, np.ndarray]:
    r"""Tests, effect sizes and powers of a family of pairs over common baseline and reuse topics.

    Parameters
    ----------
    base_a, base_b : ndarray, shape (P, n)
        Per-topic scores of the two systems of each pair over the n baseline topics.
    reuse_a, reuse_b : ndarray, shape (P, n')
        The same over the n' reuse topics.
    alpha : float
        Significance level.
    test : {"t", "wilcoxon"}
    adjust : {"none", "bonferroni", "holm"}
        Multiple-comparison adjustment within this family (baseline and reuse p-values separately);
        the powers are then computed at the per-comparison level :func:`power_alpha`.

    Returns
    -------
    dict of ndarray (P,)
        ``mean_diff_baseline, mean_diff_reuse`` (mean of a − b), ``p_base, p_reuse`` (adjusted),
        ``effect`` (:func:`effect_size` of the baseline differences), ``power_base, power_reuse``
        (:func:`t_test_power` at n and n'), ``sig_base, sig_reuse`` (p < α; an undefined p counts as
        not significant), ``reversed`` (significant on both topic sets but in opposite directions).

    Notes
    -----
    The paper's table counts a pair significant on both topic sets as an agreement whatever the
    directions; ``reversed`` flags the pairs where the two tests disagree on which system is better,
    which the table cannot see.
    """
    P, n = np.shape(base_a)
    n_r = np.shape(reuse_a)[1]
    p_base = adjust_pvalues(paired_pvalues(base_a, base_b, test), adjust)
    p_reuse = adjust_pvalues(paired_pvalues(reuse_a, reuse_b, test), adjust)
    effect = effect_size(np.asarray(base_a) - np.asarray(base_b), axis=1) if P else np.empty(0)
    level = power_alpha(alpha, P, adjust)
    power_base = t_test_power(effect, n, level) if P else np.empty(0)
    power_reuse = t_test_power(effect, n_r, level) if P else np.empty(0)
    with np.errstate(invalid="ignore"):
        sig_base = np.nan_to_num(p_base, nan=1.0) < alpha
        sig_reuse = np.nan_to_num(p_reuse, nan=1.0) < alpha
    mean_base = (np.asarray(base_a) - np.asarray(base_b)).mean(axis=1) if P else np.empty(0)
    mean_reuse = (np.asarray(reuse_a) - np.asarray(reuse_b)).mean(axis=1) if P and n_r else np.full(P, np.nan)
    reversed_ = sig_base & sig_reuse & (np.sign(mean_base) * np.sign(mean_reuse) < 0)
    return {"mean_diff_baseline": mean_base, "mean_diff_reuse": mean_reuse, "p_base": p_base, "p_reuse": p_reuse,
            "effect": np.atleast_1d(effect), "power_base": np.atleast_1d(power_base),
            "power_reuse": np.atleast_1d(power_reuse), "sig_base": sig_base, "sig_reuse": sig_reuse,
            "reversed": reversed_}


@dataclass(frozen=True, eq=False)
class AgreementTable:
    """Observed and expected agreement in significance, and the goodness-of-fit test.

    Attributes
    ----------
    observed : ndarray of int64, shape (2, 2)
    expected : ndarray of float64, shape (2, 2)
        Rows: reuse p' < α, p' ≥ α; columns: baseline p < α, p ≥ α.
    statistic : float
        Pearson's :math:`X^2`.
    df : int
    p_value : float
        Small values are evidence against reusability.
    method : str
        ``"chi2"``, ``"monte-carlo"`` or ``"none"`` (nothing to test).
    draws : int
        Monte Carlo draws (0 for χ²).
    alpha : float
        Significance level of the pairwise tests.
    pairs : DataFrame or None
        Per pair: the tests and powers behind the tables.
    reversals : int
        Pairs counted in cell [0, 0] whose two significant differences point in opposite
        directions (not part of the paper's test; a warning sign it cannot see).
    """

    observed: np.ndarray
    expected: np.ndarray
    statistic: float
    df: int
    p_value: float
    method: str
    draws: int = 0
    alpha: float = 0.05
    pairs: pd.DataFrame | None = None
    reversals: int = 0

    def __post_init__(self) -> None:
        obs = np.array(self.observed, dtype=np.int64).reshape(2, 2)
        exp = np.array(self.expected, dtype=np.float64).reshape(2, 2)
        obs.flags.writeable = False
        exp.flags.writeable = False
        object.__setattr__(self, "observed", obs)
        object.__setattr__(self, "expected", exp)

    @classmethod
    def from_counts(cls, observed, expected, method: str = "auto", *, draws: int = 10000, seed=0,
                    alpha: float = 0.05, pairs: pd.DataFrame | None = None, reversals: int = 0) -> AgreementTable:
        """Test ``observed`` against ``expected`` (:func:`goodness_of_fit`) and wrap the result.

        Examples
        --------
        The paper's APL example (10 pairs; the paper's randomized test gives 0.88):

        >>> t = AgreementTable.from_counts([[6, 0], [3, 1]], [[7.098, 0.073], [2.043, 0.786]], seed=1)
        >>> t.method, round(t.statistic, 3), 0.85 < t.p_value < 0.92
        ('monte-carlo', 0.749, True)
        """
        x2, df, p, how = goodness_of_fit(observed, expected, method, draws=draws, seed=seed)
        return cls(observed, expected, x2, df, p, how, draws if how == "monte-carlo" else 0, alpha, pairs,
                   int(reversals))

    @property
    def n_pairs(self) -> int:
        return int(self.observed.sum())

    def to_frame(self) -> pd.DataFrame:
        """One row per cell: ``cell, reuse_significant, baseline_significant, observed, expected``."""
        rows = []
        for name, r, b in CELLS:
            i, j = (0 if r else 1), (0 if b else 1)
            rows.append((name, r, b, int(self.observed[i, j]), float(self.expected[i, j])))
        return pd.DataFrame(rows, columns=["cell", "reuse_significant", "baseline_significant", "observed",
                                           "expected"])

    def _test_line(self) -> str:
        if self.method == "none":
            return "no pairs to test"
        how = f"Monte Carlo, {self.draws} draws" if self.method == "monte-carlo" else f"chi2, {self.df} df"
        return f"X2 = {self.statistic:.3f}, p = {self.p_value:.3g} ({how}; {self.n_pairs} pairs)"

    def summary(self) -> str:
        """The two tables side by side, as paper Tables 3–5, and the test."""
        a = f"{self.alpha:g}"
        head = f"{'':<14}{'baseline p < ' + a:>26}{'baseline p >= ' + a:>26}"
        lines = [head]
        for i, label in enumerate((f"reuse p' < {a}", f"reuse p' >= {a}")):
            cells = [f"O = {self.observed[i, j]:d}  E = {self.expected[i, j]:.1f}" for j in (0, 1)]
            lines.append(f"{label:<14}{cells[0]:>26}{cells[1]:>26}")
        lines.append(self._test_line())
        if self.reversals:
            lines.append(f"({self.reversals} pair(s) significant on both topic sets in opposite directions)")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"AgreementTable(observed={self.observed.tolist()}, p_value={self.p_value:.3g}, method={self.method!r})"


def agreement_test(baseline: np.ndarray, reuse: np.ndarray, pairs=None, *, alpha: float = 0.05, test: str = "t",
                   adjust: str = "none", method: str = "auto", draws: int = 10000,
                   seed: int | np.random.SeedSequence | None = 0, names=None) -> AgreementTable:
    r"""The §3.2.1 procedure for one set of systems evaluated on two topic sets.

    Parameters
    ----------
    baseline : array_like, shape (S, n)
        Per-topic scores of S systems over the n baseline topics.
    reuse : array_like, shape (S, n')
        Their scores over the n' reuse topics.
    pairs : sequence of (int, int), optional
        The pairs of systems to compare (default all :math:`S(S-1)/2`).
    alpha, test, adjust
        See :func:`pair_statistics`.
    method, draws, seed
        See :func:`goodness_of_fit`.
    names : sequence of str, optional
        System names for the ``pairs`` table.

    Returns
    -------
    AgreementTable

    Notes
    -----
    For each pair the effect size :math:`d` is estimated on the baseline topics, the powers
    :math:`\pi = \pi(d, n)` and :math:`\pi' = \pi(d, n')` give the expected table
    (:func:`expected_table`), and :func:`goodness_of_fit` compares it with the observed one.

    References
    ----------
    .. [1] Carterette et al., SIGIR 2010, §3.2.1.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> topic = rng.normal(0, 0.1, 60)
    >>> scores = np.clip(np.array([0.2, 0.3, 0.4])[:, None] + topic + rng.normal(0, 0.05, (3, 60)), 0, 1)
    >>> t = agreement_test(scores[:, :40], scores[:, 40:])
    >>> t.n_pairs, t.method
    (3, 'monte-carlo')
    """
    base = np.asarray(baseline, dtype=np.float64)
    reu = np.asarray(reuse, dtype=np.float64)
    if base.ndim != 2 or reu.ndim != 2 or base.shape[0] != reu.shape[0]:
        raise BayevalInputError(f"baseline, reuse: expected (systems, topics) arrays with the same systems, got "
                                f"{base.shape} and {reu.shape}")
    if np.isnan(base).any() or np.isnan(reu).any():
        raise BayevalInputError("baseline, reuse: scores must not be NaN")
    S = base.shape[0]
    if base.shape[1] < 2 or reu.shape[1] < 2:
        raise BayevalInputError(f"baseline, reuse: each topic set needs at least 2 topics, got {base.shape[1]} and "
                                f"{reu.shape[1]}")
    if pairs is None:
        ia, ib = np.triu_indices(S, 1)
    else:
        pr = np.asarray(list(pairs), dtype=np.int64).reshape(-1, 2)
        if ((pr < 0) | (pr >= S)).any() or (pr[:, 0] == pr[:, 1]).any():
            raise BayevalInputError(f"pairs: indices must be distinct systems in [0, {S})")
        ia, ib = pr[:, 0], pr[:, 1]
    st = pair_statistics(base[ia], base[ib], reu[ia], reu[ib], alpha=alpha, test=test, adjust=adjust)
    labels = np.asarray(names if names is not None else [str(i) for i in range(S)], dtype=object)
    if len(labels) != S:
        raise BayevalInputError(f"names: expected {S} names, got {len(labels)}")
    frame = pd.DataFrame({"run_a": labels[ia], "run_b": labels[ib], "n_baseline": base.shape[1],
                          "n_reuse": reu.shape[1], **{k: v for k, v in st.items()}})
    return AgreementTable.from_counts(observed_table(st["sig_base"], st["sig_reuse"]),
                                      expected_table(st["power_base"], st["power_reuse"]), method, draws=draws,
                                      seed=seed, alpha=alpha, pairs=frame, reversals=int(st["reversed"].sum()))
