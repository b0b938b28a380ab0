"""Score shift per run in a biased-pool study. matplotlib is imported only when called."""

from __future__ import annotations

import numpy as np

from bayeval.bias.study import BiasStudy
from bayeval.errors import BayevalInputError

__all__ = ["plot_shifts"]


def plot_shifts(study: BiasStudy, measure: str | None = None, *, methods=None, path=None, ax=None):
    """Per studied run, the change of its score (new − original) under each method, runs by original score.

    Bars below zero are runs the biased qrels under-estimate (AP, P@k), above zero over-estimated
    (bpref, P@k(j)); a good repair keeps every bar near zero.

    Parameters
    ----------
    study : BiasStudy
    measure : str, optional
        One measure of the study (default its first).
    methods : sequence of str, optional
        Methods to draw (default every method that defines ``measure``).
    path : str or PathLike, optional
        Save the figure there (format from the extension).
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    if not isinstance(study, BiasStudy):
        raise BayevalInputError(f"study: expected a BiasStudy, got {type(study).__name__}")
    measure = study.measures[0] if measure is None else str(measure)
    frame = study.to_frame()
    frame = frame[frame["measure"] == measure]
    if frame.empty:
        raise BayevalInputError(f"measure: {measure!r} is not part of the study ({', '.join(study.measures)})")
    available = list(dict.fromkeys(frame["method"]))
    methods = available if methods is None else [str(m) for m in methods]
    bad = [m for m in methods if m not in available]
    if bad:
        raise BayevalInputError(f"methods: {bad} not available for {measure} (have {available})")
    focus = set(np.asarray(study.runs)[study.focus])
    frame = frame[frame["run"].isin(focus)]
    import matplotlib.pyplot as plt

    order = (frame[frame["method"] == methods[0]].sort_values("original", ascending=False)["run"].tolist())
    if ax is None:
        fig, ax = plt.subplots(figsize=(max(6.0, 0.12 * len(order) * len(methods) + 2), 3.6))
    else:
        fig = ax.figure
    x = np.arange(len(order))
    width = 0.8 / len(methods)
    for i, m in enumerate(methods):
        f = frame[frame["method"] == m].set_index("run").reindex(order)
        ax.bar(x + (i - (len(methods) - 1) / 2) * width, f["shift"].to_numpy(float), width, label=m)
    ax.axhline(0.0, color="0.3", lw=0.8)
    ax.set_xticks(x)
    ax.set_xticklabels(order, rotation=90, fontsize=6 if len(order) > 30 else 8)
    ax.set_ylabel(f"{measure}: new − original")
    ax.set_title(f"{study.scenario}: score shift per run ({measure})", fontsize=10)
    ax.legend(fontsize=7)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=150)
    return fig
