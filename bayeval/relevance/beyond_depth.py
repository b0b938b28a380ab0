r"""p beyond the judged depth: the model's error there, measured on a held-out band and carried into the draws.

A collection is judged to some depth and evaluated deeper (docs/depth.md). For topic t, the **judged depth**
:math:`K_t` is the median over the runs of their completely judged prefix
(:func:`bayeval.expected.extrapolation.judged_depth`); a document is
**beyond the judged depth** when it is unjudged and its best rank over the runs, :math:`r_i`, exceeds
:math:`K_t`. Its distance is counted in doublings, :math:`x_i=\log_2(r_i/K_t)`, and its *band* is
:math:`k_i=\lceil x_i\rceil` (band 1: ranks :math:`(K_t,2K_t]`, band 2: :math:`(2K_t,4K_t]`, ...). The model's p
there is an extrapolation, and its error is systematic — shared by every document of a topic and of a band — so
it does not average out over the thousands of such documents the way the Bernoulli variance does.

**The held-out band** (:func:`held_out_band`). The judgments are cut to the documents whose best rank is at most
:math:`h_t=\lfloor K_t/2\rfloor`, the model is refitted on them (``refit``), and its p is scored on the judged
documents of :math:`(h_t, K_t]` — one doubling of extrapolation on this very collection, with known answers.
With :math:`\eta_i=\operatorname{logit}p_i` of the refitted model there, a logistic regression with the
model's log-odds as offset,

.. math::

    y_i\sim\mathrm{Bernoulli}\bigl(\sigma(\eta_i+a+u_{t(i)})\bigr),\qquad u_t\sim N(0,\tau^2),

gives the collection's level error :math:`a` (weak prior, Laplace variance :math:`v_a`) and the spread of the
topics' errors :math:`\tau` (empirical Bayes, half-normal prior of scale ``topic_scale`` on τ; the machinery of
:func:`bayeval.relevance.run_level.run_levels` with topics as the groups): :func:`band_error`.

**The transform** (:class:`BeyondDepth`). On every document beyond the judged depth, in each draw d of p,

.. math::

    \eta'_{di}=\kappa_i\,(\eta_{di}+c)+\delta_{d,k_i}+u_{d,t,k_i},\qquad
    \kappa_i=\sqrt{1+\tfrac{\pi}{8}\,v_{k_i}},

with :math:`c=a` (``correction = "level"``) or 0 (``"none"``), a collection offset per band and a topic offset
per topic and band. With ``growth = "walk"`` each is a random walk over the bands — every further doubling of
extrapolation adds an independent error of the size one doubling showed on the held-out band:

.. math::

    \delta_{d,k}=\sum_{j\le k}\xi_{dj},\ \xi_{dj}\sim N(0,s_c^2),\qquad
    u_{d,t,k}=\sum_{j\le k}\zeta_{dtj},\ \zeta_{dtj}\sim N(0,\tau^2),\qquad v_k=k\,(s_c^2+\tau^2),

and with ``growth = "flat"`` one offset of each kind for all bands (:math:`v_k=s_c^2+\tau^2`). The collection
scale is the band's demonstrated collection error, :math:`s_c^2=a^2+v_a+s_0^2`, with a floor :math:`s_0`
(``collection_floor``, a constant of the configuration). :math:`\kappa_i` is the marginalisation of
:mod:`bayeval.relevance.hierarchical` (Heagerty 1999): by the probit approximation
:math:`E[\sigma(\kappa\eta+Z)]\approx\sigma(\eta)` for :math:`Z\sim N(0,v)`, so the offsets leave E[p] near
:math:`\sigma(\eta+c)` (below it by 6–7% where v reaches 2–4, docs/depth.md "Limits") and only spread the
draws — jointly for a topic and for the whole collection, so that the variance of E[MAP] over the draws (law of
total variance, docs/expected.md) is as large as the model's demonstrated error. A fit without posterior draws
(``map``) gets ``draws`` draws of the point p so transformed, and its point p becomes their expectation
(:meth:`BeyondDepth.expected`); a sampled fit's draws are transformed one by one and its point is their mean.
Judged documents and documents within the judged depth are untouched.

References
----------
P. J. Heagerty (1999). Marginally specified logistic-normal models for longitudinal binary data.
Biometrics 55(3). B. Efron, C. Morris (1975). Data analysis using Stein's estimator and its generalizations.
JASA 70(350). B. Carterette, J. Allan, R. Sitaraman (2006). Minimal test collections for retrieval
evaluation. SIGIR.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, logit

from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError
from bayeval.expected.extrapolation import best_rank, depth_distance, judged_depth
from bayeval.relevance.config import BeyondDepthPrior
from bayeval.relevance.hierarchical import HierarchicalEstimator
from bayeval.relevance.results import RelevanceEstimate
from bayeval.relevance.run_level import run_levels
from bayeval.relevance.run_shift import check_topic_arrays

__all__ = ["BandError", "BeyondDepth", "HeldOutBand", "band_error", "beyond_depth", "held_out_band",
           "learn_beyond_depth", "with_beyond_depth"]

_PI8 = np.pi / 8.0
_CLIP = 1e-6
_WEAK_SD = 10.0  # the prior of the collection's level error a: weak, so that a is the band's own figure


@dataclass(frozen=True, eq=False)
class HeldOutBand:
    """The judgments cut to half the judged depth, and the judged documents of the band they leave out.

    Attributes
    ----------
    half : RankData
        ``data`` with only the judgments of documents whose best rank is at most :math:`\\lfloor K_t/2\\rfloor`
        (topics with :math:`K_t<2` keep theirs).
    band : tuple of ndarray of int
        Per topic, the indices of the judged documents with best rank in :math:`(\\lfloor K_t/2\\rfloor, K_t]`.
    labels : tuple of ndarray of float
        Their judgments (1 relevant, 0 not).
    depths : ndarray, shape (T,)
        :math:`K_t`.
    """

    half: RankData
    band: tuple
    labels: tuple
    depths: np.ndarray

    @property
    def n_band(self) -> int:
        return int(sum(len(b) for b in self.band))


def held_out_band(data: RankData, depths=None) -> HeldOutBand:
    """Cut ``data``'s judgments to half the judged depth of each topic (module docstring, "The held-out band").

    Parameters
    ----------
    data : RankData
    depths : array_like, optional
        :math:`K_t` per topic (default :func:`judged_depth`).

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=2, n_systems=5, n_docs=80, depth=30, judged_depth=8, seed=2)
    >>> hb = held_out_band(RankData.build(col.runs, col.judgments))
    >>> hb.n_band > 0, int(hb.half[0].judged.sum()) < int(RankData.build(col.runs, col.judgments)[0].judged.sum())
    (True, True)
    """
    if not isinstance(data, RankData):
        raise BayevalInputError(f"data: expected a RankData, got {type(data).__name__}")
    k = np.array([judged_depth(tr) for tr in data]) if depths is None else np.asarray(depths, dtype=np.float64)
    if k.shape != (len(data),):
        raise BayevalInputError(f"depths: expected one judged depth per topic ({len(data)}), got shape {k.shape}")
    per, band, labels = [], [], []
    for tr, kt in zip(data, k, strict=True):
        judged = np.asarray(tr.judged)
        if kt < 2:
            per.append(tr)
            band.append(np.zeros(0, np.int64))
            labels.append(np.zeros(0))
            continue
        r = best_rank(tr)
        h = np.floor(kt / 2.0)
        keep = judged & (r <= h)
        b = np.flatnonzero(judged & (r > h) & (r <= kt))
        per.append(dataclasses.replace(tr, judged=keep, grades=np.where(keep, tr.grades, 0)))
        band.append(b)
        labels.append(np.asarray(tr.relevant)[b].astype(np.float64))
    half = RankData(data.systems, data.topics, tuple(per), data.depth)
    return HeldOutBand(half, tuple(band), tuple(labels), k)


@dataclass(frozen=True)
class BandError:
    r"""The model's error on the held-out band (module docstring): level :math:`a`, its variance :math:`v_a`,
    the topics' spread :math:`\tau`.

    Attributes
    ----------
    level, level_var, topic_sd : float
    n : int
        Band documents scored.
    topics : int
        Topics with band documents.
    """

    level: float
    level_var: float
    topic_sd: float
    n: int
    topics: int

    @property
    def collection_sd(self) -> float:
        r""":math:`\sqrt{a^2+v_a}`: the collection error the band demonstrates."""
        return float(np.sqrt(self.level ** 2 + self.level_var))


def band_error(eta, y, topic, *, topic_scale: float = 1.0) -> BandError:
    r"""Fit the band regression (module docstring) to the band documents' log-odds ``eta``, judgments ``y`` and
    topic indices ``topic``.

    Examples
    --------
    p one third too high everywhere (logit 0.2 where the rate is σ(−0.2)): the level is about −0.4.

    >>> rng = np.random.default_rng(0)
    >>> eta = np.full(4000, -1.0)
    >>> y = (rng.random(4000) < expit(-1.4)).astype(float)
    >>> e = band_error(eta, y, np.repeat(np.arange(40), 100))
    >>> bool(-0.55 < e.level < -0.25), e.n, e.topics
    (True, 4000, 40)
    """
    eta = np.asarray(eta, dtype=np.float64).reshape(-1)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    topic = np.asarray(topic, dtype=np.int64).reshape(-1)
    if not (len(eta) == len(y) == len(topic)):
        raise BayevalInputError(f"eta, y, topic: need the same length, got {len(eta)}, {len(y)}, {len(topic)}")
    if not len(y):
        return BandError(0.0, 0.0, 0.0, 0, 0)
    mean, var, _ = run_levels([eta], [y], _WEAK_SD, spread="fixed")
    a = float(mean[0])
    ids = np.unique(topic)
    groups = [eta[topic == t] + a for t in ids]
    _, _, tau = run_levels(groups, [y[topic == t] for t in ids], float(topic_scale))
    return BandError(a, float(var[0]), float(tau), int(len(y)), int(len(ids)))


@dataclass(frozen=True, eq=False)
class BeyondDepth:
    r"""The transform of p beyond the judged depth (module docstring).

    Attributes
    ----------
    depths : ndarray, shape (T,)
        :math:`K_t`.
    error : BandError
    prior : BeyondDepthPrior
        ``correction``, ``growth``, ``collection_floor``, ``draws``.

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=3, n_systems=5, n_docs=80, depth=30, judged_depth=6, seed=2)
    >>> data = RankData.build(col.runs, col.judgments)
    >>> bd = BeyondDepth(np.full(3, 6.0), BandError(-0.5, 0.01, 0.5, 100, 3), BeyondDepthPrior(band="half"))
    >>> p = [np.full(tr.n_docs, 0.2) for tr in data]
    >>> out = bd.draws_from_point(data, p, 400, np.random.default_rng(0))
    >>> deep = depth_distance(data[0], 6.0) > 0
    >>> bool(out[0][:, deep].std(axis=0).min() > 0.02), bool(np.all(out[0][:, ~deep] == np.float32(0.2)))
    (True, True)
    >>> bool(abs(out[0][:, deep].mean() - expit(logit(0.2) - 0.5)) < 0.02)   # E[p] at the corrected level
    True
    """

    depths: np.ndarray
    error: BandError
    prior: BeyondDepthPrior

    @property
    def shift(self) -> float:
        """:math:`c`: the level correction (0 with ``correction = "none"``)."""
        return self.error.level if self.prior.correction == "level" else 0.0

    @property
    def collection_var(self) -> float:
        """:math:`s_c^2=a^2+v_a+s_0^2`."""
        return self.error.collection_sd ** 2 + float(self.prior.collection_floor) ** 2

    def bands(self, data: RankData) -> tuple:
        """Per topic, the band :math:`k_i` of every document (0: not beyond the judged depth, or a topic judged to
        less than depth 2, which has no held-out band)."""
        return tuple(np.ceil(depth_distance(tr, kt)).astype(np.int64) if kt >= 2 else np.zeros(tr.n_docs, np.int64)
                     for tr, kt in zip(data, self.depths, strict=True))

    def _var(self, k: np.ndarray) -> np.ndarray:
        step = self.collection_var + self.error.topic_sd ** 2
        return step * (k if self.prior.growth == "walk" else np.minimum(k, 1))

    def point(self, data: RankData, p) -> tuple:
        r"""Point p (per topic (n_t,)) with the correction: :math:`\sigma(\eta_i+c)` beyond the judged depth
        (the offsets keep E[p]: nothing else moves a point)."""
        check_topic_arrays(data, p, "p")
        out = []
        for pt, k in zip(p, self.bands(data), strict=True):
            pt = np.array(pt, dtype=np.float64, copy=True)
            deep = k > 0
            if self.shift and deep.any():
                pt[deep] = expit(logit(np.clip(pt[deep], _CLIP, 1 - _CLIP)) + self.shift)
            out.append(pt)
        return tuple(out)

    def expected(self, data: RankData, p) -> tuple:
        r"""The expectation of the draws :meth:`draws_from_point` makes of the point p (per topic (n_t,)), without
        their Monte Carlo noise: beyond the judged depth
        :math:`E[\sigma(\kappa_i(\eta_i+c)+Z)]`, :math:`Z\sim N(0,v_{k_i})`, by Gauss–Hermite quadrature (32
        nodes); σ(η + c) to the probit approximation, a little below it where :math:`v_k` is large."""
        check_topic_arrays(data, p, "p")
        x, w = np.polynomial.hermite.hermgauss(32)
        out = []
        for pt, k in zip(p, self.bands(data), strict=True):
            pt = np.array(pt, dtype=np.float64, copy=True)
            deep = k > 0
            if deep.any():
                v = self._var(k[deep])
                m = np.sqrt(1.0 + _PI8 * v) * (logit(np.clip(pt[deep], _CLIP, 1 - _CLIP)) + self.shift)
                pt[deep] = expit(m[:, None] + np.sqrt(2.0 * v)[:, None] * x[None, :]) @ w / np.sqrt(np.pi)
            out.append(pt)
        return tuple(out)

    def apply(self, data: RankData, draws, rng: np.random.Generator) -> tuple:
        """Draws of p (per topic (n_draws, n_t)) with the correction and the offsets drawn from ``rng``."""
        check_topic_arrays(data, draws, "draws")
        if not len(draws):
            return tuple(draws)
        bands = self.bands(data)
        top = max((int(k.max(initial=0)) for k in bands), default=0)
        D = np.asarray(draws[0]).shape[0]
        walk = self.prior.growth == "walk"
        nb = max(top, 1) if walk else 1
        coll = np.cumsum(rng.normal(0.0, np.sqrt(self.collection_var), size=(D, nb)), axis=1)
        tau = self.error.topic_sd
        out = []
        for d, k in zip(draws, bands, strict=True):
            d = np.asarray(d)
            deep = k > 0
            if not deep.any():
                out.append(d)
                continue
            topic = np.cumsum(rng.normal(0.0, tau, size=(D, nb)), axis=1)
            col = np.minimum(k[deep], nb) - 1 if walk else np.zeros(int(deep.sum()), np.int64)
            kap = np.sqrt(1.0 + _PI8 * self._var(k[deep]))
            eta = logit(np.clip(d[:, deep].astype(np.float64), _CLIP, 1 - _CLIP))
            new = np.array(d, copy=True)
            new[:, deep] = expit(kap[None, :] * (eta + self.shift) + coll[:, col] + topic[:, col]).astype(d.dtype)
            out.append(new)
        return tuple(out)

    def draws_from_point(self, data: RankData, p, n: int, rng: np.random.Generator) -> tuple:
        """``n`` draws (float32) of the point p (per topic (n_t,)) through :meth:`apply`."""
        check_topic_arrays(data, p, "p")
        base = [np.broadcast_to(np.asarray(pt, dtype=np.float32), (int(n), len(pt))) for pt in p]
        return self.apply(data, base, rng)


def learn_beyond_depth(data: RankData, refit: Callable, prior: BeyondDepthPrior) -> BeyondDepth:
    """Measure the model's error on the held-out band of ``data`` and build the transform.

    Parameters
    ----------
    data : RankData
    refit : callable
        ``refit(half)`` → per topic the point p of every document of ``half`` (a RankData with the judgments cut to
        half the judged depth): the model refitted on them.
    prior : BeyondDepthPrior
    """
    hb = held_out_band(data)
    if hb.n_band:
        p = refit(hb.half)
        eta = np.concatenate([logit(np.clip(np.asarray(pt, np.float64)[b], _CLIP, 1 - _CLIP))
                              for pt, b in zip(p, hb.band, strict=True)])
        topic = np.concatenate([np.full(len(b), t) for t, b in enumerate(hb.band)])
        err = band_error(eta, np.concatenate(hb.labels), topic, topic_scale=prior.topic_scale)
    else:
        err = band_error([], [], [])
    return BeyondDepth(hb.depths, err, prior)


def beyond_depth(data: RankData, estimate: RelevanceEstimate, refit: Callable, prior: BeyondDepthPrior, *,
                 seed=None) -> RelevanceEstimate:
    """``estimate`` with the transform applied beyond the judged depth (module docstring).

    Returns ``estimate`` itself when ``prior.band`` is ``"none"`` or no document lies beyond the judged depth.
    Otherwise the draws (the estimate's own, or ``prior.draws`` draws of its point p for a fit without draws) carry
    the correction and the offsets, and the point p is their expectation (their mean; for a fit without draws
    :meth:`BeyondDepth.expected`, free of the draws' noise and seed).

    Parameters
    ----------
    data : RankData
    estimate : RelevanceEstimate
        Made on ``data``.
    refit : callable
        As in :func:`learn_beyond_depth`.
    prior : BeyondDepthPrior
    seed : int, Generator or None
        Seed of the offsets' draws.
    """
    if not isinstance(estimate, RelevanceEstimate):
        raise BayevalInputError(f"estimate: expected a RelevanceEstimate, got {type(estimate).__name__}")
    if tuple(estimate.topics) != tuple(data.topics):
        raise BayevalInputError("estimate: made on a different collection (topics differ from data's)")
    if prior.band == "none":
        return estimate
    depths = np.array([judged_depth(tr) for tr in data])
    if not any(k >= 2 and (depth_distance(tr, k) > 0).any() for tr, k in zip(data, depths, strict=True)):
        return estimate
    bd = learn_beyond_depth(data, refit, prior)
    rng = np.random.default_rng(seed)
    # the point p is the draws' expectation, so that every method (point or draws) sees the same level of p; it sits
    # below σ(η + c) where the offsets are wide (docs/depth.md, "Limits": κ keeps E[p] only to the probit
    # approximation)
    if estimate.has_draws:
        draws = bd.apply(data, estimate.draws, rng)
        p = tuple(d.mean(axis=0, dtype=np.float64) for d in draws)
    else:  # by quadrature: deterministic, whatever the seed of the draws
        draws = bd.draws_from_point(data, estimate.p, prior.draws, rng)
        p = bd.expected(data, estimate.p)
    return dataclasses.replace(estimate, p=p, draws=tuple(draws))


def with_beyond_depth(data: RankData, config, estimate: RelevanceEstimate, *, depth: int | None = None,
                      seed=None) -> RelevanceEstimate:
    """``estimate`` of the hierarchical ``config`` on ``data`` with its ``beyond_depth`` transform
    (:func:`beyond_depth`; the model refitted by MAP on the judgments of half the judged depth); ``estimate``
    itself when the configuration has none (no band, or a kind without the table). ``depth``: the rank positions of
    the base RTC chain, as the estimate was made."""
    prior = getattr(config, "beyond_depth", None)
    if prior is None or prior.band == "none":
        return estimate
    plain = HierarchicalEstimator(dataclasses.replace(config, beyond_depth=BeyondDepthPrior()), depth=depth)
    return beyond_depth(data, estimate, lambda half: plain.fit(half, "map").probabilities(draws=None).p, prior,
                        seed=seed)
