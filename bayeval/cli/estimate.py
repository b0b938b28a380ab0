"""``bayeval estimate``: probabilities of relevance of every unjudged pooled document."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from bayeval.cli._flags import add_labels, add_posterior_draws, labels_from_args
from bayeval.cli._inputs import add_collection_arguments, add_format_argument, positive_int, qrels_and_runs
from bayeval.errors import BayevalInputError
from bayeval.methods import FIT_METHODS

__all__ = ["MODEL_DEPTH", "add_model_depth_argument", "add_stage_fit_argument", "add_unseen_argument", "model_depth",
           "model_options", "register", "run", "stage_methods", "with_labels_if_given"]

#: Default rank positions of the rtc rank-coefficient model: the depth TREC pools were judged to.
MODEL_DEPTH = 100


def register(sub) -> None:
    from bayeval.relevance.defaults import DEFAULT_MODEL, model_help

    p = sub.add_parser(
        "estimate", help="estimate probabilities of relevance of unjudged documents (RTC, similarity, baselines)",
        description="Fit a relevance model to the runs and the (incomplete) judgments and write, for every "
                    "unjudged document some run retrieves within --depth, its probability of relevance in "
                    "mtc-eval's format 'topic Q0 docno prob'. --model takes " + model_help() + ".")
    add_collection_arguments(p)
    add_model_depth_argument(p)
    p.add_argument("--model", default=DEFAULT_MODEL, metavar="MODEL", help=model_help())
    p.add_argument("--fit", choices=FIT_METHODS, default="map",
                   help="map: fast path (no PyMC); laplace; mcmc: NUTS; vi: ADVI (default map)")
    add_stage_fit_argument(p)
    p.add_argument("--out", metavar="FILE", help="probabilities file to write (default: standard output)")
    p.add_argument("--draws-out", metavar="FILE",
                   help="write posterior draws of p (netCDF InferenceData; needs --fit laplace|mcmc|vi)")
    p.add_argument("--save-fit", metavar="DIR",
                   help="write each fitted stage's complete InferenceData (posterior, log likelihood, predictive "
                        "and prior groups, the model's record) as DIR/<stage>.nc; FitResult.from_idata rebuilds it. "
                        "Only then is the InferenceData built (docs/relevance.md)")
    p.add_argument("--p-draws", type=positive_int, default=200, help="posterior draws of p to keep (default 200)")
    add_posterior_draws(p, 1000, old="--draws")
    p.add_argument("--tune", type=positive_int, default=1000, help="NUTS tuning steps per chain (default 1000)")
    p.add_argument("--chains", type=positive_int, default=4, help="chains (default 4)")
    p.add_argument("--cores", type=positive_int, default=1, help="processes for NUTS chains (default 1)")
    p.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    p.add_argument("--extra", action="append", default=[], metavar="NAME=FILE",
                   help="rtc: an extra expert column from a probabilities file (LLM/crowd labels, click rates); "
                        "repeatable")
    add_labels(p)
    p.add_argument("--texts", metavar="FILE",
                   help="similarity: document texts, 'docno<TAB>text' lines or JSON lines {\"docno\", \"text\"}")
    p.add_argument("--embeddings", metavar="FILE",
                   help="similarity: .npz with arrays 'docnos' (N,) and 'vectors' (N, d)")
    p.add_argument("--summary", action="store_true", help="print the posterior summary (az.summary) of each stage")
    add_format_argument(p)
    p.set_defaults(func=run)


def add_model_depth_argument(parser) -> None:
    """``--model-depth``: rank positions of the rank-coefficient model (``--depth`` only cuts the runs)."""
    parser.add_argument("--model-depth", type=positive_int, default=None, metavar="D",
                        help="rank positions of the rank-coefficient model (default: --depth, at most 100); "
                             "documents below it count as unretrieved for the model")


def model_depth(args) -> int:
    """The rank-model depth of ``--model-depth`` / ``--depth``: ``--model-depth``, else min(--depth, 100)."""
    return args.model_depth or min(args.depth or MODEL_DEPTH, MODEL_DEPTH)


def add_stage_fit_argument(parser) -> None:
    parser.add_argument("--stage-fit", action="append", default=[], metavar="STAGE=METHOD",
                        help="rtc: fit method of one stage (rank, calibration, aggregation), overriding --fit; "
                             "repeatable. With --fit laplace|mcmc|vi the rank coefficients stay at their MAP "
                             "unless given here (NUTS on 50 topics x 101 positions takes very long, and their "
                             "posterior reflects the pseudo-comparisons more than the judgments)")


def stage_methods(items, fit: str) -> dict | None:
    """``--stage-fit`` values as ``RTCEstimator.fit``'s ``stage_methods`` (rank at MAP by default)."""
    from bayeval.relevance.rtc import STAGES

    out = {} if fit == "map" else {"rank": "map"}
    for it in items:
        stage, sep, method = it.partition("=")
        if not sep or stage not in STAGES or method not in FIT_METHODS:
            raise BayevalInputError(f"--stage-fit: expected STAGE=METHOD with STAGE in {', '.join(STAGES)} and "
                                    f"METHOD in {', '.join(FIT_METHODS)}, got {it!r}")
        out[stage] = method
    return out or None


