r"""Diagnostics for notebook users: reliability of predicted probabilities and prior comparison.

- :func:`reliability_table` / :func:`reliability_diagram`: predicted p against the observed rate of
  relevance on held-out judgments, in bins of p (a calibrated model lies on the diagonal).
- :func:`compare_priors`: the same data under several prior configurations (``models/*.toml``): by
  PSIS-LOO over the judged documents (``az.compare``, Pareto-k warnings surfaced) with the judgments one
  has, or — with complete judgments — by held-out log loss, AUC, Brier, mean p and the held-out ELPD
  :math:`\sum_i\log\frac1K\sum_k p(y_i\mid p_i^{(k)})`.
- :func:`prior_predictive_check`: the relevance rates and E[MAP] a prior implies before the data.
- :func:`prior_sensitivity`: how P(ΔMAP < 0) of each pair of runs moves between priors.

Posterior diagnostics of each fit (``az.summary``, r-hat, ESS, divergences) are on
:class:`~bayeval.relevance.results.FitResult` (``summary()``, ``rhat()``, ``ess()``, ``divergences()``).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import logsumexp

from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError
from bayeval.expected import expected_measures
from bayeval.relevance.aggregation import ExpertAggregation
from bayeval.relevance.confidence import bayesian_confidence
from bayeval.relevance.config import RTCConfig, load_config
from bayeval.relevance.estimate import estimate_probabilities
from bayeval.relevance.heldout import HeldOutSplit, score_probabilities
from bayeval.relevance.rtc import RTCEstimator

__all__ = ["PriorComparison", "PriorPredictive", "PriorSensitivity", "compare_priors", "heldout_elpd",
           "prior_predictive_check", "prior_sensitivity", "reliability_diagram", "reliability_table"]


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

    y = np.asarray(y, dtype=np.float64)
    P = np.clip(np.atleast_2d(np.asarray(p_draws, dtype=np.float64)), 1e-6, 1 - 1e-6)
    ll = y * np.log(P) + (1 - y) * np.log1p(-P)
    return float(np.sum(logsumexp(ll, axis=0) - np.log(P.shape[0])))


@dataclass(frozen=True, eq=False)
class PriorComparison:
    """Several prior configurations fitted to the same data, side by side (one row each).

    Attributes
    ----------
    table : DataFrame
        ``kind="loo"``: :func:`arviz.compare`'s columns (``rank, elpd_loo, p_loo, elpd_diff, weight, se,
        dse, warning``) plus ``n`` (judged documents), ``pareto_k_bad`` (documents whose Pareto k exceeds
        ArviZ's threshold: their LOO term is unreliable), ``mean_p`` (mean p of unjudged documents) and
        ``description``. ``kind="heldout"``: log loss, AUC, Brier, mean p, rate and held-out ELPD.
    estimates : dict of str to RelevanceEstimate
    kind : {"loo", "heldout"}
    loo : dict of str to arviz.ELPDData
        Per configuration the PSIS-LOO result (pointwise, with ``pareto_k``); empty for ``heldout``.
    warnings : tuple of str
        Pareto-k and ArviZ warnings, one line each (also issued as :class:`UserWarning`).
    """

    table: pd.DataFrame
    estimates: dict
    kind: str = "heldout"
    loo: dict = None  # type: ignore[assignment]
    warnings: tuple = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "loo", dict(self.loo or {}))

    def to_frame(self) -> pd.DataFrame:
        return self.table.copy()

    def summary(self) -> str:
        if self.kind == "loo":
            cols = ["rank", "elpd_loo", "se", "elpd_diff", "dse", "p_loo", "weight", "pareto_k_bad", "n", "mean_p"]
            head = "PSIS-LOO over the judged documents (higher elpd_loo is better; elpd_diff in units of dse)"
        else:
            cols = ["log_loss", "base_log_loss", "auc", "brier", "mean_p", "rate", "elpd"]
            head = "held-out judgments (lower log loss, higher AUC and ELPD are better)"
        body = self.table[cols].to_string(float_format=lambda v: f"{v:.4f}")
        return "\n".join([head, body, *self.warnings])

    def best(self, by: str | None = None) -> str:
        """The configuration with the best score (highest ELPD/AUC, lowest loss; LOO: rank 0)."""
        by = by or ("elpd_loo" if self.kind == "loo" else "elpd")
        s = self.table[by]
        return str(s.idxmax() if by in ("elpd", "elpd_loo", "auc", "weight") else s.idxmin())

    def plot(self, ax=None):
        """``arviz.plot_compare`` of the LOO table (``kind="loo"`` only)."""
        import arviz as az

        if self.kind != "loo":
            raise BayevalInputError("plot: needs a LOO comparison (compare_priors on a RankData)")
        cols = ["rank", "elpd_loo", "p_loo", "elpd_diff", "weight", "se", "dse", "warning", "scale"]
        return az.plot_compare(self.table[[c for c in cols if c in self.table]], ax=ax)


def compare_priors(data, configs: Sequence = ("rtc-default", "rtc-mtc"), *,
                   method: str = "laplace", p_draws: int = 400, seed=0, **fit_kwargs) -> PriorComparison:
    r"""Fit each configuration to the same judgments and compare them.

    With a :class:`~bayeval.data.RankData` (the judgments one has): PSIS-LOO over the judged documents
    (:meth:`RelevanceEstimate.judged_idata`, :func:`arviz.loo`, :func:`arviz.compare`) — the expected log
    predictive density of a judgment left out, :math:`\mathrm{elpd}_{loo}=\sum_i\log p(y_i\mid y_{-i})`,
    with Pareto-k diagnostics surfaced as warnings. With a :class:`~bayeval.relevance.HeldOutSplit` (for
    users with complete judgments): scores on the held-out judgments.

    Parameters
    ----------
    data : RankData or HeldOutSplit
    configs : sequence of str or config objects
        Names in ``models/`` (:func:`~bayeval.relevance.config.list_configs`), paths (the prior study's
        ``studies/models/rtc-weak.toml``, ``rtc-intercept.toml``) or objects (default: the two shipped RTC
        configurations). For LOO
        every configuration must give posterior draws (the point baselines do not).
    method : str
        Fit method (``"laplace"`` by default: posterior draws at the cost of a MAP fit).
    p_draws : int
        Posterior draws of p (the LOO's Monte Carlo sample).
    seed : int
    **fit_kwargs
        ``draws``, ``chains``, … of the fit.

    Returns
    -------
    PriorComparison

    References
    ----------
    A. Vehtari, A. Gelman, J. Gabry (2017). Practical Bayesian model evaluation using leave-one-out
    cross-validation and WAIC. Statistics and Computing 27, 1413–1432.
    """

    if isinstance(data, HeldOutSplit):
        return _compare_heldout(data, configs, method, p_draws, seed, fit_kwargs)
    if not isinstance(data, RankData):
        raise BayevalInputError(f"data: expected a RankData (LOO) or a HeldOutSplit, got {type(data).__name__}")
    import arviz as az

    ests, idatas, descr = {}, {}, {}
    for c in configs:
        cfg = load_config(c)
        est = estimate_probabilities(data, cfg, fit=method, p_draws=p_draws, seed=seed, **fit_kwargs)
        if not est.has_draws:
            raise BayevalInputError(f"configs: {cfg.name!r} gives no posterior draws of p (a point baseline, or "
                                    "method='map'); LOO compares models with posterior draws")
        ests[cfg.name] = est
        idatas[cfg.name] = est.judged_idata(seed=seed)
        descr[cfg.name] = getattr(cfg, "description", "")
    lines = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loos = {n: az.loo(i, pointwise=True) for n, i in idatas.items()}
        table = az.compare(loos) if len(loos) > 1 else _single_loo_table(loos)
    lines += sorted({f"arviz: {w.message}" for w in caught if issubclass(w.category, UserWarning)
                     and "inplace" not in str(w.message)})
    table = table.copy()
    for n, lo in loos.items():
        k = np.asarray(lo.pareto_k)
        thr = float(getattr(lo, "good_k", 0.7))
        bad = int((k > thr).sum())
        table.loc[n, "pareto_k_bad"] = bad
        table.loc[n, "n"] = k.size
        e = ests[n]
        u = np.concatenate([p[~j] for p, j in zip(e.p, e.judged, strict=True)])
        table.loc[n, "mean_p"] = float(u.mean()) if u.size else np.nan
        table.loc[n, "description"] = descr[n]
        if bad:
            worst = np.argsort(k)[::-1][:3]
            labels = [str(lo.pareto_k.coords["judged_doc"].values[i]) for i in worst]
            lines.append(f"{n}: {bad} of {k.size} judged documents have Pareto k > {thr:.2f} (max {k.max():.2f}; "
                         f"e.g. {', '.join(labels)}): their LOO terms are unreliable — refit without them or use "
                         "more draws")
    table["pareto_k_bad"] = table["pareto_k_bad"].astype(int)
    table["n"] = table["n"].astype(int)
    for line in lines:
        warnings.warn(line, UserWarning, stacklevel=2)
    return PriorComparison(table, ests, "loo", loos, tuple(lines))


def _single_loo_table(loos: dict) -> pd.DataFrame:
    (n, lo), = loos.items()
    return pd.DataFrame({"rank": [0], "elpd_loo": [lo.elpd_loo], "p_loo": [lo.p_loo], "elpd_diff": [0.0],
                         "weight": [1.0], "se": [lo.se], "dse": [0.0], "warning": [bool(lo.warning)],
                         "scale": [lo.scale]}, index=[n])


def _compare_heldout(split: HeldOutSplit, configs, method, p_draws, seed, fit_kwargs) -> PriorComparison:
    """Fit each configuration on ``split.data`` and score it on the held-out targets."""

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
    return PriorComparison(pd.DataFrame.from_dict(rows, orient="index"), ests, "heldout")


# --- prior predictive checks ----------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class PriorPredictive:
    """What a prior implies before the judgments inform the calibration and aggregation.

    Attributes
    ----------
    config : str
    systems : tuple of str
    rate : ndarray, shape (draws,)
        Per prior draw, the mean p over every document (judged ones included: compare with ``judged_rate``).
    judged_rate : float
        The observed fraction of judged documents that are relevant.
    expected : ndarray, shape (draws, systems)
        Per prior draw, E[measure] of every run (unjudged documents at the draw's p, judged ones at
        their judgment).
    measure : str
    """

    config: str
    systems: tuple
    rate: np.ndarray
    judged_rate: float
    expected: np.ndarray
    measure: str

    def to_frame(self) -> pd.DataFrame:
        """Per run, quantiles (5%, 50%, 95%) of E[measure] under the prior."""
        q = np.quantile(self.expected, [0.05, 0.5, 0.95], axis=0)
        return pd.DataFrame({"q5": q[0], "median": q[1], "q95": q[2]}, index=pd.Index(self.systems, name="run"))

    def summary(self) -> str:
        q = np.quantile(self.rate, [0.05, 0.5, 0.95])
        e = np.quantile(self.expected, [0.05, 0.95])
        return (f"prior {self.config!r}: mean p over documents {q[1]:.3f} (90% of draws in {q[0]:.3f}..{q[2]:.3f}); "
                f"observed rate among judged {self.judged_rate:.3f}; E[{self.measure}] of the runs in "
                f"{e[0]:.3f}..{e[1]:.3f} (5%..95% over draws and runs)")


def prior_predictive_check(data, config="rtc-default", *, draws: int = 100, measure: str = "AP",
                           method: str = "delta", seed=0) -> PriorPredictive:
    r"""Draw the RTC chain's parameters from their priors and see what relevance rates and E[MAP] follow.

    Each draw takes :math:`	heta\sim` the rank prior (logistic-beta of the Beta(|R_t|+1, |N_t|+1) on
    :math:`\sigma(	heta)`), :math:`A, B\sim` the calibration prior and :math:`\lambda\sim` the aggregation
    prior (see each model's ``prior_draws``), computes p of every document through the chain, then
    E[measure] of every run with :func:`bayeval.expected.expected_measures` (``method``). Pseudo-counts
    (the calibration's smoothing) condition the posterior and are not part of these prior draws.

    Parameters
    ----------
    data : RankData
    config : str or RTCConfig
    draws : int
        Prior draws.
    measure, method
        As in :func:`~bayeval.expected.expected_measures`.
    seed : int

    Returns
    -------
    PriorPredictive
    """

    if not isinstance(data, RankData):
        raise BayevalInputError(f"data: expected a RankData, got {type(data).__name__}")
    if not isinstance(draws, int | np.integer) or draws < 1:
        raise BayevalInputError(f"draws: must be a positive integer, got {draws!r}")
    cfg = load_config(config)
    if not isinstance(cfg, RTCConfig):
        raise BayevalInputError(f"config: prior predictive checks take an RTC configuration, got kind {cfg.kind!r}")
    fit = RTCEstimator(cfg).fit(data, "map")
    rng = np.random.default_rng(seed)
    prior = {}
    for stage in ("rank", "calibration", "aggregation"):
        d = fit.models[stage].prior_draws(draws, rng)
        if d is None:
            raise BayevalInputError(f"config: {cfg.name!r} has an improper (flat) prior in its {stage} stage: no "
                                    "prior draws (give calibration.intercept_sd/slope_sd, aggregation alpha, beta > 0)")
        prior.update(d)
    rates = np.empty(draws)
    expected = np.empty((draws, len(data.systems)))
    for k in range(draws):
        feats = fit.features_at(prior["theta"][k], prior["A"][k], prior["B"][k])
        l0 = prior["lam0"][k] if "lam0" in prior else None
        ps = [ExpertAggregation.predict(f, prior["lam"][k], l0) for f in feats]
        rates[k] = float(np.concatenate(ps).mean())
        ev = expected_measures(data, ps, measures=[measure], method=method, progress=False)
        expected[k] = ev.all_expected[0]
    judged = np.concatenate([tr.judged for tr in data])
    rel = np.concatenate([tr.relevant for tr in data])
    return PriorPredictive(cfg.name, tuple(data.systems), rates, float(rel[judged].mean()) if judged.any() else np.nan,
                           expected, measure)


# --- prior sensitivity of the confidences -----------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class PriorSensitivity:
    """P(Δ < 0) of every pair of runs under several priors.

    Attributes
    ----------
    table : DataFrame
        Index ``(run_a, run_b)``, one column per configuration: the Bayesian P(Δmeasure < 0).
    measure : str
    """

    table: pd.DataFrame
    measure: str

    def to_frame(self) -> pd.DataFrame:
        """The table plus ``spread`` (max − min over priors) and ``decision_changes`` (whether the
        confidence max(P, 1 − P) crosses 0.95 between priors)."""
        out = self.table.copy()
        out["spread"] = self.table.max(axis=1) - self.table.min(axis=1)
        conf = np.maximum(self.table.to_numpy(), 1 - self.table.to_numpy()) >= 0.95
        out["decision_changes"] = conf.any(axis=1) & ~conf.all(axis=1)
        return out

    def summary(self) -> str:
        f = self.to_frame()
        return (f"P(Δ{self.measure} < 0) under {self.table.shape[1]} priors, {len(f)} pairs: largest spread "
                f"{f['spread'].max():.3f}, mean spread {f['spread'].mean():.3f}; "
                f"{int(f['decision_changes'].sum())} pairs cross confidence 0.95 between priors")

    def plot(self, ax=None):
        """Each pair's P(Δ < 0) under every prior against the first prior's (points off the diagonal moved)."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(4.5, 4.5))
        ref = self.table.columns[0]
        ax.plot([0, 1], [0, 1], color="0.6", lw=1, ls="--")
        for c in self.table.columns[1:]:
            ax.scatter(self.table[ref], self.table[c], s=12, label=c)
        ax.set_xlabel(f"P(Δ{self.measure} < 0), {ref}")
        ax.set_ylabel(f"P(Δ{self.measure} < 0), other priors")
        ax.legend()
        return ax


def prior_sensitivity(data, configs, *, measure: str = "AP", pairs=None, method: str = "laplace",
                      p_draws: int = 200, mc_draws: int = 2000, seed=0, **fit_kwargs) -> PriorSensitivity:
    """Bayesian P(Δmeasure < 0) (:func:`~bayeval.relevance.bayesian_confidence`) of pairs of runs under each
    prior, side by side.

    Parameters
    ----------
    data : RankData
    configs : sequence of configurations, or mapping name → RelevanceEstimate
        Configurations to fit (``method``, ``p_draws``, ``fit_kwargs``), or estimates already made
        (e.g. :attr:`PriorComparison.estimates`).
    measure : str
    pairs : optional
        As in :func:`~bayeval.expected.compare_systems` (default all pairs).
    mc_draws : int
        Monte Carlo draws of the confidence.
    seed : int
    """

    if isinstance(configs, dict):
        ests = dict(configs)
    else:
        ests = {}
        for c in configs:
            cfg = load_config(c)
            ests[cfg.name] = estimate_probabilities(data, cfg, fit=method, p_draws=p_draws, seed=seed, **fit_kwargs)
    if not ests:
        raise BayevalInputError("configs: give at least one configuration")
    cols = {}
    for name, est in ests.items():
        f = bayesian_confidence(data, est, measure=measure, pairs=pairs, draws=mc_draws, seed=seed,
                                progress=False).to_frame()
        cols[name] = f.set_index(["run_a", "run_b"])["p_less_bayes"]
    return PriorSensitivity(pd.DataFrame(cols), measure)
