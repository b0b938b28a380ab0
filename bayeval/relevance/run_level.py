r"""Held-out run levels: a per-run level of p on the documents only held-out runs retrieve, learned from how the run
does on its judged documents.

The judgments of a reused collection were made on the documents of the *contributing* runs
(:func:`bayeval.data.coverage.contributing_runs`). A *target* document (unjudged, retrieved by no
contributing run; :func:`bayeval.data.coverage.target_documents`) gets the level of p the model sets for
documents only held-out runs retrieve, the same for every run. Its error differs between runs: a good run whose
relevant documents are largely its own (a manual run) is set too low, a poor one too high
(docs/notes/calibration-record.md,
revision 5: on TREC-8, E[MAP] ÷ MAP 0.77 for manual runs, 1.19 for automatic ones). The held-out run shifts of
:mod:`bayeval.relevance.run_shift` keep E[p] and cannot move that level; this component does move it.

**Evidence.** A held-out run s retrieves some judged documents too (those the contributing runs also
retrieve), :math:`J_s=\{i\ \text{judged},\ i\ \text{retrieved by}\ s\}`, with judgments :math:`y_i` and the
model's predictive probability :math:`\bar p_i` (the mean of the posterior draws before the judgment replaces
it). If s's judged documents are relevant more often than the model predicts, s is better than the model
assumes, and so — the component's assumption — are its own documents. The run's level :math:`\delta_s` is the
log-odds offset of a one-parameter logistic regression on :math:`J_s` with :math:`\mathrm{logit}\,\bar p_i` as
offset,

.. math::

    y_i\sim\mathrm{Bernoulli}\bigl(\sigma(\mathrm{logit}\,\bar p_i+\delta_s)\bigr),\ i\in J_s,\qquad
    \delta_s\sim N(0,\tau^2),

**shrunk by a hierarchical prior across runs**: :math:`\tau` is set by maximising the approximate marginal
likelihood of the runs' levels, :math:`\prod_s N(\hat\delta_s;0,\hat v_s+\tau^2)` (the Normal approximation
of each run's likelihood at its weakly penalised maximum :math:`\hat\delta_s` with variance :math:`\hat v_s`),
times a half-normal prior on :math:`\tau` of scale ``sd`` (``[held_out_runs] run_level_sd``; empirical Bayes as
in Efron & Morris 1975). Given :math:`\hat\tau`, each run's posterior is its Laplace approximation
:math:`N(\tilde\delta_s,\tilde v_s)`, :math:`\tilde v_s=(\sum_{J_s}p'_i(1-p'_i)+\hat\tau^{-2})^{-1}` with
:math:`p'_i=\sigma(\mathrm{logit}\,\bar p_i+\tilde\delta_s)` (Newton on the concave log posterior); a run with few
judged documents keeps a level near 0, and a run with none gets the prior :math:`N(0,\hat\tau^2)`.

**Fixed spread** (``spread="fixed"``, ``[held_out_runs] run_level_spread``): :math:`\tau` is ``sd`` itself, not
learned; each run's level is its own Laplace posterior under :math:`N(0,\text{sd}^2)`, with no pooling
across runs. With a few held-out runs the empirical-Bayes :math:`\hat\tau` is often 0 although the runs'
unshrunk levels still carry their target documents' level (docs/notes/calibration-record.md, revision 7: on a synthetic
collection the unshrunk level correlates +0.69 within a trial with the true level, the shrunk one +0.57).

**The level.** In each posterior draw d, :math:`\delta_{ds}\sim N(\tilde\delta_s,\tilde v_s)` independently
over runs and draws, and a target document moves with the runs that retrieve it, weighted as the run effect of
:mod:`bayeval.relevance.hierarchical`, :math:`w_{is}=\mathbb 1[s\in S_i]/|S_i|`
(:func:`bayeval.relevance.run_shift.shift_weights`):

.. math::

    \eta'_{di}=\eta_{di}+\sum_s w_{is}\,\delta_{ds}.

No :math:`\kappa` here: unlike the shift, the level is meant to move E[p]. Judged documents and documents a
contributing run retrieves are untouched; with ``sd`` = 0 the draws are returned unchanged.

**Point p** (a fit without draws, :meth:`HeldOutLevel.point`): the levels are learned from the point p of the
judged documents, and a target document's p becomes the expectation over the levels' posterior by the probit
approximation (MacKay 1992), :math:`\sigma\bigl((\mathrm{logit}\,p_i+m_i)/\sqrt{1+\pi v_i/8}\bigr)` with
:math:`m_i=\sum_sw_{is}\tilde\delta_s`, :math:`v_i=\sum_sw_{is}^2\tilde v_s`, so that it agrees with the
mean of the draws.

References
----------
D. J. C. MacKay (1992). The evidence framework applied to classification networks. Neural Computation 4(5).
B. Efron, C. Morris (1975). Data analysis using Stein's estimator and its generalizations. JASA 70(350).
B. Carterette, J. Allan, R. Sitaraman (2007). Robust test collections for retrieval evaluation. SIGIR.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit, log_expit, logit

from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError
from bayeval.relevance.run_shift import check_scale, check_topic_arrays, move_targets

__all__ = ["SPREADS", "HeldOutLevel", "check_spread", "judged_evidence", "run_levels"]

_CLIP = 1e-6
_WEAK_SD = 10.0  # the penalty that keeps a run's maximum finite when all its judged documents agree
_TAU_GRID = np.linspace(0.0, 5.0, 501)


def judged_evidence(data: RankData, p_mean) -> tuple:
    r"""Per run s, the judged documents it retrieves over all topics: (offsets :math:`\mathrm{logit}\,\bar p_i`,
    judgments :math:`y_i`) as two lists of arrays, one pair per run.

    Parameters
    ----------
    data : RankData
    p_mean : sequence of arrays
        Per topic, the model's predictive p of every document (n_t,).
    """
    S = len(data.systems)
    offs: list = [[] for _ in range(S)]
    ys: list = [[] for _ in range(S)]
    for tr, p in zip(data, p_mean, strict=True):
        judged = np.asarray(tr.judged)
        if not judged.any():
            continue
        member = np.asarray(tr.ranks)[judged][:, :S] > 0
        o = logit(np.clip(np.asarray(p, dtype=np.float64)[judged], _CLIP, 1 - _CLIP))
        y = np.asarray(tr.relevant)[judged].astype(np.float64)
        for s in range(S):
            m = member[:, s]
            if m.any():
                offs[s].append(o[m])
                ys[s].append(y[m])
    cat = [np.concatenate(v) if v else np.zeros(0) for v in offs]
    return cat, [np.concatenate(v) if v else np.zeros(0) for v in ys]


SPREADS = ("empirical_bayes", "fixed")


def check_spread(spread) -> str:
    """``spread`` after checking it is one of :data:`SPREADS` (how the levels' spread τ is set)."""
    if spread not in SPREADS:
        raise BayevalInputError(f"spread: must be one of {', '.join(map(repr, SPREADS))}, got {spread!r}")
    return spread


def _posterior(o: np.ndarray, y: np.ndarray, prior_sd: float, iters: int = 50) -> tuple:
    r"""Mode and Laplace variance of :math:`\delta` in :math:`y\sim\mathrm{Bern}(\sigma(o+\delta))`,
    :math:`\delta\sim N(0,\text{prior\_sd}^2)` (Newton on the concave log posterior, each step halved until
    the log posterior does not fall: a full step from 0 can overshoot without end when the mode lies far out,
    e.g. 6 relevant documents of 129 where p sums to 0.6)."""
    if prior_sd <= 0:
        return 0.0, 0.0
    prec0 = 1.0 / prior_sd ** 2

    def logpost(d):
        return float(np.sum(y * log_expit(o + d) + (1 - y) * log_expit(-(o + d)))) - 0.5 * prec0 * d * d

    d = 0.0
    cur = logpost(d)
    for _ in range(iters):
        p = expit(o + d)
        g = float(np.sum(y - p)) - prec0 * d
        h = float(np.sum(p * (1 - p))) + prec0
        step = g / h
        new = logpost(d + step)
        while new < cur - 1e-12 * max(1.0, abs(cur)) and abs(step) > 1e-12:
            step *= 0.5
            new = logpost(d + step)
        d, cur = d + step, new
        if abs(step) < 1e-10:
            break
    p = expit(o + d)
    return d, 1.0 / (float(np.sum(p * (1 - p))) + prec0)


def run_levels(offsets, judgments, sd: float, *, spread: str = "empirical_bayes") -> tuple:
    r"""The runs' levels: posterior means :math:`\tilde\delta_s`, variances :math:`\tilde v_s` and the
    scale :math:`\hat\tau` (module docstring): empirical Bayes, or ``sd`` itself with ``spread="fixed"``.

    Parameters
    ----------
    offsets, judgments : sequences of arrays
        Per run, :math:`\mathrm{logit}\,\bar p_i` and :math:`y_i` of its judged documents
        (:func:`judged_evidence`).
    sd : float
        Scale of the half-normal prior on :math:`\tau` (> 0); with ``spread="fixed"``, :math:`\tau` itself.
    spread : {"empirical_bayes", "fixed"}
        How :math:`\tau` is set: its mode given the runs' evidence (levels shrunk across runs), or ``sd``
        (each run's level from its own evidence under :math:`N(0,\text{sd}^2)`).

    Returns
    -------
    (mean (S,), var (S,), tau)

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> o = [np.full(200, -1.0) for _ in range(6)]
    >>> y = [(rng.random(200) < expit(-1.0 + d)).astype(float) for d in (-1, -1, 0, 0, 1, 1)]
    >>> m, v, tau = run_levels(o, y, 1.0)
    >>> bool(m[0] < -0.5 < 0.5 < m[-1]), bool(0.4 < tau < 1.6)
    (True, True)
    """
    if isinstance(sd, bool) or not isinstance(sd, (int, float, np.floating)) or not np.isfinite(sd) or sd <= 0:
        raise BayevalInputError(f"sd: must be a positive number, got {sd!r}")
    check_spread(spread)
    if len(offsets) != len(judgments):
        raise BayevalInputError(f"judgments: expected one array per run ({len(offsets)}), got {len(judgments)}")
    S = len(offsets)
    mle = np.zeros(S)
    var = np.full(S, np.inf)
    for s in range(S):
        if len(offsets[s]):
            mle[s], var[s] = _posterior(np.asarray(offsets[s]), np.asarray(judgments[s]), _WEAK_SD)
    seen = np.isfinite(var)
    if spread == "fixed":
        tau = float(sd)
    elif seen.any():
        tot = var[seen][None, :] + _TAU_GRID[:, None] ** 2
        ll = -0.5 * np.sum(np.log(tot) + mle[seen][None, :] ** 2 / tot, axis=1) - 0.5 * (_TAU_GRID / sd) ** 2
        tau = float(_TAU_GRID[np.argmax(ll)])
    else:
        tau = 0.0
    mean = np.zeros(S)
    post = np.zeros(S)
    for s in range(S):
        if tau > 0 and len(offsets[s]):
            mean[s], post[s] = _posterior(np.asarray(offsets[s]), np.asarray(judgments[s]), tau)
        else:
            post[s] = tau ** 2  # no evidence: the prior
    return mean, post, tau


@dataclass(frozen=True)
class HeldOutLevel:
    r"""Per-run levels :math:`\delta_s` of the log-odds of target documents, learned from the run's judged
    documents and shrunk across runs (module docstring).

    Attributes
    ----------
    sd : float
        Scale ≥ 0 of the half-normal prior on the levels' spread :math:`\tau` (0: no level).
    runs : tuple of int
        The contributing runs (indices into ``data.systems``).
    spread : {"empirical_bayes", "fixed"}
        How the levels' spread τ is set (:func:`run_levels`).

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=2, n_systems=4, n_docs=60, depth=10, judged_depth=3, seed=1)
    >>> data = RankData.build(col.runs, col.judgments, depth=10)
    >>> p = [np.full((50, tr.n_docs), 0.2) for tr in data]
    >>> out = HeldOutLevel(0.0, (0,)).apply(data, p, np.random.default_rng(0))
    >>> all(a is b for a, b in zip(out, p))
    True
    """

    sd: float
    runs: tuple
    spread: str = "empirical_bayes"

    def __post_init__(self) -> None:
        check_scale(self.sd)
        check_spread(self.spread)
        object.__setattr__(self, "runs", tuple(int(s) for s in self.runs))

    def levels(self, data: RankData, draws) -> tuple:
        """(mean (S,), var (S,), tau) of the runs' levels given the draws of p (:func:`run_levels`)."""
        p_mean = [np.asarray(d).mean(axis=0, dtype=np.float64) for d in draws]
        o, y = judged_evidence(data, p_mean)
        return run_levels(o, y, float(self.sd), spread=self.spread)

    def point(self, data: RankData, p) -> tuple:
        r"""Point p (per topic (n_t,)) with the levels integrated out on target documents (module docstring,
        "Point p"); the input itself when ``sd`` is 0."""
        check_topic_arrays(data, p, "p")
        if self.sd == 0 or len(p) == 0:
            return tuple(p)
        o, y = judged_evidence(data, p)
        mean, var, _ = run_levels(o, y, float(self.sd), spread=self.spread)
        return move_targets(data, p, self.runs,
                            lambda eta, wt: (eta + wt @ mean) / np.sqrt(1.0 + np.pi / 8.0 * ((wt ** 2) @ var)))

    def apply(self, data: RankData, draws, rng: np.random.Generator) -> tuple:
        r"""The draws of p (per topic (n_draws, n_t)) with :math:`\sigma(\eta_{di}+\sum_sw_{is}\delta_{ds})` on
        target documents, :math:`\delta_{ds}\sim N(\tilde\delta_s,\tilde v_s)` drawn from ``rng``; the rest as
        given (the input itself when ``sd`` is 0)."""
        check_topic_arrays(data, draws, "draws")
        if self.sd == 0 or len(draws) == 0:
            return tuple(draws)
        mean, var, _ = self.levels(data, draws)
        K = np.asarray(draws[0]).shape[0]
        delta = mean[None, :] + rng.standard_normal((K, len(data.systems))) * np.sqrt(var)[None, :]
        return move_targets(data, draws, self.runs, lambda eta, wt: eta + delta @ wt.T)
