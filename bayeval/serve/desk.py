"""The judging desk: who is judging what, on top of a :class:`~bayeval.selection.Campaign`.

The desk hands each assessor the campaign's next document — exactly what ``bayeval judge next``
proposes (:meth:`Campaign.next`, logged in the campaign's selection history) — except documents
leased to another assessor or skipped by this one; it records a judgment through
:meth:`Campaign.record` (committed to SQLite before it returns, labelled ``serve:NAME``) and undoes an
assessor's last judgment with :meth:`Campaign.retract_last`.

Staying on a topic: an assessor keeps the topic of their last judgment while a document there is worth
at least ``1 - topic_tolerance`` of the best anywhere (:meth:`Selector.select`; default
:data:`~bayeval.selection.selector.DEFAULT_TOPIC_TOLERANCE`), so that a topic statement is read once for a
run of judgments, not once per document (docs/judging.md, "Staying on a topic").

Leases: at most one document per assessor; a document leased to one assessor is not given to another
until it is judged, skipped, or the lease is older than ``lease_seconds``. Leases and skips live in
memory (a restarted server forgets them; judgments are all in the file). A judgment for a document the
assessor does not hold (a page shown before a restart) is accepted unless another assessor holds it.
Recording the same judgment twice is a no-op, so a form submitted twice duplicates nothing.

A desk is not thread-safe: the web application calls it from a single worker thread (docs/judging.md).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import pandas as pd

from bayeval.errors import BayevalInputError
from bayeval.selection.campaign import Campaign
from bayeval.selection.selector import DEFAULT_TOPIC_TOLERANCE, check_tolerance

__all__ = ["Desk", "GRADE_NAMES", "Item", "LeaseConflict", "Progress", "grade_names"]

ORIGIN_PREFIX = "serve:"
GRADE_NAMES = {0: "not relevant", 1: "relevant", 2: "highly relevant", 3: "perfect"}
"""The grades' names on a binary scale (relevance level 1); :func:`grade_names` for any scale."""


def grade_names(max_grade: int, relevance_level: int = 1) -> dict[int, str]:
    """``{grade: name}`` of a judging scale 0..``max_grade`` whose grades from ``relevance_level`` up count as
    relevant: below it "not relevant" (0) and "related, counted not relevant"; from it "relevant", "highly
    relevant", "perfect", then "grade g".

    >>> grade_names(1)
    {0: 'not relevant', 1: 'relevant'}
    >>> grade_names(3, relevance_level=2)  # TREC DL's scale, grade >= 2 relevant
    {0: 'not relevant', 1: 'related (counts as not relevant)', 2: 'relevant', 3: 'highly relevant'}
    """
    top, level = int(max_grade), max(int(relevance_level), 1)
    above = ("relevant", "highly relevant", "perfect")
    out = {}
    for g in range(top + 1):
        if g == 0:
            out[g] = "not relevant"
        elif g < level:
            out[g] = "related (counts as not relevant)"
        else:
            out[g] = above[g - level] if g - level < len(above) else f"grade {g}"
    return out


class LeaseConflict(BayevalInputError):
    """A judgment for a document another assessor holds."""


@dataclass(frozen=True)
class Item:
    """A document handed to an assessor: topic, docno and the pair its judgment moves most."""

    topic: str
    docno: str
    run_a: str | None = None
    run_b: str | None = None


