"""Model-assisted estimates from one's own random sample in one call (:func:`evaluate_assisted`).

A judging campaign that sampled (``bayeval judge sample``, exported as prels) or a stratified sample in NIST's
format gives judgments drawn at random with known inclusion probabilities. This module takes such a sample,
the runs and a relevance model (a fit function: judgments -> p of every document), and returns every run's
model-assisted MAP and P@k with design-based standard errors and intervals, and every pair's ΔMAP with its
standard error and P(Δ < 0): the model's p of every pooled document is cross-fitted
(:func:`~bayeval.sampling.cross_fitted_predictions`), then corrected by the sample
(:func:`~bayeval.sampling.assisted_measures`). Judgments that were *not* drawn at random (a selector's picks)
may help the model learn but never correct it. Nothing is computed here that those two functions do not;
this module reads the sample's design, checks the input and wires them. Formulas: docs/sampling.md.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from bayeval.data.probabilities import RelevanceProbabilities
from bayeval.data.qrels import Qrels, TopicJudgments
from bayeval.data.run import Run, RunSet
from bayeval.data.sample import NOT_SAMPLED, StratifiedSample, TopicSample
from bayeval.errors import BayevalInputError, DataNotice
from bayeval.progress import track
from bayeval.sampling.anchored import anchored_measures
from bayeval.sampling.assisted import VARIANCES, AssistedEvaluation, assisted_measures
from bayeval.sampling.combined import SHARE, CombinedEstimate, combine_differences, combine_means
from bayeval.sampling.crossfit import cross_fitted_predictions
from bayeval.sampling.sample_sizes import assisted_form

__all__ = ["ASSISTED_FORMS", "AssistedResult", "evaluate_assisted"]

#: How :func:`evaluate_assisted` lets the sample correct the model (its ``form``).
ASSISTED_FORMS = ("anchored", "ratio")

@dataclass(frozen=True)
class AssistedResult:
    """Every run's model-assisted measures and every pair's difference, from :func:`evaluate_assisted`.

    Attributes
    ----------
    evaluation : AssistedEvaluation
        Per-topic estimates, variances, the runs' covariance and the weight ``λ`` given to the model.
    predictions : RelevanceProbabilities
        Every pooled document's cross-fitted p (each from a fit that never saw its judgment).
    model : str
        The relevance model's name.
    folds, seed : int
        Cross-fitting folds and the seed of their assignment.
    design : {"strata", "inclusion", "prels"}
        ``π`` of each pooled document: its stratum's rate ``n_c / N_c``; given per pooled document; or the
        prels' ``π`` of the sampled documents only (the per-topic shrink then uses the number drawn).
    sampled, extra, pooled : int
        Judgments drawn at random (they correct the model), judgments not drawn at random that the model
        learnt from (they correct nothing), pooled documents.
    judgments : Qrels
        Every judgment the model learnt from, drawn and not (what the model alone would be fitted on).
    form : {"anchored", "ratio"}
        How the sample corrected the model (``form`` of :func:`evaluate_assisted`; ``"auto"`` resolved).
    drawn : dict of str to int
        Judgments drawn at random in each topic.
    """

    evaluation: AssistedEvaluation
    predictions: RelevanceProbabilities
    model: str
    folds: int
    seed: int
    design: str
    sampled: int
    extra: int
    pooled: int
    judgments: Qrels
    form: str = "ratio"
    drawn: dict | None = None

    def drawn_per_topic(self) -> dict[str, int]:
        """The judgments drawn at random in each topic (what :func:`bayeval.sampling.minimum_notices` checks)."""
        return dict(self.drawn or {})

    @property
    def systems(self) -> tuple[str, ...]:
        return self.evaluation.systems

    @property
    def topics(self) -> tuple[str, ...]:
        return self.evaluation.topics

    @property
    def measures(self) -> tuple[str, ...]:
        """``AP`` (its mean over topics is MAP) and ``P{k}``."""
        return self.evaluation.measures

    @property
    def weight(self) -> float:
        """``λ``, the weight the model's predictions get (before the per-topic shrink)."""
        return self.evaluation.weight

    def confidence_interval(self, level: float = 0.95, measure: str = "AP") -> tuple[np.ndarray, np.ndarray]:
        """Normal ``level`` interval of each run's mean of ``measure`` (estimate ± z · design-based se)."""
        self._check(measure)
        return self.evaluation.interval(measure, level)

    def summary(self, level: float = 0.95) -> pd.DataFrame:
        """One row per run and measure: ``run, measure, value, se, lower, upper`` (``AP``'s value is MAP)."""
        rows = []
        for m in self.measures:
            mean, var = self.evaluation.mean(m)
            lo, hi = self.confidence_interval(level, m)
            rows += [(s, m, mean[i], np.sqrt(max(var[i], 0.0)), lo[i], hi[i]) for i, s in enumerate(self.systems)]
        return pd.DataFrame(rows, columns=["run", "measure", "value", "se", "lower", "upper"])

    def differences(self, measure: str = "AP", level: float = 0.95) -> pd.DataFrame:
        """Every pair of runs (a before b in the runs' order): ``run_a, run_b, delta, se, lower, upper,
        p_less`` with ``delta = mean_a - mean_b``, its paired design-based se (the shared sample cancels),
        the normal ``level`` interval and ``p_less = P(Δ < 0) = Φ(-Δ / se)``."""
        self._check(measure)
        if not 0 < level < 1:
            raise BayevalInputError(f"level: must lie in (0, 1), got {level!r}")
        d, se, p = self.evaluation.differences(measure)
        z = stats.norm.ppf(0.5 + level / 2)
        a, b = self.pairs()
        names = np.array(self.systems, dtype=object)
        return pd.DataFrame({"run_a": names[a], "run_b": names[b], "delta": d[a, b], "se": se[a, b],
                             "lower": d[a, b] - z * se[a, b], "upper": d[a, b] + z * se[a, b],
                             "p_less": p[a, b]})

    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """``(a, b)``: the run indices of the rows of :meth:`differences` (every a < b)."""
        return np.triu_indices(len(self.systems), 1)

    def combined(self, model_mean, model_se, model_delta, model_delta_se, *, pairs=None,
                 share: float = SHARE) -> tuple[CombinedEstimate, CombinedEstimate]:
        """The runs' MAP and the pairs' ΔMAP combined with the model alone's by empirical Bayes.

        Each quantity leans on the model as far as the sample says the model errs
        (:func:`~bayeval.sampling.combine_means`, :func:`~bayeval.sampling.combine_differences`). **Not
        design-based**: its intervals and P(Δ < 0) hold only as far as the combination's model of the two
        errors does (the model's error carries a share ``ρ`` of the sample's, a setting chosen on Robust 2003
        and synthetic collections with the model fitted on the sample alone; docs/sampling.md).

        Parameters
        ----------
        model_mean, model_se : array_like, shape (S,)
            The model alone's E[MAP] of each run and its standard deviation (fitted on :attr:`judgments`).
        model_delta, model_delta_se : array_like, shape (n,)
            The model alone's E[ΔMAP] and its standard deviation for each pair of ``pairs``.
        pairs : (ndarray, ndarray), optional
            Run indices ``(a, b)`` of the pairs, ``Δ = MAP_a - MAP_b`` (default :meth:`pairs`, every a < b).
            The spread is estimated from the pairs given, so the result depends on the set.
        share : float in [0, 1)
            ``ρ`` (default 0.5).

        Returns
        -------
        runs, differences : CombinedEstimate
        """
        a, b = self.pairs() if pairs is None else (np.asarray(pairs[0], dtype=np.int64),
                                                   np.asarray(pairs[1], dtype=np.int64))
        d, se, _ = self.evaluation.differences("AP")
        mean, _ = self.evaluation.mean("AP")
        runs = combine_means(mean, self.evaluation.covariance["AP"], np.asarray(model_mean, dtype=np.float64),
                             np.asarray(model_se, dtype=np.float64), share=share)
        diffs = combine_differences(d[a, b], se[a, b], np.asarray(model_delta, dtype=np.float64),
                                    np.asarray(model_delta_se, dtype=np.float64), share=share)
        return runs, diffs

    def to_frame(self, per_topic: bool = False) -> pd.DataFrame:
        """Long frame ``run, topic, measure, value, se`` (``topic == "all"``: the means and their se)."""
        return self.evaluation.to_frame(per_topic=per_topic)

    def _check(self, measure: str) -> None:
        if measure not in self.measures:
            raise BayevalInputError(f"measure: one of {', '.join(self.measures)}, got {measure!r}")


