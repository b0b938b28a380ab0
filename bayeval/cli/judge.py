"""``bayeval judge``: choose what to judge (MTC, RTC, pooling) and keep a judging campaign.

- ``bayeval judge init CAMPAIGN [QRELS_SO_FAR] RUN... --measure AP --alpha 0.95 --method mtc|rtc|pool``
- ``bayeval judge next CAMPAIGN --n 20 [--format csv|table|json] [--out FILE]``
- ``bayeval judge record CAMPAIGN FILE`` (csv with topic,docno,grade or qrels lines; all or nothing)
- ``bayeval judge status CAMPAIGN``
- ``bayeval judge topup CAMPAIGN RUN... --per-topic N [--seed S]``: a random top-up of runs that did not contribute
- ``bayeval judge export CAMPAIGN --out FILE [--topup FILE]``
- ``bayeval judge simulate QRELS RUN... --method mtc|rtc|pool --alpha 0.95 [--depth D] [--budget N] [--seed S]``
- ``bayeval judge serve CAMPAIGN [--texts DOCS] [--topics TOPICS] [--host 127.0.0.1] [--port 8000]``: the judging
  page
- ``bayeval judge demo-serve [CRANFIELD_DIR]``: a campaign on Cranfield, served
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys

import pandas as pd

from bayeval.cli._flags import DeprecatedAlias, add_progress
from bayeval.cli._inputs import (
    add_depth_argument,
    confidence,
    nonnegative_int,
    number_in,
    port,
    positive_int,
    probability,
)
from bayeval.cli._output import write_frame
from bayeval.errors import BayevalInputError
from bayeval.methods import CLOSED_FORM_METHODS, SELECTION_METHODS

__all__ = ["DECIDE_LEGEND", "add_topup_argument", "decide_columns", "describe_topup", "register", "topup_from_args"]


def add_topup_argument(group) -> None:
    """``--topup FILE`` of the commands that fit a relevance model (evaluate, report)."""
    group.add_argument("--topup", metavar="FILE", default=None,
                       help="judged top-up of runs that did not contribute ('bayeval judge export --topup'): the "
                            "model learns those runs' levels from it (docs/calibration.md)")


def topup_from_args(args):
    """The :class:`~bayeval.relevance.topup.TopUpSample` of ``--topup`` (None without one)."""
    if getattr(args, "topup", None) is None:
        return None
    from bayeval.relevance.topup import read_topup

    return read_topup(args.topup, relevance_level=args.relevance_level)


def describe_topup(sample, estimate) -> str:
    """'' without a top-up; else what it holds and what the model made of it, for a caption."""
    if sample is None:
        return ""
    levels = getattr(estimate, "held_out", None)
    if levels is not None and levels.describe():
        return f"; {levels.describe()} ({', '.join(sample.runs)})"
    s = sample.summary()
    return (f"; top-up: {int(s.judged.sum())} judged documents of {len(s)} run(s), used as judgments (the model has "
            "no reuse prior to learn the runs' levels from them)")


#: The legend of :func:`decide_columns`' columns.
DECIDE_LEGEND = {"topup_run": "for a pair not decided at 0.95: the run whose top-up ('bayeval judge topup') is "
                              "expected to decide it (empty: decided, or no run of the pair can be topped up)",
                 "judgments_to_decide": "expected top-up judgments of topup_run to decide the pair (the model's "
                                        "preposterior, docs/calibration.md; at most 10 a topic: a pair still open "
                                        "then shows the cap)"}


def decide_columns(frame: pd.DataFrame, data, estimate, measure, *, seed: int = 0) -> pd.DataFrame:
    """``frame`` (pair rows ``run_a, run_b, topic``) with ``topup_run`` and ``judgments_to_decide`` on its
    ``topic == "all"`` rows: for each pair not decided at 0.95, the run whose top-up is expected to decide it and
    how many judgments of it (:func:`bayeval.selection.to_decide.judgments_to_decide`; NaN: decided, or no run of
    the pair can be topped up). ``frame`` unchanged when the model has no reuse prior."""
    if getattr(estimate, "held_out", None) is None:
        return frame
    from bayeval.selection.to_decide import judgments_to_decide

    r = judgments_to_decide(data, estimate, measure=str(measure), seed=seed).frame
    r = r.assign(judgments_to_decide=r.judgments.where(~r.decided & (r.topup_run != "")),
                 topup_run=r.topup_run.where(~r.decided & (r.topup_run != ""), ""))
    out = frame.merge(r[["run_a", "run_b", "topup_run", "judgments_to_decide"]].assign(topic="all"),
                      on=["run_a", "run_b", "topic"], how="left")
    out["topup_run"] = out["topup_run"].fillna("")
    return out


def _pair(text: str) -> tuple[str, str]:
    a, sep, b = text.partition(":")
    if not sep or not a or not b:
        raise argparse.ArgumentTypeError(f"expected RUN_A:RUN_B, got {text!r}")
    return a, b


def _selection_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--measure", default="AP",
                   help="AP, P@k, DCG@k, nDCG@k (decided on DCG@k) or recall@k (default AP)")
    p.add_argument("--alpha", type=confidence, default=0.95,
                   help="confidence at which a pair is decided (default 0.95)")
    p.add_argument("--method", choices=SELECTION_METHODS, default="mtc", help="selection method (default mtc)")
    add_depth_argument(p)
    p.add_argument("--pairs", type=_pair, action="append", metavar="A:B",
                   help="target pair (repeatable; default every pair of runs)")
    p.add_argument("--pool-depth", type=positive_int, default=None, metavar="K",
                   help="depth-k pooling: judge every document ranked <= K (with --method pool or depth-pool)")
    p.add_argument("--default-p", type=probability, default=0.5,
                   help="probability of relevance of unjudged documents for mtc and pooling (default 0.5)")
    p.add_argument("--refit-every", type=positive_int, default=10, help="rtc: judgments between refits (default 10)")
    p.add_argument("--config", default="rtc-mtc",
                   help="rtc: relevance-model configuration (default rtc-mtc, the paper's priors)")
    p.add_argument("--moments", choices=CLOSED_FORM_METHODS, default="delta",
                   help="moments of AP and recall differences (default delta)")
    p.add_argument("--gain", choices=("exponential", "linear"), default="exponential",
                   help="DCG gain of a grade g: 2^g-1 or g (default exponential)")
    p.add_argument("--max-grade", type=positive_int, default=None, help="highest grade (DCG bounds; default 1 or "
                                                                         "the highest judged)")
    p.add_argument("--seed", type=int, default=0, help="seed of the relevance-model fits (default 0)")
    p.add_argument("--relevance-level", type=positive_int, default=1, metavar="L",
                   help="minimum grade counted relevant (default 1)")


def register(sub) -> None:
    p = sub.add_parser("judge", help="choose documents to judge (MTC, RTC, pooling); judging campaigns",
                       description="Minimal and robust test collections: propose the documents whose judgments "
                                   "decide which run is better, keep every judgment in a campaign file, or "
                                   "simulate a whole campaign against complete qrels.")
    cmds = p.add_subparsers(dest="judge_command", metavar="ACTION", parser_class=type(p))
    _register_bookkeeping(cmds)
    _register_draws(cmds)
    _register_export(cmds)
    _register_simulate(cmds)
    _register_serving(cmds)
    p.set_defaults(func=lambda a: (p.print_help(), 2)[1])


def _register_bookkeeping(cmds) -> None:
    """``judge init``, ``next``, ``record`` and ``status``: the campaign file's own steps."""
    s = cmds.add_parser("init", help="create a campaign file", description="Create a campaign: FILES are an "
                        "optional qrels of judgments made so far (recognised by its 4 columns) and the runs.")
    s.add_argument("campaign", metavar="CAMPAIGN", help="campaign file to create (SQLite)")
    s.add_argument("files", metavar="FILE", nargs="+", help="[QRELS_SO_FAR] RUN... (files or directories)")
    s.add_argument("--qrels", metavar="FILE", help="judgments made so far (instead of a leading positional qrels)")
    _selection_options(s)
    s.set_defaults(func=_init)

    s = _campaign_action(cmds, "next", help="propose the next documents to judge")
    s.add_argument("--n", type=positive_int, default=20, help="how many (default 20)")
    s.add_argument("--format", choices=("csv", "table", "json"), default="csv", help="output format (default csv)")
    s.add_argument("--out", metavar="FILE", help="write the csv to fill in here (columns topic,docno,grade,...)")
    s.set_defaults(func=_next)

    s = _campaign_action(cmds, "record", help="record a file of judgments (all or nothing)")
    s.add_argument("file", metavar="FILE", help="csv (topic,docno,grade) or qrels lines")
    s.add_argument("--source", choices=("human", "qrels", "model"), default="human",
                   help="who judged (default human)")
    s.set_defaults(func=_record)

    s = _campaign_action(cmds, "status", help="judgments so far, confidence per pair, decided pairs")
    s.add_argument("--format", choices=("table", "csv", "json"), default="table", help="output format (default table)")
    s.set_defaults(func=_status)


