"""Declarative priors of the relevance models, and their TOML files (``models/*.toml``).

Every prior and hyperparameter is a field of a frozen dataclass; a model configuration groups them and
is loaded by name with :func:`load_config` (``load_config("rtc-default")``) from the configurations
shipped inside the package (``bayeval/_models``; the repository's ``models/`` in an editable install)
or from a path. :func:`list_configs` names them.

Each configuration class is registered under its ``kind``, which names its estimator in
:data:`bayeval.relevance.estimate.ESTIMATORS`; its ``accepts`` names the options of
:func:`~bayeval.relevance.estimate_probabilities` that estimator takes (``depth``: rank positions of a
rank-coefficient model; ``extra``: extra expert columns; ``stage_methods``; the similarity sources; ``labels``:
automatic assessors' labels, which every kind accepts, :mod:`bayeval.relevance.assessor`) and
``gives_draws`` whether a sampled fit gives posterior draws of p, ``unseen_by_default`` whether the CLI adds the
unseen relevant documents by default. Callers ask these instead of testing kinds.

A TOML file has a top-level ``kind`` (``"rtc"``, ``"similarity"``, ``"hierarchical"``, ``"uniform"``,
``"smoothed"``, ``"sparse"``), an
optional ``description``, and one table per stage::

    kind = "rtc"
    description = "..."
    [rank]
    relevant_offset = 1.0
    [calibration]
    smoothing = 1.0
    [aggregation]
    alpha = 1.0
    beta = 1.0
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import ClassVar

try:  # Python 3.11+; on 3.10 the same parser as the package tomli (a dependency there, pyproject.toml)
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from bayeval.errors import BayevalInputError, FileFormatError

__all__ = [
    "AggregationPrior",
    "BeyondDepthPrior",
    "CalibrationPrior",
    "HeldOutRunsPrior",
    "HierarchicalConfig",
    "HierarchyPrior",
    "RTCConfig",
    "RankPrior",
    "SimilarityConfig",
    "SimilarityPrior",
    "SmoothedConfig",
    "SparseLabelConfig",
    "UniformConfig",
    "kinds_accepting",
    "list_configs",
    "load_config",
    "load_config_as",
    "models_dir",
    "read_toml",
]


def _choice(name: str, value, allowed) -> None:
    if value not in allowed:
        raise BayevalInputError(f"{name}: must be one of {', '.join(map(repr, allowed))}, got {value!r}")


def _nonneg(name: str, value, *, positive: bool = False) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < 0 or (positive and value == 0):
        raise BayevalInputError(f"{name}: must be a {'positive' if positive else 'non-negative'} number, got {value!r}")


@dataclass(frozen=True)
class RankPrior:
    r"""Rank coefficients (Bradley–Terry over rank positions), per topic.

    Attributes
    ----------
    relevant_offset, nonrelevant_offset : float
        The prior on every :math:`\sigma(\theta_r)` is
        Beta(``count_scale``·|R_t| + ``relevant_offset``, ``count_scale``·|N_t| + ``nonrelevant_offset``);
        the paper's Beta(|R_t|+1, |N_t|+1) is the default.
    count_scale : float
        Multiplies the judged counts in the prior (1 = the paper).
    comparison_weight : float
        Weight of each pairwise preference "rank r beats rank r' > r" (and "every rank beats unretrieved").
    per_system : bool
        Count each preference once per system whose list has both positions (else once per topic, as
        mtc-eval solves it once per topic).
    unretrieved : {"zero", "fitted"}
        q* of an unretrieved document: 0 (the paper's :math:`\theta_\infty=-\infty`) or
        :math:`\sigma(\theta_{D+1})` of the fitted unretrieved position.
    decay : {"flat", "learned"}
        Shape of the prior over ranks: the same Beta at every rank (``"flat"``, the paper), or a decay
        with rank learned across topics from every run's completely judged prefix
        (:mod:`bayeval.relevance.rank_decay`), with the same total strength.
    decay_topic_sd : float
        Prior sd τ of the topic offsets of the learned decay.
    """

    relevant_offset: float = 1.0
    nonrelevant_offset: float = 1.0
    count_scale: float = 1.0
    comparison_weight: float = 1.0
    per_system: bool = False
    unretrieved: str = "zero"
    decay: str = "flat"
    decay_topic_sd: float = 1.0

    def __post_init__(self) -> None:
        _choice("rank.decay", self.decay, ("flat", "learned"))
        _nonneg("rank.decay_topic_sd", self.decay_topic_sd, positive=True)
        for n in ("relevant_offset", "nonrelevant_offset", "count_scale"):
            _nonneg(f"rank.{n}", getattr(self, n))
        _nonneg("rank.comparison_weight", self.comparison_weight, positive=True)
        _choice("rank.unretrieved", self.unretrieved, ("zero", "fitted"))


@dataclass(frozen=True)
class CalibrationPrior:
    r"""Per-system Platt calibration :math:`q_{ij}=\sigma(A_j+B_jq^*_{ij})`.

    Attributes
    ----------
    smoothing : float
        Pseudo-count added for *each* class (relevant and nonrelevant) at each smoothing cell — the prior.
    smoothing_cells : {"all", "judged"}
        Cells (topic, rank) that get the pseudo-counts: every rank position of the system's list and its
        unretrieved cell (mtc-eval), or only cells holding a judged document.
    scale : {"probability", "logit"}
        Input of the sigmoid: :math:`q^*` itself (the paper) or its log-odds :math:`\theta` — Platt's
        original form on a real-valued score, under which a topic's rank coefficients shift the calibrated
        log-odds additively. With ``"logit"`` the unretrieved position always uses its fitted coefficient.
    training : {"all", "complete"}
        Judged documents used: all of them (mtc-eval), or only those in the system's *completely judged
        prefix* (ranks 1..c where every document is judged) — an unbiased sample of its own ranking,
        where judged documents deeper in the list were selected by other systems and are biased towards
        relevance.
    intercept_sd, slope_sd : float or None
        Normal(0, sd) priors on :math:`A_j`, :math:`B_j`; default 10, nearly flat against the smoothing
        pseudo-counts and the data, but proper, so the model has a prior to draw from (prior predictive
        checks). ``None`` = flat (the paper's implicit choice): an improper prior with no prior draws.
    pooled_intercept_sd, pooled_slope_sd : float or None
        Partial pooling across systems (docs/notes/calibration-record.md, "No collapse with many runs"): when both are
        set, :math:`A_j\sim N(\bar A, sd_A^2)` and :math:`B_j\sim N(\bar B, sd_B^2)` replace the
        Normal(0, ``intercept_sd``/``slope_sd``) priors, centred on :math:`(\bar A,\bar B)`, the mode of one
        calibration shared by every system (all cells pooled; an empirical-Bayes centre). A system whose
        completely judged prefix is short then gets the pooled calibration, not a flat-prior guess whose
        draws swing p of every document it ranks. ``None`` (both): no pooling.
    fixed_below : float
        A system whose completely judged prefix averages fewer than this many documents per topic keeps its
        calibration at the mode in every posterior draw of p ("fix what the data cannot inform"). Its
        (A, B) then rest on a few cells and the prior; drawn independently of the aggregation fitted at the
        mode (which is affine in the calibrated log-odds), they send the spread of p to 0–1 as such runs are
        added (docs/notes/calibration-record.md, "No collapse with many runs"). 0 (the paper's chain): none fixed;
        ``rtc-default``: 5.
    """

    smoothing: float = 1.0
    smoothing_cells: str = "all"
    scale: str = "probability"
    training: str = "all"
    intercept_sd: float | None = 10.0
    slope_sd: float | None = 10.0
    pooled_intercept_sd: float | None = None
    pooled_slope_sd: float | None = None
    fixed_below: float = 0.0

    def __post_init__(self) -> None:
        _nonneg("calibration.smoothing", self.smoothing)
        _choice("calibration.smoothing_cells", self.smoothing_cells, ("all", "judged"))
        _choice("calibration.training", self.training, ("all", "complete"))
        _choice("calibration.scale", self.scale, ("probability", "logit"))
        for n in ("intercept_sd", "slope_sd", "pooled_intercept_sd", "pooled_slope_sd"):
            if getattr(self, n) is not None:
                _nonneg(f"calibration.{n}", getattr(self, n), positive=True)
        _nonneg("calibration.fixed_below", self.fixed_below)
        if (self.pooled_intercept_sd is None) != (self.pooled_slope_sd is None):
            raise BayevalInputError("calibration.pooled_intercept_sd, calibration.pooled_slope_sd: set both or "
                                    "neither")

    @property
    def pooled(self) -> bool:
        """Whether the systems' calibrations are partially pooled (both pooled sds set)."""
        return self.pooled_intercept_sd is not None


@dataclass(frozen=True)
class AggregationPrior:
    r"""Expert aggregation :math:`p_i=\sigma(\lambda_0+\sum_j\lambda_j f(q_{ij}))`.

    Attributes
    ----------
    alpha, beta : float
        Beta(α, β) prior on each :math:`\sigma(\lambda_j)` (α = β = 1 in the paper), i.e. α and β
        pseudo-rows per expert.
    intercept : bool
        Include :math:`\lambda_0` (the paper has none).
    intercept_sd : float
        Normal(0, sd) prior on :math:`\lambda_0`.
    features : {"probability", "logit"}
        :math:`f(q)=q` (the paper, a linear opinion pool on the logit scale) or :math:`f(q)=\mathrm{logit}(q)`
        (a logarithmic opinion pool: with no intercept and λ summing to 1 it is the weighted geometric
        mean of the experts' odds).
    training : {"all", "complete"}
        Judged documents used as rows: all (mtc-eval), or those some system ranks within its completely
        judged prefix (see :class:`CalibrationPrior`).
    extra_default : float or None
        Value of an extra expert column (:meth:`RTCEstimator.fit` ``extra``) for documents it does not
        list; ``None`` uses the fraction of judged documents that are relevant.
    """

    alpha: float = 1.0
    beta: float = 1.0
    intercept: bool = False
    intercept_sd: float = 10.0
    features: str = "probability"
    training: str = "all"
    extra_default: float | None = None

    def __post_init__(self) -> None:
        _nonneg("aggregation.alpha", self.alpha)
        _nonneg("aggregation.beta", self.beta)
        _nonneg("aggregation.intercept_sd", self.intercept_sd, positive=True)
        _choice("aggregation.features", self.features, ("probability", "logit"))
        _choice("aggregation.training", self.training, ("all", "complete"))
        if self.extra_default is not None and not 0.0 <= self.extra_default <= 1.0:
            raise BayevalInputError(f"aggregation.extra_default: must lie in [0, 1], got {self.extra_default!r}")


@dataclass(frozen=True)
class SimilarityPrior:
    r"""Similarity regression :math:`\mathrm{logit}\,p_i=\beta_0+\sum_j\beta_j\,\mathrm{sim}(i,j)` (per topic).

    Attributes
    ----------
    penalty : float
        L2 penalty λ on the :math:`\beta_j` ≡ Normal(0, 1/√λ) prior (λ = 1 in Carterette & Allan).
    intercept_sd : float or None
        Normal(0, sd) prior on :math:`\beta_0` (default 10: nearly flat, but proper); ``None`` = flat
        (unpenalised, an improper prior with no prior draws).
    unjudged_weight : float
        Weight of each unjudged document's row, whose fractional target is
        (|R_t|+1)/(|R_t|+|N_t|+2).
    max_features : int or None
        At most this many feature documents per topic (the judged documents of the shallowest ranks
        first); ``None`` = every judged document.
    """

    penalty: float = 1.0
    intercept_sd: float | None = 10.0
    unjudged_weight: float = 1.0
    max_features: int | None = None

    def __post_init__(self) -> None:
        _nonneg("similarity.penalty", self.penalty, positive=True)
        _nonneg("similarity.unjudged_weight", self.unjudged_weight)
        if self.intercept_sd is not None:
            _nonneg("similarity.intercept_sd", self.intercept_sd, positive=True)
        if self.max_features is not None and (not isinstance(self.max_features, int) or self.max_features < 1):
            raise BayevalInputError(f"similarity.max_features: must be a positive integer, got {self.max_features!r}")


class _ModelConfig:
    """What a model configuration declares besides its fields (the module's docstring): the options its
    estimator ``accepts`` (every model an automatic assessor's ``labels``, :mod:`.assessor`), whether a sampled
    fit ``gives_draws`` of p, and whether the CLI adds the unseen relevant documents' phantoms by default
    (``unseen_by_default``, ``--unseen``). A configuration overrides only what differs from these defaults."""

    accepts: ClassVar[frozenset] = frozenset({"labels"})
    gives_draws: ClassVar[bool] = False
    unseen_by_default: ClassVar[bool] = False


@dataclass(frozen=True)
class RTCConfig(_ModelConfig):
    """The composed RTC estimator: rank coefficients → calibration → aggregation.

    Its defaults are bayeval's default RTC, the shipped ``models/rtc-default.toml`` (``load_config("rtc")``
    gives the same priors and name; a test keeps them equal): the paper's priors with per-system rank
    preferences, logit-scale calibration on complete prefixes and log-odds pooling (docs/relevance.md,
    "Why the defaults differ from the paper"). The stage priors alone (``RankPrior()``, …) default to the
    paper's settings, as ``rtc-mtc``.
    """

    rank: RankPrior = field(default_factory=lambda: RankPrior(per_system=True, unretrieved="fitted"))
    calibration: CalibrationPrior = field(
        default_factory=lambda: CalibrationPrior(smoothing_cells="judged", scale="logit", training="complete",
                                                 fixed_below=5.0))
    aggregation: AggregationPrior = field(default_factory=lambda: AggregationPrior(features="logit"))
    name: str = "rtc-default"
    description: str = ""
    kind: str = field(default="rtc", init=False)
    accepts: ClassVar[frozenset] = frozenset({"depth", "extra", "labels", "stage_methods"})
    gives_draws: ClassVar[bool] = True


@dataclass(frozen=True)
class HierarchyPrior:
    r"""Priors of the hierarchical relevance model (:mod:`bayeval.relevance.hierarchical`).

    Attributes
    ----------
    intercept_sd : float
        :math:`\beta_0\sim N(0, \mathrm{sd}^2)`.
    slope_mean, slope_sd : float
        :math:`\beta_1\sim N(\mathrm{mean}, \mathrm{sd}^2)`, the weight of the RTC log-odds.
    topic_scale, run_scale, coverage_scale : float
        Half-normal scales of the hyperparameters: the topic-effect sd τ, the run-effect sd of a fully
        covered run :math:`\sigma_0`, and its growth :math:`\sigma_1` with the uncovered share
        (:math:`\sigma_s=\sigma_0+\sigma_1 h_s`). Defaults 1, 1, 3: the coverage scale was chosen on
        Robust 2003 and synthetic data (docs/calibration.md).
    coverage_depth : int
        :math:`h_s` is the share of run s's top ``coverage_depth`` documents left unjudged, averaged over topics.
    hyper_points : int
        Hyperparameter points drawn from their Laplace posterior to integrate them out (fast path);
        1 = empirical Bayes at the mode.
    run_training : {"complete", "all"}
        Judged documents that inform run s's effect: those in s's completely judged prefix (an unbiased
        sample of its ranking), or every judged document s retrieves.
    run_effect : {"normal", "student_t"}
        Distribution of the run effect given its scale: :math:`u_s\sim N(0,\sigma_s^2)` or
        :math:`u_s\sim t_\nu(0,\sigma_s)` (heavy tails: one run far off the others is not shrunk as hard).
    run_effect_df : float
        :math:`\nu` of the Student-t run effect; > 2, so that its variance :math:`\sigma_s^2\nu/(\nu-2)`,
        which enters the marginalisation, exists. Unused with ``run_effect = "normal"``.
    offsets : {"in_sample", "transfer"}
        The RTC log-odds of the judged documents that the map to p is learned on: from the chain fitted on
        every judgment, or from the chain refitted without the judgments of each document's judged run
        (:mod:`bayeval.relevance.transfer`).
    extrapolation : {"none", "unseen_run"}
        With ``"unseen_run"`` the unjudged documents that no judged run retrieves (a judged run of a topic:
        its top ``coverage_depth`` all judged; :func:`bayeval.data.coverage.beyond_judged_runs`)
        share one more effect :math:`g\sim N(0,(\sigma_0+\sigma_1)^2)` in every draw, over all topics and
        runs: the prior of a run the judgments do not cover at all (:math:`h_s=1`), as if an unseen run had
        retrieved them (docs/notes/calibration-record.md, "Extrapolation in the open").
    """

    intercept_sd: float = 2.0
    slope_mean: float = 1.0
    slope_sd: float = 0.5
    topic_scale: float = 1.0
    run_scale: float = 1.0
    coverage_scale: float = 3.0
    coverage_depth: int = 10
    hyper_points: int = 64
    run_training: str = "complete"
    run_effect: str = "normal"
    run_effect_df: float = 4.0
    offsets: str = "in_sample"
    extrapolation: str = "none"

    def __post_init__(self) -> None:
        _choice("hierarchy.extrapolation", self.extrapolation, ("none", "unseen_run"))
        _choice("hierarchy.offsets", self.offsets, ("in_sample", "transfer"))
        _choice("hierarchy.run_training", self.run_training, ("complete", "all"))
        _choice("hierarchy.run_effect", self.run_effect, ("normal", "student_t"))
        _nonneg("hierarchy.run_effect_df", self.run_effect_df, positive=True)
        if self.run_effect_df <= 2:
            raise BayevalInputError(f"hierarchy.run_effect_df: must be > 2 (the t's variance enters the "
                                    f"marginalisation), got {self.run_effect_df!r}")
        for n in ("intercept_sd", "slope_sd", "topic_scale", "run_scale", "coverage_scale"):
            _nonneg(f"hierarchy.{n}", getattr(self, n), positive=True)
        if not isinstance(self.slope_mean, (int, float)) or isinstance(self.slope_mean, bool) \
                or not math.isfinite(self.slope_mean):
            raise BayevalInputError(f"hierarchy.slope_mean: must be a finite number, got {self.slope_mean!r}")
        for n in ("coverage_depth", "hyper_points"):
            v = getattr(self, n)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise BayevalInputError(f"hierarchy.{n}: must be a positive integer, got {v!r}")


@dataclass(frozen=True)
class HeldOutRunsPrior:
    r"""The corrections of p after the hierarchical model, on the documents no contributing run retrieves
    (:mod:`bayeval.relevance.held_out_runs`, applied in its declared ``ORDER``); the table ``[held_out_runs]`` of a
    configuration. All off by default. (Configurations written before this table existed gave these keys in
    ``[hierarchy]``; :func:`config_from_dict` still reads them there.)

    Attributes
    ----------
    calibration_map : {"none", "crossfit"}
        With ``"crossfit"`` the log-odds of the target documents pass through a map learned out of fold
        (:mod:`bayeval.relevance.crossfit`): the model refitted on the judgments of one fold of the
        contributing runs, scored on the judged documents only the other folds' runs retrieve; the map's
        uncertainty is drawn once per posterior draw of p (docs/notes/calibration-record.md, revision 4).
    crossfit_folds : int
        Folds K ≥ 2 of the contributing runs.
    crossfit_target : {"held_out", "unjudged"}
        Documents the map applies to: unjudged and retrieved by no contributing run, or every unjudged one.
    crossfit_intercept_sd, crossfit_slope_sd : float
        Priors of the map, :math:`a\sim N(0,s_a^2)`, :math:`b\sim N(1,s_b^2)` (centred on the identity).
    crossfit_level : {"learned", "kept"}
        ``"learned"``: the map's intercept as fitted out of fold; ``"kept"``: only its slope, the intercept
        set so that the target documents' mean p stays the model's, with the fitted intercept's uncertainty
        drawn as a shift (:meth:`bayeval.relevance.crossfit.OutOfFoldMap.keep_level`). The judged documents
        the map is fitted on were chosen by selection and are more often relevant than the target documents,
        so the fitted intercept does not transfer (docs/notes/calibration-record.md, revision 4).
    run_shift_sd : float
        :math:`\sigma_e` ≥ 0 of the held-out run shifts (:mod:`bayeval.relevance.run_shift`): in each posterior
        draw of p every run gets its own log-odds shift :math:`e_s\sim N(0,\sigma_e^2)` on the unjudged
        documents no contributing run retrieves, E[p] kept; 0 (default) draws none (docs/notes/calibration-record.md,
        revision 5).
    run_level_sd : float
        Scale ≥ 0 of the half-normal prior on the spread τ of the held-out run levels
        (:mod:`bayeval.relevance.run_level`): each run's level of p on the unjudged documents no contributing run
        retrieves, learned from how its judged documents compare with the model's p, shrunk across runs; E[p]
        moves; 0 (default): none (docs/notes/calibration-record.md, revision 6).
    run_level_spread : {"empirical_bayes", "fixed"}
        How the held-out run levels' spread τ is set: its empirical-Bayes mode (levels shrunk across runs;
        the default), or ``run_level_sd`` itself (each run's level from its own judged documents;
        docs/notes/calibration-record.md, revision 7).
    reuse_mean, reuse_common_sd, reuse_run_sd, reuse_run_df, reuse_slope_mean, reuse_slope_sd : float
        The reuse prior (:mod:`bayeval.relevance.reuse_prior`): in each posterior draw of p the unjudged
        documents held-out runs retrieve move in log-odds by a level shared by the held-out runs
        (N(reuse_mean, reuse_common_sd²)), each run's own level (N(0, reuse_run_sd²), or Student-t with
        ``reuse_run_df`` > 2; 0: Normal) and a rank profile (N(reuse_slope_mean, reuse_slope_sd²) per unit of log
        rank); a top-up's judged draws update them. All 0 (default): none.
    """

    calibration_map: str = "none"
    crossfit_folds: int = 2
    crossfit_target: str = "held_out"
    crossfit_intercept_sd: float = 1.0
    crossfit_slope_sd: float = 0.5
    crossfit_level: str = "learned"
    run_shift_sd: float = 0.0
    run_level_sd: float = 0.0
    run_level_spread: str = "empirical_bayes"
    reuse_mean: float = 0.0
    reuse_common_sd: float = 0.0
    reuse_run_sd: float = 0.0
    reuse_run_df: float = 0.0
    reuse_slope_mean: float = 0.0
    reuse_slope_sd: float = 0.0

    def __post_init__(self) -> None:
        for n in ("reuse_common_sd", "reuse_run_sd", "reuse_run_df", "reuse_slope_sd"):
            _nonneg(f"held_out_runs.{n}", getattr(self, n))
        if 0 < self.reuse_run_df <= 2:
            raise BayevalInputError(f"held_out_runs.reuse_run_df: must be 0 (Normal) or > 2, got {self.reuse_run_df!r}")
        for n in ("reuse_mean", "reuse_slope_mean"):
            v = getattr(self, n)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise BayevalInputError(f"held_out_runs.{n}: must be a finite number, got {v!r}")
        _nonneg("held_out_runs.run_shift_sd", self.run_shift_sd)
        _nonneg("held_out_runs.run_level_sd", self.run_level_sd)
        _choice("held_out_runs.run_level_spread", self.run_level_spread, ("empirical_bayes", "fixed"))
        _choice("held_out_runs.calibration_map", self.calibration_map, ("none", "crossfit"))
        _choice("held_out_runs.crossfit_target", self.crossfit_target, ("held_out", "unjudged"))
        _choice("held_out_runs.crossfit_level", self.crossfit_level, ("learned", "kept"))
        _nonneg("held_out_runs.crossfit_intercept_sd", self.crossfit_intercept_sd, positive=True)
        _nonneg("held_out_runs.crossfit_slope_sd", self.crossfit_slope_sd, positive=True)
        if isinstance(self.crossfit_folds, bool) or not isinstance(self.crossfit_folds, int) or self.crossfit_folds < 2:
            raise BayevalInputError(f"held_out_runs.crossfit_folds: must be an integer >= 2, "
                                    f"got {self.crossfit_folds!r}")


@dataclass(frozen=True)
class BeyondDepthPrior:
    r"""p beyond the judged depth (:mod:`bayeval.relevance.beyond_depth`; docs/depth.md): the model's error
    measured on a held-out band inside the judged depth and carried into the draws of p.

    Attributes
    ----------
    band : {"none", "half"}
        ``"half"``: refit the model on the judgments of half the judged depth and score it on the band it leaves
        out; ``"none"`` (default): no transform.
    correction : {"level", "none"}
        Move the log-odds beyond the judged depth by the band's level error (``"level"``) or not.
    growth : {"walk", "flat"}
        The offsets of the collection and of each topic: a random walk over the doubling bands beyond the
        judged depth (each doubling adds the band's error) or one offset for all bands.
    collection_floor : float
        :math:`s_0` ≥ 0, added in quadrature to the collection error the band demonstrates.
    topic_scale : float
        Half-normal scale of the prior on the topics' spread τ (empirical Bayes).
    draws : int
        Draws of p made from a fit without posterior draws (``map``).
    """

    band: str = "none"
    correction: str = "level"
    growth: str = "walk"
    collection_floor: float = 0.0
    topic_scale: float = 1.0
    draws: int = 50

    def __post_init__(self) -> None:
        _choice("beyond_depth.band", self.band, ("none", "half"))
        _choice("beyond_depth.correction", self.correction, ("level", "none"))
        _choice("beyond_depth.growth", self.growth, ("walk", "flat"))
        _nonneg("beyond_depth.collection_floor", self.collection_floor)
        _nonneg("beyond_depth.topic_scale", self.topic_scale, positive=True)
        if isinstance(self.draws, bool) or not isinstance(self.draws, int) or self.draws < 2:
            raise BayevalInputError(f"beyond_depth.draws: must be an integer >= 2, got {self.draws!r}")


@dataclass(frozen=True)
class HierarchicalConfig(_ModelConfig):
    """The hierarchical relevance model: an RTC configuration (``base``) for the features, and its priors."""

    hierarchy: HierarchyPrior = field(default_factory=HierarchyPrior)
    held_out_runs: HeldOutRunsPrior = field(default_factory=HeldOutRunsPrior)
    beyond_depth: BeyondDepthPrior = field(default_factory=BeyondDepthPrior)
    base: str = "rtc-default"
    name: str = "hierarchical"
    description: str = ""
    kind: str = field(default="hierarchical", init=False)
    accepts: ClassVar[frozenset] = frozenset({"depth", "labels", "topup"})
    gives_draws: ClassVar[bool] = True
    #: whether the CLI adds the unseen relevant documents' phantoms by default (``--unseen``): the
    #: calibration studies' choice (docs/calibration.md)
    unseen_by_default: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if not isinstance(load_config(self.base), RTCConfig):
            raise BayevalInputError(f"base: must name an RTC configuration, got {self.base!r}")


@dataclass(frozen=True)
class SimilarityConfig(_ModelConfig):
    """Similarity regression with its TF-IDF settings (scikit-learn ``TfidfVectorizer`` keywords)."""

    similarity: SimilarityPrior = field(default_factory=SimilarityPrior)
    tfidf: dict = field(default_factory=lambda: {"sublinear_tf": True, "stop_words": "english"})
    name: str = "similarity"
    description: str = ""
    kind: str = field(default="similarity", init=False)
    accepts: ClassVar[frozenset] = frozenset({"texts", "embeddings", "similarity", "matrix", "labels"})
    gives_draws: ClassVar[bool] = True


@dataclass(frozen=True)
class UniformConfig(_ModelConfig):
    """Every unjudged document relevant with probability ``p`` (MTC's 0.5)."""

    p: float = 0.5
    name: str = "uniform"
    description: str = ""
    kind: str = field(default="uniform", init=False)

    def __post_init__(self) -> None:
        if not 0.0 <= self.p <= 1.0:
            raise BayevalInputError(f"p: must lie in [0, 1], got {self.p!r}")


@dataclass(frozen=True)
class SmoothedConfig(_ModelConfig):
    """Per topic, p = (|R_t| + a) / (|R_t| + |N_t| + a + b) (plus-one smoothing by default)."""

    a: float = 1.0
    b: float = 1.0
    name: str = "smoothed"
    description: str = ""
    kind: str = field(default="smoothed", init=False)

    def __post_init__(self) -> None:
        _nonneg("a", self.a)
        _nonneg("b", self.b)


@dataclass(frozen=True)
class SparseLabelConfig(_ModelConfig):
    r"""The sparse-label model (:mod:`bayeval.relevance.sparse_labels`): p from where the judged documents fall.

    Attributes
    ----------
    relevant_mean : float
        Prior mean :math:`\mu\ge 1` of the relevant documents per topic (:math:`\bar R`).
    relevant_shape : float
        Gamma shape of :math:`\bar R-1` (larger: surer of ``relevant_mean``).
    bin_edges : tuple of int
        First rank of each rank bin (starting at 1).
    pooling : float
        Strength of the pooled share across runs in each run's Beta posterior (a run's mean positions per bin).
    combine : {"mean", "projected"}
        How a document's p combines the rates of the cells (run × rank bin) that hold it: their mean, or the
        mean projected so that every cell's mean p is its rate (:mod:`bayeval.relevance.cell_projection`).
    vote_classes : bool
        With ``"projected"``: also match the relevant count of each vote class (documents retrieved by 1,
        2–3, 4–7, … runs), estimated from the sparse labels like a cell's.
    projection_ridge : float
        Penalty :math:`\lambda` of the projection's corrections (0: exact; large: the mean).
    projection_draw_steps : int
        Chord steps that move each posterior draw's corrections from the point's towards its own projection
        (0: every draw tilted by the point's corrections).
    share_draws : {"cells", "topics"}
        Posterior draws of the cells' judged shares: each cell's Beta on its own, or jointly by one
        Bayesian-bootstrap weight per topic shared by every cell and vote class that counts its judged document.
    consensus_power : float
        :math:`\alpha\ge 0`: a topic's judged document weighs :math:`m_t^{-\alpha}` in the counts, where
        :math:`m_t` runs retrieve it (:func:`bayeval.relevance.sparse_labels.consensus_weights`); 0: off.
    """

    relevant_mean: float = 2.0
    relevant_shape: float = 0.25
    bin_edges: tuple = (1, 2, 3, 4, 6, 11, 21, 51, 101, 201, 501)
    pooling: float = 0.1
    combine: str = "mean"
    vote_classes: bool = True
    projection_ridge: float = 0.01
    projection_draw_steps: int = 3
    share_draws: str = "cells"
    consensus_power: float = 0.0
    name: str = "sparse"
    description: str = ""
    kind: str = field(default="sparse", init=False)
    gives_draws: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _nonneg("relevant_mean", self.relevant_mean)
        if self.relevant_mean < 1:
            raise BayevalInputError(f"relevant_mean: must be >= 1, got {self.relevant_mean!r}")
        _nonneg("relevant_shape", self.relevant_shape, positive=True)
        _nonneg("pooling", self.pooling)
        _choice("combine", self.combine, ("mean", "projected"))
        _choice("share_draws", self.share_draws, ("cells", "topics"))
        _nonneg("consensus_power", self.consensus_power)
        if not isinstance(self.vote_classes, bool):
            raise BayevalInputError(f"vote_classes: must be true or false, got {self.vote_classes!r}")
        _nonneg("projection_ridge", self.projection_ridge)
        if not isinstance(self.projection_draw_steps, int) or isinstance(self.projection_draw_steps, bool) \
                or self.projection_draw_steps < 0:
            raise BayevalInputError(f"projection_draw_steps: must be a non-negative integer, "
                                    f"got {self.projection_draw_steps!r}")
        edges = tuple(self.bin_edges)
        if (not edges or any(not isinstance(e, int) or isinstance(e, bool) for e in edges) or edges[0] != 1
                or any(b <= a for a, b in zip(edges[:-1], edges[1:], strict=True))):
            raise BayevalInputError(f"bin_edges: integers starting at 1 and increasing strictly, "
                                    f"got {self.bin_edges!r}")
        object.__setattr__(self, "bin_edges", edges)


_KINDS = {"rtc": (RTCConfig, {"rank": RankPrior, "calibration": CalibrationPrior, "aggregation": AggregationPrior}),
          "similarity": (SimilarityConfig, {"similarity": SimilarityPrior}),
          "hierarchical": (HierarchicalConfig, {"hierarchy": HierarchyPrior, "held_out_runs": HeldOutRunsPrior,
                                                "beyond_depth": BeyondDepthPrior}),
          "uniform": (UniformConfig, {}),
          "smoothed": (SmoothedConfig, {}),
          "sparse": (SparseLabelConfig, {})}


#: Keys that moved from one table of a kind's configuration to another: ``(kind, old table) -> (new table, its
#: class)``. Configurations written before the move still load (:func:`config_from_dict` reads the keys where they
#: stood), and so do fits recorded before it (:func:`prior_from_record`).
MOVED_KEYS = {("hierarchical", "hierarchy"): ("held_out_runs", HeldOutRunsPrior)}


def _moved_keys(doc: dict, kind: str, source: str) -> dict:
    """``doc`` with the keys of :data:`MOVED_KEYS` given in their old table moved to their new one (an error when
    a key is given in both)."""
    for (k, old), (new, cls) in MOVED_KEYS.items():
        if k != kind or not isinstance(doc.get(old), dict) or not isinstance(doc.get(new, {}), dict):
            continue
        names = {f.name for f in dataclasses.fields(cls)}
        moved = {key: v for key, v in doc[old].items() if key in names}
        both = sorted(set(moved) & set(doc.get(new, {})))
        if both:
            raise BayevalInputError(f"{source}: {both} given in both [{old}] and [{new}]; give each once, in [{new}]")
        if moved:
            doc[old] = {key: v for key, v in doc[old].items() if key not in names}
            doc[new] = {**doc.get(new, {}), **moved}
    return doc


def prior_from_record(cls: type, value: dict):
    """The prior ``cls(**value)`` of a fit file's record (:mod:`bayeval.relevance._idata`); keys that have since
    moved out of ``cls``'s table (:data:`MOVED_KEYS`) are dropped: they configure corrections applied after the
    model, which the recorded model never read."""
    if not isinstance(value, dict):
        raise TypeError(f"the {cls.__name__} record is not a table")
    moved = {f.name for (kind, old), (_, new_cls) in MOVED_KEYS.items() if _KINDS[kind][1].get(old) is cls
             for f in dataclasses.fields(new_cls)}
    return cls(**{k: v for k, v in value.items() if k not in moved})


def kinds_accepting(option: str) -> tuple[str, ...]:
    """The kinds whose configuration ``accepts`` ``option`` (for messages: "--extra: only for rtc")."""
    return tuple(k for k, (cls, _) in _KINDS.items() if option in cls.accepts)


def models_dir() -> Path:
    """Directory of the shipped configurations: ``bayeval/_models`` if installed, else the repo's ``models/``."""
    try:
        shipped = Path(str(resources.files("bayeval") / "_models"))
        if shipped.is_dir():
            return shipped
    except (ModuleNotFoundError, TypeError):  # pragma: no cover
        pass
    return Path(__file__).resolve().parents[2] / "models"


def list_configs() -> tuple[str, ...]:
    """Names of the shipped configurations (``load_config`` accepts each)."""
    d = models_dir()
    return tuple(sorted(p.stem for p in d.glob("*.toml"))) if d.is_dir() else ()


def config_from_dict(doc: dict, *, name: str = "custom", source: str = "config"):
    """Build a configuration object from a parsed TOML document (see module docstring)."""
    doc = dict(doc)
    kind = doc.pop("kind", None)
    if kind not in _KINDS:
        raise BayevalInputError(f"{source}: 'kind' must be one of {', '.join(map(repr, _KINDS))}, got {kind!r}")
    cls, sections = _KINDS[kind]
    doc = _moved_keys(doc, kind, source)
    kwargs = {"name": str(doc.pop("name", name)), "description": str(doc.pop("description", ""))}
    doc.pop("when", None)  # when to use a shipped configuration: for the listing (bayeval.relevance.catalog)
    base = doc.get("base")
    if isinstance(base, str) and base.endswith(".toml") and not Path(base).is_absolute() and source != "config":
        doc["base"] = str(Path(source).resolve().parent / base)  # a base given as a file, beside this one
    for sec, sec_cls in sections.items():
        table = doc.pop(sec, {})
        if not isinstance(table, dict):
            raise BayevalInputError(f"{source}: [{sec}] must be a table")
        known = {f.name for f in dataclasses.fields(sec_cls)}
        unknown = set(table) - known
        if unknown:
            raise BayevalInputError(f"{source}: unknown key(s) {sorted(unknown)} in [{sec}]; known: {sorted(known)}")
        kwargs[sec] = sec_cls(**table)
    if kind == "similarity" and "tfidf" in doc:
        kwargs["tfidf"] = dict(doc.pop("tfidf"))
    known = {f.name for f in dataclasses.fields(cls) if f.init}
    unknown = set(doc) - known
    if unknown:
        raise BayevalInputError(f"{source}: unknown key(s) {sorted(unknown)}; known: {sorted(known)}")
    kwargs.update(doc)
    return cls(**kwargs)


def read_toml(path: Path) -> dict:
    """The parsed TOML document of a configuration file (``FileFormatError`` naming the file when invalid)."""
    try:
        return tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise FileFormatError(str(path), None, f"invalid TOML ({exc})") from None


def load_config(name_or_path):
    """Load a model configuration by name (``"rtc-default"``) or from a TOML path.

    A bare kind (``"rtc"``, ``"similarity"``, ``"uniform"``, ``"smoothed"``) loads ``<kind>-default``
    when shipped, else the dataclass defaults; for ``"rtc"`` the two agree (``load_config("rtc")`` and
    ``RTCConfig()`` have the same priors).

    Examples
    --------
    >>> cfg = load_config("rtc-mtc")
    >>> cfg.kind, cfg.aggregation.alpha, cfg.aggregation.intercept
    ('rtc', 1.0, False)
    """
    if isinstance(name_or_path, (RTCConfig, SimilarityConfig, UniformConfig, SmoothedConfig, HierarchicalConfig,
                                 SparseLabelConfig)):
        return name_or_path
    text = str(name_or_path)
    path = Path(text)
    if not (path.suffix == ".toml" and path.is_file()):
        cand = models_dir() / f"{text}.toml"
        if cand.is_file():
            path = cand
        elif (models_dir() / f"{text}-default.toml").is_file():
            path = models_dir() / f"{text}-default.toml"
        elif text in _KINDS:
            return _KINDS[text][0](name=text)
        else:
            raise BayevalInputError(f"model: no configuration {text!r}; shipped: {', '.join(list_configs())} "
                                    "(or give a path to a .toml file)")
    doc = read_toml(path)
    try:
        return config_from_dict(doc, name=path.stem, source=str(path))
    except TypeError as exc:
        raise BayevalInputError(f"{path}: {exc}") from None


def load_config_as(config, cls: type, what: str):
    """:func:`load_config` of ``config``, which must be a ``cls`` configuration.

    Parameters
    ----------
    config : configuration object, name or path
    cls : type
        The configuration class an estimator takes (``RTCConfig``, ...).
    what : str
        The configuration in words for the error (``"an RTC"``).

    Raises
    ------
    BayevalInputError
        ``config: expected <what> configuration, got kind <kind>`` for a configuration of another kind.
    """
    cfg = load_config(config)
    if not isinstance(cfg, cls):
        raise BayevalInputError(f"config: expected {what} configuration, got kind {cfg.kind!r}")
    return cfg
