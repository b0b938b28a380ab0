"""trec_eval's measures on a rank cube, every topic of a system at once, and run by run from a stream.

The same kernels as :func:`bayeval.measures.evaluate` (docs/measures.md), given the rows the other way
round: there a row is one system's ranking of the topic at hand, here one topic's ranking by the system at
hand (:class:`~bayeval.measures._inputs.RankingInputs`), so every measure of the house's vocabulary
(:data:`~bayeval.measures.evaluation.TREC_EVAL`: ``AP``, ``AP@k``, ``P@k``, ``recall@k``, ``R-prec``,
``RR`` and MS MARCO's ``RR@10``, ``nDCG``, ``nDCG@k``, ``bpref``, ``infAP``, ``RankEff``, ``judged@k``, each
at a level of its own ``P(rel=2)@10`` and condensed ``P@20(j)``) comes out as the same double, bit for bit,
with no Python loop over topics.

- :func:`evaluate_cube`: a :class:`~bayeval.data.rankcube.RankCube` already in memory.
- :func:`evaluate_runs`: runs one at a time (a generator such as :func:`bayeval.io.iter_runs`), each coded
  against the qrels, scored and dropped: memory is one run whatever the number of runs (``bayeval measures``).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from bayeval.data.qrels import Qrels
from bayeval.data.rankcube import RankCube, RunCoder
from bayeval.data.run import Run
from bayeval.errors import BayevalInputError
from bayeval.measures._inputs import RankingInputs
from bayeval.measures.evaluation import TREC_EVAL, Evaluation, measure_values
from bayeval.measures.measure import Measure, parse_measures
from bayeval.progress import track

__all__ = ["evaluate_cube", "evaluate_runs"]


def _measures(measures) -> tuple[Measure, ...]:
    return tuple(TREC_EVAL.require(m, "measures") for m in parse_measures(measures))


def _system_values(ms: tuple[Measure, ...], judged, grades, lengths, judgments, level: int) -> np.ndarray:
    """``(M, T)``: every measure of one system's rankings of the T topics."""
    inputs = RankingInputs.from_cube(judged, grades, lengths, judgments, level)
    return np.stack([measure_values(inputs, m) for m in ms]) if ms else np.zeros((0, len(lengths)))


def evaluate_cube(cube: RankCube, measures: str | Measure | Iterable[str | Measure] = ("AP", "P@10", "nDCG@10")
                  ) -> Evaluation:
    r"""trec_eval's measures for every system and topic of ``cube``, vectorised over topics.

    Parameters
    ----------
    cube : RankCube
    measures : str, Measure or iterable
        ``"RR@10,nDCG@10,AP,R@1000"``, one :class:`~bayeval.measures.Measure` or a list
        (:data:`~bayeval.measures.evaluation.TREC_EVAL`'s families, any spelling :meth:`Measure.parse` reads).

    Returns
    -------
    Evaluation
        The result :func:`~bayeval.measures.evaluate` gives on the same runs (``values``, ``mean()`` …).

    Notes
    -----
    With :math:`x_{r}` the relevance of the document at rank r and R the topic's relevant documents:
    :math:`RR@k = 1/\min\{r \le k: x_r\}` (0 if none), :math:`AP = \frac1R\sum_r x_r\,\frac{1}{r}\sum_{j\le r}x_j`,
    :math:`recall@k = \frac1R\sum_{r\le k}x_r`, :math:`nDCG@k = DCG@k / IDCG@k` with gain the positive judged
    grade and discount :math:`1/\log_2(r+1)` — trec_eval 9.x's definitions (docs/measures.md), by the kernels
    of :mod:`bayeval.measures`, terms added in trec_eval's order: the same doubles as :func:`evaluate`.
    The measures need the judged documents only, so a cube with ``code_depth=0`` suffices.

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=3, n_systems=2, n_docs=40, depth=20, seed=1)
    >>> ev = evaluate_cube(RankCube.from_runs(col.runs, col.qrels), "RR@10,AP")
    >>> ev.values.shape, [str(m) for m in ev.measures]
    ((2, 2, 3), ['RR@10', 'AP'])
    """
    if not isinstance(cube, RankCube):
        raise BayevalInputError(f"cube: expected a RankCube, got {type(cube).__name__}")
    ms = _measures(measures)
    judgments = RankingInputs.topic_judgments(cube.judged_topic, cube.judged_grade, len(cube.topics))
    values = np.zeros((len(ms), len(cube.systems), len(cube.topics)))
    for s in range(len(cube.systems)):
        values[:, s] = _system_values(ms, cube.judged[s], cube.grades[s], cube.lengths[s], judgments,
                                      cube.relevance_level)
    values *= cube.has_results[None]
    return Evaluation(ms, cube.systems, cube.topics, values, cube.has_results)


def evaluate_runs(runs: Iterable[Run], qrels: Qrels,
                  measures: str | Measure | Iterable[str | Measure] = ("AP", "P@10", "nDCG@10"), *,
                  depth: int | None = None, progress: bool | None = None, total: int | None = None) -> Evaluation:
    """trec_eval's measures of ``runs``, taken one at a time: each run is coded against ``qrels``, scored on every
    topic at once and dropped (:class:`~bayeval.data.rankcube.RunCoder`), so memory is one run's, however many.

    Parameters
    ----------
    runs : iterable of Run
        E.g. :func:`bayeval.io.iter_runs` (files read one at a time) or a :class:`~bayeval.data.RunSet`.
    qrels : Qrels
    measures : str, Measure or iterable
        As :func:`evaluate_cube`.
    depth : int, optional
        Keep each run's top ``depth`` documents (``None``: everything, as trec_eval).
    progress : bool, optional
        Show a progress bar (default: on a terminal).
    total : int, optional
        The number of runs, for the progress bar.

    Returns
    -------
    Evaluation
        The topics and values of :func:`~bayeval.measures.evaluate` on ``RankData.build(runs, qrels,
        depth=depth)``: topics with judgments and results from at least one run, natural order.

    Examples
    --------
    >>> from bayeval.data import RankData
    >>> from bayeval.measures import evaluate
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=4, n_systems=3, n_docs=50, depth=20, judged_depth=5, seed=2)
    >>> ev = evaluate_runs(iter(col.runs), col.judgments, "AP,RR@10,bpref")
    >>> ref = evaluate(RankData.build(col.runs, col.judgments), "AP,RR@10,bpref")
    >>> bool((ev.values == ref.values).all()), ev.topics == ref.topics
    (True, True)
    """
    ms = _measures(measures)
    coder = RunCoder(qrels, depth=depth, code_depth=0)  # the measures need the judged documents only
    judgments = RankingInputs.topic_judgments(coder.judged_topic, coder.judged_grade, len(coder.topics))
    names, values, has = [], [], []
    for run in track(runs, total=total, description="measures", enabled=progress):
        c = coder.code(run)
        names.append(c.name)
        values.append(_system_values(ms, c.judged, c.grades, c.lengths, judgments, coder.relevance_level)
                      * c.has_results)
        has.append(c.has_results)
        del c, run
    if not names:
        raise BayevalInputError("runs: at least one run is needed")
    if len(set(names)) != len(names):
        raise BayevalInputError("runs: run names must be unique")
    has_results = np.stack(has)
    keep = np.flatnonzero(has_results.any(axis=0))
    if not len(keep):
        raise BayevalInputError("topics: the runs and the qrels have no topic in common")
    return Evaluation(ms, tuple(names), tuple(coder.topics[t] for t in keep), np.stack(values, axis=1)[:, :, keep],
                      has_results[:, keep])
