"""Baseline vs reuse scores per site (paper Figures 1 and 2). matplotlib is imported only when called."""

from __future__ import annotations

import numpy as np

from bayeval.design.scores import TopicScores
from bayeval.errors import BayevalInputError
from bayeval.stats import kendall_tau

__all__ = ["plot_reuse"]


def _scatter(ax, frame, x: str, y: str, xlabel: str, ylabel: str, title: str) -> None:
    sites = list(dict.fromkeys(frame["site"]))
    markers = "os^vD<>pPX*h"
    for i, s in enumerate(sites):
        f = frame[frame["site"] == s]
        ax.scatter(f[x], f[y], label=s, marker=markers[i % len(markers)], s=28, alpha=0.85)
    vals = np.concatenate([frame[x].to_numpy(float), frame[y].to_numpy(float)])
    vals = vals[np.isfinite(vals)]
    lo, hi = (float(vals.min()), float(vals.max())) if vals.size else (0.0, 1.0)
    pad = 0.05 * (hi - lo or 1.0)
    ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], color="0.5", lw=0.8, ls="--", zorder=0)
    ax.set_xlim(lo - pad, hi + pad)
    ax.set_ylim(lo - pad, hi + pad)
    ax.set_aspect("equal", adjustable="box")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)


def plot_reuse(analysis, truth: TopicScores | None = None, *, ax=None, path=None):
    """Plot each run's mean over its site-baseline topics against its mean over its reuse topics.

    Parameters
    ----------
    analysis : ReusabilityAnalysis
        From :func:`~bayeval.design.analyze_design`.
    truth : TopicScores, optional
        Scores of the same runs on complete judgments (e.g. ``SimulatedDesign.true_scores()``). With
        it the figure has two panels as paper Figure 1: site-baseline mean vs true mean over the
        same topics (left), reuse mean vs true mean over the same topics (right).
    ax : matplotlib Axes, optional
        Where to draw the single-panel plot (not with ``truth``).
    path : str or PathLike, optional
        Save the figure there (format from the extension).

    Returns
    -------
    matplotlib.figure.Figure

    Notes
    -----
    One marker per site; the dashed line is y = x. Points far from it mean the reuse topics score
    runs differently from the topics their site contributed to; points out of order along it mean
    a different ranking (Kendall's τ, reported in the title).

    References
    ----------
    .. [1] Carterette et al., SIGIR 2010, Figures 1 and 2.
    """
    import matplotlib.pyplot as plt

    runs = analysis.runs
    overall = analysis.overall
    m = analysis.measure
    if truth is None:
        if ax is None:
            fig, ax = plt.subplots(figsize=(5.2, 5.0))
        else:
            fig = ax.figure
        _scatter(ax, runs, "baseline", "reuse", f"{m}, site baseline topics", f"{m}, site reuse topics",
                 f"baseline vs reuse: tau = {overall['tau']:.3f}, RMSE = {overall['rmse']:.3f}")
    else:
        if ax is not None:
            raise BayevalInputError("ax: a plot with truth has two panels; leave ax out")
        if not isinstance(truth, TopicScores):
            raise BayevalInputError(f"truth: expected TopicScores, got {type(truth).__name__}")
        design = analysis.design
        t = truth.select(list(runs["run"]), design.topics)
        true_base, true_reuse = np.full(len(runs), np.nan), np.full(len(runs), np.nan)
        for i, site in enumerate(runs["site"]):
            base, reuse = design.masks("within", site)
            vals = t.values[i]
            true_base[i] = vals[base].mean() if base.any() else np.nan
            true_reuse[i] = vals[reuse].mean() if reuse.any() else np.nan
        frame = runs.assign(true_baseline=true_base, true_reuse=true_reuse)
        fig, axes = plt.subplots(1, 2, figsize=(10, 5.0))

        _scatter(axes[0], frame, "true_baseline", "baseline", f"true {m} (complete judgments)",
                 f"{m}, site baseline topics",
                 f"site baseline topics: tau = {kendall_tau(frame['true_baseline'], frame['baseline']):.3f}")
        _scatter(axes[1], frame, "true_reuse", "reuse", f"true {m} (complete judgments)", f"{m}, site reuse topics",
                 f"site reuse topics: tau = {kendall_tau(frame['true_reuse'], frame['reuse']):.3f}")
        ax = axes[1]
    n_sites = runs["site"].nunique()
    if n_sites <= 16:
        ax.legend(fontsize=7, loc="lower right", title="site", title_fontsize=7, ncol=1 if n_sites <= 8 else 2)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=130)
    return fig
