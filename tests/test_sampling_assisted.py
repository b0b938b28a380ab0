"""Model-assisted (prediction-powered) AP and P@k: exact unbiasedness by enumeration of every sample, agreement
with statAP at λ = 0 and with ppi-python's PPI mean, and Monte Carlo coverage, width and paired differences."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from bayeval.data import Qrels, RankData, RelevanceProbabilities, Run, RunSet, StratifiedSample, TopicJudgments
from bayeval.data.sample import TopicSample
from bayeval.measures import evaluate
from bayeval.sampling import assisted_measures, stat_measures
from bayeval.sampling._assisted_kernels import assisted_topic

CUTS = (3, 5)


def _kernel(x, p, pi, inc, lam, L):
    """One run ranking pool docs 0..L-1; returns estimates and variance estimates."""
    z = lam * p + inc * (x - lam * p) / pi
    smp = inc == 1
    ranks = np.where(np.arange(len(x)) < L, np.arange(1, len(x) + 1), 0)[smp][None, :]
    out = assisted_topic(z[None, :L], np.array([L]), ranks, (x - lam * p)[smp], ((1 - pi) / pi**2)[smp],
                         float(z.sum()), CUTS, z[smp], x[smp])
    r = {k: float(v[0]) for k, v in out.items() if not k.endswith("_g") and k != "R"}
    r |= {f"{k[:-2]}_var": float(np.sum(v**2)) for k, v in out.items() if k.endswith("_g")}
    return r | {"N": r["AP"] * float(z.sum()), "R": float(z.sum())}


@pytest.mark.parametrize("lam", [0.0, 0.6, 1.0])
def test_unbiased_by_enumeration(lam):
    x = np.array([1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0], dtype=float)
    p = np.array([0.9, 0.3, 0.2, 0.7, 0.5, 0.1, 0.6, 0.2, 0.4, 0.8, 0.3])  # an imperfect model
    pi = np.array([1.0, 0.5, 0.3, 0.8, 0.6, 0.25, 0.5, 0.9, 0.4, 0.35, 0.7])
    L = 9
    prec = np.cumsum(x[:L]) / np.arange(1, L + 1)
    truth = {"N": float(np.sum(x[:L] * prec)), "R": float(x.sum())} | {f"P{k}": x[:k].sum() / k for k in CUTS}
    mean: dict[str, float] = {}
    sq: dict[str, float] = {}
    for inc in itertools.product((0.0, 1.0), repeat=len(x)):
        inc = np.array(inc)
        w = float(np.prod(np.where(inc == 1, pi, 1 - pi)))
        for k, v in _kernel(x, p, pi, inc, lam, L).items():
            mean[k] = mean.get(k, 0.0) + w * v
            sq[k] = sq.get(k, 0.0) + w * v * v
    for k, v in truth.items():
        assert mean[k] == pytest.approx(v, abs=1e-12), k
    for k in CUTS:  # the variance estimate of a linear estimate is exactly unbiased
        assert mean[f"P{k}_var"] == pytest.approx(sq[f"P{k}"] - mean[f"P{k}"] ** 2, abs=1e-12)


def _collection(seed=3, topics=4, pool=150, systems=4, depth=100):
    """Pools with known relevance, runs of varying quality, a stratified design (best rank <= 10: all sampled)."""
    rng = np.random.default_rng(seed)
    rows, truth, preds, design = [], {}, {}, {}
    for t in range(topics):
        topic = str(t + 1)
        docs = np.array([f"d{t}_{i}" for i in range(pool)], dtype=object)
        x = (rng.random(pool) < 0.25).astype(int)
        score_best = np.full(pool, 10**6)
        prev = None
        for s in range(systems):
            quality = 1.5 - 0.3 * s
            score = quality * x + rng.normal(size=pool)
            if s == 1:  # r1 is r0 perturbed: their difference is only measurable paired
                score = prev + 0.4 * rng.normal(size=pool)
            prev = score
            top = np.argsort(-score)[:depth]
            rows.append((f"r{s}", topic, docs[top], score[top]))
            best = np.empty(pool, int)
            best[np.argsort(-score)] = np.arange(1, pool + 1)
            score_best = np.minimum(score_best, np.where(np.isin(np.arange(pool), top), best, 10**6))
        truth[topic] = (docs, x)
        preds[topic] = 1 / (1 + np.exp(-(2.5 * x - 1.2 + rng.normal(scale=1.0, size=pool))))
        design[topic] = np.where(score_best <= 10, 1.0, 0.3)
    runs = RunSet(tuple(
        Run.from_arrays(name, np.concatenate([np.full(len(d), t) for n, t, d, _ in rows if n == name]),
                        np.concatenate([d for n, _, d, _ in rows if n == name]),
                        np.concatenate([sc for n, _, _, sc in rows if n == name]))
        for name in sorted({r[0] for r in rows})))
    return runs, truth, preds, design


def _true_map_p30(runs, truth):
    """Every run's true MAP and P@30 (over all topics) from the complete labels of ``_collection``."""
    true_q = Qrels({t: TopicJudgments(d, x) for t, (d, x) in truth.items()})
    frame = evaluate(RankData.build(runs, true_q), ("AP", "P@30")).to_frame()
    frame = frame[frame.topic == "all"]
    return tuple(frame[frame.measure == m].set_index("run").value.reindex(runs.names).to_numpy()
                 for m in ("AP", "P@30"))

