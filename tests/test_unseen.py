"""Relevant documents outside the union of the runs' lists (Chao's incidence estimate) and how they enter R_t."""

from __future__ import annotations

import numpy as np
import pytest

from bayeval.data import Qrels, RankData, Run, RunSet
from bayeval.errors import BayevalInputError
from bayeval.expected import compare_systems, expected_measures
from bayeval.relevance import RelevanceEstimate, smoothed_probabilities
from bayeval.relevance.unseen import chao_unseen, unseen_relevant, with_unseen


def _capture(seed: int, n_rel: int = 60, n_runs: int = 10, rate: float = 0.15, n_topics: int = 40):
    """Runs that retrieve each relevant document independently with probability ``rate`` (Chao's model
    without heterogeneity), everything retrieved judged; returns data and the true unseen count per topic."""
    rng = np.random.default_rng(seed)
    topics, runs = [], {f"r{k}": ([], []) for k in range(n_runs)}
    truth = []
    qrows = []
    for t in range(n_topics):
        cap = rng.random((n_rel, n_runs)) < rate
        truth.append(int((~cap.any(axis=1)).sum()))
        for k in range(n_runs):
            ids = [f"t{t}-d{i}" for i in np.flatnonzero(cap[:, k])] + [f"t{t}-n{k}-{j}" for j in range(5)]
            runs[f"r{k}"][0].extend([str(t)] * len(ids))
            runs[f"r{k}"][1].extend(ids)
            qrows += [(str(t), d, 1 if "-d" in d else 0) for d in ids]
        topics.append(str(t))
    rs = RunSet(tuple(Run.from_arrays(n, np.array(tp), np.array(ds, dtype=object),
                                      np.arange(len(ds), 0, -1.0)) for n, (tp, ds) in runs.items()))
    import pandas as pd
    q = Qrels.from_frame(pd.DataFrame(sorted(set(qrows)), columns=["topic", "docno", "grade"]))
    return RankData.build(rs, q), np.array(truth)


def test_chao_formula():
    f0, v = chao_unseen(np.array([10.0, 3.0]), np.array([5.0, 0.0]), 10)
    assert f0[0] == pytest.approx(0.9 * 10 * 9 / 12)
    assert f0[1] == pytest.approx(0.9 * 3 * 2 / 2)
    assert v[0] == pytest.approx(0.9 * 90 / 12 + 0.81 * 10 * 361 / 144 + 0.81 * 100 * 5 * 81 / (4 * 6 ** 4))


def test_chao_recovers_unseen_relevant_documents():
    """Under equal catchability Chao's estimate is close to unbiased: summed over 100 topics it lies within
    two standard deviations of the truth (a 15% bias does not), and the truth is far from zero (ignoring
    it, as R_t did, is off)."""
    data, truth = _capture(1, rate=0.2, n_topics=100)
    est = smoothed_probabilities(data)  # every retrieved document is judged: p plays no role
    u = unseen_relevant(data, est)
    sd = np.sqrt(np.sum(u.sd ** 2))
    assert truth.sum() > 4 * sd
    assert abs(u.mean.sum() - truth.sum()) < 2 * sd
    z = (u.mean - truth) / np.maximum(u.sd, 1e-9)
    assert 0.5 < np.std(z) < 2.0  # per-topic sds are of the right size


def test_with_unseen_adds_expected_count_to_R():
    data, _ = _capture(2, n_topics=5)
    # make two documents per topic unjudged-looking probabilities: use a point estimate with draws
    p = [np.where(tr.judged, tr.relevant, 0.3).astype(float) for tr in data]
    draws = tuple(np.repeat(x[None], 20, axis=0).astype(np.float32) for x in p)
    est = RelevanceEstimate(tuple(data.topics), tuple(tr.docnos for tr in data),
                            tuple(np.asarray(tr.judged) for tr in data), tuple(p), draws)
    u = unseen_relevant(data, est, seed=0)
    aug, est2 = with_unseen(data, est, u)
    for t, (tr, tr2) in enumerate(zip(data, aug, strict=True)):
        extra = tr2.n_docs - tr.n_docs
        assert extra >= 1 and not tr2.judged[tr.n_docs:].any()
        assert (np.asarray(tr2.ranks)[tr.n_docs:] == 0).all()  # no run ranks a phantom
        assert est2.p[t][tr.n_docs:].sum() == pytest.approx(u.mean[t])
        assert est2.draws[t][:, tr.n_docs:].sum(axis=1) == pytest.approx(u.draws[:, t], rel=1e-5)
        assert est2.p[t][tr.n_docs:].max() <= 0.5
    # the denominators grow, so E[AP] falls; the numerators (ranked documents) are unchanged
    e0 = expected_measures(data, est.arrays(), method="delta").all_expected[0]
    e1 = expected_measures(aug, est2.arrays(), method="delta").all_expected[0]
    assert np.all(e1 < e0)
    cmp = compare_systems(aug, est2.arrays(draws=True), method="mc", draws=200, seed=1)
    assert np.all(np.isfinite(cmp.all_p_less))


def test_bad_estimate():
    data, _ = _capture(3, n_topics=2)
    with pytest.raises(BayevalInputError, match="estimate"):
        unseen_relevant(data, "nope")
