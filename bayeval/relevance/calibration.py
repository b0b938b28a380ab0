r"""Per-system Platt calibration of the rank coefficients (Carterette et al. 2007 §3.2).

System j's self-reported probability :math:`q^*_{ij}` (the rank coefficient of the rank it gives
document i) is mapped to :math:`q_{ij}=\sigma(A_j+B_jq^*_{ij})`, fitted on judged documents pooled over
topics. Each cell (system, topic, rank) contributes its judged relevant and nonrelevant counts; the
prior is a smoothing pseudo-count *s* for each class at each smoothing cell:

.. math::

    \log p(A,B\mid\cdot) = \sum_c n^+_c\log\sigma(\eta_c)+n^-_c\log\sigma(-\eta_c)
      + \sum_{c'} s\,[\log\sigma(\eta_{c'})+\log\sigma(-\eta_{c'})],\qquad \eta_c = A_{j(c)}+B_{j(c)}x_c.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, log_expit

from bayeval.errors import BayevalInputError
from bayeval.relevance._fitting import Mode, ParamSpec, RelevanceModel
from bayeval.relevance._idata import Observed
from bayeval.relevance._kernels import platt_sums
from bayeval.relevance.config import CalibrationPrior

__all__ = ["PlattCalibration"]


def _newton_step(gA, gB, hAA, hAB, hBB):
    """Per system, the Newton step H⁻¹g of the 2 × 2 system; where H is singular (a system whose cells
    share one value of x, or have no weight: A and B are not both identified), the pseudo-inverse step,
    which keeps (A, B) on the minimum-norm line of modes."""
    det = hAA * hBB - hAB ** 2
    regular = det > 1e-10 * hAA * hBB
    safe = np.where(regular, det, 1.0)
    dA = np.where(regular, (hBB * gA - hAB * gB) / safe, 0.0)
    dB = np.where(regular, (hAA * gB - hAB * gA) / safe, 0.0)
    # rank one: H = λ u uᵀ with λ = tr H, so H⁺ = H / λ²
    tr2 = (hAA + hBB) ** 2
    sing = ~regular & (tr2 > 0)
    tr2 = np.where(sing, tr2, 1.0)
    dA = np.where(sing, (hAA * gA + hAB * gB) / tr2, dA)
    dB = np.where(sing, (hAB * gA + hBB * gB) / tr2, dB)
    return dA, dB


@dataclass(frozen=True, eq=False)
class PlattCalibration(RelevanceModel):
    r"""Platt calibration :math:`q=\sigma(A_j+B_jq^*)`, one (A, B) per system.

    Parameters
    ----------
    system : ndarray of int, shape (n,)
        System index of each observed cell.
    x : ndarray, shape (n,)
        The cell's :math:`q^*`.
    n_rel, n_nonrel : ndarray, shape (n,)
        Judged relevant / nonrelevant documents in the cell.
    smooth_system, smooth_x : ndarray, shape (m,)
        Smoothing cells: each gets ``prior.smoothing`` pseudo-counts of each class.
    systems : tuple of str
    prior : CalibrationPrior

    Notes
    -----
    The fast path is a batched 2×2 Newton iteration over systems (IRLS with step halving).
    Normal(0, sd) priors on A or B (``intercept_sd``/``slope_sd``) add :math:`-\tfrac12(A/sd)^2`; pooled
    (``pooled_intercept_sd``/``pooled_slope_sd``), :math:`-\tfrac12((A-\bar A)/sd)^2` with
    :math:`\bar A` the mode of one calibration shared by all systems (:attr:`pooled_centre`).

    References
    ----------
    J. Platt (2000). Probabilistic outputs for support vector machines. Carterette, Allan, Sitaraman
    (2007), Robust test collections for retrieval evaluation, SIGIR §3.2.

    Examples
    --------
    >>> m = PlattCalibration(np.array([0, 0]), np.array([0.8, 0.1]), np.array([8, 1]), np.array([2, 9]),
    ...                      np.array([0, 0]), np.array([0.8, 0.1]), ("s",))
    >>> est = m.find_map()
    >>> bool(est["B"][0] > 0)
    True
    """

    system: np.ndarray
    x: np.ndarray
    n_rel: np.ndarray
    n_nonrel: np.ndarray
    smooth_system: np.ndarray
    smooth_x: np.ndarray
    systems: tuple
    prior: CalibrationPrior = CalibrationPrior()
    name = "calibration"

    def __post_init__(self) -> None:
        arrs = {k: np.asarray(getattr(self, k)) for k in ("system", "x", "n_rel", "n_nonrel")}
        n = len(arrs["system"])
        if any(len(v) != n for v in arrs.values()):
            raise BayevalInputError("system, x, n_rel, n_nonrel: must have the same length")
        if len(self.smooth_system) != len(self.smooth_x):
            raise BayevalInputError("smooth_system, smooth_x: must have the same length")
        S = len(self.systems)
        for k in ("system", "smooth_system"):
            v = np.asarray(getattr(self, k), dtype=np.int64)
            if len(v) and (v.min() < 0 or v.max() >= S):
                raise BayevalInputError(f"{k}: system index outside 0..{S - 1}")
            object.__setattr__(self, k, v)
        for k in ("x", "n_rel", "n_nonrel", "smooth_x"):
            object.__setattr__(self, k, np.asarray(getattr(self, k), dtype=np.float64))
        object.__setattr__(self, "systems", tuple(str(s) for s in self.systems))

    @property
    def param_spec(self) -> ParamSpec:
        S = len(self.systems)
        return ParamSpec(("A", "B"), ((S,), (S,)), (("system",), ("system",)), {"system": list(self.systems)})

    # rows: observed cells (y = n+/n, w = n) then smoothing cells (y = 1/2, w = 2s) --------------
    def _rows(self):
        n = self.n_rel + self.n_nonrel
        s = float(self.prior.smoothing)
        if s > 0 and np.array_equal(self.smooth_system, self.system) and np.array_equal(self.smooth_x, self.x):
            # every smoothing cell is an observed cell: one row each, y = (n+ + s)/(n + 2s), w = n + 2s
            # (the same log posterior with half the rows)
            w = n + 2.0 * s
            keep = w > 0
            return self.system[keep], self.x[keep], (self.n_rel[keep] + s) / w[keep], w[keep]
        keep = n > 0
        sys = np.concatenate([self.system[keep], self.smooth_system])
        x = np.concatenate([self.x[keep], self.smooth_x])
        y = np.concatenate([self.n_rel[keep] / n[keep], np.full(len(self.smooth_x), 0.5)])
        w = np.concatenate([n[keep], np.full(len(self.smooth_x), 2.0 * s)])
        return sys, x, y, w

    @functools.cached_property
    def pooled_centre(self) -> tuple[float, float]:
        r""":math:`(\bar A,\bar B)`: the mode of one calibration shared by every system (all cells pooled,
        the Normal(0, ``intercept_sd``/``slope_sd``) priors) — the centre of the pooled prior; (0, 0)
        without pooling."""
        if not self.prior.pooled:
            return 0.0, 0.0
        one = dataclasses.replace(self, system=np.zeros_like(self.system), smooth_system=np.zeros_like(
            self.smooth_system), systems=("pooled",), prior=dataclasses.replace(
            self.prior, pooled_intercept_sd=None, pooled_slope_sd=None))
        x = one.mode().x
        return float(x[0]), float(x[1])

    def _precisions(self):
        """Prior precisions and centres of A and B: (pa, pb, ca, cb)."""
        pr = self.prior
        sa, sb = (pr.pooled_intercept_sd, pr.pooled_slope_sd) if pr.pooled else (pr.intercept_sd, pr.slope_sd)
        pa = 0.0 if sa is None else 1.0 / sa ** 2
        pb = 0.0 if sb is None else 1.0 / sb ** 2
        ca, cb = self.pooled_centre
        return pa, pb, ca, cb

    def _per_system_logpost(self, A, B, rows) -> np.ndarray:
        sys, x, y, w = rows
        eta = A[sys] + B[sys] * x
        ll = w * (y * log_expit(eta) + (1 - y) * log_expit(-eta))
        pa, pb, ca, cb = self._precisions()
        return np.bincount(sys, ll, minlength=len(A)) - 0.5 * pa * (A - ca) ** 2 - 0.5 * pb * (B - cb) ** 2

    def log_posterior(self, A, B) -> float:
        """Log posterior (up to a constant)."""
        return float(self._per_system_logpost(np.asarray(A, float), np.asarray(B, float), self._rows()).sum())

    def mode(self, max_iter: int = 200, tol: float = 1e-12) -> Mode:
        S = len(self.systems)
        rows = self._rows()
        sys, x, y, w = rows
        pa, pb, ca, cb = self._precisions()
        A, B = np.full(S, ca), np.full(S, cb)
        lp = self._per_system_logpost(A, B, rows)
        active = np.ones(S, bool)
        it = 0

        def grad_hess(A, B):
            s = expit(A[sys] + B[sys] * x)
            sr, srx, sv, svx, svxx = platt_sums(sys, x, y, w, s, S)
            return sr - pa * (A - ca), srx - pb * (B - cb), sv + pa, svx, svxx + pb

        for it in range(1, max_iter + 1):  # noqa: B007
            gA, gB, hAA, hAB, hBB = grad_hess(A, B)
            dA, dB = _newton_step(gA, gB, hAA, hAB, hBB)
            dec = gA * dA + gB * dB
            dA[~active] = 0.0
            dB[~active] = 0.0
            t = np.ones(S)
            for _ in range(60):
                lp_new = self._per_system_logpost(A + t * dA, B + t * dB, rows)
                bad = ~(lp_new >= lp - 1e-12 * np.maximum(1.0, np.abs(lp)))  # NaN is bad too
                if not bad.any():
                    break
                t[bad] *= 0.5
            A, B, lp = A + t * dA, B + t * dB, lp_new
            active &= ~((dec < tol) | (np.maximum(np.abs(t * dA), np.abs(t * dB)) < tol))
            if not active.any():
                break
        gA, gB, hAA, hAB, hBB = grad_hess(A, B)
        blocks = tuple((np.array([j, S + j]), np.array([[hAA[j], hAB[j]], [hAB[j], hBB[j]]])) for j in range(S))
        return Mode(np.concatenate([A, B]), blocks, float(lp.sum()), it, not active.any())

    def build_model(self):
        """The same log posterior in PyMC (Binomial cells + smoothing Potential; A, B Flat or Normal)."""
        import pymc as pm
        import pytensor.tensor as pt

        n = self.n_rel + self.n_nonrel
        keep = n > 0
        integer = np.all(np.mod(self.n_rel[keep], 1) == 0) and np.all(np.mod(n[keep], 1) == 0)
        with pm.Model(coords=self.param_spec.coords) as model:
            pa, pb, ca, cb = self._precisions()
            A = pm.Flat("A", dims="system") if pa == 0 else pm.Normal("A", ca, pa ** -0.5, dims="system")
            B = pm.Flat("B", dims="system") if pb == 0 else pm.Normal("B", cb, pb ** -0.5, dims="system")
            sys, x = self.system[keep], self.x[keep]
            eta = A[sys] + B[sys] * x
            if integer:
                pm.Binomial("judged", n=n[keep].astype(np.int64), logit_p=eta,
                            observed=self.n_rel[keep].astype(np.int64))
            else:
                pm.Potential("judged", pt.sum(self.n_rel[keep] * -pt.softplus(-eta)
                                              + self.n_nonrel[keep] * -pt.softplus(eta)))
            if len(self.smooth_x) and self.prior.smoothing > 0:
                es = A[self.smooth_system] + B[self.smooth_system] * self.smooth_x
                pm.Potential("smoothing", self.prior.smoothing * pt.sum(-pt.softplus(-es) - pt.softplus(es)))
        return model

    def observed(self):
        """Cells holding judged documents: ``judged`` relevant of ``n`` judged, per (system, topic, rank) cell."""

        n = self.n_rel + self.n_nonrel
        keep = n > 0
        return Observed("judged", "cell", np.flatnonzero(keep), self.n_rel[keep], n[keep])

    def linear_predictor(self, params: dict) -> np.ndarray:
        keep = (self.n_rel + self.n_nonrel) > 0
        sys, x = self.system[keep], self.x[keep]
        A, B = np.asarray(params["A"]), np.asarray(params["B"])
        return A[..., sys] + B[..., sys] * x

    def prior_draws(self, size: int, rng: np.random.Generator):
        """A ~ Normal(centre, sd), B likewise (the pooled prior's centre and sds when pooled); None when
        either is flat (sd None)."""
        pa, pb, ca, cb = self._precisions()
        if pa == 0 or pb == 0:
            return None
        S = len(self.systems)
        return {"A": rng.normal(ca, pa ** -0.5, (size, S)), "B": rng.normal(cb, pb ** -0.5, (size, S))}
