"""Random samples in judging campaigns: the draw, serving drawn documents first, how each judgment was chosen,
prels / stratified-sample export read back by the sampling estimators, and kill -9 while drawing."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from conftest import run_cli

from bayeval.data import RelevanceProbabilities
from bayeval.errors import BayevalInputError
from bayeval.io import read_prels, read_stratified_sample, write_qrels, write_run
from bayeval.sampling import inferred_measures, stat_measures
from bayeval.sampling.design import prior_inclusion, rank_inclusion
from bayeval.selection import Campaign, QrelsAssessor
from bayeval.synthetic import make_collection


@pytest.fixture(scope="module")
def col():
    return make_collection(n_topics=3, n_systems=3, n_docs=80, depth=40, seed=7)


def _camp(tmp_path, col, name="c.sqlite"):
    return Campaign.create(tmp_path / name, col.runs, measure="AP", alpha=0.999999, depth=40)


def test_rank_draw_meets_the_share_and_is_served_first(tmp_path, col):
    camp = _camp(tmp_path, col)
    n = camp.draw_sample(0.2, seed=3)
    s = camp.samples()
    per_topic = s.groupby("topic").agg(size=("docno", "size"), expected=("inclusion", "sum"))
    assert np.allclose(per_topic.expected, 0.2 * per_topic["size"])
    assert n == int(s.drawn.sum()) and 0 < n < len(s)
    # stratum 1 (best rank <= 10) drawn at twice stratum 2's rate, five times stratum 3's
    rates = s.groupby("stratum").inclusion.first()
    assert rates["1"] / rates["2"] == pytest.approx(2) and rates["1"] / rates["3"] == pytest.approx(5)
    with pytest.raises(BayevalInputError, match="already holds a random sample"):
        camp.draw_sample(0.1)
    drawn = {(t, d) for t, d in s[s.drawn == 1][["topic", "docno"]].itertuples(index=False)}
    batch = camp.next(n + 5)
    assert {(c.topic, c.docno) for c in batch[:n]} == drawn and all(np.isnan(c.score) for c in batch[:n])
    assert len({(c.topic, c.docno) for c in batch}) == len(batch) == n + 5  # the selector fills the rest
    made = camp.judge(QrelsAssessor(col.qrels), budget=n + 3)
    assert made == n + 3
    chosen = camp.chosen_by()
    assert (chosen.chosen == "sample").sum() == n and (chosen.chosen == "selection").sum() == 3
    assert chosen[chosen.chosen == "sample"].inclusion.between(0, 1).all()
    camp.close()


def test_export_prels_and_sample_read_back(tmp_path, col):
    camp = _camp(tmp_path, col)
    n = camp.draw_sample(0.3, seed=1)
    camp.judge(QrelsAssessor(col.qrels), budget=n)  # exactly the drawn documents
    prels, sample = tmp_path / "p.txt", tmp_path / "s.txt"
    assert camp.export_prels(prels) == int(camp.samples().drawn.sum())
    camp.export_sample(sample)
    q = read_prels(prels)
    st = read_stratified_sample(sample)
    drawn = camp.samples()
    for t in q.topics:
        d = drawn[(drawn.topic == t) & (drawn.drawn == 1)].set_index("docno")
        np.testing.assert_allclose(q[t].inclusion, d.loc[list(q[t].docnos)].inclusion.to_numpy())
        assert list(q[t].grades) == [col.qrels.grade_of(t, x) or 0 for x in q[t].docnos]
        assert int(st[t].sampled.sum()) == len(q[t])
    assert stat_measures(col.runs, q).values["statAP"].shape == (3, 3)
    assert inferred_measures(col.runs, st).summary["infAP"].shape == (3,)
    camp.close()


def test_p_proportional_draw(tmp_path, col):
    camp = _camp(tmp_path, col)
    t = col.runs.topics[0]
    docs = col.runs[0].ranking(t)[:50]
    probs = RelevanceProbabilities({t: {d: 0.9 for d in docs[:5]}})
    camp.draw_sample(0.1, scheme="p", probabilities=probs, seed=2)
    s = camp.samples()
    top = s[(s.topic == t) & s.docno.isin(docs[:5])].inclusion
    rest = s[(s.topic == t) & ~s.docno.isin(docs[:5])].inclusion
    assert top.min() / rest.max() == pytest.approx(0.9 / 0.5)  # against the campaign's default p of 0.5
    with pytest.raises(BayevalInputError, match="proportional to p"):
        camp.export_sample(tmp_path / "s.txt")
    camp.close()


def test_prior_draw_follows_the_ap_prior_of_the_runs_ranks(tmp_path, col):
    camp = _camp(tmp_path, col)
    n = camp.draw_sample(0.2, scheme="prior", seed=5)
    s = camp.samples()
    assert (s.scheme == "prior").all() and n == int(s.drawn.sum()) and 0 < n < len(s)
    for t, g in s.groupby("topic"):
        docs = g.docno.to_numpy()
        ranks = np.zeros((len(docs), len(col.runs)), dtype=np.int64)
        for k, run in enumerate(col.runs):
            where = {d: r + 1 for r, d in enumerate(run.ranking(t)[:40])}
            ranks[:, k] = [where.get(d, 0) for d in docs]
        np.testing.assert_allclose(g.inclusion.to_numpy(), prior_inclusion(ranks, 0.2, 40))
        assert g.inclusion.sum() == pytest.approx(0.2 * len(g))
        # not the rank design's probabilities
        assert not np.allclose(g.inclusion.to_numpy(), rank_inclusion(ranks_best(ranks), 0.2))
    camp.judge(QrelsAssessor(col.qrels), budget=n)
    assert camp.export_prels(tmp_path / "p.txt") == n
    q = read_prels(tmp_path / "p.txt")
    assert stat_measures(col.runs, q).values["statAP"].shape == (3, 3)
    with pytest.raises(BayevalInputError, match="AP-prior"):
        camp.export_sample(tmp_path / "s.txt")
    camp.close()


def ranks_best(ranks):
    return np.where(ranks > 0, ranks, 10 ** 9).min(axis=1)


_DRAW = textwrap.dedent("""
    import sys
    from bayeval.selection import Campaign
    camp = Campaign.open(sys.argv[1])
    print("ready", flush=True)
    camp.draw_sample(0.3, seed=4, scheme=sys.argv[2])
    print("done", flush=True)
