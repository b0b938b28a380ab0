r"""Similarity-based estimation while judging (Carterette & Allan 2007): MTC+sim, MTC+one, incremental pooling.

A trial

1. draws k runs at random (default 10; ``None``: every run of the collection, in random order) and,
   optionally, ``n_topics`` of the collection's topics;
2. judges with each selection method, the complete qrels answering every request, until the
   *expected pairwise accuracy* of the ranking of the k runs by E[MAP],
   :math:`\frac1{|\mathcal P|}\sum_{(a,b)}\max(P(\Delta MAP_{ab}<0), 1-P(\Delta MAP_{ab}<0))`, reaches
   α = 0.95 (``stop="accuracy"``; the paper's "95% confidence" over many systems), or every pair is
   decided at α (``stop="decided"``), or the budget is spent:

   - ``sim`` — MTC+sim: MTC with p re-estimated every 10 judgments by the similarity regression
     (:class:`bayeval.relevance.SimilarityRegression`: per topic, logit p_i = β₀ + Σ_j β_j sim(i, j) over
     the judged documents j, plus-one-smoothed targets for the unjudged, λ = 1);
   - ``one`` — MTC+one: the same with the plus-one-smoothed p = (|R_t|+1)/(|R_t|+|N_t|+2) of each topic;
   - ``mtc`` — MTC with p = 0.5 (carterette2007's Algorithm 1), and ``rtc`` — MTC with the RTC model
     (carterette2007), for reference;
   - ``ip`` — incremental pooling, judging as many documents as the first of sim, one, rtc, mtc did;
3. ranks the k runs by E[MAP] with the method's final estimate of p (refitted on all its judgments;
   ``ip``: MAP with unjudged documents nonrelevant) and scores the ranking against MAP on the complete
   qrels (depth ``depth``): Kendall τ, the sign of ΔMAP for every pair, and for the pairs whose
   difference is significant (paired one-sided t-test over topics on the complete qrels, p < 0.05).

Similarities: ``"texts"`` — cosine of TF-IDF vectors of the documents' texts (``texts.tsv`` beside the
collection: ``docno<TAB>text``; Cranfield, :func:`write_cranfield_collection`); ``"rank-profile"`` — the
text-free cosine between documents' reciprocal-rank profiles across *every* run of the collection
(:func:`bayeval.relevance.similarity.cosine_from_rank_profiles`; TREC-8, whose texts are not here).

The result is a tidy frame, one row per trial × method × pair (:data:`SIMILARITY_COLUMNS`), run and
resumed by :func:`bayeval.experiments.run_study` like the robustness study.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
from scipy.stats import ttest_rel

from bayeval.bias.cranfield import write_cranfield
from bayeval.data import RankData
from bayeval.errors import BayevalInputError
from bayeval.expected import compare_systems, expected_measures
from bayeval.experiments.robustness import StudyMethod, _check_int, _rtc_map_p, trial_seed
from bayeval.io.texts import read_texts
from bayeval.relevance import SimilarityEstimator, load_config, smoothed_probabilities
from bayeval.relevance.config import RTCConfig, SimilarityConfig
from bayeval.relevance.similarity import cosine_from_rank_profiles, cosine_from_texts
from bayeval.selection import QrelsAssessor, judge_until, make_selector
from bayeval.stats import kendall_tau

__all__ = ["SIMILARITIES", "SIMILARITY_COLUMNS", "SIMILARITY_METHODS", "SimilarityStudyConfig",
           "expected_accuracy", "run_similarity_trial", "similarity_trajectory",
           "write_cranfield_collection"]

SIMILARITY_METHODS = ("sim", "one", "mtc", "rtc", "ip")
SIMILARITIES = ("texts", "rank-profile")
STOPS = ("accuracy", "decided")

SIMILARITY_COLUMNS = ("collection", "trial", "seed", "k", "n_topics", "depth", "alpha", "method", "run_a", "run_b",
                      "p_less", "e_delta", "e_map_a", "e_map_b", "true_map_a", "true_map_b", "true_delta",
                      "significant", "judgments", "reached", "tau", "seconds", "trial_seconds")
"""Columns of the similarity study's table: one row per trial × method × pair. ``p_less`` = P(ΔMAP < 0)
with the method's final estimate (NaN for ``ip``), ``e_delta`` = E[ΔMAP] (``ip``: ΔMAP with unjudged
documents nonrelevant), ``significant`` = the pair's true difference is significant, ``judgments`` and
``reached`` = judgments made and whether the stop rule was met within the budget, ``tau`` = Kendall τ of
the trial's ranking (repeated on its rows)."""


