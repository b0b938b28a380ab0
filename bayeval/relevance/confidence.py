r"""Bayesian confidence in a comparison of two systems, from a relevance model's posterior.

The plug-in confidence (MTC/RTC) treats the probabilities of relevance p as known:
:math:`P(\Delta\mathrm{MAP}<0\mid\hat p)`, with only the Bernoulli uncertainty of the unjudged documents.
The Bayesian confidence integrates over the posterior of the model's parameters as well:

.. math::

    P(\Delta\mathrm{MAP}<0\mid\mathcal J) = \int P(\Delta\mathrm{MAP}<0\mid p)\,\pi(p\mid\mathcal J)\,dp
    \approx \frac1K\sum_k \mathbb 1[\Delta\mathrm{MAP}(X^{(k)})<0],\quad X^{(k)}_i\sim\mathrm{Bernoulli}(p^{(k)}_i),

with :math:`p^{(k)}` a posterior draw of every document's probability (Monte Carlo through
:func:`bayeval.expected.compare_systems` with ``method="mc"``), or in closed form (``method="exact"``,
``"delta"``, ``"paper"``): the moments of Δ given each draw, combined by the law of total variance
:math:`E=\overline{E_k}`, :math:`\mathrm{Var}=\overline{\mathrm{Var}_k}+\mathrm{var}_k(E_k)`, then
:math:`\Phi(-E/\sqrt{\mathrm{Var}})` (docs/expected.md).

:func:`run_effect_draws` adds what a relevance model fitted on a few runs' judgments cannot know: whether
the documents only *other* runs retrieve are more or less often relevant than it predicts. Each run gets
a log-odds offset shared by its documents across all topics, so that the error does not average away
over topics as independent Bernoulli noise does.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from scipy.special import expit, logit

from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError
from bayeval.expected import compare_systems
from bayeval.relevance.results import RelevanceEstimate

__all__ = ["BayesianConfidence", "bayesian_confidence", "run_effect_draws"]


@dataclass(frozen=True, eq=False)
class BayesianConfidence:
    """Plug-in and Bayesian P(Δ < 0) side by side.

    Attributes
    ----------
    bayesian : bayeval.expected.PairwiseComparison
        Over posterior draws of p (parameter + Bernoulli uncertainty): Monte Carlo, or a closed form per draw
        combined by the law of total variance (its ``method``).
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
        how = (f"mc, {self.bayesian.draws} draws" if self.bayesian.method == "mc"
               else f"{self.bayesian.method} over the posterior draws")
        lines = [f"P(Δ{self.plugin.measure} < 0): {len(f)} pairs; plug-in ({self.plugin.method}) vs Bayesian "
                 f"({how}{'' if self.parameter_uncertainty else ', point p only'})"]
        for a in (0.95, 0.9):
            lines.append(f"  confidence >= {a:.2f}: plug-in {int((cp >= a).sum())}, Bayesian {int((cb >= a).sum())}")
        lines.append(f"  mean |P_bayes - P_plugin| = {np.abs(f['p_less_bayes'] - f['p_less_plugin']).mean():.4f}")
        return "\n".join(lines)


def bayesian_confidence(data: RankData, estimate: RelevanceEstimate, *, measure: str = "AP", pairs=None,
                        draws: int | None = 2000, plugin_method: str = "exact", method: str = "mc",
                        closed_form_draws: int | None = None, seed=0, progress: bool | None = None
                        ) -> BayesianConfidence:
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
    method : {"mc", "exact", "delta", "paper"}
        How the Bayesian confidence is computed over the posterior draws of p: Monte Carlo (default), or the
        closed form given each draw combined by the law of total variance.
    closed_form_draws : int, optional
        How many (evenly spaced) posterior draws a closed-form ``method`` combines (default: the estimate's
        ``closed_form_draws``, 25; each costs one closed-form pass; :meth:`RelevanceEstimate.arrays_for`).
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
    if not isinstance(estimate, RelevanceEstimate):
        raise BayevalInputError(f"estimate: expected a RelevanceEstimate, got {type(estimate).__name__}")
    if tuple(estimate.topics) != tuple(data.topics):
        raise BayevalInputError("estimate: made on a different collection (topics differ from data's)")
    if closed_form_draws is not None:
        estimate = replace(estimate, closed_form_draws=closed_form_draws)
    bayes = compare_systems(data, estimate, pairs=pairs, measure=measure, method=method,
                            draws=draws if method == "mc" else None, seed=seed, progress=progress)
    plug = compare_systems(data, estimate.arrays_for(None), pairs=pairs, measure=measure, method=plugin_method,
                           draws=draws if plugin_method == "mc" else None, seed=seed, progress=progress)
    return BayesianConfidence(bayes, plug, estimate.has_draws)


