"""trec_eval measures on a :class:`~bayeval.data.rankcube.RankCube`, vectorised over topics.

The same values as :func:`bayeval.measures.evaluate` on the same runs (docs/measures.md), computed
for every topic at once with numpy: one pass over a system's ``(T, D)`` arrays per measure, no Python
loop over topics. Families: ``RR@k`` (reciprocal rank of the first relevant document within the top k,
MS MARCO's MRR@10 when averaged; ``RR`` without a cutoff is trec_eval's ``recip_rank``), ``AP``,
``AP@k``, ``nDCG@k``, ``nDCG``, ``recall@k``, ``P@k``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from bayeval.data.rankcube import RankCube
from bayeval.errors import BayevalInputError
from bayeval.measures.ndcg import dcg_discounts

__all__ = ["CUBE_MEASURES", "CubeEvaluation", "evaluate_cube", "parse_cube_measure"]

CUBE_MEASURES = ("RR", "AP", "nDCG", "recall", "P")
_NEEDS_CUTOFF = {"recall", "P"}


def parse_cube_measure(text: str) -> tuple[str, int | None]:
    """``"nDCG@10"`` → ``("nDCG", 10)``; ``"MRR@10"`` → ``("RR", 10)``.

    >>> parse_cube_measure("MRR@10"), parse_cube_measure("map")
    (('RR', 10), ('AP', None))
    """
    name, _, cut = str(text).strip().partition("@")
    family = {"rr": "RR", "mrr": "RR", "recip_rank": "RR", "ap": "AP", "map": "AP", "ndcg": "nDCG",
              "recall": "recall", "r": "recall", "p": "P"}.get(name.lower())
    if family is None:
        raise BayevalInputError(f"measures: {text!r} is not one of {', '.join(CUBE_MEASURES)} (with @k)")
    if cut:
        if not (cut.isascii() and cut.isdigit() and int(cut) >= 1):
            raise BayevalInputError(f"measures: cutoff of {text!r} must be a positive integer")
        k = int(cut)
    else:
        k = None
        if family in _NEEDS_CUTOFF:
            raise BayevalInputError(f"measures: {family} needs a cutoff, e.g. {family}@10")
    return family, k


def _name(family: str, k: int | None) -> str:
    return family if k is None else f"{family}@{k}"


@dataclass(frozen=True, eq=False)
class CubeEvaluation:
    """Per-topic values of measures on a :class:`RankCube` (the result of :func:`evaluate_cube`).

    Attributes
    ----------
    measures : tuple of str
    systems, topics : tuple of str
    values : ndarray of float64, shape (M, S, T)
        0 where a run has no results for a topic.
    has_results : ndarray of bool, shape (S, T)
    """

    measures: tuple[str, ...]
    systems: tuple[str, ...]
    topics: tuple[str, ...]
    values: np.ndarray
    has_results: np.ndarray

    def __post_init__(self) -> None:
        self.values.flags.writeable = False

    def mean(self) -> np.ndarray:
        """``(M, S)``: each run's mean over the topics it has results for (trec_eval's ``all``)."""
        n = self.has_results.sum(axis=1)
        total = np.where(self.has_results[None], self.values, 0.0).sum(axis=2)
        return np.divide(total, n, out=np.zeros_like(total), where=n > 0)


def _system_values(cube: RankCube, s: int, family: str, k: int | None, num_rel: np.ndarray,
                   ideal: dict) -> np.ndarray:
    level = cube.relevance_level
    width = cube.docs.shape[2] if k is None else min(k, cube.docs.shape[2])
    rel = cube.judged[s, :, :width] & (cube.grades[s, :, :width] >= level)
    if family == "RR":
        if width == 0:
            return np.zeros(len(cube.topics))
        first = np.argmax(rel, axis=1)
        return np.where(rel.any(axis=1), 1.0 / (first + 1.0), 0.0)
    if family == "P":
        return rel.sum(axis=1) / float(k)
    if family == "recall":
        return np.divide(rel.sum(axis=1), num_rel, out=np.zeros(len(num_rel)), where=num_rel > 0)
    if family == "AP":
        hits = np.cumsum(rel, axis=1, dtype=np.float64)
        prec = np.where(rel, hits / np.arange(1, width + 1), 0.0)
        return np.divide(prec.sum(axis=1), num_rel, out=np.zeros(len(num_rel)), where=num_rel > 0)
    if family == "nDCG":
        g = np.where(cube.judged[s, :, :width] & (cube.grades[s, :, :width] > 0), cube.grades[s, :, :width], 0)
        dcg = g @ dcg_discounts(width)
        idcg = ideal[k]
        return np.divide(dcg, idcg, out=np.zeros(len(idcg)), where=idcg > 0)
    raise AssertionError(family)


def _ideal_dcg(cube: RankCube, k: int | None) -> np.ndarray:
    """``(T,)``: DCG of the positive judged gains of each topic in decreasing order, to depth k."""
    gain = np.where(cube.judged_grade > 0, cube.judged_grade, 0).astype(np.float64)
    order = np.lexsort((-gain, cube.judged_topic))
    t, g = cube.judged_topic[order], gain[order]
    start = np.searchsorted(t, t, side="left")
    pos = np.arange(len(t)) - start
    keep = (pos < k) if k is not None else np.ones(len(t), bool)
    disc = dcg_discounts(int(pos.max()) + 1 if len(pos) else 1)
    return np.bincount(t[keep], weights=g[keep] * disc[pos[keep]], minlength=len(cube.topics))


def evaluate_cube(cube: RankCube, measures: str | Iterable[str] = ("RR@10", "nDCG@10", "AP", "recall@1000")
                  ) -> CubeEvaluation:
    r"""trec_eval's measures for every system and topic of ``cube``, vectorised over topics.

    Parameters
    ----------
    cube : RankCube
    measures : str or iterable of str
        ``"RR@10,nDCG@10,AP,recall@1000"`` or a list (module notes).

    Returns
    -------
    CubeEvaluation

    Notes
    -----
    With :math:`x_{r}` the relevance of the document at rank r and R the topic's relevant documents:
    :math:`RR@k = 1/\min\{r \le k: x_r\}` (0 if none), :math:`AP = \frac1R\sum_r x_r\,\frac{1}{r}\sum_{j\le r}x_j`,
    :math:`recall@k = \frac1R\sum_{r\le k}x_r`, :math:`nDCG@k = DCG@k / IDCG@k` with gain the positive judged
    grade and discount :math:`1/\log_2(r+1)` — trec_eval 9.x's definitions (docs/measures.md). Sums run in
    a different order from trec_eval's, so values can differ in the last bits (below 1e-12).

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=3, n_systems=2, n_docs=40, depth=20, seed=1)
    >>> ev = evaluate_cube(RankCube.from_runs(col.runs, col.qrels), "RR@10,AP")
    >>> ev.values.shape
    (2, 2, 3)
    """
    if not isinstance(cube, RankCube):
        raise BayevalInputError(f"cube: expected a RankCube, got {type(cube).__name__}")
    if isinstance(measures, str):
        measures = [m for m in measures.split(",") if m.strip()]
    specs = [parse_cube_measure(m) for m in measures]
    if not specs:
        raise BayevalInputError("measures: give at least one measure")
    num_rel = cube.num_rel
    ideal = {k: _ideal_dcg(cube, k) for f, k in specs if f == "nDCG"}
    values = np.zeros((len(specs), len(cube.systems), len(cube.topics)))
    for s in range(len(cube.systems)):
        for i, (f, k) in enumerate(specs):
            values[i, s] = _system_values(cube, s, f, k, num_rel, ideal)
    values *= cube.has_results[None]
    return CubeEvaluation(tuple(_name(f, k) for f, k in specs), cube.systems, cube.topics, values,
                          cube.has_results.copy())
