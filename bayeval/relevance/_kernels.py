"""Array kernels: penalised Newton/IRLS for logistic and Bradley–Terry log posteriors (no pandas, no PyMC).

Every log posterior here is the sum of a weighted Bernoulli log likelihood with *fractional* targets and
a separable prior on each coefficient,

.. math::

    \\log p(\\beta) = \\sum_k -\\tfrac12 \\tau_k(\\beta_k-\\mu_k)^2
        + a_k\\log\\sigma(\\beta_k) + b_k\\log\\sigma(-\\beta_k),

i.e. a Normal prior (precision :math:`\\tau_k`, 0 = none) and a Beta(:math:`a_k, b_k`) prior on
:math:`\\sigma(\\beta_k)` written in the coefficient's own space (Jacobian included), which is exactly
:math:`a_k` pseudo-successes and :math:`b_k` pseudo-failures of a logistic row with :math:`\\eta=\\beta_k`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from numba import njit
from scipy.linalg.blas import dsyrk
from scipy.sparse import csr_matrix, diags
from scipy.special import expit, log_expit

from bayeval.relevance._bordered import BorderedDiagonal, BorderedFactor, cholesky, plus_diagonal

__all__ = ["CoefPrior", "DenseDesign", "EffectsDesign", "NewtonResult", "OffsetSparseDesign", "SparseDesign",
           "bt_logpost", "bt_newton", "bt_newton_batch", "logistic_logpost", "logistic_newton", "member_rows",
           "platt_sums"]


@dataclass(frozen=True)
class CoefPrior:
    """Separable prior on a coefficient vector (see module docstring); arrays of shape (p,)."""

    mu: np.ndarray
    prec: np.ndarray
    a: np.ndarray
    b: np.ndarray

    @classmethod
    def make(cls, p: int, *, mu=0.0, prec=0.0, a=0.0, b=0.0) -> CoefPrior:
        f = lambda v: np.broadcast_to(np.asarray(v, dtype=np.float64), (p,)).copy()  # noqa: E731
        return cls(f(mu), f(prec), f(a), f(b))

    def logp(self, beta: np.ndarray) -> float:
        return float(np.sum(-0.5 * self.prec * (beta - self.mu) ** 2
                            + self.a * log_expit(beta) + self.b * log_expit(-beta)))

    def grad(self, beta: np.ndarray) -> np.ndarray:
        return -self.prec * (beta - self.mu) + self.a - (self.a + self.b) * expit(beta)

    def neg_hess_diag(self, beta: np.ndarray) -> np.ndarray:
        s = expit(beta)
        return self.prec + (self.a + self.b) * s * (1.0 - s)


@dataclass(frozen=True)
class _MatrixDesign:
    """A design held as one matrix X (n, p), dense or scipy sparse: its shape and the products
    :math:`X\\beta` and :math:`X^\\top v` (both forms compute them with ``@``); :meth:`gram` is each form's."""

    X: object

    @property
    def shape(self) -> tuple[int, int]:
        return self.X.shape

    def dot(self, beta: np.ndarray) -> np.ndarray:
        """:math:`X\\beta`."""
        return self.X @ beta

    def rdot(self, v: np.ndarray) -> np.ndarray:
        """:math:`X^\\top v`."""
        return self.X.T @ v


@dataclass(frozen=True)
class DenseDesign(_MatrixDesign):
    """A design matrix X (n, p) with the three products Newton needs."""

    X: np.ndarray

    def gram(self, v: np.ndarray) -> np.ndarray:
        """:math:`X^\\top \\mathrm{diag}(v) X`."""
        return (self.X * v[:, None]).T @ self.X


@dataclass(frozen=True)
class OffsetSparseDesign:
    r"""A design matrix that equals a per-group baseline row except in few entries:
    :math:`X = B_{g(i)} + S` with B (G, p) dense and S (n, p) sparse.

    The aggregation design of RTC has this shape: a document's feature for system j is the same
    "unretrieved" value for every document of the topic that j does not rank, so each row differs from
    its topic's baseline only where a system ranks it (7 of 129 entries on average on TREC-8). Then

    .. math::

        X^\top DX = B^\top D_G B + B^\top M + M^\top B + S^\top D S,\qquad
        (D_G)_{gg} = \sum_{i\in g} v_i,\quad M_g = \sum_{i\in g} v_i S_i,

    costing :math:`O(\sum_i \mathrm{nnz}_i^2 + Gp^2)` instead of :math:`O(np^2)`.
    """

    baseline: np.ndarray
    groups: np.ndarray
    S: object  # scipy.sparse.csr_matrix (n, p)
    ST: object = None  # unused (the S^T D S product is a kernel over S's rows); kept for the constructor's order
    cell: np.ndarray | None = None  # per stored entry: group * p + column (for M)
    row: np.ndarray | None = None  # per stored entry: its row

    @classmethod
    def from_dense(cls, X: np.ndarray, groups: np.ndarray, baseline: np.ndarray) -> OffsetSparseDesign:
        groups = np.asarray(groups, dtype=np.int64)
        baseline = np.asarray(baseline, dtype=np.float64)
        X = np.ascontiguousarray(X, dtype=np.float64)
        indptr, indices, data = _offset_rows(X, groups, baseline)  # the nonzero entries of X − B_g, row by row
        S = csr_matrix((data, indices, indptr), shape=X.shape)
        row = np.repeat(np.arange(S.shape[0]), np.diff(S.indptr))
        return cls(baseline, groups, S, None, groups[row] * S.shape[1] + S.indices, row)

    @property
    def shape(self) -> tuple[int, int]:
        return self.S.shape

    def dense(self) -> np.ndarray:
        return self.baseline[self.groups] + self.S.toarray()

    def dot(self, beta: np.ndarray) -> np.ndarray:
        return (self.baseline @ beta)[self.groups] + self.S @ beta

    def rdot(self, v: np.ndarray) -> np.ndarray:
        return self.baseline.T @ np.bincount(self.groups, v, minlength=len(self.baseline)) + self.S.T @ v

    def gram(self, v: np.ndarray) -> np.ndarray:
        G, p = self.baseline.shape
        B = self.baseline
        vg = np.bincount(self.groups, v, minlength=G)
        M = np.bincount(self.cell, v[self.row] * self.S.data, minlength=G * p).reshape(G, p)
        cross = B.T @ M
        SS = _csr_weighted_gram(self.S.indptr, self.S.indices, self.S.data, np.asarray(v, dtype=np.float64), p)
        return (B * vg[:, None]).T @ B + cross + cross.T + SS


