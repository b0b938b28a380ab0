"""One fitting machinery for every relevance model: the fast-path mode, Laplace, NUTS and ADVI.

A model supplies a :class:`ParamSpec` (names, shapes, dims), ``mode()`` (the fast path: the mode of its
log posterior with the negative Hessian in diagonal blocks, computed by Newton/IRLS in numpy) and
``build_model()`` (the *same* log posterior as a PyMC model, whose free variables carry the parameter
names). :func:`fit_model` turns either into an :class:`~bayeval.relevance.results.FitResult` whose
``posterior`` has the same variables, dims and coords whatever the method (numpy arrays; the ArviZ
InferenceData is built only when asked for, :attr:`~bayeval.relevance.results.FitResult.idata`).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import warnings
from dataclasses import dataclass, field

import numpy as np

from bayeval.defaults import CHAINS, POSTERIOR_DRAWS, TUNE
from bayeval.errors import BayevalInputError
from bayeval.methods import FIT_METHODS, NUTS_SAMPLERS
from bayeval.relevance._bordered import BorderedDiagonal
from bayeval.relevance._idata import register_model
from bayeval.relevance.results import FitResult

try:  # threadpoolctl comes with scikit-learn; without it BLAS keeps its threads
    from threadpoolctl import ThreadpoolController
except ImportError:  # pragma: no cover
    ThreadpoolController = None

__all__ = ["FIT_METHODS", "NUTS_SAMPLERS", "Mode", "ParamSpec", "fit_model"]

# NUTS_SAMPLERS (bayeval.methods): nutpie is Rust NUTS on the model compiled with numba, which PyMC runs
# through ``pm.sample(nuts_sampler="nutpie")``; docs/benchmarks.md compares them on the hierarchical model.
#: nutpie's names of the sample statistics kept in ``idata.sample_stats`` (PyMC's names)
_NUTPIE_STATS = {"diverging": "diverging", "depth": "tree_depth", "logp": "lp", "step_size": "step_size",
                 "energy": "energy", "mean_tree_accept": "acceptance_rate", "n_steps": "n_steps"}


#: What each method computes, in ``idata.attrs["inference"]``.
INFERENCE = {"map": "posterior mode (fast path, Newton/IRLS); one draw, no posterior spread",
             "laplace": "Laplace approximation: independent draws from N(mode, (-H)^-1); one chain",
             "mcmc": "NUTS (PyMC's sampler, or nutpie: attrs['nuts_sampler'])",
             "vi": "mean-field ADVI (PyMC): independent draws from the fitted approximation; one chain"}


@dataclass(frozen=True)
class ParamSpec:
    """Named parameter arrays laid out, in order, in one flat vector (C order)."""

    names: tuple[str, ...]
    shapes: tuple[tuple[int, ...], ...]
    dims: tuple[tuple[str, ...], ...]
    coords: dict = field(default_factory=dict)

    @property
    def size(self) -> int:
        return int(sum(int(np.prod(s)) for s in self.shapes))

    def unflatten(self, flat: np.ndarray) -> dict[str, np.ndarray]:
        flat = np.asarray(flat)
        lead = flat.shape[:-1]
        out, pos = {}, 0
        for n, s in zip(self.names, self.shapes, strict=True):
            k = int(np.prod(s))
            out[n] = flat[..., pos:pos + k].reshape(lead + s)
            pos += k
        return out

    def flatten(self, values: dict) -> np.ndarray:
        parts = []
        lead = None
        for n, s in zip(self.names, self.shapes, strict=True):
            v = np.asarray(values[n], dtype=np.float64)
            lead = v.shape[:v.ndim - len(s)] if lead is None else lead
            parts.append(v.reshape(lead + (-1,)))
        return np.concatenate(parts, axis=-1)


@dataclass(frozen=True)
class Mode:
    """Fast-path mode: flat ``x``, negative Hessian as blocks ``(index, matrix)``, log posterior value.

    A block's matrix is dense, or a :class:`~bayeval.relevance._bordered.BorderedDiagonal` (the hierarchical
    model's: diagonal in its topic effects), whose covariance is never formed in full by :meth:`sd` or the draws.
    """

    x: np.ndarray
    blocks: tuple
    logpost: float
    n_iter: int
    converged: bool

    def covariance_blocks(self):
        """Per block the covariance (−H)⁻¹ (the pseudo-inverse where the data leave a direction unidentified),
        dense: for small blocks."""
        for idx, H in self.blocks:
            if isinstance(H, BorderedDiagonal):
                yield idx, H.factor().dense_inverse()
                continue
            M = _psd_inverse_root(H)
            yield idx, M @ M.T

    def sd(self) -> np.ndarray:
        out = np.empty_like(self.x)
        for idx, H in self.blocks:
            if isinstance(H, BorderedDiagonal):
                out[idx] = np.sqrt(np.clip(H.factor().inverse_diag(), 0, None))
                continue
            M = _psd_inverse_root(H)
            out[idx] = np.sqrt(np.clip(np.diag(M @ M.T), 0, None))
        return out


def _check(method, draws, chains, nuts_sampler="pymc"):
    if method not in FIT_METHODS:
        raise BayevalInputError(f"method: must be one of {', '.join(map(repr, FIT_METHODS))}, got {method!r}")
    if nuts_sampler not in NUTS_SAMPLERS:
        raise BayevalInputError(f"nuts_sampler: must be one of {', '.join(map(repr, NUTS_SAMPLERS))}, "
                                f"got {nuts_sampler!r}")
    if method == "mcmc" and nuts_sampler == "nutpie":
        if importlib.util.find_spec("nutpie") is None:
            raise BayevalInputError("nuts_sampler: 'nutpie' needs the nutpie package (pip install 'bayeval[nutpie]')")
    for name, v in (("draws", draws), ("chains", chains)):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 1:
            raise BayevalInputError(f"{name}: must be a positive integer, got {v!r}")


@functools.cache
def _blas_controller():
    """threadpoolctl's view of the loaded BLAS libraries (finding them reads /proc: do it once)."""
    return None if ThreadpoolController is None else ThreadpoolController()


