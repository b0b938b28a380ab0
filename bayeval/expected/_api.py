"""Public functions: expected measures, pairwise differences, and the one-ranking AP moments."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np

from bayeval.data.rankdata import RankData
from bayeval.defaults import DEFAULT_MOMENT_METHOD, DEFAULT_P, MC_DRAWS, SEED
from bayeval.errors import BayevalInputError
from bayeval.expected import _engine as eng
from bayeval.expected import _mc_kernels as mck
from bayeval.expected._measure_spec import EXPECTED
from bayeval.expected._probabilities import resolve
from bayeval.expected._results import ExpectedEvaluation, PairwiseComparison, p_less_normal
from bayeval.measures import Measure
from bayeval.methods import MOMENT_METHODS
from bayeval.progress import track

__all__ = ["ap_moments", "compare_systems", "delta_ap_moments", "expected_measures"]

_MAX_NODES = 2048


# ---------------------------------------------------------------------------------------------
# argument checks (every error names the argument)


def _check_method(method) -> _MomentMethod:
    if method not in MOMENT_METHODS:
        raise BayevalInputError(f"method: must be one of {', '.join(map(repr, MOMENT_METHODS))}, got {method!r}")
    return _METHODS[method]


def _check_nodes(nodes) -> int:
    if not isinstance(nodes, (int, np.integer)) or isinstance(nodes, bool) or not 1 <= nodes <= _MAX_NODES:
        raise BayevalInputError(f"nodes: must be an integer in [1, {_MAX_NODES}], got {nodes!r}")
    return int(nodes)


def _check_draws(draws, posterior_rows: int | None) -> int:
    if draws is None:
        return posterior_rows if posterior_rows is not None else MC_DRAWS
    if not isinstance(draws, (int, np.integer)) or isinstance(draws, bool) or draws < 2:
        raise BayevalInputError(f"draws: must be an integer >= 2, got {draws!r}")
    return int(draws)


def _rng(seed) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    try:
        return np.random.default_rng(seed)
    except (TypeError, ValueError):
        raise BayevalInputError(f"seed: expected an int, SeedSequence, Generator or None, got {seed!r}") from None


def _check_data(data) -> RankData:
    if not isinstance(data, RankData):
        raise BayevalInputError(f"data: expected a RankData (RankData.build(runs, qrels)), got {type(data).__name__}")
    return data


def _check_spec(spec: Measure, method: _MomentMethod, argument: str) -> None:
    if spec.name == "R-prec" and method.closed_form:
        raise BayevalInputError(
            f"{argument}: R-prec has no closed form here (its cutoff is the random R); use method='mc'")


def _topic_arrays(tr):
    """Writable, contiguous copies (one numba specialisation for every caller)."""
    return (np.array(tr.ranked, dtype=np.int32), np.array(tr.lengths, dtype=np.int32),
            np.array(tr.judged, dtype=bool), np.array(tr.grades, dtype=np.int64))


def _show(progress, big: bool):
    """``progress``: True/False forces; None shows a bar on a terminal for long work only."""
    if progress is None:
        return None if big else False
    return bool(progress)


def _over_draws(moments, p: np.ndarray):
    r"""Analytic moments of one topic under posterior draws of p, by the law of total variance.

    ``moments(q)`` gives (E, Var) given one vector q of probabilities. For ``p`` of shape (n,) it is
    called once; for posterior draws, shape (D, n), once per draw d, and

    .. math:: E = \frac1D\sum_d E_d,\qquad
              \mathrm{Var} = \underbrace{\frac1D\sum_d \mathrm{Var}_d}_{\text{within}}
              + \frac1D\sum_d (E_d - E)^2 .

    Returns ``(E, Var, within, E_d)``; ``E_d`` has shape (D, ...) (None for a single p): the callers
    sum it over topics per draw (:func:`_mean_over_topics`).
    """
    if p.ndim == 1:
        e, v = moments(p)
        return e, v, v, None
    e_d, v_d = zip(*(moments(np.ascontiguousarray(row)) for row in p), strict=True)
    e_d, v_d = np.asarray(e_d), np.asarray(v_d)
    within = v_d.mean(axis=0)
    return e_d.mean(axis=0), within + e_d.var(axis=0), within, e_d


def _mean_over_topics(expected: np.ndarray, within: np.ndarray, per_draw_sum: np.ndarray | None):
    r"""E and Var of the mean over topics (last axis of ``expected`` and ``within``).

    Topics are independent given p: :math:`\mathrm{Var}_d[\bar X] = \frac1{T^2}\sum_t\mathrm{Var}_d[X_t]`.
    With posterior draws the same draw d holds in every topic, so the variance over draws is taken of the
    mean over topics (``per_draw_sum``: :math:`\sum_t E_d[X_t]`, draws on the last axis), not summed per topic:
    :math:`\mathrm{Var}[\bar X] = \frac1{T^2}\sum_t \frac1D\sum_d\mathrm{Var}_d[X_t]
    + \mathrm{var}_d\big(\frac1T\sum_t E_d[X_t]\big)`.
    """
    n_top = expected.shape[-1]
    if not n_top:
        return np.zeros(expected.shape[:-1]), np.zeros(expected.shape[:-1])
    mean_v = within.sum(axis=-1) / n_top**2
    if per_draw_sum is not None:
        mean_v = mean_v + (per_draw_sum / n_top).var(axis=-1)
    return expected.mean(axis=-1), mean_v


def _resolve_pairs(data: RankData, pairs) -> tuple[np.ndarray, np.ndarray]:
    n_sys = len(data.systems)
    if pairs is None:
        a, b = np.triu_indices(n_sys, k=1)
        return a.astype(np.int64), b.astype(np.int64)
    idx_a, idx_b = [], []
    try:
        items = list(pairs)
    except TypeError:
        raise BayevalInputError("pairs: expected a sequence of (run_a, run_b)") from None
    for item in items:
        if isinstance(item, (str, bytes)) or not isinstance(item, (Sequence, np.ndarray)) or len(item) != 2:
            raise BayevalInputError(f"pairs: each pair must be (run_a, run_b), got {item!r}")
        out = []
        for x in item:
            if isinstance(x, str):
                try:
                    out.append(data.system_index(x))
                except KeyError:
                    raise BayevalInputError(f"pairs: unknown system {x!r}") from None
            elif isinstance(x, (int, np.integer)) and not isinstance(x, bool) and 0 <= x < n_sys:
                out.append(int(x))
            else:
                raise BayevalInputError(f"pairs: {x!r} is neither a system name nor an index < {n_sys}")
        idx_a.append(out[0])
        idx_b.append(out[1])
    return np.array(idx_a, dtype=np.int64), np.array(idx_b, dtype=np.int64)


# ---------------------------------------------------------------------------------------------
# the moment methods, registered once: the public functions dispatch through _METHODS


def _analytic_measures(data, probs, specs, bar, *, rows, n_draws, seed, nodes, method):
    """Closed form per topic and system, over posterior rows by the law of total variance."""
    shape = (len(specs), len(data.systems), len(data))
    expected, variance, within = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    per_draw_sum = np.zeros((*shape[:2], rows)) if rows is not None else None
    for t in bar:
        ranked, lengths, judged, grades = _topic_arrays(data[t])
        for i, spec in enumerate(specs):
            e, v, w, e_d = _over_draws(partial(eng.analytic_system_moments, ranked, lengths, judged, grades,
                                               spec=spec, method=method, nodes=nodes), probs[t])
            expected[i, :, t], variance[i, :, t], within[i, :, t] = e, v, w
            if e_d is not None:
                per_draw_sum[i] += e_d.T
    return (expected, variance, *_mean_over_topics(expected, within, per_draw_sum))


def _mc_measures(data, probs, specs, bar, *, rows, n_draws, seed, nodes):
    """Monte Carlo: the measures of ``n_draws`` sampled relevance vectors, the same draws in every topic."""
    shape = (len(specs), len(data.systems), len(data))
    expected, variance = np.zeros(shape), np.zeros(shape)
    rng = _rng(seed)
    per_draw_mean = np.zeros((*shape[:2], n_draws))
    for t in bar:
        ranked, lengths, judged, grades = _topic_arrays(data[t])
        x = eng.sample_relevance(probs[t], n_draws, rng)
        for i, spec in enumerate(specs):
            vals = eng.mc_measure_values(x, ranked, lengths, judged, grades, spec)
            expected[i, :, t] = vals.mean(axis=1)
            variance[i, :, t] = vals.var(axis=1, ddof=1)
            per_draw_mean[i] += vals
    per_draw_mean /= len(data)
    return expected, variance, per_draw_mean.mean(axis=2), per_draw_mean.var(axis=2, ddof=1)


def _analytic_pairs(data, probs, spec, pa, pb, bar, *, rows, n_draws, seed, nodes, method):
    """Closed form per pair and topic; P(Δ < 0) from the normal approximation."""
    shape = (len(pa), len(data))
    e, v, within = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    per_draw_sum = np.zeros((len(pa), rows)) if rows is not None else None
    for t in bar:
        ranked, lengths, judged, grades = _topic_arrays(data[t])
        e[:, t], v[:, t], within[:, t], e_d = _over_draws(partial(
            eng.analytic_pair_moments, ranked, lengths, judged, grades, spec=spec, method=method, nodes=nodes,
            pa=pa, pb=pb), probs[t])
        if e_d is not None:
            per_draw_sum += e_d.T
    map_e, map_v = _mean_over_topics(e, within, per_draw_sum)
    return e, v, p_less_normal(e, v), map_e, map_v, p_less_normal(map_e, map_v)


def _mc_pairs(data, probs, spec, pa, pb, bar, *, rows, n_draws, seed, nodes):
    """Monte Carlo: every pair and topic from the same draws; a tie counts one half."""
    rng = _rng(seed)
    values = np.empty((len(data), len(data.systems), n_draws))
    for t in bar:
        ranked, lengths, judged, grades = _topic_arrays(data[t])
        x = eng.sample_relevance(probs[t], n_draws, rng)
        values[t] = eng.mc_measure_values(x, ranked, lengths, judged, grades, spec)
    shape = (len(pa), len(data))
    e, v, p_less = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    map_e, map_v, map_p = np.zeros(len(pa)), np.zeros(len(pa)), np.zeros(len(pa))
    if len(pa):
        mck.pair_draw_stats(values, pa, pb, e, v, p_less, map_e, map_v, map_p)
    return e, v, p_less, map_e, map_v, map_p


@dataclass(frozen=True)
class _MomentMethod:
    """One moment method: its per-system and per-pair moments and what the public functions need to know.

    ``closed_form``: analytic given p (Monte Carlo alone takes ``draws`` and ``seed`` and computes R-prec);
    ``heavy``: a progress bar by default even on a small collection; ``per_node``: its work grows with ``nodes``.
    """

    name: str
    system_moments: Callable
    pair_moments: Callable
    closed_form: bool = True
    heavy: bool = False
    per_node: bool = False


def _closed_form(name: str, **kind) -> _MomentMethod:
    return _MomentMethod(name, partial(_analytic_measures, method=name), partial(_analytic_pairs, method=name),
                         **kind)


_METHODS = {
    "paper": _closed_form("paper"),
    "delta": _closed_form("delta"),
    "exact": _closed_form("exact", heavy=True, per_node=True),
    "mc": _MomentMethod("mc", _mc_measures, _mc_pairs, closed_form=False, heavy=True),
}
"""The moment methods (keys: :data:`bayeval.methods.MOMENT_METHODS`)."""


def _check_analytic(method, function: str, instead: str) -> str:
    m = _check_method(method)
    if not m.closed_form:
        raise BayevalInputError(f"method: {function} is analytic; use {instead}(..., method={m.name!r})")
    return m.name


# ---------------------------------------------------------------------------------------------


def expected_measures(data: RankData, probabilities=None, *, default_p: float = DEFAULT_P,
                      measures: Sequence[str] | str = ("AP",), method: str = DEFAULT_MOMENT_METHOD,
                      draws: int | None = None, seed=SEED, nodes: int = 64,
                      progress: bool | None = None) -> ExpectedEvaluation:
    r"""Expectation and variance of measures when unjudged documents are relevant at random.

    Every document i of a topic is relevant with probability :math:`p_i`, independently; judged
    documents are fixed at their judgment. For each measure, system and topic this gives E and
    Var; over topics :math:`E[\mathrm{MAP}] = \frac1T\sum_t E[AP_t]` and
    :math:`\mathrm{Var}[\mathrm{MAP}] = \frac1{T^2}\sum_t \mathrm{Var}[AP_t]` (topics independent).

    Parameters
    ----------
    data : RankData
        Runs aligned with the judgments (``RankData.build(runs, qrels, depth=...)``).
    probabilities : None, RelevanceProbabilities, an estimate, or one array per topic
        Probabilities of relevance of unjudged documents. ``None``: ``default_p`` for all. An
        estimate (:class:`~bayeval.data.probabilities.ProbabilityEstimate`, such as
        :class:`~bayeval.relevance.RelevanceEstimate`) gives what ``method`` uses
        (:func:`~bayeval.data.probabilities.probabilities_for`): with posterior draws, all of them for
        ``"mc"`` and ``closed_form_draws`` evenly spaced ones for a closed form; else its point p.
        Arrays (a sequence in ``data.topics`` order, or a mapping topic → array) are aligned with
        each topic's ``docnos``; shape ``(n_t,)``, or ``(draws, n_t)`` posterior draws of p (the same
        row index is the same draw in every topic). With draws, ``"mc"`` samples X of draw d from row
        ``d % rows``; the analytic methods compute the moments given each row and combine them by the
        law of total variance (Notes), so that parameter uncertainty reaches every method. Judged
        documents always keep their judgment.
    default_p : float
        Probability of relevance of unjudged documents absent from ``probabilities``.
    measures : str or sequence of str
        Names or :class:`~bayeval.measures.Measure` objects: ``"AP"``, ``"AP@k"``, ``"P@k"``,
        ``"nDCG@k"`` (or ``"nDCG"``), ``"recall@k"``, ``"R-prec"`` (Monte Carlo only).
    method : {"delta", "paper", "exact", "mc"}
        How the random denominator R of AP and recall is handled:

        - ``"paper"``: E[S]/E[R] and Var[S]/E[R]² (Carterette et al.; biased, see Notes);
        - ``"delta"``: second-order delta method with Cov(S, R) and Var(R) — cheap and close;
        - ``"exact"``: quadrature of the tilted generating function (``nodes`` Gauss–Laguerre
          nodes) — exact to rounding;
        - ``"mc"``: Monte Carlo over ``draws`` relevance samples (measures computed exactly per draw).

        Default ``"exact"`` (:data:`bayeval.defaults.DEFAULT_MOMENT_METHOD`, as on the command line).
        P@k and nDCG@k are exact under every analytic method.
    draws : int, optional
        Monte Carlo draws (default 1000, or the number of rows of posterior draws).
    seed : int, SeedSequence, Generator or None
        Seed of the Monte Carlo generator (default 0, so that a call prints the same numbers every time it
        runs; ``None`` draws fresh entropy from the operating system).
    nodes : int
        Quadrature nodes of the exact method (default 64).
    progress : bool, optional
        Show a progress bar (default: on a terminal, for long work).

    Returns
    -------
    ExpectedEvaluation

    Notes
    -----
    With :math:`w_i = 1/r_i` (0 if unretrieved) and :math:`a_{ij} = \min(w_i, w_j)`,
    :math:`AP = S/R`, :math:`S = \sum_i a_{ii}X_i + \sum_{i<j} a_{ij}X_iX_j`, :math:`R = \sum_i X_i`
    over all documents of the topic. The paper's closed form ignores Cov(S, R); on TREC-8 its
    variance is several times too large (docs/expected.md). The exact method uses
    :math:`E[S/R] = \int_0^\infty G(e^{-s}) E_{u(s)}[S]\,ds` with :math:`G(t) = \prod_k(1-p_k+p_kt)`
    and :math:`u_k = p_kt/(1-p_k+p_kt)`.

    With D posterior draws :math:`p^{(d)}` an analytic method gives :math:`E_d, \mathrm{Var}_d` given each, and
    :math:`E = \frac1D\sum_d E_d`, :math:`\mathrm{Var} = \frac1D\sum_d\mathrm{Var}_d + \frac1D\sum_d(E_d-E)^2`
    (law of total variance) per topic; over topics the second term is the variance over draws of
    :math:`\frac1T\sum_t E_d[AP_t]`, since a draw is shared by every topic. These are the moments Monte
    Carlo over the same draws estimates (docs/expected.md); the cost is D analytic passes.

    References
    ----------
    .. [1] B. Carterette, J. Allan, R. Sitaraman. Minimal test collections for retrieval
       evaluation. SIGIR 2006.
    .. [2] B. Carterette. Robust test collections for retrieval evaluation. SIGIR 2007, §2.1.

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=3, n_systems=4, n_docs=60, depth=20, judged_depth=5, seed=1)
    >>> data = RankData.build(col.runs, col.judgments)
    >>> ev = expected_measures(data, default_p=0.1, measures=["AP", "P@10"], method="exact")
    >>> ev.expected.shape
    (2, 4, 3)
    >>> bool(((ev.expected >= 0) & (ev.expected <= 1)).all())
    True
    """
    data, m, nodes = _check_data(data), _check_method(method), _check_nodes(nodes)
    specs = _measure_specs(measures, m)
    probs = resolve(data, probabilities, default_p, allow_draws=True, method=m.name)
    rows = _posterior_rows(probs)
    big = m.heavy or sum(tr.n_docs for tr in data) > 200_000
    bar = track(range(len(data)), total=len(data), description="expected measures", enabled=_show(progress, big))
    n_draws = None if m.closed_form else _check_draws(draws, rows)
    expected, variance, mean_e, mean_v = m.system_moments(data, probs, specs, bar, rows=rows, n_draws=n_draws,
                                                          seed=seed, nodes=nodes)
    return ExpectedEvaluation(tuple(str(s) for s in specs), tuple(data.systems), tuple(data.topics), m.name,
                              expected, variance, mean_e, mean_v, n_draws)


def _measure_specs(measures: Sequence[str] | str, method: _MomentMethod) -> list[Measure]:
    """The measures of :func:`expected_measures`, parsed and checked against ``method``; at least one, each once."""
    if isinstance(measures, str) or not isinstance(measures, Sequence):
        measures = [measures]
    specs = [EXPECTED.require(x, "measures") for x in measures]
    if not specs:
        raise BayevalInputError("measures: give at least one measure")
    names = [str(s) for s in specs]
    if len(set(names)) != len(names):
        raise BayevalInputError(f"measures: duplicates in {names}")
    for spec in specs:
        _check_spec(spec, method, "measures")
    return specs


def _posterior_rows(probs) -> int | None:
    """The number of posterior draws of p in resolved probabilities (``None``: one p per document)."""
    return probs[0].shape[0] if probs and probs[0].ndim == 2 else None


def compare_systems(data: RankData, probabilities=None, *, pairs=None, measure: str = "AP",
                    method: str = DEFAULT_MOMENT_METHOD, default_p: float = DEFAULT_P, draws: int | None = None,
                    seed=SEED, nodes: int = 64, progress: bool | None = None) -> PairwiseComparison:
    r"""E[Δ], Var[Δ] and P(Δ < 0) of a measure for pairs of systems, per topic and over topics.

    Δ = measure(a) − measure(b). For AP the two systems share the denominator R:
    :math:`\Delta AP = D/R`, :math:`D = \sum_i c_{ii}X_i + \sum_{i<j} c_{ij}X_iX_j`,
    :math:`c_{ij} = a_{ij} - b_{ij}`.

    Parameters
    ----------
    data : RankData
    probabilities : see :func:`expected_measures`
    pairs : sequence of (run_a, run_b), optional
        System names or indices; default all pairs a < b in ``data.systems`` order.
    measure : str
        One measure (``"AP"``, ``"AP@k"``, ``"P@k"``, ``"nDCG@k"``, ``"recall@k"``, ``"R-prec"`` (mc)).
    method : {"delta", "paper", "exact", "mc"}
        As in :func:`expected_measures`.
    default_p, draws, seed, nodes, progress
        As in :func:`expected_measures`.

    Returns
    -------
    PairwiseComparison

    Notes
    -----
    Analytic methods: :math:`P(\Delta<0) = \Phi(-E[\Delta]/\sqrt{\mathrm{Var}[\Delta]})`, per topic
    and for the mean over topics (:math:`E[\Delta MAP] = \frac1T\sum_t E[\Delta AP_t]`,
    :math:`\mathrm{Var}[\Delta MAP] = \frac1{T^2}\sum_t \mathrm{Var}[\Delta AP_t]`). Where the
    variance is 0 the sign is certain: P = 1 if E < 0, 0 if E > 0 and 0.5 if E = 0 (a tie).
    With posterior draws of p, E and Var are combined over the draws by the law of total variance as in
    :func:`expected_measures` (per topic, and for ΔMAP with the variance over draws of the per-draw mean).
    Monte Carlo: the fraction of draws with Δ < 0, a tie (Δ = 0 exactly, e.g. R = 0 or identical
    rankings) counting one half so that P(Δ < 0) + P(Δ > 0) = 1 as above; the same draws serve every
    pair and topic, so ΔMAP keeps any dependence that posterior draws of p create between topics.

    Per-system quantities (the prefix/suffix sums, :math:`G(t)` at the nodes, μR, Var R) are
    computed once per topic; each pair adds one Fenwick-tree walk over the documents both
    systems retrieve, :math:`O(k\log L)` per node, run in parallel over pairs.

    References
    ----------
    .. [1] B. Carterette, J. Allan, R. Sitaraman. Minimal test collections for retrieval
       evaluation. SIGIR 2006.
    .. [2] B. Carterette. Robust test collections for retrieval evaluation. SIGIR 2007, §2.1.

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=4, n_systems=3, n_docs=80, depth=30, judged_depth=10, seed=2)
    >>> data = RankData.build(col.runs, col.judgments)
    >>> cmp = compare_systems(data, default_p=0.05, method="exact")
    >>> cmp.p_less.shape, list(cmp.to_frame().columns)[:4]
    ((3, 4), ['run_a', 'run_b', 'topic', 'measure'])
    """
    data = _check_data(data)
    m = _check_method(method)
    nodes = _check_nodes(nodes)
    spec = EXPECTED.require(measure, "measure")
    _check_spec(spec, m, "measure")
    pa, pb = _resolve_pairs(data, pairs)
    probs = resolve(data, probabilities, default_p, allow_draws=True, method=m.name)
    rows = _posterior_rows(probs)
    n_pairs, n_top = len(pa), len(data)
    work = n_pairs * sum(int(tr.lengths.mean()) if tr.n_systems else 0 for tr in data)
    big = work * (nodes if m.per_node else 1) > 20_000_000 or (not m.closed_form and n_pairs > 1000)
    bar = track(range(n_top), total=n_top, description=f"pairs x topics ({spec}, {m.name})",
                enabled=_show(progress, big))
    n_draws = None if m.closed_form else _check_draws(draws, rows)
    e, v, p_less, map_e, map_v, map_p = m.pair_moments(data, probs, spec, pa, pb, bar, rows=rows, n_draws=n_draws,
                                                       seed=seed, nodes=nodes)
    return PairwiseComparison(str(spec), m.name, tuple(data.systems), tuple(data.topics), pa, pb, e, v, p_less,
                              map_e, map_v, map_p, n_draws)


# ---------------------------------------------------------------------------------------------
# one ranking: the typed layer over the kernels


def _ranking_from_ranks(ranks, n: int, argument: str) -> np.ndarray:
    try:
        r = np.asarray(ranks)
    except (TypeError, ValueError):
        raise BayevalInputError(f"{argument}: not an array of integer ranks") from None
    if r.shape != (n,):
        raise BayevalInputError(f"{argument}: expected shape ({n},) like p, got {r.shape}")
    if r.size and (not np.issubdtype(r.dtype, np.integer) or r.min() < 0):
        raise BayevalInputError(f"{argument}: ranks must be integers >= 1 (0 = not retrieved)")
    r = r.astype(np.int64)
    retrieved = np.flatnonzero(r > 0)
    order = retrieved[np.argsort(r[retrieved], kind="stable")]
    if not np.array_equal(r[order], np.arange(1, len(order) + 1)):
        raise BayevalInputError(f"{argument}: the positive ranks must be 1, 2, ..., L without gaps or repeats")
    return order.astype(np.int32)


def _check_p(p) -> np.ndarray:
    try:
        p = np.asarray(p, dtype=np.float64)
    except (TypeError, ValueError):
        raise BayevalInputError("p: not an array of probabilities") from None
    if p.ndim != 1:
        raise BayevalInputError(f"p: expected a 1-D array, got shape {p.shape}")
    if not np.all(np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise BayevalInputError("p: probabilities must lie in [0, 1]")
    return np.ascontiguousarray(p)


def _stack(orders: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    width = max((len(o) for o in orders), default=0)
    ranked = np.full((len(orders), width), -1, dtype=np.int32)
    for s, o in enumerate(orders):
        ranked[s, : len(o)] = o
    return ranked, np.array([len(o) for o in orders], dtype=np.int32)


def _ap_spec(cutoff) -> Measure:
    if cutoff is None:
        return Measure("AP")
    if not isinstance(cutoff, (int, np.integer)) or isinstance(cutoff, bool) or cutoff < 1:
        raise BayevalInputError(f"cutoff: must be a positive integer, got {cutoff!r}")
    return Measure("AP", int(cutoff))


def ap_moments(ranks, p, *, method: str = "exact", nodes: int = 64, cutoff: int | None = None) -> tuple[float, float]:
    r"""E[AP] and Var[AP] of one ranking under independent relevance ``X_i ~ Bernoulli(p_i)``.

    Parameters
    ----------
    ranks : array of int, shape (n,)
        1-based rank of each document in the system, 0 if it does not retrieve it. Every document
        counts in R, retrieved or not.
    p : array of float, shape (n,)
        Probability of relevance of each document.
    method : {"exact", "delta", "paper"}
    nodes : int
        Quadrature nodes for ``"exact"``.
    cutoff : int, optional
        AP@cutoff (the ranking is cut; R still counts every document).

    Returns
    -------
    (float, float)
        Expectation and variance. AP = 0 when R = 0.

    Notes
    -----
    ``"paper"`` is carterette2007 eqs. in §2.1: :math:`E[S]/E[R]` and :math:`Var[S]/E[R]^2`,
    computed in O(n) after sorting (the four-term variance of S by prefix/suffix sums).

    Examples
    --------
    The worked example of carterette2007 §2.1: ranking B, A, C with p = (A 0.4, B 0.8, C 0.7).

    >>> ranks, p = [2, 1, 3], [0.4, 0.8, 0.7]
    >>> [round(x, 3) for x in ap_moments(ranks, p, method="paper")]
    [0.881, 0.213]
    >>> [round(x, 3) for x in ap_moments(ranks, p, method="exact")]
    [0.817, 0.065]
    """
    method = _check_analytic(method, "ap_moments", "expected_measures")
    p = _check_p(p)
    order = _ranking_from_ranks(ranks, len(p), "ranks")
    ranked, lengths = _stack([order])
    st = eng.numerator_state(ranked, lengths, p, _ap_spec(cutoff), method, _check_nodes(nodes))
    e, v = eng.state_system_moments(st)
    return float(e[0]), float(v[0])


def delta_ap_moments(ranks_a, ranks_b, p, *, method: str = "exact", nodes: int = 64,
                     cutoff: int | None = None) -> tuple[float, float]:
    r"""E and Var of ΔAP = AP_a − AP_b for two rankings of the same documents (shared R).

    Parameters are as in :func:`ap_moments`, with one rank array per system.

    Examples
    --------
    Documents A, B, C (p = 0.9, 0.3, 0.5); system a ranks A, B, system b ranks B, A, nobody
    retrieves C. ΔAP = +1/(2R) if only A is relevant (0.63), -1/(2R) if only B is (0.03), else 0,
    with R = 1 + X_C: E[ΔAP] = 0.6 * 0.5 * E[1/R] = 0.3 * 0.75 = 0.225.

    >>> e, v = delta_ap_moments([1, 2, 0], [2, 1, 0], [0.9, 0.3, 0.5], method="exact")
    >>> round(e, 4), round(v, 4)
    (0.225, 0.0525)
    >>> round(delta_ap_moments([1, 2, 0], [2, 1, 0], [0.9, 0.3, 0.5], method="paper")[0], 4)
    0.1765
    """
    method = _check_analytic(method, "delta_ap_moments", "compare_systems")
    p = _check_p(p)
    orders = [_ranking_from_ranks(ranks_a, len(p), "ranks_a"), _ranking_from_ranks(ranks_b, len(p), "ranks_b")]
    ranked, lengths = _stack(orders)
    st = eng.numerator_state(ranked, lengths, p, _ap_spec(cutoff), method, _check_nodes(nodes))
    e, v = eng.state_pair_moments(st, np.array([0], dtype=np.int64), np.array([1], dtype=np.int64))
    return float(e[0]), float(v[0])
