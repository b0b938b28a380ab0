r"""How much of a run's E[measure] rests on the model rather than on judgments: :func:`extrapolation`.

E[measure] answers "what would the measure be if every document were judged"; trec_eval answers "what is
it with unjudged documents counted as not relevant". For each run, over the topics,

.. math::

    E_p = \overline{E[m \mid p]},\qquad E_0 = \overline{E[m \mid p_{\text{unjudged}}=0]},\qquad
    E_{\setminus U} = \overline{E[m \mid p_i = 0\ \forall i \in U_t]},

with :math:`U_t` the unjudged documents of topic t that **no judged run** retrieves (a judged run of
topic t: one whose top ``depth`` documents are all judged; without one, every unjudged document is in
:math:`U_t`). Then

- ``model_share`` :math:`= (E_p - E_0)/E_p`: the share of E[measure] that the model's p of unjudged
  documents adds to (or, when negative, removes from) what the judgments alone give;
- ``beyond_share`` :math:`= (E_p - E_{\setminus U})/E_p`: the share resting on documents no judged run
  retrieved — the model's extrapolation to what no judged ranking saw (docs/calibration.md, "Where p goes
  wrong": those documents are where p errs most). A run that retrieves none of them gets a negative share:
  they only add to the number of relevant documents R that it missed;
- ``depth_share`` :math:`= (E_p - E_{\setminus B})/E_p` with :math:`B_t` the documents *beyond the judged
  depth*: unjudged, with a best rank over the runs deeper than :math:`K_t`, the median over the runs of their
  completely judged prefix (:func:`judged_depth`, :func:`depth_distance`) — the model's extrapolation down the
  rankings (docs/depth.md).

:func:`mostly_extrapolated` says which runs' E[measure] rests mostly (by default half or more) on either kind of
extrapolated p. Computed at the point p (exact moments), so the shares do not carry Monte Carlo noise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError

__all__ = ["Extrapolation", "best_rank", "beyond_judged_runs", "depth_distance", "expected_shift", "extrapolation",
           "judged_depth",
           "mostly_extrapolated"]


@dataclass(frozen=True, eq=False)
class Extrapolation:
    """Per run: E[measure] at the point p, with unjudged = 0, and without documents no judged run retrieved.

    Attributes
    ----------
    systems : tuple of str
    measure : str
    expected, unjudged_zero, without_beyond, without_deep : ndarray, shape (S,)
        :math:`E_p`, :math:`E_0`, :math:`E_{\\setminus U}`, :math:`E_{\\setminus B}` (module docstring).
    depth : int
        A judged run of a topic has its top ``depth`` completely judged.
    """

    systems: tuple
    measure: str
    expected: np.ndarray
    unjudged_zero: np.ndarray
    without_beyond: np.ndarray
    depth: int
    without_deep: np.ndarray | None = None

    @property
    def model_share(self) -> np.ndarray:
        """(E_p − E_0) / E_p (0 where E_p = 0)."""
        return _share(self.expected - self.unjudged_zero, self.expected)

    @property
    def beyond_share(self) -> np.ndarray:
        """(E_p − E without the documents no judged run retrieved) / E_p (0 where E_p = 0)."""
        return _share(self.expected - self.without_beyond, self.expected)

    @property
    def depth_share(self) -> np.ndarray:
        """(E_p − E without the documents beyond the judged depth) / E_p (0 where E_p = 0)."""
        deep = self.expected if self.without_deep is None else self.without_deep
        return _share(self.expected - deep, self.expected)

    def to_frame(self) -> pd.DataFrame:
        """``unjudged_zero, model_share, beyond_share, depth_share, extrapolated`` per run (index ``run``);
        ``extrapolated``: :func:`mostly_extrapolated`."""
        return pd.DataFrame({"unjudged_zero": self.unjudged_zero, "model_share": self.model_share,
                             "beyond_share": self.beyond_share, "depth_share": self.depth_share,
                             "extrapolated": mostly_extrapolated(self)}, index=pd.Index(self.systems, name="run"))


def mostly_extrapolated(ex: Extrapolation, threshold: float = 0.5) -> np.ndarray:
    """Per run: does its E[measure] rest mostly on extrapolated p — ``beyond_share`` or ``depth_share`` at least
    ``threshold`` (default one half)?

    Examples
    --------
    >>> ex = Extrapolation(("a", "b"), "AP", np.array([0.2, 0.2]), np.array([0.1, 0.1]), np.array([0.2, 0.05]), 10,
    ...                    np.array([0.09, 0.2]))
    >>> mostly_extrapolated(ex).tolist()
    [True, True]
    >>> mostly_extrapolated(ex, 0.6).tolist()
    [False, True]
    """
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0.0 < threshold <= 1.0:
        raise BayevalInputError(f"threshold: must lie in (0, 1], got {threshold!r}")
    return (ex.beyond_share >= threshold) | (ex.depth_share >= threshold)


def _share(part: np.ndarray, whole: np.ndarray) -> np.ndarray:
    return np.divide(part, whole, out=np.zeros_like(part, dtype=float), where=np.abs(whole) > 0)


def best_rank(tr) -> np.ndarray:
    """Per document of topic ``tr``, its best (smallest) rank over the runs; ``inf`` where no run retrieves it."""
    r = np.asarray(tr.ranks, dtype=np.float64)
    return np.where(r > 0, r, np.inf).min(axis=1, initial=np.inf)


def judged_depth(tr) -> float:
    r""":math:`K_t`: the median over the runs that retrieve something of their completely judged prefix
    (:func:`bayeval.relevance.rtc.complete_prefix`); 0 when no run retrieves anything.

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=1, n_systems=5, n_docs=80, depth=30, judged_depth=8, seed=2)
    >>> judged_depth(RankData.build(col.runs, col.judgments)[0]) >= 8
    True
    """
    from bayeval.relevance.rtc import complete_prefix

    c = complete_prefix(tr)
    has = np.asarray(tr.lengths) > 0
    return float(np.median(c[has])) if has.any() else 0.0


def depth_distance(tr, depth: float) -> np.ndarray:
    r""":math:`x_i=\log_2(r_i/K_t)` of every unjudged document of topic ``tr`` whose best rank :math:`r_i` exceeds
    ``depth`` (:math:`K_t`); 0 for every other document (judged, within the judged depth, or ``depth`` < 1)."""
    x = np.zeros(tr.n_docs)
    if not depth >= 1:
        return x
    r = best_rank(tr)
    deep = ~np.asarray(tr.judged) & np.isfinite(r) & (r > depth)
    x[deep] = np.log2(r[deep] / depth)
    return x


def beyond_judged_runs(tr, depth: int) -> np.ndarray:
    """Per document of topic ``tr``: unjudged and retrieved by no run whose top ``depth`` is completely judged."""
    from bayeval.relevance.rtc import complete_prefix

    judged_runs = complete_prefix(tr) >= np.minimum(depth, tr.lengths)
    judged_runs &= tr.lengths > 0
    seen = np.zeros(tr.n_docs + 1, dtype=bool)  # last slot: the padding index -1
    seen[tr.ranked[judged_runs].ravel()] = True
    return ~tr.judged & ~seen[:-1]


def extrapolation(data: RankData, probabilities=None, *, measure: str = "AP", default_p: float = 0.5,
                  depth: int = 10) -> Extrapolation:
    """How much of each run's E[measure] rests on the model, and on documents no judged run retrieved.

    Parameters
    ----------
    data : RankData
    probabilities
        As in :func:`~bayeval.expected.expected_measures` (an estimate's point p is used).
    measure : str
        One measure with an expected value (``"AP"``: MAP).
    default_p : float
        p of unjudged documents ``probabilities`` does not give.
    depth : int
        A judged run of a topic: its top ``depth`` documents all judged (default 10).

    Returns
    -------
    Extrapolation

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=3, n_systems=3, n_docs=60, depth=20, judged_depth=5, seed=1)
    >>> ex = extrapolation(RankData.build(col.runs, col.judgments), default_p=0.0)
    >>> float(abs(ex.model_share).max()), float(abs(ex.beyond_share).max())
    (0.0, 0.0)
    """
    from bayeval.expected._api import expected_measures
    from bayeval.expected._probabilities import resolve

    if not isinstance(data, RankData):
        raise BayevalInputError(f"data: expected a RankData, got {type(data).__name__}")
    if not isinstance(depth, (int, np.integer)) or isinstance(depth, bool) or depth < 1:
        raise BayevalInputError(f"depth: must be a positive integer, got {depth!r}")
    p = resolve(data, probabilities, default_p, allow_draws=False)
    masked, deep = [], []
    for tr, pt in zip(data, p, strict=True):
        q = np.array(pt, dtype=np.float64, copy=True)
        q[beyond_judged_runs(tr, int(depth))] = 0.0
        masked.append(q)
        q = np.array(pt, dtype=np.float64, copy=True)
        q[depth_distance(tr, judged_depth(tr)) > 0] = 0.0
        deep.append(q)

    def mean(arrays):
        return expected_measures(data, arrays, measures=[measure], method="exact",
                                 progress=False).all_expected[0]

    zero = expected_measures(data, None, default_p=0.0, measures=[measure], method="exact",
                             progress=False).all_expected[0]
    return Extrapolation(tuple(data.systems), measure, mean(p), zero, mean(masked), int(depth), mean(deep))


def expected_shift(data: RankData, probabilities, baseline, *, measure: str = "AP",
                   default_p: float = 0.5) -> np.ndarray:
    r"""How far each run's E[measure] moves from ``baseline``'s p to ``probabilities``' p, over the topics:
    :math:`\overline{E[m \mid p]} - \overline{E[m \mid p_{\text{baseline}}]}`, at the point p (exact moments, no
    Monte Carlo noise).

    With ``baseline`` a model's estimate and ``probabilities`` the same estimate with automatic assessors' labels
    (:func:`bayeval.relevance.with_assessors`), it is how much of the run's E[measure] rests on the labels: the
    E[MAP] the labels' likelihood ratios add (or remove).

    Parameters
    ----------
    data : RankData
    probabilities, baseline
        As in :func:`~bayeval.expected.expected_measures` (an estimate's point p is used).
    measure : str
        One measure with an expected value.
    default_p : float

    Returns
    -------
    ndarray, shape (S,)
        Per run of ``data.systems``.

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=3, n_systems=3, n_docs=60, depth=20, judged_depth=5, seed=1)
    >>> data = RankData.build(col.runs, col.judgments)
    >>> bool(np.all(expected_shift(data, None, None, default_p=0.2) == 0.0))
    True
    """
    from bayeval.expected._api import expected_measures
    from bayeval.expected._probabilities import resolve

    if not isinstance(data, RankData):
        raise BayevalInputError(f"data: expected a RankData, got {type(data).__name__}")

    def mean(probs):
        p = resolve(data, probs, default_p, allow_draws=False)
        return expected_measures(data, p, measures=[measure], method="exact", progress=False).all_expected[0]

    return mean(probabilities) - mean(baseline)