def evaluate_assisted(runs: RunSet | Sequence[Run], sample: StratifiedSample | Qrels,
                      fit: Callable[[Qrels], RelevanceProbabilities], *,
                      inclusion: Mapping[str, np.ndarray] | None = None, extra: Qrels | None = None,
                      folds: int = 5, seed: int = 0, depth: int = 1000, cutoffs: tuple[int, ...] = (10,),
                      relevance_level: int = 1, variance: str = "jackknife", weight: float | None = None,
                      model: str | None = None, progress: bool | None = False, form: str = "auto"
                      ) -> AssistedResult:
    """Model-assisted MAP, P@k and ΔMAP with design-based intervals, from a random sample and a model.

    Parameters
    ----------
    runs : RunSet or sequence of Run
    sample : StratifiedSample or Qrels
        The random sample. A :class:`~bayeval.data.StratifiedSample` (``read_stratified_sample``; a campaign's
        ``judge export --sample``) holds the pool — every document that could have been drawn — and the
        drawn ones' grades; each document's inclusion probability is ``inclusion`` or else its stratum's rate
        ``n_c / N_c``. Prels (``read_prels``; ``judge export --prels``: a :class:`~bayeval.data.Qrels` with
        ``inclusion``) hold only the drawn documents: the pool is then every document the runs rank within
        ``depth`` and every drawn document, which is the campaign's pool when the runs and depth are the
        campaign's (a document outside the design's pool would be taken as one that could have been drawn).
    fit : callable
        ``fit(judgments: Qrels) -> RelevanceProbabilities``: the relevance model fitted on ``judgments``,
        predicting every pooled document (:class:`bayeval.relevance.PredictionFit`, whose default model is
        the package's). Called ``folds`` times.
    inclusion : mapping topic -> ndarray, optional
        With a StratifiedSample: each pooled document's inclusion probability, aligned with
        ``sample[t].docnos`` (the design's, where known).
    extra : Qrels, optional
        Judgments not drawn at random (an adaptive selector's picks, an initial pool): the model learns from
        them, the sample alone corrects it. Each fit learns from those of documents outside the fold it
        predicts, so that no pooled document's own judgment reaches its prediction
        (:func:`~bayeval.sampling.crossfit.held_out_judgments`). A document both drawn and in ``extra`` must
        have the same grade in both, and counts as drawn.
    folds : int >= 2
        Cross-fitting folds (default 5; docs/sampling.md).
    seed : int
        Seed of the fold assignment.
    depth : int
        Ranks of each run evaluated (and pooled, with prels); default 1000, as ``sample_eval.pl``.
    cutoffs : tuple of int
        P@k cut-offs (default P@10).
    relevance_level : int
        The least grade counted relevant.
    variance : {"jackknife", "own-label", "linearised"}
        AP's variance estimate of the ratio form (:func:`~bayeval.sampling.assisted_measures`; the anchored form's
        is the jackknife).
    weight : float in [0, 1], optional
        ``λ`` of the ratio form; default tuned, one for all topics, then shrunk per topic
        (:func:`~bayeval.sampling.assisted_measures`).
    model : str, optional
        The model's name in the result (default ``fit.name`` where it has one).
    progress : bool or None
        A progress bar over the fits (``None``: on a terminal only).
    form : {"auto", "anchored", "ratio"}
        How the sample corrects the cross-fitted p: ``"anchored"``, AP's expansion around the model's expected AP
        with its terms up to pairs of documents estimated from the sample
        (:func:`~bayeval.sampling.anchored_measures`: no random denominator, so it holds at small per-topic
        samples); ``"ratio"``, the ratio of the corrected labels' sums with a tuned weight
        (:func:`~bayeval.sampling.assisted_measures`), which holds from about 50 judgments a topic; ``"auto"``
        (default): the anchored form below a median of :data:`~bayeval.sampling.sample_sizes.RATIO_FROM` (50)
        judgments a topic (drawn, or expected where every pooled document's π is known), the ratio from it
        (:func:`~bayeval.sampling.sample_sizes.assisted_form`; docs/sampling.md).

    Returns
    -------
    AssistedResult

    Raises
    ------
    BayevalInputError
        Naming the argument: a sample with no drawn document, prels without inclusion probabilities or with
        a π outside (0, 1], runs with no result for any topic of the sample, ``folds < 2``, an ``extra``
        judgment that contradicts the sample, ``inclusion`` given with prels.

    Notes
    -----
    Each pooled document's label is replaced by ``z_d = λ_t p_d + I_d (x_d - λ_t p_d)/π_d`` with ``p_d`` the
    cross-fitted prediction, ``λ`` tuned once for all topics and ``λ_t = λ m_t/(m_t + 50)``, ``m_t = Σ_d π_d``
    the topic's expected number of draws (:func:`~bayeval.sampling.assisted_measures`). Only the drawn
    documents' ``π`` enter ``z`` and the variances; ``m_t`` needs the ``π`` of every pooled document. Prels
    list only the drawn ones, so with prels ``m_t`` is replaced by the number drawn ``n_t``, its
    Horvitz-Thompson estimate (``E n_t = m_t``): ``λ_t`` then depends on the draw through ``n_t``, as the
    tuned ``λ`` does through the whole sample (a dependence of the order of one document's influence). For
    a stratified sample read with ``π = n_c / N_c``, ``Σ_d π_d = Σ_c n_c = n_t`` exactly, so the two routes
    agree there.

    Why non-random judgments can fit but not correct: ``E z_d = x_d`` needs a document's chance of having
    its own term ``I_d (x_d - λ p_d)/π_d`` to be the known ``π_d``; a selector's pick has no known chance
    (it was chosen *because* it looked informative), so giving it a term would weigh it by a fiction. As
    training labels they only move ``p``, which the sample's correction keeps honest — provided ``p_d``
    does not depend on ``I_d``. A pooled document is among the non-random judgments only where it was not
    drawn, so its own judgment must not reach its prediction: each fit holds out the non-random judgments
    of the fold it predicts as well as its drawn ones. When the selector chose its picks after seeing the
    drawn judgments (a campaign's ``next`` serves the drawn documents first), which documents it picked
    depends on the draw: a dependence through the selection, again of the order of one document's
    influence on a fit.

    References
    ----------
    Särndal, Swensson & Wretman (1992), *Model Assisted Survey Sampling*, Springer (difference estimator).
    Angelopoulos, Duchi & Zrnic (2023), PPI++: efficient prediction-powered inference, arXiv:2311.01453.
    Zrnic & Candès (2024), Cross-prediction-powered inference, PNAS 121(15).

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> from bayeval.relevance import PredictionFit
    >>> from bayeval.data import RankData
    >>> from bayeval.sampling.design import poisson_draw
    >>> col = make_collection(n_topics=4, n_systems=3, n_docs=60, depth=20, judged_depth=20, seed=1)
    >>> rng = np.random.default_rng(0)
    >>> pool = {}
    >>> for tr in RankData.build(col.runs, col.qrels):
    ...     grades = np.where(poisson_draw(np.full(tr.n_docs, 0.4), rng), np.maximum(tr.grades, 0), -1)
    ...     pool[tr.topic] = TopicSample(tr.docnos, np.zeros(tr.n_docs, np.int32), ("all",), grades)
    >>> res = evaluate_assisted(col.runs, StratifiedSample(pool), PredictionFit(col.runs, "smoothed"), seed=0)
    >>> list(res.summary().columns)
    ['run', 'measure', 'value', 'se', 'lower', 'upper']
    >>> bool(res.differences().p_less.between(0, 1).all())
    True
    """
    runs = runs if isinstance(runs, RunSet) else RunSet(tuple(runs))
    _check_arguments(folds, seed, depth, variance, weight, form, fit, extra)
    sample, inclusion, draws, design = _design(sample, inclusion, runs, int(depth))
    sample = _covered(sample, runs)
    n_drawn = sum(int(ts.sampled.sum()) for ts in sample.values())
    if n_drawn == 0:
        raise BayevalInputError("sample: no document was drawn (every rel is -1): nothing corrects the model")
    extra = None if extra is None else _checked_extra(extra, sample)
    level = int(relevance_level)
    predictions = _cross_fit(sample, fit, extra, int(folds), int(seed), level, progress)
    if form == "auto":
        form = _auto_form(sample, inclusion, draws)
    if form == "anchored":
        ev = anchored_measures(runs, sample, predictions, inclusion=inclusion, cutoffs=tuple(cutoffs),
                               depth=int(depth), relevance_level=level)
    else:
        ev = assisted_measures(runs, sample, predictions, weight=weight, inclusion=inclusion, cutoffs=tuple(cutoffs),
                               depth=int(depth), relevance_level=level, variance=variance, expected_draws=draws)
    n_extra = 0 if extra is None else sum(len(extra[t].docnos) for t in extra.topics)
    everything = _all_judgments(sample, extra, level)
    return AssistedResult(ev, predictions, str(model if model is not None else getattr(fit, "name", "model")),
                          int(folds), int(seed), design, n_drawn, n_extra, sum(len(ts) for ts in sample.values()),
                          everything, form, {t: int(ts.sampled.sum()) for t, ts in sample.items()})


