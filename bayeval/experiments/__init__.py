"""Simulation studies of evaluation with incomplete judgments, and their statistics.

- :func:`load_collection`, :class:`TestCollection` — runs and complete qrels on disk;
- :class:`RobustnessConfig`, :func:`run_trial` — one trial of the robustness study of carterette2007 §4.3
  (MTC, RTC and bayeval's Bayesian RTC judge two runs, then predict every pair of ten);
- :func:`run_study` — many trials in this process, on local cores or on a Dask cluster, resumable;
- :mod:`~bayeval.experiments.table` — the tidy trial table (parquet/csv);
- :func:`robustness_statistics` and friends — confidence bins, bookmaker W̄, judgments, Kendall τ,
  paired tests, breakdowns by pair type and run similarity, and the proper scores of P(ΔMAP < 0)
  (:func:`proper_scores`: Brier, log score, reliability bins, sharpness; :mod:`bayeval.stats.forecast`);
- :mod:`~bayeval.experiments.plots`, :mod:`~bayeval.experiments.report` — figures and markdown pages;
- :class:`SimilarityStudyConfig`, :func:`run_similarity_trial`, :func:`similarity_trajectory` — MTC+sim vs
  MTC+one vs incremental pooling (Carterette & Allan 2007), run by the same :func:`run_study`;
  :mod:`~bayeval.experiments.similarity_report` — its statistics and page.

See docs/robustness-trec8.md and docs/similarity-cranfield.md.
"""

from bayeval.experiments.execute import StudyRun, run_study
from bayeval.experiments.robustness import (
    CONFIDENCES,
    STUDY_METHODS,
    RobustnessConfig,
    TrialContext,
    pair_similarity,
    prepare_trial,
    run_trial,
    trial_seed,
)
from bayeval.experiments.similarity import (
    SIMILARITY_COLUMNS,
    SimilarityStudyConfig,
    expected_accuracy,
    run_similarity_trial,
    similarity_trajectory,
    write_cranfield_collection,
)
from bayeval.experiments.statistics import (
    RobustnessStatistics,
    bookmaker,
    calls,
    confidence_bins,
    paired_tests,
    proper_scores,
    robustness_statistics,
    wilson_interval,
)
from bayeval.io.collection import TestCollection, load_collection
from bayeval.io.trials import COLUMNS, completed_trials, read_table, write_table

__all__ = [
    "COLUMNS",
    "CONFIDENCES",
    "STUDY_METHODS",
    "RobustnessConfig",
    "RobustnessStatistics",
    "SIMILARITY_COLUMNS",
    "SimilarityStudyConfig",
    "StudyRun",
    "TestCollection",
    "TrialContext",
    "bookmaker",
    "calls",
    "completed_trials",
    "confidence_bins",
    "expected_accuracy",
    "load_collection",
    "pair_similarity",
    "paired_tests",
    "prepare_trial",
    "proper_scores",
    "read_table",
    "robustness_statistics",
    "run_study",
    "run_similarity_trial",
    "run_trial",
    "similarity_trajectory",
    "trial_seed",
    "wilson_interval",
    "write_cranfield_collection",
    "write_table",
]
