"""Measures designed for incomplete judgments: infAP, RankEff and the judged fraction."""

from __future__ import annotations

import numpy as np

__all__ = ["INFAP_EPSILON", "inferred_ap", "judged_at", "rank_effectiveness"]

INFAP_EPSILON = 1e-5
"""trec_eval's smoothing constant in infAP's estimate of precision above a relevant document."""


def inferred_ap(rel: np.ndarray, judged_nonrel: np.ndarray, num_rel: int) -> np.ndarray:
    r"""Inferred AP (Yilmaz & Aslam 2006), as trec_eval computes it.

    Parameters
    ----------
    rel, judged_nonrel : ndarray of bool, shape (S, D)
        Judged relevant / judged nonrelevant document at each rank; a document that is neither is
        outside the judged pool.
    num_rel : int
        Judged relevant documents of the topic.

    Notes
    -----
    For a relevant document at rank :math:`k` with :math:`j_k` judged documents above it, of which
    :math:`r_k` relevant, the expected precision is

    .. math:: E[\mathrm{prec}@k] = \frac{1}{k}\left(1 + j_k \frac{r_k + \epsilon}{j_k + 2\epsilon}\right),
              \qquad infAP = \frac{1}{R}\sum_{k:\ \text{relevant}} E[\mathrm{prec}@k],

    :math:`\epsilon = 10^{-5}`: documents outside the pool count as nonrelevant, judged ones in the
    proportion observed. (trec_eval also knows "pooled but unjudged" documents; bayeval's qrels treat every
    listed document as judged, so that class is empty, as in the TREC collections shipped here.)

    References
    ----------
    Yilmaz & Aslam (2006), "Estimating average precision with incomplete and imperfect judgments", CIKM;
    trec_eval ``m_infAP.c``.

    >>> # R N R, R = 2: (1 + (1/3)(1 + 2 (1 + e)/(2 + 2e))) / 2 = (1 + 2/3) / 2
    >>> round(float(inferred_ap(np.array([[1, 0, 1]], bool), np.array([[0, 1, 0]], bool), 2)[0]), 6)
    0.833333
    """
    rel = np.asarray(rel, dtype=bool)
    if num_rel <= 0:
        return np.zeros(rel.shape[0])
    judged = rel | np.asarray(judged_nonrel, dtype=bool)
    rel_above = np.cumsum(rel, axis=1) - rel
    judged_above = np.cumsum(judged, axis=1) - judged
    k = np.arange(1, rel.shape[1] + 1)
    est = (1.0 + judged_above * (rel_above + INFAP_EPSILON) / (judged_above + 2 * INFAP_EPSILON)) / k
    return np.where(rel, est, 0.0).sum(axis=1) / num_rel


def rank_effectiveness(rel: np.ndarray, judged_nonrel: np.ndarray, num_rel: int, num_nonrel: int) -> np.ndarray:
    r"""RankEff (Ahlgren & Grönqvist 2006): bpref with every judged nonrelevant document counted.

    .. math:: RankEff = \frac{1}{R} \sum_{r \in R\ \text{retrieved}} \left(1 - \frac{n_r}{N}\right)

    with :math:`n_r` the judged nonrelevant documents ranked above :math:`r` and :math:`N` all judged
    nonrelevant documents (unretrieved relevant documents contribute 0; a term is 1 when :math:`N = 0`).

    References
    ----------
    Ahlgren & Grönqvist (2006), CIKM; Büttcher et al. (2007), SIGIR, §2.

    >>> rank_effectiveness(np.array([[1, 0, 1]], bool), np.array([[0, 1, 0]], bool), 2, 4)
    array([0.875])
    """
    rel = np.asarray(rel, dtype=bool)
    if num_rel <= 0:
        return np.zeros(rel.shape[0])
    above = np.cumsum(judged_nonrel, axis=1)
    term = 1.0 - above / num_nonrel if num_nonrel > 0 else np.ones(rel.shape)
    return np.where(rel, term, 0.0).sum(axis=1) / num_rel


def judged_at(judged: np.ndarray, k: int) -> np.ndarray:
    """Fraction of the top ``k`` ranks holding a judged document (divides by ``k``).

    >>> judged_at(np.array([[True, False, True]]), 4)
    array([0.5])
    """
    return np.asarray(judged, dtype=bool)[:, :k].sum(axis=1) / k
