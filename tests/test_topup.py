"""Top-ups (bayeval.relevance.topup, bayeval.selection.topup, Campaign.draw_topup, ``bayeval judge topup``): the
draw's recorded inclusion probabilities are the frequencies it draws with, the campaign keeps a top-up whole
through a kill, serves it first and exports it, and the commands that fit a model learn from it and say so."""

from __future__ import annotations

import sqlite3

import numpy as np
import pandas as pd
import pytest
from conftest import run_cli

from bayeval.data import Qrels, RankData
from bayeval.errors import BayevalInputError, FileFormatError
from bayeval.io import write_qrels, write_run
from bayeval.relevance.topup import COLUMNS, TopUpSample, read_topup
from bayeval.sampling.design import ap_prior
from bayeval.selection import Campaign
from bayeval.selection.topup import draw_topup, topup_frame
from bayeval.synthetic import make_collection


@pytest.fixture(scope="module")
def col():
    return make_collection(n_topics=5, n_systems=5, n_docs=100, depth=30, judged_depth=5, seed=3)


def _pool(col, runs=2, depth=10) -> Qrels:
    rows = {(t, d): max(col.qrels.grade_of(t, d) or 0, 0) for r in list(col.runs)[:runs] for t in r.topics
            for d in r.ranking(t)[:depth]}
    frame = pd.DataFrame([(t, d, g) for (t, d), g in rows.items()], columns=["topic", "docno", "grade"])
    return Qrels.from_frame(frame)


def test_the_first_round_draws_each_document_with_its_recorded_probability(col):
    """Over 4000 seeds, how often each document of one run's frame in one topic is drawn in round 1 matches the
    recorded π = a(r)/Σa (the AP-prior weights): every frequency within 4 binomial sd. A draw that ignores the
    weights (the mutation: uniform choice, π still recorded) fails it."""
    data = RankData.build(col.runs, _pool(col), depth=30)
    s = data.system_index("sys05")
    idx, w = topup_frame(data, s, 0, 30)
    pi = w / w.sum()
    counts = pd.Series(0, index=[str(d) for d in data[0].docnos[idx]])
    recorded = {}
    for seed in range(4000):
        f = draw_topup(data, ["sys05"], 1, depth=30, rng=np.random.default_rng(seed), contributing=[0, 1]).frame
        r = f[f.topic == data[0].topic].iloc[0]
        counts[r.docno] += 1
        recorded[r.docno] = r.inclusion
    freq = counts / 4000
    assert np.allclose([recorded[d] for d in recorded], pi[[list(counts.index).index(d) for d in recorded]])
    assert np.all(np.abs(freq.to_numpy() - pi) < 4 * np.sqrt(pi * (1 - pi) / 4000))
    assert pi.max() / pi.min() > 3  # the weights matter: top ranks first
    assert np.allclose(w, ap_prior(np.asarray(data[0].ranks)[idx, s][:, None].astype(np.int64), 30))


def test_rounds_never_draw_a_document_twice_and_only_unjudged_documents_of_the_run(col):
    data = RankData.build(col.runs, _pool(col), depth=30)
    f = draw_topup(data, ["sys04", "sys05"], 3, depth=30, rng=np.random.default_rng(1), contributing=[0, 1]).frame
    assert not f.duplicated(["topic", "docno"]).any() and set(f["round"]) == {1, 2, 3}
    assert (f.groupby(["run", "topic"]).size() <= 3).all() and (f.grade == -1).all()
    for r in f.itertuples():
        tr = data[data.topics.index(r.topic)]
        i = list(tr.docnos).index(r.docno)
        assert not tr.judged[i] and 0 < tr.ranks[i, data.system_index(r.run)] <= 30
    with pytest.raises(BayevalInputError, match="contributed"):
        draw_topup(data, ["sys01"], 1, depth=30, rng=np.random.default_rng(0), contributing=[0, 1])
    with pytest.raises(BayevalInputError, match="per_topic"):
        draw_topup(data, ["sys05"], 0, depth=30, rng=np.random.default_rng(0))


