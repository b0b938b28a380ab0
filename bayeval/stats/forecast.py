r"""Proper scores of probabilistic forecasts of a pairwise order, :math:`P_i = P(\Delta_i<0)`.

A method forecasts, for each pair i of systems (a, b), the probability :math:`P_i` that
:math:`\Delta_i = \mathrm{MAP}(a)-\mathrm{MAP}(b)` is negative; the truth is the sign of the true
:math:`\Delta_i`. The outcome is

.. math:: o_i = 1 \text{ if } \Delta_i<0,\qquad o_i = 0 \text{ if } \Delta_i>0,
          \qquad o_i = \tfrac12 \text{ if } \Delta_i=0 \text{ (a true tie)}.

A tie scores as half an outcome each way: both scores below are then linear (log) or quadratic (Brier)
in :math:`o_i`, are minimised by :math:`P_i=\tfrac12` on a tie, and a pair scores the same whichever
of its two systems is called a (:math:`P\to1-P`, :math:`o\to1-o`).

- **Brier score** :math:`B_i=(P_i-o_i)^2` (brier1950), lower is better; 0.25 is the score of always
  answering ½. Strictly proper: its expectation under the true probability q is minimised only at
  :math:`P=q`.
- **Log score** :math:`L_i=-o_i\ln P_i-(1-o_i)\ln(1-P_i)` (good1952), in nats, lower is better
  (ln 2 ≈ 0.693 for ½). :math:`P_i` is clipped to :math:`[\varepsilon,1-\varepsilon]` with
  :data:`LOG_EPS` = 1e-4 so that a forecast of exactly 0 or 1 that turns out wrong costs
  :math:`\ln 10^4\approx 9.21` instead of infinity.
- **Reliability** (:func:`reliability_bins`): the pairs binned by :math:`P_i` itself (not only by the
  call's confidence) on :data:`RELIABILITY_EDGES`; per bin the mean forecast, the observed frequency
  :math:`\bar o` of :math:`\Delta<0` and its Wilson interval (wilson1927). A calibrated forecaster's
  frequency lies in its bin: ``consistent`` says whether the Wilson interval meets the bin.
- **Sharpness**: the share of pairs called with confidence :math:`\max(P_i,1-P_i)\ge 0.95` and
  :math:`\ge 0.99`, and the share of those calls that are right (:func:`calls`).

Names that stay stable (tables and reports rely on them):

- :class:`ForecastScores` fields / :meth:`ForecastScores.to_frame` columns: ``pairs, brier, log_score,
  share_95, share_99, n_95, n_99, right_95, right_99``;
- :func:`reliability_bins` columns: ``bin, lower_edge, upper_edge, n, mean_forecast, frequency, lower,
  upper, consistent``.

References: G. W. Brier (1950), *Verification of forecasts expressed in terms of probability*, Monthly
Weather Review 78(1); I. J. Good (1952), *Rational decisions*, JRSS B 14(1); T. Gneiting & A. E.
Raftery (2007), *Strictly proper scoring rules, prediction, and estimation*, JASA 102(477);
E. B. Wilson (1927), *Probable inference, the law of succession, and statistical inference*, JASA 22.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
from scipy.stats import norm

from bayeval.errors import BayevalInputError

__all__ = [
    "LOG_EPS",
    "RELIABILITY_EDGES",
    "RELIABILITY_LABELS",
    "ForecastScores",
    "brier_score",
    "calls",
    "forecast_scores",
    "log_score",
    "outcomes",
    "reliability_bins",
    "sharpness",
    "wilson_interval",
]

LOG_EPS = 1e-4
RELIABILITY_EDGES = (0.0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0)
RELIABILITY_LABELS = tuple(f"{lo:g}–{hi:g}" for lo, hi in zip(RELIABILITY_EDGES[:-1], RELIABILITY_EDGES[1:],
                                                               strict=True))


def _checked(p_less, true_delta) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(p_less, dtype=np.float64)
    d = np.asarray(true_delta, dtype=np.float64)
    if p.shape != d.shape:
        raise BayevalInputError(f"p_less, true_delta: shapes differ ({p.shape} vs {d.shape})")
    if np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise BayevalInputError("p_less: probabilities must lie in [0, 1]")
    if np.any(np.isnan(d)):
        raise BayevalInputError("true_delta: NaN values")
    return p, d


def outcomes(true_delta) -> np.ndarray:
    r"""The outcome :math:`o_i` of each pair: 1 if :math:`\Delta_i<0`, 0 if :math:`\Delta_i>0`, ½ on a tie.

    >>> outcomes([-0.2, 0.1, 0.0])
    array([1. , 0. , 0.5])
    """
    d = np.asarray(true_delta, dtype=np.float64)
    return (1.0 - np.sign(d)) / 2.0


def calls(p_less, true_delta) -> tuple[np.ndarray, np.ndarray]:
    r"""Confidence :math:`\max(P, 1-P)` and correctness :math:`y` of each pair's call.

    With :math:`P_i=P(\Delta<0)` the forecaster calls :math:`\Delta<0` when :math:`P_i>\tfrac12` and
    :math:`\Delta>0` when :math:`P_i<\tfrac12`.

    Parameters
    ----------
    p_less : array_like
        :math:`P(\Delta<0)` per pair.
    true_delta : array_like
        The true Δ per pair.

    Returns
    -------
    confidence, y : ndarray
        ``y`` is 1 when the called sign equals the true sign, 0 when not (a true tie is never called
        right: the paper's accuracy), ½ where :math:`P=\tfrac12` (no call).

    Examples
    --------
    >>> calls([0.9, 0.2, 0.5, 0.7], [-0.01, -0.02, 0.03, 0.0])
    (array([0.9, 0.8, 0.5, 0.7]), array([1. , 0. , 0.5, 0. ]))
    """
    p, d = _checked(p_less, true_delta)
    conf = np.maximum(p, 1.0 - p)
    called = np.sign(0.5 - p)  # +1: calls Δ > 0, -1: calls Δ < 0, 0: no call
    y = np.where(called == 0, 0.5, (called == np.sign(d)).astype(np.float64))
    return conf, y


def brier_score(p_less, true_delta) -> np.ndarray:
    r"""Brier score :math:`(P_i-o_i)^2` of each pair (lower is better; a tie has :math:`o_i=\tfrac12`).

    Examples
    --------
    Right at 0.9 costs 0.1² = 0.01, wrong at 0.2 costs 0.8² = 0.64, ½ against Δ > 0 costs 0.25, and
    0.7 on a tie costs (0.7 − 0.5)² = 0.04:

    >>> brier_score([0.9, 0.2, 0.5, 0.7], [-0.01, -0.02, 0.03, 0.0]).round(6)
    array([0.01, 0.64, 0.25, 0.04])
    """
    p, d = _checked(p_less, true_delta)
    return (p - outcomes(d)) ** 2


def log_score(p_less, true_delta, *, eps: float = LOG_EPS) -> np.ndarray:
    r"""Log score :math:`-o_i\ln P_i-(1-o_i)\ln(1-P_i)` of each pair in nats (lower is better).

    :math:`P_i` is clipped to :math:`[\varepsilon, 1-\varepsilon]` (``eps``, default :data:`LOG_EPS`).

    Examples
    --------
    −ln 0.9 = 0.1054, −ln 0.2 = 1.6094; a tie at ½ costs ln 2 = 0.6931; 1.0 wrong costs −ln 1e-4 = 9.2103:

    >>> log_score([0.9, 0.2, 0.5, 1.0], [-1, -1, 0, 1]).round(4)
    array([0.1054, 1.6094, 0.6931, 9.2103])
    """
    if not 0 < eps < 0.5:
        raise BayevalInputError(f"eps: must lie in (0, 0.5), got {eps!r}")
    p, d = _checked(p_less, true_delta)
    o = outcomes(d)
    q = np.clip(p, eps, 1.0 - eps)
    return -(o * np.log(q) + (1.0 - o) * np.log1p(-q))


def sharpness(p_less, level: float) -> float:
    r"""Share of pairs called with confidence :math:`\max(P_i,1-P_i)\ge` ``level`` (NaN for no pairs).

    >>> sharpness([0.999, 0.02, 0.5, 0.96], 0.95), sharpness([0.999, 0.02, 0.5, 0.96], 0.99)
    (0.75, 0.25)
    """
    p = np.asarray(p_less, dtype=np.float64)
    if not 0.5 <= level <= 1:
        raise BayevalInputError(f"level: must lie in [0.5, 1], got {level!r}")
    if not p.size:
        return float("nan")
    return float(np.mean(np.maximum(p, 1.0 - p) >= level))


def wilson_interval(successes, n, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    r"""Wilson score interval of a proportion (NaN where n = 0; ``successes`` may be fractional).

    :math:`\frac{\hat p + z^2/2n \pm z\sqrt{\hat p(1-\hat p)/n + z^2/4n^2}}{1+z^2/n}` (wilson1927).

    Examples
    --------
    >>> lo, hi = wilson_interval(8, 10)
    >>> round(float(lo), 4), round(float(hi), 4)
    (0.4902, 0.9433)
    """
    s = np.asarray(successes, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    z = norm.ppf(0.5 + level / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        ph = s / n
        den = 1 + z * z / n
        mid = (ph + z * z / (2 * n)) / den
        half = z * np.sqrt(ph * (1 - ph) / n + z * z / (4 * n * n)) / den
    return np.where(n > 0, mid - half, np.nan), np.where(n > 0, mid + half, np.nan)


def _reliability_index(p: np.ndarray, edges: np.ndarray) -> np.ndarray:
    # bins below ½ are closed on the right, (lo, hi], and the first is [0, hi]; from ½ up they are closed
    # on the left, [lo, hi), and the last is [lo, 1]: P and 1 − P fall in mirror bins.
    low = np.searchsorted(edges, p, side="left") - 1
    high = np.searchsorted(edges, p, side="right") - 1
    return np.clip(np.where(p < 0.5, low, high), 0, len(edges) - 2)


def reliability_bins(p_less, true_delta, *, edges=RELIABILITY_EDGES, level: float = 0.95) -> pd.DataFrame:
    r"""Reliability table of :math:`P(\Delta<0)`: per bin of the forecast, the observed frequency of Δ < 0.

    Parameters
    ----------
    p_less, true_delta : array_like
        Forecasts and true Δ per pair.
    edges : sequence of float
        Bin edges from 0 to 1 (default :data:`RELIABILITY_EDGES`, symmetric about ½). Below ½ a bin is
        :math:`(lo, hi]` (the first :math:`[0, hi]`), from ½ up :math:`[lo, hi)` (the last :math:`[lo, 1]`).
    level : float
        Level of the Wilson interval of each frequency.

    Returns
    -------
    pandas.DataFrame
        One row per bin: ``bin`` (label), ``lower_edge, upper_edge, n, mean_forecast, frequency``
        (:math:`\bar o`, a tie counting ½), ``lower, upper`` (Wilson interval of the frequency) and
        ``consistent`` (the interval meets :math:`[lo, hi]`; True for an empty bin).

    Examples
    --------
    Three pairs at 0.995–1 of which two have Δ < 0 and one Δ > 0: frequency ⅔, Wilson 95% interval
    (⅔ + z²/6 ± z·√(2/27 + z²/36)) / (1 + z²/3) = 0.208–0.939 with z = 1.96, below the bin 0.99–1: not
    consistent. One pair at 0.03 with Δ > 0: frequency 0, interval 0–z²/(1 + z²) = 0–0.793, consistent.
    One tie at ½: frequency ½, interval ½ ± z·√(¼ + z²/4)/(1 + z²) = 0.055–0.945:

    >>> t = reliability_bins([0.995, 0.999, 1.0, 0.03, 0.5], [-1, -2, 3, 1, 0])
    >>> t[t["n"] > 0][["bin", "n", "mean_forecast", "frequency", "lower", "upper", "consistent"]].round(3)
              bin  n  mean_forecast  frequency  lower  upper  consistent
    1   0.01–0.05  1          0.030      0.000  0.000  0.793        True
    7     0.5–0.6  1          0.500      0.500  0.055  0.945        True
    13     0.99–1  3          0.998      0.667  0.208  0.939       False
    """
    p, d = _checked(p_less, true_delta)
    e = np.asarray(edges, dtype=np.float64)
    if e.ndim != 1 or len(e) < 2 or e[0] != 0 or e[-1] != 1 or np.any(np.diff(e) <= 0):
        raise BayevalInputError("edges: must increase strictly from 0 to 1")
    o = outcomes(d)
    idx = _reliability_index(p, e)
    n = np.bincount(idx, minlength=len(e) - 1).astype(np.float64)
    hits = np.bincount(idx, weights=o, minlength=len(e) - 1)
    fsum = np.bincount(idx, weights=p, minlength=len(e) - 1)
    lo, hi = wilson_interval(hits, n, level)
    with np.errstate(divide="ignore", invalid="ignore"):
        freq = np.where(n > 0, hits / n, np.nan)
        mean_f = np.where(n > 0, fsum / n, np.nan)
    consistent = (n == 0) | ((hi >= e[:-1]) & (lo <= e[1:]))
    labels = [f"{a:g}–{b:g}" for a, b in zip(e[:-1], e[1:], strict=True)]
    return pd.DataFrame({"bin": labels, "lower_edge": e[:-1], "upper_edge": e[1:], "n": n.astype(np.int64),
                         "mean_forecast": mean_f, "frequency": freq, "lower": lo, "upper": hi,
                         "consistent": consistent})


@dataclass(frozen=True)
class ForecastScores:
    r"""Proper scores and sharpness of a set of forecasts :math:`P(\Delta<0)`.

    Attributes
    ----------
    pairs : int
        Number of pairs scored.
    brier, log_score : float
        Mean Brier score and mean log score (nats); lower is better.
    share_95, share_99 : float
        Share of pairs called with confidence ≥ 0.95 / ≥ 0.99 (sharpness).
    n_95, n_99 : int
        Number of those calls.
    right_95, right_99 : float
        Share of those calls that are right (:func:`calls`; NaN when there is none).
    """

    pairs: int
    brier: float
    log_score: float
    share_95: float
    share_99: float
    n_95: int
    n_99: int
    right_95: float
    right_99: float

    def to_frame(self) -> pd.DataFrame:
        """One row with the fields as columns."""
        return pd.DataFrame([asdict(self)])

    def summary(self) -> str:
        def pct(x):
            return "–" if not np.isfinite(x) else f"{100 * x:.1f}%"

        return (f"{self.pairs} pairs: Brier {self.brier:.4f}  log score {self.log_score:.4f}  "
                f"calls ≥ 0.95: {pct(self.share_95)} ({pct(self.right_95)} right)  "
                f"≥ 0.99: {pct(self.share_99)} ({pct(self.right_99)} right)")


def forecast_scores(p_less, true_delta) -> ForecastScores:
    r"""Mean Brier and log score, sharpness and accuracy of the confident calls of forecasts :math:`P(\Delta<0)`.

    Examples
    --------
    Brier (0.01 + 0.64 + 0.25 + 0.0001) / 4 = 0.225025; log score (0.1054 + 1.6094 + 0.6931 + 0.0101) / 4
    = 0.6045; one call of four at ≥ 0.95 and ≥ 0.99 (0.99 on Δ < 0), right:

    >>> s = forecast_scores([0.9, 0.2, 0.5, 0.99], [-1, -1, 1, -1])
    >>> round(s.brier, 6), round(s.log_score, 4), s.share_95, s.n_99, s.right_99
    (0.225025, 0.6045, 0.25, 1, 1.0)
    """
    p, d = _checked(p_less, true_delta)
    n = int(p.size)
    if n == 0:
        nan = float("nan")
        return ForecastScores(0, nan, nan, nan, nan, 0, 0, nan, nan)
    conf, y = calls(p, d)
    n95, n99 = int(np.sum(conf >= 0.95)), int(np.sum(conf >= 0.99))
    return ForecastScores(
        pairs=n, brier=float(brier_score(p, d).mean()), log_score=float(log_score(p, d).mean()),
        share_95=sharpness(p, 0.95), share_99=sharpness(p, 0.99), n_95=n95, n_99=n99,
        right_95=float(y[conf >= 0.95].mean()) if n95 else float("nan"),
        right_99=float(y[conf >= 0.99].mean()) if n99 else float("nan"))
