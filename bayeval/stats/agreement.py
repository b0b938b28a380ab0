r"""Agreement between two scorings of the same systems: Kendall's τ (τ-b, ties agreeing, or over chosen pairs) and RMSE.

References: M. G. Kendall (1938), *A new measure of rank correlation*, Biometrika 30; (1945), *The treatment
of ties in ranking problems*, Biometrika 33; S. Büttcher, C. L. A. Clarke, P. C. K. Yeung, I. Soboroff (2007),
*Reliable information retrieval evaluation with incomplete and biased judgements*, SIGIR.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import stats

from bayeval.errors import BayevalInputError

__all__ = ["kendall_tau", "pairwise_tau", "rmse"]


def kendall_tau(x, y, ties: str = "b") -> float:
    r"""Kendall's τ between two scorings of the same n systems.

    Parameters
    ----------
    x, y : array_like, shape (n,)
    ties : {"b", "agree"}
        ``"b"`` (default): :math:`\tau_b = (C-D)/\sqrt{(N_0-N_x)(N_0-N_y)}` with C concordant and D
        discordant pairs, :math:`N_0=\binom n2` and :math:`N_x, N_y` the pairs tied in x, y
        (``scipy.stats.kendalltau``); NaN when either scoring is constant.
        ``"agree"``: :math:`\tau = 1 - 2I/\binom n2` with :math:`I=\#\{i<j:(x_i-x_j)(y_i-y_j)<0\}`, a tie
        counted as "ranked in the correct order" (Büttcher et al. 2007, §4). Without ties both equal τ-a.

    Returns
    -------
    float
        NaN with fewer than two systems.

    Examples
    --------
    >>> round(kendall_tau([0.1, 0.2, 0.3], [0.15, 0.35, 0.25]), 4)
    0.3333
    >>> kendall_tau([3.0, 2.0, 1.0], [2.0, 2.0, 1.0], ties="agree")
    1.0
    """
    if ties not in ("b", "agree"):
        raise BayevalInputError(f"ties: must be 'b' or 'agree', got {ties!r}")
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise BayevalInputError(f"x, y: expected two vectors of the same length, got {x.shape}, {y.shape}")
    n = x.size
    if n < 2:
        return float("nan")
    if ties == "agree":
        i, j = np.triu_indices(n, k=1)
        inversions = np.count_nonzero((x[i] - x[j]) * (y[i] - y[j]) < 0)
        return float(1.0 - 2.0 * inversions / (n * (n - 1) / 2))
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(stats.kendalltau(x, y).statistic)


def pairwise_tau(baseline_diff: np.ndarray, reuse_diff: np.ndarray) -> tuple[float, int, int, int]:
    r"""A τ over chosen pairs: (concordant − discordant) / pairs.

    Parameters
    ----------
    baseline_diff, reuse_diff : array_like, shape (P,)
        For each pair (a, b) the score difference a − b in the baseline evaluation and in the reuse
        evaluation (each pair may be evaluated over its own topics).

    Returns
    -------
    tau, concordant, discordant, pairs : float, int, int, int
        A pair is concordant when both differences have the same nonzero sign, discordant when the
        signs are opposite; a zero difference is a tie and counts in neither (but in the pairs), as
        in Kendall's :math:`\tau_a`. NaN when there is no pair.

    Notes
    -----
    The participant-comparison τ of a site (paper §5.1) is this over the pairs with exactly one run
    of the site: its runs evaluated on the topics it was held out of, against every other site's runs.

    Examples
    --------
    >>> pairwise_tau([0.1, -0.2, 0.3, 0.1], [0.05, 0.1, 0.2, 0.0])
    (0.25, 2, 1, 4)
    """
    b = np.sign(np.asarray(baseline_diff, dtype=np.float64))
    r = np.sign(np.asarray(reuse_diff, dtype=np.float64))
    if b.shape != r.shape:
        raise BayevalInputError("baseline_diff, reuse_diff: must have the same length")
    prod = b * r
    c, d, n = int(np.sum(prod > 0)), int(np.sum(prod < 0)), int(b.size)
    return ((c - d) / n if n else float("nan")), c, d, n


def rmse(x, y) -> float:
    r"""Root mean square error :math:`\sqrt{\frac1n \sum_i (x_i - y_i)^2}`; NaN when empty.

    Büttcher et al. (2007, eq. 3) between a run's published and reduced-pool scores; Voorhees et al.'s
    reuse designs between baseline and reuse scores.

    Examples
    --------
    >>> rmse([0.5, 0.25], [0.25, 0.25]) == (0.25 ** 2 / 2) ** 0.5
    True
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.shape != y.shape:
        raise BayevalInputError(f"x, y: must have the same shape, got {x.shape}, {y.shape}")
    return float(np.sqrt(np.mean((x - y) ** 2))) if x.size else float("nan")