def _register_draws(cmds) -> None:
    """``judge sample`` and ``topup``: judgments drawn at random with known inclusion probabilities."""
    s = _campaign_action(cmds, "sample", help="draw a random share of each topic's pool to judge (docs/sampling.md)",
                         description="Draw documents at random with known inclusion probabilities, served by "
                                     "'next' before the selector's picks: stratified by best rank (as xinfAP) "
                                     "or proportional to a probability file or to the AP-prior of the runs' ranks "
                                     "(as statAP).")
    size = s.add_mutually_exclusive_group(required=True)
    size.add_argument("--share", type=probability, help="expected share of each topic's pool drawn")
    size.add_argument("--per-topic", type=number_in(float, 1.0, what="a number >= 1"), metavar="N",
                      help="instead: expected judgments drawn in each topic")
    s.add_argument("--relevance-level", type=positive_int, default=None, metavar="L",
                   help="the least grade the sample's measures will count relevant, for the stated minimum "
                        "(default: the campaign's)")
    s.add_argument("--scheme", choices=("rank", "p", "prior"), default="rank",
                   help="rank: strata by best rank, rates 10:5:2; p: proportional to --probabilities; prior: "
                        "proportional to the AP-prior of the runs' ranks, statAP's design (default rank)")
    s.add_argument("--probabilities", metavar="FILE", default=None,
                   help="probabilities of relevance 'topic docno p' for --scheme p (default: the campaign's "
                        "default p, i.e. equal chances)")
    s.add_argument("--seed", type=int, default=0, help="seed of the draw (default 0)")
    s.set_defaults(func=_sample)

    s = _campaign_action(cmds, "topup",
                         help="draw a few of each new run's own documents to judge (docs/calibration.md)",
                         description="For runs that did not contribute to the judgments: draw PER_TOPIC of each run's "
                                     "unjudged documents a topic (within the campaign depth), at random with "
                                     "probability proportional to the AP-prior weight of their rank, recorded with "
                                     "their inclusion probabilities. 'next' and the judging page serve them first; "
                                     "export them with 'export --topup' and give them to 'evaluate'/'report' "
                                     "--topup, which learn the runs' levels from them.")
    s.add_argument("runs", metavar="RUN", nargs="+", help="names of the campaign's runs to top up")
    s.add_argument("--per-topic", type=positive_int, required=True, metavar="N",
                   help="documents drawn per run and topic (1 is often enough to decide: docs/calibration.md)")
    s.add_argument("--seed", type=int, default=0, help="seed of the draw (default 0)")
    s.set_defaults(func=_topup)


