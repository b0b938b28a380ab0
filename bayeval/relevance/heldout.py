r"""Held-out accuracy of probabilities of relevance, and the shallow-pool protocol.

Protocol (:func:`shallow_pool_split`): the judgments are the depth-``judged_depth`` pool over *all*
runs (every document some run ranks in its top ``judged_depth``, with its official judgment); the
systems whose unjudged documents are predicted are ``systems`` at depth ``depth``; the held-out targets
are the documents those systems retrieve (within ``depth``) that lie outside the shallow pool but have an
official judgment.

Scores (:func:`score_probabilities`): log loss :math:`-\frac1n\sum y\log p+(1-y)\log(1-p)`, AUC, Brier
:math:`\frac1n\sum(p-y)^2`, mean p against the rate of relevant targets, and the log loss of predicting
the constant rate (the bar a model must beat).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import rankdata

from bayeval.data.qrels import Qrels, pool_qrels
from bayeval.data.rankdata import RankData
from bayeval.data.run import RunSet
from bayeval.errors import BayevalInputError

__all__ = ["HeldOutSplit", "heldout_targets", "score_probabilities", "shallow_pool_split"]

_CLIP = 1e-6


def _auc(y: np.ndarray, p: np.ndarray) -> float:
    """Mann–Whitney AUC with ties counted 1/2."""
    n1 = int(y.sum())
    n0 = len(y) - n1
    if n1 == 0 or n0 == 0:
        return float("nan")
    r = rankdata(p)
    return float((r[y == 1].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def score_probabilities(y, p) -> dict[str, float]:
    """Log loss, AUC, Brier, mean p, rate and the constant-rate log loss of predictions ``p`` of ``y``.

    Examples
    --------
    >>> s = score_probabilities([1, 0, 0, 0], [0.25, 0.25, 0.25, 0.25])
    >>> round(s["log_loss"], 4) == round(s["base_log_loss"], 4), s["auc"]
    (True, 0.5)
    """
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    p = np.clip(np.asarray(p, dtype=np.float64).reshape(-1), _CLIP, 1 - _CLIP)
    if len(y) != len(p) or len(y) == 0:
        raise BayevalInputError(f"y, p: need the same positive length, got {len(y)} and {len(p)}")
    rate = float(y.mean())
    ll = float(-np.mean(y * np.log(p) + (1 - y) * np.log1p(-p)))
    rc = min(max(rate, _CLIP), 1 - _CLIP)
    base = float(-(rate * np.log(rc) + (1 - rate) * np.log1p(-rc)))
    return {"n": len(y), "log_loss": ll, "base_log_loss": base, "auc": _auc(y, p),
            "brier": float(np.mean((p - y) ** 2)), "mean_p": float(p.mean()), "rate": rate,
            "mean_p_ratio": float(p.mean() / rate) if rate > 0 else float("nan")}


@dataclass(frozen=True, eq=False)
class HeldOutSplit:
    """Training data (shallow judgments) and held-out targets.

    Attributes
    ----------
    data : RankData
        The systems at ``depth`` aligned with the shallow-pool judgments.
    targets : tuple of ndarray of int
        Per topic, indices (into ``data[t].docnos``) of the held-out documents.
    labels : tuple of ndarray of float
        Their official relevance (1/0).
    """

    data: RankData
    targets: tuple
    labels: tuple

    @property
    def n_targets(self) -> int:
        return int(sum(len(t) for t in self.targets))

    def gather(self, per_topic_p) -> tuple[np.ndarray, np.ndarray]:
        """(y, p) over all targets, from one p array per topic aligned with ``data[t].docnos``."""
        ps = [np.asarray(p)[..., idx] for p, idx in zip(per_topic_p, self.targets, strict=True)]
        return np.concatenate(self.labels), np.concatenate(ps, axis=-1)

    def score(self, per_topic_p) -> dict[str, float]:
        y, p = self.gather(per_topic_p)
        return score_probabilities(y, p)


def heldout_targets(data: RankData, truth: Qrels) -> tuple[tuple, tuple]:
    """Per topic, the unjudged documents of ``data`` that ``truth`` judges, and their relevance."""
    targets, labels = [], []
    for tr in data:
        tj = truth.topic_judgments.get(tr.topic)
        if tj is None:
            targets.append(np.zeros(0, np.int64))
            labels.append(np.zeros(0))
            continue
        grade = dict(zip(tj.docnos.tolist(), tj.grades.tolist(), strict=True))
        idx = [i for i in np.flatnonzero(~tr.judged) if tr.docnos[i] in grade]
        targets.append(np.asarray(idx, dtype=np.int64))
        labels.append(np.array([grade[tr.docnos[i]] >= truth.relevance_level for i in idx], dtype=np.float64))
    return tuple(targets), tuple(labels)


def shallow_pool_split(runs: RunSet, qrels: Qrels, systems: Sequence[str] | None = None, *,
                       judged_depth: int = 10, depth: int = 100) -> HeldOutSplit:
    """The shallow-pool protocol: depth-``judged_depth`` pool over all ``runs`` as judgments, ``systems`` at
    ``depth`` as the data, held-out targets = their retrieved documents outside the pool with an
    official judgment in ``qrels``."""

    judged = pool_qrels(runs, qrels, judged_depth)
    sel = runs if systems is None else _select(runs, systems)
    topics = [t for t in sel.topics if t in set(qrels.topics)]
    data = RankData.build(sel, judged, depth=depth, topics=topics)
    targets, labels = heldout_targets(data, qrels)
    return HeldOutSplit(data, targets, labels)


def _select(runs: RunSet, systems: Sequence[str]) -> RunSet:
    by = {r.name: r for r in runs}
    missing = [s for s in systems if s not in by]
    if missing:
        raise BayevalInputError(f"systems: unknown run(s) {missing}")
    return RunSet(tuple(by[s] for s in systems))
