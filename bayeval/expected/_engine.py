"""Per-topic computations shared by :func:`expected_measures` and :func:`compare_systems` (no pandas).

For a topic and a measure, the per-system quantities (numerator moments at every node, the
first-order coefficients phi, mu_R, Var R, the quadrature weights) are computed once; every pair
then costs one Fenwick-tree walk over the documents both systems retrieve.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from bayeval.errors import BayevalInputError
from bayeval.expected import _ap_kernels as apk
from bayeval.expected import _mc_kernels as mck
from bayeval.expected import _ndcg_kernels as ndk
from bayeval.expected._tilt import Tilt, tilted, topic_tilt
from bayeval.measures import Measure

__all__: list[str] = []

_SERIAL_WORK = 100_000  # pairs × nodes × list length below which the pair kernel runs without threads
_MC_CODES = {"AP": mck.AP, "P": mck.PREC, "recall": mck.RECALL, "nDCG": mck.NDCG, "R-prec": mck.RPREC}


def cut_lengths(lengths: np.ndarray, k: int | None) -> np.ndarray:
    out = lengths if k is None else np.minimum(lengths, k)
    return np.ascontiguousarray(out, dtype=np.int32)


def discounts(width: int) -> np.ndarray:
    """trec_eval's (9.x) nDCG discount by rank position: 1 / log2(r + 1)."""
    r = np.arange(1, width + 1, dtype=np.float64)
    return 1.0 / np.log2(r + 1.0)


def judged_gains(judged: np.ndarray, grades: np.ndarray) -> np.ndarray:
    """trec_eval's gain: the grade of a judged document when positive, else 0."""
    return np.where(judged & (grades > 0), grades, 0).astype(np.float64)


def _weights(spec: Measure, width: int) -> tuple[np.ndarray, np.ndarray, bool]:
    r = np.arange(1, width + 1, dtype=np.float64)
    if spec.name == "AP":
        w = 1.0 / r
        return w, w, True
    zero = np.zeros(width)
    if spec.name == "recall":
        return np.ones(width), zero, False
    if spec.name == "P":
        return np.full(width, 1.0 / spec.cutoff), zero, False
    raise AssertionError(spec)


# ---------------------------------------------------------------------------------------------
# AP, recall, P@k: S = sum_i a_ii X_i + sum_{i<j} a_ij X_i X_j, divided by R for AP and recall


@dataclass
class NumeratorState:
    """Per-system numerator moments of one topic and measure, at m nodes (m = 1: u = p)."""

    method: str
    ratio: bool
    ranked: np.ndarray
    lengths: np.ndarray
    off: np.ndarray
    quad: bool
    u: np.ndarray
    v: np.ndarray
    phi: np.ndarray
    es: np.ndarray
    vs: np.ndarray
    csr: np.ndarray
    mu_r: float
    var_r: float
    tilt: Tilt | None
    n_docs: int
    er: np.ndarray  # E_u[R] per node
    vr: np.ndarray  # Var_u[R] per node


def numerator_state(ranked: np.ndarray, lengths: np.ndarray, p: np.ndarray, spec: Measure,
                    method: str, nodes: int) -> NumeratorState:
    lengths = cut_lengths(lengths, spec.cutoff)
    width = ranked.shape[1]
    diag, off, quad = _weights(spec, width)
    ratio = spec.name in ("AP", "recall")  # denominator: the random number of relevant R
    tilt = None
    if ratio and method == "delta" and not expansion_applies(p):
        method = "exact"
    if ratio and method == "exact":
        tilt = topic_tilt(p, nodes)
        u, v = tilted(p, tilt.t)
    else:
        u = np.ascontiguousarray(p[:, None])
        v = np.ascontiguousarray((p * (1.0 - p))[:, None])
    m = u.shape[1]
    n_sys = ranked.shape[0]
    phi = np.zeros((n_sys, width, m))
    es = np.empty((n_sys, m))
    vs = np.empty((n_sys, m))
    csr = np.empty((n_sys, m))
    apk.system_moments(ranked, lengths, diag, off, quad, u, v, phi, es, vs, csr)
    return NumeratorState("linear" if not ratio else method, ratio, ranked, lengths, off, quad, u, v, phi,
                          es, vs, csr, float(p.sum()), float(np.sum(p * (1.0 - p))), tilt, len(p),
                          u.sum(axis=0), v.sum(axis=0))


