r"""A relevance model for sparse labels: one judged relevant document per topic, drawn from its relevant ones.

A sparse-label set (an MS MARCO-style dev set) judges about one relevant document per topic and nothing
nonrelevant, so no model fitted to the labels alone can learn how rare relevant documents are (docs/sparse-
labels.md). This model gets that rate from *how the labels were sampled* instead.

Derivation
----------
Topic :math:`t` has :math:`R_t\ge 1` relevant documents; the judged one, :math:`j_t`, is one of them chosen
uniformly. For run :math:`s` and rank :math:`r` let :math:`J_{tsr}=1\{j_t \text{ at rank } r \text{ of } s\}` and
:math:`Y_{tsr}=1\{\text{rank-}r\text{ document of } s \text{ relevant}\}`. Given the relevant set,

.. math:: E[J_{tsr}] = Y_{tsr}/R_t \quad\Longrightarrow\quad E\Big[\sum_t R_t J_{tsr}\Big] = \sum_t Y_{tsr},

so :math:`\sum_t R_tJ_{tsr}` is an unbiased estimate of the number of relevant documents run :math:`s` puts at
rank :math:`r` (:func:`rank_bin_counts` with ``weights`` :math:`R_t`). Ranks are pooled into bins :math:`b`
(``bin_edges``); with :math:`n_{sb}` the positions of bin :math:`b` filled by run :math:`s` over all topics and
:math:`c_{sb}=\sum_t\sum_{r\in b}J_{tsr}` the judged documents among them, the relevance rate of the bin is

.. math:: \rho_{sb} = \frac{\sum_t R_t \sum_{r\in b} J_{tsr}}{n_{sb}} \approx \bar R\,\theta_{sb},
   \qquad \theta_{sb} = c_{sb}/n_{sb},

where :math:`\bar R` replaces each :math:`R_t` (unknown on sparse labels) by the mean of its prior.

*Prior on* :math:`R_t`. :math:`\bar R - 1 \sim \mathrm{Gamma}(k, (\mu-1)/k)` (``relevant_mean`` :math:`\mu`,
``relevant_shape`` :math:`k`), so :math:`\bar R\ge 1` with mean :math:`\mu` and coefficient of variation
:math:`(1-1/\mu)/\sqrt k`. :math:`\bar R = 1` (every topic has only its judged relevant document) gives
:math:`p=0` for every unjudged document: trec_eval on the sparse labels.

*Shrinkage across runs* (Beta-binomial per bin). A position of bin :math:`b` of run :math:`s` holds the judged
document with probability :math:`\theta_{sb}\sim\mathrm{Beta}(\kappa\bar n_b\pi_b,\ \kappa\bar n_b(1-\pi_b))`,
centred on the pooled share :math:`\pi_b=\sum_s c_{sb}/\sum_s n_{sb}` with the strength of :math:`\kappa`
(``pooling``) times a run's mean positions :math:`\bar n_b`; the posterior is
:math:`\mathrm{Beta}(c_{sb}+\kappa\bar n_b\pi_b,\ n_{sb}-c_{sb}+\kappa\bar n_b(1-\pi_b))`.

*Unjudged documents.* In bin :math:`b` of run :math:`s` a share :math:`h_{sb}=\theta_{sb}` of the positions holds
a judged (relevant) document, so the unjudged ones are relevant at the rate

.. math:: p_{sb} = \operatorname{clip}\Big(\frac{\bar R\,\theta_{sb} - \theta_{sb}}{1-\theta_{sb}},\ 0,\ 1\Big)
   = \operatorname{clip}\Big(\frac{(\bar R-1)\,\theta_{sb}}{1-\theta_{sb}},\ 0,\ 1\Big),

and an unjudged document gets the mean of :math:`p_{s,b(r_s)}` over the runs :math:`s` that retrieve it
(at rank :math:`r_s`); a document no run retrieves gets 0. Judged documents get the same formula (their labels
replace it downstream).

*Combine* (``combine="projected"``). The mean does not keep the cells' rates: a document a good run ranks high is
shared with weaker runs, whose lower rates pull its p down, so the mean p over the good run's cell falls below
:math:`p_{sb}` and the better runs' expected measures are compressed (docs/sparse-labels.md). The projected
combination replaces the mean :math:`p^0_d` by the closest p (Kullback–Leibler, document by document) under
which every cell's unjudged positions hold their expected relevant count
:math:`\sum_{d} X_{d,sb}\,p_d = n^{u}_{sb}\,p_{sb}` (:math:`n^u_{sb}` unjudged positions), and, with
``vote_classes``, every vote class :math:`v` (documents retrieved by :math:`2^v` to :math:`2^{v+1}-1` runs, pooled
over topics) holds :math:`(N_v-c_v)\,\operatorname{clip}((\bar R-1)\theta_v/(1-\theta_v),0,1)`, with
:math:`\theta_v\sim\mathrm{Beta}(c_v+\kappa\bar N\pi,\ N_v-c_v+\kappa\bar N(1-\pi))` from its :math:`N_v`
documents, :math:`c_v` of them judged (:math:`\pi` the share over all classes, :math:`\bar N` the mean class
size). The solution is :math:`p_d=\sigma(\operatorname{logit}p^0_d+\sum_c X_{dc}\beta_c)`
(:func:`~bayeval.relevance.cell_projection.project_onto_cells`, ridge ``projection_ridge``), fitted at the
posterior mean. Each draw then takes ``projection_draw_steps`` chord steps towards its own projection
(:func:`~bayeval.relevance.cell_projection.refine_draws`).

*Posterior draws.* Draw :math:`d` draws :math:`\bar R^{(d)}` from its prior and every :math:`\theta^{(d)}_{sb}`
from its Beta posterior; the same draw holds in every topic (the rate is shared), which is what the moment
methods of :mod:`bayeval.expected` expect. The point p is the posterior mean of p. With
``share_draws="topics"`` the cells' shares are drawn jointly instead: one Bayesian-bootstrap weight per topic
reweights every cell's and vote class's counts (:func:`shared_shares`), because a topic's judged document is
counted by every run that retrieves it, so the runs' rates err together and partly cancel in a difference.

*Consensus weights* (``consensus_power`` :math:`\alpha`, off by default). :math:`\bar R` standing for every
:math:`R_t` makes a cell's rate :math:`\bar R\sum_t Y_{tsb}/R_t` where the truth is :math:`\sum_t Y_{tsb}`,
too high for runs whose relevant documents lie in topics with few of them. With :math:`\alpha>0` each topic's
judged document weighs :math:`w_t\propto m_t^{-\alpha}` in every count (:math:`m_t` runs retrieve it;
:func:`consensus_weights`), so that :math:`\bar R w_t` stands for :math:`R_t`.

Everything is vectorised over topics: the runs' lists of all topics are laid end to end once and the counts,
cells are ``bincount`` calls and the document means one sparse product.

References
----------
Rubin (1981), *The Bayesian bootstrap*, Ann. Stat. 9 (the topic weights);
Carterette, Allan & Sitaraman (2006), *Minimal test collections for retrieval evaluation* (p of unjudged
documents for expected measures); Aslam, Pavlu & Yilmaz (2006), *A statistical method for system evaluation
using incomplete judgments* (estimates from sampled judgments weighted by their inclusion probabilities, here
:math:`1/R_t`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError
from bayeval.relevance.cell_projection import project_onto_cells, refine_draws
from bayeval.relevance.results import RelevanceEstimate

__all__ = ["RankLayout", "SparseLabelModel", "consensus_weights", "rank_bin_counts", "rank_layout",
           "sparse_label_probabilities", "vote_class"]


@dataclass(frozen=True, eq=False)
class RankLayout:
    """Every run's list of every topic, laid end to end (the vectorised view the model counts on).

    Attributes
    ----------
    n_systems, n_topics, n_docs : int
        Systems, topics, and documents over all topics.
    offsets : ndarray of int64, shape (T + 1,)
        Topic ``t``'s documents are ``offsets[t]:offsets[t+1]`` of the global document index.
    system, rank, doc, topic : ndarray of int64, shape (P,)
        For every filled position (P of them): its run, 0-based rank, global document and topic.
    judged_relevant : ndarray of bool, shape (n_docs,)
    """

    n_systems: int
    n_topics: int
    n_docs: int
    offsets: np.ndarray
    system: np.ndarray
    rank: np.ndarray
    doc: np.ndarray
    topic: np.ndarray
    judged_relevant: np.ndarray


def rank_layout(data: RankData) -> RankLayout:
    """The :class:`RankLayout` of ``data`` (one concatenation per topic, no per-position Python)."""
    if not isinstance(data, RankData):
        raise BayevalInputError(f"data: expected a RankData, got {type(data).__name__}")
    sizes = np.array([tr.n_docs for tr in data], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    ranked = [tr.ranked for tr in data]
    widths = np.array([r.shape[1] for r in ranked], dtype=np.int64)
    n_sys = len(data.systems)
    flat = np.concatenate([r.astype(np.int64) for r in ranked], axis=1) if ranked else np.zeros((n_sys, 0), np.int64)
    col_topic = np.repeat(np.arange(len(widths)), widths)
    col_rank = np.arange(flat.shape[1]) - np.repeat(np.cumsum(widths) - widths, widths)
    filled = flat >= 0
    s_idx, c_idx = np.nonzero(filled)
    topic = col_topic[c_idx]
    rel = np.concatenate([np.asarray(tr.relevant) for tr in data]) if len(data) else np.zeros(0, bool)
    return RankLayout(n_sys, len(widths), int(offsets[-1]), offsets, s_idx.astype(np.int64), col_rank[c_idx],
                      flat[s_idx, c_idx] + offsets[topic], topic, rel.astype(bool))


def _bins(rank: np.ndarray, bin_edges) -> np.ndarray:
    """0-based bin of each 0-based rank: bin ``k`` holds ranks ``bin_edges[k] .. bin_edges[k+1]-1`` (1-based)."""
    return np.searchsorted(np.asarray(bin_edges, dtype=np.int64) - 1, rank, side="right") - 1


def rank_bin_counts(layout: RankLayout, bin_edges, weights=None) -> tuple[np.ndarray, np.ndarray]:
    r"""Per run and rank bin: positions filled :math:`n_{sb}` and weighted judged-relevant documents.

    Parameters
    ----------
    layout : RankLayout
    bin_edges : sequence of int
        First 1-based rank of each bin, starting at 1; the last bin runs to the end of the lists.
    weights : array_like, shape (T,), optional
        Per topic weight of its judged relevant documents: :math:`R_t` gives the unbiased estimate
        :math:`\sum_t R_t\sum_{r\in b}J_{tsr}` of the relevant documents in the bin (module notes); default 1
        (the count :math:`c_{sb}`).

    Returns
    -------
    n, c : ndarray, shape (S, B)
    """
    edges = np.asarray(bin_edges, dtype=np.int64)
    if edges.ndim != 1 or len(edges) == 0 or edges[0] != 1 or np.any(np.diff(edges) <= 0):
        raise BayevalInputError(f"bin_edges: must start at 1 and increase strictly, got {list(bin_edges)!r}")
    n_bins = len(edges)
    cell = layout.system * n_bins + _bins(layout.rank, edges)
    size = layout.n_systems * n_bins
    n = np.bincount(cell, minlength=size).astype(np.float64)
    hit = layout.judged_relevant[layout.doc]
    w = np.ones(layout.n_topics) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (layout.n_topics,):
        raise BayevalInputError(f"weights: expected one per topic ({layout.n_topics}), got shape {w.shape}")
    c = np.bincount(cell[hit], weights=w[layout.topic[hit]], minlength=size)
    return n.reshape(layout.n_systems, n_bins), c.reshape(layout.n_systems, n_bins)


@dataclass(frozen=True)
class SparseLabelModel:
    r"""The posterior of the bins' judged shares :math:`\theta_{sb}` and of :math:`\bar R` (module notes).

    Attributes
    ----------
    a, b : ndarray, shape (S, B)
        Beta posterior of :math:`\theta_{sb}`.
    relevant_mean, relevant_shape : float
        Prior of :math:`\bar R`.
    bin_edges : tuple of int
    """

    a: np.ndarray
    b: np.ndarray
    relevant_mean: float
    relevant_shape: float
    bin_edges: tuple

    @classmethod
    def fit(cls, layout: RankLayout, *, relevant_mean: float, relevant_shape: float, bin_edges,
            pooling: float, weights=None) -> SparseLabelModel:
        """The posterior from ``layout``'s counts; ``weights`` (one per topic, :func:`consensus_weights`)
        weight each judged document in :math:`c_{sb}` (default 1)."""
        n, c = rank_bin_counts(layout, bin_edges, weights=weights)
        pooled = c.sum(axis=0) / np.maximum(n.sum(axis=0), 1.0)
        strength = pooling * n.mean(axis=0)
        a = c + strength * pooled
        b = n - c + strength * (1.0 - pooled)
        tiny = 1e-9  # an empty bin (no positions in any run) keeps a proper Beta
        return cls(np.maximum(a, tiny), np.maximum(b, tiny), float(relevant_mean), float(relevant_shape),
                   tuple(int(e) for e in bin_edges))

    def unjudged_rate(self, theta: np.ndarray, rbar) -> np.ndarray:
        r""":math:`\operatorname{clip}((\bar R-1)\theta/(1-\theta), 0, 1)`, broadcast over leading draw axes."""
        rbar = np.asarray(rbar, dtype=np.float64).reshape(np.shape(rbar) + (1,) * 2)
        with np.errstate(divide="ignore", invalid="ignore"):
            p = (rbar - 1.0) * theta / (1.0 - theta)
        return np.clip(np.nan_to_num(p, nan=1.0, posinf=1.0), 0.0, 1.0)

    def draw_parts(self, n_draws: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``n_draws`` posterior draws of every :math:`\\theta_{sb}`, shape ``(n_draws, S, B)``, and of
        :math:`\\bar R`, shape ``(n_draws,)``."""
        theta = rng.beta(self.a, self.b, size=(n_draws, *self.a.shape))
        k, mu = self.relevant_shape, self.relevant_mean
        rbar = 1.0 + (rng.gamma(k, (mu - 1.0) / k, size=n_draws) if mu > 1.0 else np.zeros(n_draws))
        return theta, rbar

    def draw(self, n_draws: int, rng: np.random.Generator) -> np.ndarray:
        """``n_draws`` posterior draws of the unjudged rate of every cell, shape ``(n_draws, S, B)``."""
        return self.unjudged_rate(*self.draw_parts(n_draws, rng))


