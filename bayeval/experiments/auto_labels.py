"""An automatic assessor simulated from human judgments, with the confusion of a real one.

An automatic assessor (an LLM, a cross-encoder) labels documents on its own grade scale, and its labels agree with
people's only in part, differently on different topics. To study what its labels are worth to an evaluation, this
module learns that confusion from pairs labelled by both (:func:`fit_label_confusion`; the TREC RAG 2025 pairs of
``../shared/data/rag25-labels``: human grades and UMBRELA's, 0–4) and simulates the assessor's labels of any
collection's documents from the collection's complete judgments (:func:`simulate_labels`), in two error modes:

- ``"independent"``: a document's label depends on its human grade and its topic only;
- ``"correlated"``: nonrelevant documents that some *favoured* runs rank high are labelled, with probability
  ``strength``, as a relevant document of the topic would be — as LLM assessors favour the documents LLM-based
  rankers retrieve (the errors then agree with some runs' rankings, which no map from label to relevance learned
  on a random sample undoes for those runs alone).

Notes
-----
The confusion is a Dirichlet per human grade ``h``: topic ``t``'s distribution of the assessor's grade given
``h`` is :math:`\\theta_{th}\\sim\\operatorname{Dir}(\\kappa_h m_h)`, with mean :math:`m_h` and concentration
:math:`\\kappa_h`; :math:`\\operatorname{Var}\\theta_{thg} = m_{hg}(1-m_{hg})/(\\kappa_h+1)` is the topic-to-topic
variation. :math:`\\alpha_h=\\kappa_h m_h` maximises the Dirichlet-multinomial likelihood of the per-topic counts
:math:`n_{thg}` of the source pairs (Minka 2000),

.. math::

    \\ell(\\alpha_h) = \\sum_t \\Big[\\ln\\Gamma(A_h) - \\ln\\Gamma(A_h + n_{th\\cdot})
    + \\sum_g \\ln\\Gamma(\\alpha_{hg} + n_{thg}) - \\ln\\Gamma(\\alpha_{hg})\\Big],
    \\qquad A_h = \\textstyle\\sum_g\\alpha_{hg}.

A collection's grade scale is mapped onto the source's human grades (its *rows*, :func:`grade_rows`): a
binary collection's nonrelevant documents take rows 0 and 1 (RAG's "irrelevant" and "related"), its relevant
ones rows 2 and 3, each document one row drawn in proportion to the rows' counts in the source; a three-grade
collection (Robust 2003: 0, 1 relevant, 2 highly relevant) 0 → rows 0–1, 1 → 2, 2 → 3; a collection graded
0–3 or 0–4 (DL 2020: 0 irrelevant, 1 related, 2 highly, 3 perfectly relevant, the scale UMBRELA's prompt uses)
row = grade. Simulated: for each topic and row a fresh :math:`\\theta_{th}`, for each document its row, then its
label from :math:`\\theta_{t,\\text{row}}`.

References
----------
Minka, T. (2000). Estimating a Dirichlet distribution. Technical report, MIT.
Upadhyay, S. et al. (2024). UMBRELA: UMbrela is the (Bing) RELevance Assessor. arXiv:2406.06519.
Clarke, C. L. A. & Dietz, L. (2024). LLM-based relevance assessment still can't replace human relevance
assessment. arXiv:2412.17156 (the bias towards LLM-based rankers).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize, special

from bayeval.data.qrels import Qrels
from bayeval.data.run import RunSet
from bayeval.errors import BayevalInputError

__all__ = ["SIMULATION_MODES", "LabelConfusion", "SimulatedLabels", "confusion_counts", "fit_label_confusion",
           "grade_rows", "simulate_labels"]

#: the error modes of :func:`simulate_labels`
SIMULATION_MODES = ("independent", "correlated")
#: bounds of ``ln α`` in the Dirichlet fit (κ up to about 1e5: no detectable topic variation)
_LOG_ALPHA = (-12.0, 11.0)


@dataclass(frozen=True)
class LabelConfusion:
    """An assessor's grade given a person's, per topic: a Dirichlet per human grade (:func:`fit_label_confusion`).

    Attributes
    ----------
    human_grades, label_grades : tuple of int
        The rows (people's grades) and the columns (the assessor's grades).
    mean : ndarray, shape (H, G)
        :math:`m_h`, each row's mean distribution of the assessor's grade.
    concentration : ndarray, shape (H,)
        :math:`\\kappa_h`: the smaller, the more the distribution varies from topic to topic.
    counts : ndarray, shape (H, G)
        The source's pairs counted (human grade × assessor's grade, all topics).
    topics : int
        Topics of the source.
    """

    human_grades: tuple[int, ...]
    label_grades: tuple[int, ...]
    mean: np.ndarray
    concentration: np.ndarray
    counts: np.ndarray
    topics: int

    @property
    def alpha(self) -> np.ndarray:
        """:math:`\\alpha_h = \\kappa_h m_h`, shape (H, G)."""
        return self.mean * self.concentration[:, None]

    def topic_variance(self) -> np.ndarray:
        """Topic-to-topic variance of each row's probabilities, :math:`m_{hg}(1-m_{hg})/(\\kappa_h+1)`."""
        return self.mean * (1.0 - self.mean) / (self.concentration[:, None] + 1.0)

    def sharpened(self, weight: float) -> LabelConfusion:
        """A better assessor: each row's mean moved a share ``weight`` of the way to agreement,
        :math:`m'_h = (1-w)\\,m_h + w\\,e_h` (label = human grade; ``weight`` 1: a perfect assessor on the source's
        scale), the concentrations kept.

        Raises
        ------
        BayevalInputError
            When ``weight`` is outside [0, 1] or the label scale lacks a human grade.
        """
        if not 0.0 <= float(weight) <= 1.0:
            raise BayevalInputError(f"weight: must lie in [0, 1], got {weight!r}")
        if max(self.human_grades) > max(self.label_grades):
            raise BayevalInputError("weight: the assessor's scale must hold every human grade to sharpen towards it")
        eye = np.zeros_like(self.mean)
        eye[np.arange(len(self.human_grades)), list(self.human_grades)] = 1.0
        return LabelConfusion(self.human_grades, self.label_grades, (1 - weight) * self.mean + weight * eye,
                              self.concentration, self.counts, self.topics)

    def to_frame(self) -> pd.DataFrame:
        """One row per human grade: its pairs, :math:`\\kappa_h` and the mean probability of each label grade."""
        out = pd.DataFrame(self.mean, columns=[f"label_{g}" for g in self.label_grades])
        out.insert(0, "concentration", self.concentration)
        out.insert(0, "pairs", self.counts.sum(axis=1).astype(np.int64))
        out.insert(0, "human", list(self.human_grades))
        return out


