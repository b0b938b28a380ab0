"""Planning the held-out-sites design: the parameters of paper Table 2 for a choice of k.

The kernel is :func:`design_sizes` (integers in, integers out); :func:`plan_design` validates the
arguments and returns a frozen :class:`DesignPlan`; :func:`design_table` tabulates every k so a user
can choose one (:class:`DesignPlanTable`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from math import comb

import numpy as np
import pandas as pd

from bayeval.errors import BayevalInputError

__all__ = ["DesignPlan", "DesignPlanTable", "design_sizes", "design_table", "plan_design"]


def _int_arg(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise BayevalInputError(f"{name}: must be an integer, got {value!r}")
    if value < minimum:
        raise BayevalInputError(f"{name}: must be >= {minimum}, got {value}")
    return int(value)


def design_sizes(n_topics: int, n_sites: int, k: int, blocks: int) -> dict[str, int]:
    r"""Sizes of the topic sets of a design with ``blocks`` blocks (no validation).

    Returns a dict with ``n`` (all-site baseline) and the within-site, between-site and
    participant-comparison set sizes of paper Table 2:

    .. math::
        n = N - b\binom{m}{k},\quad
        n + b\binom{m-1}{k},\quad b\binom{m-1}{k-1},\quad
        n + b\binom{m-2}{k},\quad b\binom{m-2}{k-2},\quad b\binom{m-2}{k-1}.

    (``math.comb`` is 0 when the lower index is negative or exceeds the upper one, so
    ``k = 1`` gives an empty between-site reuse set.)
    """
    b, m = blocks, n_sites
    n = n_topics - b * comb(m, k)
    return {
        "n": n,
        "within_baseline": n + b * comb(m - 1, k),
        "within_reuse": b * comb(m - 1, k - 1),
        "between_baseline": n + b * comb(m - 2, k),
        "between_reuse": b * comb(m - 2, k - 2) if k >= 2 else 0,
        "participant": b * comb(m - 2, k - 1),
    }


@dataclass(frozen=True)
class DesignPlan:
    r"""The parameters of one held-out-sites design (paper Table 2).

    Attributes
    ----------
    n_topics : int
        N, the total number of topics.
    n_sites : int
        m, the number of sites.
    k : int
        Sites held out of each topic outside the all-site baseline.
    min_baseline : int
        n0, the least acceptable size of the all-site baseline.
    combinations : int
        :math:`\binom{m}{k}`, the topics of one block (one per held-out combination).
    blocks : int
        b, the number of blocks :math:`T_1 \dots T_b`.
    n : int
        Size of the all-site baseline :math:`T_0`.
    within_baseline, within_reuse : int
        Per site: topics it contributed to (site baseline, including :math:`T_0`) and topics it
        was held out of (its reuse set).
    between_baseline, between_reuse : int
        Per pair of sites: topics both contributed to, and topics both were held out of.
    participant : int
        Per ordered pair of sites: topics the first was held out of while the second contributed.
    held_out_total : int
        Topics each site is held out of, :math:`b\binom{m-1}{k-1}` (= ``within_reuse``).

    Notes
    -----
    With :math:`C = \binom{m}{k}`: :math:`b = \lfloor (N - n_0)/C \rfloor` and
    :math:`n = N - bC` (paper §3.1). Within a block each site contributes to
    :math:`\binom{m-1}{k}` topics and is held out of :math:`\binom{m-1}{k-1}`; each pair of sites is
    held out together :math:`\binom{m-2}{k-2}` times and both contribute :math:`\binom{m-2}{k}`
    times; one site is held out while another contributes :math:`\binom{m-2}{k-1}` times.

    References
    ----------
    .. [1] B. Carterette, E. Kanoulas, V. Pavlu, H. Fang. Reusable test collections through
       experimental design. SIGIR 2010, §3.1 and Table 2.

    Examples
    --------
    Robust 2004's 249 topics and m = 14 sites with k = 2: two complete blocks of 91 topics and
    67 all-site baseline topics:

    >>> p = plan_design(249, 14, 2)
    >>> p.blocks, p.n, p.within_baseline, p.within_reuse, p.between_reuse, p.participant
    (2, 67, 223, 26, 2, 24)
    """

    n_topics: int
    n_sites: int
    k: int
    min_baseline: int
    combinations: int
    blocks: int
    n: int
    within_baseline: int
    within_reuse: int
    between_baseline: int
    between_reuse: int
    participant: int

    @property
    def held_out_total(self) -> int:
        return self.within_reuse

    def to_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def summary(self) -> str:
        """The plan in words, one line per topic set."""
        return "\n".join([
            f"Design: N = {self.n_topics} topics, m = {self.n_sites} sites, k = {self.k} held out per topic",
            f"  blocks b = {self.blocks} of C({self.n_sites},{self.k}) = {self.combinations} topics; "
            f"all-site baseline n = {self.n} (>= n0 = {self.min_baseline})",
            f"  within-site:   baseline {self.within_baseline:>6}   reuse {self.within_reuse:>6}   (per site)",
            f"  between-site:  baseline {self.between_baseline:>6}   reuse {self.between_reuse:>6}   "
            "(per pair of sites)",
            f"  participant comparison:                 {self.participant:>6}   (per ordered pair)",
        ])


def plan_design(n_topics: int, n_sites: int, k: int, min_baseline: int = 0, *,
                blocks: int | None = None) -> DesignPlan:
    r"""Parameters of the held-out-sites design for N topics, m sites and k held out per topic.

    Parameters
    ----------
    n_topics : int
        N, total number of topics (>= ``min_baseline + C(m, k)``).
    n_sites : int
        m, number of sites (>= 2).
    k : int
        Sites held out of each non-baseline topic, ``1 <= k < m``.
    min_baseline : int, default 0
        n0, the least acceptable all-site baseline.
    blocks : int, optional
        Force b blocks instead of the largest possible :math:`\lfloor (N - n_0)/C \rfloor`
        (then ``N - b*C >= n0`` must still hold).

    Returns
    -------
    DesignPlan

    Raises
    ------
    BayevalInputError
        Naming the argument: non-integers, ``m < 2``, ``k`` outside ``[1, m)``, ``n0 < 0``, or too few
        topics for one block plus the baseline.

    Notes
    -----
    :math:`b = \lfloor (N - n_0)/\binom{m}{k} \rfloor`, :math:`n = N - b\binom{m}{k}`; the other sizes are
    in :class:`DesignPlan`.

    References
    ----------
    .. [1] Carterette et al., SIGIR 2010, §3.1, Table 2.

    Examples
    --------
    Paper Table 1 (m = 6, k = 2) with 40 topics and at least 10 in the all-site baseline:

    >>> p = plan_design(40, 6, 2, min_baseline=10)
    >>> p.combinations, p.blocks, p.n, p.within_reuse, p.between_reuse, p.participant
    (15, 2, 10, 10, 2, 8)
    """
    N = _int_arg("n_topics", n_topics, 1)
    m = _int_arg("n_sites", n_sites, 2)
    k = _int_arg("k", k, 1)
    n0 = _int_arg("min_baseline", min_baseline, 0)
    if k >= m:
        raise BayevalInputError(f"k: must be smaller than the number of sites m = {m}, got {k}")
    C = comb(m, k)
    if N < n0 + C:
        raise BayevalInputError(
            f"n_topics: the design needs at least n0 + C(m,k) = {n0} + C({m},{k}) = {n0 + C} topics, got {N}")
    if blocks is None:
        b = (N - n0) // C
    else:
        b = _int_arg("blocks", blocks, 1)
        if N - b * C < n0:
            raise BayevalInputError(
                f"blocks: {b} blocks of C({m},{k}) = {C} topics leave {N - b * C} baseline topics, fewer than "
                f"min_baseline = {n0}")
    sizes = design_sizes(N, m, k, b)
    return DesignPlan(n_topics=N, n_sites=m, k=k, min_baseline=n0, combinations=C, blocks=b, **sizes)


@dataclass(frozen=True)
class DesignPlanTable:
    """Design parameters for several k (paper Table 2 tabulated), to choose k.

    Attributes
    ----------
    plans : tuple of DesignPlan
        The feasible designs, by increasing k.
    infeasible : tuple of (int, int)
        ``(k, topics needed)`` for each requested k that needs more topics than N.
    """

    plans: tuple[DesignPlan, ...]
    infeasible: tuple[tuple[int, int], ...] = ()

    def to_frame(self) -> pd.DataFrame:
        """One row per feasible k, columns as in :class:`DesignPlan`."""
        cols = [f.name for f in fields(DesignPlan)]
        return pd.DataFrame([p.to_dict() for p in self.plans], columns=cols)

    def summary(self) -> str:
        frame = self.to_frame()[["k", "combinations", "blocks", "n", "within_baseline", "within_reuse",
                                 "between_baseline", "between_reuse", "participant"]]
        head = "(no feasible k)" if frame.empty else frame.to_string(index=False)
        lines = []
        if self.plans:
            p = self.plans[0]
            lines.append(f"N = {p.n_topics} topics, m = {p.n_sites} sites, n0 = {p.min_baseline}")
        lines.append(head)
        for k, need in self.infeasible:
            lines.append(f"k = {k}: infeasible, needs at least {need} topics")
        return "\n".join(lines)


def design_table(n_topics: int, n_sites: int, min_baseline: int = 0,
                 ks: Iterable[int] | None = None) -> DesignPlanTable:
    """Tabulate :func:`plan_design` over k (default every ``1 <= k < m``).

    A k that needs more than N topics is listed in ``infeasible`` rather than raising, so the
    table shows where the design stops; an error is raised only if no requested k is feasible.

    Examples
    --------
    >>> t = design_table(100, 6, min_baseline=20)
    >>> [(p.k, p.blocks, p.n, p.within_reuse, p.between_reuse) for p in t.plans]
    [(1, 13, 22, 13, 0), (2, 5, 25, 25, 5), (3, 4, 20, 40, 16), (4, 5, 25, 50, 30), (5, 13, 22, 65, 52)]
    """
    N = _int_arg("n_topics", n_topics, 1)
    m = _int_arg("n_sites", n_sites, 2)
    n0 = _int_arg("min_baseline", min_baseline, 0)
    ks = list(range(1, m)) if ks is None else [_int_arg("k", k, 1) for k in ks]
    if not ks:
        raise BayevalInputError("ks: give at least one k")
    plans, infeasible = [], []
    for k in sorted(set(ks)):
        if k >= m:
            raise BayevalInputError(f"ks: every k must be smaller than m = {m}, got {k}")
        need = n0 + comb(m, k)
        if N < need:
            infeasible.append((k, need))
        else:
            plans.append(plan_design(N, m, k, n0))
    if not plans:
        raise BayevalInputError(
            f"n_topics: no k is feasible with N = {N}: " + ", ".join(f"k = {k} needs {need}" for k, need in infeasible))
    return DesignPlanTable(tuple(plans), tuple(infeasible))
