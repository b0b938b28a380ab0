"""Measures as immutable values with a canonical name (``AP``, ``AP@100``, ``P@10``, ``nDCG@10``, ``RR@10``).

A :class:`Measure` is a family name, an optional rank cutoff, an optional relevance level of its own
(``P(rel=2)@10``) and a flag for the *condensed* list (unjudged documents removed first).
``str(measure)`` is its canonical spelling and :meth:`Measure.parse` reads it back, and the field's other
spellings too (case-insensitive; ir_measures' ``RR@10``, ``R@1000``, ``Judged@10``, ranx's ``mrr@10``,
trec_eval's ``map_cut_100``, ``P_10``): the one parser of measure names in bayeval;
:attr:`Measure.trec_eval_name` and :meth:`Measure.from_trec_eval` translate to and from the names
trec_eval prints (``map``, ``map_cut_100``, ``P_10``, ``ndcg_cut_10``, ``Rprec``, ``recip_rank`` …).
Each backend (trec_eval-exact values, expected values, selection weights) declares the families it
computes as a :class:`Provider` (after ir_measures' providers) and refuses the others in one way.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import total_ordering
from typing import NamedTuple

from bayeval.errors import BayevalInputError

__all__ = ["Measure", "Provider", "parse_measures"]


class _Family(NamedTuple):
    aliases: tuple[str, ...]  # accepted lower-case spellings (bayeval's, ir_measures', ranx's, trec_eval's)
    cutoff: str  # "optional", "required" or "none"
    trec_eval: str | None  # trec_eval's name without a cutoff
    trec_eval_cut: str | None  # trec_eval's name with a cutoff, "{k}" for the cutoff
    rel: bool  # whether the family takes a relevance level of its own, rel=L (ir_measures' parameter)


_FAMILIES: dict[str, _Family] = {
    "AP": _Family(("ap", "map"), "optional", "map", "map_cut_{k}", True),
    "P": _Family(("p", "prec", "precision"), "required", None, "P_{k}", True),
    "nDCG": _Family(("ndcg",), "optional", "ndcg", "ndcg_cut_{k}", False),
    "DCG": _Family(("dcg",), "required", None, None, False),
    "recall": _Family(("recall", "r"), "required", None, "recall_{k}", True),
    "R-prec": _Family(("r-prec", "rprec", "r-precision"), "none", "Rprec", None, True),
    "RR": _Family(("rr", "mrr", "recip_rank"), "optional", "recip_rank", None, True),
    "bpref": _Family(("bpref",), "none", "bpref", None, True),
    "infAP": _Family(("infap",), "none", "infAP", None, True),
    "RankEff": _Family(("rankeff",), "none", None, None, True),
    "judged": _Family(("judged",), "required", None, None, False),
}
_CONDENSED = "(j)"
#: What each family measures, for legends ("{k}": the cutoff, "{upto}": " of the top k" or "").
_DESCRIPTIONS = {
    "AP": "average precision{upto} (its mean over topics is MAP)",
    "P": "precision at {k}: relevant share of the top {k}",
    "nDCG": "normalised discounted cumulative gain{upto}",
    "DCG": "discounted cumulative gain of the top {k}",
    "recall": "recall at {k}: share of the relevant documents in the top {k}",
    "R-prec": "precision at rank R, R the number of relevant documents",
    "RR": "reciprocal rank of the first relevant document{upto} (its mean over topics is MRR)",
    "bpref": "binary preference: how rarely judged nonrelevant documents rank above relevant ones",
    "infAP": "inferred average precision",
    "RankEff": "rank effectiveness (judged documents only)",
    "judged": "judged share of the top {k}",
}
_ALIASES = {alias: name for name, fam in _FAMILIES.items() for alias in fam.aliases}
_FROM_TREC_EVAL = {fam.trec_eval: name for name, fam in _FAMILIES.items() if fam.trec_eval}
_FROM_TREC_EVAL_CUT = {fam.trec_eval_cut.split("{")[0]: name for name, fam in _FAMILIES.items() if fam.trec_eval_cut}
_KNOWN = (f"known: {', '.join(_FAMILIES)}, with @K for a cutoff, (rel=L) for a relevance level and (j) for the "
          "condensed list; ir_measures', ranx's and trec_eval's names too (RR@10, R@1000, P(rel=2)@10, mrr@10, "
          "map_cut_100, P_10)")


def _positive_int(text: str) -> int | None:
    """``int(text)`` for a plain ASCII decimal > 0, else ``None`` (no signs, no '²', no '1_0')."""
    if not (text.isascii() and text.isdigit()):
        return None
    value = int(text)
    return value if value >= 1 else None


def _unknown(raw: str) -> BayevalInputError:
    """The one error for a name that is no measure."""
    return BayevalInputError(f"unknown measure {raw!r}; {_KNOWN}", argument="measure")


def _parameters(text: str, raw: str) -> int:
    """The relevance level of a parameter list ``rel=L`` (ir_measures' spelling; the only parameter here)."""
    level = None
    if text.strip().lower() == "j":
        raise BayevalInputError(f"{raw!r}: the (j) suffix goes last, e.g. 'AP@10(j)'", argument="measure")
    for item in text.split(","):
        key, eq, value = (x.strip() for x in item.partition("="))
        if key.lower() != "rel" or not eq:
            raise BayevalInputError(f"{raw!r}: unknown parameter {item.strip()!r} (the one parameter is rel=L, the "
                                    "lowest grade counted relevant)", argument="measure")
        if level is not None:
            raise BayevalInputError(f"{raw!r}: rel given twice", argument="measure")
        level = _positive_int(value)
        if level is None:
            raise BayevalInputError(f"{raw!r}: rel must be a positive integer grade, got {value!r}",
                                    argument="measure")
    return level


def _from_trec_eval_spelling(text: str) -> Measure | None:
    """The measure of a trec_eval name in any case, with ``_`` or ``-m``'s ``.`` before the cutoff; else None."""
    lower = text.lower()
    stem, sep, k = lower.replace(".", "_").rpartition("_")
    for name, fam in _FAMILIES.items():
        if fam.trec_eval and lower == fam.trec_eval.lower():
            return Measure(name)
        if fam.trec_eval_cut and sep and stem + sep == fam.trec_eval_cut.split("{")[0].lower():
            cutoff = _positive_int(k)
            return None if cutoff is None else Measure(name, cutoff)
    return None


@total_ordering
@dataclass(frozen=True)
class Measure:
    """An evaluation measure: a family name, an optional rank cutoff and relevance level.

    Parameters
    ----------
    name : str
        Canonical family name: ``AP``, ``P``, ``nDCG``, ``DCG`` (unnormalised), ``recall``, ``R-prec``, ``RR``,
        ``bpref``, ``infAP``, ``RankEff`` or ``judged`` (the fraction of the top k that is judged). Use
        :meth:`parse` for free-form text.
    cutoff : int, optional
        Rank cutoff k. ``P``, ``DCG``, ``recall`` and ``judged`` need one; ``AP``, ``nDCG`` and ``RR`` take one
        optionally (``AP@k`` is trec_eval's ``map_cut_k``, ``RR@10`` MS MARCO's MRR@10 when averaged); the
        others take none.
    condensed : bool, default False
        Evaluate on the *condensed* list: documents without a (non-negative) judgment are removed
        from the ranking before the measure is computed (trec_eval ``-J``; Sakai 2007). Written
        with a ``(j)`` suffix: ``P@20(j)``.
    rel : int, optional
        The lowest grade this measure counts as relevant, instead of the collection's relevance level
        (ir_measures' ``rel`` parameter, trec_eval's ``-l``): ``P(rel=2)@10``. Taken by the families whose
        value depends on what is relevant (not by nDCG, DCG and judged, whose gains are the grades).

    Raises
    ------
    BayevalInputError
        For an unknown family, a cutoff that is not a positive integer, a missing or a
        superfluous cutoff, a ``rel`` the family does not take.

    Examples
    --------
    >>> m = Measure.parse("map@100")
    >>> m, str(m), m.cutoff, m.trec_eval_name
    (Measure('AP@100'), 'AP@100', 100, 'map_cut_100')
    >>> Measure.from_trec_eval("ndcg_cut_10"), Measure.parse("p@20(J)")
    (Measure('nDCG@10'), Measure('P@20(j)'))
    >>> [str(Measure.parse(x)) for x in ("RR@10", "R@1000", "P(rel=2)@10", "Judged@10", "mrr@10", "P_10")]
    ['RR@10', 'recall@1000', 'P(rel=2)@10', 'judged@10', 'RR@10', 'P@10']
    >>> sorted([Measure.parse("P@10"), Measure.parse("AP@5"), Measure.parse("AP")])
    [Measure('AP'), Measure('AP@5'), Measure('P@10')]
    """

    name: str
    cutoff: int | None = None
    condensed: bool = False
    rel: int | None = None

    def __post_init__(self) -> None:
        family = _FAMILIES.get(self.name) if isinstance(self.name, str) else None
        if family is None:
            raise BayevalInputError(f"unknown measure {self.name!r}; known: {', '.join(_FAMILIES)}", argument="measure")
        cutoff = self.cutoff
        if cutoff is not None:
            if isinstance(cutoff, bool) or not hasattr(cutoff, "__index__") or int(cutoff) < 1:
                raise BayevalInputError(f"cutoff of {self.name} must be a positive integer, got {cutoff!r}",
                                        argument="measure")
            object.__setattr__(self, "cutoff", int(cutoff))  # numpy integers become plain ints
        if family.cutoff == "required" and cutoff is None:
            raise BayevalInputError(f"{self.name} needs a cutoff, e.g. {self.name}@10", argument="measure")
        if family.cutoff == "none" and cutoff is not None:
            raise BayevalInputError(f"{self.name} takes no cutoff, got {self.name}@{cutoff}", argument="measure")
        if not isinstance(self.condensed, bool):
            raise BayevalInputError(f"condensed must be True or False, got {self.condensed!r}", argument="measure")
        if self.condensed and self.name == "judged":
            raise BayevalInputError("judged@k on a condensed list is always 1; drop the (j)", argument="measure")
        if self.rel is not None:
            if isinstance(self.rel, bool) or not hasattr(self.rel, "__index__") or int(self.rel) < 1:
                raise BayevalInputError(f"rel of {self.name} must be a positive integer grade, got {self.rel!r}",
                                        argument="measure")
            if not family.rel:
                raise BayevalInputError(f"{self.name} takes no rel= (its gains are the grades, whatever is relevant)",
                                        argument="measure")
            object.__setattr__(self, "rel", int(self.rel))

    @classmethod
    def parse(cls, text: str | Measure) -> Measure:
        """Parse ``NAME``, ``NAME@K``, ``NAME(rel=L)@K``, each with an optional ``(j)`` suffix, or a trec_eval name.

        Names are case-insensitive and may be aliases: ir_measures' (``RR@10``, ``R@1000``, ``P(rel=2)@10``,
        ``Judged@10``, ``Rprec``), ranx's (``mrr@10``, ``map@100``, ``precision@10``, ``r-precision``) and
        trec_eval's (``map``, ``map_cut_100``, ``P_10``, ``ndcg_cut_10``, ``recall_1000``, ``recip_rank``, also as
        ``-m`` writes them: ``P.10``); ``K`` and ``L`` are positive decimal integers. A :class:`Measure` passes
        through unchanged.

        Raises
        ------
        BayevalInputError
            Naming the text that could not be parsed and why; one message lists what is known.

        Examples
        --------
        >>> Measure.parse(" nDCG@10 "), Measure.parse("MRR"), Measure.parse("AP(rel=2)@100(j)")
        (Measure('nDCG@10'), Measure('RR'), Measure('AP(rel=2)@100(j)'))
        >>> Measure.parse("P@ten")
        Traceback (most recent call last):
        ...
        bayeval.errors.BayevalInputError: measure: cutoff in 'P@ten' must be a positive integer
        """
        if isinstance(text, Measure):
            return text
        if not isinstance(text, str):
            raise BayevalInputError(f"expected a string such as 'AP@100', got {text!r}", argument="measure")
        raw = text.strip()
        body, condensed = raw, False
        if body.lower().endswith(_CONDENSED):
            body, condensed = body[: -len(_CONDENSED)].rstrip(), True
        # NAME, then (parameters), then @K: split at the first '(' or '@'
        cut = min((i for i in (body.find("("), body.find("@")) if i >= 0), default=len(body))
        head, rest = body[:cut].strip(), body[cut:]
        rel = None
        if rest.startswith("("):
            close = rest.find(")")
            if close < 0:
                raise BayevalInputError(f"{raw!r}: '(' without ')'", argument="measure")
            rel = _parameters(rest[1:close], raw)
            rest = rest[close + 1:].strip()
        cutoff = None
        if rest:
            if not rest.startswith("@") or "@" in rest[1:]:
                raise BayevalInputError(f"{raw!r}: expected NAME(rel=L)@K, e.g. 'P(rel=2)@10'", argument="measure")
            cutoff = _positive_int(rest[1:].strip())
            if cutoff is None:
                raise BayevalInputError(f"cutoff in {raw!r} must be a positive integer", argument="measure")
        name = _ALIASES.get(head.lower())
        if name is None:
            if rest or rel is not None or condensed:
                raise _unknown(raw)
            m = _from_trec_eval_spelling(head)  # trec_eval's names: map_cut_100, P_10 (and -m's P.10)
            if m is None:
                raise _unknown(raw)
            return m
        try:
            return cls(name, cutoff, condensed, rel)
        except BayevalInputError as exc:
            raise BayevalInputError(f"{exc.reason} (in {raw!r})", argument=exc.argument) from None

    @classmethod
    def from_trec_eval(cls, name: str) -> Measure:
        """The measure trec_eval prints as ``name`` (``map``, ``map_cut_100``, ``P_10``, ``ndcg_cut_10`` …).

        Raises
        ------
        BayevalInputError
            If bayeval has no counterpart (e.g. ``gm_map``, ``iprec_at_recall_0.10``).

        Examples
        --------
        >>> [str(Measure.from_trec_eval(n)) for n in ("map", "P_10", "Rprec", "recip_rank", "recall_10")]
        ['AP', 'P@10', 'R-prec', 'RR', 'recall@10']
        """
        if not isinstance(name, str):
            raise BayevalInputError(f"expected a trec_eval measure name, got {name!r}", argument="measure")
        if name in _FROM_TREC_EVAL:
            return cls(_FROM_TREC_EVAL[name])
        stem, sep, k = name.rpartition("_")
        family = _FROM_TREC_EVAL_CUT.get(stem + sep)
        cutoff = _positive_int(k)
        if family is None or cutoff is None:
            raise BayevalInputError(f"no bayeval measure for trec_eval's {name!r}", argument="measure")
        return cls(family, cutoff)

    @property
    def trec_eval_name(self) -> str | None:
        """trec_eval's name of the measure (``None`` if trec_eval lacks it, e.g. ``RR@10``).

        For a condensed measure this is the name trec_eval prints when run with ``-J``; for one with ``rel``,
        the name it prints when run with ``-l`` that level.
        """
        family = _FAMILIES[self.name]
        if self.cutoff is None:
            return family.trec_eval
        return family.trec_eval_cut.format(k=self.cutoff) if family.trec_eval_cut else None

    @property
    def description(self) -> str:
        """One line saying what the measure is, for a table's legend."""
        k = self.cutoff
        text = _DESCRIPTIONS[self.name].format(k=k, upto="" if k is None else f" of the top {k}")
        if self.rel is not None:
            text += f", relevant: grade ≥ {self.rel}"
        return text + (", condensed list (judged documents only)" if self.condensed else "")

    def _key(self) -> tuple[str, int, int, bool]:
        return (self.name, 0 if self.cutoff is None else self.cutoff, 0 if self.rel is None else self.rel,
                self.condensed)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Measure):
            return NotImplemented
        return self._key() < other._key()

    def __repr__(self) -> str:
        return f"Measure({str(self)!r})"

    def __str__(self) -> str:
        base = self.name if self.rel is None else f"{self.name}(rel={self.rel})"
        base = base if self.cutoff is None else f"{base}@{self.cutoff}"
        return base + _CONDENSED if self.condensed else base