def _doc_means(layout: RankLayout, cell: np.ndarray, n_cells: int, rates: np.ndarray) -> np.ndarray:
    """Mean over the runs retrieving each document of its cell's rate; ``rates`` (..., cells) → (..., n_docs).

    One sparse (documents × cells) averaging matrix, so draws cost a sparse product, not a copy per position.
    """
    count = np.bincount(layout.doc, minlength=layout.n_docs).astype(np.float64)
    inv = np.where(count > 0, 1.0 / np.maximum(count, 1.0), 0.0)
    avg = sparse.csr_matrix((inv[layout.doc], (layout.doc, cell)), shape=(layout.n_docs, n_cells))  # sums dups
    return np.asarray((avg @ np.atleast_2d(rates).T).T).reshape(*rates.shape[:-1], layout.n_docs)


def vote_class(count: np.ndarray) -> np.ndarray:
    r"""Vote class of a document retrieved by ``count`` >= 1 runs: :math:`\lfloor\log_2 \text{count}\rfloor`
    (1, 2–3, 4–7, 8–15, … runs).

    Examples
    --------
    >>> vote_class(np.array([1, 2, 3, 4, 7, 8, 17])).tolist()
    [0, 1, 1, 2, 2, 3, 4]
    """
    return np.floor(np.log2(np.maximum(np.asarray(count), 1))).astype(np.int64)