@njit(cache=True)
def _entry(X, g, baseline, depth, i, j):
    r"""Entry (i, j) of a matrix :func:`_csr_rows` stores: :math:`X_{ij} - B_{gj}` (g = g(i)) when ``depth`` is None
    (a branch numba prunes when compiling), else :math:`\mathbb 1[0 < X_{ij} \le` ``depth[j]`` :math:`]` (X a matrix
    of ranks)."""
    if depth is None:
        return X[i, j] - baseline[g, j]
    return 1.0 if X[i, j] > 0 and X[i, j] <= depth[j] else 0.0


@njit(cache=True)
def _csr_rows(X, groups, baseline, depth):
    r"""CSR arrays (indptr, indices, data) of the nonzero entries of :func:`_entry`, row by row in column order
    (what ``scipy.sparse.csr_matrix`` of the dense matrix holds), without the dense matrix: one pass counts a row's
    entries, a second writes them; with a ``depth`` (membership rows, not None) each entry of row i is
    :math:`1/\mathrm{nnz}_i`. The one CSR walk behind :func:`_offset_rows` and :func:`member_rows`."""
    n, p = X.shape
    indptr = np.zeros(n + 1, dtype=np.int32)
    for i in range(n):
        g = groups[i] if depth is None else 0
        c = 0
        for j in range(p):
            if _entry(X, g, baseline, depth, i, j) != 0.0:
                c += 1
        indptr[i + 1] = indptr[i] + c
    indices = np.empty(indptr[n], dtype=np.int32)
    data = np.empty(indptr[n])
    for i in range(n):
        g = groups[i] if depth is None else 0
        e = indptr[i]
        w = 1.0 / (indptr[i + 1] - indptr[i]) if indptr[i + 1] > indptr[i] else 0.0
        for j in range(p):
            d = _entry(X, g, baseline, depth, i, j)
            if d != 0.0:
                indices[e] = j
                data[e] = d if depth is None else w
                e += 1
    return indptr, indices, data


@njit(cache=True)
def _offset_rows(X, groups, baseline):
    """CSR arrays (indptr, indices, data) of :math:`X - B_{g(i)}`: its nonzero entries, row by row, in column
    order (what ``scipy.sparse.csr_matrix`` of the dense difference holds), without the dense difference."""
    return _csr_rows(X, groups, baseline, None)


@njit(cache=True)
def _csr_weighted_gram(indptr, indices, data, v, p):
    r""":math:`S^\top\mathrm{diag}(v)S` (dense p × p) of a CSR matrix S (n × p), row by row: row r adds
    :math:`S_{ri}(S_{rj}v_r)` to every cell (i, j) of its stored entries, :math:`O(\sum_r\mathrm{nnz}_r^2)`.

    The same products summed in the same order (ascending r in every cell) as scipy's
    ``S.T.tocsr() @ (diag(v) S)`` (``csr_matmat``), so the result is bit-identical to that product, without
    its two passes (a count of the output's entries, then the product) and its sparse copy of a dense block;
    each pair of a row's entries is visited once for both cells.
    """
    out = np.zeros((p, p))
    for r in range(len(indptr) - 1):
        a, b = indptr[r], indptr[r + 1]
        vr = v[r]
        for e in range(a, b):
            i = indices[e]
            x = data[e]
            xv = x * vr
            for f in range(e, b):  # each pair once: (i, j) and (j, i) with their own rounding
                j = indices[f]
                y = data[f]
                out[i, j] += x * (y * vr)
                if f != e:
                    out[j, i] += y * xv
    return out


@dataclass(frozen=True)
class SparseDesign(_MatrixDesign):
    """A sparse design matrix (scipy CSR, n × p) with the three products Newton needs; the Gram matrix
    :math:`X^\\top DX` costs :math:`O(\\sum_i \\mathrm{nnz}_i^2)` and is returned dense (p is small)."""

    X: object  # scipy.sparse.csr_matrix

    def gram(self, v: np.ndarray) -> np.ndarray:
        return np.asarray((self.X.T @ diags(v) @ self.X).toarray())


