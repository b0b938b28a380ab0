"""Array kernel of statAP with Hájek (ratio) precisions for one topic, every system at once.

statAP's precision at a sampled relevant document is a Horvitz-Thompson count divided by the rank; with
heavily weighted documents above it the count exceeds the rank and the topic's AP exceeds 1. Here the count
is divided by the Horvitz-Thompson estimate of the number of documents at or above the rank instead, so every
precision, and the topic's AP, lies in [0, 1] (formulas: docs/sampling.md, the revision "a bounded precision
for the sample alone").
"""

from __future__ import annotations

import numpy as np

__all__ = ["hajek_topic"]


def hajek_topic(y_ranked: np.ndarray, w_ranked: np.ndarray, rank_of_sampled: np.ndarray, relevant: np.ndarray,
                pi: np.ndarray) -> dict[str, np.ndarray]:
    """AP with Hájek precisions and its Poisson delete-one jackknife influences for every system of one topic.

    Parameters
    ----------
    y_ranked : ndarray, shape (S, D)
        ``x_d / π_d`` at each sampled relevant document in each system's rank order, 0 elsewhere.
    w_ranked : ndarray, shape (S, D)
        ``1 / π_d`` at each sampled document whatever its label, 1 at a ranked document whose label is known
        without a draw (outside the pool: nonrelevant), 0 at a pooled document not sampled and past the end.
    rank_of_sampled : ndarray of int, shape (S, n)
        1-based rank of each sampled document (relevant or not) in each system, 0 where not retrieved.
    relevant : ndarray of bool, shape (n,)
        Which sampled documents are relevant.
    pi : ndarray, shape (n,)
        Their inclusion probabilities.

    Returns
    -------
    dict
        ``R`` (0-d, ``R̂ = Σ_{d ∈ S, x_d = 1} 1/π_d``); ``AP``, shape (S,); ``precision``, shape (S, n): each
        sampled relevant document's ``P̂_d`` (0 for the others and where the system does not retrieve it);
        ``g``, shape (S, n): influences ``√(1 - π_e) (θ̂ - θ̂₍ₑ₎)``, ``θ̂₍ₑ₎`` the estimate recomputed with e's
        draw undone, whose sum of squares is the Poisson delete-one jackknife variance.

    Notes
    -----
    For a sampled relevant document d at rank ``r_d``, with ``A_x(d) = Σ_{e ∈ S above d} x_e/π_e`` and
    ``A_w(d) = Σ_{e above d} w_e`` (the Horvitz-Thompson estimates of the relevant documents and of all documents
    above d),

    ``P̂_d = (1 + A_x(d)) / (1 + A_w(d))``,   ``AP̂ = Σ_{d ∈ S, x_d = 1} (1/π_d) P̂_d / R̂``

    (Hájek 1971; the ratio form of a Horvitz-Thompson mean, Särndal, Swensson & Wretman 1992, §5.7). d itself
    counts 1 in both counts: given ``d ∈ S`` its label is known, as in statAP's precision ``(1 + A_x(d))/r_d``
    (Aslam, Pavlu & Yilmaz 2006), of which this replaces the known rank ``r_d`` by its estimate ``1 + A_w(d)``.
    Since ``w_e ≥ x_e/π_e``, ``1/(1 + A_w) ≤ P̂_d ≤ 1``, and AP̂, a weighted mean of the ``P̂_d`` with weights
    ``(1/π_d)/R̂`` (0 for documents the system does not retrieve), lies in [0, 1]. infAP (Yilmaz & Aslam 2006)
    and xinfAP estimate the precision above a rank by the same kind of ratio of the sampled documents above it,
    scaled by their known number (per stratum in xinfAP, with a smoothing prior); here the number is estimated,
    so that the ratio is one of two Horvitz-Thompson estimates of the same documents.

    Undoing the draw of a sampled document e (``w_e → 0``) changes ``A_x``, ``A_w`` of every relevant document
    below e in the system, and for a relevant e removes its own term and its ``1/π_e`` from ``R̂``; a
    nonrelevant e therefore has an influence too. When e is the only sampled relevant document, ``θ̂₍ₑ₎ = 0``
    (the convention of :func:`bayeval.sampling._corrected_kernels.corrected_topic`).
    """
    S = y_ranked.shape[0]
    n = len(pi)
    relevant = np.asarray(relevant, dtype=bool)
    delta = 1.0 / pi
    r_hat = float(np.sum(delta[relevant]))
    if not relevant.any() or r_hat <= 0:
        return {"R": np.array(r_hat), "AP": np.zeros(S), "precision": np.zeros((S, n)), "g": np.zeros((S, n))}
    above_x = np.cumsum(y_ranked, axis=1) - y_ranked
    above_w = np.cumsum(w_ranked, axis=1) - w_ranked
    got = rank_of_sampled > 0
    idx = np.maximum(rank_of_sampled - 1, 0)
    a_x = np.where(got, np.take_along_axis(above_x, idx, axis=1), 0.0)       # (S, n)
    a_w = np.where(got, np.take_along_axis(above_w, idx, axis=1), 0.0)
    counted = got & relevant[None, :]
    precision = np.where(counted, (1.0 + a_x) / (1.0 + a_w), 0.0)
    num = precision @ delta
    theta = num / r_hat
    # undo e (rows of axis 1) for every relevant d (axis 2): e above d in the system changes d's two counts
    rel_idx = np.flatnonzero(relevant)
    d_got = counted[:, rel_idx]                                                  # (S, m)
    below = got[:, :, None] & d_got[:, None, :] \
        & (rank_of_sampled[:, :, None] < rank_of_sampled[:, None, rel_idx])      # (S, n, m)
    x_delta = np.where(relevant, delta, 0.0)
    new_prec = (1.0 + a_x[:, None, rel_idx] - x_delta[None, :, None]) \
        / (1.0 + a_w[:, None, rel_idx] - delta[None, :, None])
    change = np.where(below, new_prec - precision[:, None, rel_idx], 0.0) @ delta[rel_idx]    # (S, n)
    num_d = num[:, None] + change - x_delta[None, :] * precision
    r_d = r_hat - x_delta
    theta_d = np.where(r_d[None, :] > 0, num_d / np.where(r_d > 0, r_d, 1.0)[None, :], 0.0)
    g = np.sqrt(1.0 - pi)[None, :] * (theta[:, None] - theta_d)
    return {"R": np.array(r_hat), "AP": theta, "precision": precision, "g": g}
