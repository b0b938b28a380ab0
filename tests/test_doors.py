"""The public doors other packages use: judge_until, Selector.judged_qrels, prepare_trial."""

from __future__ import annotations

import numpy as np

from bayeval.data import RankData
from bayeval.experiments import RobustnessConfig, TrialContext, prepare_trial, trial_seed
from bayeval.selection import MTCSelector, QrelsAssessor, judge_until
from bayeval.synthetic import make_collection

COL = make_collection(n_topics=3, n_systems=3, n_docs=60, depth=20, seed=2)


def _selector():
    return MTCSelector(RankData.build(COL.runs, None, depth=20), measure="AP", alpha=0.95)


def test_judge_until_stops_at_its_rule_and_calls_after():
    sel, seen = _selector(), []
    made = judge_until(sel, QrelsAssessor(COL.qrels), until=lambda s: s.judgments >= 7,
                       after=lambda s: seen.append(s.judgments))
    assert made == 7 == sel.judgments and seen == list(range(1, 8))
    # by default it judges until every pair is decided, within the budget
    assert judge_until(sel, QrelsAssessor(COL.qrels), budget=5) == 5
    full = _selector()
    judge_until(full, QrelsAssessor(COL.qrels))
    assert full.done


def test_judged_qrels_are_the_recorded_judgments():
    sel = _selector()
    assert sel.judged_qrels() is None
    judge_until(sel, QrelsAssessor(COL.qrels), budget=12)
    q = sel.judged_qrels()
    got = {(t, d, q.grade_of(t, d)) for t, d, _ in sel.history}
    assert got == {(t, d, COL.qrels.grade_of(t, d) or 0) for t, d, _ in sel.history}
    assert sum(len(q[t]) for t in q.topics) == len(sel.history) == 12


def test_prepare_trial_draws_what_the_trial_seed_says():
    class Collection:  # the three things prepare_trial asks of a TestCollection
        def sample_runs(self, k, rng):
            return list(rng.permutation(COL.runs.names)[:k])

        def runs(self, names):
            return COL.runs.select(names)

        def qrels(self):
            return COL.qrels

        def topics(self):
            return tuple(COL.qrels.topics)

    cfg = RobustnessConfig(k=3, c=2)
    ctx = prepare_trial(Collection(), cfg, 4)
    assert isinstance(ctx, TrialContext)
    s_runs, s_sel, s_fit, s_mc = trial_seed(cfg.seed, 4).spawn(4)
    names = list(np.random.default_rng(s_runs).permutation(COL.runs.names)[:3])
    assert list(ctx.names) == names and list(ctx.runs_c.names) == names[:2]
    assert ctx.sel_seed == int(s_sel.generate_state(1)[0])
    assert ctx.s_fit.generate_state(1)[0] == s_fit.generate_state(1)[0]