def _check_arguments(folds, seed, depth, variance: str, weight, form: str, fit, extra) -> None:
    """Refuse, naming the argument, settings :func:`evaluate_assisted` cannot use."""
    if not isinstance(folds, (int, np.integer)) or isinstance(folds, bool) or folds < 2:
        raise BayevalInputError(f"folds: cross-fitting needs an integer >= 2, got {folds!r}")
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        raise BayevalInputError(f"seed: an integer, got {seed!r}")
    if not isinstance(depth, (int, np.integer)) or isinstance(depth, bool) or depth < 1:
        raise BayevalInputError(f"depth: a positive integer, got {depth!r}")
    if variance not in VARIANCES:
        raise BayevalInputError(f"variance: one of {', '.join(VARIANCES)}, got {variance!r}")
    if weight is not None and not 0.0 <= float(weight) <= 1.0:
        raise BayevalInputError(f"weight: must lie in [0, 1], got {weight!r}")
    if form not in ("auto", *ASSISTED_FORMS):
        raise BayevalInputError(f"form: one of auto, {', '.join(ASSISTED_FORMS)}, got {form!r}")
    if not callable(fit):
        raise BayevalInputError(f"fit: a function judgments -> RelevanceProbabilities, got {type(fit).__name__}")
    if extra is not None and not isinstance(extra, Qrels):
        raise BayevalInputError(f"extra: qrels of the judgments not drawn at random, got {type(extra).__name__}")