def _draw(truth, design, rng):
    out = {}
    for t, (docs, x) in truth.items():
        inc = rng.random(len(x)) < design[t]
        out[t] = TopicSample(docs, (design[t] < 1).astype(np.int32), ("1", "2"), np.where(inc, x, -1))
    return StratifiedSample(out)


def test_weight_zero_is_statap():
    runs, truth, preds, design = _collection()
    rng = np.random.default_rng(1)
    sample = _draw(truth, design, rng)
    incl = {t: design[t] for t in truth}
    a0 = assisted_measures(runs, sample, None, weight=0.0, inclusion=incl)
    judged = Qrels({t: TopicJudgments(s.docnos[s.sampled], s.grades[s.sampled], design[t][s.sampled])
                    for t, s in sample.items()})
    st = stat_measures(runs, judged, cutoffs=(10, 30, 100))
    np.testing.assert_allclose(a0.values["AP"], st.values["statAP"], atol=1e-14)
    # AP's variance: each sampled document's derivative is taken with its own weight removed, which only
    # raises it above statAP's plain linearisation (whose R̂ holds the document's own 1/π weight)
    assert np.all(a0.variances["AP"] >= st.variances["statAP"] - 1e-15)
    assert np.mean(a0.variances["AP"] / st.variances["statAP"]) > 1.05
    np.testing.assert_allclose(a0.variances["P10"], st.variances["statP10"], atol=1e-14)


def test_pool_prevalence_matches_ppi_python():
    ppi = pytest.importorskip("ppi_py")
    rng = np.random.default_rng(5)
    N, n = 300, 60
    docs = np.array([f"d{i}" for i in range(N)], dtype=object)
    x = (rng.random(N) < 0.3).astype(int)
    p = np.clip(0.6 * x + 0.2 + rng.normal(scale=0.15, size=N), 0, 1)
    sampled = np.zeros(N, bool)
    sampled[rng.choice(N, n, replace=False)] = True
    sample = StratifiedSample({"1": TopicSample(docs, np.zeros(N, np.int32), ("all",), np.where(sampled, x, -1))})
    run = Run.from_arrays("all", np.full(N, "1"), docs, -np.arange(N, dtype=float))  # retrieves the whole pool
    probs = RelevanceProbabilities({"1": dict(zip(docs, p, strict=True))})
    for lam in (0.0, 0.5, 1.0):
        ev = assisted_measures([run], sample, probs, weight=lam, cutoffs=(N,))
        # P@N of a run retrieving the whole pool is the pool's prevalence: PPI's mean with π = n/N
        ref = ppi.ppi_mean_pointestimate(x[sampled].astype(float), p[sampled], p, lam=lam)
        assert ev.values[f"P{N}"][0, 0] == pytest.approx(float(np.squeeze(ref)), abs=1e-12)
    # variance at λ = 0 (no imputed term in ppi): ours is Poisson-design, (1 - π)(s²/n + mean²/n)
    ev = assisted_measures([run], sample, probs, weight=0.0, cutoffs=(N,))
    lo, hi = ppi.ppi_mean_ci(x[sampled].astype(float), p[sampled], p, alpha=0.05, lam=0.0)
    rect = (float(np.squeeze(hi)) - float(np.squeeze(lo))) / 2 / 1.959963984540054
    pi = n / N
    expect = (1 - pi) * (rect**2 + x[sampled].mean() ** 2 / n)
    assert ev.variances[f"P{N}"][0, 0] == pytest.approx(expect, rel=1e-9)


