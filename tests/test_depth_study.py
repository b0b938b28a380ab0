"""The depth study (bayeval.experiments.depth, ``bayeval experiment depth``; docs/depth.md): pool at K, evaluate at D,
the anchors beside E[MAP], and the statistics — checked where the answer is known (judged to the full depth every
anchor is the true MAP; a hand-made table's coverage and ratios)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import run_cli, write_collection_dir

from bayeval.data import RankData, pool_qrels
from bayeval.errors import BayevalInputError
from bayeval.experiments.depth import (
    BIN_COLUMNS,
    DEPTH_COLUMNS,
    DepthVariant,
    depth_anchors,
    depth_split,
    depth_statistics,
    depth_study,
    p_reliability,
    parse_variant,
)
from bayeval.io import load_collection
from bayeval.measures import evaluate
from bayeval.relevance import estimate_probabilities
from bayeval.synthetic import make_collection


@pytest.fixture(scope="module")
def coldir(tmp_path_factory):
    col = make_collection(n_topics=5, n_systems=5, n_docs=150, depth=30, judged_depth=30, base_rate=0.2, seed=8)
    return write_collection_dir(col, tmp_path_factory.mktemp("depth"))


def test_judged_to_the_full_depth_every_anchor_but_bpref_is_ap_on_the_retrieved_documents(coldir):
    col = load_collection(coldir, condense=True)
    split = depth_split(col, 30, 30)
    a = depth_anchors(split)
    # every retrieved document judged: AP with unjudged = 0, condensed AP and infAP (nothing pooled but unjudged)
    # are all AP with R the relevant documents some run retrieves ...
    pooled = np.asarray(evaluate(RankData.build(col.runs(), pool_qrels(col.runs(), col.qrels(), 30), depth=30),
                                 ["AP"]).mean()).reshape(-1)
    for name in ("trec_eval", "condensed"):
        np.testing.assert_allclose(a[name], pooled, atol=1e-12)
    # infAP to its smoothing: precision above a relevant document is estimated as (r + ε)/(r + n + 2ε), ε = 1e-5
    np.testing.assert_allclose(a["infAP"], pooled, atol=1e-5)
    # ... while the truth's R also counts the relevant documents no run retrieves (the complete qrels): lower AP
    np.testing.assert_allclose(a["true"], np.asarray(evaluate(RankData.build(col.runs(), col.qrels(), depth=30),
                                                                ["AP"]).mean()).reshape(-1))
    assert np.all(a["true"] < pooled)


def test_a_shallow_pool_judges_only_the_top_k_and_p_is_scored_on_the_rest(coldir):
    col = load_collection(coldir, condense=True)
    split = depth_split(col, 5, 30)
    for tr in split.data:
        ranks = np.asarray(tr.ranks)
        top = ((ranks > 0) & (ranks <= 5)).any(axis=1)
        np.testing.assert_array_equal(tr.judged, top)  # every document of a top 5 is judged, and no other
    a = depth_anchors(split)
    assert np.all(a["trec_eval"] >= 0) and np.all(a["infAP"] >= 0)
    est = estimate_probabilities(split.data, "smoothed")
    rel = p_reliability(split, est)
    unj = [~np.asarray(tr.judged) for tr in split.data]
    assert rel["unjudged"].iloc[0] == sum(int(u.sum()) for u in unj) == rel["n"].sum()
    np.testing.assert_allclose(rel["sum_p"].iloc[0], sum(float(p[u].sum()) for p, u in zip(est.p, unj, strict=True)))
    truth = split.unjudged_truth()
    assert rel["relevant"].iloc[0] == sum(int(r.sum()) for _, r in truth)
    inside = (rel["lower"] <= rel["mean_p"]) & (rel["mean_p"] <= rel["upper"])
    np.testing.assert_array_equal(rel["mean_inside"], inside)


def test_statistics_of_a_hand_made_table():
    runs = pd.DataFrame({"collection": "c", "pool_depth": 10, "depth": 100, "variant": "m",
                         "run": list("abcd"), "true": [0.2, 0.4, 0.1, 0.0],
                         "expected": [0.22, 0.36, 0.1, 0.05], "lower": [0.18, 0.37, 0.05, 0.0],
                         "upper": [0.26, 0.42, 0.15, 0.1], "model_share": 0.5, "seconds": 1.0})
    s = depth_statistics(runs).iloc[0]
    # run d (true 0) is left out; ratios 1.1, 0.9, 1.0 -> median 1.0; a and c covered, b (0.4 vs 0.37-0.42)
    # covered too: 3 of 3; half-widths 0.04, 0.025, 0.05 -> 0.04; errors 0.02, 0.04, 0 -> 0.02
    assert s["runs"] == 3 and s["ratio"] == pytest.approx(1.0) and s["coverage"] == 1.0
    assert s["half_width"] == pytest.approx(0.04) and s["error"] == pytest.approx(0.02)
    assert s["width_error"] == pytest.approx(2.0) and s["tau"] == pytest.approx(1.0)


def test_the_study_and_its_command(coldir, tmp_path):
    col = load_collection(coldir, condense=True)
    st = depth_study(col, [5], [parse_variant("smoothed"), DepthVariant("hier-default", unseen=True)], depth=30)
    assert tuple(st.runs.columns) == DEPTH_COLUMNS and tuple(st.bins.columns) == BIN_COLUMNS
    assert set(st.runs["variant"]) == {"trec_eval", "condensed", "bpref", "infAP", "smoothed", "hier-default+unseen"}
    stats = st.statistics()
    assert set(stats["variant"]) == set(st.runs["variant"]) and stats["coverage"].notna().sum() == 2
    out, bins = tmp_path / "runs.csv", tmp_path / "bins.parquet"
    rc, text, err = run_cli("experiment", "depth", str(coldir), "--pool-depths", "5", "--depth", "30", "--models",
                            "smoothed", "--out", str(out), "--bins", str(bins))
    assert rc == 0, err
    assert "infAP" in text and "smoothed" in text
    assert len(pd.read_csv(out)) == 5 * 5 and len(pd.read_parquet(bins)) > 0
    rc, _, err = run_cli("experiment", "depth", str(coldir), "--pool-depths", "0")
    assert rc == 2 and "--pool-depths" in err
    rc, _, err = run_cli("experiment", "depth", str(coldir), "--models", "no-such-model")
    assert rc == 2 and "no-such-model" in err
    rc, _, err = run_cli("experiment", "depth", str(coldir), "--out", str(tmp_path / "x.txt"))
    assert rc == 2 and "x.txt" in err


def test_variants_are_parsed_and_bad_ones_refused():
    v = parse_variant("hier-depth/laplace+unseen")
    assert (v.model, v.fit, v.unseen, v.name) == ("hier-depth", "laplace", True, "hier-depth/laplace+unseen")
    with pytest.raises(BayevalInputError, match="unseen"):
        parse_variant("hier-depth+seen")
    with pytest.raises(BayevalInputError, match="fit"):
        parse_variant("hier-depth/sgd")
    with pytest.raises(BayevalInputError, match="pool_depth"):
        depth_split(None, 0)
