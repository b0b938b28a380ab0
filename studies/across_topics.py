"""Level and power of the tests across topics when the judgments are shallow: a true null made by topic resampling.

A collection's complete qrels give every pair of runs its true per-topic differences d_t (AP at depth 100). The
tests see only a shallow pool (every run's top ``--pool`` judged) with p of the unjudged documents from the default
model, fitted once at its posterior mode (``map``: a point p) and once by Laplace (posterior draws of p).

*Null.* For a pair, the topics are re-weighted by exponential tilting, w_t ∝ exp(λ d_t) with Σ w_t d_t = 0 (Efron
& Tibshirani 1993, §16.4): a population of topics in which the pair's true mean difference is exactly 0. Samples of
``--n`` topics (half the collection's; with replacement) are drawn from it, and each test is run on every sample:
5% of them should reject at 5%. *Power.* The same with equal weights: the collection's own topics, where the true
mean difference is that of the complete judgments; a rejection counts as right when its sign is that mean's.

Tests: ``combined`` at the point p and with the posterior draws (:func:`bayeval.stats.uncertain_paired_t`, the
shared error of a resample from the same draws: exact for duplicated topics); the paired t-test on E[Δ_t] of the
Laplace fit (combined without its shared error); the paired t-test on trec_eval's values of the shallow judgments
(unjudged = not relevant); and, as the check of the null itself, the paired t-test on the complete judgments.

    python studies/across_topics.py ../shared/data/robust03 --pairs 300 --samples 200 --out robust03.csv
    python studies/across_topics.py ../shared/data/dl20-passage --condense --relevance-level 2 --pool 5 ...

docs/expected.md ("Across topics") and docs/notes/across-topics.md report the figures.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import pandas as pd
from scipy import optimize

from bayeval.data import RankData
from bayeval.data.qrels import pool_qrels
from bayeval.defaults import DEFAULT_MODEL
from bayeval.expected import compare_systems
from bayeval.io import load_collection
from bayeval.measures import evaluate
from bayeval.progress import track
from bayeval.relevance import estimate_probabilities
from bayeval.stats import paired_pvalues, uncertain_paired_t

TESTS = ("truth_t", "trec_eval_t", "expected_t", "combined_map", "combined_laplace")


def tilt(d: np.ndarray) -> np.ndarray | None:
    """Weights w ∝ exp(λ d) with Σ w d = 0 (None when every d has the same sign: no such tilt)."""
    if not (d.min() < 0 < d.max()):
        return None
    scale = np.abs(d).max()

    def mean(lam):
        w = np.exp(lam * (d - d.max()) / scale)
        return float(np.sum(w * d) / np.sum(w))

    lam = optimize.brentq(mean, -200.0, 200.0) if mean(-200.0) < 0 < mean(200.0) else None
    if lam is None:
        return None
    w = np.exp(lam * (d - d.max()) / scale)
    return w / w.sum()


def _per_draw(data, est, pairs, method):
    """(D, P, T) E[Δ_t] given each posterior draw of p, and (P, T) the mean over draws of Var[Δ_t | draw]."""
    draws = est.arrays(draws=True)
    e, v = [], []
    for d in range(draws[0].shape[0]):
        c = compare_systems(data, [x[d] for x in draws], pairs=pairs, method=method, progress=False)
        e.append(c.delta_expected)
        v.append(c.delta_variance)
    return np.asarray(e), np.mean(v, axis=0)


def run(col_dir: str, *, pool: int, depth: int, n_pairs: int, samples: int, n: int | None, seed: int,
        condense: bool, relevance_level: int, p_draws: int, method: str, model: str) -> pd.DataFrame:
    t0 = time.perf_counter()
    col = load_collection(col_dir, condense=condense, relevance_level=relevance_level)
    runs, qrels = col.runs(), col.qrels()
    full = RankData.build(runs, qrels, depth=depth)
    shallow = RankData.build(runs, pool_qrels(runs, qrels, pool), depth=depth)
    topics = full.topics
    T = len(topics)
    n = n or T // 2
    rng = np.random.default_rng(seed)
    S = len(runs)
    all_pairs = [(a, b) for a in range(S) for b in range(a + 1, S)]
    pick = rng.choice(len(all_pairs), size=min(n_pairs, len(all_pairs)), replace=False)
    pairs = [all_pairs[k] for k in sorted(pick)]
    pa, pb = np.array(pairs).T
    truth = evaluate(full, ["AP"]).values[0]
    known = evaluate(shallow, ["AP"]).values[0]
    d_true, d_known = truth[pa] - truth[pb], known[pa] - known[pb]
    print(f"{col.name}: {S} runs, {T} topics, pool depth {pool}, {len(pairs)} pairs; fitting {model}",
          file=sys.stderr)
    est_map = estimate_probabilities(shallow, model, fit="map", seed=seed)
    c_map = compare_systems(shallow, est_map, pairs=pairs, method=method, progress=False)
    est_lap = estimate_probabilities(shallow, model, fit="laplace", seed=seed, p_draws=p_draws)
    e_draw, within = _per_draw(shallow, est_lap, pairs, method)
    e_lap = e_draw.mean(axis=0)
    v_lap = within + e_draw.var(axis=0)
    print(f"  fitted and compared in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    rows = []
    for i in track(range(len(pairs)), total=len(pairs), description="pairs", keep=True):
        w_null = tilt(d_true[i])
        for kind, w in (("null", w_null), ("power", np.full(T, 1.0 / T))):
            if w is None:
                continue
            idx = rng.choice(T, size=(samples, n), p=w)
            mu = float(np.sum(w * d_true[i]))
            p = {"truth_t": paired_pvalues(d_true[i][idx], np.zeros((samples, n))),
                 "trec_eval_t": paired_pvalues(d_known[i][idx], np.zeros((samples, n))),
                 "expected_t": uncertain_paired_t(e_lap[i][idx], v_lap[i][idx]).p_value,
                 "combined_map": uncertain_paired_t(c_map.delta_expected[i][idx], c_map.delta_variance[i][idx],
                                                    c_map.delta_variance[i][idx].sum(axis=1) / n**2).p_value}
            shared = e_draw[:, i, :][:, idx].mean(axis=2).var(axis=0) + within[i][idx].sum(axis=1) / n**2
            p["combined_laplace"] = uncertain_paired_t(e_lap[i][idx], v_lap[i][idx], shared).p_value
            sign = {"truth_t": d_true[i][idx].mean(1), "trec_eval_t": d_known[i][idx].mean(1),
                    "expected_t": e_lap[i][idx].mean(1), "combined_map": c_map.delta_expected[i][idx].mean(1),
                    "combined_laplace": e_lap[i][idx].mean(1)}
            for test in TESTS:
                rej = p[test] < 0.05
                right = rej & (np.sign(sign[test]) == np.sign(mu))
                rows.append({"collection": col.name, "pair": i, "run_a": runs.names[pa[i]],
                             "run_b": runs.names[pb[i]], "kind": kind, "test": test, "mu": mu, "samples": samples,
                             "rejections": int(rej.sum()), "right": int(right.sum()), "n": n})
    print(f"  done in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return pd.DataFrame(rows)


def summarise(frame: pd.DataFrame) -> pd.DataFrame:
    """Rejection rate at 5% per collection, kind and test, with a 95% Wilson interval; under the power kind also
    the share of rejections whose sign is the population's."""
    from bayeval.stats import wilson_interval

    out = []
    for (c, kind, test), g in frame.groupby(["collection", "kind", "test"], sort=False):
        k, m = int(g.rejections.sum()), int(g.samples.sum())
        lo, hi = wilson_interval(k, m, 0.95)
        out.append({"collection": c, "kind": kind, "test": test, "pairs": g.pair.nunique(), "tests": m,
                    "rejected": k / m, "lower": float(lo), "upper": float(hi),
                    "right_sign": g.right.sum() / max(k, 1)})
    return pd.DataFrame(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("collection", help="collection directory (runs/ and qrels.txt[.gz])")
    ap.add_argument("--pool", type=int, default=10, help="pool depth of the shallow judgments (default 10)")
    ap.add_argument("--depth", type=int, default=100, help="rank depth evaluated (default 100)")
    ap.add_argument("--pairs", type=int, default=300, help="random pairs of runs (default 300)")
    ap.add_argument("--samples", type=int, default=200, help="topic samples per pair and kind (default 200)")
    ap.add_argument("--n", type=int, default=None, help="topics per sample (default half the collection's)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--condense", action="store_true", help="runs condensed to the judged documents (DL 2020)")
    ap.add_argument("--relevance-level", type=int, default=1)
    ap.add_argument("--p-draws", type=int, default=25, help="posterior draws of p of the Laplace fit (default 25)")
    ap.add_argument("--method", default="delta", help="moments (default delta)")
    ap.add_argument("--model", default=DEFAULT_MODEL)
    ap.add_argument("--out", required=True, help="csv of the per-pair counts")
    args = ap.parse_args(argv)
    frame = run(args.collection, pool=args.pool, depth=args.depth, n_pairs=args.pairs, samples=args.samples,
                n=args.n, seed=args.seed, condense=args.condense, relevance_level=args.relevance_level,
                p_draws=args.p_draws, method=args.method, model=args.model)
    frame.to_csv(args.out, index=False)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(summarise(frame).round(4).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
