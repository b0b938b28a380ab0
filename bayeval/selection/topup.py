r"""Drawing a top-up: a few of each held-out run's own unjudged documents, at random, with recorded probabilities.

For each named run and topic, the *frame* is the run's documents within ``depth`` that are unjudged and
retrieved by no contributing run (:func:`bayeval.data.coverage.contributing_runs`: the documents whose p
the model can only extrapolate, :mod:`bayeval.relevance.reuse_prior`). Each *round* draws one document of every
(run, topic) frame with probability proportional to the AP-prior weight of its rank in the run,

.. math::

    a(r)=\frac{1}{2Z}\Bigl(1+\sum_{i=r}^{Z}\frac1i\Bigr)

(:func:`bayeval.sampling.design.ap_prior`, Z = ``depth``), among the documents not drawn yet (by any run), and
records that probability (:math:`\pi=a(r_d)/\sum_{d'\in\text{frame}}a(r_{d'})`, exact for the first round and
conditional on the earlier ones after it). ``per_topic`` rounds give each run at most ``per_topic`` documents a
topic (fewer where its frame runs out). AP weighs the top ranks most, and so does the draw; the draw depends only
on the runs' ranks, which the relevance model conditions on, so its judgments are evidence the model may use as
they come (docs/notes/calibration-record.md, "Where things stand").
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from bayeval.data.coverage import contributing_runs
from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError
from bayeval.relevance.topup import COLUMNS, TopUpSample
from bayeval.sampling.design import ap_prior

__all__ = ["draw_topup", "topup_frame"]


def topup_frame(data: RankData, run: int, topic: int, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """(indices of the frame's documents in ``data[topic]``, their AP-prior weights) of one run and topic."""
    tr = data[topic]
    ranks = np.asarray(tr.ranks)[:, run]
    inside = (ranks > 0) & (ranks <= depth) & ~np.asarray(tr.judged)
    idx = np.flatnonzero(inside)
    return idx, ap_prior(ranks[idx][:, None].astype(np.int64), depth)


def draw_topup(data: RankData, runs: Sequence[str], per_topic: int, *, depth: int = 100, rng: np.random.Generator,
               contributing=None, taken=None, first_round: int = 1, relevance_level: int | None = None) -> TopUpSample:
    """Draw ``per_topic`` rounds of a top-up of ``runs`` (module docstring).

    Parameters
    ----------
    data : RankData
        The runs and the judgments so far.
    runs : sequence of str
        Runs to top up: held-out runs (none of the contributing runs).
    per_topic : int
        Rounds: documents drawn per run and topic (fewer where a run's frame runs out).
    depth : int
        Only documents a run ranks within ``depth`` are drawn (the AP-prior's Z).
    rng : numpy.random.Generator
    contributing : array of int, optional
        The contributing runs (default :func:`~bayeval.data.coverage.contributing_runs` of ``data``).
    taken : set of (topic, docno), optional
        Documents drawn before (not drawn again).
    first_round : int
        Number of the first round drawn here (a later top-up of the same runs continues the count).
    relevance_level : int, optional
        Of the result (default the data's).

    Returns
    -------
    TopUpSample
        The draws, every grade −1 (not judged yet).

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=3, n_systems=4, n_docs=80, depth=20, judged_depth=3, seed=1)
    >>> data = RankData.build(col.runs, col.judgments, depth=20)
    >>> s = draw_topup(data, [data.systems[3]], 2, depth=20, rng=np.random.default_rng(0), contributing=[0, 1, 2])
    >>> len(s.frame) <= 6, bool(s.frame.inclusion.between(0, 1).all())
    (True, True)
    """
    if isinstance(per_topic, bool) or not isinstance(per_topic, (int, np.integer)) or per_topic < 1:
        raise BayevalInputError(f"per_topic: a positive integer, got {per_topic!r}")
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1:
        raise BayevalInputError(f"depth: a positive integer, got {depth!r}")
    if not isinstance(rng, np.random.Generator):
        raise BayevalInputError(f"rng: a numpy Generator, got {type(rng).__name__}")
    contributing = np.asarray(contributing_runs(data) if contributing is None else contributing, dtype=np.int64)
    idx_runs = []
    for name in runs:
        if name not in data.systems:
            raise BayevalInputError(f"runs: {name!r} is not one of the runs ({', '.join(data.systems[:5])}, ...)")
        s = data.system_index(name)
        if s in set(contributing.tolist()):
            raise BayevalInputError(f"runs: {name!r} contributed to the judgments: its documents are judged, not "
                                    "extrapolated (top up a run that did not contribute)")
        idx_runs.append(s)
    if len(set(idx_runs)) != len(idx_runs):
        raise BayevalInputError("runs: a run is named twice")
    taken = set() if taken is None else set(taken)
    frames = {(s, t): topup_frame(data, s, t, int(depth)) for s in idx_runs for t in range(len(data))}
    rows = []
    for r in range(int(per_topic)):
        for s in idx_runs:
            for t, tr in enumerate(data):
                idx, w = frames[(s, t)]
                free = np.array([(tr.topic, str(tr.docnos[i])) not in taken for i in idx], dtype=bool)
                if not free.any():
                    continue
                wf = w[free]
                pi = wf / wf.sum()
                k = int(rng.choice(len(wf), p=pi))
                doc = str(tr.docnos[idx[free][k]])
                taken.add((tr.topic, doc))
                rows.append((tr.topic, doc, -1, data.systems[s], first_round + r, float(pi[k])))
    level = data[0].relevance_level if relevance_level is None and len(data) else (relevance_level or 1)
    return TopUpSample(pd.DataFrame(rows, columns=list(COLUMNS)), int(level))