@dataclass(frozen=True)
class SimilarityStudyConfig:
    """Settings of a similarity study (Carterette & Allan 2007 §4); every trial of a study shares them.

    Parameters
    ----------
    k : int or None
        Runs per trial (default 10; ``None``: every run of the collection).
    n_topics : int or None
        Topics per trial, drawn at random (default ``None``: every topic with a relevant document).
    depth : int
        Runs are cut to their top ``depth`` documents for judging, estimating and scoring (default 100).
    alpha : float
        Target confidence (default 0.95).
    stop : {"accuracy", "decided"}
        Stop when the expected pairwise accuracy reaches ``alpha`` (default), or when every pair is decided.
    methods : tuple of str
        Among :data:`SIMILARITY_METHODS` (default ``("sim", "one", "ip")``, the paper's three).
    similarity : {"texts", "rank-profile"}
        Similarity of the ``sim`` method (default ``"rank-profile"``; ``"texts"`` needs ``texts.tsv``).
    similarity_config : str
        Configuration of the similarity regression (default ``"similarity-default"``: λ = 1).
    rtc_config : str
        Configuration of the ``rtc`` method (default ``"rtc-mtc"``, the paper's).
    budget : int or None
        Judgments per selection at most (default 5000).
    refit_every : int
        Judgments between re-estimates (default 10).
    significance : float
        Level of the one-sided paired t-test that marks a pair's true difference significant (default 0.05).
    seed : int
        Study seed: trial i is seeded by ``SeedSequence(seed, spawn_key=(i,))``.
    """

    k: int | None = 10
    n_topics: int | None = None
    depth: int = 100
    alpha: float = 0.95
    stop: str = "accuracy"
    methods: tuple[str, ...] = ("sim", "one", "ip")
    similarity: str = "rank-profile"
    similarity_config: str = "similarity-default"
    rtc_config: str = "rtc-mtc"
    budget: int | None = 5000
    refit_every: int = 10
    significance: float = 0.05
    seed: int = 0

    def __post_init__(self) -> None:
        if self.k is not None:
            _check_int("k", self.k, 3)
        if self.n_topics is not None:
            _check_int("n_topics", self.n_topics, 2)
        _check_int("depth", self.depth, 1)
        _check_int("refit_every", self.refit_every, 1)
        _check_int("seed", self.seed, 0)
        if self.budget is not None:
            _check_int("budget", self.budget, 1)
        for name, lo, hi in (("alpha", 0.5, 1.0), ("significance", 0.0, 0.5)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo < v < hi:
                raise BayevalInputError(f"{name}: must be in ({lo}, {hi}), got {v!r}")
        if self.stop not in STOPS:
            raise BayevalInputError(f"stop: must be one of {', '.join(STOPS)}, got {self.stop!r}")
        if self.similarity not in SIMILARITIES:
            raise BayevalInputError(f"similarity: must be one of {', '.join(SIMILARITIES)}, got {self.similarity!r}")
        vals = (self.methods,) if isinstance(self.methods, str) else tuple(self.methods)
        bad = [v for v in vals if v not in SIMILARITY_METHODS]
        if bad or not vals or len(set(vals)) != len(vals):
            raise BayevalInputError(f"methods: must be distinct values among {', '.join(SIMILARITY_METHODS)}, "
                                    f"got {vals}")
        if vals == ("ip",):
            raise BayevalInputError("methods: 'ip' judges as many documents as an MTC method: add one")
        object.__setattr__(self, "methods", vals)

        for name, kind in (("similarity_config", SimilarityConfig), ("rtc_config", RTCConfig)):
            if not isinstance(load_config(getattr(self, name)), kind):
                raise BayevalInputError(f"{name}: {getattr(self, name)!r} is not a {kind.__name__[:-6].lower()} "
                                        "configuration")

    # the study protocol of bayeval.experiments.run_study ------------------------------------------
    study = "similarity"
    columns = SIMILARITY_COLUMNS

    def resume_settings(self) -> dict:
        """Settings a table must share to be resumed with this configuration."""
        out = {"depth": self.depth, "k": self.k, "n_topics": self.n_topics}
        return {k: v for k, v in out.items() if v is not None}

    def run_trial(self, collection, trial: int) -> pd.DataFrame:
        return run_similarity_trial(collection, self, trial)

    def to_dict(self) -> dict:
        return {f.name: (list(v) if isinstance(v := getattr(self, f.name), tuple) else v) for f in fields(self)}


def expected_accuracy(p_less) -> float:
    r"""Expected share of pairs whose sign is called right: mean of :math:`\max(P, 1-P)` over pairs.

    >>> round(expected_accuracy([0.99, 0.5, 0.02]), 4)  # (0.99 + 0.5 + 0.98) / 3
    0.8233
    """
    p = np.asarray(p_less, dtype=np.float64)
    return float(np.mean(np.maximum(p, 1.0 - p))) if len(p) else 1.0


# inputs of a trial -----------------------------------------------------------------------------------
@lru_cache(maxsize=4)
def _similarity_function(collection, kind: str, depth: int, config: str):
    """The similarity of a collection, built once per process."""

    if kind == "texts":
        if collection.texts_path is None:
            raise BayevalInputError(f"similarity: collection {collection.name!r} has no texts.tsv for 'texts'")
        return cosine_from_texts(read_texts(collection.texts_path), **load_config(config).tfidf)

    return cosine_from_rank_profiles(RankData.build(collection.runs(collection.run_names), None, depth=depth))


def _trial_draw(collection, config: SimilarityStudyConfig, trial: int):
    ss = trial_seed(config.seed, trial)
    s_runs, s_topics = ss.spawn(2)
    names = collection.sample_runs(len(collection.run_names) if config.k is None else config.k,
                                   np.random.default_rng(s_runs))
    topics = collection.topics()
    if config.n_topics is not None:
        if config.n_topics > len(topics):
            raise BayevalInputError(f"n_topics: the collection has {len(topics)} topics with a relevant document, "
                                    f"not {config.n_topics}")
        pick = np.sort(np.random.default_rng(s_topics).choice(len(topics), size=config.n_topics, replace=False))
        topics = tuple(topics[i] for i in pick)
    return names, topics


def _judge(sel, assessor, config: SimilarityStudyConfig, budget) -> bool:
    """Judge until the stop rule holds; True when it held (not the budget or exhaustion)."""
    def rule(s) -> bool:
        st = s.status()
        return bool(st.decided.all() or (config.stop == "accuracy" and expected_accuracy(st.p_less) >= config.alpha))

    judge_until(sel, assessor, budget=budget, until=rule, progress=False)
    return rule(sel)


def _judge_n(sel, assessor, n: int, *, every: int = 0, at=None) -> None:
    """Judge ``n`` documents in the selector's order, whatever its confidence (fewer if it runs out);
    call ``at(sel)`` every ``every`` judgments."""
    judge_until(sel, assessor, until=lambda s: s.judgments >= n, progress=False,
                after=(lambda s: at(s) if s.judgments % every == 0 else None) if every else None)


def _selector(name: str, extra=lambda ctx: {}):
    """``select(ctx, made)``: a fresh ``make_selector(name)`` for AP, with the arguments ``extra(ctx)``."""
    def select(ctx, made):
        return make_selector(name, ctx.data, measure="AP", alpha=ctx.config.alpha,
                             refit_every=ctx.config.refit_every, **extra(ctx))
    return select


def _one(data, sel, ctx):

    return list(smoothed_probabilities(data).p)


def _sim(data, sel, ctx):

    return list(SimilarityEstimator(ctx.config.similarity_config).estimate(data, similarity=ctx.sim).p)


SIMILARITY_STRATEGIES = {
    "sim": StudyMethod(_selector("mtc+sim", lambda c: dict(similarity=c.sim, config=c.config.similarity_config)),
                       _sim),
    "one": StudyMethod(_selector("mtc+one"), _one),
    "mtc": StudyMethod(_selector("mtc"), lambda d, sel, c: [np.where(t.judged, t.relevant, 0.5) for t in d]),
    "rtc": StudyMethod(_selector("rtc", lambda c: {"config": c.config.rtc_config}),
                       lambda d, sel, c: _rtc_map_p(d, c.config.rtc_config)),
    "ip": StudyMethod(_selector("pool")),
}
"""The :class:`~bayeval.experiments.robustness.StudyMethod` of each of :data:`SIMILARITY_METHODS`: ``select``
gives a fresh selector, ``estimate`` the probabilities refitted on all its judgments; ``ip`` (pooling, no
estimate: unjudged documents nonrelevant) judges as many documents as the first selection method did."""


def _significant(per_topic_a: np.ndarray, per_topic_b: np.ndarray, level: float) -> np.ndarray:
    """One-sided paired t-test, in the direction of the mean difference, per pair of rows."""
    d = per_topic_a - per_topic_b
    out = np.zeros(len(d), dtype=bool)
    for i, row in enumerate(d):
        if np.ptp(row) == 0:
            out[i] = row[0] != 0
            continue
        side = "greater" if row.mean() > 0 else "less"
        out[i] = ttest_rel(per_topic_a[i], per_topic_b[i], alternative=side).pvalue < level
    return out


def run_similarity_trial(collection, config: SimilarityStudyConfig, trial: int) -> pd.DataFrame:
    """Run trial ``trial`` of a similarity study on ``collection`` and return its rows.

    Parameters
    ----------
    collection : TestCollection
    config : SimilarityStudyConfig
    trial : int

    Returns
    -------
    pandas.DataFrame
        One row per method × pair, columns :data:`SIMILARITY_COLUMNS`.

    Notes
    -----
    Truth: AP of each run cut to ``depth`` on the complete qrels per topic, MAP over the trial's topics.
    """

    if not isinstance(config, SimilarityStudyConfig):
        raise BayevalInputError(f"config: expected a SimilarityStudyConfig, got {type(config).__name__}")
    trial = _check_int("trial", trial, 0)
    t_start = time.perf_counter()
    names, topics = _trial_draw(collection, config, trial)
    qrels = collection.qrels()
    runs = collection.runs(names)
    truth = RankData.build(runs, qrels, depth=config.depth, topics=topics)
    true_ap = expected_measures(truth, default_p=0.0, method="delta").expected[0]  # (S, T)
    true_map = true_ap.mean(axis=1)
    ia, ib = np.triu_indices(len(names), k=1)
    significant = _significant(true_ap[ia], true_ap[ib], config.significance)
    sim = _similarity_function(collection, config.similarity, config.depth, config.similarity_config) \
        if "sim" in config.methods else None
    ctx = SimpleNamespace(config=config, sim=sim, data=RankData.build(runs, None, depth=config.depth, topics=topics))
    frames, made = [], {}
    for method in sorted(config.methods, key=lambda m: SIMILARITY_STRATEGIES[m].estimate is None):
        t0 = time.perf_counter()
        strategy = SIMILARITY_STRATEGIES[method]
        sel = strategy.select(ctx, made)
        if strategy.estimate is None:  # no estimate: as many judgments as a selection method, unjudged nonrelevant
            _judge_n(sel, QrelsAssessor(qrels), next(made[m] for m in ("sim", "one", "rtc", "mtc") if m in made))
            reached, e_map = False, expected_measures(sel.topic_ranks(), default_p=0.0, method="delta").all_expected[0]
            e_delta, p_less = e_map[ia] - e_map[ib], np.full(len(ia), np.nan)
        else:
            reached = _judge(sel, QrelsAssessor(qrels), config, config.budget)
            data = sel.topic_ranks()
            probs = strategy.estimate(data, sel, ctx)
            e_map = expected_measures(data, probs, method="delta").all_expected[0]
            cmp = compare_systems(data, probs, method="delta")
            e_delta, p_less = cmp.all_expected, cmp.all_p_less
        made[method] = sel.judgments
        frames.append(pd.DataFrame({
            "collection": collection.name, "trial": trial, "seed": config.seed,
            "k": len(names) if config.k is None else config.k, "n_topics": len(topics), "depth": config.depth,
            "alpha": config.alpha, "method": method, "run_a": np.array(names, dtype=object)[ia],
            "run_b": np.array(names, dtype=object)[ib], "p_less": np.asarray(p_less, dtype=np.float64),
            "e_delta": np.asarray(e_delta, dtype=np.float64), "e_map_a": e_map[ia], "e_map_b": e_map[ib],
            "true_map_a": true_map[ia], "true_map_b": true_map[ib], "true_delta": true_map[ia] - true_map[ib],
            "significant": significant, "judgments": sel.judgments, "reached": reached,
            "tau": kendall_tau(e_map, true_map), "seconds": time.perf_counter() - t0,
        }))
    out = pd.concat(frames, ignore_index=True)
    out["trial_seconds"] = time.perf_counter() - t_start
    return out[list(SIMILARITY_COLUMNS)]


def similarity_trajectory(collection, config: SimilarityStudyConfig, trial: int = 0, *, every: int = 25,
                          judgments: int | None = None) -> pd.DataFrame:
    """Kendall τ of E[MAP] against true MAP as one trial's judgments accumulate (Carterette & Allan 2007 Fig. 2).

    Every method of ``config`` judges up to ``judgments`` documents (default: as many as the first MTC
    method needed to meet the stop rule); every ``every`` judgments the k runs are ranked by E[MAP] with
    the method's current probabilities (``ip``: MAP, unjudged nonrelevant).

    Returns
    -------
    pandas.DataFrame
        Columns ``method, judgments, tau``.
    """

    if not isinstance(config, SimilarityStudyConfig):
        raise BayevalInputError(f"config: expected a SimilarityStudyConfig, got {type(config).__name__}")
    _check_int("every", every, 1)
    names, topics = _trial_draw(collection, config, _check_int("trial", trial, 0))
    qrels = collection.qrels()
    runs = collection.runs(names)
    true_map = expected_measures(RankData.build(runs, qrels, depth=config.depth, topics=topics), default_p=0.0,
                                 method="delta").all_expected[0]
    sim = _similarity_function(collection, config.similarity, config.depth, config.similarity_config) \
        if "sim" in config.methods else None
    ctx = SimpleNamespace(config=config, sim=sim, data=RankData.build(runs, None, depth=config.depth, topics=topics))
    if judgments is None:
        first = next(m for m in config.methods if SIMILARITY_STRATEGIES[m].estimate is not None)
        sel = SIMILARITY_STRATEGIES[first].select(ctx, {})
        _judge(sel, QrelsAssessor(qrels), config, config.budget)
        judgments = max(sel.judgments, every)
    rows = []

    def point(method, sel):
        if SIMILARITY_STRATEGIES[method].estimate is None:
            e = expected_measures(sel.topic_ranks(), default_p=0.0, method="delta").all_expected[0]
        else:
            e = expected_measures(sel.topic_ranks(), sel.probabilities(), method="delta").all_expected[0]
        rows.append((method, sel.judgments, kendall_tau(e, true_map)))

    for method in config.methods:
        sel = SIMILARITY_STRATEGIES[method].select(ctx, {})
        point(method, sel)
        _judge_n(sel, QrelsAssessor(qrels), judgments, every=every, at=lambda s, m=method: point(m, s))
    return pd.DataFrame(rows, columns=["method", "judgments", "tau"])


def write_cranfield_collection(source, out_dir, *, depth: int = 100) -> Path:
    """Cranfield as a collection directory for the studies: eight runs, complete qrels, texts.

    :func:`bayeval.bias.cranfield.write_cranfield` with the pool as deep as the runs: ``OUT/runs/input.<run>``
    (the runs of :func:`bayeval.bias.cranfield.cranfield_runs`, top ``depth``), ``OUT/qrels.txt`` (every
    document of their depth-``depth`` pool judged from ``cranqrel``: codes 1–4 relevant, −1 and unlisted
    documents nonrelevant — Cranfield's judgments are taken as complete) and ``OUT/texts.tsv`` (title +
    abstract), plus ``OUT/groups.tsv``. Returns ``OUT``.
    """
    _check_int("depth", depth, 1)
    write_cranfield(source, out_dir, depth=depth, pool_depth=depth)
    return Path(out_dir)
