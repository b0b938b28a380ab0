"""The simulated automatic assessor (bayeval.experiments.auto_labels): its confusion is its source's, topic by
topic, and the correlated mode's bias lies on the favoured runs' nonrelevant documents and nowhere else."""

import numpy as np
import pandas as pd
import pytest

from bayeval.data import Qrels, TopicJudgments
from bayeval.errors import BayevalInputError
from bayeval.experiments.auto_labels import (
    LabelConfusion,
    fit_label_confusion,
    grade_rows,
    simulate_labels,
)
from bayeval.io import read_qrels
from bayeval.synthetic import make_collection

# a confusion of RAG 2025's shape (rows: human grade 0-4; columns: the assessor's grade 0-4): test input only
MEAN = np.array([[0.48, 0.29, 0.17, 0.045, 0.015],
                 [0.22, 0.31, 0.37, 0.08, 0.02],
                 [0.11, 0.20, 0.52, 0.14, 0.03],
                 [0.07, 0.11, 0.45, 0.29, 0.08],
                 [0.01, 0.10, 0.21, 0.47, 0.21]])
KAPPA = np.array([13.0, 19.0, 27.0, 16.0, 76.0])
COUNTS = np.round(MEAN * np.array([3600, 1500, 3800, 1300, 90])[:, None]).astype(np.int64)
IDENTITY = {g: {g: 1.0} for g in range(5)}


def rag_like() -> LabelConfusion:
    return LabelConfusion(tuple(range(5)), tuple(range(5)), MEAN / MEAN.sum(axis=1, keepdims=True), KAPPA,
                          COUNTS, 22)


def dm_proportion_variance(m, kappa, n):
    """Var of a topic's proportion of n pairs under the Dirichlet-multinomial: m(1-m)(n+κ)/(n(κ+1))."""
    return m * (1 - m) * (n + kappa) / (n * (kappa + 1))


def grid_truth(n_topics: int, per_row: int) -> Qrels:
    """``per_row`` documents of each human grade 0-4 in each topic."""
    grades = np.repeat(np.arange(5), per_row)
    docs = np.array([f"d{i}" for i in range(len(grades))], dtype=object)
    return Qrels({f"t{t}": TopicJudgments(docs, grades) for t in range(n_topics)})


def per_topic_proportions(lab, per_row: int) -> np.ndarray:
    """topics × rows × labels: each topic's proportion of each label among its documents of each row."""
    f = lab.frame
    counts = pd.crosstab([f.topic, f.row], f.value).reindex(columns=range(5), fill_value=0)
    return counts.to_numpy().reshape(-1, 5, 5) / per_row


def test_fit_recovers_a_known_dirichlet():
    rng = np.random.default_rng(4)
    alpha = np.array([[6.0, 3.0, 1.0], [1.0, 2.0, 5.0]])          # κ = 10 and 8
    hum, lab = {}, {}
    for t in range(300):
        grades = np.repeat([0, 1], 50)
        theta = np.vstack([rng.dirichlet(a) for a in alpha])
        labels = np.array([rng.choice(3, p=theta[g]) for g in grades])
        docs = np.array([f"d{i}" for i in range(100)], dtype=object)
        hum[f"t{t}"], lab[f"t{t}"] = TopicJudgments(docs, grades), TopicJudgments(docs, labels)
    c = fit_label_confusion(Qrels(hum), Qrels(lab))
    np.testing.assert_allclose(c.mean, alpha / alpha.sum(axis=1, keepdims=True), atol=0.02)
    np.testing.assert_allclose(c.concentration, alpha.sum(axis=1), rtol=0.3)
    assert c.topics == 300 and c.counts.sum() == 300 * 100


def test_simulated_confusion_has_the_source_mean_and_topic_variation():
    n_topics, per_row = 300, 40
    c = rag_like()
    lab = simulate_labels(grid_truth(n_topics, per_row), c, grade_map=IDENTITY, seed=11)
    prop = per_topic_proportions(lab, per_row)                     # T × H × G
    v = dm_proportion_variance(c.mean, c.concentration[:, None], per_row)
    # the mean over topics: within 4 standard errors of the source's m_h in every cell
    z = (prop.mean(axis=0) - c.mean) / np.sqrt(v / n_topics)
    assert np.all(np.abs(z) < 4), z
    # the topic-to-topic variation: each row's variance over topics as the Dirichlet-multinomial's (without
    # the per-topic θ draws the ratio would be n(κ+1)/(n+κ)-times smaller, about 1/4 here)
    ratio = prop.var(axis=0, ddof=1).sum(axis=1) / v.sum(axis=1)
    assert np.all((ratio > 0.75) & (ratio < 1.33)), ratio


