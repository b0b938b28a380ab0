r"""The depth study: judged to depth K, evaluated to depth D — is E[MAP] right, and does its interval hold the truth?

The most common use of bayeval (docs/depth.md): a collection is judged to depth K (every run's top K) and the
runs are evaluated deeper, at D. The study takes a collection with complete qrels (runs condensed to the
documents the qrels judge where they are shallow: :func:`bayeval.io.load_collection` ``condense``), keeps only
the judgments of the depth-K pool of every run (:func:`bayeval.data.pool_qrels`), and for each run compares with
the true MAP@D (the complete qrels):

- E[MAP] of each *variant* (a relevance model, its fit, with or without the unseen relevant documents), its 95%
  interval E ± z·sd (every moment method carries the posterior draws of p by the law of total variance,
  docs/expected.md), the share of E[MAP] resting on the model's p (:func:`bayeval.expected.extrapolation`);
- the anchors, computed on the pool's judgments: trec_eval's AP (unjudged = not relevant), AP on condensed
  lists (``AP(j)``: unjudged documents removed), bpref, and infAP treating the judged pool as a sample of the
  depth-D pool (its unjudged documents given grade −1, "in the pool but not judged", as trec_eval reads them);
- p of the unjudged documents against the complete qrels: reliability bins with Wilson intervals
  (:func:`bayeval.stats.reliability_bins`), Brier and log score (:func:`bayeval.relevance.score_probabilities`).

:func:`depth_statistics` summarises per collection, K and estimator: the median of E/true and its spread, the
coverage of the intervals, their median half-width against the median error, and Kendall's τ with the truth.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from bayeval.data.qrels import Qrels, TopicJudgments, pool_qrels
from bayeval.data.rankdata import RankData
from bayeval.data.run import RunSet
from bayeval.errors import BayevalInputError
from bayeval.expected import expected_measures
from bayeval.expected.extrapolation import extrapolation
from bayeval.io.collection import TestCollection
from bayeval.measures import evaluate
from bayeval.methods import FIT_METHODS
from bayeval.relevance.config import load_config
from bayeval.relevance.estimate import estimate_probabilities
from bayeval.relevance.heldout import score_probabilities
from bayeval.relevance.unseen import with_unseen
from bayeval.stats import kendall_tau, reliability_bins

__all__ = ["ANCHORS", "DEPTH_COLUMNS", "BIN_COLUMNS", "DepthSplit", "DepthStudy", "DepthVariant", "depth_anchors",
           "depth_split", "depth_statistics", "depth_study", "evaluate_variant", "p_reliability", "parse_variant"]

#: The anchors: column name → measure computed on the pool's judgments (module docstring).
ANCHORS = {"trec_eval": "AP", "condensed": "AP(j)", "bpref": "bpref", "infAP": "infAP"}
#: Columns of the per-run table.
DEPTH_COLUMNS = ("collection", "pool_depth", "depth", "variant", "run", "true", "expected", "lower", "upper",
                 "model_share", "seconds")
#: Columns of the reliability table of p.
BIN_COLUMNS = ("collection", "pool_depth", "depth", "variant", "bin", "n", "mean_p", "rate", "lower", "upper",
               "mean_inside", "brier", "log_score", "unjudged", "sum_p", "relevant")


@dataclass(frozen=True)
class DepthVariant:
    """One estimator of the study: a relevance model, its fit, and whether the unseen relevant documents enter R.

    ``name`` is its label in the tables (``model[/fit][+unseen]``, :func:`parse_variant`).
    """

    model: object
    fit: str = "map"
    unseen: bool = True
    name: str = ""

    def __post_init__(self) -> None:
        if not self.name:
            m = self.model if isinstance(self.model, str) else getattr(self.model, "name", "model")
            m = Path(m).stem if m.endswith(".toml") else m  # a configuration file: its name
            fit = "" if self.fit == "map" else f"/{self.fit}"
            object.__setattr__(self, "name", f"{m}{fit}{'+unseen' if self.unseen else ''}")


def parse_variant(text: str) -> DepthVariant:
    """``MODEL[/FIT][+unseen]`` → :class:`DepthVariant` (``hier-reuse+unseen``, ``hier-depth/laplace``); MODEL a
    shipped configuration or a ``.toml`` path (``studies/models/hier-level-shift.toml/laplace``).

    Examples
    --------
    >>> parse_variant("hier-default/laplace+unseen")
    DepthVariant(model='hier-default', fit='laplace', unseen=True, name='hier-default/laplace+unseen')
    """
    body, plus, tail = str(text).partition("+")
    if plus and tail != "unseen":
        raise BayevalInputError(f"variant: {text!r}: only '+unseen' may follow the model")
    model, fit = body, ""
    head, slash, tail = body.rpartition("/")
    if slash and not body.endswith(".toml"):
        model, fit = head, tail
    load_config(model)
    if fit and fit not in FIT_METHODS:
        raise BayevalInputError(f"variant: {text!r}: fit must be one of {', '.join(FIT_METHODS)}")
    return DepthVariant(model, fit or "map", bool(plus))


@dataclass(frozen=True, eq=False)
class DepthSplit:
    """A collection judged to depth ``pool_depth`` and evaluated at ``depth``.

    Attributes
    ----------
    name : str
    pool_depth, depth : int
    runs : RunSet
    qrels : Qrels
        The complete qrels.
    data : RankData
        The runs at ``depth`` with the pool's judgments.
    truth : RankData
        The runs at ``depth`` with the complete qrels.
    """

    name: str
    pool_depth: int
    depth: int
    runs: RunSet
    qrels: Qrels
    data: RankData
    truth: RankData

    @property
    def true_map(self) -> np.ndarray:
        """Per run, MAP@depth with the complete qrels."""
        return np.asarray(evaluate(self.truth, ["AP"]).mean()).reshape(-1)

    def unjudged_truth(self) -> tuple:
        """Per topic of ``data``, the unjudged documents (a mask) and whether the complete qrels call them
        relevant."""
        out = []
        for tr, tt in zip(self.data, self.truth, strict=True):
            rel = set(tt.docnos[tt.relevant].tolist())
            unj = ~np.asarray(tr.judged)
            out.append((unj, np.fromiter((d in rel for d in tr.docnos[unj]), dtype=bool, count=int(unj.sum()))))
        return tuple(out)


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise BayevalInputError(f"{name}: must be a positive integer, got {value!r}")
    return int(value)


def depth_split(collection: TestCollection, pool_depth: int, depth: int = 100, *, topics=None) -> DepthSplit:
    """Judgments of the depth-``pool_depth`` pool of every run of ``collection``, runs at ``depth``.

    The topics are those of the qrels with a relevant document (or ``topics``); runs are read (and condensed) as
    ``collection`` says.
    """
    k = _positive_int("pool_depth", pool_depth)
    d = _positive_int("depth", depth)
    runs, qrels = collection.runs(), collection.qrels()
    tops = list(collection.topics() if topics is None else topics)
    pool = pool_qrels(runs, qrels, k)
    return DepthSplit(collection.name, k, d, runs, qrels, RankData.build(runs, pool, depth=d, topics=tops),
                      RankData.build(runs, qrels, depth=d, topics=tops))


def _infap_qrels(split: DepthSplit) -> Qrels:
    """The pool's judgments plus grade −1 for every document of the depth-D pool they leave unjudged."""
    out = {}
    for tr in split.data:
        unj = np.flatnonzero(~np.asarray(tr.judged) & (np.asarray(tr.ranks) > 0).any(axis=1))
        j = np.flatnonzero(tr.judged)
        out[tr.topic] = TopicJudgments(np.concatenate([tr.docnos[j], tr.docnos[unj]]),
                                       np.concatenate([tr.grades[j], np.full(len(unj), -1, np.int64)]))
    return Qrels(out, split.qrels.relevance_level)


