"""``bayeval demo``: the whole idea on a synthetic collection, no files needed.

Generates systems of known quality with shallow (depth-k pooled) judgments, then prints, per
system, the true MAP (from the complete judgments the generator knows), the MAP trec_eval would
report on the shallow judgments (unjudged = nonrelevant), and bayeval's expected MAP with a 95%
interval; then the confidence P(ΔMAP < 0) for every pair and whether it picks the right winner.
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from bayeval.cli._inputs import add_format_argument, positive_int, probability
from bayeval.cli._output import write_frame

__all__ = ["register"]


def register(sub) -> None:
    p = sub.add_parser("demo", help="run bayeval on a generated collection (no files needed)",
                       description=__doc__.split("\n\n")[1].replace("\n", " "))
    p.add_argument("--systems", type=positive_int, default=8, help="number of systems (default 8)")
    p.add_argument("--topics", type=positive_int, default=25, help="number of topics (default 25)")
    p.add_argument("--docs", type=positive_int, default=400, help="candidate documents per topic (default 400)")
    p.add_argument("--depth", type=positive_int, default=100, help="documents retrieved per topic (default 100)")
    p.add_argument("--judged-depth", type=positive_int, default=5, help="pool depth judged (default 5)")
    p.add_argument("--default-p", type=probability, default=None,
                   help="probability of relevance of unjudged documents (default: per topic, the "
                        "plus-one smoothed rate among judged documents below rank 1 of the pool, see docs)")
    p.add_argument("--method", choices=("paper", "delta", "exact", "mc"), default="exact",
                   help="how expected measures are computed (default exact)")
    p.add_argument("--seed", type=int, default=2024, help="generator seed (default 2024)")
    add_format_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bayeval.data.rankdata import RankData
    from bayeval.expected import compare_systems, expected_measures
    from bayeval.measures import evaluate
    from bayeval.synthetic import make_collection

    col = make_collection(n_topics=args.topics, n_systems=args.systems, n_docs=args.docs, depth=args.depth,
                          judged_depth=args.judged_depth, seed=args.seed)
    shallow = RankData.build(col.runs, col.judgments)
    truth = RankData.build(col.runs, col.qrels)
    names = list(col.runs.names)
    true_map = evaluate(truth, ["AP"]).mean()[0]
    trec_map = evaluate(shallow, ["AP"]).mean()[0]
    probs = None
    default_p = args.default_p
    if default_p is None:
        probs = _smoothed_rates(shallow)
        default_p = 0.5
        p_note = "per-topic plus-one smoothed rate of the judged pool"
    else:
        p_note = f"p = {default_p:g} for every unjudged document"
    exp = expected_measures(shallow, probs, default_p=default_p, measures=["AP"], method=args.method)
    ci = exp.confidence_interval(0.95)
    n_judged = sum(len(col.judgments[t]) for t in col.judgments.topics)
    table = pd.DataFrame({
        "run": names, "quality": [col.quality[n] for n in names], "true MAP": true_map,
        "trec_eval MAP": trec_map, "E[MAP]": exp.mean_expected()[0],
        "95% low": ci[0][0], "95% high": ci[1][0]})
    cmp = compare_systems(shallow, probs, default_p=default_p, measure="AP", method=args.method)
    pairs = cmp.to_frame(per_topic=False)
    idx = {n: i for i, n in enumerate(names)}
    truth_less = np.array([true_map[idx[a]] < true_map[idx[b]] for a, b in zip(pairs.run_a, pairs.run_b, strict=True)])
    conf = np.maximum(pairs.p_less, 1 - pairs.p_less)
    pairs = pairs.assign(confidence=conf, correct=(pairs.p_less > 0.5) == truth_less)
    if args.format == "table":
        print(f"Synthetic collection: {args.systems} systems, {args.topics} topics, {args.docs} documents per "
              f"topic, runs to depth {args.depth}; {n_judged} judgments (depth-{args.judged_depth} pool).\n"
              f"Unjudged documents: {p_note}; moments by the '{args.method}' method.\n")
        write_frame(table.sort_values("true MAP", ascending=False), "table", title="MAP per system")
        print("E[MAP] is only as good as the probabilities given to unjudged documents: the crude per-topic "
              "rate used here\nshrinks every MAP towards the same value, yet the ordering of the systems, "
              "and so the pairwise confidences below, can still be right.\n"
              "Try --default-p 0.5 (MTC's assumption) to see how much the choice matters.")
        decided = pairs[pairs.confidence >= 0.95]
        print(f"\n{len(pairs)} pairs; {len(decided)} with confidence >= 0.95, of which "
              f"{int(decided.correct.sum())} pick the truly better system. Overall accuracy of the "
              f"more-likely winner: {pairs.correct.mean():.3f}.\n")
        write_frame(pairs.sort_values("confidence", ascending=False)[
            ["run_a", "run_b", "delta_expected", "delta_variance", "p_less", "confidence", "correct"]],
            "table", title="P(MAP_a - MAP_b < 0) for every pair")
    else:
        write_frame(pairs, args.format)
    return 0


def _smoothed_rates(data):
    """Per topic, (judged relevant + 1) / (judged + 2) for every unjudged document."""
    from bayeval.data.probabilities import RelevanceProbabilities

    out = {}
    for tr in data:
        rate = (tr.num_rel + 1) / (int(tr.judged.sum()) + 2)
        out[tr.topic] = {d: rate for d, j in zip(tr.docnos, tr.judged, strict=True) if not j}
    return RelevanceProbabilities(out)
