"""The models a user chooses from (bayeval.relevance.catalog) and the study variants that load by path."""

from __future__ import annotations

import shutil

import pytest
from conftest import run_cli, study_model

from bayeval.defaults import DEFAULT_MODEL
from bayeval.errors import FileFormatError
from bayeval.experiments.depth import parse_variant
from bayeval.relevance import catalog, config, load_config
from bayeval.relevance.catalog import models_listing, shipped_models


def test_the_listing_names_every_shipped_model_once_and_marks_the_default():
    text = models_listing()
    for m in shipped_models():
        assert text.count(f"  {m.name} ") == 1, m.name
    assert text.count("(default)") == 1
    default_line = next(i for i, line in enumerate(text.splitlines()) if line.startswith(f"  {DEFAULT_MODEL} "))
    block = " ".join(text.splitlines()[default_line:default_line + 3])
    assert "(default)" in block


def test_estimate_help_shows_when_to_use_each_model():
    rc, out, _ = run_cli("estimate", "--help")
    flat = " ".join(out.split())
    assert rc == 0
    for m in shipped_models():
        assert " ".join(m.when.split()) in flat, m.name


def _shipped_dir(tmp_path, monkeypatch, when_line: str):
    shutil.copy(config.models_dir() / "uniform.toml", tmp_path / "uniform.toml")
    text = (config.models_dir() / "smoothed.toml").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if not line.startswith("when")]
    (tmp_path / "smoothed.toml").write_text("\n".join(lines + [when_line]) + "\n", encoding="utf-8")
    monkeypatch.setattr(config, "models_dir", lambda: tmp_path)
    monkeypatch.setattr(catalog, "models_dir", lambda: tmp_path)


def test_a_shipped_model_without_when_is_refused_naming_the_file(tmp_path, monkeypatch):
    _shipped_dir(tmp_path, monkeypatch, "")
    with pytest.raises(FileFormatError, match="smoothed.toml.*one-line 'when'"):
        shipped_models()


def test_when_is_read_by_the_listing_and_ignored_by_the_model(tmp_path, monkeypatch):
    _shipped_dir(tmp_path, monkeypatch, 'when = "a test"')
    assert [(m.name, m.when) for m in shipped_models()][0] == ("smoothed", "a test")
    assert load_config(tmp_path / "smoothed.toml").kind == "smoothed"


def test_a_base_given_as_a_file_is_found_beside_the_configuration():
    cfg = load_config(study_model("hier-decay"))
    assert cfg.base.endswith("studies/models/rtc-decay.toml")
    assert load_config(cfg.base).rank.decay == "learned"


def test_a_depth_variant_takes_a_configuration_file():
    path = study_model("hier-level-shift")
    v = parse_variant(f"{path}/laplace+unseen")
    assert (v.model, v.fit, v.unseen, v.name) == (path, "laplace", True, "hier-level-shift/laplace+unseen")
    assert parse_variant(path).fit == "map"
    assert parse_variant("hier-default/laplace").model == "hier-default"
