r"""Per-topic moments of Δ between pairs of systems: the door to the kernels for callers outside ``expected``.

:func:`compare_systems` averages over topics; a caller that updates one topic at a time (the judging
loop of :mod:`bayeval.selection`) needs E[Δ] and Var[Δ] of one topic for every pair, from that topic's
arrays, and the per-topic point p of a ``probabilities`` argument. Both are here; the formulas are those of
docs/expected.md (the papers' closed form, the delta method or exact quadrature for AP-like measures, the
exact moments of nDCG).
"""

from __future__ import annotations

import numpy as np

from bayeval.data.rankdata import RankData
from bayeval.expected._engine import analytic_pair_moments
from bayeval.expected._probabilities import resolve
from bayeval.measures.measure import Measure

__all__ = ["pair_moments", "point_probabilities"]


def pair_moments(ranked, lengths, judged, grades, p, spec: Measure, method: str, nodes: int, pa, pb
                 ) -> tuple[np.ndarray, np.ndarray]:
    r""":math:`E[\Delta]` and :math:`\mathrm{Var}[\Delta]`, :math:`\Delta = M_a - M_b`, on one topic for every
    pair (``pa[j]``, ``pb[j]``).

    Parameters
    ----------
    ranked, lengths : ndarray
        The topic's rankings as document indices (:class:`~bayeval.data.TopicRanks`), and run lengths.
    judged, grades : ndarray
        Per document: judged or not, and its grade.
    p : ndarray
        Per document the probability of relevance (judged documents at their judgment).
    spec : Measure
        An analytic measure (not R-prec).
    method : {"paper", "delta", "exact"}
    nodes : int
        Quadrature nodes of ``"exact"``.
    pa, pb : ndarray of int
        The pairs' system indices.
    """
    return analytic_pair_moments(ranked, lengths, judged, grades, p, spec, method, nodes, pa, pb)


def point_probabilities(data: RankData, probabilities, default_p: float) -> list[np.ndarray]:
    """Per topic the point p (n_t,) of a ``probabilities`` argument of :func:`compare_systems` (judged
    documents at their judgment; posterior draws are refused)."""
    return resolve(data, probabilities, default_p, allow_draws=False)