def depth_anchors(split: DepthSplit) -> pd.DataFrame:
    """Per run: the true MAP@D and the anchors of :data:`ANCHORS` on the pool's judgments."""
    ev = evaluate(split.data, [ANCHORS[k] for k in ("trec_eval", "condensed", "bpref")])
    means = np.asarray(ev.mean())
    frame = pd.DataFrame({"run": list(split.data.systems), "true": split.true_map,
                          "trec_eval": means[0], "condensed": means[1], "bpref": means[2]})
    inf = RankData.build(split.runs, _infap_qrels(split), depth=split.depth, topics=split.data.topics)
    frame["infAP"] = np.asarray(evaluate(inf, [ANCHORS["infAP"]]).mean()).reshape(-1)
    return frame


def evaluate_variant(split: DepthSplit, variant: DepthVariant, *, level: float = 0.95, seed: int = 0):
    """Fit ``variant`` on ``split.data``; per run E[MAP], its interval and the model's share, and the estimate.

    Returns
    -------
    (pandas.DataFrame, RelevanceEstimate)
        Columns ``run, expected, lower, upper, model_share``; the estimate of p before the unseen documents.
    """
    est = estimate_probabilities(split.data, variant.model, fit=variant.fit, seed=seed,
                                 p_draws=200 if variant.fit != "map" else None)
    data, full = (with_unseen(split.data, est, seed=seed) if variant.unseen else (split.data, est))
    ev = expected_measures(data, full, measures=["AP"], method="exact", progress=False)
    lo, hi = ev.confidence_interval(level)
    share = extrapolation(split.data, est, measure="AP").model_share
    frame = pd.DataFrame({"run": list(split.data.systems), "expected": ev.all_expected[0], "lower": lo[0],
                          "upper": hi[0], "model_share": share})
    return frame, est


