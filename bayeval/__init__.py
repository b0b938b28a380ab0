"""bayeval: evaluation of search systems with incomplete relevance judgments.

The common path from one import (``import bayeval as bv``)::

    qrels = bv.read_qrels("qrels.txt.gz")
    runs = bv.read_runs(["runs/"])
    data = bv.RankData.build(runs, qrels)
    bv.evaluate(data, "AP,P@10")                 # trec_eval's measures
    est = bv.estimate(data, "rtc", fit="laplace")  # p of unjudged documents (+ posterior draws)
    bv.expected_measures(data, est)              # E and Var of the measures under uncertain relevance
    bv.compare(data, est, method="mc")           # P(ΔMAP < 0) for every pair of runs
    bv.report(data, est).save("report/")         # LaTeX/markdown tables and a figure

``estimate`` and ``compare`` are short for ``estimate_probabilities`` and ``compare_systems``, ``report``
for :func:`bayeval.reporting.make_report`; ``bv.expected`` is the subpackage (``bv.expected_measures`` its
main function). Names are imported on first use (PEP 562), so ``import bayeval`` is cheap and PyMC is
imported only when a relevance model is built or sampled (the ``map`` fast path never imports it).
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

# public name → (module, attribute)
_EXPORTS = {
    "Qrels": ("bayeval.data", "Qrels"),
    "RankData": ("bayeval.data", "RankData"),
    "RelevanceEstimate": ("bayeval.relevance", "RelevanceEstimate"),
    "Report": ("bayeval.reporting", "Report"),
    "RunSet": ("bayeval.data", "RunSet"),
    "bayesian_confidence": ("bayeval.relevance", "bayesian_confidence"),
    "compare": ("bayeval.expected", "compare_systems"),
    "compare_systems": ("bayeval.expected", "compare_systems"),
    "compare_priors": ("bayeval.relevance", "compare_priors"),
    "estimate": ("bayeval.relevance", "estimate_probabilities"),
    "estimate_probabilities": ("bayeval.relevance", "estimate_probabilities"),
    "evaluate": ("bayeval.measures", "evaluate"),
    "expected_measures": ("bayeval.expected", "expected_measures"),
    "load_config": ("bayeval.relevance", "load_config"),
    "read_probabilities": ("bayeval.io", "read_probabilities"),
    "read_qrels": ("bayeval.io", "read_qrels"),
    "read_run": ("bayeval.io", "read_run"),
    "read_runs": ("bayeval.io", "read_runs"),
    "make_report": ("bayeval.reporting", "make_report"),
    "report": ("bayeval.reporting", "make_report"),
}

__all__ = sorted(["__version__", *_EXPORTS])


def __getattr__(name: str):
    try:
        module, attr = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'bayeval' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
