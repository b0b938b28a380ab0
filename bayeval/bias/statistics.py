"""Rank changes of a biased-pool experiment (RMS error, Kendall's τ and paired tests: :mod:`bayeval.stats`)."""

from __future__ import annotations

import numpy as np

from bayeval.errors import BayevalInputError

__all__ = ["rank_among", "ranks"]


def ranks(scores: np.ndarray) -> np.ndarray:
    r"""1-based rank of every score, best first: :math:`1 + \#\{u : x_u > x_s\}` (ties share the better rank).

    Examples
    --------
    >>> ranks(np.array([0.3, 0.5, 0.3, 0.1])).tolist()
    [2, 1, 2, 4]
    """
    x = np.asarray(scores, dtype=np.float64)
    return 1 + (x[None, :] > x[:, None]).sum(axis=1)


def rank_among(new: np.ndarray, reference: np.ndarray) -> np.ndarray:
    r"""Rank of each run's ``new`` score among the *other* runs' ``reference`` scores.

    :math:`1 + \#\{u \ne s : \mathrm{ref}_u > \mathrm{new}_s\}` — the rank a left-out run gets when it is
    scored on the reduced qrels and every other run keeps its published score.

    Examples
    --------
    >>> rank_among(np.array([0.2, 0.5, 0.4]), np.array([0.3, 0.5, 0.4])).tolist()
    [3, 1, 2]
    """
    new = np.asarray(new, dtype=np.float64)
    ref = np.asarray(reference, dtype=np.float64)
    if new.shape != ref.shape or new.ndim != 1:
        raise BayevalInputError("new, reference: expected two 1-D arrays of the same length")
    above = ref[None, :] > new[:, None]
    np.fill_diagonal(above, False)
    return 1 + above.sum(axis=1)
