"""``bayeval evaluate``: expected measures with intervals, pairwise confidence and tests across topics.

Probabilities of relevance of unjudged documents come from ``--probabilities`` (an mtc-eval file),
``--default-p``, or a relevance model fitted on the spot (``--model rtc [--fit laplace]``). ``--method`` is how
the moments are computed (exact, delta, paper, mc); ``--fit`` how the model is fitted. With ``--pairs`` every
pair gets P(Δ < 0) on these topics (relevance uncertain; with a sampled fit over the posterior draws of p,
:func:`bayeval.relevance.bayesian_confidence`, the plug-in value at the point p beside it as
``p_less_plugin``), and a test across topics (``--test``, default ``combined``: the population of topics and
relevance in one probability, ``p_less_topics``; :func:`bayeval.expected.topic_tests`) adjusted over the pairs
(``--adjust``, default Holm). A closed-form ``--method`` with a sampled fit computes the moments given each
posterior draw of p and combines them by the law of total variance; ``mc`` samples.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

import numpy as np
import pandas as pd

from bayeval.cli._flags import add_labels, add_mc_draws, add_posterior_draws
from bayeval.cli._inputs import (
    add_collection_arguments,
    add_format_argument,
    level,
    positive_int,
    probability,
    qrels_and_runs,
)
from bayeval.cli._output import write_frame
from bayeval.cli.estimate import add_model_depth_argument, add_stage_fit_argument, add_unseen_argument
from bayeval.cli.judge import DECIDE_LEGEND, add_topup_argument, decide_columns, describe_topup, topup_from_args
from bayeval.display import describe_fit, describe_moments, display_name
from bayeval.errors import BayevalInputError
from bayeval.methods import ADJUSTMENTS, DEFAULT_MOMENT_METHOD, FIT_METHODS, MOMENT_METHODS, TOPIC_TESTS

__all__ = ["register"]


def register(sub) -> None:
    p = sub.add_parser(
        "evaluate", help="expected measures and P(difference < 0) under uncertain relevance",
        description="Expected value of each measure for every run with its interval, treating each unjudged "
                    "document as relevant with probability p (from --probabilities, from a relevance model "
                    "fitted with --model, else --default-p), and with --pairs for every pair of runs "
                    "P(measure_a - measure_b < 0) on these topics and a test across topics (--test; the default "
                    "'combined' counts the sampling of topics and the uncertainty of relevance in one "
                    "probability), adjusted over the pairs (--adjust). --fit laplace|mcmc|vi adds the "
                    "model's parameter uncertainty. With --pairs, csv/json output is one table: the per-run "
                    "rows (column run set) then the pair rows (run_a and run_b set).")
    add_collection_arguments(p)
    p.add_argument("--measures", default="AP", help="comma-separated measures (default AP), e.g. AP,P@10,nDCG@10")
    p.add_argument("--pairs", action="store_true",
                   help="every pair of runs: P(a - b < 0) on these topics and a test across topics")
    add_test_arguments(p, adjust=True)
    p.add_argument("--per-topic", action="store_true", help="also print every topic's rows")
    add_source_arguments(p)
    add_format_argument(p)
    p.set_defaults(func=run)


def add_test_arguments(p, *, adjust: bool) -> None:
    """``--test``, ``--test-values`` (and ``--adjust`` over many pairs): the test across topics
    (:func:`bayeval.expected.topic_tests`)."""
    p.add_argument("--test", choices=TOPIC_TESTS, default="t",
                   help="the test across topics: t (default), wilcoxon, randomization, bootstrap, or combined: the "
                        "paired t-test on the expected per-topic differences plus the relevance error every topic "
                        "shares (docs/expected.md, 'Across topics')")
    p.add_argument("--test-values", choices=("judged", "expected"), default="judged",
                   help="what the test compares per topic: judged (default): the measure with unjudged documents "
                        "not relevant, as trec_eval; expected: E[measure]. On shallow judgments both reject too "
                        "many true nulls, expected more (docs/expected.md, 'Across topics')")
    if adjust:
        p.add_argument("--adjust", choices=ADJUSTMENTS, default="holm",
                       help="adjustment of the p-values over the pairs: none, bonferroni, holm (default), bh "
                            "(Benjamini-Hochberg)")


def add_source_arguments(p) -> None:
    """Where p of unjudged documents comes from and how the moments are computed: ``--probabilities``,
    ``--default-p``, ``--method``, ``--level``, ``--mc-draws``, ``--seed`` and the relevance model's group."""
    from bayeval.relevance.defaults import model_help

    p.add_argument("--probabilities", metavar="FILE",
                   help="probabilities of relevance of unjudged documents, mtc-eval format 'topic Q0 docno prob'")
    p.add_argument("--default-p", type=probability, default=None,
                   help="probability for unjudged documents not in --probabilities (default 0.5, MTC's assumption); "
                        "without --probabilities it replaces the default model")
    p.add_argument("--method", choices=MOMENT_METHODS + FIT_METHODS, default=None,
                   metavar="{" + ",".join(MOMENT_METHODS) + "}",
                   help="how the moments are computed: paper: the papers' closed form; delta: 2nd-order delta "
                        "method; exact: exact moments; mc: Monte Carlo (default exact). A fit method here "
                        "(map|laplace|mcmc|vi) is deprecated: give it as --fit")
    p.add_argument("--level", type=level, default=0.95, help="level of the intervals (default 0.95)")
    add_mc_draws(p, 2000, old="--draws")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the Monte Carlo draws, the fit and the resampling tests (default 0)")
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
    add_labels(g)
    add_posterior_draws(g, 1000, old="--fit-draws")
    g.add_argument("--tune", type=positive_int, default=1000, help="NUTS tuning steps per chain (default 1000)")
    g.add_argument("--chains", type=positive_int, default=4, help="chains (default 4)")
    g.add_argument("--p-draws", type=positive_int, default=200,
                   help="posterior draws of p used by the Bayesian confidence (default 200)")
    g.add_argument("--closed-form-draws", type=positive_int, default=25,
                   help="of those, how many (evenly spaced) --method paper|delta|exact combines by the law of total "
                        "variance (default 25; each costs one closed-form pass)")