def _register_export(cmds) -> None:
    """``judge export``: the campaign's judgments as files."""
    s = _campaign_action(cmds, "export", help="write every judgment as a qrels file (and the random sample's prels)")
    s.add_argument("--out", dest="qrels", metavar="FILE", help="qrels file to write (required)")
    s.add_argument("--prels", metavar="FILE", default=None,
                   help="also write the judged random draw as prels 'topic docno grade scheme inclusion'")
    s.add_argument("--sample", metavar="FILE", default=None,
                   help="also write the pool as a stratified sample 'topic 0 docno stratum rel' (rank scheme)")
    s.add_argument("--topup", metavar="FILE", default=None,
                   help="also write the top-ups 'topic docno grade run round inclusion' (for evaluate --topup)")
    s.add_argument("--qrels", dest="qrels", action=DeprecatedAlias, replacement="--out")
    s.set_defaults(func=_export)


def _register_simulate(cmds) -> None:
    """``judge simulate``: a whole campaign against a qrels replay."""
    s = cmds.add_parser("simulate", help="run a whole campaign against complete qrels",
                        description="Judge with the chosen method against a qrels replay until every pair is "
                                    "decided (or the budget ends), and check the decisions against the qrels.")
    s.add_argument("qrels", metavar="QRELS", help="complete judgments: the assessor and the truth")
    s.add_argument("runs", metavar="RUN", nargs="+", help="target runs (files or directories)")
    _selection_options(s)
    s.add_argument("--budget", type=nonnegative_int, default=None, help="at most N judgments")
    s.add_argument("--topic-tolerance", type=number_in(float, 0.0, 1.0, open_high=True, what="a number in [0, 1)"),
                   default=0.0, metavar="TAU",
                   help="stay on the last judged topic while a document there is worth at least 1-TAU of the best "
                        "anywhere (default 0: the exact algorithm; the judging page's setting and its cost are "
                        "in docs/judging.md)")
    s.add_argument("--format", choices=("table", "json"), default="table", help="output format (default table)")
    add_progress(s)
    s.set_defaults(func=_simulate)


