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
  they only add to the number of relevant documents R that it missed.

Computed at the point p (exact moments), so the shares do not carry Monte Carlo noise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError

__all__ = ["Extrapolation", "extrapolation"]


@dataclass(frozen=True, eq=False)
class Extrapolation:
    """Per run: E[measure] at the point p, with unjudged = 0, and without documents no judged run retrieved.

    Attributes
    ----------
    systems : tuple of str
    measure : str
    expected, unjudged_zero, without_beyond : ndarray, shape (S,)
        :math:`E_p`, :math:`E_0`, :math:`E_{\\setminus U}` (module docstring).
    depth : int
        A judged run of a topic has its top ``depth`` completely judged.
    """

    systems: tuple
    measure: str
    expected: np.ndarray
    unjudged_zero: np.ndarray
    without_beyond: np.ndarray
    depth: int

    @property
    def model_share(self) -> np.ndarray:
        """(E_p − E_0) / E_p (0 where E_p = 0)."""
        return _share(self.expected - self.unjudged_zero, self.expected)

    @property
    def beyond_share(self) -> np.ndarray:
        """(E_p − E without the documents no judged run retrieved) / E_p (0 where E_p = 0)."""
        return _share(self.expected - self.without_beyond, self.expected)

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame({"unjudged_zero": self.unjudged_zero, "model_share": self.model_share,
                             "beyond_share": self.beyond_share}, index=pd.Index(self.systems, name="run"))


def _share(part: np.ndarray, whole: np.ndarray) -> np.ndarray:
    return np.divide(part, whole, out=np.zeros_like(part, dtype=float), where=np.abs(whole) > 0)


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
    masked = []
    for tr, pt in zip(data, p, strict=True):
        q = np.array(pt, dtype=np.float64, copy=True)
        q[beyond_judged_runs(tr, int(depth))] = 0.0
        masked.append(q)

    def mean(arrays):
        return expected_measures(data, arrays, measures=[measure], method="exact",
                                 progress=False).all_expected[0]

    zero = expected_measures(data, None, default_p=0.0, measures=[measure], method="exact",
                             progress=False).all_expected[0]
    return Extrapolation(tuple(data.systems), measure, mean(p), zero, mean(masked), int(depth))
