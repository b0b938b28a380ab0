r"""The corrections of p after the hierarchical model, on the documents no contributing run retrieves, in one order.

The hierarchical model (:mod:`bayeval.relevance.hierarchical`) learns p from the judged documents; its p of an
unjudged document that no contributing run retrieves (:func:`bayeval.data.coverage.contributing_runs`; a *target*
document) rests on runs the judgments did not cover. Four corrections of such documents, each off unless its
configuration's ``[held_out_runs]`` table (:class:`~bayeval.relevance.config.HeldOutRunsPrior`) turns it on, are applied
to the model's draws of p (and its point p) in the order of :data:`ORDER`:

1. ``calibration_map`` (``calibration_map = "crossfit"``): the target documents' log-odds pass through a map learned
   out of fold (:func:`fit_calibration_map`: the model refitted on each fold of the contributing runs, scored on
   the judged documents only the other folds retrieve), one draw of the map per draw of p
   (:mod:`bayeval.relevance.crossfit`); it acts on the log-odds
   :math:`\eta` of each topic before :math:`p=\sigma(\eta)`, the others on p;
2. ``level`` (``run_level_sd`` > 0): each run's level of p on its target documents, learned from how its judged
   documents compare with the model's p (:mod:`bayeval.relevance.run_level`);
3. ``shift`` (``run_shift_sd`` > 0): a per-run log-odds spread per draw, E[p] kept, so the point p is unchanged
   (:mod:`bayeval.relevance.run_shift`);
4. ``reuse_prior`` (``reuse_*``): the reuse prior of the held-out runs' levels, updated by a top-up's judged draws
   (:mod:`bayeval.relevance.reuse_prior`); it returns those levels.

They are the first of what happens to p after a model's own fit; the estimator then applies the steps of
:data:`bayeval.relevance.estimate.AFTER_MODEL` (p beyond the judged depth, the automatic assessors' labels). The
extrapolation effect of ``extrapolation = "unseen_run"`` (``[hierarchy]``) is not among them: it is a random effect
of the model's linear predictor, whose variance enters the probit scaling :math:`\kappa_i` of every draw (module
notes of :mod:`bayeval.relevance.hierarchical`), not a transform of the model's p.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logit

from bayeval.data.coverage import contributing_runs
from bayeval.data.rankdata import RankData
from bayeval.relevance.config import HeldOutRunsPrior
from bayeval.relevance.crossfit import OutOfFoldMap, fit_map, out_of_fold_pairs
from bayeval.relevance.reuse_prior import HeldOutPrior, ReusePrior
from bayeval.relevance.run_level import HeldOutLevel
from bayeval.relevance.run_shift import HeldOutShift

__all__ = ["ORDER", "HeldOutCorrections", "fit_calibration_map"]

#: The corrections in the order they apply (module notes).
ORDER = ("calibration_map", "level", "shift", "reuse_prior")

_CLIP = 1e-6


@dataclass(frozen=True)
class HeldOutCorrections:
    """The four corrections of :data:`ORDER` of one fit (each off unless its configuration turns it on).

    Attributes
    ----------
    calibration_map : OutOfFoldMap or None
        The cross-fitted map (:mod:`bayeval.relevance.crossfit`), or None.
    level : HeldOutLevel
    shift : HeldOutShift
    reuse_prior : HeldOutPrior
    """

    calibration_map: object
    level: HeldOutLevel
    shift: HeldOutShift
    reuse_prior: HeldOutPrior

    @classmethod
    def build(cls, data: RankData, prior: HeldOutRunsPrior, coverage_depth: int,
              calibration_map: OutOfFoldMap | None = None) -> HeldOutCorrections:
        """The corrections ``prior`` (a configuration's ``[held_out_runs]``) turns on, on the documents no contributing
        run retrieves: the calibration map's runs (:func:`fit_calibration_map`), else
        :func:`~bayeval.data.coverage.contributing_runs` at ``coverage_depth`` (found only when a correction needs
        them)."""
        found = []

        def contributing() -> tuple:
            if not found:
                runs = calibration_map.runs if calibration_map is not None else \
                    contributing_runs(data, coverage_depth)
                found.append(tuple(runs))
            return found[0]

        level_sd, shift_sd = float(prior.run_level_sd), float(prior.run_shift_sd)
        reuse = ReusePrior(prior.reuse_mean, prior.reuse_common_sd, prior.reuse_run_sd, prior.reuse_run_df,
                           prior.reuse_slope_mean, prior.reuse_slope_sd)
        return cls(calibration_map,
                   HeldOutLevel(level_sd, contributing() if level_sd else (), prior.run_level_spread),
                   HeldOutShift(shift_sd, contributing() if shift_sd else ()),
                   HeldOutPrior(reuse, contributing() if reuse.active else ()))

    def map_draws(self, size: int, rng: np.random.Generator):
        """One draw of the calibration map per draw of p, shared by every topic (None without a map)."""
        return self.calibration_map.draws(size, rng) if self.calibration_map is not None else None

    def log_odds(self, tr, eta: np.ndarray, ab) -> np.ndarray:
        """Step 1 on the draws of one topic: the target documents' log-odds ``eta`` (draws, n_t) through the map
        draws ``ab`` (:meth:`map_draws`), in place."""
        if ab is not None:
            tg = self.calibration_map.targets(tr)
            eta[:, tg] = self.calibration_map.apply(eta[:, tg], ab)
        return eta

    def draws(self, data: RankData, draws: tuple, rng: np.random.Generator, evidence=None) -> tuple:
        """Steps 2-4 on the draws of p (per topic (draws, n_t)): ``(draws, levels)``, ``levels`` the reuse prior's
        held-out levels (:class:`~bayeval.relevance.reuse_prior.HeldOutLevels` or None)."""
        draws = self.level.apply(data, draws, rng)
        draws = self.shift.apply(data, draws, rng)
        return self.reuse_prior.apply(data, draws, rng, evidence)

    def point(self, data: RankData, p: tuple, evidence=None) -> tuple:
        """The four steps on the point p (the map integrated out; the shifts keep E[p]): ``(p, levels)``."""
        if self.calibration_map is not None:
            p = tuple(self._mapped_point(pt, tr) for pt, tr in zip(p, data, strict=True))
        p = self.level.point(data, p)
        return self.reuse_prior.point(data, p, evidence)

    def _mapped_point(self, p, tr) -> np.ndarray:
        """Point p of topic ``tr`` with the target documents' log-odds through the map (integrated out)."""
        tg = self.calibration_map.targets(tr)
        out = np.array(p, dtype=np.float64, copy=True)
        out[tg] = self.calibration_map.point(logit(np.clip(out[tg], _CLIP, 1 - _CLIP)))
        return out


def fit_calibration_map(data: RankData, prior: HeldOutRunsPrior, coverage_depth: int, refit, model_p=None):
    """Step 1's map (``calibration_map = "crossfit"``; :mod:`bayeval.relevance.crossfit`), or None when it is off.

    Parameters
    ----------
    data : RankData
    prior : HeldOutRunsPrior
        The configuration's ``[held_out_runs]``: folds, the map's priors, its target documents and level.
    coverage_depth : int
        The contributing runs are those whose top ``coverage_depth`` is judged
        (:func:`~bayeval.data.coverage.contributing_runs`).
    refit : callable
        ``refit(data) -> p`` (per topic): the model refitted on ``data`` (one fold's judgments) without the map,
        its point p scored on the documents only the other folds retrieve.
    model_p : callable, optional
        ``model_p() -> p`` (per topic): the model's own point p of ``data``, its other corrections applied but no
        map; needed with ``crossfit_level = "kept"``, where the map's intercept is set so that the target documents'
        mean p stays this one's (:meth:`~bayeval.relevance.crossfit.OutOfFoldMap.keep_level`).

    Returns
    -------
    OutOfFoldMap or None
    """
    if prior.calibration_map == "none":
        return None
    runs = contributing_runs(data, coverage_depth)
    ell, y, tp = out_of_fold_pairs(data, runs, prior.crossfit_folds, refit)
    cmap = fit_map(ell, y, tp, intercept_sd=prior.crossfit_intercept_sd, slope_sd=prior.crossfit_slope_sd,
                   runs=runs, target=prior.crossfit_target)
    if prior.crossfit_level != "kept":
        return cmap
    p = model_p()  # the level to keep: the model's own p of the target documents
    tg = [cmap.targets(tr) for tr in data]
    pt = np.concatenate([q[k] for q, k in zip(p, tg, strict=True)]) if tg else np.zeros(0)
    return cmap.keep_level(logit(np.clip(pt, _CLIP, 1 - _CLIP)), pt)