def test_monte_carlo_coverage_width_and_pairs():
    runs, truth, preds, design = _collection()
    true_map, _ = _true_map_p30(runs, truth)
    probs = RelevanceProbabilities({t: dict(zip(truth[t][0], preds[t], strict=True)) for t in truth})
    incl = {t: design[t] for t in truth}
    rng = np.random.default_rng(11)
    draws = 250
    est = {"tuned": [], "stat": []}
    var = {"tuned": [], "stat": []}
    cover = {"tuned": 0, "stat": 0}
    width = {"tuned": 0.0, "stat": 0.0}
    pair_cover, pair_est, pair_var = 0, [], []
    for _ in range(draws):
        sample = _draw(truth, design, rng)
        for key, w in (("tuned", None), ("stat", 0.0)):
            ev = assisted_measures(runs, sample, probs, weight=w, inclusion=incl)
            m, v = ev.mean("AP")
            lo, hi = ev.interval("AP")
            est[key].append(m)
            var[key].append(v)
            cover[key] += np.sum((lo <= true_map) & (true_map <= hi))
            width[key] += np.mean(hi - lo)
            if key == "tuned":
                d, se, _ = ev.differences("AP")
                pair_cover += abs(d[0, 1] - (true_map[0] - true_map[1])) <= 1.96 * se[0, 1]
                pair_est.append(d[0, 1])
                pair_var.append(se[0, 1] ** 2)
    n_int = draws * len(runs)
    for key in est:
        mc = np.var(np.array(est[key]), axis=0)
        assert np.mean(var[key], axis=0) == pytest.approx(mc, rel=0.3), key
        assert 0.90 <= cover[key] / n_int <= 0.985, key
    assert 0.90 <= pair_cover / draws <= 0.99
    assert np.mean(pair_var) == pytest.approx(np.var(pair_est), rel=0.3)  # paired: the shared sample cancels
    # an informative model makes intervals narrower at the same sample
    assert width["tuned"] < 0.85 * width["stat"]


def _sparse_topic(rng, D=400):
    """A topic with few relevant documents, most of them deep where inclusion probabilities are small."""
    x = (rng.random(D) < np.r_[np.full(30, 0.3), np.full(70, 0.1), np.full(D - 100, 0.02)]).astype(float)
    pi = np.r_[np.full(30, 0.6), np.full(70, 0.2), np.full(D - 100, 0.04)]
    order = np.argsort(np.arange(D) + rng.normal(0, 40, D))  # a run: a noisy version of the pool's order
    return x, pi, order


def _mean_ap_draws(draws, topic, seed=0, topics=10):
    """Monte Carlo of the mean AP over ``topics`` sparse topics (λ = 0): true value, estimates, variances.

    ``topic(z, x, pi, inc, order)`` is one topic's estimate (``assisted_topic``'s output) from the
    Horvitz-Thompson labels ``z`` of the draw ``inc``."""
    rng = np.random.default_rng(seed)
    tops = [_sparse_topic(rng) for _ in range(topics)]
    truth = np.mean([np.sum(x[o] * np.cumsum(x[o]) / np.arange(1, len(x) + 1)) / x.sum() for x, _, o in tops])
    est, var = [], []
    for _ in range(draws):
        m = v = 0.0
        for x, pi, order in tops:
            inc = rng.random(len(x)) < pi
            out = topic(np.where(inc, x / pi, 0.0), x, pi, inc, order)
            m += out["AP"][0] / topics
            v += float(np.sum(out["AP_g"] ** 2)) / topics**2
        est.append(m)
        var.append(v)
    return truth, np.array(est), np.array(var)


def _own_label_topic(own_label):
    def topic(z, x, pi, inc, order):
        rk = np.empty(len(x), dtype=np.int64)
        rk[order] = np.arange(1, len(x) + 1)
        return assisted_topic(z[order][None, :], np.array([len(x)]), rk[inc][None, :], x[inc],
                              ((1 - pi) / pi**2)[inc], float(z.sum()), (), z[inc] if own_label else x[inc],
                              x[inc])
    return topic


def test_own_label_derivative_keeps_coverage_on_sparse_topics():
    # A sampled deep relevant document adds 1/π to R̂; the derivative taken at that R̂ is small exactly for the
    # documents that make the estimate vary most. With its own label put back (as assisted_topic does), the
    # 95% interval of the mean AP covers; taken at z_e (own_label=False) it covers about 89% here.
    truth, est, var = _mean_ap_draws(500, _own_label_topic(own_label=True))
    cover = np.mean(np.abs(est - truth) <= 1.959964 * np.sqrt(var))
    assert 0.93 <= cover <= 0.99
    assert np.mean(var) >= 0.9 * np.var(est)


