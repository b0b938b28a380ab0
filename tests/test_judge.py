"""Judging campaigns (SQLite): durability under kill -9, idempotent and atomic recording, the CLI."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pandas as pd
import pytest
from conftest import run_cli

from bayeval.errors import BayevalInputError, FileFormatError
from bayeval.io import read_qrels, write_qrels, write_run
from bayeval.selection import Campaign, QrelsAssessor, read_judgments
from bayeval.synthetic import make_collection

_cli = run_cli


@pytest.fixture(scope="module")
def col():
    return make_collection(n_topics=4, n_systems=3, n_docs=60, depth=20, judged_depth=3, seed=21)


@pytest.fixture(scope="module")
def files(tmp_path_factory, col):
    d = tmp_path_factory.mktemp("judge")
    write_qrels(col.qrels, d / "full.qrels")
    write_qrels(col.judgments, d / "shallow.qrels")
    runs = []
    for run in col.runs:
        write_run(run, d / f"{run.name}.run")
        runs.append(str(d / f"{run.name}.run"))
    return d, runs


def test_campaign_lifecycle(tmp_path, col):
    path = tmp_path / "c.sqlite"
    camp = Campaign.create(path, col.runs, initial=col.judgments, measure="AP", alpha=0.95, depth=20)
    assert camp.counts() == {"initial": sum(len(col.judgments[t]) for t in col.judgments.topics)}
    with pytest.raises(BayevalInputError, match="already exists"):
        Campaign.create(path, col.runs)
    batch = camp.next(5)
    assert len(batch) == 5 and len(camp.history()) == 5
    assert not any(camp.selector().is_judged(c.topic, c.docno) for c in batch)
    res = camp.record([(c.topic, c.docno, col.qrels.grade_of(c.topic, c.docno) or 0) for c in batch])
    assert (res.added, res.duplicates) == (5, 0)
    # idempotent: the same judgments again change nothing
    res = camp.record([(c.topic, c.docno, col.qrels.grade_of(c.topic, c.docno) or 0) for c in batch])
    assert (res.added, res.duplicates) == (0, 5) and camp.status().judgments == 5
    camp.close()
    # reopening rebuilds the same state from the file
    again = Campaign.open(path)
    assert again.status().judgments == 5
    assert again.next(3) == Campaign.open(path).next(3)
    out = tmp_path / "out.qrels"
    assert again.export_qrels(out) == 5 + camp_initial(col)
    q = read_qrels(out)
    assert q.grade_of(batch[0].topic, batch[0].docno) == (col.qrels.grade_of(batch[0].topic, batch[0].docno) or 0)


def camp_initial(col) -> int:
    return sum(len(col.judgments[t]) for t in col.judgments.topics)


def test_record_rejects_whole_file_naming_the_line(tmp_path, col):
    camp = Campaign.create(tmp_path / "c.sqlite", col.runs, measure="P@10", depth=20)
    c = camp.next(2)
    good = f"topic,docno,grade\n{c[0].topic},{c[0].docno},1\n{c[1].topic},{c[1].docno},0\n"
    for bad_line, match in ((f"999,{c[0].docno},1", "topic"), (f"{c[0].topic},NO-SUCH-DOC,1", "docno|document"),
                            (f"{c[0].topic},{c[0].docno},x", "grade"), (f"{c[0].topic},{c[0].docno},0", "already")):
        f = tmp_path / "j.csv"
        f.write_text(good + bad_line + "\n")
        with pytest.raises(FileFormatError, match=match) as err:
            camp.record(f)
        assert err.value.line == 4 and err.value.path == str(f)
        assert camp.status().judgments == 0 and camp.counts() == {}  # nothing half-applied
    f.write_text(good)
    assert camp.record(f).added == 2
    f.write_text(f"{c[0].topic} 0 {c[0].docno} 0\n")  # qrels line with a conflicting grade
    with pytest.raises(FileFormatError, match="already judged 1"):
        camp.record(f)
    f.write_text(f"{c[0].topic} 0 {c[0].docno} 1\n")  # the same judgment as a qrels line: a no-op
    assert camp.record(f).duplicates == 1


def test_read_judgments_formats(tmp_path):
    f = tmp_path / "a.csv"
    f.write_text("# comment\nTopic,DocNo,Relevance\n1,d1,2\n\n1,d2,0.0\n")
    assert [(j.topic, j.docno, j.grade, j.line) for j in read_judgments(f)] == [("1", "d1", 2, 3), ("1", "d2", 0, 5)]
    f.write_text("1 0 d1 1\n1 d2 0\n")
    assert [(j.docno, j.grade) for j in read_judgments(f)] == [("d1", 1), ("d2", 0)]
    f.write_text("topic,docno,grade\n1,d1,\n")
    with pytest.raises(FileFormatError, match=r"a.csv:2: no grade"):
        read_judgments(f)
    f.write_text("1 d1\n")
    with pytest.raises(FileFormatError, match=":1:"):
        read_judgments(f)


def test_qrels_assessor_counts_missing_as_nonrelevant(col):
    a = QrelsAssessor(col.judgments)
    t = col.judgments.topics[0]
    d = col.judgments[t].docnos[0]
    assert a.judge(t, d) == col.judgments.grade_of(t, d) and a.missing == 0
    assert a.judge(t, "not-judged") == 0 and a.missing == 1 and a.asked == 2


_LOOP = textwrap.dedent("""
    import sys
    from bayeval.io import read_qrels
    from bayeval.selection import Campaign, QrelsAssessor
    camp = Campaign.open(sys.argv[1])
    a = QrelsAssessor(read_qrels(sys.argv[2]))
    print("ready", flush=True)
    while True:
        c = camp.next(1)
        if not c:
            break
        c = c[0]
        camp.record([(c.topic, c.docno, a.judge(c.topic, c.docno))], source="qrels")
        print("ok", c.topic, c.docno, flush=True)
    print("done", flush=True)