def _register_serving(cmds) -> None:
    """``judge serve`` and ``demo-serve``: the judging page."""
    s = _campaign_action(cmds, "serve", help="a judging page for assessors (needs bayeval[serve])",
                         description="Serve the campaign's judging page: topic and document side by side, a key per "
                                     "grade, the campaign's next document for each assessor (docs/judging.md).")
    _serve_options(s, texts=True)
    s.set_defaults(func=_serve)

    s = cmds.add_parser("demo-serve", help="create a campaign on Cranfield and serve its judging page",
                        description="Build two Cranfield runs (BM25 and query likelihood), create a campaign "
                                    "on them (or reuse it) and serve the judging page with Cranfield's texts.")
    s.add_argument("cranfield", metavar="CRANFIELD_DIR", nargs="?", default="../shared/data/cranfield",
                   help="directory of cran.all.1400.gz, cran.qry.gz, cranqrel.gz (default ../shared/data/cranfield)")
    s.add_argument("--campaign", default="cranfield-demo.sqlite", help="campaign file, created when absent "
                                                                      "(default cranfield-demo.sqlite)")
    s.add_argument("--method", choices=SELECTION_METHODS, default="mtc", help="selection method (default mtc)")
    _serve_options(s, texts=False)
    s.set_defaults(func=_demo_serve)


def _campaign_action(cmds, name: str, **kwargs) -> argparse.ArgumentParser:
    """The ``judge`` step ``name`` that works on a campaign file: its parser, with the CAMPAIGN argument."""
    s = cmds.add_parser(name, **kwargs)
    s.add_argument("campaign", metavar="CAMPAIGN", help="campaign file (SQLite, made by 'judge init')")
    return s


def _serve_options(p: argparse.ArgumentParser, *, texts: bool) -> None:
    if texts:
        p.add_argument("--texts", metavar="DOCS",
                       help="document texts, extracted from your document collection (not from the qrels or runs, "
                            "which hold only ids): docno<TAB>text lines, JSON lines (docno, text), or Cranfield's "
                            "directory; without it the page shows each document's id, to judge it from elsewhere")
    p.add_argument("--topics", metavar="TOPICS", help="topic statements: a TREC topics file or "
                                                      "topic<TAB>title[<TAB>desc[<TAB>narr]] lines")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1; any other address "
                                                       "requires the token printed at start)")
    p.add_argument("--port", type=port, default=8000, help="port (default 8000)")
    p.add_argument("--lease-seconds", type=positive_int, default=600,
                   help="how long a document stays reserved to its assessor (default 600)")