def test_r_hat_floor_is_the_sampled_relevant_count():
    # with λ = 1 and an overconfident model, the corrected R̂ can fall below the relevant documents already seen
    x = np.array([1, 1, 0, 0, 0, 0], dtype=float)
    p = np.array([0.1, 0.1, 0.9, 0.9, 0.9, 0.9])
    pi = np.array([0.5, 0.5, 0.2, 0.2, 0.5, 0.5])
    inc = np.array([1, 1, 1, 1, 0, 0], dtype=float)
    z = p + inc * (x - p) / pi
    smp = inc == 1
    assert z.sum() < x[smp].sum()
    ranks = np.arange(1, 7)[smp][None, :]
    out = assisted_topic(z[None, :], np.array([6]), ranks, (x - p)[smp], ((1 - pi) / pi**2)[smp], float(z.sum()),
                         (), z[smp], x[smp], r_floor=float(x[smp].sum()))
    num = np.sum(z * (1 + np.cumsum(z) - z) / np.arange(1, 7))
    assert out["AP"][0] == pytest.approx(num / 2.0)
    docs = np.array([f"d{i}" for i in range(6)], dtype=object)
    sample = StratifiedSample({"1": TopicSample(docs, np.zeros(6, np.int32), ("all",), np.where(smp, x, -1))})
    run = Run.from_arrays("r", np.full(6, "1"), docs, -np.arange(6, dtype=float))
    probs = RelevanceProbabilities({"1": dict(zip(docs, p, strict=True))})
    ev = assisted_measures([run], sample, probs, weight=1.0, inclusion={"1": pi}, cutoffs=())
    assert ev.values["AP"][0, 0] == pytest.approx(float(np.clip(num / 2.0, 0.0, 1.0)))  # without the floor: 1


def test_topic_estimates_are_clipped_and_variances_bounded():
    # one relevant document sampled at π = 0.01 deep in a run: the ratio's linearised variance is far above
    # anything a quantity in [0, 1] can have; the estimate stays in [0, 1] and the topic's variance <= 1/4
    N = 200
    docs = np.array([f"d{i}" for i in range(N)], dtype=object)
    grades = np.full(N, -1)
    grades[[0, 150]] = [0, 1]
    pi = np.full(N, 0.01)
    p = np.full(N, 0.1)
    p[0] = 0.9  # a confident miss at the top, sampled: its corrected label is 0.9 - 0.9/0.01
    sample = StratifiedSample({"1": TopicSample(docs, np.zeros(N, np.int32), ("all",), grades)})
    run = Run.from_arrays("r", np.full(N, "1"), docs, -np.arange(N, dtype=float))
    probs = RelevanceProbabilities({"1": dict(zip(docs, p, strict=True))})
    ev = assisted_measures([run], sample, probs, weight=1.0, inclusion={"1": pi}, cutoffs=(10,))
    for m in ("AP", "P10"):
        assert 0.0 <= ev.values[m][0, 0] <= 1.0
        assert ev.variances[m][0, 0] <= 0.25 + 1e-12
        assert ev.covariance[m][0, 0] <= 0.25 + 1e-12


def test_tuned_weight_shrinks_on_topics_with_few_draws():
    runs, truth, preds, design = _collection()
    probs = RelevanceProbabilities({t: dict(zip(truth[t][0], preds[t], strict=True)) for t in truth})
    sample = _draw(truth, design, np.random.default_rng(2))
    incl = {t: design[t] for t in truth}
    lam = assisted_measures(runs, sample, probs, inclusion=incl, shrink=0.0)
    fixed = assisted_measures(runs, sample, probs, inclusion=incl, weight=lam.weight)
    np.testing.assert_allclose(lam.values["AP"], fixed.values["AP"], atol=1e-12)  # shrink 0: the tuned λ
    small = assisted_measures(runs, sample, probs, inclusion=incl, shrink=1e9)  # λ_t -> 0: statAP
    stat = assisted_measures(runs, sample, probs, inclusion=incl, weight=0.0)
    np.testing.assert_allclose(small.values["AP"], stat.values["AP"], atol=1e-6)
    mid = assisted_measures(runs, sample, probs, inclusion=incl, shrink=50.0)
    assert not np.allclose(mid.values["AP"], lam.values["AP"]) and not np.allclose(mid.values["AP"],
                                                                                      stat.values["AP"])
    with pytest.raises(Exception, match="shrink"):
        assisted_measures(runs, sample, probs, inclusion=incl, shrink=-1.0)
