"""Measures as immutable values with a canonical name (``AP``, ``AP@100``, ``P@10``, ``nDCG@10``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bayeval.errors import BayevalInputError

__all__ = ["Measure", "parse_measures"]

# canonical name -> (accepted spellings, cutoff rule, trec_eval name without / with cutoff)
_FAMILIES = {
    "AP": (("ap", "map"), "optional", "map", "map_cut_{k}"),
    "P": (("p", "prec", "precision"), "required", None, "P_{k}"),
    "nDCG": (("ndcg",), "optional", "ndcg", "ndcg_cut_{k}"),
    "recall": (("recall", "r"), "required", None, "recall_{k}"),
    "R-prec": (("r-prec", "rprec", "r-precision"), "none", "Rprec", None),
    "RR": (("rr", "mrr", "recip_rank"), "none", "recip_rank", None),
    "bpref": (("bpref",), "none", "bpref", None),
    "infAP": (("infap",), "none", "infAP", None),
    "RankEff": (("rankeff",), "none", None, None),
    "judged": (("judged",), "required", None, None),
}
_CONDENSED = "(j)"
_ALIASES = {alias: name for name, (aliases, *_rest) in _FAMILIES.items() for alias in aliases}
_TREC_EVAL = {}
for _name, (_a, _rule, _plain, _cut) in _FAMILIES.items():
    if _plain:
        _TREC_EVAL[_plain] = _name
    if _cut:
        _TREC_EVAL[_cut.split("{")[0]] = _name


@dataclass(frozen=True, order=True)
class Measure:
    """An evaluation measure: a family name and an optional rank cutoff.

    Attributes
    ----------
    name : str
        One of ``AP``, ``P``, ``nDCG``, ``recall``, ``R-prec``, ``RR``, ``bpref``, ``infAP``,
        ``RankEff``, ``judged`` (the fraction of the top k that is judged).
    cutoff : int or None
        Rank cutoff (``P``, ``recall`` and ``judged`` need one; the rank-free measures take none).
    condensed : bool
        Evaluate on the *condensed* list: unjudged documents removed from the ranking before the
        measure is computed (trec_eval ``-J``; Sakai 2007). Written with a ``(j)`` suffix: ``P@20(j)``.

    Examples
    --------
    >>> m = Measure.parse("map@100")
    >>> m, str(m), m.trec_eval_name
    (Measure('AP@100'), 'AP@100', 'map_cut_100')
    >>> Measure.from_trec_eval("ndcg_cut_10"), Measure.parse("p@20(J)")
    (Measure('nDCG@10'), Measure('P@20(j)'))
    """

    name: str
    cutoff: int | None = None
    condensed: bool = False

    def __post_init__(self) -> None:
        if self.condensed and self.name == "judged":
            raise BayevalInputError("measure: judged@k on a condensed list is always 1; drop the (j)")
        if self.name not in _FAMILIES:
            raise BayevalInputError(f"measure: unknown measure {self.name!r}; known: {', '.join(_FAMILIES)}")
        rule = _FAMILIES[self.name][1]
        if self.cutoff is not None and (not isinstance(self.cutoff, int) or isinstance(self.cutoff, bool)
                                        or self.cutoff < 1):
            raise BayevalInputError(f"measure: cutoff of {self.name} must be a positive integer, got {self.cutoff!r}")
        if rule == "required" and self.cutoff is None:
            raise BayevalInputError(f"measure: {self.name} needs a cutoff, e.g. {self.name}@10")
        if rule == "none" and self.cutoff is not None:
            raise BayevalInputError(f"measure: {self.name} takes no cutoff")

    @classmethod
    def parse(cls, text: str | Measure) -> Measure:
        """Parse ``NAME`` or ``NAME@K`` (names case-insensitive; see the class docstring)."""
        if isinstance(text, Measure):
            return text
        if not isinstance(text, str):
            raise BayevalInputError(f"measure: expected a string such as 'AP@100', got {text!r}")
        raw = text.strip()
        body, condensed = raw, False
        if body.lower().endswith(_CONDENSED):
            body, condensed = body[: -len(_CONDENSED)].rstrip(), True
        head, sep, tail = body.partition("@")
        name = _ALIASES.get(head.strip().lower())
        if name is None:
            raise BayevalInputError(f"measure: unknown measure {raw!r}; known: {', '.join(_FAMILIES)} "
                                    "(with @K for a cutoff)")
        cutoff = None
        if sep:
            digits = tail.strip()
            if not digits.isdigit() or int(digits) < 1:
                raise BayevalInputError(f"measure: cutoff in {raw!r} must be a positive integer")
            cutoff = int(digits)
        try:
            return cls(name, cutoff, condensed)
        except BayevalInputError as exc:
            raise BayevalInputError(f"{exc} (in {raw!r})") from None

    @classmethod
    def from_trec_eval(cls, name: str) -> Measure:
        """The measure trec_eval prints as ``name`` (``map``, ``map_cut_100``, ``P_10``, ``ndcg_cut_10`` …)."""
        if name in _TREC_EVAL:
            return cls(_TREC_EVAL[name])
        stem, _, k = name.rpartition("_")
        family = _TREC_EVAL.get(stem + "_")
        if family is None or not k.isdigit():
            raise BayevalInputError(f"measure: no bayeval measure for trec_eval's {name!r}")
        return cls(family, int(k))

    @property
    def trec_eval_name(self) -> str | None:
        """trec_eval's name (with ``-J`` for condensed lists), or ``None`` if trec_eval lacks the measure."""
        _, _, plain, cut = _FAMILIES[self.name]
        name = plain if self.cutoff is None else (cut.format(k=self.cutoff) if cut else None)
        return name

    def __repr__(self) -> str:
        return f"Measure({str(self)!r})"

    def __str__(self) -> str:
        base = self.name if self.cutoff is None else f"{self.name}@{self.cutoff}"
        return base + _CONDENSED if self.condensed else base


def parse_measures(spec: str | Iterable[str | Measure]) -> tuple[Measure, ...]:
    """Parse ``"AP,P@10,nDCG@10"`` or a list of names; duplicates are dropped, order kept.

    >>> [str(m) for m in parse_measures("ap, P@10,ndcg@10,AP")]
    ['AP', 'P@10', 'nDCG@10']
    """
    items = spec.split(",") if isinstance(spec, str) else list(spec)
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
