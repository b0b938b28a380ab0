"""The measures with an expected value here: the :class:`~bayeval.measures.Provider` of expected/."""

from __future__ import annotations

from bayeval.measures import Provider

__all__: list[str] = []

EXPECTED = Provider("expected value", ("AP", "P", "nDCG", "recall", "R-prec"))
"""Families with an expected value under uncertain relevance (not condensed; R-prec by Monte Carlo only)."""