def consensus_weights(layout: RankLayout, power: float) -> np.ndarray | None:
    r"""Weight of each topic's judged documents in the counts: :math:`w_t\propto m_t^{-\alpha}`.

    :math:`m_t` is the number of positions (runs) holding topic :math:`t`'s judged relevant document, and
    :math:`\alpha` = ``power``. Why: the counts estimate :math:`\sum_t Y_{tsb}/R_t`, and :math:`\bar R` replaces
    every :math:`R_t`, so a cell's rate is :math:`\bar R\,\sum_t Y_{tsb}/R_t` where the truth is
    :math:`\sum_t Y_{tsb}`: too high for a run whose relevant documents lie in topics with few relevant
    documents, where :math:`1/R_t` is large. Those are the topics every run agrees on, so weak runs, which find
    little else, are over-credited. Since :math:`E[m_t]=\sum_s Y_{ts}/R_t`, :math:`1/m_t` is a moment estimate of
    :math:`R_t` (up to the topic's retrieved relevant count, taken as equal across topics); it rests on one
    judged document per topic, so :math:`\alpha<1` shrinks it towards equal weights (:math:`\alpha=0`).
    The weights are scaled to mean 1 over the topics whose judged document some run retrieves (the others add
    nothing to any count), so :math:`\bar R\,w_t` stands for :math:`R_t` with mean :math:`\bar R` over topics.

    Returns
    -------
    ndarray, shape (T,), or None when ``power`` is 0

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=6, n_systems=4, n_docs=40, depth=20, judged_depth=2, seed=3)
    >>> lay = rank_layout(RankData.build(col.runs, col.judgments))
    >>> w = consensus_weights(lay, 0.5)
    >>> seen = np.unique(lay.topic[lay.judged_relevant[lay.doc]])
    >>> bool(np.isclose(w[seen].mean(), 1.0))
    True
    """
    if not (isinstance(power, (int, float)) and np.isfinite(power) and power >= 0):
        raise BayevalInputError(f"consensus_power: must be a non-negative number, got {power!r}")
    if power == 0:
        return None
    hit = layout.judged_relevant[layout.doc]
    m = np.bincount(layout.topic[hit], minlength=layout.n_topics).astype(np.float64)
    w = np.where(m > 0, np.maximum(m, 1.0) ** -float(power), 0.0)
    return w / w[m > 0].mean() if np.any(m > 0) else w


