"""Do the data ask for heavy-tailed run effects? ``hier-default`` (Normal u_s) against ``hier-t`` (Student-t u_s).

On the held-out protocol of ``relevance_heldout.py`` (:func:`bayeval.relevance.shallow_pool_split`: the
depth-10 pool of all runs as judgments, ten runs spread over the official MAP ranking at depth 100, targets =
their retrieved documents outside the pool with an official judgment), each model is fitted by the fast path
(Laplace, hyperparameters integrated over importance-weighted points) on the same base RTC fit, and scored by

- the log evidence log p(y): Laplace over log h at its mode (``lap``) and the importance-sampling estimate
  from the fit's weights (``IS``, with its effective sample size), both including every normalising constant,
  and the latter corrected for the Laplace approximation's error in the run effects (``corr.``, see
  :func:`bayeval.relevance.evidence.evidence_correction`: the Laplace value is biased against the t);
- PSIS-LOO over the judged documents (``az.loo`` on the fit's InferenceData), with the paired difference
  against the Normal model and its standard error, and the number of Pareto k > 0.7;
- the held-out log loss of p (posterior predictive mean of 200 draws) on the targets, with the paired
  difference against the Normal model and its standard error.

With ``--paired TABLE`` it reads instead a trial table of ``studies/calibration_study.py`` run with
``--variants hier+unseen,hier-t+unseen`` and prints the paired difference (t − Normal) of the Brier and log
score of P(ΔMAP < 0) (per pair, :mod:`bayeval.stats.forecast`) and of Kendall's τ, averaged per trial, with
the standard error over trials.

With ``--trial-evidence COLLECTION --trials N`` it rebuilds the judgments of the first N robustness trials
(seed 0: the RTC selection on the c = 2 originals of k = 10 runs, as ``run_trial``) and prints per trial the
log evidence (IS) and PSIS-LOO of both models on them: where the Brier scores of those trials are measured.

Collections: ``robust03`` (TREC 2003 Robust) and ``synthetic``
(``make_collection(n_topics=40, n_systems=20, n_docs=800, seed=7)``, as docs/calibration.md); ``trec8`` is the
out-of-sample collection and is only run when named (after the choice). Prints a markdown table
(docs/notes/calibration-record.md, "Heavy tails", holds a copy).

Usage::

    python studies/heavy_tails.py [--data PATH] [--collections robust03 synthetic] [--df 4 10]
    python studies/heavy_tails.py --paired r03-t.parquet [--confidence mc] [--pair hier+unseen,hier-t+unseen]
    python studies/heavy_tails.py --trial-evidence ../shared/data/robust03 --trials 30
"""

from __future__ import annotations

import argparse
import time
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
from relevance_heldout import _robust_systems  # the ten runs of the held-out protocol (same folder)

from bayeval.data import RankData
from bayeval.experiments import RobustnessConfig, load_collection
from bayeval.experiments.robustness import STUDY_STRATEGIES, prepare_trial
from bayeval.io import read_qrels, read_runs
from bayeval.relevance import HierarchicalEstimator, shallow_pool_split
from bayeval.relevance.config import load_config
from bayeval.relevance.evidence import evidence_correction
from bayeval.stats.forecast import brier_score, log_score

#: the study variants' model configurations (not shipped; loaded by path)
STUDY_MODELS = Path(__file__).resolve().parent / "models"


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
        from relevance_heldout import TREC8_SYSTEMS

        systems = TREC8_SYSTEMS
    else:
        systems = _robust_systems(runs, qrels)
    return shallow_pool_split(runs, qrels, systems, judged_depth=10, depth=100), systems


