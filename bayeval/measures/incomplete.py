"""Measures designed for incomplete judgments: infAP, RankEff and the judged fraction."""

from __future__ import annotations

import numpy as np

from bayeval.measures._summation import sequential_sum
from bayeval.measures._validate import as_rank_matrix, check_counts, check_cutoff, check_same_shape, per_row_ratio
from bayeval.measures.bpref import mean_over_relevant

__all__ = ["INFAP_EPSILON", "inferred_ap", "judged_at", "rank_effectiveness"]

INFAP_EPSILON = 1e-5
"""trec_eval's smoothing constant in infAP's estimate of precision above a relevant document."""


def inferred_ap(rel: np.ndarray, judged_nonrel: np.ndarray, num_rel,
                pool_unjudged: np.ndarray | None = None) -> np.ndarray:
    r"""Inferred AP (Yilmaz & Aslam 2006) of every system for one topic, as trec_eval computes it.

    Parameters
    ----------
    rel, judged_nonrel : array_like of bool, shape (S, D) or (D,)
        Judged relevant / judged nonrelevant document at each rank.
    num_rel : int or array_like of int, shape (S,)
        Judged relevant documents of the topic (one per row when the rows rank different topics).
    pool_unjudged : array_like of bool, shape (S, D), optional
        Documents in the judging pool that were not judged (in a qrels file: a negative grade).
        Documents in none of the three classes are outside the pool.

    Returns
    -------
    ndarray of float64, shape (S,)

    Notes
    -----
    For a relevant document at rank :math:`k` with, above it, :math:`r_k` judged relevant,
    :math:`n_k` judged nonrelevant and :math:`u_k` pooled-but-unjudged documents,

    .. math:: E[\mathrm{prec}@k] = \frac{1}{k}\left(1 + (r_k + n_k + u_k)
              \frac{r_k + \epsilon}{r_k + n_k + 2\epsilon}\right),
              \qquad infAP = \frac{1}{R}\sum_{k:\ \text{relevant}} E[\mathrm{prec}@k],

    :math:`\epsilon = 10^{-5}`: documents above :math:`k` outside the pool count as nonrelevant,
    pooled ones as relevant in the proportion observed among the judged ones.

    References
    ----------
    .. [1] E. Yilmaz and J. A. Aslam, "Estimating average precision with incomplete and imperfect
       judgments", CIKM 2006.
    .. [2] trec_eval 9.x, ``m_infap.c``.

    Examples
    --------
    R N R with R = 2: (1 + (1/3)(1 + 2 (1 + e)/(2 + 2e))) / 2 = (1 + 2/3) / 2.

    >>> round(float(inferred_ap(np.array([[1, 0, 1]], bool), np.array([[0, 1, 0]], bool), 2)[0]), 6)
    0.833333
    """
    rel = as_rank_matrix(rel, "rel")
    judged_nonrel = as_rank_matrix(judged_nonrel, "judged_nonrel")
    check_same_shape(judged_nonrel, rel, "judged_nonrel")
    num_rel = check_counts(num_rel, "num_rel", rel.shape[0])
    rel_above = np.cumsum(rel, axis=1) - rel
    judged_above = np.cumsum(rel | judged_nonrel, axis=1) - (rel | judged_nonrel)
    pooled_above = judged_above
    if pool_unjudged is not None:
        pool_unjudged = as_rank_matrix(pool_unjudged, "pool_unjudged")
        check_same_shape(pool_unjudged, rel, "pool_unjudged")
        pooled_above = judged_above + np.cumsum(pool_unjudged, axis=1) - pool_unjudged
    # trec_eval's arithmetic, term for term, with j = k - 1 documents above:
    # 1/(j+1) + (j/(j+1)) * ((r+n+u)/j) * ((r+eps)/(r+n+2eps)), and 1 at the first rank
    j = np.arange(rel.shape[1], dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        est = 1.0 / (j + 1.0) + (j / (j + 1.0)) * (pooled_above / j) * (
            (rel_above + INFAP_EPSILON) / (judged_above + 2 * INFAP_EPSILON))
    est[:, :1] = 1.0
    return per_row_ratio(sequential_sum(np.where(rel, est, 0.0)), num_rel)


def rank_effectiveness(rel: np.ndarray, judged_nonrel: np.ndarray, num_rel, num_nonrel) -> np.ndarray:
    r"""RankEff (Ahlgren & Grönqvist 2006) of every system for one topic: bpref with every judged
    nonrelevant document counted.

    Parameters
    ----------
    rel, judged_nonrel : array_like of bool, shape (S, D) or (D,)
        Judged relevant / judged nonrelevant document at each rank; others are skipped.
    num_rel, num_nonrel : int or array_like of int, shape (S,)
        R and N, judged relevant and judged nonrelevant documents of the topic (one per row when the rows
        rank different topics).

    Notes
    -----
    .. math:: RankEff = \frac{1}{R} \sum_{r \text{ relevant, retrieved}} \left(1 - \frac{n_r}{N}\right)

    with :math:`n_r` the judged nonrelevant documents ranked above :math:`r` (unretrieved relevant
    documents contribute 0; a term is 1 when :math:`N = 0`). 0 when :math:`R = 0`.

    References
    ----------
    .. [1] P. Ahlgren and L. Grönqvist, "Retrieval evaluation with incomplete relevance data: a
       comparative study of three measures", CIKM 2006.
    .. [2] S. Büttcher, C. L. A. Clarke, P. C. K. Yeung and I. Soboroff, "Reliable information retrieval
       evaluation with incomplete and biased judgements", SIGIR 2007, §2.

    Examples
    --------
    R N R with R = 2, N = 4: (1 + (1 - 1/4)) / 2.

    >>> rank_effectiveness(np.array([[1, 0, 1]], bool), np.array([[0, 1, 0]], bool), 2, 4)
    array([0.875])
    """
    return mean_over_relevant(rel, judged_nonrel, num_rel, num_nonrel,
                              lambda above, r, n: np.where(n > 0, 1.0 - above / n, 1.0))


def judged_at(judged: np.ndarray, k: int) -> np.ndarray:
    r"""Fraction of the top ``k`` ranks holding a judged document, :math:`\frac{1}{k}\sum_{r \le k} j_r`.

    Divides by ``k`` even when fewer documents are retrieved (empty ranks are not judged).

    Parameters
    ----------
    judged : array_like of bool, shape (S, D) or (D,)
    k : int

    Examples
    --------
    >>> judged_at(np.array([[True, False, True]]), 4)
    array([0.5])
    """
    judged = as_rank_matrix(judged, "judged")
    k = check_cutoff(k, "k")
    return np.count_nonzero(judged[:, :k], axis=1) / k
