r"""RTC log-odds of judged documents from a chain that did not see them: calibration that transfers.

The hierarchical model (:mod:`bayeval.relevance.hierarchical`) learns the map from the RTC log-odds
:math:`o_i` to p on the judged documents. Their :math:`o_i` come from a chain fitted *on those very
judgments*, so the map is learned where the documents shaped it (docs/calibration.md, "Where p goes
wrong": slope ≈ 1.4 in sample, ≈ 0.4–0.6 out of sample). Here a judged document's :math:`o_i` comes from the
chain refitted without the judgments of its **group**: the judged run whose completely judged prefix holds
it first (in the order of ``data.systems``), or one group for the judged documents in no run's complete
prefix (judged for runs outside the data). The map is then fitted on one judged run's selection with the
log-odds the other runs' judgments give, which is how it is used on documents only other runs retrieve.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.special import logit

from bayeval.data.coverage import complete_prefix
from bayeval.data.rankdata import RankData
from bayeval.relevance.rtc import RTCEstimator

__all__ = ["judged_groups", "transferred_offsets"]

_CLIP = 1e-6


def judged_groups(tr) -> np.ndarray:
    """Per document of topic ``tr``: the index of the first run whose complete prefix holds it, S for a
    judged document in no complete prefix, −1 for an unjudged document."""

    S = len(tr.systems)
    group = np.where(np.asarray(tr.judged), S, -1).astype(np.int64)
    comp = complete_prefix(tr)
    for s in range(S - 1, -1, -1):  # the first run wins: assign in reverse
        docs = tr.ranked[s, : int(comp[s])]
        group[docs] = s
    return group


def transferred_offsets(data: RankData, base, offsets) -> tuple:
    """``offsets`` (per topic, log-odds of every document) with each judged document's replaced by the
    log-odds of ``base`` (an RTC configuration) refitted without the judgments of its group (MAP fits)."""
    groups = [judged_groups(tr) for tr in data]
    out = [np.array(o, dtype=np.float64, copy=True) for o in offsets]
    present = np.unique(np.concatenate([g[g >= 0] for g in groups])) if groups else np.zeros(0, np.int64)
    for g in present:
        per = []
        for tr, gt in zip(data, groups, strict=True):
            hide = gt == g
            per.append(dataclasses.replace(tr, judged=np.asarray(tr.judged) & ~hide,
                                           grades=np.where(hide, 0, np.asarray(tr.grades))))
        held = RankData(data.systems, data.topics, tuple(per), data.depth)
        p = RTCEstimator(base).fit(held, "map").probabilities(draws=None).p
        for t, gt in enumerate(groups):
            hide = gt == g
            out[t][hide] = logit(np.clip(p[t][hide], _CLIP, 1 - _CLIP))
    return tuple(out)
