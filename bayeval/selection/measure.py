"""Measures MTC can select documents for: ``AP``, ``P@k``, ``DCG@k`` and ``recall@k``.

The selection measures are parsed separately from :class:`bayeval.measures.Measure` because MTC works
on the *unnormalised* DCG of the tutorial (the normalised nDCG has a random ideal DCG in its
denominator, for which no weights are defined).
"""

from __future__ import annotations

from dataclasses import dataclass

from bayeval.errors import BayevalInputError

__all__ = ["GAINS", "SelectionMeasure"]

GAINS = ("exponential", "linear")
_FAMILIES = {"ap": "AP", "p": "P", "dcg": "DCG", "recall": "recall"}


@dataclass(frozen=True)
class SelectionMeasure:
    """A measure whose difference between two systems MTC tries to decide.

    Attributes
    ----------
    family : {"AP", "P", "DCG", "recall"}
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
        """Parse ``"AP"``, ``"P@10"``, ``"DCG@5"`` or ``"recall@100"`` (case-insensitive family)."""
        if isinstance(text, SelectionMeasure):
            return text
        if not isinstance(text, str):
            raise BayevalInputError(f"{argument}: expected a measure name such as 'AP' or 'P@10', got {text!r}")
        base, sep, cut = text.strip().partition("@")
        family = _FAMILIES.get(base.strip().lower())
        if family is None:
            raise BayevalInputError(f"{argument}: MTC selects for AP, P@k, DCG@k or recall@k, got {text!r}")
        k = None
        if sep:
            try:
                k = int(cut)
            except ValueError:
                raise BayevalInputError(f"{argument}: cutoff of {text!r} is not an integer") from None
            if k < 1:
                raise BayevalInputError(f"{argument}: cutoff must be >= 1, got {text!r}")
        if family == "AP" and k is not None:
            raise BayevalInputError(f"{argument}: AP is selected over the whole (depth-cut) ranking; drop '@{k}' "
                                    "and cut the runs with depth instead")
        if family != "AP" and k is None:
            raise BayevalInputError(f"{argument}: {family} needs a cutoff, e.g. '{family}@10'")
        return cls(family, k)

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