def _run_server(campaign: str, texts_path: str, topics_path: str | None, args) -> int:
    try:
        import uvicorn

        from bayeval.serve.app import LOOPBACK, create_app
    except ModuleNotFoundError as exc:
        raise BayevalInputError(f"serve: {exc.name} is not installed; pip install 'bayeval[serve]'") from None
    from bayeval.io.sources import load_texts, load_topics
    from bayeval.selection import Campaign

    Campaign.open(campaign).close()  # a bad campaign path fails before the texts are read
    texts = load_texts(texts_path) if texts_path else {}
    topics = load_topics(topics_path) if topics_path else {}
    loopback = args.host in LOOPBACK
    token = None if loopback else secrets.token_urlsafe(24)
    app = create_app(campaign, texts=texts, topics=topics, token=token, allowed_hosts=LOOPBACK if loopback else None,
                     lease_seconds=float(args.lease_seconds))
    host = f"[{args.host}]" if ":" in args.host else args.host
    url = f"http://{host}:{args.port}/" + ("" if token is None else f"?token={token}")
    missing = [] if texts_path else ["no --texts: documents are shown by id only"]
    missing += [] if topics_path else ["no --topics: topics are shown by number only"]
    print(f"judging {os.path.basename(campaign)}: {len(texts)} texts, {len(topics)} topic statements"
          + "".join(f" ({m})" for m in missing) + f"; open {url}  (Ctrl-C stops)", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", access_log=False)
    return 0


def _serve(args) -> int:
    return _run_server(args.campaign, args.texts, args.topics, args)


def _demo_serve(args) -> int:
    from bayeval.io.sources import cranfield_dir

    if cranfield_dir(args.cranfield) is None:
        raise BayevalInputError(f"CRANFIELD_DIR: {args.cranfield} does not hold cran.all.1400.gz")
    if not os.path.exists(args.campaign):
        from bayeval.bias.cranfield import cranfield_runs, load_cranfield
        from bayeval.data.run import RunSet
        from bayeval.selection import Campaign

        runs = cranfield_runs(load_cranfield(args.cranfield), depth=100)
        pair = RunSet(tuple(r for r in runs if r.name in ("bm25", "ql-1000")))
        Campaign.create(args.campaign, pair, measure="AP", method=args.method, depth=100).close()
        print(f"created {args.campaign}: bm25 vs ql-1000 on Cranfield's 225 queries, {args.method}, AP", flush=True)
    return _run_server(args.campaign, args.cranfield, args.topics or args.cranfield, args)


def _selection_measure(text: str) -> str:
    """``--measure`` as the selectors read it: nDCG@k is decided on DCG@k, which has document weights (nDCG's
    ideal DCG is random), saying so: on one topic both differences have the same sign."""
    from bayeval.measures import Measure

    try:
        m = Measure.parse(text)
    except BayevalInputError:
        return text  # the selector names the error
    if m.name == "nDCG" and m.cutoff is not None:
        print(f"bayeval: note: --measure {m}: documents are chosen and pairs decided on DCG@{m.cutoff} (nDCG's ideal "
              "DCG is unknown while judging; on each topic the two differences have the same sign); evaluate the "
              f"judgments with nDCG@{m.cutoff} afterwards", file=sys.stderr)
        return f"DCG@{m.cutoff}"
    return text


def _selector_kwargs(args) -> dict:
    kw = {"measure": _selection_measure(args.measure), "alpha": args.alpha, "method": args.method, "depth": args.depth,
          "default_p": args.default_p, "refit_every": args.refit_every, "config": args.config, "seed": args.seed,
          "moments": args.moments, "gain": args.gain, "max_grade": args.max_grade, "pool_depth": args.pool_depth}
    if args.method == "depth-pool" and args.pool_depth is None:
        raise BayevalInputError("--pool-depth: depth-pool needs a pool depth")
    return kw


def _init(args) -> int:
    from bayeval.io.qrels import is_qrels_file, read_qrels
    from bayeval.io.runs import read_runs
    from bayeval.selection import Campaign

    files = list(args.files)
    qrels_path = args.qrels
    if qrels_path is None and len(files) > 1 and is_qrels_file(files[0]):
        qrels_path = files.pop(0)
    initial = read_qrels(qrels_path, relevance_level=args.relevance_level) if qrels_path else None
    runs = read_runs(files)
    camp = Campaign.create(args.campaign, runs, initial=initial, pairs=args.pairs,
                           relevance_level=args.relevance_level, **_selector_kwargs(args))
    st = camp.status()
    n_init = camp.counts().get("initial", 0)
    print(f"created {args.campaign}: {len(runs)} runs, {len(st.run_a)} target pairs, {camp.settings['measure']}, "
          f"method {camp.settings['method']}, {n_init} initial judgments")
    camp.close()
    return 0


def _next(args) -> int:
    from bayeval.selection import Campaign, write_requests
    from bayeval.serve.desk import grade_names

    with Campaign.open(args.campaign) as camp:
        cands = camp.next(args.n)
        if args.out:
            n = write_requests(cands, args.out)
            sel = camp.selector()
            scale = ", ".join(f"{g} = {name}" for g, name in grade_names(int(sel.max_grade), int(sel.level)).items())
            print(f"wrote {n} documents to judge to {args.out}: fill its empty grade column ({scale}), then "
                  f"'bayeval judge record {args.campaign} {args.out}'", file=sys.stderr)
        elif args.format == "csv":
            write_requests(cands, sys.stdout)
        else:
            frame = pd.DataFrame([c.__dict__ for c in cands], columns=["topic", "docno", "score", "run_a", "run_b"])
            write_frame(frame, args.format, title=f"next {len(cands)} documents to judge")
        if not cands:
            print("nothing left to judge: " + camp.status().summary(), file=sys.stderr)
    return 0


def _record(args) -> int:
    from bayeval.selection import Campaign

    with Campaign.open(args.campaign) as camp:
        res = camp.record(args.file, source=args.source)
        st = camp.status()
        print(f"recorded {res.added} new judgments ({res.duplicates} already recorded); {st.summary()}")
    return 0


def _status_frame(st, remaining) -> pd.DataFrame:
    f = st.to_frame()
    f["confidence"] = st.confidence
    f["remaining"] = remaining
    cols = ["run_a", "run_b", "expected", "p_less", "confidence", "decided", "sign", "remaining"]
    if st.measure.startswith(("P@", "DCG@")):
        cols += ["lower", "upper"]
    return f[cols]


def _status(args) -> int:
    from bayeval.selection import Campaign

    with Campaign.open(args.campaign) as camp:
        st = camp.status()
        counts = camp.counts()
        frame = _status_frame(st, camp.selector().judgments_remaining())
        if args.format == "json":
            out = {"judgments": st.judgments, "by_source": counts, "done": st.done, "exhausted": st.exhausted,
                   "settings": {k: v for k, v in camp.settings.items()},
                   "pairs": json.loads(frame.to_json(orient="records"))}
            json.dump(out, sys.stdout, indent=1)
            sys.stdout.write("\n")
        else:
            if args.format == "table":
                by = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
                print(f"{camp.path}: {camp.settings['method']} on {st.measure}; judgments: {by or 'none'}")
                print(st.summary() + ("; done" if st.done else ""))
            und = frame.loc[~frame["decided"], "remaining"]
            if args.format == "table" and len(und):
                known = und[und.notna()]
                most = f"about {int(known.max())} for the hardest pair" if len(known) else "no estimate"
                print(f"judgments remaining (estimate, docs/judging.md): {most} ({len(und)} undecided)"
                      + (f"; {len(und) - len(known)} cannot be decided unless E[Δ] moves"
                         if len(known) < len(und) else ""))
            if args.format == "table":  # 'expected' is a difference: named as in evaluate --pairs
                frame = frame.rename(columns={"expected": "delta_expected"})
            m = st.measure
            write_frame(frame, args.format, missing={"remaining": "no judgment can decide it at today's E[Δ]"},
                        legend={"delta_expected": f"E[{m}_a - {m}_b], mean over topics",
                                "p_less": f"P({m}_a - {m}_b < 0): confidence that run b is better",
                                "confidence": "max(p_less, 1 - p_less): confidence in the sign",
                                "sign": "the sign called: -1 run b better, +1 run a better, 0 none yet",
                                "decided": "the confidence reached alpha (or the bounds exclude 0)",
                                "remaining": "estimated judgments this pair still needs (0: decided; NA: not "
                                             "decidable at today's E[Δ]); docs/judging.md"})
    return 0


def _export(args) -> int:
    from bayeval.selection import Campaign

    with Campaign.open(args.campaign) as camp:
        if args.qrels is None:
            raise BayevalInputError("--out: give the qrels file to write")
        n = camp.export_qrels(args.qrels)
        extra = []
        if args.prels:
            extra.append(f"{camp.export_prels(args.prels)} sampled judgments to {args.prels}")
        if args.sample:
            extra.append(f"{camp.export_sample(args.sample)} pooled documents to {args.sample}")
        if args.topup:
            extra.append(f"{camp.export_topup(args.topup)} top-up documents to {args.topup}")
    print(f"wrote {n} judgments to {args.qrels}" + "".join(f"; {e}" for e in extra))
    return 0


def _sample(args) -> int:
    from bayeval.io import read_probabilities
    from bayeval.sampling import minimum_notices
    from bayeval.selection import Campaign

    if args.share == 0:
        raise BayevalInputError("--share: must be above 0")
    probs = read_probabilities(args.probabilities) if args.probabilities else None
    with Campaign.open(args.campaign) as camp:
        n = camp.draw_sample(args.share, per_topic=args.per_topic, scheme=args.scheme, probabilities=probs,
                             seed=args.seed)
        drawn = camp.samples()
        level = int(camp.settings["relevance_level"]) if args.relevance_level is None else args.relevance_level
    expected = drawn.groupby("topic").inclusion.sum()
    print(f"drew {n} documents to judge at random ({args.scheme} scheme; {expected.mean():.1f} expected a topic)")
    for line in minimum_notices(expected.to_dict(), level):
        print(f"bayeval: warning: {line}", file=sys.stderr)
    return 0


def _topup(args) -> int:
    from bayeval.selection import Campaign

    with Campaign.open(args.campaign) as camp:
        n = camp.draw_topup(args.runs, args.per_topic, seed=args.seed)
        left = int((camp.topup_sample().frame["grade"] < 0).sum())
    print(f"drew {n} documents of {len(args.runs)} run(s) to judge ({args.per_topic} a run and topic at most); "
          f"{left} top-up documents wait for a judgment: 'bayeval judge next {args.campaign}' serves them first")
    return 0


def _simulate(args) -> int:
    from bayeval.io.qrels import read_qrels
    from bayeval.io.runs import read_runs
    from bayeval.selection import simulate

    qrels = read_qrels(args.qrels, relevance_level=args.relevance_level)
    runs = read_runs(args.runs)
    kw = _selector_kwargs(args)
    method = kw.pop("method")
    if method != "rtc":
        kw.pop("config")
        kw.pop("refit_every")
    res = simulate(runs, qrels, method=method, pairs=args.pairs, budget=args.budget,
                   progress=args.progress, topic_tolerance=args.topic_tolerance, **kw)
    if args.format == "json":
        json.dump(res.to_dict(), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print(res.summary())
        f = res.to_frame()[["run_a", "run_b", "expected", "p_less", "decided", "sign", "true_delta", "correct"]]
        m = res.measure
        write_frame(f.rename(columns={"expected": "delta_expected"}), "table",
                    legend={"delta_expected": f"E[{m}_a - {m}_b] after the judgments, mean over topics",
                            "p_less": f"P({m}_a - {m}_b < 0): confidence that run b is better",
                            "decided": "the confidence reached alpha (or the bounds exclude 0)",
                            "sign": "the sign called: -1 run b better, +1 run a better, 0 none",
                            "true_delta": f"{m}_a - {m}_b on the complete qrels",
                            "correct": "the sign called is the sign of true_delta"})
    return 0
