r"""How many more judgments an undecided pair needs: the variance-removal estimate.

A pair is decided when :math:`P(\Delta < 0) \ge \alpha` or :math:`\le 1 - \alpha`, that is (normal
approximation of the mean difference over :math:`T` topics) when

.. math:: |E[\Delta]| \ge z_\alpha \sqrt{\mathrm{Var}[\Delta]}, \qquad z_\alpha = \Phi^{-1}(\alpha).

Judging a document removes its share of :math:`\mathrm{Var}[\Delta]`. Write
:math:`\mathrm{Var}[\Delta] = \sum_i c_i` over the unjudged documents :math:`i` (all topics), with
:math:`c_i` the document's share. If :math:`E[\Delta]` stays where it is — its expected value after any
judgment, since the posterior mean is a martingale — the pair is decided after the :math:`k` documents of
largest :math:`c_i`, where :math:`k` is the smallest count with

.. math:: \mathrm{Var}[\Delta] - \sum_{j \le k} c_{(j)} \le \left(E[\Delta] / z_\alpha\right)^2 .

The count is ``nan`` when even judging every document would not reach the target (then
:math:`E[\Delta]` must move, which no variance argument can predict). It is an estimate, not a bound:
the selection does not judge exactly in the order of :math:`c_i`, and :math:`E[\Delta]` moves with every
judgment. docs/judging.md ("Judgments remaining") reports how far it was from the judgments actually
needed on synthetic campaigns.

The shares: for P@k, DCG@k and recall@k :math:`\Delta_t = \sum_i w_i x_i` is linear in the relevances
:math:`x_i \sim \mathrm{Bernoulli}(p_i)` (gain :math:`g` if relevant), so :math:`c_i = p_i(1 - p_i)
g^2 w_i^2 / T^2` exactly. For AP the share is the first-order one, :math:`p_i(1 - p_i) w_i^2` with
:math:`w_i` the document's MTC weight if relevant [1]_, rescaled on each topic so that the shares add
up to that topic's :math:`\mathrm{Var}[\Delta_t]`.

References
----------
.. [1] B. Carterette, J. Allan, R. Sitaraman. Minimal test collections for retrieval evaluation.
   SIGIR 2006, §3.2.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

from bayeval.errors import BayevalInputError

__all__ = ["judgments_to_decide"]


def judgments_to_decide(expected: float, variance: float, shares: np.ndarray, alpha: float) -> float:
    r"""Judgments of the largest variance shares needed before :math:`|E[\Delta]| \ge z_\alpha \mathrm{sd}`.

    Parameters
    ----------
    expected, variance : float
        :math:`E[\Delta]` and :math:`\mathrm{Var}[\Delta]` of the pair's mean difference.
    shares : ndarray, shape (n,)
        Each unjudged document's share :math:`c_i \ge 0` of the variance (they should add up to
        ``variance``).
    alpha : float
        Confidence at which the pair is decided, in (0.5, 1).

    Returns
    -------
    float
        0 when already decided, the count :math:`k` (module docstring), or ``nan`` when removing every
        share would not decide the pair.

    Examples
    --------
    >>> judgments_to_decide(0.1, 0.01, np.array([0.006, 0.003, 0.001]), 0.95)  # need Var <= (0.1/1.645)^2
    2.0
    """
    if not 0.5 < alpha < 1.0:
        raise BayevalInputError(f"alpha: must lie in (0.5, 1), got {alpha!r}")

    target = (float(expected) / float(norm.ppf(alpha))) ** 2
    if variance <= target:
        return 0.0
    c = np.sort(np.asarray(shares, dtype=np.float64))[::-1]
    left = float(variance) - np.cumsum(c)
    # relative slack: shares that add up to the variance leave rounding, not a real remainder
    ok = np.flatnonzero(left <= target + 1e-12 * float(variance))
    return float(ok[0] + 1) if len(ok) else float("nan")
