"""Expected measures under uncertain relevance: E, Var, ΔAP/ΔMAP and P(Δ < 0) for all pairs.

Unjudged documents are relevant with probability p_i, independently (or, by Monte Carlo, with p
drawn from a posterior). :func:`expected_measures` gives E and Var of AP, P@k, nDCG@k, recall@k
per system and topic; :func:`compare_systems` gives E[Δ], Var[Δ] and the confidence P(Δ < 0) for
pairs of systems. Methods: the papers' closed form (``"paper"``), the delta method (``"delta"``),
exact quadrature (``"exact"``) and Monte Carlo (``"mc"``); see docs/expected.md. :func:`topic_tests` tests
every pair across topics (the population of topics), relevance uncertainty included (``"combined"``).
"""

from bayeval.data.probabilities import thin_draws
from bayeval.expected._api import ap_moments, compare_systems, delta_ap_moments, expected_measures
from bayeval.expected._reciprocal_rank import expected_reciprocal_rank
from bayeval.expected._results import ExpectedEvaluation, PairwiseComparison, p_less_normal
from bayeval.expected.across_topics import TOPIC_TESTS, TopicTests, topic_tests

__all__ = [
    "ExpectedEvaluation",
    "PairwiseComparison",
    "TOPIC_TESTS",
    "TopicTests",
    "ap_moments",
    "compare_systems",
    "delta_ap_moments",
    "expected_measures",
    "expected_reciprocal_rank",
    "p_less_normal",
    "thin_draws",
    "topic_tests",
]