def _design(sample: StratifiedSample | Qrels, inclusion: Mapping[str, np.ndarray] | None, runs: RunSet, depth: int
            ) -> tuple[StratifiedSample, Mapping[str, np.ndarray] | None, dict[str, float] | None, str]:
    """``(sample, inclusion, draws, design)``: the sample as a StratifiedSample, each pooled document's π where
    known, the number drawn per topic standing for ``m_t`` (prels only) and the design's name
    (:attr:`AssistedResult.design`)."""
    if isinstance(sample, StratifiedSample):
        return sample, inclusion, None, ("strata" if inclusion is None else "inclusion")
    if isinstance(sample, Qrels):
        if inclusion is not None:
            raise BayevalInputError("inclusion: prels carry their own inclusion probabilities; give inclusion "
                                    "only with a StratifiedSample")
        return (*_prels_design(sample, runs, depth), "prels")
    raise BayevalInputError(f"sample: a StratifiedSample or prels (Qrels with inclusion probabilities), got "
                            f"{type(sample).__name__}")


def _cross_fit(sample: StratifiedSample, fit: Callable[[Qrels], RelevanceProbabilities], extra: Qrels | None,
               folds: int, seed: int, level: int, progress: bool | None) -> RelevanceProbabilities:
    """Every pooled document's p from a fit that never saw its judgment
    (:func:`~bayeval.sampling.cross_fitted_predictions`), with a progress bar over the ``folds`` fits."""

    def training(smp: StratifiedSample, more: Qrels | None = None) -> RelevanceProbabilities:
        next(ticker, None)
        return fit(_all_judgments(smp, more, level))

    ticker = track(range(folds), total=folds, description=f"fitting the model ({folds} folds)", enabled=progress)
    try:
        predictions = cross_fitted_predictions(sample, training, folds=folds, seed=seed, extra=extra)
        for _ in ticker:  # the last fit is done
            pass
    finally:
        ticker.close()
    return predictions


