"""Turning the user's ``probabilities`` argument into per-topic arrays, validated at the boundary."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from bayeval.data.probabilities import ProbabilityEstimate, RelevanceProbabilities
from bayeval.data.rankdata import RankData, TopicRanks
from bayeval.errors import BayevalInputError

__all__: list[str] = []


def check_default(default_p) -> float:
    try:
        value = float(default_p)
    except (TypeError, ValueError):
        raise BayevalInputError(f"default_p: must be a number in [0, 1], got {default_p!r}") from None
    if not 0.0 <= value <= 1.0:
        raise BayevalInputError(f"default_p: must lie in [0, 1], got {default_p!r}")
    return value


def _fix_judged(tr: TopicRanks, arr: np.ndarray) -> np.ndarray:
    arr = np.array(arr, dtype=np.float64, copy=True)
    rel = tr.relevant[tr.judged].astype(np.float64)
    arr[..., tr.judged] = rel
    return arr


def resolve(data: RankData, probabilities, default_p: float, *, allow_draws: bool,
            method: str | None = None) -> list[np.ndarray]:
    """Per topic, ``p`` of shape (n_t,), or (rows, n_t) posterior draws when ``allow_draws``.

    An estimate (:class:`~bayeval.data.probabilities.ProbabilityEstimate`) gives the arrays the moment
    ``method`` uses (its point p without ``allow_draws``). Judged documents are always fixed at their
    judgment (1 relevant, 0 not), whatever was given.
    """
    default_p = check_default(default_p)
    if isinstance(probabilities, ProbabilityEstimate):
        probabilities = probabilities.arrays_for(method if allow_draws else None)
    if probabilities is None or isinstance(probabilities, RelevanceProbabilities):
        return [tr.probabilities(probabilities, default_p) for tr in data]
    if isinstance(probabilities, Mapping):
        missing = [t for t in data.topics if t not in probabilities]
        if missing:
            raise BayevalInputError(f"probabilities: no array for topic(s) {missing[:5]}")
        arrays = [probabilities[t] for t in data.topics]
    elif isinstance(probabilities, Sequence) and not isinstance(probabilities, (str, bytes)):
        if len(probabilities) != len(data):
            raise BayevalInputError(
                f"probabilities: expected one array per topic ({len(data)}), got {len(probabilities)}")
        arrays = list(probabilities)
    else:
        raise BayevalInputError(
            "probabilities: expected None, RelevanceProbabilities, an estimate with .arrays_for() (RelevanceEstimate), "
            "or one array per topic, "
            f"got {type(probabilities).__name__}")
    out = []
    rows = None
    for tr, arr in zip(data, arrays, strict=True):
        try:
            arr = np.asarray(arr, dtype=np.float64)
        except (TypeError, ValueError):
            raise BayevalInputError(f"probabilities: topic {tr.topic!r}: not an array of numbers") from None
        if arr.ndim not in (1, 2) or arr.shape[-1] != tr.n_docs:
            raise BayevalInputError(
                f"probabilities: topic {tr.topic!r}: expected shape ({tr.n_docs},) or (draws, {tr.n_docs}) "
                f"aligned with the topic's docnos, got {arr.shape}")
        if arr.ndim == 2:
            if not allow_draws:
                raise BayevalInputError(
                    "probabilities: 2-D arrays (posterior draws) need method='mc'")
            if rows is None:
                rows = arr.shape[0]
            if arr.shape[0] != rows or rows == 0:
                raise BayevalInputError(
                    f"probabilities: every topic needs the same number of draws ({rows}), "
                    f"topic {tr.topic!r} has {arr.shape[0]}")
        if not np.all(np.isfinite(arr)) or np.any((arr < 0) | (arr > 1)):
            raise BayevalInputError(f"probabilities: topic {tr.topic!r} has values outside [0, 1]")
        out.append(_fix_judged(tr, arr))
    if rows is not None and any(a.ndim == 1 for a in out):
        raise BayevalInputError("probabilities: mix of 1-D and 2-D arrays; give draws for every topic")
    return out
