"""Held-out run shifts (bayeval.relevance.run_shift; docs/calibration.md, revision 5): the draws of p of documents
only non-contributing runs retrieve spread jointly per run, E[p] stays, and the interval of E[MAP] of a run whose
documents no contributing run retrieves widens — and does not when the shift's scale is 0."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from bayeval.data import RankData
from bayeval.data.qrels import pool_qrels
from bayeval.errors import BayevalInputError
from bayeval.expected import expected_measures
from bayeval.relevance import HierarchicalEstimator, load_config
from bayeval.relevance.crossfit import contributing_runs
from bayeval.relevance.run_shift import HeldOutShift, shift_weights
from bayeval.synthetic import make_collection


def _data(seed: int = 0) -> RankData:
    """10 systems (3 independent), 12 topics; judgments: a depth-5 pool of the first two runs."""
    col = make_collection(n_topics=12, n_systems=10, n_docs=300, depth=50, judged_depth=10, seed=300 + seed,
                          independent=3)
    names = list(col.runs.names)
    return RankData.build(col.runs, pool_qrels(col.runs.select(names[:2]), col.qrels, 5), depth=50)


@pytest.fixture(scope="module")
def fitted():
    data = _data()
    return data, HierarchicalEstimator("hier-default").fit(data, "laplace", seed=3, draws=200, chains=1)


def _with_shift(fit, sd: float):
    h = dataclasses.replace(fit.config.hierarchy, run_shift_sd=sd)
    return dataclasses.replace(fit, config=dataclasses.replace(fit.config, hierarchy=h))


def _map_sd(data, est) -> np.ndarray:
    ev = expected_measures(data, est.arrays(draws=True), measures=["AP"], method="mc", seed=0, progress=False)
    return np.sqrt(np.asarray(ev.all_variance[0], dtype=float))


def test_the_shift_is_off_in_the_default_and_rejects_a_bad_scale():
    assert load_config("hier-default").hierarchy.run_shift_sd == 0
    assert load_config("hier-shift").hierarchy.run_shift_sd > 0
    with pytest.raises(BayevalInputError, match="sd"):
        HeldOutShift(-1.0, ())
    with pytest.raises(BayevalInputError, match="run_shift_sd"):
        dataclasses.replace(load_config("hier-default").hierarchy, run_shift_sd=float("nan"))


def test_only_documents_no_contributing_run_retrieves_move_and_their_mean_p_stays(fitted):
    data, fit = fitted
    base = fit.probabilities(draws=300, seed=5)
    shifted = _with_shift(fit, 1.0).probabilities(draws=300, seed=5)
    runs = contributing_runs(data)
    assert sorted(runs.tolist()) == [0, 1]
    moved, before, after = 0, [], []
    for tr, d0, d1 in zip(data, base.draws, shifted.draws, strict=True):
        tg = shift_weights(tr, runs, len(data.systems)).sum(axis=1) > 0
        assert np.array_equal(d0[:, ~tg], d1[:, ~tg])  # judged documents and a contributing run's: untouched
        assert not np.array_equal(d0[:, tg], d1[:, tg])
        moved += int(tg.sum())
        before.append(d0[:, tg].mean(axis=0))
        after.append(d1[:, tg].mean(axis=0))
    assert moved > 100
    b, a = np.concatenate(before), np.concatenate(after)
    # marginalised: E[p] of the moved documents stays within 6% (relative) overall
    assert abs(a.mean() / b.mean() - 1) < 0.06


def test_the_interval_of_a_held_out_run_widens_and_does_not_at_scale_zero(fitted):
    """sd of E[MAP] over the draws (mc, Bernoulli draws of relevance included): with the shift (σ_e = 2) at least
    1.05× the model's for every run that contributed no judgment (measured 1.10–1.37× on 12 topics), more than
    for the contributing runs (which move only through R_t: 1.08–1.13×); with σ_e = 0 the draws are the model's,
    bit for bit."""
    data, fit = fitted
    base = fit.probabilities(draws=300, seed=5)
    zero = _with_shift(fit, 0.0).probabilities(draws=300, seed=5)
    for d0, dz in zip(base.draws, zero.draws, strict=True):
        assert np.array_equal(d0, dz)
    sd0 = _map_sd(data, base)
    ratio = _map_sd(data, _with_shift(fit, 2.0).probabilities(draws=300, seed=5)) / sd0
    assert np.all(ratio[2:] > 1.05), ratio
    assert ratio[2:].mean() > ratio[:2].mean() + 0.05, ratio
