"""Staying on a topic while judging: the rule of Selector.select(stay_on=, tolerance=) and its effect."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import run_cli

from bayeval.data import RankData
from bayeval.errors import BayevalInputError
from bayeval.io.qrels import write_qrels
from bayeval.io.runs import write_run
from bayeval.selection import MTCSelector, QrelsAssessor, simulate
from bayeval.synthetic import make_collection


@pytest.fixture(scope="module")
def col():
    return make_collection(n_topics=8, n_systems=3, n_docs=80, depth=30, judged_depth=2, seed=5)


def _best_by_topic(sel, topics):
    """Best score per topic, by brute force over every unjudged document's candidate score."""
    out = {}
    for c in sel.select(10**6):
        out[c.topic] = max(out.get(c.topic, 0.0), c.score)
    return {t: out.get(t, 0.0) for t in topics}


@pytest.mark.parametrize("tol", [0.1, 0.3, 0.6])
def test_rule_stays_exactly_when_the_topic_is_worth_nearly_the_best(col, tol):
    data = RankData.build(col.runs, col.judgments, depth=30)
    sel = MTCSelector(data, alpha=0.99)
    assessor = QrelsAssessor(col.qrels)
    last, stayed, left = None, 0, 0
    for _ in range(40):
        if sel.done:
            break
        best = _best_by_topic(sel, data.topics)
        top = max(best.values())
        c = sel.select(1, stay_on=last, tolerance=tol)[0]
        if last is not None and best[last] > 0 and best[last] >= (1 - tol) * top:
            assert c.topic == last and c.score == pytest.approx(best[last])
            stayed += 1
        else:
            assert c.score == pytest.approx(top)
            left += last is not None
        sel.record(c.topic, c.docno, assessor.judge(c.topic, c.docno))
        last = c.topic
    assert stayed > 0


def test_tolerance_zero_is_the_exact_algorithm(col):
    data = RankData.build(col.runs, col.judgments, depth=30)
    a, b = MTCSelector(data), MTCSelector(data)
    assessor = QrelsAssessor(col.qrels)
    for _ in range(20):
        ca, cb = a.select(1)[0], b.select(1, stay_on=a.history[-1][0] if a.history else None, tolerance=0.0)[0]
        assert (ca.topic, ca.docno) == (cb.topic, cb.docno)
        for s in (a, b):
            s.record(ca.topic, ca.docno, assessor.judge(ca.topic, ca.docno))


def test_staying_raises_the_share_of_consecutive_same_topic_judgments(col):
    exact = simulate(col.runs, col.qrels, method="mtc", depth=30, alpha=0.99)
    batched = simulate(col.runs, col.qrels, method="mtc", depth=30, alpha=0.99, topic_tolerance=0.3)
    assert batched.topic_stay > exact.topic_stay + 0.2
    topics = [h[0] for h in batched.history]
    assert batched.topic_stay == pytest.approx(np.mean([x == y for x, y in zip(topics[1:], topics[:-1], strict=True)]))
    assert "consecutive judgments on the same topic" in batched.summary()


@pytest.mark.parametrize("bad", [-0.1, 1.0, "0.2", True])
def test_bad_tolerance_is_refused(col, bad):
    sel = MTCSelector(RankData.build(col.runs, col.judgments, depth=30))
    with pytest.raises(BayevalInputError, match="tolerance"):
        sel.select(1, stay_on=col.runs.topics[0], tolerance=bad)


def test_cli_topic_tolerance(tmp_path, col):
    write_qrels(col.qrels, tmp_path / "full.qrels")
    runs = []
    for run in col.runs:
        write_run(run, tmp_path / f"{run.name}.run")
        runs.append(tmp_path / f"{run.name}.run")
    rc, out, err = run_cli("judge", "simulate", tmp_path / "full.qrels", *runs, "--depth", "30",
                           "--topic-tolerance", "0.3")
    assert rc == 0, err
    assert "consecutive judgments on the same topic" in out
    rc, out, err = run_cli("judge", "simulate", tmp_path / "full.qrels", *runs, "--topic-tolerance", "1.5")
    assert rc == 2 and "--topic-tolerance" in err and "Traceback" not in err


def test_judging_desk_keeps_an_assessor_on_the_topic(tmp_path, col):
    """The page's desk applies the same rule with the assessor's last judged topic; tolerance 0 gives the
    campaign's best document every time."""
    from bayeval.selection import Campaign
    from bayeval.serve.desk import Desk

    shares = {}
    for tol in (0.0, 0.3):
        path = tmp_path / f"c{tol}.sqlite"
        Campaign.create(path, col.runs, initial=col.judgments, depth=30, alpha=0.99).close()
        desk = Desk(path, topic_tolerance=tol)
        topics = []
        for _ in range(30):
            item = desk.next("ann")
            if item is None:
                break
            desk.judge("ann", item.topic, item.docno, col.qrels.grade_of(item.topic, item.docno) or 0)
            topics.append(item.topic)
        desk.close()
        shares[tol] = np.mean([a == b for a, b in zip(topics[1:], topics[:-1], strict=True)])
    assert shares[0.3] > shares[0.0] + 0.2, shares
    with pytest.raises(BayevalInputError, match="tolerance"):
        Desk(tmp_path / "c0.3.sqlite", topic_tolerance=1.0)