""")


def test_kill_during_judging_loses_nothing(tmp_path, files, col):
    d, runs = files
    path = tmp_path / "k.sqlite"
    Campaign.create(path, col.runs, measure="AP", alpha=0.999999, depth=20).close()
    script = tmp_path / "loop.py"
    script.write_text(_LOOP)
    committed = []
    for wait_for in (3, 11, 25):
        proc = subprocess.Popen([sys.executable, str(script), str(path), str(d / "full.qrels")],
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "ready"
        n = 0
        while n < wait_for:
            line = proc.stdout.readline()
            if not line or line.startswith("done"):
                break
            committed.append(tuple(line.split()[1:]))
            n += 1
        os.kill(proc.pid, signal.SIGKILL)  # in the middle of its next next()/record()
        proc.wait()
        proc.stdout.close()
        camp = Campaign.open(path)  # reopens
        got = set(map(tuple, camp.judgments()[["topic", "docno"]].to_numpy().tolist()))
        assert set(committed) <= got  # every judgment reported committed is there
        assert camp.status().judgments == len(got)
        camp.close()
    assert len(committed) >= 3 + 11


_RECORD = textwrap.dedent("""
    import sys
    from bayeval.selection import Campaign
    camp = Campaign.open(sys.argv[1])
    camp.selector()  # built before the signal: what follows is the record call alone
    print("ready", flush=True)
    camp.record(sys.argv[2])
    print("done", flush=True)
