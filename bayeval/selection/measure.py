"""Measures MTC can select documents for (:data:`SELECTION`): ``AP``, ``P@k``, ``DCG@k`` and ``recall@k``.

MTC works on the *unnormalised* DCG of the tutorial: nDCG has a random ideal DCG in its denominator, for
which no weights are defined. :class:`SelectionMeasure` is a view of a :class:`bayeval.measures.Measure`.
"""

from __future__ import annotations

from dataclasses import dataclass

from bayeval.errors import BayevalInputError
from bayeval.measures import Provider

__all__ = ["GAINS", "SELECTION", "SelectionMeasure"]

GAINS = ("exponential", "linear")
SELECTION = Provider("selection weights", ("AP", "P", "DCG", "recall"))
"""Families MTC has document weights for (not condensed)."""


@dataclass(frozen=True)
class SelectionMeasure:
    """A measure whose difference between two systems MTC tries to decide.

    Attributes
    ----------
    family : {"AP", "P", "DCG", "recall"}
        The :class:`~bayeval.measures.Measure` family name.
    k : int or None
        Rank cutoff (required for P, DCG and recall; AP uses every ranked document).

    Examples
    --------
    >>> SelectionMeasure.parse("DCG@5"), SelectionMeasure.parse("ap").name
    (SelectionMeasure(family='DCG', k=5), 'AP')
    """

    family: str
    k: int | None = None

    @classmethod
    def parse(cls, text, argument: str = "measure") -> SelectionMeasure:
        """Parse ``"AP"``, ``"P@10"``, ``"DCG@5"`` or ``"recall@100"`` (any spelling :meth:`Measure.parse` reads)."""
        if isinstance(text, SelectionMeasure):
            return text
        m = SELECTION.require(text, argument)
        if m.name == "AP" and m.cutoff is not None:
            raise BayevalInputError(f"AP is selected over the whole (depth-cut) ranking; drop '@{m.cutoff}' "
                                    "and cut the runs with depth instead", argument=argument)
        return cls(m.name, m.cutoff)

    @property
    def name(self) -> str:
        return self.family if self.k is None else f"{self.family}@{self.k}"

    @property
    def linear(self) -> bool:
        """P@k and DCG@k are linear in the relevance of the documents (bounds are exact and cheap)."""
        return self.family in ("P", "DCG")

    @property
    def ratio(self) -> bool:
        """AP and recall divide by the random number of relevant documents R."""
        return self.family in ("AP", "recall")

    def __str__(self) -> str:
        return self.name
