"""Biased (reduced) qrels: remove what one group, or the manual runs, alone contributed to the pool."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from bayeval.bias.pool import Contributions, RunGroups, _check_depth, pooled_runs
from bayeval.data.qrels import Qrels
from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError

__all__ = ["automatic_only_qrels", "leave_group_out_qrels", "remove_judgments"]


def remove_judgments(qrels: Qrels, removed: Mapping[str, set]) -> Qrels:
    """``qrels`` without the judgments of the ``(topic, docno)`` pairs in ``removed`` (topic → docnos).

    Examples
    --------
    >>> import pandas as pd
    >>> q = Qrels.from_frame(pd.DataFrame({"topic": ["1", "1"], "docno": ["a", "b"], "grade": [1, 0]}))
    >>> remove_judgments(q, {"1": {"a"}}).num_judged("1")
    1
    """
    keep = {t: np.fromiter((d not in removed.get(t, ()) for d in tj.docnos), dtype=bool, count=len(tj))
            for t, tj in qrels.topic_judgments.items()}
    return qrels.restrict(keep)


def leave_group_out_qrels(qrels: Qrels, contributions: Contributions, group: str) -> Qrels:
    """The qrels without the judged documents that only ``group``'s pooled runs contributed.

    Büttcher et al. (2007, §5.2): "if only runs from G returned D among the top 50 documents for T,
    then remove D from T's qrels".

    Raises
    ------
    BayevalInputError
        If ``group`` contributed nothing according to ``contributions``.

    Examples
    --------
    >>> import pandas as pd
    >>> q = Qrels.from_frame(pd.DataFrame({"topic": ["1", "1"], "docno": ["a", "b"], "grade": [1, 0]}))
    >>> c = Contributions({"1": {"a": frozenset({"A"}), "b": frozenset({"A", "B"})}})
    >>> leave_group_out_qrels(q, c, "A")["1"].docnos.tolist()
    ['b']
    """
    if group not in contributions.groups:
        raise BayevalInputError(f"group: {group!r} contributed nothing to the pool "
                                f"(groups: {', '.join(contributions.groups[:8])} …)")
    removed = {t: set(contributions.unique_to(t, group)) for t in qrels.topics}
    return remove_judgments(qrels, removed)


def automatic_only_qrels(qrels: Qrels, contributions: Contributions, groups: RunGroups, data: RankData,
                         depth: int, pooled: Sequence[str] | None = None) -> Qrels:
    """The qrels without the documents that only manual runs contributed (Büttcher et al. 2007, Table 3).

    A judged document is removed when (a) every group that contributed it has a manual run and (b) no
    pooled *automatic* run retrieves it within the pool depth. Rule (a) keeps documents contributed by
    groups without manual runs even where their pooled runs cannot be seen; rule (b) separates the
    automatic and manual pooled runs of groups that had both.

    Parameters
    ----------
    qrels : Qrels
        The original judgments.
    contributions : Contributions
    groups : RunGroups
    data : RankData
        The runs (at least the pooled ones) aligned with ``qrels``.
    depth : int
        Pool depth.
    pooled : sequence of str, optional
        Pooled runs (default :func:`~bayeval.bias.pool.pooled_runs`).
    """
    depth = _check_depth(depth)
    pooled = tuple(pooled_runs(data, depth) if pooled is None else pooled)
    groups.check_runs(pooled, "pooled")
    manual_groups = {groups.group[r] for r in groups.manual}
    auto_idx = [data.system_index(r) for r in pooled if groups.kind[r] == "automatic"]
    removed = {}
    for t in qrels.topics:
        by_doc = contributions.by_topic.get(t, {})
        auto_docs: set = set()
        if t in data.topics:
            tr = data[t]
            top = tr.ranked[auto_idx, :depth]
            auto_docs = set(tr.docnos[np.unique(top[top >= 0])].tolist())
        removed[t] = {d for d, gs in by_doc.items() if gs and gs <= manual_groups and d not in auto_docs}
    return remove_judgments(qrels, removed)
