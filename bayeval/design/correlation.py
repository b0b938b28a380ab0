r"""Relative ordering and score agreement between baseline and reuse evaluations (paper §3.2.2–3.2.3).

Kernel on arrays: a τ counted over a chosen set of pairs (the participant-comparison τ). Kendall's τ
between two score vectors and the root mean square error are :mod:`bayeval.stats.agreement`.
"""

from __future__ import annotations

import numpy as np

from bayeval.errors import BayevalInputError

__all__ = ["pairwise_tau"]


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