def run_effect_draws(data: RankData, probabilities, sd: float, *, draws: int = 200, seed=0) -> list[np.ndarray]:
    r"""Draws of p with a random log-odds effect per run: model uncertainty shared across topics.

    For draw k, every run s gets :math:`u^{(k)}_s\sim N(0, \mathrm{sd}^2)`, and every unjudged document i
    of every topic
    :math:`\mathrm{logit}\,p^{(k)}_i = \mathrm{logit}\,p^{(k,0)}_i + \frac1{|S_i|}\sum_{s\in S_i}u^{(k)}_s`,
    with :math:`S_i` the runs of ``data`` that retrieve i and :math:`p^{(k,0)}` draw ``k mod n`` of the given
    posterior draws (or the point p). Documents no run retrieves, and judged documents, are unchanged.
    A document only one run retrieves moves with that run's effect; one that every run retrieves
    hardly moves. Because :math:`u_s` is shared by the run's documents in every topic, the error of a
    run's E[MAP] no longer shrinks as 1/√T, which is what makes plug-in confidences over-confident for
    runs whose documents the judged runs did not retrieve (the manual runs of TREC-8, docs/robustness-trec8.md).

    Parameters
    ----------
    data : RankData
    probabilities : sequence of ndarray
        Per topic the point p (n_t,) or posterior draws (n, n_t).
    sd : float
        Standard deviation of the run effects on the log-odds scale (0: the input, repeated).
    draws : int
    seed : int, Generator or None

    Returns
    -------
    list of ndarray
        Per topic (draws, n_t) float32.

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=2, n_systems=3, n_docs=40, depth=10, judged_depth=2, seed=1)
    >>> data = RankData.build(col.runs, col.judgments, depth=10)
    >>> out = run_effect_draws(data, [np.full(tr.n_docs, 0.2) for tr in data], 1.0, draws=500, seed=0)
    >>> tr, d = data[0], out[0]
    >>> bool(np.all(d[:, tr.judged] == tr.relevant[tr.judged])), bool(d[:, ~tr.judged].std(axis=0).min() > 0.02)
    (True, True)
    """
    if isinstance(sd, bool) or not isinstance(sd, (int, float, np.floating)) or not np.isfinite(sd) or sd < 0:
        raise BayevalInputError(f"sd: must be a non-negative number, got {sd!r}")
    if isinstance(draws, bool) or not isinstance(draws, (int, np.integer)) or draws < 1:
        raise BayevalInputError(f"draws: must be a positive integer, got {draws!r}")
    if len(probabilities) != len(data):
        raise BayevalInputError(f"probabilities: expected one array per topic ({len(data)}), got {len(probabilities)}")
    rng = np.random.default_rng(seed)
    u = rng.normal(0.0, float(sd), size=(draws, len(data.systems)))
    out = []
    for tr, p in zip(data, probabilities, strict=True):
        p = np.asarray(p, dtype=np.float64)
        base = p[np.arange(draws) % len(p)] if p.ndim == 2 else np.broadcast_to(p, (draws, tr.n_docs))
        member = (np.asarray(tr.ranks) > 0).astype(np.float64)  # (n_t, S)
        n = member.sum(axis=1)
        w = np.divide(member, n[:, None], out=np.zeros_like(member), where=n[:, None] > 0)
        eta = logit(np.clip(base, 1e-9, 1 - 1e-9)) + u @ w.T
        d = np.where(tr.judged[None, :] | (n == 0)[None, :], base, expit(eta))
        d[:, tr.judged] = tr.relevant[tr.judged]
        out.append(d.astype(np.float32))
    return out
