r"""What would decide it: the expected number of top-up judgments of a held-out run that decide a pair.

A pair of runs not decided at α (:math:`\alpha\le P(\Delta<0)\le 1-\alpha` fails both ways) is often undecided
because one of them did not contribute to the judgments and its level of p is what the reuse prior leaves open
(:mod:`bayeval.relevance.reuse_prior`). A top-up of that run (:func:`bayeval.selection.topup.draw_topup`: one of
its unjudged documents a topic per round) learns the level. :func:`judgments_to_decide` says, by the model, how
many such judgments the pair is expected to need.

**The preposterior** (Raiffa & Schlaifer 1961; a Gaussian-linear approximation). Let
:math:`\theta=(g,\gamma,e_1,\ldots,e_S)` be the reuse prior's coordinates, :math:`\theta\sim N(m,\Sigma)` their
posterior (:class:`~bayeval.relevance.reuse_prior.HeldOutLevels`), and
:math:`J=\partial E[\Delta]/\partial\theta` the pair's sensitivity (finite differences of E[MAP] of the two runs
at the point p, the documents moved as the prior moves them). Then :math:`\Delta\approx c+J^\top\theta+\varepsilon`
with :math:`\mathrm{Var}\,\varepsilon=\sigma_\varepsilon^2=\mathrm{Var}[\Delta]-J^\top\Sigma J` (the uncertainty
the levels do not carry). One round of a top-up of run s judges one document of each of its topics, drawn as
:func:`~bayeval.selection.topup.draw_topup` draws; its Fisher information about θ is
:math:`I_s=\sum_t\sum_i\pi_{ti}\,p_i(1-p_i)\,z_iz_i^\top` (:math:`z_i=(h_i,x_i,w_{i\cdot})`, the documents' rows of
the prior, :math:`\pi_{ti}` the draw's probabilities). After k rounds
:math:`\Sigma_k=(\Sigma^{-1}+kI_s)^{-1}`, the pair's variance is :math:`V_k=J^\top\Sigma_kJ+\sigma_\varepsilon^2`
and its mean :math:`E[\Delta]_k` moves from :math:`E[\Delta]` as a Gaussian martingale with variance
:math:`\tau_k=J^\top(\Sigma-\Sigma_k)J` by round k. The pair is decided at the first round with
:math:`|E[\Delta]_k|\ge z_\alpha\sqrt{V_k}`; the expected number of judgments is the mean first-passage round
(times the run's topics), from ``paths`` simulated paths of that martingale, capped at ``max_rounds``.

For each undecided pair, each of its runs that did not contribute is tried; the one with the fewer expected
judgments is named (``topup_run``). Checked against top-ups of real judgments (the judgments' own draws, the pair
re-evaluated after each round) by ``studies/decide_check.py`` (docs/notes/calibration-record.md, "Where things stand").

References
----------
H. Raiffa, R. Schlaifer (1961). Applied Statistical Decision Theory. Harvard University Press (preposterior
analysis).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import expit, logit

from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError
from bayeval.expected import compare_systems, expected_measures
from bayeval.relevance.reuse_prior import level_weights
from bayeval.sampling.design import ap_prior

__all__ = ["DecideResult", "first_passage", "judgments_to_decide"]

_CLIP = 1e-6
_EPS = 0.05


@dataclass(frozen=True, eq=False)
class DecideResult:
    """Per pair of runs: decided at α or not, and for an undecided one the top-up expected to decide it.

    Attributes
    ----------
    frame : pandas.DataFrame
        ``run_a, run_b, p_less, decided, topup_run`` (the run to top up; empty when none can help),
        ``judgments`` (expected top-up judgments of that run to decide the pair, capped at the cap),
        ``decided_by_cap`` (probability that the top-up decides it within ``max_rounds`` rounds).
    alpha : float
    max_rounds : int
    """

    frame: pd.DataFrame
    alpha: float
    max_rounds: int

    def to_frame(self) -> pd.DataFrame:
        return self.frame.copy()


def _positions(data: RankData, runs) -> list:
    return [level_weights(tr, runs, len(data.systems)) for tr in data]


def _shifted(point, weights, column) -> list:
    """Point p with the log-odds of the held-out runs' documents moved by ``_EPS`` along coordinate ``column``
    (0: the shared level h, 1: the rank profile x, 2 + s: run s's level)."""
    out = []
    for p, (w, xw) in zip(point, weights, strict=True):
        z = w.sum(axis=1) if column == 0 else xw.sum(axis=1) if column == 1 else w[:, column - 2]
        on = z != 0
        q = np.array(p, dtype=np.float64, copy=True)
        if on.any():
            q[on] = expit(logit(np.clip(q[on], _CLIP, 1 - _CLIP)) + _EPS * z[on])
        out.append(q)
    return out


def _round_information(data: RankData, point, weights, s: int, depth: int, coords) -> tuple[np.ndarray, int]:
    """(Fisher information of one top-up round of run ``s`` about ``coords``, topics with a frame)."""
    info = np.zeros((len(coords), len(coords)))
    topics = 0
    for tr, p, (w, xw) in zip(data, point, weights, strict=True):
        r = np.asarray(tr.ranks)[:, s]
        frame = np.flatnonzero((r > 0) & (r <= depth) & ~np.asarray(tr.judged))
        if not len(frame):
            continue
        a = ap_prior(r[frame][:, None].astype(np.int64), depth)
        pi = a / a.sum()
        z = np.column_stack([w[frame].sum(axis=1), xw[frame].sum(axis=1), w[frame]])[:, coords]
        q = np.clip(np.asarray(p, dtype=np.float64)[frame], _CLIP, 1 - _CLIP)
        info += (z * (pi * q * (1 - q))[:, None]).T @ z
        topics += 1
    return info, topics


def first_passage(mean: float, prior_var: float, post_var, eps_var: float, alpha: float, paths: int,
                  rng: np.random.Generator) -> tuple[float, float]:
    r"""(expected rounds to decide, probability of deciding within the rounds given) of one pair.

    The pair's Δ is :math:`J^\top\theta+\varepsilon` with :math:`\mathrm{Var}(J^\top\theta)` =
    ``prior_var`` now and ``post_var[k-1]`` after k rounds, :math:`\mathrm{Var}\,\varepsilon` = ``eps_var``;
    its posterior mean after k rounds is E[Δ] = ``mean`` plus a Gaussian martingale of variance
    ``prior_var - post_var[k-1]`` (the preposterior distribution), and the pair is decided at the first k with
    :math:`|E_k[\Delta]|\ge z_\alpha\sqrt{V_k}`, :math:`V_k` = ``post_var[k-1] + eps_var``. A path not decided
    by the last round counts as the last round.

    Examples
    --------
    >>> r, by = first_passage(0.0, 1.0, np.array([0.5, 0.2, 0.1]), 0.01, 0.95, 20000, np.random.default_rng(0))
    >>> 1.0 < r < 3.0 and 0.5 < by < 1.0
    True
    """
    post_var = np.asarray(post_var, dtype=np.float64)
    tau = np.maximum.accumulate(np.maximum(prior_var - post_var, 0.0))
    inc = np.diff(np.concatenate([[0.0], tau]))
    walk = mean + np.cumsum(rng.standard_normal((int(paths), len(tau))) * np.sqrt(inc), axis=1)
    hit = np.abs(walk) >= stats.norm.ppf(alpha) * np.sqrt(post_var + eps_var)[None, :]
    first = np.where(hit.any(axis=1), hit.argmax(axis=1) + 1, len(tau))
    return float(first.mean()), float(hit.any(axis=1).mean())


def judgments_to_decide(data: RankData, estimate, *, alpha: float = 0.95, measure: str = "AP", depth: int = 100,
                        max_rounds: int = 10, paths: int = 4000, seed=0, comparison=None) -> DecideResult:
    r"""The expected number of top-up judgments that decides each undecided pair (module docstring).

    Parameters
    ----------
    data : RankData
        Aligned with ``estimate`` (as given to :func:`bayeval.expected.compare_systems`).
    estimate : RelevanceEstimate
        With the reuse prior's levels (``estimate.held_out``; a model with ``reuse_*`` set).
    alpha : float in (0.5, 1)
        A pair is decided when :math:`P(\Delta<0)\ge\alpha` or :math:`\le 1-\alpha`.
    measure : str
        The measure whose mean is compared (default ``"AP"``: MAP).
    depth : int
        The top-up draws within each run's top ``depth`` (as ``bayeval judge topup`` with a campaign of that depth).
    max_rounds : int
        At most this many rounds (judgments per topic) of one run; beyond, the pair counts as not decidable by a
        top-up (``judgments`` is the cap, ``decided_by_cap`` < 1).
    paths : int
        Simulated paths of the preposterior mean.
    seed : int or Generator
    comparison : PairwiseComparison, optional
        ``compare_systems(data, estimate, measure=measure, method="delta")`` if already computed.

    Returns
    -------
    DecideResult

    Raises
    ------
    BayevalInputError
        When ``estimate`` has no held-out levels (its model has no reuse prior) or an argument is out of range.
    """
    levels = getattr(estimate, "held_out", None)
    if levels is None:
        raise BayevalInputError("estimate: its model has no reuse prior (held_out levels): fit one whose "
                                "[held_out_runs] sets reuse_* (the default model does)")
    if not 0.5 < float(alpha) < 1:
        raise BayevalInputError(f"alpha: must lie in (0.5, 1), got {alpha!r}")
    for name, v in (("max_rounds", max_rounds), ("paths", paths), ("depth", depth)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise BayevalInputError(f"{name}: a positive integer, got {v!r}")
    cmp = comparison if comparison is not None else compare_systems(data, estimate, measure=measure, method="delta",
                                                                     progress=False)
    rng = np.random.default_rng(seed)
    S = len(data.systems)
    held = np.ones(S, bool)
    held[list(levels.contributing)] = False
    m, V, pl = cmp.all_expected, np.maximum(cmp.all_variance, 1e-300), cmp.all_p_less
    decided = (pl >= alpha) | (pl <= 1 - alpha)
    a_idx, b_idx = np.asarray(cmp.index_a), np.asarray(cmp.index_b)
    need = sorted({int(r) for k in np.flatnonzero(~decided) for r in (a_idx[k], b_idx[k]) if held[r]})
    rows_run = np.full(len(m), "", dtype=object)
    rows_n = np.full(len(m), np.nan)
    rows_by = np.full(len(m), np.nan)
    rows_n[decided], rows_by[decided] = 0.0, 1.0
    if need:
        point = [np.asarray(p, dtype=np.float64) for p in estimate.arrays_for(None)]
        weights = _positions(data, levels.contributing)
        coords = [c for c in range(S + 2) if levels.cov[c, c] > 0]
        base = expected_measures(data, point, measures=[measure], method="delta", progress=False).all_expected[0]
        jac = np.zeros((S, len(coords)))  # d E[measure_r] / d theta_c
        for k, c in enumerate(coords):
            if c >= 2 and not held[c - 2]:
                continue
            e = expected_measures(data, _shifted(point, weights, c), measures=[measure], method="delta",
                                  progress=False).all_expected[0]
            jac[:, k] = (e - base) / _EPS
        cov = levels.cov[np.ix_(coords, coords)]
        prec = np.linalg.inv(cov)
        best = {}
        for s in need:
            info, topics = _round_information(data, point, weights, s, int(depth), coords)
            if topics == 0:
                continue
            covs = [np.linalg.inv(prec + k * info) for k in range(1, int(max_rounds) + 1)]
            for k in np.flatnonzero(~decided):
                if s not in (a_idx[k], b_idx[k]):
                    continue
                J = jac[a_idx[k]] - jac[b_idx[k]]
                total = float(J @ cov @ J)
                rounds, by = first_passage(float(m[k]), total, np.array([float(J @ c @ J) for c in covs]),
                                           max(float(V[k]) - total, 1e-12), alpha, int(paths), rng)
                n = rounds * topics
                if k not in best or n < best[k][1]:
                    best[k] = (data.systems[s], n, by)
        for k, (run, n, by) in best.items():
            rows_run[k], rows_n[k], rows_by[k] = run, n, by
    names = np.asarray(data.systems, dtype=object)
    frame = pd.DataFrame({"run_a": names[a_idx], "run_b": names[b_idx], "p_less": pl, "decided": decided,
                          "topup_run": rows_run, "judgments": rows_n, "decided_by_cap": rows_by})
    return DecideResult(frame, float(alpha), int(max_rounds))
