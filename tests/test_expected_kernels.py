"""Moments of AP and ΔAP for one ranking: exact vs enumeration, fast closed form vs the naive formula.

Every expected value below comes from full enumeration of the 2^n relevance outcomes or from the
papers' printed sums evaluated literally in O(n^3) (bayeval.expected.reference).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bayeval.errors import BayevalInputError
from bayeval.expected import ap_moments, delta_ap_moments
from bayeval.expected import reference as ref

# ---------------------------------------------------------------------------------------------
# random small cases: unretrieved relevant documents, documents one system retrieves, p in {0, 1}


def _random_ranks(rng, n):
    r = np.zeros(n, dtype=np.int64)
    k = int(rng.integers(0, n + 1))
    r[rng.permutation(n)[:k]] = np.arange(1, k + 1)
    return r


def _random_p(rng, n):
    p = rng.random(n)
    u = rng.random(n)
    p[u < 0.15] = 0.0
    p[u > 0.85] = 1.0
    if rng.random() < 0.3:
        p *= 0.05  # rarely relevant: P(R = 0) large
    return p


def _cut(r, cutoff):
    return r if cutoff is None else np.where(r <= cutoff, r, 0)


CASES = 120


@pytest.fixture(scope="module")
def cases():
    rng = np.random.default_rng(20070723)
    out = []
    for _ in range(CASES):
        n = int(rng.integers(1, 13))
        cutoff = None if rng.random() < 0.7 else int(rng.integers(1, n + 1))
        out.append((_random_ranks(rng, n), _random_ranks(rng, n), _random_p(rng, n), cutoff))
    return out


def test_cases_cover_the_hard_parts(cases):
    # documents relevant for sure that a system does not retrieve, documents only one system retrieves,
    # p exactly 0 and 1, and the largest n
    assert any(((ra == 0) & (p == 1)).any() for ra, _, p, _ in cases)
    assert any(((ra > 0) & (rb == 0)).any() for ra, rb, _, _ in cases)
    assert any((p == 0).any() and (p == 1).any() for _, _, p, _ in cases)
    assert max(len(p) for _, _, p, _ in cases) == 12


def test_exact_equals_enumeration(cases):
    for ra, rb, p, cutoff in cases:
        x = ref.outcomes(len(p))
        prob = ref.outcome_probabilities(x, p)
        ap_a = ref.ap_values(ra, x, cutoff)
        ap_b = ref.ap_values(rb, x, cutoff)
        e, v = ref.enumerate_moments(ap_a, prob)
        got = ap_moments(ra, p, method="exact", cutoff=cutoff)
        assert got == pytest.approx((e, v), abs=1e-9)
        e, v = ref.enumerate_moments(ap_a - ap_b, prob)
        got = delta_ap_moments(ra, rb, p, method="exact", cutoff=cutoff)
        assert got == pytest.approx((e, v), abs=1e-9)


def test_ap_values_are_trec_eval_ap():
    # the quadratic form (1/R) sum_{i<=j} a_ij X_i X_j is the mean precision at relevant documents
    rng = np.random.default_rng(3)
    for _ in range(50):
        n = 9
        r = _random_ranks(rng, n)
        x = (rng.random((4, n)) < 0.5).astype(float)
        order = np.argsort(np.where(r > 0, r, n + 1))[: int((r > 0).sum())]
        want = [ref.ap_by_precision(order, row, int(row.sum())) for row in x]
        assert ref.ap_values(r, x) == pytest.approx(want, abs=1e-12)


def test_fast_paper_formula_equals_naive_cubic(cases):
    for ra, rb, p, cutoff in cases:
        want = ref.paper_moments(_cut(ra, cutoff), p)
        assert ap_moments(ra, p, method="paper", cutoff=cutoff) == pytest.approx(want, abs=1e-9)
        want = ref.paper_moments_delta(_cut(ra, cutoff), _cut(rb, cutoff), p)
        assert delta_ap_moments(ra, rb, p, method="paper", cutoff=cutoff) == pytest.approx(want, abs=1e-9)


def test_compiled_naive_reference_matches_python_naive(cases):
    for ra, rb, p, _ in cases[:30]:
        wa = np.where(ra > 0, 1.0 / np.maximum(ra, 1), 0.0)
        wb = np.where(rb > 0, 1.0 / np.maximum(rb, 1), 0.0)
        es, var = ref.paper_moments_delta_naive(wa, wb, p)
        mu = p.sum()
        want = ref.paper_moments_delta(ra, rb, p)
        got = (es / mu, var / mu**2) if mu > 0 else (0.0, 0.0)
        assert got == pytest.approx(want, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# the worked example of carterette2007 §2.1 (and docs/maths.md §1)

# documents A, B, C; ranking B, A, C; p_A = 0.4, p_B = 0.8, p_C = 0.7
EX_RANKS = np.array([2, 1, 3])
EX_P = np.array([0.4, 0.8, 0.7])


def test_worked_example_distribution():
    x = ref.outcomes(3)
    prob = ref.outcome_probabilities(x, EX_P)
    ap = ref.ap_values(EX_RANKS, x)
    # AP = 0 only when nothing is relevant: 0.6 * 0.2 * 0.3
    assert prob[ap == 0].sum() == pytest.approx(0.6 * 0.2 * 0.3)  # 0.036, as printed
    # AP = 1/2 only when A alone is relevant (A at rank 2): p_A (1 - p_B)(1 - p_C) -- the paper
    # prints 0.2 * 0.4 * 0.7 = 0.056, which is wrong for this ranking (docs/maths.md §1)
    assert prob[np.isclose(ap, 0.5)].sum() == pytest.approx(0.4 * 0.2 * 0.3)  # 0.024


def test_worked_example_paper_vs_exact():
    # Enumeration: E = 0.8167, Var = 0.0648. The closed form, E[S]/E[R] = 1.6753/1.9 and
    # Var[S]/E[R]^2 = 0.7688/3.61, is off: 0.881 and 0.213 (docs/maths.md §1).
    x = ref.outcomes(3)
    e, v = ref.enumerate_moments(ref.ap_values(EX_RANKS, x), ref.outcome_probabilities(x, EX_P))
    assert (round(e, 3), round(v, 3)) == (0.817, 0.065)
    assert ap_moments(EX_RANKS, EX_P, method="exact") == pytest.approx((e, v), abs=1e-12)
    paper = ap_moments(EX_RANKS, EX_P, method="paper")
    assert (round(paper[0], 3), round(paper[1], 3)) == (0.881, 0.213)
    # E[S] by hand: sum a_ii p_i = 0.8/1 + 0.4/2 + 0.7/3; pairs (B,A) 1/2, (B,C) 1/3, (A,C) 1/3
    es = 0.8 + 0.2 + 0.7 / 3 + 0.5 * 0.8 * 0.4 + (0.8 * 0.7 + 0.4 * 0.7) / 3
    assert paper[0] == pytest.approx(es / 1.9, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# larger n: the exact method against a quadrature that is exact for polynomials, and the delta method


@pytest.mark.parametrize("kind", ["beta-mix", "rare", "judged+rare", "polar", "half", "one-likely"])
def test_exact_matches_polynomial_exact_reference(kind):
    rng = np.random.default_rng(11)
    n = 240
    p = {
        "beta-mix": np.where(rng.random(n) < 0.3, 0.0, rng.beta(0.3, 2.0, n)),
        "rare": np.full(n, 0.001),
        "judged+rare": np.r_[np.ones(5), np.full(n - 5, 0.01)],
        "polar": np.where(rng.random(n) < 0.5, 0.999, 0.001),
        "half": np.full(n, 0.5),
        "one-likely": np.r_[0.9, np.full(n - 1, 1e-6)],
    }[kind]
    r = np.zeros(n, dtype=np.int64)
    r[rng.permutation(n)[:80]] = np.arange(1, 81)
    e_ref, v_ref = ref.legendre_exact_moments(r, p)
    e, v = ap_moments(r, p, method="exact")
    assert e == pytest.approx(e_ref, rel=1e-10, abs=1e-15)
    assert v == pytest.approx(v_ref, rel=1e-9, abs=1e-15)


def test_delta_method_close_to_exact_and_paper_is_not():
    # docs/maths.md §2: n = 1000, p from a Beta(0.3, 2) mix with 30% zeros, one ranking
    rng = np.random.default_rng(5)
    n = 1000
    p = np.where(rng.random(n) < 0.3, 0.0, rng.beta(0.3, 2.0, n))
    r = np.zeros(n, dtype=np.int64)
    r[rng.permutation(n)] = np.arange(1, n + 1)
    e, v = ap_moments(r, p, method="exact")
    e_d, v_d = ap_moments(r, p, method="delta")
    e_p, v_p = ap_moments(r, p, method="paper")
    assert abs(e_d - e) / e < 1e-3
    assert abs(v_d - v) / v < 0.05
    assert v_p / v > 1.5  # the closed form ignores Cov(S, R): its variance is far too large


def test_monte_carlo_within_four_standard_errors_of_exact():
    from bayeval.expected._engine import sample_relevance

    rng = np.random.default_rng(8)
    n = 400
    p = np.where(rng.random(n) < 0.3, 0.0, rng.beta(0.5, 3.0, n))
    r = np.zeros(n, dtype=np.int64)
    r[rng.permutation(n)[:150]] = np.arange(1, 151)
    e, v = ap_moments(r, p, method="exact")
    draws = 20000
    x = sample_relevance(p, draws, np.random.default_rng(99)).astype(float)
    order = np.argsort(np.where(r > 0, r, n + 1))[:150]
    hits = np.cumsum(x[:, order], axis=1)
    s = (x[:, order] * hits / np.arange(1, 151)).sum(axis=1)
    rel = x.sum(axis=1)
    ap = np.where(rel > 0, s / np.maximum(rel, 1), 0.0)
    assert abs(ap.mean() - e) < 4 * np.sqrt(v / draws)
    m4 = np.mean((ap - ap.mean()) ** 4)
    assert abs(ap.var(ddof=1) - v) < 4 * np.sqrt((m4 - v**2) / draws)


# ---------------------------------------------------------------------------------------------
# properties


@st.composite
def ranking_and_p(draw, binary=False):
    n = draw(st.integers(1, 40))
    k = draw(st.integers(0, n))
    perm = draw(st.permutations(range(n)))
    r = np.zeros(n, dtype=np.int64)
    r[list(perm[:k])] = np.arange(1, k + 1)
    if binary:
        p = np.array(draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=n, max_size=n)))
    else:
        p = np.array(draw(st.lists(st.floats(0.0, 1.0), min_size=n, max_size=n)))
    return r, p


@settings(max_examples=60, deadline=None)
@given(ranking_and_p())
def test_exact_moments_are_moments_of_a_variable_in_unit_interval(case):
    r, p = case
    e, v = ap_moments(r, p, method="exact")
    assert -1e-12 <= e <= 1 + 1e-12
    assert 0.0 <= v <= e * (1 - e) + 1e-9  # any variable in [0, 1] with mean e


@settings(max_examples=60, deadline=None)
@given(ranking_and_p(binary=True), st.sampled_from(["paper", "delta", "exact"]))
def test_expectation_is_ap_when_relevance_is_known(case, method):
    r, p = case
    x = p[None, :]
    want = float(ref.ap_values(r, x)[0])
    e, v = ap_moments(r, p, method=method)
    assert e == pytest.approx(want, abs=1e-12)
    assert v == pytest.approx(0.0, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# input errors name the argument


def test_bad_inputs_name_the_argument():
    with pytest.raises(BayevalInputError, match="^p:"):
        ap_moments([1, 2], [0.5, 1.5])
    with pytest.raises(BayevalInputError, match="^method:"):
        ap_moments([1, 2], [0.5, 0.5], method="magic")
    with pytest.raises(BayevalInputError, match="^ranks:"):
        ap_moments([1, 3], [0.5, 0.5])
    with pytest.raises(BayevalInputError, match="^ranks_b:"):
        delta_ap_moments([1, 2], [1, 1], [0.5, 0.5])
    with pytest.raises(BayevalInputError, match="^nodes:"):
        ap_moments([1, 2], [0.5, 0.5], nodes=0)
    with pytest.raises(BayevalInputError, match="^cutoff:"):
        ap_moments([1, 2], [0.5, 0.5], cutoff=0)


def test_serial_and_threaded_pair_kernels_agree():
    # the engine runs small problems on the calling thread and large ones on numba's pool: same numbers
    from bayeval.expected import _ap_kernels as apk

    rng = np.random.default_rng(3)
    n, S, m = 300, 12, 5
    ranked = np.stack([rng.permutation(n)[:80] for _ in range(S)]).astype(np.int64)
    lengths = rng.integers(40, 81, size=S).astype(np.int64)
    for s in range(S):
        ranked[s, lengths[s]:] = -1
    rank_of = apk.rank_lookup(ranked, lengths, n)
    off = 1.0 / np.arange(1, 81)
    v, phi = rng.random((n, m)), rng.random((S, 80, m))
    pa, pb = (x.astype(np.int64) for x in np.triu_indices(S, 1))
    threaded, serial = np.empty((len(pa), m)), np.empty((len(pa), m))
    apk.pair_covariances(pa, pb, ranked, lengths, rank_of, off, True, v, phi, threaded, 7)
    apk.pair_covariances_serial(pa, pb, ranked, lengths, rank_of, off, True, v, phi, serial)
    assert np.array_equal(threaded, serial) and np.all(serial != 0)