def _auto_form(sample: StratifiedSample, inclusion: Mapping[str, np.ndarray] | None,
               draws: dict[str, float] | None) -> str:
    """``form="auto"`` resolved by the sample's size per topic (:func:`~bayeval.sampling.sample_sizes.assisted_form`):
    the number drawn from prels, else the expected number where every π is known, else the number drawn."""
    size = (draws if draws is not None else
            {t: float(np.sum(inclusion[t])) for t in sample} if inclusion is not None else
            {t: float(ts.sampled.sum()) for t, ts in sample.items()})
    return assisted_form(size)


def _all_judgments(sample: StratifiedSample, extra: Qrels | None, level: int) -> Qrels:
    """The drawn judgments of ``sample`` and the non-random ones (disjoint from them: :func:`_checked_extra`,
    :func:`~bayeval.sampling.crossfit.held_out_judgments`), every topic of the sample listed."""
    out = {}
    for t, ts in sample.items():
        docs, grades = ts.docnos[ts.sampled], ts.grades[ts.sampled]
        if extra is not None and t in extra.topic_judgments:
            docs = np.concatenate([docs, extra[t].docnos])
            grades = np.concatenate([grades, extra[t].grades])
        out[t] = TopicJudgments(docs, grades)
    return Qrels(out, level)


