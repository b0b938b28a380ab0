"""Frozen results of selection: candidates, the state of the target pairs, simulations."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
from scipy.stats import norm

from bayeval.errors import BayevalInputError
from bayeval.stats.forecast import forecast_scores

__all__ = ["Candidate", "PairSimulation", "SelectionStatus", "SimulationResult"]


def _freeze(*arrays) -> None:
    for a in arrays:
        if isinstance(a, np.ndarray):
            a.flags.writeable = False


def _z(level: float) -> float:
    if not 0.0 < level < 1.0:
        raise BayevalInputError(f"level: must lie in (0, 1), got {level!r}")
    return float(norm.ppf(0.5 + level / 2.0))


@dataclass(frozen=True)
class Candidate:
    """A document proposed for judging.

    Attributes
    ----------
    topic, docno : str
    score : float
        Its selection weight (MTC: the largest :math:`\\max(|w^R|, |w^N|)` over undecided pairs, scaled by
        the topic; pooling: minus its best rank).
    run_a, run_b : str or None
        The pair whose difference the judgment moves most (None for pooling).
    """

    topic: str
    docno: str
    score: float
    run_a: str | None = None
    run_b: str | None = None


@dataclass(frozen=True, eq=False)
class SelectionStatus:
    r"""Where the target pairs stand after the judgments so far.

    Attributes
    ----------
    measure : str
    alpha : float
        Confidence level at which a pair is decided.
    run_a, run_b : tuple of str
    expected, variance : ndarray, shape (P,)
        :math:`E[\Delta]`, :math:`\mathrm{Var}[\Delta]` of the mean difference over topics
        (measure(a) − measure(b)).
    p_less : ndarray, shape (P,)
        :math:`P(\Delta < 0)`: confidence that b is better.
    lower, upper : ndarray, shape (P,)
        Bounds of the mean difference (P@k, DCG@k; NaN for AP and recall).
    decided : ndarray of bool, shape (P,)
        ``p_less >= alpha`` or ``<= 1 - alpha``, or the bounds exclude 0 (or meet).
    sign : ndarray of int, shape (P,)
        The decided sign of Δ: -1 (b better), +1 (a better), 0 undecided (or an exact tie).
    judgments : int
        Judgments made by the campaign (initial judgments excluded).
    exhausted : bool
        No unjudged document can move an undecided pair any more.
    """

    measure: str
    alpha: float
    run_a: tuple
    run_b: tuple
    expected: np.ndarray
    variance: np.ndarray
    p_less: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    decided: np.ndarray
    sign: np.ndarray
    judgments: int
    exhausted: bool = False

    def __post_init__(self) -> None:
        _freeze(self.expected, self.variance, self.p_less, self.lower, self.upper, self.decided, self.sign)

    @property
    def done(self) -> bool:
        """Every target pair decided, or nothing left that could decide one."""
        return bool(self.decided.all()) or self.exhausted

    @property
    def confidence(self) -> np.ndarray:
        """``max(p_less, 1 - p_less)``: confidence in the more likely sign."""
        return np.maximum(self.p_less, 1.0 - self.p_less)

    def confidence_interval(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """Normal interval :math:`E[\\Delta] \\pm z\\sqrt{\\mathrm{Var}[\\Delta]}` of each pair's mean difference."""
        z = _z(level)
        sd = np.sqrt(self.variance)
        return self.expected - z * sd, self.expected + z * sd

    def to_frame(self) -> pd.DataFrame:
        """One row per target pair."""
        return pd.DataFrame({"run_a": list(self.run_a), "run_b": list(self.run_b), "measure": self.measure,
                             "expected": self.expected, "variance": self.variance, "p_less": self.p_less,
                             "lower": self.lower, "upper": self.upper, "decided": self.decided,
                             "sign": self.sign})

    def summary(self) -> str:
        n = len(self.run_a)
        return (f"{self.judgments} judgments; {int(self.decided.sum())}/{n} pairs decided at "
                f"alpha={self.alpha:g} on {self.measure}" + (" (exhausted)" if self.exhausted else ""))

    def __repr__(self) -> str:
        return f"SelectionStatus({self.summary()})"


