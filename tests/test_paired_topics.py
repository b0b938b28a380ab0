"""Paired tests over topics (bayeval.stats): each against scipy.stats (and ranx, statsmodels where installed), the
resampling tests against a plain loop, every test's level by simulation, and the t-test with uncertain per-topic
differences (docs/expected.md, "Across topics")."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from bayeval.errors import BayevalInputError
from bayeval.stats import adjust_pvalues, paired_pvalues, uncertain_paired_t


def _pairs(seed=0, P=5, n=12, shift=0.03):
    rng = np.random.default_rng(seed)
    a = rng.beta(2, 5, size=(P, n))
    return a, np.clip(a - shift + rng.normal(0, 0.08, size=(P, n)), 0, 1)


def test_randomization_is_scipy_permutation_test_when_every_flip_is_enumerated():
    a, b = _pairs(n=10)  # 2**10 = 1024 flips <= 10,000: both enumerate them all, no random part
    p = paired_pvalues(a, b, "randomization")
    for i in range(len(a)):
        ref = stats.permutation_test((a[i], b[i]), lambda x, y: np.mean(x - y), permutation_type="samples",
                                     n_resamples=10_000).pvalue
        assert p[i] == pytest.approx(ref, rel=1e-12)


def test_randomization_agrees_with_scipy_and_ranx_within_monte_carlo_error():
    a, b = _pairs(seed=1, P=4, n=30, shift=0.02)
    B = 20_000
    p = paired_pvalues(a, b, "randomization", resamples=B, rng=3)
    for i in range(len(a)):
        ref = stats.permutation_test((a[i], b[i]), lambda x, y, axis: np.mean(x - y, axis=axis), vectorized=True,
                                     permutation_type="samples", n_resamples=B, rng=5).pvalue
        se = np.sqrt(ref * (1 - ref) / B) * 2  # two-sided doubles the one-sided count's error
        assert abs(p[i] - ref) < 4 * se + 1e-4
    ranx = pytest.importorskip("ranx.statistical_tests")
    for i in range(len(a)):  # ranx counts |mean diff| >= |observed| without the +1: the same test
        ref, _ = ranx.fisher_randomization_test(a[i], b[i], B, 0.05, 42)
        assert abs(p[i] - ref) < 4 * np.sqrt(ref * (1 - ref) / B) * 2 + 2 / B


def test_t_test_is_ranx_student():
    ranx = pytest.importorskip("ranx.statistical_tests")
    a, b = _pairs(seed=2)
    p = paired_pvalues(a, b, "t")
    assert np.allclose(p, [ranx.paired_student_t_test(a[i], b[i])[0] for i in range(len(a))], rtol=1e-12)


def test_bootstrap_is_the_plain_loop_of_its_definition():
    a, b = _pairs(seed=4, P=3, n=15)
    B = 2000
    p = paired_pvalues(a, b, "bootstrap", resamples=B, rng=7)
    idx = np.random.default_rng(7).integers(0, 15, size=(B, 15))  # the resamples it draws
    for i in range(len(a)):
        d = a[i] - b[i]
        t = abs(d.mean() / (d.std(ddof=1) / np.sqrt(15)))
        c = d - d.mean()  # the null made true: centred differences
        hits = 0
        for r in range(B):
            x = c[idx[r]]
            hits += abs(x.mean() / (x.std(ddof=1) / np.sqrt(15))) >= t * (1 - 1e-12)
        assert p[i] == pytest.approx((1 + hits) / (B + 1), abs=1e-12)


@pytest.mark.parametrize("test", ["t", "randomization", "bootstrap"])
def test_each_test_holds_its_level_under_a_true_null(test):
    # 600 pairs of 25 topics whose differences are skewed with mean 0; 5% rejections expected (Wilcoxon's null is
    # a median of 0, not a mean: it rejects 10.7% here, rightly). Mutation seen red: the bootstrap without
    # centring its resamples (the null not made true) rejects none.
    rng = np.random.default_rng(11)
    P, n = 600, 25
    d = rng.gamma(1.5, 0.04, size=(P, n)) - 1.5 * 0.04  # skewed, mean exactly 0
    base = rng.beta(2, 5, size=(P, n))
    p = paired_pvalues(base + d, base, test, resamples=2000, rng=1)
    rate = np.mean(p < 0.05)
    lo, hi = stats.binomtest(int(round(rate * P)), P).proportion_ci(0.99)
    assert lo <= 0.05 <= hi + 0.02, f"{test}: {rate:.3f} rejections at 5%"


def test_resampling_tests_find_a_real_difference():
    rng = np.random.default_rng(12)
    base = rng.beta(2, 5, size=(50, 25))
    better = base + 0.03 + rng.normal(0, 0.05, size=base.shape)
    for test in ("randomization", "bootstrap"):
        p = paired_pvalues(better, base, test, resamples=2000)
        t = paired_pvalues(better, base, "t")
        assert np.mean(p < 0.05) > 0.8 and np.corrcoef(p, t)[0, 1] > 0.95


def test_resampling_tests_degenerate_and_bad_arguments():
    x = np.array([[0.5, 0.25, 0.75, 0.1]])
    assert np.isnan(paired_pvalues(x, x, "randomization")).all()
    assert np.isnan(paired_pvalues(x, x - 0.125, "bootstrap")).all()  # no spread
    assert paired_pvalues(x, x - 0.125, "randomization")[0] == pytest.approx(2 / 16)  # all four signs +: 1 of 16
    with pytest.raises(BayevalInputError, match="resamples"):
        paired_pvalues(x, x, "bootstrap", resamples=0)
    with pytest.raises(BayevalInputError, match="test: must be one of"):
        paired_pvalues(x, x, "sign")


def test_adjustments_match_statsmodels():
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    rng = np.random.default_rng(3)
    p = np.concatenate([rng.uniform(0, 0.05, 8), rng.uniform(0, 1, 30)])
    for ours, theirs in (("bonferroni", "bonferroni"), ("holm", "holm"), ("bh", "fdr_bh")):
        assert np.allclose(adjust_pvalues(p, ours), multitest.multipletests(p, method=theirs)[1], atol=1e-12)
    with_nan = np.append(p, np.nan)
    assert np.isnan(adjust_pvalues(with_nan, "bh")[-1])
    assert np.allclose(adjust_pvalues(with_nan, "bh")[:-1], adjust_pvalues(p, "bh"))
    with pytest.raises(BayevalInputError, match="adjust"):
        adjust_pvalues(p, "sidak")


def test_uncertain_t_is_the_paired_t_test_without_a_shared_error():
    rng = np.random.default_rng(5)
    e, v = rng.normal(0.01, 0.05, size=(7, 20)), rng.uniform(0, 1e-3, size=(7, 20))
    r = uncertain_paired_t(e, v)  # topics independent given p
    assert np.allclose(r.p_value, stats.ttest_rel(e, np.zeros_like(e), axis=1).pvalue, rtol=1e-10)
    assert np.allclose(r.df, 19)
    r2 = uncertain_paired_t(e, v, mean_variance=v.sum(axis=1) / 400)  # V_r with no covariance part: the same
    assert np.allclose(r2.p_value, r.p_value, rtol=1e-10)
    lo, hi = r.interval(0.95)
    ci = stats.ttest_1samp(e, 0.0, axis=1).confidence_interval(0.95)
    assert np.allclose(lo, ci.low) and np.allclose(hi, ci.high)


def test_uncertain_t_holds_its_level_with_an_error_shared_by_every_topic():
    # The population of topics has mean difference 0. A relevance model sees each topic's difference with its own
    # error eps_t (sd up to 0.1) and one error gamma shared by all topics (sd 0.02, what the posterior's parameter
    # draws move in every topic at once); e = d - gamma - eps. Over 20,000 collections the test must reject 5% at
    # 5%: it does 5.1%. Mutations seen red: without the shared part (C = 0, the plain t-test on e) 20.4%; with the
    # topics' own variance added again (sum v / n^2, as posterior draws inside a topic bootstrap would) 3.3%.
    rng = np.random.default_rng(8)
    P, n = 20_000, 25
    d = rng.normal(0.0, 0.06, size=(P, n))
    v = rng.uniform(0, 0.1, size=(P, n)) ** 2
    gamma = rng.normal(0.0, 0.02, size=(P, 1))
    e = d - gamma - rng.normal(0.0, np.sqrt(v))
    r = uncertain_paired_t(e, v, mean_variance=v.sum(axis=1) / n**2 + 0.02**2)
    assert 0.045 <= np.mean(r.p_value < 0.05) <= 0.055
    assert np.mean(r.p_less > 0.975) == pytest.approx(0.025, abs=0.004)  # one side alone: half of it


def test_uncertain_t_bad_input():
    with pytest.raises(BayevalInputError, match="same shape"):
        uncertain_paired_t(np.zeros((2, 3)), np.zeros((2, 4)))
    with pytest.raises(BayevalInputError, match="variance"):
        uncertain_paired_t(np.zeros((1, 3)), -np.ones((1, 3)))
    with pytest.raises(BayevalInputError, match="mean_variance"):
        uncertain_paired_t(np.zeros((2, 3)), np.zeros((2, 3)), mean_variance=[1.0])
    r = uncertain_paired_t(np.zeros((1, 1)), np.zeros((1, 1)))
    assert np.isnan(r.p_value).all()


# --- through bv.compare and the command line ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def small():
    from bayeval.data import RankData
    from bayeval.synthetic import make_collection

    col = make_collection(n_topics=16, n_systems=4, n_docs=80, depth=30, judged_depth=8, seed=21)
    return col, RankData.build(col.runs, col.judgments)


def test_compare_topic_tests_on_known_relevance_are_the_usual_tests_on_trec_eval_values(small):
    import bayeval as bv

    col, data = small
    cmp = bv.compare(data, None, default_p=0.0, method="exact")  # unjudged = not relevant: nothing uncertain
    ap = bv.evaluate(data, "AP").values[0]  # (systems, topics): trec_eval's AP
    a, b = ap[cmp.index_a], ap[cmp.index_b]
    t = cmp.topic_tests("t", adjust="none")
    assert np.allclose(t.p_value, stats.ttest_rel(a, b, axis=1).pvalue, rtol=1e-9)
    combined = cmp.topic_tests()  # no shared error at a point p: the t-test
    assert np.allclose(combined.p_value, t.p_value, rtol=1e-9)
    wil = [stats.wilcoxon(x - y).pvalue for x, y in zip(a, b, strict=True)]
    assert np.allclose(cmp.topic_tests("wilcoxon").p_value, wil)
    r = cmp.topic_tests("randomization", adjust="holm", resamples=100_000)  # 2^16 flips: enumerated, exact
    ref = [stats.permutation_test((x, y), lambda u, v, axis: np.mean(u - v, axis=axis), vectorized=True,
                                  permutation_type="samples", n_resamples=100_000).pvalue
           for x, y in zip(a, b, strict=True)]
    assert np.allclose(r.p_value, ref, rtol=1e-12)
    assert np.allclose(r.p_adjusted, adjust_pvalues(np.array(ref), "holm"))
    frame = r.to_frame()
    assert list(frame.columns) == ["run_a", "run_b", "measure", "delta_expected", "topic_lower", "topic_upper",
                                   "p_less_topics", "p_value"]
    assert frame.p_less_topics.isna().all() and "randomization" in r.describe() and "Holm" in r.describe()
    uncertain = bv.compare(data, None, default_p=0.3, method="exact")  # E[Δ_t] differ from trec_eval's
    judged = uncertain.topic_tests("t", values=ap)  # the values given: trec_eval's t-test whatever p is
    assert np.allclose(judged.p_value, t.p_value, rtol=1e-9) and judged.judged and "values given" in judged.describe()
    assert uncertain.topic_tests("combined", values=ap).test == "t"
    assert not np.allclose(uncertain.topic_tests("t").p_value, t.p_value)
    with pytest.raises(BayevalInputError, match="values"):
        uncertain.topic_tests("t", values=ap[:, :3])
    with pytest.raises(BayevalInputError, match="test: must be one of"):
        cmp.topic_tests("z")
    with pytest.raises(BayevalInputError, match="adjust"):
        cmp.topic_tests("t", adjust="fdr")


def test_combined_test_widens_with_posterior_draws(small):
    """With a sampled fit the relevance error shared between topics (parameter draws) widens the interval of the
    mean over topics: the combined p-value is at least the plain t-test's on the same E[Δ_t], the intervals
    contain the t-test's."""
    import bayeval as bv

    col, data = small
    est = bv.estimate(data, "rtc", fit="laplace", draws=100, chains=1, p_draws=50, seed=1)
    cmp = bv.compare(data, est, method="delta")
    c, t = cmp.topic_tests("combined"), cmp.topic_tests("t")
    assert np.all(c.p_value >= t.p_value - 1e-12) and np.any(c.p_value > t.p_value * 1.01)
    assert np.all(c.lower <= t.lower + 1e-12) and np.all(c.upper >= t.upper - 1e-12)