@dataclass(frozen=True)
class EffectsDesign:
    r"""The design of a logistic regression with random effects, :math:`X=[F\mid A\mid W]`: a few dense
    columns F (n, k), the one-hot columns A (n, G) of a group (one effect per group) and a sparse membership
    block W (n, S) whose rows repeat a small set of *patterns*, :math:`W_i=U_{c(i)}` (U (n_u, S), stored
    sparse).

    The hierarchical relevance model (:mod:`bayeval.relevance.hierarchical`) has this shape: F holds the
    RTC log-odds scaled by :math:`\kappa_i`, G are the topics, and a judged document's row of W depends only
    on the set of runs that retrieve it (on TREC-8, 23,000 patterns for 87,000 judged rows). Then

    .. math::

        W^\top DW = U^\top D_U U,\qquad (D_U)_{cc}=\sum_{i:c(i)=c} v_i,

    and :math:`X_iCX_i^\top` has its W–W part :math:`U_cC_{UU}U_c^\top` once per pattern. Both go pattern
    by pattern over the stored entries, :math:`O(\mathrm{nnz}_c^2)` each (numba), except for the patterns
    with more than ``dense_above`` entries (a few thousand on TREC-8, up to 123 of 129 runs), which go
    through dense BLAS (``syrk``, ``gemm``): :math:`O(S^2)` each but at BLAS speed. The parts with F and A
    take one pass over the rows (numba): no n × p product, no dense copy of W or U.

    Build it with :meth:`from_parts` (which finds the patterns); :meth:`with_dense` swaps F.
    """

    F: np.ndarray
    group: np.ndarray
    n_groups: int
    W: object  # scipy.sparse.csr_matrix (n, S), sorted indices
    pattern: np.ndarray  # (n,) index of each row's pattern in U
    Us: object  # (n_u, S) the distinct rows of W, CSR with sorted indices
    dense: np.ndarray  # indices of the patterns with many entries (BLAS products)
    Ud: np.ndarray  # (len(dense), S) those patterns, dense
    sparse: np.ndarray  # (n_u,) bool: the other patterns (numba products over their entries)
    WT: object  # Wᵀ as CSR (S, n)
    bordered: bool = False  # gram() in bordered form (:meth:`gram_bordered`): what Newton factors at many groups

    #: patterns with more stored entries than this go through dense BLAS products (chosen by timing on
    #: synthetic patterns: a pattern costs nnz²/2 scattered updates sparse, S²/2 contiguous ones dense)
    dense_above = 40

    @classmethod
    def from_parts(cls, F, group, n_groups: int, W, dense_above: int | None = None,
                   bordered: bool = False) -> EffectsDesign:
        """Find the distinct rows of W (a hash of each row, then checked entry by entry: exact); the patterns
        with more than ``dense_above`` entries (default :attr:`dense_above`) go through BLAS. With ``bordered``
        :meth:`gram` gives the bordered form (:meth:`gram_bordered`)."""
        W = csr_matrix(W, dtype=np.float64, copy=True)
        W.sort_indices()
        F = np.asarray(F, dtype=np.float64)
        n, S = W.shape
        group = np.asarray(group, dtype=np.int64)
        # key of a row: its dot product with fixed random weights (equal rows, equal keys: same entries
        # summed in the same order); different rows with one key are caught below
        key = W @ np.random.default_rng(20070723).random(S)
        _, first, pattern = np.unique(key, return_index=True, return_inverse=True)
        pattern = pattern.reshape(-1).astype(np.int64)
        if n and not _rows_match(W.indptr, W.indices, W.data, pattern, first):  # pragma: no cover - collision
            pattern, first = np.arange(n), np.arange(n)
        Us = W[first]
        Us.sort_indices()
        nnz = np.diff(Us.indptr)
        cut = cls.dense_above if dense_above is None else int(dense_above)
        dense = np.flatnonzero(nnz > cut)
        return cls(F[:, None] if F.ndim == 1 else F, group, int(n_groups), W, pattern, Us, dense,
                   Us[dense].toarray(), nnz <= cut, W.T.tocsr(), bool(bordered))

    def with_dense(self, F) -> EffectsDesign:
        """The same design with other dense columns F (same shape)."""
        return dataclasses.replace(self, F=np.asarray(F, dtype=np.float64))

    @property
    def U(self) -> np.ndarray:
        """The distinct rows of W, dense (n_u, S)."""
        return self.Us.toarray()

    @property
    def shape(self) -> tuple[int, int]:
        return (self.W.shape[0], self.F.shape[1] + self.n_groups + self.W.shape[1])

    def _split(self, beta):
        k, G = self.F.shape[1], self.n_groups
        return beta[:k], beta[k:k + G], beta[k + G:]

    def dot(self, beta: np.ndarray) -> np.ndarray:
        """:math:`X\beta` (``beta`` (p,) or (p, m))."""
        b, a, u = self._split(np.asarray(beta, dtype=np.float64))
        return self.F @ b + a[self.group] + self.W @ u

    def rdot(self, v: np.ndarray) -> np.ndarray:
        """:math:`X^\top v` (``v`` (n,) or (n, m); W's transpose kept as CSR: a gather per column, the same
        sums in the same order as a scatter over W's rows)."""
        v = np.asarray(v, dtype=np.float64)
        if v.ndim == 2:
            A = np.stack([np.bincount(self.group, c, minlength=self.n_groups) for c in v.T], axis=1)
            return np.vstack([self.F.T @ v, A.reshape(self.n_groups, v.shape[1]), self.WT @ v])
        return np.r_[self.F.T @ v, np.bincount(self.group, v, minlength=self.n_groups), self.WT @ v]

    def gram(self, v: np.ndarray) -> np.ndarray | BorderedDiagonal:
        r""":math:`X^\top \mathrm{diag}(v) X` (dense, p × p; bordered, :meth:`gram_bordered`, for a bordered
        design)."""
        H = self.gram_bordered(v)
        return H if self.bordered else H.dense()

    def _pattern_block(self, vu: np.ndarray) -> np.ndarray:
        r"""The W–W block :math:`U^\top D_UU` (S × S, symmetric) from the weights summed per pattern."""
        S = self.W.shape[1]
        Us = self.Us
        if len(self.dense) and np.all(vu[self.dense] >= 0):
            B = self.Ud * np.sqrt(vu[self.dense])[:, None]
            UU = dsyrk(1.0, B.T)  # upper triangle of Bᵀ B
            sparse = self.sparse
        else:
            UU = np.zeros((S, S))
            sparse = np.ones(Us.shape[0], dtype=np.bool_)
        _pattern_gram_upper(Us.indptr, Us.indices, Us.data, vu, sparse, UU)
        return _symmetrize_upper(UU)

    def gram_bordered(self, v: np.ndarray) -> BorderedDiagonal:
        r""":math:`X^\top\mathrm{diag}(v)X` as a :class:`~bayeval.relevance._bordered.BorderedDiagonal`: the A–A
        block (one group per row) is diagonal; the border is (F, W). :math:`O(n\,(k+\mathrm{nnz}_i)^2)` and the
        W–W patterns as :meth:`gram`, and no (k + G + S)² array."""
        k, G, S = self.F.shape[1], self.n_groups, self.W.shape[1]
        v = np.asarray(v, dtype=np.float64)
        d, cross, border, vu = _effects_gram_border(self.F, self.group, self.W.indptr, self.W.indices, self.W.data,
                                                    v, self.pattern, G, S, self.Us.shape[0])
        border[k:, k:] = self._pattern_block(vu)
        return BorderedDiagonal(k, d, cross, _symmetrize_upper(border))

    def quad_diag_inverse(self, factor: BorderedFactor) -> np.ndarray:
        r""":math:`\mathrm{diag}(XH^{-1}X^\top)` from the factor of a bordered H (:meth:`gram_bordered`'s layout):
        per row :math:`X_iH^{-1}X_i^\top` from the parts of :math:`H^{-1}` (no P × P inverse), as :meth:`quad_diag`."""
        return self.quad_diag_parts(*factor.inverse_parts())

    def quad_diag(self, C: np.ndarray) -> np.ndarray:
        r""":math:`\mathrm{diag}(XCX^\top)` for a symmetric C (p × p): per row :math:`X_iCX_i^\top`,
        the W–W part once per pattern (:math:`O(\sum_c\mathrm{nnz}_c^2 + n\,(k^2+k\,\mathrm{nnz}_i))`)."""
        return self.quad_diag_parts(*self.parts_of(C, self.F.shape[1], self.n_groups))

    @staticmethod
    def parts_of(C: np.ndarray, k: int, G: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A dense C (p × p) as the parts :meth:`quad_diag_parts` reads, in the bordered layout (the first k
        coordinates and those after the G groups form the border): the entries the rows read, as they are."""
        C = np.asarray(C, dtype=np.float64)
        border = np.r_[np.arange(k), np.arange(k + G, C.shape[0])]
        cross = np.concatenate([C[:k, k:k + G].T, C[k:k + G, k + G:]], axis=1)
        return np.diagonal(C)[k:k + G], cross, C[np.ix_(border, border)]

    def quad_diag_parts(self, dd: np.ndarray, cross: np.ndarray, cov: np.ndarray) -> np.ndarray:
        """:math:`X_iCX_i^\top` of every row from C's parts in the bordered layout: the diagonal of its A–A block
        ``dd`` (G,), its A rows in the border's (F, W) columns ``cross`` (G, k + S), its border block ``cov``."""
        k = self.F.shape[1]
        cov = np.ascontiguousarray(cov)
        Cuu = np.ascontiguousarray(cov[k:, k:])
        Us = self.Us
        quu = _pattern_quad(Us.indptr, Us.indices, Us.data, Cuu, self.sparse)
        if len(self.dense):
            quu[self.dense] = np.einsum("ij,ij->i", self.Ud @ Cuu, self.Ud)
        return _effects_quad_rows(self.F, self.group, self.W.indptr, self.W.indices, self.W.data, self.pattern,
                                  quu, np.ascontiguousarray(dd), np.ascontiguousarray(cross), cov)

    def gram_trace_inverse(self, factor: BorderedFactor, R: np.ndarray) -> np.ndarray:
        r""":meth:`gram_trace` with :math:`C=H^{-1}` given by the factor of a bordered H: :math:`R^\top q`, q =
        :meth:`quad_diag_inverse`."""
        R = np.asarray(R, dtype=np.float64)
        R = R[:, None] if R.ndim == 1 else R
        return R.T @ self.quad_diag_inverse(factor)

    def gram_trace(self, C: np.ndarray, R: np.ndarray) -> np.ndarray:
        r""":math:`\mathrm{tr}(C\,X^\top\mathrm{diag}(r_j)X)=\sum_i r_{ij}X_iCX_i^\top` for each column
        :math:`r_j` of R (n, m) and a symmetric C: :math:`R^\top q` with q = :meth:`quad_diag`."""
        R = np.asarray(R, dtype=np.float64)
        R = R[:, None] if R.ndim == 1 else R
        return R.T @ self.quad_diag(C)


@njit(cache=True)
def _rows_match(indptr, indices, data, pattern, first):
    """Is every row of a CSR matrix equal, entry by entry, to the row ``first[pattern[i]]``?"""
    for i in range(len(indptr) - 1):
        f = first[pattern[i]]
        a, b, c = indptr[i], indptr[i + 1], indptr[f]
        if b - a != indptr[f + 1] - c:
            return False
        for e in range(b - a):
            if indices[a + e] != indices[c + e] or data[a + e] != data[c + e]:
                return False
    return True


@njit(cache=True)
def _bern_terms(eta, y, w):
    r"""Per row :math:`w_i(y_i\log\sigma(\eta_i)+(1-y_i)\log\sigma(-\eta_i))`, with one logarithm:
    :math:`\log\sigma(-\eta)=\log\sigma(\eta)-\eta`."""
    out = np.empty(len(eta))
    for i in range(len(eta)):
        x = eta[i]
        le = -np.log1p(np.exp(-x)) if x >= 0.0 else x - np.log1p(np.exp(x))
        out[i] = w[i] * (le - (1.0 - y[i]) * x)
    return out


@njit(cache=True)
def _pattern_gram_upper(indptr, indices, data, vu, use, out):
    """Add :math:`\\sum_c [\\text{use}_c]\\,vu_c\\,U_c^\\top U_c` to the upper triangle of ``out`` (S × S),
    pattern by pattern over its stored entries (sorted column indices)."""
    for c in range(len(indptr) - 1):
        if not use[c] or vu[c] == 0.0:
            continue
        a, b = indptr[c], indptr[c + 1]
        for e in range(a, b):
            i = indices[e]
            x = data[e] * vu[c]
            for f in range(e, b):
                out[i, indices[f]] += x * data[f]


@njit(cache=True)
def _symmetrize_upper(out):
    """Copy the upper triangle of a square matrix to its lower triangle (in place; returns it)."""
    p = out.shape[0]
    for i in range(p):
        for j in range(i + 1, p):
            out[j, i] = out[i, j]
    return out


@njit(cache=True)
def _pattern_quad(indptr, indices, data, C, use):
    """Per pattern c with ``use[c]``: :math:`U_cCU_c^\\top` over its stored entries (C symmetric)."""
    n_u = len(indptr) - 1
    out = np.zeros(n_u)
    for c in range(n_u):
        if not use[c]:
            continue
        a, b = indptr[c], indptr[c + 1]
        s = 0.0
        for e in range(a, b):
            i = indices[e]
            x = data[e]
            t = 0.5 * x * C[i, i]
            for f in range(e + 1, b):
                t += data[f] * C[i, indices[f]]
            s += x * t
        out[c] = 2.0 * s
    return out


@njit(cache=True)
def _effects_gram_border(F, group, indptr, indices, data, v, pattern, G, S, n_u):
    r"""The blocks of :math:`X^\top\mathrm{diag}(v)X` but W–W in bordered form (one pass over the rows): the A–A
    diagonal d (G,), the A rows in the border's columns (G, k + S), the upper triangle of the F–F and F–W
    border blocks ((k + S)², W–W left 0), and v summed per pattern (for W–W)."""
    n, k = F.shape
    d = np.zeros(G)
    cross = np.zeros((G, k + S))
    border = np.zeros((k + S, k + S))
    vu = np.zeros(n_u)
    for i in range(n):
        vi = v[i]
        g = group[i]
        vu[pattern[i]] += vi
        d[g] += vi
        for a in range(k):
            fa = F[i, a] * vi
            for b in range(a, k):
                border[a, b] += fa * F[i, b]
            cross[g, a] += fa
            for e in range(indptr[i], indptr[i + 1]):
                border[a, k + indices[e]] += fa * data[e]
        for e in range(indptr[i], indptr[i + 1]):
            cross[g, k + indices[e]] += vi * data[e]
    return d, cross, border, vu


@njit(cache=True)
def _effects_quad_rows(F, group, indptr, indices, data, pattern, quu, dd, cross, cov):
    r""":math:`X_iH^{-1}X_i^\top` per row from the parts of a bordered :math:`H^{-1}` (border (F, W)): its A
    diagonal ``dd``, A–border rows ``cross`` and border block ``cov``, plus ``quu`` of the row's pattern."""
    n, k = F.shape
    out = np.empty(n)
    for i in range(n):
        g = group[i]
        q = dd[g] + quu[pattern[i]]
        for a in range(k):
            fa = F[i, a]
            t = 0.5 * fa * cov[a, a] + cross[g, a]
            for b in range(a + 1, k):
                t += F[i, b] * cov[a, b]
            q += 2.0 * fa * t
        s = 0.0
        for e in range(indptr[i], indptr[i + 1]):
            j = k + indices[e]
            w = cross[g, j]
            for a in range(k):
                w += F[i, a] * cov[a, j]
            s += data[e] * w
        out[i] = q + 2.0 * s
    return out


@njit(cache=True)
def member_rows(ranks, depth):
    r"""CSR arrays (indptr, indices, data) of the rows :math:`w_{is}=1/|S_i|`, :math:`S_i` the systems s with
    :math:`0<r_{is}\le` ``depth[s]``, from the (n, S) matrix of 1-based ranks r (0: not retrieved); the
    entries of a row in increasing s (:func:`_csr_rows`)."""
    return _csr_rows(ranks, np.zeros(1, dtype=np.int64), np.zeros((1, 1)), depth)


@njit(cache=True)
def platt_sums(sys, x, y, w, s, S):
    r"""Per system j, the sums over its rows i of :math:`r_i`, :math:`r_ix_i`, :math:`v_i`, :math:`v_ix_i`,
    :math:`v_ix_i^2` with :math:`r_i=w_i(y_i-s_i)`, :math:`v_i=w_is_i(1-s_i)` (the score and negative Hessian
    of per-system logistic regressions on one input x), in one pass: the same products added in the same
    order as ``np.bincount`` over the rows, so the sums are bit-identical to five bincounts."""
    sr, srx, sv, svx, svxx = np.zeros(S), np.zeros(S), np.zeros(S), np.zeros(S), np.zeros(S)
    for i in range(len(sys)):
        j = sys[i]
        r = w[i] * (y[i] - s[i])
        v = w[i] * s[i] * (1 - s[i])
        vx = v * x[i]
        sr[j] += r
        srx[j] += r * x[i]
        sv[j] += v
        svx[j] += vx
        svxx[j] += vx * x[i]
    return sr, srx, sv, svx, svxx


def _as_design(X):
    if isinstance(X, (DenseDesign, EffectsDesign, OffsetSparseDesign, SparseDesign)):
        return X
    return DenseDesign(np.asarray(X, dtype=np.float64))


@dataclass(frozen=True)
class NewtonResult:
    """The mode, the negative Hessian of the log posterior there, its value and convergence."""

    x: np.ndarray
    neg_hessian: np.ndarray
    logpost: float
    n_iter: int
    converged: bool


def _bern(eta: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
    return float(np.sum(w * (y * log_expit(eta) + (1.0 - y) * log_expit(-eta))))


def logistic_logpost(beta, X, y, w, prior: CoefPrior, offset=None) -> float:
    """Log posterior (up to a constant) of a weighted logistic regression with fractional targets.

    ``X`` is an array (n, p) or a design object (:class:`DenseDesign`, :class:`OffsetSparseDesign`)."""
    eta = _as_design(X).dot(beta)
    if offset is not None:
        eta = eta + offset
    return _bern(eta, y, w) + prior.logp(beta)


def _halving(logpost, x, lp, g, step, tol):
    """The Newton step ``step`` from ``x`` halved until the log posterior does not fall (below 1e-12 relative)
    or the step is below 1e-10 of it, and whether it ends the iteration (the decrement :math:`g^\\top` ``step``
    or the step taken below ``tol``): (x_new, logpost(x_new), t, converged)."""
    t = 1.0
    while True:
        x_new = x + t * step
        lp_new = logpost(x_new)
        if lp_new >= lp - 1e-12 * max(1.0, abs(lp)) or t < 1e-10:
            break
        t *= 0.5
    dec = float(g @ step)
    return x_new, lp_new, t, bool(dec < tol or np.max(np.abs(t * step)) < tol)


def _newton(f_grad_hess, x0, logpost, max_iter, tol):
    x = np.array(x0, dtype=np.float64)
    lp = logpost(x)
    converged = False
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007
        g, H = f_grad_hess(x)  # H = negative Hessian (positive definite)
        try:
            step = np.linalg.solve(H, g)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(H, g, rcond=None)[0]
        x, lp, _, converged = _halving(logpost, x, lp, g, step, tol)
        if converged:
            break
    _, H = f_grad_hess(x)
    return NewtonResult(x, H, lp, it, converged)


def _chord(grad, x, chol, tol, max_iter):
    """Simplified Newton: x ← x + H0⁻¹ g(x) with one fixed Cholesky factor of a nearby negative Hessian
    (:func:`~bayeval.relevance._bordered.cholesky`). Returns (x, converged, iterations); stops unconverged as
    soon as the decrement gᵀH0⁻¹g fails to shrink fourfold per step (H0 too far from the Hessian at the mode)."""
    prev = np.inf
    for it in range(1, max_iter + 1):
        g = grad(x)
        step = chol.solve(g)
        dec = float(g @ step)
        if not np.isfinite(dec) or dec > 0.25 * prev:
            return x, False, it
        x = x + step
        if dec < tol:
            return x, True, it
        prev = dec
    return x, False, max_iter


def _newton_lagged(gh, x0, logpost, max_iter, tol):
    """Newton with step halving whose Cholesky factor is kept after each full step: simplified steps with it
    (:func:`_chord`) while they contract fourfold, a new Hessian only where they stop contracting (Shamanskii's
    method). Stops at a Newton decrement below ``tol`` or a simplified one below ``tol``·1e-4. H may be dense or
    bordered (:mod:`bayeval.relevance._bordered`)."""
    x = np.array(x0, dtype=np.float64)
    lp = logpost(x)
    converged = False
    it = 0
    while it < max_iter:
        it += 1
        g, H = gh(x)
        try:
            chol = cholesky(H)
            step = chol.solve(g)
        except np.linalg.LinAlgError:
            chol, step = None, np.linalg.lstsq(np.asarray(H), g, rcond=None)[0]
        x, lp, t, converged = _halving(logpost, x, lp, g, step, tol)
        if converged:
            break
        if t == 1.0 and chol is not None and it < max_iter:
            xc, done, k = _chord(lambda b: gh(b, False), x, chol, tol * 1e-4, max_iter - it)
            it += k
            if np.all(np.isfinite(xc)):
                lpc = logpost(xc)
                if done or lpc >= lp:
                    x, lp = xc, lpc
            if done:
                converged = True
                break
    _, H = gh(x)
    return NewtonResult(x, H, lp, it, converged)


def logistic_newton(X, y, w, prior: CoefPrior, *, offset=None, x0=None, max_iter: int = 100,
                    tol: float = 1e-12, h0=None, lagged: bool = False) -> NewtonResult:
    r"""Mode of a weighted logistic log posterior by Newton's method (IRLS) with step halving.

    Parameters
    ----------
    X : ndarray (n, p), DenseDesign or OffsetSparseDesign
    y : ndarray (n,)
        Targets in [0, 1] (fractional targets allowed).
    w : ndarray (n,)
        Row weights (counts).
    prior : CoefPrior
    offset : ndarray (n,), optional
    h0 : DenseFactor or BorderedFactor, optional
        :func:`~bayeval.relevance._bordered.cholesky` of the negative Hessian at a nearby point (e.g. the mode of
        a neighbouring problem): simplified Newton steps :math:`x\leftarrow x+H_0^{-1}g(x)` come first (no
        Gram matrix, :math:`O(\mathrm{nnz})` each) while they contract, to a decrement below
        ``tol``·1e-4; full Newton steps take over where they do not.
    lagged : bool
        Keep each full Newton step's Cholesky factor for simplified steps while they contract (Shamanskii's
        method): fewer Gram matrices where one costs much more than a gradient. The mode is the same to
        the tolerance, not to the last bit.

    Notes
    -----
    Gradient :math:`X^\top w(y-\sigma(\eta)) + \nabla\log p(\beta)`, negative Hessian
    :math:`X^\top \mathrm{diag}(w\sigma(1-\sigma))X + \mathrm{diag}(\tau + (a+b)\sigma(\beta)(1-\sigma(\beta)))`.
    The log posterior is concave, so the mode is unique when the negative Hessian is definite. The linear
    predictor of the last point is kept, so that the log posterior and the gradient there share it.
    """
    X = _as_design(X)
    p = X.shape[1]
    last = [None, None]  # the last point and its linear predictor
    fast_bern = isinstance(X, EffectsDesign)  # its likelihood by one numba pass (one logarithm per row)

    def linear(beta):
        if beta is not last[0]:
            eta = X.dot(beta)
            last[:] = beta, (eta if offset is None else eta + offset)
        return last[1]

    def gh(beta, hessian=True):
        s = expit(linear(beta))
        g = X.rdot(w * (y - s)) + prior.grad(beta)
        if not hessian:
            return g
        return g, plus_diagonal(X.gram(w * s * (1.0 - s)), prior.neg_hess_diag(beta))

    def logpost(b):
        if fast_bern:
            return float(np.sum(_bern_terms(linear(b), y, w))) + prior.logp(b)
        return _bern(linear(b), y, w) + prior.logp(b)

    x = np.zeros(p) if x0 is None else np.asarray(x0, dtype=np.float64)
    solve = _newton_lagged if lagged else _newton
    if h0 is not None:
        xc, done, it = _chord(lambda b: gh(b, False), x, h0, tol * 1e-4, max_iter)
        if done:
            return NewtonResult(xc, gh(xc)[1], logpost(xc), it, True)
        if np.all(np.isfinite(xc)) and logpost(xc) >= logpost(x):
            x = xc
    return solve(gh, x, logpost, max_iter, tol)


def bt_logpost(theta, wins, prior: CoefPrior) -> float:
    """Bradley–Terry log posterior: :math:`\\sum_{a,b} W_{ab}\\log\\sigma(\\theta_a-\\theta_b)` + prior."""
    d = theta[:, None] - theta[None, :]
    return float(np.sum(wins * log_expit(d))) + prior.logp(theta)


def bt_newton(wins, prior: CoefPrior, *, x0=None, max_iter: int = 100, tol: float = 1e-12) -> NewtonResult:
    r"""Mode of a Bradley–Terry log posterior with win-count matrix ``wins`` (K, K).

    Notes
    -----
    With :math:`P_{ab}=\sigma(\theta_a-\theta_b)`: gradient
    :math:`\sum_b W_{ab} - \sum_b (W_{ab}+W_{ba})P_{ab}`; negative Hessian
    :math:`\mathrm{diag}(M\mathbf 1) - M`, :math:`M=(W+W^\top)\circ P\circ(1-P)` (a graph Laplacian),
    plus the prior's diagonal. O(K²) per iteration.
    """
    wins = np.asarray(wins, dtype=np.float64)
    K = wins.shape[0]
    tot = wins + wins.T
    rs = wins.sum(axis=1)

    def gh(theta):
        P = expit(theta[:, None] - theta[None, :])
        g = rs - np.sum(tot * P, axis=1) + prior.grad(theta)
        M = tot * P * (1.0 - P)
        H = -M
        H[np.diag_indices(K)] += M.sum(axis=1) + prior.neg_hess_diag(theta)
        return g, H

    return _newton(gh, np.zeros(K) if x0 is None else x0, lambda t: bt_logpost(t, wins, prior), max_iter, tol)


def _same_problems(wins, a, b, x0) -> tuple[np.ndarray, np.ndarray] | None:
    """``(first, inverse)`` when topics repeat one another's problem exactly (wins, prior and start): topic t is
    topic ``first[inverse[t]]``; None when every topic is its own (or a hash collision hides one)."""
    T = wins.shape[0]
    rng = np.random.default_rng(20070723)
    parts = (wins.reshape(T, -1), a.reshape(T, -1), b.reshape(T, -1), x0.reshape(T, -1))
    key = sum(p @ rng.random(p.shape[1]) for p in parts)  # equal problems, equal keys (same sums, same order)
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    if len(first) == T:
        return None
    rep = first[inverse.reshape(-1)]
    for lo in range(0, T, 256):  # different problems with one key: found here, and then none is shared
        c = slice(lo, lo + 256)
        if not all(np.array_equal(p[c], p[rep[c]]) for p in parts):
            return None  # pragma: no cover - a collision of random float keys
    return first, inverse.reshape(-1)


def bt_newton_batch(wins, a, b, *, x0=None, max_iter: int = 100, tol: float = 1e-12):
    r""":func:`bt_newton` for T independent topics at once (batched LAPACK solves).

    Parameters
    ----------
    wins : ndarray (T, K, K)
    a, b : ndarray (T,) or (T, K)
        Beta(a_t, b_t) prior on every :math:`\sigma(\theta_{t,r})`, or one per (topic, position).

    Returns
    -------
    theta : ndarray (T, K)
    neg_hessian : ndarray (T, K, K)
    logpost : ndarray (T,)
    n_iter : int
    converged : bool

    Notes
    -----
    Topics whose problem is the same (the same wins, prior and start: at MS MARCO scale, every query whose
    runs return full lists and whose judgments count alike) are solved once: each topic's Newton iteration is
    its own, so the shared solution is the one it would reach alone, to the last bit.
    """
    wins = np.asarray(wins, dtype=np.float64)
    T, K, _ = wins.shape
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    x0 = np.zeros((T, K)) if x0 is None else np.asarray(x0, dtype=np.float64)
    same = _same_problems(wins, a, b, x0) if T > 1 else None
    if same is not None:
        first, inverse = same
        theta, H, lp, it, ok = _bt_newton_topics(wins[first], a[first], b[first], x0[first], max_iter, tol)
        return theta[inverse], H[inverse], lp[inverse], it, ok
    return _bt_newton_topics(wins, a, b, x0, max_iter, tol)


def _bt_newton_topics(wins, a, b, x0, max_iter: int, tol: float):
    """:func:`bt_newton_batch` on every topic given."""
    T, K, _ = wins.shape
    tot = wins + np.swapaxes(wins, 1, 2)
    rs = wins.sum(axis=2)
    a = a[:, None] if a.ndim == 1 else a
    b = b[:, None] if b.ndim == 1 else b
    diag = np.arange(K)

    def lp(theta, k=slice(None)):  # topics k only (a converged topic's value does not change)
        d = theta[:, :, None] - theta[:, None, :]
        ak, bk = a[k], b[k]
        return (np.sum(wins[k] * log_expit(d), axis=(1, 2))
                + np.sum(ak * log_expit(theta) + bk * log_expit(-theta), axis=1))

    def gh(theta, k=slice(None)):
        P = expit(theta[:, :, None] - theta[:, None, :])
        s = expit(theta)
        ak, bk = a[k], b[k]
        g = rs[k] - np.sum(tot[k] * P, axis=2) + ak - (ak + bk) * s
        M = tot[k] * P * (1.0 - P)
        H = -M
        H[:, diag, diag] += M.sum(axis=2) + (ak + bk) * s * (1.0 - s)
        return g, H

    theta = np.array(x0, dtype=np.float64)
    cur = lp(theta)
    active = np.ones(T, bool)
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007
        k = np.flatnonzero(active)  # the topics still moving: a converged topic takes no more steps
        g, H = gh(theta[k], k)
        step = np.linalg.solve(H, g[..., None])[..., 0]
        dec = np.sum(g * step, axis=1)
        t = np.ones(len(k))
        th = theta[k]
        ck = cur[k]
        for _ in range(60):
            new = lp(th + t[:, None] * step, k)
            bad = ~(new >= ck - 1e-12 * np.maximum(1.0, np.abs(ck)))  # NaN is bad too
            if not bad.any():
                break
            t[bad] *= 0.5
        theta[k] = th + t[:, None] * step
        cur[k] = new
        active[k] = ~((dec < tol) | (np.max(np.abs(t[:, None] * step), axis=1) < tol))
        if not active.any():
            break
    _, H = gh(theta)
    return theta, H, cur, it, not active.any()