def _single_thread_blas():
    """Small dense solves run faster on one BLAS thread (and do not fight other processes)."""
    controller = _blas_controller()
    if controller is None:  # pragma: no cover
        return contextlib.nullcontext()
    return controller.limit(limits=1, user_api="blas")


def _psd_inverse_root(H: np.ndarray) -> np.ndarray:
    """M with M Mᵀ = H⁻¹ (H positive definite), or = H⁺ where H is singular: draws then move only along
    the directions the data identify (e.g. a calibration whose cells share one x)."""
    try:
        L = np.linalg.cholesky(H)  # H = L Lᵀ, so H⁻¹ = L⁻ᵀ L⁻¹
        return np.linalg.inv(L).T
    except np.linalg.LinAlgError:
        lam, U = np.linalg.eigh(H)
        keep = lam > 1e-10 * max(float(lam.max(initial=0.0)), 1e-300)
        return U[:, keep] / np.sqrt(lam[keep])


#: a bordered negative Hessian larger than this is drawn from through its Schur complement; up to it, through the
#: dense factor as every other block, so that small models keep their seeded draws (the same random stream)
DENSE_DRAWS_UP_TO = 500


def gaussian_draws(mean: np.ndarray, H, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` draws (size, P) from N(mean, H⁻¹) (H⁺ where H is singular): the one Laplace draw. A bordered H
    (:class:`~bayeval.relevance._bordered.BorderedDiagonal`) of more than :data:`DENSE_DRAWS_UP_TO` coordinates
    is drawn from through its Schur complement (the same distribution, another random stream, no P × P array)."""
    if isinstance(H, BorderedDiagonal):
        if H.size > DENSE_DRAWS_UP_TO:
            return H.factor().draws(mean, size, rng)
        H = np.asarray(H)
    M = _psd_inverse_root(H)
    return mean[None, :] + rng.standard_normal((size, M.shape[1])) @ M.T


def laplace_draws(mode: Mode, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` draws (size, P) from N(mode.x, (−H)⁻¹), block by block (:func:`gaussian_draws`)."""
    out = np.repeat(mode.x[None, :], size, axis=0)
    for idx, H in mode.blocks:
        out[:, idx] = gaussian_draws(mode.x[idx], H, size, rng)
    return out


def _posterior_arrays(pm_idata, spec: ParamSpec) -> dict:
    post = pm_idata.posterior
    return {n: np.asarray(post[n].values, dtype=np.float64) for n in spec.names}


def fit_model(model, method: str = "map", *, draws: int = POSTERIOR_DRAWS, tune: int = TUNE, chains: int = CHAINS,
              seed=None, cores: int | None = 1, target_accept: float = 0.9, vi_iterations: int = 20_000,
              progressbar: bool = False, mode: Mode | None = None, warm_start=None, nuts_sampler: str = "pymc"):
    """Fit ``model`` with ``method``; see :meth:`RelevanceModel.fit`."""
    _check(method, draws, chains, nuts_sampler)
    spec: ParamSpec = model.param_spec
    if mode is None:
        with _single_thread_blas():
            mode = model.mode() if warm_start is None else model.mode(warm_start=warm_start)
    if not mode.converged:
        warnings.warn(f"{model.name}: Newton did not converge in {mode.n_iter} iterations", RuntimeWarning,
                      stacklevel=3)
    sample_stats = None
    rng = np.random.default_rng(seed)
    attrs = {"model": model.name, "method": method, "inference": INFERENCE[method], "newton_iterations": mode.n_iter,
             "newton_converged": int(mode.converged)}
    if method == "map":
        arrays = spec.unflatten(mode.x[None, None, :])
    elif method == "laplace":
        flat = laplace_draws(mode, chains * draws, rng)[None]
        arrays = spec.unflatten(flat)
    else:
        import pymc as pm

        pm_model = model.build_model()
        start = model._initial_values(spec.unflatten(mode.x))
        seed_int = int(rng.integers(2**31 - 1))
        with pm_model, warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            if method == "mcmc":
                common = dict(draws=draws, tune=tune, chains=chains, random_seed=seed_int, target_accept=target_accept,
                              progressbar=progressbar, compute_convergence_checks=False)
                if nuts_sampler == "pymc":
                    pm_idata = pm.sample(cores=cores, initvals=start, init="adapt_diag", **common)
                    names = {k: k for k in ("diverging", "tree_depth", "lp", "step_size", "energy",
                                            "acceptance_rate", "n_steps")}
                else:  # nutpie: its own start (jittered around the model's initial point) and tuning; threads
                    pm_idata = pm.sample(nuts_sampler=nuts_sampler, nuts_sampler_kwargs={"cores": cores or 1},
                                         **common)
                    names = _NUTPIE_STATS
                sample_stats = {ours: np.asarray(pm_idata.sample_stats[k].values)
                                for k, ours in names.items() if k in pm_idata.sample_stats}
                attrs.update(tune=tune, target_accept=target_accept, nuts_sampler=nuts_sampler)
            else:
                approx = pm.fit(n=vi_iterations, method="advi", random_seed=seed_int, progressbar=progressbar,
                                start=start)
                pm_idata = approx.sample(chains * draws, random_seed=seed_int)
                attrs.update(vi_iterations=vi_iterations, vi_final_loss=float(np.asarray(approx.hist)[-1]))
        arrays = _posterior_arrays(pm_idata, spec)
        if method == "vi":
            arrays = {k: v.reshape((1, chains * draws) + v.shape[2:]) for k, v in arrays.items()}
    aux_seed = int(rng.integers(2**31 - 1))  # predictive and prior draws of the complete idata
    return FitResult(model.name, method, arrays, spec, mode, source=model, seed=aux_seed, sample_stats=sample_stats,
                     attrs=attrs)


class RelevanceModel:
    """Mixin: ``fit(method=...)`` and ``log_posterior`` for a model with ``param_spec``, ``mode`` and
    ``build_model``."""

    name = "model"

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        register_model(cls)  # a fit file may name it (bayeval.relevance._idata)

    def fit(self, method: str = "map", *, draws: int = POSTERIOR_DRAWS, tune: int = TUNE, chains: int = CHAINS,
            seed=None, cores: int | None = 1, target_accept: float = 0.9, vi_iterations: int = 20_000,
            progressbar: bool = False, warm_start=None, nuts_sampler: str = "pymc"):
        """Fit the model; every method returns a :class:`~bayeval.relevance.results.FitResult` whose
        ``idata.posterior`` has the same variables, dims and coords.

        Parameters
        ----------
        method : {"map", "laplace", "mcmc", "vi"}
            ``"map"``: the fast path — Newton/IRLS on the model's log posterior in numpy (no PyMC);
            one chain of one draw. ``"laplace"``: ``chains × draws`` independent draws from the Gaussian
            at that mode with covariance the inverse negative Hessian, stored as one chain. ``"mcmc"``:
            NUTS on :meth:`build_model` started at the mode (``chains`` chains). ``"vi"``: mean-field ADVI
            on :meth:`build_model`, ``chains × draws`` draws stored as one chain.
        draws, tune, chains : int
            Draws per chain (and NUTS tuning steps); for Laplace and ADVI ``chains × draws`` draws in all.
        seed : int, SeedSequence or None
            Seed of every random choice (Laplace draws, the sampler's seed).
        cores : int or None
            Processes (PyMC) or threads (nutpie) for NUTS chains (1 = sequential).
        target_accept : float
            NUTS target acceptance.
        vi_iterations : int
            ADVI optimisation steps.
        progressbar : bool
            Show PyMC's progress bar.
        warm_start : model of the same kind, optional
            An earlier fitted model whose solution the fast path may reuse or start from (models that
            support it: :class:`~bayeval.relevance.RankCoefficients`); the mode is the same, found faster.
        nuts_sampler : {"pymc", "nutpie"}
            The NUTS implementation of ``"mcmc"`` (:data:`NUTS_SAMPLERS`); ``"nutpie"`` needs the optional
            dependency ``bayeval[nutpie]``, compiles the model with numba (about 20 s) and starts from its
            own jittered point rather than the mode.
        """
        return fit_model(self, method, draws=draws, tune=tune, chains=chains, seed=seed, cores=cores,
                         target_accept=target_accept, vi_iterations=vi_iterations, progressbar=progressbar,
                         warm_start=warm_start, nuts_sampler=nuts_sampler)

    def find_map(self) -> dict[str, np.ndarray]:
        """The fast-path MAP as named arrays (no PyMC)."""
        return self.param_spec.unflatten(self.mode().x)

    # hooks of the complete InferenceData (bayeval.relevance._idata) -------------------------------------
    def _initial_values(self, point: dict) -> dict:
        """NUTS/ADVI start values of ``build_model()``'s free variables from the mode's named arrays."""
        return dict(point)

    def observed(self):
        """The observed units (:class:`~bayeval.relevance._idata.Observed`), ``None`` when the model
        observes no judgments, or ``NotImplemented``: take them from ``build_model()``."""
        return NotImplemented

    def linear_predictor(self, params: dict) -> np.ndarray:
        """η of every observed unit from named parameter arrays with leading draw dims: ``(..., n)``."""
        raise NotImplementedError

    def prior_draws(self, size: int, rng: np.random.Generator):
        """``size`` draws from the prior, named arrays ``(size, *shape)``; ``None`` when a prior is improper
        (flat), ``NotImplemented``: draw them with ``pm.sample_prior_predictive``."""
        return NotImplemented
