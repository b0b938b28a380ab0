"""Reusability analysis, simulation of the design on complete judgments, and the plot."""

from __future__ import annotations

from math import comb

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from scipy import stats  # noqa: E402

from bayeval.data import pool_qrels  # noqa: E402
from bayeval.data.rankdata import RankData  # noqa: E402
from bayeval.design import (  # noqa: E402
    Design,
    TopicScores,
    analyze_design,
    assign_design,
    plan_design,
    simulate_design,
)
from bayeval.errors import BayevalInputError  # noqa: E402
from bayeval.measures import evaluate  # noqa: E402
from bayeval.synthetic import make_collection  # noqa: E402

SITES = ("A", "B", "C", "D", "E")
RUNS_PER_SITE = {"A": 3, "B": 2, "C": 3, "D": 1, "E": 2}


def _world(seed: int = 0, n_topics: int = 100, degrade: float = 0.0, spread=(0.15, 0.45), min_baseline: int = 20):
    """Scores with a topic effect; runs of site A lose ``degrade`` on the topics A was held out of."""
    rng = np.random.default_rng(seed)
    design = assign_design(n_topics, SITES, k=2, min_baseline=min_baseline)
    runs = [f"{s}{i}" for s in SITES for i in range(RUNS_PER_SITE[s])]
    site_of = {r: r[0] for r in runs}
    quality = np.linspace(*spread, len(runs))
    rng.shuffle(quality)
    topic = rng.normal(0.0, 0.12, design.n_topics)
    values = quality[:, None] + topic[None, :] + rng.normal(0.0, 0.06, (len(runs), design.n_topics))
    if degrade:
        held_a = ~design.contributes[:, design.site_index("A")]
        for i, r in enumerate(runs):
            if site_of[r] == "A":
                values[i, held_a] -= degrade
    return TopicScores(runs, design.topics, np.clip(values, 0, 1)), design, site_of


def test_pair_counts_and_topic_sets_follow_the_design():
    scores, design, site_of = _world()
    res = analyze_design(scores, design, site_of, draws=500)
    r = RUNS_PER_SITE
    within = sum(comb(n, 2) for n in r.values())
    between = sum(r[a] * r[b] for i, a in enumerate(SITES) for b in SITES[i + 1:])
    assert res.within.table.n_pairs == within
    assert res.between.table.n_pairs == between
    assert res.participant.table.n_pairs == 2 * between
    plan = plan_design(100, 5, 2, 20)
    g = res.within.groups
    assert set(g["site"]) == {"A", "B", "C", "E"}  # D has one run: no within-site pair
    assert (g["n_baseline"] == plan.within_baseline).all() and (g["n_reuse"] == plan.within_reuse).all()
    assert (res.between.groups["n_reuse"] == plan.between_reuse).all()
    assert (res.participant.groups["n_reuse"] == plan.participant).all()
    assert (res.participant.groups["n_baseline"] == plan.between_baseline).all()
    # the aggregated tables are the sums of the groups' tables
    for kind in ("within", "between", "participant"):
        sa = res.agreement(kind)
        cells = [sa.groups[f"O_{c}"].sum() for c in ("both", "commission", "omission", "neither")]
        assert sa.observed.ravel().tolist() == cells
        e = [sa.groups[f"E_{c}"].sum() for c in ("both", "commission", "omission", "neither")]
        assert np.allclose(sa.expected.ravel(), e)
        assert sa.expected.sum() == pytest.approx(sa.table.n_pairs)


def test_pairs_table_is_consistent_with_scipy():
    scores, design, site_of = _world(1)
    res = analyze_design(scores, design, site_of, kinds=("within",), draws=200)
    pairs = res.pairs()
    row = pairs.iloc[0]
    a, b = scores.runs.index(row.run_a), scores.runs.index(row.run_b)
    base, reuse = design.masks("within", row.site_a)
    assert row.p_base == pytest.approx(stats.ttest_rel(scores.values[a, base], scores.values[b, base]).pvalue)
    assert row.p_reuse == pytest.approx(stats.ttest_rel(scores.values[a, reuse], scores.values[b, reuse]).pvalue)
    d = scores.values[a, base] - scores.values[b, base]
    assert row.effect == pytest.approx(d.mean() / d.std(ddof=1))
    assert row.mean_diff_reuse == pytest.approx((scores.values[a, reuse] - scores.values[b, reuse]).mean())
    assert res.between is None and res.participant is None
    with pytest.raises(BayevalInputError, match="was not analysed"):
        res.agreement("between")