def test_evaluate_pairs_reports_the_test_across_topics(small, tmp_path):
    import io

    import pandas as pd
    from conftest import run_cli

    import bayeval as bv
    from bayeval.io import write_qrels, write_run

    col, data = small
    write_qrels(col.judgments, tmp_path / "q")
    paths = []
    for run in col.runs:
        write_run(run, tmp_path / run.name)
        paths.append(tmp_path / run.name)
    rc, out, err = run_cli("evaluate", tmp_path / "q", *paths, "--default-p", "0", "--pairs", "--test", "t",
                           "--adjust", "bonferroni", "--format", "csv")
    assert rc == 0, err
    pairs = pd.read_csv(io.StringIO(out)).dropna(subset=["run_a"])
    ap = bv.evaluate(data, "AP").values[0]
    names = list(data.systems)
    ref = [stats.ttest_rel(ap[names.index(a)], ap[names.index(b)]).pvalue
           for a, b in zip(pairs.run_a, pairs.run_b, strict=True)]
    np.testing.assert_allclose(pairs.p_value, np.minimum(1, 6 * np.array(ref)), rtol=1e-5)  # 4 runs: 6 pairs
    rc, out, err = run_cli("evaluate", tmp_path / "q", *paths, "--default-p", "0", "--pairs")
    assert rc == 0, err
    assert "p_less_topics: P(mean AP_a - AP_b over the population of topics < 0)" in out
    assert "Holm-adjusted over 6 pairs" in out


