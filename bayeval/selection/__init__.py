"""Choosing what to judge: MTC and RTC selection, pooling baselines, assessors, judging campaigns.

- :class:`MTCSelector` — minimal test collections (Carterette, Allan & Sitaraman 2006): judge the
  document whose judgment can move an undecided difference most (AP, P@k, DCG@k, recall@k), over
  many topics and pairs, until :math:`P(\\Delta<0) \\ge \\alpha` or :math:`\\le 1-\\alpha` (or the bounds
  exclude 0);
- :class:`RTCSelector` — the same with the relevance model refitted every 10 judgments (carterette2007);
  :class:`RefitSelector` with any estimator (MTC+sim, MTC+one of Carterette & Allan 2007);
- :class:`IncrementalPoolSelector`, :class:`DepthPoolSelector` — pooling baselines, same interface;
- :class:`QrelsAssessor`, :func:`write_requests`, :func:`read_judgments` — simulated and human assessors;
- :class:`Campaign` — a judging campaign in one SQLite file that survives interruptions;
- :func:`simulate` — a whole campaign against complete qrels, scored against the truth.

See docs/judging.md.
"""

from bayeval.selection.assessors import JudgmentLine, QrelsAssessor, read_judgments, write_requests
from bayeval.selection.campaign import Campaign
from bayeval.selection.measure import SelectionMeasure
from bayeval.selection.methods import ESTIMATING_METHODS, SELECTION_METHODS, make_selector
from bayeval.selection.pooling import DepthPoolSelector, IncrementalPoolSelector, pool_order
from bayeval.selection.results import Candidate, PairSimulation, SelectionStatus, SimulationResult
from bayeval.selection.rtc import RefitSelector, RTCSelector
from bayeval.selection.selector import MTCSelector, Selector
from bayeval.selection.simulate import judge_until, judge_until_done, simulate, true_differences
from bayeval.selection.weights import (
    ap_coefficients,
    ap_weights,
    gain_values,
    linear_bounds,
    linear_weights,
)

__all__ = [
    "SELECTION_METHODS",
    "Campaign",
    "Candidate",
    "ESTIMATING_METHODS",
    "DepthPoolSelector",
    "IncrementalPoolSelector",
    "JudgmentLine",
    "MTCSelector",
    "PairSimulation",
    "QrelsAssessor",
    "RTCSelector",
    "RefitSelector",
    "SelectionMeasure",
    "SelectionStatus",
    "Selector",
    "SimulationResult",
    "ap_coefficients",
    "ap_weights",
    "gain_values",
    "judge_until",
    "judge_until_done",
    "linear_bounds",
    "linear_weights",
    "make_selector",
    "pool_order",
    "read_judgments",
    "simulate",
    "true_differences",
    "write_requests",
]
