"""The named method vocabularies, defined once (a light module: the CLI imports it at start-up).

- :data:`MOMENT_METHODS` — how :func:`bayeval.expected.expected_measures` computes E and Var of a measure.
- :data:`FIT_METHODS` — how a relevance model is fitted (:mod:`bayeval.relevance`), and
  :data:`NUTS_SAMPLERS` — which sampler runs its ``"mcmc"``.
- :data:`SELECTION_METHODS` — which document a judging campaign asks for next (:mod:`bayeval.selection`).
- :data:`STUDY_METHODS` — the methods a robustness study compares (:mod:`bayeval.experiments`).
- :data:`TOPIC_TESTS` — the tests across topics of a pair of runs (:mod:`bayeval.expected.across_topics`), and
  :data:`ADJUSTMENTS` — the adjustments of a family of their p-values (:mod:`bayeval.stats.multiple`).
"""

from __future__ import annotations

__all__ = ["ADJUSTMENTS", "CLOSED_FORM_METHODS", "CONFIDENCES", "FIT_METHODS",
           "MOMENT_METHODS", "NUTS_SAMPLERS", "SELECTION_METHODS", "STUDY_METHODS", "TOPIC_TESTS"]

MOMENT_METHODS = ("delta", "exact", "mc", "paper")
"""Moments of a measure under uncertain relevance: ``"delta"`` (second-order delta method), ``"exact"``
(exact moments), ``"mc"`` (Monte Carlo), ``"paper"`` (the papers' closed form); docs/expected.md."""

CLOSED_FORM_METHODS = tuple(m for m in MOMENT_METHODS if m != "mc")
"""The moment methods in closed form (every method but Monte Carlo): one pass per point p."""

CONFIDENCES = ("paper", "delta", "exact", "mc")
"""The moment methods in the order the robustness study reports its confidences (the papers' first)."""

FIT_METHODS = ("map", "laplace", "mcmc", "vi")
"""Fits of a relevance model: ``"map"`` (posterior mode, the fast path), ``"laplace"`` (Gaussian at the
mode), ``"mcmc"`` (NUTS), ``"vi"`` (ADVI)."""

NUTS_SAMPLERS = ("pymc", "nutpie")
"""NUTS implementations of ``"mcmc"``: PyMC's own sampler, or nutpie (the optional ``bayeval[nutpie]``)."""

SELECTION_METHODS = ("mtc", "rtc", "pool", "depth-pool")
"""Document selection: ``"mtc"`` (minimal test collections), ``"rtc"`` (MTC with the probabilities of a
relevance model), ``"pool"`` (incremental pooling), ``"depth-pool"`` (depth-k pooling)."""

STUDY_METHODS = ("mtc", "rtc", "bayes", "ip")
"""Methods of the robustness study: ``"mtc"`` and ``"rtc"`` (selection), ``"bayes"`` (RTC's judgments,
Bayesian confidence), ``"ip"`` (incremental pooling, the baseline)."""

TOPIC_TESTS = ("combined", "t", "wilcoxon", "randomization", "bootstrap")
"""Tests across topics: ``"combined"`` (the paired t-test on the expected per-topic differences plus the relevance
error every topic shares: topics and relevance in one probability), and the paired tests of
:func:`bayeval.stats.paired_pvalues` on the expected per-topic differences; docs/expected.md, "Across topics"."""

ADJUSTMENTS = ("none", "bonferroni", "holm", "bh")
"""Adjustments of a family of p-values: none, Bonferroni and Holm (family-wise error rate), Benjamini–Hochberg
(false discovery rate)."""
