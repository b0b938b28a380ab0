r"""The logistic-beta distribution: :math:`\theta=\mathrm{logit}\,u` with :math:`u\sim\mathrm{Beta}(a,b)`.

The RTC models put Beta priors on probabilities :math:`\sigma(\theta)` (rank coefficients, expert
weights) but work with :math:`\theta\in\mathbb{R}`. Written in θ, Jacobian included, the prior is

.. math::

    \log p(\theta) = a\log\sigma(\theta) + b\log\sigma(-\theta) - \log B(a, b),

a proper density for :math:`a, b > 0` — the same function as the pseudo-comparisons of mtc-eval (*a*
wins and *b* losses against a reference item with θ = 0), now with a generative side: draws are
``logit(Beta(a, b))``. In PyMC it is a :class:`pymc.CustomDist` on the real line, with no transform, so
``pm.find_MAP`` (which drops Jacobians) still maximises the fast path's log posterior and
``pm.sample_prior_predictive`` can draw from it.

References
----------
N. L. Johnson, S. Kotz, N. Balakrishnan (1995). Continuous Univariate Distributions, Vol. 2, 2nd ed.,
ch. 23 (logistic distributions; the type IV generalized logistic is the logit of a Beta variable).
"""

from __future__ import annotations

import numpy as np
from scipy.special import betaln, log_expit, logit

__all__ = ["logistic_beta_logpdf", "logistic_beta_rvs", "pymc_logistic_beta"]


def logistic_beta_logpdf(theta, a, b) -> np.ndarray:
    """:math:`a\\log\\sigma(\\theta)+b\\log\\sigma(-\\theta)-\\log B(a,b)` (broadcasting)."""
    theta = np.asarray(theta, dtype=np.float64)
    return a * log_expit(theta) + b * log_expit(-theta) - betaln(a, b)


def logistic_beta_rvs(a, b, size, rng: np.random.Generator) -> np.ndarray:
    """Draws ``logit(u)``, ``u ~ Beta(a, b)``; ``size`` as in :meth:`numpy.random.Generator.beta`.

    The Beta draw is clipped to [1e-300, 1 − 1e-16] so that a tiny ``a`` or ``b`` gives a large finite
    θ rather than ±inf.
    """
    u = rng.beta(a, b, size=size)
    return logit(np.clip(u, 1e-300, 1.0 - 1e-16))


def pymc_logistic_beta(name: str, a, b, **kwargs):
    """A PyMC variable with the logistic-beta density (inside a model context); ``kwargs``: ``dims``, ``shape``."""
    import pymc as pm
    import pytensor.tensor as pt

    def logp(value, a, b):
        return (a * -pt.softplus(-value) + b * -pt.softplus(value)
                - (pt.gammaln(a) + pt.gammaln(b) - pt.gammaln(a + b)))

    def random(a, b, rng=None, size=None):
        return logistic_beta_rvs(a, b, size, rng)

    return pm.CustomDist(name, np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), logp=logp,
                         random=random, **kwargs)
