r"""Expected recall at a cutoff, its variance and P(ΔR@k<0) for every pair of systems, over thousands of topics.

The rank-cube counterpart of :func:`bayeval.expected.compare_systems` for ``recall@k``: the same moments
(the delta method, or the papers' closed form; exact quadrature where the house uses it) with no Python loop
over topics. Recall is a ratio with the random number of relevant documents R, like AP, and runs in the same
kernel (:mod:`bayeval.expected.cube_ap`) with the linear numerator's weights.

Model and notation (docs/expected.md). Documents are relevant independently with probability :math:`p_i`
(judged: 0 or 1); :math:`R = \sum_i X_i` over every document of the topic (retrieved by some system down the
whole lists, or judged relevant), and a system's :math:`R@k = S/R` with :math:`S = \sum_{r_i\le k} X_i`. With
:math:`v_i = p_i(1-p_i)` and :math:`A_k` the system's top k,

.. math::

    E[S] = \sum_{i\in A_k} p_i,\qquad \mathrm{Var}[S] = \mathrm{Cov}(S, R) = \sum_{i\in A_k} v_i,\qquad
    \mathrm{Cov}(S_a, S_b) = \sum_{i\in A_k\cap B_k} v_i,

(the first-order coefficients are :math:`\phi_i = 1`, no quadratic term), and, for a pair,
:math:`\Delta R@k = (S_a - S_b)/R` by the second-order delta method about :math:`\mu_R = E[R]`:

.. math::

    E\Big[\frac{D}{R}\Big] &\approx \frac{\mu_D}{\mu_R} - \frac{\mathrm{Cov}(D,R)}{\mu_R^2}
        + \frac{\mu_D\,\mathrm{Var}\,R}{\mu_R^3},\\
    \mathrm{Var}\Big[\frac{D}{R}\Big] &\approx \frac{\mathrm{Var}\,D}{\mu_R^2}
        - \frac{2\mu_D\,\mathrm{Cov}(D,R)}{\mu_R^3} + \frac{\mu_D^2\,\mathrm{Var}\,R}{\mu_R^4},

with :math:`D = S_a - S_b`, :math:`\mathrm{Var}\,D = \mathrm{Var}\,S_a + \mathrm{Var}\,S_b - 2\,\mathrm{Cov}(S_a,
S_b)` and :math:`\mathrm{Cov}(D,R) = \mathrm{Cov}(S_a,R) - \mathrm{Cov}(S_b,R)`; ``"paper"`` keeps the first
terms (:math:`\mu_D/\mu_R`, :math:`\mathrm{Var}\,D/\mu_R^2`). The pair term is the walk over the documents
both top-k lists share, :math:`O(k)`. Topics without relevant mass (every recall 0) and those where the
expansion does not hold (:math:`\mathrm{Var}\,R > \mu_R^2`; exact quadrature in the per-topic path) are computed
as the per-topic path computes them (:mod:`bayeval.expected.cube_ap`).

References
----------
.. [1] B. Carterette, J. Allan, R. Sitaraman. Minimal test collections for retrieval evaluation. SIGIR 2006.
.. [2] B. Carterette. Robust test collections for retrieval evaluation. SIGIR 2007, §2.1.
"""

from __future__ import annotations

import numpy as np

from bayeval.data.rankcube import RankCube
from bayeval.defaults import CLOSED_FORM_DRAWS
from bayeval.expected._cube_pairs import CubePairMoments, check_cutoff
from bayeval.expected.cube_ap import ratio_pairs
from bayeval.measures import Measure

__all__ = ["expected_recall_pairs"]


def expected_recall_pairs(cube: RankCube, p_unjudged=0.0, *, cutoff: int = 1000, method: str = "delta",
                          pairs: str | np.ndarray = "all", nodes: int = 64, scheduler=None, chunks: int | None = None,
                          connect_timeout: float = 30.0,
                          closed_form_draws: int = CLOSED_FORM_DRAWS) -> CubePairMoments:
    r"""E, Var of recall@k per system and topic; E, Var and P(Δ<0) of the difference of mean R@k for pairs.

    The same moments as :func:`bayeval.expected.compare_systems` with ``measure=f"recall@{cutoff}"`` and the
    same ``method`` on the same runs and probabilities (to rounding; module notes).

    Parameters
    ----------
    cube : RankCube
        Built with ``code_depth=None``: R counts every unjudged document down the lists, not only the top k.
    p_unjudged : float or ndarray (S, T, D) or (draws, S, T, D)
        As in :func:`~bayeval.expected.cube_ap.expected_ap_pairs` (posterior draws: law of total variance).
    cutoff : int, default 1000
        k of recall@k (MS MARCO's R@1000); lists shorter than k are whole.
    method : {"delta", "paper", "exact"}, default "delta"
    pairs, nodes, scheduler, chunks, connect_timeout, closed_form_draws
        As in :func:`~bayeval.expected.cube_ap.expected_ap_pairs` (Dask: topic chunks, the same numbers to
        1e-12).

    Returns
    -------
    CubePairMoments
        ``measure`` is ``"recall@k"``.

    Notes
    -----
    Over T independent topics :math:`E[\Delta] = \frac1T\sum_t E[\Delta_t]`,
    :math:`\mathrm{Var}[\Delta] = \frac1{T^2}\sum_t \mathrm{Var}[\Delta_t]` and :math:`P(\Delta<0) =
    \Phi(-E/\sqrt{V})`; posterior draws are combined as in
    :func:`~bayeval.expected.cube_ap.expected_ap_pairs`.

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=5, n_systems=3, n_docs=60, depth=20, judged_depth=3, seed=1)
    >>> res = expected_recall_pairs(RankCube.from_runs(col.runs, col.judgments), 0.1, cutoff=10)
    >>> res.measure, res.p_less.shape
    ('recall@10', (3,))
    """
    spec = Measure("recall", check_cutoff(cutoff))
    return ratio_pairs(cube, p_unjudged, spec, method=method, pairs=pairs, nodes=nodes, scheduler=scheduler,
                       chunks=chunks, connect_timeout=connect_timeout, closed_form_draws=closed_form_draws)