def expansion_applies(p: np.ndarray) -> bool:
    r"""Whether the delta method's expansion of S/R about :math:`R=\mu_R` holds: :math:`\mathrm{Var}\,R\le\mu_R^2`.

    The expansion takes R close to its mean (coefficient of variation at most 1). It is not when no judged
    document is relevant and the unjudged ones are unlikely to be (:math:`\mu_R<1`): R is then mostly 0, the
    measure mostly 0, and :math:`\mathrm{Var}\,S/\mu_R^2` grows like :math:`1/\mu_R` (a posterior draw of p
    near 0 gave Var[ΔAP] = 139 by the delta method where the exact value is 8e-8). ``"delta"`` computes such a
    topic by exact quadrature; ``"paper"`` stays the papers' formula, which has the same flaw
    (docs/expected.md).
    """
    return float(np.sum(p * (1.0 - p))) <= float(p.sum()) ** 2


def _delta_method(mu_s, var_s, cov_sr, mu_r, var_r):
    """Second-order delta method for E and Var of S / R."""
    e = mu_s / mu_r - cov_sr / mu_r**2 + mu_s * var_r / mu_r**3
    var = var_s / mu_r**2 - 2.0 * mu_s * cov_sr / mu_r**3 + mu_s**2 * var_r / mu_r**4
    return e, var


def state_system_moments(st: NumeratorState) -> tuple[np.ndarray, np.ndarray]:
    """E and Var of the measure for every system."""
    es, vs, csr = st.es[:, 0], st.vs[:, 0], st.csr[:, 0]
    if st.method == "linear":
        return es.copy(), np.maximum(vs, 0.0)
    if st.mu_r <= 0.0:  # no document can be relevant: the measure is 0
        z = np.zeros(len(es))
        return z, z.copy()
    if st.method == "paper":
        return es / st.mu_r, vs / st.mu_r**2
    if st.method == "delta":
        e, var = _delta_method(es, vs, csr, st.mu_r, st.var_r)
        return e, np.maximum(var, 0.0)
    e = st.es @ st.tilt.w1
    return e, np.maximum(_pivot_variance(st, e[:, None], st.es, st.vs, st.csr), 0.0)


def _pivot_variance(st: NumeratorState, c, es, vs, csr) -> np.ndarray:
    """Var[S/R] by quadrature about the pivot c = E[S/R] (no E[X^2] - E[X]^2 cancellation).

    ``c`` (k, 1); ``es``, ``vs``, ``csr`` (k, m): E_u, Var_u of the numerator and Cov_u with R.
    """
    var_u = vs - 2.0 * c * csr + c * c * st.vr[None, :]
    mean_u = es - c * st.er[None, :]
    return (var_u + mean_u * mean_u) @ st.tilt.w2 + c[:, 0] ** 2 * st.tilt.p0


