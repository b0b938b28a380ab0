"""Calibration that transfers: judged documents' RTC log-odds from a chain that did not see their group."""

from __future__ import annotations

import dataclasses

import numpy as np
from conftest import study_model

from bayeval.data import RankData
from bayeval.data.coverage import complete_prefix
from bayeval.data.qrels import pool_qrels
from bayeval.data.run import RunSet
from bayeval.relevance.hierarchical import HierarchicalEstimator
from bayeval.relevance.rtc import RTCEstimator
from bayeval.relevance.transfer import judged_groups, transferred_offsets
from bayeval.synthetic import make_collection


def _data():
    col = make_collection(n_topics=5, n_systems=5, n_docs=150, depth=30, judged_depth=5, seed=8)
    runs = list(col.runs)
    return RankData.build(col.runs, pool_qrels(RunSet(runs[:2]), col.qrels, 5))


def test_groups_are_the_first_complete_prefix_holding_the_document():
    data = _data()
    for tr in data:
        g = judged_groups(tr)
        assert np.all((g >= 0) == np.asarray(tr.judged))
        comp = complete_prefix(tr)
        for i in np.flatnonzero(g >= 0):
            holders = [s for s in range(len(tr.systems)) if i in tr.ranked[s, : comp[s]]]
            assert g[i] == (holders[0] if holders else len(tr.systems))


def _log_odds(est, data):
    ps = est.fit(data).probabilities(draws=None).p
    return [np.log(q / (1 - q)) for q in (np.clip(p, 1e-6, 1 - 1e-6) for p in ps)]


def test_a_judged_documents_log_odds_do_not_depend_on_its_own_group():
    """Flip the judgments of group 0: the transferred log-odds of group 0's documents do not move (the chain
    that gives them never saw those judgments); the in-sample ones do."""
    data = _data()
    est = RTCEstimator("rtc-default")
    base = _log_odds(est, data)
    out = transferred_offsets(data, "rtc-default", base)
    per, groups = [], []
    for tr in data:
        g = judged_groups(tr)
        groups.append(g)
        flip = g == 0
        grades = np.where(flip, np.where(np.asarray(tr.relevant), 0, 1), np.asarray(tr.grades))
        per.append(dataclasses.replace(tr, grades=grades))
    flipped = RankData(data.systems, data.topics, tuple(per), data.depth)
    base2 = _log_odds(est, flipped)
    out2 = transferred_offsets(flipped, "rtc-default", base2)
    g0 = np.concatenate([g == 0 for g in groups])
    a, b = np.concatenate(out)[g0], np.concatenate(out2)[g0]
    np.testing.assert_allclose(a, b, atol=1e-9)
    assert np.abs(np.concatenate(base)[g0] - np.concatenate(base2)[g0]).max() > 1e-3


def test_hier_transfer_fits_end_to_end():
    data = _data()
    est = HierarchicalEstimator(study_model("hier-transfer")).estimate(data, "map")
    assert all(((p >= 0) & (p <= 1)).all() for p in est.p)
