"""Figures of a robustness study (matplotlib, saved to files; nothing is shown).

- :func:`plot_calibration` — confidence vs accuracy per method with the ideal line (carterette2007 Figure 2);
- :func:`plot_reliability` — reliability diagram of P(ΔMAP < 0) itself: observed frequency of ΔMAP < 0 in
  each forecast bin, Wilson intervals, the bins shaded, and the share of pairs per bin (sharpness);
- :func:`plot_expected_vs_true` — E[MAP] vs true MAP, manual runs marked (carterette-allan2007 Figure 1);
- :func:`plot_tau_vs_judgments` — Kendall τ against the number of judgments (carterette-allan2007 Figure 2).
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from bayeval.display import display_name
from bayeval.errors import BayevalInputError
from bayeval.experiments.statistics import BIN_EDGES, confidence_bins, proper_scores
from bayeval.stats.forecast import RELIABILITY_EDGES

__all__ = ["plot_calibration", "plot_expected_vs_true", "plot_reliability", "plot_tau_vs_judgments"]

# carterette2007 Table 2 (MTC, RTC over ad hoc 3, 5-8) at the bins' lower edges, for reference markers
_PAPER_TABLE2 = {"MTC (paper)": (0.617, 0.731, 0.701, 0.690, 0.780, 0.704, 0.683),
                 "RTC (paper)": (0.619, 0.763, 0.780, 0.849, 0.931, 0.934, 0.989)}


def _label(method: str, confidence: str) -> str:
    """A panel title or legend entry in words: the study method's human name and the confidence."""
    return f"{display_name(method)} · {confidence}"


def _figure(ax):
    import matplotlib

    if ax is None:
        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5.5, 4.5))
        return fig, ax
    return ax.figure, ax


def _save(fig, path) -> None:
    if path is not None:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        fig.savefig(path, dpi=120, bbox_inches="tight")
        import matplotlib.pyplot as plt

        plt.close(fig)


def plot_reliability(frame: pd.DataFrame, methods, *, path=None, manual=None, split: str = "all", title: str = ""):
    """Reliability diagram of P(ΔMAP < 0): one panel per (method, confidence), one line per group of ``split``.

    Each point is a bin of :data:`~bayeval.stats.forecast.RELIABILITY_EDGES` at its mean forecast, with the
    observed frequency of ΔMAP < 0 and its Wilson 95% interval; the grey band is where a calibrated
    forecaster's frequency lies (the bin itself), and the bars at the bottom are the share of pairs in each
    bin (sharpness: mass near 0 and 1).

    Parameters
    ----------
    frame : pandas.DataFrame
        A trial table.
    methods : sequence of (method, confidence)
    path : path, optional
        Save the figure there.
    manual : sequence of str, optional
        Manual run tags (for ``split="run_type"``).
    split : {"all", "pair_type", "run_type"}
        Which groups to draw (:func:`~bayeval.experiments.statistics.proper_scores`).

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    _, rel = proper_scores(frame, manual=manual)
    rel = rel[rel["split"] == split]
    if not len(methods):
        raise BayevalInputError("methods: nothing to plot")
    fig, axes = plt.subplots(1, len(methods), figsize=(3.6 * len(methods), 3.8), squeeze=False, sharey=True)
    edges = np.asarray(RELIABILITY_EDGES)
    for ax, (m, c) in zip(axes[0], methods, strict=True):
        for lo, hi in zip(edges[:-1], edges[1:], strict=True):
            ax.fill_between([lo, hi], [lo, lo], [hi, hi], color="0.85", lw=0)
        ax.plot([0, 1], [0, 1], color="black", lw=0.8)
        sub = rel[(rel["method"] == m) & (rel["confidence"] == c)]
        for g, b in sub.groupby("group", sort=True):
            total = b["n"].sum()
            b = b[b["n"] > 0]
            if not len(b):
                continue
            err = np.clip(np.vstack([b["frequency"] - b["lower"], b["upper"] - b["frequency"]]), 0, None)
            line = ax.errorbar(b["mean_forecast"], b["frequency"], yerr=err, marker="o", ms=3, capsize=2, lw=1,
                               label=f"{g} (n={total})" if split != "all" else f"n={total}")
            ax.bar((b["lower_edge"] + b["upper_edge"]) / 2, 0.25 * b["n"] / total,
                   width=(b["upper_edge"] - b["lower_edge"]) * 0.9, bottom=0, alpha=0.35,
                   color=line[0].get_color())
        ax.set_xlim(-0.01, 1.01)
        ax.set_ylim(-0.01, 1.01)
        ax.set_xlabel("forecast P(ΔMAP < 0)")
        ax.set_title(_label(m, c), fontsize=9)
        ax.legend(fontsize=7, loc="upper left")
    axes[0][0].set_ylabel("observed frequency of ΔMAP < 0")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    _save(fig, path)
    return fig


def plot_calibration(frame: pd.DataFrame, methods, *, path=None, ax=None, paper: bool = True, title: str = ""):
    """Accuracy against mean confidence in each confidence bin, one line per (method, confidence).

    Parameters
    ----------
    frame : pandas.DataFrame
        A trial table.
    methods : sequence of (method, confidence)
    path : path, optional
        Save the figure there (png, pdf, svg).
    paper : bool
        Also mark carterette2007 Table 2's MTC and RTC accuracies (at the bins' midpoints).

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, ax = _figure(ax)
    bins = confidence_bins(frame)
    ax.plot([0.5, 1.0], [0.5, 1.0], color="black", lw=1, label="ideal (W̄ = 0)")
    for m, c in methods:
        b = bins[(bins["method"] == m) & (bins["confidence"] == c) & (bins["n"] > 0)]
        if not len(b):
            continue
        err = np.clip(np.vstack([b["accuracy"] - b["lower"], b["upper"] - b["accuracy"]]), 0, None)
        ax.errorbar(b["mean_confidence"], b["accuracy"], yerr=err, marker="o", ms=4, capsize=2, label=_label(m, c))
    if paper:
        mids = [(lo + hi) / 2 for lo, hi in zip(BIN_EDGES, (*BIN_EDGES[1:], 1.0), strict=True)]
        for (name, acc), mk in zip(_PAPER_TABLE2.items(), ("x", "+"), strict=True):
            ax.scatter(mids, acc, marker=mk, color="grey", label=name, zorder=3)
    ax.set_xlabel("confidence max(P, 1 − P)")
    ax.set_ylabel("accuracy of the called sign")
    ax.set_xlim(0.48, 1.01)
    ax.set_ylim(0.4, 1.01)
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title(title or "Confidence vs accuracy")
    _save(fig, path)
    return fig


