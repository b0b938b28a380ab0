r"""Every default of the method, in one place: the Python API and the command line read them from here.

A light module (no imports): the CLI reads it at start-up for its ``--help`` texts, and the API's signatures
name these constants, so a default is changed here once and nowhere else.

The model (:mod:`bayeval.relevance`)
    :data:`DEFAULT_MODEL`, :data:`DEFAULT_UNSEEN`, :data:`DEFAULT_FIT`; the posterior of a fit:
    :data:`POSTERIOR_DRAWS` per chain, :data:`TUNE`, :data:`CHAINS`; the draws of p an estimate keeps,
    :data:`P_DRAWS`, of which a closed-form moment method combines :data:`CLOSED_FORM_DRAWS`; the rank
    positions of the rank-coefficient model, :data:`MODEL_DEPTH`.
The expected measures (:mod:`bayeval.expected`)
    :data:`DEFAULT_MOMENT_METHOD`, :data:`DEFAULT_P`, the interval :data:`LEVEL`, the Monte Carlo draws of
    relevance :data:`MC_DRAWS` (the API) and :data:`CLI_MC_DRAWS` (the commands).
The data (:mod:`bayeval.io`, the commands)
    :data:`RELEVANCE_LEVEL` (trec_eval's ``-l``), :data:`STUDY_DEPTH` (the studies' run depth).
Every stochastic door
    :data:`SEED`.

**Where the API and the command line differ, and why.** Only the Monte Carlo draws of relevance. A command
prints one table that a person reads, so it spends 2000 draws: the Monte Carlo standard error of a probability
:math:`P(\Delta<0)` is at most :math:`\sqrt{0.25/n}`, 0.011 at :math:`n=2000`. The API is called inside the
studies' loops (thousands of trials, each comparing every pair), where the trials' spread dominates that error,
so it spends half: 0.016 at :math:`n=1000`. An estimate with posterior draws of p sets the draws itself (one
relevance draw per draw of p) in both.
"""

from __future__ import annotations

__all__ = [
    "CHAINS",
    "CLI_MC_DRAWS",
    "CLOSED_FORM_DRAWS",
    "DEFAULT_FIT",
    "DEFAULT_MODEL",
    "DEFAULT_MOMENT_METHOD",
    "DEFAULT_P",
    "DEFAULT_UNSEEN",
    "LEVEL",
    "MC_DRAWS",
    "MODEL_DEPTH",
    "POSTERIOR_DRAWS",
    "P_DRAWS",
    "RELEVANCE_LEVEL",
    "SEED",
    "STUDY_DEPTH",
    "TUNE",
]

# ---------------------------------------------------------------------------------------- the relevance model

#: The model every door fits when none is named: the hierarchical model with the reuse prior on runs that did not
#: contribute to the judgments (:mod:`bayeval.relevance.reuse_prior`) and p beyond the judged depth corrected and
#: widened by its held-out band (:mod:`bayeval.relevance.beyond_depth`); chosen on Robust 2003, DL 2020 and
#: synthetic collections, checked on TREC-8 (docs/depth.md, docs/calibration.md, docs/notes/default-combined.md).
DEFAULT_MODEL = "hier-reuse-depth"
#: Whether Chao's unseen relevant documents (:func:`bayeval.relevance.unseen.with_unseen`) enter R_t by default
#: for a hierarchical model (the studies' ``hier+unseen``).
DEFAULT_UNSEEN = True
#: The fit of a relevance model: its posterior mode (the fast path; no PyMC).
DEFAULT_FIT = "map"
#: Posterior draws per chain of a Laplace, NUTS or ADVI fit.
POSTERIOR_DRAWS = 1000
#: NUTS tuning steps per chain.
TUNE = 1000
#: Chains of a NUTS fit.
CHAINS = 4
#: Posterior draws of p an estimate keeps (thinned evenly from the fit's draws).
P_DRAWS = 200
#: Of those, the draws of p that a closed-form moment method combines by the law of total variance (evenly
#: spaced; each costs one closed-form pass).
CLOSED_FORM_DRAWS = 25
#: Rank positions of the rank-coefficient model when the runs are not cut (``--depth`` caps it).
MODEL_DEPTH = 100

# ---------------------------------------------------------------------------------------- the expected measures

#: How E and Var of a measure are computed: exact moments, checked against enumeration (docs/expected.md).
DEFAULT_MOMENT_METHOD = "exact"
#: p of an unjudged document that no model or file gives (MTC's assumption).
DEFAULT_P = 0.5
#: Level of the intervals.
LEVEL = 0.95
#: Monte Carlo draws of relevance in the Python API (module notes: why the API and the commands differ).
MC_DRAWS = 1000
#: Monte Carlo draws of relevance in the commands (``--mc-draws``).
CLI_MC_DRAWS = 2000

# ---------------------------------------------------------------------------------------- the data, the seed

#: The minimum grade counted relevant (trec_eval's ``-l``).
RELEVANCE_LEVEL = 1
#: Each run's top documents the studies keep (TREC's pools and submissions run to 1000; the studies to 100).
STUDY_DEPTH = 100
#: The seed of every stochastic door that is given none on the command line.
SEED = 0
