"""``bayeval bias``: how much does a pool's bias move runs that did not contribute to it (Büttcher et al. 2007)?

Two studies, each a sub-command:

- ``bayeval bias leave-one-group-out QRELS RUN... --groups runs.tsv [--annotated FILE]``
- ``bayeval bias manual-only QRELS RUN... --groups runs.tsv [--annotated FILE]``

Without ``--annotated`` the contributors of every judged document are computed from the pooled runs (runs
fully judged to ``--pool-depth``). ``--predict NAME`` (repeatable) adds repairs: ``rtc``, ``smoothed``,
``similarity`` (a bayeval relevance model: completed qrels at the expected count and expected measures),
``kld``, ``svm`` (the paper's text classifiers: completed qrels) — the last three need ``--texts``.
"""

from __future__ import annotations

import argparse
import sys

from bayeval.cli._flags import add_progress
from bayeval.cli._inputs import add_collection_arguments, add_format_argument, positive_int, qrels_and_runs
from bayeval.cli._output import write_frame
from bayeval.errors import BayevalInputError
from bayeval.methods import CLOSED_FORM_METHODS

__all__ = ["register"]

MODEL_PREDICTORS = ("rtc", "smoothed", "uniform", "similarity")
TEXT_PREDICTORS = ("kld", "svm")
PREDICTORS = MODEL_PREDICTORS + TEXT_PREDICTORS
EXPECTED_METHODS = CLOSED_FORM_METHODS


def register(sub) -> None:
    p = sub.add_parser("bias", help="biased-pool studies: leave-one-group-out, manual-only (and repairs)",
                       description="Büttcher et al. (2007) biased-pool experiments: score runs on qrels that lack "
                                   "what their group (or the manual runs) alone contributed, and report rank "
                                   "changes, RMS error, significant changes and Kendall's tau per measure.")
    studies = p.add_subparsers(dest="study", metavar="STUDY", parser_class=type(p))
    for name, help_ in (("leave-one-group-out", "remove each group's unique documents, score that group's runs"),
                        ("manual-only", "remove documents only manual runs contributed, re-score all runs")):
        s = studies.add_parser(name, help=help_, description=help_)
        add_collection_arguments(s)
        s.add_argument("--groups", required=True, metavar="FILE",
                       help="table with columns run, group, type (automatic/manual), e.g. TREC-8 runs.tsv")
        s.add_argument("--annotated", metavar="FILE",
                       help="annotated qrels 'topic 0 docno grade n group...' (default: contributors computed "
                            "from the pooled runs' top --pool-depth)")
        s.add_argument("--pool-depth", type=positive_int, default=100, help="pool depth (default 100, TREC-8)")
        s.add_argument("--measures", default=None,
                       help="comma-separated measures (default RR,P@10,P@20,nDCG@20,AP,bpref,P@20(j),RankEff)")
        s.add_argument("--study-runs", metavar="RUNS", default=None,
                       help="comma-separated runs to study (default: runs fully judged to --pool-depth)")
        s.add_argument("--predict", action="append", choices=PREDICTORS, default=[], metavar="NAME",
                       help=f"repair with a predictor (repeatable): {', '.join(PREDICTORS)}")
        s.add_argument("--texts", metavar="FILE", help="document texts 'docno<TAB>text' for kld, svm, similarity")
        s.add_argument("--expected-method", choices=EXPECTED_METHODS, default="exact",
                       help="moments of AP under uncertain relevance (default exact)")
        s.add_argument("--seed", type=int, default=0, help="seed of the model fits and classifiers (default 0)")
        s.add_argument("--per-run", metavar="FILE", help="write the tidy per-run table (csv) here")
        s.add_argument("--plot", metavar="FILE", help="save the score shift per run plot (png, pdf, svg)")
        s.add_argument("--plot-measure", default=None, help="measure of --plot (default AP if studied)")
        add_progress(s)
        add_format_argument(s)
        s.set_defaults(func=run, study=name)
    p.set_defaults(func=lambda args: (p.print_help(sys.stderr), 2)[1])


def _predictors(args: argparse.Namespace):
    from bayeval.bias import ModelPredictor, TextClassifierPredictor
    from bayeval.io.texts import read_texts

    names = list(dict.fromkeys(args.predict))
    need_texts = [n for n in names if n in TEXT_PREDICTORS or n == "similarity"]
    if need_texts and not args.texts:
        raise BayevalInputError(f"--texts: needed by --predict {', '.join(need_texts)}")
    texts = read_texts(args.texts) if args.texts else None
    out = []
    for n in names:
        if n in TEXT_PREDICTORS:
            out.append(TextClassifierPredictor(texts, n, seed=args.seed))
        elif n == "similarity":
            out.append(ModelPredictor("similarity", seed=args.seed, texts=texts))
        else:
            out.append(ModelPredictor(n, seed=args.seed))
    return out


def run(args: argparse.Namespace) -> int:
    from bayeval.bias import (
        DEFAULT_MEASURES,
        contributions_from_runs,
        leave_one_group_out,
        manual_only,
        read_contributions,
        read_run_groups,
    )
    from bayeval.data import RankData

    qrels, runs = qrels_and_runs(args)
    groups = read_run_groups(args.groups)
    groups.check_runs(runs.names, "RUN")
    if args.annotated:
        contributions = read_contributions(args.annotated)
    else:
        contributions = contributions_from_runs(RankData.build(runs, qrels), groups, args.pool_depth)
    measures = args.measures if args.measures else DEFAULT_MEASURES
    study_runs = [r.strip() for r in args.study_runs.split(",") if r.strip()] if args.study_runs else None
    study_fn = leave_one_group_out if args.study == "leave-one-group-out" else manual_only
    study = study_fn(runs, qrels, contributions, groups, measures=measures, pool_depth=args.pool_depth,
                     study_runs=study_runs, predictors=_predictors(args), expected_method=args.expected_method,
                     progress=args.progress)
    table = study.table()
    if args.per_run:
        study.to_frame().to_csv(args.per_run, index=False, float_format="%.6g")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        from bayeval.bias.plot import plot_shifts

        measure = args.plot_measure or ("AP" if "AP" in study.measures else study.measures[0])
        plot_shifts(study, measure, path=args.plot)
    red = study.reductions
    title = (f"{study.scenario}: {int(study.focus.sum())} of {len(study.runs)} runs studied, {len(study.topics)} "
             f"topics, pool depth {study.pool_depth}; {int((red.judged - red.judged_after).sum())} judgments removed "
             f"({int((red.relevant - red.relevant_after).sum())} relevant)")
    write_frame(table, args.format, title=title, legend=_LEGEND)
    return 0


#: The columns of the study table (Büttcher et al. 2007, Tables 2-3 and 7-8; docs/bias.md).
_LEGEND = {
    "method": "the qrels the runs are scored on: the reduced pool, or a repair of it (completed qrels, expected "
              "measures)",
    "runs": "runs studied",
    "avg_rank_change": "mean |rank on the reduced qrels - rank on the full qrels|",
    "max_up": "largest rise in rank",
    "max_down": "largest fall in rank",
    "rms_error": "root mean square of (score on the reduced qrels - score on the full qrels)",
    "mean_shift": "mean of that difference",
    "significant": "share of runs whose score changes significantly (paired t-test over topics, p < 0.05)",
    "tau_all": "Kendall's τ between the rankings of all runs (ties agree)",
    "tau_manual": "Kendall's τ between the rankings of the studied (manual) runs",
}