""")


def _start_draw(script, path, scheme="rank"):
    proc = subprocess.Popen([sys.executable, str(script), str(path), scheme], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    return proc


@pytest.mark.parametrize("scheme", ["rank", "prior"])
def test_kill_while_drawing_leaves_all_or_nothing(tmp_path, col, scheme):
    base = _camp(tmp_path, col, "base.sqlite")
    pool = len(base._conn.execute("SELECT DISTINCT topic, docno FROM rankings").fetchall())
    base.close()
    script = tmp_path / "draw.py"
    script.write_text(_DRAW)
    # how long a draw takes here, then kills inside that window, early to late (where the rows are written; with
    # bayeval.sampling already imported the window is a few milliseconds, the write most of it)
    shutil.copy(tmp_path / "base.sqlite", tmp_path / "t.sqlite")
    proc = _start_draw(script, tmp_path / "t.sqlite", scheme)
    t0 = time.perf_counter()
    assert proc.stdout.readline().strip() == "done"
    span = time.perf_counter() - t0
    proc.wait()
    proc.stdout.close()
    outcomes = []
    for k, frac in enumerate((0.1, 0.3, 0.5, 0.75, 0.9, 0.97)):
        path = tmp_path / f"k{k}.sqlite"
        shutil.copy(tmp_path / "base.sqlite", path)
        proc = _start_draw(script, path, scheme)
        time.sleep(frac * span)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        camp = Campaign.open(path)
        n = len(camp.samples())
        assert n in (0, pool)  # the draw is complete or absent
        outcomes.append(n)
        if n == 0:  # a draw that did not land can be made again
            assert camp.draw_sample(0.3, seed=4, scheme=scheme) > 0
        camp.close()
    assert 0 in outcomes  # a kill landed before the draw committed


def test_cli_sample_and_export(tmp_path, col):
    (tmp_path / "runs").mkdir()
    for run in col.runs:
        write_run(run, tmp_path / "runs" / f"input.{run.name}")
    write_qrels(col.qrels, tmp_path / "q.txt")
    camp = _camp(tmp_path, col)
    camp.close()
    rc, out, err = run_cli("judge", "sample", tmp_path / "c.sqlite", "--share", "0.2", "--seed", "1")
    assert rc == 0 and "drew" in out, err
    with Campaign.open(tmp_path / "c.sqlite") as c:
        c.judge(QrelsAssessor(col.qrels), budget=int(c.samples().drawn.sum()))
    rc, out, err = run_cli("judge", "export", tmp_path / "c.sqlite", "--out", tmp_path / "q2.txt", "--prels",
                           tmp_path / "p.txt", "--sample", tmp_path / "s.txt")
    assert rc == 0 and "sampled judgments" in out, err
    assert len(read_prels(tmp_path / "p.txt")) > 0
    rc, _, err = run_cli("judge", "sample", tmp_path / "c.sqlite", "--share", "0.2")
    assert rc == 2 and "already holds" in err
    rc, _, err = run_cli("judge", "sample", tmp_path / "c.sqlite", "--share", "0")
    assert rc == 2 and "--share" in err
    _camp(tmp_path, col, "c2.sqlite").close()
    rc, out, err = run_cli("judge", "sample", tmp_path / "c2.sqlite", "--share", "0.2", "--scheme", "prior")
    assert rc == 0 and "prior scheme" in out, err
    with Campaign.open(tmp_path / "c2.sqlite") as c:
        assert (c.samples().scheme == "prior").all()


def test_per_topic_draw_and_the_stated_minimum(tmp_path, col):
    """``per_topic``: every topic's pool drawn at min(1, N / pool) (the expected count, whatever the pool's size);
    the command prints the expected judgments a topic and warns below the stated minimum, naming it."""
    camp = _camp(tmp_path, col)
    camp.draw_sample(per_topic=12, seed=2)
    s = camp.samples()
    expected = s.groupby("topic").inclusion.sum()
    assert np.allclose(expected, 12.0)
    with pytest.raises(BayevalInputError, match="share, per_topic: give one of the two"):
        _camp(tmp_path, col, "c3.sqlite").draw_sample(0.1, per_topic=5)
    with pytest.raises(BayevalInputError, match="per_topic"):
        _camp(tmp_path, col, "c4.sqlite").draw_sample(per_topic=0.5)
    camp.close()
    _camp(tmp_path, col, "c5.sqlite").close()
    rc, out, err = run_cli("judge", "sample", tmp_path / "c5.sqlite", "--per-topic", "4", "--seed", "1")
    assert rc == 0 and "4.0 expected a topic" in out, err
    assert "warning: 3 of 3 topics have fewer than" in err and "not known to hold" in err
    _camp(tmp_path, col, "c6.sqlite").close()
    rc, out, err = run_cli("judge", "sample", tmp_path / "c6.sqlite", "--per-topic", "30", "--relevance-level", "3")
    assert rc == 0 and "fewer than" not in err and "relevance level 3" in err, err
    rc, _, err = run_cli("judge", "sample", tmp_path / "c6.sqlite", "--per-topic", "30", "--share", "0.1")
    assert rc == 2 and "not allowed with argument" in err
