"""Progress of long work: a rich bar where a person watches a terminal, a plain line every few seconds elsewhere
(a log file, a pipe, a batch job), so that a study that runs for an hour is never silent."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterable, Iterator
from typing import TextIO, TypeVar

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

__all__ = ["EVERY", "format_duration", "track"]

T = TypeVar("T")

EVERY = 5.0
"""Seconds between two lines of progress off a terminal."""


def format_duration(seconds: float) -> str:
    """``"42 s"``, ``"3 min 05 s"``, ``"1 h 02 min"``.

    >>> format_duration(42.4), format_duration(185), format_duration(3725)
    ('42 s', '3 min 05 s', '1 h 02 min')
    """
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def _lines(iterable: Iterable[T], total: int | None, description: str, every: float, stream: TextIO) -> Iterator[T]:
    """The items of ``iterable``, with a line ``description: k/total (p%), elapsed, about ... left`` on ``stream``
    every ``every`` seconds whether or not an item arrived (a heartbeat thread; the interval grows to a tenth of the
    time elapsed, at most a minute, so an hour's work says so about 70 times), and one at the end when any was."""
    start = time.monotonic()
    state = {"done": 0, "said": False}
    lock = threading.Lock()
    stop = threading.Event()

    def say(final: bool = False) -> None:
        done, elapsed = state["done"], time.monotonic() - start
        of = f"/{total} ({100 * done / total:.0f}%)" if total else ""
        left = ""
        if total and done and not final and done < total:
            left = f", about {format_duration(elapsed / done * (total - done))} left"
        with lock:
            print(f"{description}: {done}{of}, {format_duration(elapsed)} elapsed{left}"
                  + (", done" if final else ""), file=stream, flush=True)
            state["said"] = True

    def beat() -> None:
        while not stop.wait(max(every, min(60.0, (time.monotonic() - start) / 10))):
            say()

    thread = threading.Thread(target=beat, name="bayeval-progress", daemon=True)
    thread.start()
    try:
        for item in iterable:
            yield item
            state["done"] += 1
    finally:
        stop.set()
        thread.join()
    if state["said"]:
        say(final=True)


def track(iterable: Iterable[T], *, total: int | None = None, description: str = "working",
          enabled: bool | None = None, keep: bool = False, every: float = EVERY) -> Iterator[T]:
    """Iterate over ``iterable`` showing its progress on stderr.

    Parameters
    ----------
    enabled : bool or None
        ``None`` (default) or ``True``: a rich bar when stderr is a terminal, otherwise a plain line every
        ``every`` seconds or more (none for work done sooner: short runs and tests stay quiet); ``False``:
        nothing. No progress when ``total`` is 0.
    keep : bool
        Show the elapsed time and leave the finished bar on screen (for work of minutes or hours,
        such as a study's trials); by default the bar disappears when done.
    every : float
        Seconds between two plain lines (default :data:`EVERY`).
    """
    if enabled is False or total == 0:
        yield from iterable
        return
    if total is None:
        try:
            total = len(iterable)  # type: ignore[arg-type]
        except TypeError:
            total = None
    if not sys.stderr.isatty():
        yield from _lines(iterable, total, description, every, sys.stderr)
        return

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               *((TimeElapsedColumn(),) if keep else ()), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=not keep) as progress:
        yield from progress.track(iterable, total=total, description=description)
