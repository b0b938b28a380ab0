"""Held-out-sites design (carterette2010): planning, assignment, power, agreement tables, files.

Known answers are written as derivations from the paper (§3.1, §3.2.1, Tables 1–5) and docs/maths.md §1.
"""

from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from bayeval.design import (
    AgreementTable,
    Design,
    TopicScores,
    adjust_pvalues,
    agreement_test,
    assign_design,
    design_table,
    effect_size,
    expected_table,
    goodness_of_fit,
    held_out_combinations,
    observed_table,
    plan_design,
    power_alpha,
    read_design,
    read_scores,
    read_sites,
    t_test_power,
    write_design,
)
from bayeval.errors import BayevalInputError, FileFormatError

# ------------------------------------------------------------------------------------------ plan


def test_table2_formulas_on_the_papers_m6_k2_example():
    # m = 6, k = 2: C(6,2) = 15 topics per block. N = 100, n0 = 20: b = floor(80 / 15) = 5, n = 100 - 75 = 25.
    p = plan_design(100, 6, 2, min_baseline=20)
    assert (p.combinations, p.blocks, p.n) == (15, 5, 25)
    # per block each site contributes to C(5,2) = 10 topics and is held out of C(5,1) = 5 (paper §3.1 item 1)
    assert p.within_baseline == 25 + 5 * 10 and p.within_reuse == 5 * 5
    # each pair both contributes to C(4,2) = 6 and is held out of C(4,0) = 1 per block (item 2)
    assert p.between_baseline == 25 + 5 * 6 and p.between_reuse == 5 * 1
    # one site held out, the other contributing: C(4,1) = 4 per block (item 3)
    assert p.participant == 5 * 4
    # every topic of a block is accounted for by one site: 10 + 5 = 15; by a pair: 6 + 1 + 2 * 4 = 15
    assert 10 + 5 == 6 + 1 + 2 * 4 == p.combinations


def test_mq2008_example_gives_ten_blocks():
    # paper §4.2: 564 topics, 9 sites, n0 = 200, k = 2 -> C(9,2) = 36, b = floor(364 / 36) = 10
    p = plan_design(564, 9, 2, min_baseline=200)
    assert (p.blocks, p.n) == (10, 564 - 360)


@pytest.mark.parametrize(("args", "kwargs", "names"), [
    ((10, 4, 4), {}, "k: must be smaller"),
    ((10, 4, 0), {}, "k: must be >= 1"),
    ((10, 1, 1), {}, "n_sites"),
    ((10, 6, 2), {}, "n_topics: the design needs at least"),
    ((40, 6, 2), {"min_baseline": 30}, "n_topics"),
    ((40, 6, 2), {"min_baseline": -1}, "min_baseline"),
    ((40, 6, 2.0), {}, "k: must be an integer"),
    ((40, 6, 2), {"blocks": 3}, "blocks"),
])
def test_plan_validates_its_inputs(args, kwargs, names):
    with pytest.raises(BayevalInputError, match=names):
        plan_design(*args, **kwargs)


def test_design_table_lists_feasible_and_infeasible_k():
    t = design_table(50, 10, min_baseline=5)
    assert [p.k for p in t.plans] == [1, 2, 8, 9]  # C(10,k) + 5 <= 50
    assert dict(t.infeasible) == {k: 5 + comb(10, k) for k in range(3, 8)}
    assert list(t.to_frame()["k"]) == [1, 2, 8, 9]
    assert "k = 3: infeasible, needs at least 125 topics" in t.summary()
    with pytest.raises(BayevalInputError, match="no k is feasible"):
        design_table(10, 10, ks=[3, 4])
    with pytest.raises(BayevalInputError, match="ks"):
        design_table(50, 10, ks=[10])


# ------------------------------------------------------------------------------------------ assign

# paper Table 1, block T_1 (m = 6, k = 2): rows t_{n+1} .. t_{n+15}
TABLE1_T1 = """
++++--
+++-+-
++-++-
+-+++-
-++++-
+++--+
++-+-+
+-++-+
-+++-+
++--++
+-+-++
-++-++
+--+++
-+-+++
--++++
""".split()


def _pattern(design: Design) -> list[str]:
    return ["".join("+" if c else "-" for c in row) for row in design.contributes]


