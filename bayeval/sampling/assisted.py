"""Model-assisted (prediction-powered) estimates of AP and P@k: a model's predictions for every pooled document,
corrected by a random sample (:func:`assisted_measures`).

The model makes the estimates sharp; the random sample keeps them unbiased whatever the model: each pooled
document's label is replaced by ``z_d = λ p_d + I_d (x_d - λ p_d) / π_d`` (the difference estimator of
Särndal, Swensson & Wretman 1992 when ``λ = 1``; statAP when ``λ = 0``; prediction-powered inference with a
tuned weight, Angelopoulos et al. 2023, in between). Variances, covariances between runs (so paired
differences, where the common sample cancels) and ``P(Δ < 0)`` are design-based: they come from the sampling,
not from the model. Formulas: docs/sampling.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from bayeval.data.probabilities import RelevanceProbabilities
from bayeval.data.rankdata import RankData
from bayeval.data.run import Run, RunSet
from bayeval.data.sample import StratifiedSample
from bayeval.errors import BayevalInputError
from bayeval.sampling._assisted_kernels import assisted_topic, tuned_weight
from bayeval.sampling._oracle_kernels import ap_derivatives
from bayeval.sampling.statistical import StatEvaluation

__all__ = ["TUNINGS", "VARIANCES", "AssistedEvaluation", "assisted_measures"]

#: AP's variance estimates :func:`assisted_measures` offers (docs/sampling.md compares them).
VARIANCES = ("jackknife", "own-label", "linearised")
#: Where the tuned weight takes each sampled document's derivatives (``tuning`` of :func:`assisted_measures`).
TUNINGS = ("corrected", "model")


@dataclass(frozen=True)
class AssistedEvaluation:
    """Model-assisted estimates with design-based variances.

    Attributes
    ----------
    systems, topics, measures : tuple of str
        ``measures``: ``AP``, ``P{k}`` …
    values, variances : dict of str to ndarray, shape (S, T)
        Per-topic estimates and variance estimates (NaN where a run has no result for the topic).
    covariance : dict of str to ndarray, shape (S, S)
        Estimated covariance of the runs' means over topics (each run averaged over the topics it has).
    weight : float
        The weight ``λ`` given to the predictions (one for all topics; a tuned one is then shrunk per topic
        by ``m_t / (m_t + shrink)``, see :func:`assisted_measures`).
    informative : ndarray of bool, shape (T,)
        Topics whose ``R̂`` is positive. AP's mean is taken over these (see ``empty`` in
        :func:`assisted_measures`); all True when ``empty = "zero"``.
    unclipped : dict of str to ndarray, shape (S, T), optional
        The per-topic estimates before their projection onto [0, 1] (NaN where a run has no result): what the
        projection took away, for a study of where the bias comes from (docs/sampling.md).
    """

    systems: tuple[str, ...]
    topics: tuple[str, ...]
    measures: tuple[str, ...]
    values: dict[str, np.ndarray]
    variances: dict[str, np.ndarray]
    covariance: dict[str, np.ndarray]
    weight: float
    informative: np.ndarray
    unclipped: dict[str, np.ndarray] | None = None

    def mean(self, measure: str) -> tuple[np.ndarray, np.ndarray]:
        """``(mean over topics, its variance estimate)``, shape (S,) each; AP's over the informative topics."""
        vals = self.values[measure]
        has = ~np.isnan(vals)
        if measure == "AP":
            has &= self.informative[None, :]
        return np.where(has, vals, 0.0).sum(axis=1) / np.maximum(has.sum(axis=1), 1), \
            np.diag(self.covariance[measure]).copy()

    #: Normal ``level`` interval of each run's mean (estimate ± z · standard error), as statAP's.
    interval = StatEvaluation.interval

    def differences(self, measure: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(Δ, se, P(Δ < 0))`` for every ordered pair, shape (S, S) each: ``Δ[a, b] = mean_a - mean_b``,
        ``se² = C_aa + C_bb - 2 C_ab`` (paired: the shared sample cancels), ``P(Δ < 0) = Φ(-Δ / se)``
        (0.5 on the diagonal; 0 or 1 where ``se = 0``)."""
        m, _ = self.mean(measure)
        c = self.covariance[measure]
        d = m[:, None] - m[None, :]
        var = np.maximum(np.diag(c)[:, None] + np.diag(c)[None, :] - 2 * c, 0.0)
        se = np.sqrt(var)
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.where(se > 0, stats.norm.cdf(-d / np.where(se > 0, se, 1.0)), (d < 0) + 0.5 * (d == 0))
        return d, se, p

    #: Long frame ``run, topic, measure, value, se``: the same layout as statAP's (one piece of code for both).
    to_frame = StatEvaluation.to_frame


def assisted_measures(runs: RunSet | Sequence[Run], sample: StratifiedSample,
                      predictions: RelevanceProbabilities | None, *, weight: float | None = None,
                      default: float = 0.0, inclusion: Mapping[str, np.ndarray] | None = None,
                      cutoffs: tuple[int, ...] = (10, 30, 100), depth: int = 1000,
                      relevance_level: int = 1, shrink: float = 50.0, empty: str = "impute",
                      variance: str = "jackknife", tuning: str = "corrected",
                      expected_draws: Mapping[str, float] | None = None) -> AssistedEvaluation:
    """Model-assisted AP and P@k of every run, with design-based variances and covariances.

    Parameters
    ----------
    runs : RunSet or sequence of Run
    sample : StratifiedSample
        The pool (every document that could have been sampled) and the sampled judgments.
    predictions : RelevanceProbabilities or None
        The model's probability of relevance of each pooled document (``default`` where not listed);
        ``None`` predicts ``default`` everywhere.
    weight : float in [0, 1], optional
        ``λ``; default: tuned, one for all topics, to minimise the summed variance of the runs' AP
        (1: difference estimator, 0: statAP).
    inclusion : mapping topic -> ndarray, optional
        Each pooled document's inclusion probability, aligned with ``sample[topic].docnos``; default the
        stratum's sampling rate ``n_c / N_c``. Sampling is taken to be Poisson (independent draws).
    cutoffs, depth, relevance_level
        P@k cut-offs; ranks kept; the least grade counted relevant.
    shrink : float >= 0
        With a tuned weight, topic t uses ``λ_t = λ · m_t / (m_t + shrink)``, ``m_t = Σ_d π_d`` its expected
        number of draws: a design quantity, so ``z`` stays unbiased, while a topic with few draws leans on the
        sample alone (50: chosen on Robust 2003, docs/sampling.md). Ignored when ``weight`` is given.
    empty : {"impute", "zero"}
        A topic whose ``R̂`` is 0 (no sampled relevant document and no positive prediction left) has no AP
        estimate: AP = N/R is 0/0 there. ``"zero"`` counts its AP as 0 with variance 0 (statAP's convention,
        biased downwards and overconfident when many topics are empty, as at small budgets). ``"impute"``
        (default) takes MAP over the T_I informative topics of the T, as if the T_E = T - T_I empty ones had
        been missed at random (finite-population sampling of topics without replacement), adding their
        share of the between-topic spread to the covariance:
        ``Cov̂(MAP_a, MAP_b) = Σ_{t ∈ I} g_ta·g_tb / T_I² + (T_E / (T · T_I)) · s_ab``, ``s_ab`` the
        between-topic covariance (ddof 1) of runs a and b's AP over the informative topics (Cochran 1977,
        §2.5: variance of a mean under simple random sampling without replacement). AP only: P@k's
        Horvitz-Thompson estimate is 0 and unbiased on an empty topic.
    variance : {"jackknife", "own-label", "linearised"}
        AP's variance: the delete-one Poisson jackknife ``Σ_e (1 - π_e) (AP - AP_(e))²``, ``AP_(e)`` the
        estimate with e's draw undone (exact for statistics linear in the labels; default, chosen on Robust 2003
        and synthetic collections, docs/sampling.md); linearised with each sampled document's derivative
        taken at its own label (``"own-label"``, more conservative); or the textbook linearisation
        ``Σ_e (1 - π_e)/π_e² (x_e - λ p_e)² (∂AP/∂x_e)²`` with derivatives at the corrected labels
        (``"linearised"``, smallest). P@k's is the same in every case.
    tuning : {"corrected", "model"}
        With a tuned weight, where each sampled document's derivatives ``spread_e = Σ_s (∂AP_s/∂x_e)²`` are
        taken: ``"corrected"`` — AP's influences at λ = 1 (the corrected labels of the difference estimator)
        divided by the document's residual; ``"model"`` — AP's derivatives at the model's predictions
        (``x = p`` for every pooled document, ``R = Σ p``), which do not depend on the draws and stay finite
        where the difference estimator's ``R̂`` of a topic comes near 0 (docs/notes/sampling-record.md, "how narrow can
        the model-assisted interval be?"). Ignored when ``weight`` is given.
    expected_draws : mapping topic -> float, optional
        ``m_t`` of the per-topic shrink (see ``shrink``), default ``Σ_d π_d`` over the topic's pool. For a
        sample whose unsampled documents' ``π`` is not known (prels list only the sampled ones), the
        number of documents drawn, the Horvitz-Thompson estimate ``Σ_{d ∈ S} π_d / π_d`` of ``Σ_d π_d``
        (equal to it for a stratified sample read with ``π = n_c / N_c``). Only the shrink uses the
        unsampled documents' ``π``.
    Notes
    -----
    Runs' documents outside the pool count as nonrelevant (as in trec_eval and ``sample_eval.pl``). A topic's
    ``R̂`` is at least its sampled relevant count (a known lower bound of R); a topic's AP and P@k estimates are
    clipped to [0, 1] and their influences scaled so that the topic's variance is at most 1/4 (Popoviciu's
    bound for a quantity in [0, 1]).
    """
    runs = runs if isinstance(runs, RunSet) else RunSet(tuple(runs))
    shrink = _checked_settings(weight, shrink, variance, tuning, empty, default, expected_draws, sample)
    cutoffs = tuple(int(k) for k in cutoffs)
    data = RankData.build(runs, sample.pool(), depth=int(depth))
    S, T = len(runs), len(data.topics)
    measures = ("AP", *[f"P{k}" for k in cutoffs])
    prepared, tune_parts = [], []
    for tr in data:
        args = _prepared_topic(tr, sample[tr.topic], predictions, inclusion, float(default), relevance_level,
                               cutoffs, variance)
        prepared.append(args)
        if weight is None:
            tune_parts.append(_tuning_part(tuning, *args))
    if weight is None:
        lam = tuned_weight(*(np.concatenate(parts) for parts in zip(*tune_parts, strict=True)))
    else:
        lam = float(weight)
    values, variances, unclipped, influence, has, informative = _corrected_topics(
        prepared, measures, S, lam, shrink if weight is None else None, expected_draws, empty)
    covariance = {m: _mean_covariance(influence[m], values[m], has,
                                      informative if m == "AP" else np.ones(T, dtype=bool))
                  for m in measures}
    return AssistedEvaluation(tuple(runs.names), tuple(data.topics), measures, values, variances, covariance, lam,
                              informative, unclipped)


def _corrected_topics(prepared: list[tuple], measures: tuple[str, ...], S: int, lam: float, shrink: float | None,
                      expected_draws: Mapping[str, float] | None, empty: str) -> tuple:
    """Every topic's estimates at ``λ_t = λ m_t/(m_t + shrink)`` (``shrink=None``: ``λ`` as given), bounded:
    ``(values, variances, unclipped, influence, has, informative)``; ``m_t`` is Σ π or ``expected_draws``."""
    T = len(prepared)
    values = {m: np.full((S, T), np.nan) for m in measures}
    variances = {m: np.full((S, T), np.nan) for m in measures}
    unclipped = {m: np.full((S, T), np.nan) for m in measures}
    influence: dict[str, list[np.ndarray]] = {m: [] for m in measures}
    has = np.zeros((S, T), dtype=bool)
    informative = np.ones(T, dtype=bool)
    for ti, args in enumerate(prepared):
        tr = args[4]
        expected = (float(np.sum(args[3])) if expected_draws is None     # Σ π: the topic's expected draws
                    else float(expected_draws[tr.topic]))
        res = _topic_pass(lam * expected / (expected + shrink) if shrink is not None else lam, *args)
        ok = tr.has_results
        has[:, ti] = ok
        informative[ti] = empty == "zero" or float(res["R"]) > 0
        for m in measures:
            g = _bounded(res[m], res[f"{m}_g"], ok, values[m][:, ti], variances[m][:, ti])
            influence[m].append(g)
            unclipped[m][ok, ti] = res[m][ok]
    return values, variances, unclipped, influence, has, informative


def _checked_settings(weight, shrink, variance: str, tuning: str, empty: str, default,
                      expected_draws: Mapping[str, float] | None, sample: StratifiedSample) -> float:
    """Refuse, naming the argument, settings :func:`assisted_measures` cannot use; the shrink as a float."""
    if weight is not None and not 0.0 <= float(weight) <= 1.0:
        raise BayevalInputError(f"weight: must lie in [0, 1], got {weight!r}")
    if not float(shrink) >= 0.0:
        raise BayevalInputError(f"shrink: must be >= 0, got {shrink!r}")
    if variance not in VARIANCES:
        raise BayevalInputError(f"variance: one of {', '.join(VARIANCES)}, got {variance!r}")
    if tuning not in TUNINGS:
        raise BayevalInputError(f"tuning: one of {', '.join(TUNINGS)}, got {tuning!r}")
    if empty not in ("impute", "zero"):
        raise BayevalInputError(f"empty: 'impute' or 'zero', got {empty!r}")
    if not 0.0 <= float(default) <= 1.0:
        raise BayevalInputError(f"default: must lie in [0, 1], got {default!r}")
    if expected_draws is not None:
        bad = [t for t in sample if not float(expected_draws.get(t, np.nan)) >= 0.0]
        if bad:
            raise BayevalInputError(f"expected_draws: a number >= 0 for every topic of the sample, not for {bad[0]!r}")
    return float(shrink)


def _prepared_topic(tr, ts, predictions: RelevanceProbabilities | None, inclusion: Mapping[str, np.ndarray] | None,
                    default: float, relevance_level: int, cutoffs: tuple[int, ...], variance: str) -> tuple:
    """The arguments of :func:`_topic_pass` after ``λ_t`` for one topic: each pooled document's p, label
    ``x_d``, drawn flag and ``π_d``; the topic's ranks of the drawn documents and their variance coefficients
    ``(1 - π_d)/π_d²``."""
    pi = _inclusion(ts, inclusion, tr.topic)
    p = (np.full(len(ts), default) if predictions is None else predictions.lookup(tr.topic, ts.docnos, default))
    x = (ts.grades >= relevance_level).astype(np.float64)
    smp = ts.sampled
    where = pd.Index(tr.docnos).get_indexer(ts.docnos)              # pooled docs in the topic's universe
    ranks = tr.ranks[where[smp]].T.astype(np.int64)                 # (S, n)
    coef = (1.0 - pi[smp]) / pi[smp] ** 2
    return p, x, smp, pi, tr, where, ranks, coef, cutoffs, variance


def _tuning_part(tuning: str, p, x, smp, pi, tr, where, ranks, coef, cutoffs, variance) -> tuple:
    """One topic's share of :func:`tuned_weight`'s input: the drawn documents' labels, p, variance coefficients
    and each one's spread — AP's derivatives at the model's predictions (``tuning="model"``), or the variance's
    sensitivity to each sampled document at λ = 1 (``"corrected"``)."""
    if tuning == "model":
        p_doc = np.zeros(tr.n_docs)
        p_doc[where] = p
        spread = np.sum(ap_derivatives(tr.ranked_values(p_doc, 0.0), ranks, float(p.sum()))[1] ** 2, axis=0)
    else:
        first = _topic_pass(1.0, p, x, smp, pi, tr, where, ranks, coef, cutoffs, variance)
        resid = (x - p)[smp]
        safe = np.where(resid != 0, resid, 1.0) * np.sqrt(coef)
        spread = np.sum((first["AP_g"] / np.where(safe != 0, safe, 1.0)) ** 2, axis=0)
    return x[smp], p[smp], coef, spread


def _inclusion(ts, inclusion: Mapping[str, np.ndarray] | None, topic: str) -> np.ndarray:
    """A topic's inclusion probabilities: ``inclusion[topic]`` or the sample's own, checked (one per pooled
    document, in (0, 1], positive for every sampled one)."""
    if inclusion is not None and topic not in inclusion:
        raise BayevalInputError(f"inclusion: no probabilities for topic {topic!r}")
    pi = ts.inclusion if inclusion is None else np.asarray(inclusion[topic], dtype=np.float64)
    if pi.shape != (len(ts),) or np.any(ts.sampled & ~(pi > 0)) or np.any(pi > 1):
        raise BayevalInputError(f"inclusion: topic {topic!r} needs one probability in (0, 1] per pooled "
                                "document, positive for every sampled one")
    return pi


def _bounded(value: np.ndarray, g: np.ndarray, ok: np.ndarray, values_out: np.ndarray,
             variances_out: np.ndarray) -> np.ndarray:
    """One topic's estimate of a measure in [0, 1] for every run, written into ``values_out`` and
    ``variances_out`` (views of the topic's column) where the run has results: the estimate projected onto
    [0, 1] (never farther from the truth) and its influences ``g`` (S, n) scaled so that the topic's variance
    stays within Popoviciu's bound 1/4. Returns the scaled influences (zero rows for runs without results)."""
    values_out[ok] = np.clip(value[ok], 0.0, 1.0)
    g = np.where(ok[:, None], g, 0.0)
    norm = np.sqrt(np.sum(g * g, axis=1, keepdims=True))
    g = g * np.minimum(1.0, 0.5 / np.where(norm > 0, norm, 1.0))
    variances_out[ok] = np.sum(g[ok] ** 2, axis=1)
    return g


def _mean_covariance(influences: list[np.ndarray], values: np.ndarray, has: np.ndarray,
                     informative: np.ndarray) -> np.ndarray:
    """Covariance (S, S) of the runs' mean over the informative topics: Σ_t g_t g_tᵀ / (n_a n_b) from each
    topic's influences, plus the between-topic term of the topics imputed (:func:`_imputation_covariance`)."""
    S = values.shape[0]
    n = np.maximum((has & informative).sum(axis=1), 1).astype(np.float64)
    c = np.zeros((S, S))
    for ti, g in enumerate(influences):
        if informative[ti]:
            c += g @ g.T
    return c / np.outer(n, n) + _imputation_covariance(values, has, informative)


def _imputation_covariance(values: np.ndarray, has: np.ndarray, informative: np.ndarray) -> np.ndarray:
    """``(T_E / (T · T_I)) · s_ab`` per pair of runs (see ``empty`` in :func:`assisted_measures`): the variance
    of a mean over the T_I informative topics as an estimate of the mean over all T a run has, when the T_E
    empty ones are missed at random. Per run, ``T``, ``T_I`` count the topics it has; ``s_ab`` is the
    covariance over the topics both runs have and that are informative."""
    S = values.shape[0]
    tot = has.sum(axis=1).astype(np.float64)
    inf = (has & informative[None, :]).sum(axis=1).astype(np.float64)
    factor = np.where((inf > 1) & (tot > inf), (tot - inf) / np.maximum(tot * inf, 1.0), 0.0)
    if not np.any(factor > 0):
        return np.zeros((S, S))
    both = (has & informative[None, :]).astype(np.float64)
    v = np.where(both > 0, values, 0.0)
    centred = np.where(both > 0, v - v.sum(axis=1, keepdims=True) / np.maximum(inf, 1.0)[:, None], 0.0)
    pairs = both @ both.T
    s = (centred @ centred.T) / np.maximum(pairs - 1.0, 1.0)
    return s * np.sqrt(np.outer(factor, factor))


def _topic_pass(lam, p, x, smp, pi, tr, where, ranks, coef, cutoffs, variance) -> dict:
    """One topic's estimates at weight ``lam`` (corrected labels ``z`` laid out in every run's order)."""
    z = lam * p + np.where(smp, (x - lam * p) / np.where(smp, pi, 1.0), 0.0)
    z_doc = np.zeros(tr.n_docs)
    z_doc[where] = z
    return assisted_topic(tr.ranked_values(z_doc, 0.0), tr.lengths.astype(np.int64), ranks, (x - lam * p)[smp],
                          coef, float(z.sum()), cutoffs, z[smp], x[smp],
                          r_floor=float(x[smp].sum()),
                          drop=((x - lam * p)[smp] / pi[smp]) if variance == "jackknife" else None,
                          at_z=variance == "linearised")
