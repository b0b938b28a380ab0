r"""One trial of the robustness study of Carterette (2007) §4.3, scored against complete qrels.

A trial

1. draws k runs at random from a collection (default 10) and takes the first c of them (default 2)
   as the *original* runs;
2. judges documents of the c originals with a selection method (:mod:`bayeval.selection`: MTC with
   p = 0.5, RTC) until every pair of originals has :math:`P(\Delta MAP<0)\ge\alpha` or
   :math:`\le 1-\alpha` (α = 0.95, MAP over all topics, runs cut to ``depth``), the complete qrels
   answering every request;
3. estimates the probability of relevance of every document the k runs retrieve from those
   judgments (MTC: 0.5; RTC: the composed RTC model, MAP fit; *bayes*: the hierarchical model of
   :mod:`bayeval.relevance.hierarchical` by default, giving posterior draws of p, with the relevant
   documents no run retrieves in R_t);
4. computes :math:`E[\mathrm{MAP}]` for the k runs and :math:`P(\Delta MAP<0)` for all k(k−1)/2
   pairs with each confidence method of :func:`bayeval.expected.compare_systems` (the papers'
   closed form ``paper``, ``delta``, ``exact``, Monte Carlo ``mc`` — all over posterior draws for
   *bayes*, the closed forms combined over the draws by the law of total variance);
5. scores them against MAP on the complete qrels at the same depth.

A fourth method, ``ip`` (incremental pooling), judges as many documents of the originals as MTC
did and ranks the k runs by MAP on those judgments alone (unjudged = nonrelevant), as the paper's
IP baseline; it has no confidence (``p_less`` is NaN).

The result is a tidy frame: one row per pair × method × confidence method (see
:mod:`bayeval.experiments.table`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, fields

import numpy as np
import pandas as pd

from bayeval.data import Qrels, RankData
from bayeval.data.coverage import contributing_runs
from bayeval.data.probabilities import probabilities_for
from bayeval.defaults import DEFAULT_MODEL
from bayeval.errors import BayevalInputError
from bayeval.expected import compare_systems, expected_measures
from bayeval.io.trials import COLUMNS
from bayeval.methods import CONFIDENCES, FIT_METHODS, STUDY_METHODS
from bayeval.relevance import (
    HierarchicalConfig,
    RTCEstimator,
    estimate_probabilities,
    load_config,
    run_effect_draws,
)
from bayeval.relevance.topup import TopUpSample
from bayeval.relevance.unseen import with_unseen
from bayeval.selection import QrelsAssessor, judge_until, make_selector
from bayeval.selection.topup import draw_topup
from bayeval.stats import kendall_tau

__all__ = ["CONFIDENCES", "STUDY_METHODS", "STUDY_STRATEGIES", "RobustnessConfig", "StudyMethod", "TrialContext",
           "judged_topup", "pair_similarity", "prepare_trial", "run_trial", "trial_seed"]

# stages of the bayes estimate that are sampled (the others stay at their MAP; the rank coefficients always do).
# "aggregation" is the default because the calibration's Laplace Hessian is singular for rtc-default when a
# system has no judged document (the k - c new runs of a trial); rtc-mtc's smoothing keeps it regular.
BAYES_STAGES = {"aggregation": {"rank": "map", "calibration": "map"},
                "calibration+aggregation": {"rank": "map"}}


def _check_int(name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise BayevalInputError(f"{name}: must be an integer >= {low}, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class RobustnessConfig:
    """Settings of a robustness study (carterette2007 §4.3); every trial of a study shares them.

    Parameters
    ----------
    k : int
        Runs per trial (default 10).
    c : int
        Original runs, judged by the selection method (default 2; 2 ≤ c < k).
    depth : int
        Runs are cut to their top ``depth`` documents for judging, estimating and scoring (default 100).
    alpha : float
        Confidence at which the selection stops (default 0.95).
    methods : tuple of str
        Among ``"mtc"`` (p = 0.5), ``"rtc"`` (RTC selection, RTC MAP estimate), ``"bayes"`` (RTC
        selection, Laplace posterior of the RTC model, every confidence over its draws), ``"ip"``
        (incremental pooling with MTC's number of judgments; needs ``"mtc"``).
    confidences : tuple of str
        Confidence methods of :func:`bayeval.expected.compare_systems`.
    budget : int or None
        At most this many judgments per selection (default 5000; the paper has none).
    selection_config : str
        Relevance model refitted by RTC while judging (default ``"rtc-mtc"``, the paper's priors).
    estimate_config : str
        Relevance model of the ``rtc`` estimate over the k runs (default ``"rtc-mtc"``).
    bayes_config : str
        Relevance model of the ``bayes`` estimate: a hierarchical configuration (default
        :data:`~bayeval.defaults.DEFAULT_MODEL`, the model of every command, fitted with ``bayes_fit``;
        docs/calibration.md) or an RTC one (``"rtc-default"``: Laplace on the ``bayes_stages``).
    bayes_fit : str
        Fit of its sampled stages (``"laplace"``, ``"mcmc"``, ``"vi"``; ``"map"``: no draws).
    bayes_stages : {"aggregation", "calibration+aggregation"}
        Stages fitted by ``bayes_fit``; the others (always the rank coefficients) stay at their MAP.
    refit_every : int
        Judgments between RTC refits (default 10, the paper's).
    mc_draws : int
        Monte Carlo draws of the ``mc`` confidence (default 1000).
    p_draws : int
        Posterior draws of p of the ``bayes`` estimate (default 200; Monte Carlo draw d uses draw d mod 200).
    closed_form_draws : int
        Of those, how many (evenly spaced) the closed-form confidences ``paper``, ``delta``, ``exact`` of
        ``bayes`` combine by the law of total variance (default 25: each draw costs one closed-form pass,
        about 1 s for ``exact`` on 10 runs × 50 topics; the variance of E[ΔMAP | p] over 25 draws has a
        relative sampling error of about √(2/25) = 28%, its sd about 14%).
    run_effect_sd : float
        Standard deviation of a random log-odds effect per run added to the ``bayes`` draws
        (:func:`bayeval.relevance.run_effect_draws`; default 0: none).
    unseen : bool
        Add Chao's estimate of the relevant documents no run retrieves to R_t of the ``bayes`` estimate
        (:func:`bayeval.relevance.unseen.with_unseen`; default True, docs/calibration.md).
    topup : int
        Top-up of the ``bayes`` estimate: per topic, this many of each held-out run's own unjudged documents
        drawn at random (:func:`bayeval.selection.topup.draw_topup`) and judged by the complete qrels, the model
        learning the held-out runs' levels from them (:mod:`bayeval.relevance.reuse_prior`; default 0: pure reuse).
    seed : int
        Study seed: trial i is seeded by ``SeedSequence(seed, spawn_key=(i,))``.
    """

    k: int = 10
    c: int = 2
    depth: int = 100
    alpha: float = 0.95
    methods: tuple[str, ...] = STUDY_METHODS
    confidences: tuple[str, ...] = CONFIDENCES
    budget: int | None = 5000
    selection_config: str = "rtc-mtc"
    estimate_config: str = "rtc-mtc"
    bayes_config: str = DEFAULT_MODEL
    bayes_fit: str = "laplace"
    bayes_stages: str = "aggregation"
    refit_every: int = 10
    mc_draws: int = 1000
    p_draws: int = 200
    closed_form_draws: int = 25
    run_effect_sd: float = 0.0
    unseen: bool = True
    topup: int = 0
    seed: int = 0

    def __post_init__(self) -> None:
        k = _check_int("k", self.k, 3)
        c = _check_int("c", self.c, 2)
        if c >= k:
            raise BayevalInputError(f"c: must be smaller than k={k}, got {c}")
        _check_int("depth", self.depth, 1)
        _check_int("refit_every", self.refit_every, 1)
        _check_int("mc_draws", self.mc_draws, 10)
        _check_int("p_draws", self.p_draws, 2)
        _check_int("closed_form_draws", self.closed_form_draws, 2)
        _check_int("seed", self.seed, 0)
        _check_int("topup", self.topup, 0)
        if self.budget is not None:
            _check_int("budget", self.budget, 1)
        if isinstance(self.alpha, bool) or not isinstance(self.alpha, (int, float)) or not 0.5 < self.alpha < 1:
            raise BayevalInputError(f"alpha: must be in (0.5, 1), got {self.alpha!r}")
        for name, allowed in (("methods", STUDY_METHODS), ("confidences", CONFIDENCES)):
            vals = (getattr(self, name),) if isinstance(getattr(self, name), str) else tuple(getattr(self, name))
            bad = [v for v in vals if v not in allowed]
            if bad or not vals or len(set(vals)) != len(vals):
                raise BayevalInputError(f"{name}: must be distinct values among {', '.join(allowed)}, got {vals}")
            object.__setattr__(self, name, vals)
        if "ip" in self.methods and "mtc" not in self.methods:
            raise BayevalInputError("methods: 'ip' judges as many documents as MTC did: add 'mtc'")
        if self.bayes_stages not in BAYES_STAGES:
            raise BayevalInputError(f"bayes_stages: must be one of {', '.join(BAYES_STAGES)}, "
                                    f"got {self.bayes_stages!r}")
        if isinstance(self.run_effect_sd, bool) or not isinstance(self.run_effect_sd, (int, float)) \
                or not 0 <= self.run_effect_sd < 10:
            raise BayevalInputError(f"run_effect_sd: must be a number in [0, 10), got {self.run_effect_sd!r}")
        if not isinstance(self.unseen, bool):
            raise BayevalInputError(f"unseen: must be true or false, got {self.unseen!r}")
        if self.bayes_fit not in FIT_METHODS:
            raise BayevalInputError(f"bayes_fit: must be one of {', '.join(FIT_METHODS)}, got {self.bayes_fit!r}")

        for name in ("selection_config", "estimate_config", "bayes_config"):
            load_config(getattr(self, name))  # raises a clear error for an unknown model

    # the study protocol of bayeval.experiments.run_study ------------------------------------------
    study = "robustness"

    @property
    def columns(self) -> tuple[str, ...]:

        return COLUMNS

    def resume_settings(self) -> dict:
        """Settings a table must share to be resumed with this configuration."""
        return {"k": self.k, "c": self.c, "depth": self.depth}

    def run_trial(self, collection, trial: int) -> pd.DataFrame:
        return run_trial(collection, self, trial)

    def to_dict(self) -> dict:
        return {f.name: (list(v) if isinstance(v := getattr(self, f.name), tuple) else v)
                for f in fields(self) if not f.name.startswith("_")}

    @classmethod
    def from_dict(cls, d: dict) -> RobustnessConfig:
        known = {f.name for f in fields(cls) if not f.name.startswith("_")}
        bad = set(d) - known
        if bad:
            raise BayevalInputError(f"config: unknown setting(s) {sorted(bad)}")
        return cls(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in d.items()})


def trial_seed(seed: int, trial: int) -> np.random.SeedSequence:
    """The SeedSequence of trial ``trial`` of a study seeded ``seed``: independent of execution order."""
    return np.random.SeedSequence(int(seed), spawn_key=(int(trial),))


def pair_similarity(data) -> np.ndarray:
    r"""Average fraction of documents two runs retrieve in common, per pair (S × S).

    For topic t with retrieved sets :math:`A_t, B_t` (cut to the data's depth)
    :math:`\mathrm{sim}(a, b) = \frac1{|T'|}\sum_{t\in T'} |A_t\cap B_t| / \max(|A_t|, |B_t|)` over the topics
    :math:`T'` where either run retrieves something (carterette2007 §5, "average percentage of documents
    they retrieved in common for each topic").

    Examples
    --------
    >>> from bayeval.data import RankData, Run
    >>> a = Run.from_arrays("a", np.array(["1"] * 4), np.array(list("wxyz")), np.arange(4.0)[::-1])
    >>> b = Run.from_arrays("b", np.array(["1"] * 4), np.array(list("wxuv")), np.arange(4.0)[::-1])
    >>> float(pair_similarity(RankData.build([a, b]))[0, 1])
    0.5
    """
    S = len(data.systems)
    total = np.zeros((S, S))
    count = np.zeros((S, S))
    for tr in data:
        n = tr.n_docs
        member = np.zeros((S, n), dtype=np.float64)
        for s in range(S):
            member[s, tr.ranked[s, : tr.lengths[s]]] = 1.0
        common = member @ member.T
        size = np.maximum.outer(tr.lengths, tr.lengths).astype(np.float64)
        ok = size > 0
        total[ok] += common[ok] / size[ok]
        count[ok] += 1
    return np.divide(total, count, out=np.zeros_like(total), where=count > 0)


@dataclass(frozen=True, eq=False)
class TrialContext:
    """What one trial of a robustness study draws before any method runs (:func:`prepare_trial`).

    Attributes
    ----------
    config : RobustnessConfig
    names : tuple of str
        The k runs drawn, the c originals first.
    runs_k, runs_c : RunSet
        The k runs, and the c originals whose documents are judged.
    qrels : Qrels
        The complete judgments (the simulated assessor, and the truth).
    topics : tuple of str
    s_fit, s_mc : numpy.random.SeedSequence
        Seeds of the fits and of the Monte Carlo confidences.
    sel_seed : int
        Seed of the selections.
    """

    config: RobustnessConfig
    names: tuple
    runs_k: object
    runs_c: object
    qrels: object
    topics: tuple
    s_fit: np.random.SeedSequence
    s_mc: np.random.SeedSequence
    sel_seed: int

    def judged(self, selection):
        """A selection's judgments as qrels at the collection's relevance level (``None``: none)."""
        return None if selection is None else selection.judged_qrels(self.qrels.relevance_level)


def prepare_trial(collection, config: RobustnessConfig, trial: int) -> TrialContext:
    """The runs, judgments and seeds of trial ``trial``: the start of :func:`run_trial`, for studies that
    look at a trial's judgments in their own way (studies/calibration_of_p.py)."""
    if not isinstance(config, RobustnessConfig):
        raise BayevalInputError(f"config: expected a RobustnessConfig, got {type(config).__name__}")
    trial = _check_int("trial", trial, 0)
    s_runs, s_sel, s_fit, s_mc = trial_seed(config.seed, trial).spawn(4)
    names = collection.sample_runs(config.k, np.random.default_rng(s_runs))
    runs_k = collection.runs(names)
    return TrialContext(config, tuple(names), runs_k, runs_k.select(names[: config.c]), collection.qrels(),
                        collection.topics(), s_fit, s_mc, int(s_sel.generate_state(1)[0]))


@dataclass(frozen=True)
class StudyMethod:
    """A method of a study in three steps: ``select(ctx, made)`` gives its selector (``made``: the trial's selections
    so far, by method); ``estimate(data, sel, ctx)`` its probabilities of relevance from the judgments (``None``:
    unjudged documents nonrelevant, no confidence, ``p_less`` NaN); ``judged_by``: the method whose judgments it
    uses (``None``: its own). Each study's table of them says what ``ctx`` holds and ``estimate`` returns."""

    select: object
    estimate: object = None
    judged_by: str | None = None


def _rtc_map_p(data, config) -> list:
    """Per topic, p of the RTC model ``config`` (a name or config) fitted by MAP to the judgments of ``data``."""

    return list(RTCEstimator(config).fit(data, "map").probabilities(draws=None).p)


def judged_topup(ctx: TrialContext, sel, per_topic: int) -> tuple:
    """(data of the k runs with the selection's and the top-up's judgments, the judged
    :class:`~bayeval.relevance.topup.TopUpSample`): per topic ``per_topic`` of each held-out run's unjudged
    documents (``ctx.names[c:]``, but those the judgments cover: :func:`~bayeval.data.coverage.contributing_runs`)
    drawn (:func:`~bayeval.selection.topup.draw_topup`, a stream of the trial's fit
    seed) and judged by the complete qrels (a document they do not judge: not relevant)."""
    cfg = ctx.config
    judged = ctx.judged(sel)
    data = RankData.build(ctx.runs_k, judged, depth=cfg.depth, topics=ctx.topics)
    rng = np.random.default_rng(np.random.SeedSequence(ctx.s_fit.entropy, spawn_key=ctx.s_fit.spawn_key + (7,)))
    covered = {data.systems[s] for s in contributing_runs(data)}  # a run the judgments cover is not topped up
    sample = draw_topup(data, [n for n in ctx.names[cfg.c:] if n not in covered], per_topic, depth=cfg.depth,
                        rng=rng)
    f = sample.frame.copy()
    f["grade"] = [max(ctx.qrels.grade_of(t, d) or 0, 0) for t, d in zip(f["topic"], f["docno"], strict=True)]
    sample = TopUpSample(f, ctx.qrels.relevance_level)
    parts = [sample.qrels().to_frame()] + ([] if judged is None else [judged.to_frame()])
    both = Qrels.from_frame(pd.concat(parts, ignore_index=True), relevance_level=ctx.qrels.relevance_level)
    return RankData.build(ctx.runs_k, both, depth=cfg.depth, topics=ctx.topics), sample


def _bayes(data, sel, ctx):

    config, fit_seed = ctx.config, int(ctx.s_fit.generate_state(1)[0])
    n_p = config.p_draws if config.bayes_fit != "map" else None
    fit_kw = {"draws": max(config.p_draws, 200), "chains": 1}
    if isinstance(load_config(config.bayes_config), HierarchicalConfig):
        sample = None
        if config.topup:
            data, sample = judged_topup(ctx, sel, config.topup)
        # through the one door, so the study fits what every command fits (p beyond the judged depth included)
        est = estimate_probabilities(data, config.bayes_config, fit=config.bayes_fit, p_draws=n_p, seed=fit_seed,
                                     topup=sample, **fit_kw)
    else:
        if config.topup:
            raise BayevalInputError(f"topup: needs a hierarchical bayes_config, got {config.bayes_config!r}")
        est = RTCEstimator(config.bayes_config).fit(
            data, config.bayes_fit, seed=fit_seed, stage_methods=BAYES_STAGES[config.bayes_stages], **fit_kw
        ).probabilities(draws=n_p, seed=fit_seed)
    if config.unseen:
        data, est = with_unseen(data, est, seed=fit_seed)
    point = list(est.p)
    draws = list(est.draws) if est.draws is not None else None
    if config.run_effect_sd > 0:

        draws = run_effect_draws(data, draws if draws is not None else point, config.run_effect_sd,
                                 draws=config.p_draws, seed=fit_seed)
    return data, point, draws


def _selection(method: str, as_many_as: str | None = None, extra=lambda cfg: {}):
    """``select(ctx, made)``: ``method``'s selector on the c originals judged until it decides (or the budget), or as
    many documents as ``made[as_many_as]`` judged (``None`` if that is none)."""
    def select(ctx, made):

        cfg = ctx.config
        budget = made[as_many_as].judgments if as_many_as else cfg.budget
        if as_many_as and not budget:
            return None
        sel = make_selector(method, RankData.build(ctx.runs_c, None, depth=cfg.depth, topics=ctx.topics),
                            measure="AP", alpha=cfg.alpha, seed=0 if as_many_as else ctx.sel_seed, **extra(cfg))
        judge_until(sel, QrelsAssessor(ctx.qrels), budget=budget, progress=False)
        return sel
    return select


_RTC_SELECTION = _selection("rtc", extra=lambda cfg: {"refit_every": cfg.refit_every, "config": cfg.selection_config})
STUDY_STRATEGIES = {
    "mtc": StudyMethod(_selection("mtc"), lambda data, sel, ctx: (data, None, None)),
    "rtc": StudyMethod(_RTC_SELECTION, lambda data, sel, ctx: (
        data, _rtc_map_p(data, ctx.config.estimate_config), None)),
    "bayes": StudyMethod(_RTC_SELECTION, _bayes, judged_by="rtc"),
    "ip": StudyMethod(_selection("pool", as_many_as="mtc")),  # fewer only if pooling decides every pair first
}
"""The :class:`StudyMethod` of each of :data:`bayeval.methods.STUDY_METHODS`; ``estimate`` returns ``(data, point,
draws)`` (``point`` ``None``: p = 0.5; ``draws`` ``None``: no posterior draws): ``mtc`` p = 0.5, ``rtc`` the RTC MAP
fit, ``bayes`` the posterior of :attr:`RobustnessConfig.bayes_config` on RTC's judgments; ``ip`` pools as many
documents as MTC judged."""


def run_trial(collection, config: RobustnessConfig, trial: int, *, reuse: dict | None = None) -> pd.DataFrame:
    r"""Run trial ``trial`` of a study on ``collection`` and return its rows.

    Parameters
    ----------
    collection : TestCollection
        From :func:`~bayeval.experiments.load_collection`.
    config : RobustnessConfig
    trial : int
        Trial number; with ``config.seed`` it fixes the runs drawn and every random choice.
    reuse : dict, optional
        Selections of this trial made by an earlier call with the same selection settings (``k``, ``c``,
        ``depth``, ``alpha``, ``budget``, ``selection_config``, ``refit_every``, ``seed``), filled in place:
        a comparison of estimates on the same judgments (studies/calibration_study.py) judges once.

    Returns
    -------
    pandas.DataFrame
        One row per pair × method × confidence, columns :data:`bayeval.experiments.table.COLUMNS`.

    Notes
    -----
    Truth: MAP of each run cut to ``depth`` on the complete qrels (R counts every relevant document of
    the topic), over the topics with at least one relevant document. A pair's ``true_delta`` is
    MAP(a) − MAP(b), and ``p_less`` is :math:`P(\Delta MAP<0)`.
    RTC and *bayes* share the judgments of one RTC selection (the selection does not depend on
    the estimate made afterwards). Topics are independent under every analytic confidence.
    """

    t_start = time.perf_counter()
    ctx = prepare_trial(collection, config, trial)
    trial = _check_int("trial", trial, 0)
    names, topics, qrels, runs_k, s_mc = list(ctx.names), ctx.topics, ctx.qrels, ctx.runs_k, ctx.s_mc

    truth = RankData.build(runs_k, qrels, depth=config.depth, topics=topics)
    true_map = expected_measures(truth, default_p=0.0, method="delta").all_expected[0]
    sim = pair_similarity(truth)
    ia, ib = np.triu_indices(len(names), k=1)
    orig = np.isin(np.array(names), names[: config.c])
    pair_type = np.select([orig[ia] & orig[ib], orig[ia] | orig[ib]], ["both", "one"], "none")

    selections = {} if reuse is None else reuse
    sel_seconds = {}
    need = {STUDY_STRATEGIES[m].judged_by or m for m in config.methods}
    for m in STUDY_METHODS:  # in this order: ip judges as many documents as mtc did
        if m in need and m not in selections:
            t0 = time.perf_counter()
            selections[m] = STUDY_STRATEGIES[m].select(ctx, selections)
            sel_seconds[m] = time.perf_counter() - t0

    frames = []
    for method in config.methods:
        t0 = time.perf_counter()
        strategy = STUDY_STRATEGIES[method]
        src = strategy.judged_by or method
        sel = selections[src]
        data = RankData.build(runs_k, ctx.judged(sel), depth=config.depth, topics=topics)
        judgments = len(sel.history) if sel is not None else 0
        decided = bool(sel.done) if (sel is not None and strategy.estimate is not None) else False
        per_conf = {}
        if strategy.estimate is None:
            e_map = expected_measures(data, default_p=0.0, method="delta").all_expected[0]
            per_conf["none"] = (e_map, e_map[ia] - e_map[ib], np.zeros(len(ia)), np.full(len(ia), np.nan))
        else:
            data, point, draws = strategy.estimate(data, sel, ctx)
            for conf in config.confidences:
                mc = conf == "mc"
                # posterior draws reach every confidence method (closed forms: law of total variance over
                # closed_form_draws of them, evenly spaced)
                probs = point if draws is None else probabilities_for(conf, point, draws, config.closed_form_draws)
                mc_rng = np.random.default_rng(s_mc.spawn(1)[0]) if mc else None
                kw = {"draws": config.mc_draws, "seed": mc_rng} if mc else {}
                cmp = compare_systems(data, probs, default_p=0.5, method=conf, progress=False, **kw)
                if mc:  # E[MAP] per run from the same kind of draws
                    kw["seed"] = np.random.default_rng(s_mc.spawn(1)[0])
                ev = expected_measures(data, probs, default_p=0.5, method=conf, progress=False, **kw)
                per_conf[conf] = (ev.all_expected[0], cmp.all_expected, cmp.all_variance, cmp.all_p_less)
        seconds = time.perf_counter() - t0 + sel_seconds.get(src, 0.0)
        for conf, (e_map, e_delta, v_delta, p_less) in per_conf.items():
            tau = kendall_tau(e_map, true_map)
            frames.append(pd.DataFrame({
                "collection": collection.name, "trial": trial, "seed": config.seed, "k": config.k, "c": config.c,
                "depth": config.depth, "alpha": config.alpha, "method": method, "confidence": conf,
                "run_a": np.array(names, dtype=object)[ia], "run_b": np.array(names, dtype=object)[ib],
                "pair_type": pair_type, "similarity": sim[ia, ib],
                "p_less": np.asarray(p_less, dtype=np.float64), "e_delta": np.asarray(e_delta, dtype=np.float64),
                "var_delta": np.asarray(v_delta, dtype=np.float64),
                "e_map_a": e_map[ia], "e_map_b": e_map[ib], "true_map_a": true_map[ia], "true_map_b": true_map[ib],
                "true_delta": true_map[ia] - true_map[ib], "judgments": judgments, "decided": decided,
                "tau": tau, "seconds": seconds,
            }))
    out = pd.concat(frames, ignore_index=True)
    out["trial_seconds"] = time.perf_counter() - t_start
    return out[list(COLUMNS)]