def test_reusable_world_is_not_rejected_and_degraded_one_is():
    ok = [analyze_design(*_world(s), draws=2000, seed=s) for s in range(5)]
    # when nothing differs between baseline and reuse topics, small p-values are the exception
    assert np.median([r.within.p_value for r in ok]) > 0.1
    assert np.median([r.participant.p_value for r in ok]) > 0.1
    # close runs (quality 0.25..0.35); site A's runs lose 0.1 on every topic A was held out of: comparisons
    # of A's runs with other sites' runs become significant on A's reuse topics only (errors of commission)
    bad = [analyze_design(*_world(s, degrade=0.1, spread=(0.25, 0.35)), draws=2000, seed=s) for s in range(5)]
    assert np.median([r.participant.p_value for r in bad]) < 0.02
    g = bad[0].participant.groups
    a = g[g["site"] == "A"]
    assert a["O_commission"].sum() > 2 * a["E_commission"].sum()
    # within-site comparisons are untouched: all of A's runs drop together
    assert [r.within.p_value for r in bad] == [r.within.p_value for r in
                                              (analyze_design(*_world(s, spread=(0.25, 0.35)), draws=2000, seed=s,
                                                              kinds=("within",)) for s in range(5))]
    assert bad[0].sites.set_index("site").loc["A", "rmse"] == pytest.approx(0.1, abs=0.03)


def test_reversed_directions_are_reported():
    # a big drop makes A's runs significantly *worse* on the reuse topics where they were significantly
    # better on the baseline: the paper's table counts that as agreement; `reversals` flags it
    res = analyze_design(*_world(0, degrade=0.3), draws=500, kinds=("participant",))
    assert res.participant.table.reversals > 0
    assert res.participant.table.reversals == int(res.participant.pairs["reversed"].sum())
    assert "opposite directions" in res.participant.table.summary()


def test_ordering_statistics():
    scores, design, site_of = _world(3)
    res = analyze_design(scores, design, site_of, kinds=(), draws=100)
    runs = res.runs.set_index("run")
    for s in ("A", "C"):
        mine = [r for r in scores.runs if site_of[r] == s]
        base, reuse = design.masks("within", s)
        idx = [scores.runs.index(r) for r in mine]
        bm, rm = scores.values[idx][:, base].mean(1), scores.values[idx][:, reuse].mean(1)
        assert np.allclose(runs.loc[mine, "baseline"], bm) and np.allclose(runs.loc[mine, "reuse"], rm)
        row = res.sites.set_index("site").loc[s]
        assert row.tau_within == pytest.approx(stats.kendalltau(bm, rm).statistic)
        assert row.rmse == pytest.approx(np.sqrt(np.mean((bm - rm) ** 2)))
    # participant tau of site D (one run): pairs with every run of the other sites, by hand
    d = scores.runs.index("D0")
    conc = disc = n = 0
    for o in ("A", "B", "C", "E"):
        base, reuse = design.masks("participant", "D", o)
        for r in (r for r in scores.runs if site_of[r] == o):
            j = scores.runs.index(r)
            sb = np.sign((scores.values[d, base] - scores.values[j, base]).mean())
            sr = np.sign((scores.values[d, reuse] - scores.values[j, reuse]).mean())
            conc += sb * sr > 0
            disc += sb * sr < 0
            n += 1
    row = res.sites.set_index("site").loc["D"]
    assert row.participant_pairs == n == 10 and row.tau_participant == pytest.approx((conc - disc) / n)
    assert np.isnan(row.tau_within)  # one run: no ordering
    assert res.overall["tau"] == pytest.approx(stats.kendalltau(runs["baseline"], runs["reuse"]).statistic)
    assert list(res.site_table()["site"]) == [*res.sites["site"], "all"]


def test_inputs_in_every_form_give_the_same_answer():
    scores, design, site_of = _world(4)
    a = analyze_design(scores, design, site_of, draws=300, seed=9)
    b = analyze_design(scores.to_frame(), design, pd.DataFrame({"run": list(site_of), "site": list(
        site_of.values())}), draws=300, seed=9)
    pd.testing.assert_frame_equal(a.to_frame(), b.to_frame())
    pd.testing.assert_frame_equal(a.sites, b.sites)
    assert "within-site reusability" in a.summary() and repr(a).startswith("ReusabilityAnalysis(")


