"""Held-out run shifts (bayeval.relevance.run_shift; docs/notes/calibration-record.md, revision 5): the draws of p of
documents
only non-contributing runs retrieve spread jointly per run, E[p] stays, and the interval of E[MAP] of a run whose
documents no contributing run retrieves widens — and does not when the shift's scale is 0.

Each property is checked in the default run on model-like draws of p given to :class:`HeldOutShift` directly (no
fit: under a second each); the same properties through a fitted hierarchical model's ``probabilities`` (the shift
switched on by its configuration) are the slow tests."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import held_out_data, study_model
from scipy.special import expit, logit

from bayeval.data.coverage import contributing_runs
from bayeval.errors import BayevalInputError
from bayeval.expected import expected_measures
from bayeval.relevance import load_config
from bayeval.relevance.run_shift import HeldOutShift, shift_weights


def _with_shift(fit, sd: float):
    return fit.with_held_out_runs(run_shift_sd=sd)


def _map_sd(data, arrays) -> np.ndarray:
    """sd of E[MAP] per run over the draws of p (per topic (draws, n_t)), Bernoulli draws of relevance included."""
    ev = expected_measures(data, list(arrays), measures=["AP"], method="mc", seed=0, progress=False)
    return np.sqrt(np.asarray(ev.all_variance[0], dtype=float))


def _targets(data, runs) -> list:
    """Per topic the target documents from their definition: unjudged, retrieved, and by none of ``runs``."""
    out = []
    for tr in data:
        r = np.asarray(tr.ranks) > 0
        out.append(~np.asarray(tr.judged) & r.any(axis=1) & ~r[:, list(runs)].any(axis=1))
    return out


def _model_like_draws(data, runs, n: int, seed: int) -> list:
    """Per topic (n, n_t) draws of p: a level per document (p ≈ 0.05 on target documents, 0.3 elsewhere, as a fit
    puts little mass where no contributing run looks) and independent noise per draw and document."""
    rng = np.random.default_rng(seed)
    out = []
    for tr, tg in zip(data, _targets(data, runs), strict=True):
        level = rng.normal(np.where(tg, logit(0.05), logit(0.3)), 0.5)
        out.append(expit(level + 0.3 * rng.standard_normal((n, tr.n_docs))))
    return out


def test_the_shift_moves_only_target_documents_and_keeps_their_mean_p():
    """The weights are :math:`w_{is}=1/|S_i|` on target documents and 0 elsewhere; σ_e = 1 on draws of p given
    directly: the draws of judged documents and of those a contributing run retrieves are returned bit for bit,
    every target document moves, and E[p] over the target documents stays within 6% (measured 0.958×; 1.31× without
    κ_i, the marginalisation); σ_e = 0 returns the draws themselves."""
    data = held_out_data()
    runs = tuple(contributing_runs(data).tolist())
    for tr, tg in zip(data, _targets(data, runs), strict=True):  # w_is = 1[s ∈ S_i]/|S_i| on target rows, else 0
        member = np.asarray(tr.ranks) > 0
        want = np.where(tg[:, None] & member, 1.0 / np.maximum(member.sum(axis=1), 1)[:, None], 0.0)
        assert np.array_equal(shift_weights(tr, runs, len(data.systems)), want)
    d0 = _model_like_draws(data, runs, 300, 0)
    d1 = HeldOutShift(1.0, runs).apply(data, d0, np.random.default_rng(5))
    before, after = [], []
    for tg, a, b in zip(_targets(data, runs), d0, d1, strict=True):
        assert np.array_equal(a[:, ~tg], b[:, ~tg])
        assert np.all(np.any(a[:, tg] != b[:, tg], axis=0))
        before.append(a[:, tg].mean(axis=0))
        after.append(b[:, tg].mean(axis=0))
    assert sum(len(x) for x in before) > 100
    assert abs(np.concatenate(after).mean() / np.concatenate(before).mean() - 1) < 0.06
    assert all(x is y for x, y in zip(HeldOutShift(0.0, runs).apply(data, d0, np.random.default_rng(5)), d0,
                                      strict=True))


def test_the_interval_of_a_held_out_run_widens_when_its_shift_is_shared_over_topics():
    """σ_e = 2 on draws of p given directly: the sd of E[MAP] of every run that contributed no judgment is at least
    1.3× that of the unshifted draws (measured 1.52–2.73×); one shift per run shared by all topics is what makes
    it so (a shift drawn afresh in each topic averages away: 1.02–1.28×)."""
    data = held_out_data()
    runs = tuple(contributing_runs(data).tolist())
    assert runs == (0, 1)
    d0 = _model_like_draws(data, runs, 300, 0)
    ratio = _map_sd(data, HeldOutShift(2.0, runs).apply(data, d0, np.random.default_rng(5))) / _map_sd(data, d0)
    assert np.all(ratio[2:] > 1.3), ratio


def test_the_shift_is_off_in_the_default_and_rejects_a_bad_scale():
    assert load_config("hier-default").held_out_runs.run_shift_sd == 0
    assert load_config(study_model("hier-shift")).held_out_runs.run_shift_sd > 0
    with pytest.raises(BayevalInputError, match="sd"):
        HeldOutShift(-1.0, ())
    with pytest.raises(BayevalInputError, match="run_shift_sd"):
        dataclasses.replace(load_config("hier-default").held_out_runs, run_shift_sd=float("nan"))


@pytest.mark.slow
def test_only_documents_no_contributing_run_retrieves_move_and_their_mean_p_stays(held_out_fit):
    data, fit = held_out_fit
    base = fit.probabilities(draws=300, seed=5)
    shifted = _with_shift(fit, 1.0).probabilities(draws=300, seed=5)
    runs = contributing_runs(data)
    assert sorted(runs.tolist()) == [0, 1]
    moved, before, after = 0, [], []
    for tg, d0, d1 in zip(_targets(data, runs), base.draws, shifted.draws, strict=True):
        assert np.array_equal(d0[:, ~tg], d1[:, ~tg])  # judged documents and a contributing run's: untouched
        assert not np.array_equal(d0[:, tg], d1[:, tg])
        moved += int(tg.sum())
        before.append(d0[:, tg].mean(axis=0))
        after.append(d1[:, tg].mean(axis=0))
    assert moved > 100
    b, a = np.concatenate(before), np.concatenate(after)
    # marginalised: E[p] of the moved documents stays within 6% (relative) overall
    assert abs(a.mean() / b.mean() - 1) < 0.06


@pytest.mark.slow
def test_the_interval_of_a_held_out_run_widens_and_does_not_at_scale_zero(held_out_fit):
    """sd of E[MAP] over the draws (mc, Bernoulli draws of relevance included): with the shift (σ_e = 2) at least
    1.05× the model's for every run that contributed no judgment (measured 1.10–1.37× on 12 topics), more than
    for the contributing runs (which move only through R_t: 1.08–1.13×); with σ_e = 0 the draws are the model's,
    bit for bit."""
    data, fit = held_out_fit
    base = fit.probabilities(draws=300, seed=5)
    zero = _with_shift(fit, 0.0).probabilities(draws=300, seed=5)
    for d0, dz in zip(base.draws, zero.draws, strict=True):
        assert np.array_equal(d0, dz)
    sd0 = _map_sd(data, base.arrays(draws=True))
    ratio = _map_sd(data, _with_shift(fit, 2.0).probabilities(draws=300, seed=5).arrays(draws=True)) / sd0
    assert np.all(ratio[2:] > 1.05), ratio
    assert ratio[2:].mean() > ratio[:2].mean() + 0.05, ratio
