"""Reusable test collections by design: the held-out-sites design and its analysis (SIGIR 2010).

Planning (:func:`plan_design`, :func:`design_table`: paper Table 2), the assignment of held-out
sites to topics (:func:`assign_design`: paper Table 1; :class:`Design`, csv via
:func:`write_design` / :func:`read_design`), simulation of the design on complete judgments
(:func:`simulate_design`), and the analysis of reusability (:func:`analyze_design`): agreement in
significance with power analysis and χ² tests (:func:`agreement_test`), Kendall's τ and RMSE, and
a plot of baseline vs reuse scores (:func:`plot_reuse`).

References
----------
.. [1] B. Carterette, E. Kanoulas, V. Pavlu, H. Fang. Reusable test collections through
   experimental design. SIGIR 2010.
"""

from bayeval.design.agreement import (
    AgreementTable,
    agreement_test,
    expected_table,
    goodness_of_fit,
    observed_table,
    pair_statistics,
)
from bayeval.design.analysis import KINDS, ReusabilityAnalysis, SignificanceAgreement, analyze_design
from bayeval.design.assign import Design, assign_design, held_out_combinations
from bayeval.design.files import read_design, read_scores, read_sites, write_design
from bayeval.design.plan import DesignPlan, DesignPlanTable, design_sizes, design_table, plan_design
from bayeval.design.plot import plot_reuse
from bayeval.design.power import effect_size, t_test_power
from bayeval.design.scores import TopicScores
from bayeval.design.significance import adjust_pvalues, power_alpha
from bayeval.design.simulate import SimulatedDesign, simulate_design
from bayeval.design.sites import site_labels

__all__ = [
    "KINDS",
    "AgreementTable",
    "Design",
    "DesignPlan",
    "DesignPlanTable",
    "ReusabilityAnalysis",
    "SignificanceAgreement",
    "SimulatedDesign",
    "TopicScores",
    "adjust_pvalues",
    "agreement_test",
    "analyze_design",
    "assign_design",
    "design_sizes",
    "design_table",
    "effect_size",
    "expected_table",
    "goodness_of_fit",
    "held_out_combinations",
    "observed_table",
    "pair_statistics",
    "plan_design",
    "plot_reuse",
    "power_alpha",
    "read_design",
    "read_scores",
    "read_sites",
    "simulate_design",
    "site_labels",
    "t_test_power",
    "write_design",
]
