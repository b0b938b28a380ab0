r"""The statistics, figures and markdown page of a similarity study (Carterette & Allan 2007 §4.5, Table 1).

Per method, over the trials of a table written by :func:`bayeval.experiments.run_study` with a
:class:`~bayeval.experiments.SimilarityStudyConfig`:

- **judgments** to reach the target (median, mean) and the share of trials that reached it;
- **Kendall τ** between the k runs' E[MAP] and their true MAP (mean over trials);
- **pairwise accuracy**: the share of pairs whose sign of E[ΔMAP] is the sign of the true ΔMAP (a true
  tie is never right), over all pairs and over the pairs whose true difference is significant;
- **bookmaker** :math:`\bar W` of the confidences :math:`P(\Delta MAP<0)` (0 = calibrated; see
  :func:`bayeval.experiments.bookmaker`) and the accuracy of the calls made at ≥ 0.95;
- **paired tests** of the per-trial τ and accuracy between MTC+sim and each other method.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayeval.errors import BayevalInputError
from bayeval.experiments.plots import _figure, _save
from bayeval.experiments.statistics import bookmaker, calls, paired_series

__all__ = ["PAPER_TABLE1", "SimilarityStatistics", "plot_trajectory", "render_similarity_report",
           "similarity_statistics"]

NAMES = {"sim": "MTC+sim", "one": "MTC+one", "mtc": "MTC (p = ½)", "rtc": "RTC", "ip": "incremental pooling"}

PAPER_TABLE1 = {  # TREC: judgments, MTC+sim tau (accuracy), significant accuracy, IP tau (accuracy), significant
    "3": (951, 0.774, 0.887, 0.947, 0.697, 0.839, 0.922),
    "5": (829, 0.778, 0.894, 0.973, 0.743, 0.860, 0.954),
    "6": (1592, 0.811, 0.893, 0.994, 0.771, 0.880, 0.981),
    "7": (743, 0.768, 0.895, 0.952, 0.730, 0.867, 0.931),
    "8": (1794, 0.836, 0.918, 0.978, 0.738, 0.886, 0.946),
}
"""carterette-allan2007 Table 1 (all runs of each TREC ad hoc collection, depth 100)."""


def _per_trial(frame: pd.DataFrame) -> pd.DataFrame:
    right = (np.sign(frame["e_delta"]) == np.sign(frame["true_delta"])) & (frame["true_delta"] != 0)
    f = frame.assign(right=right.astype(float), sig_right=np.where(frame["significant"], right, np.nan))
    return f.groupby(["method", "trial"]).agg(
        judgments=("judgments", "first"), reached=("reached", "first"), tau=("tau", "first"),
        accuracy=("right", "mean"), sig_accuracy=("sig_right", "mean"), seconds=("seconds", "first")).reset_index()


@dataclass(frozen=True, eq=False)
class SimilarityStatistics:
    """The statistics of one similarity study (one collection).

    Attributes
    ----------
    overall : pandas.DataFrame
        Per method: ``trials, median_judgments, mean_judgments, reached, mean_tau, sd_tau, accuracy,
        sig_accuracy, sig_pairs, W_mean, calls_95, accuracy_95, seconds``.
    per_trial : pandas.DataFrame
        Per method × trial: ``judgments, reached, tau, accuracy, sig_accuracy, seconds``.
    tests : pandas.DataFrame
        Paired t-tests and Wilcoxon tests of per-trial τ and accuracy: ``sim`` against each other method.
    """

    overall: pd.DataFrame
    per_trial: pd.DataFrame
    tests: pd.DataFrame

    def to_frame(self) -> pd.DataFrame:
        return self.overall.copy()

    def summary(self) -> str:
        lines = [f"{'method':<22}{'trials':>7}{'judg. med':>10}{'reached':>9}{'tau':>7}{'acc':>7}{'sig acc':>9}"
                 f"{'W':>8}"]
        for r in self.overall.itertuples():
            lines.append(f"{NAMES.get(r.method, r.method):<22}{r.trials:>7}{r.median_judgments:>10.0f}"
                         f"{r.reached:>9.0%}{r.mean_tau:>7.3f}{r.accuracy:>7.3f}{r.sig_accuracy:>9.3f}"
                         f"{r.W_mean:>8.2f}")
        return "\n".join(lines)


def similarity_statistics(frame: pd.DataFrame) -> SimilarityStatistics:
    """The statistics of a similarity-study table (one collection, one seed)."""
    if not len(frame):
        raise BayevalInputError("frame: the table holds no trial")
    if frame["collection"].nunique() > 1:
        raise BayevalInputError("frame: the table holds several collections; select one")
    per = _per_trial(frame)
    rows = []
    for m, g in per.groupby("method", sort=False):
        f = frame[frame["method"] == m]
        scored = f[f["p_less"].notna()]
        W = bookmaker(scored["p_less"], scored["true_delta"]) if len(scored) else np.array([np.nan])
        conf, y = calls(scored["p_less"], scored["true_delta"]) if len(scored) else (np.zeros(0), np.zeros(0))
        rows.append({"method": m, "trials": len(g), "median_judgments": float(g["judgments"].median()),
                     "mean_judgments": float(g["judgments"].mean()),
                     "reached": float(g["reached"].mean()) if m != "ip" else np.nan,
                     "mean_tau": float(g["tau"].mean()), "sd_tau": float(g["tau"].std(ddof=1)) if len(g) > 1 else 0.0,
                     "accuracy": float(g["accuracy"].mean()), "sig_accuracy": float(g["sig_accuracy"].mean()),
                     "sig_pairs": float(f["significant"].mean()), "W_mean": float(np.mean(W)),
                     "calls_95": float(np.mean(conf >= 0.95)) if len(conf) else np.nan,
                     "accuracy_95": float(np.mean(y[conf >= 0.95])) if np.any(conf >= 0.95) else np.nan,
                     "seconds": float(g["seconds"].mean())})
    order = {m: i for i, m in enumerate(NAMES)}
    overall = pd.DataFrame(rows).sort_values("method", key=lambda s: s.map(order)).reset_index(drop=True)
    tests = []
    if "sim" in set(per["method"]):
        base = per[per["method"] == "sim"].set_index("trial")
        for m in overall["method"]:
            if m == "sim":
                continue
            other = per[per["method"] == m].set_index("trial")
            for q in ("tau", "accuracy"):
                tests.append({"a": "sim", "b": m, "quantity": q, **paired_series(base[q], other[q])})
    return SimilarityStatistics(overall, per, pd.DataFrame(tests))


def plot_trajectory(trajectory: pd.DataFrame, *, path=None, title: str = ""):
    """Kendall τ against the number of judgments, one line per method (carterette-allan2007 Figure 2)."""
    fig, ax = _figure(None)
    for m, g in trajectory.groupby("method", sort=False):
        ax.plot(g["judgments"], g["tau"], label=NAMES.get(m, m), lw=1.2)
    ax.set_xlabel("judgments")
    ax.set_ylabel("Kendall τ (E[MAP] vs true MAP)")
    ax.set_ylim(min(-0.05, float(trajectory["tau"].min()) - 0.05) if len(trajectory) else -0.05, 1.02)
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title(title or "τ as judgments accumulate (one trial)")
    _save(fig, path)
    return fig


def _fmt(x, f="{:.3f}") -> str:
    return "–" if x is None or (isinstance(x, float) and np.isnan(x)) else f.format(x)


def render_similarity_report(frame: pd.DataFrame, *, title: str, command: str, paper_trec: str | None = "8",
                             figures: dict | None = None, notes: str | None = None) -> str:
    """The markdown page of a similarity study, next to carterette-allan2007 Table 1 (row ``paper_trec``)."""
    st = similarity_statistics(frame)
    k = sorted(frame["k"].unique())
    nt = sorted(frame["n_topics"].unique())
    depth = sorted(frame["depth"].unique())
    lines = [f"# {title}", "", "Generated by:", "", "```bash", command, "```", "",
             f"{st.per_trial['trial'].nunique()} trials; k = {', '.join(map(str, k))} runs and "
             f"{', '.join(map(str, nt))} topics per trial, depth {', '.join(map(str, depth))}, "
             f"target confidence α = {frame['alpha'].iloc[0]}. {_fmt(st.overall['sig_pairs'].iloc[0], '{:.0%}')} of "
             "the pairs differ significantly on the complete qrels (one-sided paired t-test, p < 0.05).", "",
             "| method | median (mean) judgments | reached | mean τ | pairwise accuracy | accuracy, significant pairs "
             "| W̄ | calls ≥ 0.95 (accuracy) | s / trial |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in st.overall.itertuples():
        lines.append(f"| {NAMES.get(r.method, r.method)} | {r.median_judgments:.0f} ({r.mean_judgments:.0f}) | "
                     f"{_fmt(r.reached, '{:.0%}')} | {r.mean_tau:.3f} | {r.accuracy:.3f} | {_fmt(r.sig_accuracy)} | "
                     f"{_fmt(r.W_mean, '{:+.2f}')} | {_fmt(r.calls_95, '{:.0%}')} ({_fmt(r.accuracy_95)}) | "
                     f"{r.seconds:.1f} |")
    if paper_trec in PAPER_TABLE1:
        j, ts, acs, sig_s, ti, aci, sig_i = PAPER_TABLE1[paper_trec]
        lines += ["", f"carterette-allan2007 Table 1, TREC-{paper_trec} (all runs of the collection at once): "
                  f"MTC+sim {j} judgments, τ {ts} (accuracy {acs}), significant pairs {sig_s}; incremental pooling "
                  f"with as many judgments τ {ti} ({aci}), {sig_i}. MTC+one: \"more judgments\", \"slightly lower\" "
                  "τ and accuracy (no numbers printed)."]
    if len(st.tests):
        lines += ["", "Paired tests over trials (MTC+sim against each method):", "",
                  "| against | quantity | trials | MTC+sim | other | t-test p | Wilcoxon p |",
                  "|---|---|---:|---:|---:|---:|---:|"]
        for r in st.tests.itertuples():
            lines.append(f"| {NAMES.get(r.b, r.b)} | {r.quantity} | {r.n} | {r.mean_a:.3f} | {r.mean_b:.3f} | "
                         f"{_fmt(r.t_p, '{:.2g}')} | {_fmt(r.wilcoxon_p, '{:.2g}')} |")
    for caption, path in (figures or {}).items():
        lines += ["", f"![{caption}]({path})"]
    if notes:
        lines += ["", notes.strip()]
    return "\n".join(lines) + "\n"
