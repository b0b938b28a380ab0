"""Standard IR measures, computed exactly as trec_eval does.

Each family has an array kernel working on all systems of one topic at once
(``(systems, depth)`` arrays in rank order); :func:`evaluate` applies them to a
:class:`~bayeval.data.RankData`.
"""

from bayeval.measures.average_precision import average_precision
from bayeval.measures.bpref import bpref
from bayeval.measures.evaluation import Evaluation, evaluate, topic_measure
from bayeval.measures.incomplete import inferred_ap, judged_at, rank_effectiveness
from bayeval.measures.measure import Measure, parse_measures
from bayeval.measures.ndcg import dcg_discounts, ndcg
from bayeval.measures.precision import precision_at, r_precision, recall_at
from bayeval.measures.reciprocal_rank import reciprocal_rank

__all__ = [
    "Evaluation",
    "Measure",
    "average_precision",
    "bpref",
    "dcg_discounts",
    "evaluate",
    "inferred_ap",
    "judged_at",
    "ndcg",
    "parse_measures",
    "precision_at",
    "r_precision",
    "rank_effectiveness",
    "recall_at",
    "reciprocal_rank",
    "topic_measure",
]