def test_adjustment_makes_fewer_pairs_significant():
    scores, design, site_of = _world(5)
    none = analyze_design(scores, design, site_of, kinds=("participant",), draws=200)
    bonf = analyze_design(scores, design, site_of, kinds=("participant",), adjust="bonferroni", draws=200)
    assert bonf.participant.pairs["sig_base"].sum() <= none.participant.pairs["sig_base"].sum()
    assert bonf.participant.expected[:, 0].sum() <= none.participant.expected[:, 0].sum()
    w = analyze_design(scores, design, site_of, kinds=("within",), test="wilcoxon", draws=200)
    assert w.test == "wilcoxon" and w.within.table.n_pairs == 3 + 1 + 3 + 0 + 1  # C(r_s, 2) summed


def test_between_site_with_a_single_reuse_topic_is_skipped():
    # m = 5, k = 2, one block: every pair of sites is held out together of exactly one topic
    scores, design, site_of = _world(6, n_topics=20, min_baseline=10)
    res = analyze_design(scores, design, site_of, draws=200)
    assert res.between.table.method == "none" and np.isnan(res.between.p_value)
    assert len(res.between.skipped) == 10 and "reuse topics" in res.between.skipped[0][1]
    assert "nothing to test" in res.between.summary()


def test_analysis_validates_inputs():
    scores, design, site_of = _world(7)
    with pytest.raises(BayevalInputError, match="no site given for run 'A0'"):
        analyze_design(scores, design, {k: v for k, v in site_of.items() if k != "A0"})
    with pytest.raises(BayevalInputError, match="no scores for design topic"):
        analyze_design(scores.select(topics=scores.topics[:-1]), design, site_of)
    vals = scores.values.copy()
    vals[0, 3] = np.nan
    with pytest.raises(BayevalInputError, match="has no score for topic"):
        analyze_design(TopicScores(scores.runs, scores.topics, vals), design, site_of)
    with pytest.raises(BayevalInputError, match="alpha"):
        analyze_design(scores, design, site_of, alpha=0)
    with pytest.raises(BayevalInputError, match="test"):
        analyze_design(scores, design, site_of, test="z")
    with pytest.raises(BayevalInputError, match="kinds"):
        analyze_design(scores, design, site_of, kinds=("across",))
    with pytest.raises(BayevalInputError, match="no run belongs"):
        analyze_design(scores, design, {r: "Z" for r in scores.runs})
    # runs of sites outside the design are left out, and said so
    res = analyze_design(scores, design, {**site_of, "A0": "Z"}, kinds=(), draws=100)
    assert res.dropped_runs == ("A0",) and "A0" not in set(res.runs["run"])


# ------------------------------------------------------------------------------------------ simulation

@pytest.fixture(scope="module")
def collection():
    return make_collection(n_topics=16, n_systems=8, n_docs=150, depth=60, seed=12)


def _sim_setup(col, k=1, n0=4):
    site_of = {r: f"G{i // 2}" for i, r in enumerate(col.runs.names)}  # 4 sites of 2 runs
    design = assign_design(col.qrels.topics, ["G0", "G1", "G2", "G3"], k=k, min_baseline=n0, seed=3)
    return site_of, design


def test_simulated_judgments_are_the_contributing_sites_pool(collection):
    site_of, design = _sim_setup(collection)
    sim = simulate_design(collection.runs, collection.qrels, design, site_of, depth=10, measures="AP,P@10")
    for t in design.topics:
        held = set(design.held_out(t))
        pool = set()
        for run in collection.runs:
            if site_of[run.name] not in held:
                pool.update(run.ranking(t)[:10].tolist())
        tj = collection.qrels[t]
        expect = {d for d in tj.docnos if d in pool}
        assert set(sim.judgments[t].docnos) == expect
        row = sim.pools.set_index("topic").loc[t]
        assert row.pool == len(pool) and row.judged == len(expect)
    # the evaluation is trec_eval's on those judgments; the truth, on the complete qrels
    ev = evaluate(RankData.build(collection.runs, sim.judgments, topics=design.topics), "AP,P@10")
    assert np.array_equal(ev.values, sim.evaluation.values)
    truth = evaluate(RankData.build(collection.runs, collection.qrels, topics=design.topics), "AP")
    assert np.array_equal(truth.values[0], sim.true_scores().values)
    assert sim.scores("P@10").measure == "P@10"
    f = sim.to_frame()
    assert list(f.columns) == ["run", "site", "topic", "measure", "value", "true_value"]
    assert len(f) == 2 * 8 * 16


