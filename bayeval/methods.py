"""The named method vocabularies, defined once (a light module: the CLI imports it at start-up).

- :data:`MOMENT_METHODS` — how :func:`bayeval.expected.expected_measures` computes E and Var of a measure.
- :data:`FIT_METHODS` — how a relevance model is fitted (:mod:`bayeval.relevance`).
- :data:`SELECTION_METHODS` — which document a judging campaign asks for next (:mod:`bayeval.selection`).
- :data:`STUDY_METHODS` — the methods a robustness study compares (:mod:`bayeval.experiments`).
"""

from __future__ import annotations

__all__ = ["DEFAULT_MOMENT_METHOD", "FIT_METHODS", "MOMENT_METHODS", "SELECTION_METHODS", "STUDY_METHODS"]

MOMENT_METHODS = ("delta", "exact", "mc", "paper")
"""Moments of a measure under uncertain relevance: ``"delta"`` (second-order delta method), ``"exact"``
(exact moments), ``"mc"`` (Monte Carlo), ``"paper"`` (the papers' closed form); docs/design.md."""

DEFAULT_MOMENT_METHOD = "exact"
"""The default of every ``method`` / ``--method`` that chooses moments (the Python API and the CLI alike):
exact moments, checked against enumeration; ``"delta"`` is the cheaper choice for all pairs of many runs
(docs/expected.md, docs/benchmarks.md)."""

FIT_METHODS = ("map", "laplace", "mcmc", "vi")
"""Fits of a relevance model: ``"map"`` (posterior mode, the fast path), ``"laplace"`` (Gaussian at the
mode), ``"mcmc"`` (NUTS), ``"vi"`` (ADVI)."""

SELECTION_METHODS = ("mtc", "rtc", "pool", "depth-pool")
"""Document selection: ``"mtc"`` (minimal test collections), ``"rtc"`` (MTC with the probabilities of a
relevance model), ``"pool"`` (incremental pooling), ``"depth-pool"`` (depth-k pooling)."""

STUDY_METHODS = ("mtc", "rtc", "bayes", "ip")
"""Methods of the robustness study: ``"mtc"`` and ``"rtc"`` (selection), ``"bayes"`` (RTC's judgments,
Bayesian confidence), ``"ip"`` (incremental pooling, the baseline)."""
