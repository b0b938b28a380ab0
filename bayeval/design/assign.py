"""The assignment: which sites are held out of which topics (:class:`Design`).

:func:`assign_design` lays out paper Table 1: the all-site baseline block :math:`T_0` first, then
b blocks, each running round-robin through the :math:`\\binom{m}{k}` held-out combinations in the
paper's order; topics can be shuffled with a seed before they are laid out. A :class:`Design` can
also be built from any topic × site contribution matrix (:meth:`Design.from_frame`), e.g. a design
that was run in practice with a partial last block.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from math import comb

import numpy as np
import pandas as pd

from bayeval.design.plan import DesignPlan, plan_design
from bayeval.errors import BayevalInputError
from bayeval.io.designs import BLOCK, TOPIC

__all__ = ["Design", "assign_design", "held_out_combinations"]


def held_out_combinations(n_sites: int, k: int) -> list[tuple[int, ...]]:
    r"""The :math:`\binom{m}{k}` held-out site combinations in the order of paper Table 1.

    Site indices are 0-based. The paper's block starts by holding out the last two sites
    (S5, S6 for m = 6), then S4 and S6, … and ends with S1, S2: the k-subsets in *reverse
    colexicographic* order, which is ``itertools.combinations`` over the sites taken in reverse.

    Examples
    --------
    >>> [tuple(s + 1 for s in c) for c in held_out_combinations(4, 2)]
    [(4, 3), (4, 2), (4, 1), (3, 2), (3, 1), (2, 1)]
    """
    return list(combinations(range(n_sites - 1, -1, -1), k))


def _freeze(arr: np.ndarray) -> np.ndarray:
    arr.flags.writeable = False
    return arr


@dataclass(frozen=True, eq=False)
class Design:
    """Which sites contributed judgments to which topics.

    Attributes
    ----------
    topics : tuple of str
        Topics in design order (the all-site baseline first when built by :func:`assign_design`).
    sites : tuple of str
    contributes : ndarray of bool, shape (T, m)
        ``contributes[t, s]``: site ``s``'s runs contributed to the judgments of topic ``t``;
        false means the site was held out.
    blocks : ndarray of int64, shape (T,)
        Block of each topic: 0 for the all-site baseline :math:`T_0`, ``1..b`` for :math:`T_1..T_b`.
    k : int or None
        Sites held out per non-baseline topic, when it is the same for all of them.

    Notes
    -----
    The topic sets of the three kinds of reusability (paper §3.1) for sites ``a`` and ``b``:

    ============================ =========================== ===============================
    kind                          baseline topics              reuse topics
    ============================ =========================== ===============================
    within-site (site a)          a contributed                a held out
    between-site (a, b)           a and b contributed          a and b held out
    participant comparison        a and b contributed          a held out, b contributed
    (new a, participant b)
    ============================ =========================== ===============================

    References
    ----------
    .. [1] Carterette et al., Reusable test collections through experimental design, SIGIR 2010, §3.1.

    Examples
    --------
    >>> d = assign_design(20, ["A", "B", "C", "D"], k=2, min_baseline=8)
    >>> d.topics_of("within", "A")[1]          # topics A is held out of
    ('11', '13', '14', '17', '19', '20')
    >>> d.held_out_counts().tolist(), int(d.pair_counts()[0, 1])
    ([6, 6, 6, 6], 2)
    """

    topics: tuple[str, ...]
    sites: tuple[str, ...]
    contributes: np.ndarray
    blocks: np.ndarray
    k: int | None = None

    def __post_init__(self) -> None:
        topics = tuple(str(t) for t in self.topics)
        sites = tuple(str(s) for s in self.sites)
        if not topics:
            raise BayevalInputError("topics: a design needs at least one topic")
        if len(sites) < 2:
            raise BayevalInputError(f"sites: a design needs at least 2 sites, got {len(sites)}")
        for name, items in (("topics", topics), ("sites", sites)):
            seen: set[str] = set()
            for x in items:
                if x in seen:
                    raise BayevalInputError(f"{name}: {x!r} appears twice")
                seen.add(x)
        if TOPIC in sites or BLOCK in sites:
            raise BayevalInputError(f"sites: {TOPIC!r} and {BLOCK!r} are reserved names")
        contrib = np.array(self.contributes, dtype=bool)
        if contrib.shape != (len(topics), len(sites)):
            raise BayevalInputError(f"contributes: shape {contrib.shape} does not match (topics, sites) = "
                                    f"{(len(topics), len(sites))}")
        none = np.flatnonzero(~contrib.any(axis=1))
        if len(none):
            raise BayevalInputError(f"contributes: no site contributes to topic {topics[none[0]]!r}: "
                                    "it would have no judgments")
        blocks = np.array(self.blocks, dtype=np.int64)
        if blocks.shape != (len(topics),):
            raise BayevalInputError(f"blocks: expected one block per topic ({len(topics)}), got shape {blocks.shape}")
        if (blocks < 0).any():
            raise BayevalInputError("blocks: block numbers must be >= 0")
        k = None if self.k is None else int(self.k)
        for name, value in (("topics", topics), ("sites", sites), ("contributes", _freeze(contrib)),
                            ("blocks", _freeze(blocks)), ("k", k)):
            object.__setattr__(self, name, value)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_frame(cls, frame: pd.DataFrame) -> Design:
        """Build from a table with a ``topic`` column, one boolean (or 1/0) column per site and an
        optional ``block`` column (default: 0 for topics every site contributes to, else 1)."""
        if TOPIC not in frame.columns:
            raise BayevalInputError(f"frame: missing column {TOPIC!r}")
        sites = [str(c) for c in frame.columns if c not in (TOPIC, BLOCK)]
        contrib = np.zeros((len(frame), len(sites)), dtype=bool)
        for j, s in enumerate(sites):
            col = frame[s]
            values = col.to_numpy()
            if col.dtype.kind == "b":
                contrib[:, j] = values
            else:
                try:
                    num = pd.to_numeric(col).to_numpy(dtype=np.float64)
                except (TypeError, ValueError):
                    raise BayevalInputError(f"frame: column {s!r} must hold 1 (contributes) or 0 (held out)") \
                        from None
                if not np.isin(num, (0.0, 1.0)).all():
                    raise BayevalInputError(f"frame: column {s!r} must hold 1 (contributes) or 0 (held out)")
                contrib[:, j] = num == 1.0
        if BLOCK in frame.columns:
            try:
                blocks = pd.to_numeric(frame[BLOCK]).to_numpy()
            except (TypeError, ValueError):
                raise BayevalInputError(f"frame: column {BLOCK!r} must hold integers") from None
            if not np.all(np.mod(blocks, 1) == 0):
                raise BayevalInputError(f"frame: column {BLOCK!r} must hold integers")
        else:
            blocks = np.where(contrib.all(axis=1), 0, 1)
        held = (~contrib[~contrib.all(axis=1)]).sum(axis=1)
        k = int(held[0]) if len(held) and (held == held[0]).all() else None
        return cls(tuple(frame[TOPIC].astype(str)), tuple(sites), contrib, blocks.astype(np.int64), k)

    # ------------------------------------------------------------------ shape
    @property
    def n_topics(self) -> int:
        return len(self.topics)

    @property
    def n_sites(self) -> int:
        return len(self.sites)

    @property
    def baseline_topics(self) -> tuple[str, ...]:
        """Topics every site contributed to (the all-site baseline)."""
        return tuple(np.asarray(self.topics, dtype=object)[self.contributes.all(axis=1)])

    def site_index(self, site: str) -> int:
        try:
            return self.sites.index(str(site))
        except ValueError:
            raise BayevalInputError(f"site: unknown site {site!r}; the design's sites are "
                                    f"{', '.join(self.sites)}") from None

    def held_out(self, topic: str) -> tuple[str, ...]:
        """Sites held out of ``topic``."""
        try:
            t = self.topics.index(str(topic))
        except ValueError:
            raise BayevalInputError(f"topic: {topic!r} is not in the design") from None
        return tuple(s for s, c in zip(self.sites, self.contributes[t], strict=True) if not c)

    def held_out_counts(self) -> np.ndarray:
        """``(m,)`` number of topics each site is held out of."""
        return (~self.contributes).sum(axis=0)

    def pair_counts(self) -> np.ndarray:
        """``(m, m)`` number of topics each pair of sites is held out of together (diagonal: alone
        or not, the site's own count)."""
        h = (~self.contributes).astype(np.int64)
        return h.T @ h

    # ------------------------------------------------------------------ topic sets
    def masks(self, kind: str, site: str, other: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Boolean ``(T,)`` masks of the baseline and reuse topics of one comparison.

        Parameters
        ----------
        kind : {"within", "between", "participant"}
        site : str
            The site (within), the first of the pair (between), the new site (participant).
        other : str, optional
            The second site (between), the participant site (participant).
        """
        c = self.contributes
        a = self.site_index(site)
        if kind == "within":
            if other is not None:
                raise BayevalInputError("other: within-site comparisons take one site")
            return c[:, a].copy(), ~c[:, a]
        if kind not in ("between", "participant"):
            raise BayevalInputError(f"kind: must be 'within', 'between' or 'participant', got {kind!r}")
        if other is None:
            raise BayevalInputError(f"other: {kind} comparisons need a second site")
        b = self.site_index(other)
        if a == b:
            raise BayevalInputError(f"other: must differ from site ({site!r})")
        base = c[:, a] & c[:, b]
        reuse = ~c[:, a] & ~c[:, b] if kind == "between" else ~c[:, a] & c[:, b]
        return base, reuse

    def topics_of(self, kind: str, site: str, other: str | None = None) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The baseline and reuse topics of one comparison (see :meth:`masks`)."""
        base, reuse = self.masks(kind, site, other)
        t = np.asarray(self.topics, dtype=object)
        return tuple(t[base]), tuple(t[reuse])

    def plan(self) -> DesignPlan | None:
        """The :class:`DesignPlan` this design realises, or ``None`` if it is not a complete
        round-robin design (unequal held-out counts, mixed k, partial blocks)."""
        if self.k is None or self.k < 1:
            return None
        m, k = self.n_sites, self.k
        n = int(self.contributes.all(axis=1).sum())
        rest = self.n_topics - n
        C = comb(m, k)
        if rest % C or rest == 0:
            return None
        b = rest // C
        if not (self.held_out_counts() == b * comb(m - 1, k - 1)).all():
            return None
        return plan_design(self.n_topics, m, k, n, blocks=b)

    # ------------------------------------------------------------------ output
    def to_frame(self) -> pd.DataFrame:
        """Columns ``topic, block, <site>...`` with 1 = contributed, 0 = held out; rows in design order."""
        frame = pd.DataFrame({TOPIC: list(self.topics), BLOCK: self.blocks})
        for j, s in enumerate(self.sites):
            frame[s] = self.contributes[:, j].astype(np.int64)
        return frame

    def to_csv(self, path) -> None:
        """Write :meth:`to_frame` as csv (read back with :func:`bayeval.design.read_design`)."""
        self.to_frame().to_csv(path, index=False, lineterminator="\n")

    def summary(self) -> str:
        counts = self.held_out_counts()
        pairs = self.pair_counts()[np.triu_indices(self.n_sites, 1)]
        n_base = int(self.contributes.all(axis=1).sum())
        lines = [f"Design: {self.n_topics} topics, {self.n_sites} sites"
                 + (f", k = {self.k} held out per topic" if self.k is not None else ", varying k"),
                 f"  all-site baseline: {n_base} topics; blocks: {int(self.blocks.max())}",
                 f"  topics held out per site: {int(counts.min())}"
                 + ("" if counts.min() == counts.max() else f"..{int(counts.max())}"),
                 f"  topics held out per pair of sites: {int(pairs.min())}"
                 + ("" if pairs.min() == pairs.max() else f"..{int(pairs.max())}")]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"Design(topics={self.n_topics}, sites={self.n_sites}, k={self.k})"


def _topic_list(topics) -> list[str]:
    if isinstance(topics, (int, np.integer)) and not isinstance(topics, bool):
        if topics < 1:
            raise BayevalInputError(f"topics: must be a positive number or a list of topic ids, got {topics}")
        return [str(i) for i in range(1, int(topics) + 1)]
    if isinstance(topics, (str, bytes)) or not isinstance(topics, Iterable):
        raise BayevalInputError(f"topics: expected a number of topics or a sequence of ids, got {topics!r}")
    return [str(t) for t in topics]


def _site_list(sites) -> list[str]:
    if isinstance(sites, (int, np.integer)) and not isinstance(sites, bool):
        if sites < 2:
            raise BayevalInputError(f"sites: a design needs at least 2 sites, got {sites}")
        return [f"S{i}" for i in range(1, int(sites) + 1)]
    if isinstance(sites, (str, bytes)) or not isinstance(sites, Iterable):
        raise BayevalInputError(f"sites: expected a number of sites or a sequence of names, got {sites!r}")
    return [str(s) for s in sites]


def assign_design(topics: int | Sequence[str], sites: int | Sequence[str], k: int, min_baseline: int = 0, *,
                  blocks: int | None = None, leftover: str = "baseline",
                  seed: int | np.random.SeedSequence | None = None) -> Design:
    r"""Assign held-out sites to topics: the round-robin block design of paper Table 1.

    Parameters
    ----------
    topics : int or sequence of str
        N topic ids, or N (ids ``"1".."N"``).
    sites : int or sequence of str
        m site names, or m (names ``S1..Sm``).
    k : int
        Sites held out of each non-baseline topic, ``1 <= k < m``.
    min_baseline : int, default 0
        n0, least size of the all-site baseline.
    blocks : int, optional
        Number of blocks b (default the largest, :math:`\lfloor (N-n_0)/\binom{m}{k}\rfloor`).
    leftover : {"baseline", "round-robin"}
        Where the :math:`N - n_0 - b\binom{m}{k}` topics that do not fill a block go. ``"baseline"``
        (paper §3.1, default): into the all-site baseline, so it has :math:`n = N - b\binom{m}{k}` topics.
        ``"round-robin"``: the baseline keeps exactly n0 topics and the round robin continues into a
        partial block b + 1 (as done in practice when N is not a multiple; the site counts are then
        unequal by at most one block's share).
    seed : int or SeedSequence, optional
        When given, the topic order is shuffled with ``np.random.default_rng(seed)`` before the
        layout, so which topics are baseline and which sites are held out of which topic is random
        but reproducible. ``None`` (default): topics are laid out in the order given.

    Returns
    -------
    Design
        Topics in layout order: the all-site baseline :math:`T_0` (block 0), then blocks 1..b, each
        holding out the combinations of :func:`held_out_combinations` in turn.

    Raises
    ------
    BayevalInputError
        As :func:`~bayeval.design.plan_design` (``k < m``, ``N >= n0 + C(m,k)`` …), or for repeated
        topic or site names.

    Notes
    -----
    In every complete block each site is held out of :math:`\binom{m-1}{k-1}` topics and each pair of
    sites of :math:`\binom{m-2}{k-2}` topics, so over the design every site is held out of
    :math:`b\binom{m-1}{k-1}` topics and every pair together of :math:`b\binom{m-2}{k-2}`.

    References
    ----------
    .. [1] Carterette et al., SIGIR 2010, §3.1 and Table 1.

    Examples
    --------
    Paper Table 1 (m = 6, k = 2), the first block after a 2-topic baseline:

    >>> d = assign_design(17, 6, k=2, min_baseline=2)
    >>> print("\n".join("".join("+" if c else "-" for c in row) for row in d.contributes[:5]))
    ++++++
    ++++++
    ++++--
    +++-+-
    ++-++-
    """
    topic_ids = _topic_list(topics)
    site_ids = _site_list(sites)
    if leftover not in ("baseline", "round-robin"):
        raise BayevalInputError(f"leftover: must be 'baseline' or 'round-robin', got {leftover!r}")
    if leftover == "round-robin" and blocks is not None:
        raise BayevalInputError("blocks: give either blocks or leftover='round-robin' (which uses every topic "
                                "beyond min_baseline), not both")
    plan = plan_design(len(topic_ids), len(site_ids), k, min_baseline, blocks=blocks)
    m = len(site_ids)
    if seed is not None:
        rng = np.random.default_rng(seed)
        topic_ids = [topic_ids[i] for i in rng.permutation(len(topic_ids))]
    combos = held_out_combinations(m, plan.k)
    n_base = plan.n if leftover == "baseline" else plan.min_baseline
    n_rest = plan.n_topics - n_base
    contrib = np.ones((plan.n_topics, m), dtype=bool)
    block = np.zeros(plan.n_topics, dtype=np.int64)
    for i in range(n_rest):
        contrib[n_base + i, list(combos[i % len(combos)])] = False
        block[n_base + i] = 1 + i // len(combos)
    return Design(tuple(topic_ids), tuple(site_ids), contrib, block, plan.k)
