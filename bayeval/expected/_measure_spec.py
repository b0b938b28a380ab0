"""Which measures have expected values here, parsed with :meth:`bayeval.measures.Measure.parse`.

The expected-measure code needs only a family and an optional cutoff; this module maps a
:class:`~bayeval.measures.Measure` (or its name: ``AP``, ``AP@100``, ``P@10``, ``nDCG@10``,
``recall@10``, ``R-prec``) to that, and refuses the measures that have no expectation here.
"""

from __future__ import annotations

from dataclasses import dataclass

from bayeval.errors import BayevalInputError
from bayeval.measures import Measure

__all__: list[str] = []

# Measure.name -> internal family
_SUPPORTED = {"AP": "AP", "P": "P", "nDCG": "nDCG", "recall": "recall", "R-prec": "Rprec"}
_CANONICAL = {v: k for k, v in _SUPPORTED.items()}


@dataclass(frozen=True)
class MeasureSpec:
    """A parsed measure: ``family`` (AP, P, nDCG, recall, Rprec) and cutoff ``k`` (``None``: whole list)."""

    family: str
    k: int | None = None

    @property
    def name(self) -> str:
        """The canonical name, as :class:`~bayeval.measures.Measure` prints it."""
        base = _CANONICAL[self.family]
        return base if self.k is None else f"{base}@{self.k}"

    @property
    def ratio(self) -> bool:
        """Measures whose denominator is the random number of relevant documents R."""
        return self.family in ("AP", "recall")

    def __str__(self) -> str:
        return self.name


def parse_measure(measure, argument: str = "measures") -> MeasureSpec:
    """Parse ``measure`` (a name such as ``"AP@100"`` or a :class:`~bayeval.measures.Measure`)."""
    if isinstance(measure, MeasureSpec):
        return measure
    try:
        m = Measure.parse(measure)
    except BayevalInputError as exc:
        raise BayevalInputError(exc.reason if exc.argument == "measure" else str(exc), argument=argument) from None
    family = _SUPPORTED.get(m.name)
    if family is None or m.condensed:
        known = "AP, AP@k, P@k, nDCG, nDCG@k, recall@k, R-prec"
        raise BayevalInputError(f"no expected value for {str(m)!r} under uncertain relevance (available: {known})",
                                argument=argument)
    return MeasureSpec(family, m.cutoff)
