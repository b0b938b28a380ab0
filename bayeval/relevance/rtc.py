r"""The composed RTC estimator: rank coefficients → Platt calibration → expert aggregation.

Carterette, Allan & Sitaraman (2007) §3.3:

1. ranks → probabilities, per topic: :math:`q^*_{t,r}=\sigma(\theta_{t,r})` (:class:`RankCoefficients`);
2. probabilities → calibrated probabilities, per system: :math:`q_{ij}=\sigma(A_j+B_jq^*_{ij})`
   (:class:`PlattCalibration`);
3. calibrated probabilities → document probabilities: :math:`p_i=\sigma(\sum_j\lambda_jf(q_{ij}))`
   (:class:`ExpertAggregation`), with optional extra expert columns from any source.

Each stage is fitted given the point estimate of the previous one (a modular, "cut" posterior: the
judgments inform the calibration and the aggregation, not the unsupervised rank coefficients).
Posterior draws of p combine independent draws of the three stages.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.special import expit

from bayeval.data.coverage import complete_prefix
from bayeval.data.probabilities import RelevanceProbabilities
from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError
from bayeval.io.probabilities import read_probabilities
from bayeval.relevance._fitting import FIT_METHODS
from bayeval.relevance.aggregation import ExpertAggregation, expert_features
from bayeval.relevance.calibration import PlattCalibration
from bayeval.relevance.config import RTCConfig, load_config_as
from bayeval.relevance.rank_coefficients import RankCoefficients
from bayeval.relevance.results import FitResult, RelevanceEstimate

__all__ = ["RTCEstimator", "RTCFit", "aggregation_features"]

STAGES = ("rank", "calibration", "aggregation")
_LOGIT_LO = float(np.log(1e-6 / (1 - 1e-6)))  # logit of expert_features' clipping bound


@dataclass(frozen=True, eq=False)
class _Design:
    """Per-topic arrays shared by the stages: rank position of every (doc, system)."""

    depth: int
    positions: tuple  # per topic (n_t, S) int: 0..D-1 rank position, D = unretrieved
    complete: tuple  # per topic (S,) completely judged prefix depth


def _design(data: RankData, depth: int) -> _Design:
    pos, comp = [], []
    for tr in data:
        r = np.asarray(tr.ranks, dtype=np.int64)
        p = np.where((r > 0) & (r <= depth), r - 1, depth)
        pos.append(p.astype(np.int16) if depth < 2**15 else p)  # positions ≤ depth: a quarter of the memory
        comp.append(np.minimum(complete_prefix(tr), depth))
    return _Design(depth, tuple(pos), tuple(comp))


def _calibration_input(rank_model: RankCoefficients, theta: np.ndarray, cfg) -> np.ndarray:
    """Per (topic, position): q* (``scale="probability"``) or θ (``"logit"``)."""
    if cfg.scale == "logit":
        return np.asarray(theta, dtype=np.float64)
    return rank_model.q_star(theta)


def _platt_cells(data: RankData, cfg, sys_l, x_l, nr_l, nn_l, ss_l, sx_l) -> PlattCalibration:
    """The calibration stage's cells from per-(topic, system) pieces: system, x, relevant and nonrelevant counts,
    and the smoothing cells' systems and x."""
    def cat(v, dt=float):
        return np.concatenate(v).astype(dt) if v else np.zeros(0, dt)
    return PlattCalibration(cat(sys_l, np.int64), cat(x_l), cat(nr_l), cat(nn_l), cat(ss_l, np.int64), cat(sx_l),
                            tuple(data.systems), cfg)