def confusion_counts(human: Qrels, labels: Qrels) -> tuple[tuple[str, ...], tuple[int, ...], tuple[int, ...],
                                                             np.ndarray]:
    """Per topic, the pairs both judged counted by human grade × label grade.

    Returns
    -------
    topics, human_grades, label_grades : tuples
    counts : ndarray of int, shape (T, H, G)
        Over the pairs both judged (documents of one alone are left out); negative grades (unjudged) too.
    """
    rows = []
    for t in human.topics:
        if t not in labels.topic_judgments:
            continue
        hj, lj = human[t], labels[t]
        pos = pd.Index(lj.docnos).get_indexer(hj.docnos)
        both = pos >= 0
        rows.append(pd.DataFrame({"topic": t, "human": hj.grades[both], "label": lj.grades[pos[both]]}))
    frame = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=["topic", "human", "label"])
    frame = frame[(frame.human >= 0) & (frame.label >= 0)]
    if frame.empty:
        raise BayevalInputError("labels: no (topic, document) pair judged by both the people and the assessor")
    topics = tuple(sorted(frame.topic.unique()))
    hg = tuple(range(int(frame.human.max()) + 1))
    lg = tuple(range(int(frame.label.max()) + 1))
    counts = np.zeros((len(topics), len(hg), len(lg)), dtype=np.int64)
    ti = pd.Index(topics).get_indexer(frame.topic)
    np.add.at(counts, (ti, frame.human.to_numpy(np.int64), frame.label.to_numpy(np.int64)), 1)
    return topics, hg, lg, counts


