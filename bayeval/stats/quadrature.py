r"""Gauss–Laguerre nodes and log-weights, the one table that the exact moments and the anchored estimate share.

For a smooth :math:`f`, :math:`\int_0^\infty e^{-y} f(y)\,dy \approx \sum_{k=1}^m w_k f(y_k)` with the
nodes :math:`y_k` the roots of the Laguerre polynomial :math:`L_m` and
:math:`w_k = y_k / ((m+1)^2 L_{m+1}(y_k)^2)`; the rule is exact for polynomials of degree :math:`< 2m`
([1]_, §25.4.45). ``bayeval.expected`` (the "exact" method, docs/expected.md) and ``bayeval.sampling``
(the model-anchored AP, docs/sampling.md) integrate :math:`G(e^{-s})` over :math:`s \ge 0` with it; the weights
are kept as logarithms because they underflow for large :math:`m`.

References
----------
.. [1] M. Abramowitz, I. A. Stegun. Handbook of Mathematical Functions, 1964, §25.4.45.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.special import roots_laguerre

__all__ = ["laguerre_nodes"]


@lru_cache(maxsize=8)
def laguerre_nodes(m: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss–Laguerre nodes and log-weights for ``m`` nodes, cached and read-only.

    Parameters
    ----------
    m : int
        Number of nodes (≥ 1).

    Returns
    -------
    y : ndarray of float, shape (m,)
        The nodes, increasing.
    logw : ndarray of float, shape (m,)
        :math:`\\ln w_k`.

    Examples
    --------
    >>> y, logw = laguerre_nodes(3)
    >>> float(np.exp(logw).sum())   # the integral of e^{-y} over [0, inf)
    1.0
    >>> y.flags.writeable
    False
    """
    y, w = roots_laguerre(m)
    logw = np.log(w)
    y.flags.writeable = False
    logw.flags.writeable = False
    return y, logw
