"""Who contributed what to a judging pool: run groups and types, pooled runs, per-document contributors.

A biased-pool experiment (Büttcher et al. 2007) removes from the qrels the documents that only some
runs contributed. It needs three facts about the pool:

- :class:`RunGroups` — each run's group (participant) and type (``automatic`` / ``manual``), read from
  a table such as TREC-8's ``runs.tsv`` (:func:`read_run_groups`);
- the *pooled* runs and the pool depth — the runs whose top ``depth`` documents were all judged
  (:func:`pooled_runs` infers them the way the paper does: "runs for which the top 50 documents were
  completely covered by the qrels for every topic");
- :class:`Contributions` — for every judged document, the groups whose pooled runs retrieved it within
  the pool depth: read from an annotated qrels file (``topic 0 docno grade n group…``,
  :func:`read_contributions`) or computed from the runs (:func:`contributions_from_runs`).

The two files and their classes live in :mod:`bayeval.io.pools` (all file reading is in ``bayeval.io``);
they are re-exported here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError
from bayeval.io import quoted
from bayeval.io.pools import RUN_TYPES, Contributions, RunGroups, read_contributions, read_run_groups

__all__ = ["RUN_TYPES", "Contributions", "RunGroups", "contributions_from_runs", "pooled_runs",
           "read_contributions", "read_run_groups"]


def pooled_runs(data: RankData, depth: int) -> tuple[str, ...]:
    r"""Runs whose top ``depth`` documents are judged on every topic they have results for.

    This is how Büttcher et al. (2007, §4) decide which runs "contributed to the pool": a run whose top
    ``depth`` is completely covered by the qrels is treated as pooled.

    Parameters
    ----------
    data : RankData
        All runs aligned with the (original) qrels.
    depth : int
        The pool depth (TREC-8: 100).

    Examples
    --------
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=2, n_systems=3, n_docs=40, depth=20, judged_depth=5, seed=1)
    >>> pooled_runs(RankData.build(col.runs, col.judgments), 5) == col.runs.names
    True
    """
    depth = _check_depth(depth)
    covered = np.ones(len(data.systems), dtype=bool)
    for tr in data:
        top = tr.ranked[:, :depth]
        judged = np.where(top >= 0, np.append(tr.judged, True)[top], True)
        covered &= judged.all(axis=1) | ~tr.has_results
    return tuple(s for s, c in zip(data.systems, covered, strict=True) if c)


def contributions_from_runs(data: RankData, groups: RunGroups, depth: int,
                            pooled: Sequence[str] | None = None) -> Contributions:
    """Contributors of every judged document, computed from the pooled runs' top ``depth``.

    Parameters
    ----------
    data : RankData
        Runs aligned with the qrels.
    groups : RunGroups
    depth : int
        Pool depth.
    pooled : sequence of str, optional
        The pooled runs (default: :func:`pooled_runs`).

    Returns
    -------
    Contributions
        Judged documents retrieved by no pooled run within ``depth`` get an empty set of groups.
    """
    depth = _check_depth(depth)
    pooled = tuple(pooled_runs(data, depth) if pooled is None else pooled)
    groups.check_runs(pooled, "pooled")
    idx = [data.system_index(r) for r in pooled]
    out = {}
    for tr in data:
        sets: dict[int, set] = {}
        for s, name in zip(idx, pooled, strict=True):
            top = tr.ranked[s, :depth]
            for d in top[top >= 0]:
                sets.setdefault(int(d), set()).add(groups.group[name])
        out[tr.topic] = {str(tr.docnos[d]): frozenset(sets.get(int(d), ())) for d in np.flatnonzero(tr.judged)}
    return Contributions(out)


def _check_depth(depth) -> int:
    if not isinstance(depth, (int, np.integer)) or isinstance(depth, bool) or depth < 1:
        raise BayevalInputError(f"depth: the pool depth must be a positive integer, got {quoted(depth)}")
    return int(depth)

