"""The corrections of p after the hierarchical model (bayeval.relevance.held_out_runs) are transforms of the model's p;
``[hierarchy]`` holds the model's priors only."""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import held_out_data, study_model

from bayeval.errors import BayevalInputError
from bayeval.relevance import held_out_runs, hierarchical, load_config
from bayeval.relevance._idata import model_record, rebuild_model
from bayeval.relevance.config import HeldOutRunsPrior, HierarchyPrior, config_from_dict, models_dir, read_toml
from bayeval.relevance.held_out_runs import ORDER, HeldOutCorrections
from bayeval.relevance.hierarchical import HierarchicalEstimator


def test_the_fit_is_the_model_then_the_corrections():
    """p of hier-level-shift = the corrections applied to the p of the same model with them off, exactly; and they
    move p (the held-out runs' documents), so the identity is not the model's p twice."""
    data = held_out_data(0)
    cfg = load_config(study_model("hier-level-shift"))
    bare = dataclasses.replace(cfg, held_out_runs=dataclasses.replace(cfg.held_out_runs, run_level_sd=0.0,
                                                                      run_shift_sd=0.0))
    full = HierarchicalEstimator(cfg).fit(data, "map")
    p_full = full.probabilities(draws=None).p
    p_model = HierarchicalEstimator(bare).fit(data, "map").probabilities(draws=None).p
    p_composed, _ = full.corrections().point(data, p_model)
    assert all(np.array_equal(a, b) for a, b in zip(p_full, p_composed, strict=True))
    assert max(float(np.abs(a - b).max()) for a, b in zip(p_full, p_model, strict=True)) > 1e-3  # measured 5e-3


def test_a_correction_the_configuration_leaves_off_needs_no_contributing_runs():
    c = HeldOutCorrections.build(held_out_data(0), load_config("hier-default").held_out_runs, 10)
    assert c.calibration_map is None
    assert (c.level.runs, c.shift.runs, c.reuse_prior.runs) == ((), (), ())
    assert ORDER.index("calibration_map") < ORDER.index("level") < ORDER.index("shift") < ORDER.index("reuse_prior")


def test_the_model_table_holds_the_model_only():
    """``[hierarchy]`` (HierarchyPrior) holds the model's priors, ``[held_out_runs]`` (HeldOutRunsPrior) the
    corrections: no key in both, every model key read by the model's module and none by the corrections'
    (docs/architecture.md)."""
    model = {f.name for f in dataclasses.fields(HierarchyPrior)}
    corrections = {f.name for f in dataclasses.fields(HeldOutRunsPrior)}
    assert not model & corrections
    read_by_model = set(re.findall(r"(?:prior|pr|hierarchy|h)\.(\w+)", inspect.getsource(hierarchical)))
    assert model <= read_by_model, sorted(model - read_by_model)
    assert not model - {"coverage_depth"} & set(re.findall(r"\.(\w+)", inspect.getsource(held_out_runs)))
    assert corrections <= set(re.findall(r"prior\.(\w+)", inspect.getsource(held_out_runs)))


def test_a_configuration_written_before_the_held_out_table_loads_the_same(tmp_path):
    """Keys of ``[held_out_runs]`` given in ``[hierarchy]`` (as files were written before the table existed) load into
    ``[held_out_runs]``: the same configuration as the file written the new way; a key given in both is refused."""
    new = (models_dir() / "hier-reuse.toml").read_text()
    write = lambda name, text: (tmp_path / name).write_text(text) and tmp_path / name  # noqa: E731
    old = new.replace("\n[held_out_runs]\n", "\n")
    assert old != new and "[held_out_runs]" not in old
    a, b = (config_from_dict(read_toml(write(f, t)), name="x") for f, t in (("new.toml", new), ("old.toml", old)))
    assert a == b and a.held_out_runs.reuse_run_sd > 0 and a.hierarchy == load_config("hier-default").hierarchy
    both = old.rstrip() + "\n\n[held_out_runs]\nreuse_run_sd = 1.0\n"
    with pytest.raises(BayevalInputError, match=r"\['reuse_run_sd'\] given in both \[hierarchy\] and \[held_out_runs"):
        config_from_dict(read_toml(write("both.toml", both)), name="x", source="both.toml")
    with pytest.raises(BayevalInputError, match="unknown key"):
        config_from_dict(read_toml(write("typo.toml", new.replace("reuse_run_sd", "reuse_run_sdd"))), name="x")


def test_a_fit_recorded_before_the_split_rebuilds_its_model():
    """A fit file records the model's prior; one written before the split holds the corrections' keys in it too:
    rebuilding drops them (the model never read them) and refuses any other unknown key."""
    m = HierarchicalEstimator().model(held_out_data(0))[0]
    attrs, constant = model_record(m)
    record = json.loads(attrs["bayeval_model"])
    record["fields"]["prior"]["value"].update(reuse_mean=-1.0, run_shift_sd=2.0, calibration_map="crossfit")
    cd = {k: SimpleNamespace(values=v) for k, v in constant.items()}
    back = rebuild_model({**attrs, "bayeval_model": json.dumps(record)}, cd)
    assert back.prior == m.prior
    record["fields"]["prior"]["value"]["nonsense"] = 1
    with pytest.raises(BayevalInputError, match="does not fit"):
        rebuild_model({**attrs, "bayeval_model": json.dumps(record)}, cd)

