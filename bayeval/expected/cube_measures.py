"""Every pair on a rank cube for a measure named in the house's vocabulary: the one door to the cube paths.

:func:`expected_cube_pairs` takes a :class:`~bayeval.measures.Measure` (or its name in any spelling
:meth:`~bayeval.measures.Measure.parse` reads: ``RR@10``, ``MRR@10``, ``AP``, ``map_cut_100``, ``R@1000``,
``nDCG@10``) and runs the cube path that computes it — :func:`~bayeval.expected.cube.expected_reciprocal_rank_pairs`
(RR@k), :func:`~bayeval.expected.cube_ap.expected_ap_pairs` (AP, and AP@k through the same ratio kernel),
:func:`~bayeval.expected.cube_recall.expected_recall_pairs` (recall@k),
:func:`~bayeval.expected.cube_ndcg.expected_ndcg_pairs` (nDCG@k). :data:`CUBE_PAIRS` declares them and refuses
the rest with the vocabulary's one message (docs/scale.md).
"""

from __future__ import annotations

import numpy as np

from bayeval.data.rankcube import RankCube
from bayeval.defaults import CLOSED_FORM_DRAWS
from bayeval.expected._cube_pairs import CubePairMoments
from bayeval.expected.cube import expected_reciprocal_rank_pairs
from bayeval.expected.cube_ap import ratio_pairs
from bayeval.expected.cube_ndcg import expected_ndcg_pairs
from bayeval.measures import Measure, Provider

__all__ = ["CUBE_PAIRS", "expected_cube_pairs"]

CUBE_PAIRS = Provider("expected value on a rank cube", ("RR", "AP", "recall", "nDCG"), cut=("RR", "nDCG"))
"""The measures whose pairwise E, Var and P(Δ<0) the rank cube computes: RR@k, AP, AP@k, recall@k, nDCG@k."""


def expected_cube_pairs(cube: RankCube, p_unjudged, measure: str | Measure, *, method: str = "delta",
                        pairs: str | np.ndarray = "all", nodes: int = 64, scheduler=None, chunks: int | None = None,
                        connect_timeout: float = 30.0, closed_form_draws: int = CLOSED_FORM_DRAWS
                        ) -> CubePairMoments:
    """E, Var of ``measure`` per system and topic, and E, Var, P(Δ<0) of the difference of its means for pairs.

    Parameters
    ----------
    cube : RankCube
        ``code_depth`` at least k for RR@k; ``None`` (every document told apart) for AP, recall@k and nDCG@k.
    p_unjudged : float or ndarray (S, T, D) or (draws, S, T, D)
        As in :func:`~bayeval.expected.cube_ap.expected_ap_pairs` (posterior draws: law of total variance).
    measure : str or Measure
        One of :data:`CUBE_PAIRS` (``RR@10``, ``AP``, ``AP@100``, ``R@1000``, ``nDCG@10`` …).
    method : {"delta", "paper", "exact"}, default "delta"
        The moments of the ratio measures (AP, recall@k), as :func:`~bayeval.expected.compare_systems`;
        RR@k and nDCG@k are exact under every method.
    pairs, nodes, scheduler, chunks, connect_timeout, closed_form_draws
        As in :func:`~bayeval.expected.cube_ap.expected_ap_pairs`.

    Returns
    -------
    CubePairMoments
        (:class:`~bayeval.expected.cube.CubeReciprocalRank` for RR@k, :class:`~bayeval.expected.cube_ap.
        CubeAveragePrecision` for AP); ``measure`` is the canonical name.

    Raises
    ------
    BayevalInputError
        For a measure the cube does not compute (naming it and what it computes).

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=5, n_systems=3, n_docs=60, depth=20, judged_depth=3, seed=1)
    >>> cube = RankCube.from_runs(col.runs, col.judgments)
    >>> [expected_cube_pairs(cube, 0.1, m).measure for m in ("MRR@10", "map_cut_10", "R@20", "nDCG@5")]
    ['RR@10', 'AP@10', 'recall@20', 'nDCG@5']
    """
    m = CUBE_PAIRS.require(measure)
    common = dict(pairs=pairs, scheduler=scheduler, chunks=chunks, connect_timeout=connect_timeout,
                  closed_form_draws=closed_form_draws)
    if m.name == "RR":
        return expected_reciprocal_rank_pairs(cube, p_unjudged, cutoff=m.cutoff, **common)
    if m.name == "nDCG":
        return expected_ndcg_pairs(cube, p_unjudged, cutoff=m.cutoff, **common)
    return ratio_pairs(cube, p_unjudged, m, method=method, nodes=nodes, **common)
