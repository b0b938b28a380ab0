"""Array kernels of statAP and statP@k (Aslam, Pavlu & Yilmaz, SIGIR 2006) for one topic, every system at once.

Horvitz-Thompson estimates from documents sampled independently (Poisson sampling) with known inclusion
probabilities ``π_d``, and their linearised (Taylor) variance estimates (docs/sampling.md).
"""

from __future__ import annotations

import numpy as np

__all__ = ["ap_slopes", "ap_sums", "stat_topic"]


def ap_sums(y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The estimated AP numerator of every system and the partial sums of its derivatives.

    Parameters
    ----------
    y : ndarray, shape (S, D)
        Each rank's estimated label (``x_d / π_d``, or a corrected label), 0 past the end of a list.

    Returns
    -------
    rank : ndarray, shape (D,)
        ``1, …, D``.
    cum : ndarray, shape (S, D)
        ``Σ_{r' ≤ r} y_{r'}``.
    above : ndarray, shape (S, D)
        ``Σ_{r' < r} y_{r'}``.
    below : ndarray, shape (S, D)
        ``Σ_{r' > r} y_{r'} / r'``.
    num : ndarray, shape (S,)
        ``N̂ = Σ_r y_r (1 + above_r) / r``.
    """
    rank = np.arange(1, y.shape[1] + 1, dtype=np.float64)
    cum = np.cumsum(y, axis=1)
    above = cum - y
    num = np.sum(y * (1.0 + above) / rank, axis=1)
    yr = y / rank
    below = np.cumsum(yr[:, ::-1], axis=1)[:, ::-1] - yr
    return rank, cum, above, below, num


def ap_slopes(rank: np.ndarray, above: np.ndarray, below: np.ndarray, rank_of_sampled: np.ndarray) -> np.ndarray:
    """Each sampled document's slope ``∂N̂/∂y_e = (1 + above_e) / r_e + below_e`` in every system.

    Parameters
    ----------
    rank, above, below : ndarray
        As :func:`ap_sums` returns them.
    rank_of_sampled : ndarray of int, shape (S, n)
        1-based rank ``r_e`` of each sampled document in each system, 0 where not retrieved.

    Returns
    -------
    ndarray, shape (S, n)
        0 where the system does not retrieve the document.
    """
    slope = (1.0 + above) / rank + below
    idx = np.maximum(rank_of_sampled - 1, 0)
    return np.where(rank_of_sampled > 0, np.take_along_axis(slope, idx, axis=1), 0.0)


def stat_topic(y: np.ndarray, x: np.ndarray, v: np.ndarray, lengths: np.ndarray, r_hat: float, var_r: float,
               cutoffs: tuple[int, ...]) -> dict[str, np.ndarray]:
    """statAP and statP@k with variance estimates for every system of one topic.

    Parameters
    ----------
    y : ndarray, shape (S, D)
        ``x_d / π_d`` of the sampled document at each rank; 0 where the document was not sampled (or past the
        end of the list).
    x : ndarray, shape (S, D)
        1 where the document at the rank is sampled and relevant, else 0.
    v : ndarray, shape (S, D)
        ``(1 - π_d) / π_d²`` of the sampled document at each rank, else 0.
    lengths : ndarray of int, shape (S,)
    r_hat : float
        ``R̂ = Σ_{d ∈ sample} x_d / π_d``.
    var_r : float
        ``Σ_{d ∈ sample} x_d (1 - π_d) / π_d²``, the variance estimate of ``R̂``.
    cutoffs : tuple of int

    Returns
    -------
    dict of ndarray, shape (S,): ``statAP``, ``statAP_var``, ``statP{k}``, ``statP{k}_var``.

    Notes
    -----
    ``statAP = N̂ / R̂`` with ``N̂ = Σ_{d ∈ S} (x_d / π_d) · (1 + Σ_{d' ∈ S, r(d') < r(d)} x_{d'} / π_{d'}) / r(d)``,
    unbiased for ``Σ_d x_d · prec@r(d)`` under Poisson sampling. Its variance is estimated by linearisation,
    ``Var̂ = R̂⁻² Σ_{e ∈ S} (1 - π_e)/π_e² · (û_e - statAP · x_e)²``, with ``û_e`` the estimated change of the
    numerator per unit change of ``e``'s weight: ``x_e (1/r_e + Σ_{d ∈ S below e} x_d / (π_d r_d) +
    Σ_{d' ∈ S above e} x_{d'} / (π_{d'} r_e))`` (0 for documents the run does not retrieve).
    """
    S, D = y.shape
    rank, cum, above, below, num = ap_sums(y)
    ap = num / r_hat if r_hat > 0 else np.zeros(S)
    u = x * (1.0 / rank + below + above / rank)
    z = u - ap[:, None] * x
    var_ret = np.sum(v * z * z, axis=1)
    var_unret = ap * ap * np.maximum(var_r - np.sum(v * x, axis=1), 0.0)
    out = {"statAP": ap,
           "statAP_var": (var_ret + var_unret) / (r_hat * r_hat) if r_hat > 0 else np.zeros(S)}
    cum_v = np.cumsum(v * x, axis=1)
    rows = np.arange(S)
    for k in cutoffs:
        idx = np.clip(np.minimum(lengths, k) - 1, 0, None)
        got = lengths > 0
        out[f"statP{k}"] = np.where(got, cum[rows, idx], 0.0) / k if D else np.zeros(S)
        out[f"statP{k}_var"] = np.where(got, cum_v[rows, idx], 0.0) / (k * k) if D else np.zeros(S)
    return out
