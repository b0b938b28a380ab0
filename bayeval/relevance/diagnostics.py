r"""Diagnostics for notebook users: reliability of predicted probabilities and prior comparison.

- :func:`reliability_table` / :func:`reliability_diagram`: predicted p against the observed rate of
  relevance on held-out judgments, in bins of p (a calibrated model lies on the diagonal).
- :func:`compare_priors`: the same data under several prior configurations (``models/*.toml``), with
  held-out log loss, AUC, Brier, mean p and the held-out ELPD
  :math:`\sum_i\log\frac1K\sum_k p(y_i\mid p_i^{(k)})` side by side.

Posterior diagnostics of each fit (``az.summary``, r-hat, ESS, divergences) are on
:class:`~bayeval.relevance.results.FitResult` (``summary()``, ``rhat()``, ``ess()``, ``divergences()``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayeval.errors import BayevalInputError
from bayeval.relevance.heldout import HeldOutSplit, score_probabilities

__all__ = ["PriorComparison", "compare_priors", "heldout_elpd", "reliability_diagram", "reliability_table"]


def reliability_table(y, p, bins: int = 10, strategy: str = "quantile") -> pd.DataFrame:
    """Predicted vs observed rate per bin of p.

    Parameters
    ----------
    y, p : array-like
        Held-out relevance (0/1) and predicted probabilities.
    bins : int
    strategy : {"quantile", "uniform"}
        Equal-count bins (default; p of unjudged documents is concentrated near 0) or equal-width.

    Returns
    -------
    DataFrame
        ``lower, upper, n, mean_p, rate, rate_lo, rate_hi`` (Wilson 95% interval of the rate).

    Examples
    --------
    >>> t = reliability_table([0, 0, 1, 1], [0.1, 0.2, 0.8, 0.9], bins=2)
    >>> t["rate"].tolist()
    [0.0, 1.0]
    """
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    p = np.asarray(p, dtype=np.float64).reshape(-1)
    if len(y) != len(p) or not len(y):
        raise BayevalInputError("y, p: need the same positive length")
    if strategy == "quantile":
        edges = np.unique(np.quantile(p, np.linspace(0, 1, bins + 1)))
    elif strategy == "uniform":
        edges = np.linspace(0, 1, bins + 1)
    else:
        raise BayevalInputError(f"strategy: must be 'quantile' or 'uniform', got {strategy!r}")
    k = np.clip(np.searchsorted(edges, p, side="right") - 1, 0, len(edges) - 2)
    rows = []
    z = 1.959963984540054
    for b in range(len(edges) - 1):
        m = k == b
        n = int(m.sum())
        if not n:
            continue
        r = y[m].mean()
        den = 1 + z * z / n
        c = (r + z * z / (2 * n)) / den
        h = z * np.sqrt(r * (1 - r) / n + z * z / (4 * n * n)) / den
        rows.append({"lower": edges[b], "upper": edges[b + 1], "n": n, "mean_p": p[m].mean(), "rate": r,
                     "rate_lo": c - h, "rate_hi": c + h})
    return pd.DataFrame(rows)


def reliability_diagram(y, p, bins: int = 10, ax=None, label: str | None = None, strategy: str = "quantile"):
    """Plot :func:`reliability_table` (matplotlib): observed rate with 95% intervals against mean p."""
    import matplotlib.pyplot as plt

    t = reliability_table(y, p, bins, strategy)
    if ax is None:
        _, ax = plt.subplots(figsize=(4.5, 4.5))
    hi = float(max(t["mean_p"].max(), t["rate_hi"].max(), 0.05)) * 1.05
    ax.plot([0, hi], [0, hi], color="0.6", lw=1, ls="--")
    ax.errorbar(t["mean_p"], t["rate"], yerr=[t["rate"] - t["rate_lo"], t["rate_hi"] - t["rate"]], marker="o",
                capsize=2, label=label)
    ax.set_xlabel("predicted p")
    ax.set_ylabel("observed rate of relevance")
    ax.set_xlim(0, hi)
    ax.set_ylim(0, hi)
    if label:
        ax.legend()
    return ax


def heldout_elpd(y, p_draws) -> float:
    r"""Held-out ELPD :math:`\sum_i \log \frac1K\sum_k p_i^{(k)y_i}(1-p_i^{(k)})^{1-y_i}`.

    ``p_draws`` is (K, n) posterior draws or (n,) a point prediction.
    """
    from scipy.special import logsumexp

    y = np.asarray(y, dtype=np.float64)
    P = np.clip(np.atleast_2d(np.asarray(p_draws, dtype=np.float64)), 1e-6, 1 - 1e-6)
    ll = y * np.log(P) + (1 - y) * np.log1p(-P)
    return float(np.sum(logsumexp(ll, axis=0) - np.log(P.shape[0])))


@dataclass(frozen=True, eq=False)
class PriorComparison:
    """Held-out scores of several prior configurations on the same data (one row each)."""

    table: pd.DataFrame
    estimates: dict

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()

    def summary(self) -> str:
        cols = ["log_loss", "base_log_loss", "auc", "brier", "mean_p", "rate", "elpd"]
        return self.table[cols].to_string(float_format=lambda v: f"{v:.4f}")

    def best(self, by: str = "elpd") -> str:
        """The configuration with the best score (highest ELPD/AUC, lowest loss)."""
        s = self.table[by]
        return str(s.idxmax() if by in ("elpd", "auc") else s.idxmin())


def compare_priors(split: HeldOutSplit, configs: Sequence = ("rtc-default", "rtc-mtc", "rtc-weak"), *,
                   method: str = "laplace", p_draws: int = 200, seed=0, **fit_kwargs) -> PriorComparison:
    """Fit each configuration on ``split.data`` and score it on the held-out targets.

    Parameters
    ----------
    split : HeldOutSplit
        From :func:`~bayeval.relevance.heldout.shallow_pool_split` (or built by hand).
    configs : sequence of str or config objects
        Names in ``models/`` (:func:`~bayeval.relevance.config.list_configs`), paths or objects.
    method : str
        Fit method ("laplace" by default: posterior draws for the ELPD at the cost of a MAP fit).
    p_draws : int
        Posterior draws of p for the ELPD.

    Returns
    -------
    PriorComparison
    """
    from bayeval.relevance.config import load_config
    from bayeval.relevance.estimate import estimate_probabilities

    rows, ests = {}, {}
    for c in configs:
        cfg = load_config(c)
        est = estimate_probabilities(split.data, cfg, fit=method, p_draws=p_draws, seed=seed, **fit_kwargs)
        y, p = split.gather(est.p)
        row = score_probabilities(y, p)
        row["elpd"] = heldout_elpd(y, split.gather(est.draws)[1] if est.has_draws else p)
        row["description"] = getattr(cfg, "description", "")
        rows[cfg.name] = row
        ests[cfg.name] = est
    return PriorComparison(pd.DataFrame.from_dict(rows, orient="index"), ests)
