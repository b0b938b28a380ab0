r"""The complete ArviZ InferenceData of a fit: what a model observes, how it is stored and rebuilt.

A fitted :class:`~bayeval.relevance.results.FitResult` holds the posterior; this module adds the groups
PyMC users expect, for every fit method and every model of the generic machinery:

- ``log_likelihood``: pointwise, one value per *observed unit* and draw (``az.loo``, ``az.compare``);
- ``posterior_predictive`` and ``prior_predictive``: replicated observations (``az.plot_ppc``);
- ``prior``: draws from the model's proper prior;
- ``observed_data`` and ``constant_data``: the judgments and the model's design arrays;
- ``attrs``: model class, its configuration and fit settings, so that ``to_netcdf``/``from_netcdf``
  round-trips and :meth:`FitResult.from_idata` rebuilds the model and the fit.

A model describes what it observes with :class:`Observed` — judged units with a binomial-logit
likelihood :math:`k_i\sim\mathrm{Binomial}(n_i,\sigma(\eta_i))`, :math:`\eta` computed from the parameters
by ``model.linear_predictor`` — and its prior with ``model.prior_draws``. A model that defines neither
(``NotImplemented``) gets the same groups from its PyMC model (``pm.sample_prior_predictive``,
``pm.compute_log_likelihood``, ``pm.sample_posterior_predictive``); a model that observes no judgments
(``observed`` returns ``None``, e.g. the unsupervised rank coefficients) has no ``log_likelihood`` or
predictive groups. Pseudo-observations written as PyMC Potentials (smoothing pseudo-counts, the rank
preferences, fractional targets) are conditioning terms of the posterior, not observations: like
``pm.sample_prior_predictive``, the prior draws ignore them.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, gammaln, log_expit

from bayeval.errors import BayevalInputError

__all__ = ["Observed", "complete_idata", "model_record", "rebuild_model"]

_RECORD = "bayeval_model"


@dataclass(frozen=True, eq=False)
class Observed:
    r"""Observed units of a model's likelihood: :math:`k_i\sim\mathrm{Binomial}(n_i,\sigma(\eta_i))`.

    Attributes
    ----------
    name : str
        The observed variable's name (the same as in ``build_model()``), e.g. ``"relevant"``.
    dim : str
        Its dimension, e.g. ``"judged_doc"`` or ``"cell"``.
    labels : ndarray
        One label per unit (the coordinate of ``dim``).
    successes, trials : ndarray
        :math:`k_i` (judged relevant) and :math:`n_i` (judged) of each unit; a weighted row with a
        fractional target y and weight w has :math:`k=wy`, :math:`n=w`.
    """

    name: str
    dim: str
    labels: np.ndarray
    successes: np.ndarray
    trials: np.ndarray

    def __post_init__(self) -> None:
        k = np.asarray(self.successes, dtype=np.float64).reshape(-1)
        n = np.asarray(self.trials, dtype=np.float64).reshape(-1)
        if len(k) != len(n) or len(np.asarray(self.labels)) != len(k):
            raise BayevalInputError("successes, trials, labels: need one entry per observed unit")
        object.__setattr__(self, "successes", k)
        object.__setattr__(self, "trials", n)
        object.__setattr__(self, "labels", np.asarray(self.labels))

    @property
    def integer(self) -> bool:
        """Whether the counts are integers (then replicated observations can be drawn)."""
        return bool(np.all(np.mod(self.trials, 1) == 0) and np.all(np.mod(self.successes, 1) == 0))

    def log_likelihood(self, eta: np.ndarray) -> np.ndarray:
        r""":math:`\log\binom{n}{k}+k\log\sigma(\eta)+(n-k)\log\sigma(-\eta)` per unit (broadcasting over
        leading draw dimensions; the binomial coefficient through Γ for fractional counts)."""
        k, n = self.successes, self.trials
        coef = gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)
        return coef + k * log_expit(eta) + (n - k) * log_expit(-eta)

    def simulate(self, eta: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Replicated counts :math:`\\tilde k\\sim\\mathrm{Binomial}(n,\\sigma(\\eta))`."""
        return rng.binomial(self.trials.astype(np.int64), expit(eta)).astype(np.int64)