def _dirichlet_multinomial_fit(counts: np.ndarray) -> np.ndarray:
    """α maximising the Dirichlet-multinomial likelihood of ``counts`` (topics × grades; see the module)."""
    counts = counts[counts.sum(axis=1) > 0].astype(np.float64)
    n = counts.sum(axis=1)
    pooled = (counts.sum(axis=0) + 0.5) / (n.sum() + 0.5 * counts.shape[1])

    def negll(log_a):
        a = np.exp(log_a)
        big_a = a.sum()
        ll = np.sum(special.gammaln(big_a) - special.gammaln(big_a + n)) \
            + np.sum(special.gammaln(a[None, :] + counts) - special.gammaln(a)[None, :])
        psi = special.digamma(big_a) - special.digamma(big_a + n)
        grad = a * (psi.sum() + np.sum(special.digamma(a[None, :] + counts), axis=0)
                    - len(n) * special.digamma(a))
        return -ll, -grad

    start = np.log(pooled * 10.0)
    res = optimize.minimize(negll, start, jac=True, method="L-BFGS-B",
                            bounds=[_LOG_ALPHA] * counts.shape[1])
    return np.exp(res.x)


def fit_label_confusion(human: Qrels, labels: Qrels) -> LabelConfusion:
    """Learn an assessor's confusion with people, per human grade and its topic-to-topic variation.

    Parameters
    ----------
    human : Qrels
        People's grades.
    labels : Qrels
        The assessor's grades of (some of) the same pairs.

    Returns
    -------
    LabelConfusion
        Each human grade's Dirichlet (the module's Notes) fitted by maximum likelihood on the per-topic counts.

    Raises
    ------
    BayevalInputError
        When no pair is judged by both.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.data import Qrels, TopicJudgments
    >>> docs = np.array(["a", "b", "c", "d"])
    >>> h = Qrels({"1": TopicJudgments(docs, np.array([0, 0, 1, 1]))})
    >>> a = Qrels({"1": TopicJudgments(docs, np.array([0, 1, 1, 1]))})
    >>> fit_label_confusion(h, a).counts.tolist()
    [[1, 1], [0, 2]]
    """
    topics, hg, lg, counts = confusion_counts(human, labels)
    alpha = np.vstack([_dirichlet_multinomial_fit(counts[:, h, :]) if counts[:, h, :].sum() > 0
                       else np.full(len(lg), 1.0 / len(lg)) for h in range(len(hg))])
    kappa = alpha.sum(axis=1)
    return LabelConfusion(hg, lg, alpha / kappa[:, None], kappa, counts.sum(axis=0), len(topics))


def grade_rows(confusion: LabelConfusion, grades: Sequence[int]) -> dict[int, dict[int, float]]:
    """The source rows (human grades of ``confusion``) each of a collection's ``grades`` takes, with weights.

    The module's Notes say how: by the collection's top grade — 1 (binary): 0 → rows 0–1, 1 → rows 2–3; 2
    (Robust 2003): 0 → 0–1, 1 → 2, 2 → 3; 3 or more: row = grade (a grade above the source's top row takes the
    top row). Within a group the weights are the rows' counts in the source.
    """
    grades = sorted({max(int(g), 0) for g in grades})
    top = max(grades) if grades else 0
    rows = np.asarray(confusion.human_grades)
    size = confusion.counts.sum(axis=1).astype(np.float64)
    if top <= 1:
        groups = {0: (0, 1), 1: (2, 3)}
    elif top == 2:
        groups = {0: (0, 1), 1: (2,), 2: (3,)}
    else:
        groups = {g: (min(g, int(rows.max())),) for g in range(top + 1)}
    out = {}
    for g, group in groups.items():
        keep = [r for r in group if r <= rows.max()]
        if not keep:
            raise BayevalInputError(f"confusion: the source has no human grade {group} for the collection's "
                                    f"grade {g}")
        w = np.array([max(size[r], 1.0) for r in keep])
        out[g] = {int(r): float(x) for r, x in zip(keep, w / w.sum(), strict=True)}
    return out