def test_grade_rows_maps_the_collection_scales():
    c = rag_like()
    binary = grade_rows(c, [0, 1])
    assert set(binary[0]) == {0, 1} and set(binary[1]) == {2, 3}
    assert binary[1][2] == pytest.approx(COUNTS[2].sum() / (COUNTS[2].sum() + COUNTS[3].sum()))
    assert grade_rows(c, [0, 1, 2]) == {0: pytest.approx(binary[0]), 1: {2: 1.0}, 2: {3: 1.0}}
    assert grade_rows(c, [0, 3]) == {g: {g: 1.0} for g in range(4)}


def test_binary_collection_labels_mix_the_rows_in_the_source_proportions():
    c = rag_like()
    grades = np.repeat([0, 1], 2000)
    docs = np.array([f"d{i}" for i in range(len(grades))], dtype=object)
    lab = simulate_labels(Qrels({"t": TopicJudgments(docs, grades)}), c, seed=2)
    rows = lab.frame.groupby("human").row.value_counts(normalize=True)
    for g, m in grade_rows(c, [0, 1]).items():
        for r, w in m.items():
            assert abs(rows[(g, r)] - w) < 4 * np.sqrt(w * (1 - w) / 2000)


@pytest.fixture(scope="module")
def correlated():
    col = make_collection(n_topics=30, n_systems=8, n_docs=200, depth=100, judged_depth=10, base_rate=0.15,
                          seed=5)
    favoured = col.runs.names[:2]
    kw = {"runs": col.runs, "favoured": favoured, "favour_depth": 20, "seed": 9}
    return (col, favoured, simulate_labels(col.qrels, rag_like(), mode="correlated", strength=0.6, **kw),
            simulate_labels(col.qrels, rag_like(), mode="independent", seed=9))


def _high_share_gap(frame: pd.DataFrame, relevant: bool, marked: pd.Series) -> tuple[float, float]:
    """Per topic, the share of labels >= 2 among marked documents minus among the others (of the relevance
    class); the mean over topics and its standard error."""
    f = frame.assign(high=frame.value >= 2, marked=marked.to_numpy())
    f = f[(f.human >= 1) == relevant]
    per = f.groupby(["topic", "marked"]).high.mean().unstack().dropna()
    gap = (per[True] - per[False]).to_numpy()
    return float(gap.mean()), float(gap.std(ddof=1) / np.sqrt(len(gap)))


def _in_favoured_top(col, favoured, f) -> pd.Series:
    """Per row of ``f``: whether a favoured run ranks its document in its top 20."""
    top = set()
    for t in col.qrels.topics:
        for name in favoured:
            top.update((t, d) for d in col.runs[name].ranking(t)[:20])
    return pd.Series([(t, d) in top for t, d in zip(f.topic, f.docno, strict=True)])


def test_correlated_bias_lies_on_favoured_nonrelevant_documents(correlated):
    col, favoured, lab, _ = correlated
    f = lab.frame
    in_top = _in_favoured_top(col, favoured, f)
    # flagged exactly: nonrelevant and in a favoured run's top 20
    assert np.array_equal(f.favoured.to_numpy(), (in_top & (f.human < 1)).to_numpy())
    assert f.biased.mean() > 0 and not (f.biased & ~f.favoured).any()
    # the favoured nonrelevant documents get grade >= 2 more often, by s (P_rel(>=2) - P_nonrel(>=2))
    c = rag_like()
    high = c.mean[:, 2:].sum(axis=1)
    rows = grade_rows(c, [0, 1])
    expected = 0.6 * (sum(w * high[r] for r, w in rows[1].items()) - sum(w * high[r] for r, w in rows[0].items()))
    gap, se = _high_share_gap(f, False, in_top)
    assert gap > 4 * se and abs(gap - expected) < 4 * se, (gap, expected, se)
    # relevant documents are labelled alike whether a favoured run ranks them high or not
    gap_rel, se_rel = _high_share_gap(f, True, in_top)
    assert abs(gap_rel) < 4 * se_rel, (gap_rel, se_rel)