def _resolve_methods(args: argparse.Namespace) -> tuple[str, str | None]:
    """(moment method, fit method or None) from --method, --fit and --model."""
    method, fit = args.method, args.fit
    if args.model is None and not args.probabilities and args.default_p is None:
        from bayeval.relevance.defaults import DEFAULT_MODEL

        args.model = DEFAULT_MODEL
    if args.default_p is None:
        args.default_p = 0.5
    if method in FIT_METHODS:
        print(f"bayeval: warning: --method {method} is deprecated: the fit method is --fit {method} (--method is "
              f"how the moments are computed: {', '.join(MOMENT_METHODS)})", file=sys.stderr)
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


def _fit_model(args: argparse.Namespace, data, fit: str, topup=None):
    """(config, estimate, data): the fitted model's estimate, with the unseen relevant documents' phantoms
    added to data and estimate where ``--unseen`` (default: the model's ``unseen_by_default``) says so, then the
    ``--labels`` assessors as experts (the estimate without them kept as ``args.without_labels``)."""
    from bayeval.cli.estimate import model_options, with_labels_if_given, with_unseen_if_asked
    from bayeval.relevance import estimate_probabilities, load_config

    cfg = load_config(args.model)
    if "texts" in cfg.accepts:
        raise BayevalInputError("--model similarity: needs document texts; write its probabilities with "
                                "'bayeval estimate --model similarity --texts FILE --out probs.txt' and pass "
                                "--probabilities probs.txt")
    kw = model_options(args, cfg, fit)
    labels = kw.pop("labels", None)
    est = estimate_probabilities(data, cfg, fit=fit, p_draws=args.p_draws if fit != "map" else None,
                                 seed=args.seed, draws=args.posterior_draws, tune=args.tune, chains=args.chains,
                                 topup=topup, **kw)
    data, est = with_unseen_if_asked(args, cfg, data, est)
    est, args.without_labels = with_labels_if_given(args, data, est, labels)
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
                title=f"{measure}: E estimates it as if every document were judged; trec_eval counts unjudged "
                      "documents as not relevant",
                legend={"beyond_share": "share of E resting on documents that no run with its top "
                                        f"{ex.depth} judged retrieved",
                        "depth_share": "share of E resting on documents beyond the judged depth (p "
                                       "extrapolated)",
                        "extrapolated": "E rests mostly (half or more) on documents beyond the judged runs "
                                        "or the judged depth"})


def _from_labels(data, est, without, per_run: pd.DataFrame, measures) -> np.ndarray:
    """Per row of ``per_run`` (its ``all`` rows): E[measure] minus E[measure] without the labels
    (:func:`bayeval.expected.extrapolation.expected_shift`); NaN on per-topic rows and for a measure without an
    exact expected value."""
    from bayeval.expected.extrapolation import expected_shift

    out = np.full(len(per_run), np.nan)
    over = (per_run["topic"] == "all").to_numpy() if "topic" in per_run.columns else np.ones(len(per_run), bool)
    for m in measures:
        try:
            shift = dict(zip(data.systems, expected_shift(data, est, without, measure=str(m)), strict=True))
        except BayevalInputError:
            continue
        rows = over & (per_run["measure"] == str(m)).to_numpy()
        out[rows] = per_run.loc[rows, "run"].map(shift).to_numpy(dtype=float)
    return out