def test_compare_command_one_table_of_every_test(small, tmp_path):
    import io

    import pandas as pd
    from conftest import run_cli

    import bayeval as bv
    from bayeval.io import write_qrels, write_run

    col, data = small
    write_qrels(col.judgments, tmp_path / "q")
    for run in col.runs:
        write_run(run, tmp_path / run.name)
    a, b = col.runs.names[:2]
    rc, out, err = run_cli("compare", tmp_path / "q", tmp_path / a, tmp_path / b, "--default-p", "0.2",
                           "--format", "csv")
    assert rc == 0, err
    f = pd.read_csv(io.StringIO(out))
    assert list(f.columns) == ["test", "values", "delta", "lower", "upper", "p_less", "p_value"]
    assert f["values"].tolist() == ["E"] * 6 + ["unjudged = 0"] * 4
    pair = bv.RankData.build(col.runs.select([a, b]), col.judgments)
    ap = bv.evaluate(pair, "AP").values[0]
    known = f[f["values"] == "unjudged = 0"].set_index("test")
    assert known.loc["paired t-test", "p_value"] == pytest.approx(stats.ttest_rel(ap[0], ap[1]).pvalue, rel=1e-5)
    assert known.loc["Wilcoxon signed-rank test", "p_value"] == pytest.approx(stats.wilcoxon(ap[0] - ap[1]).pvalue,
                                                                              rel=1e-5)
    assert known.delta.iloc[0] == pytest.approx((ap[0] - ap[1]).mean(), abs=1e-6)
    cmp = bv.compare(pair, None, default_p=0.2)
    e = f[f["values"] == "E"].set_index("test")
    assert e.loc["these topics, relevance uncertain", "p_less"] == pytest.approx(cmp.all_p_less[0], rel=1e-5)
    assert e.loc["paired t-test", "p_value"] == pytest.approx(cmp.topic_tests("t").p_value[0], rel=1e-5)
    rc, out, err = run_cli("compare", tmp_path / "q", tmp_path / a, tmp_path / b, "--default-p", "0.2")
    assert rc == 0 and "E[MAP]" in out and "MAP (unjudged = 0)" in out
    for bad, what in ((["--measure", "AP,P@10"], "--measure"), (["--default-p", "3"], "--default-p")):
        rc, out, err = run_cli("compare", tmp_path / "q", tmp_path / a, tmp_path / b, *bad)
        assert rc == 2 and what in err and "Traceback" not in err
    rc, out, err = run_cli("compare", tmp_path / "q", tmp_path / a, tmp_path / "nope")
    assert rc == 2 and "nope" in err