def topic_weights(n_topics: int, n_draws: int, rng: np.random.Generator) -> np.ndarray:
    r"""Bayesian-bootstrap weights of the topics, shape ``(n_draws, T)``: :math:`w = T\,g/\sum g`,
    :math:`g_t\sim\mathrm{Exp}(1)` (Rubin 1981), i.e. :math:`T` times a flat Dirichlet; each row has mean 1."""
    g = rng.standard_exponential(size=(n_draws, n_topics))
    return n_topics * g / np.maximum(g.sum(axis=1, keepdims=True), 1e-300)


def shared_shares(key: np.ndarray, hit: np.ndarray, n_groups: int, n_cols: int, group: np.ndarray,
                  weights: np.ndarray, pooling: float, pool_by: np.ndarray | None = None,
                  hit_weights: np.ndarray | None = None) -> np.ndarray:
    r"""Judged shares of many cells drawn *jointly*: each topic's counts reweighted by the same bootstrap weight.

    Item :math:`i` (a position or a document) of topic :math:`t_i` falls in column :math:`k_i`; with topic
    weights :math:`w^{(d)}_t` (:func:`topic_weights`) the column's weighted positions and judged ones are
    :math:`n^{(d)}_k=\sum_t w^{(d)}_t n_{tk}`, :math:`c^{(d)}_k=\sum_t w^{(d)}_t c_{tk}`, and its share is the
    mean of the Beta posterior of the module notes at those counts,

    .. math:: \theta^{(d)}_k = \frac{c^{(d)}_k + \kappa\bar n^{(d)}\pi^{(d)}}{n^{(d)}_k + \kappa\bar n^{(d)}},

    with :math:`\pi^{(d)}, \bar n^{(d)}` the pooled share and mean size of the columns sharing its pool
    (``pool_by``; one pool when ``None``). A topic's judged document counts in every cell (and vote class) that
    holds it, so one weight per topic moves all those cells together: two runs that share their judged
    documents get rates that move together, which independent Beta draws per cell do not (the difference of
    two runs' rates is then as uncertain as if they shared nothing).

    Parameters
    ----------
    key : ndarray of int, shape (P,)
        Column of each item.
    hit : ndarray of bool, shape (P,)
        Whether the item is the judged relevant document.
    n_groups, n_cols : int
        Topics and columns.
    group : ndarray of int, shape (P,)
        Topic of each item.
    weights : ndarray, shape (n_draws, n_groups)
    pooling : float
        :math:`\kappa`.
    pool_by : ndarray of int, shape (n_cols,), optional
        Pool of each column (e.g. the rank bin of a run-and-bin cell).
    hit_weights : ndarray, shape (n_groups,), optional
        Weight of each topic's judged documents in :math:`c_{tk}` (:func:`consensus_weights`; default 1).

    Returns
    -------
    ndarray, shape (n_draws, n_cols)
    """
    flat = group * n_cols + key
    n_t = np.bincount(flat, minlength=n_groups * n_cols).reshape(n_groups, n_cols).astype(np.float64)
    hw = None if hit_weights is None else np.asarray(hit_weights, dtype=np.float64)[group[hit]]
    c_t = np.bincount(flat[hit], weights=hw, minlength=n_groups * n_cols).reshape(n_groups, n_cols)
    n_w, c_w = weights @ n_t, weights @ c_t  # (D, n_cols)
    pools = np.zeros(n_cols, dtype=np.int64) if pool_by is None else np.asarray(pool_by, dtype=np.int64)
    n_pools = int(pools.max()) + 1 if n_cols else 1
    members = np.bincount(pools, minlength=n_pools).astype(np.float64)
    n_pool = np.stack([np.bincount(pools, weights=r, minlength=n_pools) for r in n_w])
    c_pool = np.stack([np.bincount(pools, weights=r, minlength=n_pools) for r in c_w])
    pooled = (c_pool / np.maximum(n_pool, 1e-300))[:, pools]
    strength = (pooling * n_pool / np.maximum(members, 1.0))[:, pools]
    tiny = 1e-9
    a = np.maximum(c_w + strength * pooled, tiny)
    b = np.maximum(n_w - c_w + strength * (1.0 - pooled), tiny)
    return a / (a + b)


