"""Fit results (posterior of a model's parameters) and relevance estimates (p for every document)."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import norm

from bayeval.data.probabilities import RelevanceProbabilities, probabilities_for
from bayeval.defaults import CLOSED_FORM_DRAWS
from bayeval.errors import BayevalInputError
from bayeval.io.probabilities import write_probabilities
from bayeval.relevance._idata import complete_idata, posterior_idata, rebuild_model

__all__ = ["FitResult", "RelevanceEstimate"]


@dataclass(frozen=True, eq=False)
class FitResult:
    """The posterior of one model's parameters, the same shape for every fit method.

    Attributes
    ----------
    model : str
        Model name.
    method : {"map", "laplace", "mcmc", "vi"}
    posterior : dict of str to ndarray
        Every parameter's draws with dims ``(chain, draw, ...)``: ``map`` gives one chain of one draw (the
        mode), ``laplace`` and ``vi`` one chain of independent draws from their approximation, ``mcmc`` the
        NUTS chains.
    spec : ParamSpec
        Names, shapes and dims of the parameters.
    mode : Mode
        The fast path's mode and negative Hessian (computed for every method: it starts the sampler).
    source : RelevanceModel or None
        The fitted model (what :attr:`idata` reads its observations, prior and record from).
    seed : int or None
        Seed of the predictive and prior draws of :attr:`idata`.
    prior_draws : int
        Number of prior (and prior predictive) draws in :attr:`idata`.
    sample_stats : dict of str to ndarray or None
        NUTS's sample statistics ``(chain, draw)`` (``mcmc`` only).
    attrs : dict
        What the method computed (``inference``), its settings and records (e.g. the log evidence).

    Notes
    -----
    Nothing here needs ArviZ: the draws are numpy arrays. :attr:`core` (the posterior and ``sample_stats`` as an
    ArviZ InferenceData) and :attr:`idata` are built on first access, so a fit that nobody inspects in ArviZ
    does not import it (docs/scale.md). :attr:`idata` holds one log-likelihood value per observed unit and
    posterior draw: ``posterior``, ``sample_stats`` (NUTS), ``log_likelihood``, ``posterior_predictive``,
    ``prior``, ``prior_predictive``, ``observed_data``, ``constant_data``; ``attrs`` name the model, the
    method, what it computes (``inference``) and record the model, so that
    ``FitResult.from_idata(az.from_netcdf(path))`` rebuilds the fit (see :mod:`bayeval.relevance._idata`).
    """

    model: str
    method: str
    posterior: Mapping
    spec: object
    mode: object
    source: object = None
    seed: int | None = None
    prior_draws: int = 500
    sample_stats: Mapping | None = None
    attrs: Mapping = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        object.__setattr__(self, "attrs", dict(self.attrs or {}))

    @functools.cached_property
    def core(self):
        """The posterior (and NUTS's ``sample_stats``) as an ArviZ InferenceData, built on first access."""
        return posterior_idata(self.posterior, self.spec, self.sample_stats, self.attrs)

    @functools.cached_property
    def idata(self):
        """The complete ArviZ InferenceData (see Notes), built on first access."""
        return complete_idata(self)

    @classmethod
    def from_idata(cls, idata) -> FitResult:
        """Rebuild a fit from its complete InferenceData (e.g. read back with ``az.from_netcdf``): the
        model from ``attrs`` and ``constant_data``, its mode by the fast path, the posterior as stored."""
        if "constant_data" not in idata.groups():
            raise BayevalInputError("idata: no constant_data group (not a complete bayeval fit)")
        attrs = dict(idata.posterior.attrs)
        model = rebuild_model(attrs, idata.constant_data)
        spec = model.param_spec
        posterior = {n: np.asarray(idata.posterior[n].values) for n in spec.names}
        stats = None
        if "sample_stats" in idata.groups():
            stats = {k: np.asarray(v.values) for k, v in idata.sample_stats.data_vars.items()}
        method = str(attrs.get("method", "map"))
        out = cls(model.name, method, posterior, spec, model.mode(), source=model, sample_stats=stats,
                  attrs=attrs)
        object.__setattr__(out, "idata", idata)  # the cached complete idata is the one given
        return out

    # draws ----------------------------------------------------------------------------------
    @property
    def n_draws(self) -> int:
        v = np.asarray(self.posterior[self.spec.names[0]])
        return int(v.shape[0] * v.shape[1])

    def draws(self, name: str) -> np.ndarray:
        """Draws of one parameter, chains stacked: shape ``(chains*draws, *shape)``."""
        if name not in self.spec.names:
            raise BayevalInputError(f"name: unknown parameter {name!r}; parameters: {', '.join(self.spec.names)}")
        v = np.asarray(self.posterior[name])
        return v.reshape((v.shape[0] * v.shape[1],) + v.shape[2:])  # explicit: a parameter may have size 0

    def flat_draws(self) -> np.ndarray:
        """All parameters as flat vectors, ``(n_draws, P)``."""
        return self.spec.flatten({n: self.draws(n) for n in self.spec.names})

    def point(self) -> dict[str, np.ndarray]:
        """Point estimate: the mode for ``map``, else the posterior mean."""
        return {n: self.draws(n).mean(axis=0) for n in self.spec.names}

    def map_estimate(self) -> dict[str, np.ndarray]:
        """The fast path's mode (the MAP), whatever the method."""
        return self.spec.unflatten(self.mode.x)

    # diagnostics ------------------------------------------------------------------------------
    def summary(self, **kwargs) -> pd.DataFrame:
        """``arviz.summary`` of the posterior, labelled by what the method computed.

        ``mcmc``: mean, sd, HDI, MCSE, ESS, r-hat. ``laplace`` and ``vi``: mean, sd and HDI of their
        independent draws (no MCSE/ESS/r-hat: those diagnose Markov chains, not an approximation).
        ``map``: the mode and the Laplace sd. The frame's ``attrs["inference"]`` says which.
        """
        if self.method == "map":
            out = pd.DataFrame({"mean": self.mode.x, "sd": self.mode.sd()}, index=pd.Index(self._labels()))
        else:
            import arviz as az
            if self.method != "mcmc":
                kwargs.setdefault("kind", "stats")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = az.summary(self.core, **kwargs)
        out.attrs["inference"] = self.attrs.get("inference", self.method)
        return out

    def _labels(self) -> list[str]:
        out = []
        for n, s, d in zip(self.spec.names, self.spec.shapes, self.spec.dims, strict=True):
            if not s:
                out.append(n)
                continue
            coords = [self.spec.coords.get(dim, range(k)) for dim, k in zip(d, s, strict=True)]
            for ix in np.ndindex(*s):
                out.append(f"{n}[{', '.join(str(coords[a][i]) for a, i in enumerate(ix))}]")
        return out

    def rhat(self) -> pd.Series:
        """Rank-normalised split r-hat of every scalar parameter (NUTS only; NaN for the other methods,
        whose draws are not Markov chains)."""
        return self._diag("r_hat")

    def ess(self) -> pd.Series:
        """Bulk effective sample size of every scalar parameter (NUTS only; NaN otherwise)."""
        return self._diag("ess_bulk")

    def _diag(self, col: str) -> pd.Series:
        if self.method != "mcmc":
            return pd.Series(np.nan, index=self._labels(), name=col)
        return self.summary(kind="diagnostics")[col]

    def divergences(self) -> int:
        """Number of divergent NUTS transitions (0 for other methods)."""
        ss = self.sample_stats
        if ss is None or "diverging" not in ss:
            return 0
        return int(np.asarray(ss["diverging"]).sum())

    def to_frame(self) -> pd.DataFrame:
        """One row per scalar parameter: ``param, mode, mean, sd, q2.5, q97.5``."""
        flat = self.flat_draws()
        return pd.DataFrame({"param": self._labels(), "mode": self.mode.x, "mean": flat.mean(axis=0),
                             "sd": flat.std(axis=0, ddof=1) if len(flat) > 1 else self.mode.sd(),
                             "q2.5": np.quantile(flat, 0.025, axis=0), "q97.5": np.quantile(flat, 0.975, axis=0)})

    def confidence_interval(self, level: float = 0.95) -> pd.DataFrame:
        """Equal-tailed posterior intervals (the Laplace interval around the mode for ``map``)."""
        if not 0.0 < level < 1.0:
            raise BayevalInputError(f"level: must lie in (0, 1), got {level!r}")
        if self.method == "map":
            z = norm.ppf(0.5 + level / 2)
            sd = self.mode.sd()
            lo, hi = self.mode.x - z * sd, self.mode.x + z * sd
        else:
            flat = self.flat_draws()
            lo = np.quantile(flat, (1 - level) / 2, axis=0)
            hi = np.quantile(flat, (1 + level) / 2, axis=0)
        return pd.DataFrame({"param": self._labels(), "lower": lo, "upper": hi})

    def __repr__(self) -> str:
        return f"FitResult(model={self.model!r}, method={self.method!r}, draws={self.n_draws}, params={self.spec.size})"


@dataclass(frozen=True, eq=False)
class RelevanceEstimate:
    """Probabilities of relevance for every document of every topic of a :class:`~bayeval.data.RankData`.

    Attributes
    ----------
    topics : tuple of str
    docnos : tuple of ndarray
        Per topic, the documents (``data[t].docnos``).
    judged : tuple of ndarray of bool
    p : tuple of ndarray
        Per topic, the point probability (posterior mean for sampled fits) of every document;
        judged documents keep the model's prediction here (use :meth:`to_probabilities`, which lists
        unjudged documents only).
    draws : tuple of ndarray or None
        Per topic, posterior draws of p, shape ``(n_draws, n_t)`` (``None`` for point estimators).
    model : str
    method : str
    fits : Mapping of str to FitResult
        The stage fits behind the estimate (empty for the baselines).
    relevant : tuple of ndarray of bool or None
        Per topic, the judgments (relevant or not; meaningful where ``judged``): what
        :meth:`judged_idata` scores the predictions of judged documents against.
    closed_form_draws : int
        How many evenly spaced posterior draws a closed-form moment method combines (:meth:`arrays_for`;
        ``dataclasses.replace`` sets another).
    held_out : HeldOutLevels or None
        The held-out runs' levels of the reuse prior and a top-up's evidence on them
        (:mod:`bayeval.relevance.reuse_prior`; ``None``: the model has none).

    The estimate is a :class:`~bayeval.data.probabilities.ProbabilityEstimate`: ``bayeval.expected``
    takes it as ``probabilities`` and asks :meth:`arrays_for` which p the moment method uses.
    """

    topics: tuple[str, ...]
    docnos: tuple
    judged: tuple
    p: tuple
    draws: tuple | None = None
    model: str = ""
    method: str = "map"
    fits: Mapping = None  # type: ignore[assignment]
    relevant: tuple | None = None
    closed_form_draws: int = CLOSED_FORM_DRAWS
    held_out: object = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "fits", dict(self.fits or {}))

    def judged_idata(self, *, seed=0):
        r"""The estimate over the judged documents as an ArviZ InferenceData, for ``az.loo``/``az.compare``.

        Groups: ``posterior`` (``p`` of every judged document, one chain of the posterior draws of p),
        ``log_likelihood`` (``relevant``: :math:`y_i\log p_i^{(k)}+(1-y_i)\log(1-p_i^{(k)})`, p clipped
        to [1e-9, 1 − 1e-9]), ``posterior_predictive`` (Bernoulli replicates), ``observed_data`` (the
        judgments) and ``constant_data`` (each document's topic); dimension ``judged_doc`` labelled
        ``topic:docno``.

        Notes
        -----
        PSIS-LOO on this log likelihood approximates leaving one judgment out of the *last* stage's
        likelihood (the aggregation of RTC, which is exactly this Bernoulli term); earlier stages that
        also saw the judgment (calibration cells, the rank prior's counts) keep it.

        References
        ----------
        A. Vehtari, A. Gelman, J. Gabry (2017). Practical Bayesian model evaluation using leave-one-out
        cross-validation and WAIC. Statistics and Computing 27, 1413–1432.
        """
        import arviz as az

        if self.relevant is None:
            raise BayevalInputError("relevant: this estimate does not carry the judgments (build it with a "
                                    "relevance model of bayeval.relevance)")
        if self.draws is None:
            raise BayevalInputError("draws: LOO needs posterior draws of p (fit with 'laplace', 'mcmc' or 'vi')")
        P = np.concatenate([d[:, j].astype(np.float64) for d, j in zip(self.draws, self.judged, strict=True)], axis=1)
        y = np.concatenate([r[j] for r, j in zip(self.relevant, self.judged, strict=True)]).astype(np.int64)
        labels = [f"{t}:{d}" for t, dn, j in zip(self.topics, self.docnos, self.judged, strict=True) for d in dn[j]]
        topic = np.concatenate([np.full(int(j.sum()), t, dtype=object) for t, j in zip(self.topics, self.judged,
                                                                                        strict=True)]).astype(str)
        Pc = np.clip(P, 1e-9, 1 - 1e-9)
        ll = np.where(y == 1, np.log(Pc), np.log1p(-Pc))
        rng = np.random.default_rng(seed)
        rep = (rng.random(P.shape) < P).astype(np.int64)
        dims = {"p": ["judged_doc"], "relevant": ["judged_doc"], "topic": ["judged_doc"]}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return az.from_dict(posterior={"p": P[None]}, log_likelihood={"relevant": ll[None]},
                                posterior_predictive={"relevant": rep[None]}, observed_data={"relevant": y},
                                constant_data={"topic": topic}, dims=dims, coords={"judged_doc": labels},
                                attrs={"model": self.model, "method": self.method})

    @property
    def has_draws(self) -> bool:
        return self.draws is not None

    def to_probabilities(self, *, include_judged: bool = False) -> RelevanceProbabilities:
        """``{topic: {docno: p}}`` for the unjudged documents (all with ``include_judged``)."""
        out = {}
        for t, d, j, p in zip(self.topics, self.docnos, self.judged, self.p, strict=True):
            keep = np.ones(len(d), bool) if include_judged else ~j
            out[t] = dict(zip(d[keep].tolist(), np.clip(p[keep], 0.0, 1.0).tolist(), strict=True))
        return RelevanceProbabilities(out)

    def arrays_for(self, method: str | None) -> list[np.ndarray]:
        """Per topic the p that the moment ``method`` uses (:func:`~bayeval.data.probabilities.probabilities_for`):
        the point p for ``None`` or without draws; all posterior draws for ``"mc"``; ``closed_form_draws``
        evenly spaced ones for a closed form."""
        return probabilities_for(method, self.p, self.draws, self.closed_form_draws)

    def arrays(self, *, draws: bool = False) -> list[np.ndarray]:
        """One array per topic aligned with ``docnos`` (what :func:`bayeval.expected.compare_systems` takes):
        the point p, or with ``draws`` the ``(n_draws, n_t)`` posterior draws."""
        if draws:
            if self.draws is None:
                raise BayevalInputError("draws: this estimate has no posterior draws (fit with a sampling method)")
            return list(self.draws)
        return list(self.p)

    def to_frame(self, *, include_judged: bool = False) -> pd.DataFrame:
        """Columns ``topic, docno, prob`` (+ ``sd`` when there are draws, ``judged`` with include_judged)."""
        parts = []
        for k, (t, d, j, p) in enumerate(zip(self.topics, self.docnos, self.judged, self.p, strict=True)):
            keep = np.ones(len(d), bool) if include_judged else ~j
            f = {"topic": t, "docno": d[keep], "prob": p[keep]}
            if self.draws is not None:
                f["sd"] = self.draws[k][:, keep].std(axis=0)
            if include_judged:
                f["judged"] = j
            parts.append(pd.DataFrame(f))
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["topic", "docno", "prob"])

    def write(self, path) -> None:
        """Write mtc-eval's ``topic Q0 docno prob`` for every unjudged document."""
        write_probabilities(self.to_probabilities(), path)

    def draws_idata(self):
        """Posterior draws of p as an ArviZ InferenceData (one variable ``p_<topic>`` per topic)."""
        import arviz as az
        if self.draws is None:
            raise BayevalInputError("draws: this estimate has no posterior draws")
        post, dims, coords = {}, {}, {}
        for t, d, dr in zip(self.topics, self.docnos, self.draws, strict=True):
            post[f"p_{t}"] = dr[None]
            dims[f"p_{t}"] = [f"doc_{t}"]
            coords[f"doc_{t}"] = list(d)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return az.from_dict(posterior=post, dims=dims, coords=coords,
                                attrs={"model": self.model, "method": self.method})

    def summary(self) -> pd.DataFrame:
        """Per topic: documents, unjudged, mean p of unjudged, expected unjudged relevant."""
        rows = []
        for t, j, p in zip(self.topics, self.judged, self.p, strict=True):
            u = p[~j]
            rows.append({"topic": t, "docs": len(j), "unjudged": int(u.size),
                         "mean_p": float(u.mean()) if u.size else np.nan, "expected_rel": float(u.sum())})
        return pd.DataFrame(rows)

    def __repr__(self) -> str:
        n = sum(int((~j).sum()) for j in self.judged)
        return (f"RelevanceEstimate(model={self.model!r}, method={self.method!r}, topics={len(self.topics)}, "
                f"unjudged={n}, draws={None if self.draws is None else self.draws[0].shape[0]})")
