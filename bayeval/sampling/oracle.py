"""How narrow can a model-assisted interval of MAP be? The design variance when the truth is known.

With every pooled document's true label ``x_d`` known, the design variance of the linearised model-assisted
estimate of a run's MAP under Poisson sampling with inclusion probabilities ``π_d``, predictions ``p_d`` and
weight ``λ_t`` on topic t is

    V(λ) = Σ_t Σ_d (1 - π_d)/π_d · (x_d - λ_t p_d)² · (∂MAP/∂x_d)²,   ∂MAP/∂x_d = (∂N_t/∂x_d - AP_t) / (R_t T),

(:func:`design_variance`; T the topics with a relevant document, derivatives at the truth). ``λ = 0`` is
statAP's variance, so ``√(V(λ)/V(0))`` is the width of the model-assisted interval relative to statAP's that
this design and these predictions allow — with the variance known, not estimated; :func:`oracle_weight` gives
the λ that minimises it (one for all topics, or one per topic). Nothing here is an estimator: it needs the
truth, and serves to bound what an estimator with the same predictions and design can reach
(docs/notes/sampling-record.md, "how narrow can the model-assisted interval be?").

References: Särndal, Swensson & Wretman, *Model Assisted Survey Sampling*, 1992 (§5.5 linearisation, §6.6
the difference estimator's variance); Aslam, Pavlu & Yilmaz, SIGIR 2006 (statAP).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayeval.data.qrels import Qrels
from bayeval.data.rankdata import RankData
from bayeval.data.run import Run, RunSet
from bayeval.data.sample import StratifiedSample
from bayeval.errors import BayevalInputError
from bayeval.sampling._oracle_kernels import ap_derivatives, best_weight, variance_terms

__all__ = ["TruthSlopes", "design_variance", "design_variance_terms", "oracle_weight", "truth_slopes"]


@dataclass(frozen=True)
class TruthSlopes:
    """Every pooled document's true label and the derivative of every run's MAP with respect to it.

    Attributes
    ----------
    systems, topics : tuple of str
    labels : dict of str to ndarray, shape (n_t,)
        True labels (0/1), aligned with the sample's ``docnos`` of the topic.
    slopes : dict of str to ndarray, shape (S, n_t)
        ``∂MAP_s/∂x_d = (∂N/∂x_d - AP) / (R_t · T)`` at the truth (0 on a topic without relevant documents).
    ap : ndarray, shape (S, T)
        True AP per run and topic.
    """

    systems: tuple[str, ...]
    topics: tuple[str, ...]
    labels: dict[str, np.ndarray]
    slopes: dict[str, np.ndarray]
    ap: np.ndarray


def truth_slopes(runs: RunSet | Sequence[Run], sample: StratifiedSample, truth: Qrels, *,
                 depth: int = 1000) -> TruthSlopes:
    """The true labels of the sample's pool and the derivatives of each run's MAP at the truth.

    Parameters
    ----------
    runs : RunSet or sequence of Run
    sample : StratifiedSample
        The pool (its ``docnos`` per topic; which documents were drawn does not matter).
    truth : Qrels
        Complete judgments; a pooled document they do not list is nonrelevant. Grades at or above
        ``truth.relevance_level`` are relevant.
    depth : int
        Ranks kept (as in :func:`bayeval.sampling.assisted_measures`).

    Returns
    -------
    TruthSlopes
        MAP is the mean over the T topics with at least one relevant pooled document.
    """
    runs = runs if isinstance(runs, RunSet) else RunSet(tuple(runs))
    if not isinstance(truth, Qrels):
        raise BayevalInputError(f"truth: expected Qrels, got {type(truth).__name__}")
    data = RankData.build(runs, sample.pool(), depth=int(depth))
    labels, raw, aps = {}, {}, []
    for tr in data:
        ts = sample[tr.topic]
        tj = truth.topic_judgments.get(tr.topic)
        x = np.zeros(len(ts))
        if tj is not None:
            pos = pd.Index(tj.docnos).get_indexer(ts.docnos)
            x = np.where(pos >= 0, tj.grades[np.maximum(pos, 0)] >= truth.relevance_level, False).astype(float)
        x_doc = np.zeros(tr.n_docs)
        where = pd.Index(tr.docnos).get_indexer(ts.docnos)
        x_doc[where] = x
        ap, slopes = ap_derivatives(tr.ranked_values(x_doc, 0.0), tr.ranks[where].T.astype(np.int64),
                                     float(x.sum()))
        labels[tr.topic], raw[tr.topic] = x, slopes
        aps.append(ap)
    n_topics = max(sum(float(x.sum()) > 0 for x in labels.values()), 1)
    return TruthSlopes(tuple(runs.names), tuple(data.topics), labels,
                       {t: s / n_topics for t, s in raw.items()},
                       np.column_stack(aps) if aps else np.zeros((len(runs), 0)))


def _aligned(name: str, values: Mapping[str, np.ndarray] | None, slopes: TruthSlopes, topic: str,
             default: float | None = None) -> np.ndarray:
    n = len(slopes.labels[topic])
    if values is None:
        if default is None:
            raise BayevalInputError(f"{name}: required")
        return np.full(n, float(default))
    if topic not in values:
        raise BayevalInputError(f"{name}: no values for topic {topic!r}")
    out = np.asarray(values[topic], dtype=np.float64)
    if out.shape != (n,) or not np.all(np.isfinite(out)):
        raise BayevalInputError(f"{name}: topic {topic!r} needs {n} finite values, one per pooled document")
    return out


def _inclusion(inclusion: Mapping[str, np.ndarray], slopes: TruthSlopes, topic: str) -> np.ndarray:
    pi = _aligned("inclusion", inclusion, slopes, topic)
    if np.any((pi <= 0) | (pi > 1)):
        raise BayevalInputError(f"inclusion: topic {topic!r} needs probabilities in (0, 1]")
    return pi


def _weight_of(weight: float | Mapping[str, float], topic: str) -> float:
    if isinstance(weight, Mapping):
        if topic not in weight:
            raise BayevalInputError(f"weight: no weight for topic {topic!r}")
        weight = weight[topic]
    weight = float(weight)
    if not np.isfinite(weight):
        raise BayevalInputError(f"weight: must be finite, got {weight!r}")
    return weight


def design_variance_terms(slopes: TruthSlopes, inclusion: Mapping[str, np.ndarray],
                          predictions: Mapping[str, np.ndarray] | None,
                          weight: float | Mapping[str, float] = 0.0) -> dict[str, np.ndarray]:
    """Each pooled document's share of every run's design variance of MAP, per topic, shape (S, n_t):
    ``(1 - π_d)/π_d · (x_d - λ_t p_d)² · (∂MAP/∂x_d)²``.

    Parameters
    ----------
    slopes : TruthSlopes
    inclusion : mapping topic -> ndarray
        Inclusion probabilities in (0, 1], aligned with the pool.
    predictions : mapping topic -> ndarray, or None
        ``p_d`` aligned with the pool (any finite values: a recalibrated or oracle prediction need not be a
        probability); None: 0 everywhere (statAP).
    weight : float or mapping topic -> float
        ``λ``, one for all topics or one per topic (any finite value).
    """
    out = {}
    for t in slopes.topics:
        pi = _inclusion(inclusion, slopes, t)
        p = _aligned("predictions", predictions, slopes, t, default=0.0)
        out[t] = variance_terms(slopes.labels[t], p, pi, _weight_of(weight, t), slopes.slopes[t])
    return out


def design_variance(slopes: TruthSlopes, inclusion: Mapping[str, np.ndarray],
                    predictions: Mapping[str, np.ndarray] | None,
                    weight: float | Mapping[str, float] = 0.0) -> np.ndarray:
    """The design variance of every run's linearised model-assisted MAP, shape (S,): the sum of
    :func:`design_variance_terms` over topics and documents. ``weight = 0`` (or ``predictions = None``) is
    statAP's."""
    terms = design_variance_terms(slopes, inclusion, predictions, weight)
    return sum((v.sum(axis=1) for v in terms.values()), np.zeros(len(slopes.systems)))


def oracle_weight(slopes: TruthSlopes, inclusion: Mapping[str, np.ndarray], predictions: Mapping[str, np.ndarray],
                  *, per_topic: bool = False) -> float | dict[str, float]:
    """The λ that minimises the runs' summed design variance ``Σ_s V_s(λ)``, in closed form:
    ``λ* = Σ c x p w / Σ c p² w`` with ``c = (1 - π)/π`` and ``w_d = Σ_s (∂MAP_s/∂x_d)²``, over every topic
    (one λ, as :func:`bayeval.sampling.assisted_measures` tunes it) or per topic (``per_topic=True``: a dict).
    Not clipped to [0, 1]: the best regression coefficient on ``p``."""
    parts = {}
    for t in slopes.topics:
        parts[t] = (slopes.labels[t], _aligned("predictions", predictions, slopes, t),
                    _inclusion(inclusion, slopes, t), np.sum(slopes.slopes[t] ** 2, axis=0))
    if per_topic:
        return {t: best_weight(*v) for t, v in parts.items()}
    if not parts:
        return 0.0
    return best_weight(*(np.concatenate(arrs) for arrs in zip(*parts.values(), strict=True)))