# --- model configuration in attrs / constant_data ----------------------------------------------------------
def _is_array_tuple(v) -> bool:
    return isinstance(v, tuple) and len(v) > 0 and all(isinstance(x, np.ndarray) for x in v)


def model_record(model) -> tuple[dict, dict]:
    """The model's constructor arguments: JSON-able ones as one ``attrs`` string, arrays as ``constant_data``.

    Arrays go to ``constant_data`` under the field name; a tuple of arrays (one per topic) is stored
    raveled and concatenated, with ``<field>__shapes``; a scipy sparse matrix as its coordinates
    (``<field>__row``, ``__col``, ``__data``) and shape; a configuration dataclass (the prior) is stored
    with its class path.
    """
    from scipy.sparse import issparse

    if not dataclasses.is_dataclass(model):
        raise BayevalInputError(f"model: {type(model).__name__} is not a dataclass; it cannot be recorded")
    fields, constant = {}, {}
    for f in dataclasses.fields(model):
        v = getattr(model, f.name)
        if isinstance(v, np.ndarray):
            constant[f.name] = v
            fields[f.name] = {"array": f.name}
        elif issparse(v):
            coo = v.tocoo()
            constant[f"{f.name}__row"], constant[f"{f.name}__col"] = coo.row.astype(np.int64), coo.col.astype(np.int64)
            constant[f"{f.name}__data"] = coo.data
            fields[f.name] = {"sparse": f.name, "shape": [int(x) for x in v.shape]}
        elif _is_array_tuple(v):
            constant[f.name] = np.concatenate([x.reshape(-1) for x in v])
            constant[f"{f.name}__shapes"] = np.array([list(x.shape) for x in v], dtype=np.int64)
            fields[f.name] = {"ragged": f.name}
        elif dataclasses.is_dataclass(v):
            cls = type(v)
            fields[f.name] = {"config": f"{cls.__module__}:{cls.__qualname__}", "value": dataclasses.asdict(v)}
        else:
            fields[f.name] = {"value": _jsonable(v)}
    cls = type(model)
    record = {"class": f"{cls.__module__}:{cls.__qualname__}", "fields": fields}
    return {_RECORD: json.dumps(record)}, constant


def _jsonable(v):
    if isinstance(v, tuple | list):
        return [_jsonable(x) for x in v]
    if isinstance(v, np.generic):
        return v.item()
    return v


def _tupled(v):
    return tuple(_tupled(x) for x in v) if isinstance(v, list) else v


def _import(path: str):
    module, _, name = path.partition(":")
    obj = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def rebuild_model(attrs, constant_data):
    """The model recorded by :func:`model_record` (``attrs`` and ``constant_data`` of an InferenceData)."""
    if _RECORD not in attrs:
        raise BayevalInputError(f"idata: attrs hold no {_RECORD!r} record (not a bayeval fit)")
    record = json.loads(attrs[_RECORD])
    kwargs = {}
    for name, spec in record["fields"].items():
        if "array" in spec:
            kwargs[name] = np.asarray(constant_data[spec["array"]].values)
        elif "sparse" in spec:
            from scipy.sparse import csr_matrix

            col = {k: np.asarray(constant_data[f"{spec['sparse']}__{k}"].values) for k in ("row", "col", "data")}
            kwargs[name] = csr_matrix((col["data"], (col["row"], col["col"])), shape=tuple(spec["shape"]))
        elif "ragged" in spec:
            flat = np.asarray(constant_data[spec["ragged"]].values)
            shapes = np.asarray(constant_data[f"{spec['ragged']}__shapes"].values)
            out, pos = [], 0
            for s in shapes:
                k = int(np.prod(s))
                out.append(flat[pos:pos + k].reshape(tuple(int(x) for x in s)))
                pos += k
            kwargs[name] = tuple(out)
        elif "config" in spec:
            kwargs[name] = _import(spec["config"])(**spec["value"])
        else:
            kwargs[name] = _tupled(spec["value"])
    return _import(record["class"])(**kwargs)