def _with_interval(frame: pd.DataFrame, mean: str, var: str, lower: str, upper: str, z: float, bounds) -> None:
    """Add the normal interval E ± z sd of column ``mean`` (variance ``var``), clipped to ``bounds``."""
    sd = np.sqrt(np.maximum(frame[var].to_numpy(dtype=float), 0.0))
    e = frame[mean].to_numpy(dtype=float)
    frame[lower], frame[upper] = np.clip(e - z * sd, *bounds), np.clip(e + z * sd, *bounds)


def _pair_frame(cmp, plugin, args, known=None):
    """The pair rows: E[Δ] with its interval on these topics, P(Δ < 0), the test across topics on the ``all``
    rows (per-topic rows have none), and P(Δ < 0) at the point p where ``plugin`` is another comparison."""
    from scipy.special import ndtri

    frame = cmp.to_frame(per_topic=args.per_topic)
    _with_interval(frame, "delta_expected", "delta_variance", "delta_lower", "delta_upper",
                   float(ndtri(0.5 + args.level / 2)), (-1.0, 1.0))
    tt = cmp.topic_tests(args.test, values=known if args.test_values == "judged" else None, adjust=args.adjust,
                         values_name="the values with unjudged documents not relevant (trec_eval's)",
                         level=args.level, seed=args.seed)
    over = frame["topic"] == "all"
    frame["p_less_topics"], frame["p_value"] = np.nan, np.nan
    frame.loc[over, "p_less_topics"] = cmp.topic_tests("combined").p_less
    frame.loc[over, "p_value"] = tt.p_adjusted
    if plugin is not None:
        frame["p_less_plugin"] = plugin.to_frame(per_topic=args.per_topic)["p_less"].to_numpy()
    order = ["run_a", "run_b", "topic", "measure", "delta_expected", "delta_variance", "delta_lower", "delta_upper",
             "p_less", "p_less_plugin", "p_less_topics", "p_value"]
    return frame[[c for c in order if c in frame.columns]], tt


def _pair_legend(measure, tt_describe: str, level_pct: str, plugin: bool) -> dict:
    m = str(measure)
    out = {"delta_expected": f"E[{m}_a - {m}_b], these topics",
           "delta_variance": f"Var[{m}_a - {m}_b] over relevance, these topics",
           "delta_lower": f"lower end of the {level_pct} interval of {m}_a - {m}_b, these topics (relevance "
                          "uncertain)",
           "delta_upper": "upper end of that interval",
           "p_less": f"P({m}_a - {m}_b < 0) on these topics (relevance uncertain"
                     f"{', over the posterior' if plugin else ''}): confidence that run b is better",
           "p_less_topics": f"P(mean {m}_a - {m}_b over the population of topics < 0): topics sampled and "
                            "relevance uncertain (the combined test; too sure on shallow judgments, docs/expected.md "
                            "'Across topics')",
           "p_value": f"{tt_describe} (--test, --adjust)"}
    if plugin:
        out["p_less_plugin"] = "the same at the point p (no parameter uncertainty)"
    return out


def probabilities_for(args: argparse.Namespace, data):
    """``(data, probs, est, method, fit, source)`` from the source arguments (:func:`add_source_arguments`): ``probs``
    what the expected measures take, ``est`` the fitted model's estimate (or None), ``source`` in words."""
    from bayeval.display import describe_source
    from bayeval.io.probabilities import read_probabilities

    method, fit = _resolve_methods(args)
    if fit is None and args.unseen:
        raise BayevalInputError("--unseen: needs a relevance model (not --probabilities or --default-p)")
    if fit is None and getattr(args, "topup", None):
        raise BayevalInputError("--topup: needs a relevance model (not --probabilities or --default-p)")
    if fit is None and getattr(args, "labels", None):
        raise BayevalInputError("--labels: needs a relevance model (not --probabilities or --default-p)")
    probs = read_probabilities(args.probabilities) if args.probabilities else None
    est, cfg, source = None, None, describe_moments(method)
    if fit is not None:
        topup = topup_from_args(args)  # read once: the fit learns from it, the caption names it
        cfg, est, data = _fit_model(args, data, fit, topup)
        # every method uses the posterior draws of p when there are any (closed forms by the law of total
        # variance over --closed-form-draws of them): the estimate says which (RelevanceEstimate.arrays_for)
        probs = est = replace(est, closed_form_draws=args.closed_form_draws)
        source = describe_source(cfg.name, fit, method) + describe_topup(topup, est)
        if getattr(args, "without_labels", None) is not None:
            source += "; with the labels of " + ", ".join(est.model.split("+labels:")[1:])
    elif probs is None:
        source = describe_source(None, None, method, default_p=args.default_p)
    return data, probs, est, cfg, method, fit, source


