"""Graded judging: `judge init --measure nDCG@10` (decided on DCG@10, saying so), `--relevance-level 2` reaching the
campaign, and `judge next` and the judging page offering and naming every grade of the scale."""

from __future__ import annotations

import re

import pytest
from conftest import run_cli

from bayeval.io import write_qrels, write_run
from bayeval.selection import Campaign
from bayeval.serve.desk import grade_names
from bayeval.synthetic import make_collection


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("graded")
    col = make_collection(n_topics=4, n_systems=3, n_docs=60, depth=20, judged_depth=5, seed=7)
    paths = []
    for run in col.runs:
        write_run(run, d / run.name)
        paths.append(d / run.name)
    write_qrels(col.judgments, d / "q")
    return d, paths


def test_init_ndcg_decides_on_dcg_and_keeps_the_relevance_level(files, tmp_path):
    d, runs = files
    camp = tmp_path / "c.sqlite"
    rc, out, err = run_cli("judge", "init", camp, *runs, "--measure", "nDCG@10", "--relevance-level", "2",
                           "--depth", "20")
    assert rc == 0, err
    assert "decided on DCG@10" in err or "pairs decided on DCG@10" in err
    with Campaign.open(camp) as c:
        assert c.settings["measure"] == "DCG@10" and int(c.settings["relevance_level"]) == 2
        sel = c.selector()
        assert sel.level == 2 and sel.max_grade >= 2
    rc, out, err = run_cli("judge", "next", camp, "--n", "3", "--out", tmp_path / "todo.csv")
    assert rc == 0, err
    assert "0 = not relevant, 1 = related (counts as not relevant), 2 = relevant" in err
    rc, out, err = run_cli("judge", "init", tmp_path / "b.sqlite", *runs, "--measure", "nDCG")
    assert rc == 2 and "Traceback" not in err  # no cutoff: the selector's one-line error


def test_grade_names_cover_the_scale():
    assert grade_names(1) == {0: "not relevant", 1: "relevant"}
    assert list(grade_names(3, 1).values()) == ["not relevant", "relevant", "highly relevant", "perfect"]
    assert grade_names(5, 1)[5] == "grade 5"


def test_the_page_offers_a_key_and_a_name_for_every_grade(files, tmp_path):
    pytest.importorskip("starlette", reason="bayeval[serve] (starlette) is not installed")
    pytest.importorskip("httpx", reason="httpx (starlette's test client) is not installed")
    from starlette.testclient import TestClient

    from bayeval.serve.app import create_app

    d, runs = files
    camp = tmp_path / "c.sqlite"
    assert run_cli("judge", "init", camp, *runs, "--measure", "DCG@10", "--relevance-level", "2", "--max-grade", "3",
                   "--depth", "20")[0] == 0
    with TestClient(create_app(camp), base_url="http://127.0.0.1") as c:
        csrf = re.search(r'name="csrf" value="([^"]+)"', c.get("/").text).group(1)
        page = c.post("/login", data={"name": "ann", "csrf": csrf}).text
    keys = re.findall(r'data-key="(\d)"', page)
    assert keys == ["0", "1", "2", "3"]
    for name in ("related (counts as not relevant)", "relevant", "highly relevant"):
        assert f"{name} <kbd>" in page
