"""``bayeval report``: paper-ready tables and a figure with the uncertainty of incomplete judgments."""

from __future__ import annotations

import argparse
import os
import sys

from bayeval.cli._flags import add_labels, add_mc_draws, add_posterior_draws
from bayeval.cli._inputs import add_collection_arguments, level, positive_int, probability, qrels_and_runs
from bayeval.cli.estimate import add_model_depth_argument, add_unseen_argument
from bayeval.cli.judge import add_topup_argument, topup_from_args
from bayeval.errors import BayevalInputError
from bayeval.methods import ADJUSTMENTS, FIT_METHODS, MOMENT_METHODS, TOPIC_TESTS

__all__ = ["register"]


def register(sub) -> None:
    from bayeval.relevance.defaults import model_help

    p = sub.add_parser(
        "report", help="LaTeX/markdown tables and a figure: E[MAP] with intervals, judged@k, rank, confidences",
        description="Evaluate every run under uncertain relevance and write a report: per run E[MAP] (or "
                    "the mean of --measure) with its interval, judged@k and rank; the pairwise confidence "
                    "matrix P(row > column) marked at 0.95 and 0.99, and with * where a test across topics "
                    "(--test, adjusted by --adjust) says two runs differ over the population of topics; and a "
                    "figure. With --out DIR it writes "
                    "report.tex (booktabs), report.md, report.png and report.pdf into DIR; without, it prints "
                    "the markdown. p of unjudged documents comes from --model (fitted on the spot) or "
                    "--default-p.")
    add_collection_arguments(p)
    p.add_argument("--measure", default="AP", help="per-topic measure whose mean is reported (default AP: MAP)")
    p.add_argument("--level", type=level, default=0.95, help="interval level (default 0.95)")
    p.add_argument("--judged-k", type=positive_int, default=10, metavar="K",
                   help="k of the judged@k column (default 10)")
    p.add_argument("--default-p", type=probability, default=None,
                   help="probability of relevance of unjudged documents, instead of the default model")
    p.add_argument("--method", choices=MOMENT_METHODS, default=None,
                   help="moments: exact, delta, paper or mc (default: mc with a sampled --fit, else exact)")
    add_mc_draws(p, 2000)
    p.add_argument("--seed", type=int, default=0, help="seed of the fit and the Monte Carlo draws (default 0)")
    p.add_argument("--test", choices=(*TOPIC_TESTS, "none"), default="t",
                   help="the test across topics that marks pairs with *: t (default), wilcoxon, randomization, "
                        "bootstrap, combined (topics and relevance in one probability; docs/expected.md 'Across "
                        "topics'), or none")
    p.add_argument("--test-values", choices=("judged", "expected"), default="judged",
                   help="what the test compares per topic: judged (default): the measure with unjudged documents "
                        "not relevant, as trec_eval; expected: E[measure]")
    p.add_argument("--adjust", choices=ADJUSTMENTS, default="holm",
                   help="adjustment of its p-values over all pairs (default holm)")
    p.add_argument("--out", metavar="DIR", help="directory to write report.{tex,md,png,pdf} (default: print markdown)")
    g = p.add_argument_group("relevance model")
    g.add_argument("--model", metavar="MODEL",
                   help="estimate p with a relevance model: " + model_help() + "; fitted unless --default-p is given")
    add_unseen_argument(g)
    add_topup_argument(g)
    g.add_argument("--fit", choices=FIT_METHODS, default="laplace",
                   help="fit method of --model (default laplace: posterior draws of p at the cost of a MAP fit)")
    add_model_depth_argument(g)
    add_labels(g)
    add_posterior_draws(g, 1000)
    g.add_argument("--chains", type=positive_int, default=4, help="chains (default 4)")
    g.add_argument("--p-draws", type=positive_int, default=200, help="posterior draws of p to use (default 200)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bayeval.data.rankdata import RankData
    from bayeval.reporting import make_report

    qrels, runs = qrels_and_runs(args)
    data = RankData.build(runs, qrels, depth=args.depth)
    probs = None
    if args.model is not None and args.default_p is not None:
        raise BayevalInputError("--model and --default-p: give one source of probabilities")
    if args.model is None and args.default_p is None:
        from bayeval.relevance.defaults import DEFAULT_MODEL

        args.model = DEFAULT_MODEL
    if args.model is None and args.unseen:
        raise BayevalInputError("--unseen: needs a relevance model (not --default-p)")
    if args.model is None and args.topup:
        raise BayevalInputError("--topup: needs a relevance model (not --default-p)")
    if args.model is None and args.labels:
        raise BayevalInputError("--labels: needs a relevance model (not --default-p)")
    without = None
    if args.model is not None:
        from bayeval.cli.estimate import model_options, with_labels_if_given, with_unseen_if_asked
        from bayeval.relevance import estimate_probabilities, load_config

        cfg = load_config(args.model)
        if "texts" in cfg.accepts:
            raise BayevalInputError("--model similarity: needs document texts; use 'bayeval estimate' first")
        kw = model_options(args, cfg, args.fit)
        labels = kw.pop("labels", None)
        probs = estimate_probabilities(data, cfg, fit=args.fit, p_draws=args.p_draws if args.fit != "map" else None,
                                       seed=args.seed, draws=args.posterior_draws, chains=args.chains,
                                       topup=topup_from_args(args), **kw)
        data, probs = with_unseen_if_asked(args, cfg, data, probs)
        probs, without = with_labels_if_given(args, data, probs, labels)
    rep = make_report(data, probs, measure=args.measure, level=args.level, judged_k=args.judged_k,
                      method=args.method, default_p=0.5 if args.default_p is None else args.default_p,
                      mc_draws=args.mc_draws, seed=args.seed, test=None if args.test == "none" else args.test,
                      test_values=args.test_values, adjust=args.adjust, without_labels=without)
    decide = _what_would_decide(data, probs, args)
    if args.out:
        paths = rep.save(args.out)
        print(rep.summary())
        if decide is not None:
            decide.to_csv(os.path.join(args.out, "decide.csv"), index=False)
            paths["decide"] = os.path.join(args.out, "decide.csv")
        print("wrote " + ", ".join(str(v) for v in paths.values()), file=sys.stderr)
    else:
        sys.stdout.write(rep.to_markdown())
    if decide is not None and len(decide):
        print(f"\n## What would decide it\n\nPairs not decided at 0.95 that a top-up of one of their runs "
              f"('bayeval judge topup') can decide: the run, and the expected number of its judgments (the model's "
              f"preposterior, at most 10 a topic; docs/calibration.md).\n\n{decide.to_markdown(index=False)}")
    return 0


def _what_would_decide(data, probs, args):
    """The undecided pairs' top-up and expected judgments (None without a reuse prior)."""
    if getattr(probs, "held_out", None) is None:
        return None
    from bayeval.selection.to_decide import judgments_to_decide

    f = judgments_to_decide(data, probs, measure=args.measure, seed=args.seed).frame
    f = f[~f.decided & (f.topup_run != "")]
    return f[["run_a", "run_b", "p_less", "topup_run", "judgments"]].round({"p_less": 3, "judgments": 0})
