"""A newcomer's first number: E[MAP] of every TREC-8 run with the official qrels at full depth, against trec_eval.

``bayeval evaluate trec8/qrels.txt.gz trec8/runs`` (full depth, the default model, the unseen relevant documents
in R) against the official MAP: the ratio E[MAP] / trec_eval per run (median and range), how many of the 95%
intervals hold trec_eval's MAP (which counts unjudged documents as not relevant: not the MAP with every document
judged, which the relevant documents below rank 100 would change both ways — more relevant retrieved, a larger R),
and for INQ601 and INQ602 alone (the README's ``estimate``
example) the expected number of relevant documents among their unjudged ones against the 4,728 relevant documents
the whole qrels hold. Each model named is run in turn (docs/notes/depth-record.md, "At full depth").

    python studies/depth_full_qrels.py ../shared/data/trec8 --models studies/models/hier-level-shift.toml,hier-depth
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from bayeval.data import RankData
from bayeval.expected import expected_measures
from bayeval.io import load_collection
from bayeval.measures import evaluate
from bayeval.relevance import estimate_probabilities
from bayeval.relevance.unseen import with_unseen

#: the study variants' model configurations (not shipped; loaded by path)
STUDY_MODELS = Path(__file__).resolve().parent / "models"



def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("collection", type=Path)
    ap.add_argument("--models", default=f"{STUDY_MODELS / 'hier-level-shift.toml'},hier-depth")
    a = ap.parse_args(argv)
    col = load_collection(a.collection)
    runs, qrels = col.runs(), col.qrels()
    data = RankData.build(runs, qrels)
    official = np.asarray(evaluate(data, ["AP"]).mean()).reshape(-1)
    two = RankData.build(runs.select(["INQ601", "INQ602"]), qrels)
    print(f"{col.name}: {len(runs)} runs, full depth, official qrels ({sum(qrels.num_rel(t) for t in qrels)} "
          "relevant)\n")
    print("| model | E[MAP] / trec_eval, median (10–90%) | intervals holding trec_eval's MAP | INQ601+602: expected "
          "relevant among their unjudged | seconds |\n|---|---:|---:|---:|---:|")
    for model in a.models.split(","):
        t0 = time.perf_counter()
        est = estimate_probabilities(data, model)
        d, e = with_unseen(data, est, seed=0)
        ev = expected_measures(d, e, measures=["AP"], method="exact", progress=False)
        lo, hi = ev.confidence_interval(0.95)
        secs = time.perf_counter() - t0
        ok = official > 0
        ratio = ev.all_expected[0][ok] / official[ok]
        held = int(np.sum((official >= lo[0]) & (official <= hi[0])))
        e2 = estimate_probabilities(two, model)
        unj = sum(float(p[~j].sum()) for p, j in zip(e2.p, e2.judged, strict=True))
        n_unj = sum(int((~j).sum()) for j in e2.judged)
        print(f"| {model} | {np.median(ratio):.3f} ({np.quantile(ratio, 0.1):.3f}–{np.quantile(ratio, 0.9):.3f}) | "
              f"{held} of {len(official)} | {unj:,.0f} of {n_unj:,} | {secs:.0f} |", flush=True)


if __name__ == "__main__":
    main()