def test_independent_mode_has_no_bias_on_the_same_documents(correlated):
    col, favoured, _, ind = correlated
    f = ind.frame
    in_top = _in_favoured_top(col, favoured, f)
    gap, se = _high_share_gap(f, False, in_top)
    assert abs(gap) < 4 * se, (gap, se)
    assert not f.favoured.any() and ind.favoured_runs == ()


def test_simulation_is_seeded():
    c, truth = rag_like(), grid_truth(3, 5)
    a = simulate_labels(truth, c, grade_map=IDENTITY, seed=1).frame
    pd.testing.assert_frame_equal(a, simulate_labels(truth, c, grade_map=IDENTITY, seed=1).frame)
    assert not a.value.equals(simulate_labels(truth, c, grade_map=IDENTITY, seed=2).frame.value)


@pytest.mark.parametrize("kwargs, message", [
    ({"mode": "mixed"}, "mode"),
    ({"mode": "correlated"}, "favoured"),
    ({"strength": 1.5}, "strength"),
    ({"seed": 1.5}, "seed"),
    ({"favour_depth": 0}, "favour_depth"),
    ({"grade_map": {0: {0: 1.0}}}, "grade_map"),
    ({"grade_map": {g: {g: 0.5} for g in range(5)}}, "grade_map"),
])
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(BayevalInputError, match=message):
        simulate_labels(grid_truth(2, 3), rag_like(), **{"grade_map": IDENTITY, **kwargs})


def test_unknown_favoured_run_is_named():
    col = make_collection(n_topics=2, n_systems=3, n_docs=40, depth=15, judged_depth=5, seed=1)
    with pytest.raises(BayevalInputError, match="nosuchrun"):
        simulate_labels(col.qrels, rag_like(), mode="correlated", runs=col.runs, favoured=["nosuchrun"])


def test_no_shared_pairs_is_an_error():
    a = Qrels({"1": TopicJudgments(np.array(["a"], dtype=object), np.array([1]))})
    b = Qrels({"2": TopicJudgments(np.array(["a"], dtype=object), np.array([1]))})
    with pytest.raises(BayevalInputError, match="no .* pair"):
        fit_label_confusion(a, b)


def test_rag25_simulation_matches_its_source(shared_data):
    """Simulated on RAG 2025's own human grades, the labels' confusion is the UMBRELA confusion within the
    sampling error of 22 topics (Dirichlet-multinomial: per cell Var = Σ_t n_t m(1-m)(n_t+κ)/(κ+1) / N², the
    difference of two such draws twice that)."""
    d = shared_data / "rag25-labels"
    human, umbrela = read_qrels(d / "qrels-human.txt.gz"), read_qrels(d / "labels-umbrela.txt.gz")
    c = fit_label_confusion(human, umbrela)
    assert c.counts.sum() == 10284 and c.topics == 22
    lab = simulate_labels(human, c, grade_map=IDENTITY, seed=3)
    sim = lab.confusion().reindex(index=range(5), columns=range(5), fill_value=0).to_numpy()
    n_t = pd.crosstab(lab.frame.topic, lab.frame.human).to_numpy()      # topics × rows
    for h in range(5):
        n = n_t[:, h]
        m = c.mean[h]
        var = (n[:, None] * m * (1 - m) * (n[:, None] + c.concentration[h]) / (c.concentration[h] + 1)).sum(0)
        var /= n.sum() ** 2
        z = (sim[h] / n.sum() - c.counts[h] / c.counts[h].sum()) / np.sqrt(2 * var)
        assert np.all(np.abs(z) < 4), (h, z)


def test_sharpened_moves_each_row_towards_agreement():
    c = rag_like()
    half = c.sharpened(0.5)
    np.testing.assert_allclose(np.diag(half.mean), 0.5 * np.diag(c.mean) + 0.5)
    np.testing.assert_allclose(half.mean.sum(axis=1), 1.0)
    np.testing.assert_allclose(c.sharpened(1.0).mean, np.eye(5))
    np.testing.assert_array_equal(c.sharpened(0.0).mean, c.mean)
    with pytest.raises(BayevalInputError, match="weight"):
        c.sharpened(1.5)
