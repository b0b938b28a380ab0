"""``bayeval evaluate``: expected measures, variances and pairwise confidence.

Probabilities of relevance of unjudged documents come from ``--probabilities`` (an mtc-eval file),
``--default-p``, or a relevance model fitted on the spot (``--model rtc [--fit mcmc]``). With a model
and ``--pairs`` every pair gets two confidences side by side: the *plug-in* P(Δ < 0) at the point
probabilities (Bernoulli uncertainty only, computed by ``--method``) and the *Bayesian* one by Monte
Carlo over posterior draws of p (parameter + Bernoulli uncertainty;
:func:`bayeval.relevance.bayesian_confidence`). ``--method paper|delta|exact`` with a sampled fit computes
the moments given each posterior draw of p and combines them by the law of total variance (E = mean of
E_d, Var = mean of Var_d + variance of E_d), so that the closed forms are Bayesian too; ``--method mc``
samples.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

import numpy as np
import pandas as pd

from bayeval.cli._flags import add_mc_draws, add_posterior_draws
from bayeval.cli._inputs import (
    add_collection_arguments,
    add_format_argument,
    positive_int,
    probability,
    qrels_and_runs,
)
from bayeval.cli._output import write_frame
from bayeval.cli.estimate import add_model_depth_argument, add_stage_fit_argument, add_unseen_argument
from bayeval.cli.judge import DECIDE_LEGEND, add_topup_argument, decide_columns, describe_topup, topup_from_args
from bayeval.errors import BayevalInputError
from bayeval.methods import DEFAULT_MOMENT_METHOD, FIT_METHODS, MOMENT_METHODS

__all__ = ["register"]


def register(sub) -> None:
    from bayeval.relevance.defaults import model_help

    p = sub.add_parser(
        "evaluate", help="expected measures and P(difference < 0) under uncertain relevance",
        description="Expected value and variance of each measure for every run, treating each unjudged "
                    "document as relevant with probability p (from --probabilities, from a relevance model "
                    "fitted with --model, else --default-p), and with --pairs the confidence "
                    "P(measure_a - measure_b < 0) for every pair of runs. With --model and --pairs both the "
                    "plug-in confidence (at the point p) and the Bayesian one (over posterior draws of p, "
                    "by --method: a closed form per draw combined by the law of total variance, or Monte "
                    "Carlo; --fit laplace|mcmc|vi adds the parameter uncertainty) are reported. "
                    "With --pairs, csv/json output is one table: the per-run rows (column run set) "
                    "then the pair rows (run_a and run_b set).")
    add_collection_arguments(p)
    p.add_argument("--probabilities", metavar="FILE",
                   help="probabilities of relevance of unjudged documents, mtc-eval format 'topic Q0 docno prob'")
    p.add_argument("--default-p", type=probability, default=None,
                   help="probability for unjudged documents not in --probabilities (default 0.5, MTC's assumption); "
                        "without --probabilities it replaces the default model")
    p.add_argument("--method", choices=MOMENT_METHODS + FIT_METHODS, default=None,
                   help="paper: the papers' closed form; delta: 2nd-order delta method; exact: exact moments; "
                        "mc: Monte Carlo (default exact). With --model, map|laplace|mcmc|vi is short for --fit "
                        "(and the moments are then exact)")
    add_mc_draws(p, 2000, old="--draws")
    p.add_argument("--seed", type=int, default=0, help="Monte Carlo and fit seed (default 0)")
    p.add_argument("--measures", default="AP", help="comma-separated measures (default AP), e.g. AP,P@10,nDCG@10")
    p.add_argument("--pairs", action="store_true", help="confidence for every pair of runs")
    p.add_argument("--per-topic", action="store_true", help="also print every topic's rows")
    g = p.add_argument_group("relevance model (instead of --probabilities)")
    g.add_argument("--model", metavar="MODEL",
                   help="estimate p with a relevance model: " + model_help() + "; fitted unless --probabilities "
                        "or --default-p is given")
    add_unseen_argument(g)
    add_topup_argument(g)
    g.add_argument("--fit", choices=FIT_METHODS, default=None,
                   help="fit method of --model: map (fast path, default), laplace, mcmc (NUTS), vi (ADVI)")
    add_stage_fit_argument(g)
    add_model_depth_argument(g)
    add_posterior_draws(g, 1000, old="--fit-draws")
    g.add_argument("--tune", type=positive_int, default=1000, help="NUTS tuning steps per chain (default 1000)")
    g.add_argument("--chains", type=positive_int, default=4, help="chains (default 4)")
    g.add_argument("--p-draws", type=positive_int, default=200,
                   help="posterior draws of p used by the Bayesian confidence (default 200)")
    g.add_argument("--closed-form-draws", type=positive_int, default=25,
                   help="of those, how many (evenly spaced) --method paper|delta|exact combines by the law of total "
                        "variance (default 25; each costs one closed-form pass)")
    add_format_argument(p)
    p.set_defaults(func=run)


def _resolve_methods(args: argparse.Namespace) -> tuple[str, str | None]:
    """(moment method, fit method or None) from --method, --fit and --model."""
    method, fit = args.method, args.fit
    if args.model is None and not args.probabilities and args.default_p is None:
        from bayeval.relevance.defaults import DEFAULT_MODEL

        args.model = DEFAULT_MODEL
    if args.default_p is None:
        args.default_p = 0.5
    if method in FIT_METHODS:
        if args.model is None:
            raise BayevalInputError(f"--method {method}: a fit method needs --model (e.g. --model rtc; "
                                    "--default-p and --probabilities replace the model)")
        if fit is not None and fit != method:
            raise BayevalInputError(f"--method {method} and --fit {fit}: give the fit method once")
        fit, method = method, None
    if args.model is None:
        if fit is not None:
            raise BayevalInputError("--fit: needs --model (--default-p and --probabilities replace the model)")
        return method or DEFAULT_MOMENT_METHOD, None
    if args.probabilities:
        raise BayevalInputError("--model and --probabilities: give one source of probabilities")
    return method or DEFAULT_MOMENT_METHOD, fit or "map"


def _fit_model(args: argparse.Namespace, data, fit: str):
    """(config, estimate, data): the fitted model's estimate, with the unseen relevant documents' phantoms
    added to data and estimate where ``--unseen`` (default: the model's ``unseen_by_default``) says so."""
    from bayeval.cli.estimate import model_options, with_unseen_if_asked
    from bayeval.relevance import estimate_probabilities, load_config

    cfg = load_config(args.model)
    if "texts" in cfg.accepts:
        raise BayevalInputError("--model similarity: needs document texts; write its probabilities with "
                                "'bayeval estimate --model similarity --texts FILE --out probs.txt' and pass "
                                "--probabilities probs.txt")
    est = estimate_probabilities(data, cfg, fit=fit, p_draws=args.p_draws if fit != "map" else None,
                                 seed=args.seed, draws=args.posterior_draws, tune=args.tune, chains=args.chains,
                                 topup=topup_from_args(args), **model_options(args, cfg, fit))
    data, est = with_unseen_if_asked(args, cfg, data, est)
    for stage, f in est.fits.items():
        if f.method == "mcmc":
            print(f"bayeval: {cfg.name} {stage}: max r-hat {np.nanmax(f.rhat()):.4f}, min bulk ESS "
                  f"{np.nanmin(f.ess()):.0f}, divergences {f.divergences()}", file=sys.stderr)
    return cfg, est, data


def _write_extrapolation(data, probs, measure, default_p: float) -> None:
    """The two questions side by side (docs/calibration.md, "Two questions"), for the first measure."""
    from bayeval.expected.extrapolation import extrapolation

    try:
        ex = extrapolation(data, probs, measure=str(measure), default_p=default_p)
    except BayevalInputError:  # a measure without an exact expected value (the table above says which)
        return
    write_frame(ex.to_frame().reset_index(), "table",
                title=f"{measure}: E estimates it as if every document were judged; unjudged_zero counts unjudged "
                      "as not relevant (trec_eval); model_share / beyond_share: the share of E resting on the "
                      f"model's p / on documents no run with its top {ex.depth} judged retrieved")


def run(args: argparse.Namespace) -> int:
    from bayeval.data.rankdata import RankData
    from bayeval.expected import compare_systems, expected_measures
    from bayeval.io.probabilities import read_probabilities
    from bayeval.measures import parse_measures

    method, fit = _resolve_methods(args)
    if fit is None and args.unseen:
        raise BayevalInputError("--unseen: needs a relevance model (not --probabilities or --default-p)")
    if fit is None and args.topup:
        raise BayevalInputError("--topup: needs a relevance model (not --probabilities or --default-p)")
    measures = parse_measures(args.measures)
    if method != "mc" and any(m.name == "R-prec" for m in measures):
        raise BayevalInputError("--measures: R-prec has no closed form (its cutoff is the random R); "
                                "use --method mc")
    probs = read_probabilities(args.probabilities) if args.probabilities else None
    qrels, runs = qrels_and_runs(args)
    data = RankData.build(runs, qrels, depth=args.depth)
    mc = {"draws": args.mc_draws, "seed": args.seed} if method == "mc" else {}
    from bayeval.display import describe_fit, describe_moments, describe_source, display_name

    est, source = None, describe_moments(method)
    if fit is not None:
        cfg, est, data = _fit_model(args, data, fit)
        # every method uses the posterior draws of p when there are any (closed forms by the law of total
        # variance over --closed-form-draws of them): the estimate says which (RelevanceEstimate.arrays_for)
        probs = est = replace(est, closed_form_draws=args.closed_form_draws)
        topup_note = describe_topup(topup_from_args(args), est)
        source = describe_source(cfg.name, fit, method) + topup_note
    exp = expected_measures(data, probs, default_p=args.default_p, measures=measures, method=method, **mc)
    per_run = exp.to_frame(per_topic=args.per_topic)
    if not (args.pairs and args.format != "table"):
        write_frame(per_run, args.format, title=f"expected measures ({source}), {len(data.topics)} topics")
        if args.format == "table" and not args.per_topic:
            _write_extrapolation(data, est if est is not None else probs, measures[0], args.default_p)
    tables = []
    if args.pairs:
        for m in measures:
            if est is not None:
                from bayeval.relevance import bayesian_confidence

                bc = bayesian_confidence(data, est, measure=m, draws=args.mc_draws, plugin_method=method,
                                         method=method, seed=args.seed)
                frame = decide_columns(bc.to_frame(per_topic=args.per_topic), data, est, m, seed=args.seed)
                how = "Monte Carlo" if method == "mc" else f"{describe_moments(method)}, law of total variance"
                title = (f"P({m}_a - {m}_b < 0): plug-in ({describe_moments(method)}) and Bayesian ({how} over "
                         f"{'posterior draws of p' if est.has_draws else 'the point p'}), {display_name(cfg.name)} "
                         f"({describe_fit(fit)}){topup_note}")
            else:
                cmp = compare_systems(data, probs, default_p=args.default_p, measure=m, method=method, **mc)
                frame = cmp.to_frame(per_topic=args.per_topic)
                title = f"P({m}_a - {m}_b < 0), {describe_moments(method)}"
            if args.format == "table":
                write_frame(frame, args.format, title=title, legend=DECIDE_LEGEND)
            else:
                tables.append(frame)
    if tables:  # csv/json: one table, the per-run rows (run set) first, then the pairs (run_a, run_b set)
        both = pd.concat([per_run, *tables], ignore_index=True)
        keys = ["run", "run_a", "run_b", "topic", "measure"]
        write_frame(both[keys + [c for c in both.columns if c not in keys]], args.format)
    return 0
