"""The corrections of p after the hierarchical model (bayeval.relevance.held_out) are transforms of the model's p."""

from __future__ import annotations

import dataclasses

import numpy as np
from conftest import held_out_data, study_model

from bayeval.relevance import load_config
from bayeval.relevance.held_out import ORDER, HeldOutCorrections
from bayeval.relevance.hierarchical import HierarchicalEstimator


def test_the_fit_is_the_model_then_the_corrections():
    """p of hier-level-shift = the corrections applied to the p of the same model with them off, exactly; and they
    move p (the held-out runs' documents), so the identity is not the model's p twice."""
    data = held_out_data(0)
    cfg = load_config(study_model("hier-level-shift"))
    bare = dataclasses.replace(cfg, hierarchy=dataclasses.replace(cfg.hierarchy, run_level_sd=0.0, run_shift_sd=0.0))
    full = HierarchicalEstimator(cfg).fit(data, "map")
    p_full = full.probabilities(draws=None).p
    p_model = HierarchicalEstimator(bare).fit(data, "map").probabilities(draws=None).p
    p_composed, _ = full.corrections().point(data, p_model)
    assert all(np.array_equal(a, b) for a, b in zip(p_full, p_composed, strict=True))
    assert max(float(np.abs(a - b).max()) for a, b in zip(p_full, p_model, strict=True)) > 1e-3  # measured 5e-3


def test_a_correction_the_configuration_leaves_off_needs_no_contributing_runs():
    c = HeldOutCorrections.build(held_out_data(0), load_config("hier-default").hierarchy)
    assert c.calibration_map is None
    assert (c.level.runs, c.shift.runs, c.reuse_prior.runs) == ((), (), ())
    assert ORDER.index("calibration_map") < ORDER.index("level") < ORDER.index("shift") < ORDER.index("reuse_prior")