def _calibration_cells(data: RankData, des: _Design, q_star: np.ndarray, cfg) -> PlattCalibration:
    if cfg.training == "complete":
        return _complete_prefix_cells(data, des, q_star, cfg)
    D = des.depth
    S = len(data.systems)
    sys_l, x_l, nr_l, nn_l, ss_l, sx_l = [], [], [], [], [], []
    for t, tr in enumerate(data):
        qs = q_star[t]
        rel, jud = tr.relevant, tr.judged
        lengths = np.minimum(tr.lengths, D)
        for j in range(S):
            k = int(lengths[j])
            docs = tr.ranked[j, :k]
            xr = qs[:k]
            take = jud[docs]
            sys_l.append(np.full(int(take.sum()), j))
            x_l.append(xr[take])
            nr_l.append(rel[docs[take]].astype(float))
            nn_l.append((jud[docs[take]] & ~rel[docs[take]]).astype(float))
            # the unretrieved cell: judged docs this system does not retrieve (within depth)
            if cfg.training == "all":
                un = des.positions[t][:, j] == D
                nr, nn = float(np.count_nonzero(un & rel)), float(np.count_nonzero(un & jud & ~rel))
                if nr + nn > 0:
                    sys_l.append(np.array([j]))
                    x_l.append(np.array([qs[D]]))
                    nr_l.append(np.array([nr]))
                    nn_l.append(np.array([nn]))
            if cfg.smoothing > 0:
                if cfg.smoothing_cells == "all":
                    ss_l.append(np.full(k + 1, j))
                    sx_l.append(np.append(xr, qs[D]))
                else:
                    ss_l.append(np.full(int(take.sum()), j))
                    sx_l.append(xr[take])
    return _platt_cells(data, cfg, sys_l, x_l, nr_l, nn_l, ss_l, sx_l)


def _complete_prefix_cells(data: RankData, des: _Design, q_star: np.ndarray, cfg) -> PlattCalibration:
    """:func:`_calibration_cells` for ``training = "complete"``: per topic, the cells of every system's completely
    judged prefix at once (the same cells in the same order: system by system, rank by rank)."""
    D = des.depth
    S = len(data.systems)
    sys_l, x_l, nr_l, nn_l, ss_l, sx_l = [], [], [], [], [], []
    for t, tr in enumerate(data):
        qs = q_star[t]
        rel, jud = tr.relevant, tr.judged
        lengths = np.minimum(tr.lengths, D).astype(np.int64)
        width = min(D, tr.ranked.shape[1])
        r = np.arange(width)
        take = r[None, :] < np.minimum(np.asarray(des.complete[t], dtype=np.int64), lengths)[:, None]  # (S, width)
        js, rs = np.nonzero(take)  # row-major: system by system, rank by rank
        docs = tr.ranked[js, rs]
        sys_l.append(js)
        x_l.append(qs[rs])
        nr_l.append(rel[docs].astype(float))
        nn_l.append((jud[docs] & ~rel[docs]).astype(float))
        if cfg.smoothing > 0:
            if cfg.smoothing_cells == "all":  # ranks 0..k-1 of each system, then its unretrieved cell
                grid = np.empty((S, width + 1))
                grid[:, :width] = qs[:width]
                grid[np.arange(S), lengths] = qs[D]
                keep = np.arange(width + 1)[None, :] <= lengths[:, None]
                ss_l.append(np.nonzero(keep)[0])
                sx_l.append(grid[keep])
            else:
                ss_l.append(js)
                sx_l.append(qs[rs])
    return _platt_cells(data, cfg, sys_l, x_l, nr_l, nn_l, ss_l, sx_l)


def _agg_features(eta: np.ndarray, features: str) -> np.ndarray:
    """f(σ(η)) of calibrated log-odds η; for ``"logit"`` the clip of η itself (no expit/logit round trip)."""
    if features == "logit":
        return np.clip(eta, _LOGIT_LO, -_LOGIT_LO)
    return expert_features(expit(eta), features)


def aggregation_features(rank_model: RankCoefficients, design: _Design, config: RTCConfig, theta: np.ndarray,
                         A: np.ndarray, B: np.ndarray, extra_columns=()) -> list[np.ndarray]:
    r"""Per topic, the features :math:`f(q_{ij})` of every document for the aggregation stage.

    :math:`q_{ij}=\sigma(A_j+B_jx_{ij})` with :math:`x_{ij}` the calibration input of document i's
    position in system j's list (:math:`q^*` or θ, ``config.calibration.scale``), and f the
    ``config.aggregation.features`` transform; the extra expert columns (per topic, (n_t, k)) are
    appended through the same f. Pure: the same stage values give the same features, whether they are
    the point estimates (:meth:`RTCEstimator.fit`) or one posterior or prior draw.

    Returns
    -------
    list of ndarray
        Per topic, (n_t, S + k).
    """
    qs = _calibration_input(rank_model, theta, config.calibration)
    feat = config.aggregation.features
    out = []
    for t, pos in enumerate(design.positions):
        f = _agg_features(A[None, :] + B[None, :] * qs[t][pos], feat)
        if len(extra_columns) and extra_columns[t].shape[1]:
            f = np.hstack([f, expert_features(extra_columns[t], feat)])
        out.append(f)
    return out


