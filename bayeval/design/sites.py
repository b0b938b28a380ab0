"""Site labels: which site (group of similar runs) each run belongs to."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from bayeval.errors import BayevalInputError

__all__ = ["first_of", "runs_in_design", "site_labels"]


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


def first_of(items) -> str:
    """``'x'``, or ``'x' (and N more)``: the first of a non-empty list for an error message."""
    return f"{items[0]!r}" + (f" (and {len(items) - 1} more)" if len(items) > 1 else "")


def runs_in_design(runs, site_of: Mapping[str, str], design_sites) -> tuple[list[str], tuple[str, ...]]:
    """``(keep, dropped)``: the runs whose site is one of ``design_sites``, and the others; an error when a
    run has no site or no run belongs to the design."""
    missing = [r for r in runs if r not in site_of]
    if missing:
        raise BayevalInputError(f"sites: no site given for run {first_of(missing)}")
    in_design = set(design_sites)
    keep = [r for r in runs if site_of[r] in in_design]
    if not keep:
        raise BayevalInputError(f"sites: no run belongs to a site of the design ({', '.join(design_sites)})")
    return keep, tuple(r for r in runs if site_of[r] not in in_design)
