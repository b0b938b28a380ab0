"""Which measures have expected values here: the :class:`~bayeval.measures.Provider` of this backend.

Analytic moments cover ``AP``, ``AP@k``, ``P@k``, ``nDCG``, ``nDCG@k`` and ``recall@k``; Monte Carlo
adds ``R-prec``; the expected reciprocal rank has its own closed form (:mod:`._reciprocal_rank`).
"""

from __future__ import annotations

from bayeval.measures import Measure, Provider

__all__: list[str] = []

EXPECTED = Provider("expected value", ("AP", "P", "nDCG", "recall", "R-prec"))
"""Families with an expected value under uncertain relevance (not condensed)."""

MeasureSpec = Measure
"""The measure value the engine takes: a :class:`~bayeval.measures.Measure` (the name kept for callers)."""

RATIO = ("AP", "recall")
"""Families whose denominator is the random number of relevant documents R."""


def parse_measure(measure, argument: str = "measures") -> Measure:
    """Parse ``measure`` (a name such as ``"AP@100"`` or a :class:`~bayeval.measures.Measure`), refusing the rest."""
    return EXPECTED.require(measure, argument)
