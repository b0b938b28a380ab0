"""Running a judging loop against an assessor, and whole simulated campaigns against complete qrels."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from bayeval.data.qrels import Qrels
from bayeval.data.rankdata import RankData
from bayeval.data.run import Run, RunSet
from bayeval.data.topics import sort_topics
from bayeval.errors import BayevalInputError
from bayeval.progress import track
from bayeval.selection.assessors import QrelsAssessor
from bayeval.selection.methods import make_selector
from bayeval.selection.results import PairSimulation, SimulationResult
from bayeval.selection.selector import MTCSelector, Selector

__all__ = ["judge_until", "judge_until_done", "simulate", "true_differences"]


def _check_budget(budget) -> int | None:
    if budget is None:
        return None
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 0:
        raise BayevalInputError(f"budget: must be a non-negative integer, got {budget!r}")
    return int(budget)


def judge_until(selector: Selector, assessor, *, budget: int | None = None, until=None, after=None,
                progress: bool | None = None, topic_tolerance: float = 0.0) -> int:
    """Select one document at a time, ask ``assessor.judge(topic, docno)``, record; stop when ``until`` holds.

    Parameters
    ----------
    selector : Selector
    assessor
        Anything with ``judge(topic, docno) -> grade`` (:class:`~bayeval.selection.QrelsAssessor`).
    budget : int, optional
        At most this many judgments by this call.
    until : callable, optional
        ``until(selector) -> bool``, asked before each judgment; default: the selector is ``done`` (every
        target pair decided).
    after : callable, optional
        ``after(selector)``, called after each recorded judgment.
    progress : bool, optional
        Show a progress bar (default: only with a budget).
    topic_tolerance : float, default 0.0
        Keep the assessor on the topic of the last judgment while a document there scores at least
        ``1 - topic_tolerance`` of the best (:meth:`Selector.select`; 0: the exact algorithm).

    Returns
    -------
    int
        The number of judgments made. It stops as well when nothing useful is left to judge.
    """
    budget = _check_budget(budget)
    until = (lambda sel: sel.done) if until is None else until
    made = 0
    last = selector.history[-1][0] if selector.history else None
    steps = itertools.count() if budget is None else range(budget)
    for _ in track(steps, total=budget, description=f"judging ({selector.method})",
                   enabled=False if progress is None and budget is None else progress):
        if until(selector):
            break
        cands = selector.select(1, stay_on=last, tolerance=topic_tolerance)
        if not cands:
            break
        c = cands[0]
        selector.record(c.topic, c.docno, assessor.judge(c.topic, c.docno))
        last = c.topic
        made += 1
        if after is not None:
            after(selector)
    return made


#: :func:`judge_until` with its default stop (every target pair decided), under its older name.
judge_until_done = judge_until


def true_differences(runs, qrels: Qrels, *, pairs=None, measure="AP", depth: int | None = None,
                     topics: Sequence[str] | None = None, gain: str = "exponential") -> np.ndarray:
    """The mean differences of the target pairs on the complete ``qrels`` (unjudged documents nonrelevant)."""
    data = RankData.build(runs, qrels, depth=depth, topics=topics)
    full = MTCSelector(data, pairs=pairs, measure=measure, default_p=0.0, gain=gain)
    return np.asarray(full.status().expected)


def simulate(runs: RunSet | Sequence[Run], qrels: Qrels, *, method: str = "mtc", measure="AP", alpha: float = 0.95,
             depth: int | None = 100, budget: int | None = None, pairs=None, initial: Qrels | None = None,
             seed=0, progress: bool | None = None, topic_tolerance: float = 0.0, **kwargs) -> SimulationResult:
    """Run a whole judging campaign against a qrels replay and score its decisions.

    Parameters
    ----------
    runs : RunSet or sequence of Run
        The target runs.
    qrels : Qrels
        Complete judgments: the simulated assessor, and the truth the decisions are checked against.
    method : {"mtc", "rtc", "pool", "depth-pool"}
    measure : str
        ``"AP"``, ``"P@k"``, ``"DCG@k"``, ``"recall@k"``.
    alpha : float
        Confidence level at which a pair is decided.
    depth : int, optional
        Cut every run to its top ``depth`` documents (default 100).
    budget : int, optional
        At most this many judgments.
    pairs : sequence of (run_a, run_b), optional
        Target pairs (default all pairs).
    initial : Qrels, optional
        Judgments available before the campaign starts.
    seed : int
        Seed of the relevance-model fits (RTC).
    topic_tolerance : float
        Stay on the last judged topic while a document there scores at least ``1 - topic_tolerance`` of the
        best anywhere (:meth:`Selector.select`; default 0, the exact algorithm).
    **kwargs
        To the selector (``refit_every``, ``config``, ``pool_depth``, ``moments``, ``default_p``, ``gain``, ...).

    Returns
    -------
    SimulationResult
        Judgments used, and per pair P(Δ<0), whether it was decided, and whether the decided sign
        matches the sign of the difference on the complete qrels (same depth, unjudged nonrelevant).

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=5, n_systems=3, n_docs=60, depth=20, seed=4)
    >>> res = simulate(col.runs, col.qrels, method="mtc", measure="P@10", depth=20)
    >>> res.judgments > 0, all(p.correct for p in res.pairs if p.decided)
    (True, True)
    """
    if not isinstance(qrels, Qrels):
        raise BayevalInputError(f"qrels: expected a Qrels, got {type(qrels).__name__}")
    runs = runs if isinstance(runs, RunSet) else RunSet(tuple(runs))
    topics = sorted(set(runs.topics) & set(qrels.topics), key=lambda t: (len(t), t))
    if not topics:
        raise BayevalInputError("qrels: no topic in common with the runs")

    topics = sort_topics(topics)
    data = RankData.build(runs, initial, depth=depth, topics=topics)
    if kwargs.get("max_grade") is None:  # the replayed assessor's highest grade bounds DCG
        top = max((int(qrels[t].grades.max(initial=0)) for t in topics if t in qrels), default=1)
        kwargs["max_grade"] = max(top, qrels.relevance_level)
    selector = make_selector(method, data, pairs=pairs, measure=measure, alpha=alpha, seed=seed, **kwargs)
    assessor = QrelsAssessor(qrels)
    judge_until(selector, assessor, budget=budget, progress=progress, topic_tolerance=topic_tolerance)
    st = selector.status()
    truth = true_differences(runs, qrels, pairs=pairs, measure=measure, depth=depth, topics=topics,
                             gain=kwargs.get("gain", "exponential"))
    out = []
    for k in range(len(st.run_a)):
        dec = bool(st.decided[k])
        true_sign = int(np.sign(np.round(truth[k], 12)))
        out.append(PairSimulation(st.run_a[k], st.run_b[k], float(st.p_less[k]), float(st.expected[k]), dec,
                                  int(st.sign[k]), float(truth[k]), (int(st.sign[k]) == true_sign) if dec else None))
    return SimulationResult(selector.method, st.measure, selector.alpha, selector.judgments, assessor.missing,
                            tuple(out), st, selector.history)
