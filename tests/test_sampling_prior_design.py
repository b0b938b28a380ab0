"""statAP's own design: the AP-prior (:func:`ap_prior`), inclusion in proportion to it (:func:`prior_inclusion`),
and the sampling study's ``--design prior`` (the default ``rank`` unchanged)."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd
import pytest
from conftest import run_cli

from bayeval.data import RankData
from bayeval.errors import BayevalInputError
from bayeval.experiments import load_collection
from bayeval.experiments.sampling import (
    SamplingStudyConfig,
    draw_pool_sample,
    read_sampling_table,
    run_sampling_trial,
    sampling_settings,
)
from bayeval.sampling.design import ap_prior, poisson_draw, prior_inclusion, rank_inclusion, rank_stratum


# ----------------------------------------------------------------------------------------------- the library
def test_ap_prior_by_hand():
    # Z = 3: a(r) = (1 + Σ_{i=r}^{3} 1/i) / 6 = 17/36, 11/36, 8/36 (sum 1); two runs, averaged
    ranks = np.array([[1, 0], [2, 1], [3, 2], [0, 3]])
    assert np.allclose(ap_prior(ranks, 3), np.array([17, 28, 19, 8]) / 72)
    assert np.allclose(ap_prior(np.array([[1], [2], [3]]), 3), np.array([17, 11, 8]) / 36)
    # a rank beyond the depth counts as not retrieved
    assert ap_prior(np.array([[4], [1]]), 3)[0] == 0.0


@pytest.mark.parametrize("depth", [1, 10, 100])
def test_ap_prior_of_a_full_list_sums_to_one(depth):
    assert ap_prior(np.arange(1, depth + 1)[:, None], depth).sum() == pytest.approx(1.0)


def test_prior_inclusion_by_hand():
    # relative prior (17, 28, 19, 8)/28, no floor active; share 0.5 of 4 documents: π = (34, 56, 38, 16)/72
    pi = prior_inclusion(np.array([[1, 0], [2, 1], [3, 2], [0, 3]]), 0.5, 3)
    assert np.allclose(pi, np.array([34, 56, 38, 16]) / 72)


def _deep_pool():
    """300 documents: 10 runs agree on the top 20, one run alone retrieves 280 documents at ranks 21-300."""
    r = np.zeros((300, 10), dtype=np.int64)
    r[:20] = np.arange(1, 21)[:, None]
    r[20:, 0] = np.arange(21, 301)
    return r


@pytest.mark.parametrize("share", [0.02, 0.05, 0.2, 0.6])
def test_prior_inclusion_meets_the_budget_and_the_floor_bounds_the_weights(share):
    ranks = _deep_pool()
    pi = prior_inclusion(ranks, share, 300)
    assert pi.sum() == pytest.approx(share * len(pi))
    assert np.all((pi > 0) & (pi <= 1))
    w = 1.0 / pi
    assert w.max() <= 1.0 / (0.05 * share) * (1 + 1e-9)
    assert w.max() / w.min() <= 1.0 / 0.05 * (1 + 1e-9)
    # the floor is what bounds them: without it the deep documents' weights are far larger
    bare = 1.0 / prior_inclusion(ranks, share, 300, floor=1e-6)
    assert bare.max() > 1.5 * w.max()
    if share <= 0.05:   # nothing capped: the floor's bound is reached, and exceeded without it
        assert w.max() / w.min() == pytest.approx(1.0 / 0.05)
        assert bare.max() / bare.min() > 2.0 / 0.05
    # order follows the prior: a shallower rank is never less likely
    assert np.all(np.diff(pi[20:]) <= 1e-15) and pi[0] >= pi[19] >= pi[20]


@pytest.mark.parametrize(("call", "name"), [
    (lambda: ap_prior(np.array([1, 2]), 3), "ranks"),
    (lambda: ap_prior(np.array([[1.0], [2.0]]), 3), "ranks"),
    (lambda: ap_prior(np.array([[1], [2]]), 0), "depth"),
    (lambda: prior_inclusion(np.array([[1], [2]]), 1.5, 3), "share"),
    (lambda: prior_inclusion(np.array([[1], [2]]), 0.5, 3, floor=0.0), "floor"),
    (lambda: prior_inclusion(np.zeros((3, 2), dtype=int), 0.5, 3), "ranks"),
    (lambda: prior_inclusion(np.zeros((0, 2), dtype=int), 0.5, 3), "ranks"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(BayevalInputError, match=name):
        call()


# ---------------------------------------------------------------------------------------------- the study
#: sha256 of the rows (all columns but ``seconds``) of trial 1 of the ``sample`` and ``sample-bcp`` methods on
#: the module's collection (named "tiny"), computed with the code before the design option existed (commit
#: 5e96fde): the default design's rows must stay the same, bit for bit
BEFORE = "9524e5bb6705ac3757a2dedbe4481d702d8b30f436a6b57be00f11ff10c813f5"


def _digest(frame: pd.DataFrame) -> str:
    # the settings record the model-assisted form since "auto" became the default (a table without it is the ratio
    # form's, so a resume can tell them apart); these methods use no form, so it is left out of the comparison
    settings = frame.settings.map(lambda s: json.dumps({k: v for k, v in json.loads(s).items() if k != "form"},
                                                       sort_keys=True))
    return hashlib.sha256(pd.util.hash_pandas_object(frame.drop(columns=["seconds"]).assign(settings=settings),
                                                     index=False).values.tobytes()).hexdigest()


def test_the_default_design_rows_are_those_of_before(coldir):
    col = load_collection(coldir, name="tiny")
    kw = dict(budgets=(0.1, 0.3), depth=40, pairs=4, methods=("sample", "sample-bcp"))
    rank = run_sampling_trial(col, SamplingStudyConfig(**kw), 1)
    assert _digest(rank) == BEFORE
    assert _digest(run_sampling_trial(col, SamplingStudyConfig(**kw, design="rank"), 1)) == BEFORE
    assert "design" not in sampling_settings(SamplingStudyConfig(**kw))
    prior = run_sampling_trial(col, SamplingStudyConfig(**kw, design="prior"), 1)
    assert '"design": "prior"' in prior.settings.iloc[0]
    assert not np.allclose(prior.estimate.to_numpy(), rank.estimate.to_numpy())


def test_the_default_draw_replays_rank_inclusion(coldir):
    col = load_collection(coldir)
    data = RankData.build(col.runs(col.run_names), None, depth=40)
    sample, incl = draw_pool_sample(data, col.qrels(), 0.2, np.random.default_rng(9))
    rng = np.random.default_rng(9)
    for tr in data:
        got = tr.ranks[(tr.ranks > 0).any(axis=1)]
        best = np.where(got > 0, got, 10 ** 9).min(axis=1)
        pi = rank_inclusion(best, 0.2)
        assert np.array_equal(incl[tr.topic], pi)
        assert np.array_equal(sample[tr.topic].sampled, poisson_draw(pi, rng))
        assert np.array_equal(sample[tr.topic].strata, rank_stratum(best))


def test_the_prior_design_draws_with_the_priors_probabilities(coldir):
    col = load_collection(coldir)
    data = RankData.build(col.runs(col.run_names), None, depth=40)
    qrels = col.qrels()
    rng = np.random.default_rng(11)
    n = 3000
    _, incl = draw_pool_sample(data, qrels, 0.2, np.random.default_rng(0), design="prior")
    hits = {t: np.zeros(len(p)) for t, p in incl.items()}
    for _ in range(n):
        smp, inc = draw_pool_sample(data, qrels, 0.2, rng, design="prior")
        for t, s in smp.items():
            assert np.array_equal(inc[t], incl[t])          # the design does not depend on the draw
            hits[t] += s.sampled
    for tr in data:
        expect = prior_inclusion(tr.ranks[(tr.ranks > 0).any(axis=1)], 0.2, 40)
        assert np.allclose(incl[tr.topic], expect)
    pi = np.concatenate([incl[t] for t in hits])
    freq = np.concatenate([hits[t] for t in hits]) / n
    z = (freq - pi) / np.sqrt(pi * (1 - pi) / n)
    assert np.abs(z).max() < 4.5                                # ~500 documents: no frequency off its π
    # the rank design's π would be rejected by the same frequencies (the test can tell the designs apart)
    rank_pi = np.concatenate([rank_inclusion(np.where(tr.ranks > 0, tr.ranks, 10 ** 9).min(axis=1)
                                             [(tr.ranks > 0).any(axis=1)], 0.2) for tr in data])
    z_rank = (freq - rank_pi) / np.sqrt(rank_pi * (1 - rank_pi) / n)
    assert np.abs(z_rank).max() > 10


def test_every_method_runs_under_the_prior_design(coldir):
    col = load_collection(coldir)
    cfg = SamplingStudyConfig(budgets=(0.3,), depth=40, pairs=4, folds=2, design="prior",
                              methods=("sample", "sample-bcp", "model", "assisted", "combined"))
    frame = run_sampling_trial(col, cfg, 0)
    assert set(frame.method) == set(cfg.methods)
    assert np.isfinite(frame.estimate).all() and frame.se.ge(0).all()


def _run(coldir, out, *extra):
    return run_cli("experiment", "sampling", "run", coldir, "--out", out, "--trials", "1", "--budgets", "0.3",
                   "--depth", "40", "--pairs", "3", "--methods", "sample", *extra)


def test_the_resume_guard_refuses_mixing_designs(coldir, tmp_path):
    rank, prior = tmp_path / "rank.parquet", tmp_path / "prior.parquet"
    assert _run(coldir, rank)[0] == 0
    assert _run(coldir, prior, "--design", "prior")[0] == 0
    assert read_sampling_table(prior).settings.str.contains('"design": "prior"').all()
    for table, extra, old, new in ((rank, ("--design", "prior"), "rank", "prior"), (prior, (), "prior", "rank")):
        before = table.read_bytes()
        rc, _, err = _run(coldir, table, *extra)
        assert rc == 2 and "Traceback" not in err, err
        assert f"--design {old} in the table, {new} now" in err
        assert table.read_bytes() == before
    # the same design resumes (nothing left to compute)
    assert _run(coldir, prior, "--design", "prior")[0] == 0
    assert _run(coldir, rank, "--design", "rank")[0] == 0
    rc, _, err = _run(coldir, rank, "--design", "both")
    assert rc == 2 and "--design" in err and "Traceback" not in err


def test_the_config_refuses_an_unknown_design():
    with pytest.raises(BayevalInputError, match="design"):
        SamplingStudyConfig(design="pps")
