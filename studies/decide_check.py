"""Check "what would decide it" (bayeval.selection.to_decide) against top-ups of real judgments.

Per robustness trial (k = 10, c = 2 judged by the RTC selection to α = 0.95, depth 100, seed 0: the trials of
docs/calibration.md), the model (``--model``, Laplace, 200 draws of p, the unseen relevant documents in R_t) is
fitted once on the selection's judgments; :func:`~bayeval.selection.to_decide.judgments_to_decide` predicts, for
every pair not decided at 0.95 that a held-out run is in, the expected number of top-up judgments of the run it
names. Then, ``--repeats`` times, that run is topped up round by round (one of its unjudged documents a topic,
:func:`~bayeval.selection.topup.draw_topup`, judged by the complete qrels), the pairs re-evaluated after each round
(the same fit and draws of p, the reuse prior's levels updated by the top-up; P(ΔMAP < 0) by the delta method
over 25 draws of p, as the prediction), and the first round at which each pair is decided recorded
(``--max-rounds`` when none). The simulated number is the mean over repeats; the prediction is counted right when
it lies within a factor 1.5 of it.

Usage::

    python studies/decide_check.py ../shared/data/robust03 --trials 4 --out dc-r03.parquet --model hier-reuse
    python studies/decide_check.py --summary dc-*.parquet
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

import numpy as np
import pandas as pd

from bayeval.data import Qrels, RankData
from bayeval.data.coverage import contributing_runs
from bayeval.expected import compare_systems
from bayeval.experiments import RobustnessConfig, load_collection
from bayeval.experiments.robustness import STUDY_STRATEGIES, prepare_trial
from bayeval.io.trials import write_table
from bayeval.relevance import HierarchicalEstimator
from bayeval.relevance.topup import TopUpSample
from bayeval.relevance.unseen import with_unseen
from bayeval.selection.to_decide import judgments_to_decide
from bayeval.selection.topup import draw_topup


def _without_reuse(fit):
    """``fit`` whose draws stop before the reuse prior (the draws every round shares)."""
    return fit.with_held_out_runs(reuse_mean=0.0, reuse_common_sd=0.0, reuse_run_sd=0.0, reuse_slope_mean=0.0,
                             reuse_slope_sd=0.0)


def _evaluate(fit, pre, base: RankData, ctx, sample: TopUpSample, seed: int, rng):
    """The comparison of every pair with ``sample``'s judgments added and the levels learned from them: the
    reuse prior applied to the shared draws ``pre`` (what ``fit.probabilities(topup=sample)`` does, without
    drawing the rest again)."""
    parts = [pd.DataFrame({"topic": tr.topic, "docno": tr.docnos[tr.judged], "grade": tr.grades[tr.judged]})
             for tr in base]
    both = pd.concat(parts + [sample.qrels().to_frame()], ignore_index=True)
    data = RankData.build(ctx.runs_k, Qrels.from_frame(both, ctx.qrels.relevance_level), depth=100,
                          topics=ctx.topics)
    draws, levels = fit.held_out_prior().apply(base, pre.draws, rng, sample.positions(base))
    est = dataclasses.replace(pre, draws=draws, p=tuple(d.mean(axis=0, dtype=np.float64) for d in draws),
                              held_out=levels, judged=tuple(np.asarray(tr.judged) for tr in data))
    data, est = with_unseen(data, est, seed=seed)
    return compare_systems(data, est, method="delta", progress=False)


def trial_check(col, trial: int, model: str, repeats: int, max_rounds: int) -> pd.DataFrame:
    cfg = RobustnessConfig(methods=("bayes",))
    ctx = prepare_trial(col, cfg, trial)
    sel = STUDY_STRATEGIES["rtc"].select(ctx, {})
    base = RankData.build(ctx.runs_k, ctx.judged(sel), depth=cfg.depth, topics=ctx.topics)
    seed = int(ctx.s_fit.generate_state(1)[0])
    fit = HierarchicalEstimator(model).fit(base, "laplace", seed=seed, draws=200, chains=1)
    data0, est0 = with_unseen(base, fit.probabilities(draws=200, seed=seed), seed=seed)
    pred = judgments_to_decide(data0, est0, max_rounds=max_rounds, seed=seed).frame
    pre = _without_reuse(fit).probabilities(draws=200, seed=seed)
    pred = pred[~pred.decided & (pred.topup_run != "")].copy()
    contrib = contributing_runs(base)
    rows = []
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(trial, 99)))
    names = list(data0.systems)
    for run in sorted(set(pred.topup_run)):
        mine = pred[pred.topup_run == run]
        idx = [(names.index(a), names.index(b)) for a, b in zip(mine.run_a, mine.run_b, strict=True)]
        for r in range(repeats):
            first = np.full(len(mine), max_rounds)
            frames, taken = [], set()
            for k in range(1, max_rounds + 1):
                new = draw_topup(base, [run], 1, depth=cfg.depth, rng=rng, contributing=contrib, taken=taken,
                                 first_round=k).frame
                new["grade"] = [max(ctx.qrels.grade_of(t, d) or 0, 0) for t, d in zip(new.topic, new.docno,
                                                                                      strict=True)]
                taken |= set(zip(new.topic, new.docno, strict=True))
                frames.append(new)
                sample = TopUpSample(pd.concat(frames, ignore_index=True), ctx.qrels.relevance_level)
                cmp = _evaluate(fit, pre, base, ctx, sample, seed, rng)
                pl = {(a, b): p for a, b, p in zip(cmp.index_a, cmp.index_b, cmp.all_p_less, strict=True)}
                for j, key in enumerate(idx):
                    if first[j] == max_rounds and k < max_rounds:
                        p = pl[key]
                        if p >= 0.95 or p <= 0.05:
                            first[j] = k
                if np.all(first < max_rounds):
                    break
            for j, (_, row) in enumerate(mine.iterrows()):
                rows.append({"collection": col.name, "trial": trial, "run_a": row.run_a, "run_b": row.run_b,
                             "topup_run": run, "repeat": r, "topics": len(ctx.topics),
                             "predicted": row.judgments, "decided_by_cap": row.decided_by_cap,
                             "simulated_rounds": int(first[j]), "max_rounds": max_rounds})
    return pd.DataFrame(rows)


def summary(paths) -> None:
    f = pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)
    # rounds of one run: a round judges one document of each of the run's topics with a frame; the prediction is
    # in judgments, so it is compared per round (predicted / topics with the run's documents)
    g = f.groupby(["collection", "trial", "run_a", "run_b", "topup_run"]).agg(
        predicted=("predicted", "first"), sim_rounds=("simulated_rounds", "mean"), topics=("topics", "first"),
        cap=("max_rounds", "first")).reset_index()
    per_round = g.predicted / g.sim_rounds
    g["ratio"] = per_round / g.topics
    ok = (g.ratio >= 1 / 1.5) & (g.ratio <= 1.5)
    print(f"{len(g)} pairs, {g.trial.nunique()} trials: prediction within x1.5 of the simulated mean for "
          f"{100 * ok.mean():.1f}%")
    # calibration in the large: pairs grouped by their prediction (terciles), mean predicted against mean simulated
    g["sim"] = g.sim_rounds * g.topics
    g["bin"] = pd.qcut(g.predicted.rank(method="first"), 3, labels=["low", "middle", "high"])
    print(g.groupby("bin", observed=True).agg(pairs=("sim", "size"), predicted=("predicted", "mean"),
                                              simulated=("sim", "mean")).round(0).to_markdown())
    # the check's own noise: one repeat against the mean of the pair's other repeats (no model involved); if the
    # prediction were exact, its share within x1.5 of the simulated mean would be at least about this
    key = ["collection", "trial", "run_a", "run_b", "topup_run"]
    # (pairs some repeat decided before the cap: those never decided agree trivially)
    hits = []
    for _, h in f.groupby(key):
        r = h.simulated_rounds.to_numpy(np.float64)
        if len(r) > 1 and (r < h.max_rounds.to_numpy()).any():
            hits += [1 / 1.5 <= r[i] / np.delete(r, i).mean() <= 1.5 for i in range(len(r))]
    if hits:
        print(f"noise of the check (pairs some repeat decided): one repeat within x1.5 of the mean of its pair's "
              f"other repeats for {100 * np.mean(hits):.1f}% of {len(hits)}")
    # how decisive the model says a top-up is: P(decided within the cap) predicted against the share of repeats
    # decided before the last round (a decision in the last round is not told apart from none)
    early = f.assign(early=f.simulated_rounds < f.max_rounds).groupby(key).agg(
        by=("decided_by_cap", "first"), early=("early", "mean"))
    print(f"decided within the cap: predicted {100 * early.by.mean():.1f}% (mean probability), simulated "
          f"{100 * early.early.mean():.1f}% before the last round; pairs never decided in any repeat "
          f"{100 * (early.early == 0).mean():.1f}%")
    for c, h in g.assign(ok=ok).groupby("collection"):
        sim = (h.sim_rounds * h.topics).mean()
        print(f"- {c}: {len(h)} pairs, within x1.5 {100 * h.ok.mean():.1f}%, median ratio {h.ratio.median():.2f}, "
              f"predicted mean {h.predicted.mean():.0f} judgments, simulated mean {sim:.0f}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("collection", type=Path, nargs="?")
    ap.add_argument("--trials", type=int, default=4)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--model", default="hier-reuse")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--max-rounds", type=int, default=6)
    ap.add_argument("--condense", action="store_true")
    ap.add_argument("--relevance-level", type=int, default=1)
    ap.add_argument("--summary", nargs="+", default=None)
    a = ap.parse_args(argv)
    if a.summary:
        summary(a.summary)
        return
    col = load_collection(a.collection, condense=a.condense, relevance_level=a.relevance_level)
    frames, t0 = [], time.perf_counter()
    for i in range(a.first, a.first + a.trials):
        frames.append(trial_check(col, i, a.model, a.repeats, a.max_rounds))
        table = pd.concat(frames, ignore_index=True)
        if len(table):
            write_table(table, a.out, columns=list(table.columns))
        print(f"trial {i}: {time.perf_counter() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
