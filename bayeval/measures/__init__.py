"""Standard IR measures, computed exactly as trec_eval 9.x does.

Three layers: array kernels that score every system of one topic at once from ``(systems, ranks)``
arrays in rank order (:func:`average_precision`, :func:`precision_at`, :func:`ndcg`, :func:`bpref` …),
measure values with a canonical name (:class:`Measure`: ``AP``, ``AP@100``, ``P@10``, ``nDCG@10``),
and :func:`evaluate`, which applies them to a :class:`~bayeval.data.RankData` and returns a frozen
:class:`Evaluation`.

Examples
--------
>>> from bayeval.data import RankData
>>> from bayeval.synthetic import make_collection
>>> col = make_collection(n_topics=3, n_systems=2, n_docs=40, depth=20, seed=4)
>>> ev = evaluate(RankData.build(col.runs, col.qrels), "AP,nDCG@10,bpref")
>>> [m.trec_eval_name for m in ev.measures]
['map', 'ndcg_cut_10', 'bpref']
"""

from bayeval.measures.average_precision import average_precision
from bayeval.measures.bpref import bpref
from bayeval.measures.evaluation import Evaluation, evaluate, topic_measure
from bayeval.measures.incomplete import inferred_ap, judged_at, rank_effectiveness
from bayeval.measures.measure import Measure, Provider, parse_measures
from bayeval.measures.ndcg import dcg_discounts, ndcg
from bayeval.measures.precision import precision_at, r_precision, recall_at
from bayeval.measures.reciprocal_rank import reciprocal_rank

__all__ = [
    "Evaluation",
    "Measure",
    "Provider",
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