def _configs(dfs):
    yield "normal", load_config("hier-default")
    t = load_config(STUDY_MODELS / "hier-t.toml")
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
    print("| run effect | log p(y) lap | log p(y) IS (ESS) | log p(y) corr. (ESS) | elpd_loo (se) "
          "| Δelpd vs normal (se) | k > 0.7 "
          "| held-out log loss | Δ log loss vs normal (se) | AUC | mean p / rate | σ₀, σ₁ | max abs(u) | fit s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
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
        corr, ess = evidence_correction(hf.model, h)
        print(f"| {lab} | {attrs['log_evidence_laplace']:.2f} | {attrs['log_evidence_is']:.2f} "
              f"({attrs['is_ess']:.0f}) | {attrs['log_evidence_is'] + corr:.2f} ({ess:.0f}) | "
              f"{loo.elpd_loo:.2f} ({loo.se:.2f}) | {d_elpd.sum():+.2f} ({se(d_elpd):.2f}) | "
              f"{int(np.sum(np.asarray(loo.pareto_k) > 0.7))} | {ll_i.mean():.5f} | {d_ll.mean():+.5f} "
              f"({se(d_ll) / len(d_ll):.5f}) | {s['auc']:.4f} | {s['mean_p_ratio']:.3f} | {h[1]:.2f}, {h[2]:.2f} | "
              f"{np.max(np.abs(u)):.2f} | {dt:.1f} |")


def paired(table: Path, confidence: str, a: str = "hier+unseen", b: str = "hier-t+unseen") -> None:
    """Per-trial paired differences b − a of the robustness study's scores, mean ± standard error over trials."""
    f = pd.read_parquet(table)
    f = f[(f.confidence == confidence) & f.method.isin([a, b])].copy()
    f["brier"] = brier_score(f.p_less.to_numpy(), f.true_delta.to_numpy())
    f["log"] = log_score(f.p_less.to_numpy(), f.true_delta.to_numpy())
    per = f.groupby(["trial", "method"])[["brier", "log", "tau"]].mean().unstack("method")
    both = per.dropna()
    n = len(both)
    print(f"\n{table.name}, confidence {confidence}: {n} trials, {b} − {a} (mean over trials ± standard error)\n")
    print(f"| score | {a} | {b} | difference (se) |")
    print("|---|---:|---:|---:|")
    for col in ("brier", "log", "tau"):
        d = both[(col, b)] - both[(col, a)]
        print(f"| {col} | {both[(col, a)].mean():.4f} | {both[(col, b)].mean():.4f} | "
              f"{d.mean():+.4f} ({d.std(ddof=1) / np.sqrt(n):.4f}) |")


def trial_evidence(path: Path, trials: int) -> None:
    """Log evidence and PSIS-LOO of the Normal and the t model on the judgments of robustness trials."""
    import arviz as az

    col = load_collection(path, name=path.name)
    config = RobustnessConfig()
    print(f"\n{path.name}: robustness trials (k = {config.k}, c = {config.c}, seed {config.seed}), "
          "t − Normal on each trial's judgments\n")
    print("| trial | judged | log p(y) Normal (IS) | Δ log p(y) t − Normal, IS | Δ, corrected | Δ elpd_loo (se) |")
    print("|---|---:|---:|---:|---:|---:|")
    d_ev, d_cor, d_loo = [], [], []
    for trial in range(trials):
        ctx = prepare_trial(col, config, trial)
        sel = STUDY_STRATEGIES["rtc"].select(ctx, {})
        data = RankData.build(ctx.runs_k, ctx.judged(sel), depth=config.depth, topics=ctx.topics)
        if not any(tr.judged.any() for tr in data):  # the selection decided before judging anything
            print(f"| {trial} | 0 | – | – | – | – |")
            continue
        seed = int(ctx.s_fit.generate_state(1)[0])
        ev, cor, loo, rtc = {}, {}, {}, None
        for name, config in (("hier-default", "hier-default"), ("hier-t", str(STUDY_MODELS / "hier-t.toml"))):
            m, rtc, _ = HierarchicalEstimator(config).model(data, rtc)
            f = m.fit("laplace", draws=200, chains=1, seed=seed)
            ev[name] = f.idata.posterior.attrs["log_evidence_is"]
            cor[name] = ev[name] + evidence_correction(m, f.mode.x[m.n_latent:], n=500, seed=seed)[0]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                loo[name] = np.asarray(az.loo(f.idata, pointwise=True).loo_i).reshape(-1)
        dl = loo["hier-t"] - loo["hier-default"]
        d_ev.append(ev["hier-t"] - ev["hier-default"])
        d_cor.append(cor["hier-t"] - cor["hier-default"])
        d_loo.append(dl.sum())
        print(f"| {trial} | {len(sel.history)} | {ev['hier-default']:.2f} | {d_ev[-1]:+.2f} | {d_cor[-1]:+.2f} | "
              f"{dl.sum():+.2f} "
              f"({np.sqrt(len(dl)) * dl.std(ddof=1):.2f}) |", flush=True)
    d_ev, d_cor, d_loo = np.array(d_ev), np.array(d_cor), np.array(d_loo)
    n = len(d_ev)
    print(f"\n{n} trials with judgments: Δ log p(y) mean {d_ev.mean():+.3f} (se {d_ev.std(ddof=1) / np.sqrt(n):.3f}), "
          f"t preferred in {int((d_ev > 0).sum())}, by > 1 nat in {int((d_ev > 1).sum())}, Normal by > 1 nat in "
          f"{int((d_ev < -1).sum())}; corrected: mean {d_cor.mean():+.3f} (se {d_cor.std(ddof=1) / np.sqrt(n):.3f}), "
          f"t preferred in {int((d_cor > 0).sum())}; Δ elpd_loo mean {d_loo.mean():+.3f} "
          f"(se {d_loo.std(ddof=1) / np.sqrt(n):.3f})")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="directory holding robust03/ (and trec8/)")
    ap.add_argument("--collections", nargs="+", default=["robust03", "synthetic"],
                    choices=["robust03", "synthetic", "trec8"])
    ap.add_argument("--df", nargs="+", type=float, default=[4.0], help="ν of the Student-t run effect (> 2)")
    ap.add_argument("--draws", type=int, default=250, help="Laplace draws per chain (4 chains)")
    ap.add_argument("--paired", type=Path, help="a calibration_study.py trial table: paired t − Normal scores")
    ap.add_argument("--confidence", default="mc", help="with --paired: the confidence method's rows")
    ap.add_argument("--pair", default="hier+unseen,hier-t+unseen",
                    help="with --paired: the two variants A,B compared (B − A)")
    ap.add_argument("--trial-evidence", type=Path, help="a collection directory: evidence in robustness trials")
    ap.add_argument("--trials", type=int, default=30, help="with --trial-evidence: the first TRIALS trials")
    args = ap.parse_args(argv)
    if args.trial_evidence is not None:
        trial_evidence(args.trial_evidence, args.trials)
        return 0
    if args.paired is not None:
        paired(args.paired, args.confidence, *args.pair.split(",", 1))
        return 0
    for c in args.collections:
        study(c, args.data, args.df, args.draws)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
