"""Estimating measures from judgments sampled at random with known inclusion probabilities.

* :func:`inferred_measures` — xinfAP, infNDCG and iP@k from a stratified sample (Yilmaz, Kanoulas & Aslam,
  SIGIR 2008), exactly as NIST's ``sample_eval.pl`` computes them.

Formulas and papers: docs/sampling.md.
"""

from bayeval.sampling.inferred import InferredEvaluation, inferred_measures

__all__ = ["InferredEvaluation", "inferred_measures"]