def _prels_design(prels: Qrels, runs: RunSet, depth: int
                  ) -> tuple[StratifiedSample, dict[str, np.ndarray], dict[str, float]]:
    """The pool of prels (every document the runs rank within ``depth``, and every drawn one), the drawn
    documents' ``π`` (NaN for the others: unknown, and used by nothing but ``m_t``) and ``m_t``'s estimate,
    the number drawn."""
    pool, incl, draws = {}, {}, {}
    for t in prels.topics:
        tj = prels[t]
        if tj.inclusion is None:
            raise BayevalInputError(f"sample: topic {t!r} has no inclusion probabilities: prels "
                                    "'topic docno grade algorithm probability' are needed, not qrels")
        pi = np.asarray(tj.inclusion, dtype=np.float64)
        bad = ~((pi > 0) & (pi <= 1))
        if bad.any():
            raise BayevalInputError(f"sample: topic {t!r} document {tj.docnos[bad][0]!r} has inclusion "
                                    f"probability {pi[bad][0]!r}, not in (0, 1]")
        if (tj.grades < 0).any():
            raise BayevalInputError(f"sample: topic {t!r} document {tj.docnos[tj.grades < 0][0]!r} has grade "
                                    f"{int(tj.grades[tj.grades < 0][0])}: a drawn document needs a grade >= 0")
        ranked = [r.ranking(t)[:depth] for r in runs]
        docs = np.array(sorted(set(tj.docnos.tolist()).union(*[set(x.tolist()) for x in ranked])), dtype=object)
        pos = pd.Index(tj.docnos).get_indexer(docs)
        drawn = pos >= 0
        grades = np.where(drawn, tj.grades[np.maximum(pos, 0)], NOT_SAMPLED).astype(np.int64)
        pool[t] = TopicSample(docs, np.zeros(len(docs), dtype=np.int32), ("prels",), grades)
        incl[t] = np.where(drawn, pi[np.maximum(pos, 0)], np.nan)
        draws[t] = float(drawn.sum())
    return StratifiedSample(pool), incl, draws


def _covered(sample: StratifiedSample, runs: RunSet) -> StratifiedSample:
    """The sample's topics the runs have results for (none: an error; some missing: a notice)."""
    have = set(runs.topics)
    kept = [t for t in sample if t in have]
    if not kept:
        raise BayevalInputError(f"runs: no result for any of the sample's {len(sample)} topics "
                                f"({', '.join(list(sample)[:3])}, ...): are they the runs of the sample's collection?")
    if len(kept) < len(sample):
        missing = [t for t in sample if t not in have]
        warnings.warn(f"runs: no run has results for {len(missing)} of the sample's {len(sample)} topics "
                      f"({', '.join(missing[:5])}{', ...' if len(missing) > 5 else ''}); evaluating the other "
                      f"{len(kept)}", DataNotice, stacklevel=3)
        return StratifiedSample({t: sample[t] for t in kept})
    return sample


def _checked_extra(extra: Qrels, sample: StratifiedSample) -> Qrels:
    """``extra`` on the sample's topics; a document also drawn must carry the sample's grade."""
    out = {}
    for t in extra.topics:
        if t not in sample:
            continue
        tj, ts = extra[t], sample[t]
        pos = pd.Index(ts.docnos).get_indexer(tj.docnos)
        at = np.maximum(pos, 0)
        clash = (pos >= 0) & ts.sampled[at] & (ts.grades[at] != tj.grades)
        if clash.any():
            i = int(np.flatnonzero(clash)[0])
            raise BayevalInputError(f"extra: topic {t!r} document {tj.docnos[i]!r} is judged {int(tj.grades[i])} "
                                    f"there and {int(ts.grades[at[i]])} in the sample")
        keep = ~((pos >= 0) & ts.sampled[at])  # drawn documents are the sample's
        out[t] = TopicJudgments(tj.docnos[keep], tj.grades[keep])
    return Qrels(out, extra.relevance_level)
