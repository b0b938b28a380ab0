"""The sampling study: how well do intervals built from a random sample of the pool hold, and how narrow are they?

One trial draws, for one budget (a share of each topic's depth-``depth`` pool), a stratified Bernoulli sample
of the pool — strata by the best rank any run gives a document (1-10, 11-30, 31-depth), sampled at rates in
the ratio 10 : 5 : 2 (as the TREC-8 sample of docs/sampling.md), scaled so that the expected number of
judgments is the budget; with ``design="prior"`` instead a Poisson sample in proportion to the AP-prior of the
runs' ranks, statAP's design (:func:`draw_pool_sample`) — and estimates every run's MAP and a random set of
run pairs' ΔMAP three ways:

- ``sample``: statAP (the sample alone; :func:`bayeval.sampling.assisted_measures` with weight 0);
- ``model``: the relevance model fitted on the sampled judgments alone, E and Var of MAP and P(ΔMAP < 0) from
  :mod:`bayeval.expected` (sampled documents fixed at their judgment);
- ``assisted``: the same model's p for every pooled document, corrected by the sample (tuned weight); with
  ``folds >= 2`` (default 5) the p are cross-fitted (:func:`bayeval.sampling.cross_fitted_predictions`): each
  document's p comes from a fit on the other folds' sampled judgments, never on the judgment that corrects it.

- ``model-recal``: ``model`` with the p of unjudged documents recalibrated on the pool
  (:func:`bayeval.sampling.recalibrate`, inverse-probability-weighted Platt scaling) — the map fitted on the
  cross-fitted predictions of the sampled documents, whose p never saw their own judgment;
- ``sample-bc``: the sample alone, statAP with its ratio bias removed (:func:`bayeval.sampling.corrected_measures`,
  second-order correction, jackknife variance of the corrected estimate);
- ``sample-bcp``: ``sample-bc``'s estimate and standard error with the interval normal on the power scale
  ``m^γ`` that the runs' standard errors call for (:func:`bayeval.sampling.power_exponent`; ``γ`` in the
  table's ``power`` column, 1 for every other method's symmetric interval);
- ``combined``: ``model`` and ``assisted`` of the same sample combined by empirical Bayes
  (:func:`bayeval.sampling.combine_means`, :func:`bayeval.sampling.combine_differences`): each run's MAP and each
  pair's ΔMAP leans on the model as far as the sample says the model errs (no further fit; the table's
  ``weight`` is the runs' mean weight on the sample's estimate);
- ``mtc``: the same model fitted on the judgments MTC chooses (Carterette, Allan & Sitaraman 2006) for the
  trial's target pairs, as many as the sample drew, instead of the sample's. MTC is deterministic: its rows are
  computed in trial 0 only (the coverage is then over runs, not samples).

Each method is an entry of one registry (:data:`bayeval.experiments.sampling_methods.SAMPLING_STRATEGIES`): a
function of a budget's sample (:class:`~bayeval.experiments.sampling_methods.BudgetSample`, which computes the
model fit, the cross-fitted predictions and the corrected statAP once for all methods) returning a
:class:`~bayeval.experiments.sampling_methods.MethodEstimate`.

The truth is MAP at the same depth with every pooled document judged (the complete qrels). The trial table
(:data:`SAMPLING_COLUMNS`) has one row per trial × budget × method × run (``kind = "run"``) or run pair
(``kind = "pair"``); its ``settings`` column records, per row, the settings that change the row's numbers
(:func:`sampling_settings`). A study is resumable: :func:`sampling_resume_plan` skips a trial that holds every
requested (budget, method), computes only the missing ones of a trial that holds some (the same sample: a
budget's sample depends on the seed, the trial and the budget's place in ``budgets``), and refuses when the
settings differ from those of the table's rows of the collection. Statistics: :func:`sampling_statistics`;
the page: docs/sampling.md.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from bayeval.data.qrels import Qrels, TopicJudgments
from bayeval.data.rankdata import RankData
from bayeval.data.sample import StratifiedSample, TopicSample
from bayeval.defaults import DEFAULT_MODEL
from bayeval.errors import BayevalInputError
from bayeval.experiments.sampling_methods import SAMPLING_STRATEGIES, BudgetSample, MethodEstimate, SamplingTrial
from bayeval.experiments.statistics import proper_scores
from bayeval.io.trials import read_table
from bayeval.measures import evaluate
from bayeval.sampling.assisted import VARIANCES
from bayeval.sampling.design import poisson_draw, prior_inclusion, rank_inclusion, rank_stratum
from bayeval.sampling.intervals import power_bounds

__all__ = ["SAMPLING_COLUMNS", "SAMPLING_DESIGNS", "SAMPLING_FORMS", "SAMPLING_METHODS", "SamplingStudyConfig",
           "draw_pool_sample", "pool_judgments", "prepare_sampling_trial", "read_sampling_table", "run_sampling_trial",
           "sampling_reliability", "sampling_resume_plan", "sampling_settings", "sampling_statistics", "trial_rows"]

SAMPLING_METHODS = tuple(SAMPLING_STRATEGIES)
SAMPLING_COLUMNS = ("collection", "trial", "seed", "budget", "depth", "method", "kind", "run_a", "run_b",
                    "manual", "estimate", "se", "p_less", "truth", "judgments", "pool", "weight", "tau", "seconds",
                    "power", "settings")
#: columns a table written before they existed lacks, read as these defaults (``settings``: not recorded)
SAMPLING_OPTIONAL = {"power": 1.0, "settings": None}
#: the settings :func:`sampling_settings` records, as the ``run`` command's options
SETTING_OPTIONS = {"depth": "--depth", "model": "--model", "pairs": "--pairs", "folds": "--folds",
                   "variance": "--variance", "share": "--share", "run_groups": "--run-groups",
                   "design": "--design", "relevance_level": "--relevance-level", "per_topic": "--per-topic",
                   "form": "--form",
                   "budgets": "--budgets"}
#: settings added after tables recorded them: the value a row without the key was made with (a row made with it
#: does not record it either, so that the default's rows are the same as before the setting existed)
SETTING_DEFAULTS = {"design": "rank", "relevance_level": 1, "per_topic": False, "form": "ratio"}
#: the forms of the study's ``assisted`` method (:data:`bayeval.experiments.sampling_methods.ASSISTED_FORMS`)
SAMPLING_FORMS = ("auto", "anchored", "ratio")
#: the sampling designs of the study (:func:`draw_pool_sample`)
SAMPLING_DESIGNS = ("rank", "prior")


@dataclass(frozen=True)
class SamplingStudyConfig:
    """Settings of the sampling study.

    Attributes
    ----------
    budgets : tuple of float
        Shares of each topic's pool judged (expected), e.g. (0.02, 0.05, 0.10, 0.20); with ``per_topic``, the
        judgments drawn in each topic (expected), e.g. (10, 20, 40).
    depth : int
        Pool depth and evaluation depth.
    model : str
        Relevance model configuration (``bayeval.relevance.estimate_probabilities``), fitted by MAP.
    pairs : int
        Run pairs drawn per trial for P(ΔMAP < 0).
    methods : tuple of str
    seed : int
    folds : int
        Cross-fitting folds of the model-assisted predictions (default 5: each fit sees 80% of the sample; chosen
        on Robust 2003 and a synthetic collection against 2, docs/sampling.md; 0: the model fitted on the whole
        sample, which then also corrects it — kept for comparison only).
    variance : {"jackknife", "own-label", "linearised"}
        AP's variance estimate in ``sample`` and ``assisted`` (:func:`bayeval.sampling.assisted_measures`).
    share : float in [0, 1)
        ``combined``: the share ``ρ`` of the sample's error the model's estimate carries
        (:func:`bayeval.sampling.combine_differences`; default 0.5, chosen on Robust 2003 and synthetic
        collections).
    run_groups : bool
        ``combined``: give the model one shift per run type (the collection's runs.tsv ``type``, manual or
        automatic; :func:`bayeval.sampling.combine_means` ``groups=``) instead of one for all runs (default
        False; a collection without manual runs has one group either way; docs/sampling.md).
    design : {"rank", "prior"}
        How each budget's sample is drawn (:func:`draw_pool_sample`): ``"rank"`` (default) strata by best rank
        at rates 10 : 5 : 2, as xinfAP samples; ``"prior"`` in proportion to the AP-prior of the runs' ranks, as
        statAP samples (:func:`bayeval.sampling.design.prior_inclusion`).
    relevance_level : int >= 1
        The least grade counted relevant, by the truth, the model and the estimators alike (default 1).
    per_topic : bool
        ``budgets`` are judgments per topic instead of shares of its pool: topic t's share is
        ``min(1, budget / N_t)``, ``N_t`` its pool (default False).
    form : {"auto", "anchored", "ratio"}
        The form of ``assisted`` (and so of ``combined``'s design-based part): ``"anchored"``, AP's expansion
        around the model's expected AP estimated from the sample (:func:`bayeval.sampling.anchored_measures`);
        ``"ratio"``, the ratio N̂/R̂ of the corrected labels (:func:`bayeval.sampling.assisted_measures`);
        ``"auto"`` (default), the anchored form where a budget's median expected draws a topic are below 50, the
        ratio from 50 (:func:`bayeval.sampling.assisted_form`; chosen on DL 2020, Robust 2003 and a dense
        synthetic collection, docs/sampling.md).
    """

    budgets: tuple[float, ...] = (0.02, 0.05, 0.10, 0.20)
    depth: int = 100
    model: str = DEFAULT_MODEL
    pairs: int = 200
    methods: tuple[str, ...] = ("sample", "model", "assisted")
    seed: int = 1
    folds: int = 5
    variance: str = "jackknife"
    share: float = 0.5
    run_groups: bool = False
    design: str = "rank"
    relevance_level: int = 1
    per_topic: bool = False
    form: str = "auto"

    def __post_init__(self) -> None:
        if self.design not in SAMPLING_DESIGNS:
            raise BayevalInputError(f"design: one of {', '.join(SAMPLING_DESIGNS)}, got {self.design!r}")
        if self.form not in SAMPLING_FORMS:
            raise BayevalInputError(f"form: one of {', '.join(SAMPLING_FORMS)}, got {self.form!r}")

        if not isinstance(self.run_groups, (bool, np.bool_)):
            raise BayevalInputError(f"run_groups: True or False, got {self.run_groups!r}")
        if self.run_groups and "combined" not in self.methods:
            raise BayevalInputError("run_groups: only the 'combined' method uses run groups; add it to methods")

        if not 0.0 <= self.share < 1.0:
            raise BayevalInputError(f"share: must lie in [0, 1), got {self.share!r}")

        if self.variance not in VARIANCES:
            raise BayevalInputError(f"variance: one of {', '.join(VARIANCES)}, got {self.variance!r}")
        if not isinstance(self.folds, (int, np.integer)) or self.folds == 1 or self.folds < 0:
            raise BayevalInputError(f"folds: 0 (no cross-fitting) or an integer >= 2, got {self.folds!r}")
        if not isinstance(self.per_topic, (bool, np.bool_)):
            raise BayevalInputError(f"per_topic: True or False, got {self.per_topic!r}")
        if self.per_topic and (not self.budgets or any(not b >= 1 for b in self.budgets)):
            raise BayevalInputError(f"budgets: judgments per topic, each >= 1, got {self.budgets!r}")
        if not self.per_topic and (not self.budgets or any(not 0 < b <= 1 for b in self.budgets)):
            raise BayevalInputError(f"budgets: shares in (0, 1], got {self.budgets!r}")
        if isinstance(self.relevance_level, bool) or not isinstance(self.relevance_level, (int, np.integer)) \
                or self.relevance_level < 1:
            raise BayevalInputError(f"relevance_level: an integer >= 1, got {self.relevance_level!r}")
        unknown = set(self.methods) - set(SAMPLING_METHODS)
        if unknown:
            raise BayevalInputError(f"methods: unknown {sorted(unknown)}; choose from {', '.join(SAMPLING_METHODS)}")


def draw_pool_sample(data: RankData, truth: Qrels, budget: float, rng: np.random.Generator, design: str = "rank",
                     per_topic: bool = False) -> tuple[StratifiedSample, dict[str, np.ndarray]]:
    """A Poisson sample of each topic's pool (every document some run ranks within ``data.depth``) and the
    inclusion probabilities, aligned with ``sample[t].docnos``.

    ``design="rank"``: strata by best rank 1-10 / 11-30 / deeper at rates 10 : 5 : 2
    (:func:`bayeval.sampling.design.rank_inclusion`: a stratified Bernoulli sample); ``"prior"``: in proportion
    to the AP-prior of the runs' ranks (:func:`bayeval.sampling.design.prior_inclusion`, floor 0.05). Both draw
    one uniform number per pooled document from ``rng`` (:func:`bayeval.sampling.design.poisson_draw`), so the
    two designs of one seed are coupled. The sample's strata are the best-rank strata under either design: under
    ``"prior"`` they describe the documents but are not the design, so an estimator must be given the returned
    probabilities (``inclusion=``; every method of the study is), not the strata's rates ``n_c / N_c``.

    ``budget`` is the share of each topic's pool drawn (expected), or with ``per_topic`` the number of documents
    drawn in each topic (expected): topic t's share is then ``min(1, budget / N_t)``, ``N_t`` its pool.
    """
    if design not in SAMPLING_DESIGNS:
        raise BayevalInputError(f"design: one of {', '.join(SAMPLING_DESIGNS)}, got {design!r}")
    out, incl = {}, {}
    for tr in data:
        ranks = tr.ranks
        retrieved = (ranks > 0).any(axis=1)
        best = np.where(ranks > 0, ranks, np.iinfo(np.int32).max).min(axis=1)[retrieved]
        docs = tr.docnos[retrieved]
        tj = truth.topic_judgments.get(tr.topic)
        grades = np.zeros(len(docs), dtype=np.int64)
        if tj is not None:
            pos = pd.Index(tj.docnos).get_indexer(docs)
            grades = np.where(pos >= 0, np.maximum(tj.grades[np.maximum(pos, 0)], 0), 0)
        share = min(1.0, float(budget) / max(len(docs), 1)) if per_topic else budget
        pi = rank_inclusion(best, share) if design == "rank" else prior_inclusion(ranks[retrieved], share, data.depth)
        take = poisson_draw(pi, rng)
        stratum = rank_stratum(best)
        out[tr.topic] = TopicSample(docs, stratum, ("1", "2", "3"), np.where(take, grades, -1))
        incl[tr.topic] = pi
    return StratifiedSample(out), incl


def sampling_settings(config: SamplingStudyConfig) -> str:
    """The settings of ``config`` that change a trial's numbers, as the table's ``settings`` column holds them:
    JSON of ``depth, model, pairs, folds, variance, share, run_groups``; ``design``, ``relevance_level``,
    ``per_topic`` and ``form`` unless they hold the value that rows without them were made with
    (:data:`SETTING_DEFAULTS`: tables written before the setting existed); and ``budgets`` (in order: a budget's
    sample depends on its place in the list, the random stream being drawn one budget after the other)."""
    out = {"depth": int(config.depth), "model": str(config.model), "pairs": int(config.pairs),
           "folds": int(config.folds), "variance": str(config.variance), "share": float(config.share),
           "run_groups": bool(config.run_groups), "budgets": [float(b) for b in config.budgets]}
    if config.design != SETTING_DEFAULTS["design"]:
        out["design"] = str(config.design)
    if int(config.relevance_level) != SETTING_DEFAULTS["relevance_level"]:
        out["relevance_level"] = int(config.relevance_level)
    if bool(config.per_topic):
        out["per_topic"] = True
    if config.form != SETTING_DEFAULTS["form"]:
        out["form"] = str(config.form)
    return json.dumps(out, sort_keys=True)


def run_sampling_trial(collection, config: SamplingStudyConfig, trial: int, only=None) -> pd.DataFrame:
    """One trial: for every budget, a fresh sample and the estimates of every method (rows of the trial table).

    ``only``, a set of ``(budget, method)``, limits the rows to those (every budget's sample is still drawn, in
    order, so that each row equals the full trial's: the resumption of a trial that lacks some of them). The
    methods come from :data:`bayeval.experiments.sampling_methods.SAMPLING_STRATEGIES`.
    """
    rng = np.random.default_rng([config.seed, trial])
    wanted = None if only is None else {(round(float(b), 12), str(m)) for b, m in only}
    tr = prepare_sampling_trial(collection, config, trial, rng)
    frames = []
    for bi, budget in enumerate(config.budgets):
        sample, incl = draw_pool_sample(tr.base, tr.qrels, budget, rng, design=config.design,
                                        per_topic=config.per_topic)
        smp = BudgetSample(tr, bi, sample, incl)
        for method in config.methods:
            if SAMPLING_STRATEGIES[method].first_trial_only and trial != 0:
                continue
            if wanted is not None and (round(float(budget), 12), method) not in wanted:
                continue
            t0 = time.perf_counter()
            est = smp.estimate(method)
            frames.append(trial_rows(collection.name, tr, budget, method, est, smp.n_pool,
                                      time.perf_counter() - t0))
    if not frames:
        return pd.DataFrame({c: [] for c in SAMPLING_COLUMNS})
    return pd.concat(frames, ignore_index=True)


def prepare_sampling_trial(collection, config: SamplingStudyConfig, trial: int,
                           rng: np.random.Generator) -> SamplingTrial:
    """What every budget of the trial shares: runs, pool, truth and the trial's run pairs (drawn from ``rng``:
    :func:`run_sampling_trial` then draws each budget's sample from it, in order, with :func:`draw_pool_sample`;
    a study script that does the same gets the study's samples)."""
    runs = collection.runs(collection.run_names)
    qrels = collection.qrels()
    qrels = Qrels(qrels.topic_judgments, int(config.relevance_level))   # the study's level, whatever the collection's
    topics = collection.topics()
    base = RankData.build(runs, None, depth=config.depth, topics=topics)
    truth = pool_judgments(base, qrels)
    frame = evaluate(RankData.build(runs, truth, depth=config.depth, topics=topics), "AP").to_frame()
    true_map = frame[frame.topic == "all"].set_index("run").value.reindex(runs.names).to_numpy()
    ia, ib = np.triu_indices(len(runs), 1)
    pick = rng.choice(len(ia), size=min(config.pairs, len(ia)), replace=False)
    return SamplingTrial(config, trial, runs, topics, base, qrels, truth, true_map, frozenset(collection.manual),
                         ia[pick], ib[pick])


def trial_rows(collection: str, tr: SamplingTrial, budget: float, method: str, est: MethodEstimate, pool: int,
                seconds: float) -> pd.DataFrame:
    """The table's rows of one method on one budget's sample: every run (``kind = "run"``), then every pair."""
    cfg, names = tr.config, np.array(tr.names, dtype=object)
    a, b = tr.pair_a, tr.pair_b
    manual = np.array([n in tr.manual for n in names], dtype=bool)
    tau = stats.kendalltau(est.mean, tr.true_map).statistic
    common = {"collection": collection, "trial": tr.trial, "seed": cfg.seed, "budget": budget,
              "depth": cfg.depth, "method": method, "judgments": est.judgments, "weight": est.weight, "tau": tau,
              "seconds": seconds, "settings": sampling_settings(cfg)}
    runs = pd.DataFrame({**common, "kind": "run", "run_a": names, "run_b": "", "manual": manual,
                         "estimate": est.mean, "se": np.sqrt(np.maximum(est.variance, 0.0)), "p_less": np.nan,
                         "truth": tr.true_map, "pool": pool, "power": est.power})
    pairs = pd.DataFrame({**common, "kind": "pair", "run_a": names[a], "run_b": names[b],
                          "manual": manual[a] | manual[b], "estimate": est.delta,
                          "se": np.sqrt(np.maximum(est.delta_variance, 0.0)), "p_less": est.p_less,
                          "truth": tr.true_map[a] - tr.true_map[b], "pool": pool, "power": 1.0})
    return pd.concat([runs, pairs], ignore_index=True)[list(SAMPLING_COLUMNS)]


def pool_judgments(base: RankData, qrels: Qrels) -> Qrels:
    """The complete judgments of the pool of ``base``: every document some run ranks within the depth, with its
    grade in ``qrels`` (a pooled document the qrels do not list is nonrelevant, grade 0; documents outside the
    pool are dropped). The study's truth is every run's measure on these judgments."""
    out = {}
    for tr in base:
        docs = tr.docnos[(tr.ranks > 0).any(axis=1)]
        tj = qrels.topic_judgments.get(tr.topic)
        grades = np.zeros(len(docs), dtype=np.int64)
        if tj is not None:
            pos = pd.Index(tj.docnos).get_indexer(docs)
            grades = np.where(pos >= 0, tj.grades[np.maximum(pos, 0)], 0)
        out[tr.topic] = TopicJudgments(docs, grades)
    return Qrels(out, qrels.relevance_level)


def read_sampling_table(path) -> pd.DataFrame:
    """A trial table of the sampling study (:data:`SAMPLING_COLUMNS`); a table written before the ``power``
    column existed is read with ``power = 1`` (every interval symmetric, as it was), one written before the
    ``settings`` column with ``settings`` missing (not recorded)."""
    return read_table(path, SAMPLING_COLUMNS, optional=SAMPLING_OPTIONAL)


def _recorded(text) -> dict | None:
    """A row's ``settings`` as a dict; None when not recorded (an older table, or a study script's rows)."""
    if not isinstance(text, str) or not text:
        return None
    try:
        out = json.loads(text)
    except ValueError:
        return None
    return out if isinstance(out, dict) else None


def _shown(value) -> str:
    if isinstance(value, list):
        return ",".join(f"{v:g}" for v in value)
    return str(value).lower() if isinstance(value, bool) else str(value)


def sampling_resume_plan(frame: pd.DataFrame | None, collection: str, config: SamplingStudyConfig, trials,
                         table="the table") -> tuple[dict[int, set[tuple[float, str]]], list[str]]:
    """What resuming a trial table computes: per trial, the ``(budget, method)`` it lacks, and warnings.

    A trial (of ``collection`` and ``config.seed``) is done when it holds every requested (budget, method)
    (``mtc``: trial 0 only); one that holds some gets only the missing ones, computed on the same samples
    (:func:`run_sampling_trial` ``only=``). Nothing is ever dropped or rewritten.

    Raises
    ------
    BayevalInputError
        When the settings (:func:`sampling_settings`) differ from those of the table's rows of ``collection``
        (any seed: the statistics pool a collection's rows), naming each setting with the table's and the
        requested value — even when nothing is left to compute, so that a table is never taken for what it
        is not; when a trial to complete holds budgets at other places than the requested ones (a budget's
        sample would not be the one its rows were computed on); or when something is to be computed and the
        table's rows of ``collection`` were written before the settings were recorded (they cannot be
        checked, so nothing is added to them; with nothing to compute, a warning).
    """
    budgets = [round(float(b), 12) for b in config.budgets]
    plan = {}
    for t in trials:
        plan[int(t)] = {(b, m) for b in budgets for m in config.methods if m != "mtc" or int(t) == 0}
    warnings: list[str] = []
    if frame is None or not len(frame):
        return plan, warnings
    settings = frame["settings"] if "settings" in frame.columns else pd.Series(None, index=frame.index)
    unrecorded = sorted(set(frame.collection[settings.map(_recorded).isna()].astype(str)))
    mine = frame[frame.collection == collection]
    same_seed = mine[mine.seed == config.seed]
    have = {}
    for t, b, m in zip(same_seed.trial, same_seed.budget, same_seed.method, strict=True):
        have.setdefault(int(t), set()).add((round(float(b), 12), str(m)))
    plan = {t: want - have.get(t, set()) for t, want in plan.items()}
    todo = {t: w for t, w in plan.items() if w}
    if unrecorded:
        warnings.append(f"{table}: the rows of {', '.join(unrecorded)} have no recorded settings (written before "
                        "the study recorded them, or by a study script); they are kept as they are")
    if not len(mine):
        return plan, warnings
    if collection in unrecorded:
        if not todo:   # nothing to compute: nothing can mix
            return plan, warnings
        raise BayevalInputError(
            f"{table}: its rows of {collection} have no recorded settings (written before the study recorded "
            f"them, or by a study script), so whether they were made with the same "
            f"{', '.join(SETTING_OPTIONS.values())} cannot be checked and no rows are added to them "
            f"({sum(len(w) for w in todo.values())} (budget, method) of {len(todo)} trial(s) would be computed); "
            "write to another --out")
    want = json.loads(sampling_settings(config))
    recorded = [_recorded(x) for x in mine.settings.unique()]
    diffs = []
    for key, option in SETTING_OPTIONS.items():
        if key == "budgets":
            continue
        new = want.get(key, SETTING_DEFAULTS.get(key))
        old = sorted({json.dumps(r.get(key, SETTING_DEFAULTS.get(key))) for r in recorded} - {json.dumps(new)})
        if old:
            diffs.append(f"{option} {' / '.join(_shown(json.loads(o)) for o in old)} in the table, "
                         f"{_shown(new)} now")
    # a trial to complete: its budgets' samples must be those its rows were computed on
    partial = same_seed[same_seed.trial.isin([t for t in todo if t in have])]
    clash = {}
    for t, text in zip(partial.trial, partial.settings, strict=True):
        old = tuple(round(float(b), 12) for b in _recorded(text).get("budgets", []))
        if old[:len(budgets)] != tuple(budgets)[:len(old)]:
            clash.setdefault(old, set()).add(int(t))
    for old, ts in sorted(clash.items()):
        diffs.append(f"--budgets {_shown(list(old))} in trial(s) {','.join(map(str, sorted(ts)))} of seed "
                     f"{config.seed}, {_shown(budgets)} now (a budget's sample depends on its place in --budgets: "
                     "to complete these trials keep the table's budgets in their places, new ones at the end)")
    if diffs:
        raise BayevalInputError(
            f"{table}: the settings differ from those of its rows of {collection}: {'; '.join(diffs)}. Rows "
            "made with other settings would be mixed in one table (the statistics pool them); write to another "
            "--out, or resume with the table's settings")
    return plan, warnings


def sampling_statistics(frame: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Per collection × budget × method × run group (automatic / manual / all): coverage of the ``level``
    interval of MAP with its standard error over trials (runs of one trial share a sample), the shares of
    intervals the truth lies above and below, mean width, RMSE, bias, Kendall τ, and for pairs the Brier score
    of P(ΔMAP < 0), the share of calls at ≥ 0.95 and their accuracy, and accuracy at ≥ 0.99. A run's interval
    is normal on the scale ``m^γ`` of its row's ``power`` γ (:func:`bayeval.sampling.power_bounds`; 1, the
    symmetric ``m ± z·se``, where absent)."""
    if not 0 < level < 1:
        raise BayevalInputError(f"level: must lie in (0, 1), got {level!r}")
    if "power" not in frame.columns:
        frame = frame.assign(power=1.0)
    out = []
    keys = ["collection", "budget", "method"]
    for key, g in frame.groupby(keys, sort=True):
        runs, pairs = g[g.kind == "run"], g[g.kind == "pair"]
        for group, sel_r, sel_p in (("automatic", ~runs.manual, ~pairs.manual), ("manual", runs.manual, pairs.manual),
                                    ("all", runs.manual | True, pairs.manual | True)):
            r, p = runs[sel_r.to_numpy()], pairs[sel_p.to_numpy()]
            if not len(r):
                continue
            lo, hi = power_bounds(r.estimate.to_numpy(), r.se.to_numpy(), r.power.fillna(1.0).to_numpy(), level)
            truth = r.truth.to_numpy()
            hit = pd.Series(((lo <= truth) & (truth <= hi)).astype(float), index=r.index)
            cover = float(np.mean(hit))
            per_trial = hit.groupby(r.trial.to_numpy()).mean()
            # the runs of one trial share one sample: the standard error of the coverage is over trials
            cover_se = float(per_trial.std(ddof=1) / np.sqrt(len(per_trial))) if len(per_trial) > 1 else np.nan
            width = float(np.mean(hi - lo))
            rmse = float(np.sqrt(np.mean((r.estimate - r.truth) ** 2)))
            y = (p.truth < 0).astype(float).to_numpy()
            pl = p.p_less.to_numpy()
            conf = np.maximum(pl, 1 - pl)
            right = (pl >= 0.5) == (y == 1)
            c95, c99 = conf >= 0.95, conf >= 0.99
            if group != "all" and not runs.manual.any():   # no manual/automatic list: 'all' says it all
                continue
            out.append((*key, group, len(r), r.trial.nunique(), cover, cover_se, float(np.mean(truth > hi)),
                        float(np.mean(truth < lo)), width, rmse, float(np.mean(r.estimate - r.truth)),
                        r.groupby("trial").tau.first().mean(),
                        float(np.mean((pl - y) ** 2)) if len(p) else np.nan,
                        float(np.mean(c95)) if len(p) else np.nan,
                        float(np.mean(right[c95])) if c95.any() else np.nan,
                        float(np.mean(right[c99])) if c99.any() else np.nan,
                        r.judgments.mean() / r.pool.mean()))
    return pd.DataFrame(out, columns=[*keys, "group", "n", "trials", "coverage", "coverage_se", "above", "below",
                                      "width", "rmse", "bias", "tau", "brier", "calls95", "right95", "right99",
                                      "judged_share"])


def sampling_reliability(frame: pd.DataFrame, level: float = 0.95) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Reliability of P(ΔMAP < 0) per collection × budget × method × pair group (all / automatic / manual: a pair
    is manual when either run is), with the Wilson-interval bins of :func:`bayeval.experiments.proper_scores`.

    Returns
    -------
    summary, bins : pandas.DataFrame
        ``summary``: ``collection, budget, method, split, group, pairs, brier, bins, inconsistent`` (bins whose
        Wilson interval misses the bin's mean forecast); ``bins``: every reliability bin.
    """
    rows, bins = [], []
    for (col, budget), g in frame[frame.kind == "pair"].groupby(["collection", "budget"], sort=True):
        runs = frame[(frame.collection == col) & (frame.kind == "run")]
        manual = sorted(set(runs[runs.manual].run_a))
        scored = pd.DataFrame({"method": g.method, "confidence": "design", "pair_type": "any", "run_a": g.run_a,
                               "run_b": g.run_b, "p_less": g.p_less, "true_delta": g.truth})
        proper, rel = proper_scores(scored, manual=manual or None, level=level)
        proper = proper[proper.split != "pair_type"]
        rel = rel[rel.split != "pair_type"].assign(collection=col, budget=budget)
        for r in proper.itertuples(index=False):
            sub = rel[(rel.method == r.method) & (rel.split == r.split) & (rel.group == r.group)]
            rows.append((col, budget, r.method, r.split, r.group, r.pairs, r.brier, len(sub),
                         int((~sub.consistent.astype(bool)).sum())))
        bins.append(rel)
    summary = pd.DataFrame(rows, columns=["collection", "budget", "method", "split", "group", "pairs", "brier",
                                          "bins", "inconsistent"])
    return summary, (pd.concat(bins, ignore_index=True) if bins else pd.DataFrame())