def _per_run(frame: pd.DataFrame, method: str, confidence: str) -> pd.DataFrame:
    f = frame[(frame["method"] == method) & (frame["confidence"] == confidence)]
    a = f[["trial", "run_a", "e_map_a", "true_map_a"]].set_axis(["trial", "run", "e_map", "true_map"], axis=1)
    b = f[["trial", "run_b", "e_map_b", "true_map_b"]].set_axis(["trial", "run", "e_map", "true_map"], axis=1)
    return pd.concat([a, b]).drop_duplicates(["trial", "run"])


def plot_expected_vs_true(frame: pd.DataFrame, methods, *, manual=(), path=None, title: str = ""):
    """E[MAP] of every run in every trial against its true MAP, one panel per (method, confidence).

    Manual runs (``manual``: their tags, e.g. from ``runs.tsv``) are drawn as red triangles.
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    methods = list(methods)
    fig, axes = plt.subplots(1, len(methods), figsize=(4.2 * len(methods), 4.2), squeeze=False, sharey=True,
                             layout="constrained")
    manual = set(manual)
    for ax, (m, c) in zip(axes[0], methods, strict=True):
        r = _per_run(frame, m, c)
        is_man = r["run"].isin(manual).to_numpy()
        ax.scatter(r["true_map"][~is_man], r["e_map"][~is_man], s=6, alpha=0.35, label="automatic")
        if is_man.any():
            ax.scatter(r["true_map"][is_man], r["e_map"][is_man], s=14, marker="^", color="red", alpha=0.7,
                       label="manual")
        hi = float(max(r["true_map"].max(), r["e_map"].max(), 0.05)) if len(r) else 1.0
        ax.plot([0, hi], [0, hi], color="black", lw=1)
        ax.set_xlabel("true MAP (complete qrels)")
        ax.set_title(_label(m, c), fontsize=9)
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("E[MAP]")  # one y label: the panels share the axis, so none overlaps a neighbour
    if title:
        fig.suptitle(title)
    _save(fig, path)
    return fig


def plot_tau_vs_judgments(frame: pd.DataFrame, methods, *, path=None, title: str = "", bins: int = 8):
    """Kendall τ of each trial against the number of judgments it made, per (method, confidence).

    Points are trials; the line joins the mean τ in equal-count bins of the judgments (log scale).
    """
    fig, ax = _figure(None)
    for m, c in methods:
        t = frame[(frame["method"] == m) & (frame["confidence"] == c)].groupby("trial").agg(
            judgments=("judgments", "first"), tau=("tau", "first")).dropna()
        if not len(t):
            continue
        pts = ax.scatter(t["judgments"].clip(lower=1), t["tau"], s=6, alpha=0.3)
        q = pd.qcut(t["judgments"].rank(method="first"), min(bins, len(t)), labels=False)
        g = t.groupby(q).agg(j=("judgments", "median"), tau=("tau", "mean"))
        ax.plot(g["j"].clip(lower=1), g["tau"], color=pts.get_facecolor()[0][:3], marker="o", label=_label(m, c))
    ax.set_xscale("log")
    ax.set_xlabel("judgments on the original runs")
    ax.set_ylabel("Kendall τ (E[MAP] vs true MAP, k runs)")
    ax.legend(fontsize=7)
    ax.set_title(title or "τ vs number of judgments")
    _save(fig, path)
    return fig