@dataclass(frozen=True)
class SimulatedLabels:
    """An automatic assessor's simulated labels of a collection's documents (:func:`simulate_labels`).

    Attributes
    ----------
    mode : {"independent", "correlated"}
    frame : DataFrame
        One row per labelled document: ``topic, docno, value`` (the assessor's grade), ``human`` (the
        collection's grade), ``row`` (the source row it was simulated as), ``favoured`` (a nonrelevant document
        some favoured run ranks within ``favour_depth``) and ``biased`` (labelled as a relevant document).
    favoured_runs : tuple of str
    strength, favour_depth, relevance_level, seed
        The simulation's settings.
    """

    mode: str
    frame: pd.DataFrame
    favoured_runs: tuple[str, ...]
    strength: float
    favour_depth: int
    relevance_level: int
    seed: int

    def to_frame(self) -> pd.DataFrame:
        """``topic, docno, value``: the labels as an assessor would publish them."""
        return self.frame[["topic", "docno", "value"]].reset_index(drop=True)

    def qrels(self) -> Qrels:
        """The labels as qrels (the assessor's grades; relevant from ``relevance_level`` of the collection)."""
        return Qrels.from_frame(self.frame.rename(columns={"value": "grade"})[["topic", "docno", "grade"]],
                                relevance_level=self.relevance_level)

    def confusion(self) -> pd.DataFrame:
        """The collection's grade (rows) against the simulated label (columns), counted."""
        return pd.crosstab(self.frame.human, self.frame.value)


def _favoured_documents(runs: RunSet, favoured: Sequence[str], topic: str, depth: int) -> set:
    out: set = set()
    for name in favoured:
        run = runs[name]
        if topic in run.topics:
            out.update(run.ranking(topic)[:depth].tolist())
    return out


def _checked_simulation(truth: Qrels, confusion: LabelConfusion, mode: str, runs: RunSet | None,
                        favoured: Sequence[str], strength: float, favour_depth: int,
                        grade_map: Mapping[int, Mapping[int, float]] | None,
                        seed: int) -> tuple[tuple[str, ...], int, dict[int, dict[int, float]]]:
    """:func:`simulate_labels`'s arguments checked: the favoured runs, the relevance level and the grade map
    (collection grade -> {source row: weight}, :func:`grade_rows` unless given)."""
    if mode not in SIMULATION_MODES:
        raise BayevalInputError(f"mode: one of {', '.join(SIMULATION_MODES)}, got {mode!r}")
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        raise BayevalInputError(f"seed: an integer, got {seed!r}")
    if not 0.0 <= float(strength) <= 1.0:
        raise BayevalInputError(f"strength: must lie in [0, 1], got {strength!r}")
    if isinstance(favour_depth, bool) or not isinstance(favour_depth, (int, np.integer)) or favour_depth < 1:
        raise BayevalInputError(f"favour_depth: a positive integer, got {favour_depth!r}")
    favoured = tuple(str(f) for f in favoured)
    if mode == "correlated":
        if runs is None or not favoured:
            raise BayevalInputError("favoured: the correlated mode needs runs and at least one favoured run")
        missing = sorted(set(favoured) - set(runs.names))
        if missing:
            raise BayevalInputError(f"favoured: runs not in runs: {', '.join(missing)}")
    level = int(truth.relevance_level)
    all_grades = np.concatenate([np.maximum(truth[t].grades, 0) for t in truth.topics]) if truth.topics \
        else np.zeros(0, dtype=np.int64)
    gmap = grade_rows(confusion, all_grades.tolist()) if grade_map is None else \
        {int(g): {int(r): float(w) for r, w in m.items()} for g, m in grade_map.items()}
    unmapped = sorted(set(np.unique(all_grades).tolist()) - set(gmap))
    if unmapped:
        raise BayevalInputError(f"grade_map: no source rows for the collection's grades {unmapped}")
    if mode == "correlated" and level not in gmap:
        raise BayevalInputError(f"grade_map: no rows for the relevance level {level}")
    n_rows = len(confusion.human_grades)
    for g, m in gmap.items():
        if any(r < 0 or r >= n_rows for r in m) or not np.isclose(sum(m.values()), 1.0):
            raise BayevalInputError(f"grade_map: grade {g}'s rows must be source rows 0..{n_rows - 1} with "
                                    f"weights summing to 1, got {m}")
    return favoured, level, gmap


