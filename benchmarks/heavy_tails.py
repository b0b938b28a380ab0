"""Do the data ask for heavy-tailed run effects? ``hier-default`` (Normal u_s) against ``hier-t`` (Student-t u_s).

On the held-out protocol of ``bench_relevance_heldout.py`` (:func:`bayeval.relevance.shallow_pool_split`: the
depth-10 pool of all runs as judgments, ten runs spread over the official MAP ranking at depth 100, targets =
their retrieved documents outside the pool with an official judgment), each model is fitted by the fast path
(Laplace, hyperparameters integrated over importance-weighted points) on the same base RTC fit, and scored by

- the log evidence log p(y): Laplace over log h at its mode (``lap``) and the importance-sampling estimate
  from the fit's weights (``IS``, with its effective sample size), both including every normalising constant;
- PSIS-LOO over the judged documents (``az.loo`` on the fit's InferenceData), with the paired difference
  against the Normal model and its standard error, and the number of Pareto k > 0.7;
- the held-out log loss of p (posterior predictive mean of 200 draws) on the targets, with the paired
  difference against the Normal model and its standard error.

Collections: ``robust03`` (TREC 2003 Robust) and ``synthetic``
(``make_collection(n_topics=40, n_systems=20, n_docs=800, seed=7)``, as docs/calibration.md); ``trec8`` is the
out-of-sample collection and is only run when named (after the choice). Prints a markdown table
(docs/calibration.md, "Heavy tails", holds a copy).

Usage::

    python benchmarks/heavy_tails.py [--data PATH] [--collections robust03 synthetic] [--df 4 10]
"""

from __future__ import annotations

import argparse
import time
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
from bench_relevance_heldout import _robust_systems  # the ten runs of the held-out protocol (same folder)

from bayeval.io import read_qrels, read_runs
from bayeval.relevance import HierarchicalEstimator, shallow_pool_split
from bayeval.relevance.config import load_config

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def _split(name: str, data_dir: Path):
    if name == "synthetic":
        from bayeval.synthetic import make_collection

        col = make_collection(n_topics=40, n_systems=20, n_docs=800, seed=7)
        runs, qrels = col.runs, col.qrels
    else:
        d = data_dir / name
        qrels = read_qrels(d / "qrels.txt.gz")
        runs = read_runs(sorted((d / "runs").glob("input.*.gz")))
    if name == "trec8":
        from bench_relevance_heldout import TREC8_SYSTEMS

        systems = TREC8_SYSTEMS
    else:
        systems = _robust_systems(runs, qrels)
    return shallow_pool_split(runs, qrels, systems, judged_depth=10, depth=100), systems


def _configs(dfs):
    yield "normal", load_config("hier-default")
    t = load_config("hier-t")
    for nu in dfs:
        yield f"t, ν = {nu:g}", replace(t, hierarchy=replace(t.hierarchy, run_effect_df=float(nu)),
                                        name=f"hier-t{nu:g}")


def study(name: str, data_dir: Path, dfs, draws: int) -> None:
    import arviz as az

    t0 = time.perf_counter()
    split, systems = _split(name, data_dir)
    data = split.data
    n_j = sum(int(tr.judged.sum()) for tr in data)
    label = {"robust03": "TREC 2003 Robust", "synthetic": "synthetic (make_collection seed 7)",
             "trec8": "TREC-8 ad hoc — OUT OF SAMPLE, run once after the choice"}[name]
    print(f"\n### {label}: {len(systems)} runs × {len(data)} topics at depth 100; {n_j} judged, "
          f"{split.n_targets} held-out targets (split {time.perf_counter() - t0:.1f} s)\n")
    print("| run effect | log p(y) lap | log p(y) IS (ESS) | elpd_loo (se) | Δelpd vs normal (se) | k > 0.7 "
          "| held-out log loss | Δ log loss vs normal (se) | AUC | mean p / rate | σ₀, σ₁ | max abs(u) | fit s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    rtc = None
    ref = None
    for lab, cfg in _configs(dfs):
        t0 = time.perf_counter()
        est = HierarchicalEstimator(cfg)
        hf = est.fit(data, "laplace", seed=1, draws=draws, chains=4, rtc_fit=rtc)
        rtc = hf.rtc
        dt = time.perf_counter() - t0
        attrs = hf.fit.idata.posterior.attrs
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            loo = az.loo(hf.fit.idata, pointwise=True)
        li = np.asarray(loo.loo_i).reshape(-1)
        est_p = hf.probabilities(draws=200, seed=1)
        y, p = split.gather(est_p.p)
        p = np.clip(p, 1e-12, 1 - 1e-12)
        ll_i = -(y * np.log(p) + (1 - y) * np.log1p(-p))
        s = split.score(est_p.p)
        if ref is None:
            ref = (li, ll_i)
        d_elpd, d_ll = li - ref[0], ll_i - ref[1]
        se = lambda d: np.sqrt(len(d)) * d.std(ddof=1) if len(d) > 1 else 0.0  # noqa: E731
        P = hf.model.n_latent
        x, h = hf.fit.mode.x[:P], hf.fit.mode.x[P:]
        u = x[2 + len(data):]
        print(f"| {lab} | {attrs['log_evidence_laplace']:.2f} | {attrs['log_evidence_is']:.2f} "
              f"({attrs['is_ess']:.0f}) | {loo.elpd_loo:.2f} ({loo.se:.2f}) | {d_elpd.sum():+.2f} ({se(d_elpd):.2f}) | "
              f"{int(np.sum(np.asarray(loo.pareto_k) > 0.7))} | {ll_i.mean():.5f} | {d_ll.mean():+.5f} "
              f"({se(d_ll) / len(d_ll):.5f}) | {s['auc']:.4f} | {s['mean_p_ratio']:.3f} | {h[1]:.2f}, {h[2]:.2f} | "
              f"{np.max(np.abs(u)):.2f} | {dt:.1f} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="directory holding robust03/ (and trec8/)")
    ap.add_argument("--collections", nargs="+", default=["robust03", "synthetic"],
                    choices=["robust03", "synthetic", "trec8"])
    ap.add_argument("--df", nargs="+", type=float, default=[4.0], help="ν of the Student-t run effect (> 2)")
    ap.add_argument("--draws", type=int, default=250, help="Laplace draws per chain (4 chains)")
    args = ap.parse_args(argv)
    for c in args.collections:
        study(c, args.data, args.df, args.draws)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
