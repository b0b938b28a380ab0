"""Where p goes wrong: reliability of the probabilities of the *unjudged* documents in robustness trials.

The robustness study (docs/calibration.md) judges ~5 documents per topic (RTC selection on the c judged
runs) and asks a relevance model for p of every other document of the k runs. The complete qrels know
whether each of those documents is relevant, so p itself can be scored — Brier, reliability bins of p
with Wilson intervals (:func:`bayeval.stats.forecast.reliability_bins`), and mean p against the relevant
rate by the best rank any of the k runs gives the document and by whether a judged run retrieves it.
This shows *which* documents a model misjudges, which the pairwise scores of P(ΔMAP < 0) cannot.

Trials are those of ``bayeval experiment robustness run`` with the same seed (k = 10, c = 2, depth 100):
the same runs and the same judgments per trial number.

Usage::

    python studies/calibration_of_p.py ../shared/data/robust03 --trials 6 [--configs hier-default,rtc-default]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from bayeval.data import RankData
from bayeval.experiments import RobustnessConfig, load_collection
from bayeval.experiments.robustness import STUDY_STRATEGIES, prepare_trial
from bayeval.relevance import HierarchicalConfig, HierarchicalEstimator, RTCEstimator, load_config
from bayeval.stats.forecast import reliability_bins

BANDS = ((1, 5), (6, 20), (21, 50), (51, 100))


def trial_documents(col, config: RobustnessConfig, trial: int, configs) -> pd.DataFrame:
    """One row per unjudged document of trial ``trial``: its p under each model, its relevance, best rank."""
    ctx = prepare_trial(col, config, trial)
    topics, qrels, runs_k = ctx.topics, ctx.qrels, ctx.runs_k
    sel = STUDY_STRATEGIES["rtc"].select(ctx, {})  # the judgments of the study's rtc and bayes methods
    data = RankData.build(runs_k, ctx.judged(sel), depth=config.depth, topics=topics)
    truth = RankData.build(runs_k, qrels, depth=config.depth, topics=topics)
    cols: dict = {"trial": [], "relevant": [], "best_rank": [], "in_judged_run": []}
    for tr, tt in zip(data, truth, strict=True):
        unj = ~np.asarray(tr.judged)
        where = {d: i for i, d in enumerate(tt.docnos)}
        ranks = np.asarray(tr.ranks)
        best = np.where(ranks > 0, ranks, np.iinfo(np.int32).max).min(axis=1)
        cols["trial"].append(np.full(int(unj.sum()), trial))
        cols["relevant"].append(np.asarray(tt.relevant)[[where[d] for d in tr.docnos[unj]]])
        cols["best_rank"].append(best[unj])
        cols["in_judged_run"].append((ranks[unj, : config.c] > 0).any(axis=1))
    out = {k: np.concatenate(v) for k, v in cols.items()}
    for name in configs:
        est = HierarchicalEstimator if isinstance(load_config(name), HierarchicalConfig) else RTCEstimator
        p = est(name).fit(data, "map").probabilities(draws=None).p
        out[f"p[{name}]"] = np.concatenate([pt[~np.asarray(tr.judged)] for pt, tr in zip(p, data, strict=True)])
    return pd.DataFrame(out)


def tables(docs: pd.DataFrame, configs) -> str:
    y = docs["relevant"].to_numpy(bool)
    lines = []
    for name in configs:
        p = docs[f"p[{name}]"].to_numpy()
        lines.append(f"\n### {name}: {len(p):,} unjudged documents, mean p {p.mean():.4f}, relevant rate "
                     f"{y.mean():.4f}, Brier {np.mean((p - y) ** 2):.4f}\n")
        # reliability_bins scores P(Δ < 0) against true Δ: a relevant document is the event, Δ = −1
        bins = reliability_bins(p, np.where(y, -1.0, 1.0), edges=np.array([0, .01, .02, .05, .1, .2, .4, .7, 1]))
        lines.append("| p bin | n | mean p | relevant | 95% Wilson | consistent |\n|---|---:|---:|---:|---|---|")
        for r in bins[bins["n"] > 0].itertuples():
            lines.append(f"| {r.bin} | {r.n:,} | {r.mean_forecast:.3f} | {r.frequency:.3f} | "
                         f"{r.lower:.3f}–{r.upper:.3f} | {'yes' if r.consistent else 'no'} |")
        lines.append("\n| documents | n | mean p | relevant rate | ratio |\n|---|---:|---:|---:|---:|")
        groups = [(f"best rank {lo}–{hi}", (docs.best_rank >= lo) & (docs.best_rank <= hi)) for lo, hi in BANDS]
        groups += [("retrieved by a judged run", docs.in_judged_run), ("only by held-out runs", ~docs.in_judged_run)]
        for label, m in groups:
            m = m.to_numpy()
            if m.any():
                lines.append(f"| {label} | {m.sum():,} | {p[m].mean():.4f} | {y[m].mean():.4f} | "
                             f"{p[m].mean() / max(y[m].mean(), 1e-9):.2f} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("collection", type=Path)
    ap.add_argument("--trials", type=int, default=6)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--configs", default="hier-default,rtc-default")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    configs = tuple(a.configs.split(","))
    col = load_collection(a.collection, name=a.collection.name)
    config = RobustnessConfig(methods=("bayes",), seed=a.seed)
    t0 = time.perf_counter()
    docs = pd.concat([trial_documents(col, config, t, configs) for t in range(a.first, a.first + a.trials)],
                     ignore_index=True)
    print(f"{a.collection.name}: trials {a.first}–{a.first + a.trials - 1} (seed {a.seed}), "
          f"{time.perf_counter() - t0:.0f} s")
    print(tables(docs, configs))


if __name__ == "__main__":
    main()
