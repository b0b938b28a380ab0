"""A judging page for a campaign: ``bayeval judge serve`` (install with ``pip install bayeval[serve]``).

- :class:`Desk` — assessors, leases and skips over a :class:`~bayeval.selection.Campaign` (no web code);
- :func:`create_app` — the Starlette application (imports Starlette only when called);
- :func:`load_texts`, :func:`load_topics` — document texts and topic statements (Cranfield works as is).

See docs/judging.md.
"""

from bayeval.io.sources import load_texts, load_topics
from bayeval.serve.app import create_app as _create
from bayeval.serve.desk import Desk, Item, LeaseConflict, Progress


def create_app(*args, **kwargs):
    """The judging application; see :func:`bayeval.serve.app.create_app`."""
    return _create(*args, **kwargs)


__all__ = ["Desk", "Item", "LeaseConflict", "Progress", "create_app", "load_texts", "load_topics"]
