r"""Bayesian confidence in a comparison of two systems, from a relevance model's posterior.

The plug-in confidence (MTC/RTC) treats the probabilities of relevance p as known:
:math:`P(\Delta\mathrm{MAP}<0\mid\hat p)`, with only the Bernoulli uncertainty of the unjudged documents.
The Bayesian confidence integrates over the posterior of the model's parameters as well:

.. math::

    P(\Delta\mathrm{MAP}<0\mid\mathcal J) = \int P(\Delta\mathrm{MAP}<0\mid p)\,\pi(p\mid\mathcal J)\,dp
    \approx \frac1K\sum_k \mathbb 1[\Delta\mathrm{MAP}(X^{(k)})<0],\quad X^{(k)}_i\sim\mathrm{Bernoulli}(p^{(k)}_i),

with :math:`p^{(k)}` a posterior draw of every document's probability (Monte Carlo through
:func:`bayeval.expected.compare_systems` with ``method="mc"``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError
from bayeval.relevance.results import RelevanceEstimate

__all__ = ["BayesianConfidence", "bayesian_confidence"]


@dataclass(frozen=True, eq=False)
class BayesianConfidence:
    """Plug-in and Bayesian P(Δ < 0) side by side.

    Attributes
    ----------
    bayesian : bayeval.expected.PairwiseComparison
        Monte Carlo over posterior draws of p (parameter + Bernoulli uncertainty).
    plugin : bayeval.expected.PairwiseComparison
        With the point p (Bernoulli uncertainty only).
    parameter_uncertainty : bool
        Whether the estimate had posterior draws (else ``bayesian`` is Monte Carlo at the point p).
    """

    bayesian: object
    plugin: object
    parameter_uncertainty: bool

    def to_frame(self, per_topic: bool = False) -> pd.DataFrame:
        """``run_a, run_b, topic, measure, delta_expected, p_less_plugin, p_less_bayes, sd_plugin, sd_bayes``."""
        b = self.bayesian.to_frame(per_topic=per_topic)
        p = self.plugin.to_frame(per_topic=per_topic)
        out = p[["run_a", "run_b", "topic", "measure", "delta_expected"]].copy()
        out["p_less_plugin"] = p["p_less"].to_numpy()
        out["p_less_bayes"] = b["p_less"].to_numpy()
        out["sd_plugin"] = np.sqrt(np.maximum(p["delta_variance"].to_numpy(), 0))
        out["sd_bayes"] = np.sqrt(np.maximum(b["delta_variance"].to_numpy(), 0))
        return out

    def summary(self) -> str:
        f = self.to_frame()
        conf = lambda x: np.maximum(x, 1 - x)  # noqa: E731
        cp, cb = conf(f["p_less_plugin"].to_numpy()), conf(f["p_less_bayes"].to_numpy())
        lines = [f"P(Δ{self.plugin.measure} < 0): {len(f)} pairs; plug-in ({self.plugin.method}) vs Bayesian "
                 f"(mc, {self.bayesian.draws} draws{'' if self.parameter_uncertainty else ', point p only'})"]
        for a in (0.95, 0.9):
            lines.append(f"  confidence >= {a:.2f}: plug-in {int((cp >= a).sum())}, Bayesian {int((cb >= a).sum())}")
        lines.append(f"  mean |P_bayes - P_plugin| = {np.abs(f['p_less_bayes'] - f['p_less_plugin']).mean():.4f}")
        return "\n".join(lines)


def bayesian_confidence(data: RankData, estimate: RelevanceEstimate, *, measure: str = "AP", pairs=None,
                        draws: int | None = 2000, plugin_method: str = "exact", seed=0,
                        progress: bool | None = None) -> BayesianConfidence:
    """P(Δ < 0) for pairs of systems: Monte Carlo over the posterior of p, and the plug-in version.

    Parameters
    ----------
    data : RankData
        The collection the estimate was made on.
    estimate : RelevanceEstimate
        From :func:`estimate_probabilities` (with posterior draws for a sampled fit).
    measure : str
        ``"AP"`` (ΔMAP), ``"P@10"``, ``"nDCG@10"``, …
    pairs : sequence of (run_a, run_b), optional
    draws : int
        Monte Carlo draws (each uses posterior draw ``d % n_draws`` of p).
    plugin_method : {"exact", "delta", "paper", "mc"}
        How the plug-in confidence is computed at the point p.
    seed : int or None

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> from bayeval.relevance import estimate_probabilities
    >>> col = make_collection(n_topics=3, n_systems=3, n_docs=60, depth=20, judged_depth=5, seed=4)
    >>> data = RankData.build(col.runs, col.judgments, depth=20)
    >>> est = estimate_probabilities(data, "rtc", fit="laplace", p_draws=50, draws=100, chains=2)
    >>> bc = bayesian_confidence(data, est, draws=200)
    >>> list(bc.to_frame().columns)[-2:]
    ['sd_plugin', 'sd_bayes']
    """
    from bayeval.expected import compare_systems

    if not isinstance(estimate, RelevanceEstimate):
        raise BayevalInputError(f"estimate: expected a RelevanceEstimate, got {type(estimate).__name__}")
    if tuple(estimate.topics) != tuple(data.topics):
        raise BayevalInputError("estimate: made on a different collection (topics differ from data's)")
    probs = estimate.arrays(draws=estimate.has_draws)
    bayes = compare_systems(data, probs, pairs=pairs, measure=measure, method="mc", draws=draws, seed=seed,
                            progress=progress)
    plug = compare_systems(data, estimate.arrays(), pairs=pairs, measure=measure, method=plugin_method,
                           draws=draws if plugin_method == "mc" else None, seed=seed, progress=progress)
    return BayesianConfidence(bayes, plug, estimate.has_draws)
