"""``bayeval compare QRELS RUN_A RUN_B``: is run a better than run b? One table, every test a paper reports.

The difference of the mean measure on these topics with relevance uncertain (P(Δ < 0) of ``evaluate --pairs``),
over the population of topics with both (``combined``), and the usual paired tests over topics — on the expected
per-topic values and, for comparison with trec_eval and ranx, on the values with unjudged documents counted as
not relevant (docs/expected.md, "Across topics").
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from bayeval.cli._inputs import add_depth_argument, add_format_argument, add_reading_arguments, positive_int
from bayeval.cli._output import write_frame
from bayeval.cli.evaluate import add_source_arguments, probabilities_for

__all__ = ["register"]

_TESTS = ("t", "randomization", "bootstrap", "wilcoxon")  # the tests on known per-topic values, in table order


def register(sub) -> None:
    p = sub.add_parser(
        "compare", help="is run a better than run b? P(Δ < 0) on these topics and the tests across topics",
        description="Compare two runs on one measure (default AP: MAP): the difference with its interval and "
                    "P(a - b < 0) on these topics with relevance uncertain; over the population of topics with "
                    "relevance uncertain too (combined); and the paired t, randomization, bootstrap and Wilcoxon "
                    "tests on the expected per-topic values and on the values with unjudged documents counted as "
                    "not relevant (as trec_eval, ranx and pytrec_eval compute them).")
    p.add_argument("qrels", metavar="QRELS", help="judgments (qrels), plain or .gz")
    p.add_argument("run_a", metavar="RUN_A", help="the first run (a TREC run file)")
    p.add_argument("run_b", metavar="RUN_B", help="the second run")
    add_depth_argument(p)
    p.add_argument("--measure", default="AP", help="per-topic measure (default AP: its mean is MAP)")
    p.add_argument("--resamples", type=positive_int, default=10_000,
                   help="sign flips of the randomization test and resamples of the bootstrap test (default 10000)")
    add_source_arguments(p)
    add_reading_arguments(p)
    add_format_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from scipy.special import ndtri

    from bayeval.data.rankdata import RankData
    from bayeval.errors import BayevalInputError
    from bayeval.expected import compare_systems, expected_measures
    from bayeval.io import read_qrels, read_runs
    from bayeval.measures import evaluate, parse_measures
    from bayeval.stats import paired_pvalues, uncertain_paired_t

    measures = parse_measures(args.measure)
    if len(measures) != 1:
        raise BayevalInputError(f"--measure: one measure, got {args.measure!r}")
    m = str(measures[0])
    qrels = read_qrels(args.qrels, strict=args.strict)
    runs = read_runs([args.run_a, args.run_b], run_names=args.run_names, strict=args.strict)
    if len(runs) != 2:
        raise BayevalInputError(f"RUN_A, RUN_B: expected two runs, read {len(runs)}")
    known_data = RankData.build(runs, qrels, depth=args.depth)
    data, probs, est, cfg, method, fit, source = probabilities_for(args, known_data)
    mc = {"draws": args.mc_draws, "seed": args.seed} if method == "mc" else {}
    if est is not None:
        from bayeval.relevance import bayesian_confidence

        cmp = bayesian_confidence(data, est, measure=m, pairs=[(0, 1)], draws=args.mc_draws, plugin_method=method,
                                  method=method, seed=args.seed).bayesian
    else:
        cmp = compare_systems(data, probs, default_p=args.default_p, pairs=[(0, 1)], measure=m, method=method, **mc)
    means = expected_measures(data, probs, default_p=args.default_p, measures=[m], method=method, progress=False,
                              **mc).all_expected[0]
    z = float(ndtri(0.5 + args.level / 2))
    e, sd = float(cmp.all_expected[0]), float(np.sqrt(max(cmp.all_variance[0], 0.0)))
    rows = [("these topics, relevance uncertain", "E", e, e - z * sd, e + z * sd, cmp.all_p_less[0], np.nan)]
    for test in ("combined", *_TESTS):
        r = cmp.topic_tests(test, level=args.level, resamples=args.resamples, seed=args.seed)
        rows.append((_NAMES[test], "E", e, r.lower[0], r.upper[0], r.p_less[0], r.p_value[0]))
    known = evaluate(known_data, [m]).values[0]  # trec_eval's values: unjudged documents not relevant
    diff = (known[0] - known[1])[None]
    t = uncertain_paired_t(diff, np.zeros_like(diff))
    lo, hi = t.interval(args.level)
    for test in _TESTS:
        p = paired_pvalues(known[:1], known[1:], test, resamples=args.resamples, rng=args.seed)[0]
        rows.append((_NAMES[test], "unjudged = 0", t.mean[0], *((lo[0], hi[0], t.p_less[0]) if test == "t" else
                                                                 (np.nan,) * 3), p))
    frame = pd.DataFrame(rows, columns=["test", "values", "delta", "lower", "upper", "p_less", "p_value"])
    a, b = data.systems
    mean = "MAP" if m == "AP" else f"mean {m}"
    title = (f"{a} - {b}, {len(data.topics)} topics; {source}: E[{mean}] {means[0]:.4f} vs {means[1]:.4f}; "
             f"{mean} (unjudged = 0) {known[0].mean():.4f} vs {known[1].mean():.4f}")
    pct = f"{100 * args.level:g}%"
    write_frame(frame, args.format, title=title, legend={
        "test": "what is uncertain: the relevance of unjudged documents (these topics), the sample of topics (the "
                "tests across topics), or both (combined: docs/expected.md, 'Across topics')",
        "values": "the per-topic values: E, expected with unjudged documents relevant at random; unjudged = 0, "
                  "counted as not relevant (trec_eval's)",
        "delta": f"{mean}_a - {mean}_b of those values",
        "lower": f"lower end of the {pct} interval of the difference (NA: the test gives none)",
        "upper": "upper end of that interval",
        "p_less": f"P({mean}_a - {mean}_b < 0), on these topics or over the population of topics (NA: the test "
                  "gives none)",
        "p_value": "two-sided p-value of no difference over the population of topics (NA: not a test)"})
    return 0


_NAMES = {"combined": "topics sampled and relevance uncertain (combined)", "t": "paired t-test",
          "randomization": "randomization test", "bootstrap": "bootstrap test", "wilcoxon": "Wilcoxon signed-rank test"}
