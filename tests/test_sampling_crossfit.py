"""Cross-fitted predictions: folds independent of the sample, no fit sees the judgments it predicts, and the
model-assisted estimate stays unbiased with intervals that cover even when the model memorises its training
labels (the same model fitted on the whole sample — the leak — makes them fail)."""

from __future__ import annotations

import numpy as np
import pytest
from test_sampling_assisted import _collection, _draw, _true_map_p30

from bayeval.data import RelevanceProbabilities
from bayeval.errors import BayevalInputError
from bayeval.sampling import assisted_measures, cross_fitted_predictions
from bayeval.sampling.crossfit import assign_folds, held_out


def _memoriser(preds):
    """A model that returns the label of every document it was trained on, and ``preds`` elsewhere."""
    def fit(training):
        out = {}
        for t, ts in training.items():
            p = np.where(ts.sampled, (ts.grades >= 1).astype(float), preds[t])
            out[t] = dict(zip(ts.docnos.tolist(), p.tolist(), strict=True))
        return RelevanceProbabilities(out)
    return fit


def test_folds_are_balanced_seeded_and_blind_to_the_sample():
    runs, truth, preds, design = _collection()
    rng = np.random.default_rng(0)
    s1, s2 = _draw(truth, design, rng), _draw(truth, design, rng)
    f1, f2 = assign_folds(s1, 3, seed=4), assign_folds(s2, 3, seed=4)
    for t in s1:  # the same folds for two different samples of the same pool: they cannot depend on the draw
        assert np.array_equal(f1[t], f2[t])
        assert np.abs(np.bincount(f1[t], minlength=3) - len(f1[t]) / 3).max() <= 1
    assert any(not np.array_equal(f1[t], assign_folds(s1, 3, seed=5)[t]) for t in s1)
    with pytest.raises(BayevalInputError, match="folds"):
        assign_folds(s1, 1, seed=0)


@pytest.mark.parametrize("folds", [2, 5])
def test_no_fit_sees_the_documents_it_predicts(folds):
    runs, truth, preds, design = _collection()
    sample = _draw(truth, design, np.random.default_rng(1))
    fold = assign_folds(sample, folds, seed=0)
    seen = []

    def fit(training):
        seen.append(training)
        return _memoriser(preds)(training)

    cf = cross_fitted_predictions(sample, fit, folds=folds, seed=0)
    assert len(seen) == folds
    for k, training in enumerate(seen):
        for t, ts in training.items():
            assert not np.any(ts.sampled[fold[t] == k])                         # fold k held out ...
            assert np.array_equal(ts.sampled[fold[t] != k], sample[t].sampled[fold[t] != k])  # ... only it
            assert np.array_equal(held_out(sample, fold, k)[t].grades, ts.grades)
    for t, ts in sample.items():  # the memoriser's label never reaches the document it was learnt from
        np.testing.assert_array_equal(cf.lookup(t, ts.docnos, 0.0), preds[t])


def test_cross_fitting_keeps_the_estimate_unbiased_and_covering():
    runs, truth, preds, design = _collection()
    true_map, true_p30 = _true_map_p30(runs, truth)
    incl = {t: design[t] for t in truth}
    fit = _memoriser(preds)
    rng = np.random.default_rng(7)
    draws = 150
    res = {"cross": {"p30": [], "cover": 0}, "leak": {"p30": [], "cover": 0}}
    for i in range(draws):
        sample = _draw(truth, design, rng)
        for key, probs in (("cross", cross_fitted_predictions(sample, fit, folds=2, seed=i)),
                           ("leak", fit(sample))):
            ev = assisted_measures(runs, sample, probs, weight=1.0, inclusion=incl, cutoffs=(30,))
            lo, hi = ev.interval("AP")
            res[key]["cover"] += int(np.sum((lo <= true_map) & (true_map <= hi)))
            res[key]["p30"].append(ev.mean("P30")[0])
    for key in res:
        est = np.array(res[key]["p30"])
        res[key]["z"] = np.abs(est.mean(axis=0) - true_p30) / (est.std(axis=0, ddof=1) / np.sqrt(draws))
        res[key]["coverage"] = res[key]["cover"] / (draws * len(runs))
    # P@30 is linear in the labels: exactly unbiased when p is cross-fitted (4 runs, |z| < 3.5 each)
    assert res["cross"]["z"].max() < 3.5
    assert 0.90 <= res["cross"]["coverage"] <= 0.99
    # the same model fitted on the sample that corrects it: residuals 0, biased estimates, intervals collapse
    assert res["leak"]["z"].max() > 5
    assert res["leak"]["coverage"] < 0.6