def run(args: argparse.Namespace) -> int:
    from scipy.special import ndtri

    from bayeval.data.rankdata import RankData
    from bayeval.expected import compare_systems, expected_measures
    from bayeval.measures import evaluate, parse_measures

    measures = parse_measures(args.measures)
    if args.method != "mc" and any(m.name == "R-prec" for m in measures):
        raise BayevalInputError("--measures: R-prec has no closed form (its cutoff is the random R); "
                                "use --method mc")
    qrels, runs = qrels_and_runs(args)
    known_data = RankData.build(runs, qrels, depth=args.depth)
    data, probs, est, cfg, method, fit, source = probabilities_for(args, known_data)
    mc = {"draws": args.mc_draws, "seed": args.seed} if method == "mc" else {}
    topup_note = describe_topup(topup_from_args(args), est) if est is not None else ""
    exp = expected_measures(data, probs, default_p=args.default_p, measures=measures, method=method, **mc)
    pct = f"{100 * args.level:g}%"
    per_run = exp.to_frame(per_topic=args.per_topic)
    _with_interval(per_run, "expected", "variance", "lower", "upper", float(ndtri(0.5 + args.level / 2)), (0.0, 1.0))
    table = args.format == "table"
    run_legend = {"lower": f"lower end of the {pct} interval of the measure, E ± {ndtri(0.5 + args.level / 2):.2f} "
                           "sd over relevance (topics fixed)",
                  "upper": "upper end of that interval"}
    if getattr(args, "without_labels", None) is not None:
        per_run["from_labels"] = _from_labels(data, est, args.without_labels, per_run, measures)
        run_legend["from_labels"] = ("E minus E with the automatic assessors' labels removed (at the point p, over "
                                     "the topics): the part of E resting on the labels")
    if not (args.pairs and not table):
        write_frame(per_run.drop(columns="variance") if table else per_run, args.format, legend=run_legend,
                    title=f"expected measures ({source}), {len(data.topics)} topics")
        if table and not args.per_topic:
            _write_extrapolation(data, est if est is not None else probs, measures[0], args.default_p)
    tables = []
    if args.pairs:
        for m in measures:
            plugin = None
            if est is not None:
                from bayeval.relevance import bayesian_confidence

                bc = bayesian_confidence(data, est, measure=m, draws=args.mc_draws, plugin_method=method,
                                         method=method, seed=args.seed)
                cmp, plugin = bc.bayesian, (bc.plugin if est.has_draws else None)
                how = "Monte Carlo" if method == "mc" else f"{describe_moments(method)}, law of total variance"
                title = (f"{m}_a - {m}_b: P(< 0) on these topics by {how} over "
                         f"{'posterior draws of p' if est.has_draws else 'the point p'}, {display_name(cfg.name)} "
                         f"({describe_fit(fit)}){topup_note}; tests across topics")
            else:
                cmp = compare_systems(data, probs, default_p=args.default_p, measure=m, method=method, **mc)
                title = f"{m}_a - {m}_b: P(< 0) on these topics by {describe_moments(method)}; tests across topics"
            known = evaluate(known_data, [m]).values[0] if args.test_values == "judged" else None
            frame, tt = _pair_frame(cmp, plugin, args, known)
            if est is not None:  # what would decide each open pair (a model with the reuse prior)
                frame = decide_columns(frame, data, est, m, seed=args.seed)
            if table:
                write_frame(frame.drop(columns="delta_variance"), "table", title=title,
                            legend={**_pair_legend(m, tt.describe(), pct, plugin is not None), **DECIDE_LEGEND})
            else:
                tables.append(frame)
    if tables:  # csv/json: one table, the per-run rows (run set) first, then the pairs (run_a, run_b set)
        both = pd.concat([per_run, *tables], ignore_index=True)
        keys = ["run", "run_a", "run_b", "topic", "measure"]
        write_frame(both[keys + [c for c in both.columns if c not in keys]], args.format)
    return 0