# --- the groups -------------------------------------------------------------------------------------------
def complete_idata(fit):
    """``fit.core`` (posterior, sample_stats) plus the groups listed in the module docstring."""
    import arviz as az

    model = fit.source
    core = fit.core
    groups = {"posterior": core.posterior}
    if "sample_stats" in core.groups():
        groups["sample_stats"] = core.sample_stats
    attrs = dict(core.attrs)
    if model is None:  # a fit without its model (built by hand): nothing more to add
        return core
    spec = fit.spec
    rng = np.random.default_rng(fit.seed)
    observed = model.observed()
    prior_arrays = model.prior_draws(fit.prior_draws, rng)
    dims = {n: list(d) for n, d in zip(spec.names, spec.dims, strict=True)}
    coords = {k: list(v) for k, v in spec.coords.items()}
    new = {}
    if observed is NotImplemented or prior_arrays is NotImplemented:
        new.update(_pymc_groups(model, core, fit.prior_draws, int(rng.integers(2**31 - 1)),
                                observed is NotImplemented, prior_arrays is NotImplemented))
    if prior_arrays is not NotImplemented and prior_arrays is not None:
        new["prior"] = {k: v[None] for k, v in prior_arrays.items()}
    if observed is not NotImplemented and observed is not None:
        o = observed
        dims[o.name] = [o.dim]
        coords[o.dim] = list(o.labels)
        post = {n: core.posterior[n].values for n in spec.names}
        eta = model.linear_predictor(post)
        new["log_likelihood"] = {o.name: o.log_likelihood(eta)}
        new["observed_data"] = {o.name: o.successes.astype(np.int64) if o.integer else o.successes}
        if o.integer:
            new["posterior_predictive"] = {o.name: o.simulate(eta, rng)}
            if prior_arrays is not NotImplemented and prior_arrays is not None:
                new["prior_predictive"] = {o.name: o.simulate(model.linear_predictor(new["prior"]), rng)}
        const_trials = {f"{o.name}_trials": o.trials}
        dims[f"{o.name}_trials"] = [o.dim]
    else:
        const_trials = {}
    if dataclasses.is_dataclass(model):
        rec_attrs, constant = model_record(model)
        attrs.update(rec_attrs)
    else:  # the fit is complete but cannot be rebuilt from its idata
        constant = {}
    constant = {**constant, **const_trials}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        extra = az.from_dict(**{k: v for k, v in new.items() if isinstance(v, dict)}, constant_data=constant,
                             dims=dims, coords=coords)
    out = az.InferenceData(attrs=attrs, **groups)
    for g in extra.groups():
        out.add_groups({g: getattr(extra, g)})
    for g, ds in new.items():
        if not isinstance(ds, dict):
            out.add_groups({g: ds})
    for g in out.groups():
        getattr(out, g).attrs.update(attrs)
    return out


def _pymc_groups(model, core, draws: int, seed: int, observed: bool, prior: bool) -> dict:
    """The groups from the model's PyMC model, for a model without the numpy hooks."""
    import pymc as pm

    out = {}
    with model.build_model(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if prior:
            try:
                pri = pm.sample_prior_predictive(draws, random_seed=seed)
            except NotImplementedError:  # a Flat (improper) prior has nothing to draw from
                pri = None
            if pri is not None:
                out["prior"] = pri.prior
                if "prior_predictive" in pri.groups():
                    out["prior_predictive"] = pri.prior_predictive
        if observed and pm.modelcontext(None).observed_RVs:
            out["log_likelihood"] = pm.compute_log_likelihood(core, extend_inferencedata=False,
                                                              progressbar=False)
            pp = pm.sample_posterior_predictive(core, random_seed=seed, extend_inferencedata=False,
                                                progressbar=False)
            out["posterior_predictive"] = pp.posterior_predictive
            if "observed_data" in pp.groups():
                out["observed_data"] = pp.observed_data
    return out