@pytest.mark.data
@pytest.mark.slow
def test_compare_agrees_with_ranx_on_trec8(shared_data, tmp_path):
    """ranx's compare (its own MAP@100, Student's t and Fisher's randomization) against `bayeval compare` on two
    TREC-8 runs with unjudged documents not relevant: the t-test's p-value to 1e-3 (ranx breaks score ties its
    own way: 0.40384 against 0.40330 measured), the randomization test's within its Monte Carlo error."""
    import gzip
    import io
    import shutil

    import pandas as pd
    from conftest import run_cli

    ranx = pytest.importorskip("ranx")
    d = shared_data / "trec8"
    for f in ("qrels.txt.gz", "runs/input.INQ601.gz", "runs/input.INQ602.gz"):
        with gzip.open(d / f) as src, open(tmp_path / f.split("/")[-1][:-3], "wb") as dst:
            shutil.copyfileobj(src, dst)
    q = ranx.Qrels.from_file(str(tmp_path / "qrels.txt"), kind="trec")
    runs = []
    for name in ("INQ601", "INQ602"):
        runs.append(ranx.Run.from_file(str(tmp_path / f"input.{name}"), kind="trec"))
        runs[-1].name = name
    pair = frozenset(["INQ601", "INQ602"])
    student = ranx.compare(q, runs, metrics=["map@100"], stat_test="student", make_comparable=True)
    fisher = ranx.compare(q, runs, metrics=["map@100"], stat_test="fisher", n_permutations=20_000,
                          make_comparable=True)
    rc, out, err = run_cli("compare", d / "qrels.txt.gz", d / "runs/input.INQ601.gz", d / "runs/input.INQ602.gz",
                           "--depth", "100", "--default-p", "0", "--resamples", "20000", "--format", "csv")
    assert rc == 0, err
    f = pd.read_csv(io.StringIO(out))
    known = f[f["values"] == "unjudged = 0"].set_index("test")
    assert known.loc["paired t-test", "p_value"] == pytest.approx(student.comparisons[pair]["map@100"]["p_value"],
                                                                  abs=1e-3)
    p = fisher.comparisons[pair]["map@100"]["p_value"]
    assert abs(known.loc["randomization test", "p_value"] - p) < 4 * 2 * np.sqrt(p * (1 - p) / 20_000)