@dataclass(frozen=True)
class Progress:
    """Judgments so far and, per target pair, E[Δ], P(Δ < 0) and whether it is decided."""

    measure: str
    alpha: float
    judgments: int
    mine: int
    pairs: tuple  # (run_a, run_b, expected, p_less, decided)
    done: bool
    exhausted: bool

    def summary(self) -> str:
        decided = sum(1 for p in self.pairs if p[4])
        return (f"{self.judgments} judgments ({self.mine} by this assessor); {decided}/{len(self.pairs)} pairs decided "
                f"at alpha={self.alpha:g} on {self.measure}" + ("; done" if self.done else ""))

    def to_frame(self):
        return pd.DataFrame(list(self.pairs), columns=["run_a", "run_b", "expected", "p_less", "decided"])

    def to_dict(self) -> dict:
        return {"measure": self.measure, "alpha": self.alpha, "judgments": self.judgments, "mine": self.mine,
                "done": self.done, "exhausted": self.exhausted,
                "pairs": [{"run_a": a, "run_b": b, "expected": e, "p_less": p, "decided": d}
                          for a, b, e, p, d in self.pairs]}


class Desk:
    """Assessors, leases and skips over one campaign file (see the module notes).

    Parameters
    ----------
    campaign : path-like
        An existing campaign (``bayeval judge init``).
    lease_seconds : float
        After this long an unjudged lease may be handed to another assessor (default 600).
    clock : callable
        Monotonic seconds (tests pass a fake one).
    topic_tolerance : float
        Keep an assessor on their topic while a document there is worth at least ``1 - topic_tolerance`` of
        the best anywhere (default :data:`~bayeval.selection.selector.DEFAULT_TOPIC_TOLERANCE`; 0: always
        the campaign's best document).
    """

    def __init__(self, campaign, *, lease_seconds: float = 600.0, clock=time.monotonic,
                 topic_tolerance: float = DEFAULT_TOPIC_TOLERANCE) -> None:
        if not lease_seconds > 0:
            raise BayevalInputError(f"lease_seconds: must be positive, got {lease_seconds!r}")
        self.topic_tolerance = check_tolerance(topic_tolerance)
        self.campaign = Campaign.open(campaign)
        self.name = os.path.basename(self.campaign.path)
        self.lease_seconds = float(lease_seconds)
        self._clock = clock
        self._held: dict[str, tuple[Item, float]] = {}  # assessor -> (item, since)
        self._holder: dict[tuple[str, str], str] = {}  # (topic, docno) -> assessor
        self._skipped: dict[str, set] = {}
        sel = self.campaign.selector()
        self.grades = tuple(range(0, int(sel.max_grade) + 1))
        self.relevance_level = int(sel.level)
        self.grade_names = grade_names(int(sel.max_grade), self.relevance_level)

    def close(self) -> None:
        self.campaign.close()

    # ----------------------------------------------------------------- leases
    def _release(self, assessor: str) -> None:
        held = self._held.pop(assessor, None)
        if held is not None and self._holder.get((held[0].topic, held[0].docno)) == assessor:
            del self._holder[(held[0].topic, held[0].docno)]

    def _lease(self, assessor: str, item: Item) -> Item:
        self._release(assessor)
        self._held[assessor] = (item, self._clock())
        self._holder[(item.topic, item.docno)] = assessor
        return item

    def _other_holder(self, assessor: str, key) -> str | None:
        who = self._holder.get(key)
        if who is None or who == assessor:
            return None
        if self._clock() - self._held[who][1] > self.lease_seconds:
            self._release(who)  # expired: the document is free again
            return None
        return who

    def release(self, assessor: str) -> None:
        """Give back the document ``assessor`` holds (they leave)."""
        self._release(assessor)

    def held_by_others(self, assessor: str) -> bool:
        """Whether another assessor holds a document now."""
        return any(self._other_holder(assessor, k) is not None for k in list(self._holder))

    def current(self, assessor: str) -> Item | None:
        """The document ``assessor`` holds, if any (and still unjudged)."""
        held = self._held.get(assessor)
        if held is None:
            return None
        item = held[0]
        if self.campaign.selector().is_judged(item.topic, item.docno):  # judged meanwhile (another process)
            self._release(assessor)
            return None
        if self._holder.get((item.topic, item.docno)) != assessor:
            return None
        return item

    def next(self, assessor: str) -> Item | None:
        """The document ``assessor`` holds, or the campaign's next one for them (None: nothing left for them)."""
        item = self.current(assessor)
        if item is not None:
            return item
        self._release(assessor)
        sel = self.campaign.selector()
        if sel.done:
            return None
        skipped = self._skipped.setdefault(assessor, set())
        skipped -= {k for k in skipped if sel.is_judged(*k)}  # judged by someone else since: no longer in the way
        blocked = {k for k in list(self._holder) if self._other_holder(assessor, k) is not None} | skipped
        last = self.last(assessor)
        if last is not None and self.topic_tolerance > 0.0:
            stay = self.campaign.next(1, stay_on=last[0], tolerance=self.topic_tolerance)
            if stay and stay[0].topic == last[0] and (stay[0].topic, stay[0].docno) not in blocked:
                c = stay[0]
                return self._lease(assessor, Item(c.topic, c.docno, c.run_a, c.run_b))
        n = 1 + len(blocked)  # the top n always hold one document that is neither leased nor skipped
        for c in self.campaign.next(n):
            if (c.topic, c.docno) not in blocked:
                return self._lease(assessor, Item(c.topic, c.docno, c.run_a, c.run_b))
        return None

    # ----------------------------------------------------------------- actions
    def _check_known(self, topic: str, docno: str) -> None:
        self.campaign.selector().is_judged(topic, docno)  # raises BayevalInputError for an unknown document

    def judge(self, assessor: str, topic: str, docno: str, grade: int) -> bool:
        """Record ``assessor``'s grade (committed before returning); True when new, False when already recorded."""
        if grade not in self.grades:
            raise BayevalInputError(f"grade: must be one of {', '.join(map(str, self.grades))}, got {grade!r}")
        self._check_known(topic, docno)
        who = self._other_holder(assessor, (topic, docno))
        if who is not None:
            raise LeaseConflict(f"docno: document {docno!r} of topic {topic!r} is being judged by {who!r}")
        res = self.campaign.record([(topic, docno, int(grade))], source="human", origin=ORIGIN_PREFIX + assessor)
        held = self._held.get(assessor)
        if held is not None and (held[0].topic, held[0].docno) == (topic, docno):
            self._release(assessor)
        return res.added == 1

    def skip(self, assessor: str, topic: str, docno: str) -> None:
        """Do not give ``assessor`` this document again (others may get it)."""
        self._check_known(topic, docno)
        self._skipped.setdefault(assessor, set()).add((topic, docno))
        held = self._held.get(assessor)
        if held is not None and (held[0].topic, held[0].docno) == (topic, docno):
            self._release(assessor)

    def undo(self, assessor: str) -> Item | None:
        """Withdraw ``assessor``'s last judgment and hand that document back to them; None when there is none."""
        line = self.campaign.retract_last(ORIGIN_PREFIX + assessor)
        if line is None:
            return None
        item = Item(line.topic, line.docno)
        self._skipped.get(assessor, set()).discard((line.topic, line.docno))
        return self._lease(assessor, item)

    def last(self, assessor: str) -> tuple[str, str, int] | None:
        """``(topic, docno, grade)`` of the assessor's last judgment still recorded."""
        line = self.campaign.by_origin(ORIGIN_PREFIX + assessor)[1]
        return None if line is None else (line.topic, line.docno, line.grade)

    def progress(self, assessor: str | None = None) -> Progress:
        """Judgments so far and the state of every target pair."""
        st = self.campaign.status()
        mine = 0 if assessor is None else self.campaign.by_origin(ORIGIN_PREFIX + assessor)[0]
        pairs = tuple((a, b, float(e), float(p), bool(d)) for a, b, e, p, d in
                      zip(st.run_a, st.run_b, st.expected, st.p_less, st.decided, strict=True))
        return Progress(st.measure, float(st.alpha), int(st.judgments), int(mine), pairs, bool(st.done),
                        bool(st.exhausted))
