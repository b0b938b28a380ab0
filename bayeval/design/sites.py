"""Site labels: which site (group of similar runs) each run belongs to."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from bayeval.errors import BayevalInputError

__all__ = ["site_labels"]


def site_labels(sites) -> dict[str, str]:
    """Normalise run → site labels to a ``dict[str, str]``.

    Parameters
    ----------
    sites : mapping or DataFrame
        A mapping run → site, or a frame with a ``run`` column and a ``site`` (or ``group``, as in
        TREC's ``runs.tsv``) column.

    Examples
    --------
    >>> site_labels(pd.DataFrame({"run": ["a", "b"], "group": ["X", "Y"]}))
    {'a': 'X', 'b': 'Y'}
    """
    if isinstance(sites, pd.DataFrame):
        col = "site" if "site" in sites.columns else "group" if "group" in sites.columns else None
        if "run" not in sites.columns or col is None:
            raise BayevalInputError("sites: a frame needs columns 'run' and 'site' (or 'group')")
        runs, labels = sites["run"].astype(str).tolist(), sites[col].astype(str).tolist()
        out: dict[str, str] = {}
        for r, s in zip(runs, labels, strict=True):
            if out.setdefault(r, s) != s:
                raise BayevalInputError(f"sites: run {r!r} is given two sites ({out[r]!r}, {s!r})")
        return out
    if isinstance(sites, Mapping):
        return {str(r): str(s) for r, s in sites.items()}
    raise BayevalInputError(f"sites: expected a mapping run -> site or a DataFrame, got {type(sites).__name__}")