def p_reliability(split: DepthSplit, estimate) -> pd.DataFrame:
    """Reliability of the point p of the unjudged documents against the complete qrels.

    One row per non-empty bin of :func:`bayeval.stats.reliability_bins`: ``bin, n, mean_p, rate, lower, upper``
    (Wilson interval of the rate) and ``mean_inside`` (the interval holds the bin's mean p); every row also
    carries the overall ``brier``, ``log_score``, ``unjudged``, ``sum_p`` and ``relevant``.
    """
    truth = split.unjudged_truth()
    p = np.concatenate([np.asarray(pt, dtype=np.float64)[m] for pt, (m, _) in zip(estimate.p, truth, strict=True)])
    y = np.concatenate([r for _, r in truth]).astype(np.float64)
    if not len(y):
        return pd.DataFrame(columns=list(BIN_COLUMNS[4:]))
    bins = reliability_bins(np.clip(p, 0.0, 1.0), np.where(y > 0, -1.0, 1.0))
    bins = bins[bins["n"] > 0].rename(columns={"mean_forecast": "mean_p", "frequency": "rate"})
    sc = score_probabilities(y, p)
    out = bins[["bin", "n", "mean_p", "rate", "lower", "upper"]].copy()
    out["mean_inside"] = (out["lower"] <= out["mean_p"]) & (out["mean_p"] <= out["upper"])
    out["brier"], out["log_score"] = sc["brier"], sc["log_loss"]
    out["unjudged"], out["sum_p"], out["relevant"] = len(y), float(p.sum()), float(y.sum())
    return out.reset_index(drop=True)


@dataclass(frozen=True, eq=False)
class DepthStudy:
    """The study's tables.

    Attributes
    ----------
    runs : pandas.DataFrame
        One row per (collection, pool depth, variant, run): :data:`DEPTH_COLUMNS`; the anchors are rows whose
        ``variant`` is an anchor's name (:data:`ANCHORS`), with no interval.
    bins : pandas.DataFrame
        Reliability of p per (collection, pool depth, variant): :data:`BIN_COLUMNS`.
    """

    runs: pd.DataFrame
    bins: pd.DataFrame

    def statistics(self) -> pd.DataFrame:
        """:func:`depth_statistics` of :attr:`runs`, with the reliability of p beside each variant."""
        return depth_statistics(self.runs, self.bins)


