"""Topics whose sample holds no relevant document: MAP over the informative topics with the missing-topic
variance — unbiased for the variance of the mean over topics missed at random (enumeration of every subset),
and intervals that cover where counting such topics as AP = 0 (statAP's convention) does not (Monte Carlo)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from bayeval.data import Run, RunSet, StratifiedSample
from bayeval.data.sample import TopicSample
from bayeval.sampling import assisted_measures
from bayeval.sampling.assisted import _imputation_covariance


def test_missing_topic_variance_is_unbiased_over_every_subset():
    rng = np.random.default_rng(2)
    T, TI = 7, 4
    values = rng.random((3, T))
    has = np.ones((3, T), dtype=bool)
    sq_err = np.zeros((3, 3))
    est = np.zeros((3, 3))
    subsets = list(itertools.combinations(range(T), TI))
    for keep in subsets:
        inf = np.zeros(T, dtype=bool)
        inf[list(keep)] = True
        err = values[:, inf].mean(axis=1) - values.mean(axis=1)
        sq_err += np.outer(err, err) / len(subsets)
        est += _imputation_covariance(values, has, inf) / len(subsets)
    np.testing.assert_allclose(est, sq_err, rtol=1e-12)   # covariances of the runs' means included
    assert not np.any(_imputation_covariance(values, has, np.ones(T, dtype=bool)))


def _topics(rng, T=30, D=200):
    """Topics with few relevant documents (some none in a small sample) and three runs of varying quality."""
    out = []
    for _ in range(T):
        prev = rng.choice([0.01, 0.03, 0.08])
        x = (rng.random(D) < prev * np.r_[np.full(20, 4.0), np.ones(D - 20)]).astype(int)
        x[rng.integers(D)] = 1
        orders = [np.argsort(-(q * x + rng.normal(size=D))) for q in (2.0, 1.0, 0.3)]
        out.append((x, orders))
    return out


def _ap(x, order):
    xs = x[order]
    return float(np.sum(xs * np.cumsum(xs) / np.arange(1, len(xs) + 1)) / xs.sum())


def test_informative_mean_covers_where_zero_does_not():
    rng = np.random.default_rng(4)
    tops = _topics(rng)
    D = len(tops[0][0])
    docs = [np.array([f"t{t}d{i}" for i in range(D)], dtype=object) for t in range(len(tops))]
    runs = RunSet(tuple(Run.from_arrays(
        f"r{s}", np.concatenate([np.full(D, str(t + 1)) for t in range(len(tops))]),
        np.concatenate([docs[t][o[s]] for t, (_, o) in enumerate(tops)]),
        np.concatenate([-np.arange(D, dtype=float)] * len(tops))) for s in range(3)))
    truth = np.array([np.mean([_ap(x, o[s]) for x, o in tops]) for s in range(3)])
    best = [np.minimum.reduce([np.argsort(o) for o in orders]) for _, orders in tops]
    pi = [np.where(b < 20, 0.2, 0.05) for b in best]
    draws, cover, empty = 150, {"impute": 0, "zero": 0}, []
    for _ in range(draws):
        sample = StratifiedSample({str(t + 1): TopicSample(docs[t], (pi[t] < 0.1).astype(np.int32), ("1", "2"),
                                                           np.where(rng.random(D) < pi[t], x, -1))
                                   for t, (x, _) in enumerate(tops)})
        incl = {str(t + 1): pi[t] for t in range(len(tops))}
        for key in cover:
            ev = assisted_measures(runs, sample, None, weight=0.0, inclusion=incl, cutoffs=(), empty=key)
            lo, hi = ev.interval("AP")
            cover[key] += int(np.sum((lo <= truth) & (truth <= hi)))
            if key == "impute":
                empty.append(int((~ev.informative).sum()))
    assert np.mean(empty) > 3                          # the design leaves several topics without a relevant draw
    assert cover["impute"] / (3 * draws) >= 0.90
    assert cover["zero"] / (3 * draws) < 0.80
    with pytest.raises(Exception, match="empty"):
        assisted_measures(runs, sample, None, weight=0.0, inclusion=incl, empty="drop")
