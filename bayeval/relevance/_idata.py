r"""The complete ArviZ InferenceData of a fit: what a model observes, how it is stored and rebuilt.

A fitted :class:`~bayeval.relevance.results.FitResult` holds the posterior; this module adds the groups
PyMC users expect, for every fit method and every model of the generic machinery:

- ``log_likelihood``: pointwise, one value per *observed unit* and draw (``az.loo``, ``az.compare``);
- ``posterior_predictive`` and ``prior_predictive``: replicated observations (``az.plot_ppc``);
- ``prior``: draws from the model's proper prior;
- ``observed_data`` and ``constant_data``: the judgments and the model's design arrays;
- ``attrs``: model class, its configuration and fit settings, so that ``to_netcdf``/``from_netcdf``
  round-trips and :meth:`FitResult.from_idata` rebuilds the model and the fit; with them the version of
  bayeval that wrote the file (``bayeval_version``) and the model's id (``bayeval_model_id``, its class).

Rebuilding never imports or calls what a file names: the model class and the classes of its configuration
(priors) are looked up in an allow-list of bayeval's own classes (the subclasses of ``RelevanceModel`` in
bayeval, the dataclasses of :mod:`bayeval.relevance.config`). A file naming anything else (``os:system``), a
file written by another bayeval version, and a file whose record does not fit its class are refused with a
:class:`~bayeval.errors.BayevalInputError`.

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
import json
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix, issparse
from scipy.special import expit, gammaln, log_expit

from bayeval import __version__
from bayeval.errors import BayevalInputError
from bayeval.io import quoted
from bayeval.relevance import config

__all__ = ["MODEL_CLASSES", "Observed", "complete_idata", "model_record", "posterior_idata", "rebuild_model",
           "register_model"]

_RECORD = "bayeval_model"
_VERSION = "bayeval_version"
_MODEL_ID = "bayeval_model_id"


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
    model_id = f"{cls.__module__}:{cls.__qualname__}"
    record = {"class": model_id, "fields": fields}
    return {_RECORD: json.dumps(record), _VERSION: __version__, _MODEL_ID: model_id}, constant


def _jsonable(v):
    if isinstance(v, tuple | list):
        return [_jsonable(x) for x in v]
    if isinstance(v, np.generic):
        return v.item()
    return v


def _tupled(v):
    return tuple(_tupled(x) for x in v) if isinstance(v, list) else v


#: every model class of the fitting machinery (:class:`~bayeval.relevance._fitting.RelevanceModel` registers its
#: subclasses here as they are defined), by ``module:qualname``
MODEL_CLASSES: dict[str, type] = {}


def register_model(cls: type) -> None:
    """Record ``cls`` as a model class a fit file may name (when it is one of bayeval's own dataclasses)."""
    MODEL_CLASSES[f"{cls.__module__}:{cls.__qualname__}"] = cls


def _allowed() -> tuple[dict[str, type], dict[str, type]]:
    """``(models, configs)``: the classes a fit file may name, by ``module:qualname`` — bayeval's own only.

    Every model class is registered by then: this module is ``bayeval.relevance._idata``, so importing it ran
    ``bayeval/relevance/__init__.py``, which imports every model module.
    """
    models = {k: c for k, c in MODEL_CLASSES.items()
              if c.__module__.startswith("bayeval.") and dataclasses.is_dataclass(c)}
    configs = {f"{c.__module__}:{c.__qualname__}": c for c in vars(config).values()
               if isinstance(c, type) and dataclasses.is_dataclass(c) and c.__module__ == config.__name__}
    return models, configs


def _lookup(path, table: dict[str, type], what: str) -> type:
    if not isinstance(path, str) or path not in table:
        raise BayevalInputError(f"idata: the file names {what} {quoted(path)}, which is not one of bayeval's own "
                                "(refused: a fit file rebuilds only bayeval's model classes)")
    return table[path]


def rebuild_model(attrs, constant_data):
    """The model recorded by :func:`model_record` (``attrs`` and ``constant_data`` of an InferenceData).

    Raises
    ------
    BayevalInputError
        When the file is not a fit written by this version of bayeval, names a class outside the allow-list
        (module notes), or its record does not fit the class.
    """
    if _RECORD not in attrs:
        raise BayevalInputError(f"idata: attrs hold no {_RECORD!r} record (not a bayeval fit)")
    version = attrs.get(_VERSION)
    if version != __version__:
        written = "an unknown version" if version is None else f"bayeval {quoted(version, 20)}"
        raise BayevalInputError(f"idata: the fit was written by {written}, this is bayeval {__version__}; "
                                "refit the model with this version")
    try:
        record = json.loads(attrs[_RECORD])
        fields = record["fields"]
        class_path = record["class"]
        if not isinstance(fields, dict) or not all(isinstance(v, dict) for v in fields.values()):
            raise TypeError
    except (ValueError, TypeError, KeyError):
        raise BayevalInputError(f"idata: the {_RECORD!r} record is not a bayeval model record") from None
    models, configs = _allowed()
    cls = _lookup(class_path, models, "the model class")
    if attrs.get(_MODEL_ID) != class_path:
        raise BayevalInputError(f"idata: the model id {quoted(attrs.get(_MODEL_ID))} does not match the record's "
                                f"class {quoted(class_path)}")
    try:
        kwargs = _fields(fields, constant_data, configs)
        return cls(**kwargs)
    except BayevalInputError:
        raise
    except (TypeError, ValueError, KeyError, IndexError) as exc:
        raise BayevalInputError(f"idata: the record does not fit {class_path} ({quoted(str(exc))})") from None


def _fields(fields: dict, constant_data, configs: dict[str, type]) -> dict:
    """The constructor arguments recorded in ``fields`` (configuration classes from ``configs`` only)."""
    kwargs = {}
    for name, spec in fields.items():
        if "array" in spec:
            kwargs[name] = np.asarray(constant_data[spec["array"]].values)
        elif "sparse" in spec:
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
            kwargs[name] = config.prior_from_record(_lookup(spec["config"], configs, "the configuration class"),
                                                    spec["value"])
        else:
            kwargs[name] = _tupled(spec["value"])
    return kwargs


# --- the groups -------------------------------------------------------------------------------------------
def posterior_idata(arrays, spec, sample_stats, attrs):
    """The posterior ``arrays`` (named, ``(chain, draw, ...)``) and ``sample_stats`` as an ArviZ InferenceData
    with the dims and coords of ``spec`` (a fit's :attr:`~bayeval.relevance.results.FitResult.core`)."""
    import arviz as az

    dims = dict(zip(spec.names, (list(d) for d in spec.dims), strict=True))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return az.from_dict(posterior=dict(arrays), sample_stats=None if sample_stats is None else dict(sample_stats),
                            dims=dims, coords={k: list(v) for k, v in spec.coords.items()}, attrs=dict(attrs))


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