def model_options(args, cfg, fit: str) -> dict:
    """The options of :func:`~bayeval.relevance.estimate_probabilities` that ``--model-depth``,
    ``--stage-fit``, ``--extra`` and ``--labels`` give the model, as far as its configuration ``accepts`` them; a
    flag the model does not take is an error. (``labels`` are read here; the commands that add the unseen relevant
    documents take them out and apply them after, :func:`with_labels_if_given`.)"""
    from bayeval.relevance.config import kinds_accepting

    flags = {"stage_methods": ("--stage-fit", getattr(args, "stage_fit", [])),
             "extra": ("--extra", getattr(args, "extra", []))}
    for option, (flag, given) in flags.items():
        if given and option not in cfg.accepts:
            raise BayevalInputError(f"{flag}: only for --model {' / '.join(kinds_accepting(option))}")
    out = {}
    if "depth" in cfg.accepts:
        out["depth"] = model_depth(args)
    if "stage_methods" in cfg.accepts:
        out["stage_methods"] = stage_methods(flags["stage_methods"][1], fit)
    if flags["extra"][1]:
        out["extra"] = _extra(flags["extra"][1])
    labels = labels_from_args(args)
    if labels:
        out["labels"] = labels
    return out


def with_labels_if_given(args, data, est, labels):
    """``(est, without)``: ``est`` with the ``--labels`` assessors as experts (:func:`bayeval.relevance.with_assessors`,
    ``--p-draws`` draws of p carrying their maps' uncertainty even after a MAP fit) and the estimate without them
    (``None`` when no labels were given)."""
    if not labels:
        return est, None
    from bayeval.relevance import with_assessors

    return with_assessors(est, data, labels, p_draws=args.p_draws, seed=args.seed), est


def add_unseen_argument(parser) -> None:
    """``--unseen`` / ``--no-unseen`` (default: the model's ``unseen_by_default``; :func:`with_unseen_if_asked`)."""
    parser.add_argument("--unseen", action=argparse.BooleanOptionalAction, default=None,
                        help="add the estimated relevant documents no run retrieves to R_t (default: yes for a "
                             "hierarchical model, the studies' choice; no otherwise)")


def with_unseen_if_asked(args, cfg, data, est):
    """``(data, est)`` with the unseen relevant documents' phantoms added where ``--unseen`` says so (by
    default where the model's configuration does: ``unseen_by_default``, the calibration studies' choice)."""
    if not (args.unseen or (args.unseen is None and cfg.unseen_by_default)):
        return data, est
    from bayeval.relevance.unseen import with_unseen

    return with_unseen(data, est, seed=args.seed)


#: Why a column of a stage's posterior summary can be missing (one note line instead of rows of NA).
_WHY_MISSING = {"sd": "no curvature at the mode: a flat direction of the posterior",
                **dict.fromkeys(("mcse_mean", "mcse_sd", "ess_bulk", "ess_tail", "r_hat"),
                                "MCSE, ESS and r-hat diagnose Markov chains (--fit mcmc) only")}


def _extra(items) -> dict:
    out = {}
    for it in items:
        name, sep, path = it.partition("=")
        if not sep or not name or not path:
            raise BayevalInputError(f"--extra: expected NAME=FILE, got {it!r}")
        out[name] = path
    return out


