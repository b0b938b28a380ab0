"""``bayeval design``: plan, assign and analyse a held-out-sites reusability design (SIGIR 2010).

``plan`` tabulates the design parameters for each k (paper Table 2); ``assign`` writes which sites
are held out of which topics as csv (paper Table 1); ``analyze`` tests reusability from per-topic
scores, or from runs and judgments (optionally simulating the design's pools on complete qrels).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import pandas as pd

from bayeval.cli._flags import add_mc_draws
from bayeval.cli._inputs import add_format_argument, level, nonnegative_int, positive_int
from bayeval.cli._output import write_frame
from bayeval.errors import BayevalInputError
from bayeval.io.designs import read_sites

__all__ = ["register"]

#: The columns of ``design plan`` (carterette2010 Table 2; bayeval.design.DesignPlan).
_PLAN_LEGEND = {
    "k": "sites held out of each topic outside the all-site baseline",
    "combinations": "C(m, k): topics of one block, one per held-out combination",
    "blocks": "b, the number of blocks",
    "n": "size of the all-site baseline T0",
    "within_baseline": "per site: topics it contributed to (T0 included)",
    "within_reuse": "per site: topics it was held out of (its reuse set)",
    "between_baseline": "per pair of sites: topics both contributed to",
    "between_reuse": "per pair of sites: topics both were held out of",
    "participant": "per ordered pair of sites: topics the first was held out of while the second contributed",
    "held_out_total": "topics each site is held out of (= within_reuse)",
}

TABLES = ("summary", "agreement", "groups", "sites", "runs", "pairs", "scores")


def register(sub) -> None:
    p = sub.add_parser("design", help="reusable test collections by design: plan, assign, analyze",
                       description="The held-out-sites experimental design of Carterette, Kanoulas, Pavlu & "
                                   "Fang (SIGIR 2010): plan its parameters, assign held-out sites to topics, "
                                   "and analyse the reusability evidence it collects.")
    dsub = p.add_subparsers(dest="design_command", metavar="STEP", parser_class=type(p))
    p.set_defaults(func=lambda args: (p.print_help(sys.stderr), 2)[1])

    pl = dsub.add_parser("plan", help="design parameters for each k (paper Table 2)",
                         description="Tabulate b, n and the sizes of the within-site, between-site and "
                                     "participant-comparison topic sets for each number k of held-out sites.")
    pl.add_argument("--topics", type=positive_int, required=True, metavar="N", help="total number of topics N")
    pl.add_argument("--sites", required=True, metavar="M|NAMES|FILE",
                    help="number of sites m, comma-separated site names, or a run/site table (runs.tsv)")
    pl.add_argument("--largest", type=positive_int, default=None, metavar="M",
                    help="with a run/site table: count only the M sites with the most runs")
    pl.add_argument("--min-baseline", type=nonnegative_int, default=0, metavar="N0",
                    help="least size n0 of the all-site baseline (default 0)")
    pl.add_argument("--k", default=None, metavar="K", help="k values: '2', '1,2,3' or '1-4' (default 1..m-1)")
    add_format_argument(pl)
    pl.set_defaults(func=_plan)

    a = dsub.add_parser("assign", help="write which sites are held out of which topics (csv)",
                        description="Lay out the design of paper Table 1: the all-site baseline first, then "
                                    "blocks running round-robin through the C(m,k) held-out combinations. "
                                    "The csv has one row per topic, a block column and one column per site "
                                    "(1 = contributes judgments, 0 = held out).")
    a.add_argument("--topics", required=True, metavar="N|FILE|IDS",
                   help="number of topics (ids 1..N), a file whose lines start with topic ids (a topic list "
                        "or a qrels file), or comma-separated ids")
    a.add_argument("--sites", required=True, metavar="M|NAMES|FILE",
                   help="number of sites (S1..Sm), comma-separated names, or a run/site table (runs.tsv)")
    a.add_argument("--largest", type=positive_int, default=None, metavar="M",
                   help="with a run/site table: keep the M sites with the most runs (ties by name)")
    a.add_argument("--k", type=positive_int, required=True, help="sites held out of each non-baseline topic")
    a.add_argument("--min-baseline", type=nonnegative_int, default=0, metavar="N0",
                   help="least size n0 of the all-site baseline (default 0)")
    a.add_argument("--blocks", type=positive_int, default=None, help="number of blocks b (default the largest)")
    a.add_argument("--leftover", choices=("baseline", "round-robin"), default="baseline",
                   help="topics that do not fill a block: into the all-site baseline (default, the paper's "
                        "formula) or continue the round robin (a partial block)")
    a.add_argument("--seed", type=int, default=None, help="shuffle the topic order with this seed first")
    a.add_argument("--out", metavar="FILE", help="write the design csv here (default: standard output)")
    a.set_defaults(func=_assign)

    z = dsub.add_parser("analyze", help="test reusability: significance agreement, Kendall's tau, RMSE",
                        description="Analyse a design from per-topic scores (--scores) or from runs and "
                                    "judgments (--qrels, --runs). With --pool-depth the qrels are taken as "
                                    "complete and the design's judgments are simulated: a depth-D pool of the "
                                    "contributing sites' runs per topic. Small p-values are evidence against "
                                    "reusability.")
    z.add_argument("--design", required=True, metavar="FILE", help="design csv (from 'bayeval design assign')")
    z.add_argument("--sites", required=True, metavar="FILE", help="run/site table, e.g. runs.tsv (run, group)")
    src = z.add_argument_group("scores (one of)")
    src.add_argument("--scores", metavar="FILE",
                     help="per-topic scores csv: run,topic,value[,measure] (bayeval measures --per-topic "
                          "--format csv)")
    src.add_argument("--qrels", metavar="FILE", help="qrels: the design's judgments, or complete ones with "
                                                     "--pool-depth")
    src.add_argument("--runs", metavar="RUN", nargs="+", help="run files or directories (with --qrels)")
    z.add_argument("--pool-depth", type=positive_int, default=None, metavar="D",
                   help="simulate the design: judge a depth-D pool of the contributing sites' runs")
    z.add_argument("--relevance-level", type=positive_int, default=1, metavar="L",
                   help="minimum grade counted relevant (default 1)")
    z.add_argument("--measure", default=None, help="measure (default AP; with --scores, the file's only one)")
    z.add_argument("--fill-missing", type=float, default=None, metavar="X",
                   help="with --scores: value for (run, topic) pairs absent from the file (e.g. 0)")
    z.add_argument("--alpha", type=level, default=0.05, help="significance level of the pairwise tests (default 0.05)")
    z.add_argument("--test", choices=("t", "wilcoxon"), default="t", help="pairwise test (default paired t)")
    z.add_argument("--adjust", choices=("none", "bonferroni", "holm"), default="none",
                   help="multiple-comparison adjustment within each site / pair of sites (default none)")
    z.add_argument("--method", choices=("auto", "chi2", "monte-carlo"), default="auto",
                   help="goodness-of-fit test; auto: Monte Carlo when an expected count is below 5 (default auto)")
    add_mc_draws(z, 10000, old="--draws")
    z.add_argument("--seed", type=int, default=0, help="Monte Carlo seed (default 0)")
    z.add_argument("--table", choices=TABLES, default="summary",
                   help="what to print: summary (the report; with csv/json the agreement table), agreement, "
                        "groups (per site / pair), sites (tau, RMSE), runs (baseline/reuse means), pairs, "
                        "scores (per-topic values); default summary")
    z.add_argument("--plot", metavar="FILE", help="save the baseline-vs-reuse plot (png, pdf, svg)")
    z.add_argument("--save-scores", metavar="FILE", help="write the per-topic scores used as csv")
    add_format_argument(z)
    z.set_defaults(func=_analyze)


# ------------------------------------------------------------------------------------------- inputs
def _site_names(spec: str, largest: int | None = None) -> int | list[str]:
    spec = spec.strip()
    if spec.isdigit():
        if largest is not None:
            raise BayevalInputError("--largest: needs a run/site table as --sites")
        return int(spec)
    if Path(spec).is_file():
        counts = Counter(read_sites(spec).values())
        names = list(counts)
        if largest is not None:
            if largest > len(names):
                raise BayevalInputError(f"--largest: {spec} has only {len(names)} sites, asked for {largest}")
            chosen = set(sorted(names, key=lambda s: (-counts[s], s.lower(), s))[:largest])
            names = [s for s in names if s in chosen]
        return names
    if largest is not None:
        raise BayevalInputError("--largest: needs a run/site table as --sites")
    names = [s.strip() for s in spec.split(",") if s.strip()]
    if len(names) < 2:
        raise BayevalInputError(f"--sites: expected a number, a file or at least two comma-separated names, "
                                f"got {spec!r}")
    return names


def _topic_ids(spec: str) -> int | list[str]:
    spec = spec.strip()
    if spec.isdigit():
        return int(spec)
    if Path(spec).is_file():
        from bayeval.io import read_text

        seen: dict[str, None] = {}
        for line in read_text(spec).splitlines():
            fields = line.split()
            if fields and not fields[0].startswith("#"):
                seen.setdefault(fields[0], None)
        if not seen:
            raise BayevalInputError(f"--topics: no topic ids in {spec}")
        return list(seen)
    ids = [t.strip() for t in spec.split(",") if t.strip()]
    if not ids:
        raise BayevalInputError(f"--topics: expected a number, a file or comma-separated ids, got {spec!r}")
    return ids


def _k_values(spec: str | None, m: int) -> list[int] | None:
    if spec is None:
        return None
    out = []
    try:
        for part in spec.split(","):
            part = part.strip()
            if "-" in part:
                lo, hi = (int(x) for x in part.split("-", 1))
                out.extend(range(lo, hi + 1))
            else:
                out.append(int(part))
    except ValueError:
        raise BayevalInputError(f"--k: expected '2', '1,2,3' or '1-4', got {spec!r}") from None
    bad = [k for k in out if not 1 <= k < m]
    if bad or not out:
        raise BayevalInputError(f"--k: every k must lie in 1..{m - 1} (m = {m} sites), got {spec!r}")
    return out


# ------------------------------------------------------------------------------------------- steps
def _plan(args: argparse.Namespace) -> int:
    from bayeval.design import design_table

    sites = _site_names(args.sites, args.largest)
    m = sites if isinstance(sites, int) else len(sites)
    if m < 2:
        raise BayevalInputError(f"--sites: a design needs at least 2 sites, got {m}")
    table = design_table(args.topics, m, args.min_baseline, _k_values(args.k, m))
    frame = table.to_frame()
    if args.format == "table":  # N, m and n0 are in the title
        frame = frame.drop(columns=["n_topics", "n_sites", "min_baseline"])
    write_frame(frame, args.format, title=f"N = {args.topics} topics, m = {m} sites, n0 = {args.min_baseline}",
                legend=_PLAN_LEGEND)
    if args.format == "table":
        for k, need in table.infeasible:
            print(f"k = {k}: infeasible, needs at least {need} topics")
    return 0


def _assign(args: argparse.Namespace) -> int:
    from bayeval.design import assign_design, write_design

    design = assign_design(_topic_ids(args.topics), _site_names(args.sites, args.largest), args.k,
                           args.min_baseline, blocks=args.blocks, leftover=args.leftover, seed=args.seed)
    if args.out:
        write_design(design, args.out)
        print(design.summary())
        plan = design.plan()
        if plan is not None:
            print("\n".join(plan.summary().splitlines()[1:]))
        print(f"written to {args.out}")
    else:
        design.to_frame().to_csv(sys.stdout, index=False, lineterminator="\n")
    return 0


def _scores_from_runs(args, design, site_of):
    from bayeval.design import TopicScores, simulate_design
    from bayeval.io.qrels import read_qrels
    from bayeval.io.runs import read_runs

    qrels = read_qrels(args.qrels, relevance_level=args.relevance_level)
    runs = read_runs(args.runs)
    measure = args.measure or "AP"
    if args.pool_depth is not None:
        sim = simulate_design(runs, qrels, design, site_of, depth=args.pool_depth, measures=measure,
                              truth=args.plot is not None)
        print(sim.summary(), file=sys.stderr)
        return sim.scores(), (sim.true_scores() if args.plot is not None else None)
    from bayeval.data.rankdata import RankData
    from bayeval.measures import evaluate

    missing = [r for r in runs.names if r not in site_of]
    if missing:
        raise BayevalInputError(f"--sites: no site given for run {missing[0]!r}")
    keep = [r for r in runs.names if site_of[r] in set(design.sites)]
    if not keep:
        raise BayevalInputError("--runs: no run belongs to a site of the design")
    data = RankData.build(runs.select(keep), qrels, topics=design.topics)
    return TopicScores.from_evaluation(evaluate(data, measure)), None


def _analyze(args: argparse.Namespace) -> int:
    from bayeval.design import analyze_design, read_design, read_scores

    design = read_design(args.design)
    site_of = read_sites(args.sites)
    if args.scores is not None:
        if args.qrels is not None or args.runs is not None or args.pool_depth is not None:
            raise BayevalInputError("--scores: give either --scores or --qrels with --runs, not both")
        scores = read_scores(args.scores, args.measure, fill=args.fill_missing)
        truth = None
    else:
        if args.qrels is None or args.runs is None:
            raise BayevalInputError("--scores: give per-topic scores, or --qrels and --runs")
        scores, truth = _scores_from_runs(args, design, site_of)
    if args.save_scores:
        scores.to_frame().to_csv(args.save_scores, index=False, lineterminator="\n", float_format="%.6g")
    res = analyze_design(scores, design, site_of, alpha=args.alpha, test=args.test, adjust=args.adjust,
                         method=args.method, draws=args.mc_draws, seed=args.seed)
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        res.plot(truth, path=args.plot)
    table = args.table
    if table == "summary" and args.format == "table":
        print(res.summary())
    else:
        frames = {"summary": res.to_frame, "agreement": res.to_frame,
                  "groups": lambda: _groups_frame(res), "sites": res.site_table,
                  "runs": lambda: res.runs, "pairs": res.pairs, "scores": scores.to_frame}
        write_frame(frames[table](), args.format, title=f"{table} ({res.measure})")
    return 0


def _groups_frame(res):
    parts = [getattr(res, k).groups.assign(kind=k) for k in ("within", "between", "participant")
             if getattr(res, k) is not None]
    out = pd.concat(parts, ignore_index=True)
    return out[["kind", *[c for c in out.columns if c != "kind"]]]
