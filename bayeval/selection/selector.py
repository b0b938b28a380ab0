r"""Selecting documents to judge: the shared machinery and MTC (minimal test collections).

A selector holds, for every topic of a :class:`~bayeval.data.RankData`, the documents the target
systems retrieve, which of them are judged, and the probability of relevance of the others. It
proposes the next documents to judge (:meth:`Selector.select`), takes judgments
(:meth:`Selector.record`) and says where the target pairs stand (:meth:`Selector.status`).

Incremental updates (per judgment, not recomputation): for AP the per-system sums
:math:`\sum_{j\ \mathrm{judged\ rel}} a_{ij}` and :math:`\sum_{j\ \mathrm{unjudged}} a_{ij}` of every
document change by :math:`\min(1/r_i, 1/r_k)` when document k is judged — O(n_t·S) on its topic;
only that topic's weights and moments are recomputed, and the other topics' are recomputed only
when the set of undecided pairs changes (or, for RTC, when the probabilities are refitted).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from bayeval.data.qrels import Qrels
from bayeval.data.rankdata import RankData, TopicRanks
from bayeval.errors import BayevalInputError
from bayeval.expected import p_less_normal
from bayeval.expected.topic_moments import pair_moments, point_probabilities
from bayeval.measures import Measure
from bayeval.methods import CLOSED_FORM_METHODS
from bayeval.selection.measure import GAINS, SelectionMeasure
from bayeval.selection.remaining import judgments_to_decide
from bayeval.selection.results import Candidate, SelectionStatus
from bayeval.selection.weights import _linear_system_weights, gain_values, inverse_ranks, masked_pair_sums

__all__ = ["DEFAULT_TOPIC_TOLERANCE", "MOMENTS", "MTCSelector", "Selector", "check_tolerance"]

MOMENTS = CLOSED_FORM_METHODS
_TIE = 1e-12  # relative tolerance under which two scores are a tie

DEFAULT_TOPIC_TOLERANCE = 0.2
"""The judging page's topic tolerance: stay on the assessor's topic while a document there is worth at least
80% of the best anywhere. Chosen on Robust 2003 (40 random pairs, MTC: 84% of consecutive judgments on
the same topic, +4% judgments); on TREC-8, out of sample, 89% at -0.2% (docs/judging.md, "Staying on a
topic")."""


def check_tolerance(tolerance) -> float:
    """A topic-batching tolerance in [0, 1) (:meth:`Selector.select`), else a one-line error."""
    if (isinstance(tolerance, bool) or not isinstance(tolerance, (int, float, np.floating))
            or not 0.0 <= tolerance < 1.0):
        raise BayevalInputError(f"tolerance: must be a number in [0, 1), got {tolerance!r}")
    return float(tolerance)
_ZERO = 1e-12  # weights below this (absolute) cannot move a difference: rounding residue of the updates


def resolve_pairs(systems: Sequence[str], pairs) -> tuple[np.ndarray, np.ndarray]:
    """Pairs of system names/indices → two index arrays (default: every pair a < b)."""
    n = len(systems)
    if pairs is None:
        a, b = np.triu_indices(n, k=1)
        if not len(a):
            raise BayevalInputError("runs: at least two runs are needed to compare")
        return a.astype(np.int64), b.astype(np.int64)
    out_a, out_b = [], []
    try:
        items = list(pairs)
    except TypeError:
        raise BayevalInputError("pairs: expected a sequence of (run_a, run_b)") from None
    for item in items:
        if isinstance(item, (str, bytes)) or len(item) != 2:
            raise BayevalInputError(f"pairs: each pair must be (run_a, run_b), got {item!r}")
        idx = []
        for x in item:
            if isinstance(x, str):
                if x not in systems:
                    raise BayevalInputError(f"pairs: unknown run {x!r}")
                idx.append(systems.index(x))
            elif isinstance(x, (int, np.integer)) and not isinstance(x, bool) and 0 <= x < n:
                idx.append(int(x))
            else:
                raise BayevalInputError(f"pairs: {x!r} is neither a run name nor an index < {n}")
        if idx[0] == idx[1]:
            raise BayevalInputError(f"pairs: a run compared with itself: {item!r}")
        out_a.append(idx[0])
        out_b.append(idx[1])
    if not out_a:
        raise BayevalInputError("pairs: give at least one pair")
    return np.array(out_a, dtype=np.int64), np.array(out_b, dtype=np.int64)


@dataclass(slots=True)
class _TopicState:
    """What a selector holds of one topic: the runs' rankings (``ranked``, ``lengths``, inverse ranks ``inv``),
    what is known of each document (``judged``, ``grades``, probability of relevance ``p``) and the
    incremental sums of its measure (AP: ``sj``, ``su`` of :func:`~bayeval.selection.weights.masked_pair_sums`;
    other measures: the linear weights ``lin``)."""

    ranked: np.ndarray
    lengths: np.ndarray
    inv: np.ndarray
    judged: np.ndarray
    grades: np.ndarray
    p: np.ndarray
    sj: np.ndarray | None = None
    su: np.ndarray | None = None
    lin: object = None


class Selector:
    """Shared state and bookkeeping of every selection method (see :class:`MTCSelector`).

    Subclasses define the selection score of the documents of one topic (:meth:`_topic_scores`).
    """

    method = "base"

    def __init__(self, data: RankData, *, pairs=None, measure="AP", alpha: float = 0.95, probabilities=None,
                 default_p: float = 0.5, moments: str = "delta", nodes: int = 64, gain: str = "exponential",
                 max_grade: int | None = None) -> None:
        if not isinstance(data, RankData):
            raise BayevalInputError(f"data: expected a RankData (RankData.build(runs, qrels, depth=...)), "
                                    f"got {type(data).__name__}")
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating)) or not 0.5 < alpha < 1.0:
            raise BayevalInputError(f"alpha: must be a confidence level in (0.5, 1), got {alpha!r}")
        if moments not in MOMENTS:
            raise BayevalInputError(f"moments: must be one of {', '.join(MOMENTS)}, got {moments!r}")
        if gain not in GAINS:
            raise BayevalInputError(f"gain: must be one of {', '.join(GAINS)}, got {gain!r}")
        self.data = data
        self.measure = SelectionMeasure.parse(measure)
        self.alpha = float(alpha)
        self.moments = moments
        self.nodes = int(nodes)
        self.gain = gain
        self.systems = tuple(data.systems)
        self._pa, self._pb = resolve_pairs(self.systems, pairs)
        self.level = data[0].relevance_level if len(data) else 1
        top = max((int(tr.grades[tr.judged].max()) for tr in data if tr.judged.any()), default=self.level)
        self.max_grade = max(top, self.level) if max_grade is None else int(max_grade)
        if self.max_grade < self.level:
            raise BayevalInputError(f"max_grade: must be >= the relevance level {self.level}, got {max_grade!r}")
        self._g_max = float(gain_values(self.max_grade, gain)) if self.measure.family == "DCG" else 1.0
        self._g_rel = float(gain_values(self.level, gain)) if self.measure.family == "DCG" else 1.0
        probs = point_probabilities(data, probabilities, default_p)
        T = len(data)
        self._index = {t: k for k, t in enumerate(data.topics)}
        self._doc_index: list[dict] = [None] * T  # built lazily (docno → index)
        self._state: list[_TopicState] = []
        best = []
        for tr, p in zip(data, probs, strict=True):
            ranks = np.asarray(tr.ranks, dtype=np.int64)
            st = _TopicState(np.ascontiguousarray(tr.ranked, dtype=np.int32),
                             np.ascontiguousarray(tr.lengths, dtype=np.int32), inverse_ranks(ranks),
                             np.array(tr.judged, dtype=bool), np.array(tr.grades, dtype=np.int64),
                             np.array(p, dtype=np.float64))
            best.append(np.where(ranks > 0, ranks, np.iinfo(np.int64).max).min(axis=1) if ranks.shape[1] else
                        np.full(tr.n_docs, np.iinfo(np.int64).max))
            if self.measure.family == "AP":
                rel = st.judged & (st.grades >= self.level)
                st.sj = masked_pair_sums(st.inv, tr.ranked, tr.lengths, rel)
                st.su = masked_pair_sums(st.inv, tr.ranked, tr.lengths, ~st.judged)
            else:
                st.lin = _linear_system_weights(ranks, self.measure)
            self._state.append(st)
        self._offsets = np.concatenate([[0], np.cumsum([tr.n_docs for tr in data])]).astype(np.int64)
        self._spec = Measure(self.measure.family, self.measure.k) if self.measure.ratio else None
        P = len(self._pa)
        self._e = np.zeros((P, T))
        self._v = np.zeros((P, T))
        self._lo = np.full((P, T), np.nan)
        self._hi = np.full((P, T), np.nan)
        self._score = np.zeros(int(self._offsets[-1]))
        self._sign = np.zeros(int(self._offsets[-1]), dtype=np.int8)
        self._argpair = np.zeros(int(self._offsets[-1]), dtype=np.int64)
        self._best_all = np.concatenate(best) if T else np.zeros(0, np.int64)
        self._judgments = 0
        self._history: list[tuple[str, str, int]] = []
        self._last_sign = 0
        for t in range(T):
            self._topic_moments(t)
        self._status = self._make_status()
        self._undecided = ~self._status.decided
        self._refresh_scores()
        self._set_exhausted()

    # ------------------------------------------------------------------------ public
    @property
    def pairs(self) -> list[tuple[str, str]]:
        return [(self.systems[a], self.systems[b]) for a, b in zip(self._pa, self._pb, strict=True)]

    @property
    def judgments(self) -> int:
        """Judgments recorded through this selector (initial judgments excluded)."""
        return self._judgments

    @property
    def history(self) -> tuple:
        """``(topic, docno, grade)`` of every recorded judgment, in order."""
        return tuple(self._history)

    def judged_qrels(self, relevance_level: int | None = None):
        """The recorded judgments as :class:`~bayeval.data.Qrels` (``relevance_level``: default the
        selector's), ``None`` when nothing was judged."""
        if not self._history:
            return None
        frame = pd.DataFrame(list(self._history), columns=["topic", "docno", "grade"])
        return Qrels.from_frame(frame, relevance_level=self.level if relevance_level is None else relevance_level)

    @property
    def done(self) -> bool:
        return self._status.done

    def status(self) -> SelectionStatus:
        """The target pairs now: E, Var and P(Δ<0) of the mean difference, bounds, decisions."""
        return self._status

    def judgments_remaining(self) -> np.ndarray:
        """Per target pair, an estimate of the judgments it still needs (0 when decided; ``nan`` when no
        amount of judging would decide it with :math:`E[\\Delta]` where it is now).

        The variance-removal estimate of :func:`bayeval.selection.remaining.judgments_to_decide`: the
        fewest unjudged documents whose shares of :math:`\\mathrm{Var}[\\Delta]` bring the pair to
        :math:`|E[\\Delta]| \\ge z_\\alpha \\mathrm{sd}` (docs/judging.md, "Judgments remaining").
        """

        st = self._status
        out = np.zeros(len(self._pa))
        und = np.flatnonzero(~st.decided)
        if not len(und):
            return out
        T = max(len(self.data), 1)
        shares = []  # per topic, (n_unjudged, len(und))
        for t in range(len(self.data)):
            free = ~self._state[t].judged
            if not free.any():
                continue
            p = self._state[t].p[free]
            w = self._pair_weights(t, und)[0][free]
            c = (p * (1.0 - p))[:, None] * (self._g_rel * w) ** 2
            if not self.measure.linear:  # first-order shares, rescaled to the topic's exact variance
                tot = c.sum(axis=0)
                c = c * np.where(tot > 0, self._v[und, t] / np.where(tot > 0, tot, 1.0), 0.0)
            shares.append(c / T**2)
        allc = np.concatenate(shares) if shares else np.zeros((0, len(und)))
        for j, k in enumerate(und):
            out[k] = judgments_to_decide(st.expected[k], st.variance[k], allc[:, j], self.alpha)
        return out

    def probabilities(self) -> list[np.ndarray]:
        """Per topic, the current probability of relevance (1/0 for judged documents)."""
        return [st.p.copy() for st in self._state]

    def is_judged(self, topic: str, docno: str) -> bool:
        t, i = self._locate(topic, docno)
        return bool(self._state[t].judged[i])

    def check_judgment(self, topic: str, docno: str, grade) -> int | None:
        """Validate a judgment without recording it; returns the grade already recorded (None: unjudged).

        Raises
        ------
        BayevalInputError
            A non-integer grade or one above ``max_grade`` (DCG), an unknown topic or document; its
            ``argument`` (``"grade"``, ``"topic"``, ``"docno"``) names the field at fault.
        """
        self._check_grade(grade)
        t, i = self._locate(topic, docno)
        return int(self._state[t].grades[i]) if self._state[t].judged[i] else None

    def select(self, n: int = 1, *, stay_on: str | None = None, tolerance: float = 0.0) -> list[Candidate]:
        """The next ``n`` documents to judge, best first (empty when nothing useful is left).

        With ``n > 1`` the batch is the top ``n`` by the current weights (no update between them);
        judge one at a time (``n=1``) for the exact algorithm.

        Topic batching (``n=1`` only): with ``stay_on`` a topic (the one the assessor is reading) and a
        ``tolerance`` :math:`\\tau \\in [0, 1)`, the best document of that topic is chosen whenever its score
        is at least :math:`(1 - \\tau)\\max_d s_d`, the best score anywhere; otherwise the best document
        overall. :math:`\\tau = 0` is the exact algorithm; docs/judging.md ("Staying on a topic") gives
        the measured cost in judgments.
        """
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise BayevalInputError(f"n: must be a positive integer, got {n!r}")
        tolerance = check_tolerance(tolerance)
        score = self._score
        if not len(score):
            return []
        if n == 1:
            m = float(score.max())
            if m <= 0.0:
                return []
            floor = m * (1.0 - _TIE)
            if stay_on is not None and tolerance > 0.0 and stay_on in self._index:
                t = self._index[stay_on]
                lo, hi = int(self._offsets[t]), int(self._offsets[t + 1])
                if hi > lo:
                    mt = float(score[lo:hi].max())
                    if mt > 0.0 and mt >= m * (1.0 - tolerance):
                        floor = mt * (1.0 - _TIE)
                        score = np.zeros_like(self._score)
                        score[lo:hi] = self._score[lo:hi]
            cand = np.flatnonzero(score >= floor)
            if len(cand) > 1 and self.measure.family in ("P", "recall") and self._last_sign:
                pref = cand[self._sign[cand] == -self._last_sign]  # the tutorial's alternation of +/- weights
                if len(pref):
                    cand = pref
            pick = [int(cand[np.argmin(self._best_all[cand])])]  # argmin keeps the first on ties
        else:
            live = np.flatnonzero(score > 0.0)
            order = np.lexsort((live, self._best_all[live], -score[live]))
            pick = [int(x) for x in live[order[:n]]]
        return [self._candidate(g) for g in pick]

    def record(self, topic: str, docno: str, grade: int) -> bool:
        """Take one judgment; returns False when it was already recorded with the same grade.

        Raises
        ------
        BayevalInputError
            Unknown topic or document, a non-integer grade, or a different grade for a judged document.
        """
        t, i = self._locate(topic, docno)
        self._check_grade(grade)
        grade = int(grade)
        if self._state[t].judged[i]:
            old = int(self._state[t].grades[i])
            if old == grade:
                return False
            raise BayevalInputError(f"grade: document {docno!r} of topic {topic!r} is already judged {old}, "
                                    f"not {grade}")
        self._apply(t, i, grade)
        self._judgments += 1
        self._history.append((self.data.topics[t], str(docno), grade))
        if self.measure.family in ("P", "recall"):
            g = self._offsets[t] + i
            self._last_sign = int(self._sign[g]) or self._last_sign
        self._after_record(t)
        return True

    def replay(self, judgments) -> int:
        """Record many ``(topic, docno, grade)`` judgments at once (reopening a campaign); returns how many were new.

        The state afterwards is the one :meth:`record` one at a time would reach (weights and moments
        depend only on the set of judgments; :class:`~bayeval.selection.RTCSelector` refits at the same
        judgment counts). Validation happens first: a bad judgment raises before anything is applied.
        """
        items = []
        seen = {}
        for topic, docno, grade in judgments:
            t, i = self._locate(topic, docno)
            self._check_grade(grade)
            key = (t, i)
            old = int(self._state[t].grades[i]) if self._state[t].judged[i] else seen.get(key)
            if old is not None:
                if old != int(grade):
                    raise BayevalInputError(f"grade: document {docno!r} of topic {topic!r} is already judged "
                                            f"{old}, not {int(grade)}")
                continue
            seen[key] = int(grade)
            items.append((t, i, int(grade), str(docno)))
        self._replay_items(items)
        return len(items)

    def _replay_items(self, items) -> None:
        for t, i, grade, docno in items:
            self._apply(t, i, grade)
            self._judgments += 1
            self._history.append((self.data.topics[t], docno, grade))
        self._recompute_all()
        if items and self.measure.family in ("P", "recall"):
            t, i = items[-1][0], items[-1][1]
            self._last_sign = int(self._sign[self._offsets[t] + i]) or self._last_sign

    def _recompute_all(self) -> None:
        for t in range(len(self.data)):
            self._topic_moments(t)
        self._update_status(changed=None)

    # ------------------------------------------------------------------------ internals
    def _check_grade(self, grade) -> None:
        if isinstance(grade, bool) or not isinstance(grade, (int, np.integer)):
            raise BayevalInputError(f"must be an integer, got {grade!r}", argument="grade")
        if self.measure.family == "DCG" and grade > self.max_grade:
            # the DCG bounds (and the decisions taken on them) assume no gain above max_grade's
            raise BayevalInputError(f"{int(grade)} is above max_grade={self.max_grade}, the highest grade the "
                                    f"{self.measure.name} bounds allow for; start the selection with max_grade >= "
                                    f"{int(grade)} (--max-grade)", argument="grade")

    def _locate(self, topic, docno) -> tuple[int, int]:
        t = self._index.get(str(topic))
        if t is None:
            raise BayevalInputError(f"{topic!r} is not a topic of this campaign", argument="topic")
        idx = self._doc_index[t]
        if idx is None:
            idx = {d: k for k, d in enumerate(self.data[t].docnos.tolist())}
            self._doc_index[t] = idx
        i = idx.get(str(docno))
        if i is None:
            raise BayevalInputError(f"{docno!r} is not a document of topic {topic!r} (no target run retrieves it)",
                                    argument="docno")
        return t, i

    def _apply(self, t: int, i: int, grade: int) -> None:
        rel, st = grade >= self.level, self._state[t]
        st.judged[i], st.grades[i], st.p[i] = True, grade, 1.0 if rel else 0.0
        if self.measure.family == "AP":
            d = np.minimum(st.inv, st.inv[i])  # a_ik for every document and system
            st.su -= d
            if rel:
                st.sj += d

    def _after_record(self, t: int) -> None:
        self._topic_moments(t)
        self._update_status(changed=[t])

    def _update_status(self, changed=None) -> None:
        self._status = self._make_status()
        und = ~self._status.decided
        if changed is None or not np.array_equal(und, self._undecided):
            self._undecided = und
            self._refresh_scores()
        else:
            for t in changed:
                self._refresh_scores(t)
        self._set_exhausted()

    def _refresh_scores(self, t: int | None = None) -> None:
        topics = range(len(self.data)) if t is None else [t]
        und = np.flatnonzero(self._undecided)
        for k in topics:
            lo, hi = self._offsets[k], self._offsets[k + 1]
            score, sign, arg = self._topic_scores(k, und)
            score = np.where(self._state[k].judged, 0.0, score)
            self._score[lo:hi] = score
            self._sign[lo:hi] = sign
            self._argpair[lo:hi] = arg

    def _candidate(self, g: int) -> Candidate:
        t = int(np.searchsorted(self._offsets, g, side="right") - 1)
        i = g - int(self._offsets[t])
        pair = self._argpair[g]
        a, b = (self.systems[self._pa[pair]], self.systems[self._pb[pair]]) if self.method != "pool" else (None, None)
        return Candidate(self.data.topics[t], str(self.data[t].docnos[i]), float(self._score[g]), a, b)

    def _expected_r(self, t: int) -> float:
        return max(float(self._state[t].p.sum()), 1e-9)

    def _pair_weights(self, t: int, und: np.ndarray):
        """(w_rel, w_nonrel) of shape (n_t, len(und)); equal for the linear measures."""
        a, b = self._pa[und], self._pb[und]
        if self.measure.family == "AP":
            st = self._state[t]
            inv, sj, su = st.inv, st.sj, st.su
            w_rel = (inv[:, a] - inv[:, b]) + (sj[:, a] - sj[:, b])
            return w_rel, w_rel + (su[:, a] - su[:, b])
        lin = self._state[t].lin
        w = lin[:, a] - lin[:, b]
        return w, w

    def _topic_scores(self, t: int, und: np.ndarray):
        raise NotImplementedError

    def _topic_moments(self, t: int) -> None:
        """E and Var of Δ on topic t for every pair (+ bounds for the linear measures)."""
        st = self._state[t]
        judged, p = st.judged, st.p
        if self.measure.linear:
            w = st.lin[:, self._pa] - st.lin[:, self._pb]
            if self.measure.family == "P":
                g = (st.grades >= self.level).astype(np.float64)
            else:
                g = gain_values(st.grades, self.gain)
            mu = np.where(judged, g, p * self._g_rel)
            var = np.where(judged, 0.0, p * (1.0 - p) * self._g_rel ** 2)
            self._e[:, t] = mu @ w
            self._v[:, t] = var @ (w * w)
            base = np.where(judged, g, 0.0) @ w
            wu = w[~judged]
            self._lo[:, t] = base + self._g_max * np.minimum(wu, 0.0).sum(axis=0)
            self._hi[:, t] = base + self._g_max * np.maximum(wu, 0.0).sum(axis=0)
        else:
            rel = judged & (st.grades >= self.level)
            pf = np.ascontiguousarray(np.where(judged, rel.astype(np.float64), p))
            e, v = pair_moments(st.ranked, st.lengths, judged, st.grades, pf, self._spec, self.moments, self.nodes,
                                self._pa, self._pb)
            self._e[:, t] = e
            self._v[:, t] = v

    def _make_status(self) -> SelectionStatus:
        T = max(len(self.data), 1)
        e = self._e.mean(axis=1) if len(self.data) else np.zeros(len(self._pa))
        v = self._v.sum(axis=1) / T**2
        p_less = np.asarray(p_less_normal(e, v), dtype=np.float64)
        sign = np.zeros(len(self._pa), dtype=np.int64)
        sign[p_less >= self.alpha] = -1
        sign[p_less <= 1.0 - self.alpha] = 1
        decided = sign != 0
        lo = self._lo.mean(axis=1) if len(self.data) else np.full(len(self._pa), np.nan)
        hi = self._hi.mean(axis=1) if len(self.data) else np.full(len(self._pa), np.nan)
        if self.measure.linear:
            exact = np.abs(hi - lo) <= 1e-12 * np.maximum(1.0, np.abs(lo))
            by_bound = (lo > 0) | (hi < 0) | exact
            sign = np.where(by_bound, np.where(exact, np.sign(np.round(lo, 12)), np.sign(lo + hi)), sign)
            sign = sign.astype(np.int64)
            decided = decided | by_bound
        return SelectionStatus(self.measure.name, self.alpha, tuple(self.systems[a] for a in self._pa),
                               tuple(self.systems[b] for b in self._pb), e, v, p_less, lo, hi, decided,
                               sign, self._judgments, False)

    def _set_exhausted(self) -> None:
        st = self._status
        if not st.decided.all():
            ex = not bool((self._score > 0).any())
            if ex != st.exhausted:
                self._status = SelectionStatus(st.measure, st.alpha, st.run_a, st.run_b, st.expected, st.variance,
                                               st.p_less, st.lower, st.upper, st.decided, st.sign, st.judgments, ex)

    def topic_ranks(self) -> RankData:
        """The data with the judgments made so far (a new :class:`RankData`; for refits and exports)."""
        per = tuple(TopicRanks(tr.topic, tr.systems, tr.docnos, tr.ranked, tr.lengths, st.judged.copy(),
                               st.grades.copy(), tr.relevance_level, tr.has_results)
                    for tr, st in zip(self.data, self._state, strict=True))
        return RankData(self.data.systems, self.data.topics, per, self.data.depth)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(measure={self.measure.name}, pairs={len(self._pa)}, "
                f"topics={len(self.data)}, {self._status.summary()})")