def simulate_labels(truth: Qrels, confusion: LabelConfusion, *, mode: str = "independent",
                    runs: RunSet | None = None, favoured: Sequence[str] = (), strength: float = 0.5,
                    favour_depth: int = 10, grade_map: Mapping[int, Mapping[int, float]] | None = None,
                    seed: int = 0) -> SimulatedLabels:
    """Simulate an automatic assessor's label of every document of ``truth``.

    Parameters
    ----------
    truth : Qrels
        The complete judgments (every document to label, with its human grade; negative grades count as 0).
    confusion : LabelConfusion
        The assessor's confusion with people (:func:`fit_label_confusion`).
    mode : {"independent", "correlated"}
        ``"independent"``: a label depends on the document's human grade and topic only. ``"correlated"``: a
        nonrelevant document (grade below ``truth.relevance_level``) that a ``favoured`` run ranks within
        ``favour_depth`` is, with probability ``strength``, labelled as a document of grade
        ``truth.relevance_level`` of its topic would be.
    runs : RunSet, optional
        The runs (``"correlated"`` only).
    favoured : sequence of str
        Names of the favoured runs (``"correlated"`` only; at least one).
    strength : float in [0, 1]
        The probability that a favoured nonrelevant document is labelled as relevant documents are.
    favour_depth : int >= 1
    grade_map : mapping, optional
        Collection grade -> {source row: weight} (default :func:`grade_rows`).
    seed : int

    Returns
    -------
    SimulatedLabels

    Notes
    -----
    For each topic (in sorted order) and source row ``h`` a draw :math:`\\theta_{th}\\sim\\operatorname{Dir}
    (\\alpha_h)`; for each document its row from ``grade_map`` and its label from :math:`\\theta_{t,\\text{row}}`.
    In ``"correlated"`` mode a favoured nonrelevant document's row is, with probability ``strength``, drawn from
    the rows of grade ``relevance_level`` instead. Expected label distribution of such a document:
    :math:`(1-s)\\,\\theta_{t,\\text{own}} + s\\,\\theta_{t,\\text{rel}}`.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval.data import Qrels, TopicJudgments
    >>> docs = np.array(["a", "b", "c", "d"])
    >>> h = Qrels({"1": TopicJudgments(docs, np.array([0, 0, 1, 1]))})
    >>> same = {0: {0: 1.0}, 1: {1: 1.0}}            # the source's scale is the collection's
    >>> lab = simulate_labels(h, fit_label_confusion(h, h), grade_map=same, seed=3)
    >>> lab.to_frame().columns.tolist()
    ['topic', 'docno', 'value']
    >>> len(lab.to_frame())
    4
    """
    favoured, level, gmap = _checked_simulation(truth, confusion, mode, runs, favoured, strength, favour_depth,
                                                grade_map, seed)
    alpha = confusion.alpha
    cum_rows = {g: (np.array(list(m)), np.cumsum(list(m.values()))) for g, m in gmap.items()}
    rng = np.random.default_rng(seed)
    parts = []
    for t in sorted(truth.topics):
        tj = truth[t]
        grades = np.maximum(tj.grades, 0).astype(np.int64)
        theta = np.vstack([rng.dirichlet(np.maximum(a, 1e-300)) for a in alpha])
        u_row, u_label, u_bias = rng.random(len(grades)), rng.random(len(grades)), rng.random(len(grades))
        row = np.empty(len(grades), dtype=np.int64)
        for g in np.unique(grades):
            at = grades == g
            r, c = cum_rows[int(g)]
            row[at] = r[np.minimum(np.searchsorted(c, u_row[at], side="right"), len(r) - 1)]
        fav = np.zeros(len(grades), dtype=bool)
        biased = np.zeros(len(grades), dtype=bool)
        if mode == "correlated":
            top = _favoured_documents(runs, favoured, t, int(favour_depth))
            fav = (grades < level) & np.isin(tj.docnos, np.array(sorted(top), dtype=object))
            biased = fav & (u_bias < float(strength))
            if biased.any():
                r, c = cum_rows[level]
                row[biased] = r[np.minimum(np.searchsorted(c, u_row[biased], side="right"), len(r) - 1)]
        cum = np.cumsum(theta[row], axis=1)
        label = np.minimum((u_label[:, None] > cum).sum(axis=1), len(confusion.label_grades) - 1)
        parts.append(pd.DataFrame({"topic": t, "docno": tj.docnos, "value": np.asarray(confusion.label_grades)[label],
                                   "human": tj.grades, "row": row, "favoured": fav, "biased": biased}))
    frame = pd.concat(parts, ignore_index=True) if parts else \
        pd.DataFrame(columns=["topic", "docno", "value", "human", "row", "favoured", "biased"])
    return SimulatedLabels(mode, frame, favoured if mode == "correlated" else (), float(strength),
                           int(favour_depth), level, int(seed))
