r"""Held-out run shifts: how uncertain the extrapolation to documents only non-contributing runs retrieve is, per run.

The judgments of a reused collection were made on the documents some runs retrieve — the *contributing* runs
(:func:`bayeval.data.coverage.contributing_runs`). For a document i of topic t that is unjudged and
retrieved by no contributing run (a *target* document, :func:`bayeval.data.coverage.target_documents`),
the model's p is an extrapolation: the judgments say nothing about the level of p on such documents
(docs/calibration.md, "Where p goes wrong": it is off by 1.2–1.5× on Robust 2003 and TREC-8, and by a
different amount for each run that retrieves them). The posterior draws of p ignore that error, so E[MAP] of a
run whose relevant documents are largely target documents is as sure as that of a judged run, and the pair
forecasts that involve it are over-confident.

**The shift.** Each run s gets, in each posterior draw d of p, its own log-odds shift
:math:`e_{ds}\sim N(0,\sigma_e^2)`, independent over runs and draws and shared by the run's target documents in
every topic (so that the error of E[MAP] does not average away over topics). A target document moves with the
shifts of the runs that retrieve it, weighted as the run effect of :mod:`bayeval.relevance.hierarchical`,
:math:`w_{is}=\mathbb 1[s\in S_i]/|S_i|`:

.. math::

    \eta'_{di}=\kappa_i\,\eta_{di}+\sum_s w_{is}e_{ds},\qquad
    \kappa_i=\sqrt{1+\tfrac{\pi}{8}\sigma_e^2\textstyle\sum_s w_{is}^2},

with :math:`\eta_{di}=\mathrm{logit}\,p_{di}` the draw before the shift. :math:`\kappa_i` is the marginalisation
of :mod:`bayeval.relevance.hierarchical` (Heagerty 1999): by the probit approximation
:math:`E_e[\sigma(\kappa\eta+Z)]\approx\sigma(\eta)` for :math:`Z\sim N(0,\sigma_e^2\sum_sw_{is}^2)`, so the
shift leaves E[p] of every document where it was and only spreads the draws — jointly for a run's documents.
Judged documents and documents a contributing run retrieves are untouched; with :math:`\sigma_e=0` the draws
are returned unchanged. A document that many held-out runs retrieve moves with their mean shift, variance
:math:`\sigma_e^2/|S_i|`: the more runs agree on a document, the less one run's error matters.

**Its scale** :math:`\sigma_e` is not learnable from the judgments (no judged document is a target document);
it is a constant of the configuration (``[held_out_runs] run_shift_sd``), chosen on the choosing collections of
docs/notes/calibration-record.md (revision 5), and 0 (no shift) by default.

References
----------
P. J. Heagerty (1999). Marginally specified logistic-normal models for longitudinal binary data.
Biometrics 55(3). B. Carterette, J. Allan, R. Sitaraman (2007). Robust test collections for retrieval
evaluation. SIGIR.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix
from scipy.special import expit, logit

from bayeval.data.coverage import target_documents
from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError
from bayeval.relevance._kernels import member_rows

__all__ = ["HeldOutShift", "check_scale", "check_topic_arrays", "move_targets", "shift_weights"]

_PI8 = np.pi / 8.0
_CLIP = 1e-6


def shift_weights(tr, contributing, n_systems: int) -> np.ndarray:
    r"""Dense (n_t, S) weights :math:`w_{is}=\mathbb 1[s\in S_i]/|S_i|` on the target documents of topic ``tr``
    (unjudged, retrieved by none of the ``contributing`` runs); rows of other documents are 0.

    The rows are those of the run effect of :mod:`bayeval.relevance.hierarchical`, from the same kernel
    (``member_rows``) with no depth limit (:math:`S_i`: every run retrieving i), restricted to the target
    documents and dense (they multiply the (draws, S) shifts).
    """
    r = np.asarray(tr.ranks)[:, :n_systems]
    indptr, indices, data = member_rows(r, np.full(r.shape[1], np.iinfo(np.int64).max))
    w = csr_matrix((data, indices, indptr), shape=r.shape).toarray()
    w[~target_documents(tr, contributing, "held_out")] = 0.0
    return w


def check_scale(sd) -> float:
    """``sd`` as a float after checking it is a finite number ≥ 0 (the scale of a shift or of a level's prior)."""
    if isinstance(sd, bool) or not isinstance(sd, (int, float, np.floating)) or not np.isfinite(sd) or sd < 0:
        raise BayevalInputError(f"sd: must be a non-negative number, got {sd!r}")
    return float(sd)


def check_topic_arrays(data: RankData, arrays, name: str) -> None:
    """Check that ``data`` is a RankData and ``arrays`` (argument ``name``) holds one array per topic."""
    if not isinstance(data, RankData):
        raise BayevalInputError(f"data: expected a RankData, got {type(data).__name__}")
    if len(arrays) != len(data):
        raise BayevalInputError(f"{name}: expected one array per topic ({len(data)}), got {len(arrays)}")


def move_targets(data: RankData, arrays, runs, move, weights=None) -> tuple:
    r"""``arrays`` (per topic (..., n_t): draws (n_draws, n_t) or a point (n_t,)) with the log-odds of every
    topic's target documents replaced by ``move(eta, w, *parts)``.

    ``weights(tr, runs, S)`` gives a topic's weights ``w`` (n_t, S), or ``(w, *parts)`` with per-document arrays
    (n_t, ...); the target documents are the rows of ``w`` that are not all 0 (default :func:`shift_weights`: the
    unjudged documents no contributing run retrieves; the reuse prior passes
    :func:`bayeval.relevance.reuse_prior.level_weights`). ``eta`` is :math:`\mathrm{logit}\,p` of the target
    documents (float64, p clipped to :math:`[10^{-6}, 1-10^{-6}]`, shape (..., n_target)), ``w`` and ``parts``
    their rows; the result is mapped back by the logistic function in the input's dtype. Topics without a target
    document are returned as given (the same object); the rest are new arrays.
    """
    S = len(data.systems)
    weights = shift_weights if weights is None else weights
    out = []
    for tr, a in zip(data, arrays, strict=True):
        a = np.asarray(a)
        got = weights(tr, runs, S)
        w, parts = (got[0], got[1:]) if isinstance(got, tuple) else (got, ())
        tg = w.sum(axis=1) > 0
        if not tg.any():
            out.append(a)
            continue
        eta = logit(np.clip(a[..., tg].astype(np.float64), _CLIP, 1 - _CLIP))
        new = np.array(a, copy=True)
        new[..., tg] = expit(move(eta, w[tg], *(x[tg] for x in parts))).astype(a.dtype)
        out.append(new)
    return tuple(out)


@dataclass(frozen=True)
class HeldOutShift:
    r"""Per-run log-odds shifts :math:`e_{ds}\sim N(0,\sigma_e^2)` on target documents (module docstring).

    Attributes
    ----------
    sd : float
        :math:`\sigma_e` ≥ 0 (0: no shift).
    runs : tuple of int
        The contributing runs (indices into ``data.systems``).

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=2, n_systems=4, n_docs=60, depth=10, judged_depth=3, seed=1)
    >>> data = RankData.build(col.runs, col.judgments, depth=10)
    >>> p = [np.full((400, tr.n_docs), 0.2) for tr in data]
    >>> out = HeldOutShift(1.0, (0,)).apply(data, p, np.random.default_rng(0))
    >>> w = shift_weights(data[0], (0,), 4).sum(axis=1) > 0
    >>> bool(out[0][:, w].std(axis=0).min() > 0.05), bool(np.all(out[0][:, ~w] == p[0][:, ~w]))
    (True, True)
    >>> bool(abs(out[0][:, w].mean() - 0.2) < 0.02)   # E[p] kept (marginalisation)
    True
    """

    sd: float
    runs: tuple

    def __post_init__(self) -> None:
        check_scale(self.sd)
        object.__setattr__(self, "runs", tuple(int(s) for s in self.runs))

    def apply(self, data: RankData, draws, rng: np.random.Generator) -> tuple:
        r"""The draws of p (per topic (n_draws, n_t)) with the shifts :math:`e_{ds}` drawn from ``rng``:
        :math:`\sigma(\kappa_i\,\mathrm{logit}\,p_{di}+\sum_sw_{is}e_{ds})` on target documents, the rest as given
        (the input itself when ``sd`` is 0)."""
        check_topic_arrays(data, draws, "draws")
        if self.sd == 0 or len(draws) == 0:
            return tuple(draws)
        K = np.asarray(draws[0]).shape[0]
        e = rng.normal(0.0, float(self.sd), size=(K, len(data.systems)))  # one shift per run and draw, over topics

        def move(eta, wt):
            kap = np.sqrt(1.0 + _PI8 * self.sd ** 2 * (wt ** 2).sum(axis=1))
            return kap[None, :] * eta + e @ wt.T

        return move_targets(data, draws, self.runs, move)
