"""Completed qrels (Büttcher et al. 2007): predict the relevance of unjudged documents, add them as judgments.

A *predictor* looks at the runs and the remaining judgments and returns, for the candidate documents
of every topic, a hard prediction (and, when it has them, probabilities of relevance). Two kinds:

- :class:`ModelPredictor` — one of bayeval's relevance models (RTC, similarity regression, …) gives p;
  the hard prediction marks the :math:`\\mathrm{round}(\\sum_i p_i)` most probable candidates relevant, so
  that the number predicted relevant is the expected number (no threshold to tune);
- :class:`~bayeval.bias.classifiers.TextClassifierPredictor` — the paper's KLD and SVM text classifiers,
  thresholded so that precision equals recall on the training judgments.

:func:`complete_qrels` turns the hard predictions into a completed qrels; the probabilities feed
bayeval's expected measures instead (no thresholding).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pandas as pd

from bayeval.data.qrels import Qrels, TopicJudgments
from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError
from bayeval.relevance import estimate_probabilities

__all__ = ["CandidatePrediction", "ModelPredictor", "Predictor", "complete_qrels", "expected_count_labels",
           "unjudged_candidates"]


@dataclass(frozen=True, eq=False)
class CandidatePrediction:
    """Predicted relevance of one topic's candidate documents.

    Attributes
    ----------
    docnos : ndarray of object, shape (n,)
    relevant : ndarray of bool, shape (n,)
        The hard prediction (what a completed qrels records).
    probability : ndarray of float64, shape (n,) or None
        Probability of relevance, when the predictor has one.
    """

    docnos: np.ndarray
    relevant: np.ndarray
    probability: np.ndarray | None = None

    def __post_init__(self) -> None:
        docnos = np.asarray(self.docnos, dtype=object)
        rel = np.asarray(self.relevant, dtype=bool)
        if rel.shape != docnos.shape:
            raise BayevalInputError("relevant: must have one entry per candidate document")
        prob = None
        if self.probability is not None:
            prob = np.asarray(self.probability, dtype=np.float64)
            if prob.shape != docnos.shape or not np.all((prob >= 0) & (prob <= 1)):
                raise BayevalInputError("probability: one value in [0, 1] per candidate document")
            prob.flags.writeable = False
        for arr in (docnos, rel):
            arr.flags.writeable = False
        object.__setattr__(self, "docnos", docnos)
        object.__setattr__(self, "relevant", rel)
        object.__setattr__(self, "probability", prob)


class Predictor(Protocol):
    """Anything with a ``name`` and ``predict(data, candidates) -> {topic: CandidatePrediction}``.

    ``data`` holds every run aligned with the remaining (reduced) judgments, truncated at the pool
    depth; ``candidates`` maps each topic to the unjudged docnos to predict.
    """

    name: str

    def predict(self, data: RankData, candidates: Mapping[str, np.ndarray]) -> dict[str, CandidatePrediction]:
        ...  # pragma: no cover


def unjudged_candidates(data: RankData, runs: Sequence[str], depth: int) -> dict[str, np.ndarray]:
    """Unjudged documents that any of ``runs`` retrieves within its top ``depth``, per topic.

    These are the documents a completed qrels must decide — the paper predicts "all documents that
    were removed from the pool (i.e., top 50 documents from the left-out runs)"; deeper documents stay
    unjudged (nonrelevant), as in the original qrels, so the completion does not reach past the pool.
    """
    idx = [data.system_index(r) for r in runs]
    out = {}
    for tr in data:
        top = tr.ranked[idx, :depth]
        docs = np.unique(top[top >= 0])
        docs = docs[~tr.judged[docs]]
        out[tr.topic] = tr.docnos[docs]
    return out


def expected_count_labels(p: np.ndarray) -> np.ndarray:
    r"""Mark the :math:`n = \mathrm{round}(\sum_i p_i)` most probable documents relevant.

    The number predicted relevant then equals the expected number of relevant documents (the
    analogue of the paper's precision = recall threshold). Ties at the boundary are broken by position.

    Examples
    --------
    >>> expected_count_labels(np.array([0.9, 0.2, 0.6, 0.1])).tolist()  # sum 1.8 -> 2
    [True, False, True, False]
    """
    p = np.asarray(p, dtype=np.float64)
    n = int(np.floor(p.sum() + 0.5))
    out = np.zeros(p.shape, dtype=bool)
    if n > 0:
        out[np.argsort(-p, kind="stable")[:n]] = True
    return out


def complete_qrels(qrels: Qrels, predictions: Mapping[str, CandidatePrediction], grade: int | None = None) -> Qrels:
    """``qrels`` plus the predicted documents as judgments (grade ``grade`` if relevant, else 0).

    Parameters
    ----------
    qrels : Qrels
        The reduced judgments the predictor was trained on.
    predictions : mapping topic → CandidatePrediction
        Documents already judged are an error.
    grade : int, optional
        Grade given to a predicted-relevant document (default the relevance level).

    Examples
    --------
    >>> q = Qrels.from_frame(pd.DataFrame({"topic": ["1"], "docno": ["a"], "grade": [1]}))
    >>> c = complete_qrels(q, {"1": CandidatePrediction(np.array(["b", "c"], object), np.array([True, False]))})
    >>> c.num_rel("1"), c.num_judged("1")
    (2, 3)
    """
    grade = qrels.relevance_level if grade is None else int(grade)
    out = dict(qrels.topic_judgments)
    for t, pred in predictions.items():
        if len(pred.docnos) == 0:
            continue
        old = out.get(t)
        if old is not None:
            clash = np.isin(pred.docnos, old.docnos)
            if clash.any():
                raise BayevalInputError(f"predictions: topic {t!r}: document {pred.docnos[clash][0]!r} is "
                                        "already judged")
            docnos = np.concatenate([old.docnos, pred.docnos])
            grades = np.concatenate([old.grades, np.where(pred.relevant, grade, 0)])
        else:
            docnos, grades = pred.docnos, np.where(pred.relevant, grade, 0)
        out[t] = TopicJudgments(np.asarray(docnos, dtype=object), np.asarray(grades, dtype=np.int64))
    return Qrels(out, qrels.relevance_level)


class ModelPredictor:
    """Probabilities of relevance from a bayeval relevance model; hard labels by the expected count.

    Parameters
    ----------
    model : str or config
        As :func:`bayeval.relevance.estimate_probabilities` takes it: ``"rtc"`` (default), ``"similarity"``,
        ``"smoothed"``, a configuration name or object.
    name : str, optional
        Label in result tables (default the model name).
    seed : int
        Seed of the fit.
    **kwargs
        Passed to :func:`~bayeval.relevance.estimate_probabilities` (``texts=`` for similarity regression,
        ``fit=``, ``depth=`` …).

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=2, n_systems=3, n_docs=40, depth=20, judged_depth=4, seed=3)
    >>> data = RankData.build(col.runs, col.judgments, depth=20)
    >>> cand = unjudged_candidates(data, col.runs.names[:1], 10)
    >>> pred = ModelPredictor("smoothed").predict(data, cand)
    >>> sorted(pred) == sorted(data.topics)
    True
    """

    def __init__(self, model="rtc", *, name: str | None = None, seed: int = 0, **kwargs) -> None:
        self.model = model
        self.name = name or (model if isinstance(model, str) else getattr(model, "name", "model"))
        self.seed = seed
        self.kwargs = kwargs

    def probabilities(self, data: RankData) -> list[np.ndarray]:
        """Per topic of ``data``, the probability of relevance of every document (judged: 0/1)."""
        est = estimate_probabilities(data, self.model, seed=self.seed, **self.kwargs)
        return [np.asarray(a, dtype=np.float64) for a in est.arrays()]

    def predict(self, data: RankData, candidates: Mapping[str, np.ndarray]) -> dict[str, CandidatePrediction]:
        arrays = self.probabilities(data)
        out = {}
        for tr, p in zip(data, arrays, strict=True):
            docs = np.asarray(candidates.get(tr.topic, ()), dtype=object)
            lookup = pd.Series(p, index=pd.Index(tr.docnos))
            missing = ~np.isin(docs, tr.docnos)
            if missing.any():
                raise BayevalInputError(f"candidates: topic {tr.topic!r}: document {docs[missing][0]!r} is not "
                                        "retrieved by any run within the model's depth")
            pc = np.clip(lookup.reindex(docs).to_numpy(dtype=np.float64), 0.0, 1.0)
            out[tr.topic] = CandidatePrediction(docs, expected_count_labels(pc), pc)
        return out

    def __repr__(self) -> str:
        return f"ModelPredictor({self.name!r})"