def _save_fits(fits, where: Path) -> None:
    """Each stage's complete InferenceData as ``where/<stage>.nc``; an existing file is never overwritten."""
    if not fits:
        raise BayevalInputError("--save-fit: this model fits nothing (a point baseline): there is no fit to save")
    if where.exists() and not where.is_dir():
        raise BayevalInputError(f"--save-fit: {where} exists and is not a directory")
    targets = {stage: where / f"{stage}.nc" for stage in fits}
    taken = [str(t) for t in targets.values() if t.exists()]
    if taken:
        raise BayevalInputError(f"--save-fit: {taken[0]} exists (remove it or choose another directory)")
    where.mkdir(parents=True, exist_ok=True)
    for stage, fit in fits.items():
        fit.idata.to_netcdf(targets[stage], engine="h5netcdf")


def run(args: argparse.Namespace) -> int:
    from bayeval.cli._output import write_frame
    from bayeval.data.rankdata import RankData
    from bayeval.display import describe_fit, display_name
    from bayeval.relevance import estimate_probabilities, load_config

    cfg = load_config(args.model)
    if args.draws_out and not args.labels and (args.fit == "map" or not cfg.gives_draws):
        raise BayevalInputError("--draws-out: needs a sampled fit (--fit laplace|mcmc|vi) of rtc or similarity, or "
                                "--labels (whose map's draws p then carries)")
    if "texts" not in cfg.accepts and (args.texts or args.embeddings):
        raise BayevalInputError("--texts/--embeddings: only for --model similarity")
    kw = model_options(args, cfg, args.fit)
    if "texts" in cfg.accepts:
        if bool(args.texts) == bool(args.embeddings):
            raise BayevalInputError("--model similarity: give exactly one of --texts, --embeddings")
        from bayeval.io.texts import read_embeddings, read_texts

        kw["texts" if args.texts else "embeddings"] = (read_texts(args.texts) if args.texts
                                                       else read_embeddings(args.embeddings))
    qrels, runs = qrels_and_runs(args)
    data = RankData.build(runs, qrels, depth=args.depth)
    labels = kw.pop("labels", None)
    est = estimate_probabilities(data, cfg, fit=args.fit, p_draws=args.p_draws if args.fit != "map" else None,
                                 seed=args.seed, draws=args.posterior_draws,
                                 tune=args.tune, chains=args.chains, cores=args.cores, **kw)
    est, _ = with_labels_if_given(args, data, est, labels)
    # only documents some run retrieves within depth (the pool), never judged-only ones
    frame = est.to_frame(include_judged=True)
    keep = np.concatenate([(tr.ranks > 0).any(axis=1) & ~j for tr, j in zip(data, est.judged, strict=True)])
    frame = frame[keep]
    if args.out:
        from bayeval.data.probabilities import RelevanceProbabilities
        from bayeval.io.probabilities import write_probabilities
        write_probabilities(RelevanceProbabilities.from_frame(frame[["topic", "docno", "prob"]]), args.out)
    else:
        for t, d, pr in zip(frame["topic"], frame["docno"], frame["prob"], strict=True):
            sys.stdout.write(f"{t} Q0 {d} {pr:.6g}\n")
    if args.draws_out:
        est.draws_idata().to_netcdf(args.draws_out, engine="h5netcdf")
    if args.save_fit:
        _save_fits(est.fits, Path(args.save_fit))
    out = sys.stderr if not args.out else sys.stdout
    summ = est.summary()
    write_frame(summ, args.format if args.out else "table", out,
                title=f"{display_name(cfg.name)} ({describe_fit(args.fit)}): {int(keep.sum())} unjudged pooled "
                      "documents")
    for stage, fit in est.fits.items():
        if fit.method == "mcmc":
            print(f"{stage}: max r-hat {np.nanmax(fit.rhat()):.4f}, min bulk ESS {np.nanmin(fit.ess()):.0f}, "
                  f"divergences {fit.divergences()}", file=out)
        if args.summary:
            write_frame(fit.summary().reset_index(names="param"), args.format if args.out else "table", out,
                        title=f"{stage} ({fit.method})", missing=_WHY_MISSING)
    return 0