def depth_study(collection: TestCollection, pool_depths: Sequence[int], variants: Sequence[DepthVariant], *,
                depth: int = 100, level: float = 0.95, seed: int = 0, topics=None, progress=None) -> DepthStudy:
    """Run the depth study on ``collection`` for every pool depth and variant (module docstring).

    Parameters
    ----------
    collection : TestCollection
        With complete qrels (``condense=True`` where they are shallow).
    pool_depths : sequence of int
        K.
    variants : sequence of DepthVariant
    depth : int
        D (default 100).
    level : float
        Level of the intervals.
    seed : int
        Seed of the fits and of the unseen documents' draws.
    topics : sequence of str, optional
    progress : callable, optional
        Called with a line of text after each (K, variant).
    """
    if not variants:
        raise BayevalInputError("variants: give at least one")
    rows, bins = [], []
    for k in pool_depths:
        split = depth_split(collection, k, depth, topics=topics)
        anchors = depth_anchors(split)
        key = {"collection": collection.name, "pool_depth": split.pool_depth, "depth": split.depth}
        for name in ANCHORS:
            rows.append(pd.DataFrame({**key, "variant": name, "run": anchors["run"], "true": anchors["true"],
                                      "expected": anchors[name], "lower": np.nan, "upper": np.nan,
                                      "model_share": np.nan, "seconds": 0.0}))
        for v in variants:
            t0 = time.perf_counter()
            frame, est = evaluate_variant(split, v, level=level, seed=seed)
            secs = time.perf_counter() - t0
            rows.append(pd.DataFrame({**key, "variant": v.name, "run": frame["run"], "true": anchors["true"],
                                      "expected": frame["expected"], "lower": frame["lower"],
                                      "upper": frame["upper"], "model_share": frame["model_share"],
                                      "seconds": secs}))
            bins.append(p_reliability(split, est).assign(**key, variant=v.name))
            if progress is not None:
                progress(f"{collection.name} K={split.pool_depth}: {v.name} ({secs:.1f} s)")
    runs = pd.concat(rows, ignore_index=True)[list(DEPTH_COLUMNS)]
    return DepthStudy(runs, pd.concat(bins, ignore_index=True)[list(BIN_COLUMNS)] if bins else
                      pd.DataFrame(columns=list(BIN_COLUMNS)))


def depth_statistics(runs: pd.DataFrame, bins: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per (collection, pool depth, depth, variant): the study's figures.

    Columns ``runs`` (runs with a true MAP > 0), ``ratio`` (median E/true) with ``ratio_lo``, ``ratio_hi`` (its
    10% and 90% quantiles), ``coverage`` (share of intervals holding the truth), ``half_width`` (median),
    ``error`` (median |E − true|), ``width_error`` (half-width ÷ error), ``tau`` (Kendall's τ of E against the
    truth) and, with ``bins``, ``bins_outside`` (reliability bins whose Wilson interval excludes their mean p),
    ``bins`` and ``brier``. Anchors have no interval: their coverage and widths are NaN.
    """
    keys = ["collection", "pool_depth", "depth", "variant"]
    out = []
    for key, g in runs.groupby(keys, sort=False):
        ok = g["true"].to_numpy() > 0
        e, t = g["expected"].to_numpy()[ok], g["true"].to_numpy()[ok]
        lo, hi = g["lower"].to_numpy()[ok], g["upper"].to_numpy()[ok]
        ratio = e / t
        has = np.all(np.isfinite(lo)) and len(lo) > 0
        err = float(np.median(np.abs(e - t))) if len(e) else np.nan
        hw = float(np.median((hi - lo) / 2)) if has else np.nan
        out.append({**dict(zip(keys, key, strict=True)), "runs": int(ok.sum()),
                    "ratio": float(np.median(ratio)) if len(e) else np.nan,
                    "ratio_lo": float(np.quantile(ratio, 0.1)) if len(e) else np.nan,
                    "ratio_hi": float(np.quantile(ratio, 0.9)) if len(e) else np.nan,
                    "coverage": float(np.mean((t >= lo) & (t <= hi))) if has else np.nan,
                    "half_width": hw, "error": err, "width_error": hw / err if has and err > 0 else np.nan,
                    "tau": kendall_tau(e, t) if len(e) > 1 else np.nan})
    stats = pd.DataFrame(out)
    if bins is not None and len(bins):
        b = bins.groupby(keys, sort=False).agg(bins_outside=("mean_inside", lambda m: int((~m.astype(bool)).sum())),
                                                bins=("n", "size"), brier=("brier", "first")).reset_index()
        stats = stats.merge(b, on=keys, how="left")
    return stats