def test_assignment_reproduces_table1():
    n = 3
    d = assign_design(n + 2 * 15, 6, k=2, min_baseline=n)
    rows = _pattern(d)
    assert rows[:n] == ["++++++"] * n  # all-site baseline first
    assert rows[n:n + 15] == TABLE1_T1  # T_1 exactly as printed
    assert rows[n + 15:] == TABLE1_T1  # "each subset T_1..T_b has the same contribution pattern"
    assert d.blocks.tolist() == [0] * n + [1] * 15 + [2] * 15
    assert d.k == 2 and d.plan() == plan_design(33, 6, 2, n)


def test_table1_topic_sets_named_in_the_text():
    n = 4
    d = assign_design(n + 15, [f"S{i}" for i in range(1, 7)], k=2, min_baseline=n)
    t = [str(i) for i in range(1, n + 16)]  # t[n + j - 1] is topic t_{n+j}
    # within-site reuse set of S6: the first five topics of the subset; its baseline: T_0 + the last ten
    base, reuse = d.topics_of("within", "S6")
    assert reuse == tuple(t[n:n + 5]) and base == tuple(t[:n] + t[n + 5:])
    # between S5 and S6: the first topic of the subset; baseline the last six with T_0
    base, reuse = d.topics_of("between", "S5", "S6")
    assert reuse == (t[n],) and base == tuple(t[:n] + t[n + 9:])
    # S6 new, S5 participant: topics n+2 .. n+5
    _, reuse = d.topics_of("participant", "S6", "S5")
    assert reuse == tuple(t[n + 1:n + 5])


@settings(max_examples=60, deadline=None)
@given(m=st.integers(2, 7), data=st.data())
def test_every_site_and_pair_is_held_out_equally(m, data):
    k = data.draw(st.integers(1, m - 1))
    b = data.draw(st.integers(1, 3))
    n0 = data.draw(st.integers(0, 4))
    d = assign_design(n0 + b * comb(m, k), m, k, n0)
    assert (d.held_out_counts() == b * comb(m - 1, k - 1)).all()
    pairs = d.pair_counts()[np.triu_indices(m, 1)]
    assert (pairs == (b * comb(m - 2, k - 2) if k >= 2 else 0)).all()
    assert ((~d.contributes).sum(axis=1)[n0:] == k).all()
    plan = d.plan()
    assert plan is not None and plan.blocks == b
    # the topic-set sizes of every comparison match Table 2
    s, o = d.sites[0], d.sites[-1]
    assert tuple(map(int, (m_.sum() for m_ in d.masks("within", s)))) == (plan.within_baseline, plan.within_reuse)
    assert tuple(map(int, (m_.sum() for m_ in d.masks("between", s, o)))) == (plan.between_baseline,
                                                                               plan.between_reuse)
    assert int(d.masks("participant", s, o)[1].sum()) == plan.participant


def test_combinations_are_all_distinct_k_subsets():
    combos = held_out_combinations(7, 3)
    assert len(combos) == comb(7, 3) and len({frozenset(c) for c in combos}) == comb(7, 3)


def test_seeded_shuffle_is_reproducible_and_keeps_the_layout():
    a = assign_design(40, 5, k=2, min_baseline=10, seed=7)
    b = assign_design(40, 5, k=2, min_baseline=10, seed=7)
    c = assign_design(40, 5, k=2, min_baseline=10, seed=8)
    plain = assign_design(40, 5, k=2, min_baseline=10)
    assert a.topics == b.topics and a.topics != c.topics and sorted(a.topics) == sorted(plain.topics)
    assert (a.contributes == plain.contributes).all()  # the pattern stays, the topics move


def test_leftover_round_robin_continues_into_a_partial_block():
    # Robust 2004 in the paper: 249 topics, 14 sites, k = 2, no all-site baseline; a site's reuse set is
    # at most 39 topics (2 full blocks of 13 + 13 in the partial third) and a pair is held out of at most 3.
    d = assign_design(249, 14, k=2, leftover="round-robin")
    assert int(d.contributes.all(axis=1).sum()) == 0
    assert d.held_out_counts().max() == 39 and d.pair_counts()[np.triu_indices(14, 1)].max() == 3
    assert d.plan() is None
    with pytest.raises(BayevalInputError, match="blocks"):
        assign_design(249, 14, k=2, blocks=2, leftover="round-robin")