def _draw_shares(layout: RankLayout, fit: SparseLabelModel, cell: np.ndarray, n_draws: int,
                 rng: np.random.Generator, *, pooling: float, share_draws: str, hit_weights=None):
    """Draws of every cell's :math:`\theta` ``(n_draws, S, B)`` and of :math:`\bar R`, and the topic weights
    (``None`` with ``share_draws="cells"``: each cell's Beta posterior drawn on its own)."""
    theta, rbar = fit.draw_parts(n_draws, rng)
    if share_draws == "cells":
        return theta, rbar, None
    n_bins = len(fit.bin_edges)
    weights = topic_weights(layout.n_topics, n_draws, rng)
    theta = shared_shares(cell, layout.judged_relevant[layout.doc], layout.n_topics, fit.a.size, layout.topic,
                          weights, pooling, pool_by=np.arange(fit.a.size) % n_bins, hit_weights=hit_weights)
    return theta.reshape(n_draws, *fit.a.shape), rbar, weights


def _projected_draws(layout: RankLayout, fit: SparseLabelModel, cell: np.ndarray, n_draws: int,
                     rng: np.random.Generator, *, vote_classes: bool, pooling: float, ridge: float,
                     point: bool, draw_steps: int, share_draws: str = "cells", hit_weights=None) -> np.ndarray:
    """p of every document by the projection of the cells' mean onto their counts (module notes, *Combine*);
    ``(n_draws, n_docs)``, or ``(1, n_docs)``: the projection of the posterior-mean problem when ``point``."""
    n_cells = fit.a.size
    theta, rbar, weights = _draw_shares(layout, fit, cell, n_draws, rng, pooling=pooling, share_draws=share_draws,
                                        hit_weights=hit_weights)
    rates = fit.unjudged_rate(theta, rbar).reshape(n_draws, n_cells)
    count = np.bincount(layout.doc, minlength=layout.n_docs)
    unj_pos = ~layout.judged_relevant[layout.doc]
    rows = np.flatnonzero((count > 0) & ~layout.judged_relevant)  # the unjudged retrieved documents
    row_of = np.full(layout.n_docs, -1, dtype=np.int64)
    row_of[rows] = np.arange(len(rows))
    inc = sparse.csr_matrix((np.ones(int(unj_pos.sum())), (row_of[layout.doc[unj_pos]], cell[unj_pos])),
                            shape=(len(rows), n_cells))
    targets = rates * np.bincount(cell[unj_pos], minlength=n_cells)
    if vote_classes:
        retrieved = np.flatnonzero(count > 0)
        cls = vote_class(count[retrieved])
        n_cls = int(cls.max()) + 1 if len(cls) else 1
        size = np.bincount(cls, minlength=n_cls).astype(np.float64)
        doc_topic = np.repeat(np.arange(layout.n_topics), np.diff(layout.offsets))
        judged = layout.judged_relevant[retrieved]
        hw = None if hit_weights is None else hit_weights[doc_topic[retrieved][judged]]
        hits = np.bincount(cls[judged], weights=hw, minlength=n_cls).astype(np.float64)
        pooled = hits.sum() / max(size.sum(), 1.0)
        strength = pooling * size.mean()
        tiny = 1e-9
        if weights is None:
            theta_v = rng.beta(np.maximum(hits + strength * pooled, tiny),
                               np.maximum(size - hits + strength * (1 - pooled), tiny), size=(n_draws, 1, n_cls))
        else:  # the same topic weights as the cells: a topic's judged document moves its class and its cells
            theta_v = shared_shares(cls, judged, layout.n_topics, n_cls, doc_topic[retrieved], weights, pooling,
                                    hit_weights=hit_weights)[:, None, :]
        rate_v = fit.unjudged_rate(theta_v, rbar).reshape(n_draws, n_cls)
        unjudged = size - np.bincount(cls[judged], minlength=n_cls)  # a count, whatever the hits' weights
        targets = np.concatenate([targets, rate_v * unjudged], axis=1)
        inc = sparse.hstack([inc, sparse.csr_matrix((np.ones(len(rows)), (np.arange(len(rows)),
                                                     vote_class(count[rows]))), shape=(len(rows), n_cls))])
    prior = _doc_means(layout, cell, n_cells, rates)
    out = prior.mean(axis=0, keepdims=True) if point else prior.copy()
    if len(rows):
        inc = inc.tocsr()
        res = project_onto_cells(inc, prior[:, rows].mean(axis=0), targets.mean(axis=0), ridge=ridge)
        out[:, rows] = res.p[None, :] if point else refine_draws(inc, res, prior[:, rows], targets, ridge=ridge,
                                                                 steps=draw_steps)
    return out