def _extra_columns(data: RankData, extra, default: float) -> tuple[list[str], list[np.ndarray]]:
    """Extra expert columns: mapping name → RelevanceProbabilities (or path of an mtc-eval file)."""
    if extra is None:
        return [], [np.zeros((tr.n_docs, 0)) for tr in data]

    if not isinstance(extra, Mapping):
        extra = {f"extra{k + 1}": e for k, e in enumerate(extra)}
    names, cols = [], [[] for _ in data]
    for name, src in extra.items():
        probs = src if isinstance(src, RelevanceProbabilities) else read_probabilities(src)
        names.append(str(name))
        for t, tr in enumerate(data):
            cols[t].append(probs.lookup(tr.topic, tr.docnos, default))
    return names, [np.column_stack(c) if c else np.zeros((tr.n_docs, 0)) for c, tr in zip(cols, data, strict=True)]


@dataclass(frozen=True, eq=False)
class RTCFit:
    """The three fitted stages of :class:`RTCEstimator` on one collection.

    Attributes
    ----------
    data : RankData
    config : RTCConfig
    rank, calibration, aggregation : FitResult
    models : dict
        The three model objects (``RankCoefficients``, ``PlattCalibration``, ``ExpertAggregation``).
    features : tuple of ndarray
        Per topic, the aggregation features of every document (point estimates of the earlier stages).
    extra_names : tuple of str
    extra_columns : tuple of ndarray
    """

    data: RankData
    config: RTCConfig
    rank: FitResult
    calibration: FitResult
    aggregation: FitResult
    models: dict
    features: tuple
    extra_names: tuple = ()
    extra_columns: tuple = field(default=(), repr=False)
    method: str = "map"

    @property
    def fits(self) -> dict[str, FitResult]:
        return {"rank": self.rank, "calibration": self.calibration, "aggregation": self.aggregation}

    @property
    def has_draws(self) -> bool:
        return any(f.method != "map" for f in self.fits.values())

    @property
    def thin_calibrations(self) -> np.ndarray:
        """Per system, whether its calibration is kept at its mode in every draw of p: its completely judged
        prefix averages fewer than ``config.calibration.fixed_below`` documents per topic."""
        comp = np.asarray(self.models["design"].complete, dtype=float)  # (T, S)
        mean = comp.mean(axis=0) if comp.size else np.zeros(len(self.data.systems))
        return mean < float(self.config.calibration.fixed_below)

    def features_at(self, theta, A, B) -> list[np.ndarray]:
        """Per topic, the aggregation features at stage values θ, A, B (see :func:`aggregation_features`)."""
        return aggregation_features(self.models["rank"], self.models["design"], self.config, theta, A, B,
                                    self.extra_columns)

    def probabilities(self, *, draws: int | None = 200, seed=None) -> RelevanceEstimate:
        """p for every document, plus ``draws`` posterior draws of p when any stage was sampled.

        With draws, p is their mean (the posterior predictive probability); without (``map``, or
        ``draws`` ``None``/0) the stage modes/posterior means are plugged in.

        Each draw takes one draw of each stage (independently, at random) and recomputes the chain; the
        calibrations of systems the judgments barely cover (:attr:`thin_calibrations`) stay at their mode.
        """
        pt = self.aggregation.point()
        lam, lam0 = pt["lam"], pt.get("lam0")
        p = [ExpertAggregation.predict(f, lam, lam0) for f in self.features]
        dr = None
        if draws and self.has_draws:
            rng = np.random.default_rng(seed)
            th = self.rank.draws("theta")
            A, B = self.calibration.draws("A"), self.calibration.draws("B")
            thin = self.thin_calibrations
            if thin.any():  # what the judgments cannot inform stays at its mode (docs/calibration.md)
                cp = self.calibration.point()
                A, B = A.copy(), B.copy()
                A[:, thin], B[:, thin] = cp["A"][thin], cp["B"][thin]
            L = self.aggregation.draws("lam")
            L0 = self.aggregation.draws("lam0") if "lam0" in self.aggregation.spec.names else None
            it, ic, ia = (rng.integers(len(th), size=draws), rng.integers(len(A), size=draws),
                          rng.integers(len(L), size=draws))
            dr = [np.empty((draws, tr.n_docs), dtype=np.float32) for tr in self.data]
            fixed_feat = self.rank.method == "map" and self.calibration.method == "map"
            for k in range(draws):
                feats = self.features if fixed_feat else self.features_at(th[it[k]], A[ic[k]], B[ic[k]])
                l0 = None if L0 is None else L0[ia[k]]
                for t, f in enumerate(feats):
                    dr[t][k] = ExpertAggregation.predict(f, L[ia[k]], l0)
            dr = tuple(dr)
            p = [d.mean(axis=0, dtype=np.float64) for d in dr]  # posterior predictive mean of p
        tops = self.data
        return RelevanceEstimate(tuple(self.data.topics), tuple(tr.docnos for tr in tops),
                                 tuple(np.asarray(tr.judged) for tr in tops), tuple(p), dr,
                                 model=self.config.name, method=self.method, fits=self.fits,
                                 relevant=tuple(np.asarray(tr.relevant) for tr in tops))

    def summary(self):
        """Posterior summaries of the calibration and aggregation stages (az.summary rows)."""
        return pd.concat({"calibration": self.calibration.summary(), "aggregation": self.aggregation.summary()})


