"""Which sampled estimate holds at which number of judgments a topic: the stated minimum of each estimator
(:func:`minimum_per_topic`), the form of the model-assisted estimate for a sample's size (:func:`assisted_form`),
and the warnings the commands print (:func:`minimum_notices`).

The figures are the sampling studies' (docs/notes/sampling-record.md, "Where things stand"; the record:
docs/notes/sampling-small-samples.md): the least number of judgments drawn a topic at which the 95% intervals of
MAP covered at least 92% (model-assisted) or 90% (the sample alone) on every choosing collection studied there —
DL 2020 passages condensed at grade ≥ 1 and ≥ 2 and a dense synthetic collection at 10, 20 and 40 judgments a
topic, Robust 2003 at 25, 50 and 99. Below it the intervals may still hold; nothing measured says they do.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from bayeval.errors import BayevalInputError

__all__ = ["MINIMUM_PER_TOPIC", "RATIO_FROM", "STUDIED_LEVELS", "assisted_form", "minimum_notices",
           "minimum_per_topic"]

#: estimator -> the least judgments a topic at which the studies saw its intervals hold. ``"auto"``: the
#: model-assisted estimate in the form :func:`assisted_form` picks; ``"anchored"`` and ``"ratio"``: either form
#: whatever the size; ``"sample-bcp"``: the sample alone.
MINIMUM_PER_TOPIC: dict[str, int] = {"auto": 10, "anchored": 10, "ratio": 50, "sample-bcp": 40}
#: the median expected judgments a topic from which the model-assisted estimate takes the ratio form: below it
#: the ratio's R̂ is too uncertain (biased low at 10-40 a topic), from it the anchored form's remainder, a bias
#: that does not shrink with the sample, outweighs its standard error (Robust 2003: 92.6% at 50, 78.8% at 99).
RATIO_FROM = 50
#: the relevance levels the minimum was measured at.
STUDIED_LEVELS = (1, 2)
#: each estimator as the warnings name it
_NAMES = {"auto": "model-assisted", "anchored": "model-assisted (anchored form)",
          "ratio": "model-assisted (ratio form)", "sample-bcp": "sample-alone (sample-bcp)"}


def minimum_per_topic(estimator: str = "auto") -> int:
    """The judgments a topic below which ``estimator``'s intervals are not known to hold
    (:data:`MINIMUM_PER_TOPIC`)."""
    if estimator not in MINIMUM_PER_TOPIC:
        raise BayevalInputError(f"estimator: one of {', '.join(MINIMUM_PER_TOPIC)}, got {estimator!r}")
    return MINIMUM_PER_TOPIC[estimator]


def assisted_form(draws: Mapping[str, float]) -> str:
    """The form of the model-assisted estimate for a sample with ``draws`` judgments in each topic (drawn, or
    expected: the sum of the inclusion probabilities): ``"anchored"`` where their median is below
    :data:`RATIO_FROM`, else ``"ratio"``.

    Examples
    --------
    >>> assisted_form({"1": 20, "2": 35, "3": 90}), assisted_form({"1": 60, "2": 110})
    ('anchored', 'ratio')
    """
    values = [float(v) for v in draws.values()]
    if not values:
        raise BayevalInputError("draws: the sample has no topic")
    return "anchored" if float(np.median(values)) < RATIO_FROM else "ratio"


def minimum_notices(draws: Mapping[str, float], relevance_level: int = 1, *, form: str = "auto") -> list[str]:
    """One-line warnings for a sample whose topics hold fewer judgments than ``form``'s stated minimum (and, for
    the anchored form, more than it is known to hold at).

    Parameters
    ----------
    draws : mapping topic -> float
        Judgments drawn in each topic (or expected: the sum of the inclusion probabilities).
    relevance_level : int
        The least grade counted relevant (the minimum was measured at :data:`STUDIED_LEVELS`).
    form : str
        The estimator (:data:`MINIMUM_PER_TOPIC`).

    Returns
    -------
    list of str
        Empty when every topic lies where the studies saw the intervals hold.

    Examples
    --------
    >>> minimum_notices({"1": 25.0, "2": 4.0})  # doctest: +ELLIPSIS
    ['1 of 2 topics have fewer than 10 judgments drawn (4 in the smallest): ...']
    """
    low = minimum_per_topic(form)
    small = {t: float(n) for t, n in draws.items() if float(n) < low}
    out = []
    if small:
        out.append(f"{len(small)} of {len(draws)} topics have fewer than {low} judgments drawn "
                   f"({min(small.values()):.0f} in the smallest): {_NAMES[form]} intervals are not known to hold "
                   f"below {low} a topic (docs/sampling.md)")
    if form == "anchored" and draws and float(np.median(list(draws.values()))) >= RATIO_FROM:
        out.append(f"a median of {float(np.median(list(draws.values()))):.0f} judgments a topic: from {RATIO_FROM} "
                   "the anchored form's intervals fall short (Robust 2003: 78.8% at 99 a topic); the default form "
                   "(auto) takes the ratio there")
    if int(relevance_level) not in STUDIED_LEVELS:
        out.append(f"relevance level {relevance_level}: the minimum of {low} judgments a topic was measured at "
                   f"levels {' and '.join(map(str, STUDIED_LEVELS))} only")
    return out