@dataclass(frozen=True)
class Provider:
    """A backend's declaration of the measure families it computes (cf. ir_measures' providers).

    Parameters
    ----------
    name : str
        What the backend gives, as the error names it: ``"expected value"``, ``"selection weights"`` ….
    families : tuple of str
        Canonical :class:`Measure` family names it computes.
    condensed : bool, default False
        Whether it computes the condensed ``(j)`` variants too.
    rel : bool, default False
        Whether it computes a measure at a relevance level of its own (``P(rel=2)@10``); otherwise every
        measure counts the collection's relevance level.
    uncut : tuple of str, default ()
        Families among ``families`` it computes only without a cutoff (e.g. ``RR`` but not ``RR@10``).
    cut : tuple of str, default ()
        Families among ``families`` it computes only with a cutoff (e.g. ``nDCG@10`` but not ``nDCG``).

    Examples
    --------
    >>> Provider("expected value", ("AP", "P")).require("bpref")
    Traceback (most recent call last):
    ...
    bayeval.errors.BayevalInputError: measure: no expected value for 'bpref' (available: AP, P)
    """

    name: str
    families: tuple[str, ...]
    condensed: bool = False
    rel: bool = False
    uncut: tuple[str, ...] = ()
    cut: tuple[str, ...] = ()

    def supports(self, measure: Measure) -> bool:
        """Whether this backend computes ``measure``."""
        return (measure.name in self.families and (self.condensed or not measure.condensed)
                and (self.rel or measure.rel is None) and not (measure.name in self.uncut and measure.cutoff)
                and not (measure.name in self.cut and measure.cutoff is None))

    def require(self, measure: str | Measure, argument: str = "measure") -> Measure:
        """:meth:`Measure.parse` ``measure`` and refuse it, naming ``argument``, unless this backend computes it."""
        try:
            m = Measure.parse(measure)
        except BayevalInputError as exc:
            raise BayevalInputError(exc.reason, argument=argument) from None
        if not self.supports(m):
            known = ", ".join(f"{f} (no cutoff)" if f in self.uncut else f"{f}@k" if f in self.cut else f
                              for f in self.families)
            known += ", each also (j)" if self.condensed else ""
            if m.rel is not None and not self.rel:
                known += "; at the collection's relevance level only, no rel="
            raise BayevalInputError(f"no {self.name} for {str(m)!r} (available: {known})", argument=argument)
        return m


def parse_measures(spec: str | Measure | Iterable[str | Measure]) -> tuple[Measure, ...]:
    """Parse ``"AP,P@10,nDCG@10"``, one :class:`Measure` or a list of names / measures.

    Duplicates (after canonicalisation) are dropped, the first occurrence's order kept.

    Raises
    ------
    BayevalInputError
        Naming the offending item, or when no measure is given.

    Examples
    --------
    >>> [str(m) for m in parse_measures("ap, P@10,ndcg@10,map")]
    ['AP', 'P@10', 'nDCG@10']
    """
    if isinstance(spec, (str, Measure)):
        items = spec.split(",") if isinstance(spec, str) else [spec]
    else:
        try:
            items = list(spec)
        except TypeError:
            raise BayevalInputError(f"measures: expected names such as 'AP,P@10', got {spec!r}") from None
    out: list[Measure] = []
    for item in items:
        if isinstance(item, str) and not item.strip():
            continue
        m = Measure.parse(item)
        if m not in out:
            out.append(m)
    if not out:
        raise BayevalInputError("measures: no measure given")
    return tuple(out)
