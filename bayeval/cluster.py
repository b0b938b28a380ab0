"""A Dask client for ``scheduler=`` arguments: an address to connect to, or a client the caller owns.

Used by the computations that split their work into Dask tasks (:mod:`bayeval.expected.cube` by topic chunks,
:mod:`bayeval.experiments.sparse` by trial). ``distributed`` is in the ``dask`` extra.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from bayeval.errors import BayevalInputError

__all__ = ["dask_client"]


@contextmanager
def dask_client(scheduler, timeout: float = 30.0) -> Iterator:
    """Yield a ``distributed.Client`` for ``scheduler`` (``"tcp://host:8786"`` or a client, left open).

    Raises
    ------
    BayevalInputError
        One line, when ``distributed`` is missing or the scheduler cannot be reached.
    """
    try:
        from distributed import Client
    except ImportError as exc:  # pragma: no cover - distributed is in the dask extra
        raise BayevalInputError("scheduler: a Dask scheduler needs the 'distributed' package "
                                "(pip install bayeval[dask])") from exc
    own = not isinstance(scheduler, Client)
    try:
        client = Client(scheduler, timeout=f"{timeout}s") if own else scheduler
    except (OSError, TimeoutError, ValueError) as exc:
        raise BayevalInputError(f"scheduler: cannot connect to {scheduler!r} ({exc})") from exc
    try:
        yield client
    finally:
        if own:
            client.close()