""")


def test_kill_during_record_is_all_or_nothing(tmp_path):
    big = make_collection(n_topics=30, n_systems=2, n_docs=300, depth=100, seed=5)
    empty = tmp_path / "empty.sqlite"
    Campaign.create(empty, big.runs, measure="AP", depth=100).close()
    f = tmp_path / "all.csv"
    rows = [(t, dn, int(g)) for t in big.qrels.topics for dn, g in zip(big.qrels[t].docnos, big.qrels[t].grades,
                                                                         strict=True)]
    camp = Campaign.open(empty)
    sel = camp.selector()
    rows = [r for r in rows if r[1] in set(sel.data[r[0]].docnos.tolist())]
    camp.close()
    pd.DataFrame(rows, columns=["topic", "docno", "grade"]).to_csv(f, index=False)
    script = tmp_path / "record.py"
    script.write_text(_RECORD)
    # how long the record call takes here, then kills at random moments inside that window, each on a fresh
    # copy of the empty campaign, until several kills have landed before the call returned
    probe = tmp_path / "probe.sqlite"
    shutil.copy(empty, probe)
    proc = subprocess.Popen([sys.executable, str(script), str(probe), str(f)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    t0 = time.perf_counter()
    assert proc.stdout.readline().strip() == "done"
    window = time.perf_counter() - t0
    proc.wait()
    proc.stdout.close()
    rng = np.random.default_rng(0)
    interrupted, outcomes = 0, set()
    for attempt in range(40):
        path = tmp_path / f"r{attempt}.sqlite"
        shutil.copy(empty, path)
        proc = subprocess.Popen([sys.executable, str(script), str(path), str(f)], stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.0, window))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        finished = proc.stdout.read().strip() == "done"
        proc.stdout.close()
        interrupted += not finished
        camp = Campaign.open(path)  # reopens after the kill
        n = camp.counts().get("human", 0)
        assert n in (0, len(rows))  # never half a file
        assert camp.status().judgments == n
        outcomes.add(n)
        camp.close()
        if interrupted >= 4:
            break
    assert interrupted >= 4  # the kills did land inside record()
    rc, out, _ = _cli("judge", "record", path, f)
    assert rc == 0
    camp = Campaign.open(path)
    assert camp.counts()["human"] == len(rows) and camp.status().judgments == len(rows)


def test_dcg_campaign_refuses_a_grade_above_max_grade(tmp_path, col):
    path = tmp_path / "dcg.sqlite"
    Campaign.create(path, col.runs, measure="DCG@10", depth=20).close()  # max_grade: 1 (no judgment yet)
    camp = Campaign.open(path)
    c = camp.next(2)
    f = tmp_path / "j.csv"
    f.write_text(f"topic,docno,grade\n{c[0].topic},{c[0].docno},1\n{c[1].topic},{c[1].docno},3\n")
    with pytest.raises(FileFormatError, match=r"j.csv:3: .*max_grade=1"):
        camp.record(f)
    assert camp.status().judgments == 0  # nothing of the file applied
    camp.close()


# ---------------------------------------------------------------------------------------------- CLI


def test_cli_campaign(tmp_path, files, col):
    d, runs = files
    camp = tmp_path / "cli.sqlite"
    rc, out, err = _cli("judge", "init", camp, d / "shallow.qrels", *runs, "--measure", "AP", "--alpha", "0.95",
                        "--method", "mtc", "--depth", "20")
    assert rc == 0 and "3 runs" in out and f"{camp_initial(col)} initial" in out
    rc, out, _ = _cli("judge", "next", camp, "--n", "4")
    assert rc == 0
    req = pd.read_csv(io.StringIO(out), dtype=str)
    assert list(req.columns[:3]) == ["topic", "docno", "grade"] and len(req) == 4
    req["grade"] = [col.qrels.grade_of(t, dn) or 0 for t, dn in zip(req.topic, req.docno, strict=True)]
    req.to_csv(tmp_path / "answers.csv", index=False)
    rc, out, _ = _cli("judge", "record", camp, tmp_path / "answers.csv")
    assert rc == 0 and "recorded 4 new" in out
    rc, out, _ = _cli("judge", "record", camp, tmp_path / "answers.csv")
    assert rc == 0 and "recorded 0 new judgments (4 already recorded)" in out
    rc, out, _ = _cli("judge", "status", camp, "--format", "json")
    st = json.loads(out)
    assert rc == 0 and st["judgments"] == 4 and len(st["pairs"]) == 3 and st["by_source"]["human"] == 4
    assert {"run_a", "run_b", "p_less", "decided"} <= set(st["pairs"][0])
    assert all((p["remaining"] == 0) == p["decided"] for p in st["pairs"])
    rc, out, _ = _cli("judge", "status", camp)
    assert rc == 0 and "4 judgments" in out and "remaining" in out
    if not all(p["decided"] for p in st["pairs"]):
        assert "judgments remaining (estimate" in out
    rc, out, _ = _cli("judge", "export", camp, "--out", tmp_path / "x.qrels")
    assert rc == 0 and len(read_qrels(tmp_path / "x.qrels").to_frame()) == 4 + camp_initial(col)
    rc, _, err = _cli("judge", "next", camp, "--n", "2", "--out", tmp_path / "todo.csv")
    assert rc == 0 and len(pd.read_csv(tmp_path / "todo.csv")) == 2


def test_cli_errors_exit_2(tmp_path, files):
    d, runs = files
    camp = tmp_path / "e.sqlite"
    assert _cli("judge", "init", camp, *runs, "--depth", "20")[0] == 0
    bad = tmp_path / "bad.csv"
    bad.write_text("topic,docno,grade\n1,nope,1\n")
    rc, out, err = _cli("judge", "record", camp, bad)
    assert rc == 2 and f"{bad}:2:" in err and "Traceback" not in err
    assert _cli("judge", "status", tmp_path / "missing.sqlite")[0] == 2
    assert _cli("judge", "init", camp, *runs)[0] == 2  # exists
    assert _cli("judge", "init", tmp_path / "f.sqlite", *runs, "--measure", "bpref")[0] == 2  # no weights
    # nDCG@5 is decided on DCG@5 (tests/test_judge_graded.py)
    assert _cli("judge", "simulate", d / "full.qrels", *runs, "--alpha", "1.5")[0] == 2
    assert _cli("judge", "init", tmp_path / "g.sqlite", *runs, "--pairs", "sys01:zzz")[0] == 2
    assert not (tmp_path / "f.sqlite").exists() and not (tmp_path / "g.sqlite").exists()


@pytest.mark.parametrize("method", ["mtc", "pool", "rtc"])
def test_cli_simulate_json(files, method):
    d, runs = files
    rc, out, err = _cli("judge", "simulate", d / "full.qrels", *runs, "--method", method, "--depth", "20",
                        "--alpha", "0.9", "--format", "json", "--seed", "1")
    assert rc == 0, err
    res = json.loads(out)
    assert isinstance(res["judgments"], int) and res["judgments"] > 0 and len(res["pairs"]) == 3
    for p in res["pairs"]:
        assert {"run_a", "run_b", "p_less", "decided", "correct"} <= set(p)
        assert 0.0 <= p["p_less"] <= 1.0 and (p["correct"] is None) == (not p["decided"])
    from bayeval.stats import brier_score

    want = brier_score([p["p_less"] for p in res["pairs"]], [round(p["true_delta"], 12) for p in res["pairs"]])
    assert res["scores"]["pairs"] == 3 and res["scores"]["brier"] == pytest.approx(want.mean())
    assert set(res["scores"]) >= {"log_score", "share_95", "share_99", "right_95", "right_99"}
    rc, out, _ = _cli("judge", "simulate", d / "full.qrels", *runs, "--method", method, "--depth", "20",
                      "--budget", "2", "--format", "json")
    assert rc == 0 and json.loads(out)["judgments"] <= 2


def test_trec8_mtc_pair(shared_data):
    from bayeval.data import RankData
    from bayeval.io import read_runs
    from bayeval.measures import evaluate
    from bayeval.selection import simulate

    runs = read_runs([shared_data / "trec8" / "runs" / "input.INQ603.gz",
                      shared_data / "trec8" / "runs" / "input.ok8amxc.gz"])
    qrels = read_qrels(shared_data / "trec8" / "qrels.txt.gz")
    res = simulate(runs, qrels, method="mtc", measure="AP", depth=100, budget=300)
    assert 0 < res.judgments <= 300 and len(res.history) == res.judgments
    # the truth: ΔMAP of the depth-100 runs on the full qrels, averaged over all 50 topics (trec_eval -c)
    ev = evaluate(RankData.build(runs, qrels, depth=100), "AP")
    assert res.pairs[0].true_delta == pytest.approx(ev.values[0, 0].mean() - ev.values[0, 1].mean(), abs=1e-9)
    # the judged documents are the ones MTC weighs: retrieved in the top 100 of one of the two runs
    top = {(t, d) for r in runs for t in r.topics for d in r.ranking(t)[:100]}
    assert all((t, d) in top for t, d, _ in res.history)