def test_assign_validates():
    with pytest.raises(BayevalInputError, match="topics: '3' appears twice"):
        assign_design(["1", "2", "3", "3"] + [str(i) for i in range(10, 20)], 4, k=1)
    with pytest.raises(BayevalInputError, match="sites"):
        assign_design(20, ["A"], k=1)
    with pytest.raises(BayevalInputError, match="leftover"):
        assign_design(20, 4, k=1, leftover="x")
    with pytest.raises(BayevalInputError, match="no site contributes"):
        Design(("1",), ("A", "B"), np.array([[False, False]]), np.array([1]))


# ------------------------------------------------------------------------------------------ files

def test_design_csv_round_trip(tmp_path):
    d = assign_design(30, ["ACSys", "city-pliers", "jhu"], k=1, min_baseline=3, seed=1)
    path = tmp_path / "design.csv"
    write_design(d, path)
    text = path.read_text().splitlines()
    assert text[0] == "topic,block,ACSys,city-pliers,jhu"
    back = read_design(path)
    assert back.topics == d.topics and back.sites == d.sites and back.k == 1
    assert (back.contributes == d.contributes).all() and (back.blocks == d.blocks).all()


def test_design_csv_accepts_plus_minus_and_no_block_column(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("topic,A,B,C\n1,+,+,+\n2,+,-,+\n3,-,+,+\n")
    d = read_design(path)
    assert d.blocks.tolist() == [0, 1, 1] and d.held_out("2") == ("B",) and d.k == 1


@pytest.mark.parametrize(("text", "line", "what"), [
    ("topic,A,B\n1,1,1\n2,1,x\n", 3, "neither 1"),
    ("topic,A,B\n1,1,1\n1,1,0\n", 3, "already listed on line 2"),
    ("topic,A,B\n1,0,0\n", 2, "no site contributes"),
    ("topic,A,B\n1,1\n", 2, "expected 3 fields"),
    ("topic,A\n1,1\n", 1, "at least 2 site columns"),
    ("id,A,B\n1,1,1\n", 1, "no 'topic' column"),
    ("topic,A,A\n1,1,1\n", 1, "appears twice"),
    ("topic,block,A,B\n1,x,1,1\n", 2, "block"),
])
def test_design_csv_errors_name_file_and_line(tmp_path, text, line, what):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(FileFormatError, match=what) as exc:
        read_design(path)
    assert exc.value.line == line and str(path) in str(exc.value)


def test_read_sites_formats(tmp_path):
    tsv = tmp_path / "runs.tsv"
    tsv.write_text("run\tgroup\ttype\njhu1\tjhu\tautomatic\njhu2\tjhu\tmanual\nge1\tge\tautomatic\n")
    assert read_sites(tsv) == {"jhu1": "jhu", "jhu2": "jhu", "ge1": "ge"}
    plain = tmp_path / "sites.txt"
    plain.write_text("a X\nb Y\n")
    assert read_sites(plain) == {"a": "X", "b": "Y"}
    csvf = tmp_path / "sites.csv"
    csvf.write_text("site,run\nX,a\n")
    assert read_sites(csvf) == {"a": "X"}
    bad = tmp_path / "bad.txt"
    bad.write_text("a X\na Y\n")
    with pytest.raises(FileFormatError, match="line 1") as exc:
        read_sites(bad)
    assert exc.value.line == 2


def test_scores_round_trip_and_measure_selection(tmp_path):
    f = pd.DataFrame({"run": ["a", "a", "b", "b", "a", "b"], "topic": ["1", "2", "1", "2", "all", "all"],
                      "measure": "AP", "value": [0.5, 0.25, 0.75, 0.0, 0.375, 0.375]})
    both = pd.concat([f, f.assign(measure="P@10")], ignore_index=True)
    path = tmp_path / "scores.csv"
    both.to_csv(path, index=False)
    with pytest.raises(BayevalInputError, match="several measures"):
        read_scores(path)
    s = read_scores(path, "AP")
    assert s.runs == ("a", "b") and s.topics == ("1", "2") and s.values.tolist() == [[0.5, 0.25], [0.75, 0.0]]
    back = TopicScores.from_frame(s.to_frame())
    assert (back.values == s.values).all()
    short = f.iloc[:3]
    assert np.isnan(TopicScores.from_frame(short).values[1, 1])
    assert TopicScores.from_frame(short, fill=0.0).values[1, 1] == 0.0


# ------------------------------------------------------------------------------------------ power

def test_power_known_answers_from_the_paper():
    # docs/maths.md §1: effect 0.260, two-sided alpha 0.05: 0.963 at n = 210, 0.353 at n = 39 (paper: 0.964, 0.354)
    p210, p39 = t_test_power(0.260, [210, 39])
    assert round(float(p210), 3) == 0.963 and round(float(p39), 3) == 0.353
    # the paper's 0.964 lies between the powers at its rounded effect 0.260 and its unrounded 0.046 / 0.176
    assert float(p210) < 0.964 < float(t_test_power(0.046 / 0.176, 210))


def test_power_matches_monte_carlo_of_the_t_test():
    # simulate paired differences ~ N(d, 1) over n topics and count two-sided rejections at 0.05
    rng = np.random.default_rng(11)
    for d, n in ((0.5, 20), (0.26, 39), (0.0, 12)):
        x = rng.normal(d, 1.0, size=(20000, n))
        rate = float(np.mean(stats.ttest_1samp(x, 0.0, axis=1).pvalue < 0.05))
        se = np.sqrt(rate * (1 - rate) / 20000)
        assert abs(rate - float(t_test_power(d, n))) < 4 * se + 1e-3


@settings(max_examples=50, deadline=None)
@given(d=st.floats(0.0, 3.0), n=st.integers(2, 300), alpha=st.floats(0.001, 0.2))
def test_power_properties(d, n, alpha):
    p = float(t_test_power(d, n, alpha))
    assert alpha - 1e-9 <= p <= 1.0
    assert float(t_test_power(-d, n, alpha)) == pytest.approx(p)
    assert float(t_test_power(d, n + 10, alpha)) >= p - 1e-9  # grows with n
    assert float(t_test_power(d + 0.1, n, alpha)) >= p - 1e-9  # and with the effect


def test_power_edge_cases():
    assert float(t_test_power(0.0, 30)) == pytest.approx(0.05)
    assert float(t_test_power(np.inf, 5)) == 1.0
    assert np.isnan(t_test_power(0.5, 1))
    assert float(t_test_power(30.0, 20)) == 1.0  # far tail: scipy's nct.cdf alone gives NaN here
    with pytest.raises(BayevalInputError, match="alpha"):
        t_test_power(0.3, 10, alpha=1.5)


def test_effect_size():
    assert float(effect_size([1.0, 3.0, 2.0])) == 2.0  # mean 2, sd 1
    assert effect_size(np.array([[0.1, 0.1], [0.0, 0.0]]), axis=1).tolist() == [np.inf, 0.0]
    assert np.isnan(effect_size([0.3]))


# ------------------------------------------------------------------------------------------ tests

def test_adjustments():
    p = np.array([0.01, 0.04, 0.03, np.nan])
    assert adjust_pvalues(p, "none")[:3].tolist() == p[:3].tolist()
    # Bonferroni: F = 3 non-NaN values
    assert np.allclose(adjust_pvalues(p, "bonferroni")[:3], [0.03, 0.12, 0.09])
    # Holm: sorted 0.01, 0.03, 0.04 -> 3*0.01, max(0.03, 2*0.03), max(0.06, 1*0.04)
    assert np.allclose(adjust_pvalues(p, "holm")[:3], [0.03, 0.06, 0.06])
    assert np.isnan(adjust_pvalues(p, "holm")[3])
    assert power_alpha(0.05, 10, "bonferroni") == 0.005 and power_alpha(0.05, 10) == 0.05
    with pytest.raises(BayevalInputError, match="adjust"):
        adjust_pvalues(p, "bh")


# ------------------------------------------------------------------------------------------ tables

def test_expected_cells_of_the_apl_example():
    # §3.2.1 with the paper's rounded powers 0.964 (210 topics) and 0.354 (39 topics):
    # both 0.964*0.354 = 0.341; omission 0.964*(1-0.354) = 0.623; commission (1-0.964)*0.354 = 0.013;
    # neither (1-0.964)*(1-0.354) = 0.023
    e = expected_table([0.964], [0.354])
    assert np.round(e, 3).tolist() == [[0.341, 0.013], [0.623, 0.023]]
    assert e.sum() == pytest.approx(1.0)


def test_observed_table_layout():
    base = np.array([True, True, True, False, True])
    reuse = np.array([True, False, False, False, True])
    # rows reuse (sig, not), columns baseline (sig, not): both 2, commission 0, omission 2, neither 1
    assert observed_table(base, reuse).tolist() == [[2, 0], [2, 1]]


def test_goodness_of_fit_on_the_papers_tables():
    # Table 4 (Robust 2004, within-site): the paper reports p = 0.74; its E are rounded to 0.1
    x2, df, p, how = goodness_of_fit([[130, 17], [127, 160]], [[135.4, 13.9], [121.6, 163.1]])
    assert (df, how) == (3, "chi2") and abs(p - 0.74) < 0.02
    # Table 3 (MQ 2008): E = 4.3 < 5, so "auto" uses the randomized test; paper 0.58
    _, _, p, how = goodness_of_fit([[196, 2], [57, 45]], [[189.5, 4.3], [62.1, 44.1]], draws=20000, seed=3)
    assert how == "monte-carlo" and abs(p - 0.58) < 0.03
    # Table 5 (MQ 2009, between-site): "the p-value is 0"
    _, _, p, _ = goodness_of_fit([[257, 41], [133, 100]], [[302.5, 26.2], [85.1, 117.2]])
    assert p < 1e-6
    # APL example (10 pairs): randomized exact test, paper 0.88
    t = AgreementTable.from_counts([[6, 0], [3, 1]], [[7.098, 0.073], [2.043, 0.786]], draws=20000, seed=5)
    assert t.method == "monte-carlo" and abs(t.p_value - 0.88) < 0.03


def test_monte_carlo_agrees_with_chi2_for_large_counts():
    obs, exp = [[60, 25], [30, 85]], [[55.0, 30.0], [28.0, 87.0]]
    _, _, p_chi, _ = goodness_of_fit(obs, exp, "chi2")
    _, _, p_mc, _ = goodness_of_fit(obs, exp, "monte-carlo", draws=40000, seed=1)
    assert abs(p_chi - p_mc) < 0.02


def test_goodness_of_fit_edge_cases():
    assert np.isnan(goodness_of_fit([[0, 0], [0, 0]], [[0, 0], [0, 0]])[2])
    # a zero-expectation cell with an observation: impossible under the model
    assert goodness_of_fit([[3, 1], [0, 0]], [[4.0, 0.0], [0.0, 0.0]], "chi2")[2] == 0.0
    x2, df, p, _ = goodness_of_fit([[4, 0], [0, 0]], [[4.0, 0.0], [0.0, 0.0]], "chi2")
    assert (x2, df, p) == (0.0, 0, 1.0)
    with pytest.raises(BayevalInputError, match="method"):
        goodness_of_fit([[1, 1], [1, 1]], [[1, 1], [1, 1]], "g")
    # same seed, same answer
    a = goodness_of_fit([[6, 0], [3, 1]], [[7, 0.1], [2, 0.9]], seed=4)
    assert a == goodness_of_fit([[6, 0], [3, 1]], [[7, 0.1], [2, 0.9]], seed=4)


def test_agreement_test_on_identically_distributed_topic_sets():
    # baseline and reuse topics from the same population: the p-values are not systematically small
    rng = np.random.default_rng(2)
    ps = []
    for _ in range(40):
        topic = rng.normal(0, 0.15, 80)
        means = np.linspace(0.15, 0.35, 8)[:, None]
        scores = np.clip(means + topic + rng.normal(0, 0.08, (8, 80)), 0, 1)
        ps.append(agreement_test(scores[:, :50], scores[:, 50:], draws=2000, seed=1).p_value)
    assert np.mean(np.array(ps) < 0.05) < 0.25 and np.median(ps) > 0.2


def test_agreement_test_pairs_frame_and_validation():
    rng = np.random.default_rng(0)
    s = rng.random((4, 30))
    t = agreement_test(s[:, :20], s[:, 20:], pairs=[(0, 1), (2, 3)], names=list("abcd"))
    assert t.n_pairs == 2 and t.pairs[["run_a", "run_b"]].values.tolist() == [["a", "b"], ["c", "d"]]
    assert set(t.to_frame()["cell"]) == {"both", "commission", "omission", "neither"}
    assert "baseline p < 0.05" in t.summary()
    with pytest.raises(BayevalInputError, match="at least 2 topics"):
        agreement_test(s[:, :20], s[:, 20:21])
    with pytest.raises(BayevalInputError, match="pairs"):
        agreement_test(s[:, :20], s[:, 20:], pairs=[(0, 0)])


# ------------------------------------------------------------------------------------------ ordering

def test_combinations_of_sites_cover_pairs():
    # every pair of sites appears in C(m-2, k-2) combinations of one block
    combos = held_out_combinations(6, 3)
    for a, b in combinations(range(6), 2):
        assert sum(a in c and b in c for c in combos) == comb(4, 1)
