"""statAP and statP@k (Aslam, Pavlu & Yilmaz 2006): unbiasedness by exhaustive enumeration of every sample of a
small Poisson design, the linearised variance of statAP against Monte Carlo, and the API on Run/Qrels objects."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from bayeval.data import Qrels, Run, TopicJudgments
from bayeval.errors import BayevalInputError
from bayeval.sampling import stat_measures
from bayeval.sampling._stat_kernels import stat_topic

CUTS = (3, 5)


def _truth(x_ranked, n_unretrieved_rel):
    r = np.arange(1, len(x_ranked) + 1)
    prec = np.cumsum(x_ranked) / r
    R = x_ranked.sum() + n_unretrieved_rel
    return {"N": float(np.sum(x_ranked * prec)), "R": R, "AP": float(np.sum(x_ranked * prec) / R),
            **{f"P{k}": float(x_ranked[:k].sum() / k) for k in CUTS}}


def _estimate(x, pi, inc, ranked_len):
    """Run the kernel for one system ranking docs 0..ranked_len-1 (the rest of the pool unretrieved)."""
    y = x * inc / pi
    v = inc * (1 - pi) / pi**2
    xs = x * inc
    r_hat, var_r = float(y.sum()), float((v * xs).sum())
    out = stat_topic(y[None, :ranked_len], xs[None, :ranked_len], v[None, :ranked_len], np.array([ranked_len]),
                     r_hat, var_r, CUTS)
    return {k: float(val[0]) for k, val in out.items()} | {"R_hat": r_hat, "R_var": var_r,
                                                          "N_hat": float(out["statAP"][0]) * r_hat}


def test_estimates_and_their_variances_are_unbiased_by_enumeration():
    # 11 pooled docs, the run retrieves the first 9; relevance and inclusion probabilities vary
    x = np.array([1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0], dtype=float)
    pi = np.array([1.0, 0.5, 0.3, 0.8, 0.6, 0.25, 0.5, 0.9, 0.4, 0.35, 0.7])
    L = 9
    truth = _truth(x[:L], x[L:].sum())
    acc: dict[str, float] = {}
    acc_sq: dict[str, float] = {}
    for inc in itertools.product((0.0, 1.0), repeat=len(x)):
        inc = np.array(inc)
        w = float(np.prod(np.where(inc == 1, pi, 1 - pi)))
        est = _estimate(x, pi, inc, L)
        for k, val in est.items():
            acc[k] = acc.get(k, 0.0) + w * val
            acc_sq[k] = acc_sq.get(k, 0.0) + w * val * val
    assert acc["N_hat"] == pytest.approx(truth["N"], abs=1e-12)
    assert acc["R_hat"] == pytest.approx(truth["R"], abs=1e-12)
    assert acc["R_var"] == pytest.approx(acc_sq["R_hat"] - acc["R_hat"] ** 2, abs=1e-12)
    for k in CUTS:
        assert acc[f"statP{k}"] == pytest.approx(truth[f"P{k}"], abs=1e-12)
        exact_var = acc_sq[f"statP{k}"] - acc[f"statP{k}"] ** 2
        assert acc[f"statP{k}_var"] == pytest.approx(exact_var, abs=1e-12)
    # statAP is a ratio: nearly, not exactly, unbiased
    assert abs(acc["statAP"] - truth["AP"]) < 0.05


def test_statap_variance_estimate_matches_monte_carlo():
    rng = np.random.default_rng(7)
    n, L = 400, 300
    x = (rng.random(n) < np.r_[np.linspace(0.6, 0.05, L), np.full(n - L, 0.05)]).astype(float)
    pi = np.where(np.arange(n) < 20, 1.0, np.where(np.arange(n) < 100, 0.4, 0.15))
    truth = _truth(x[:L], x[L:].sum())
    est, var, cover = [], [], 0
    draws = 3000
    for _ in range(draws):
        inc = (rng.random(n) < pi).astype(float)
        e = _estimate(x, pi, inc, L)
        est.append(e["statAP"])
        var.append(e["statAP_var"])
        cover += abs(e["statAP"] - truth["AP"]) <= 1.96 * np.sqrt(e["statAP_var"])
    mc_var = np.var(est)
    assert abs(np.mean(est) - truth["AP"]) < 0.1 * np.sqrt(mc_var) + 1e-3
    assert np.mean(var) == pytest.approx(mc_var, rel=0.15)
    # one topic, a skewed ratio: the normal interval covers 92.0% here (the mean of many topics is closer to normal)
    assert 0.90 <= cover / draws <= 0.975


def test_api_on_runs_and_prels():
    # two topics; t1: a, c relevant (π = 1, 0.5), b nonrelevant sampled; d unsampled
    q = Qrels({"1": TopicJudgments(np.array(["a", "b", "c"], dtype=object), np.array([1, 0, 2]),
                                   np.array([1.0, 0.5, 0.5])),
               "2": TopicJudgments(np.array(["z"], dtype=object), np.array([1]), np.array([0.25]))})
    run = Run.from_arrays("r", np.array(["1", "1", "1", "1", "2"]), np.array(["a", "d", "c", "b", "y"]),
                          np.array([4.0, 3, 2, 1, 1]))
    ev = stat_measures([run], q, cutoffs=(2, 4))
    assert ev.topics == ("1", "2")
    assert ev.r_hat.tolist() == [3.0, 4.0]
    # t1: N̂ = 1·1/1 + 2·(1 + 1)/3 = 7/3 ; statAP = 7/9
    assert ev.values["statAP"][0, 0] == pytest.approx(7 / 9)
    assert ev.values["statP4"][0, 0] == pytest.approx(3 / 4)
    assert ev.values["statP2"][0, 0] == pytest.approx(1 / 2)
    assert ev.values["statAP"][0, 1] == 0.0
    m, v = ev.mean("statAP")
    assert m[0] == pytest.approx(7 / 18)
    lo, hi = ev.interval("statAP")
    assert lo[0] < m[0] < hi[0]
    frame = ev.to_frame(per_topic=True)
    assert set(frame.topic) == {"1", "2", "all"}
    with pytest.raises(BayevalInputError, match="inclusion probabilities"):
        stat_measures([run], Qrels({"1": TopicJudgments(np.array(["a"], dtype=object), np.array([1]))}))
