r"""Per-document p that every cell agrees with: the I-projection of a prior p onto the cells' relevant counts.

A relevance model that learns a rate per *cell* (a run and a rank bin, pooled over topics: the sparse-label
model, :mod:`bayeval.relevance.sparse_labels`) must still give each *document* one p, and a document is in
several cells at once (one per run that retrieves it). Averaging the cells' rates over the runs retrieving a
document is one combination, but it does not keep the cells' own rates: the documents a good run ranks high are
shared with weaker runs, whose lower rates pull them down, so the mean p over the good run's cell falls below
the rate that cell was fitted to (docs/notes/sparse-labels-record.md, "Diagnosis of the Robust 2003 lean"). Summing the
cells' log-odds instead counts the agreement of runs that share documents as independent evidence.

This module finds the p closest to a prior combination :math:`p^0` (e.g. the mean) whose cell sums are the
cells' expected relevant counts: with :math:`X_{dc}` the number of positions of document :math:`d` in cell
:math:`c` (the incidence) and :math:`m_c` the cell's expected relevant count,

.. math:: \min_p \sum_d \mathrm{KL}\big(\mathrm{Bern}(p_d)\,\|\,\mathrm{Bern}(p^0_d)\big)
   \quad\text{s.t.}\quad \sum_d X_{dc}\,p_d = m_c \ \ \forall c,

whose solution (the I-projection, Csiszár 1975) is an exponential tilt of the prior,

.. math:: p_d = \sigma\Big(\operatorname{logit} p^0_d + \sum_c X_{dc}\,\beta_c\Big),

one log-odds correction :math:`\beta_c` per cell, shared by every document the cell holds. This is how the
combination accounts for how much the runs share: a document's log-odds is the sum of its cells' corrections,
and each correction is fitted jointly with those of the cells it overlaps, so

* runs that retrieve the same documents at the same ranks with the same rates get :math:`\beta = 0`: p is the
  prior (the mean) unchanged; with different rates for the same documents the constraints cannot all hold, and
  the penalty below splits the difference (p is the mean of the cells' rates);
* a cell whose documents no other cell holds gets p equal to its own rate (up to the prior's shape within it);
* and in general every cell's mean p equals its rate, however the cells overlap: the run-level calibration
  the mean loses.

:math:`\beta` minimises the convex dual

.. math:: F(\beta) = \sum_d \operatorname{softplus}\big(z^0_d + (X\beta)_d\big) - \beta^\top m
   + \tfrac{\lambda}{2}\sum_c n_c\,\beta_c^2,

with :math:`n_c=\sum_d X_{dc}`; :math:`\lambda` (``ridge``) is a Gaussian penalty on the corrections in units of
the cell's size, so that conflicting constraints (impossible jointly) give a finite compromise: :math:`\lambda=0`
is the exact projection, :math:`\lambda\to\infty` returns the prior. Its gradient is
:math:`X^\top p - m + \lambda n\odot\beta` (the cells' misfit) and its Hessian
:math:`X^\top\operatorname{diag}(p(1-p))X + \lambda\operatorname{diag}(n)`.

*Posterior draws.* A Newton solve per draw costs a Hessian per draw. :func:`refine_draws` starts every draw at
the :math:`\hat\beta` fitted at the posterior mean and takes a few chord steps with that point's Hessian, all
draws in one sparse product per step; with no step it is :func:`tilt`, one :math:`\beta` for every draw's prior
(which drops the uncertainty of the corrections themselves).

References
----------
Csiszár (1975), *I-divergence geometry of probability distributions and minimization problems*, Ann. Prob. 3;
Della Pietra, Della Pietra & Lafferty (1997), *Inducing features of random fields* (the exponential-family dual).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg, sparse
from scipy.special import expit, log_expit

from bayeval.errors import BayevalInputError

__all__ = ["CellProjection", "project_onto_cells", "refine_draws", "tilt"]

_EPS = 1e-9


@dataclass(frozen=True, eq=False)
class CellProjection:
    """Result of :func:`project_onto_cells`.

    Attributes
    ----------
    p : ndarray, shape (n_docs,)
        The projected p.
    beta : ndarray, shape (n_cells,)
        Log-odds correction of each cell.
    max_misfit : float
        Largest :math:`|\\nabla F|_c / \\max(n_c, 1)` left (0 at the exact solution).
    iterations : int
    """

    p: np.ndarray
    beta: np.ndarray
    max_misfit: float
    iterations: int


def _softplus(z):
    return -log_expit(-z)


def _objective(z0, x, beta, targets, ridge, size) -> float:
    """The dual F (module notes)."""
    return float(_softplus(z0 + x @ beta).sum() - beta @ targets + 0.5 * ridge * (size * beta**2).sum())


def _gradient(z0, x, beta, targets, ridge, size):
    p = expit(z0 + x @ beta)
    return x.T @ p - targets + ridge * size * beta, p


def _hessian(x, p, ridge, size):
    w = p * (1.0 - p)
    h = (x.T @ x.multiply(w[:, None])).toarray()
    h[np.diag_indices_from(h)] += ridge * size + 1e-10 * np.maximum(size, 1.0)
    return h


def tilt(incidence, prior, beta) -> np.ndarray:
    r""":math:`\sigma(\operatorname{logit} p^0 + X\beta)`: the prior tilted by the cells' corrections.

    ``prior`` may hold many problems, shape ``(n_problems, n_docs)`` (e.g. posterior draws of the prior, each
    tilted by the same :math:`\beta`).
    """
    x = sparse.csr_matrix(incidence, dtype=np.float64)
    p0 = np.clip(np.asarray(prior, dtype=np.float64), _EPS, 1 - _EPS)
    return expit(np.log(p0) - np.log1p(-p0) + x @ np.asarray(beta, dtype=np.float64))


def refine_draws(incidence, point: CellProjection, priors, targets, *, ridge: float = 0.01,
                 steps: int = 3, chunk: int = 50) -> np.ndarray:
    r"""Many problems (posterior draws) solved from one projection by ``steps`` chord steps each.

    Draw :math:`k` starts at the point's :math:`\hat\beta` and takes steps
    :math:`\beta_k \leftarrow \beta_k - t_k H_0^{-1}\nabla F_k(\beta_k)`, with :math:`H_0` the Hessian at the
    point and :math:`t_k` halved until :math:`F_k` decreases (a descent direction: :math:`H_0` is positive
    definite). The first step is the linear response of :math:`\beta` to the draw's prior and targets, so the
    draws carry the uncertainty of the corrections, not only of the prior (:func:`tilt`).

    Parameters
    ----------
    incidence : scipy.sparse matrix, shape (n_docs, n_cells)
    point : CellProjection
        :func:`project_onto_cells` of the problem the draws are spread around (same ``ridge``).
    priors : array_like, shape (n_draws, n_docs)
    targets : array_like, shape (n_draws, n_cells)
    ridge : float
    steps : int
        Chord steps per draw (0: :func:`tilt` with the point's :math:`\hat\beta`).
    chunk : int
        Draws per block (memory: a few ``chunk × n_docs`` arrays).

    Returns
    -------
    ndarray, shape (n_draws, n_docs)
    """
    x = sparse.csr_matrix(incidence, dtype=np.float64)
    p0 = np.clip(np.asarray(priors, dtype=np.float64), _EPS, 1 - _EPS)
    m = np.asarray(targets, dtype=np.float64)
    if p0.ndim != 2 or p0.shape[1] != x.shape[0] or m.shape != (p0.shape[0], x.shape[1]):
        raise BayevalInputError(f"priors, targets: expected shapes (n_draws, {x.shape[0]}) and "
                                f"(n_draws, {x.shape[1]}), got {p0.shape} and {m.shape}")
    if not isinstance(steps, (int, np.integer)) or steps < 0:
        raise BayevalInputError(f"steps: must be a non-negative integer, got {steps!r}")
    size = np.asarray(x.sum(axis=0)).ravel()
    h0 = linalg.cho_factor(_hessian(x, point.p, ridge, size))
    out = np.empty_like(p0)
    for lo in range(0, p0.shape[0], chunk):
        z0 = (np.log(p0[lo:lo + chunk]) - np.log1p(-p0[lo:lo + chunk])).T  # (n_docs, D)
        mk = m[lo:lo + chunk].T  # (n_cells, D)
        beta = np.repeat(point.beta[:, None], z0.shape[1], axis=1)

        def objective(b, z0=z0, mk=mk):
            return (_softplus(z0 + x @ b).sum(axis=0) - (b * mk).sum(axis=0)
                    + 0.5 * ridge * (size[:, None] * b**2).sum(axis=0))

        f = objective(beta)
        for _ in range(steps):
            g = x.T @ expit(z0 + x @ beta) - mk + ridge * size[:, None] * beta
            step = linalg.cho_solve(h0, g)
            t = np.ones(z0.shape[1])
            for _ in range(30):
                f_new = objective(beta - t * step)
                bad = f_new > f + 1e-13 * np.abs(f)
                if not bad.any():
                    break
                t = np.where(bad, 0.5 * t, t)
            t = np.where(bad, 0.0, t)  # no decrease found: keep the draw where it is
            beta = beta - t * step
            f = np.where(bad, f, f_new)
        out[lo:lo + chunk] = expit(z0 + x @ beta).T
    return out


def project_onto_cells(incidence, prior, targets, *, ridge: float = 0.01, tol: float = 1e-7,
                       max_iter: int = 100) -> CellProjection:
    r"""The I-projection of ``prior`` onto the cells' counts (module notes), by damped Newton on the dual.

    Parameters
    ----------
    incidence : scipy.sparse matrix or array_like, shape (n_docs, n_cells)
        :math:`X_{dc}\ge 0`, the positions of document :math:`d` in cell :math:`c`.
    prior : array_like, shape (n_docs,)
        :math:`p^0` (clipped to :math:`[10^{-9}, 1-10^{-9}]`).
    targets : array_like, shape (n_cells,)
        :math:`m_c`, each in :math:`[0, n_c]`.
    ridge : float
        :math:`\lambda\ge 0` (0: the exact projection, which exists only when the constraints can all hold).
    tol : float
        Stop when every cell's misfit :math:`|\nabla F|_c` is below ``tol`` times :math:`\max(n_c, 1)`.
    max_iter : int

    Returns
    -------
    CellProjection

    Examples
    --------
    Two runs retrieve the same two documents (one cell each), and each cell says one of them is relevant:
    the prior already fits. If the second cell says both are, no p fits both, and a small ridge gives the mean
    of the two rates (0.5 and 1):

    >>> x = np.array([[1, 1], [1, 1]])
    >>> r = project_onto_cells(x, [0.5, 0.5], [1.0, 1.0])
    >>> np.round(r.p, 6).tolist(), np.round(r.beta, 6).tolist()
    ([0.5, 0.5], [0.0, 0.0])
    >>> np.round(project_onto_cells(x, [0.5, 0.5], [1.0, 2.0], ridge=1e-4).p, 3).tolist()
    [0.75, 0.75]
    """
    x = sparse.csr_matrix(incidence, dtype=np.float64)
    n_docs, n_cells = x.shape
    if x.nnz and x.data.min() < 0:
        raise BayevalInputError("incidence: must be non-negative")
    p0 = np.asarray(prior, dtype=np.float64)
    m = np.asarray(targets, dtype=np.float64)
    if p0.shape != (n_docs,):
        raise BayevalInputError(f"prior: expected shape ({n_docs},), got {p0.shape}")
    if m.shape != (n_cells,):
        raise BayevalInputError(f"targets: expected shape ({n_cells},), got {m.shape}")
    if not (np.all(np.isfinite(p0)) and np.all(np.isfinite(m))):
        raise BayevalInputError("prior, targets: must be finite")
    if not (isinstance(ridge, (int, float)) and np.isfinite(ridge) and ridge >= 0):
        raise BayevalInputError(f"ridge: must be a non-negative number, got {ridge!r}")
    size = np.asarray(x.sum(axis=0)).ravel()
    if np.any(m < -1e-12) or np.any(m > size + 1e-9 * np.maximum(size, 1.0)):
        raise BayevalInputError("targets: each must lie in [0, n_c] (the positions of its cell)")
    p0 = np.clip(p0, _EPS, 1 - _EPS)
    z0 = np.log(p0) - np.log1p(-p0)
    scale = np.maximum(size, 1.0)
    beta = np.zeros(n_cells)
    misfit, it = np.inf, 0
    for it in range(1, max_iter + 1):  # noqa: B007 (the count is returned)
        g, p = _gradient(z0, x, beta, m, ridge, size)
        misfit = float(np.max(np.abs(g) / scale)) if n_cells else 0.0
        if misfit < tol:
            break
        step = linalg.solve(_hessian(x, p, ridge, size), g, assume_a="pos")
        f0, t = _objective(z0, x, beta, m, ridge, size), 1.0
        while t > 1e-10 and _objective(z0, x, beta - t * step, m, ridge, size) > f0 + 1e-13 * abs(f0):
            t *= 0.5
        beta = beta - t * step
    return CellProjection(expit(z0 + x @ beta), beta, misfit, it)
