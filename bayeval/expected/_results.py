"""Frozen result objects of expected-measure computations."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import ndtr, ndtri

from bayeval.errors import BayevalInputError
from bayeval.expected.across_topics import TopicTests, topic_tests

__all__ = ["ExpectedEvaluation", "PairwiseComparison", "p_less_normal"]

ALL = "all"


def _freeze(obj, *names) -> None:
    for name in names:
        arr = np.array(getattr(obj, name), dtype=np.float64)
        arr.flags.writeable = False
        object.__setattr__(obj, name, arr)


def _z(level: float) -> float:
    try:
        level = float(level)
    except (TypeError, ValueError):
        raise BayevalInputError(f"level: must be a number in (0, 1), got {level!r}") from None
    if not 0.0 < level < 1.0:
        raise BayevalInputError(f"level: must lie in (0, 1), got {level!r}")
    return float(ndtri(0.5 + level / 2.0))


def p_less_normal(expected: np.ndarray, variance: np.ndarray) -> np.ndarray:
    r"""P(delta < 0) under a normal approximation: :math:`\Phi(-E/\sqrt{V})`.

    Where the variance is 0 the difference is certain: 1 if E < 0, 0 if E > 0, 0.5 if E = 0
    (a tie is split evenly: neither system is better).
    """
    expected = np.asarray(expected, dtype=np.float64)
    sd = np.sqrt(np.maximum(np.asarray(variance, dtype=np.float64), 0.0))
    out = np.where(expected < 0, 1.0, np.where(expected > 0, 0.0, 0.5))
    pos = sd > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(pos, ndtr(-expected / np.where(pos, sd, 1.0)), out)
    return out


@dataclass(frozen=True, eq=False)
class ExpectedEvaluation:
    """Expectations and variances of measures per (measure, system, topic) and over topics.

    Mirrors :class:`bayeval.measures.Evaluation`: ``expected``/``variance`` play the part of its
    ``values``, ``all_expected``/``all_variance`` of its ``mean()``, and :meth:`to_frame` has the same
    layout (topic ``all`` rows hold ``all_expected``/``all_variance``).

    Attributes
    ----------
    measures, systems, topics : tuple of str
    method : str
        ``"paper"``, ``"delta"``, ``"exact"`` or ``"mc"`` (the method for ratio measures; P@k and
        nDCG@k are always exact except under ``"mc"``).
    expected, variance : ndarray, shape (M, S, T)
    all_expected, all_variance : ndarray, shape (M, S)
        Over topics (topic ``all``): E[MAP] = mean_t E[AP_t]; Var[MAP] = sum_t Var[AP_t] / T^2
        (topics independent), or, for Monte Carlo, the mean and variance of the per-draw mean over
        topics (which keeps the dependence posterior draws create between topics).
    draws : int or None
        Monte Carlo draws (``None`` for closed forms).
    """

    measures: tuple[str, ...]
    systems: tuple[str, ...]
    topics: tuple[str, ...]
    method: str
    expected: np.ndarray
    variance: np.ndarray
    all_expected: np.ndarray
    all_variance: np.ndarray
    draws: int | None = None

    def __post_init__(self) -> None:
        _freeze(self, "expected", "variance", "all_expected", "all_variance")

    def to_frame(self, per_topic: bool = True) -> pd.DataFrame:
        """Tidy columns ``run, topic, measure, expected, variance``; topic ``all`` rows are over topics.

        Rows are grouped by run (in ``systems`` order), then measure; per run and measure the topics
        come first, then ``all``. ``per_topic=False`` keeps only the ``all`` rows.
        """
        m, s, t = self.expected.shape
        names = np.asarray(self.systems, dtype=object)
        meas = np.asarray(self.measures, dtype=object)
        exp = np.concatenate([self.expected, self.all_expected[:, :, None]], axis=2)
        var = np.concatenate([self.variance, self.all_variance[:, :, None]], axis=2)
        topics = np.asarray([*self.topics, ALL], dtype=object)
        if not per_topic:
            exp, var, topics = exp[:, :, -1:], var[:, :, -1:], topics[-1:]
        width = len(topics)
        # (S, M, width) order: run, then measure, then topic
        return pd.DataFrame({
            "run": np.repeat(names, m * width),
            "topic": np.tile(topics, s * m),
            "measure": np.tile(np.repeat(meas, width), s),
            "expected": exp.transpose(1, 0, 2).ravel(),
            "variance": var.transpose(1, 0, 2).ravel(),
        })

    def confidence_interval(self, level: float = 0.95, per_topic: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Normal-approximation intervals E ± z sd, clipped to [0, 1] (every measure here lies there).

        Returns ``(lower, upper)``, each (M, S) for the means over topics, or (M, S, T) per topic.
        """
        z = _z(level)
        e, v = (self.expected, self.variance) if per_topic else (self.all_expected, self.all_variance)
        sd = np.sqrt(np.maximum(v, 0.0))
        return np.clip(e - z * sd, 0.0, 1.0), np.clip(e + z * sd, 0.0, 1.0)

    def summary(self) -> str:
        """One table per measure: systems by expected mean over topics, with sd."""
        lines = [f"Expected measures ({self.method}{'' if self.draws is None else f', {self.draws} draws'}): "
                 f"{len(self.systems)} systems x {len(self.topics)} topics"]
        for i, name in enumerate(self.measures):
            order = np.argsort(-self.all_expected[i], kind="stable")
            lines.append(f"{name:>24}  {'E':>8}  {'sd':>8}")
            for s in order:
                sd = np.sqrt(self.all_variance[i, s])
                lines.append(f"{self.systems[s]:>24}  {self.all_expected[i, s]:8.4f}  {sd:8.4f}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"ExpectedEvaluation(method={self.method!r}, measures={list(self.measures)}, "
                f"systems={len(self.systems)}, topics={len(self.topics)})")


@dataclass(frozen=True, eq=False)
class PairwiseComparison:
    """Differences of a measure between pairs of systems: per topic and over topics.

    Attributes
    ----------
    measure : str
    method : str
    systems, topics : tuple of str
    index_a, index_b : ndarray of int, shape (P,)
        The pairs, as indices into ``systems``: delta = measure(a) - measure(b).
    delta_expected, delta_variance, p_less : ndarray, shape (P, T)
        Per topic E[delta], Var[delta], P(delta < 0).
    all_expected, all_variance, all_p_less : ndarray, shape (P,)
        The same for the difference of the means over topics (topic ``all``, as in
        :class:`ExpectedEvaluation`: ΔMAP for AP, ΔP@10 for P@10, …).
    draws : int or None
    """

    measure: str
    method: str
    systems: tuple[str, ...]
    topics: tuple[str, ...]
    index_a: np.ndarray
    index_b: np.ndarray
    delta_expected: np.ndarray
    delta_variance: np.ndarray
    p_less: np.ndarray
    all_expected: np.ndarray
    all_variance: np.ndarray
    all_p_less: np.ndarray
    draws: int | None = None

    def __post_init__(self) -> None:
        _freeze(self, "delta_expected", "delta_variance", "p_less", "all_expected", "all_variance", "all_p_less")
        for name in ("index_a", "index_b"):
            arr = np.array(getattr(self, name), dtype=np.int64)
            arr.flags.writeable = False
            object.__setattr__(self, name, arr)

    @property
    def pairs(self) -> list[tuple[str, str]]:
        return [(self.systems[a], self.systems[b]) for a, b in zip(self.index_a, self.index_b, strict=True)]

    @property
    def confidence(self) -> np.ndarray:
        """max(P(Δ<0), P(Δ>0)) over topics, per pair: how sure the sign of ΔMAP is."""
        return np.maximum(self.all_p_less, 1.0 - self.all_p_less)

    def to_frame(self, per_topic: bool = True) -> pd.DataFrame:
        """``run_a, run_b, topic, measure, delta_expected, delta_variance, p_less``; topic ``all`` = over topics.

        Per pair, its topics come first, then ``all``; ``per_topic=False`` keeps only the ``all`` rows.
        """
        n_pairs = len(self.index_a)
        names = np.array(self.systems, dtype=object)
        exp = np.hstack([self.delta_expected, self.all_expected[:, None]])
        var = np.hstack([self.delta_variance, self.all_variance[:, None]])
        less = np.hstack([self.p_less, self.all_p_less[:, None]])
        topics = np.array([*self.topics, ALL], dtype=object)
        if not per_topic:
            exp, var, less, topics = exp[:, -1:], var[:, -1:], less[:, -1:], topics[-1:]
        width = len(topics)
        return pd.DataFrame({
            "run_a": np.repeat(names[self.index_a], width),
            "run_b": np.repeat(names[self.index_b], width),
            "topic": np.tile(topics, n_pairs),
            "measure": self.measure,
            "delta_expected": exp.ravel(),
            "delta_variance": var.ravel(),
            "p_less": less.ravel(),
        })

    def topic_tests(self, test: str = "combined", **kwargs) -> TopicTests:
        """Tests across topics of every pair: :func:`bayeval.expected.across_topics.topic_tests` (``adjust``,
        ``level``, ``resamples``, ``seed``); ``"combined"`` counts the sampling of topics and the relevance
        uncertainty in one probability, P(Δ < 0) here the relevance alone."""
        return topic_tests(self, test, **kwargs)

    def confidence_interval(self, level: float = 0.95, per_topic: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Normal-approximation intervals E[Δ] ± z sd, clipped to [-1, 1].

        Returns ``(lower, upper)``, each (P,) for the difference of the means over topics (ΔMAP), or
        (P, T) per topic.
        """
        z = _z(level)
        e, v = ((self.delta_expected, self.delta_variance) if per_topic else (self.all_expected, self.all_variance))
        sd = np.sqrt(np.maximum(v, 0.0))
        return np.clip(e - z * sd, -1.0, 1.0), np.clip(e + z * sd, -1.0, 1.0)

    def summary(self) -> str:
        conf = self.confidence
        n = len(conf)
        lines = [f"Pairwise Δ{self.measure} ({self.method}{'' if self.draws is None else f', {self.draws} draws'}): "
                 f"{n} pairs of {len(self.systems)} systems over {len(self.topics)} topics"]
        for alpha in (0.95, 0.9, 0.8):
            k = int(np.count_nonzero(conf >= alpha))
            lines.append(f"  confidence >= {alpha:.2f}: {k} pairs ({100.0 * k / max(n, 1):.1f}%)")
        if n:
            lines.append(f"  mean confidence: {conf.mean():.4f}")
            order = [i for i in np.argsort(conf, kind="stable") if conf[i] < 0.95][:5]
            lines.append("  least certain pairs (confidence < 0.95):" if order else
                         "  least certain pairs: none, every pair has confidence >= 0.95")
            for i in order:
                a, b = self.systems[self.index_a[i]], self.systems[self.index_b[i]]
                lines.append(f"    {a} - {b}: E={self.all_expected[i]:+.4f} sd={np.sqrt(self.all_variance[i]):.4f} "
                             f"P(Δ<0)={self.all_p_less[i]:.3f}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"PairwiseComparison(measure={self.measure!r}, method={self.method!r}, pairs={len(self.index_a)}, "
                f"topics={len(self.topics)})")
