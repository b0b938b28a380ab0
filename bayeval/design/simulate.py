r"""Simulating a held-out-sites design on a collection with (nearly) complete judgments.

For each topic, the judgments the design would have collected are those of ``qrels`` restricted to
a depth-d pool of the runs of the sites that *contribute* to the topic; every run (held out or not)
is then evaluated with those judgments. This is how the paper validates the design on Robust 2004
(§4.3): with complete judgments any pool can be replayed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from bayeval.data.qrels import Qrels, TopicJudgments
from bayeval.data.rankdata import RankData
from bayeval.data.run import RunSet
from bayeval.design.analysis import analyze_design
from bayeval.design.assign import Design
from bayeval.design.scores import TopicScores
from bayeval.design.sites import first_of, runs_in_design, site_labels
from bayeval.errors import BayevalInputError
from bayeval.measures import evaluate

__all__ = ["SimulatedDesign", "simulate_design"]


@dataclass(frozen=True, eq=False)
class SimulatedDesign:
    """The outcome of :func:`simulate_design`.

    Attributes
    ----------
    design : Design
    depth : int
        Pool depth.
    site_of : dict
        Run → site of the simulated runs.
    judgments : Qrels
        What the design collected: per topic, the judged documents of the contributing sites' pool.
    evaluation : Evaluation
        Per-topic measures of every run on ``judgments`` (the design's evaluation).
    truth : Evaluation or None
        The same measures on the complete ``qrels`` (for comparison plots), if requested.
    pools : DataFrame
        Per topic: ``topic, contributing_runs, held_out_sites, pool, judged, relevant,
        relevant_all`` (pool size, judged documents in it, relevant among them, relevant in qrels).
    dropped_runs : tuple of str
        Runs of sites outside the design (neither pooled nor evaluated).
    """

    design: Design
    depth: int
    site_of: dict = field(repr=False)
    judgments: Qrels = field(repr=False)
    evaluation: object = field(repr=False)
    truth: object = field(repr=False)
    pools: pd.DataFrame = field(repr=False)
    dropped_runs: tuple[str, ...] = ()

    def scores(self, measure: str | None = None) -> TopicScores:
        """Per-topic scores of one measure under the design's judgments (default the first)."""
        return TopicScores.from_evaluation(self.evaluation, measure)

    def true_scores(self, measure: str | None = None) -> TopicScores:
        """Per-topic scores of one measure on the complete qrels."""
        if self.truth is None:
            raise BayevalInputError("truth: the simulation was run with truth=False")
        return TopicScores.from_evaluation(self.truth, measure)

    def analyze(self, measure: str | None = None, **kwargs):
        """:func:`~bayeval.design.analyze_design` of :meth:`scores` (keyword arguments passed on)."""
        return analyze_design(self.scores(measure), self.design, self.site_of, **kwargs)

    def to_frame(self) -> pd.DataFrame:
        """Columns ``run, site, topic, measure, value`` (+ ``true_value`` with truth)."""
        ev = self.evaluation
        parts = []
        for i, m in enumerate(ev.measures):
            f = TopicScores(ev.systems, ev.topics, ev.values[i], str(m)).to_frame()
            if self.truth is not None:
                f["true_value"] = self.truth.values[i].ravel()
            parts.append(f)
        out = pd.concat(parts, ignore_index=True)
        out.insert(1, "site", out["run"].map(self.site_of))
        return out

    def summary(self) -> str:
        p = self.pools
        lines = [f"Simulated design: depth-{self.depth} pools of the contributing sites, {len(self.site_of)} runs, "
                 f"{self.design.n_topics} topics",
                 f"  judged per topic: mean {p['judged'].mean():.1f} (pool {p['pool'].mean():.1f}); relevant found: "
                 f"{int(p['relevant'].sum())} of {int(p['relevant_all'].sum())}"]
        if self.dropped_runs:
            lines.append(f"  ({len(self.dropped_runs)} runs of sites outside the design left out)")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"SimulatedDesign(depth={self.depth}, runs={len(self.site_of)}, topics={self.design.n_topics})"


def _evaluate(runs: RunSet, qrels: Qrels, topics: tuple[str, ...], measures):
    """The one place the per-topic measures are computed (trec_eval conventions, full run depth)."""
    return evaluate(RankData.build(runs, qrels, topics=topics), measures)


def simulate_design(runs: RunSet, qrels: Qrels, design: Design, sites, depth: int = 100,
                    measures: str | Iterable[str] = "AP", *, truth: bool = True) -> SimulatedDesign:
    r"""Build the judgments a design would have collected, and evaluate every run with them.

    Parameters
    ----------
    runs : RunSet
        The runs, each labelled with a site by ``sites``.
    qrels : Qrels
        (Nearly) complete judgments; every design topic must have some.
    design : Design
    sites : mapping or DataFrame
        Run → site. Every run needs a site; runs of sites outside the design are left out
        (``dropped_runs``).
    depth : int
        Depth of the pool of the contributing sites' runs (100 in the paper's Robust 2004 study).
    measures : str or iterable
        Measures computed per topic (any of :mod:`bayeval.measures`, e.g. ``"AP,P@10"``); AP by default.
    truth : bool
        Also evaluate on the complete ``qrels`` (``SimulatedDesign.truth``).

    Returns
    -------
    SimulatedDesign

    Notes
    -----
    For topic t with contributing sites :math:`C_t`, the pool is
    :math:`P_t = \bigcup_{r:\,site(r) \in C_t} \mathrm{top}_d(r, t)` and the collected judgments are
    :math:`\{(d, g) \in qrels_t : d \in P_t\}`. Pooled documents without a judgment in ``qrels``
    stay unjudged (nonrelevant, as trec_eval treats them). Every run is then evaluated at its full
    depth, held-out runs included: their unpooled documents are what reusability is about.

    References
    ----------
    .. [1] Carterette et al., SIGIR 2010, §4.3.

    Examples
    --------
    >>> from bayeval.design import assign_design
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=12, n_systems=6, n_docs=120, depth=50, seed=2)
    >>> site_of = {r: f"G{i // 2}" for i, r in enumerate(col.runs.names)}     # 3 sites, 2 runs each
    >>> design = assign_design(col.qrels.topics, ["G0", "G1", "G2"], k=1, min_baseline=3)
    >>> sim = simulate_design(col.runs, col.qrels, design, site_of, depth=10)
    >>> sim.scores().values.shape
    (6, 12)
    """
    if not isinstance(runs, RunSet):
        runs = RunSet(tuple(runs))
    if not isinstance(qrels, Qrels):
        raise BayevalInputError(f"qrels: expected Qrels, got {type(qrels).__name__}")
    if not isinstance(design, Design):
        raise BayevalInputError(f"design: expected a Design, got {type(design).__name__}")
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1:
        raise BayevalInputError(f"depth: must be a positive integer, got {depth!r}")
    site_all = site_labels(sites)
    keep, dropped = runs_in_design(runs.names, site_all, design.sites)
    runs = runs.select(keep)
    site_of = {r: site_all[r] for r in keep}
    absent = [t for t in design.topics if qrels.num_judged(t) == 0]
    if absent:
        raise BayevalInputError(f"qrels: no judgments for design topic {first_of(absent)}")
    site_idx = np.array([design.site_index(site_of[r]) for r in keep])
    collected: dict[str, TopicJudgments] = {}
    rows = []
    for t_i, topic in enumerate(design.topics):
        contributing = design.contributes[t_i, site_idx]
        pool_parts = [run.ranking_array(topic, int(depth)) for run, c in zip(runs, contributing, strict=True) if c]
        pool = pa.concat_arrays(pool_parts).unique() if pool_parts else pa.array([], type=pa.string())
        tj = qrels[topic]
        in_pool = np.asarray(pc.is_in(pa.array(tj.docnos, type=pa.string()), value_set=pool)
                             .to_numpy(zero_copy_only=False), dtype=bool)
        collected[topic] = TopicJudgments(tj.docnos[in_pool], tj.grades[in_pool],
                                          None if tj.inclusion is None else tj.inclusion[in_pool])
        rel = tj.grades >= qrels.relevance_level
        rows.append({"topic": topic, "contributing_runs": int(contributing.sum()),
                     "held_out_sites": " ".join(design.held_out(topic)), "pool": len(pool),
                     "judged": int(in_pool.sum()), "relevant": int((rel & in_pool).sum()),
                     "relevant_all": int(rel.sum())})
    judgments = Qrels(collected, qrels.relevance_level)
    evaluation = _evaluate(runs, judgments, design.topics, measures)
    true_ev = _evaluate(runs, qrels, design.topics, measures) if truth else None
    return SimulatedDesign(design, int(depth), site_of, judgments, evaluation, true_ev, pd.DataFrame(rows), dropped)