def test_the_file_round_trips_and_bad_lines_name_file_and_line(tmp_path):
    f = pd.DataFrame({"topic": ["1", "2"], "docno": ["a", "b"], "grade": [2, -1], "run": ["x", "x"], "round": [1, 1],
                      "inclusion": [0.25, 0.125]})
    path = tmp_path / "t.txt"
    TopUpSample(f, 2).write(path)
    back = read_topup(path, relevance_level=2)
    assert back.frame.equals(TopUpSample(f, 2).frame) and back.summary().to_dict("records") == [
        {"run": "x", "drawn": 2, "judged": 1, "relevant": 1}]
    path.write_text("1 a 1 x 1 0.5\n2 b 1 x one 0.5\n")
    with pytest.raises(FileFormatError, match=r"t\.txt.*2"):
        read_topup(path)
    path.write_text("1 a 1 x 1 1.5\n")
    with pytest.raises(FileFormatError, match="inclusion"):
        read_topup(path)
    with pytest.raises(BayevalInputError, match="twice"):
        TopUpSample(pd.concat([f, f]))
    assert list(TopUpSample(f).frame.columns) == list(COLUMNS)


@pytest.fixture
def campaign_dir(tmp_path, col):
    (tmp_path / "runs").mkdir()
    for r in col.runs:
        write_run(r, tmp_path / "runs" / r.name)
    write_qrels(_pool(col), tmp_path / "pool.txt")
    write_qrels(col.qrels, tmp_path / "truth.txt")
    rc, _, err = run_cli("judge", "init", tmp_path / "c.sqlite", tmp_path / "pool.txt",
                         *sorted((tmp_path / "runs").iterdir()), "--depth", "30")
    assert rc == 0, err
    return tmp_path


def test_a_campaign_stores_the_topup_serves_it_first_and_continues_its_rounds(campaign_dir, col):
    path = campaign_dir / "c.sqlite"
    rc, out, err = run_cli("judge", "topup", path, "sys04", "sys05", "--per-topic", "1", "--seed", "3")
    assert rc == 0 and "drew 10 documents" in out, err
    with Campaign.open(path) as camp:
        first = camp.topup_sample().frame
        served = camp.next(10)
        assert {(c.topic, c.docno) for c in served} == set(zip(first.topic, first.docno, strict=True))
        camp.record([(c.topic, c.docno, max(col.qrels.grade_of(c.topic, c.docno) or 0, 0)) for c in served])
        assert camp.draw_topup(["sys05"], 1, seed=4) == 5
        f = camp.topup_sample().frame
        assert set(f[f.run == "sys05"]["round"]) == {1, 2} and not f.duplicated(["topic", "docno"]).any()
        assert (f.grade[:10] >= 0).all() and (f.grade[10:] == -1).all()
    rc, _, err = run_cli("judge", "topup", path, "sys01", "--per-topic", "1")
    assert rc == 2 and "contributed" in err and "Traceback" not in err
    rc, _, err = run_cli("judge", "topup", path, "nosuch", "--per-topic", "1")
    assert rc == 2 and "nosuch" in err


def test_a_kill_while_drawing_leaves_no_partial_topup(campaign_dir, monkeypatch):
    """The draw is one transaction: a failure while inserting (a process killed) leaves the table empty."""
    path = campaign_dir / "c.sqlite"
    calls = {"n": 0}
    real = sqlite3.Connection.executemany

    class Boom(Exception):
        pass

    with Campaign.open(path) as camp:
        conn = camp._conn

        class Wrapped:
            def __getattr__(self, name):
                return getattr(conn, name)

            def executemany(self, sql, rows):
                if sql.startswith("INSERT INTO topups"):
                    rows = list(rows)
                    real(conn, sql, rows[:3])
                    calls["n"] += 1
                    raise Boom()
                return real(conn, sql, rows)

        camp._conn = Wrapped()
        with pytest.raises(Boom):
            camp.draw_topup(["sys04"], 1)
        camp._conn = conn
        assert calls["n"] == 1 and len(camp.topup_sample().frame) == 0