def state_pair_moments(st: NumeratorState, pa: np.ndarray, pb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """E and Var of (measure_a - measure_b) for every pair (pa[i], pb[i])."""
    n_pairs = len(pa)
    m = st.u.shape[1]
    cov = np.empty((n_pairs, m))
    if n_pairs:
        rank_of = apk.rank_lookup(st.ranked, st.lengths, st.n_docs)
        args = (pa, pb, st.ranked, st.lengths, rank_of, st.off, st.quad, st.v, st.phi, cov)
        if n_pairs * m * st.ranked.shape[1] < _SERIAL_WORK:
            apk.pair_covariances_serial(*args)
        else:
            apk.pair_covariances(*args, 8 * numba.get_num_threads())
    es, vs, csr = st.es, st.vs, st.csr
    if st.method == "linear":
        e = es[pa, 0] - es[pb, 0]
        var = vs[pa, 0] + vs[pb, 0] - 2.0 * cov[:, 0]
        return e, np.maximum(var, 0.0)
    if st.mu_r <= 0.0:
        z = np.zeros(n_pairs)
        return z, z.copy()
    mu_d = es[pa, 0] - es[pb, 0]
    if st.method == "paper":
        var_d = vs[pa, 0] + vs[pb, 0] - 2.0 * cov[:, 0]
        return mu_d / st.mu_r, np.maximum(var_d, 0.0) / st.mu_r**2
    if st.method == "delta":
        var_d = vs[pa, 0] + vs[pb, 0] - 2.0 * cov[:, 0]
        e, var = _delta_method(mu_d, var_d, csr[pa, 0] - csr[pb, 0], st.mu_r, st.var_r)
        return e, np.maximum(var, 0.0)
    e1 = es @ st.tilt.w1
    e = e1[pa] - e1[pb]
    # D = S_a - S_b: Var_u D = Var_u S_a + Var_u S_b - 2 Cov_u(S_a, S_b), Cov_u(D, R) = difference
    var = _pivot_variance(st, e[:, None], es[pa] - es[pb], vs[pa] + vs[pb] - 2.0 * cov, csr[pa] - csr[pb])
    return e, np.maximum(var, 0.0)


# ---------------------------------------------------------------------------------------------
# nDCG@k: exact by the Poisson-binomial dynamic program


@dataclass
class NdcgState:
    ranked: np.ndarray
    lengths: np.ndarray
    judged: np.ndarray
    gains: np.ndarray
    disc: np.ndarray
    spec_docs: np.ndarray
    spec_index: np.ndarray
    p: np.ndarray
    base: np.ndarray
    inv_idcg: np.ndarray
    idcg: np.ndarray


def ideal_dcg_table(gains: np.ndarray, judged: np.ndarray, k: int | None) -> np.ndarray:
    """IDCG(n) for n = 0..K-1 relevant unjudged documents (gain 1 each); K = k + 1, or n_unjudged + 1."""
    positive = np.sort(gains[judged & (gains > 0)])[::-1]
    n_unj = int(np.count_nonzero(~judged))
    size = (k + 1) if k is not None else (n_unj + 1)
    length = len(positive) + size - 1
    cutoff = length if k is None else min(k, length)
    disc = discounts(max(cutoff, 1))[:cutoff]
    gain_list = np.concatenate([positive, np.ones(size - 1)])[:cutoff]
    # ideal list with n ones: the judged gains (all >= 1) first, then the n ones
    csum = np.concatenate([[0.0], np.cumsum(gain_list * disc)])
    judged_part = csum[min(len(positive), cutoff)]
    ends = np.minimum(len(positive) + np.arange(size), cutoff)
    ones = np.concatenate([[0.0], np.cumsum(disc)])
    return judged_part + ones[ends] - ones[min(len(positive), cutoff)]


def ndcg_state(ranked, lengths, judged, grades, p, k: int | None) -> NdcgState:
    lengths = cut_lengths(lengths, k)
    width = ranked.shape[1]
    disc = discounts(width)
    gains = judged_gains(judged, grades)
    n = len(p)
    in_top = np.zeros(n, dtype=bool)
    for s in range(ranked.shape[0]):
        in_top[ranked[s, : lengths[s]]] = True
    special = in_top & ~judged
    spec_docs = np.flatnonzero(special).astype(np.int64)
    spec_index = np.full(n, -1, dtype=np.int64)
    spec_index[spec_docs] = np.arange(len(spec_docs))
    idcg = ideal_dcg_table(gains, judged, k)
    with np.errstate(divide="ignore"):
        inv = np.where(idcg > 0, 1.0 / idcg, 0.0)
    base = np.zeros(len(idcg))
    base[0] = 1.0
    ndk.convolve_pmf(base, np.ascontiguousarray(p[~judged & ~special]))
    return NdcgState(ranked, lengths, judged, gains, disc, spec_docs, spec_index, p, base, inv, idcg)


NDCG_WORK_LIMIT = 2e10  # document-state updates; beyond this the dynamic program would run for minutes


def _check_ndcg_work(st: NdcgState, n_targets: int, argument: str) -> None:
    work = float(n_targets) * len(st.spec_docs) * len(st.base)
    if work > NDCG_WORK_LIMIT:
        raise BayevalInputError(
            f"{argument}: exact nDCG would need {work:.1e} updates ({len(st.spec_docs)} unjudged documents in the "
            f"top lists x {len(st.base)} states x {n_targets} systems or pairs); use a cutoff (nDCG@k) or "
            "method='mc'")


def ndcg_system_moments(st: NdcgState) -> tuple[np.ndarray, np.ndarray]:
    n_sys = st.ranked.shape[0]
    _check_ndcg_work(st, n_sys, "measures")
    e1 = np.empty(n_sys)
    e2 = np.empty(n_sys)
    ndk.ndcg_systems(st.ranked, st.lengths, st.judged, st.gains, st.disc, st.spec_docs, st.spec_index, st.p,
                     st.base, st.inv_idcg, e1, e2)
    return e1, np.maximum(e2 - e1 * e1, 0.0)


def ndcg_pair_moments(st: NdcgState, pa, pb) -> tuple[np.ndarray, np.ndarray]:
    _check_ndcg_work(st, len(pa), "measure")
    e1 = np.empty(len(pa))
    e2 = np.empty(len(pa))
    if len(pa):
        ndk.ndcg_pairs(pa, pb, st.ranked, st.lengths, st.judged, st.gains, st.disc, st.spec_docs, st.spec_index,
                       st.p, st.base, st.inv_idcg, e1, e2)
    return e1, np.maximum(e2 - e1 * e1, 0.0)


# ---------------------------------------------------------------------------------------------
# one entry point per topic


def analytic_system_moments(ranked, lengths, judged, grades, p, spec: Measure, method: str, nodes: int):
    if spec.name == "nDCG":
        return ndcg_system_moments(ndcg_state(ranked, lengths, judged, grades, p, spec.cutoff))
    if spec.name == "R-prec":
        raise AssertionError("R-prec is Monte Carlo only")
    return state_system_moments(numerator_state(ranked, lengths, p, spec, method, nodes))


def analytic_pair_moments(ranked, lengths, judged, grades, p, spec: Measure, method: str, nodes: int, pa, pb):
    if spec.name == "nDCG":
        return ndcg_pair_moments(ndcg_state(ranked, lengths, judged, grades, p, spec.cutoff), pa, pb)
    return state_pair_moments(numerator_state(ranked, lengths, p, spec, method, nodes), pa, pb)


# ---------------------------------------------------------------------------------------------
# Monte Carlo


def sample_relevance(p: np.ndarray, draws: int, rng: np.random.Generator, chunk: int = 256) -> np.ndarray:
    """uint8 (draws, n): X ~ Bernoulli(p), or Bernoulli(p[d % rows]) for posterior draws p (rows, n)."""
    n = p.shape[-1]
    x = np.empty((draws, n), dtype=np.uint8)
    for start in range(0, draws, chunk):
        stop = min(draws, start + chunk)
        probs = p if p.ndim == 1 else p[np.arange(start, stop) % p.shape[0]]
        np.less(rng.random((stop - start, n)), probs, out=x[start:stop].view(bool))
    return x


def mc_measure_values(x, ranked, lengths, judged, grades, spec: Measure) -> np.ndarray:
    """(S, draws) measure values of every system on every relevance draw."""
    lengths_k = cut_lengths(lengths, spec.cutoff)
    width = ranked.shape[1]
    disc = discounts(width)
    gains = judged_gains(judged, grades)
    idcg = ideal_dcg_table(gains, judged, spec.cutoff) if spec.name == "nDCG" else np.ones(1)
    out = np.empty((ranked.shape[0], x.shape[0]))
    k = spec.cutoff if spec.cutoff is not None else 0
    mck.measure_draws(x, ranked, lengths_k, _MC_CODES[spec.name], k, judged, gains, disc, idcg, out)
    return out