@dataclass(frozen=True)
class PairSimulation:
    """One target pair at the end of a simulated campaign (see :class:`SimulationResult`)."""

    run_a: str
    run_b: str
    p_less: float
    expected: float
    decided: bool
    sign: int
    true_delta: float
    correct: bool | None


@dataclass(frozen=True, eq=False)
class SimulationResult:
    """A whole campaign run against a qrels replay.

    Attributes
    ----------
    method : str
    measure : str
    alpha : float
    judgments : int
        Judgments used (the campaign's, initial judgments excluded).
    missing : int
        Selected documents the qrels do not judge (counted nonrelevant).
    pairs : tuple of PairSimulation
        ``correct`` is whether a decided pair's sign equals the sign of the true difference on the full
        qrels (None for undecided pairs).
    status : SelectionStatus
    history : tuple of (topic, docno, grade)
        The judgments in the order made.
    """

    method: str
    measure: str
    alpha: float
    judgments: int
    missing: int
    pairs: tuple
    status: SelectionStatus
    history: tuple = ()

    @property
    def accuracy(self) -> float:
        """Fraction of decided pairs whose sign is right (NaN when none is decided)."""
        c = [p.correct for p in self.pairs if p.decided]
        return float(np.mean(c)) if c else float("nan")

    @property
    def topic_stay(self) -> float:
        """Share of consecutive judgments on the same topic: :math:`\\frac{1}{n-1}\\sum_{i>1}
        [t_i = t_{i-1}]` over the :attr:`history` (NaN with fewer than two judgments). An assessor re-reads a
        topic statement at each change (docs/judging.md, "Staying on a topic")."""
        topics = [h[0] for h in self.history]
        if len(topics) < 2:
            return float("nan")
        return float(np.mean([a == b for a, b in zip(topics[1:], topics[:-1], strict=True)]))

    @property
    def scores(self):
        """Proper scores of every target pair's P(Δ < 0) against the true sign
        (:class:`~bayeval.stats.forecast.ForecastScores`: Brier, log score, sharpness)."""

        return forecast_scores([p.p_less for p in self.pairs], np.round([p.true_delta for p in self.pairs], 12))

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([p.__dict__ for p in self.pairs])

    def to_dict(self) -> dict:
        """JSON-ready: top-level ``judgments``, ``scores`` (the fields of :attr:`scores`, NaN as null); per pair
        ``run_a``, ``run_b``, ``p_less``, ``decided``, ``correct``."""
        scores = {k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in asdict(self.scores).items()}
        return {"method": self.method, "measure": self.measure, "alpha": self.alpha, "judgments": self.judgments,
                "missing": self.missing, "accuracy": None if np.isnan(self.accuracy) else self.accuracy,
                "topic_stay": None if np.isnan(self.topic_stay) else self.topic_stay,
                "scores": scores,
                "pairs": [{k: (v.item() if isinstance(v, np.generic) else v) for k, v in p.__dict__.items()}
                          for p in self.pairs]}

    def summary(self) -> str:
        n_dec = sum(p.decided for p in self.pairs)
        acc = self.accuracy
        return (f"{self.method} on {self.measure}: {self.judgments} judgments ({self.missing} missing from the "
                f"qrels), {n_dec}/{len(self.pairs)} pairs decided at {self.alpha:g}"
                + ("" if np.isnan(acc) else f", {acc:.0%} of them right")
                + ("" if np.isnan(self.topic_stay) else
                   f"; {self.topic_stay:.0%} of consecutive judgments on the same topic")
                + (f"\nP(Δ < 0) of the {len(self.pairs)} pairs: {self.scores.summary().partition(': ')[2]}"
                   if self.pairs else ""))

    def __repr__(self) -> str:
        return f"SimulationResult({self.summary()})"