class MTCSelector(Selector):
    r"""Minimal test collections: judge the document whose judgment can move an undecided difference most.

    Parameters
    ----------
    data : RankData
        The target runs (cut to the depth of interest) aligned with the judgments made so far.
    pairs : sequence of (run_a, run_b), optional
        Target pairs (names or indices); default every pair of runs.
    measure : str
        ``"AP"`` (MAP over topics), ``"P@k"``, ``"DCG@k"`` or ``"recall@k"``.
    alpha : float
        A pair is decided when :math:`P(\Delta<0) \ge \alpha` or :math:`\le 1-\alpha` (and, for P@k and
        DCG@k, when the bounds exclude 0).
    probabilities, default_p : see :func:`bayeval.expected.compare_systems`
        Probability of relevance of unjudged documents (MTC: 0.5 for all, carterette2007 Algorithm 1).
    moments : {"delta", "exact", "paper"}
        Moments of ΔAP (:func:`bayeval.expected.compare_systems`'s ``method``).
    gain : {"exponential", "linear"}
        DCG gain of a grade g: :math:`2^g-1` (the tutorial's) or g.
    max_grade : int, optional
        Highest grade an assessor can give (DCG bounds; default the highest judged grade, at least 1).
        For DCG a judgment above it is refused: the bounds, and the pairs decided on them, assumed it.

    Notes
    -----
    Weights (:mod:`bayeval.selection.weights`): P@k :math:`w_i = (I(r^a_i\le k)-I(r^b_i\le k))/k`, alternating
    between documents of positive and negative weight; DCG@k with :math:`1/\log_2(r+1)` discounts; recall@k
    the P@k weights over :math:`E[R_t]`; AP :math:`\max(|w^R_i|, |w^N_i|)` over :math:`E[R_t]` (ΔMAP averages
    ΔSP_t/R_t). Many topics: documents of all topics compete in one ranking; many pairs: a document's
    weight is its largest over the pairs still undecided. Ties go to the document with the best rank.

    The bounds of a linear difference over topics are the means of the per-topic bounds
    (:func:`~bayeval.selection.weights.linear_bounds`); the confidence is the normal approximation
    :math:`P(\Delta<0)=\Phi(-E[\Delta]/\sqrt{\mathrm{Var}[\Delta]})` with unjudged documents relevant
    with probability p (DCG: gain of the relevance level when relevant).

    References
    ----------
    .. [1] B. Carterette, J. Allan, R. Sitaraman. Minimal test collections for retrieval evaluation. SIGIR 2006.
    .. [2] B. Carterette. Robust test collections for retrieval evaluation. SIGIR 2007, Algorithm 1.
    .. [3] B. Carterette, E. Kanoulas, E. Yilmaz. Advances on the development of evaluation measures, tutorial.

    Examples
    --------
    >>> from bayeval.data import RankData
    >>> from bayeval.synthetic import make_collection
    >>> col = make_collection(n_topics=3, n_systems=2, n_docs=60, depth=20, seed=1)
    >>> sel = MTCSelector(RankData.build(col.runs, None, depth=20), measure="P@5")
    >>> while not sel.done:
    ...     c = sel.select()[0]
    ...     _ = sel.record(c.topic, c.docno, col.qrels.grade_of(c.topic, c.docno) or 0)
    >>> print(sel.status().summary())
    7 judgments; 1/1 pairs decided at alpha=0.95 on P@5
    """

    method = "mtc"

    def _topic_scores(self, t: int, und: np.ndarray):
        n = len(self._state[t].p)
        if not len(und):
            return np.zeros(n), np.zeros(n, np.int8), np.zeros(n, np.int64)
        w_rel, w_non = self._pair_weights(t, und)
        a_rel, a_non = np.abs(w_rel), np.abs(w_non)
        # the incremental sums leave rounding residue (~1e-17) where a weight is exactly 0: treat as 0
        a_rel[a_rel < _ZERO] = 0.0
        a_non[a_non < _ZERO] = 0.0
        s = np.maximum(a_rel, a_non)
        arg = s.argmax(axis=1)
        rows = np.arange(n)
        best = s[rows, arg]
        signed = np.where(a_rel[rows, arg] >= a_non[rows, arg], w_rel[rows, arg], w_non[rows, arg])
        if self.measure.family == "DCG":
            best = best * self._g_max
        elif self.measure.ratio:
            best = best / self._expected_r(t)
        return best, np.sign(signed).astype(np.int8), und[arg]
