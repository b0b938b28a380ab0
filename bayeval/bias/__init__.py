"""Evaluating systems that did not contribute to the pool (Büttcher et al. 2007) — and repairing the bias.

- :mod:`~bayeval.bias.pool` — run groups and types, pooled runs, which groups contributed each judged
  document (annotated qrels, or computed from the runs);
- :mod:`~bayeval.bias.reduce` — biased qrels: leave one group out, automatic-only;
- :mod:`~bayeval.bias.study` — the two studies and their statistics (:class:`BiasStudy`: the paper's
  Tables 2/3 and, with predictors, 7/8);
- :mod:`~bayeval.bias.completion` — completed qrels from predicted relevance (:class:`ModelPredictor`:
  bayeval's relevance models, hard labels at the expected count);
- :mod:`~bayeval.bias.classifiers` — the paper's KLD and SVM text classifiers;
- :mod:`~bayeval.bias.expected` — expected measures (with E[RR]) from the predicted probabilities;
- :mod:`~bayeval.bias.statistics` — rank changes, RMS error, paired t-tests, Kendall's τ;
- :mod:`~bayeval.bias.cranfield` — the Cranfield collection and retrieval runs over its texts;
- :mod:`~bayeval.bias.plot` — score shift per run.
"""

from bayeval.bias.classifiers import CLASSIFIERS, TextClassifierPredictor, kld_scores, threshold_at_count
from bayeval.bias.completion import (
    CandidatePrediction,
    ModelPredictor,
    Predictor,
    complete_qrels,
    expected_count_labels,
    unjudged_candidates,
)
from bayeval.bias.expected import expected_reciprocal_rank, expected_scores
from bayeval.bias.pool import (
    Contributions,
    RunGroups,
    contributions_from_runs,
    pooled_runs,
    read_contributions,
    read_run_groups,
)
from bayeval.bias.reduce import automatic_only_qrels, leave_group_out_qrels, remove_judgments
from bayeval.bias.statistics import rank_among, ranks
from bayeval.bias.study import DEFAULT_MEASURES, SCENARIOS, BiasStudy, leave_one_group_out, manual_only

__all__ = [
    "CLASSIFIERS",
    "DEFAULT_MEASURES",
    "SCENARIOS",
    "BiasStudy",
    "CandidatePrediction",
    "Contributions",
    "ModelPredictor",
    "Predictor",
    "RunGroups",
    "TextClassifierPredictor",
    "automatic_only_qrels",
    "complete_qrels",
    "contributions_from_runs",
    "expected_count_labels",
    "expected_reciprocal_rank",
    "expected_scores",
    "kld_scores",
    "leave_group_out_qrels",
    "leave_one_group_out",
    "manual_only",
    "pooled_runs",
    "rank_among",
    "ranks",
    "read_contributions",
    "read_run_groups",
    "remove_judgments",
    "threshold_at_count",
    "unjudged_candidates",
]