@dataclass(frozen=True, eq=False)
class RTCEstimator:
    """Rank coefficients → calibration → aggregation, from runs and judgments to p for every document.

    Parameters
    ----------
    config : RTCConfig or str
        Priors of the three stages, or the name of a shipped configuration (``"rtc-default"``,
        ``"rtc-mtc"`` the paper's / mtc-eval's settings, …; see :func:`list_configs`) or a TOML path.
    depth : int, optional
        Rank positions of the rank-coefficient model (default: the longest list in the data).

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=4, n_systems=5, n_docs=80, depth=30, judged_depth=5, seed=3)
    >>> data = RankData.build(col.runs, col.judgments, depth=30)
    >>> est = RTCEstimator("rtc-default").estimate(data)
    >>> len(est.p) == len(data), bool(all(((p >= 0) & (p <= 1)).all() for p in est.p))
    (True, True)
    """

    config: RTCConfig | str = "rtc-default"
    depth: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "config", load_config_as(self.config, RTCConfig, "an RTC"))

    def fit(self, data: RankData, method: str = "map", *, stage_methods: Mapping[str, str] | None = None,
            extra=None, draws: int = 1000, tune: int = 1000, chains: int = 4, seed=None, cores: int | None = 1,
            progressbar: bool = False, warm_start: RTCFit | None = None) -> RTCFit:
        """Fit the three stages on ``data``.

        Parameters
        ----------
        data : RankData
            Runs aligned with the (incomplete) judgments.
        method : {"map", "laplace", "mcmc", "vi"}
            Fit method of every stage, unless overridden in ``stage_methods``.
        stage_methods : mapping, optional
            Per-stage method, e.g. ``{"rank": "laplace"}`` (keys ``rank``, ``calibration``, ``aggregation``).
        extra : mapping of name → RelevanceProbabilities or path, optional
            Extra expert columns (an LLM's or crowd's label probabilities, click rates) appended to the
            aggregation; documents a source does not list get ``aggregation.extra_default``.
        draws, tune, chains, seed, cores, progressbar
            As in :meth:`RelevanceModel.fit`; ``seed`` seeds every stage (via a SeedSequence).
        warm_start : RTCFit, optional
            An earlier fit on the same runs (RTC refits while judging): the rank coefficients of topics
            whose judgment counts did not change are reused, the others start from the earlier mode.
            The result is the same fit (Newton converges to the unique mode), found faster.
        """
        if not isinstance(data, RankData):
            raise BayevalInputError(f"data: expected a RankData, got {type(data).__name__}")
        if method not in FIT_METHODS:
            raise BayevalInputError(f"method: must be one of {', '.join(map(repr, FIT_METHODS))}, got {method!r}")
        methods = dict.fromkeys(STAGES, method)
        for k, v in (stage_methods or {}).items():
            if k not in STAGES or v not in FIT_METHODS:
                raise BayevalInputError(f"stage_methods: {k!r}: {v!r} (stages {STAGES}, methods {FIT_METHODS})")
            methods[k] = v
        cfg = self.config
        ss = np.random.SeedSequence(seed) if not isinstance(seed, np.random.SeedSequence) else seed
        seeds = [np.random.default_rng(s) for s in ss.spawn(3)]
        kw = {"draws": draws, "tune": tune, "chains": chains, "cores": cores, "progressbar": progressbar}

        rank_model = RankCoefficients.from_rankdata(data, cfg.rank, depth=self.depth)
        D = rank_model.depth
        if warm_start is not None and not isinstance(warm_start, RTCFit):
            raise BayevalInputError(f"warm_start: expected an RTCFit, got {type(warm_start).__name__}")
        rank_fit = rank_model.fit(methods["rank"], seed=seeds[0],
                                  warm_start=None if warm_start is None else warm_start.models["rank"], **kw)
        q_star = _calibration_input(rank_model, rank_fit.point()["theta"], cfg.calibration)

        des = _design(data, D)
        cal_model = _calibration_cells(data, des, q_star, cfg.calibration)
        cal_fit = cal_model.fit(methods["calibration"], seed=seeds[1], **kw)
        cp = cal_fit.point()
        A, B = cp["A"], cp["B"]

        agg_cfg = cfg.aggregation
        judged_all = np.concatenate([tr.judged for tr in data]) if len(data) else np.zeros(0, bool)
        rel_all = np.concatenate([tr.relevant for tr in data]) if len(data) else np.zeros(0, bool)
        base = float(rel_all.sum() / max(judged_all.sum(), 1))
        extra_default = base if agg_cfg.extra_default is None else agg_cfg.extra_default
        extra_names, extra_cols = _extra_columns(data, extra, extra_default)

        feats = aggregation_features(rank_model, des, cfg, rank_fit.point()["theta"], A, B, extra_cols)
        rows_X, rows_y, rows_g = [], [], []
        # per topic, the features of a document no system ranks: most rows equal it in most columns
        qs_un = _calibration_input(rank_model, rank_fit.point()["theta"], cfg.calibration)[:, D]
        base = _agg_features(A[None, :] + B[None, :] * qs_un[:, None], agg_cfg.features)
        if extra_names:
            base = np.hstack([base, np.full((len(data), len(extra_names)),
                                            expert_features(np.array(extra_default), agg_cfg.features))])
        for t, tr in enumerate(data):
            keep = tr.judged.copy()
            if agg_cfg.training == "complete":
                inside = des.positions[t] < des.complete[t][None, :]
                keep &= inside.any(axis=1)
            rows_X.append(feats[t][keep])
            rows_y.append(tr.relevant[keep].astype(float))
            rows_g.append(np.full(int(keep.sum()), t))
        X = np.vstack(rows_X) if rows_X else np.zeros((0, len(data.systems) + len(extra_names)))
        y = np.concatenate(rows_y) if rows_y else np.zeros(0)
        g = np.concatenate(rows_g) if rows_g else np.zeros(0, np.int64)
        agg_model = ExpertAggregation(X, y, tuple(data.systems) + tuple(extra_names), prior=agg_cfg,
                                      row_groups=g if len(data) else None, group_baseline=base if len(data) else None)
        agg_fit = agg_model.fit(methods["aggregation"], seed=seeds[2], **kw)
        models = {"rank": rank_model, "calibration": cal_model, "aggregation": agg_model, "design": des}
        label = method if len(set(methods.values())) == 1 else "+".join(methods[s] for s in STAGES)
        return RTCFit(data, cfg, rank_fit, cal_fit, agg_fit, models, tuple(feats), tuple(extra_names),
                      tuple(extra_cols), label)

    def estimate(self, data: RankData, method: str = "map", *, p_draws: int | None = 200, seed=None,
                 **fit_kwargs) -> RelevanceEstimate:
        """``fit(data, method, ...).probabilities(draws=p_draws)``."""
        return self.fit(data, method, seed=seed, **fit_kwargs).probabilities(draws=p_draws, seed=seed)
