r"""An automatic assessor as an expert of every relevance model: what its label says about relevance, learned on
the pairs a person judged (:func:`fit_assessor_map`), and applied to the unjudged documents of any estimate of p
(:func:`with_assessors`).

The model is Dawid and Skene's, with a topic hierarchy. Given relevance R, the assessor's label G of a document
is independent of the runs' evidence about it, so for an unjudged document

.. math:: \operatorname{logit} p' = \operatorname{logit} p_{\text{model}} + \log \mathrm{LR}_t(g), \qquad
          \mathrm{LR}_t(g) = \frac{P(G = g \mid R = 1, t)}{P(G = g \mid R = 0, t)}.

The class-conditional label distributions :math:`\theta_{tc} = P(G \mid R = c, t)` are categorical over the
assessor's grades (over quantile bins of its scores), one per topic and class, around a pooled profile:

.. math:: \theta_{tc} \sim \mathrm{Dirichlet}(\alpha_c m_c), \qquad
          \theta_{tc} \mid n \sim \mathrm{Dirichlet}(\alpha_c m_c + n_{tc})

with :math:`n_{tck}` the judged pairs of topic t and class c that the assessor labelled k; :math:`m_c` and
:math:`\alpha_c` by empirical Bayes across topics (``prior="pooled"``: the mode of the Dirichlet–multinomial
marginal likelihood under a weak hyperprior) or fixed (``prior="flat"``: :math:`\alpha_c m_c = (1, \dots, 1)`).
So "grade 2 from this LLM" may mean different things on different topics, and a topic with few judged labels
borrows from the others; a topic with none gets the pooled profile with its topic-to-topic spread.

Because the map is class-conditional, it does not depend on the base rate of the judged sample: judged documents
are the top of a pool, not a random sample, and their share of relevant documents is far above the unjudged
documents'; :math:`P(G \mid R)` is the same on both (the conditional independence above), while
:math:`P(R \mid G)` is not. The base rate of an unjudged document comes from the model's :math:`p`.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import expit, logit

from bayeval.data.labels import SCORE_BINS, AssessorLabels, score_bin_edges
from bayeval.data.qrels import Qrels, TopicJudgments
from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError
from bayeval.relevance._label_map import fit_profile, log_lr_draws, log_lr_point, unpack
from bayeval.relevance.results import RelevanceEstimate

__all__ = ["ASSESSOR_PRIORS", "AssessorMap", "fit_assessor_map", "with_assessors"]

#: The priors of the topic maps: ``"pooled"`` (empirical Bayes around the pooled profile) or ``"flat"``.
ASSESSOR_PRIORS = ("pooled", "flat")
_LOGIT_CLIP = 1e-9


@dataclass(frozen=True, eq=False)
class AssessorMap:
    r"""What one assessor's labels say about relevance, per topic: the posterior of
    :math:`P(G = k \mid R = c, t)` (see the module notes).

    Attributes
    ----------
    name, kind : str
        The assessor's (:class:`~bayeval.data.AssessorLabels`).
    levels : ndarray
        ``"grades"``: the label categories (every grade the assessor gives); ``"scores"``: the inner bin edges
        (a score s falls in category ``searchsorted(levels, s, "right")``).
    topics : tuple of str
        The topics with judged labelled pairs (the others get the pooled prior).
    counts : ndarray, shape (T, 2, K)
        Per topic the judged labelled pairs, nonrelevant (0) and relevant (1), per category.
    profile : ndarray, shape (2, K)
        The pooled profile :math:`m_c`.
    alpha : ndarray, shape (2,)
        The concentration :math:`\alpha_c`.
    hyper_mode, hyper_cov : ndarray, shapes (2, K) and (2, K, K)
        Per class the mode of :math:`(\log\alpha_c, z_c)`, :math:`m_c = \mathrm{softmax}(z_c, 0)`, and its
        Laplace covariance: the uncertainty of the pooled profile, drawn by :meth:`hyper_draws` (zero for
        ``prior="flat"``).
    prior : {"pooled", "flat"}
    relevance_level : int
    seed : int
        Seed of the draws of :meth:`confidence_interval` and :meth:`to_frame`.
    """

    name: str
    kind: str
    levels: np.ndarray
    topics: tuple
    counts: np.ndarray
    profile: np.ndarray
    alpha: np.ndarray
    hyper_mode: np.ndarray
    hyper_cov: np.ndarray
    prior: str
    relevance_level: int
    seed: int = 0

    @property
    def n_categories(self) -> int:
        return int(self.profile.shape[1])

    @property
    def n_pairs(self) -> int:
        """Judged pairs the map learned from."""
        return int(self.counts.sum())

    def categories(self, values) -> np.ndarray:
        """The category of each label value (``-1`` for NaN: not labelled)."""
        v = np.asarray(values, dtype=np.float64)
        out = np.full(v.shape, -1, dtype=np.int64)
        ok = ~np.isnan(v)
        if self.kind == "grades":
            k = np.searchsorted(self.levels, v[ok])
            k = np.clip(k, 0, len(self.levels) - 1)
            if np.any(self.levels[k] != v[ok]):
                bad = v[ok][self.levels[k] != v[ok]][0]
                raise BayevalInputError(f"labels {self.name!r}: grade {bad:g} is not among the map's grades "
                                        f"{self.levels.tolist()}")
            out[ok] = k
        else:
            out[ok] = np.searchsorted(self.levels, v[ok], side="right")
        return out

    def hyper_draws(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``n`` draws of the hyperparameters from their Laplace approximation: α ``(n, 2)`` and m ``(n, 2, K)``."""
        x = np.stack([rng.multivariate_normal(self.hyper_mode[c], self.hyper_cov[c], size=int(n),
                                              method="eigh") for c in (0, 1)], axis=1)
        return unpack(x)

    def posterior(self, topic: str, hyper=None) -> tuple[np.ndarray, np.ndarray]:
        """The Dirichlet parameters of :math:`\\theta_{t0}` and :math:`\\theta_{t1}` (nonrelevant, relevant) for
        ``topic`` (the prior :math:`\\alpha_c m_c` for a topic without judged labels), shape ``(K,)`` each; given
        ``hyper`` (:meth:`hyper_draws`), one row per hyperparameter draw, ``(n, K)``."""
        alpha, profile = (self.alpha, self.profile) if hyper is None else hyper
        a = alpha[..., None] * profile
        if topic in self._topic_index:
            a = a + self.counts[self._topic_index[topic]]
        return a[..., 0, :], a[..., 1, :]

    @functools.cached_property
    def _topic_index(self) -> dict:
        return {t: i for i, t in enumerate(self.topics)}

    def log_lr(self, topic: str, values) -> np.ndarray:
        """The posterior predictive log likelihood ratio of each value for ``topic`` (0 where not labelled)."""
        k = self.categories(values)
        a0, a1 = self.posterior(str(topic))
        lr = log_lr_point(a1, a0)
        return np.where(k >= 0, lr[np.maximum(k, 0)], 0.0)

    def log_lr_draws(self, topic: str, values, n: int, rng: np.random.Generator, hyper=None) -> np.ndarray:
        """``n`` posterior draws of each value's log likelihood ratio, shape ``(n, len(values))``; 0 where not
        labelled. Each draw takes its own hyperparameters (``hyper``: :meth:`hyper_draws`, shared across topics
        so that the pooled profile's uncertainty moves every topic together; drawn here when not given)."""
        k = self.categories(values)
        a0, a1 = self.posterior(str(topic), self.hyper_draws(n, rng) if hyper is None else hyper)
        lr = log_lr_draws(a1, a0, int(n), rng)
        return np.where(k >= 0, lr[:, np.maximum(k, 0)], 0.0)

    def probability(self, topic: str, values, base_rate) -> np.ndarray:
        r"""P(relevant | label) of pairs of ``topic`` whose prior probability of relevance is ``base_rate``:
        :math:`\operatorname{expit}(\operatorname{logit} b + \log \mathrm{LR}_t(g))` (``base_rate`` where not
        labelled)."""
        b = np.clip(np.asarray(base_rate, dtype=np.float64), _LOGIT_CLIP, 1 - _LOGIT_CLIP)
        return expit(logit(b) + self.log_lr(topic, values))

    def category_names(self) -> list[str]:
        """A label per category: the grade, or the score bin ``[lo, hi)``."""
        if self.kind == "grades":
            return [f"{g:g}" for g in self.levels]
        edges = np.concatenate([[-np.inf], self.levels, [np.inf]])
        return [f"[{lo:.4g}, {hi:.4g})" for lo, hi in zip(edges[:-1], edges[1:], strict=True)]

    def confidence_interval(self, level: float = 0.95, *, n_draws: int = 4000) -> pd.DataFrame:
        """Per topic (and ``*`` for a new topic) and category: the equal-tailed posterior interval of the log
        likelihood ratio (from ``n_draws`` draws, seeded by :attr:`seed`)."""
        if not 0.0 < level < 1.0:
            raise BayevalInputError(f"level: must lie in (0, 1), got {level!r}")
        rng = np.random.default_rng(self.seed)
        hyper = self.hyper_draws(n_draws, rng)
        rows = []
        names = self.category_names()
        for t in (*self.topics, "*"):
            a0, a1 = self.posterior(t, hyper)
            dr = log_lr_draws(a1, a0, n_draws, rng)
            lo, hi = np.quantile(dr, [(1 - level) / 2, (1 + level) / 2], axis=0)
            for k, name in enumerate(names):
                rows.append({"topic": t, "label": name, "lower": lo[k], "upper": hi[k]})
        return pd.DataFrame(rows)

    def to_frame(self) -> pd.DataFrame:
        """Per topic (``*``: a new topic) and category: the judged counts ``n_nonrel``, ``n_rel``, the posterior
        means of P(label | nonrelevant) and P(label | relevant), and the log likelihood ratio ``log_lr``."""
        rows = []
        names = self.category_names()
        for t in (*self.topics, "*"):
            a0, a1 = self.posterior(t)
            c = self.counts[self._topic_index[t]] if t != "*" else np.zeros((2, self.n_categories))
            lr = log_lr_point(a1, a0)
            for k, name in enumerate(names):
                rows.append({"topic": t, "label": name, "n_nonrel": int(c[0, k]), "n_rel": int(c[1, k]),
                             "p_label_nonrel": a0[k] / a0.sum(), "p_label_rel": a1[k] / a1.sum(), "log_lr": lr[k]})
        return pd.DataFrame(rows)

    def summary(self) -> str:
        """One line per category: the pooled profiles and the log LR of a new topic."""
        f = self.to_frame()
        f = f[f.topic == "*"]
        lines = [f"{self.name} ({self.kind}, {self.prior} prior, alpha nonrel {self.alpha[0]:.3g} rel "
                 f"{self.alpha[1]:.3g}; {self.n_pairs} judged pairs on {len(self.topics)} topics)"]
        for r in f.itertuples():
            lines.append(f"  {r.label:>12}  P(.|nonrel) {r.p_label_nonrel:.3f}  P(.|rel) {r.p_label_rel:.3f}  "
                         f"log LR {r.log_lr:+.2f}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"AssessorMap(name={self.name!r}, kind={self.kind!r}, categories={self.n_categories}, "
                f"topics={len(self.topics)}, pairs={self.n_pairs}, prior={self.prior!r})")


def _levels(labels: AssessorLabels, judged_values: np.ndarray, score_bins: int) -> np.ndarray:
    if labels.kind == "grades":
        return np.unique(labels.values())
    return score_bin_edges(judged_values, score_bins)


def fit_assessor_map(labels: AssessorLabels, judgments: Qrels, *, relevance_level: int | None = None, seed: int = 0,
                     prior: str = "pooled", score_bins: int = SCORE_BINS) -> AssessorMap:
    r"""Learn an assessor's map from the pairs it labelled that a person judged (see the module notes).

    Parameters
    ----------
    labels : AssessorLabels
    judgments : Qrels
        The human judgments; a pair is relevant when its grade is at least ``relevance_level``.
    relevance_level : int, optional
        Default ``judgments.relevance_level``.
    seed : int
        Seed of the map's own draws (:meth:`AssessorMap.confidence_interval`).
    prior : {"pooled", "flat"}
        ``"pooled"``: :math:`m_c, \alpha_c` by empirical Bayes across topics
        (:func:`bayeval.relevance._label_map.fit_profile`); ``"flat"``: :math:`\alpha_c m_c = 1`.
    score_bins : int
        For scores: the number of quantile bins of the judged labelled pairs' scores (ties merge bins).

    Returns
    -------
    AssessorMap

    Raises
    ------
    BayevalInputError
        When no judged pair is labelled, or on a bad argument.

    Examples
    --------
    >>> import pandas as pd
    >>> lab = AssessorLabels.from_frame(pd.DataFrame({"topic": ["1"] * 4, "docno": list("abcd"),
    ...                                               "value": [1, 1, 0, 0]}), "llm", "grades")
    >>> q = Qrels.from_frame(pd.DataFrame({"topic": ["1"] * 3, "docno": list("abc"), "grade": [1, 0, 0]}))
    >>> amap = fit_assessor_map(lab, q, prior="flat")
    >>> amap.counts.tolist()  # [nonrelevant, relevant] x grades (0, 1)
    [[[1.0, 1.0], [0.0, 1.0]]]
    >>> round(float(amap.log_lr("1", [1.0])[0]), 3)  # log((2/3) / (2/4))
    0.288

    References
    ----------
    A. P. Dawid, A. M. Skene (1979). Maximum likelihood estimation of observer error-rates using the EM
    algorithm. Applied Statistics 28(1), 20–28.
    T. P. Minka (2000). Estimating a Dirichlet distribution. Technical report, MIT.
    """
    if not isinstance(labels, AssessorLabels):
        raise BayevalInputError(f"labels: expected an AssessorLabels, got {type(labels).__name__}")
    if not isinstance(judgments, Qrels):
        raise BayevalInputError(f"judgments: expected a Qrels, got {type(judgments).__name__}")
    if prior not in ASSESSOR_PRIORS:
        raise BayevalInputError(f"prior: one of {', '.join(map(repr, ASSESSOR_PRIORS))}, got {prior!r}")
    if not isinstance(score_bins, (int, np.integer)) or score_bins < 1:
        raise BayevalInputError(f"score_bins: a positive integer, got {score_bins!r}")
    level = judgments.relevance_level if relevance_level is None else int(relevance_level)
    if level < 1:
        raise BayevalInputError(f"relevance_level: must be >= 1, got {relevance_level!r}")
    # per topic with any: label values and relevance of the judged labelled pairs
    pairs = [(t, v, g >= level) for t, v, g in labels.judged_pairs(judgments) if len(v)]
    if not pairs:
        raise BayevalInputError(f"labels {labels.name!r}: no pair is both labelled and judged (the map is learned "
                                "from the pairs a person judged)")
    levels = _levels(labels, np.concatenate([v for _, v, _ in pairs]), int(score_bins))
    K = len(levels) if labels.kind == "grades" else len(levels) + 1
    flat_mode = np.zeros((2, K))
    flat_mode[:, 0] = np.log(K)
    amap = AssessorMap(labels.name, labels.kind, levels, (), np.zeros((0, 2, K)), np.ones((2, K)) / K,
                       np.full(2, float(K)), flat_mode, np.zeros((2, K, K)), prior, level, int(seed))
    counts = np.zeros((len(pairs), 2, K))
    for i, (_, v, rel) in enumerate(pairs):
        k = amap.categories(v)
        np.add.at(counts[i], (rel.astype(np.int64), k), 1.0)
    amap = dataclasses.replace(amap, topics=tuple(t for t, _, _ in pairs), counts=counts)
    if prior == "flat":
        return amap
    fitted = [fit_profile(counts[:, c, :]) for c in (0, 1)]
    mode = np.stack([x for x, _ in fitted])
    alpha, profile = unpack(mode)
    return dataclasses.replace(amap, profile=profile, alpha=alpha, hyper_mode=mode,
                               hyper_cov=np.stack([v for _, v in fitted]))


def _judgments_of(data: RankData) -> Qrels:
    out = {tr.topic: TopicJudgments(np.asarray(tr.docnos[tr.judged], dtype=object),
                                    np.asarray(tr.grades[tr.judged], dtype=np.int64))
           for tr in data if tr.judged.any()}
    level = next(iter(data)).relevance_level if len(data.topics) else 1
    return Qrels(out, level)


def with_assessors(estimate: RelevanceEstimate, data: RankData, labels: Sequence[AssessorLabels], *,
                   relevance_level: int | None = None, p_draws: int | None = 200, seed: int = 0,
                   prior: str = "pooled", maps: Sequence[AssessorMap] | None = None) -> RelevanceEstimate:
    r"""``estimate`` with each assessor's labels as an expert on the unjudged documents.

    For an unjudged labelled document :math:`\operatorname{logit} p' = \operatorname{logit} p + \sum_a \log
    \mathrm{LR}_{a,t}(g_a)`: several assessors multiply their likelihood ratios, which assumes their errors
    independent given relevance (two LLMs prompted alike are not: give one of them, or their consensus, as one
    assessor). Judged documents keep the model's p (their judgments count downstream); unlabelled documents are
    unchanged.

    The maps' posterior uncertainty is carried into p's draws: with posterior draws of p, each draw takes its own
    draw of every map (the pooled profile from its Laplace approximation, one draw shared by all topics, then
    :math:`\theta_{tc}` from its Dirichlet posterior given it); without (a MAP fit), ``p_draws`` draws are
    made from the point p and the maps' draws, so every confidence downstream (E[MAP] intervals, P(ΔMAP < 0))
    widens with the maps' uncertainty. The point p is then the mean of the draws. With neither draws nor
    ``p_draws`` (``None``/0: what cross-fitting asks for) the point p takes the posterior predictive ratio.

    Parameters
    ----------
    estimate : RelevanceEstimate
        Any model's estimate of p on ``data``.
    data : RankData
        The collection the estimate is of; its judged documents train the maps.
    labels : sequence of AssessorLabels
        One per assessor (distinct names).
    relevance_level : int, optional
        Default: the data's.
    p_draws : int or None
        Draws to make when ``estimate`` has none.
    seed : int
    prior : {"pooled", "flat"}
        The maps' prior (:func:`fit_assessor_map`).
    maps : sequence of AssessorMap, optional
        Maps learned elsewhere (e.g. on other judgments), one per label set, instead of learning them on ``data``.

    Returns
    -------
    RelevanceEstimate
        Its ``model`` is the estimate's with ``+labels:NAME`` for each assessor.
    """
    if not isinstance(estimate, RelevanceEstimate):
        raise BayevalInputError(f"estimate: expected a RelevanceEstimate, got {type(estimate).__name__}")
    if not isinstance(data, RankData):
        raise BayevalInputError(f"data: expected a RankData, got {type(data).__name__}")
    if isinstance(labels, AssessorLabels):
        labels = [labels]
    labels = list(labels)
    if not labels or not all(isinstance(lab, AssessorLabels) for lab in labels):
        raise BayevalInputError("labels: a non-empty sequence of AssessorLabels")
    names = [lab.name for lab in labels]
    if len(set(names)) != len(names):
        raise BayevalInputError(f"labels: two assessors share a name ({', '.join(names)})")
    if tuple(estimate.topics) != tuple(data.topics):
        raise BayevalInputError("estimate: not an estimate of data (its topics differ)")
    if p_draws is not None and (not isinstance(p_draws, (int, np.integer)) or p_draws < 0):
        raise BayevalInputError(f"p_draws: a non-negative integer or None, got {p_draws!r}")
    if maps is None:
        judgments = _judgments_of(data)
        maps = [fit_assessor_map(lab, judgments, relevance_level=relevance_level, seed=seed, prior=prior)
                for lab in labels]
    elif len(maps) != len(labels):
        raise BayevalInputError(f"maps: one per label set ({len(labels)}), got {len(maps)}")
    rng = np.random.default_rng(seed)
    has = estimate.draws is not None
    n = estimate.draws[0].shape[0] if has and len(estimate.draws) else int(p_draws or 0)
    hyper = [amap.hyper_draws(n, rng) for amap in maps] if n else None
    new_p, new_draws = [], []
    for i, tr in enumerate(data):
        p = np.asarray(estimate.p[i], dtype=np.float64)
        vals = [lab.lookup(tr.topic, tr.docnos) for lab in labels]
        use = ~np.asarray(tr.judged) & np.any([~np.isnan(v) for v in vals], axis=0)
        idx = np.flatnonzero(use)
        if n:
            base = estimate.draws[i][:, idx].astype(np.float64) if has else np.broadcast_to(p[idx], (n, idx.size))
            z = logit(np.clip(base, _LOGIT_CLIP, 1 - _LOGIT_CLIP))
            for amap, v, h in zip(maps, vals, hyper, strict=True):
                z = z + amap.log_lr_draws(tr.topic, v[idx], n, rng, h)
            dr = np.array(estimate.draws[i], dtype=np.float32) if has else \
                np.broadcast_to(p.astype(np.float32), (n, p.size)).copy()
            e = expit(z)
            dr[:, idx] = e
            q = p.copy()
            q[idx] = e.mean(axis=0)
            new_draws.append(dr)
        else:
            z = logit(np.clip(p[idx], _LOGIT_CLIP, 1 - _LOGIT_CLIP))
            for amap, v in zip(maps, vals, strict=True):
                z = z + amap.log_lr(tr.topic, v[idx])
            q = p.copy()
            q[idx] = expit(z)
        new_p.append(q)
    model = estimate.model + "".join(f"+labels:{name}" for name in names)
    return dataclasses.replace(estimate, p=tuple(new_p), draws=tuple(new_draws) if n else None, model=model)
