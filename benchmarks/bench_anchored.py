"""The anchored form of the sampling study's ``assisted`` against the ratio form, same process, alternately:

- a whole study trial (``run_sampling_trial``: the cross-fitted fits, then ``assisted`` and ``combined``) with
  ``form="ratio"`` and with ``form="anchored"`` — the study's cost per trial;
- the estimator alone on one budget's sample and the same cross-fitted p: ``assisted_measures`` (the ratio) against
  ``anchored_measures`` (order 2).

    python benchmarks/bench_anchored.py ../shared/data/dl20-passage --condense --per-topic 20 --repeat 3

Prints each timing's median and the ratios.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bayeval.experiments import load_collection
from bayeval.experiments.sampling import (
    SamplingStudyConfig,
    draw_pool_sample,
    prepare_sampling_trial,
    run_sampling_trial,
)
from bayeval.experiments.sampling_methods import BudgetSample
from bayeval.sampling import anchored_measures, assisted_measures


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("collection")
    ap.add_argument("--condense", action="store_true")
    ap.add_argument("--relevance-level", type=int, default=1)
    ap.add_argument("--per-topic", type=float, default=20.0)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    col = load_collection(a.collection, relevance_level=a.relevance_level, condense=a.condense)
    times: dict[str, list[float]] = {"ratio": [], "anchored": []}
    for rep in range(a.repeat):
        for form in ("ratio", "anchored"):
            cfg = SamplingStudyConfig(budgets=(a.per_topic,), per_topic=True, relevance_level=a.relevance_level,
                                      methods=("assisted", "combined"), form=form, pairs=200)
            t0 = time.perf_counter()
            run_sampling_trial(col, cfg, rep)
            times[form].append(time.perf_counter() - t0)
    med = {k: float(np.median(v)) for k, v in times.items()}
    print(f"study trial (fits, assisted, combined), {a.repeat} trials each: ratio {med['ratio']:.1f} s, "
          f"anchored {med['anchored']:.1f} s, anchored / ratio = {med['anchored'] / med['ratio']:.3f}")

    cfg = SamplingStudyConfig(budgets=(a.per_topic,), per_topic=True, relevance_level=a.relevance_level)
    rng = np.random.default_rng([cfg.seed, 0])
    tr = prepare_sampling_trial(col, cfg, 0, rng)
    sample, incl = draw_pool_sample(tr.base, tr.qrels, a.per_topic, rng, per_topic=True)
    bs = BudgetSample(tr, 0, sample, incl)
    probs = bs.cross_fitted
    est = {"ratio": [], "anchored": []}
    kw = {"inclusion": incl, "cutoffs": (), "depth": cfg.depth, "relevance_level": a.relevance_level}
    for _ in range(max(a.repeat, 3)):
        t0 = time.perf_counter()
        assisted_measures(tr.runs, sample, probs, **kw)
        est["ratio"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        anchored_measures(tr.runs, sample, probs, **kw)
        est["anchored"].append(time.perf_counter() - t0)
    r, n = float(np.median(est["ratio"])), float(np.median(est["anchored"]))
    print(f"estimator alone on one sample ({len(tr.runs)} runs, {len(tr.base.topics)} topics): assisted_measures "
          f"{r:.2f} s, anchored_measures {n:.2f} s, ratio {n / r:.2f}")


if __name__ == "__main__":
    main()