def test_all_contributing_design_equals_pooling_everything(collection):
    site_of, _ = _sim_setup(collection)
    topics = collection.qrels.topics
    frame = pd.DataFrame({"topic": topics, **{s: 1 for s in ("G0", "G1", "G2", "G3")}})
    design = Design.from_frame(frame)
    sim = simulate_design(collection.runs, collection.qrels, design, site_of, depth=15, truth=False)
    pooled = pool_qrels(collection.runs, collection.qrels, 15)
    ev = evaluate(RankData.build(collection.runs, pooled, topics=topics), "AP")
    assert np.allclose(ev.values[0], sim.scores().values)
    with pytest.raises(BayevalInputError, match="truth=False"):
        sim.true_scores()


def test_simulation_then_analysis_end_to_end(collection):
    site_of, design = _sim_setup(collection)
    sim = simulate_design(collection.runs, collection.qrels, design, site_of, depth=20)
    res = sim.analyze(draws=500)
    assert res.measure == "AP" and len(res.runs) == 8
    assert "Simulated design" in sim.summary()
    fig = res.plot(sim.true_scores())
    assert len(fig.axes) == 2
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_simulation_validates(collection):
    site_of, design = _sim_setup(collection)
    with pytest.raises(BayevalInputError, match="depth"):
        simulate_design(collection.runs, collection.qrels, design, site_of, depth=0)
    with pytest.raises(BayevalInputError, match="no site given"):
        simulate_design(collection.runs, collection.qrels, design, {})
    other = assign_design([*collection.qrels.topics[:-1], "999"], ["G0", "G1", "G2", "G3"], k=1, min_baseline=4)
    with pytest.raises(BayevalInputError, match="no judgments for design topic '999'"):
        simulate_design(collection.runs, collection.qrels, other, site_of)
    sim = simulate_design(collection.runs, collection.qrels, design, {**site_of, "sys01": "elsewhere"}, depth=5,
                          truth=False)
    assert sim.dropped_runs == ("sys01",) and "sys01" not in sim.site_of


# ------------------------------------------------------------------------------------------ plot

def test_plot_single_panel_and_file(tmp_path):
    scores, design, site_of = _world(8)
    res = analyze_design(scores, design, site_of, kinds=(), draws=100)
    out = tmp_path / "reuse.png"
    fig = res.plot(path=out)
    assert out.stat().st_size > 1000 and len(fig.axes) == 1
    assert "tau" in fig.axes[0].get_title()
    import matplotlib.pyplot as plt

    fig2, ax = plt.subplots()
    assert res.plot(ax=ax) is fig2
    with pytest.raises(BayevalInputError, match="ax"):
        res.plot(scores, ax=ax)
    plt.close("all")


# ------------------------------------------------------------------------------------------ real data

@pytest.mark.data
def test_trec8_ten_groups_depth100_within_site(shared_data):
    """§4.3 analogue on TREC-8 (docs/reusable-designs.md): 10 groups of 5 runs, m = 10, k = 2, depth-100 pools."""
    from bayeval.design import read_sites
    from bayeval.io.qrels import read_qrels
    from bayeval.io.runs import read_runs

    trec8 = shared_data / "trec8"
    site_all = read_sites(trec8 / "runs.tsv")
    counts = pd.Series(site_all).value_counts()
    groups = sorted(counts.index, key=lambda g: (-counts[g], g.lower(), g))[:10]
    runs = read_runs([trec8 / "runs" / f"input.{r}.gz" for r, g in site_all.items() if g in groups])
    qrels = read_qrels(trec8 / "qrels.txt.gz")
    design = assign_design(qrels.topics, groups, k=2, min_baseline=5, seed=0)
    assert design.plan().blocks == 1 and len(design.baseline_topics) == 5
    sim = simulate_design(runs, qrels, design, site_all, depth=100, truth=False)
    res = sim.analyze()
    assert len(res.runs) == 50 and res.within.table.n_pairs == 10 * comb(5, 2)
    assert (res.within.groups["n_reuse"] == 9).all()
    assert res.within.p_value > 0.01  # the paper's conclusion: no evidence against within-site reusability