def sparse_label_probabilities(data: RankData, *, relevant_mean: float = 2.0, relevant_shape: float = 0.25,
                               bin_edges=(1, 2, 3, 4, 6, 11, 21, 51, 101, 201, 501), pooling: float = 0.1,
                               combine: str = "mean", vote_classes: bool = True, projection_ridge: float = 0.01,
                               projection_draw_steps: int = 3, share_draws: str = "cells",
                               consensus_power: float = 0.0, p_draws: int | None = 200, seed=0,
                               model: str = "sparse") -> RelevanceEstimate:
    r"""p of every document under the sparse-label model (module notes), with posterior draws.

    Parameters
    ----------
    data : RankData
        Runs and the sparse labels (one judged relevant document per topic; judged nonrelevant documents are
        allowed and count as positions that do not hold the judged relevant one).
    relevant_mean : float
        :math:`\mu\ge 1`, the prior mean of :math:`\bar R` (relevant documents per topic).
    relevant_shape : float
        Gamma shape :math:`k` of :math:`\bar R-1` (larger: surer of :math:`\mu`).
    bin_edges : sequence of int
        First rank of each rank bin.
    pooling : float
        :math:`\kappa`, the strength of the pooled share in each run's Beta posterior, in units of a run's
        mean positions per bin (0: no shrinkage).
    combine : {"mean", "projected"}
        A document's p: the mean of its cells' rates, or that mean projected onto the cells' expected relevant
        counts (module notes, *Combine*).
    vote_classes : bool
        With ``"projected"``: the vote classes' counts are constraints too.
    projection_ridge : float
        :math:`\lambda` of :func:`~bayeval.relevance.cell_projection.project_onto_cells`.
    projection_draw_steps : int
        Chord steps per posterior draw from the point's corrections
        (:func:`~bayeval.relevance.cell_projection.refine_draws`; 0: the point's corrections for every draw).
    share_draws : {"cells", "topics"}
        How the cells' judged shares are drawn: each cell's Beta posterior on its own, or jointly, every topic's
        counts reweighted by one Bayesian-bootstrap weight shared by all cells and vote classes
        (:func:`shared_shares`).
    consensus_power : float
        :math:`\alpha` of :func:`consensus_weights`: each topic's judged document weighs :math:`m_t^{-\alpha}`
        in the cells' and vote classes' counts (:math:`m_t` runs retrieve it); 0: every topic alike.
    p_draws : int or None
        Posterior draws of p to keep (``None``/0: the point p only, from 1,000 draws of the cells).
    seed : int or None
    model : str
        Name recorded in the estimate.

    Returns
    -------
    RelevanceEstimate

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=4, n_systems=3, n_docs=50, depth=20, judged_depth=3, seed=1)
    >>> est = sparse_label_probabilities(RankData.build(col.runs, col.judgments), relevant_mean=3.0, p_draws=8)
    >>> est.draws[0].shape[0], bool(0.0 <= est.p[0].min() and est.p[0].max() <= 1.0)
    (8, True)
    """
    if not (isinstance(relevant_mean, (int, float)) and np.isfinite(relevant_mean) and relevant_mean >= 1.0):
        raise BayevalInputError(f"relevant_mean: must be a number >= 1, got {relevant_mean!r}")
    if not (isinstance(relevant_shape, (int, float)) and relevant_shape > 0):
        raise BayevalInputError(f"relevant_shape: must be a positive number, got {relevant_shape!r}")
    if not (isinstance(pooling, (int, float)) and pooling >= 0):
        raise BayevalInputError(f"pooling: must be a non-negative number, got {pooling!r}")
    if combine not in ("mean", "projected"):
        raise BayevalInputError(f"combine: must be 'mean' or 'projected', got {combine!r}")
    if not (isinstance(projection_ridge, (int, float)) and projection_ridge >= 0):
        raise BayevalInputError(f"projection_ridge: must be a non-negative number, got {projection_ridge!r}")
    if share_draws not in ("cells", "topics"):
        raise BayevalInputError(f"share_draws: must be 'cells' or 'topics', got {share_draws!r}")
    layout = rank_layout(data)
    hit_weights = consensus_weights(layout, consensus_power)
    fit = SparseLabelModel.fit(layout, relevant_mean=relevant_mean, relevant_shape=relevant_shape,
                               bin_edges=bin_edges, pooling=pooling, weights=hit_weights)
    n_bins = len(fit.bin_edges)
    cell = layout.system * n_bins + _bins(layout.rank, fit.bin_edges)
    rng = np.random.default_rng(seed)
    draws = None
    if combine == "projected":
        opts = {"vote_classes": bool(vote_classes), "pooling": pooling, "ridge": float(projection_ridge),
                "draw_steps": int(projection_draw_steps), "share_draws": share_draws, "hit_weights": hit_weights}
        if p_draws:
            flat_draws = _projected_draws(layout, fit, cell, int(p_draws), rng, point=False, **opts)
            flat_draws = flat_draws.astype(np.float32)
            p_flat = flat_draws.mean(axis=0, dtype=np.float64)
            draws = tuple(np.ascontiguousarray(x) for x in np.split(flat_draws, layout.offsets[1:-1], axis=1))
        else:
            p_flat = _projected_draws(layout, fit, cell, 1000, rng, point=True, **opts)[0]
    elif p_draws:
        theta, rbar, _ = _draw_shares(layout, fit, cell, int(p_draws), rng, pooling=pooling, share_draws=share_draws,
                                      hit_weights=hit_weights)
        rates = fit.unjudged_rate(theta, rbar).reshape(int(p_draws), -1)
        flat_draws = _doc_means(layout, cell, rates.shape[1], rates).astype(np.float32)
        p_flat = flat_draws.mean(axis=0, dtype=np.float64)
        draws = tuple(np.ascontiguousarray(x) for x in np.split(flat_draws, layout.offsets[1:-1], axis=1))
    else:
        p_flat = _doc_means(layout, cell, n_bins * layout.n_systems, fit.draw(1000, rng).mean(axis=0).ravel())
    ps = tuple(np.split(p_flat, layout.offsets[1:-1]))
    return RelevanceEstimate(tuple(data.topics), tuple(tr.docnos for tr in data),
                             tuple(np.asarray(tr.judged) for tr in data), ps, draws, model=model,
                             method="sparse", relevant=tuple(np.asarray(tr.relevant) for tr in data))
