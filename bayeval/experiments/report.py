"""A markdown page for one collection's robustness study, next to the papers' published numbers.

Everything on the page is computed from the trial table, except the papers' columns, which quote
carterette2007 Tables 2–5 (their published values, for comparison).
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from bayeval.defaults import DEFAULT_MODEL
from bayeval.experiments.plots import (
    plot_calibration,
    plot_expected_vs_true,
    plot_reliability,
    plot_tau_vs_judgments,
)
from bayeval.experiments.statistics import BIN_LABELS, RobustnessStatistics, bookmaker, calls, robustness_statistics
from bayeval.stats.forecast import RELIABILITY_LABELS

__all__ = ["PAPER", "render_report", "render_scores"]

# carterette2007: accuracy per confidence bin (0.5-0.6 ... >= 0.99), W-bar, median judged, mean tau.
PAPER = {
    "table2-mtc": {"label": "MTC, Table 2 (ad hoc 3, 5–8)", "share": (33.7, 18.1, 10.4, 9.4, 7.3, 17.9, 3.3),
                   "accuracy": (61.7, 73.1, 70.1, 69.0, 78.0, 70.4, 68.3), "W": -5.34, "median": 251, "tau": 0.393},
    "table2-rtc": {"label": "RTC, Table 2 (ad hoc 3, 5–8)", "share": (28.6, 20.1, 15.5, 12.1, 6.6, 12.4, 4.7),
                   "accuracy": (61.9, 76.3, 78.0, 84.9, 93.1, 93.4, 98.9), "W": -0.39, "median": 235, "tau": 0.555},
    "adhoc99": {"label": "RTC, Table 5 ad hoc 99 (TREC-8)", "share": None,
                "accuracy": (59.4, 74.3, 78.6, 86.8, 92.6, 92.8, 99.6), "W": -0.44, "median": 179, "tau": 0.532},
    "robust05": {"label": "RTC, Table 5 robust 05", "share": None,
                 "accuracy": (61.5, 75.9, 77.5, 86.7, 93.9, 93.9, 99.2), "W": -0.41, "median": 310, "tau": 0.565},
}
PAPER_IP_TAU = 0.398  # carterette2007 §5, incremental pooling at MTC's judgments
PAPER_W_TYPE = {"both": -1.11, "one": -0.87, "none": -0.27}  # Table 3 (RTC)
PAPER_W_SIM = {"0–0.1": 0.44, "0.1–0.2": -0.45, "0.2–0.3": -0.49}  # Table 4 (RTC)
NAMES = {"mtc": "MTC (p = 0.5)", "rtc": "RTC (paper model, MAP)", "bayes": "bayeval Bayesian RTC", "ip": "IP"}


def _name(method: str) -> str:
    base, _, label = method.partition("-")
    return NAMES.get(base, base) + (f" [{label}]" if label else "")


def _pct(x) -> str:
    return "–" if x is None or not np.isfinite(x) else f"{100 * x:.1f}%"


def _num(x, fmt="{:+.2f}") -> str:
    return "–" if x is None or not np.isfinite(x) else fmt.format(x)


def _bins_side_by_side(st: RobustnessStatistics, methods, paper_keys) -> list[str]:
    head = "| confidence | " + " | ".join(f"{_name(m)} / {c}: % in bin | accuracy" for m, c in methods)
    head += "".join(f" | {PAPER[k]['label']}: accuracy" for k in paper_keys) + " |"
    sep = "|---|" + "---:|---:|" * len(methods) + "---:|" * len(paper_keys)
    lines = [head, sep]
    for i, lab in enumerate(BIN_LABELS):
        cells = []
        for m, c in methods:
            b = st.bins[(st.bins["method"] == m) & (st.bins["confidence"] == c) & (st.bins["bin"] == lab)]
            share, acc, n = (float(b["share"].iloc[0]), float(b["accuracy"].iloc[0]), int(b["n"].iloc[0])) \
                if len(b) else (np.nan, np.nan, 0)
            flag = " ⚠" if n and acc < [0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99][i] else ""
            cells += [_pct(share), f"{_pct(acc)}{flag} (n={n})"]
        cells += [f"{PAPER[k]['accuracy'][i]:.1f}%" for k in paper_keys]
        lines.append(f"| {lab} | " + " | ".join(cells) + " |")
    for label, col, fmt in (("W̄", "W_mean", "{:+.2f}"), ("median judged", "median_judgments", "{:.0f}"),
                            ("mean τ", "mean_tau", "{:.3f}")):
        cells = []
        for m, c in methods:
            r = st.overall[(st.overall["method"] == m) & (st.overall["confidence"] == c)]
            cells += [_num(float(r[col].iloc[0]), fmt) if len(r) else "–", ""]
        key = {"W_mean": "W", "median_judgments": "median", "mean_tau": "tau"}[col]
        cells += [fmt.format(PAPER[k][key]) for k in paper_keys]
        lines.append(f"| **{label}** | " + " | ".join(cells) + " |")
    return lines


def _overall(st: RobustnessStatistics) -> list[str]:
    lines = ["| method | confidence | trials | pairs | accuracy | W̄ | median judged | mean judged | mean τ | "
             "selection reached α | every bin ≥ its lower edge | s per trial |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|"]
    for r in st.overall.itertuples(index=False):
        lines.append(f"| {_name(r.method)} | {r.confidence} | {r.trials} | {r.pairs} | "
                     f"{_pct(r.accuracy)} | {_num(r.W_mean)} | {r.median_judgments:.0f} | {r.mean_judgments:.1f} | "
                     f"{r.mean_tau:.3f} | {_pct(r.decided) if r.method != 'ip' else '–'} | "
                     f"{'yes' if r.goal_bins else ('–' if r.method == 'ip' else 'no')} | {r.seconds:.1f} |")
    return lines


def _breakdown(st: RobustnessStatistics, methods, which: str) -> list[str]:
    table = st.by_pair_type if which == "pair_type" else st.by_similarity
    groups = ["both", "one", "none"] if which == "pair_type" else ["0–0.1", "0.1–0.2", "0.2–0.3", "≥ 0.3"]
    paper = PAPER_W_TYPE if which == "pair_type" else PAPER_W_SIM
    lines = []
    for m, c in methods:
        sub = table[(table["method"] == m) & (table["confidence"] == c)]
        lines.append(f"\n{_name(m)} / {c} — accuracy (% of the group's pairs in the bin):\n")
        lines.append("| confidence | " + " | ".join(groups) + " |")
        lines.append("|---|" + "---:|" * len(groups))
        for lab in BIN_LABELS:
            cells = []
            for g in groups:
                b = sub[(sub["group"] == g) & (sub["bin"] == lab)]
                cells.append(f"{_pct(float(b['accuracy'].iloc[0]))} ({_pct(float(b['share'].iloc[0]))})"
                             if len(b) and int(b["n"].iloc[0]) else "–")
            lines.append(f"| {lab} | " + " | ".join(cells) + " |")
        r = st.overall[(st.overall["method"] == m) & (st.overall["confidence"] == c)].iloc[0]
        wd = r.W_by_type if which == "pair_type" else r.W_by_similarity
        lines.append("| **W̄** | " + " | ".join(_num(wd.get(g, np.nan)) for g in groups) + " |")
        lines.append("| paper W̄ (RTC) | " + " | ".join(_num(paper.get(g, np.nan)) for g in groups) + " |")
        n_pairs = (sub.groupby("group")["n"].sum()).to_dict()
        lines.append("| pairs | " + " | ".join(str(int(n_pairs.get(g, 0))) for g in groups) + " |")
    return lines


def _manual(frame: pd.DataFrame, methods, manual) -> list[str]:
    """W̄ and accuracy of the confident calls for pairs with and without a manual run."""
    man = set(manual)
    lines = ["| method | pairs | with a manual run: W̄ | accuracy at ≥ 0.95 (n) | accuracy at ≥ 0.99 (n) | "
             "automatic only: W̄ | accuracy at ≥ 0.95 (n) | accuracy at ≥ 0.99 (n) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for m, c in methods:
        f = frame[(frame["method"] == m) & (frame["confidence"] == c)]
        conf, y = calls(f["p_less"].to_numpy(), f["true_delta"].to_numpy())
        w = bookmaker(f["p_less"].to_numpy(), f["true_delta"].to_numpy())
        has = (f["run_a"].isin(man) | f["run_b"].isin(man)).to_numpy()
        cells = []
        for sel in (has, ~has):
            cells.append(_num(w[sel].mean()) if sel.any() else "–")
            for lo in (0.95, 0.99):
                k = sel & (conf >= lo)
                cells.append(f"{_pct(y[k].mean()) if k.any() else '–'} ({int(k.sum())})")
        lines.append(f"| {_name(m)} / {c} | {len(f)} | " + " | ".join(cells) + " |")
    return lines


def _proper(st: RobustnessStatistics, methods) -> list[str]:
    """Brier, log score, sharpness and right share of the confident calls, overall and per split."""
    lines = ["| method | pairs | Brier | log score | calls ≥ 0.95 | right at ≥ 0.95 | calls ≥ 0.99 | right at ≥ 0.99 | "
             "W̄ |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    order = {"all": 0, "pair_type": 1, "run_type": 2}
    for m, c in methods:
        sub = st.proper[(st.proper["method"] == m) & (st.proper["confidence"] == c)]
        sub = sub.sort_values("split", key=lambda s: s.map(order), kind="stable")
        for r in sub.itertuples(index=False):
            who = f"{_name(m)} / {c}" + ("" if r.split == "all" else f" — {r.group}")
            lines.append(f"| {who} | {r.pairs} | {r.brier:.4f} | {r.log_score:.4f} | {_pct(r.share_95)} | "
                         f"{_pct(r.right_95)} (n={r.n_95}) | {_pct(r.share_99)} | {_pct(r.right_99)} (n={r.n_99}) | "
                         f"{_num(r.W_mean)} |")
    return lines


def _reliability(st: RobustnessStatistics, methods) -> list[str]:
    """Observed frequency of ΔMAP < 0 per bin of P(ΔMAP < 0), with Wilson intervals (split ``all``)."""
    rel = st.reliability[st.reliability["split"] == "all"]
    lines = ["| P(ΔMAP < 0) | " + " | ".join(f"{_name(m)} / {c}" for m, c in methods) + " |",
             "|---|" + "---:|" * len(methods)]
    for lab in RELIABILITY_LABELS:
        cells = []
        for m, c in methods:
            b = rel[(rel["method"] == m) & (rel["confidence"] == c) & (rel["bin"] == lab)]
            if not len(b) or int(b["n"].iloc[0]) == 0:
                cells.append("–")
                continue
            r = b.iloc[0]
            flag = "" if r.consistent else " ⚠"
            cells.append(f"{_pct(r.frequency)} [{_pct(r.lower)}, {_pct(r.upper)}]{flag} (n={int(r.n)})")
        lines.append(f"| {lab} | " + " | ".join(cells) + " |")
    return lines


def _tests(st: RobustnessStatistics) -> list[str]:
    if not len(st.tests):
        return ["(no paired tests: fewer than two methods)"]
    lines = ["| quantity | A | B | trials | mean A | mean B | median A | median B | Wilcoxon p | t-test p |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    # one confidence method per selection method (the pages' headline ones), and no test of a quantity two
    # methods share by construction (the judgments of RTC and its Bayesian variants)
    shown = {"mtc/delta", "rtc/delta", "bayes/mc", "ip/none"} | {f"{m}/mc" for m in st.overall["method"]
                                                                  if m.startswith("bayes-")}
    t = st.tests
    same_judging = t["a"].str.match(r"(rtc|bayes)") & t["b"].str.match(r"(rtc|bayes)")
    keep = t[t["a"].isin(shown) & t["b"].isin(shown) & ~((t["quantity"] == "judgments") & same_judging)]
    for r in keep.itertuples(index=False):
        lines.append(f"| {r.quantity} | {r.a} | {r.b} | {r.n} | {r.mean_a:.3f} | {r.mean_b:.3f} | {r.median_a:.3f} | "
                     f"{r.median_b:.3f} | {r.wilcoxon_p:.2g} | {r.t_p:.2g} |")
    return lines


def _goals(st: RobustnessStatistics, paper_key: str, tau_goal: float | None) -> list[str]:
    o = st.overall
    bay = o[o["method"].str.startswith("bayes")]
    if not len(bay):
        return ["(no bayes rows: goals not evaluated)"]
    best = bay.sort_values("W_mean", ascending=False).iloc[0]
    p = PAPER[paper_key]
    lines = [f"bayeval's best method by W̄: **{_name(best.method)} / {best.confidence}**.\n",
             "| goal | target | result | met |", "|---|---|---:|---|",
             f"| every bin's accuracy ≥ its lower edge (no dip at 0.95–0.99) | yes | "
             f"{'yes' if best.goal_bins else 'no'} | {'✅' if best.goal_bins else '❌'} |",
             f"| W̄ ≥ 0 | ≥ 0 (paper {p['W']:+.2f}) | {best.W_mean:+.2f} | {'✅' if best.W_mean >= 0 else '❌'} |",
             f"| median judgments ≤ paper | ≤ {p['median']} | {best.median_judgments:.0f} | "
             f"{'✅' if best.median_judgments <= p['median'] else '❌'} |"]
    if tau_goal is not None:
        lines.append(f"| mean τ ≥ {tau_goal} | ≥ {tau_goal} (paper {p['tau']:.3f}) | {best.mean_tau:.3f} | "
                     f"{'✅' if best.mean_tau >= tau_goal else '❌'} |")
    return lines


def render_scores(frame: pd.DataFrame, methods, *, manual=()) -> str:
    """The page's tables of how right P(ΔMAP < 0) is, for the ``methods`` of a trial table.

    The proper scores (Brier, log score, sharpness and the right share of the calls at ≥ 0.95 and ≥ 0.99, over
    all pairs, by pair type and, with ``manual``, automatic against manual), the reliability bins with their
    Wilson intervals, and one summary row per method (accuracy, W̄, judgments, mean τ) — the tables of
    docs/calibration.md (``studies/calibration_tables.py`` prints them).

    Parameters
    ----------
    frame : pandas.DataFrame
        A trial table.
    methods : sequence of (method, confidence)
        The rows, in order.
    manual : sequence of str
        Manual run tags (adds the automatic/manual split).
    """
    methods = [tuple(mc) for mc in methods]
    keep = pd.Series(list(zip(frame["method"], frame["confidence"], strict=True)), index=frame.index).isin(methods)
    st = robustness_statistics(frame[keep], manual=manual or None)
    return "\n".join([*_proper(st, methods), "", *_reliability(st, methods), "", *_overall(st)]) + "\n"


def render_report(frame: pd.DataFrame, *, title: str, command: str, paper_key: str = "adhoc99",
                  figures: str | None = None, figures_rel: str | None = None, manual=(),
                  tau_goal: float | None = 0.60, notes: str | None = None) -> str:
    """The markdown page of one collection's study.

    Parameters
    ----------
    frame : pandas.DataFrame
        The trial table of one collection.
    title : str
    command : str
        The command that generated the page (printed at its top).
    paper_key : str
        Key of :data:`PAPER` quoted next to the results (``"adhoc99"``, ``"robust05"``).
    figures : path, optional
        Directory prefix for the figures (``<figures>-calibration.png`` etc.); none drawn when absent.
    figures_rel : str, optional
        How the page refers to that prefix (relative to the page).
    manual : sequence of str
        Manual run tags (marked in the E[MAP] figure).
    tau_goal : float, optional
    notes : str, optional
        Markdown appended under "Reading the results" (written by a person; kept in its own file).
    """
    st = robustness_statistics(frame, manual=manual or None)
    present = set(zip(st.overall["method"], st.overall["confidence"], strict=True))
    extra = sorted({(m, "mc") for m, _ in present if m.startswith("bayes-")})
    main = [mc for mc in (("mtc", "delta"), ("rtc", "paper"), ("rtc", "delta"), ("bayes", "mc"), ("bayes", "exact"),
                          *extra) if mc in present]
    out = [*_introduction(frame, title, command, bool(extra)), *_sections(st, main, paper_key, tau_goal)]
    if manual:
        out += ["## Pairs with a manual run", "",
                f"{len(set(manual))} runs of the collection are manual (runs.tsv); a pair 'with a manual run' has at "
                "least one of them.", "", *_manual(frame, main, manual), ""]
    out += ["## Paired tests between methods (over trials)", "", *_tests(st), ""]
    if figures:
        out += _figures(frame, main, present, manual, figures, figures_rel or figures, title)
    if notes:
        out += ["## Reading the results", "", notes.strip(), ""]
    return "\n".join(out).rstrip() + "\n"


def _introduction(frame: pd.DataFrame, title: str, command: str, extra: bool) -> list[str]:
    """The page's title, the command that made it and what the study did (from the table's first row)."""
    f0 = frame.iloc[0]
    n_trials = frame["trial"].nunique()
    return [f"# {title}", "", "Generated by:", "", "```bash", command, "```", "",
            f"{n_trials} trials on `{f0['collection']}`: k = {f0['k']} runs drawn at random per trial, the first "
            f"c = {f0['c']} judged to α = {f0['alpha']} on MAP over all topics (runs cut to depth {f0['depth']}, "
            "the complete qrels as the assessor), then P(ΔMAP < 0) for all pairs of the k runs, scored against "
            "MAP on the complete qrels at the same depth (carterette2007 §4.3). Methods: MTC (p = 0.5), RTC "
            "(the paper's model `rtc-mtc`, MAP fit, refitted every 10 judgments while judging), bayeval's "
            "Bayesian estimate (the same RTC judgments; the study's `bayes_config` relevance model — by default "
            f"`{DEFAULT_MODEL}`, the model of every command, docs/calibration.md — with its Laplace posterior, "
            "confidence by "
            "Monte Carlo over posterior draws of p), and incremental pooling (IP) "
            "with MTC's number of judgments. Confidence methods: the papers' closed form (`paper`), the delta "
            "method (`delta`), exact quadrature (`exact`), Monte Carlo (`mc`); see docs/expected.md."
            + (" Methods marked [label] come from other studies with the same seed (the same runs and judgments "
               "in every trial) and a variant of the Bayesian estimate, described under *Reading the results*."
               if extra else ""), ""]


def _sections(st, main: list[tuple[str, str]], paper_key: str, tau_goal: float | None) -> list[str]:
    """The goals, proper scores, reliability, the paper's bins, every method and the breakdowns by pair type
    and run similarity (``main``: the (method, confidence) rows shown; the breakdowns leave out MTC and the
    closed forms)."""
    brk = [mc for mc in main if mc[0] != "mtc" and mc not in (("rtc", "paper"), ("bayes", "exact"))]
    return ["## Goals", "", *_goals(st, paper_key, tau_goal), "",
            "## Proper scores of P(ΔMAP < 0)", "",
            "Brier score (P − o)² and log score −o ln P − (1 − o) ln(1 − P) of the forecast P = P(ΔMAP < 0) against "
            "the true sign (o = 1 if ΔMAP < 0, 0 if > 0, ½ on a tie; lower is better, always answering ½ scores "
            "0.25 and 0.693), the share of calls made at confidence ≥ 0.95 and ≥ 0.99 (sharpness) and how many "
            "of them are right; W̄ beside them for the paper's figures (it is not a proper score). Groups: "
            "pair type (*both*/*one*/*none* of the pair's runs judged) and, with a runs.tsv, *automatic* (two "
            "automatic runs) vs *manual* (at least one manual run). See bayeval.stats.forecast.", "",
            *_proper(st, main), "",
            "### Reliability of P(ΔMAP < 0)", "",
            "Observed frequency of ΔMAP < 0 among the pairs whose forecast falls in each bin, with its Wilson 95% "
            "interval; ⚠ marks a bin whose interval misses the bin (a calibrated forecaster's frequency lies in "
            "its bin).", "",
            *_reliability(st, main), "",
            "## Confidence vs accuracy, next to the paper", "",
            *_bins_side_by_side(st, main, ["table2-mtc", paper_key]), "",
            "⚠ marks a bin whose accuracy is below its lower edge.", "",
            "## Every method and confidence method", "", *_overall(st), "",
            f"IP's mean τ at MTC's number of judgments (paper: {PAPER_IP_TAU}) is the `ip / none` row.", "",
            "## By pair type (carterette2007 Table 3)", "",
            "*both*: the two original runs; *one*: an original and a new run; *none*: two new runs.",
            *_breakdown(st, brk, "pair_type"), "",
            "## By run similarity (carterette2007 Table 4)", "",
            "Similarity: mean over topics of |A ∩ B| / max(|A|, |B|), both runs cut to the depth.",
            *_breakdown(st, brk, "similarity"), ""]


def _figures(frame: pd.DataFrame, main, present, manual, figures: str, rel: str, title: str) -> list[str]:
    """Draw the four figures at ``figures``-*.png and return the page's section linking them (as ``rel``)."""
    plot_calibration(frame, main, path=f"{figures}-calibration.png", title=title)
    plot_reliability(frame, main, path=f"{figures}-reliability.png", title=title)
    plot_expected_vs_true(frame, [mc for mc in (("mtc", "delta"), ("rtc", "delta"), ("bayes", "mc"))
                                  if mc in present], manual=manual, path=f"{figures}-emap.png")
    plot_tau_vs_judgments(frame, [mc for mc in (("mtc", "delta"), ("rtc", "delta"), ("bayes", "mc"),
                                                ("ip", "none")) if mc in present],
                          path=f"{figures}-tau.png", title=title)
    return ["## Figures", "",
            f"![reliability of P(ΔMAP < 0)]({rel}-reliability.png)", "",
            "Reliability diagram of P(ΔMAP < 0): observed frequency of ΔMAP < 0 per forecast bin at the bin's "
            "mean forecast, Wilson 95% intervals; grey squares: the bins (where a calibrated forecaster's "
            "points fall); bars: the share of pairs in each bin (scaled to ¼), i.e. sharpness.", "",
            f"![confidence vs accuracy]({rel}-calibration.png)", "",
            "Confidence vs accuracy (carterette2007 Figure 2 style): one point per confidence bin at the bin's "
            "mean confidence, Wilson 95% intervals; grey marks: the paper's Table 2.", "",
            f"![E[MAP] vs true MAP]({rel}-emap.png)", "",
            "E[MAP] vs true MAP of every run in every trial (carterette-allan2007 Figure 1 style); red "
            "triangles: manual runs.", "",
            f"![tau vs judgments]({rel}-tau.png)", "",
            "Kendall τ of each trial against its number of judgments (carterette-allan2007 Figure 2 style; "
            "points are trials, lines the mean τ in equal-count bins).", ""]


def write_report(path: str | os.PathLike, text: str) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