def test_evaluate_and_report_learn_from_an_exported_topup_and_say_so(campaign_dir, col, tmp_path):
    path = campaign_dir / "c.sqlite"
    assert run_cli("judge", "topup", path, "sys04", "sys05", "--per-topic", "2")[0] == 0
    with Campaign.open(path) as camp:
        todo = camp.next(20)  # the top-up only (the selector would pick from every run after it)
        camp.record([(c.topic, c.docno, max(col.qrels.grade_of(c.topic, c.docno) or 0, 0)) for c in todo])
    rc, out, err = run_cli("judge", "export", path, "--out", tmp_path / "all.txt", "--topup", tmp_path / "top.txt")
    assert rc == 0 and "20 top-up documents" in out, err
    model = tmp_path / "m.toml"
    model.write_text(_reuse_model())
    runs = sorted((campaign_dir / "runs").iterdir())
    rc, out, err = run_cli("evaluate", tmp_path / "all.txt", *runs, "--depth", "30", "--model", model, "--fit",
                           "laplace", "--topup", tmp_path / "top.txt", "--pairs", "--method", "delta")
    assert rc == 0, err
    assert "top-up: 20 judged documents" in out and "levels learned from them (sys04, sys05)" in out
    rc, out, err = run_cli("report", tmp_path / "all.txt", *runs, "--depth", "30", "--model", model,
                           "--topup", tmp_path / "top.txt", "--mc-draws", "200")
    assert rc == 0 and "top-up: 20 judged documents" in out, err
    rc, _, err = run_cli("evaluate", tmp_path / "all.txt", *runs, "--default-p", "0.1", "--topup", tmp_path / "top.txt")
    assert rc == 2 and "--topup" in err
    (tmp_path / "bad.txt").write_text("1 x 1\n")
    rc, _, err = run_cli("evaluate", tmp_path / "all.txt", *runs, "--model", model, "--topup", tmp_path / "bad.txt")
    assert rc == 2 and "bad.txt" in err and "Traceback" not in err


def _reuse_model() -> str:
    from bayeval.relevance.config import models_dir

    return (models_dir() / "hier-default.toml").read_text().rstrip() + \
        "\n\n[held_out_runs]\nreuse_run_sd = 1.0\nreuse_common_sd = 0.5\n"


def test_a_robustness_trial_tops_up_the_held_out_runs(coldir, tmp_path):
    """``RobustnessConfig(topup=1)``: the bayes estimate of a trial learns from one judged document a topic of each
    held-out run (the rows differ from pure reuse on the same selection); the study command takes ``--topup``."""
    from bayeval.experiments import RobustnessConfig, load_collection
    from bayeval.experiments.robustness import STUDY_STRATEGIES, judged_topup, prepare_trial, run_trial

    model = tmp_path / "reuse.toml"
    model.write_text(_reuse_model())
    col = load_collection(coldir)
    kw = {"k": 4, "c": 2, "depth": 40, "methods": ("bayes",), "confidences": ("delta",), "bayes_config": str(model),
          "p_draws": 50}
    pure = run_trial(col, RobustnessConfig(**kw), 0)
    top = run_trial(col, RobustnessConfig(**kw, topup=1), 0)
    assert len(pure) == len(top) == 6 and not np.allclose(pure.p_less, top.p_less)
    ctx = prepare_trial(col, RobustnessConfig(**kw, topup=1), 0)
    data, sample = judged_topup(ctx, STUDY_STRATEGIES["rtc"].select(ctx, {}), 1)
    s = sample.summary()
    assert set(s.run) <= set(ctx.names[2:]) and (s.drawn <= 6).all() and (s.judged == s.drawn).all()
    rc, out, err = run_cli("experiment", "robustness", "run", coldir, "--trials", "1", "--k", "4", "--methods",
                           "bayes", "--confidences", "delta", "--bayes-config", model, "--topup", "1", "--depth", "40",
                           "--out", tmp_path / "t.parquet", "--no-progress")
    assert rc == 0 and "top-up 1 a topic" in out, err
