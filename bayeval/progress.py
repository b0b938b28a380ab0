"""Progress bars for long work (rich), shown only where a person is watching."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

__all__ = ["track"]

T = TypeVar("T")


def track(iterable: Iterable[T], *, total: int | None = None, description: str = "working",
          enabled: bool | None = None, keep: bool = False) -> Iterator[T]:
    """Iterate over ``iterable`` with a rich progress bar on stderr.

    Parameters
    ----------
    enabled : bool or None
        ``None`` (default) shows the bar only when stderr is a terminal, so logs, pipes and CI
        stay clean; ``True``/``False`` force it on/off. No bar when ``total`` is 0.
    keep : bool
        Show the elapsed time and leave the finished bar on screen (for work of minutes or hours,
        such as a study's trials); by default the bar disappears when done.
    """
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled or total == 0:
        yield from iterable
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               *((TimeElapsedColumn(),) if keep else ()), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=not keep) as progress:
        yield from progress.track(iterable, total=total, description=description)
