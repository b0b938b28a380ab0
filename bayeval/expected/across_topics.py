r"""Tests across topics of a :class:`~bayeval.expected.PairwiseComparison`: is run a better than run b over the
*population* of topics, not only over these topics?

P(Δ < 0) of :func:`~bayeval.expected.compare_systems` counts the uncertainty of relevance with the topics fixed;
every IR paper's paired test counts the sampling of topics with relevance known. :func:`topic_tests` does the
second on the expected per-topic differences, and ``test="combined"`` both in one probability
(:func:`bayeval.stats.uncertain_paired_t`); a family of pairs is adjusted for multiple comparisons
(:func:`bayeval.stats.adjust_pvalues`). docs/expected.md, "Across topics", has the checks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayeval.errors import BayevalInputError
from bayeval.methods import ADJUSTMENTS, TOPIC_TESTS
from bayeval.stats import RESAMPLES, adjust_pvalues, paired_pvalues, uncertain_paired_t

__all__ = ["TOPIC_TESTS", "TopicTests", "topic_tests"]

#: What each test is, for legends and captions.
TEST_NAMES = {
    "combined": "paired t over topics with the relevance error shared between topics",
    "t": "paired t-test over topics",
    "wilcoxon": "Wilcoxon signed-rank test over topics",
    "randomization": "randomization (sign-flip) test over topics",
    "bootstrap": "studentized bootstrap test over topics",
}


def _freeze(arr, dtype=np.float64) -> np.ndarray:
    out = np.array(arr, dtype=dtype)
    out.flags.writeable = False
    return out


@dataclass(frozen=True, eq=False)
class TopicTests:
    r"""A test across topics for each pair of a comparison, and the family's adjusted p-values.

    Attributes
    ----------
    measure, test, adjust : str
    systems : tuple of str
    index_a, index_b : ndarray of int, shape (P,)
    topics : int
        Topics the tests ran over.
    level : float
        Level of the intervals.
    mean : ndarray, shape (P,)
        Mean over topics of E[Δ_t] (E[ΔMAP] for AP).
    lower, upper : ndarray, shape (P,)
        Interval of :math:`\mu`, the mean difference over the population of topics (``combined`` and ``t``;
        NaN for the other tests).
    p_less : ndarray, shape (P,)
        :math:`P(\mu < 0)` (``combined`` and ``t``; NaN otherwise).
    p_value, p_adjusted : ndarray, shape (P,)
        Two-sided p-value of :math:`\mu = 0`, and the same adjusted over the family of P pairs by ``adjust``.
    judged : str
        What the values tested were when given (relevance known, e.g. trec_eval's); empty: :math:`E[\Delta_t]`.
    """

    measure: str
    test: str
    adjust: str
    systems: tuple[str, ...]
    index_a: np.ndarray
    index_b: np.ndarray
    topics: int
    level: float
    mean: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    p_less: np.ndarray
    p_value: np.ndarray
    p_adjusted: np.ndarray
    judged: str = ""

    def __post_init__(self) -> None:
        for name in ("mean", "lower", "upper", "p_less", "p_value", "p_adjusted"):
            object.__setattr__(self, name, _freeze(getattr(self, name)))
        for name in ("index_a", "index_b"):
            object.__setattr__(self, name, _freeze(getattr(self, name), np.int64))

    @property
    def pairs(self) -> list[tuple[str, str]]:
        return [(self.systems[a], self.systems[b]) for a, b in zip(self.index_a, self.index_b, strict=True)]

    def to_frame(self) -> pd.DataFrame:
        """``run_a, run_b, measure, delta_expected, topic_lower, topic_upper, p_less_topics, p_value``; ``p_value``
        is adjusted by ``adjust`` (the unadjusted one is ``p_value`` of this object)."""
        names = np.asarray(self.systems, dtype=object)
        return pd.DataFrame({"run_a": names[self.index_a], "run_b": names[self.index_b], "measure": self.measure,
                             "delta_expected": self.mean, "topic_lower": self.lower, "topic_upper": self.upper,
                             "p_less_topics": self.p_less, "p_value": self.p_adjusted})

    def describe(self) -> str:
        """The test and its adjustment in words, for a legend."""
        adj = {"none": "not adjusted", "bonferroni": "Bonferroni-adjusted", "holm": "Holm-adjusted",
               "bh": "Benjamini-Hochberg-adjusted"}[self.adjust]
        if self.adjust != "none" and len(self.index_a) < 2:
            adj = "(one pair: nothing to adjust)"
        family = f" over {len(self.index_a)} pairs" if self.adjust != "none" and len(self.index_a) > 1 else ""
        on = self.judged or "E[Δ] per topic"
        return f"{TEST_NAMES[self.test]} on {on}, {self.topics} topics; two-sided p-value {adj}{family}"

    def summary(self) -> str:
        k = int(np.count_nonzero(self.p_adjusted < 0.05))
        lines = [f"{self.describe()}: {k} of {len(self.index_a)} pairs differ at 0.05"]
        for i in np.argsort(self.p_adjusted, kind="stable")[:5]:
            a, b = self.systems[self.index_a[i]], self.systems[self.index_b[i]]
            lines.append(f"  {a} - {b}: mean {self.mean[i]:+.4f}, p = {self.p_adjusted[i]:.3g}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"TopicTests(measure={self.measure!r}, test={self.test!r}, adjust={self.adjust!r}, " \
               f"pairs={len(self.index_a)}, topics={self.topics})"


def topic_tests(comparison, test: str = "combined", *, values=None, values_name: str = "the values given",
                adjust: str = "none", level: float = 0.95, resamples: int = RESAMPLES, seed=0) -> TopicTests:
    r"""Test every pair of ``comparison`` across topics.

    Parameters
    ----------
    comparison : PairwiseComparison
        From :func:`~bayeval.expected.compare_systems` (``bv.compare``): per topic :math:`E[\Delta_t]`,
        :math:`\mathrm{Var}[\Delta_t]`, and :math:`\mathrm{Var}[\overline{\Delta}]` over relevance.
    test : {"combined", "t", "wilcoxon", "randomization", "bootstrap"}
        ``"combined"`` (default): :func:`bayeval.stats.uncertain_paired_t`, the paired t-test on
        :math:`E[\Delta_t]` plus the relevance error every topic shares (posterior draws of p; none at a point
        p, where it is the t-test). The others: :func:`bayeval.stats.paired_pvalues` on :math:`E[\Delta_t]`,
        relevance taken as known.
    values : ndarray, shape (S, T), optional
        Per system and topic, values to test instead of :math:`E[\Delta_t]`, relevance known — e.g. trec_eval's,
        unjudged documents not relevant (``bv.evaluate(data, measure).values[0]``); ``"combined"`` is then the
        t-test. On shallow judgments every test across topics rejects too many true nulls, the tests on
        :math:`E[\Delta_t]` more than the t-test on these values (docs/expected.md, "Across topics").
    values_name : str
        What ``values`` are, for :meth:`TopicTests.describe` (e.g. "trec_eval's values").
    adjust : {"none", "bonferroni", "holm", "bh"}
        Adjustment over the family of pairs (:func:`bayeval.stats.adjust_pvalues`).
    level : float
        Level of the intervals of :math:`\mu`.
    resamples, seed
        Sign flips or resamples of the randomization and bootstrap tests, and their seed.

    Returns
    -------
    TopicTests

    Examples
    --------
    >>> from bayeval.data import RankData
    >>> from bayeval.expected import compare_systems
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=12, n_systems=3, n_docs=80, depth=30, judged_depth=10, seed=2)
    >>> cmp = compare_systems(RankData.build(col.runs, col.judgments), default_p=0.05)
    >>> tt = topic_tests(cmp, adjust="holm")
    >>> list(tt.to_frame().columns)[3:]
    ['delta_expected', 'topic_lower', 'topic_upper', 'p_less_topics', 'p_value']
    """
    if test not in TOPIC_TESTS:
        raise BayevalInputError(f"test: must be one of {', '.join(TOPIC_TESTS)}, got {test!r}")
    if adjust not in ADJUSTMENTS:
        raise BayevalInputError(f"adjust: must be one of {', '.join(ADJUSTMENTS)}, got {adjust!r}")
    if not 0.0 < float(level) < 1.0:
        raise BayevalInputError(f"level: must lie in (0, 1), got {level!r}")
    for name in ("delta_expected", "delta_variance", "all_variance", "index_a", "index_b", "systems", "measure"):
        if not hasattr(comparison, name):
            raise BayevalInputError(f"comparison: expected a PairwiseComparison, got {type(comparison).__name__}")
    e = np.asarray(comparison.delta_expected, dtype=np.float64)
    own = None
    if values is not None:
        x = np.asarray(values, dtype=np.float64)
        if x.shape != (len(comparison.systems), e.shape[1]):
            raise BayevalInputError(f"values: expected shape ({len(comparison.systems)}, {e.shape[1]}) (systems, "
                                    f"topics), got {x.shape}")
        e, own = x[comparison.index_a] - x[comparison.index_b], np.zeros_like(e)
    P, n = e.shape
    nan = np.full(P, np.nan)
    if test in ("combined", "t"):
        if own is not None:
            r = uncertain_paired_t(e, own)
        else:
            r = uncertain_paired_t(e, comparison.delta_variance,
                                   comparison.all_variance if test == "combined" else None)
        lower, upper = r.interval(level) if n >= 2 else (nan, nan)
        mean, p_less, p_value = r.mean, r.p_less, r.p_value
    else:
        mean, lower, upper, p_less = e.mean(axis=1) if n else nan, nan, nan, nan
        p_value = paired_pvalues(e, np.zeros_like(e), test, resamples=resamples, rng=seed)
    return TopicTests(str(comparison.measure), "t" if test == "combined" and own is not None else test, adjust,
                      tuple(comparison.systems), comparison.index_a, comparison.index_b, n, float(level), mean, lower,
                      upper, p_less, p_value, adjust_pvalues(p_value, adjust),
                      str(values_name) if own is not None else "")

